"""Tool tip and plane together: the projected cost over the normal, its search and refinement.

Every contact satisfies ``n^T (R_i t + p_i) = d``. For a fixed normal ``n`` the residuals are
linear in ``(t, d)``, which a least-squares solve eliminates (variable projection): the search
ranks a grid of normals by that projected cost and the normal is refined on the sphere by
:func:`gravdir._sphere.refine_direction`.
The functions work on stacks: ``rot`` (B, N, 3, 3) and ``pos`` (B, N, 3) hold B independent sets
of N contacts, ``n`` (B, 3) their normals.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from gravdir._sphere import Linearisation, refine_direction, tangent_basis

# The refinement has converged when its Gauss-Newton step would move the normal by at most
# this, rad (the loop's step test; (t, d) follow the normal through the linear solve). Where the
# rounding of the cost hides steps that size, the loop's other rules stop it.
XTOL = 1e-12
# Contact rows (directions times contacts) of the grid's projected cost per chunk.
SEARCH_ROWS = 200_000
# Grid directions of lowest projected cost from which the search takes its steps. The cost has
# local minima 4-12 degrees from the global one, whose pit is narrower than the grid spacing
# (about 6 degrees for 600 directions): the grid cannot rank the pit, but the refinement from a
# direction a few degrees from it reaches it. Such a direction ranked at most 7th by the grid's
# cost in 6000 draws (docs/touch.md), and a 12-degree cap about the global minimum holds about
# 13 directions of the grid: 16 covers both.
SCREENED = 16
# Results of the screening closer than this, rad, count as one start: a quarter of the least
# distance between two minima (4 degrees), so that each start heads to another minimum.
SEPARATION = np.radians(1.0)
_SEPARATED = float(np.cos(SEPARATION))


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


def projected_cost(
    dirs: NDArray[np.float64], rot: NDArray[np.float64], pos: NDArray[np.float64]
) -> NDArray[np.float64]:
    """The cost (B, D) of every set at every normal of `dirs` (D, 3), ``(t, d)`` projected out."""
    n_batch, n_pts = pos.shape[:2]
    n_dirs = len(dirs)
    out = np.empty((n_batch, n_dirs))
    # About 2e5 contact rows per chunk keep the temporaries near 20 MB: whole sets while they
    # fit, otherwise one set and a part of the directions at a time.
    chunk = max(1, SEARCH_ROWS // (n_dirs * n_pts))
    part = n_dirs if chunk > 1 else max(1, SEARCH_ROWS // n_pts)
    for start in range(0, n_batch, chunk):
        sl = slice(start, start + chunk)
        for first in range(0, n_dirs, part):
            d = dirs[first : first + part]
            _, out[sl, first : first + part] = solve_t_d(
                d[None], rot[sl, None], pos[sl, None]
            )
    return out


class _Point(NamedTuple):
    """The least-squares (t, d) of one set at a normal, and what the Gauss-Newton model reuses."""

    x: NDArray[np.float64]  # (4,): t, d
    span: NDArray[np.float64]  # (N, k): orthonormal columns spanning the (t, d) columns
    cost: float  # sum of squared residuals, rows times the weights
    slack: float  # the rounding level of `cost`


def _solve(
    n: NDArray[np.float64],
    rot: NDArray[np.float64],
    pos: NDArray[np.float64],
    w: NDArray[np.float64],
) -> _Point:
    """The least-squares (t, d) of one set (N, 3, 3), (N, 3) at the normal `n`, rows times `w`.

    The minimum-norm solution by a singular value decomposition, exact where (t, d) are
    determined (singular values above ``N eps`` of the largest, as ``lstsq``): the residual is
    then orthogonal to the (t, d) columns, as the Gauss-Newton model assumes (:func:`solve_t_d`
    adds a ridge, which the search's ranking tolerates but the refinement's gradient would not).
    """
    a = np.concatenate([n @ rot, -np.ones((len(pos), 1))], axis=1) * w[:, None]
    y = -(pos @ n) * w
    left, sv, right = np.linalg.svd(a, full_matrices=False)
    keep = sv > len(a) * np.finfo(np.float64).eps * sv.max(initial=0.0)
    left, sv, right = left[:, keep], sv[keep], right[keep]
    x = right.T @ ((left.T @ y) / sv)
    r = a @ x - y
    # A residual sums five terms of size up to |a_i| |x| + |y_i| with eight roundings of at most
    # half a unit in the last place (eps / 2) of that size; the cost changes by 2 |r_i| times
    # the residual's error, per contact.
    size = np.abs(a) @ np.abs(x) + np.abs(y)
    slack = 8.0 * np.finfo(np.float64).eps * float(np.abs(r) @ size)
    return _Point(x, left, float(r @ r), slack)


class Run(NamedTuple):
    """The refinement of one set: tool tip, normal, offset, cost, convergence, iterations."""

    tool_tip: NDArray[np.float64]  # (3,)
    normal: NDArray[np.float64]  # (3,)
    offset: float
    cost: float  # rows times the weights
    slack: float  # the rounding level of `cost`
    converged: bool
    n_iter: int


def refine(
    rot: NDArray[np.float64],
    pos: NDArray[np.float64],
    n: NDArray[np.float64],
    max_iter: int,
    weights: NDArray[np.float64] | None = None,
) -> Run:
    """:func:`~gravdir._sphere.refine_direction` of one set (N, 3, 3), (N, 3) from the normal `n`.

    Every trial normal gets its least-squares ``(t, d)`` (variable projection); the Gauss-Newton
    model is the Jacobian of the projected residuals in the normal's two tangent coordinates
    (Kaufman's form: the columns ``c_i . b_k`` off the span of the ``(t, d)`` columns), so the
    step and its damping act on the normal alone. `weights` (N,) multiply the rows (0 or 1
    select the contacts of a trimmed fit).
    """
    if weights is None:
        w = np.ones(len(pos))
    else:  # rows of zero weight carry nothing
        used = weights != 0
        rot, pos, w = rot[used], pos[used], weights[used]
    start = _solve(n, rot, pos, w)
    # The loop reads its cost as a chi-square (its decrement test is in those units): the
    # residuals are whitened by the noise level the start's residuals give, at least the
    # coordinates' round-off (eps: the callers scale the flange positions to order one). A start
    # away from the minimum overstates the noise; the step test (`XTOL`) does not depend on it.
    dof = max(len(pos) - 6, 1)
    white2 = 1.0 / max(start.cost / dof, np.finfo(np.float64).eps ** 2)

    def evaluate(
        trial: NDArray[np.float64], _step: NDArray[np.float64], _at: _Point
    ) -> tuple[float, _Point]:
        point = _solve(trial, rot, pos, w)
        return point.cost * white2, point

    def linearise(u: NDArray[np.float64], basis: NDArray[np.float64], at: _Point) -> Linearisation:
        c = rot @ at.x[:3] + pos
        scaled = w * np.sqrt(white2)
        tangent = (c @ basis.T) * scaled[:, None]
        jac = tangent - at.span @ (at.span.T @ tangent)
        return Linearisation(grad=-(jac.T @ ((c @ u - at.x[3]) * scaled)), jacobian=jac)

    run = refine_direction(
        n,
        start.cost * white2,
        start,
        evaluate,
        linearise,
        max_iter=max_iter,
        xtol=XTOL,
        cost_slack=start.slack * white2,
    )
    end = run.state
    return Run(end.x[:3], run.up, float(end.x[3]), end.cost, end.slack, run.converged, run.n_iter)


# Tool tips (B, 3), normals (B, 3), offsets, costs, convergence and iterations (B,) of B runs.
Stacked = tuple[
    NDArray[np.float64],
    NDArray[np.float64],
    NDArray[np.float64],
    NDArray[np.float64],
    NDArray[np.bool_],
    NDArray[np.int64],
]


def best_run(runs: list[Run]) -> Run:
    """The run of lowest cost; of the runs that end at its minimum, a converged one first.

    Runs from different starts that reach one minimum (normals within :data:`SEPARATION`, costs
    within the lowest one's rounding level) give the same answer; the one reported is converged
    if any is, with the fewest iterations.
    """
    low = min(runs, key=lambda r: r.cost)
    same = [
        r
        for r in runs
        if r.cost <= low.cost + low.slack and abs(float(r.normal @ low.normal)) >= _SEPARATED
    ]
    return min(same, key=lambda r: (not r.converged, r.n_iter))


def stack(runs: list[Run]) -> Stacked:
    """The runs' results as arrays (:data:`Stacked`)."""
    return (
        np.array([r.tool_tip for r in runs], dtype=np.float64).reshape(-1, 3),
        np.array([r.normal for r in runs], dtype=np.float64).reshape(-1, 3),
        np.array([r.offset for r in runs], dtype=np.float64),
        np.array([r.cost for r in runs], dtype=np.float64),
        np.array([r.converged for r in runs], dtype=bool),
        np.array([r.n_iter for r in runs], dtype=np.int64),
    )


def refine_sets(
    rot: NDArray[np.float64],
    pos: NDArray[np.float64],
    n: NDArray[np.float64],
    max_iter: int,
    weights: NDArray[np.float64] | None = None,
) -> Stacked:
    """:func:`refine` of every set from its normal `n` (B, 3): what :func:`stack` returns.

    `weights` (B, N) default to one (0 or 1 select the contacts of a trimmed fit); ``(t, d)``
    are solved at every normal, so only the normal starts the refinement.
    """
    return stack(
        [
            refine(rot[b], pos[b], n[b], max_iter, None if weights is None else weights[b])
            for b in range(len(n))
        ]
    )


def search_starts(
    dirs: NDArray[np.float64],
    rot: NDArray[np.float64],
    pos: NDArray[np.float64],
    count: int,
    steps: int,
) -> NDArray[np.float64]:
    """Normals after at most `steps` iterations of the refinement: the `count` lowest (B, count, 3).

    The projected cost of every direction of the grid `dirs` ranks them; the refinement takes at
    most `steps` iterations from each of the :data:`SCREENED` lowest (at least `count`), and the
    `count` lowest results that lie more than :data:`SEPARATION` apart (modulo sign) are the
    starts (then the lowest of the rest). The steps are a budget, not a solve: they are not
    expected to converge.
    """
    cost = projected_cost(dirs, rot, pos)
    screened = min(max(SCREENED, count), len(dirs))
    order = np.argsort(cost, axis=1, kind="stable")[:, :screened]
    out = np.empty((len(pos), count, 3))
    for b in range(len(pos)):
        runs = [refine(rot[b], pos[b], dirs[k], steps) for k in order[b]]
        ranked = [runs[k].normal for k in np.argsort([r.cost for r in runs], kind="stable")]
        picked: list[int] = []
        for k, normal in enumerate(ranked):
            if all(abs(float(normal @ ranked[j])) < _SEPARATED for j in picked):
                picked.append(k)
        rest = [k for k in range(len(ranked)) if k not in picked]
        out[b] = [ranked[k] for k in (picked + rest)[:count]]
    return out
