"""
Every plot of gravdir.plot
==========================

One figure from each function of :mod:`gravdir.plot`, drawn from results of a synthetic robot:
sweeps of a UR5-like arm on a base tilted by 5° with realistic torque sensors, the ``up`` they
give, eight touches of a plane, three tuning runs of a harmonic drive, and a friction curve of a
joint run without gravity load. The *Plots* page of the documentation says what each panel
shows and how it is computed. Needs the ``plot`` extra (matplotlib).
"""

# %%
import matplotlib.pyplot as plt
import numpy as np

from gravdir import (
    InfluenceTuner,
    chain_from_dh,
    contact_points,
    estimate_up,
    excitation_trajectory,
    fit_friction,
    fit_sweep,
    harmonic_drive_orders,
    joint_sweep_from_chain,
    motor_speed_for_resonance,
    tool_tip_and_up_from_touches,
    up_from_touch_points,
)
from gravdir.plot import (
    plot_friction,
    plot_order_spectrum,
    plot_sweep,
    plot_touches,
    plot_tuner,
    plot_up,
)
from gravdir.synthetic import (
    HarmonicDriveJoint,
    SyntheticFrictionJoint,
    constant_speed_run,
    realistic_sensors,
    touch_contacts,
    up_from_base_tilt,
    ur5_arm,
)

rng = np.random.default_rng(0)

# %%
# Sweeps and the ``up`` they give
# -------------------------------
#
# Joint 1 swept once to find its gravity zero, then joint 2 at three joint-1 angles 90° apart.

# %%
arm = ur5_arm(up_from_base_tilt(np.radians(5.0), 0.5))
chain = chain_from_dh(*arm.dh.T)
sensors = realistic_sensors(rng, arm.peak_gravity_torque())
config = np.array([0.0, 0.0, 0.0, -np.pi / 2, 0.0, 0.0])
j1 = arm.sweep(0, config, -np.pi / 2, np.pi / 2, 0.5, 100.0, sensor=sensors, rng=rng)
theta1 = float(fit_sweep(j1.q, velocity=j1.velocity, torque=j1.torque).zeros().unstable)
sweeps = []
for k in range(3):
    c = config.copy()
    c[0] = theta1 + k * np.pi / 2
    rec = arm.sweep(1, c, -1.05, 1.05, 0.5, 100.0, sensor=sensors, rng=rng)
    c[1] = rec.q[0]
    fit = fit_sweep(rec.q, velocity=rec.velocity, torque=rec.torque, load_friction="abs")
    sweeps.append(joint_sweep_from_chain(chain, c, 1, fit))

# %%
# The last sweep of joint 2, fitted with the gear ripple's order among its harmonics: the data,
# each fitted term, the residuals (``plot_sweep``).

# %%
ripple_order = sensors[1].ripple_order
fit = fit_sweep(
    rec.q, velocity=rec.velocity, torque=rec.torque, load_friction="abs", harmonics=(ripple_order,)
)
fig, axes = plot_sweep(fit, rec.q, velocity=rec.velocity, torque=rec.torque)

# %%
# The estimate of ``up`` with its 1σ and 2σ ellipses, the truth, and what each sweep constrains
# (``plot_up``).

# %%
est = estimate_up(sweeps)
fig, axes = plot_up(est, sweeps, truth=arm.up)

# %%
# Touches of a plane
# ------------------
#
# Eight touches, fitted first from the contact points and then with the tool tip unknown
# (``plot_touches``).

# %%
touches = touch_contacts(rng, 8, max_tilt=np.radians(5.0), noise_std=2e-5)
poses = touches.flange_poses
points = contact_points(poses, touches.tool_tip)
fig, axes = plot_touches(up_from_touch_points(points), points)

# %%
fig, axes = plot_touches(tool_tip_and_up_from_touches(poses), flange_poses=poses)

# %%
# A harmonic drive tuned in three runs
# ------------------------------------
#
# The order spectrum of the first and the last run (``plot_order_spectrum``), and the tuner's
# runs order by order (``plot_tuner``).

# %%
tuner = InfluenceTuner(harmonic_drive_orders(200, 202))
drive = HarmonicDriveJoint(noise_density=150e-6 * 9.80665)
for _ in range(3):
    run = constant_speed_run(
        drive, motor_speed_for_resonance(10.0), 110, correction=tuner.model, rng=rng
    )
    tuner.step(run.motor_angle, readings=run.acceleration)
fig, axes = plot_order_spectrum(tuner.history[0].spectrum, tuner.history[-1].spectrum)

# %%
fig, axes = plot_tuner(tuner, threshold=1e-3)

# %%
# A friction curve
# ----------------
#
# A joint run without gravity load through a planned excitation, its Stribeck curve with a 2σ
# band, on a linear and a symmetric-logarithmic velocity axis (``plot_friction``).

# %%
plan = excitation_trajectory(
    -1.2, 1.2, np.geomspace(0.005, 1.0, 8), max_acceleration=2.0, sample_rate=100.0, cruise_time=2.0
)
torque = SyntheticFrictionJoint(noise_std=0.1).measure(
    plan.q, plan.velocity, plan.acceleration, rng=rng
)
friction = fit_friction(
    plan.velocity, acceleration=plan.acceleration, torque=torque, model="stribeck"
)
fig, axes = plot_friction(friction, plan.velocity, torque=torque, acceleration=plan.acceleration)

# %%
# Run as a script, the figures open in matplotlib's windows (or stay unshown under a
# non-interactive backend, as in CI).

# %%
plt.show()
