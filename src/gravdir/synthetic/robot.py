"""Synthetic serial arms with known gravity torques, for testing gravity-direction pipelines.

A :class:`SyntheticArm` is a serial chain of revolute joints described by a standard
Denavit--Hartenberg table, with a mass, a centre of mass and (optionally) an inertia tensor per
link and a base tilt (the `up` vector). Its kinematics, holding torques, joint inertias, mass
matrix and inverse dynamics are computed from explicit 4×4 homogeneous transforms and cross
products -- independently of gravdir's estimators and of the sinusoid model they fit -- so a test
that compares an estimator with this arm can fail.

:meth:`SyntheticArm.sweep` records a single-joint sweep (forward then backward; trapezoidal,
s-curve or continuously varying speed; quasi-static or with the inertial torque; optionally
jittered timestamps) through a :class:`~gravdir.synthetic.sensors.TorqueSensor`, as
US 11,446,825 B2 prescribes (method 200, FIG. 2). Factories: :func:`canonical_arm` (the two-joint
model of the closed-form solvers), :func:`random_arm`, :func:`ur5_arm` and :func:`iiwa_arm`; arms
from URDF text are in :mod:`gravdir.synthetic.urdf_arm`.

Joints are indexed from 0 in code: joint ``0`` is J1 of US 11,446,825 B2.
"""

from gravdir.synthetic._arm import SyntheticArm
from gravdir.synthetic._models import (
    canonical_arm,
    iiwa_arm,
    random_arm,
    up_from_base_tilt,
    ur5_arm,
)
from gravdir.synthetic._sweep import SweepRecord

__all__ = [
    "SweepRecord",
    "SyntheticArm",
    "canonical_arm",
    "iiwa_arm",
    "random_arm",
    "up_from_base_tilt",
    "ur5_arm",
]
