"""gravdir.testing: its strategies draw what they say with the truth, its assertions judge right.

The truths are checked against explicit formulas written here (products of DH transforms,
spherical coordinates), not against gravdir's own conversions.
"""

from __future__ import annotations

import math
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import find, given, settings
from hypothesis import strategies as st

from gravdir.kinematics import link_frames
from gravdir.testing import (
    ChainCase,
    Mount,
    SweepExperiment,
    arms,
    assert_covariance_honest,
    assert_tilt_azimuth_consistent,
    assert_up_consistent,
    assert_up_covariance_honest,
    assert_within_uncertainty,
    azimuths,
    friction_joints,
    harmonic_drive_joints,
    mounts,
    sensor_errors,
    serial_chains,
    sweep_experiments,
    tilts,
    touch_sets,
    up_error_tangent,
    ups,
)
from gravdir.touch import up_from_touches


def spherical(tilt: float, azimuth: float) -> np.ndarray:
    return np.array(
        [math.sin(tilt) * math.cos(azimuth), math.sin(tilt) * math.sin(azimuth), math.cos(tilt)]
    )


def rot_z(t: float) -> np.ndarray:
    c, s = math.cos(t), math.sin(t)
    return np.array([[c, -s, 0, 0], [s, c, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]])


def rot_x(t: float) -> np.ndarray:
    c, s = math.cos(t), math.sin(t)
    return np.array([[1, 0, 0, 0], [0, c, -s, 0], [0, s, c, 0], [0, 0, 0, 1.0]])


def trans(x: float, y: float, z: float) -> np.ndarray:
    out = np.eye(4)
    out[:3, 3] = x, y, z
    return out


# ---------------------------------------------------------------------------------- import


