"""The two-pose split: a gravity-free pose check and the load-dependent friction."""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import NanPolicy, check_direction, check_positive
from gravdir._constants import STANDARD_GRAVITY
from gravdir._results import Result
from gravdir.errors import DegenerateGeometryError, GravdirWarning, InsufficientDataError
from gravdir.friction._estimate import FrictionFit, fit_jacobian
from gravdir.friction._inputs import (
    check_series,
    check_speed_span,
    check_unit,
    ignore_underflow,
    length,
    lost_in_scaling,
    omitted_text,
    pow2_exponent,
    representable,
    vector3,
)
from gravdir.friction._model import LoadDependentFriction, finite_torque

__all__ = [
    "GravityFreeCheck",
    "LoadFrictionFit",
    "gravity_free_check",
    "load_dependent_friction",
    "MIN_LOAD_SAMPLES",
    "check_free_pose",
    "refuse_loaded_pose",
]

# Smallest number of loaded samples (|velocity| >= min_speed, non-zero gravity torque) for μ:
# the noise level behind its standard error comes from m - 1 degrees of freedom, uncertain by
# 1/sqrt(2 (m - 1)) relative -- a quarter at m = 10.
#: Fewest loaded samples from which the load-dependent friction coefficient is estimated.
MIN_LOAD_SAMPLES = 10


@dataclass(frozen=True, eq=False, repr=False)
class GravityFreeCheck(Result):
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

    _units = {
        "residual_fraction": "", "gravity_torque_amplitude": "N·m", "axis_tilt": "rad",
        "distance_from_axis": "m", "tolerance": "",
    }

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


def check_free_pose(free_pose: Any, name: str = "free_pose") -> GravityFreeCheck | None:
    """`free_pose` if it is None or a GravityFreeCheck; ValueError naming `name` otherwise."""
    if free_pose is not None and not isinstance(free_pose, GravityFreeCheck):
        raise ValueError(
            f"Expected `{name}` to be a GravityFreeCheck or None, got {type(free_pose).__name__}."
        )
    return free_pose


def refuse_loaded_pose(free_pose: GravityFreeCheck | None) -> None:
    """Raise DegenerateGeometryError if `free_pose` is given and not gravity-free."""
    check_free_pose(free_pose)
    if free_pose is not None and not free_pose.is_gravity_free:
        raise DegenerateGeometryError(
            f"Expected `free_pose` to be gravity-free, got {free_pose.reason}."
        )


