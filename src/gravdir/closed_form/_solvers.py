"""Closed-form solvers of the lumped point-mass model, the in-plane offset and two branches."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from gravdir.closed_form._inputs import (
    DEFAULT_PARALLEL_RTOL,
    DEFAULT_PARALLEL_SIGMA,
    DEFAULT_SINGULAR_TOL,
    DEFAULT_ZERO_ATOL,
    _check_j1_and_j2,
    _check_one_zero_inputs,
    _check_other_zero,
    _check_pair_amplitudes,
    _Fit,
    _is_parallel,
    _OneZero,
    _other_sweep,
    _which_zero,
    check_angle,
    check_zero_tol,
    clip_decision,
    relative_ratio_std,
    warn_decision,
)
from gravdir.closed_form._model import (
    BETA,
    N_COLUMNS,
    THETA2,
    Roots,
    l2_roots,
    point_mass_roots,
    two_branch_roots,
)
from gravdir.closed_form._result import (
    ClosedFormEstimate,
    SolverName,
    Zero,
    _a2_variance,
    _estimate,
    _parallel_in_plane,
    _parallel_vertical,
    _Part,
    _Problem,
)
from gravdir.errors import DegenerateGeometryError
from gravdir.sweep import SweepFit, wrap_angle

__all__ = ["solve_l2_offset", "solve_point_mass", "solve_two_branch"]


def _data(*fits: _Fit) -> NDArray[np.float64]:
    """d = (A1, phi1, A2, phi2, ...) of the fits."""
    return np.array([v for f in fits for v in (f.amplitude, f.phase)], dtype=np.float64)


def _problem(inputs: _OneZero, sigma: int, solver: SolverName, *more: _Fit) -> _Problem:
    return _Problem(
        fits=(inputs.f1, inputs.f2, *more),
        az=inputs.az,
        singular_tol=inputs.singular_tol,
        zero=_zero(sigma),
        solver=solver,
    )


def _zero(sigma: int) -> Zero:
    return "unstable" if sigma == 1 else "stable"


def _phase_pick(
    predicted: NDArray[np.float64],
    measured: float,
    std: float,
    solver: str,
    label: str,
    theta2: NDArray[np.float64],
) -> int:
    """The root whose predicted phase is nearest the `measured` one (standard deviation `std`);
    a warning where the runner-up is within a few standard deviations. `label` names the
    measured phase, `theta2` holds the roots' theta2 for the message."""
    dist = np.abs(wrap_angle(predicted - measured))
    order = np.argsort(dist, kind="stable")
    if dist.size > 1:
        # The measured phase has to move half the gap to flip the decision.
        margin = float(dist[order[1]] - dist[order[0]]) / 2.0
        best, other = np.degrees(theta2[order[0]]), np.degrees(theta2[order[1]])
        what = f"{label} picks theta2 = {best:.4g}° over {other:.4g}°"
        warn_decision(solver, what, margin, std)
    return int(order[0])


def _half_difference(phi_u: float, phi_s: float) -> float:
    """Half the wrapped J2 phase difference, in (-pi/2, pi/2]."""
    return float(wrap_angle(phi_s - phi_u)) / 2.0


def _warn_half_branch(solver: str, fu: _Fit, fs: _Fit) -> None:
    """Warn where half the J2 phase difference lies within a few standard deviations of 0, where
    theta2 jumps between 0 and pi (`up` along +z or along -z)."""
    half = _half_difference(fu.phase, fs.phase)
    std = math.sqrt(fu.cov[1, 1] + fs.cov[1, 1]) / 2.0
    theta2 = half if half >= 0 else half + math.pi
    warn_decision(
        solver,
        f"half the J2 phase difference ({half:.3g} rad) puts theta2 at "
        f"{math.degrees(theta2):.4g}° rather than {180.0 - math.degrees(theta2):.4g}°",
        abs(half),
        std,
    )


