"""The synthetic arm of a Denavit--Hartenberg table: link poses and construction.

Its kinematics are computed from explicit 4×4 homogeneous transforms; its torques, inertias and
sweeps (:class:`~gravdir.synthetic._base.ArmModel`) from explicit cross products --
independently of gravdir's estimators and of the sinusoid model they fit -- so a test that
compares an estimator with this arm can fail.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import check_array, norm
from gravdir._constants import STANDARD_GRAVITY
from gravdir._results import Result
from gravdir.synthetic._base import ArmModel
from gravdir.synthetic._validate import (
    MAX_FIXED_ANGLE,
    MAX_JOINTS,
    MAX_LENGTH,
    check_arm_fields,
    check_rng,
    check_scales,
    real_scalar,
)

__all__ = ["SyntheticArm"]

# Names the factories import from here.
_MAX_FIXED_ANGLE = MAX_FIXED_ANGLE
_MAX_JOINTS = MAX_JOINTS
_MAX_LENGTH = MAX_LENGTH
_check_rng = check_rng
_real_scalar = real_scalar


def _dh_transform(
    theta: NDArray[np.float64], d: float, a: float, alpha: float
) -> NDArray[np.float64]:
    """Standard DH link transform Rot_z(theta) Trans_z(d) Trans_x(a) Rot_x(alpha), (..., 4, 4)."""
    ct, st = np.cos(theta), np.sin(theta)
    ca, sa = np.cos(alpha), np.sin(alpha)
    t = np.zeros((*theta.shape, 4, 4))
    t[..., 0, 0] = ct
    t[..., 0, 1] = -st * ca
    t[..., 0, 2] = st * sa
    t[..., 0, 3] = a * ct
    t[..., 1, 0] = st
    t[..., 1, 1] = ct * ca
    t[..., 1, 2] = -ct * sa
    t[..., 1, 3] = a * st
    t[..., 2, 1] = sa
    t[..., 2, 2] = ca
    t[..., 2, 3] = d
    t[..., 3, 3] = 1.0
    return t


@dataclass(frozen=True, eq=False, repr=False, init=False)
class SyntheticArm(Result, ArmModel):
    """A serial arm of revolute joints with link masses and a tilted base.

    Parameters
    ----------
    dh : array_like, shape (n, 4)
        Standard Denavit--Hartenberg table, one row per joint: ``d, theta_offset, a, alpha``
        (m, rad, m, rad). Link frame ``i`` follows frame ``i - 1`` by
        :math:`T_i = R_z(q_i + \\theta_i)\\,T_z(d_i)\\,T_x(a_i)\\,R_x(\\alpha_i)`; joint ``i``
        turns about the z axis of frame ``i - 1`` (frame ``-1`` is the base, so joint 0 turns
        about base +z).
    masses : array_like, shape (n,)
        Mass of each link, kg, non-negative.
    coms : array_like, shape (n, 3)
        Centre of mass of each link in that link's own frame (the frame the joint moves), m.
    up : array_like, shape (3,), optional
        Unit vector opposite to gravity in the base frame. Default ``(0, 0, 1)``.
    gravity : float, optional
        Gravitational acceleration :math:`g`, m/s², positive. Default: standard gravity,
        9.80665.
    name : str, optional
        A label shown in the ``repr``.
    inertias : array_like, shape (n, 3, 3), optional
        Inertia tensor of each link about its centre of mass, in the axes of the link's frame,
        kg·m²: symmetric, positive semi-definite and satisfying the triangle inequality
        (each principal moment at most the sum of the other two), within 1e-6 of the
        tensor's largest entry. Default zeros: point masses. Keyword only.

    Raises
    ------
    ValueError
        If a shape is wrong, a value is not numeric and finite (booleans and numeric strings
        are refused), the arm has more than 100 joints, a mass is negative, `up` is not a unit
        vector within 1e-6, `gravity` is not positive, a fixed angle of `dh` (``theta_offset``,
        ``alpha``) lies beyond a full turn (degrees?), a length of `dh` or a coordinate of
        `coms` lies beyond 1e100 m, an inertia tensor is not physically consistent or has an
        entry beyond 1e250, the torque scale
        :math:`\\max(g, 1) \\max(\\sum_k m_k, 1) \\max(r, 1)` with the reach
        :math:`r = \\sum_i (|d_i| + |a_i|) + \\max_k \\lVert \\bar c_k \\rVert` exceeds 1e300, or
        the inertia scale :math:`\\max(\\sum_k m_k, 1) \\max(2r, 1)^2 + \\sum_k
        \\operatorname{tr} I_k` exceeds 1e300 (so that every product the arm computes, every
        torque and every entry of its mass matrix, is finite).

    Notes
    -----
    With :math:`c_k` the centre of mass of link :math:`k` in the base frame,
    :math:`z_i` and :math:`p_i` the unit axis of joint :math:`i` and a point on it, and
    :math:`g_{vec} = -g\\,\\mathrm{up}`, the holding torque of joint :math:`i` is

    .. math::

        \\tau_i = -\\Big(\\sum_{k \\ge i} (c_k - p_i) \\times m_k g_{vec}\\Big) \\cdot z_i
                = \\frac{\\partial V}{\\partial q_i},
        \\qquad V = \\sum_k m_k\\, g\\, \\mathrm{up}^\\top c_k,

    the torque the actuator applies to the distal link about +axis to hold it still. Its
    dynamics (:meth:`joint_inertia`, :meth:`mass_matrix`, :meth:`inverse_dynamics`) use the
    masses, centres of mass and `inertias`; ``docs/synthetic.md`` derives them.

    The arm is a frozen model with the result contract: its arrays are private read-only
    copies, ``==`` compares values and ``to_dict()`` gives plain Python types;
    ``dataclasses.replace(arm, up=...)`` builds the same arm on another base.

    References
    ----------
    Denavit & Hartenberg (1955), the link transform of the DH table.

    Examples
    --------
    A horizontal link of 1 m with 2 kg at its tip, gravity along base -y (up = +y):

    >>> arm = SyntheticArm(dh=[[0, 0, 1.0, 0]], masses=[2.0], coms=[[0, 0, 0]], up=[0, 1, 0])
    >>> arm.gravity_torque([0.0]).round(6)
    array([19.6133])
    """

    _units = {
        "dh": "m, rad, m, rad", "masses": "kg", "coms": "m", "up": "", "gravity": "m/s²",
        "inertias": "kg·m²",
    }

    dh: NDArray[np.float64]
    masses: NDArray[np.float64]
    coms: NDArray[np.float64]
    up: NDArray[np.float64]
    gravity: float
    name: str
    inertias: NDArray[np.float64]

    def __init__(
        self,
        dh: ArrayLike,
        masses: ArrayLike,
        coms: ArrayLike,
        up: ArrayLike = (0.0, 0.0, 1.0),
        gravity: float = STANDARD_GRAVITY,
        name: str = "",
        *,
        inertias: ArrayLike | None = None,
    ) -> None:
        dh_arr = check_array(dh, "dh")
        if dh_arr.ndim != 2 or dh_arr.shape[1] != 4 or dh_arr.shape[0] < 1:
            raise ValueError(f"Expected `dh` to have shape (n, 4) with n >= 1, got {dh_arr.shape}.")
        n = dh_arr.shape[0]
        if n > _MAX_JOINTS:
            raise ValueError(f"Expected `dh` to have at most {_MAX_JOINTS} rows, got {n}.")
        fixed = np.abs(dh_arr[:, [1, 3]])
        if float(np.max(fixed)) > _MAX_FIXED_ANGLE:
            raise ValueError(
                f"Expected the angles of `dh` (theta_offset, alpha) in radians, got "
                f"{float(np.max(fixed)):.6g} (beyond 2 pi): degrees?"
            )
        mass_arr, com_arr, up_arr, g, inertia_arr = check_arm_fields(
            masses, coms, up, gravity, name, inertias, n, ("dh", dh_arr[:, [0, 2]])
        )
        with np.errstate(over="ignore", under="ignore"):
            reach = float(np.sum(np.abs(dh_arr[:, [0, 2]])) + np.max(norm(com_arr)))
        check_scales(g, mass_arr, reach, inertia_arr, "`dh`")
        object.__setattr__(self, "dh", np.array(dh_arr))
        object.__setattr__(self, "masses", np.array(mass_arr))
        object.__setattr__(self, "coms", np.array(com_arr))
        object.__setattr__(self, "up", np.array(up_arr))
        object.__setattr__(self, "gravity", g)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "inertias", inertia_arr)
        self.__post_init__()  # the result contract: read-only arrays

    __repr__ = ArmModel.describe  # Result's repr comes first in the MRO

    @property
    def n_joints(self) -> int:
        """Number of joints (and links)."""
        return int(self.dh.shape[0])

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
            :math:`T_0 T_1 \\cdots T_i`.

        Raises
        ------
        ValueError
            If `q` is not ``(..., n)`` and finite.

        Examples
        --------
        >>> from gravdir.synthetic import ur5_arm
        >>> arm = ur5_arm()
        >>> arm.link_poses(np.zeros(6)).shape
        (7, 4, 4)
        """
        qq = self._check_q(q)
        batch = qq.shape[:-1]
        poses = np.empty((*batch, self.n_joints + 1, 4, 4))
        poses[..., 0, :, :] = np.eye(4)
        current = np.broadcast_to(np.eye(4), (*batch, 4, 4))
        with np.errstate(under="ignore"):  # products of tiny lengths round to zero
            for i, (d, theta0, a, alpha) in enumerate(self.dh):
                current = current @ _dh_transform(qq[..., i] + theta0, d, a, alpha)
                poses[..., i + 1, :, :] = current
        return poses

    def _axes_points(
        self, poses: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Joint ``i`` turns about the z axis of frame ``i - 1``, through its origin."""
        return poses[..., :-1, :3, 2], poses[..., :-1, :3, 3]
