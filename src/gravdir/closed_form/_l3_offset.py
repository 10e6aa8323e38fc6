"""Closed-form solver of the out-of-plane offset (L3): the mass also offset along the J2 axis."""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from gravdir.closed_form._inputs import (
    DEFAULT_AMPLITUDE_RATIO_RTOL,
    DEFAULT_PARALLEL_RTOL,
    DEFAULT_PARALLEL_SIGMA,
    DEFAULT_SINGULAR_TOL,
    _check_one_zero_inputs,
    _Fit,
    _is_parallel,
    _OneZero,
    _other_sweep,
    _which_zero,
    check_l3_ratio,
    check_l3_sign,
    check_ratio_rtol,
    clip_decision,
    relative_ratio_std,
)
from gravdir.closed_form._model import (
    BETA,
    L3_RATIO,
    THETA1,
    THETA2,
    Roots,
    _inplane_from_phases,
    l3_pair_roots,
    l3_phase_root,
    l3_ratio_roots,
    l3_scores,
)
from gravdir.closed_form._result import ClosedFormEstimate, _estimate, _Part
from gravdir.closed_form._solvers import (
    _data,
    _no_root,
    _parallel_one_zero,
    _problem,
    _warn_half_branch,
)
from gravdir.sweep import SweepFit, wrap_angle

__all__ = ["solve_l3_offset"]

# The phase-determined root duplicates an amplitude root when both are within this (rad): on
# noise-free fits they differ by rounding only (~1e-13 rad).
_SAME_ROOT_ATOL = 1e-9
_CHECKS = "`gamma`, `gamma0` and `l3_ratio`"


