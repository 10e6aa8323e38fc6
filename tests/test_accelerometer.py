"""Gravity from an accelerometer on a link: estimator, bound, planner and synthetic sensor."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import gravdir.accelerometer
from gravdir import STANDARD_GRAVITY
from gravdir.accelerometer import (
    AccelerometerFit,
    crlb_up_from_accelerometer,
    plan_accelerometer_poses,
    up_from_accelerometer,
)
from gravdir.errors import DegenerateGeometryError, InsufficientDataError
from gravdir.kinematics import chain_from_dh, link_frames
from gravdir.synthetic import iiwa_arm, ur5_arm
from gravdir.synthetic.accelerometer import (
    MICRO_G,
    AccelerometerSensor,
    accelerometer_readings,
    realistic_accelerometer,
)

ENCODER_STD = np.radians(0.003)
NOISE_STD = 150 * MICRO_G / 2.0  # 150 µg/√Hz averaged over 2 s


def _unit(v):
    v = np.asarray(v, dtype=float)
    return v / np.linalg.norm(v)


def _rotation_about(axis, angle):
    """Rodrigues' formula, written out here so the tests do not lean on the library."""
    k = _unit(axis)
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + np.sin(angle) * kx + (1 - np.cos(angle)) * kx @ kx


UP_UR5 = _unit([0.05, -0.03, 1.0])
UP_IIWA = _unit([-0.2, 0.1, 1.0])


@functools.cache
def _setup(name):
    arm = ur5_arm(up=UP_UR5) if name == "ur5" else iiwa_arm(up=UP_IIWA)
    chain = chain_from_dh(*np.asarray(arm.dh).T)
    link = chain.n_joints - 1
    plan = plan_accelerometer_poses(
        chain, link, 8, noise_std=NOISE_STD, encoder_std=ENCODER_STD, up_hint=arm.up
    )
    return arm, chain, link, plan


def _noise_free(sensor):
    return AccelerometerSensor(
        0.0, sensor.bias, sensor.scales, sensor.non_orthogonality, sensor.link_from_sensor
    )


def _monte_carlo(name, draws, seed):
    arm, chain, link, plan = _setup(name)
    rng = np.random.default_rng(seed)
    errors = np.empty((draws, 3))
    reported = np.empty((draws, 3, 3))
    bounds = np.empty((draws, 3, 3))
    for i in range(draws):
        sensor = realistic_accelerometer(rng)
        data = accelerometer_readings(arm, plan.q, sensor, rng, link=link, encoder_std=ENCODER_STD)
        fit = up_from_accelerometer(
            chain,
            data.measured_q,
            readings=data.readings,
            link=link,
            noise_std=data.noise_std,
            encoder_std=ENCODER_STD,
        )
        errors[i] = fit.up - arm.up
        reported[i] = fit.up_cov
        bound = crlb_up_from_accelerometer(
            chain,
            plan.q,
            link=link,
            noise_std=data.noise_std,
            encoder_std=ENCODER_STD,
            up_hint=arm.up,
            sensitivity=sensor.sensitivity,
            link_from_sensor=sensor.link_from_sensor,
        )
        bounds[i] = bound.up_cov
    return errors, reported, bounds


@pytest.mark.slow
@pytest.mark.parametrize(("name", "draws", "seed"), [("ur5", 1000, 11), ("iiwa", 500, 12)])
def test_monte_carlo_meets_the_bound(name, draws, seed):
    errors, reported, bounds = _monte_carlo(name, draws, seed)
    angle = np.degrees(np.linalg.norm(errors, axis=1))
    rms = np.sqrt(np.mean(np.sum(errors**2, axis=1)))
    crb = np.sqrt(np.mean(np.trace(bounds, axis1=1, axis2=2)))
    assert 0.85 < rms / crb < 1.15
    empirical = errors.T @ errors / len(errors)
    mean_reported = reported.mean(axis=0)
    assert 0.85 < np.trace(empirical) / np.trace(mean_reported) < 1.15
    # along each principal direction of the reported covariance
    vals, vecs = np.linalg.eigh(mean_reported)
    for k in (1, 2):  # the two tangent directions (the radial one is ~0)
        d = vecs[:, k]
        assert 0.85 < (d @ empirical @ d) / vals[k] < 1.15
    assert np.percentile(angle, 95) <= 0.01


