"""Tests of the synthetic arms, torque sensors and sweeps in gravdir.synthetic."""

from __future__ import annotations

import dataclasses
import json
import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gravdir import testing
from gravdir._constants import STANDARD_GRAVITY
from gravdir.synthetic.robot import (
    SweepRecord,
    SyntheticArm,
    canonical_arm,
    iiwa_arm,
    random_arm,
    up_from_base_tilt,
    ur5_arm,
)
from gravdir.synthetic.sensors import TorqueSensor, realistic_sensors

G = STANDARD_GRAVITY
angles = st.floats(-np.pi, np.pi, allow_nan=False)
seeds = st.integers(0, 2**32 - 1)


def _rz(phi: float) -> np.ndarray:
    c, s = np.cos(phi), np.sin(phi)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


# --------------------------------------------------------------------------------------------
# Gravity torque of the arm


@given(seed=seeds, n_joints=st.integers(1, 7))
def test_gravity_torque_is_gradient_of_potential(seed: int, n_joints: int) -> None:
    # tau_hold_i = +dV/dq_i with V = sum_k m_k g up^T c_k (central differences).
    rng = np.random.default_rng(seed)
    arm = random_arm(rng, n_joints, max_tilt=np.pi)
    q = rng.uniform(-np.pi, np.pi, n_joints)
    h = 1e-6
    steps = h * np.eye(n_joints)
    grad = (arm.potential_energy(q + steps) - arm.potential_energy(q - steps)) / (2 * h)
    scale = G * np.sum(arm.masses) * 2.0  # torque scale: total weight times about 2 m
    np.testing.assert_allclose(arm.gravity_torque(q), grad, rtol=0, atol=1e-7 * scale)


@given(q1=angles, q2=angles, l1=st.floats(0.1, 2.0), l2=st.floats(0.1, 2.0))
def test_planar_two_link_matches_textbook(q1: float, q2: float, l1: float, l2: float) -> None:
    # Point masses at the link tips, gravity along base -y: tau = dV/dq with heights along y.
    m1, m2 = 1.3, 0.7
    arm = SyntheticArm(
        dh=[[0, 0, l1, 0], [0, 0, l2, 0]],
        masses=[m1, m2],
        coms=np.zeros((2, 3)),
        up=[0, 1, 0],
    )
    tau2 = m2 * G * l2 * np.cos(q1 + q2)
    tau1 = (m1 + m2) * G * l1 * np.cos(q1) + tau2
    np.testing.assert_allclose(arm.gravity_torque([q1, q2]), [tau1, tau2], atol=1e-9)


@given(seed=seeds)
def test_joint1_of_upright_arm_carries_no_gravity(seed: int) -> None:
    rng = np.random.default_rng(seed)
    arm = dataclasses.replace(random_arm(rng, 5), up=np.array([0.0, 0.0, 1.0]))
    q = rng.uniform(-np.pi, np.pi, (10, 5))
    tau = arm.gravity_torque(q)
    assert np.max(np.abs(tau[:, 0])) < 1e-9
    assert np.max(np.abs(tau[:, 1:])) > 1e-3  # the other joints do carry load


@given(seed=seeds, phi=angles)
def test_turning_up_about_joint1_equals_turning_joint1(seed: int, phi: float) -> None:
    rng = np.random.default_rng(seed)
    arm = random_arm(rng, 4, max_tilt=np.pi)
    q = rng.uniform(-np.pi, np.pi, 4)
    turned = dataclasses.replace(arm, up=_rz(phi) @ arm.up)
    q_turned = q + np.array([phi, 0, 0, 0])
    np.testing.assert_allclose(turned.gravity_torque(q_turned), arm.gravity_torque(q), atol=1e-9)


def test_torque_is_linear_in_masses_and_gravity() -> None:
    rng = np.random.default_rng(7)
    arm = random_arm(rng, 6)
    q = rng.uniform(-np.pi, np.pi, (3, 6))
    heavier = dataclasses.replace(arm, masses=2.5 * arm.masses, gravity=1.62)
    np.testing.assert_allclose(
        heavier.gravity_torque(q), 2.5 * 1.62 / arm.gravity * arm.gravity_torque(q), rtol=1e-12
    )


def test_batched_torque_equals_loop() -> None:
    rng = np.random.default_rng(11)
    arm = ur5_arm(up_from_base_tilt(0.4, 1.0))
    q = rng.uniform(-np.pi, np.pi, (2, 3, 6))
    batched = arm.gravity_torque(q)
    assert batched.shape == (2, 3, 6)
    loop = np.array([[arm.gravity_torque(q[i, j]) for j in range(3)] for i in range(2)])
    np.testing.assert_allclose(batched, loop, rtol=1e-12, atol=1e-12)


def test_link_poses_and_axes() -> None:
    arm = ur5_arm()
    poses = arm.link_poses(np.zeros(6))
    np.testing.assert_allclose(poses[0], np.eye(4))
    # UR5 at zero: the arm stretches along base -x at the shoulder height plus offsets.
    np.testing.assert_allclose(poses[3, :3, 3], [-0.81725, -0.0, 0.089159], atol=1e-12)
    axes = arm.joint_axes(np.zeros(6))
    np.testing.assert_allclose(axes[1], [0, -1, 0], atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(axes, axis=-1), 1.0)


def test_ur5_shoulder_holding_torque_at_zero() -> None:
    # Arm horizontal along -x, J2 axis along -y: gravity torque about -y is +g * sum m_k |x_k|.
    arm = ur5_arm()
    coms = arm.com_positions(np.zeros(6))
    expected = -G * np.sum(arm.masses[1:] * -coms[1:, 0])
    assert arm.gravity_torque(np.zeros(6))[1] == pytest.approx(expected, rel=1e-12)
    assert expected == pytest.approx(-53.78, abs=0.01)  # -53.80 N·m at g = 9.81 m/s²