def _clip_point_mass(inputs: _OneZero, excess: float) -> None:
    """Warn about (or refuse) an arcsin argument A1 / (A2 sin(gamma)) beyond 1."""
    if excess <= 0:
        return
    x = 1.0 + excess
    rel = relative_ratio_std(inputs.f1, inputs.f2)
    clip_decision(
        "solve_point_mass",
        f"A1 / (A2 sin(gamma)) = {x:.6g}",
        excess,
        x * rel,
        excess / x,
        "`gamma`",
    )


def _clip_l2(inputs: _OneZero, sigma: int, excess: float) -> None:
    """Warn about (or refuse) an arccos argument cos(a) - 2 sigma r beyond +-1."""
    if excess <= 0:
        return
    f1, f2 = inputs.f1, inputs.f2
    r = f1.amplitude / f2.amplitude
    a = inputs.gamma - float(wrap_angle(inputs.gamma0 + math.pi - f2.phase))
    # c = cos(a) - 2 sigma r: r through both amplitudes, a through the J2 phase.
    std = math.hypot(2.0 * r * relative_ratio_std(f1, f2), math.sin(a) * f2.phase_std)
    c = math.cos(a) - 2.0 * sigma * r
    clip_decision(
        "solve_l2_offset",
        f"the arccos argument cos(a) - 2 sigma A1 / A2 = {c:.6g}",
        excess,
        std,
        excess / (2.0 * r),
        "`gamma` and `gamma0`",
    )


def _no_root(model: str, check: str) -> DegenerateGeometryError:
    return DegenerateGeometryError(
        f"Expected fits consistent with the {model} model (mass on the arm's side of the J1 "
        f"axis during the J1 sweep), got no admissible root: check {check}."
    )


def _parallel_one_zero(
    inputs: _OneZero, *, unknown_beta: bool, lam: float, solver: SolverName
) -> ClosedFormEstimate:
    """theta2 from one J2 sweep when A1 is not significant (theta1 undefined).

    A J2 sweep at the other zero, if given, is not used, but its covariance counts: a fit of
    unknown uncertainty among the inputs leaves the result's unknown.
    """
    more = () if inputs.fo is None else (inputs.fo,)
    problem = _Problem((inputs.f1, inputs.f2, *more), inputs.az, 0.0, "none", solver)
    kappa = float(wrap_angle(inputs.gamma0 + np.pi - inputs.f2.phase))
    q1 = float(wrap_angle(inputs.q1))
    if unknown_beta:
        # theta2 in {0, pi}; beta = theta2 - kappa; the smaller |beta| decides.
        rows = np.zeros((2, N_COLUMNS))
        rows[:, 0], rows[:, THETA2] = q1, (0.0, np.pi)
        rows[:, BETA] = wrap_angle(rows[:, THETA2] - kappa)
        size = np.abs(rows[:, BETA])
        index = int(np.argmin(size))
        warn_decision(
            f"solve_{solver}",
            f"gravity parallel to J1: the smaller |beta| puts `up` at theta2 = "
            f"{180 * index}° rather than {180 * (1 - index)}°",
            abs(float(size[0] - size[1])) / 2.0,
            inputs.f2.phase_std,
        )
        rule = "gravity parallel to J1: theta2 in {0, pi}, smaller |beta|"
        return _parallel_vertical(problem, rows, index, rule, inputs.gamma, lam)
    # kappa is the signed angle of `up` from +z in the plane of the J2 sweep at q1.
    rows = np.zeros((1, N_COLUMNS))
    rows[0, :2] = float(wrap_angle(q1 if kappa >= 0 else q1 + np.pi)), abs(kappa)
    lever = inputs.f2.amplitude * math.sin(inputs.gamma)
    scale = 1.0 / lever if lever > 0 else math.inf
    a2_var = _a2_variance(inputs.f1, scale, q1)
    rule = "gravity parallel to J1: theta2 from the J2 phase"
    return _parallel_in_plane(problem, rows, 0, rule, q1, float(inputs.f2.cov[1, 1]), a2_var)


