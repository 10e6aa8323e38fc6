"""Strategies for the synthetic world: gravity directions, mounts, serial chains, arms, sensors."""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np
from hypothesis import strategies as st
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import check_count, check_option, check_positive
from gravdir._results import Result
from gravdir.kinematics import SerialChain, chain_from_dh
from gravdir.synthetic import (
    SyntheticArm,
    TorqueSensor,
    iiwa_arm,
    random_arm,
    realistic_sensors,
    up_from_base_tilt,
    ur5_arm,
)

__all__ = [
    "ChainCase",
    "Mount",
    "arms",
    "azimuths",
    "mounts",
    "sensor_errors",
    "serial_chains",
    "tilts",
    "ups",
]

MountKind = Literal["floor", "wall", "ceiling", "any"]
_MOUNT_KINDS: tuple[MountKind, ...] = ("floor", "wall", "ceiling", "any")
ChainKind = Literal["random", "ur5", "panda"]
_CHAIN_KINDS: tuple[ChainKind, ...] = ("random", "ur5", "panda")
ArmKind = Literal["random", "ur5", "iiwa"]
_ARM_KINDS: tuple[ArmKind, ...] = ("random", "ur5", "iiwa")
_SEEDS = st.integers(0, 2**32 - 1)

# The Franka Emika Panda in Craig's (modified) convention, rows (a_{i-1}, d_i, alpha_{i-1}),
# from Franka's "Robot and interface specifications", section "Denavit-Hartenberg parameters";
# the flange sits 0.107 m along z of frame 7.
_PANDA_A = (0.0, 0.0, 0.0, 0.0825, -0.0825, 0.0, 0.088)
_PANDA_D = (0.333, 0.0, 0.316, 0.0, 0.384, 0.0, 0.0)
_PANDA_ALPHA = (0.0, -np.pi / 2, np.pi / 2, np.pi / 2, -np.pi / 2, np.pi / 2, np.pi / 2)
_PANDA_FLANGE_D = 0.107


@functools.lru_cache(maxsize=1024)
def _strategy(build: Callable[..., Any], *key: Hashable) -> Any:
    """The strategy `build(*key)`, built once per validated key: equal arguments give the
    same strategy object (hypothesis strategies have no value equality)."""
    return build(*key)


def _check_bounds(low: float, high: float, top: float) -> tuple[float, float]:
    lo = check_positive(low, "min_tilt", allow_zero=True)
    hi = check_positive(high, "max_tilt", allow_zero=True)
    for value, name in ((lo, "min_tilt"), (hi, "max_tilt")):
        if value > top:
            raise ValueError(f"Expected `{name}` in [0, pi] rad, got {value:.6g}: degrees?")
    if lo > hi:
        raise ValueError(f"Expected `min_tilt` <= `max_tilt`, got {lo:.6g} and {hi:.6g}.")
    return lo, hi


def tilts(min_tilt: float = 0.0, max_tilt: float = math.pi) -> st.SearchStrategy[float]:
    """Tilt angles of `up` from base +z, rad, both ends included.

    Parameters
    ----------
    min_tilt, max_tilt : float, optional
        Range of the tilt, rad, ``0 <= min_tilt <= max_tilt <= pi`` (default the whole range:
        upright 0, wall pi/2, ceiling pi).

    Returns
    -------
    hypothesis.strategies.SearchStrategy of float

    Raises
    ------
    ValueError
        If a bound is negative, not a number, or the bounds are out of order or beyond pi.

    Notes
    -----
    The tilt is drawn uniformly in angle (not in solid angle), so the degenerate ends (tilt 0,
    where the azimuth is undefined, and tilt pi) are reached as readily as any other value.

    Examples
    --------
    >>> from hypothesis import find
    >>> find(tilts(0.1, 0.2), lambda t: True)
    0.1
    """
    lo, hi = _check_bounds(min_tilt, max_tilt, math.pi)
    return _strategy(st.floats, lo, hi)  # type: ignore[no-any-return]


