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
from typing import Any, Final, Protocol

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import (
    check_array,
    check_count,
    check_positive,
    check_scalar,
    check_vectors,
    norm,
)
from gravdir._constants import STANDARD_GRAVITY
from gravdir._imports import IMPORT_LOCK
from gravdir._results import Result

__all__ = [
    "HarmonicDriveJoint",
    "JointRun",
    "MotorCorrection",
    "constant_speed_run",
    "oscillating_run",
    "simulate_run",
]


#: Most samples one simulated run may hold (33 minutes at 500 Hz); it bounds the memory and time
#: of :func:`simulate_run`, :func:`constant_speed_run` and :func:`oscillating_run`.
MAX_SAMPLES: Final[int] = 1_000_000

#: Highest accelerometer sample rate accepted, Hz.
MAX_SAMPLE_RATE: Final[float] = 1e6

#: Largest number of teeth of a spline.
MAX_TEETH: Final[int] = 100_000

#: Largest transmission-error order, cycles per motor revolution.
MAX_ORDER: Final[float] = 1e4

#: Largest transmission-error amplitude, radians of output angle (5.7°; a harmonic drive's is of
#: order 1e-4 rad).
MAX_TE_AMPLITUDE: Final[float] = 0.1

#: Largest damping ratio of the link mode.
MAX_DAMPING_RATIO: Final[float] = 10.0

#: Largest magnitude of a commanded motor angle, rad (float64 resolves 1.2e-7 rad there).
MAX_MOTOR_ANGLE: Final[float] = 1e9

#: Largest number of strokes of :func:`oscillating_run`.
MAX_STROKES: Final[int] = 10_000


def _check_phase(value: Any, name: str) -> NDArray[np.float64]:
    """Phases in radians: beyond one turn they are almost certainly degrees."""
    arr = check_array(value, name)
    worst = float(np.max(np.abs(arr))) if arr.size else 0.0
    if worst > 2 * math.pi:
        raise ValueError(
            f"Expected `{name}` in radians (within ±2π), got {worst:.6g} "
            f"({math.degrees(worst):.6g}° if radians): degrees?"
        )
    return arr


def _check_amplitude(value: Any, name: str) -> NDArray[np.float64]:
    arr = check_array(value, name)
    worst = float(np.max(np.abs(arr))) if arr.size else 0.0
    if worst > MAX_TE_AMPLITUDE:
        raise ValueError(
            f"Expected `{name}` within ±{MAX_TE_AMPLITUDE:g} rad of output angle, got {worst:.3g}."
        )
    return arr


def _scalar(value: Any, name: str) -> float:
    if isinstance(value, bool | np.bool_):
        raise ValueError(f"Expected `{name}` to be a number, got {value!r}.")
    return check_scalar(value, name)


