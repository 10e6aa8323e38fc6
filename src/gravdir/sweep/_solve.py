"""The normal-equation solve shared by every sweep fit, and the reductions it is built from.

The reductions return Python floats for a single sweep (1-D input): 0-d array arithmetic costs
several times more, and the single-sweep path is called once per sweep by a controller.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from gravdir.errors import InsufficientDataError

# Condition number (the bound p * trace(inv) of the equilibrated normal equations) above which
# one step of iterative refinement is taken: below it the normal equations are already accurate
# to ~1e4 * eps relative, well inside the 1e-10 the property tests demand.
_REFINE_ABOVE_COND = 1e4
# Condition number above which the coefficients are not determined by the data: with one
# refinement step the normal equations stay accurate while cond * eps << 1.
_MAX_CONDITION = 1e13
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
) -> tuple[NDArray[np.float64], NDArray[np.float64], Any]:
    """Least squares from equilibrated normal equations, refined once where ill-conditioned.

    ``x`` is (..., p, n) with unused samples zeroed, ``y`` is (..., n) with the same zeros.
    ``pinned`` (..., p) marks coefficients held at exactly zero. Returns the coefficients
    (..., p), :math:`(X^T X)^{-1}` (..., p, p) with zero rows and columns for pinned
    coefficients, and the residual sum of squares (...) (a Python float for one sweep).
    ``yy`` is ``y . y`` when the caller has it.

    Raises
    ------
    InsufficientDataError
        Where the condition number of the equilibrated normal equations exceeds 1e13.
    """
    if gram is None:
        gram = x @ np.swapaxes(x, -1, -2)
    rhs = matvec(x, y)
    if pinned is not None:
        gram = gram.copy()
        keep = ~pinned
        gram *= keep[..., :, None] * keep[..., None, :]
        gram[pinned[..., None, :] & np.eye(pinned.shape[-1], dtype=bool)] = 1.0
        rhs *= keep
    # The floor keeps a zero column (singular, refused below) from dividing by zero; its square
    # is still a normal number.
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
    # A positive definite matrix has a positive trace of its inverse; rounding on a singular one
    # can give any sign.
    if cond.ndim == 0:
        cond_lo = cond_hi = float(cond)
    else:
        # An empty batch has nothing to refuse or refine.
        cond_lo, cond_hi = (float(cond.min()), float(cond.max())) if cond.size else (1.0, 1.0)
    if not (cond_lo > 0 and cond_hi <= _MAX_CONDITION):
        degenerate = ~((cond > 0) & (cond <= _MAX_CONDITION))
        worst = float(np.max(np.where(degenerate, np.abs(cond), 0.0)))
        raise InsufficientDataError(
            "Expected the samples of `q` and `velocity` to determine every fitted coefficient, "
            f"got normal equations with condition number {worst:.1e}"
            f"{batch_index(cond.shape, degenerate)}: too few distinct joint angles or speeds, "
            "or a `harmonics` order too close to another column."
        )
    inv_gram = inv_scaled / dd
    beta = matvec(inv_gram, rhs)
    if cond_hi > _REFINE_ABOVE_COND and pinned is None:
        # The normal equations square the condition number: the coefficients and the RSS come
        # from the triangular factor of [X' | y] instead (Householder QR), whose error grows
        # with the condition number of X only, as the streamed fit's (SweepAccumulator) does;
        # the inverse Gram matrix above still gives the covariance.
        aug = np.concatenate([np.swapaxes(x, -1, -2), y[..., :, None]], axis=-1)
        r: NDArray[np.float64] = np.asarray(np.linalg.qr(aug, mode="r"))
        p = x.shape[-2]
        rx = r[..., :p, :p]
        # Back substitution through the inverse of the column-equilibrated factor.
        norms = np.maximum(np.sqrt((rx * rx).sum(axis=-2)), 1e-150)
        beta = matvec(np.linalg.inv(rx / norms[..., None, :]), r[..., :p, p]) / norms
        rss_r = r[..., p, p] ** 2
        rss = float(rss_r) if y.ndim == 1 else rss_r
    elif cond_hi > _REFINE_ABOVE_COND:
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
        # |y - X beta|^2 = y.y - 2 beta.X'y + beta.G beta holds for any beta, so the rounding
        # of beta enters only to second order, and it needs no pass over the samples beyond
        # y.y. (Pinned coefficients are zero and their entries of G and X'y vanish.)
        yy = dot(y, y) if yy is None else yy
        rss = yy + dot(beta, matvec(gram, beta) - 2.0 * rhs)
        if any_(rss < _EXPLICIT_RSS_BELOW * yy):
            resid = y - predict(beta, x)
            rss = dot(resid, resid)
    if pinned is not None:
        inv_gram *= ~pinned[..., :, None] & ~pinned[..., None, :]
    return beta, inv_gram, rss
