"""Tests of gravdir.friction against the independently written synthetic joint."""

from __future__ import annotations

import json
import pickle
import time
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gravdir import testing
from gravdir.errors import (
    ConvergenceWarning,
    DegenerateGeometryError,
    GravdirWarning,
    InsufficientDataError,
)
from gravdir.friction import (
    ArmFrictionFit,
    AsymmetricStribeckFriction,
    CoulombViscousFriction,
    ExcitationPlan,
    FrictionFit,
    FrictionRun,
    GravityFreeCheck,
    JointFrictionFit,
    LoadDependentFriction,
    LoadFrictionFit,
    StribeckFriction,
    excitation_trajectory,
    fit_friction,
    gravity_free_check,
    identify_arm_friction,
    identify_joint_friction,
    load_dependent_friction,
)
from gravdir.synthetic.friction_joint import SyntheticFrictionJoint, holding_torque

SPEEDS = np.geomspace(0.005, 1.0, 8)
# A horizontal joint axis (y) under a distal body of first moment 2 kg·m out along x, 0.5 up z:
# the gravity torque peaks near 20 N·m over the plan's ±69° range.
AXIS = np.array([0.0, 1.0, 0.0])
UP = np.array([0.0, 0.0, 1.0])
FIRST_MOMENT = np.array([2.0, 0.0, 0.5])


@pytest.fixture(scope="module")
def plan():
    return excitation_trajectory(
        -1.2, 1.2, SPEEDS, max_acceleration=2.0, sample_rate=100.0, cruise_time=2.0
    )


@pytest.fixture(scope="module")
def gravity(plan):
    return holding_torque(plan.q, joint_axis=AXIS, up=UP, first_moment=FIRST_MOMENT)


def symmetric_joint(**changes):
    """A synthetic joint whose two directions share their parameters."""
    params = dict(
        coulomb_positive=3.0,
        coulomb_negative=3.0,
        static_positive=4.2,
        static_negative=4.2,
        stribeck_velocity_positive=0.04,
        stribeck_velocity_negative=0.04,
        viscous_positive=2.0,
        viscous_negative=2.0,
        exponent_positive=2.0,
        exponent_negative=2.0,
        load_coefficient=0.03,
        inertia=0.8,
        offset=0.25,
    )
    params.update(changes)
    return SyntheticFrictionJoint(**params)


# --------------------------------------------------------------------------------------------
# Models
# --------------------------------------------------------------------------------------------


def test_models_evaluate_hand_values():
    v = np.array([-0.5, -0.02, 0.0, 0.02, 0.5])
    cv = CoulombViscousFriction(coulomb=2.0, viscous=1.5, offset=0.1)
    assert np.allclose(cv.evaluate(v), [-2.65, -1.93, 0.1, 2.13, 2.85])
    st_model = StribeckFriction(2.0, 3.0, 0.04, 1.5, exponent=2.0, offset=0.0)
    e = np.exp(-0.25)  # (0.02 / 0.04)^2 = 0.25
    assert np.isclose(st_model.evaluate(0.02), 2.0 + 1.0 * e + 0.03)
    assert np.isclose(st_model.evaluate(-0.02), -(2.0 + 1.0 * e) - 0.03)
    asym = AsymmetricStribeckFriction(2.0, 1.0, 3.0, 1.5, 0.04, 0.02, 1.5, 0.5, 2.0, 1.0)
    assert np.isclose(asym.evaluate(-0.02), -(1.0 + 0.5 * np.exp(-1.0)) - 0.01)
    assert asym.evaluate(0.0) == 0.0
    load = LoadDependentFriction(cv, load_coefficient=0.05)
    assert np.allclose(load.evaluate(v, load=-10.0), cv.evaluate(v) + 0.5 * np.sign(v))


def test_models_broadcast_over_leading_axes():
    m = StribeckFriction(2.0, 3.0, 0.04, 1.5)
    v = np.random.default_rng(0).normal(size=(4, 3, 5))
    out = m.evaluate(v)
    assert out.shape == (4, 3, 5)
    assert np.allclose(out[2, 1], m.evaluate(v[2, 1]))


def test_models_reject_bad_parameters():
    with pytest.raises(ValueError, match="`stribeck_velocity`"):
        StribeckFriction(2.0, 3.0, 0.0, 1.0)
    with pytest.raises(ValueError, match="`exponent_negative`"):
        AsymmetricStribeckFriction(2.0, 1.0, 3.0, 1.5, 0.04, 0.02, 1.5, 0.5, 2.0, -1.0)
    with pytest.raises(ValueError, match="`coulomb`"):
        CoulombViscousFriction(float("nan"), 1.0)
    with pytest.raises(ValueError, match="`load`"):
        LoadDependentFriction(CoulombViscousFriction(1.0, 1.0), 0.1).evaluate([1.0])
    with pytest.raises(ValueError, match="`base`"):
        LoadDependentFriction("stribeck", 0.1)  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# Excitation plan
# --------------------------------------------------------------------------------------------


def test_plan_follows_the_claim_3_profile(plan):
    assert plan.q.min() >= -1.2 and plan.q.max() <= 1.2
    assert np.max(np.abs(plan.acceleration)) <= 2.0
    for k, v in enumerate(SPEEDS):
        sel = plan.speed_index == k
        assert np.isclose(np.abs(plan.velocity[sel]).max(), v)
        # Cruising samples move at exactly the set speed with no acceleration ...
        cru = sel & plan.cruising
        assert np.allclose(np.abs(plan.velocity[cru]), v)
        assert np.all(plan.acceleration[cru] == 0)
        # ... and below it the joint is on an acceleration ramp at the bound.
        slow = sel & (np.abs(plan.velocity) < v - 1e-12)
        assert np.all(np.abs(plan.acceleration[slow]) == 2.0)
        assert np.any(plan.velocity[sel] > 0) and np.any(plan.velocity[sel] < 0)
    # Within a constant-acceleration stretch, velocity and position follow exactly. (At the
    # slowest speed a reversal's ramps last less than one sample and fall between two samples.)
    dt = np.diff(plan.time)
    same = plan.acceleration[1:] == plan.acceleration[:-1]
    same &= np.sign(plan.velocity[1:]) == np.sign(plan.velocity[:-1])
    dv = np.diff(plan.velocity)
    dq = np.diff(plan.q)
    assert np.allclose(dv[same], (plan.acceleration[:-1] * dt)[same], atol=1e-12)
    vbar = 0.5 * (plan.velocity[1:] + plan.velocity[:-1])
    assert np.allclose(dq[same], (vbar * dt)[same], atol=1e-12)
    # Everywhere the position increments stay within what the speed bound allows.
    assert np.all(np.abs(dq) <= SPEEDS.max() * dt + 1e-12)
    assert np.isclose(plan.duration, plan.time[-1], atol=0.01)
    assert "8 speeds" in repr(plan)


@given(
    span=st.floats(0.2, 3.0),
    acc=st.floats(0.2, 5.0),
    fractions=st.lists(st.floats(0.05, 0.99), min_size=1, max_size=4),
    cruise=st.one_of(st.none(), st.floats(0.0, 2.0)),
)
def test_plan_stays_in_range_and_under_the_bound(span, acc, fractions, cruise):
    vmax = np.sqrt(acc * span)
    speeds = np.array(fractions) * vmax
    p = excitation_trajectory(
        0.3, 0.3 + span, speeds, max_acceleration=acc, sample_rate=200.0, cruise_time=cruise
    )
    assert p.q.min() >= 0.3 - 1e-12 and p.q.max() <= 0.3 + span + 1e-12
    assert np.max(np.abs(p.acceleration)) <= acc * (1 + 1e-12)
    assert np.max(np.abs(p.velocity)) <= speeds.max() * (1 + 1e-9)
    assert np.isclose(p.q[0], 0.3)


def test_plan_rejects_unreachable_speed():
    with pytest.raises(ValueError, match="`speeds` reachable"):
        excitation_trajectory(0.0, 0.5, [0.1, 2.0], max_acceleration=1.0, sample_rate=100.0)
    with pytest.raises(ValueError, match="`q_max`"):
        excitation_trajectory(1.0, 0.5, [0.1], max_acceleration=1.0, sample_rate=100.0)
    with pytest.raises(ValueError, match="`max_acceleration`"):
        excitation_trajectory(0.0, 1.0, [0.1], max_acceleration=0.0, sample_rate=100.0)
    with pytest.raises(ValueError, match="`speeds`"):
        excitation_trajectory(0.0, 1.0, [-0.1], max_acceleration=1.0, sample_rate=100.0)
    with pytest.raises(ValueError, match="`repeats`"):
        excitation_trajectory(0.0, 1.0, [0.1], max_acceleration=1.0, sample_rate=100.0, repeats=0)


