"""A controller's log of a session of single-joint sweeps, as plain numpy columns."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import check_array, check_positive, check_radians
from gravdir._results import Result
from gravdir.synthetic._base import ArmModel
from gravdir.synthetic._record import (
    MAX_CYCLES,
    Motion,
    check_jitter,
    check_motion,
    chunked,
    measure,
    pick_sensor,
)
from gravdir.synthetic._sweep import SweepProfile, evaluate_profile, sample_times
from gravdir.synthetic._validate import check_rng
from gravdir.synthetic.sensors import TorqueSensor

__all__ = ["ControllerLog", "controller_log"]

# Most samples of one log: a session of about 3 hours at 100 Hz.
MAX_LOG_SAMPLES = 1_000_000
# Most sweeps of one log.
MAX_SWEEPS = MAX_CYCLES
# Moves between sweeps: quintic blends at most this fast, rad/s and rad/s² (a cautious
# collaborative-arm jog).
MOVE_SPEED = 0.5
MOVE_ACCELERATION = 2.0
# Peaks of the quintic blend s(u) = 10u^3 - 15u^4 + 6u^5: max s' and max |s''|.
_BLEND_SPEED = 1.875
_BLEND_ACCELERATION = 10.0 / np.sqrt(3.0)


@dataclass(frozen=True, eq=False, repr=False)
class ControllerLog(Result):
    """A recorded session of single-joint sweeps, one row per sample (:func:`controller_log`).

    Attributes
    ----------
    time : ndarray, shape (m,)
        Timestamps from the start of the log, s (jittered when recorded with jitter).
    q : ndarray, shape (m, n)
        Joint angles, rad.
    velocity : ndarray, shape (m, n)
        Joint velocities, rad/s (the commanded profile's, exact).
    acceleration : ndarray, shape (m, n)
        Joint accelerations, rad/s² (exact; a real controller does not log them).
    torque : ndarray, shape (m, n)
        Measured joint torques, N·m, in gravdir's sign (the torque the actuator applies to the
        distal link about +axis): each joint's sensor model applied to its true torque.
    current : ndarray, shape (m, n)
        Motor currents, A: ``torque / drive_gain``.
    drive_gain : ndarray, shape (n,)
        Torque per ampere of each joint, N·m/A.
    gravity_torque : ndarray, shape (m, n)
        True holding torques, N·m: noise-free, friction-free, gain 1, without inertia.
    sweep_index : ndarray of int, shape (m,)
        Index of the sweep each sample belongs to, ``-1`` at rest and during the moves
        between sweeps.
    sweep_joint : ndarray of int, shape (k,)
        The joint each sweep moves (0-based).
    up : ndarray, shape (3,)
        The arm's true `up` in its base frame.
    sample_rate : float
        Nominal samples per second, Hz.
    """

    _units = {
        "time": "s", "q": "rad", "velocity": "rad/s", "acceleration": "rad/s²", "torque": "N·m",
        "current": "A", "drive_gain": "N·m/A", "gravity_torque": "N·m", "sweep_index": "",
        "sweep_joint": "", "up": "", "sample_rate": "Hz",
    }

    time: NDArray[np.float64]
    q: NDArray[np.float64]
    velocity: NDArray[np.float64]
    acceleration: NDArray[np.float64]
    torque: NDArray[np.float64]
    current: NDArray[np.float64]
    drive_gain: NDArray[np.float64]
    gravity_torque: NDArray[np.float64]
    sweep_index: NDArray[np.int64]
    sweep_joint: NDArray[np.int64]
    up: NDArray[np.float64]
    sample_rate: float

    def __repr__(self) -> str:
        duration = float(self.time[-1]) if self.time.size else 0.0
        return (
            f"ControllerLog(samples={self.time.size}, joints={self.q.shape[-1]}, "
            f"sweeps={self.sweep_joint.size}, duration={duration:.1f} s, "
            f"sample_rate={self.sample_rate:g} Hz)"
        )


def _blend(
    u: NDArray[np.float64], duration: float
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Quintic rest-to-rest blend: s(u), ds/dt, d2s/dt2 at the fractions `u` of `duration`."""
    s = u**3 * (10.0 - 15.0 * u + 6.0 * u**2)
    ds = 30.0 * u**2 * (1.0 - u) ** 2 / duration
    dds = 60.0 * u * (1.0 - u) * (1.0 - 2.0 * u) / duration**2
    return s, ds, dds


