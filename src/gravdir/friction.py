"""Joint friction: models, excitation plans, identification and the gravity-load split (seed 003).

Friction is identified in two poses of the arm (seed 003). In the first pose gravity exerts no
torque on the target joint -- its axis is vertical, or the centre of mass of everything distal to
it lies on the axis line (:func:`gravity_free_check`). The joint follows an excitation plan
(:func:`excitation_trajectory`) and a friction model is fitted to the drive torque
(:func:`fit_friction`). In the second pose gravity loads the joint; the same plan is run again and
the drive torque minus the gravity torque minus the gravity-free friction is the friction that
grows with the load, fitted as :math:`\\mu |\\tau_g| \\operatorname{sgn} \\dot q`
(:func:`load_dependent_friction`). :func:`identify_arm_friction` repeats this joint by joint.

Conventions: radians, SI units; τ is the torque the actuator applies to the distal link about
+axis; the *gravity torque* :math:`\\tau_g` of a run is the part of the drive torque that holds the
distal links against gravity (minus the torque of gravity about +axis).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TypeAlias, TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import least_squares

from gravdir._checks import (
    DegenerateGeometryError,
    GravdirWarning,
    InsufficientDataError,
    check_array,
    check_option,
    check_positive,
    check_same_shape,
    check_scalar,
    check_unit_vector,
    check_vectors,
)

__all__ = [
    "AsymmetricStribeckFriction",
    "CoulombViscousFriction",
    "ExcitationPlan",
    "FrictionFit",
    "FrictionModel",
    "FrictionRun",
    "GravityFreeCheck",
    "JointFriction",
    "LoadDependentFriction",
    "LoadFrictionFit",
    "StribeckFriction",
    "excitation_trajectory",
    "fit_friction",
    "gravity_free_check",
    "identify_arm_friction",
    "identify_joint_friction",
    "load_dependent_friction",
]

STANDARD_GRAVITY = 9.80665
"""Standard acceleration of gravity, m/s²."""

FRICTION_MODELS = ("coulomb-viscous", "stribeck", "asymmetric-stribeck")
"""Model names accepted by :func:`fit_friction`."""

# Search box of the Stribeck exponent. Published fits of robot joints lie between about 0.5 and
# 2 (Armstrong-Helouvry 1994 uses 2, the Gaussian dip; many harmonic drives fit 1 or less); the
# box leaves a margin on both sides and keeps exp(-|v/v_s|^delta) well conditioned.
_EXPONENT_BOUNDS = (0.25, 5.0)
_EXPONENT_GRID = (0.5, 1.0, 2.0, 3.0)
# Number of log-spaced Stribeck velocities in the global start grid (one per ~12% of speed over
# the 0.005-1 rad/s range of a typical plan).
_VS_GRID_POINTS = 48


def _stribeck_shape(
    speed: NDArray[np.float64], stribeck_velocity: float, exponent: float
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Return e = exp(-(speed/v_s)^delta) and its derivatives by v_s and by delta."""
    u = speed / stribeck_velocity
    with np.errstate(divide="ignore"):
        log_u = np.where(u > 0, np.log(np.where(u > 0, u, 1.0)), 0.0)
    ud = np.exp(exponent * log_u) * (u > 0)
    e = np.exp(-ud)
    de_dvs = e * exponent * ud / stribeck_velocity
    de_ddelta = -e * ud * log_u
    return e, de_dvs, de_ddelta


# ---------------------------------------------------------------------------------------------
# Models
# ---------------------------------------------------------------------------------------------


def _check_load(load: ArrayLike | None) -> NDArray[np.float64] | None:
    return None if load is None else check_array(load, "load")


@dataclass(frozen=True)
class CoulombViscousFriction:
    """Coulomb plus viscous friction with a torque offset.

    :math:`\\tau_f = c_0 + F_c \\operatorname{sgn}(\\dot q) + F_v \\dot q`.

    Attributes
    ----------
    coulomb : float
        Coulomb level :math:`F_c`, N·m.
    viscous : float
        Viscous coefficient :math:`F_v`, N·m·s/rad.
    offset : float
        Torque offset :math:`c_0`, N·m (a sensor offset is indistinguishable from it).

    Examples
    --------
    >>> CoulombViscousFriction(coulomb=2.0, viscous=1.5).evaluate([-1.0, 0.0, 0.5])
    array([-3.5 ,  0.  ,  2.75])
    """

    coulomb: float
    viscous: float
    offset: float = 0.0

    def __post_init__(self) -> None:
        for name in ("coulomb", "viscous", "offset"):
            object.__setattr__(self, name, check_scalar(getattr(self, name), name))

    def evaluate(self, velocity: ArrayLike, load: ArrayLike | None = None) -> NDArray[np.float64]:
        """Friction torque at `velocity` (shape ``(...)``); `load` is accepted and not used.

        ``sgn(0) = 0``: at rest the curve gives the offset only (stiction is not modelled).
        """
        v = check_array(velocity, "velocity")
        _check_load(load)
        return self.offset + self.coulomb * np.sign(v) + self.viscous * v


@dataclass(frozen=True)
class StribeckFriction:
    """Symmetric Stribeck friction with viscous term and torque offset.

    :math:`\\tau_f = c_0 + [F_c + (F_s - F_c) e^{-|\\dot q / v_s|^{\\delta}}]
    \\operatorname{sgn}(\\dot q) + F_v \\dot q`.

    Attributes
    ----------
    coulomb : float
        Coulomb level :math:`F_c`, N·m.
    static : float
        Breakaway (static) level :math:`F_s`, N·m, reached as the speed tends to zero.
    stribeck_velocity : float
        Stribeck velocity :math:`v_s > 0`, rad/s.
    viscous : float
        Viscous coefficient :math:`F_v`, N·m·s/rad.
    exponent : float
        Stribeck exponent :math:`\\delta > 0` (2: Gaussian dip).
    offset : float
        Torque offset :math:`c_0`, N·m.

    Examples
    --------
    >>> m = StribeckFriction(coulomb=2.0, static=3.0, stribeck_velocity=0.05, viscous=1.0)
    >>> m.evaluate([1e-6, 0.05, 1.0]).round(4)
    array([3.    , 2.4179, 3.    ])
    """

    coulomb: float
    static: float
    stribeck_velocity: float
    viscous: float
    exponent: float = 2.0
    offset: float = 0.0

    def __post_init__(self) -> None:
        for name in ("coulomb", "static", "viscous", "offset"):
            object.__setattr__(self, name, check_scalar(getattr(self, name), name))
        for name in ("stribeck_velocity", "exponent"):
            object.__setattr__(self, name, check_positive(getattr(self, name), name))

    def evaluate(self, velocity: ArrayLike, load: ArrayLike | None = None) -> NDArray[np.float64]:
        """Friction torque at `velocity` (shape ``(...)``); `load` is accepted and not used."""
        v = check_array(velocity, "velocity")
        _check_load(load)
        e = _stribeck_shape(np.abs(v), self.stribeck_velocity, self.exponent)[0]
        level = self.coulomb + (self.static - self.coulomb) * e
        return self.offset + level * np.sign(v) + self.viscous * v


