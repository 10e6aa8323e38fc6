"""Recording a single-joint sweep of a synthetic arm: argument checks, profile, sensor."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import NamedTuple, Protocol

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import (
    MAX_JOINT_ANGLE,
    check_angle_span,
    check_count,
    check_option,
    check_per_joint,
    check_positive,
    check_radians,
)
from gravdir.synthetic._noise import correlated_noise
from gravdir.synthetic._sweep import (
    MAX_JITTER_FRACTION,
    PROFILES,
    SweepProfile,
    SweepRecord,
    evaluate_profile,
    pass_shape,
    peak_acceleration,
    sample_times,
)
from gravdir.synthetic._validate import check_rng, real_scalar
from gravdir.synthetic.sensors import TorqueSensor

# Most samples one call of `sweep` records (a minute at 16 kHz).
MAX_SWEEP_SAMPLES = 1_000_000

# Most forward-and-back cycles of one sweep.
MAX_CYCLES = 1000

# Ramp of a sweep when neither `ramp_time` nor `acceleration` is given, s.
DEFAULT_RAMP_TIME = 0.2


# Samples per block when an arm's torques are computed over a long record: the per-sample
# arrays of an n-joint arm hold O(n^2) floats, so blocks keep the memory bounded.
CHUNK = 8192


def chunked(
    func: Callable[..., NDArray[np.float64]], *arrays: NDArray[np.float64]
) -> NDArray[np.float64]:
    """``func(*arrays)`` evaluated block by block along the first axis, concatenated."""
    m = arrays[0].shape[0]
    if m <= CHUNK:
        return func(*arrays)
    return np.concatenate(
        [func(*(a[i : i + CHUNK] for a in arrays)) for i in range(0, m, CHUNK)], axis=0
    )


class _Arm(Protocol):
    @property
    def n_joints(self) -> int: ...

    up: NDArray[np.float64]

    def gravity_torque(self, q: ArrayLike) -> NDArray[np.float64]: ...

    def joint_inertia(self, q: ArrayLike) -> NDArray[np.float64]: ...


class Motion(NamedTuple):
    """Validated shape of a sweep's passes."""

    start: float
    stop: float
    speed: float
    ramp_time: float
    cycles: int
    profile: SweepProfile
    pass_time: float


def check_motion(
    start: float,
    stop: float,
    speed: float,
    ramp_time: float | None,
    cycles: int,
    profile: str,
    acceleration: float | None,
    inertial: bool,
) -> Motion:
    """Check the arc, speed, ramp and profile of a sweep; derive the ramp from `acceleration`."""
    start_f = real_scalar(start, "start")
    stop_f = real_scalar(stop, "stop")
    with np.errstate(over="ignore"):  # a span beyond the float range is refused below
        span = stop_f - start_f
    # A sweep spans at most two turns, the limit of its start and stop positions.
    check_angle_span(span, "stop` - `start", limit=MAX_JOINT_ANGLE)
    check_radians(start_f, "start")
    check_radians(stop_f, "stop")
    if start_f == stop_f:
        raise ValueError(f"Expected `stop` to differ from `start`, got both {start_f!r}.")
    v = check_positive(speed, "speed")
    kind: SweepProfile = check_option(profile, "profile", PROFILES)
    if not isinstance(inertial, bool | np.bool_):
        raise ValueError(f"Expected `inertial` to be True or False, got {inertial!r}.")
    if ramp_time is not None and acceleration is not None:
        raise ValueError(
            "Expected either `ramp_time` or `acceleration` (the ramp follows from either), "
            "got both."
        )
    if acceleration is not None:
        a = check_positive(acceleration, "acceleration")
        with np.errstate(over="ignore", under="ignore"):
            ramp = v / a if kind == "trapezoid" else 0.5 * np.pi * v / a
        if not np.isfinite(ramp):
            raise ValueError(
                f"Expected `speed` / `acceleration` within the float range, got {v:g} / {a:g}."
            )
    elif ramp_time is None:
        ramp = DEFAULT_RAMP_TIME
    else:
        ramp = check_positive(ramp_time, "ramp_time", allow_zero=True)
    if ramp == 0 and (kind != "trapezoid" or inertial):
        raise ValueError(
            f"Expected a positive `ramp_time` for profile {kind!r}"
            + (" with `inertial`=True" if inertial else "")
            + ", got 0 (an instantaneous reversal has no finite acceleration)."
        )
    if not np.isfinite(peak_acceleration(kind, v, ramp)):
        raise ValueError(
            f"Expected `speed` / `ramp_time` to give a finite acceleration, got {v:g} / {ramp:g}."
        )
    n_cycles = check_count(cycles, "cycles", maximum=MAX_CYCLES)
    arc = abs(stop_f - start_f)
    with np.errstate(over="ignore", under="ignore"):
        ramp_arc = v * ramp
    if arc < ramp_arc:
        raise ValueError(
            f"Expected the arc |`stop` - `start`| = {arc:.6g} rad to be at least "
            f"`speed` * `ramp_time` = {ramp_arc:.6g} rad so each pass reaches its speed"
            + (" (the ramp follows from `acceleration`)." if acceleration is not None else ".")
        )
    with np.errstate(over="ignore", under="ignore"):
        pass_time = pass_shape(kind, arc, v, ramp).pass_time
    return Motion(start_f, stop_f, v, ramp, n_cycles, kind, pass_time)