def test_noise_free_recovers_up_and_every_sensor_parameter():
    for name in ("ur5", "iiwa"):
        arm, chain, link, plan = _setup(name)
        rng = np.random.default_rng(3)
        sensor = realistic_accelerometer(rng, link_from_sensor=_rotation_about([1, 2, 3], 2.0))
        data = accelerometer_readings(arm, plan.q, _noise_free(sensor), rng, link=link)
        fit = up_from_accelerometer(
            chain,
            data.measured_q,
            readings=data.readings,
            link=link,
            noise_std=NOISE_STD,
        )
        assert isinstance(fit, AccelerometerFit) and fit.converged
        np.testing.assert_allclose(fit.up, arm.up, atol=1e-9)
        np.testing.assert_allclose(fit.sensitivity, sensor.sensitivity, atol=1e-9)
        np.testing.assert_allclose(fit.link_from_sensor, sensor.link_from_sensor, atol=1e-9)
        np.testing.assert_allclose(fit.bias, sensor.bias, atol=1e-9)
        assert fit.chi2 < 1e-12 and fit.dof == 10
        np.testing.assert_allclose(fit.residuals, 0.0, atol=1e-9)
        # uncertainties are finite and positive where identified
        assert np.all(fit.bias_std > 0) and np.all(fit.link_from_sensor_std > 0)
        assert np.all(fit.sensitivity_std[np.triu_indices(3)] > 0)
        assert np.all(np.tril(fit.sensitivity_std, -1) == 0)


def test_upside_down_and_wall_mounts_get_the_sign_right():
    rng = np.random.default_rng(5)
    for up in ([0.0, 0.0, -1.0], [1.0, 0.0, 0.0], _unit([0.3, -0.8, -0.2])):
        arm = ur5_arm(up=_unit(up))
        chain = chain_from_dh(*np.asarray(arm.dh).T)
        q = rng.uniform(-np.pi, np.pi, (8, 6))
        sensor = realistic_accelerometer(rng)
        data = accelerometer_readings(arm, q, _noise_free(sensor), rng, link=5)
        fit = up_from_accelerometer(chain, q, readings=data.readings, link=5, noise_std=NOISE_STD)
        np.testing.assert_allclose(fit.up, arm.up, atol=1e-9)
        # with an up_hint of the wrong sign the answer is the same
        hinted = up_from_accelerometer(
            chain,
            q,
            readings=data.readings,
            link=5,
            noise_std=NOISE_STD,
            up_hint=-np.asarray(arm.up),
        )
        np.testing.assert_allclose(hinted.up, arm.up, atol=1e-9)


def test_fewer_than_five_poses_are_refused():
    arm, chain, link, plan = _setup("ur5")
    q = plan.q[:4]
    with pytest.raises(InsufficientDataError, match="at least 5 poses"):
        up_from_accelerometer(chain, q, readings=np.ones((4, 3)), link=link, noise_std=NOISE_STD)
    with pytest.raises(InsufficientDataError, match="at least 5 poses"):
        crlb_up_from_accelerometer(chain, q, link=link, noise_std=NOISE_STD)
    with pytest.raises(InsufficientDataError):
        plan_accelerometer_poses(chain, link, 4, noise_std=NOISE_STD)


