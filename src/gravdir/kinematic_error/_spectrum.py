"""Complex amplitudes of a record at chosen orders of the motor angle."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import check_array, check_positive
from gravdir._results import Result
from gravdir.errors import InsufficientDataError
from gravdir.kinematic_error._common import _check_orders, _check_record, _require_finite


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
        If `motor_angle` is not a finite 1-D array of at least two samples within ±1e9 rad.

    Notes
    -----
    A joint whose range is limited is measured by an oscillating trajectory, several rotations
    in alternating directions, each at constant speed (US 2025/0065499 A1, paragraph 17 and
    claim 3); each piece is then analysed as a constant-speed record.

    References
    ----------
    US 2025/0065499 A1, paragraph 17 and claim 3.

    Examples
    --------
    >>> split_at_reversals([0, 1, 2, 1, 0, 1])
    (slice(0, 3, None), slice(2, 5, None), slice(4, 6, None))
    """
    theta = _check_record(motor_angle)
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


@dataclass(frozen=True, eq=False, repr=False)
class OrderSpectrum(Result):
    """Complex amplitudes of a signal at chosen orders of the motor angle.

    The signal is modelled as
    :math:`s(\\theta) \\approx m + \\sum_k \\mathrm{Re}(c_k e^{i q_k\\theta})`.
    :meth:`to_dict` writes `phasors` as ``{"real": ..., "imag": ...}``.

    Attributes
    ----------
    orders : ndarray, shape (k,)
        Orders :math:`q_k` (cycles per motor revolution).
    phasors : ndarray of complex, shape (..., k)
        :math:`c_k`, in the units of the signal; amplitude :math:`|c_k|`, phase
        :math:`\\arg c_k` (rad).
    mean : ndarray, shape (...)
        Fitted constant :math:`m`.
    residual_rms : ndarray, shape (...)
        RMS of the fit residual, in the units of the signal.
    revolutions : float
        Motor revolutions spanned by the record.
    """

    _units = {
        "orders": "cycles/motor rev", "phasors": "unit of the signal",
        "mean": "unit of the signal", "residual_rms": "unit of the signal",
        "revolutions": "motor rev",
    }

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


def _check_record_resolves(
    theta: NDArray[np.float64], q: NDArray[np.float64], resolution: float, mspp: float
) -> float:
    """Raise unless the record spans, resolves and samples the orders `q`; return revolutions."""
    span = float(np.max(theta)) - float(np.min(theta))
    revs = span / (2 * math.pi)
    lowest, highest = float(np.min(q)), float(np.max(q))
    if revs * lowest < 1.0:
        raise InsufficientDataError(
            f"Expected `motor_angle` to span at least one period of the lowest order "
            f"{lowest:.4g} ({1 / lowest:.4g} revolutions), got {revs:.4g}."
        )
    srt = np.sort(q)
    if srt.size > 1:
        gaps = np.diff(srt)
        i = int(np.argmin(gaps))
        gap = float(gaps[i])
        if gap < resolution / revs:
            raise InsufficientDataError(
                f"Expected `orders` at least {resolution / revs:.4g} apart for a record of "
                f"{revs:.4g} revolutions, got {srt[i]:.6g} and {srt[i + 1]:.6g} ({gap:.4g} "
                f"apart); resolving them needs about {resolution / gap:.4g} revolutions."
            )
    step = float(np.max(np.abs(np.diff(theta))))
    if step * highest > 2 * math.pi / mspp:
        raise InsufficientDataError(
            f"Expected `motor_angle` sampled with at least {mspp:g} samples per period of order "
            f"{highest:.4g}, got a motor-angle step of {step:.3g} rad "
            f"({2 * math.pi / (step * highest):.3g} samples per period)."
        )
    return revs


