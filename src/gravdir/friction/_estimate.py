"""Identification: fit a friction model (with inertia and load dependence) to joint torque."""

from __future__ import annotations

import dataclasses
import math
import warnings
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import (
    NanPolicy,
    check_array,
    check_count,
    check_option,
    check_positive,
    check_same_shape,
)
from gravdir._imports import IMPORT_LOCK
from gravdir._results import Result, warn_not_converged
from gravdir._scalars import float_if_scalar
from gravdir.errors import GravdirWarning, InsufficientDataError
from gravdir.friction._columns import (
    MODEL_NAMES,
    Design,
    FrictionModelName,
    columns_for_model,
    columns_for_name,
)
from gravdir.friction._covariance import delta_method_cov, unscaled_cov
from gravdir.friction._inputs import (
    check_series,
    check_speed_span,
    ignore_underflow,
    lost_in_scaling,
    omitted_text,
    pow2_exponent,
)
from gravdir.friction._model import (
    FrictionModel,
    LoadDependentFriction,
    finite_torque,
    parameter_unit,
)

__all__ = [
    "MAX_ITER_CAP",
    "FrictionFit",
    "fit_friction",
    "fit_jacobian",
]

# Search box of the Stribeck exponent. Published fits of robot joints lie between about 0.5 and
# 2 (Armstrong-Hélouvry, Dupont & Canudas de Wit 1994 use 2, the Gaussian dip; many harmonic
# drives fit 1 or less); the box leaves a margin on both sides and keeps exp(-|v/v_s|^delta)
# well conditioned.
_EXPONENT_BOUNDS = (0.25, 5.0)
_EXPONENT_GRID = (0.5, 1.0, 2.0, 3.0)
# Number of log-spaced Stribeck velocities in the global start grid (one per ~12% of speed over
# the 0.005-1 rad/s range of a typical plan).
_VS_GRID_POINTS = 48
# The torque left after the columns without a Stribeck dip must exceed this fraction of the
# torque for the dip to be searched: the projection leaves round-off near 1e-16 of |torque|
# (orthonormal basis), so a dip below 1e-10 would be fitted to round-off, along a path that
# depends on the BLAS kernel (as when one sample 1e16 times the others hides them all).
_DIP_SIGNAL_RTOL = 1e-10
# Cap on `max_iter`: a typical plan needs 10-30 residual evaluations; 10 000 bounds the work of a
# call (each evaluation is one least-squares solve over the samples).
#: Cap on `max_iter` of the friction fits.
MAX_ITER_CAP = 10_000
# Range of `speed_resolution`: below 1e-12 the relative differences are round-off of the
# velocity itself; above 1 speeds differing by more than a factor of two would count as one.
SPEED_RESOLUTION_RANGE = (1e-12, 1.0)


