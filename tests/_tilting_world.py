"""A UR5e-like arm on a base whose `up` may change with time: the synthetic world of the
tracker's tests (`tests/test_motion_track.py`) and of `benchmarks/motion_tracking.py`.

The torques come from the synthetic UR5e-like arm (explicit Newton-Euler with cross products,
`gravdir.synthetic`), not from the regressor the tracker uses. A base whose tilt changes is
simulated through the linearity of the dynamics in gravity:
tau(q, qd, qdd, up) = tau_dyn(q, qd, qdd) + sum_k up_k tau_g(q; e_k), with tau_g(q; e_k) the
holding torques of the same arm on a base whose `up` is e_k (the slow rotation of the base
itself, 5° in 30 s, adds inertial torques below 1e-5 N·m and is left out). The sensor errors
are those of the design notes: gains 0.85-1.15, offsets ±3 %, Coulomb 2-10 % and viscous
friction, white noise 0.5 % of each joint's peak gravity torque (floored at 2 N·m for the wrist
joints, whose gravity torque is near zero). The inertial parameters, gains and friction are
identified once, by `estimate_up_from_motion` on 20 s of a faster excitation at 500 Hz.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from gravdir.motion import MotionFit, estimate_up_from_motion
from gravdir.synthetic import UR5E_LIKE_URDF, arm_from_urdf
from gravdir.synthetic.motion import fourier_trajectory, motion_log
from gravdir.urdf import chain_from_urdf

CHAIN = chain_from_urdf(UR5E_LIKE_URDF, tip_link="tool0")
ARMS = [arm_from_urdf(UR5E_LIKE_URDF, tip_link="tool0", up=e) for e in np.eye(3)]
HOME = np.array([0.0, -1.3, 1.3, -1.5, -1.5, 0.0])
PEAK = np.maximum(ARMS[2].peak_gravity_torque(), 2.0)


def torques(traj: Any, up: np.ndarray) -> np.ndarray:
    """Actuator torques of `traj` with `up` (3,) or one per sample (N, 3)."""
    hold = np.stack([arm.gravity_torque(traj.q) for arm in ARMS], axis=-1)  # (N, n, 3)
    dyn = ARMS[2].inverse_dynamics(traj.q, traj.velocity, traj.acceleration) - hold[..., 2]
    return dyn + np.einsum("tjk,tk->tj", hold, np.broadcast_to(up, (traj.q.shape[0], 3)))


def sensor_errors(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Gains, offsets, friction and noise of the torque sensors, drawn."""
    return {
        "gains": rng.uniform(0.85, 1.15, 6),
        "offsets": rng.uniform(-0.03, 0.03, 6) * PEAK,
        "coulomb": rng.uniform(0.02, 0.10, 6) * PEAK,
        "viscous": rng.uniform(0.01, 0.05, 6) * PEAK,
        "noise_std": 0.005 * PEAK,
    }


def log_of(
    traj: Any,
    up: np.ndarray,
    errors: dict[str, np.ndarray],
    rng: np.random.Generator,
    noise_scale: float = 1.0,
) -> Any:
    """The logged motion of `traj` with `up` and the sensor `errors`, the noise scaled."""
    errs = dict(errors, noise_std=errors["noise_std"] * noise_scale)
    return motion_log(traj, torques(traj, up), rng=rng, **errs)


def ordinary(duration: float, rate: float, rng: np.random.Generator, **kwargs: Any) -> Any:
    """Ordinary motion: a random finite-Fourier trajectory with the defaults of the synthetic
    module (speeds up to about 1 rad/s)."""
    return fourier_trajectory(
        6, duration, rate, rng=rng, q0=HOME + rng.uniform(-0.3, 0.3, 6), **kwargs
    )


def identify(rng: np.random.Generator, errors: dict[str, np.ndarray], up: np.ndarray) -> MotionFit:
    """The arm identified by `estimate_up_from_motion` on 20 s of a fast excitation at 500 Hz on
    a base with `up` (its warnings silenced: the log is white-noise synthetic)."""
    traj = fourier_trajectory(
        6,
        20.0,
        500.0,
        rng=rng,
        max_velocity=4.0,
        max_amplitude=2.5,
        q0=HOME + rng.uniform(-0.3, 0.3, 6),
    )
    log = log_of(traj, up, errors, rng)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return estimate_up_from_motion(
            CHAIN,
            log.time,
            q=log.q,
            velocity=log.velocity,
            torque=log.torque,
            acceleration=traj.acceleration,
        )
