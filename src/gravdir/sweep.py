"""Fit the gravity sinusoid of a forward/backward joint sweep.

A joint swept forward and backward at constant speed, every other joint locked, measures

.. math:: \\tau(q, v) = c + a \\sin q + b \\cos q + F_c\\, \\mathrm{sgn}\\, v + F_v v
          \\; [+\\ \\text{load-dependent friction}] \\; [+\\ \\text{harmonics}] + \\varepsilon,

whose gravity part is :math:`a \\sin q + b \\cos q = A \\sin(q + \\varphi)` with
:math:`A = \\operatorname{hypot}(a, b) \\ge 0` and :math:`\\varphi = \\operatorname{atan2}(b, a)`.
:func:`fit_sweep` estimates every term in one linear least-squares solve, batched over leading
axes. :func:`fit_sweep_common_mode` is the seed's method (average of the forward and backward
passes on a common grid), offered for comparison.

References
----------
Seed ``000_fd3a83f130b85770.txt`` (gravity direction from joint torques), and the
derivation in ``docs/sweep.md``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import (
    InsufficientDataError,
    check_array,
    check_finite,
    check_option,
    check_positive,
    check_same_shape,
)

__all__ = [
    "SweepFit",
    "SweepZeros",
    "amplitude_phase_bound",
    "fit_sweep",
    "fit_sweep_common_mode",
    "wrap_angle",
]

FRICTION_OPTIONS = ("auto", "coulomb-viscous", "coulomb", "none")
LOAD_FRICTION_OPTIONS = ("none", "signed", "abs")

# A sweep shorter than this cannot separate the offset from the gravity sinusoid in practice:
# on a 30 degree arc the amplitude variance is already ~1e3 times its full-circle value
# (docs/sweep.md tabulates the inflation against the arc length).
DEFAULT_MIN_ARC = float(np.deg2rad(30.0))
# Relative RMS spread of the velocity within each direction below which the Coulomb and viscous
# columns are collinear to rounding: a commanded constant speed gives exactly zero.
DEFAULT_SINGLE_SPEED_RTOL = 1e-6


@dataclass(frozen=True)
class SweepZeros:
    """Joint positions where the fitted gravity torque vanishes.

    Attributes
    ----------
    unstable : ndarray, shape (...)
        The zero with :math:`d\\tau/dq < 0`: the distal mass is highest there.
        :math:`q = \\pi - \\varphi`, wrapped to (-pi, pi].
    stable : ndarray, shape (...)
        The zero with :math:`d\\tau/dq > 0`: the distal mass is lowest there.
        :math:`q = -\\varphi`, wrapped to (-pi, pi].
    std : ndarray, shape (...)
        Standard deviation of either zero (that of the phase), radians.
    """

    unstable: NDArray[np.float64]
    stable: NDArray[np.float64]
    std: NDArray[np.float64]


@dataclass(frozen=True, repr=False)
class SweepFit:
    """The fitted model of one sweep (or of a batch of sweeps, over leading axes).

    The gravity part of the measured torque is ``amplitude * sin(q + phase)``.

    Attributes
    ----------
    amplitude : ndarray, shape (...)
        Gravity amplitude :math:`A \\ge 0`, in the torque's units.
    phase : ndarray, shape (...)
        Phase :math:`\\varphi` in (-pi, pi], radians.
    offset : ndarray, shape (...)
        Constant torque offset :math:`c`.
    coulomb : ndarray, shape (...)
        Coulomb friction :math:`F_c` (coefficient of ``sign(velocity)``). Where ``single_speed``
        is true this is the whole friction at the sweep speed and ``viscous`` is zero.
    viscous : ndarray, shape (...)
        Viscous friction :math:`F_v` (coefficient of ``velocity``).
    load_coefficient : ndarray, shape (...)
        Load-dependent friction :math:`\\mu` in :math:`\\mu\\,|\\tau_g|\\,\\mathrm{sgn}\\,v`;
        zero when ``load_friction="none"``.
    harmonic_orders : tuple of float
        Orders :math:`k` of the nuisance harmonics :math:`\\sin kq, \\cos kq` that were fitted.
    harmonic_coefficients : ndarray, shape (..., len(harmonic_orders), 2)
        Their ``(sin, cos)`` coefficients.
    coefficients : ndarray, shape (..., p)
        All linear coefficients, in the order of ``column_names``.
    column_names : tuple of str
        Names of the design-matrix columns.
    covariance : ndarray, shape (..., p, p)
        Covariance of ``coefficients``, :math:`\\hat\\sigma^2 (X^\\top X)^{-1}` with
        :math:`\\hat\\sigma^2 = \\mathrm{RSS}/(n_{used} - p)` (for ``load_friction="abs"`` the
        Gauss-Newton Jacobian replaces :math:`X`).
    residual_rms : ndarray, shape (...)
        Root mean square of the residuals over the samples used.
    n_used : ndarray of int, shape (...)
        Number of samples used (those with ``|velocity| >= min_speed``).
    single_speed : ndarray of bool, shape (...)
        True where all used samples share one speed, so a single friction term was fitted.
    arc : ndarray, shape (...)
        Span of the joint angles used, radians.
    method : str
        ``"least-squares"`` or ``"common-mode"``.
    """

    amplitude: NDArray[np.float64]
    phase: NDArray[np.float64]
    offset: NDArray[np.float64]
    coulomb: NDArray[np.float64]
    viscous: NDArray[np.float64]
    load_coefficient: NDArray[np.float64]
    harmonic_orders: tuple[float, ...]
    harmonic_coefficients: NDArray[np.float64]
    coefficients: NDArray[np.float64]
    column_names: tuple[str, ...]
    covariance: NDArray[np.float64]
    residual_rms: NDArray[np.float64]
    n_used: NDArray[np.int64]
    single_speed: NDArray[np.bool_]
    arc: NDArray[np.float64]
    method: str

    @property
    def amplitude_phase_covariance(self) -> NDArray[np.float64]:
        """Covariance of ``(amplitude, phase)``, shape (..., 2, 2), to first order.

        With :math:`a = A\\cos\\varphi`, :math:`b = A\\sin\\varphi` the Jacobian of
        :math:`(A, \\varphi)` with respect to :math:`(a, b)` is
        :math:`\\begin{pmatrix} a/A & b/A \\\\ -b/A^2 & a/A^2 \\end{pmatrix}`. Where the amplitude
        is exactly zero the phase variance is infinite.
        """
        return _amplitude_phase_covariance(
            self.coefficients[..., 1:3], self.covariance[..., 1:3, 1:3]
        )

    @property
    def amplitude_std(self) -> NDArray[np.float64]:
        """Standard deviation of ``amplitude``, shape (...)."""
        return np.sqrt(self.amplitude_phase_covariance[..., 0, 0])

    @property
    def phase_std(self) -> NDArray[np.float64]:
        """Standard deviation of ``phase`` in radians, shape (...); infinite where A = 0."""
        return np.sqrt(self.amplitude_phase_covariance[..., 1, 1])

    def gravity_torque(self, q: ArrayLike) -> NDArray[np.float64]:
        """The fitted gravity torque :math:`A \\sin(q + \\varphi)` at joint angles `q`.

        Parameters
        ----------
        q : array_like, shape (..., m)
            Joint angles; the leading axes broadcast against the fit's batch shape.

        Returns
        -------
        ndarray, shape (..., m)
        """
        qq = check_array(q, "q", min_ndim=1)
        return self.amplitude[..., None] * np.sin(qq + self.phase[..., None])

    def friction_torque(self, velocity: ArrayLike) -> NDArray[np.float64]:
        """The fitted load-free friction :math:`F_c\\,\\mathrm{sgn}\\,v + F_v v` at `velocity`.

        Parameters
        ----------
        velocity : array_like, shape (..., m)
            Joint velocities; the leading axes broadcast against the fit's batch shape.

        Returns
        -------
        ndarray, shape (..., m)
        """
        v = check_array(velocity, "velocity", min_ndim=1)
        return self.coulomb[..., None] * np.sign(v) + self.viscous[..., None] * v

    def zeros(self) -> SweepZeros:
        """The joint positions where the fitted gravity torque vanishes.

        Returns
        -------
        SweepZeros
            ``unstable`` (:math:`q = \\pi - \\varphi`, distal mass highest, torque slope
            negative) and ``stable`` (:math:`q = -\\varphi`, mass lowest), wrapped to (-pi, pi].

        Notes
        -----
        :math:`A \\sin(q + \\varphi) = 0` at :math:`q + \\varphi \\in \\{0, \\pi\\}` and
        :math:`d\\tau/dq = A \\cos(q + \\varphi)` is :math:`-A` at the first and :math:`+A` at
        the second. Holding torque opposes gravity, so a negative slope means a small forward
        step lets gravity pull further forward: the mass is at its highest.
        """
        return SweepZeros(
            unstable=wrap_angle(np.pi - self.phase),
            stable=wrap_angle(-self.phase),
            std=self.phase_std,
        )

    def __repr__(self) -> str:
        if self.amplitude.ndim:
            return (
                f"SweepFit(batch shape {self.amplitude.shape}, method={self.method!r}, "
                f"columns={self.column_names})"
            )
        z = self.zeros()
        return (
            f"SweepFit(amplitude={float(self.amplitude):.6g} ± {float(self.amplitude_std):.2g}, "
            f"phase={np.degrees(float(self.phase)):.4f}° "
            f"± {np.degrees(float(self.phase_std)):.2g}°, "
            f"zeros: unstable={np.degrees(float(z.unstable)):.4f}° "
            f"stable={np.degrees(float(z.stable)):.4f}°, offset={float(self.offset):.6g}, "
            f"coulomb={float(self.coulomb):.6g}, viscous={float(self.viscous):.6g}, "
            f"residual_rms={float(self.residual_rms):.3g}, n_used={int(self.n_used)}, "
            f"arc={np.degrees(float(self.arc)):.1f}°, method={self.method!r})"
        )


def wrap_angle(x: ArrayLike) -> NDArray[np.float64]:
    """Wrap angles to (-pi, pi].

    Examples
    --------
    >>> wrap_angle([np.pi, -np.pi, 3 * np.pi / 2]).round(6)
    array([ 3.141593,  3.141593, -1.570796])
    """
    a = np.asarray(x, dtype=np.float64)
    w = np.mod(a + np.pi, 2 * np.pi) - np.pi
    return np.where(w <= -np.pi, w + 2 * np.pi, w)


def _atan2_wrapped(y: NDArray[np.float64], x: NDArray[np.float64]) -> NDArray[np.float64]:
    """atan2 mapped to (-pi, pi]: its only value outside is -pi itself."""
    angle = np.arctan2(y, x)
    out: NDArray[np.float64] = np.where(angle <= -np.pi, np.pi, angle)
    return out


def _amplitude_phase_covariance(
    ab: NDArray[np.float64], cov_ab: NDArray[np.float64]
) -> NDArray[np.float64]:
    a, b = ab[..., 0], ab[..., 1]
    amp2 = a * a + b * b
    amp = np.sqrt(amp2)
    with np.errstate(divide="ignore", invalid="ignore"):
        jac = np.stack([np.stack([a / amp, b / amp], -1), np.stack([-b / amp2, a / amp2], -1)], -2)
        out = jac @ cov_ab @ np.swapaxes(jac, -1, -2)
    zero = amp2 == 0
    if np.any(zero):
        # At A = 0 the phase is undefined: report its variance as infinite and the amplitude's
        # as the larger principal variance of (a, b).
        out = np.array(out)
        out[zero] = np.array([[0.0, 0.0], [0.0, np.inf]])
        out[zero, 0, 0] = np.linalg.eigvalsh(cov_ab[zero])[..., -1]
    return out


def _any(x: bool | np.bool_ | NDArray[np.bool_]) -> bool:
    """True where any element is; Python and numpy scalars skip the array machinery."""
    return bool(x) if isinstance(x, (bool, np.bool_)) else bool(x.any())


def _all(x: bool | np.bool_ | NDArray[np.bool_]) -> bool:
    """True where every element is; as `_any`."""
    return bool(x) if isinstance(x, (bool, np.bool_)) else bool(x.all())


def _batch_index(shape: tuple[int, ...], mask: NDArray[np.bool_]) -> str:
    if not shape:
        return ""
    idx = np.argwhere(mask)[0]
    return f" (at batch index {tuple(int(i) for i in idx)})"


# Bytes of design matrix built per block: the Gram product then reads each block from cache
# (L2 is 0.5-2 MB on current x86 cores) instead of memory, which takes ~40% off its time at
# p = 4 (measured with 2000 x 500 samples).
_BLOCK_BYTES = 1 << 20


def _design(
    q: NDArray[np.float64],
    velocity: NDArray[np.float64],
    sgn: NDArray[np.float64] | None,
    used: NDArray[np.float64] | None,
    friction_terms: int,
    load_signed: bool,
    harmonics: tuple[float, ...],
) -> tuple[NDArray[np.float64], list[str], NDArray[np.float64]]:
    """Design matrix with columns first, shape (..., p, n), its names and its Gram matrix.

    ``velocity`` and ``sgn`` (its sign, required for a sign column) arrive already zeroed at
    unused samples, which become zero rows. Written in place into one array, block by block
    along the first batch axis with the Gram matrix of each block formed while it is in cache:
    the batched fit is bound by memory traffic.
    """
    names = ["offset", "sin", "cos"]
    if friction_terms >= 1:
        names.append("coulomb")
    if friction_terms == 2:
        names.append("viscous")
    if load_signed:
        names += ["load_sin", "load_cos"]
    for k in harmonics:
        names += [f"sin_{k:g}", f"cos_{k:g}"]
    p = len(names)
    x = np.empty(q.shape[:-1] + (p,) + q.shape[-1:])
    gram = np.empty(q.shape[:-1] + (p, p))
    if q.size == 0:
        # An empty batch: nothing to fill.
        blocks: list[Any] = []
    elif q.ndim == 1:
        blocks = [...]
    else:
        step = max(1, _BLOCK_BYTES // (8 * x[0].size))
        blocks = [slice(i, i + step) for i in range(0, q.shape[0], step)]
    for b in blocks:
        xb, qb, wb = x[b], q[b], None if used is None else used[b]
        if wb is None:
            xb[..., 0, :] = 1.0
        else:
            xb[..., 0, :] = wb
        # exp(iq) gives sin q and cos q from one call (sharing the argument reduction), about
        # 10% cheaper than np.sin then np.cos, and to the same accuracy.
        z = np.multiply(qb, 1j)
        np.exp(z, out=z)
        xb[..., 1, :] = z.imag
        xb[..., 2, :] = z.real
        if wb is not None:
            xb[..., 1:3, :] *= wb[..., None, :]
        col = 3
        if friction_terms >= 1:
            assert sgn is not None
            xb[..., col, :] = sgn[b]
            col += 1
        if friction_terms == 2:
            xb[..., col, :] = velocity[b]
            col += 1
        if load_signed:
            assert sgn is not None
            np.multiply(sgn[b], xb[..., 1, :], out=xb[..., col, :])
            np.multiply(sgn[b], xb[..., 2, :], out=xb[..., col + 1, :])
            col += 2
        for k in harmonics:
            np.sin(k * qb, out=xb[..., col, :])
            np.cos(k * qb, out=xb[..., col + 1, :])
            if wb is not None:
                xb[..., col : col + 2, :] *= wb[..., None, :]
            col += 2
        np.matmul(xb, np.swapaxes(xb, -1, -2), out=gram[b])
    return x, names, gram


def _matvec(x: NDArray[np.float64], y: NDArray[np.float64]) -> NDArray[np.float64]:
    """(..., p, n) @ (..., n) -> (..., p)."""
    out: NDArray[np.float64] = np.matvec(x, y)
    return out


def _predict(beta: NDArray[np.float64], x: NDArray[np.float64]) -> NDArray[np.float64]:
    """(..., p) times (..., p, n) -> (..., n)."""
    out: NDArray[np.float64] = np.vecmat(beta, x)
    return out


def _dot(a: NDArray[np.float64], b: NDArray[np.float64]) -> Any:
    """Sum over the last axis of ``a * b``: a Python float for 1-D input, else (...)."""
    if a.ndim == 1:
        return float(a @ b)
    return np.vecdot(a, b)


def _extreme(ufunc: np.ufunc, a: NDArray[np.float64]) -> Any:
    """``ufunc`` (np.maximum or np.minimum) reduced over the last axis, as `_total`."""
    return float(ufunc.reduce(a)) if a.ndim == 1 else ufunc.reduce(a, axis=-1)


def _all_finite(x: Any) -> bool:
    """Whether a Python float or every element of an array is finite."""
    return math.isfinite(x) if isinstance(x, float) else bool(np.isfinite(x).all())


def _total(a: NDArray[np.float64]) -> Any:
    """Sum over the last axis: a Python float for 1-D input, else (...)."""
    return float(np.add.reduce(a)) if a.ndim == 1 else np.add.reduce(a, axis=-1)


# Condition number (the bound p * trace(inv) of the equilibrated normal equations) above which
# one step of iterative refinement is taken: below it the normal equations are already accurate
# to ~1e4 * eps relative, well inside the 1e-10 the property tests demand.
_REFINE_ABOVE_COND = 1e4
# Condition number above which the coefficients are not determined by the data: with one
# refinement step the normal equations stay accurate while cond * eps << 1.
_MAX_CONDITION = 1e13
# RSS / (y . y) below which a batch's RSS is summed from explicit residuals instead of expanded
# from the normal equations. The expansion's rounding error is a few eps * (y . y), i.e. a relative
# error of about eps / ratio: above this ratio the RSS is good to ~1e-10 relative, far inside its
# own statistical spread sqrt(2 / (n - p)). Realistic sweeps (noise ~0.5% of the torque) sit
# near 1e-5 and keep the cheap path; noise-free or nearly noise-free sweeps get the explicit sum,
# which keeps their residual RMS at rounding level.
_EXPLICIT_RSS_BELOW = 1e-6


def _solve_normal(
    x: NDArray[np.float64],
    y: NDArray[np.float64],
    gram: NDArray[np.float64] | None = None,
    pinned: NDArray[np.bool_] | None = None,
    yy: Any = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64], Any]:
    """Least squares from equilibrated normal equations, refined once where ill-conditioned.

    ``x`` is (..., p, n) with unused samples zeroed, ``y`` is (..., n) with the same zeros.
    ``pinned`` (..., p) marks coefficients held at exactly zero. Returns the coefficients
    (..., p), :math:`(X^T X)^{-1}` (..., p, p) with zero rows and columns for pinned
    coefficients, and the residual sum of squares (...) (a Python float for one sweep).
    ``yy`` is ``y . y`` when the caller has it.
    """
    if gram is None:
        gram = x @ np.swapaxes(x, -1, -2)
    rhs = _matvec(x, y)
    if pinned is not None:
        gram = gram.copy()
        keep = ~pinned
        gram *= keep[..., :, None] * keep[..., None, :]
        gram[pinned[..., None, :] & np.eye(pinned.shape[-1], dtype=bool)] = 1.0
        rhs *= keep
    # The floor keeps a zero column (singular, refused below) from dividing by zero; its square
    # is still a normal number.
    d = np.maximum(np.sqrt(gram.diagonal(0, -2, -1)), 1e-150)
    dd = d[..., :, None] * d[..., None, :]
    scaled = gram / dd
    try:
        inv_scaled = np.linalg.inv(scaled)
    except np.linalg.LinAlgError:
        inv_scaled = np.full_like(scaled, np.inf)
    # With a unit diagonal, lambda_max <= p and 1 / lambda_min <= trace(inv): p * trace(inv)
    # bounds the 2-norm condition number from above at the cost of one reduction.
    cond = scaled.shape[-1] * inv_scaled.trace(axis1=-2, axis2=-1)
    # A positive definite matrix has a positive trace of its inverse; rounding on a singular one
    # can give any sign.
    if cond.ndim == 0:
        cond_lo = cond_hi = float(cond)
    else:
        # An empty batch has nothing to refuse or refine.
        cond_lo, cond_hi = (float(cond.min()), float(cond.max())) if cond.size else (1.0, 1.0)
    if not (cond_lo > 0 and cond_hi <= _MAX_CONDITION):
        degenerate = ~((cond > 0) & (cond <= _MAX_CONDITION))
        worst = float(np.max(np.where(degenerate, np.abs(cond), 0.0)))
        raise InsufficientDataError(
            "Expected the samples of `q` and `velocity` to determine every fitted coefficient, "
            f"got normal equations with condition number {worst:.1e}"
            f"{_batch_index(cond.shape, degenerate)}: too few distinct joint angles or speeds, "
            "or a `harmonics` order too close to another column."
        )
    inv_gram = inv_scaled / dd
    beta = _matvec(inv_gram, rhs)
    if cond_hi > _REFINE_ABOVE_COND:
        # The normal equations square the condition number; one refinement step with the
        # residual restores the accuracy of an orthogonal factorisation.
        resid = y - _predict(beta, x)
        rhs2 = _matvec(x, resid)
        if pinned is not None:
            rhs2 *= ~pinned
        delta = _matvec(inv_gram, rhs2)
        beta = beta + delta
        resid = resid - _predict(delta, x)
        rss = _dot(resid, resid)
    elif y.ndim == 1:
        # One sweep: the passes over its samples cost less than the small-array calls of the
        # expansion below.
        resid = y - _predict(beta, x)
        rss = _dot(resid, resid)
    else:
        # |y - X beta|^2 = y.y - 2 beta.X'y + beta.G beta holds for any beta, so the rounding
        # of beta enters only to second order, and it needs no pass over the samples beyond
        # y.y. (Pinned coefficients are zero and their entries of G and X'y vanish.)
        yy = _dot(y, y) if yy is None else yy
        rss = yy + _dot(beta, _matvec(gram, beta) - 2.0 * rhs)
        if _any(rss < _EXPLICIT_RSS_BELOW * yy):
            resid = y - _predict(beta, x)
            rss = _dot(resid, resid)
    if pinned is not None:
        inv_gram *= ~pinned[..., :, None] & ~pinned[..., None, :]
    return beta, inv_gram, rss


def _check_sweep_inputs(
    q: ArrayLike, tau: ArrayLike, velocity: ArrayLike, *, finite: bool = True
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Coerce and check the three sample arrays.

    With ``finite=False`` the caller checks finiteness itself, from reductions it computes anyway
    (see :func:`_prepare` and :func:`fit_sweep`), which saves three passes over a large batch.
    """
    qq = check_array(q, "q", min_ndim=1, finite=False)
    tt = check_array(tau, "tau", min_ndim=1, finite=False)
    vv = check_array(velocity, "velocity", min_ndim=1, finite=False)
    if finite:
        check_finite(qq, "q")
        check_finite(tt, "tau")
        check_finite(vv, "velocity")
    if qq.shape[-1] == 0 or tt.shape[-1] == 0 or vv.shape[-1] == 0:
        raise InsufficientDataError(
            f"Expected at least one sample, got `q` {qq.shape}, `tau` {tt.shape} and "
            f"`velocity` {vv.shape}."
        )
    if qq.shape == tt.shape == vv.shape:
        return qq, tt, vv
    shape = check_same_shape(q=qq, tau=tt, velocity=vv)
    return (
        np.broadcast_to(qq, shape),
        np.broadcast_to(tt, shape),
        np.broadcast_to(vv, shape),
    )