@dataclass(frozen=True)
class AsymmetricStribeckFriction:
    """Stribeck friction with separate parameters for each direction of motion.

    For :math:`\\dot q > 0`:
    :math:`\\tau_f = F_c^+ + (F_s^+ - F_c^+) e^{-|\\dot q/v_s^+|^{\\delta^+}} + F_v^+ \\dot q`;
    for :math:`\\dot q < 0`:
    :math:`\\tau_f = -[F_c^- + (F_s^- - F_c^-) e^{-|\\dot q/v_s^-|^{\\delta^-}}] + F_v^- \\dot q`.
    Levels are magnitudes (positive for a real
    joint). There is no separate offset: a constant torque offset :math:`c_0` is indistinguishable
    from an asymmetry of the levels (:math:`F_{c,s}^+ + c_0`, :math:`F_{c,s}^- - c_0`), so a fit
    returns the levels with the offset folded in.

    Attributes
    ----------
    coulomb_positive, coulomb_negative : float
        Coulomb levels, N·m.
    static_positive, static_negative : float
        Breakaway levels, N·m.
    stribeck_velocity_positive, stribeck_velocity_negative : float
        Stribeck velocities, rad/s, positive.
    viscous_positive, viscous_negative : float
        Viscous coefficients, N·m·s/rad.
    exponent_positive, exponent_negative : float
        Stribeck exponents, positive.

    Examples
    --------
    >>> m = AsymmetricStribeckFriction(2.0, 1.5, 3.0, 2.5, 0.05, 0.03, 1.0, 1.2)
    >>> m.evaluate([-1.0, 1.0]).round(4)
    array([-2.7,  3. ])
    """

    coulomb_positive: float
    coulomb_negative: float
    static_positive: float
    static_negative: float
    stribeck_velocity_positive: float
    stribeck_velocity_negative: float
    viscous_positive: float
    viscous_negative: float
    exponent_positive: float = 2.0
    exponent_negative: float = 2.0

    def __post_init__(self) -> None:
        for side in ("positive", "negative"):
            for stem in ("coulomb", "static", "viscous"):
                name = f"{stem}_{side}"
                object.__setattr__(self, name, check_scalar(getattr(self, name), name))
            for stem in ("stribeck_velocity", "exponent"):
                name = f"{stem}_{side}"
                object.__setattr__(self, name, check_positive(getattr(self, name), name))

    def evaluate(self, velocity: ArrayLike, load: ArrayLike | None = None) -> NDArray[np.float64]:
        """Friction torque at `velocity` (shape ``(...)``); `load` is accepted and not used."""
        v = check_array(velocity, "velocity")
        _check_load(load)
        speed = np.abs(v)
        ep = _stribeck_shape(speed, self.stribeck_velocity_positive, self.exponent_positive)[0]
        en = _stribeck_shape(speed, self.stribeck_velocity_negative, self.exponent_negative)[0]
        pos = self.coulomb_positive + (self.static_positive - self.coulomb_positive) * ep
        neg = self.coulomb_negative + (self.static_negative - self.coulomb_negative) * en
        return np.where(v > 0, pos + self.viscous_positive * v, 0.0) + np.where(
            v < 0, -neg + self.viscous_negative * v, 0.0
        )


BaseFrictionModel: TypeAlias = (
    CoulombViscousFriction | StribeckFriction | AsymmetricStribeckFriction
)


@dataclass(frozen=True)
class LoadDependentFriction:
    """A friction model plus a Coulomb term that grows with the gravity load.

    :math:`\\tau_f = \\tau_{f,0}(\\dot q) + \\mu |\\tau_g| \\operatorname{sgn}(\\dot q)`: the
    Coulomb level becomes :math:`F_c + \\mu |\\tau_g|`.

    Attributes
    ----------
    base : CoulombViscousFriction or StribeckFriction or AsymmetricStribeckFriction
        Friction without load.
    load_coefficient : float
        :math:`\\mu`, dimensionless (N·m of friction per N·m of gravity torque).

    Examples
    --------
    >>> m = LoadDependentFriction(CoulombViscousFriction(2.0, 1.0), load_coefficient=0.05)
    >>> m.evaluate([0.5, -0.5], load=[20.0, -20.0])
    array([ 3.5, -3.5])
    """

    base: BaseFrictionModel
    load_coefficient: float

    def __post_init__(self) -> None:
        if not isinstance(
            self.base, CoulombViscousFriction | StribeckFriction | AsymmetricStribeckFriction
        ):
            raise ValueError(
                "Expected `base` to be a CoulombViscousFriction, StribeckFriction or "
                f"AsymmetricStribeckFriction, got {type(self.base).__name__}."
            )
        object.__setattr__(
            self, "load_coefficient", check_scalar(self.load_coefficient, "load_coefficient")
        )

    def evaluate(self, velocity: ArrayLike, load: ArrayLike | None = None) -> NDArray[np.float64]:
        """Friction torque at `velocity` under gravity torque `load` (sign ignored), broadcast.

        Raises
        ------
        ValueError
            If `load` is missing or does not broadcast against `velocity`.
        """
        v = check_array(velocity, "velocity")
        if load is None:
            raise ValueError(
                "Expected `load` (the gravity torque, N·m) for a load-dependent model, got None."
            )
        g = check_array(load, "load")
        check_same_shape(velocity=v, load=g)
        return self.base.evaluate(v) + self.load_coefficient * np.abs(g) * np.sign(v)


FrictionModel: TypeAlias = (
    CoulombViscousFriction | StribeckFriction | AsymmetricStribeckFriction | LoadDependentFriction
)


# ---------------------------------------------------------------------------------------------
# Excitation plan
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class ExcitationPlan:
    """A sampled excitation trajectory: ramps and constant-speed passes at several speeds.

    Attributes
    ----------
    time : ndarray, shape (n,)
        Sample times, s, from 0.
    position, velocity, acceleration : ndarray, shape (n,)
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

    time: NDArray[np.float64]
    position: NDArray[np.float64]
    velocity: NDArray[np.float64]
    acceleration: NDArray[np.float64]
    speeds: NDArray[np.float64]
    speed_index: NDArray[np.int64]
    cruising: NDArray[np.bool_]
    duration: float

    def __repr__(self) -> str:
        lo, hi = float(np.min(self.position)), float(np.max(self.position))
        return (
            f"ExcitationPlan({self.speeds.size} speeds {float(self.speeds.min()):.4g}-"
            f"{float(self.speeds.max()):.4g} rad/s, {self.time.size} samples, "
            f"duration {self.duration:.1f} s, range {np.degrees(lo):.1f}°..{np.degrees(hi):.1f}°)"
        )


def excitation_trajectory(
    q_min: float,
    q_max: float,
    speeds: ArrayLike,
    *,
    max_acceleration: float,
    sample_time: float,
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
        Joint range the plan must stay in, rad, ``q_min < q_max``.
    speeds : array_like, shape (k,)
        Cruise speeds, rad/s, positive, e.g. ``np.geomspace(0.005, 1.0, 8)``.
    max_acceleration : float
        The bound on the acceleration, rad/s²; the ramps use it exactly.
    sample_time : float
        Sample interval, s.
    cruise_time : float, optional
        Longest constant-speed time of a pass, s. By default every pass covers the whole range,
        which takes ``(q_max - q_min) / speed`` at slow speeds; a cruise time bounds the plan's
        length.
    repeats : int, optional
        Forward-backward pairs per speed (default 1).

    Returns
    -------
    ExcitationPlan
        Sampled position, velocity and acceleration, the speeds and the duration.

    Raises
    ------
    ValueError
        If a speed cannot be reached and left within the range: the ramps need
        ``speed**2 / max_acceleration`` of travel. Also for a non-positive argument.

    Notes
    -----
    Seed 003, claim 3: while the joint is slower than the set speed it accelerates with an
    acceleration below a bound; at the set speed it moves uniformly. Here a pass of speed
    :math:`v` and length :math:`d` has ramps of time :math:`v/a` and length :math:`v^2/(2a)` each
    and a cruise of length :math:`d - v^2/a`, with :math:`d = \\min(q_{max} - q_{min},
    v^2/a + v\\,t_c)`.

    References
    ----------
    Seed ``003_a9e7b6dca4bd51db.txt`` (CN107423515B), claim 3.

    Examples
    --------
    >>> plan = excitation_trajectory(0.0, 1.0, [0.1, 0.5], max_acceleration=1.0, sample_time=0.01)
    >>> round(plan.duration, 3), float(plan.velocity.max()), float(plan.position.max())
    (25.2, 0.5, 1.0)
    """
    lo = check_scalar(q_min, "q_min")
    hi = check_scalar(q_max, "q_max")
    if not hi > lo:
        raise ValueError(f"Expected `q_max` > `q_min`, got q_min={lo!r}, q_max={hi!r}.")
    v_all = check_array(speeds, "speeds")
    if v_all.ndim != 1 or v_all.size == 0:
        raise ValueError(f"Expected `speeds` to have shape (k,) with k >= 1, got {v_all.shape}.")
    if np.any(v_all <= 0):
        raise ValueError(f"Expected `speeds` to be positive, got min {float(v_all.min())!r}.")
    acc = check_positive(max_acceleration, "max_acceleration")
    dt = check_positive(sample_time, "sample_time")
    if cruise_time is not None:
        cruise_time = check_positive(cruise_time, "cruise_time", allow_zero=True)
    if not isinstance(repeats, int | np.integer) or repeats < 1:
        raise ValueError(f"Expected `repeats` to be a positive integer, got {repeats!r}.")
    span = hi - lo
    need = v_all**2 / acc
    if np.any(need > span):
        vmax = math.sqrt(acc * span)
        raise ValueError(
            f"Expected `speeds` reachable within the range: ramps at max_acceleration={acc:g} "
            f"allow at most {vmax:.4g} rad/s over {span:.4g} rad, got {float(v_all.max()):.4g}."
        )

    # Piecewise-constant acceleration segments: start time, start position, start speed, accel.
    t0s: list[float] = []
    q0s: list[float] = []
    v0s: list[float] = []
    a0s: list[float] = []
    idx: list[int] = []
    cru: list[bool] = []
    t, q = 0.0, lo
    for k, v in enumerate(v_all.tolist()):
        d = span if cruise_time is None else min(span, v * v / acc + v * cruise_time)
        t_ramp = v / acc
        t_cruise = (d - v * v / acc) / v
        for _ in range(int(repeats)):
            for sign in (1.0, -1.0):
                for v_start, a, dur, is_cruise in (
                    (0.0, sign * acc, t_ramp, False),
                    (sign * v, 0.0, t_cruise, True),
                    (sign * v, -sign * acc, t_ramp, False),
                ):
                    if dur <= 0:
                        continue
                    t0s.append(t)
                    q0s.append(q)
                    v0s.append(v_start)
                    a0s.append(a)
                    idx.append(k)
                    cru.append(is_cruise)
                    q += v_start * dur + 0.5 * a * dur * dur
                    t += dur
    duration = t
    n = int(math.floor(duration / dt + 1e-9)) + 1
    time = np.arange(n, dtype=np.float64) * dt
    seg = np.clip(np.searchsorted(np.asarray(t0s), time, side="right") - 1, 0, len(t0s) - 1)
    tau = time - np.asarray(t0s)[seg]
    a_s = np.asarray(a0s)[seg]
    v_s = np.asarray(v0s)[seg] + a_s * tau
    q_s = np.asarray(q0s)[seg] + np.asarray(v0s)[seg] * tau + 0.5 * a_s * tau**2
    # Rounding can leave a few 1e-16 excursions past the range ends.
    q_s = np.clip(q_s, lo, hi)
    return ExcitationPlan(
        time=time,
        position=q_s,
        velocity=v_s,
        acceleration=a_s,
        speeds=v_all.copy(),
        speed_index=np.asarray(idx, dtype=np.int64)[seg],
        cruising=np.asarray(cru, dtype=bool)[seg],
        duration=duration,
    )


