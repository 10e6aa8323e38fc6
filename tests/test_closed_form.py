"""Tests of the closed-form solvers on sweeps of the canonical arm (explicit cross products)."""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from gravdir import testing
from gravdir._sphere import tangent_basis
from gravdir.closed_form import (
    ClosedFormEstimate,
    solve_l2_offset,
    solve_l3_offset,
    solve_point_mass,
    solve_two_branch,
)
from gravdir.errors import DegenerateGeometryError, GravdirWarning
from gravdir.frames import up_from_canonical
from gravdir.sweep import SweepFit, fit_sweep, wrap_angle
from gravdir.synthetic import SyntheticArm, TorqueSensor, canonical_arm

EXACT = 1e-9

angle = st.floats(-np.pi, np.pi)
tilt = testing.tilts(1e-3, np.pi - 1e-3)
gammas = st.floats(0.05, np.pi - 0.05)


def _fit(
    arm: SyntheticArm,
    joint: int,
    conf: Sequence[float],
    sensor: Sequence[TorqueSensor] | None = None,
    rng: np.random.Generator | None = None,
) -> SweepFit:
    start, stop = (-2.5, 2.5) if joint == 0 else (conf[1] - 1.5, conf[1] + 1.5)
    rec = arm.sweep(joint, list(conf), start, stop, 1.0, 40.0, sensor=sensor, rng=rng)
    return fit_sweep(rec.q, velocity=rec.velocity, torque=rec.torque)


def _sweeps(
    arm: SyntheticArm,
    gamma: float,
    gamma0: float,
    sensor: Sequence[TorqueSensor] | None = None,
) -> tuple[SweepFit, float, SweepFit, float, SweepFit]:
    """J1 fit, unstable zero and the J2 fit there, stable zero and the J2 fit there."""
    f1 = _fit(arm, 0, [0.0, gamma - gamma0], sensor)
    zu, zs = float(f1.zeros().unstable), float(f1.zeros().stable)
    return f1, zu, _fit(arm, 1, [zu, 0.0], sensor), zs, _fit(arm, 1, [zs, 0.0], sensor)


def _root_error(res: ClosedFormEstimate, theta1: float, theta2: float) -> float:
    return min(
        max(abs(float(wrap_angle(r.theta1 - theta1))), abs(r.theta2 - theta2)) for r in res.roots
    )


def _error(res: ClosedFormEstimate, theta1: float, theta2: float) -> float:
    return max(abs(float(wrap_angle(res.theta1 - theta1))), abs(res.theta2 - theta2))


# ---------------------------------------------------------------------------------------------
# Point mass


@given(
    L1=st.floats(0.1, 2.0),
    theta1=angle,
    theta2=tilt,
    gamma=gammas,
    gamma0=angle,
    stable=st.booleans(),
)
def test_point_mass_exact(
    L1: float, theta1: float, theta2: float, gamma: float, gamma0: float, stable: bool
) -> None:
    assume(abs(theta2 - np.pi / 2) > 1e-3)
    arm = canonical_arm(L1=L1, gamma0=gamma0, mass=3.0, up=up_from_canonical(theta1, theta2))
    f1, zu, fu, zs, fs = _sweeps(arm, gamma, gamma0)
    res = solve_point_mass(f1, fs if stable else fu, zs if stable else zu, gamma, gamma0)
    assert _root_error(res, theta1, theta2) < EXACT
    assert _error(res, theta1, theta2) < EXACT
    assert res.zero == ("stable" if stable else "unstable")
    assert np.allclose(res.up, arm.up, atol=1e-9)
    assert not (res.clipped or res.near_singular or res.gravity_parallel_to_j1)
    assert np.all(np.isfinite(res.theta_cov))
    _check_up_information(res)


def test_point_mass_two_roots_and_repr() -> None:
    arm = canonical_arm(L1=0.8, gamma0=0.4, up=up_from_canonical(0.3, 2.0))
    f1, zu, fu, _, _ = _sweeps(arm, 1.2, 0.4)
    res = solve_point_mass(f1, fu, zu, 1.2, 0.4)
    assert len(res.roots) == 2
    assert abs(res.roots[0].theta2 + res.roots[1].theta2 - np.pi) < 1e-12
    assert abs(res.theta2 - 2.0) < EXACT
    text = repr(res)
    assert "theta2=114.5916°" in text and "point_mass" in text


def test_point_mass_near_90_deg_is_flagged_and_clipped_without_nan() -> None:
    # theta2 = 90 deg, gamma = 90 deg: A1 = A2; a 1% larger J1 gain pushes the arcsin argument
    # past 1.
    arm = canonical_arm(L1=0.8, up=up_from_canonical(0.7, np.pi / 2))
    sensors = (TorqueSensor(gain=1.01), TorqueSensor())
    f1, zu, fu, _, _ = _sweeps(arm, np.pi / 2, 0.0, sensors)
    with pytest.warns(GravdirWarning, match=r"= 1\.01 lies 0\.01 beyond .* standard deviations"):
        res = solve_point_mass(f1, fu, zu, np.pi / 2, 0.0)
    assert res.clipped and res.near_singular
    assert res.theta2 == pytest.approx(np.pi / 2, abs=1e-12)
    assert len(res.roots) == 1
    assert np.all(np.isfinite(res.up)) and not np.any(np.isnan(res.theta_cov))
    _check_up_information(res)
    # Just off 90 deg on noise-free data: flagged but still exact.
    arm = canonical_arm(L1=0.8, up=up_from_canonical(0.7, np.pi / 2 + 5e-4))
    f1, zu, fu, _, _ = _sweeps(arm, 1.0, 0.0)
    res = solve_point_mass(f1, fu, zu, 1.0, 0.0)
    assert res.near_singular and not res.clipped
    assert _error(res, 0.7, np.pi / 2 + 5e-4) < 1e-8


@pytest.mark.parametrize("theta2", [0.0, np.pi])
def test_point_mass_gravity_parallel_to_j1(theta2: float) -> None:
    arm = canonical_arm(L1=0.8, gamma0=0.3, up=up_from_canonical(0.0, theta2))
    f1 = _fit(arm, 0, [0.0, 1.0])
    f2 = _fit(arm, 1, [1.234, 0.0])
    res = solve_point_mass(f1, f2, 1.234, 1.3, 0.3)  # any J1 position is accepted
    assert res.gravity_parallel_to_j1 and res.zero == "none"
    assert abs(res.theta2 - theta2) < EXACT
    assert np.isinf(res.theta_cov[0, 0]) and np.isfinite(res.theta_cov[1, 1])
    # Just above the threshold the normal path runs.
    arm = canonical_arm(L1=0.8, gamma0=0.3, up=up_from_canonical(0.5, 1e-6))
    f1, zu, fu, _, _ = _sweeps(arm, 1.0, 0.3)
    res = solve_point_mass(f1, fu, zu, 1.0, 0.3)
    assert not res.gravity_parallel_to_j1
    assert _error(res, 0.5, 1e-6) < 1e-8


