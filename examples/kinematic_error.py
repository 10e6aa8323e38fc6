"""
Kinematic-error correction of a harmonic-drive joint
====================================================

A simulated joint (200/202-tooth harmonic drive, 10 Hz link mode, accelerometer with
150 µg/√Hz noise) is turned at the motor speed that puts the 2x order on the link mode.
An ``InfluenceTuner`` identifies the phasor response from a trial run and corrects the drive;
the deviation spectrum is printed before and after.
"""

# %%
import numpy as np

from gravdir import (
    InfluenceTuner,
    KinematicErrorModel,
    harmonic_drive_orders,
    measure_run,
    motor_speed_for_resonance,
)
from gravdir.synthetic.harmonic_drive import HarmonicDriveJoint, constant_speed_run

orders = harmonic_drive_orders(200, 202)
speed = motor_speed_for_resonance(10.0)  # rad/s of the motor: 5 rev/s
joint = HarmonicDriveJoint(noise_density=150e-6 * 9.80665, up=np.array([0.0, -1.0, 0.0]))
rng = np.random.default_rng(0)
print("orders:", orders.round(4), " motor speed:", round(speed, 3), "rad/s")

# %%
# Three runs: the uncorrected one, a trial run, and the corrected one.

# %%
tuner = InfluenceTuner(orders)
for _ in range(3):
    run = constant_speed_run(joint, speed, 110, correction=tuner.model, rng=rng)
    tuner.step(run.motor_angle, readings=run.acceleration)
before, after = tuner.history[0].spectrum, tuner.history[-1].spectrum
print(f"{'order':>8} {'before m/s²':>12} {'after m/s²':>12}")
for q in orders:
    print(f"{q:8.4f} {before.amplitude(q):12.4g} {after.amplitude(q):12.4g}")
print("2x reduction:", f"{20 * np.log10(after.amplitude(2.0) / before.amplitude(2.0)):.1f} dB")

# %%
# The correction found, beside the first-order cancelling correction u = −N·TE of the
# simulator (radians of motor angle).

# %%
truth = KinematicErrorModel(orders, joint.cancelling_coefficients(orders))
print(tuner.history[-1].model)
print(truth)

# %%
# The two spectra, if matplotlib is installed (shown in a notebook; nothing is written to disk).

# %%
try:
    import matplotlib.pyplot as plt
except ImportError:
    plt = None
if plt is not None:
    fig, ax = plt.subplots()
    w = 0.02
    ax.bar(orders - w, [before.amplitude(q) for q in orders], width=2 * w, label="before")
    ax.bar(orders + w, [after.amplitude(q) for q in orders], width=2 * w, label="after")
    ax.set_yscale("log")
    ax.set_xlabel("order (cycles per motor revolution)")
    ax.set_ylabel("deviation amplitude (m/s²)")
    ax.legend()

# %%
# The scalar :math:`|a|` of US 2025/0065499 A1 (paragraph 21) would have missed the vibration
# had the joint axis been vertical: the link then vibrates perpendicular to gravity.

# %%
vertical = HarmonicDriveJoint(up=np.array([0.0, 0.0, 1.0]))
run = constant_speed_run(vertical, speed, 110)
vec = measure_run(run.motor_angle, readings=run.acceleration, orders=orders, combine="vector")
nrm = measure_run(run.motor_angle, readings=run.acceleration, orders=orders, combine="norm")
print(f"2x amplitude: vector {vec.amplitude(2.0):.3g} m/s², |a| {nrm.amplitude(2.0):.3g} m/s²")
