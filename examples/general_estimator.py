"""
General gravity estimator: plan, simulate, estimate
===================================================

A UR5-like arm on a tilted base. We plan J2 sweeps with ``plan_sweeps`` (from a nominal mass
model and the stated torque noise), record them on the synthetic arm with realistic sensor
errors, estimate ``up`` with ``estimate_up`` and compare the error with the planned bound.
"""

# %%
import numpy as np

from gravdir import (
    angle_between,
    chain_from_dh,
    estimate_up,
    fit_sweep,
    joint_sweep_from_chain,
    plan_sweeps,
)
from gravdir.synthetic import realistic_sensors, up_from_base_tilt, ur5_arm

rng = np.random.default_rng(7)
arm = ur5_arm(up_from_base_tilt(np.radians(25.0), np.radians(40.0)))
chain = chain_from_dh(*arm.dh.T)
sensors = realistic_sensors(rng, arm.peak_gravity_torque())
config = np.array([0.0, 0.0, 0.0, -np.pi / 2, 0.0, 0.0])  # upper arm horizontal

# %%
# 1\. Find θ1 with a J1 sweep
# ---------------------------
# The J1 sweep alone says nothing about ``up``; it gives the J1 zero θ1 as the reference for the
# J2 sweeps.

# %%
j1 = arm.sweep(0, config, -np.pi / 2, np.pi / 2, 0.5, 100.0, sensor=sensors, rng=rng)
theta1 = float(fit_sweep(j1.q, velocity=j1.velocity, torque=j1.torque).zeros().unstable)
print(f"theta1 = {np.degrees(theta1):.2f} deg")

# %%
# 2\. Plan the J2 sweeps
# ----------------------
# Target: 0.05° RMS, with the J2 noise level the controller's datasheet states.

# %%
start = config.copy()
start[0] = theta1
noise = sensors[1].noise_std
plan = plan_sweeps(
    chain,
    start,
    masses=arm.masses,
    coms=arm.coms,
    noise_std=noise,
    target_std=np.radians(0.05),
)
print(plan)

# %%
# 3\. Record and fit the planned sweeps, then estimate
# ----------------------------------------------------

# %%
sweeps = []
for position in plan.positions:
    c = config.copy()
    c[0] = position
    rec = arm.sweep(
        1,
        c,
        c[1] - plan.arc / 2,
        c[1] + plan.arc / 2,
        0.5,
        100.0,
        sensor=sensors,
        rng=rng,
    )
    fit = fit_sweep(
        rec.q,
        velocity=rec.velocity,
        torque=rec.torque,
        load_friction="abs",
        harmonics=(sensors[1].ripple_order,),
    )
    c[1] = rec.q[0]
    sweeps.append(joint_sweep_from_chain(chain, c, 1, fit))
est = estimate_up(sweeps)
print(est)
error = float(np.degrees(angle_between(est.up, arm.up)))
print(
    f"error {error:.4f} deg; reported up_std_deg {est.up_std_deg:.4f} deg; planned bound "
    f"up_std_deg {plan.bound.up_std_deg:.4f} deg"
)

# %%
# The estimate and what each sweep says
# -------------------------------------
#
# ``plot_up`` draws the estimate with its 1σ and 2σ ellipses, the truth, and the cone and
# meridian each sweep constrains (the ``plot`` extra: without matplotlib the call says so).

# %%
try:
    from gravdir.plot import plot_up

    fig, axes = plot_up(est, sweeps, truth=arm.up)
except ImportError as missing:
    print(missing)