# --------------------------------------------------------------------------------------------
# Canonical two-joint model (docs/closed_form.md)


@given(theta2=st.floats(0.05, np.pi - 0.05), psi=angles, gamma0=angles, q1=angles, q2=angles)
def test_canonical_point_mass_joint1(
    theta2: float, psi: float, gamma0: float, q1: float, q2: float
) -> None:
    m, l1 = 1.7, 0.6
    arm = canonical_arm(L1=l1, gamma0=gamma0, mass=m, up=up_from_base_tilt(theta2, psi))
    gamma = q2 + gamma0
    expected = -m * G * l1 * np.sin(gamma) * np.sin(theta2) * np.sin(q1 - psi)
    assert arm.gravity_torque([q1, q2])[0] == pytest.approx(expected, abs=1e-9)


@given(theta2=st.floats(0.0, np.pi), psi=angles, gamma0=angles, q2=angles)
def test_canonical_point_mass_joint2_on_both_zeros(
    theta2: float, psi: float, gamma0: float, q2: float
) -> None:
    m, l1 = 2.0, 0.45
    arm = canonical_arm(L1=l1, gamma0=gamma0, mass=m, up=up_from_base_tilt(theta2, psi))
    gamma = q2 + gamma0
    tau_high = arm.gravity_torque([psi, q2])[1]
    tau_low = arm.gravity_torque([psi + np.pi, q2])[1]
    assert tau_high == pytest.approx(m * G * l1 * np.sin(theta2 - gamma), abs=1e-9)
    assert tau_low == pytest.approx(m * G * l1 * np.sin(-theta2 - gamma), abs=1e-9)
    # Sinusoid form A2 sin(q2 + phi2) with A2 = m g L1, phi2 = gamma0 - theta2 + pi.
    assert tau_high == pytest.approx(m * G * l1 * np.sin(q2 + gamma0 - theta2 + np.pi), abs=1e-9)


@given(
    theta2=st.floats(0.05, np.pi - 0.05),
    psi=angles,
    q1=angles,
    q2=angles,
    l1=st.floats(0.1, 1.0),
    l2=st.floats(-0.5, 0.5),
)
def test_canonical_l2_offset(
    theta2: float, psi: float, q1: float, q2: float, l1: float, l2: float
) -> None:
    m, gamma0 = 1.1, 0.3
    arm = canonical_arm(L1=l1, L2=l2, gamma0=gamma0, mass=m, up=up_from_base_tilt(theta2, psi))
    r12, beta = np.hypot(l1, l2), np.arctan2(l2, l1)
    gamma = q2 + gamma0
    tau1 = -m * G * r12 * np.sin(gamma + beta) * np.sin(theta2) * np.sin(q1 - psi)
    tau2_high = m * G * r12 * np.sin(theta2 - gamma - beta)
    assert arm.gravity_torque([q1, q2])[0] == pytest.approx(tau1, abs=1e-9)
    assert arm.gravity_torque([psi, q2])[1] == pytest.approx(tau2_high, abs=1e-9)


@given(
    theta2=st.floats(0.05, np.pi - 0.05),
    psi=angles,
    gamma_s=st.floats(0.3, 2.8),
    l3=st.floats(-0.3, 0.3),
    q2=angles,
)
def test_canonical_l3_offset(
    theta2: float, psi: float, gamma_s: float, l3: float, q2: float
) -> None:
    m, l1, l2, gamma0 = 1.4, 0.5, 0.1, 0.2
    arm = canonical_arm(
        L1=l1, L2=l2, L3=l3, gamma0=gamma0, mass=m, up=up_from_base_tilt(theta2, psi)
    )
    # J1 zero with c in the vertical plane through up: arm azimuth psi - delta.
    delta = np.arctan2(l3, l1 * np.sin(gamma_s) + l2 * np.cos(gamma_s))
    q1_zero = psi - delta
    assert abs(arm.gravity_torque([q1_zero, gamma_s - gamma0])[0]) < 1e-9
    # J2 sweep there: amplitude m g R12 sqrt(1 - sin^2 theta2 sin^2 delta), phase via theta2'.
    r12, beta = np.hypot(l1, l2), np.arctan2(l2, l1)
    a2 = m * G * r12 * np.sqrt(1 - np.sin(theta2) ** 2 * np.sin(delta) ** 2)
    theta2p = np.arctan2(np.sin(theta2) * np.cos(delta), np.cos(theta2))
    expected = a2 * np.sin(theta2p - (q2 + gamma0) - beta)
    assert arm.gravity_torque([q1_zero, q2])[1] == pytest.approx(expected, abs=1e-9)


def test_canonical_arm_points_along_x_at_zero() -> None:
    arm = canonical_arm(L1=1.0, gamma0=np.pi / 2, mass=1.0)
    np.testing.assert_allclose(arm.com_positions([0.0, 0.0])[1], [1, 0, 0], atol=1e-12)
    np.testing.assert_allclose(arm.joint_axes([0.0, 0.0]), [[0, 0, 1], [0, 1, 0]], atol=1e-12)
    # L3 lies along a2 = z x h = +y at q1 = 0.
    arm3 = canonical_arm(L1=0.0, L3=0.25, mass=1.0)
    np.testing.assert_allclose(arm3.com_positions([0.0, 0.7])[1], [0, 0.25, 0], atol=1e-12)


def test_peak_gravity_torque_of_canonical_arm() -> None:
    m, l1, l2, l3 = 2.0, 0.5, 0.2, 0.1
    peak = canonical_arm(L1=l1, L2=l2, L3=l3, mass=m).peak_gravity_torque()
    np.testing.assert_allclose(
        peak, [m * G * np.sqrt(l1**2 + l2**2 + l3**2), m * G * np.hypot(l1, l2)], rtol=1e-4
    )