def test_plan_takes_a_sample_rate():
    # The plan is sampled every 1 / sample_rate s from 0: 2521 samples of the 25.2 s plan at
    # 100 Hz, the grid arange(n) * (1 / 100) exactly.
    p = excitation_trajectory(0.0, 1.0, [0.1, 0.5], max_acceleration=1.0, sample_rate=100.0)
    assert p.time.size == 2521 and round(p.duration, 9) == 25.2
    assert np.array_equal(p.time, np.arange(2521) * 0.01)
    assert p.q[0] == 0.0 and p.q.max() == 1.0
    for bad in (0.0, -100.0, np.inf, np.nan, "100", True):
        with pytest.raises(ValueError, match="`sample_rate`"):
            excitation_trajectory(0.0, 1.0, [0.1], max_acceleration=1.0, sample_rate=bad)
    # Below one sample per plan duration (25.2 s here): refused, naming the rate.
    with pytest.raises(ValueError, match="`sample_rate` at least one sample per plan duration"):
        excitation_trajectory(0.0, 1.0, [0.1, 0.5], max_acceleration=1.0, sample_rate=0.03)


def test_renamed_and_keyword_only_arguments():
    # Series after the first are keyword-only; the old names and positions are gone.
    v = np.concatenate([np.geomspace(0.01, 1, 30), -np.geomspace(0.01, 1, 30)])
    model = CoulombViscousFriction(2.0, 1.5)
    tau = model.evaluate(v)
    g = np.linspace(-20.0, 30.0, v.size)
    fit = fit_friction(v, torque=tau, model="coulomb-viscous")
    with pytest.raises(TypeError):
        fit_friction(v, tau)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        load_dependent_friction(fit, v, tau + 0.03 * np.abs(g), g)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        fit.predict(v, None)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        model.evaluate(v, g)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        FrictionRun(v, tau)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        excitation_trajectory(0.0, 1.0, [0.1], max_acceleration=1.0, sample_time=0.01)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        gravity_free_check(UP, axis=AXIS, point=[0, 0, 0], center_of_mass=[1, 0, 0], mass=1.0)  # type: ignore[call-arg]
    chk = gravity_free_check(
        UP, joint_axis=AXIS, point=[0, 0, 0], center_of_mass=[1, 0, 0], mass=1.0
    )
    assert not chk.is_gravity_free
    assert fit.predict(v, acceleration=None, load=None).shape == v.shape
    run = FrictionRun(v, acceleration=0 * v, torque=tau, gravity_torque=g)
    assert run.acceleration is not None and np.array_equal(run.torque, tau)
    plan = excitation_trajectory(0.0, 1.0, [0.1], max_acceleration=1.0, sample_rate=100.0)
    assert not hasattr(plan, "position") and plan.q.shape == plan.time.shape


# --------------------------------------------------------------------------------------------
# Noise-free recovery
# --------------------------------------------------------------------------------------------


def assert_recovered(fit, truth: dict[str, float], rtol: float = 1e-6) -> None:
    for name, value in truth.items():
        got = fit.parameter(name)
        assert abs(got - value) <= rtol * abs(value), (name, got, value)


def test_noise_free_coulomb_viscous_with_inertia(plan):
    joint = symmetric_joint(static_positive=3.0, static_negative=3.0, load_coefficient=0.0)
    tau = joint.measure(plan.q, plan.velocity, plan.acceleration)
    fit = fit_friction(
        plan.velocity, torque=tau, model="coulomb-viscous", acceleration=plan.acceleration
    )
    assert_recovered(fit, {"offset": 0.25, "coulomb": 3.0, "viscous": 2.0, "inertia": 0.8})
    assert fit.residual_rms < 1e-10
    assert isinstance(fit.model, CoulombViscousFriction)


@pytest.mark.parametrize("exponent", [None, 2.0])
def test_noise_free_stribeck_with_inertia(plan, exponent):
    joint = symmetric_joint(load_coefficient=0.0)
    tau = joint.measure(plan.q, plan.velocity, plan.acceleration)
    fit = fit_friction(
        plan.velocity,
        torque=tau,
        model="stribeck",
        acceleration=plan.acceleration,
        exponent=exponent,
    )
    truth = {
        "offset": 0.25,
        "coulomb": 3.0,
        "static": 4.2,
        "viscous": 2.0,
        "stribeck_velocity": 0.04,
        "inertia": 0.8,
    }
    if exponent is None:
        truth["exponent"] = 2.0
    assert_recovered(fit, truth)
    assert ("exponent" in fit.parameter_names) == (exponent is None)
    v = np.linspace(-1, 1, 41)
    assert np.allclose(fit.model.evaluate(v), joint.friction(v) + 0.25, atol=1e-6)


def test_noise_free_asymmetric_stribeck_folds_the_offset(plan):
    joint = SyntheticFrictionJoint(load_coefficient=0.0, offset=0.25)
    tau = joint.measure(plan.q, plan.velocity, plan.acceleration)
    fit = fit_friction(
        plan.velocity, torque=tau, model="asymmetric-stribeck", acceleration=plan.acceleration
    )
    # The model has no offset: it rides on the levels, +c0 forward and -c0 backward.
    assert_recovered(
        fit,
        {
            "coulomb_positive": 3.0 + 0.25,
            "coulomb_negative": 2.6 - 0.25,
            "static_positive": 4.2 + 0.25,
            "static_negative": 3.8 - 0.25,
            "viscous_positive": 2.0,
            "viscous_negative": 2.3,
            "stribeck_velocity_positive": 0.04,
            "stribeck_velocity_negative": 0.03,
            "exponent_positive": 2.0,
            "exponent_negative": 1.5,
            "inertia": 0.8,
        },
    )


def test_noise_free_load_dependent_in_one_fit(plan, gravity):
    joint = symmetric_joint()
    tau = joint.measure(plan.q, plan.velocity, plan.acceleration, gravity_torque=gravity)
    fit = fit_friction(
        plan.velocity,
        torque=tau,
        model="stribeck",
        acceleration=plan.acceleration,
        gravity_torque=gravity,
        exponent=2.0,
    )
    assert_recovered(fit, {"coulomb": 3.0, "static": 4.2, "load_coefficient": 0.03})
    assert isinstance(fit.model, LoadDependentFriction)


def test_two_pose_noise_free(plan, gravity):
    joint = SyntheticFrictionJoint(offset=0.25)
    free = joint.measure(plan.q, plan.velocity, plan.acceleration)
    loaded = joint.measure(plan.q, plan.velocity, plan.acceleration, gravity_torque=gravity)
    fit0 = fit_friction(
        plan.velocity, torque=free, model="asymmetric-stribeck", acceleration=plan.acceleration
    )
    res = load_dependent_friction(
        fit0, plan.velocity, torque=loaded, gravity_torque=gravity, acceleration=plan.acceleration
    )
    assert abs(res.load_coefficient - 0.03) < 1e-6 * 0.03
    # The gravity-affected friction of CN 107423515 B, claim 4, is mu |tau_g| sgn v, sample by
    # sample.
    expected = 0.03 * np.abs(gravity) * np.sign(plan.velocity)
    assert np.allclose(res.load_friction[res.mask], expected[res.mask], atol=1e-8)
    assert res.residual_rms < 1e-8
    v = np.linspace(-1, 1, 11)
    g = np.linspace(-20, 20, 11)
    assert np.allclose(
        res.model.evaluate(v, load=g), joint.friction(v, g) + 0.25 * (v != 0), atol=1e-8
    )


