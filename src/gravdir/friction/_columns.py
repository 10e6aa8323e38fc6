"""Design columns of each friction model, for the separable least squares of `fit_friction`.

Every model is linear in its levels, viscous coefficients and offset (the *linear* parameters
:math:`\\theta`) and nonlinear only in the Stribeck velocity and exponent of each direction (the
*nonlinear* parameters :math:`p`), through :math:`e = \\exp(-|\\dot q/v_s|^{\\delta})`. A
:class:`ModelColumns` strategy per model supplies the columns :math:`X(p)`, their derivatives by
:math:`p`, the columns that do not depend on :math:`p` (for the global grid start) and the model
built from fitted parameters; :class:`Design` adds the inertia and load columns and the fixed
exponent, and is the only interface the identification code calls.
"""

from __future__ import annotations

import math
from typing import ClassVar, Literal, get_args

import numpy as np
from numpy.typing import NDArray

from gravdir.errors import InsufficientDataError
from gravdir.friction._model import (
    AsymmetricStribeckFriction,
    BaseFrictionModel,
    CoulombViscousFriction,
    FrictionModel,
    LoadDependentFriction,
    StribeckFriction,
    stribeck_shape,
)

__all__ = [
    "AsymmetricStribeckColumns",
    "CoulombViscousColumns",
    "Design",
    "FrictionModelName",
    "ModelColumns",
    "StribeckColumns",
    "columns_for_model",
    "columns_for_name",
]

FrictionModelName = Literal["stribeck", "coulomb-viscous", "asymmetric-stribeck"]
"""Names of the friction models :func:`~gravdir.friction.fit_friction` fits."""

Columns = list[NDArray[np.float64]]
# Linear columns and, per nonlinear parameter, their derivatives.
ColumnsAndDerivatives = tuple[Columns, list[Columns]]


def _distinct(values: NDArray[np.float64], resolution: float) -> int:
    """Number of distinct velocities, grouping those within a relative `resolution`."""
    if values.size == 0:
        return 0
    key = np.sign(values) * (np.round(np.log(np.abs(values)) / math.log1p(resolution)) + 1e6)
    return int(np.unique(key).size)


class ModelColumns:
    """The design columns of one friction model (a strategy of :class:`Design`).

    Attributes
    ----------
    name : str
        The model's name, the `model` option of :func:`~gravdir.friction.fit_friction`.
    linear_names : tuple of str
        Names of the linear parameters, in column order.
    fixed_names : tuple of str
        Names of the columns that do not depend on the nonlinear parameters.
    sides : tuple of str
        Name suffix of each Stribeck dip ("" for a symmetric dip, "_positive" / "_negative" per
        direction); each dip has the nonlinear parameters ``stribeck_velocity<suffix>`` and
        ``exponent<suffix>``, in that order.
    model_type : type
        The model class the strategy builds.
    """

    name: ClassVar[str]
    model_type: ClassVar[type[BaseFrictionModel]]
    linear_names: ClassVar[tuple[str, ...]]
    fixed_names: ClassVar[tuple[str, ...]] = ()
    sides: ClassVar[tuple[str, ...]] = ()

    @property
    def nonlinear_names(self) -> tuple[str, ...]:
        """Names of every nonlinear parameter, dip by dip."""
        return tuple(n for s in self.sides for n in (f"stribeck_velocity{s}", f"exponent{s}"))

    def fixed_columns(self, v: NDArray[np.float64]) -> Columns:
        """Columns spanning the linear columns without the dips, one per `fixed_names`."""
        return []

    def dip_signs(self, v: NDArray[np.float64]) -> Columns:
        """Per dip, the sign column ``s`` of its variable column ``s * e(v_s, delta)``."""
        return []

    def columns(self, v: NDArray[np.float64], p: NDArray[np.float64]) -> ColumnsAndDerivatives:
        """Linear columns at the nonlinear parameters `p` and, per entry of `p`, derivatives."""
        raise NotImplementedError

    def model(self, theta: list[float], p: NDArray[np.float64]) -> BaseFrictionModel:
        """The model of linear parameters `theta` and nonlinear parameters `p`."""
        raise NotImplementedError

    def nonlinear_values(self, model: BaseFrictionModel) -> NDArray[np.float64]:
        """The nonlinear parameters of `model`, in the order of `nonlinear_names`."""
        return np.array([float(getattr(model, n)) for n in self.nonlinear_names])

    def check_speeds(self, v: NDArray[np.float64], free_per_dip: int, resolution: float) -> None:
        """Raise InsufficientDataError unless `v` holds enough distinct speeds for the model."""
        need = len(self.linear_names) + free_per_dip * len(self.sides)
        got = _distinct(v, resolution)
        if got < need:
            raise InsufficientDataError(
                f"Expected `velocity` to hold at least {need} distinct velocities for a "
                f"{self.name!r} fit, got {got} (speeds within {resolution:g} relative count as "
                "one)."
            )


