"""Gravity from a touch plane: contact points, plane fits, and the tool tip with the plane.

A tool on the flange touches a horizontal reference plane at three or more points. Each contact's
flange pose ``T_i`` (4x4, ``base_from_flange``) and the tool-tip offset ``t`` in the flange frame
give the contact point ``c_i = R_i t + p_i``; the plane's normal is `up` (CN 112476435 B,
claims 1-3). Lengths are in whatever unit the poses use (metres for poses built by
:mod:`gravdir.poses`); all results share it.

The functions, in the order data flows:

* :func:`contact_points` -- ``(..., N, 4, 4)`` poses and ``t`` to ``(..., N, 3)`` points, in the
  base frame or in a target frame.
* :func:`up_from_three_points` -- the cross product ``(c_2 - c_1) x (c_3 - c_1)``.
* :func:`up_from_touch_points` -- total-least-squares plane of ``N >= 3`` points with its
  information, residuals, conditioning and an opt-in robust (outlier-finding) fit.
* :func:`up_from_touches` -- the same from poses, with the sign set by the side the flanges were on.
* :func:`tool_tip_and_up_from_touches` -- unknown tool tip: ``t``, `up` and the plane offset
  together from contacts with varied flange orientations.
* :func:`plan_touches` -- flange orientations and contact spots that make the tool tip's lateral
  components well determined in that joint fit.
* :func:`tilt_from_tool_tip_error` -- how far an error in ``t`` tilts the plane's normal.

The fits return gravity-direction results (:class:`ThreePointFit`, :class:`PlaneFit`,
:class:`ToolPlaneFit`): `up` with its Fisher information `up_information` (1/rad²), from which
`up_cov` and `up_std_deg` follow. Three contacts without a `noise_std` (six for the joint fit)
leave the noise, and so the uncertainty of `up`, undetermined: zero information, an infinite
`up_std_deg`, and a :class:`~gravdir.errors.GravdirWarning`.
"""

from gravdir.touch._plan import TouchPlan, plan_touches
from gravdir.touch._plane import PlaneFit, up_from_touch_points, up_from_touches
from gravdir.touch._points import (
    ThreePointFit,
    contact_points,
    tilt_from_tool_tip_error,
    up_from_three_points,
)
from gravdir.touch._tool_tip import ToolPlaneFit, tool_tip_and_up_from_touches

__all__ = [
    "PlaneFit",
    "ThreePointFit",
    "ToolPlaneFit",
    "TouchPlan",
    "contact_points",
    "plan_touches",
    "tilt_from_tool_tip_error",
    "tool_tip_and_up_from_touches",
    "up_from_three_points",
    "up_from_touch_points",
    "up_from_touches",
]