def test_peak_bounds_torque_over_random_configurations_and_tilts() -> None:
    rng = np.random.default_rng(5)
    base = ur5_arm()
    peak = base.peak_gravity_torque()
    ups = up_from_base_tilt(np.arccos(rng.uniform(-1, 1, 50)), rng.uniform(-np.pi, np.pi, 50))
    worst = np.zeros(6)
    for up in ups:
        arm = dataclasses.replace(base, up=up)
        tau = arm.gravity_torque(rng.uniform(-np.pi, np.pi, (200, 6)))
        worst = np.maximum(worst, np.max(np.abs(tau), axis=0))
    assert np.all(worst <= 1.02 * peak + 1e-12)
    assert np.all(worst[:5] >= 0.5 * peak[:5])  # and the peak is not a loose bound
    assert peak[5] < 1e-9  # J6's distal mass is on its axis


# --------------------------------------------------------------------------------------------
# Base tilt and factories


@given(tilt=testing.tilts(), azimuth=testing.azimuths())
def test_up_from_base_tilt(tilt: float, azimuth: float) -> None:
    up = up_from_base_tilt(tilt, azimuth)
    assert np.linalg.norm(up) == pytest.approx(1.0)
    assert np.arccos(np.clip(up[2], -1, 1)) == pytest.approx(tilt, abs=1e-7)
    if 1e-3 < tilt < np.pi - 1e-3:
        diff = np.angle(np.exp(1j * (np.arctan2(up[1], up[0]) - azimuth)))
        assert abs(diff) < 1e-9


def test_up_from_base_tilt_refuses_degrees() -> None:
    # Seen: up_from_base_tilt(30) returned the `up` of a base tilted by 30 rad.
    with pytest.raises(ValueError, match=r"`tilt` to hold tilts in radians.*degrees\?$"):
        up_from_base_tilt(30.0)
    with pytest.raises(ValueError, match=r"`azimuth` to hold azimuths in radians.*degrees\?$"):
        up_from_base_tilt(0.3, np.array([0.0, 45.0]))
    with pytest.raises(ValueError, match=r"`tilt` to hold tilts in radians within \[0, π\]"):
        up_from_base_tilt(-0.2)
    np.testing.assert_allclose(up_from_base_tilt(np.pi, 4 * np.pi), [0, 0, -1.0], atol=1e-15)


def test_up_from_base_tilt_broadcasts() -> None:
    assert up_from_base_tilt(np.zeros((4, 1)), np.zeros(3)).shape == (4, 3, 3)
    with pytest.raises(ValueError, match="`tilt` and `azimuth`"):
        up_from_base_tilt(np.zeros(4), np.zeros(3))
    with pytest.raises(ValueError, match="`tilt`"):
        up_from_base_tilt(np.nan)


@given(seed=seeds, max_tilt=st.floats(0.0, np.pi))
def test_random_arm_tilt_within_cap(seed: int, max_tilt: float) -> None:
    arm = random_arm(np.random.default_rng(seed), 3, max_tilt=max_tilt)
    assert np.arccos(np.clip(arm.up[2], -1, 1)) <= max_tilt + 1e-9
    assert np.all((arm.masses >= 0.5) & (arm.masses <= 8.0))


def test_random_arm_is_reproducible() -> None:
    a = random_arm(np.random.default_rng(42), 6)
    b = random_arm(np.random.default_rng(42), 6)
    c = random_arm(np.random.default_rng(43), 6)
    np.testing.assert_array_equal(a.dh, b.dh)
    np.testing.assert_array_equal(a.up, b.up)
    assert not np.array_equal(a.dh, c.dh)


def test_named_arms() -> None:
    ur5 = ur5_arm()
    assert ur5.n_joints == 6
    assert float(np.sum(ur5.masses)) == pytest.approx(17.0, abs=0.1)
    iiwa = iiwa_arm(up_from_base_tilt(0.2, 0.0))
    assert iiwa.n_joints == 7
    # Straight up, the iiwa-like arm's centres of mass lie within 5 cm of the vertical axis.
    coms = iiwa_arm().com_positions(np.zeros(7))
    assert np.max(np.hypot(coms[:, 0], coms[:, 1])) < 0.05
    assert "tilt=11.46°" in repr(iiwa)


def test_arm_is_frozen_and_read_only() -> None:
    arm = ur5_arm()
    with pytest.raises(dataclasses.FrozenInstanceError):
        arm.gravity = 1.0  # type: ignore[misc]
    with pytest.raises(ValueError, match="read-only"):
        arm.masses[0] = 1.0


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"dh": np.zeros((2, 3))}, "`dh`"),
        ({"dh": np.zeros((0, 4)), "masses": np.zeros(0), "coms": np.zeros((0, 3))}, "`dh`"),
        ({"masses": [1.0]}, "`masses`"),
        ({"masses": [1.0, -1.0]}, "`masses`"),
        ({"coms": np.zeros((2, 2))}, "`coms`"),
        ({"coms": [[0, 0, np.nan], [0, 0, 0]]}, "`coms`"),
        ({"up": [0, 0, 2]}, "`up`"),
        ({"up": [[0, 0, 1]]}, "`up`"),
        ({"gravity": 0.0}, "`gravity`"),
    ],
)
def test_arm_rejects_bad_arguments(kwargs: dict[str, object], match: str) -> None:
    args: dict[str, object] = {
        "dh": np.zeros((2, 4)),
        "masses": [1.0, 1.0],
        "coms": np.zeros((2, 3)),
    }
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        SyntheticArm(**args)  # type: ignore[arg-type]


