"""Synthetic controller logs: a session of single-joint sweeps as plain numpy columns.

:func:`controller_log` records every joint of a :class:`~gravdir.synthetic.robot.SyntheticArm`
or :class:`~gravdir.synthetic.urdf_arm.SyntheticUrdfArm` through a session of sweeps, with the
moves and rests between them, as a controller logs it: time, joint angles, velocities, torques
and motor currents. The columns are plain arrays in SI units, ready for a table with a
controller's own column names (gravdir itself does not depend on pandas).
"""

from gravdir.synthetic._log import ControllerLog, controller_log

__all__ = ["ControllerLog", "controller_log"]