def test_point_mass_invariant_to_offset_friction_and_common_gain() -> None:
    up = up_from_canonical(-1.1, 0.6)
    arm = canonical_arm(L1=0.7, gamma0=-0.5, up=up)
    ideal = solve_point_mass(*_first_three(_sweeps(arm, 1.3, -0.5)), 1.3, -0.5)
    sensors = (
        TorqueSensor(gain=1.1, offset=0.4, coulomb=0.3, viscous=0.2),
        TorqueSensor(gain=1.1, offset=-0.7, coulomb=0.5, viscous=0.1),
    )
    res = solve_point_mass(*_first_three(_sweeps(arm, 1.3, -0.5, sensors)), 1.3, -0.5)
    assert _error(res, ideal.theta1, ideal.theta2) < EXACT
    assert _error(res, -1.1, 0.6) < EXACT
    # Unequal gains scale sin(theta2): the amplitude-ratio solver is not gain invariant.
    sensors = (TorqueSensor(gain=1.1), TorqueSensor(gain=0.9))
    res = solve_point_mass(*_first_three(_sweeps(arm, 1.3, -0.5, sensors)), 1.3, -0.5)
    assert abs(np.sin(res.theta2) - 1.1 / 0.9 * np.sin(0.6)) < 1e-9


def _first_three(
    s: tuple[SweepFit, float, SweepFit, float, SweepFit],
) -> tuple[SweepFit, SweepFit, float]:
    return s[0], s[2], s[1]


# ---------------------------------------------------------------------------------------------
# L2 offset


@given(
    L1=st.floats(0.1, 1.0),
    L2=st.floats(-0.6, 0.6),
    theta1=angle,
    theta2=tilt,
    gamma=gammas,
    gamma0=angle,
    stable=st.booleans(),
)
def test_l2_exact(
    L1: float,
    L2: float,
    theta1: float,
    theta2: float,
    gamma: float,
    gamma0: float,
    stable: bool,
) -> None:
    beta = np.arctan2(L2, L1)
    assume(np.sin(gamma + beta) > 0.05)
    # Singular set: the two roots merge where gamma + beta + sigma * theta2 is a multiple of pi
    # (sigma = +1 at the unstable zero, -1 at the stable one).
    sigma = -1 if stable else 1
    assume(abs(float(wrap_angle(2 * (gamma + beta + sigma * theta2)))) / 2 > 2e-3)
    arm = canonical_arm(L1=L1, L2=L2, gamma0=gamma0, up=up_from_canonical(theta1, theta2))
    f1, zu, fu, zs, fs = _sweeps(arm, gamma, gamma0)
    f2, q1, fo, qo = (fs, zs, fu, zu) if stable else (fu, zu, fs, zs)
    res = solve_l2_offset(f1, f2, q1, gamma, gamma0)
    assert _root_error(res, theta1, theta2) < EXACT
    true_beta = min(abs(float(wrap_angle(r.beta - beta))) for r in res.roots)
    assert true_beta < EXACT
    assert not res.near_singular
    if all(abs(beta) < abs(r.beta) - 1e-9 for r in res.roots if abs(r.theta2 - theta2) > 1e-6):
        assert _error(res, theta1, theta2) < EXACT  # the smaller-|beta| rule applies
    both = solve_l2_offset(f1, f2, q1, gamma, gamma0, fit_j2_other=fo, q1_at_j2_other=qo)
    assert _error(both, theta1, theta2) < EXACT
    _check_up_information(both)
    assert abs(float(wrap_angle(both.beta - beta))) < EXACT


def test_l2_design_example_roots_and_second_sweep() -> None:
    beta, theta2, gamma = np.radians(-14.07), np.radians(46.67), np.radians(137.7)
    arm = canonical_arm(L1=np.cos(beta), L2=np.sin(beta), up=up_from_canonical(0.2, theta2))
    f1, zu, fu, zs, fs = _sweeps(arm, gamma, 0.0)
    res = solve_l2_offset(f1, fu, zu, gamma, 0.0)
    assert len(res.roots) == 2
    assert abs(np.degrees(res.theta2) - 56.35) < 0.05  # the smaller |beta| is not the truth
    assert res.rule.startswith("smaller |beta|")
    both = solve_l2_offset(f1, fu, zu, gamma, 0.0, fit_j2_other=fs, q1_at_j2_other=zs)
    assert _error(both, 0.2, theta2) < EXACT
    assert both.rule.startswith("phase of the J2 sweep")


def test_l2_invariant_to_offset_and_friction() -> None:
    arm = canonical_arm(L1=0.6, L2=-0.15, gamma0=1.0, up=up_from_canonical(2.5, 0.9))
    sensors = (
        TorqueSensor(offset=0.5, coulomb=0.4, viscous=0.3),
        TorqueSensor(offset=-0.2, coulomb=0.2, viscous=0.5),
    )
    f1, zu, fu, _, _ = _sweeps(arm, 1.4, 1.0, sensors)
    res = solve_l2_offset(f1, fu, zu, 1.4, 1.0)
    assert _root_error(res, 2.5, 0.9) < EXACT


def test_l2_clipped_at_the_merge_point() -> None:
    # gamma + beta + theta2 = pi: the roots merge; a 1% gain error pushes the arccos past 1.
    arm = canonical_arm(L1=1.0, L2=0.2, up=up_from_canonical(0.4, np.pi - 1.5 - np.arctan(0.2)))
    sensors = (TorqueSensor(gain=1.01), TorqueSensor())
    f1, zu, fu, _, _ = _sweeps(arm, 1.5, 0.0, sensors)
    with pytest.warns(GravdirWarning, match="arccos argument .* clipped"):
        res = solve_l2_offset(f1, fu, zu, 1.5, 0.0)
    assert res.clipped and res.near_singular
    assert np.all(np.isfinite(res.up)) and not np.any(np.isnan(res.theta_cov))
    _check_up_information(res)


def test_l2_gravity_parallel_to_j1() -> None:
    arm = canonical_arm(L1=0.6, L2=0.1, gamma0=0.2, up=(0.0, 0.0, 1.0))
    f1 = _fit(arm, 0, [0.0, 1.0])
    f2 = _fit(arm, 1, [0.5, 0.0])
    res = solve_l2_offset(f1, f2, 0.5, 1.2, 0.2)
    assert res.gravity_parallel_to_j1
    assert res.theta2 == 0.0
    assert abs(res.beta - np.arctan2(0.1, 0.6)) < EXACT


# ---------------------------------------------------------------------------------------------
# L3 offset


@given(
    L1=st.floats(0.1, 1.0),
    L2=st.floats(-0.5, 0.5),
    L3=st.floats(-0.5, 0.5),
    theta1=angle,
    theta2=tilt,
    gamma=gammas,
    gamma0=angle,
    stable=st.booleans(),
)
def test_l3_exact(
    L1: float,
    L2: float,
    L3: float,
    theta1: float,
    theta2: float,
    gamma: float,
    gamma0: float,
    stable: bool,
) -> None:
    beta = np.arctan2(L2, L1)
    r12 = np.hypot(L1, L2)
    assume(np.sin(gamma + beta) > 0.05)
    arm = canonical_arm(L1=L1, L2=L2, L3=L3, gamma0=gamma0, up=up_from_canonical(theta1, theta2))
    f1, zu, fu, zs, fs = _sweeps(arm, gamma, gamma0)
    f2, q1, fo, qo = (fs, zs, fu, zu) if stable else (fu, zu, fs, zs)
    res = solve_l3_offset(f1, f2, q1, gamma, gamma0, l3_ratio=L3 / r12)
    assume(not res.near_singular)
    assert _root_error(res, theta1, theta2) < EXACT
    assert np.allclose(up_from_canonical(res.theta1, res.theta2), res.up)
    both = solve_l3_offset(
        f1, f2, q1, gamma, gamma0, l3_ratio=L3 / r12, fit_j2_other=fo, q1_at_j2_other=qo
    )
    assert _error(both, theta1, theta2) < EXACT
    # Without the ratio, the second sweep fixes |L3|; the sign picks the mirror root.
    sign = 1 if L3 >= 0 else -1
    pair = solve_l3_offset(
        f1, f2, q1, gamma, gamma0, fit_j2_other=fo, q1_at_j2_other=qo, l3_sign=sign
    )
    delta = np.arctan2(L3, r12 * np.sin(gamma + beta))
    if abs(delta) > 2e-3:  # the mirror roots merge at L3 = 0
        assert not pair.near_singular
        assert _error(pair, theta1, theta2) < EXACT
        assert abs(pair.l3_ratio - L3 / r12) < EXACT
    else:
        assert _root_error(pair, theta1, theta2) < 1e-5  # sqrt of the rounding