def test_other_bad_arguments() -> None:
    arm = ur5_arm()
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match=r"`q` to have shape \(\.\.\., 6\)"):
        arm.gravity_torque(np.zeros(5))
    with pytest.raises(ValueError, match="`q`"):
        arm.gravity_torque(np.full(6, np.inf))
    with pytest.raises(ValueError, match="`samples`"):
        arm.peak_gravity_torque(samples=0)
    with pytest.raises(ValueError, match="`rng`"):
        random_arm(0, 3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`n_joints`"):
        random_arm(rng, 0)
    with pytest.raises(ValueError, match="`max_tilt`"):
        random_arm(rng, 3, max_tilt=4.0)
    with pytest.raises(ValueError, match="`mass_range`"):
        random_arm(rng, 3, mass_range=(2.0, 1.0))
    with pytest.raises(ValueError, match="`mass`"):
        canonical_arm(L1=1.0, mass=-1.0)


# --------------------------------------------------------------------------------------------
# Sweeps


def _sweep(**overrides: object) -> tuple[SyntheticArm, SweepRecord]:
    arm = ur5_arm(up_from_base_tilt(0.3, 0.8))
    kwargs: dict[str, object] = {
        "joint": 1,
        "configuration": [0.3, -1.0, 0.5, -0.7, 0.4, 0.1],
        "start": -1.2,
        "stop": 0.8,
        "speed": 0.25,
        "sample_rate": 200.0,
        "ramp_time": 0.4,
    }
    kwargs.update(overrides)
    return arm, arm.sweep(**kwargs)  # type: ignore[arg-type]


def test_sweep_profile_forward_then_backward() -> None:
    arm, rec = _sweep()
    speed, ramp, fs = 0.25, 0.4, 200.0
    m = rec.q.size
    for name in ("time", "q", "velocity", "direction", "at_cruise", "torque", "gravity_torque"):
        assert getattr(rec, name).shape == (m,)
    pass_time = 2.0 / speed + ramp
    assert m == int(round(2 * pass_time * fs)) + 1
    assert rec.q[0] == pytest.approx(-1.2)
    assert rec.q[-1] == pytest.approx(-1.2, abs=1e-9)
    assert rec.q.max() == pytest.approx(0.8, abs=1e-9)
    first = rec.time <= pass_time
    assert np.all(np.diff(rec.q[first]) > 0)
    assert np.all(np.diff(rec.q[~first]) < 0)
    np.testing.assert_array_equal(rec.direction, np.where(rec.time < pass_time, 1.0, -1.0))
    # Constant speed outside the ramps, below it inside, zero at the ends and the reversal.
    np.testing.assert_allclose(np.abs(rec.velocity[rec.at_cruise]), speed)
    assert np.all(np.abs(rec.velocity[~rec.at_cruise]) < speed)
    assert rec.velocity[0] == 0.0
    assert rec.velocity[-1] == pytest.approx(0.0, abs=1e-9)
    turn = np.argmin(np.abs(rec.time - pass_time))
    assert rec.velocity[turn] == pytest.approx(0.0, abs=1e-9)
    # Four ramps of ramp_time * fs samples each.
    assert (~rec.at_cruise).sum() == pytest.approx(4 * ramp * fs, abs=4)
    # Linear ramp: v = (speed / ramp) t at the start.
    early = rec.time < ramp
    np.testing.assert_allclose(rec.velocity[early], speed / ramp * rec.time[early])
    # The velocity is the derivative of the angle.
    np.testing.assert_allclose(np.gradient(rec.q, rec.time), rec.velocity, atol=speed / ramp / fs)


def test_sweep_holds_other_joints_and_reports_true_torque() -> None:
    arm, rec = _sweep()
    positions = rec.joint_positions
    assert positions.shape == (rec.q.size, 6)
    held = np.broadcast_to([0.3, 0.5, -0.7, 0.4, 0.1], (rec.q.size, 5))
    np.testing.assert_array_equal(positions[:, [0, 2, 3, 4, 5]], held)
    np.testing.assert_allclose(rec.gravity_torque, arm.gravity_torque(positions)[:, 1])
    np.testing.assert_array_equal(rec.torque, rec.gravity_torque)  # ideal sensor
    np.testing.assert_allclose(rec.up, arm.up)
    assert "joint=1" in repr(rec) and "°" in repr(rec)


def test_sweep_negative_direction_and_cycles() -> None:
    _, rec = _sweep(start=0.5, stop=-0.5, cycles=2, ramp_time=0.0)
    pass_time = 1.0 / 0.25
    assert rec.q.size == int(round(4 * pass_time * 200)) + 1
    assert rec.q.min() == pytest.approx(-0.5, abs=1e-9)
    assert rec.q.max() == pytest.approx(0.5, abs=1e-9)
    np.testing.assert_allclose(np.abs(rec.velocity), 0.25)  # no ramps
    index = np.minimum(np.floor(rec.time / pass_time), 3)
    np.testing.assert_array_equal(rec.direction, np.where(index % 2 == 0, -1.0, 1.0))
    np.testing.assert_array_equal(np.sign(rec.velocity), rec.direction)


@pytest.mark.parametrize("joint", range(6))
def test_every_joint_can_be_swept(joint: int) -> None:
    arm, rec = _sweep(joint=joint, start=0.0, stop=1.0, sample_rate=50.0)
    assert rec.joint == joint
    assert rec.q.ndim == rec.torque.ndim == 1
    np.testing.assert_allclose(
        rec.gravity_torque, arm.gravity_torque(rec.joint_positions)[:, joint]
    )


def test_sweep_torque_follows_sensor_model() -> None:
    sensor = TorqueSensor(
        gain=1.1,
        offset=-0.4,
        coulomb=0.8,
        viscous=2.0,
        load_coefficient=0.03,
        ripple_amplitude=0.05,
        ripple_order=150,
        ripple_phase=0.3,
    )
    _, rec = _sweep(sensor=sensor)
    tau, v = rec.gravity_torque, rec.velocity
    friction = (0.8 + 0.03 * np.abs(tau)) * np.sign(v) + 2.0 * v
    ripple = 0.05 * np.sin(150 * rec.q + 0.3)
    np.testing.assert_allclose(rec.torque, 1.1 * (tau + friction) - 0.4 + ripple, atol=1e-12)
    # Forward minus backward at cruise splits friction from gravity (the forward/backward
    # averaging of US 11,446,825 B2).
    np.testing.assert_array_less(
        0,
        (rec.torque - rec.gravity_torque * 1.1 + 0.4 - ripple)[rec.at_cruise & (rec.direction > 0)],
    )


def test_sweep_uses_per_joint_sensor_from_sequence() -> None:
    sensors = tuple(TorqueSensor(offset=float(j)) for j in range(6))
    _, rec = _sweep(joint=3, sensor=sensors)
    np.testing.assert_allclose(rec.torque - rec.gravity_torque, 3.0)


def test_sweep_rejects_bad_arguments() -> None:
    noisy = TorqueSensor(noise_std=0.1)
    cases: list[tuple[dict[str, object], str]] = [
        ({"joint": 6}, "`joint`"),
        ({"joint": 1.0}, "`joint`"),
        ({"configuration": np.zeros(5)}, "`configuration`"),
        ({"start": 0.8}, "`stop`"),
        ({"speed": 0.0}, "`speed`"),
        ({"sample_rate": -1.0}, "`sample_rate`"),
        ({"ramp_time": -0.1}, "`ramp_time`"),
        ({"cycles": 0}, "`cycles`"),
        ({"start": 0.0, "stop": 0.05}, "`speed` \\* `ramp_time`"),
        ({"sensor": noisy}, "`rng`"),
        ({"sensor": noisy, "rng": 3}, "`rng`"),
        ({"sensor": (TorqueSensor(),) * 5}, "`sensor`"),
        ({"sensor": (TorqueSensor(),) * 5 + (1,)}, "`sensor\\[5\\]`"),
        ({"sensor": 1.0}, "`sensor`"),
    ]
    for overrides, match in cases:
        with pytest.raises(ValueError, match=match):
            _sweep(**overrides)


# --------------------------------------------------------------------------------------------
# Sensor model


def test_sensor_terms() -> None:
    q = np.array([0.1, 0.2, 0.3, 0.4])
    v = np.array([-1.0, 0.0, 0.5, 2.0])
    tau = np.array([3.0, -2.0, -1.0, 0.5])
    assert np.array_equal(TorqueSensor().measure(q, v, tau), tau)
    np.testing.assert_allclose(
        TorqueSensor(gain=0.9, offset=0.2).measure(q, v, tau), 0.9 * tau + 0.2
    )
    fr = TorqueSensor(coulomb=0.5, viscous=0.1, load_coefficient=0.04).friction(v, tau)
    np.testing.assert_allclose(fr, [-0.5 - 0.12 - 0.1, 0.0, 0.5 + 0.04 + 0.05, 0.5 + 0.02 + 0.2])
    # Gain applies to friction too; offset and ripple do not get it.
    sensor = TorqueSensor(gain=2.0, offset=1.0, coulomb=0.5, ripple_amplitude=0.3, ripple_order=7)
    expected = 2.0 * (tau + 0.5 * np.sign(v)) + 1.0 + 0.3 * np.sin(7 * q)
    np.testing.assert_allclose(sensor.measure(q, v, tau), expected)
    assert sensor.measure(0.0, [1.0, -1.0], [[0.0], [1.0]]).shape == (2, 2)


def test_sensor_noise_statistics_and_random_seed() -> None:
    sensor = TorqueSensor(noise_std=0.2)
    n = 20000
    a = sensor.measure(np.zeros(n), np.zeros(n), np.ones(n), np.random.default_rng(3))
    b = sensor.measure(np.zeros(n), np.zeros(n), np.ones(n), np.random.default_rng(3))
    np.testing.assert_array_equal(a, b)
    assert np.std(a - 1.0) == pytest.approx(0.2, rel=0.03)
    assert abs(np.mean(a - 1.0)) < 4 * 0.2 / np.sqrt(n)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"gain": 0.0}, "`gain`"),
        ({"offset": np.nan}, "`offset`"),
        ({"coulomb": -0.1}, "`coulomb`"),
        ({"viscous": -0.1}, "`viscous`"),
        ({"load_coefficient": -0.1}, "`load_coefficient`"),
        ({"ripple_amplitude": -1.0}, "`ripple_amplitude`"),
        ({"ripple_order": 0.0}, "`ripple_order`"),
        ({"ripple_phase": np.inf}, "`ripple_phase`"),
        ({"noise_std": -1.0}, "`noise_std`"),
        ({"noise_correlation_time": -0.1}, "`noise_correlation_time`"),
        ({"noise_correlation_time": "0.1"}, "`noise_correlation_time`"),
    ],
)
def test_sensor_rejects_bad_parameters(kwargs: dict[str, float], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        TorqueSensor(**kwargs)


def test_sensor_measure_rejects_bad_arrays() -> None:
    with pytest.raises(ValueError, match="broadcastable"):
        TorqueSensor().measure(np.zeros(3), np.zeros(4), 0.0)
    with pytest.raises(ValueError, match="`velocity`"):
        TorqueSensor().measure(0.0, np.nan, 0.0)
    with pytest.raises(ValueError, match="`rng`"):
        TorqueSensor(noise_std=1.0).measure(0.0, 0.0, 0.0)
    # Correlated noise needs the sample times, which `measure` does not take.
    correlated = TorqueSensor(noise_std=1.0, noise_correlation_time=0.1)
    with pytest.raises(ValueError, match="`noise_correlation_time`"):
        correlated.measure(0.0, 0.0, 0.0, np.random.default_rng(0))
    assert TorqueSensor(noise_correlation_time=0.1).measure(0.0, 1.0, 2.0) == 2.0


def test_correlated_sensor_noise_is_drawn_along_the_sweeps_stamps() -> None:
    """A sweep recorded with noise correlated over 0.1 s at 200 Hz: the reading less the
    noise-free one has the sensor's standard deviation and lag-1 correlation exp(-0.005/0.1),
    and the same seed gives the same readings; white noise stays uncorrelated."""
    arm = ur5_arm(up_from_base_tilt(0.3, 0.2))
    config = np.array([0.0, -1.2, 0.4, -1.0, 0.3, 0.0])
    readings = {}
    for tau_c in (0.0, 0.1):
        sensor = TorqueSensor(coulomb=0.3, noise_std=0.2, noise_correlation_time=tau_c)
        args = (1, config, -2.5, 0.5, 0.1, 200.0)
        rec = arm.sweep(*args, sensor=sensor, rng=np.random.default_rng(5))
        again = arm.sweep(*args, sensor=sensor, rng=np.random.default_rng(5))
        clean = arm.sweep(*args, sensor=dataclasses.replace(sensor, noise_std=0.0))
        np.testing.assert_array_equal(rec.torque, again.torque)
        readings[tau_c] = rec.torque - clean.torque
    for tau_c, e in readings.items():
        lag1 = float(np.corrcoef(e[1:], e[:-1])[0, 1])
        assert np.std(e) == pytest.approx(0.2, rel=0.15 if tau_c else 0.03)
        assert lag1 == pytest.approx(np.exp(-0.005 / tau_c) if tau_c else 0.0, abs=0.03)


# --------------------------------------------------------------------------------------------
# Realistic sensors


def test_realistic_sensor_ranges() -> None:
    arm = iiwa_arm(up_from_base_tilt(0.5, 0.0))
    raw_peak = arm.peak_gravity_torque()
    peak = np.maximum(raw_peak, 0.01 * raw_peak.max())
    assert peak[6] == pytest.approx(0.01 * raw_peak.max())  # J7 has no gravity load
    rng = np.random.default_rng(2024)
    draws = [realistic_sensors(rng, raw_peak) for _ in range(200)]
    for sensors in draws:
        assert len(sensors) == 7
        for s, p in zip(sensors, peak, strict=True):
            assert 0.85 <= s.gain <= 1.15
            assert abs(s.offset) <= 0.03 * p
            assert 0.02 * p <= s.coulomb <= 0.10 * p
            assert 0.01 * p <= s.viscous <= 0.05 * p
            assert 0.0 <= s.load_coefficient <= 0.05
            assert s.ripple_amplitude == pytest.approx(0.005 * p)
            assert s.noise_std == pytest.approx(0.005 * p)
            assert 100 <= s.ripple_order <= 320
    gains = np.array([[s.gain for s in sensors] for sensors in draws])
    assert gains.min() < 0.87 and gains.max() > 1.13  # the range is used, not just respected


def test_realistic_sensors_reproducible_and_peak_override() -> None:
    arm = ur5_arm()
    peak = arm.peak_gravity_torque()
    a = realistic_sensors(np.random.default_rng(9), peak)
    b = realistic_sensors(np.random.default_rng(9), peak)
    c = realistic_sensors(np.random.default_rng(10), peak)
    assert a == b
    assert a != c
    custom = realistic_sensors(np.random.default_rng(9), np.full(6, 10.0))
    assert all(s.noise_std == pytest.approx(0.05) for s in custom)
    # The same sensors and random seed give the same sweep, noise included.
    config = [0.0, -1.2, 0.6, 0.0, 0.5, 0.0]
    r1 = arm.sweep(1, config, -0.5, 0.5, 0.5, 100.0, a, np.random.default_rng(1))
    r2 = arm.sweep(1, config, -0.5, 0.5, 0.5, 100.0, b, np.random.default_rng(1))
    np.testing.assert_array_equal(r1.torque, r2.torque)
    assert not np.allclose(r1.torque, r1.gravity_torque)


def test_realistic_sensors_reject_bad_arguments() -> None:
    arm = ur5_arm()
    peak = arm.peak_gravity_torque()
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="`rng`"):
        realistic_sensors(None, peak)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"`peak` to have shape \(n,\)"):
        realistic_sensors(rng, np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"`peak` to have shape \(n,\)"):
        realistic_sensors(rng, [])
    with pytest.raises(ValueError, match="`peak` to be non-negative and positive"):
        realistic_sensors(rng, np.zeros(6))
    with pytest.raises(ValueError, match="`peak` to be non-negative and positive"):
        realistic_sensors(rng, [1.0, -1.0])
    with pytest.raises(ValueError, match="`peak` to be numeric"):
        realistic_sensors(rng, arm)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`min_peak_fraction`"):
        realistic_sensors(rng, peak, min_peak_fraction=-0.1)
    massless = SyntheticArm(dh=np.zeros((1, 4)), masses=[0.0], coms=np.zeros((1, 3)))
    with pytest.raises(ValueError, match="`peak` to be non-negative and positive"):
        realistic_sensors(rng, massless.peak_gravity_torque())


