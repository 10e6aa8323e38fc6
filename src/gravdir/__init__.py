"""gravdir: calibrate robot arms from their own sensors.

Public names are re-exported here from the modules that define them.
"""

from gravdir._checks import DegenerateGeometryError, GravdirWarning, InsufficientDataError

__all__ = [
    "DegenerateGeometryError",
    "GravdirWarning",
    "InsufficientDataError",
]

__version__ = "0.1.0"
