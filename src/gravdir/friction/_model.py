"""Friction models: Coulomb + viscous, Stribeck, asymmetric Stribeck, and load dependence."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeAlias

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import check_array, check_positive, check_same_shape
from gravdir._results import Result
from gravdir._scalars import float_if_scalar
from gravdir.friction._inputs import check_real, ignore_underflow

__all__ = [
    "AsymmetricStribeckFriction",
    "BaseFrictionModel",
    "CoulombViscousFriction",
    "FrictionModel",
    "LoadDependentFriction",
    "finite_torque",
    "parameter_unit",
    "stribeck_shape",
]

# Units of the parameters of every model, by name stem (a `_positive` / `_negative` suffix names
# the direction of motion and keeps the unit).
_UNITS = {
    "offset": "N·m",
    "coulomb": "N·m",
    "static": "N·m",
    "viscous": "N·m·s/rad",
    "stribeck_velocity": "rad/s",
    "exponent": "",
    "inertia": "kg·m²",
    "load_coefficient": "",
}


def parameter_unit(name: str) -> str:
    """Unit of the friction parameter called `name` ("" for a dimensionless one)."""
    return _UNITS[name.removesuffix("_positive").removesuffix("_negative")]


def stribeck_shape(
    speed: NDArray[np.float64], stribeck_velocity: float, exponent: float
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Return e = exp(-(speed/v_s)^delta) and its derivatives by v_s and by delta.

    Far beyond the dip (``(speed/v_s)^delta`` past the float range) ``e`` is 0 and so are its
    derivatives; no overflow or invalid operation reaches the caller.
    """
    with np.errstate(divide="ignore", over="ignore", under="ignore", invalid="ignore"):
        u = speed / stribeck_velocity
        log_u = np.where(u > 0, np.log(np.where(u > 0, u, 1.0)), 0.0)
        ud = np.exp(exponent * log_u) * (u > 0)
        e = np.exp(-ud)
        de_dvs = e * exponent * ud / stribeck_velocity
        de_ddelta = -e * ud * log_u
    # Where e == 0 the products above are 0 * inf: the derivative of a dip that has died out is 0.
    dead = e == 0
    if np.any(dead):
        de_dvs = np.where(dead, 0.0, de_dvs)
        de_ddelta = np.where(dead, 0.0, de_ddelta)
    return e, de_dvs, de_ddelta


def finite_torque(
    compute: Callable[[], NDArray[np.float64]], names: str = "`velocity`"
) -> NDArray[np.float64]:
    """The torque `compute` returns, refused with a ValueError naming `names` if not finite."""
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        out = compute()
    if not np.all(np.isfinite(out)):
        raise ValueError(
            f"Expected {names} where the torque is finite, got a torque beyond the float range "
            f"at {int(np.size(out) - np.count_nonzero(np.isfinite(out)))} sample(s)."
        )
    return out


def _check_load(load: ArrayLike | None) -> NDArray[np.float64] | None:
    return None if load is None else check_array(load, "load")


class _FrictionCurve(Result):
    """A friction model: a frozen result whose repr shows each parameter with its unit."""

    def __repr__(self) -> str:
        parts = []
        for field in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, field.name)
            if isinstance(value, Result):
                parts.append(f"{field.name}={value!r}")
            else:
                unit = parameter_unit(field.name)
                parts.append(f"{field.name}={value:.6g}" + (f" {unit}" if unit else ""))
        return f"{type(self).__name__}({', '.join(parts)})"


