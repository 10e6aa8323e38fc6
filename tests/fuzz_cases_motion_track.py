"""Fuzz cases for the tracker and the excitation planner of gravdir.motion.

A two-joint arm (joint 1 about base z, joint 2 horizontal), identified by
`estimate_up_from_motion` from 6 s of a two-tone motion at 100 Hz on a tilted base and tracked
over 1 s windows; the planner plans 4 s of two harmonics for the same arm. `example_track` and
`example_plan` give the instances of the result contract test.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from types import SimpleNamespace
from typing import Any

import numpy as np

from gravdir.dynamics import inertial_parameters, inverse_dynamics_regressor
from gravdir.kinematics import chain_from_dh
from gravdir.motion import (
    MotionExcitationPlan,
    UpTrack,
    estimate_up_from_motion,
    plan_motion_excitation,
    track_up,
)

_CHAIN = chain_from_dh([0.3, 0.0], [0.0, 0.0], [0.0, 0.5], [np.pi / 2, 0.0])
_THETA = inertial_parameters(
    [2.0, 3.0], [[0, 0, 0.1], [-0.2, 0, 0.05]], np.tile(np.eye(3) * 0.01, (2, 1, 1))
)


@cache
def _fit() -> Any:
    """A fit identified from the log below (a real MotionFit)."""
    t, q, v, tau, a = _log()
    return estimate_up_from_motion(_CHAIN, t, q=q, velocity=v, torque=tau, acceleration=a)


def _true_parameters() -> SimpleNamespace:
    return SimpleNamespace(
        up=np.array([0.0, 0.0, 1.0]),
        inertial_parameters=_THETA,
        gains=np.array([1.0, 1.05]),
        joint_parameters=np.array([[0.01, 0.1, 0.05, 0.2], [0.02, 0.2, 0.1, -0.1]]),
        noise_std=np.array([0.02, 0.03]),
        chain=_CHAIN,
        gravity=9.80665,
    )


@cache
def _log() -> tuple[np.ndarray, ...]:
    t = np.arange(0.0, 6.0, 0.01)
    q = np.stack([np.sin(0.9 * t), 0.8 * np.sin(1.3 * t) + 0.5], axis=-1)
    v = np.stack([0.9 * np.cos(0.9 * t), 1.04 * np.cos(1.3 * t)], axis=-1)
    a = np.stack([-0.81 * np.sin(0.9 * t), -1.352 * np.sin(1.3 * t)], axis=-1)
    up = np.array([np.sin(0.2), 0.0, np.cos(0.2)])
    fit = _true_parameters()
    tau = fit.gains * (inverse_dynamics_regressor(_CHAIN, q, v, a, up=up) @ _THETA)
    jp = fit.joint_parameters
    tau = tau + jp[:, 0] * a + jp[:, 1] * np.sign(v) + jp[:, 2] * v + jp[:, 3]
    tau = tau + np.random.default_rng(0).normal(0.0, 0.02, tau.shape)
    return t, q, v, tau, a


def example_track() -> UpTrack:
    t, q, v, tau, a = _log()
    return track_up(
        _fit(),
        t,
        q=q,
        velocity=v,
        torque=tau,
        acceleration=a,
        window=1.0,
        hop=0.5,
        bandwidth=0.5,
    )


def _plan_case() -> tuple[tuple[Any, ...], dict[str, Any]]:
    return (
        (_CHAIN, _THETA),
        {
            "duration": 4.0,
            "q_limits": np.array([[-2.0, 2.0], [-1.0, 2.0]]),
            "velocity_limits": np.array([1.5, 1.5]),
            "acceleration_limits": np.array([4.0, 4.0]),
            "noise_std": np.array([0.05, 0.05]),
            "torque_limits": np.array([40.0, 40.0]),
            "n_harmonics": 2,
            "n_grid": 40,
            "max_iter": 5,
        },
    )


def example_plan() -> MotionExcitationPlan:
    args, kwargs = _plan_case()
    return plan_motion_excitation(*args, **kwargs)


def _track_case() -> tuple[tuple[Any, ...], dict[str, Any]]:
    t, q, v, tau, a = _log()
    return (_fit(), t), {
        "q": q,
        "velocity": v,
        "acceleration": a,
        "torque": tau,
        "window": 1.0,
        "hop": 0.5,
        "bandwidth": 0.5,
    }


def _chunks_case() -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The log of `_track_case` in three chunks (acceleration derived)."""
    t, q, v, tau, _ = _log()
    cuts = [0, t.size // 3, 2 * t.size // 3, t.size]
    chunks = [
        {"time": t[a:b], "q": q[a:b], "velocity": v[a:b], "torque": tau[a:b]}
        for a, b in zip(cuts[:-1], cuts[1:], strict=True)
    ]
    return (_fit(), chunks), {"window": 1.0, "hop": 0.5, "bandwidth": 0.5}


CASES: dict[str, Callable[[], tuple[tuple, dict]]] = {
    "gravdir.motion.track_up": _track_case,
    "gravdir.motion.track_up_from_chunks": _chunks_case,
    "gravdir.motion.UpTracker": lambda: ((_fit(),), {"window": 1.0, "hop": 0.5, "bandwidth": 0.5}),
    "gravdir.motion.plan_motion_excitation": _plan_case,
}

NOT_CALLED: dict[str, str] = {
    "gravdir.motion.UpTrack": "result type, built by track_up and UpTracker",
    "gravdir.motion.MotionExcitationPlan": "result type, built by plan_motion_excitation",
}
