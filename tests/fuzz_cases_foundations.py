"""Fuzz cases for the foundations: frames, kinematics, errors and the synthetic arms and sensors.

Each case returns the arguments of one valid call; tests/test_fuzz.py replaces them in turn by
hostile variants. Arrays are numpy arrays and numbers are numbers so that the harness can mutate
them; chains and arms are passed as they are.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from gravdir.kinematics import chain_from_dh

_UP = np.array([0.3, -0.2, np.sqrt(1 - 0.13)])
_UPS = np.array([[0.3, -0.2, np.sqrt(1 - 0.13)], [0.0, 0.6, 0.8], [0.0, 0.0, -1.0]])


def _rotations() -> np.ndarray:
    angles = np.array([0.3, -1.2])
    c, s = np.cos(angles), np.sin(angles)
    r = np.zeros((2, 3, 3))
    r[:, 0, 0], r[:, 0, 1], r[:, 1, 0], r[:, 1, 1] = c, -s, s, c
    r[:, 2, 2] = 1.0
    return r


def _home_links() -> np.ndarray:
    links = np.broadcast_to(np.eye(4), (2, 4, 4)).copy()
    links[1, 0, 3] = 0.5
    return links


def _home_flange() -> np.ndarray:
    flange = np.eye(4)
    flange[0, 3] = 1.0
    return flange


_DH = np.array([[0.1, 0.0, 0.0, np.pi / 2], [0.0, 0.2, 0.5, 0.0], [0.0, 0.0, 0.4, 0.0]])

CASES: dict[str, Callable[[], tuple[tuple, dict]]] = {
    # gravdir.frames
    "gravdir.frames.angle_between": lambda: ((_UPS, np.array([1.0, 2.0, 0.5])), {}),
    "gravdir.frames.azimuth_from_up": lambda: ((_UPS,), {"atol": 1e-6, "vertical_atol": 1e-12}),
    "gravdir.frames.canonical_from_up": lambda: (
        (_UPS,),
        {"arm_azimuth": np.array([0.1, -0.4, 2.0]), "zero": "stable", "atol": 1e-6},
    ),
    "gravdir.frames.rotation_from_up": lambda: ((_UPS,), {"vertical_atol": 1e-12}),
    "gravdir.frames.rotation_matrix_from_up": lambda: ((_UPS,), {"atol": 1e-6}),
    "gravdir.frames.tilt_azimuth_from_up": lambda: ((_UPS,), {"vertical_atol": 1e-12}),
    "gravdir.frames.tilt_from_up": lambda: ((_UPS * 2.0,), {"normalize": True, "atol": 1e-6}),
    "gravdir.frames.up_from_canonical": lambda: (
        (np.array([0.4, -1.0]), np.array([0.2, 1.1])),
        {"arm_azimuth": 0.3},
    ),
    "gravdir.frames.up_from_tilt_azimuth": lambda: (
        (np.array([0.1, 0.5, 3.0]), np.array([-2.0, 0.0, 1.0])),
        {},
    ),
    "gravdir.frames.vector_in_target_frame": lambda: ((_UP, _rotations()), {}),
    # gravdir.kinematics
    "gravdir.kinematics.SerialChain": lambda: (
        (
            np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0]]),
            np.array([[0.0, 0.0, 0.0], [0.5, 0.0, 0.0]]),
            _home_links(),
            _home_flange(),
        ),
        {"description": "poe", "atol": 1e-6},
    ),
    "gravdir.kinematics.chain_from_dh": lambda: (
        (_DH[:, 0].copy(), _DH[:, 1].copy(), _DH[:, 2].copy(), _DH[:, 3].copy()),
        {"convention": "standard", "base": np.eye(4), "link_from_flange": _home_flange()},
    ),
    "gravdir.kinematics.chain_from_poe": lambda: (
        (
            np.array([[0.0, 0.0, 1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0, -0.5, 0.0]]),
            _home_flange(),
        ),
        {"home_links": _home_links(), "atol": 1e-6},
    ),
    "gravdir.kinematics.link_frames": lambda: (
        (
            chain_from_dh(_DH[:, 0], _DH[:, 1], _DH[:, 2], _DH[:, 3]),
            np.array([[0.1, -0.5, 1.0], [2.0, 0.3, -0.2]]),
        ),
        {},
    ),
    # gravdir.synthetic
    "gravdir.synthetic.robot.SyntheticArm": lambda: (
        (
            _DH,
            np.array([1.0, 2.0, 0.5]),
            np.array([[0.0, 0.1, 0.0], [-0.2, 0.0, 0.0], [0.1, 0, 0]]),
        ),
        {
            "up": _UP,
            "gravity": 9.81,
            "name": "fuzz",
            "inertias": np.array([np.diag([0.01, 0.02, 0.02]), np.eye(3) * 0.03, np.zeros((3, 3))]),
        },
    ),
    "gravdir.synthetic.robot.canonical_arm": lambda: (
        (),
        {"L1": 0.5, "L2": 0.1, "L3": -0.05, "gamma0": 0.2, "mass": 2.0, "up": _UP},
    ),
    "gravdir.synthetic.robot.iiwa_arm": lambda: ((_UP,), {"gravity": 9.81}),
    "gravdir.synthetic.robot.random_arm": lambda: (
        (np.random.default_rng(5), 4),
        {"max_tilt": 0.5, "link_length": 0.4, "mass_range": (0.5, 8.0)},
    ),
    "gravdir.synthetic.robot.up_from_base_tilt": lambda: (
        (np.array([0.1, 0.5, 3.0]), np.array([-2.0, 0.0, 1.0])),
        {},
    ),
    "gravdir.synthetic.robot.ur5_arm": lambda: ((_UP,), {"gravity": 9.81}),
    "gravdir.synthetic.sensors.TorqueSensor": lambda: (
        (),
        {
            "gain": 1.1,
            "offset": 0.2,
            "coulomb": 0.5,
            "viscous": 0.1,
            "load_coefficient": 0.02,
            "ripple_amplitude": 0.05,
            "ripple_order": 200.0,
            "ripple_phase": 0.3,
            "noise_std": 0.01,
        },
    ),
    "gravdir.synthetic.sensors.realistic_sensors": lambda: (
        (np.random.default_rng(1), np.array([40.0, 60.0, 0.0])),
        {"min_peak_fraction": 0.01},
    ),
}

NOT_CALLED: dict[str, str] = {
    "gravdir.errors.ConvergenceWarning": "a warning type gravdir issues, never called",
    "gravdir.errors.DegenerateGeometryError": "an exception type gravdir raises, never called",
    "gravdir.errors.SignConflictError": "an exception type gravdir raises, never called",
    "gravdir.errors.GravdirWarning": "a warning type gravdir issues, never called",
    "gravdir.errors.InsufficientDataError": "an exception type gravdir raises, never called",
    "gravdir.frames.CanonicalAngles": "a result returned by canonical_from_up",
    "gravdir.frames.TiltAzimuth": "a result returned by tilt_azimuth_from_up",
    "gravdir.kinematics.ChainFrames": "a result returned by link_frames",
    "gravdir.synthetic.robot.SweepRecord": "a result returned by SyntheticArm.sweep",
}
