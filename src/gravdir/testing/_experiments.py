"""Strategies for whole experiments: joint sweeps, touch sets, harmonic drives, friction joints."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from hypothesis import assume
from hypothesis import strategies as st
from numpy.typing import NDArray

from gravdir._checks import check_count, check_positive
from gravdir._results import Result
from gravdir.kinematics import SerialChain, chain_from_dh
from gravdir.synthetic import (
    HarmonicDriveJoint,
    SweepRecord,
    SyntheticArm,
    SyntheticFrictionJoint,
    SyntheticTouches,
    TorqueSensor,
    touch_contacts,
)
from gravdir.testing._world import _strategy, arms, sensor_errors, ups

__all__ = [
    "SweepExperiment",
    "friction_joints",
    "harmonic_drive_joints",
    "sweep_experiments",
    "touch_sets",
]

_SEEDS = st.integers(0, 2**32 - 1)
# Sweep speed and sample rate of the drawn experiments: a collaborative arm's slow sweep.
_SPEED, _RATE, _ARC = 0.5, 100.0, 2.0


@dataclass(frozen=True, eq=False, repr=False)
class SweepExperiment(Result):
    """Sweeps of one joint at several positions of J1, with the arm and sensors behind them.

    Attributes
    ----------
    arm : SyntheticArm
        The arm: DH table, masses and the true `up` (``arm.up``).
    sensors : tuple of TorqueSensor
        The true sensor of every joint (gain, offset, friction, ripple, noise level).
    joint : int
        The swept joint, 0-based (1: J2).
    configurations : ndarray, shape (k, n)
        Joint angles of each sweep, rad, with entry `joint` at the sweep's first sample: the
        configuration :func:`gravdir.general.joint_sweep_from_chain` takes.
    records : tuple of SweepRecord
        The recorded sweeps (angles, velocities, measured and true torques).
    seed : int
        Seed of the sensor noise of `records`.

    Notes
    -----
    The sweeps differ only in J1, by 90° and 180° (three sweeps) or 90° (two).
    :meth:`with_noise` records the same sweeps of the same arm with other noise, for checks
    over repeated draws.
    """

    arm: SyntheticArm
    sensors: tuple[TorqueSensor, ...]
    joint: int
    configurations: NDArray[np.float64]
    records: tuple[SweepRecord, ...]
    seed: int

    _units: ClassVar[Mapping[str, str]] = {
        "arm": "",
        "sensors": "",
        "joint": "",
        "configurations": "rad",
        "records": "",
        "seed": "",
    }

    def __repr__(self) -> str:
        samples = sum(int(r.q.size) for r in self.records)
        return (
            f"SweepExperiment(arm={self.arm!r}, joint={self.joint}, sweeps={len(self.records)}, "
            f"samples={samples}, seed={self.seed})"
        )

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """The short ``repr`` in IPython and in hypothesis's reports, not every sample."""
        printer.text(repr(self))

    @property
    def chain(self) -> SerialChain:
        """The arm's kinematics, :func:`gravdir.kinematics.chain_from_dh` of its DH table."""
        return chain_from_dh(*np.asarray(self.arm.dh).T)

    def with_noise(self, seed: int) -> SweepExperiment:
        """The same sweeps of the same arm and sensors recorded with the noise of `seed`.

        Parameters
        ----------
        seed : int
            Seed of the new noise, non-negative.

        Returns
        -------
        SweepExperiment
            Equal to this one but for `records` and `seed`.

        Raises
        ------
        ValueError
            If `seed` is not a non-negative int.

        Examples
        --------
        >>> from hypothesis import Phase, given, settings
        >>> @settings(max_examples=1, derandomize=True, database=None, phases=[Phase.generate])
        ... @given(sweep_experiments())
        ... def check(exp):
        ...     again = exp.with_noise(exp.seed)
        ...     assert np.array_equal(again.records[0].torque, exp.records[0].torque)
        >>> check()
        """
        s = check_count(seed, "seed", minimum=0, maximum=2**63 - 1)
        return _record(self.arm, self.sensors, self.joint, self.configurations, s)


def _record(
    arm: SyntheticArm,
    sensors: tuple[TorqueSensor, ...],
    joint: int,
    configurations: NDArray[np.float64],
    seed: int,
) -> SweepExperiment:
    rng = np.random.default_rng(seed)
    configs = np.array(configurations, dtype=np.float64)
    records = []
    for config in configs:
        start = float(config[joint])
        records.append(arm.sweep(joint, config, start, start + _ARC, _SPEED, _RATE, sensors, rng))
    return SweepExperiment(arm, tuple(sensors), joint, configs, tuple(records), seed)


