"""The general gravity estimator: `up` from sweeps of any joints of any serial arm.

A joint swept about a reference angle measures the gravity torque of everything distal to it,
an exact sinusoid of the joint angle whose coefficients are bilinear in `up` and in one unknown
2-vector per distal posture. :func:`estimate_up` fits `up` to a set of sweeps by variable
projection (maximum likelihood under the sweep fits' covariances), :func:`crlb_up` gives the
Cramér-Rao bound of a planned set of sweeps before the robot moves, and :func:`plan_sweeps`
searches a small set of sweep plans for the cheapest one that reaches a target accuracy.

Model. Sweep joint ``j`` about ``q_ref``; ``R`` is the orientation of link ``j``'s frame in the
base frame at ``q_ref`` and ``a`` the joint axis in that frame. With :math:`\\delta = q - q_{ref}`,

.. math::

    \\tau(\\delta) = \\alpha \\cos\\delta + \\beta \\sin\\delta, \\qquad
    \\alpha = \\mathrm{up}^\\top R\\, w, \\quad \\beta = \\mathrm{up}^\\top R\\, (a \\times w),

where :math:`w = \\kappa\\, g\\, (a \\times m) \\perp a`, :math:`m` is the first moment of the
distal links about the joint axis in link ``j``'s frame and :math:`\\kappa` the joint's torque
gain. Sweeps of one joint with one distal posture share :math:`w`, whatever the proximal joints
do: they form a *group* (:attr:`JointSweep.group`).

The results (:class:`UpEstimate`, :class:`UpBound`) are gravity-direction results: `up` with its
Fisher information ``up_information``, from which ``up_cov`` and ``up_std_deg`` follow.

References
----------
US 11,446,825 B2 (method for estimating a direction of gravity with respect to a robot),
FIG. 2 (blocks 202-210: sweep a first joint, then a second joint not parallel to it, and
estimate the direction of gravity from the two torque records), FIGS. 3A-3B (forward and
backward passes at constant speed) and FIGS. 4A-4B, eqs. (2) and (12) (the gravity sinusoid
of each sweep). The estimator replaces the patent's lumped-mass formulas (FIGS. 5, 8, 11) by the
exact bilinear model above; the derivation is in the documentation page "General gravity
estimator". G. H. Golub and V. Pereyra (1973): variable projection. S. M. Kay (1993): the
Cramér-Rao bound.
"""

from gravdir.general._bound import PlannedSweep, UpBound, crlb_up, sweep_samples
from gravdir.general._estimate import UpEstimate, estimate_up
from gravdir.general._model import JointSweep, joint_sweep_from_chain, moment_from_mass_model
from gravdir.general._plan import SweepPlan, plan_sweeps, planned_sweep_from_chain

__all__ = [
    "JointSweep",
    "PlannedSweep",
    "SweepPlan",
    "UpBound",
    "UpEstimate",
    "crlb_up",
    "estimate_up",
    "joint_sweep_from_chain",
    "moment_from_mass_model",
    "plan_sweeps",
    "planned_sweep_from_chain",
    "sweep_samples",
]
