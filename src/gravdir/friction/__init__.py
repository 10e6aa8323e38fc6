"""Joint friction: models, excitation plans, identification and the gravity-load split.

A joint's friction is identified in two poses of the arm. In the first, gravity exerts no torque
on the joint (:func:`gravity_free_check`); the joint follows an excitation plan
(:func:`excitation_trajectory`) and a friction model is fitted to its drive torque
(:func:`fit_friction`). In the second, gravity loads the joint; the same plan is run again, and
the drive torque minus the gravity torque minus the gravity-free friction is the friction that
grows with the load, fitted as :math:`\\mu |\\tau_g| \\operatorname{sgn} \\dot q`
(:func:`load_dependent_friction`). :func:`identify_joint_friction` runs the two steps for one
joint and :func:`identify_arm_friction` for every joint in turn. The method is that of
CN 107423515 B; ``docs/references.md`` maps its claims to these functions.

The models (:class:`CoulombViscousFriction`, :class:`StribeckFriction`,
:class:`AsymmetricStribeckFriction`, :class:`LoadDependentFriction`) are those of
Armstrong-Hélouvry, Dupont & Canudas de Wit (1994); the Stribeck velocity and exponent are found
by variable projection (Golub & Pereyra 1973).

Every function checks its arguments before it computes (types, shapes, ranges, units where
they can be detected) and bounds its work by documented caps (`MAX_ITER_CAP`,
`MAX_PLAN_SAMPLES`, `MAX_PASSES`, `MAX_REPEATS`); each estimate needs a documented minimum of
data (`MIN_LOAD_SAMPLES` for the load coefficient). The fits work in scaled units, so any finite
data give finite estimates and standard errors, or a clear error.

Conventions: radians, SI units; τ is the torque the actuator applies to the distal link about
+axis; the *gravity torque* :math:`\\tau_g` of a run is the part of the drive torque that holds the
distal links against gravity (minus the torque of gravity about +axis).
"""

from gravdir.friction._arm import (
    ArmFrictionFit,
    FrictionRun,
    JointFrictionFit,
    identify_arm_friction,
    identify_joint_friction,
)
from gravdir.friction._columns import FrictionModelName
from gravdir.friction._estimate import MAX_ITER_CAP, FrictionFit, fit_friction
from gravdir.friction._load import (
    MIN_LOAD_SAMPLES,
    GravityFreeCheck,
    LoadFrictionFit,
    gravity_free_check,
    load_dependent_friction,
)
from gravdir.friction._model import (
    AsymmetricStribeckFriction,
    BaseFrictionModel,
    CoulombViscousFriction,
    FrictionModel,
    LoadDependentFriction,
    StribeckFriction,
)
from gravdir.friction._plan import (
    MAX_PASSES,
    MAX_PLAN_SAMPLES,
    MAX_REPEATS,
    ExcitationPlan,
    excitation_trajectory,
)

__all__ = [
    "MAX_ITER_CAP",
    "MAX_PASSES",
    "MAX_PLAN_SAMPLES",
    "MAX_REPEATS",
    "MIN_LOAD_SAMPLES",
    "ArmFrictionFit",
    "AsymmetricStribeckFriction",
    "BaseFrictionModel",
    "CoulombViscousFriction",
    "ExcitationPlan",
    "FrictionFit",
    "FrictionModel",
    "FrictionModelName",
    "FrictionRun",
    "GravityFreeCheck",
    "JointFrictionFit",
    "LoadDependentFriction",
    "LoadFrictionFit",
    "StribeckFriction",
    "excitation_trajectory",
    "fit_friction",
    "gravity_free_check",
    "identify_arm_friction",
    "identify_joint_friction",
    "load_dependent_friction",
]