def solve_point_mass(
    fit_j1: SweepFit,
    fit_j2: SweepFit,
    q1_at_j2: float,
    gamma: float,
    gamma0: float,
    *,
    arm_azimuth: float = 0.0,
    zero_tol: float | None = None,
    parallel_sigma: float = DEFAULT_PARALLEL_SIGMA,
    parallel_rtol: float = DEFAULT_PARALLEL_RTOL,
    singular_tol: float = DEFAULT_SINGULAR_TOL,
) -> ClosedFormEstimate:
    """Gravity direction for the lumped point-mass model: the distal mass on the link line.

    Parameters
    ----------
    fit_j1 : SweepFit
        Fit of the J1 sweep (single sweep, batch shape ``()``).
    fit_j2 : SweepFit
        Fit of the J2 sweep taken with J1 held at `q1_at_j2`.
    q1_at_j2 : float
        J1 position during the J2 sweep, rad: one of the J1 gravity zeros of `fit_j1` (the
        solver works out which). Any value within two turns is accepted where A1 is not
        significant.
    gamma : float
        Angle of the link from +z during the J1 sweep, rad, in (0, pi).
    gamma0 : float
        Link angle at J2 position 0 (:math:`\\gamma = q_2 + \\gamma_0`), rad. It only decides
        between the two amplitude roots :math:`\\theta_2` and :math:`\\pi - \\theta_2`.
    arm_azimuth : float, optional
        Azimuth of the arm's horizontal direction at J1 position 0, rad (default 0: along +x).
    zero_tol : float, optional
        Largest distance of `q1_at_j2` from a J1 zero, rad (positive). Default
        ``max(5 * fit_j1.phase_std, 0.01)`` (0.01 where that standard deviation is unknown).
    parallel_sigma, parallel_rtol : float, optional
        A1 is not significant (gravity parallel to J1) when
        ``A1 <= max(parallel_sigma * std(A1), parallel_rtol * A2)``; defaults 3 and 1e-9.
    singular_tol : float, optional
        `near_singular` is set when theta2 is within this distance of 90 deg (default 1e-3 rad).

    Returns
    -------
    ClosedFormEstimate
        Roots :math:`\\theta_2` and :math:`\\pi - \\theta_2` from the amplitude ratio; the one
        whose predicted J2 phase is nearer the measured one is returned. Where noise pushes the
        arcsin argument past 1 it is clipped (theta2 = 90 deg) and `clipped` is set.

    Raises
    ------
    ValueError
        If a fit is not a single :class:`~gravdir.sweep.SweepFit` with finite coefficients, a
        number is a bool, a string or not finite, `gamma` is outside (0, pi) (beyond pi the
        message ends in ``"degrees?"``), another angle lies beyond two turns (``"degrees?"``),
        a tolerance is negative, or `q1_at_j2` is not at a J1 zero.
    DegenerateGeometryError
        If the J2 amplitude is not significant or below 1e-9 of the J1 amplitude, or the
        arcsin argument lies beyond 1 by more than 25% of the amplitude ratio and five standard
        deviations (data inconsistent with `gamma`).

    Warns
    -----
    GravdirWarning
        If a fit's covariance is infinite or NaN (the result's `theta_cov` is then infinite and
        its `up_information` zero), the arcsin argument was clipped (with its margin in
        standard deviations), or the J2 phase picks between the two roots by less than three
        standard deviations.

    See Also
    --------
    solve_l2_offset : the mass offset across the link (in-plane offset L2).
    solve_two_branch : phases only, free of the per-joint torque gains.
    gravdir.estimate_up : any mass distribution, from three or more sweeps.

    Notes
    -----
    With the mass :math:`m` at distance :math:`L_1` along the link,
    :math:`A_1 = m g L_1 \\sin\\gamma \\sin\\theta_2` and, at the unstable J1 zero,
    :math:`A_2 = m g L_1` and :math:`\\varphi_2 = \\gamma_0 - \\theta_2 + \\pi` (at the stable
    zero :math:`\\theta_2 \\to -\\theta_2`). Hence

    .. math:: \\sin\\theta_2 = \\frac{A_1}{A_2 \\sin\\gamma}, \\qquad
              \\theta_1 = \\pi - \\varphi_1 ,

    and the horizontal part of `up` is :math:`R(a_0)\\,(-a_1, b_1) / (A_2 \\sin\\gamma)`, linear
    in the J1 fit's coefficients :math:`(a_1, b_1)`: its covariance stays finite where theta1
    is undefined. The ratio mixes the gains of two joints: a gain error scales
    :math:`\\sin\\theta_2`.

    References
    ----------
    US 11,446,825 B2, FIG. 5 and Eqs. (1)--(11) (the lumped point-mass model); the threshold on
    A1 for gravity parallel to J1 follows Eq. (13) there.

    Examples
    --------
    >>> from gravdir.sweep import fit_sweep
    >>> from gravdir.frames import up_from_canonical
    >>> from gravdir.synthetic import canonical_arm
    >>> arm = canonical_arm(L1=0.6, gamma0=0.2, up=up_from_canonical(0.5, 0.3))
    >>> r1 = arm.sweep(0, [0.0, 1.2], -2.0, 2.0, 0.5, 100.0)
    >>> f1 = fit_sweep(r1.q, velocity=r1.velocity, torque=r1.torque)
    >>> q1 = float(f1.zeros().unstable)
    >>> r2 = arm.sweep(1, [q1, 0.0], -1.5, 1.5, 0.5, 100.0)
    >>> f2 = fit_sweep(r2.q, velocity=r2.velocity, torque=r2.torque)
    >>> res = solve_point_mass(f1, f2, q1, gamma=1.4, gamma0=0.2)
    >>> round(res.theta1, 9), round(res.theta2, 9)
    (0.5, 0.3)
    """
    # An underflow to zero (or to a subnormal) is the correctly rounded result here.
    with np.errstate(under="ignore"):
        inputs = _check_one_zero_inputs(
            fit_j1, fit_j2, q1_at_j2, gamma, gamma0, arm_azimuth, singular_tol, parallel_sigma,
            parallel_rtol, zero_tol,
        )
        return _point_mass(inputs)


