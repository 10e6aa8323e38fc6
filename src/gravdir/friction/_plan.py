"""Excitation plan: forward and backward constant-speed passes at several speeds."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import (
    MAX_JOINT_ANGLE,
    check_angle_span,
    check_array,
    check_count,
    check_positive,
)
from gravdir._results import Result
from gravdir.friction._inputs import check_real, ignore_underflow

__all__ = [
    "MAX_PASSES",
    "MAX_PLAN_SAMPLES",
    "MAX_REPEATS",
    "ExcitationPlan",
    "excitation_trajectory",
]

# Caps that bound the work of one call. A plan of 5 000 000 samples is 83 minutes at 1 kHz and
# holds about 200 MB of arrays; 10 000 forward-backward passes (speeds times repeats) are far
# more than an identification needs (8-20 speeds, a few repeats).
#: Cap on the samples of one excitation plan.
MAX_PLAN_SAMPLES = 5_000_000
#: Cap on the forward-backward passes (speeds times repeats) of one excitation plan.
MAX_PASSES = 10_000
#: Cap on the repeats of each speed of one excitation plan.
MAX_REPEATS = 1_000


@dataclass(frozen=True, eq=False, repr=False)
class ExcitationPlan(Result):
    """A sampled excitation trajectory: ramps and constant-speed passes at several speeds.

    Attributes
    ----------
    time : ndarray, shape (n,)
        Sample times, s, from 0.
    q, velocity, acceleration : ndarray, shape (n,)
        Joint angle (rad), speed (rad/s) and acceleration (rad/s²) at the samples.
    speeds : ndarray, shape (k,)
        The cruise speeds of the plan, rad/s, in the order they are run.
    speed_index : ndarray of int, shape (n,)
        Index into `speeds` of the pass each sample belongs to.
    cruising : ndarray of bool, shape (n,)
        True where the sample lies on a constant-speed segment.
    duration : float
        Length of the plan, s.
    """

    _units = {
        "time": "s", "q": "rad", "velocity": "rad/s", "acceleration": "rad/s²",
        "speeds": "rad/s", "speed_index": "", "duration": "s",
    }

    time: NDArray[np.float64]
    q: NDArray[np.float64]
    velocity: NDArray[np.float64]
    acceleration: NDArray[np.float64]
    speeds: NDArray[np.float64]
    speed_index: NDArray[np.int64]
    cruising: NDArray[np.bool_]
    duration: float

    def __repr__(self) -> str:
        lo, hi = float(np.min(self.q)), float(np.max(self.q))
        return (
            f"ExcitationPlan({self.speeds.size} speeds {float(self.speeds.min()):.4g}-"
            f"{float(self.speeds.max()):.4g} rad/s, {self.time.size} samples, "
            f"duration {self.duration:.1f} s, range {np.degrees(lo):.1f}°..{np.degrees(hi):.1f}°)"
        )


@dataclass(frozen=True)
class _Segment:
    """A stretch of constant acceleration: start time, joint angle and speed, acceleration."""

    start: float
    q: float
    velocity: float
    acceleration: float
    speed_index: int
    cruising: bool


def _segments(
    lo: float,
    span: float,
    speeds: list[float],
    acc: float,
    cruise_time: float | None,
    repeats: int,
) -> tuple[list[_Segment], float]:
    """The plan's constant-acceleration segments and its duration."""
    segments: list[_Segment] = []
    t, q = 0.0, lo
    for k, v in enumerate(speeds):
        d = span if cruise_time is None else min(span, v * v / acc + v * cruise_time)
        t_ramp = v / acc
        t_cruise = (d - v * v / acc) / v
        for _ in range(repeats):
            for sign in (1.0, -1.0):
                for v_start, a, dur, is_cruise in (
                    (0.0, sign * acc, t_ramp, False),
                    (sign * v, 0.0, t_cruise, True),
                    (sign * v, -sign * acc, t_ramp, False),
                ):
                    if dur <= 0:
                        continue
                    segments.append(_Segment(t, q, v_start, a, k, is_cruise))
                    q += v_start * dur + 0.5 * a * dur * dur
                    t += dur
    return segments, t


