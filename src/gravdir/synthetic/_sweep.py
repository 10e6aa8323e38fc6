"""The recorded single-joint sweep and its trapezoidal velocity profile."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from gravdir._results import Result

__all__ = ["SweepRecord"]


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
        Sample times from the start of the motion, s.
    q : ndarray, shape (m,)
        Angle of the swept joint, rad.
    velocity : ndarray, shape (m,)
        Its velocity, rad/s (trapezoidal profile).
    direction : ndarray, shape (m,)
        ``+1.0`` on passes from `start` toward `stop`, ``-1.0`` on passes back, including the
        ramp samples where the velocity is near zero.
    at_cruise : ndarray of bool, shape (m,)
        True where the joint moves at the cruise speed (outside the acceleration ramps).
    torque : ndarray, shape (m,)
        Measured torque of the swept joint, N·m (sensor model applied).
    gravity_torque : ndarray, shape (m,)
        True holding torque of the swept joint, N·m: noise-free, friction-free, gain 1.
    speed : float
        Cruise speed, rad/s.
    sample_rate : float
        Samples per second, Hz.

    Notes
    -----
    A result: its arrays are private read-only copies, ``==`` compares values, and
    ``to_dict()`` gives plain Python types.
    """

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
        ):
            object.__setattr__(self, name, np.array(getattr(self, name), dtype=np.float64))
        object.__setattr__(self, "at_cruise", np.array(self.at_cruise, dtype=bool))
        super().__post_init__()

    @property
    def joint_positions(self) -> NDArray[np.float64]:
        """Angles of all joints at every sample, shape (m, n_joints), rad."""
        positions = np.tile(self.configuration, (self.q.size, 1))
        positions[:, self.joint] = self.q
        return positions

    def __repr__(self) -> str:
        lo, hi = np.degrees([self.q.min(), self.q.max()])
        return (
            f"SweepRecord(joint={self.joint}, samples={self.q.size}, "
            f"arc=[{lo:.1f}°, {hi:.1f}°], speed={np.degrees(self.speed):.2f}°/s, "
            f"sample_rate={self.sample_rate:g} Hz)"
        )


class _Profile(NamedTuple):
    """Samples of a forward-and-back trapezoidal motion (see :func:`_trapezoid_profile`)."""

    time: NDArray[np.float64]
    q: NDArray[np.float64]
    velocity: NDArray[np.float64]
    direction: NDArray[np.float64]
    at_cruise: NDArray[np.bool_]


def _trapezoid_profile(
    start: float, stop: float, speed: float, sample_rate: float, ramp_time: float, cycles: int
) -> _Profile:
    """Sample `cycles` forward-and-back passes between `start` and `stop` (validated inputs).

    Each pass of length ``D = |stop - start|`` takes ``T = D / speed + ramp_time``: a linear
    velocity ramp from 0 to `speed` over `ramp_time`, cruise, and a linear ramp back to 0.
    Samples are taken at ``t_k = k / sample_rate`` for ``0 <= t_k <= 2 cycles T``.
    """
    arc = abs(stop - start)
    pass_time = arc / speed + ramp_time
    n_passes = 2 * cycles
    total = n_passes * pass_time
    # Guard against t_k landing a rounding error beyond the last pass.
    m = int(np.floor(total * sample_rate * (1 + 1e-12))) + 1
    t = np.arange(m) / sample_rate
    index = np.minimum(np.floor(t / pass_time).astype(np.int64), n_passes - 1)
    t_pass = np.clip(t - index * pass_time, 0.0, pass_time)  # time within the pass
    forward_sign = 1.0 if stop > start else -1.0
    direction = np.where(index % 2 == 0, forward_sign, -forward_sign)

    # Distance along the pass and speed magnitude (trapezoidal profile). The acceleration
    # speed / ramp_time enters as the fraction of the ramp done, in [0, 1], so that a ramp far
    # shorter than a sample period cannot overflow: 0.5 a t^2 = 0.5 speed t (t / ramp_time).
    # With no ramp the ramp masks are empty and the fractions are never used.
    ramp = ramp_time if ramp_time > 0 else 1.0
    in_up = t_pass < ramp_time
    in_down = t_pass > pass_time - ramp_time
    left = pass_time - t_pass  # time to the end of the pass
    up_fraction = np.minimum(t_pass, ramp) / ramp
    down_fraction = np.minimum(left, ramp) / ramp
    dist = np.where(
        in_up,
        0.5 * speed * t_pass * up_fraction,
        np.where(
            in_down,
            arc - 0.5 * speed * left * down_fraction,
            0.5 * speed * ramp_time + speed * (t_pass - ramp_time),
        ),
    )
    speed_now = np.where(
        in_up, speed * up_fraction, np.where(in_down, speed * down_fraction, speed)
    )
    q = np.where(index % 2 == 0, start + forward_sign * dist, stop - forward_sign * dist)
    return _Profile(t, q, direction * speed_now, direction, ~(in_up | in_down))