def solve_l3_offset(
    fit_j1: SweepFit,
    fit_j2: SweepFit,
    q1_at_j2: float,
    gamma: float,
    gamma0: float,
    *,
    l3_ratio: float | None = None,
    fit_j2_other: SweepFit | None = None,
    q1_at_j2_other: float | None = None,
    l3_sign: Literal[1, -1] = 1,
    arm_azimuth: float = 0.0,
    zero_tol: float | None = None,
    parallel_sigma: float = DEFAULT_PARALLEL_SIGMA,
    parallel_rtol: float = DEFAULT_PARALLEL_RTOL,
    singular_tol: float = DEFAULT_SINGULAR_TOL,
    amplitude_ratio_rtol: float = DEFAULT_AMPLITUDE_RATIO_RTOL,
) -> ClosedFormEstimate:
    """Gravity direction for a mass offset across the link and along the J2 axis (L3 offset).

    The out-of-plane offset (L3) solver is exact for any :math:`\\gamma` in (0, pi). The four
    numbers :math:`(A_1, \\varphi_1, A_2, \\varphi_2)` are one short of the unknowns, so one more
    fact is needed: the ratio :math:`L_3/R_{12}` from the kinematic model (`l3_ratio`) or a J2
    sweep at the other J1 zero (`fit_j2_other`); both may be given.

    Parameters
    ----------
    fit_j1, fit_j2, q1_at_j2, gamma, gamma0
        As in :func:`solve_l2_offset`.
    l3_ratio : float, optional
        :math:`\\lambda = L_3 / R_{12}` (signed; :math:`L_3` along the J2 axis
        :math:`a_2 = z \\times h`), at most 1000 in magnitude.
    fit_j2_other, q1_at_j2_other : optional
        A J2 sweep at the other J1 zero and its J1 position. The two J2 phases determine
        :math:`\\theta_2'` and :math:`\\beta`. With `l3_ratio` they add a root of their own
        (free of the torque gains) and a consistency score over both J2 phases and the
        amplitude ratio picks among all roots; without `l3_ratio` the amplitude ratio gives
        :math:`|\\lambda|`.
    l3_sign : {1, -1}, optional
        Sign of :math:`L_3` used to pick between the two mirror roots :math:`\\pm\\lambda`
        (which fit the data equally) when `l3_ratio` is not given (default 1).
    arm_azimuth, zero_tol, parallel_sigma, parallel_rtol
        As in :func:`solve_point_mass`.
    singular_tol : float, optional
        `near_singular` is set when the returned root is within this distance (rad, in the
        in-plane angle) of merging with another root (default 1e-3).
    amplitude_ratio_rtol : float, optional
        Relative standard deviation added to the fit variance of :math:`A_1/A_2` in the
        consistency score (used when `l3_ratio` and `fit_j2_other` are both given): the
        spread of the ratio of two joints' torque gains (default 0.12, gains within ±15%;
        from 0 to 1e6).

    Returns
    -------
    ClosedFormEstimate
        All admissible roots; with `l3_ratio` only, the smaller :math:`|\\beta|` is returned;
        with both facts, the root with the smallest consistency score.
        `theta1` includes the azimuth offset :math:`\\delta`, so it is not the J1 zero. A root
        pulled off the unit circle by noise is projected back and `clipped` is set.

    Raises
    ------
    ValueError
        As :func:`solve_l2_offset`, and if neither `l3_ratio` nor `fit_j2_other` is given,
        `l3_sign` is not 1 or -1, `l3_ratio` is beyond +-1000, or `amplitude_ratio_rtol` is
        negative or above 1e6.
    DegenerateGeometryError
        If a J2 amplitude is not significant, no root satisfies the model, or (from two J2
        sweeps without `l3_ratio`) :math:`\\lambda^2` is negative by more than 25% of the
        amplitude ratio and five standard deviations.

    Warns
    -----
    GravdirWarning
        If a fit's covariance is infinite or NaN (infinite `theta_cov`, zero `up_information`),
        a root was clipped (with its margin), or half the J2 phase difference lies within three
        standard deviations of 0 (where :math:`\\theta_2'` jumps between 0 and 180 deg).

    See Also
    --------
    solve_l2_offset : the special case :math:`L_3 = 0`.
    solve_two_branch : phases only; biased by :math:`\\delta` when :math:`L_3 \\ne 0`.

    Notes
    -----
    The J1 zero puts the mass, not the arm, in the vertical plane: the arm's azimuth differs by
    :math:`\\delta = \\operatorname{atan2}(L_3, D)`, :math:`D = R_{12}\\sin(\\gamma+\\beta)`, so
    :math:`\\theta_1 = \\pi - \\varphi_1 + \\delta`. At the zero the J2 sweep sees the in-plane
    part of `up`: :math:`A_2 = m g R_{12} N`,
    :math:`N = \\sqrt{1 - \\sin^2\\theta_2\\sin^2\\delta}`,
    :math:`\\varphi_2 = \\gamma_0 + \\beta - \\sigma\\theta_2' + \\pi` with
    :math:`\\theta_2' = \\operatorname{atan2}(\\sin\\theta_2\\cos\\delta, \\cos\\theta_2)`. Since
    :math:`A_1 = m g \\sin\\theta_2 \\sqrt{D^2 + L_3^2}`, the ratio reduces to

    .. math:: r = \\frac{A_1}{A_2} = \\sin\\theta_2' \\Big(s + \\frac{\\lambda^2}{s}\\Big),
              \\qquad s = \\sin(\\gamma + \\beta),\\ \\beta = \\sigma\\theta_2' - \\kappa,

    a trigonometric polynomial of degree 3 in :math:`\\theta_2'` (six roots at most, found as
    the roots of a degree-6 polynomial and polished by Newton steps). Then
    :math:`\\tan\\theta_2 = \\tan\\theta_2' / \\cos\\delta`, and the horizontal part of `up` is
    :math:`N R(a_0 + \\delta)\\,(-a_1, b_1) / (A_2\\sqrt{s^2 + \\lambda^2})`.

    With a second J2 sweep, :math:`\\varphi_2^s - \\varphi_2^u = 2\\theta_2'` and the mean phase
    gives :math:`\\beta`, so with :math:`\\lambda` known the phases alone fix a root. Unequal
    torque gains of J1 and J2 scale :math:`r`; beyond a local maximum of the right-hand side
    above they turn the true root and its neighbour into a complex pair, and the amplitude
    roots left over are far from the truth. The phase root is therefore a candidate too, and
    each candidate :math:`k` is scored by

    .. math:: S_k = \\frac{(\\varphi_2 - \\hat\\varphi_{2,k})^2}{\\sigma_{\\varphi_2}^2}
              + \\frac{(\\varphi_2^o - \\hat\\varphi^o_{2,k})^2}{\\sigma_{\\varphi_2^o}^2}
              + \\frac{(r - \\hat r_k)^2}{\\sigma_r^2 + (\\epsilon r)^2},

    with fit variances, :math:`r = A_1 / \\tfrac12(A_2 + A_2^o)` and :math:`\\epsilon` =
    `amplitude_ratio_rtol`; the smallest :math:`S_k` wins.

    References
    ----------
    US 11,446,825 B2, FIG. 11 and Eqs. (20)--(24) (the out-of-plane offset). Those equations
    neglect :math:`\\delta` (they keep the J1 zero as :math:`\\theta_1`, :math:`A_2` without
    :math:`N` and :math:`\\theta_2` for :math:`\\theta_2'`), an approximation; the relations here
    are exact, and docs/closed_form.md measures the difference.

    Examples
    --------
    >>> from gravdir.sweep import fit_sweep
    >>> from gravdir.frames import up_from_canonical
    >>> from gravdir.synthetic import canonical_arm
    >>> arm = canonical_arm(L1=0.5, L2=0.05, L3=0.12, up=up_from_canonical(1.0, 0.4))
    >>> r1 = arm.sweep(0, [0.0, np.pi / 2], -2.0, 2.0, 0.5, 100.0)
    >>> f1 = fit_sweep(r1.q, velocity=r1.velocity, torque=r1.torque)
    >>> q1 = float(f1.zeros().unstable)
    >>> r2 = arm.sweep(1, [q1, 0.0], -1.5, 1.5, 0.5, 100.0)
    >>> f2 = fit_sweep(r2.q, velocity=r2.velocity, torque=r2.torque)
    >>> res = solve_l3_offset(f1, f2, q1, np.pi / 2, 0.0, l3_ratio=0.12 / np.hypot(0.5, 0.05))
    >>> round(res.theta1, 9), round(res.theta2, 9)
    (1.0, 0.4)
    """
    ratio_rtol = check_ratio_rtol(amplitude_ratio_rtol)
    sign = check_l3_sign(l3_sign)
    lam = None if l3_ratio is None else check_l3_ratio(l3_ratio)
    if lam is None and fit_j2_other is None:
        raise ValueError(
            "Expected `l3_ratio` or `fit_j2_other` (the model is one equation short without "
            "one of them), got neither."
        )
    with np.errstate(under="ignore"):  # an underflow is the correctly rounded result here
        inputs = _check_one_zero_inputs(
            fit_j1, fit_j2, q1_at_j2, gamma, gamma0, arm_azimuth, singular_tol, parallel_sigma,
            parallel_rtol, zero_tol, fit_j2_other, q1_at_j2_other,
        )
        return _l3_offset(inputs, lam, sign, ratio_rtol)


