"""Checked inputs, the speed mask and the design matrix of a sweep fit."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import check_array, check_finite, check_positive, check_same_shape
from gravdir.errors import InsufficientDataError
from gravdir.sweep._solve import all_, all_finite, any_, batch_index, dot, extreme, total

Friction = Literal["auto", "coulomb-viscous", "coulomb", "none"]
LoadFriction = Literal["none", "signed", "abs"]
FRICTION_OPTIONS: tuple[Friction, ...] = ("auto", "coulomb-viscous", "coulomb", "none")
LOAD_FRICTION_OPTIONS: tuple[LoadFriction, ...] = ("none", "signed", "abs")

# A sweep shorter than this cannot separate the offset from the gravity sinusoid in practice:
# on a 30 degree arc the amplitude variance is already ~1e3 times its full-circle value
# (docs/sweep.md tabulates the inflation against the arc length).
DEFAULT_MIN_ARC = float(np.deg2rad(30.0))
# Relative RMS spread of the velocity within each direction below which the Coulomb and viscous
# columns are collinear to rounding: a commanded constant speed gives exactly zero.
DEFAULT_SINGLE_SPEED_RTOL = 1e-6

# Bytes of design matrix built per block: the Gram product then reads each block from cache
# (L2 is 0.5-2 MB on current x86 cores) instead of memory, which takes ~40% off its time at
# p = 4 (measured with 2000 x 500 samples).
_BLOCK_BYTES = 1 << 20


def check_sweep_inputs(
    q: ArrayLike, torque: ArrayLike, velocity: ArrayLike, *, finite: bool = True
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Coerce and check the three sample arrays.

    With ``finite=False`` the caller checks finiteness itself, from reductions it computes anyway
    (see :func:`prepare` and :func:`~gravdir.sweep.fit_sweep`), which saves three passes over a
    large batch.
    """
    qq = check_array(q, "q", min_ndim=1, finite=False)
    tt = check_array(torque, "torque", min_ndim=1, finite=False)
    vv = check_array(velocity, "velocity", min_ndim=1, finite=False)
    if finite:
        check_finite(qq, "q")
        check_finite(tt, "torque")
        check_finite(vv, "velocity")
    if qq.shape[-1] == 0 or tt.shape[-1] == 0 or vv.shape[-1] == 0:
        raise InsufficientDataError(
            f"Expected at least one sample, got `q` {qq.shape}, `torque` {tt.shape} and "
            f"`velocity` {vv.shape}."
        )
    if qq.shape == tt.shape == vv.shape:
        return qq, tt, vv
    shape = check_same_shape(q=qq, torque=tt, velocity=vv)
    return (
        np.broadcast_to(qq, shape),
        np.broadcast_to(tt, shape),
        np.broadcast_to(vv, shape),
    )


def apply_torque_sign(torque: NDArray[np.float64], torque_sign: int) -> NDArray[np.float64]:
    """`torque` in gravdir's sign convention; `torque_sign` must be 1 or -1."""
    if isinstance(torque_sign, bool) or torque_sign not in (1, -1):
        raise ValueError(f"Expected `torque_sign` to be 1 or -1, got {torque_sign!r}.")
    return torque if torque_sign == 1 else -torque


def check_harmonics(harmonics: Sequence[float]) -> tuple[float, ...]:
    """The nuisance orders as floats: positive, distinct and other than 1."""
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


