"""Synthetic motion logs: random finite-Fourier joint trajectories and what a controller logs.

:func:`fourier_trajectory` draws a smooth periodic trajectory per joint -- a finite Fourier
series, the excitation form of identification practice -- with its exact positions, velocities
and accelerations. :func:`motion_log` turns the actuator torques of that trajectory (computed by
the caller from an arm model, e.g. ``SyntheticUrdfArm.inverse_dynamics``) into the log a
controller records: per-joint torque gains and offsets, Coulomb and viscous friction, torque
noise, and joint positions with encoder noise whose velocities are differences of the noisy
positions. Nothing here imports an estimator.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import check_array, check_count, check_per_joint, check_positive
from gravdir._results import Result

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
    }

    time: NDArray[np.float64]
    q: NDArray[np.float64]
    velocity: NDArray[np.float64]
    acceleration: NDArray[np.float64]
    q0: NDArray[np.float64]
    sine: NDArray[np.float64]
    cosine: NDArray[np.float64]
    base_frequency: float

    def __repr__(self) -> str:
        n_samples, n = self.q.shape
        return (
            f"FourierTrajectory(n_joints={n}, n_samples={n_samples}, "
            f"duration={float(self.time[-1] - self.time[0]):.6g} s, "
            f"base_frequency={self.base_frequency:.6g} Hz, harmonics={self.sine.shape[1]})"
        )


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
) -> FourierTrajectory:
    """A random finite-Fourier trajectory of every joint, sampled at `sample_rate`.

    Parameters
    ----------
    n_joints : int
        Number of joints, 1 to 64.
    duration : float
        Length, s, positive.
    sample_rate : float
        Samples per second, positive (at most 5e6 samples in all).
    rng : numpy.random.Generator
        Source of the coefficients.
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

    Returns
    -------
    FourierTrajectory

    Raises
    ------
    ValueError
        If a count, duration, rate or limit is out of range, or `rng` is not a generator.

    Examples
    --------
    >>> traj = fourier_trajectory(3, 2.0, 100.0, rng=np.random.default_rng(0))
    >>> traj.q.shape
    (201, 3)
    >>> bool(np.abs(traj.velocity).max() <= 1.5)
    True
    """
    n = check_count(n_joints, "n_joints", maximum=_MAX_JOINTS)
    span = check_positive(duration, "duration")
    rate = check_positive(sample_rate, "sample_rate")
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"Expected `rng` to be a numpy.random.Generator, got {rng!r}.")
    harmonics = check_count(n_harmonics, "n_harmonics", maximum=_MAX_HARMONICS)
    f = check_positive(base_frequency, "base_frequency")
    vmax = check_positive(max_velocity, "max_velocity")
    amax = check_positive(max_amplitude, "max_amplitude")
    n_samples = int(np.floor(span * rate)) + 1
    if n_samples > _MAX_SAMPLES:
        raise ValueError(
            f"Expected `duration` * `sample_rate` to give at most {_MAX_SAMPLES} samples, got "
            f"{n_samples}."
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
    time = np.arange(n_samples) / rate
    phase = time[:, None] * omega[None, :]
    s, c = np.sin(phase), np.cos(phase)
    q = centre + s @ a.T + c @ b.T
    velocity = (c * omega) @ a.T - (s * omega) @ b.T
    acceleration = -(s * omega**2) @ a.T - (c * omega**2) @ b.T
    return FourierTrajectory(time, q, velocity, acceleration, centre, a, b, f)


@dataclass(frozen=True, eq=False, repr=False)
class MotionLog(Result):
    """What a controller logs while the arm moves, and the truth behind it.

    Attributes
    ----------
    time : ndarray, shape (N,)
        Sample times, s.
    q : ndarray, shape (N, n)
        Logged joint positions (with encoder noise), rad.
    velocity : ndarray, shape (N, n)
        Logged joint velocities, rad/s: central differences of the logged positions (one-sided
        at the ends) when there is encoder noise, the exact velocities otherwise.
    torque : ndarray, shape (N, n)
        Logged torques: ``gains * actuator + offsets + coulomb sign(q̇) + viscous q̇ + noise``.
    actuator_torque : ndarray, shape (N, n)
        The actuator torques given (rigid-body dynamics), N·m.
    gains, offsets, coulomb, viscous, noise_std : ndarray, shape (n,)
        The sensor errors used (offsets, friction and noise in logged-torque units).
    encoder_noise_std : float
        Standard deviation of the position noise, rad.
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

    def __repr__(self) -> str:
        n_samples, n = self.q.shape
        return (
            f"MotionLog(n_joints={n}, n_samples={n_samples}, gains={np.round(self.gains, 4)}, "
            f"noise_std={np.round(self.noise_std, 6)} N·m, "
            f"encoder_noise_std={self.encoder_noise_std:.3g} rad)"
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
) -> MotionLog:
    """The log of a trajectory: measured torques with sensor errors, noisy joint positions.

    Parameters
    ----------
    trajectory : FourierTrajectory
        The motion (:func:`fourier_trajectory`).
    torque : array_like, shape (N, n)
        Actuator torques along it from an arm model (rigid-body dynamics on the tilted base), N·m.
    rng : numpy.random.Generator
        Source of the noise.
    gains : float or array_like, shape (n,), optional
        Torque gain per joint, positive (default 1).
    offsets : float or array_like, shape (n,), optional
        Torque offset per joint (default 0).
    coulomb, viscous : float or array_like, shape (n,), optional
        Coulomb level (N·m) and viscous coefficient (N·m·s/rad) per joint, non-negative; they
        add with the sign of the velocity (the actuator supplies the friction).
    noise_std : float or array_like, shape (n,), optional
        White torque noise per joint, non-negative.
    encoder_noise_std : float, optional
        White noise on the logged positions, rad, non-negative. When positive, the logged
        velocities are central differences of the noisy positions, as a controller derives them.

    Returns
    -------
    MotionLog

    Raises
    ------
    ValueError
        If `trajectory` is not a :class:`FourierTrajectory`, `torque` does not match its shape
        or is not finite, or an error level is out of range.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> traj = fourier_trajectory(2, 1.0, 100.0, rng=rng)
    >>> log = motion_log(traj, np.ones_like(traj.q), rng=rng, gains=[1.1, 0.9], offsets=0.5)
    >>> log.torque[0].round(6).tolist()
    [1.6, 1.4]
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
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"Expected `rng` to be a numpy.random.Generator, got {rng!r}.")
    k = check_per_joint(gains, "gains", n)
    off = check_per_joint(offsets, "offsets", n, sign="any")
    fc = check_per_joint(coulomb, "coulomb", n, sign="non-negative")
    fv = check_per_joint(viscous, "viscous", n, sign="non-negative")
    sigma = check_per_joint(noise_std, "noise_std", n, sign="non-negative")
    enc = check_positive(encoder_noise_std, "encoder_noise_std", allow_zero=True)
    qd = trajectory.velocity
    measured = k * tau + off + fc * np.sign(qd) + fv * qd + sigma * rng.normal(size=tau.shape)
    q = trajectory.q
    velocity = qd
    if enc > 0:
        q = q + enc * rng.normal(size=q.shape)
        velocity = np.gradient(q, trajectory.time, axis=0)
    return MotionLog(trajectory.time, q, velocity, measured, tau, k, off, fc, fv, sigma, float(enc))
