"""The linear-in-parameters torque model of a motion log, reduced to per-joint Gram blocks.

For joint ``j`` and sample ``s`` the measured torque is modelled as

.. math::

    \\tau_{sj} = k_j \\bigl(Y_0 + g \\textstyle\\sum_k u_k Y_k\\bigr)_{sj} B \\beta
    + c_{sj}^\\top \\theta_j + e_{sj},

with :math:`Y_0` the regressor without gravity (the known base acceleration included),
:math:`Y_k` the regressor at rest with unit base acceleration along base axis ``k``, :math:`B`
the selection of the base parameters :math:`\\beta`, :math:`c_{sj} = (\\ddot q, \\operatorname{sign}
\\dot q, \\dot q, 1)` the joint columns and :math:`\\theta_j` armature, Coulomb, viscous and offset.
Write :math:`A_j = [Y_{0,j} B, Y_{1,j} B, Y_{2,j} B, Y_{3,j} B, C_j]` (samples by ``4p + 4``); the
model of joint ``j`` is :math:`A_j m_j` with :math:`m_j = (k_j s(u) \\otimes \\beta, \\theta_j)`,
:math:`s(u) = (1, g u_1, g u_2, g u_3)`. The weighted Gram blocks :math:`A_j^\\top W_j A_j`,
:math:`A_j^\\top W_j \\tau_j` and :math:`\\tau_j^\\top W_j \\tau_j` are formed once; every
evaluation of the likelihood, its gradient and its Gauss--Newton information afterwards costs
nothing per sample.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from gravdir.dynamics import BaseParameters, inverse_dynamics_regressor
from gravdir.kinematics import SerialChain

# Samples whose regressors are formed at once: 2000 samples of a 7-joint chain hold 4 x 8 MB.
_CHUNK = 2000
N_JOINT_COLUMNS = 4


def joint_torque(
    joint_parameters: NDArray[np.float64], qd: NDArray[np.float64], qdd: NDArray[np.float64]
) -> NDArray[np.float64]:
    """The joint terms of the model, armature, Coulomb, viscous and offset: (N, n) from the
    (n, 4) parameters and the joint velocities and accelerations (N, n)."""
    jp = joint_parameters
    out: NDArray[np.float64] = jp[:, 0] * qdd + jp[:, 1] * np.sign(qd) + jp[:, 2] * qd + jp[:, 3]
    return out


@dataclass(frozen=True)
class _Design:
    """Per-joint Gram blocks of one log (weights already applied)."""

    gram: NDArray[np.float64]  # (n, m, m), m = 4 p + 4; n counts pseudo-joints (below)
    cross: NDArray[np.float64]  # (n, m)
    tt: NDArray[np.float64]  # (n,)
    count: NDArray[np.float64]  # (n,) samples used per joint (sum of the weights)
    # (n, m, m) Gram blocks with the squared weights, for the sandwich covariance (None when
    # every weight is 0 or 1, where they equal `gram`)
    gram_sq: NDArray[np.float64] | None
    base: BaseParameters
    gravity: float
    joint_mask: NDArray[np.bool_]  # (4,) which joint columns the model carries
    # (n,) the joint whose joint parameters each pseudo-joint shares (None: its own)
    groups: NDArray[np.int64] | None = None

    @property
    def n(self) -> int:
        return int(self.gram.shape[0])

    @property
    def theta_groups(self) -> NDArray[np.int64]:
        """Index of each (pseudo-)joint's joint parameters."""
        return np.arange(self.n) if self.groups is None else self.groups

    @property
    def n_theta(self) -> int:
        """Sets of joint parameters."""
        return self.n if self.groups is None else int(self.groups.max()) + 1

    @property
    def p(self) -> int:
        return self.base.rank