def test_first_link_and_single_axis_poses_are_degenerate():
    arm, chain, _, _ = _setup("ur5")
    rng = np.random.default_rng(6)
    sensor = realistic_accelerometer(rng)
    q = rng.uniform(-np.pi, np.pi, (10, 6))
    data = accelerometer_readings(arm, q, _noise_free(sensor), rng, link=0)
    with pytest.raises(DegenerateGeometryError, match="two non-parallel axes"):
        up_from_accelerometer(chain, q, readings=data.readings, link=0, noise_std=NOISE_STD)
    with pytest.raises(DegenerateGeometryError):
        crlb_up_from_accelerometer(chain, q, link=0, noise_std=NOISE_STD)
    with pytest.raises(DegenerateGeometryError):
        plan_accelerometer_poses(chain, 0, 8, noise_std=NOISE_STD, n_candidates=50)
    # the last link, but only joint 4 moves: one axis again
    q1 = np.tile(q[0], (10, 1))
    q1[:, 3] = np.linspace(-2, 2, 10)
    data = accelerometer_readings(arm, q1, _noise_free(sensor), rng, link=5)
    with pytest.raises(DegenerateGeometryError, match="one axis"):
        up_from_accelerometer(chain, q1, readings=data.readings, link=5, noise_std=NOISE_STD)
    # two joints with parallel axes (UR joints 2, 3, 4 are parallel): still one axis
    q2 = np.tile(q[0], (10, 1))
    q2[:, 1] = np.linspace(-1, 1, 10)
    q2[:, 2] = np.linspace(1, -0.5, 10) ** 2
    data = accelerometer_readings(arm, q2, _noise_free(sensor), rng, link=3)
    with pytest.raises(DegenerateGeometryError):
        up_from_accelerometer(chain, q2, readings=data.readings, link=3, noise_std=NOISE_STD)


def test_single_axis_poses_leave_all_of_up_free():
    """The documented reason for refusing them: another `up` fits the same readings exactly."""
    angles = np.linspace(0, 2, 7)
    rot = np.stack([_rotation_about([0, 0, 1], a) for a in angles])
    up_a, up_b = _unit([0.1, 0.2, 1.0]), _unit([-0.5, 0.3, 0.4])
    v_a = np.einsum("mji,j->mi", rot, up_a)
    v_b = np.einsum("mji,j->mi", rot, up_b)
    # least-squares affine map v_b -> v_a leaves no residual
    design = np.hstack([v_b, np.ones((7, 1))])
    coef, *_ = np.linalg.lstsq(design, v_a, rcond=None)
    assert np.allclose(design @ coef, v_a, atol=1e-12)
    # ... through an invertible sensor matrix: both `up`s are valid answers
    assert abs(np.linalg.det(coef[:3])) > 1e-3


def test_common_scale_goes_to_the_sensitivity_not_to_up():
    arm, chain, link, plan = _setup("ur5")
    rng = np.random.default_rng(8)
    sensor = realistic_accelerometer(rng)
    data = accelerometer_readings(arm, plan.q, _noise_free(sensor), rng, link=link)
    fit = up_from_accelerometer(chain, plan.q, readings=data.readings, link=link, noise_std=1e-3)
    other = up_from_accelerometer(
        chain, plan.q, readings=data.readings, link=link, noise_std=1e-3, gravity=9.78
    )
    np.testing.assert_allclose(other.up, fit.up, atol=1e-12)
    np.testing.assert_allclose(
        other.sensitivity, fit.sensitivity * STANDARD_GRAVITY / 9.78, rtol=1e-10
    )
    np.testing.assert_allclose(other.bias, fit.bias, atol=1e-10)