def _l3_offset(
    inputs: _OneZero, lam: float | None, l3_sign: int, ratio_rtol: float
) -> ClosedFormEstimate:
    if _is_parallel(inputs.f1, inputs.f2.amplitude, inputs.parallel_sigma, inputs.parallel_rtol):
        # Without the ratio, lambda = 0 bounds the J1 lever arm from below (largest variance).
        lam0 = 0.0 if lam is None else lam
        return _parallel_one_zero(inputs, unknown_beta=True, lam=lam0, solver="l3_offset")
    sigma = _which_zero(inputs.f1, inputs.q1, "q1_at_j2", inputs.zero_tol)
    fo = _other_sweep(inputs, sigma)
    if lam is not None and fo is not None:
        return _l3_both_facts(inputs, fo, sigma, lam, ratio_rtol)
    g, g0 = inputs.gamma, inputs.gamma0
    if lam is not None:
        lam_v = lam
        more: tuple[_Fit, ...] = ()

        def solve(dd: NDArray[np.float64]) -> Roots:
            return l3_ratio_roots(dd, sigma, g, g0, lam_v)

    else:
        assert fo is not None  # guaranteed by the check above
        more = (fo,)

        def solve(dd: NDArray[np.float64]) -> Roots:
            return l3_pair_roots(dd, sigma, g, g0)

    d = _data(inputs.f1, inputs.f2, *more)
    rows, excess = solve(d)
    if lam is None:
        assert fo is not None
        _clip_pair(inputs, fo, d, sigma, excess)
        fu, fs = (inputs.f2, fo) if sigma == 1 else (fo, inputs.f2)
        _warn_half_branch("solve_l3_offset", fu, fs)
    else:
        _clip_circle(excess)
    if rows.shape[0] == 0:
        raise _no_root("L3", _CHECKS)
    if lam is None:
        index = int(np.argmax(rows[:, L3_RATIO] * l3_sign))
        rule = "l3_sign picks between the mirror roots +-L3"
    else:
        index = int(np.argmin(np.abs(rows[:, BETA])))
        rule = "smaller |beta| (lumped mass nearest the link line)"
    problem = _problem(inputs, sigma, "l3_offset", *more)
    return _estimate(problem, [_Part(solve, rows, excess > 0)], index, rule)


