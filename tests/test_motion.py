"""gravdir.motion: `up` from logs of ordinary motion, against torques computed independently.

Every torque here comes from ``tests/_newton_euler.py`` (Jacobian sums and wrenches at the
centres of mass, no regressor); trajectories and sensor errors from
:mod:`gravdir.synthetic.motion`.
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any

import numpy as np
import pytest
from _newton_euler import random_bodies, random_chain, reference_torques, unit
from _spread import wishart_dof

from gravdir import chain_from_urdf, compare_setting
from gravdir._options import Friction
from gravdir._sphere import tangent_basis
from gravdir.dynamics import base_parameters, inertial_parameters, inverse_dynamics_regressor
from gravdir.errors import DegenerateGeometryError, GravdirWarning, InsufficientDataError
from gravdir.kinematics import SerialChain, chain_from_dh
from gravdir.motion import MotionFit, crlb_up_from_motion, estimate_up_from_motion
from gravdir.motion._design import (
    N_JOINT_COLUMNS,
    Layout,
    build_design,
    build_designs,
    drop_duplicate_armature,
    gain_basis,
    information,
    normal_equations,
)
from gravdir.motion._estimate import _fit, _refuse_collapsed_gains, _Search
from gravdir.motion._inputs import (
    DEFAULT_SPEED_TAPER,
    MAX_JOINTS,
    friction_mask,
    sample_weights,
)
from gravdir.synthetic import UR5E_LIKE_URDF, ModelError, up_from_base_tilt
from gravdir.synthetic.motion import FourierTrajectory, fourier_trajectory, motion_log
from gravdir.urdf import inertials_from_urdf

G = 9.80665


def _angle(a: np.ndarray, b: np.ndarray) -> float:
    """Angle between unit vectors, accurate near 0 (atan2 of the cross and dot products)."""
    return float(np.arctan2(np.linalg.norm(np.cross(a, b)), a @ b))


class _Arm:
    """A chain with explicit link inertias and the reference torques of a trajectory."""

    def __init__(self, chain: SerialChain, mass: Any, com: Any, inertia: Any) -> None:
        self.chain, self.mass, self.com, self.inertia = chain, mass, com, inertia
        self.pi = inertial_parameters(mass, com, inertia)

    def torque(self, traj: FourierTrajectory, a0: np.ndarray) -> np.ndarray:
        return reference_torques(
            self.chain,
            traj.q,
            traj.velocity,
            traj.acceleration,
            self.mass,
            self.com,
            self.inertia,
            a0,
        )


def _random_arm(rng: np.random.Generator, n: int, kind: str = "poe") -> _Arm:
    chain = random_chain(rng, n, kind)
    return _Arm(chain, *random_bodies(rng, n))


def _ur5e() -> _Arm:
    chain = chain_from_urdf(UR5E_LIKE_URDF, tip_link="tool0")
    body = inertials_from_urdf(UR5E_LIKE_URDF, tip_link="tool0")
    return _Arm(chain, body.mass, body.com_in_link, body.inertia_in_link)


def _errors(rng: np.random.Generator, peak: np.ndarray) -> dict[str, np.ndarray]:
    """Sensor errors of the acceptance: gain ±15%, offsets, Coulomb and viscous friction."""
    n = peak.shape[0]
    return {
        "gains": rng.uniform(0.85, 1.15, n),
        "offsets": rng.uniform(-0.03, 0.03, n) * peak,
        "coulomb": rng.uniform(0.02, 0.10, n) * peak,
        "viscous": rng.uniform(0.0, 0.05, n) * peak,
    }


# --------------------------------------------------------------------------------------------
# Acceptance 2: noise-free logs give `up` exactly


NOISE_FREE = [  # (joints, tilt in degrees, kind)
    (3, 0.0, "poe"),
    (3, 180.0, "dh"),
    (4, 37.0, "dh"),
    (5, 90.0, "poe"),
    (6, 123.0, "dh"),
    (7, 5.0, "poe"),
    (7, 179.0, "dh"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("n", "tilt_deg", "kind"), NOISE_FREE)
def test_noise_free_logs_give_up_exactly(n: int, tilt_deg: float, kind: str) -> None:
    rng = np.random.default_rng([n, int(tilt_deg)])
    arm = _random_arm(rng, n, kind)
    up = up_from_base_tilt(np.radians(tilt_deg), rng.uniform(-np.pi, np.pi))
    traj = fourier_trajectory(n, 10.0, 100.0, rng=rng)
    tau = arm.torque(traj, G * up)
    peak = np.abs(tau).max(axis=0)
    err = _errors(rng, peak)
    err["gains"] = rng.uniform(0.8, 1.2, n)
    log = motion_log(traj, tau, rng=rng, **err)
    est = estimate_up_from_motion(
        arm.chain,
        log.time,
        q=log.q,
        velocity=log.velocity,
        torque=log.torque,
        acceleration=traj.acceleration,
    )
    assert _angle(est.up, up) <= 1e-8
    np.testing.assert_allclose(est.gains, err["gains"] / err["gains"].mean(), atol=1e-7)
    assert est.converged
    assert est.sign_determined
    # The fitted model reproduces the log: identified friction, offsets and parameters.
    pred = est.predict_torque(traj.q, velocity=traj.velocity, acceleration=traj.acceleration)
    moving = np.abs(traj.velocity) >= 0.02
    assert np.max(np.abs(pred - log.torque)[moving]) <= 1e-6 * np.max(peak)
    np.testing.assert_allclose(est.joint_parameters[:, 1], err["coulomb"], atol=1e-6 * np.max(peak))


@pytest.mark.parametrize(("n", "kind", "seed"), [(3, "poe", 0), (4, "dh", 1)])
def test_quadratic_friction_is_identified_where_asked(n: int, kind: str, seed: int) -> None:
    # Friction with a term in v|v| (as the real logs show): with the quadratic option the model
    # holds it and `up` comes out exactly; without, the term is model error that moves `up`.
    rng = np.random.default_rng(seed)
    arm = _random_arm(rng, n, kind)
    up = up_from_base_tilt(np.radians(20.0), rng.uniform(-np.pi, np.pi))
    traj = fourier_trajectory(n, 10.0, 100.0, rng=rng)
    tau = arm.torque(traj, G * up)
    peak = np.abs(tau).max(axis=0)
    err = _errors(rng, peak)
    quadratic = -rng.uniform(0.02, 0.05, n) * peak / np.max(traj.velocity**2, axis=0)
    model_error = ModelError(quadratic, np.zeros((n, 1)), np.zeros((n, 1)))
    log = motion_log(traj, tau, rng=rng, model_error=model_error, **err)
    kw = {"velocity": log.velocity, "torque": log.torque, "acceleration": traj.acceleration}
    est = estimate_up_from_motion(
        arm.chain, log.time, q=log.q, friction="coulomb-viscous-quadratic", **kw
    )
    assert _angle(est.up, up) <= 1e-8
    np.testing.assert_allclose(est.joint_parameters[:, 4], quadratic, rtol=1e-6)
    np.testing.assert_allclose(est.joint_parameters[:, 1], err["coulomb"], rtol=1e-6)
    pred = est.predict_torque(traj.q, velocity=traj.velocity, acceleration=traj.acceleration)
    moving = np.abs(traj.velocity) >= 0.02
    assert np.max(np.abs(pred - log.torque)[moving]) <= 1e-6 * np.max(peak)
    plain = estimate_up_from_motion(arm.chain, log.time, q=log.q, **kw)
    assert np.all(plain.joint_parameters[:, 4] == 0.0)
    assert _angle(plain.up, up) >= 2e-4  # 0.03-0.7° on these two arms, against 1e-8 with it


@pytest.mark.slow
def test_noise_free_ur5e_like_arm_from_derived_acceleration() -> None:
    # The realistic 6-joint arm, accelerations differentiated from the logged velocities.
    rng = np.random.default_rng(60)
    arm = _ur5e()
    up = up_from_base_tilt(np.radians(20.0), 0.7)
    traj = fourier_trajectory(6, 10.0, 500.0, rng=rng)
    tau = arm.torque(traj, G * up)
    log = motion_log(traj, tau, rng=rng, **_errors(rng, np.abs(tau).max(axis=0) + 1.0))
    est = estimate_up_from_motion(
        arm.chain, log.time, q=log.q, velocity=log.velocity, torque=log.torque
    )
    # The derivative's own error (below 1e-4 rad/s² here) is the only error left.
    assert _angle(est.up, up) <= np.radians(1e-3)
    assert est.n_used.min() > 4000


# --------------------------------------------------------------------------------------------
# Acceptance 3: Monte Carlo against the Cramér-Rao bound


@pytest.mark.slow
@pytest.mark.parametrize("friction", ["coulomb-viscous", "coulomb-viscous-quadratic"])
def test_monte_carlo_torque_noise_meets_the_cramer_rao_bound(friction: Friction) -> None:
    """400 logs of one 20 s, 1 kHz trajectory: exact q, q', q''; gain ±15%, offsets,
    Coulomb and viscous friction (and quadratic friction for the option that fits it), noise
    0.5% of each joint's peak. The regressors are formed once for all 400 torque logs (the
    estimator's own Gram blocks), then each log is fitted by the estimator's search."""
    rng = np.random.default_rng(61)
    n, draws = 3, 400
    arm = _random_arm(rng, n)
    up = unit(rng)
    traj = fourier_trajectory(n, 20.0, 1000.0, rng=rng)
    tau = arm.torque(traj, G * up)
    peak = np.abs(tau).max(axis=0)
    err = _errors(rng, peak)
    sigma = 0.005 * peak
    quadratic = np.zeros(n)
    if friction == "coulomb-viscous-quadratic":  # its own stream: the other draws stay the same
        top = np.max(traj.velocity**2, axis=0)
        quadratic = -np.random.default_rng(161).uniform(0.02, 0.05, n) * peak / top
    extra = ModelError(quadratic, np.zeros((n, 1)), np.zeros((n, 1)))
    logs = np.array(
        [
            motion_log(traj, tau, rng=rng, noise_std=sigma, model_error=extra, **err).torque
            for _ in range(draws)
        ]
    )
    joint = np.stack([0 * sigma, err["coulomb"], err["viscous"], err["offsets"], quadratic], 1)
    bound = crlb_up_from_motion(
        arm.chain, traj.q, velocity=traj.velocity, acceleration=traj.acceleration,
        inertial_parameters=arm.pi, joint_parameters=joint, gains=err["gains"], noise_std=sigma,
        up_hint=up, friction=friction,
    )  # fmt: skip
    weights = sample_weights(traj.velocity, None, 0.02, None, None, DEFAULT_SPEED_TAPER)
    designs = build_designs(
        arm.chain, base_parameters(arm.chain), traj.q, traj.velocity, traj.acceleration,
        weights, logs, None, G, friction_mask(friction),
    )  # fmt: skip
    n_used = np.count_nonzero(weights > 0, axis=0)
    search = _Search(n_grid=100, n_starts=1, max_iter=200, xtol=1e-10)
    fits = [_fit(d, arm.chain, None, None, search, n_used, 0, frozenset()).fit for d in designs]
    # The fast path is the public one: the first log through estimate_up_from_motion.
    public = estimate_up_from_motion(
        arm.chain, traj.time, q=traj.q, velocity=traj.velocity, torque=logs[0],
        acceleration=traj.acceleration, n_grid=100, n_starts=1, friction=friction,
    )  # fmt: skip
    assert _angle(public.up, fits[0].up) <= 1e-9
    errors = np.array([f.up - up for f in fits])
    empirical = errors.T @ errors / draws
    rms = np.sqrt(np.trace(empirical))
    assert rms <= 1.3 * np.radians(bound.up_std_deg)
    assert rms >= 0.7 * np.radians(bound.up_std_deg)  # the bound is a bound, not a guess
    reported = np.mean([f.up_cov for f in fits], axis=0)
    assert abs(np.trace(reported) / np.trace(empirical) - 1.0) <= 0.15
    # Direction by direction too: the empirical covariance in the reported one's metric.
    basis = np.linalg.svd(reported)[0][:, :2]
    ratio = np.linalg.eigvalsh(
        np.linalg.solve(basis.T @ reported @ basis, basis.T @ empirical @ basis)
    )
    assert ratio.min() >= 0.75 and ratio.max() <= 1.25
    # The gains come back within their reported uncertainty.
    gain_err = np.array([f.gains for f in fits]) - err["gains"] / err["gains"].mean()
    np.testing.assert_allclose(
        gain_err.std(axis=0), np.mean([f.gains_std for f in fits], axis=0), rtol=0.2
    )


def correlated_motion_estimates(
    noise_correlation_time: float, draws: int
) -> tuple[dict[str, list[MotionFit]], np.ndarray]:
    """The white and HAC estimates of `draws` logs of one 20 s, 200 Hz trajectory of a 3-joint
    arm, and the true `up`: gains, offsets and friction, torque noise 1% of each joint's peak,
    AR(1) with the given correlation time (0: white). The ripple search and the load term are
    off: their own selection from the noise is not what these figures measure. Seeded by the
    correlation time; ``benchmarks/reference_distributions.py`` draws the same logs."""
    rng = np.random.default_rng([63, int(1000 * noise_correlation_time)])
    arm = _random_arm(rng, 3)
    up = up_from_base_tilt(0.4, 0.7)
    traj = fourier_trajectory(3, 20.0, 200.0, rng=rng)
    tau = arm.torque(traj, G * up)
    peak = np.abs(tau).max(axis=0)
    err = _errors(rng, peak)
    out: dict[str, list[MotionFit]] = {"white": [], "hac": []}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GravdirWarning)  # the white form's correlation warning
        for _ in range(draws):
            log = motion_log(
                traj, tau, rng=rng, noise_std=0.01 * peak,
                noise_correlation_time=noise_correlation_time, **err,
            )  # fmt: skip
            for covariance, fits in out.items():
                fits.append(estimate_up_from_motion(
                    arm.chain, log.time, q=log.q, velocity=log.velocity, torque=log.torque,
                    acceleration=traj.acceleration, covariance=covariance,
                    ripple_components=0, load_friction="none", n_grid=100, n_starts=1,
                ))  # fmt: skip
    return out, up


def _normalised_errors(
    noise_correlation_time: float, draws: int
) -> dict[str, tuple[float, np.ndarray, float]]:
    """Of :func:`correlated_motion_estimates`, per covariance: the mean squared error of `up`
    per degree of freedom in the metric of the reported covariance, the fractions of the
    logs in which ``compare_setting`` against the true `up` rejects it at 1 % and 5 %, and the
    median reported `covariance_dof` over the degrees of freedom of the covariances' spread
    in the plane normal to the true `up` (``_spread.wishart_dof``)."""
    estimates, up = correlated_motion_estimates(noise_correlation_time, draws)
    out = {}
    for covariance, fits in estimates.items():
        nse = [float((f.up - up) @ np.linalg.pinv(f.up_cov, hermitian=True) @ (f.up - up)) / 2
               for f in fits]  # fmt: skip
        p_values = np.array([compare_setting(f, up).p_value for f in fits])
        basis = np.linalg.svd(up[None, :])[2][1:]  # two unit vectors normal to `up`
        spread = wishart_dof(np.array([basis @ f.up_cov @ basis.T for f in fits]))
        dof = float(np.median([f.covariance_dof for f in fits])) / spread
        rejected = np.mean(p_values[:, None] < [0.01, 0.05], axis=0)
        out[covariance] = (float(np.mean(nse)), rejected, dof)
    return out


@pytest.mark.slow
def test_the_hac_covariance_holds_under_white_and_correlated_noise() -> None:
    """With white noise both covariances are honest (the HAC one rescaled so that the residuals'
    loss to the fitted columns does not bias it); 100 logs, a mean known to about 0.15. With
    noise correlated over 0.05 s (10 samples) the white form understates the error variance
    about twentyfold; the HAC one, rescaled for first-order autoregressive noise with each
    joint's lag-1 correlation, gives a mean within [0.7, 1.5] over 200 logs (here 1.24; the
    white-noise rescaling gave 1.33). There ``compare_setting`` against the true `up`, on the F
    reference of the sandwich's degrees of freedom, rejects it at 1 % in at most 2 % of the logs
    and at 5 % in at most 10 % (here 0 % and 7.5 %); on the white form's chi-square, in most
    of them (here 81 % at 1 %). The reported degrees of freedom describe the spread of the
    covariances (their median over what the spread measures: here 0.90)."""
    white = _normalised_errors(0.0, 100)
    assert 0.75 <= white["white"][0] <= 1.3
    assert 0.75 <= white["hac"][0] <= 1.4
    correlated = _normalised_errors(0.05, 200)
    assert correlated["white"][0] >= 15.0
    assert 0.7 <= correlated["hac"][0] <= 1.5
    assert np.all(correlated["hac"][1] <= [0.02, 0.10]), correlated["hac"][1]
    # The equivalent degrees of freedom of a constant influence and white noise gave 2.1.
    assert 0.75 <= correlated["hac"][2] <= 1.3, correlated["hac"][2]
    assert correlated["white"][1][0] >= 0.5, correlated["white"][1]


@pytest.mark.slow
def test_encoder_noise_and_derived_acceleration_on_the_ur5e_like_arm() -> None:
    """Positions with 1e-5 rad encoder noise, velocities differenced from them, accelerations
    differentiated by the estimator; gain ±15%, offsets, friction, 0.5% torque noise, 20 s at
    1 kHz, tilts up to 30°. The benchmark runs 200 such logs for the 95th percentile."""
    rng = np.random.default_rng(62)
    arm = _ur5e()
    errors = []
    for _ in range(5):
        up = up_from_base_tilt(rng.uniform(0.0, np.radians(30.0)), rng.uniform(-np.pi, np.pi))
        traj = fourier_trajectory(6, 20.0, 1000.0, rng=rng)
        tau = arm.torque(traj, G * up)
        peak = np.abs(tau).max(axis=0) + 0.5  # the wrist joint carries almost no gravity
        log = motion_log(
            traj, tau, rng=rng, noise_std=0.005 * peak, encoder_noise_std=1e-5,
            **_errors(rng, peak),
        )  # fmt: skip
        est = estimate_up_from_motion(
            arm.chain, log.time, q=log.q, velocity=log.velocity, torque=log.torque
        )
        errors.append(np.degrees(_angle(est.up, up)))
        assert est.up_std_deg < 0.07  # the speed taper costs about a fifth of the information
    assert max(errors) <= 0.1
    # The 95th percentile of an isotropic angular error is 1.73 times its RMS (Rayleigh).
    assert 1.73 * np.sqrt(np.mean(np.square(errors))) <= 0.1 / 1.5


# --------------------------------------------------------------------------------------------
# The model's other parts


@pytest.mark.slow
def test_known_base_acceleration_and_apparent_gravity() -> None:
    rng = np.random.default_rng(63)
    arm = _random_arm(rng, 4)
    up = up_from_base_tilt(np.radians(10.0), 0.3)
    push = np.array([0.1, 0.0, 0.0])  # a platform accelerating at 0.1 m/s² along base x
    traj = fourier_trajectory(4, 10.0, 100.0, rng=rng)
    tau = arm.torque(traj, G * up + push)
    est = estimate_up_from_motion(
        arm.chain, traj.time, q=traj.q, velocity=traj.velocity, torque=tau,
        acceleration=traj.acceleration, base_acceleration=push,
    )  # fmt: skip
    assert _angle(est.up, up) <= 1e-8
    blind = estimate_up_from_motion(
        arm.chain,
        traj.time,
        q=traj.q,
        velocity=traj.velocity,
        torque=tau,
        acceleration=traj.acceleration,
    )
    apparent = (G * up + push) / np.linalg.norm(G * up + push)
    assert _angle(blind.up, apparent) <= np.radians(0.01)
    assert 0.5 <= np.degrees(_angle(blind.up, up)) <= 0.65  # about 0.6° per 0.1 m/s²


def test_fixed_gains_and_no_friction() -> None:
    rng = np.random.default_rng(64)
    arm = _random_arm(rng, 4, "dh")
    up = up_from_base_tilt(np.radians(70.0), -2.0)
    traj = fourier_trajectory(4, 10.0, 100.0, rng=rng)
    tau = arm.torque(traj, G * up)
    gains = np.array([1.1, 0.9, 1.05, 0.95])
    log = motion_log(traj, tau, rng=rng, gains=gains, offsets=[0.1, -0.2, 0.3, 0.0])
    est = estimate_up_from_motion(
        arm.chain, log.time, q=log.q, velocity=log.velocity, torque=log.torque,
        acceleration=traj.acceleration, gains=gains, friction="none",
    )  # fmt: skip
    assert _angle(est.up, up) <= 1e-8
    np.testing.assert_array_equal(est.gains, gains)
    assert np.all(est.gains_std == 0.0)
    assert np.all(est.joint_parameters[:, 1:3] == 0.0)
    np.testing.assert_allclose(est.joint_parameters[:, 3], [0.1, -0.2, 0.3, 0.0], atol=1e-7)
    # With the true gains the identified parameters reproduce the true torques.
    y_pred = est.predict_torque(traj.q, velocity=traj.velocity, acceleration=traj.acceleration)
    np.testing.assert_allclose(y_pred, log.torque, atol=1e-7 * np.abs(tau).max())


def test_coulomb_friction_without_the_viscous_term() -> None:
    """`friction="coulomb"` fits the Coulomb column and not the viscous one: a log with Coulomb
    friction only gives `up` exactly, its Coulomb levels and a viscous column of zeros. Each
    friction term fitted is one more nuisance parameter per joint, so the bound can only grow
    from "none" to "coulomb" to "coulomb-viscous"."""
    rng = np.random.default_rng(76)
    arm = _random_arm(rng, 3, "dh")
    up = up_from_base_tilt(np.radians(35.0), 0.8)
    traj = fourier_trajectory(3, 10.0, 100.0, rng=rng)
    tau = arm.torque(traj, G * up)
    coulomb = np.array([0.4, 0.3, 0.1])
    log = motion_log(traj, tau, rng=rng, offsets=[0.1, -0.2, 0.05], coulomb=coulomb)
    est = estimate_up_from_motion(
        arm.chain, log.time, q=log.q, velocity=log.velocity, acceleration=traj.acceleration,
        torque=log.torque, friction="coulomb", load_friction="none",
    )  # fmt: skip
    assert _angle(est.up, up) <= 1e-8
    assert np.all(est.joint_parameters[:, 2] == 0.0)
    np.testing.assert_allclose(est.joint_parameters[:, 1], coulomb, atol=1e-7 * np.abs(tau).max())
    sigma = 0.005 * np.abs(tau).max(axis=0)
    std = [
        crlb_up_from_motion(
            arm.chain, traj.q, velocity=traj.velocity, acceleration=traj.acceleration,
            inertial_parameters=arm.pi, joint_parameters=np.zeros((3, 4)), gains=np.ones(3),
            noise_std=sigma, up_hint=up, friction=friction,
        ).up_std_deg
        for friction in ("none", "coulomb", "coulomb-viscous")
    ]  # fmt: skip
    assert std[0] <= std[1] * (1 + 1e-9) and std[1] <= std[2] * (1 + 1e-9)


def test_series_after_time_are_keyword_only() -> None:
    """A call in the old positional order fails with a TypeError instead of swapping arrays
    (without `q=`, it names the missing `q`); joint angles where `time` now stands beside
    `q=` fail with a ValueError that says `q` is keyword-only."""
    chain, t, q, qd, tau = _small()
    with pytest.raises(TypeError):
        estimate_up_from_motion(chain, t, q, qd, torque=tau)  # type: ignore[misc]
    with pytest.raises(TypeError, match="'q'"):
        estimate_up_from_motion(chain, q, velocity=qd, torque=tau)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match=r"`time` of shape \(301,\).*\(301, 3\).*`q` is keyword"):
        estimate_up_from_motion(chain, q, q=q, velocity=qd, torque=tau)
    with pytest.raises(ValueError, match=r"`time` of shape \(301,\).*`q` is keyword"):
        estimate_up_from_motion(chain, q, q=q, velocity=qd, acceleration=0 * q, torque=tau)
    bound = {
        "inertial_parameters": np.ones(30), "joint_parameters": np.zeros((3, 4)),
        "gains": np.ones(3), "noise_std": 1.0,
    }  # fmt: skip
    with pytest.raises(TypeError):
        crlb_up_from_motion(chain, q, qd, np.zeros_like(q), **bound)  # type: ignore[misc]
    with pytest.raises(TypeError):
        MotionFit.predict_torque(None, q, qd, np.zeros_like(q))  # type: ignore[arg-type, misc]


def test_data_selection_weights_limits_and_nan() -> None:
    rng = np.random.default_rng(65)
    arm = _random_arm(rng, 3)
    up = up_from_base_tilt(np.radians(40.0), 1.0)
    traj = fourier_trajectory(3, 10.0, 100.0, rng=rng)
    tau = arm.torque(traj, G * up)
    bad = tau.copy()
    bad[300:400] += 50.0  # a contact phase
    limit = np.quantile(np.abs(tau), 0.9, axis=0)
    clipped = np.clip(tau, -limit, limit)  # saturated drives
    weights = np.ones(tau.shape[0])
    weights[300:400] = 0.0
    args = (arm.chain, traj.time)
    kw = {"q": traj.q, "velocity": traj.velocity, "acceleration": traj.acceleration}
    est = estimate_up_from_motion(*args, torque=bad, weights=weights, **kw)
    assert _angle(est.up, up) <= 1e-8
    est = estimate_up_from_motion(*args, torque=clipped, torque_limits=limit * (1 - 1e-9), **kw)
    assert _angle(est.up, up) <= 1e-8
    assert np.all(est.n_used < tau.shape[0] * 0.95)
    with_nan = tau.copy()
    with_nan[[5, 50, 500], [0, 1, 2]] = np.nan
    est = estimate_up_from_motion(*args, torque=with_nan, nan_policy="omit", **kw)
    assert est.n_omitted == 3
    assert _angle(est.up, up) <= 1e-8
    with pytest.raises(ValueError, match="`torque`"):
        estimate_up_from_motion(*args, torque=with_nan, **kw)


def test_a_log_that_does_not_determine_the_direction_is_refused() -> None:
    rng = np.random.default_rng(66)
    arm = _random_arm(rng, 3)
    traj = fourier_trajectory(3, 10.0, 100.0, rng=rng)
    # Joints 1 and 2 never move: their samples are all below `min_speed`, nothing identifies
    # their friction and gains.
    moving = np.array([False, False, True])
    still = FourierTrajectory(
        traj.time,
        np.where(moving, traj.q, traj.q[0]),
        np.where(moving, traj.velocity, 0.0),
        np.where(moving, traj.acceleration, 0.0),
        traj.q0, traj.sine, traj.cosine, traj.base_frequency,
    )  # fmt: skip
    tau = arm.torque(still, G * up_from_base_tilt(0.5, 0.5))
    with pytest.raises(InsufficientDataError, match="never move"):
        estimate_up_from_motion(
            arm.chain,
            still.time,
            q=still.q,
            velocity=still.velocity,
            torque=tau,
            acceleration=still.acceleration,
        )
    # A single joint about base z: its gravity torque is a sinusoid whose amplitude mixes
    # the tilt with the link's moment, so a tangent direction of `up` carries no information.
    from gravdir.kinematics import chain_from_poe

    one = _Arm(
        chain_from_poe([[0, 0, 1, 0, 0, 0]], np.eye(4)),
        [2.0], [[0.3, 0.1, 0.2]], [np.diag([0.02, 0.03, 0.04])],
    )  # fmt: skip
    traj1 = fourier_trajectory(1, 10.0, 100.0, rng=rng)
    tau1 = one.torque(traj1, G * up_from_base_tilt(0.5, 0.5))
    log = motion_log(traj1, tau1, rng=rng, noise_std=0.01)
    with pytest.raises(DegenerateGeometryError, match="direction"):
        estimate_up_from_motion(
            one.chain, log.time, q=log.q, velocity=log.velocity, torque=log.torque,
            acceleration=traj1.acceleration,
        )  # fmt: skip


def test_a_slow_log_warns_that_the_sign_is_weak() -> None:
    # Motion so slow that inertial torques barely rise above the noise: gravity torques alone
    # are odd in (up, parameters), so the dynamics hardly tell `up` from `-up`.
    rng = np.random.default_rng(67)
    arm = _random_arm(rng, 3)
    up = up_from_base_tilt(0.4, 0.2)
    traj = fourier_trajectory(3, 10.0, 100.0, rng=rng, max_velocity=0.2, base_frequency=0.05)
    tau = arm.torque(traj, G * up)
    log = motion_log(traj, tau, rng=rng, noise_std=0.01 * np.abs(tau).max(axis=0))
    with pytest.warns(GravdirWarning, match="sign"):
        est = estimate_up_from_motion(
            arm.chain, log.time, q=log.q, velocity=log.velocity, acceleration=traj.acceleration,
            torque=log.torque, min_speed=0.0,
        )  # fmt: skip
    assert not est.sign_determined and est.sign_margin < 5.0
    assert est.up_std_deg > 0.5  # the direction itself is poorly determined, and it says so
    assert np.degrees(_angle(est.up, up)) <= 5 * est.up_std_deg


def test_result_contract_and_bound_agree_with_the_estimate() -> None:
    rng = np.random.default_rng(68)
    arm = _random_arm(rng, 3)
    up = up_from_base_tilt(0.6, -1.0)
    traj = fourier_trajectory(3, 10.0, 200.0, rng=rng)
    tau = arm.torque(traj, G * up)
    sigma = 0.005 * np.abs(tau).max(axis=0)
    log = motion_log(traj, tau, rng=rng, noise_std=sigma)
    # Every sample above `min_speed` at full weight, as the bound assumes.
    est = estimate_up_from_motion(
        arm.chain, log.time, q=log.q, velocity=log.velocity, torque=log.torque,
        acceleration=traj.acceleration, noise_std=sigma, speed_taper=0.0,
    )  # fmt: skip
    assert isinstance(est, MotionFit)
    np.testing.assert_allclose(est.noise_std, sigma)
    bound = crlb_up_from_motion(
        arm.chain, traj.q, velocity=traj.velocity, acceleration=traj.acceleration,
        inertial_parameters=arm.pi, joint_parameters=np.zeros((3, 4)), gains=np.ones(3),
        noise_std=sigma, up_hint=up,
    )  # fmt: skip
    assert est.up_std_deg == pytest.approx(bound.up_std_deg, rel=0.05)
    # The default speed taper down-weights slow samples (against gear ripple): the reported
    # standard deviation (a sandwich) grows, and never below the bound.
    tapered = estimate_up_from_motion(
        arm.chain, log.time, q=log.q, velocity=log.velocity, torque=log.torque,
        acceleration=traj.acceleration, noise_std=sigma,
    )  # fmt: skip
    assert bound.up_std_deg <= tapered.up_std_deg <= 1.4 * bound.up_std_deg
    assert abs(est.up @ est.up_information @ est.up) <= 1e-6 * np.abs(est.up_information).max()
    assert "MotionFit(" in repr(est) and "°" in repr(est)
    assert "MotionBound(" in repr(bound)
    d = est.to_dict()
    assert set(d) >= {"up", "gains", "joint_parameters", "residual_rms", "n_used"}
    # The bound scales with the noise: half the noise, half the standard deviation.
    half = crlb_up_from_motion(
        arm.chain, traj.q, velocity=traj.velocity, acceleration=traj.acceleration,
        inertial_parameters=arm.pi, joint_parameters=np.zeros((3, 4)), gains=np.ones(3),
        noise_std=sigma / 2, up_hint=up,
    )  # fmt: skip
    assert half.up_std_deg == pytest.approx(bound.up_std_deg / 2, rel=1e-9)


@pytest.mark.slow
def test_estimate_is_invariant_to_a_common_gain_and_a_torque_unit() -> None:
    rng = np.random.default_rng(69)
    arm = _random_arm(rng, 3)
    up = up_from_base_tilt(1.0, 2.0)
    traj = fourier_trajectory(3, 10.0, 100.0, rng=rng)
    tau = arm.torque(traj, G * up)
    log = motion_log(traj, tau, rng=rng, noise_std=0.005 * np.abs(tau).max(axis=0))
    kw = {"acceleration": traj.acceleration}
    a = estimate_up_from_motion(
        arm.chain, log.time, q=log.q, velocity=log.velocity, torque=log.torque, **kw
    )
    b = estimate_up_from_motion(
        arm.chain, log.time, q=log.q, velocity=log.velocity, torque=1000.0 * log.torque, **kw
    )
    assert _angle(a.up, b.up) <= 1e-9
    np.testing.assert_allclose(b.gains, a.gains, atol=1e-9)
    np.testing.assert_allclose(b.noise_std, 1000.0 * a.noise_std, rtol=1e-6)
    assert b.up_std_deg == pytest.approx(a.up_std_deg, rel=1e-6)


# --------------------------------------------------------------------------------------------
# Input checks


def test_collapsed_gains_are_reported_undetermined() -> None:
    """A fit whose estimated gains collapse (one below a tenth of their mean: the torque scale
    traded against `up`, as on short real logs) is returned undetermined, its information
    zeroed, with a warning naming the joint; gains spread by a real calibration's tens of per
    cent are left alone, and a held gain (std 0) is never judged."""
    chain, t, q, qd, tau = _small()
    fit = estimate_up_from_motion(chain, t, q=q, velocity=qd, torque=tau, load_friction="none")
    assert fit.up_determined and np.any(fit.up_information)
    spread = dataclasses.replace(fit, gains=np.array([0.6, 1.0, 1.4]))
    assert _refuse_collapsed_gains(spread) == (spread, False)
    collapsed = dataclasses.replace(
        fit, gains=np.array([0.05, 1.0, 1.95]), gains_std=np.array([0.01, 0.02, 0.02])
    )
    with pytest.warns(GravdirWarning, match=r"gains collapse: joints \[1\]"):
        out, flagged = _refuse_collapsed_gains(collapsed)
    assert flagged and not out.up_determined and not out.sign_determined
    assert not np.any(out.up_information) and out.up_std_deg == np.inf
    held = dataclasses.replace(collapsed, gains_std=np.array([0.0, 0.02, 0.02]))
    assert _refuse_collapsed_gains(held)[1] is False


def _small() -> tuple[SerialChain, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(70)
    arm = _random_arm(rng, 3)
    traj = fourier_trajectory(3, 6.0, 50.0, rng=rng)
    return (
        arm.chain,
        traj.time,
        traj.q,
        traj.velocity,
        arm.torque(traj, G * up_from_base_tilt(0.3, 0.3)),
    )


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"chain": "ur5"}, "chain"),
        ({"q": np.zeros((301, 4))}, "q"),
        ({"q": np.full((301, 3), 90.0)}, "degrees"),
        ({"velocity": np.zeros((100, 3))}, "velocity"),
        ({"torque": "1.0"}, "torque"),
        ({"time": np.arange(300.0)}, "time"),
        ({"time": np.zeros(301)}, "time"),
        ({"q": None}, "q"),
        ({"noise_std": [1.0, 0.0, 1.0]}, "noise_std"),
        ({"gains": "guess"}, "gains"),
        ({"gains": [1.0, -1.0, 1.0]}, "gains"),
        ({"friction": "yes"}, "friction"),
        ({"friction": True}, "friction"),
        ({"friction": "auto"}, "friction"),
        ({"base_acceleration": np.zeros((3, 2))}, "base_acceleration"),
        ({"gravity": 0.0}, "gravity"),
        ({"min_speed": -1.0}, "min_speed"),
        ({"torque_limits": [1.0, 1.0]}, "torque_limits"),
        ({"weights": np.full(301, 2.0)}, "weights"),
        ({"weights": np.ones(7)}, "weights"),
        ({"nan_policy": "ignore"}, "nan_policy"),
        ({"n_grid": 0}, "n_grid"),
        ({"n_starts": 1.5}, "n_starts"),
        ({"max_iter": True}, "max_iter"),
        ({"xtol": float("nan")}, "xtol"),
        ({"derivative_window": 0.0}, "derivative_window"),
        ({"speed_taper": -0.1}, "speed_taper"),
        ({"load_friction": "yes"}, "load_friction"),
        ({"load_friction": False}, "load_friction"),
        ({"load_friction": "signed"}, "load_friction"),
        ({"load_friction": "abs", "gains": [1.0, 1.0, 1.0]}, "load_friction"),
        ({"covariance": "sandwich"}, "covariance"),
        ({"covariance": "hac", "bandwidth": -1.0}, "bandwidth"),
    ],
)
def test_estimator_input_checks(kwargs: dict[str, Any], name: str) -> None:
    chain, t, q, qd, tau = _small()
    args: dict[str, Any] = {
        "chain": chain, "time": t, "q": q, "velocity": qd, "torque": tau,
        "acceleration": np.zeros_like(q),
    }  # fmt: skip
    args.update(kwargs)
    pos = [args.pop(k) for k in ("chain", "time")]
    with pytest.raises(ValueError, match=f"`{name}`" if name != "degrees" else name):
        estimate_up_from_motion(*pos, **args)


def test_too_few_samples_are_refused() -> None:
    chain, t, q, qd, tau = _small()
    with pytest.raises(InsufficientDataError):
        estimate_up_from_motion(
            chain, t[:8], q=q[:8], velocity=qd[:8], torque=tau[:8], acceleration=0 * q[:8]
        )


def test_a_corrupted_row_of_a_log_is_named() -> None:
    """A log whose rows hold garbage (253 rad, 1e305, an infinity) is refused with an error that
    names the array and its first bad row; a value no angle in degrees either is not called
    degrees."""
    chain, t, q, qd, tau = _small()
    bad_q = q.copy()
    bad_q[[7, 9], 1] = [253.0, -1.6e305]
    with pytest.raises(ValueError, match=r"`q`.*got 253 at row 7, the first of 2 rows.*degrees\?"):
        estimate_up_from_motion(chain, t, q=bad_q, velocity=qd, torque=tau)
    bad_q[7, 1] = q[7, 1]
    with pytest.raises(ValueError, match=r"row 9, the only one: beyond 720.*corrupted"):
        estimate_up_from_motion(chain, t, q=bad_q, velocity=qd, torque=tau)
    bad_v = qd.copy()
    bad_v[[4, 11], 2] = np.inf
    with pytest.raises(ValueError, match=r"`velocity` to be finite, got an infinity at row 4"):
        estimate_up_from_motion(chain, t, q=q, velocity=bad_v, torque=tau)


def test_bound_input_checks() -> None:
    chain, _, q, qd, _ = _small()
    good: dict[str, Any] = {
        "inertial_parameters": np.ones(30), "joint_parameters": np.zeros((3, 4)),
        "gains": np.ones(3), "noise_std": 1.0, "up_hint": [0, 0, 1],
    }  # fmt: skip
    for key, value in [
        ("inertial_parameters", np.ones(20)),
        ("joint_parameters", np.zeros((3, 3))),
        ("gains", [1.0, 0.0, 1.0]),
        ("noise_std", -1.0),
        ("up_hint", [0, 0, 0]),
        ("up_hint", [0, 1]),
        ("gravity", -1.0),
        ("friction", 1),
        ("friction", True),
        ("friction", "auto"),
        ("base_parameters", "none"),
    ]:
        kw = {**good, key: value}
        with pytest.raises(ValueError, match=f"`{key}`"):
            crlb_up_from_motion(chain, q, velocity=qd, acceleration=np.zeros_like(q), **kw)
    # A direction of any length is that direction, as for every other `up_hint`.
    unit, long = (
        crlb_up_from_motion(
            chain, q, velocity=qd, acceleration=np.zeros_like(q), **{**good, "up_hint": hint}
        )
        for hint in ([0, 0, 1], [0, 0, 2])
    )
    np.testing.assert_array_equal(unit.up_cov, long.up_cov)


def test_synthetic_motion_is_exact_and_checked() -> None:
    rng = np.random.default_rng(71)
    traj = fourier_trajectory(2, 10.0, 1000.0, rng=rng, n_harmonics=3, base_frequency=0.2)
    # The derivatives are those of the series: compare with finite differences.
    dt = 1e-3
    np.testing.assert_allclose(
        np.gradient(traj.q, dt, axis=0)[1:-1], traj.velocity[1:-1], atol=1e-4
    )
    np.testing.assert_allclose(
        np.gradient(traj.velocity, dt, axis=0)[1:-1], traj.acceleration[1:-1], atol=1e-4
    )
    # Periodic with the base period.
    np.testing.assert_allclose(traj.q[0], traj.q[5000], atol=1e-12)
    log = motion_log(traj, np.zeros_like(traj.q), rng=rng, coulomb=[1.0, 2.0], viscous=0.5)
    want = np.array([1.0, 2.0]) * np.sign(traj.velocity) + 0.5 * traj.velocity
    np.testing.assert_allclose(log.torque, want, atol=1e-15)
    noisy = motion_log(traj, np.zeros_like(traj.q), rng=rng, encoder_noise_std=1e-5)
    assert 0.5e-5 < np.std(noisy.q - traj.q) < 2e-5
    assert np.std(noisy.velocity - traj.velocity) > 1e-3  # differenced counts are noisy
    with pytest.raises(ValueError, match="`n_joints`"):
        fourier_trajectory(0, 1.0, 10.0, rng=rng)
    with pytest.raises(ValueError, match="`rng`"):
        fourier_trajectory(2, 1.0, 10.0, rng=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`torque`"):
        motion_log(traj, np.zeros((3, 2)), rng=rng)
    with pytest.raises(ValueError, match="`gains`"):
        motion_log(traj, np.zeros_like(traj.q), rng=rng, gains=0.0)
    with pytest.raises(ValueError, match="`coulomb`"):
        motion_log(traj, np.zeros_like(traj.q), rng=rng, coulomb=-1.0)
    assert "FourierTrajectory(" in repr(traj) and "MotionLog(" in repr(log)


@pytest.mark.parametrize("correlation_time", [0.0, 0.1])
def test_the_residual_diagnostic_tells_correlated_noise_from_white(correlation_time: float) -> None:
    """White torque noise: lag-1 autocorrelation near 0, every sample worth one. Noise
    correlated over 0.1 s (20 samples at 200 Hz): the residuals say so, and under the
    white-noise covariance a warning names the correlation; under the HAC one it does not."""
    rng = np.random.default_rng([64, int(10 * correlation_time)])
    arm = _random_arm(rng, 3)
    traj = fourier_trajectory(3, 20.0, 200.0, rng=rng)
    tau = arm.torque(traj, G * up_from_base_tilt(0.2, 0.5))
    peak = np.abs(tau).max(axis=0)
    log = motion_log(
        traj, tau, rng=rng, noise_std=0.01 * peak, noise_correlation_time=correlation_time,
        **_errors(rng, peak),
    )  # fmt: skip
    kw = {"velocity": log.velocity, "torque": log.torque, "acceleration": traj.acceleration}
    kw |= {"ripple_components": 0, "load_friction": "none"}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = estimate_up_from_motion(arm.chain, log.time, q=log.q, **kw)
    correlated = [w for w in caught if "correlated in time" in str(w.message)]
    if correlation_time == 0:
        assert np.all(np.abs(est.residual_lag1) < 0.1)
        assert np.all(est.effective_samples >= 0.6 * est.n_used)
        assert not correlated
        return
    assert np.all(est.residual_lag1 > 0.8)
    assert np.all(est.effective_samples < 0.1 * est.n_used)
    assert len(correlated) == 1 and "covariance='hac'" in str(correlated[0].message)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        hac = estimate_up_from_motion(arm.chain, log.time, q=log.q, covariance="hac", **kw)
    assert not [w for w in caught if "correlated in time" in str(w.message)]
    np.testing.assert_array_equal(hac.effective_samples, est.effective_samples)
    # The sign margin of the white-noise likelihood shrinks by the ratio of the spreads.
    ratio = hac.up_std_deg / est.up_std_deg
    assert ratio > 2.0
    assert hac.sign_margin == pytest.approx(est.sign_margin / ratio, rel=1e-12)


def test_the_hac_covariance_with_fixed_gains_and_its_bandwidth_check() -> None:
    """With the gains given there are no gain rows in the sandwich: the fit reports no gain
    spread and a spread of `up` like the white form's under white noise (within the Monte Carlo
    tolerance of one log: a factor 1.5). A bandwidth longer than the log (time in other units
    than seconds) is refused naming `bandwidth`."""
    rng = np.random.default_rng(64)
    arm = _random_arm(rng, 4, "dh")
    traj = fourier_trajectory(4, 10.0, 100.0, rng=rng)
    tau = arm.torque(traj, G * up_from_base_tilt(np.radians(70.0), -2.0))
    gains = np.array([1.1, 0.9, 1.05, 0.95])
    log = motion_log(traj, tau, rng=rng, gains=gains, noise_std=0.01 * np.abs(tau).max(0))
    kw = {
        "q": log.q, "velocity": log.velocity, "torque": log.torque,
        "acceleration": traj.acceleration, "gains": gains, "friction": "none",
    }  # fmt: skip
    white = estimate_up_from_motion(arm.chain, log.time, **kw)
    hac = estimate_up_from_motion(arm.chain, log.time, covariance="hac", **kw)
    np.testing.assert_array_equal(hac.gains_std, 0.0)
    assert 1 / 1.5 <= hac.up_std_deg / white.up_std_deg <= 1.5
    with pytest.raises(ValueError, match="`bandwidth` shorter than the log"):
        estimate_up_from_motion(arm.chain, log.time * 1e-3, covariance="hac", **kw)


def test_no_warnings_on_a_well_posed_log() -> None:
    chain, t, q, qd, tau = _small()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        estimate_up_from_motion(chain, t, q=q, velocity=qd, torque=tau, derivative_window=0.1)


@pytest.mark.slow
def test_realistic_sensor_errors_with_load_friction_and_gear_ripple() -> None:
    """The realistic sensor errors of the design notes (gravdir.synthetic.realistic_sensors):
    besides gain, offset, Coulomb and viscous friction and noise, a friction that grows with the
    transmitted torque (load coefficient up to 5%) and gear ripple (0.5% of the peak at order
    100-320 of the joint angle). Torques from the tests' own Newton-Euler, 20 s at 1 kHz, the
    estimator's defaults. The load friction is found by the likelihood-ratio test and fitted,
    each sensor's ripple is found at its order and removed, and nothing else is. Errors of the
    three logs: 0.06°, 0.01° and 0.04°, reported standard deviations about 0.04°."""
    from gravdir.synthetic import realistic_sensors

    rng = np.random.default_rng(71)
    arm = _ur5e()
    for _ in range(3):
        up = up_from_base_tilt(rng.uniform(0.0, np.radians(30.0)), rng.uniform(-np.pi, np.pi))
        traj = fourier_trajectory(6, 20.0, 1000.0, rng=rng)
        tau = arm.torque(traj, G * up)
        sensors = realistic_sensors(rng, np.abs(tau).max(axis=0))
        logged = np.stack(
            [s.measure(traj.q[:, j], traj.velocity[:, j], tau[:, j], rng) for j, s in
             enumerate(sensors)], axis=-1,
        )  # fmt: skip
        est = estimate_up_from_motion(
            arm.chain,
            traj.time,
            q=traj.q,
            velocity=traj.velocity,
            torque=logged,
            acceleration=traj.acceleration,
        )
        error = np.degrees(_angle(est.up, up))
        assert error <= 0.1
        assert error <= 3.0 * est.up_std_deg
        # The load coefficients of the joints that carry the arm come back.
        mu = np.array([s.load_coefficient for s in sensors])
        np.testing.assert_allclose(est.load_coefficient[1:3], mu[1:3], atol=0.01)
        # One ripple component per joint, at the sensor's order, with its amplitude and (at the
        # joint's angles) its phase.
        joints = est.ripple[:, 0].astype(int)
        np.testing.assert_array_equal(np.sort(joints), np.arange(6))
        for j, order, amplitude, phase in est.ripple:
            sensor = sensors[int(j)]
            assert abs(order - sensor.ripple_order) < 0.2
            np.testing.assert_allclose(amplitude, sensor.ripple_amplitude, rtol=0.1)
            x = traj.q[:, int(j)]
            want = sensor.ripple(x)
            got = amplitude * np.sin(order * x + phase)
            assert np.sqrt(np.mean((got - want) ** 2)) < 0.2 * sensor.ripple_amplitude
        # The fitted model, ripple included, predicts the logged torques to their noise.
        resid = logged - est.predict_torque(
            traj.q, velocity=traj.velocity, acceleration=traj.acceleration
        )
        noise = np.array([s.noise_std for s in sensors])
        rms = np.sqrt(np.mean(resid**2, axis=0))
        assert np.all(rms < 1.3 * noise)


# --------------------------------------------------------------------------------------------
# Cost in the joints, logs and bounds that do not determine what they report


def _dense_normal_equations(*point: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``sum_j D_j^T G_j D_j / s_j^2``, the gradient and the RSS with the derivative ``D_j`` of
    ``m_j = (k_j s(u) ⊗ beta, theta_j)`` formed column by column, at the point of
    :func:`normal_equations` followed by the Gram blocks of the information."""
    design, layout, up, basis, gains, dirs, beta, theta, inv_var, gram = point
    n, p, g = design.n, design.p, design.gravity
    s = np.concatenate([[1.0], g * up])
    d = np.zeros((n, 4 * p + N_JOINT_COLUMNS, layout.size))
    for i in range(2):
        d[:, : 4 * p, i] = gains[:, None] * np.kron(np.concatenate([[0.0], g * basis[i]]), beta)
    if layout.n_gain:
        d[:, : 4 * p, layout.gain] = np.kron(s, beta)[None, :, None] * dirs[:, None, :]
    d[:, : 4 * p, layout.beta] = gains[:, None, None] * np.kron(s[:, None], np.eye(p))[None]
    for j in range(n):
        d[j, 4 * p :, layout.theta(int(design.theta_groups[j]))] = np.diag(design.joint_mask * 1.0)
    m = np.concatenate([gains[:, None] * np.kron(s, beta)[None, :], theta], axis=1)
    info = np.einsum("jma,jmk,jkb,j->ab", d, gram, d, inv_var)
    gm = np.einsum("jmk,jk->jm", design.gram, m)
    grad = np.einsum("jma,jm,j->a", d, design.cross - gm, inv_var)
    rss = design.tt - 2.0 * np.sum(m * design.cross, axis=1) + np.sum(m * gm, axis=1)
    return info, grad, rss


