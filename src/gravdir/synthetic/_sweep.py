"""The recorded single-joint sweep and its motion profiles (trapezoid, s-curve, varying speed)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, NamedTuple

import numpy as np
from numpy.typing import NDArray

from gravdir._results import Result

__all__ = ["SweepRecord"]

SweepProfile = Literal["trapezoid", "s-curve", "varying"]
PROFILES: tuple[SweepProfile, ...] = ("trapezoid", "s-curve", "varying")

# Largest timestamp jitter, as a fraction of the sample period: a quarter period keeps the
# jittered times in order (each offset is also clipped to 0.45 of a period).
MAX_JITTER_FRACTION = 0.25
_JITTER_CLIP = 0.45


def _no_samples() -> NDArray[np.float64]:
    return np.empty(0)


@dataclass(frozen=True, eq=False, repr=False)
class SweepRecord(Result):
    """One recorded single-joint sweep: forward from `start` to `stop`, then back.

    Attributes
    ----------
    joint : int
        Index of the swept joint (0-based: ``0`` is J1).
    configuration : ndarray, shape (n_joints,)
        Angles at which every other joint is held, rad (entry `joint` is the sweep's start).
    up : ndarray, shape (3,)
        The arm's true `up` in the base frame.
    time : ndarray, shape (m,)
        Sample times from the start of the motion, s (jittered when the sweep was recorded
        with ``time_jitter > 0``).
    q : ndarray, shape (m,)
        Angle of the swept joint, rad.
    velocity : ndarray, shape (m,)
        Its velocity, rad/s.
    direction : ndarray, shape (m,)
        ``+1.0`` on passes from `start` toward `stop`, ``-1.0`` on passes back, including the
        ramp samples where the velocity is near zero.
    at_cruise : ndarray of bool, shape (m,)
        True where the joint moves at the cruise speed (outside the acceleration ramps; never
        for the ``"varying"`` profile, whose speed always changes).
    torque : ndarray, shape (m,)
        Measured torque of the swept joint, N·m (sensor model applied; with the inertial torque
        when the sweep was recorded with ``inertial=True``).
    gravity_torque : ndarray, shape (m,)
        True holding torque of the swept joint, N·m: noise-free, friction-free, gain 1, without
        inertial torque.
    speed : float
        Cruise (peak) speed, rad/s.
    sample_rate : float
        Nominal samples per second, Hz.
    acceleration : ndarray, shape (m,)
        Acceleration of the swept joint, rad/s², the profile's own (exact, not differentiated).
        Default: zeros of the shape of `q` (a record built by hand without it).

    Notes
    -----
    A result: its arrays are private read-only copies, ``==`` compares values, and
    ``to_dict()`` gives plain Python types.
    """

    _units = {
        "configuration": "rad", "up": "", "time": "s", "q": "rad", "velocity": "rad/s",
        "direction": "", "torque": "N·m", "gravity_torque": "N·m", "speed": "rad/s",
        "sample_rate": "Hz", "acceleration": "rad/s²",
    }

    joint: int
    configuration: NDArray[np.float64]
    up: NDArray[np.float64]
    time: NDArray[np.float64]
    q: NDArray[np.float64]
    velocity: NDArray[np.float64]
    direction: NDArray[np.float64]
    at_cruise: NDArray[np.bool_]
    torque: NDArray[np.float64]
    gravity_torque: NDArray[np.float64]
    speed: float
    sample_rate: float
    acceleration: NDArray[np.float64] = field(default_factory=_no_samples)

    def __post_init__(self) -> None:
        for name in (
            "configuration",
            "up",
            "time",
            "q",
            "velocity",
            "direction",
            "torque",
            "gravity_torque",
            "acceleration",
        ):
            object.__setattr__(self, name, np.array(getattr(self, name), dtype=np.float64))
        if self.acceleration.size == 0 and self.q.size > 0:
            object.__setattr__(self, "acceleration", np.zeros_like(self.q))
        object.__setattr__(self, "at_cruise", np.array(self.at_cruise, dtype=bool))
        super().__post_init__()

    @property
    def joint_positions(self) -> NDArray[np.float64]:
        """Angles of all joints at every sample, shape (m, n_joints), rad."""
        positions = np.tile(self.configuration, (self.q.size, 1))
        positions[:, self.joint] = self.q
        return positions

    def __repr__(self) -> str:
        lo, hi = np.degrees([self.q.min(), self.q.max()]) if self.q.size else (0.0, 0.0)
        return (
            f"SweepRecord(joint={self.joint}, samples={self.q.size}, "
            f"arc=[{lo:.1f}°, {hi:.1f}°], speed={np.degrees(self.speed):.2f}°/s, "
            f"sample_rate={self.sample_rate:g} Hz)"
        )


class _Profile(NamedTuple):
    """Samples of a forward-and-back motion (see :func:`_evaluate_profile`)."""

    time: NDArray[np.float64]
    q: NDArray[np.float64]
    velocity: NDArray[np.float64]
    acceleration: NDArray[np.float64]
    direction: NDArray[np.float64]
    at_cruise: NDArray[np.bool_]


class PassShape(NamedTuple):
    """Durations of one pass: speed-up phase, slow-down phase and the whole pass, s."""

    up_time: float
    down_time: float
    pass_time: float


def pass_shape(profile: SweepProfile, arc: float, speed: float, ramp_time: float) -> PassShape:
    """Durations of one pass of length `arc` (validated inputs, ``arc >= speed * ramp_time``).

    ``trapezoid`` and ``s-curve``: ramps of `ramp_time` at both ends, cruise between, so
    ``T = arc / speed + ramp_time``. ``varying``: a speed-up phase of ``2 arc / speed -
    ramp_time`` to the peak `speed`, then a slow-down of `ramp_time`; ``T = 2 arc / speed``.
    """
    if profile == "varying":
        total = 2 * arc / speed
        return PassShape(max(total - ramp_time, ramp_time), ramp_time, total)
    return PassShape(ramp_time, ramp_time, arc / speed + ramp_time)


def sample_times(
    total: float, sample_rate: float, jitter: float, rng: np.random.Generator | None
) -> NDArray[np.float64]:
    """Times ``k / sample_rate`` over ``[0, total]``, each moved by a clipped normal jitter."""
    # Guard against t_k landing a rounding error beyond the end.
    m = int(np.floor(total * sample_rate * (1 + 1e-12))) + 1
    t = np.arange(m) / sample_rate
    if jitter > 0 and rng is not None:
        limit = _JITTER_CLIP / sample_rate
        t = np.clip(t + np.clip(jitter * rng.standard_normal(m), -limit, limit), 0.0, total)
    return t


def _ramp(
    smooth: bool, elapsed: NDArray[np.float64], duration: float, speed: float
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Distance, speed and acceleration `elapsed` into a ramp from rest to `speed`.

    Linear: ``w = speed f``, ``s = speed t f / 2``, ``a = speed / duration`` with the fraction
    ``f = t / duration``. Smooth (cosine): ``w = speed (1 - cos(pi f)) / 2``,
    ``s = speed (t - duration sin(pi f) / pi) / 2``, ``a = pi speed sin(pi f) / (2 duration)``.
    The fraction enters instead of ``1 / duration`` so that a ramp far shorter than a sample
    period cannot overflow.
    """
    span = duration if duration > 0 else 1.0
    f = np.minimum(elapsed, span) / span
    if smooth:
        dist = 0.5 * speed * (elapsed - span * np.sin(np.pi * f) / np.pi)
        now = 0.5 * speed * (1.0 - np.cos(np.pi * f))
        acc = (0.5 * np.pi * speed / span) * np.sin(np.pi * f)
    else:
        dist = 0.5 * speed * elapsed * f
        now = speed * f
        acc = np.full_like(f, speed / span)
    return dist, now, acc


def peak_acceleration(profile: SweepProfile, speed: float, ramp_time: float) -> float:
    """Largest acceleration of a profile, rad/s² (0 for an instant trapezoid reversal)."""
    if ramp_time == 0:
        return 0.0
    with np.errstate(over="ignore"):
        return float(speed / ramp_time * (1.0 if profile == "trapezoid" else 0.5 * np.pi))


def evaluate_profile(
    profile: SweepProfile,
    start: float,
    stop: float,
    speed: float,
    ramp_time: float,
    cycles: int,
    t: NDArray[np.float64],
) -> _Profile:
    """Position, velocity and acceleration of `cycles` forward-and-back passes at times `t`.

    Each pass follows :func:`pass_shape`: a speed-up ramp from rest to `speed`, cruise (none for
    ``"varying"``) and a slow-down ramp to rest; linear ramps for ``"trapezoid"`` and cosine
    ramps (continuous acceleration, bounded jerk) otherwise. Inputs are validated.
    """
    arc = abs(stop - start)
    up_time, down_time, pass_time = pass_shape(profile, arc, speed, ramp_time)
    smooth = profile != "trapezoid"
    n_passes = 2 * cycles
    index = np.minimum(np.floor(t / pass_time).astype(np.int64), n_passes - 1)
    t_pass = np.clip(t - index * pass_time, 0.0, pass_time)  # time within the pass
    forward_sign = 1.0 if stop > start else -1.0
    direction = np.where(index % 2 == 0, forward_sign, -forward_sign)

    in_up = t_pass < up_time
    in_down = t_pass > pass_time - down_time
    left = pass_time - t_pass  # time to the end of the pass
    up_dist, up_speed, up_acc = _ramp(smooth, t_pass, up_time, speed)
    down_dist, down_speed, down_acc = _ramp(smooth, left, down_time, speed)
    dist = np.where(
        in_up,
        up_dist,
        np.where(in_down, arc - down_dist, 0.5 * speed * up_time + speed * (t_pass - up_time)),
    )
    speed_now = np.where(in_up, up_speed, np.where(in_down, down_speed, speed))
    # The speed grows on the way up and shrinks on the way down; the sign of the pass turns it
    # into a velocity and an acceleration.
    acc_now = np.where(in_up, up_acc, np.where(in_down, -down_acc, 0.0))
    if ramp_time == 0:
        acc_now = np.zeros_like(t)  # an instant reversal: a velocity step, no finite value
    q = np.where(index % 2 == 0, start + forward_sign * dist, stop - forward_sign * dist)
    at_cruise = ~(in_up | in_down) if profile != "varying" else np.zeros(t.shape, dtype=bool)
    return _Profile(t, q, direction * speed_now, direction * acc_now, direction, at_cruise)