# ---------------------------------------------------------------------------------------------
# Identification
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class FrictionFit:
    """Result of :func:`fit_friction`.

    Attributes
    ----------
    model : FrictionModel
        The fitted friction curve; ``model.evaluate(velocity)`` (and ``load=`` for a
        load-dependent fit).
    model_name : str
        ``"coulomb-viscous"``, ``"stribeck"`` or ``"asymmetric-stribeck"``.
    inertia : float or None
        Fitted inertia :math:`J`, kg·m², or None when no acceleration was given.
    parameter_names : tuple of str
        Names of the estimated parameters, in the order of `parameters`.
    parameters : ndarray, shape (p,)
        Estimated parameters (N·m, N·m·s/rad, rad/s, kg·m², dimensionless).
    covariance : ndarray, shape (p, p)
        Their covariance, :math:`\\hat\\sigma^2 (J^\\top J)^{-1}` with the Jacobian of the model
        at the optimum (the delta method).
    residuals : ndarray, shape (m,)
        Torque minus model at the `m` samples used, N·m.
    mask : ndarray of bool, shape (n,)
        Which input samples were used (``|velocity| >= min_speed``).
    residual_rms : float
        Root mean square of `residuals`, N·m.
    min_speed : float
        The stiction threshold used, rad/s.
    """

    model: FrictionModel
    model_name: str
    inertia: float | None
    parameter_names: tuple[str, ...]
    parameters: NDArray[np.float64]
    covariance: NDArray[np.float64]
    residuals: NDArray[np.float64]
    mask: NDArray[np.bool_]
    residual_rms: float
    min_speed: float

    @property
    def standard_errors(self) -> NDArray[np.float64]:
        """Square roots of the covariance diagonal, shape (p,)."""
        return np.sqrt(np.clip(np.diag(self.covariance), 0.0, None))

    def parameter(self, name: str) -> float:
        """The estimate of the parameter called `name`."""
        check_option(name, "name", self.parameter_names)
        return float(self.parameters[self.parameter_names.index(name)])

    def predict(
        self,
        velocity: ArrayLike,
        acceleration: ArrayLike | None = None,
        load: ArrayLike | None = None,
    ) -> NDArray[np.float64]:
        """Torque of the fitted model (friction plus inertia), shape of `velocity`.

        Gravity torque is not included: `load` only feeds a load-dependent friction term.

        Raises
        ------
        ValueError
            If the fit includes inertia and `acceleration` is missing, or a load-dependent fit
            gets no `load`.
        """
        v = check_array(velocity, "velocity")
        out = self.model.evaluate(v, load=load)
        if self.inertia is not None:
            if acceleration is None:
                raise ValueError(
                    "Expected `acceleration`: the fit includes an inertia term, got None."
                )
            a = check_array(acceleration, "acceleration")
            check_same_shape(velocity=v, acceleration=a)
            out = out + self.inertia * a
        return out

    def __repr__(self) -> str:
        se = self.standard_errors
        terms = ", ".join(
            f"{n}={p:.5g}±{s:.2g}"
            for n, p, s in zip(self.parameter_names, self.parameters, se, strict=True)
        )
        return (
            f"FrictionFit({self.model_name!r}, {terms}; rms={self.residual_rms:.3g} N·m, "
            f"{int(self.mask.sum())}/{self.mask.size} samples)"
        )