def _check_sweeps(
    arm: ArmModel, joints: ArrayLike, configurations: ArrayLike, arcs: ArrayLike, speeds: ArrayLike
) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    n = arm.n_joints
    j = check_array(joints, "joints")
    if j.ndim != 1 or not 1 <= j.size <= MAX_SWEEPS:
        raise ValueError(
            f"Expected `joints` to have shape (k,) with 1 <= k <= {MAX_SWEEPS}, got {j.shape}."
        )
    k = j.size
    if np.any(j != np.round(j)) or np.any(j < 0) or np.any(j > n - 1):
        raise ValueError(f"Expected `joints` to be integers from 0 to {n - 1}, got {j.tolist()}.")
    config = check_array(configurations, "configurations")
    if config.shape != (k, n):
        raise ValueError(f"Expected `configurations` to have shape ({k}, {n}), got {config.shape}.")
    check_radians(config, "configurations")
    arc = check_array(arcs, "arcs")
    if arc.shape != (k, 2):
        raise ValueError(f"Expected `arcs` to have shape ({k}, 2), got {arc.shape}.")
    speed = check_array(speeds, "speeds")
    if speed.shape not in ((), (k,)):
        raise ValueError(f"Expected `speeds` to have shape () or ({k},), got {speed.shape}.")
    return j.astype(np.int64), config, arc, np.broadcast_to(speed, (k,))


