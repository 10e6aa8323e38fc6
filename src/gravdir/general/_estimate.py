"""Estimation: `up` from fitted sweeps by variable projection (maximum likelihood)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import check_direction
from gravdir._hac import satterthwaite_dof
from gravdir._results import UpResult, up_text, warn_not_converged
from gravdir._sphere import tangent_basis, up_information_from_tangent
from gravdir._tails import chi2_sf
from gravdir.errors import DegenerateGeometryError, GravdirWarning, InsufficientDataError
from gravdir.general._bilinear import (
    _Groups,
    _make_problem,
    _Problem,
    _residuals,
    _sweep_groups,
    _up_information,
    _up_variance_shares,
)
from gravdir.general._model import (
    _COVARIANCE_FLOOR,
    _PARALLEL_TOL,
    _RCOND,
    _SIGN_NSIGMA,
    _SIGN_TOL,
    JointSweep,
    _check_bounded,
    _check_sweep_list,
    _sweep_rotation_matrix,
)
from gravdir.general._sign import (
    SignRule,
    _check_moment_hints,
    _check_sign_agreement,
    _sign,
    _sign_sigmas,
    _warn_if_marginal,
)
from gravdir.general._sphere import _solve

__all__ = ["UpEstimate", "estimate_up"]

# Caps on the work of one call. A grid of 20 000 points is 1.4° apart, far finer than the 10°
# a start needs; starts must be 15° apart modulo sign, and about 30 such caps cover the sphere;
# a start 10° from the solution converges in about 5 iterations, so 1000 only ever bound a
# search that does not converge.
MAX_GRID = 20_000
MAX_STARTS = 32
MAX_ITER = 1000

# A step tolerance above 0.01 rad (0.6°) would stop the refinement near the grid's resolution.
_MAX_XTOL = 1e-2

# The relative floor on the (alpha, beta) standard deviation: below 1e-15 it is under the
# rounding of the amplitude itself and cannot make a noise-free covariance invertible; above
# 0.1 it would outweigh any real measurement noise.
_MIN_COVARIANCE_FLOOR = 1e-15
_MAX_COVARIANCE_FLOOR = 0.1

# Significance level of the test for a gravity signal: the probability that sweeps without
# any gravity torque pass it. One in a million (about the 5-sigma convention) keeps noise from
# passing for a tilt, while any usable sweep (amplitudes of a few tens of standard deviations)
# passes by many orders of magnitude.
_SIGNIFICANCE = 1e-6

_MAX_SIGN_NSIGMA = 100.0

# The hemisphere of the default `up_hint`: base +z, an upright mount.
_UPRIGHT = np.array([0.0, 0.0, 1.0])
_UPRIGHT.flags.writeable = False


@dataclass(frozen=True, eq=False, repr=False)
class UpEstimate(UpResult):
    """`up` estimated from joint sweeps by :func:`estimate_up`.

    Attributes
    ----------
    up : ndarray, shape (3,)
        Unit vector opposite to gravity, base frame.
    up_information : ndarray, shape (3, 3)
        Fisher information of `up`, 1/rad², with every group's moment eliminated (Schur
        complement): symmetric, rank 2, `up` in its null space. :attr:`up_cov` (rad²) is its
        pseudo-inverse, the Cramér-Rao bound at the estimate, and :attr:`up_std_deg` the
        root-mean-square angular error in degrees.
    condition : float
        Ratio of the largest to the smallest eigenvalue of `up_information` in the tangent
        plane: how unevenly the sweeps constrain the two directions of tilt.
    groups : tuple
        Group keys, in order of first appearance in the sweeps.
    moments : ndarray, shape (n_groups, 3)
        Estimated :math:`w = \\kappa g (a \\times m)` of each group, in that group's link frame
        (units of torque).
    residuals : ndarray, shape (n_sweeps, 2)
        Whitened residuals of each sweep's :math:`(\\alpha, \\beta)`.
    chi2 : float
        Sum of the squared whitened residuals.
    dof : int
        Degrees of freedom of `chi2`: ``2 n_sweeps - 2 n_groups - 2``.
    covariance_dof : float
        Degrees of freedom of :attr:`up_cov`, itself an estimate from the sweeps' covariances:
        the Welch--Satterthwaite combination ``(sum v_s)^2 / sum(v_s^2 / nu_s)`` of each
        sweep's share ``v_s`` of the trace of :attr:`up_cov` and its fit's ``covariance_dof``
        ``nu_s`` (infinite where every sweep's covariance is exact).
        :func:`~gravdir.controllers.compare_setting` and :func:`~gravdir.fusion.fuse_up` use
        an F reference with them.
    sign_rule : {"hemisphere", "moment hint"}
        Which rule fixed the sign of `up`: ``"hemisphere"`` (`up` within 90° of `up_hint`) or
        ``"moment hint"`` (the moment of a hinted group points as the caller said).
    sign_margin : float
        Cosine between the vectors the sign rule compared (1: clear; near 0: marginal).
    converged : bool
        Whether the tangent-plane iterations from the best start met their step tolerance.
    n_iter : int
        Number of iterations from that start.
    fingerprint : frozenset of str
        The union of the fingerprints of the sweeps' fits (keyword-only, out of the ``repr``):
        two results share data when their fingerprints intersect (see
        :func:`gravdir.fusion.fuse_up`).

    References
    ----------
    S. M. Kay (1993), ch. 3: the Fisher information and the Cramér-Rao bound. US 11,446,825 B2,
    FIG. 2 (block 210: the direction of gravity estimated from the torque records).
    """

    _units = {
        "condition": "", "moments": "N·m", "residuals": "", "chi2": "", "dof": "",
        "covariance_dof": "",
        "sign_margin": "", "n_iter": "",
    }

    up: NDArray[np.float64]
    up_information: NDArray[np.float64]
    condition: float
    groups: tuple[Hashable, ...]
    moments: NDArray[np.float64]
    residuals: NDArray[np.float64]
    chi2: float
    dof: int
    covariance_dof: float
    sign_rule: SignRule
    sign_margin: float
    converged: bool
    n_iter: int

    def __repr__(self) -> str:
        return (
            f"UpEstimate({up_text(self)}, "
            f"condition={self.condition:.3g}, chi2={self.chi2:.3g} (dof {self.dof}), "
            f"groups={self.groups!r}, sign_rule={self.sign_rule!r}, "
            f"converged={self.converged})"
        )


def estimate_up(
    sweeps: Sequence[JointSweep],
    *,
    up_hint: ArrayLike | None = None,
    moment_hints: Mapping[Hashable, ArrayLike] | None = None,
    n_grid: int = 400,
    n_starts: int = 4,
    max_iter: int = 50,
    xtol: float = 1e-10,
    parallel_tol: float = _PARALLEL_TOL,
    covariance_floor: float = _COVARIANCE_FLOOR,
    rcond: float = _RCOND,
    sign_tol: float = _SIGN_TOL,
    sign_nsigma: float = _SIGN_NSIGMA,
    significance: float = _SIGNIFICANCE,
    zero_rtol: float = 1e-9,
) -> UpEstimate:
    """Estimate `up` from fitted joint sweeps by variable projection (maximum likelihood).

    Parameters
    ----------
    sweeps : sequence of JointSweep
        At least two sweeps, of which some group (one joint, one distal posture) has sweeps
        about non-parallel base-frame axes: e.g. J2 swept at J1 = θ1, θ1 + 90°, θ1 + 180°.
    up_hint : array_like, shape (3,), optional
        Rough `up` for the hemisphere sign rule (None, the default, stands for base +z, an
        upright mount; give e.g. ``(0, 0, -1)`` for a ceiling mount, a horizontal vector for a
        wall mount). Any non-zero finite vector, of any length; it is normalised. Given
        together with `moment_hints`, it is checked against them (see Raises).
    moment_hints : mapping, optional
        ``{group: m}`` with `m` a rough direction (3,) of the distal first moment of that
        group's joint in its link frame (from the joint axis toward the distal centre of mass,
        e.g. along the link). When given, the sign of `up` is chosen so that the estimated
        moments agree with these hints, and the result is checked against an `up_hint` the
        caller gave and, with several hints, against each hint (see Raises).
    n_grid : int, optional
        Number of points of the Fibonacci sphere grid of global starting values (default 400,
        a spacing of about 10°; at most 20 000, 1.4° apart).
    n_starts : int, optional
        Number of distinct grid minima (more than 15° apart, modulo sign) refined locally
        (default 4; at most 32, about as many as fit on the sphere).
    max_iter : int, optional
        Largest number of tangent-plane iterations from each start (default 50; a start 10°
        from the solution needs about 5; at most 1000).
    xtol : float, optional
        The iterations have converged when a proposed step of `up` is at most `xtol` rad
        (default 1e-10, far below any reachable standard deviation and far above rounding;
        at most 0.01).
    parallel_tol : float, optional
        Two base-frame axes are parallel when ``|a_i x a_j|`` is below this (default 1e-6;
        at most 1).
    covariance_floor : float, optional
        Relative floor on the standard deviation of every :math:`(\\alpha, \\beta)` pair, as a
        fraction of the largest fitted amplitude (default 1e-12; noise-free fits report zero
        covariance). From 1e-15 (below, it is under the amplitude's rounding) to 0.1 (above,
        it would outweigh any real noise).
    rcond : float, optional
        The reduced information is singular when its smallest eigenvalue is below `rcond`
        times the largest eigenvalue of the unreduced information of `up` (default 1e-10;
        at most 1).
    sign_tol : float, optional
        A :class:`~gravdir.errors.GravdirWarning` is issued when the sign rule's cosine is
        below this (default 0.05, i.e. within about 3° of the rule's boundary; 0 to 1).
    sign_nsigma : float, optional
        A :class:`~gravdir.errors.GravdirWarning` is also issued when the sign rule's deciding
        quantity is within this many of its standard deviations of zero (default 3: a
        Gaussian error flips a sign decided by more with probability below 0.13%; 0 to 100).
    significance : float, optional
        Significance level of the test for a gravity signal (default 1e-6; 1 switches the
        test off): the sweeps are refused when data without any gravity torque would give
        whitened amplitudes as large as these with a probability above `significance`.
    zero_rtol : float, optional
        All sweeps count as torque-free (an error) when every fitted amplitude is below
        `zero_rtol` times the largest fitted coefficient (default 1e-9; rounding leaves about
        1e-16; 0 to 1).

    Returns
    -------
    UpEstimate
        `up` and its information (:attr:`~UpEstimate.up_cov`, :attr:`~UpEstimate.up_std_deg`),
        the moments, residuals, :math:`\\chi^2`, the rule that fixed the sign and whether the
        iterations converged.

    Raises
    ------
    ValueError
        If `sweeps` is not a sequence of :class:`JointSweep`, sweeps of one group differ in
        joint or axis, an option is not a number (or an int) within its range above, or the
        moments leave the float range.
    SignConflictError
        If the caller's sign knowledge contradicts itself on these data: the `up` chosen by
        `moment_hints` lies more than 90° from a given `up_hint`, or one hinted group's fitted
        moment points more than 90° from its hint while the hints together decide the other
        way, each by a cosine of at least `sign_tol` and `sign_nsigma` standard deviations. The
        two candidates are 180° apart and none is returned; the message names
        ``fit_sweep(..., torque_sign=-1)``, since a flipped torque sign is the usual cause.
    InsufficientDataError
        If fewer than two sweeps are given, or their amplitudes are not significant (see
        Notes).
    DegenerateGeometryError
        If no group has sweeps about non-parallel axes (only J1 sweeps; one sweep per group;
        J2 sweeps at J1 positions 180° apart), if all fitted amplitudes are zero, or if the
        Fisher information of `up` is singular at the solution.

    Warns
    -----
    ConvergenceWarning
        If the iterations from the best start stop at `max_iter` (``converged=False``).
    GravdirWarning
        If the sign of `up` is marginal (`sign_tol`, `sign_nsigma`), if `up_hint` or a moment
        hint disagrees with the chosen sign only within those margins, or a sweep's covariance
        overflows relative to the largest amplitude (that sweep then gets no weight: infinite
        variance, never zero).

    See Also
    --------
    crlb_up : the bound of a set of sweeps before they are recorded.
    plan_sweeps : the fewest and shortest sweeps reaching a target accuracy.
    gravdir.closed_form : closed-form solvers for lumped-mass arms.

    Notes
    -----
    For sweep :math:`i` of group :math:`k` with :math:`(\\alpha_i, \\beta_i)` and covariance
    :math:`C_i`, write :math:`w_k = E_k x_k` with :math:`E_k` an orthonormal basis of the plane
    perpendicular to the axis :math:`a_k`. Then

    .. math:: \\begin{pmatrix}\\alpha_i\\\\ \\beta_i\\end{pmatrix} = M_i(\\mathrm{up})\\, x_k,
        \\qquad M_i = \\begin{pmatrix} \\mathrm{up}^\\top R_i E_k \\\\
        \\mathrm{up}^\\top R_i (a_k \\times E_k) \\end{pmatrix},

    linear in :math:`x_k` for fixed `up`. The negative log-likelihood
    :math:`\\sum_i \\lVert C_i^{-1/2}(y_i - M_i x_k) \\rVert^2` is minimised over the
    :math:`x_k` in closed form (weighted least squares per group: variable projection) on a
    Fibonacci grid of the sphere, then over `up` from the best grid points by damped
    Gauss-Newton steps in the tangent plane of `up`, each followed by normalisation (a
    retraction to the sphere), with the :math:`x_k` solved again after each step. The
    information is the Fisher information of the two tangent parameters after eliminating the
    :math:`x_k` (Schur complement of :math:`J^\\top J`), so `up_cov` is the Cramér-Rao bound
    at the estimate. It uses the fits' covariances as they are (they carry each fit's own noise
    estimate); `chi2` against `dof` tells whether the model explains the data.

    :math:`(\\mathrm{up}, w)` and :math:`(-\\mathrm{up}, -w)` give the same torques: the sign
    comes from `moment_hints` (the gain :math:`\\kappa` is positive, so
    :math:`w \\cdot (a \\times m_{hint}) > 0`) or else from `up_hint`. Data fitted with the
    wrong torque sign negate every :math:`(\\alpha, \\beta)`; the moment rule then returns
    :math:`-\\mathrm{up}`, a 180° error that only a second, independent statement can expose:
    give both `up_hint` and `moment_hints` and a contradiction between them is raised.

    Significance. Without gravity every whitened pair :math:`C_i^{-1/2} y_i` is standard
    normal, so :math:`T = \\sum_i \\lVert C_i^{-1/2} y_i \\rVert^2` is :math:`\\chi^2` with
    :math:`2S` degrees of freedom for :math:`S` sweeps. The sweeps are refused
    (:class:`~gravdir.errors.InsufficientDataError`, with the amplitudes in standard deviations,
    :math:`T` and its p-value) when :math:`P(\\chi^2_{2S} \\ge T)` exceeds `significance`. At
    the default 1e-6 three sweeps need :math:`T \\ge 38.3`, amplitudes of about 3.6 standard
    deviations each; a usable sweep has tens to thousands.

    The problem is solved in units of the largest fitted sin/cos coefficient, so the estimate,
    its information and the test do not depend on the torque units.

    References
    ----------
    US 11,446,825 B2, FIG. 2 (blocks 202-210: sweep a first joint, then a second joint whose
    axis is not parallel to it, and estimate the direction of gravity from the two torque
    records) and FIGS. 4A-4B, eqs. (2) and (12); here any number of sweeps of any joints of a
    serial arm, with any mass distribution, instead of the lumped-mass models of FIGS. 5, 8
    and 11.

    G. H. Golub and V. Pereyra (1973), variable projection: the moments solved out for each
    `up`. S. M. Kay (1993), ch. 3: the Cramér-Rao bound. Á. González (2010): the Fibonacci
    lattice of starting values. P.-A. Absil, R. Mahony and R. Sepulchre (2008): steps in the
    tangent plane of the sphere and the retraction. J. Nocedal and S. J. Wright (2006), ch. 10:
    the damped Gauss-Newton (Levenberg-Marquardt) step.

    Examples
    --------
    A two-joint arm: J2 swept at three J1 positions, data from the model itself.

    >>> import numpy as np
    >>> from gravdir.kinematics import chain_from_dh, link_frames
    >>> from gravdir.sweep import fit_sweep
    >>> chain = chain_from_dh([0.2, 0.0], [0.0, 0.0], [0.0, 0.5], [np.pi / 2, 0.0])
    >>> up_true = np.array([np.sin(0.3), 0.0, np.cos(0.3)])
    >>> q = np.concatenate([np.linspace(-1, 1, 300), np.linspace(1, -1, 300)])
    >>> v = np.concatenate([np.full(300, 0.3), np.full(300, -0.3)])
    >>> w = np.array([0.0, 9.81, 0.0])  # g (a x m) for m along link x
    >>> sweeps, wrong = [], []
    >>> for q1 in (0.0, np.pi / 2, np.pi):
    ...     frames = link_frames(chain, [q1, 0.0])
    ...     r, a = frames.rotations[1], chain.axes_in_link[1]
    ...     tau = [up_true @ r @ (np.cos(d) * w + np.sin(d) * np.cross(a, w)) for d in q]
    ...     logged = np.add(tau, 0.2 * np.sign(v))
    ...     sweeps.append(JointSweep(1, r, a, 0.0, fit_sweep(q, velocity=v, torque=logged)))
    ...     wrong.append(JointSweep(1, r, a, 0.0, fit_sweep(q, velocity=v, torque=-logged)))
    >>> est = estimate_up(sweeps)
    >>> bool(np.allclose(est.up, up_true, atol=1e-9)), est.sign_rule, est.converged
    (True, 'hemisphere', True)

    A controller reporting the opposite sign, fitted without ``torque_sign=-1``: a moment hint
    alone turns `up` over; with an `up_hint` as well, the contradiction is raised.

    >>> hint = {1: (1.0, 0.0, 0.0)}  # the distal mass lies along link x
    >>> round(float(np.degrees(np.arccos(estimate_up(wrong, moment_hints=hint).up @ up_true))))
    180
    >>> try:
    ...     estimate_up(wrong, up_hint=(0, 0, 1), moment_hints=hint)
    ... except ValueError as err:
    ...     print("torque_sign=-1" in str(err))
    True
    """
    items = _check_sweep_list(sweeps, JointSweep)
    given_hint = None if up_hint is None else check_direction(up_hint, "up_hint")
    hint = _UPRIGHT if given_hint is None else given_hint
    n_grid = _check_search_count(n_grid, "n_grid", MAX_GRID)
    n_starts = _check_search_count(n_starts, "n_starts", MAX_STARTS)
    max_iter = _check_search_count(max_iter, "max_iter", MAX_ITER)
    xtol = _check_bounded(xtol, "xtol", _MAX_XTOL)
    parallel_tol = _check_bounded(parallel_tol, "parallel_tol", 1.0)
    covariance_floor = _check_bounded(
        covariance_floor, "covariance_floor", _MAX_COVARIANCE_FLOOR, low=_MIN_COVARIANCE_FLOOR
    )
    rcond = _check_bounded(rcond, "rcond", 1.0)
    sign_tol = _check_bounded(sign_tol, "sign_tol", 1.0, allow_zero=True)
    sign_nsigma = _check_bounded(sign_nsigma, "sign_nsigma", _MAX_SIGN_NSIGMA, allow_zero=True)
    significance = _check_bounded(significance, "significance", 1.0)
    zero_rtol = _check_bounded(zero_rtol, "zero_rtol", 1.0, allow_zero=True)

    # Underflow (a residual or a weight below 1e-308) rounds to zero harmlessly; the problem is
    # solved in units of the largest fitted coefficient, so nothing overflows.
    with np.errstate(under="ignore"):
        groups = _sweep_groups(items, parallel_tol)
        hints = _check_moment_hints(moment_hints, groups.keys, groups.axes, groups.group_of)
        prob, unit = _whitened_problem(items, groups, covariance_floor, zero_rtol)
        _check_signal(prob, significance)
        sol = _solve(prob, n_grid, n_starts, max_iter, xtol)
        if not sol.converged:
            warn_not_converged("estimate_up", max_iter)
        up, x = sol.up, sol.moments
        scaled_moments = np.einsum("gij,gj->gi", prob.bases, x)
        flip, rule, margin = _sign(up, scaled_moments, hint, hints)
        if flip:
            up, x, scaled_moments = -up, -x, -scaled_moments
        information, condition = _up_information(prob, up, x, rcond, "sweeps")
        _check_sign_agreement(
            prob, up, x, information, given_hint, hints, groups.keys, sign_tol, sign_nsigma
        )
        sigmas = _sign_sigmas(prob, up, x, information, hint, hints)
        _warn_if_marginal(rule, margin, sigmas, sign_tol, sign_nsigma)
        resid = _residuals(prob, up, x)
        dofs = [float(item.fit.covariance_dof) for item in items]
        covariance_dof = satterthwaite_dof(_up_variance_shares(prob, up, x), dofs)
        with np.errstate(over="ignore"):
            moments = unit * scaled_moments
    if not np.isfinite(moments).all():
        raise ValueError(
            "Expected the fitted amplitudes of `sweeps` to give finite moments, got an "
            f"overflow (largest coefficient {unit:.3g})."
        )
    return UpEstimate(
        up=up,
        up_information=up_information_from_tangent(up, tangent_basis(up), information),
        condition=condition,
        groups=tuple(groups.keys),
        moments=moments,
        residuals=resid,
        chi2=float(np.sum(resid**2)),
        dof=2 * len(items) - 2 * len(groups.keys) - 2,
        covariance_dof=covariance_dof,
        sign_rule=rule,
        sign_margin=float(margin),
        converged=bool(sol.converged),
        n_iter=int(sol.n_iter),
        fingerprint=frozenset[str]().union(*(item.fit.fingerprint for item in items)),
    )


def _check_search_count(value: object, name: str, cap: int) -> int:
    """A positive int of at most `cap`."""
    if (
        isinstance(value, bool | np.bool_)
        or not isinstance(value, int | np.integer)
        or not 1 <= value <= cap
    ):
        raise ValueError(f"Expected `{name}` to be a positive int at most {cap}, got {value!r}.")
    return int(value)


def _check_signal(prob: _Problem, significance: float) -> None:
    """Raise InsufficientDataError unless the sweeps' amplitudes reject "no gravity".

    Without gravity every whitened pair is standard normal, so the sum of their squares is
    chi-square with two degrees of freedom per weighted sweep.
    """
    weighted = np.any(prob.whiten != 0.0, axis=(-2, -1))
    snr = np.linalg.norm(prob.z[weighted], axis=-1)
    stat = float(np.sum(snr**2))
    p_value = chi2_sf(stat, 2 * int(np.count_nonzero(weighted)))
    if p_value > significance:
        low, high = (float(snr.min()), float(snr.max())) if snr.size else (0.0, 0.0)
        raise InsufficientDataError(
            "Expected the gravity amplitudes of `sweeps` to be significant, got amplitudes of "
            f"{low:.2g} to {high:.2g} standard deviations (chi2 = {stat:.3g} on "
            f"{2 * snr.size} degrees of freedom; p = {p_value:.2g} of data as large without "
            f"gravity, above `significance` = {significance:g}): the sweeps show no gravity "
            "torque. Sweep a joint with more distal mass, over longer arcs, or with less noise."
        )


def _whitened_problem(
    items: list[JointSweep], groups: _Groups, covariance_floor: float, zero_rtol: float
) -> tuple[_Problem, float]:
    """The whitened problem of the fitted sweeps in units of the largest sin/cos coefficient,
    and that unit; raises if every amplitude is zero."""
    coef = np.stack([s.fit.coefficients[1:3] for s in items])
    cov = np.stack([s.fit.covariance[1:3, 1:3] for s in items])
    turn = np.stack([_sweep_rotation_matrix(s.q_ref) for s in items])
    unit = float(np.max(np.abs(coef)))
    # An amplitude below 1e-9 of the fit's largest coefficient (offset, friction) is rounding:
    # float64 fits of torque-free data leave ~1e-16 relative.
    largest = max(float(np.max(np.abs(s.fit.coefficients))) for s in items)
    with np.errstate(over="ignore"):
        relative = largest / unit if unit > 0.0 else math.inf
    y = np.einsum("sij,sj->si", turn, coef / unit) if unit > 0.0 else np.zeros_like(coef)
    scale = float(np.max(np.linalg.norm(y, axis=-1)))
    if unit == 0.0 or scale <= zero_rtol * relative:
        raise DegenerateGeometryError(
            "Expected some sweep in `sweeps` to have a non-zero gravity amplitude, got all zero."
        )
    with np.errstate(over="ignore", invalid="ignore"):
        cov = turn @ (cov / unit / unit) @ np.swapaxes(turn, -1, -2)
    lost = [i for i in range(len(items)) if not np.isfinite(cov[i]).all()]
    if lost:
        warnings.warn(
            f"The (alpha, beta) covariance of `sweeps` {lost} overflows relative to the largest "
            "amplitude: their variance is taken as infinite and they get no weight.",
            GravdirWarning,
            stacklevel=3,
        )
    floor = (covariance_floor * scale) ** 2
    prob = _make_problem(
        groups.rotations, groups.axes, groups.group_of, len(groups.keys), y, cov, floor
    )
    return prob, unit