def azimuths() -> st.SearchStrategy[float]:
    """Azimuths of `up`'s horizontal part from base +x toward +y, rad, in (-pi, pi].

    Returns
    -------
    hypothesis.strategies.SearchStrategy of float

    Notes
    -----
    The half-open range is the one :func:`gravdir.frames.azimuth_from_up` returns, so a round
    trip compares values directly.

    Examples
    --------
    >>> from hypothesis import find
    >>> find(azimuths(), lambda a: a > 3.0) <= np.pi
    True
    """
    return _strategy(_azimuth_floats)  # type: ignore[no-any-return]


def _azimuth_floats() -> st.SearchStrategy[float]:
    return st.floats(-math.pi, math.pi, exclude_min=True)


def ups(min_tilt: float = 0.0, max_tilt: float = math.pi) -> st.SearchStrategy[NDArray[np.float64]]:
    """Unit vectors `up` (3,) with their tilt in ``[min_tilt, max_tilt]``, any azimuth.

    Parameters
    ----------
    min_tilt, max_tilt : float, optional
        Range of the tilt from base +z, rad (default the whole sphere).

    Returns
    -------
    hypothesis.strategies.SearchStrategy of ndarray, shape (3,)
        :func:`gravdir.synthetic.up_from_base_tilt` of a drawn tilt and azimuth.

    Raises
    ------
    ValueError
        As :func:`tilts`.

    Examples
    --------
    >>> from hypothesis import find
    >>> up = find(ups(min_tilt=np.pi / 2, max_tilt=np.pi / 2), lambda u: True)
    >>> float(abs(up[2])) < 1e-15, float(np.linalg.norm(up))
    (True, 1.0)
    """
    lo, hi = _check_bounds(min_tilt, max_tilt, math.pi)
    return _strategy(st.builds, up_from_base_tilt, tilts(lo, hi), azimuths())  # type: ignore[no-any-return]


@dataclass(frozen=True, eq=False, repr=False)
class Mount(Result):
    """How a robot's base is mounted, with the true `up` of that mount.

    Attributes
    ----------
    kind : {"floor", "wall", "ceiling", "any"}
        The mount drawn.
    tilt : float
        Angle between `up` and base +z, rad.
    azimuth : float
        Angle of `up`'s horizontal part from base +x toward +y, rad, in (-pi, pi].
    up : ndarray, shape (3,)
        :math:`(\\sin t \\cos a, \\sin t \\sin a, \\cos t)`: unit vector opposite to gravity,
        base frame.
    """

    kind: str
    tilt: float
    azimuth: float
    up: NDArray[np.float64]

    _units: ClassVar[Mapping[str, str]] = {"kind": "", "tilt": "rad", "azimuth": "rad", "up": ""}


def mounts(
    kinds: Sequence[MountKind] = ("floor", "wall", "ceiling"),
    max_deviation: float = math.radians(15.0),
) -> st.SearchStrategy[Mount]:
    """Floor, wall and ceiling mounts, each a few degrees off its nominal tilt.

    Parameters
    ----------
    kinds : sequence of {"floor", "wall", "ceiling", "any"}, optional
        Mounts to draw from (default floor, wall and ceiling). ``"any"`` draws the tilt over
        the whole sphere.
    max_deviation : float, optional
        Largest deviation of the tilt from the nominal 0 (floor), pi/2 (wall) or pi (ceiling),
        rad, in [0, pi/2] (default 15°: a floor mount on an uneven floor, a mobile base on a
        ramp).

    Returns
    -------
    hypothesis.strategies.SearchStrategy of Mount
        The mount with its true tilt, azimuth and `up`.

    Raises
    ------
    ValueError
        If `kinds` is empty or names an unknown mount, or `max_deviation` is out of range.

    Notes
    -----
    The exact nominal tilts (0, pi/2, pi) are among the values drawn: they are the degenerate
    branches of every tilt/azimuth conversion.

    Examples
    --------
    >>> from hypothesis import given, settings
    >>> @settings(max_examples=20, derandomize=True, database=None)
    ... @given(mounts(kinds=("wall",), max_deviation=0.1))
    ... def check(mount):
    ...     assert abs(mount.tilt - np.pi / 2) <= 0.1 and abs(mount.up[2]) <= np.sin(0.1)
    >>> check()
    """
    chosen = tuple(check_option(k, "kinds", _MOUNT_KINDS) for k in kinds)
    if not chosen:
        raise ValueError("Expected `kinds` to name at least one mount, got none.")
    deviation = check_positive(max_deviation, "max_deviation", allow_zero=True)
    if deviation > math.pi / 2:
        raise ValueError(f"Expected `max_deviation` in [0, pi/2] rad, got {deviation}: degrees?")
    return _strategy(_draw_mount, chosen, deviation)  # type: ignore[no-any-return]


