"""Estimation: `up` from fitted sweeps by variable projection (maximum likelihood)."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import check_positive
from gravdir._results import (
    UpResult,
    tangent_basis,
    up_information_from_tangent,
    warn_not_converged,
)
from gravdir.errors import DegenerateGeometryError
from gravdir.general._bilinear import (
    _Groups,
    _make_problem,
    _Problem,
    _residuals,
    _sweep_groups,
    _up_information,
)
from gravdir.general._model import (
    _COVARIANCE_FLOOR,
    _PARALLEL_TOL,
    _RCOND,
    _SIGN_TOL,
    JointSweep,
    _check_sweep_list,
    _check_up_hint,
)
from gravdir.general._sign import SignRule, _check_moment_hints, _sign, _warn_if_marginal
from gravdir.general._sphere import _solve

__all__ = ["UpEstimate", "estimate_up"]


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
    sign_rule : {"hemisphere", "moment hint"}
        Which rule fixed the sign of `up`: ``"hemisphere"`` (`up` within 90° of `up_hint`) or
        ``"moment hint"`` (the moment of a hinted group points as the caller said).
    sign_margin : float
        Cosine between the vectors the sign rule compared (1: clear; near 0: marginal).
    converged : bool
        Whether the tangent-plane iterations from the best start met their step tolerance.
    n_iter : int
        Number of iterations from that start.

    References
    ----------
    S. M. Kay (1993), ch. 3: the Fisher information and the Cramér-Rao bound. US 11,446,825 B2,
    FIG. 2 (block 210: the direction of gravity estimated from the torque records).
    """

    up: NDArray[np.float64]
    up_information: NDArray[np.float64]
    condition: float
    groups: tuple[Hashable, ...]
    moments: NDArray[np.float64]
    residuals: NDArray[np.float64]
    chi2: float
    dof: int
    sign_rule: SignRule
    sign_margin: float
    converged: bool
    n_iter: int

    def __repr__(self) -> str:
        tilt = np.degrees(np.arccos(np.clip(self.up[2], -1.0, 1.0)))
        azimuth = np.degrees(np.arctan2(self.up[1], self.up[0]))
        return (
            f"UpEstimate(up={np.array2string(self.up, precision=6)}, tilt={tilt:.4f}°, "
            f"azimuth={azimuth:.4f}°, up_std={self.up_std_deg:.3g}°, "
            f"condition={self.condition:.3g}, chi2={self.chi2:.3g} (dof {self.dof}), "
            f"groups={self.groups!r}, sign_rule={self.sign_rule!r}, "
            f"converged={self.converged})"
        )