def _rows(
    chain: SerialChain,
    base: BaseParameters,
    q: NDArray[np.float64],
    qd: NDArray[np.float64],
    qdd: NDArray[np.float64],
    base_acceleration: NDArray[np.float64] | None,
) -> NDArray[np.float64]:
    """``A`` of every joint for a chunk of samples: shape (n, samples, 4 p + 4)."""
    keep = base.independent
    y0 = inverse_dynamics_regressor(chain, q, qd, qdd, base_acceleration=base_acceleration)
    zero = np.zeros_like(q)
    yk = inverse_dynamics_regressor(chain, q, zero, zero, base_acceleration=np.eye(3)[:, None])
    blocks = [y0[..., keep]] + [yk[k][..., keep] for k in range(3)]
    a = np.concatenate(blocks, axis=-1)  # (samples, n, 4p)
    cols = np.stack([qdd, np.sign(qd), qd, np.ones_like(qd)], axis=-1)  # (samples, n, 4)
    return np.concatenate([a, cols], axis=-1).transpose(1, 0, 2)


def build_designs(
    chain: SerialChain,
    base: BaseParameters,
    q: NDArray[np.float64],
    qd: NDArray[np.float64],
    qdd: NDArray[np.float64],
    weights: NDArray[np.float64],
    torques: NDArray[np.float64] | None,
    base_acceleration: NDArray[np.float64] | None,
    gravity: float,
    joint_mask: NDArray[np.bool_],
    driving: NDArray[np.bool_] | None = None,
) -> list[_Design]:
    """Gram blocks of one trajectory with torque logs `torques` (M, N, n) (or none: one design).

    `weights` (N, n) per joint and sample. The regressors are formed once for all the logs.
    With `driving` (N, n), each joint becomes two pseudo-joints, ``j`` with the samples where
    `driving` holds and ``n + j`` with the others, each with its own gain and noise level and
    both with the joint parameters of joint ``j``: the load-friction model of
    :func:`gravdir.estimate_up_from_motion`.
    """
    n = chain.n_joints
    split = driving is not None
    if driving is not None:
        weights = np.concatenate([weights * driving, weights * ~driving], axis=1)
        n = 2 * n
    m = 4 * base.rank + N_JOINT_COLUMNS
    n_logs = 1 if torques is None else torques.shape[0]
    gram = np.zeros((n, m, m))
    fractional = bool(np.any((weights > 0) & (weights < 1)))
    gram_sq = np.zeros((n, m, m)) if fractional else None
    cross = np.zeros((n_logs, n, m))
    tt = np.zeros((n_logs, n))
    for start in range(0, q.shape[0], _CHUNK):
        sl = slice(start, start + _CHUNK)
        w = weights[sl].T  # (n, s)
        if not np.any(w > 0):
            continue
        acc = None if base_acceleration is None else base_acceleration[sl]
        a = _rows(chain, base, q[sl], qd[sl], qdd[sl], acc)
        if split:
            a = np.concatenate([a, a])
        with np.errstate(over="ignore", invalid="ignore"):
            wa = a * w[..., None]
            gram += np.swapaxes(wa, 1, 2) @ a
            if gram_sq is not None:
                gram_sq += np.swapaxes(wa * w[..., None], 1, 2) @ a
            if torques is not None:
                t = np.swapaxes(torques[:, sl], 1, 2)  # (M, n, s)
                if split:
                    t = np.concatenate([t, t], axis=1)
                cross += (t[:, :, None, :] @ wa[None])[:, :, 0, :]
                tt += np.sum(w * t * t, axis=-1)
    if not (np.isfinite(gram).all() and np.isfinite(cross).all()):
        raise ValueError(
            "Expected `q`, `velocity`, `acceleration` and `base_acceleration` to keep the sums "
            "of squared regressors finite, got an overflow: are the units rad, rad/s, rad/s²?"
        )
    # Joint columns the model leaves out (no friction) are zeroed with their rows.
    drop = np.concatenate([np.zeros(4 * base.rank, bool), ~joint_mask])
    gram[:, drop, :] = 0.0
    gram[:, :, drop] = 0.0
    if gram_sq is not None:
        gram_sq[:, drop, :] = 0.0
        gram_sq[:, :, drop] = 0.0
    cross[:, :, drop] = 0.0
    count = weights.sum(axis=0)
    groups = np.tile(np.arange(chain.n_joints), 2) if split else None
    return [
        _Design(gram, cross[i], tt[i], count, gram_sq, base, gravity, joint_mask, groups)
        for i in range(n_logs)
    ]


