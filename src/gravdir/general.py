"""The general gravity estimator: `up` from sweeps of any joints of any serial arm.

A joint swept about a reference angle measures the gravity torque of everything distal to it,
an exact sinusoid of the joint angle whose coefficients are bilinear in `up` and in one unknown
2-vector per distal posture. :func:`estimate_up` fits `up` to a set of sweeps by variable
projection (maximum likelihood under the sweep fits' covariances), :func:`crlb_up` gives the
Cramér-Rao bound of a planned set of sweeps before the robot moves, and :func:`plan_sweeps`
searches a small set of sweep plans for the cheapest one that reaches a target accuracy.

Model. Sweep joint ``j`` about ``q_ref``; ``R`` is the orientation of link ``j``'s frame in the
base frame at ``q_ref`` and ``a`` the joint axis in that frame. With :math:`\\delta = q - q_{ref}`,

.. math::

    \\tau(\\delta) = \\alpha \\cos\\delta + \\beta \\sin\\delta, \\qquad
    \\alpha = \\mathrm{up}^\\top R\\, w, \\quad \\beta = \\mathrm{up}^\\top R\\, (a \\times w),

where :math:`w = \\kappa\\, g\\, (a \\times m) \\perp a`, :math:`m` is the first moment of the
distal links about the joint axis in link ``j``'s frame and :math:`\\kappa` the joint's torque
gain. Sweeps of one joint with one distal posture share :math:`w`, whatever the proximal joints
do: they form a *group* (:attr:`JointSweep.group`).

References
----------
Seed ``000_fd3a83f130b85770.txt`` (gravity direction from joint torques), and the
derivation in ``docs/general.md``.
"""

from __future__ import annotations

import warnings
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import least_squares

from gravdir._checks import (
    DegenerateGeometryError,
    GravdirWarning,
    InsufficientDataError,
    check_array,
    check_option,
    check_positive,
    check_rotation_matrix,
    check_scalar,
    check_unit_vector,
)
from gravdir.kinematics import SerialChain, link_frames
from gravdir.sweep import SweepFit

__all__ = [
    "JointSweep",
    "PlannedSweep",
    "SweepPlan",
    "UpBound",
    "UpEstimate",
    "crlb_up",
    "estimate_up",
    "joint_sweep_from_chain",
    "moment_from_mass_model",
    "plan_sweeps",
    "planned_sweep_from_chain",
    "sweep_samples",
]

# Tolerance on unit axes and rotation matrices: values computed in float64 meet it to ~1e-12, and
# it still rejects an axis given in the wrong units or a matrix that is not a rotation.
_ATOL = 1e-6

# Two base-frame joint axes count as parallel when |a_i x a_j| is below this. Axes that come from
# kinematics in float64 are parallel to ~1e-15; 1e-6 rad is far below any sweep plan anyone
# would choose on purpose and far above rounding.
_PARALLEL_TOL = 1e-6

# Relative floor on the standard deviation of the (alpha, beta) pairs: a noise-free fit reports a
# covariance at rounding level (or exactly zero), which cannot be inverted. Adding
# (1e-12 * largest amplitude)^2 to every variance leaves any real measurement untouched (its
# relative noise is many orders above 1e-12) and makes noise-free data weighted uniformly.
_COVARIANCE_FLOOR = 1e-12

# The reduced Fisher information of `up` counts as singular when its smallest eigenvalue is below
# this fraction of the largest eigenvalue of the information `up` would have with every w known.
# A one-parameter family of exact solutions gives ~1e-16 (rounding); any usable plan gives
# more than 1e-6.
_RCOND = 1e-10

# Cosine between the chosen sign's deciding vectors below which the sign is flagged as marginal:
# cos(87 degrees) ~ 0.05.
_SIGN_TOL = 0.05


def _describe(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def _joint_index(joint: object, name: str = "joint") -> int:
    if isinstance(joint, bool) or not isinstance(joint, (int, np.integer)) or joint < 0:
        raise ValueError(f"Expected `{name}` to be a non-negative int, got {joint!r}.")
    return int(joint)


def _rotation(x: ArrayLike, name: str) -> NDArray[np.float64]:
    r = check_rotation_matrix(x, name, atol=_ATOL)
    if r.shape != (3, 3):
        raise ValueError(f"Expected `{name}` to have shape (3, 3), got {_describe(r.shape)}.")
    # Polar factor: the nearest exact rotation, so that rounding in R does not leak into `up`.
    u, _, vt = np.linalg.svd(r)
    out: NDArray[np.float64] = u @ vt
    return out


def _axis(x: ArrayLike, name: str) -> NDArray[np.float64]:
    a = check_unit_vector(x, name, atol=_ATOL)
    if a.shape != (3,):
        raise ValueError(f"Expected `{name}` to have shape (3,), got {_describe(a.shape)}.")
    out: NDArray[np.float64] = a / np.linalg.norm(a)
    return out


def _plane_basis(axis: NDArray[np.float64]) -> NDArray[np.float64]:
    """Orthonormal basis (3, 2) of the plane perpendicular to the unit vector `axis`.

    Columns e1, e2 with e2 = axis x e1, so (e1, e2, axis) is right-handed.
    """
    helper = np.eye(3)[int(np.argmin(np.abs(axis)))]
    e1 = np.cross(axis, helper)
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(axis, e1)
    return np.stack([e1, e2], axis=-1)


def _tangent_basis(up: NDArray[np.float64]) -> NDArray[np.float64]:
    """Rows b1, b2 (2, 3): an orthonormal basis of the plane perpendicular to `up`."""
    return _plane_basis(up).T


def _sweep_rotation_matrix(q_ref: float) -> NDArray[np.float64]:
    """T with (alpha, beta) = T (a_fit, b_fit): a sin q + b cos q at q = q_ref + delta."""
    s, c = np.sin(q_ref), np.cos(q_ref)
    return np.array([[s, c], [c, -s]])


# --------------------------------------------------------------------------------------------
# Records
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, repr=False)
class JointSweep:
    """One fitted sweep with the kinematics the general estimator needs.

    Parameters
    ----------
    joint : int
        Index of the swept joint (0-based: ``0`` is J1).
    rotation : array_like, shape (3, 3)
        Orientation of the swept joint's link frame in the base frame at `q_ref` (columns: the
        link frame's axes in base coordinates). Validated as a proper rotation within 1e-6 and
        replaced by the nearest exact rotation.
    axis : array_like, shape (3,)
        The joint's axis in its link frame, unit within 1e-6 (e.g.
        :attr:`gravdir.kinematics.SerialChain.axes_in_link`).
    q_ref : float
        Joint angle at which `rotation` was evaluated, rad, in the angle convention of the fit
        (the same ``q`` that was passed to :func:`~gravdir.sweep.fit_sweep`).
    fit : SweepFit
        The fit of this single sweep (batch shape ``()``), with ``sin`` and ``cos`` columns.
    group : hashable, optional
        Key of the sweep's distal posture. Sweeps with equal keys share one moment :math:`w`:
        they must sweep the same joint with every joint distal to it at the same angles. Default
        ``joint``: all sweeps of a joint are taken to have the same distal posture. Give
        distinct keys (e.g. ``(joint, "elbow up")``) when a joint is swept in several distal
        postures.

    Raises
    ------
    ValueError
        If `joint` is not a non-negative int, `rotation` is not a 3x3 rotation, `axis` is not a
        unit 3-vector, `q_ref` is not a finite scalar, `fit` is not a single
        :class:`~gravdir.sweep.SweepFit` with finite ``sin``/``cos`` coefficients and
        covariance, or `group` is not hashable.

    Notes
    -----
    The fit's gravity part :math:`a \\sin q + b \\cos q` becomes, at :math:`q = q_{ref} +
    \\delta`, :math:`\\alpha \\cos\\delta + \\beta\\sin\\delta` with

    .. math:: \\begin{pmatrix}\\alpha\\\\ \\beta\\end{pmatrix}
        = \\begin{pmatrix}\\sin q_{ref} & \\cos q_{ref}\\\\ \\cos q_{ref} & -\\sin q_{ref}
        \\end{pmatrix} \\begin{pmatrix} a\\\\ b\\end{pmatrix},

    exactly; the covariance transforms with the same matrix.

    Examples
    --------
    >>> from gravdir.sweep import fit_sweep
    >>> q = np.concatenate([np.linspace(-1, 1, 200), np.linspace(1, -1, 200)])
    >>> v = np.concatenate([np.full(200, 0.2), np.full(200, -0.2)])
    >>> fit = fit_sweep(q, 3.0 * np.cos(q) + 0.1 * np.sign(v), v)
    >>> sweep = JointSweep(1, np.eye(3), [0, 0, 1], 0.0, fit)
    >>> sweep.alpha_beta.round(6) + 0.0
    array([3., 0.])
    >>> sweep.group
    1
    """

    joint: int
    rotation: NDArray[np.float64]
    axis: NDArray[np.float64]
    q_ref: float
    fit: SweepFit
    group: Hashable | None = None

    def __post_init__(self) -> None:
        joint = _joint_index(self.joint)
        object.__setattr__(self, "joint", joint)
        object.__setattr__(self, "rotation", _rotation(self.rotation, "rotation"))
        object.__setattr__(self, "axis", _axis(self.axis, "axis"))
        object.__setattr__(self, "q_ref", check_scalar(self.q_ref, "q_ref"))
        fit = self.fit
        if not isinstance(fit, SweepFit):
            raise ValueError(f"Expected `fit` to be a SweepFit, got {type(fit).__name__}.")
        if np.ndim(fit.amplitude) != 0:
            raise ValueError(
                "Expected `fit` to be the fit of a single sweep (batch shape ()), got batch "
                f"shape {_describe(np.shape(fit.amplitude))}."
            )
        if fit.column_names[1:3] != ("sin", "cos"):
            raise ValueError(
                "Expected `fit.column_names[1:3]` to be ('sin', 'cos'), got "
                f"{fit.column_names[1:3]!r}."
            )
        cov = np.asarray(fit.covariance[1:3, 1:3], dtype=np.float64)
        if not (np.isfinite(fit.coefficients[1:3]).all() and np.isfinite(cov).all()):
            raise ValueError("Expected `fit` to have finite sin/cos coefficients and covariance.")
        if self.group is None:
            object.__setattr__(self, "group", joint)
        try:
            hash(self.group)
        except TypeError:
            raise ValueError(
                f"Expected `group` to be hashable, got {type(self.group).__name__}."
            ) from None

    @property
    def alpha_beta(self) -> NDArray[np.float64]:
        """:math:`(\\alpha, \\beta)`, shape (2,): the gravity torque is
        :math:`\\alpha\\cos\\delta + \\beta\\sin\\delta`."""
        out: NDArray[np.float64] = _sweep_rotation_matrix(self.q_ref) @ self.fit.coefficients[1:3]
        return out

    @property
    def alpha_beta_covariance(self) -> NDArray[np.float64]:
        """Covariance of :attr:`alpha_beta`, shape (2, 2)."""
        t = _sweep_rotation_matrix(self.q_ref)
        out: NDArray[np.float64] = t @ self.fit.covariance[1:3, 1:3] @ t.T
        return out

    def __repr__(self) -> str:
        return (
            f"JointSweep(joint={self.joint}, group={self.group!r}, "
            f"q_ref={np.degrees(self.q_ref):.3f}°, amplitude={float(self.fit.amplitude):.6g}, "
            f"phase={np.degrees(float(self.fit.phase)):.4f}°)"
        )