def test_bound_matches_the_fit_information_and_scales_with_noise():
    arm, chain, link, plan = _setup("ur5")
    rng = np.random.default_rng(9)
    sensor = realistic_accelerometer(rng)
    data = accelerometer_readings(arm, plan.q, _noise_free(sensor), rng, link=link)
    fit = up_from_accelerometer(
        chain,
        plan.q,
        readings=data.readings,
        link=link,
        noise_std=NOISE_STD,
        encoder_std=ENCODER_STD,
    )
    bound = crlb_up_from_accelerometer(
        chain,
        plan.q,
        link=link,
        noise_std=NOISE_STD,
        encoder_std=ENCODER_STD,
        up_hint=arm.up,
        sensitivity=sensor.sensitivity,
        link_from_sensor=sensor.link_from_sensor,
    )
    np.testing.assert_allclose(fit.up_information, bound.up_information, rtol=1e-6, atol=1e-3)
    quiet = crlb_up_from_accelerometer(chain, plan.q, link=link, noise_std=NOISE_STD)
    noisy = crlb_up_from_accelerometer(chain, plan.q, link=link, noise_std=2 * NOISE_STD)
    assert noisy.up_std_deg == pytest.approx(2 * quiet.up_std_deg, rel=1e-9)
    # encoder noise only adds
    assert bound.up_std_deg > quiet.up_std_deg
    # a per-pose covariance equal to the scalar gives the same bound
    same = crlb_up_from_accelerometer(
        chain, plan.q, link=link, reading_cov=np.eye(3) * NOISE_STD**2
    )
    np.testing.assert_allclose(same.up_information, quiet.up_information, rtol=1e-9)
    assert np.allclose(
        bound.up_information @ arm.up, 0.0, atol=1e-6 * np.abs(bound.up_information).max()
    )


def test_plan_stays_within_limits_and_beats_random_poses():
    arm, chain, link, plan = _setup("ur5")
    limits = np.array([[-1.0, 1.0], [-2.0, 0.0], [-2.5, 2.5], [-3.0, 0.0], [-1.5, 1.5], [0, 3]])
    limited = plan_accelerometer_poses(
        chain,
        link,
        8,
        noise_std=NOISE_STD,
        encoder_std=ENCODER_STD,
        q_limits=limits,
        rng=np.random.default_rng(1),
    )
    q = limited.q
    assert q.shape == (8, 6)
    assert np.all(q >= limits[:, 0]) and np.all(q <= limits[:, 1])
    rng = np.random.default_rng(2)
    random_stds = [
        crlb_up_from_accelerometer(
            chain,
            rng.uniform(-np.pi, np.pi, (8, 6)),
            link=link,
            noise_std=NOISE_STD,
            encoder_std=ENCODER_STD,
        ).up_std_deg
        for _ in range(20)
    ]
    assert plan.bound.up_std_deg < min(random_stds)
    again = plan_accelerometer_poses(
        chain, link, 8, noise_std=NOISE_STD, encoder_std=ENCODER_STD, up_hint=arm.up
    )
    assert again == plan


def test_fingerprint_and_contract():
    arm, chain, link, plan = _setup("ur5")
    rng = np.random.default_rng(10)
    sensor = realistic_accelerometer(rng)
    data = accelerometer_readings(arm, plan.q, sensor, rng, link=link)
    fit = up_from_accelerometer(
        chain, plan.q, readings=data.readings, link=link, noise_std=NOISE_STD
    )
    fit2 = up_from_accelerometer(
        chain, plan.q, readings=data.readings + 1e-6, link=link, noise_std=NOISE_STD
    )
    assert len(fit.fingerprint) == 1 and not fit.fingerprint & fit2.fingerprint
    assert "AccelerometerFit" in repr(fit) and fit == fit
    assert np.isfinite(fit.up_std_deg) and fit.up_std_deg > 0