# --------------------------------------------------------------------------------------------
# Realistic noise, Monte Carlo
# --------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_monte_carlo_accuracy_and_covariance(plan, gravity):
    # White torque noise of 0.1 N·m = 0.5% of the 20 N·m peak gravity torque (the project's
    # realistic sensor); Panda-sized friction with asymmetric levels.
    joint = SyntheticFrictionJoint(offset=0.25, noise_std=0.1)
    rng = np.random.default_rng(20240603)
    names = (
        "coulomb_positive",
        "coulomb_negative",
        "viscous_positive",
        "viscous_negative",
        "stribeck_velocity_positive",
        "stribeck_velocity_negative",
    )
    truth = np.array([3.25, 2.35, 2.0, 2.3, 0.04, 0.03])
    n_draws = 200
    est = np.empty((n_draws, len(names) + 1))
    se = np.empty_like(est)
    for i in range(n_draws):
        free = joint.measure(plan.q, plan.velocity, plan.acceleration, rng=rng)
        loaded = joint.measure(
            plan.q, plan.velocity, plan.acceleration, gravity_torque=gravity, rng=rng
        )
        fit0 = fit_friction(
            plan.velocity, torque=free, model="asymmetric-stribeck", acceleration=plan.acceleration
        )
        res = load_dependent_friction(
            fit0,
            plan.velocity,
            torque=loaded,
            gravity_torque=gravity,
            acceleration=plan.acceleration,
        )
        idx = [fit0.parameter_names.index(n) for n in names]
        est[i, :-1] = fit0.parameters[idx]
        se[i, :-1] = fit0.parameters_std[idx]
        est[i, -1], se[i, -1] = res.load_coefficient, res.load_coefficient_std
    truth = np.append(truth, 0.03)
    rel = np.abs(est / truth - 1)
    p95 = np.percentile(rel, 95, axis=0)
    assert np.all(p95[[0, 1, 2, 3, 6]] < 0.05), p95  # Coulomb, viscous, load coefficient
    assert np.all(p95[[4, 5]] < 0.10), p95  # Stribeck velocities
    ratio = est.std(axis=0, ddof=1) / np.sqrt(np.mean(se**2, axis=0))
    assert np.all(np.abs(ratio - 1) < 0.15), ratio


# --------------------------------------------------------------------------------------------
# Gravity-free check
# --------------------------------------------------------------------------------------------


def test_gravity_free_poses_of_claim_5():
    # Axis parallel to gravity: free whatever the mass distribution.
    chk = gravity_free_check(UP, [0, 0, -1], [0, 0, 0.3], [0.5, 0.2, 0.9], mass=4.0)
    assert chk.is_gravity_free and chk.residual_fraction == 0.0
    # Horizontal axis, centre of mass on the axis line: free.
    chk = gravity_free_check(UP, AXIS, [0, 0, 0.3], [0, 0.4, 0.3], mass=4.0)
    assert chk.is_gravity_free and chk.distance_from_axis == 0.0
    # Horizontal axis, mass 0.4 m off the line: loaded, and the reason says so.
    chk = gravity_free_check(UP, AXIS, [0, 0, 0.3], [0.4, 0.0, 0.3], mass=4.0)
    assert not chk.is_gravity_free
    assert np.isclose(chk.gravity_torque_amplitude, 4.0 * 9.80665 * 0.4)
    assert "not gravity-free" in chk.reason and "90.00°" in chk.reason
    assert "90.00°" in repr(chk)


@given(
    up=testing.ups(),
    axis=st.tuples(*[st.floats(-1, 1)] * 3).filter(lambda x: np.linalg.norm(x) > 0.1),
    com=st.tuples(*[st.floats(-1, 1)] * 3),
    mass=st.floats(0.5, 20.0),
)
def test_gravity_free_amplitude_matches_cross_products(up, axis, com, mass):
    u = np.array(up) / np.linalg.norm(up)
    a = np.array(axis) / np.linalg.norm(axis)
    point = np.array([0.1, -0.2, 0.3])
    chk = gravity_free_check(u, a, point, np.array(com), mass)
    q = np.linspace(0, 2 * np.pi, 721)
    tau = holding_torque(q, joint_axis=a, up=u, first_moment=mass * (np.array(com) - point))
    assert np.isclose(chk.gravity_torque_amplitude, np.max(np.abs(tau)), rtol=1e-4, atol=1e-9)
    assert 0.0 <= chk.residual_fraction <= 1.0 + 1e-12


def test_gravity_free_check_bad_input():
    with pytest.raises(ValueError, match="`up`"):
        gravity_free_check([0, 0, 2], AXIS, [0, 0, 0], [1, 0, 0], 1.0)
    with pytest.raises(ValueError, match="`joint_axis`"):
        gravity_free_check(UP, [0, 0, 0], [0, 0, 0], [1, 0, 0], 1.0)
    with pytest.raises(ValueError, match="`mass`"):
        gravity_free_check(UP, AXIS, [0, 0, 0], [1, 0, 0], -1.0)
    with pytest.raises(ValueError, match="`center_of_mass`"):
        gravity_free_check(UP, AXIS, [0, 0, 0], [[1, 0, 0]], 1.0)


# --------------------------------------------------------------------------------------------
# Bad input
# --------------------------------------------------------------------------------------------


def test_velocities_of_one_sign_are_refused(plan):
    joint = symmetric_joint()
    tau = joint.measure(plan.q, plan.velocity, plan.acceleration)
    fwd = plan.velocity > 0
    with pytest.raises(InsufficientDataError, match="`velocity`.*both directions"):
        fit_friction(plan.velocity[fwd], torque=tau[fwd], model="coulomb-viscous")


def test_too_few_distinct_speeds_for_stribeck():
    plan2 = excitation_trajectory(
        -1.0, 1.0, [0.1, 0.5], max_acceleration=2.0, sample_rate=100.0, cruise_time=2.0
    )
    cru = plan2.cruising
    joint = symmetric_joint()
    tau = joint.measure(plan2.q[cru], plan2.velocity[cru], plan2.acceleration[cru])
    with pytest.raises(InsufficientDataError, match="at least 6 distinct velocities.*got 4"):
        fit_friction(plan2.velocity[cru], torque=tau, model="stribeck")
    with pytest.raises(InsufficientDataError, match="distinct positive speeds"):
        fit_friction(plan2.velocity[cru], torque=tau, model="asymmetric-stribeck")
    # Two speeds are enough for Coulomb + viscous + offset.
    fit = fit_friction(plan2.velocity[cru], torque=tau, model="coulomb-viscous")
    assert fit.residual_rms < 1e-6


def test_zero_acceleration_column_is_named(plan):
    cru = plan.cruising
    joint = symmetric_joint()
    tau = joint.measure(plan.q[cru], plan.velocity[cru], plan.acceleration[cru])
    with pytest.raises(InsufficientDataError, match="`inertia`"):
        fit_friction(
            plan.velocity[cru], torque=tau, model="stribeck", acceleration=plan.acceleration[cru]
        )


def test_fit_friction_argument_errors(plan):
    v = plan.velocity
    with pytest.raises(ValueError, match="`model`"):
        fit_friction(v, torque=v, model="lugre")
    with pytest.raises(ValueError, match="`torque`"):
        fit_friction(v, torque=v[:-1])
    with pytest.raises(ValueError, match="`acceleration`"):
        fit_friction(v, torque=v, acceleration=v[:-1])
    with pytest.raises(ValueError, match="`velocity`"):
        fit_friction(np.where(v > 0, np.nan, v), torque=v)
    with pytest.raises(ValueError, match="`exponent`"):
        fit_friction(v, torque=v, model="coulomb-viscous", exponent=2.0)
    with pytest.raises(ValueError, match="`min_speed`"):
        fit_friction(v, torque=v, min_speed=0.0)


def test_unresolved_stribeck_dip_warns():
    # Coulomb + viscous data: no dip to find, the Stribeck velocity is not determined.
    v = np.concatenate([np.geomspace(0.01, 1, 60), -np.geomspace(0.01, 1, 60)])
    tau = CoulombViscousFriction(3.0, 2.0).evaluate(v)
    tau = tau + np.random.default_rng(3).normal(0, 0.01, v.size)
    with pytest.warns(GravdirWarning, match="do not resolve the Stribeck dip"):
        fit_friction(v, torque=tau, model="stribeck", exponent=2.0)


def test_not_gravity_free_pose_is_refused(plan, gravity):
    joint = symmetric_joint()
    free = joint.measure(plan.q, plan.velocity, plan.acceleration)
    loaded = joint.measure(plan.q, plan.velocity, plan.acceleration, gravity_torque=gravity)
    fit0 = fit_friction(plan.velocity, torque=free, acceleration=plan.acceleration, exponent=2.0)
    tilted = gravity_free_check(UP, AXIS, [0, 0, 0], [0.3, 0, 0.1], 5.0)
    with pytest.raises(DegenerateGeometryError, match="`free_pose`.*not gravity-free"):
        load_dependent_friction(
            fit0,
            plan.velocity,
            torque=loaded,
            gravity_torque=gravity,
            acceleration=plan.acceleration,
            free_pose=tilted,
        )
    with pytest.raises(InsufficientDataError, match="`gravity_torque`"):
        load_dependent_friction(
            fit0,
            plan.velocity,
            torque=loaded,
            gravity_torque=0 * gravity,
            acceleration=plan.acceleration,
        )
    with pytest.raises(ValueError, match="`acceleration`"):
        load_dependent_friction(fit0, plan.velocity, torque=loaded, gravity_torque=gravity)
    fit_l = fit_friction(
        plan.velocity,
        torque=loaded,
        acceleration=plan.acceleration,
        gravity_torque=gravity,
        exponent=2,
    )
    with pytest.raises(ValueError, match="`free_fit`"):
        load_dependent_friction(
            fit_l,
            plan.velocity,
            torque=loaded,
            gravity_torque=gravity,
            acceleration=plan.acceleration,
        )


