"""Kinematic (transmission) error of a harmonic-drive joint, measured with an accelerometer.

Conventions. The circular spline is grounded and the flexspline is the output, so the output angle
is :math:`\\theta_o = \\theta_m/N + \\mathrm{TE}(\\theta_m)` with :math:`N = z_f/(z_c - z_f)`. A
correction :math:`u(\\theta_{cmd})` (radians of motor angle) is added to the motor command, the
output error becomes :math:`\\mathrm{TE} + u/N` and the cancelling correction is
:math:`u = -N\\,\\mathrm{TE}`. Orders are counted in cycles per motor revolution. A phasor
:math:`c_k` stands for the signal :math:`\\mathrm{Re}(c_k e^{i k \\theta_m})`.

The module offers the correction model (:class:`KinematicErrorModel`,
:func:`harmonic_drive_orders`),
the expected acceleration along a trajectory, the spectrum against motor angle
(:func:`order_spectrum`, :func:`measure_run`) and three tuners that turn recorded runs into the next
correction (:class:`SeedTuner`, :class:`RpropTuner`, :class:`InfluenceTuner`), each built on a pure
update function.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import (
    InsufficientDataError,
    check_array,
    check_option,
    check_positive,
    check_vectors,
)

__all__ = [
    "InfluenceTuner",
    "KinematicErrorModel",
    "OrderSpectrum",
    "PhasorResponse",
    "RpropTuner",
    "RpropUpdate",
    "RunSpectrum",
    "SeedTuner",
    "SeedUpdate",
    "TunerRun",
    "combine_axes",
    "expected_acceleration",
    "fit_phasor_response",
    "harmonic_drive_orders",
    "measure_run",
    "motor_speed_for_resonance",
    "moving_average_expected",
    "order_spectrum",
    "phasor_gradient",
    "rprop_update",
    "seed_update",
    "split_at_reversals",
]

STANDARD_GRAVITY = 9.80665
"""Standard gravity in m/s², the default magnitude of gravity."""


# --------------------------------------------------------------------------------------------
# Orders and the correction model
# --------------------------------------------------------------------------------------------


def _check_teeth(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"Expected `{name}` to be an integer number of teeth, got {value!r}.")
    if int(value) < 2:
        raise ValueError(f"Expected `{name}` to be at least 2 teeth, got {int(value)}.")
    return int(value)


def _check_multiples(value: ArrayLike, name: str) -> NDArray[np.float64]:
    arr = check_array(value, name)
    if arr.ndim != 1:
        raise ValueError(f"Expected `{name}` to be a 1-D sequence of integers, got {arr.ndim}-D.")
    if np.any(arr < 1) or np.any(arr != np.round(arr)):
        raise ValueError(f"Expected `{name}` to hold positive integers, got {arr.tolist()}.")
    return arr


def harmonic_drive_orders(
    flexspline_teeth: int,
    circular_spline_teeth: int,
    *,
    motor_multiples: ArrayLike = (1, 2, 4),
    flexspline_multiples: ArrayLike = (1, 2),
) -> NDArray[np.float64]:
    """List the orders (cycles per motor revolution) of a harmonic drive's correction basis.

    Parameters
    ----------
    flexspline_teeth : int
        Number of teeth :math:`z_f` of the flexspline.
    circular_spline_teeth : int
        Number of teeth :math:`z_c` of the circular spline; :math:`z_c > z_f`.
    motor_multiples : array_like of int, optional
        Integer orders :math:`k` (motor and wave-generator terms). Default ``(1, 2, 4)``.
    flexspline_multiples : array_like of int, optional
        Multiples :math:`l` of :math:`z_f/z_c` (flexspline terms). Default ``(1, 2)``.

    Returns
    -------
    ndarray, shape (k,)
        Sorted distinct orders: the integers :math:`k` and :math:`l\\,z_f/z_c`.

    Raises
    ------
    ValueError
        If a teeth count is not an integer ≥ 2, if :math:`z_c \\le z_f` (not a harmonic drive with a
        grounded circular spline), if the multiples are not positive integers, or if two orders
        coincide.

    Notes
    -----
    Seed claim 5: the correction is a weighted sum of :math:`\\sin, \\cos(k\\theta_m)` and
    :math:`\\sin, \\cos(l\\,\\theta_m z_f/z_c)`. With 200/202 teeth the order :math:`2 z_f/z_c`
    is 1.980, next to 2: a record separates them only over about :math:`1/0.0198 \\approx 51`
    motor revolutions (see :func:`order_spectrum`).

    References
    ----------
    Seed ``002_b03adbdaafcd6091.txt``, paragraphs 18-19 and claims 4-5.

    Examples
    --------
    >>> harmonic_drive_orders(200, 202).round(4)
    array([0.9901, 1.    , 1.9802, 2.    , 4.    ])
    """
    zf = _check_teeth(flexspline_teeth, "flexspline_teeth")
    zc = _check_teeth(circular_spline_teeth, "circular_spline_teeth")
    if zc <= zf:
        raise ValueError(
            "Expected `circular_spline_teeth` to exceed `flexspline_teeth` (a harmonic drive's "
            f"flexspline has fewer teeth), got {zc} and {zf}."
        )
    k = _check_multiples(motor_multiples, "motor_multiples")
    m = _check_multiples(flexspline_multiples, "flexspline_multiples")
    orders = np.concatenate([k, m * zf / zc])
    out = np.sort(orders)
    if np.any(np.diff(out) <= 1e-12):
        raise ValueError(
            f"Expected distinct orders, got a repeated order among {out.round(6).tolist()}."
        )
    return out


def _check_orders(orders: ArrayLike, name: str = "orders") -> NDArray[np.float64]:
    arr = check_array(orders, name)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"Expected `{name}` to be a non-empty 1-D array, got shape {arr.shape}.")
    if np.any(arr <= 0):
        raise ValueError(f"Expected `{name}` to be positive, got {arr.tolist()}.")
    srt = np.sort(arr)
    if np.any(np.diff(srt) <= 1e-12):
        raise ValueError(f"Expected `{name}` to be distinct, got {arr.tolist()}.")
    return arr


def _check_motor_angle(motor_angle: ArrayLike, name: str = "motor_angle") -> NDArray[np.float64]:
    return check_array(motor_angle, name)


@dataclass(frozen=True, eq=False)
class KinematicErrorModel:
    """A kinematic-error correction: a sum of sinusoids of the motor angle.

    .. math:: u(\\theta) = \\sum_k a_k \\cos(q_k\\theta) + b_k \\sin(q_k\\theta)
              = \\sum_k \\mathrm{Re}(c_k e^{i q_k \\theta}),\\quad c_k = a_k - i b_k

    Attributes
    ----------
    orders : ndarray, shape (k,)
        Orders :math:`q_k` in cycles per motor revolution.
    coefficients : ndarray, shape (k, 2)
        Columns :math:`(a_k, b_k)`: cosine and sine weights in radians of motor angle.

    Examples
    --------
    >>> m = KinematicErrorModel([2.0], [[0.01, 0.0]])
    >>> float(m.correction(0.0)), float(m.derivative(0.0))
    (0.01, 0.0)
    """

    orders: NDArray[np.float64]
    coefficients: NDArray[np.float64]

    def __init__(self, orders: ArrayLike, coefficients: ArrayLike) -> None:
        q = _check_orders(orders)
        c = check_array(coefficients, "coefficients", tail=(2,))
        if c.shape != (q.size, 2):
            raise ValueError(
                f"Expected `coefficients` to have shape ({q.size}, 2), got {tuple(c.shape)}."
            )
        q = q.copy()
        c = c.copy()
        q.setflags(write=False)
        c.setflags(write=False)
        object.__setattr__(self, "orders", q)
        object.__setattr__(self, "coefficients", c)

    @classmethod
    def zero(cls, orders: ArrayLike) -> KinematicErrorModel:
        """The null correction on `orders`."""
        q = _check_orders(orders)
        return cls(q, np.zeros((q.size, 2)))

    @classmethod
    def from_phasors(cls, orders: ArrayLike, phasors: ArrayLike) -> KinematicErrorModel:
        """Build from complex phasors :math:`c_k = a_k - i b_k`, shape (k,)."""
        p = np.asarray(phasors, dtype=np.complex128)
        if not np.all(np.isfinite(p)):
            raise ValueError("Expected `phasors` to be finite, got NaN or infinite value(s).")
        return cls(orders, np.stack([p.real, -p.imag], axis=-1))

    @property
    def phasors(self) -> NDArray[np.complex128]:
        """Complex phasors :math:`c_k = a_k - i b_k`, shape (k,)."""
        return self.coefficients[:, 0] - 1j * self.coefficients[:, 1]

    def correction(self, motor_angle: ArrayLike) -> NDArray[np.float64]:
        """Correction :math:`u(\\theta)` in radians of motor angle, same shape as `motor_angle`."""
        return self.derivative(motor_angle, 0)

    def derivative(self, motor_angle: ArrayLike, n: int = 1) -> NDArray[np.float64]:
        """The `n`-th derivative :math:`d^n u / d\\theta^n` (``n = 0`` is the correction itself).

        A velocity command is corrected by :math:`\\dot u = u'(\\theta)\\,\\dot\\theta`, an
        acceleration command by :math:`u''\\dot\\theta^2 + u'\\ddot\\theta`.
        """
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise ValueError(f"Expected `n` to be a non-negative integer, got {n!r}.")
        theta = _check_motor_angle(motor_angle)
        arg = theta[..., None] * self.orders
        # d^n/dθ^n Re(c e^{iqθ}) = Re(c (iq)^n e^{iqθ})
        factor = self.phasors * (1j * self.orders) ** int(n)
        return np.asarray(np.real(np.exp(1j * arg) @ factor), dtype=np.float64)

    def __repr__(self) -> str:
        amp = np.degrees(np.hypot(self.coefficients[:, 0], self.coefficients[:, 1]))
        terms = ", ".join(f"{q:.4g}: {a:.4g}°" for q, a in zip(self.orders, amp, strict=True))
        return f"KinematicErrorModel(order: amplitude of motor angle = {{{terms}}})"


def motor_speed_for_resonance(resonance_frequency: float, *, order: float = 2.0) -> float:
    """Motor speed (rad/s) that puts the component of `order` on a resonance.

    Parameters
    ----------
    resonance_frequency : float
        Resonance frequency of the arm in Hz (the lowest one is preferred).
    order : float, optional
        Order (cycles per motor revolution) to place on the resonance; the seed prefers 2.

    Returns
    -------
    float
        :math:`\\omega_m = 2\\pi f_r / q` in rad/s.

    Raises
    ------
    ValueError
        If either argument is not a finite positive number.

    References
    ----------
    Seed ``002_b03adbdaafcd6091.txt``, paragraph 20 and claim 6.

    Examples
    --------
    >>> round(motor_speed_for_resonance(10.0), 4)  # 5 rev/s
    31.4159
    """
    f = check_positive(resonance_frequency, "resonance_frequency")
    q = check_positive(order, "order")
    return 2.0 * math.pi * f / q


# --------------------------------------------------------------------------------------------
# Expected acceleration and the combination of axes
# --------------------------------------------------------------------------------------------


def expected_acceleration(
    output_angle: ArrayLike,
    output_velocity: ArrayLike,
    output_acceleration: ArrayLike,
    radius: float,
    up: ArrayLike,
    *,
    gravity: float = STANDARD_GRAVITY,
) -> NDArray[np.float64]:
    """Specific force felt by an accelerometer on a link turning about one joint.

    Parameters
    ----------
    output_angle, output_velocity, output_acceleration : array_like, shape (..., n)
        Commanded joint (output) angle :math:`\\psi`, rate and acceleration, in rad, rad/s, rad/s².
    radius : float
        Distance (m) from the joint axis to the sensor.
    up : array_like, shape (3,)
        Unit vector opposite to gravity in the joint frame: z along the joint axis, x toward the
        sensor at :math:`\\psi = 0`.
    gravity : float, optional
        Magnitude of gravity in m/s².

    Returns
    -------
    ndarray, shape (..., n, 3)
        Specific force :math:`f = a - g` in the sensor frame (x radial, y tangential, z along the
        axis), in m/s².

    Raises
    ------
    ValueError
        If the angles are not finite, their shapes do not broadcast, `radius` is not positive or
        `up` is not a unit 3-vector.

    Notes
    -----
    :math:`f = (-r\\dot\\psi^2,\\ r\\ddot\\psi,\\ 0) + g\\,R_z(\\psi)^\\top \\hat u`. This is the
    exact expected value along a known trajectory; :func:`moving_average_expected` is the seed's
    estimate for constant-speed runs.

    Examples
    --------
    >>> expected_acceleration(0.0, 1.0, 0.0, 0.5, [0, 0, 1]).round(4)
    array([-0.5   ,  0.    ,  9.8067])
    """
    psi = check_array(output_angle, "output_angle")
    w = check_array(output_velocity, "output_velocity")
    al = check_array(output_acceleration, "output_acceleration")
    try:
        psi, w, al = np.broadcast_arrays(psi, w, al)
    except ValueError:
        raise ValueError(
            "Expected `output_angle`, `output_velocity` and `output_acceleration` to broadcast, "
            f"got shapes {np.shape(psi)}, {np.shape(w)}, {np.shape(al)}."
        ) from None
    r = check_positive(radius, "radius")
    g = check_positive(gravity, "gravity")
    u = check_vectors(up, "up")
    if u.shape != (3,) or abs(float(np.linalg.norm(u)) - 1.0) > 1e-6:
        raise ValueError(f"Expected `up` to be one unit 3-vector, got {u.tolist()}.")
    c, s = np.cos(psi), np.sin(psi)
    fx = -r * w**2 + g * (c * u[0] + s * u[1])
    fy = r * al + g * (-s * u[0] + c * u[1])
    fz = np.broadcast_to(g * u[2], psi.shape)
    return np.stack([fx, fy, fz], axis=-1)


def combine_axes(
    acceleration: ArrayLike, *, method: Literal["norm", "sum_of_squares"] = "norm"
) -> NDArray[np.float64]:
    """Combine the three accelerometer axes into one rotation-invariant scalar.

    Parameters
    ----------
    acceleration : array_like, shape (..., 3)
        Acceleration vectors.
    method : {"norm", "sum_of_squares"}, optional
        :math:`|a|` (m/s²) or the seed's :math:`a_x^2 + a_y^2 + a_z^2` (m²/s⁴).

    Returns
    -------
    ndarray, shape (...)
        The scalar per sample.

    Raises
    ------
    ValueError
        If `acceleration` is not finite ``(..., 3)`` or `method` is unknown.

    Notes
    -----
    A vibration :math:`v` perpendicular to the static specific force :math:`g` changes the norm only
    to second order, :math:`|g + v| \\approx |g| + |v|^2/(2|g|)`: the scalar hides it. Prefer the
    deviation vector (measured minus expected) before any norm, as :func:`measure_run` does by
    default.

    References
    ----------
    Seed ``002_b03adbdaafcd6091.txt``, paragraph 21 and claim 7.

    Examples
    --------
    >>> combine_axes([[3.0, 4.0, 0.0]])
    array([5.])
    """
    a = check_vectors(acceleration, "acceleration")
    check_option(method, "method", ("norm", "sum_of_squares"))
    ss = np.sum(a * a, axis=-1)
    out: NDArray[np.float64] = np.sqrt(ss) if method == "norm" else ss
    return out


def _unwrap_monotonic(theta: NDArray[np.float64]) -> tuple[NDArray[np.float64], float]:
    """Return θ·sign so it increases, and the sign."""
    sign = 1.0 if theta[-1] >= theta[0] else -1.0
    return theta * sign, sign


def moving_average_expected(
    motor_angle: ArrayLike,
    signal: ArrayLike,
    *,
    window_revolutions: float = 1.0,
) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """The seed's expected value: a moving average of the signal over a motor-angle window.

    Parameters
    ----------
    motor_angle : array_like, shape (n,)
        Motor angle of a monotonic record (rad).
    signal : array_like, shape (n,) or (n, d)
        Recorded signal (one or `d` channels).
    window_revolutions : float, optional
        Window length in motor revolutions. One revolution removes every integer order exactly.

    Returns
    -------
    expected : ndarray, same shape as `signal`
        :math:`\\frac{1}{W}\\int_{\\theta-W/2}^{\\theta+W/2} s\\,d\\theta`
        (trapezoid rule, interpolated),
        computed where the whole window lies inside the record and held constant from the nearest
        such sample elsewhere.
    valid : ndarray of bool, shape (n,)
        Samples whose window lies inside the record. Use only these.

    Raises
    ------
    ValueError
        If the inputs are not finite, lengths differ, `motor_angle` is not monotonic, or the
        record is shorter than the window.

    Notes
    -----
    At constant speed the expected acceleration is constant or varies slowly with the joint angle
    (gravity), so the average over neighbouring samples estimates it (seed paragraph 17). Averaging
    over a motor-angle window rather than a sample count keeps it right when the sampling is
    uneven. A component of non-integer order :math:`q` leaks into the average with gain
    :math:`\\mathrm{sinc}(qW)` (for :math:`2z_f/z_c = 1.98` and :math:`W = 1`: −0.01); the slow
    gravity term is biased by about :math:`(2\\pi W/N)^2/24` of its amplitude.

    References
    ----------
    Seed ``002_b03adbdaafcd6091.txt``, paragraph 17.

    Examples
    --------
    >>> th = np.linspace(0, 6 * np.pi, 601)
    >>> e, ok = moving_average_expected(th, 1.0 + np.sin(th))
    >>> bool(np.allclose(e[ok], 1.0, atol=1e-3)), int(ok.sum())
    (True, 401)
    """
    theta = _check_motor_angle(motor_angle)
    s = check_array(signal, "signal")
    w = check_positive(window_revolutions, "window_revolutions")
    if theta.ndim != 1:
        raise ValueError(f"Expected `motor_angle` to have shape (n,), got {theta.shape}.")
    if s.ndim not in (1, 2) or s.shape[0] != theta.size:
        raise ValueError(
            f"Expected `signal` to have shape ({theta.size},) or ({theta.size}, d), got {s.shape}."
        )
    t, _ = _unwrap_monotonic(theta)
    if np.any(np.diff(t) < 0):
        raise ValueError("Expected `motor_angle` to be monotonic; split it at reversals first.")
    half = math.pi * w
    if t[-1] - t[0] < 2 * half:
        raise InsufficientDataError(
            f"Expected the record to cover at least `window_revolutions` = {w:g} revolutions, "
            f"got {(t[-1] - t[0]) / (2 * math.pi):.3g}."
        )
    s2 = s.reshape(theta.size, -1)
    dt = np.diff(t)[:, None]
    cum = np.concatenate([np.zeros((1, s2.shape[1])), np.cumsum(0.5 * dt * (s2[1:] + s2[:-1]), 0)])
    valid = (t - half >= t[0]) & (t + half <= t[-1])
    out = np.empty_like(s2)
    for j in range(s2.shape[1]):
        hi = np.interp(t + half, t, cum[:, j])
        lo = np.interp(t - half, t, cum[:, j])
        out[:, j] = (hi - lo) / (2 * half)
    idx = np.flatnonzero(valid)
    nearest = np.clip(np.arange(theta.size), idx[0], idx[-1])
    out = out[nearest]
    return out.reshape(s.shape), valid


# --------------------------------------------------------------------------------------------
# Spectrum against motor angle
# --------------------------------------------------------------------------------------------


def split_at_reversals(motor_angle: ArrayLike) -> tuple[slice, ...]:
    """Split a record at its reversals into monotonic pieces.

    Parameters
    ----------
    motor_angle : array_like, shape (n,)
        Motor angle (rad), for example of an oscillating trajectory.

    Returns
    -------
    tuple of slice
        Index ranges of the maximal monotonic pieces, in order. Samples where the angle stands
        still belong to the piece that contains them.

    Raises
    ------
    ValueError
        If `motor_angle` is not a finite 1-D array of at least two samples.

    Examples
    --------
    >>> split_at_reversals([0, 1, 2, 1, 0, 1])
    (slice(0, 3, None), slice(2, 5, None), slice(4, 6, None))
    """
    theta = _check_motor_angle(motor_angle)
    if theta.ndim != 1 or theta.size < 2:
        raise ValueError(f"Expected `motor_angle` to have shape (n,), n ≥ 2, got {theta.shape}.")
    d = np.sign(np.diff(theta))
    # carry the last non-zero direction over stationary samples
    nz = np.flatnonzero(d)
    if nz.size == 0:
        return (slice(0, theta.size),)
    fill = np.maximum.accumulate(np.where(d != 0, np.arange(d.size), -1))
    fill[fill < 0] = nz[0]
    d = d[fill]
    cuts = np.flatnonzero(d[1:] != d[:-1]) + 1  # index of the turning sample
    starts = np.concatenate([[0], cuts])
    stops = np.concatenate([cuts + 1, [theta.size]])
    return tuple(slice(int(a), int(b)) for a, b in zip(starts, stops, strict=True))


@dataclass(frozen=True, eq=False)
class OrderSpectrum:
    """Complex amplitudes of a signal at chosen orders of the motor angle.

    The signal is modelled as
    :math:`s(\\theta) \\approx m + \\sum_k \\mathrm{Re}(c_k e^{i q_k\\theta})`.

    Attributes
    ----------
    orders : ndarray, shape (k,)
        Orders :math:`q_k` (cycles per motor revolution).
    phasors : ndarray of complex, shape (..., k)
        :math:`c_k`; amplitude :math:`|c_k|`, phase :math:`\\arg c_k`.
    mean : ndarray, shape (...)
        Fitted constant :math:`m`.
    residual_rms : ndarray, shape (...)
        RMS of the fit residual, in the units of the signal.
    revolutions : float
        Motor revolutions spanned by the record.
    """

    orders: NDArray[np.float64]
    phasors: NDArray[np.complex128]
    mean: NDArray[np.float64]
    residual_rms: NDArray[np.float64]
    revolutions: float

    @property
    def amplitudes(self) -> NDArray[np.float64]:
        """:math:`|c_k|`, shape (..., k)."""
        return np.abs(self.phasors)

    def __repr__(self) -> str:
        amp = np.abs(self.phasors).reshape(-1, self.orders.size).max(axis=0)
        terms = ", ".join(f"{q:.4g}: {a:.3g}" for q, a in zip(self.orders, amp, strict=True))
        return (
            f"OrderSpectrum(revolutions={self.revolutions:.3g}, "
            f"largest amplitude per order = {{{terms}}})"
        )


def order_spectrum(
    motor_angle: ArrayLike,
    signal: ArrayLike,
    orders: ArrayLike,
    *,
    resolution: float = 1.0,
    min_samples_per_period: float = 2.5,
) -> OrderSpectrum:
    """Complex amplitudes of `signal` at `orders` of the motor angle, by least squares.

    Parameters
    ----------
    motor_angle : array_like, shape (n,)
        Motor angle of each sample (rad). A monotonic record is the intended use; split
        oscillating records with :func:`split_at_reversals` first.
    signal : array_like, shape (..., n)
        Signal samples; leading axes are batch axes (for example the three accelerometer axes).
    orders : array_like, shape (k,)
        Positive distinct orders, integer or not.
    resolution : float, optional
        Two orders closer than ``resolution / revolutions`` are reported as unresolved. Default 1:
        the Rayleigh limit of a record of that many revolutions.
    min_samples_per_period : float, optional
        The largest motor-angle step must give at least this many samples per period of the
        highest order (above the Nyquist limit of 2, with margin).

    Returns
    -------
    OrderSpectrum
        Phasors :math:`c_k` with :math:`s \\approx m + \\sum_k \\mathrm{Re}(c_k e^{i q_k \\theta})`.

    Raises
    ------
    ValueError
        If inputs are not finite, lengths differ, or orders are not positive and distinct.
    InsufficientDataError
        If the record spans less than one period of the lowest order, two orders are closer than
        the record resolves, the sampling is too coarse for the highest order, or the design
        matrix is rank deficient.

    Notes
    -----
    The fit solves :math:`s = m + \\sum_k a_k\\cos q_k\\theta + b_k\\sin q_k\\theta` by linear least
    squares on the samples, with :math:`c_k = a_k - i b_k`; no resampling or FFT bins are needed, so
    any order works. If the signal holds only the fitted orders the result is exact, whatever the
    record length. Components at other orders leak: with uniform sampling over :math:`R`
    revolutions, an unfitted component of amplitude :math:`A` at order :math:`p` moves
    :math:`c_k` by about :math:`A\\,|\\mathrm{sinc}(R(p-q_k))|`, at most
    :math:`A/(\\pi R |p - q_k|)`, and by nothing when :math:`R\\,p` and :math:`R\\,q_k` are both
    integers (whole periods). Orders closer than :math:`1/R` cannot be separated by any method and
    raise instead of being silently mixed.

    References
    ----------
    Seed ``002_b03adbdaafcd6091.txt``, paragraph 22 and claims 8-9.

    Examples
    --------
    >>> th = np.linspace(0, 2 * np.pi * 60, 24001)
    >>> s = 0.3 * np.cos(2 * th + 0.5) + 0.1 * np.cos(1.98 * th - 1.0)
    >>> sp = order_spectrum(th, s, [1.98, 2.0])
    >>> np.round(np.abs(sp.phasors), 9), np.round(np.angle(sp.phasors), 9)
    (array([0.1, 0.3]), array([-1. ,  0.5]))
    """
    theta = _check_motor_angle(motor_angle)
    s = check_array(signal, "signal", min_ndim=1)
    q = _check_orders(orders)
    res = check_positive(resolution, "resolution")
    mspp = check_positive(min_samples_per_period, "min_samples_per_period")
    if theta.ndim != 1:
        raise ValueError(f"Expected `motor_angle` to have shape (n,), got {theta.shape}.")
    if s.shape[-1] != theta.size:
        raise ValueError(
            f"Expected `signal` to have shape (..., {theta.size}) to match `motor_angle`, "
            f"got {s.shape}."
        )
    span = float(np.max(theta) - np.min(theta)) if theta.size else 0.0
    revs = span / (2 * math.pi)
    if revs * float(np.min(q)) < 1.0:
        raise InsufficientDataError(
            f"Expected the record to span at least one period of the lowest order "
            f"{float(np.min(q)):.4g} ({1 / float(np.min(q)):.4g} revolutions), got {revs:.4g}."
        )
    srt = np.sort(q)
    if srt.size > 1:
        gaps = np.diff(srt)
        i = int(np.argmin(gaps))
        if gaps[i] < res / revs:
            raise InsufficientDataError(
                f"Expected orders at least {res / revs:.4g} apart for a record of {revs:.4g} "
                f"revolutions, got {srt[i]:.6g} and {srt[i + 1]:.6g} ({gaps[i]:.4g} apart); "
                f"resolving them needs about {res / gaps[i]:.4g} revolutions."
            )
    step = float(np.max(np.abs(np.diff(theta))))
    if step * float(np.max(q)) > 2 * math.pi / mspp:
        raise InsufficientDataError(
            f"Expected at least {mspp:g} samples per period of order {float(np.max(q)):.4g}, got a "
            f"motor-angle step of {step:.3g} rad ({2 * math.pi / (step * float(np.max(q))):.3g} "
            "samples per period)."
        )
    # centre the angle: better conditioning, and phases are corrected below
    t0 = 0.5 * (float(np.max(theta)) + float(np.min(theta)))
    arg = (theta - t0)[:, None] * q
    x = np.concatenate([np.ones((theta.size, 1)), np.cos(arg), np.sin(arg)], axis=1)
    if theta.size < x.shape[1]:
        raise InsufficientDataError(
            f"Expected at least {x.shape[1]} samples for {q.size} orders, got {theta.size}."
        )
    y = s.reshape(-1, theta.size).T
    coef, _, rank, _ = np.linalg.lstsq(x, y, rcond=None)
    if rank < x.shape[1]:
        raise InsufficientDataError(
            f"Expected the samples to determine all {x.shape[1]} terms, got rank {rank}."
        )
    resid = y - x @ coef
    k = q.size
    ph = (coef[1 : 1 + k] - 1j * coef[1 + k :]) * np.exp(-1j * q * t0)[:, None]
    batch = s.shape[:-1]
    return OrderSpectrum(
        orders=q.copy(),
        phasors=ph.T.reshape(*batch, k),
        mean=coef[0].reshape(batch),
        residual_rms=np.sqrt(np.mean(resid**2, axis=0)).reshape(batch),
        revolutions=revs,
    )


@dataclass(frozen=True, eq=False)
class RunSpectrum:
    """Deviation phasors of one run, per direction of motion and channel.

    Attributes
    ----------
    orders : ndarray, shape (k,)
        Orders (cycles per motor revolution).
    phasors : ndarray of complex, shape (d, ch, k)
        Phasor of the deviation (measured minus expected) for each direction present (d = 1 or 2),
        channel (3 for the deviation vector, 1 for the scalar) and order.
    directions : tuple of int
        +1 (motor angle increasing) or −1 for each row of `phasors`.
    revolutions : ndarray, shape (d,)
        Motor revolutions used per direction.
    """

    orders: NDArray[np.float64]
    phasors: NDArray[np.complex128]
    directions: tuple[int, ...]
    revolutions: NDArray[np.float64]

    def amplitude(self, order: float | None = 2.0) -> float:
        """Deviation amplitude at `order` (m/s²), or the largest over all orders if None.

        The amplitude is the root-sum-square over channels, averaged in power over directions.
        """
        per = np.sqrt(np.mean(np.sum(np.abs(self.phasors) ** 2, axis=1), axis=0))
        if order is None:
            return float(np.max(per))
        i = _order_index(self.orders, order)
        return float(per[i])

    @property
    def objective(self) -> float:
        """:math:`J = \\sum |Y|^2` over directions, channels and orders."""
        return float(np.sum(np.abs(self.phasors) ** 2))

    def __repr__(self) -> str:
        per = np.sqrt(np.mean(np.sum(np.abs(self.phasors) ** 2, axis=1), axis=0))
        terms = ", ".join(f"{q:.4g}: {a:.3g}" for q, a in zip(self.orders, per, strict=True))
        return f"RunSpectrum(directions={self.directions}, amplitude m/s² = {{{terms}}})"


def _order_index(orders: NDArray[np.float64], order: float, name: str = "order") -> int:
    i = int(np.argmin(np.abs(orders - order)))
    if abs(orders[i] - order) > 1e-9:
        raise ValueError(
            f"Expected `{name}` to be one of {orders.round(6).tolist()}, got {order!r}."
        )
    return i


def measure_run(
    motor_angle: ArrayLike,
    acceleration: ArrayLike,
    orders: ArrayLike,
    *,
    expected: ArrayLike | None = None,
    combine: Literal["vector", "norm"] = "vector",
    trim_revolutions: float = 0.0,
    window_revolutions: float = 1.0,
    resolution: float = 1.0,
) -> RunSpectrum:
    """Deviation spectrum of one run: split, subtract the expected value, fit the orders.

    Parameters
    ----------
    motor_angle : array_like, shape (n,)
        Measured motor angle (rad); may reverse.
    acceleration : array_like, shape (n, 3)
        Recorded accelerometer vectors (m/s²).
    orders : array_like, shape (k,)
        Orders of the correction model.
    expected : array_like, shape (n, 3), optional
        Exact expected acceleration (for example :func:`expected_acceleration` of the commanded
        trajectory). If omitted, the seed's moving average over `window_revolutions` is used
        within each monotonic piece.
    combine : {"vector", "norm"}, optional
        ``"vector"`` (default) fits the three components of the deviation vector; ``"norm"`` fits
        the seed's scalar :math:`|a| - \\overline{|a|}`, blind to vibration perpendicular to
        gravity.
    trim_revolutions : float, optional
        Motor revolutions dropped at both ends of every monotonic piece (reversal transients).
    window_revolutions : float, optional
        Moving-average window, see :func:`moving_average_expected`.
    resolution : float, optional
        See :func:`order_spectrum`.

    Returns
    -------
    RunSpectrum
        Phasors per direction present, channel and order.

    Raises
    ------
    ValueError
        If shapes mismatch, inputs are not finite, or `combine` is unknown.
    InsufficientDataError
        If no direction has a piece long enough for the orders (see :func:`order_spectrum`).

    Notes
    -----
    Pieces of the same direction are fitted jointly (their samples concatenated): at the same speed
    the response to a given correction is the same. The two directions are kept apart because the
    response of a vibration mode to order :math:`q` at speed :math:`-\\omega` is the complex
    conjugate of that at :math:`+\\omega`.

    Examples
    --------
    >>> th = np.linspace(0, 2 * np.pi * 12, 4801)
    >>> acc = np.zeros((th.size, 3))
    >>> acc[:, 1] = 0.2 * np.cos(2 * th)
    >>> run = measure_run(th, acc, [1.0, 2.0])
    >>> round(run.amplitude(2.0), 6)
    0.2
    """
    theta = _check_motor_angle(motor_angle)
    acc = check_vectors(acceleration, "acceleration")
    q = _check_orders(orders)
    check_option(combine, "combine", ("vector", "norm"))
    trim = check_positive(trim_revolutions, "trim_revolutions", allow_zero=True)
    if theta.ndim != 1:
        raise ValueError(f"Expected `motor_angle` to have shape (n,), got {theta.shape}.")
    if acc.shape != (theta.size, 3):
        raise ValueError(
            f"Expected `acceleration` to have shape ({theta.size}, 3), got {acc.shape}."
        )
    exp_arr: NDArray[np.float64] | None = None
    if expected is not None:
        exp_arr = check_vectors(expected, "expected")
        if exp_arr.shape != acc.shape:
            raise ValueError(f"Expected `expected` to have shape {acc.shape}, got {exp_arr.shape}.")
    pieces: dict[int, tuple[list[NDArray[np.float64]], list[NDArray[np.float64]]]] = {}
    for sl in split_at_reversals(theta):
        th = theta[sl]
        a = acc[sl]
        sig = combine_axes(a)[:, None] if combine == "norm" else a
        if exp_arr is not None:
            e = exp_arr[sl]
            ref = combine_axes(e)[:, None] if combine == "norm" else e
            ok = np.ones(th.size, dtype=bool)
        else:
            span = abs(th[-1] - th[0]) / (2 * math.pi)
            if span < window_revolutions + 2 * trim:
                continue
            ref, ok = moving_average_expected(th, sig, window_revolutions=window_revolutions)
        t, sign = _unwrap_monotonic(th)
        if trim > 0:
            ok &= (t - t[0] >= 2 * math.pi * trim) & (t[-1] - t >= 2 * math.pi * trim)
        if np.count_nonzero(ok) < 2:
            continue
        dev = sig - ref
        lst = pieces.setdefault(int(sign), ([], []))
        lst[0].append(th[ok])
        lst[1].append(dev[ok])
    if not pieces:
        raise InsufficientDataError(
            "Expected at least one monotonic piece longer than the moving-average window plus "
            f"trims ({window_revolutions + 2 * trim:g} revolutions), got none."
        )
    phs = []
    revs = []
    dirs = []
    for sign in sorted(pieces, reverse=True):
        th_all = np.concatenate(pieces[sign][0])
        dev_all = np.concatenate(pieces[sign][1])
        sp = order_spectrum(th_all, dev_all.T, q, resolution=resolution)
        phs.append(sp.phasors)
        revs.append(sum(abs(p[-1] - p[0]) for p in pieces[sign][0]) / (2 * math.pi))
        dirs.append(sign)
    return RunSpectrum(
        orders=q.copy(),
        phasors=np.stack(phs),
        directions=tuple(dirs),
        revolutions=np.asarray(revs, dtype=np.float64),
    )


# --------------------------------------------------------------------------------------------
# Update rules (pure functions)
# --------------------------------------------------------------------------------------------


def _check_coefficient_like(x: ArrayLike, name: str, shape: tuple[int, ...]) -> NDArray[np.float64]:
    arr = check_array(x, name)
    if arr.shape != shape:
        raise ValueError(f"Expected `{name}` to have shape {shape}, got {arr.shape}.")
    return arr


def phasor_gradient(response: ArrayLike, deviation: ArrayLike) -> NDArray[np.float64]:
    """Gradient of :math:`J = \\sum |Y|^2` with respect to the correction coefficients.

    Parameters
    ----------
    response : array_like of complex, shape (m, k)
        :math:`g_k`: deviation phasor per unit correction phasor, for each of `m` channels (all
        directions and axes flattened) and each order.
    deviation : array_like of complex, shape (m, k)
        Measured deviation phasors :math:`Y_k` at the current correction.

    Returns
    -------
    ndarray, shape (k, 2)
        :math:`(\\partial J/\\partial a_k, \\partial J/\\partial b_k)`.

    Raises
    ------
    ValueError
        If the shapes differ or values are not finite.

    Notes
    -----
    With :math:`Y_k = g_k c_k + y_k`, :math:`c_k = a_k - i b_k`:
    :math:`\\partial J/\\partial a_k = 2\\,\\mathrm{Re}(Y_k^H g_k)` and
    :math:`\\partial J/\\partial b_k = 2\\,\\mathrm{Im}(Y_k^H g_k)`.

    Examples
    --------
    >>> phasor_gradient([[2.0 + 0j]], [[1.0 + 0j]])
    array([[4., 0.]])
    """
    g = np.asarray(response, dtype=np.complex128)
    y = np.asarray(deviation, dtype=np.complex128)
    if g.ndim != 2 or g.shape != y.shape:
        raise ValueError(
            f"Expected `response` and `deviation` of one shape (m, k), got {g.shape}, {y.shape}."
        )
    if not (np.all(np.isfinite(g)) and np.all(np.isfinite(y))):
        raise ValueError("Expected `response` and `deviation` to be finite, got NaN or infinity.")
    z = np.sum(np.conj(y) * g, axis=0)
    return np.stack([2 * z.real, 2 * z.imag], axis=-1)


@dataclass(frozen=True, eq=False)
class PhasorResponse:
    """Linear phasor model :math:`Y_k = g_k (c_k - c_k^*)` identified from runs.

    Attributes
    ----------
    response : ndarray of complex, shape (m, k)
        :math:`g_k` per channel and order.
    offset : ndarray of complex, shape (m, k)
        :math:`y_k = -g_k c_k^*`, the deviation with no correction.
    optimum : ndarray of complex, shape (k,)
        :math:`c_k^*`, the correction phasors that minimise :math:`\\sum|Y_k|^2`.
    """

    response: NDArray[np.complex128]
    offset: NDArray[np.complex128]
    optimum: NDArray[np.complex128]


def fit_phasor_response(corrections: ArrayLike, deviations: ArrayLike) -> PhasorResponse:
    """Identify :math:`Y_k = g_k c_k + y_k` per order from runs at different corrections.

    Parameters
    ----------
    corrections : array_like of complex, shape (r, k)
        Correction phasors :math:`c_k` of `r` runs.
    deviations : array_like of complex, shape (r, m, k)
        Deviation phasors measured in those runs, `m` channels.

    Returns
    -------
    PhasorResponse
        :math:`g_k`, :math:`y_k` and the optimum :math:`c_k^* = -g_k^H y_k / g_k^H g_k`.

    Raises
    ------
    ValueError
        If shapes disagree or values are not finite.
    InsufficientDataError
        If some order was not varied between runs (fewer than two distinct corrections).

    Notes
    -----
    At constant speed the joint and link are linear and time-invariant in the small, so a
    correction :math:`\\mathrm{Re}(c e^{iq\\theta})` produces a deviation
    :math:`\\mathrm{Re}(g c\\,e^{iq\\theta})` at the same order: :math:`g_k` is a complex number per
    channel (its magnitude and phase are the transfer function of the arm at that frequency). Two
    runs with different :math:`c_k` determine it; more runs are fitted by least squares.

    Examples
    --------
    >>> c = np.array([[0.0], [1.0]])
    >>> y = np.array([[[2.0 + 1j]], [[3.0 + 1j]]])
    >>> fit = fit_phasor_response(c, y)
    >>> bool(np.isclose(fit.response[0, 0], 1.0)), bool(np.isclose(fit.optimum[0], -2 - 1j))
    (True, True)
    """
    c = np.asarray(corrections, dtype=np.complex128)
    y = np.asarray(deviations, dtype=np.complex128)
    if c.ndim != 2 or y.ndim != 3 or y.shape[0] != c.shape[0] or y.shape[2] != c.shape[1]:
        raise ValueError(
            "Expected `corrections` of shape (r, k) and `deviations` of shape (r, m, k), "
            f"got {c.shape} and {y.shape}."
        )
    if not (np.all(np.isfinite(c)) and np.all(np.isfinite(y))):
        raise ValueError("Expected `corrections` and `deviations` to be finite.")
    r, m, k = y.shape
    g = np.empty((m, k), dtype=np.complex128)
    y0 = np.empty((m, k), dtype=np.complex128)
    for j in range(k):
        cj = c[:, j]
        spread = float(np.max(np.abs(cj - cj.mean()))) if r else 0.0
        scale = max(float(np.max(np.abs(cj))), 1e-300)
        if r < 2 or spread <= 1e-9 * scale or spread == 0.0:
            raise InsufficientDataError(
                f"Expected at least two runs with different corrections at order index {j}, "
                f"got {r} run(s) with a spread of {spread:.3g}."
            )
        x = np.stack([cj, np.ones(r)], axis=1)
        sol, *_ = np.linalg.lstsq(x, y[:, :, j], rcond=None)
        g[:, j], y0[:, j] = sol[0], sol[1]
    gg = np.sum(np.abs(g) ** 2, axis=0)
    opt = -np.sum(np.conj(g) * y0, axis=0) / gg
    return PhasorResponse(response=g, offset=y0, optimum=opt)


@dataclass(frozen=True, eq=False)
class SeedUpdate:
    """Result of :func:`seed_update`: the new coefficients and scalar factor."""

    coefficients: NDArray[np.float64]
    factor: float


def seed_update(
    coefficients: ArrayLike,
    gradient: ArrayLike,
    previous_gradient: ArrayLike | None,
    factor: float,
    *,
    grow: float = 1.2,
    shrink: float = 0.5,
) -> SeedUpdate:
    """One step of the seed's rule: gradient times one scalar factor, adapted by sign changes.

    Parameters
    ----------
    coefficients : array_like, shape (k, 2)
        Current coefficients (rad).
    gradient : array_like, shape (k, 2)
        Gradient of the deviation measure at `coefficients`.
    previous_gradient : array_like, shape (k, 2), or None
        Gradient of the previous step; None on the first step (the factor is kept).
    factor : float
        Current scalar factor (positive).
    grow, shrink : float, optional
        Multipliers applied when no component changed sign (``grow`` > 1) and when one did
        (``0 < shrink`` < 1). The defaults are those of iRprop, the well-known relative.

    Returns
    -------
    SeedUpdate
        ``coefficients - factor' * gradient`` and the adapted ``factor'``.

    Raises
    ------
    ValueError
        If shapes differ, values are not finite, or the factors are out of range.

    Notes
    -----
    Seed paragraphs 24-26 and claims 11-12: a steady gradient direction (no component changes
    sign) means the optimum is still far, so the factor grows; a sign change means it was
    overshot, so the factor shrinks ("bold driver" rule). The step descends, i.e. the gradient
    times the factor is subtracted.

    Examples
    --------
    >>> up = seed_update([[0.0, 0.0]], [[1.0, -1.0]], [[1.0, -2.0]], 0.1)
    >>> up.coefficients.round(3), round(up.factor, 3)
    (array([[-0.12,  0.12]]), 0.12)
    """
    c = check_array(coefficients, "coefficients", tail=(2,))
    g = _check_coefficient_like(gradient, "gradient", c.shape)
    f = check_positive(factor, "factor")
    gr = check_positive(grow, "grow")
    sh = check_positive(shrink, "shrink")
    if gr <= 1.0 or sh >= 1.0:
        raise ValueError(f"Expected `grow` > 1 and `shrink` < 1, got {gr!r} and {sh!r}.")
    if previous_gradient is not None:
        p = _check_coefficient_like(previous_gradient, "previous_gradient", c.shape)
        f = f * (sh if np.any(g * p < 0) else gr)
    return SeedUpdate(coefficients=c - f * g, factor=f)


@dataclass(frozen=True, eq=False)
class RpropUpdate:
    """Result of :func:`rprop_update`: coefficients, gradient memory and step sizes."""

    coefficients: NDArray[np.float64]
    gradient: NDArray[np.float64]
    step_sizes: NDArray[np.float64]


def rprop_update(
    coefficients: ArrayLike,
    gradient: ArrayLike,
    previous_gradient: ArrayLike | None,
    step_sizes: ArrayLike,
    *,
    eta_plus: float = 1.2,
    eta_minus: float = 0.5,
    step_min: float = 1e-7,
    step_max: float = 0.05,
) -> RpropUpdate:
    """One iRprop− step: per-coefficient step sizes driven by gradient signs only.

    Parameters
    ----------
    coefficients : array_like, shape (k, 2)
        Current coefficients (rad of motor angle).
    gradient : array_like, shape (k, 2)
        Gradient at `coefficients`.
    previous_gradient : array_like, shape (k, 2), or None
        The gradient memory returned by the previous step (None on the first).
    step_sizes : array_like, shape (k, 2)
        Current step sizes (rad of motor angle).
    eta_plus, eta_minus : float, optional
        Growth and shrink factors; 1.2 and 0.5 are the published iRprop− values.
    step_min, step_max : float, optional
        Bounds of the step sizes in radians of motor angle. The default cap of 0.05 rad exceeds
        :math:`N` times a typical harmonic-drive kinematic error (about 1e-4 rad at the output,
        :math:`N \\approx 100`).

    Returns
    -------
    RpropUpdate
        New coefficients, the gradient to remember (zeroed where the sign changed) and step sizes.

    Raises
    ------
    ValueError
        If shapes differ, values are not finite or options are out of range.

    Notes
    -----
    iRprop− (Igel and Hüsken, 2000): where :math:`g_i g_i^{prev} > 0` the step grows by
    :math:`\\eta^+`, where :math:`< 0` it shrinks by :math:`\\eta^-` and :math:`g_i` is set to 0 (no
    move this step), then :math:`x_i \\leftarrow x_i - \\mathrm{sign}(g_i)\\Delta_i`.

    References
    ----------
    C. Igel and M. Hüsken, "Improving the Rprop learning algorithm", NC 2000.

    Examples
    --------
    >>> up = rprop_update([[0.0, 0.0]], [[1.0, -1.0]], [[1.0, 1.0]], [[0.1, 0.1]], step_max=1.0)
    >>> up.coefficients.round(3), up.step_sizes.round(3)
    (array([[-0.12,  0.  ]]), array([[0.12, 0.05]]))
    """
    c = check_array(coefficients, "coefficients", tail=(2,))
    g = _check_coefficient_like(gradient, "gradient", c.shape).copy()
    d = _check_coefficient_like(step_sizes, "step_sizes", c.shape)
    ep = check_positive(eta_plus, "eta_plus")
    em = check_positive(eta_minus, "eta_minus")
    lo = check_positive(step_min, "step_min")
    hi = check_positive(step_max, "step_max")
    if ep <= 1.0 or em >= 1.0 or lo > hi:
        raise ValueError(
            "Expected `eta_plus` > 1, `eta_minus` < 1 and `step_min` ≤ `step_max`, got "
            f"{ep!r}, {em!r}, {lo!r}, {hi!r}."
        )
    if previous_gradient is not None:
        p = _check_coefficient_like(previous_gradient, "previous_gradient", c.shape)
        prod = g * p
        d = np.where(
            prod > 0, np.minimum(d * ep, hi), np.where(prod < 0, np.maximum(d * em, lo), d)
        )
        g = np.where(prod < 0, 0.0, g)
    return RpropUpdate(coefficients=c - np.sign(g) * d, gradient=g, step_sizes=d)


# --------------------------------------------------------------------------------------------
# Stateful tuners
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class TunerRun:
    """One run seen by a tuner: the correction it used and what was measured."""

    model: KinematicErrorModel
    spectrum: RunSpectrum
    kind: str  # "base", "trial" or "probe"


@dataclass
class _TunerBase:
    orders: NDArray[np.float64]
    threshold: float | None
    threshold_order: float | None
    gradient: str
    trial_amplitude: float
    combine: Literal["vector", "norm"]
    trim_revolutions: float
    window_revolutions: float
    model: KinematicErrorModel
    history: list[TunerRun] = field(default_factory=list)
    _next_kind: str = "base"
    _probes: list[KinematicErrorModel] = field(default_factory=list)
    _probe_values: list[float] = field(default_factory=list)
    _base: TunerRun | None = None
    _converged: bool = False


class _Tuner:
    """Shared machinery of the stateful tuners."""

    def __init__(
        self,
        orders: ArrayLike,
        *,
        initial: KinematicErrorModel | None,
        threshold: float | None,
        threshold_order: float | None,
        gradient: str,
        trial_amplitude: float,
        combine: Literal["vector", "norm"],
        trim_revolutions: float,
        window_revolutions: float,
    ) -> None:
        q = _check_orders(orders)
        if initial is None:
            initial = KinematicErrorModel.zero(q)
        elif initial.orders.shape != q.shape or not np.allclose(initial.orders, q):
            raise ValueError(
                f"Expected `initial` on orders {q.round(6).tolist()}, "
                f"got {initial.orders.round(6).tolist()}."
            )
        if threshold is not None:
            threshold = check_positive(threshold, "threshold")
        if threshold_order is not None:
            _order_index(q, threshold_order, "threshold_order")
        check_option(gradient, "gradient", ("phasor", "perturbation"))
        check_option(combine, "combine", ("vector", "norm"))
        self._s = _TunerBase(
            orders=q,
            threshold=threshold,
            threshold_order=threshold_order,
            gradient=gradient,
            trial_amplitude=check_positive(trial_amplitude, "trial_amplitude"),
            combine=combine,
            trim_revolutions=check_positive(trim_revolutions, "trim_revolutions", allow_zero=True),
            window_revolutions=check_positive(window_revolutions, "window_revolutions"),
            model=initial,
        )

    # public state ---------------------------------------------------------------------------
    @property
    def orders(self) -> NDArray[np.float64]:
        """Orders of the correction model."""
        return self._s.orders

    @property
    def model(self) -> KinematicErrorModel:
        """The correction to apply in the next run."""
        return self._s.model

    @property
    def runs(self) -> int:
        """Number of runs measured so far (trial and probe runs included)."""
        return len(self._s.history)

    @property
    def history(self) -> tuple[TunerRun, ...]:
        """Every run measured so far."""
        return tuple(self._s.history)

    @property
    def amplitudes(self) -> NDArray[np.float64]:
        """Deviation amplitude at the threshold order of every run (m/s²)."""
        o = self._s.threshold_order
        return np.array([h.spectrum.amplitude(o) for h in self._s.history])

    @property
    def converged(self) -> bool:
        """True once a run's amplitude at the threshold order fell to the threshold."""
        return self._s._converged

    @property
    def best(self) -> KinematicErrorModel:
        """The correction of the run with the smallest amplitude at the threshold order."""
        if not self._s.history:
            return self._s.model
        return self._s.history[int(np.argmin(self.amplitudes))].model

    # the loop -------------------------------------------------------------------------------
    def step(
        self,
        motor_angle: ArrayLike,
        acceleration: ArrayLike,
        expected: ArrayLike | None = None,
    ) -> KinematicErrorModel:
        """Record a run made with :attr:`model` and return the correction for the next run.

        Parameters
        ----------
        motor_angle : array_like, shape (n,)
            Measured motor angle of the run (rad).
        acceleration : array_like, shape (n, 3)
            Recorded accelerometer vectors (m/s²).
        expected : array_like, shape (n, 3), optional
            Exact expected acceleration; the moving average is used if omitted.

        Returns
        -------
        KinematicErrorModel
            The correction for the next run (unchanged once converged).
        """
        s = self._s
        spec = measure_run(
            motor_angle,
            acceleration,
            s.orders,
            expected=expected,
            combine=s.combine,
            trim_revolutions=s.trim_revolutions,
            window_revolutions=s.window_revolutions,
        )
        if s.history and spec.directions != s.history[0].spectrum.directions:
            raise ValueError(
                f"Expected runs with directions {s.history[0].spectrum.directions}, "
                f"got {spec.directions}."
            )
        run = TunerRun(model=s.model, spectrum=spec, kind=s._next_kind)
        s.history.append(run)
        if s._converged:
            return s.model
        if s.threshold is not None and spec.amplitude(s.threshold_order) <= s.threshold:
            s._converged = True
            return s.model
        s.model = self._advance(run)
        return s.model

    def _deviation(self, run: TunerRun) -> NDArray[np.complex128]:
        ph = run.spectrum.phasors
        return ph.reshape(-1, ph.shape[-1])

    def _phasor_fit(self) -> PhasorResponse:
        h = self._s.history
        c = np.stack([r.model.phasors for r in h])
        y = np.stack([self._deviation(r) for r in h])
        return fit_phasor_response(c, y)

    def _needs_trial(self) -> bool:
        h = self._s.history
        if len(h) < 2:
            return True
        c = np.stack([r.model.phasors for r in h])
        return bool(np.any(np.max(np.abs(c - c[0]), axis=0) == 0.0))

    def _trial(self, base: KinematicErrorModel) -> KinematicErrorModel:
        self._s._next_kind = "trial"
        coef = base.coefficients.copy()
        coef[:, 0] += self._s.trial_amplitude
        return KinematicErrorModel(self._s.orders, coef)

    def _gradient(self, run: TunerRun) -> NDArray[np.float64] | KinematicErrorModel:
        """Gradient at the run's correction, or the next probe/trial run to make first."""
        s = self._s
        if s.gradient == "phasor":
            if self._needs_trial():
                return self._trial(run.model)
            fit = self._phasor_fit()
            return phasor_gradient(fit.response, self._deviation(run))
        # perturbation: forward differences of J, one probe run per coefficient
        if run.kind != "probe":
            s._base = run
            s._probe_values = []
            s._probes = []
            for j in range(s.orders.size * 2):
                coef = run.model.coefficients.copy()
                coef.flat[j] += s.trial_amplitude
                s._probes.append(KinematicErrorModel(s.orders, coef))
        else:
            s._probe_values.append(run.spectrum.objective)
        if len(s._probe_values) < len(s._probes):
            s._next_kind = "probe"
            return s._probes[len(s._probe_values)]
        if s._base is None:  # the probes are always queued after a base run
            raise RuntimeError("probe results arrived without a base run")
        j0 = s._base.spectrum.objective
        grad = (np.asarray(s._probe_values) - j0) / s.trial_amplitude
        return grad.reshape(s.orders.size, 2)

    def _base_model(self) -> KinematicErrorModel:
        s = self._s
        if s.gradient == "perturbation" and s._base is not None:
            return s._base.model
        return s.history[-1].model

    def _advance(self, run: TunerRun) -> KinematicErrorModel:
        raise NotImplementedError