@pytest.mark.slow
@pytest.mark.parametrize(("n", "split", "held", "friction"), [
    (3, False, False, True), (4, True, False, True), (4, True, True, False), (5, False, True, True),
])  # fmt: skip
def test_structured_normal_equations_equal_the_dense_product(
    n: int, split: bool, held: bool, friction: bool
) -> None:
    """The search forms its information from the Kronecker structure of the model's derivative
    in O(n p^2) per evaluation (the dense product costs O(n p^3)); it equals the dense
    ``sum_j D_j^T G_j D_j`` with load-friction pseudo-joints, a held gain, no friction columns
    and fractional weights (the sandwich's squared-weight blocks too)."""
    rng = np.random.default_rng([72, n])
    arm = _random_arm(rng, n, "dh")
    traj = fourier_trajectory(n, 2.0, 100.0, rng=rng)
    base = base_parameters(arm.chain)
    mask = np.array([True, friction, friction, True, friction])
    weights = rng.uniform(0.2, 1.0, traj.q.shape)
    driving = rng.uniform(size=traj.q.shape) > 0.5 if split else None
    design = build_design(
        arm.chain, base, traj.q, traj.velocity, traj.acceleration, weights,
        rng.normal(size=traj.q.shape), None, G, mask, driving,
    )  # fmt: skip
    m = design.n
    free = np.r_[False, np.ones(m - 1, bool)] if held else None
    layout = Layout(m, base.rank, m - 2 if held else m - 1, design.n_theta)
    dirs = gain_basis(m, free)
    up = unit(rng)
    basis = tangent_basis(up)
    gains = rng.uniform(0.5, 1.5, m)
    beta = rng.normal(size=base.rank)
    theta = rng.normal(size=(m, 5)) * mask
    inv_var = rng.uniform(1.0, 3.0, m)
    point = (design, layout, up, basis, gains, dirs, beta, theta, inv_var)
    got = normal_equations(*point)
    want = _dense_normal_equations(*point, design.gram)
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12 * np.abs(b).max())
    assert design.gram_sq is not None
    sandwich = information(design, design.gram_sq, layout, up, basis, gains, dirs, beta, inv_var)
    want_sq = _dense_normal_equations(*point, design.gram_sq)[0]
    np.testing.assert_allclose(sandwich, want_sq, rtol=1e-12, atol=1e-12 * np.abs(want_sq).max())