def test_realistic_sensors_raise_small_peaks() -> None:
    sensors = realistic_sensors(np.random.default_rng(4), [200.0, 0.0, 1.0], min_peak_fraction=0.02)
    np.testing.assert_allclose([s.noise_std for s in sensors], 0.005 * np.array([200, 4, 4]))
    exact = realistic_sensors(np.random.default_rng(4), [200.0, 0.5, 1.0], min_peak_fraction=0)
    np.testing.assert_allclose([s.noise_std for s in exact], 0.005 * np.array([200, 0.5, 1]))


def test_sweep_rejects_array_endpoints() -> None:
    with pytest.raises(ValueError, match="`start` to be a scalar"):
        _sweep(start=[0.0, 1.0])


# --------------------------------------------------------------------------------------------
# Result contract


def test_arm_record_and_sensor_follow_the_result_contract() -> None:
    arm = random_arm(np.random.default_rng(21), 4, max_tilt=1.0)
    sensors = realistic_sensors(np.random.default_rng(22), arm.peak_gravity_torque())
    rec = arm.sweep(1, np.zeros(4), -0.5, 0.5, 0.5, 50.0, sensors, np.random.default_rng(23))
    for result in (arm, rec, sensors[0]):
        copy = pickle.loads(pickle.dumps(result))
        assert copy == result
        json.dumps(result.to_dict())
        for field in dataclasses.fields(result):
            value = getattr(copy, field.name)
            if isinstance(value, np.ndarray):
                with pytest.raises(ValueError, match="read-only"):
                    value[...] = 0
    assert arm != dataclasses.replace(arm, gravity=9.81)
    assert arm == dataclasses.replace(arm)
    assert rec.to_dict()["joint"] == 1 and isinstance(rec.to_dict()["at_cruise"][0], bool)
    assert sensors[0] != sensors[1]
    assert arm.to_dict()["gravity"] == STANDARD_GRAVITY


