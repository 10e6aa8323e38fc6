"""Tool tip, `up` and plane offset estimated together from contacts with varied orientations."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import check_positive, check_unit_vector, check_vectors
from gravdir._results import UpResult, warn_not_converged
from gravdir.errors import DegenerateGeometryError, InsufficientDataError
from gravdir.touch._common import (
    batch_repr,
    check_count,
    check_noise_std,
    check_pose_stack,
    check_vector_batch,
    fmt,
    noise_floor,
    orient,
    scatter,
    warn_noise_not_estimable,
)
from gravdir.touch._gauss_newton import gauss_newton, hemisphere, jacobian, search_starts
from gravdir.touch._plane import SignRule


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
        ``up . (R_i t + p_i) - d``.
    rms : ndarray, shape (...)
        RMS of the residuals.
    noise_std : ndarray, shape (...)
        ``sigma`` used for the covariances: the caller's, or ``sqrt(sum r^2 / (N - 6))`` (at
        least the coordinates' round-off; ``inf`` for N = 6 without a caller's value).
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
        Whether the Gauss-Newton refinement converged (every parameter's step below 1e-12 of
        its scale) within `max_iter` iterations.
    n_iter : ndarray of int, shape (...)
        Gauss-Newton iterations of the refinement that gave the result.
    up_cov, up_std_deg
        Covariance of `up` (..., 3, 3), rad², and ``sqrt(trace(up_cov))`` in degrees
        (properties, see :class:`~gravdir._results.UpResult`).
    """

    up: NDArray[np.float64]
    up_information: NDArray[np.float64]
    offset: NDArray[np.float64]
    tool_tip: NDArray[np.float64]
    tool_tip_std: NDArray[np.float64]
    tool_tip_cov: NDArray[np.float64]
    offset_std: NDArray[np.float64]
    residuals: NDArray[np.float64]
    rms: NDArray[np.float64]
    noise_std: NDArray[np.float64]
    approach_axis: NDArray[np.float64]
    weak_axis: NDArray[np.float64]
    weak_axis_std: NDArray[np.float64]
    noise_gain: NDArray[np.float64]
    orientation_spread: NDArray[np.float64]
    sign_rule: SignRule
    converged: NDArray[np.bool_]
    n_iter: NDArray[np.int64]

    @property
    def orientation_spread_deg(self) -> NDArray[np.float64]:
        """`orientation_spread` in degrees, shape (...)."""
        return np.asarray(np.degrees(self.orientation_spread), dtype=np.float64)

    def __repr__(self) -> str:
        extra = (
            f"up_std_deg={fmt(self.up_std_deg)} deg, tool_tip={fmt(self.tool_tip)}, "
            f"tool_tip_std={fmt(self.tool_tip_std)}, weak_axis={fmt(self.weak_axis)}, "
            f"weak_axis_std={fmt(self.weak_axis_std)}, rms={fmt(self.rms)}, "
            f"orientation_spread_deg={fmt(self.orientation_spread_deg)} deg, "
            f"converged={fmt(self.converged)}"
        )
        return batch_repr("ToolPlaneFit", self.up, extra)


class _Refined(NamedTuple):
    """The best Gauss-Newton result per set of contacts."""

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
    batch: tuple[int, ...],
    tip_guess: NDArray[np.float64] | None,
    n_directions: int,
    n_starts: int,
    search_max_iter: int,
) -> NDArray[np.float64]:
    """Starting normals (B, k, 3) for the refinement.

    A few Gauss-Newton steps from every direction of a hemisphere grid, the lowest `n_starts`
    of them, plus the plane through the contacts of the caller's tool tip.
    """
    dirs = hemisphere(n_directions)
    starts = search_starts(dirs, rot, pos, min(n_starts, len(dirs)), search_max_iter)
    if tip_guess is not None:
        guess = np.broadcast_to(tip_guess, (*batch, 3)).reshape(-1, 3)
        pts = np.einsum("bnij,bj->bni", rot, guess) + pos
        _, _, vec = scatter(pts, np.ones(pts.shape[:-1]))
        starts = np.concatenate([starts, vec[:, None, :, 0]], axis=1)
    return starts


