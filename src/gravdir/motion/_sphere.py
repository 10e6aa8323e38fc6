"""The least-squares point of the unit sphere: the per-window solve of the `up` tracker."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from gravdir._sphere import tangent_basis

__all__ = ["sphere_least_squares"]


def sphere_least_squares(
    hess: NDArray[np.float64], grad: NDArray[np.float64], fallback: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Minimise ``u^T H u - 2 b^T u`` over unit vectors, for a stack (W, 3, 3), (W, 3).

    The global minimiser solves ``(H - lam E) u = b`` with ``lam <= h_min``, ``|u| = 1``: the
    secular equation, by bisection on ``[h_min - |b|, h_min]``, then two Newton steps on the
    tangent plane; the "hard case" fills the unit norm along the smallest eigenvector; rows with
    ``H = 0`` and ``b = 0`` get `fallback`.
    """
    scale = np.maximum(np.abs(hess).max(axis=(-2, -1)), np.abs(grad).max(axis=-1))
    empty = ~(scale > 0)
    scale = np.where(empty, 1.0, scale)
    h_mat = hess / scale[:, None, None]
    b = grad / scale[:, None]
    vals, vecs = np.linalg.eigh(h_mat)
    beta = np.einsum("wki,wk->wi", vecs, b)
    lo = vals[:, 0] - np.linalg.norm(b, axis=-1) - 1e-12
    hi = vals[:, 0].copy()
    for _ in range(120):
        mid = 0.5 * (lo + hi)
        with np.errstate(divide="ignore", invalid="ignore"):
            size = np.sum((beta / (vals - mid[:, None])) ** 2, axis=-1)
        big = ~(size <= 1.0)
        hi = np.where(big, mid, hi)
        lo = np.where(big, lo, mid)
    lam = lo
    coef = beta / (vals - lam[:, None])
    rest = 1.0 - np.sum(coef[:, 1:] ** 2, axis=-1)
    hard = np.abs(coef[:, 0]) ** 2 < rest - 1e-9
    fill = np.sqrt(np.clip(rest, 0.0, None)) * np.where(beta[:, 0] < 0, -1.0, 1.0)
    coef[:, 0] = np.where(hard, fill, coef[:, 0])
    u = np.einsum("wik,wk->wi", vecs, coef)
    u[empty] = fallback
    u /= np.linalg.norm(u, axis=-1, keepdims=True)
    for _ in range(2):  # Newton on the tangent plane: the last digits of the bisection
        e = tangent_basis(u)
        r = np.einsum("wij,wj->wi", h_mat, u) - b
        lam_u = np.sum(u * r, axis=-1)
        g2 = np.einsum("wai,wi->wa", e, r)
        h2 = np.einsum("wai,wij,wbj->wab", e, h_mat, e) - lam_u[:, None, None] * np.eye(2)
        ok = (np.linalg.det(h2) > 0) & (np.trace(h2, axis1=-2, axis2=-1) > 0) & ~empty
        step = np.zeros_like(g2)
        if ok.any():
            step[ok] = -np.linalg.solve(h2[ok], g2[ok][..., None])[..., 0]
        u = u + np.einsum("wai,wa->wi", e, step)
        u /= np.linalg.norm(u, axis=-1, keepdims=True)
    return np.asarray(u, dtype=np.float64)