@st.composite
def _draw_mount(draw: st.DrawFn, chosen: tuple[str, ...], deviation: float) -> Mount:
    kind = draw(st.sampled_from(chosen))
    if kind == "any":
        tilt = draw(tilts())
    else:
        nominal = {"floor": 0.0, "wall": math.pi / 2, "ceiling": math.pi}[kind]
        tilt = nominal + draw(st.floats(-deviation, deviation))
        tilt = min(max(tilt, 0.0), math.pi)  # a floor tilted by -t is one tilted by t elsewhere
    azimuth = draw(azimuths())
    return Mount(kind, float(tilt), float(azimuth), up_from_base_tilt(tilt, azimuth))


@dataclass(frozen=True, eq=False, repr=False)
class ChainCase(Result):
    """A serial chain drawn by :func:`serial_chains`, with the table it was built from.

    Attributes
    ----------
    name : str
        ``"random"``, ``"ur5"`` (Universal Robots' published standard DH table) or ``"panda"``
        (Franka's published modified DH table).
    convention : {"standard", "modified"}
        The Denavit-Hartenberg convention of the table.
    dh : ndarray, shape (n, 4)
        Rows ``(d, theta_offset, a, alpha)`` in the argument order of
        :func:`gravdir.kinematics.chain_from_dh` (for the modified convention ``a`` and
        ``alpha`` are :math:`a_{i-1}`, :math:`\\alpha_{i-1}`), m and rad.
    link_from_flange : ndarray, shape (4, 4)
        Pose of the flange in the last link frame.
    chain : SerialChain
        ``chain_from_dh(*dh.T, convention=convention, link_from_flange=link_from_flange)``.
    """

    name: str
    convention: str
    dh: NDArray[np.float64]
    link_from_flange: NDArray[np.float64]
    chain: SerialChain

    _units: ClassVar[Mapping[str, str]] = {
        "name": "",
        "convention": "",
        "dh": "m, rad",
        "link_from_flange": "m",
        "chain": "",
    }

    @property
    def n_joints(self) -> int:
        """Number of joints."""
        return int(self.dh.shape[0])


def _chain_case(
    name: str, convention: str, dh: ArrayLike, flange: NDArray[np.float64] | None = None
) -> ChainCase:
    table = np.asarray(dh, dtype=np.float64)
    tool = np.eye(4) if flange is None else flange
    chain = chain_from_dh(
        *table.T,
        convention="standard" if convention == "standard" else "modified",
        link_from_flange=tool,
    )
    return ChainCase(name, convention, table, tool, chain)


def _panda_case() -> ChainCase:
    tool = np.eye(4)
    tool[2, 3] = _PANDA_FLANGE_D
    dh = np.column_stack([_PANDA_D, np.zeros(7), _PANDA_A, _PANDA_ALPHA])
    return _chain_case("panda", "modified", dh, tool)


