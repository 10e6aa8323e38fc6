"""The numerical pieces of :class:`~gravdir.sweep.SweepAccumulator`: option, chunk and
readiness checks, the units of torque, speed and acceleration (powers of two), the
per-direction velocity moments, and the triangular factor's updates (its solve is
:func:`gravdir.sweep._solve.solve_factor`)."""

from __future__ import annotations

import math
from typing import Any, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import MAX_JOINT_ANGLE, check_array, check_finite, check_sweep_angles
from gravdir.sweep._design import (
    FRICTION_OPTIONS,
    SCALE_HI,
    SCALE_LO,
    check_friction_option,
    check_min_speed,
    pow2_scale,
    refusal,
    refuse_non_finite,
)

NAMES = ("q", "torque", "velocity", "acceleration")
# An accumulator's options in the order it keeps them, for messages.
OPTION_NAMES = (
    "min_speed",
    "friction",
    "load_signed",
    "harmonics",
    "inertia",
    "min_arc",
    "single_speed_rtol",
    "torque_sign",
    "omit_nan",
    "hac_lags",
)
# The quantities measured in units of a power of two, in the order of the last axis of an
# accumulator's `_top` and `_unit`: torque, speed, acceleration.
TORQUE, SPEED, ACCELERATION = 0, 1, 2
# The load friction a single pass can fit.
ACCUMULATOR_LOAD_OPTIONS = ("none", "signed")


def coerce(x: ArrayLike, name: str) -> NDArray[np.float64]:
    """A float64 array of at least one dimension (a scalar is one sample)."""
    if type(x) is np.ndarray and x.dtype == np.float64 and x.ndim:
        return x
    arr = check_array(x, name, finite=False)
    return arr.reshape(1) if arr.ndim == 0 else arr


def common_shape(arrays: list[NDArray[np.float64]]) -> tuple[int, ...]:
    """The broadcast shape of the sample arrays, whose last (sample) axes must agree."""
    m = arrays[0].shape[-1]
    if any(a.shape[-1] != m for a in arrays):
        shapes = ", ".join(f"`{n}` {a.shape}" for n, a in zip(NAMES, arrays, strict=False))
        raise ValueError(
            f"Expected the samples to share their last (sample) axis, got {shapes}: leading "
            "axes broadcast over sweeps, the sample axis does not."
        )
    try:
        return tuple(np.broadcast_shapes(*(a.shape for a in arrays)))
    except ValueError:
        shapes = ", ".join(f"`{n}` {a.shape}" for n, a in zip(NAMES, arrays, strict=False))
        raise ValueError(f"Expected arrays of broadcastable shapes, got {shapes}.") from None


def check_chunk(
    arrays: list[NDArray[np.float64]],
    batch_so_far: tuple[int, ...] | None,
    q_hi: Any,
    q_lo: Any,
    omit: bool,
) -> tuple[tuple[int, ...], int, Any, Any]:
    """A chunk of coerced sample arrays (q, torque, velocity[, acceleration]) checked against an
    accumulator's batch shape so far (None before its first chunk) and the extremes of `q` over
    its samples so far (`q_hi`, `q_lo`).

    Returns the batch shape, the number of samples and the extremes of `q` with the chunk.
    Refuses bad input (see :meth:`~gravdir.sweep.SweepAccumulator.add`) with a ``ValueError``
    naming the argument; nothing is changed before every check has passed.
    """
    shape = arrays[0].shape
    if any(a.shape != shape for a in arrays):
        shape = common_shape(arrays)
    batch, m = shape[:-1], shape[-1]
    if batch_so_far is not None and batch != batch_so_far:
        try:
            shape = np.broadcast_shapes(shape, batch_so_far + (m,))
        except ValueError:
            shape = ()
        if shape[:-1] != batch_so_far:
            raise ValueError(
                f"Expected the leading axes of the samples to broadcast to the "
                f"accumulator's batch shape {batch_so_far}, got {batch}."
            ) from None
        batch = batch_so_far
    if m == 0:
        for a, name in zip(arrays, NAMES, strict=False):
            check_array(a, name, finite=False)
        return batch, 0, q_hi, q_lo
    q_arr = arrays[0]
    if omit:
        refuse_infinite(arrays)
        hi, lo = np.fmax.reduce(q_arr, axis=-1), np.fmin.reduce(q_arr, axis=-1)
    else:
        # The extremes of q carry any NaN or infinity of it; the other arrays are checked
        # through their largest magnitude (one pass each, never a floating-point warning).
        hi, lo = np.maximum.reduce(q_arr, axis=-1), np.minimum.reduce(q_arr, axis=-1)
        if q_arr.ndim == 1:
            hi, lo = float(hi), float(lo)
            finite = math.isfinite(hi - lo)  # inf - inf is NaN, NaN stays NaN
        else:
            finite = bool(np.isfinite(hi).all() and np.isfinite(lo).all())
        if not finite:
            refuse_non_finite(q_arr, "q")
        for a, name in zip(arrays[1:], NAMES[1:], strict=False):
            if not math.isfinite(np.maximum.reduce(np.abs(a), axis=None)):
                refuse_non_finite(a, name)
    if not batch:
        # One sweep: Python floats (a NaN of an omitted sample compares false: ignored).
        hi, lo = float(hi), float(lo)
        old_hi, old_lo = (-math.inf, math.inf) if batch_so_far is None else (q_hi, q_lo)
        new_hi = hi if hi >= old_hi else old_hi
        new_lo = lo if lo <= old_lo else old_lo
    elif batch_so_far is None:
        new_hi, new_lo = np.broadcast_to(hi, batch).copy(), np.broadcast_to(lo, batch).copy()
    else:
        new_hi, new_lo = np.fmax(q_hi, hi), np.fmin(q_lo, lo)
    fine = (
        not batch
        and new_lo >= -MAX_JOINT_ANGLE
        and new_hi <= MAX_JOINT_ANGLE
        and new_hi - new_lo <= MAX_JOINT_ANGLE
    )
    if not fine:
        both = np.isfinite(new_hi) & np.isfinite(new_lo)
        check_sweep_angles(
            np.asarray(np.where(both, new_hi, 0.0)), np.asarray(np.where(both, new_lo, 0.0))
        )
    return batch, m, new_hi, new_lo


