"""Valid calls of gravdir.friction and gravdir.synthetic.friction_joint for the fuzz suite."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from gravdir.friction import (
    CoulombViscousFriction,
    ExcitationPlan,
    FrictionFit,
    FrictionRun,
    excitation_trajectory,
    fit_friction,
)
from gravdir.synthetic.friction_joint import SyntheticFrictionJoint, holding_torque

Case = Callable[[], tuple[tuple[Any, ...], dict[str, Any]]]

AXIS = np.array([0.0, 1.0, 0.0])
UP = np.array([0.0, 0.0, 1.0])
FIRST_MOMENT = np.array([2.0, 0.0, 0.5])


def _plan() -> ExcitationPlan:
    """A short plan: four speeds over ±0.6 rad, 50 Hz (a few hundred samples)."""
    return excitation_trajectory(
        -0.6, 0.6, [0.01, 0.05, 0.2, 0.6], max_acceleration=3.0, sample_rate=50.0, cruise_time=0.3
    )


def _runs() -> dict[str, np.ndarray]:
    """Velocity, acceleration, gravity torque and the free and loaded torque of one joint."""
    plan = _plan()
    rng = np.random.default_rng(11)
    joint = SyntheticFrictionJoint(offset=0.2, noise_std=0.02)
    gravity = holding_torque(plan.q, joint_axis=AXIS, up=UP, first_moment=FIRST_MOMENT)
    free = joint.measure(plan.q, plan.velocity, plan.acceleration, rng=rng)
    loaded = joint.measure(
        plan.q, plan.velocity, plan.acceleration, gravity_torque=gravity, rng=rng
    )
    return {
        "velocity": np.array(plan.velocity),
        "acceleration": np.array(plan.acceleration),
        "gravity": gravity,
        "free": free,
        "loaded": loaded,
    }


def _run_pair() -> tuple[FrictionRun, FrictionRun]:
    d = _runs()
    return (
        FrictionRun(d["velocity"], acceleration=d["acceleration"], torque=d["free"]),
        FrictionRun(
            d["velocity"],
            acceleration=d["acceleration"],
            torque=d["loaded"],
            gravity_torque=d["gravity"],
        ),
    )


def _free_fit() -> FrictionFit:
    d = _runs()
    return fit_friction(
        d["velocity"],
        acceleration=d["acceleration"],
        torque=d["free"],
        model="stribeck",
        exponent=2.0,
    )


def _fit_friction() -> tuple[tuple[Any, ...], dict[str, Any]]:
    d = _runs()
    return (d["velocity"],), {
        "acceleration": d["acceleration"],
        "torque": d["loaded"],
        "gravity_torque": d["gravity"],
        "model": "stribeck",
        "exponent": 2.0,
        "min_speed": 1e-3,
        "speed_resolution": 0.05,
        "max_iter": 100,
    }


def _load_dependent_friction() -> tuple[tuple[Any, ...], dict[str, Any]]:
    d = _runs()
    return (_free_fit(), d["velocity"]), {
        "acceleration": d["acceleration"],
        "torque": d["loaded"],
        "gravity_torque": d["gravity"],
        "min_speed": 1e-3,
        "min_load": 1e-6,
    }


CASES: dict[str, Case] = {
    "gravdir.friction.CoulombViscousFriction": lambda: ((2.0, 1.5), {"offset": 0.1}),
    "gravdir.friction.StribeckFriction": lambda: (
        (2.0, 3.0, 0.05, 1.5),
        {"exponent": 2.0, "offset": 0.1},
    ),
    "gravdir.friction.AsymmetricStribeckFriction": lambda: (
        (2.0, 1.5, 3.0, 2.5, 0.05, 0.03, 1.0, 1.2),
        {"exponent_positive": 2.0, "exponent_negative": 1.5},
    ),
    "gravdir.friction.LoadDependentFriction": lambda: (
        (CoulombViscousFriction(2.0, 1.0),),
        {"load_coefficient": 0.05},
    ),
    "gravdir.friction.FrictionRun": lambda: (
        (_runs()["velocity"],),
        {
            "acceleration": _runs()["acceleration"],
            "torque": _runs()["loaded"],
            "gravity_torque": _runs()["gravity"],
        },
    ),
    "gravdir.friction.excitation_trajectory": lambda: (
        (-0.6, 0.6, np.array([0.01, 0.05, 0.2, 0.6])),
        {"max_acceleration": 3.0, "sample_rate": 50.0, "cruise_time": 0.3, "repeats": 2},
    ),
    "gravdir.friction.fit_friction": _fit_friction,
    "gravdir.friction.gravity_free_check": lambda: (
        (UP, AXIS, np.array([0.0, 0.0, 0.3]), np.array([0.4, 0.1, 0.3]), 4.0),
        {"tolerance": 0.01, "gravity": 9.81},
    ),
    "gravdir.friction.load_dependent_friction": _load_dependent_friction,
    "gravdir.friction.identify_joint_friction": lambda: (
        _run_pair(),
        {"model": "asymmetric-stribeck", "min_speed": 1e-3, "max_iter": 100},
    ),
    "gravdir.friction.identify_arm_friction": lambda: (
        ({"J1": _run_pair()},),
        {"model": "coulomb-viscous", "min_speed": 1e-3, "max_iter": 100},
    ),
    "gravdir.synthetic.friction_joint.SyntheticFrictionJoint": lambda: (
        (),
        {
            "coulomb_positive": 3.0,
            "static_negative": 3.8,
            "stribeck_velocity_negative": 0.03,
            "viscous_positive": 2.0,
            "exponent_positive": 2.0,
            "load_coefficient": 0.03,
            "inertia": 0.8,
            "offset": 0.1,
            "gain": 1.0,
            "noise_std": 0.05,
        },
    ),
    "gravdir.synthetic.friction_joint.panda_like_joint": lambda: ((), {"noise_std": 0.05}),
    "gravdir.synthetic.friction_joint.holding_torque": lambda: (
        (np.linspace(-1.2, 1.2, 50),),
        {"joint_axis": AXIS, "up": UP, "first_moment": FIRST_MOMENT, "gravity": 9.81},
    ),
}

NOT_CALLED: dict[str, str] = {
    "gravdir.friction.ArmFrictionFit": "result of identify_arm_friction",
    "gravdir.friction.ExcitationPlan": "result of excitation_trajectory",
    "gravdir.friction.FrictionFit": "result of fit_friction",
    "gravdir.friction.GravityFreeCheck": "result of gravity_free_check",
    "gravdir.friction.JointFrictionFit": "result of identify_joint_friction",
    "gravdir.friction.LoadFrictionFit": "result of load_dependent_friction",
}