class _Design:
    """Columns of one friction model: linear columns X(p) and their derivatives by p."""

    def __init__(
        self,
        kind: str,
        velocity: NDArray[np.float64],
        acceleration: NDArray[np.float64] | None,
        load: NDArray[np.float64] | None,
        exponent: float | None,
    ) -> None:
        self.kind = kind
        self.v = velocity
        self.s = np.sign(velocity)
        self.speed = np.abs(velocity)
        self.pos = (velocity > 0).astype(np.float64)
        self.neg = (velocity < 0).astype(np.float64)
        self.fixed_exponent = exponent
        extras: list[NDArray[np.float64]] = []
        extra_names: list[str] = []
        if acceleration is not None:
            extras.append(acceleration)
            extra_names.append("inertia")
        if load is not None:
            extras.append(np.abs(load) * self.s)
            extra_names.append("load_coefficient")
        self.extras = extras
        self.extra_names = extra_names
        if kind == "coulomb-viscous":
            self.linear_names = ["offset", "coulomb", "viscous"]
            self.all_nonlinear: list[str] = []
        elif kind == "stribeck":
            self.linear_names = ["offset", "coulomb", "static", "viscous"]
            self.all_nonlinear = ["stribeck_velocity", "exponent"]
        else:
            self.linear_names = [
                "coulomb_positive",
                "static_positive",
                "viscous_positive",
                "coulomb_negative",
                "static_negative",
                "viscous_negative",
            ]
            self.all_nonlinear = [
                "stribeck_velocity_positive",
                "exponent_positive",
                "stribeck_velocity_negative",
                "exponent_negative",
            ]
        free = [
            i
            for i, n in enumerate(self.all_nonlinear)
            if not (n.startswith("exponent") and exponent is not None)
        ]
        self.free = free
        self.nonlinear_names = [self.all_nonlinear[i] for i in free]
        self.names = self.linear_names + extra_names + self.nonlinear_names

    def full_nonlinear(self, p_free: NDArray[np.float64]) -> NDArray[np.float64]:
        full = np.full(len(self.all_nonlinear), np.nan)
        full[self.free] = p_free
        for i, n in enumerate(self.all_nonlinear):
            if n.startswith("exponent") and self.fixed_exponent is not None:
                full[i] = self.fixed_exponent
        return full

    def fixed_columns(self) -> list[NDArray[np.float64]]:
        """Columns that do not depend on the nonlinear parameters, for the grid search."""
        if self.kind == "stribeck":
            return [np.ones_like(self.v), self.s, self.v, *self.extras]
        return [self.pos, self.pos * self.v, -self.neg, self.neg * self.v, *self.extras]

    def columns(
        self, p_free: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], list[NDArray[np.float64]]]:
        """Design matrix X (n, k) and dX/dp for each free nonlinear parameter."""
        v, s = self.v, self.s
        zero = np.zeros_like(v)
        if self.kind == "coulomb-viscous":
            cols = [np.ones_like(v), s, v]
            return np.column_stack(cols + self.extras), []
        p = self.full_nonlinear(p_free)
        nx = len(self.extras)
        derivs: list[list[NDArray[np.float64]]] = []
        if self.kind == "stribeck":
            e, dv, dd = _stribeck_shape(self.speed, p[0], p[1])
            cols = [np.ones_like(v), s * (1 - e), s * e, v]
            for de in (dv, dd):
                derivs.append([zero, -s * de, s * de, zero] + [zero] * nx)
        else:
            ep, dvp, ddp = _stribeck_shape(self.speed, p[0], p[1])
            en, dvn, ddn = _stribeck_shape(self.speed, p[2], p[3])
            P, N = self.pos, self.neg
            cols = [P * (1 - ep), P * ep, P * v, -N * (1 - en), -N * en, N * v]
            for de in (dvp, ddp):
                derivs.append([-P * de, P * de, zero, zero, zero, zero] + [zero] * nx)
            for de in (dvn, ddn):
                derivs.append([zero, zero, zero, N * de, -N * de, zero] + [zero] * nx)
        x = np.column_stack(cols + self.extras)
        return x, [np.column_stack(derivs[i]) for i in self.free]

    def jacobian(
        self, p_free: NDArray[np.float64], theta: NDArray[np.float64]
    ) -> NDArray[np.float64]:
        """Jacobian of the model torque by all parameters (linear, then free nonlinear)."""
        x, dx = self.columns(p_free)
        return np.column_stack([x] + [d @ theta for d in dx])

    def model(self, theta: NDArray[np.float64], p_free: NDArray[np.float64]) -> FrictionModel:
        p = self.full_nonlinear(p_free)
        t = [float(x) for x in theta]
        base: BaseFrictionModel
        if self.kind == "coulomb-viscous":
            base = CoulombViscousFriction(coulomb=t[1], viscous=t[2], offset=t[0])
        elif self.kind == "stribeck":
            base = StribeckFriction(
                coulomb=t[1],
                static=t[2],
                stribeck_velocity=float(p[0]),
                viscous=t[3],
                exponent=float(p[1]),
                offset=t[0],
            )
        else:
            base = AsymmetricStribeckFriction(
                coulomb_positive=t[0],
                coulomb_negative=t[3],
                static_positive=t[1],
                static_negative=t[4],
                stribeck_velocity_positive=float(p[0]),
                stribeck_velocity_negative=float(p[2]),
                viscous_positive=t[2],
                viscous_negative=t[5],
                exponent_positive=float(p[1]),
                exponent_negative=float(p[3]),
            )
        if "load_coefficient" in self.extra_names:
            mu = t[len(self.linear_names) + self.extra_names.index("load_coefficient")]
            return LoadDependentFriction(base, mu)
        return base


def _orthonormal_basis(cols: list[NDArray[np.float64]], names: list[str]) -> NDArray[np.float64]:
    """Orthonormal basis of the span of `cols`; InsufficientDataError naming collinear columns."""
    x = np.column_stack(cols)
    norms = np.linalg.norm(x, axis=0)
    for n, nm in zip(norms, names, strict=True):
        if n == 0:
            raise InsufficientDataError(
                f"Expected the `{nm}` column to be non-zero over the samples used, got all zeros."
            )
    xs = x / norms
    u, sv, vt = np.linalg.svd(xs, full_matrices=False)
    # Columns scaled to unit norm: a singular-value ratio below 1e-9 means one column is a
    # combination of the others to within double-precision round-off of a few thousand samples.
    if sv[-1] < 1e-9 * sv[0]:
        w = np.abs(vt[-1])
        involved = [nm for nm, wi in zip(names, w, strict=True) if wi > 0.1]
        raise InsufficientDataError(
            "Expected the data to separate the terms "
            + ", ".join(f"`{n}`" for n in involved)
            + f", got collinear columns (singular-value ratio {sv[-1] / sv[0]:.1e})."
        )
    return u


def _distinct(values: NDArray[np.float64], resolution: float) -> int:
    """Number of distinct velocities, grouping those within a relative `resolution`."""
    if values.size == 0:
        return 0
    key = np.sign(values) * (np.round(np.log(np.abs(values)) / math.log1p(resolution)) + 1e6)
    return int(np.unique(key).size)


def _grid_costs(
    q0: NDArray[np.float64],
    r0: NDArray[np.float64],
    speed: NDArray[np.float64],
    sign_col: NDArray[np.float64],
    vs_grid: NDArray[np.float64],
    exps: tuple[float, ...],
) -> tuple[float, float]:
    """Best (v_s, delta) over a grid for one variable column sign_col * e(v_s, delta)."""
    log_u = np.log(np.where(speed > 0, speed, 1.0))[:, None] - np.log(vs_grid)[None, :]
    best_gain, best = -1.0, (float(vs_grid[0]), exps[0])
    for d in exps:
        w = sign_col[:, None] * np.exp(-np.exp(d * log_u))
        wp = w - q0 @ (q0.T @ w)
        nn = np.einsum("ij,ij->j", wp, wp)
        ok = nn > 1e-300
        gain = np.where(ok, (wp.T @ r0) ** 2 / np.where(ok, nn, 1.0), 0.0)
        i = int(np.argmax(gain))
        if gain[i] > best_gain:
            best_gain, best = float(gain[i]), (float(vs_grid[i]), d)
    return best


def _check_velocity(velocity: ArrayLike) -> NDArray[np.float64]:
    v = check_array(velocity, "velocity")
    if v.ndim != 1:
        raise ValueError(f"Expected `velocity` to have shape (n,), got {v.shape}.")
    return v


def _check_like_velocity(x: ArrayLike, name: str, v: NDArray[np.float64]) -> NDArray[np.float64]:
    """`x` as a float array of the shape of the (validated) velocity series `v`."""
    arr = check_array(x, name)
    if arr.shape != v.shape:
        raise ValueError(
            f"Expected `{name}` to have the shape of `velocity` {v.shape}, got {arr.shape}."
        )
    return arr


