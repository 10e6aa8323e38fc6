"""The samples :func:`gravdir.estimate_up_from_motion` fits, and what they can identify.

The log's arrays are checked (:func:`check_arrays`); rows holding a NaN are dropped under
``nan_policy="omit"``, the acceleration is derived from the velocity when not logged, and every
joint's samples get their weights (:func:`select_samples`); the parameters are then counted
against the samples left (:func:`check_identifiable`).
"""

from __future__ import annotations

from typing import Literal, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import (
    NanPolicy,
    check_option,
    check_per_joint,
    check_positive,
)
from gravdir._hac import series_lags
from gravdir._options import COVARIANCE_OPTIONS, Friction, LoadFriction
from gravdir._time import check_time
from gravdir.dynamics import BaseParameters
from gravdir.errors import InsufficientDataError
from gravdir.motion._derive import counted, derive, segments
from gravdir.motion._inputs import check_log, friction_mask, sample_weights

# The `load_friction` options the estimator implements ("signed" is the sweep's column pair).
LOAD_FRICTION: tuple[LoadFriction, ...] = ("none", "abs", "auto")


# Savitzky-Golay window of the derived acceleration, s (its accuracy is on the Motion page), of
# the estimator and the tracker alike.
DEFAULT_DERIVATIVE_WINDOW = 0.2


class Log(NamedTuple):
    """The checked arrays of a log, shape (N, n) (`time` (N,)), NaN rows still in under
    ``"omit"``."""

    time: NDArray[np.float64]
    q: NDArray[np.float64]
    velocity: NDArray[np.float64]
    acceleration: NDArray[np.float64] | None  # None: derived from `velocity`
    torque: NDArray[np.float64]
    window: float  # of the derivative, s


class Samples(NamedTuple):
    """The samples fitted: NaN rows dropped, acceleration derived, weights (N', n)."""

    q: NDArray[np.float64]
    velocity: NDArray[np.float64]
    acceleration: NDArray[np.float64]
    torque: NDArray[np.float64]
    weights: NDArray[np.float64]
    base_acceleration: NDArray[np.float64] | None
    n_omitted: int


def check_arrays(
    n: int,
    time: ArrayLike,
    q: ArrayLike,
    velocity: ArrayLike,
    torque: ArrayLike,
    acceleration: ArrayLike | None,
    derivative_window: float,
    nan_policy: NanPolicy,
) -> Log:
    """The log's arrays and the window of the derivative, checked."""
    option = check_option(nan_policy, "nan_policy", ("raise", "omit"))
    finite = option == "raise"
    qq = check_log(q, "q", n, None, finite=finite)
    n_samples = qq.shape[0]
    tt = check_time(time, n_samples)
    qd = check_log(velocity, "velocity", n, n_samples, finite=finite)
    tau = check_log(torque, "torque", n, n_samples, finite=finite)
    qdd = (
        None
        if acceleration is None
        else check_log(acceleration, "acceleration", n, n_samples, finite=finite)
    )
    window = check_positive(derivative_window, "derivative_window")
    return Log(tt, qq, qd, qdd, tau, window)


def acceleration_from_log(
    time: NDArray[np.float64], velocity: NDArray[np.float64], window: float
) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """The acceleration (N, n) of a log and where it counts (N,): the derivative rule of every
    motion function.

    `time` (N,) is checked (finite, strictly increasing) and `velocity` (N, n) finite. The log
    is split at its gaps (intervals longer than ``GAP_FACTOR`` times the median interval) and
    each segment differentiated on its own stamps, a Savitzky-Golay cubic over `window`
    (:func:`gravdir.sweep.joint_acceleration`, which handles the jitter); a derivative never
    spans a gap. The samples within half a window of a segment's ends (where the filter
    extrapolates) and every sample of a segment shorter than the window do not count: their
    acceleration is 0. :class:`gravdir.motion._derive.AccelerationStream` gives the same for a
    log read in chunks.

    Raises
    ------
    InsufficientDataError
        If no segment is longer than `window`.
    """
    acceleration = np.zeros(velocity.shape)
    counts = np.zeros(time.size, dtype=bool)
    for seg in segments(time, window):
        if seg.plan is None:
            continue
        t = time[seg.lo : seg.hi]
        acceleration[seg.lo : seg.hi] = derive(
            seg.plan, t, velocity[seg.lo : seg.hi], (0, seg.plan.m), (0, t.size)
        )
        counts[seg.lo : seg.hi] = counted(t, seg.plan, window)
    acceleration[~counts] = 0.0  # extrapolated or not derived: nothing to use
    return acceleration, counts