def joint_sweep_from_chain(
    chain: SerialChain,
    configuration: ArrayLike,
    joint: int,
    fit: SweepFit,
    *,
    group: Hashable | None = None,
) -> JointSweep:
    """The :class:`JointSweep` of a fitted sweep of `joint`, kinematics from `chain`.

    Parameters
    ----------
    chain : SerialChain
        The arm's kinematics (:mod:`gravdir.kinematics`).
    configuration : array_like, shape (n,)
        Joint angles at which the sweep was recorded, rad; entry `joint` is the reference
        angle ``q_ref`` (any angle of the sweep will do, e.g. its start).
    joint : int
        The swept joint, 0-based.
    fit : SweepFit
        The fit of the sweep (batch shape ``()``).
    group : hashable, optional
        As in :class:`JointSweep` (default: `joint`).

    Returns
    -------
    JointSweep
        With ``rotation`` = link `joint`'s orientation at `configuration` and
        ``axis = chain.axes_in_link[joint]``.

    Raises
    ------
    ValueError
        If `configuration` does not match the chain or `joint` is out of range, or as
        :class:`JointSweep`.

    Examples
    --------
    >>> from gravdir.kinematics import chain_from_dh
    >>> from gravdir.sweep import fit_sweep
    >>> chain = chain_from_dh([0.1, 0], [0, 0], [0, 0.5], [np.pi / 2, 0])
    >>> q = np.concatenate([np.linspace(-1, 1, 200), np.linspace(1, -1, 200)])
    >>> v = np.concatenate([np.full(200, 0.2), np.full(200, -0.2)])
    >>> fit = fit_sweep(q, 3.0 * np.cos(q) + 0.1 * np.sign(v), v)
    >>> joint_sweep_from_chain(chain, [0.3, 0.0], 1, fit).axis
    array([0., 0., 1.])
    """
    joint = _joint_index(joint)
    rot, axes = _chain_rotation(chain, configuration, joint)
    config = np.asarray(configuration, dtype=np.float64)
    return JointSweep(joint, rot, axes, float(config[joint]), fit, group)


def _chain_rotation(
    chain: SerialChain, configuration: ArrayLike, joint: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    if not isinstance(chain, SerialChain):
        raise ValueError(f"Expected `chain` to be a SerialChain, got {type(chain).__name__}.")
    config = check_array(configuration, "configuration")
    if config.shape != (chain.n_joints,):
        raise ValueError(
            f"Expected `configuration` to have shape ({chain.n_joints},), "
            f"got {_describe(config.shape)}."
        )
    if joint >= chain.n_joints:
        raise ValueError(f"Expected `joint` in [0, {chain.n_joints - 1}], got {joint}.")
    frames = link_frames(chain, config)
    return frames.rotations[joint], chain.axes_in_link[joint]


# --------------------------------------------------------------------------------------------
# Shared linear algebra of the bilinear model
# --------------------------------------------------------------------------------------------


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
) -> _Problem:
    group_axes = np.empty((n_groups, 3))
    for g in range(n_groups):
        group_axes[g] = axes[int(np.flatnonzero(group_of == g)[0])]
    bases = np.stack([_plane_basis(a) for a in group_axes])
    e = bases[group_of]  # (S, 3, 2)
    ae = np.cross(group_axes[group_of][:, None, :], np.swapaxes(e, -1, -2))  # (S, 2, 3)
    p = rotations @ e
    qm = rotations @ np.swapaxes(ae, -1, -2)
    chol = np.linalg.cholesky(cov)
    whiten = np.linalg.inv(chol)
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
    """Weighted residual sum of squares with every group's x eliminated, for `up` (K, 3)."""
    normal, rhs = _group_sums(prob, prob.whiten @ _model_matrix(prob, up))
    x = np.linalg.solve(normal, rhs[..., None])[..., 0]
    explained = np.einsum("kgi,kgi->k", rhs, x)
    out: NDArray[np.float64] = float(np.sum(prob.z**2)) - explained
    return out


def _moments_for_up(prob: _Problem, up: NDArray[np.float64]) -> NDArray[np.float64]:
    """Weighted least-squares x (G, 2) of every group for a fixed `up` (3,)."""
    normal, rhs = _group_sums(prob, prob.whiten @ _model_matrix(prob, up))
    out = np.asarray(np.linalg.solve(normal, rhs[..., None])[..., 0], dtype=np.float64)
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


