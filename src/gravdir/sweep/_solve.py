"""The least-squares solve shared by every sweep fit, and the reductions it is built from.

Every sweep fit ends here: :func:`solve_normal` (the Gram matrix of a design, one sweep or a
batch: :func:`~gravdir.sweep.fit_sweep`), :func:`solve_factor` (the triangular factor of
``[X | y]``: :class:`~gravdir.sweep.SweepAccumulator`, and the QR step of
:func:`solve_normal`) and :func:`solve_small` (the LAPACK kernel of the single-sweep fast path)
share one condition bound, its limits and its error (:func:`check_condition`);
:func:`solve_gram` is the part of :func:`solve_normal` that needs no samples (the batched fast
path), and :func:`covariance_rms` turns what each returns into the covariance and residual RMS.

The reductions return Python floats for a single sweep (1-D input): 0-d array arithmetic costs
several times more, and the single-sweep path is called once per sweep by a controller.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from gravdir._hac import residual_lag1
from gravdir._imports import IMPORT_LOCK
from gravdir.errors import InsufficientDataError

# Condition number (the bound p * trace(inv) of the equilibrated normal equations) above which
# one step of iterative refinement is taken: below it the normal equations are already accurate
# to ~1e4 * eps relative, well inside the 1e-10 the property tests demand.
REFINE_ABOVE_COND = 1e4
# Condition number above which the coefficients are not determined by the data: with one
# refinement step the normal equations stay accurate while cond * eps << 1.
MAX_CONDITION = 1e13
# The right-hand sides [I | 0] of solve_small for the column counts of the fast path.
_IDENTITY_RHS = {p: np.eye(p, p + 1) for p in (3, 4, 5)}
# RSS / (y . y) below which a batch's RSS is summed from explicit residuals instead of expanded
# from the normal equations. The expansion's rounding error is a few eps * (y . y), i.e. a relative
# error of about eps / ratio: above this ratio the RSS is good to ~1e-10 relative, far inside its
# own statistical spread sqrt(2 / (n - p)). Realistic sweeps (noise ~0.5% of the torque) sit
# near 1e-5 and keep the cheap path; noise-free or nearly noise-free sweeps get the explicit sum,
# which keeps their residual RMS at rounding level.
_EXPLICIT_RSS_BELOW = 1e-6


def any_(x: bool | np.bool_ | NDArray[np.bool_]) -> bool:
    """True where any element is; Python and numpy scalars skip the array machinery."""
    return bool(x) if isinstance(x, (bool, np.bool_)) else bool(x.any())


def all_(x: bool | np.bool_ | NDArray[np.bool_]) -> bool:
    """True where every element is; as `any_`."""
    return bool(x) if isinstance(x, (bool, np.bool_)) else bool(x.all())


def batch_index(shape: tuple[int, ...], mask: NDArray[np.bool_]) -> str:
    """`` (at batch index (i, j))`` of the first true entry of `mask`, or ``""`` unbatched."""
    if not shape:
        return ""
    idx = np.argwhere(mask)[0]
    return f" (at batch index {tuple(int(i) for i in idx)})"


def matvec(x: NDArray[np.float64], y: NDArray[np.float64]) -> NDArray[np.float64]:
    """(..., p, n) @ (..., n) -> (..., p); np.dot (less call overhead) for one sweep."""
    one = x.ndim == 2 and y.ndim == 1
    out: NDArray[np.float64] = np.dot(x, y) if one else np.matvec(x, y)
    return out


def predict(beta: NDArray[np.float64], x: NDArray[np.float64]) -> NDArray[np.float64]:
    """(..., p) times (..., p, n) -> (..., n); np.dot for one sweep."""
    one = beta.ndim == 1 and x.ndim == 2
    out: NDArray[np.float64] = np.dot(beta, x) if one else np.vecmat(beta, x)
    return out


def dot(a: NDArray[np.float64], b: NDArray[np.float64]) -> Any:
    """Sum over the last axis of ``a * b``: a Python float for 1-D input, else (...)."""
    if a.ndim == 1:
        return float(a @ b)
    return np.vecdot(a, b)


def residual_lag1_of(resid: NDArray[np.float64], yy: Any) -> Any:
    """:func:`~gravdir._hac.residual_lag1` of residuals `resid` (..., n), zero where a sample
    was left out, of a torque whose squares sum to `yy`."""
    return residual_lag1(dot(resid[..., 1:], resid[..., :-1]), dot(resid, resid), yy)


def extreme(ufunc: np.ufunc, a: NDArray[np.float64]) -> Any:
    """``ufunc`` (np.maximum or np.minimum) reduced over the last axis, as `total`."""
    return float(ufunc.reduce(a)) if a.ndim == 1 else ufunc.reduce(a, axis=-1)


def all_finite(x: Any) -> bool:
    """Whether a Python float or every element of an array is finite."""
    return math.isfinite(x) if isinstance(x, float) else bool(np.isfinite(x).all())


def total(a: NDArray[np.float64]) -> Any:
    """Sum over the last axis: a Python float for 1-D input, else (...)."""
    return float(np.add.reduce(a)) if a.ndim == 1 else np.add.reduce(a, axis=-1)


def solve_normal(
    x: NDArray[np.float64],
    y: NDArray[np.float64],
    gram: NDArray[np.float64] | None = None,
    pinned: NDArray[np.bool_] | None = None,
    yy: Any = None,
    xty: NDArray[np.float64] | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64], Any]:
    """Least squares from equilibrated normal equations, refined once where ill-conditioned.

    ``x`` is (..., p, n) with unused samples zeroed, ``y`` is (..., n) with the same zeros.
    ``pinned`` (..., p) marks coefficients held at exactly zero. Returns the coefficients
    (..., p), :math:`(X^T X)^{-1}` (..., p, p) with zero rows and columns for pinned
    coefficients, and the residual sum of squares (...) (a Python float for one sweep).
    ``yy`` is ``y . y`` and ``xty`` is ``X' y`` when the caller has them.

    Raises
    ------
    InsufficientDataError
        Where the condition number of the equilibrated normal equations exceeds 1e13.
    """
    if gram is None:
        gram = x @ np.swapaxes(x, -1, -2)
    rhs = matvec(x, y) if xty is None else xty
    if pinned is not None:
        rhs = rhs.copy()
        gram = gram.copy()
        keep = ~pinned
        gram *= keep[..., :, None] * keep[..., None, :]
        gram[pinned[..., None, :] & np.eye(pinned.shape[-1], dtype=bool)] = 1.0
        rhs *= keep
    inv_gram, cond = _equilibrated_inverse(gram)
    cond_hi = check_condition(cond)
    beta = matvec(inv_gram, rhs)
    if cond_hi > REFINE_ABOVE_COND and pinned is None:
        # The normal equations square the condition number: the coefficients and the RSS come
        # from the triangular factor of [X' | y] instead (Householder QR), whose error grows
        # with the condition number of X only, as the streamed fit's (SweepAccumulator) does;
        # the inverse Gram matrix above still gives the covariance.
        aug = np.concatenate([np.swapaxes(x, -1, -2), y[..., :, None]], axis=-1)
        beta, rss_r, _, _ = _factor_solve(np.asarray(np.linalg.qr(aug, mode="r")))
        rss = float(rss_r) if y.ndim == 1 else rss_r
    elif cond_hi > REFINE_ABOVE_COND:
        # The normal equations square the condition number; one refinement step with the
        # residual restores the accuracy of an orthogonal factorisation.
        resid = y - predict(beta, x)
        rhs2 = matvec(x, resid)
        if pinned is not None:
            rhs2 *= ~pinned
        delta = matvec(inv_gram, rhs2)
        beta = beta + delta
        resid = resid - predict(delta, x)
        rss = dot(resid, resid)
    elif y.ndim == 1:
        # One sweep: the passes over its samples cost less than the small-array calls of the
        # expansion below.
        resid = y - predict(beta, x)
        rss = dot(resid, resid)
    else:
        # A batch: the RSS expanded from the normal equations, with no pass over the samples
        # beyond y.y, unless it is so small that the expansion's rounding would show.
        yy = dot(y, y) if yy is None else yy
        rss = _expanded_rss(gram, rhs, beta, yy)
        if any_(rss < _EXPLICIT_RSS_BELOW * yy):
            resid = y - predict(beta, x)
            rss = dot(resid, resid)
    if pinned is not None:
        inv_gram *= ~pinned[..., :, None] & ~pinned[..., None, :]
    return beta, inv_gram, rss


def _equilibrated_inverse(gram: NDArray[np.float64]) -> tuple[NDArray[np.float64], Any]:
    """The inverse of the Gram matrix, through its column-equilibrated form, and the condition
    bound of that form (no check)."""
    # The floor keeps a zero column (singular, refused by check_condition) from dividing by zero;
    # its square is still a normal number.
    d = np.maximum(np.sqrt(gram.diagonal(0, -2, -1)), 1e-150)
    dd = d[..., :, None] * d[..., None, :]
    scaled = gram / dd
    try:
        inv_scaled = np.linalg.inv(scaled)
    except np.linalg.LinAlgError:
        inv_scaled = np.full_like(scaled, np.inf)
    # With a unit diagonal, lambda_max <= p and 1 / lambda_min <= trace(inv): p * trace(inv)
    # bounds the 2-norm condition number from above at the cost of one reduction.
    cond = scaled.shape[-1] * inv_scaled.trace(axis1=-2, axis2=-1)
    return inv_scaled / dd, cond


def _expanded_rss(
    gram: NDArray[np.float64], rhs: NDArray[np.float64], beta: NDArray[np.float64], yy: Any
) -> Any:
    """|y - X beta|^2 = y.y - 2 beta.X'y + beta.G beta, which holds for any beta, so the rounding
    of beta enters only to second order; no pass over the samples beyond y.y. (Pinned
    coefficients are zero and their entries of G and X'y vanish.)"""
    return yy + dot(beta, matvec(gram, beta) - 2.0 * rhs)


def solve_gram(
    gram: NDArray[np.float64], rhs: NDArray[np.float64], yy: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]] | None:
    """:func:`solve_normal` for a batch (..., p, p) whose samples are no longer at hand: the
    coefficients, inverse Gram matrix and RSS from the Gram matrix, ``X' y`` and ``y . y``, or
    None wherever :func:`solve_normal` would need the samples (a condition bound above
    :data:`REFINE_ABOVE_COND`, or not positive, or an RSS it would sum explicitly). The batched
    fast path of :func:`~gravdir.sweep.fit_sweep` uses it; it hands such batches to the general
    path, which decides them."""
    inv_gram, cond = _equilibrated_inverse(gram)
    if not (cond.size and float(cond.min()) > 0.0 and float(cond.max()) <= REFINE_ABOVE_COND):
        return None
    beta = matvec(inv_gram, rhs)
    rss = _expanded_rss(gram, rhs, beta, yy)
    if not bool(np.all(rss >= _EXPLICIT_RSS_BELOW * yy)):
        return None
    return beta, inv_gram, rss