class SeedTuner(_Tuner):
    """The seed's tuner: gradient times one scalar factor adapted by sign changes.

    Parameters
    ----------
    orders : array_like, shape (k,)
        Orders of the correction (e.g. from :func:`harmonic_drive_orders`).
    initial : KinematicErrorModel, optional
        Correction of the first run (zero by default).
    threshold : float, optional
        Stop once the deviation amplitude at `threshold_order` is at most this (m/s²).
    threshold_order : float or None, optional
        Order judged by the stop rule (2 by default, the seed's choice); None means every order.
    gradient : {"phasor", "perturbation"}, optional
        ``"phasor"``: from the linear phasor model fitted to all runs so far (one run per step
        after one trial run). ``"perturbation"``: forward differences of :math:`J`, costing
        :math:`2k` probe runs per step.
    trial_amplitude : float, optional
        Size (rad of motor angle) of the trial and probe changes. The default 2e-3 rad is about a
        fifth of :math:`N` times a typical harmonic-drive kinematic error.
    initial_step : float, optional
        Length (rad) of the largest component of the first gradient step; fixes the initial factor.
    grow, shrink : float, optional
        See :func:`seed_update`.
    combine, trim_revolutions, window_revolutions : optional
        See :func:`measure_run`.

    Notes
    -----
    Each call of :meth:`step` records the run made with :attr:`model` and returns the correction for
    the next one, which may be a trial or probe run. The pure update is :func:`seed_update`.

    References
    ----------
    Seed ``002_b03adbdaafcd6091.txt``, paragraphs 23-26 and claims 10-12.

    Examples
    --------
    Tune a simulated 200/202-tooth drive turning so that order 2 excites the 10 Hz link mode.
    The first run is uncorrected, the second a trial run, the third the first gradient step:

    >>> from gravdir.synthetic.harmonic_drive import HarmonicDriveJoint, constant_speed_run
    >>> joint = HarmonicDriveJoint()
    >>> orders = harmonic_drive_orders(joint.flexspline_teeth, joint.circular_spline_teeth)
    >>> speed = motor_speed_for_resonance(joint.natural_frequency)
    >>> tuner = SeedTuner(orders)
    >>> for _ in range(3):
    ...     run = constant_speed_run(joint, speed, 110, correction=tuner.model)
    ...     _ = tuner.step(run.motor_angle, run.acceleration)
    >>> [r.kind for r in tuner.history]
    ['base', 'trial', 'base']
    >>> bool(tuner.amplitudes[-1] < 0.8 * tuner.amplitudes[0]), tuner.factor is not None
    (True, True)
    """

    def __init__(
        self,
        orders: ArrayLike,
        *,
        initial: KinematicErrorModel | None = None,
        threshold: float | None = None,
        threshold_order: float | None = 2.0,
        gradient: Literal["phasor", "perturbation"] = "phasor",
        trial_amplitude: float = 2e-3,
        initial_step: float = 2e-3,
        grow: float = 1.2,
        shrink: float = 0.5,
        combine: Literal["vector", "norm"] = "vector",
        trim_revolutions: float = 0.0,
        window_revolutions: float = 1.0,
    ) -> None:
        super().__init__(
            orders,
            initial=initial,
            threshold=threshold,
            threshold_order=threshold_order,
            gradient=gradient,
            trial_amplitude=trial_amplitude,
            combine=combine,
            trim_revolutions=trim_revolutions,
            window_revolutions=window_revolutions,
        )
        self._initial_step = check_positive(initial_step, "initial_step")
        self._grow = grow
        self._shrink = shrink
        self._factor: float | None = None
        self._previous: NDArray[np.float64] | None = None

    @property
    def factor(self) -> float | None:
        """Current scalar factor (None before the first gradient step)."""
        return self._factor

    def _advance(self, run: TunerRun) -> KinematicErrorModel:
        g = self._gradient(run)
        if isinstance(g, KinematicErrorModel):
            return g
        base = self._base_model()
        if self._factor is None:
            self._factor = self._initial_step / max(float(np.max(np.abs(g))), 1e-300)
        up = seed_update(
            base.coefficients, g, self._previous, self._factor, grow=self._grow, shrink=self._shrink
        )
        self._factor = up.factor
        self._previous = g
        self._s._next_kind = "base"
        return KinematicErrorModel(self.orders, up.coefficients)


