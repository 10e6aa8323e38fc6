"""The synthetic arm: kinematics, holding torques and recorded sweeps.

Its kinematics and holding torques are computed from explicit 4×4 homogeneous transforms and cross
products -- independently of gravdir's estimators and of the sinusoid model they fit -- so a test
that compares an estimator with this arm can fail.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import (
    check_angle_span,
    check_array,
    check_count,
    check_positive,
    check_scalar,
    norm,
)
from gravdir._constants import STANDARD_GRAVITY
from gravdir._results import Result
from gravdir.synthetic._sweep import SweepRecord, _trapezoid_profile
from gravdir.synthetic.sensors import TorqueSensor

__all__ = ["SyntheticArm"]

# Most joints a synthetic arm may have: its torques cost O(n^2) per configuration.
_MAX_JOINTS = 100

# Largest DH length or centre-of-mass coordinate, m. 1e100 is beyond any arm in any unit and
# keeps every composition of link transforms within the float range.
_MAX_LENGTH = 1e100

# Largest holding-torque scale g * sum(m) * reach, N·m: every torque the arm computes stays
# within a small multiple of it, far below the float range.
_MAX_TORQUE_SCALE = 1e300

# Largest magnitude of a fixed DH angle (`theta_offset`, `alpha`): a full turn; a table typed
# in degrees lies beyond it.
_MAX_FIXED_ANGLE = 2 * np.pi

# Most samples one call of :meth:`SyntheticArm.sweep` records (a minute at 16 kHz).
_MAX_SWEEP_SAMPLES = 1_000_000

# Most forward-and-back cycles of one sweep.
_MAX_CYCLES = 1000

# Largest joint position of a sweep (start, stop, the held configuration) and largest swept
# span, rad: two full turns. Beyond it the numbers are almost certainly degrees.
_MAX_JOINT_ANGLE = 4 * np.pi

# Most configurations :meth:`SyntheticArm.peak_gravity_torque` searches.
_MAX_PEAK_SAMPLES = 100_000


def _real_scalar(x: object, name: str) -> float:
    """One finite real number; booleans (``True`` for 1) and numeric strings are refused."""
    if isinstance(x, bool | np.bool_):
        raise ValueError(f"Expected `{name}` to be a number, got {x!r}.")
    return check_scalar(x, name)  # type: ignore[arg-type]


def _check_up(up: ArrayLike) -> NDArray[np.float64]:
    """A unit 3-vector within 1e-6, its norm taken without over- or underflow."""
    v = check_array(up, "up")
    if v.shape != (3,):
        raise ValueError(f"Expected `up` to have shape (3,), got {v.shape}.")
    with np.errstate(under="ignore"):
        off = abs(float(norm(v)) - 1.0)
    if off > 1e-6:
        raise ValueError(
            f"Expected `up` to have unit norm (within 1e-06), got norm off by {off:.3g}."
        )
    return v


def _check_joint_angles(x: NDArray[np.float64], name: str) -> None:
    """Refuse joint positions beyond two turns as probably degrees."""
    largest = float(np.max(np.abs(x))) if x.size else 0.0
    if largest > _MAX_JOINT_ANGLE:
        raise ValueError(
            f"Expected `{name}` in radians, got a joint position of {largest:.6g} rad "
            f"({np.degrees(largest):.6g}°, beyond ±{np.degrees(_MAX_JOINT_ANGLE):.0f}°): degrees?"
        )


def _check_rng(rng: object) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise ValueError(
            f"Expected `rng` to be a numpy.random.Generator, got {type(rng).__name__}."
        )
    return rng


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
class SyntheticArm(Result):
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

    Raises
    ------
    ValueError
        If a shape is wrong, a value is not numeric and finite (booleans and numeric strings
        are refused), the arm has more than 100 joints, a mass is negative, `up` is not a unit
        vector within 1e-6, `gravity` is not positive, a fixed angle of `dh` (``theta_offset``,
        ``alpha``) lies beyond a full turn (degrees?), a length of `dh` or a coordinate of
        `coms` lies beyond 1e100 m, or the torque scale
        :math:`\\max(g, 1) \\max(\\sum_k m_k, 1) \\max(r, 1)` with the reach
        :math:`r = \\sum_i (|d_i| + |a_i|) + \\max_k \\lVert \\bar c_k \\rVert` exceeds 1e300 (so
        that every product the arm computes, and every torque, is finite).

    Notes
    -----
    With :math:`c_k` the centre of mass of link :math:`k` in the base frame,
    :math:`z_i` and :math:`p_i` the unit axis of joint :math:`i` and a point on it, and
    :math:`g_{vec} = -g\\,\\mathrm{up}`, the holding torque of joint :math:`i` is

    .. math::

        \\tau_i = -\\Big(\\sum_{k \\ge i} (c_k - p_i) \\times m_k g_{vec}\\Big) \\cdot z_i
                = \\frac{\\partial V}{\\partial q_i},
        \\qquad V = \\sum_k m_k\\, g\\, \\mathrm{up}^\\top c_k,

    the torque the actuator applies to the distal link about +axis to hold it still.

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

    dh: NDArray[np.float64]
    masses: NDArray[np.float64]
    coms: NDArray[np.float64]
    up: NDArray[np.float64]
    gravity: float
    name: str

    def __init__(
        self,
        dh: ArrayLike,
        masses: ArrayLike,
        coms: ArrayLike,
        up: ArrayLike = (0.0, 0.0, 1.0),
        gravity: float = STANDARD_GRAVITY,
        name: str = "",
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
        mass_arr = check_array(masses, "masses")
        if mass_arr.shape != (n,):
            raise ValueError(f"Expected `masses` to have shape ({n},), got {mass_arr.shape}.")
        if np.any(mass_arr < 0):
            raise ValueError(
                f"Expected `masses` to be non-negative, got {np.round(mass_arr, 6).tolist()}."
            )
        com_arr = check_array(coms, "coms")
        if com_arr.shape != (n, 3):
            raise ValueError(f"Expected `coms` to have shape ({n}, 3), got {com_arr.shape}.")
        for label, lengths in (("dh", dh_arr[:, [0, 2]]), ("coms", com_arr)):
            if float(np.max(np.abs(lengths))) > _MAX_LENGTH:
                raise ValueError(
                    f"Expected the lengths of `{label}` within ±{_MAX_LENGTH:g} m, got "
                    f"{float(np.max(np.abs(lengths))):.3g}."
                )
        up_arr = _check_up(up)
        if not isinstance(name, str):
            raise ValueError(f"Expected `name` to be a str, got {type(name).__name__}.")
        g = check_positive(gravity, "gravity")
        # Every product the arm forms (m g, m |c|, m g |c|) is bounded by this scale, with each
        # factor taken as at least 1 so that a tiny one cannot hide a huge other.
        with np.errstate(over="ignore", under="ignore"):
            reach = float(np.sum(np.abs(dh_arr[:, [0, 2]])) + np.max(norm(com_arr)))
            total = float(np.sum(mass_arr))
            torque_scale = max(g, 1.0) * max(total, 1.0) * max(reach, 1.0)
        if not torque_scale <= _MAX_TORQUE_SCALE:
            raise ValueError(
                f"Expected `masses`, `coms`, `dh` and `gravity` to give holding torques within "
                f"{_MAX_TORQUE_SCALE:g} N·m, got a scale max(g, 1) max(sum(masses), 1) "
                f"max(reach, 1) of {torque_scale:.3g}."
            )
        object.__setattr__(self, "dh", np.array(dh_arr))
        object.__setattr__(self, "masses", np.array(mass_arr))
        object.__setattr__(self, "coms", np.array(com_arr))
        object.__setattr__(self, "up", np.array(up_arr))
        object.__setattr__(self, "gravity", g)
        object.__setattr__(self, "name", name)
        self.__post_init__()  # the result contract: read-only arrays

    def __repr__(self) -> str:
        tilt = np.degrees(np.arccos(np.clip(self.up[2], -1.0, 1.0)))
        azimuth = np.degrees(np.arctan2(self.up[1], self.up[0])) if tilt > 1e-9 else 0.0
        label = f"name={self.name!r}, " if self.name else ""
        return (
            f"SyntheticArm({label}n_joints={self.n_joints}, "
            f"total_mass={float(np.sum(self.masses)):.3g} kg, "
            f"tilt={tilt:.2f}°, azimuth={azimuth:.2f}°, gravity={self.gravity:g} m/s²)"
        )

    @property
    def n_joints(self) -> int:
        """Number of joints (and links)."""
        return int(self.dh.shape[0])

    def _check_q(self, q: ArrayLike) -> NDArray[np.float64]:
        qq = check_array(q, "q", min_ndim=1)
        if qq.shape[-1] != self.n_joints:
            raise ValueError(f"Expected `q` to have shape (..., {self.n_joints}), got {qq.shape}.")
        return qq

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

    def joint_axes(self, q: ArrayLike) -> NDArray[np.float64]:
        """Unit axis of every joint in the base frame.

        Parameters
        ----------
        q : array_like, shape (..., n)
            Joint angles, rad.

        Returns
        -------
        ndarray, shape (..., n, 3)
            Axis of joint ``i`` = z axis of frame ``i - 1``.

        Raises
        ------
        ValueError
            If `q` is not ``(..., n)`` and finite.

        Examples
        --------
        >>> from gravdir.synthetic import ur5_arm
        >>> ur5_arm().joint_axes(np.zeros(6))[0]
        array([0., 0., 1.])
        """
        return self.link_poses(q)[..., :-1, :3, 2]

    def com_positions(self, q: ArrayLike) -> NDArray[np.float64]:
        """Centre of mass of every link in the base frame.

        Parameters
        ----------
        q : array_like, shape (..., n)
            Joint angles, rad.

        Returns
        -------
        ndarray, shape (..., n, 3)
            :math:`c_k = R_k\\,\\bar c_k + o_k`, m.

        Raises
        ------
        ValueError
            If `q` is not ``(..., n)`` and finite.

        Examples
        --------
        >>> arm = SyntheticArm(dh=[[0, 0, 1.0, 0]], masses=[1.0], coms=[[-0.5, 0, 0]])
        >>> arm.com_positions([np.pi / 2]).round(12) + 0.0
        array([[0. , 0.5, 0. ]])
        """
        return self._coms_from_poses(self.link_poses(q))

    def _coms_from_poses(self, poses: NDArray[np.float64]) -> NDArray[np.float64]:
        rotations = poses[..., 1:, :3, :3]
        with np.errstate(under="ignore"):
            out: NDArray[np.float64] = (
                np.einsum("...ij,...j->...i", rotations, self.coms) + poses[..., 1:, :3, 3]
            )
        return out

    def potential_energy(self, q: ArrayLike) -> NDArray[np.float64]:
        """Gravitational potential energy :math:`V = \\sum_k m_k g\\,\\mathrm{up}^\\top c_k`.

        Parameters
        ----------
        q : array_like, shape (..., n)
            Joint angles, rad.

        Returns
        -------
        ndarray, shape (...)
            Energy relative to the base origin, J.

        Raises
        ------
        ValueError
            If `q` is not ``(..., n)`` and finite.

        Examples
        --------
        >>> arm = SyntheticArm(dh=[[0, 0, 1.0, 0]], masses=[2.0], coms=[[0, 0, 0]], up=[0, 1, 0])
        >>> float(arm.potential_energy([np.pi / 2]).round(6))
        19.6133
        """
        positions = self.com_positions(q)
        with np.errstate(under="ignore"):
            heights = positions @ self.up
            out: NDArray[np.float64] = self.gravity * np.sum(self.masses * heights, axis=-1)
        return out

    def gravity_torque(self, q: ArrayLike) -> NDArray[np.float64]:
        """Holding torque of every joint at configuration `q`.

        Parameters
        ----------
        q : array_like, shape (..., n)
            Joint angles, rad.

        Returns
        -------
        ndarray, shape (..., n)
            :math:`\\tau_i`, N·m: the torque the actuator applies to the distal link about its
            +axis to hold the arm still (minus the gravity torque about +axis).

        Raises
        ------
        ValueError
            If `q` is not ``(..., n)`` and finite.

        Notes
        -----
        :math:`\\tau_i = -\\big(\\sum_{k \\ge i}(c_k - p_i) \\times m_k g_{vec}\\big)\\cdot z_i`
        with :math:`g_{vec} = -g\\,\\mathrm{up}`, :math:`p_i` the origin of frame ``i - 1`` and
        :math:`z_i` its z axis. Equal to :math:`\\partial V / \\partial q_i`.

        Examples
        --------
        Planar arm, two 1 m links with 1 kg at each tip, gravity along base -y:

        >>> arm = SyntheticArm(
        ...     dh=[[0, 0, 1.0, 0], [0, 0, 1.0, 0]], masses=[1.0, 1.0],
        ...     coms=np.zeros((2, 3)), up=[0, 1, 0])
        >>> arm.gravity_torque([0.0, 0.0]).round(6)
        array([29.41995,  9.80665])
        """
        axes, lever = self._axes_and_levers(q)
        with np.errstate(under="ignore"):  # tiny masses or levers: products round to zero
            forces = self.masses[:, None] * (-self.gravity * self.up)  # m_k g_vec, (n, 3)
            moments = np.cross(lever, forces)
            gravity_moment = np.einsum("ik,...ikj->...ij", self._distal, moments)
            out: NDArray[np.float64] = -np.einsum("...ij,...ij->...i", gravity_moment, axes)
        return out

    @property
    def _distal(self) -> NDArray[np.float64]:
        """Mask (n, n): entry (i, k) is 1 where link k is distal to joint i (k >= i)."""
        return np.triu(np.ones((self.n_joints, self.n_joints)))

    def _axes_and_levers(self, q: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Joint axes z_i (..., n, 3) and levers c_k - p_i (..., n_joint i, n_link k, 3)."""
        poses = self.link_poses(q)
        coms = self._coms_from_poses(poses)
        axes = poses[..., :-1, :3, 2]  # z_i: axis of joint i
        points = poses[..., :-1, :3, 3]  # p_i: a point on it
        with np.errstate(under="ignore"):
            lever = coms[..., None, :, :] - points[..., :, None, :]
        return axes, lever

    def peak_gravity_torque(self, *, samples: int = 4096) -> NDArray[np.float64]:
        """Largest holding torque each joint can see, over all configurations and tilts.

        Parameters
        ----------
        samples : int, optional
            Number of configurations searched (default 4096, at most 100,000), drawn uniformly
            from :math:`[-\\pi, \\pi)^n` by a random generator with a fixed seed, so the result
            is deterministic.

        Returns
        -------
        ndarray, shape (n,)
            :math:`P_i = g \\max_q \\lVert z_i \\times s_i(q) \\rVert`, N·m, with
            :math:`s_i = \\sum_{k \\ge i} m_k (c_k - p_i)` the first moment of the links distal
            to joint :math:`i` about a point on its axis.

        Raises
        ------
        ValueError
            If `samples` is not an integer from 1 to 100,000.

        Notes
        -----
        For any `up`, :math:`|\\tau_i| = g\\,|\\mathrm{up}\\cdot(z_i \\times s_i)| \\le
        g \\lVert z_i \\times s_i \\rVert`, with equality when `up` is along
        :math:`z_i \\times s_i`. The peak is therefore a property of the arm, independent of its
        tilt: it is the scale of the joint's torque sensor errors in
        :func:`~gravdir.synthetic.sensors.realistic_sensors`. The maximum over configurations is
        estimated from below by the best of `samples` random configurations (plus the zero
        configuration); for the arms in this module that is within a few percent of the true
        maximum.

        Examples
        --------
        >>> from gravdir.synthetic import canonical_arm
        >>> arm = canonical_arm(L1=0.5, mass=2.0)
        >>> arm.peak_gravity_torque().round(2)
        array([9.81, 9.81])
        """
        count = check_count(samples, "samples", maximum=_MAX_PEAK_SAMPLES)
        rng = np.random.default_rng(0)
        q = rng.uniform(-np.pi, np.pi, size=(count, self.n_joints))
        q = np.concatenate([np.zeros((1, self.n_joints)), q])
        axes, lever = self._axes_and_levers(q)
        with np.errstate(under="ignore"):
            moment = np.einsum("ik,k,...ikj->...ij", self._distal, self.masses, lever)
            arm_torque = self.gravity * norm(np.cross(axes, moment))
        out: NDArray[np.float64] = np.max(arm_torque, axis=0)
        return out

    def sweep(
        self,
        joint: int,
        configuration: ArrayLike,
        start: float,
        stop: float,
        speed: float,
        sample_rate: float,
        sensor: TorqueSensor | Sequence[TorqueSensor] | None = None,
        rng: np.random.Generator | None = None,
        *,
        ramp_time: float = 0.2,
        cycles: int = 1,
    ) -> SweepRecord:
        """Record a sweep of one joint, forward from `start` to `stop` and back.

        Parameters
        ----------
        joint : int
            Index of the swept joint, ``0 <= joint < n`` (``0`` is J1).
        configuration : array_like, shape (n,)
            Angles at which all other joints are held, rad, within ±4π; entry `joint` is
            ignored.
        start, stop : float
            Ends of the swept arc, rad, different, each within ±4π and at most 4π apart (two
            turns: larger numbers are taken for degrees). `stop` may be below `start` (the
            first pass then moves in the negative direction).
        speed : float
            Cruise speed, rad/s, positive.
        sample_rate : float
            Samples per second, Hz, positive.
        sensor : TorqueSensor or sequence of TorqueSensor, optional
            Sensor of the swept joint, or one sensor per joint (as returned by
            :func:`~gravdir.synthetic.sensors.realistic_sensors`), of which entry `joint` is
            used. Default: an ideal sensor (the measured torque is the holding torque).
        rng : numpy.random.Generator, optional
            Source of the sensor noise; required when the sensor has ``noise_std > 0``.
        ramp_time : float, optional
            Duration of each acceleration and deceleration ramp, s, non-negative (default 0.2).
            Each pass must be long enough to reach cruise speed:
            ``|stop - start| >= speed * ramp_time``.
        cycles : int, optional
            Number of forward-and-back cycles (default 1, at most 1000).

        Returns
        -------
        SweepRecord
            Times, angles, velocities, pass directions, the cruise mask, measured and true
            torques of the swept joint.

        Raises
        ------
        ValueError
            If an argument has the wrong type, shape or sign (booleans and numeric strings are
            refused); a joint position or the swept span lies beyond 4π ("degrees?"); the arc
            is too short for the ramps; the record would hold more than 1,000,000 samples
            (``sample_rate`` times the duration ``2 cycles (|stop - start| / speed +
            ramp_time)``); or `rng` is missing while the sensor is noisy.

        Notes
        -----
        Each pass of length :math:`D = |stop - start|` takes :math:`T = D / v + T_r`: a linear
        velocity ramp from 0 to the cruise speed :math:`v` over :math:`T_r`, cruise, and a
        linear ramp back to 0 over :math:`T_r` (trapezoidal velocity; acceleration
        :math:`v / T_r`). Samples are taken at :math:`t_k = k / f_s` for
        :math:`0 \\le t_k \\le 2\\,\\mathrm{cycles}\\,T`. The torque is quasi-static: the holding
        torque at each sample's configuration passed through the sensor model; inertial
        torques are not simulated.

        References
        ----------
        US 11,446,825 B2, method 200 (FIG. 2, blocks 202-208) and FIGS. 3A-3B: rotate one joint
        forward and backward at constant speed over a range such as 90-180° with the other
        joints locked, and record torque against angle.

        Examples
        --------
        >>> from gravdir.synthetic import canonical_arm, up_from_base_tilt
        >>> arm = canonical_arm(L1=0.5, mass=2.0, up=up_from_base_tilt(0.3, 0.5))
        >>> rec = arm.sweep(0, [0.0, np.pi / 2], start=-1.5, stop=1.5, speed=0.5,
        ...                 sample_rate=100.0)
        >>> rec.q.shape == rec.torque.shape == rec.velocity.shape
        True
        >>> bool(np.allclose(rec.torque, rec.gravity_torque))
        True
        """
        n = self.n_joints
        joint = check_count(joint, "joint", minimum=0, maximum=n - 1)
        config = check_array(configuration, "configuration")
        if config.shape != (n,):
            raise ValueError(f"Expected `configuration` to have shape ({n},), got {config.shape}.")
        _check_joint_angles(config, "configuration")
        start_f = _real_scalar(start, "start")
        stop_f = _real_scalar(stop, "stop")
        with np.errstate(over="ignore"):  # a span beyond the float range is refused below
            span = stop_f - start_f
        check_angle_span(span, "stop` - `start", limit=_MAX_JOINT_ANGLE)
        _check_joint_angles(np.array(start_f), "start")
        _check_joint_angles(np.array(stop_f), "stop")
        if start_f == stop_f:
            raise ValueError(f"Expected `stop` to differ from `start`, got both {start_f!r}.")
        v = check_positive(speed, "speed")
        fs = check_positive(sample_rate, "sample_rate")
        ramp = check_positive(ramp_time, "ramp_time", allow_zero=True)
        n_cycles = check_count(cycles, "cycles", maximum=_MAX_CYCLES)
        arc = abs(stop_f - start_f)
        with np.errstate(over="ignore", under="ignore"):
            ramp_arc = v * ramp
            pass_time = arc / v + ramp
            samples = np.floor(2 * n_cycles * pass_time * fs * (1 + 1e-12)) + 1  # as sampled
        if arc < ramp_arc:
            raise ValueError(
                f"Expected the arc |`stop` - `start`| = {arc:.6g} rad to be at least "
                f"`speed` * `ramp_time` = {ramp_arc:.6g} rad so each pass reaches cruise speed."
            )
        if not samples <= _MAX_SWEEP_SAMPLES:
            raise ValueError(
                f"Expected a sweep of at most {_MAX_SWEEP_SAMPLES:,} samples, got {samples:.4g} "
                f"(`sample_rate` {fs:g} Hz for {2 * n_cycles} passes of {pass_time:.4g} s): "
                "lower `sample_rate` or `cycles`, or raise `speed`."
            )
        chosen = self._pick_sensor(sensor, joint)
        if chosen.noise_std > 0 and rng is None:
            raise ValueError(
                "Expected `rng` (a numpy.random.Generator) because the sensor's `noise_std` > 0, "
                "got None."
            )
        if rng is not None:
            _check_rng(rng)

        with np.errstate(under="ignore"):
            profile = _trapezoid_profile(start_f, stop_f, v, fs, ramp, n_cycles)
        positions = np.tile(config, (profile.q.size, 1))
        positions[:, joint] = profile.q
        holding = self.gravity_torque(positions)[:, joint]
        try:
            measured = chosen.measure(profile.q, profile.velocity, holding, rng)
        except ValueError:  # the arguments are checked: only an overflow of a reading is left
            raise ValueError(
                "Expected `sensor` to give readings of this sweep within the float range, got an "
                "overflow (its gain, friction or ripple coefficients are too large)."
            ) from None
        config_out = config.copy()
        config_out[joint] = start_f
        return SweepRecord(
            joint=joint,
            configuration=config_out,
            up=self.up,
            time=profile.time,
            q=profile.q,
            velocity=profile.velocity,
            direction=profile.direction,
            at_cruise=profile.at_cruise,
            torque=measured,
            gravity_torque=holding,
            speed=v,
            sample_rate=fs,
        )

    def _pick_sensor(
        self, sensor: TorqueSensor | Sequence[TorqueSensor] | None, joint: int
    ) -> TorqueSensor:
        if sensor is None:
            return TorqueSensor()
        if isinstance(sensor, TorqueSensor):
            return sensor
        if isinstance(sensor, Sequence):
            if len(sensor) != self.n_joints:
                raise ValueError(
                    f"Expected `sensor` to be a TorqueSensor or a sequence of {self.n_joints}, "
                    f"got a sequence of {len(sensor)}."
                )
            for j, entry in enumerate(sensor):
                if not isinstance(entry, TorqueSensor):
                    raise ValueError(
                        f"Expected `sensor[{j}]` to be a TorqueSensor, got {type(entry).__name__}."
                    )
            return sensor[joint]
        raise ValueError(
            f"Expected `sensor` to be a TorqueSensor or a sequence of them, "
            f"got {type(sensor).__name__}."
        )
