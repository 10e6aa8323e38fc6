"""Synthetic arms from URDF robot descriptions, and the text of a UR5e-like arm.

:func:`arm_from_urdf` builds a :class:`SyntheticUrdfArm` -- the same methods as
:class:`~gravdir.synthetic.robot.SyntheticArm` (holding torques, joint inertias, mass matrix,
inverse dynamics, sweeps) -- from the joints and ``<inertial>`` elements of a URDF, parsed by
:mod:`gravdir.urdf`. :data:`UR5E_LIKE_URDF` is a URDF written for gravdir, so that examples can
start from URDF text as a user with a real arm does.
"""

from gravdir.synthetic._ur5e import UR5E_LIKE_URDF
from gravdir.synthetic._urdf_arm import SyntheticUrdfArm, arm_from_urdf

__all__ = ["UR5E_LIKE_URDF", "SyntheticUrdfArm", "arm_from_urdf"]
