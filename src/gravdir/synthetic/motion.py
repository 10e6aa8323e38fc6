"""Synthetic motion logs: random finite-Fourier joint trajectories and what a controller logs.

:func:`fourier_trajectory` draws a smooth periodic trajectory per joint -- a finite Fourier
series, the excitation form of identification practice -- with its exact positions, velocities
and accelerations. :func:`motion_log` turns the actuator torques of that trajectory (computed by
the caller from an arm model, e.g. ``SyntheticUrdfArm.inverse_dynamics``) into the log a
controller records: per-joint torque gains and offsets, Coulomb and viscous friction, torque
noise, and joint positions with encoder noise whose velocities are differences of the noisy
positions. Both can add what real logs hold beyond that world (keyword arguments, off by
default): time stamps with jitter, a rate error and gaps, a smooth rest at the start and end,
serially correlated torque noise, a robot's unmodelled torque
(:func:`~gravdir.synthetic.random_model_error`), kinematic zero offsets of the logged positions
and corrupted rows. Nothing here imports an estimator.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import check_array, check_count, check_per_joint, check_positive
from gravdir._results import Result
from gravdir.synthetic._phenomena import (
    ModelError,
    correlated_noise,
    corrupt_rows,
    rest_envelope,
    stamps,
)
from gravdir.synthetic._validate import check_rng

__all__ = ["FourierTrajectory", "MotionLog", "fourier_trajectory", "motion_log"]

_MAX_SAMPLES = 5_000_000
_MAX_JOINTS = 64
_MAX_HARMONICS = 100


@dataclass(frozen=True, eq=False, repr=False)
class FourierTrajectory(Result):
    """A finite-Fourier joint trajectory with its exact derivatives.

    :math:`q_j(t) = q_{0,j} + \\sum_{l=1}^{L} a_{jl} \\sin(l \\omega t)
    + b_{jl} \\cos(l \\omega t)`, :math:`\\omega = 2 \\pi f`.

    Attributes
    ----------
    time : ndarray, shape (N,)
        Sample times, s.
    q, velocity, acceleration : ndarray, shape (N, n)
        Exact joint positions (rad), velocities (rad/s) and accelerations (rad/s²).
    q0 : ndarray, shape (n,)
        Centre of each joint's motion, rad.
    sine, cosine : ndarray, shape (n, L)
        Coefficients :math:`a_{jl}` and :math:`b_{jl}`, rad.
    base_frequency : float
        :math:`f`, Hz: the trajectory repeats every :math:`1/f` seconds.
    rest_time, ramp_time, duration : float
        The rest at each end, s: with ``ramp_time > 0`` the Fourier part is multiplied by an
        envelope :math:`s(t)`, 0 over `rest_time` at each end of ``[0, duration]``, 1 between,
        joined by the quintic blend :math:`10u^3 - 15u^4 + 6u^5` over `ramp_time` (default 0:
        no envelope). Derivatives follow by the product rule, exactly.

    Notes
    -----
    :meth:`at` evaluates the same trajectory at other times.
    """

    _units = {
        "time": "s",
        "q": "rad",
        "velocity": "rad/s",
        "acceleration": "rad/s²",
        "q0": "rad",
        "sine": "rad",
        "cosine": "rad",
        "base_frequency": "Hz",
        "rest_time": "s",
        "ramp_time": "s",
        "duration": "s",
    }

    time: NDArray[np.float64]
    q: NDArray[np.float64]
    velocity: NDArray[np.float64]
    acceleration: NDArray[np.float64]
    q0: NDArray[np.float64]
    sine: NDArray[np.float64]
    cosine: NDArray[np.float64]
    base_frequency: float
    rest_time: float = 0.0
    ramp_time: float = 0.0
    duration: float = 0.0

    def __repr__(self) -> str:
        n_samples, n = self.q.shape
        return (
            f"FourierTrajectory(n_joints={n}, n_samples={n_samples}, "
            f"time_span={float(self.time[-1] - self.time[0]):.6g} s, "
            f"base_frequency={self.base_frequency:.6g} Hz, harmonics={self.sine.shape[1]})"
        )

    def at(self, time: ArrayLike) -> FourierTrajectory:
        """The same trajectory sampled at the times `time`: the series evaluated exactly there.

        Parameters
        ----------
        time : array_like, shape (N,)
            Times, s, finite (any order; at most 5e6).

        Returns
        -------
        FourierTrajectory
            The same coefficients and envelope, with `time`, `q`, `velocity` and
            `acceleration` at the given times.

        Raises
        ------
        ValueError
            If `time` is not 1-D and finite or holds more than 5e6 samples.

        Examples
        --------
        >>> traj = fourier_trajectory(2, 1.0, 10.0, rng=np.random.default_rng(0))
        >>> bool(np.allclose(traj.at(traj.time[3:5]).q, traj.q[3:5]))
        True
        """
        t = check_array(time, "time")
        if t.ndim != 1 or not 1 <= t.size <= _MAX_SAMPLES:
            raise ValueError(
                f"Expected `time` of shape (N,) with 1 <= N <= {_MAX_SAMPLES}, got {t.shape}."
            )
        q, velocity, acceleration = _evaluate(self, t)
        return dataclasses.replace(self, time=t, q=q, velocity=velocity, acceleration=acceleration)


def fourier_trajectory(
    n_joints: int,
    duration: float,
    sample_rate: float,
    *,
    rng: np.random.Generator,
    n_harmonics: int = 5,
    base_frequency: float = 0.1,
    max_velocity: float = 1.5,
    max_amplitude: float = 1.5,
    q0: ArrayLike | None = None,
    time_jitter: float = 0.0,
    rate_error: float = 0.0,
    gaps: int = 0,
    max_gap_rows: int = 20,
    rest_time: float = 0.0,
    ramp_time: float = 0.0,
) -> FourierTrajectory:
    """A random finite-Fourier trajectory of every joint, sampled at `sample_rate`.

    Parameters
    ----------
    n_joints : int
        Number of joints, 1 to 64.
    duration : float
        Length, s, positive.
    sample_rate : float
        Nominal samples per second, positive (at most 5e6 samples in all).
    rng : numpy.random.Generator
        Source of the coefficients (and of the stamps' jitter and gaps).
    n_harmonics : int, optional
        Harmonics per joint, 1 to 100 (default 5).
    base_frequency : float, optional
        Fundamental frequency, Hz (default 0.1).
    max_velocity : float, optional
        Each joint's coefficients are scaled so that the bound
        :math:`\\sum_l l \\omega (|a_{jl}| + |b_{jl}|)` on its speed is at most this, rad/s
        (default 1.5).
    max_amplitude : float, optional
        ... and the bound :math:`\\sum_l |a_{jl}| + |b_{jl}|` on its excursion at most this, rad
        (default 1.5).
    q0 : array_like, shape (n,), optional
        Centre of the motion; default uniform in (-π/2, π/2).
    time_jitter : float, optional
        Standard deviation of each stamp about its regular instant, s, from 0 to a quarter of
        the nominal period (default 0); clipped normal, as for sweeps.
    rate_error : float, optional
        Relative error of the rate, within ±0.5: the true mean interval is
        ``(1 + rate_error) / sample_rate`` (default 0).
    gaps : int, optional
        Runs of rows missing from the log, each of 1 to `max_gap_rows` rows, never at the first
        or last row and never touching another (default 0); together at most half the rows.
    max_gap_rows : int, optional
        Longest gap, rows, 1 to 10,000 (default 20).
    rest_time, ramp_time : float, optional
        Rest at each end, s, and the length of the smooth start and stop, s: non-negative,
        the ramp 0 or at least one sample period, ``2 (rest_time + ramp_time) <= duration``;
        a rest needs a ramp (default 0, 0: no envelope).

    Returns
    -------
    FourierTrajectory
        The stamps are the true sample instants; the series is evaluated exactly there.

    Raises
    ------
    ValueError
        If a count, duration, rate, limit, stamp or rest parameter is out of range, or `rng`
        is not a generator.

    Notes
    -----
    The stamps cover ``[0, duration]`` of true time: ``k (1 + rate_error) / sample_rate`` plus
    the jitter, rows removed by the gaps. The speed bound `max_velocity` holds outside the
    ramps; within them the envelope adds at most :math:`1.875\\,A / T_r` for the excursion
    bound :math:`A` and ramp :math:`T_r`.

    Examples
    --------
    >>> traj = fourier_trajectory(3, 2.0, 100.0, rng=np.random.default_rng(0))
    >>> traj.q.shape
    (201, 3)
    >>> bool(np.abs(traj.velocity).max() <= 1.5)
    True
    >>> still = fourier_trajectory(2, 4.0, 100.0, rng=np.random.default_rng(0), rest_time=0.5,
    ...                            ramp_time=1.0, time_jitter=1e-3, gaps=2)
    >>> float(np.abs(still.velocity[still.time < 0.5]).max())
    0.0
    """
    n = check_count(n_joints, "n_joints", maximum=_MAX_JOINTS)
    span = check_positive(duration, "duration")
    rate = check_positive(sample_rate, "sample_rate")
    check_rng(rng)
    harmonics = check_count(n_harmonics, "n_harmonics", maximum=_MAX_HARMONICS)
    f = check_positive(base_frequency, "base_frequency")
    vmax = check_positive(max_velocity, "max_velocity")
    amax = check_positive(max_amplitude, "max_amplitude")
    rest, ramp = _check_rest(rest_time, ramp_time, span, rate)
    with np.errstate(over="ignore"):
        n_samples = np.floor(span * rate) + 1
    if not n_samples <= _MAX_SAMPLES:
        raise ValueError(
            f"Expected `duration` * `sample_rate` to give at most {_MAX_SAMPLES} samples, got "
            f"{n_samples:.6g}."
        )
    centre = (
        rng.uniform(-np.pi / 2, np.pi / 2, n)
        if q0 is None
        else check_per_joint(q0, "q0", n, scalar=False, sign="any")
    )
    a = rng.normal(size=(n, harmonics))
    b = rng.normal(size=(n, harmonics))
    omega = 2.0 * np.pi * f * np.arange(1, harmonics + 1)
    size = np.abs(a) + np.abs(b)
    scale = np.minimum(vmax / (size @ omega), amax / size.sum(axis=1))
    a *= scale[:, None]
    b *= scale[:, None]
    time = stamps(span, rate, rng, time_jitter, rate_error, gaps, max_gap_rows)
    empty = np.empty((0, n))
    traj = FourierTrajectory(time, empty, empty, empty, centre, a, b, f, rest, ramp, span)
    return traj.at(time)


def _check_rest(
    rest_time: float, ramp_time: float, duration: float, sample_rate: float
) -> tuple[float, float]:
    rest = check_positive(rest_time, "rest_time", allow_zero=True)
    ramp = check_positive(ramp_time, "ramp_time", allow_zero=True)
    if 0 < ramp < 1.0 / sample_rate:
        raise ValueError(
            f"Expected `ramp_time` 0 or at least one sample period ({1.0 / sample_rate:.6g} s), "
            f"got {ramp:.6g} s."
        )
    if rest > 0 and ramp == 0:
        raise ValueError(f"Expected `ramp_time` > 0 with `rest_time` {rest:.6g} s, got 0.")
    if 2.0 * (rest + ramp) > duration:
        raise ValueError(
            f"Expected 2 (`rest_time` + `ramp_time`) <= `duration` {duration:.6g} s, got "
            f"{2.0 * (rest + ramp):.6g} s."
        )
    return rest, ramp


def _evaluate(
    traj: FourierTrajectory, time: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """q, q' and q'' of `traj`'s series (times its envelope) at `time`."""
    a, b = traj.sine, traj.cosine
    omega = 2.0 * np.pi * traj.base_frequency * np.arange(1, a.shape[1] + 1)
    phase = time[:, None] * omega[None, :]
    s, c = np.sin(phase), np.cos(phase)
    velocity = (c * omega) @ a.T - (s * omega) @ b.T
    acceleration = -(s * omega**2) @ a.T - (c * omega**2) @ b.T
    if traj.ramp_time == 0:
        return traj.q0 + s @ a.T + c @ b.T, velocity, acceleration
    part = s @ a.T + c @ b.T
    e, de, dde = (
        x[:, None] for x in rest_envelope(time, traj.rest_time, traj.ramp_time, traj.duration)
    )
    acceleration = dde * part + 2.0 * de * velocity + e * acceleration
    return traj.q0 + e * part, de * part + e * velocity, acceleration


@dataclass(frozen=True, eq=False, repr=False)
class MotionLog(Result):
    """What a controller logs while the arm moves, and the truth behind it.

    Attributes
    ----------
    time : ndarray, shape (N,)
        Sample times, s.
    q : ndarray, shape (N, n)
        Logged joint positions (with encoder noise and zero offsets), rad.
    velocity : ndarray, shape (N, n)
        Logged joint velocities, rad/s: central differences of the logged positions (one-sided
        at the ends) when there is encoder noise, the exact velocities otherwise.
    torque : ndarray, shape (N, n)
        Logged torques: ``gains * actuator + offsets + coulomb sign(q̇) + viscous q̇ +
        unmodelled + noise``.
    actuator_torque : ndarray, shape (N, n)
        The actuator torques given (rigid-body dynamics), N·m.
    gains, offsets, coulomb, viscous, noise_std : ndarray, shape (n,)
        The sensor errors used (offsets, friction and noise in logged-torque units).
    encoder_noise_std : float
        Standard deviation of the position noise, rad.
    unmodelled_torque : ndarray, shape (N, n)
        The robot's unmodelled torque added to the log (its :class:`ModelError` at the true
        positions and velocities), N·m; zeros without one.
    encoder_offsets : ndarray, shape (n,)
        Kinematic zero offsets: logged minus true position, rad.
    noise_correlation_time : float
        Correlation time of the `noise_std` component, s (0: white).
    slow_noise_std : ndarray, shape (n,)
        Standard deviation of the second, slower correlated noise component, N·m.
    slow_correlation_time : float
        Its correlation time, s.
    corrupted_rows : ndarray of int, shape (k,)
        Rows of `q`, `velocity` and `torque` replaced by garbage (ascending).
    """

    _units = {
        "time": "s",
        "q": "rad",
        "velocity": "rad/s",
        "torque": "N·m",
        "actuator_torque": "N·m",
        "gains": "",
        "offsets": "N·m",
        "coulomb": "N·m",
        "viscous": "N·m·s/rad",
        "noise_std": "N·m",
        "encoder_noise_std": "rad",
        "unmodelled_torque": "N·m",
        "encoder_offsets": "rad",
        "noise_correlation_time": "s",
        "slow_noise_std": "N·m",
        "slow_correlation_time": "s",
        "corrupted_rows": "",
    }

    time: NDArray[np.float64]
    q: NDArray[np.float64]
    velocity: NDArray[np.float64]
    torque: NDArray[np.float64]
    actuator_torque: NDArray[np.float64]
    gains: NDArray[np.float64]
    offsets: NDArray[np.float64]
    coulomb: NDArray[np.float64]
    viscous: NDArray[np.float64]
    noise_std: NDArray[np.float64]
    encoder_noise_std: float
    unmodelled_torque: NDArray[np.float64]
    encoder_offsets: NDArray[np.float64]
    noise_correlation_time: float
    slow_noise_std: NDArray[np.float64]
    slow_correlation_time: float
    corrupted_rows: NDArray[np.int64]

    def __repr__(self) -> str:
        n_samples, n = self.q.shape
        return (
            f"MotionLog(n_joints={n}, n_samples={n_samples}, gains={np.round(self.gains, 4)}, "
            f"noise_std={np.round(self.noise_std, 6)} N·m, "
            f"encoder_noise_std={np.degrees(self.encoder_noise_std):.3g}°, "
            f"n_corrupted_rows={self.corrupted_rows.size})"
        )


def motion_log(
    trajectory: FourierTrajectory,
    torque: ArrayLike,
    *,
    rng: np.random.Generator,
    gains: ArrayLike = 1.0,
    offsets: ArrayLike = 0.0,
    coulomb: ArrayLike = 0.0,
    viscous: ArrayLike = 0.0,
    noise_std: ArrayLike = 0.0,
    encoder_noise_std: float = 0.0,
    noise_correlation_time: float = 0.0,
    slow_noise_std: ArrayLike = 0.0,
    slow_correlation_time: float = 1.0,
    model_error: ModelError | None = None,
    encoder_offsets: ArrayLike = 0.0,
    corrupted_rows: int = 0,
) -> MotionLog:
    """The log of a trajectory: measured torques with sensor errors, noisy joint positions.

    Parameters
    ----------
    trajectory : FourierTrajectory
        The motion (:func:`fourier_trajectory`).
    torque : array_like, shape (N, n)
        Actuator torques along it from an arm model (rigid-body dynamics on the tilted base), N·m.
    rng : numpy.random.Generator
        Source of the noise (and of the corrupted rows).
    gains : float or array_like, shape (n,), optional
        Torque gain per joint, positive (default 1).
    offsets : float or array_like, shape (n,), optional
        Torque offset per joint (default 0).
    coulomb, viscous : float or array_like, shape (n,), optional
        Coulomb level (N·m) and viscous coefficient (N·m·s/rad) per joint, non-negative; they
        add with the sign of the velocity (the actuator supplies the friction).
    noise_std : float or array_like, shape (n,), optional
        Torque noise per joint, non-negative: white, or first-order autoregressive with
        `noise_correlation_time` (:func:`~gravdir.synthetic.correlated_noise`).
    encoder_noise_std : float, optional
        White noise on the logged positions, rad, non-negative. When positive, the logged
        velocities are central differences of the noisy positions, as a controller derives them.
    noise_correlation_time : float, optional
        Correlation time of the `noise_std` component, s, non-negative (default 0: white).
    slow_noise_std : float or array_like, shape (n,), optional
        A second, slower autoregressive torque noise per joint, non-negative (default 0).
    slow_correlation_time : float, optional
        Its correlation time, s, positive (default 1).
    model_error : ModelError, optional
        The robot's unmodelled torque (:func:`~gravdir.synthetic.random_model_error`), added
        at the true positions and velocities; keep one per robot for all its logs.
    encoder_offsets : float or array_like, shape (n,), optional
        Kinematic zero offsets, rad: the logged `q` is the dynamics' `q` plus these
        (default 0). Velocities are unchanged.
    corrupted_rows : int, optional
        Length of a block of consecutive rows, at a random place, whose `q`, `velocity` and
        `torque` are replaced by garbage (a filler value 253, values up to ±1e305, exact zeros,
        or values moved between columns), 0 to N (default 0). The stamps stay clean.

    Returns
    -------
    MotionLog

    Raises
    ------
    ValueError
        If `trajectory` is not a :class:`FourierTrajectory`, `torque` does not match its shape
        or is not finite, `model_error` is not a :class:`ModelError` of as many joints, or an
        error level, time or count is out of range.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> traj = fourier_trajectory(2, 1.0, 100.0, rng=rng)
    >>> log = motion_log(traj, np.ones_like(traj.q), rng=rng, gains=[1.1, 0.9], offsets=0.5)
    >>> log.torque[0].round(6).tolist()
    [1.6, 1.4]
    >>> bad = motion_log(traj, np.ones_like(traj.q), rng=rng, corrupted_rows=3)
    >>> bad.corrupted_rows.size
    3
    """
    if not isinstance(trajectory, FourierTrajectory):
        raise ValueError(
            f"Expected `trajectory` to be a FourierTrajectory, got {type(trajectory).__name__}."
        )
    n_samples, n = trajectory.q.shape
    tau = check_array(torque, "torque")
    if tau.shape != (n_samples, n):
        raise ValueError(
            f"Expected `torque` to have shape ({n_samples}, {n}) like the trajectory, got "
            f"{tau.shape}."
        )
    check_rng(rng)
    k = check_per_joint(gains, "gains", n)
    off = check_per_joint(offsets, "offsets", n, sign="any")
    fc = check_per_joint(coulomb, "coulomb", n, sign="non-negative")
    fv = check_per_joint(viscous, "viscous", n, sign="non-negative")
    sigma = check_per_joint(noise_std, "noise_std", n, sign="non-negative")
    enc = check_positive(encoder_noise_std, "encoder_noise_std", allow_zero=True)
    tau_c = check_positive(noise_correlation_time, "noise_correlation_time", allow_zero=True)
    slow = check_per_joint(slow_noise_std, "slow_noise_std", n, sign="non-negative")
    tau_s = check_positive(slow_correlation_time, "slow_correlation_time")
    zero = check_per_joint(encoder_offsets, "encoder_offsets", n, sign="any")
    if model_error is not None and (
        not isinstance(model_error, ModelError) or model_error.quadratic.size != n
    ):
        raise ValueError(f"Expected `model_error` to be a ModelError of {n} joints or None, "
                         f"got {model_error!r}.")  # fmt: skip
    qd = trajectory.velocity
    extra = np.zeros_like(tau) if model_error is None else model_error(trajectory.q, qd)
    noise = (
        sigma * rng.normal(size=tau.shape)
        if tau_c == 0
        else correlated_noise(trajectory.time, sigma, tau_c, rng=rng)
    )
    measured = k * tau + off + fc * np.sign(qd) + fv * qd + noise
    if model_error is not None:
        measured = measured + extra
    q = trajectory.q
    velocity = qd
    if enc > 0:
        q = q + enc * rng.normal(size=q.shape)
        velocity = np.gradient(q, trajectory.time, axis=0)
    if np.any(slow > 0):
        measured = measured + correlated_noise(trajectory.time, slow, tau_s, rng=rng)
    if np.any(zero != 0):
        q = q + zero
    (q, velocity, measured), bad = corrupt_rows(corrupted_rows, rng, q, velocity, measured)
    return MotionLog(
        trajectory.time, q, velocity, measured, tau, k, off, fc, fv, sigma, float(enc), extra,
        zero, tau_c, slow, tau_s, bad,
    )  # fmt: skip
