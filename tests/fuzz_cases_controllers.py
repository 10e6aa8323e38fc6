"""Fuzz cases for gravdir.controllers.

`up` and its covariance are given as arrays so that the harness varies them; every setting is
also run through the harness's variants in tests/test_controllers.py.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

# A unit `up` tilted 7 degrees towards azimuth 25 degrees, and a covariance that is positive
# definite in its tangent plane.
_T, _A = np.radians(7.0), np.radians(25.0)
UP = np.array([np.sin(_T) * np.cos(_A), np.sin(_T) * np.sin(_A), np.cos(_T)])
UP_COV = np.diag([1e-6, 2e-6, 3e-6])
# A rotation by 30 degrees about (1, 2, 2) / 3.
_K = np.array([1.0, 2.0, 2.0]) / 3.0
_KX = np.array([[0.0, -_K[2], _K[1]], [_K[2], 0.0, -_K[0]], [-_K[1], _K[0], 0.0]])
ROTATION = np.eye(3) + np.sin(np.pi / 6) * _KX + (1 - np.cos(np.pi / 6)) * _KX @ _KX
INSTALLED = np.array([0.0, 0.0, 1.0])

CASES: dict[str, Callable[[], tuple[tuple, dict]]] = {
    "gravdir.controllers.express_up": lambda: (
        (UP.copy(), ROTATION.copy()),
        {"up_cov": UP_COV.copy(), "frame": "new"},
    ),
    "gravdir.controllers.setting_from_up": lambda: (
        (UP.copy(), "ur_set_gravity"),
        {"gravity": 9.81, "up_cov": UP_COV.copy()},
    ),
    "gravdir.controllers.up_from_setting": lambda: (
        ("ur_set_gravity", np.array([0.1, -0.2, 9.8])),
        {"values_cov": np.diag([1e-4, 2e-4, 3e-4])},
    ),
    "gravdir.controllers.compare_setting": lambda: (
        (UP.copy(), INSTALLED.copy()),
        {"up_cov": UP_COV.copy()},
    ),
}

NOT_CALLED: dict[str, str] = {
    "gravdir.controllers.GravityDirection": "a result returned by express_up and up_from_setting",
    "gravdir.controllers.ControllerSetting": "a result returned by setting_from_up",
    "gravdir.controllers.SettingCheck": "a result returned by compare_setting",
}