def check_jitter(time_jitter: float, sample_rate: float) -> float:
    jitter = check_positive(time_jitter, "time_jitter", allow_zero=True)
    if jitter > MAX_JITTER_FRACTION / sample_rate:
        raise ValueError(
            f"Expected `time_jitter` at most a quarter of the sample period "
            f"({MAX_JITTER_FRACTION / sample_rate:.3g} s), got {jitter:.3g} s."
        )
    return jitter


def pick_sensor(
    sensor: TorqueSensor | Sequence[TorqueSensor] | None, joint: int, n: int
) -> TorqueSensor:
    if sensor is None:
        return TorqueSensor()
    if isinstance(sensor, TorqueSensor):
        return sensor
    if isinstance(sensor, Sequence):
        if len(sensor) != n:
            raise ValueError(
                f"Expected `sensor` to be a TorqueSensor or a sequence of {n}, "
                f"got a sequence of {len(sensor)}."
            )
        for j, entry in enumerate(sensor):
            if not isinstance(entry, TorqueSensor):
                raise ValueError(
                    f"Expected `sensor[{j}]` to be a TorqueSensor, got {type(entry).__name__}."
                )
        return sensor[joint]
    raise ValueError(
        f"Expected `sensor` to be a TorqueSensor or a sequence of them, "
        f"got {type(sensor).__name__}."
    )


def measure(
    sensor: TorqueSensor,
    time: NDArray[np.float64],
    q: NDArray[np.float64],
    velocity: NDArray[np.float64],
    torque: NDArray[np.float64],
    rng: np.random.Generator | None,
    name: str = "sensor",
) -> NDArray[np.float64]:
    """The sensor's reading at the sample times `time` of the rigid-body torque `torque` (its
    load friction grows with it); noise correlated in time is drawn along `time`."""
    correlated = sensor.noise_std > 0 and sensor.noise_correlation_time > 0
    try:
        if not correlated:
            return sensor.measure(q, velocity, torque, rng)
        clean = dataclasses.replace(sensor, noise_std=0.0).measure(q, velocity, torque)
    except ValueError:  # the arguments are checked: only an overflow of a reading is left
        raise ValueError(
            f"Expected `{name}` to give readings within the float range, got an overflow (its "
            "gain, friction or ripple coefficients are too large)."
        ) from None
    if rng is None:
        raise ValueError("Expected `rng` (a numpy.random.Generator) because `noise_std` > 0.")
    noise = correlated_noise(time, sensor.noise_std, sensor.noise_correlation_time, rng=rng)
    with np.errstate(over="ignore"):
        out: NDArray[np.float64] = clean + noise
    if not np.all(np.isfinite(out)):
        raise ValueError(
            f"Expected `{name}` to give readings within the float range, got an overflow."
        )
    return out


