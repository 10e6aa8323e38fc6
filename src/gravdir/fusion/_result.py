"""The result of a fusion of gravity directions (:class:`FusedEstimate`) and the shared-data
error."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from gravdir._results import UpResult

__all__ = ["FusedEstimate", "SharedDataError"]


class SharedDataError(ValueError):
    """Two of the estimates given to :func:`~gravdir.fusion.fuse_up` share data.

    Their fingerprints intersect (they were computed from some of the same sample arrays, or one
    was derived from the other), so their errors are correlated and adding their information
    would overstate the fused accuracy. The message names the two; pass their cross-covariance
    in ``cross_cov`` to fuse them anyway. It is a :class:`ValueError`.

    Examples
    --------
    >>> import numpy as np
    >>> from gravdir import express_up, fuse_up
    >>> a = express_up([0.0, 0.0, 1.0], np.eye(3), up_cov=np.eye(3) * 1e-6)
    >>> try:
    ...     fuse_up(a, a)
    ... except SharedDataError as err:
    ...     print("cross_cov" in str(err))
    True
    """


@dataclass(frozen=True, eq=False, repr=False)
class FusedEstimate(UpResult):
    """Gravity directions of several sources combined, with a test of their consistency.

    Attributes
    ----------
    up : ndarray, shape (3,)
        The fused unit vector opposite to gravity, in the frame common to the estimates.
    up_information : ndarray, shape (3, 3)
        Fisher information of `up`, 1/rad²: the sum of the sources' informations transported to
        the tangent plane of `up` (with ``cross_cov``, that of their joint Gaussian).
        :attr:`up_cov` and :attr:`up_std_deg` follow.
    chi2 : float
        Consistency statistic :math:`\\sum_i r_i^\\top I_i r_i` (with ``cross_cov``, the joint
        quadratic form) of the sources' residuals from `up`.
    dof : int
        Its degrees of freedom: the sum of the ranks of the sources' informations, minus 2.
    p_value : float
        Probability that consistent sources give a `chi2` at least this large (1 when `dof` is
        0): chi-square with `dof` degrees of freedom where every source's covariance is exact,
        and ``chi2 / dof`` on F(`dof`, ν) where the sources carry a finite
        ``covariance_dof`` (their covariances are estimates: the white form's residual variance,
        a sandwich), ν the Welch--Satterthwaite combination of the sources' covariance traces
        with their degrees of freedom. With ``model_error_std="estimate"``, `chi2` equals `dof`
        whenever the model error is positive, so the test is the leave-one-out tests' instead:
        ``min(1, n_sources * min(source_p_value))`` (Bonferroni).
    significance : float
        Level of the test.
    consistent : bool
        ``p_value >= significance``: the sources agree within their stated uncertainties.
    nsigma : ndarray, shape (n_sources,)
        For each source, the Mahalanobis distance of its difference from the fusion of the
        others, in the covariance of that difference (the sum of the two covariances, or the
        joint one with ``cross_cov``): how many standard deviations it stands apart.
    source_p_value : ndarray, shape (n_sources,)
        The probability of a leave-one-out statistic ``nsigma**2`` at least as large from a
        consistent source (chi-square with as many degrees of freedom d as the difference has
        determined directions; 1 where it has none; ``nsigma**2 / d`` on F(d, ν) where the
        sources' covariances are estimates, ν the Welch--Satterthwaite combination of the
        source's covariance trace and that of the fusion of the others). With
        ``model_error_std="estimate"``, each source is judged with the model error calibrated
        on the others alone, and ``nsigma**2 / d`` on the F distribution with d and ν degrees
        of freedom, ν those of the others' `chi2` (the sum of their ranks minus 2); where the
        sources' own covariances are estimates, the larger of that and Hotelling's T² on their
        Welch--Satterthwaite degrees of freedom.
    outlier : int or None
        With three or more sources and `consistent` false: the index of the source whose
        leave-one-out test is the most significant, when that test is significant at
        `significance`; None otherwise (with two sources the data cannot say which is wrong).
    outlier_nsigma : float or None
        ``nsigma[outlier]``, or None.
    without_outlier : FusedEstimate or None
        The fusion of the sources without `outlier` (its own indices count among the remaining
        sources, in their order), where they still determine `up` (and, with
        ``model_error_std="estimate"``, are at least three); None otherwise.
    model_error_std : float
        The model-error standard deviation per tangent direction added to every source, rad:
        the one given, or the one estimated from all sources (0 where they agree within their
        own uncertainties).
    covariance_dof : float
        Degrees of freedom of the estimate behind `up_information`: with the model error
        estimated and positive, `dof` (the sources' scatter estimates it), or fewer where the
        sources' own estimated covariances dominate (the Welch--Satterthwaite combination of
        their shares with theirs and of the model error's with `dof`); otherwise the
        Welch--Satterthwaite combination of each source's share of the fused covariance with
        the source's own ``covariance_dof`` (a model error given is an exact share; ``inf``
        where every source's covariance is exact).
        :func:`~gravdir.controllers.compare_setting` refers its distance to an F distribution
        with them where they are finite, to a chi-square one otherwise.
    n_sources : int
        Number of sources fused.
    converged : bool
        Whether the Gauss–Newton iterations on the sphere met their step tolerance.
    n_iter : int
        Number of iterations taken.
    fingerprint : frozenset of str
        The union of the sources' fingerprints (keyword-only, out of the ``repr``).

    References
    ----------
    S. M. Kay (1993), ch. 3 (Fisher information) and ch. 6 (the best linear unbiased estimator
    of correlated measurements); P.-A. Absil, R. Mahony, R. Sepulchre (2008), ch. 4 and 8
    (optimisation on the sphere: retraction and Gauss–Newton). Derivation in docs/fusion.md.

    Examples
    --------
    >>> import numpy as np
    >>> from gravdir import express_up, fuse_up
    >>> a = express_up([0.0, 0.0, 1.0], np.eye(3), up_cov=np.eye(3) * 1e-6)
    >>> b = express_up([0.0, 0.0, 1.0], np.eye(3), up_cov=np.eye(3) * 1e-6)
    >>> fused = fuse_up(a, b)
    >>> fused.consistent, fused.dof, round(fused.up_std_deg, 4)  # sqrt(2 * 0.5e-6) rad
    (True, 2, 0.0573)
    """

    _units = {
        "chi2": "",
        "dof": "",
        "p_value": "",
        "significance": "",
        "nsigma": "",
        "source_p_value": "",
        "outlier_nsigma": "",
        "model_error_std": "rad",
        "covariance_dof": "",
        "n_sources": "",
    }

    up: NDArray[np.float64]
    up_information: NDArray[np.float64]
    chi2: float
    dof: int
    p_value: float
    significance: float
    consistent: bool
    nsigma: NDArray[np.float64]
    source_p_value: NDArray[np.float64]
    outlier: int | None
    outlier_nsigma: float | None
    without_outlier: FusedEstimate | None
    model_error_std: float
    covariance_dof: float
    n_sources: int
    converged: bool
    n_iter: int

    def __repr__(self) -> str:
        verdict = "consistent" if self.consistent else "inconsistent"
        text = (
            f"FusedEstimate(up={np.array2string(self.up, precision=6, separator=', ')}, "
            f"up_std_deg={self.up_std_deg:.4g}, chi2={self.chi2:.4g} (dof {self.dof}), "
            f"p_value={self.p_value:.3g}: {verdict}, "
            f"nsigma={np.array2string(self.nsigma, precision=2, separator=', ')}"
        )
        if self.outlier is not None:
            text += f", outlier={self.outlier} ({self.outlier_nsigma:.3g} sigma)"
        return text + ")"
