"""Checked inputs, the speed mask and the design matrix of a sweep fit."""

from __future__ import annotations

import math
import warnings
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import (
    MAX_JOINT_ANGLE,
    check_angle_span,
    check_array,
    check_count,
    check_finite,
    check_option,
    check_positive,
    check_same_shape,
    check_sweep_angles,
    drop_nan_samples,
)
from gravdir._options import Friction, LoadFriction
from gravdir.errors import GravdirWarning, InsufficientDataError
from gravdir.sweep._solve import (
    all_,
    all_finite,
    any_,
    batch_index,
    dot,
    extreme,
    matvec,
    total,
)

# The values of the shared `Friction` type a sweep fit implements: not the quadratic term, which
# on a sweep (one speed per direction) is the Coulomb column times a constant.
FRICTION_OPTIONS: tuple[Friction, ...] = ("auto", "coulomb-viscous", "coulomb", "none")
# The values of the shared `LoadFriction` type a sweep fit implements ("auto" is refused).
LOAD_FRICTION_OPTIONS: tuple[LoadFriction, ...] = ("none", "signed", "abs")

# A sweep shorter than this cannot separate the offset from the gravity sinusoid in practice:
# on a 30 degree arc the amplitude variance is already ~1e3 times its full-circle value
# (docs/sweep.md tabulates the inflation against the arc length).
DEFAULT_MIN_ARC = float(np.deg2rad(30.0))
# Relative RMS spread of the velocity within each direction below which the Coulomb and viscous
# columns are collinear to rounding: a commanded constant speed gives exactly zero.
DEFAULT_SINGLE_SPEED_RTOL = 1e-6
# Joint positions of a sweep beyond two turns either side of zero (the shared MAX_JOINT_ANGLE),
# or spanning more than two turns, are degrees: the 90-180 degree sweeps of US 11,446,825 B2 read
# as radians span 90-180 "rad". Multi-turn (unwrapped) positions are wrapped by the caller.
# Nuisance harmonic orders. Below 0.01 a harmonic completes less than a hundredth of a period
# over a turn and cannot be told from the offset; above 10 000 it is far beyond any gear ripple
# (strain-wave gears ripple at twice their ratio, a few hundred at most). At most 100 orders
# (200 columns): the cost of a fit grows with the number of columns.
MIN_HARMONIC_ORDER = 0.01
MAX_HARMONIC_ORDER = 10_000.0
MAX_HARMONICS = 100
# Iteration cap of the Gauss-Newton load column (converges in 3-5 steps, docs/sweep.md).
MAX_ITER_CAP = 10_000
# Torques and speeds whose largest magnitude in a sweep lies outside [2^-100, 2^100] are fitted in
# units of a power of two near that magnitude (exact scaling, undone on the results). Inside the
# range no sum of squares, product or covariance of the fit can overflow or underflow for any
# array numpy can hold; the common case is never rescaled.
SCALE_LO, SCALE_HI = 2.0**-100, 2.0**100

# Bytes of design matrix built per block: the Gram product then reads each block from cache
# (L2 is 0.5-2 MB on current x86 cores) instead of memory, which takes ~40% off its time at
# p = 4 (measured with 2000 x 500 samples).
_BLOCK_BYTES = 1 << 20


# What a sweep's samples may lack, in the words of fit_sweep and SweepAccumulator alike: each
# message's fields are filled by `refusal` (the batch index first, then the numbers).
_REFUSALS = {
    "nan": "Expected samples without NaN in `q`, `torque`, `velocity` and `acceleration`, got "
    "none{0}: every sample holds a NaN.",
    "slow": "Expected samples with |`velocity`| >= `min_speed` ({1:g}), got none{0}: the "
    "largest |velocity| there is {2:g}.",
    "one_way": "Expected `velocity` to have samples in both directions above `min_speed` when "
    "friction columns are on, got a sweep with one direction only{0}; pass friction='none' and "
    "load_friction='none' to fit a one-way sweep.",
    "single_speed": "Expected `velocity` to hold more than one speed in some direction for "
    "friction='coulomb-viscous', got a single speed per direction{0}: Coulomb and viscous "
    "friction are collinear there; use friction='auto' or 'coulomb'.",
    "still": "Expected `acceleration` to be non-zero at some used sample, got zero at every "
    "sample with |`velocity`| >= `min_speed`{0}: a sweep at constant speed says nothing of the "
    "inertia; leave `acceleration` out.",
    "few": "Expected more than {1} samples with |`velocity`| >= `min_speed` (one more than the "
    "fitted coefficients), got {2}{0}.",
    "arc": "Expected the used samples of `q` to span at least {1:.1f}° (`min_arc`), got "
    "{2:.2f}°{0}: the offset and the gravity sinusoid cannot be separated on a shorter arc.",
}


