"""The search for `up` on the unit sphere: a Fibonacci grid, then tangent-plane steps.

The moments are eliminated for each `up` (variable projection), so the search is over the two
tangent parameters of `up` only: a global grid gives the starts,
:func:`~gravdir._sphere.refine_direction` refines each.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from gravdir._sphere import Linearisation, fibonacci_directions, refine_direction
from gravdir.general._bilinear import (
    _jacobian,
    _Problem,
    _project,
    _projected_cost,
    _residuals,
)

# Starts closer than this (modulo sign: the cost of up and -up is the same) are one start.
_MIN_START_SEPARATION = np.radians(15.0)

# Grid points whose projected cost is evaluated at once.
_GRID_BLOCK = 1024

def _starts(prob: _Problem, n_grid: int, n_starts: int) -> list[NDArray[np.float64]]:
    """The `n_starts` lowest grid points of the projected cost, distinct modulo sign."""
    grid = fibonacci_directions(n_grid)
    # In blocks, so that the (points, sweeps, 2, 2) arrays stay small for large grids.
    cost = np.concatenate(
        [_projected_cost(prob, grid[i : i + _GRID_BLOCK]) for i in range(0, n_grid, _GRID_BLOCK)]
    )
    order = np.argsort(cost, kind="stable")
    starts: list[NDArray[np.float64]] = []
    for k in order:
        u = grid[k]
        if all(abs(float(u @ s)) < np.cos(_MIN_START_SEPARATION) for s in starts):
            starts.append(u)
        if len(starts) == n_starts:
            break
    return starts


@dataclass(frozen=True)
class _Refined:
    """Outcome of one local refinement."""

    up: NDArray[np.float64]
    moments: NDArray[np.float64]  # (G, 2): x of every group
    cost: float
    converged: bool
    n_iter: int


def _refine(prob: _Problem, up: NDArray[np.float64], max_iter: int, xtol: float) -> _Refined:
    """:func:`~gravdir._sphere.refine_direction` from `up`, the moments projected out.

    Each trial solves every group's moment for its `up`; the Gauss-Newton model is the whitened
    Jacobian in the tangent parameters and the moments (its moment part is the
    variable-projection step's elimination, the Schur complement of the moment block).
    """

    def evaluate(
        trial: NDArray[np.float64], _step: NDArray[np.float64], _x: NDArray[np.float64]
    ) -> tuple[float, NDArray[np.float64]]:
        return _project(prob, trial)

    def linearise(
        u: NDArray[np.float64], basis: NDArray[np.float64], x: NDArray[np.float64]
    ) -> Linearisation:
        jac = _jacobian(prob, u, basis, x)
        return Linearisation(grad=jac.T @ _residuals(prob, u, x).ravel(), jacobian=jac)

    cost, x = _project(prob, up)
    run = refine_direction(up, cost, x, evaluate, linearise, max_iter=max_iter, xtol=xtol)
    return _Refined(run.up, run.state, run.cost, run.converged, run.n_iter)


def _solve(prob: _Problem, n_grid: int, n_starts: int, max_iter: int, xtol: float) -> _Refined:
    """Global grid search over the sphere, then local refinement of each start; the best."""
    starts = _starts(prob, n_grid, n_starts)  # at least one point: n_grid >= 1
    best = _refine(prob, starts[0], max_iter, xtol)
    for start in starts[1:]:
        refined = _refine(prob, start, max_iter, xtol)
        if refined.cost < best.cost:
            best = refined
    return best
