"""The linear-in-parameters torque model of a motion log, reduced to per-joint Gram blocks.

For joint ``j`` and sample ``s`` the measured torque is modelled as

.. math::

    \\tau_{sj} = k_j \\bigl(Y_0 + g \\textstyle\\sum_k u_k Y_k\\bigr)_{sj} B \\beta
    + c_{sj}^\\top \\theta_j + e_{sj},

with :math:`Y_0` the regressor without gravity (the known base acceleration included),
:math:`Y_k` the regressor at rest with unit base acceleration along base axis ``k``, :math:`B`
the selection of the base parameters :math:`\\beta`, :math:`c_{sj} = (\\ddot q, \\operatorname{sign}
\\dot q, \\dot q, 1, \\dot q |\\dot q|)` the joint columns and :math:`\\theta_j` armature, Coulomb,
viscous friction, offset and quadratic friction.
Write :math:`A_j = [Y_{0,j} B, Y_{1,j} B, Y_{2,j} B, Y_{3,j} B, C_j]` (samples by ``4p + 5``); the
model of joint ``j`` is :math:`A_j m_j` with :math:`m_j = (k_j s(u) \\otimes \\beta, \\theta_j)`,
:math:`s(u) = (1, g u_1, g u_2, g u_3)`. The weighted Gram blocks :math:`A_j^\\top W_j A_j`,
:math:`A_j^\\top W_j \\tau_j` and :math:`\\tau_j^\\top W_j \\tau_j` are formed once; every
evaluation of the likelihood, its gradient and its Gauss--Newton information afterwards costs
nothing per sample.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from gravdir.dynamics import BaseParameters, _regressor_of_frames, _rest_regressors
from gravdir.kinematics import SerialChain, link_frames

# Values of the regressor rows formed at once (samples x joints x columns, 16 MB): 2000 samples
# of a 6-joint arm, fewer of a longer chain, so that the memory of a call does not grow with the
# joints faster than its Gram blocks.
_CHUNK_VALUES = 2_000_000
# The joint columns: armature, Coulomb, viscous, offset, quadratic (the order of the rows of
# `joint_parameters`, the older four first).
N_JOINT_COLUMNS = 5


def joint_columns(
    qd: NDArray[np.float64], qdd: NDArray[np.float64], sign: NDArray[np.float64] | None = None
) -> NDArray[np.float64]:
    """The joint columns ``(qdd, sign(qd), qd, 1, qd |qd|)``, shape ``qd.shape + (5,)``;
    `sign` replaces ``sign(qd)`` where given (a smoothed sign)."""
    sgn = np.sign(qd) if sign is None else np.broadcast_to(sign, qd.shape)
    return np.stack([qdd, sgn, qd, np.ones_like(qd), qd * np.abs(qd)], axis=-1)


def drop_duplicate_armature(columns: NDArray[np.float64]) -> None:
    """Zero joint 1's armature column of `columns` (of :func:`joint_columns`, joints on axis
    -2) in place: the joint columns the fits carry.

    Link 1 turns about joint 1's axis alone, so its inertia about that axis enters the torques
    only as ``I q̈_1`` on joint 1, which a base parameter carries: joint 1's armature column is
    that column. A fit with one gain per joint cannot split the two. One with load friction (a
    gain per sign of the load, applied to the base parameter and not to the armature) splits
    them only through the difference of its two gains: where joint 1's load friction is small,
    the data barely fix that direction and the search crawls along it. The base parameter
    carries the armature instead, and joint 1's armature in ``joint_parameters`` is zero.
    """
    columns[..., 0, 0] = 0.0


def joint_torque(
    joint_parameters: NDArray[np.float64], qd: NDArray[np.float64], qdd: NDArray[np.float64]
) -> NDArray[np.float64]:
    """The joint terms of the model (armature, Coulomb, viscous, offset, quadratic): (N, n)
    from the (n, 5) parameters and the joint velocities and accelerations (N, n)."""
    out: NDArray[np.float64] = np.einsum("...jc,jc->...j", joint_columns(qd, qdd), joint_parameters)
    return out


class _Source(NamedTuple):
    """The per-sample inputs of the Gram blocks of one log, to form its rows again."""

    chain: SerialChain
    q: NDArray[np.float64]
    qd: NDArray[np.float64]
    qdd: NDArray[np.float64]
    weights: NDArray[np.float64]  # (N, n) per (pseudo-)joint
    torque: NDArray[np.float64]  # (N, n_joints), in the design's units
    base_acceleration: NDArray[np.float64] | None
    split: bool  # each joint is two pseudo-joints (load friction)


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
    joint_mask: NDArray[np.bool_]  # (5,) which joint columns the model carries
    # (n,) the joint whose joint parameters each pseudo-joint shares (None: its own)
    groups: NDArray[np.int64] | None = None
    # the samples behind the blocks (a design of one log; None for several logs at once)
    source: _Source | None = None

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
    """``A`` of every joint for a chunk of samples: shape (n, samples, 4 p + 5). Values beyond
    the float range come out infinite, without a warning: the callers' sums refuse them."""
    keep = base.independent
    p = base.rank
    frames = link_frames(chain, q)
    acc = np.zeros(q.shape[:-1] + (3,)) if base_acceleration is None else base_acceleration
    a = np.empty((chain.n_joints, q.shape[0], 4 * p + N_JOINT_COLUMNS))
    with np.errstate(over="ignore", invalid="ignore"):
        a[..., :p] = np.swapaxes(_regressor_of_frames(frames, qd, qdd, acc)[..., keep], 0, 1)
        yk = _rest_regressors(frames)
        for k in range(3):
            a[..., (k + 1) * p : (k + 2) * p] = np.swapaxes(yk[k][..., keep], 0, 1)
        columns = joint_columns(qd, qdd)
        drop_duplicate_armature(columns)
        a[..., 4 * p :] = np.swapaxes(columns, 0, 1)
    return a


