"""End to end on a URDF arm: a controller's log in, every vendor's gravity setting out.

A seeded Monte Carlo of the whole pipeline a user runs on a UR arm. The arm is the UR5e-like
description shipped with gravdir (`UR5E_LIKE_URDF`), standing on a base tilted by 15° (azimuth
40° in the frame of its root link `base_link`), with realistic sensor errors
(`realistic_sensors`: gain, offset, Coulomb, viscous and load-dependent friction, gear ripple,
noise) drawn afresh for every draw. Each draw logs a session as a controller does
(`controller_log`: 100 Hz, jittered timestamps, inertial torques, reversals at 3 rad/s², motor
currents and drive gains), splits it into its three joint-2 sweeps, converts current to torque,
derives the acceleration from the logged velocity (`joint_acceleration`), fits each sweep with
the inertia column, the load-dependent friction and the ripple order (`fit_sweep`), estimates
`up` with the chain read from the same URDF text (`chain_from_urdf`, `estimate_up`), and turns
it into the frame of the UR controller (`express_up` with `BASE_FROM_ROOT["ur"]`), then into
every vendor's setting.

The truth is built here, independently of the code under test: `up` from its tilt and azimuth
by the spherical formula, and the controller's base from the test's own rotation by π about z
(the UR description's fixed joint ``base_link-base_fixed_joint``, ``rpy="0 0 pi"``, is
``base_link_from_base``), written with cos and sin. Each vendor's sign is typed in from its
document (docs/controllers.md), not read from gravdir.

What is asserted:

* the normalised squared error of `up` in its tangent plane averages 2 (a χ² with 2 degrees of
  freedom) within 15%. Over N draws the mean of a χ²₂ has standard deviation 2/√N; N = 720
  makes the 15% band 4.0 standard deviations wide (N = 300 would give 2.6);
* every vendor's setting is the estimate: `up_from_setting` gives its `up` back to 1e-12, the
  setting's covariance is the propagated covariance of `up`, and the setting of the true `up`
  lies within the setting's standard deviations (normalised error variance near 1);
* `compare_setting` flags the floor default ``set_gravity(0, 0, 9.82)`` by many standard
  deviations and, against the true setting, gives a Mahalanobis² averaging 2.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest

from gravdir import (
    GravdirWarning,
    GravityDirection,
    chain_from_urdf,
    compare_setting,
    estimate_up,
    express_up,
    fit_sweep,
    joint_acceleration,
    joint_sweep_from_chain,
    setting_from_up,
    up_from_setting,
)
from gravdir.controllers import BASE_FROM_ROOT, SETTINGS
from gravdir.synthetic import UR5E_LIKE_URDF, arm_from_urdf, controller_log, realistic_sensors

N_DRAWS = 720  # 2/sqrt(720) = 0.075: the 15% band on the mean of a chi-square_2 is 4.0 sigma
SEED = 20_260_412

TILT, AZIMUTH = math.radians(15.0), math.radians(40.0)
UP_ROOT = np.array(
    [math.sin(TILT) * math.cos(AZIMUTH), math.sin(TILT) * math.sin(AZIMUTH), math.cos(TILT)]
)
# base_link_from_base: the rotation by pi about z of the fixed joint base_link -> base.
RZ_PI = np.array(
    [[math.cos(math.pi), -math.sin(math.pi), 0.0], [math.sin(math.pi), math.cos(math.pi), 0.0],
     [0.0, 0.0, 1.0]]
)  # fmt: skip
UP_CONTROLLER = RZ_PI.T @ UP_ROOT  # the truth in the UR controller's base frame
G = 9.80665  # setting_from_up's default magnitude of the vector settings

# Each vector setting as a multiple of `up` (docs/controllers.md, from each vendor's document):
# UR set_gravity points away from the earth's centre, Franka's gravity_earth, Epson's
# F_GravityDirection and a plain gravity vector point along gravity.
VECTOR_SCALE = {
    "ur_set_gravity": G,
    "franka_gravity_earth": -G,
    "epson_gravity_direction": -1.0,
    "gravity_vector": -G,
}
# ABB Gravity Beta, (-sin b, 0, cos b): it expresses only an `up` in the base x-z plane. This
# up lies 9.58° off that plane, so setting_from_up warns by design and keeps the projection: the
# round trip to the estimate does not apply, and Beta is checked against the truth's Beta alone.
BETA = "abb_gravity_beta"

# Three sweeps of joint 2 (index 1), 90° apart round joint 1, over 103° at 0.4-0.6 rad/s.
CONFIGURATIONS = np.array([[j1, -1.5, 1.2, -1.0, 0.5, 0.0] for j1 in (0.0, np.pi / 2, np.pi)])
ARCS = [[-2.4, -0.6]] * 3
SPEEDS = [0.4, 0.5, 0.6]
# Both smooth profiles, alternating: s-curve (cruise, cosine ramps) and varying (no cruise,
# accelerating most of the time, as real logs are). Reversals peak at 3 rad/s².
PROFILES = ("s-curve", "varying")
DRIVE_GAIN = np.array([13.0, 13.0, 9.5, 4.5, 4.5, 4.5])  # N·m/A, synthetic

ARM = arm_from_urdf(UR5E_LIKE_URDF, tip_link="tool0", up=UP_ROOT)
PEAK = ARM.peak_gravity_torque()


@dataclass(frozen=True)
class Draw:
    estimate: GravityDirection  # in the UR controller's base frame
    residual_ratio: float  # largest residual RMS of the three fits over the sensor's noise


def one_draw(i: int) -> Draw:
    rng = np.random.default_rng([SEED, i])
    sensors = realistic_sensors(rng, PEAK)
    log = controller_log(
        ARM,
        [1, 1, 1],
        CONFIGURATIONS,
        ARCS,
        SPEEDS,
        sensors,
        rng,
        profile=PROFILES[i % 2],
        acceleration=3.0,
        time_jitter=2e-4,
        drive_gain=DRIVE_GAIN,
        rest_time=0.2,
    )
    chain = chain_from_urdf(UR5E_LIKE_URDF, tip_link="tool0")
    sweeps, ratios = [], []
    for k in range(3):
        rows = log.sweep_index == k
        time, q, velocity = log.time[rows], log.q[rows, 1], log.velocity[rows, 1]
        torque = log.current[rows, 1] * DRIVE_GAIN[1]
        fit = fit_sweep(
            q,
            velocity=velocity,
            torque=torque,
            acceleration=joint_acceleration(time, velocity=velocity),
            load_friction="abs",
            harmonics=[sensors[1].ripple_order],
        )
        ratios.append(fit.residual_rms / sensors[1].noise_std)
        sweeps.append(joint_sweep_from_chain(chain, log.q[rows][0], 1, fit))
    estimate = estimate_up(sweeps, up_hint=[0.0, 0.0, 1.0])
    return Draw(express_up(estimate, BASE_FROM_ROOT["ur"], frame="UR base"), max(ratios))


@pytest.fixture(scope="module")
def draws() -> list[Draw]:
    return [one_draw(i) for i in range(N_DRAWS)]


def tangent_error(u: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The tangent vector at unit `u` pointing to unit `w`, its length the angle between them."""
    cos, perp = float(u @ w), w - float(u @ w) * u
    return math.atan2(float(np.linalg.norm(np.cross(u, w))), cos) * perp / np.linalg.norm(perp)


