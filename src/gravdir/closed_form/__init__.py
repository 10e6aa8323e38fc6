"""Closed-form gravity direction from a joint-1 sweep and joint-2 sweeps (torque-sweep method).

Joint 1 (J1) is swept with every other joint locked; its fitted gravity sinusoid
:math:`A_1 \\sin(q_1 + \\varphi_1)` gives the two J1 positions where the gravity torque vanishes.
Joint 2 (J2) is then swept with J1 held at one of those zeros (or one sweep at each), giving
:math:`A_2 \\sin(q_2 + \\varphi_2)`. The solvers here turn these fits into `up` and into the two
reference angles of the canonical two-joint model -- :math:`\\theta_1`, the J1 position at which
the arm's horizontal direction points toward the horizontal part of `up`, and :math:`\\theta_2`,
the angle between `up` and the J1 axis:

* :func:`solve_point_mass`: the lumped point-mass model, the distal mass on the link line
  (US 11,446,825 B2, FIG. 5);
* :func:`solve_l2_offset`: the in-plane offset (L2), the mass offset across the link in the J2
  plane (FIGS. 8 and 9);
* :func:`solve_l3_offset`: the out-of-plane offset (L3), the mass also offset along the J2 axis
  (FIG. 11), with exact relations where the patent's are approximate;
* :func:`solve_two_branch`: the two-branch (phase-difference) solver, half the J2 phase
  difference between sweeps at both J1 zeros, free of per-joint gains, offsets, symmetric
  friction, :math:`\\beta` and :math:`\\gamma_0`.

Every solver returns a :class:`ClosedFormEstimate`: `up` with its Fisher information
`up_information` (propagated from the Cartesian coefficients of the fitted sinusoids, so it
stays finite where gravity lies along J1 and :math:`\\theta_1` is undefined), all admissible
roots (:class:`ClosedFormRoot`), the rule that picked one, the covariance of
:math:`(\\theta_1, \\theta_2)` and flags for the degenerate cases. docs/closed_form.md derives
each solver and lists the input checks: every argument is checked before anything is computed,
fits of any finite scale are solved in units of their largest amplitude, a fit of unknown
(infinite or NaN) covariance gives an infinite uncertainty with a warning, never a zero one, and a
clipped root or a decision between roots within a few standard deviations warns with its margin.

References
----------
US 11,446,825 B2, *Method for estimating a direction of gravity with respect to a robot*:
FIGS. 4A-4B and Eqs. (1)-(2) (the sweeps and the J1 zeros), FIG. 5 and Eqs. (1)-(11) (lumped
point-mass model), FIGS. 8-9 and Eqs. (12)-(19) (in-plane offset), FIG. 11 and Eqs. (20)-(24)
(out-of-plane offset).
"""

from gravdir.closed_form._inputs import (
    DEFAULT_AMPLITUDE_MISMATCH_RTOL,
    DEFAULT_AMPLITUDE_RATIO_RTOL,
    DEFAULT_PARALLEL_RTOL,
    DEFAULT_PARALLEL_SIGMA,
    DEFAULT_SINGULAR_TOL,
    DEFAULT_ZERO_ATOL,
    DEFAULT_ZERO_SIGMA,
)
from gravdir.closed_form._l3_offset import solve_l3_offset
from gravdir.closed_form._result import ClosedFormEstimate, ClosedFormRoot
from gravdir.closed_form._solvers import solve_l2_offset, solve_point_mass, solve_two_branch

__all__ = [
    "DEFAULT_AMPLITUDE_MISMATCH_RTOL",
    "DEFAULT_AMPLITUDE_RATIO_RTOL",
    "DEFAULT_PARALLEL_RTOL",
    "DEFAULT_PARALLEL_SIGMA",
    "DEFAULT_SINGULAR_TOL",
    "DEFAULT_ZERO_ATOL",
    "DEFAULT_ZERO_SIGMA",
    "ClosedFormEstimate",
    "ClosedFormRoot",
    "solve_l2_offset",
    "solve_l3_offset",
    "solve_point_mass",
    "solve_two_branch",
]
