"""The results of a sweep fit: :class:`SweepFit`, :class:`SweepZeros`, and angle wrapping."""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import check_array
from gravdir._hac import CORRELATED_TIME, ar1_correlation_time
from gravdir._results import Fingerprinted, Result
from gravdir.errors import GravdirWarning

__all__ = ["SweepFit", "SweepZeros", "wrap_angle"]

# Fields that a single-sweep fit holds as Python scalars (`converged: bool`, `n_iter: int`);
# its other per-sweep fields are numpy scalars.
_PYTHON_SCALARS = ("converged", "n_iter")
# Shared values of single-sweep fits (read-only, so every fit may hold them).
_ZERO_SCALAR = np.float64(0.0)
_NO_HARMONICS = np.zeros((0, 2))
_NO_HARMONICS.flags.writeable = False
# The attribute (not a field) holding the digest of each sweep of a batched fit.
_SWEEP_FINGERPRINTS = "_sweep_fingerprints"


def wrap_angle(x: ArrayLike) -> NDArray[np.float64]:
    """Wrap angles to (-pi, pi].

    Parameters
    ----------
    x : array_like
        Angles, radians: finite real numbers (any magnitude).

    Returns
    -------
    ndarray
        The same angles modulo 2 pi, in (-pi, pi] (pi itself stays pi, -pi becomes pi).

    Raises
    ------
    ValueError
        If `x` is not real and numeric (strings, booleans and complex numbers are refused) or
        holds NaN or infinity.

    Examples
    --------
    >>> wrap_angle([np.pi, -np.pi, 3 * np.pi / 2]).round(6)
    array([ 3.141593,  3.141593, -1.570796])
    """
    value: Any = x
    if isinstance(value, float):
        # One Python float: the common call, checked without the array machinery.
        if not math.isfinite(value):
            raise ValueError(f"Expected `x` to be finite, got {value!r}.")
        return wrap(np.float64(value))
    return wrap(check_array(value, "x"))


def wrap(a: Any) -> NDArray[np.float64]:
    """:func:`wrap_angle` of float64 values already checked finite."""
    w = np.mod(a + np.pi, 2 * np.pi) - np.pi
    out: NDArray[np.float64] = np.where(w <= -np.pi, w + 2 * np.pi, w)
    return out


def atan2_wrapped(y: NDArray[np.float64], x: NDArray[np.float64]) -> NDArray[np.float64]:
    """atan2 mapped to (-pi, pi]: its only value outside is -pi itself."""
    angle = np.arctan2(y, x)
    out: NDArray[np.float64] = np.where(angle <= -np.pi, np.pi, angle)
    return out


def amplitude_phase_covariance(
    ab: NDArray[np.float64], cov_ab: NDArray[np.float64]
) -> NDArray[np.float64]:
    """First-order covariance (..., 2, 2) of ``(hypot(a, b), atan2(b, a))`` from that of (a, b).

    With :math:`(c, s) = (a, b)/A` the Jacobian is ``[[c, s], [-s/A, c/A]]``; the products are
    formed so that no intermediate overflows. Where the amplitude is exactly zero the phase
    variance is infinite and the amplitude's is the larger principal variance of (a, b). Where
    the covariance of (a, b) is not finite (it exceeded the float range), both variances are
    infinite and their covariance zero; a phase variance beyond the float range (a tiny
    amplitude) is infinite. Never NaN, never a smaller variance than the data support.
    """
    a, b = ab[..., 0], ab[..., 1]
    amp = np.hypot(a, b)
    zero = amp == 0
    safe = np.where(zero, 1.0, amp)
    c00, c01, c11 = cov_ab[..., 0, 0], cov_ab[..., 0, 1], cov_ab[..., 1, 1]
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        c, s = a / safe, b / safe
        var_a = c * c * c00 + 2.0 * c * s * c01 + s * s * c11
        cross = (c * s * (c11 - c00) + (c * c - s * s) * c01) / safe
        var_p = (s * s * c00 - 2.0 * c * s * c01 + c * c * c11) / safe / safe
    out = np.stack(
        [
            np.stack([np.maximum(var_a, 0.0), cross], -1),
            np.stack([cross, np.maximum(var_p, 0.0)], -1),
        ],
        -2,
    )
    unknown = ~np.isfinite(cov_ab).all(axis=(-2, -1))
    if np.any(zero) or np.any(unknown):
        out = np.array(out)
        out[unknown] = np.array([[np.inf, 0.0], [0.0, np.inf]])
        known_zero = zero & ~unknown
        out[known_zero] = np.array([[0.0, 0.0], [0.0, np.inf]])
        out[known_zero, 0, 0] = np.linalg.eigvalsh(cov_ab[known_zero])[..., -1]
    return out