def _amplitude(arm: SyntheticArm, joint: int, config: NDArray[np.float64]) -> float:
    """Amplitude of the gravity torque of `joint` swept at `config`, from q_j = 0 and pi/2."""
    q = np.array([config, config])
    q[0, joint], q[1, joint] = 0.0, math.pi / 2
    tau = arm.gravity_torque(q)[:, joint]
    return float(math.hypot(tau[0], tau[1]))


def _check_flag(flag: object, name: str) -> bool:
    if not isinstance(flag, bool):
        raise ValueError(f"Expected `{name}` to be True or False, got {flag!r}.")
    return flag


def _check_strategy(value: object, name: str) -> None:
    if value is not None and not isinstance(value, st.SearchStrategy):
        raise ValueError(
            f"Expected `{name}` to be a hypothesis strategy, got {type(value).__name__}."
        )


def sweep_experiments(
    arm: st.SearchStrategy[SyntheticArm] | None = None,
    *,
    n_sweeps: int = 3,
    noise: bool = True,
    ripple: bool = True,
    min_amplitude: float = 0.2,
) -> st.SearchStrategy[SweepExperiment]:
    """J2 swept at three (or two) positions of J1 on a mounted arm with realistic sensors.

    Parameters
    ----------
    arm : SearchStrategy of SyntheticArm, optional
        The arms (default :func:`arms` with ``transverse_j2=True``: random 3-7-joint, UR5-
        and iiwa-like arms on any mount). Arms whose J2 axis lies within 45° of J1's
        (``|sin alpha_0| < 0.7``) are rejected: pass ``arms(transverse_j2=True, ...)``.
    n_sweeps : {2, 3}, optional
        J2 sweeps at J1 = θ and θ + 90° (2: the two-sweep experiment, the fewest that can fix
        `up`) or also at θ + 180° (3, the default). Two sweeps leave no redundancy: on some
        arms they are nearly singular on an upright base (the J2 data then barely change with
        J1), where an estimate's linearised covariance no longer describes its error; three
        determine `up` on any mount.
    noise, ripple : bool, optional
        Whether the sensors add white noise and gear ripple (default both), as
        :func:`sensor_errors`.
    min_amplitude : float, optional
        Each sweep's gravity amplitude is at least this fraction of J2's peak gravity torque
        (default 0.2); draws below it are rejected (a sweep without gravity load carries no
        information about `up`).

    Returns
    -------
    hypothesis.strategies.SearchStrategy of SweepExperiment
        The records with the arm, sensors and noise seed that made them.

    Raises
    ------
    ValueError
        If `n_sweeps` is not 2 or 3, `min_amplitude` is not in [0, 1), `noise` or `ripple`
        is not a bool, or `arm` is not a hypothesis strategy (or None).

    Notes
    -----
    θ, the other joints' angles and the start of the swept arc are uniform over a turn; each
    sweep covers 2 rad forward and back at 0.5 rad/s, sampled at 100 Hz (about 900 samples).

    References
    ----------
    US 11,446,825 B2, FIG. 2: sweep a joint forward and backward with the others locked.

    Examples
    --------
    >>> from hypothesis import Phase, given, settings
    >>> @settings(max_examples=2, derandomize=True, database=None, phases=[Phase.generate])
    ... @given(sweep_experiments(n_sweeps=2))
    ... def check(exp):
    ...     assert len(exp.records) == 2 and exp.joint == 1
    ...     assert np.allclose(exp.records[0].up, exp.arm.up)
    >>> check()
    """
    count = check_count(n_sweeps, "n_sweeps", minimum=2, maximum=3)
    floor = check_positive(min_amplitude, "min_amplitude", allow_zero=True)
    if floor >= 1:
        raise ValueError(f"Expected `min_amplitude` in [0, 1), got {min_amplitude!r}.")
    _check_strategy(arm, "arm")
    flags = (_check_flag(noise, "noise"), _check_flag(ripple, "ripple"))
    return _strategy(_draw_experiment, arm, count, *flags, floor)  # type: ignore[no-any-return]