def test_arm_and_record_copy_the_callers_arrays() -> None:
    dh, masses, coms, up = np.zeros((1, 4)), np.ones(1), np.zeros((1, 3)), np.array([0, 0, 1.0])
    arm = SyntheticArm(dh=dh, masses=masses, coms=coms, up=up)
    dh[0, 2], masses[0], coms[0, 0], up[:] = 5.0, 7.0, 3.0, [1.0, 0, 0]
    np.testing.assert_array_equal(arm.dh, 0.0)
    np.testing.assert_array_equal(arm.masses, 1.0)
    np.testing.assert_array_equal(arm.coms, 0.0)
    np.testing.assert_array_equal(arm.up, [0, 0, 1])
    q = np.linspace(0, 1, 5)
    rec = SweepRecord(
        joint=0,
        configuration=np.zeros(1),
        up=up,
        time=q,
        q=q,
        velocity=q,
        direction=np.ones(5),
        at_cruise=np.ones(5, dtype=bool),
        torque=q,
        gravity_torque=q,
        speed=0.1,
        sample_rate=1.0,
    )
    q[0], up[0] = 9.0, 9.0
    np.testing.assert_array_equal(rec.q, np.linspace(0, 1, 5))
    np.testing.assert_array_equal(rec.up, [1.0, 0, 0])