def estimate_up(
    sweeps: Sequence[JointSweep],
    *,
    up_hint: ArrayLike = (0.0, 0.0, 1.0),
    moment_hints: Mapping[Hashable, ArrayLike] | None = None,
    n_grid: int = 400,
    n_starts: int = 4,
    max_iter: int = 50,
    xtol: float = 1e-10,
    parallel_tol: float = _PARALLEL_TOL,
    covariance_floor: float = _COVARIANCE_FLOOR,
    rcond: float = _RCOND,
    sign_tol: float = _SIGN_TOL,
    zero_rtol: float = 1e-9,
) -> UpEstimate:
    """Estimate `up` from fitted joint sweeps by variable projection (maximum likelihood).

    Parameters
    ----------
    sweeps : sequence of JointSweep
        At least two sweeps, of which some group (one joint, one distal posture) has sweeps
        about non-parallel base-frame axes: e.g. J2 swept at J1 = θ1, θ1 + 90°, θ1 + 180°.
    up_hint : array_like, shape (3,), optional
        Rough `up` for the hemisphere sign rule (default base +z, an upright mount; give
        e.g. ``(0, 0, -1)`` for a ceiling mount, a horizontal vector for a wall mount). Any
        non-zero vector; it is normalised.
    moment_hints : mapping, optional
        ``{group: m}`` with `m` a rough direction (3,) of the distal first moment of that
        group's joint in its link frame (from the joint axis toward the distal centre of mass,
        e.g. along the link). When given, the sign of `up` is chosen so that the estimated
        moments agree with these hints and `up_hint` is ignored.
    n_grid : int, optional
        Number of points of the Fibonacci sphere grid of global starting values (default 400,
        a spacing of about 10°).
    n_starts : int, optional
        Number of distinct grid minima (more than 15° apart, modulo sign) refined locally
        (default 4).
    max_iter : int, optional
        Largest number of tangent-plane iterations from each start (default 50; a start 10°
        from the solution needs about 5).
    xtol : float, optional
        The iterations have converged when a proposed step of `up` is at most `xtol` rad
        (default 1e-10, far below any reachable standard deviation and far above rounding).
    parallel_tol : float, optional
        Two base-frame axes are parallel when ``|a_i x a_j|`` is below this (default 1e-6).
    covariance_floor : float, optional
        Relative floor on the standard deviation of every :math:`(\\alpha, \\beta)` pair, as a
        fraction of the largest fitted amplitude (default 1e-12; noise-free fits report zero
        covariance).
    rcond : float, optional
        The reduced information is singular when its smallest eigenvalue is below `rcond`
        times the largest eigenvalue of the unreduced information of `up` (default 1e-10).
    sign_tol : float, optional
        A :class:`~gravdir.errors.GravdirWarning` is issued when the sign rule's cosine is
        below this (default 0.05, i.e. within about 3° of the rule's boundary).
    zero_rtol : float, optional
        All sweeps count as torque-free (an error) when every fitted amplitude is below
        `zero_rtol` times the largest fitted coefficient (default 1e-9; rounding leaves about
        1e-16).

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
        joint or axis, or an option is out of range.
    InsufficientDataError
        If fewer than two sweeps are given.
    DegenerateGeometryError
        If no group has sweeps about non-parallel axes (only J1 sweeps; one sweep per group;
        J2 sweeps at J1 positions 180° apart), if all fitted amplitudes are zero, or if the
        Fisher information of `up` is singular at the solution.

    Warns
    -----
    ConvergenceWarning
        If the iterations from the best start stop at `max_iter` (``converged=False``).
    GravdirWarning
        If the sign of `up` is marginal (`sign_tol`).

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
    :math:`w \\cdot (a \\times m_{hint}) > 0`) or else from `up_hint`.

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
    >>> sweeps = []
    >>> for q1 in (0.0, np.pi / 2, np.pi):
    ...     frames = link_frames(chain, [q1, 0.0])
    ...     r, a = frames.rotations[1], chain.axes_in_link[1]
    ...     tau = [up_true @ r @ (np.cos(d) * w + np.sin(d) * np.cross(a, w)) for d in q]
    ...     fit = fit_sweep(q, np.add(tau, 0.2 * np.sign(v)), v)
    ...     sweeps.append(JointSweep(1, r, a, 0.0, fit))
    >>> est = estimate_up(sweeps)
    >>> bool(np.allclose(est.up, up_true, atol=1e-9)), est.sign_rule, est.converged
    (True, 'hemisphere', True)
    """
    items = _check_sweep_list(sweeps, JointSweep)
    hint = _check_up_hint(up_hint)
    _check_search_options(n_grid=n_grid, n_starts=n_starts, max_iter=max_iter)
    xtol = check_positive(xtol, "xtol")
    parallel_tol = check_positive(parallel_tol, "parallel_tol")
    covariance_floor = check_positive(covariance_floor, "covariance_floor")
    rcond = check_positive(rcond, "rcond")
    sign_tol = check_positive(sign_tol, "sign_tol", allow_zero=True)
    zero_rtol = check_positive(zero_rtol, "zero_rtol", allow_zero=True)

    groups = _sweep_groups(items, parallel_tol)
    hints = _check_moment_hints(moment_hints, groups.keys, groups.axes, groups.group_of)
    prob = _whitened_problem(items, groups, covariance_floor, zero_rtol)

    sol = _solve(prob, int(n_grid), int(n_starts), int(max_iter), xtol)
    if not sol.converged:
        warn_not_converged("estimate_up", int(max_iter))
    up, x = sol.up, sol.moments
    moments = np.einsum("gij,gj->gi", prob.bases, x)
    flip, rule, margin = _sign(up, moments, hint, hints)
    if flip:
        up, x, moments = -up, -x, -moments
    _warn_if_marginal(rule, margin, sign_tol)
    information, condition = _up_information(prob, up, x, rcond, "sweeps")
    resid = _residuals(prob, up, x)
    return UpEstimate(
        up=up,
        up_information=up_information_from_tangent(up, tangent_basis(up), information),
        condition=condition,
        groups=tuple(groups.keys),
        moments=moments,
        residuals=resid,
        chi2=float(np.sum(resid**2)),
        dof=2 * len(items) - 2 * len(groups.keys) - 2,
        sign_rule=rule,
        sign_margin=float(margin),
        converged=bool(sol.converged),
        n_iter=int(sol.n_iter),
    )


def _check_search_options(**counts: object) -> None:
    """Each keyword must be a positive int."""
    for name, value in counts.items():
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"Expected `{name}` to be a positive int, got {value!r}.")


def _whitened_problem(
    items: list[JointSweep], groups: _Groups, covariance_floor: float, zero_rtol: float
) -> _Problem:
    """The whitened problem of the fitted sweeps; raises if every amplitude is zero."""
    y = np.stack([s.alpha_beta for s in items])
    cov = np.stack([s.alpha_beta_cov for s in items])
    scale = float(np.max(np.linalg.norm(y, axis=-1)))
    # An amplitude below 1e-9 of the fit's largest coefficient (offset, friction) is rounding:
    # float64 fits of torque-free data leave ~1e-16 relative.
    largest = max(float(np.max(np.abs(s.fit.coefficients))) for s in items)
    if scale <= zero_rtol * largest:
        raise DegenerateGeometryError(
            "Expected some sweep in `sweeps` to have a non-zero gravity amplitude, got all zero."
        )
    cov = 0.5 * (cov + np.swapaxes(cov, -1, -2)) + (covariance_floor * scale) ** 2 * np.eye(2)
    return _make_problem(
        groups.rotations, groups.axes, groups.group_of, len(groups.keys), y, cov
    )
