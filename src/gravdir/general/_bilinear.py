"""Linear algebra of the bilinear sweep model shared by the estimator and the bound.

Sweep ``i`` of group ``k`` gives :math:`y_i = M_i(\\mathrm{up})\\, x_k` with :math:`w_k = E_k x_k`
and :math:`M_i` linear in `up`; whitened by the Cholesky factor of each pair's covariance.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from gravdir._sphere import tangent_basis
from gravdir.errors import DegenerateGeometryError
from gravdir.general._model import _ATOL


class _Swept(Protocol):
    """What the grouping needs of a sweep record (JointSweep or PlannedSweep)."""

    @property
    def joint(self) -> int: ...

    @property
    def rotation(self) -> NDArray[np.float64]: ...

    @property
    def joint_axis(self) -> NDArray[np.float64]: ...

    @property
    def group(self) -> Hashable | None: ...


@dataclass(frozen=True)
class _Problem:
    """Whitened data and geometry of a set of sweeps, grouped by shared moment."""

    p: NDArray[np.float64]  # (S, 3, 2): R E, so alpha = up^T P x
    qm: NDArray[np.float64]  # (S, 3, 2): R (a x E), so beta = up^T Q x
    whiten: NDArray[np.float64]  # (S, 2, 2): G^-1 with C = G G^T
    z: NDArray[np.float64]  # (S, 2): whitened (alpha, beta)
    group_of: NDArray[np.int64]  # (S,): group index of each sweep
    bases: NDArray[np.float64]  # (G, 3, 2): E of each group, link frame
    axes: NDArray[np.float64]  # (G, 3): axis of each group, link frame


def _make_problem(
    rotations: NDArray[np.float64],
    axes: NDArray[np.float64],
    group_of: NDArray[np.int64],
    n_groups: int,
    y: NDArray[np.float64],
    cov: NDArray[np.float64],
    floor: float = 0.0,
) -> _Problem:
    """The whitened problem of pairs `y` (S, 2) with covariances `cov` (S, 2, 2).

    `floor` is added to the eigenvalues of every covariance (rounding-size negative eigenvalues
    count as zero first). A sweep whose covariance is not finite gets no weight: its whitening
    matrix and whitened pair are zero. Every finite covariance must be positive definite after
    the floor (the callers make it so).
    """
    group_axes = np.empty((n_groups, 3))
    for g in range(n_groups):
        group_axes[g] = axes[int(np.flatnonzero(group_of == g)[0])]
    bases = np.swapaxes(tangent_basis(group_axes), -1, -2)  # columns (G, 3, 2)
    e = bases[group_of]  # (S, 3, 2)
    ae = np.cross(group_axes[group_of][:, None, :], np.swapaxes(e, -1, -2))  # (S, 2, 3)
    p = rotations @ e
    qm = rotations @ np.swapaxes(ae, -1, -2)
    good = np.isfinite(cov).all(axis=(-2, -1))
    whiten = np.zeros_like(cov)
    if good.any():
        # C = V diag(lam) V^T is whitened by diag(lam)^(-1/2) V^T, whatever its conditioning.
        sym = 0.5 * (cov[good] + np.swapaxes(cov[good], -1, -2))
        lam, vec = np.linalg.eigh(sym)
        lam = np.maximum(lam, 0.0) + floor
        if not np.all(lam > 0.0):
            raise DegenerateGeometryError(
                "Expected every sweep in `sweeps` to have a positive definite (alpha, beta) "
                "covariance, got a singular one."
            )
        whiten[good] = np.swapaxes(vec, -1, -2) / np.sqrt(lam)[..., :, None]
    z = (whiten @ y[..., None])[..., 0]
    return _Problem(p, qm, whiten, z, group_of, bases, group_axes)


def _model_matrix(prob: _Problem, up: NDArray[np.float64]) -> NDArray[np.float64]:
    """M (..., S, 2, 2) with (alpha, beta) = M x; `up` has shape (..., 3)."""
    rows_a = np.einsum("...k,skj->...sj", up, prob.p)
    rows_b = np.einsum("...k,skj->...sj", up, prob.qm)
    return np.stack([rows_a, rows_b], axis=-2)


def _group_sums(
    prob: _Problem, a: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Per-group normal matrices (..., G, 2, 2) and right-hand sides (..., G, 2).

    `a` (..., S, 2, 2) is the whitened model matrix of every sweep.
    """
    onehot = (prob.group_of[:, None] == np.arange(prob.bases.shape[0])).astype(np.float64)
    normal = np.einsum("sg,...sji,...sjk->...gik", onehot, a, a)
    rhs = np.einsum("sg,...sji,sj->...gi", onehot, a, prob.z)
    scale = np.trace(normal, axis1=-2, axis2=-1)[..., None, None]
    # A group whose sweeps all have up along their axes has a singular normal matrix: the tiny
    # ridge keeps the solve finite and leaves that group's (zero) contribution unchanged.
    normal = normal + (1e-12 * scale + 1e-300) * np.eye(2)
    return normal, rhs


