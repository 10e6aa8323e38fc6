"""Valid calls of gravdir.general for the fuzz suite."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np

from gravdir.general import JointSweep, planned_sweep_from_chain
from gravdir.kinematics import SerialChain, chain_from_dh, link_frames
from gravdir.sweep import SweepFit, fit_sweep

Case = Callable[[], tuple[tuple[Any, ...], dict[str, Any]]]

# A two-joint arm (J2 perpendicular to J1), a tilted base and J2 swept at three J1 positions.
_UP = np.array([np.sin(0.3), 0.0, np.cos(0.3)])
_W = np.array([0.0, 9.81, 0.0])  # g (a x m) of J2 for a first moment along link x


def _chain() -> SerialChain:
    return chain_from_dh([0.2, 0.0], [0.0, 0.0], [0.0, 0.5], [np.pi / 2, 0.0])


@cache
def _fits() -> tuple[SweepFit, ...]:
    """Fits of J2 swept over 2 rad at J1 = 0, 90°, 180°, with seeded noise."""
    rng = np.random.default_rng(7)
    chain = _chain()
    q = np.concatenate([np.linspace(-1, 1, 100), np.linspace(1, -1, 100)])
    v = np.concatenate([np.full(100, 0.3), np.full(100, -0.3)])
    out = []
    for q1 in (0.0, np.pi / 2, np.pi):
        r = link_frames(chain, [q1, 0.0]).rotations[1]
        a = chain.axes_in_link[1]
        tau = np.cos(q)[:, None] * (r @ _W) + np.sin(q)[:, None] * (r @ np.cross(a, _W))
        torque = tau @ _UP + 0.2 * np.sign(v) + 0.01 * rng.standard_normal(q.size)
        out.append(fit_sweep(q, velocity=v, torque=torque))
    return tuple(out)


def _sweeps() -> list[JointSweep]:
    chain = _chain()
    return [
        JointSweep(1, link_frames(chain, [q1, 0.0]).rotations[1], chain.axes_in_link[1], 0.0, f)
        for q1, f in zip((0.0, np.pi / 2, np.pi), _fits(), strict=True)
    ]


_MASS = {"masses": np.array([1.0, 2.0]), "coms": np.zeros((2, 3))}


def _plans() -> list[Any]:
    return [
        planned_sweep_from_chain(_chain(), np.array([q1, 0.0]), 1, 2.0, noise_std=0.05, **_MASS)
        for q1 in (0.0, np.pi / 2, np.pi)
    ]


CASES: dict[str, Case] = {
    "gravdir.general.JointSweep": lambda: (
        (
            1,
            np.array(link_frames(_chain(), [0.5, 0.0]).rotations[1]),
            np.array([0.0, 0.0, 1.0]),
            0.25,
            _fits()[0],
        ),
        {},
    ),
    "gravdir.general.PlannedSweep": lambda: (
        (
            1,
            np.array(link_frames(_chain(), [0.5, 0.0]).rotations[1]),
            np.array([0.0, 0.0, 1.0]),
            0.25,
            np.concatenate([np.linspace(-0.75, 1.25, 50), np.linspace(1.25, -0.75, 50)]),
            np.concatenate([np.full(50, 0.5), np.full(50, -0.5)]),
            np.array([0.0, 9.81, 0.0]),
            0.05,
        ),
        {},
    ),
    "gravdir.general.estimate_up": lambda: (
        (_sweeps(),),
        {
            "up_hint": np.array([0.1, 0.2, 1.0]),
            "moment_hints": {1: np.array([1.0, 0.1, 0.0])},  # along link x, as `_W` says
            "n_grid": 200,
            "n_starts": 2,
            "max_iter": 20,
            "xtol": 1e-10,
            "parallel_tol": 1e-6,
            "covariance_floor": 1e-12,
            "rcond": 1e-10,
            "sign_tol": 0.05,
            "sign_nsigma": 3.0,
            "significance": 1e-6,
            "zero_rtol": 1e-9,
        },
    ),
    "gravdir.general.crlb_up": lambda: (
        (_plans(),),
        {
            "up_hint": np.array([0.1, 0.2, 1.0]),
            "min_speed": 0.05,
            "friction": "auto",
            "load_friction": "abs",
            "parallel_tol": 1e-6,
            "rcond": 1e-10,
        },
    ),
    "gravdir.general.joint_sweep_from_chain": lambda: (
        (_chain(), np.array([0.5, -0.2]), 1, _fits()[1]),
        {},
    ),
    "gravdir.general.moment_from_mass_model": lambda: (
        (
            _chain(),
            np.array([0.5, -0.2]),
            1,
            np.array([1.0, 2.0]),
            np.array([[0.0, 0.0, 0.0], [-0.2, 0.05, 0.01]]),
        ),
        {"gravity": 9.81},
    ),
    "gravdir.general.planned_sweep_from_chain": lambda: (
        (_chain(), np.array([0.5, -0.2]), 1, 1.5),
        {
            "noise_std": 0.05,
            "speed": 0.5,
            "sample_rate": 50.0,
            "gain": 1.1,
            "gravity": 9.81,
            **_MASS,
        },
    ),
    "gravdir.general.plan_sweeps": lambda: (
        (_chain(), np.array([0.0, 0.0])),
        {
            "noise_std": 0.05,
            "target_std": 0.01,
            "up_hint": np.array([0.1, 0.0, 1.0]),
            "joint": 1,
            "reference_joint": 0,
            "counts": (3, 4),
            "spacings": (np.pi / 2,),
            "arcs": (1.0, 2.0),
            "speed": 0.5,
            "sample_rate": 50.0,
            "load_friction": "none",
            "gravity": 9.81,
            **_MASS,
        },
    ),
    "gravdir.general.sweep_samples": lambda: (
        (0.25, 1.5, 0.5, 50.0),
        {"max_samples": 10_000},
    ),
}

NOT_CALLED: dict[str, str] = {
    "gravdir.general.UpEstimate": "a result, returned by estimate_up",
    "gravdir.general.UpBound": "a result, returned by crlb_up",
    "gravdir.general.SweepPlan": "a result, returned by plan_sweeps",
}
