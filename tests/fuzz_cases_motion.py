"""Fuzz cases for gravdir.motion, gravdir.synthetic.motion, its real-log phenomena
(gravdir.synthetic.random_model_error, correlated_noise) and gravdir.dynamics.base_parameters.

A three-joint DH chain on a base tilted by about 20°, a 3 s Fourier trajectory at 100 Hz (2 s at
40 Hz for the estimator, whose call is the costly one), torques from the regressor with two
inertial parameter sets; :func:`instances` gives the contract test real results of every new
type.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np

from gravdir.dynamics import base_parameters, inverse_dynamics_regressor
from gravdir.kinematics import SerialChain, chain_from_dh
from gravdir.motion import crlb_up_from_motion, estimate_up_from_motion
from gravdir.synthetic import random_model_error
from gravdir.synthetic.motion import fourier_trajectory, motion_log

_DH = np.array([[0.1, 0.0, 0.0, np.pi / 2], [0.0, 0.2, 0.5, 0.0], [0.0, 0.0, 0.4, np.pi / 2]])
_UP = np.array([0.2, 0.25, 0.947])
_UP = _UP / np.linalg.norm(_UP)
_PI = np.concatenate(
    [
        [3.0, 0.05, 0.02, 0.1, 0.2, 0.0, 0.2, 0.0, 0.0, 0.1],
        [2.0, 0.3, 0.05, 0.02, 0.05, 0.01, 0.3, 0.0, 0.0, 0.3],
        [1.0, 0.1, 0.05, 0.2, 0.1, 0.0, 0.1, 0.01, 0.0, 0.05],
    ]
)


def _chain() -> SerialChain:
    return chain_from_dh(_DH[:, 0], _DH[:, 1], _DH[:, 2], _DH[:, 3])


@cache
def _log(
    duration: float = 3.0, rate: float = 100.0
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A log of the three-joint arm; the estimator's case takes 2 s at 40 Hz: enough for a
    determined `up`, small enough that every hostile variant of its call stays far below the
    suite's time limit."""
    rng = np.random.default_rng(5)
    traj = fourier_trajectory(3, duration, rate, rng=rng, base_frequency=0.5, max_velocity=2.0)
    tau = (
        inverse_dynamics_regressor(_chain(), traj.q, traj.velocity, traj.acceleration, up=_UP) @ _PI
    )
    tau = tau * np.array([1.1, 0.95, 1.0]) + 0.2 * np.sign(traj.velocity)
    tau = tau + 0.01 * rng.normal(size=tau.shape)
    return traj.q, traj.velocity, traj.acceleration, tau


def _estimate_case() -> tuple[tuple, dict]:
    q, qd, qdd, tau = _log(2.0, 40.0)
    return (_chain(), np.arange(q.shape[0]) / 40.0), {
        "q": q.copy(),
        "velocity": qd.copy(),
        "acceleration": qdd.copy(),
        "torque": tau.copy(),
        "covariance": "hac",
        "bandwidth": 0.5,
        "n_grid": 60,
        "n_starts": 1,
        "max_iter": 50,
    }


