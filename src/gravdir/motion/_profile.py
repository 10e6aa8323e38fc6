"""The profiled likelihood of :func:`gravdir.estimate_up_from_motion` and its curvature.

With the inertial and joint parameters solved out of the per-joint Gram blocks (variable
projection, :mod:`gravdir.motion._solve`), the log-likelihood is a function of `up` and the free
gains. :func:`maximise_likelihood` finds its maximum: the lowest points of a grid of directions
refined by Gauss--Newton, the noise levels re-weighted to their maximum-likelihood values, and
the best fit on the other hemisphere for the sign margin. :func:`uncertainty` turns the
curvature at the maximum into the information of `up` and the gains' standard deviations, and
says how far the likelihood reaches beyond it.
"""

from __future__ import annotations

import dataclasses
import math
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from gravdir._sphere import tangent_basis
from gravdir.errors import DegenerateGeometryError
from gravdir.motion._design import (
    Layout,
    _Design,
    covariance,
    gains_std,
    information,
    tangent_curvature,
)
from gravdir.motion._solve import State, far_fit, refine, starts

# Noise levels are floored at this fraction of each joint's RMS torque: on noise-free data the
# residuals are rounding errors, and weights from them would be arbitrary.
NOISE_FLOOR = 1e-9
# Tangent information below this fraction of what it would be with every other parameter known
# means the log does not determine that direction.
_MIN_INFORMATION_RATIO = 1e-12
# Rounds of re-weighting the noise levels, at most.
_MAX_ROUNDS = 30
# Iterations spent on the other hemisphere's fit: enough for its cost, which only sets the margin.
_OTHER_ITER = 200


@dataclasses.dataclass(frozen=True)
class _Search:
    """How hard the search looks: grid points, starts refined, iterations, step tolerance."""

    n_grid: int
    n_starts: int
    max_iter: int
    xtol: float


class Optimum(NamedTuple):
    """The maximum of the profiled likelihood."""

    best: State
    sigma: NDArray[np.float64]  # noise levels, given or estimated
    margin: float  # the sign margin, standard deviations (inf without a rival)
    grid: NDArray[np.float64]  # the grid of starting directions


class Uncertainty(NamedTuple):
    """What the curvature at the optimum says, and how far the likelihood reaches beyond it."""

    tangent_information: NDArray[np.float64]  # (2, 2)
    gains_std: NDArray[np.float64]  # (n,), in units of the mean gain
    reach: float  # angle of the farthest direction that fits as well, rad (0: determined)
    basis: NDArray[np.float64]  # (2, 3) tangent basis at `up`


def _inv_var(sigma: NDArray[np.float64]) -> NDArray[np.float64]:
    return 1.0 / sigma**2


def maximise_likelihood(
    design: _Design,
    layout: Layout,
    dirs: NDArray[np.float64],
    k0: NDArray[np.float64],
    sigma: NDArray[np.float64],
    floor: NDArray[np.float64] | None,
    settings: _Search,
    n_params: int,
) -> Optimum:
    """The maximum-likelihood `up` and gains from the gains `k0` and the noise levels `sigma`.

    With `floor` (noise levels estimated), the levels are re-weighted to the RMS residuals at
    the estimate, each at least its `floor`; without it they stay as given.
    """
    grid, n_start, iters, tol = settings.n_grid, settings.n_starts, settings.max_iter, settings.xtol
    n = design.n
    first, grid_pts, grid_cost = starts(design, k0, _inv_var(sigma), grid, n_start, np.radians(15))
    # The other hemisphere's best grid point is always refined: it gives the sign margin.
    other = grid_cost.copy()
    other[grid_pts @ first[0] > 0] = np.inf
    states = [refine(design, layout, dirs, u, k0, _inv_var(sigma), iters, tol) for u in first]
    if np.isfinite(other).any():
        u = grid_pts[int(np.argmin(other))]
        other_iter = min(iters, _OTHER_ITER)
        # Often that point is a start already refined with as many iterations: the same run.
        if other_iter < iters or not any(np.array_equal(u, f) for f in first):
            states.append(refine(design, layout, dirs, u, k0, _inv_var(sigma), other_iter, tol))
    best = min(states, key=lambda s: s.cost)
    if floor is not None:
        # Maximum likelihood with a noise level per joint: the levels are the RMS residuals at
        # the estimate (the fixed point of the profiled likelihood), re-weighted until stable.
        dof = n_params / n
        for _ in range(_MAX_ROUNDS):
            new = np.maximum(np.sqrt(best.rss / np.maximum(design.count - dof, 1.0)), floor)
            change = float(np.max(np.abs(new / sigma - 1.0)))
            sigma = new
            best = refine(design, layout, dirs, best.up, best.gains, _inv_var(sigma), iters, tol)
            if change < 1e-2 or np.all(sigma <= floor):
                break
    inv_var = _inv_var(sigma)
    # The best fit with `up` on the other hemisphere, at the final noise levels: the sign margin.
    others = [
        refine(design, layout, dirs, s.up, s.gains, inv_var, min(iters, _OTHER_ITER), tol)
        for s in states
        if float(s.up @ best.up) < 0
    ]
    better = [s for s in others if s.cost < best.cost]
    if better:  # a start of the other hemisphere found a better fit after re-weighting
        best = min(better, key=lambda s: s.cost)
    opposite = [s for s in others if float(s.up @ best.up) < 0]
    rival = min(opposite, key=lambda s: s.cost) if opposite else None
    margin = math.inf if rival is None else math.sqrt(max(rival.cost - best.cost, 0.0))
    return Optimum(best, sigma, margin, grid_pts)


def uncertainty(
    design: _Design, layout: Layout, dirs: NDArray[np.float64], optimum: Optimum
) -> Uncertainty:
    """The information of `up` (tangent plane) and the gains' standard deviations at `optimum`,
    from the curvature, and the reach of the likelihood beyond it (which voids both).

    Raises
    ------
    DegenerateGeometryError
        If a tangent direction of `up` carries no information and no far direction fits.
    """
    best, inv_var = optimum.best, _inv_var(optimum.sigma)
    cov = covariance(best.info)
    info2 = cov.tangent_information()
    vals = np.linalg.eigvalsh(info2)
    basis = tangent_basis(best.up)
    # A likelihood that reaches far beyond the curvature's ellipse is said so (warning, zero
    # information); otherwise a tangent direction without information is a degenerate log.
    reach = far_fit(design, best, inv_var, optimum.grid, basis, tangent_curvature(best.info))
    # Compared with the information `up` would have with every other parameter known.
    known = float(np.trace(best.info[:2, :2]))
    if reach == 0 and (not vals.max() > 0 or vals.min() <= _MIN_INFORMATION_RATIO * known):
        raise DegenerateGeometryError(
            "Expected `q` and `velocity` to make a log that determines the direction of gravity, "
            "got one along which a tangent direction of `up` carries no information: move more "
            "joints (joint 1 and a joint not parallel to it) through a range of positions."
        )
    if design.gram_sq is not None:
        # Weights between 0 and 1 are not inverse variances: the covariance of the weighted
        # estimate is the sandwich P M P, with M the information formed with squared weights.
        meat = information(
            design, design.gram_sq, layout, best.up, basis, best.gains, dirs, best.beta, inv_var
        )
        cov = cov.sandwich(meat)
        info2 = cov.tangent_information()
    return Uncertainty(info2, gains_std(cov, layout, dirs), reach, basis)