def test_chains_beyond_the_joint_cap_are_refused() -> None:
    """The parameters solved out grow by about 7 per joint and the search's work with their
    cube: chains of more than MAX_JOINTS joints are refused up front, naming `chain`; a chain at
    the cap is accepted."""
    assert MAX_JOINTS == 12
    for n, ok in ((MAX_JOINTS + 1, False), (MAX_JOINTS, True)):
        alpha = np.tile([np.pi / 2, -np.pi / 2], n)[:n]
        chain = chain_from_dh(np.full(n, 0.05), np.zeros(n), np.full(n, 0.1), alpha)
        traj = fourier_trajectory(n, 2.0, 50.0, rng=np.random.default_rng(73))
        log = (chain, traj.q)
        series = {"velocity": traj.velocity, "acceleration": traj.acceleration}
        bound = {
            "inertial_parameters": np.tile([1.0, 0.05, 0.0, 0.0, 0.01, 0, 0, 0.01, 0, 0.01], n),
            "joint_parameters": np.zeros((n, 4)), "gains": np.ones(n), "noise_std": 0.01,
            "up_hint": [0.0, 0.0, 1.0],
        }  # fmt: skip
        if ok:
            assert np.isfinite(crlb_up_from_motion(*log, **series, **bound).up_std_deg)
            continue
        with pytest.raises(ValueError, match=rf"`chain` to have at most {MAX_JOINTS} joints"):
            estimate_up_from_motion(chain, traj.time, q=traj.q, **series, torque=traj.q)
        with pytest.raises(ValueError, match="`chain`"):
            crlb_up_from_motion(*log, **series, **bound)


