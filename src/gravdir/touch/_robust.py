"""High-breakdown outlier rejection for the touch fits: minimal subsets, trimming, a final test.

Both fits follow one scheme (see docs/touch.md, "Outliers"):

1. Candidates from minimal subsets (3 contacts for the plane, 6 rows of the joint fit's
   linearisation), each concentrated by C-steps (refit on the ``h`` smallest residuals until the
   set repeats), the best kept by the least-trimmed-squares objective, or, with a known noise
   level, by the count of contacts within the test's threshold (ties by that objective).
   Concentrated are every candidate of the plane while all its subsets are tried, otherwise the
   `TOP_SUBSETS` best by the objective of their exact fit (selective iteration, as in FAST-LTS).
2. A refit on the inliers, then every contact (kept or not) tested against it by its
   studentised residual; the inliers are the contacts that pass, refitted, until the set
   repeats. A good contact left out of the trimmed core comes back in this step.

Everything is deterministic: all subsets when there are at most `SUBSET_CAP` of them, otherwise
a fixed sample of :func:`sample_size` subsets drawn from a generator seeded with `SUBSET_SEED`.
The work of one set is bounded by its number of contacts times the number of candidates, and
no temporary holds more than about `CHUNK_ROWS` residuals.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from gravdir._imports import IMPORT_LOCK
from gravdir.touch._common import scatter

# Subsets tried exhaustively up to this count; C(12, 6) = 924 and C(27, 3) = 2925 fit.
SUBSET_CAP = 3000
# Above it, a fixed sample: the probability that it holds no subset of good contacts, when as
# many contacts are bad as the fit survives, is at most this (see `sample_size`).
MISS_PROBABILITY = 1e-20
# Random seed of the fixed sample of subsets above that count: the results are reproducible.
SUBSET_SEED = 20_240_613
# C-steps per candidate at most; they stop earlier when the trimmed set repeats.
C_STEP_CAP = 20
# Refits of the final test at most, unless the caller's `max_iter` says otherwise.
REFIT_CAP = 50
# Candidates concentrated by C-steps when not all are (FAST-LTS keeps 10 of 500; here 20).
TOP_SUBSETS = 20
# Passes of the refits without a known noise level, each re-estimating the held scale.
SCALE_PASSES = 3
# Subset residuals (sets x subsets x contacts) per chunk, to bound the temporaries (~40 MB).
CHUNK_ROWS = 1_000_000


def breakdown(n_contacts: int, n_params: int) -> int:
    """Most bad contacts the fit survives: ``floor((N - p) / 2)``."""
    return max((n_contacts - n_params) // 2, 0)


def coverage(n_contacts: int, n_params: int) -> int:
    """Contacts ``h = N - floor((N - p) / 2)`` kept by the trimmed objective."""
    return n_contacts - breakdown(n_contacts, n_params)


def sample_size(size: int) -> int:
    """Subsets in the fixed sample: ``ceil(log(MISS_PROBABILITY) / log(1 - 2^-p))``, p = `size`.

    With at most ``floor((N - p) / 2)`` bad contacts, ``g >= (N + p) / 2`` are good, and a
    p-subset drawn at random is all good with probability ``prod_{j<p} (g - j) / (N - j)``, each
    factor at least 1/2 (``2 g >= N + p > N + j``): at least ``2^-p``. S distinct subsets drawn
    at random then all miss with probability at most ``(1 - 2^-p)^S`` (sampling without
    replacement misses less often than with), below `MISS_PROBABILITY` for this S: 345 subsets
    of three contacts (the plane), 2925 of six (the joint fit). The probability is over the
    places of the bad contacts in the input order, which the fixed sample does not know.
    """
    return math.ceil(math.log(MISS_PROBABILITY) / math.log1p(-(2.0**-size)))


def subsets(n_contacts: int, size: int) -> NDArray[np.int64]:
    """All `size`-subsets of range(n_contacts) in lexicographic order, or a fixed sample.

    Returns shape (S, size). Above `SUBSET_CAP` subsets, :func:`sample_size` distinct ones, in
    the order drawn from a generator with the fixed random seed `SUBSET_SEED` (the same for every
    call with these arguments). The sample costs O(S) work and memory, whatever `n_contacts`.
    """
    if math.comb(n_contacts, size) <= SUBSET_CAP:
        return np.array(list(itertools.combinations(range(n_contacts), size)), dtype=np.int64)
    count = sample_size(size)
    rng = np.random.default_rng(SUBSET_SEED)
    rows = np.empty((0, size), dtype=np.int64)
    while len(rows) < count:
        draw = np.sort(rng.integers(0, n_contacts, (2 * count, size)), axis=1)
        draw = draw[np.all(np.diff(draw, axis=1) > 0, axis=1)]  # distinct contacts only
        rows = np.concatenate([rows, draw])
        _, first = np.unique(rows, axis=0, return_index=True)
        rows = rows[np.sort(first)]  # distinct subsets, in the order drawn
    return np.asarray(rows[:count], dtype=np.int64)


def normal_threshold(significance: float) -> float:
    """Two-sided normal quantile: ``P(|z| > k) = significance``."""
    with IMPORT_LOCK:
        from scipy.stats import norm as normal  # scipy.stats is slow to import: only when needed

    return float(normal.isf(significance / 2.0))


def student_threshold(significance: float, dof: NDArray[np.float64]) -> NDArray[np.float64]:
    """Two-sided Student-t quantile with `dof` degrees of freedom (inf where dof < 1)."""
    with IMPORT_LOCK:
        from scipy.stats import t as student_t  # scipy.stats is slow to import: only when needed

    safe = np.maximum(dof, 1.0)
    return np.asarray(np.where(dof >= 1, student_t.isf(significance / 2.0, safe), np.inf))


def trimmed_inflation(n_kept: int, n_contacts: int) -> float:
    """Factor making the scale of the `n_kept` smallest of `n_contacts` normal residuals consistent.

    The kept fraction ``a`` of a normal sample lies within ``q = Phi^-1((1 + a) / 2)``, where
    ``E[z^2 | |z| < q] = 1 - 2 q phi(q) / a``; the factor is the inverse square root of that.
    """
    with IMPORT_LOCK:
        from scipy.stats import norm as normal  # scipy.stats is slow to import: only when needed

    frac = n_kept / n_contacts
    if frac >= 1.0:
        return 1.0
    q = float(normal.ppf((1.0 + frac) / 2.0))
    return 1.0 / math.sqrt(1.0 - 2.0 * q * float(normal.pdf(q)) / frac)


def truncated_inflation(significance: float) -> float:
    """Factor making the scale of residuals kept within the test's normal quantile consistent.

    ``E[z^2 | |z| < k] = 1 - 2 k phi(k) / (1 - significance)`` with ``k`` from
    :func:`normal_threshold`; the factor is the inverse square root of that.
    """
    with IMPORT_LOCK:
        from scipy.stats import norm as normal  # scipy.stats is slow to import: only when needed

    k = normal_threshold(significance)
    return 1.0 / math.sqrt(1.0 - 2.0 * k * float(normal.pdf(k)) / (1.0 - significance))


def trimmed_objective(r: NDArray[np.float64], h: int) -> NDArray[np.float64]:
    """Sum of the `h` smallest squared residuals along the last axis."""
    with np.errstate(under="ignore", over="ignore", invalid="ignore"):
        sq = np.partition(r**2, h - 1, axis=-1)[..., :h]
        return np.asarray(np.sum(sq, axis=-1), dtype=np.float64)


def smallest(r: NDArray[np.float64], h: int) -> NDArray[np.bool_]:
    """Mask of the `h` smallest ``|r|`` along the last axis (ties broken by index)."""
    order = np.argsort(np.abs(r), axis=-1, kind="stable")[..., :h]
    mask = np.zeros(r.shape, dtype=bool)
    np.put_along_axis(mask, order, True, axis=-1)
    return mask


def _best_subsets(
    residuals: Callable[[NDArray[np.int64]], NDArray[np.float64]],
    sub: NDArray[np.int64],
    h: int,
    n_rows: int,
) -> NDArray[np.int64]:
    """The `TOP_SUBSETS` subsets of `sub` (b, s, p) with the lowest trimmed objective, best first.

    `residuals` maps subsets (b, s', p) to the residuals (b, s', N) of their exact fits; it is
    called on chunks of subsets, so that at most about `CHUNK_ROWS` residuals are held at once.
    Subsets with a non-finite objective (no exact fit) rank last; ties keep their order.
    """
    b, n_sub = sub.shape[:2]
    step = max(1, CHUNK_ROWS // (b * n_rows))
    obj = np.concatenate(
        [trimmed_objective(residuals(sub[:, i : i + step]), h) for i in range(0, n_sub, step)],
        axis=1,
    )
    obj = np.where(np.isfinite(obj), obj, np.inf)
    top = np.argsort(obj, axis=1, kind="stable")[:, :TOP_SUBSETS]
    return np.take_along_axis(sub, top[..., None], axis=1)


def _concentrate(
    refit: Callable[[NDArray[np.bool_]], NDArray[np.float64]],
    r: NDArray[np.float64],
    h: int,
    threshold: NDArray[np.float64] | None,
) -> NDArray[np.bool_]:
    """C-steps from the residuals `r` (b, s, N) of every candidate; the core (b, N) of the best.

    Each candidate is refitted on its `h` smallest residuals (`refit` maps masks (b, s, N) to
    the new residuals) until no mask changes, at most `C_STEP_CAP` times; the best candidate is
    then chosen by :func:`best_candidate` on the last residuals.
    """
    mask = smallest(r, h)
    for _ in range(C_STEP_CAP):
        r = refit(mask)
        new = smallest(r, h)
        if np.array_equal(new, mask):
            break
        mask = new
    best = best_candidate(r, h, threshold)
    return mask[np.arange(len(r)), best]


def best_candidate(
    r: NDArray[np.float64], h: int, threshold: NDArray[np.float64] | None
) -> NDArray[np.int64]:
    """Index along axis -2 of the best candidate, for residuals (..., S, N).

    Lowest trimmed objective; with a noise threshold (...) first the most contacts within it.
    """
    obj = trimmed_objective(r, h)
    obj = np.where(np.isfinite(obj), obj, np.inf)
    if threshold is None:
        return np.asarray(np.argmin(obj, axis=-1), dtype=np.int64)
    count = np.sum(np.abs(r) <= threshold[..., None, None], axis=-1)
    # Rank by count, then by the objective scaled into [0, 1) below one count step.
    finite = np.where(np.isfinite(obj), obj, 0.0)
    top = np.max(finite, axis=-1, keepdims=True)
    rel = np.where(np.isfinite(obj), finite / (2.0 * top + 1e-300), 0.75)
    return np.asarray(np.argmin(rel - count, axis=-1), dtype=np.int64)


# ----------------------------------------------------------------------------- the plane


def plane_residuals(
    p: NDArray[np.float64], w: NDArray[np.bool_]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """TLS plane of the points `p` (..., N, 3) with weights `w`; residuals, eigen-pairs."""
    centroid, lam, vec = scatter(p, w.astype(np.float64), "`points`")
    with np.errstate(under="ignore"):
        r = np.einsum("...ni,...i->...n", p - centroid[..., None, :], vec[..., :, 0])
    return r, lam, vec


def _subset_planes(
    q: NDArray[np.float64], sub: NDArray[np.int64], extent: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """Residuals (b, s, N) of the points `q` (b, N, 3) from the planes through the subsets `sub`.

    `sub` (b, s, 3) holds each set's point indices; a subset whose triangle is collinear gives
    no plane: its residuals are inf and its entry of the mask (b, s) False.
    """
    rows = np.arange(len(q))[:, None]
    a, u, v = q[rows, sub[..., 0]], q[rows, sub[..., 1]], q[rows, sub[..., 2]]
    with np.errstate(under="ignore", invalid="ignore", divide="ignore"):
        cross = np.cross(u - a, v - a)
        size = np.linalg.norm(cross, axis=-1)
        # A subset whose triangle is 1e-9 of the extent squared is collinear: no plane.
        valid = size > 1e-9 * extent[:, None] ** 2
        n = cross / np.where(valid, size, 1.0)[..., None]
        r = np.einsum("bni,bsi->bsn", q, n) - np.einsum("bsi,bsi->bs", a, n)[..., None]
    return np.where(valid[..., None], r, np.inf), valid


def _subset_plane_residuals(
    q: NDArray[np.float64], extent: NDArray[np.float64], sub: NDArray[np.int64]
) -> NDArray[np.float64]:
    """The residuals of :func:`_subset_planes` alone (inf for a collinear subset)."""
    return _subset_planes(q, sub, extent)[0]


def _plane_refit(
    pts: NDArray[np.float64], valid: NDArray[np.bool_], mask: NDArray[np.bool_]
) -> NDArray[np.float64]:
    """Residuals (b, s, N) of the planes refitted to the points `mask` (inf for no plane)."""
    r_new, _, _ = plane_residuals(pts, mask)
    return np.where(valid[..., None], r_new, np.inf)


def plane_core(
    p: NDArray[np.float64], threshold: NDArray[np.float64] | None
) -> NDArray[np.bool_]:
    """The trimmed core (B, N) of each set of points `p` (B, N, 3), in units of order one.

    Planes through every 3-subset, each concentrated by C-steps on its ``h`` closest points;
    above `SUBSET_CAP` subsets, through the fixed sample, of which the `TOP_SUBSETS` best by
    the trimmed objective are concentrated. The best by :func:`best_candidate`. `threshold` (B,)
    is the known noise times the test's normal quantile, or None.
    """
    n_batch, n_pts = p.shape[:2]
    h = coverage(n_pts, 3)
    idx = subsets(n_pts, 3)
    n_sub = len(idx)
    every = n_sub == math.comb(n_pts, 3)
    core = np.zeros((n_batch, n_pts), dtype=bool)
    chunk = max(1, CHUNK_ROWS // (n_sub * n_pts))
    extent = np.max(np.ptp(p, axis=1), axis=1)
    for start in range(0, n_batch, chunk):
        q = p[start : start + chunk]
        ext = extent[start : start + chunk]
        b = len(q)
        sub = np.broadcast_to(idx, (b, n_sub, 3))
        if not every:
            # The exact fits of the sample, a chunk of subsets at a time, ranked by objective.
            fits = functools.partial(_subset_plane_residuals, q, ext)
            sub = _best_subsets(fits, sub, h, n_pts)
        r, valid = _subset_planes(q, sub, ext)
        pts = np.broadcast_to(q[:, None], (b, sub.shape[1], n_pts, 3))
        refit = functools.partial(_plane_refit, pts, valid)
        thr = None if threshold is None else threshold[start : start + chunk]
        core[start : start + chunk] = _concentrate(refit, r, h, thr)
    return core


def plane_leverage(
    p: NDArray[np.float64], w: NDArray[np.bool_], lam: NDArray[np.float64], vec: NDArray[np.float64]
) -> NDArray[np.float64]:
    """``1/n + q_1^2 / lambda_1 + q_2^2 / lambda_2`` of every point (B, N) for the fit on `w`."""
    centroid = np.sum(p * w[..., None], axis=-2) / np.sum(w, axis=-1)[..., None]
    rel = p - centroid[..., None, :]
    with np.errstate(under="ignore", over="ignore", divide="ignore"):
        q1 = np.einsum("bni,bi->bn", rel, vec[:, :, 2]) ** 2 / np.maximum(lam[:, 2:3], 1e-300)
        q2 = np.einsum("bni,bi->bn", rel, vec[:, :, 1]) ** 2 / np.maximum(lam[:, 1:2], 1e-300)
    return np.asarray(1.0 / np.sum(w, axis=-1, keepdims=True) + q1 + q2, dtype=np.float64)


# ------------------------------------------------------------------------ the final test


def studentize(
    r: NDArray[np.float64],
    leverage: NDArray[np.float64],
    w: NDArray[np.bool_],
    n_params: int,
    sigma: NDArray[np.float64] | None,
    floor: NDArray[np.float64],
    significance: float,
    inflation: float | NDArray[np.float64] = 1.0,
    dof: NDArray[np.float64] | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Studentised residuals (B, N) against the fit on `w`, and each one's critical value.

    An estimated scale is multiplied by `inflation` (the consistency factor of a trimmed set).
    A given `sigma` that was itself estimated comes with its degrees of freedom `dof` (B,): the
    quantile is then Student's.

    With a known `sigma` (B,): ``r / (sigma sqrt(1 -+ h))`` (minus for a contact in the fit,
    plus for one left out), against the normal quantile. Otherwise, for a contact in the fit
    the externally studentised residual, with the scale ``s_(i)`` of the fit without it and
    ``n - p - 1`` degrees of freedom, and for one left out ``r / (s sqrt(1 + h))`` with
    ``n - p``, each against its Student-t quantile. Scales are at least `floor` (B,).
    """
    lev_in = np.clip(leverage, 0.0, 1.0 - 1e-12)
    with np.errstate(under="ignore", over="ignore", divide="ignore", invalid="ignore"):
        if sigma is not None and dof is None:
            s = np.maximum(sigma, floor)[:, None]
            stud = np.where(w, r / (s * np.sqrt(1.0 - lev_in)), r / (s * np.sqrt(1.0 + leverage)))
            crit = np.full(r.shape, normal_threshold(significance))
            return np.abs(stud), crit
        if sigma is not None and dof is not None:
            # A held estimate: a contact in the fit is judged by it without its own share.
            s = np.maximum(sigma, floor)[:, None]
            k = dof[:, None]
            ss_out = np.maximum(k * s**2 - r**2 / (1.0 - lev_in), 0.0)
            s_out = np.maximum(np.sqrt(ss_out / np.maximum(k - 1.0, 1.0)), floor[:, None])
            stud = np.where(
                w, r / (s_out * np.sqrt(1.0 - lev_in)), r / (s * np.sqrt(1.0 + leverage))
            )
            crit = np.where(
                w,
                student_threshold(significance, k - 1.0),
                student_threshold(significance, k),
            )
            return np.abs(stud), np.asarray(crit, dtype=np.float64)
        n_in = np.sum(w, axis=-1)[:, None].astype(np.float64)
        ss = np.sum(np.where(w, r**2, 0.0), axis=-1, keepdims=True)
        dof = n_in - n_params
        s_all = np.maximum(inflation * np.sqrt(ss / np.maximum(dof, 1.0)), floor[:, None])
        ss_out = np.maximum(ss - r**2 / (1.0 - lev_in), 0.0)
        s_out = np.maximum(
            inflation * np.sqrt(ss_out / np.maximum(dof - 1.0, 1.0)), floor[:, None]
        )
        stud = np.where(
            w, r / (s_out * np.sqrt(1.0 - lev_in)), r / (s_all * np.sqrt(1.0 + leverage))
        )
        crit = np.where(
            w,
            student_threshold(significance, dof - 1.0),
            student_threshold(significance, dof),
        )
    return np.abs(stud), np.asarray(crit, dtype=np.float64)


