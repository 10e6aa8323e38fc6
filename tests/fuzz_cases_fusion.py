"""Fuzz cases for gravdir.fusion.

The estimates are results (the harness varies only the options): three gravity directions with
covariances, independent (empty fingerprints).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from gravdir.controllers import express_up

_T = np.radians(3.0)
_UPS = (
    np.array([np.sin(_T), 0.0, np.cos(_T)]),
    np.array([0.0, np.sin(_T), np.cos(_T)]),
    np.array([0.0, 0.0, 1.0]),
)


def _estimates() -> tuple:
    return tuple(
        express_up(u, np.eye(3), up_cov=np.diag([1e-4, 2e-4, 3e-4]) * (k + 1))
        for k, u in enumerate(_UPS)
    )


CASES: dict[str, Callable[[], tuple[tuple, dict]]] = {
    "gravdir.fusion.fuse_up": lambda: (
        _estimates(),
        {"model_error_std": "estimate", "significance": 0.01, "max_iter": 50, "xtol": 1e-12},
    ),
}

NOT_CALLED: dict[str, str] = {
    "gravdir.fusion.FusedEstimate": "a result returned by fuse_up",
    "gravdir.fusion.SharedDataError": "an error raised by fuse_up",
}