def _check_number(value: Any, name: str, *, allow_zero: bool = False, maximum: float) -> float:
    v = check_positive(value, name, allow_zero=allow_zero)
    if v > maximum:
        raise ValueError(f"Expected `{name}` at most {maximum:g}, got {value!r}.")
    return v


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

    Raises
    ------
    ValueError
        If the teeth are not integers with 2 ≤ `flexspline_teeth` < `circular_spline_teeth` ≤
        100,000; the transmission-error arrays are not finite 1-D arrays of one length, with
        orders in (0, 1e4] and amplitudes within ±0.1 rad; a phase leaves ±2π ("degrees?");
        `up` is not a unit 3-vector or `bias` not a finite 3-vector; `sample_rate` is not in
        (0, 1e6] Hz; `natural_frequency` is not positive and below the Nyquist frequency
        ``sample_rate / 2``; `damping_ratio` is not in (0, 10]; or `radius`, `gravity` (positive)
        or `noise_density` (non-negative) is not a finite number.

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

    _units = {
        "te_orders": "cycles/motor rev", "te_amplitudes": "rad", "te_phases": "rad",
        "output_amplitude": "rad", "output_phase": "rad", "natural_frequency": "Hz",
        "damping_ratio": "", "radius": "m", "up": "", "noise_density": "(m/s²)/√Hz",
        "bias": "m/s²", "sample_rate": "Hz", "gravity": "m/s²",
    }

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
        zf = check_count(self.flexspline_teeth, "flexspline_teeth", minimum=2, maximum=MAX_TEETH)
        zc = check_count(
            self.circular_spline_teeth, "circular_spline_teeth", minimum=3, maximum=MAX_TEETH
        )
        if not zf < zc:
            raise ValueError(
                "Expected `flexspline_teeth` < `circular_spline_teeth` (a harmonic drive's "
                f"flexspline has fewer teeth), got {zf} and {zc}."
            )
        q = check_array(self.te_orders, "te_orders", min_ndim=1)
        a = _check_amplitude(self.te_amplitudes, "te_amplitudes")
        p = _check_phase(self.te_phases, "te_phases")
        if not (q.shape == a.shape == p.shape) or q.ndim != 1:
            raise ValueError(
                "Expected `te_orders`, `te_amplitudes`, `te_phases` of one shape (j,), got "
                f"{q.shape}, {a.shape}, {p.shape}."
            )
        if np.any(q <= 0) or np.any(q > MAX_ORDER):
            raise ValueError(
                f"Expected `te_orders` in (0, {MAX_ORDER:g}] cycles per motor revolution, "
                f"got {q.tolist()}."
            )
        up = check_vectors(self.up, "up")
        if up.shape != (3,):
            raise ValueError(f"Expected `up` to have shape (3,), got {up.shape}.")
        length = float(norm(up))
        if abs(length - 1.0) > 1e-6:
            raise ValueError(
                f"Expected `up` to have unit norm (within 1e-06), got a norm of {length:.6g}."
            )
        b = check_vectors(self.bias, "bias")
        if b.shape != (3,):
            raise ValueError(f"Expected `bias` to have shape (3,), got {b.shape}.")
        scalars = {
            "output_amplitude": _check_amplitude(
                _scalar(self.output_amplitude, "output_amplitude"), "output_amplitude"
            ).item(),
            "output_phase": _check_phase(
                _scalar(self.output_phase, "output_phase"), "output_phase"
            ).item(),
            "sample_rate": _check_number(self.sample_rate, "sample_rate", maximum=MAX_SAMPLE_RATE),
            "damping_ratio": _check_number(
                self.damping_ratio, "damping_ratio", maximum=MAX_DAMPING_RATIO
            ),
            "radius": check_positive(self.radius, "radius"),
            "noise_density": check_positive(self.noise_density, "noise_density", allow_zero=True),
            "gravity": check_positive(self.gravity, "gravity"),
        }
        nyquist = scalars["sample_rate"] / 2
        scalars["natural_frequency"] = check_positive(self.natural_frequency, "natural_frequency")
        if scalars["natural_frequency"] >= nyquist:
            raise ValueError(
                f"Expected `natural_frequency` below the Nyquist frequency {nyquist:g} Hz "
                f"(`sample_rate` / 2), got {self.natural_frequency!r}."
            )
        # copies, so the caller's arrays cannot change the joint afterwards
        for name, value in (("te_orders", q), ("te_amplitudes", a), ("te_phases", p)):
            object.__setattr__(self, name, np.array(value, dtype=np.float64))
        object.__setattr__(self, "up", np.array(up, dtype=np.float64))
        object.__setattr__(self, "bias", np.array(b, dtype=np.float64))
        object.__setattr__(self, "flexspline_teeth", zf)
        object.__setattr__(self, "circular_spline_teeth", zc)
        for name, number in scalars.items():
            object.__setattr__(self, name, number)
        super().__post_init__()

    @property
    def gear_ratio(self) -> float:
        """:math:`N = z_f/(z_c - z_f)`."""
        return self.flexspline_teeth / (self.circular_spline_teeth - self.flexspline_teeth)

    @property
    def highest_order(self) -> float:
        """The highest order of the joint's transmission error (cycles per motor revolution)."""
        return float(max(np.max(self.te_orders, initial=0.0), 1.0 / self.gear_ratio))

    def transmission_error(self, motor_angle: ArrayLike, n: int = 0) -> NDArray[np.float64]:
        """The `n`-th derivative (0, 1 or 2) of TE (output rad) with respect to motor angle."""
        n = check_count(n, "n", minimum=0, maximum=2)
        th = check_array(motor_angle, "motor_angle")
        q = np.concatenate([self.te_orders, [1.0 / self.gear_ratio]])
        a = np.concatenate([self.te_amplitudes, [self.output_amplitude]])
        p = np.concatenate([self.te_phases, [self.output_phase]])
        arg = th[..., None] * q + p
        if n == 0:
            terms = a * np.cos(arg)
        elif n == 1:
            terms = -a * q * np.sin(arg)
        else:
            terms = -a * q**2 * np.cos(arg)
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
        q = check_array(orders, "orders")
        if q.ndim != 1 or np.any(q <= 0):
            raise ValueError(f"Expected `orders` to be a 1-D array of positive orders, got {q!r}.")
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

    _units = {
        "time": "s", "motor_angle": "rad", "command": "rad", "output_angle": "rad",
        "acceleration": "m/s²",
    }

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
        Uniformly sampled time (at ``joint.sample_rate``, 2 ≤ n ≤ 1,000,000 samples) and the
        commanded motor angle (within ±1e9 rad; motor angles may span thousands of radians) and
        its derivatives.
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

    Raises
    ------
    ValueError
        If `joint` is not a :class:`HarmonicDriveJoint`; the arrays are not finite, of one shape
        (n,) with 2 ≤ n ≤ `MAX_SAMPLES`; `time` is not uniformly sampled at
        ``joint.sample_rate`` (within 0.1 % of a period); the command leaves ±1e9 rad; the
        command velocity exceeds the Nyquist limit of the joint's highest transmission-error
        order, :math:`\\pi f_s / q_{max}`; `correction` has no usable ``derivative`` method or
        returns non-finite values of another shape; `settle_time` is negative or leaves no
        sample; `rng` is missing where noise is asked for or not a ``numpy.random.Generator``;
        or the simulated reading overflows float64.

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
    _check_joint(joint)
    t = check_array(time, "time", min_ndim=1)
    th_c = check_array(command, "command", min_ndim=1)
    w_c = check_array(command_velocity, "command_velocity", min_ndim=1)
    a_c = check_array(command_acceleration, "command_acceleration", min_ndim=1)
    if not (t.shape == th_c.shape == w_c.shape == a_c.shape) or t.ndim != 1:
        raise ValueError(
            "Expected `time`, `command`, `command_velocity` and `command_acceleration` to share "
            f"one shape (n,), got {t.shape}, {th_c.shape}, {w_c.shape}, {a_c.shape}."
        )
    check_count(t.size, "time", minimum=2, maximum=MAX_SAMPLES)
    dt = 1.0 / joint.sample_rate
    worst = float(np.max(np.abs(np.diff(t) - dt)))
    if not worst <= 1e-3 * dt:
        raise ValueError(
            f"Expected `time` sampled uniformly at `joint.sample_rate` = {joint.sample_rate:g} Hz "
            f"(steps of {dt:.6g} s), got steps off by up to {worst:.3g} s."
        )
    if float(np.max(np.abs(th_c))) > MAX_MOTOR_ANGLE:
        raise ValueError(
            f"Expected `command` within ±{MAX_MOTOR_ANGLE:g} rad (subtract the start angle), got "
            f"{float(np.max(np.abs(th_c))):.3g} rad."
        )
    limit = math.pi * joint.sample_rate / joint.highest_order
    if float(np.max(np.abs(w_c))) >= limit:
        raise ValueError(
            f"Expected `command_velocity` below {limit:.6g} rad/s (two samples per period of the "
            f"joint's highest transmission-error order {joint.highest_order:.4g} at "
            f"{joint.sample_rate:g} Hz), got {float(np.max(np.abs(w_c))):.6g} rad/s."
        )
    settle = check_positive(settle_time, "settle_time", allow_zero=True)
    keep = t >= t[0] + settle
    if not np.any(keep):
        raise ValueError(
            f"Expected `settle_time` shorter than the record ({float(t[-1] - t[0]):.6g} s), "
            f"got {settle_time!r}."
        )
    if joint.noise_density > 0:
        if rng is None:
            raise ValueError("Expected `rng` when `joint.noise_density` > 0, got None.")
        if not isinstance(rng, np.random.Generator):
            raise ValueError(
                f"Expected `rng` to be a numpy.random.Generator, got {type(rng).__name__}."
            )
    n_ = joint.gear_ratio
    if correction is None:
        u0 = u1 = u2 = np.zeros_like(th_c)
    else:
        u0, u1, u2 = (_correction_derivative(correction, th_c, k) for k in (0, 1, 2))
    with np.errstate(all="ignore"):
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
        with IMPORT_LOCK:
            from scipy import signal as sps  # slow to import: only when needed

        sys = sps.StateSpace(
            [[0.0, 1.0], [-(wn**2), -2 * z * wn]], [[0.0], [-1.0]], np.eye(2), np.zeros((2, 1))
        )
        if np.all(np.isfinite(a_o)):
            _, _, x = sps.lsim(sys, a_o, np.arange(t.size) * dt)
            x = np.asarray(x).reshape(t.size, 2)
        else:
            x = np.full((t.size, 2), np.nan)
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
        if joint.noise_density > 0 and rng is not None:  # rng checked above
            sigma = joint.noise_density * math.sqrt(joint.sample_rate / 2)
            f_sensor = f_sensor + rng.normal(0.0, sigma, f_sensor.shape)
    for name, value in (("motor_angle", th_m), ("output_angle", th_o), ("acceleration", f_sensor)):
        if not np.all(np.isfinite(value)):
            raise ValueError(
                f"Expected `command_velocity`, `command_acceleration` and the joint's parameters "
                f"to give a finite {name.replace('_', ' ')}, got overflow."
            )
    return JointRun(
        time=np.array(t[keep]),
        motor_angle=th_m[keep],
        command=np.array(th_c[keep]),
        output_angle=th_o[keep],
        acceleration=f_sensor[keep],
    )