def _apply_torque_sign(tau: NDArray[np.float64], torque_sign: int) -> NDArray[np.float64]:
    if isinstance(torque_sign, bool) or torque_sign not in (1, -1):
        raise ValueError(f"Expected `torque_sign` to be 1 or -1, got {torque_sign!r}.")
    return tau if torque_sign == 1 else -tau


def _check_harmonics(harmonics: Sequence[float]) -> tuple[float, ...]:
    if isinstance(harmonics, tuple) and not harmonics:
        return ()
    if isinstance(harmonics, (str, bytes)):
        raise ValueError(f"Expected `harmonics` to be a sequence of numbers, got {harmonics!r}.")
    try:
        orders = tuple(float(k) for k in harmonics)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"Expected `harmonics` to be a sequence of numbers, got {harmonics!r}."
        ) from exc
    for k in orders:
        if not np.isfinite(k) or k <= 0 or k == 1.0:
            raise ValueError(
                f"Expected `harmonics` to hold positive orders other than 1 (order 1 is the "
                f"gravity sinusoid), got {k!r}."
            )
    if len(set(orders)) != len(orders):
        raise ValueError(f"Expected `harmonics` to hold distinct orders, got {orders!r}.")
    return orders


class _Design(NamedTuple):
    x: NDArray[np.float64]
    gram: NDArray[np.float64]
    names: list[str]
    used: NDArray[np.float64] | None
    n_used: NDArray[np.int64]
    pinned: NDArray[np.bool_] | None
    single_speed: NDArray[np.bool_]
    arc: NDArray[np.float64]