@dataclass(frozen=True, eq=False, repr=False)
class CoulombViscousFriction(_FrictionCurve):
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

    References
    ----------
    Armstrong-Hélouvry, Dupont & Canudas de Wit (1994), sec. 2 (Coulomb and viscous friction).

    Examples
    --------
    >>> CoulombViscousFriction(coulomb=2.0, viscous=1.5).evaluate([-1.0, 0.0, 0.5])
    array([-3.5 ,  0.  ,  2.75])
    """

    _units = {
        "coulomb": "N·m", "viscous": "N·m·s/rad", "offset": "N·m",
    }

    coulomb: float
    viscous: float
    offset: float = 0.0

    def __post_init__(self) -> None:
        for name in ("coulomb", "viscous", "offset"):
            object.__setattr__(self, name, check_real(getattr(self, name), name))
        super().__post_init__()

    @ignore_underflow
    def evaluate(self, velocity: ArrayLike, *, load: ArrayLike | None = None) -> Any:
        """Friction torque at `velocity` (shape ``(...)``); `load` is accepted and not used.

        A Python ``float`` for one velocity given as a number; an array of the shape of
        `velocity` otherwise.

        ``sgn(0) = 0``: at rest the curve gives the offset only (stiction is not modelled).

        Raises
        ------
        ValueError
            If `velocity` is not real and finite, or the torque at it exceeds the float range.
        """
        v = check_array(velocity, "velocity")
        _check_load(load)
        out = finite_torque(lambda: self.offset + self.coulomb * np.sign(v) + self.viscous * v)
        return float_if_scalar(velocity, out)


@dataclass(frozen=True, eq=False, repr=False)
class StribeckFriction(_FrictionCurve):
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

    References
    ----------
    Armstrong-Hélouvry, Dupont & Canudas de Wit (1994), sec. 2 (the Stribeck curve and its
    exponential model).

    Examples
    --------
    >>> m = StribeckFriction(coulomb=2.0, static=3.0, stribeck_velocity=0.05, viscous=1.0)
    >>> m.evaluate([1e-6, 0.05, 1.0]).round(4)
    array([3.    , 2.4179, 3.    ])
    """

    _units = {
        "coulomb": "N·m", "static": "N·m", "stribeck_velocity": "rad/s", "viscous": "N·m·s/rad",
        "exponent": "", "offset": "N·m",
    }

    coulomb: float
    static: float
    stribeck_velocity: float
    viscous: float
    exponent: float = 2.0
    offset: float = 0.0

    def __post_init__(self) -> None:
        for name in ("coulomb", "static", "viscous", "offset"):
            object.__setattr__(self, name, check_real(getattr(self, name), name))
        for name in ("stribeck_velocity", "exponent"):
            object.__setattr__(self, name, check_positive(getattr(self, name), name))
        super().__post_init__()

    @ignore_underflow
    def evaluate(self, velocity: ArrayLike, *, load: ArrayLike | None = None) -> Any:
        """Friction torque at `velocity` (shape ``(...)``); `load` is accepted and not used.

        A Python ``float`` for one velocity given as a number; an array of the shape of
        `velocity` otherwise.

        Raises
        ------
        ValueError
            If `velocity` is not real and finite, or the torque at it exceeds the float range.
        """
        v = check_array(velocity, "velocity")
        _check_load(load)
        e = stribeck_shape(np.abs(v), self.stribeck_velocity, self.exponent)[0]

        def torque() -> NDArray[np.float64]:
            level = self.coulomb + (self.static - self.coulomb) * e
            out: NDArray[np.float64] = self.offset + level * np.sign(v) + self.viscous * v
            return out

        return float_if_scalar(velocity, finite_torque(torque))