def test_bad_inputs_name_the_argument():
    arm, chain, link, plan = _setup("ur5")
    q, f = plan.q, np.ones((8, 3))
    with pytest.raises(ValueError, match="exactly one of `noise_std` and `reading_cov`"):
        up_from_accelerometer(chain, q, readings=f, link=link)
    with pytest.raises(ValueError, match="exactly one"):
        up_from_accelerometer(
            chain, q, readings=f, link=link, noise_std=1e-3, reading_cov=np.eye(3)
        )
    with pytest.raises(ValueError, match="`readings`"):
        up_from_accelerometer(chain, q, readings=f[:5], link=link, noise_std=1e-3)
    with pytest.raises(ValueError, match="degrees"):
        up_from_accelerometer(chain, np.degrees(q), readings=f, link=link, noise_std=1e-3)
    with pytest.raises(ValueError, match="`link`"):
        up_from_accelerometer(chain, q, readings=f, link=6, noise_std=1e-3)
    with pytest.raises(ValueError, match="`encoder_std`"):
        up_from_accelerometer(chain, q, readings=f, link=link, noise_std=1e-3, encoder_std=-1.0)
    with pytest.raises(ValueError, match="`reading_cov`"):
        up_from_accelerometer(chain, q, readings=f, link=link, reading_cov=-np.eye(3))
    with pytest.raises(ValueError, match="`noise_std`"):
        up_from_accelerometer(chain, q, readings=f, link=link, noise_std=1e5)
    with pytest.raises(ValueError, match="`chain`"):
        up_from_accelerometer("ur5", q, readings=f, link=link, noise_std=1e-3)
    with pytest.raises(ValueError, match="`q_limits`"):
        plan_accelerometer_poses(chain, link, 8, noise_std=1e-3, q_limits=np.zeros((6, 2)))
    with pytest.raises(ValueError, match="`sensitivity`"):
        crlb_up_from_accelerometer(
            chain, q, link=link, noise_std=1e-3, sensitivity=np.zeros((3, 3))
        )
    for bad in (0.0, 1.0, "1e-12"):
        with pytest.raises(ValueError, match="`xtol`"):
            up_from_accelerometer(chain, q, readings=f, link=link, noise_std=1e-3, xtol=bad)


def test_readings_are_keyword_only_and_the_former_names_are_gone() -> None:
    # a positional call of the former order raises instead of taking one array for another
    arm, chain, link, plan = _setup("ur5")
    q, f = plan.q, np.ones((8, 3))
    with pytest.raises(TypeError):
        up_from_accelerometer(chain, q, f, link=link, noise_std=1e-3)  # type: ignore[misc]
    with pytest.raises(TypeError):
        up_from_accelerometer(chain, configurations=q, readings=f, link=link, noise_std=1e-3)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        up_from_accelerometer(chain, q, readings=f, link=link, noise_std=1e-3, tol=1e-10)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        plan_accelerometer_poses(chain, link, 8, noise_std=1e-3, joint_limits=None)  # type: ignore[call-arg]
    assert not hasattr(plan, "configurations") and plan.q.shape == (8, 6)
    assert not hasattr(gravdir.accelerometer, "crlb_up_accelerometer")


def test_joint_positions_in_degrees_are_refused_by_the_shared_check():
    # The rule and its message are those of every joint position in gravdir (link_frames and
    # the dynamics regressor among them): within ±4π, beyond it "degrees?".
    arm, chain, link, plan = _setup("ur5")
    q, f = plan.q, np.ones((8, 3))
    held = r"`q` to hold joint positions in radians within ±4π, got .*degrees\?$"
    with pytest.raises(ValueError, match=held):
        up_from_accelerometer(chain, np.degrees(q), readings=f, link=link, noise_std=1e-3)
    with pytest.raises(ValueError, match=held):
        crlb_up_from_accelerometer(chain, np.degrees(q), link=link, noise_std=1e-3)
    beyond = q.copy()
    beyond[3, 1] = -4 * np.pi * (1 + 1e-12)
    with pytest.raises(ValueError, match=r"`q`.*got -12\.566.*degrees\?$"):
        up_from_accelerometer(chain, beyond, readings=f, link=link, noise_std=1e-3)
    limits = np.degrees(np.tile([-np.pi, np.pi], (6, 1)))
    with pytest.raises(ValueError, match=r"`q_limits` to hold joint positions.*degrees\?$"):
        plan_accelerometer_poses(chain, link, 8, noise_std=1e-3, q_limits=limits)
    # An encoder standard deviation is not an angle: its own limit, the same two turns.
    with pytest.raises(ValueError, match=r"`encoder_std` in radians.*beyond 4π.*degrees\?$"):
        up_from_accelerometer(chain, q, readings=f, link=link, noise_std=1e-3, encoder_std=13.0)
    # Two full turns either way are radians, and the same poses.
    rng = np.random.default_rng(41)
    data = accelerometer_readings(arm, q, realistic_accelerometer(rng), rng, link=link)
    turned = q - 4 * np.pi * np.sign(q)
    assert np.max(np.abs(turned)) <= 4 * np.pi and np.max(np.abs(turned)) > 3 * np.pi
    fit = up_from_accelerometer(chain, q, readings=data.readings, link=link, noise_std=NOISE_STD)
    same = up_from_accelerometer(
        chain, turned, readings=data.readings, link=link, noise_std=NOISE_STD
    )
    np.testing.assert_allclose(same.up, fit.up, atol=1e-9)


