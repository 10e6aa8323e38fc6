"""The expected acceleration, the combination of axes and the deviation spectrum of a run."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import check_array, check_option, check_positive, check_vectors, norm
from gravdir._constants import STANDARD_GRAVITY
from gravdir._results import Result
from gravdir.errors import InsufficientDataError
from gravdir.kinematic_error._common import (
    _check_orders,
    _check_record,
    _order_index,
    _require_finite,
)
from gravdir.kinematic_error._spectrum import order_spectrum, split_at_reversals


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
        Magnitude of gravity in m/s², standard gravity (9.80665) by default.

    Returns
    -------
    ndarray, shape (..., n, 3)
        Specific force :math:`f = a - g` in the sensor frame (x radial, y tangential, z along the
        axis), in m/s².

    Raises
    ------
    ValueError
        If the angles are not finite, their shapes do not broadcast to the shape of one of them
        (a column vector beside a row is refused, not spread into a matrix), `radius` or `gravity`
        is not a finite positive number, `up` is not a unit 3-vector, or the specific force
        overflows float64.

    See Also
    --------
    moving_average_expected : the estimate from the record itself, for constant-speed runs.
    measure_run : takes this as its `expected` argument.

    Notes
    -----
    :math:`f = (-r\\dot\\psi^2,\\ r\\ddot\\psi,\\ 0) + g\\,R_z(\\psi)^\\top \\hat u`. This is the
    exact expected value along a known trajectory (step c of US 2025/0065499 A1, paragraph 5 and
    claim 1); :func:`moving_average_expected` is the patent's estimate for constant-speed runs
    (paragraph 17).

    References
    ----------
    US 2025/0065499 A1, paragraphs 5 and 17 and claim 1 (step c).

    Examples
    --------
    >>> expected_acceleration(0.0, 1.0, 0.0, 0.5, [0, 0, 1]).round(4)
    array([-0.5   ,  0.    ,  9.8067])
    """
    psi = check_array(output_angle, "output_angle")
    w = check_array(output_velocity, "output_velocity")
    al = check_array(output_acceleration, "output_acceleration")
    shapes = (psi.shape, w.shape, al.shape)
    try:
        shape = np.broadcast_shapes(*shapes)
    except ValueError:
        shape = None
    if shape not in shapes:
        raise ValueError(
            "Expected `output_angle`, `output_velocity` and `output_acceleration` to broadcast "
            f"to the shape of one of them, got shapes {shapes[0]}, {shapes[1]}, {shapes[2]}."
        )
    psi, w, al = np.broadcast_arrays(psi, w, al)
    r = check_positive(radius, "radius")
    g = check_positive(gravity, "gravity")
    u = check_vectors(up, "up")
    if u.shape != (3,) or abs(float(norm(u)) - 1.0) > 1e-6:
        raise ValueError(f"Expected `up` to be one unit 3-vector, got {u.tolist()}.")
    with np.errstate(all="ignore"):
        c, s = np.cos(psi), np.sin(psi)
        fx = -r * w**2 + g * (c * u[0] + s * u[1])
        fy = r * al + g * (-s * u[0] + c * u[1])
        fz = np.broadcast_to(g * u[2], psi.shape)
        out = np.stack([fx, fy, fz], axis=-1)
    _require_finite(
        out,
        "Expected `output_velocity`, `output_acceleration`, `radius` and `gravity` to give a "
        "specific force float64 can hold, got overflow.",
    )
    return out