def _pseudo_weights(
    weights: NDArray[np.float64], driving: NDArray[np.bool_]
) -> NDArray[np.float64]:
    """The weights (N, 2 n) of the pseudo-joints: driving samples first, then braking ones."""
    return np.concatenate([weights * driving, weights * ~driving], axis=1)


def _accumulate(
    j: int,
    a: NDArray[np.float64],
    w: NDArray[np.float64],
    torques: NDArray[np.float64] | None,
    gram: NDArray[np.float64],
    gram_sq: NDArray[np.float64] | None,
    cross: NDArray[np.float64],
    tt: NDArray[np.float64],
    n_rows: int,
) -> None:
    """Add the rows `a` (s, m) of (pseudo-)joint `j` with weights `w` (s,) to its blocks; the
    torques (M, s, n_rows) or None. Rows of zero weight are left out before the products."""
    used = w > 0
    if not used.any():
        return
    t = None if torques is None else torques[:, :, j % n_rows]
    if not used.all():
        a, w = a[used], w[used]
        t = None if t is None else t[:, used]
    # B^T B with B = sqrt(W) A: one product of a matrix with its own transpose, which NumPy
    # hands to BLAS's syrk (half the multiplications of A^T (W A)).
    root = a * np.sqrt(w)[:, None]
    gram[j] += root.T @ root
    wa = a * w[:, None]
    if gram_sq is not None:
        gram_sq[j] += wa.T @ wa
    if t is not None:
        cross[:, j] += t @ wa
        tt[:, j] += (t * t) @ w


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
    split = driving is not None
    if driving is not None:
        weights = _pseudo_weights(weights, driving)
    return _build(
        chain, base, q, qd, qdd, weights, torques, base_acceleration, gravity, joint_mask, split
    )