# --------------------------------------------------------------------------------------------
# Joint-by-joint driver
# --------------------------------------------------------------------------------------------


def test_arm_table_joint_by_joint(plan, gravity):
    rng = np.random.default_rng(7)
    runs = {}
    poses = {}
    mus = {"J1": 0.01, "J2": 0.03, "J3": 0.05}
    for k, (name, mu) in enumerate(mus.items()):
        joint = SyntheticFrictionJoint(
            coulomb_positive=2.0 + k, load_coefficient=mu, inertia=0.3 + 0.2 * k
        )
        g = (1.0 + 0.5 * k) * gravity
        free = joint.measure(plan.q, plan.velocity, plan.acceleration, rng=rng)
        loaded = joint.measure(plan.q, plan.velocity, plan.acceleration, gravity_torque=g, rng=rng)
        runs[name] = (
            FrictionRun(plan.velocity, torque=free, acceleration=plan.acceleration),
            FrictionRun(
                plan.velocity, torque=loaded, acceleration=plan.acceleration, gravity_torque=g
            ),
        )
        poses[name] = gravity_free_check(UP, UP, [0, 0, 0], [0.3, 0.1, 0.2], 3.0)
    table = identify_arm_friction(runs, model="asymmetric-stribeck", free_poses=poses)
    assert list(table) == ["J1", "J2", "J3"]
    for name, mu in mus.items():
        assert abs(table[name].load.load_coefficient - mu) < 1e-9
        assert table[name].free_pose is poses[name]
        assert abs(table[name].free.parameter("coulomb_positive") - (2.0 + list(mus).index(name)))
    with pytest.raises(TypeError):
        table["J4"] = table["J1"]  # type: ignore[index]
    poses["J2"] = gravity_free_check(UP, AXIS, [0, 0, 0], [0.3, 0, 0], 3.0)
    with pytest.raises(DegenerateGeometryError, match="joint 'J2'.*`free_pose`"):
        identify_arm_friction(runs, model="asymmetric-stribeck", free_poses=poses)
    with pytest.raises(ValueError, match="`loaded.gravity_torque`"):
        identify_joint_friction(runs["J1"][0], runs["J1"][0])
    with pytest.raises(ValueError, match="`runs"):
        identify_arm_friction({})


# --------------------------------------------------------------------------------------------
# Iteration limit and the result contract
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("max_iter", [1, 2])
def test_search_at_its_limit_warns(plan, max_iter):
    joint = SyntheticFrictionJoint(noise_std=0.1)
    tau = joint.measure(plan.q, plan.velocity, plan.acceleration, rng=np.random.default_rng(5))
    with pytest.warns(ConvergenceWarning, match="`max_iter`"):
        fit = fit_friction(
            plan.velocity,
            torque=tau,
            model="asymmetric-stribeck",
            acceleration=plan.acceleration,
            max_iter=max_iter,
        )
    assert fit.converged is False
    assert fit.n_iter == max_iter
    assert "not converged" in repr(fit)
    full = fit_friction(
        plan.velocity, torque=tau, model="asymmetric-stribeck", acceleration=plan.acceleration
    )
    assert full.converged is True and 1 <= full.n_iter < 200
    runs = (
        FrictionRun(plan.velocity, torque=tau, acceleration=plan.acceleration),
        FrictionRun(
            plan.velocity, torque=tau, acceleration=plan.acceleration, gravity_torque=0.5 + 0 * tau
        ),
    )
    with pytest.warns(ConvergenceWarning):
        res = identify_joint_friction(*runs, model="asymmetric-stribeck", max_iter=max_iter)
    assert res.free.converged is False and res.free.n_iter == max_iter
    with pytest.raises(ValueError, match="`max_iter`"):
        fit_friction(plan.velocity, torque=tau, max_iter=0)


def test_coulomb_viscous_has_no_search(plan):
    joint = symmetric_joint(static_positive=3.0, static_negative=3.0)
    tau = joint.measure(plan.q, plan.velocity, plan.acceleration)
    fit = fit_friction(plan.velocity, torque=tau, model="coulomb-viscous", max_iter=1)
    assert fit.converged is True and fit.n_iter == 0


def _arrays(result):
    """Every ndarray a result holds, nested results included."""
    out = []
    for value in vars(result).values():
        if isinstance(value, np.ndarray):
            out.append(value)
        elif isinstance(value, tuple):
            out.extend(a for v in value if hasattr(v, "to_dict") for a in _arrays(v))
        elif hasattr(value, "to_dict"):
            out.extend(_arrays(value))
    return out


def test_result_contract(plan, gravity):
    joint = SyntheticFrictionJoint(noise_std=0.05)
    rng = np.random.default_rng(13)
    free = joint.measure(plan.q, plan.velocity, plan.acceleration, rng=rng)
    loaded = joint.measure(
        plan.q, plan.velocity, plan.acceleration, gravity_torque=gravity, rng=rng
    )
    pose = gravity_free_check(UP, UP, [0, 0, 0], [0.3, 0.1, 0.2], 3.0)
    runs = {
        "J1": (
            FrictionRun(plan.velocity, torque=free, acceleration=plan.acceleration),
            FrictionRun(
                plan.velocity, torque=loaded, acceleration=plan.acceleration, gravity_torque=gravity
            ),
        )
    }
    table = identify_arm_friction(runs, model="asymmetric-stribeck", free_poses={"J1": pose})
    joint_fit = table["J1"]
    results = [
        plan,
        pose,
        joint_fit.free,
        joint_fit.load,
        joint_fit,
        table,
        runs["J1"][1],
        joint_fit.free.model,
        joint_fit.model,
        CoulombViscousFriction(1.0, 2.0),
        StribeckFriction(2.0, 3.0, 0.04, 1.5),
    ]
    types = (
        ExcitationPlan,
        GravityFreeCheck,
        FrictionFit,
        LoadFrictionFit,
        JointFrictionFit,
        ArmFrictionFit,
        FrictionRun,
        AsymmetricStribeckFriction,
        LoadDependentFriction,
        CoulombViscousFriction,
        StribeckFriction,
    )
    for result, kind in zip(results, types, strict=True):
        assert isinstance(result, kind)
        for arr in _arrays(result):
            assert not arr.flags.writeable, kind
        copy = pickle.loads(pickle.dumps(result))
        assert copy == result, kind
        assert not copy != result  # noqa: SIM202
        assert (result == 3) is False
        json.dumps(result.to_dict())
        assert kind.__name__ in repr(result)
    assert "N·m" in repr(joint_fit.free) and "rad/s" in repr(joint_fit.free)
    assert "N·m·s/rad" in repr(joint_fit.free.model)
    assert "±" in repr(joint_fit.load)
    # Value equality: a refit of the same data equals the first fit, other data do not.
    again = identify_arm_friction(runs, model="asymmetric-stribeck", free_poses={"J1": pose})
    assert again == table
    assert table["J1"].free != fit_friction(plan.velocity, torque=free, model="stribeck")


def test_friction_run_copies_the_callers_arrays(plan):
    v = plan.velocity.copy()
    tau = np.ones_like(v)
    run = FrictionRun(v, torque=tau)
    v[:] = 0.0
    tau[:] = 5.0
    assert np.array_equal(run.velocity, plan.velocity)
    assert np.all(run.torque == 1.0)
    assert not run.velocity.flags.writeable
    with pytest.raises(ValueError, match="`torque`"):
        FrictionRun(v, torque=tau[:-1])
    with pytest.raises(ValueError, match="`velocity`"):
        FrictionRun(np.ones((2, 3)), torque=np.ones((2, 3)))