def _reduced_information(
    jac: NDArray[np.float64],
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Schur complement (2, 2) of the x block of J^T J, and the unreduced up block (2, 2)."""
    fisher = jac.T @ jac
    ftt = fisher[:2, :2]
    ftx = fisher[:2, 2:]
    fxx = fisher[2:, 2:]
    # A group whose moment is unobservable (every sweep with up along its axis) has a zero block
    # here; the pseudo-inverse drops it, which is its exact contribution (none).
    reduced = ftt - ftx @ np.linalg.pinv(fxx, rcond=1e-13, hermitian=True) @ ftx.T
    return 0.5 * (reduced + reduced.T), ftt


def _fibonacci_sphere(n: int) -> NDArray[np.float64]:
    k = np.arange(n) + 0.5
    z = 1.0 - 2.0 * k / n
    r = np.sqrt(np.maximum(0.0, 1.0 - z * z))
    phi = np.pi * (3.0 - np.sqrt(5.0)) * k
    return np.stack([r * np.cos(phi), r * np.sin(phi), z], axis=-1)


# --------------------------------------------------------------------------------------------
# Estimation
# --------------------------------------------------------------------------------------------


class _TangentSpread:
    """The scalar spread of a 2x2 tangent-plane covariance of `up`."""

    covariance: NDArray[np.float64]

    @property
    def std(self) -> float:
        """Root-mean-square angular spread of `up`, :math:`\\sqrt{\\mathrm{tr}\\,C}`, rad."""
        return float(np.sqrt(np.trace(self.covariance)))

    @property
    def std_deg(self) -> float:
        """:attr:`std` in degrees."""
        return float(np.degrees(self.std))


@dataclass(frozen=True, repr=False)
class UpEstimate(_TangentSpread):
    """`up` estimated from joint sweeps by :func:`estimate_up`.

    Attributes
    ----------
    up : ndarray, shape (3,)
        Unit vector opposite to gravity, base frame.
    covariance : ndarray, shape (2, 2)
        Covariance of the small rotation of `up` in the tangent plane, rad², in the basis
        `tangent_basis`: ``up_true ≈ up + tangent_basis.T @ e`` with ``e ~ N(0, covariance)``.
    tangent_basis : ndarray, shape (2, 3)
        Orthonormal rows spanning the plane perpendicular to `up`.
    information : ndarray, shape (2, 2)
        Fisher information of `up` with every group's moment eliminated (Schur complement),
        the inverse of `covariance`.
    condition : float
        Ratio of the largest to the smallest eigenvalue of `information`: how unevenly the
        sweeps constrain the two directions of tilt.
    groups : tuple
        Group keys, in order of first appearance in the sweeps.
    moments : ndarray, shape (n_groups, 3)
        Estimated :math:`w = \\kappa g (a \\times m)` of each group, in that group's link frame
        (units of torque).
    residuals : ndarray, shape (n_sweeps, 2)
        Whitened residuals of each sweep's :math:`(\\alpha, \\beta)`.
    chi2 : float
        Sum of the squared whitened residuals.
    dof : int
        Degrees of freedom of `chi2`: ``2 n_sweeps - 2 n_groups - 2``.
    sign_rule : str
        Which rule fixed the sign of `up`: ``"hemisphere"`` (`up` within 90° of `up_hint`) or
        ``"moment hint"`` (the moment of a hinted group points as the caller said).
    sign_margin : float
        Cosine between the vectors the sign rule compared (1: clear; near 0: marginal).
    """

    up: NDArray[np.float64]
    covariance: NDArray[np.float64]
    tangent_basis: NDArray[np.float64]
    information: NDArray[np.float64]
    condition: float
    groups: tuple[Hashable, ...]
    moments: NDArray[np.float64]
    residuals: NDArray[np.float64]
    chi2: float
    dof: int
    sign_rule: str
    sign_margin: float

    def __repr__(self) -> str:
        tilt = np.degrees(np.arccos(np.clip(self.up[2], -1.0, 1.0)))
        azimuth = np.degrees(np.arctan2(self.up[1], self.up[0]))
        return (
            f"UpEstimate(up={np.array2string(self.up, precision=6)}, tilt={tilt:.4f}°, "
            f"azimuth={azimuth:.4f}°, std={self.std_deg:.3g}°, condition={self.condition:.3g}, "
            f"chi2={self.chi2:.3g} (dof {self.dof}), groups={self.groups!r}, "
            f"sign_rule={self.sign_rule!r})"
        )


def _check_sweeps(sweeps: Sequence[JointSweep]) -> list[JointSweep]:
    if isinstance(sweeps, JointSweep) or not isinstance(sweeps, Sequence):
        raise ValueError(
            f"Expected `sweeps` to be a sequence of JointSweep, got {type(sweeps).__name__}."
        )
    items = list(sweeps)
    for i, s in enumerate(items):
        if not isinstance(s, JointSweep):
            raise ValueError(f"Expected `sweeps[{i}]` to be a JointSweep, got {type(s).__name__}.")
    if len(items) < 2:
        raise InsufficientDataError(
            f"Expected at least 2 sweeps in `sweeps`, got {len(items)}: a single sweep's "
            "moment absorbs all it says about `up`."
        )
    return items


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
                f"Expected the sweeps of group {key!r} in `{name}` to share one `axis`, got "
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


def estimate_up(
    sweeps: Sequence[JointSweep],
    *,
    up_hint: ArrayLike = (0.0, 0.0, 1.0),
    moment_hints: Mapping[Hashable, ArrayLike] | None = None,
    n_grid: int = 400,
    n_starts: int = 4,
    parallel_tol: float = _PARALLEL_TOL,
    covariance_floor: float = _COVARIANCE_FLOOR,
    rcond: float = _RCOND,
    sign_tol: float = _SIGN_TOL,
    zero_rtol: float = 1e-9,
) -> UpEstimate:
    """Estimate `up` from fitted joint sweeps by variable projection (maximum likelihood).

    Parameters
    ----------
    sweeps : sequence of JointSweep
        At least two sweeps, of which some group (one joint, one distal posture) has sweeps
        about non-parallel base-frame axes: e.g. J2 swept at J1 = θ1, θ1 + 90°, θ1 + 180°.
    up_hint : array_like, shape (3,), optional
        Rough `up` for the hemisphere sign rule (default base +z, an upright mount; give
        e.g. ``(0, 0, -1)`` for a ceiling mount, a horizontal vector for a wall mount). Any
        non-zero vector; it is normalised.
    moment_hints : mapping, optional
        ``{group: m}`` with `m` a rough direction (3,) of the distal first moment of that
        group's joint in its link frame (from the joint axis toward the distal centre of mass,
        e.g. along the link). When given, the sign of `up` is chosen so that the estimated
        moments agree with these hints and `up_hint` is ignored.
    n_grid : int, optional
        Number of points of the Fibonacci sphere grid of global starting values (default 400,
        a spacing of about 10°).
    n_starts : int, optional
        Number of distinct grid minima (more than 15° apart, modulo sign) refined locally
        (default 4).
    parallel_tol : float, optional
        Two base-frame axes are parallel when ``|a_i x a_j|`` is below this (default 1e-6).
    covariance_floor : float, optional
        Relative floor on the standard deviation of every :math:`(\\alpha, \\beta)` pair, as a
        fraction of the largest fitted amplitude (default 1e-12; noise-free fits report zero
        covariance).
    rcond : float, optional
        The reduced information is singular when its smallest eigenvalue is below `rcond`
        times the largest eigenvalue of the unreduced information of `up` (default 1e-10).
    sign_tol : float, optional
        A :class:`~gravdir.GravdirWarning` is issued when the sign rule's cosine is below this
        (default 0.05, i.e. within about 3° of the rule's boundary).
    zero_rtol : float, optional
        All sweeps count as torque-free (an error) when every fitted amplitude is below
        `zero_rtol` times the largest fitted coefficient (default 1e-9; rounding leaves about
        1e-16).

    Returns
    -------
    UpEstimate
        `up`, its tangent-plane covariance, the moments, residuals, :math:`\\chi^2` and the rule
        that fixed the sign.

    Raises
    ------
    ValueError
        If `sweeps` is not a sequence of :class:`JointSweep`, sweeps of one group differ in
        joint or axis, or an option is out of range.
    InsufficientDataError
        If fewer than two sweeps are given.
    DegenerateGeometryError
        If no group has sweeps about non-parallel axes (only J1 sweeps; one sweep per group;
        J2 sweeps at J1 positions 180° apart), if all fitted amplitudes are zero, or if the
        Fisher information of `up` is singular at the solution.

    Notes
    -----
    For sweep :math:`i` of group :math:`k` with :math:`(\\alpha_i, \\beta_i)` and covariance
    :math:`C_i`, write :math:`w_k = E_k x_k` with :math:`E_k` an orthonormal basis of the plane
    perpendicular to the axis :math:`a_k`. Then

    .. math:: \\begin{pmatrix}\\alpha_i\\\\ \\beta_i\\end{pmatrix} = M_i(\\mathrm{up})\\, x_k,
        \\qquad M_i = \\begin{pmatrix} \\mathrm{up}^\\top R_i E_k \\\\
        \\mathrm{up}^\\top R_i (a_k \\times E_k) \\end{pmatrix},

    linear in :math:`x_k` for fixed `up`. The negative log-likelihood
    :math:`\\sum_i \\lVert C_i^{-1/2}(y_i - M_i x_k) \\rVert^2` is minimised over the
    :math:`x_k` in closed form (weighted least squares per group) on a Fibonacci grid of the
    sphere, then over all parameters by :func:`scipy.optimize.least_squares` from the best grid
    points, with `up` parametrised in its tangent plane. The covariance is the inverse of the
    Fisher information of the two tangent parameters after eliminating the :math:`x_k`
    (Schur complement of :math:`J^\\top J`), the Cramér-Rao bound at the estimate. It uses the
    fits' covariances as they are (they carry each fit's own noise estimate); `chi2` against
    `dof` tells whether the model explains the data.

    :math:`(\\mathrm{up}, w)` and :math:`(-\\mathrm{up}, -w)` give the same torques: the sign
    comes from `moment_hints` (the gain :math:`\\kappa` is positive, so
    :math:`w \\cdot (a \\times m_{hint}) > 0`) or else from `up_hint`.

    References
    ----------
    Seed ``000_fd3a83f130b85770.txt``; ``docs/general.md``. G. Golub and V. Pereyra,
    "Separable nonlinear least squares: the variable projection method and its applications",
    Inverse Problems 19 (2003).

    Examples
    --------
    A two-joint arm: J2 swept at three J1 positions, data from the model itself.

    >>> from gravdir.kinematics import chain_from_dh
    >>> from gravdir.sweep import fit_sweep
    >>> chain = chain_from_dh([0.2, 0.0], [0.0, 0.0], [0.0, 0.5], [np.pi / 2, 0.0])
    >>> up_true = np.array([np.sin(0.3), 0.0, np.cos(0.3)])
    >>> q = np.concatenate([np.linspace(-1, 1, 300), np.linspace(1, -1, 300)])
    >>> v = np.concatenate([np.full(300, 0.3), np.full(300, -0.3)])
    >>> w = np.array([0.0, 9.81, 0.0])  # g (a x m) for m along link x
    >>> sweeps = []
    >>> for q1 in (0.0, np.pi / 2, np.pi):
    ...     frames = link_frames(chain, [q1, 0.0])
    ...     r, a = frames.rotations[1], chain.axes_in_link[1]
    ...     tau = [up_true @ r @ (np.cos(d) * w + np.sin(d) * np.cross(a, w)) for d in q]
    ...     fit = fit_sweep(q, np.add(tau, 0.2 * np.sign(v)), v)
    ...     sweeps.append(JointSweep(1, r, a, 0.0, fit))
    >>> est = estimate_up(sweeps)
    >>> bool(np.allclose(est.up, up_true, atol=1e-9)), est.sign_rule
    (True, 'hemisphere')
    """
    items = _check_sweeps(sweeps)
    hint = check_unit_vector(up_hint, "up_hint", normalize=True)
    if hint.shape != (3,):
        raise ValueError(f"Expected `up_hint` to have shape (3,), got {_describe(hint.shape)}.")
    for name, value in (("n_grid", n_grid), ("n_starts", n_starts)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"Expected `{name}` to be a positive int, got {value!r}.")
    parallel_tol = check_positive(parallel_tol, "parallel_tol")
    covariance_floor = check_positive(covariance_floor, "covariance_floor")
    rcond = check_positive(rcond, "rcond")
    sign_tol = check_positive(sign_tol, "sign_tol", allow_zero=True)
    zero_rtol = check_positive(zero_rtol, "zero_rtol", allow_zero=True)

    rotations = np.stack([s.rotation for s in items])
    axes = np.stack([s.axis for s in items])
    joints = [s.joint for s in items]
    group_of, keys = _group_index([s.group for s in items], joints, axes, "sweeps")
    hints = _check_moment_hints(moment_hints, keys, axes, group_of)
    _check_geometry(rotations, axes, group_of, keys, joints, parallel_tol)

    y = np.stack([s.alpha_beta for s in items])
    cov = np.stack([s.alpha_beta_covariance for s in items])
    scale = float(np.max(np.linalg.norm(y, axis=-1)))
    # An amplitude below 1e-9 of the fit's largest coefficient (offset, friction) is rounding:
    # float64 fits of torque-free data leave ~1e-16 relative.
    largest = max(float(np.max(np.abs(s.fit.coefficients))) for s in items)
    if scale <= zero_rtol * largest:
        raise DegenerateGeometryError(
            "Expected some sweep in `sweeps` to have a non-zero gravity amplitude, got all zero."
        )
    cov = 0.5 * (cov + np.swapaxes(cov, -1, -2)) + (covariance_floor * scale) ** 2 * np.eye(2)
    prob = _make_problem(rotations, axes, group_of, len(keys), y, cov)

    up, x = _solve(prob, int(n_grid), int(n_starts))
    moments = np.einsum("gij,gj->gi", prob.bases, x)
    flip, rule, margin = _sign(up, moments, prob.axes, hint, hints)
    if flip:
        up, x, moments = -up, -x, -moments
    if margin < sign_tol:
        warnings.warn(
            f"The sign of `up` is marginal: the {rule} rule compared vectors at "
            f"{np.degrees(np.arccos(np.clip(margin, -1, 1))):.1f}° (cosine {margin:.3g}); "
            "give a better `up_hint` or `moment_hints`.",
            GravdirWarning,
            stacklevel=2,
        )
    basis = _tangent_basis(up)
    jac = _jacobian(prob, up, basis, x)
    information, unreduced = _reduced_information(jac)
    eig = np.linalg.eigvalsh(information)
    top = float(np.linalg.eigvalsh(unreduced)[-1])
    if top <= 0.0 or eig[0] <= rcond * top:
        raise DegenerateGeometryError(
            "Expected the sweeps in `sweeps` to determine `up`, got a singular Fisher "
            f"information at the solution (eigenvalues {eig[0]:.3g}, {eig[1]:.3g}; unreduced "
            f"scale {top:.3g}): the fitted moments or the axes leave a direction of `up` free."
        )
    covariance = np.linalg.inv(information)
    covariance = 0.5 * (covariance + covariance.T)
    resid = prob.z - np.einsum("sij,sj->si", prob.whiten @ _model_matrix(prob, up), x[group_of])
    n_sweeps = len(items)
    return UpEstimate(
        up=up,
        covariance=covariance,
        tangent_basis=basis,
        information=information,
        condition=float(eig[1] / eig[0]),
        groups=tuple(keys),
        moments=moments,
        residuals=resid,
        chi2=float(np.sum(resid**2)),
        dof=2 * n_sweeps - 2 * len(keys) - 2,
        sign_rule=rule,
        sign_margin=float(margin),
    )


def _check_moment_hints(
    moment_hints: Mapping[Hashable, ArrayLike] | None,
    keys: list[Hashable],
    axes: NDArray[np.float64],
    group_of: NDArray[np.int64],
) -> dict[int, NDArray[np.float64]]:
    """Validated hints as {group index: unit vector of a x m_hint in the link frame}."""
    if moment_hints is None:
        return {}
    if not isinstance(moment_hints, Mapping):
        raise ValueError(
            f"Expected `moment_hints` to be a mapping {{group: m}}, got "
            f"{type(moment_hints).__name__}."
        )
    out: dict[int, NDArray[np.float64]] = {}
    for key, value in moment_hints.items():
        if key not in keys:
            raise ValueError(
                f"Expected the keys of `moment_hints` to be groups of `sweeps` "
                f"({', '.join(repr(k) for k in keys)}), got {key!r}."
            )
        m = check_unit_vector(value, f"moment_hints[{key!r}]", normalize=True)
        if m.shape != (3,):
            raise ValueError(
                f"Expected `moment_hints[{key!r}]` to have shape (3,), got {_describe(m.shape)}."
            )
        g = keys.index(key)
        a = axes[int(np.flatnonzero(group_of == g)[0])]
        am = np.cross(a, m)
        norm = float(np.linalg.norm(am))
        # A hint within ~0.6 degrees of the joint axis says nothing about the moment's side.
        if norm < 1e-2:
            raise ValueError(
                f"Expected `moment_hints[{key!r}]` to point away from the joint axis, got a "
                f"vector at {np.degrees(np.arcsin(min(norm, 1.0))):.2f}° from it."
            )
        out[g] = am / norm
    if not out:
        raise ValueError("Expected `moment_hints` to hold at least one group, got none.")
    return out


def _sign(
    up: NDArray[np.float64],
    moments: NDArray[np.float64],
    axes: NDArray[np.float64],
    hint: NDArray[np.float64],
    hints: dict[int, NDArray[np.float64]],
) -> tuple[bool, str, float]:
    """Whether to flip (up, w), the rule's name and its (signed-after-flip) cosine margin."""
    if hints:
        total = 0.0
        weight = 0.0
        for g, direction in hints.items():
            w = moments[g]
            norm = float(np.linalg.norm(w))
            total += float(w @ direction)
            weight += norm
        cosine = total / weight if weight > 0 else 0.0
        return cosine < 0, "moment hint", abs(cosine)
    cosine = float(up @ hint)
    return cosine < 0, "hemisphere", abs(cosine)