def _straight_line_log(seed: int) -> tuple[_Arm, np.ndarray, tuple[np.ndarray, ...]]:
    """3 s at 100 Hz of every joint at a constant speed: no reversal, no acceleration."""
    rng = np.random.default_rng(seed)
    arm = _random_arm(rng, 3)
    up = up_from_base_tilt(0.3, 0.9)
    t = np.arange(301) / 100.0
    speed = np.array([0.5, 0.3, 0.4])
    q = t[:, None] * speed - 0.5
    qd = np.broadcast_to(speed, q.shape).copy()
    qdd = np.zeros_like(q)
    tau = reference_torques(arm.chain, q, qd, qdd, arm.mass, arm.com, arm.inertia, G * up)
    peak = np.abs(tau).max(axis=0)
    tau = tau + 0.03 * peak + 0.005 * peak * rng.normal(size=tau.shape)
    return arm, up, (q, qd, tau, qdd)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [80, 81, 82])
def test_a_log_whose_velocities_never_reverse_is_not_taken_for_a_determined_one(
    seed: int,
) -> None:
    """Constant joint speeds and no acceleration: sign(q') is the offset's column, q' and q''
    add nothing, and the rigid-body torques along one straight line in joint space trade the
    inertial parameters and gains against `up`. The profiled likelihood is flat over tens of
    degrees while its curvature at the best fit claims a few: the estimator says so (a warning,
    `up_determined=False`, infinite standard deviations) or refuses the log; it never returns
    a finite uncertainty that the truth lies far outside."""
    arm, up, (q, qd, tau, qdd) = _straight_line_log(seed)
    for options in ({"load_friction": "none", "ripple_components": 0}, {}):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                est = estimate_up_from_motion(
                    arm.chain, np.arange(q.shape[0]) / 100.0, q=q, velocity=qd, torque=tau,
                    acceleration=qdd, **options,
                )  # fmt: skip
            except DegenerateGeometryError as exc:
                assert "`q`" in str(exc)
                continue
        assert not est.up_determined and est.far_fit_deg > 30.0
        assert any(
            issubclass(w.category, GravdirWarning) and "does not determine `up`" in str(w.message)
            for w in caught
        )
        assert np.isinf(est.up_std_deg) and np.all(est.up_information == 0.0)
        assert np.all(np.isinf(est.gains_std))
        assert np.degrees(_angle(est.up, up)) <= 3.0 * est.up_std_deg