def order_spectrum(
    motor_angle: ArrayLike,
    *,
    signal: ArrayLike,
    orders: ArrayLike,
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
        highest order (above the Nyquist limit of 2, with margin; at least 2).

    Returns
    -------
    OrderSpectrum
        Phasors :math:`c_k` with :math:`s \\approx m + \\sum_k \\mathrm{Re}(c_k e^{i q_k \\theta})`.

    Raises
    ------
    ValueError
        If inputs are not finite, lengths differ, `motor_angle` is not 1-D or leaves ±1e9 rad,
        orders are not distinct and in (0, 1e4], or `min_samples_per_period` is below 2.
    InsufficientDataError
        If the record has fewer than :math:`2k + 1` samples, spans less than one period of the
        lowest order, two orders are closer than the record resolves, the sampling is too coarse
        for the highest order, or the design matrix is rank deficient.

    See Also
    --------
    measure_run : the deviation spectrum of a whole run, per direction of motion.

    Notes
    -----
    The spectral analysis against motor angle of US 2025/0065499 A1 (paragraph 22, claim 8) is
    done here as a linear least-squares fit of
    :math:`s = m + \\sum_k a_k\\cos q_k\\theta + b_k\\sin q_k\\theta` on the samples, with
    :math:`c_k = a_k - i b_k` (the linear model of sinusoids of known frequency, Kay 1993,
    ch. 4); no resampling or FFT bins are needed, so any order works. If the signal holds only
    the fitted orders the result is exact, whatever the record length. Components at other orders
    leak: with uniform sampling over :math:`R` revolutions, an unfitted component of amplitude
    :math:`A` at order :math:`p` moves :math:`c_k` by about
    :math:`A\\,|\\mathrm{sinc}(R(p-q_k))|`, at most :math:`A/(\\pi R |p - q_k|)`, and by nothing
    when :math:`R\\,p` and :math:`R\\,q_k` are both integers (whole periods). Orders closer than
    :math:`1/R` (the Rayleigh limit) cannot be separated by any method and raise instead of being
    silently mixed.

    There is no ``nan_policy``: a record with a NaN raises. The leakage figures above and the
    sampling check hold for uniformly sampled, gap-free records; samples dropped from the
    middle change both without a word. Cut the record at the gap and analyse the pieces (each
    must span a period of the lowest order), or repeat the run.

    References
    ----------
    US 2025/0065499 A1, paragraph 22 and claims 8-9.
    Kay (1993), *Fundamentals of Statistical Signal Processing, Vol. I: Estimation Theory*,
    ch. 4 (the linear model; amplitudes of sinusoids of known frequency).

    Examples
    --------
    >>> th = np.linspace(0, 2 * np.pi * 60, 24001)
    >>> s = 0.3 * np.cos(2 * th + 0.5) + 0.1 * np.cos(1.98 * th - 1.0)
    >>> sp = order_spectrum(th, signal=s, orders=[1.98, 2.0])
    >>> np.round(np.abs(sp.phasors), 9), np.round(np.angle(sp.phasors), 9)
    (array([0.1, 0.3]), array([-1. ,  0.5]))
    """
    theta = _check_record(motor_angle)
    s = check_array(signal, "signal", min_ndim=1)
    q = _check_orders(orders)
    res = check_positive(resolution, "resolution")
    mspp = check_positive(min_samples_per_period, "min_samples_per_period")
    if mspp < 2.0:
        raise ValueError(
            f"Expected `min_samples_per_period` of at least 2 (the Nyquist limit), got {mspp!r}."
        )
    if s.shape[-1] != theta.size:
        raise ValueError(
            f"Expected `signal` to have shape (..., {theta.size}) to match `motor_angle`, "
            f"got {s.shape}."
        )
    revs = _check_record_resolves(theta, q, res, mspp)
    # centre the angle: better conditioning, and phases are corrected below
    t0 = 0.5 * (float(np.max(theta)) + float(np.min(theta)))
    arg = (theta - t0)[:, None] * q
    x = np.concatenate([np.ones((theta.size, 1)), np.cos(arg), np.sin(arg)], axis=1)
    if theta.size < x.shape[1]:
        raise InsufficientDataError(
            f"Expected `motor_angle` to hold at least {x.shape[1]} samples for {q.size} orders, "
            f"got {theta.size}."
        )
    y = s.reshape(-1, theta.size).T
    # fit in units of each channel's largest magnitude: any finite scale survives
    scale = np.max(np.abs(y), axis=0) if y.size else np.ones(y.shape[1])
    scale = np.where(scale > 0, scale, 1.0)
    with np.errstate(under="ignore"):
        ys = y / scale
    coef, _, rank, _ = np.linalg.lstsq(x, ys, rcond=None)
    if rank < x.shape[1]:
        raise InsufficientDataError(
            f"Expected the samples of `motor_angle` to determine all {x.shape[1]} terms, "
            f"got rank {rank}."
        )
    k = q.size
    with np.errstate(under="ignore", over="ignore", invalid="ignore"):
        rms = np.sqrt(np.mean((ys - x @ coef) ** 2, axis=0)) * scale
        ph = (coef[1 : 1 + k] - 1j * coef[1 + k :]) * scale * np.exp(-1j * q * t0)[:, None]
        mean = coef[0] * scale
    for part in (ph, mean, rms):
        _require_finite(part, "Expected `signal` small enough for float64 phasors, got overflow.")
    batch = s.shape[:-1]
    return OrderSpectrum(
        orders=np.array(q, dtype=np.float64),
        phasors=ph.T.reshape(*batch, k),
        mean=mean.reshape(batch),
        residual_rms=rms.reshape(batch),
        revolutions=float(revs),
    )