class RpropTuner(_Tuner):
    """iRprop− tuner: per-coefficient step sizes from gradient signs.

    Parameters
    ----------
    orders : array_like, shape (k,)
        Orders of the correction.
    initial_step : float, optional
        Initial step size of every coefficient (rad of motor angle).
    eta_plus, eta_minus, step_min, step_max : float, optional
        See :func:`rprop_update`.
    initial, threshold, threshold_order, gradient, trial_amplitude, combine, trim_revolutions, \
window_revolutions : optional
        As for :class:`SeedTuner`.

    Notes
    -----
    The pure update is :func:`rprop_update`. Only gradient signs are used, so the very different
    sensitivities of the orders (a resonant order responds far more strongly) do not slow the
    others down.

    Examples
    --------
    An uncorrected run, a trial run and a first sign-driven step on a simulated joint whose
    order 2 sits on the link mode:

    >>> from gravdir.synthetic.harmonic_drive import HarmonicDriveJoint, constant_speed_run
    >>> joint = HarmonicDriveJoint()
    >>> orders = harmonic_drive_orders(joint.flexspline_teeth, joint.circular_spline_teeth)
    >>> speed = motor_speed_for_resonance(joint.natural_frequency)
    >>> tuner = RpropTuner(orders)
    >>> for _ in range(3):
    ...     run = constant_speed_run(joint, speed, 110, correction=tuner.model)
    ...     _ = tuner.step(run.motor_angle, run.acceleration)
    >>> tuner.runs, tuner.step_sizes.shape
    (3, (5, 2))
    >>> bool(tuner.amplitudes[-1] < 0.8 * tuner.amplitudes[0])
    True
    """

    def __init__(
        self,
        orders: ArrayLike,
        *,
        initial: KinematicErrorModel | None = None,
        threshold: float | None = None,
        threshold_order: float | None = 2.0,
        gradient: Literal["phasor", "perturbation"] = "phasor",
        trial_amplitude: float = 2e-3,
        initial_step: float = 2e-3,
        eta_plus: float = 1.2,
        eta_minus: float = 0.5,
        step_min: float = 1e-7,
        step_max: float = 0.05,
        combine: Literal["vector", "norm"] = "vector",
        trim_revolutions: float = 0.0,
        window_revolutions: float = 1.0,
    ) -> None:
        super().__init__(
            orders,
            initial=initial,
            threshold=threshold,
            threshold_order=threshold_order,
            gradient=gradient,
            trial_amplitude=trial_amplitude,
            combine=combine,
            trim_revolutions=trim_revolutions,
            window_revolutions=window_revolutions,
        )
        self._steps = np.full((self.orders.size, 2), check_positive(initial_step, "initial_step"))
        self._opts = {
            "eta_plus": eta_plus,
            "eta_minus": eta_minus,
            "step_min": step_min,
            "step_max": step_max,
        }
        self._previous: NDArray[np.float64] | None = None

    @property
    def step_sizes(self) -> NDArray[np.float64]:
        """Current per-coefficient step sizes (rad), shape (k, 2)."""
        return self._steps.copy()

    def _advance(self, run: TunerRun) -> KinematicErrorModel:
        g = self._gradient(run)
        if isinstance(g, KinematicErrorModel):
            return g
        base = self._base_model()
        up = rprop_update(base.coefficients, g, self._previous, self._steps, **self._opts)
        self._steps = up.step_sizes
        self._previous = up.gradient
        self._s._next_kind = "base"
        return KinematicErrorModel(self.orders, up.coefficients)


