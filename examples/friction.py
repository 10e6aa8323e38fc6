"""
Joint friction with and without gravity load
============================================

The two-pose procedure of CN 107423515 B (claim 1) on a synthetic joint with Panda-sized,
asymmetric Stribeck friction, inertia, load-dependent friction and realistic torque noise:

1. check that the first pose leaves the joint free of gravity torque;
2. run an excitation plan there and fit the friction curve (with the inertia);
3. run the same plan in a loaded pose and split off the load-dependent friction.
"""

# %%
import tempfile
from pathlib import Path

import numpy as np

from gravdir import (
    excitation_trajectory,
    fit_friction,
    gravity_free_check,
    load_dependent_friction,
)
from gravdir.synthetic import SyntheticFrictionJoint, holding_torque

rng = np.random.default_rng(2019)
joint = SyntheticFrictionJoint(offset=0.25, noise_std=0.1)
print(joint)

# %%
# The plan
# --------
#
# Eight log-spaced speeds from 0.005 to 1 rad/s, ramps at 2 rad/s², at most 2 s of cruise per
# pass, inside ±69°.

# %%
plan = excitation_trajectory(
    -1.2, 1.2, np.geomspace(0.005, 1.0, 8), max_acceleration=2.0, sample_rate=100.0, cruise_time=2.0
)
print(plan)

# %%
# Pose 1: gravity-free
# --------------------
#
# Joint axis vertical: whatever the distal mass does, gravity exerts no torque about it.

# %%
up = np.array([0.0, 0.0, 1.0])
check = gravity_free_check(up, [0, 0, 1], [0, 0, 0.33], [0.35, 0.05, 0.6], mass=8.0)
print(check)
print(check.reason)

tau_free = joint.measure(plan.q, plan.velocity, plan.acceleration, rng=rng)
fit = fit_friction(
    plan.velocity, acceleration=plan.acceleration, torque=tau_free, model="asymmetric-stribeck"
)
print(fit)

# %%
# The asymmetric model has no offset: the sensor offset (0.25 N·m) rides on the levels,
# ``+0.25`` forward and ``-0.25`` backward.

# %%
truth = {
    "coulomb_positive": joint.coulomb_positive + joint.offset,
    "coulomb_negative": joint.coulomb_negative - joint.offset,
    "static_positive": joint.static_positive + joint.offset,
    "static_negative": joint.static_negative - joint.offset,
    "stribeck_velocity_positive": joint.stribeck_velocity_positive,
    "stribeck_velocity_negative": joint.stribeck_velocity_negative,
    "viscous_positive": joint.viscous_positive,
    "viscous_negative": joint.viscous_negative,
    "inertia": joint.inertia,
}
for name, value in truth.items():
    i = fit.parameter_names.index(name)
    print(
        f"{name:28s} true {value:8.4f}  fitted {fit.parameters[i]:8.4f} "
        f"± {fit.parameters_std[i]:.4f}"
    )

# %%
# Pose 2: loaded, same plan
# -------------------------
#
# Joint axis horizontal, distal first moment 2 kg·m out and 0.5 kg·m up: the gravity torque
# reaches about 20 N·m. Here it comes from the mass model; a sweep fit's ``A sin(q + φ)`` works
# the same way.

# %%
gravity = holding_torque(plan.q, joint_axis=[0, 1, 0], up=up, first_moment=[2.0, 0.0, 0.5])
tau_loaded = joint.measure(
    plan.q, plan.velocity, plan.acceleration, gravity_torque=gravity, rng=rng
)
load = load_dependent_friction(
    fit, plan.velocity, acceleration=plan.acceleration, torque=tau_loaded, gravity_torque=gravity
)
print(load)
print(f"load coefficient: true {joint.load_coefficient}, fitted {load.load_coefficient:.4f}")

# %%
# The identified curve over the data (if matplotlib is installed)
# ---------------------------------------------------------------

# %%
try:
    import matplotlib.pyplot as plt
except ImportError:
    plt = None

if plt is not None:
    from gravdir.plot import plot_friction

    # The data less the fitted inertia, the curve and its ±2σ band; linear and symlog speeds.
    fig, axes = plot_friction(fit, plan.velocity, torque=tau_free, acceleration=plan.acceleration)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "friction.png"
        fig.savefig(out, dpi=100)
        print(f"figure rendered ({out.stat().st_size} bytes)")