def _solve(
    prob: _Problem, n_grid: int, n_starts: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Global grid search over the sphere, then local refinement of all parameters."""
    grid = _fibonacci_sphere(n_grid)
    cost = _projected_cost(prob, grid)
    order = np.argsort(cost, kind="stable")
    # Distinct starts: more than 15 degrees apart modulo sign (cost(up) = cost(-up)).
    starts: list[NDArray[np.float64]] = []
    for k in order:
        u = grid[k]
        if all(abs(float(u @ s)) < np.cos(np.radians(15.0)) for s in starts):
            starts.append(u)
        if len(starts) == n_starts:
            break
    best_cost = np.inf
    best_up, best_x = starts[0], _moments_for_up(prob, starts[0])
    n_groups = prob.bases.shape[0]
    for u0 in starts:
        basis = _tangent_basis(u0)

        def unpack(
            params: NDArray[np.float64],
            u0: NDArray[np.float64] = u0,
            basis: NDArray[np.float64] = basis,
        ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
            v = u0 + params[:2] @ basis
            norm = float(np.linalg.norm(v))
            u = v / norm
            dup = (basis - np.outer(basis @ u, u)) / norm
            return u, dup, params[2:].reshape(n_groups, 2)

        def residual(params: NDArray[np.float64]) -> NDArray[np.float64]:
            u, _, x = unpack(params)
            model = np.einsum("sij,sj->si", prob.whiten @ _model_matrix(prob, u), x[prob.group_of])
            out: NDArray[np.float64] = (prob.z - model).ravel()
            return out

        def jacobian(params: NDArray[np.float64]) -> NDArray[np.float64]:
            u, dup, x = unpack(params)
            return -_jacobian(prob, u, dup, x)

        x0 = _moments_for_up(prob, u0)
        p0 = np.concatenate([np.zeros(2), x0.ravel()])
        sol = least_squares(
            residual,
            p0,
            jac=jacobian,
            method="lm",
            xtol=1e-15,
            ftol=1e-15,
            gtol=1e-15,
            x_scale="jac",
        )
        u, _, x = unpack(sol.x)
        c = float(np.sum(sol.fun**2))
        if c < best_cost:
            best_cost, best_up, best_x = c, u, x
    return best_up, best_x


# --------------------------------------------------------------------------------------------
# Cramér-Rao bound and planning
# --------------------------------------------------------------------------------------------


def sweep_samples(
    center: float,
    arc: float,
    speed: float,
    sample_rate: float,
    *,
    max_samples: int = 10_000_000,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Joint angles and velocities of a planned constant-speed sweep, forward then back.

    Parameters
    ----------
    center : float
        Middle of the swept arc, rad.
    arc : float
        Length of the arc, rad, positive.
    speed : float
        Joint speed, rad/s, positive.
    sample_rate : float
        Samples per second, Hz, positive.
    max_samples : int, optional
        Largest accepted length ``m`` of the result (both passes), default 10 000 000: about
        160 MB for `q` and `velocity` together, far beyond a recorded sweep (a 180° sweep at
        0.05 rad/s and 1 kHz has about 126 000 samples), so larger requests are taken as a
        mistake in units rather than allocated.

    Returns
    -------
    q : ndarray, shape (m,)
        From ``center - arc/2`` to ``center + arc/2`` and back.
    velocity : ndarray, shape (m,)
        ``+speed`` on the way out, ``-speed`` on the way back.

    Raises
    ------
    ValueError
        If an argument is not finite or not positive where required, or the sweep has fewer
        than 4 samples per pass or more than `max_samples` in all.

    Examples
    --------
    >>> q, v = sweep_samples(0.0, np.pi / 2, 0.5, 100.0)
    >>> q.shape, float(q.max() - q.min()).__round__(6), float(v.sum())
    ((630,), 1.570796, 0.0)
    """
    c = check_scalar(center, "center")
    arc = check_positive(arc, "arc")
    speed = check_positive(speed, "speed")
    rate = check_positive(sample_rate, "sample_rate")
    if (
        isinstance(max_samples, bool)
        or not isinstance(max_samples, (int, np.integer))
        or max_samples < 8
    ):
        raise ValueError(f"Expected `max_samples` to be an int >= 8, got {max_samples!r}.")
    per_pass = np.floor(arc / speed * rate) + 1.0
    if not 2.0 * per_pass <= max_samples:
        raise ValueError(
            f"Expected at most `max_samples` = {int(max_samples)} samples "
            f"(2 * (`arc` / `speed` * `sample_rate` + 1)), got {2.0 * per_pass:.3g} from "
            f"`arc` = {arc:g}, `speed` = {speed:g}, `sample_rate` = {rate:g}."
        )
    m = int(per_pass)
    if m < 4:
        raise ValueError(
            f"Expected at least 4 samples per pass (`arc` / `speed` * `sample_rate` >= 3), got {m}."
        )
    out = np.linspace(c - arc / 2, c + arc / 2, m)
    q = np.concatenate([out, out[::-1]])
    velocity = np.concatenate([np.full(m, speed), np.full(m, -speed)])
    return q, velocity


@dataclass(frozen=True, repr=False)
class PlannedSweep:
    """A sweep that has not been recorded yet, for :func:`crlb_up` and :func:`plan_sweeps`.

    Parameters
    ----------
    joint : int
        Index of the joint to sweep (0-based).
    rotation : array_like, shape (3, 3)
        Orientation of the joint's link frame in the base frame at `q_ref`.
    axis : array_like, shape (3,)
        The joint's axis in its link frame, unit.
    q_ref : float
        Joint angle at which `rotation` is given, rad.
    q, velocity : array_like, shape (m,)
        The planned samples (e.g. from :func:`sweep_samples`), rad and rad/s.
    moment : array_like, shape (3,)
        A rough :math:`w = \\kappa g (a \\times m)` of the joint in its link frame, in torque
        units (e.g. from :func:`moment_from_mass_model`); its component along `axis` is
        removed. Sweeps of one group must give the same moment.
    noise_std : float
        Standard deviation of the white torque noise of the joint, positive.
    group : hashable, optional
        As in :class:`JointSweep` (default `joint`).

    Raises
    ------
    ValueError
        If a field has the wrong type, shape or value.

    Examples
    --------
    >>> q, v = sweep_samples(0.0, np.pi / 2, 0.5, 100.0)
    >>> PlannedSweep(1, np.eye(3), [0, 0, 1], 0.0, q, v, [2.0, 0, 0], 0.01)
    PlannedSweep(joint=1, group=1, q_ref=0.000°, arc=90.0°, samples=630, |w|=2)
    """

    joint: int
    rotation: NDArray[np.float64]
    axis: NDArray[np.float64]
    q_ref: float
    q: NDArray[np.float64]
    velocity: NDArray[np.float64]
    moment: NDArray[np.float64]
    noise_std: float
    group: Hashable | None = None

    def __post_init__(self) -> None:
        joint = _joint_index(self.joint)
        object.__setattr__(self, "joint", joint)
        object.__setattr__(self, "rotation", _rotation(self.rotation, "rotation"))
        axis = _axis(self.axis, "axis")
        object.__setattr__(self, "axis", axis)
        object.__setattr__(self, "q_ref", check_scalar(self.q_ref, "q_ref"))
        q = check_array(self.q, "q")
        v = check_array(self.velocity, "velocity")
        if q.ndim != 1 or q.size < 8:
            raise ValueError(
                f"Expected `q` to have shape (m,) with m >= 8, got {_describe(q.shape)}."
            )
        if v.shape != q.shape:
            raise ValueError(
                f"Expected `velocity` to have the shape of `q` {_describe(q.shape)}, "
                f"got {_describe(v.shape)}."
            )
        object.__setattr__(self, "q", q)
        object.__setattr__(self, "velocity", v)
        w = check_array(self.moment, "moment")
        if w.shape != (3,):
            raise ValueError(f"Expected `moment` to have shape (3,), got {_describe(w.shape)}.")
        object.__setattr__(self, "moment", w - (w @ axis) * axis)
        object.__setattr__(self, "noise_std", check_positive(self.noise_std, "noise_std"))
        if self.group is None:
            object.__setattr__(self, "group", joint)
        try:
            hash(self.group)
        except TypeError:
            raise ValueError(
                f"Expected `group` to be hashable, got {type(self.group).__name__}."
            ) from None

    def __repr__(self) -> str:
        arc = np.degrees(float(self.q.max() - self.q.min()))
        return (
            f"PlannedSweep(joint={self.joint}, group={self.group!r}, "
            f"q_ref={np.degrees(self.q_ref):.3f}°, arc={arc:.1f}°, samples={self.q.size}, "
            f"|w|={float(np.linalg.norm(self.moment)):.3g})"
        )


@dataclass(frozen=True, repr=False)
class UpBound(_TangentSpread):
    """Cramér-Rao bound of `up` for a set of planned sweeps (:func:`crlb_up`).

    Attributes
    ----------
    up : ndarray, shape (3,)
        The `up` the bound was evaluated at (the prior).
    covariance : ndarray, shape (2, 2)
        Smallest covariance of the tangent-plane error of `up` an unbiased estimator can reach,
        rad², in the basis `tangent_basis`.
    tangent_basis : ndarray, shape (2, 3)
        Orthonormal rows spanning the plane perpendicular to `up`.
    information : ndarray, shape (2, 2)
        Fisher information of `up` with the moments eliminated, the inverse of `covariance`.
    condition : float
        Ratio of the largest to the smallest eigenvalue of `information`.
    """

    up: NDArray[np.float64]
    covariance: NDArray[np.float64]
    tangent_basis: NDArray[np.float64]
    information: NDArray[np.float64]
    condition: float

    def __repr__(self) -> str:
        return (
            f"UpBound(up={np.array2string(self.up, precision=4)}, std={self.std_deg:.3g}°, "
            f"condition={self.condition:.3g})"
        )


_LOAD_OPTIONS = ("none", "abs")
_FRICTION_OPTIONS = ("auto", "none")


def _sin_cos_bound(
    q: NDArray[np.float64],
    v: NDArray[np.float64],
    q_ref: float,
    alpha_beta: NDArray[np.float64],
    noise_std: float,
    min_speed: float | None,
    friction: str,
    load_friction: str,
) -> NDArray[np.float64]:
    """CRB (2, 2) of (alpha, beta) for the fit_sweep model of one planned sweep."""
    speed = np.abs(v)
    threshold = 0.1 * float(speed.max()) if min_speed is None else min_speed
    used = speed >= threshold
    if friction != "none":
        used &= speed > 0
    qu, vu = q[used], v[used]
    cols = [np.ones_like(qu), np.sin(qu), np.cos(qu)]
    if friction != "none":
        sgn = np.sign(vu)
        cols.append(sgn)
        # Viscous column only when some direction moves at more than one speed (fit_sweep's
        # "auto" rule; 1e-6 is its default relative spread).
        spread = max(
            (float(np.ptp(np.abs(vu[sgn == s]))) for s in (-1.0, 1.0) if np.any(sgn == s)),
            default=0.0,
        )
        if spread > 1e-6 * float(np.abs(vu).max()):
            cols.append(vu)
    if load_friction == "abs":
        d = qu - q_ref
        tau = alpha_beta[0] * np.cos(d) + alpha_beta[1] * np.sin(d)
        cols.append(np.sign(vu) * np.abs(tau))
    x = np.stack(cols, axis=-1)
    if x.shape[0] <= x.shape[1]:
        raise InsufficientDataError(
            f"Expected more than {x.shape[1]} used samples in a planned sweep, got {x.shape[0]}."
        )
    gram = x.T @ x
    inv = np.linalg.pinv(gram, rcond=1e-13, hermitian=True)
    t = _sweep_rotation_matrix(q_ref)
    out: NDArray[np.float64] = noise_std**2 * (t @ inv[1:3, 1:3] @ t.T)
    return out


def crlb_up(
    sweeps: Sequence[PlannedSweep],
    up: ArrayLike = (0.0, 0.0, 1.0),
    *,
    min_speed: float | None = None,
    friction: str = "auto",
    load_friction: str = "none",
    parallel_tol: float = _PARALLEL_TOL,
    rcond: float = _RCOND,
) -> UpBound:
    """Cramér-Rao bound of `up` for a proposed set of sweeps.

    Parameters
    ----------
    sweeps : sequence of PlannedSweep
        The planned sweeps, each with its samples, kinematics, rough moment and noise level.
    up : array_like, shape (3,), optional
        The `up` at which the bound is evaluated (a prior; default upright). Normalised.
    min_speed : float, optional
        As in :func:`~gravdir.sweep.fit_sweep` (default 10% of each sweep's largest speed).
    friction : {"auto", "none"}, optional
        Friction columns of the fit the bound is for: ``"auto"`` (Coulomb, plus viscous where
        the speed varies within a direction) or ``"none"``.
    load_friction : {"none", "abs"}, optional
        ``"abs"`` adds the load-dependent friction column ``sign(v) |tau_g|`` of
        :func:`~gravdir.sweep.fit_sweep`, evaluated at the prior (its coefficient taken as
        zero).
    parallel_tol, rcond : float, optional
        As in :func:`estimate_up`.

    Returns
    -------
    UpBound
        The 2x2 tangent-plane bound and its basis.

    Raises
    ------
    ValueError
        If `sweeps` is not a sequence of :class:`PlannedSweep`, sweeps of one group disagree in
        joint, axis or moment, or an option is unknown.
    InsufficientDataError
        If fewer than two sweeps are given or a sweep keeps too few samples.
    DegenerateGeometryError
        If the sweeps cannot determine `up` (see :func:`estimate_up`), or the information is
        singular at `up` with these moments.

    Notes
    -----
    Each sweep's fit is linear, so the bound on its :math:`(a, b)` is the ``(sin, cos)`` block
    of :math:`\\sigma^2 (X^\\top X)^{-1}` with the fit's design matrix :math:`X` (offset,
    sinusoid, friction); :math:`(\\alpha, \\beta)` follows by the rotation of
    :class:`JointSweep`. These pairs are independent across sweeps, so the Fisher information
    of :math:`(t, x_1, \\dots, x_G)` (tangent parameters of `up` and the moment coordinates) is
    :math:`J^\\top J` with the whitened Jacobian of :math:`M_i(\\mathrm{up})\\,x_k`, and the
    bound on `up` is the inverse of the Schur complement of the moment block. Ripple harmonics
    of high order, if fitted, barely change the bound and are not included.

    References
    ----------
    ``docs/general.md`` and ``docs/sweep.md``; S. M. Kay, Fundamentals of Statistical
    Signal Processing: Estimation Theory, ch. 3.

    Examples
    --------
    Three J2 sweeps of 120° at J1 = 0°, 90°, 180° of a two-joint arm:

    >>> from gravdir.kinematics import chain_from_dh
    >>> chain = chain_from_dh([0.2, 0.0], [0.0, 0.0], [0.0, 0.5], [np.pi / 2, 0.0])
    >>> plans = [
    ...     planned_sweep_from_chain(chain, [q1, 0.0], 1, np.radians(120), masses=[1.0, 2.0],
    ...                              coms=[[0, 0, 0], [0, 0, 0]], noise_std=0.05)
    ...     for q1 in (0.0, np.pi / 2, np.pi)]
    >>> bound = crlb_up(plans)
    >>> 0.0 < bound.std_deg < 0.5
    True
    """
    if isinstance(sweeps, PlannedSweep) or not isinstance(sweeps, Sequence):
        raise ValueError(
            f"Expected `sweeps` to be a sequence of PlannedSweep, got {type(sweeps).__name__}."
        )
    items = list(sweeps)
    for i, s in enumerate(items):
        if not isinstance(s, PlannedSweep):
            raise ValueError(
                f"Expected `sweeps[{i}]` to be a PlannedSweep, got {type(s).__name__}."
            )
    if len(items) < 2:
        raise InsufficientDataError(f"Expected at least 2 sweeps in `sweeps`, got {len(items)}.")
    u = check_unit_vector(up, "up", normalize=True)
    if u.shape != (3,):
        raise ValueError(f"Expected `up` to have shape (3,), got {_describe(u.shape)}.")
    friction = check_option(friction, "friction", _FRICTION_OPTIONS)
    load_friction = check_option(load_friction, "load_friction", _LOAD_OPTIONS)
    if min_speed is not None:
        min_speed = check_positive(min_speed, "min_speed", allow_zero=True)
    parallel_tol = check_positive(parallel_tol, "parallel_tol")
    rcond = check_positive(rcond, "rcond")

    rotations = np.stack([s.rotation for s in items])
    axes = np.stack([s.axis for s in items])
    joints = [s.joint for s in items]
    group_of, keys = _group_index([s.group for s in items], joints, axes, "sweeps")
    _check_geometry(rotations, axes, group_of, keys, joints, parallel_tol)
    moments = np.empty((len(keys), 3))
    for g, key in enumerate(keys):
        members = np.flatnonzero(group_of == g)
        moments[g] = items[int(members[0])].moment
        for i in members[1:]:
            if not np.allclose(items[int(i)].moment, moments[g], rtol=1e-6, atol=1e-12):
                raise ValueError(
                    f"Expected the sweeps of group {key!r} in `sweeps` to share one `moment`, "
                    f"got {np.round(moments[g], 6).tolist()} and "
                    f"{np.round(items[int(i)].moment, 6).tolist()}."
                )
    # Geometry first with unit weights, to get the model's (alpha, beta) at the prior.
    unit = np.broadcast_to(np.eye(2), (len(items), 2, 2))
    prob0 = _make_problem(rotations, axes, group_of, len(keys), np.zeros((len(items), 2)), unit)
    x = np.einsum("gji,gj->gi", prob0.bases, moments)
    y = np.einsum("sij,sj->si", _model_matrix(prob0, u), x[group_of])
    cov = np.stack(
        [
            _sin_cos_bound(
                s.q, s.velocity, s.q_ref, y[i], s.noise_std, min_speed, friction, load_friction
            )
            for i, s in enumerate(items)
        ]
    )
    prob = _make_problem(rotations, axes, group_of, len(keys), y, cov)
    basis = _tangent_basis(u)
    information, unreduced = _reduced_information(_jacobian(prob, u, basis, x))
    eig = np.linalg.eigvalsh(information)
    top = float(np.linalg.eigvalsh(unreduced)[-1])
    if top <= 0.0 or eig[0] <= rcond * top:
        raise DegenerateGeometryError(
            "Expected the planned sweeps in `sweeps` to determine `up`, got a singular Fisher "
            f"information (eigenvalues {eig[0]:.3g}, {eig[1]:.3g}; unreduced scale {top:.3g}): "
            "the moments are zero or the axes leave a direction of `up` free."
        )
    covariance = np.linalg.inv(information)
    return UpBound(
        up=u,
        covariance=0.5 * (covariance + covariance.T),
        tangent_basis=basis,
        information=information,
        condition=float(eig[1] / eig[0]),
    )


def moment_from_mass_model(
    chain: SerialChain,
    configuration: ArrayLike,
    joint: int,
    masses: ArrayLike,
    coms: ArrayLike,
    *,
    g: float = 9.81,
) -> NDArray[np.float64]:
    """The moment :math:`w = g\\,(a \\times m)` of `joint` from a mass model, link frame.

    Parameters
    ----------
    chain : SerialChain
        The arm's kinematics.
    configuration : array_like, shape (n,)
        Joint angles, rad (only the joints distal to `joint` matter).
    joint : int
        The joint, 0-based.
    masses : array_like, shape (n,)
        Mass of each link, kg (nominal values are enough for planning).
    coms : array_like, shape (n, 3)
        Centre of mass of each link in that link's own frame, m.
    g : float, optional
        Gravitational acceleration, m/s² (default 9.81).

    Returns
    -------
    ndarray, shape (3,)
        :math:`w = g\\,(a \\times m)` with :math:`m = \\sum_{k \\ge j} m_k R_j^\\top
        (c_k - p_j)`, in N·m; a sweep with torque gain :math:`\\kappa` measures
        :math:`\\kappa w`.

    Raises
    ------
    ValueError
        If a shape does not match the chain, a mass is negative or `g` is not positive.

    Examples
    --------
    >>> from gravdir.kinematics import chain_from_dh
    >>> chain = chain_from_dh([0.0], [0.0], [1.0], [0.0])
    >>> moment_from_mass_model(chain, [0.0], 0, [2.0], [[0.0, 0.0, 0.0]]).round(6) + 0.0
    array([ 0.  , 19.62,  0.  ])
    """
    joint = _joint_index(joint)
    rot, a = _chain_rotation(chain, configuration, joint)
    n = chain.n_joints
    m_arr = check_array(masses, "masses")
    if m_arr.shape != (n,):
        raise ValueError(f"Expected `masses` to have shape ({n},), got {_describe(m_arr.shape)}.")
    if np.any(m_arr < 0):
        raise ValueError(
            f"Expected `masses` to be non-negative, got a minimum of {float(np.min(m_arr)):g}."
        )
    c_arr = check_array(coms, "coms")
    if c_arr.shape != (n, 3):
        raise ValueError(f"Expected `coms` to have shape ({n}, 3), got {_describe(c_arr.shape)}.")
    g = check_positive(g, "g")
    frames = link_frames(chain, check_array(configuration, "configuration"))
    centres = np.einsum("kij,kj->ki", frames.rotations, c_arr) + frames.origins
    lever = centres[joint:] - frames.joint_points[joint]
    first_moment = rot.T @ np.einsum("k,ki->i", m_arr[joint:], lever)
    out: NDArray[np.float64] = g * np.cross(a, first_moment)
    return out


def planned_sweep_from_chain(
    chain: SerialChain,
    configuration: ArrayLike,
    joint: int,
    arc: float,
    *,
    masses: ArrayLike,
    coms: ArrayLike,
    noise_std: float,
    speed: float = 0.5,
    sample_rate: float = 100.0,
    gain: float = 1.0,
    group: Hashable | None = None,
    g: float = 9.81,
) -> PlannedSweep:
    """A :class:`PlannedSweep` of `joint` centred at ``configuration[joint]``.

    Parameters
    ----------
    chain : SerialChain
        The arm's kinematics.
    configuration : array_like, shape (n,)
        Joint angles of the sweep; entry `joint` is the middle of the arc and ``q_ref``.
    joint : int
        The joint to sweep, 0-based.
    arc : float
        Length of the swept arc, rad.
    masses, coms : array_like
        Mass model, as in :func:`moment_from_mass_model`.
    noise_std : float
        White torque noise of the joint, N·m.
    speed, sample_rate : float, optional
        As in :func:`sweep_samples` (defaults 0.5 rad/s and 100 Hz).
    gain : float, optional
        Torque gain of the joint assumed for the moment (default 1).
    group : hashable, optional
        As in :class:`JointSweep`.
    g : float, optional
        Gravitational acceleration, m/s².

    Returns
    -------
    PlannedSweep

    Raises
    ------
    ValueError
        If an argument is invalid (see :func:`moment_from_mass_model`, :func:`sweep_samples`).

    Examples
    --------
    >>> from gravdir.kinematics import chain_from_dh
    >>> chain = chain_from_dh([0.2, 0.0], [0.0, 0.0], [0.0, 0.5], [np.pi / 2, 0.0])
    >>> planned_sweep_from_chain(chain, [0.0, 0.0], 1, np.pi / 2, masses=[1.0, 2.0],
    ...                          coms=np.zeros((2, 3)), noise_std=0.05)
    PlannedSweep(joint=1, group=1, q_ref=0.000°, arc=90.0°, samples=630, |w|=9.81)
    """
    joint = _joint_index(joint)
    rot, a = _chain_rotation(chain, configuration, joint)
    config = np.asarray(configuration, dtype=np.float64)
    w = check_positive(gain, "gain") * moment_from_mass_model(
        chain, config, joint, masses, coms, g=g
    )
    q, v = sweep_samples(float(config[joint]), arc, speed, sample_rate)
    return PlannedSweep(joint, rot, a, float(config[joint]), q, v, w, noise_std, group)


@dataclass(frozen=True, repr=False)
class SweepPlan:
    """The sweep plan :func:`plan_sweeps` recommends.

    Attributes
    ----------
    positions : ndarray, shape (k,)
        Angles of the reference joint (J1 by default) at which to sweep the planned joint, rad.
    arc : float
        Arc of each sweep, rad, centred at the configuration's angle of the swept joint.
    spacing : float
        Step between successive `positions`, rad.
    bound : UpBound
        Cramér-Rao bound of `up` for the plan.
    reached : bool
        Whether ``bound.std`` meets the target; if no candidate does, the plan is the candidate
        with the smallest bound and `reached` is false.
    sweeps : tuple of PlannedSweep
        The planned sweeps (samples, kinematics, rough moments).
    candidates : ndarray, shape (c, 4)
        Every candidate searched: number of sweeps, spacing (rad), arc (rad) and bound std
        (rad; infinite where the candidate cannot determine `up`).
    """

    positions: NDArray[np.float64]
    arc: float
    spacing: float
    bound: UpBound
    reached: bool
    sweeps: tuple[PlannedSweep, ...]
    candidates: NDArray[np.float64] = field(repr=False)

    def __repr__(self) -> str:
        pos = ", ".join(f"{p:.1f}°" for p in np.degrees(self.positions))
        return (
            f"SweepPlan(positions=[{pos}], arc={np.degrees(self.arc):.0f}°, "
            f"std={self.bound.std_deg:.3g}°, reached={self.reached})"
        )


def plan_sweeps(
    chain: SerialChain,
    configuration: ArrayLike,
    *,
    masses: ArrayLike,
    coms: ArrayLike,
    noise_std: float,
    target_std: float,
    up_prior: ArrayLike = (0.0, 0.0, 1.0),
    joint: int = 1,
    reference_joint: int = 0,
    counts: Sequence[int] = (2, 3, 4),
    spacings: Sequence[float] = (np.pi / 3, np.pi / 2, 2 * np.pi / 3),
    arcs: Sequence[float] = tuple(np.radians([60.0, 90.0, 120.0, 150.0, 180.0])),
    speed: float = 0.5,
    sample_rate: float = 100.0,
    load_friction: str = "none",
    g: float = 9.81,
) -> SweepPlan:
    """Recommend sweeps of `joint` reaching `target_std` with the fewest and shortest sweeps.

    Parameters
    ----------
    chain : SerialChain
        The arm's kinematics.
    configuration : array_like, shape (n,)
        The posture of the sweeps: entry `reference_joint` is the first position (e.g. θ1, the
        J1 zero found by a J1 sweep), entry `joint` the middle of each arc, the joints distal
        to `joint` fix the moment.
    masses, coms : array_like
        A rough mass model (:func:`moment_from_mass_model`).
    noise_std : float
        White torque noise of `joint`, N·m.
    target_std : float
        Target root-mean-square error of `up`, rad.
    up_prior : array_like, shape (3,), optional
        `up` at which the bounds are evaluated (default upright).
    joint : int, optional
        The joint to sweep (default 1, J2).
    reference_joint : int, optional
        The joint whose position changes between sweeps (default 0, J1); it must be proximal
        to `joint`.
    counts : sequence of int, optional
        Numbers of sweeps searched (default 2, 3, 4).
    spacings : sequence of float, optional
        Steps between reference-joint positions, rad (default 60°, 90°, 120°).
    arcs : sequence of float, optional
        Arc lengths searched, rad (default 60° to 180° in steps of 30°).
    speed, sample_rate : float, optional
        Sweep speed (rad/s) and sample rate (Hz) of the planned sweeps.
    load_friction : {"none", "abs"}, optional
        The fit the bound is for (:func:`crlb_up`).
    g : float, optional
        Gravitational acceleration, m/s².

    Returns
    -------
    SweepPlan
        The first candidate, in order of (number of sweeps, arc, spacing), each ascending
        whatever the order of `counts`, `arcs` and `spacings`, whose bound meets
        `target_std`; or the best candidate if none does (then ``reached`` is false and a
        :class:`~gravdir.GravdirWarning` is issued).

    Raises
    ------
    ValueError
        If an argument is invalid, `reference_joint` is not proximal to `joint`, or no
        candidate can determine `up`.

    Notes
    -----
    Positions are ``configuration[reference_joint] + k * spacing``, ``k = 0, ..., count - 1``.
    Two sweeps 180° apart turn about one axis line and are degenerate
    (:func:`estimate_up`); such candidates get an infinite bound. The search evaluates
    :func:`crlb_up` for every candidate: a few dozen small Fisher matrices.

    Examples
    --------
    >>> from gravdir.kinematics import chain_from_dh
    >>> chain = chain_from_dh([0.2, 0.0], [0.0, 0.0], [0.0, 0.5], [np.pi / 2, 0.0])
    >>> plan = plan_sweeps(chain, [0.0, 0.0], masses=[1.0, 2.0], coms=np.zeros((2, 3)),
    ...                    noise_std=0.05, target_std=np.radians(0.2))
    >>> plan.reached, len(plan.sweeps)
    (True, 3)
    """
    if not isinstance(chain, SerialChain):
        raise ValueError(f"Expected `chain` to be a SerialChain, got {type(chain).__name__}.")
    joint = _joint_index(joint)
    reference_joint = _joint_index(reference_joint, "reference_joint")
    if reference_joint >= joint:
        raise ValueError(
            f"Expected `reference_joint` to be proximal to `joint` ({joint}), got "
            f"{reference_joint}."
        )
    config = check_array(configuration, "configuration")
    if config.shape != (chain.n_joints,):
        raise ValueError(
            f"Expected `configuration` to have shape ({chain.n_joints},), "
            f"got {_describe(config.shape)}."
        )
    target = check_positive(target_std, "target_std")
    count_list = []
    for count_value in counts:
        if (
            isinstance(count_value, bool)
            or not isinstance(count_value, (int, np.integer))
            or count_value < 2
        ):
            raise ValueError(f"Expected `counts` to hold ints >= 2, got {count_value!r}.")
        count_list.append(int(count_value))
    spacing_list = [check_positive(s, "spacings") for s in spacings]
    arc_list = [check_positive(a, "arcs") for a in arcs]
    if not (count_list and spacing_list and arc_list):
        raise ValueError("Expected non-empty `counts`, `spacings` and `arcs`.")
    prior = check_unit_vector(up_prior, "up_prior", normalize=True)

    table = []
    best: tuple[float, SweepPlan] | None = None
    for count in sorted(set(count_list)):
        for arc in sorted(arc_list):
            for spacing in sorted(spacing_list):
                positions = config[reference_joint] + spacing * np.arange(count)
                plans = []
                for position in positions:
                    c = config.copy()
                    c[reference_joint] = position
                    plans.append(
                        planned_sweep_from_chain(
                            chain,
                            c,
                            joint,
                            arc,
                            masses=masses,
                            coms=coms,
                            noise_std=noise_std,
                            speed=speed,
                            sample_rate=sample_rate,
                            g=g,
                        )
                    )
                try:
                    bound = crlb_up(plans, prior, load_friction=load_friction)
                except DegenerateGeometryError:
                    table.append([count, spacing, arc, np.inf])
                    continue
                table.append([count, spacing, arc, bound.std])
                plan = SweepPlan(
                    positions=positions,
                    arc=arc,
                    spacing=spacing,
                    bound=bound,
                    reached=bound.std <= target,
                    sweeps=tuple(plans),
                    candidates=np.zeros((0, 4)),
                )
                if plan.reached:
                    return _with_candidates(plan, table)
                if best is None or bound.std < best[0]:
                    best = (bound.std, plan)
    if best is None:
        raise DegenerateGeometryError(
            "Expected some candidate of `counts`, `spacings` and `arcs` to determine `up`, "
            "got none: check that the swept joint's axis is not parallel to the reference "
            "joint's axis and that the mass model gives the joint a gravity load."
        )
    warnings.warn(
        f"No candidate plan reaches `target_std` = {np.degrees(target):.3g}°; the best reaches "
        f"{np.degrees(best[0]):.3g}°.",
        GravdirWarning,
        stacklevel=2,
    )
    return _with_candidates(best[1], table)


def _with_candidates(plan: SweepPlan, table: list[list[float]]) -> SweepPlan:
    return SweepPlan(
        positions=plan.positions,
        arc=plan.arc,
        spacing=plan.spacing,
        bound=plan.bound,
        reached=plan.reached,
        sweeps=plan.sweeps,
        candidates=np.array(table, dtype=np.float64).reshape(-1, 4),
    )