def fit_friction(
    velocity: ArrayLike,
    torque: ArrayLike,
    *,
    model: str = "stribeck",
    acceleration: ArrayLike | None = None,
    gravity_torque: ArrayLike | None = None,
    exponent: float | None = None,
    min_speed: float = 1e-3,
    speed_resolution: float = 0.05,
) -> FrictionFit:
    """Fit a friction model (optionally with inertia and load dependence) to joint torque.

    Parameters
    ----------
    velocity : array_like, shape (n,)
        Joint speed, rad/s.
    torque : array_like, shape (n,)
        Drive torque, N·m.
    model : {"stribeck", "coulomb-viscous", "asymmetric-stribeck"}
        The friction model (see :class:`StribeckFriction`, :class:`CoulombViscousFriction`,
        :class:`AsymmetricStribeckFriction`).
    acceleration : array_like, shape (n,), optional
        Joint acceleration, rad/s². When given, the torque model gains :math:`J \\ddot q` and the
        inertia :math:`J` is estimated (the ramps of an excitation plan then carry information).
    gravity_torque : array_like, shape (n,), optional
        Gravity torque of a loaded run, N·m. When given it is subtracted from `torque` and the
        model gains :math:`\\mu |\\tau_g| \\operatorname{sgn} \\dot q`: the fitted model is a
        :class:`LoadDependentFriction` and `load_coefficient` is estimated in one fit.
    exponent : float, optional
        Fixed Stribeck exponent :math:`\\delta`. By default it is estimated.
    min_speed : float, optional
        Stiction threshold, rad/s (default 1e-3). Samples with ``|velocity| < min_speed`` are
        not used: there the joint sticks or creeps (pre-sliding, Dahl/LuGre regime) and torque
        is not a function of speed. 1e-3 rad/s is a fifth of the slowest speed of a typical
        plan (0.005 rad/s) and several encoder counts per sample on a 1 kHz loop.
    speed_resolution : float, optional
        Relative difference below which two velocities count as one speed when checking that
        the data hold enough distinct speeds (default 0.05: differentiated encoder velocity at
        a constant commanded speed jitters by a few per cent).

    Returns
    -------
    FrictionFit
        Model, parameters, covariance, residuals and residual RMS.

    Raises
    ------
    ValueError
        On shape mismatch, non-finite input or unknown `model`.
    InsufficientDataError
        If the samples used move in only one direction, hold fewer distinct speeds than the
        model has speed-dependent parameters, do not outnumber the parameters, or leave two
        columns collinear (e.g. an `acceleration` that is zero throughout).

    Warns
    -----
    GravdirWarning
        If a Stribeck velocity or exponent ends on the edge of its search box, or a Stribeck
        velocity's relative standard error exceeds 50%: the data do not resolve the dip.

    Notes
    -----
    The model is :math:`\\tau = X(p)\\,\\theta + \\varepsilon`: the linear parameters
    :math:`\\theta` (offset, levels, viscous coefficients, inertia, load coefficient) enter
    through the columns of :math:`X`, the Stribeck velocity and exponent :math:`p` only through
    :math:`e = \\exp(-|\\dot q/v_s|^{\\delta})`. Variable projection (Golub and Pereyra)
    eliminates :math:`\\theta`: for fixed :math:`p`,
    :math:`\\hat\\theta(p) = X^{+}\\tau`, and :math:`p` minimises
    :math:`\\|(I - X X^{+})\\tau\\|^2`. A grid over :math:`\\log v_s` (and a few exponents) gives
    the global start -- cheap because only the column :math:`\\operatorname{sgn}(\\dot q)\\,e`
    changes across the grid -- and a bounded Gauss-Newton search (scipy ``least_squares``)
    polishes it. The covariance is :math:`\\hat\\sigma^2 (J^\\top J)^{-1}` with
    :math:`J = [X,\\ \\partial (X\\theta)/\\partial p]` at the optimum and
    :math:`\\hat\\sigma^2 = \\mathrm{RSS}/(m - k)`.

    Only one-dimensional series are supported (no batch axes).

    References
    ----------
    Seed ``003_a9e7b6dca4bd51db.txt`` (CN107423515B), claims 1-2. G. H. Golub and V. Pereyra,
    "The differentiation of pseudo-inverses and nonlinear least squares problems whose variables
    separate", SIAM J. Numer. Anal. 10 (1973).

    Examples
    --------
    >>> v = np.concatenate([np.geomspace(0.005, 1, 40), -np.geomspace(0.005, 1, 40)])
    >>> truth = StribeckFriction(2.0, 3.0, 0.05, 1.5, exponent=2.0, offset=0.1)
    >>> fit = fit_friction(v, truth.evaluate(v), model="stribeck")
    >>> np.allclose(fit.parameters, [0.1, 2.0, 3.0, 1.5, 0.05, 2.0])
    True
    """
    kind = check_option(model, "model", FRICTION_MODELS)
    v_all = _check_velocity(velocity)
    tau_all = _check_like_velocity(torque, "torque", v_all)
    a_all = (
        None if acceleration is None else _check_like_velocity(acceleration, "acceleration", v_all)
    )
    g_all = (
        None
        if gravity_torque is None
        else _check_like_velocity(gravity_torque, "gravity_torque", v_all)
    )
    if exponent is not None:
        if kind == "coulomb-viscous":
            raise ValueError(
                f"Expected `exponent` to be None for model 'coulomb-viscous', got {exponent!r}."
            )
        exponent = check_positive(exponent, "exponent")
    v_min = check_positive(min_speed, "min_speed")
    resolution = check_positive(speed_resolution, "speed_resolution")

    mask = np.abs(v_all) >= v_min
    v = v_all[mask]
    tau = tau_all[mask] if g_all is None else (tau_all - g_all)[mask]
    a = None if a_all is None else a_all[mask]
    g = None if g_all is None else g_all[mask]

    n_pos = int(np.count_nonzero(v > 0))
    n_neg = int(np.count_nonzero(v < 0))
    if n_pos == 0 or n_neg == 0:
        which = "positive" if n_neg == 0 else "negative"
        if n_pos == 0 and n_neg == 0:
            which = "none at or above min_speed"
        raise InsufficientDataError(
            f"Expected `velocity` to hold samples in both directions with |velocity| >= "
            f"min_speed={v_min:g}, got {which} only ({n_pos} positive, {n_neg} negative): the "
            "offset (or per-direction levels) cannot be separated from Coulomb friction."
        )
    design = _Design(kind, v, a, g, exponent)
    k = len(design.names)
    if kind == "asymmetric-stribeck":
        per_side = 3 + len(design.free) // 2
        for side, vals in (("positive", v[v > 0]), ("negative", v[v < 0])):
            got = _distinct(vals, resolution)
            if got < per_side:
                raise InsufficientDataError(
                    f"Expected `velocity` to hold at least {per_side} distinct {side} speeds for "
                    f"an 'asymmetric-stribeck' fit, got {got} (speeds within "
                    f"{resolution:g} relative count as one)."
                )
    else:
        need = len(design.linear_names) + len(design.free)
        got = _distinct(v, resolution)
        if got < need:
            raise InsufficientDataError(
                f"Expected `velocity` to hold at least {need} distinct velocities for a "
                f"{kind!r} fit, got {got} (speeds within {resolution:g} relative count as one)."
            )
    if v.size <= k:
        raise InsufficientDataError(
            f"Expected more samples with |velocity| >= min_speed than the {k} parameters, got "
            f"{v.size}."
        )

    p_hat = np.zeros(0)
    bounds_lo = np.zeros(0)
    bounds_hi = np.zeros(0)
    if kind != "coulomb-viscous":
        fixed_names = (
            ["offset", "coulomb", "viscous"]
            if kind == "stribeck"
            else ["coulomb_positive", "viscous_positive", "coulomb_negative", "viscous_negative"]
        ) + design.extra_names
        q0 = _orthonormal_basis(design.fixed_columns(), fixed_names)
        r0 = tau - q0 @ (q0.T @ tau)
        exps = (exponent,) if exponent is not None else _EXPONENT_GRID
        sides: list[tuple[NDArray[np.float64], NDArray[np.float64]]]
        if kind == "stribeck":
            sides = [(design.s, design.speed)]
        else:
            sides = [(design.pos, design.speed), (-design.neg, design.speed)]
        start: list[float] = []
        lo_b: list[float] = []
        hi_b: list[float] = []
        for sign_col, speed in sides:
            sp = speed[sign_col != 0]
            # v_s is searched from half the slowest to twice the fastest speed used: outside,
            # the dip is flat over the data and v_s is not identified.
            vs_lo, vs_hi = 0.5 * float(sp.min()), 2.0 * float(sp.max())
            grid = np.geomspace(vs_lo, vs_hi, _VS_GRID_POINTS)
            vs0, d0 = _grid_costs(q0, r0, speed, sign_col, grid, exps)
            start.append(math.log(vs0))
            lo_b.append(math.log(vs_lo))
            hi_b.append(math.log(vs_hi))
            if exponent is None:
                start.append(math.log(d0))
                lo_b.append(math.log(_EXPONENT_BOUNDS[0]))
                hi_b.append(math.log(_EXPONENT_BOUNDS[1]))
        bounds_lo, bounds_hi = np.array(lo_b), np.array(hi_b)
        x0 = np.clip(np.array(start), bounds_lo, bounds_hi)

        def projected(x: NDArray[np.float64]) -> NDArray[np.float64]:
            xmat = design.columns(np.exp(x))[0]
            coef, *_ = np.linalg.lstsq(xmat, tau, rcond=None)
            return tau - xmat @ coef

        def projected_jac(x: NDArray[np.float64]) -> NDArray[np.float64]:
            # Kaufman's approximation of the variable-projection Jacobian: -(I - P) dX/dp theta.
            p = np.exp(x)
            xmat, dx = design.columns(p)
            qx, _ = np.linalg.qr(xmat)
            coef, *_ = np.linalg.lstsq(xmat, tau, rcond=None)
            cols = [d @ coef * pi for d, pi in zip(dx, p, strict=True)]
            jm = np.column_stack(cols)
            out: NDArray[np.float64] = -(jm - qx @ (qx.T @ jm))
            return out

        sol = least_squares(
            projected,
            x0,
            jac=projected_jac,
            bounds=(bounds_lo, bounds_hi),
            method="trf",
            xtol=1e-14,
            ftol=1e-14,
            gtol=1e-14,
            max_nfev=200,
        )
        p_hat = np.asarray(np.exp(sol.x), dtype=np.float64)
        at_edge = (np.abs(sol.x - bounds_lo) < 1e-6) | (np.abs(sol.x - bounds_hi) < 1e-6)
    else:
        at_edge = np.zeros(0, dtype=bool)

    xmat = design.columns(p_hat)[0]
    _orthonormal_basis(list(xmat.T), design.linear_names + design.extra_names)
    theta = np.asarray(np.linalg.lstsq(xmat, tau, rcond=None)[0], dtype=np.float64)
    resid = tau - xmat @ theta
    jac = design.jacobian(p_hat, theta)
    dof = v.size - k
    sigma2 = float(resid @ resid) / dof
    jtj = jac.T @ jac
    scale = np.sqrt(np.diag(jtj))
    if np.any(scale == 0):
        raise InsufficientDataError("Expected every parameter to affect the torque, got none.")
    jn = jtj / np.outer(scale, scale)
    if np.linalg.cond(jn) > 1e12:
        raise InsufficientDataError(
            "Expected the data to determine every parameter of the "
            f"{kind!r} model, got a singular information matrix at the optimum."
        )
    cov = sigma2 * np.linalg.inv(jn) / np.outer(scale, scale)
    params = np.concatenate([theta, p_hat])
    n_lin = theta.size
    # A Stribeck velocity with a relative standard error above 50% (or on the edge of its search
    # box) is not resolved by the data: the fit is still returned, with a warning.
    unresolved = [
        n
        for i, n in enumerate(design.nonlinear_names)
        if at_edge[i]
        or (
            n.startswith("stribeck_velocity")
            and math.sqrt(max(cov[n_lin + i, n_lin + i], 0.0)) > 0.5 * p_hat[i]
        )
    ]
    if unresolved:
        warnings.warn(
            "The data do not resolve the Stribeck dip: "
            + ", ".join(f"`{n}`" for n in unresolved)
            + " is on the edge of its search box or uncertain by more than 50%.",
            GravdirWarning,
            stacklevel=2,
        )
    fitted = design.model(theta, p_hat)
    inertia = None
    if "inertia" in design.extra_names:
        inertia = float(theta[len(design.linear_names) + design.extra_names.index("inertia")])
    return FrictionFit(
        model=fitted,
        model_name=kind,
        inertia=inertia,
        parameter_names=tuple(design.names),
        parameters=params,
        covariance=cov,
        residuals=resid,
        mask=mask,
        residual_rms=float(np.sqrt(np.mean(resid**2))),
        min_speed=v_min,
    )


