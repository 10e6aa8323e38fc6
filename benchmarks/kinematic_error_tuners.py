"""Runs to cut the 2x kinematic-error component by 26 dB, per tuner, on the simulated joint.

Every run the robot makes counts (trial and probe runs included). Accelerometer noise
150 µg/√Hz, link mode 10 Hz with 5% damping, motor speed putting the 2x order on the mode.
"""

from __future__ import annotations

import time

import numpy as np

from gravdir import (
    BoldDriverTuner,
    InfluenceTuner,
    RpropTuner,
    harmonic_drive_orders,
    motor_speed_for_resonance,
)
from gravdir.synthetic.harmonic_drive import HarmonicDriveJoint, constant_speed_run

ORDERS = harmonic_drive_orders(200, 202)
SPEED = motor_speed_for_resonance(10.0)
JOINT = HarmonicDriveJoint(noise_density=150e-6 * 9.80665, up=np.array([0.0, -1.0, 0.0]))
TARGET = 0.05  # -26 dB
MAX_RUNS = 40


def runs_to_target(make, seed: int) -> int:
    tuner = make()
    rng = np.random.default_rng(seed)
    for _ in range(MAX_RUNS):
        run = constant_speed_run(JOINT, SPEED, 110, correction=tuner.model, rng=rng)
        tuner.step(run.motor_angle, readings=run.acceleration)
        a = tuner.amplitudes
        if a[-1] <= TARGET * a[0]:
            return tuner.runs
    return MAX_RUNS + 1


TUNERS = {
    "BoldDriverTuner (phasor gradient)": lambda: BoldDriverTuner(ORDERS),
    "RpropTuner (phasor gradient)": lambda: RpropTuner(ORDERS),
    "InfluenceTuner": lambda: InfluenceTuner(ORDERS),
    "BoldDriverTuner (perturbation gradient)": lambda: BoldDriverTuner(
        ORDERS, gradient="perturbation"
    ),
    "RpropTuner (perturbation gradient)": lambda: RpropTuner(ORDERS, gradient="perturbation"),
}

if __name__ == "__main__":
    seeds = range(5)  # random seeds of the accelerometer noise
    print(f"runs to reach {TARGET:.0%} of the initial 2x amplitude (> {MAX_RUNS} shown as -)")
    for name, make in TUNERS.items():
        t0 = time.perf_counter()
        counts = [runs_to_target(make, s) for s in seeds]
        shown = " ".join("-" if c > MAX_RUNS else str(c) for c in counts)
        print(f"{name:40s} runs per random seed: {shown:20s} ({time.perf_counter() - t0:.1f} s)")