def rejected_indices(inliers: NDArray[np.bool_]) -> NDArray[np.int64]:
    """Indices of the False entries: (K,) for a 1-D mask, rows (K, ndim) of `argwhere` else."""
    if inliers.ndim == 1:
        return np.asarray(np.flatnonzero(~inliers), dtype=np.int64)
    return np.asarray(np.argwhere(~inliers), dtype=np.int64)


# -------------------------------------------------------------- a linearised model's rows


def _weighted_step(
    jac: NDArray[np.float64], r: NDArray[np.float64], w: NDArray[np.bool_]
) -> NDArray[np.float64]:
    """Least-squares step ``x`` (..., p) with ``r + J x`` small on the rows `w` (..., N)."""
    jw = jac * w[..., None]
    h = np.einsum("...ni,...nj->...ij", jw, jw)
    g = np.einsum("...ni,...n->...i", jw, r)
    eye = np.eye(jac.shape[-1])
    # Relative damping 1e-12 keeps rank-deficient subsets solvable (their residuals then rank
    # them last).
    damp = 1e-12 * np.einsum("...ii->...i", h)[..., None] * eye + 1e-300 * eye
    return np.asarray(-np.linalg.solve(h + damp, g[..., None])[..., 0], dtype=np.float64)


def _subset_fits(
    jb: NDArray[np.float64], rb: NDArray[np.float64], sub: NDArray[np.int64]
) -> NDArray[np.float64]:
    """Residuals (b, s, N) of ``r + J x`` at the exact fits of the row subsets `sub` (b, s, p)."""
    rows = np.arange(len(jb))[:, None, None]
    with np.errstate(under="ignore", over="ignore", invalid="ignore"):
        # Exact fits of the subsets (normal equations of the p x p systems, damped).
        step = _weighted_step(jb[rows, sub], rb[rows, sub], np.ones(sub.shape, dtype=bool))
        res = rb[:, None, :] + (jb[:, None] @ step[..., None])[..., 0]
    return np.where(np.isfinite(res), res, np.inf)


