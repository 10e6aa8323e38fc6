"""Fit the gravity sinusoid of a forward/backward joint sweep.

A joint swept forward and backward, every other joint locked, measures

.. math:: \\tau(q, v) = c + a \\sin q + b \\cos q + F_c\\, \\mathrm{sgn}\\, v + F_v v
          \\; [+\\ I \\ddot q] \\; [+\\ \\text{load-dependent friction}]
          \\; [+\\ \\text{harmonics}] + \\varepsilon,

whose gravity part is :math:`a \\sin q + b \\cos q = A \\sin(q + \\varphi)` with
:math:`A = \\operatorname{hypot}(a, b) \\ge 0` and :math:`\\varphi = \\operatorname{atan2}(b, a)`.
:func:`fit_sweep` estimates every term in one linear least-squares solve, batched over leading
axes; the inertial torque :math:`I \\ddot q` joins the model where the joint acceleration is
given (from :func:`joint_acceleration`, a Savitzky-Golay derivative of the logged velocity, or
:func:`joint_velocity` for logs of positions). :func:`fit_sweep_common_mode` is the
forward/backward averaging of US 11,446,825 B2 (the mean of the two passes on a common grid),
offered for comparison. :func:`amplitude_phase_bound` is the Cramér-Rao bound of a planned
sweep, and :func:`wrap_angle` the angle wrapping the fits use. :class:`SweepAccumulator` gives the
linear fit of :func:`fit_sweep` from samples fed as they arrive, in constant memory.

References
----------
US 11,446,825 B2 (gravity direction from joint-torque sweeps: FIGS. 2, 3A-3B and 4A, Equations
1 and 2); Kay (1993), ch. 3, 4 and 8 (least squares, the Cramér-Rao bound); Nocedal & Wright
(2006), ch. 10 (Gauss-Newton). The derivations are in ``docs/sweep.md``.
"""

from __future__ import annotations

from gravdir.sweep._accumulator import SweepAccumulator
from gravdir.sweep._bound import amplitude_phase_bound
from gravdir.sweep._common_mode import fit_sweep_common_mode
from gravdir.sweep._derivative import joint_acceleration, joint_velocity
from gravdir.sweep._fit import fit_sweep
from gravdir.sweep._result import SweepFit, SweepZeros, wrap_angle

__all__ = [
    "SweepAccumulator",
    "SweepFit",
    "SweepZeros",
    "amplitude_phase_bound",
    "fit_sweep",
    "fit_sweep_common_mode",
    "joint_acceleration",
    "joint_velocity",
    "wrap_angle",
]