def _degrees(x: Any, spec: str) -> str:
    """An angle (or a small array of angles) in degrees, each formatted with `spec`, for a repr."""
    arr = np.degrees(np.asarray(x, dtype=np.float64))
    if arr.ndim == 0:
        return f"{float(arr):{spec}}°"
    if arr.size > 12:
        return f"<array shape {arr.shape}, degrees>"
    text = np.array2string(arr, separator=", ", formatter={"float": lambda v: f"{v:{spec}}"})
    return text + "°"


@dataclass(frozen=True, eq=False, repr=False)
class SweepZeros(Result):
    """Joint positions where the fitted gravity torque vanishes.

    Attributes
    ----------
    unstable : ndarray, shape (...)
        The zero with :math:`d\\tau/dq < 0`: the distal mass is highest there.
        :math:`q = \\pi - \\varphi`, wrapped to (-pi, pi], radians.
    stable : ndarray, shape (...)
        The zero with :math:`d\\tau/dq > 0`: the distal mass is lowest there.
        :math:`q = -\\varphi`, wrapped to (-pi, pi], radians.
    std : ndarray, shape (...)
        Standard deviation of either zero (that of the phase), radians; infinite where the fitted
        amplitude is exactly zero.

    References
    ----------
    US 11,446,825 B2, FIG. 4A and Equation (1): the joint-1 positions
    :math:`\\theta_1 = -\\varphi_1` or :math:`180° - \\varphi_1` where gravity has no effect.
    """

    _units = {
        "unstable": "rad", "stable": "rad", "std": "rad",
    }

    unstable: NDArray[np.float64]
    stable: NDArray[np.float64]
    std: NDArray[np.float64]

    def __repr__(self) -> str:
        return (
            f"SweepZeros(unstable={_degrees(self.unstable, '.4f')}, "
            f"stable={_degrees(self.stable, '.4f')}, std={_degrees(self.std, '.2g')})"
        )