def combine_axes(
    acceleration: ArrayLike, *, method: Literal["norm", "sum_of_squares"] = "norm"
) -> NDArray[np.float64]:
    """Combine the three accelerometer axes into one rotation-invariant scalar.

    Parameters
    ----------
    acceleration : array_like, shape (..., 3)
        Acceleration vectors.
    method : {"norm", "sum_of_squares"}, optional
        :math:`|a|` (m/s²) or :math:`a_x^2 + a_y^2 + a_z^2` (m²/s⁴), the scalar of
        US 2025/0065499 A1 (paragraph 21).

    Returns
    -------
    ndarray, shape (...)
        The scalar per sample.

    Raises
    ------
    ValueError
        If `acceleration` is not finite ``(..., 3)``, `method` is unknown, or the sum of squares
        overflows float64 (the norm never does).

    Notes
    -----
    A vibration :math:`v` perpendicular to the static specific force :math:`g` changes the norm only
    to second order, :math:`|g + v| \\approx |g| + |v|^2/(2|g|)`: the scalar hides it. Prefer the
    deviation vector (measured minus expected) before any norm, as :func:`measure_run` does by
    default.

    References
    ----------
    US 2025/0065499 A1, paragraph 21 and claim 7.

    Examples
    --------
    >>> combine_axes([[3.0, 4.0, 0.0]])
    array([5.])
    """
    a = check_vectors(acceleration, "acceleration")
    check_option(method, "method", ("norm", "sum_of_squares"))
    with np.errstate(under="ignore", over="ignore"):
        length = norm(a)
        out: NDArray[np.float64] = length if method == "norm" else length * length
    _require_finite(
        out, "Expected `acceleration` small enough for its sum of squares, got overflow."
    )
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
    """The expected value of a constant-speed record: its moving average over motor angle.

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
        If the inputs are not finite, lengths differ, `motor_angle` is not monotonic, has fewer
        than two samples or leaves ±1e9 rad, or `window_revolutions` is not a finite positive
        number.
    InsufficientDataError
        If the record is shorter than the window or no sample lies half a window from both ends.

    See Also
    --------
    expected_acceleration : the exact expected value along a known trajectory.

    Notes
    -----
    At constant speed the expected acceleration is constant or varies slowly with the joint angle
    (gravity), so the average over neighbouring samples estimates it (US 2025/0065499 A1,
    paragraph 17). Averaging over a motor-angle window rather than a sample count keeps it right
    when the sampling is uneven. A component of non-integer order :math:`q` leaks into the average
    with gain :math:`\\mathrm{sinc}(qW)` (for :math:`2z_f/z_c = 1.98` and :math:`W = 1`: −0.01);
    the slow gravity term is biased by about :math:`(2\\pi W/N)^2/24` of its amplitude.

    There is no ``nan_policy``: a NaN raises. The average integrates the record over a window of
    motor angle, so a dropped sample would be bridged by interpolation without a word; cut the
    record at the gap and average the pieces instead.

    References
    ----------
    US 2025/0065499 A1, paragraph 17 and claim 3.

    Examples
    --------
    >>> th = np.linspace(0, 6 * np.pi, 601)
    >>> e, ok = moving_average_expected(th, 1.0 + np.sin(th))
    >>> bool(np.allclose(e[ok], 1.0, atol=1e-3)), int(ok.sum())
    (True, 401)
    """
    theta = _check_record(motor_angle)
    s = check_array(signal, "signal")
    w = check_positive(window_revolutions, "window_revolutions")
    if s.ndim not in (1, 2) or s.shape[0] != theta.size:
        raise ValueError(
            f"Expected `signal` to have shape ({theta.size},) or ({theta.size}, d), got {s.shape}."
        )
    t, _ = _unwrap_monotonic(theta)
    if np.any(np.diff(t) < 0):
        raise ValueError("Expected `motor_angle` to be monotonic; split it at reversals first.")
    half = math.pi * w
    span = float(t[-1]) - float(t[0])
    if span < 2 * half:
        raise InsufficientDataError(
            f"Expected `motor_angle` to cover at least `window_revolutions` = {w:g} revolutions, "
            f"got {span / (2 * math.pi):.3g}."
        )
    valid = (t - half >= t[0]) & (t + half <= t[-1])
    idx = np.flatnonzero(valid)
    if idx.size == 0:
        raise InsufficientDataError(
            "Expected a sample of `motor_angle` half a window (`window_revolutions` / 2) from "
            "both ends of the record, got none."
        )
    s2 = s.reshape(theta.size, -1)
    # integrate in units of each channel's largest magnitude: any finite scale survives
    scale = np.max(np.abs(s2), axis=0)
    scale = np.where(scale > 0, scale, 1.0)
    with np.errstate(under="ignore"):
        s2 = s2 / scale
        dt = np.diff(t)[:, None]
        cum = np.concatenate(
            [np.zeros((1, s2.shape[1])), np.cumsum(0.5 * dt * (s2[1:] + s2[:-1]), 0)]
        )
        out = np.empty_like(s2)
        for j in range(s2.shape[1]):
            hi = np.interp(t + half, t, cum[:, j])
            lo = np.interp(t - half, t, cum[:, j])
            out[:, j] = (hi - lo) / (2 * half) * scale[j]
    nearest = np.clip(np.arange(theta.size), idx[0], idx[-1])
    out = out[nearest]
    return out.reshape(s.shape), valid