def _chunks_case() -> tuple[tuple, dict]:
    """The log of `_estimate_case` in three chunks."""
    (chain, time), kwargs = _estimate_case()
    series = {k: kwargs.pop(k) for k in ("q", "velocity", "acceleration", "torque")}
    cuts = [0, time.size // 3, 2 * time.size // 3, time.size]
    chunks = [
        {"time": time[a:b], **{k: x[a:b] for k, x in series.items()}}
        for a, b in zip(cuts[:-1], cuts[1:], strict=True)
    ]
    return (chain, chunks), kwargs


def _bound_case() -> tuple[tuple, dict]:
    q, qd, qdd, _ = _log()
    return (_chain(), q.copy()), {
        "velocity": qd.copy(),
        "acceleration": qdd.copy(),
        "inertial_parameters": _PI.copy(),
        "joint_parameters": np.zeros((3, 4)),
        "gains": np.array([1.1, 0.95, 1.0]),
        "noise_std": np.array([0.01, 0.01, 0.01]),
        "up_hint": _UP.copy(),
    }


def _trajectory_case() -> tuple[tuple, dict]:
    return (3, 2.0, 50.0), {
        "rng": np.random.default_rng(1),
        "n_harmonics": 3,
        "time_jitter": 1e-3,
        "rate_error": 0.05,
        "gaps": 1,
        "max_gap_rows": 3,
        "rest_time": 0.2,
        "ramp_time": 0.4,
    }


def _log_case() -> tuple[tuple, dict]:
    rng = np.random.default_rng(2)
    traj = fourier_trajectory(2, 1.0, 50.0, rng=rng)
    return (traj, np.ones_like(traj.q)), {
        "rng": np.random.default_rng(3),
        "gains": np.array([1.1, 0.9]),
        "offsets": 0.5,
        "coulomb": np.array([0.1, 0.2]),
        "viscous": 0.05,
        "noise_std": 0.01,
        "encoder_noise_std": 1e-5,
        "noise_correlation_time": 0.05,
        "slow_noise_std": np.array([0.01, 0.02]),
        "slow_correlation_time": 0.5,
        "model_error": random_model_error(
            2, rng=np.random.default_rng(4), quadratic=2.0, harmonic_std=0.1
        ),
        "encoder_offsets": np.array([1e-3, -2e-3]),
        "corrupted_rows": 2,
    }


def _model_error_case() -> tuple[tuple, dict]:
    return (3,), {
        "rng": np.random.default_rng(4),
        "quadratic": np.array([6.0, 4.0, 0.5]),
        "harmonic_std": 0.5,
        "n_harmonics": 2,
    }


def _noise_case() -> tuple[tuple, dict]:
    time = np.arange(200) * 0.01 + np.random.default_rng(6).uniform(0.0, 0.002, 200)
    return (time, np.array([1.0, 2.0]), 0.1), {"rng": np.random.default_rng(5)}


CASES: dict[str, Callable[[], tuple[tuple, dict]]] = {
    "gravdir.dynamics.base_parameters": lambda: ((_chain(),), {"n_states": 30}),
    "gravdir.motion.estimate_up_from_motion": _estimate_case,
    "gravdir.motion.estimate_up_from_motion_chunks": _chunks_case,
    "gravdir.motion.crlb_up_from_motion": _bound_case,
    "gravdir.synthetic.motion.fourier_trajectory": _trajectory_case,
    "gravdir.synthetic.motion.motion_log": _log_case,
    "gravdir.synthetic.random_model_error": _model_error_case,
    "gravdir.synthetic.correlated_noise": _noise_case,
}

NOT_CALLED: dict[str, str] = {
    "gravdir.dynamics.BaseParameters": "a result, returned by base_parameters",
    "gravdir.motion.MotionFit": "a result, returned by estimate_up_from_motion",
    "gravdir.motion.MotionBound": "a result, returned by crlb_up_from_motion",
    "gravdir.synthetic.motion.FourierTrajectory": "a result, returned by fourier_trajectory",
    "gravdir.synthetic.motion.MotionLog": "a result, returned by motion_log",
    "gravdir.synthetic.ModelError": "a result, returned by random_model_error",
}


def instances(name: str) -> list[Any]:
    """Real results of the new result types, for the contract test."""
    make: dict[str, Callable[[], Any]] = {
        "BaseParameters": lambda: base_parameters(_chain()),
        "MotionFit": lambda: estimate_up_from_motion(*_estimate_case()[0], **_estimate_case()[1]),
        "MotionBound": lambda: crlb_up_from_motion(*_bound_case()[0], **_bound_case()[1]),
        "FourierTrajectory": lambda: fourier_trajectory(
            *_trajectory_case()[0], **_trajectory_case()[1]
        ),
        "MotionLog": lambda: motion_log(*_log_case()[0], **_log_case()[1]),
        "ModelError": lambda: random_model_error(*_model_error_case()[0], **_model_error_case()[1]),
    }
    return [make[name]()]
