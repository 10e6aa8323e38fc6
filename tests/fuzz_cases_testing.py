"""Fuzz cases for gravdir.testing: its strategies and its uncertainty-aware assertions.

The strategies validate their arguments when called and return the same strategy object for
equal arguments; the assertions raise `InconsistentEstimateError`, a `ValueError` naming the
argument, when an input makes the estimate disagree with the truth.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np


class Estimate(NamedTuple):
    """A user's own result: `up` and its covariance (a tuple, so the harness compares values)."""

    up: np.ndarray
    up_cov: np.ndarray


_UP = np.array([0.3, -0.2, np.sqrt(1 - 0.13)])
_COV = 1e-6 * (np.eye(3) - np.outer(_UP, _UP))


def _errors() -> tuple[tuple, dict]:
    rng = np.random.default_rng(0)
    cov = np.array([[2.0, 0.3], [0.3, 1.0]])
    return (rng.multivariate_normal([0.0, 0.0], cov, size=50), np.tile(cov, (50, 1, 1))), {}


def _up_results() -> tuple[tuple, dict]:
    rng = np.random.default_rng(1)
    results = []
    for _ in range(40):
        v = _UP + rng.normal(0.0, 1e-3, 3)
        u = v / np.linalg.norm(v)
        results.append(Estimate(up=u, up_cov=1e-6 * (np.eye(3) - np.outer(u, u))))
    return (results, _UP.copy()), {"p": 1e-3}


CASES: dict[str, Callable[[], tuple[tuple, dict]]] = {
    "gravdir.testing.tilts": lambda: ((0.1, 0.5), {}),
    "gravdir.testing.azimuths": lambda: ((), {}),
    "gravdir.testing.ups": lambda: ((0.1, 0.5), {}),
    "gravdir.testing.mounts": lambda: ((("floor", "wall"),), {"max_deviation": 0.2}),
    "gravdir.testing.serial_chains": lambda: (
        (3, 6),
        {"kinds": ("random", "ur5"), "conventions": ("modified",), "link_length": 0.5},
    ),
    "gravdir.testing.arms": lambda: ((3, 6), {"kinds": ("random", "ur5"), "transverse_j2": True}),
    "gravdir.testing.sensor_errors": lambda: (
        (np.array([10.0, 20.0, 5.0]),), {"noise": False, "max_correlation_time": 0.1}
    ),
    "gravdir.testing.sweep_experiments": lambda: ((), {"n_sweeps": 2, "min_amplitude": 0.3}),
    "gravdir.testing.touch_sets": lambda: ((6, 10), {"max_tilt": 0.2, "max_noise": 1e-4}),
    "gravdir.testing.harmonic_drive_joints": lambda: ((), {"noise": False}),
    "gravdir.testing.friction_joints": lambda: ((), {"noise": True}),
    "gravdir.testing.motion_phenomena": lambda: (
        (3,),
        {"duration": 10.0, "sample_rate": 50.0, "scale": 2.0, "corrupt": True},
    ),
    "gravdir.testing.assert_within_uncertainty": lambda: (
        (np.array([1.0, 2.0]), np.array([0.1, 0.2]), np.array([1.05, 2.1])),
        {"nsigma": 3.0, "atol": 1e-12},
    ),
    "gravdir.testing.up_error_tangent": lambda: ((_UP.copy(), np.array([0.0, 0.0, 1.0])), {}),
    "gravdir.testing.assert_up_consistent": lambda: (
        (Estimate(up=_UP.copy(), up_cov=_COV.copy()), _UP.copy()),
        {"nsigma": 4.0},
    ),
    "gravdir.testing.assert_covariance_honest": _errors,
    "gravdir.testing.assert_up_covariance_honest": _up_results,
    "gravdir.testing.assert_tilt_azimuth_consistent": lambda: (
        (float(np.arccos(_UP[2])), float(np.arctan2(_UP[1], _UP[0])), _UP.copy(), _COV.copy()),
        {"nsigma": 5.0},
    ),
}

NOT_CALLED: dict[str, str] = {
    "gravdir.testing.Mount": "a record drawn by mounts",
    "gravdir.testing.ChainCase": "a record drawn by serial_chains",
    "gravdir.testing.SweepExperiment": "a record drawn by sweep_experiments",
    "gravdir.testing.MotionPhenomena": "a record drawn by motion_phenomena",
    "gravdir.testing.InconsistentEstimateError": "the failure the assertions raise",
}