def refusal(what: str, batch: tuple[int, ...], where: NDArray[np.bool_], *values: Any) -> str:
    """The message refusing a sweep for `what` (a key of ``_REFUSALS``) at the first true entry
    of `where` over the `batch` axes; `values` are the message's numbers (angles in radians)."""
    if what == "arc":
        values = tuple(math.degrees(v) for v in values)
    return _REFUSALS[what].format(batch_index(batch, where), *values)


def check_sweep_inputs(
    q: ArrayLike,
    torque: ArrayLike,
    velocity: ArrayLike,
    acceleration: ArrayLike | None = None,
    *,
    finite: bool = True,
) -> tuple[
    NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64] | None
]:
    """Coerce and check the sample arrays (`acceleration` optional: None stays None).

    Leading (batch) axes broadcast; the last (sample) axis must be the same in all of them, so a
    column vector never broadcasts into many one-sample sweeps. With ``finite=False`` the caller
    checks finiteness itself, from reductions it computes anyway (see :func:`prepare` and
    :func:`~gravdir.sweep.fit_sweep`), which saves passes over a large batch.
    """
    qq = check_array(q, "q", min_ndim=1, finite=False)
    tt = check_array(torque, "torque", min_ndim=1, finite=False)
    vv = check_array(velocity, "velocity", min_ndim=1, finite=False)
    aa = (
        None
        if acceleration is None
        else check_array(acceleration, "acceleration", min_ndim=1, finite=False)
    )
    same = qq.shape == tt.shape == vv.shape and (aa is None or aa.shape == qq.shape)
    n = qq.shape[-1]
    if not same and (
        tt.shape[-1] != n or vv.shape[-1] != n or (aa is not None and aa.shape[-1] != n)
    ):
        arrays = {"q": qq, "torque": tt, "velocity": vv}
        if aa is not None:
            arrays["acceleration"] = aa
        *first, last = arrays
        names = ", ".join(f"`{k}`" for k in first) + f" and `{last}`"
        *first_shapes, last_shape = (a.shape for a in arrays.values())
        shapes = ", ".join(str(s) for s in first_shapes) + f" and {last_shape}"
        raise ValueError(
            f"Expected {names} to share their last (sample) axis, got shapes {shapes}: "
            "leading axes broadcast over sweeps, the sample axis does not."
        )
    if same:
        shape = qq.shape
    elif aa is None:
        shape = check_same_shape(q=qq, torque=tt, velocity=vv)
    else:
        shape = check_same_shape(q=qq, torque=tt, velocity=vv, acceleration=aa)
    if finite:
        for arr, name in ((qq, "q"), (tt, "torque"), (vv, "velocity"), (aa, "acceleration")):
            if arr is not None:
                try:
                    check_finite(arr, name)
                except ValueError:
                    refuse_non_finite(arr, name)
    if shape[-1] == 0:
        got = f"`q` {qq.shape}, `torque` {tt.shape} and `velocity` {vv.shape}"
        raise InsufficientDataError(f"Expected at least one sample, got {got}.")
    if same:
        return qq, tt, vv, aa
    return (
        np.broadcast_to(qq, shape),
        np.broadcast_to(tt, shape),
        np.broadcast_to(vv, shape),
        None if aa is None else np.broadcast_to(aa, shape),
    )


def refuse_non_finite(x: NDArray[np.float64], name: str) -> None:
    """Raise the ``nan_policy="raise"`` error for `x`, known to hold a NaN or an infinity.

    A NaN is refused with the way out (``nan_policy="omit"``), an infinity under every policy
    (:func:`gravdir._checks.drop_nan_samples`).
    """
    drop_nan_samples({name: x}, "raise")
    check_finite(x, name)