def refuse_infinite(arrays: list[NDArray[np.float64]]) -> None:
    """Under ``nan_policy="omit"``: refuse infinities (a NaN is a missing sample)."""
    for a, name in zip(arrays, NAMES, strict=False):
        if np.isinf(a).any():
            check_finite(np.where(np.isnan(a), 0.0, a), name)


def units_are_one(top: NDArray[np.float64]) -> bool:
    """Whether every largest magnitude in `top` (..., k) lies in [2^-100, 2^100] or is zero,
    so that :func:`units_for` gives 1 everywhere (three Python floats for one sweep)."""
    if top.ndim == 1:
        return all(SCALE_LO <= x <= SCALE_HI or x == 0.0 for x in top.tolist())
    return bool((((top >= SCALE_LO) & (top <= SCALE_HI)) | (top == 0.0)).all())


def units_for(top: NDArray[np.float64]) -> NDArray[np.float64]:
    """The units (powers of two) of quantities whose largest magnitudes are `top` (..., k), by
    fit_sweep's rule (:func:`~gravdir.sweep._design.pow2_scale`), shape (..., k)."""
    out: NDArray[np.float64] = np.broadcast_to(pow2_scale(top), top.shape)
    return out


def unit_factor(old: NDArray[np.float64], new: NDArray[np.float64]) -> NDArray[np.float64]:
    """``old / new`` for units that are powers of two, the factor that re-expresses a quantity
    measured in `old` in `new`; held at 1 where it would exceed 1.

    Units grow with the largest magnitudes, so the factor exceeds 1 only where the quantity has
    been zero so far (its unit 1 by the rule), and its state, being zero, needs none; the ratio
    could overflow there (1 / 2^-1074). A factor below the float range is 0.
    """
    with np.errstate(under="ignore"):
        out: NDArray[np.float64] = np.ldexp(1.0, np.minimum(np.frexp(old)[1] - np.frexp(new)[1], 0))
    return out


def moments(v: NDArray[np.float64], side: NDArray[np.bool_]) -> NDArray[np.float64]:
    """(count, mean, sum of squared deviations) of `v` where `side`, per sweep: (..., 3)."""
    count = side.sum(axis=-1).astype(np.float64)
    total = np.where(side, v, 0.0).sum(axis=-1)
    mean = total / np.maximum(count, 1.0)
    dev = np.where(side, v - mean[..., None], 0.0)
    return np.stack([count, mean, (dev * dev).sum(axis=-1)], axis=-1)


