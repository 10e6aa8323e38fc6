"""gravdir: calibrate robot arms from their own sensors.

Public names are re-exported here from the modules that define them.
"""

from gravdir._checks import DegenerateGeometryError, GravdirWarning, InsufficientDataError
from gravdir.sweep import (
    SweepFit,
    SweepZeros,
    amplitude_phase_bound,
    fit_sweep,
    fit_sweep_common_mode,
    wrap_angle,
)

__all__ = [
    "DegenerateGeometryError",
    "GravdirWarning",
    "InsufficientDataError",
    "SweepFit",
    "SweepZeros",
    "amplitude_phase_bound",
    "fit_sweep",
    "fit_sweep_common_mode",
    "wrap_angle",
]

__version__ = "0.1.0"