def _sample(
    segments: list[_Segment],
    duration: float,
    dt: float,
    lo: float,
    hi: float,
    speeds: NDArray[np.float64],
) -> ExcitationPlan:
    """The plan sampled every `dt` from 0 to `duration`."""
    n = int(math.floor(duration / dt + 1e-9)) + 1
    time = np.arange(n, dtype=np.float64) * dt
    t0 = np.array([s.start for s in segments])
    seg = np.clip(np.searchsorted(t0, time, side="right") - 1, 0, len(segments) - 1)
    elapsed = time - t0[seg]
    a_s = np.array([s.acceleration for s in segments])[seg]
    v0 = np.array([s.velocity for s in segments])[seg]
    q0 = np.array([s.q for s in segments])[seg]
    v_s = v0 + a_s * elapsed
    q_s = q0 + v0 * elapsed + 0.5 * a_s * elapsed**2
    return ExcitationPlan(
        time=time,
        # Rounding can leave a few 1e-16 excursions past the range ends.
        q=np.clip(q_s, lo, hi),
        velocity=v_s,
        acceleration=a_s,
        speeds=speeds.copy(),
        speed_index=np.array([s.speed_index for s in segments], dtype=np.int64)[seg],
        cruising=np.array([s.cruising for s in segments], dtype=bool)[seg],
        duration=duration,
    )