def check_condition(cond: Any) -> float:
    """The largest of the condition bounds `cond` (a number or an array over the batch), after
    refusing any that is not positive or exceeds :data:`MAX_CONDITION`.

    The bound is ``p * trace(inv(D^-1 G D^-1))`` of the column-equilibrated Gram matrix ``G``
    (``D`` its diagonal's square root): a positive definite matrix has a positive trace of its
    inverse, and rounding on a singular one can give any sign (or NaN, or infinity where the
    inverse failed).

    Raises
    ------
    InsufficientDataError
        Where a bound is not in ``(0, MAX_CONDITION]``, naming the first such batch index.
    """
    if np.ndim(cond) == 0:
        lo = hi = float(cond)
    else:
        # An empty batch has nothing to refuse or refine.
        lo, hi = (float(cond.min()), float(cond.max())) if cond.size else (1.0, 1.0)
    if lo > 0 and hi <= MAX_CONDITION:
        return hi
    cond = np.asarray(cond)
    bad = ~((cond > 0) & (cond <= MAX_CONDITION))
    worst = float(np.max(np.where(bad, np.nan_to_num(np.abs(cond), nan=np.inf), 0.0)))
    raise InsufficientDataError(
        "Expected the samples of `q` and `velocity` to determine every fitted coefficient, "
        f"got normal equations with condition number {worst:.1e}"
        f"{batch_index(cond.shape, bad)}: too few distinct joint angles or speeds, "
        "or a `harmonics` order too close to another column."
    )


