"""Synthetic robots and sensors for tests, examples, benchmarks and users' own pipelines.

Arms from a DH table (:mod:`~gravdir.synthetic.robot`) or from URDF text
(:mod:`~gravdir.synthetic.urdf_arm`), torque sensors with realistic errors
(:mod:`~gravdir.synthetic.sensors`), recorded sweeps and whole controller logs
(:mod:`~gravdir.synthetic.logs`), motion logs with what real logs hold beyond white noise
(:mod:`~gravdir.synthetic.motion`, :func:`random_model_error`, :func:`correlated_noise`), touch
data, friction joints and harmonic drives.

Everything here is written independently of the estimators (explicit homogeneous transforms and
cross products), so a convention error cannot cancel out between the generator and gravdir: the
package imports no estimator module, only gravdir's validators, constants, result base, URDF
parser and frame conventions.
"""

from gravdir.synthetic._phenomena import ModelError, correlated_noise, random_model_error
from gravdir.synthetic.accelerometer import (
    AccelerometerReadings,
    AccelerometerSensor,
    accelerometer_readings,
    realistic_accelerometer,
)
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
from gravdir.synthetic.logs import ControllerLog, controller_log
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
from gravdir.synthetic.urdf_arm import UR5E_LIKE_URDF, SyntheticUrdfArm, arm_from_urdf

__all__ = [
    "AccelerometerReadings",
    "AccelerometerSensor",
    "ControllerLog",
    "HarmonicDriveJoint",
    "JointRun",
    "ModelError",
    "SweepRecord",
    "SyntheticArm",
    "SyntheticFrictionJoint",
    "SyntheticTouches",
    "SyntheticUrdfArm",
    "TorqueSensor",
    "UR5E_LIKE_URDF",
    "accelerometer_readings",
    "arm_from_urdf",
    "canonical_arm",
    "constant_speed_run",
    "controller_log",
    "correlated_noise",
    "holding_torque",
    "iiwa_arm",
    "oscillating_run",
    "panda_like_joint",
    "random_arm",
    "random_model_error",
    "realistic_accelerometer",
    "realistic_sensors",
    "simulate_run",
    "touch_contacts",
    "up_from_base_tilt",
    "ur5_arm",
]