def test_l3_reduces_to_l2_and_l2_misses_delta() -> None:
    arm = canonical_arm(L1=0.5, L2=0.05, up=up_from_canonical(0.3, 0.7))
    f1, zu, fu, _, _ = _sweeps(arm, np.pi / 2, 0.0)
    l3 = solve_l3_offset(f1, fu, zu, np.pi / 2, 0.0, l3_ratio=0.0)
    l2 = solve_l2_offset(f1, fu, zu, np.pi / 2, 0.0)
    assert _error(l3, l2.theta1, l2.theta2) < EXACT
    # With an L3 offset, the L2 solver (delta neglected) misses theta1 by about delta.
    arm = canonical_arm(L1=0.5, L2=0.05, L3=0.13, up=up_from_canonical(0.3, 0.7))
    f1, zu, fu, _, _ = _sweeps(arm, np.pi / 2, 0.0)
    l2 = solve_l2_offset(f1, fu, zu, np.pi / 2, 0.0)
    delta = np.arctan2(0.13, 0.5)
    assert abs(float(wrap_angle(0.3 - l2.theta1)) - delta) < 1e-9


@given(
    L1=st.floats(0.1, 1.0),
    L2=st.floats(-0.5, 0.5),
    L3=st.floats(-0.5, 0.5),
    theta1=angle,
    theta2=tilt,
    gamma=gammas,
    gamma0=angle,
    gains=st.tuples(st.floats(0.85, 1.15), st.floats(0.85, 1.15)),
    stable=st.booleans(),
)
def test_l3_both_facts_pick_the_truth(
    L1: float,
    L2: float,
    L3: float,
    theta1: float,
    theta2: float,
    gamma: float,
    gamma0: float,
    gains: tuple[float, float],
    stable: bool,
) -> None:
    # Noise-free, tilt up to 180 deg, per-joint gain errors up to 15%: with the ratio and both
    # J2 sweeps the returned root is the truth, wherever the amplitude roots fall.
    beta = np.arctan2(L2, L1)
    assume(np.sin(gamma + beta) > 0.05)
    arm = canonical_arm(L1=L1, L2=L2, L3=L3, gamma0=gamma0, up=up_from_canonical(theta1, theta2))
    sensors = tuple(TorqueSensor(gain=k) for k in gains)
    f1, zu, fu, zs, fs = _sweeps(arm, gamma, gamma0, sensors)
    f2, q1, fo, qo = (fs, zs, fu, zu) if stable else (fu, zu, fs, zs)
    res = solve_l3_offset(
        f1,
        f2,
        q1,
        gamma,
        gamma0,
        l3_ratio=L3 / np.hypot(L1, L2),
        fit_j2_other=fo,
        q1_at_j2_other=qo,
    )
    assert _error(res, theta1, theta2) < EXACT
    assert abs(float(wrap_angle(res.beta - beta))) < EXACT
    assert res.rule.startswith("consistency with both J2 phases")
    assert np.all(np.isfinite(res.theta_cov))
    _check_up_information(res)


def test_l3_both_facts_noisy_large_tilt_has_no_far_root() -> None:
    # A UR5-like shoulder (lambda = 0.23), tilts 45-175 deg, white noise and a J1 gain 25% above
    # J2's: the amplitude ratio alone can lose the true root (its neighbour pair turns complex).
    L1, L2, L3 = 0.6, 0.02, 0.14
    lam = L3 / np.hypot(L1, L2)
    sensors = (TorqueSensor(gain=1.12, noise_std=0.05), TorqueSensor(gain=0.9, noise_std=0.05))
    rng = np.random.default_rng(11)
    ratio_only_far = 0
    for theta2 in np.radians(np.linspace(45.0, 175.0, 14)):
        theta1 = rng.uniform(-np.pi, np.pi)
        arm = canonical_arm(L1=L1, L2=L2, L3=L3, mass=4.0, up=up_from_canonical(theta1, theta2))
        f1 = _fit(arm, 0, [0.0, np.pi / 2], sensors, rng)
        zu, zs = float(f1.zeros().unstable), float(f1.zeros().stable)
        fu, fs = _fit(arm, 1, [zu, 0.0], sensors, rng), _fit(arm, 1, [zs, 0.0], sensors, rng)
        res = solve_l3_offset(
            f1, fu, zu, np.pi / 2, 0.0, l3_ratio=lam, fit_j2_other=fs, q1_at_j2_other=zs
        )
        err1 = abs(float(wrap_angle(res.theta1 - theta1)))
        err2 = abs(res.theta2 - theta2)
        assert err1 < 5 * np.radians(res.theta1_std_deg) + 1e-6
        assert err2 < 5 * np.radians(res.theta2_std_deg) + 1e-6
        ratio_only = solve_l3_offset(f1, fu, zu, np.pi / 2, 0.0, l3_ratio=lam)
        ratio_only_far += _root_error(ratio_only, theta1, theta2) > np.radians(5.0)
    assert ratio_only_far > 0  # the failure the second sweep's phase repairs does occur here


def test_l3_requires_an_extra_fact() -> None:
    arm = canonical_arm(L1=0.5, L3=0.1, up=up_from_canonical(0.3, 0.7))
    f1, zu, fu, _, _ = _sweeps(arm, 1.0, 0.0)
    with pytest.raises(ValueError, match="`l3_ratio` or `fit_j2_other`"):
        solve_l3_offset(f1, fu, zu, 1.0, 0.0)
    with pytest.raises(ValueError, match="`l3_sign`"):
        solve_l3_offset(f1, fu, zu, 1.0, 0.0, l3_ratio=0.2, l3_sign=0.0)
    with pytest.raises(ValueError, match="`amplitude_ratio_rtol`"):
        solve_l3_offset(f1, fu, zu, 1.0, 0.0, l3_ratio=0.2, amplitude_ratio_rtol=-0.1)


# ---------------------------------------------------------------------------------------------
# Two branch