def _prepare(
    qq: NDArray[np.float64],
    vv: NDArray[np.float64],
    min_speed: float | None,
    friction: str,
    load_friction: str,
    orders: tuple[float, ...],
    min_arc: float,
    single_speed_rtol: float,
) -> _Design:
    """Speed mask, the design matrix and its Gram matrix, and the checks on what they hold."""
    batch = qq.shape[:-1]
    speed = np.abs(vv)
    # Per-sweep scalars below are Python floats for a single sweep (see `_total`). The extremes
    # of |v| and q carry any NaN or infinity of those inputs (np.maximum and np.minimum propagate
    # NaN), so they double as the finiteness checks, before sin and cos see the angles.
    fastest = _extreme(np.maximum, speed)
    if not _all_finite(fastest):
        check_finite(vv, "velocity")
    q_hi, q_lo = _extreme(np.maximum, qq), _extreme(np.minimum, qq)
    if not (_all_finite(q_hi) and _all_finite(q_lo)):
        check_finite(qq, "q")
    q_span = q_hi - q_lo
    if min_speed is None:
        threshold = 0.1 * fastest
    else:
        threshold = check_positive(min_speed, "min_speed", allow_zero=True)
    needs_both = friction != "none" or load_friction != "none"
    load_signed = load_friction == "signed"
    # Standing samples carry no kinetic friction and sgn(0) = 0 would count them in neither
    # direction: leave them out when friction is modelled, whatever `min_speed` says.
    drop_standing = needs_both and min_speed is not None and min_speed <= 0
    slowest = _extreme(np.minimum, speed)
    all_used = not _any(slowest < threshold) and not (drop_standing and _any(slowest <= 0))
    used_b = None
    used = None
    if not all_used:
        used_b = speed >= (threshold if np.ndim(threshold) == 0 else threshold[..., None])
        if drop_standing:
            used_b &= speed > 0
        empty = ~used_b.any(axis=-1)
        if empty.any():
            raise InsufficientDataError(
                "Expected samples with |`velocity`| >= `min_speed` "
                f"({float(np.max(threshold)):g}), got none{_batch_index(batch, empty)}: the "
                f"largest |velocity| there is {float(np.max(speed[empty])):g}."
            )
        used = used_b.astype(np.float64)
    friction_terms = {"none": 0, "coulomb": 1}.get(friction, 2)
    vm = vv if used is None else vv * used
    # Counts and sums of the velocity columns over the used samples. They decide the columns
    # before the design matrix is built, so its Gram matrix holds only the fitted ones. For a
    # single sweep they are Python floats, which cost a small fraction of 0-d array arithmetic.
    if used_b is None:
        n_used: Any = qq.shape[-1] if not batch else np.full(batch, qq.shape[-1], dtype=np.int64)
    else:
        n_used = used_b.sum(axis=-1, dtype=np.int64)
        n_used = int(n_used) if not batch else n_used
    sgn = np.sign(vm) if needs_both else None

    # Direction counts: sum(sgn v) = n_fwd - n_bwd and sum(sgn v ** 2) = n_fwd + n_bwd, so
    # their difference in absolute value is 2 min(n_fwd, n_bwd).
    if sgn is not None:
        diff, total = _total(sgn), _dot(sgn, sgn)
        bad = total - abs(diff) < 0.5
        if _any(bad):
            raise InsufficientDataError(
                "Expected `velocity` to have samples in both directions above `min_speed` when "
                "friction columns are on, got a sweep with one direction only"
                f"{_batch_index(batch, np.asarray(bad))}; pass friction='none' and "
                "load_friction='none' to fit a one-way sweep."
            )

    # [1, sgn v, v] has rank 2 when each direction moves at one speed (v = alpha + beta sgn v).
    # The Schur complement of the (1, sgn v) block in their Gram matrix G is the sum of squared
    # deviations of v from its per-direction means: zero exactly then.
    pin_viscous = None
    if friction_terms == 2 and sgn is not None:
        g00 = n_used * 1.0
        g03, g33, g04, g34, g44 = diff, total, _total(vm), _dot(sgn, vm), _dot(vm, vm)
        det = g00 * g33 - g03 * g03  # = 4 n_fwd n_bwd > 0: both directions were checked above
        explained = (g33 * g04 * g04 - 2 * g03 * g04 * g34 + g00 * g34 * g34) / det
        single = g44 - explained <= single_speed_rtol**2 * g44
        single_speed = np.asarray(single)
        if friction == "coulomb-viscous" and _any(single):
            raise InsufficientDataError(
                "Expected `velocity` to hold more than one speed in some direction for "
                "friction='coulomb-viscous', got a single speed per direction"
                f"{_batch_index(batch, single_speed)}: Coulomb and viscous friction are "
                "collinear there; use friction='auto' or 'coulomb'."
            )
        if _all(single):
            # Every sweep moves at one speed per direction: leave the viscous column out.
            friction_terms = 1
        elif _any(single):
            # Mixed batch: hold the viscous coefficient at zero where the speeds are single.
            pin_viscous = single_speed
    else:
        single_speed = np.full(batch, friction == "coulomb")
    x, names, gram = _design(qq, vm, sgn, used, friction_terms, load_signed, orders)
    pinned = None
    if pin_viscous is not None:
        pinned = np.zeros(batch + (len(names),), dtype=bool)
        pinned[..., names.index("viscous")] = pin_viscous

    n_params = len(names) + (1 if load_friction == "abs" else 0)
    n_free = n_params - (0 if pinned is None else pinned.sum(axis=-1))
    too_few = n_used <= n_free
    if _any(too_few):
        raise InsufficientDataError(
            f"Expected more than {int(np.max(n_free))} samples with |`velocity`| >= `min_speed` "
            f"(one more than the fitted coefficients), got {int(np.min(n_used))}"
            f"{_batch_index(batch, too_few)}."
        )
    if used_b is None:
        arc = q_span
    else:
        arc = np.where(used_b, qq, -np.inf).max(axis=-1) - np.where(used_b, qq, np.inf).min(axis=-1)
    if _any(arc < min_arc):
        raise InsufficientDataError(
            f"Expected the used samples of `q` to span at least {np.degrees(min_arc):.1f}° "
            f"(`min_arc`), got {np.degrees(float(np.min(arc))):.2f}°"
            f"{_batch_index(batch, arc < min_arc)}: the offset and the gravity sinusoid cannot "
            "be separated on a shorter arc."
        )
    return _Design(x, gram, names, used, np.asarray(n_used), pinned, single_speed, np.asarray(arc))


