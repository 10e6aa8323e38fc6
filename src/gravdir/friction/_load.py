"""The two-pose split: a gravity-free pose check and the load-dependent friction."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import check_positive, check_unit_vector, check_vectors
from gravdir._constants import STANDARD_GRAVITY
from gravdir._results import Result
from gravdir.errors import DegenerateGeometryError, InsufficientDataError
from gravdir.friction._estimate import (
    FrictionFit,
    check_like_velocity,
    check_velocity,
    fit_jacobian,
)
from gravdir.friction._model import LoadDependentFriction

__all__ = [
    "GravityFreeCheck",
    "LoadFrictionFit",
    "gravity_free_check",
    "load_dependent_friction",
    "refuse_loaded_pose",
]


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


def refuse_loaded_pose(free_pose: GravityFreeCheck | None) -> None:
    """Raise DegenerateGeometryError if `free_pose` is given and not gravity-free."""
    if free_pose is not None and not free_pose.is_gravity_free:
        raise DegenerateGeometryError(
            f"Expected `free_pose` to be gravity-free, got {free_pose.reason}."
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
    """Check that gravity exerts (almost) no torque on a joint in a pose.

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
        Acceleration of gravity, m/s² (default ``STANDARD_GRAVITY`` = 9.80665).

    Returns
    -------
    GravityFreeCheck
        The verdict, the residual fraction and the geometry behind it.

    Raises
    ------
    ValueError
        If a vector is not shape (3,) and finite, `up` is not unit, `axis` is zero, or `mass`,
        `tolerance`, `gravity` are not positive.

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
        μ, its standard error, the gravity-affected friction and the residuals.

    Raises
    ------
    DegenerateGeometryError
        If `free_pose` says the free pose is not gravity-free.
    InsufficientDataError
        If no sample is used or the gravity torque is zero throughout.
    ValueError
        On shape mismatch, non-finite input, a missing `acceleration`, or a load-dependent
        `free_fit`.

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
    >>> fit0 = fit_friction(v, free.evaluate(v), model="coulomb-viscous")
    >>> torque_g = np.linspace(-20.0, 30.0, v.size)
    >>> torque = torque_g + LoadDependentFriction(free, 0.03).evaluate(v, load=torque_g)
    >>> round(load_dependent_friction(fit0, v, torque, torque_g).load_coefficient, 9)
    0.03
    """
    if not isinstance(free_fit, FrictionFit):
        raise ValueError(f"Expected `free_fit` to be a FrictionFit, got {type(free_fit).__name__}.")
    refuse_loaded_pose(free_pose)
    v = check_velocity(velocity)
    drive = check_like_velocity(torque, "torque", v)
    g = check_like_velocity(gravity_torque, "gravity_torque", v)
    acc = None if acceleration is None else check_like_velocity(acceleration, "acceleration", v)
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
    load_friction = drive - g - free_fit.predict(v, a_used)
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
    sigma2 = float(resid @ resid) / max(int(x.size) - 1, 1)
    jac = fit_jacobian(free_fit, v[mask], None if a_used is None else a_used[mask])
    h = (x @ jac) / xtx
    var = sigma2 / xtx + float(h @ free_fit.parameters_cov @ h)
    return LoadFrictionFit(
        load_coefficient=mu,
        load_coefficient_std=math.sqrt(max(var, 0.0)),
        model=LoadDependentFriction(base, mu),
        load_friction=load_friction,
        residuals=resid,
        mask=mask,
        residual_rms=float(np.sqrt(np.mean(resid**2))),
    )