def _joint_range_and_kinds(
    min_joints: Any,
    max_joints: Any,
    kinds: Sequence[Any],
    allowed: Sequence[str],
    named: Mapping[str, int],
    noun: str,
) -> tuple[int, int, tuple[str, ...]]:
    """The joint range ``lo <= hi`` (each in 1..20) and the `kinds` that can be drawn in it.

    Each of `kinds` must be one of `allowed`; "random" fits any range, a named kind only where
    its joint count `named[kind]` lies in ``[lo, hi]``. `noun` ("a chain") words the error when
    none is left.
    """
    lo = check_count(min_joints, "min_joints", maximum=20)
    hi = check_count(max_joints, "max_joints", maximum=20)
    if lo > hi:
        raise ValueError(f"Expected `min_joints` <= `max_joints`, got {lo} and {hi}.")
    chosen = tuple(check_option(k, "kinds", allowed) for k in kinds)
    chosen = tuple(k for k in chosen if k == "random" or lo <= named[k] <= hi)
    if not chosen:
        raise ValueError(f"Expected `kinds` to hold {noun} with {lo} to {hi} joints, got none.")
    return lo, hi, chosen


def serial_chains(
    min_joints: int = 3,
    max_joints: int = 7,
    *,
    kinds: Sequence[ChainKind] = _CHAIN_KINDS,
    conventions: Sequence[Literal["standard", "modified"]] = ("standard", "modified"),
    link_length: float = 0.5,
) -> st.SearchStrategy[ChainCase]:
    """Serial chains of revolute joints: random DH or modified-DH tables, UR5 and Panda.

    Parameters
    ----------
    min_joints, max_joints : int, optional
        Number of joints of the random chains, ``1 <= min_joints <= max_joints <= 20``
        (default 3 to 7). The UR5 (6 joints) and the Panda (7) are drawn only when their
        joint count lies in this range.
    kinds : sequence of {"random", "ur5", "panda"}, optional
        Which chains to draw (default all three).
    conventions : sequence of {"standard", "modified"}, optional
        Conventions of the random tables (default both).
    link_length : float, optional
        Bound of the random lengths ``d`` and ``a``, m (default 0.5).

    Returns
    -------
    hypothesis.strategies.SearchStrategy of ChainCase
        The chain with its DH table (the truth).

    Raises
    ------
    ValueError
        If a count or length is out of range, or `kinds` or `conventions` is empty or names an
        unknown option.

    Notes
    -----
    A random row has ``d, a`` uniform in ``[-L, L]``, ``theta_offset`` in ``[-pi, pi]`` and a
    twist ``alpha`` that is a right angle (0, ±pi/2, pi) half of the time, as industrial arms
    have, and any angle otherwise. The UR5's standard table is Universal Robots' (see
    :func:`gravdir.synthetic.ur5_arm`); the Panda's modified table is Franka's (Robot and
    interface specifications, section Denavit-Hartenberg parameters), with the flange 0.107 m
    along z of frame 7.

    References
    ----------
    Franka Robotics, Franka Control Interface documentation, "Robot and interface
    specifications", section "Denavit-Hartenberg parameters". Universal Robots, "DH parameters
    for calculations of kinematics and dynamics".

    Examples
    --------
    >>> from hypothesis import find
    >>> case = find(serial_chains(kinds=("panda",)), lambda c: True)
    >>> case.convention, case.n_joints, case.chain.description
    ('modified', 7, 'modified_dh')
    """
    lo, hi, chosen = _joint_range_and_kinds(
        min_joints, max_joints, kinds, _CHAIN_KINDS, {"ur5": 6, "panda": 7}, "a chain"
    )
    conv = tuple(check_option(c, "conventions", ("standard", "modified")) for c in conventions)
    if not conv:
        raise ValueError("Expected `conventions` to name at least one convention, got none.")
    length = check_positive(link_length, "link_length")
    if length > 1e3:
        raise ValueError(f"Expected `link_length` at most 1000 m, got {length:.3g}.")
    return _strategy(_draw_chain, lo, hi, chosen, conv, length)  # type: ignore[no-any-return]