@dataclass(frozen=True, eq=False, repr=False)
class AsymmetricStribeckFriction(_FrictionCurve):
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

    References
    ----------
    Armstrong-Hélouvry, Dupont & Canudas de Wit (1994), sec. 2 (the Stribeck curve; friction
    that depends on the direction of motion).

    Examples
    --------
    >>> m = AsymmetricStribeckFriction(2.0, 1.5, 3.0, 2.5, 0.05, 0.03, 1.0, 1.2)
    >>> m.evaluate([-1.0, 1.0]).round(4)
    array([-2.7,  3. ])
    """

    _units = {
        "coulomb_positive": "N·m", "coulomb_negative": "N·m", "static_positive": "N·m",
        "static_negative": "N·m", "stribeck_velocity_positive": "rad/s",
        "stribeck_velocity_negative": "rad/s", "viscous_positive": "N·m·s/rad",
        "viscous_negative": "N·m·s/rad", "exponent_positive": "", "exponent_negative": "",
    }

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
                object.__setattr__(self, name, check_real(getattr(self, name), name))
            for stem in ("stribeck_velocity", "exponent"):
                name = f"{stem}_{side}"
                object.__setattr__(self, name, check_positive(getattr(self, name), name))
        super().__post_init__()

    @ignore_underflow
    def evaluate(self, velocity: ArrayLike, *, load: ArrayLike | None = None) -> Any:
        """Friction torque at `velocity` (shape ``(...)``); `load` is accepted and not used.

        A Python ``float`` for one velocity given as a number; an array of the shape of
        `velocity` otherwise.

        Raises
        ------
        ValueError
            If `velocity` is not real and finite, or the torque at it exceeds the float range.
        """
        v = check_array(velocity, "velocity")
        _check_load(load)
        speed = np.abs(v)
        ep = stribeck_shape(speed, self.stribeck_velocity_positive, self.exponent_positive)[0]
        en = stribeck_shape(speed, self.stribeck_velocity_negative, self.exponent_negative)[0]

        def torque() -> NDArray[np.float64]:
            pos = self.coulomb_positive + (self.static_positive - self.coulomb_positive) * ep
            neg = self.coulomb_negative + (self.static_negative - self.coulomb_negative) * en
            out: NDArray[np.float64] = np.where(
                v > 0, pos + self.viscous_positive * v, 0.0
            ) + np.where(v < 0, -neg + self.viscous_negative * v, 0.0)
            return out

        return float_if_scalar(velocity, finite_torque(torque))


#: A friction curve of the joint alone (no load-dependent term).
BaseFrictionModel: TypeAlias = (
    CoulombViscousFriction | StribeckFriction | AsymmetricStribeckFriction
)


@dataclass(frozen=True, eq=False, repr=False)
class LoadDependentFriction(_FrictionCurve):
    """A friction model plus a Coulomb term that grows with the gravity load.

    :math:`\\tau_f = \\tau_{f,0}(\\dot q) + \\mu |\\tau_g| \\operatorname{sgn}(\\dot q)`: the
    Coulomb level becomes :math:`F_c + \\mu |\\tau_g|`.

    Attributes
    ----------
    base : CoulombViscousFriction or StribeckFriction or AsymmetricStribeckFriction
        Friction without load.
    load_coefficient : float
        :math:`\\mu`, dimensionless (N·m of friction per N·m of gravity torque).

    References
    ----------
    CN 107423515 B, claims 1 and 4 (friction that depends on the gravity load, found as the drive
    torque minus the gravity torque minus the gravity-free friction);
    Armstrong-Hélouvry, Dupont & Canudas de Wit (1994), sec. 2 (Coulomb friction proportional to
    the normal load).

    Examples
    --------
    >>> m = LoadDependentFriction(CoulombViscousFriction(2.0, 1.0), load_coefficient=0.05)
    >>> m.evaluate([0.5, -0.5], load=[20.0, -20.0])
    array([ 3.5, -3.5])
    """

    _units = {
        "load_coefficient": "",
    }

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
            self, "load_coefficient", check_real(self.load_coefficient, "load_coefficient")
        )
        super().__post_init__()

    @ignore_underflow
    def evaluate(self, velocity: ArrayLike, *, load: ArrayLike | None = None) -> Any:
        """Friction torque at `velocity` under gravity torque `load` (sign ignored), broadcast.

        A Python ``float`` for one velocity and one load given as numbers; an array of the
        broadcast shape otherwise.

        Raises
        ------
        ValueError
            If `load` is missing or does not broadcast against `velocity`, either is not real
            and finite, or the torque exceeds the float range.
        """
        v = check_array(velocity, "velocity")
        if load is None:
            raise ValueError(
                "Expected `load` (the gravity torque, N·m) for a load-dependent model, got None."
            )
        g = check_array(load, "load")
        check_same_shape(velocity=v, load=g)
        base = self.base.evaluate(v)
        out = finite_torque(
            lambda: base + self.load_coefficient * np.abs(g) * np.sign(v), "`velocity` and `load`"
        )
        return float_if_scalar(velocity, out)


#: Any friction curve :func:`~gravdir.friction.fit_friction` returns, with or without a
#: load-dependent term.
FrictionModel: TypeAlias = (
    CoulombViscousFriction | StribeckFriction | AsymmetricStribeckFriction | LoadDependentFriction
)