def _point_mass(inputs: _OneZero) -> ClosedFormEstimate:
    if _is_parallel(inputs.f1, inputs.f2.amplitude, inputs.parallel_sigma, inputs.parallel_rtol):
        return _parallel_one_zero(inputs, unknown_beta=False, lam=0.0, solver="point_mass")
    sigma = _which_zero(inputs.f1, inputs.q1, "q1_at_j2", inputs.zero_tol)

    def solve(d: NDArray[np.float64]) -> Roots:
        return point_mass_roots(d, sigma, inputs.gamma)

    rows, excess = solve(_data(inputs.f1, inputs.f2))
    _clip_point_mass(inputs, excess)
    index = _phase_pick(
        inputs.gamma0 - sigma * rows[:, THETA2] + np.pi,
        inputs.f2.phase,
        inputs.f2.phase_std,
        "solve_point_mass",
        "the J2 phase (with gamma0)",
        rows[:, THETA2],
    )
    rule = "J2 phase (with gamma0) picks theta2 or pi - theta2"
    problem = _problem(inputs, sigma, "point_mass")
    return _estimate(problem, [_Part(solve, rows, excess > 0)], index, rule)


def solve_l2_offset(
    fit_j1: SweepFit,
    fit_j2: SweepFit,
    q1_at_j2: float,
    gamma: float,
    gamma0: float,
    *,
    fit_j2_other: SweepFit | None = None,
    q1_at_j2_other: float | None = None,
    arm_azimuth: float = 0.0,
    zero_tol: float | None = None,
    parallel_sigma: float = DEFAULT_PARALLEL_SIGMA,
    parallel_rtol: float = DEFAULT_PARALLEL_RTOL,
    singular_tol: float = DEFAULT_SINGULAR_TOL,
) -> ClosedFormEstimate:
    """Gravity direction for a mass offset across the link in the J2 plane (in-plane offset L2).

    Parameters
    ----------
    fit_j1, fit_j2, q1_at_j2, gamma, gamma0
        As in :func:`solve_point_mass`; `gamma` is the angle of the link line (not of the mass)
        from +z during the J1 sweep.
    fit_j2_other : SweepFit, optional
        A J2 sweep at the other J1 zero. Its phase picks the root (and removes the two-root
        ambiguity).
    q1_at_j2_other : float, optional
        J1 position of `fit_j2_other`, rad; required with it.
    arm_azimuth, zero_tol, parallel_sigma, parallel_rtol
        As in :func:`solve_point_mass`.
    singular_tol : float, optional
        `near_singular` is set when the returned root is within this distance (rad) of merging
        with the other root, i.e. where :math:`\\gamma + \\beta + \\theta_2` is within
        ``2 * singular_tol`` of pi (default 1e-3).

    Returns
    -------
    ClosedFormEstimate
        Up to two admissible roots :math:`(\\theta_2, \\beta)`; the one with the smaller
        :math:`|\\beta|` (the lumped mass nearest the link line) is returned, or, with
        `fit_j2_other`, the one that predicts its phase best. Where noise pushes the arccos
        argument past 1 it is clipped and `clipped` is set.

    Raises
    ------
    ValueError
        As :func:`solve_point_mass`, and if `fit_j2_other` is not at the other J1 zero, its
        amplitude differs from `fit_j2`'s by more than 25%, or one of the pair is missing.
    DegenerateGeometryError
        If a J2 amplitude is not significant, no root satisfies the model, or the arccos
        argument lies beyond +-1 by more than 25% of the amplitude ratio and five standard
        deviations (data inconsistent with `gamma` and `gamma0`).

    Warns
    -----
    GravdirWarning
        As :func:`solve_point_mass` (a clipped arccos argument), and where the phase of
        `fit_j2_other`, or with gravity along J1 the smaller :math:`|\\beta|`, decides by less
        than three standard deviations.

    See Also
    --------
    solve_point_mass : the special case :math:`L_2 = 0`.
    solve_l3_offset : the mass also offset along the J2 axis (out-of-plane offset L3).

    Notes
    -----
    With :math:`R_{12} = \\sqrt{L_1^2 + L_2^2}` and :math:`\\beta = \\operatorname{atan2}(L_2,
    L_1)`: :math:`r = A_1/A_2 = \\sin(\\gamma + \\beta)\\sin\\theta_2` and, with
    :math:`\\sigma = \\pm 1` at the unstable/stable zero,
    :math:`\\kappa = \\gamma_0 + \\pi - \\varphi_2 = \\sigma\\theta_2 - \\beta`. With
    :math:`t = \\sigma\\theta_2` and :math:`a = \\gamma - \\kappa`, the product-to-sum identity
    gives

    .. math:: \\cos(a + 2t) = \\cos a - 2\\sigma r, \\qquad
              t = \\tfrac12\\,(\\pm\\arccos(\\cos a - 2\\sigma r) - a) + k\\pi,

    of which the roots with :math:`\\theta_2 \\in [0, \\pi]` and :math:`\\sin(\\gamma + \\beta) > 0`
    are admissible. The horizontal part of `up` is
    :math:`R(a_0)\\,(-a_1, b_1) / (A_2 \\sin(\\gamma + \\beta))`.

    References
    ----------
    US 11,446,825 B2, FIGS. 8 and 9 and Eqs. (12)--(19) (the in-plane offset; the
    product-to-sum identity is its Eq. (17)).

    Examples
    --------
    The two-root example of ``docs/closed_form.md`` (:math:`\\gamma` = 137.7°):

    >>> from gravdir.sweep import fit_sweep
    >>> from gravdir.frames import up_from_canonical
    >>> from gravdir.synthetic import canonical_arm
    >>> beta = np.radians(-4.39)
    >>> arm = canonical_arm(L1=np.cos(beta), L2=np.sin(beta),
    ...                     up=up_from_canonical(0.0, np.radians(56.35)))
    >>> gamma = np.radians(137.7)
    >>> r1 = arm.sweep(0, [0.0, gamma], -2.0, 2.0, 0.5, 100.0)
    >>> f1 = fit_sweep(r1.q, velocity=r1.velocity, torque=r1.torque)
    >>> q1 = float(f1.zeros().unstable)
    >>> r2 = arm.sweep(1, [q1, 0.0], -1.5, 1.5, 0.5, 100.0)
    >>> f2 = fit_sweep(r2.q, velocity=r2.velocity, torque=r2.torque)
    >>> res = solve_l2_offset(f1, f2, q1, gamma=gamma, gamma0=0.0)
    >>> [(float(np.degrees(r.theta2).round(2)), float(np.degrees(r.beta).round(2)))
    ...  for r in res.roots]
    [(46.69, -14.05), (56.35, -4.39)]
    >>> round(float(np.degrees(res.theta2)), 2), res.rule
    (56.35, 'smaller |beta| (lumped mass nearest the link line)')
    """
    with np.errstate(under="ignore"):  # an underflow is the correctly rounded result here
        inputs = _check_one_zero_inputs(
            fit_j1, fit_j2, q1_at_j2, gamma, gamma0, arm_azimuth, singular_tol, parallel_sigma,
            parallel_rtol, zero_tol, fit_j2_other, q1_at_j2_other,
        )
        return _l2_offset(inputs)