# --------------------------------------------------------------------------------------------
# Cross-check with the sweep fit's load-dependent column
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("noise", [0.0, 0.05])
def test_load_coefficient_agrees_with_sweep_fit(noise):
    from gravdir.sweep import fit_sweep

    # Constant-speed passes well above v_s, symmetric viscous friction: the sweep's columns
    # (offset, sin q, cos q, sgn v, v, sgn v |A sin(q + phi)|) describe the loaded run exactly.
    plan = excitation_trajectory(
        -1.5, 1.5, [0.3, 0.5, 0.8], max_acceleration=3.0, sample_rate=100.0
    )
    cru = plan.cruising
    q, v = plan.q[cru], plan.velocity[cru]
    a = plan.acceleration[cru]
    g = holding_torque(q, joint_axis=AXIS, up=UP, first_moment=[2.0, 0.0, 0.5])
    joint = SyntheticFrictionJoint(
        viscous_negative=2.0, offset=0.25, noise_std=noise, load_coefficient=0.04
    )
    rng = np.random.default_rng(11)
    free = joint.measure(q, v, a, rng=rng)
    loaded = joint.measure(q, v, a, gravity_torque=g, rng=rng)
    sweep = fit_sweep(q, velocity=v, torque=loaded, min_speed=0.1, load_friction="abs")
    fit0 = fit_friction(v, torque=free, model="coulomb-viscous")
    # The subtraction of CN 107423515 B, claim 4, with the gravity torque from the sweep fit.
    g_sweep = float(sweep.amplitude) * np.sin(q + float(sweep.phase))
    res = load_dependent_friction(fit0, v, torque=loaded, gravity_torque=g_sweep)
    mu_sweep = float(sweep.load_coefficient)
    if noise == 0.0:
        assert abs(res.load_coefficient - 0.04) < 1e-6 * 0.04
        assert abs(mu_sweep - 0.04) < 1e-6 * 0.04
    else:
        (i,) = [k for k, n in enumerate(sweep.column_names) if n.startswith("load")]
        sd_sweep = float(np.sqrt(sweep.covariance[..., i, i]))
        combined = np.hypot(res.load_coefficient_std, sd_sweep)
        assert abs(res.load_coefficient - mu_sweep) < 3 * combined
        assert abs(res.load_coefficient - 0.04) < 0.05 * 0.04


# --------------------------------------------------------------------------------------------
# Input checks, caps and numerics at any scale (issue 11)
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def short_runs():
    """A short plan (178 samples) with noisy free and loaded torque of one joint."""
    p = excitation_trajectory(
        -0.6, 0.6, [0.01, 0.05, 0.2, 0.6], max_acceleration=3.0, sample_rate=50.0, cruise_time=0.3
    )
    rng = np.random.default_rng(11)
    joint = SyntheticFrictionJoint(offset=0.2, noise_std=0.02)
    g = holding_torque(p.q, joint_axis=AXIS, up=UP, first_moment=FIRST_MOMENT)
    free = joint.measure(p.q, p.velocity, p.acceleration, rng=rng)
    loaded = joint.measure(p.q, p.velocity, p.acceleration, gravity_torque=g, rng=rng)
    return p.velocity, p.acceleration, g, free, loaded


@pytest.mark.parametrize("scale", [1e154, 1e200, 1e300, 1e-300])
def test_fit_friction_at_extreme_torque_scales(short_runs, scale):
    # Was: once |torque| passed about 1e154 the residuals and the covariance became inf/NaN
    # with a RuntimeWarning only. The fit now runs in scaled units: the estimates and standard
    # errors scale with the torque, the load coefficient does not, and a covariance that leaves
    # the float range is infinite with a warning, never zero or NaN.
    v, a, g, _, loaded = short_runs
    ref = fit_friction(v, torque=loaded, acceleration=a, gravity_torque=g, exponent=2.0)
    with np.errstate(all="raise"), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = fit_friction(
            v, torque=loaded * scale, acceleration=a, gravity_torque=g * scale, exponent=2.0
        )
    unit = np.array([scale if n != "load_coefficient" else 1.0 for n in fit.parameter_names])
    unit[fit.parameter_names.index("stribeck_velocity")] = 1.0
    # Scaling by 10**k rounds every sample once: the figures agree to round-off amplified by
    # the conditioning of the fit.
    assert np.allclose(fit.parameters / unit, ref.parameters, rtol=1e-6)
    assert np.allclose(fit.parameters_std / unit, ref.parameters_std, rtol=1e-6)
    assert np.isclose(fit.residual_rms / scale, ref.residual_rms, rtol=1e-6)
    assert np.all(np.isfinite(fit.residuals)) and np.all(fit.parameters_std > 0)
    assert not np.isnan(fit.parameters_cov).any()
    if np.isfinite(fit.parameters_cov).all():
        assert np.allclose(fit.parameters_cov / np.outer(unit, unit), ref.parameters_cov, rtol=1e-6)
        assert not caught
    else:
        assert np.all(fit.parameters_cov == np.inf)
        assert any("`parameters_cov` is returned as infinite" in str(w.message) for w in caught)


def test_fit_friction_is_exactly_equivariant_under_powers_of_two(short_runs):
    # Data beyond 2**±64 are brought to order one by an exact power of two: the fit of
    # torque * 2**k is the fit of torque * 2**100, scaled by 2**(k - 100), to the last bit.
    v, a, g, _, loaded = short_runs
    ref = fit_friction(
        v, torque=loaded * 2.0**100, acceleration=a, gravity_torque=g * 2.0**100, exponent=2.0
    )
    for k in (511, 665, 997, -997):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", GravdirWarning)
            fit = fit_friction(
                v, torque=loaded * 2.0**k, acceleration=a, gravity_torque=g * 2.0**k, exponent=2.0
            )
        shift = np.array(
            [
                0 if n in ("load_coefficient", "stribeck_velocity") else k - 100
                for n in fit.parameter_names
            ]
        )
        assert np.array_equal(fit.parameters, np.ldexp(ref.parameters, shift))
        assert np.array_equal(fit.parameters_std, np.ldexp(ref.parameters_std, shift))
        assert np.array_equal(fit.residuals, np.ldexp(ref.residuals, k - 100))


def test_fit_friction_with_one_sample_at_1e300(short_runs):
    # Was: one sample of 1e300 among torques of a few N·m gave inf/NaN residuals and covariance.
    v, a, _, free, _ = short_runs
    torque = free.copy()
    torque[50] = 1e300
    with np.errstate(all="raise"), pytest.warns(GravdirWarning, match="`parameters_cov`"):
        fit = fit_friction(v, torque=torque, model="coulomb-viscous", acceleration=a)
    assert np.all(np.isfinite(fit.parameters)) and np.all(np.isfinite(fit.residuals))
    assert np.isfinite(fit.residual_rms) and fit.residual_rms > 1e297
    assert np.all(np.isfinite(fit.parameters_std)) and np.all(fit.parameters_std > 1e295)
    assert np.all(fit.parameters_cov == np.inf)


def test_fit_friction_scales_velocity_and_acceleration(short_runs):
    v, a, _, free, _ = short_runs
    ref = fit_friction(v, torque=free, acceleration=a, exponent=2.0)
    s = 2.0**700
    with np.errstate(all="raise"), pytest.warns(GravdirWarning, match="`parameters_cov`"):
        fit = fit_friction(v * s, torque=free, acceleration=a * s, exponent=2.0, min_speed=1e-3 * s)
    unit = {"viscous": 1 / s, "stribeck_velocity": s, "inertia": 1 / s}
    for name in fit.parameter_names:
        f = unit.get(name, 1.0)
        assert np.isclose(fit.parameter(name) / f, ref.parameter(name), rtol=1e-9), name
    # Ratios that leave the float range are refused, naming the arguments.
    with pytest.raises(ValueError, match="`viscous` beyond it"):
        fit_friction(v * 1e-300, torque=free * 1e300, min_speed=1e-306, model="coulomb-viscous")


def test_fit_friction_bit_identical_on_ordinary_data(short_runs):
    # Data of ordinary size are not rescaled at all: a power-of-two factor inside 2**±64
    # changes every figure by exactly that factor.
    v, a, g, _, loaded = short_runs
    ref = fit_friction(v, torque=loaded, acceleration=a, gravity_torque=g, exponent=2.0)
    fit = fit_friction(
        v, torque=loaded * 2.0**-10, acceleration=a, gravity_torque=g * 2.0**-10, exponent=2.0
    )
    assert np.allclose(fit.parameters[:4], ref.parameters[:4] * 2.0**-10, rtol=1e-12)
    assert fit.parameters_std.shape == ref.parameters.shape
    assert np.array_equal(ref.parameters_std, np.sqrt(np.diag(ref.parameters_cov)))


