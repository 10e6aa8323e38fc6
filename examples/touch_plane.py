"""
Gravity from a touch plane
==========================

Synthetic contacts of a tool tip with a tilted plane, then ``up`` from the plane fit (tool tip
known), and tool tip and ``up`` together (tool tip unknown, contacts laid out by
``plan_touches``), printed against the truth.
"""

# %%
import numpy as np

from gravdir import (
    angle_between,
    contact_points,
    plan_touches,
    tilt_from_tool_tip_error,
    tool_tip_and_up_from_touches,
    up_from_three_points,
    up_from_touches,
)
from gravdir.synthetic import touch_contacts


def angle_deg(u: np.ndarray, v: np.ndarray) -> float:
    return float(np.degrees(angle_between(u, v)))


rng = np.random.default_rng(2024)
sigma = 2e-5  # 0.02 mm
data = touch_contacts(
    rng, 8, max_tilt=np.radians(5.0), noise_std=sigma, min_orientation=np.radians(20.0)
)

# %%
# Tool tip known
# --------------

# %%
fit = up_from_touches(data.flange_poses, data.tool_tip)
pts = contact_points(data.flange_poses, data.tool_tip)
three = up_from_three_points(pts[0], pts[1], pts[2], noise_std=sigma)
print("true up       ", np.round(data.up, 6))
print("plane fit up  ", np.round(fit.up, 6), f"error {angle_deg(fit.up, data.up):.4f} deg")
print(f"reported std   {float(fit.up_std_deg):.4f} deg, rms {float(fit.residual_rms) * 1e3:.4f} mm")
print("three points  ", np.round(three.up, 6), f"error {angle_deg(three.up, data.up):.4f} deg")
tilt = tilt_from_tool_tip_error(data.flange_poses, data.tool_tip, [0.0, 0.0, 0.001])
print(f"a 1 mm tool-tip error along flange z tilts up by {np.degrees(float(tilt)):.4f} deg")

# %%
# Tool tip unknown
# ----------------
# Eight contacts laid out by ``plan_touches``: three spots each touched with opposite 30° tilts,
# and two straight touches. That layout separates the tool tip from the plane's tilt; the spots
# only need to be hit to within about 10 mm.

# %%
plan = plan_touches(8, max_tilt=np.radians(30.0), radius=0.1)
print(plan)
planned = touch_contacts(
    rng,
    8,
    noise_std=sigma,
    relative_rotations=plan.relative_rotations,
    spots=plan.spots[:, :2],
    spot_jitter=0.01,
)
joint = tool_tip_and_up_from_touches(planned.flange_poses, noise_std=sigma)
print("true tool tip ", np.round(planned.tool_tip * 1e3, 3), "mm")
print("estimated     ", np.round(joint.tool_tip * 1e3, 3), "mm")
print("std           ", np.round(joint.tool_tip_std * 1e3, 3), "mm")
print(
    "weak axis     ", np.round(joint.weak_axis, 3), f"std {float(joint.weak_axis_std) * 1e3:.3f} mm"
)
up_error = angle_deg(joint.up, planned.up)
print(f"up error       {up_error:.4f} deg (std {float(joint.up_std_deg):.4f})")

# %%
# Picture (if matplotlib is installed: shown in a notebook, nothing is saved)
# ---------------------------------------------------------------------------

# %%
try:
    import matplotlib.pyplot as plt
except ImportError:
    plt = None

if plt is not None:
    fig = plt.figure()
    ax = fig.add_subplot(projection="3d")
    ax.scatter(*pts.T, color="C0", label="contacts")
    ax.scatter(*data.flange_poses[:, :3, 3].T, color="C1", label="flanges")
    e1 = np.cross(fit.up, [0.0, 1.0, 0.0])
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(fit.up, e1)
    s, t = np.meshgrid(np.linspace(-0.2, 0.2, 2), np.linspace(-0.2, 0.2, 2))
    centre = pts.mean(axis=0)
    grid = centre + s[..., None] * e1 + t[..., None] * e2
    ax.plot_surface(grid[..., 0], grid[..., 1], grid[..., 2], alpha=0.3)
    ax.quiver(*centre, *(0.1 * fit.up), color="k", label="up")
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.set_zlabel("z [m]")
    ax.set_title("contacts, flanges and the fitted plane, robot base frame")
    ax.legend()