def check_friction_option(friction: Any, name: str, options: tuple[str, ...]) -> None:
    """Refuse anything but one of the named options (non-strings included)."""
    if not isinstance(friction, str) or friction not in options:
        check_option(friction if isinstance(friction, str) else repr(friction), name, options)


def _non_negative(x: Any, name: str) -> float:
    """A finite number >= 0; Python floats take a fast path (these run on every fit)."""
    if type(x) is float and 0.0 <= x < math.inf:
        return x
    return check_positive(x, name, allow_zero=True)


def check_min_speed(min_speed: Any) -> float | None:
    """`min_speed`: None (10% of each sweep's largest speed) or a finite number >= 0."""
    return None if min_speed is None else _non_negative(min_speed, "min_speed")


def check_min_arc(min_arc: Any) -> float:
    """`min_arc`: a finite angle >= 0, radians (an arc beyond two turns is degrees)."""
    value = _non_negative(min_arc, "min_arc")
    return value if value <= MAX_JOINT_ANGLE else check_angle_span(value, "min_arc")


def check_rtol(x: Any, name: str) -> float:
    """A relative tolerance from 0 to 1."""
    value = _non_negative(x, name)
    if value > 1.0:
        raise ValueError(f"Expected `{name}` to be a relative tolerance from 0 to 1, got {x!r}.")
    return value


def check_max_iter(max_iter: Any) -> int:
    """The Gauss-Newton iteration limit, 1 to ``MAX_ITER_CAP``."""
    if type(max_iter) is int and 1 <= max_iter <= MAX_ITER_CAP:
        return max_iter
    return check_count(max_iter, "max_iter", minimum=1, maximum=MAX_ITER_CAP)


def check_harmonics(harmonics: Any) -> tuple[float, ...]:
    """The nuisance orders as floats: distinct, other than 1, within the documented range."""
    if isinstance(harmonics, tuple) and not harmonics:
        return ()
    if isinstance(harmonics, str | bytes | bool | np.bool_) or (
        isinstance(harmonics, np.ndarray) and harmonics.dtype == np.bool_
    ):
        raise ValueError(f"Expected `harmonics` to be a sequence of numbers, got {harmonics!r}.")
    if isinstance(harmonics, list | tuple) and any(
        isinstance(k, bool | np.bool_) for k in harmonics
    ):
        raise ValueError(f"Expected `harmonics` to hold numbers, got {harmonics!r}.")
    orders_arr = check_array(harmonics, "harmonics")
    if orders_arr.ndim != 1:
        raise ValueError(
            f"Expected `harmonics` to be a sequence of numbers, got shape {orders_arr.shape}."
        )
    if orders_arr.size > MAX_HARMONICS:
        raise ValueError(
            f"Expected at most {MAX_HARMONICS} `harmonics` orders, got {orders_arr.size}."
        )
    orders = tuple(float(k) for k in orders_arr)
    for k in orders:
        if not MIN_HARMONIC_ORDER <= k <= MAX_HARMONIC_ORDER or k == 1.0:
            raise ValueError(
                f"Expected `harmonics` to hold orders from {MIN_HARMONIC_ORDER:g} to "
                f"{MAX_HARMONIC_ORDER:g} other than 1 (order 1 is the gravity sinusoid), "
                f"got {k!r}."
            )
    if len(set(orders)) != len(orders):
        raise ValueError(f"Expected `harmonics` to hold distinct orders, got {orders!r}.")
    return orders


def pow2_scale(magnitude: Any) -> Any:
    """Per-sweep scale for a quantity whose largest magnitude per sweep is `magnitude`.

    1.0 (a Python float) when every magnitude lies in ``[2^-100, 2^100]`` or is zero, the common
    case; otherwise the power of two at or just below each magnitude outside that range (1 for
    the others), so that dividing by it is exact.
    """
    if isinstance(magnitude, float):
        if SCALE_LO <= magnitude <= SCALE_HI or magnitude == 0.0:
            return 1.0
        return math.ldexp(1.0, math.frexp(magnitude)[1] - 1)
    out = ~((magnitude >= SCALE_LO) & (magnitude <= SCALE_HI)) & (magnitude > 0)
    if not out.any():
        return 1.0
    return np.where(out, np.ldexp(1.0, np.frexp(magnitude)[1] - 1), 1.0)