def check_model(
    n: int,
    noise_std: ArrayLike | None,
    gains: ArrayLike | Literal["estimate"],
    friction: Friction,
    load_friction: LoadFriction,
) -> tuple[NDArray[np.float64] | None, NDArray[np.float64] | None, NDArray[np.bool_]]:
    """The noise levels and gains given (None: estimated) and the joint parameters fitted, with
    the friction options checked."""
    sigma_given = None if noise_std is None else check_per_joint(noise_std, "noise_std", n)
    if isinstance(gains, str):
        check_option(gains, "gains", ("estimate",))
        fixed_gains = None
    else:
        fixed_gains = check_per_joint(gains, "gains", n)
    mask = friction_mask(friction)
    check_option(load_friction, "load_friction", LOAD_FRICTION)
    if load_friction == "abs" and fixed_gains is not None:
        raise ValueError(
            "Expected `gains='estimate'` when `load_friction` is 'abs' (the load term is a second "
            "gain per joint), got gains given."
        )
    return sigma_given, fixed_gains, mask


def check_covariance(covariance: str, bandwidth: float, time: NDArray[np.float64]) -> int | None:
    """The largest lag of the Bartlett sandwich, samples (None: the white-noise form), at the
    rate of `time` (the reciprocal of its median interval)."""
    check_option(covariance, "covariance", COVARIANCE_OPTIONS)
    if covariance == "white":
        return None
    if time.size < 2:
        raise InsufficientDataError(
            f"Expected at least 2 samples in `time` with covariance='hac', got {time.size}."
        )
    interval = float(np.median(np.diff(time)))
    at = f"at a median interval of {interval:.3g} s (`time` in seconds?)"
    return series_lags(bandwidth, 1.0 / interval, time.size, "log", at)


def select_samples(
    log: Log,
    base_acceleration: NDArray[np.float64] | None,
    min_speed: float,
    speed_taper: float,
    torque_limits: ArrayLike | None,
    weights: ArrayLike | None,
) -> Samples:
    """The samples fitted and their weights (zero where a joint's sample is left out)."""
    qq, qd, tau, qdd = log.q, log.velocity, log.torque, log.acceleration
    # NaN samples: dropped whole (every joint) under "omit".
    keep = np.isfinite(qq).all(1) & np.isfinite(qd).all(1) & np.isfinite(tau).all(1)
    if qdd is not None:
        keep &= np.isfinite(qdd).all(1)
    n_omitted = int(np.count_nonzero(~keep))
    # Weights of every logged sample (a NaN compares false: those samples are dropped below).
    w = sample_weights(qd, tau, min_speed, torque_limits, weights, speed_taper)[keep]
    qq, qd, tau = qq[keep], qd[keep], tau[keep]
    if qdd is None:
        # The derivative takes the stamps of the kept samples: a run of dropped rows is a gap
        # where the interval it leaves is one.
        qdd, counts = acceleration_from_log(log.time[keep], qd, log.window)
        w[~counts] = 0.0
    else:
        qdd = qdd[keep]
    acc_base = None if base_acceleration is None else base_acceleration[keep]
    return Samples(qq, qd, qdd, tau, w, acc_base, n_omitted)


def check_identifiable(
    samples: Samples, base: BaseParameters, mask: NDArray[np.bool_], gains_estimated: bool
) -> tuple[NDArray[np.int64], float]:
    """The samples used per joint and the torque unit (the largest torque used).

    Raises
    ------
    InsufficientDataError
        If a joint has fewer samples than its own parameters, all fewer than all parameters, or
        every torque used is zero.
    """
    w, n = samples.weights, samples.q.shape[1]
    n_used = np.count_nonzero(w > 0, axis=0).astype(np.int64)
    n_params = base.rank + int(mask.sum()) * n + 2 + (n - 1 if gains_estimated else 0)
    idle = np.flatnonzero(n_used < int(mask.sum()) + 1)
    if idle.size:
        raise InsufficientDataError(
            f"Expected every joint to move faster than `min_speed` in at least "
            f"{int(mask.sum()) + 1} samples, got joints {(idle + 1).tolist()} (1-based) that "
            "never move that fast: their friction and gain are not identified. Pass "
            "`min_speed=0, speed_taper=0` to use the torques at rest (stiction then counts as "
            "noise)."
        )
    if int(n_used.sum()) <= n_params:
        raise InsufficientDataError(
            f"Expected more torque samples than the {n_params} parameters (and at least "
            f"{int(mask.sum()) + 1} per joint) after `min_speed`, `torque_limits` and `weights`, "
            f"got {n_used.tolist()} per joint."
        )
    # Work in units of the largest torque, so that any finite log gives finite sums.
    unit = float(np.max(np.abs(samples.torque) * (w > 0), initial=0.0))
    if not unit > 0:
        raise InsufficientDataError("Expected non-zero torques in `torque`, got only zeros.")
    return n_used, unit