def record_sweep(
    arm: _Arm,
    joint: int,
    configuration: ArrayLike,
    start: float,
    stop: float,
    speed: float,
    sample_rate: float,
    sensor: TorqueSensor | Sequence[TorqueSensor] | None,
    rng: np.random.Generator | None,
    *,
    ramp_time: float | None,
    cycles: int,
    profile: SweepProfile,
    acceleration: float | None,
    inertial: bool,
    time_jitter: float,
) -> SweepRecord:
    """The body of ``arm.sweep``: check every argument, then sample, model and measure."""
    n = arm.n_joints
    joint = check_count(joint, "joint", minimum=0, maximum=n - 1)
    config = check_per_joint(configuration, "configuration", n, scalar=False, sign="any")
    check_radians(config, "configuration")
    motion = check_motion(start, stop, speed, ramp_time, cycles, profile, acceleration, inertial)
    fs = check_positive(sample_rate, "sample_rate")
    jitter = check_jitter(time_jitter, fs)
    with np.errstate(over="ignore", under="ignore"):
        total = 2 * motion.cycles * motion.pass_time
        samples = np.floor(total * fs * (1 + 1e-12)) + 1  # as sampled
    if not samples <= MAX_SWEEP_SAMPLES:
        raise ValueError(
            f"Expected a sweep of at most {MAX_SWEEP_SAMPLES:,} samples, got {samples:.4g} "
            f"(`sample_rate` {fs:g} Hz for {2 * motion.cycles} passes of "
            f"{motion.pass_time:.4g} s): lower `sample_rate` or `cycles`, or raise `speed`."
        )
    chosen = pick_sensor(sensor, joint, n)
    if chosen.noise_std > 0 and rng is None:
        raise ValueError(
            "Expected `rng` (a numpy.random.Generator) because the sensor's `noise_std` > 0, "
            "got None."
        )
    if jitter > 0 and rng is None:
        raise ValueError(
            "Expected `rng` (a numpy.random.Generator) because `time_jitter` > 0, got None."
        )
    if rng is not None:
        check_rng(rng)

    with np.errstate(under="ignore"):
        t = sample_times(total, fs, jitter, rng)
        profile_ = evaluate_profile(
            motion.profile,
            motion.start,
            motion.stop,
            motion.speed,
            motion.ramp_time,
            motion.cycles,
            t,
        )
    positions = np.tile(config, (profile_.q.size, 1))
    positions[:, joint] = profile_.q
    holding = chunked(arm.gravity_torque, positions)[:, joint]
    inertial_torque = np.zeros_like(holding)
    if inertial:
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            inertia = chunked(arm.joint_inertia, positions)[:, joint]
            inertial_torque = inertia * profile_.acceleration
        if not np.all(np.isfinite(inertial_torque)):
            raise ValueError(
                "Expected `speed` and `ramp_time` (or `acceleration`) to give inertial torques "
                "within the float range, got an overflow."
            )
    with np.errstate(over="ignore", under="ignore"):
        rigid = holding + inertial_torque
    measured = measure(chosen, profile_.time, profile_.q, profile_.velocity, rigid, rng)
    config_out = config.copy()
    config_out[joint] = motion.start
    return SweepRecord(
        joint=joint,
        configuration=config_out,
        up=arm.up,
        time=profile_.time,
        q=profile_.q,
        velocity=profile_.velocity,
        direction=profile_.direction,
        at_cruise=profile_.at_cruise,
        torque=measured,
        gravity_torque=holding,
        speed=motion.speed,
        sample_rate=fs,
        acceleration=profile_.acceleration,
    )