# --------------------------------------------------------------------------------------------
# Units, caps, types and scale (issue 11)


def test_sweep_of_90_rad_is_refused_as_degrees() -> None:
    # Seen: a 90 "rad" sweep recorded 36,002 samples without a word.
    arm = canonical_arm(L1=0.5, mass=2.0, up=up_from_base_tilt(0.3, 0.5))
    with pytest.raises(ValueError, match=r"`stop` - `start` in radians.*degrees\?"):
        arm.sweep(0, [0.0, np.pi / 2], start=0.0, stop=90.0, speed=0.5, sample_rate=100.0)
    with pytest.raises(ValueError, match=r"`start` to hold joint positions in radians.*degrees\?"):
        arm.sweep(0, [0.0, np.pi / 2], start=-90.0, stop=-88.0, speed=0.5, sample_rate=100.0)
    with pytest.raises(ValueError, match=r"`configuration` to hold joint positions.*degrees\?"):
        arm.sweep(0, [0.0, 90.0], start=-1.0, stop=1.0, speed=0.5, sample_rate=100.0)
    # Two full turns are still radians.
    arm.sweep(0, [0.0, 4 * np.pi], start=-2 * np.pi, stop=2 * np.pi, speed=4.0, sample_rate=5.0)


def test_sweep_sample_count_is_capped() -> None:
    arm = canonical_arm(L1=0.5, mass=2.0)
    with pytest.raises(ValueError, match=r"at most 1,000,000 samples.*`sample_rate`"):
        arm.sweep(0, [0.0, 1.0], start=-1.5, stop=1.5, speed=1e-6, sample_rate=100.0)
    with pytest.raises(ValueError, match=r"at most 1,000,000 samples"):
        arm.sweep(0, [0.0, 1.0], -1.5, 1.5, speed=0.5, sample_rate=1e300)
    with pytest.raises(ValueError, match="`cycles` to be an integer from 1 to 1000"):
        arm.sweep(0, [0.0, 1.0], -1.5, 1.5, speed=0.5, sample_rate=100.0, cycles=10**6)
    with pytest.raises(ValueError, match="`samples` to be an integer from 1 to 100000"):
        arm.peak_gravity_torque(samples=10**9)


def test_numeric_strings_and_booleans_are_refused() -> None:
    arm = canonical_arm(L1=0.5, mass=2.0)
    sweep = {"configuration": [0.0, 1.0], "start": -1.0, "stop": 1.0}
    for key, value in (("start", "-1.0"), ("speed", "0.5"), ("sample_rate", "100")):
        with pytest.raises(ValueError, match=f"`{key}`"):
            arm.sweep(0, **{"speed": 0.5, "sample_rate": 100.0, **sweep, key: value})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`joint`"):
        arm.sweep(True, speed=0.5, sample_rate=100.0, **sweep)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`L1`"):
        canonical_arm(L1=True)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`L2`"):
        canonical_arm(L1=0.5, L2="0.1")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`gravity`"):
        ur5_arm(gravity="9.81")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`masses`"):
        SyntheticArm(dh=[[0, 0, 1.0, 0]], masses=["1.0"], coms=[[0, 0, 0]])
    with pytest.raises(ValueError, match="`offset`"):
        TorqueSensor(offset=True)
    with pytest.raises(ValueError, match="`gain`"):
        TorqueSensor(gain="1.1")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`q`"):
        arm.gravity_torque(np.array([True, False]))