def _fit_jacobian(
    fit: FrictionFit, velocity: NDArray[np.float64], acceleration: NDArray[np.float64] | None
) -> NDArray[np.float64]:
    """Jacobian of ``fit.predict`` by ``fit.parameters`` at new samples."""
    names = fit.parameter_names
    base = fit.model
    if isinstance(base, LoadDependentFriction):
        raise ValueError("Expected a fit without a load-dependent term, got a load-dependent fit.")
    if isinstance(base, StribeckFriction) and "exponent" not in names:
        exponent: float | None = base.exponent
    elif isinstance(base, AsymmetricStribeckFriction) and "exponent_positive" not in names:
        exponent = base.exponent_positive
    else:
        exponent = None
    design = _Design(fit.model_name, velocity, acceleration, None, exponent)
    n_lin = len(design.linear_names) + len(design.extra_names)
    return design.jacobian(fit.parameters[n_lin:], fit.parameters[:n_lin])


# ---------------------------------------------------------------------------------------------
# Two-pose procedure
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GravityFreeCheck:
    """Verdict of :func:`gravity_free_check` on one pose.

    Attributes
    ----------
    is_gravity_free : bool
        Whether `residual_fraction` is at most `tolerance`.
    residual_fraction : float
        Peak gravity torque about the axis as the joint turns, divided by
        :math:`m g |c - p|`, the largest torque gravity can exert on the distal body about any
        axis through the point `p`. 0 for a vertical axis or a centre of mass on the axis line.
    gravity_torque_amplitude : float
        The peak gravity torque about the axis as the joint turns, N·m.
    axis_tilt : float
        Angle between the joint axis line and the vertical, rad, in [0, π/2].
    distance_from_axis : float
        Distance of the centre of mass from the axis line, m.
    tolerance : float
        The tolerance used.
    reason : str
        Why the pose is or is not gravity-free, in words.
    """

    is_gravity_free: bool
    residual_fraction: float
    gravity_torque_amplitude: float
    axis_tilt: float
    distance_from_axis: float
    tolerance: float
    reason: str

    def __repr__(self) -> str:
        return (
            f"GravityFreeCheck(is_gravity_free={self.is_gravity_free}, "
            f"residual_fraction={self.residual_fraction:.3g}, "
            f"gravity_torque_amplitude={self.gravity_torque_amplitude:.3g} N·m, "
            f"axis_tilt={math.degrees(self.axis_tilt):.2f}°, "
            f"distance_from_axis={self.distance_from_axis:.4g} m)"
        )


def gravity_free_check(
    up: ArrayLike,
    axis: ArrayLike,
    point: ArrayLike,
    center_of_mass: ArrayLike,
    mass: float,
    *,
    tolerance: float = 0.01,
    gravity: float = STANDARD_GRAVITY,
) -> GravityFreeCheck:
    """Check that gravity exerts (almost) no torque on a joint in a pose (seed 003, claim 5).

    Parameters
    ----------
    up : array_like, shape (3,)
        Unit vector opposite to gravity, base frame.
    axis : array_like, shape (3,)
        Joint axis direction in the base frame (normalised here).
    point : array_like, shape (3,)
        A point on the joint axis, m, base frame (e.g. the joint centre).
    center_of_mass : array_like, shape (3,)
        Centre of mass of everything distal to the joint, m, base frame.
    mass : float
        Its mass, kg.
    tolerance : float, optional
        Largest accepted `residual_fraction` (default 0.01). At 1% the residual gravity torque
        is of the order of the torque noise of a current-based estimate (0.5% of the peak
        gravity torque) and the load-dependent friction it causes (at most ~5% of the load) is
        below 0.05% of the loaded pose's gravity torque.
    gravity : float, optional
        Acceleration of gravity, m/s² (default 9.80665).

    Returns
    -------
    GravityFreeCheck
        The verdict, the residual fraction and the geometry behind it.

    Raises
    ------
    ValueError
        If a vector is not shape (3,) and finite, `up` is not unit, `axis` is zero, or `mass`,
        `tolerance`, `gravity` are not positive.

    Notes
    -----
    With :math:`a` the unit axis, :math:`r = c - p` and :math:`r_\\perp = r - (a^\\top r) a`
    (length :math:`\\rho`, the distance from the axis line), the gravity torque about the axis
    is :math:`m g\\, a^\\top (r_\\perp \\times (-u))`. As the joint turns, :math:`r_\\perp`
    rotates about :math:`a` and the torque is a sinusoid of amplitude
    :math:`m g \\rho \\,|a \\times u|`. It vanishes when the axis is vertical
    (:math:`|a \\times u| = 0`) or the centre of mass is on the axis line (:math:`\\rho = 0`):
    the two gravity-free poses of the seed. The residual fraction divides the amplitude by
    :math:`m g |r|`.

    References
    ----------
    Seed ``003_a9e7b6dca4bd51db.txt`` (CN107423515B), claims 1, 5 and 6.

    Examples
    --------
    >>> chk = gravity_free_check([0, 0, 1], [0, 0, 1], [0, 0, 0.3], [0.4, 0, 0.5], mass=5.0)
    >>> chk.is_gravity_free, chk.residual_fraction
    (True, 0.0)
    >>> chk = gravity_free_check([0, 0, 1], [0, 1, 0], [0, 0, 0.3], [0.4, 0, 0.3], mass=5.0)
    >>> chk.is_gravity_free, round(chk.gravity_torque_amplitude, 3)
    (False, 19.613)
    """
    u = check_unit_vector(up, "up")
    a = check_unit_vector(axis, "axis", normalize=True)
    p = check_vectors(point, "point")
    c = check_vectors(center_of_mass, "center_of_mass")
    for name, arr in (("up", u), ("axis", a), ("point", p), ("center_of_mass", c)):
        if arr.shape != (3,):
            raise ValueError(f"Expected `{name}` to have shape (3,), got {arr.shape}.")
    m = check_positive(mass, "mass")
    tol = check_positive(tolerance, "tolerance")
    g0 = check_positive(gravity, "gravity")
    r = c - p
    r_perp = r - float(a @ r) * a
    rho = float(np.linalg.norm(r_perp))
    sin_tilt = float(np.linalg.norm(np.cross(a, u)))
    tilt = math.atan2(sin_tilt, abs(float(a @ u)))
    amplitude = m * g0 * rho * sin_tilt
    lever = float(np.linalg.norm(r))
    # A centre of mass at the point itself (|r| below a nanometre) is on the axis: no torque.
    fraction = 0.0 if lever < 1e-9 else rho * sin_tilt / lever
    ok = fraction <= tol
    detail = (
        f"axis {math.degrees(tilt):.2f}° from vertical and centre of mass {rho:.4g} m from the "
        f"axis line: peak gravity torque {amplitude:.3g} N·m, {100 * fraction:.2f}% of m·g·|c − p| "
        f"(tolerance {100 * tol:.2f}%)"
    )
    return GravityFreeCheck(
        is_gravity_free=ok,
        residual_fraction=fraction,
        gravity_torque_amplitude=amplitude,
        axis_tilt=tilt,
        distance_from_axis=rho,
        tolerance=tol,
        reason=("gravity-free: " if ok else "not gravity-free: ") + detail,
    )


