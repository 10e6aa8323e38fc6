"""The Bartlett sandwich of :class:`~gravdir.sweep.SweepAccumulator`, in a state of fixed size.

A sweep's scores are ``g_t = x_t e_t = x_t z_t^T w`` with ``z_t = (x_t, tau_t)`` the row of the
design augmented with the torque and ``w = (-beta, 1)``, known only after the last sample. The
Bartlett meat is ``(L + 1)^-1 sum_W (B_W w)(B_W w)^T`` over the windows ``W`` of ``L + 1``
consecutive samples, ``B_W = sum_(t in W) x_t z_t^T``: a quadratic form in ``w`` of the sums
``sum_W vec(B_W) vec(B_W)^T``, which add sample by sample once the partial sums of
``x_t z_t^T`` over the last ``L + 1`` samples are kept (:func:`gravdir._hac.extend_windows`). The
same sums hold the white-noise expectation of the meat, ``G - (L + 1)^-1 sum_W A_W P A_W`` with
``A_W`` the window sums of ``x_t x_t^T`` (the ``x`` block of ``B_W``), and the fourth moments
``sum_t (x_t x_t^T) ⊗ (x_t x_t^T)`` give the degrees of freedom. The torque is measured from a
centre, the coefficients so far, so that the sums hold numbers of the residuals' size.
Derivation: *Sweep fitting*, "Correlated residuals in a stream".
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from gravdir._hac import bartlett_dof, extend_windows, rescaled_meat, rescaling_lag1, window_tail
from gravdir.sweep._fit import _GRAVITY

__all__ = [
    "fitted_sandwich",
    "hac_center",
    "hac_fold",
    "hac_merge",
    "hac_recenter",
    "hac_rescale",
    "hac_state",
    "hac_windows",
    "window_sandwich",
]


State = tuple[NDArray[np.float64], ...]


# The most numbers the state of the Bartlett sandwich may hold over all sweeps of an
# accumulator (256 MiB): ``(L + 1) p (p + 1) + p² (p + 1)² + p⁴ + p`` per sweep.
MAX_HAC_STATE = 1 << 25


def hac_state(batch: tuple[int, ...], p: int, lags: int | None) -> State:
    """An empty state for sweeps of `batch` with `p` design columns; empty arrays for the
    white-noise form (`lags` None). The state is the centre the torque is measured from
    (..., p), the partial sums of ``vec(x_t z_t^T)`` over the last ``L + 1`` samples
    (:func:`gravdir._hac.extend_windows`' tails, (..., L + 1, K)), the windows' sum of outer
    products (..., K, K) and the fourth moments of the rows (..., p², p²). Refused (naming
    `bandwidth`) beyond :data:`MAX_HAC_STATE` numbers."""
    size, rows, moments = (0, 1, 0) if lags is None else (p * (p + 1), lags + 1, p * p)
    numbers = math.prod(batch) * (rows * size + size * size + moments * moments + p)
    if lags is not None and numbers > MAX_HAC_STATE:
        raise ValueError(
            f"Expected the Bartlett sandwich's state to hold at most {MAX_HAC_STATE} numbers, got "
            f"{numbers} ({math.prod(batch)} sweeps of {p} columns, a kernel of {lags + 1} "
            "samples): shorten `bandwidth`, fit fewer harmonics or fewer sweeps at once, or "
            "use fit_sweep."
        )
    return (
        np.zeros(batch + (0 if lags is None else p,)),
        np.zeros(batch + (rows, size)),
        np.zeros(batch + (size, size)),
        np.zeros(batch + (moments, moments)),
    )


# Singular values of the design, its columns scaled to unit norm, below this fraction of the
# largest are left out of the centre. Along a direction the samples so far barely fix (the
# offset against the Coulomb column before the first reversal, every column over the first few
# samples) a coefficient is noise over that singular value; moving the state by it when the
# direction is fixed later subtracts numbers that much larger than the residuals. Measured on
# sweeps whose first flush holds 7 samples: 1e-4 keeps the covariance within 3e-12 of the
# product of the standard deviations of fit_sweep's, 1e-6 within 1e-7, 1e-8 within 2e-5.
_CENTER_RCOND = 1e-4


def _vec_outer(a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    """``vec(a b^T)`` of each row of `a` (..., m) and `b` (..., n), taken row by row:
    (..., m n), the layout of the state's ``vec(B_W)``."""
    return np.asarray((a[..., :, None] * b[..., None, :]).reshape(a.shape[:-1] + (-1,)))


def hac_center(factor: NDArray[np.float64]) -> NDArray[np.float64]:
    """The centre from which the state measures the torque: least-squares coefficients (..., p)
    of the triangular factor `factor` (..., p + 1, p + 1) of ``[X | tau]``, on columns of unit
    norm and without the directions they barely fix (singular values below
    ``_CENTER_RCOND`` of the largest; a column of zeros gets 0). Any centre keeps the state
    exact; this one keeps its sums at the residuals' size."""
    r = factor[..., :-1, :-1]
    norms = np.sqrt(np.einsum("...ij,...ij->...j", r, r))
    d = np.where(norms > 0.0, 1.0 / np.where(norms > 0.0, norms, 1.0), 0.0)
    scaled = np.linalg.pinv(r * d[..., None, :], rcond=_CENTER_RCOND)
    return np.asarray(d * (scaled @ factor[..., :-1, -1:])[..., 0], dtype=np.float64)


def hac_recenter(state: State, center: NDArray[np.float64]) -> State:
    """The state with its torque measured from `center` (..., p): each row
    ``z = (x, tau - x . c)`` becomes ``N z``, ``N`` the identity with the last row
    ``(c - center, 1)``, so each ``B_W`` becomes ``B_W N^T``."""
    old, tails, windows, fourth = state
    p = center.shape[-1]
    n = np.zeros(center.shape[:-1] + (p + 1, p + 1))
    n[..., np.arange(p + 1), np.arange(p + 1)] = 1.0
    n[..., p, :p] = old - center
    k = p * (p + 1)
    # vec(B N^T) = (I_p ⊗ N) vec(B), the vec taken row by row.
    big = np.einsum("ab,...cd->...acbd", np.eye(p), n).reshape(center.shape[:-1] + (k, k))
    big_t = np.swapaxes(big, -1, -2)
    return center.copy(), tails @ big_t, big @ windows @ big_t, fourth


def hac_fold(state: State, factor: NDArray[np.float64], rows: NDArray[np.float64]) -> State:
    """The state after the next `rows` (..., s, p + 1) of ``[X | tau]`` (zero rows for the
    samples left out: zero scores in place), measured from a new centre: the coefficients of
    `factor`, the triangular factor with those rows folded in. Measured from the centre, the
    sums hold numbers of the residuals' size and the quadratic form of the meat cancels little;
    the state so far is moved to the new centre exactly."""
    center, tails, windows, fourth = hac_recenter(state, hac_center(factor))
    p = rows.shape[-1] - 1
    x = rows[..., :p]
    z = rows.copy()
    z[..., p] -= (x @ center[..., :, None])[..., 0]
    b, tails = extend_windows(tails, _vec_outer(x, z))
    squares = _vec_outer(x, x)
    windows = windows + np.swapaxes(b, -1, -2) @ b
    fourth = fourth + np.swapaxes(squares, -1, -2) @ squares
    return center, tails, windows, fourth


def hac_rescale(state: State, factor: NDArray[np.float64]) -> State:
    """The state with column ``j`` of ``[X | tau]`` multiplied by ``factor[..., j]`` (a
    coefficient of the centre is in torque per unit of its column)."""
    center, tails, windows, fourth = state
    p = factor.shape[-1] - 1
    fx = factor[..., :p]
    fk, f2 = _vec_outer(fx, factor), _vec_outer(fx, fx)
    with np.errstate(over="ignore"):
        ratio = factor[..., p:] / np.where(fx > 0, fx, 1.0)
    # A column whose unit grew past the float range held only values below 2^-1022 of it, and
    # with them a part of the torque below that: its coefficient is dropped from the centre.
    keep = (fx > 0) & np.isfinite(ratio)
    return (
        center * np.where(keep, ratio, 0.0),
        tails * fk[..., None, :],
        windows * (fk[..., :, None] * fk[..., None, :]),
        fourth * (f2[..., :, None] * f2[..., None, :]),
    )


def hac_windows(state: State) -> NDArray[np.float64]:
    """The windows' sum of outer products with the windows that run past the last sample."""
    _, tails, windows, _ = state
    tail = window_tail(tails)
    return np.asarray(windows + np.swapaxes(tail, -1, -2) @ tail, dtype=np.float64)


def hac_merge(left: State, right: State, factor: NDArray[np.float64]) -> State:
    """The state of two series one after the other, `left`'s and `right`'s: the windows that
    run past `left`'s last sample close, no window holds samples of both, and the merged state
    goes on with `right`'s last samples; both measured from the centre of `factor`, the
    triangular factor of both, before they are summed."""
    center = hac_center(factor)  # both moved to it at once: neither's may be fixed well
    first = hac_recenter(left, center)
    _, tails, windows, fourth = hac_recenter(right, center)
    return center, tails, hac_windows(first) + windows, first[3] + fourth


def window_sandwich(
    windows: NDArray[np.float64],
    fourth: NDArray[np.float64],
    gram: NDArray[np.float64],
    inv_gram: NDArray[np.float64],
    weights: NDArray[np.float64],
    lag1: float,
    lags: int,
    tested: tuple[int, ...],
) -> tuple[NDArray[np.float64], float]:
    """The Bartlett sandwich covariance (p, p) of one sweep and its degrees of freedom in the
    directions of the coefficients `tested`, from its closed `windows` and `fourth` moments,
    Gram matrix `gram` and inverse `inv_gram` of its ``p`` columns (zero rows and columns for
    the coefficients held fixed), the residual `weights` ``(c - beta, 1)`` (``c`` the centre
    the state measures the torque from) and the residuals' lag-1 correlation `lag1`.

    The meat is rescaled to be unbiased under white noise (``T = G^(1/2) E^(-1/2)``,
    ``E = G - A``), in columns of unit norm, as :func:`gravdir._hac.least_squares_sandwich`
    does where the residuals show no positive lag-1 correlation.
    """
    p = gram.shape[-1]
    idx = np.flatnonzero(np.diagonal(inv_gram) != 0.0)
    cov = np.zeros((p, p))
    w4 = windows.reshape(p, p + 1, p, p + 1)
    meat = np.einsum("acbd,c,d->ab", w4, weights, weights)[np.ix_(idx, idx)]
    if not np.any(meat != 0.0):  # an exact fit: nothing to estimate a spread from
        return cov, math.inf
    cross = np.einsum("acbd,cd->ab", w4[:, :p, :, :p], inv_gram)[np.ix_(idx, idx)]
    norms = np.sqrt(np.diagonal(gram)[idx])
    d = 1.0 / norms
    dd = d[:, None] * d[None, :]
    gs = gram[np.ix_(idx, idx)] * dd
    ps = inv_gram[np.ix_(idx, idx)] * (norms[:, None] * norms[None, :])
    scaled = cross * dd
    # The meat is a sum of outer products; rounding can leave it slightly indefinite. Its
    # negative eigenvalues are cut, and the covariance formed as a product of a factor with its
    # transpose: a variance is never negative.
    vals, vecs = np.linalg.eigh(rescaled_meat((meat * dd, scaled, scaled), gs, gs, lags))
    y = (ps @ vecs) * np.sqrt(np.maximum(vals, 0.0))
    cov[np.ix_(idx, idx)] = (y @ y.T) * dd
    # Each sample's influence on the tested coefficients is P_T^T x_t (columns of unit norm).
    pt = ps[:, [int(np.flatnonzero(idx == j)[0]) for j in tested]]
    k = idx.size
    f4 = fourth.reshape(p, p, p, p)[np.ix_(idx, idx, idx, idx)]
    f4 = f4 * (dd[:, :, None, None] * dd[None, None, :, :])
    second = pt.T @ gs @ pt
    moments = np.einsum("ijkl,ia,jb,kc,ld->abcd", f4.reshape(k, k, k, k), pt, pt, pt, pt)
    r = np.array([rescaling_lag1(float(lag1), lags)])
    return cov, bartlett_dof(second[None], moments[None, None], r, lags)


def fitted_sandwich(
    state: State,
    factor: NDArray[np.float64],
    fitted: list[int],
    inv_gram: NDArray[np.float64],
    weights: NDArray[np.float64],
    lag1: Any,
    lags: int,
    dof: Any,
) -> tuple[NDArray[np.float64], Any]:
    """`window_sandwich` of each sweep of an accumulator whose state is `state` and triangular
    factor of ``[X | tau]`` `factor` (..., p + 1, p + 1), in the fit's columns `fitted` (their
    indices among the ``p``; `inv_gram` (..., k, k) over them, the residuals' `weights`
    ``(-beta, 1)`` (..., p + 1) and `lag1` (...)), and the smaller of its degrees of freedom and
    the white form's `dof`."""
    windows, fourth = hac_windows(state), state[3]
    weights = weights.copy()
    weights[..., :-1] += state[0]  # the residual measured from the state's centre
    rx = factor[..., :-1, :-1]
    gram = np.swapaxes(rx, -1, -2) @ rx
    batch, p = gram.shape[:-2], gram.shape[-1]
    cov = np.empty(inv_gram.shape)
    hac_dof = np.empty(batch)
    lag1 = np.asarray(lag1, dtype=np.float64)
    for i in np.ndindex(batch):
        full = np.zeros((p, p))
        full[np.ix_(fitted, fitted)] = inv_gram[i]
        one, hac_dof[i] = window_sandwich(
            windows[i], fourth[i], gram[i], full, weights[i], float(lag1[i]), lags, _GRAVITY
        )
        cov[i] = one[np.ix_(fitted, fitted)]
    if batch:
        return cov, np.minimum(hac_dof, dof)
    return cov, min(float(hac_dof), float(dof))
