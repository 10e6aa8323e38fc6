"""fit_sweep on sweeps of synthetic arms (explicit kinematics and cross products, not sinusoids)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gravdir import fit_sweep, testing
from gravdir.sweep import wrap_angle
from gravdir.synthetic import TorqueSensor, random_arm, realistic_sensors, ur5_arm
from gravdir.synthetic.robot import up_from_base_tilt


def true_sinusoid(arm, joint, configuration, gain=1.0):
    """(A, phi) of the measured gravity torque, from the arm's torques at q_j = 0 and pi/2.

    tau(q) = a sin q + b cos q gives b = tau(0) and a = tau(pi/2).
    """
    q0 = np.array(configuration, dtype=float)
    q1 = q0.copy()
    q0[joint], q1[joint] = 0.0, np.pi / 2
    b = gain * arm.gravity_torque(q0)[joint]
    a = gain * arm.gravity_torque(q1)[joint]
    return np.hypot(a, b), np.arctan2(b, a)


@given(
    seed=st.integers(0, 2**32 - 1),
    n_joints=st.integers(3, 7),
    joint=st.sampled_from([0, 1]),
    up=testing.ups(min_tilt=np.radians(10.0)),
    arc_deg=st.floats(60.0, 360.0),
    gain=st.floats(0.8, 1.2),
    offset=st.floats(-2.0, 2.0),
    coulomb=st.floats(0.0, 3.0),
    viscous=st.floats(0.0, 2.0),
    load=st.floats(0.0, 0.05),
)
def test_exact_amplitude_and_phase_on_noise_free_synthetic_sweeps(
    seed, n_joints, joint, up, arc_deg, gain, offset, coulomb, viscous, load
):
    rng = np.random.default_rng(seed)
    arm = random_arm(rng, n_joints)
    arm = dataclasses.replace(arm, up=up)
    config = rng.uniform(-np.pi, np.pi, n_joints)
    amp, phase = true_sinusoid(arm, joint, config, gain)
    if amp < 1e-3:  # a joint carrying (almost) no gravity load has no phase to recover
        return
    sensor = TorqueSensor(
        gain=gain, offset=offset, coulomb=coulomb, viscous=viscous, load_coefficient=load
    )
    centre = rng.uniform(-np.pi, np.pi)
    arc = np.radians(arc_deg)
    rec = arm.sweep(
        joint,
        config,
        centre - arc / 2,
        centre + arc / 2,
        speed=0.5,
        sample_rate=100.0,
        sensor=sensor,
        ramp_time=0.1,
    )
    fit = fit_sweep(rec.q, velocity=rec.velocity, torque=rec.torque, load_friction="abs")
    assert abs(fit.amplitude - amp) <= 1e-10 * amp
    assert abs(wrap_angle(fit.phase - phase)) <= 1e-10
    # the fitted gravity torque is the arm's, scaled by the gain, at every sample
    np.testing.assert_allclose(
        fit.gravity_torque(rec.q), gain * rec.gravity_torque, atol=1e-9 * amp
    )


def test_realistic_sensor_errors_leave_a_consistent_fit():
    # Realistic errors include gear ripple at a high order and white noise: the fit with the
    # ripple order among the harmonics reaches the noise floor, and the truth lies within a few
    # reported standard deviations.
    rng = np.random.default_rng(5)
    arm = ur5_arm(up=up_from_base_tilt(np.radians(12.0), 0.7))
    sensors = realistic_sensors(rng, arm.peak_gravity_torque())
    config = np.array([0.0, -1.2, 1.0, 0.0, 0.5, 0.0])
    rec = arm.sweep(
        1, config, -2.0, 0.5, speed=0.3, sample_rate=250.0, sensor=sensors, rng=rng, ramp_time=0.2
    )
    s = sensors[1]
    amp, phase = true_sinusoid(arm, 1, config, s.gain)
    fit = fit_sweep(
        rec.q,
        velocity=rec.velocity,
        torque=rec.torque,
        load_friction="abs",
        harmonics=[s.ripple_order],
    )
    assert fit.residual_rms == pytest.approx(s.noise_std, rel=0.1)
    assert abs(fit.amplitude - amp) < 4 * fit.amplitude_std
    assert abs(wrap_angle(fit.phase - phase)) < 4 * fit.phase_std


# --------------------------------------------------------------------------------------------
# Sweeps with reversals at realistic acceleration: the inertia column


def _ur5e_sweep(seed: int, profile: str, noise: bool = True):
    import dataclasses as dc

    from gravdir.synthetic import UR5E_LIKE_URDF, arm_from_urdf

    rng = np.random.default_rng(seed)
    up = up_from_base_tilt(rng.uniform(0.0, 0.5), rng.uniform(-np.pi, np.pi))
    arm = arm_from_urdf(UR5E_LIKE_URDF, tip_link="tool0", up=up)
    sensors = realistic_sensors(rng, arm.peak_gravity_torque())
    if not noise:
        sensors = tuple(dc.replace(s, noise_std=0.0) for s in sensors)
    config = np.array([0.0, -1.5, 1.2, -1.0, 0.5, 0.0])
    rec = arm.sweep(
        1,
        config,
        -2.6,
        -0.4,
        0.5,
        100.0,
        sensors,
        rng,
        profile=profile,
        acceleration=3.0,
        inertial=True,
        cycles=2,
        time_jitter=2e-4,
    )
    amp, phase = true_sinusoid(arm, 1, config, sensors[1].gain)
    inertia = sensors[1].gain * arm.joint_inertia(rec.joint_positions[0])[1]
    return rec, sensors[1], amp, phase, inertia


@pytest.mark.parametrize("profile", ["trapezoid", "s-curve", "varying"])
def test_inertia_column_makes_noise_free_inertial_sweeps_exact(profile):
    rec, s, amp, phase, inertia = _ur5e_sweep(1, profile, noise=False)
    fit = fit_sweep(
        rec.q,
        velocity=rec.velocity,
        torque=rec.torque,
        acceleration=rec.acceleration,
        load_friction="abs",
        harmonics=[s.ripple_order],
    )
    assert abs(fit.amplitude - amp) <= 1e-9 * amp
    assert abs(wrap_angle(fit.phase - phase)) <= 1e-9
    assert fit.inertia == pytest.approx(inertia, rel=1e-9)  # gain times M_jj of the arm


@pytest.mark.slow
def test_inertia_column_reaches_the_noise_on_realistic_reversals():
    # Realistic sensor errors, gear ripple fitted as a harmonic, load friction "abs",
    # 3 rad/s² reversals, all three profiles: the residual is the noise and the errors of
    # amplitude and phase are as large as the reported uncertainty says (Monte Carlo).
    ratio, ratio_without, z_amp, z_phase = [], [], [], []
    for seed in range(30):
        profile = ("trapezoid", "s-curve", "varying")[seed % 3]
        rec, s, amp, phase, _ = _ur5e_sweep(100 + seed, profile)
        common = {"load_friction": "abs", "harmonics": [s.ripple_order]}
        fit = fit_sweep(
            rec.q, velocity=rec.velocity, torque=rec.torque, acceleration=rec.acceleration, **common
        )
        without = fit_sweep(rec.q, velocity=rec.velocity, torque=rec.torque, **common)
        ratio.append(fit.residual_rms / s.noise_std)
        ratio_without.append(without.residual_rms / s.noise_std)
        z_amp.append((fit.amplitude - amp) / fit.amplitude_std)
        z_phase.append(wrap_angle(fit.phase - phase) / fit.phase_std)
    assert max(abs(r - 1) for r in ratio) < 0.1
    assert min(ratio_without) > 2.0  # the inertial torque is far above the noise
    for z in (np.array(z_amp), np.array(z_phase)):
        assert 0.5 < np.mean(z**2) < 1.6  # chi-square of 30 draws: 1 ± 0.26
        assert np.max(np.abs(z)) < 4.0
