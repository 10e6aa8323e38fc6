"""A synthetic arm from a URDF description: joint origins, axes and the links' inertials.

:mod:`gravdir.urdf` parses the text; the kinematics here (products of joint origins and
Rodrigues rotations) and the torques (:class:`~gravdir.synthetic._base.ArmModel`, explicit cross
products) are written independently of :func:`gravdir.kinematics.link_frames`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import check_array, check_positive, check_rotation_matrix, norm
from gravdir._constants import STANDARD_GRAVITY
from gravdir._results import Result
from gravdir.synthetic._base import ArmModel
from gravdir.synthetic._validate import (
    MAX_JOINTS,
    check_arm_fields,
    check_scales,
    check_up,
)
from gravdir.urdf import chain_from_urdf, inertials_from_urdf

__all__ = ["SyntheticUrdfArm", "arm_from_urdf"]


def _rodrigues(axis: NDArray[np.float64], angle: NDArray[np.float64]) -> NDArray[np.float64]:
    """Rotation by `angle` (...) about the unit `axis` (3,): I + sin q [a] + (1 - cos q) [a]^2."""
    k = np.array([[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]], [-axis[1], axis[0], 0.0]])
    s, c = np.sin(angle)[..., None, None], np.cos(angle)[..., None, None]
    out: NDArray[np.float64] = np.eye(3) + s * k + (1.0 - c) * (k @ k)
    return out


@dataclass(frozen=True, eq=False, repr=False, init=False)
class SyntheticUrdfArm(Result, ArmModel):
    """A serial arm of revolute joints placed by URDF-style joint origins and axes.

    Build one from URDF text with :func:`arm_from_urdf`; direct construction validates the
    fields the same way. It has every method of
    :class:`~gravdir.synthetic.robot.SyntheticArm` (holding torques, inertias, dynamics,
    sweeps).

    Parameters
    ----------
    origins : array_like, shape (n, 4, 4)
        Pose of link ``i``'s frame in link ``i - 1``'s frame at ``q_i = 0`` (link ``-1`` is
        the base), m: the product of the URDF joint origins from one moving joint to the next,
        fixed joints folded in. Rotations within 1e-6, translations within 1e100 m.
    axes : array_like, shape (n, 3)
        Unit axis of joint ``i`` in link ``i``'s frame, through its origin (within 1e-6 of
        unit norm; normalised).
    masses : array_like, shape (n,)
        Mass of each link (with the fixed links it carries), kg, non-negative.
    coms : array_like, shape (n, 3)
        Centre of mass of each link in its frame, m.
    up : array_like, shape (3,), optional
        Unit vector opposite to gravity in the base frame. Default ``(0, 0, 1)``.
    gravity : float, optional
        Gravitational acceleration, m/s², positive (default: standard gravity, 9.80665).
    name : str, optional
        A label shown in the ``repr``.
    inertias : array_like, shape (n, 3, 3), optional
        Inertia of each link about its centre of mass, link axes, kg·m², physically
        consistent as for :class:`~gravdir.synthetic.robot.SyntheticArm`. Default zeros.
    joint_names : sequence of str, optional
        Name of each joint (empty, the default, or ``n`` names).

    Raises
    ------
    ValueError
        If a shape is wrong, a value is not numeric and finite, the arm has more than 100
        joints, an origin is not a rigid pose, an axis is not unit, a mass is negative, an
        inertia is not physically consistent, `up` is not a unit vector, `gravity` is not
        positive, a length lies beyond 1e100 m, the torque or inertia scale exceeds 1e300
        (see :class:`~gravdir.synthetic.robot.SyntheticArm`), or `joint_names` is not ``n``
        strings.

    Notes
    -----
    Link ``i``'s pose is :math:`T_i(q) = T_{i-1}(q)\\, O_i\\, \\mathrm{Rot}(a_i, q_i)` with
    :math:`T_{-1} = E`, the rotation written out by Rodrigues' formula
    :math:`E + \\sin q\\,[a]_\\times + (1 - \\cos q)\\,[a]_\\times^2`. Joint ``i`` turns about
    :math:`R_i a_i` through the origin of :math:`T_i` -- the URDF convention (ROS URDF
    specification, ``<joint>``: the axis is given in the joint frame, which is the child link's
    frame).

    References
    ----------
    ROS URDF specification, http://wiki.ros.org/urdf/XML/joint.

    Examples
    --------
    A 1 m pendulum turning about base +y with 2 kg at its tip, held horizontal along +x on an
    upright base: turning it by +dq lowers the mass, so the holding torque is :math:`-m g`.

    >>> arm = SyntheticUrdfArm(origins=[np.eye(4)], axes=[[0, 1, 0]], masses=[2.0],
    ...                        coms=[[1.0, 0, 0]])
    >>> arm.gravity_torque([0.0]).round(6)
    array([-19.6133])
    """

    _units = {
        "origins": "m (translation)", "axes": "", "masses": "kg", "coms": "m", "up": "",
        "gravity": "m/s²", "inertias": "kg·m²",
    }

    origins: NDArray[np.float64]
    axes: NDArray[np.float64]
    masses: NDArray[np.float64]
    coms: NDArray[np.float64]
    up: NDArray[np.float64]
    gravity: float
    name: str
    inertias: NDArray[np.float64]
    joint_names: tuple[str, ...]

    def __init__(
        self,
        origins: ArrayLike,
        axes: ArrayLike,
        masses: ArrayLike,
        coms: ArrayLike,
        up: ArrayLike = (0.0, 0.0, 1.0),
        gravity: float = STANDARD_GRAVITY,
        name: str = "",
        *,
        inertias: ArrayLike | None = None,
        joint_names: Sequence[str] = (),
    ) -> None:
        pose = check_array(origins, "origins")
        if pose.ndim != 3 or pose.shape[1:] != (4, 4) or not 1 <= pose.shape[0] <= MAX_JOINTS:
            raise ValueError(
                f"Expected `origins` to have shape (n, 4, 4) with 1 <= n <= {MAX_JOINTS}, "
                f"got {pose.shape}."
            )
        n = pose.shape[0]
        if float(np.max(np.abs(pose[:, 3, :] - [0.0, 0.0, 0.0, 1.0]))) > 1e-12:
            raise ValueError("Expected the last row of each of `origins` to be (0, 0, 0, 1).")
        check_rotation_matrix(pose[:, :3, :3], "origins")
        axis = check_array(axes, "axes")
        if axis.shape != (n, 3):
            raise ValueError(f"Expected `axes` to have shape ({n}, 3), got {axis.shape}.")
        with np.errstate(under="ignore"):
            length = norm(axis)
        worst = float(np.max(np.abs(length - 1.0)))
        if worst > 1e-6:
            raise ValueError(
                f"Expected `axes` to be unit vectors (within 1e-06), got norms off by {worst:.3g}."
            )
        mass_arr, com_arr, up_arr, g, inertia_arr = check_arm_fields(
            masses, coms, up, gravity, name, inertias, n, ("origins", pose[:, :3, 3])
        )
        names = tuple(joint_names) if isinstance(joint_names, list | tuple) else None
        if names is None or len(names) not in (0, n) or not all(isinstance(s, str) for s in names):
            raise ValueError(
                f"Expected `joint_names` to be a sequence of {n} str (or empty), got "
                f"{joint_names!r}."
            )
        with np.errstate(over="ignore", under="ignore"):
            reach = float(np.sum(norm(pose[:, :3, 3])) + np.max(norm(com_arr)))
        check_scales(g, mass_arr, reach, inertia_arr, "`origins`")
        clean = np.array(pose)
        clean[:, 3, :] = [0.0, 0.0, 0.0, 1.0]
        with np.errstate(under="ignore"):
            unit = axis / length[:, None]
        object.__setattr__(self, "origins", clean)
        object.__setattr__(self, "axes", unit)
        object.__setattr__(self, "masses", np.array(mass_arr))
        object.__setattr__(self, "coms", np.array(com_arr))
        object.__setattr__(self, "up", np.array(up_arr))
        object.__setattr__(self, "gravity", g)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "inertias", inertia_arr)
        object.__setattr__(self, "joint_names", names)
        self.__post_init__()  # the result contract: read-only arrays

    __repr__ = ArmModel.describe  # Result's repr comes first in the MRO

    @property
    def n_joints(self) -> int:
        """Number of joints (and links)."""
        return int(self.axes.shape[0])

    def link_poses(self, q: ArrayLike) -> NDArray[np.float64]:
        """Poses of the base frame and every link frame in the base frame.

        Parameters
        ----------
        q : array_like, shape (..., n)
            Joint angles, rad.

        Returns
        -------
        ndarray, shape (..., n + 1, 4, 4)
            Entry 0 is the identity (the base frame); entry ``i + 1`` is link ``i``'s frame,
            :math:`O_0 \\mathrm{Rot}(a_0, q_0) \\cdots O_i \\mathrm{Rot}(a_i, q_i)`.

        Raises
        ------
        ValueError
            If `q` is not ``(..., n)`` and finite.

        Examples
        --------
        >>> from gravdir.synthetic import UR5E_LIKE_URDF, arm_from_urdf
        >>> arm_from_urdf(UR5E_LIKE_URDF, tip_link="tool0").link_poses(np.zeros(6)).shape
        (7, 4, 4)
        """
        qq = self._check_q(q)
        batch = qq.shape[:-1]
        poses = np.empty((*batch, self.n_joints + 1, 4, 4))
        poses[..., 0, :, :] = np.eye(4)
        rotation = np.broadcast_to(np.eye(3), (*batch, 3, 3))
        origin = np.zeros((*batch, 3))
        with np.errstate(under="ignore"):  # products of tiny lengths round to zero
            for i in range(self.n_joints):
                fixed = self.origins[i]
                origin = origin + np.einsum("...ab,b->...a", rotation, fixed[:3, 3])
                rotation = rotation @ fixed[:3, :3] @ _rodrigues(self.axes[i], qq[..., i])
                poses[..., i + 1, :3, :3] = rotation
                poses[..., i + 1, :3, 3] = origin
                poses[..., i + 1, 3, :] = [0.0, 0.0, 0.0, 1.0]
        return poses

    def _axes_points(
        self, poses: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Joint ``i`` turns about ``R_i a_i`` through the origin of link ``i``'s frame."""
        with np.errstate(under="ignore"):
            axes = np.einsum("...iab,ib->...ia", poses[..., 1:, :3, :3], self.axes)
        return axes, poses[..., 1:, :3, 3]