def test_a_well_determined_log_is_determined() -> None:
    """The likelihood check does not fire on ordinary motion: the flag is set, nothing is far."""
    chain, t, q, qd, tau = _small()
    est = estimate_up_from_motion(chain, t, q=q, velocity=qd, torque=tau, derivative_window=0.1)
    assert est.up_determined and est.far_fit_deg == 0.0 and np.isfinite(est.up_std_deg)


def test_bound_is_infinite_where_the_trajectory_does_not_determine() -> None:
    """One sample gives three equations for more than twenty unknowns: neither `up` nor the
    gains are determined, and their bounds are infinite (never a small finite number from the
    pseudo-inverse); a rich trajectory gives finite bounds."""
    chain = chain_from_dh(
        [0.1, 0.0, 0.0], [0.0, 0.2, 0.0], [0.0, 0.5, 0.4], [np.pi / 2, 0.0, np.pi / 2]
    )
    kw: dict[str, Any] = {
        "inertial_parameters": np.tile([2.0, 0.1, 0.02, 0.05, 0.1, 0, 0.1, 0, 0, 0.1], 3),
        "joint_parameters": np.zeros((3, 4)), "gains": np.ones(3),
        "noise_std": np.full(3, 0.01), "up_hint": [0.0, 0.0, 1.0],
    }  # fmt: skip
    one = crlb_up_from_motion(
        chain,
        [[0.1, 0.5, -0.3]],
        velocity=[[0.5, -0.2, 0.3]],
        acceleration=[[0.1, 0.2, -0.1]],
        **kw,
    )
    assert np.isinf(one.up_std_deg) and np.all(one.up_information == 0.0)
    assert np.all(np.isinf(one.gains_std))
    traj = fourier_trajectory(3, 10.0, 100.0, rng=np.random.default_rng(74))
    rich = crlb_up_from_motion(
        chain, traj.q, velocity=traj.velocity, acceleration=traj.acceleration, **kw
    )
    assert 0.0 < rich.up_std_deg < 0.1
    assert np.all(np.isfinite(rich.gains_std)) and np.all(rich.gains_std > 0)
    # Held gains have no uncertainty at all, determined or not.
    held = crlb_up_from_motion(
        chain, [[0.1, 0.5, -0.3]], velocity=[[0.5, -0.2, 0.3]],
        acceleration=[[0.1, 0.2, -0.1]], estimate_gains=False, **kw,
    )  # fmt: skip
    assert np.all(held.gains_std == 0.0) and np.isinf(held.up_std_deg)


