"""The high-breakdown joint fit of tool tip and plane: a linearised trimmed start, then refits.

Every set is solved from each of the search's starting normals: Gauss-Newton on all contacts,
the trimmed core of the model linearised there (:func:`~gravdir.touch._robust.linear_core`,
exact fits of all 6-row subsets or of the fixed sample), then trimmed Gauss-Newton with C-steps
(refit on the ``h`` contacts of smallest residual until that set repeats). The best start per
set by the trimmed objective (or, with a known noise level, by the count within the threshold)
goes to the final test of :func:`~gravdir.touch._robust.refit_until_stable`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from gravdir.touch._common import ZERO_RESIDUAL
from gravdir.touch._gauss_newton import jacobian, refine_sets
from gravdir.touch._robust import (
    C_STEP_CAP,
    TestReport,
    best_candidate,
    coverage,
    linear_core,
    normal_threshold,
    refit_until_stable,
    row_leverage,
    smallest,
)

N_PARAMS = 6  # tool tip (3), normal (2), offset (1)


class Solution(NamedTuple):
    """Tool tip, normal and offset (B, ...) with the last refinement's convergence."""

    tool_tip: NDArray[np.float64]
    normal: NDArray[np.float64]
    offset: NDArray[np.float64]
    converged: NDArray[np.bool_]
    n_iter: NDArray[np.int64]


def _take(sol: Solution, idx: NDArray[np.int64]) -> Solution:
    """The sets `idx` of `sol`."""
    return Solution(
        sol.tool_tip[idx], sol.normal[idx], sol.offset[idx], sol.converged[idx], sol.n_iter[idx]
    )


def _put(sol: Solution, idx: NDArray[np.int64], part: Solution) -> Solution:
    """`sol` with the sets `idx` replaced by `part`."""
    t, n, d = sol.tool_tip.copy(), sol.normal.copy(), sol.offset.copy()
    conv, n_iter = sol.converged.copy(), sol.n_iter.copy()
    t[idx], n[idx], d[idx], conv[idx], n_iter[idx] = part
    return Solution(t, n, d, conv, n_iter)


def _residuals(
    rot: NDArray[np.float64], pos: NDArray[np.float64], sol: Solution
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Residuals (B, N) of every contact and the contacts (B, N, 3)."""
    c = np.einsum("bnij,bj->bni", rot, sol.tool_tip) + pos
    return np.einsum("bni,bi->bn", c, sol.normal) - sol.offset[:, None], c


def _fit(
    rot: NDArray[np.float64],
    pos: NDArray[np.float64],
    sol: Solution,
    w: NDArray[np.bool_],
    max_iter: int,
) -> Solution:
    """The refinement on the contacts `w` (B, N) from the normal of `sol`."""
    t, n, d, _, conv, n_iter = refine_sets(rot, pos, sol.normal, max_iter, w.astype(np.float64))
    return Solution(t, n, d, conv, n_iter)


def _trimmed(
    rot: NDArray[np.float64],
    pos: NDArray[np.float64],
    sol: Solution,
    threshold: NDArray[np.float64] | None,
    max_iter: int,
) -> tuple[Solution, NDArray[np.bool_], NDArray[np.float64]]:
    """The trimmed fit from `sol`: linearised core, then C-steps of Gauss-Newton.

    Returns the solution, its core (B, N) and every contact's residual (B, N).
    """
    h = coverage(rot.shape[1], N_PARAMS)
    r, c = _residuals(rot, pos, sol)
    jac, _ = jacobian(rot, sol.normal, c)
    core = linear_core(jac, r, threshold)
    for _ in range(C_STEP_CAP):
        sol = _fit(rot, pos, sol, core, max_iter)
        r, _ = _residuals(rot, pos, sol)
        new = smallest(r, h)
        if np.array_equal(new, core):
            break
        core = new
    return sol, core, r


def robust_tool_fit(
    rot: NDArray[np.float64],
    pos: NDArray[np.float64],
    starts: NDArray[np.float64],
    sigma: NDArray[np.float64] | None,
    significance: float,
    max_iter: int,
) -> tuple[Solution, TestReport]:
    """The high-breakdown fit of every set: rotations (B, N, 3, 3), centred positions (B, N, 3).

    `starts` (B, k, 3) are the search's normals, `sigma` (B,) the known noise in the units of
    `pos` or None. Returns the final solution and the test's report.
    """
    n_batch, k = starts.shape[:2]
    n_pts = rot.shape[1]
    rot_k = np.repeat(rot, k, axis=0)
    pos_k = np.repeat(pos, k, axis=0)
    floor = ZERO_RESIDUAL * np.max(np.ptp(pos, axis=1), axis=1)
    thr = None
    if sigma is not None:
        thr = np.maximum(sigma, floor) * normal_threshold(significance)
    t, n, d, _, conv, n_iter = refine_sets(rot_k, pos_k, starts.reshape(-1, 3), max_iter)
    sol, core, r = _trimmed(
        rot_k,
        pos_k,
        Solution(t, n, d, conv, n_iter),
        None if thr is None else np.repeat(thr, k),
        max_iter,
    )
    best = best_candidate(r.reshape(n_batch, k, n_pts), coverage(n_pts, N_PARAMS), thr)
    pick = best + k * np.arange(n_batch)
    state = {"sol": _take(sol, pick)}
    core = core[pick]
    fitted = np.zeros_like(core)  # the contacts each set's solution was last fitted to

    def refit(w: NDArray[np.bool_]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        # Only the sets whose contacts changed are refitted; the others keep their solution.
        changed = np.flatnonzero(np.any(w != fitted, axis=1))
        if changed.size:
            part = _fit(
                rot[changed], pos[changed], _take(state["sol"], changed), w[changed], max_iter
            )
            state["sol"] = _put(state["sol"], changed, part)
            fitted[changed] = w[changed]
        r, c = _residuals(rot, pos, state["sol"])
        jac, _ = jacobian(rot, state["sol"].normal, c)
        return r, row_leverage(jac, w)

    report = refit_until_stable(refit, core, N_PARAMS, sigma, floor, significance, None)
    return state["sol"], report