@dataclass(frozen=True, eq=False)
class LoadFrictionFit:
    """Result of :func:`load_dependent_friction`.

    Attributes
    ----------
    load_coefficient : float
        :math:`\\mu`, N·m of friction per N·m of gravity torque.
    load_coefficient_std : float
        Its standard error, including the uncertainty of the gravity-free fit.
    model : LoadDependentFriction
        The gravity-free friction model with the load term added.
    load_friction : ndarray, shape (n,)
        The seed's gravity-affected friction at every sample: torque − gravity torque −
        gravity-free friction (and inertia), N·m.
    residuals : ndarray, shape (m,)
        `load_friction` minus :math:`\\mu |\\tau_g| \\operatorname{sgn} \\dot q` at the samples
        used, N·m.
    mask : ndarray of bool, shape (n,)
        Samples used (``|velocity| >= min_speed``).
    residual_rms : float
        RMS of `residuals`, N·m.
    """

    load_coefficient: float
    load_coefficient_std: float
    model: LoadDependentFriction
    load_friction: NDArray[np.float64]
    residuals: NDArray[np.float64]
    mask: NDArray[np.bool_]
    residual_rms: float

    def __repr__(self) -> str:
        return (
            f"LoadFrictionFit(load_coefficient={self.load_coefficient:.5g}"
            f"±{self.load_coefficient_std:.2g}, rms={self.residual_rms:.3g} N·m, "
            f"{int(self.mask.sum())}/{self.mask.size} samples)"
        )


def load_dependent_friction(
    free_fit: FrictionFit,
    velocity: ArrayLike,
    torque: ArrayLike,
    gravity_torque: ArrayLike,
    *,
    acceleration: ArrayLike | None = None,
    free_pose: GravityFreeCheck | None = None,
    min_speed: float | None = None,
    min_load: float = 1e-6,
) -> LoadFrictionFit:
    """Split the friction of a gravity-loaded run into gravity-free and load-dependent parts.

    Parameters
    ----------
    free_fit : FrictionFit
        Fit of the gravity-free run (:func:`fit_friction` without `gravity_torque`).
    velocity : array_like, shape (n,)
        Joint speed of the loaded run (the same plan as the free run), rad/s.
    torque : array_like, shape (n,)
        Drive torque of the loaded run, N·m.
    gravity_torque : array_like, shape (n,)
        Gravity torque of the loaded run, N·m, from the caller's mass model or a sweep fit
        (gravity part only, without offset).
    acceleration : array_like, shape (n,), optional
        Joint acceleration, rad/s²; required when `free_fit` includes inertia.
    free_pose : GravityFreeCheck, optional
        The check of the pose of the free run; a pose that is not gravity-free is refused.
    min_speed : float, optional
        Stiction threshold, rad/s; by default the one of `free_fit`.
    min_load : float, optional
        Smallest peak ``|gravity_torque|`` (N·m) for which μ is identifiable (default 1e-6,
        round-off level of a gravity model in N·m).

    Returns
    -------
    LoadFrictionFit
        μ, its standard error, the seed's gravity-affected friction and the residuals.

    Raises
    ------
    DegenerateGeometryError
        If `free_pose` says the free pose is not gravity-free.
    InsufficientDataError
        If no sample is used or the gravity torque is zero throughout.
    ValueError
        On shape mismatch, non-finite input, a missing `acceleration`, or a load-dependent
        `free_fit`.

    Notes
    -----
    Seed 003, claim 4: the gravity-affected friction is
    :math:`f_L = \\tau - \\tau_g - \\hat\\tau_{f,0}(\\dot q) - \\hat J \\ddot q`. Its model is
    :math:`f_L = \\mu\\, x`, :math:`x = |\\tau_g| \\operatorname{sgn}\\dot q`, so
    :math:`\\hat\\mu = x^\\top f_L / x^\\top x`. Its variance has two parts: the loaded run's
    noise, :math:`\\hat\\sigma^2 / x^\\top x`, and the free fit's, carried by the delta method,
    :math:`x^\\top F \\Sigma_0 F^\\top x / (x^\\top x)^2`, with :math:`F` the Jacobian of the free
    model at the loaded run's samples and :math:`\\Sigma_0` the free fit's covariance.

    References
    ----------
    Seed ``003_a9e7b6dca4bd51db.txt`` (CN107423515B), claims 1 and 4.

    Examples
    --------
    >>> v = np.tile(np.concatenate([np.geomspace(0.01, 1, 30), -np.geomspace(0.01, 1, 30)]), 2)
    >>> free = CoulombViscousFriction(2.0, 1.5)
    >>> fit0 = fit_friction(v, free.evaluate(v), model="coulomb-viscous")
    >>> tau_g = np.linspace(-20.0, 30.0, v.size)
    >>> tau = tau_g + LoadDependentFriction(free, 0.03).evaluate(v, load=tau_g)
    >>> round(load_dependent_friction(fit0, v, tau, tau_g).load_coefficient, 9)
    0.03
    """
    if not isinstance(free_fit, FrictionFit):
        raise ValueError(f"Expected `free_fit` to be a FrictionFit, got {type(free_fit).__name__}.")
    if free_pose is not None and not free_pose.is_gravity_free:
        raise DegenerateGeometryError(
            f"Expected `free_pose` to be gravity-free, got {free_pose.reason}."
        )
    v = _check_velocity(velocity)
    tau = _check_like_velocity(torque, "torque", v)
    g = _check_like_velocity(gravity_torque, "gravity_torque", v)
    acc = None if acceleration is None else _check_like_velocity(acceleration, "acceleration", v)
    if free_fit.inertia is not None and acc is None:
        raise ValueError("Expected `acceleration`: `free_fit` includes an inertia term, got None.")
    v_min = free_fit.min_speed if min_speed is None else check_positive(min_speed, "min_speed")
    floor = check_positive(min_load, "min_load")
    base = free_fit.model
    if isinstance(base, LoadDependentFriction):
        raise ValueError(
            "Expected `free_fit` without a load-dependent term (fit the gravity-free run "
            "without `gravity_torque`), got a load-dependent fit."
        )
    a_used = acc if free_fit.inertia is not None else None
    load_friction = tau - g - free_fit.predict(v, a_used)
    mask = np.abs(v) >= v_min
    if not np.any(mask):
        raise InsufficientDataError(
            f"Expected samples with |velocity| >= min_speed={v_min:g}, got none."
        )
    peak = float(np.max(np.abs(g[mask])))
    if peak < floor:
        raise InsufficientDataError(
            f"Expected `gravity_torque` to load the joint (peak |gravity_torque| >= {floor:g} "
            f"N·m over the samples used), got {peak:.3g} N·m."
        )
    x = np.abs(g[mask]) * np.sign(v[mask])
    f = load_friction[mask]
    xtx = float(x @ x)
    mu = float(x @ f) / xtx
    resid = f - mu * x
    m = int(x.size)
    sigma2 = float(resid @ resid) / max(m - 1, 1)
    jac = _fit_jacobian(free_fit, v[mask], None if a_used is None else a_used[mask])
    h = (x @ jac) / xtx
    var = sigma2 / xtx + float(h @ free_fit.covariance @ h)
    return LoadFrictionFit(
        load_coefficient=mu,
        load_coefficient_std=math.sqrt(max(var, 0.0)),
        model=LoadDependentFriction(base, mu),
        load_friction=load_friction,
        residuals=resid,
        mask=mask,
        residual_rms=float(np.sqrt(np.mean(resid**2))),
    )