@ignore_underflow
def gravity_free_check(
    up: ArrayLike,
    joint_axis: ArrayLike,
    point: ArrayLike,
    center_of_mass: ArrayLike,
    mass: float,
    *,
    tolerance: float = 0.01,
    gravity: float = STANDARD_GRAVITY,
) -> GravityFreeCheck:
    """Check that gravity exerts (almost) no torque on a joint in a pose.

    Parameters
    ----------
    up : array_like, shape (3,)
        Unit vector opposite to gravity, base frame.
    joint_axis : array_like, shape (3,)
        Joint axis direction in the base frame (normalised here).
    point : array_like, shape (3,)
        A point on the joint axis, m, base frame (e.g. the joint centre).
    center_of_mass : array_like, shape (3,)
        Centre of mass of everything distal to the joint, m, base frame.
    mass : float
        Its mass, kg.
    tolerance : float, optional
        Largest accepted `residual_fraction`, in (0, 1) (default 0.01). At 1% the residual
        gravity torque is of the order of the torque noise of a current-based estimate (0.5% of
        the peak gravity torque) and the load-dependent friction it causes (at most ~5% of the
        load) is below 0.05% of the loaded pose's gravity torque.
    gravity : float, optional
        Acceleration of gravity, m/s² (default ``STANDARD_GRAVITY`` = 9.80665).

    Returns
    -------
    GravityFreeCheck
        The verdict, the residual fraction and the geometry behind it.

    Raises
    ------
    ValueError
        If a vector is not shape (3,), real and finite, `up` is not unit, `joint_axis` is zero,
        `mass` or `gravity` is not a positive number, `tolerance` is not in (0, 1), or the peak
        gravity torque exceeds the float range.

    See Also
    --------
    load_dependent_friction : refuses a free pose whose check failed.

    Notes
    -----
    With :math:`a` the unit axis, :math:`r = c - p` and :math:`r_\\perp = r - (a^\\top r) a`
    (length :math:`\\rho`, the distance from the axis line), the gravity torque about the axis
    is :math:`m g\\, a^\\top (r_\\perp \\times (-u))`. As the joint turns, :math:`r_\\perp`
    rotates about :math:`a` and the torque is a sinusoid of amplitude
    :math:`m g \\rho \\,|a \\times u|`. It vanishes when the axis is vertical
    (:math:`|a \\times u| = 0`) or the centre of mass is on the axis line (:math:`\\rho = 0`):
    the two gravity-free poses of CN 107423515 B, claim 5 (claim 6 names their opposites, the
    loaded poses). The residual fraction divides the amplitude by :math:`m g |r|`.

    References
    ----------
    CN 107423515 B, claims 1, 5 and 6 (the first pose, free of gravity torque: joint axis
    parallel to gravity or centre of mass on the axis line; the second pose, loaded).

    Examples
    --------
    >>> chk = gravity_free_check([0, 0, 1], [0, 0, 1], [0, 0, 0.3], [0.4, 0, 0.5], mass=5.0)
    >>> chk.is_gravity_free, chk.residual_fraction
    (True, 0.0)
    >>> chk = gravity_free_check([0, 0, 1], [0, 1, 0], [0, 0, 0.3], [0.4, 0, 0.3], mass=5.0)
    >>> chk.is_gravity_free, round(chk.gravity_torque_amplitude, 3)
    (False, 19.613)
    """
    u = check_unit(up, "up")
    a = check_direction(joint_axis, "joint_axis")
    p = vector3(point, "point")
    c = vector3(center_of_mass, "center_of_mass")
    m = check_positive(mass, "mass")
    tol = check_positive(tolerance, "tolerance")
    if tol >= 1.0:
        raise ValueError(
            f"Expected `tolerance` below 1 (a fraction of the largest gravity torque), got {tol!r}."
        )
    g0 = check_positive(gravity, "gravity")
    with np.errstate(over="ignore", invalid="ignore"):
        r = c - p
    if not np.all(np.isfinite(r)):
        raise ValueError(
            "Expected `center_of_mass` and `point` whose difference is finite, got an overflow."
        )
    r_perp = r - float(a @ r) * a
    rho = length(r_perp)
    sin_tilt = float(np.linalg.norm(np.cross(a, u)))
    tilt = math.atan2(sin_tilt, abs(float(a @ u)))
    amplitude = m * g0 * rho * sin_tilt
    if not math.isfinite(amplitude):
        raise ValueError(
            "Expected `mass`, `gravity` and the lever arm `center_of_mass` - `point` whose "
            f"product is finite, got m={m:.3g} kg, g={g0:.3g} m/s², distance {rho:.3g} m."
        )
    lever = length(r)
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


