"""gravdir: calibrate robot arms from their own sensors.

Public names are re-exported here from the modules that define them.
"""

from gravdir._checks import DegenerateGeometryError, GravdirWarning, InsufficientDataError
from gravdir.frames import (
    CanonicalAngles,
    TiltAzimuth,
    angle_between,
    azimuth_from_up,
    canonical_from_up,
    rotation_from_up,
    rotation_matrix_from_up,
    tilt_azimuth_from_up,
    tilt_from_up,
    up_from_canonical,
    up_from_tilt_azimuth,
    vector_in_target_frame,
)
from gravdir.kinematics import (
    ChainFrames,
    SerialChain,
    chain_from_dh,
    chain_from_modified_dh,
    chain_from_poe,
    link_frames,
)
from gravdir.sweep import (
    SweepFit,
    SweepZeros,
    amplitude_phase_bound,
    fit_sweep,
    fit_sweep_common_mode,
    wrap_angle,
)

__all__ = [
    "CanonicalAngles",
    "ChainFrames",
    "DegenerateGeometryError",
    "GravdirWarning",
    "InsufficientDataError",
    "SerialChain",
    "SweepFit",
    "SweepZeros",
    "TiltAzimuth",
    "amplitude_phase_bound",
    "angle_between",
    "azimuth_from_up",
    "canonical_from_up",
    "chain_from_dh",
    "chain_from_modified_dh",
    "chain_from_poe",
    "fit_sweep",
    "fit_sweep_common_mode",
    "link_frames",
    "rotation_from_up",
    "rotation_matrix_from_up",
    "tilt_azimuth_from_up",
    "tilt_from_up",
    "up_from_canonical",
    "up_from_tilt_azimuth",
    "vector_in_target_frame",
    "wrap_angle",
]

__version__ = "0.1.0"