# ---------------------------------------------------------------------------------------------
# Joint-by-joint driver
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class FrictionRun:
    """One run of an excitation plan on one joint.

    Attributes
    ----------
    velocity : ndarray, shape (n,)
        Joint speed, rad/s.
    torque : ndarray, shape (n,)
        Drive torque, N·m.
    acceleration : ndarray, shape (n,) or None
        Joint acceleration, rad/s² (enables the inertia term).
    gravity_torque : ndarray, shape (n,) or None
        Gravity torque, N·m: None for the gravity-free run, required for the loaded run.
    """

    velocity: ArrayLike
    torque: ArrayLike
    acceleration: ArrayLike | None = None
    gravity_torque: ArrayLike | None = None


@dataclass(frozen=True)
class JointFriction:
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


def identify_joint_friction(
    free: FrictionRun,
    loaded: FrictionRun,
    *,
    model: str = "stribeck",
    exponent: float | None = None,
    free_pose: GravityFreeCheck | None = None,
    min_speed: float = 1e-3,
) -> JointFriction:
    """Two-pose friction identification of one joint (seed 003, claim 1).

    Fits `model` to the gravity-free run, then the load coefficient to the loaded run with
    :func:`load_dependent_friction`.

    Parameters
    ----------
    free, loaded : FrictionRun
        The runs in the gravity-free and the gravity-loaded pose (same plan).
        ``loaded.gravity_torque`` is required; ``free.gravity_torque`` must be None.
    model : str, optional
        Friction model of the free run (see :func:`fit_friction`).
    exponent : float, optional
        Fixed Stribeck exponent; estimated by default.
    free_pose : GravityFreeCheck, optional
        Check of the free pose; a pose that is not gravity-free is refused.
    min_speed : float, optional
        Stiction threshold, rad/s (default 1e-3, see :func:`fit_friction`).

    Returns
    -------
    JointFriction

    Raises
    ------
    ValueError
        As :func:`fit_friction` and :func:`load_dependent_friction`, and if the loaded run has
        no gravity torque or the free run has one.

    Examples
    --------
    >>> v = np.tile(np.concatenate([np.geomspace(0.01, 1, 30), -np.geomspace(0.01, 1, 30)]), 2)
    >>> f0 = CoulombViscousFriction(2.0, 1.5, offset=0.2)
    >>> tau_g = np.linspace(-20.0, 30.0, v.size)
    >>> tau_l = tau_g + LoadDependentFriction(f0, 0.04).evaluate(v, load=tau_g)
    >>> res = identify_joint_friction(
    ...     FrictionRun(v, f0.evaluate(v)), FrictionRun(v, tau_l, gravity_torque=tau_g),
    ...     model="coulomb-viscous")
    >>> round(res.load.load_coefficient, 9)
    0.04
    """
    if loaded.gravity_torque is None:
        raise ValueError("Expected `loaded.gravity_torque` (the loaded run's gravity torque).")
    if free.gravity_torque is not None:
        raise ValueError(
            "Expected `free.gravity_torque` to be None: the gravity-free run carries no gravity "
            "torque."
        )
    if free_pose is not None and not free_pose.is_gravity_free:
        raise DegenerateGeometryError(
            f"Expected `free_pose` to be gravity-free, got {free_pose.reason}."
        )
    free_fit = fit_friction(
        free.velocity,
        free.torque,
        model=model,
        acceleration=free.acceleration,
        exponent=exponent,
        min_speed=min_speed,
    )
    load = load_dependent_friction(
        free_fit,
        loaded.velocity,
        loaded.torque,
        loaded.gravity_torque,
        acceleration=loaded.acceleration,
        min_speed=min_speed,
    )
    return JointFriction(free=free_fit, load=load, free_pose=free_pose)


K = TypeVar("K", bound=Hashable)


def identify_arm_friction(
    runs: Mapping[K, tuple[FrictionRun, FrictionRun]],
    *,
    model: str = "stribeck",
    exponent: float | None = None,
    free_poses: Mapping[K, GravityFreeCheck] | None = None,
    min_speed: float = 1e-3,
) -> Mapping[K, JointFriction]:
    """Identify friction joint by joint (seed 003, claim 7) and collect a read-only table.

    Parameters
    ----------
    runs : mapping of joint key to (FrictionRun, FrictionRun)
        For each joint, its gravity-free run and its gravity-loaded run.
    model, exponent, min_speed
        As :func:`identify_joint_friction`, the same for every joint.
    free_poses : mapping of joint key to GravityFreeCheck, optional
        Checks of the free poses; a joint whose free pose is not gravity-free is refused.

    Returns
    -------
    mapping of joint key to JointFriction
        Read-only, in the order of `runs`.

    Raises
    ------
    ValueError
        If `runs` is empty, an entry is not a pair of runs, or a joint's identification fails;
        the message starts with the joint's key and the error keeps its type.

    Examples
    --------
    >>> v = np.tile(np.concatenate([np.geomspace(0.01, 1, 30), -np.geomspace(0.01, 1, 30)]), 2)
    >>> tau_g = np.linspace(-20.0, 30.0, v.size)
    >>> runs = {}
    >>> for j, mu in ((1, 0.02), (2, 0.05)):
    ...     f0 = CoulombViscousFriction(2.0 * j, 1.0)
    ...     tau_l = tau_g + LoadDependentFriction(f0, mu).evaluate(v, load=tau_g)
    ...     runs[j] = (FrictionRun(v, f0.evaluate(v)), FrictionRun(v, tau_l, gravity_torque=tau_g))
    >>> table = identify_arm_friction(runs, model="coulomb-viscous")
    >>> [round(table[j].load.load_coefficient, 9) for j in table]
    [0.02, 0.05]
    """
    if not isinstance(runs, Mapping) or len(runs) == 0:
        raise ValueError("Expected `runs` to be a non-empty mapping of joint to (free, loaded).")
    out: dict[K, JointFriction] = {}
    for key, pair in runs.items():
        if (
            not isinstance(pair, tuple)
            or len(pair) != 2
            or not all(isinstance(r, FrictionRun) for r in pair)
        ):
            raise ValueError(
                f"Expected `runs[{key!r}]` to be a (free, loaded) pair of FrictionRun, got "
                f"{type(pair).__name__}."
            )
        pose = None if free_poses is None else free_poses.get(key)
        try:
            out[key] = identify_joint_friction(
                pair[0],
                pair[1],
                model=model,
                exponent=exponent,
                free_pose=pose,
                min_speed=min_speed,
            )
        except ValueError as exc:
            raise type(exc)(f"joint {key!r}: {exc}") from exc
    return MappingProxyType(out)
