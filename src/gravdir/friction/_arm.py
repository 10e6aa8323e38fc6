"""The two-pose procedure joint by joint: recorded runs and the per-joint and per-arm fits."""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Mapping
from dataclasses import KW_ONLY, InitVar, dataclass, field
from typing import Generic, TypeVar

import numpy as np
from numpy.typing import NDArray

from gravdir._checks import NanPolicy
from gravdir._results import Result
from gravdir.friction._columns import FrictionModelName
from gravdir.friction._estimate import FrictionFit, fit_friction
from gravdir.friction._inputs import check_series
from gravdir.friction._load import (
    GravityFreeCheck,
    LoadFrictionFit,
    load_dependent_friction,
    refuse_loaded_pose,
)
from gravdir.friction._model import LoadDependentFriction

__all__ = [
    "ArmFrictionFit",
    "FrictionRun",
    "JointFrictionFit",
    "identify_arm_friction",
    "identify_joint_friction",
]

K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True, eq=False, repr=False)
class FrictionRun(Result):
    """One run of an excitation plan on one joint.

    The arrays are copied (as float64, read-only): changing the caller's arrays afterwards does
    not change the run. A run is where a joint's samples enter the two-pose identification, so
    this is where NaN samples are refused or dropped: ``FrictionRun(..., nan_policy="omit")``
    drops every sample where any of the arrays holds a NaN (the default ``"raise"`` refuses a
    NaN, naming the array); :func:`identify_joint_friction` and :func:`identify_arm_friction`
    take runs and have no `nan_policy` of their own.

    Parameters
    ----------
    velocity, acceleration, torque, gravity_torque
        As the attributes below; every argument after `velocity` is keyword-only.
    nan_policy : {"raise", "omit"}, optional
        What a NaN does (not stored). Infinities are refused under both.

    Attributes
    ----------
    velocity : ndarray, shape (n,)
        Joint speed, rad/s.
    acceleration : ndarray, shape (n,) or None
        Joint acceleration, rad/s² (enables the inertia term).
    torque : ndarray, shape (n,)
        Drive torque, N·m.
    gravity_torque : ndarray, shape (n,) or None
        Gravity torque, N·m: None for the gravity-free run, required for the loaded run.
    n_omitted : int
        Samples dropped because an array held a NaN there (``nan_policy="omit"``; 0 otherwise);
        the arrays above hold the samples kept.

    Raises
    ------
    ValueError
        If `velocity` is not shape (n,) with n >= 1 (after omitting NaN samples), real and
        finite, or another array is not real and finite or differs from its shape (a column
        vector is refused, not broadcast), or `nan_policy` is not "raise" or "omit".
    """

    _units = {
        "velocity": "rad/s", "torque": "N·m", "acceleration": "rad/s²", "gravity_torque": "N·m",
    }

    velocity: NDArray[np.float64]
    _: KW_ONLY
    acceleration: NDArray[np.float64] | None = None
    torque: NDArray[np.float64]
    gravity_torque: NDArray[np.float64] | None = None
    nan_policy: InitVar[NanPolicy] = "raise"
    n_omitted: int = field(default=0, init=False)

    def __post_init__(self, nan_policy: NanPolicy) -> None:
        series, n_omitted = check_series(
            nan_policy,
            {
                "velocity": self.velocity,
                "torque": self.torque,
                "acceleration": self.acceleration,
                "gravity_torque": self.gravity_torque,
            },
            optional=("acceleration", "gravity_torque"),
        )
        for name, value in series.items():
            if value is not None:
                object.__setattr__(self, name, np.array(value, dtype=np.float64))
        if self.velocity.size == 0:
            raise ValueError(
                "Expected `velocity` to hold at least one sample, got none"
                f"{f' after omitting {n_omitted} with NaN' if n_omitted else ''}."
            )
        object.__setattr__(self, "n_omitted", n_omitted)
        super().__post_init__()

    def __repr__(self) -> str:
        extras = [
            name for name in ("acceleration", "gravity_torque") if getattr(self, name) is not None
        ]
        with_ = f" with {' and '.join(extras)}" if extras else ""
        omitted = f", {self.n_omitted} omitted (NaN)" if self.n_omitted else ""
        return f"FrictionRun({self.velocity.size} samples{with_}{omitted})"


@dataclass(frozen=True, eq=False, repr=False)
class JointFrictionFit(Result):
    """Friction of one joint from the two-pose procedure.

    Attributes
    ----------
    free : FrictionFit
        Fit of the gravity-free run.
    load : LoadFrictionFit
        Load-dependent part from the loaded run.
    free_pose : GravityFreeCheck or None
        The check of the gravity-free pose, if given.
    """

    free: FrictionFit
    load: LoadFrictionFit
    free_pose: GravityFreeCheck | None = None

    @property
    def model(self) -> LoadDependentFriction:
        """The joint's friction model with load dependence."""
        return self.load.model


