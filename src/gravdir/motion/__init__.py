"""Gravity direction from the robot's ordinary motion.

Joint positions, velocities and torques logged while an arm moves carry the direction of
gravity through the rigid-body dynamics. :func:`estimate_up_from_motion` estimates `up` by
maximum likelihood with the inertial parameters, per-joint torque gains, friction and offsets
solved out; :func:`crlb_up_from_motion` is the Cramér-Rao bound of a planned trajectory. The
derivation is on the *Motion* page of the documentation.
"""

from gravdir.motion._bound import MotionBound, crlb_up_from_motion
from gravdir.motion._chunks import estimate_up_from_motion_chunks, track_up_from_chunks
from gravdir.motion._estimate import estimate_up_from_motion
from gravdir.motion._excite import MotionExcitationPlan, plan_motion_excitation
from gravdir.motion._fit import MotionFit
from gravdir.motion._track import UpTrack, UpTracker, track_up

__all__ = [
    "MotionBound",
    "MotionExcitationPlan",
    "MotionFit",
    "UpTrack",
    "UpTracker",
    "crlb_up_from_motion",
    "estimate_up_from_motion",
    "estimate_up_from_motion_chunks",
    "plan_motion_excitation",
    "track_up",
    "track_up_from_chunks",
]