def test_fit_friction_refuses_bad_arguments(short_runs):
    v, a, _, free, _ = short_runs
    # A column vector is not a series: no silent broadcasting.
    with pytest.raises(ValueError, match="`torque`"):
        fit_friction(v, torque=free[:, None])
    # Numeric strings and booleans are not numbers.
    with pytest.raises(ValueError, match="`velocity`"):
        fit_friction(v.astype(str), torque=free)
    with pytest.raises(ValueError, match="`exponent`"):
        fit_friction(v, torque=free, exponent="2.0")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`min_speed`"):
        fit_friction(v, torque=free, min_speed="0.001")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`max_iter`"):
        fit_friction(v, torque=free, max_iter=True)
    with pytest.raises(ValueError, match="`max_iter`"):
        fit_friction(v, torque=free, max_iter="100")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`model`"):
        fit_friction(v, torque=free, model=np.array(["stribeck"]))  # type: ignore[arg-type]
    # Ranges: the iteration cap, the exponent box, the speed resolution.
    with pytest.raises(ValueError, match="`max_iter` to be an integer from 1 to 10000"):
        fit_friction(v, torque=free, max_iter=10**12)
    with pytest.raises(ValueError, match="`exponent` from 0.25 to 5"):
        fit_friction(v, torque=free, exponent=1e300)
    with pytest.raises(ValueError, match="`speed_resolution` from 1e-12 to 1"):
        fit_friction(v, torque=free, speed_resolution=1e-300)


def test_load_dependent_friction_needs_ten_loaded_samples(short_runs):
    # Was: one sample above min_speed gave mu with rms 1e-16 and no warning.
    v, a, g, free, loaded = short_runs
    fit0 = fit_friction(v, torque=free, model="coulomb-viscous")
    one = np.array([0.5])
    torque_one = fit0.predict(one) + np.array([20.0]) * 1.03
    with pytest.raises(InsufficientDataError, match="10 or more samples.*got 1"):
        load_dependent_friction(fit0, one, torque=torque_one, gravity_torque=np.array([20.0]))
    moving = np.flatnonzero(np.abs(v) >= 1e-3)
    for n, ok in ((9, False), (10, True)):
        idx = moving[:n]
        if ok:
            res = load_dependent_friction(fit0, v[idx], torque=loaded[idx], gravity_torque=g[idx])
            assert res.mask.sum() == 10 and res.load_coefficient_std > 0
        else:
            with pytest.raises(InsufficientDataError, match="`gravity_torque` non-zero at 10"):
                load_dependent_friction(fit0, v[idx], torque=loaded[idx], gravity_torque=g[idx])


def test_load_dependent_friction_at_extreme_scales(short_runs):
    v, a, g, free, loaded = short_runs
    fit0 = fit_friction(v, torque=free, acceleration=a, exponent=2.0)
    ref = load_dependent_friction(fit0, v, torque=loaded, gravity_torque=g, acceleration=a)
    with np.errstate(all="raise"):
        # The gravity torque 1e-5 as large: mu 1e5 as large, with the same relative error.
        small = load_dependent_friction(
            fit0, v, torque=loaded - g + g * 1e-5, gravity_torque=g * 1e-5, acceleration=a
        )
        # A loaded run 1e300 times faster than the free one: finite, never NaN.
        fast = load_dependent_friction(
            fit0, v * 1e300, torque=loaded, gravity_torque=g, acceleration=a
        )
    assert np.isclose(small.load_coefficient, ref.load_coefficient * 1e5, rtol=1e-9)
    assert np.isclose(small.load_coefficient_std, ref.load_coefficient_std * 1e5, rtol=1e-9)
    assert np.isfinite([fast.load_coefficient, fast.load_coefficient_std, fast.residual_rms]).all()
    assert fast.load_coefficient_std > 0
    # Both runs 1e200 times larger: the free fit's covariance is infinite, so the free fit's
    # share of the error is bounded (with a warning) -- larger than before, never smaller.
    with pytest.warns(GravdirWarning):
        fit_big = fit_friction(v, torque=free * 1e200, acceleration=a, exponent=2.0)
    with pytest.warns(GravdirWarning, match="covariance of `free_fit` is infinite"):
        big = load_dependent_friction(
            fit_big, v, torque=loaded * 1e200, gravity_torque=g * 1e200, acceleration=a
        )
    assert np.isclose(big.load_coefficient, ref.load_coefficient, rtol=1e-9)
    assert ref.load_coefficient_std <= big.load_coefficient_std < np.inf


def test_excitation_trajectory_bounds_its_work():
    # Was: repeats=10**300 ran 31 s then raised MemoryError; a 1e12 Hz rate asked for 183 TiB.
    start = time.perf_counter()
    with pytest.raises(ValueError, match="`repeats` to be an integer from 1 to 1000"):
        excitation_trajectory(
            0.0, 1.0, [0.1], max_acceleration=1.0, sample_rate=100.0, repeats=10**300
        )
    with pytest.raises(ValueError, match=r"at most 5000000 samples.*`sample_rate`=1e\+12 Hz"):
        excitation_trajectory(
            -1.2, 1.2, SPEEDS, max_acceleration=2.0, sample_rate=1e12, cruise_time=2.0
        )
    with pytest.raises(ValueError, match="at most 10000 passes"):
        excitation_trajectory(
            0.0, 1.0, np.full(101, 0.1), max_acceleration=1.0, sample_rate=100.0, repeats=100
        )
    with pytest.raises(ValueError, match="`sample_rate` at least one sample per plan duration"):
        excitation_trajectory(0.0, 1.0, [0.1], max_acceleration=1.0, sample_rate=1e-300)
    with pytest.raises(ValueError, match="at most 5000000 samples"):
        excitation_trajectory(0.0, 1.0, [5e-324], max_acceleration=1.0, sample_rate=100.0)
    assert time.perf_counter() - start < 1.0
    from gravdir.friction._plan import MAX_PASSES, MAX_PLAN_SAMPLES, MAX_REPEATS

    assert (MAX_PLAN_SAMPLES, MAX_PASSES, MAX_REPEATS) == (5_000_000, 10_000, 1000)


def test_excitation_range_in_degrees_is_refused():
    with pytest.raises(ValueError, match="`q_max` in radians.*degrees?"):
        excitation_trajectory(0.0, 90.0, [0.1], max_acceleration=1.0, sample_rate=100.0)
    with pytest.raises(ValueError, match="`q_min` in radians.*degrees?"):
        excitation_trajectory(-60.0, 0.0, [0.1], max_acceleration=1.0, sample_rate=100.0)
    with pytest.raises(ValueError, match="`q_max` in radians, got a span.*degrees?"):
        excitation_trajectory(-7.0, 7.0, [0.1], max_acceleration=1.0, sample_rate=10.0)
    # Two turns of range in radians are accepted.
    plan = excitation_trajectory(-6.0, 6.0, [0.5], max_acceleration=1.0, sample_rate=10.0)
    assert plan.q.max() == 6.0
    with pytest.raises(ValueError, match="`q` in radians.*degrees?"):
        holding_torque(
            np.linspace(-60.0, 60.0, 9), joint_axis=AXIS, up=UP, first_moment=FIRST_MOMENT
        )


def test_numeric_strings_and_bools_are_refused():
    cases = [
        (
            lambda: excitation_trajectory("0", 1.0, [0.1], max_acceleration=1.0, sample_rate=100.0),
            "`q_min`",
        ),
        (
            lambda: excitation_trajectory(
                False, 1.0, [0.1], max_acceleration=1.0, sample_rate=100.0
            ),
            "`q_min`",
        ),
        (
            lambda: excitation_trajectory(
                0.0, 1.0, ["0.1"], max_acceleration=1.0, sample_rate=100.0
            ),
            "`speeds`",
        ),
        (
            lambda: excitation_trajectory(0.0, 1.0, [0.1], max_acceleration="1", sample_rate=100.0),
            "`max_acceleration`",
        ),
        (lambda: StribeckFriction("2.0", 3.0, 0.04, 1.5), "`coulomb`"),
        (lambda: CoulombViscousFriction(True, 1.5), "`coulomb`"),
        (
            lambda: LoadDependentFriction(CoulombViscousFriction(1.0, 1.0), "0.1"),
            "`load_coefficient`",
        ),
        (lambda: gravity_free_check(UP, AXIS, [0, 0, 0], [1, 0, 0], mass="5"), "`mass`"),
        (
            lambda: gravity_free_check(UP, AXIS, [0, 0, 0], [1, 0, 0], 5.0, tolerance=True),
            "`tolerance`",
        ),
        (lambda: SyntheticFrictionJoint(gain="1"), "`gain`"),
        (lambda: SyntheticFrictionJoint(inertia=True), "`inertia`"),
        (lambda: FrictionRun(["0.1", "-0.1"], torque=[1.0, -1.0]), "`velocity`"),
    ]
    for call, name in cases:
        with pytest.raises(ValueError, match=name):
            call()