@dataclass(frozen=True, eq=False, repr=False)
class ArmFrictionFit(Result, Mapping[K, JointFrictionFit], Generic[K]):
    """Friction of every joint of an arm: a read-only mapping of joint key to its fit.

    ``fit[key]``, ``len(fit)``, iteration over the keys (in the order the joints were given),
    ``keys()``, ``values()``, ``items()`` work as for a dict; item assignment raises
    :class:`TypeError`.

    Attributes
    ----------
    joints : tuple
        The joint keys, in order.
    fits : tuple of JointFrictionFit
        The fit of each joint, in the order of `joints`.
    """

    joints: tuple[K, ...]
    fits: tuple[JointFrictionFit, ...]

    def __post_init__(self) -> None:
        if len(self.joints) != len(self.fits):
            raise ValueError(
                f"Expected one fit per joint, got {len(self.joints)} joints and "
                f"{len(self.fits)} fits."
            )
        super().__post_init__()

    def __getitem__(self, key: K) -> JointFrictionFit:
        for k, fit in zip(self.joints, self.fits, strict=True):
            if k == key:
                return fit
        raise KeyError(key)

    def __iter__(self) -> Iterator[K]:
        return iter(self.joints)

    def __len__(self) -> int:
        return len(self.joints)

    def __repr__(self) -> str:
        rows = "; ".join(
            f"{k!r}: μ={f.load.load_coefficient:.4g}±{f.load.load_coefficient_std:.2g}, "
            f"rms={f.free.residual_rms:.3g} N·m"
            for k, f in zip(self.joints, self.fits, strict=True)
        )
        return f"ArmFrictionFit({rows})"


def identify_joint_friction(
    free: FrictionRun,
    loaded: FrictionRun,
    *,
    model: FrictionModelName = "stribeck",
    exponent: float | None = None,
    free_pose: GravityFreeCheck | None = None,
    min_speed: float = 1e-3,
    max_iter: int = 200,
) -> JointFrictionFit:
    """Two-pose friction identification of one joint.

    Fits `model` to the gravity-free run, then the load coefficient to the loaded run with
    :func:`load_dependent_friction`.

    Parameters
    ----------
    free, loaded : FrictionRun
        The runs in the gravity-free and the gravity-loaded pose (same plan).
        ``loaded.gravity_torque`` is required; ``free.gravity_torque`` must be None.
    model : {"stribeck", "coulomb-viscous", "asymmetric-stribeck"}, optional
        Friction model of the free run (see :func:`fit_friction`).
    exponent : float, optional
        Fixed Stribeck exponent; estimated by default.
    free_pose : GravityFreeCheck, optional
        Check of the free pose; a pose that is not gravity-free is refused.
    min_speed : float, optional
        Stiction threshold, rad/s (default 1e-3, see :func:`fit_friction`).
    max_iter : int, optional
        Iteration limit of the free fit's search (default 200, see :func:`fit_friction`).

    Returns
    -------
    JointFrictionFit
        The free fit (with its `converged` and `n_iter`), the load split and the pose check.

    Raises
    ------
    ValueError
        As :func:`fit_friction` and :func:`load_dependent_friction` (the message then starts
        with the run, `free` or `loaded`, and the error keeps its type), and if `free` or
        `loaded` is not a FrictionRun, the loaded run has no gravity torque or the free run has
        one.

    Warns
    -----
    ConvergenceWarning
        As :func:`fit_friction`.

    See Also
    --------
    identify_arm_friction : the same, joint by joint.

    References
    ----------
    CN 107423515 B, claim 1 (the two-pose method: friction in a gravity-free pose, then the
    same excitation trajectory in a loaded pose, the difference being the gravity-affected
    friction) and claim 4 (the subtraction).

    Examples
    --------
    >>> from gravdir.friction import CoulombViscousFriction, LoadDependentFriction
    >>> v = np.tile(np.concatenate([np.geomspace(0.01, 1, 30), -np.geomspace(0.01, 1, 30)]), 2)
    >>> f0 = CoulombViscousFriction(2.0, 1.5, offset=0.2)
    >>> torque_g = np.linspace(-20.0, 30.0, v.size)
    >>> torque_l = torque_g + LoadDependentFriction(f0, 0.04).evaluate(v, load=torque_g)
    >>> res = identify_joint_friction(
    ...     FrictionRun(v, torque=f0.evaluate(v)),
    ...     FrictionRun(v, torque=torque_l, gravity_torque=torque_g),
    ...     model="coulomb-viscous")
    >>> round(res.load.load_coefficient, 9)
    0.04
    """
    for name, run in (("free", free), ("loaded", loaded)):
        if not isinstance(run, FrictionRun):
            raise ValueError(f"Expected `{name}` to be a FrictionRun, got {type(run).__name__}.")
    if loaded.gravity_torque is None:
        raise ValueError("Expected `loaded.gravity_torque` (the loaded run's gravity torque).")
    if free.gravity_torque is not None:
        raise ValueError(
            "Expected `free.gravity_torque` to be None: the gravity-free run carries no gravity "
            "torque."
        )
    refuse_loaded_pose(free_pose)
    try:
        free_fit = fit_friction(
            free.velocity,
            acceleration=free.acceleration,
            torque=free.torque,
            model=model,
            exponent=exponent,
            min_speed=min_speed,
            max_iter=max_iter,
        )
    except ValueError as exc:
        raise type(exc)(f"`free` run: {exc}") from exc
    try:
        load = load_dependent_friction(
            free_fit,
            loaded.velocity,
            acceleration=loaded.acceleration,
            torque=loaded.torque,
            gravity_torque=loaded.gravity_torque,
            min_speed=min_speed,
        )
    except ValueError as exc:
        raise type(exc)(f"`loaded` run: {exc}") from exc
    return JointFrictionFit(free=free_fit, load=load, free_pose=free_pose)