def controller_log(
    arm: ArmModel,
    joints: ArrayLike,
    configurations: ArrayLike,
    arcs: ArrayLike,
    speeds: ArrayLike,
    sensors: Sequence[TorqueSensor] | None = None,
    rng: np.random.Generator | None = None,
    *,
    sample_rate: float = 100.0,
    profile: SweepProfile = "trapezoid",
    ramp_time: float | None = None,
    acceleration: float | None = None,
    cycles: int = 1,
    inertial: bool = True,
    time_jitter: float = 0.0,
    drive_gain: ArrayLike | None = None,
    rest_time: float = 0.5,
) -> ControllerLog:
    """Log of a session of single-joint sweeps as a controller records it: every joint, sample.

    Parameters
    ----------
    arm : SyntheticArm or SyntheticUrdfArm
        The arm (with its true `up`).
    joints : array_like of int, shape (k,)
        The joint each sweep moves, 0-based; 1 to 1000 sweeps.
    configurations : array_like, shape (k, n)
        Angles at which the other joints are held during each sweep, rad, within ±4π (the
        entry of the swept joint is ignored).
    arcs : array_like, shape (k, 2)
        ``(start, stop)`` of each sweep, rad, as for :meth:`SyntheticArm.sweep`.
    speeds : array_like, shape (k,) or ()
        Cruise (peak) speed of each sweep, rad/s, positive.
    sensors : sequence of TorqueSensor, optional
        One sensor per joint (as from :func:`~gravdir.synthetic.sensors.realistic_sensors`).
        Default: ideal sensors.
    rng : numpy.random.Generator, optional
        Source of the sensor noise and timestamp jitter; required when either is present.
    sample_rate : float, optional
        Samples per second, Hz (default 100, the rate of common controller logs).
    profile, ramp_time, acceleration, cycles, time_jitter
        As for :meth:`SyntheticArm.sweep`, the same for every sweep.
    inertial : bool, optional
        Whether the torques include the inertial torques of the motion (default True; False
        logs the quasi-static holding torques).
    drive_gain : array_like, shape (n,), optional
        Torque per ampere of each joint, N·m/A, positive; the log's `current` is
        ``torque / drive_gain``. Default ones.
    rest_time : float, optional
        Time the arm stands still before each sweep and at the end, s, non-negative
        (default 0.5).

    Returns
    -------
    ControllerLog
        Columns ``time`` (m,), ``q``, ``velocity``, ``acceleration``, ``torque``,
        ``current``, ``gravity_torque`` (m, n) and ``sweep_index`` (m,), in SI units.

    Raises
    ------
    ValueError
        If `arm` is not a synthetic arm; a shape, count or value is out of range (each sweep
        is checked as by :meth:`SyntheticArm.sweep`, the error naming the sweep); `sensors`
        is not ``n`` sensors; `rng` is missing while a sensor is noisy or the times jitter;
        the log would hold more than 1,000,000 samples; or a torque overflows.

    Notes
    -----
    The session starts at rest in the first sweep's start configuration. Each sweep is a
    rest of `rest_time`, then :meth:`SyntheticArm.sweep`'s forward-and-back motion of one
    joint; between sweeps every joint moves from where the last sweep ended to the next
    sweep's start configuration along a quintic rest-to-rest blend
    :math:`q_a + (q_b - q_a)(10u^3 - 15u^4 + 6u^5)` lasting
    :math:`\\max(1.875 D / 0.5, \\sqrt{5.774 D / 2})` s for the largest joint distance
    :math:`D` (at most 0.5 rad/s and 2 rad/s²). One clock samples the whole session at
    `sample_rate`, with the timestamp jitter of :meth:`SyntheticArm.sweep`.

    The true torque is :meth:`SyntheticArm.inverse_dynamics` of the motion (in a single-joint
    sweep, :math:`M_{jj}\\ddot q_j + \\tau_{g,j}` on the swept joint and the coupling
    :math:`M_{ij}\\ddot q_j` plus centripetal terms on the held joints), or the holding torque
    when not `inertial`. Each joint's sensor applies its model to that rigid-body torque and
    the joint's velocity (:meth:`TorqueSensor.measure`; ``docs/synthetic.md``).

    Examples
    --------
    >>> from gravdir.synthetic import ur5_arm
    >>> arm = ur5_arm()
    >>> config = np.array([0.0, -1.5, 1.0, -1.0, 0.5, 0.0])
    >>> log = controller_log(arm, [0, 1], [config, config], [[-1.0, 1.0], [-2.0, -1.0]], 0.5)
    >>> log.q.shape[1], sorted(set(log.sweep_index.tolist()))
    (6, [-1, 0, 1])
    """
    if not isinstance(arm, ArmModel):
        raise ValueError(
            f"Expected `arm` to be a SyntheticArm or SyntheticUrdfArm, got {type(arm).__name__}."
        )
    n = arm.n_joints
    joint_arr, config, arc, speed = _check_sweeps(arm, joints, configurations, arcs, speeds)
    motions: list[Motion] = []
    for s in range(joint_arr.size):
        try:
            motions.append(
                check_motion(
                    arc[s, 0],
                    arc[s, 1],
                    speed[s],
                    ramp_time,
                    cycles,
                    profile,
                    acceleration,
                    inertial,
                )
            )
        except ValueError as exc:
            raise ValueError(f"In sweep {s} (`arcs[{s}]`, `speeds[{s}]`): {exc}") from None
    fs = check_positive(sample_rate, "sample_rate")
    jitter = check_jitter(time_jitter, fs)
    rest = check_positive(rest_time, "rest_time", allow_zero=True)
    gains = np.ones(n) if drive_gain is None else check_array(drive_gain, "drive_gain")
    if gains.shape != (n,) or np.any(gains <= 0):
        raise ValueError(
            f"Expected `drive_gain` to have shape ({n},) and be positive, got {gains.tolist()}."
        )
    if sensors is not None and (isinstance(sensors, TorqueSensor) or len(sensors) != n):
        raise ValueError(f"Expected `sensors` to be a sequence of {n} TorqueSensor or None.")
    chosen = [pick_sensor(sensors, i, n) for i in range(n)]
    if rng is None and (jitter > 0 or any(s.noise_std > 0 for s in chosen)):
        raise ValueError(
            "Expected `rng` (a numpy.random.Generator) because a sensor's `noise_std` > 0 or "
            "`time_jitter` > 0, got None."
        )
    if rng is not None:
        check_rng(rng)

    starts = config.copy()
    starts[np.arange(joint_arr.size), joint_arr] = arc[:, 0]
    segments, clock = _timeline(starts, motions, rest)
    with np.errstate(over="ignore", under="ignore"):
        samples = np.floor(clock * fs * (1 + 1e-12)) + 1
    if not samples <= MAX_LOG_SAMPLES:
        raise ValueError(
            f"Expected a log of at most {MAX_LOG_SAMPLES:,} samples, got {samples:.4g} "
            f"({clock:.4g} s at `sample_rate` {fs:g} Hz): lower `sample_rate`, `rest_time` "
            "or `cycles`, or raise `speeds`."
        )
    with np.errstate(under="ignore"):
        t = sample_times(clock, fs, jitter, rng)
    q, qd, qdd, index = _trajectory(t, segments, starts, motions, joint_arr)
    holding = chunked(arm.gravity_torque, q)
    true = chunked(arm.inverse_dynamics, q, qd, qdd) if inertial else holding
    measured = np.column_stack(
        [measure(chosen[i], t, q[:, i], qd[:, i], true[:, i], rng, "sensors") for i in range(n)]
    )
    with np.errstate(over="ignore", under="ignore"):
        current = measured / gains
    if not np.all(np.isfinite(current)):
        raise ValueError("Expected `drive_gain` to give currents within the float range.")
    return ControllerLog(
        time=t,
        q=q,
        velocity=qd,
        acceleration=qdd,
        torque=measured,
        current=current,
        drive_gain=np.array(gains),
        gravity_torque=holding,
        sweep_index=index,
        sweep_joint=joint_arr,
        up=np.array(arm.up),
        sample_rate=fs,
    )