def build_design(
    chain: SerialChain,
    base: BaseParameters,
    q: NDArray[np.float64],
    qd: NDArray[np.float64],
    qdd: NDArray[np.float64],
    weights: NDArray[np.float64],
    torque: NDArray[np.float64] | None,
    base_acceleration: NDArray[np.float64] | None,
    gravity: float,
    joint_mask: NDArray[np.bool_],
    driving: NDArray[np.bool_] | None = None,
) -> _Design:
    """Gram blocks of one log; `weights` (N, n) per joint and sample, `torque` (N, n) or None,
    `driving` as for :func:`build_designs`."""
    torques = None if torque is None else torque[None]
    return build_designs(
        chain, base, q, qd, qdd, weights, torques, base_acceleration, gravity, joint_mask, driving
    )[0]


def gain_basis(n: int, free: NDArray[np.bool_] | None = None) -> NDArray[np.float64]:
    """Orthonormal columns (n, f - 1) spanning the changes of the `free` gains (f of them,
    default all) that keep their mean; the other gains do not change."""
    index = np.arange(n) if free is None else np.flatnonzero(free)
    f = index.size
    out: NDArray[np.float64] = np.zeros((n, max(f - 1, 0)))
    if f > 1:
        u, _, _ = np.linalg.svd(np.eye(f) - 1.0 / f)
        out[index] = u[:, : f - 1]
    return out


@dataclass(frozen=True)
class Layout:
    """Where each parameter sits in the full vector: tangent (2), gains, base, joint."""

    n: int
    p: int
    n_gain: int  # n - 1 when the gains are estimated, 0 when fixed
    n_theta: int | None = None  # sets of joint parameters (default n)

    @property
    def theta_sets(self) -> int:
        return self.n if self.n_theta is None else self.n_theta

    @property
    def gain(self) -> slice:
        return slice(2, 2 + self.n_gain)

    @property
    def beta(self) -> slice:
        return slice(2 + self.n_gain, 2 + self.n_gain + self.p)

    def theta(self, j: int) -> slice:
        """The joint parameters of set `j`."""
        start = 2 + self.n_gain + self.p + N_JOINT_COLUMNS * j
        return slice(start, start + N_JOINT_COLUMNS)

    @property
    def size(self) -> int:
        return 2 + self.n_gain + self.p + N_JOINT_COLUMNS * self.theta_sets


def coefficients(
    design: _Design,
    up: NDArray[np.float64],
    gains: NDArray[np.float64],
    beta: NDArray[np.float64],
    theta: NDArray[np.float64],
) -> NDArray[np.float64]:
    """``m_j`` of every joint, shape (n, 4 p + 4)."""
    s = np.concatenate([[1.0], design.gravity * up])
    sb = np.kron(s, beta)
    return np.concatenate([gains[:, None] * sb[None, :], theta], axis=1)


def jacobians(
    design: _Design,
    layout: Layout,
    up: NDArray[np.float64],
    basis: NDArray[np.float64],
    gains: NDArray[np.float64],
    gain_dirs: NDArray[np.float64],
    beta: NDArray[np.float64],
) -> NDArray[np.float64]:
    """``d m_j / d(parameters)`` of every joint, shape (n, 4 p + 4, size)."""
    n, p, g = design.n, design.p, design.gravity
    s = np.concatenate([[1.0], g * up])
    sb = np.kron(s, beta)
    d = np.zeros((n, 4 * p + N_JOINT_COLUMNS, layout.size))
    for i in range(2):
        ds = np.concatenate([[0.0], g * basis[i]])
        d[:, : 4 * p, i] = gains[:, None] * np.kron(ds, beta)[None, :]
    if layout.n_gain:
        d[:, : 4 * p, layout.gain] = sb[None, :, None] * gain_dirs[:, None, :]
    kron = np.kron(s[:, None], np.eye(p))  # (4p, p)
    d[:, : 4 * p, layout.beta] = gains[:, None, None] * kron[None]
    groups = design.theta_groups
    for j in range(n):
        d[j, 4 * p :, layout.theta(int(groups[j]))] = np.diag(design.joint_mask.astype(float))
    return d