def _correction_derivative(
    correction: MotorCorrection, command: NDArray[np.float64], n: int
) -> NDArray[np.float64]:
    """:math:`d^n u/d\\theta^n` of `correction` at `command`, checked."""
    method = getattr(correction, "derivative", None)
    if not callable(method):
        raise ValueError(
            "Expected `correction` to have a method derivative(motor_angle, n), got "
            f"{type(correction).__name__}."
        )
    try:
        value = method(command, n)
    except (TypeError, AttributeError) as exc:
        raise ValueError(
            f"Expected `correction`.derivative(motor_angle, {n}) to accept a motor angle array, "
            f"got {type(exc).__name__}: {exc}"
        ) from exc
    out = check_array(value, "correction")
    if out.shape != command.shape:
        raise ValueError(
            f"Expected `correction`.derivative to return shape {command.shape}, got {out.shape}."
        )
    return out


def _check_joint(joint: object) -> None:
    if not isinstance(joint, HarmonicDriveJoint):
        raise ValueError(
            f"Expected `joint` to be a HarmonicDriveJoint, got {type(joint).__name__}."
        )


def _check_speed(joint: HarmonicDriveJoint, speed: float) -> None:
    limit = math.pi * joint.sample_rate / joint.highest_order
    if speed >= limit:
        raise ValueError(
            f"Expected `speed` below {limit:.6g} rad/s (two samples per period of the joint's "
            f"highest transmission-error order {joint.highest_order:.4g} at "
            f"{joint.sample_rate:g} Hz), got {speed!r}."
        )