class CoulombViscousColumns(ModelColumns):
    """Columns of :class:`CoulombViscousFriction`: ``1, sgn v, v``; no nonlinear parameter."""

    name = "coulomb-viscous"
    model_type = CoulombViscousFriction
    linear_names = ("offset", "coulomb", "viscous")

    def columns(self, v: NDArray[np.float64], p: NDArray[np.float64]) -> ColumnsAndDerivatives:
        return [np.ones_like(v), np.sign(v), v], []

    def model(self, theta: list[float], p: NDArray[np.float64]) -> BaseFrictionModel:
        return CoulombViscousFriction(coulomb=theta[1], viscous=theta[2], offset=theta[0])


class StribeckColumns(ModelColumns):
    """Columns of :class:`StribeckFriction`: ``1, s (1 - e), s e, v`` with ``s = sgn v``."""

    name = "stribeck"
    model_type = StribeckFriction
    linear_names = ("offset", "coulomb", "static", "viscous")
    fixed_names = ("offset", "coulomb", "viscous")
    sides = ("",)

    def fixed_columns(self, v: NDArray[np.float64]) -> Columns:
        return [np.ones_like(v), np.sign(v), v]

    def dip_signs(self, v: NDArray[np.float64]) -> Columns:
        return [np.sign(v)]

    def columns(self, v: NDArray[np.float64], p: NDArray[np.float64]) -> ColumnsAndDerivatives:
        s, zero = np.sign(v), np.zeros_like(v)
        e, dv, dd = stribeck_shape(np.abs(v), p[0], p[1])
        cols = [np.ones_like(v), s * (1 - e), s * e, v]
        return cols, [[zero, -s * de, s * de, zero] for de in (dv, dd)]

    def model(self, theta: list[float], p: NDArray[np.float64]) -> BaseFrictionModel:
        return StribeckFriction(
            coulomb=theta[1],
            static=theta[2],
            stribeck_velocity=float(p[0]),
            viscous=theta[3],
            exponent=float(p[1]),
            offset=theta[0],
        )