def is_unit(scale: Any) -> bool:
    """Whether a scale from :func:`pow2_scale` leaves everything as it is."""
    return isinstance(scale, float) and scale == 1.0


def per_sample(scale: Any) -> Any:
    """A per-sweep scale shaped to divide (..., n) samples."""
    return scale if isinstance(scale, float) else scale[..., None]


def unscale(
    beta: NDArray[np.float64],
    cov: NDArray[np.float64],
    rms: Any,
    names: list[str],
    torque_scale: Any,
    velocity_scale: Any,
    solver: str,
    stacklevel: int = 3,
    acceleration_scale: Any = 1.0,
) -> tuple[NDArray[np.float64], NDArray[np.float64], Any]:
    """Coefficients, covariance and residual RMS of a fit in scaled units, in the caller's units.

    Every coefficient is linear in the torque except the load coefficient ``load_abs`` (a ratio
    of torques); the viscous one is per unit of velocity, the inertia per unit of acceleration.
    A variance that leaves the normal float range on the way (beyond about 1e308, or a non-zero
    variance below about 2e-308) is reported as infinite with zero covariances, never as zero,
    and a :class:`~gravdir.errors.GravdirWarning` says so; a coefficient beyond the range is
    refused.
    """
    # Per coefficient: times the torque scale (not the load ratio), the viscous one then divided
    # by the velocity scale, one factor at a time so that no product of scales overflows.
    torque_w = np.broadcast_to(np.asarray(torque_scale, dtype=np.float64)[..., None], beta.shape)
    if "load_abs" in names:
        torque_w = torque_w.copy()
        torque_w[..., names.index("load_abs")] = 1.0
    scaled_var = cov.diagonal(0, -2, -1)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        beta = beta * torque_w
        cov = (cov * torque_w[..., :, None]) * torque_w[..., None, :]
        for name, column_scale in (("viscous", velocity_scale), ("inertia", acceleration_scale)):
            if name in names and not is_unit(column_scale):
                i = names.index(name)
                cs = np.asarray(column_scale, dtype=np.float64)
                beta[..., i] /= cs
                cov[..., i, :] /= cs[..., None]
                cov[..., :, i] /= cs[..., None]
        rms = rms * torque_scale
    if not np.isfinite(beta).all():
        raise ValueError(
            "Expected `torque`, `velocity` and `acceleration` whose fitted coefficients lie "
            "within the float range, got a coefficient beyond it."
        )
    var = cov.diagonal(0, -2, -1)
    lost = ~np.isfinite(cov).all(axis=-1) | (
        (scaled_var != 0) & (np.abs(var) < np.finfo(np.float64).tiny)
    )
    if lost.any():
        cov = np.where(lost[..., :, None] | lost[..., None, :], 0.0, cov)
        idx = np.arange(cov.shape[-1])
        cov[..., idx, idx] = np.where(lost, np.inf, cov[..., idx, idx])
        which = [name for i, name in enumerate(names) if lost[..., i].any()]
        warnings.warn(
            f"{solver}: the variances of {', '.join(which)} "
            "lie outside the float range (torques or speeds of extreme magnitude); they are "
            "reported as infinite, their covariances as zero.",
            GravdirWarning,
            stacklevel=stacklevel,
        )
    return beta, cov, rms


def to_caller_units(
    beta: NDArray[np.float64],
    cov: NDArray[np.float64],
    rms: Any,
    names: list[str],
    scales: tuple[Any, Any, Any],
    solver: str,
    stacklevel: int,
) -> tuple[NDArray[np.float64], NDArray[np.float64], Any]:
    """:func:`unscale` with the (torque, velocity, acceleration) `scales` of a fit, skipped
    where all three are 1 (nothing to undo); `stacklevel` as for :func:`unscale` called by the
    caller."""
    torque_scale, velocity_scale, acceleration_scale = scales
    if is_unit(torque_scale) and is_unit(velocity_scale) and is_unit(acceleration_scale):
        return beta, cov, rms
    args = (beta, cov, rms, names, torque_scale, velocity_scale, solver, stacklevel + 1)
    return unscale(*args, acceleration_scale)


