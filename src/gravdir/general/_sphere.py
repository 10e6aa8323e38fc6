"""The search for `up` on the unit sphere: a Fibonacci grid, then tangent-plane steps.

The moments are eliminated for each `up` (variable projection), so the search is over the two
tangent parameters of `up` only: a global grid gives the starts, damped Gauss-Newton steps in the
tangent plane followed by normalisation (a retraction) refine each.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from gravdir._sphere import fibonacci_directions, retract, tangent_basis
from gravdir.general._bilinear import (
    _jacobian,
    _Problem,
    _project,
    _projected_cost,
    _reduced_normal,
    _residuals,
)

# Starts closer than this (modulo sign: the cost of up and -up is the same) are one start.
_MIN_START_SEPARATION = np.radians(15.0)

# Grid points whose projected cost is evaluated at once.
_GRID_BLOCK = 1024

# Levenberg-Marquardt damping of the tangent-plane steps, relative to the mean eigenvalue of the
# reduced information: small enough that steps near the solution are Gauss-Newton steps
# (quadratic convergence on noise-free data), large enough to keep a step from a poor start on
# the sphere. It grows tenfold after a step that raises the cost and shrinks tenfold after one
# that lowers it.
_DAMPING_START = 1e-3
_DAMPING_MIN = 1e-12
_DAMPING_MAX = 1e12


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
    """Damped Gauss-Newton steps of `up` in its tangent plane, the moments projected out.

    Each iteration solves every group's moment for the current `up`, forms the reduced normal
    equations of the two tangent parameters (the Schur complement of the moment block: the
    variable-projection Jacobian), takes the damped step, retracts it to the sphere
    and keeps it if the projected cost does not rise. Converged when a proposed step is at most
    `xtol` rad.
    """
    cost, x = _project(prob, up)
    damping = _DAMPING_START
    for it in range(1, max_iter + 1):
        basis = tangent_basis(up)
        jac = _jacobian(prob, up, basis, x)
        info, grad, _ = _reduced_normal(jac, _residuals(prob, up, x).ravel())
        scale = 0.5 * float(np.trace(info))
        if not scale > 0.0:  # no information at this point: nothing to step along
            return _Refined(up, x, cost, False, it)
        step = np.asarray(np.linalg.solve(info + damping * scale * np.eye(2), grad), np.float64)
        if float(np.linalg.norm(step)) <= xtol:
            return _Refined(up, x, cost, True, it)
        trial = retract(up, basis, step)
        trial_cost, trial_x = _project(prob, trial)
        if trial_cost <= cost:
            up, cost, x = trial, trial_cost, trial_x
            damping = max(damping / 10.0, _DAMPING_MIN)
        else:
            damping = min(damping * 10.0, _DAMPING_MAX)
    return _Refined(up, x, cost, False, max_iter)


def _solve(prob: _Problem, n_grid: int, n_starts: int, max_iter: int, xtol: float) -> _Refined:
    """Global grid search over the sphere, then local refinement of each start; the best."""
    starts = _starts(prob, n_grid, n_starts)  # at least one point: n_grid >= 1
    best = _refine(prob, starts[0], max_iter, xtol)
    for start in starts[1:]:
        refined = _refine(prob, start, max_iter, xtol)
        if refined.cost < best.cost:
            best = refined
    return best