@dataclass(frozen=True, eq=False, repr=False)
class RunSpectrum(Result):
    """Deviation phasors of one run, per direction of motion and channel.

    :meth:`to_dict` writes `phasors` as ``{"real": ..., "imag": ...}``.

    Attributes
    ----------
    orders : ndarray, shape (k,)
        Orders (cycles per motor revolution).
    phasors : ndarray of complex, shape (d, ch, k)
        Phasor of the deviation (measured minus expected) for each direction present (d = 1 or 2),
        channel (3 for the deviation vector, 1 for the scalar :math:`|a|`) and order, in m/s².
    directions : tuple of int
        +1 (motor angle increasing) or −1 for each row of `phasors`.
    revolutions : ndarray, shape (d,)
        Motor revolutions used per direction.
    """

    _units = {
        "orders": "cycles/motor rev", "phasors": "m/s²", "revolutions": "motor rev",
    }

    orders: NDArray[np.float64]
    phasors: NDArray[np.complex128]
    directions: tuple[int, ...]
    revolutions: NDArray[np.float64]

    def _scaled(self) -> tuple[NDArray[np.float64], float]:
        """|phasors| divided by their largest value, and that value (1 if all are zero)."""
        mag = np.abs(self.phasors)
        scale = float(np.max(mag)) if mag.size else 0.0
        scale = scale if scale > 0 else 1.0
        with np.errstate(under="ignore"):
            return mag / scale, scale

    def _per_order(self) -> NDArray[np.float64]:
        mag, scale = self._scaled()
        with np.errstate(under="ignore"):
            power = np.sum(mag**2, axis=1)
            return np.asarray(np.sqrt(np.mean(power, axis=0)) * scale, dtype=np.float64)

    def amplitude(self, order: float | None = 2.0) -> float:
        """Deviation amplitude at `order` (m/s²), or the largest over all orders if None.

        The amplitude is the root-sum-square over channels, averaged in power over directions.
        """
        per = self._per_order()
        if order is None:
            return float(np.max(per))
        return float(per[_order_index(self.orders, order)])

    @property
    def objective(self) -> float:
        """:math:`J = \\sum |Y|^2` over directions, channels and orders, (m/s²)².

        Computed in scaled units; it is infinite only where :math:`J` exceeds the float64 range
        (deviations beyond about 1e154 m/s²).
        """
        mag, scale = self._scaled()
        with np.errstate(under="ignore"):
            total = float(np.sum(mag**2))
        return total * scale * scale

    def __repr__(self) -> str:
        per = self._per_order()
        terms = ", ".join(f"{q:.4g}: {a:.3g}" for q, a in zip(self.orders, per, strict=True))
        return f"RunSpectrum(directions={self.directions}, amplitude m/s² = {{{terms}}})"


_Pieces = dict[int, tuple[list[NDArray[np.float64]], list[NDArray[np.float64]]]]


def _check_run(
    motor_angle: ArrayLike, readings: ArrayLike, expected: ArrayLike | None
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64] | None]:
    theta = _check_record(motor_angle)
    acc = check_vectors(readings, "readings")
    if acc.shape != (theta.size, 3):
        raise ValueError(f"Expected `readings` to have shape ({theta.size}, 3), got {acc.shape}.")
    if expected is None:
        return theta, acc, None
    exp_arr = check_vectors(expected, "expected")
    if exp_arr.shape != acc.shape:
        raise ValueError(f"Expected `expected` to have shape {acc.shape}, got {exp_arr.shape}.")
    return theta, acc, exp_arr


def _deviation_pieces(
    theta: NDArray[np.float64],
    acc: NDArray[np.float64],
    expected: NDArray[np.float64] | None,
    combine: str,
    trim: float,
    window: float,
) -> _Pieces:
    """Motor angles and deviations (measured − expected) of the monotonic pieces, by direction."""
    pieces: _Pieces = {}
    for sl in split_at_reversals(theta):
        th = theta[sl]
        a = acc[sl]
        sig = combine_axes(a)[:, None] if combine == "norm" else a
        if expected is not None:
            e = expected[sl]
            ref = combine_axes(e)[:, None] if combine == "norm" else e
            ok = np.ones(th.size, dtype=bool)
        else:
            span = abs(th[-1] - th[0]) / (2 * math.pi)
            if span < window + 2 * trim:
                continue
            try:
                ref, ok = moving_average_expected(th, sig, window_revolutions=window)
            except InsufficientDataError:  # too sparse a piece for the window: not usable
                continue
        t, sign = _unwrap_monotonic(th)
        if trim > 0:
            ok &= (t - t[0] >= 2 * math.pi * trim) & (t[-1] - t >= 2 * math.pi * trim)
        if np.count_nonzero(ok) < 2:
            continue
        with np.errstate(over="ignore", invalid="ignore"):
            deviation = (sig - ref)[ok]
        _require_finite(
            deviation,
            "Expected `readings` minus `expected` to fit in float64, got overflow.",
        )
        lst = pieces.setdefault(int(sign), ([], []))
        lst[0].append(th[ok])
        lst[1].append(deviation)
    return pieces


