"""The maximum-likelihood search: variable projection over `up` and the gains.

For fixed `up` and gains the linear parameters (base parameters, joint parameters) solve a
weighted least-squares problem whose normal equations are assembled from the Gram blocks of
:mod:`._design`; the search over the sphere starts from a Fibonacci grid of that profiled cost and
refines by :func:`gravdir._sphere.refine_direction` over every parameter, the linear ones
re-projected after each step. The noise levels, when not given, are re-estimated from the
residuals between rounds (the maximum-likelihood fixed point of per-joint variances). After the
search, :func:`far_fit` holds the profiled cost on the grid against the curvature at the
estimate: a likelihood that reaches far beyond it means the information does not describe the
uncertainty of `up`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from gravdir._sphere import (
    Linearisation,
    fibonacci_directions,
    refine_direction,
    tangent_basis,
)
from gravdir.motion._design import (
    N_JOINT_COLUMNS,
    Layout,
    _Design,
    normal_equations,
    weighted_base_blocks,
)

# Eigenvalues of a unit-diagonal normal matrix below this fraction of the largest are a
# parameter the data do not determine (a base parameter the trajectory does not excite): it
# is dropped from the solve (pseudo-inverse) rather than amplifying rounding errors.
_RCOND = 1e-12
# Smallest estimated gain (their mean is 1): a gain running to zero on a log that does not
# identify it would let the base parameters grow without bound (as one over the gain).
_MIN_GAIN = 1e-6


@dataclass(frozen=True)
class _Blocks:
    """The normal-equation pieces for one set of gains and noise levels."""

    gk: NDArray[np.float64]  # (4, 4, p, p)
    gbt: NDArray[np.float64]  # (n, 4, p, 4)
    gtt: NDArray[np.float64]  # (n, 4, 4)
    cb: NDArray[np.float64]  # (4, p)
    ct: NDArray[np.float64]  # (n, 4)
    tt: float


def _blocks(design: _Design, gains: NDArray[np.float64], inv_var: NDArray[np.float64]) -> _Blocks:
    n, p = design.n, design.p
    g = design.gram
    gk = weighted_base_blocks(g, gains**2 * inv_var, p)
    gbt = (
        g[:, : 4 * p, 4 * p :].reshape(n, 4, p, N_JOINT_COLUMNS)
        * (gains * inv_var)[:, None, None, None]
    )
    gtt = g[:, 4 * p :, 4 * p :] * inv_var[:, None, None]
    cb = np.einsum("j,jai->ai", gains * inv_var, design.cross[:, : 4 * p].reshape(n, 4, p))
    ct = design.cross[:, 4 * p :] * inv_var[:, None]
    return _Blocks(gk, gbt, gtt, cb, ct, float(design.tt @ inv_var))


def solve_psd(h: NDArray[np.float64], r: NDArray[np.float64]) -> NDArray[np.float64]:
    """Minimum-norm solutions of ``h x = r`` for stacks of PSD `h` (..., P, P), `r` (..., P)."""
    diag = np.sqrt(np.maximum(np.diagonal(h, axis1=-2, axis2=-1), 0.0))
    scale = np.where(diag > 0, 1.0 / np.where(diag > 0, diag, 1.0), 0.0)
    hs = h * scale[..., :, None] * scale[..., None, :]
    vals, vecs = np.linalg.eigh(hs)
    top = np.max(vals, axis=-1, keepdims=True)
    keep = vals > _RCOND * np.maximum(top, 0.0)
    inv = np.where(keep, 1.0 / np.where(keep, vals, 1.0), 0.0)
    rs = (r * scale)[..., None]
    y = (vecs @ (inv[..., None] * (np.swapaxes(vecs, -1, -2) @ rs)))[..., 0]
    out: NDArray[np.float64] = y * scale
    return out


def profile(
    design: _Design, blocks: _Blocks, ups: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Profiled weighted cost (g,) and linear parameters (g, p + 4 t) at directions (g, 3),
    with t sets of joint parameters."""
    n, p, nt = design.n, design.p, design.n_theta
    s = np.concatenate([np.ones((ups.shape[0], 1)), design.gravity * ups], axis=1)
    size = p + N_JOINT_COLUMNS * nt
    h = np.zeros((ups.shape[0], size, size))
    ss = (s[:, :, None] * s[:, None, :]).reshape(-1, 16)
    h[:, :p, :p] = (ss @ blocks.gk.reshape(16, p * p)).reshape(-1, p, p)
    by_axis = np.moveaxis(blocks.gbt, 1, 0).reshape(4, n, p, N_JOINT_COLUMNS)
    flat = np.moveaxis(by_axis, 1, 2).reshape(4, p * n * N_JOINT_COLUMNS)
    hbt = (s @ flat).reshape(ups.shape[0], p, n, N_JOINT_COLUMNS)
    ct = blocks.ct
    gtt = blocks.gtt
    if design.groups is not None:
        # Pseudo-joints sharing joint parameters: their blocks are summed per set.
        onehot = (design.groups[:, None] == np.arange(nt)[None, :]).astype(float)
        hbt = np.einsum("gpjc,jt->gptc", hbt, onehot)
        ct = onehot.T @ ct
        gtt = np.einsum("jab,jt->tab", gtt, onehot)
    flat_bt = hbt.reshape(ups.shape[0], p, N_JOINT_COLUMNS * nt)
    h[:, :p, p:] = flat_bt
    h[:, p:, :p] = np.swapaxes(flat_bt, 1, 2)
    for j in range(nt):
        sl = slice(p + N_JOINT_COLUMNS * j, p + N_JOINT_COLUMNS * (j + 1))
        h[:, sl, sl] = gtt[j]
    r = np.concatenate(
        [s @ blocks.cb, np.broadcast_to(ct.ravel(), (ups.shape[0], N_JOINT_COLUMNS * nt))],
        axis=1,
    )
    x = solve_psd(h, r)
    cost = blocks.tt - np.einsum("gi,gi->g", r, x)
    return cost, x


