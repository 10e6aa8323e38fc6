"""Tool tip, `up` and plane offset estimated together from contacts with varied orientations."""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import NanPolicy, check_bool, check_direction, check_positive, check_vectors
from gravdir._results import UpResult, data_fingerprint, warn_not_converged
from gravdir._sphere import fibonacci_directions, up_information_from_tangent
from gravdir.errors import DegenerateGeometryError, GravdirWarning, InsufficientDataError
from gravdir.touch._common import (
    MAX_ITER_CAP,
    N_DIRECTIONS_CAP,
    N_STARTS_CAP,
    SEARCH_MAX_ITER_CAP,
    ZERO_RESIDUAL,
    batch_repr,
    check_contacts,
    check_limit,
    check_noise_fit,
    check_noise_std,
    check_pose_stack,
    check_robust_size,
    check_significance,
    check_vector_batch,
    drop_negligible,
    fmt,
    in_units,
    inverse_variance,
    noise_floor,
    noise_in_units,
    omit_nan_contacts,
    omitted_text,
    orient,
    scatter,
    set_scale,
    to_units,
    warn_no_information,
    warn_noise_not_estimable,
    warn_sign_margin,
)
from gravdir.touch._gauss_newton import best_run, jacobian, refine, search_starts, stack
from gravdir.touch._plane import SignRule
from gravdir.touch._robust import (
    REFIT_CAP,
    breakdown,
    rejected_indices,
    row_leverage,
    studentize,
)
from gravdir.touch._tool_robust import N_PARAMS, robust_tool_fit


