"""Gauss-Newton for the tool tip and the plane together, and the search that starts it.

Every contact satisfies ``n^T (R_i t + p_i) = d``. The solver works on stacks: ``rot`` (B, N, 3, 3)
and ``pos`` (B, N, 3) hold B independent sets of N contacts, ``n`` (B, 3) their normals.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from gravdir._sphere import tangent_basis

# Relative move of every parameter below which an iteration counts as converged.
STEP_TOL = 1e-12
# Contact rows (directions times contacts) of the search per chunk.
SEARCH_ROWS = 200_000


def solve_t_d(
    n: NDArray[np.float64],
    rot: NDArray[np.float64],
    pos: NDArray[np.float64],
    weights: NDArray[np.float64] | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """For normals n (..., 3): least-squares (t, d) and the residual cost (rows times `weights`)."""
    a = np.einsum("...k,...nkj->...nj", n, rot)
    a = np.concatenate([a, -np.ones((*a.shape[:-1], 1))], axis=-1)
    y = -np.einsum("...k,...nk->...n", n, pos)
    if weights is not None:
        a = a * weights[..., None]
        y = y * weights
    m = np.einsum("...ni,...nj->...ij", a, a)
    ridge = 1e-12 * np.trace(m, axis1=-2, axis2=-1)[..., None, None] * np.eye(4)
    x = np.linalg.solve(m + ridge, np.einsum("...ni,...n->...i", a, y)[..., None])[..., 0]
    cost = np.sum((np.einsum("...ni,...i->...n", a, x) - y) ** 2, axis=-1)
    return x, cost


def jacobian(
    rot: NDArray[np.float64], n: NDArray[np.float64], c: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Rows ``[n^T R_i, c_i^T B, -1]`` of the residual's Jacobian, and the tangent basis B."""
    basis = np.swapaxes(tangent_basis(n), -1, -2)  # columns (B, 3, 2)
    jt = np.einsum("bk,bnkj->bnj", n, rot)
    jn = np.einsum("bni,bik->bnk", c, basis)
    return np.concatenate([jt, jn, -np.ones((*c.shape[:-1], 1))], axis=-1), basis