@dataclass(frozen=True, eq=False, repr=False)
class FrictionFit(Result):
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
    parameters_cov : ndarray, shape (p, p)
        Their covariance, :math:`\\hat\\sigma^2 (J^\\top J)^{-1}` with the Jacobian of the model
        at the optimum (the delta method). Infinite throughout (with a ``GravdirWarning``) where
        its entries leave the float range in the units of the data (torques beyond about 1e150
        N·m or below about 1e-150 N·m); `parameters_std` stays exact.
    parameters_std : ndarray, shape (p,)
        Standard errors: the square roots of the diagonal of the covariance, computed in scaled
        units.
    residuals : ndarray, shape (m,)
        Torque minus model at the `m` samples used, N·m.
    mask : ndarray of bool, shape (n,)
        Which samples were used (``|velocity| >= min_speed``), over the input samples less any
        that ``nan_policy="omit"`` dropped.
    residual_rms : float
        Root mean square of `residuals`, N·m.
    min_speed : float
        The stiction threshold used, rad/s.
    converged : bool
        Whether the search over the Stribeck velocities and exponents met its tolerance before
        `max_iter` (always True for ``"coulomb-viscous"``, which has no search).
    n_iter : int
        Number of residual evaluations of that search (scipy ``least_squares``' ``nfev``: one
        per trial step, which is what `max_iter` bounds); 0 for ``"coulomb-viscous"``.
    n_omitted : int
        Samples dropped because a series held a NaN there (``nan_policy="omit"``; 0 otherwise).
    """

    _units = {
        "inertia": "kg·m²", "parameters": "per `parameter_names`",
        "parameters_cov": "per `parameter_names`, squared",
        "parameters_std": "per `parameter_names`", "residuals": "N·m", "residual_rms": "N·m",
        "min_speed": "rad/s",
    }

    model: FrictionModel
    model_name: str
    inertia: float | None
    parameter_names: tuple[str, ...]
    parameters: NDArray[np.float64]
    parameters_cov: NDArray[np.float64]
    parameters_std: NDArray[np.float64]
    residuals: NDArray[np.float64]
    mask: NDArray[np.bool_]
    residual_rms: float
    min_speed: float
    converged: bool
    n_iter: int
    n_omitted: int = 0

    def parameter(self, name: str) -> float:
        """The estimate of the parameter called `name`."""
        check_option(name, "name", self.parameter_names)
        return float(self.parameters[self.parameter_names.index(name)])

    @ignore_underflow
    def predict(
        self,
        velocity: ArrayLike,
        *,
        acceleration: ArrayLike | None = None,
        load: ArrayLike | None = None,
    ) -> Any:
        """Torque of the fitted model (friction plus inertia), shape of `velocity`.

        Gravity torque is not included: `load` only feeds a load-dependent friction term. A
        Python ``float`` for one velocity given as a number; an array otherwise.

        Raises
        ------
        ValueError
            If the fit includes inertia and `acceleration` is missing, or a load-dependent fit
            gets no `load`; if an input is not real and finite, or the torque exceeds the float
            range.
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
            inertia = self.inertia
            out = finite_torque(lambda: out + inertia * a, "`velocity` and `acceleration`")
        return float_if_scalar(velocity, out)

    def __repr__(self) -> str:
        terms = ", ".join(
            f"{n}={p:.5g}±{s:.2g}" + (f" {parameter_unit(n)}" if parameter_unit(n) else "")
            for n, p, s in zip(
                self.parameter_names, self.parameters, self.parameters_std, strict=True
            )
        )
        solver = "" if self.converged else f", not converged after {self.n_iter} evaluations"
        return (
            f"FrictionFit({self.model_name!r}, {terms}; rms={self.residual_rms:.3g} N·m, "
            f"{int(self.mask.sum())}/{self.mask.size} samples"
            f"{f', {self.n_omitted} omitted (NaN)' if self.n_omitted else ''}{solver})"
        )


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


@dataclass(frozen=True)
class _Samples:
    """The samples a fit uses, in scaled units: velocity, torque (gravity removed), acceleration
    and gravity torque (the load column) divided by ``2**velocity_exponent``,
    ``2**torque_exponent``, ``2**acceleration_exponent`` and ``2**load_exponent``;
    `raw_velocity` unscaled."""

    mask: NDArray[np.bool_]
    velocity: NDArray[np.float64]
    torque: NDArray[np.float64]
    acceleration: NDArray[np.float64] | None
    gravity_torque: NDArray[np.float64] | None
    raw_velocity: NDArray[np.float64]
    velocity_exponent: int
    torque_exponent: int
    acceleration_exponent: int
    load_exponent: int
    n_omitted: int

    def parameter_exponents(self, names: list[str]) -> NDArray[np.int64]:
        """Per parameter, the power of two that turns its scaled value into the caller's units."""
        kv, kt, ka = self.velocity_exponent, self.torque_exponent, self.acceleration_exponent
        kg = self.load_exponent
        stems = {
            "offset": kt,
            "coulomb": kt,
            "static": kt,
            "viscous": kt - kv,
            "stribeck_velocity": kv,
            "exponent": 0,
            "inertia": kt - ka,
            "load_coefficient": kt - kg,
        }
        return np.array(
            [stems[n.removesuffix("_positive").removesuffix("_negative")] for n in names],
            dtype=np.int64,
        )