def _clip_circle(excess: float) -> None:
    """Warn about a root of the degree-3 equation projected back onto the unit circle."""
    if excess > 0:
        clip_decision(
            "solve_l3_offset",
            f"a root of the L3 equation (|z| = 1 + {excess:.3g}, z = exp(i theta2'))",
            excess,
            math.inf,
            None,
            _CHECKS,
        )


def _clip_pair(
    inputs: _OneZero, fo: _Fit, d: NDArray[np.float64], sigma: int, excess: float
) -> None:
    """Warn about (or refuse) a negative lambda**2 = s (r / sin(theta2') - s)."""
    if excess <= 0:
        return
    t, beta = _inplane_from_phases(d, sigma, inputs.gamma0)
    s, sin_t = math.sin(inputs.gamma + beta), math.sin(t)
    r = inputs.f1.amplitude / (0.5 * (inputs.f2.amplitude + fo.amplitude))
    # lambda**2 moves with r by s / sin(theta2'); -lambda**2 = (s / sin t) (s sin t - r).
    std = s / sin_t * r * relative_ratio_std(inputs.f1, inputs.f2, fo)
    clip_decision(
        "solve_l3_offset",
        f"lambda**2 = {-excess:.6g} (from the amplitude ratio and both J2 phases)",
        excess,
        std,
        excess * sin_t / (s * r),
        _CHECKS,
    )


def _l3_both_facts(
    inputs: _OneZero, fo: _Fit, sigma: int, lam: float, ratio_rtol: float
) -> ClosedFormEstimate:
    """L3 solver with the kinematic ratio and J2 sweeps at both J1 zeros: score every root."""
    g, g0 = inputs.gamma, inputs.gamma0
    fits = (inputs.f1, inputs.f2, fo)
    d = _data(*fits)
    cov_d = np.zeros((6, 6))
    for i, f in enumerate(fits):
        cov_d[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = f.cov

    def solve_amplitude(dd: NDArray[np.float64]) -> Roots:
        return l3_ratio_roots(dd[:4], sigma, g, g0, lam)

    def solve_phase(dd: NDArray[np.float64]) -> Roots:
        return l3_phase_root(dd, sigma, g, g0, lam)

    amp_rows, amp_excess = solve_amplitude(d)
    phase_rows, _ = solve_phase(d)
    # The phase root joins the candidates unless an amplitude root already is that root (always
    # so on noise-free data): the amplitude ratio can miss it, by pushing it and a neighbour
    # off the unit circle as a complex pair, when the joints' gains differ.
    duplicate = phase_rows.shape[0] == 0 or any(
        abs(float(wrap_angle(row[THETA1] - phase_rows[0, THETA1]))) < _SAME_ROOT_ATOL
        and abs(row[THETA2] - phase_rows[0, THETA2]) < _SAME_ROOT_ATOL
        for row in amp_rows
    )
    parts = [_Part(solve_amplitude, amp_rows, amp_excess > 0, n_coef=4)]
    if not duplicate:
        parts.append(_Part(solve_phase, phase_rows, False))
    rows = np.concatenate([p.rows for p in parts])
    if rows.shape[0] == 0:
        raise _no_root("L3", _CHECKS)
    index = int(np.argmin(l3_scores(rows, d, cov_d, sigma, g, g0, ratio_rtol)))
    if index < amp_rows.shape[0]:
        _clip_circle(amp_excess)  # the returned root is an amplitude root
    else:  # the phase root: theta2' from half the J2 phase difference
        fu, fs = (inputs.f2, fo) if sigma == 1 else (fo, inputs.f2)
        _warn_half_branch("solve_l3_offset", fu, fs)
    rule = (
        "consistency with both J2 phases and the amplitude ratio (kinematic L3 ratio and a "
        "J2 sweep at each J1 zero)"
    )
    return _estimate(_problem(inputs, sigma, "l3_offset", fo), parts, index, rule)