def _refine(
    rot: NDArray[np.float64], pos: NDArray[np.float64], starts: NDArray[np.float64], max_iter: int
) -> _Refined:
    """Gauss-Newton from every start; keep the lowest cost of each set."""
    n_batch, k = starts.shape[:2]
    t, n, d, cost, converged, n_iter = gauss_newton(
        np.repeat(rot, k, axis=0), np.repeat(pos, k, axis=0), starts.reshape(-1, 3), max_iter
    )
    best = np.argmin(cost.reshape(n_batch, k), axis=1) + k * np.arange(n_batch)
    return _Refined(t[best], n[best], d[best], converged[best], n_iter[best])


def _unit_covariance(
    rot: NDArray[np.float64], n: NDArray[np.float64], c: NDArray[np.float64]
) -> _Covariance:
    """``(J^T J)^{-1}`` at the solution, by an eigendecomposition of the column-scaled matrix."""
    jac, basis = jacobian(rot, n, c)
    h = np.einsum("bni,bnj->bij", jac, jac)
    col = np.sqrt(np.einsum("bii->bi", h))
    hs = h / (col[:, :, None] * col[:, None, :])
    lam, vec = np.linalg.eigh(hs)
    # Relative eigenvalues below 1e-12 are rank deficiency, not information.
    singular = lam[:, 0] <= 1e-12 * lam[:, -1]
    inv_s = np.einsum("bik,bk,bjk->bij", vec, 1.0 / np.maximum(lam, 1e-300), vec)
    unit_cov = inv_s / (col[:, :, None] * col[:, None, :])
    wt, vt = np.linalg.eigh(unit_cov[:, :3, :3])
    gain = np.where(singular, np.inf, np.sqrt(np.maximum(wt[:, -1], 0.0)))
    return _Covariance(unit_cov, basis, wt, vt, gain)