def nse(estimate: GravityDirection, truth: np.ndarray) -> float:
    e = tangent_error(estimate.up, truth)
    return float(e @ estimate.up_information @ e)


def test_the_controller_frame_is_base_link_turned_by_pi_about_z() -> None:
    np.testing.assert_allclose(BASE_FROM_ROOT["ur"], RZ_PI.T, atol=1e-15)
    # The truth moves: x and y change sign, by 2 x 15° between the two frames.
    assert math.degrees(math.acos(UP_ROOT @ UP_CONTROLLER)) == pytest.approx(30.0)


@pytest.mark.slow
def test_up_error_in_the_controller_frame_is_as_large_as_reported(draws: list[Draw]) -> None:
    errors = np.array([nse(d.estimate, UP_CONTROLLER) for d in draws])
    # The reported information is honest: eᵀ I e is chi-square with 2 degrees of freedom.
    assert abs(errors.mean() - 2.0) < 0.15 * 2.0, errors.mean()
    # The fits reach the sensor noise: the inertia column takes the reversals.
    assert max(d.residual_ratio for d in draws) < 1.15
    # compare_setting computes the same statistic against a plain vector.
    for d in draws[:50]:
        check = compare_setting(d.estimate, UP_CONTROLLER)
        assert check.mahalanobis**2 == pytest.approx(nse(d.estimate, UP_CONTROLLER), rel=1e-9)
    # Forgetting the turn by pi between base_link and the controller's base is 30° off: every
    # estimate is thousands of its standard deviations from that wrong truth.
    assert min(nse(d.estimate, UP_ROOT) for d in draws) > 1e4