def _l2_offset(inputs: _OneZero) -> ClosedFormEstimate:
    if _is_parallel(inputs.f1, inputs.f2.amplitude, inputs.parallel_sigma, inputs.parallel_rtol):
        return _parallel_one_zero(inputs, unknown_beta=True, lam=0.0, solver="l2_offset")
    sigma = _which_zero(inputs.f1, inputs.q1, "q1_at_j2", inputs.zero_tol)
    fo = _other_sweep(inputs, sigma)

    def solve(d: NDArray[np.float64]) -> Roots:
        return l2_roots(d, sigma, inputs.gamma, inputs.gamma0)

    rows, excess = solve(_data(inputs.f1, inputs.f2))
    _clip_l2(inputs, sigma, excess)
    if rows.shape[0] == 0:
        raise _no_root("L2", "`gamma` and `gamma0`")
    if fo is None:
        index = int(np.argmin(np.abs(rows[:, BETA])))
        rule = "smaller |beta| (lumped mass nearest the link line)"
    else:
        predicted = inputs.gamma0 + rows[:, BETA] + sigma * rows[:, THETA2] + np.pi
        index = _phase_pick(
            predicted,
            fo.phase,
            fo.phase_std,
            "solve_l2_offset",
            "the phase of the J2 sweep at the other J1 zero",
            rows[:, THETA2],
        )
        rule = "phase of the J2 sweep at the other J1 zero"
    # The second sweep only picks the root (its coefficients do not enter the root's formula),
    # but a fit of unknown uncertainty among the inputs leaves the result's unknown.
    more = () if fo is None else (fo,)
    problem = _problem(inputs, sigma, "l2_offset", *more)
    return _estimate(problem, [_Part(solve, rows, excess > 0, n_coef=4)], index, rule)