@dataclass(frozen=True, eq=False, repr=False)
class ToolPlaneFit(UpResult):
    """Tool tip, plane normal and plane offset estimated together.

    Attributes
    ----------
    up : ndarray, shape (..., 3)
        Unit normal of the plane in the base frame.
    up_information : ndarray, shape (..., 3, 3)
        Fisher information of `up`, 1/rad² (rank 2, perpendicular to `up`), with the tool tip
        and the offset as nuisance parameters. Zero for six contacts without a caller's
        `noise_std`, where the noise is not estimable (`up_std_deg` is then infinite).
    offset : ndarray, shape (...)
        ``d`` in ``up . c = d``.
    tool_tip : ndarray, shape (..., 3)
        Tool-tip offset in the flange frame.
    tool_tip_std : ndarray, shape (..., 3)
        Standard deviation of each component of `tool_tip`.
    tool_tip_cov : ndarray, shape (..., 3, 3)
        Covariance of `tool_tip` (infinite where `noise_std` is).
    offset_std : ndarray, shape (...)
        Standard deviation of `offset`.
    residuals : ndarray, shape (..., N)
        ``up . (R_i t + p_i) - d`` of every contact (rejected ones included).
    residual_rms : ndarray, shape (...)
        RMS of the inliers' residuals.
    noise_std : ndarray, shape (...)
        ``sigma`` used for the covariances: the caller's, or ``sqrt(sum r^2 / (n - 6))`` over the
        n inliers, either at least the coordinates' round-off; ``inf`` for six inliers without a
        caller's value. Where the inliers' residuals reject the caller's value (see `noise_std`
        of :func:`tool_tip_and_up_from_touches`), that estimate instead, with a warning.
    inliers : ndarray of bool, shape (..., N)
        Contacts used in the fit (all, unless the robust fit rejected some).
    rejection_nsigma : ndarray, shape (..., N)
        Each contact's studentised residual against the final fit, in standard deviations of
        that residual (as in :class:`~gravdir.touch.PlaneFit`, with the leverage
        ``J_i (J^T J)^-1 J_i^T`` of the joint fit's Jacobian).
    rejection_threshold : ndarray, shape (..., N)
        The critical value each contact's `rejection_nsigma` was tested against; a contact of
        the robust fit is rejected when it exceeds it. Without `robust` nothing is rejected and
        it is the value the test would use (inf where no degree of freedom is left).
    approach_axis : ndarray, shape (..., 3)
        Mean direction from the flange toward the plane, in the flange frame
        (``normalize(-sum R_i^T up)``).
    weak_axis : ndarray, shape (..., 3)
        Flange-frame direction in which `tool_tip` is least determined (largest eigenvector of
        `tool_tip_cov`, signed along `approach_axis`). It lies close to `approach_axis`.
    weak_axis_std : ndarray, shape (...)
        Standard deviation of `tool_tip` along `weak_axis`.
    noise_gain : ndarray, shape (...)
        ``weak_axis_std / noise_std``: how many times the contact noise the tool tip is uncertain
        in its weakest direction.
    orientation_spread : ndarray, shape (...)
        RMS angle, in radians, of the plane normal seen from the flange (``R_i^T up``) about its
        mean: the orientation variety that identifies the tool tip (`orientation_spread_deg`
        in degrees).
    sign_rule : {"flange side", "side of `up_hint`"}
        What decided the sign of `up`.
    converged : ndarray of bool, shape (...)
        Whether the refinement of `up` converged within `max_iter` iterations, by the stopping
        rule every direction estimator shares (docs/general.md, "The refinement on the sphere";
        with `robust`: the last refit, on the inliers).
    n_iter : ndarray of int, shape (...)
        Iterations (trial steps) of the refinement that gave the result.
    test_converged : ndarray of bool, shape (...)
        Whether the robust fit's refits ended on a set of inliers that its test reproduced
        (always True without `robust`).
    n_omitted : int
        Contacts dropped because their pose held a NaN (``nan_policy="omit"``; 0 otherwise).
        `residuals` then index the contacts kept, in their input order.
    up_cov, up_std_deg
        Covariance of `up` (..., 3, 3), rad², and ``sqrt(trace(up_cov))`` in degrees
        (properties, see :class:`~gravdir._results.UpResult`).
    """

    _units = {
        "offset": "m", "tool_tip": "m", "tool_tip_std": "m", "tool_tip_cov": "m²",
        "offset_std": "m", "residuals": "m", "residual_rms": "m", "noise_std": "m",
        "approach_axis": "", "weak_axis": "", "weak_axis_std": "m", "noise_gain": "",
        "orientation_spread": "rad",
        "rejection_nsigma": "", "rejection_threshold": "", "n_iter": "",
    }

    up: NDArray[np.float64]
    up_information: NDArray[np.float64]
    offset: NDArray[np.float64]
    tool_tip: NDArray[np.float64]
    tool_tip_std: NDArray[np.float64]
    tool_tip_cov: NDArray[np.float64]
    offset_std: NDArray[np.float64]
    residuals: NDArray[np.float64]
    residual_rms: NDArray[np.float64]
    noise_std: NDArray[np.float64]
    approach_axis: NDArray[np.float64]
    weak_axis: NDArray[np.float64]
    weak_axis_std: NDArray[np.float64]
    noise_gain: NDArray[np.float64]
    orientation_spread: NDArray[np.float64]
    sign_rule: SignRule
    inliers: NDArray[np.bool_]
    rejection_nsigma: NDArray[np.float64]
    rejection_threshold: NDArray[np.float64]
    converged: NDArray[np.bool_]
    n_iter: NDArray[np.int64]
    test_converged: NDArray[np.bool_]
    n_omitted: int = 0

    @property
    def outliers(self) -> NDArray[np.bool_]:
        """Contacts rejected by the robust fit, shape (..., N)."""
        return ~self.inliers

    @property
    def rejected(self) -> NDArray[np.int64]:
        """Indices of the rejected contacts: (K,) for one set, (K, ndim) rows for a batch."""
        return rejected_indices(self.inliers)

    @property
    def orientation_spread_deg(self) -> NDArray[np.float64]:
        """`orientation_spread` in degrees, shape (...)."""
        return np.asarray(np.degrees(self.orientation_spread), dtype=np.float64)

    def __repr__(self) -> str:
        extra = (
            f"up_std_deg={fmt(self.up_std_deg)} deg, tool_tip={fmt(self.tool_tip)}, "
            f"tool_tip_std={fmt(self.tool_tip_std)}, weak_axis={fmt(self.weak_axis)}, "
            f"weak_axis_std={fmt(self.weak_axis_std)}, residual_rms={fmt(self.residual_rms)}, "
            f"orientation_spread_deg={fmt(self.orientation_spread_deg)} deg, "
            f"converged={fmt(self.converged)}"
            + (f", n_omitted={self.n_omitted}" if self.n_omitted else "")
        )
        return batch_repr("ToolPlaneFit", self.up, extra)


class _Refined(NamedTuple):
    """The best refinement per set of contacts."""

    tool_tip: NDArray[np.float64]  # (B, 3)
    normal: NDArray[np.float64]  # (B, 3)
    offset: NDArray[np.float64]  # (B,), for the centred flange positions
    converged: NDArray[np.bool_]  # (B,)
    n_iter: NDArray[np.int64]  # (B,)


class _Covariance(NamedTuple):
    """Covariances per unit noise variance at the solution, from ``(J^T J)^{-1}``."""

    unit_cov: NDArray[np.float64]  # (B, 6, 6): tool tip, two tangent angles of n, offset
    basis: NDArray[np.float64]  # (B, 3, 2): the tangent basis of those angles
    tip_eigenvalues: NDArray[np.float64]  # (B, 3), ascending, of the tool tip's block
    tip_eigenvectors: NDArray[np.float64]  # (B, 3, 3), columns
    noise_gain: NDArray[np.float64]  # (B,): sqrt of the largest, inf where J is rank deficient


