"""A harmonic-drive joint with a flexible link and an accelerometer, for tests and examples.

The motor follows the corrected command exactly (ideal servo); the output angle carries the
transmission error :math:`\\theta_o = \\theta_m/N + \\mathrm{TE}(\\theta_m)`; a single bending
mode of the link (natural frequency, damping) filters the output motion; an accelerometer at a
radius on the link measures specific force (acceleration minus gravity) in its own frame, with
white noise and a bias. Kinematics are written with rotation matrices and cross products,
independently of :func:`gravdir.kinematic_error.expected_acceleration`.

The simulator does not depend on the estimators it tests: a correction is any object with a
``derivative(motor_angle, n)`` method (:class:`MotorCorrection`), such as
:class:`gravdir.kinematic_error.KinematicErrorModel`, and the joint's cancelling correction comes
out as plain coefficients (:meth:`HarmonicDriveJoint.cancelling_coefficients`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import signal as sps

from gravdir._checks import check_array, check_positive, check_unit_vector, check_vectors
from gravdir._constants import STANDARD_GRAVITY
from gravdir._results import Result

__all__ = [
    "HarmonicDriveJoint",
    "JointRun",
    "MotorCorrection",
    "constant_speed_run",
    "oscillating_run",
    "simulate_run",
]


class MotorCorrection(Protocol):
    """A correction :math:`u(\\theta)` added to the motor command, in radians of motor angle.

    Any object with this method will do, for example
    :class:`gravdir.kinematic_error.KinematicErrorModel`.
    """

    def derivative(self, motor_angle: ArrayLike, n: int = 1) -> NDArray[np.float64]:
        """The `n`-th derivative :math:`d^n u/d\\theta^n` at `motor_angle` (``n = 0``: `u`)."""
        ...


def _default_te_orders() -> NDArray[np.float64]:
    return np.array([1.0, 2.0, 4.0, 200 / 202, 2 * 200 / 202])


def _default_te_amplitudes() -> NDArray[np.float64]:
    return np.array([2e-5, 5e-5, 1e-5, 1e-5, 1.5e-5])


def _default_te_phases() -> NDArray[np.float64]:
    return np.array([0.3, -1.1, 2.0, 0.7, -2.5])


def _default_up() -> NDArray[np.float64]:
    return np.array([0.0, 0.0, 1.0])


def _default_bias() -> NDArray[np.float64]:
    return np.zeros(3)


@dataclass(frozen=True, eq=False, repr=False)
class HarmonicDriveJoint(Result):
    """Parameters of the simulated joint.

    Attributes
    ----------
    flexspline_teeth, circular_spline_teeth : int
        :math:`z_f < z_c`; the ratio is :math:`N = z_f/(z_c - z_f)`.
    te_orders : ndarray, shape (j,)
        Orders (cycles per motor revolution) of the transmission error.
    te_amplitudes : ndarray, shape (j,)
        Amplitudes in radians of output angle.
    te_phases : ndarray, shape (j,)
        Phases: :math:`\\mathrm{TE} = \\sum_j A_j \\cos(q_j\\theta_m + \\phi_j)` + the output term.
    output_amplitude, output_phase : float
        A once-per-output-revolution term :math:`B\\cos(\\theta_m/N + \\phi_B)` (order :math:`1/N`).
    natural_frequency : float
        Link bending mode in Hz.
    damping_ratio : float
        Its damping ratio.
    radius : float
        Sensor distance from the joint axis (m).
    up : ndarray, shape (3,)
        Up in the joint frame (z = joint axis, x toward the sensor at zero output angle).
    noise_density : float
        Accelerometer white-noise density in m/s²/√Hz (150 µg/√Hz ≈ 1.47e-3).
    bias : ndarray, shape (3,)
        Accelerometer bias (m/s²).
    sample_rate : float
        Samples per second.
    gravity : float
        Magnitude of gravity (m/s²), standard gravity by default.

    Examples
    --------
    The default 200/202-tooth drive and the coefficients (cosine, sine; radians of motor angle)
    of the correction that cancels its order-2 error:

    >>> joint = HarmonicDriveJoint()
    >>> joint.gear_ratio
    100.0
    >>> joint.cancelling_coefficients([2.0]).round(6)
    array([[-0.002268, -0.004456]])
    >>> HarmonicDriveJoint(natural_frequency=12.0, noise_density=1.47e-3).sample_rate
    500.0
    """

    flexspline_teeth: int = 200
    circular_spline_teeth: int = 202
    te_orders: NDArray[np.float64] = field(default_factory=_default_te_orders)
    te_amplitudes: NDArray[np.float64] = field(default_factory=_default_te_amplitudes)
    te_phases: NDArray[np.float64] = field(default_factory=_default_te_phases)
    output_amplitude: float = 2e-5
    output_phase: float = 0.4
    natural_frequency: float = 10.0
    damping_ratio: float = 0.05
    radius: float = 0.8
    up: NDArray[np.float64] = field(default_factory=_default_up)
    noise_density: float = 0.0
    bias: NDArray[np.float64] = field(default_factory=_default_bias)
    sample_rate: float = 500.0
    gravity: float = STANDARD_GRAVITY

    def __post_init__(self) -> None:
        zf, zc = self.flexspline_teeth, self.circular_spline_teeth
        if not (isinstance(zf, int) and isinstance(zc, int) and 2 <= zf < zc):
            raise ValueError(
                "Expected integer teeth with 2 ≤ `flexspline_teeth` < `circular_spline_teeth`, "
                f"got {zf!r} and {zc!r}."
            )
        q = check_array(self.te_orders, "te_orders", min_ndim=1)
        a = check_array(self.te_amplitudes, "te_amplitudes", min_ndim=1)
        p = check_array(self.te_phases, "te_phases", min_ndim=1)
        if not (q.shape == a.shape == p.shape) or q.ndim != 1:
            raise ValueError(
                "Expected `te_orders`, `te_amplitudes`, `te_phases` of one shape (j,), got "
                f"{q.shape}, {a.shape}, {p.shape}."
            )
        up = check_unit_vector(self.up, "up")
        if up.shape != (3,):
            raise ValueError(f"Expected `up` to have shape (3,), got {up.shape}.")
        b = check_vectors(self.bias, "bias")
        if b.shape != (3,):
            raise ValueError(f"Expected `bias` to have shape (3,), got {b.shape}.")
        # copies, so the caller's arrays cannot change the joint afterwards
        for name, value in (("te_orders", q), ("te_amplitudes", a), ("te_phases", p)):
            object.__setattr__(self, name, np.array(value, dtype=np.float64))
        object.__setattr__(self, "up", np.array(up, dtype=np.float64))
        object.__setattr__(self, "bias", np.array(b, dtype=np.float64))
        check_positive(self.natural_frequency, "natural_frequency")
        check_positive(self.damping_ratio, "damping_ratio")
        check_positive(self.radius, "radius")
        check_positive(self.noise_density, "noise_density", allow_zero=True)
        check_positive(self.sample_rate, "sample_rate")
        check_positive(self.gravity, "gravity")
        super().__post_init__()

    @property
    def gear_ratio(self) -> float:
        """:math:`N = z_f/(z_c - z_f)`."""
        return self.flexspline_teeth / (self.circular_spline_teeth - self.flexspline_teeth)

    def transmission_error(self, motor_angle: ArrayLike, n: int = 0) -> NDArray[np.float64]:
        """The `n`-th derivative (0, 1 or 2) of TE (output rad) with respect to motor angle."""
        th = check_array(motor_angle, "motor_angle")
        q = np.concatenate([self.te_orders, [1.0 / self.gear_ratio]])
        a = np.concatenate([self.te_amplitudes, [self.output_amplitude]])
        p = np.concatenate([self.te_phases, [self.output_phase]])
        arg = th[..., None] * q + p
        if n == 0:
            terms = a * np.cos(arg)
        elif n == 1:
            terms = -a * q * np.sin(arg)
        elif n == 2:
            terms = -a * q**2 * np.cos(arg)
        else:
            raise ValueError(f"Expected `n` in (0, 1, 2), got {n!r}.")
        return np.asarray(np.sum(terms, axis=-1), dtype=np.float64)

    def cancelling_coefficients(self, orders: ArrayLike) -> NDArray[np.float64]:
        """Coefficients of the first-order cancelling correction :math:`u = -N\\,\\mathrm{TE}`.

        Parameters
        ----------
        orders : array_like, shape (k,)
            Orders (cycles per motor revolution) of the correction.

        Returns
        -------
        ndarray, shape (k, 2)
            Columns :math:`(a_k, b_k)` of
            :math:`u(\\theta) = \\sum_k a_k \\cos(q_k\\theta) + b_k \\sin(q_k\\theta)`,
            radians of motor angle (the convention of
            :class:`gravdir.kinematic_error.KinematicErrorModel`). Orders absent from the joint's
            TE get zero coefficients.
        """
        q = check_array(orders, "orders", min_ndim=1)
        coef = np.zeros((q.size, 2))
        for i, qi in enumerate(q):
            hit = np.flatnonzero(np.abs(self.te_orders - qi) < 1e-9)
            for j in hit:
                a, p = self.te_amplitudes[j], self.te_phases[j]
                # -N A cos(qθ + p) = -N A cos p cos qθ + N A sin p sin qθ
                coef[i] += self.gear_ratio * a * np.array([-math.cos(p), math.sin(p)])
        return coef


@dataclass(frozen=True, eq=False, repr=False)
class JointRun(Result):
    """One simulated run.

    Attributes
    ----------
    time : ndarray, shape (n,)
        Sample times (s).
    motor_angle : ndarray, shape (n,)
        Measured motor angle (rad), the corrected command the servo follows.
    command : ndarray, shape (n,)
        Uncorrected command from the trajectory generator (rad).
    output_angle : ndarray, shape (n,)
        Output (flexspline) angle (rad).
    acceleration : ndarray, shape (n, 3)
        Accelerometer reading in the sensor frame (m/s²).
    """

    time: NDArray[np.float64]
    motor_angle: NDArray[np.float64]
    command: NDArray[np.float64]
    output_angle: NDArray[np.float64]
    acceleration: NDArray[np.float64]


def _rot_z(angle: NDArray[np.float64]) -> NDArray[np.float64]:
    c, s = np.cos(angle), np.sin(angle)
    r = np.zeros((*angle.shape, 3, 3))
    r[..., 0, 0], r[..., 0, 1], r[..., 1, 0], r[..., 1, 1], r[..., 2, 2] = c, -s, s, c, 1.0
    return r


def simulate_run(
    joint: HarmonicDriveJoint,
    time: ArrayLike,
    command: ArrayLike,
    command_velocity: ArrayLike,
    command_acceleration: ArrayLike,
    *,
    correction: MotorCorrection | None = None,
    settle_time: float = 3.0,
    rng: np.random.Generator | None = None,
) -> JointRun:
    """Simulate a run along a commanded motor trajectory.

    Parameters
    ----------
    joint : HarmonicDriveJoint
        The joint.
    time, command, command_velocity, command_acceleration : array_like, shape (n,)
        Uniformly sampled time (at ``joint.sample_rate``) and the commanded motor angle and its
        derivatives.
    correction : MotorCorrection, optional
        Added to the command: :math:`\\theta_m = \\theta_c + u(\\theta_c)`. Any object with a
        method ``derivative(motor_angle, n)`` giving :math:`d^n u/d\\theta^n` in radians (for
        example :class:`gravdir.kinematic_error.KinematicErrorModel`).
    settle_time : float, optional
        Samples before ``time[0] + settle_time`` are simulated but not returned (the link mode
        starts at rest and its start-up transient decays meanwhile).
    rng : numpy.random.Generator, optional
        Source of the accelerometer noise (required if ``joint.noise_density`` > 0).

    Returns
    -------
    JointRun
        The recorded samples.

    Examples
    --------
    Three seconds at 10 rad/s with a correction of order 2; the first second is not returned:

    >>> from gravdir.kinematic_error import KinematicErrorModel
    >>> joint = HarmonicDriveJoint()
    >>> t = np.arange(1501) / joint.sample_rate
    >>> u = KinematicErrorModel([2.0], [[1e-3, 0.0]])
    >>> run = simulate_run(
    ...     joint, t, 10.0 * t, np.full_like(t, 10.0), np.zeros_like(t), correction=u,
    ...     settle_time=1.0,
    ... )
    >>> run.acceleration.shape
    (1001, 3)
    >>> bool(np.allclose(run.motor_angle - run.command, u.correction(run.command)))
    True
    >>> round(float(np.mean(run.acceleration[:, 2])), 4)  # the joint axis points up
    9.8067
    """
    t = check_array(time, "time", min_ndim=1)
    th_c = check_array(command, "command", min_ndim=1)
    w_c = check_array(command_velocity, "command_velocity", min_ndim=1)
    a_c = check_array(command_acceleration, "command_acceleration", min_ndim=1)
    if not (t.shape == th_c.shape == w_c.shape == a_c.shape) or t.ndim != 1:
        raise ValueError("Expected `time` and the command arrays to share one shape (n,).")
    n_ = joint.gear_ratio
    if correction is None:
        u0 = u1 = u2 = np.zeros_like(th_c)
    else:
        u0, u1, u2 = (correction.derivative(th_c, k) for k in (0, 1, 2))
    th_m = th_c + u0
    w_m = w_c * (1 + u1)
    a_m = a_c * (1 + u1) + w_c**2 * u2
    te0, te1, te2 = (joint.transmission_error(th_m, k) for k in (0, 1, 2))
    th_o = th_m / n_ + te0
    w_o = w_m / n_ + te1 * w_m
    a_o = a_m / n_ + te1 * a_m + te2 * w_m**2
    # link mode: φ'' + 2ζω φ' + ω² φ = -θo''; absolute angle ψ = θo + φ
    wn = 2 * math.pi * joint.natural_frequency
    z = joint.damping_ratio
    sys = sps.StateSpace(
        [[0.0, 1.0], [-(wn**2), -2 * z * wn]], [[0.0], [-1.0]], np.eye(2), np.zeros((2, 1))
    )
    _, _, x = sps.lsim(sys, a_o, t - t[0])
    x = np.asarray(x).reshape(t.size, 2)
    phi, dphi = x[:, 0], x[:, 1]
    ddphi = -a_o - 2 * z * wn * dphi - wn**2 * phi
    psi, dpsi, ddpsi = th_o + phi, w_o + dphi, a_o + ddphi
    # sensor position and acceleration in the joint frame, by cross products
    axis = np.array([0.0, 0.0, 1.0])
    rot = _rot_z(psi)
    p = rot @ np.array([joint.radius, 0.0, 0.0])
    omega = dpsi[:, None] * axis
    alpha = ddpsi[:, None] * axis
    acc = np.cross(alpha, p) + np.cross(omega, np.cross(omega, p))
    f_joint = acc + joint.gravity * joint.up  # a - g, g = -|g| up
    f_sensor = np.einsum("nji,nj->ni", rot, f_joint) + joint.bias
    if joint.noise_density > 0:
        if rng is None:
            raise ValueError("Expected `rng` when `joint.noise_density` > 0, got None.")
        sigma = joint.noise_density * math.sqrt(joint.sample_rate / 2)
        f_sensor = f_sensor + rng.normal(0.0, sigma, f_sensor.shape)
    keep = t >= t[0] + check_positive(settle_time, "settle_time", allow_zero=True)
    return JointRun(
        time=t[keep],
        motor_angle=th_m[keep],
        command=th_c[keep],
        output_angle=th_o[keep],
        acceleration=f_sensor[keep],
    )


def constant_speed_run(
    joint: HarmonicDriveJoint,
    speed: float,
    revolutions: float,
    *,
    correction: MotorCorrection | None = None,
    settle_time: float = 3.0,
    rng: np.random.Generator | None = None,
) -> JointRun:
    """Turn the motor at constant `speed` (rad/s) for `revolutions` recorded motor revolutions.

    The run starts `settle_time` seconds earlier, unrecorded; the remaining keyword arguments
    are passed to :func:`simulate_run`.

    Examples
    --------
    At 5 rev/s order 2 lies on the 10 Hz link mode and dominates the spectrum; the cancelling
    correction removes it:

    >>> from gravdir.kinematic_error import (
    ...     harmonic_drive_orders, measure_run, motor_speed_for_resonance,
    ... )
    >>> joint = HarmonicDriveJoint()
    >>> orders = harmonic_drive_orders(joint.flexspline_teeth, joint.circular_spline_teeth)
    >>> speed = motor_speed_for_resonance(joint.natural_frequency)
    >>> run = constant_speed_run(joint, speed, 110)
    >>> round(float(run.motor_angle[-1] - run.motor_angle[0]) / (2 * np.pi), 6)
    110.0
    >>> round(measure_run(run.motor_angle, run.acceleration, orders).amplitude(2.0), 1)
    1.6
    >>> from gravdir.kinematic_error import KinematicErrorModel
    >>> fix = KinematicErrorModel(orders, joint.cancelling_coefficients(orders))
    >>> fixed = constant_speed_run(joint, speed, 110, correction=fix)
    >>> bool(measure_run(fixed.motor_angle, fixed.acceleration, orders).amplitude(2.0) < 0.01)
    True
    """
    v = check_positive(speed, "speed")
    revs = check_positive(revolutions, "revolutions")
    duration = settle_time + 2 * math.pi * revs / v
    t = np.arange(int(round(duration * joint.sample_rate)) + 1) / joint.sample_rate
    return simulate_run(
        joint,
        t,
        v * t,
        np.full_like(t, v),
        np.zeros_like(t),
        correction=correction,
        settle_time=settle_time,
        rng=rng,
    )


def oscillating_run(
    joint: HarmonicDriveJoint,
    speed: float,
    stroke_revolutions: float,
    strokes: int,
    *,
    ramp_time: float = 0.5,
    correction: MotorCorrection | None = None,
    rng: np.random.Generator | None = None,
) -> JointRun:
    """Move back and forth: `strokes` constant-speed strokes with cosine-shaped reversals.

    The velocity goes from :math:`\\pm v` to :math:`\\mp v` over `ramp_time` seconds as
    :math:`v\\cos(\\pi\\tau/T)`; the first stroke starts at full speed after a settling stroke
    that is not returned.

    Examples
    --------
    Two strokes of three motor revolutions give one piece in each direction to
    :func:`gravdir.kinematic_error.measure_run`:

    >>> from gravdir.kinematic_error import measure_run
    >>> joint = HarmonicDriveJoint()
    >>> run = oscillating_run(joint, 10 * np.pi, 3.0, 2)
    >>> spectrum = measure_run(run.motor_angle, run.acceleration, [1.0, 2.0, 4.0])
    >>> spectrum.directions
    (1, -1)
    >>> bool(spectrum.amplitude(2.0) > spectrum.amplitude(1.0))
    True
    """
    v = check_positive(speed, "speed")
    stroke = 2 * math.pi * check_positive(stroke_revolutions, "stroke_revolutions") / v
    ramp = check_positive(ramp_time, "ramp_time")
    period = stroke + ramp
    total = (strokes + 1) * period
    t = np.arange(int(round(total * joint.sample_rate)) + 1) / joint.sample_rate
    k = np.floor(t / period)
    tau = t - k * period
    sgn = np.where(k % 2 == 0, 1.0, -1.0)
    in_ramp = tau > stroke
    phase = np.clip((tau - stroke) / ramp, 0.0, 1.0)
    vel = np.where(in_ramp, sgn * v * np.cos(math.pi * phase), sgn * v)
    acc = np.where(in_ramp, -sgn * v * math.pi / ramp * np.sin(math.pi * phase), 0.0)
    dt = 1.0 / joint.sample_rate
    pos = np.concatenate([[0.0], np.cumsum(0.5 * dt * (vel[1:] + vel[:-1]))])
    return simulate_run(joint, t, pos, vel, acc, correction=correction, settle_time=period, rng=rng)
