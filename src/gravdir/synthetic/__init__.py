"""Synthetic robots and sensors for tests, examples, benchmarks and users' own pipelines.

Everything here is written independently of the estimators (explicit homogeneous transforms and
cross products), so a convention error cannot cancel out between the generator and gravdir.
"""

from gravdir.synthetic.robot import (
    SweepRecord,
    SyntheticArm,
    canonical_arm,
    iiwa_arm,
    random_arm,
    up_from_base_tilt,
    ur5_arm,
)
from gravdir.synthetic.sensors import TorqueSensor, realistic_sensors

__all__ = [
    "SweepRecord",
    "SyntheticArm",
    "TorqueSensor",
    "canonical_arm",
    "iiwa_arm",
    "random_arm",
    "realistic_sensors",
    "up_from_base_tilt",
    "ur5_arm",
]