@pytest.mark.parametrize("kind", ["dh", "poe"])
def test_joint_1_armature_is_a_base_column_and_the_fits_carry_no_other(kind: str) -> None:
    # The column of joint 1's armature (q̈_1 on joint 1, zero on the others) lies in the span of
    # the base regressor at every state (link 1's inertia about joint 1's axis), so the fits
    # drop it; joint 2's armature column does not (the check can tell the two apart). Built
    # from the general regressor over random states of random chains, not from the design.
    rng = np.random.default_rng(11 if kind == "dh" else 12)
    for n in (2, 4, 6):
        chain = random_chain(rng, n, kind)
        base = base_parameters(chain)
        q, qd, qdd = (rng.uniform(-2.0, 2.0, (40, n)) for _ in range(3))
        acc = rng.normal(size=(40, 3))
        y = inverse_dynamics_regressor(chain, q, qd, qdd, base_acceleration=acc)
        ybase = y[..., base.independent].reshape(-1, base.rank)  # (40 n, p): sample, joint rows
        for joint, in_span in ((0, True), (1, False)):
            column = np.zeros((40, n))
            column[:, joint] = qdd[:, joint]
            coef = np.linalg.lstsq(ybase, column.ravel(), rcond=None)[0]
            residual = np.linalg.norm(ybase @ coef - column.ravel()) / np.linalg.norm(column)
            assert bool(residual < 1e-9) == in_span, (n, joint, residual)
        columns = np.ones((3, n, N_JOINT_COLUMNS))
        drop_duplicate_armature(columns)
        assert np.all(columns[:, 0, 0] == 0.0) and np.count_nonzero(columns == 0.0) == 3