@ignore_underflow
def excitation_trajectory(
    q_min: float,
    q_max: float,
    speeds: ArrayLike,
    *,
    max_acceleration: float,
    sample_rate: float,
    cruise_time: float | None = None,
    repeats: int = 1,
) -> ExcitationPlan:
    """Plan forward and backward constant-speed passes at several speeds within a joint range.

    Each pass starts at rest at `q_min`, accelerates at `max_acceleration` until it reaches the
    pass speed, cruises at that speed, decelerates to rest, then returns the same way to `q_min`.
    The speeds are run in the order given, each `repeats` times.

    Parameters
    ----------
    q_min, q_max : float
        Joint range the plan must stay in, rad, ``q_min < q_max``, within ±4π rad and at most
        4π rad wide (two turns).
    speeds : array_like, shape (k,)
        Cruise speeds, rad/s, positive, e.g. ``np.geomspace(0.005, 1.0, 8)``.
    max_acceleration : float
        The bound on the acceleration, rad/s²; the ramps use it exactly.
    sample_rate : float
        Samples per second, Hz; the samples are ``1 / sample_rate`` apart.
    cruise_time : float, optional
        Longest constant-speed time of a pass, s. By default every pass covers the whole range,
        which takes ``(q_max - q_min) / speed`` at slow speeds; a cruise time bounds the plan's
        length.
    repeats : int, optional
        Forward-backward pairs per speed (default 1), at most `MAX_REPEATS` = 1000.

    Returns
    -------
    ExcitationPlan
        Sampled joint angle, velocity and acceleration, the speeds and the duration.

    Raises
    ------
    ValueError
        If a speed cannot be reached and left within the range: the ramps need
        ``speed**2 / max_acceleration`` of travel. Also for a non-positive or non-numeric
        argument (numeric strings and booleans included); `q_min` or `q_max` beyond ±4π rad,
        or a range wider than 4π rad (two turns: degrees?); `repeats` outside 1 to
        `MAX_REPEATS` = 1000; more than `MAX_PASSES` = 10 000 passes (speeds times repeats); a
        plan of more than `MAX_PLAN_SAMPLES` = 5 000 000 samples, or of fewer than two (a
        `sample_rate` below one sample per plan duration).

    See Also
    --------
    fit_friction : fits a friction model to the torque recorded along the plan.

    Notes
    -----
    The excitation trajectory of CN 107423515 B, claim 3: while the joint is slower than the set
    speed it accelerates with an acceleration below a bound; at the set speed it moves uniformly.
    Here a pass of speed :math:`v` and length :math:`d` has ramps of time :math:`v/a` and length
    :math:`v^2/(2a)` each and a cruise of length :math:`d - v^2/a`, with
    :math:`d = \\min(q_{max} - q_{min}, v^2/a + v\\,t_c)`.

    References
    ----------
    CN 107423515 B, claim 3 (the excitation trajectory: accelerate below a bound, then move
    uniformly at the set speed).

    Examples
    --------
    >>> plan = excitation_trajectory(0.0, 1.0, [0.1, 0.5], max_acceleration=1.0, sample_rate=100)
    >>> round(plan.duration, 3), float(plan.velocity.max()), float(plan.q.max())
    (25.2, 0.5, 1.0)
    """
    lo = _check_position(q_min, "q_min")
    hi = _check_position(q_max, "q_max")
    if not hi > lo:
        raise ValueError(f"Expected `q_max` > `q_min`, got q_min={lo!r}, q_max={hi!r}.")
    span = check_angle_span(hi - lo, "q_max")
    v_all = check_array(speeds, "speeds")
    if v_all.ndim != 1 or v_all.size == 0:
        raise ValueError(f"Expected `speeds` to have shape (k,) with k >= 1, got {v_all.shape}.")
    if np.any(v_all <= 0):
        raise ValueError(f"Expected `speeds` to be positive, got min {float(v_all.min())!r}.")
    acc = check_positive(max_acceleration, "max_acceleration")
    rate = check_positive(sample_rate, "sample_rate")
    dt = 1.0 / rate  # the one sample interval: the time grid is arange(n) * dt
    if cruise_time is not None:
        cruise_time = check_positive(cruise_time, "cruise_time", allow_zero=True)
    n_repeats = check_count(repeats, "repeats", minimum=1, maximum=MAX_REPEATS)
    if v_all.size * n_repeats > MAX_PASSES:
        raise ValueError(
            f"Expected at most {MAX_PASSES} passes (`speeds` times `repeats`), got "
            f"{v_all.size} × {n_repeats} = {v_all.size * n_repeats}."
        )
    with np.errstate(over="ignore"):
        unreachable = np.any(v_all**2 / acc > span)
    if unreachable:
        vmax = math.sqrt(acc * span)
        raise ValueError(
            f"Expected `speeds` reachable within the range: ramps at max_acceleration={acc:g} "
            f"allow at most {vmax:.4g} rad/s over {span:.4g} rad, got {float(v_all.max()):.4g}."
        )
    segments, duration = _segments(lo, span, v_all.tolist(), acc, cruise_time, n_repeats)
    steps = duration / dt  # Python floats: an overflow gives inf, which the cap refuses
    if not steps < MAX_PLAN_SAMPLES:
        raise ValueError(
            f"Expected a plan of at most {MAX_PLAN_SAMPLES} samples, got {steps:.3g} "
            f"({duration:.3g} s at `sample_rate`={rate:g} Hz): lower `sample_rate`, or bound the "
            "passes with `cruise_time`."
        )
    if steps < 1:
        raise ValueError(
            f"Expected `sample_rate` at least one sample per plan duration {duration:.4g} s (two "
            f"samples or more), got {rate:g} Hz."
        )
    return _sample(segments, duration, dt, lo, hi, v_all)


def _check_position(q: float, name: str) -> float:
    """A joint position in radians: finite, real, within two turns (`MAX_JOINT_ANGLE`) of zero."""
    value = check_real(q, name)
    if abs(value) > MAX_JOINT_ANGLE:
        raise ValueError(
            f"Expected `{name}` in radians, within ±{MAX_JOINT_ANGLE:.4g} rad (two turns), got "
            f"{value:.6g} rad ({math.degrees(value):.6g}°): degrees?"
        )
    return value
