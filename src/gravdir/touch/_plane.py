"""The total-least-squares plane of N >= 3 contact points, with an opt-in robust fit."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Literal, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import NanPolicy, check_array, check_direction
from gravdir._imports import IMPORT_LOCK
from gravdir._results import UpResult, data_fingerprint, warn_not_converged
from gravdir.errors import ConvergenceWarning, DegenerateGeometryError, InsufficientDataError
from gravdir.touch._common import (
    MAX_ITER_CAP,
    MIN_CONDITIONING,
    ZERO_RESIDUAL,
    batch_repr,
    check_conditioning,
    check_limit,
    check_min_conditioning,
    check_noise_fit,
    check_noise_std,
    check_robust_size,
    check_significance,
    check_vector_batch,
    fmt,
    in_units,
    noise_floor,
    noise_in_units,
    omit_nan_contacts,
    omitted_text,
    orient,
    plane_information,
    plane_normal_variance,
    scatter,
    set_scale,
    to_units,
    warn_no_information,
    warn_noise_not_estimable,
    warn_sign_margin,
)
from gravdir.touch._points import contact_points
from gravdir.touch._robust import (
    REFIT_CAP,
    breakdown,
    normal_threshold,
    plane_core,
    plane_leverage,
    plane_residuals,
    refit_until_stable,
    rejected_indices,
    studentize,
)

SignRule = Literal["flange side", "side of `up_hint`"]
RobustMethod = Literal["lts", "deletion"]


@dataclass(frozen=True, eq=False, repr=False)
class PlaneFit(UpResult):
    """Total-least-squares plane through contact points.

    Attributes
    ----------
    up : ndarray, shape (..., 3)
        Unit normal of the plane, on the side chosen by `sign_rule`.
    up_information : ndarray, shape (..., 3, 3)
        Fisher information of `up`, 1/rad² (rank 2, in the plane perpendicular to `up`):
        ``sigma^-2 sum_k (lambda_k - lambda_3) u_k u_k^T``. Zero with three inliers and no
        caller's `noise_std`, where the noise is not estimable (`up_std_deg` is then infinite).
    sign_rule : {"flange side", "side of `up_hint`"}
        What decided the sign of `up`.
    offset : ndarray, shape (...)
        ``d`` in the plane equation ``up . x = d``.
    residuals : ndarray, shape (..., N)
        Signed distances ``up . c_i - d`` of every point (outliers included).
    residual_rms : ndarray, shape (...)
        Root mean square of the inliers' residuals.
    noise_std : ndarray, shape (...)
        Contact noise ``sigma`` used for the information: the caller's, or
        ``sqrt(sum r_i^2 / (n - 3))`` over the inliers, either at least the coordinates'
        round-off ``eps * max |c_i|`` (coordinates carry no more precision, and exact data then
        give a finite information); ``inf`` with three inliers and no caller's value (the noise
        is then not estimable). Where the inliers' residuals reject the caller's value (see
        Notes of :func:`up_from_touch_points`), that estimate instead, with a warning.
    conditioning : ndarray, shape (...)
        ``sqrt(lambda_2 / lambda_1)``: 0 for collinear points, 1 for a round cloud.
    inliers : ndarray of bool, shape (..., N)
        Points used in the fit (all, unless the robust fit rejected some).
    rejection_nsigma : ndarray, shape (..., N)
        How far each point lies from the final plane, in standard deviations of its residual:
        the studentised residual ``|r_i| / (sigma sqrt(1 - h_i))`` of a point in the fit (with
        the scale of the fit without it when `noise_std` is estimated) and
        ``|r_i| / (sigma sqrt(1 + h_i))`` of a rejected one, ``h_i`` its leverage.
    rejection_threshold : ndarray, shape (..., N)
        The critical value each point's `rejection_nsigma` was tested against: the normal (known
        `noise_std`) or Student-t quantile at the per-point `significance` (inf where no degree
        of freedom is left). A point of the ``"lts"`` fit is rejected when its
        `rejection_nsigma` exceeds it (see docs/touch.md for the two-set cycles); without
        `robust` nothing is rejected and it is the value the test would use.
    converged : ndarray of bool, shape (...)
        Whether the robust fit ended on a set of inliers that its test reproduced (``"lts"``) or
        because no residual was significant (``"deletion"``); always True without `robust`.
    n_iter : ndarray of int, shape (...)
        Refits of the ``"lts"`` fit's final test, or tests of the ``"deletion"`` (each rejects
        at most one point); 0 without `robust`.
    n_omitted : int
        Contacts dropped because they held a NaN (``nan_policy="omit"``; 0 otherwise).
        `residuals` and `inliers` then index the contacts kept, in their input order.
    up_cov, up_std_deg
        Covariance of `up` (..., 3, 3), rad², and ``sqrt(trace(up_cov))`` in degrees, the RMS
        angle between estimate and truth (properties, see :class:`~gravdir._results.UpResult`).
    """

    _units = {
        "offset": "m", "residuals": "m", "residual_rms": "m", "noise_std": "m", "conditioning": "",
        "rejection_nsigma": "", "rejection_threshold": "", "n_iter": "",
    }

    up: NDArray[np.float64]
    up_information: NDArray[np.float64]
    sign_rule: SignRule
    offset: NDArray[np.float64]
    residuals: NDArray[np.float64]
    residual_rms: NDArray[np.float64]
    noise_std: NDArray[np.float64]
    conditioning: NDArray[np.float64]
    inliers: NDArray[np.bool_]
    rejection_nsigma: NDArray[np.float64]
    rejection_threshold: NDArray[np.float64]
    converged: NDArray[np.bool_]
    n_iter: NDArray[np.int64]
    n_omitted: int = 0

    @property
    def outliers(self) -> NDArray[np.bool_]:
        """Points rejected by the robust fit, shape (..., N)."""
        return ~self.inliers

    @property
    def rejected(self) -> NDArray[np.int64]:
        """Indices of the rejected points: shape (K,) for one set, (K, ndim) rows for a batch."""
        return rejected_indices(self.inliers)

    def __repr__(self) -> str:
        extra = (
            f"up_std_deg={fmt(self.up_std_deg)} deg, residual_rms={fmt(self.residual_rms)}, "
            f"conditioning={fmt(self.conditioning)}, "
            f"outliers={np.flatnonzero(~self.inliers).tolist() if self.up.ndim == 1 else '...'}, "
            f"sign_rule={self.sign_rule!r}"
            + (f", n_omitted={self.n_omitted}" if self.n_omitted else "")
        )
        return batch_repr("PlaneFit", self.up, extra)


def _fit_plane(
    points: NDArray[np.float64],
    scale: NDArray[np.float64],
    inliers: NDArray[np.bool_],
    hint: NDArray[np.float64],
    hint_name: str,
    names: str,
    noise_std: float | None,
    min_conditioning: float,
    sign_rule: SignRule,
    test: _Test,
    n_omitted: int,
    fingerprint: frozenset[str],
    significance: float,
    robust: RobustMethod | None,
) -> PlaneFit:
    """The plane of the inliers of `points` (..., N, 3), given in units of `scale` (...).

    Every length is computed in those units (coordinates of order one) and multiplied by
    `scale` at the end; angles and the information of `up` do not depend on them. A caller's
    `noise_std` that the inliers' residuals reject (chi-square test at `significance`) is
    replaced by their own scale, with a warning.
    """
    w = inliers.astype(np.float64)
    centroid, lam, vec = scatter(points, w, names)
    cond = check_conditioning(points, lam, min_conditioning, names)
    n = vec[..., :, 0]
    n = n * orient(n, hint, hint_name)[..., None]
    offset = np.einsum("...i,...i->...", n, centroid)
    residuals = np.einsum("...ni,...i->...n", points, n) - offset[..., None]
    n_in = np.sum(w, axis=-1)
    with np.errstate(under="ignore"):
        ss = np.sum(w * residuals**2, axis=-1)
    rms = np.sqrt(ss / n_in)
    floor = noise_floor(points)
    misfit = np.zeros(n.shape[:-1], dtype=bool)
    if noise_std is not None:
        sigma = noise_in_units(noise_std, scale, floor)
        n_pts = points.shape[-2]
        cause = (
            "bad contacts (`robust=True` rejects up to "
            f"floor((N - 3) / 2) = {breakdown(n_pts, 3)} of them)"
            if robust != "lts"
            else f"more bad contacts than the fit can reject (at most {breakdown(n_pts, 3)} of "
            f"{n_pts})"
        )
        dof_in = n_in.astype(np.int64) - 3
        sigma, misfit = check_noise_fit(ss, dof_in, sigma, significance, cause, 4)
    else:
        dof = n_in - 3
        estimate = np.maximum(np.sqrt(ss / np.maximum(dof, 1)), floor)
        sigma = np.where(dof > 0, estimate, np.inf)
    if noise_std is None and np.any(n_in == 3):
        warn_noise_not_estimable(3, 3, stacklevel=4)  # the caller of the public function
    var = plane_normal_variance(lam, vec, sigma, np.broadcast_to(hint, n.shape))
    warn_sign_margin(n, hint, var, hint_name, stacklevel=4)
    info = plane_information(lam, vec, sigma)
    if noise_std is not None and np.any(np.all(info == 0.0, axis=(-2, -1))):
        warn_no_information(stacklevel=4)
    with np.errstate(over="ignore", under="ignore"):
        noise_out = np.maximum(noise_std, floor * scale) if noise_std else sigma * scale
        noise_out = np.where(misfit, sigma * scale, noise_out)
    return PlaneFit(
        up=n,
        up_information=info,
        offset=to_units(offset, scale, names),
        residuals=to_units(residuals, scale[..., None], names),
        residual_rms=to_units(rms, scale, names),
        noise_std=np.asarray(noise_out, dtype=np.float64),
        conditioning=cond,
        inliers=inliers.copy(),
        rejection_nsigma=test.nsigma,
        rejection_threshold=test.threshold,
        sign_rule=sign_rule,
        converged=test.converged,
        n_iter=test.n_iter,
        n_omitted=n_omitted,
        fingerprint=fingerprint,
    )


def _deletion_inliers(
    p: NDArray[np.float64], significance: float, max_iter: int
) -> tuple[NDArray[np.bool_], bool, int]:
    """Backward deletion by externally studentised residuals until none is significant.

    `p` (N, 3) is in the units of :func:`~gravdir.touch._common.set_scale`. Returns the
    inliers, whether the last test found no significant residual, and the number of tests.
    The deletion stops early at `max_iter` tests or when four inliers remain. Each test costs
    O(N): the fit without inlier ``i`` comes from the inliers' scatter by a rank-one downdate,
    ``c_(i) = c - d_i / (k - 1)`` and ``S_(i) = S - k / (k - 1) d_i d_i^T`` with
    ``d_i = c_i - c`` (c the centroid of the k inliers).
    """
    with IMPORT_LOCK:
        from scipy.stats import t as student_t  # scipy.stats is slow to import: only when needed

    n = p.shape[0]
    inl = np.ones(n, dtype=bool)
    extent = float(np.max(np.ptp(p, axis=0)))
    floor = ZERO_RESIDUAL * extent
    n_iter = 0
    while np.count_nonzero(inl) > 4 and n_iter < max_iter:
        n_iter += 1
        k = int(np.count_nonzero(inl))
        idx = np.flatnonzero(inl)
        # Fit on the inliers without point i, for every inlier i at once.
        with np.errstate(under="ignore"):
            d = p[idx] - np.mean(p[idx], axis=0)
            s = d.T @ d
            s_out = s - (k / (k - 1.0)) * d[:, :, None] * d[:, None, :]
        lam, vec = np.linalg.eigh(s_out)
        lam = np.maximum(lam, 0.0)
        rel = d * (k / (k - 1.0))  # c_i - c_(i)
        r = np.einsum("ki,ki->k", rel, vec[:, :, 0])
        with np.errstate(under="ignore", over="ignore"):
            q1 = np.einsum("ki,ki->k", rel, vec[:, :, 2]) ** 2 / np.maximum(lam[:, 2], 1e-300)
            q2 = np.einsum("ki,ki->k", rel, vec[:, :, 1]) ** 2 / np.maximum(lam[:, 1], 1e-300)
        leverage = 1.0 / (k - 1) + q1 + q2
        dof = k - 1 - 3
        sigma = np.maximum(np.sqrt(lam[:, 0] / dof), floor)
        with np.errstate(under="ignore"):
            score = np.abs(r) / (sigma * np.sqrt(1.0 + leverage))
        # Bonferroni: family-wise false-alarm rate `significance` over the k inliers.
        critical = float(student_t.isf(significance / (2 * k), dof))
        worst = int(np.argmax(score))
        if score[worst] <= critical:
            return inl, True, n_iter
        inl[idx[worst]] = False
    return inl, False, n_iter


class _Test(NamedTuple):
    """What the outlier test reports, per set (...) and per point (..., N)."""

    converged: NDArray[np.bool_]
    n_iter: NDArray[np.int64]
    nsigma: NDArray[np.float64]
    threshold: NDArray[np.float64]


def _final_test(
    p: NDArray[np.float64],
    inl: NDArray[np.bool_],
    sigma: NDArray[np.float64] | None,
    floor: NDArray[np.float64],
    significance: float,
    inflation: float = 1.0,
    dof: NDArray[np.float64] | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Studentised residuals (B, N) of every point against the plane of `inl`, and thresholds."""
    r, lam, vec = plane_residuals(p, inl)
    lev = plane_leverage(p, inl, lam, vec)
    return studentize(r, lev, inl, 3, sigma, floor, significance, inflation, dof)