def test_synthetic_kinematics_agree_with_the_chain():
    """The sensor model computes link orientations itself; they must match the chain's."""
    from gravdir.synthetic.accelerometer import link_rotation

    arm, chain, _, _ = _setup("iiwa")
    q = np.random.default_rng(0).uniform(-2, 2, (5, 7))
    frames = link_frames(chain, q).rotations
    for k in range(7):
        np.testing.assert_allclose(
            link_rotation(np.asarray(arm.dh), q, k), frames[:, k], atol=1e-12
        )


def test_synthetic_sensor_errors():
    rng = np.random.default_rng(4)
    sensor = realistic_accelerometer(rng)
    t = sensor.sensitivity
    assert np.allclose(np.tril(t, -1), 0.0) and np.all(np.diag(t) > 0)
    np.testing.assert_allclose(np.linalg.norm(t, axis=1), sensor.scales)  # unit sensing axes
    assert np.all(np.abs(sensor.bias) <= 0.05 * STANDARD_GRAVITY)
    arm = ur5_arm()
    q = np.zeros((4000, 6))
    data = accelerometer_readings(arm, q, sensor, rng, link=5, averaging_time=2.0, encoder_std=1e-3)
    assert data.noise_std == pytest.approx(75 * MICRO_G)
    assert np.std(data.readings[:, 0]) == pytest.approx(75 * MICRO_G, rel=0.05)
    assert np.std(data.measured_q - q) == pytest.approx(1e-3, rel=0.05)
    # the mean reading is T R_m^T R^T (g up) + b, with R from an explicit rotation at q = 0
    rot = np.eye(3)
    for _d, th, _a, alpha in np.asarray(arm.dh):
        rot = rot @ _rotation_about([0, 0, 1], th) @ _rotation_about([1, 0, 0], alpha)
    expected = (
        t @ sensor.link_from_sensor.T @ rot.T @ (arm.gravity * np.asarray(arm.up)) + sensor.bias
    )
    np.testing.assert_allclose(data.readings.mean(axis=0), expected, atol=5 * 75 * MICRO_G / 60)


def test_vibration_averages_as_documented():
    rng = np.random.default_rng(0)
    base = realistic_accelerometer(rng)
    shaky = AccelerometerSensor(
        0.0,
        base.bias,
        base.scales,
        base.non_orthogonality,
        base.link_from_sensor,
        vibration_amplitude=0.5,
        vibration_frequency=7.3,
    )
    quiet = _noise_free(base)
    arm = ur5_arm()
    q = np.zeros((200, 6))
    a = accelerometer_readings(arm, q, shaky, np.random.default_rng(1), link=5, averaging_time=1.0)
    b = accelerometer_readings(arm, q, quiet, np.random.default_rng(1), link=5, averaging_time=1.0)
    dev = np.linalg.norm(a.readings - b.readings, axis=1)
    bound = 2 * 0.5 / (2 * np.pi * 7.3 * 1.0)  # |cos φ - cos(ωT + φ)| <= 2
    assert np.all(dev <= bound + 1e-12) and dev.max() > 0.3 * bound