@dataclass(frozen=True, eq=False, repr=False)
class SweepFit(Fingerprinted):
    """The fitted model of one sweep (or of a batch of sweeps, over leading axes).

    The gravity part of the measured torque is ``amplitude * sin(q + phase)``.

    A batched fit can be indexed over its batch axes: ``fit[i]`` (an integer, a slice, a tuple
    of them, ``...``, or an integer or boolean array) is the fit of that sweep or sub-batch,
    with every field taken at that index, and ``len(fit)`` is the size of the first batch axis
    (a ``TypeError`` for the fit of a single sweep, as for a 0-d numpy array). So the entries of
    one batched call feed :class:`~gravdir.general.JointSweep` and the closed-form solvers
    without refitting. A fit is always true in a boolean context.

    The per-sweep attributes below have the batch shape ``(...)``; for one sweep they are numpy
    scalars, except ``converged`` (a bool) and ``n_iter`` (an int).

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
        zero when ``load_friction="none"``, and held at zero (with infinite variance in
        ``covariance``) where ``load_friction="abs"`` met a negligible gravity sinusoid.
    inertia : ndarray, shape (...)
        Coefficient :math:`I` of the joint acceleration (the ``"inertia"`` column, fitted when
        ``acceleration`` is given): the swept joint's effective inertia about its axis times
        the torque sensor's gain, kg·m² for a torque in N·m. Zero where no acceleration was
        given: the model then holds no inertial torque (a choice of model, not an estimate;
        ``"inertia"`` is then absent from ``column_names``). Its standard deviation is
        :attr:`inertia_std`.
    harmonic_orders : tuple of float
        Orders :math:`k` of the nuisance harmonics :math:`\\sin kq, \\cos kq` that were fitted.
    harmonic_coefficients : ndarray, shape (..., len(harmonic_orders), 2)
        Their ``(sin, cos)`` coefficients.
    coefficients : ndarray, shape (..., p)
        All coefficients, in the order of ``column_names``.
    column_names : tuple of str
        Names of the coefficients (the design-matrix columns, and ``"load_abs"`` for
        ``load_friction="abs"``).
    covariance : ndarray, shape (..., p, p)
        Covariance of ``coefficients``, :math:`\\hat\\sigma^2 (X^\\top X)^{-1}` with
        :math:`\\hat\\sigma^2 = \\mathrm{RSS}/(n_{used} - p)` (for ``load_friction="abs"`` the
        Gauss-Newton Jacobian replaces :math:`X`), or with ``covariance="hac"`` the Bartlett
        sandwich of :func:`fit_sweep`. A coefficient held at zero by the fit has
        zero covariance when the data fix it (the viscous term at a single speed) and infinite
        variance when they say nothing about it (the load coefficient without gravity load).
        A variance outside the float range (torques or speeds beyond about 1e±150) is infinite
        too, with zero covariances, and the fit warns; it is never reported as zero.
    covariance_dof : ndarray, shape (...)
        Degrees of freedom of ``covariance``, itself an estimate: ``n_used`` less the
        coefficients fitted for the white-noise form (its residual variance's chi-square), and
        for ``covariance="hac"`` those of the sandwich's spread in the directions of the
        gravity term (sine and cosine), from each sample's influence on them and the
        residuals' lag-1 correlation, at most the white form's (the *Real logs* page, "Degrees
        of freedom of a covariance"). A test built on the covariance uses an F or t reference
        with them (:func:`gravdir.estimate_up` carries them into ``covariance_dof`` of `up`).
    residual_rms : ndarray, shape (...)
        Root mean square of the residuals over the samples used.
    residual_lag1 : ndarray, shape (...)
        The model-adequacy diagnostic: the lag-1 autocorrelation
        :math:`r = \\sum_t e_t e_{t+1} / \\sum_t e_t^2` of the residuals along the sample axis
        (samples left out count as zero, so no pair spans them), in [-1, 1]. Near 0 for
        white sensor noise; positive where the sensor's noise is correlated in time, and near
        1 where the model misfits (a missing friction term, an unmodelled posture dependence
        leaves smooth residuals). It
        is 0 where the residuals are at the rounding of the torque (below 1e-6 of its RMS),
        whose correlation says nothing about the model.
    effective_samples : ndarray, shape (...)
        The independent samples the residuals are worth, ``n_used / tau`` with ``tau = (1 +
        r) / (1 - r)`` (at least 1) the integrated autocorrelation time of a first-order
        autoregressive series of lag-1 correlation ``r`` = ``residual_lag1``, the model
        the ``"hac"`` covariance is made unbiased for (docs/sweep.md, "Correlated residuals").
        Far below ``n_used``, the white-noise covariance understates the spread of the
        coefficients by about ``n_used / effective_samples`` in variance. The count rests on
        the lag-1 correlation alone (so that a :class:`~gravdir.sweep.SweepAccumulator` keeps
        it in constant memory): residuals correlated over a long range but weakly from one
        sample to the next (a differentiated acceleration's noise on a slow misfit) can be
        worth fewer samples than it says, which the ``"hac"`` covariance sees and
        :attr:`gravdir.motion.MotionFit.effective_samples`, summing every lag, counts.
    n_used : ndarray of int, shape (...)
        Number of samples used (those with ``|velocity| >= min_speed``).
    single_speed : ndarray of bool, shape (...)
        True where all used samples share one speed, so a single friction term was fitted.
    arc : ndarray, shape (...)
        Span of the joint angles used, radians.
    method : str
        ``"least-squares"`` or ``"common-mode"``.
    converged : bool or ndarray of bool, shape (...)
        Whether the solve converged (a bool for one sweep). The linear solves (every option but
        ``load_friction="abs"``, and the common-mode method) are direct and always true; the
        Gauss-Newton iteration of ``load_friction="abs"`` is true where a step fell below
        1e-14 of every coefficient, or changed the fitted torque by less than 1e-14 of its
        norm, within `max_iter` steps.
    n_iter : int or ndarray of int, shape (...)
        Gauss-Newton steps taken until convergence (an int for one sweep; `max_iter` where it
        did not converge); 0 for the direct linear solves and for sweeps whose load coefficient
        is held at zero.
    fingerprint : frozenset of str
        The digests of the sweeps' data, one per sweep (keyword-only, left out of the
        ``repr``): a 64-bit checksum of the multiset of the sweep's torque samples as given
        (so independent of the order of the samples, of how a
        :class:`~gravdir.sweep.SweepAccumulator` received them, and of `torque_sign`), NaN
        samples left out under ``nan_policy="omit"``. An entry of a batched fit carries its own
        sweep's digest, the same as the fit of that sweep alone, so estimates from disjoint
        entries of one batch count as independent.
    """

    _units = {
        "amplitude": "N·m", "phase": "rad", "offset": "N·m", "coulomb": "N·m",
        "viscous": "N·m·s/rad", "load_coefficient": "", "inertia": "kg·m²",
        "harmonic_orders": "cycles/rev", "harmonic_coefficients": "N·m",
        "coefficients": "per `column_names`", "covariance": "per `column_names`, squared",
        "covariance_dof": "", "residual_rms": "N·m", "residual_lag1": "",
        "effective_samples": "", "n_used": "", "arc": "rad", "n_iter": "",
    }

    amplitude: NDArray[np.float64]
    phase: NDArray[np.float64]
    offset: NDArray[np.float64]
    coulomb: NDArray[np.float64]
    viscous: NDArray[np.float64]
    load_coefficient: NDArray[np.float64]
    inertia: NDArray[np.float64]
    harmonic_orders: tuple[float, ...]
    harmonic_coefficients: NDArray[np.float64]
    coefficients: NDArray[np.float64]
    column_names: tuple[str, ...]
    covariance: NDArray[np.float64]
    covariance_dof: NDArray[np.float64]
    residual_rms: NDArray[np.float64]
    residual_lag1: NDArray[np.float64]
    effective_samples: NDArray[np.float64]
    n_used: NDArray[np.int64]
    single_speed: NDArray[np.bool_]
    arc: NDArray[np.float64]
    method: str
    converged: bool | NDArray[np.bool_]
    n_iter: int | NDArray[np.int64]

    @property
    def batch_shape(self) -> tuple[int, ...]:
        """The batch axes of the fit: ``()`` for a single sweep."""
        return tuple(np.shape(self.amplitude))

    def __len__(self) -> int:
        shape = self.batch_shape
        if not shape:
            raise TypeError("len() of the SweepFit of a single sweep: it has no batch axes.")
        return shape[0]

    def __bool__(self) -> bool:
        return True

    def __getitem__(self, index: Any) -> SweepFit:
        shape = self.batch_shape
        if not shape:
            raise TypeError(
                "The SweepFit of a single sweep cannot be indexed: it has no batch axes."
            )
        key = _batch_key(index, len(shape))
        values = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, np.ndarray):
                value = value[key]
                if value.ndim == 0:
                    # One sweep: the scalar types of a single-sweep fit.
                    value = value.item() if f.name in _PYTHON_SCALARS else value[()]
            values[f.name] = value
        per_sweep = getattr(self, _SWEEP_FINGERPRINTS, None)
        if per_sweep is None:
            return SweepFit(**values)
        # Each entry carries the digests of its own sweeps: entries of one batch share no data.
        sub = per_sweep[key]
        values["fingerprint"] = frozenset(str(d) for d in np.asarray(sub).flat)
        entry = SweepFit(**values)
        if np.ndim(sub):
            object.__setattr__(entry, _SWEEP_FINGERPRINTS, sub)
        return entry

    def __iter__(self) -> Iterator[SweepFit]:
        for i in range(len(self)):
            yield self[i]

    @property
    def amplitude_phase_covariance(self) -> NDArray[np.float64]:
        """Covariance of ``(amplitude, phase)``, shape (..., 2, 2), to first order.

        With :math:`a = A\\cos\\varphi`, :math:`b = A\\sin\\varphi` the Jacobian of
        :math:`(A, \\varphi)` with respect to :math:`(a, b)` is
        :math:`\\begin{pmatrix} a/A & b/A \\\\ -b/A^2 & a/A^2 \\end{pmatrix}`. Where the amplitude
        is exactly zero the phase variance is infinite.
        """
        return amplitude_phase_covariance(
            self.coefficients[..., 1:3], self.covariance[..., 1:3, 1:3]
        )

    @property
    def amplitude_std(self) -> NDArray[np.float64]:
        """Standard deviation of ``amplitude``, shape (...)."""
        return np.sqrt(self.amplitude_phase_covariance[..., 0, 0])

    @property
    def inertia_std(self) -> NDArray[np.float64]:
        """Standard deviation of ``inertia``, shape (...); zero where no inertia was fitted.

        Zero, like ``inertia`` itself, where the fit had no ``"inertia"`` column: the model held
        the inertial torque at zero by choice (as ``viscous`` at a single speed), so the value
        carries no uncertainty of the data.
        """
        if "inertia" not in self.column_names:
            return np.zeros_like(self.amplitude)
        i = self.column_names.index("inertia")
        out: NDArray[np.float64] = np.sqrt(self.covariance[..., i, i])
        return out

    @property
    def load_coefficient_std(self) -> NDArray[np.float64]:
        """Standard deviation of ``load_coefficient``, shape (...); zero where none was fitted.

        For ``load_friction="abs"`` the variance of its ``"load_abs"`` column (infinite where
        the coefficient was held at zero for want of a gravity sinusoid). For
        ``load_friction="signed"``, where :math:`\\mu = s\\,(d a + e b)/A^2` with
        :math:`s = \\pm 1`, the first-order propagation of the covariance of
        :math:`(a, b, d, e)` (the sign drops out of the variance). Zero, like
        ``load_coefficient`` itself, where the fit had no load column.
        """
        names = self.column_names
        if "load_abs" in names:
            k = names.index("load_abs")
            out: NDArray[np.float64] = np.sqrt(self.covariance[..., k, k])
            return out
        if "load_sin" not in names:
            return np.zeros_like(self.amplitude)
        index = [1, 2, names.index("load_sin"), names.index("load_cos")]
        beta = self.coefficients[..., index]
        cov = self.covariance[..., index, :][..., index]
        a, b, d, e = (beta[..., i] for i in range(4))
        amp2 = a * a + b * b
        safe = np.where(amp2 > 0, amp2, 1.0)
        dot = (d * a + e * b) / safe
        jac = np.stack(
            [(d - 2.0 * a * dot) / safe, (e - 2.0 * b * dot) / safe, a / safe, b / safe], -1
        )
        with np.errstate(over="ignore", invalid="ignore"):
            var = np.einsum("...i,...ij,...j->...", jac, cov, jac)
        std: NDArray[np.float64] = np.where(amp2 > 0, np.sqrt(np.maximum(var, 0.0)), np.inf)
        return std

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

        References
        ----------
        US 11,446,825 B2, FIG. 4A and Equation (1).
        """
        return SweepZeros(
            unstable=wrap(np.pi - self.phase),
            stable=wrap(-self.phase),
            std=self.phase_std,
        )

    def __repr__(self) -> str:
        shape = self.batch_shape
        if shape:
            n_stalled = int(np.size(self.converged) - np.count_nonzero(self.converged))
            note = f", not converged: {n_stalled} of {np.size(self.converged)}" if n_stalled else ""
            return (
                f"SweepFit(batch shape {shape}, method={self.method!r}, "
                f"columns={self.column_names}{note})"
            )
        z = self.zeros()
        load = ""
        if "inertia" in self.column_names:
            load = f"inertia={float(self.inertia):.4g} ± {float(self.inertia_std):.2g} kg·m², "
        if "load_abs" in self.column_names or "load_sin" in self.column_names:
            load += (
                f"load_coefficient={float(self.load_coefficient):.4g} "
                f"± {float(self.load_coefficient_std):.2g}, "
            )
        stalled = "" if self.converged else f", converged=False after {int(self.n_iter)} steps"
        return (
            f"SweepFit(amplitude={float(self.amplitude):.6g} ± {float(self.amplitude_std):.2g}, "
            f"phase={np.degrees(float(self.phase)):.4f}° "
            f"± {np.degrees(float(self.phase_std)):.2g}°, "
            f"zeros: unstable={np.degrees(float(z.unstable)):.4f}° "
            f"stable={np.degrees(float(z.stable)):.4f}°, offset={float(self.offset):.6g}, "
            f"coulomb={float(self.coulomb):.6g}, viscous={float(self.viscous):.6g}, {load}"
            f"residual_rms={float(self.residual_rms):.3g}, n_used={int(self.n_used)}, "
            f"arc={np.degrees(float(self.arc)):.1f}°, method={self.method!r}{stalled})"
        )


def _batch_key(index: Any, n_batch: int) -> tuple[Any, ...]:
    """`index` over the first `n_batch` axes, as a key that leaves every later axis whole.

    An ``...`` becomes the slices it stands for among the batch axes; a key that addresses more
    axes than the batch has raises ``IndexError``.
    """
    key = index if isinstance(index, tuple) else (index,)

    def width(k: Any) -> int:
        if k is None or k is Ellipsis or isinstance(k, bool | np.bool_):
            return 0
        if isinstance(k, np.ndarray | list) and np.asarray(k).dtype == np.bool_:
            return int(np.asarray(k).ndim)
        return 1

    used = sum(width(k) for k in key)
    if used > n_batch:
        raise IndexError(
            f"Expected at most {n_batch} indices for a SweepFit of {n_batch} batch axes, "
            f"got {used}."
        )
    n_ellipsis = sum(1 for k in key if k is Ellipsis)
    if n_ellipsis > 1:
        raise IndexError("Expected at most one `...` in a SweepFit index, got several.")
    if n_ellipsis:
        at = next(i for i, k in enumerate(key) if k is Ellipsis)
        key = key[:at] + (slice(None),) * (n_batch - used) + key[at + 1 :]
    return (*key, Ellipsis)


_PLAIN: list[bool] = []


def _plain_fields(values: dict[str, Any]) -> bool:
    """Whether SweepFit's fields are exactly the keys of `values` and it has no checks of its
    own (checked once): a field added with a default, or a ``__post_init__``, sends every fit
    through the constructor."""
    if not _PLAIN:
        names = {f.name for f in fields(SweepFit)}
        _PLAIN.append("__post_init__" not in vars(SweepFit) and names == set(values))
    return _PLAIN[0]


def make_fit(
    beta: NDArray[np.float64],
    cov: NDArray[np.float64],
    names: list[str],
    orders: tuple[float, ...],
    load: Any,
    residual_rms: Any,
    residual_lag1: Any,
    covariance_dof: Any,
    n_used: Any,
    single_speed: Any,
    arc: Any,
    method: str,
    converged: Any,
    n_iter: Any,
    fingerprint: tuple[frozenset[str], Any] = (frozenset(), None),
) -> SweepFit:
    """Assemble a :class:`SweepFit` from arrays the fit itself created (never the caller's).

    `fingerprint` is the fit's fingerprint and the digests of its sweeps (an object array of
    the batch shape, kept privately so that an entry of a batch carries its own sweep's digest).
    `load` None means no load-dependent friction. `residual_lag1` is
    :func:`~gravdir._hac.residual_lag1` of each sweep; the effective samples follow from it.
    `covariance_dof` is :func:`~gravdir._hac.covariance_dof` of each sweep.
    The arrays are made read-only in place, so the result keeps them as they are instead of
    taking read-only views. For one sweep the callers pass the per-sweep values as numpy
    scalars, which need no flag at all.
    """
    batch = beta.shape[:-1]
    amplitude: Any
    phase: Any
    zero: Any
    if batch:
        a, b = beta[..., 1], beta[..., 2]
        amplitude, phase = np.hypot(a, b), atan2_wrapped(b, a)
        zero = np.zeros(batch)
        columns: Any = np.moveaxis(beta, -1, 0)  # columns[i]: coefficient i of every sweep
    else:
        b = beta.tolist()
        amplitude = np.float64(math.hypot(b[1], b[2]))
        angle = math.atan2(b[2], b[1])
        phase = np.float64(math.pi if angle <= -math.pi else angle)
        zero = _ZERO_SCALAR
        columns = beta
    if orders:
        index = {name: i for i, name in enumerate(names)}
        harm = np.stack(
            [
                np.stack([columns[index[f"sin_{k:g}"]], columns[index[f"cos_{k:g}"]]], -1)
                for k in orders
            ],
            -2,
        )
    else:
        harm = np.zeros(batch + (0, 2)) if batch else _NO_HARMONICS
    if load is None:
        load = zero
    lag1: Any
    effective: Any
    dof: Any
    if batch:
        lag1 = np.asarray(residual_lag1, dtype=np.float64)
        effective = n_used / ar1_correlation_time(lag1)
        dof = np.array(np.broadcast_to(covariance_dof, batch), dtype=np.float64)
        owned: tuple[Any, ...] = (beta, cov, harm, zero, load, residual_rms, n_used, single_speed)
        owned += (arc, amplitude, phase, converged, n_iter, lag1, effective, dof)
    else:
        r = float(residual_lag1)
        lag1, effective = np.float64(r), np.float64(int(n_used) / ar1_correlation_time(r))
        dof = np.float64(covariance_dof)
        owned = (beta, cov, harm) if orders else (beta, cov)
    for arr in owned:
        if isinstance(arr, np.ndarray):
            arr.flags.writeable = False
    column_names = tuple(names)
    values = {
        "amplitude": amplitude,
        "phase": phase,
        "offset": zero,
        "coulomb": zero,
        "viscous": zero,
        "load_coefficient": load,
        "inertia": zero,
        "harmonic_orders": orders,
        "harmonic_coefficients": harm,
        "coefficients": beta,
        "column_names": column_names,
        "covariance": cov,
        "covariance_dof": dof,
        "residual_rms": residual_rms,
        "residual_lag1": lag1,
        "effective_samples": effective,
        "n_used": n_used,
        "single_speed": single_speed,
        "arc": arc,
        "method": method,
        "converged": converged,
        "n_iter": n_iter,
        "fingerprint": fingerprint[0],
    }
    for name, i in _coefficient_fields(column_names):
        values[name] = columns[i]
    plain = _PLAIN[0] if _PLAIN else _plain_fields(values)
    if not batch and plain and type(fingerprint[0]) is frozenset:
        # One sweep, every value a numpy or Python scalar or an array made read-only above:
        # the constructor's freezing would change nothing, and skipping it is most of the cost
        # of assembling a controller's single-sweep fit.
        fit = object.__new__(SweepFit)
        fit.__dict__.update(values)
        return fit
    fit = SweepFit(**values)
    if batch and fingerprint[1] is not None:
        object.__setattr__(fit, _SWEEP_FINGERPRINTS, fingerprint[1])
    return fit


# The lag-1 autocorrelation above which a first-order autoregressive series has an integrated
# autocorrelation time beyond CORRELATED_TIME: (1 + r) / (1 - r) > CORRELATED_TIME.
_VISIBLE_LAG1 = (CORRELATED_TIME - 1.0) / (CORRELATED_TIME + 1.0)


def warn_correlated(fit: SweepFit, remedy: str, stacklevel: int) -> None:
    """Warn where the residuals of `fit`, whose covariance is the white-noise form, are
    visibly correlated in time (:attr:`SweepFit.residual_lag1` above ``_VISIBLE_LAG1``), naming
    the worst sweep and the `remedy`."""
    lag1 = fit.residual_lag1
    if not lag1.ndim:  # one sweep: a numpy scalar
        if not lag1 > _VISIBLE_LAG1:
            return
        subject, worst = "they are", fit
    else:
        if not bool(np.any(lag1 > _VISIBLE_LAG1)):
            return
        index = np.unravel_index(int(np.argmax(lag1)), lag1.shape)
        subject = f"those of sweep {tuple(int(i) for i in index)} are"
        worst = fit[index]
    warnings.warn(
        f"The torque residuals are correlated in time: {subject} worth "
        f"{float(worst.effective_samples):.0f} independent "
        f"samples of {int(worst.n_used)} (lag-1 autocorrelation "
        f"{float(worst.residual_lag1):.2f}), so the white-noise covariance understates the "
        f"spread of the phase. {remedy} The Real logs page says what else to check.",
        GravdirWarning,
        stacklevel=stacklevel + 1,
    )


@functools.cache
def _coefficient_fields(names: tuple[str, ...]) -> tuple[tuple[str, int], ...]:
    """The fields of a SweepFit named after a column (offset, coulomb, viscous, inertia) that
    `names` holds, each with its column's index (the other such fields are zero)."""
    fields_ = ("offset", "coulomb", "viscous", "inertia")
    return tuple((name, names.index(name)) for name in fields_ if name in names)
