"""
Gravity from ordinary motion
============================

A UR5e-like arm on a base tilted by 12° runs 10 s of random motion. Its logged torques carry
the realistic sensor errors of the design notes: a gain and an offset per joint, Coulomb,
viscous and load-dependent friction, gear ripple and noise. ``estimate_up_from_motion`` recovers
``up`` from the log alone (kinematics from the URDF, no inertials), with the gains, the load
friction and the ripple it had to fit on the way.
"""

# %%
import numpy as np

from gravdir import angle_between, chain_from_urdf, estimate_up_from_motion
from gravdir.synthetic import UR5E_LIKE_URDF, arm_from_urdf, realistic_sensors
from gravdir.synthetic.motion import fourier_trajectory

rng = np.random.default_rng(7)
tilt, azimuth = np.radians(12.0), np.radians(40.0)
up = np.array([np.sin(tilt) * np.cos(azimuth), np.sin(tilt) * np.sin(azimuth), np.cos(tilt)])
arm = arm_from_urdf(UR5E_LIKE_URDF, tip_link="tool0", up=up)
home = np.array([0.0, -1.3, 1.3, -1.5, -1.5, 0.0])
traj = fourier_trajectory(6, 10.0, 500.0, rng=rng, q0=home)
holding = arm.inverse_dynamics(traj.q, traj.velocity, traj.acceleration)
sensors = realistic_sensors(rng, arm.peak_gravity_torque())
columns = [
    s.measure(traj.q[:, j], traj.velocity[:, j], holding[:, j], rng) for j, s in enumerate(sensors)
]
torque = np.stack(columns, axis=-1)

# %%
# The estimate
# ------------
#
# The accelerations are left to the estimator (a Savitzky–Golay derivative of the logged
# velocities, which needs the sample rate).

# %%
chain = chain_from_urdf(UR5E_LIKE_URDF, tip_link="tool0")
est = estimate_up_from_motion(chain, traj.time, q=traj.q, velocity=traj.velocity, torque=torque)
error = float(np.degrees(angle_between(est.up, up)))
print("true up     ", np.round(up, 6))
print("estimated up", np.round(est.up, 6))
print(f"error {error:.4f}°, reported standard deviation {est.up_std_deg:.4f}°")
print(f"sign of up decided by the dynamics: {est.sign_determined} ({est.sign_margin:.0f} σ)")

# %%
# What it fitted on the way
# -------------------------
#
# Gains are relative (their mean is fixed at 1); the load coefficient is the friction per unit
# of transmitted torque; each ripple row is (joint, order, amplitude, phase).

# %%
true_gains = np.array([s.gain for s in sensors])
print("gains, true / mean     ", np.round(true_gains / true_gains.mean(), 3))
print("gains, estimated       ", np.round(est.gains, 3))
print("load coefficient, true ", np.round([s.load_coefficient for s in sensors], 3))
print("load coefficient, est. ", np.round(est.load_coefficient, 3))
print("ripple orders, true    ", [s.ripple_order for s in sensors])
print("ripple found (joint, order, amplitude N·m, phase rad)")
for j, order, amplitude, phase in est.ripple:
    print(f"   {int(j)}  {order:8.3f}  {amplitude:.4f}  {phase:+.3f}")
assert error < 5.0 * est.up_std_deg

# %%
# The estimate against the truth
# ------------------------------
#
# ``plot_up`` draws the estimate with its 1σ and 2σ ellipses and the truth (the ``plot`` extra:
# without matplotlib the call says so).

# %%
try:
    from gravdir.plot import plot_up

    fig, axes = plot_up(est, truth=up)
except ImportError as missing:
    print(missing)