@st.composite
def _draw_experiment(
    draw: st.DrawFn,
    arm: st.SearchStrategy[SyntheticArm] | None,
    count: int,
    noise: bool,
    ripple: bool,
    floor: float,
) -> SweepExperiment:
    the_arm = draw(arms(transverse_j2=True) if arm is None else arm)
    if the_arm.n_joints < 2:
        raise ValueError(f"Expected arms of at least 2 joints, got {the_arm.n_joints}.")
    assume(abs(math.sin(float(the_arm.dh[0, 3]))) >= 0.7)  # J2 must cross J1 (see `arms`)
    peak = the_arm.peak_gravity_torque()
    sensors = draw(sensor_errors(peak, noise=noise, ripple=ripple))
    n = the_arm.n_joints
    angles = st.floats(-math.pi, math.pi)
    base = np.array([draw(angles) for _ in range(n)])
    offsets = (0.0, math.pi / 2, math.pi)[:count]
    configs = np.tile(base, (count, 1))
    configs[:, 0] = base[0] + np.array(offsets)
    for config in configs:
        assume(_amplitude(the_arm, 1, config) >= floor * float(peak[1]))
    return _record(the_arm, sensors, 1, configs, draw(_SEEDS))


def touch_sets(
    min_contacts: int = 6,
    max_contacts: int = 12,
    *,
    max_tilt: float = math.radians(10.0),
    max_noise: float = 1e-4,
) -> st.SearchStrategy[SyntheticTouches]:
    """Contacts of a tool tip with a plane, with the flange poses a controller reports.

    Parameters
    ----------
    min_contacts, max_contacts : int, optional
        Number of contacts, ``1 <= min_contacts <= max_contacts <= 10000`` (default 6 to 12:
        a tool-tip offset and the plane together need six).
    max_tilt : float, optional
        Largest tilt of the plane's normal (the true `up`) from base +z, rad (default 10°).
    max_noise : float, optional
        Largest standard deviation of the contact noise, m (default 0.1 mm; 0 for exact
        contacts).

    Returns
    -------
    hypothesis.strategies.SearchStrategy of SyntheticTouches
        :func:`gravdir.synthetic.touch_contacts` of a drawn seed, count, noise level and tool
        tip (within 0.2 m of the flange): poses, true contacts, plane, tool tip.

    Raises
    ------
    ValueError
        If a count is out of range, `max_noise` is negative or above 1 m, or `max_tilt` is
        negative or beyond pi ("degrees?").

    Examples
    --------
    >>> from hypothesis import find
    >>> data = find(touch_sets(max_noise=0.0), lambda d: True)
    >>> data.flange_poses.shape[-2:], float(np.max(np.abs(data.contacts @ data.up - data.offset)))
    ((4, 4), 0.0)
    """
    lo = check_count(min_contacts, "min_contacts", maximum=10_000)
    hi = check_count(max_contacts, "max_contacts", maximum=10_000)
    if lo > hi:
        raise ValueError(f"Expected `min_contacts` <= `max_contacts`, got {lo} and {hi}.")
    noise_top = check_positive(max_noise, "max_noise", allow_zero=True)
    if noise_top > 1.0:
        raise ValueError(f"Expected `max_noise` at most 1 m, got {noise_top:.3g}.")
    tilt = check_positive(max_tilt, "max_tilt", allow_zero=True)
    if tilt > math.pi:
        raise ValueError(f"Expected `max_tilt` in [0, pi] rad, got {tilt!r}: degrees?")
    return _strategy(_draw_touches, lo, hi, tilt, noise_top)  # type: ignore[no-any-return]


@st.composite
def _draw_touches(
    draw: st.DrawFn, lo: int, hi: int, max_tilt: float, noise_top: float
) -> SyntheticTouches:
    n = draw(st.integers(lo, hi))
    sigma = draw(st.floats(0.0, noise_top)) if noise_top > 0 else 0.0
    tip = np.array([draw(st.floats(-0.2, 0.2)) for _ in range(3)])
    rng = np.random.default_rng(draw(_SEEDS))
    return touch_contacts(rng, n, max_tilt=max_tilt, tool_tip=tip, noise_std=sigma)


