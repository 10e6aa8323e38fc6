"""Planning: sweeps from a kinematic and rough mass model, and a search for the cheapest plan."""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import check_angle_span, check_direction, check_option, check_positive
from gravdir._constants import STANDARD_GRAVITY
from gravdir._options import LoadFriction
from gravdir._results import Result
from gravdir.errors import DegenerateGeometryError, GravdirWarning, InsufficientDataError
from gravdir.general._bound import (
    _LOAD_FRICTION_OPTIONS,
    MAX_SWEEP_SAMPLES,
    PlannedSweep,
    UpBound,
    _check_signal_to_noise,
    _samples_per_pass,
    crlb_up,
    sweep_samples,
)
from gravdir.general._model import (
    _chain_rotation,
    _check_configuration,
    _joint_index,
    _norm,
    moment_from_mass_model,
)
from gravdir.kinematics import SerialChain

__all__ = ["SweepPlan", "plan_sweeps", "planned_sweep_from_chain"]

# Caps on the search of plan_sweeps. 36 sweeps of one joint at 10° steps of the reference joint
# are a full turn, more than any plan needs. Each planned sweep costs about 1 ms and each
# planned sample about 0.2 µs, so 2000 sweeps and 20 million samples over all candidates keep
# a search within a few seconds; the default search plans 135 sweeps, and at 0.05 rad/s and
# 1 kHz about 11 million samples.
MAX_PLAN_SWEEPS = 36
MAX_PLAN_CANDIDATES = 1000
MAX_PLAN_SWEEPS_TOTAL = 2000
MAX_PLAN_SAMPLES = 20_000_000


def planned_sweep_from_chain(
    chain: SerialChain,
    q: ArrayLike,
    joint: int,
    arc: float,
    *,
    masses: ArrayLike,
    coms: ArrayLike,
    noise_std: float,
    speed: float = 0.5,
    sample_rate: float = 100.0,
    gain: float = 1.0,
    group: Hashable | None = None,
    gravity: float = STANDARD_GRAVITY,
) -> PlannedSweep:
    """A :class:`PlannedSweep` of `joint` centred at ``q[joint]``.

    Parameters
    ----------
    chain : SerialChain
        The arm's kinematics.
    q : array_like, shape (n,)
        Joint angles of the sweep, rad; entry `joint` is the middle of the arc and ``q_ref``.
    joint : int
        The joint to sweep, 0-based.
    arc : float
        Length of the swept arc, rad.
    masses, coms : array_like
        Mass model, as in :func:`moment_from_mass_model`.
    noise_std : float
        White torque noise of the joint, N·m.
    speed, sample_rate : float, optional
        As in :func:`sweep_samples` (defaults 0.5 rad/s and 100 Hz).
    gain : float, optional
        Torque gain of the joint assumed for the moment (default 1).
    group : hashable, optional
        As in :class:`JointSweep`.
    gravity : float, optional
        Gravitational acceleration, m/s² (default ``STANDARD_GRAVITY``, 9.80665).

    Returns
    -------
    PlannedSweep

    Raises
    ------
    ValueError
        If an argument is invalid (see :func:`moment_from_mass_model`, :func:`sweep_samples`),
        or `gain` times the moment overflows.

    References
    ----------
    US 11,446,825 B2, FIG. 2 and FIGS. 3A-3B (a joint swept forward and backward at constant
    speed with the other joints locked).

    Examples
    --------
    >>> import numpy as np
    >>> from gravdir.kinematics import chain_from_dh
    >>> chain = chain_from_dh([0.2, 0.0], [0.0, 0.0], [0.0, 0.5], [np.pi / 2, 0.0])
    >>> planned_sweep_from_chain(chain, [0.0, 0.0], 1, np.pi / 2, masses=[1.0, 2.0],
    ...                          coms=np.zeros((2, 3)), noise_std=0.05)
    PlannedSweep(joint=1, group=1, q_ref=0.000°, arc=90.0°, samples=630, |w|=9.81 N·m)
    """
    joint = _joint_index(joint)
    config, rot, a = _chain_rotation(chain, q, joint)
    gain = check_positive(gain, "gain")
    samples, v = sweep_samples(float(config[joint]), arc, speed, sample_rate)
    moment = moment_from_mass_model(chain, config, joint, masses, coms, gravity=gravity)
    with np.errstate(over="ignore", under="ignore"):
        w = gain * moment
    if not np.isfinite(w).all():
        raise ValueError(
            f"Expected `gain` times the moment of the mass model to be finite, got `gain` = "
            f"{gain:g} and a moment of {float(np.max(np.abs(moment))):.3g} N·m."
        )
    return PlannedSweep(joint, rot, a, float(config[joint]), samples, v, w, noise_std, group)


