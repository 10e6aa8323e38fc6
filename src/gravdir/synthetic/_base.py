"""What every synthetic arm computes from its link poses: torques, inertias, dynamics, sweeps.

A concrete arm (:class:`~gravdir.synthetic.robot.SyntheticArm` from a DH table,
:class:`~gravdir.synthetic.urdf_arm.SyntheticUrdfArm` from a URDF) supplies its link poses and
where its joint axes lie; everything else is written here once, with explicit cross products.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import check_array, check_count, check_same_shape, norm
from gravdir.synthetic._record import record_sweep
from gravdir.synthetic._sweep import SweepProfile, SweepRecord
from gravdir.synthetic.sensors import TorqueSensor

__all__ = ["ArmModel"]

# Most configurations :meth:`ArmModel.peak_gravity_torque` searches.
_MAX_PEAK_SAMPLES = 100_000


def _parallel_axis(mass: NDArray[np.float64], d: NDArray[np.float64]) -> NDArray[np.float64]:
    """``m (|d|^2 E - d d^T)``, (..., 3, 3): the inertia of a point mass `m` at offset `d`."""
    eye = np.eye(3)
    out: NDArray[np.float64] = mass[..., None, None] * (
        np.sum(d * d, axis=-1)[..., None, None] * eye - d[..., :, None] * d[..., None, :]
    )
    return out


class ArmModel:
    """Methods shared by the synthetic arms; a subclass supplies poses and joint axes."""

    masses: NDArray[np.float64]
    coms: NDArray[np.float64]
    inertias: NDArray[np.float64]
    up: NDArray[np.float64]
    gravity: float

    name: str

    @property
    def n_joints(self) -> int:  # pragma: no cover - every arm defines it
        raise NotImplementedError

    def describe(self) -> str:
        """The arm in one line: name, joints, total mass, base tilt and azimuth, gravity."""
        tilt = np.degrees(np.arccos(np.clip(self.up[2], -1.0, 1.0)))
        azimuth = np.degrees(np.arctan2(self.up[1], self.up[0])) if tilt > 1e-9 else 0.0
        label = f"name={self.name!r}, " if self.name else ""
        return (
            f"{type(self).__name__}({label}n_joints={self.n_joints}, "
            f"total_mass={float(np.sum(self.masses)):.3g} kg, "
            f"tilt={tilt:.2f}°, azimuth={azimuth:.2f}°, gravity={self.gravity:g} m/s²)"
        )

    def link_poses(self, q: ArrayLike) -> NDArray[np.float64]:  # pragma: no cover
        raise NotImplementedError

    def _axes_points(
        self, poses: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:  # pragma: no cover
        """Unit axis z_i and a point p_i on it for every joint (..., n, 3), from `link_poses`."""
        raise NotImplementedError

    def _check_q(self, q: ArrayLike, name: str = "q") -> NDArray[np.float64]:
        qq = check_array(q, name, min_ndim=1)
        if qq.shape[-1] != self.n_joints:
            raise ValueError(
                f"Expected `{name}` to have shape (..., {self.n_joints}), got {qq.shape}."
            )
        return qq

    def joint_axes(self, q: ArrayLike) -> NDArray[np.float64]:
        """Unit axis of every joint in the base frame.

        Parameters
        ----------
        q : array_like, shape (..., n)
            Joint angles, rad.

        Returns
        -------
        ndarray, shape (..., n, 3)
            Axis of joint ``i`` (for a DH arm, the z axis of frame ``i - 1``).

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
        return self._axes_points(self.link_poses(q))[0]

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
        >>> from gravdir.synthetic import SyntheticArm
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
        >>> from gravdir.synthetic import SyntheticArm
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
        with :math:`g_{vec} = -g\\,\\mathrm{up}`, :math:`p_i` a point on joint :math:`i`'s axis
        and :math:`z_i` its direction. Equal to :math:`\\partial V / \\partial q_i`.

        Examples
        --------
        Planar arm, two 1 m links with 1 kg at each tip, gravity along base -y:

        >>> from gravdir.synthetic import SyntheticArm
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
        axes, points = self._axes_points(poses)
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

    def _world_inertias(self, poses: NDArray[np.float64]) -> NDArray[np.float64]:
        """:math:`R_k I_k R_k^\\top`, each link's inertia about its centre of mass, base axes."""
        r = poses[..., 1:, :3, :3]
        with np.errstate(under="ignore"):
            out: NDArray[np.float64] = r @ self.inertias @ np.swapaxes(r, -1, -2)
        return out

    def joint_inertia(self, q: ArrayLike) -> NDArray[np.float64]:
        """Inertia of everything distal to each joint about that joint's axis.

        Parameters
        ----------
        q : array_like, shape (..., n)
            Joint angles, rad.

        Returns
        -------
        ndarray, shape (..., n)
            :math:`M_{jj}(q)`, kg·m²: the diagonal of the joint-space mass matrix.

        Raises
        ------
        ValueError
            If `q` is not ``(..., n)`` and finite.

        Notes
        -----
        With :math:`z_j` the unit axis of joint :math:`j`, :math:`p_j` a point on it,
        :math:`R_k` the orientation of link :math:`k`, :math:`I_k` its inertia about its centre
        of mass :math:`c_k` (link axes),

        .. math::

            M_{jj} = \\sum_{k \\ge j} z_j^\\top R_k I_k R_k^\\top z_j
                     + m_k \\lVert z_j \\times (c_k - p_j) \\rVert^2 .

        It depends only on the joints distal to :math:`j`. In a sweep of joint :math:`j` alone
        the joint's torque is exactly :math:`M_{jj}\\ddot q_j + \\tau_{g,j}(q)`
        (``docs/synthetic.md``).

        Examples
        --------
        A 2 kg point mass 0.5 m from the axis: :math:`m r^2 = 0.5` kg·m².

        >>> from gravdir.synthetic import SyntheticArm
        >>> arm = SyntheticArm(dh=[[0, 0, 0.5, 0]], masses=[2.0], coms=[[0, 0, 0]])
        >>> arm.joint_inertia([0.3]).round(12)
        array([0.5])
        """
        poses = self.link_poses(q)
        axes, points = self._axes_points(poses)
        coms = self._coms_from_poses(poses)
        with np.errstate(under="ignore"):
            lever = coms[..., None, :, :] - points[..., :, None, :]  # (..., i, k, 3)
            swing = np.cross(axes[..., :, None, :], lever)
            translation = self.masses * np.sum(swing * swing, axis=-1)
            # z_i in the axes of link k: R_k^T z_i, then its quadratic form with I_k.
            local = np.einsum("...kba,...ib->...ika", poses[..., 1:, :3, :3], axes)
            rotation = np.einsum("...ika,kab,...ikb->...ik", local, self.inertias, local)
            out: NDArray[np.float64] = np.sum(self._distal * (translation + rotation), axis=-1)
        return out

    def mass_matrix(self, q: ArrayLike) -> NDArray[np.float64]:
        """Joint-space mass matrix by the composite-rigid-body algorithm.

        Parameters
        ----------
        q : array_like, shape (..., n)
            Joint angles, rad.

        Returns
        -------
        ndarray, shape (..., n, n)
            :math:`M(q)`, kg·m², symmetric positive semi-definite: the kinetic energy is
            :math:`\\tfrac12 \\dot q^\\top M \\dot q`.

        Raises
        ------
        ValueError
            If `q` is not ``(..., n)`` and finite.

        Notes
        -----
        From the tip inwards, the links :math:`j, \\dots, n-1` form a composite body of mass
        :math:`m_C`, centre of mass :math:`c_C` and inertia :math:`I_C` about it (base axes; each
        link added by the parallel-axis theorem). Turning joint :math:`j` at unit rate moves the
        composite with linear momentum :math:`h_j = m_C\\, z_j \\times (c_C - p_j)` and angular
        momentum about :math:`p_j`,
        :math:`L_j = I_C z_j + (c_C - p_j) \\times h_j`. For :math:`i \\le j`,

        .. math::

            M_{ij} = M_{ji} = z_i \\cdot \\big(L_j + (p_j - p_i) \\times h_j\\big),

        the component along joint :math:`i`'s axis of that angular momentum taken about
        :math:`p_i` (Featherstone, 2008, ch. 6).

        References
        ----------
        R. Featherstone, *Rigid Body Dynamics Algorithms*, Springer, 2008, ch. 6
        (composite-rigid-body algorithm).

        Examples
        --------
        >>> from gravdir.synthetic import ur5_arm
        >>> m = ur5_arm().mass_matrix(np.zeros(6))
        >>> bool(np.allclose(m, m.T)), bool(np.all(np.linalg.eigvalsh(m) > 0))
        (True, True)
        """
        poses = self.link_poses(q)
        axes, points = self._axes_points(poses)
        coms = self._coms_from_poses(poses)
        world = self._world_inertias(poses)
        n = self.n_joints
        batch = axes.shape[:-2]
        out = np.zeros((*batch, n, n))
        mass = np.zeros(batch)
        centre = np.zeros((*batch, 3))
        inertia = np.zeros((*batch, 3, 3))
        with np.errstate(under="ignore"):
            for j in range(n - 1, -1, -1):
                m_j = np.full(batch, self.masses[j])
                total = mass + m_j
                safe = np.where(total > 0, total, 1.0)
                merged = np.where(
                    (total > 0)[..., None],
                    (mass[..., None] * centre + m_j[..., None] * coms[..., j, :]) / safe[..., None],
                    points[..., j, :],
                )
                inertia = (
                    inertia
                    + _parallel_axis(mass, centre - merged)
                    + world[..., j, :, :]
                    + _parallel_axis(m_j, coms[..., j, :] - merged)
                )
                mass, centre = total, merged
                z_j, p_j = axes[..., j, :], points[..., j, :]
                momentum = mass[..., None] * np.cross(z_j, centre - p_j)
                angular = np.einsum("...ab,...b->...a", inertia, z_j) + np.cross(
                    centre - p_j, momentum
                )
                about = angular[..., None, :] + np.cross(
                    p_j[..., None, :] - points[..., : j + 1, :], momentum[..., None, :]
                )
                column = np.sum(axes[..., : j + 1, :] * about, axis=-1)
                out[..., : j + 1, j] = column
                out[..., j, : j + 1] = column
        return out

    def inverse_dynamics(
        self, q: ArrayLike, velocity: ArrayLike, acceleration: ArrayLike
    ) -> NDArray[np.float64]:
        """Joint torques that make the arm follow a motion, gravity included.

        Parameters
        ----------
        q : array_like, shape (..., n)
            Joint angles, rad.
        velocity : array_like, shape (..., n)
            Joint velocities, rad/s; broadcasts against `q`.
        acceleration : array_like, shape (..., n)
            Joint accelerations, rad/s²; broadcasts against `q`.

        Returns
        -------
        ndarray, shape (..., n)
            :math:`\\tau = M(q)\\ddot q + C(q, \\dot q)\\dot q + \\tau_g(q)`, N·m, in gravdir's
            sign (the torque the actuator applies to the distal link about +axis). At rest it
            equals :meth:`gravity_torque`.

        Raises
        ------
        ValueError
            If an argument is not ``(..., n)`` and finite, the shapes do not broadcast, or the
            torques overflow the float range.

        Notes
        -----
        The recursive Newton--Euler algorithm, written in the base frame. Gravity enters as an
        upward acceleration :math:`g\\,\\mathrm{up}` of the base. Outwards, with :math:`z_k,
        p_k` the axis of joint :math:`k` and a point on it and :math:`r_k = c_k - p_k`:

        .. math::

            a_{p_k} &= a_{p_{k-1}} + \\dot\\omega_{k-1} \\times d_k
                      + \\omega_{k-1} \\times (\\omega_{k-1} \\times d_k),
                      \\quad d_k = p_k - p_{k-1}, \\\\
            \\omega_k &= \\omega_{k-1} + z_k \\dot q_k, \\qquad
            \\dot\\omega_k = \\dot\\omega_{k-1} + z_k \\ddot q_k
                            + \\omega_{k-1} \\times z_k \\dot q_k, \\\\
            a_{c_k} &= a_{p_k} + \\dot\\omega_k \\times r_k
                      + \\omega_k \\times (\\omega_k \\times r_k).

        Inwards, :math:`f_k = m_k a_{c_k} + f_{k+1}`,
        :math:`n_k = I_k \\dot\\omega_k + \\omega_k \\times I_k \\omega_k + r_k \\times m_k a_{c_k}
        + n_{k+1} + (p_{k+1} - p_k) \\times f_{k+1}` (moments about :math:`p_k`, :math:`I_k` in
        base axes), and :math:`\\tau_k = z_k \\cdot n_k`.

        References
        ----------
        J. Y. S. Luh, M. W. Walker and R. P. C. Paul, "On-line computational scheme for
        mechanical manipulators", *J. Dyn. Syst. Meas. Control* 102 (1980) 69--76.

        Examples
        --------
        >>> from gravdir.synthetic import ur5_arm
        >>> arm = ur5_arm()
        >>> q = np.array([0.1, -1.0, 0.8, -0.5, 0.4, 0.2])
        >>> bool(np.allclose(arm.inverse_dynamics(q, np.zeros(6), np.zeros(6)),
        ...                  arm.gravity_torque(q)))
        True
        """
        qq = self._check_q(q)
        qd = self._check_q(velocity, "velocity")
        qdd = self._check_q(acceleration, "acceleration")
        shape = check_same_shape(q=qq, velocity=qd, acceleration=qdd)
        qq, qd, qdd = (np.broadcast_to(x, shape) for x in (qq, qd, qdd))
        poses = self.link_poses(qq)
        axes, points = self._axes_points(poses)
        coms = self._coms_from_poses(poses)
        world = self._world_inertias(poses)
        n, batch = self.n_joints, shape[:-1]
        omega = np.zeros((*batch, n, 3))
        spin = np.zeros((*batch, n, 3))
        centre_acc = np.zeros((*batch, n, 3))
        with np.errstate(under="ignore", over="ignore", invalid="ignore"):
            w, dw = np.zeros((*batch, 3)), np.zeros((*batch, 3))
            point_acc = np.broadcast_to(self.gravity * self.up, (*batch, 3))
            for k in range(n):
                if k > 0:
                    d = points[..., k, :] - points[..., k - 1, :]
                    point_acc = point_acc + np.cross(dw, d) + np.cross(w, np.cross(w, d))
                z = axes[..., k, :]
                dw = dw + z * qdd[..., k, None] + np.cross(w, z * qd[..., k, None])
                w = w + z * qd[..., k, None]
                r = coms[..., k, :] - points[..., k, :]
                centre_acc[..., k, :] = point_acc + np.cross(dw, r) + np.cross(w, np.cross(w, r))
                omega[..., k, :], spin[..., k, :] = w, dw
            out = np.zeros(shape)
            force, moment = np.zeros((*batch, 3)), np.zeros((*batch, 3))
            for k in range(n - 1, -1, -1):
                r = coms[..., k, :] - points[..., k, :]
                own = self.masses[k] * centre_acc[..., k, :]
                inertia = world[..., k, :, :]
                w, dw = omega[..., k, :], spin[..., k, :]
                moment = (
                    np.einsum("...ab,...b->...a", inertia, dw)
                    + np.cross(w, np.einsum("...ab,...b->...a", inertia, w))
                    + np.cross(r, own)
                    + moment
                    + (
                        np.cross(points[..., k + 1, :] - points[..., k, :], force)
                        if k + 1 < n
                        else 0.0
                    )
                )
                force = own + force
                out[..., k] = np.sum(axes[..., k, :] * moment, axis=-1)
        if not np.all(np.isfinite(out)):
            raise ValueError(
                "Expected `velocity` and `acceleration` small enough for the joint torques to "
                "stay within the float range, got an overflow."
            )
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
        ramp_time: float | None = None,
        cycles: int = 1,
        profile: SweepProfile = "trapezoid",
        acceleration: float | None = None,
        inertial: bool = False,
        time_jitter: float = 0.0,
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
            Cruise speed (for ``profile="varying"``, the peak speed), rad/s, positive.
        sample_rate : float
            Samples per second, Hz, positive.
        sensor : TorqueSensor or sequence of TorqueSensor, optional
            Sensor of the swept joint, or one sensor per joint (as returned by
            :func:`~gravdir.synthetic.sensors.realistic_sensors`), of which entry `joint` is
            used. Default: an ideal sensor (the measured torque is the holding torque).
        rng : numpy.random.Generator, optional
            Source of the sensor noise and of the timestamp jitter; required when the sensor
            has ``noise_std > 0`` or ``time_jitter > 0``.
        ramp_time : float, optional
            Duration of each speed change at the ends of a pass, s: non-negative for
            ``"trapezoid"``, positive otherwise. Default 0.2 s, unless `acceleration` is given.
            Each pass must be long enough: ``|stop - start| >= speed * ramp_time``.
        cycles : int, optional
            Number of forward-and-back cycles (default 1, at most 1000).
        profile : {"trapezoid", "s-curve", "varying"}, optional
            Shape of each pass (Notes). Default ``"trapezoid"``.
        acceleration : float, optional
            Peak acceleration of the ramps, rad/s², positive: an alternative to `ramp_time`
            (give one or neither). Collaborative arms sweep at about 1--5 rad/s².
        inertial : bool, optional
            Whether the measured torque includes the inertial torque
            :math:`M_{jj}(q)\\,\\ddot q` (default False: quasi-static).
        time_jitter : float, optional
            Standard deviation of the timestamp jitter, s, from 0 (default) to a quarter of
            the sample period.

        Returns
        -------
        SweepRecord
            Times, angles, velocities, accelerations, pass directions, the cruise mask,
            measured and true torques of the swept joint.

        Raises
        ------
        ValueError
            If an argument has the wrong type, shape or sign (booleans and numeric strings are
            refused); a joint position or the swept span lies beyond 4π ("degrees?"); the arc
            is too short for the ramps; both `ramp_time` and `acceleration` are given; the
            ramps are instantaneous (``ramp_time = 0``) for a smooth profile or an inertial
            sweep; the acceleration or the inertial torque overflows the float range;
            `time_jitter` exceeds a quarter of the sample period; the record would hold more
            than 1,000,000 samples (``sample_rate`` times the duration, ``2 cycles (|stop -
            start| / speed + ramp_time)``); or `rng` is missing while the sensor is noisy or
            the timestamps jitter.

        Notes
        -----
        Each pass of length :math:`D = |stop - start|` starts and ends at rest:

        - ``"trapezoid"``: a linear velocity ramp from 0 to the cruise speed :math:`v` over
          :math:`T_r`, cruise, and a linear ramp back to 0 (acceleration :math:`v / T_r`,
          stepping at the ramp ends); the pass takes :math:`T = D / v + T_r`.
        - ``"s-curve"``: the same with cosine ramps, :math:`\\dot q = \\tfrac v2(1 - \\cos(\\pi
          t / T_r))`: the acceleration is continuous, peaks at :math:`\\pi v / (2 T_r)`, and the
          jerk is bounded by :math:`\\pi^2 v / (2 T_r^2)`; :math:`T = D / v + T_r`.
        - ``"varying"``: no cruise. The speed rises smoothly from 0 to :math:`v` over
          :math:`T_a = 2D/v - T_r` (mostly accelerating, as in logs of real sweeps) and falls
          back over :math:`T_r`; :math:`T = 2D / v`.

        With `acceleration` :math:`a` given, :math:`T_r = v / a` (trapezoid) or
        :math:`\\pi v / (2a)` (cosine ramps). The default :math:`T_r` = 0.2 s gives
        :math:`v / 0.2` s, 1--5 rad/s² for speeds of 0.2--1 rad/s. Samples are taken at
        :math:`t_k = k / f_s + \\epsilon_k` for :math:`0 \\le t_k \\le 2\\,\\mathrm{cycles}\\,T`,
        :math:`\\epsilon_k` normal with standard deviation `time_jitter` (clipped to 0.45 of a
        period), and the angle, velocity, acceleration and torque are evaluated at those
        times. The torque is the rigid-body torque -- the holding torque at each sample's
        configuration, plus :math:`M_{jj}\\ddot q` when `inertial` -- passed through the sensor
        model: the gain scales it, and the load-dependent friction grows with all of it, as a
        loaded gear's friction grows with the torque it transmits (``docs/synthetic.md``).

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
        >>> rec.q.shape == rec.torque.shape == rec.velocity.shape == rec.acceleration.shape
        True
        >>> bool(np.allclose(rec.torque, rec.gravity_torque))
        True
        """
        return record_sweep(
            self,
            joint,
            configuration,
            start,
            stop,
            speed,
            sample_rate,
            sensor,
            rng,
            ramp_time=ramp_time,
            cycles=cycles,
            profile=profile,
            acceleration=acceleration,
            inertial=inertial,
            time_jitter=time_jitter,
        )
