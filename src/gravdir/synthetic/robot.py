"""Synthetic serial arms with known gravity torques, for testing gravity-direction pipelines.

A :class:`SyntheticArm` is a serial chain of revolute joints described by a standard
Denavit--Hartenberg table, with a mass and a centre of mass per link and a base tilt (the `up`
vector). Its kinematics and holding torques are computed here from explicit 4×4 homogeneous
transforms and cross products -- independently of gravdir's estimators and of the sinusoid model
they fit -- so a test that compares an estimator with this arm can fail.

:meth:`SyntheticArm.sweep` records a single-joint sweep (forward then backward, trapezoidal
velocity) through a :class:`~gravdir.synthetic.sensors.TorqueSensor`, as seed
``000_fd3a83f130b85770.txt`` prescribes. Factories: :func:`canonical_arm` (the two-joint model of
the closed-form solvers), :func:`random_arm`, :func:`ur5_arm` and :func:`iiwa_arm`.

Joints are indexed from 0 in code: joint ``0`` is J1 of the seeds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import (
    check_array,
    check_positive,
    check_scalar,
    check_unit_vector,
)
from gravdir.synthetic.sensors import TorqueSensor

__all__ = [
    "SweepRecord",
    "SyntheticArm",
    "canonical_arm",
    "iiwa_arm",
    "random_arm",
    "up_from_base_tilt",
    "ur5_arm",
]

STANDARD_GRAVITY = 9.81
"""Default gravitational acceleration, m/s²."""


def _readonly(x: NDArray[np.float64]) -> NDArray[np.float64]:
    x = np.array(x, dtype=np.float64, copy=True)
    x.setflags(write=False)
    return x


def _check_rng(rng: object) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise ValueError(
            f"Expected `rng` to be a numpy.random.Generator, got {type(rng).__name__}."
        )
    return rng


def up_from_base_tilt(tilt: ArrayLike, azimuth: ArrayLike = 0.0) -> NDArray[np.float64]:
    """`up` in the base frame of a base tilted by `tilt` toward `azimuth`.

    Parameters
    ----------
    tilt : array_like, shape (...)
        Angle between `up` and base +z, rad (``0``: upright, ``pi/2``: wall mount,
        ``pi``: ceiling mount).
    azimuth : array_like, shape (...), optional
        Angle of `up`'s horizontal part from base +x toward +y, rad. Broadcasts against `tilt`.

    Returns
    -------
    ndarray, shape (..., 3)
        :math:`(\\sin t \\cos a, \\sin t \\sin a, \\cos t)`.

    Raises
    ------
    ValueError
        If an argument is not numeric and finite or the shapes do not broadcast.

    Examples
    --------
    >>> up_from_base_tilt(np.pi / 2, np.pi / 2).round(12) + 0.0
    array([0., 1., 0.])
    """
    t = check_array(tilt, "tilt")
    a = check_array(azimuth, "azimuth")
    try:
        t, a = np.broadcast_arrays(t, a)
    except ValueError:
        raise ValueError(
            f"Expected `tilt` and `azimuth` to broadcast, got shapes {t.shape} and {a.shape}."
        ) from None
    return np.stack([np.sin(t) * np.cos(a), np.sin(t) * np.sin(a), np.cos(t)], axis=-1)


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


@dataclass(frozen=True, eq=False, repr=False)
class SweepRecord:
    """One recorded single-joint sweep: forward from `start` to `stop`, then back.

    Attributes
    ----------
    joint : int
        Index of the swept joint (0-based: ``0`` is J1).
    configuration : ndarray, shape (n_joints,)
        Angles at which every other joint is held, rad (entry `joint` is the sweep's start).
    up : ndarray, shape (3,)
        The arm's true `up` in the base frame.
    time : ndarray, shape (m,)
        Sample times from the start of the motion, s.
    q : ndarray, shape (m,)
        Angle of the swept joint, rad.
    velocity : ndarray, shape (m,)
        Its velocity, rad/s (trapezoidal profile).
    direction : ndarray, shape (m,)
        ``+1.0`` on passes from `start` toward `stop`, ``-1.0`` on passes back, including the
        ramp samples where the velocity is near zero.
    at_cruise : ndarray of bool, shape (m,)
        True where the joint moves at the cruise speed (outside the acceleration ramps).
    torque : ndarray, shape (m,)
        Measured torque of the swept joint, N·m (sensor model applied).
    gravity_torque : ndarray, shape (m,)
        True holding torque of the swept joint, N·m: noise-free, friction-free, gain 1.
    speed : float
        Cruise speed, rad/s.
    sample_rate : float
        Samples per second, Hz.
    """

    joint: int
    configuration: NDArray[np.float64]
    up: NDArray[np.float64]
    time: NDArray[np.float64]
    q: NDArray[np.float64]
    velocity: NDArray[np.float64]
    direction: NDArray[np.float64]
    at_cruise: NDArray[np.bool_]
    torque: NDArray[np.float64]
    gravity_torque: NDArray[np.float64]
    speed: float
    sample_rate: float

    @property
    def joint_positions(self) -> NDArray[np.float64]:
        """Angles of all joints at every sample, shape (m, n_joints), rad."""
        positions = np.tile(self.configuration, (self.q.size, 1))
        positions[:, self.joint] = self.q
        return positions

    def __repr__(self) -> str:
        lo, hi = np.degrees([self.q.min(), self.q.max()])
        return (
            f"SweepRecord(joint={self.joint}, samples={self.q.size}, "
            f"arc=[{lo:.1f}°, {hi:.1f}°], speed={np.degrees(self.speed):.2f}°/s, "
            f"sample_rate={self.sample_rate:g} Hz)"
        )


@dataclass(frozen=True, eq=False, repr=False, init=False)
class SyntheticArm:
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
    g : float, optional
        Gravitational acceleration, m/s², positive. Default 9.81.
    name : str, optional
        A label shown in the ``repr``.

    Raises
    ------
    ValueError
        If a shape is wrong, a value is not finite, a mass is negative, `up` is not a unit
        vector or `g` is not positive.

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

    Examples
    --------
    A horizontal link of 1 m with 2 kg at its tip, gravity along base -y (up = +y):

    >>> arm = SyntheticArm(dh=[[0, 0, 1.0, 0]], masses=[2.0], coms=[[0, 0, 0]], up=[0, 1, 0])
    >>> arm.gravity_torque([0.0]).round(6)
    array([19.62])
    """

    dh: NDArray[np.float64]
    masses: NDArray[np.float64]
    coms: NDArray[np.float64]
    up: NDArray[np.float64]
    g: float
    name: str

    def __init__(
        self,
        dh: ArrayLike,
        masses: ArrayLike,
        coms: ArrayLike,
        up: ArrayLike = (0.0, 0.0, 1.0),
        g: float = STANDARD_GRAVITY,
        name: str = "",
    ) -> None:
        dh_arr = check_array(dh, "dh")
        if dh_arr.ndim != 2 or dh_arr.shape[1] != 4 or dh_arr.shape[0] < 1:
            raise ValueError(f"Expected `dh` to have shape (n, 4) with n >= 1, got {dh_arr.shape}.")
        n = dh_arr.shape[0]
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
        up_arr = check_unit_vector(up, "up")
        if up_arr.shape != (3,):
            raise ValueError(f"Expected `up` to have shape (3,), got {up_arr.shape}.")
        object.__setattr__(self, "dh", _readonly(dh_arr))
        object.__setattr__(self, "masses", _readonly(mass_arr))
        object.__setattr__(self, "coms", _readonly(com_arr))
        object.__setattr__(self, "up", _readonly(up_arr))
        if not isinstance(name, str):
            raise ValueError(f"Expected `name` to be a str, got {type(name).__name__}.")
        object.__setattr__(self, "g", check_positive(g, "g"))
        object.__setattr__(self, "name", name)

    def __repr__(self) -> str:
        tilt = np.degrees(np.arccos(np.clip(self.up[2], -1.0, 1.0)))
        azimuth = np.degrees(np.arctan2(self.up[1], self.up[0])) if tilt > 1e-9 else 0.0
        label = f"name={self.name!r}, " if self.name else ""
        return (
            f"SyntheticArm({label}n_joints={self.n_joints}, "
            f"total_mass={float(np.sum(self.masses)):.3g} kg, "
            f"tilt={tilt:.2f}°, azimuth={azimuth:.2f}°, g={self.g:g})"
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
        >>> arm = ur5_arm()
        >>> arm.link_poses(np.zeros(6)).shape
        (7, 4, 4)
        """
        qq = self._check_q(q)
        batch = qq.shape[:-1]
        poses = np.empty((*batch, self.n_joints + 1, 4, 4))
        poses[..., 0, :, :] = np.eye(4)
        current = np.broadcast_to(np.eye(4), (*batch, 4, 4))
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
        19.62
        """
        heights = self.com_positions(q) @ self.up
        out: NDArray[np.float64] = self.g * np.sum(self.masses * heights, axis=-1)
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
        array([29.43,  9.81])
        """
        poses = self.link_poses(q)
        coms = self._coms_from_poses(poses)
        axes = poses[..., :-1, :3, 2]  # z_i: axis of joint i
        points = poses[..., :-1, :3, 3]  # p_i: a point on it
        forces = self.masses[:, None] * (-self.g * self.up)  # m_k g_vec, (n, 3)
        # lever[..., i, k, :] = c_k - p_i; only links k >= i are distal to joint i.
        lever = coms[..., None, :, :] - points[..., :, None, :]
        moments = np.cross(lever, forces)
        distal = np.triu(np.ones((self.n_joints, self.n_joints)))
        gravity_moment = np.einsum("ik,...ikj->...ij", distal, moments)
        out: NDArray[np.float64] = -np.einsum("...ij,...ij->...i", gravity_moment, axes)
        return out

    def peak_gravity_torque(self, *, samples: int = 4096) -> NDArray[np.float64]:
        """Largest holding torque each joint can see, over all configurations and tilts.

        Parameters
        ----------
        samples : int, optional
            Number of configurations searched (default 4096), drawn uniformly from
            :math:`[-\\pi, \\pi)^n` by a fixed-seed generator, so the result is deterministic.

        Returns
        -------
        ndarray, shape (n,)
            :math:`P_i = g \\max_q \\lVert z_i \\times s_i(q) \\rVert`, N·m, with
            :math:`s_i = \\sum_{k \\ge i} m_k (c_k - p_i)` the first moment of the links distal
            to joint :math:`i` about a point on its axis.

        Raises
        ------
        ValueError
            If `samples` is not a positive integer.

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
        >>> arm = canonical_arm(L1=0.5, mass=2.0)
        >>> arm.peak_gravity_torque().round(2)
        array([9.81, 9.81])
        """
        if isinstance(samples, bool) or not isinstance(samples, (int, np.integer)) or samples < 1:
            raise ValueError(f"Expected `samples` to be a positive integer, got {samples!r}.")
        rng = np.random.default_rng(0)
        q = rng.uniform(-np.pi, np.pi, size=(int(samples), self.n_joints))
        q = np.concatenate([np.zeros((1, self.n_joints)), q])
        poses = self.link_poses(q)
        coms = self._coms_from_poses(poses)
        axes = poses[..., :-1, :3, 2]
        points = poses[..., :-1, :3, 3]
        lever = coms[..., None, :, :] - points[..., :, None, :]
        distal = np.triu(np.ones((self.n_joints, self.n_joints)))
        moment = np.einsum("ik,k,...ikj->...ij", distal, self.masses, lever)
        arm_torque = self.g * np.linalg.norm(np.cross(axes, moment), axis=-1)
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
            Angles at which all other joints are held, rad; entry `joint` is ignored.
        start, stop : float
            Ends of the swept arc, rad, different. `stop` may be below `start` (the first pass
            then moves in the negative direction).
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
            Number of forward-and-back cycles (default 1).

        Returns
        -------
        SweepRecord
            Times, angles, velocities, pass directions, the cruise mask, measured and true
            torques of the swept joint.

        Raises
        ------
        ValueError
            If an argument has the wrong type, shape or sign, the arc is too short for the
            ramps, or `rng` is missing while the sensor is noisy.

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
        Seed ``000_fd3a83f130b85770.txt``: rotate one joint forward and backward at constant
        speed over 90--180° with the other joints locked, and record torque against angle.

        Examples
        --------
        >>> arm = canonical_arm(L1=0.5, mass=2.0, up=up_from_base_tilt(0.3, 0.5))
        >>> rec = arm.sweep(0, [0.0, np.pi / 2], start=-1.5, stop=1.5, speed=0.5,
        ...                 sample_rate=100.0)
        >>> rec.q.shape == rec.torque.shape == rec.velocity.shape
        True
        >>> bool(np.allclose(rec.torque, rec.gravity_torque))
        True
        """
        n = self.n_joints
        if isinstance(joint, bool) or not isinstance(joint, (int, np.integer)):
            raise ValueError(f"Expected `joint` to be an int, got {type(joint).__name__}.")
        if not 0 <= joint < n:
            raise ValueError(f"Expected `joint` in [0, {n - 1}], got {joint}.")
        joint = int(joint)
        config = check_array(configuration, "configuration")
        if config.shape != (n,):
            raise ValueError(f"Expected `configuration` to have shape ({n},), got {config.shape}.")
        start_f = check_scalar(start, "start")
        stop_f = check_scalar(stop, "stop")
        if start_f == stop_f:
            raise ValueError(f"Expected `stop` to differ from `start`, got both {start_f!r}.")
        v = check_positive(speed, "speed")
        fs = check_positive(sample_rate, "sample_rate")
        ramp = check_positive(ramp_time, "ramp_time", allow_zero=True)
        if isinstance(cycles, bool) or not isinstance(cycles, (int, np.integer)) or cycles < 1:
            raise ValueError(f"Expected `cycles` to be a positive integer, got {cycles!r}.")
        arc = abs(stop_f - start_f)
        if arc < v * ramp:
            raise ValueError(
                f"Expected the arc |`stop` - `start`| = {arc:.6g} rad to be at least "
                f"`speed` * `ramp_time` = {v * ramp:.6g} rad so each pass reaches cruise speed."
            )
        chosen = self._pick_sensor(sensor, joint)
        if chosen.noise_std > 0 and rng is None:
            raise ValueError(
                "Expected `rng` (a numpy.random.Generator) because the sensor's `noise_std` > 0, "
                "got None."
            )
        if rng is not None:
            _check_rng(rng)

        pass_time = arc / v + ramp
        n_passes = 2 * int(cycles)
        total = n_passes * pass_time
        # Guard against t_k landing a rounding error beyond the last pass.
        m = int(np.floor(total * fs * (1 + 1e-12))) + 1
        t = np.arange(m) / fs
        index = np.minimum(np.floor(t / pass_time).astype(np.int64), n_passes - 1)
        tau = np.clip(t - index * pass_time, 0.0, pass_time)  # time within the pass
        forward_sign = 1.0 if stop_f > start_f else -1.0
        direction = np.where(index % 2 == 0, forward_sign, -forward_sign)

        # Distance along the pass and speed magnitude (trapezoidal profile). With no ramp the
        # ramp masks are empty and the acceleration is never used.
        accel = v / ramp if ramp > 0 else 0.0
        in_up = tau < ramp
        in_down = tau > pass_time - ramp
        dist = np.where(
            in_up,
            0.5 * accel * tau**2,
            np.where(
                in_down,
                arc - 0.5 * accel * (pass_time - tau) ** 2,
                0.5 * v * ramp + v * (tau - ramp),
            ),
        )
        speed_now = np.where(in_up, accel * tau, np.where(in_down, accel * (pass_time - tau), v))
        outward = index % 2 == 0
        q = np.where(
            outward,
            start_f + forward_sign * dist,
            stop_f - forward_sign * dist,
        )
        velocity = direction * speed_now
        at_cruise = ~(in_up | in_down)
        at_cruise.setflags(write=False)

        positions = np.tile(config, (m, 1))
        positions[:, joint] = q
        holding = self.gravity_torque(positions)[:, joint]
        measured = chosen.measure(q, velocity, holding, rng)
        config_out = config.copy()
        config_out[joint] = start_f
        return SweepRecord(
            joint=joint,
            configuration=_readonly(config_out),
            up=_readonly(self.up),
            time=_readonly(t),
            q=_readonly(q),
            velocity=_readonly(velocity),
            direction=_readonly(direction),
            at_cruise=at_cruise,
            torque=_readonly(measured),
            gravity_torque=_readonly(holding),
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


def canonical_arm(
    *,
    L1: float,
    L2: float = 0.0,
    L3: float = 0.0,
    gamma0: float = 0.0,
    mass: float = 1.0,
    up: ArrayLike = (0.0, 0.0, 1.0),
    g: float = STANDARD_GRAVITY,
) -> SyntheticArm:
    """The canonical two-joint model of the closed-form solvers, as a :class:`SyntheticArm`.

    Parameters
    ----------
    L1, L2, L3 : float
        Position of the lumped mass along the link, across it in the J2 plane, and along the J2
        axis, m (signed). Keyword-only.
    gamma0 : float, optional
        :math:`\\gamma_0`: the link's angle from +z at ``q2 = 0``, rad.
    mass : float, optional
        The lumped distal mass :math:`m`, kg, non-negative.
    up : array_like, shape (3,), optional
        Unit vector opposite to gravity in the base frame.
    g : float, optional
        Gravitational acceleration, m/s².

    Returns
    -------
    SyntheticArm
        Two joints; link 0 is massless, link 1 carries `mass`.

    Raises
    ------
    ValueError
        If an argument is not finite, `mass` is negative or `up` is not a unit vector.

    Notes
    -----
    J1 turns about base +z through the origin. At angle :math:`q_1` the arm's horizontal
    direction is :math:`h = (\\cos q_1, \\sin q_1, 0)` and J2's axis, through the origin, is
    :math:`a_2 = z \\times h`. With :math:`\\gamma = q_2 + \\gamma_0` and
    :math:`\\ell(\\gamma) = \\cos\\gamma\\, z + \\sin\\gamma\\, h`, the mass sits at

    .. math::

        c = L_1\\,\\ell(\\gamma) + L_2\\,\\ell(\\gamma + \\pi/2) + L_3\\,a_2 .

    In DH terms: row 0 is ``(0, 0, 0, -pi/2)`` (frame 0 has x = h, z = a2), row 1 is
    ``(0, gamma0 - pi/2, 0, 0)`` (frame 1 has x = ℓ(γ), y = ℓ(γ + π/2), z = a2), and the mass
    sits at ``(L1, L2, L3)`` in frame 1.

    Examples
    --------
    Point mass, upright base: gravity pulls the mass toward larger :math:`\\gamma`, so J2 holds
    :math:`-m g L_1 \\sin\\gamma`.

    >>> arm = canonical_arm(L1=0.5, mass=2.0)
    >>> arm.gravity_torque([0.0, np.pi / 2]).round(6) + 0.0
    array([ 0.  , -9.81])
    """
    lengths = check_array([L1, L2, L3], "L1, L2, L3")
    gamma = float(check_array(gamma0, "gamma0"))
    m = check_positive(mass, "mass", allow_zero=True)
    dh = np.array([[0.0, 0.0, 0.0, -np.pi / 2], [0.0, gamma - np.pi / 2, 0.0, 0.0]])
    return SyntheticArm(
        dh=dh,
        masses=np.array([0.0, m]),
        coms=np.stack([np.zeros(3), lengths]),
        up=up,
        g=g,
        name="canonical",
    )


def random_arm(
    rng: np.random.Generator,
    n_joints: int = 6,
    *,
    max_tilt: float = np.pi / 2,
    link_length: float = 0.4,
    mass_range: tuple[float, float] = (0.5, 8.0),
    g: float = STANDARD_GRAVITY,
) -> SyntheticArm:
    """A random serial arm with a random base tilt.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of the random draws.
    n_joints : int, optional
        Number of joints, at least 1 (default 6).
    max_tilt : float, optional
        Largest angle between `up` and base +z, rad, in :math:`[0, \\pi]` (default
        :math:`\\pi/2`). `up` is uniform over the spherical cap of that half-angle.
    link_length : float, optional
        Scale of the DH lengths and centre-of-mass offsets, m, positive (default 0.4).
    mass_range : tuple of float, optional
        Link masses are uniform in this range, kg (default 0.5 to 8).
    g : float, optional
        Gravitational acceleration, m/s².

    Returns
    -------
    SyntheticArm
        DH rows with ``d, a`` uniform in :math:`[-L, L]`, ``theta_offset`` uniform in
        :math:`[-\\pi, \\pi)`, ``alpha`` a right angle (0, ±π/2, π) half of the time and uniform
        in :math:`[-\\pi, \\pi)` otherwise; centres of mass uniform in :math:`[-L/2, L/2]^3`.

    Raises
    ------
    ValueError
        If an argument is out of range.

    Examples
    --------
    >>> arm = random_arm(np.random.default_rng(3), 4, max_tilt=0.2)
    >>> arm.n_joints, bool(arm.up[2] >= np.cos(0.2))
    (4, True)
    """
    _check_rng(rng)
    if isinstance(n_joints, bool) or not isinstance(n_joints, (int, np.integer)) or n_joints < 1:
        raise ValueError(f"Expected `n_joints` to be a positive integer, got {n_joints!r}.")
    tilt_max = check_positive(max_tilt, "max_tilt", allow_zero=True)
    if tilt_max > np.pi:
        raise ValueError(f"Expected `max_tilt` in [0, pi], got {max_tilt!r}.")
    length = check_positive(link_length, "link_length")
    low, high = (float(x) for x in check_array(mass_range, "mass_range"))
    if not 0 <= low <= high:
        raise ValueError(
            f"Expected `mass_range` (low, high) with 0 <= low <= high, got {mass_range}."
        )
    n = int(n_joints)
    right = rng.choice([0.0, np.pi / 2, -np.pi / 2, np.pi], size=n)
    alpha = np.where(rng.random(n) < 0.5, right, rng.uniform(-np.pi, np.pi, size=n))
    dh = np.column_stack(
        [
            rng.uniform(-length, length, size=n),
            rng.uniform(-np.pi, np.pi, size=n),
            rng.uniform(-length, length, size=n),
            alpha,
        ]
    )
    masses = rng.uniform(low, high, size=n)
    coms = rng.uniform(-length / 2, length / 2, size=(n, 3))
    cos_tilt = rng.uniform(np.cos(tilt_max), 1.0)
    up = up_from_base_tilt(np.arccos(cos_tilt), rng.uniform(-np.pi, np.pi))
    return SyntheticArm(dh=dh, masses=masses, coms=coms, up=up, g=g, name="random")


def ur5_arm(up: ArrayLike = (0.0, 0.0, 1.0), *, g: float = STANDARD_GRAVITY) -> SyntheticArm:
    """A UR5-like six-joint arm with Universal Robots' published DH and mass parameters.

    Parameters
    ----------
    up : array_like, shape (3,), optional
        Unit vector opposite to gravity in the base frame. Default upright.
    g : float, optional
        Gravitational acceleration, m/s².

    Returns
    -------
    SyntheticArm
        Standard DH ``d = (0.089159, 0, 0, 0.10915, 0.09465, 0.0823)``,
        ``a = (0, -0.425, -0.39225, 0, 0, 0)``, ``alpha = (pi/2, 0, 0, pi/2, -pi/2, 0)``,
        masses ``(3.7, 8.393, 2.33, 1.219, 1.219, 0.1879)`` kg.

    Raises
    ------
    ValueError
        If `up` is not a unit vector.

    Notes
    -----
    Centres of mass (in each link's DH frame, m): ``(0, -0.02561, 0.00193)``,
    ``(0.2125, 0, 0.11336)``, ``(0.15, 0, 0.0265)``, ``(0, -0.0018, 0.01634)``,
    ``(0, 0.0018, 0.01634)``, ``(0, 0, -0.001159)``, the values Universal Robots lists with its
    DH table for dynamics. Joint 5's distal mass lies on its axis, so J6 carries no gravity load.
    J1 and J2 do not intersect in the canonical way: the shoulder offset (``d``-components along
    J2's axis, about 0.11 m) is the canonical model's :math:`L_3`.

    References
    ----------
    Universal Robots, "DH parameters for calculations of kinematics and dynamics".

    Examples
    --------
    >>> ur5_arm()
    SyntheticArm(name='UR5-like', n_joints=6, total_mass=17 kg, tilt=0.00°, azimuth=0.00°, g=9.81)
    """
    dh = np.array(
        [
            [0.089159, 0.0, 0.0, np.pi / 2],
            [0.0, 0.0, -0.425, 0.0],
            [0.0, 0.0, -0.39225, 0.0],
            [0.10915, 0.0, 0.0, np.pi / 2],
            [0.09465, 0.0, 0.0, -np.pi / 2],
            [0.0823, 0.0, 0.0, 0.0],
        ]
    )
    masses = np.array([3.7, 8.393, 2.33, 1.219, 1.219, 0.1879])
    coms = np.array(
        [
            [0.0, -0.02561, 0.00193],
            [0.2125, 0.0, 0.11336],
            [0.15, 0.0, 0.0265],
            [0.0, -0.0018, 0.01634],
            [0.0, 0.0018, 0.01634],
            [0.0, 0.0, -0.001159],
        ]
    )
    return SyntheticArm(dh=dh, masses=masses, coms=coms, up=up, g=g, name="UR5-like")


def iiwa_arm(up: ArrayLike = (0.0, 0.0, 1.0), *, g: float = STANDARD_GRAVITY) -> SyntheticArm:
    """A seven-joint arm shaped like a KUKA LBR iiwa 14 R820.

    Parameters
    ----------
    up : array_like, shape (3,), optional
        Unit vector opposite to gravity in the base frame. Default upright.
    g : float, optional
        Gravitational acceleration, m/s².

    Returns
    -------
    SyntheticArm
        Standard DH ``d = (0.36, 0, 0.42, 0, 0.4, 0, 0.126)``, ``a = 0``,
        ``alpha = (-pi/2, pi/2, pi/2, -pi/2, -pi/2, pi/2, 0)``; link masses
        ``(4, 4, 3, 2.7, 1.7, 1.8, 0.3)`` kg.

    Raises
    ------
    ValueError
        If `up` is not a unit vector.

    Notes
    -----
    The DH table and masses are the arm's published kinematics and the link masses of its
    widely used URDF description. The centres of mass are plausible values, not the
    manufacturer's: at ``q = 0`` (arm straight up) each lies on or within a few centimetres of
    the vertical line through the joints, between the joints that bound its link. J1 and J2
    intersect, as the canonical model assumes (L3 = 0). J7's distal mass lies on its axis, so
    J7 carries no gravity load.

    Examples
    --------
    >>> arm = iiwa_arm()
    >>> arm.com_positions(np.zeros(7))[:, 2].round(2)
    array([0.28, 0.4 , 0.62, 0.81, 1.03, 1.19, 1.25])
    """
    dh = np.array(
        [
            [0.36, 0.0, 0.0, -np.pi / 2],
            [0.0, 0.0, 0.0, np.pi / 2],
            [0.42, 0.0, 0.0, np.pi / 2],
            [0.0, 0.0, 0.0, -np.pi / 2],
            [0.4, 0.0, 0.0, -np.pi / 2],
            [0.0, 0.0, 0.0, np.pi / 2],
            [0.126, 0.0, 0.0, 0.0],
        ]
    )
    masses = np.array([4.0, 4.0, 3.0, 2.7, 1.7, 1.8, 0.3])
    coms = np.array(
        [
            [0.0, 0.08, -0.03],
            [0.0, 0.04, 0.04],
            [0.0, -0.16, -0.03],
            [0.0, 0.04, 0.03],
            [0.0, 0.15, 0.02],
            [0.0, 0.0, 0.01],
            [0.0, 0.0, -0.06],
        ]
    )
    return SyntheticArm(dh=dh, masses=masses, coms=coms, up=up, g=g, name="iiwa-like")