@dataclass(frozen=True, eq=False, repr=False)
class SweepPlan(Result):
    """The sweep plan :func:`plan_sweeps` recommends.

    Attributes
    ----------
    positions : ndarray, shape (k,)
        Angles of the reference joint (J1 by default) at which to sweep the planned joint, rad.
    arc : float
        Arc of each sweep, rad, centred at the swept joint's angle in `q` of
        :func:`plan_sweeps`.
    spacing : float
        Step between successive `positions`, rad.
    bound : UpBound
        Cramér-Rao bound of `up` for the plan.
    reached : bool
        Whether the bound's root-mean-square error (``bound.up_std_deg``, in radians) meets the
        target; if no candidate does, the plan is the candidate with the smallest bound and
        `reached` is false.
    sweeps : tuple of PlannedSweep
        The planned sweeps (samples, kinematics, rough moments).
    candidates : ndarray, shape (c, 4)
        Every candidate searched: number of sweeps, spacing (rad), arc (rad) and the bound's
        root-mean-square error of `up` (rad; infinite where the candidate cannot determine
        `up`).
    """

    _units = {
        "positions": "rad", "arc": "rad", "spacing": "rad", "candidates": "count, rad, rad, rad",
    }

    positions: NDArray[np.float64]
    arc: float
    spacing: float
    bound: UpBound
    reached: bool
    sweeps: tuple[PlannedSweep, ...]
    candidates: NDArray[np.float64]

    def __post_init__(self) -> None:
        object.__setattr__(self, "positions", np.array(self.positions, dtype=np.float64))
        object.__setattr__(self, "sweeps", tuple(self.sweeps))
        candidates = np.array(self.candidates, dtype=np.float64).reshape(-1, 4)
        object.__setattr__(self, "candidates", candidates)
        super().__post_init__()

    def __repr__(self) -> str:
        pos = ", ".join(f"{p:.1f}°" for p in np.degrees(self.positions))
        return (
            f"SweepPlan(positions=[{pos}], arc={np.degrees(self.arc):.0f}°, "
            f"up_std={self.bound.up_std_deg:.3g}°, reached={self.reached})"
        )


def _check_plan_joints(
    chain: SerialChain, q: ArrayLike, joint: int, reference_joint: int
) -> tuple[NDArray[np.float64], int, int]:
    """The configuration `q` (a copy) and the two joint indices of a plan."""
    if not isinstance(chain, SerialChain):
        raise ValueError(f"Expected `chain` to be a SerialChain, got {type(chain).__name__}.")
    joint = _joint_index(joint)
    reference_joint = _joint_index(reference_joint, "reference_joint")
    if reference_joint >= joint:
        raise ValueError(
            f"Expected `reference_joint` to be proximal to `joint` ({joint}), got "
            f"{reference_joint}."
        )
    config = np.array(_check_configuration(chain, q), dtype=np.float64)
    return config, joint, reference_joint


def _grid_values(values: object, name: str) -> list[Any]:
    """The values of one axis of the search grid: a non-empty sequence, not too long."""
    if isinstance(values, str | bytes) or not isinstance(values, Sequence | np.ndarray):
        raise ValueError(f"Expected `{name}` to be a sequence, got {type(values).__name__}.")
    if isinstance(values, np.ndarray) and values.ndim != 1:
        raise ValueError(
            f"Expected `{name}` to be a sequence (1-D), got an array of shape {values.shape}."
        )
    items = list(values)
    if not items:
        raise ValueError("Expected non-empty `counts`, `spacings` and `arcs`.")
    if len(items) > MAX_PLAN_CANDIDATES:
        raise ValueError(
            f"Expected at most {MAX_PLAN_CANDIDATES} values in `{name}`, got {len(items)}."
        )
    return items


def _check_plan_grid(
    counts: Sequence[int], spacings: Sequence[float], arcs: Sequence[float]
) -> tuple[list[int], list[float], list[float]]:
    """Counts, spacings and arcs of the search, each sorted ascending and validated."""
    count_list = []
    for count_value in _grid_values(counts, "counts"):
        if (
            isinstance(count_value, bool | np.bool_)
            or not isinstance(count_value, int | np.integer)
            or not 2 <= count_value <= MAX_PLAN_SWEEPS
        ):
            raise ValueError(
                f"Expected `counts` to hold ints >= 2 and at most {MAX_PLAN_SWEEPS}, got "
                f"{count_value!r}."
            )
        count_list.append(int(count_value))
    spacing_list = [
        check_angle_span(check_positive(s, "spacings"), "spacings")
        for s in _grid_values(spacings, "spacings")
    ]
    arc_list = [
        check_angle_span(check_positive(a, "arcs"), "arcs") for a in _grid_values(arcs, "arcs")
    ]
    n_sweeps = sum(set(count_list)) * len(spacing_list) * len(arc_list)
    if n_sweeps > MAX_PLAN_SWEEPS_TOTAL:
        raise ValueError(
            f"Expected the candidates of `counts`, `spacings` and `arcs` to plan at most "
            f"{MAX_PLAN_SWEEPS_TOTAL} sweeps in all, got {n_sweeps}."
        )
    return sorted(set(count_list)), sorted(spacing_list), sorted(arc_list)