@given(
    L1=st.floats(0.1, 1.0),
    L2=st.floats(-0.5, 0.5),
    theta1=angle,
    theta2=tilt,
    gamma=gammas,
    gamma0=angle,
    gains=st.tuples(st.floats(0.8, 1.2), st.floats(0.8, 1.2)),
    offsets=st.tuples(st.floats(-1, 1), st.floats(-1, 1)),
    swap=st.booleans(),
)
def test_two_branch_exact_and_gain_invariant(
    L1: float,
    L2: float,
    theta1: float,
    theta2: float,
    gamma: float,
    gamma0: float,
    gains: tuple[float, float],
    offsets: tuple[float, float],
    swap: bool,
) -> None:
    assume(np.sin(gamma + np.arctan2(L2, L1)) > 0.05)
    arm = canonical_arm(L1=L1, L2=L2, gamma0=gamma0, up=up_from_canonical(theta1, theta2))
    sensors = tuple(
        TorqueSensor(gain=k, offset=o, coulomb=0.3, viscous=0.1)
        for k, o in zip(gains, offsets, strict=True)
    )
    f1, zu, fu, zs, fs = _sweeps(arm, gamma, gamma0, sensors)
    args = (fs, zs, fu, zu) if swap else (fu, zu, fs, zs)
    res = solve_two_branch(f1, *args)
    assert _error(res, theta1, theta2) < EXACT
    assert len(res.roots) == 1 and not res.gravity_parallel_to_j1
    _check_up_information(res)


def test_two_branch_l3_bias_and_parallel_case() -> None:
    arm = canonical_arm(L1=0.5, L3=0.11, up=up_from_canonical(0.3, 0.2))
    f1, zu, fu, zs, fs = _sweeps(arm, np.pi / 2, 0.0)
    res = solve_two_branch(f1, fu, zu, fs, zs)
    assert _error(res, 0.3, 0.2) > 1e-3  # L3 biases the phase-only solver
    arm = canonical_arm(L1=0.5, gamma0=0.4, up=(0.0, 0.0, 1.0))
    f1 = _fit(arm, 0, [0.0, 1.0])
    fa, fb = _fit(arm, 1, [0.3, 0.0]), _fit(arm, 1, [0.3 + np.pi, 0.0])
    res = solve_two_branch(f1, fa, 0.3, fb, 0.3 + np.pi)
    assert res.gravity_parallel_to_j1 and len(res.roots) == 2
    assert res.theta2 < 1e-9
    with pytest.raises(ValueError, match="`q1_at_j2_b` pi away"):
        solve_two_branch(f1, fa, 0.3, fb, 1.0)


# ---------------------------------------------------------------------------------------------
# Bad input


@pytest.fixture(scope="module")
def fits() -> tuple[SweepFit, float, SweepFit, float, SweepFit]:
    arm = canonical_arm(L1=0.5, L2=0.1, gamma0=0.2, up=up_from_canonical(0.4, 0.6))
    return _sweeps(arm, 1.0, 0.2)


@pytest.mark.parametrize("gamma", [0.0, np.pi, -0.5, 4.0, np.nan])
def test_gamma_out_of_range(fits: tuple, gamma: float) -> None:  # type: ignore[type-arg]
    f1, zu, fu, _, _ = fits
    with pytest.raises(ValueError, match="`gamma`"):
        solve_point_mass(f1, fu, zu, gamma, 0.2)
    with pytest.raises(ValueError, match="`gamma`"):
        solve_l2_offset(f1, fu, zu, gamma, 0.2)


def test_zero_j2_amplitude(fits: tuple) -> None:  # type: ignore[type-arg]
    f1, zu, _, _, _ = fits
    q = np.concatenate([np.linspace(-1, 1, 50), np.linspace(1, -1, 50)])
    v = np.concatenate([np.ones(50), -np.ones(50)])
    flat = fit_sweep(q, velocity=v, torque=0.3 + 0.1 * np.sign(v))
    with pytest.raises(DegenerateGeometryError, match="`fit_j2`"):
        solve_point_mass(f1, flat, zu, 1.0, 0.2)
    with pytest.raises(DegenerateGeometryError, match="`fit_j2_b`"):
        solve_two_branch(f1, fits[2], zu, flat, fits[3])


def test_j2_sweep_not_at_a_zero(fits: tuple) -> None:  # type: ignore[type-arg]
    f1, zu, fu, zs, fs = fits
    with pytest.raises(ValueError, match="`q1_at_j2` within .* of a gravity zero"):
        solve_point_mass(f1, fu, zu + 0.3, 1.0, 0.2)
    with pytest.raises(ValueError, match="`q1_at_j2_b`"):
        solve_two_branch(f1, fu, zu, fs, zs + np.pi / 2)
    # A small positioning error inside the tolerance is accepted; a tight tolerance rejects it.
    solve_point_mass(f1, fu, zu + 0.005, 1.0, 0.2)
    with pytest.raises(ValueError, match="`q1_at_j2`"):
        solve_point_mass(f1, fu, zu + 0.005, 1.0, 0.2, zero_tol=1e-3)


def test_inconsistent_fits(fits: tuple) -> None:  # type: ignore[type-arg]
    f1, zu, fu, zs, fs = fits
    rng = np.random.default_rng(0)
    q = np.linspace(-2, 2, 80)
    tau = np.stack([np.sin(q + 0.3), 2 * np.sin(q - 0.2)]) + 0.01 * rng.standard_normal((2, 80))
    v = np.where(np.arange(80) % 2 == 0, 1.0, -1.0)
    batch = fit_sweep(q, velocity=v, torque=tau)
    with pytest.raises(ValueError, match=r"`fit_j1` to be the fit of a single sweep"):
        solve_point_mass(batch, fu, zu, 1.0, 0.2)
    with pytest.raises(ValueError, match="`fit_j2` to be a SweepFit"):
        solve_l2_offset(f1, "fit", zu, 1.0, 0.2)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`q1_at_j2_b` at the other J1 zero"):
        solve_two_branch(f1, fu, zu, fu, zu)
    with pytest.raises(ValueError, match="`q1_at_j2_other` at the other J1 zero"):
        solve_l2_offset(f1, fu, zu, 1.0, 0.2, fit_j2_other=fu, q1_at_j2_other=zu)
    with pytest.raises(ValueError, match="`q1_at_j2_other`"):
        solve_l2_offset(f1, fu, zu, 1.0, 0.2, fit_j2_other=fs)
    arm = canonical_arm(L1=2.0, L2=0.1, gamma0=0.2, up=up_from_canonical(0.4, 0.6))
    big = _fit(arm, 1, [zs, 0.0])
    with pytest.raises(ValueError, match="`fit_j2_b` to have the same gravity amplitude"):
        solve_two_branch(f1, fu, zu, big, zs)


def test_noisy_data_covariance_matches_scatter() -> None:
    arm = canonical_arm(L1=0.6, L2=0.05, gamma0=0.1, up=up_from_canonical(0.8, 0.5))
    sensors = (TorqueSensor(noise_std=0.05), TorqueSensor(noise_std=0.05))
    rng = np.random.default_rng(7)
    thetas, stds = [], []
    for _ in range(40):
        f1 = _fit(arm, 0, [0.0, 1.2], sensors, rng)
        zu, zs = float(f1.zeros().unstable), float(f1.zeros().stable)
        fu, fs = _fit(arm, 1, [zu, 0.0], sensors, rng), _fit(arm, 1, [zs, 0.0], sensors, rng)
        res = solve_two_branch(f1, fu, zu, fs, zs)
        thetas.append(res.theta2)
        stds.append(np.radians(res.theta2_std_deg))
    ratio = np.std(thetas) / np.mean(stds)
    assert 0.6 < ratio < 1.5