def _factor_solve(
    r: NDArray[np.float64],
) -> tuple[NDArray[np.float64], Any, NDArray[np.float64], NDArray[np.float64]]:
    """Coefficients and RSS from the triangular factor ``r`` (..., p + 1, p + 1) of ``[X | y]``,
    and the inverse of its column-equilibrated part ``R_x D^-1`` with ``D`` (the column norms
    of ``X``, floored as in :func:`solve_normal`); back substitution through that inverse."""
    p = r.shape[-1] - 1
    rx = r[..., :p, :p]
    d = np.maximum(np.sqrt((rx * rx).sum(axis=-2)), 1e-150)
    try:
        inv = np.linalg.inv(rx / d[..., None, :])
    except np.linalg.LinAlgError:
        inv = np.full_like(rx, np.inf)
    beta = matvec(inv, r[..., :p, p]) / d
    return beta, r[..., p, p] ** 2, inv, d


def solve_factor(
    r: NDArray[np.float64], pinned: NDArray[np.bool_] | None = None
) -> tuple[NDArray[np.float64], NDArray[np.float64], Any]:
    """Coefficients, inverse Gram matrix and RSS from the triangular factor of ``[X | y]``.

    The same results, condition test and error as :func:`solve_normal`: the bound
    ``p * trace(inv(D^-1 G D^-1))`` is here ``p`` times the squared Frobenius norm of
    ``inv(R_x D^-1)``, and the RSS is ``R_pp^2`` without the cancellation of
    ``y.y - beta.X'y``. ``pinned`` (..., p) marks coefficients held at zero (their factor has a
    unit row and column there): their rows and columns of the inverse Gram matrix are zeroed.
    """
    beta, rss, inv, d = _factor_solve(r)
    check_condition((r.shape[-1] - 1) * (inv * inv).sum(axis=(-2, -1)))
    inv_gram = (inv @ np.swapaxes(inv, -1, -2)) / (d[..., :, None] * d[..., None, :])
    if pinned is not None:
        inv_gram *= ~pinned[..., :, None] & ~pinned[..., None, :]
    return beta, inv_gram, rss