@st.composite
def _draw_chain(
    draw: st.DrawFn,
    lo: int,
    hi: int,
    chosen: tuple[str, ...],
    conv: tuple[str, ...],
    length: float,
) -> ChainCase:
    kind = draw(st.sampled_from(chosen))
    if kind == "ur5":
        return _chain_case("ur5", "standard", ur5_arm().dh)
    if kind == "panda":
        return _panda_case()
    n = draw(st.integers(lo, hi))
    lengths = st.floats(-length, length)
    right = st.sampled_from([0.0, math.pi / 2, -math.pi / 2, math.pi])
    rows = [
        (
            draw(lengths),
            draw(st.floats(-math.pi, math.pi)),
            draw(lengths),
            draw(right | st.floats(-math.pi, math.pi)),
        )
        for _ in range(n)
    ]
    return _chain_case("random", draw(st.sampled_from(conv)), rows)


def arms(
    min_joints: int = 3,
    max_joints: int = 7,
    *,
    kinds: Sequence[ArmKind] = _ARM_KINDS,
    up: st.SearchStrategy[NDArray[np.float64]] | None = None,
    transverse_j2: bool = False,
) -> st.SearchStrategy[SyntheticArm]:
    """Synthetic arms with masses on a mounted base: random, UR5-like and iiwa-like.

    Parameters
    ----------
    min_joints, max_joints : int, optional
        Number of joints of the random arms, ``1 <= min_joints <= max_joints <= 20`` (default
        3 to 7); the UR5-like (6) and iiwa-like (7) arms are drawn only within this range.
    kinds : sequence of {"random", "ur5", "iiwa"}, optional
        Which arms to draw (default all three).
    up : SearchStrategy of ndarray, optional
        Strategy of the true `up` (default :func:`ups`, the whole sphere); e.g.
        ``mounts().map(lambda m: m.up)``.
    transverse_j2 : bool, optional
        Whether J2's axis must cross J1's at a clear angle (``|sin alpha_0| >= 0.7``, at least
        45°), as the gravity estimators need: J2 sweeps at two positions of J1 then turn about
        axes far from parallel (default False). Random tables that fail it get
        ``alpha_0 = ±pi/2``.

    Returns
    -------
    hypothesis.strategies.SearchStrategy of SyntheticArm
        The arm carries its truth: DH table, masses, centres of mass and `up`.

    Raises
    ------
    ValueError
        If a count is out of range, or `kinds` is empty or names an unknown arm.

    Notes
    -----
    Random arms come from :func:`gravdir.synthetic.random_arm` with a drawn seed; named arms
    from :func:`~gravdir.synthetic.ur5_arm` and :func:`~gravdir.synthetic.iiwa_arm`.

    Examples
    --------
    >>> from hypothesis import find
    >>> arm = find(arms(kinds=("random",), up=ups(max_tilt=0.0)), lambda a: a.n_joints == 4)
    >>> arm.n_joints, arm.up.tolist()
    (4, [0.0, 0.0, 1.0])
    """
    lo, hi, chosen = _joint_range_and_kinds(
        min_joints, max_joints, kinds, _ARM_KINDS, {"ur5": 6, "iiwa": 7}, "an arm"
    )
    if up is not None and not isinstance(up, st.SearchStrategy):
        raise ValueError(f"Expected `up` to be a hypothesis strategy, got {type(up).__name__}.")
    if not isinstance(transverse_j2, bool):
        raise ValueError(f"Expected `transverse_j2` to be True or False, got {transverse_j2!r}.")
    strategy = _strategy(_draw_arm, lo, hi, chosen, up, transverse_j2)
    return strategy  # type: ignore[no-any-return]