class Columns(NamedTuple):
    """Which design columns a sweep fit has: the one description from which every sweep fit
    (:func:`design`, the fast path, the accumulator) names (:meth:`names`) and fills
    (:func:`fill_columns`) its columns, in this order: offset, sin, cos, Coulomb (friction
    terms >= 1), viscous (2), inertia, the signed load pair, a sin/cos pair per harmonic."""

    friction_terms: int
    inertia: bool = False
    load_signed: bool = False
    harmonics: tuple[float, ...] = ()

    def names(self) -> list[str]:
        """The column names, in order."""
        names = ["offset", "sin", "cos"]
        if self.friction_terms >= 1:
            names.append("coulomb")
        if self.friction_terms == 2:
            names.append("viscous")
        if self.inertia:
            names.append("inertia")
        if self.load_signed:
            names += ["load_sin", "load_cos"]
        for k in self.harmonics:
            names += [f"sin_{k:g}", f"cos_{k:g}"]
        return names


def fill_columns(
    out: NDArray[np.float64],
    columns: Columns,
    q: NDArray[np.float64],
    velocity: NDArray[np.float64],
    sgn: NDArray[np.float64] | None,
    used: NDArray[np.float64] | None,
    acceleration: NDArray[np.float64] | None,
) -> None:
    """Write the design `columns` into `out` (..., p, n), any view (rows beyond p untouched).

    ``used`` (..., n) holds 0/1 weights of the used samples (None: all used); ``velocity``,
    ``sgn`` (its sign: None computes it) and ``acceleration`` (the inertia column, None for
    none) arrive already zeroed at unused samples, in their units, so every column is zero
    there.
    """
    # The columns as views (..., n) indexed along the first axis (a plain index for one sweep).
    if out.ndim == 2:
        cols = out
    else:
        cols = out.swapaxes(0, 1) if out.ndim == 3 else np.moveaxis(out, -2, 0)
    friction_terms, inertia, load_signed, harmonics = columns
    if used is None:
        cols[0] = 1.0
    else:
        cols[0] = used
    # numpy's vectorised sin and cos written in place: with numpy 2 cheaper than exp(iq) and
    # its two copies for one sweep (fewer calls, no complex temporary), no slower for a batch.
    np.sin(q, out=cols[1])
    np.cos(q, out=cols[2])
    if used is not None:
        cols[1] *= used
        cols[2] *= used
    col = 3
    if friction_terms >= 1:
        if sgn is None:
            sgn = np.sign(velocity, out=cols[col])
        else:
            cols[col] = sgn
        col += 1
    if friction_terms == 2:
        cols[col] = velocity
        col += 1
    if inertia:
        assert acceleration is not None
        cols[col] = acceleration
        col += 1
    if load_signed:
        assert sgn is not None
        np.multiply(sgn, cols[1], out=cols[col])
        np.multiply(sgn, cols[2], out=cols[col + 1])
        col += 2
    for k in harmonics:
        np.sin(k * q, out=cols[col])
        np.cos(k * q, out=cols[col + 1])
        if used is not None:
            cols[col] *= used
            cols[col + 1] *= used
        col += 2


def speed_threshold(fastest: Any, min_speed: float | None) -> Any:
    """The speed below which a sweep's samples are left out: `min_speed`, or by default 10% of
    the sweep's largest speed `fastest` (a number, or an array over a batch)."""
    return 0.1 * fastest if min_speed is None else min_speed


def used_arc(q: NDArray[np.float64], used: NDArray[np.bool_]) -> NDArray[np.float64]:
    """The arc spanned by the used samples of each sweep (..., n) -> (...)."""
    hi = np.where(used, q, -np.inf).max(axis=-1)
    arc: NDArray[np.float64] = hi - np.where(used, q, np.inf).min(axis=-1)
    return arc