def test_fixed_angles_in_degrees_are_refused() -> None:
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match=r"angles of `dh`.*degrees\?"):
        SyntheticArm(dh=[[0, 0, 1.0, 90.0]], masses=[1.0], coms=[[0, 0, 0]])
    with pytest.raises(ValueError, match=r"`gamma0` in radians.*degrees\?"):
        canonical_arm(L1=0.5, gamma0=45.0)
    with pytest.raises(ValueError, match=r"`max_tilt`.*degrees\?"):
        random_arm(rng, 3, max_tilt=30.0)


def test_arm_limits() -> None:
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="`n_joints` to be an integer from 1 to 100"):
        random_arm(rng, 10**12)
    with pytest.raises(ValueError, match=r"`mass_range` to have shape \(2,\)"):
        random_arm(rng, 3, mass_range=np.array([[0.5, 8.0]]).T)
    with pytest.raises(ValueError, match="`link_length` at most 1e"):
        random_arm(rng, 3, link_length=1e300)
    with pytest.raises(ValueError, match="`dh` to have at most 100 rows"):
        SyntheticArm(dh=np.zeros((101, 4)), masses=np.zeros(101), coms=np.zeros((101, 3)))
    with pytest.raises(ValueError, match="lengths of `coms`"):
        SyntheticArm(dh=[[0, 0, 1.0, 0]], masses=[1.0], coms=[[1e300, 0, 0]])
    with pytest.raises(ValueError, match="holding torques within 1e"):
        SyntheticArm(dh=[[0, 0, 1.0, 0]], masses=[1e300], coms=[[0, 0, 0]], gravity=1e10)
    with pytest.raises(ValueError, match="`min_peak_fraction` in"):
        realistic_sensors(rng, [1.0, 2.0], min_peak_fraction=2.0)


def test_arm_up_of_any_scale_is_checked_without_overflow() -> None:
    with np.errstate(all="raise"):
        for scale in (1e300, 1e-300):
            with pytest.raises(ValueError, match="`up` to have unit norm"):
                ur5_arm(np.array([0.0, 0.6, 0.8]) * scale)
        arm = iiwa_arm([0.0, 0.6, 0.8])
        torque = arm.gravity_torque(np.full(7, 1e-300))
    assert np.all(np.isfinite(torque))


def test_sensor_overflow_is_an_error() -> None:
    sensor = TorqueSensor(gain=1e300, load_coefficient=1e300, ripple_order=1e300)
    with pytest.raises(ValueError, match="`holding_torque`"):
        sensor.measure(0.0, 1.0, 1e10)
    with pytest.raises(ValueError, match="`q`"):
        sensor.ripple(1e10)
    arm = canonical_arm(L1=0.5, mass=2.0)
    with np.errstate(all="raise"), pytest.raises(ValueError, match="`sensor` to give readings"):
        arm.sweep(0, [0.0, 1.0], -1.0, 1.0, 0.5, 20.0, TorqueSensor(gain=1e300, coulomb=1e300))


def _method_cases() -> list[tuple[str, object, tuple[object, ...], dict[str, object]]]:
    arm = ur5_arm(up_from_base_tilt(0.3, 0.8))
    q = np.array([[0.3, -1.0, 0.5, -0.7, 0.4, 0.1], [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]])
    sensor = TorqueSensor(gain=1.1, offset=0.2, coulomb=0.5, ripple_amplitude=0.05)
    v, tau = np.array([-0.5, 0.0, 0.5]), np.array([2.0, -1.0, 3.0])
    config = np.array([0.3, -1.0, 0.5, -0.7, 0.4, 0.1])
    sweep_kwargs: dict[str, object] = {"speed": 0.5, "sample_rate": 50.0, "ramp_time": 0.2}
    return [
        ("link_poses", arm.link_poses, (q,), {}),
        ("joint_axes", arm.joint_axes, (q,), {}),
        ("com_positions", arm.com_positions, (q,), {}),
        ("potential_energy", arm.potential_energy, (q,), {}),
        ("gravity_torque", arm.gravity_torque, (q,), {}),
        ("peak_gravity_torque", arm.peak_gravity_torque, (), {"samples": 64}),
        ("sweep", arm.sweep, (1, config, -1.0, 1.0), {**sweep_kwargs, "cycles": 1}),
        ("friction", sensor.friction, (v, tau), {}),
        ("ripple", sensor.ripple, (v,), {}),
        ("measure", sensor.measure, (v, v, tau), {}),
    ]


@pytest.mark.parametrize("index", range(10))
def test_methods_give_a_clear_error_or_a_finite_result_for_hostile_inputs(index: int) -> None:
    # The fuzz suite calls the constructors; the methods of arms and sensors get the same
    # hostile variants of each argument here.
    import test_fuzz

    name, method, args, kwargs = _method_cases()[index]
    kind, value = test_fuzz._outcome(method, args, kwargs)
    assert kind == "result", f"{name}: {value!r}"
    for context, a, k in test_fuzz._mutations(args, kwargs):
        kind, value = test_fuzz._outcome(method, a, k)
        assert kind != "type error", f"{name}, {context}: {value!r}"
        if kind == "error":
            test_fuzz._check_error(value, f"{name}, {context}")
        else:
            test_fuzz._check_result(value, f"{name}, {context}")