# ---------------------------------------------------------------------------------------------
# Uncertainty of `up` and the result contract


def _check_up_information(res: ClosedFormEstimate) -> None:
    """`up_information` of the result and of every root: symmetric, PSD, `up` in its null space."""
    assert res.up_information is res.roots[res.root_index].up_information
    for r in (res, *res.roots):
        info = r.up_information
        assert np.all(np.isfinite(info))
        assert np.allclose(info, info.T, rtol=1e-12, atol=0.0)
        scale = max(float(np.abs(info).max()), 1e-300)
        assert np.linalg.eigvalsh(info / scale).min() > -1e-9
        assert np.linalg.norm(info @ r.up) <= 1e-9 * scale
        assert not np.isnan(r.up_std_deg) and not np.any(np.isnan(r.up_cov))


def _noisy_fits(
    arm: SyntheticArm, q2: float, noise_std: float, rng: np.random.Generator, n: int
) -> list[tuple[SweepFit, float, SweepFit, float, SweepFit]]:
    """n draws of (J1 fit, unstable zero, J2 fit there, stable zero, J2 fit there): white noise
    of `noise_std` on the torques of one noise-free record of each sweep (J2 at the true zeros)."""
    r1 = arm.sweep(0, [0.0, q2], -2.5, 2.5, 1.0, 40.0)
    zeros = fit_sweep(r1.q, velocity=r1.velocity, torque=r1.torque).zeros()
    zu, zs = float(zeros.unstable), float(zeros.stable)
    records = (r1, *(arm.sweep(1, [z, 0.0], -1.5, 1.5, 1.0, 40.0) for z in (zu, zs)))
    out = []
    for _ in range(n):
        f1, fu, fs = (
            fit_sweep(
                r.q,
                velocity=r.velocity,
                torque=r.torque + noise_std * rng.standard_normal(r.torque.shape),
            )
            for r in records
        )
        out.append((f1, zu, fu, zs, fs))
    return out


LAM = 0.1 / np.hypot(0.6, 0.05)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("solver", "L2", "L3", "tilt", "noise_std"),
    [
        # Near gravity along J1: theta1 is uncertain by about 9 deg, `up` by 0.05 deg.
        ("point_mass", 0.0, 0.0, 0.004, 0.15),
        ("two_branch", 0.0, 0.0, 0.5, 0.05),
        ("l3_offset", 0.05, 0.1, 0.5, 0.05),
    ],
)
def test_up_cov_matches_monte_carlo(
    solver: str, L2: float, L3: float, tilt: float, noise_std: float
) -> None:
    up = up_from_canonical(0.8, tilt)
    arm = canonical_arm(L1=0.6, L2=L2, L3=L3, gamma0=0.1, mass=3.0, up=up)
    rng = np.random.default_rng(3)
    calls = {
        "point_mass": lambda f1, zu, fu, zs, fs: solve_point_mass(f1, fu, zu, 1.3, 0.1),
        "two_branch": lambda f1, zu, fu, zs, fs: solve_two_branch(f1, fu, zu, fs, zs),
        "l3_offset": lambda f1, zu, fu, zs, fs: solve_l3_offset(
            f1, fu, zu, 1.3, 0.1, l3_ratio=LAM, fit_j2_other=fs, q1_at_j2_other=zs
        ),
    }
    results = [calls[solver](*fits) for fits in _noisy_fits(arm, 1.2, noise_std, rng, 600)]
    basis = tangent_basis(arm.up)
    errors = np.array([r.up for r in results]) @ basis.T
    empirical = np.cov(errors.T)
    reported = basis @ np.mean([r.up_cov for r in results], axis=0) @ basis.T
    # Eigenvalues of reported^-1 empirical: 1 where the two agree, along every direction.
    chol = np.linalg.cholesky(reported)
    whitened = np.linalg.solve(chol, np.linalg.solve(chol, empirical).T)
    assert np.all(np.abs(np.linalg.eigvalsh(whitened) - 1.0) < 0.15)
    _check_up_information(results[0])
    if solver == "point_mass":  # the coordinate singularity shows in theta1 only
        assert np.median([r.theta1_std_deg for r in results]) > 50 * results[0].up_std_deg


SOLVERS = ("point_mass", "l2_offset", "l3_ratio", "l3_pair", "l3_both", "two_branch")


def _solve(
    name: str, f1: SweepFit, zu: float, fu: SweepFit, zs: float, fs: SweepFit
) -> ClosedFormEstimate:
    gamma = 1.3  # J1 sweep at q2 = 1.2 with gamma0 = 0.1
    if name == "point_mass":
        return solve_point_mass(f1, fu, zu, gamma, 0.1)
    if name == "l2_offset":
        return solve_l2_offset(f1, fu, zu, gamma, 0.1)
    if name == "l3_ratio":
        return solve_l3_offset(f1, fu, zu, gamma, 0.1, l3_ratio=0.0)
    if name == "l3_pair":
        return solve_l3_offset(f1, fu, zu, gamma, 0.1, fit_j2_other=fs, q1_at_j2_other=zs)
    if name == "l3_both":
        return solve_l3_offset(
            f1, fu, zu, gamma, 0.1, l3_ratio=0.0, fit_j2_other=fs, q1_at_j2_other=zs
        )
    return solve_two_branch(f1, fu, zu, fs, zs)


@pytest.mark.parametrize("name", SOLVERS)
@pytest.mark.parametrize("tilt", [0.0, 1e-6])
@pytest.mark.parametrize("noise_std", [0.0, 0.05])
def test_up_information_where_gravity_lies_along_j1(
    name: str, tilt: float, noise_std: float
) -> None:
    arm = canonical_arm(L1=0.6, gamma0=0.1, mass=3.0, up=up_from_canonical(0.8, tilt))
    rng = np.random.default_rng(5)
    sensors = (TorqueSensor(noise_std=noise_std), TorqueSensor(noise_std=noise_std))
    f1 = _fit(arm, 0, [0.0, 1.2], sensors, rng)
    zu = 0.8 if tilt == 0.0 else float(f1.zeros().unstable)  # at tilt 0 any J1 position will do
    zs = float(wrap_angle(zu + np.pi))
    fu, fs = _fit(arm, 1, [zu, 0.0], sensors, rng), _fit(arm, 1, [zs, 0.0], sensors, rng)
    res = _solve(name, f1, zu, fu, zs, fs)
    _check_up_information(res)
    assert not np.any(np.isnan(res.theta_cov))
    assert np.degrees(np.arccos(min(res.up @ arm.up, 1.0))) < 1e-4 + 5 * res.up_std_deg
    undetermined = name == "two_branch" and res.gravity_parallel_to_j1
    if undetermined:
        # The J2 sweeps do not see `up` along their axis and the solver does not know the J1
        # lever arm: zero information there, documented, never NaN.
        assert np.isinf(res.up_std_deg)
        assert np.linalg.matrix_rank(res.up_information) == 1
    elif noise_std == 0.0:
        assert 0.0 < res.up_std_deg < 1e-9
    else:
        # About the spread at a clear tilt (0.016-0.036 deg here) and far from theta1's.
        assert 0.005 < res.up_std_deg < 0.1
    if res.gravity_parallel_to_j1:
        assert np.isinf(res.theta_cov[0, 0])
    if noise_std > 0:
        assert res.gravity_parallel_to_j1  # A1 is below 3 standard deviations at tilt 1e-6