def solve_two_branch(
    fit_j1: SweepFit,
    fit_j2_a: SweepFit,
    q1_at_j2_a: float,
    fit_j2_b: SweepFit,
    q1_at_j2_b: float,
    *,
    arm_azimuth: float = 0.0,
    zero_tol: float | None = None,
    parallel_sigma: float = DEFAULT_PARALLEL_SIGMA,
    parallel_rtol: float = DEFAULT_PARALLEL_RTOL,
) -> ClosedFormEstimate:
    """Gravity direction from J2 sweeps at both J1 zeros: half their phase difference.

    The two-branch (phase-difference) solver uses phases only, so it is invariant to the
    per-joint torque gains, offsets, symmetric friction, :math:`\\beta` and :math:`\\gamma_0`;
    exact when :math:`L_3 = 0`.

    Parameters
    ----------
    fit_j1 : SweepFit
        Fit of the J1 sweep.
    fit_j2_a, fit_j2_b : SweepFit
        Fits of the two J2 sweeps, one at each J1 zero (in either order).
    q1_at_j2_a, q1_at_j2_b : float
        Their J1 positions, rad.
    arm_azimuth, zero_tol, parallel_sigma, parallel_rtol
        As in :func:`solve_point_mass`. Where A1 is not significant the two positions must be
        pi apart within `zero_tol` (default 0.01 rad).

    Returns
    -------
    ClosedFormEstimate
        One root. Where A1 is not significant, two roots (`up` in the plane of the J2 sweeps
        at angle :math:`\\theta_2'` or :math:`\\theta_2' + \\pi`) and the one within 90 deg of
        the J1 axis is returned; the component of `up` along the J2 axis is then not determined
        (the solver does not know the J1 lever arm), so it carries zero information and
        `up_std_deg` is infinite.

    Raises
    ------
    ValueError
        If a fit is not a single :class:`~gravdir.sweep.SweepFit`, a number is a bool, a string
        or not finite, a position lies beyond two turns (``"degrees?"``) or is not at a J1
        zero, both sweeps are at the same zero, or the J2 amplitudes differ by more than 25%.
    DegenerateGeometryError
        If a J2 amplitude is not significant or below 1e-9 of the J1 amplitude.

    Warns
    -----
    GravdirWarning
        If a fit's covariance is infinite or NaN (infinite `theta_cov`, zero `up_information`),
        or half the J2 phase difference lies within three standard deviations of 0, where
        theta2 jumps between 0 and 180 deg (with gravity along J1: of 90 deg).

    See Also
    --------
    solve_l3_offset : with the kinematic ratio :math:`L_3/R_{12}`, removes the L3 bias.
    gravdir.estimate_up : three or more sweeps, any mass distribution.

    Notes
    -----
    With the mass on the arm's side of the J1 axis during the J1 sweep,
    :math:`\\varphi_2^u = \\gamma_0 + \\beta - \\theta_2 + \\pi` at the unstable zero and
    :math:`\\varphi_2^s = \\gamma_0 + \\beta + \\theta_2 + \\pi` at the stable one, so

    .. math:: \\theta_2 = \\tfrac12 \\operatorname{wrap}(\\varphi_2^s - \\varphi_2^u)
              \\pmod \\pi \\in [0, \\pi), \\qquad \\theta_1 = \\pi - \\varphi_1 .

    A gain or offset leaves a phase unchanged. With an :math:`L_3` offset the difference
    gives :math:`\\theta_2' = \\operatorname{atan2}(\\sin\\theta_2\\cos\\delta, \\cos\\theta_2)`
    instead of :math:`\\theta_2` and :math:`\\theta_1` misses :math:`\\delta`.

    References
    ----------
    US 11,446,825 B2, Eq. (1) (the two J1 zeros, :math:`-\\varphi_1` and
    :math:`180° - \\varphi_1`) and Eq. (2) (the J2 sweep at a zero). The patent takes one J2
    sweep; the difference of the phases of two is gravdir's (docs/closed_form.md).

    Examples
    --------
    >>> from gravdir.sweep import fit_sweep
    >>> from gravdir.frames import up_from_canonical
    >>> from gravdir.synthetic import canonical_arm, TorqueSensor
    >>> arm = canonical_arm(L1=0.5, L2=0.1, gamma0=0.3, up=up_from_canonical(-2.0, 0.25))
    >>> sensors = (TorqueSensor(gain=0.85, offset=0.3), TorqueSensor(gain=1.15, coulomb=0.2))
    >>> def fit(j, conf):
    ...     r = arm.sweep(j, conf, -1.5, 1.5, 0.5, 100.0, sensor=sensors)
    ...     return fit_sweep(r.q, velocity=r.velocity, torque=r.torque)
    >>> f1 = fit(0, [0.0, 1.0])
    >>> zu, zs = float(f1.zeros().unstable), float(f1.zeros().stable)
    >>> res = solve_two_branch(f1, fit(1, [zu, 0.0]), zu, fit(1, [zs, 0.0]), zs)
    >>> round(res.theta1, 9), round(res.theta2, 9)
    (-2.0, 0.25)
    """
    with np.errstate(under="ignore"):  # an underflow is the correctly rounded result here
        qa = check_angle(q1_at_j2_a, "q1_at_j2_a")
        qb = check_angle(q1_at_j2_b, "q1_at_j2_b")
        az = check_angle(arm_azimuth, "arm_azimuth", "azimuths")
        tol = check_zero_tol(zero_tol)
        f1, (fa, fb), sig_p, rtol_p = _check_j1_and_j2(
            fit_j1, {"fit_j2_a": fit_j2_a, "fit_j2_b": fit_j2_b}, parallel_sigma, parallel_rtol
        )
        _check_pair_amplitudes(fa, fb, "fit_j2_b")
        if _is_parallel(f1, max(fa.amplitude, fb.amplitude), sig_p, rtol_p):
            return _two_branch_parallel(f1, fa, fb, qa, qb, az, tol)
        sigma_a = _which_zero(f1, qa, "q1_at_j2_a", tol)
        sigma_b = _which_zero(f1, qb, "q1_at_j2_b", tol)
        _check_other_zero(sigma_b, sigma_a, "q1_at_j2_b", "q1_at_j2_a")

        def solve(d: NDArray[np.float64]) -> Roots:
            return two_branch_roots(d, sigma_a)

        rows, _ = solve(_data(f1, fa, fb))
        fu, fs = (fa, fb) if sigma_a == 1 else (fb, fa)
        _warn_half_branch("solve_two_branch", fu, fs)
        problem = _Problem((f1, fa, fb), az, 0.0, _zero(sigma_a), "two_branch")
        rule = "half the J2 phase difference between the two J1 zeros"
        return _estimate(problem, [_Part(solve, rows, False)], 0, rule)