@functools.cache
def lapack(name: str) -> Any:
    """SciPy's LAPACK routine `name` (without its type prefix) for float64 arrays.

    Resolved once per name through :func:`scipy.linalg.get_lapack_funcs`, on first use (so
    ``import gravdir`` does not load SciPy) and under the import lock; later calls return the
    cached routine.
    """
    with IMPORT_LOCK:
        from scipy.linalg import get_lapack_funcs

    (routine,) = get_lapack_funcs((name,), dtype=np.float64)
    return routine


def solve_small(
    gram: NDArray[np.float64], xty: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]] | None:
    """Coefficients and inverse Gram matrix of one sweep's normal equations ``G beta = X'y``, or
    None where the sweep is not clearly well conditioned.

    One Cholesky solve of ``G [inv | beta] = [I | X'y]`` (LAPACK ``posv``) on the unscaled
    (p, p) Gram matrix: a diagonal scaling changes neither its accuracy (van der Sluis) nor the
    condition bound of :func:`solve_normal`, ``p * trace(inv(D^-1 G D^-1))``, which is
    ``p * sum_i inv(G)_ii G_ii``. None where the factorisation fails or the bound exceeds
    :data:`REFINE_ABOVE_COND`: such sweeps take :func:`solve_normal`, which decides them. The
    single-sweep fast path of :func:`~gravdir.sweep.fit_sweep` uses it.
    """
    p = xty.shape[0]
    rhs = _IDENTITY_RHS[p].copy() if p in _IDENTITY_RHS else np.eye(p, p + 1)
    rhs[:, p] = xty
    _, sol, info = lapack("posv")(gram, rhs)
    if info != 0:
        return None
    s, g = sol.diagonal().tolist(), gram.diagonal().tolist()
    cond = p * sum(s[i] * g[i] for i in range(p))
    if not 0.0 < cond <= REFINE_ABOVE_COND:
        return None
    return sol[:, p].copy(), sol[:, :p]


def covariance_rms(
    inv_gram: NDArray[np.float64], rss: Any, n_used: Any, n_free: Any
) -> tuple[NDArray[np.float64], Any]:
    """The covariance ``rss / (n_used - n_free) * inv(G)`` and the residual RMS
    ``sqrt(rss / n_used)`` of a fit (per sweep of a batch; numpy scalars for one sweep)."""
    sigma2 = rss / (n_used - n_free)
    cov = (sigma2[..., None, None] if isinstance(sigma2, np.ndarray) else sigma2) * inv_gram
    # math.sqrt is the correctly rounded square root, as np.sqrt, at a fraction of its call cost.
    if isinstance(rss, np.ndarray):
        return cov, np.sqrt(rss / n_used)
    return cov, np.float64(math.sqrt(rss / n_used))