def test_result_contract() -> None:
    import json
    import pickle

    arm = canonical_arm(L1=0.6, L2=0.05, gamma0=0.1, up=up_from_canonical(0.8, 0.5))
    sensors = (TorqueSensor(noise_std=0.05), TorqueSensor(noise_std=0.05))
    rng = np.random.default_rng(9)
    f1 = _fit(arm, 0, [0.0, 1.2], sensors, rng)
    zu, zs = float(f1.zeros().unstable), float(f1.zeros().stable)
    fu, fs = _fit(arm, 1, [zu, 0.0], sensors, rng), _fit(arm, 1, [zs, 0.0], sensors, rng)
    for name in SOLVERS:
        res = _solve(name, f1, zu, fu, zs, fs)
        copy = pickle.loads(pickle.dumps(res))
        assert copy == res
        other = "two_branch" if name != "two_branch" else "point_mass"
        assert res != _solve(other, f1, zu, fu, zs, fs)
        json.dumps(res.to_dict())
        for array in (res.up, res.up_information, res.theta_cov, res.roots[0].up):
            assert not array.flags.writeable
        assert "±" in repr(res) and "°" in repr(res.roots[0])
        _check_up_information(res)
    # The parallel results too (infinite variances are written as json's Infinity).
    flat = canonical_arm(L1=0.6, gamma0=0.1, up=(0.0, 0.0, 1.0))
    f1 = _fit(flat, 0, [0.0, 1.2])
    fa, fb = _fit(flat, 1, [0.3, 0.0]), _fit(flat, 1, [0.3 + np.pi, 0.0])
    res = solve_two_branch(f1, fa, 0.3, fb, 0.3 + np.pi)
    assert pickle.loads(pickle.dumps(res)) == res
    json.dumps(res.to_dict())


# ---------------------------------------------------------------------------------------------
# Hardening: lost uncertainty, clipped and ambiguous decisions, units, types, scale


def _along_j1_fits(tilt: float) -> tuple[SweepFit, float, SweepFit, float, SweepFit]:
    """Noise-free fits for `_solve` (q2 = 1.2, gamma0 = 0.1); at tilt 0 A1 is not significant and
    the J2 sweeps are taken at J1 = 0.8 and 0.8 - pi."""
    arm = canonical_arm(L1=0.6, gamma0=0.1, mass=3.0, up=up_from_canonical(0.8, tilt))
    f1 = _fit(arm, 0, [0.0, 1.2])
    zu = 0.8 if tilt == 0.0 else float(f1.zeros().unstable)
    zs = float(wrap_angle(zu + np.pi))
    return f1, zu, _fit(arm, 1, [zu, 0.0]), zs, _fit(arm, 1, [zs, 0.0])


def _with_covariance(fit: SweepFit, value: float) -> SweepFit:
    return dataclasses.replace(fit, covariance=np.full_like(fit.covariance, value))


def _check_no_information(res: ClosedFormEstimate) -> None:
    """A result computed from a fit of unknown uncertainty: infinite, never zero or NaN."""
    assert np.all(np.isfinite(res.up))
    assert np.isinf(res.theta_cov[0, 0]) and np.isinf(res.theta_cov[1, 1])
    assert not np.any(np.isnan(res.theta_cov))
    for r in (res, *res.roots):
        assert np.all(r.up_information == 0.0)
        assert np.isinf(r.up_std_deg)
    assert np.isinf(res.theta1_std_deg) and np.isinf(res.theta2_std_deg)


# (solver, which fit): 0 the J1 fit, 2 the first J2 fit, 4 the J2 fit at the other J1 zero.
CORRUPTED = [(name, 0) for name in SOLVERS] + [(name, 2) for name in SOLVERS] + [
    (name, 4) for name in ("l3_pair", "l3_both", "two_branch")
]


@pytest.mark.parametrize(("name", "which"), CORRUPTED)
@pytest.mark.parametrize("value", [np.inf, np.nan])
@pytest.mark.parametrize("tilt", [0.5, 0.0])
def test_non_finite_covariance_gives_infinite_uncertainty(
    name: str, which: int, value: float, tilt: float
) -> None:
    # Seen: a fit whose covariance is infinite or NaN gave theta1 +- 0 deg, theta2 +- 0 deg.
    fits: list[Any] = list(_along_j1_fits(tilt))
    fits[which] = _with_covariance(fits[which], value)
    with np.errstate(all="raise"), pytest.warns(GravdirWarning) as caught:
        res = _solve(name, *fits)
    assert any("infinite or NaN covariance" in str(w.message) for w in caught)
    assert caught[0].filename == __file__  # attributed to the caller
    if tilt == 0.0 and which == 4 and name != "two_branch":
        # Gravity along J1: the single-sweep result does not use the second J2 sweep.
        assert res.gravity_parallel_to_j1
        return
    _check_no_information(res)


def test_fits_of_overflowing_torques_give_infinite_uncertainty() -> None:
    # Seen: torques scaled by 1e200 gave solve_point_mass(...) -> theta1 +- 0 deg,
    # theta2 +- 0 deg, covariance all zeros.
    arm = canonical_arm(L1=0.6, L2=0.05, gamma0=0.2, up=up_from_canonical(0.5, 0.3))
    r1 = arm.sweep(0, [0.0, 1.2], -2.0, 2.0, 0.5, 100.0)
    probe = fit_sweep(r1.q, velocity=r1.velocity, torque=r1.torque)
    q1 = float(probe.zeros().unstable)
    r2 = arm.sweep(1, [q1, 0.0], -1.5, 1.5, 0.5, 100.0)
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            f1, f2 = (
                fit_sweep(r.q, velocity=r.velocity, torque=r.torque * 1e200) for r in (r1, r2)
            )
    except ValueError as exc:  # a clear refusal by the sweep fit is also honest
        pytest.skip(f"fit_sweep refuses torques of 1e200: {exc}")
    unknown = not all(np.all(np.isfinite(f.covariance[1:3, 1:3])) for f in (f1, f2))
    with np.errstate(all="raise"), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = solve_point_mass(f1, f2, q1, gamma=1.4, gamma0=0.2)
    assert not np.any(np.diag(res.theta_cov) == 0.0) and res.up_std_deg > 0
    if unknown:
        assert any(issubclass(w.category, GravdirWarning) for w in caught)
        _check_no_information(res)
    else:
        assert np.all(np.isfinite(res.theta_cov)) and res.up_std_deg > 0