def _build(
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
    split: bool,
) -> list[_Design]:
    """:func:`build_designs` with the weights (N, n or 2 n) of the (pseudo-)joints given."""
    n_rows = chain.n_joints
    n = weights.shape[1]  # (pseudo-)joints
    m = 4 * base.rank + N_JOINT_COLUMNS
    n_logs = 1 if torques is None else torques.shape[0]
    gram = np.zeros((n, m, m))
    fractional = bool(np.any((weights > 0) & (weights < 1)))
    gram_sq = np.zeros((n, m, m)) if fractional else None
    cross = np.zeros((n_logs, n, m))
    tt = np.zeros((n_logs, n))
    chunk = max(1, _CHUNK_VALUES // (n_rows * m))
    for start in range(0, q.shape[0], chunk):
        # Only the samples some (pseudo-)joint uses: a weight of zero adds nothing.
        w = weights[start : start + chunk].T  # (n, s)
        rows = start + np.flatnonzero(np.any(w > 0, axis=0))
        if not rows.size:
            continue
        w = w[:, rows - start]
        acc = None if base_acceleration is None else base_acceleration[rows]
        a = _rows(chain, base, q[rows], qd[rows], qdd[rows], acc)
        t = None if torques is None else torques[:, rows]  # (M, s, n_rows)
        with np.errstate(over="ignore", invalid="ignore"):
            for j in range(n):
                _accumulate(j, a[j % n_rows], w[j], t, gram, gram_sq, cross, tt, n_rows)
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
    split = driving is not None
    w = weights if driving is None else _pseudo_weights(weights, driving)
    design = _build(
        chain, base, q, qd, qdd, w, torques, base_acceleration, gravity, joint_mask, split
    )[0]
    if torque is None:
        return design
    source = _Source(chain, q, qd, qdd, w, torque, base_acceleration, split)
    return replace(design, source=source)


def design_rows(
    design: _Design,
) -> Iterator[tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]]:
    """The rows ``A`` (n, s, 4 p + 5), weights (n, s) and torques (n, s) of the design's log, in
    chunks of samples in order (the columns the model leaves out zeroed)."""
    src = design.source
    if src is None:
        raise ValueError("Expected a design of one log with its samples, got none.")
    n, m = design.n, 4 * design.p + N_JOINT_COLUMNS
    drop = np.concatenate([np.zeros(4 * design.p, bool), ~design.joint_mask])
    chunk = max(1, _CHUNK_VALUES // (n * m))
    for start in range(0, src.q.shape[0], chunk):
        sl = slice(start, start + chunk)
        acc = None if src.base_acceleration is None else src.base_acceleration[sl]
        a = _rows(src.chain, design.base, src.q[sl], src.qd[sl], src.qdd[sl], acc)
        t = src.torque[sl].T
        if src.split:
            a, t = np.concatenate([a, a]), np.concatenate([t, t])
        a[..., drop] = 0.0
        yield a, src.weights[sl].T, t


def model_vector(
    design: _Design,
    up: NDArray[np.float64],
    gains: NDArray[np.float64],
    beta: NDArray[np.float64],
    theta: NDArray[np.float64],
) -> NDArray[np.float64]:
    """``m_j = (k_j s(u) ⊗ β, θ_j)`` of every (pseudo-)joint, (n, 4 p + 5): ``A_j m_j`` is the
    model of joint ``j``."""
    s = np.concatenate([[1.0], design.gravity * up])
    return np.concatenate([gains[:, None] * np.kron(s, beta)[None, :], theta], axis=1)


def derivative(
    design: _Design,
    layout: Layout,
    up: NDArray[np.float64],
    basis: NDArray[np.float64],
    gains: NDArray[np.float64],
    gain_dirs: NDArray[np.float64],
    beta: NDArray[np.float64],
) -> NDArray[np.float64]:
    """The derivative ``D_j`` of ``m_j`` with respect to every parameter of `layout`, formed
    densely, (n, 4 p + 5, size): the tangent directions `basis` of `up`, the gain changes along
    `gain_dirs`, the base parameters and each joint's parameters."""
    n, p, g = design.n, design.p, design.gravity
    s = np.concatenate([[1.0], g * up])
    d = np.zeros((n, 4 * p + N_JOINT_COLUMNS, layout.size))
    for i in range(2):
        d[:, : 4 * p, i] = gains[:, None] * np.kron(np.concatenate([[0.0], g * basis[i]]), beta)
    if layout.n_gain:
        d[:, : 4 * p, layout.gain] = np.kron(s, beta)[None, :, None] * gain_dirs[:, None, :]
    d[:, : 4 * p, layout.beta] = gains[:, None, None] * np.kron(s[:, None], np.eye(p))[None]
    for j, group in enumerate(design.theta_groups):
        d[j, 4 * p :, layout.theta(int(group))] = np.diag(design.joint_mask * 1.0)
    return d


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


def weighted_base_blocks(
    gram: NDArray[np.float64], weights: NDArray[np.float64], p: int
) -> NDArray[np.float64]:
    """``sum_j w_j G_j^{ab}`` of the base-parameter blocks, shape (4, 4, p, p), in one
    contiguous pass over the Gram blocks (n, 4 p + 4, 4 p + 4)."""
    n, m, _ = gram.shape
    total = (weights @ gram.reshape(n, m * m)).reshape(m, m)[: 4 * p, : 4 * p]
    return np.asarray(total.reshape(4, p, 4, p).transpose(0, 2, 1, 3), dtype=np.float64)


def normal_equations(
    design: _Design,
    layout: Layout,
    up: NDArray[np.float64],
    basis: NDArray[np.float64],
    gains: NDArray[np.float64],
    gain_dirs: NDArray[np.float64],
    beta: NDArray[np.float64],
    theta: NDArray[np.float64],
    inv_var: NDArray[np.float64],
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Information ``sum_j D_j^T G_j D_j / s_j^2``, gradient ``sum_j D_j^T (c_j - G_j m_j) /
    s_j^2`` and RSS per joint, at the point (`up`, `gains`, `beta`, `theta` (n, 5)).

    ``m_j = (k_j s(u) ⊗ β, θ_j)`` and its derivative ``D_j`` with respect to the parameters of
    `layout` are never formed: every column of ``D_j`` is ``k_j (x ⊗ β)`` for one of three
    4-vectors ``x`` (the two tangent directions, ``s``), ``k_j (s ⊗ I_p)`` (the base
    parameters) or a joint column, so the products with the (4, 4) blocks ``G^{ab}`` of the
    Gram block cost ``O(p^2)`` per joint, ``O(n p^2)`` in all, instead of the ``O(p^3)`` per
    joint of the dense product.
    """
    return _normal_equations(
        design, design.gram, layout, up, basis, gains, gain_dirs, beta, theta, inv_var
    )


def information(
    design: _Design,
    gram: NDArray[np.float64],
    layout: Layout,
    up: NDArray[np.float64],
    basis: NDArray[np.float64],
    gains: NDArray[np.float64],
    gain_dirs: NDArray[np.float64],
    beta: NDArray[np.float64],
    inv_var: NDArray[np.float64],
) -> NDArray[np.float64]:
    """The information of :func:`normal_equations` formed with other Gram blocks `gram` (the
    blocks with squared weights of the sandwich covariance)."""
    theta = np.zeros((design.n, N_JOINT_COLUMNS))
    return _normal_equations(
        design, gram, layout, up, basis, gains, gain_dirs, beta, theta, inv_var
    )[0]


def _normal_equations(
    design: _Design,
    big: NDArray[np.float64],
    layout: Layout,
    up: NDArray[np.float64],
    basis: NDArray[np.float64],
    gains: NDArray[np.float64],
    gain_dirs: NDArray[np.float64],
    beta: NDArray[np.float64],
    theta: NDArray[np.float64],
    inv_var: NDArray[np.float64],
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """:func:`normal_equations` on the Gram blocks `big` (gradient and RSS only meaningful for
    ``design.gram``)."""
    n, p, g = design.n, design.p, design.gravity
    k, w = gains, inv_var
    s = np.concatenate([[1.0], g * up])
    x = np.stack([np.concatenate([[0.0], g * basis[0]]), np.concatenate([[0.0], g * basis[1]]), s])
    m = 4 * p + N_JOINT_COLUMNS
    columns = np.zeros((m, 3))
    columns[: 4 * p] = np.kron(x, beta).T  # x_c ⊗ beta
    gv = (big.reshape(n * m, m) @ columns).reshape(n, m, 3)  # one pass over the Gram blocks
    ge = gv[:, : 4 * p].reshape(n, 4, p, 3)  # G (x_c ⊗ beta), base rows
    mask = design.joint_mask.astype(float)
    te = gv[:, 4 * p :] * mask[None, :, None]  # (n, 5, 3), joint rows
    ege = np.einsum("mc,jmd->jcd", columns, gv)  # (x_c ⊗ beta)^T G (x_d ⊗ beta)
    sge = np.einsum("a,jaid->jid", s, ge)  # (s ⊗ I)^T G (x_d ⊗ beta), (n, p, 3)
    gbt = big[:, : 4 * p, 4 * p :].reshape(n, 4, p, N_JOINT_COLUMNS)
    ts = np.einsum("jait,a->jti", gbt, s) * mask[None, :, None]  # (n, 5, p)
    gtt = big[:, 4 * p :, 4 * p :] * mask[:, None] * mask[None, :]
    # (s ⊗ I)^T G (s ⊗ I) summed over the joints: the second pass over the Gram blocks.
    sgs = np.einsum("a,b,abik->ik", s, s, weighted_base_blocks(big, w * k * k, p))
    # Tangent and base parameters (the "core", both scaled by the gain).
    q = 2 + p
    wk2 = w * k * k
    core = np.empty((q, q))
    core[:2, :2] = np.einsum("j,jcd->cd", wk2, ege[:, :2, :2])
    core[2:, :2] = np.einsum("j,jid->id", wk2, sge[:, :, :2])
    core[:2, 2:] = core[2:, :2].T
    core[2:, 2:] = sgs
    gain_core = np.concatenate([ege[:, 2, :2], sge[:, :, 2]], axis=1) * k[:, None]  # (n, q)
    theta_core = np.concatenate([te[:, :, :2], ts], axis=2) * k[:, None, None]  # (n, 5, q)
    idx = np.r_[0, 1, np.arange(p) + layout.beta.start]
    t0 = layout.theta(0).start
    th = np.arange(t0, t0 + N_JOINT_COLUMNS * layout.theta_sets)
    groups = design.theta_groups
    onehot = (groups[:, None] == np.arange(layout.theta_sets)[None, :]).astype(float)
    info = np.zeros((layout.size, layout.size))

    def put(rows: NDArray[np.int64], cols: NDArray[np.int64], block: NDArray[np.float64]) -> None:
        info[np.ix_(rows, cols)] = block
        info[np.ix_(cols, rows)] = block.T

    put(idx, idx, core)
    put(th, idx, np.einsum("jt,j,jcq->tcq", onehot, w, theta_core).reshape(-1, q))
    put(th, th, _block_diagonal(np.einsum("jt,j,jcd->tcd", onehot, w, gtt)))
    if layout.n_gain:
        gn = np.arange(layout.gain.start, layout.gain.stop)
        put(gn, idx, gain_dirs.T @ (w[:, None] * gain_core))
        put(gn, gn, gain_dirs.T @ ((w * ege[:, 2, 2])[:, None] * gain_dirs))
        tg = np.einsum("jt,j,jc,jl->tcl", onehot, w, te[:, :, 2], gain_dirs)
        put(th, gn, tg.reshape(-1, layout.n_gain))
    info = 0.5 * (info + info.T)
    # The residual c - G m and its projections on the columns of D.
    cross = design.cross
    gm_b = k[:, None, None] * ge[..., 2] + np.einsum("jait,jt->jai", gbt, theta)
    gm_t = k[:, None] * te[:, :, 2] + np.einsum("jtc,jc->jt", gtt, theta)
    r_b = cross[:, : 4 * p].reshape(n, 4, p) - gm_b
    r_t = (cross[:, 4 * p :] - gm_t) * mask
    rx = np.einsum("ca,i,jai->jc", x, beta, r_b)  # (x_c ⊗ beta)^T r, (n, 3)
    rs = np.einsum("a,jai->ji", s, r_b)  # (s ⊗ I)^T r, (n, p)
    grad = np.zeros(layout.size)
    grad[idx] = np.concatenate([rx[:, :2], rs], axis=1).T @ (w * k)
    grad[th] = (onehot.T @ (w[:, None] * r_t)).ravel()
    if layout.n_gain:
        grad[layout.gain] = gain_dirs.T @ (w * rx[:, 2])
    # RSS = t - 2 m.c + m.G m, with G m = (gm_b, gm_t).
    m_c = k * np.einsum("a,i,jai->j", s, beta, cross[:, : 4 * p].reshape(n, 4, p))
    m_c += np.sum(theta * cross[:, 4 * p :] * mask, axis=1)
    m_gm = k * np.einsum("a,i,jai->j", s, beta, gm_b) + np.sum(theta * mask * gm_t, axis=1)
    rss = design.tt - 2.0 * m_c + m_gm
    return info, grad, rss


def _block_diagonal(blocks: NDArray[np.float64]) -> NDArray[np.float64]:
    """The block-diagonal matrix of a stack of (t, c, c) blocks."""
    t, c, _ = blocks.shape
    out = np.zeros((t, c, t, c))
    out[np.arange(t), :, np.arange(t), :] = blocks
    return out.reshape(t * c, t * c)


# Eigenvalues of the column-scaled (unit-diagonal) information at most this fraction of the
# largest are directions the data do not determine: the relative floor of
# `gravdir._sphere.cov_from_up_information`, applied to every parameter (a reciprocal
# condition of sqrt(1e-12) = 1e-6 of the whitened design).
INFO_FLOOR = 1e-12
# A quantity (a tangent direction of `up`, a gain) whose column-scaled functional has at least
# this share of its norm in the undetermined subspace is itself undetermined: the data trade it
# against parameters they do not determine (a single joint trades the tilt against its moment).
# A determined functional leaks into the computed undetermined subspace by about the rounding
# of the scaled information over the eigenvalue gap, at most 1e-16 / 1e-12 = 1e-4.
_NULL_SHARE = 1e-3


@dataclass(frozen=True)
class Covariance:
    """The covariance of every parameter from the full information, with what is undetermined.

    Held in column-scaled coordinates ``x = scale * x_s`` (the information scaled to unit
    diagonal), where every entry is of order one whatever the units: ``scaled`` is the
    pseudo-inverse of the scaled information on the determined subspace (eigenvalues above
    :data:`INFO_FLOOR` of the largest) and ``null`` an orthonormal basis of the rest; a
    parameter with zero information has ``scale`` 0.
    """

    scaled: NDArray[np.float64]
    null: NDArray[np.float64]
    scale: NDArray[np.float64]

    def sandwich(self, meat: NDArray[np.float64]) -> Covariance:
        """The covariance ``P M P`` of an estimate whose weights are not inverse variances, `meat`
        the information formed with the squared weights."""
        with np.errstate(over="ignore", invalid="ignore"):  # bounded by the information's
            meat_s = meat * self.scale[:, None] * self.scale[None, :]
        meat_s = np.where(np.isfinite(meat_s), meat_s, 0.0)
        out = self.scaled @ (0.5 * (meat_s + meat_s.T)) @ self.scaled
        return Covariance(0.5 * (out + out.T), self.null, self.scale)

    def undetermined(self, functionals: NDArray[np.float64]) -> NDArray[np.bool_]:
        """Which columns `c` (P, r) of linear functionals ``c^T x`` the data do not determine
        (a zero column is determined: it is held fixed)."""
        touched = np.any((functionals != 0) & (self.scale == 0)[:, None], axis=0)
        c = functionals * self.scale[:, None]  # finite: a scale is below 1 / sqrt(tiny)
        top = np.max(np.abs(c), axis=0)
        c = c / np.where(top > 0, top, 1.0)  # the share is a ratio: in units of the largest
        size = np.linalg.norm(c, axis=0)
        share = np.linalg.norm(self.null.T @ c, axis=0)
        return np.asarray(touched | (share > _NULL_SHARE * size), dtype=np.bool_)

    def std(self, functionals: NDArray[np.float64]) -> NDArray[np.float64]:
        """Standard deviations of the functionals (P, r): infinite where undetermined or beyond
        the floats."""
        with np.errstate(over="ignore", invalid="ignore"):
            c = functionals * self.scale[:, None]
            var = np.einsum("pr,pq,qr->r", c, self.scaled, c)
            out = np.sqrt(np.maximum(var, 0.0))
        bad = self.undetermined(functionals) | ~np.isfinite(out)
        return np.asarray(np.where(bad, np.inf, out), dtype=np.float64)

    def tangent_information(self) -> NDArray[np.float64]:
        """The (2, 2) information of the tangent parameters (the first two) with every other
        parameter profiled out: the inverse of their covariance (the Schur complement), zero
        along a tangent direction the data do not determine (an entry beyond the floats is
        infinite)."""
        s2 = self.scale[:2]
        if not np.all(s2 > 0):
            return np.zeros((2, 2))
        n2 = self.null[:2]
        share, vecs = np.linalg.eigh(n2 @ n2.T)  # squared shares of the tangent directions
        keep = vecs[:, share <= _NULL_SHARE**2]  # scaled coordinates
        if not keep.size:
            return np.zeros((2, 2))
        sub = keep.T @ self.scaled[:2, :2] @ keep
        vals, rot = np.linalg.eigh(0.5 * (sub + sub.T))
        inv = np.where(vals > 0, 1.0 / np.where(vals > 0, vals, 1.0), 0.0)
        info_s = keep @ ((rot * inv) @ rot.T) @ keep.T
        with np.errstate(over="ignore", invalid="ignore"):
            out = info_s / s2[:, None] / s2[None, :]
        return np.asarray(0.5 * (out + out.T), dtype=np.float64)


def covariance(info: NDArray[np.float64]) -> Covariance:
    """The :class:`Covariance` of a full information matrix (scale-free: any unit of any
    parameter gives the same decisions)."""
    diag = np.sqrt(np.maximum(np.diag(info), 0.0))
    scale = np.where(diag > 0, 1.0 / np.where(diag > 0, diag, 1.0), 0.0)
    with np.errstate(under="ignore"):
        scaled = info * scale[:, None] * scale[None, :]
    vals, vecs = np.linalg.eigh(0.5 * (scaled + scaled.T))
    keep = vals > INFO_FLOOR * max(float(vals.max()), 0.0)
    inv = np.where(keep, 1.0 / np.where(keep, vals, 1.0), 0.0)
    cov = (vecs * inv) @ vecs.T
    return Covariance(0.5 * (cov + cov.T), vecs[:, ~keep], scale)


def tangent_curvature(info: NDArray[np.float64]) -> NDArray[np.float64]:
    """The (2, 2) curvature of the profiled log-likelihood in the tangent parameters (the first
    two): the Schur complement ``I_tt - I_tn I_nn^+ I_nt`` of the full information, computed on
    the column-scaled information with the pseudo-inverse of the other parameters' block (its
    eigenvalues below :data:`INFO_FLOOR` of the largest dropped). Unlike
    :meth:`Covariance.tangent_information` it decides nothing: a tangent direction that the
    other parameters nearly compensate keeps its small curvature, one they compensate exactly
    gets a curvature at the rounding level of the information."""
    diag = np.sqrt(np.maximum(np.diag(info), 0.0))
    if not np.all(diag[:2] > 0):
        return np.zeros((2, 2))
    scale = np.where(diag > 0, 1.0 / np.where(diag > 0, diag, 1.0), 0.0)
    scaled = info * scale[:, None] * scale[None, :]
    rest = 0.5 * (scaled[2:, 2:] + scaled[2:, 2:].T)
    vals, vecs = np.linalg.eigh(rest)
    keep = vals > INFO_FLOOR * max(float(vals.max(initial=0.0)), 0.0)
    inv = np.where(keep, 1.0 / np.where(keep, vals, 1.0), 0.0)
    cross = scaled[:2, 2:] @ vecs
    schur = scaled[:2, :2] - (cross * inv) @ cross.T
    evals, evecs = np.linalg.eigh(0.5 * (schur + schur.T))
    schur = (evecs * np.maximum(evals, 0.0)) @ evecs.T
    with np.errstate(over="ignore", invalid="ignore"):  # beyond the floats: infinite
        out = schur / scale[:2, None] / scale[None, :2]
    return np.asarray(0.5 * (out + out.T), dtype=np.float64)


def gains_std(
    cov: Covariance, layout: Layout, gain_dirs: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Standard deviation of every gain: zero for a gain held fixed, infinite for one the data
    do not determine."""
    if not layout.n_gain:
        return np.zeros(layout.n)
    functionals = np.zeros((layout.size, layout.n))
    functionals[layout.gain] = gain_dirs.T
    return cov.std(functionals)