def _starts(
    rot: NDArray[np.float64],
    pos: NDArray[np.float64],
    guess_normal: NDArray[np.float64] | None,
    n_directions: int,
    n_starts: int,
    search_max_iter: int,
) -> NDArray[np.float64]:
    """Starting normals (B, k, 3) for the refinement.

    At most `search_max_iter` iterations of the refinement from the grid directions of lowest
    projected cost, the lowest `n_starts` results, plus the normal of the plane through the
    contacts of the caller's tool tip.
    """
    dirs = fibonacci_directions(n_directions, hemisphere=True)
    starts = search_starts(dirs, rot, pos, min(n_starts, len(dirs)), search_max_iter)
    if guess_normal is not None:
        starts = np.concatenate([starts, guess_normal[:, None, :]], axis=1)
    return starts


def _guess_normal(
    rot: NDArray[np.float64], raw: NDArray[np.float64], guess: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Normal (B, 3) of the plane through the contacts ``R_i g + p_i`` of a tool-tip guess."""
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        pts = np.einsum("bnij,bj->bni", rot, guess) + raw
    check_contacts(pts, "`flange_poses` and `tool_tip_guess`")
    unit = in_units(pts, set_scale(pts)[:, None, None])
    _, _, vec = scatter(unit, np.ones(unit.shape[:-1]), "`tool_tip_guess`")
    return np.asarray(vec[:, :, 0], dtype=np.float64)


def _refine(
    rot: NDArray[np.float64], pos: NDArray[np.float64], starts: NDArray[np.float64], max_iter: int
) -> _Refined:
    """The refinement from every start; the best run of each set (lowest cost)."""
    runs = [
        best_run([refine(rot[b], pos[b], start, max_iter) for start in starts[b]])
        for b in range(len(pos))
    ]
    t, n, d, _, converged, n_iter = stack(runs)
    return _Refined(t, n, d, converged, n_iter)


def _unit_covariance(
    rot: NDArray[np.float64],
    n: NDArray[np.float64],
    c: NDArray[np.float64],
    inliers: NDArray[np.bool_],
) -> _Covariance:
    """``(J^T J)^{-1}`` over the inliers' rows, by an eigendecomposition of the scaled matrix."""
    jac, basis = jacobian(rot, n, c)
    jac = jac * inliers[..., None]
    h = np.einsum("bni,bnj->bij", jac, jac)
    col = np.sqrt(np.einsum("bii->bi", h))
    # A column 1e-100 times smaller than the largest (or zero) is rank deficiency.
    null = col <= 1e-100 * np.max(col, axis=1, keepdims=True)
    col = np.where(null, 1.0, col)
    hs = h / (col[:, :, None] * col[:, None, :])
    try:
        lam, vec = np.linalg.eigh(hs)
    except np.linalg.LinAlgError as exc:  # not expected for finite data of order one
        raise DegenerateGeometryError(
            f"Expected `flange_poses` to give a Jacobian with an eigendecomposition, got {exc}."
        ) from None
    # Relative eigenvalues below 1e-12 are rank deficiency, not information.
    singular = (lam[:, 0] <= 1e-12 * lam[:, -1]) | np.any(null, axis=1)
    inv_s = np.einsum("bik,bk,bjk->bij", vec, 1.0 / np.maximum(lam, 1e-300), vec)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        unit_cov = inv_s / (col[:, :, None] * col[:, None, :])
    singular |= ~np.all(np.isfinite(unit_cov), axis=(1, 2))
    # A singular set is refused by the noise-gain check; its covariance is never used.
    unit_cov = np.where(singular[:, None, None], 0.0, unit_cov)
    wt, vt = np.linalg.eigh(unit_cov[:, :3, :3])
    gain = np.where(singular, np.inf, np.sqrt(np.maximum(wt[:, -1], 0.0)))
    return _Covariance(unit_cov, basis, wt, vt, gain)


def _normal_from_flange(
    rot: NDArray[np.float64], n: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Mean of ``m_i = R_i^T n`` (B, 3), normalised, and the RMS angle about it (B,), radians."""
    m = np.einsum("bnkj,bk->bnj", rot, n)
    m_mean = m.mean(axis=1)
    size = np.linalg.norm(m_mean, axis=1, keepdims=True)
    # Normals seen from opposite sides cancel; the first contact's then stands for the mean.
    m_mean = np.where(size > 1e-12, m_mean / np.where(size > 0, size, 1.0), m[:, 0])
    ang = np.arctan2(
        np.linalg.norm(np.cross(m, m_mean[:, None]), axis=-1), np.einsum("bni,bi->bn", m, m_mean)
    )
    return m_mean, np.sqrt(np.mean(ang**2, axis=1))


def _check_noise_gain(
    gain: NDArray[np.float64],
    spread: NDArray[np.float64],
    max_noise_gain: float,
    batch: tuple[int, ...],
) -> None:
    """Refuse sets whose orientations do not separate the tool tip from the plane offset."""
    if not np.any(gain > max_noise_gain):
        return
    worst = int(np.argmax(gain))
    at = f" (batch index {tuple(int(i) for i in np.unravel_index(worst, batch))})" if batch else ""
    raise DegenerateGeometryError(
        f"Expected `flange_poses` with orientations varied enough to separate the tool tip "
        f"from the plane offset (noise gain <= {max_noise_gain:g}), got noise gain "
        f"{float(gain[worst]):.3g} with {float(np.degrees(spread[worst])):.3g} deg RMS spread "
        f"of the plane normal seen from the flange{at}. Use `up_from_touches` with the nominal "
        f"tool tip, or touch with more varied orientations."
    )


def _sign_of_up(
    rot: NDArray[np.float64],
    t: NDArray[np.float64],
    n: NDArray[np.float64],
    hint: NDArray[np.float64] | None,
    batch: tuple[int, ...],
) -> tuple[NDArray[np.float64], NDArray[np.float64], str, SignRule]:
    """Sign (B,) that puts `up` on the flanges' side, or on the side of `up_hint`.

    Also returns the unit vector (B, 3) that decided it and its description for messages.
    """
    if hint is not None:
        h = np.broadcast_to(hint, (*batch, 3)).reshape(-1, 3)
        return orient(n, h, "`up_hint`"), h, "`up_hint`", "side of `up_hint`"
    # -sum R_i t in units where the flange positions are of order one.
    side = -np.einsum("bnij,bj->bi", rot, t)
    size = np.linalg.norm(side, axis=1)
    side_dot = np.einsum("bi,bi->b", side, n)
    if np.any(np.abs(side_dot) <= 1e-12 * rot.shape[1]):
        raise DegenerateGeometryError(
            "Expected the flanges off the plane to choose the sign of `up`, got a tool tip "
            "in the plane; pass `up_hint`."
        )
    h = side / size[:, None]
    what = "the flanges' side (`flange_poses` and the fitted tool tip)"
    return np.where(side_dot < 0, -1.0, 1.0), h, what, "flange side"


def _noise_level(
    r: NDArray[np.float64],
    inliers: NDArray[np.bool_],
    noise_std: float | None,
    scale: NDArray[np.float64],
    floor: NDArray[np.float64],
) -> NDArray[np.float64]:
    """The noise in units of `scale`: the caller's `noise_std`, or ``sqrt(sum r^2 / (n - 6))``.

    Over the n inliers; at least `floor` (the coordinates' round-off); inf for six inliers
    without a caller's value.
    """
    if noise_std is not None:
        return noise_in_units(noise_std, scale, floor)
    dof = np.sum(inliers, axis=1) - N_PARAMS
    with np.errstate(under="ignore"):
        estimate = np.sqrt(np.sum(np.where(inliers, r**2, 0.0), axis=1) / np.maximum(dof, 1))
    return np.asarray(np.where(dof > 0, np.maximum(estimate, floor), np.inf), dtype=np.float64)


def _check_noise_fit(
    r: NDArray[np.float64],
    inliers: NDArray[np.bool_],
    sigma: NDArray[np.float64],
    significance: float,
    robust: bool,
    batch: tuple[int, ...],
) -> NDArray[np.float64]:
    """The caller's noise (B,), or the residuals' own scale where they reject it, with a warning.

    See :func:`~gravdir.touch._common.check_noise_fit`; residuals `r` (B, N) in its units.
    """
    n_pts = r.shape[1]
    most = breakdown(n_pts, N_PARAMS)
    cause = (
        f"more bad contacts than the fit can reject (at most {most} of {n_pts})"
        if robust
        else f"bad contacts (`robust=True` rejects up to floor((N - 6) / 2) = {most} of them)"
    )
    with np.errstate(under="ignore"):
        ss = np.sum(np.where(inliers, r**2, 0.0), axis=1)
    dof = np.sum(inliers, axis=1) - N_PARAMS
    out, _ = check_noise_fit(
        ss.reshape(batch), dof.reshape(batch), sigma.reshape(batch), significance, cause, 4
    )
    return np.asarray(out, dtype=np.float64).reshape(-1)


def _up_information(
    up: NDArray[np.float64], cov: _Covariance, sigma: NDArray[np.float64]
) -> NDArray[np.float64]:
    """``B C^-1 B^T / sigma^2``, C the unit covariance of the tangent angles; 0 if sigma = inf."""
    block = cov.unit_cov[:, 3:5, 3:5]
    try:
        c_inv = np.linalg.inv(0.5 * (block + np.swapaxes(block, 1, 2)))
    except np.linalg.LinAlgError:  # excluded by the noise-gain check; no information then
        c_inv = np.zeros_like(block)
    with np.errstate(under="ignore"):
        info2 = c_inv * inverse_variance(sigma)[:, None, None]
        rows = np.swapaxes(cov.basis, 1, 2)
        return drop_negligible(up_information_from_tangent(up, rows, info2))


def _studentized(
    rot: NDArray[np.float64],
    best: _Refined,
    c: NDArray[np.float64],
    noise: float | None,
    scale: NDArray[np.float64],
    floor: NDArray[np.float64],
    significance: float,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Studentised residuals (B, N) of the fit of all contacts and the test's thresholds."""
    r = np.einsum("bni,bi->bn", c, best.normal) - best.offset[:, None]
    jac, _ = jacobian(rot, best.normal, c)
    every = np.ones(r.shape, dtype=bool)
    lev = row_leverage(jac, every)
    known = None if noise is None else noise_in_units(noise, scale, floor)
    spread = ZERO_RESIDUAL * np.max(np.ptp(c, axis=1), axis=1)
    return studentize(r, lev, every, N_PARAMS, known, spread, significance)


def _sign_variance(
    cov: _Covariance, sigma: NDArray[np.float64], direction: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Variance of ``n . h`` for unit directions `h` (B, 3), from the tangent-angle covariance."""
    b = np.einsum("bik,bi->bk", cov.basis, direction)
    unit = np.einsum("bk,bkl,bl->b", b, cov.unit_cov[:, 3:5, 3:5], b)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        return np.asarray(np.where(np.isfinite(sigma), sigma**2 * unit, np.inf))


def tool_tip_and_up_from_touches(
    flange_poses: ArrayLike,
    *,
    up_hint: ArrayLike | None = None,
    noise_std: float | None = None,
    tool_tip_guess: ArrayLike | None = None,
    max_noise_gain: float = 300.0,
    max_iter: int = 50,
    n_directions: int = 600,
    search_max_iter: int = 3,
    n_starts: int = 4,
    robust: bool = False,
    significance: float = 0.01,
    nan_policy: NanPolicy = "raise",
) -> ToolPlaneFit:
    """Tool-tip offset, `up` and plane offset together, from N >= 6 contacts.

    Parameters
    ----------
    flange_poses : array_like, shape (..., N, 4, 4)
        ``base_from_flange`` pose of each contact, with varied flange orientations.
    up_hint : array_like, shape (..., 3), optional
        Vector on the upper side of the plane. By default the side where the flanges were.
    noise_std : float, optional
        Standard deviation of each contact coordinate, if known; otherwise estimated from the
        residuals. Six contacts leave no residual: without `noise_std` their `up` carries zero
        information (`up_std_deg` infinite) and a :class:`~gravdir.errors.GravdirWarning` says so.
        A given value is tested against the inliers' residuals (chi-square with n - 6 degrees
        of freedom, as in :func:`~gravdir.touch.up_from_touch_points`); where they reject it,
        their own scale replaces it, with a warning.
    tool_tip_guess : array_like, shape (..., 3), optional
        A nominal tool tip (e.g. from the tool's drawing); the plane through its contacts is one
        more start of the final refinement. Not needed to find the global minimum (see Notes).
    max_noise_gain : float, optional
        Largest accepted ratio of the tool tip's weakest standard deviation to the contact noise
        (`noise_gain`), dimensionless; default 300, positive and finite. Above it the orientations
        are refused as too similar (the figures per orientation spread are in docs/touch.md).
    max_iter : int, optional
        Most iterations of the final refinement (default 50, at most 10000). A refinement that
        reaches it warns and reports ``converged=False``.
    n_directions : int, optional
        Directions of the normal in the initial search (default 600, about 6 degrees apart over
        the hemisphere).
    search_max_iter : int, optional
        Most iterations of the refinement taken from each of the 16 directions of lowest
        projected cost (or `n_starts`, if more) before they are ranked (default 3). This is a
        budget of the search, not a solve: the ranked normals are not expected to have
        converged, and reaching it does not warn.
    n_starts : int, optional
        Lowest results of that search (more than 1 degree apart, while there are enough)
        refined to convergence (default 4); the lowest final cost wins.
    robust : bool, optional
        Find and reject bad contacts (up to ``floor((N - 6) / 2)`` of them; needs
        8 <= N <= 10000 per set): from each of the search's starts, the least-trimmed-squares
        core of the model linearised at the fit of all contacts (exact fits of every 6-contact
        subset; above 3000 subsets, of a fixed sample of 2925, see docs/touch.md), trimmed
        Gauss-Newton, then refits on the contacts that pass the test against the current fit
        (see :func:`up_from_touch_points` and docs/touch.md). Default False.
    significance : float, optional
        Per-contact probability that the robust fit's test rejects a good contact, and
        probability that the test of the residuals against a given `noise_std` warns on good
        contacts; in [1e-200, 1) (default 0.01; see :func:`up_from_touch_points`).
    nan_policy : {"raise", "omit"}, optional
        What a NaN in `flange_poses` does: ``"raise"`` (default) refuses it naming
        `flange_poses`; ``"omit"`` drops the contacts whose pose holds one (in a batch, from
        every set) and `n_omitted` counts them. An infinity is refused under both.

    Returns
    -------
    ToolPlaneFit

    Raises
    ------
    InsufficientDataError
        If N < 6, or N < 8 with `robust` (counted after omitting contacts with NaN).
    DegenerateGeometryError
        If the orientations are too similar to separate the tool tip from the plane offset
        (`noise_gain` above `max_noise_gain`), or the contacts do not span a plane.
    ValueError
        If a pose is not rigid, not finite or of the wrong shape, `up_hint` or `tool_tip_guess`
        does not broadcast to the batch shape of `flange_poses`, `noise_std` or
        `max_noise_gain` is not positive and finite, `robust` is not a bool, `flange_poses`
        holds more than 10000 contacts per set with `robust`, `significance` is not in
        [1e-200, 1), or a count is not a positive integer
        within its cap (`max_iter` 10000, `n_directions` 10000, `search_max_iter` 100,
        `n_starts` 1000).

    Warns
    -----
    ConvergenceWarning
        If the refinement of a set stops at `max_iter` iterations.
    GravdirWarning
        With six contacts and no `noise_std`; when the inliers' residuals reject the given
        `noise_std` (the fit is then not to be trusted, and its covariances are inflated to the
        residuals' scale); when `up_hint` (or the flanges' side) lies
        within three standard deviations of the plane, with the margin; when `noise_std` or
        the length scale of the poses is so large that `tool_tip_cov` overflows (it is then
        infinite) or the information on `up` underflows to zero.

    See Also
    --------
    plan_touches : orientations that determine the tool tip well.
    up_from_touches : `up` when the tool tip is known.

    Notes
    -----
    Every contact satisfies ``n^T (R_i t + p_i) = d`` with unknowns ``t`` (3), unit ``n`` (2)
    and ``d`` (1). For fixed ``n`` the problem is linear in ``(t, d)``: they are solved by
    least squares at every normal (variable projection), and ``n`` is refined on the sphere by
    the damped Gauss-Newton loop every direction estimator shares (docs/general.md, "The
    refinement on the sphere"), with ``n <- normalize(n + B delta)``, ``B`` a tangent basis.
    The Jacobian row is ``[n^T R_i, (R_i t + p_i)^T B, -1]`` and the covariance
    ``sigma^2 (J^T J)^{-1}``, which is the Cramér-Rao bound for Gaussian contact noise.

    The cost over ``n`` (with ``(t, d)`` projected out) has, besides the global minimum, local
    minima a few degrees from it with residuals of tenths of a millimetre, and the global pit
    is narrower than any affordable grid. The search therefore evaluates that cost at every
    direction of a hemisphere grid (all at once, vectorised), takes `search_max_iter`
    iterations of the refinement from each of the 16 lowest, and refines the `n_starts` lowest
    distinct results to convergence (why, and how often it misses the global minimum:
    docs/touch.md).

    Only the variation of ``m_i = R_i^T n`` across contacts identifies ``t``: the components of
    ``t`` across the mean ``m`` change with ``sin`` of the tilt, the component along it (the
    approach axis) only with ``1 - cos`` and is the weak one. A lateral tool error also
    imitates a plane tilt when the tilt directions correlate with the contact positions;
    :func:`plan_touches` gives orientations and contact spots free of both losses.

    References
    ----------
    CN 112476435 B, claims 1-2 (contacts on a level plane, ``c_i = R_i t + p_i``; there the
    tool tip is known, here it is estimated with the plane); Nocedal & Wright (2006), ch. 10
    (Gauss-Newton); Golub & Pereyra (1973) and Kaufman (1975) (``(t, d)`` projected out); Kay
    (1993) (the Cramér-Rao bound).

    Examples
    --------
    >>> from scipy.spatial.transform import Rotation
    >>> rng = np.random.default_rng(0)
    >>> rot = (Rotation.from_rotvec([np.pi, 0, 0])
    ...        * Rotation.from_rotvec(rng.normal(scale=0.3, size=(8, 3)))).as_matrix()
    >>> tip = np.array([0.01, -0.02, 0.15])
    >>> contacts = np.c_[rng.uniform(-0.2, 0.2, (8, 2)), np.zeros(8)]
    >>> T = np.tile(np.eye(4), (8, 1, 1))
    >>> T[:, :3, :3] = rot
    >>> T[:, :3, 3] = contacts - rot @ tip
    >>> fit = tool_tip_and_up_from_touches(T, noise_std=1e-5)
    >>> bool(np.allclose(fit.tool_tip, tip)), bool(np.allclose(fit.up, [0, 0, 1]))
    (True, True)
    >>> bool(fit.converged)
    True
    """
    kept, n_omitted = omit_nan_contacts(flange_poses, "flange_poses", (4, 4), nan_policy)
    poses = check_pose_stack(kept)
    n_pts = poses.shape[-3]
    if n_pts < 6:
        raise InsufficientDataError(
            f"Expected `flange_poses` to hold at least 6 contacts for tool tip and plane, "
            f"got {n_pts}{omitted_text(n_omitted)}."
        )
    robust = check_bool(robust, "robust")
    if robust and n_pts < 8:
        raise InsufficientDataError(
            f"Expected `flange_poses` to hold at least 8 contacts for the robust fit of tool "
            f"tip and plane, got {n_pts}{omitted_text(n_omitted)}."
        )
    if robust:
        check_robust_size(n_pts, "flange_poses", "contacts")
    noise = check_noise_std(noise_std)
    alarm = check_significance(significance)
    max_noise_gain = check_positive(max_noise_gain, "max_noise_gain")
    tip_guess = None if tool_tip_guess is None else check_vectors(tool_tip_guess, "tool_tip_guess")
    max_iter = check_limit(max_iter, "max_iter", MAX_ITER_CAP)
    n_directions = check_limit(n_directions, "n_directions", N_DIRECTIONS_CAP)
    search_max_iter = check_limit(search_max_iter, "search_max_iter", SEARCH_MAX_ITER_CAP)
    n_starts = check_limit(n_starts, "n_starts", N_STARTS_CAP)
    hint = None if up_hint is None else check_direction(up_hint, "up_hint", batch=True)
    batch = poses.shape[:-3]
    if hint is not None:
        check_vector_batch(hint, "up_hint", batch, poses, "flange_poses")
    if tip_guess is not None:
        check_vector_batch(tip_guess, "tool_tip_guess", batch, poses, "flange_poses")
    rot = poses[..., :3, :3].reshape(-1, n_pts, 3, 3)
    raw = poses[..., :3, 3].reshape(-1, n_pts, 3)
    guess_normal = None
    if tip_guess is not None:
        guess = np.broadcast_to(tip_guess, (*batch, 3)).reshape(-1, 3)
        guess_normal = _guess_normal(rot, raw, guess)
    with np.errstate(under="ignore"):
        # Units: flange positions of order one (a power of two per set), then centred, so that
        # d and the Jacobian stay well scaled at any length scale.
        scale = set_scale(raw)
        unscaled = raw / scale[:, None, None]
        origin = unscaled.mean(axis=1)
        pos = unscaled - origin[:, None, :]
        starts = _starts(rot, pos, guess_normal, n_directions, n_starts, search_max_iter)
        floor = noise_floor(unscaled)
        if robust:
            known = None if noise is None else noise_in_units(noise, scale, floor)
            sol, report = robust_tool_fit(rot, pos, starts, known, alarm, max_iter)
            best = _Refined(*sol)
            inliers, nsigma, threshold = report.inliers, report.nsigma, report.threshold
            test_converged = report.converged
        else:
            best = _refine(rot, pos, starts, max_iter)
            inliers = np.ones(pos.shape[:2], dtype=bool)
            test_converged = np.ones(len(pos), dtype=bool)
        t, n = best.tool_tip, best.normal
        c = np.einsum("bnij,bj->bni", rot, t) + pos
        if not robust:
            nsigma, threshold = _studentized(rot, best, c, noise, scale, floor, alarm)
        cov = _unit_covariance(rot, n, c, inliers)
        m_mean, spread = _normal_from_flange(rot, n)
        _check_noise_gain(cov.noise_gain, spread, max_noise_gain, batch)
        flip, side, what, rule = _sign_of_up(rot, t, n, hint, batch)
        n = n * flip[:, None]
        d = best.offset * flip
        r = np.einsum("bni,bi->bn", c, n) - d[:, None]
        m_mean = -m_mean * flip[:, None]
        sigma = _noise_level(r, inliers, noise, scale, floor)
        if noise is not None:
            sigma = _check_noise_fit(r, inliers, sigma, alarm, robust, batch)
        offset = d + np.einsum("bi,bi->b", n, origin)
    if noise is None and np.any(np.sum(inliers, axis=1) == 6):
        warn_noise_not_estimable(6, 6, stacklevel=3)
    var = _sign_variance(cov, sigma, side).reshape(batch)
    warn_sign_margin(n.reshape(*batch, 3), side.reshape(*batch, 3), var, what, stacklevel=3)
    if not np.all(best.converged):
        warn_not_converged("The Gauss-Newton refinement of tool tip and plane", max_iter)
    fit = _assemble(
        batch, scale, t, n, offset, r, sigma, cov, m_mean, spread, rule, best, inliers
    )
    fit = dataclasses.replace(
        fit,
        n_omitted=n_omitted,
        inliers=inliers.reshape((*batch, n_pts)),
        rejection_nsigma=nsigma.reshape((*batch, n_pts)),
        rejection_threshold=threshold.reshape((*batch, n_pts)),
        test_converged=test_converged.reshape(batch),
        fingerprint=data_fingerprint(np.asarray(flange_poses, dtype=np.float64)),
    )
    if robust and not np.all(test_converged):
        warn_not_converged("The robust fit's refits of tool tip and plane", REFIT_CAP)
    if noise is not None and np.any(np.all(fit.up_information == 0.0, axis=(-2, -1))):
        warn_no_information(stacklevel=3)
    return fit


def _assemble(
    batch: tuple[int, ...],
    scale: NDArray[np.float64],
    t: NDArray[np.float64],
    n: NDArray[np.float64],
    offset: NDArray[np.float64],
    r: NDArray[np.float64],
    sigma: NDArray[np.float64],
    cov: _Covariance,
    m_mean: NDArray[np.float64],
    spread: NDArray[np.float64],
    rule: SignRule,
    best: _Refined,
    inliers: NDArray[np.bool_],
) -> ToolPlaneFit:
    """The result in the poses' length unit (lengths times `scale`), batch axes restored.

    The tool tip's covariance is ``sigma^2`` times its unit covariance; an uncertainty too large
    for the float range is infinite, with a warning.
    """
    names = "`flange_poses`"
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        sigma_out = sigma * scale
        tool_cov = sigma_out[:, None, None] ** 2 * cov.unit_cov[:, :3, :3]
        tool_cov = np.where(cov.unit_cov[:, :3, :3] == 0.0, 0.0, tool_cov)
        unit_var = np.maximum(np.einsum("bii->bi", cov.unit_cov), 0.0)
        tool_std = sigma_out[:, None] * np.sqrt(unit_var[:, :3])
        offset_std = sigma_out * np.sqrt(unit_var[:, 5])
        weak_std = sigma_out * np.sqrt(np.maximum(cov.tip_eigenvalues[:, -1], 0.0))
    finite = np.isfinite(sigma_out)
    # An unknown noise level leaves every uncertainty infinite (never 0 * inf).
    tool_cov = np.where(finite[:, None, None], tool_cov, np.inf)
    tool_std = np.where(finite[:, None], tool_std, np.inf)
    offset_std = np.where(finite, offset_std, np.inf)
    weak_std = np.where(finite, weak_std, np.inf)
    if np.any(finite[:, None, None] & ~np.isfinite(tool_cov)):
        warnings.warn(
            "The tool tip's covariance overflows the float range (`noise_std` and the poses' "
            "length scale are too large for it): `tool_tip_cov` is infinite there.",
            GravdirWarning,
            stacklevel=4,
        )
    weak = cov.tip_eigenvectors[:, :, -1]
    weak = weak * np.where(np.einsum("bi,bi->b", weak, m_mean) < 0, -1.0, 1.0)[:, None]

    def shape(a: NDArray[Any], tail: tuple[int, ...] = ()) -> Any:
        return a.reshape((*batch, *tail))

    with np.errstate(under="ignore"):
        rms = np.sqrt(np.sum(r**2 * inliers, axis=1) / np.sum(inliers, axis=1))
    every = np.ones(r.shape, dtype=bool)
    return ToolPlaneFit(
        up=shape(n, (3,)),
        up_information=shape(_up_information(n, cov, sigma), (3, 3)),
        offset=shape(to_units(offset, scale, names)),
        tool_tip=shape(to_units(t, scale[:, None], names), (3,)),
        tool_tip_std=shape(tool_std, (3,)),
        tool_tip_cov=shape(tool_cov, (3, 3)),
        offset_std=shape(offset_std),
        residuals=shape(to_units(r, scale[:, None], names), (r.shape[1],)),
        residual_rms=shape(to_units(rms, scale, names)),
        noise_std=shape(sigma_out),
        approach_axis=shape(m_mean, (3,)),
        weak_axis=shape(weak, (3,)),
        weak_axis_std=shape(weak_std),
        noise_gain=shape(cov.noise_gain),
        orientation_spread=shape(spread),
        sign_rule=rule,
        inliers=shape(every, r.shape[1:]),
        rejection_nsigma=shape(np.zeros(r.shape), r.shape[1:]),
        rejection_threshold=shape(np.full(r.shape, np.inf), r.shape[1:]),
        converged=shape(best.converged),
        n_iter=shape(best.n_iter),
        test_converged=shape(np.ones(len(r), dtype=bool)),
    )