@pytest.mark.parametrize("scale", [1e-100, 1e100, 1e150])
def test_scaled_fits_give_the_same_estimate_and_uncertainty(scale: float) -> None:
    # Amplitudes and covariances are solved in units of the largest amplitude: any finite scale
    # of the torques gives the same angles and the same (dimensionless) information of `up`.
    up = up_from_canonical(0.8, 0.5)
    arm = canonical_arm(L1=0.6, L2=0.05, L3=0.1, gamma0=0.1, mass=3.0, up=up)
    sensors = (TorqueSensor(noise_std=0.05), TorqueSensor(noise_std=0.05))

    def fits(k: float) -> tuple[SweepFit, float, SweepFit, float, SweepFit]:
        rng = np.random.default_rng(3)

        def fit(joint: int, conf: list[float]) -> SweepFit:
            start, stop = (-2.5, 2.5) if joint == 0 else (-1.5, 1.5)
            rec = arm.sweep(joint, conf, start, stop, 1.0, 40.0, sensor=sensors, rng=rng)
            return fit_sweep(rec.q, velocity=rec.velocity, torque=rec.torque * k)

        f1 = fit(0, [0.0, 1.2])
        zu, zs = float(f1.zeros().unstable), float(f1.zeros().stable)
        return f1, zu, fit(1, [zu, 0.0]), zs, fit(1, [zs, 0.0])

    reference, scaled = fits(1.0), fits(scale)
    for name in SOLVERS:
        want = _solve(name, *reference)
        with np.errstate(all="raise"):
            got = _solve(name, *scaled)
        assert _error(got, want.theta1, want.theta2) < 1e-9
        assert np.allclose(got.up_information, want.up_information, rtol=1e-6, atol=0.0)
        assert np.allclose(got.theta_cov, want.theta_cov, rtol=1e-6, atol=0.0)


def test_point_mass_inconsistent_with_gamma() -> None:
    # Seen: data inconsistent with gamma gave theta2 = 90 deg, flagged, without a warning.
    arm = canonical_arm(L1=0.8, gamma0=0.0, up=up_from_canonical(0.4, 0.8))
    f1, zu, fu, _, _ = _sweeps(arm, 1.4, 0.0)
    # A1 / (A2 sin(0.3)) = 2.4: far beyond noise and any gain mismatch.
    with pytest.raises(DegenerateGeometryError, match=r"consistent with `gamma`.*standard dev"):
        solve_point_mass(f1, fu, zu, 0.3, 0.0)
    with np.errstate(all="raise"), pytest.raises(DegenerateGeometryError, match="`gamma`"):
        solve_point_mass(f1, fu, zu, 1e-300, 0.0)  # was a FloatingPointError (overflow)
    # Noise at theta2 = 90 deg: clipped within a standard deviation, a warning with the margin.
    arm = canonical_arm(L1=0.8, up=up_from_canonical(0.7, np.pi / 2))
    sensors = (TorqueSensor(noise_std=0.05), TorqueSensor(noise_std=0.05))
    rng = np.random.default_rng(2)
    f1 = _fit(arm, 0, [0.0, np.pi / 2], sensors, rng)
    zu = float(f1.zeros().unstable)
    fu = _fit(arm, 1, [zu, 0.0], sensors, rng)
    with pytest.warns(GravdirWarning, match=r"beyond .*\(0\.\d+ standard deviations"):
        res = solve_point_mass(f1, fu, zu, np.pi / 2, 0.0)
    assert res.clipped and res.theta2 == pytest.approx(np.pi / 2, abs=1e-12)


def test_l2_inconsistent_with_gamma() -> None:
    arm = canonical_arm(L1=0.8, L2=0.1, gamma0=0.0, up=up_from_canonical(0.4, 0.8))
    f1, zu, fu, _, _ = _sweeps(arm, 1.4, 0.0)
    with pytest.raises(DegenerateGeometryError, match="`gamma` and `gamma0`"):
        solve_l2_offset(f1, fu, zu, 1.4, 2.5)


def test_ambiguous_decisions_warn_with_the_margin() -> None:
    sensors = (TorqueSensor(noise_std=0.05), TorqueSensor(noise_std=0.05))
    # Point mass near 90 deg: the J2 phase picks theta2 or pi - theta2 within the noise.
    arm = canonical_arm(L1=0.8, up=up_from_canonical(0.7, np.pi / 2))
    rng = np.random.default_rng(1)
    f1 = _fit(arm, 0, [0.0, np.pi / 2], sensors, rng)
    zu = float(f1.zeros().unstable)
    fu = _fit(arm, 1, [zu, 0.0], sensors, rng)
    with pytest.warns(GravdirWarning, match=r"picks theta2 = .* by a margin of .* standard dev"):
        res = solve_point_mass(f1, fu, zu, np.pi / 2, 0.0)
    assert len(res.roots) == 2 and not res.clipped
    # Two branches at a tilt of 1e-4 rad: half the phase difference is within the noise of 0,
    # where theta2 jumps between 0 and 180 deg.
    arm = canonical_arm(L1=0.6, gamma0=0.1, mass=3.0, up=up_from_canonical(0.8, 1e-4))
    rng = np.random.default_rng(0)
    f1 = _fit(arm, 0, [0.0, 1.2], sensors, rng)
    zu, zs = float(f1.zeros().unstable), float(f1.zeros().stable)
    fu, fs = _fit(arm, 1, [zu, 0.0], sensors, rng), _fit(arm, 1, [zs, 0.0], sensors, rng)
    with pytest.warns(GravdirWarning, match=r"half the J2 phase difference .* standard dev"):
        solve_two_branch(f1, fu, zu, fs, zs, parallel_sigma=0.0)
    # Gravity along J1 with the mass at beta = 90 deg: up or down by the smaller |beta|.
    arm = canonical_arm(L1=0.0, L2=0.5, gamma0=0.1, mass=3.0, up=(0.0, 0.0, 1.0))
    rng = np.random.default_rng(0)
    f1, fu = _fit(arm, 0, [0.0, 1.2], sensors, rng), _fit(arm, 1, [0.3, 0.0], sensors, rng)
    with pytest.warns(GravdirWarning, match=r"smaller \|beta\| puts `up` at theta2 = "):
        res = solve_l2_offset(f1, fu, 0.3, 1.3, 0.1)
    assert res.gravity_parallel_to_j1
    # A clear decision says nothing.
    arm = canonical_arm(L1=0.8, up=up_from_canonical(0.7, 0.6))
    rng = np.random.default_rng(1)
    f1 = _fit(arm, 0, [0.0, 1.2], sensors, rng)
    zu = float(f1.zeros().unstable)
    fu = _fit(arm, 1, [zu, 0.0], sensors, rng)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        solve_point_mass(f1, fu, zu, 1.2, 0.0)


def _solver_calls(
    fits: tuple[SweepFit, float, SweepFit, float, SweepFit],
) -> dict[str, Callable[..., ClosedFormEstimate]]:
    """Each public solver on `fits` (gamma 1.0, gamma0 0.2), keywords overridable."""
    f1, zu, fu, zs, fs = fits
    base = {"q1_at_j2": zu, "gamma": 1.0, "gamma0": 0.2}
    return {
        "point_mass": lambda **k: solve_point_mass(f1, fu, **{**base, **k}),
        "l2_offset": lambda **k: solve_l2_offset(
            f1, fu, **{**base, "fit_j2_other": fs, "q1_at_j2_other": zs, **k}
        ),
        "l3_offset": lambda **k: solve_l3_offset(
            f1, fu, **{**base, "l3_ratio": 0.0, "fit_j2_other": fs, "q1_at_j2_other": zs, **k}
        ),
        "two_branch": lambda **k: solve_two_branch(
            f1, fu, **{"q1_at_j2_a": zu, "fit_j2_b": fs, "q1_at_j2_b": zs, **k}
        ),
    }


