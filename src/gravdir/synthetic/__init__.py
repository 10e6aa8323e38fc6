"""Synthetic robots and sensors for tests, examples, benchmarks and users' own pipelines.

Everything here is written independently of the estimators (explicit homogeneous transforms and
cross products), so a convention error cannot cancel out between the generator and gravdir: the
package imports no estimator module, only gravdir's validators, constants, result base and
frame conventions.
"""

from gravdir.synthetic.friction_joint import (
    SyntheticFrictionJoint,
    holding_torque,
    panda_like_joint,
)
from gravdir.synthetic.harmonic_drive import (
    HarmonicDriveJoint,
    JointRun,
    constant_speed_run,
    oscillating_run,
    simulate_run,
)
from gravdir.synthetic.robot import (
    SweepRecord,
    SyntheticArm,
    canonical_arm,
    iiwa_arm,
    random_arm,
    up_from_base_tilt,
    ur5_arm,
)
from gravdir.synthetic.sensors import (
    TorqueSensor,
    realistic_sensors,
)
from gravdir.synthetic.touch import (
    SyntheticTouches,
    touch_contacts,
)

__all__ = [
    "HarmonicDriveJoint",
    "JointRun",
    "SweepRecord",
    "SyntheticArm",
    "SyntheticFrictionJoint",
    "SyntheticTouches",
    "TorqueSensor",
    "canonical_arm",
    "constant_speed_run",
    "holding_torque",
    "iiwa_arm",
    "oscillating_run",
    "panda_like_joint",
    "random_arm",
    "realistic_sensors",
    "simulate_run",
    "touch_contacts",
    "up_from_base_tilt",
    "ur5_arm",
]
