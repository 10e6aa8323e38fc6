"""Fusion of gravity directions on the sphere, with a consistency test: :func:`fuse_up`."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from gravdir._checks import check_array, check_count, check_positive
from gravdir._rank import reciprocal_condition
from gravdir._results import UpResult
from gravdir._sphere import (
    ABS_FLOOR,
    REL_FLOOR,
    Linearisation,
    checked_up_information,
    informative,
    refine_direction,
    tangent_basis,
)
from gravdir.errors import DegenerateGeometryError, InsufficientDataError
from gravdir.fusion._result import SharedDataError

__all__ = [
    "MAX_SOURCES",
    "Checked",
    "Solution",
    "check_estimates",
    "check_options",
    "solve",
    "with_model_error",
]

#: Largest number of sources of one call: the work grows as their square (the leave-one-out
#: tests), and the recursion that reports the fusion without an outlier is as deep as this.
MAX_SOURCES = 64
#: Largest iteration limit and step tolerance (0.01 rad, far above any useful accuracy).
MAX_ITER = 1000
MAX_XTOL = 0.01
#: A direction of an information matrix counts as determined when its eigenvalue exceeds this
#: fraction of the largest and 1e-200 1/rad²: the one floor of :func:`gravdir._sphere.informative`.
RANK_RTOL = REL_FLOOR
MIN_INFORMATION = ABS_FLOOR
#: The joint covariance of sources linked by ``cross_cov`` must have a correlation matrix whose
#: smallest eigenvalue exceeds this fraction of its largest (correlations short of ±1 by more
#: than rounding).
CORRELATION_RTOL = 1e-12


@dataclass(frozen=True)
class _Source:
    """One checked estimate: `up` (3,), its rank and its information in eigen form: `values`
    (rank,) 1/rad² and orthonormal tangent `directions` (rank, 3), the eigenvalues and
    eigenvectors it determines (the others, below RANK_RTOL of the largest, are dropped)."""

    up: NDArray[np.float64]
    values: NDArray[np.float64]
    directions: NDArray[np.float64]

    @property
    def rank(self) -> int:
        return int(self.values.size)


def _check_source(estimate: Any, i: int) -> _Source:
    name = f"estimates[{i}]"
    if not isinstance(estimate, UpResult):
        raise ValueError(
            f"Expected `{name}` to be a gravity-direction result (an UpResult such as an "
            f"UpEstimate, PlaneFit or GravityDirection), got {type(estimate).__name__}; a plain "
            "vector with a covariance becomes one with `express_up(up, np.eye(3), up_cov=...)`."
        )
    shapes = np.shape(estimate.up), np.shape(estimate.up_information)
    if shapes != ((3,), (3, 3)):
        raise ValueError(
            f"Expected `{name}` to hold one direction (`up` of shape (3,), `up_information` of "
            f"shape (3, 3)), got shapes {shapes[0]} and {shapes[1]}; fuse the entries of a batch "
            "one call at a time."
        )
    up, info = checked_up_information(estimate, name)
    b = tangent_basis(up)
    info2 = b @ info @ b.T
    vals, vecs = np.linalg.eigh(0.5 * (info2 + info2.T))
    keep = informative(vals)
    if not np.any(keep):
        raise InsufficientDataError(
            f"Expected `{name}` to carry information about `up`, got none (its uncertainty is "
            "unknown, `up_std_deg` infinite): give it a covariance (`express_up(..., up_cov=...)`"
            " for a plain vector, `values_cov` for a controller setting) or leave it out."
        )
    return _Source(up, vals[keep], vecs[:, keep].T @ b)


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


@dataclass(frozen=True)
class _Information:
    """A tangent-plane information in eigen form, ``Σ_p λ_p u_p u_pᵀ``: `values` (m,) 1/rad²
    and unit `dirs` (m, 2) rows. Sums concatenate the terms, and the determinant and the
    adjugate are sums of non-negative terms (Cauchy–Binet), so no information is lost to
    rounding when one term is 1e12 times another."""

    values: NDArray[np.float64]
    dirs: NDArray[np.float64]

    @staticmethod
    def join(parts: list[_Information]) -> _Information:
        return _Information(
            np.concatenate([p.values for p in parts]), np.concatenate([p.dirs for p in parts])
        )

    def span(self) -> NDArray[np.float64]:
        """Orthonormal columns (2, r) spanning the directions determined: decided on the
        directions alone (parallel within RANK_RTOL, see :func:`_parallel`), never on the
        eigenvalues of a sum."""
        # A term below the float range relative to the largest (1e-308 of it) adds nothing.
        dirs = self.dirs[self.values / self.values.max() > 0] if self.values.size else self.dirs
        if dirs.shape[0] == 0:
            return np.zeros((2, 0))
        line: NDArray[np.float64] = dirs[:1].T
        if all(_parallel(line[:, 0], u) for u in dirs[1:]):
            return line
        return np.eye(2)

    def scaled_adjugate_det(self) -> tuple[NDArray[np.float64], float, float]:
        """``adj(F) / s``, ``det(F) / s²`` and the scale s (the largest value), F the sum."""
        scale = float(self.values.max())
        lam = self.values / scale
        u0, u1 = self.dirs[:, 0], self.dirs[:, 1]
        cross = np.outer(u0, u1) - np.outer(u1, u0)
        det = 0.5 * float(lam @ (cross**2) @ lam)
        perp = np.stack([-u1, u0], axis=1)
        return (perp.T * lam) @ perp, det, scale

    def covariance(self, basis: NDArray[np.float64]) -> NDArray[np.float64]:
        """The covariance (2, 2) on the directions `basis` (from :meth:`span`): the inverse of
        the information there, zero outside."""
        if basis.shape[1] == 2:
            adj, det, scale = self.scaled_adjugate_det()
            out: NDArray[np.float64] = adj / (det * scale)
            return out
        if basis.shape[1] == 0:
            return np.zeros((2, 2))
        e = basis[:, 0]
        return np.outer(e, e) / float(self.values @ (self.dirs @ e) ** 2)

    def extremes(self) -> tuple[float, float]:
        """Smallest and largest eigenvalue of the sum, from its trace and determinant."""
        adj, det, scale = self.scaled_adjugate_det()
        trace = float(np.trace(adj))
        top = 0.5 * (trace + math.sqrt(max(trace * trace - 4.0 * det, 0.0)))
        return det / top * scale, top * scale


@dataclass(frozen=True)
class _Term:
    """One group's share of the normal equations in the tangent plane (one source, or the
    sources linked by ``cross_cov``): ``f = Hᵀ W H`` in eigen form, ``g = Hᵀ W x`` (2,) and
    ``q = xᵀ W x``, with H the stacked 2x2 identities, x the group's stacked tangent coordinates
    and W its information."""

    f: _Information
    g: NDArray[np.float64]
    q: float


@dataclass(frozen=True)
class _Linear:
    """The problem linearised in the tangent plane of `up`: the stacked tangent coordinates `x`
    (2n,) of the sources, each source's information carried to this plane (`sources`), each
    group's `terms` (in the order of the groups), the joint covariance (2m, 2m) of each group
    linked by ``cross_cov`` (keyed by its first index), and the totals ``f = Σ f_g``,
    ``g = Σ g_g``, ``q = Σ q_g``."""

    x: NDArray[np.float64]
    sources: list[_Information]
    terms: list[_Term]
    group_cov: Mapping[int, NDArray[np.float64]]
    f: _Information
    g: NDArray[np.float64]
    q: float

    def solve(self) -> NDArray[np.float64]:
        """The Gauss–Newton step ``f⁻¹ g`` (2,)."""
        return self.f.covariance(np.eye(2)) @ self.g

    def matrix(self) -> NDArray[np.float64]:
        """The fused information as a (2, 2) matrix."""
        f = (self.f.dirs.T * self.f.values) @ self.f.dirs
        out: NDArray[np.float64] = 0.5 * (f + f.T)
        return out


def _linearise(
    up: NDArray[np.float64],
    sources: list[_Source],
    groups: list[list[int]],
    pairs: Mapping[tuple[int, int], NDArray[np.float64]],
) -> _Linear:
    b = tangent_basis(up)
    # Each information stays in eigen form, its eigenvectors carried along the geodesic:
    # ``J x = Σ λ_p (u_pᵀ x) u_p``. A 2x2 matrix J of a source 1e12 times more precise than the
    # others would round its entries by 1e-16 of its largest eigenvalue, more than the others'
    # information in its blind direction.
    infos = [
        _Information(s.values, s.directions @ _rotation_between(s.up, up).T @ b.T) for s in sources
    ]
    coords = [b @ _log(up, s.up) for s in sources]
    terms: list[_Term] = []
    group_cov: dict[int, NDArray[np.float64]] = {}
    for group in groups:
        if len(group) == 1:
            (i,) = group
            info = infos[i]
            proj = info.dirs @ coords[i]
            g = info.dirs.T @ (info.values * proj)
            terms.append(_Term(info, g, float(info.values @ proj**2)))
            continue
        m = len(group)
        cov = np.zeros((2 * m, 2 * m))
        for a, i in enumerate(group):
            d = infos[i].dirs
            cov[2 * a : 2 * a + 2, 2 * a : 2 * a + 2] = (d.T / infos[i].values) @ d
            for c, j in enumerate(group[a + 1 :], start=a + 1):
                cross = pairs.get((i, j))
                if cross is not None:
                    rot_i = _rotation_between(sources[i].up, up)
                    rot_j = _rotation_between(sources[j].up, up)
                    block = b @ rot_i @ cross @ rot_j.T @ b.T
                    cov[2 * a : 2 * a + 2, 2 * c : 2 * c + 2] = block
                    cov[2 * c : 2 * c + 2, 2 * a : 2 * a + 2] = block.T
        cov = 0.5 * (cov + cov.T)
        # Decided on the correlations (the covariance scaled to unit diagonal): sources of very
        # different precision are not mistaken for a singular joint covariance.
        rcond = reciprocal_condition(cov, gram=True)
        if not rcond**2 > CORRELATION_RTOL:
            raise ValueError(
                f"Expected `cross_cov` to give the estimates {group} a positive definite joint "
                f"covariance, got a correlation matrix of eigenvalue ratio {rcond**2:.3g} (at "
                f"most {CORRELATION_RTOL:g}): a correlation beyond 1."
            )
        group_cov[group[0]] = cov
        terms.append(_joint_term(cov, np.concatenate([coords[i] for i in group])))
    return _Linear(
        x=np.concatenate(coords),
        sources=infos,
        terms=terms,
        group_cov=group_cov,
        f=_Information.join([t.f for t in terms]),
        g=sum((t.g for t in terms), np.zeros(2)),
        q=math.fsum(t.q for t in terms),
    )


def _joint_term(cov: NDArray[np.float64], x: NDArray[np.float64]) -> _Term:
    """The share of the normal equations of sources with joint covariance `cov` (2m, 2m) and
    stacked tangent coordinates `x` (2m,)."""
    w = _scaled_inverse(cov)
    h = np.tile(np.eye(2), (x.size // 2, 1))
    f = h.T @ w @ h
    vals, vecs = np.linalg.eigh(0.5 * (f + f.T))
    return _Term(_Information(vals, vecs.T), h.T @ w @ x, float(x @ w @ x))


def _scaled_inverse(cov: NDArray[np.float64]) -> NDArray[np.float64]:
    """The inverse of a positive definite covariance, computed on its correlation matrix (exact
    whatever the ratio of its variances)."""
    s = 1.0 / np.sqrt(np.diag(cov))
    vals, vecs = np.linalg.eigh((cov * s[:, None]) * s[None, :])
    inv = (vecs / vals) @ vecs.T
    out: NDArray[np.float64] = (inv * s[:, None]) * s[None, :]
    return 0.5 * (out + out.T)


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
        key=lambda i: (sources[i].rank, float(sources[i].values[0])),
    )
    return sources[best].up


def _determined(f: _Information) -> bool:
    low, top = f.extremes()
    return bool(np.all(informative(np.array([low, top]))))


def _parallel(a: NDArray[np.float64], b: NDArray[np.float64]) -> bool:
    """Whether unit vectors `a` and `b` (2,) span one line: the unit-weight information
    ``a aᵀ + b bᵀ`` then has eigenvalue ratio (1 - |cos|) / (1 + |cos|) = (sin / (1 + |cos|))²
    at most RANK_RTOL, the rank test of a single source (independent of their weights)."""
    sin = abs(float(a[0] * b[1] - a[1] * b[0]))
    return sin / (1.0 + abs(float(a @ b))) <= math.sqrt(RANK_RTOL)


def _common(a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    """Orthonormal columns spanning the intersection of the column spaces of `a` and `b`."""
    if a.shape[1] == 2:
        return b
    if b.shape[1] == 2 or (a.shape[1] == 1 and b.shape[1] == 1 and _parallel(a[:, 0], b[:, 0])):
        return a
    return np.zeros((2, 0))


def _leave_one_out(lin: _Linear, groups: list[list[int]]) -> tuple[list[float], list[int]]:
    """Per source k: the test of its difference from the fusion of the others, and its dof.

    ``t_k = d_kᵀ (C_k + C_-k)⁻¹ d_k`` on the directions both determine, with ``d_k`` source k's
    tangent coordinates minus the others' fusion and ``C_-k`` that fusion's covariance. The
    others' normal equations are summed afresh without k (never the full ones minus k's share)
    and the two covariances are added, never subtracted: no cancellation, whatever the ratio of
    the sources' precisions. For a source linked by ``cross_cov``, its part predictable from the
    others of its group is removed first (the Gaussian conditional): ``y = x_k - K x_o``,
    ``K = C_ko C_oo⁻¹``, measures ``(I - K H_o) δ`` with the covariance
    ``C_kk - K C_ok``, independent of every other source. In the linear model ``t_k`` is the drop
    of χ² when source k gets a free bias.
    """
    eye = np.eye(2)
    group_of = {i: g for g, group in enumerate(groups) for i in group}
    stats, dofs = [], []
    for k in range(len(lin.sources)):
        own = group_of[k]
        group = groups[own]
        parts = [t.f for g, t in enumerate(lin.terms) if g != own]
        g_rest = sum((t.g for g, t in enumerate(lin.terms) if g != own), np.zeros(2))
        xk = lin.x[2 * k : 2 * k + 2]
        if len(group) == 1:
            mine = lin.sources[k]
            seen = mine.span()
            cov_k = (mine.dirs.T / mine.values) @ mine.dirs
            y, mix = xk, eye
        else:
            # Condition on the rest of the group: y = x_k - K x_o measures (I - K H_o) δ.
            cov = lin.group_cov[group[0]]
            a = group.index(k)
            at = np.array([2 * a, 2 * a + 1])
            rest = np.array([c for j in range(len(group)) if j != a for c in (2 * j, 2 * j + 1)])
            c_oo, c_ok = cov[np.ix_(rest, rest)], cov[np.ix_(rest, at)]
            x_o = lin.x[np.concatenate([[2 * i, 2 * i + 1] for i in group if i != k])]
            rest_term = _joint_term(c_oo, x_o)
            parts.append(rest_term.f)
            g_rest = g_rest + rest_term.g
            gain = c_ok.T @ _scaled_inverse(c_oo)
            seen = eye
            cov_k = cov[np.ix_(at, at)] - gain @ c_ok
            y, mix = xk - gain @ x_o, eye - gain @ np.tile(eye, (len(group) - 1, 1))
        others = _Information.join(parts)
        determined = others.span()
        cov_rest = others.covariance(determined)
        d = y - mix @ (cov_rest @ g_rest)
        common = _common(seen, determined)
        dofs.append(common.shape[1])
        if common.shape[1] == 0:
            stats.append(0.0)
            continue
        total = common.T @ (cov_k + mix @ cov_rest @ mix.T) @ common
        dc = common.T @ d
        stats.append(max(float(dc @ np.linalg.solve(0.5 * (total + total.T), dc)), 0.0))
    return stats, dofs


def _check_determined(lin: _Linear) -> None:
    """Refuse a fused information that determines one tangent direction of `up` only."""
    if not _determined(lin.f):
        raise DegenerateGeometryError(
            "Expected the `estimates` together to determine both directions of `up`, got "
            f"information along one tangent direction only (the other below {RANK_RTOL:g} of "
            "it: rank-1 estimates sharing their undetermined direction)."
        )


@dataclass(frozen=True)
class Solution:
    """The fusion of checked sources: `up`, its linearised problem there, the statistic and,
    when asked for, the leave-one-out statistics and their degrees of freedom."""

    up: NDArray[np.float64]
    lin: _Linear
    chi2: float
    converged: bool
    n_iter: int
    loo: list[float]
    loo_dof: list[int]

    def information(self) -> NDArray[np.float64]:
        """The fused information, (3, 3) 1/rad²."""
        b = tangent_basis(self.up)
        info = b.T @ self.lin.matrix() @ b
        out: NDArray[np.float64] = 0.5 * (info + info.T)
        return out


@dataclass(frozen=True)
class Checked:
    """The estimates checked: their sources, the pairs of `cross_cov`, the groups it links and
    the union of the fingerprints."""

    sources: list[_Source]
    pairs: dict[tuple[int, int], NDArray[np.float64]]
    groups: list[list[int]]
    fingerprint: frozenset[str]


def check_estimates(estimates: tuple[Any, ...], cross_cov: Any) -> Checked:
    """The estimates of :func:`~gravdir.fusion.fuse_up` and its `cross_cov`, checked."""
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
    return Checked(sources, pairs, _groups(n, pairs), fingerprint)


def with_model_error(sources: list[_Source], variance: float) -> list[_Source]:
    """The sources with an independent isotropic error of `variance` rad² per tangent direction
    added: each eigenvalue λ of an information becomes ``λ / (1 + λ variance)`` (its
    covariance ``1/λ`` grows by `variance`, along the directions the source determines)."""
    if variance == 0.0:
        return sources
    return [_Source(s.up, s.values / (1.0 + s.values * variance), s.directions) for s in sources]


def solve(
    sources: list[_Source],
    groups: list[list[int]],
    pairs: Mapping[tuple[int, int], NDArray[np.float64]],
    max_iter: int,
    xtol: float,
    *,
    leave_one_out: bool = True,
) -> Solution:
    """Fuse checked sources: Gauss–Newton on the sphere, the consistency statistic and (unless
    `leave_one_out` is false) each source's statistic against the others."""

    def evaluate(
        trial: NDArray[np.float64], _step: NDArray[np.float64], _lin: _Linear
    ) -> tuple[float, _Linear]:
        lin = _linearise(trial, sources, groups, pairs)
        _check_determined(lin)
        return lin.q, lin

    def linearise(
        _up: NDArray[np.float64], _basis: NDArray[np.float64], lin: _Linear
    ) -> Linearisation:
        # The information from its square root, rows ``sqrt(λ_p) u_p``: no information is lost
        # to rounding when one term is 1e12 times another.
        root = np.sqrt(lin.f.values)[:, None] * lin.f.dirs
        return Linearisation(grad=lin.g, jacobian=root)

    with np.errstate(under="ignore"):
        start = _start(sources)
        first = _linearise(start, sources, groups, pairs)
        _check_determined(first)
        run = refine_direction(
            start, first.q, first, evaluate, linearise, max_iter=max_iter, xtol=xtol
        )
        lin = run.state
        chi2 = max(lin.q - float(lin.g @ lin.solve()), 0.0)
        stats, dofs = _leave_one_out(lin, groups) if leave_one_out else ([], [])
    return Solution(run.up, lin, chi2, run.converged, run.n_iter, stats, dofs)


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
