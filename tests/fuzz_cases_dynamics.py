"""Fuzz cases for gravdir.dynamics.

A three-joint DH chain at a batch of two states, gravity given by `up`; the inertial parameters
of two links; the per-joint columns of a batch of two samples.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from gravdir.kinematics import SerialChain, chain_from_dh

_DH = np.array([[0.1, 0.0, 0.0, np.pi / 2], [0.0, 0.2, 0.5, 0.0], [0.0, 0.0, 0.4, 0.0]])


def _chain() -> SerialChain:
    return chain_from_dh(_DH[:, 0], _DH[:, 1], _DH[:, 2], _DH[:, 3])


CASES: dict[str, Callable[[], tuple[tuple, dict]]] = {
    "gravdir.dynamics.inverse_dynamics_regressor": lambda: (
        (
            _chain(),
            np.array([[0.1, -0.5, 1.0], [2.0, 0.3, -0.2]]),
            np.array([[0.5, 1.0, -2.0], [0.0, -0.3, 0.7]]),
            np.array([[3.0, -1.0, 0.2], [-2.0, 0.0, 4.0]]),
        ),
        {"up": np.array([0.0, 0.6, 0.8]), "gravity": 9.81},
    ),
    "gravdir.dynamics.inertial_parameters": lambda: (
        (
            np.array([2.0, 0.5]),
            np.array([[0.1, 0.0, 0.2], [0.0, -0.1, 0.05]]),
            np.array([np.diag([0.02, 0.03, 0.04]), np.diag([0.01, 0.01, 0.015])]),
        ),
        {},
    ),
    "gravdir.dynamics.joint_regressor": lambda: (
        (
            np.array([[0.5, -1.0, 0.0], [1.0, 2.0, -0.5]]),
            np.array([[1.0, 0.0, -2.0], [0.3, -0.4, 0.5]]),
        ),
        {},
    ),
}