def normal_equations(
    design: _Design,
    m: NDArray[np.float64],
    d: NDArray[np.float64],
    inv_var: NDArray[np.float64],
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Information ``sum D^T G D / s^2``, gradient ``sum D^T (c - G m) / s^2`` and RSS per joint."""
    dt = np.swapaxes(d, 1, 2)
    gd = design.gram @ d
    info = np.sum((dt @ gd) * inv_var[:, None, None], axis=0)
    gm = (design.gram @ m[:, :, None])[:, :, 0]
    resid = design.cross - gm
    grad = np.sum((dt @ resid[:, :, None])[:, :, 0] * inv_var[:, None], axis=0)
    rss = design.tt - 2.0 * np.sum(m * design.cross, axis=1) + np.sum(m * gm, axis=1)
    return 0.5 * (info + info.T), grad, rss


# A null vector of the (unit-diagonal) information whose tangent part has at least this norm
# makes that tangent direction undetermined: the data cannot tell it from a change of the other
# parameters (a single joint trades the tilt against its moment, for example).
_NULL_TANGENT = 1e-3


def schur_tangent(info: NDArray[np.float64], rcond: float = 1e-12) -> NDArray[np.float64]:
    """The (2, 2) information of the tangent parameters with every other parameter profiled out.

    The inverse of the tangent block of the full covariance (the pseudo-inverse of `info`
    scaled to unit diagonal, eigenvalues below `rcond` of the largest dropped): the Schur
    complement, positive semi-definite however ill-conditioned the nuisance block. Parameters a
    trajectory does not excite drop out; a tangent direction that a null vector of `info` moves
    (compensated by other parameters) gets zero information.
    """
    diag = np.sqrt(np.maximum(np.diag(info), 0.0))
    scale = np.where(diag > 0, 1.0 / np.where(diag > 0, diag, 1.0), 0.0)
    vals, vecs = np.linalg.eigh(info * scale[:, None] * scale[None, :])
    keep = vals > rcond * max(float(vals.max()), 0.0)
    inv = np.where(keep, 1.0 / np.where(keep, vals, 1.0), 0.0)
    cov_t = (vecs[:2] * inv) @ vecs[:2].T * scale[:2, None] * scale[None, :2]
    vals_t, vecs_t = np.linalg.eigh(0.5 * (cov_t + cov_t.T))
    info_t = np.where(vals_t > 0, 1.0 / np.where(vals_t > 0, vals_t, 1.0), 0.0)
    out = (vecs_t * info_t) @ vecs_t.T
    null_t = vecs[:2, ~keep]  # tangent parts of the null vectors, scaled coordinates
    if null_t.size:
        u, sv, _ = np.linalg.svd(null_t * scale[:2, None], full_matrices=False)
        lost = u[:, sv > _NULL_TANGENT * np.where(scale[:2] > 0, scale[:2], 1.0).max()]
        if lost.size:
            proj = np.eye(2) - lost @ lost.T
            out = proj @ out @ proj
    if not (diag[:2] > 0).all():
        out = np.zeros((2, 2))
    return np.asarray(0.5 * (out + out.T), dtype=np.float64)


def scaled_pinv(info: NDArray[np.float64]) -> NDArray[np.float64]:
    """Pseudo-inverse of an information matrix after scaling it to unit diagonal."""
    diag = np.sqrt(np.maximum(np.diag(info), 0.0))
    scale = np.where(diag > 0, 1.0 / np.where(diag > 0, diag, 1.0), 0.0)
    inv = np.linalg.pinv(info * scale[:, None] * scale[None, :], rcond=1e-12, hermitian=True)
    return np.asarray(inv * scale[:, None] * scale[None, :], dtype=np.float64)


def gains_std(
    cov: NDArray[np.float64], layout: Layout, gain_dirs: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Standard deviation of every gain from the full covariance (zero for fixed gains)."""
    if not layout.n_gain:
        return np.zeros(layout.n)
    ck = gain_dirs @ cov[layout.gain, layout.gain] @ gain_dirs.T
    out: NDArray[np.float64] = np.sqrt(np.maximum(np.diag(ck), 0.0))
    return out