def measure_run(
    motor_angle: ArrayLike,
    *,
    readings: ArrayLike,
    orders: ArrayLike,
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
    readings : array_like, shape (n, 3)
        Recorded accelerometer vectors (m/s²).
    orders : array_like, shape (k,)
        Orders of the correction model.
    expected : array_like, shape (n, 3), optional
        Exact expected readings (for example
        :func:`gravdir.kinematic_error.expected_acceleration` of the commanded trajectory). If
        omitted, the moving average over `window_revolutions` is used within each monotonic piece
        (US 2025/0065499 A1, paragraph 17).
    combine : {"vector", "norm"}, optional
        ``"vector"`` (default) fits the three components of the deviation vector; ``"norm"`` fits
        the scalar :math:`|a| - \\overline{|a|}` (US 2025/0065499 A1, paragraph 21), blind to
        vibration perpendicular to gravity.
    trim_revolutions : float, optional
        Motor revolutions dropped at both ends of every monotonic piece (reversal transients).
    window_revolutions : float, optional
        Moving-average window, see :func:`gravdir.kinematic_error.moving_average_expected`.
    resolution : float, optional
        See :func:`order_spectrum`.

    Returns
    -------
    RunSpectrum
        Phasors per direction present, channel and order.

    Raises
    ------
    ValueError
        If shapes mismatch, inputs are not finite, `motor_angle` has fewer than two samples or
        leaves ±1e9 rad, `combine` is unknown, `trim_revolutions` is not a finite non-negative
        number or `window_revolutions` and `resolution` are not finite positive numbers (None
        included).
    InsufficientDataError
        If no direction has a piece long enough for the orders (see :func:`order_spectrum`).

    See Also
    --------
    order_spectrum : the fit of one record.
    BoldDriverTuner, RpropTuner, InfluenceTuner : call this on every run.

    Notes
    -----
    This is steps c, f and g of US 2025/0065499 A1 (claim 1): the expected acceleration, the
    recorded one, and the spectral analysis of their deviation against motor angle (claims 8-9).
    Pieces of the same direction are fitted jointly (their samples concatenated): at the same
    speed the response to a given correction is the same. The two directions are kept apart
    because the response of a vibration mode to order :math:`q` at speed :math:`-\\omega` is the
    complex conjugate of that at :math:`+\\omega`.

    There is no ``nan_policy``: a record with a NaN raises. The expected value (a moving
    average over motor angle) and the spectrum's leakage bounds assume a gap-free, uniformly
    sampled record; cut a logged run at a gap into records that each span the orders' periods
    (or repeat the run) rather than dropping samples.

    References
    ----------
    US 2025/0065499 A1, paragraphs 3-10, 17 and 21-22 and claims 1, 3 and 7-9.

    Examples
    --------
    >>> th = np.linspace(0, 2 * np.pi * 12, 4801)
    >>> acc = np.zeros((th.size, 3))
    >>> acc[:, 1] = 0.2 * np.cos(2 * th)
    >>> run = measure_run(th, readings=acc, orders=[1.0, 2.0])
    >>> round(run.amplitude(2.0), 6)
    0.2
    """
    theta, acc, exp_arr = _check_run(motor_angle, readings, expected)
    q = _check_orders(orders)
    check_option(combine, "combine", ("vector", "norm"))
    trim = check_positive(trim_revolutions, "trim_revolutions", allow_zero=True)
    window = check_positive(window_revolutions, "window_revolutions")
    check_positive(resolution, "resolution")
    pieces = _deviation_pieces(theta, acc, exp_arr, combine, trim, window)
    if not pieces:
        raise InsufficientDataError(
            "Expected at least one monotonic piece of `motor_angle` longer than the "
            "moving-average window plus trims (`window_revolutions` + 2 `trim_revolutions` = "
            f"{window + 2 * trim:g} revolutions), got none."
        )
    phs = []
    revs = []
    for sign in sorted(pieces, reverse=True):
        angles, deviations = pieces[sign]
        th_all = np.concatenate(angles)
        dev_all = np.concatenate(deviations)
        phs.append(
            order_spectrum(th_all, signal=dev_all.T, orders=q, resolution=resolution).phasors
        )
        revs.append(sum(abs(p[-1] - p[0]) for p in angles) / (2 * math.pi))
    return RunSpectrum(
        orders=np.array(q, dtype=np.float64),
        phasors=np.stack(phs),
        directions=tuple(sorted(pieces, reverse=True)),
        revolutions=np.asarray(revs, dtype=np.float64),
    )