def identify_arm_friction(
    runs: Mapping[K, tuple[FrictionRun, FrictionRun]],
    *,
    model: FrictionModelName = "stribeck",
    exponent: float | None = None,
    free_poses: Mapping[K, GravityFreeCheck] | None = None,
    min_speed: float = 1e-3,
    max_iter: int = 200,
) -> ArmFrictionFit[K]:
    """Identify friction joint by joint and collect the fits in a read-only table.

    Parameters
    ----------
    runs : mapping of joint key to (FrictionRun, FrictionRun)
        For each joint, its gravity-free run and its gravity-loaded run.
    model, exponent, min_speed, max_iter
        As :func:`identify_joint_friction`, the same for every joint.
    free_poses : mapping of joint key to GravityFreeCheck, optional
        Checks of the free poses; a joint whose free pose is not gravity-free is refused.

    Returns
    -------
    ArmFrictionFit
        A read-only mapping of joint key to :class:`JointFrictionFit`, in the order of `runs`;
        it pickles and compares by value.

    Raises
    ------
    ValueError
        If `runs` is empty, an entry is not a pair of runs, `free_poses` names a joint that is
        not in `runs` or holds something else than a GravityFreeCheck, or a joint's
        identification fails; the message starts with the joint's key and the error keeps its
        type.

    See Also
    --------
    identify_joint_friction : one joint.

    References
    ----------
    CN 107423515 B, claim 7 (the two-pose method repeated joint by joint up to the arm's number
    of degrees of freedom).

    Examples
    --------
    >>> from gravdir.friction import CoulombViscousFriction, LoadDependentFriction
    >>> v = np.tile(np.concatenate([np.geomspace(0.01, 1, 30), -np.geomspace(0.01, 1, 30)]), 2)
    >>> torque_g = np.linspace(-20.0, 30.0, v.size)
    >>> runs = {}
    >>> for j, mu in ((1, 0.02), (2, 0.05)):
    ...     f0 = CoulombViscousFriction(2.0 * j, 1.0)
    ...     torque_l = torque_g + LoadDependentFriction(f0, mu).evaluate(v, load=torque_g)
    ...     runs[j] = (
    ...         FrictionRun(v, torque=f0.evaluate(v)),
    ...         FrictionRun(v, torque=torque_l, gravity_torque=torque_g),
    ...     )
    >>> table = identify_arm_friction(runs, model="coulomb-viscous")
    >>> [round(table[j].load.load_coefficient, 9) for j in table]
    [0.02, 0.05]
    """
    if not isinstance(runs, Mapping) or len(runs) == 0:
        raise ValueError("Expected `runs` to be a non-empty mapping of joint to (free, loaded).")
    if free_poses is not None:
        if not isinstance(free_poses, Mapping):
            raise ValueError(
                f"Expected `free_poses` to be a mapping of joint to GravityFreeCheck, got "
                f"{type(free_poses).__name__}."
            )
        strays = [k for k in free_poses if k not in runs]
        if strays:
            raise ValueError(
                f"Expected `free_poses` to name joints of `runs`, got {strays!r} besides."
            )
        for key, check in free_poses.items():
            if not isinstance(check, GravityFreeCheck):
                raise ValueError(
                    f"Expected `free_poses` to map joint {key!r} to a GravityFreeCheck, got "
                    f"{type(check).__name__}."
                )
    joints: list[K] = []
    fits: list[JointFrictionFit] = []
    for key, pair in runs.items():
        if (
            not isinstance(pair, tuple)
            or len(pair) != 2
            or not all(isinstance(r, FrictionRun) for r in pair)
        ):
            raise ValueError(
                f"Expected `runs` to map joint {key!r} to a (free, loaded) pair of FrictionRun, "
                f"got {type(pair).__name__}."
            )
        pose = None if free_poses is None else free_poses.get(key)
        try:
            fit = identify_joint_friction(
                pair[0],
                pair[1],
                model=model,
                exponent=exponent,
                free_pose=pose,
                min_speed=min_speed,
                max_iter=max_iter,
            )
        except ValueError as exc:
            raise type(exc)(f"joint {key!r}: {exc}") from exc
        joints.append(key)
        fits.append(fit)
    return ArmFrictionFit(joints=tuple(joints), fits=tuple(fits))
