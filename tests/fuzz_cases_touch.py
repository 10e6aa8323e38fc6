"""Valid calls of gravdir.touch, gravdir.poses and gravdir.synthetic.touch for the fuzz suite."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from gravdir.synthetic.touch import touch_contacts
from gravdir.touch import plan_touches

Case = Callable[[], tuple[tuple[Any, ...], dict[str, Any]]]


class _Rng(np.random.Generator):
    """A seeded generator that compares equal to any generator.

    Drawing from the caller's generator is what `touch_contacts` is for; the suite's check that
    inputs come back unchanged compares by value, so the generator passed here equals its copy
    from before the call.
    """

    def __eq__(self, other: object) -> bool:
        return isinstance(other, np.random.Generator)

    __hash__ = None  # type: ignore[assignment]


def _touches(n: int = 8, seed: int = 0, noise_std: float = 2e-5) -> Any:
    """Contacts of a 0.15 m tool with a plane tilted up to 10°, flanges tilted up to 30°."""
    return touch_contacts(np.random.default_rng(seed), n, noise_std=noise_std)


def _planned() -> np.ndarray:
    """Flange poses of `plan_touches(8)` touching a level plane from above."""
    plan = plan_touches(8)
    data = touch_contacts(
        np.random.default_rng(3),
        8,
        max_tilt=0.0,
        relative_rotations=plan.relative_rotations,
        spots=plan.spots[:, :2],
        tool_tip=np.array([0.01, -0.02, 0.15]),
        noise_std=2e-5,
    )
    return np.array(data.flange_poses)


def _stepped_points() -> np.ndarray:
    """Twelve contacts on two levels: five of them on a step 5 mm above the other seven.

    One more than the robust plane fit survives: with `noise_std` it warns that the residuals
    reject it and inflates the uncertainty (every variant must still give finite fields).
    """
    data = _touches(12)
    return np.array(data.contacts) + 5e-3 * np.where(np.arange(12) < 5, 1.0, 0.0)[:, None] * data.up


def _ur() -> np.ndarray:
    return np.array([0.4, -0.1, 0.3, 0.1, 3.0, -0.2])


def _pose() -> np.ndarray:
    from gravdir.poses import pose_from_ur

    return pose_from_ur(_ur(), unit="m")


CASES: dict[str, Case] = {
    "gravdir.touch.contact_points": lambda: (
        (np.array(_touches(6).flange_poses), np.array([0.01, -0.02, 0.15])),
        {"base_from_target": _pose()},
    ),
    "gravdir.touch.up_from_three_points": lambda: (
        (np.array([0.0, 0.0, 0.0]), np.array([0.3, 0.0, 0.01]), np.array([0.0, 0.3, -0.02])),
        {"up_hint": np.array([0.0, 0.0, 1.0]), "noise_std": 2e-5, "min_conditioning": 1e-6},
    ),
    "gravdir.touch.up_from_touch_points": lambda: (
        (_stepped_points(),),
        {
            "up_hint": np.array([0.0, 0.0, 1.0]),
            "noise_std": 2e-5,
            "robust": True,
            "significance": 0.01,
            "max_iter": 3,
            "min_conditioning": 1e-6,
        },
    ),
    "gravdir.touch.up_from_touches": lambda: (
        (np.array(_touches().flange_poses), np.array(_touches().tool_tip)),
        {"noise_std": 2e-5, "significance": 0.01, "min_conditioning": 1e-6},
    ),
    "gravdir.touch.tool_tip_and_up_from_touches": lambda: (
        (_planned(),),
        {
            "up_hint": np.array([0.0, 0.0, 1.0]),
            "noise_std": 2e-5,
            "tool_tip_guess": np.array([0.0, 0.0, 0.15]),
            "max_noise_gain": 300.0,
            "max_iter": 50,
            "n_directions": 100,
            "search_max_iter": 3,
            "n_starts": 2,
            "robust": True,
            "significance": 0.01,
        },
    ),
    "gravdir.touch.tilt_from_tool_tip_error": lambda: (
        (
            np.array(_touches(6).flange_poses),
            np.array([0.01, -0.02, 0.15]),
            np.array([1e-3, 0.0, 0.0]),
        ),
        {"min_conditioning": 1e-6},
    ),
    "gravdir.touch.plan_touches": lambda: (
        (8,),
        {"max_tilt": math.radians(30.0), "radius": 0.1, "nominal": np.eye(3)},
    ),
    "gravdir.synthetic.touch.touch_contacts": lambda: (
        (_Rng(np.random.PCG64(0)), 6),
        {
            "size": (2,),
            "max_tilt": 0.1,
            "orientation_spread": 0.5,
            "min_orientation": 0.1,
            "tool_tip": np.array([0.0, 0.0, 0.15]),
            "noise_std": 2e-5,
            "extent": 0.3,
            "center": np.array([0.5, 0.0, 0.0]),
            "spot_jitter": 0.0,
        },
    ),
    "gravdir.poses.check_poses": lambda: ((_pose(), "pose"), {"atol": 1e-6}),
    "gravdir.poses.pose_from_ur": lambda: ((_ur(),), {"unit": "m"}),
    "gravdir.poses.ur_from_pose": lambda: ((_pose(),), {"unit": "mm"}),
    "gravdir.poses.pose_from_kuka": lambda: (
        (np.array([500.0, 0.0, 800.0, 30.0, -20.0, 175.0]),),
        {"unit": "mm", "angles": "deg"},
    ),
    "gravdir.poses.kuka_from_pose": lambda: ((_pose(),), {"unit": "mm", "angles": "deg"}),
    "gravdir.poses.pose_from_fanuc": lambda: (
        (np.array([0.5, 0.0, 0.8, 0.3, -0.2, 1.0]),),
        {"unit": "m", "angles": "rad"},
    ),
    "gravdir.poses.fanuc_from_pose": lambda: ((_pose(),), {"unit": "m", "angles": "rad"}),
    "gravdir.poses.pose_from_abb": lambda: (
        (np.array([600.0, 0.0, 400.0]),),
        {"quaternion_wxyz": np.array([0.0, 0.0, 1.0, 0.0]), "unit": "mm", "atol": 1e-5},
    ),
    "gravdir.poses.abb_from_pose": lambda: ((_pose(),), {"unit": "mm"}),
}

NOT_CALLED: dict[str, str] = {
    "gravdir.touch.PlaneFit": "result of up_from_touch_points and up_from_touches",
    "gravdir.touch.ThreePointFit": "result of up_from_three_points",
    "gravdir.touch.ToolPlaneFit": "result of tool_tip_and_up_from_touches",
    "gravdir.touch.TouchPlan": "result of plan_touches",
    "gravdir.synthetic.touch.SyntheticTouches": "result of touch_contacts",
}
