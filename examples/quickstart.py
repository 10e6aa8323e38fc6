# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # gravdir quickstart
#
# A synthetic UR5-like arm stands on a base tilted by 3° (azimuth 40°). Its joint-torque
# sensors have realistic errors: per-joint gain, offset, Coulomb, viscous and load-dependent
# friction, gear ripple and white noise. We sweep joint 1 forward and back, fit its gravity
# sinusoid, move joint 1 to the zero of its gravity torque, sweep joint 2 there and fit again.
# Two more joint-2 sweeps, 90° and 180° further round joint 1, then give the general estimator
# the direction of gravity. Every fitted number is printed beside the truth the simulator knows.

# %%
import numpy as np

from gravdir import (
    angle_between,
    chain_from_dh,
    estimate_up,
    fit_sweep,
    joint_sweep_from_chain,
    tilt_azimuth_from_up,
)
from gravdir.synthetic import realistic_sensors, up_from_base_tilt, ur5_arm

rng = np.random.default_rng(2026)
up_true = up_from_base_tilt(np.radians(3.0), np.radians(40.0))
arm = ur5_arm(up=up_true)
# One sensor per joint; each keeps its errors across sweeps.
sensors = realistic_sensors(rng, arm.peak_gravity_torque())
print("truth:", tilt_azimuth_from_up(up_true))


def true_sinusoid(joint: int, configuration: np.ndarray) -> tuple[float, float]:
    """Amplitude and phase of the measured gravity torque, from the simulator's own torques."""
    q0, q1 = configuration.copy(), configuration.copy()
    q0[joint], q1[joint] = 0.0, np.pi / 2
    gain = sensors[joint].gain
    b, a = gain * arm.gravity_torque(q0)[joint], gain * arm.gravity_torque(q1)[joint]
    return float(np.hypot(a, b)), float(np.arctan2(b, a))


def report(name: str, fit, joint: int, configuration: np.ndarray) -> None:
    amp, phase = true_sinusoid(joint, configuration)
    s = sensors[joint]
    print(f"\n{name}: {fit.n_used} samples over {np.degrees(fit.arc):.0f}°")
    print(f"  amplitude  {fit.amplitude:9.4f} ± {fit.amplitude_std:.4f}   truth {amp:9.4f} N·m")
    print(
        f"  phase      {np.degrees(fit.phase):9.4f} ± {np.degrees(fit.phase_std):.4f}°  "
        f"truth {np.degrees(phase):9.4f}°"
    )
    print(f"  offset     {fit.offset:9.4f}            truth {s.offset:9.4f} N·m")
    friction_true = s.gain * (s.coulomb + s.viscous * 0.3)
    friction_fit = float(fit.friction_torque([0.3])[0])
    print(
        f"  friction   {friction_fit:9.4f}            truth {friction_true:9.4f} N·m at 0.3 rad/s"
    )
    print(f"  load coef. {fit.load_coefficient:9.4f}            truth {s.load_coefficient:9.4f}")
    print(f"  residual   {fit.residual_rms:9.4f}            noise {s.noise_std:9.4f} N·m")


# %% [markdown]
# ## Joint 1
# With the arm stretched out (joint 2 at -90°), sweep joint 1 over 200° at 0.3 rad/s. The fit
# has one friction term (one speed per direction), a load-dependent term and the gear-ripple
# order as a nuisance harmonic.

# %%
pose = np.array([0.0, -np.pi / 2, 0.0, -np.pi / 2, 0.0, 0.0])
sweep1 = arm.sweep(0, pose, -1.7, 1.8, speed=0.3, sample_rate=250.0, sensor=sensors, rng=rng)
fit1 = fit_sweep(
    sweep1.q,
    velocity=sweep1.velocity,
    torque=sweep1.torque,
    load_friction="abs",
    harmonics=[sensors[0].ripple_order],
)
report("joint 1 sweep", fit1, 0, pose)
zeros1 = fit1.zeros()
print(
    f"  J1 gravity zeros: unstable {np.degrees(zeros1.unstable):.3f}°, "
    f"stable {np.degrees(zeros1.stable):.3f}° (± {np.degrees(zeros1.std):.3f}°)"
)

# %% [markdown]
# ## Joint 2, at the J1 zero
# At a J1 gravity zero the J2 axis is horizontal, so the J2 sweep sees the whole tilt in its
# phase. Sweep joint 2 over 150°.

# %%
pose2 = pose.copy()
pose2[0] = float(zeros1.unstable)
sweep2 = arm.sweep(1, pose2, -2.9, -0.3, speed=0.3, sample_rate=250.0, sensor=sensors, rng=rng)
fit2 = fit_sweep(
    sweep2.q,
    velocity=sweep2.velocity,
    torque=sweep2.torque,
    load_friction="abs",
    harmonics=[sensors[1].ripple_order],
)
report("joint 2 sweep", fit2, 1, pose2)

# %% [markdown]
# ## The direction of gravity
# Two more joint-2 sweeps, at J1 = zero + 90° and zero + 180°, make the set the general
# estimator needs for any mass distribution and any per-joint torque gain. The kinematics
# (link orientations and joint axes) come from the arm's DH table; the masses are not needed.

# %%
chain = chain_from_dh(*arm.dh.T)  # columns: d, theta offset, a, alpha
sweeps = [
    joint_sweep_from_chain(chain, pose, 0, fit1),
    joint_sweep_from_chain(chain, pose2, 1, fit2),
]
for turn in (np.pi / 2, np.pi):
    pose_k = pose2.copy()
    pose_k[0] += turn
    rec = arm.sweep(1, pose_k, -2.9, -0.3, speed=0.3, sample_rate=250.0, sensor=sensors, rng=rng)
    fit = fit_sweep(
        rec.q,
        velocity=rec.velocity,
        torque=rec.torque,
        load_friction="abs",
        harmonics=[sensors[1].ripple_order],
    )
    sweeps.append(joint_sweep_from_chain(chain, pose_k, 1, fit))
estimate = estimate_up(sweeps)
print()
print(estimate)
print("estimated:", tilt_azimuth_from_up(estimate.up))
print("truth:    ", tilt_azimuth_from_up(up_true))
error = np.degrees(float(angle_between(estimate.up, up_true)))
print(f"direction error {error:.4f}°, reported up_std_deg {estimate.up_std_deg:.4f}°")

# %% [markdown]
# In a notebook, a result shows itself as a table: each value with its unit and uncertainty
# (a script prints it as the text above).

# %%
estimate  # noqa: B018 (a notebook shows a cell's last expression)