def harmonic_drive_joints(
    *, noise: bool = True, up: st.SearchStrategy[NDArray[np.float64]] | None = None
) -> st.SearchStrategy[HarmonicDriveJoint]:
    """Harmonic-drive joints with a drawn transmission error, resonance and mounting.

    Parameters
    ----------
    noise : bool, optional
        Whether the accelerometer is noisy (150 µg/√Hz) or exact (default True).
    up : SearchStrategy of ndarray, optional
        Strategy of `up` in the joint frame (default :func:`ups`, any direction).

    Returns
    -------
    hypothesis.strategies.SearchStrategy of HarmonicDriveJoint
        The joint carries the truth: transmission-error orders 1, 2 and 4 of the motor angle
        and the tooth-passing order :math:`z_f/z_c` (amplitudes up to 60 µrad, any phase), the
        gear's teeth (:math:`z_c = z_f + 2`, :math:`z_f` from 100 to 320), a bending mode of
        5-30 Hz with damping 0.02-0.1.

    Raises
    ------
    ValueError
        If `noise` is not a bool or `up` is not a hypothesis strategy.

    Examples
    --------
    >>> from hypothesis import find
    >>> joint = find(harmonic_drive_joints(noise=False), lambda j: True)
    >>> joint.circular_spline_teeth - joint.flexspline_teeth, joint.noise_density
    (2, 0.0)
    """
    _check_strategy(up, "up")
    return _strategy(_draw_drive, _check_flag(noise, "noise"), up)  # type: ignore[no-any-return]


@st.composite
def _draw_drive(
    draw: st.DrawFn, noise: bool, up: st.SearchStrategy[NDArray[np.float64]] | None
) -> HarmonicDriveJoint:
    zf = draw(st.integers(50, 160)) * 2
    orders = np.array([1.0, 2.0, 4.0, zf / (zf + 2)])
    amplitudes = np.array([draw(st.floats(0.0, 6e-5)) for _ in orders])
    phases = np.array([draw(st.floats(-math.pi, math.pi)) for _ in orders])
    return HarmonicDriveJoint(
        flexspline_teeth=zf,
        circular_spline_teeth=zf + 2,
        te_orders=orders,
        te_amplitudes=amplitudes,
        te_phases=phases,
        natural_frequency=draw(st.floats(5.0, 30.0)),
        damping_ratio=draw(st.floats(0.02, 0.1)),
        up=draw(ups() if up is None else up),
        noise_density=1.47e-3 if noise else 0.0,
    )


def friction_joints(*, noise: bool = True) -> st.SearchStrategy[SyntheticFrictionJoint]:
    """Joints with asymmetric Stribeck, viscous and load-dependent friction around a Panda's.

    Parameters
    ----------
    noise : bool, optional
        Whether the torque is noisy (σ up to 0.05 N·m) or exact (default True).

    Returns
    -------
    hypothesis.strategies.SearchStrategy of SyntheticFrictionJoint
        The joint carries the truth: Coulomb levels 0.5-10 N·m per direction, breakaway 1-1.6
        times Coulomb, Stribeck velocities 0.01-0.1 rad/s, viscous 0.1-5 N·m·s/rad, exponents
        0.5-2.5, load coefficient up to 0.05, inertia 0.1-2 kg·m², sensor gain 0.85-1.15 and
        offset within ±1 N·m.

    Raises
    ------
    ValueError
        If `noise` is not a bool.

    Notes
    -----
    The ranges bracket :func:`gravdir.synthetic.panda_like_joint` and the 1-10 N·m Coulomb
    levels of geared arms of larger payload.

    Examples
    --------
    >>> from hypothesis import find
    >>> joint = find(friction_joints(), lambda j: j.static_positive > j.coulomb_positive)
    >>> bool(joint.static_positive <= 1.6 * joint.coulomb_positive)
    True
    """
    return _strategy(_draw_friction, _check_flag(noise, "noise"))  # type: ignore[no-any-return]


@st.composite
def _draw_friction(draw: st.DrawFn, noise: bool) -> SyntheticFrictionJoint:
    coulomb = [draw(st.floats(0.5, 10.0)) for _ in range(2)]
    static = [c * draw(st.floats(1.0, 1.6)) for c in coulomb]
    return SyntheticFrictionJoint(
        coulomb_positive=coulomb[0],
        coulomb_negative=coulomb[1],
        static_positive=static[0],
        static_negative=static[1],
        stribeck_velocity_positive=draw(st.floats(0.01, 0.1)),
        stribeck_velocity_negative=draw(st.floats(0.01, 0.1)),
        viscous_positive=draw(st.floats(0.1, 5.0)),
        viscous_negative=draw(st.floats(0.1, 5.0)),
        exponent_positive=draw(st.floats(0.5, 2.5)),
        exponent_negative=draw(st.floats(0.5, 2.5)),
        load_coefficient=draw(st.floats(0.0, 0.05)),
        inertia=draw(st.floats(0.1, 2.0)),
        offset=draw(st.floats(-1.0, 1.0)),
        gain=draw(st.floats(0.85, 1.15)),
        noise_std=draw(st.floats(0.0, 0.05)) if noise else 0.0,
    )
