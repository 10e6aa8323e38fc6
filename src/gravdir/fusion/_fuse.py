"""Fusion of gravity directions on the sphere, with a consistency test: :func:`fuse_up`."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from gravdir._checks import check_array, check_count, check_positive
from gravdir._imports import IMPORT_LOCK
from gravdir._results import UpResult, tangent_basis, warn_not_converged
from gravdir.errors import DegenerateGeometryError, InsufficientDataError
from gravdir.fusion._result import FusedUp, SharedDataError

__all__ = ["MAX_SOURCES", "check_options", "fuse"]

#: Largest number of sources of one call: the work grows as their square (the leave-one-out
#: tests), and the recursion that reports the fusion without an outlier is as deep as this.
MAX_SOURCES = 64
#: Largest iteration limit and step tolerance (0.01 rad, far above any useful accuracy).
MAX_ITER = 1000
MAX_XTOL = 0.01
#: Unit vectors are accepted within this of unit norm, as everywhere in gravdir.
UNIT_ATOL = 1e-6
#: A direction of an information matrix counts as determined when its eigenvalue exceeds this
#: fraction of the largest (the threshold of ``cov_from_up_information``) and 1e-200 1/rad².
RANK_RTOL = 1e-12
MIN_INFORMATION = 1e-200


@dataclass(frozen=True)
class _Source:
    """One checked estimate: `up` (3,), its information (3, 3) and its rank."""

    up: NDArray[np.float64]
    information: NDArray[np.float64]
    rank: int


def _rank(information2: NDArray[np.float64]) -> int:
    vals = np.linalg.eigvalsh(0.5 * (information2 + information2.T))
    top = float(vals.max())
    if not top > MIN_INFORMATION:
        return 0
    return int(np.count_nonzero(vals > max(RANK_RTOL * top, MIN_INFORMATION)))


def _check_source(estimate: Any, i: int) -> _Source:
    name = f"estimates[{i}]"
    if not isinstance(estimate, UpResult):
        raise ValueError(
            f"Expected `{name}` to be a gravity-direction result (an UpResult such as an "
            f"UpEstimate, PlaneFit or GravityDirection), got {type(estimate).__name__}; a plain "
            "vector with a covariance becomes one with `express_up(up, np.eye(3), up_cov=...)`."
        )
    up = check_array(estimate.up, f"{name}.up")
    info = check_array(estimate.up_information, f"{name}.up_information")
    if up.shape != (3,) or info.shape != (3, 3):
        raise ValueError(
            f"Expected `{name}` to hold one direction (`up` of shape (3,), `up_information` of "
            f"shape (3, 3)), got shapes {up.shape} and {info.shape}; fuse the entries of a batch "
            "one call at a time."
        )
    length = float(np.linalg.norm(up))
    if abs(length - 1.0) > UNIT_ATOL:
        raise ValueError(f"Expected `{name}.up` to be a unit vector, got norm {length:.6g}.")
    up = up / length
    b = tangent_basis(up)
    info2 = b @ info @ b.T
    rank = _rank(info2)
    if rank == 0:
        raise InsufficientDataError(
            f"Expected `{name}` to carry information about `up`, got none (its uncertainty is "
            "unknown, `up_std_deg` infinite): give it a covariance (`express_up(..., up_cov=...)`"
            " for a plain vector, `values_cov` for a controller setting) or leave it out."
        )
    return _Source(up, b.T @ (0.5 * (info2 + info2.T)) @ b, rank)


def _check_frames(estimates: tuple[Any, ...]) -> None:
    """Refuse two estimates whose named frames differ (results with a `frame` field)."""
    named = [
        (i, e.frame)
        for i, e in enumerate(estimates)
        if isinstance(getattr(e, "frame", None), str) and e.frame
    ]
    for i, frame in named[1:]:
        if frame != named[0][1]:
            raise ValueError(
                f"Expected the estimates in one frame, got `estimates[{named[0][0]}]` in frame "
                f"{named[0][1]!r} and `estimates[{i}]` in frame {frame!r}: bring one into the "
                "frame of the other with `express_up(result, new_from_old, frame=...)`."
            )


def _check_cross_cov(
    cross_cov: Any, n: int, sources: list[_Source]
) -> dict[tuple[int, int], NDArray[np.float64]]:
    """``{(i, j): X}`` with i < j, X the (3, 3) cross-covariance E[δup_i δup_jᵀ]."""
    if cross_cov is None:
        return {}
    if not isinstance(cross_cov, Mapping):
        raise ValueError(
            "Expected `cross_cov` to be a dict {(i, j): 3x3 cross-covariance}, got "
            f"{type(cross_cov).__name__}."
        )
    out: dict[tuple[int, int], NDArray[np.float64]] = {}
    for key, value in cross_cov.items():
        if (
            not isinstance(key, tuple)
            or len(key) != 2
            or not all(isinstance(k, int | np.integer) and not isinstance(k, bool) for k in key)
            or not all(0 <= k < n for k in key)
            or key[0] == key[1]
        ):
            raise ValueError(
                f"Expected the keys of `cross_cov` to be pairs (i, j) of distinct estimate "
                f"indices in [0, {n}), got {key!r}."
            )
        i, j = int(key[0]), int(key[1])
        x = check_array(value, f"cross_cov[{key!r}]", tail=(3, 3))
        if x.shape != (3, 3):
            raise ValueError(f"Expected `cross_cov[{key!r}]` to have shape (3, 3), got {x.shape}.")
        if i > j:
            i, j, x = j, i, x.T
        if (i, j) in out:
            raise ValueError(f"Expected one entry of `cross_cov` for the pair {(i, j)}, got two.")
        for k in (i, j):
            if sources[k].rank < 2:
                raise ValueError(
                    f"Expected `estimates[{k}]`, named in `cross_cov`, to determine both "
                    "directions of `up` (a finite covariance), got information of rank "
                    f"{sources[k].rank}."
                )
        out[(i, j)] = x
    return out


def _check_shared(
    estimates: tuple[Any, ...], pairs: Mapping[tuple[int, int], Any]
) -> frozenset[str]:
    """The union of the fingerprints; refuse pairs that share data without a cross-covariance."""
    prints = [frozenset(e.fingerprint) for e in estimates]
    for i in range(len(estimates)):
        for j in range(i + 1, len(estimates)):
            same = estimates[i] is estimates[j]
            if (same or prints[i] & prints[j]) and (i, j) not in pairs:
                what = "are the same object" if same else "share data (their fingerprints meet)"
                raise SharedDataError(
                    f"Expected independent estimates, got `estimates[{i}]` "
                    f"({type(estimates[i]).__name__}) and `estimates[{j}]` "
                    f"({type(estimates[j]).__name__}), which {what}: their errors are "
                    f"correlated. Fuse one of them only, or give their cross-covariance as "
                    f"`cross_cov={{({i}, {j}): C}}`."
                )
    return frozenset[str]().union(*prints)


def _rotation_between(a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    """The rotation about ``a × b`` taking unit `a` to unit `b` (parallel transport on the
    sphere); by pi about the first tangent direction of `a` when they are opposite."""
    v = np.cross(a, b)
    s = float(np.linalg.norm(v))
    c = float(a @ b)
    if s < 1e-300:
        if c > 0:
            return np.eye(3)
        axis = tangent_basis(a)[0]
        return 2.0 * np.outer(axis, axis) - np.eye(3)
    k = v / s
    kx = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    out: NDArray[np.float64] = np.eye(3) + s * kx + (1.0 - c) * (kx @ kx)
    return out


def _log(base: NDArray[np.float64], u: NDArray[np.float64]) -> NDArray[np.float64]:
    """The tangent vector (3,) at `base` of the geodesic to `u`: length = angle between them."""
    w = u - (base @ u) * base
    s = float(np.linalg.norm(w))
    angle = math.atan2(s, float(base @ u))
    if s < 1e-300:
        return angle * tangent_basis(base)[0] if angle > 0 else np.zeros(3)
    out: NDArray[np.float64] = (angle / s) * w
    return out


def _exp(base: NDArray[np.float64], step: NDArray[np.float64]) -> NDArray[np.float64]:
    """The point reached from `base` along the tangent vector `step` (3,)."""
    t = float(np.linalg.norm(step))
    if t == 0.0:
        return base
    out = math.cos(t) * base + (math.sin(t) / t) * step
    result: NDArray[np.float64] = out / np.linalg.norm(out)
    return result


@dataclass(frozen=True)
class _Linear:
    """The problem linearised in the tangent plane of `up`: stacked tangent coordinates `x`
    (2n,) of the sources, their joint information `w` (2n, 2n), and the reduced normal
    equations ``f = Hᵀ w H``, ``g = Hᵀ w x`` of the stacked identity H."""

    x: NDArray[np.float64]
    w: NDArray[np.float64]
    f: NDArray[np.float64]
    g: NDArray[np.float64]


def _linearise(
    up: NDArray[np.float64],
    sources: list[_Source],
    groups: list[list[int]],
    pairs: Mapping[tuple[int, int], NDArray[np.float64]],
) -> _Linear:
    n = len(sources)
    b = tangent_basis(up)
    rot = [_rotation_between(s.up, up) for s in sources]
    x = np.concatenate([b @ _log(up, s.up) for s in sources])
    w = np.zeros((2 * n, 2 * n))
    for group in groups:
        if len(group) == 1:
            (i,) = group
            j2 = b @ rot[i] @ sources[i].information @ rot[i].T @ b.T
            w[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = 0.5 * (j2 + j2.T)
            continue
        m = len(group)
        cov = np.zeros((2 * m, 2 * m))
        for a, i in enumerate(group):
            j2 = b @ rot[i] @ sources[i].information @ rot[i].T @ b.T
            cov[2 * a : 2 * a + 2, 2 * a : 2 * a + 2] = np.linalg.inv(0.5 * (j2 + j2.T))
            for c, j in enumerate(group[a + 1 :], start=a + 1):
                cross = pairs.get((i, j))
                if cross is not None:
                    block = b @ rot[i] @ cross @ rot[j].T @ b.T
                    cov[2 * a : 2 * a + 2, 2 * c : 2 * c + 2] = block
                    cov[2 * c : 2 * c + 2, 2 * a : 2 * a + 2] = block.T
        vals, vecs = np.linalg.eigh(0.5 * (cov + cov.T))
        if not vals.min() > 1e-12 * vals.max():
            raise ValueError(
                f"Expected `cross_cov` to give the estimates {group} a positive definite joint "
                f"covariance, got smallest eigenvalue {vals.min():.3g} (largest "
                f"{vals.max():.3g}): a correlation beyond 1."
            )
        winv = (vecs / vals) @ vecs.T
        idx = np.concatenate([[2 * i, 2 * i + 1] for i in group])
        w[np.ix_(idx, idx)] = winv
    h = np.tile(np.eye(2), (n, 1))
    f = h.T @ w @ h
    return _Linear(x, w, 0.5 * (f + f.T), h.T @ w @ x)


def _groups(n: int, pairs: Mapping[tuple[int, int], Any]) -> list[list[int]]:
    """Connected sets of sources under the pairs of `cross_cov` (union-find)."""
    parent = list(range(n))

    def root(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    for i, j in pairs:
        parent[root(j)] = root(i)
    out: dict[int, list[int]] = {}
    for i in range(n):
        out.setdefault(root(i), []).append(i)
    return list(out.values())


def _start(sources: list[_Source]) -> NDArray[np.float64]:
    """The source whose least-determined direction is best determined (a rank-2 one if any)."""
    best = max(
        range(len(sources)),
        key=lambda i: (
            sources[i].rank,
            float(np.sort(np.linalg.eigvalsh(sources[i].information))[-2]),
        ),
    )
    return sources[best].up


def _determined(f: NDArray[np.float64]) -> bool:
    vals = np.linalg.eigvalsh(f)
    return bool(vals.max() > MIN_INFORMATION and vals.min() > RANK_RTOL * vals.max())


def _chi2_sf(x: float, dof: int) -> float:
    if dof <= 0:
        return 1.0
    with IMPORT_LOCK:
        from scipy.special import chdtrc  # imported here: the rest of gravdir does without it

    return float(chdtrc(dof, max(x, 0.0)))


def _leave_one_out(lin: _Linear, n: int, chi2: float) -> tuple[list[float], list[int]]:
    """Per source k: the drop of χ² when k gets a free bias, and that test's dof.

    With H_k = [H, E_k] (E_k picks source k's two coordinates), the minimum of the quadratic
    form is ``xᵀwx - g_kᵀ F_k⁺ g_k``; for independent sources the drop equals
    ``d_kᵀ (C_k + C_others)⁻¹ d_k`` of the difference d_k of source k from the others' fusion.
    """
    h = np.tile(np.eye(2), (n, 1))
    base = float(lin.x @ lin.w @ lin.x)
    stats, dofs = [], []
    for k in range(n):
        e = np.zeros((2 * n, 2))
        e[2 * k : 2 * k + 2] = np.eye(2)
        hk = np.hstack([h, e])
        fk = hk.T @ lin.w @ hk
        gk = hk.T @ lin.w @ lin.x
        vals, vecs = np.linalg.eigh(0.5 * (fk + fk.T))
        keep = vals > RANK_RTOL * vals.max()
        inv = (vecs[:, keep] / vals[keep]) @ vecs[:, keep].T
        rest = base - float(gk @ inv @ gk)
        stats.append(max(chi2 - max(rest, 0.0), 0.0))
        dofs.append(int(np.count_nonzero(keep)) - 2)
    return stats, dofs


def fuse(
    estimates: tuple[Any, ...],
    cross_cov: Any,
    significance: float,
    max_iter: int,
    xtol: float,
) -> FusedUp:
    """:func:`~gravdir.fusion.fuse_up` on checked options."""
    n = len(estimates)
    if n < 2:
        raise InsufficientDataError(
            f"Expected at least 2 estimates to fuse, got {n}: a single estimate is its own "
            "fusion, with nothing to test it against."
        )
    if n > MAX_SOURCES:
        raise ValueError(f"Expected at most {MAX_SOURCES} estimates, got {n}.")
    sources = [_check_source(e, i) for i, e in enumerate(estimates)]
    _check_frames(estimates)
    pairs = _check_cross_cov(cross_cov, n, sources)
    fingerprint = _check_shared(estimates, pairs)
    groups = _groups(n, pairs)

    up = _start(sources)
    converged, n_iter = False, 0
    with np.errstate(under="ignore"):
        for n_iter in range(1, max_iter + 1):  # noqa: B007  (n_iter is reported)
            lin = _linearise(up, sources, groups, pairs)
            if not _determined(lin.f):
                raise DegenerateGeometryError(
                    "Expected the estimates together to determine both directions of `up`, got "
                    "information along one tangent direction only (rank-1 estimates sharing "
                    "their undetermined direction)."
                )
            step2 = np.linalg.solve(lin.f, lin.g)
            up = _exp(up, step2 @ tangent_basis(up))
            if float(np.linalg.norm(step2)) <= xtol:
                converged = True
                break
        lin = _linearise(up, sources, groups, pairs)
        if not _determined(lin.f):
            raise DegenerateGeometryError(
                "Expected the estimates together to determine both directions of `up`, got "
                "information along one tangent direction only."
            )
        chi2 = float(lin.x @ lin.w @ lin.x - lin.g @ np.linalg.solve(lin.f, lin.g))
        chi2 = max(chi2, 0.0)
        stats, dofs = _leave_one_out(lin, n, chi2)
    if not converged:
        warn_not_converged("fuse_up", max_iter, stacklevel=4)
    dof = sum(s.rank for s in sources) - 2
    p_value = _chi2_sf(chi2, dof)
    consistent = p_value >= significance
    source_p = [_chi2_sf(t, d) for t, d in zip(stats, dofs, strict=True)]
    outlier: int | None = None
    without: FusedUp | None = None
    if n >= 3 and not consistent:
        k = min(range(n), key=lambda i: (source_p[i], -stats[i]))
        if source_p[k] < significance:
            outlier = k
            without = _without(estimates, k, pairs, significance, max_iter, xtol)
    b = tangent_basis(up)
    info = b.T @ lin.f @ b
    return FusedUp(
        up=up,
        up_information=0.5 * (info + info.T),
        chi2=chi2,
        dof=dof,
        p_value=p_value,
        significance=significance,
        consistent=consistent,
        nsigma=np.sqrt(np.asarray(stats)),
        source_p_value=np.asarray(source_p),
        outlier=outlier,
        outlier_nsigma=None if outlier is None else math.sqrt(stats[outlier]),
        without_outlier=without,
        n_sources=n,
        converged=converged,
        n_iter=n_iter,
        fingerprint=fingerprint,
    )


def _without(
    estimates: tuple[Any, ...],
    k: int,
    pairs: Mapping[tuple[int, int], NDArray[np.float64]],
    significance: float,
    max_iter: int,
    xtol: float,
) -> FusedUp | None:
    """The fusion of all estimates but `k` (indices renumbered), None if they leave `up` open."""
    rest = estimates[:k] + estimates[k + 1 :]

    def renumber(i: int) -> int:
        return i if i < k else i - 1

    sub = {(renumber(i), renumber(j)): x for (i, j), x in pairs.items() if k not in (i, j)}
    try:
        return fuse(rest, sub or None, significance, max_iter, xtol)
    except DegenerateGeometryError:
        return None


def check_options(significance: Any, max_iter: Any, xtol: Any) -> tuple[float, int, float]:
    """The checked `significance`, `max_iter` and `xtol` of :func:`fuse_up`."""
    alpha = check_positive(significance, "significance")
    if not alpha < 1.0:
        raise ValueError(f"Expected `significance` in (0, 1), got {alpha!r}.")
    iters = check_count(max_iter, "max_iter", minimum=1, maximum=MAX_ITER)
    tol = check_positive(xtol, "xtol")
    if tol > MAX_XTOL:
        raise ValueError(f"Expected `xtol` in radians, at most {MAX_XTOL}, got {tol!r}.")
    return alpha, iters, tol