@dataclass(frozen=True, eq=False, repr=False)
class LoadFrictionFit(Result):
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
        The gravity-affected friction of CN 107423515 B, claim 4, at every sample: torque −
        gravity torque − gravity-free friction (and inertia), N·m.
    residuals : ndarray, shape (m,)
        `load_friction` minus :math:`\\mu |\\tau_g| \\operatorname{sgn} \\dot q` at the samples
        used, N·m.
    mask : ndarray of bool, shape (n,)
        Samples used (``|velocity| >= min_speed``), over the input samples less any that
        ``nan_policy="omit"`` dropped (as `load_friction`).
    residual_rms : float
        RMS of `residuals`, N·m.
    n_omitted : int
        Samples dropped because a series held a NaN there (``nan_policy="omit"``; 0 otherwise).
    """

    _units = {
        "load_coefficient": "", "load_coefficient_std": "", "load_friction": "N·m",
        "residuals": "N·m", "residual_rms": "N·m",
    }

    load_coefficient: float
    load_coefficient_std: float
    model: LoadDependentFriction
    load_friction: NDArray[np.float64]
    residuals: NDArray[np.float64]
    mask: NDArray[np.bool_]
    residual_rms: float
    n_omitted: int = 0

    def __repr__(self) -> str:
        omitted = f", {self.n_omitted} omitted (NaN)" if self.n_omitted else ""
        return (
            f"LoadFrictionFit(load_coefficient={self.load_coefficient:.5g}"
            f"±{self.load_coefficient_std:.2g}, rms={self.residual_rms:.3g} N·m, "
            f"{int(self.mask.sum())}/{self.mask.size} samples{omitted})"
        )


@ignore_underflow
def load_dependent_friction(
    free_fit: FrictionFit,
    velocity: ArrayLike,
    *,
    acceleration: ArrayLike | None = None,
    torque: ArrayLike,
    gravity_torque: ArrayLike,
    free_pose: GravityFreeCheck | None = None,
    min_speed: float | None = None,
    min_load: float = 1e-6,
    nan_policy: NanPolicy = "raise",
) -> LoadFrictionFit:
    """Split the friction of a gravity-loaded run into gravity-free and load-dependent parts.

    Parameters
    ----------
    free_fit : FrictionFit
        Fit of the gravity-free run (:func:`fit_friction` without `gravity_torque`).
    velocity : array_like, shape (n,)
        Joint speed of the loaded run (the same plan as the free run), rad/s.
    acceleration : array_like, shape (n,), optional
        Joint acceleration, rad/s²; required when `free_fit` includes inertia.
    torque : array_like, shape (n,)
        Drive torque of the loaded run, N·m.
    gravity_torque : array_like, shape (n,)
        Gravity torque of the loaded run, N·m, from the caller's mass model or a sweep fit
        (gravity part only, without offset).
    free_pose : GravityFreeCheck, optional
        The check of the pose of the free run; a pose that is not gravity-free is refused.
    min_speed : float, optional
        Stiction threshold, rad/s; by default the one of `free_fit`.
    min_load : float, optional
        Smallest peak ``|gravity_torque|`` (N·m) for which μ is identifiable (default 1e-6,
        round-off level of a gravity model in N·m).
    nan_policy : {"raise", "omit"}, optional
        What a NaN in `velocity`, `torque`, `gravity_torque` or `acceleration` does.
        ``"raise"`` (default): a ValueError naming the series. ``"omit"``: every sample where
        any of them holds a NaN is dropped; `n_omitted` counts them, and `load_friction`, `mask`
        and `residuals` refer to the samples kept. Infinities are refused under both; the
        minimums below apply to the samples kept.

    Returns
    -------
    LoadFrictionFit
        μ, its standard error, the gravity-affected friction and the residuals.

    Raises
    ------
    DegenerateGeometryError
        If `free_pose` says the free pose is not gravity-free.
    InsufficientDataError
        If no sample is used, the gravity torque stays below `min_load`, or fewer than
        `MIN_LOAD_SAMPLES` = 10 samples used carry a non-zero gravity torque (μ and the noise
        level behind its standard error need them).
    ValueError
        On shape mismatch (a column vector is refused, not broadcast), non-finite or
        non-numeric input (numeric strings included), a missing `acceleration`, a
        load-dependent `free_fit`, a `free_pose` that is not a GravityFreeCheck, speeds of the
        samples used spanning more than a factor ``2**64`` (as :func:`fit_friction`), or data
        whose scales put μ or its standard error beyond the float range.

    Warns
    -----
    GravdirWarning
        If the covariance of `free_fit` is infinite (a free fit of data beyond about 1e150 N·m):
        its share of the standard error of μ is then bounded by :math:`\\sum_j |h_j| \\sigma_j`,
        never understated.

    See Also
    --------
    fit_friction : the gravity-free fit, or a one-run fit of μ with `gravity_torque`.
    identify_joint_friction : both steps for one joint.

    Notes
    -----
    CN 107423515 B, claim 4: the gravity-affected friction is the drive torque minus the gravity
    torque minus the gravity-free friction,
    :math:`f_L = \\tau - \\tau_g - \\hat\\tau_{f,0}(\\dot q) - \\hat J \\ddot q`. Its model here is
    :math:`f_L = \\mu\\, x`, :math:`x = |\\tau_g| \\operatorname{sgn}\\dot q`, so
    :math:`\\hat\\mu = x^\\top f_L / x^\\top x`. Its variance has two parts: the loaded run's
    noise, :math:`\\hat\\sigma^2 / x^\\top x`, and the free fit's, carried by the delta method,
    :math:`x^\\top F \\Sigma_0 F^\\top x / (x^\\top x)^2`, with :math:`F` the Jacobian of the free
    model at the loaded run's samples and :math:`\\Sigma_0` the free fit's covariance.
    :math:`x` and :math:`f_L` are scaled by powers of two before the products (exact, and
    skipped for data of ordinary size), so no square overflows or underflows.

    References
    ----------
    CN 107423515 B, claims 1 and 4 (the loaded pose run on the same excitation trajectory; the
    subtraction that gives the gravity-affected friction).
    Kay (1993), ch. 8 (the variance of a least-squares estimate behind the standard error).

    Examples
    --------
    >>> from gravdir.friction import (
    ...     CoulombViscousFriction, LoadDependentFriction, fit_friction)
    >>> v = np.tile(np.concatenate([np.geomspace(0.01, 1, 30), -np.geomspace(0.01, 1, 30)]), 2)
    >>> free = CoulombViscousFriction(2.0, 1.5)
    >>> fit0 = fit_friction(v, torque=free.evaluate(v), model="coulomb-viscous")
    >>> torque_g = np.linspace(-20.0, 30.0, v.size)
    >>> torque = torque_g + LoadDependentFriction(free, 0.03).evaluate(v, load=torque_g)
    >>> fit = load_dependent_friction(fit0, v, torque=torque, gravity_torque=torque_g)
    >>> round(fit.load_coefficient, 9)
    0.03
    """
    if not isinstance(free_fit, FrictionFit):
        raise ValueError(f"Expected `free_fit` to be a FrictionFit, got {type(free_fit).__name__}.")
    refuse_loaded_pose(free_pose)
    series, n_omitted = check_series(
        nan_policy,
        {
            "velocity": velocity,
            "torque": torque,
            "gravity_torque": gravity_torque,
            "acceleration": acceleration,
        },
        optional=("acceleration",),
    )
    # The three required series are never None here.
    v = cast("NDArray[np.float64]", series["velocity"])
    drive = cast("NDArray[np.float64]", series["torque"])
    g = cast("NDArray[np.float64]", series["gravity_torque"])
    acc = series["acceleration"]
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
    mask = np.abs(v) >= v_min
    if not np.any(mask):
        raise InsufficientDataError(
            f"Expected `velocity` to hold samples with |velocity| >= `min_speed`={v_min:g}, got "
            f"none{omitted_text(n_omitted)}."
        )
    check_speed_span(v[mask], v_min)
    a_used = acc if free_fit.inertia is not None else None
    free_torque = free_fit.predict(v, acceleration=a_used)
    load_friction = finite_torque(
        lambda: drive - g - free_torque, "`torque`, `gravity_torque` and `velocity`"
    )
    peak = float(np.max(np.abs(g[mask])))
    if peak < floor:
        raise InsufficientDataError(
            f"Expected `gravity_torque` to load the joint (peak |gravity_torque| >= {floor:g} "
            f"N·m over the samples used), got {peak:.3g} N·m."
        )
    loaded = int(np.count_nonzero(g[mask]))
    if loaded < MIN_LOAD_SAMPLES:
        raise InsufficientDataError(
            f"Expected `gravity_torque` non-zero at {MIN_LOAD_SAMPLES} or more samples with "
            f"|velocity| >= `min_speed`={v_min:g}, got {loaded}{omitted_text(n_omitted)}."
        )
    x = np.abs(g[mask]) * np.sign(v[mask])
    f = load_friction[mask]
    # Scaled units (exact powers of two, none for data of ordinary size), so that no square
    # overflows or underflows: x = 2**kx xs, f = 2**kf fs, mu = 2**(kf - kx) mu_s.
    kx, kf = pow2_exponent(x), pow2_exponent(f)
    xs, fs = np.ldexp(x, -kx), np.ldexp(f, -kf)
    xtx = float(xs @ xs)
    mu_s = float(xs @ fs) / xtx
    resid_s = fs - mu_s * xs
    sigma2_s = float(resid_s @ resid_s) / max(int(x.size) - 1, 1)
    jac = fit_jacobian(free_fit, v[mask], None if a_used is None else a_used[mask])
    with np.errstate(over="ignore", invalid="ignore"):
        mu = float(np.ldexp(mu_s, kf - kx))
        resid = np.ldexp(resid_s, kf)
        rms = float(np.ldexp(np.sqrt(np.mean(resid_s**2)), kf))
        h_s = (xs @ jac) / xtx
        var1_s = sigma2_s / xtx
        var2_s = float(h_s @ free_fit.parameters_cov @ h_s)
        var = float(np.ldexp(var1_s, 2 * (kf - kx)) + np.ldexp(var2_s, -2 * kx))
    if lost_in_scaling(mu_s, mu):
        raise ValueError(
            "Expected `torque`, `gravity_torque` and `velocity` on scales whose ratio fits the "
            f"float range, got a load coefficient of {mu_s:.3g} × 2**{kf - kx}."
        )
    if not (np.isfinite(rms) and np.all(np.isfinite(resid))):
        raise ValueError("Expected `torque` whose residuals fit the float range, got an overflow.")
    if var1_s == 0.0 and var2_s <= 0.0 or var > 0.0 and representable(var):
        std = math.sqrt(max(var, 0.0))
    else:
        std = _scaled_std(var1_s, kf - kx, xs, xtx, kx, jac, free_fit)
    return LoadFrictionFit(
        load_coefficient=mu,
        load_coefficient_std=std,
        model=LoadDependentFriction(base, mu),
        load_friction=load_friction,
        residuals=resid,
        mask=mask,
        residual_rms=rms,
        n_omitted=n_omitted,
    )


def _scaled_std(
    var1_s: float,
    k1: int,
    xs: NDArray[np.float64],
    xtx: float,
    kx: int,
    jac: NDArray[np.float64],
    free_fit: FrictionFit,
) -> float:
    """Standard error of μ where its variance leaves the float range: in scaled units.

    The loaded run's part is ``2**k1 sqrt(var1_s)``; the free fit's part is
    ``sqrt(d R d)`` with ``d_j = h_j σ_j`` (`h` the sensitivity of μ to the free parameters,
    `σ` their standard errors) and `R` their correlation, every factor carried as a mantissa
    and a power of two. A free covariance that is itself infinite (outside the float range)
    leaves the correlation unknown: the bound ``|d|_1`` is used, with a warning.
    """
    sigma = np.asarray(free_fit.parameters_std)
    kj = np.array([pow2_exponent(col) for col in jac.T], dtype=np.int64)
    sigma_m, sigma_e = np.frexp(sigma)
    hm = (xs @ np.ldexp(jac, -kj)) / xtx * sigma_m  # d_j = hm_j * 2**e_j
    e = kj - kx + sigma_e
    used = hm != 0
    top = int(np.max(e[used] + np.frexp(hm[used])[1])) if np.any(used) else 0
    d = np.ldexp(hm, e - top)  # |d_j| <= 1; the free fit's part is 2**top sqrt(d R d)
    cov = np.asarray(free_fit.parameters_cov)
    if not np.any(used):
        quad = 0.0
    elif np.all(np.isfinite(cov)):
        safe = np.where(sigma > 0, sigma, 1.0)
        corr = np.clip(cov / safe[:, None] / safe[None, :], -1.0, 1.0)
        quad = math.sqrt(max(float(d @ corr @ d), 0.0))
    else:
        warnings.warn(
            "The covariance of `free_fit` is infinite (outside the float range): the standard "
            "error of the load coefficient uses the bound sum |h_j σ_j| for its part.",
            GravdirWarning,
            stacklevel=4,
        )
        quad = float(np.sum(np.abs(d)))
    with np.errstate(over="ignore"):
        std1 = float(np.ldexp(math.sqrt(var1_s), k1))
        std = float(np.hypot(std1, np.ldexp(quad, top)))
    if not representable(std) or (std == 0.0 and (var1_s > 0.0 or quad > 0.0)):
        raise ValueError(
            "Expected `torque`, `gravity_torque` and `velocity` on scales whose ratio fits the "
            "float range, got a standard error of the load coefficient beyond it."
        )
    return std