@dataclass(frozen=True)
class State:
    """A point of the search with its linear parameters and diagnostics."""

    up: NDArray[np.float64]
    gains: NDArray[np.float64]
    beta: NDArray[np.float64]
    theta: NDArray[np.float64]  # (n, 5)
    cost: float  # weighted residual sum of squares
    rss: NDArray[np.float64]  # (n,) unweighted per joint
    info: NDArray[np.float64]  # full Gauss-Newton information at the point
    converged: bool
    n_iter: int


def _split(
    design: _Design, x: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Base parameters and the joint parameters of every (pseudo-)joint, (n, 4)."""
    p = design.p
    return x[:p], x[p:].reshape(design.n_theta, N_JOINT_COLUMNS)[design.theta_groups]


def refine(
    design: _Design,
    layout: Layout,
    gain_dirs: NDArray[np.float64],
    up: NDArray[np.float64],
    gains: NDArray[np.float64],
    inv_var: NDArray[np.float64],
    max_iter: int,
    xtol: float,
) -> State:
    """:func:`~gravdir._sphere.refine_direction` from (`up`, `gains`): damped Gauss-Newton steps
    of every parameter, the linear ones projected again at each trial."""
    Point = tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]

    def evaluate(
        trial_up: NDArray[np.float64], step: NDArray[np.float64], point: Point
    ) -> tuple[float, Point] | None:
        trial_gains = point[0] + gain_dirs @ step[layout.gain] if layout.n_gain else point[0]
        if layout.n_gain and not np.all(trial_gains > _MIN_GAIN):
            return None
        cost, x = profile(design, _blocks(design, trial_gains, inv_var), trial_up[None])
        return float(cost[0]), (trial_gains, *_split(design, x[0]))

    def linearise(
        u: NDArray[np.float64], basis: NDArray[np.float64], point: Point
    ) -> Linearisation:
        gains, beta, theta = point
        info, grad, _ = normal_equations(
            design, layout, u, basis, gains, gain_dirs, beta, theta, inv_var
        )
        return Linearisation(grad=grad, info=info)

    blocks = _blocks(design, gains, inv_var)
    cost, x = profile(design, blocks, up[None])
    run = refine_direction(
        up,
        float(cost[0]),
        (gains, *_split(design, x[0])),
        evaluate,
        linearise,
        max_iter=max_iter,
        xtol=xtol,
        n_free=2 + layout.n_gain,
        # Rounding level of the Gram-block cost (a difference of large sums): changes below it
        # are ties, so that the search can finish on noise-free data.
        cost_slack=1e-12 * blocks.tt,
    )
    up, (gains, beta, theta) = run.up, run.state
    info, _, rss = normal_equations(
        design, layout, up, tangent_basis(up), gains, gain_dirs, beta, theta, inv_var
    )
    rss = np.maximum(rss, 0.0)
    return State(up, gains, beta, theta, run.cost, rss, info, run.converged, run.n_iter)


def starts(
    design: _Design,
    gains: NDArray[np.float64],
    inv_var: NDArray[np.float64],
    n_grid: int,
    n_starts: int,
    min_separation: float,
) -> tuple[list[NDArray[np.float64]], NDArray[np.float64], NDArray[np.float64]]:
    """The lowest grid points of the profiled cost, at least `min_separation` rad apart.

    Also returns the grid and its costs (the opposite hemisphere's best is a start of its own
    for the sign check).
    """
    grid = fibonacci_directions(n_grid)
    blocks = _blocks(design, gains, inv_var)
    cost = np.concatenate(
        [profile(design, blocks, grid[i : i + 256])[0] for i in range(0, n_grid, 256)]
    )
    order = np.argsort(cost, kind="stable")
    out: list[NDArray[np.float64]] = []
    for k in order:
        u = grid[k]
        if all(float(u @ s) < np.cos(min_separation) for s in out):
            out.append(u)
        if len(out) == n_starts:
            break
    return out, grid, cost


# The likelihood's three-sigma level of a direction (two parameters): the chi-square quantile
# with two degrees of freedom at the coverage of three normal standard deviations, 0.9973.
_LEVEL = -2.0 * math.log(1.0 - 0.9973)
# A direction of the grid is "far" when the curvature at the estimate puts it beyond twice that
# level (4.2 standard deviations): the factor leaves room for the likelihood's departure from
# a quadratic between 3 and 4 standard deviations of a well-determined estimate.
_FAR = 2.0 * _LEVEL


def far_fit(
    design: _Design,
    best: State,
    inv_var: NDArray[np.float64],
    grid: NDArray[np.float64],
    basis: NDArray[np.float64],
    curvature: NDArray[np.float64],
) -> float:
    """The angle (rad) from the estimate of the farthest grid direction, on its hemisphere,
    that fits within the likelihood's three-sigma level but that the `curvature` (2, 2) of the
    profiled likelihood at the estimate puts beyond :data:`_FAR`; 0 when there is none.

    The cost of a grid direction is profiled over the linear parameters at the estimate's gains,
    an upper bound of its profile over every parameter, so a direction found here does fit: the
    likelihood reaches where its curvature says it does not, and the information does not
    describe the uncertainty of `up`.
    """
    side = grid[grid @ best.up > 0]
    if not side.size:
        return 0.0
    blocks = _blocks(design, best.gains, inv_var)
    cost = np.concatenate(
        [profile(design, blocks, side[i : i + 256])[0] for i in range(0, side.shape[0], 256)]
    )
    angle = np.arctan2(np.linalg.norm(np.cross(side, best.up), axis=1), side @ best.up)
    along = side @ basis.T
    size = np.linalg.norm(along, axis=1)
    delta = angle[:, None] * along / np.where(size > 0, size, 1.0)[:, None]
    with np.errstate(over="ignore", invalid="ignore"):  # an infinite curvature: far
        predicted = np.einsum("gi,ij,gj->g", delta, curvature, delta)
    predicted = np.where(np.isnan(predicted), np.inf, predicted)
    far = (cost - best.cost <= _LEVEL) & (predicted > _FAR)
    return float(angle[far].max()) if far.any() else 0.0