def test_friction_run_checks_in_its_constructor(plan):
    # Was: a FrictionRun took anything and failed only at identification.
    v = plan.velocity
    with pytest.raises(ValueError, match="`torque`"):
        FrictionRun(v, torque=v[:, None])
    with pytest.raises(ValueError, match="`acceleration`"):
        FrictionRun(v, torque=v, acceleration=np.where(v > 0, np.nan, v))
    with pytest.raises(ValueError, match="`gravity_torque`"):
        FrictionRun(v, torque=v, gravity_torque=v[:-1])
    with pytest.raises(ValueError, match="`velocity` to hold at least one sample"):
        FrictionRun(np.zeros(0), torque=np.zeros(0))
    with pytest.raises(ValueError, match="`free` to be a FrictionRun"):
        identify_joint_friction("free", FrictionRun(v, torque=v, gravity_torque=v))  # type: ignore[arg-type]
    run = FrictionRun(v, torque=v, gravity_torque=v)
    with pytest.raises(ValueError, match="`free_poses` to map joint 1 to a GravityFreeCheck"):
        identify_arm_friction({1: (FrictionRun(v, torque=v), run)}, free_poses={1: "free"})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="`free_poses` to name joints of `runs`"):
        identify_arm_friction({1: (FrictionRun(v, torque=v), run)}, free_poses={2: None})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="`free_pose` to be a GravityFreeCheck"):
        load_dependent_friction(
            fit_friction(v, torque=np.sign(v) + v, model="coulomb-viscous"),
            v,
            torque=v,
            gravity_torque=v,
            free_pose="free",  # type: ignore[arg-type]
        )


def test_identify_arm_friction_result_pickles(short_runs):
    # Was: the table held a mappingproxy and did not pickle.
    v, a, g, free, loaded = short_runs
    runs = {
        "J1": (
            FrictionRun(v, torque=free, acceleration=a),
            FrictionRun(v, torque=loaded, acceleration=a, gravity_torque=g),
        ),
        2: (
            FrictionRun(v, torque=free, acceleration=a),
            FrictionRun(v, torque=loaded, acceleration=a, gravity_torque=g),
        ),
    }
    table = identify_arm_friction(runs, model="coulomb-viscous")
    copy = pickle.loads(pickle.dumps(table))
    assert copy == table and list(copy) == ["J1", 2]
    assert copy["J1"].load.load_coefficient == table["J1"].load.load_coefficient
    json.dumps(copy.to_dict())


def test_errors_of_a_run_name_the_run(short_runs):
    v, a, g, free, loaded = short_runs
    runs = (
        FrictionRun(v, torque=free, acceleration=a),
        FrictionRun(v, torque=loaded, acceleration=a, gravity_torque=g),
    )
    with pytest.raises(ValueError, match="`free` run: Expected `exponent`"):
        identify_joint_friction(*runs, model="coulomb-viscous", exponent=2.0)
    slow = (
        FrictionRun(v, torque=free, acceleration=a),
        FrictionRun(v * 1e-6, torque=loaded, acceleration=a, gravity_torque=g),
    )
    with pytest.raises(InsufficientDataError, match="`loaded` run: Expected `velocity`"):
        identify_joint_friction(*slow, model="coulomb-viscous")


def test_models_and_geometry_survive_extreme_values():
    with np.errstate(all="raise"):
        # A Stribeck dip far beyond the float range: e = 0, no overflow.
        m = StribeckFriction(1.0, 2.0, 1e-300, 1e-300, exponent=5.0)
        assert np.allclose(m.evaluate([1e300, -1.0, 0.0]), [2.0, -1.0, 0.0])
        # A torque beyond the float range is refused, naming the argument.
        with pytest.raises(ValueError, match="`velocity`"):
            CoulombViscousFriction(1.0, 2.0).evaluate(1e308)
        with pytest.raises(ValueError, match="`velocity`"):
            SyntheticFrictionJoint().measure([0.0], [1e308], [0.0])
        # Directions of any length: the verdict does not depend on the scale of `joint_axis`.
        ref = gravity_free_check(UP, AXIS, [0, 0, 0.3], [0.4, 0.1, 0.3], 4.0)
        for s in (1e300, 1e-300):
            chk = gravity_free_check(UP, AXIS * s, [0, 0, 0.3], [0.4, 0.1, 0.3], 4.0)
            assert chk == ref
            tau = holding_torque([0.0, 1.0], joint_axis=AXIS * s, up=UP, first_moment=FIRST_MOMENT)
            assert np.array_equal(
                tau, holding_torque([0.0, 1.0], joint_axis=AXIS, up=UP, first_moment=FIRST_MOMENT)
            )
        far = gravity_free_check(UP, AXIS, [0, 0, 0], [1e300, 0, 0], 1.0)
        assert far.residual_fraction == 1.0 and np.isfinite(far.gravity_torque_amplitude)
        with pytest.raises(ValueError, match="`up`"):
            gravity_free_check(UP * 1e300, AXIS, [0, 0, 0], [1, 0, 0], 1.0)
        with pytest.raises(ValueError, match="`mass`"):
            gravity_free_check(UP, AXIS, [0, 0, 0], [1e200, 0, 0], 1e200)
        with pytest.raises(ValueError, match="`tolerance` below 1"):
            gravity_free_check(UP, AXIS, [0, 0, 0], [1, 0, 0], 1.0, tolerance=1.0)


# ------------------------------------------------------------------- guards for real logs


def _noisy_runs(plan, gravity, seed: int = 5):
    rng = np.random.default_rng(seed)
    joint = SyntheticFrictionJoint(offset=0.2, noise_std=0.02)
    free = joint.measure(plan.q, plan.velocity, plan.acceleration, rng=rng)
    loaded = joint.measure(
        plan.q, plan.velocity, plan.acceleration, gravity_torque=gravity, rng=rng
    )
    return free, loaded


def test_fit_friction_nan_sample_raise_names_the_option_and_omit_drops_it(plan, gravity):
    # Seen to fail: one NaN in a logged torque raised with no way to drop the sample.
    free, _ = _noisy_runs(plan, gravity)
    v, a = np.array(plan.velocity), np.array(plan.acceleration)
    bad = [17, 400, 1203]
    torque = free.copy()
    torque[bad[:2]] = np.nan
    acc = a.copy()
    acc[bad[2]] = np.nan
    with pytest.raises(ValueError, match=r'`torque` to be finite, got 2 NaN.*nan_policy="omit"'):
        fit_friction(v, torque=torque, model="coulomb-viscous", acceleration=acc)
    fit = fit_friction(
        v, torque=torque, model="coulomb-viscous", acceleration=acc, nan_policy="omit"
    )
    keep = np.ones(v.size, dtype=bool)
    keep[bad] = False
    clean = fit_friction(v[keep], torque=free[keep], model="coulomb-viscous", acceleration=a[keep])
    assert fit.n_omitted == 3 and clean.n_omitted == 0
    assert fit.mask.shape == (v.size - 3,)
    np.testing.assert_array_equal(fit.parameters, clean.parameters)
    np.testing.assert_array_equal(fit.residuals, clean.residuals)
    assert "3 omitted (NaN)" in repr(fit)
    # Infinities are faults, refused under both policies.
    torque[5] = -np.inf
    with pytest.raises(ValueError, match="`torque` to be finite, got 1 infinite"):
        fit_friction(v, torque=torque, model="coulomb-viscous", nan_policy="omit")


def test_fit_friction_omit_still_needs_both_directions():
    v = np.array([0.1, 0.2, 0.3, -0.1, -0.2])
    torque = np.array([1.0, 1.1, 1.2, np.nan, np.nan])
    with pytest.raises(InsufficientDataError, match="after omitting 2 sample"):
        fit_friction(v, torque=torque, model="coulomb-viscous", nan_policy="omit")