def _select_samples(
    velocity: ArrayLike,
    torque: ArrayLike,
    acceleration: ArrayLike | None,
    gravity_torque: ArrayLike | None,
    min_speed: float,
    nan_policy: str,
) -> _Samples:
    """Validate the series and keep the samples at or above `min_speed`, in both directions."""
    series, n_omitted = check_series(
        nan_policy,
        {
            "velocity": velocity,
            "torque": torque,
            "acceleration": acceleration,
            "gravity_torque": gravity_torque,
        },
        optional=("acceleration", "gravity_torque"),
    )
    # `velocity` and `torque` are required, so never None here.
    v_all = cast("NDArray[np.float64]", series["velocity"])
    torque_all = cast("NDArray[np.float64]", series["torque"])
    a_all, g_all = series["acceleration"], series["gravity_torque"]
    mask = np.abs(v_all) >= min_speed
    v = v_all[mask]
    check_speed_span(v, min_speed)
    n_pos = int(np.count_nonzero(v > 0))
    n_neg = int(np.count_nonzero(v < 0))
    if n_pos == 0 or n_neg == 0:
        which = "positive only" if n_neg == 0 else "negative only"
        if n_pos == 0 and n_neg == 0:
            which = "none"
        raise InsufficientDataError(
            f"Expected `velocity` to hold samples in both directions with |velocity| >= "
            f"`min_speed`={min_speed:g}, got {which} ({n_pos} positive, {n_neg} negative"
            f"{omitted_text(n_omitted)}): the offset (or per-direction levels) cannot be "
            "separated from Coulomb friction."
        )
    # Scaled units (exact powers of two, none for data of ordinary size): no square or product
    # of the fit overflows or underflows, whatever the size of the data.
    t_used = torque_all[mask]
    g_used = None if g_all is None else g_all[mask]
    kv = pow2_exponent(v)
    kt = pow2_exponent(t_used if g_used is None else np.concatenate([t_used, g_used]))
    a_used = None if a_all is None else a_all[mask]
    ka = 0 if a_used is None else pow2_exponent(a_used)
    kg = 0 if g_used is None else pow2_exponent(g_used)
    torque = np.ldexp(t_used, -kt)
    if g_used is not None:
        torque = torque - np.ldexp(g_used, -kt)
    return _Samples(
        mask=mask,
        velocity=np.ldexp(v, -kv),
        torque=torque,
        acceleration=None if a_used is None else np.ldexp(a_used, -ka),
        gravity_torque=None if g_used is None else np.ldexp(g_used, -kg),
        raw_velocity=v,
        velocity_exponent=kv,
        torque_exponent=kt,
        acceleration_exponent=ka,
        load_exponent=kg,
        n_omitted=n_omitted,
    )


def _check_support(design: Design, v: NDArray[np.float64], resolution: float) -> None:
    """Raise InsufficientDataError unless the samples can determine every parameter."""
    design.strategy.check_speeds(v, design.free_per_dip, resolution)
    k = len(design.names)
    if v.size <= k:
        raise InsufficientDataError(
            f"Expected more samples with |velocity| >= min_speed than the {k} parameters, got "
            f"{v.size}."
        )