@pytest.mark.slow
@pytest.mark.parametrize("setting", sorted(VECTOR_SCALE))
def test_vector_settings_are_the_estimate_with_its_covariance(
    draws: list[Draw], setting: str
) -> None:
    scale = VECTOR_SCALE[setting]
    z, mahalanobis2 = [], []
    for d in draws:
        u, cov = d.estimate.up, d.estimate.up_cov
        out = setting_from_up(d.estimate, setting)
        np.testing.assert_allclose(out.values, scale * u, rtol=0, atol=1e-12 * abs(scale))
        # The setting's covariance is the propagated covariance of `up`: J = scale * E.
        np.testing.assert_allclose(out.values_cov, scale**2 * cov, rtol=1e-9, atol=1e-18)
        np.testing.assert_allclose(out.values_std, abs(scale) * np.sqrt(np.diag(cov)), rtol=1e-9)
        assert out.representation_error == 0.0
        # Setting -> up: the estimate's up to 1e-12, and its information with the covariance.
        back = up_from_setting(setting, out.values, values_cov=out.values_cov)
        assert np.max(np.abs(back.up - u)) <= 1e-12
        np.testing.assert_allclose(
            back.up_information, d.estimate.up_information, rtol=1e-9, atol=1e-9 * np.max(
                np.abs(d.estimate.up_information)
            )
        )  # fmt: skip
        # The setting of the true up, against the exported one and its uncertainty.
        true = setting_from_up(UP_CONTROLLER, setting).values
        np.testing.assert_allclose(true, scale * UP_CONTROLLER, atol=1e-12 * abs(scale))
        delta = out.values - true
        z.append(delta / out.values_std)
        mahalanobis2.append(float(delta @ np.linalg.pinv(out.values_cov, rcond=1e-12) @ delta))
    # Each value's normalised error has variance 1 (a mean of 720 chi-square_1: 1 ± 0.053;
    # 0.25 is 4.7 sigma) ...
    variance = np.mean(np.square(z), axis=0)
    assert np.all(np.abs(variance - 1.0) < 0.25), variance
    # ... and the rank-2 Mahalanobis distance of the setting is that of `up` (chord vs arc).
    assert abs(np.mean(mahalanobis2) - 2.0) < 0.3, np.mean(mahalanobis2)
    for d, m2 in zip(draws[:50], mahalanobis2[:50], strict=True):
        assert m2 == pytest.approx(nse(d.estimate, UP_CONTROLLER), rel=1e-4)


def test_every_setting_is_covered() -> None:
    # A new setting must be added here before this test passes.
    assert set(SETTINGS) == set(VECTOR_SCALE) | {BETA}


@pytest.mark.slow
def test_gravity_beta_warns_by_design_and_agrees_with_the_truth(draws: list[Draw]) -> None:
    # Beta = atan2(-u_x, u_z) of the projection on the base x-z plane (ABB: a positive rotation
    # about base y; docs/controllers.md). The truth lies 9.58° off the plane.
    beta_true = math.atan2(-UP_CONTROLLER[0], UP_CONTROLLER[2])
    off_plane = math.atan2(abs(UP_CONTROLLER[1]), math.hypot(UP_CONTROLLER[0], UP_CONTROLLER[2]))
    with pytest.warns(GravdirWarning, match="leaves it by 9.577 deg"):
        beta_of_truth = setting_from_up(UP_CONTROLLER, BETA).values[0]
    assert beta_of_truth == pytest.approx(beta_true, abs=1e-12)
    z, zpsi = [], []
    for d in draws:
        with pytest.warns(GravdirWarning, match="only the part of `up` in the base x-z plane"):
            out = setting_from_up(d.estimate, BETA)
        (beta,) = out.values
        z.append((beta - beta_true) / out.values_std[0])
        # Its representation error is the estimate's angle psi = asin|u_y| to the plane: the
        # truth's, within the standard deviation of psi, sqrt(var u_y) / cos(psi).
        u = d.estimate.up
        psi_std = math.sqrt(d.estimate.up_cov[1, 1]) / math.hypot(u[0], u[2])
        zpsi.append((out.representation_error - off_plane) / psi_std)
    # The mean of 720 chi-square_1 is 1 ± 0.053: 0.25 is 4.7 sigma.
    assert abs(np.mean(np.square(z)) - 1.0) < 0.25, np.mean(np.square(z))
    assert abs(np.mean(np.square(zpsi)) - 1.0) < 0.25, np.mean(np.square(zpsi))


@pytest.mark.slow
def test_compare_setting_flags_the_floor_default_and_passes_the_truth(draws: list[Draw]) -> None:
    # UR's installation issues set_gravity(0.0, 0.0, 9.82) for a floor mount.
    floor = up_from_setting("ur_set_gravity", [0.0, 0.0, 9.82])
    np.testing.assert_allclose(floor.up, [0.0, 0.0, 1.0], atol=1e-15)
    true_setting = up_from_setting("ur_set_gravity", 9.82 * UP_CONTROLLER)
    mahalanobis2 = []
    for d in draws:
        check = compare_setting(d.estimate, floor)
        # The floor default is the whole tilt away, hundreds of standard deviations.
        sigma = d.estimate.up_std_deg
        assert abs(check.angle_deg - 15.0) < 5 * sigma
        assert check.mahalanobis > 100.0
        assert check.p_value < 1e-100
        against_truth = compare_setting(d.estimate, true_setting)
        assert against_truth.dof == 2
        mahalanobis2.append(float(against_truth.mahalanobis) ** 2)
    assert abs(np.mean(mahalanobis2) - 2.0) < 0.15 * 2.0, np.mean(mahalanobis2)