@st.composite
def _draw_arm(
    draw: st.DrawFn,
    lo: int,
    hi: int,
    chosen: tuple[str, ...],
    up: st.SearchStrategy[NDArray[np.float64]] | None,
    transverse_j2: bool,
) -> SyntheticArm:
    kind = draw(st.sampled_from(chosen))
    true_up = draw(ups() if up is None else up)
    if kind == "ur5":
        return ur5_arm(true_up)
    if kind == "iiwa":
        return iiwa_arm(true_up)
    rng = np.random.default_rng(draw(_SEEDS))
    base = random_arm(rng, draw(st.integers(lo, hi)))
    dh = np.array(base.dh)
    if transverse_j2 and abs(math.sin(dh[0, 3])) < 0.7:
        dh[0, 3] = draw(st.sampled_from([math.pi / 2, -math.pi / 2]))
    return SyntheticArm(dh=dh, masses=base.masses, coms=base.coms, up=true_up, name="random")


def sensor_errors(
    peak: ArrayLike, *, noise: bool = True, ripple: bool = True, max_correlation_time: float = 0.0
) -> st.SearchStrategy[tuple[TorqueSensor, ...]]:
    """One torque sensor per joint with the realistic errors of gravdir's synthetic arms.

    Parameters
    ----------
    peak : array_like, shape (n,)
        Peak gravity torque of each joint, N·m (``arm.peak_gravity_torque()``).
    noise : bool, optional
        Whether the sensors add white noise (default True).
    ripple : bool, optional
        Whether the sensors add gear ripple (default True). An estimator that does not model
        the ripple sees it as extra noise; switch it off where a test compares the estimator's
        covariance with its scatter.
    max_correlation_time : float, optional
        Largest correlation time of the noise, s, finite and non-negative (default 0: white
        noise). Above 0 each sensor's ``noise_correlation_time`` is drawn from
        ``[0, max_correlation_time]``: noise correlated in time, as real drives' residuals are
        (a sweep or log recorded with such sensors needs ``covariance="hac"`` fits).

    Returns
    -------
    hypothesis.strategies.SearchStrategy of tuple of TorqueSensor
        :func:`gravdir.synthetic.realistic_sensors` of a drawn seed: each sensor carries the
        true gain, offset, friction, ripple and noise level (and correlation time) of its
        joint.

    Raises
    ------
    ValueError
        As :func:`gravdir.synthetic.realistic_sensors`, if `noise` or `ripple` is not a
        bool, or if `max_correlation_time` is negative or not finite.

    Examples
    --------
    >>> from hypothesis import find
    >>> sensors = find(sensor_errors([10.0, 20.0], noise=False), lambda s: True)
    >>> [s.noise_std for s in sensors], all(0.85 <= s.gain <= 1.15 for s in sensors)
    ([0.0, 0.0], True)
    >>> slow = find(sensor_errors([10.0, 20.0], max_correlation_time=0.2),
    ...             lambda s: s[0].noise_correlation_time > 0.1)
    >>> 0.1 < slow[0].noise_correlation_time <= 0.2
    True
    """
    realistic_sensors(np.random.default_rng(0), peak)  # validates `peak` now, not at a draw
    for flag, name in ((noise, "noise"), (ripple, "ripple")):
        if not isinstance(flag, bool):
            raise ValueError(f"Expected `{name}` to be True or False, got {flag!r}.")
    longest = check_positive(max_correlation_time, "max_correlation_time", allow_zero=True)
    key = tuple(float(x) for x in np.asarray(peak, dtype=np.float64).ravel())
    return _strategy(_draw_sensors, key, noise, ripple, longest)  # type: ignore[no-any-return]


@st.composite
def _draw_sensors(
    draw: st.DrawFn, peak: tuple[float, ...], noise: bool, ripple: bool, longest: float
) -> tuple[TorqueSensor, ...]:
    sensors = realistic_sensors(np.random.default_rng(draw(_SEEDS)), peak)
    times = [draw(st.floats(0.0, longest)) if longest > 0 else 0.0 for _ in sensors]
    return tuple(
        dataclasses.replace(
            s,
            noise_std=s.noise_std if noise else 0.0,
            ripple_amplitude=s.ripple_amplitude if ripple else 0.0,
            noise_correlation_time=tau,
        )
        for s, tau in zip(sensors, times, strict=True)
    )