def _projected_cost(prob: _Problem, up: NDArray[np.float64]) -> NDArray[np.float64]:
    """Weighted residual sum of squares with every group's x eliminated, for `up` (..., 3)."""
    normal, rhs = _group_sums(prob, prob.whiten @ _model_matrix(prob, up))
    x = np.linalg.solve(normal, rhs[..., None])[..., 0]
    explained = np.einsum("...gi,...gi->...", rhs, x)
    out: NDArray[np.float64] = float(np.sum(prob.z**2)) - explained
    return out


def _project(prob: _Problem, up: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
    """The projected cost at `up` (3,) and the weighted least-squares x (G, 2) of every group.

    The cost is summed from the residuals themselves: ``sum(z**2) - rhs . x`` (as in
    :func:`_projected_cost`, good enough to rank grid points) cancels catastrophically near an
    exact fit, where the whitened data are large and the residuals at rounding level.
    """
    a = prob.whiten @ _model_matrix(prob, up)
    normal, rhs = _group_sums(prob, a)
    x = np.asarray(np.linalg.solve(normal, rhs[..., None])[..., 0], dtype=np.float64)
    resid = prob.z - np.einsum("sij,sj->si", a, x[prob.group_of])
    return float(np.sum(resid**2)), x


def _residuals(
    prob: _Problem, up: NDArray[np.float64], x: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Whitened residuals (S, 2) of every sweep's (alpha, beta) for `up` and moments `x`."""
    model = np.einsum("sij,sj->si", prob.whiten @ _model_matrix(prob, up), x[prob.group_of])
    out: NDArray[np.float64] = prob.z - model
    return out


def _jacobian(
    prob: _Problem, up: NDArray[np.float64], dup: NDArray[np.float64], x: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Whitened Jacobian (2S, 2 + 2G) of the model (alpha, beta) w.r.t. (t, x).

    `dup` (2, 3) holds d up / d t_l in its rows.
    """
    n_sweeps = prob.group_of.size
    n_groups = prob.bases.shape[0]
    xs = x[prob.group_of]  # (S, 2)
    # d(alpha, beta)/d t_l = (dup_l^T P x, dup_l^T Q x)
    da = np.einsum("lk,skj,sj->sl", dup, prob.p, xs)
    db = np.einsum("lk,skj,sj->sl", dup, prob.qm, xs)
    jt = prob.whiten @ np.stack([da, db], axis=-2)  # (S, 2, 2)
    jx = prob.whiten @ _model_matrix(prob, up)  # (S, 2, 2)
    jac = np.zeros((n_sweeps, 2, 2 + 2 * n_groups))
    jac[:, :, :2] = jt
    for s in range(n_sweeps):
        g = int(prob.group_of[s])
        jac[s, :, 2 + 2 * g : 4 + 2 * g] = jx[s]
    return jac.reshape(2 * n_sweeps, 2 + 2 * n_groups)


def _reduced_normal(
    jac: NDArray[np.float64], residual: NDArray[np.float64] | None = None
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """The normal equations of the tangent parameters with the moments eliminated.

    Returns the Schur complement (2, 2) of the x block of :math:`J^\\top J` (the reduced
    information), the reduced gradient (2,) :math:`J_t^\\top r - J_t^\\top J_x (J_x^\\top
    J_x)^+ J_x^\\top r` (zeros when `residual` is None) and the unreduced up block (2, 2).
    """
    fisher = jac.T @ jac
    ftt = fisher[:2, :2]
    ftx = fisher[:2, 2:]
    # A group whose moment is unobservable (every sweep with up along its axis) has a zero block
    # here; the pseudo-inverse drops it, which is its exact contribution (none).
    fxx_pinv = np.linalg.pinv(fisher[2:, 2:], rcond=1e-13, hermitian=True)
    reduced = ftt - ftx @ fxx_pinv @ ftx.T
    gradient = np.zeros(2)
    if residual is not None:
        jr = jac.T @ residual
        gradient = jr[:2] - ftx @ (fxx_pinv @ jr[2:])
    return 0.5 * (reduced + reduced.T), gradient, ftt


def _up_information(
    prob: _Problem,
    up: NDArray[np.float64],
    x: NDArray[np.float64],
    rcond: float,
    what: str,
) -> tuple[NDArray[np.float64], float]:
    """The reduced information of `up` in the tangent plane, (2, 2), and its condition number.

    The rows of :func:`gravdir._sphere.tangent_basis` at `up` are the tangent basis. Raises
    DegenerateGeometryError (naming `what`) when the information is singular.
    """
    information, _, unreduced = _reduced_normal(_jacobian(prob, up, tangent_basis(up), x))
    if not (np.isfinite(information).all() and np.isfinite(unreduced).all()):
        raise ValueError(
            f"Expected the {what} in `sweeps` to give a finite Fisher information of `up`, got "
            "an overflow: amplitudes or moments and noise levels differ by more than the float "
            "range."
        )
    eig = np.linalg.eigvalsh(information)
    top = float(np.linalg.eigvalsh(unreduced)[-1])
    if top <= 0.0 or eig[0] <= rcond * top:
        raise DegenerateGeometryError(
            f"Expected the {what} in `sweeps` to determine `up`, got a singular Fisher "
            f"information (eigenvalues {eig[0]:.3g}, {eig[1]:.3g}; unreduced scale {top:.3g}): "
            "the moments are zero or the axes leave a direction of `up` free."
        )
    return information, float(eig[1] / eig[0])


def _up_variance_shares(
    prob: _Problem, up: NDArray[np.float64], x: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Each sweep's share (S,) of the trace of `up`'s covariance in the tangent plane, rad²:
    ``|J_s C_t|_F^2`` with ``C = (J^T J)^+`` and ``C_t`` its tangent columns (they sum to the
    trace of the reduced inverse)."""
    jac = _jacobian(prob, up, tangent_basis(up), x)
    cov = np.linalg.pinv(jac.T @ jac, rcond=1e-13, hermitian=True)
    rows = (jac @ cov[:, :2]).reshape(-1, 2, 2)  # sweep s's rows times C's tangent columns
    return np.asarray(np.einsum("sij,sij->s", rows, rows), dtype=np.float64)


def _group_index(
    keys: Sequence[Hashable], joints: Sequence[int], axes: NDArray[np.float64], name: str
) -> tuple[NDArray[np.int64], list[Hashable]]:
    order: list[Hashable] = []
    index = np.empty(len(keys), dtype=np.int64)
    first: dict[Hashable, int] = {}
    for i, key in enumerate(keys):
        if key not in first:
            first[key] = i
            order.append(key)
        j = first[key]
        index[i] = order.index(key)
        if joints[i] != joints[j]:
            raise ValueError(
                f"Expected the sweeps of group {key!r} in `{name}` to sweep one joint, got "
                f"joints {joints[j]} and {joints[i]}."
            )
        if np.max(np.abs(axes[i] - axes[j])) > _ATOL:
            raise ValueError(
                f"Expected the sweeps of group {key!r} in `{name}` to share one `joint_axis`, got "
                f"{np.round(axes[j], 6).tolist()} and {np.round(axes[i], 6).tolist()}."
            )
    return index, order


def _check_geometry(
    rotations: NDArray[np.float64],
    axes: NDArray[np.float64],
    group_of: NDArray[np.int64],
    keys: list[Hashable],
    joints: Sequence[int],
    parallel_tol: float,
) -> None:
    """Raise DegenerateGeometryError unless some group has sweeps about non-parallel axes."""
    base_axes = np.einsum("sij,sj->si", rotations, axes)
    multi = []
    for g, key in enumerate(keys):
        members = np.flatnonzero(group_of == g)
        if members.size < 2:
            continue
        multi.append(key)
        cross = np.linalg.norm(np.cross(base_axes[members][:, None], base_axes[members]), axis=-1)
        if float(cross.max()) > parallel_tol:
            return
    if not multi:
        j1 = all(j == 0 for j in joints)
        detail = (
            "only J1 (joint 0) sweeps were given: a J1 sweep alone says nothing about `up`"
            if j1
            else "every group (joint and distal posture) has a single sweep, whose moment "
            "absorbs all it says about `up`"
        )
        raise DegenerateGeometryError(
            f"Expected `sweeps` to hold a group with at least 2 sweeps, got {len(keys)} "
            f"group(s) of one sweep each: {detail}. Sweep one joint (e.g. J2) at several "
            "positions of the joints before it."
        )
    raise DegenerateGeometryError(
        f"Expected a group in `sweeps` whose sweeps turn about non-parallel axes in the base "
        f"frame, got parallel axes (within {parallel_tol:g}) in every group with several sweeps "
        f"({', '.join(repr(k) for k in multi)}): sweeps about one axis line (e.g. J2 sweeps "
        "at J1 = θ1 and θ1 + π, or J1 sweeps only) leave a one-parameter family of `up`. "
        "Add a sweep of that joint with the joints before it moved by about 90°."
    )


@dataclass(frozen=True)
class _Groups:
    """Kinematics of a set of sweeps and the group each belongs to."""

    rotations: NDArray[np.float64]  # (S, 3, 3)
    axes: NDArray[np.float64]  # (S, 3), link frames
    group_of: NDArray[np.int64]  # (S,)
    keys: list[Hashable]  # (G,), in order of first appearance


def _sweep_groups(items: Sequence[_Swept], parallel_tol: float) -> _Groups:
    """Group the sweeps by key and check that some group can determine `up`."""
    rotations = np.stack([s.rotation for s in items])
    axes = np.stack([s.joint_axis for s in items])
    joints = [s.joint for s in items]
    group_of, keys = _group_index([s.group for s in items], joints, axes, "sweeps")
    _check_geometry(rotations, axes, group_of, keys, joints, parallel_tol)
    return _Groups(rotations, axes, group_of, keys)