def fit_sweep(
    q: ArrayLike,
    tau: ArrayLike,
    velocity: ArrayLike,
    *,
    min_speed: float | None = None,
    friction: str = "auto",
    load_friction: str = "none",
    harmonics: Sequence[float] = (),
    min_arc: float = DEFAULT_MIN_ARC,
    single_speed_rtol: float = DEFAULT_SINGLE_SPEED_RTOL,
    max_iter: int = 50,
    torque_sign: int = 1,
) -> SweepFit:
    """Fit the gravity sinusoid, offset and friction of a joint sweep by linear least squares.

    Parameters
    ----------
    q : array_like, shape (..., n)
        Joint angles of the swept joint, radians (unwrapped: a sweep is a continuous arc).
    tau : array_like, shape (..., n)
        Measured joint torque (τ = torque the actuator applies about +axis).
    velocity : array_like, shape (..., n)
        Joint velocity, rad/s; its sign says the direction of motion. The three arrays broadcast
        together; leading axes are independent sweeps, fitted in one batched solve.
    min_speed : float, optional
        Samples with ``|velocity| < min_speed`` (reversals, the slow ends of acceleration ramps,
        where stiction is not modelled) are dropped. Default: 10% of the largest ``|velocity|``
        of each sweep.
    friction : {"auto", "coulomb-viscous", "coulomb", "none"}, optional
        Friction columns. ``"coulomb-viscous"`` fits ``sign(v)`` and ``v``; ``"coulomb"`` only
        ``sign(v)``; ``"none"`` neither. ``"auto"`` (default) fits both unless each direction
        moves at a single speed (see `single_speed_rtol`): then
        ``[1, sign(v), v]`` has rank 2 and a single term is fitted; ``single_speed`` in the
        result says which. (With different single speeds per direction the offset then absorbs
        :math:`F_v (v_+ - v_-)/2`; gravity is unaffected.) With ``"coulomb-viscous"`` at a
        single speed an error is raised.
    load_friction : {"none", "signed", "abs"}, optional
        Friction growing with the gravity load, :math:`\\mu |\\tau_g| \\mathrm{sgn}\\, v`.
        ``"signed"`` adds the columns ``sign(v) sin q`` and ``sign(v) cos q`` (exact while the
        gravity torque keeps its sign over the arc); ``"abs"`` fits the column
        ``sign(v) |A sin(q + φ)|`` by Gauss-Newton from the load-free fit (exact across gravity
        zeros too).
    harmonics : sequence of float, optional
        Orders :math:`k \\ne 1` of nuisance harmonics ``sin(k q), cos(k q)`` (gear ripple,
        unmodelled posture dependence) fitted beside gravity.
    min_arc : float, optional
        Smallest accepted span of the used joint angles, radians (default 30°: below it the
        offset and the gravity sinusoid are nearly collinear; see docs/sweep.md).
    single_speed_rtol : float, optional
        Each direction counts as moving at one speed when the RMS deviation of ``v`` from its
        per-direction mean is below `single_speed_rtol` times the RMS of ``v`` (default 1e-6:
        a commanded constant speed gives exactly zero).
    max_iter : int, optional
        Gauss-Newton iteration limit for ``load_friction="abs"``.
    torque_sign : {1, -1}, optional
        ``-1`` for a controller that reports the torque with the opposite sign to gravdir's
        (the torque the actuator applies to the distal link about +axis); `tau` is negated
        before the fit. Never guessed: a wrong sign moves the phase by pi.

    Returns
    -------
    SweepFit
        Amplitude, phase, offset, friction, covariance and residuals of each sweep.

    Raises
    ------
    ValueError
        If the arrays do not broadcast, contain NaN or infinity, or an option is unknown.
    InsufficientDataError
        If, in any sweep, no sample or too few samples remain after the speed mask, a direction
        has no samples while friction columns are on, the arc is shorter than `min_arc`, or the
        samples do not determine every coefficient (too few distinct angles, or a harmonic order
        too close to another column: condition number of the equilibrated normal equations
        above 1e13).

    Notes
    -----
    The model is linear in its coefficients,
    :math:`\\tau = X\\beta + \\varepsilon` with columns
    :math:`[1, \\sin q, \\cos q, \\mathrm{sgn}\\,v, v, \\dots]`, so one least-squares solve gives
    the maximum-likelihood estimate under white Gaussian noise; no interpolation of the forward
    and backward passes is needed. Then :math:`A = \\operatorname{hypot}(a, b)` and
    :math:`\\varphi = \\operatorname{atan2}(b, a)`. The covariance is
    :math:`\\hat\\sigma^2 (X^\\top X)^{-1}`; amplitude and phase variances follow to first order
    (:attr:`SweepFit.amplitude_phase_covariance`). The solve uses equilibrated normal equations,
    refined once where ill-conditioned; unused samples are zero rows, so sweeps with different
    masks share one batched solve.

    References
    ----------
    Seed ``000_fd3a83f130b85770.txt``; ``docs/sweep.md``.

    Examples
    --------
    >>> q = np.concatenate([np.linspace(-1, 1, 200), np.linspace(1, -1, 200)])
    >>> v = np.concatenate([np.full(200, 0.2), np.full(200, -0.2)])
    >>> tau = 0.3 + 5.0 * np.sin(q + 0.4) + 0.8 * np.sign(v)
    >>> fit = fit_sweep(q, tau, v)
    >>> print(f"{fit.amplitude:.6f} {fit.phase:.6f} {fit.coulomb:.6f} {bool(fit.single_speed)}")
    5.000000 0.400000 0.800000 True
    """
    qq, tt, vv = _check_sweep_inputs(q, tau, velocity, finite=False)
    tt = _apply_torque_sign(tt, torque_sign)
    # tau . tau carries any NaN or infinity of `tau` (squares cannot cancel, so no floating-point
    # warning), and a batch's residual sum of squares needs it anyway; `q` and `velocity` are
    # checked the same way from their extremes in _prepare.
    tt_sq = _dot(tt, tt)
    if not _all_finite(tt_sq):
        check_finite(tt, "tau")
    friction = check_option(friction, "friction", FRICTION_OPTIONS)
    load_friction = check_option(load_friction, "load_friction", LOAD_FRICTION_OPTIONS)
    orders = _check_harmonics(harmonics)
    min_arc = check_positive(min_arc, "min_arc", allow_zero=True)
    single_speed_rtol = check_positive(single_speed_rtol, "single_speed_rtol", allow_zero=True)
    if not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise ValueError(f"Expected `max_iter` to be a positive integer, got {max_iter!r}.")
    d = _prepare(qq, vv, min_speed, friction, load_friction, orders, min_arc, single_speed_rtol)
    y, yy = (tt, tt_sq) if d.used is None else (tt * d.used, None)
    names = d.names
    if load_friction == "abs":
        beta, inv_gram, rss = _fit_load_abs(qq, vv, y, d, max_iter)
        names = [*names, "load_abs"]
    else:
        beta, inv_gram, rss = _solve_normal(d.x, y, d.gram, d.pinned, yy)
    # For one sweep the scalars are Python numbers: 0-d array arithmetic costs several times more.
    n_used = d.n_used if d.n_used.ndim else int(d.n_used)
    n_free = len(names) - (0 if d.pinned is None else d.pinned.sum(axis=-1))
    sigma2 = rss / (n_used - n_free)
    cov = (sigma2[..., None, None] if isinstance(sigma2, np.ndarray) else sigma2) * inv_gram
    if load_friction == "signed":
        load = _signed_load_coefficient(beta, d.gram, names)
    elif load_friction == "abs":
        load = beta[..., -1]
    else:
        load = np.zeros(beta.shape[:-1])
    return _make_fit(
        beta,
        cov,
        names,
        orders,
        load,
        np.sqrt(rss / n_used),
        d.n_used,
        d.single_speed,
        d.arc,
        "least-squares",
    )