def search_starts(
    dirs: NDArray[np.float64],
    rot: NDArray[np.float64],
    pos: NDArray[np.float64],
    count: int,
    steps: int,
) -> NDArray[np.float64]:
    """Normals after at most `steps` Gauss-Newton steps from every direction: the `count` lowest.

    Returns shape (B, count, 3). Every direction of the grid is a start, refined with (t, d)
    from the variable-projection solve; the ranking uses the cost after those steps. The steps
    are a fixed budget, not a solve: they are not expected to converge.
    """
    n_batch, n_pts = pos.shape[:2]
    n_dirs = len(dirs)
    out = np.empty((n_batch, count, 3))
    # About 2e5 contact rows per chunk keep the temporaries near 20 MB: whole sets while they
    # fit, otherwise one set and a part of the directions at a time.
    chunk = max(1, SEARCH_ROWS // (n_dirs * n_pts))
    part = n_dirs if chunk > 1 else max(1, SEARCH_ROWS // n_pts)
    for start in range(0, n_batch, chunk):
        sl = slice(start, start + chunk)
        b = rot[sl].shape[0]
        normals, costs = [], []
        for first in range(0, n_dirs, part):
            d = dirs[first : first + part]
            _, n, _, cost, _, _ = gauss_newton(
                np.repeat(rot[sl], len(d), axis=0),
                np.repeat(pos[sl], len(d), axis=0),
                np.tile(d, (b, 1)),
                steps,
            )
            normals.append(n.reshape(b, len(d), 3))
            costs.append(cost.reshape(b, len(d)))
        order = np.argsort(np.concatenate(costs, axis=1), axis=1)[:, :count]
        out[sl] = np.take_along_axis(np.concatenate(normals, axis=1), order[..., None], axis=1)
    return out


def _residual(
    rot: NDArray[np.float64],
    pos: NDArray[np.float64],
    t: NDArray[np.float64],
    n: NDArray[np.float64],
    d: NDArray[np.float64],
    w: NDArray[np.float64],
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Weighted residuals ``w_i (n^T c_i - d)``, contacts ``c_i = R_i t + p_i``, the cost."""
    c = np.einsum("bnij,bj->bni", rot, t) + pos
    r = (np.einsum("bni,bi->bn", c, n) - d[:, None]) * w
    return r, c, np.sum(r**2, axis=1)


def gauss_newton(
    rot: NDArray[np.float64],
    pos: NDArray[np.float64],
    n: NDArray[np.float64],
    max_iter: int,
    weights: NDArray[np.float64] | None = None,
    start: tuple[NDArray[np.float64], NDArray[np.float64]] | None = None,
) -> tuple[
    NDArray[np.float64],
    NDArray[np.float64],
    NDArray[np.float64],
    NDArray[np.float64],
    NDArray[np.bool_],
    NDArray[np.int64],
]:
    """Minimise sum w_i^2 (n^T (R_i t + p_i) - d)^2 from normals `n`.

    `weights` (B, N) default to one (0 or 1 select the contacts of a trimmed fit); `start`
    gives (t, d) with `n` (otherwise the least-squares (t, d) for `n`).

    Returns t, n, d, the cost, and per set whether it converged (every parameter moved less than
    `STEP_TOL` relative to its scale in one iteration) and the iteration at which it did
    (`max_iter` where it did not). All sets iterate until all have converged together.
    """
    w = np.ones(pos.shape[:2]) if weights is None else weights
    if start is None:
        x, _ = solve_t_d(n, rot, pos, w)
        t, d = x[:, :3], x[:, 3]
    else:
        t, d = start
    scale = float(np.max(np.abs(pos))) + 1e-300
    steps = np.array([scale] * 3 + [1.0, 1.0, scale])
    r, c, cost = _residual(rot, pos, t, n, d, w)
    eye = np.eye(6)
    converged = np.zeros(len(t), dtype=bool)
    n_iter = np.full(len(t), max_iter, dtype=np.int64)
    for it in range(1, max_iter + 1):
        jac, basis = jacobian(rot, n, c)
        jac = jac * w[..., None]
        h = np.einsum("bni,bnj->bij", jac, jac)
        g = np.einsum("bni,bn->bi", jac, r)
        # Relative damping 1e-12 keeps rank-deficient (identical-orientation) systems solvable.
        damp = 1e-12 * np.einsum("bii->bi", h)[:, :, None] * eye + 1e-300 * eye
        step = -np.linalg.solve(h + damp, g[..., None])[..., 0]
        alpha = np.ones(len(t))
        for _ in range(30):  # step halving until no set's cost rises
            a = alpha[:, None]
            t_new = t + a * step[:, :3]
            n_new = n + np.einsum("bik,bk->bi", basis, a * step[:, 3:5])
            n_new /= np.linalg.norm(n_new, axis=1, keepdims=True)
            d_new = d + alpha * step[:, 5]
            _, _, cost_new = _residual(rot, pos, t_new, n_new, d_new, w)
            worse = cost_new > cost
            if not np.any(worse):
                break
            alpha = np.where(worse, alpha / 2, alpha)
        keep = cost_new <= cost
        t = np.where(keep[:, None], t_new, t)
        n = np.where(keep[:, None], n_new, n)
        d = np.where(keep, d_new, d)
        r, c, cost = _residual(rot, pos, t, n, d, w)
        moved = np.max(np.where(keep[:, None], np.abs(alpha[:, None] * step) / steps, 0.0), axis=1)
        small = moved < STEP_TOL
        n_iter = np.where(small & ~converged, it, n_iter)
        converged |= small
        if np.all(small):
            break
    return t, n, d, cost, converged, n_iter
