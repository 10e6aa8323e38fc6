"""Gear ripple in motion logs: the periodogram search of gravdir.motion._ripple and its use by
estimate_up_from_motion and the tracker."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import gravdir.motion
from gravdir.motion import estimate_up_from_motion
from gravdir.motion._fixed import affine_torque, fixed_model
from gravdir.motion._ripple import (
    detect_ripple,
    ripple_coefficients,
    ripple_rows,
    ripple_torque,
)


def _joint_angles(rng: np.random.Generator, n_samples: int) -> np.ndarray:
    """A joint swinging back and forth over about 1.6 rad (dwelling at its reversals)."""
    t = np.linspace(0.0, 20.0, n_samples)
    return -1.2 + 0.5 * np.sin(0.7 * t + rng.uniform(0, 6)) + 0.3 * np.sin(1.9 * t)


def test_two_planted_components_are_found_at_their_orders_and_nothing_else() -> None:
    rng = np.random.default_rng(3)
    q = _joint_angles(rng, 20_000)[:, None]
    planted = np.array([[0.0, 143.0, 0.3, -0.1], [0.0, 286.5, 0.05, 0.08]])
    noise = 0.2
    resid = ripple_torque(q, planted) + 0.7 + noise * rng.standard_normal(q.shape)
    used = np.ones_like(q, dtype=bool)
    found = detect_ripple(q, resid, used, 4)
    assert found.shape == (2, 4)
    found = found[np.argsort(found[:, 1])]
    # Order resolution: a fraction of one cycle over the 1.6 rad the joint covers.
    np.testing.assert_allclose(found[:, 1], planted[:, 1], atol=0.05)
    # At the joint's angles the fitted ripple is the planted one to within its noise share.
    x = q[:, :1]
    err = ripple_torque(x, found) - ripple_torque(x, planted)
    assert np.sqrt(np.mean(err**2)) < 0.02
    # The offset is not a ripple, and samples not used do not count.
    none = detect_ripple(q, resid, np.zeros_like(used), 4)
    assert none.shape == (0, 4)


@pytest.mark.slow
def test_white_residuals_rarely_give_a_component() -> None:
    """The threshold makes the false-alarm probability 1e-3 per joint: in 400 joints of white
    noise (angles spread as a swinging joint's), at most a few detections."""
    rng = np.random.default_rng(11)
    false = 0
    for _ in range(100):
        q = np.stack([_joint_angles(rng, 4000) for _ in range(4)], axis=1)
        resid = rng.standard_normal(q.shape)
        false += detect_ripple(q, resid, np.ones_like(q, dtype=bool), 2).shape[0]
    assert false <= 3


def test_search_is_scale_invariant_and_survives_huge_and_non_finite_residuals() -> None:
    rng = np.random.default_rng(5)
    q = np.stack([_joint_angles(rng, 6000) for _ in range(2)], axis=1)
    planted = np.array([[0.0, 120.0, 1.0, 0.0], [1.0, 200.0, 0.0, 1.0]])
    resid = ripple_torque(q, planted) + 0.5 * rng.standard_normal(q.shape)
    used = np.ones_like(q, dtype=bool)
    base = detect_ripple(q, resid, used, 2)
    big = detect_ripple(q, resid * 1e300, used, 2)
    np.testing.assert_allclose(big[:, :2], base[:, :2], rtol=1e-9)
    np.testing.assert_allclose(big[:, 2:] / 1e300, base[:, 2:], rtol=1e-6)
    resid[0, 1] = np.inf  # an overflowed joint is skipped, the other still searched
    partial = detect_ripple(q, resid, used, 2)
    np.testing.assert_array_equal(partial[:, 0], [0.0])


def test_rows_and_coefficients_are_inverse_and_match_the_sine_form() -> None:
    rng = np.random.default_rng(8)
    joints, orders = rng.integers(0, 3, 5), rng.uniform(50, 300, 5)
    coef = np.column_stack([joints, orders, rng.normal(size=(5, 2))])
    rows = ripple_rows(coef)
    np.testing.assert_allclose(ripple_coefficients(rows), coef, atol=1e-15)
    q = rng.uniform(-3, 3, (50, 3))
    want = np.zeros_like(q)
    for j, k, amplitude, phase in rows:
        want[:, int(j)] += amplitude * np.sin(k * q[:, int(j)] + phase)
    np.testing.assert_allclose(ripple_torque(q, coef), want, atol=1e-12)


def _planar_log(ripple: np.ndarray | None):
    from gravdir.dynamics import inverse_dynamics_regressor
    from gravdir.kinematics import chain_from_dh

    chain = chain_from_dh(
        [0.1, 0.05, 0.0], [0.0, 0.2, 0.1], [0.05, 0.4, 0.3], [np.pi / 2, 0.3, -np.pi / 2]
    )
    t = np.linspace(0.0, 20.0, 8001)[:, None]
    w = np.array([0.9, 1.3, 1.7])
    q, qd, qdd = np.sin(w * t), w * np.cos(w * t), -(w**2) * np.sin(w * t)
    pi = np.tile([2.0, 0.3, 0.1, 0.05, 0.2, 0.01, 0.25, 0.0, 0.02, 0.1], 3)
    up = np.array([np.sin(0.17), 0.0, np.cos(0.17)])
    tau = inverse_dynamics_regressor(chain, q, qd, qdd, up=up) @ pi
    if ripple is not None:
        tau = tau + ripple_torque(q, ripple)
    noise = 1e-3 * np.abs(tau).max(axis=0)
    tau = tau + noise * np.random.default_rng(2).standard_normal(tau.shape)
    return chain, t[:, 0], q, qd, qdd, tau, noise


def test_estimator_removes_a_ripple_and_reports_it_and_the_tracker_uses_it() -> None:
    planted = np.array([[1.0, 160.0, 0.02, 0.01]])
    chain, t, q, qd, qdd, tau, noise = _planar_log(planted)
    est = estimate_up_from_motion(
        chain, t, q=q, velocity=qd, torque=tau, acceleration=qdd, load_friction="none"
    )
    assert est.ripple.shape == (1, 4) and est.ripple[0, 0] == 1.0
    assert abs(est.ripple[0, 1] - 160.0) < 0.05
    np.testing.assert_allclose(est.ripple[0, 2], np.hypot(0.02, 0.01), rtol=0.05)
    off = estimate_up_from_motion(
        chain,
        t,
        q=q,
        velocity=qd,
        torque=tau,
        acceleration=qdd,
        load_friction="none",
        ripple_components=0,
    )
    assert off.ripple.shape == (0, 4)
    # Removed, the ripple no longer adds its mean square to joint 2's residual.
    np.testing.assert_allclose(est.residual_rms[1], noise[1], rtol=0.03)
    ripple_rms = np.hypot(0.02, 0.01) / np.sqrt(2)
    np.testing.assert_allclose(off.residual_rms[1], np.hypot(noise[1], ripple_rms), rtol=0.03)
    # predict_torque and the tracker's model carry the ripple the fit reports.
    with_ripple = est.predict_torque(q, velocity=qd, acceleration=qdd)
    plain = fixed_model(est)._replace(ripple=np.zeros((0, 4)))
    a_with, _ = affine_torque(fixed_model(est), q, qd, qdd, None)
    a_without, _ = affine_torque(plain, q, qd, qdd, None)
    expected = ripple_torque(q, ripple_coefficients(est.ripple))
    np.testing.assert_allclose(a_with - a_without, expected, atol=1e-12)
    rigid_only = with_ripple - expected
    assert np.sqrt(np.mean((tau - rigid_only)[:, 1] ** 2)) > np.sqrt(
        np.mean((tau - with_ripple)[:, 1] ** 2)
    )


@pytest.mark.parametrize("bad", [-1, 21, 1.5, True, "2"])
def test_ripple_components_is_checked(bad: object) -> None:
    chain, t, q, qd, qdd, tau, _ = _planar_log(None)
    with pytest.raises(ValueError, match="`ripple_components`"):
        estimate_up_from_motion(
            chain,
            t[:400],
            q=q[:400],
            velocity=qd[:400],
            torque=tau[:400],
            acceleration=qdd[:400],
            ripple_components=bad,
        )


def test_fixed_model_refuses_a_malformed_ripple() -> None:
    chain, t, q, qd, qdd, tau, _ = _planar_log(None)
    est = estimate_up_from_motion(
        chain, t, q=q, velocity=qd, torque=tau, acceleration=qdd, load_friction="none"
    )

    class Bad:
        def __init__(self, ripple: np.ndarray) -> None:
            for name in ("chain", "inertial_parameters", "gains", "joint_parameters"):
                setattr(self, name, getattr(est, name))
            self.noise_std, self.up, self.ripple = est.noise_std, est.up, ripple

    with pytest.raises(ValueError, match="`fit.ripple`"):
        fixed_model(Bad(np.array([[3.0, 100.0, 0.1, 0.0]])))  # joint 3 of a 3-joint chain
    with pytest.raises(ValueError, match="`fit.ripple`"):
        fixed_model(Bad(np.zeros((2, 3))))


def test_the_motion_sources_compile_without_warnings() -> None:
    """No invalid escape sequence (a ``\\h`` in a docstring warns at every fresh import)."""
    for path in sorted(Path(gravdir.motion.__file__).parent.glob("*.py")):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            compile(path.read_text(encoding="utf-8"), str(path), "exec")