def _fit_load_abs(
    q: NDArray[np.float64],
    v: NDArray[np.float64],
    y: NDArray[np.float64],
    d: _Design,
    max_iter: int,
) -> tuple[NDArray[np.float64], NDArray[np.float64], Any]:
    """Gauss-Newton for tau = X beta + mu sgn(v) |a sin q + b cos q|, from the load-free fit."""
    x = d.x
    sgn = np.sign(v) if d.used is None else np.sign(v) * d.used
    beta0, _, _ = _solve_normal(x, y, d.gram, d.pinned)
    beta = np.concatenate([beta0, np.zeros(beta0.shape[:-1] + (1,))], axis=-1)
    pinned = (
        None
        if d.pinned is None
        else np.concatenate([d.pinned, np.zeros(d.pinned.shape[:-1] + (1,), dtype=bool)], axis=-1)
    )
    model = np.concatenate([x, np.empty_like(x[..., :1, :])], axis=-2)
    jac = model.copy()
    inv_gram = np.zeros(beta.shape + beta.shape[-1:])
    resid = y
    for _ in range(max_iter):
        a, b, mu = beta[..., 1:2], beta[..., 2:3], beta[..., -1:]
        tg = a * x[..., 1, :] + b * x[..., 2, :]
        model[..., -1, :] = sgn * np.abs(tg)
        # Jacobian: d/da of mu sgn(v)|tg| is mu sgn(v) sgn(tg) sin q (likewise for b).
        jac[...] = model
        factor = 1 + mu * sgn * np.sign(tg)
        jac[..., 1, :] *= factor
        jac[..., 2, :] *= factor
        resid = y - _predict(beta, model)
        step, inv_gram, _ = _solve_normal(jac, resid, None, pinned)
        beta = beta + step
        if np.all(np.abs(step) <= 1e-14 * (1.0 + np.abs(beta))):
            break
    tg = beta[..., 1:2] * x[..., 1, :] + beta[..., 2:3] * x[..., 2, :]
    model[..., -1, :] = sgn * np.abs(tg)
    resid = y - _predict(beta, model)
    return beta, inv_gram, _dot(resid, resid)


