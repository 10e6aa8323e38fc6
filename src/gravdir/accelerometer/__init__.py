"""Gravity from an accelerometer on any link of a serial chain.

:func:`up_from_accelerometer` estimates `up` jointly with the sensor's scale factors,
non-orthogonality, mounting rotation and bias from static (time-averaged) readings at several
joint configurations; :func:`crlb_up_from_accelerometer` is its Cramér-Rao bound, joint-encoder
noise included, and :func:`plan_accelerometer_poses` chooses the configurations to visit.
"""

from gravdir.accelerometer._bound import (
    AccelerometerBound,
    AccelerometerPlan,
    crlb_up_from_accelerometer,
    plan_accelerometer_poses,
)
from gravdir.accelerometer._estimate import AccelerometerFit, up_from_accelerometer

__all__ = [
    "AccelerometerBound",
    "AccelerometerFit",
    "AccelerometerPlan",
    "crlb_up_from_accelerometer",
    "plan_accelerometer_poses",
    "up_from_accelerometer",
]