def _lts_inliers(
    p: NDArray[np.float64],
    sigma: NDArray[np.float64] | None,
    significance: float,
    max_iter: int | None,
) -> tuple[NDArray[np.bool_], _Test]:
    """The high-breakdown fit's inliers (B, N) for point sets `p` (B, N, 3) in units of one.

    The trimmed core of :func:`~gravdir.touch._robust.plane_core`, then refits on the points
    that pass the test against the current plane until the set repeats (a good point left out
    of the core comes back). `sigma` (B,) is the known noise in the same units, or None.
    """
    extent = np.max(np.ptp(p, axis=1), axis=1)
    floor = ZERO_RESIDUAL * extent
    thr = None if sigma is None else np.maximum(sigma, floor) * normal_threshold(significance)
    inl = plane_core(p, thr)

    def refit(w: NDArray[np.bool_]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        r, lam, vec = plane_residuals(p, w)
        return r, plane_leverage(p, w, lam, vec)

    report = refit_until_stable(refit, inl, 3, sigma, floor, significance, max_iter)
    test = _Test(report.converged, report.n_iter, report.nsigma, report.threshold)
    return report.inliers, test


def _inliers(
    pts: NDArray[np.float64],
    scale: NDArray[np.float64],
    robust: RobustMethod | None,
    noise_std: float | None,
    significance: float,
    max_iter: int | None,
    min_conditioning: float,
    names: str,
) -> tuple[NDArray[np.bool_], _Test]:
    """Inliers (..., N) and the test's report for every set.

    `pts` are in the units of :func:`~gravdir.touch._common.set_scale` (`scale`, shape (...)).
    """
    batch = pts.shape[:-2]
    n_pts = pts.shape[-2]
    inliers = np.ones(pts.shape[:-1], dtype=bool)
    converged = np.ones(batch, dtype=bool)
    n_iter = np.zeros(batch, dtype=np.int64)
    if robust is None:
        flat = pts.reshape(-1, n_pts, 3)
        sigma = None
        if noise_std is not None:
            sigma = noise_in_units(noise_std, scale, noise_floor(pts)).reshape(-1)
        floor = ZERO_RESIDUAL * np.max(np.ptp(flat, axis=1), axis=1)
        stud, crit = _final_test(flat, inliers.reshape(-1, n_pts), sigma, floor, significance)
        shape = pts.shape[:-1]
        return inliers, _Test(converged, n_iter, stud.reshape(shape), crit.reshape(shape))
    # All points must span a plane before any is tested (coincident points have no scale).
    _, lam, _ = scatter(pts, np.ones(pts.shape[:-1]), names)
    check_conditioning(pts, lam, min_conditioning, names)
    if robust == "lts":
        flat = pts.reshape(-1, n_pts, 3)
        sigma = None
        if noise_std is not None:
            sigma = noise_in_units(noise_std, scale, noise_floor(pts)).reshape(-1)
        inl, test = _lts_inliers(flat, sigma, significance, max_iter)
        if not np.all(test.converged):
            warn_not_converged(
                "The robust plane fit's refits", REFIT_CAP if max_iter is None else max_iter, 4
            )
        return inl.reshape(pts.shape[:-1]), _Test(
            test.converged.reshape(batch),
            test.n_iter.reshape(batch),
            test.nsigma.reshape(pts.shape[:-1]),
            test.threshold.reshape(pts.shape[:-1]),
        )
    limit = REFIT_CAP if max_iter is None else max_iter
    for index in np.ndindex(batch):
        inliers[index], converged[index], n_iter[index] = _deletion_inliers(
            pts[index], significance, limit
        )
    if not np.all(converged):
        if np.any(~converged & (n_iter == limit)):
            warn_not_converged("The robust plane fit's outlier deletion", limit, stacklevel=4)
        else:
            warnings.warn(
                "The robust plane fit rejected points until four inliers remained, too few to "
                "test them; the result has converged=False. Check the contacts for more "
                "outliers than the fit can find.",
                ConvergenceWarning,
                stacklevel=3,
            )
    # The final plane's statistics, each point at the deletion's Bonferroni level.
    flat = pts.reshape(-1, n_pts, 3)
    floor = ZERO_RESIDUAL * np.max(np.ptp(flat, axis=1), axis=1)
    stud, crit = _final_test(flat, inliers.reshape(-1, n_pts), None, floor, significance / n_pts)
    shape = pts.shape[:-1]
    return inliers, _Test(converged, n_iter, stud.reshape(shape), crit.reshape(shape))


def _check_robust(robust: object) -> RobustMethod | None:
    """`robust` as a method name (None without it); True means ``"lts"``."""
    if isinstance(robust, bool | np.bool_):
        return "lts" if robust else None
    if isinstance(robust, str) and robust in ("lts", "deletion"):
        return "lts" if robust == "lts" else "deletion"
    raise ValueError(
        f'Expected `robust` to be True or False, or one of "lts", "deletion", got {robust!r}.'
    )


def _check_plane_options(
    n_pts: int,
    data_name: str,
    noise_std: float | None,
    robust: object,
    significance: float,
    max_iter: int | None,
    min_conditioning: float,
    n_omitted: int,
) -> tuple[RobustMethod | None, float | None, float, int | None, float]:
    """Validate the options shared by the plane fits."""
    method = _check_robust(robust)
    need = 5 if method else 3
    if n_pts < need:
        raise InsufficientDataError(
            f"Expected `{data_name}` to hold at least {need} "
            f"{'points' if data_name == 'points' else 'contacts'}"
            f"{' for the robust fit' if method else ''}, got {n_pts}{omitted_text(n_omitted)}."
        )
    if method:
        check_robust_size(n_pts, data_name, "points" if data_name == "points" else "contacts")
    noise = check_noise_std(noise_std)
    alarm = check_significance(significance)
    limit = (
        None if max_iter is None else check_limit(max_iter, "max_iter", MAX_ITER_CAP)
    )
    min_conditioning = check_min_conditioning(min_conditioning)
    return method, noise, alarm, limit, min_conditioning


def up_from_touch_points(
    points: ArrayLike,
    *,
    up_hint: ArrayLike = (0.0, 0.0, 1.0),
    noise_std: float | None = None,
    robust: bool | RobustMethod = False,
    significance: float = 0.01,
    max_iter: int | None = None,
    min_conditioning: float = MIN_CONDITIONING,
    nan_policy: NanPolicy = "raise",
) -> PlaneFit:
    """`up` as the total-least-squares normal of N >= 3 contact points.

    Parameters
    ----------
    points : array_like, shape (..., N, 3)
        Contact points, N >= 3.
    up_hint : array_like, shape (..., 3), optional
        Any vector on the upper side of the plane; `up` is the normal with a positive component
        along it. Its leading axes broadcast to those of `points` without the ``N`` axis.
        Default base +z.
    noise_std : float, optional
        Standard deviation of each contact coordinate, if known; otherwise estimated from the
        residuals. Three points leave no residual: without `noise_std` their `up` carries zero
        information (`up_std_deg` infinite) and a :class:`~gravdir.errors.GravdirWarning` says so.
        Either is used at least as large as the coordinates' round-off ``eps * max |c_i|``. A
        given value is tested against the inliers' residuals (see Notes); where they reject it,
        their own scale replaces it, with a warning.
    robust : bool or {"lts", "deletion"}, optional
        Find and reject bad contacts before the final fit. True or ``"lts"``: the
        high-breakdown fit, which survives up to ``floor((N - 3) / 2)`` bad points on either
        side: least trimmed squares from every 3-point subset (above 3000 subsets, a fixed
        sample of 345, whose 20 best planes are concentrated), then refits on the points that
        pass a studentised-residual test against the current plane until the set repeats (see
        Notes and docs/touch.md). ``"deletion"``: the earlier backward deletion by externally
        studentised residuals with a Bonferroni-corrected family-wise `significance` (one bad
        point; two mask each other). Needs 5 <= N <= 10000 (per set). Default False.
    significance : float, optional
        Probability that the test rejects a given good point (per point; family-wise for
        ``"deletion"``), and that the test of the residuals against a given `noise_std` warns
        on good contacts. In [1e-200, 1) (below, the critical values are not finite). Default
        0.01. The normal quantile with `noise_std`, Student's without.
    max_iter : int, optional
        Most tests of the robust fit (refits of ``"lts"``, deletions of ``"deletion"``), at
        most 10000. Default None: until the set repeats (at most 50 refits) or, for the
        deletion, no residual is significant or four inliers remain (at most 50 tests).
    min_conditioning : float, optional
        Smallest accepted ``sqrt(lambda_2 / lambda_1)``, in (0, 1] (default 1e-6, where
        round-off starts to dominate the normal).
    nan_policy : {"raise", "omit"}, optional
        What a NaN coordinate does. ``"raise"`` (default): a ValueError naming `points`.
        ``"omit"``: the points holding one are dropped (in a batch, from every set, so the sets
        keep one size) and the fit uses the rest; `n_omitted` counts them. An infinity is
        refused under both.

    Returns
    -------
    PlaneFit

    Raises
    ------
    InsufficientDataError
        If N < 3 (N < 5 with `robust`), counted after omitting points with NaN.
    DegenerateGeometryError
        If the (inlier) points are collinear or coincide, or `up_hint` lies in the plane.
    ValueError
        If `points` is not ``(..., N, 3)`` and finite, holds more than 10000 points per set
        with `robust`, `up_hint` is zero or does not broadcast to the batch shape of `points`,
        or an option is invalid: `noise_std` not positive and finite, `robust` not a bool,
        "lts" or "deletion", `significance` not in [1e-200, 1), `max_iter` not an integer
        from 1 to 10000, `min_conditioning` not in (0, 1]. Numeric strings are refused.

    Warns
    -----
    GravdirWarning
        With three points and no `noise_std`; when the inliers' residuals reject the given
        `noise_std` (more bad points than the fit rejects, a stepped or curved surface, or a
        `noise_std` too small: the fit is not to be trusted, and its covariance is inflated
        to the residuals' scale); when `up_hint` lies within three standard deviations of the
        fitted plane (the sign of `up` may then be wrong; the warning gives the margin, the
        angle and the standard deviation); when `noise_std` is so large that the information
        on `up` underflows to zero.
    ConvergenceWarning
        If the robust fit stops at `max_iter` tests, or the deletion at four inliers, while it
        still changes the inliers (``converged`` is then False).

    See Also
    --------
    up_from_touches : the same from flange poses and a tool tip.
    up_from_three_points : the cross product of three points.

    Notes
    -----
    With centroid ``c̄`` and scatter ``S = sum (c_i - c̄)(c_i - c̄)^T`` (eigenvalues
    ``lambda_1 >= lambda_2 >= lambda_3``, eigenvectors ``u_1, u_2, n``) the plane minimising
    the sum of squared orthogonal distances has normal ``n`` and offset ``d = n . c̄``
    (total least squares). For independent isotropic noise ``sigma`` on each point,
    first-order perturbation of the eigenvector gives
    ``Cov(n) = sigma^2 sum_k u_k u_k^T / (lambda_k - lambda_3)``, k = 1, 2, which is the
    Cramér-Rao bound ``sigma^2 (sum q_i q_i^T)^+`` (``q_i`` the in-plane coordinates) evaluated
    at the estimate; `up_information` is its inverse in the tangent plane. For three points the
    fit equals the cross product.

    The robust fit's breakdown point: a wrong plane meets the true one in a line holding at most
    two good points, so with m bad points it fits at most m + 2 while the truth fits N - m; the
    trimmed objective over h points prefers the truth for m + 3 <= h <= N - m, possible for
    m <= floor((N - 3) / 2); h = N - floor((N - 3) / 2). Rejected points are reported in
    `inliers`, `rejected`, `rejection_nsigma` and `rejection_threshold`; with nothing
    rejected the result is the plain fit. Above 3000 subsets the fit draws a fixed sample of
    S = 345: with at most floor((N - 3) / 2) bad points a random triple is all good with
    probability at least 1/8, so the sample misses every all-good triple with probability at
    most ``(7/8)^S < 1e-20``. One set costs O(S N) work and O(N) memory.

    With a `noise_std` ``sigma``, the inliers' residuals test it: for n good inliers
    ``sum r_i^2 / sigma^2`` is chi-square with n - 3 degrees of freedom (the robust fits'
    inliers, kept within the test's threshold, give less, so the test errs towards silence).
    Where its survival probability is below `significance` the contacts are not one plane with
    that noise (more bad points than the fit rejects, such as 5 of 12 on a step; a curved
    surface; or a `noise_std` too small): a warning says so, and ``sigma`` becomes
    ``sqrt(sum r_i^2 / (n - 3))``, which inflates the covariance by the observed residual
    variance. The inflated uncertainty is honest for noise underestimated by the caller, not
    for a wrong plane: the warning says the fit is not to be trusted.

    References
    ----------
    CN 112476435 B, claim 1 (at least three contacts on a level plane; here all of them enter a
    fit); Golub & Van Loan (1980) (total least squares); Kay (1993) (the Cramér-Rao bound);
    Cook & Weisberg (1982) (externally studentised residuals for the robust fit); Rousseeuw &
    Van Driessen (2006) (least trimmed squares, C-steps).

    Examples
    --------
    >>> pts = [[0, 0, 1.0], [1, 0, 1.0], [0, 1, 1.0], [1, 1, 1.0]]
    >>> fit = up_from_touch_points(pts, noise_std=1e-3)
    >>> fit.up + 0.0, float(fit.offset)
    (array([0., 0., 1.]), 1.0)
    >>> round(float(fit.up_std_deg), 4)
    0.081

    Two bad contacts, both 2 mm high, among ten on a grid:

    >>> g = np.array([[x, y, 0.0] for x in (0, 0.1, 0.2, 0.3, 0.4) for y in (0, 0.2)])
    >>> g[:, 2] = 1e-5 * np.array([1, -1, 0, 2, -1, 0, 1, -2, 0, 1])
    >>> g[[2, 7], 2] += 2e-3
    >>> fit = up_from_touch_points(g, noise_std=1e-5, robust=True)
    >>> fit.rejected.tolist(), bool(fit.rejection_nsigma[2] > 100)
    ([2, 7], True)
    """
    pts, n_omitted = omit_nan_contacts(points, "points", (3,), nan_policy)
    pts = check_array(pts, "points", tail=(3,))
    if pts.ndim < 2:
        raise ValueError(
            "Expected `points` to have shape (..., N, 3) with N points, got a single point (3,)."
        )
    hint = check_direction(up_hint, "up_hint", batch=True)
    check_vector_batch(hint, "up_hint", pts.shape[:-2], pts, "points")
    method, noise, alarm, limit, min_conditioning = _check_plane_options(
        pts.shape[-2],
        "points",
        noise_std,
        robust,
        significance,
        max_iter,
        min_conditioning,
        n_omitted,
    )
    scale = set_scale(pts)
    unit = in_units(pts, scale[..., None, None])
    inliers, test = _inliers(
        unit, scale, method, noise, alarm, limit, min_conditioning, "`points`"
    )
    return _fit_plane(
        unit,
        scale,
        inliers,
        hint,
        "`up_hint`",
        "`points`",
        noise,
        min_conditioning,
        "side of `up_hint`",
        test,
        n_omitted,
        data_fingerprint(np.asarray(points, dtype=np.float64)),
        alarm,
        method,
    )


def _flange_side(
    poses: NDArray[np.float64],
    pts: NDArray[np.float64],
    scale: NDArray[np.float64],
    base_from_target: NDArray[np.float64] | None,
) -> NDArray[np.float64]:
    """Unit ``sum_i (p_i - c_i)``: from the contacts toward the flanges, in the output frame.

    `pts` are the contacts in units of `scale`; the flange positions are brought to the same.
    """
    s = scale[..., None, None]
    with np.errstate(under="ignore"):
        flange = poses[..., :3, 3] / s
        if base_from_target is not None:
            bt = base_from_target
            rel = flange - bt[..., None, :3, 3] / s
            flange = np.einsum("...ji,...j->...i", bt[..., None, :3, :3], rel)
        hint = np.sum(flange - pts, axis=-2)
    with np.errstate(under="ignore"):
        size = np.linalg.norm(hint, axis=-1)
    # The sum of N differences of coordinates of order one: below 1e-12 N it is round-off.
    if np.any(size <= 1e-12 * pts.shape[-2]):
        raise DegenerateGeometryError(
            "Expected the flanges off the plane to choose the sign of `up`, got flanges on "
            "the contacts (zero `tool_tip`); pass `up_hint`."
        )
    return np.asarray(hint / size[..., None], dtype=np.float64)


def up_from_touches(
    flange_poses: ArrayLike,
    tool_tip: ArrayLike,
    *,
    up_hint: ArrayLike | None = None,
    base_from_target: ArrayLike | None = None,
    noise_std: float | None = None,
    robust: bool | RobustMethod = False,
    significance: float = 0.01,
    max_iter: int | None = None,
    min_conditioning: float = MIN_CONDITIONING,
    nan_policy: NanPolicy = "raise",
) -> PlaneFit:
    """`up` from the flange poses of N >= 3 contacts with a known tool tip.

    Parameters
    ----------
    flange_poses : array_like, shape (..., N, 4, 4)
        ``base_from_flange`` pose of each contact.
    tool_tip : array_like, shape (..., 3)
        Tool-tip offset in the flange frame.
    up_hint : array_like, shape (..., 3), optional
        Vector on the upper side of the plane, in the output frame. By default `up` points to the
        side where the flanges were while touching (a plane touched from above).
    base_from_target : array_like, shape (..., 4, 4), optional
        Pose of a target frame in the base frame; `up`, `offset` and the residuals are then in
        target coordinates.
    noise_std, robust, significance, max_iter, min_conditioning
        As in :func:`up_from_touch_points`.
    nan_policy : {"raise", "omit"}, optional
        What a NaN in `flange_poses` does: ``"raise"`` (default) refuses it naming
        `flange_poses`; ``"omit"`` drops the contacts whose pose holds one (in a batch, from
        every set) and `n_omitted` counts them. `tool_tip`, `up_hint` and `base_from_target` are
        not samples: a NaN there always raises.

    Returns
    -------
    PlaneFit

    Raises
    ------
    DegenerateGeometryError
        If the contacts are collinear, or the flanges lie on the plane and no `up_hint` is given.
    InsufficientDataError, ValueError
        As in :func:`contact_points` and :func:`up_from_touch_points`; a ValueError also if
        lengths are so large that the plane offset or the residuals overflow.

    Warns
    -----
    GravdirWarning, ConvergenceWarning
        As in :func:`up_from_touch_points`; the sign warning also when the flanges' side lies
        within three standard deviations of the plane.

    See Also
    --------
    tool_tip_and_up_from_touches : the same when the tool tip is not known.

    Notes
    -----
    The flange side: ``h = sum_i (p_i - c_i) = -sum_i R_i t``, in the output frame.

    References
    ----------
    CN 112476435 B, claims 1-3 (contact points from the flange poses and the tool tip, the
    plane's normal, in the base or a target frame); Golub & Van Loan (1980) (total least
    squares); Cook & Weisberg (1982) (the robust fit).

    Examples
    --------
    Tool pointing down (pi about x), 0.2 long, touching the floor at four places:

    >>> T = np.array([np.eye(4)] * 4)
    >>> T[:, :3, :3] = [[1, 0, 0], [0, -1, 0], [0, 0, -1]]
    >>> T[:, :3, 3] = [[0, 0, 0.2], [0.3, 0, 0.2], [0, 0.3, 0.2], [0.3, 0.3, 0.2]]
    >>> fit = up_from_touches(T, [0, 0, 0.2])
    >>> fit.up + 0.0, fit.sign_rule
    (array([0., 0., 1.]), 'flange side')
    """
    poses, n_omitted = omit_nan_contacts(flange_poses, "flange_poses", (4, 4), nan_policy)
    raw = contact_points(poses, tool_tip, base_from_target=base_from_target)
    bt = None if base_from_target is None else np.asarray(base_from_target, dtype=np.float64)
    hint = None if up_hint is None else check_direction(up_hint, "up_hint", batch=True)
    if hint is not None:
        check_vector_batch(hint, "up_hint", raw.shape[:-2], poses, "flange_poses")
    method, noise, alarm, limit, min_conditioning = _check_plane_options(
        raw.shape[-2],
        "flange_poses",
        noise_std,
        robust,
        significance,
        max_iter,
        min_conditioning,
        n_omitted,
    )
    scale = set_scale(raw)
    pts = in_units(raw, scale[..., None, None])
    rule: SignRule
    if hint is None:
        hint = _flange_side(poses, pts, scale, bt)
        rule, hint_name = "flange side", "the flanges' side (`flange_poses`, `tool_tip`)"
    else:
        rule, hint_name = "side of `up_hint`", "`up_hint`"
    names = "`flange_poses`"
    inliers, test = _inliers(pts, scale, method, noise, alarm, limit, min_conditioning, names)
    return _fit_plane(
        pts,
        scale,
        inliers,
        hint,
        hint_name,
        names,
        noise,
        min_conditioning,
        rule,
        test,
        n_omitted,
        data_fingerprint(
            np.asarray(flange_poses, dtype=np.float64), np.asarray(tool_tip, dtype=np.float64)
        ),
        alarm,
        method,
    )