def design(
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
        # numpy's vectorised sin and cos written in place: with numpy 2 cheaper than exp(iq) and
        # its two copies for one sweep (fewer calls, no complex temporary), no slower for a batch.
        np.sin(qb, out=xb[..., 1, :])
        np.cos(qb, out=xb[..., 2, :])
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
        if xb.ndim == 2:
            # One sweep: np.dot's BLAS call has less overhead than matmul's (about 1 us).
            np.dot(xb, xb.T, out=gram)
        else:
            np.matmul(xb, np.swapaxes(xb, -1, -2), out=gram[b])
    return x, names, gram


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


def _speed_mask(
    qq: NDArray[np.float64], speed: NDArray[np.float64], threshold: Any, drop_standing: bool
) -> tuple[NDArray[np.bool_] | None, NDArray[np.float64] | None]:
    """The used samples (``|v| >= threshold``) as booleans and as 0/1 floats; None if all are."""
    slowest = extreme(np.minimum, speed)
    if not any_(slowest < threshold) and not (drop_standing and any_(slowest <= 0)):
        return None, None
    used_b = speed >= (threshold if np.ndim(threshold) == 0 else threshold[..., None])
    if drop_standing:
        used_b &= speed > 0
    empty = ~used_b.any(axis=-1)
    if empty.any():
        raise InsufficientDataError(
            "Expected samples with |`velocity`| >= `min_speed` "
            f"({float(np.max(threshold)):g}), got none{batch_index(qq.shape[:-1], empty)}: the "
            f"largest |velocity| there is {float(np.max(speed[empty])):g}."
        )
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
        raise InsufficientDataError(
            "Expected `velocity` to have samples in both directions above `min_speed` when "
            "friction columns are on, got a sweep with one direction only"
            f"{batch_index(batch, np.asarray(bad))}; pass friction='none' and "
            "load_friction='none' to fit a one-way sweep."
        )
    if friction_terms != 2:
        return friction_terms, None, np.full(batch, friction == "coulomb")
    # [1, sgn v, v] has rank 2 when each direction moves at one speed (v = alpha + beta sgn v).
    # The Schur complement of the (1, sgn v) block in their Gram matrix G is the sum of squared
    # deviations of v from its per-direction means: zero exactly then.
    g00 = n_used * 1.0
    g03, g33, g04, g34, g44 = diff, count, total(vm), dot(sgn, vm), dot(vm, vm)
    det = g00 * g33 - g03 * g03  # = 4 n_fwd n_bwd > 0: both directions were checked above
    explained = (g33 * g04 * g04 - 2 * g03 * g04 * g34 + g00 * g34 * g34) / det
    single = g44 - explained <= single_speed_rtol**2 * g44
    single_speed = np.asarray(single)
    if friction == "coulomb-viscous" and any_(single):
        raise InsufficientDataError(
            "Expected `velocity` to hold more than one speed in some direction for "
            "friction='coulomb-viscous', got a single speed per direction"
            f"{batch_index(batch, single_speed)}: Coulomb and viscous friction are "
            "collinear there; use friction='auto' or 'coulomb'."
        )
    if all_(single):
        # Every sweep moves at one speed per direction: leave the viscous column out.
        return 1, None, single_speed
    # Mixed batch: hold the viscous coefficient at zero where the speeds are single.
    return 2, (single_speed if any_(single) else None), single_speed


def prepare(
    qq: NDArray[np.float64],
    vv: NDArray[np.float64],
    min_speed: float | None,
    friction: str,
    load_friction: str,
    orders: tuple[float, ...],
    min_arc: float,
    single_speed_rtol: float,
) -> Design:
    """Speed mask, the design matrix and its Gram matrix, and the checks on what they hold."""
    batch = qq.shape[:-1]
    speed = np.abs(vv)
    # Per-sweep scalars below are Python floats for a single sweep (see `total`). The extremes
    # of |v| and q carry any NaN or infinity of those inputs (np.maximum and np.minimum propagate
    # NaN), so they double as the finiteness checks, before sin and cos see the angles.
    fastest = extreme(np.maximum, speed)
    if not all_finite(fastest):
        check_finite(vv, "velocity")
    q_hi, q_lo = extreme(np.maximum, qq), extreme(np.minimum, qq)
    if not (all_finite(q_hi) and all_finite(q_lo)):
        check_finite(qq, "q")
    if min_speed is None:
        threshold = 0.1 * fastest
    else:
        threshold = check_positive(min_speed, "min_speed", allow_zero=True)
    needs_both = friction != "none" or load_friction != "none"
    # Standing samples carry no kinetic friction and sgn(0) = 0 would count them in neither
    # direction: leave them out when friction is modelled, whatever `min_speed` says.
    drop_standing = needs_both and min_speed is not None and min_speed <= 0
    used_b, used = _speed_mask(qq, speed, threshold, drop_standing)
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
    friction_terms, pin_viscous, single_speed = _friction_columns(
        vm, sgn, n_used, friction, single_speed_rtol, batch
    )
    x, names, gram = design(qq, vm, sgn, used, friction_terms, load_friction == "signed", orders)
    pinned = None
    if pin_viscous is not None:
        pinned = np.zeros(batch + (len(names),), dtype=bool)
        pinned[..., names.index("viscous")] = pin_viscous

    n_params = len(names) + (1 if load_friction == "abs" else 0)
    n_free = n_params - (0 if pinned is None else pinned.sum(axis=-1))
    too_few = n_used <= n_free
    if any_(too_few):
        raise InsufficientDataError(
            f"Expected more than {int(np.max(n_free))} samples with |`velocity`| >= `min_speed` "
            f"(one more than the fitted coefficients), got {int(np.min(n_used))}"
            f"{batch_index(batch, too_few)}."
        )
    if used_b is None:
        arc = q_hi - q_lo
    else:
        arc = np.where(used_b, qq, -np.inf).max(axis=-1) - np.where(used_b, qq, np.inf).min(axis=-1)
    if any_(arc < min_arc):
        raise InsufficientDataError(
            f"Expected the used samples of `q` to span at least {np.degrees(min_arc):.1f}° "
            f"(`min_arc`), got {np.degrees(float(np.min(arc))):.2f}°"
            f"{batch_index(batch, arc < min_arc)}: the offset and the gravity sinusoid cannot "
            "be separated on a shorter arc."
        )
    if batch:
        return Design(x, gram, names, used, n_used, pinned, single_speed, arc)
    return Design(
        x, gram, names, used, np.int64(n_used), pinned, np.bool_(single_speed), np.float64(arc)
    )