def test_import_gravdir_does_not_import_testing_or_hypothesis():
    code = (
        "import sys, gravdir; print('gravdir.testing' in sys.modules, 'hypothesis' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_missing_hypothesis_names_the_extra():
    code = "import sys; sys.modules['hypothesis'] = None; import gravdir.testing"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode != 0
    assert "ImportError" in out.stderr
    assert "pip install -e '.[testing]'" in out.stderr


# ------------------------------------------------------------------------------ the world


@given(tilts(0.2, 0.4), azimuths(), ups(min_tilt=1.0, max_tilt=1.2))
def test_tilts_azimuths_and_ups_stay_in_range(tilt, azimuth, up):
    assert 0.2 <= tilt <= 0.4
    assert -math.pi < azimuth <= math.pi
    assert np.linalg.norm(up) == pytest.approx(1.0, abs=1e-15)
    assert 1.0 - 1e-12 <= math.acos(np.clip(up[2], -1, 1)) <= 1.2 + 1e-12


@given(mounts(max_deviation=0.2))
def test_mounts_carry_their_truth(mount: Mount):
    nominal = {"floor": 0.0, "wall": math.pi / 2, "ceiling": math.pi}[mount.kind]
    assert abs(mount.tilt - nominal) <= 0.2
    np.testing.assert_allclose(mount.up, spherical(mount.tilt, mount.azimuth), atol=1e-15)


def test_mounts_reach_the_exact_nominal_tilts():
    seen = set()

    @settings(max_examples=200)
    @given(mounts())
    def collect(mount: Mount):
        if mount.tilt in (0.0, math.pi / 2, math.pi):
            seen.add(mount.kind)

    collect()
    assert seen == {"floor", "wall", "ceiling"}


def test_world_strategies_refuse_bad_options():
    with pytest.raises(ValueError, match="`kinds`"):
        find(mounts(kinds=("roof",)), lambda _: True)
    with pytest.raises(ValueError, match="`max_deviation`"):
        find(mounts(max_deviation=20.0), lambda _: True)
    with pytest.raises(ValueError, match="`min_tilt` <= `max_tilt`"):
        tilts(1.0, 0.5)
    with pytest.raises(ValueError, match="`kinds`"):
        find(serial_chains(2, 5, kinds=("ur5", "panda")), lambda _: True)
    with pytest.raises(ValueError, match="`min_joints` <= `max_joints`"):
        find(arms(5, 3), lambda _: True)
    with pytest.raises(ValueError, match="`n_sweeps`"):
        find(sweep_experiments(n_sweeps=4), lambda _: True)
    with pytest.raises(ValueError, match="`min_amplitude`"):
        find(sweep_experiments(min_amplitude=1.0), lambda _: True)


def explicit_frames(case: ChainCase, q: np.ndarray) -> list[np.ndarray]:
    """Link frames by the textbook products, written independently of gravdir.kinematics."""
    frame, out = np.eye(4), []
    for (d, offset, a, alpha), qi in zip(case.dh, q, strict=True):
        if case.convention == "standard":
            frame = frame @ rot_z(qi + offset) @ trans(0, 0, d) @ trans(a, 0, 0) @ rot_x(alpha)
        else:
            frame = frame @ rot_x(alpha) @ trans(a, 0, 0) @ rot_z(qi + offset) @ trans(0, 0, d)
        out.append(frame)
    return out


@given(serial_chains(), st.lists(st.floats(-math.pi, math.pi), min_size=7, max_size=7))
def test_serial_chains_are_their_dh_tables(case: ChainCase, angles):
    assert 3 <= case.n_joints <= 7
    assert case.chain.description == ("dh" if case.convention == "standard" else "modified_dh")
    q = np.array(angles[: case.n_joints])
    frames = link_frames(case.chain, q)
    np.testing.assert_allclose(frames.link_poses, explicit_frames(case, q), atol=1e-12)
    np.testing.assert_allclose(
        frames.flange, explicit_frames(case, q)[-1] @ case.link_from_flange, atol=1e-12
    )


def test_panda_chain_matches_the_published_home_pose():
    # At q = 0 the Panda's flange sits 0.088 m ahead of its base axis and 0.926 m up, pointing
    # down: 0.333 + 0.316 + 0.384 - 0.107, the lengths of Franka's DH table.
    case = find(serial_chains(kinds=("panda",)), lambda _: True)
    flange = link_frames(case.chain, np.zeros(7)).flange
    np.testing.assert_allclose(flange[:3, 3], [0.088, 0.0, 0.926], atol=1e-12)
    np.testing.assert_allclose(flange[:3, 2], [0.0, 0.0, -1.0], atol=1e-12)


@given(
    arms(
        2,
        5,
        transverse_j2=True,
        up=mounts(kinds=("ceiling",), max_deviation=0.0).map(lambda m: m.up),
    )
)
def test_arms_draw_joints_mount_and_a_crossing_j2(arm):
    assert 2 <= arm.n_joints <= 5 or arm.name in ("UR5-like", "iiwa-like")
    assert arm.up[2] == pytest.approx(-1.0, abs=1e-15)
    assert abs(math.sin(arm.dh[0, 3])) >= 0.7


@given(st.data())
def test_sensor_errors_are_realistic_and_switchable(data):
    peak = np.array([40.0, 10.0, 0.0])
    sensors = data.draw(sensor_errors(peak))
    quiet = data.draw(sensor_errors(peak, noise=False, ripple=False))
    raised = np.maximum(peak, 0.01 * peak.max())
    for s, p in zip(sensors, raised, strict=True):
        assert 0.85 <= s.gain <= 1.15 and abs(s.offset) <= 0.03 * p
        assert s.noise_std == pytest.approx(0.005 * p) and s.ripple_amplitude > 0
    assert all(s.noise_std == 0.0 and s.ripple_amplitude == 0.0 for s in quiet)
    assert all(s.noise_correlation_time == 0.0 for s in (*sensors, *quiet))
    correlated = data.draw(sensor_errors(peak, max_correlation_time=0.2))
    assert all(0.0 <= s.noise_correlation_time <= 0.2 for s in correlated)


def test_sensor_errors_refuse_a_bad_correlation_time():
    for bad in (-0.1, math.inf, "0.1"):
        with pytest.raises(ValueError, match="`max_correlation_time`"):
            sensor_errors([1.0, 2.0], max_correlation_time=bad)


# ------------------------------------------------------------------------------ experiments


@settings(max_examples=15)
@given(sweep_experiments(n_sweeps=3))
def test_sweep_experiments_record_the_arm_they_carry(exp: SweepExperiment):
    assert len(exp.records) == 3 and exp.joint == 1
    q1 = exp.configurations[:, 0]
    np.testing.assert_allclose(np.cos(q1[1:] - q1[0]), [0.0, -1.0], atol=1e-12)
    peak = exp.arm.peak_gravity_torque()[1]
    for rec, config in zip(exp.records, exp.configurations, strict=True):
        assert rec.q[0] == pytest.approx(config[1], abs=1e-12)
        np.testing.assert_allclose(rec.up, exp.arm.up)
        # the recorded true torque is the arm's holding torque at the recorded angles
        q = np.tile(config, (rec.q.size, 1))
        q[:, 1] = rec.q
        np.testing.assert_allclose(rec.gravity_torque, exp.arm.gravity_torque(q)[:, 1], atol=1e-9)
        tau0 = exp.arm.gravity_torque(np.r_[config[:1], 0.0, config[2:]])[1]
        tau1 = exp.arm.gravity_torque(np.r_[config[:1], np.pi / 2, config[2:]])[1]
        assert math.hypot(tau0, tau1) >= 0.2 * peak - 1e-9
    again = exp.with_noise(exp.seed + 1)
    assert again.arm == exp.arm and again.sensors == exp.sensors
    np.testing.assert_array_equal(again.records[0].gravity_torque, exp.records[0].gravity_torque)
    assert not np.array_equal(again.records[0].torque, exp.records[0].torque)


@given(touch_sets(max_noise=0.0))
def test_touch_sets_put_the_tool_tip_on_the_plane(data):
    tips = np.einsum("nij,j->ni", data.flange_poses[..., :3, :3], data.tool_tip)
    tips += data.flange_poses[..., :3, 3]
    np.testing.assert_allclose(tips, data.contacts, atol=1e-12)
    np.testing.assert_allclose(data.contacts @ data.up, data.offset, atol=1e-12)
    assert 6 <= data.contacts.shape[0] <= 12 and math.acos(data.up[2]) <= math.radians(10) + 1e-12


@given(harmonic_drive_joints(), friction_joints())
def test_drive_and_friction_joints_are_in_their_ranges(drive, joint):
    assert drive.circular_spline_teeth - drive.flexspline_teeth == 2
    assert np.all(np.abs(drive.te_amplitudes) <= 6e-5) and 5.0 <= drive.natural_frequency <= 30
    assert 1.0 <= joint.static_positive / joint.coulomb_positive <= 1.6
    assert 0.85 <= joint.gain <= 1.15 and 0 <= joint.noise_std <= 0.05


# ------------------------------------------------------------------------------ assertions


def test_within_uncertainty_passes_fails_and_wraps():
    assert_within_uncertainty([1.0, 2.0], [0.1, 0.1], [1.2, 2.0], nsigma=2.5)
    with pytest.raises(AssertionError, match=r"`value`\[0\] = 1 lies 3 standard deviations"):
        assert_within_uncertainty([1.0, 2.0], [0.1, 0.1], [1.3, 2.0], nsigma=2.5)
    assert_within_uncertainty(math.pi - 0.01, 0.01, -math.pi + 0.01, 3, period=2 * math.pi)
    with pytest.raises(AssertionError):
        assert_within_uncertainty(math.pi - 0.01, 0.01, -math.pi + 0.01, 3)
    assert_within_uncertainty(5.0, np.inf, 0.0)  # no information: anything goes
    assert_within_uncertainty(1.0, 0.0, 1.0 + 1e-13, atol=1e-12)  # exact data, rounding
    with pytest.raises(AssertionError):
        assert_within_uncertainty(1.0, 0.0, 1.0 + 1e-9, atol=1e-12)
    with pytest.raises(ValueError, match="`std`"):
        assert_within_uncertainty(1.0, -0.1, 1.0)
    with pytest.raises(ValueError, match="broadcast"):
        assert_within_uncertainty([1.0, 2.0], 0.1, [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="`nsigma`"):
        assert_within_uncertainty(1.0, 0.1, 1.0, nsigma=0.0)


def test_up_error_tangent_is_the_angle_toward_the_truth():
    e = up_error_tangent(spherical(0.3, 1.0), spherical(0.35, 1.0))
    assert np.linalg.norm(e) == pytest.approx(0.05, rel=1e-12)
    assert np.linalg.norm(up_error_tangent([0, 0, 1.0], [0, 0, -1.0])) == pytest.approx(math.pi)
    np.testing.assert_array_equal(up_error_tangent([1.0, 0, 0], [1.0, 0, 0]), [0.0, 0.0])
    with pytest.raises(ValueError, match="unit norm"):
        up_error_tangent([0, 0, 2.0], [0, 0, 1.0])


@settings(max_examples=20)
@given(touch_sets())
def test_up_consistent_accepts_a_real_estimator_and_rejects_a_rotated_truth(data):
    fit = up_from_touches(
        data.flange_poses, data.tool_tip, noise_std=max(data.noise_std, 1e-7), up_hint=[0, 0, 1]
    )
    assert_up_consistent(fit, data.up)
    # the truth moved by 8 reported standard deviations along the worst-known direction
    vals, vecs = np.linalg.eigh(fit.up_cov)
    d = vecs[:, -1]
    moved = fit.up + 8 * math.sqrt(vals[-1]) * d
    with pytest.raises(AssertionError, match="standard deviations"):
        assert_up_consistent(fit, moved / np.linalg.norm(moved))


def test_up_consistent_options_and_covariance_form():
    up = spherical(0.4, -1.0)
    est = SimpleNamespace(up=up, up_cov=1e-6 * (np.eye(3) - np.outer(up, up)))
    near = spherical(0.4035, -1.0)  # 3.5 sigma along the tilt
    assert_up_consistent(est, near)
    with pytest.raises(AssertionError):
        assert_up_consistent(est, near, nsigma=3.0)
    with pytest.raises(AssertionError):
        assert_up_consistent(est, near, p=0.01)
    with pytest.raises(ValueError, match="one of `nsigma` and `p`"):
        assert_up_consistent(est, near, nsigma=3.0, p=0.01)
    with pytest.raises(ValueError, match="`up_information` or `up_cov`"):
        assert_up_consistent(SimpleNamespace(up=up), near)
    exact = SimpleNamespace(up=up, up_cov=np.zeros((3, 3)))
    assert_up_consistent(exact, up)
    with pytest.raises(AssertionError):
        assert_up_consistent(exact, near)
    # an infinite variance along one direction accepts any error along it
    b = np.cross(up, [0.0, 0.0, 1.0])
    b /= np.linalg.norm(b)
    cov = np.where(np.abs(np.outer(b, b)) > 1e-15, np.inf, 0.0)
    free = SimpleNamespace(up=up, up_cov=cov)
    moved = up + 0.5 * b
    assert_up_consistent(free, moved / np.linalg.norm(moved))


def draws(rng, cov, n):
    return rng.multivariate_normal(np.zeros(cov.shape[0]), cov, size=n)


def test_covariance_honesty_catches_halved_and_doubled_covariances():
    rng = np.random.default_rng(7)
    cov = np.array([[2.0, 0.5, 0.0], [0.5, 1.0, 0.2], [0.0, 0.2, 0.5]])
    errors = draws(rng, cov, 100)
    covs = np.broadcast_to(cov, (100, 3, 3))
    assert_covariance_honest(errors, covs)
    with pytest.raises(AssertionError, match="too small"):
        assert_covariance_honest(errors, covs / 2)
    with pytest.raises(AssertionError, match="too large"):
        assert_covariance_honest(errors, covs * 2)
    # a singular covariance judges only its range: the null direction is ignored
    flat = np.diag([1.0, 1.0, 0.0])
    e = draws(rng, np.diag([1.0, 1.0, 1e-30]), 100) + [0.0, 0.0, 50.0]
    assert_covariance_honest(e, np.broadcast_to(flat, (100, 3, 3)))
    with pytest.raises(ValueError, match="symmetric"):
        assert_covariance_honest(errors[:1], np.array([[[1.0, 0.5, 0], [0, 1, 0], [0, 0, 1]]]))
    with pytest.raises(ValueError, match=r"\(k, d\)"):
        assert_covariance_honest(errors, covs[:, :2, :2])


@settings(max_examples=3)
@given(touch_sets(min_contacts=8, max_contacts=8, max_noise=0.0))
def test_up_covariance_honesty_on_a_real_estimator(data):
    rng = np.random.default_rng(0)
    sigma = 1e-4
    results, truths = [], []
    for _ in range(60):
        poses = np.array(data.flange_poses)
        poses[:, :3, 3] += rng.normal(0.0, sigma, (poses.shape[0], 3))
        results.append(up_from_touches(poses, data.tool_tip, noise_std=sigma, up_hint=[0, 0, 1]))
        truths.append(data.up)
    assert_up_covariance_honest(results, np.array(truths))
    halved = [SimpleNamespace(up=r.up, up_cov=r.up_cov / 2) for r in results]
    with pytest.raises(AssertionError, match="too small"):
        assert_up_covariance_honest(halved, data.up)


def test_tilt_azimuth_consistency_and_the_free_azimuth_at_tilt_zero():
    up = spherical(0.6, 2.0)
    cov = 1e-8 * (np.eye(3) - np.outer(up, up))
    assert_tilt_azimuth_consistent(0.6 + 3e-4, 2.0 - 3e-4, up, cov)
    with pytest.raises(AssertionError, match="^`tilt` = "):
        assert_tilt_azimuth_consistent(0.6 + 1e-3, 2.0, up, cov)
    with pytest.raises(AssertionError, match="^`azimuth` = "):
        assert_tilt_azimuth_consistent(0.6, 2.0 + 1e-3, up, cov)
    z = np.array([0.0, 0.0, 1.0])
    assert_tilt_azimuth_consistent(0.0, 1.234, z, 1e-8 * np.diag([1.0, 1.0, 0.0]))


def test_assertions_refuse_complex_ragged_and_integers_beyond_float_by_name():
    import warnings

    up = np.array([0.1, 0.0, math.sqrt(1 - 0.01)])
    cov = 1e-6 * (np.eye(3) - np.outer(up, up))
    tilt, azimuth = math.acos(up[2]), 0.0
    # An int beyond the float range used to raise OverflowError.
    with pytest.raises(ValueError, match="`tilt` within the float64 range"):
        assert_tilt_azimuth_consistent(10**400, azimuth, up, cov)
    with pytest.raises(ValueError, match="`azimuth` to be a scalar"):
        assert_tilt_azimuth_consistent(tilt, [0.0, 0.0], up, cov)
    with warnings.catch_warnings():
        # Complex arrays used to be judged by their real parts (a ComplexWarning only).
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="`up_cov` to be real, got complex"):
            assert_tilt_azimuth_consistent(tilt, azimuth, up, cov + 1e-3j)
        with pytest.raises(ValueError, match="`value` to be real, got complex"):
            assert_within_uncertainty(np.array([1.0, 2.0]) + 1j, 0.1, [1.0, 2.0])
        with pytest.raises(ValueError, match="`errors` to be real, got complex"):
            assert_covariance_honest(np.ones((4, 2)) * 1j, np.tile(np.eye(2), (4, 1, 1)))
    with pytest.raises(ValueError, match="`std` to be numeric .*got a ragged list"):
        assert_within_uncertainty([1.0, 2.0], [[0.1], [0.1, 0.2]], [1.0, 2.0])
    with pytest.raises(ValueError, match="`truth` within the float64 range"):
        assert_within_uncertainty(1.0, 0.1, 10**400)
    # Infinite standard deviations still accept anything.
    assert_within_uncertainty(5.0, np.inf, 1.0)