def _two_branch_parallel(
    f1: _Fit, fa: _Fit, fb: _Fit, qa: float, qb: float, az: float, zero_tol: float | None
) -> ClosedFormEstimate:
    """Two-branch solver where A1 is not significant: J2 sweeps pi apart, one plane."""
    tol = DEFAULT_ZERO_ATOL if zero_tol is None else zero_tol
    gap = abs(float(wrap_angle(qb - qa - np.pi)))
    if gap > tol:
        raise ValueError(
            f"Expected `q1_at_j2_b` pi away from `q1_at_j2_a` (within {tol:.3g} rad) "
            f"because A1 is not significant, got them {gap:.3g} rad off."
        )
    # In the plane of sweep a: phi_a = c - t, phi_b = c + t (t = signed in-plane angle).
    half = float(wrap_angle(fb.phase - fa.phase)) / 2.0
    rows = np.zeros((2, N_COLUMNS))
    for k, t in enumerate(wrap_angle(np.array([half, half + np.pi]))):
        rows[k, :2] = float(wrap_angle(qa if t >= 0 else qa + np.pi)), abs(t)
    index = int(np.argmin(rows[:, THETA2]))
    var = (fa.cov[1, 1] + fb.cov[1, 1]) / 4.0
    warn_decision(
        "solve_two_branch",
        f"gravity parallel to J1: `up` within 90° of the J1 axis picks theta2 = "
        f"{np.degrees(rows[index, THETA2]):.4g}° over {np.degrees(rows[1 - index, THETA2]):.4g}°",
        abs(np.pi / 2 - float(rows[index, THETA2])),
        math.sqrt(var),
    )
    problem = _Problem((f1, fa, fb), az, 0.0, "none", "two_branch")
    rule = "gravity parallel to J1: half phase difference, up within 90 deg of the J1 axis"
    # The J2 sweeps do not see the component of `up` along their axis, and without the J1
    # lever arm the J1 amplitude does not bound it: no information there.
    return _parallel_in_plane(problem, rows, index, rule, qa, var, np.inf)