class InfluenceTuner(_Tuner):
    """Tuner that identifies the phasor response and jumps to its optimum.

    The deviation phasor at each order is linear in the correction phasor,
    :math:`Y_k = g_k (c_k - c_k^*)`. The first run and one trial run (all orders changed by
    `trial_amplitude` at once) identify :math:`g_k`; every later run is the least-squares optimum
    of the model fitted to all runs so far (:func:`fit_phasor_response`). On a linear joint the
    third run is already corrected.

    Parameters
    ----------
    orders : array_like, shape (k,)
        Orders of the correction.
    initial, threshold, threshold_order, trial_amplitude, combine, trim_revolutions, \
window_revolutions : optional
        As for :class:`SeedTuner`.

    Examples
    --------
    On a simulated joint (order 2 on the link mode, no noise) the run after the trial run is
    already corrected:

    >>> from gravdir.synthetic.harmonic_drive import HarmonicDriveJoint, constant_speed_run
    >>> joint = HarmonicDriveJoint()
    >>> orders = harmonic_drive_orders(joint.flexspline_teeth, joint.circular_spline_teeth)
    >>> speed = motor_speed_for_resonance(joint.natural_frequency)
    >>> tuner = InfluenceTuner(orders)
    >>> for _ in range(3):
    ...     run = constant_speed_run(joint, speed, 110, correction=tuner.model)
    ...     _ = tuner.step(run.motor_angle, run.acceleration)
    >>> tuner.response is not None, [r.kind for r in tuner.history]
    (True, ['base', 'trial', 'base'])
    >>> bool(tuner.amplitudes[-1] < 0.05 * tuner.amplitudes[0])
    True
    """

    def __init__(
        self,
        orders: ArrayLike,
        *,
        initial: KinematicErrorModel | None = None,
        threshold: float | None = None,
        threshold_order: float | None = 2.0,
        trial_amplitude: float = 2e-3,
        combine: Literal["vector", "norm"] = "vector",
        trim_revolutions: float = 0.0,
        window_revolutions: float = 1.0,
    ) -> None:
        super().__init__(
            orders,
            initial=initial,
            threshold=threshold,
            threshold_order=threshold_order,
            gradient="phasor",
            trial_amplitude=trial_amplitude,
            combine=combine,
            trim_revolutions=trim_revolutions,
            window_revolutions=window_revolutions,
        )

    @property
    def response(self) -> PhasorResponse | None:
        """The phasor model fitted to the runs so far (None before two distinct runs)."""
        if self._needs_trial():
            return None
        return self._phasor_fit()

    def _advance(self, run: TunerRun) -> KinematicErrorModel:
        if self._needs_trial():
            return self._trial(run.model)
        self._s._next_kind = "base"
        return KinematicErrorModel.from_phasors(self.orders, self._phasor_fit().optimum)