SCALAR_KEYWORDS = {
    "point_mass": ("q1_at_j2", "gamma", "gamma0", "arm_azimuth", "zero_tol", "parallel_sigma",
                   "parallel_rtol", "singular_tol"),
    "l2_offset": ("q1_at_j2", "gamma", "gamma0", "q1_at_j2_other", "arm_azimuth", "zero_tol",
                  "parallel_sigma", "parallel_rtol", "singular_tol"),
    "l3_offset": ("q1_at_j2", "gamma", "gamma0", "l3_ratio", "q1_at_j2_other", "arm_azimuth",
                  "zero_tol", "parallel_sigma", "parallel_rtol", "singular_tol",
                  "amplitude_ratio_rtol"),
    "two_branch": ("q1_at_j2_a", "q1_at_j2_b", "arm_azimuth", "zero_tol", "parallel_sigma",
                   "parallel_rtol"),
}


@pytest.mark.parametrize("solver", sorted(SCALAR_KEYWORDS))
def test_numeric_strings_and_bools_are_refused(fits: tuple, solver: str) -> None:  # type: ignore[type-arg]
    # Seen: gamma="1.4" was accepted as a number.
    call = _solver_calls(fits)[solver]
    for key in SCALAR_KEYWORDS[solver]:
        for bad in ("1.4", True, np.array("0.5"), [1.0]):
            with pytest.raises(ValueError, match=f"`{key}`"):
                call(**{key: bad})
    if solver == "l3_offset":
        for sign in ("1", True, 1.5, np.nan):
            with pytest.raises(ValueError, match="`l3_sign`"):
                call(l3_sign=sign)


@pytest.mark.parametrize("solver", sorted(SCALAR_KEYWORDS))
def test_degrees_for_radians_are_refused(fits: tuple, solver: str) -> None:  # type: ignore[type-arg]
    f1, zu, _, zs, _ = fits
    call = _solver_calls(fits)[solver]
    angles = {"q1_at_j2": zu, "q1_at_j2_other": zs, "q1_at_j2_a": zu, "q1_at_j2_b": zs,
              "gamma0": 0.2, "arm_azimuth": 0.4, "gamma": 1.0}
    for key in SCALAR_KEYWORDS[solver]:
        if key in angles:
            degrees = np.degrees(angles[key]) + (360.0 if abs(angles[key]) < 0.3 else 0.0)
            with pytest.raises(ValueError, match=rf"`{key}`.*degrees\?"):
                call(**{key: degrees})


@pytest.mark.parametrize("solver", sorted(SCALAR_KEYWORDS))
def test_angles_follow_the_shared_radians_rule(fits: tuple, solver: str) -> None:  # type: ignore[type-arg]
    # Positions and offsets are joint positions, `arm_azimuth` an azimuth: within ±4π, the
    # message of every such angle in gravdir; two turns either way give the same estimate.
    f1, zu, _, zs, _ = fits
    call = _solver_calls(fits)[solver]
    angles = {
        "q1_at_j2": zu,
        "q1_at_j2_other": zs,
        "q1_at_j2_a": zu,
        "q1_at_j2_b": zs,
        "gamma0": 0.2,
        "arm_azimuth": 0.0,
    }
    reference = call()
    for key in SCALAR_KEYWORDS[solver]:
        if key not in angles:
            continue
        kind = "azimuths" if key == "arm_azimuth" else "joint positions"
        beyond = -4 * np.pi * (1 + 1e-12)
        with pytest.raises(
            ValueError, match=rf"`{key}` to hold {kind} in radians within ±4π, got -12\.566"
        ):
            call(**{key: beyond})
        turned = angles[key] - 4 * np.pi * (1.0 if angles[key] >= 0 else -1.0)
        assert abs(turned) <= 4 * np.pi
        np.testing.assert_allclose(call(**{key: turned}).up, reference.up, atol=1e-12)


def test_gamma_is_an_angle_from_z_in_radians(fits: tuple) -> None:  # type: ignore[type-arg]
    # `gamma` is the link's angle from +z: beyond pi it is taken for degrees (5 rad would be a
    # link at 286° from +z; it was refused without the hint up to 2 pi).
    call = _solver_calls(fits)["point_mass"]
    for gamma in (5.0, 2 * np.pi, 57.3, -4.0):
        with pytest.raises(ValueError, match=r"`gamma` to hold tilts in radians .*degrees\?$"):
            call(gamma=gamma)
    with pytest.raises(ValueError, match=r"`gamma` .*within \[0, π\], got -0\.5\.$"):
        call(gamma=-0.5)
    for gamma in (0.0, np.pi):
        with pytest.raises(ValueError, match=r"`gamma` in \(0, pi\) .*J1 axis\.$"):
            call(gamma=gamma)


def test_ranges_and_caps(fits: tuple) -> None:  # type: ignore[type-arg]
    calls = _solver_calls(fits)
    with np.errstate(all="raise"):
        # Seen in the fuzz suite: OverflowError, FloatingPointError (overflow and underflow).
        with pytest.raises(ValueError, match="`amplitude_ratio_rtol`"):
            calls["l3_offset"](amplitude_ratio_rtol=1e300)
        with pytest.raises(ValueError, match="`l3_ratio`"):
            calls["l3_offset"](l3_ratio=1e300)
        calls["l3_offset"](l3_ratio=1e-300)
        calls["l3_offset"](amplitude_ratio_rtol=1e-300)
    for solver in calls:
        for bad in (-1.0, 0.0, np.inf, np.nan):
            with pytest.raises(ValueError, match="`zero_tol`"):
                calls[solver](zero_tol=bad)
        for key in ("parallel_sigma", "parallel_rtol"):
            with pytest.raises(ValueError, match=f"`{key}`"):
                calls[solver](**{key: -1.0})
    with pytest.raises(ValueError, match="`singular_tol`"):
        calls["point_mass"](singular_tol=np.nan)
    # A J2 amplitude a billionth of J1's carries no gravity load the solvers resolve.
    f1, zu, fu, _, _ = fits
    gravity = np.isin(fu.column_names, ("sin", "cos"))
    tiny = dataclasses.replace(
        fu,
        coefficients=np.where(gravity, fu.coefficients * 1e-12, fu.coefficients),
        amplitude=fu.amplitude * 1e-12,
    )
    with pytest.raises(DegenerateGeometryError, match="`fit_j2` .* at least 1e-09 of the J1"):
        solve_point_mass(f1, tiny, zu, 1.0, 0.2, parallel_rtol=0.0)


def test_malformed_fits_are_refused(fits: tuple) -> None:  # type: ignore[type-arg]
    f1, zu, fu, _, _ = fits
    nan_phase = dataclasses.replace(f1, phase=np.float64(np.nan))
    with pytest.raises(ValueError, match="`fit_j1` to have a finite amplitude"):
        solve_point_mass(nan_phase, fu, zu, 1.0, 0.2)
    bad_coef = dataclasses.replace(fu, coefficients=np.where(fu.coefficients != 0, np.inf, 0.0))
    with pytest.raises(ValueError, match="`fit_j2` to have a finite amplitude"):
        solve_point_mass(f1, bad_coef, zu, 1.0, 0.2)
    short = dataclasses.replace(fu, coefficients=fu.coefficients[:3])
    with pytest.raises(ValueError, match=r"`fit_j2` .* coefficients of shape \(p,\)"):
        solve_point_mass(f1, short, zu, 1.0, 0.2)
    no_columns = dataclasses.replace(fu, column_names=("offset", "a", "b"))
    with pytest.raises(ValueError, match="`fit_j2` to have `sin` and `cos` columns"):
        solve_point_mass(f1, no_columns, zu, 1.0, 0.2)
