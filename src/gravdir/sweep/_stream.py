"""The numerical pieces of :class:`~gravdir.sweep.SweepAccumulator`: chunk coercion, the
per-direction velocity moments, and the triangular factor's updates and solve."""

from __future__ import annotations

from typing import cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import check_array
from gravdir.errors import InsufficientDataError
from gravdir.sweep._solve import batch_index

# The same condition-number limit as fit_sweep's normal equations (gravdir.sweep._solve).
MAX_CONDITION = 1e13
NAMES = ("q", "torque", "velocity", "acceleration")


def coerce(x: ArrayLike, name: str) -> NDArray[np.float64]:
    """A float64 array of at least one dimension (a scalar is one sample)."""
    if type(x) is np.ndarray and x.dtype == np.float64 and x.ndim:
        return x
    arr = check_array(x, name, finite=False)
    return arr.reshape(1) if arr.ndim == 0 else arr


def common_shape(arrays: list[NDArray[np.float64]]) -> tuple[int, ...]:
    """The broadcast shape of the sample arrays, whose last (sample) axes must agree."""
    m = arrays[0].shape[-1]
    if any(a.shape[-1] != m for a in arrays):
        shapes = ", ".join(f"`{n}` {a.shape}" for n, a in zip(NAMES, arrays, strict=False))
        raise ValueError(
            f"Expected the samples to share their last (sample) axis, got {shapes}: leading "
            "axes broadcast over sweeps, the sample axis does not."
        )
    try:
        return tuple(np.broadcast_shapes(*(a.shape for a in arrays)))
    except ValueError:
        shapes = ", ".join(f"`{n}` {a.shape}" for n, a in zip(NAMES, arrays, strict=False))
        raise ValueError(f"Expected arrays of broadcastable shapes, got {shapes}.") from None


def moments(v: NDArray[np.float64], side: NDArray[np.bool_]) -> NDArray[np.float64]:
    """(count, mean, sum of squared deviations) of `v` where `side`, per sweep: (..., 3)."""
    count = side.sum(axis=-1).astype(np.float64)
    total = np.where(side, v, 0.0).sum(axis=-1)
    mean = total / np.maximum(count, 1.0)
    dev = np.where(side, v - mean[..., None], 0.0)
    return np.stack([count, mean, (dev * dev).sum(axis=-1)], axis=-1)


def chan_merge(a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    """Merge two (count, mean, M2) moments (Chan, Golub & LeVeque 1979)."""
    na, nb = a[..., 0], b[..., 0]
    n = na + nb
    safe = np.maximum(n, 1.0)
    delta = b[..., 1] - a[..., 1]
    mean = a[..., 1] + delta * nb / safe
    m2 = a[..., 2] + b[..., 2] + delta * delta * na * nb / safe
    return np.stack([n, mean, m2], axis=-1)


def qr_r(m: NDArray[np.float64]) -> NDArray[np.float64]:
    """The triangular factor R of ``m = QR`` (stacked over leading axes)."""
    return cast("NDArray[np.float64]", np.linalg.qr(m, mode="r"))


def drop_column(r: NDArray[np.float64], i: int) -> NDArray[np.float64]:
    """The triangular factor of the columns of ``QR`` without column `i`: ``qr(R[:, others])``."""
    others = [j for j in range(r.shape[-1]) if j != i]
    return qr_r(r[..., others])


def insert_unit(r: NDArray[np.float64], i: int) -> NDArray[np.float64]:
    """`r` with a unit row and column inserted at `i` (a coefficient held at zero)."""
    n = r.shape[-1] + 1
    out = np.zeros(r.shape[:-2] + (n, n))
    idx = np.array([j for j in range(n) if j != i])
    out[..., idx[:, None], idx[None, :]] = r
    out[..., i, i] = 1.0
    return out


def solve_triangular(
    r: NDArray[np.float64], batch: tuple[int, ...]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Coefficients, inverse Gram matrix and RSS from the factor of ``[X | y]``.

    The columns are equilibrated (each divided by its norm, the square root of the Gram
    diagonal) and the condition number bound ``p * trace(inv(scaled Gram))`` of fit_sweep's
    normal equations is refused above 1e13, here ``p`` times the squared Frobenius norm of the
    inverse of the scaled factor.
    """
    p = r.shape[-1] - 1
    rx, rb = r[..., :p, :p], r[..., :p, p]
    d = np.maximum(np.sqrt((rx * rx).sum(axis=-2)), 1e-150)
    rs = rx / d[..., None, :]
    try:
        inv = np.linalg.inv(rs)
    except np.linalg.LinAlgError:
        inv = np.full_like(rs, np.inf)
    cond = p * (inv * inv).sum(axis=(-2, -1))
    bad = ~((cond > 0) & (cond <= MAX_CONDITION))
    if bad.any():
        worst = float(np.max(np.where(bad, np.nan_to_num(np.abs(cond), posinf=np.inf), 0.0)))
        raise InsufficientDataError(
            "Expected the samples of `q` and `velocity` to determine every fitted coefficient, "
            f"got normal equations with condition number {worst:.1e}"
            f"{batch_index(batch, np.asarray(bad))}: too few distinct joint angles or speeds, "
            "or a `harmonics` order too close to another column."
        )
    beta = np.matvec(inv, rb) / d
    inv_gram = (inv @ np.swapaxes(inv, -1, -2)) / (d[..., :, None] * d[..., None, :])
    rss = r[..., p, p] ** 2
    return beta, inv_gram, rss