def _make_fit(
    beta: NDArray[np.float64],
    cov: NDArray[np.float64],
    names: list[str],
    orders: tuple[float, ...],
    load: NDArray[np.float64],
    residual_rms: NDArray[np.float64],
    n_used: NDArray[np.int64],
    single_speed: NDArray[np.bool_],
    arc: NDArray[np.float64],
    method: str,
) -> SweepFit:
    a, b = beta[..., 1], beta[..., 2]
    zeros = np.zeros(beta.shape[:-1])

    def coef(name: str) -> NDArray[np.float64]:
        return beta[..., names.index(name)] if name in names else zeros

    harm = (
        np.stack([np.stack([coef(f"sin_{k:g}"), coef(f"cos_{k:g}")], -1) for k in orders], -2)
        if orders
        else np.zeros(beta.shape[:-1] + (0, 2))
    )
    return SweepFit(
        amplitude=np.hypot(a, b),
        phase=_atan2_wrapped(b, a),
        offset=coef("offset"),
        coulomb=coef("coulomb"),
        viscous=coef("viscous"),
        load_coefficient=load,
        harmonic_orders=orders,
        harmonic_coefficients=harm,
        coefficients=beta,
        column_names=tuple(names),
        covariance=cov,
        residual_rms=residual_rms,
        n_used=n_used,
        single_speed=single_speed,
        arc=arc,
        method=method,
    )