def block_rows(floats: int) -> int:
    """How many sweeps of `floats` float64 values each make one block of about
    :data:`_BLOCK_BYTES` (at least one)."""
    return max(1, _BLOCK_BYTES // (8 * floats))


def design(
    q: NDArray[np.float64],
    velocity: NDArray[np.float64],
    sgn: NDArray[np.float64] | None,
    used: NDArray[np.float64] | None,
    friction_terms: int,
    load_signed: bool,
    harmonics: tuple[float, ...],
    acceleration: NDArray[np.float64] | None = None,
    torque: NDArray[np.float64] | None = None,
) -> tuple[NDArray[np.float64], list[str], NDArray[np.float64], NDArray[np.float64] | None]:
    """Design matrix with columns first, shape (..., p, n), its names, its Gram matrix and
    ``X' torque`` (..., p) (None without `torque`).

    ``velocity``, ``sgn`` (its sign, required for a sign column) and ``acceleration`` (the
    inertia column, None for none) arrive already zeroed at unused samples, which become zero
    rows; `torque` may hold anything finite there. Written in place into one array
    (:func:`fill_columns`), block by block along the first batch axis with the Gram matrix and
    ``X' torque`` of each block formed while it is in cache: the batched fit is bound by memory
    traffic.
    """
    columns = Columns(friction_terms, acceleration is not None, load_signed, harmonics)
    names = columns.names()
    p = len(names)
    x = np.empty(q.shape[:-1] + (p,) + q.shape[-1:])
    gram = np.empty(q.shape[:-1] + (p, p))
    xty = None if torque is None else np.empty(q.shape[:-1] + (p,))
    if q.size == 0:
        # An empty batch: nothing to fill.
        blocks: list[Any] = []
    elif q.ndim == 1:
        blocks = [...]
    else:
        step = block_rows(x[0].size)
        blocks = [slice(i, i + step) for i in range(0, q.shape[0], step)]
    for b in blocks:
        xb = x[b]
        sb, wb = (None if a is None else a[b] for a in (sgn, used))
        ab = None if acceleration is None else acceleration[b]
        fill_columns(xb, columns, q[b], velocity[b], sb, wb, ab)
        if xb.ndim == 2:
            # One sweep: np.dot's BLAS call has less overhead than matmul's (about 1 us).
            np.dot(xb, xb.T, out=gram)
        else:
            np.matmul(xb, np.swapaxes(xb, -1, -2), out=gram[b])
        if xty is not None and torque is not None:
            xty[b] = matvec(xb, torque[b])
    return x, names, gram, xty


class Design(NamedTuple):
    """What :func:`prepare` found: the design matrix, its Gram matrix and the sample mask."""

    x: NDArray[np.float64]
    gram: NDArray[np.float64]
    names: list[str]
    used: NDArray[np.float64] | None
    n_used: NDArray[np.int64] | np.int64  # numpy scalars for one sweep
    pinned: NDArray[np.bool_] | None
    single_speed: NDArray[np.bool_] | np.bool_
    arc: NDArray[np.float64] | np.float64
    velocity_scale: Any  # the viscous column is velocity / velocity_scale (1.0: unscaled)
    acceleration_scale: Any = 1.0  # likewise for the inertia column
    xty: NDArray[np.float64] | None = None  # X' torque where prepare was given the torque


def _speed_mask(
    qq: NDArray[np.float64],
    speed: NDArray[np.float64],
    threshold: Any,
    drop_standing: bool,
    keep: NDArray[np.bool_] | None = None,
) -> tuple[NDArray[np.bool_] | None, NDArray[np.float64] | None]:
    """The used samples (``|v| >= threshold``, and `keep` where given) as booleans and as 0/1
    floats; None if all are."""
    slowest = extreme(np.minimum, speed)
    if (
        keep is None
        and not any_(slowest < threshold)
        and not (drop_standing and any_(slowest <= 0))
    ):
        return None, None
    used_b = speed >= (threshold if np.ndim(threshold) == 0 else threshold[..., None])
    if drop_standing:
        used_b &= speed > 0
    if keep is not None:
        no_data = np.asarray(~keep.any(axis=-1))
        if no_data.any():
            raise InsufficientDataError(refusal("nan", qq.shape[:-1], no_data))
        used_b &= keep
    empty = ~used_b.any(axis=-1)
    if empty.any():
        fastest = float(np.max(speed[empty]))
        where = (qq.shape[:-1], empty)
        raise InsufficientDataError(refusal("slow", *where, float(np.max(threshold)), fastest))
    return used_b, used_b.astype(np.float64)


def _friction_columns(
    vm: NDArray[np.float64],
    sgn: NDArray[np.float64] | None,
    n_used: Any,
    friction: str,
    single_speed_rtol: float,
    batch: tuple[int, ...],
) -> tuple[int, NDArray[np.bool_] | None, NDArray[np.bool_]]:
    """Friction columns to fit, where to pin the viscous one, and where the speed is single."""
    friction_terms = {"none": 0, "coulomb": 1}.get(friction, 2)
    if sgn is None:
        return friction_terms, None, np.full(batch, friction == "coulomb")
    # Direction counts: sum(sgn v) = n_fwd - n_bwd and sum(sgn v ** 2) = n_fwd + n_bwd, so
    # their difference in absolute value is 2 min(n_fwd, n_bwd).
    diff, count = total(sgn), dot(sgn, sgn)
    bad = count - abs(diff) < 0.5
    if any_(bad):
        raise InsufficientDataError(refusal("one_way", batch, np.asarray(bad)))
    if friction_terms != 2:
        return friction_terms, None, np.full(batch, friction == "coulomb")
    # [1, sgn v, v] has rank 2 when each direction moves at one speed (v = alpha + beta sgn v).
    g = (n_used * 1.0, diff, count, total(vm), dot(sgn, vm), dot(vm, vm))
    single = single_speed_test(*g, single_speed_rtol)
    single_speed = np.asarray(single)
    if friction == "coulomb-viscous" and any_(single):
        raise InsufficientDataError(refusal("single_speed", batch, single_speed))
    if all_(single):
        # Every sweep moves at one speed per direction: leave the viscous column out.
        return 1, None, single_speed
    # Mixed batch: hold the viscous coefficient at zero where the speeds are single.
    return 2, (single_speed if any_(single) else None), single_speed


def single_speed_test(
    g00: Any, g03: Any, g33: Any, g04: Any, g34: Any, g44: Any, rtol: float
) -> Any:
    """Whether each direction moves at a single speed, to `rtol`: the velocity's deviations from
    its per-direction means hold at most ``rtol**2`` of its sum of squares.

    The arguments are the entries of the Gram matrix of ``[1, sgn v, v]`` over the used samples
    (``g00 = n``, ``g03 = sum sgn(v)``, ``g33 = sum sgn(v)^2``, ``g04 = sum v``,
    ``g34 = sum sgn(v) v``, ``g44 = sum v^2``; numbers or arrays over a batch) where both
    directions have samples. The sum of squared deviations is the Schur complement of the
    ``(1, sgn v)`` block, ``g44 - [g04 g34] inv([[g00, g03], [g03, g33]]) [g04 g34]'``, whose
    determinant ``g00 g33 - g03^2 = 4 n_fwd n_bwd`` is then positive.
    """
    det = g00 * g33 - g03 * g03
    explained = (g33 * g04 * g04 - 2 * g03 * g04 * g34 + g00 * g34 * g34) / det
    return g44 - explained <= rtol**2 * g44


def prepare(
    qq: NDArray[np.float64],
    vv: NDArray[np.float64],
    min_speed: float | None,
    friction: str,
    load_friction: str,
    orders: tuple[float, ...],
    min_arc: float,
    single_speed_rtol: float,
    aa: NDArray[np.float64] | None = None,
    keep: NDArray[np.bool_] | None = None,
    torque: NDArray[np.float64] | None = None,
) -> Design:
    """Speed mask, the design matrix and its Gram matrix, and the checks on what they hold.

    `min_speed`, `min_arc` and `single_speed_rtol` arrive checked. `aa` is the joint
    acceleration (an inertia column), None for none; `keep` (..., n) marks the samples that
    remain after NaN samples were omitted, None for all; `torque` (..., n), finite, gives
    ``Design.xty``. Every check on the samples
    (finiteness, units, the speed mask, directions, counts and the arc) comes before the design
    matrix is built.
    """
    batch = qq.shape[:-1]
    speed = np.abs(vv)
    # Per-sweep scalars below are Python floats for a single sweep (see `total`). The extremes
    # of |v| and q carry any NaN or infinity of those inputs (np.maximum and np.minimum propagate
    # NaN), so they double as the finiteness checks, before sin and cos see the angles.
    fastest = extreme(np.maximum, speed)
    if not all_finite(fastest):
        refuse_non_finite(vv, "velocity")
    q_hi, q_lo = extreme(np.maximum, qq), extreme(np.minimum, qq)
    if not (all_finite(q_hi) and all_finite(q_lo)):
        refuse_non_finite(qq, "q")
    # Units: for one sweep three comparisons of Python floats settle the common case.
    if not isinstance(q_hi, float) or not (
        q_hi <= MAX_JOINT_ANGLE and q_lo >= -MAX_JOINT_ANGLE and q_hi - q_lo <= MAX_JOINT_ANGLE
    ):
        check_sweep_angles(q_hi, q_lo)
    threshold = speed_threshold(fastest, min_speed)
    needs_both = friction != "none" or load_friction != "none"
    # Standing samples carry no kinetic friction and sgn(0) = 0 would count them in neither
    # direction: leave them out when friction is modelled, whatever `min_speed` says.
    drop_standing = needs_both and min_speed is not None and min_speed <= 0
    used_b, used = _speed_mask(qq, speed, threshold, drop_standing, keep)
    # The viscous column in units of the fastest speed where speeds are extreme (exact: a power
    # of two), so that its sums of squares neither overflow nor underflow.
    velocity_scale = (
        1.0
        if isinstance(fastest, float) and SCALE_LO <= fastest <= SCALE_HI
        else pow2_scale(fastest)
    )
    vs = vv if is_unit(velocity_scale) else vv / per_sample(velocity_scale)
    vm = vs if used is None else vs * used
    # Counts and sums of the velocity columns over the used samples. They decide the columns
    # before the design matrix is built, so its Gram matrix holds only the fitted ones. For a
    # single sweep they are Python floats, which cost a small fraction of 0-d array arithmetic.
    if used_b is None:
        n_used: Any = qq.shape[-1] if not batch else np.full(batch, qq.shape[-1], dtype=np.int64)
    else:
        n_used = used_b.sum(axis=-1, dtype=np.int64)
        n_used = int(n_used) if not batch else n_used
    sgn = np.sign(vm) if needs_both else None
    friction_terms, pin_viscous, single_speed = _friction_columns(
        vm, sgn, n_used, friction, single_speed_rtol, batch
    )
    load_signed = load_friction == "signed"
    am, acceleration_scale = (None, 1.0) if aa is None else _inertia_column(aa, used, batch)
    n_columns = 3 + friction_terms + (am is not None) + 2 * load_signed + 2 * len(orders)
    n_params = n_columns + (1 if load_friction == "abs" else 0)
    n_free = n_params - (0 if pin_viscous is None else pin_viscous.astype(np.int64))
    too_few = n_used <= n_free
    if any_(too_few):
        fewest = int(np.min(n_used))
        raise InsufficientDataError(refusal("few", batch, too_few, int(np.max(n_free)), fewest))
    arc = q_hi - q_lo if used_b is None else used_arc(qq, used_b)
    if any_(arc < min_arc):
        shortest = float(np.min(arc))
        raise InsufficientDataError(refusal("arc", batch, arc < min_arc, min_arc, shortest))
    x, names, gram, xty = design(qq, vm, sgn, used, friction_terms, load_signed, orders, am, torque)
    pinned = None
    if pin_viscous is not None:
        pinned = np.zeros(batch + (len(names),), dtype=bool)
        pinned[..., names.index("viscous")] = pin_viscous
    if batch:
        return Design(
            x,
            gram,
            names,
            used,
            n_used,
            pinned,
            single_speed,
            arc,
            velocity_scale,
            acceleration_scale,
            xty,
        )
    return Design(
        x,
        gram,
        names,
        used,
        np.int64(n_used),
        pinned,
        np.bool_(single_speed),
        np.float64(arc),
        velocity_scale,
        acceleration_scale,
        xty,
    )


def _inertia_column(
    aa: NDArray[np.float64], used: NDArray[np.float64] | None, batch: tuple[int, ...]
) -> tuple[NDArray[np.float64], Any]:
    """The inertia column (the acceleration, zero at unused samples, in units of a power of two
    where its magnitude is extreme) and that unit; refuses a sweep whose used accelerations are
    all zero, where the column says nothing of the inertia."""
    biggest = extreme(np.maximum, np.abs(aa))  # carries any NaN or infinity
    if not all_finite(biggest):
        refuse_non_finite(aa, "acceleration")
    if used is not None:
        biggest = extreme(np.maximum, np.abs(aa * used))
    if any_(biggest == 0):
        raise InsufficientDataError(refusal("still", batch, np.asarray(biggest == 0)))
    scale = pow2_scale(biggest)
    am = aa if is_unit(scale) else aa / per_sample(scale)
    return (am if used is None else am * used), scale
