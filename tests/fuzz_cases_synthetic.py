"""Fuzz cases for the synthetic URDF arms and controller logs of gravdir.synthetic.

The URDF text is a string, which the harness does not mutate; the arm, the sensors and the
generator are objects it passes through unchanged. The methods of the arms get the same hostile
variants in tests/test_synthetic_dynamics.py.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from fuzz_cases_urdf import URDF_TEXT

from gravdir.synthetic import TorqueSensor, arm_from_urdf, ur5_arm

_UP = np.array([0.1, -0.2, np.sqrt(1 - 0.05)])


def _urdf_arm_fields() -> tuple[tuple, dict]:
    arm = arm_from_urdf(URDF_TEXT, base_link="base", tip_link="tool")
    return (
        (np.array(arm.origins), np.array(arm.axes), np.array(arm.masses), np.array(arm.coms)),
        {
            "up": _UP,
            "gravity": 9.81,
            "name": "fuzz",
            "inertias": np.array(arm.inertias),
            "joint_names": ("shoulder", "elbow"),
        },
    )


def _log_case() -> tuple[tuple, dict]:
    config = np.array([0.0, -1.5, 1.0, -1.0, 0.5, 0.0])
    sensors = tuple(
        TorqueSensor(
            gain=1.05, offset=0.1, coulomb=0.3, viscous=0.2, noise_std=0.05,
            noise_correlation_time=0.05,
        )  # fmt: skip
        for _ in range(6)
    )
    return (
        (
            ur5_arm(_UP),
            np.array([0, 1]),
            np.stack([config, config + 0.1]),
            np.array([[-0.4, 0.4], [-1.8, -1.2]]),
            np.array([0.5, 0.4]),
            sensors,
            np.random.default_rng(11),
        ),
        {
            "sample_rate": 50.0,
            "ramp_time": 0.2,
            "cycles": 1,
            "time_jitter": 0.001,
            "drive_gain": np.array([10.0, 10.0, 10.0, 5.0, 5.0, 5.0]),
            "rest_time": 0.2,
        },
    )


CASES: dict[str, Callable[[], tuple[tuple, dict]]] = {
    "gravdir.synthetic.urdf_arm.SyntheticUrdfArm": _urdf_arm_fields,
    "gravdir.synthetic.urdf_arm.arm_from_urdf": lambda: (
        (URDF_TEXT,),
        {"base_link": "base", "tip_link": "tool", "up": _UP, "gravity": 9.81, "name": "fuzz"},
    ),
    "gravdir.synthetic.logs.controller_log": _log_case,
}

NOT_CALLED: dict[str, str] = {
    "gravdir.synthetic.logs.ControllerLog": "a result returned by controller_log",
}