def linear_core(
    jac: NDArray[np.float64], r: NDArray[np.float64], threshold: NDArray[np.float64] | None
) -> NDArray[np.bool_]:
    """The trimmed core (B, N) of the linear model ``r + J x`` with rows (B, N, p).

    Exact fits of every p-subset of rows (or the fixed sample), the `TOP_SUBSETS` best by the
    trimmed objective concentrated by C-steps on their ``h`` smallest residuals; the best by
    :func:`best_candidate` (`threshold` (B,) or None).
    """
    n_batch, n_rows, n_par = jac.shape
    h = coverage(n_rows, n_par)
    idx = subsets(n_rows, n_par)
    n_sub = len(idx)
    core = np.zeros((n_batch, n_rows), dtype=bool)
    chunk = max(1, CHUNK_ROWS // (n_sub * n_rows))
    for start in range(0, n_batch, chunk):
        jb, rb = jac[start : start + chunk], r[start : start + chunk]
        b = len(jb)
        sub = np.broadcast_to(idx, (b, n_sub, n_par))
        # C-steps for the TOP_SUBSETS best of them (as in FAST-LTS).
        top = _best_subsets(functools.partial(_subset_fits, jb, rb), sub, h, n_rows)
        res = _subset_fits(jb, rb, top)
        js = np.broadcast_to(jb[:, None], (b, top.shape[1], n_rows, n_par))
        rs = np.broadcast_to(rb[:, None], (b, top.shape[1], n_rows))
        thr = None if threshold is None else threshold[start : start + chunk]
        refit = functools.partial(_linear_refit, js, rs)
        core[start : start + chunk] = _concentrate(refit, res, h, thr)
    return core


def _linear_refit(
    js: NDArray[np.float64], rs: NDArray[np.float64], mask: NDArray[np.bool_]
) -> NDArray[np.float64]:
    """Residuals (b, s, N) of ``r + J x`` refitted on the rows `mask` of each candidate."""
    with np.errstate(under="ignore", over="ignore", invalid="ignore"):
        res = rs + (js @ _weighted_step(js, rs, mask)[..., None])[..., 0]
        return np.where(np.isfinite(res), res, np.inf)


def row_leverage(jac: NDArray[np.float64], w: NDArray[np.bool_]) -> NDArray[np.float64]:
    """``J_i (J_w^T J_w)^-1 J_i^T`` of every row (B, N), the fit on the rows `w` (B, N)."""
    jw = jac * w[..., None]
    h = np.einsum("bni,bnj->bij", jw, jw)
    eye = np.eye(jac.shape[-1])
    damp = 1e-12 * np.einsum("bii->bi", h)[..., None] * eye + 1e-300 * eye
    sol = np.linalg.solve(h + damp, np.swapaxes(jac, 1, 2))
    return np.asarray(np.einsum("bni,bin->bn", jac, sol), dtype=np.float64)


# ------------------------------------------------------------------------ the refit loop

# A refit: the contacts to fit (B, N) -> every contact's residual and leverage (B, N) each.
Refit = Callable[[NDArray[np.bool_]], tuple[NDArray[np.float64], NDArray[np.float64]]]


class TestReport(NamedTuple):
    """The final test: inliers (B, N), per set (B,) and per contact (B, N)."""

    inliers: NDArray[np.bool_]
    converged: NDArray[np.bool_]
    n_iter: NDArray[np.int64]
    nsigma: NDArray[np.float64]
    threshold: NDArray[np.float64]


def _held_scale(
    refit: Refit, inl: NDArray[np.bool_], n_params: int, significance: float
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Scale (B,) and its degrees of freedom of the fit on `inl`, consistent for truncation."""
    r, _ = refit(inl)
    n_in = np.sum(inl, axis=1)
    dof = (n_in - n_params).astype(np.float64)
    later = np.where(n_in < inl.shape[1], truncated_inflation(significance), 1.0)
    with np.errstate(under="ignore"):
        ss = np.sum(np.where(inl, r**2, 0.0), axis=1)
    return later * np.sqrt(ss / np.maximum(dof, 1.0)), dof


def refit_until_stable(
    refit: Refit,
    core: NDArray[np.bool_],
    n_params: int,
    sigma: NDArray[np.float64] | None,
    floor: NDArray[np.float64],
    significance: float,
    max_iter: int | None,
) -> TestReport:
    """Refit on the contacts that pass the test against the current fit until the set repeats.

    Starts from the trimmed `core` (B, N). With a known `sigma` (B,) the test is normal.
    Without, the first test uses the core's scale made consistent by
    :func:`trimmed_inflation`, and the scale of the set it passes (made consistent for its
    truncation by :func:`truncated_inflation` where it leaves contacts out) is then held, with
    its degrees of freedom. A cycle ends on the smaller of its last two sets. `refit` is called
    last on the final inliers, so that its state is the final fit.
    """
    n_batch, n_rows = core.shape
    need = n_params + 1
    inl = core
    converged = np.zeros(n_batch, dtype=bool)
    limit = REFIT_CAP if max_iter is None else max_iter
    dof = None
    done = 0
    estimated = sigma is None
    if sigma is None:
        done = 1  # the first test counts against `max_iter`
        r, lev = refit(inl)
        # The trimmed set's residual degrees of freedom h - p are a fraction of N - p.
        infl = trimmed_inflation(2 * coverage(n_rows, n_params) - n_params, 2 * n_rows - n_params)
        stud, crit = studentize(r, lev, inl, n_params, None, floor, significance, infl)
        passed = stud <= crit
        inl = np.where((np.sum(passed, axis=1) < need)[:, None], inl, passed)
    n_iter = np.full(n_batch, done, dtype=np.int64)
    # Without `noise_std`, up to SCALE_PASSES passes, each holding the scale of the set it
    # starts from; a pass that changes no set ends them.
    for _ in range(1 if sigma is not None else SCALE_PASSES):
        start = inl
        if estimated:
            sigma, dof = _held_scale(refit, inl, n_params, significance)
            converged[:] = False
        history = [inl]
        for _ in range(1, limit + 1 - done):
            r, lev = refit(inl)
            stud, crit = studentize(r, lev, inl, n_params, sigma, floor, significance, 1.0, dof)
            new = stud <= crit
            # Too few contacts left would leave nothing to test: keep the current set.
            new = np.where((np.sum(new, axis=1) < need)[:, None], inl, new)
            same = np.all(new == inl, axis=1)
            # A cycle (borderline contacts that flip) ends on the smaller of the last two sets.
            cycle = ~same
            cycle &= np.any([np.all(new == old, axis=1) for old in history[:-1]] or [False], 0)
            new = np.where(
                (cycle & (np.sum(new, axis=1) > np.sum(inl, axis=1)))[:, None], inl, new
            )
            active = ~converged
            n_iter = np.where(active, n_iter + 1, n_iter)
            inl = np.where(active[:, None], new, inl)
            history.append(inl)
            converged |= same | cycle
            if np.all(converged):
                break
        done = int(np.max(n_iter))
        if np.array_equal(start, inl):
            break
    r, lev = refit(inl)
    stud, crit = studentize(r, lev, inl, n_params, sigma, floor, significance, 1.0, dof)
    return TestReport(inl, converged, n_iter, stud, crit)