def _global_start(
    design: Design, torque: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Grid start of the free nonlinear parameters (in logs) and their search box.

    Only one column per Stribeck dip, ``s * e(v_s, delta)``, depends on the nonlinear
    parameters; its gain over the fixed columns is evaluated on a grid of v_s and exponents.
    """
    q0 = _orthonormal_basis(design.fixed_columns(), design.fixed_names())
    r0 = torque - q0 @ (q0.T @ torque)
    total = float(np.linalg.norm(torque))
    left = float(np.linalg.norm(r0)) / total if total > 0 else 0.0
    if not left > _DIP_SIGNAL_RTOL:
        raise InsufficientDataError(
            "Expected `torque` to carry a Stribeck dip above round-off, got "
            f"{left:.1e} of it left after the terms without one ("
            + ", ".join(f"`{n}`" for n in design.fixed_names())
            + f"; at most {_DIP_SIGNAL_RTOL:g}): fit model='coulomb-viscous', or look for a "
            "sample of `torque` or `gravity_torque` far beyond the others."
        )
    exponent = design.fixed_exponent
    exps = (exponent,) if exponent is not None else _EXPONENT_GRID
    start: list[float] = []
    lo_b: list[float] = []
    hi_b: list[float] = []
    for sign_col in design.dip_signs():
        sp = design.speed[sign_col != 0]
        # v_s is searched from half the slowest to twice the fastest speed used: outside, the
        # dip is flat over the data and v_s is not identified.
        vs_lo, vs_hi = 0.5 * float(sp.min()), 2.0 * float(sp.max())
        grid = np.geomspace(vs_lo, vs_hi, _VS_GRID_POINTS)
        vs0, d0 = _grid_costs(q0, r0, design.speed, sign_col, grid, exps)
        start.append(math.log(vs0))
        lo_b.append(math.log(vs_lo))
        hi_b.append(math.log(vs_hi))
        if exponent is None:
            start.append(math.log(d0))
            lo_b.append(math.log(_EXPONENT_BOUNDS[0]))
            hi_b.append(math.log(_EXPONENT_BOUNDS[1]))
    bounds_lo, bounds_hi = np.array(lo_b), np.array(hi_b)
    return np.clip(np.array(start), bounds_lo, bounds_hi), bounds_lo, bounds_hi


def _projected_search(
    design: Design,
    torque: NDArray[np.float64],
    x0: NDArray[np.float64],
    bounds: tuple[NDArray[np.float64], NDArray[np.float64]],
    max_iter: int,
) -> tuple[NDArray[np.float64], NDArray[np.bool_], bool, int]:
    """Minimise the variable-projection residual over the logs of the nonlinear parameters.

    Returns the parameters, which ended on the edge of their box, whether the search
    converged, and its number of residual evaluations.
    """
    with IMPORT_LOCK:
        from scipy.optimize import least_squares  # slow to import: only when needed

    def projected(x: NDArray[np.float64]) -> NDArray[np.float64]:
        xmat = design.columns(np.exp(x))[0]
        coef, *_ = np.linalg.lstsq(xmat, torque, rcond=None)
        return torque - xmat @ coef

    def projected_jac(x: NDArray[np.float64]) -> NDArray[np.float64]:
        # Kaufman's approximation of the variable-projection Jacobian: -(I - P) dX/dp theta.
        p = np.exp(x)
        xmat, dx = design.columns(p)
        qx, _ = np.linalg.qr(xmat)
        coef, *_ = np.linalg.lstsq(xmat, torque, rcond=None)
        cols = [d @ coef * pi for d, pi in zip(dx, p, strict=True)]
        jm = np.column_stack(cols)
        out: NDArray[np.float64] = -(jm - qx @ (qx.T @ jm))
        return out

    sol = least_squares(
        projected,
        x0,
        jac=projected_jac,
        bounds=bounds,
        method="trf",
        xtol=1e-14,
        ftol=1e-14,
        gtol=1e-14,
        max_nfev=max_iter,
    )
    lo, hi = bounds
    at_edge = (np.abs(sol.x - lo) < 1e-6) | (np.abs(sol.x - hi) < 1e-6)
    # status 0: the evaluation limit was reached; 1-4: a tolerance was met.
    return np.asarray(np.exp(sol.x), dtype=np.float64), at_edge, bool(sol.status > 0), int(sol.nfev)


def _linear_fit(
    design: Design, torque: NDArray[np.float64], p_hat: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Linear parameters at `p_hat`, the residuals, and the covariance and standard errors of
    all parameters."""
    xmat = design.columns(p_hat)[0]
    _orthonormal_basis(list(xmat.T), design.linear_names + design.extra_names)
    theta = np.asarray(np.linalg.lstsq(xmat, torque, rcond=None)[0], dtype=np.float64)
    resid = torque - xmat @ theta
    jac = design.jacobian(p_hat, theta)
    sigma2 = float(resid @ resid) / (torque.size - len(design.names))
    cov, std = delta_method_cov(jac, sigma2, design.names, design.strategy.name)
    return theta, resid, cov, std


def _warn_unresolved(
    design: Design,
    p_hat: NDArray[np.float64],
    std: NDArray[np.float64],
    at_edge: NDArray[np.bool_],
) -> None:
    """Warn if a Stribeck velocity or exponent is not resolved by the data."""
    n_lin = len(design.linear_names) + len(design.extra_names)
    # A Stribeck velocity with a relative standard error above 50% (or on the edge of its search
    # box) is not resolved by the data: the fit is still returned, with a warning.
    unresolved = [
        n
        for i, n in enumerate(design.nonlinear_names)
        if at_edge[i]
        or (
            n.startswith("stribeck_velocity")
            and std[n_lin + i] > 0.5 * p_hat[i]
        )
    ]
    if unresolved:
        warnings.warn(
            "The data do not resolve the Stribeck dip: "
            + ", ".join(f"`{n}`" for n in unresolved)
            + " is on the edge of its search box or uncertain by more than 50%.",
            GravdirWarning,
            stacklevel=4,
        )


@ignore_underflow
def fit_friction(
    velocity: ArrayLike,
    *,
    acceleration: ArrayLike | None = None,
    torque: ArrayLike,
    gravity_torque: ArrayLike | None = None,
    model: FrictionModelName = "stribeck",
    exponent: float | None = None,
    min_speed: float = 1e-3,
    speed_resolution: float = 0.05,
    max_iter: int = 200,
    nan_policy: NanPolicy = "raise",
) -> FrictionFit:
    """Fit a friction model (optionally with inertia and load dependence) to joint torque.

    Parameters
    ----------
    velocity : array_like, shape (n,)
        Joint speed, rad/s.
    acceleration : array_like, shape (n,), optional
        Joint acceleration, rad/s². When given, the torque model gains :math:`J \\ddot q` and the
        inertia :math:`J` is estimated (the ramps of an excitation plan then carry information).
    torque : array_like, shape (n,)
        Drive torque, N·m.
    gravity_torque : array_like, shape (n,), optional
        Gravity torque of a loaded run, N·m. When given it is subtracted from `torque` and the
        model gains :math:`\\mu |\\tau_g| \\operatorname{sgn} \\dot q`: the fitted model is a
        :class:`LoadDependentFriction` and `load_coefficient` is estimated in one fit.
    model : {"stribeck", "coulomb-viscous", "asymmetric-stribeck"}
        The friction model (see :class:`StribeckFriction`, :class:`CoulombViscousFriction`,
        :class:`AsymmetricStribeckFriction`).
    exponent : float, optional
        Fixed Stribeck exponent :math:`\\delta`, from 0.25 to 5 (the box of the search). By
        default it is estimated.
    min_speed : float, optional
        Stiction threshold, rad/s (default 1e-3). Samples with ``|velocity| < min_speed`` are
        not used: there the joint sticks or creeps (pre-sliding, Dahl/LuGre regime) and torque
        is not a function of speed. 1e-3 rad/s is a fifth of the slowest speed of a typical
        plan (0.005 rad/s) and several encoder counts per sample on a 1 kHz loop.
    speed_resolution : float, optional
        Relative difference below which two velocities count as one speed when checking that
        the data hold enough distinct speeds (default 0.05: differentiated encoder velocity at
        a constant commanded speed jitters by a few per cent), from 1e-12 to 1.
    max_iter : int, optional
        Largest number of residual evaluations of the search over the Stribeck velocities and
        exponents (scipy ``least_squares``' ``max_nfev``; default 200, far above the 10-30 a
        typical plan needs), from 1 to `MAX_ITER_CAP` = 10 000.
    nan_policy : {"raise", "omit"}, optional
        What a NaN in a series does. ``"raise"`` (default): a ValueError naming the series.
        ``"omit"``: every sample where any series holds a NaN is dropped (samples are
        independent given velocity and acceleration, so the rest still fit); `n_omitted` counts
        them, and `mask` and `residuals` refer to the samples kept. Infinities are refused
        under both; the minimums of data below apply to the samples kept.

    Returns
    -------
    FrictionFit
        Model, parameters, covariance, residuals, residual RMS, and whether the search
        converged (`converged`, `n_iter`).

    Raises
    ------
    ValueError
        On shape mismatch (a column vector is not a series), non-finite or non-numeric input
        (numeric strings included), unknown `model`, `exponent`, `speed_resolution` or
        `max_iter` outside its range, speeds of the samples used spanning more than a factor
        ``2**64`` (a corrupt sample or mixed units: 1e300 rad/s among speeds of 1 rad/s), or
        data whose scales put an estimate or a standard error beyond the float range (e.g. a
        viscous coefficient of torque 1e300 over speed 1e-300).
    InsufficientDataError
        If the samples used move in only one direction, hold fewer distinct speeds than the
        model has speed-dependent parameters, do not outnumber the parameters, or leave two
        columns collinear (e.g. an `acceleration` that is zero throughout); if the data do not
        determine every parameter at the optimum (the Jacobian with its columns scaled to unit
        norm has a reciprocal condition of at most 1e-6; the message names the terms
        involved); or, for a model with a Stribeck dip, if the torque left after the terms
        without one is at most 1e-10 of the torque: a dip below round-off (data without one,
        or a sample of `torque` or `gravity_torque` so far beyond the others that they are
        lost in its rounding).

    Warns
    -----
    GravdirWarning
        If a Stribeck velocity or exponent ends on the edge of its search box, or a Stribeck
        velocity's relative standard error exceeds 50%: the data do not resolve the dip. If the
        covariance leaves the float range in the units of the data: `parameters_cov` is then
        infinite and `parameters_std` holds the standard errors.
    ConvergenceWarning
        If the search stops at `max_iter` evaluations before meeting its tolerance.

    See Also
    --------
    excitation_trajectory : a plan whose torque record this fits.
    load_dependent_friction : the load coefficient from a second, gravity-loaded run.

    Notes
    -----
    The model is :math:`\\tau = X(p)\\,\\theta + \\varepsilon`: the linear parameters
    :math:`\\theta` (offset, levels, viscous coefficients, inertia, load coefficient) enter
    through the columns of :math:`X`, the Stribeck velocity and exponent :math:`p` only through
    :math:`e = \\exp(-|\\dot q/v_s|^{\\delta})`. Variable projection (Golub & Pereyra 1973)
    eliminates :math:`\\theta`: for fixed :math:`p`,
    :math:`\\hat\\theta(p) = X^{+}\\tau`, and :math:`p` minimises
    :math:`\\|(I - X X^{+})\\tau\\|^2`. A grid over :math:`\\log v_s` (and a few exponents) gives
    the global start -- cheap because only the column :math:`\\operatorname{sgn}(\\dot q)\\,e`
    changes across the grid -- and a bounded Gauss-Newton search (scipy ``least_squares``,
    trust-region reflective, with Kaufman's approximation of the projected Jacobian) polishes
    it. The covariance is :math:`\\hat\\sigma^2 (J^\\top J)^{-1}` with
    :math:`J = [X,\\ \\partial (X\\theta)/\\partial p]` at the optimum and
    :math:`\\hat\\sigma^2 = \\mathrm{RSS}/(m - k)`, the asymptotic covariance of the nonlinear
    least-squares estimate under white noise (Kay 1993, ch. 8).

    The fit runs in scaled units: velocity, torque (with the gravity torque) and acceleration are
    divided by powers of two that bring their largest magnitudes to order one -- exact in
    floating point, and skipped for data within :math:`2^{\\pm 64}` -- and the estimates are
    scaled back, so torques of 1e-300 or 1e300 N·m give the same relative figures as torques of
    1 N·m. The speeds used must span at most a factor ``2**64``: far beyond any joint (from one
    encoder count per second to a motor's top speed is less than 1e11), and the bound within
    which every Stribeck term, its derivatives and their squares stay inside the float range.
    The covariance is computed on the Jacobian with its columns scaled to unit norm, so no
    product of the raw columns is formed.

    The friction model identified in the gravity-free pose is the "preset friction
    identification model" of CN 107423515 B, claims 1-2, which relates friction torque to
    speed and acceleration; here the acceleration enters as an inertia term.

    Only one-dimensional series are supported (no batch axes).

    References
    ----------
    CN 107423515 B, claims 1-2 (friction identified from the drive torque of a joint following
    an excitation trajectory in a gravity-free pose).
    Armstrong-Hélouvry, Dupont & Canudas de Wit (1994) (the Coulomb, viscous and Stribeck
    models).
    Golub & Pereyra (1973) (variable projection of the linear parameters, leaving v_s and the
    exponent).
    L. Kaufman, "A variable projection method for solving separable nonlinear least squares
    problems", BIT 15 (1975) (the approximate Jacobian of the projected residual).
    Kay (1993), ch. 8 (covariance and standard errors of a least-squares estimate).

    Examples
    --------
    >>> from gravdir.friction import StribeckFriction
    >>> v = np.concatenate([np.geomspace(0.005, 1, 40), -np.geomspace(0.005, 1, 40)])
    >>> truth = StribeckFriction(2.0, 3.0, 0.05, 1.5, exponent=2.0, offset=0.1)
    >>> fit = fit_friction(v, torque=truth.evaluate(v), model="stribeck")
    >>> np.allclose(fit.parameters, [0.1, 2.0, 3.0, 1.5, 0.05, 2.0]), fit.converged
    (True, True)
    """
    if not isinstance(model, str):
        raise ValueError(f"Expected `model` to be a model name, got {type(model).__name__}.")
    name = check_option(model, "model", MODEL_NAMES)
    strategy = columns_for_name(name)
    if exponent is not None:
        if not strategy.sides:
            raise ValueError(
                f"Expected `exponent` to be None for model {name!r}, got {exponent!r}."
            )
        exponent = _check_exponent(exponent)
    v_min = check_positive(min_speed, "min_speed")
    resolution = _check_resolution(speed_resolution)
    limit = check_count(max_iter, "max_iter", minimum=1, maximum=MAX_ITER_CAP)
    data = _select_samples(velocity, torque, acceleration, gravity_torque, v_min, nan_policy)
    design = Design(strategy, data.velocity, data.acceleration, data.gravity_torque, exponent)
    _check_support(design, data.raw_velocity, resolution)

    p_hat = np.zeros(0)
    at_edge = np.zeros(0, dtype=bool)
    converged, n_iter = True, 0
    if strategy.sides:
        x0, lo, hi = _global_start(design, data.torque)
        p_hat, at_edge, converged, n_iter = _projected_search(
            design, data.torque, x0, (lo, hi), limit
        )
    theta, resid, cov, std = _linear_fit(design, data.torque, p_hat)
    _warn_unresolved(design, p_hat, std, at_edge)
    if not converged:
        warn_not_converged("fit_friction", limit, stacklevel=4)
    fit = _unscaled_fit(
        name, design, data, theta, p_hat, (cov, std), resid, v_min, converged, n_iter
    )
    return dataclasses.replace(fit, n_omitted=data.n_omitted) if data.n_omitted else fit


def _unscaled_fit(
    name: str,
    design: Design,
    data: _Samples,
    theta: NDArray[np.float64],
    p_hat: NDArray[np.float64],
    cov_std: tuple[NDArray[np.float64], NDArray[np.float64]],
    resid: NDArray[np.float64],
    v_min: float,
    converged: bool,
    n_iter: int,
) -> FrictionFit:
    """The fit in the caller's units, from the one in scaled units (exact powers of two)."""
    k = data.parameter_exponents(design.names)
    kt = data.torque_exponent
    scaled = np.concatenate([theta, p_hat])
    cov, std_scaled = cov_std
    with np.errstate(over="ignore"):
        params = np.ldexp(scaled, k)
        std = np.ldexp(std_scaled, k)
        residuals = np.ldexp(resid, kt)
        rms = float(np.ldexp(np.sqrt(np.mean(resid**2)), kt))
    for values, before, what in (
        (params, scaled, "the estimate"),
        (std, std_scaled, "the standard error"),
    ):
        for i, (x, x0) in enumerate(zip(values, before, strict=True)):
            if lost_in_scaling(x0, x):
                raise ValueError(
                    "Expected `torque`, `velocity` and `acceleration` on scales whose ratios fit "
                    f"the float range, got {what} of `{design.names[i]}` beyond it "
                    f"({float(x0):.3g} × 2**{int(k[i])})."
                )
    if not (np.isfinite(rms) and np.all(np.isfinite(residuals))):
        raise ValueError("Expected `torque` whose residuals fit the float range, got an overflow.")
    n_lin = len(design.linear_names) + len(design.extra_names)
    return FrictionFit(
        model=design.model(params[:n_lin], params[n_lin:]),
        model_name=name,
        inertia=design.extra(params, "inertia"),
        parameter_names=tuple(design.names),
        parameters=params,
        parameters_cov=unscaled_cov(cov, k),
        parameters_std=std,
        residuals=residuals,
        mask=data.mask,
        residual_rms=rms,
        min_speed=v_min,
        converged=converged,
        n_iter=n_iter,
    )


def _check_exponent(exponent: float) -> float:
    """A fixed Stribeck exponent: positive, within the box the search uses."""
    value = check_positive(exponent, "exponent")
    lo, hi = _EXPONENT_BOUNDS
    if not lo <= value <= hi:
        raise ValueError(
            f"Expected `exponent` from {lo:g} to {hi:g} (beyond, the Stribeck dip is a step or a "
            f"flat line over any plan), got {value!r}."
        )
    return value


def _check_resolution(speed_resolution: float) -> float:
    value = check_positive(speed_resolution, "speed_resolution")
    lo, hi = SPEED_RESOLUTION_RANGE
    if not lo <= value <= hi:
        raise ValueError(f"Expected `speed_resolution` from {lo:g} to {hi:g}, got {value!r}.")
    return value


def fit_jacobian(
    fit: FrictionFit, velocity: NDArray[np.float64], acceleration: NDArray[np.float64] | None
) -> NDArray[np.float64]:
    """Jacobian of ``fit.predict`` by ``fit.parameters`` at new samples."""
    base = fit.model
    if isinstance(base, LoadDependentFriction):
        raise ValueError("Expected a fit without a load-dependent term, got a load-dependent fit.")
    strategy = columns_for_model(base)
    exponent_fixed = any(
        n.startswith("exponent") and n not in fit.parameter_names for n in strategy.nonlinear_names
    )
    # A fixed exponent is the same for every dip: read it from the model.
    exponent = float(strategy.nonlinear_values(base)[1]) if exponent_fixed else None
    design = Design(strategy, velocity, acceleration, None, exponent)
    n_lin = len(design.linear_names) + len(design.extra_names)
    return design.jacobian(fit.parameters[n_lin:], fit.parameters[:n_lin])
