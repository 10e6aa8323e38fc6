"""Frames and directions: `up` in the base frame and in target frames.

Conventions: `up` is the unit vector opposite to gravity, in the robot's base frame. A rotation
named ``base_from_target`` maps coordinates in the target frame to coordinates in the base frame
(its columns are the target frame's axes written in the base frame), so
``v_base = base_from_target @ v_target`` and ``v_target = base_from_target.T @ v_base``.

The module converts `up` to and from its equivalent descriptions:

* tilt and azimuth, ``up = (sin t cos a, sin t sin a, cos t)``
  (:func:`up_from_tilt_azimuth`, :func:`tilt_from_up`, :func:`azimuth_from_up`,
  :func:`tilt_azimuth_from_up`);
* the minimal rotation that maps base +z to `up` (:func:`rotation_matrix_from_up`,
  :func:`rotation_from_up`);
* the two angles of the canonical two-joint model, ``theta1`` (a joint-1 position) and
  ``theta2`` (the angle between `up` and the joint-1 axis) (:func:`up_from_canonical`,
  :func:`canonical_from_up`);

and measures angles between directions robustly (:func:`angle_between`, a building block
importable from this module only).

References
----------
US 11,446,825 B2 (the reference angles θ1, θ2 of FIGS. 5, 8, 9 and 11); CN 112476435 B,
claims 1 and 3 (a gravity direction expressed in a target frame).
"""

from gravdir.frames._canonical import CanonicalAngles, canonical_from_up, up_from_canonical
from gravdir.frames._common import Zero as Zero  # the `zero` option of the canonical angles
from gravdir.frames._rotation import rotation_from_up, rotation_matrix_from_up
from gravdir.frames._tilt import (
    TiltAzimuth,
    azimuth_from_up,
    tilt_azimuth_from_up,
    tilt_from_up,
    up_from_tilt_azimuth,
)
from gravdir.frames._vectors import angle_between, vector_in_target_frame

__all__ = [
    "CanonicalAngles",
    "TiltAzimuth",
    "angle_between",
    "azimuth_from_up",
    "canonical_from_up",
    "rotation_from_up",
    "rotation_matrix_from_up",
    "tilt_azimuth_from_up",
    "tilt_from_up",
    "up_from_canonical",
    "up_from_tilt_azimuth",
    "vector_in_target_frame",
]