class AsymmetricStribeckColumns(ModelColumns):
    """Columns of :class:`AsymmetricStribeckFriction`: one Stribeck dip per direction.

    With ``P = [v > 0]``, ``N = [v < 0]``: ``P (1 - e+), P e+, P v, -N (1 - e-), -N e-, N v``.
    """

    name = "asymmetric-stribeck"
    model_type = AsymmetricStribeckFriction
    linear_names = (
        "coulomb_positive",
        "static_positive",
        "viscous_positive",
        "coulomb_negative",
        "static_negative",
        "viscous_negative",
    )
    fixed_names = ("coulomb_positive", "viscous_positive", "coulomb_negative", "viscous_negative")
    sides = ("_positive", "_negative")

    @staticmethod
    def _directions(v: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        return (v > 0).astype(np.float64), (v < 0).astype(np.float64)

    def fixed_columns(self, v: NDArray[np.float64]) -> Columns:
        pos, neg = self._directions(v)
        return [pos, pos * v, -neg, neg * v]

    def dip_signs(self, v: NDArray[np.float64]) -> Columns:
        pos, neg = self._directions(v)
        return [pos, -neg]

    def columns(self, v: NDArray[np.float64], p: NDArray[np.float64]) -> ColumnsAndDerivatives:
        P, N = self._directions(v)
        zero, speed = np.zeros_like(v), np.abs(v)
        ep, dvp, ddp = stribeck_shape(speed, p[0], p[1])
        en, dvn, ddn = stribeck_shape(speed, p[2], p[3])
        cols = [P * (1 - ep), P * ep, P * v, -N * (1 - en), -N * en, N * v]
        derivs = [[-P * de, P * de, zero, zero, zero, zero] for de in (dvp, ddp)]
        derivs += [[zero, zero, zero, N * de, -N * de, zero] for de in (dvn, ddn)]
        return cols, derivs

    def model(self, theta: list[float], p: NDArray[np.float64]) -> BaseFrictionModel:
        return AsymmetricStribeckFriction(
            coulomb_positive=theta[0],
            coulomb_negative=theta[3],
            static_positive=theta[1],
            static_negative=theta[4],
            stribeck_velocity_positive=float(p[0]),
            stribeck_velocity_negative=float(p[2]),
            viscous_positive=theta[2],
            viscous_negative=theta[5],
            exponent_positive=float(p[1]),
            exponent_negative=float(p[3]),
        )

    def check_speeds(self, v: NDArray[np.float64], free_per_dip: int, resolution: float) -> None:
        per_side = len(self.linear_names) // 2 + free_per_dip
        for side, vals in (("positive", v[v > 0]), ("negative", v[v < 0])):
            got = _distinct(vals, resolution)
            if got < per_side:
                raise InsufficientDataError(
                    f"Expected `velocity` to hold at least {per_side} distinct {side} speeds for "
                    f"an {self.name!r} fit, got {got} (speeds within {resolution:g} relative "
                    "count as one)."
                )


_STRATEGIES: tuple[ModelColumns, ...] = (
    StribeckColumns(),
    CoulombViscousColumns(),
    AsymmetricStribeckColumns(),
)
MODEL_NAMES: tuple[str, ...] = get_args(FrictionModelName)


def columns_for_name(name: str) -> ModelColumns:
    """The strategy of the model called `name` (validated by the caller)."""
    return next(s for s in _STRATEGIES if s.name == name)


def columns_for_model(model: BaseFrictionModel) -> ModelColumns:
    """The strategy of the model instance `model`."""
    return next(s for s in _STRATEGIES if isinstance(model, s.model_type))


class Design:
    """The columns of one fit: a model's columns, inertia and load columns, a fixed exponent.

    Parameters are ordered linear (`strategy.linear_names`), extra (``inertia``,
    ``load_coefficient``), then the free nonlinear ones.
    """

    def __init__(
        self,
        strategy: ModelColumns,
        velocity: NDArray[np.float64],
        acceleration: NDArray[np.float64] | None,
        load: NDArray[np.float64] | None,
        exponent: float | None,
    ) -> None:
        self.strategy = strategy
        self.v = velocity
        self.speed = np.abs(velocity)
        self.fixed_exponent = exponent
        self.extras: Columns = []
        self.extra_names: list[str] = []
        if acceleration is not None:
            self.extras.append(acceleration)
            self.extra_names.append("inertia")
        if load is not None:
            self.extras.append(np.abs(load) * np.sign(velocity))
            self.extra_names.append("load_coefficient")
        self.all_nonlinear = list(strategy.nonlinear_names)
        self.free = [
            i
            for i, n in enumerate(self.all_nonlinear)
            if not (n.startswith("exponent") and exponent is not None)
        ]
        self.linear_names = list(strategy.linear_names)
        self.nonlinear_names = [self.all_nonlinear[i] for i in self.free]
        self.names = self.linear_names + self.extra_names + self.nonlinear_names

    @property
    def free_per_dip(self) -> int:
        """Free nonlinear parameters of each Stribeck dip (2, or 1 with a fixed exponent)."""
        return 2 if self.fixed_exponent is None else 1

    def full_nonlinear(self, p_free: NDArray[np.float64]) -> NDArray[np.float64]:
        full = np.full(len(self.all_nonlinear), np.nan)
        full[self.free] = p_free
        for i, n in enumerate(self.all_nonlinear):
            if n.startswith("exponent") and self.fixed_exponent is not None:
                full[i] = self.fixed_exponent
        return full

    def fixed_columns(self) -> Columns:
        """Columns that do not depend on the nonlinear parameters, for the grid search."""
        return [*self.strategy.fixed_columns(self.v), *self.extras]

    def fixed_names(self) -> list[str]:
        return [*self.strategy.fixed_names, *self.extra_names]

    def dip_signs(self) -> Columns:
        return self.strategy.dip_signs(self.v)

    def columns(
        self, p_free: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], list[NDArray[np.float64]]]:
        """Design matrix X (n, k) and dX/dp for each free nonlinear parameter."""
        cols, derivs = self.strategy.columns(self.v, self.full_nonlinear(p_free))
        zeros = [np.zeros_like(self.v)] * len(self.extras)
        x = np.column_stack(cols + self.extras)
        return x, [np.column_stack(derivs[i] + zeros) for i in self.free]

    def jacobian(
        self, p_free: NDArray[np.float64], theta: NDArray[np.float64]
    ) -> NDArray[np.float64]:
        """Jacobian of the model torque by all parameters (linear, then free nonlinear)."""
        x, dx = self.columns(p_free)
        return np.column_stack([x] + [d @ theta for d in dx])

    def model(self, theta: NDArray[np.float64], p_free: NDArray[np.float64]) -> FrictionModel:
        t = [float(x) for x in theta]
        base = self.strategy.model(t, self.full_nonlinear(p_free))
        if "load_coefficient" in self.extra_names:
            mu = t[len(self.linear_names) + self.extra_names.index("load_coefficient")]
            return LoadDependentFriction(base, mu)
        return base

    def extra(self, theta: NDArray[np.float64], name: str) -> float | None:
        """The fitted extra parameter `name` (``inertia``), or None if the fit has none."""
        if name not in self.extra_names:
            return None
        return float(theta[len(self.linear_names) + self.extra_names.index(name)])