def chan_merge(a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    """Merge two (count, mean, M2) moments (Chan, Golub & LeVeque 1979)."""
    na, nb = a[..., 0], b[..., 0]
    n = na + nb
    safe = np.maximum(n, 1.0)
    delta = b[..., 1] - a[..., 1]
    mean = a[..., 1] + delta * nb / safe
    m2 = a[..., 2] + b[..., 2] + delta * delta * na * nb / safe
    return np.stack([n, mean, m2], axis=-1)


def qr_r(m: NDArray[np.float64]) -> NDArray[np.float64]:
    """The triangular factor R of ``m = QR`` (stacked over leading axes)."""
    return cast("NDArray[np.float64]", np.linalg.qr(m, mode="r"))


def drop_column(r: NDArray[np.float64], i: int) -> NDArray[np.float64]:
    """The triangular factor of the columns of ``QR`` without column `i`: ``qr(R[:, others])``."""
    others = [j for j in range(r.shape[-1]) if j != i]
    return qr_r(r[..., others])


def insert_unit(r: NDArray[np.float64], i: int) -> NDArray[np.float64]:
    """`r` with a unit row and column inserted at `i` (a coefficient held at zero)."""
    n = r.shape[-1] + 1
    out = np.zeros(r.shape[:-2] + (n, n))
    idx = np.array([j for j in range(n) if j != i])
    out[..., idx[:, None], idx[None, :]] = r
    out[..., i, i] = 1.0
    return out


def missing(acc: Any) -> tuple[str | None, Any]:
    """The first requirement of a fit that the flushed samples of the accumulator `acc` do not
    meet (None where they meet all), and the single-speed flags of its sweeps."""
    batch = acc._batch
    assert batch is not None
    if acc._omit and (acc._kept == 0).any():
        return refusal("nan", batch, acc._kept == 0), None
    empty = acc._used == 0
    if empty.any():
        fastest = float(np.max(np.where(empty, acc._top[..., SPEED], 0.0)))
        return refusal("slow", batch, empty, acc._min_speed, fastest), None
    counts, means, m2 = acc._dir[..., 0], acc._dir[..., 1], acc._dir[..., 2]
    single = np.full(batch, acc._friction == "coulomb")
    pin = False
    if acc._needs_both:
        one_way = (counts == 0).any(axis=-1)
        if one_way.any():
            return refusal("one_way", batch, one_way), None
        if acc._friction in ("auto", "coulomb-viscous"):
            spread = m2.sum(axis=-1)
            total = spread + (counts * means * means).sum(axis=-1)
            single = spread <= acc._rtol**2 * total
            if acc._friction == "coulomb-viscous" and single.any():
                return refusal("single_speed", batch, single), None
            pin = bool(single.any())
    still = acc._top[..., ACCELERATION] == 0
    if acc._inertia and still.any():
        return refusal("still", batch, still), None
    n_free = len(acc._names) - (single.astype(np.int64) if pin else 0)
    too_few = acc._used <= n_free
    if too_few.any():
        fewest = int(np.min(acc._used))
        return refusal("few", batch, too_few, int(np.max(n_free)), fewest), None
    arc = acc._u_hi - acc._u_lo
    short = arc < acc._min_arc
    if short.any():
        return refusal("arc", batch, short, acc._min_arc, float(np.min(arc))), None
    if acc._lags is not None and acc.n <= acc._lags:
        return (
            f"Expected more samples than the Bartlett kernel's {acc._lags + 1} with "
            f"covariance='hac', got {acc.n}: it would sum every score, and their sum "
            "vanishes at the estimate."
        ), None
    return None, single


def check_options(min_speed: Any, friction: Any, load_friction: Any, inertia: Any) -> float:
    """Check the options of a :class:`~gravdir.sweep.SweepAccumulator` that differ from
    :func:`~gravdir.sweep.fit_sweep`'s; return `min_speed` as a float."""
    speed = check_min_speed(min_speed)
    if speed is None:
        raise ValueError(
            "Expected `min_speed` to be a finite number >= 0, got None: the default of "
            "fit_sweep (10% of the fastest speed of the sweep) is not known until the sweep "
            "ends; give it up front."
        )
    check_friction_option(friction, "friction", FRICTION_OPTIONS)
    if str(load_friction) in ("abs", "auto"):
        raise ValueError(
            "Expected `load_friction` to be 'none' or 'signed' for a SweepAccumulator, got "
            f"{load_friction!r}: the Gauss-Newton iteration of the 'abs' column revisits "
            "every sample, which a single pass over the samples cannot; buffer the sweep and "
            "call fit_sweep, or use 'signed'."
        )
    check_friction_option(load_friction, "load_friction", ACCUMULATOR_LOAD_OPTIONS)
    if not isinstance(inertia, bool | np.bool_):
        raise ValueError(f"Expected `inertia` to be True or False, got {inertia!r}.")
    return float(speed)