@functools.cache
def _scattered():
    """Ten random poses of a UR5-like arm and realistic readings of a sensor on its last link."""
    arm = ur5_arm(up=UP_UR5)
    chain = chain_from_dh(*np.asarray(arm.dh).T)
    rng = np.random.default_rng(1)
    q = rng.uniform(-2.0, 2.0, (10, 6))
    data = accelerometer_readings(arm, q, realistic_accelerometer(rng), rng, link=5)
    return arm, chain, q, data


@pytest.mark.parametrize("scale", [1e-300, 1e-160, 1e-7, 0.0, 1e7, 1e300])
def test_readings_outside_a_millionth_to_a_million_g_are_refused_by_name(scale):
    _, chain, _, data = _scattered()
    with pytest.raises(ValueError, match="`readings`") as info:
        up_from_accelerometer(
            chain,
            data.measured_q,
            readings=data.readings * scale,
            link=5,
            noise_std=data.noise_std,
        )
    assert "check their units" in str(info.value)


@pytest.mark.parametrize("scale", [1e-5, 1e5])
def test_readings_within_the_range_scale_into_the_sensitivity(scale):
    """Readings and noise scaled together leave `up` and its information unchanged."""
    _, chain, _, data = _scattered()
    q = data.measured_q
    fit = up_from_accelerometer(chain, q, readings=data.readings, link=5, noise_std=data.noise_std)
    scaled = up_from_accelerometer(
        chain, q, readings=data.readings * scale, link=5, noise_std=data.noise_std * scale
    )
    np.testing.assert_allclose(scaled.up, fit.up, atol=1e-10)
    np.testing.assert_allclose(scaled.up_information, fit.up_information, rtol=1e-6)
    np.testing.assert_allclose(scaled.sensitivity, fit.sensitivity * scale, rtol=1e-8)
    assert np.isfinite(scaled.up_std_deg) and scaled.up_std_deg > 0


def _near_identical(q, scale, around_zero):
    return q * scale if around_zero else q[0] + (q - q[0]) * scale


@pytest.mark.parametrize("around_zero", [True, False])
@pytest.mark.parametrize("scale", [1e-8, 1e-10, 1e-12, 1e-14, 1e-300])
def test_poses_that_barely_differ_are_degenerate(scale, around_zero):
    """An arm that was not moved: refused by the rank test of the design, before any weights
    with encoder noise are factorised (the same outcome on every BLAS kernel)."""
    arm, chain, q, data = _scattered()
    near = _near_identical(q, scale, around_zero)
    # the readings of the scattered poses, given with configurations that barely differ
    with pytest.raises(DegenerateGeometryError, match="`q`"):
        up_from_accelerometer(
            chain, near, readings=data.readings, link=5, noise_std=data.noise_std, encoder_std=5e-5
        )
    # readings taken where the arm stood
    rng = np.random.default_rng(2)
    still = accelerometer_readings(arm, near, realistic_accelerometer(rng), rng, link=5)
    for encoder_std in (0.0, 5e-5):
        with pytest.raises(DegenerateGeometryError, match="`q`"):
            up_from_accelerometer(
                chain,
                near,
                readings=still.readings,
                link=5,
                noise_std=still.noise_std,
                encoder_std=encoder_std,
            )
        with pytest.raises(DegenerateGeometryError, match="`q`"):
            crlb_up_from_accelerometer(
                chain, near, link=5, reading_cov=np.eye(3) * 5e-7, encoder_std=encoder_std
            )


def test_near_identical_poses_at_random_scales_are_degenerate():
    """The fuzz suite's random scales of `configurations`, for poses clustered around a pose."""
    _, chain, q, data = _scattered()
    rng = np.random.default_rng(20261203)
    for exponent in rng.integers(-300, -4, 8):
        near = _near_identical(q, 10.0 ** float(exponent), around_zero=False)
        with pytest.raises(DegenerateGeometryError, match="`q`"):
            up_from_accelerometer(
                chain,
                near,
                readings=data.readings,
                link=5,
                noise_std=data.noise_std,
                encoder_std=5e-5,
            )
        with pytest.raises(DegenerateGeometryError, match="`q`"):
            crlb_up_from_accelerometer(chain, near, link=5, noise_std=7e-4, encoder_std=5e-5)


