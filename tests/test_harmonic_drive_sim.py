"""Tests of the harmonic-drive joint simulator."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.typing import ArrayLike, NDArray

from gravdir.kinematic_error import KinematicErrorModel, harmonic_drive_orders
from gravdir.synthetic.harmonic_drive import (
    HarmonicDriveJoint,
    constant_speed_run,
    oscillating_run,
    simulate_run,
)

G0 = 9.80665


def test_gear_ratio_and_output_angle() -> None:
    joint = HarmonicDriveJoint()
    assert joint.gear_ratio == pytest.approx(100.0)
    run = constant_speed_run(joint, 10.0, 3, settle_time=0.0)
    te = joint.transmission_error(run.motor_angle)
    np.testing.assert_allclose(run.output_angle, run.motor_angle / 100 + te, atol=1e-15)
    assert np.max(np.abs(te)) > 5e-5


def test_cancelling_model_removes_output_error_to_second_order() -> None:
    joint = HarmonicDriveJoint(output_amplitude=0.0)
    orders = harmonic_drive_orders(200, 202)
    fix = KinematicErrorModel(orders, joint.cancelling_coefficients(orders))
    raw = constant_speed_run(joint, 10.0, 5, settle_time=0.0)
    cor = constant_speed_run(joint, 10.0, 5, correction=fix, settle_time=0.0)
    err_raw = raw.output_angle - raw.command / joint.gear_ratio
    err_cor = cor.output_angle - cor.command / joint.gear_ratio
    # what is left is TE'(θ)·u, of order N·A², about 1% of A here
    assert np.max(np.abs(err_cor)) < 0.02 * np.max(np.abs(err_raw))


def test_static_reading_is_gravity_in_sensor_frame() -> None:
    up = np.array([0.0, 0.6, 0.8])
    joint = HarmonicDriveJoint(
        te_amplitudes=np.zeros(5), output_amplitude=0.0, up=up, bias=np.array([0.01, 0.02, 0.03])
    )
    t = np.arange(1001) / joint.sample_rate

    psi0 = np.pi / 2 * joint.gear_ratio  # output at 90 degrees: sensor x along joint y
    run = simulate_run(joint, t, np.full_like(t, psi0), 0 * t, 0 * t, settle_time=0.0)
    # rotated by 90° about z: sensor x = joint y, sensor y = -joint x
    want = G0 * np.array([0.6, 0.0, 0.8]) + joint.bias
    np.testing.assert_allclose(run.acceleration, np.broadcast_to(want, (t.size, 3)), atol=1e-9)


def test_noise_density() -> None:
    density = 150e-6 * G0
    joint = HarmonicDriveJoint(
        te_amplitudes=np.zeros(5), output_amplitude=0.0, noise_density=density
    )
    rng = np.random.default_rng(4)
    run = constant_speed_run(joint, 1.0, 3, settle_time=0.0, rng=rng)
    resid = run.acceleration - run.acceleration.mean(axis=0)
    sigma = density * np.sqrt(joint.sample_rate / 2)
    assert np.std(resid[:, 2]) == pytest.approx(sigma, rel=0.05)


def test_oscillating_run_reverses() -> None:
    run = oscillating_run(HarmonicDriveJoint(), 20.0, 2, 3)
    d = np.sign(np.diff(run.motor_angle))
    assert np.count_nonzero(d[1:] != d[:-1]) >= 2


def test_bad_joint_parameters() -> None:
    with pytest.raises(ValueError, match="flexspline_teeth"):
        HarmonicDriveJoint(flexspline_teeth=202, circular_spline_teeth=200)
    with pytest.raises(ValueError, match="te_amplitudes"):
        HarmonicDriveJoint(te_amplitudes=np.zeros(2))
    with pytest.raises(ValueError, match="rng"):
        constant_speed_run(HarmonicDriveJoint(noise_density=1e-3), 1.0, 1)


class _Order2Correction:
    """A correction that is not a KinematicErrorModel: u = A cos(2θ)."""

    def __init__(self, amplitude: float) -> None:
        self.amplitude = amplitude

    def derivative(self, motor_angle: ArrayLike, n: int = 1) -> NDArray[np.float64]:
        th = np.asarray(motor_angle, dtype=float)
        return self.amplitude * 2.0**n * np.cos(2 * th + n * np.pi / 2)


def test_any_correction_with_a_derivative_method_is_accepted() -> None:
    joint = HarmonicDriveJoint()
    plain = constant_speed_run(joint, 10.0, 3, correction=_Order2Correction(1e-3), settle_time=0.0)
    model = KinematicErrorModel([2.0], [[1e-3, 0.0]])
    same = constant_speed_run(joint, 10.0, 3, correction=model, settle_time=0.0)
    np.testing.assert_allclose(plain.motor_angle, same.motor_angle, atol=1e-15)
    np.testing.assert_allclose(plain.acceleration, same.acceleration, atol=1e-9)


def test_joint_copies_its_arrays_and_takes_gravity() -> None:
    amps = np.array([2e-5, 5e-5, 1e-5, 1e-5, 1.5e-5])
    joint = HarmonicDriveJoint(te_amplitudes=amps, gravity=9.81)
    amps[0] = 1.0
    assert joint.te_amplitudes[0] == 2e-5
    assert not joint.te_amplitudes.flags.writeable
    still = HarmonicDriveJoint(te_amplitudes=np.zeros(5), output_amplitude=0.0, gravity=9.81)
    t = np.arange(11) / still.sample_rate
    run = simulate_run(still, t, 0 * t, 0 * t, 0 * t, settle_time=0.0)
    np.testing.assert_allclose(run.acceleration[:, 2], 9.81, atol=1e-12)
    with pytest.raises(ValueError, match="gravity"):
        HarmonicDriveJoint(gravity=0.0)


# ---- input checks: bounded work, units, every argument named ------------------------------


def test_runs_are_bounded_before_any_work() -> None:
    import time

    joint = HarmonicDriveJoint()
    start = time.perf_counter()
    # a million revolutions at 31.4 rad/s used to run unbounded
    with pytest.raises(ValueError, match="`revolutions`.*1,000,000 samples"):
        constant_speed_run(joint, 31.4, 1e6)
    with pytest.raises(ValueError, match="`speed`"):
        constant_speed_run(joint, 1e-300, 1.0)
    with pytest.raises(ValueError, match="`settle_time`"):
        constant_speed_run(joint, 31.4, 1.0, settle_time=1e300)
    with pytest.raises(ValueError, match="`strokes`"):
        oscillating_run(joint, 31.4, 1.0, 10**12)
    with pytest.raises(ValueError, match="`stroke_revolutions`.*1,000,000 samples"):
        oscillating_run(joint, 31.4, 1e6, 2)
    assert time.perf_counter() - start < 1.0
    # a sample time of 1e-12 s would ask for terabytes: refused when the joint is built
    with pytest.raises(ValueError, match="`sample_rate`"):
        HarmonicDriveJoint(sample_rate=1e12)
    with pytest.raises(ValueError, match="`time`"):
        simulate_run(joint, np.arange(1_000_001) / 500.0, *np.zeros((3, 1_000_001)))


def test_speeds_that_alias_are_refused() -> None:
    joint = HarmonicDriveJoint()  # orders up to 4 at 500 Hz: below π·500/4 = 392.7 rad/s
    with pytest.raises(ValueError, match=r"`speed` below 392\.699"):
        constant_speed_run(joint, 400.0, 1.0)
    t = np.arange(100) / joint.sample_rate
    with pytest.raises(ValueError, match="`command_velocity`"):
        simulate_run(joint, t, 400.0 * t, np.full(100, 400.0), np.zeros(100), settle_time=0.0)


def test_simulate_run_checks_its_arguments() -> None:
    joint = HarmonicDriveJoint()
    t = np.arange(100) / joint.sample_rate
    w = np.full(100, 10.0)
    zero = np.zeros(100)
    with pytest.raises(ValueError, match="`time` sampled uniformly"):
        simulate_run(joint, 2 * t, 10 * t, w, zero, settle_time=0.0)
    with pytest.raises(ValueError, match="`command`.*shape"):
        simulate_run(joint, t, (10 * t)[:, None], w, zero, settle_time=0.0)
    with pytest.raises(ValueError, match="`command` within"):
        simulate_run(joint, t, 10 * t + 1e10, w, zero, settle_time=0.0)
    with pytest.raises(ValueError, match="`settle_time`"):
        simulate_run(joint, t, 10 * t, w, zero, settle_time=1.0)
    with pytest.raises(ValueError, match="`correction`"):
        simulate_run(joint, t, 10 * t, w, zero, correction=object(), settle_time=0.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`joint`"):
        simulate_run(object(), t, 10 * t, w, zero)  # type: ignore[arg-type]
    noisy = HarmonicDriveJoint(noise_density=1e-3)
    with pytest.raises(ValueError, match="`rng`"):
        simulate_run(noisy, t, 10 * t, w, zero, settle_time=0.0, rng=4)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`ramp_time`"):
        oscillating_run(joint, 20.0, 1.0, 2, ramp_time=1e-4)
    # float32 and read-only inputs are accepted and left alone
    t32 = t.astype(np.float32)
    cmd = 10 * t
    cmd.flags.writeable = False
    run = simulate_run(joint, t32, cmd, w, zero, settle_time=0.0)
    assert run.acceleration.shape == (100, 3)


def test_joint_checks_units_and_ranges() -> None:
    with pytest.raises(ValueError, match="`te_phases`.*degrees"):
        HarmonicDriveJoint(te_phases=np.array([30.0, -60.0, 120.0, 45.0, 90.0]))
    with pytest.raises(ValueError, match="`output_phase`.*degrees"):
        HarmonicDriveJoint(output_phase=45.0)
    with pytest.raises(ValueError, match="`te_amplitudes`"):
        HarmonicDriveJoint(te_amplitudes=np.full(5, 1.0))
    with pytest.raises(ValueError, match="`te_orders`"):
        HarmonicDriveJoint(te_orders=np.array([1.0, 2.0, -4.0, 0.99, 1.98]))
    with pytest.raises(ValueError, match="`natural_frequency`.*Nyquist"):
        HarmonicDriveJoint(natural_frequency=300.0)
    with pytest.raises(ValueError, match="`damping_ratio`"):
        HarmonicDriveJoint(damping_ratio=1e300)
    with pytest.raises(ValueError, match="`flexspline_teeth`"):
        HarmonicDriveJoint(flexspline_teeth=True)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`output_amplitude`"):
        HarmonicDriveJoint(output_amplitude="2e-5")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`up`"):
        HarmonicDriveJoint(up=np.array([0.0, 0.0, 1e300]))
    with pytest.raises(ValueError, match="`n`"):
        HarmonicDriveJoint().transmission_error(0.0, 3)


def test_overflowing_joints_give_a_named_error_not_infinities() -> None:
    joint = HarmonicDriveJoint(gravity=1.7e308, bias=np.full(3, 1e308))
    with pytest.raises(ValueError, match="finite acceleration"):
        constant_speed_run(joint, 31.4, 1.0, settle_time=0.0)