def _signed_load_coefficient(
    beta: NDArray[np.float64], gram: NDArray[np.float64], names: list[str]
) -> NDArray[np.float64]:
    """mu from the signed load columns.

    sgn(v)(d sin q + e cos q) = mu sgn(v)|tau_g| with tau_g = a sin q + b cos q of one sign s over
    the arc gives (d, e) = mu s (a, b), so mu = s (d a + e b) / A^2; s is the sign of the sum of
    tau_g over the used samples, a G[0, 1] + b G[0, 2].
    """
    a, b = beta[..., 1], beta[..., 2]
    d, e = beta[..., names.index("load_sin")], beta[..., names.index("load_cos")]
    side = np.sign(a * gram[..., 0, 1] + b * gram[..., 0, 2])
    amp2 = a * a + b * b
    safe = np.where(amp2 > 0, amp2, 1.0)
    out: NDArray[np.float64] = np.where(amp2 > 0, side * (d * a + e * b) / safe, 0.0)
    return out


def amplitude_phase_bound(
    q: ArrayLike,
    velocity: ArrayLike,
    amplitude: ArrayLike,
    phase: ArrayLike,
    noise_std: ArrayLike,
    *,
    min_speed: float | None = None,
    friction: str = "auto",
    harmonics: Sequence[float] = (),
    single_speed_rtol: float = DEFAULT_SINGLE_SPEED_RTOL,
) -> NDArray[np.float64]:
    """Cramér-Rao bound of ``(amplitude, phase)`` for a planned sweep under white noise.

    Parameters
    ----------
    q, velocity : array_like, shape (..., n)
        Joint angles and velocities of the sweep, as they will be passed to :func:`fit_sweep`.
    amplitude, phase : array_like, shape (...)
        The gravity sinusoid assumed for the bound (a prior or a first fit).
    noise_std : array_like, shape (...)
        Standard deviation of the white torque noise.
    min_speed, friction, harmonics, single_speed_rtol
        As in :func:`fit_sweep`; the bound is that of the same model.

    Returns
    -------
    ndarray, shape (..., 2, 2)
        The smallest covariance of ``(amplitude, phase)`` an unbiased estimator of that model can
        reach. :func:`fit_sweep` (least squares, hence maximum likelihood for Gaussian noise)
        attains it to first order.

    Notes
    -----
    The model is linear in :math:`\\beta`, so its Fisher information is
    :math:`X^\\top X / \\sigma^2` and the bound on :math:`(a, b)` is the corresponding block of
    :math:`\\sigma^2 (X^\\top X)^{-1}`; :math:`(A, \\varphi)` is a smooth reparametrisation, whose
    bound is :math:`J\\,C_{ab}\\,J^\\top`. For uniform samples over a full period and no other
    columns this gives :math:`\\mathrm{var}\\,A = 2\\sigma^2/N` and
    :math:`\\mathrm{var}\\,\\varphi = 2\\sigma^2/(N A^2)`.

    Examples
    --------
    >>> q = np.linspace(0, 2 * np.pi, 1000, endpoint=False)
    >>> bound = amplitude_phase_bound(q, np.ones_like(q), 2.0, 0.3, 0.1, friction="none")
    >>> var_a, var_phi = bound[0, 0], bound[1, 1]
    >>> print(f"{var_a / (2 * 0.1**2 / 1000):.6f} {var_phi / (2 * 0.1**2 / (1000 * 2.0**2)):.6f}")
    1.000000 1.000000
    """
    qq = check_array(q, "q", min_ndim=1)
    vv = check_array(velocity, "velocity", min_ndim=1)
    amp = check_array(amplitude, "amplitude")
    ph = check_array(phase, "phase")
    sd = check_array(noise_std, "noise_std")
    if np.any(amp < 0) or np.any(sd <= 0):
        raise ValueError(
            "Expected `amplitude` >= 0 and `noise_std` > 0, got "
            f"min amplitude {float(np.min(amp)):g}, min noise_std {float(np.min(sd)):g}."
        )
    shape = check_same_shape(q=qq, velocity=vv)
    batch = check_same_shape(q_batch=np.empty(shape[:-1]), amplitude=amp, phase=ph, noise_std=sd)
    orders = _check_harmonics(harmonics)
    friction = check_option(friction, "friction", FRICTION_OPTIONS)
    single_speed_rtol = check_positive(single_speed_rtol, "single_speed_rtol", allow_zero=True)
    d = _prepare(
        np.broadcast_to(qq, shape),
        np.broadcast_to(vv, shape),
        min_speed,
        friction,
        "none",
        orders,
        0.0,
        single_speed_rtol,
    )
    _, inv_gram, _ = _solve_normal(d.x, np.zeros(shape), d.gram, d.pinned)
    ab = np.broadcast_to(np.stack([amp * np.cos(ph), amp * np.sin(ph)], -1), batch + (2,))
    cov_ab = np.broadcast_to(inv_gram[..., 1:3, 1:3], batch + (2, 2))
    var = np.broadcast_to(sd**2, batch)[..., None, None]
    return _amplitude_phase_covariance(np.ascontiguousarray(ab), var * cov_ab)