def _normal_from_flange(
    rot: NDArray[np.float64], n: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Mean of ``m_i = R_i^T n`` (B, 3), normalised, and the RMS angle about it (B,), radians."""
    m = np.einsum("bnkj,bk->bnj", rot, n)
    m_mean = m.mean(axis=1)
    m_mean /= np.linalg.norm(m_mean, axis=1, keepdims=True)
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
    pos: NDArray[np.float64],
    t: NDArray[np.float64],
    n: NDArray[np.float64],
    hint: NDArray[np.float64] | None,
    batch: tuple[int, ...],
) -> tuple[NDArray[np.float64], SignRule]:
    """Sign (B,) that puts `up` on the flanges' side, or on the side of `up_hint`."""
    if hint is not None:
        return orient(n, np.broadcast_to(hint, (*batch, 3)).reshape(-1, 3), "up_hint"), (
            "side of `up_hint`"
        )
    side_dot = np.einsum("bi,bi->b", -np.einsum("bnij,bj->bi", rot, t), n)
    scale = float(np.max(np.abs(pos))) + 1e-300
    if np.any(np.abs(side_dot) <= 1e-12 * scale * pos.shape[1]):
        raise DegenerateGeometryError(
            "Expected the flanges off the plane to choose the sign of `up`, got a tool tip "
            "in the plane; pass `up_hint`."
        )
    return np.where(side_dot < 0, -1.0, 1.0), "flange side"


def _noise_level(
    r: NDArray[np.float64], noise_std: float | None, floor: NDArray[np.float64]
) -> NDArray[np.float64]:
    """The caller's `noise_std`, or the residuals' ``sqrt(sum r^2 / (N - 6))``, inf for N = 6.

    The estimate is kept at least `floor` (the coordinates' round-off).
    """
    n_batch, n_pts = r.shape
    if noise_std is not None:
        return np.full(n_batch, noise_std)
    if n_pts > 6:
        estimate = np.sqrt(np.sum(r**2, axis=1) / (n_pts - 6))
        return np.asarray(np.maximum(estimate, floor), dtype=np.float64)
    return np.full(n_batch, np.inf)


def _up_information(cov: _Covariance, sigma: NDArray[np.float64]) -> NDArray[np.float64]:
    """``B C^-1 B^T / sigma^2``, C the unit covariance of the tangent angles; 0 if sigma = inf."""
    c_inv = np.linalg.inv(cov.unit_cov[:, 3:5, 3:5])
    with np.errstate(divide="ignore"):
        inv_var = np.where(np.isfinite(sigma), 1.0 / sigma**2, 0.0)
    info = np.einsum("bik,bkl,bjl->bij", cov.basis, c_inv, cov.basis) * inv_var[:, None, None]
    return np.asarray(0.5 * (info + np.swapaxes(info, 1, 2)), dtype=np.float64)


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
    tool_tip_guess : array_like, shape (..., 3), optional
        A nominal tool tip (e.g. from the tool's drawing); the plane through its contacts is one
        more start of the final refinement. Not needed to find the global minimum (see Notes).
    max_noise_gain : float, optional
        Largest accepted ratio of the tool tip's weakest standard deviation to the contact noise.
        Measured (Cramér-Rao, 20000 sets of 8 contacts) with the flange tilted uniformly up to
        ±30° from the plane normal: median 17, 95th percentile 43, 99.9th 168; up to ±10°:
        median 148; ±5°: median 589. The :func:`plan_touches` design at 30° gives 6.1. The
        default 300 accepts all but 1 in 4000 random ±30° sets and rejects nearly every ±5°
        set, where the weakest component is known 300 times worse than a single contact.
    max_iter : int, optional
        Most Gauss-Newton iterations of the final refinement (default 50; 5-10 usually
        suffice). A refinement that reaches it warns and reports ``converged=False``.
    n_directions : int, optional
        Directions of the normal in the initial search (default 600, about 6 degrees apart over
        the hemisphere).
    search_max_iter : int, optional
        Most Gauss-Newton iterations taken from every one of those directions before they are
        ranked (default 3). This is a budget of the search, not a solve: the ranked normals are
        not expected to have converged, and reaching it does not warn.
    n_starts : int, optional
        Lowest results of that search refined to convergence (default 4); the lowest final cost
        wins.

    Returns
    -------
    ToolPlaneFit

    Raises
    ------
    InsufficientDataError
        If N < 6.
    DegenerateGeometryError
        If the orientations are too similar to separate the tool tip from the plane offset
        (`noise_gain` above `max_noise_gain`), or the contacts do not span a plane.
    ValueError
        If a pose is not rigid, not finite or of the wrong shape, `up_hint` or `tool_tip_guess`
        does not broadcast to the batch shape of `flange_poses`, or a count is not a positive
        integer.

    Warns
    -----
    ConvergenceWarning
        If the refinement of a set stops at `max_iter` iterations.
    GravdirWarning
        With six contacts and no `noise_std`.

    See Also
    --------
    plan_touches : orientations that determine the tool tip well.
    up_from_touches : `up` when the tool tip is known.

    Notes
    -----
    Every contact satisfies ``n^T (R_i t + p_i) = d`` with unknowns ``t`` (3), unit ``n`` (2)
    and ``d`` (1). For fixed ``n`` the problem is linear in ``(t, d)``. All six parameters are
    refined by Gauss-Newton with ``n <- normalize(n + B delta)``, ``B`` a tangent basis, and
    step halving until the cost does not rise; the Jacobian row is
    ``[n^T R_i, (R_i t + p_i)^T B, -1]`` and the covariance ``sigma^2 (J^T J)^{-1}``, which is
    the Cramér-Rao bound for Gaussian contact noise. The refinement has converged when no
    parameter moves by more than 1e-12 of its scale in one iteration.

    The cost over ``n`` (with ``(t, d)`` projected out) has, besides the global minimum, local
    minima a few degrees from it with residuals of tenths of a millimetre, and the global pit
    is narrower than any affordable grid. The search therefore starts Gauss-Newton from every
    direction of a hemisphere grid (all at once, vectorised), takes `search_max_iter` steps,
    and refines the `n_starts` lowest to convergence. Ranking only the grid's local minima
    missed the global minimum in 20 of 1500 draws (8 contacts, ±30°, σ = 0.02 mm); this
    search missed none of 9300 draws over four contact designs.

    Only the variation of ``m_i = R_i^T n`` across contacts identifies ``t``: the components of
    ``t`` across the mean ``m`` change with ``sin`` of the tilt, the component along it (the
    approach axis) only with ``1 - cos`` and is the weak one. A lateral tool error also
    imitates a plane tilt when the tilt directions correlate with the contact positions;
    :func:`plan_touches` gives orientations and contact spots free of both losses.

    References
    ----------
    CN 112476435 B, claims 1-2 (contacts on a level plane, ``c_i = R_i t + p_i``; there the
    tool tip is known, here it is estimated with the plane); Nocedal & Wright (2006), ch. 10
    (Gauss-Newton); Golub & Pereyra (1973) (``(t, d)`` projected out in the search); Kay (1993)
    (the Cramér-Rao bound).

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
    poses = check_pose_stack(flange_poses)
    n_pts = poses.shape[-3]
    if n_pts < 6:
        raise InsufficientDataError(
            f"Expected `flange_poses` to hold at least 6 contacts for tool tip and plane, "
            f"got {n_pts}."
        )
    noise = check_noise_std(noise_std)
    max_noise_gain = check_positive(max_noise_gain, "max_noise_gain")
    tip_guess = None if tool_tip_guess is None else check_vectors(tool_tip_guess, "tool_tip_guess")
    max_iter = check_count(max_iter, "max_iter")
    n_directions = check_count(n_directions, "n_directions")
    search_max_iter = check_count(search_max_iter, "search_max_iter")
    n_starts = check_count(n_starts, "n_starts")
    hint = None if up_hint is None else check_unit_vector(up_hint, "up_hint", normalize=True)
    batch = poses.shape[:-3]
    if hint is not None:
        check_vector_batch(hint, "up_hint", batch, poses, "flange_poses")
    if tip_guess is not None:
        check_vector_batch(tip_guess, "tool_tip_guess", batch, poses, "flange_poses")
    rot = poses[..., :3, :3].reshape(-1, n_pts, 3, 3)
    pos = poses[..., :3, 3].reshape(-1, n_pts, 3)
    # Units: centre the flange positions so d and the Jacobian stay well scaled.
    origin = pos.mean(axis=1)
    pos = pos - origin[:, None, :]

    starts = _starts(rot, pos, batch, tip_guess, n_directions, n_starts, search_max_iter)
    best = _refine(rot, pos, starts, max_iter)
    t, n = best.tool_tip, best.normal
    c = np.einsum("bnij,bj->bni", rot, t) + pos
    cov = _unit_covariance(rot, n, c)
    m_mean, spread = _normal_from_flange(rot, n)
    _check_noise_gain(cov.noise_gain, spread, max_noise_gain, batch)
    flip, rule = _sign_of_up(rot, pos, t, n, hint, batch)
    n = n * flip[:, None]
    d = best.offset * flip
    r = np.einsum("bni,bi->bn", c, n) - d[:, None]
    m_mean = -m_mean * flip[:, None]
    sigma = _noise_level(r, noise, noise_floor(poses[..., :3, 3].reshape(-1, n_pts, 3)))
    offset = d + np.einsum("bi,bi->b", n, origin)
    if noise is None and n_pts == 6:
        warn_noise_not_estimable(6, 6, stacklevel=3)
    if not np.all(best.converged):
        warn_not_converged("The Gauss-Newton refinement of tool tip and plane", max_iter)
    return _assemble(batch, t, n, offset, r, sigma, cov, m_mean, spread, rule, best)


def _assemble(
    batch: tuple[int, ...],
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
) -> ToolPlaneFit:
    """The result, with the tool tip's covariance scaled by sigma^2 and the batch axes restored."""
    with np.errstate(invalid="ignore"):
        tool_cov = sigma[:, None, None] ** 2 * cov.unit_cov[:, :3, :3]
    tool_cov = np.where(np.isfinite(sigma)[:, None, None], tool_cov, np.inf)
    weak = cov.tip_eigenvectors[:, :, -1]
    weak = weak * np.where(np.einsum("bi,bi->b", weak, m_mean) < 0, -1.0, 1.0)[:, None]

    def shape(a: NDArray[Any], tail: tuple[int, ...] = ()) -> Any:
        return a.reshape((*batch, *tail))

    return ToolPlaneFit(
        up=shape(n, (3,)),
        up_information=shape(_up_information(cov, sigma), (3, 3)),
        offset=shape(offset),
        tool_tip=shape(t, (3,)),
        tool_tip_std=shape(np.sqrt(np.einsum("bii->bi", tool_cov)), (3,)),
        tool_tip_cov=shape(tool_cov, (3, 3)),
        offset_std=shape(sigma * np.sqrt(cov.unit_cov[:, 5, 5])),
        residuals=shape(r, (r.shape[1],)),
        rms=shape(np.sqrt(np.mean(r**2, axis=1))),
        noise_std=shape(sigma),
        approach_axis=shape(m_mean, (3,)),
        weak_axis=shape(weak, (3,)),
        weak_axis_std=shape(sigma * np.sqrt(np.maximum(cov.tip_eigenvalues[:, -1], 0.0))),
        noise_gain=shape(cov.noise_gain),
        orientation_spread=shape(spread),
        sign_rule=rule,
        converged=shape(best.converged),
        n_iter=shape(best.n_iter),
    )
