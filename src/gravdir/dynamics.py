"""Inverse-dynamics regressor of a serial chain of revolute joints.

The joint torques of a rigid chain are linear in the inertial parameters of its links:
:math:`\\tau = Y(q, \\dot q, \\ddot q)\\, \\pi`. :func:`inverse_dynamics_regressor` evaluates
:math:`Y` by the Newton--Euler recursion written in regressor form, :func:`inertial_parameters`
turns masses, centres of mass and inertia tensors into :math:`\\pi`, and :func:`joint_regressor`
gives the per-joint columns (armature, Coulomb and viscous friction, offset) that a drive adds.
The derivation is on the *Dynamics* page of the documentation.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import ClassVar

import numpy as np
import scipy.linalg
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import (
    check_array,
    check_count,
    check_positive,
    check_radians,
    check_same_shape,
    check_unit_vector,
    describe_shape,
)
from gravdir._constants import STANDARD_GRAVITY
from gravdir._results import Result
from gravdir.kinematics import ChainFrames, SerialChain, link_frames

__all__ = [
    "BaseParameters",
    "base_parameters",
    "inertial_parameters",
    "inverse_dynamics_regressor",
    "joint_regressor",
]

N_LINK_PARAMETERS = 10
N_JOINT_PARAMETERS = 4


def _skew(w: NDArray[np.float64]) -> NDArray[np.float64]:
    """Cross-product matrices ``[w]x`` of vectors ``(..., 3)``, shape ``(..., 3, 3)``."""
    s = np.zeros(w.shape + (3,))
    s[..., 0, 1], s[..., 0, 2] = -w[..., 2], w[..., 1]
    s[..., 1, 0], s[..., 1, 2] = w[..., 2], -w[..., 0]
    s[..., 2, 0], s[..., 2, 1] = -w[..., 1], w[..., 0]
    return s


def _inertia_map(v: NDArray[np.float64]) -> NDArray[np.float64]:
    """``L(v)`` with ``I v = L(v) (Ixx, Ixy, Iyy, Ixz, Iyz, Izz)``, shape ``(..., 3, 6)``."""
    x, y, z = v[..., 0], v[..., 1], v[..., 2]
    m = np.zeros(v.shape[:-1] + (3, 6))
    m[..., 0, 0], m[..., 0, 1], m[..., 0, 3] = x, y, z
    m[..., 1, 1], m[..., 1, 2], m[..., 1, 4] = x, y, z
    m[..., 2, 3], m[..., 2, 4], m[..., 2, 5] = x, y, z
    return m


def _joint_array(x: ArrayLike, name: str, n: int) -> NDArray[np.float64]:
    arr = check_array(x, name, min_ndim=1)
    if arr.shape[-1] != n:
        raise ValueError(
            f"Expected `{name}` to have shape (..., {n}) for a chain of {n} joints, "
            f"got {describe_shape(arr.shape)}."
        )
    return arr


def _refuse_overflow(y: NDArray[np.float64], what: str) -> NDArray[np.float64]:
    if not np.isfinite(y).all():
        raise ValueError(
            f"Expected {what} to keep the regressor finite, got an overflow: the product of "
            "lengths, velocities and accelerations exceeds the float range."
        )
    return y


def _base_acceleration(
    up: ArrayLike | None, gravity: float, base_acceleration: ArrayLike | None
) -> NDArray[np.float64]:
    if up is not None and base_acceleration is not None:
        raise ValueError(
            "Expected either `up` (gravity as the base acceleration `gravity` * `up`) or "
            "`base_acceleration`, got both."
        )
    g = check_positive(gravity, "gravity")
    if up is not None:
        return np.asarray(g * check_unit_vector(up, "up"), dtype=np.float64)
    if base_acceleration is None:
        return np.zeros(3)
    return check_array(base_acceleration, "base_acceleration", tail=(3,))


def inverse_dynamics_regressor(
    chain: SerialChain,
    q: ArrayLike,
    velocity: ArrayLike,
    acceleration: ArrayLike,
    *,
    up: ArrayLike | None = None,
    gravity: float = STANDARD_GRAVITY,
    base_acceleration: ArrayLike | None = None,
) -> NDArray[np.float64]:
    """Regressor :math:`Y` of the joint torques of `chain`: :math:`\\tau = Y \\pi`.

    Parameters
    ----------
    chain : SerialChain
        The chain (:func:`~gravdir.kinematics.chain_from_dh`,
        :func:`~gravdir.kinematics.chain_from_poe`, :func:`~gravdir.urdf.chain_from_urdf`).
    q : array_like, shape (..., n)
        Joint positions, rad, within ±4π.
    velocity : array_like, shape (..., n)
        Joint velocities, rad/s.
    acceleration : array_like, shape (..., n)
        Joint accelerations, rad/s². Leading axes of `q`, `velocity` and `acceleration` (and of
        `up` or `base_acceleration`) broadcast.
    up : array_like, shape (..., 3), optional
        Unit vector opposite to gravity, base frame (within 1e-6 of unit norm). Gravity enters
        as the upward base acceleration ``gravity * up``. Exclusive with `base_acceleration`.
    gravity : float, optional
        Gravitational acceleration, m/s², positive; default standard gravity, 9.80665. Used
        only with `up`.
    base_acceleration : array_like, shape (..., 3), optional
        Linear acceleration of the (non-rotating) base, base frame, m/s²; ``+g up`` is
        gravity. Default: none given and no `up`, zero (no gravity).

    Returns
    -------
    ndarray, shape (..., n, 10 n)
        Row ``j`` maps the parameters to joint ``j``'s torque (the torque the actuator applies
        to the distal link about the joint's +axis). Columns ``10 i .. 10 i + 9`` belong to
        link ``i`` (the link joint ``i`` moves, frame of
        :attr:`~gravdir.kinematics.SerialChain.home_links`), in pinocchio's order
        ``(m, m c_x, m c_y, m c_z, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz)``: mass, first moment
        and inertia about the link origin, in link ``i``'s frame -- see
        :func:`inertial_parameters`. The block is zero for ``i < j``.

    Raises
    ------
    ValueError
        If `chain` is not a :class:`~gravdir.kinematics.SerialChain`; `q`, `velocity` or
        `acceleration` is not numeric and finite with last axis ``n``, or they do not
        broadcast; a joint position lies beyond ±4π ("degrees?"); both `up` and
        `base_acceleration` are given, `up` is not a unit vector, `gravity` is not positive,
        `base_acceleration` is not ``(..., 3)`` and finite; or the regressor overflows.

    Notes
    -----
    Outwards, in the base frame, with :math:`z_i, p_i` joint ``i``'s axis and a point on it,
    :math:`o_i` link ``i``'s origin and :math:`a_0` the base acceleration:
    :math:`\\omega_i = \\omega_{i-1} + z_i \\dot q_i`, :math:`\\dot\\omega_i =
    \\dot\\omega_{i-1} + z_i \\ddot q_i + \\omega_{i-1} \\times z_i \\dot q_i`, and the
    acceleration of :math:`o_i` by rigid-body transport through :math:`p_i`. Link ``i``'s
    wrench about its origin is linear in its parameters (link frame, :math:`h = m c`,
    :math:`I` about the origin): :math:`f = m a + \\dot\\omega \\times h + \\omega \\times
    (\\omega \\times h)`, :math:`n = I \\dot\\omega + \\omega \\times I \\omega - a \\times h`.
    Inwards, :math:`\\tau_j = \\sum_{i \\ge j} z_j \\cdot (n_i + (o_i - p_j) \\times f_i)`.
    Batched over samples; the loops run over links.

    References
    ----------
    C. G. Atkeson, C. H. An and J. M. Hollerbach, "Estimation of inertial parameters of
    manipulator loads and links", *Int. J. Robot. Res.* 5(3) (1986) 101--119 (the Newton--Euler
    equations linear in the ten parameters); J. Y. S. Luh, M. W. Walker and R. P. C. Paul,
    *J. Dyn. Syst. Meas. Control* 102 (1980) 69--76 (the recursion).

    Examples
    --------
    A 1 m pendulum about base +y holding 2 kg at its tip, horizontal along +x on an upright
    base: the actuator holds it with :math:`-m g \\ell`.

    >>> from gravdir.kinematics import chain_from_poe
    >>> chain = chain_from_poe([[0, 1, 0, 0, 0, 0]], np.eye(4))
    >>> y = inverse_dynamics_regressor(chain, [0.0], [0.0], [0.0], up=[0, 0, 1])
    >>> pi = inertial_parameters([2.0], [[1.0, 0, 0]], np.zeros((1, 3, 3)))
    >>> (y @ pi).round(6)
    array([-19.6133])
    """
    if not isinstance(chain, SerialChain):
        raise ValueError(f"Expected `chain` to be a SerialChain, got {type(chain).__name__}.")
    n = chain.n_joints
    qq = _joint_array(q, "q", n)
    qd = _joint_array(velocity, "velocity", n)
    qdd = _joint_array(acceleration, "acceleration", n)
    check_radians(qq, "q")
    a0 = _base_acceleration(up, gravity, base_acceleration)
    shape = check_same_shape(q=qq, velocity=qd, acceleration=qdd)
    batch = check_same_shape(joints=np.empty(shape[:-1] + (3,)), base=a0)[:-1]
    qq = np.broadcast_to(qq, batch + (n,))
    qd = np.broadcast_to(qd, batch + (n,))
    qdd = np.broadcast_to(qdd, batch + (n,))
    y = _regressor_of_frames(link_frames(chain, qq), qd, qdd, np.broadcast_to(a0, batch + (3,)))
    return _refuse_overflow(y, "`q`, `velocity`, `acceleration` and the base acceleration")


def _regressor_of_frames(
    frames: ChainFrames,
    qd: NDArray[np.float64],
    qdd: NDArray[np.float64],
    base_acceleration: NDArray[np.float64],
) -> NDArray[np.float64]:
    """:func:`inverse_dynamics_regressor` from the chain's link frames at the samples, with the
    velocities, accelerations and base accelerations checked and broadcast by the caller
    (batch + (n,) twice, batch + (3,)); no check of its own."""
    rot, org = frames.rotations, frames.origins
    z, p = frames.joint_axes, frames.joint_points
    n, batch = rot.shape[-3], rot.shape[:-3]
    y = np.zeros(batch + (n, N_LINK_PARAMETERS * n))
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        w = np.zeros(batch + (3,))
        wd = np.zeros(batch + (3,))
        acc = base_acceleration
        o_prev = p[..., 0, :]
        for i in range(n):
            d = p[..., i, :] - o_prev
            acc = acc + np.cross(wd, d) + np.cross(w, np.cross(w, d))
            spin = z[..., i, :] * qd[..., i, None]
            wd = wd + z[..., i, :] * qdd[..., i, None] + np.cross(w, spin)
            w = w + spin
            r = org[..., i, :] - p[..., i, :]
            acc = acc + np.cross(wd, r) + np.cross(w, np.cross(w, r))
            o_prev = org[..., i, :]
            # The link's wrench about its origin, linear in its parameters, in its own frame.
            ri = rot[..., i, :, :]
            w_l = np.einsum("...ji,...j->...i", ri, w)
            wd_l = np.einsum("...ji,...j->...i", ri, wd)
            a_l = np.einsum("...ji,...j->...i", ri, acc)
            yf = np.zeros(batch + (3, N_LINK_PARAMETERS))
            yn = np.zeros(batch + (3, N_LINK_PARAMETERS))
            sw = _skew(w_l)
            yf[..., :, 0] = a_l
            yf[..., :, 1:4] = _skew(wd_l) + sw @ sw
            yn[..., :, 1:4] = -_skew(a_l)
            yn[..., :, 4:10] = _inertia_map(wd_l) + sw @ _inertia_map(w_l)
            yf = ri @ yf
            yn = ri @ yn
            # Projected onto the axes of joints 0..i about their points.
            lever = np.cross(z[..., : i + 1, :], org[..., i, None, :] - p[..., : i + 1, :])
            block = z[..., : i + 1, :] @ yn + lever @ yf
            y[..., : i + 1, N_LINK_PARAMETERS * i : N_LINK_PARAMETERS * (i + 1)] = block
    return y


def _rest_regressors(frames: ChainFrames) -> NDArray[np.float64]:
    """The regressors of the chain at rest under a unit base acceleration along each base axis:
    ``out[k]`` is :func:`inverse_dynamics_regressor` at the link `frames` (batch ``...``) with
    zero velocity and acceleration and base acceleration ``e_k``; shape (3, ..., n, 10 n).

    At rest the recursion of :func:`inverse_dynamics_regressor` leaves every link the base
    acceleration ``a`` and no angular motion, so link ``i``'s force is ``m a`` and its moment
    about its origin ``-a x (R_i h)`` (``h`` its first moment in its frame). Joint ``j <= i``
    takes ``z_j . (n + (o_i - p_j) x f)``: column ``m`` holds ``(z_j x (o_i - p_j)) . a`` and
    the three of ``h`` the row ``(a x z_j)^T R_i``; the inertia columns are zero. Derivation:
    *Gravity from ordinary motion* page, "The regressor at rest". One pass over the links,
    without the velocity terms the general recursion forms.
    """
    rot, org = frames.rotations, frames.origins
    z, p = frames.joint_axes, frames.joint_points
    n = rot.shape[-3]
    y = np.zeros((3,) + rot.shape[:-3] + (n, N_LINK_PARAMETERS * n))
    for i in range(n):
        col = N_LINK_PARAMETERS * i
        zj = z[..., : i + 1, :]
        y[:, ..., : i + 1, col] = np.moveaxis(
            np.cross(zj, org[..., i, None, :] - p[..., : i + 1, :]), -1, 0
        )
        # (e_k x z_j)^T R_i, row by row: e_0 x z = (0, -z_2, z_1) and its cyclic shifts.
        r = rot[..., i, None, :, :]  # rows R_i[c, :]
        z0, z1, z2 = zj[..., 0, None], zj[..., 1, None], zj[..., 2, None]
        y[0, ..., : i + 1, col + 1 : col + 4] = z1 * r[..., 2, :] - z2 * r[..., 1, :]
        y[1, ..., : i + 1, col + 1 : col + 4] = z2 * r[..., 0, :] - z0 * r[..., 2, :]
        y[2, ..., : i + 1, col + 1 : col + 4] = z0 * r[..., 1, :] - z1 * r[..., 0, :]
    return y


def inertial_parameters(
    mass: ArrayLike, com_in_link: ArrayLike, inertia_in_link: ArrayLike
) -> NDArray[np.float64]:
    """Inertial parameters :math:`\\pi` of the links, in the order of the regressor.

    Parameters
    ----------
    mass : array_like, shape (n,)
        Mass of each link, kg, non-negative.
    com_in_link : array_like, shape (n, 3)
        Its centre of mass in link ``i``'s frame, m.
    inertia_in_link : array_like, shape (n, 3, 3)
        Its inertia tensor about its centre of mass, axes of link ``i``'s frame, kg·m²,
        symmetric (within 1e-9 of its largest entry). These are the fields of
        :class:`~gravdir.urdf.UrdfInertials`, whose link frames are those of
        :func:`~gravdir.urdf.chain_from_urdf`.

    Returns
    -------
    ndarray, shape (10 n,)
        Per link ``(m, m c_x, m c_y, m c_z, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz)``, the inertia
        now about the link origin: :math:`I_o = I_c + m (\\lVert c\\rVert^2 E - c c^\\top)`.

    Raises
    ------
    ValueError
        If the shapes do not agree, a value is not numeric and finite, a mass is negative, an
        inertia tensor is not symmetric, or a parameter overflows. Positive
        semi-definiteness and the triangle inequality are not checked.

    Notes
    -----
    The order is pinocchio's ``Inertia.toDynamicParameters``; the parallel-axis theorem moves
    the inertia from the centre of mass to the link origin.

    References
    ----------
    pinocchio 4.1, Python binding ``pinocchio.Inertia.toDynamicParameters`` (docstring: "v = [m,
    mc_x, mc_y, mc_z, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz] where I = I_C + m S^T(c) S(c)").

    Examples
    --------
    >>> pi = inertial_parameters([2.0], [[0.0, 0.0, 0.5]], [np.eye(3) * 0.1])
    >>> pi.round(6).tolist()
    [2.0, 0.0, 0.0, 1.0, 0.6, 0.0, 0.6, 0.0, 0.0, 0.1]
    """
    m = check_array(mass, "mass", min_ndim=1)
    if m.ndim != 1:
        raise ValueError(f"Expected `mass` to have shape (n,), got {describe_shape(m.shape)}.")
    n = m.shape[0]
    c = check_array(com_in_link, "com_in_link", tail=(3,))
    if c.shape != (n, 3):
        raise ValueError(
            f"Expected `com_in_link` to have shape {describe_shape((n, 3))} like `mass`, "
            f"got {describe_shape(c.shape)}."
        )
    inertia = check_array(inertia_in_link, "inertia_in_link", tail=(3, 3))
    if inertia.shape != (n, 3, 3):
        raise ValueError(
            f"Expected `inertia_in_link` to have shape {describe_shape((n, 3, 3))} like `mass`, "
            f"got {describe_shape(inertia.shape)}."
        )
    if (m < 0).any():
        raise ValueError(f"Expected `mass` to be non-negative, got {m.min():.6g}.")
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        scale = np.max(np.abs(inertia), axis=(-2, -1))
        asym = np.max(np.abs(inertia - np.swapaxes(inertia, -1, -2)), axis=(-2, -1))
        lopsided = (asym > 1e-9 * scale).any()
    if lopsided:
        raise ValueError(
            "Expected `inertia_in_link` to be symmetric, got an asymmetry of "
            f"{float(np.max(asym / np.where(scale > 0, scale, 1.0))):.3g} of its largest entry."
        )
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        sym = 0.5 * (inertia + np.swapaxes(inertia, -1, -2))
        h = m[:, None] * c
        about_origin = sym + m[:, None, None] * (
            np.einsum("ni,ni->n", c, c)[:, None, None] * np.eye(3) - c[:, :, None] * c[:, None, :]
        )
        pi = np.empty((n, N_LINK_PARAMETERS))
        pi[:, 0] = m
        pi[:, 1:4] = h
        pi[:, 4:10] = about_origin[:, [0, 0, 1, 0, 1, 2], [0, 1, 1, 2, 2, 2]]
    if not np.isfinite(pi).all():
        raise ValueError(
            "Expected `mass`, `com_in_link` and `inertia_in_link` to give finite parameters, "
            "got an overflow."
        )
    return pi.reshape(-1)


def joint_regressor(velocity: ArrayLike, acceleration: ArrayLike) -> NDArray[np.float64]:
    """Per-joint columns a drive adds to the torque: armature, friction and offset.

    Parameters
    ----------
    velocity : array_like, shape (..., n)
        Joint velocities, rad/s.
    acceleration : array_like, shape (..., n)
        Joint accelerations, rad/s²; leading axes broadcast against `velocity`.

    Returns
    -------
    ndarray, shape (..., n, 4 n)
        Row ``j`` has ``(q̈_j, sign q̇_j, q̇_j, 1)`` in columns ``4 j .. 4 j + 3`` and zeros
        elsewhere, for the parameters ``(armature, coulomb, viscous, offset)`` of each joint:
        rotor inertia reflected to the joint (kg·m²), Coulomb friction (N·m), viscous friction
        (N·m·s/rad) and a constant torque offset (N·m). ``sign 0 = 0``. Appended to
        :func:`inverse_dynamics_regressor` it models
        :math:`\\tau_j = (Y \\pi)_j + J_j \\ddot q_j + F_{c,j} \\operatorname{sign} \\dot q_j
        + F_{v,j} \\dot q_j + \\tau_{0,j}`.

    Raises
    ------
    ValueError
        If `velocity` or `acceleration` is not numeric and finite with at least one axis, or
        their last axes differ or their shapes do not broadcast.

    Notes
    -----
    Friction opposes the motion, so the actuator supplies it with the sign of the velocity:
    positive Coulomb and viscous coefficients are physical. The armature term is the rotor
    inertia seen at the joint (gear ratio squared times the rotor's inertia); gyroscopic
    coupling of the rotors is left out.

    References
    ----------
    W. Khalil and E. Dombre, *Modeling, Identification and Control of Robots* (Hermes Penton,
    2002), the dynamic model with friction and rotor inertia.

    Examples
    --------
    >>> y = joint_regressor([0.5, -2.0], [1.0, 0.0])
    >>> y.shape
    (2, 8)
    >>> y[1, 4:].tolist()
    [0.0, -1.0, -2.0, 1.0]
    """
    qd = check_array(velocity, "velocity", min_ndim=1)
    qdd = check_array(acceleration, "acceleration", min_ndim=1)
    if qd.shape[-1] != qdd.shape[-1]:
        raise ValueError(
            f"Expected `velocity` {describe_shape(qd.shape)} and `acceleration` "
            f"{describe_shape(qdd.shape)} to have the same last axis (joints)."
        )
    shape = check_same_shape(velocity=qd, acceleration=qdd)
    n = shape[-1]
    qd = np.broadcast_to(qd, shape)
    qdd = np.broadcast_to(qdd, shape)
    y = np.zeros(shape[:-1] + (n, N_JOINT_PARAMETERS * n))
    j = np.arange(n)
    cols = N_JOINT_PARAMETERS * j
    y[..., j, cols] = qdd
    y[..., j, cols + 1] = np.sign(qd)
    y[..., j, cols + 2] = qd
    y[..., j, cols + 3] = 1.0
    return y


# Columns whose pivoted-QR diagonal is below this fraction of the largest one (after every
# column is scaled to unit norm) depend on the others: a combination that random states of a
# chain of metre-sized links fix to ~1e-14 is one, a missing parameter is far below 1e-8.
_BASE_RTOL = 1e-8
_MAX_BASE_STATES = 10_000


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class BaseParameters(Result):
    """The identifiable (base) combinations of a chain's inertial parameters.

    Attributes
    ----------
    independent : ndarray of int, shape (p,)
        Indices of the standard parameters (:func:`inertial_parameters` order) kept as columns:
        ``Y[..., independent]`` is the base regressor.
    combination : ndarray, shape (p, 10 n)
        Base parameters from standard ones, :math:`\\beta = K \\pi`, with
        ``K[:, independent]`` the identity. For every state and every base acceleration,
        :math:`Y \\pi = Y_{[:, \\text{independent}]}\\, K \\pi`.
    n_states : int
        Random states stacked to find them.
    """

    independent: NDArray[np.int64]
    combination: NDArray[np.float64]
    n_states: int

    _units: ClassVar[Mapping[str, str]] = {"independent": "", "combination": "", "n_states": ""}

    @property
    def rank(self) -> int:
        """Number of base parameters, ``p``."""
        return int(self.independent.shape[0])

    def standard_from_base(self, beta: ArrayLike) -> NDArray[np.float64]:
        """The minimum-norm standard parameters :math:`\\pi = K^+ \\beta`, shape (..., 10 n).

        One representative of the set of standard parameters with the base parameters `beta`
        (every member gives the same torques).
        """
        b = np.asarray(beta, dtype=np.float64)
        out: NDArray[np.float64] = b @ np.linalg.pinv(self.combination).T
        return out

    def __repr__(self) -> str:
        return (
            f"BaseParameters(rank={self.rank} of {self.combination.shape[1]}, "
            f"n_states={self.n_states})"
        )


def base_parameters(
    chain: SerialChain,
    *,
    n_states: int | None = None,
    rng: np.random.Generator | None = None,
    rtol: float = _BASE_RTOL,
) -> BaseParameters:
    """The base parameters of `chain`, numerically, valid for every direction of gravity.

    Parameters
    ----------
    chain : SerialChain
        The chain.
    n_states : int, optional
        Random states stacked, at most 10000; default ``20 n``.
    rng : numpy.random.Generator, optional
        Source of the random states; default ``numpy.random.default_rng(0)``, so that the
        result is reproducible.
    rtol : float, optional
        Rank threshold of the pivoted QR, relative to its largest diagonal entry after every
        column is scaled to unit norm; default 1e-8.

    Returns
    -------
    BaseParameters
        The kept columns and the combination matrix :math:`K` with
        :math:`Y \\pi = Y_{[:, \\text{independent}]} K \\pi`.

    Raises
    ------
    ValueError
        If `chain` is not a :class:`~gravdir.kinematics.SerialChain`, `n_states` is not an
        integer from 1 to 10000, `rng` is not a generator or `rtol` is not in (0, 1).

    Notes
    -----
    The torques are :math:`\\tau = (Y_0 + \\sum_k a_k Y_k)\\, \\pi` with :math:`Y_0` the
    regressor without base acceleration and :math:`Y_k` the one at rest with unit base
    acceleration along base axis ``k`` (the regressor is linear in the base acceleration
    :math:`a = g\\,\\mathrm{up}`). The stack :math:`W = [Y_0; Y_1; Y_2; Y_3]` at random states
    has the null space of the regressor at a generic tilt: on a tilted base the first moments
    of the first link carry torque, on an upright one they do not, so the grouping rules of an
    upright base would drop parameters that a tilted base identifies. Pivoted QR of the
    column-scaled :math:`W`, :math:`W_s P = Q [R_{11}\\; R_{12}]`, keeps the pivot columns of
    :math:`R_{11}` and writes the others as :math:`R_{11}^{-1} R_{12}` of them. On an exactly
    upright base some base parameters carry no torque; an estimator then solves with a
    pseudo-inverse (the *Motion* page).

    References
    ----------
    M. Gautier, "Numerical calculation of the base inertial parameters of robots", *J. Robotic
    Systems* 8(4) (1991) 485--506 (QR of a regressor stacked over random states).

    Examples
    --------
    A single joint about base +z: on a tilted base its mass moment about the axis
    (``m c_x, m c_y``) and ``I_zz`` are identifiable, nothing else.

    >>> from gravdir.kinematics import chain_from_poe
    >>> chain = chain_from_poe([[0, 0, 1, 0, 0, 0]], np.eye(4))
    >>> base = base_parameters(chain)
    >>> sorted(base.independent.tolist())
    [1, 2, 9]
    """
    if not isinstance(chain, SerialChain):
        raise ValueError(f"Expected `chain` to be a SerialChain, got {type(chain).__name__}.")
    n = chain.n_joints
    count = (
        20 * n
        if n_states is None
        else check_count(n_states, "n_states", minimum=1, maximum=_MAX_BASE_STATES)
    )
    if rng is None:
        rng = np.random.default_rng(0)
    elif not isinstance(rng, np.random.Generator):
        raise ValueError(f"Expected `rng` to be a numpy.random.Generator, got {rng!r}.")
    tol = check_positive(rtol, "rtol")
    if tol >= 1.0:
        raise ValueError(f"Expected `rtol` in (0, 1), got {tol:.6g}.")
    q = rng.uniform(-np.pi, np.pi, (count, n))
    qd = rng.uniform(-1.0, 1.0, (count, n))
    qdd = rng.uniform(-1.0, 1.0, (count, n))
    zero = np.zeros((count, n))
    blocks = [inverse_dynamics_regressor(chain, q, qd, qdd)]
    blocks += [
        inverse_dynamics_regressor(chain, q, zero, zero, base_acceleration=e) for e in np.eye(3)
    ]
    w = np.concatenate([b.reshape(-1, N_LINK_PARAMETERS * n) for b in blocks])
    scale = np.linalg.norm(w, axis=0)
    # A column at rounding level of the largest (a parameter that carries no torque, computed
    # as a sum that cancels) is zero: scaled to unit norm it would look like an independent one.
    zero = scale <= 1e-12 * scale.max(initial=0.0)
    scale = np.where(zero, 1.0, scale)
    w = np.where(zero, 0.0, w / scale)
    r, piv = scipy.linalg.qr(w, mode="r", pivoting=True)
    diag = np.abs(np.diag(r))
    rank = int(np.count_nonzero(diag > tol * diag[0])) if diag.size and diag[0] > 0 else 0
    keep, rest = piv[:rank], piv[rank:]
    k = np.zeros((rank, N_LINK_PARAMETERS * n))
    k[:, keep] = np.eye(rank)
    if rank:
        dep = scipy.linalg.solve_triangular(r[:rank, :rank], r[:rank, rank:])
        k[:, rest] = dep * scale[rest][None, :] / scale[keep][:, None]
    return BaseParameters(keep.astype(np.int64), k, count)