def plan_sweeps(
    chain: SerialChain,
    q: ArrayLike,
    *,
    masses: ArrayLike,
    coms: ArrayLike,
    noise_std: float,
    target_std: float,
    up_hint: ArrayLike = (0.0, 0.0, 1.0),
    joint: int = 1,
    reference_joint: int = 0,
    counts: Sequence[int] = (2, 3, 4),
    spacings: Sequence[float] = (np.pi / 3, np.pi / 2, 2 * np.pi / 3),
    arcs: Sequence[float] = tuple(np.radians([60.0, 90.0, 120.0, 150.0, 180.0]).tolist()),
    speed: float = 0.5,
    sample_rate: float = 100.0,
    load_friction: LoadFriction = "none",
    gravity: float = STANDARD_GRAVITY,
) -> SweepPlan:
    """Recommend sweeps of `joint` reaching `target_std` with the fewest and shortest sweeps.

    Parameters
    ----------
    chain : SerialChain
        The arm's kinematics.
    q : array_like, shape (n,)
        The posture of the sweeps, rad: entry `reference_joint` is the first position (e.g. θ1, the
        J1 zero found by a J1 sweep), entry `joint` the middle of each arc, the joints distal
        to `joint` fix the moment.
    masses, coms : array_like
        A rough mass model (:func:`moment_from_mass_model`).
    noise_std : float
        White torque noise of `joint`, N·m.
    target_std : float
        Target root-mean-square error of `up`, rad.
    up_hint : array_like, shape (3,), optional
        A rough `up` at which the bounds are evaluated (default upright). Any non-zero vector;
        it is normalised.
    joint : int, optional
        The joint to sweep (default 1, J2).
    reference_joint : int, optional
        The joint whose position changes between sweeps (default 0, J1); it must be proximal
        to `joint`.
    counts : sequence of int, optional
        Numbers of sweeps searched (default 2, 3, 4), each from 2 to 36.
    spacings : sequence of float, optional
        Steps between reference-joint positions, rad (default 60°, 90°, 120°), each positive
        and at most 4π.
    arcs : sequence of float, optional
        Arc lengths searched, rad (default 60° to 180° in steps of 30°), each positive and at
        most 4π. The search plans at most 2000 sweeps and 20 million samples over all
        candidates (the default search plans 135 sweeps); each sequence holds at most 1000
        values.
    speed, sample_rate : float, optional
        Sweep speed (rad/s) and sample rate (Hz) of the planned sweeps.
    load_friction : {"none", "abs"}, optional
        The fit the bound is for (:func:`crlb_up`; ``"signed"`` and ``"auto"`` are refused).
    gravity : float, optional
        Gravitational acceleration, m/s² (default ``STANDARD_GRAVITY``, 9.80665).

    Returns
    -------
    SweepPlan
        The first candidate, in order of (number of sweeps, arc, spacing), each ascending
        whatever the order of `counts`, `arcs` and `spacings`, whose bound meets
        `target_std`; or the best candidate if none does (then ``reached`` is false and a
        :class:`~gravdir.errors.GravdirWarning` is issued).

    Raises
    ------
    ValueError
        If an argument is invalid, `reference_joint` is not proximal to `joint`, an arc or
        spacing exceeds 4π or an angle of `q` ±4π ("degrees?"), the search exceeds
        its caps, the moment of the mass model is more than 1e100 times `noise_std` or less
        than 1e-100 times it, or no candidate can determine `up`
        (:class:`~gravdir.errors.DegenerateGeometryError`).

    See Also
    --------
    crlb_up : the bound of one candidate.
    estimate_up : the estimator for the recorded sweeps.

    Notes
    -----
    Positions are ``q[reference_joint] + k * spacing``, ``k = 0, ..., count - 1``.
    Two sweeps 180° apart turn about one axis line and are degenerate
    (:func:`estimate_up`); such candidates, and those whose arcs are too short to separate the
    sinusoid from offset and friction, get an infinite bound. A reference-joint position beyond
    a turn is evaluated wrapped (the kinematics are periodic) and reported as searched. The
    search evaluates :func:`crlb_up` for every candidate: a few dozen small Fisher matrices.

    References
    ----------
    US 11,446,825 B2, FIG. 2 and FIGS. 3A-3B: the J1 sweep that finds θ1, then J2 sweeps over a
    predetermined range (90°, 120°, 150° or 180° in the patent), here repeated at several J1
    positions. S. M. Kay (1993), ch. 3: the Cramér-Rao bound each candidate is judged by.

    Examples
    --------
    >>> import numpy as np
    >>> from gravdir.kinematics import chain_from_dh
    >>> chain = chain_from_dh([0.2, 0.0], [0.0, 0.0], [0.0, 0.5], [np.pi / 2, 0.0])
    >>> plan = plan_sweeps(chain, [0.0, 0.0], masses=[1.0, 2.0], coms=np.zeros((2, 3)),
    ...                    noise_std=0.05, target_std=np.radians(0.2))
    >>> plan.reached, len(plan.sweeps)
    (True, 3)
    """
    config, joint, reference_joint = _check_plan_joints(chain, q, joint, reference_joint)
    target = check_positive(target_std, "target_std")
    count_list, spacing_list, arc_list = _check_plan_grid(counts, spacings, arcs)
    hint = check_direction(up_hint, "up_hint")
    check_option(load_friction, "load_friction", _LOAD_FRICTION_OPTIONS)
    speed = check_positive(speed, "speed")
    sample_rate = check_positive(sample_rate, "sample_rate")
    noise_std = check_positive(noise_std, "noise_std")
    # The samples of every candidate, bounded before any sweep is built.
    per_pass = {
        arc: _samples_per_pass(arc, speed, sample_rate, MAX_SWEEP_SAMPLES, "arcs")
        for arc in arc_list
    }
    work = 2 * sum(per_pass.values()) * sum(count_list) * len(spacing_list)
    if work > MAX_PLAN_SAMPLES:
        raise ValueError(
            f"Expected the candidates of `counts`, `spacings` and `arcs` at `speed` = "
            f"{speed:g} and `sample_rate` = {sample_rate:g} to plan at most "
            f"{MAX_PLAN_SAMPLES} samples in all, got {work}."
        )
    moment = float(
        _norm(moment_from_mass_model(chain, config, joint, masses, coms, gravity=gravity))
    )
    if moment == 0.0:
        raise DegenerateGeometryError(
            f"Expected `masses` and `coms` to give joint {joint} a gravity load, got a zero "
            "moment: its sweeps would say nothing about `up`."
        )
    _check_signal_to_noise(moment, np.array([noise_std]), "`masses` and `noise_std`")

    table: list[list[float]] = []
    best: tuple[float, SweepPlan] | None = None
    for count in count_list:
        for arc in arc_list:
            for spacing in spacing_list:
                positions = config[reference_joint] + spacing * np.arange(count)
                plans = _candidate_sweeps(
                    chain,
                    config,
                    joint,
                    reference_joint,
                    positions,
                    arc,
                    masses=masses,
                    coms=coms,
                    noise_std=noise_std,
                    speed=speed,
                    sample_rate=sample_rate,
                    gravity=gravity,
                )
                try:
                    bound = crlb_up(plans, up_hint=hint, load_friction=load_friction)
                except (DegenerateGeometryError, InsufficientDataError):
                    # Parallel axes, or arcs too short to separate the sinusoid: no bound.
                    table.append([count, spacing, arc, np.inf])
                    continue
                std = float(np.radians(bound.up_std_deg))
                table.append([count, spacing, arc, std])
                plan = SweepPlan(
                    positions, arc, spacing, bound, std <= target, tuple(plans), np.zeros((0, 4))
                )
                if plan.reached:
                    return dataclasses.replace(plan, candidates=np.array(table))
                if best is None or std < best[0]:
                    best = (std, plan)
    if best is None:
        raise DegenerateGeometryError(
            "Expected some candidate of `counts`, `spacings` and `arcs` to determine `up`, "
            "got none: check that the swept joint's axis is not parallel to the reference "
            "joint's axis and that the mass model gives the joint a gravity load."
        )
    warnings.warn(
        f"No candidate plan reaches `target_std` = {np.degrees(target):.3g}°; the best reaches "
        f"{np.degrees(best[0]):.3g}°.",
        GravdirWarning,
        stacklevel=2,
    )
    return dataclasses.replace(best[1], candidates=np.array(table))


def _candidate_sweeps(
    chain: SerialChain,
    config: NDArray[np.float64],
    joint: int,
    reference_joint: int,
    positions: NDArray[np.float64],
    arc: float,
    **kwargs: Any,
) -> list[PlannedSweep]:
    """The planned sweeps of `joint` at the reference-joint `positions` of one candidate."""
    plans = []
    for position in positions:
        c = config.copy()
        # The kinematics are periodic: a position beyond a turn is evaluated wrapped.
        wrapped = float(np.remainder(position + np.pi, 2 * np.pi) - np.pi)
        c[reference_joint] = position if abs(position) <= 2 * np.pi else wrapped
        plans.append(planned_sweep_from_chain(chain, c, joint, arc, **kwargs))
    return plans