# One segment of the session: (start time, duration, kind, sweep index).
_Segment = tuple[float, float, str, int]


def _timeline(
    starts: NDArray[np.float64], motions: Sequence[Motion], rest: float
) -> tuple[list[_Segment], float]:
    """The session's segments (a move to each sweep's start configuration `starts`, a rest, the
    sweep; a rest at the end) and its length, s."""
    segments: list[_Segment] = []
    clock = 0.0
    with np.errstate(over="ignore", under="ignore"):
        for s, motion in enumerate(motions):
            if s > 0:
                distance = float(np.max(np.abs(starts[s] - starts[s - 1])))
                if distance > 0:
                    blend = max(
                        _BLEND_SPEED * distance / MOVE_SPEED,
                        float(np.sqrt(_BLEND_ACCELERATION * distance / MOVE_ACCELERATION)),
                    )
                    segments.append((clock, blend, "move", s))
                    clock += blend
            segments.append((clock, rest, "rest", s))
            clock += rest
            duration = 2 * motion.cycles * motion.pass_time
            segments.append((clock, duration, "sweep", s))
            clock += duration
        segments.append((clock, rest, "rest", len(motions) - 1))
        clock += rest
    return segments, clock


def _trajectory(
    t: NDArray[np.float64],
    segments: Sequence[_Segment],
    starts: NDArray[np.float64],
    motions: Sequence[Motion],
    joint_arr: NDArray[np.int64],
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.int64]]:
    """Joint angles, velocities and accelerations (m, n) at the times `t`, and the sweep each
    sample belongs to (-1 outside sweeps)."""
    m, n = t.size, starts.shape[1]
    q, qd, qdd = np.empty((m, n)), np.zeros((m, n)), np.zeros((m, n))
    index = np.full(m, -1, dtype=np.int64)
    with np.errstate(under="ignore"):
        for number, (t0, length, kind, s) in enumerate(segments):
            last = number == len(segments) - 1
            mask = (t >= t0) & ((t <= t0 + length) if last else (t < t0 + length))
            if kind == "move":
                u = np.clip((t[mask] - t0) / length, 0.0, 1.0)
                shape, rate, curve = _blend(u, length)
                step = starts[s] - starts[s - 1]
                q[mask] = starts[s - 1] + shape[:, None] * step
                qd[mask] = rate[:, None] * step
                qdd[mask] = curve[:, None] * step
            elif kind == "rest":
                q[mask] = starts[s]  # before sweep s, or back at its start after the last
            else:
                mo, j = motions[s], int(joint_arr[s])
                path = evaluate_profile(
                    mo.profile, mo.start, mo.stop, mo.speed, mo.ramp_time, mo.cycles, t[mask] - t0
                )
                q[mask] = starts[s]
                q[mask, j] = path.q
                qd[mask, j] = path.velocity
                qdd[mask, j] = path.acceleration
                index[mask] = s
    return q, qd, qdd, index