def test_load_dependent_friction_nan_sample(plan, gravity):
    free, loaded = _noisy_runs(plan, gravity)
    v, a = np.array(plan.velocity), np.array(plan.acceleration)
    fit0 = fit_friction(v, torque=free, model="stribeck", acceleration=a, exponent=2.0)
    g = gravity.copy()
    g[250] = np.nan
    with pytest.raises(ValueError, match=r'`gravity_torque` to be finite.*nan_policy="omit"'):
        load_dependent_friction(fit0, v, torque=loaded, gravity_torque=g, acceleration=a)
    res = load_dependent_friction(
        fit0, v, torque=loaded, gravity_torque=g, acceleration=a, nan_policy="omit"
    )
    keep = np.arange(v.size) != 250
    ref = load_dependent_friction(
        fit0, v[keep], torque=loaded[keep], gravity_torque=gravity[keep], acceleration=a[keep]
    )
    assert res.n_omitted == 1 and ref.n_omitted == 0
    assert res.load_coefficient == ref.load_coefficient
    assert res.load_friction.shape == (v.size - 1,) and "1 omitted (NaN)" in repr(res)


def test_friction_run_omits_nan_samples_for_the_identification(plan, gravity):
    free, loaded = _noisy_runs(plan, gravity)
    v, a = np.array(plan.velocity), np.array(plan.acceleration)
    logged = loaded.copy()
    logged[[30, 31]] = np.nan
    with pytest.raises(ValueError, match=r'`torque` to be finite.*nan_policy="omit"'):
        FrictionRun(v, torque=logged, acceleration=a, gravity_torque=gravity)
    run = FrictionRun(v, torque=logged, acceleration=a, gravity_torque=gravity, nan_policy="omit")
    assert run.n_omitted == 2 and run.velocity.size == v.size - 2
    assert "2 omitted (NaN)" in repr(run) and run.to_dict()["n_omitted"] == 2
    assert pickle.loads(pickle.dumps(run)) == run
    keep = np.ones(v.size, dtype=bool)
    keep[[30, 31]] = False
    ref = FrictionRun(
        v[keep], torque=loaded[keep], acceleration=a[keep], gravity_torque=gravity[keep]
    )
    assert ref.n_omitted == 0 and run != ref  # equal samples, different omission counts
    np.testing.assert_array_equal(run.torque, ref.torque)
    free_run = FrictionRun(v, torque=free, acceleration=a)
    got = identify_joint_friction(free_run, run, model="stribeck", exponent=2.0)
    want = identify_joint_friction(free_run, ref, model="stribeck", exponent=2.0)
    assert got.load.load_coefficient == want.load.load_coefficient
    with pytest.raises(ValueError, match="`nan_policy` to be one of 'raise', 'omit'"):
        FrictionRun(v, torque=free, nan_policy="ignore")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="at least one sample, got none after omitting 2"):
        FrictionRun([np.nan, 0.1], torque=[1.0, np.nan], nan_policy="omit")


# --------------------------------------------------------------------------------------------
# One sample far beyond the others; parameters the data do not determine
# --------------------------------------------------------------------------------------------


def _geometric_speeds():
    v = np.concatenate([np.geomspace(0.005, 1, 40), -np.geomspace(0.005, 1, 40)])
    return v, StribeckFriction(2.0, 3.0, 0.05, 1.5).evaluate(v)


@pytest.mark.parametrize("model", ["stribeck", "coulomb-viscous", "asymmetric-stribeck"])
def test_a_velocity_sample_far_beyond_the_others_is_refused(model):
    # Was: one velocity of 1e300 among speeds of 0.005-1 rad/s raised LinAlgError ("SVD did not
    # converge") for the Stribeck model and fitted a viscous coefficient of 4e-301 +- 4e-301
    # (truth 1.5) for Coulomb + viscous. The speeds used may span at most 2**64.
    v, torque = _geometric_speeds()
    v[26] = 1e300
    with pytest.raises(ValueError, match=r"`velocity` to span at most a factor 2\*\*64.*1e\+300"):
        fit_friction(v, torque=torque, model=model)
    v[26] = 0.005 * 2.0**65
    with pytest.raises(ValueError, match=r"`velocity` to span at most a factor 2\*\*64"):
        fit_friction(v, torque=torque, model=model)
    # Just inside the bound, and below `min_speed`, the sample is taken or left out as before.
    v[26] = 0.005 * 2.0**63
    if model == "coulomb-viscous":
        fit = fit_friction(v, torque=torque, model=model)
        assert np.all(np.isfinite(fit.parameters)) and np.all(np.isfinite(fit.parameters_std))
    v[26] = 1e-300
    assert fit_friction(v, torque=torque, model=model).mask.sum() == v.size - 1


def test_the_load_split_refuses_the_same_velocity_span(short_runs):
    v, a, g, free, loaded = short_runs
    fit0 = fit_friction(v, torque=free, acceleration=a, exponent=2.0)
    bad = v.copy()
    bad[int(np.argmax(np.abs(v)))] = 1e300
    with pytest.raises(ValueError, match=r"`velocity` to span at most a factor 2\*\*64"):
        load_dependent_friction(fit0, bad, torque=loaded, gravity_torque=g, acceleration=a)
    with pytest.raises(ValueError, match=r"`velocity` to span at most a factor 2\*\*64"):
        identify_joint_friction(
            FrictionRun(bad, torque=free, acceleration=a),
            FrictionRun(v, torque=loaded, acceleration=a, gravity_torque=g),
            exponent=2.0,
        )
    # The whole series scaled: the span is unchanged, the load split runs.
    fast = load_dependent_friction(
        fit0, v * 2.0**700, torque=loaded, gravity_torque=g, acceleration=a
    )
    assert np.isfinite(fast.load_coefficient)


@pytest.mark.parametrize("model", ["stribeck", "asymmetric-stribeck"])
@pytest.mark.parametrize("size", [1e20, 1e300])
def test_a_dip_lost_in_round_off_is_refused(short_runs, model, size):
    # Was: a gravity-torque sample of 1e20 or 1e300 among loads of a few N·m left the other
    # samples below the rounding of the largest; the Stribeck search then followed round-off
    # and ended in "Expected every parameter to affect the torque, got none." (no argument
    # named), LinAlgError or a fit, depending on the BLAS kernel.
    v, a, g, _, loaded = short_runs
    bad = g.copy()
    bad[50] = size
    with pytest.raises(InsufficientDataError, match="`torque` to carry a Stribeck dip"):
        fit_friction(v, torque=loaded, model=model, acceleration=a, gravity_torque=bad)
    # Noise-free Coulomb + viscous torque has no dip to search either; its own model fits it.
    speeds, _ = _geometric_speeds()
    exact = CoulombViscousFriction(2.0, 1.5).evaluate(speeds)
    with pytest.raises(InsufficientDataError, match="fit model='coulomb-viscous'"):
        fit_friction(speeds, torque=exact, model=model)
    fit = fit_friction(speeds, torque=exact, model="coulomb-viscous")
    assert np.allclose(fit.parameters, [0.0, 2.0, 1.5], atol=1e-12)


def test_undetermined_parameters_are_named(short_runs):
    # Was: "Expected the data to determine every parameter ..., got a singular information
    # matrix" named no argument and no term.
    v, _, _, free, _ = short_runs
    with pytest.raises(
        InsufficientDataError,
        match=r"`velocity` and `torque` to determine every parameter of the "
        r"'asymmetric-stribeck' model, got nearly dependent terms `",
    ):
        fit_friction(v, torque=free, model="asymmetric-stribeck")


def test_covariance_from_columns_of_any_scale():
    # Was: J^T J of a Jacobian with columns of 1e-300 and 1e300 underflowed to a zero scale
    # ("got none") or overflowed to inf and NaN (LinAlgError). The columns are now scaled
    # before any product: the standard errors are those of the scaled Jacobian, scaled back.
    from gravdir.friction._covariance import delta_method_cov

    rng = np.random.default_rng(8)
    jac0 = rng.normal(size=(50, 3))
    names = ["offset", "coulomb", "viscous"]
    cov0, std0 = delta_method_cov(jac0, 0.04, names, "coulomb-viscous")
    assert np.allclose(cov0, 0.04 * np.linalg.inv(jac0.T @ jac0), rtol=1e-12)
    assert np.array_equal(std0, np.sqrt(np.diag(cov0)))
    factor = np.array([1e-300, 1e300, 1.0])
    with np.errstate(all="raise"):
        cov, std = delta_method_cov(jac0 * factor, 0.04, names, "coulomb-viscous")
    assert np.allclose(std, std0 / factor, rtol=1e-12)
    assert np.all(cov == np.inf)  # a variance of 1e600: infinite throughout, never NaN or 0