def test_poses_a_few_degrees_apart_are_still_accepted():
    """The rank test refuses poses within about a milliradian, not merely close ones."""
    _, chain, q, _ = _scattered()
    near = _near_identical(q, 1e-2, around_zero=False)  # turns of up to about 0.07 rad
    bound = crlb_up_from_accelerometer(chain, near, link=5, noise_std=7e-4, encoder_std=5e-5)
    assert 0.01 < bound.up_std_deg < 10.0


@pytest.mark.parametrize("scale", [1e100, 1e7, 1e-7, 1e-160])
def test_sensitivity_outside_a_millionth_to_a_million_is_refused_by_name(scale):
    _, chain, q, _ = _scattered()
    with pytest.raises(ValueError, match="`sensitivity`"):
        crlb_up_from_accelerometer(
            chain,
            q,
            link=5,
            reading_cov=np.eye(3) * 5e-7,
            encoder_std=np.full(6, 5e-5),
            sensitivity=np.eye(3) * scale,
        )


@pytest.mark.parametrize("scale", [1e-5, 1e5])
def test_sensitivity_within_the_range_gives_the_bound_of_its_signal_to_noise(scale):
    """Sensitivity and noise scaled together leave the bound unchanged."""
    _, chain, q, _ = _scattered()
    t = np.array([[1.01, 0.02, -0.01], [0.0, 0.99, 0.03], [0.0, 0.0, 1.0]])
    bound = crlb_up_from_accelerometer(chain, q, link=5, noise_std=7e-4, sensitivity=t)
    scaled = crlb_up_from_accelerometer(
        chain, q, link=5, noise_std=7e-4 * scale, sensitivity=t * scale
    )
    np.testing.assert_allclose(scaled.up_information, bound.up_information, rtol=1e-8)
    assert np.isfinite(scaled.condition) and scaled.condition >= 1.0


def test_encoder_noise_far_above_the_readings_noise():
    """Weights whose two noise scales are too far apart for float64 are refused by name; short
    of that the bound is finite and approaches its limit set by the encoders alone."""
    _, chain, q, _ = _scattered()
    limits = [
        crlb_up_from_accelerometer(chain, q, link=5, noise_std=noise, encoder_std=0.01).up_std_deg
        for noise in (1e-6, 1e-8)
    ]
    assert np.isfinite(limits).all()
    assert limits[1] == pytest.approx(limits[0], rel=1e-3)
    with pytest.raises(ValueError, match="`encoder_std`"):
        crlb_up_from_accelerometer(chain, q, link=5, noise_std=1e-10, encoder_std=0.01)


def test_reading_cov_beyond_float_precision_is_refused():
    """A covariance whose positivity rounding would decide is refused on every BLAS kernel."""
    _, chain, q, data = _scattered()
    rot = _rotation_about([1.0, 2.0, 3.0], 0.7)
    nearly_singular = rot @ np.diag([1e-13, 1.0, 1.0]) @ rot.T * 1e-6
    for cov in (nearly_singular, np.full((3, 3), 5e-7)):
        with pytest.raises(ValueError, match="`reading_cov`"):
            up_from_accelerometer(
                chain, data.measured_q, readings=data.readings, link=5, reading_cov=cov
            )
        with pytest.raises(ValueError, match="`reading_cov`"):
            crlb_up_from_accelerometer(chain, q, link=5, reading_cov=cov)
    # eigenvalues 1e8 apart are still a covariance
    fine = rot @ np.diag([1e-8, 1.0, 1.0]) @ rot.T * 1e-6
    bound = crlb_up_from_accelerometer(chain, q, link=5, reading_cov=fine)
    assert np.isfinite(bound.up_std_deg) and bound.up_std_deg > 0