def fit_sweep_common_mode(
    q: ArrayLike,
    tau: ArrayLike,
    velocity: ArrayLike,
    *,
    min_speed: float | None = None,
    n_grid: int | None = None,
    min_arc: float = DEFAULT_MIN_ARC,
    torque_sign: int = 1,
) -> SweepFit:
    """The seed's common-mode method: average the forward and backward passes, then fit.

    Parameters
    ----------
    q, tau, velocity : array_like, shape (..., n)
        As in :func:`fit_sweep`. Samples with ``velocity > 0`` form the forward pass, those with
        ``velocity < 0`` the backward pass.
    min_speed : float, optional
        As in :func:`fit_sweep` (default 10% of the largest speed).
    n_grid : int, optional
        Number of points of the common grid (default: the smaller pass's sample count).
    min_arc : float, optional
        Smallest accepted span of the overlap of the two passes, radians.
    torque_sign : {1, -1}, optional
        As in :func:`fit_sweep`.

    Returns
    -------
    SweepFit
        ``method="common-mode"``; ``coulomb`` is the mean half-difference of the passes (all the
        friction at the sweep speed), ``viscous`` and ``load_coefficient`` are zero and
        ``single_speed`` is true. ``covariance`` covers ``(offset, sin, cos, coulomb)``; it treats
        the grid values as independent, which interpolation makes only approximately true.

    Raises
    ------
    ValueError, InsufficientDataError
        As :func:`fit_sweep`, and when the passes do not overlap by `min_arc`.

    Notes
    -----
    On a common grid :math:`q_k`, the mean of the passes
    :math:`\\tfrac12(\\tau_+ + \\tau_-) = c + A\\sin(q + \\varphi)` removes every friction term
    that is odd in the velocity, and the half-difference :math:`\\tfrac12(\\tau_+ - \\tau_-)` is
    the friction. The interpolation onto the grid is linear, so curvature of the torque between
    samples biases the result slightly; :func:`fit_sweep` needs no grid and is exact.

    Examples
    --------
    >>> q = np.concatenate([np.linspace(-1, 1, 200), np.linspace(1, -1, 200)])
    >>> v = np.concatenate([np.full(200, 0.2), np.full(200, -0.2)])
    >>> tau = 0.3 + 5.0 * np.sin(q + 0.4) + 0.8 * np.sign(v)
    >>> fit = fit_sweep_common_mode(q, tau, v)
    >>> print(f"{fit.amplitude:.4f} {fit.phase:.4f} {fit.coulomb:.4f}")
    5.0000 0.4000 0.8000
    """
    qq, tt, vv = _check_sweep_inputs(q, tau, velocity)
    tt = _apply_torque_sign(tt, torque_sign)
    min_arc = check_positive(min_arc, "min_arc", allow_zero=True)
    if n_grid is not None and (not isinstance(n_grid, (int, np.integer)) or n_grid < 8):
        raise ValueError(f"Expected `n_grid` to be an integer >= 8, got {n_grid!r}.")
    batch = qq.shape[:-1]
    flat = [a.reshape(-1, a.shape[-1]) for a in (qq, tt, vv)]
    grids, means, halves = [], [], []
    for i in range(flat[0].shape[0]):
        qi, ti, vi = flat[0][i], flat[1][i], flat[2][i]
        speed = np.abs(vi)
        thr = (
            0.1 * speed.max()
            if min_speed is None
            else check_positive(min_speed, "min_speed", allow_zero=True)
        )
        fwd = (vi > 0) & (speed >= thr)
        bwd = (vi < 0) & (speed >= thr)
        where = f" (at batch index {np.unravel_index(i, batch)})" if batch else ""
        if np.count_nonzero(fwd) < 4 or np.count_nonzero(bwd) < 4:
            raise InsufficientDataError(
                "Expected `velocity` to have at least 4 samples in each direction above "
                f"`min_speed`, got {np.count_nonzero(fwd)} forward and {np.count_nonzero(bwd)} "
                f"backward{where}."
            )
        lo = max(qi[fwd].min(), qi[bwd].min())
        hi = min(qi[fwd].max(), qi[bwd].max())
        if hi - lo < max(min_arc, 1e-12):
            raise InsufficientDataError(
                f"Expected the forward and backward passes of `q` to overlap by at least "
                f"{np.degrees(min_arc):.1f}° (`min_arc`), got {np.degrees(max(hi - lo, 0)):.2f}°"
                f"{where}."
            )
        m = n_grid if n_grid is not None else min(np.count_nonzero(fwd), np.count_nonzero(bwd))
        grid = np.linspace(lo, hi, m)
        order_f = np.argsort(qi[fwd], kind="stable")
        order_b = np.argsort(qi[bwd], kind="stable")
        tf = np.interp(grid, qi[fwd][order_f], ti[fwd][order_f])
        tb = np.interp(grid, qi[bwd][order_b], ti[bwd][order_b])
        grids.append(grid)
        means.append(0.5 * (tf + tb))
        halves.append(0.5 * (tf - tb))
    sizes = {g.size for g in grids}
    if len(sizes) != 1:
        raise ValueError(
            "Expected the sweeps of a batch to give grids of one size, got sizes "
            f"{sorted(sizes)}; pass `n_grid`."
        )
    grid_a = np.stack(grids).reshape(batch + (grids[0].size,))
    mean_a = np.stack(means).reshape(grid_a.shape)
    half_a = np.stack(halves).reshape(grid_a.shape)
    x, names, gram = _design(grid_a, grid_a, None, None, 0, False, ())
    beta, inv_gram, rss = _solve_normal(x, mean_a, gram)
    m_pts = grids[0].size
    coulomb = half_a.mean(axis=-1)
    var_c = np.var(half_a, axis=-1, ddof=1) / m_pts
    cov = np.zeros(batch + (4, 4))
    cov[..., :3, :3] = np.asarray(rss / (m_pts - 3))[..., None, None] * inv_gram
    cov[..., 3, 3] = var_c
    beta4 = np.concatenate([beta, coulomb[..., None]], axis=-1)
    return _make_fit(
        beta4,
        cov,
        [*names, "coulomb"],
        (),
        np.zeros(batch),
        np.sqrt(rss / m_pts),
        np.full(batch, m_pts, dtype=np.int64),
        np.ones(batch, dtype=bool),
        grid_a[..., -1] - grid_a[..., 0],
        "common-mode",
    )