def _sample_count(joint: HarmonicDriveJoint, duration: float, names: str) -> int:
    """Samples of a run of `duration` seconds, refused beyond MAX_SAMPLES before any work."""
    samples = duration * joint.sample_rate + 1
    if not samples <= MAX_SAMPLES:
        raise ValueError(
            f"Expected {names} to give at most {MAX_SAMPLES:,} samples at "
            f"{joint.sample_rate:g} Hz, got {samples:.4g} ({duration:.4g} s)."
        )
    return int(round(duration * joint.sample_rate)) + 1


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

    Raises
    ------
    ValueError
        If `speed` or `revolutions` is not a finite positive number, `speed` reaches the Nyquist
        limit of the joint's highest transmission-error order (see :func:`simulate_run`), or the
        run would hold more than `MAX_SAMPLES` (1,000,000) samples:
        ``(settle_time + 2π revolutions / speed) * joint.sample_rate`` must stay below it (at the
        default 500 Hz, 31.4 rad/s and 3 s settling, about 9,980 revolutions).

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
    >>> spectrum = measure_run(run.motor_angle, readings=run.acceleration, orders=orders)
    >>> round(spectrum.amplitude(2.0), 1)
    1.6
    >>> from gravdir.kinematic_error import KinematicErrorModel
    >>> fix = KinematicErrorModel(orders, joint.cancelling_coefficients(orders))
    >>> fixed = constant_speed_run(joint, speed, 110, correction=fix)
    >>> spectrum = measure_run(fixed.motor_angle, readings=fixed.acceleration, orders=orders)
    >>> bool(spectrum.amplitude(2.0) < 0.01)
    True
    """
    _check_joint(joint)
    v = check_positive(speed, "speed")
    revs = check_positive(revolutions, "revolutions")
    settle = check_positive(settle_time, "settle_time", allow_zero=True)
    _check_speed(joint, v)
    n = _sample_count(
        joint, settle + 2 * math.pi * revs / v, "`settle_time`, `revolutions` and `speed`"
    )
    t = np.arange(n) / joint.sample_rate
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

    Raises
    ------
    ValueError
        If `speed`, `stroke_revolutions` or `ramp_time` is not a finite positive number,
        `ramp_time` is shorter than two sample periods, `strokes` is not an integer from 1 to
        10,000, `speed` reaches the Nyquist limit of the joint's highest transmission-error order,
        or the run would hold more than `MAX_SAMPLES` (1,000,000) samples.

    Examples
    --------
    Two strokes of three motor revolutions give one piece in each direction to
    :func:`gravdir.kinematic_error.measure_run`:

    >>> from gravdir.kinematic_error import measure_run
    >>> joint = HarmonicDriveJoint()
    >>> run = oscillating_run(joint, 10 * np.pi, 3.0, 2)
    >>> spectrum = measure_run(run.motor_angle, readings=run.acceleration, orders=[1.0, 2.0, 4.0])
    >>> spectrum.directions
    (1, -1)
    >>> bool(spectrum.amplitude(2.0) > spectrum.amplitude(1.0))
    True
    """
    _check_joint(joint)
    v = check_positive(speed, "speed")
    stroke = 2 * math.pi * check_positive(stroke_revolutions, "stroke_revolutions") / v
    ramp = check_positive(ramp_time, "ramp_time")
    count = check_count(strokes, "strokes", minimum=1, maximum=MAX_STROKES)
    if ramp < 2.0 / joint.sample_rate:
        raise ValueError(
            f"Expected `ramp_time` of at least two sample periods ({2.0 / joint.sample_rate:g} s), "
            f"got {ramp_time!r}."
        )
    _check_speed(joint, v)
    period = stroke + ramp
    n = _sample_count(
        joint,
        (count + 1) * period,
        "`stroke_revolutions`, `strokes`, `ramp_time` and `speed`",
    )
    t = np.arange(n) / joint.sample_rate
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