def arm_from_urdf(
    urdf_text: str,
    *,
    base_link: str | None = None,
    tip_link: str | None = None,
    up: ArrayLike = (0.0, 0.0, 1.0),
    gravity: float = STANDARD_GRAVITY,
    name: str = "",
) -> SyntheticUrdfArm:
    """A synthetic arm with the kinematics and inertials of a URDF description.

    Parameters
    ----------
    urdf_text : str
        The URDF XML itself (not a file name), as for :func:`gravdir.urdf.chain_from_urdf`.
    base_link, tip_link : str, optional
        Ends of the chain, as for :func:`gravdir.urdf.chain_from_urdf` (`tip_link` is required
        when the tree has several leaves). The arm's base frame is `base_link`'s frame.
    up : array_like, shape (3,), optional
        Unit vector opposite to gravity in `base_link`'s frame. Default ``(0, 0, 1)``.
    gravity : float, optional
        Gravitational acceleration, m/s², positive (default: standard gravity, 9.80665).
    name : str, optional
        A label shown in the ``repr``.

    Returns
    -------
    SyntheticUrdfArm
        One joint per revolute or continuous joint on the path; link ``i``'s frame is joint
        ``i``'s child link frame, with the mass, centre of mass and inertia of that link and of
        every link fixed to it.

    Raises
    ------
    ValueError
        Everything :func:`gravdir.urdf.chain_from_urdf` and
        :func:`gravdir.urdf.inertials_from_urdf` refuse (naming `urdf_text`, `base_link` or
        `tip_link`); a lumped inertia that is not physically consistent or an arm beyond the
        limits of :class:`SyntheticUrdfArm` (naming `urdf_text`); a bad `up`, `gravity` or
        `name`.

    Notes
    -----
    :mod:`gravdir.urdf` reads the joints and the ``<inertial>`` elements; the links that no
    moving joint separates from a link (fixed children such as a flange, a tool, a mounted
    camera) are lumped into it exactly by the parallel-axis theorem,
    :math:`I = \\sum_k R_k I_k R_k^\\top + m_k(\\lVert d_k\\rVert^2 E - d_k d_k^\\top)`. The
    arm's origins follow from the chain's home poses, :math:`O_0 = M_0`,
    :math:`O_i = M_{i-1}^{-1} M_i`; its kinematics and torques are computed here
    (:class:`SyntheticUrdfArm`). Links above the first joint do not move and carry no torque.

    References
    ----------
    ROS URDF specification, http://wiki.ros.org/urdf/XML/joint and
    http://wiki.ros.org/urdf/XML/link.

    Examples
    --------
    >>> from gravdir.synthetic import UR5E_LIKE_URDF
    >>> arm = arm_from_urdf(UR5E_LIKE_URDF, tip_link="tool0", name="UR5e-like")
    >>> arm.n_joints, round(float(arm.masses.sum()), 3)
    (6, 17.7)
    """
    chain = chain_from_urdf(urdf_text, base_link=base_link, tip_link=tip_link)
    bodies = inertials_from_urdf(urdf_text, base_link=base_link, tip_link=tip_link)
    home = chain.home_links
    origins = np.empty_like(home)
    origins[0] = home[0]
    with np.errstate(under="ignore"):
        for i in range(1, home.shape[0]):
            r, p = home[i - 1, :3, :3], home[i - 1, :3, 3]
            origins[i] = np.eye(4)
            origins[i, :3, :3] = r.T @ home[i, :3, :3]
            origins[i, :3, 3] = r.T @ (home[i, :3, 3] - p)
    if not isinstance(name, str):
        raise ValueError(f"Expected `name` to be a str, got {type(name).__name__}.")
    check_up(up)
    check_positive(gravity, "gravity")
    try:
        return SyntheticUrdfArm(
            origins,
            chain.axes_in_link,
            bodies.mass,
            bodies.com_in_link,
            up=up,
            gravity=gravity,
            name=name,
            inertias=bodies.inertia_in_link,
            joint_names=bodies.joint_names,
        )
    except ValueError as exc:
        raise ValueError(f"Expected `urdf_text` to describe a valid synthetic arm: {exc}") from None
