"""The public entry point of the fusion: :func:`fuse_up`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from gravdir._model_error import check_model_error
from gravdir._results import UpResult
from gravdir.fusion._combine import fuse
from gravdir.fusion._fuse import check_options
from gravdir.fusion._result import FusedEstimate

__all__ = ["fuse_up"]


def fuse_up(
    *estimates: UpResult,
    cross_cov: Mapping[tuple[int, int], ArrayLike] | None = None,
    model_error_std: float | Literal["estimate"] = 0.0,
    significance: float = 0.01,
    max_iter: int = 50,
    xtol: float = 1e-12,
) -> FusedEstimate:
    """Combine independent estimates of `up` by their information, and test their agreement.

    Parameters
    ----------
    *estimates : UpResult
        At least two gravity-direction results (at most 64), each of one direction (`up` of
        shape (3,)): :class:`~gravdir.general.UpEstimate`, :class:`~gravdir.touch.PlaneFit`,
        :class:`~gravdir.touch.ToolPlaneFit`, :class:`~gravdir.controllers.GravityDirection`,
        a closed-form estimate, any :class:`~gravdir._results.UpResult`. All in the same frame
        (see Notes). Each must carry some information; a rank-1 information (one tangent
        direction undetermined, as ABB's Gravity Beta gives) is fine.
    cross_cov : dict, optional
        ``{(i, j): X}``: for estimates `i` and `j` that are not independent, the (3, 3)
        cross-covariance :math:`X = E[\\delta u_i\\, \\delta u_j^\\top]` of their errors, rad²,
        in the common frame (``(j, i)`` stands for ``X.T``). Both estimates must then determine
        `up` fully (rank-2 information), and the joint covariance must be positive definite.
        Only the part of `X` in the two tangent planes is used.
    model_error_std : float or "estimate", optional
        An error every source carries whole, independent between sources, on top of its own
        covariance: a standard deviation per tangent direction, rad, added in quadrature to
        each source's (default 0: none). Estimates of one robot from different trajectories
        disagree by more than each one's own covariance, since the model error each
        trajectory fixes does not average out within it (*Real logs* page). ``"estimate"``
        (at least 3 estimates, no `cross_cov`): the Paule--Mandel value, at which `chi2`
        equals `dof`; each source is then judged against the fusion of the others with the
        model error calibrated on those others alone, on an F reference (see Notes). Each of
        those tests solves for the model error anew, and so does each `without_outlier` fusion
        in turn: with many inconsistent sources the work grows as the cube of their number
        (64 sources, 40 of them outliers: about two minutes on one core).
    significance : float, optional
        Level of the consistency test and of the leave-one-out tests (default 0.01), in (0, 1).
    max_iter : int, optional
        Largest number of Gauss–Newton iterations on the sphere (default 50; at most 1000;
        consistent estimates converge in 2 or 3).
    xtol : float, optional
        The iterations stop when a step is at most `xtol` rad (default 1e-12; at most 0.01).

    Returns
    -------
    FusedEstimate
        The fused `up` with its information (:attr:`~FusedEstimate.up_cov`,
        :attr:`~FusedEstimate.up_std_deg`), the statistic `chi2` with `dof`, `p_value` and the
        verdict `consistent`; per source its distance `nsigma` from the fusion of the others;
        with three or more inconsistent sources the `outlier` and the fusion `without_outlier`;
        and the union of the sources' fingerprints.

    Raises
    ------
    ValueError
        If an estimate is not a gravity-direction result, holds a batch, has a non-unit `up`
        or a non-finite, asymmetric or negative information (beyond 1e-9 of its largest
        entry, eigenvalue), or a `covariance_dof` that is not positive; two
        estimates carry different non-empty `frame` labels; `cross_cov` is not a dict of (3, 3)
        arrays keyed by pairs of distinct indices, names an estimate with rank-1 information,
        or gives a joint covariance that is not positive definite (a correlation matrix with
        eigenvalue ratio at most 1e-12); or an option is out of its range.
    InsufficientDataError
        If fewer than two estimates are given, or one carries no information at all (a plain
        vector, a controller setting read without covariance).
    SharedDataError
        If two estimates share data (their fingerprints intersect, or they are the same object)
        and `cross_cov` has no entry for the pair.
    DegenerateGeometryError
        If the estimates together leave a direction of `up` undetermined (its information at
        most 1e-12 of the other's).

    Notes
    -----
    Each estimate :math:`u_i` with information :math:`I_i` (rank at most 2, in its own tangent
    plane) contributes :math:`-\\tfrac12 r_i^\\top I_i r_i` to the log-likelihood of `up`, with
    :math:`r_i` the tangent vector at :math:`u_i` of the geodesic to `up`. In the tangent plane
    of the current `up` (basis B) the contribution is :math:`-\\tfrac12 (x - x_i)^\\top J_i
    (x - x_i)` with :math:`x_i = B \\log_{up}(u_i)` exact (the geodesic, so a large disagreement
    keeps its true angle) and :math:`J_i = B R_i I_i R_i^\\top B^\\top`, :math:`R_i` the
    parallel transport from :math:`u_i`. A Gauss–Newton step solves
    :math:`(\\sum J_i) \\delta = \\sum J_i x_i` and moves `up` along the geodesic by δ. At the
    fixed point the fused information is :math:`\\sum J_i` (each :math:`J_i` is kept as its
    eigenvalues and transported eigenvectors, so a very precise source does not round away the
    others' information in its blind direction) and
    :math:`\\chi^2 = \\sum_i x_i^\\top J_i x_i` follows a chi-square law with
    :math:`\\sum_i \\mathrm{rank}(I_i) - 2` degrees of freedom when the sources agree.
    With `cross_cov`, the sources linked by it form one joint Gaussian: its (2m, 2m)
    covariance, inverted, replaces the block-diagonal information (the best linear unbiased
    estimator of correlated measurements).

    Leave-one-out: giving source k a free bias lowers χ² by
    :math:`t_k = d_k^\\top (C_k + C_{-k})^{-1} d_k`, with :math:`d_k` its difference from the
    fusion of the others and :math:`C_{-k}` that fusion's covariance; ``nsigma[k]`` is
    :math:`\\sqrt{t_k}`. It is computed that way: the others' information is summed afresh and
    the two covariances added, never a difference of large numbers, so the statistic is exact
    whatever the ratio of the sources' precisions (a source :math:`10^{12}` times more precise
    than the others included). A rank-1 source, or others that leave a direction open, are
    compared along the directions both determine; a source linked by `cross_cov` is first
    conditioned on the rest of its group. Since :math:`\\chi^2 = \\chi^2_{-k} + t_k`, the
    source with the largest statistic is also the one whose removal leaves the others most
    consistent. Where two sources are equally placed to explain the disagreement (the third is
    far less precise), their statistics are alike and naming one is a coin toss: compare
    ``nsigma``.

    **Model error.** With `model_error_std` τ, source i's covariance in its tangent plane is
    :math:`C_i + \\tau^2 I` on the directions it determines (each eigenvalue λ of its
    information becomes :math:`\\lambda / (1 + \\lambda \\tau^2)`). ``"estimate"`` takes the
    Paule--Mandel τ² (DerSimonian & Kacker 2007): 0 where :math:`\\chi^2(0)` is at most its
    dof, else the root of :math:`\\chi^2(\\tau^2) = \\text{dof}` (the statistic falls as τ²
    grows). The leave-one-out statistic of source k then uses :math:`\\tau^2_{-k}`, estimated
    from the other sources alone, and is referred to :math:`F(d_k, \\nu_k)` as
    ``nsigma[k]**2 / d_k``, with :math:`\\nu_k` the others' dof, a rule fixed before any data
    are seen: exact when the model error dominates the sources' own covariances (the others'
    spread then estimates :math:`\\tau^2` with :math:`\\nu_k` degrees of freedom,
    independently of source k), conservative where it does not. Where the sources carry a
    finite ``covariance_dof`` (their own covariances are estimates), the p-value is the larger
    of that and Hotelling's :math:`T^2` reference on the Welch--Satterthwaite degrees of
    freedom of the sources' own covariances, exact where source k's own estimated covariance
    dominates (a short log's sandwich). The global `p_value` combines
    the n leave-one-out tests by Bonferroni. The fused covariance uses τ² from all sources
    and does not include τ²'s own uncertainty. Derivation and Monte Carlo: docs/fusion.md.

    **Frames.** `up` of :func:`~gravdir.general.estimate_up`, the closed-form solvers and the
    accelerometer is in the base frame of the chain; that of the touch fits in the frame the
    contact points are given in (a target frame, with ``contact_points(...,
    base_from_target=...)``). Bring every estimate into one frame with
    :func:`~gravdir.controllers.express_up` first. Only :class:`GravityDirection` names its
    frame: two different non-empty names are refused; other mismatches cannot be detected.

    **Independence.** Two results share data when their fingerprints intersect (see
    docs/conventions.md); they are refused unless `cross_cov` links them. A result built by
    hand has an empty fingerprint: it is accepted, and its independence is the caller's claim.

    References
    ----------
    S. M. Kay (1993), *Fundamentals of Statistical Signal Processing: Estimation Theory*,
    ch. 3 and 6; R. DerSimonian & R. Kacker (2007), Random-effects model for meta-analysis of
    clinical trials: an update, *Contemporary Clinical Trials* 28(2), 105-114 (the
    Paule--Mandel estimator); P.-A. Absil, R. Mahony, R. Sepulchre (2008), *Optimization
    Algorithms on Matrix Manifolds*, ch. 4 and 8. Derivation in docs/fusion.md.

    Examples
    --------
    Two sources tilted 0.01 rad either way about the same axis, of equal precision, fuse to the
    middle; a third 10 standard deviations off is named:

    >>> import numpy as np
    >>> from gravdir import express_up
    >>> def source(tilt, std=1e-3):
    ...     up = [np.sin(tilt), 0.0, np.cos(tilt)]
    ...     return express_up(up, np.eye(3), up_cov=np.eye(3) * std**2)
    >>> fused = fuse_up(source(0.01), source(-0.01))
    >>> bool(np.allclose(fused.up, [0, 0, 1])), round(fused.up_std_deg, 4)
    (True, 0.0573)
    >>> fused.consistent  # 20 mrad apart with a difference std of 1.41 mrad
    False
    >>> fused = fuse_up(source(0.0), source(0.001), source(0.02))
    >>> fused.outlier, round(fused.outlier_nsigma, 1), fused.without_outlier.consistent
    (2, 15.9, True)
    """
    alpha, iters, tol = check_options(significance, max_iter, xtol)
    model_error = check_model_error(model_error_std)
    # Underflow (an information or a residual below 1e-308) only rounds towards zero.
    with np.errstate(under="ignore"):
        return fuse(estimates, cross_cov, model_error, alpha, iters, tol)
