"""Tests of the general gravity estimator against synthetic arms.

The torques come from :class:`gravdir.synthetic.SyntheticArm` (explicit transforms and cross
products); the estimator's inputs (link rotations, axes) come from :mod:`gravdir.kinematics`
built from the same DH table, so a convention error in either cannot cancel out.
"""

from __future__ import annotations

import dataclasses
import json
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gravdir.errors import (
    ConvergenceWarning,
    DegenerateGeometryError,
    GravdirWarning,
    InsufficientDataError,
)
from gravdir.frames import angle_between
from gravdir.general import (
    JointSweep,
    PlannedSweep,
    crlb_up,
    estimate_up,
    joint_sweep_from_chain,
    moment_from_mass_model,
    plan_sweeps,
    planned_sweep_from_chain,
    sweep_samples,
)
from gravdir.kinematics import SerialChain, chain_from_dh, link_frames
from gravdir.sweep import SweepFit, fit_sweep
from gravdir.synthetic.robot import (
    SyntheticArm,
    iiwa_arm,
    random_arm,
    up_from_base_tilt,
    ur5_arm,
)
from gravdir.synthetic.sensors import TorqueSensor, realistic_sensors


def chain_of(arm: SyntheticArm) -> SerialChain:
    return chain_from_dh(arm.dh[:, 0], arm.dh[:, 1], arm.dh[:, 2], arm.dh[:, 3])


def take(fit: SweepFit, i: int) -> SweepFit:
    """Sweep `i` of a batched fit, as a single fit."""
    values = {}
    for f in dataclasses.fields(fit):
        v = getattr(fit, f.name)
        values[f.name] = v[i] if isinstance(v, np.ndarray) else v
    return SweepFit(**values)


def j2_sweeps(
    arm, sensors, config, theta1, offsets, arc, *, fit_kw=None, draws=0, noise_std=0.0, rng=None
):
    """(record, configuration, fit, chain) of J2 swept at J1 = theta1 + offsets.

    With `draws`, the fit is batched over that many copies with white noise `noise_std` added.
    """
    chain = chain_of(arm)
    fit_kw = fit_kw or {"load_friction": "abs"}
    out = []
    for off in offsets:
        c = np.array(config, dtype=float)
        c[0] = theta1 + off
        rec = arm.sweep(1, c, c[1] - arc / 2, c[1] + arc / 2, 0.5, 100.0, sensor=sensors)
        c[1] = rec.q[0]
        tau = rec.torque
        if draws:
            sigma = noise_std
            tau = tau + sigma * rng.standard_normal((draws, rec.q.size))
        fit = fit_sweep(rec.q, tau, rec.velocity, **fit_kw)
        out.append((rec, c, fit, chain))
    return out


def quiet(sensors, *, ripple=False):
    """The sensors without noise (and without gear ripple unless `ripple`)."""
    return [
        dataclasses.replace(s, noise_std=0.0, ripple_amplitude=s.ripple_amplitude * ripple)
        for s in sensors
    ]


# --------------------------------------------------------------------------------------------
# Exactness on noise-free data
# --------------------------------------------------------------------------------------------


@settings(max_examples=40)
@given(
    seed=st.integers(0, 2**31 - 1),
    n_joints=st.integers(3, 7),
    tilt=st.floats(0.0, np.pi),
    azimuth=st.floats(-np.pi, np.pi),
)
def test_noise_free_random_chains_exact(seed, n_joints, tilt, azimuth):
    rng = np.random.default_rng(seed)
    base = random_arm(rng, n_joints)
    dh = np.array(base.dh)
    # J2's axis must not be parallel to J1's (alpha_0 = 0 or pi makes every J2 sweep turn about
    # the J1 axis line, a degenerate plan tested separately).
    if abs(np.sin(dh[0, 3])) < 0.3:
        dh[0, 3] = rng.choice([np.pi / 2, -np.pi / 2])
    up = up_from_base_tilt(tilt, azimuth)
    arm = SyntheticArm(dh=dh, masses=base.masses, coms=base.coms, up=up)
    sensors = [
        TorqueSensor(
            gain=rng.uniform(0.8, 1.2),
            offset=rng.uniform(-1.0, 1.0),
            coulomb=rng.uniform(0.1, 2.0),
            viscous=rng.uniform(0.0, 2.0),
            load_coefficient=rng.uniform(0.0, 0.05),
        )
        for _ in range(n_joints)
    ]
    chain = chain_of(arm)
    config = rng.uniform(-np.pi, np.pi, n_joints)
    rec1 = arm.sweep(0, config, config[0] - 1.5, config[0] + 1.5, 0.5, 100.0, sensor=sensors)
    fit1 = fit_sweep(rec1.q, rec1.torque, rec1.velocity, load_friction="abs")
    theta1 = float(fit1.zeros().unstable)
    c1 = config.copy()
    c1[0] = rec1.q[0]
    sweeps = [joint_sweep_from_chain(chain, c1, 0, fit1)]
    for _, c, fit, _ in j2_sweeps(arm, sensors, config, theta1, (0, np.pi / 2, np.pi), 2.0):
        sweeps.append(joint_sweep_from_chain(chain, c, 1, fit))
    hint = up + rng.normal(0.0, 0.2, 3)  # a rough hint: within ~20 degrees of up
    est = estimate_up(sweeps, up_hint=hint)
    assert float(angle_between(est.up, up)) < 1e-8
    assert est.sign_rule == "hemisphere"
    # The J2 moment is the sensor gain times g (a x m) of the mass model.
    w = sensors[1].gain * moment_from_mass_model(chain, config, 1, arm.masses, arm.coms)
    j2 = est.groups.index(1)
    assert np.allclose(est.moments[j2], w, rtol=0, atol=1e-7 * np.linalg.norm(w))
    assert est.dof == 2 * 4 - 2 * 2 - 2


def test_j1_sweep_adds_nothing_and_alpha_beta_is_exact():
    rng = np.random.default_rng(3)
    arm = ur5_arm(up_from_base_tilt(0.4, 1.0))
    sensors = quiet(realistic_sensors(rng, arm.peak_gravity_torque()))
    config = np.array([0.0, -1.2, 0.8, -1.0, 0.5, 0.0])
    data = j2_sweeps(arm, sensors, config, 0.3, (0, np.pi / 2, np.pi), 2.0)
    j2 = [joint_sweep_from_chain(chain, c, 1, fit) for _, c, fit, chain in data]
    rec1 = arm.sweep(0, config, -1.5, 1.5, 0.5, 100.0, sensor=sensors)
    fit1 = fit_sweep(rec1.q, rec1.torque, rec1.velocity, load_friction="abs")
    c1 = config.copy()
    c1[0] = rec1.q[0]
    j1 = joint_sweep_from_chain(data[0][3], c1, 0, fit1)
    a = estimate_up(j2)
    b = estimate_up([j1, *j2])
    assert float(angle_between(a.up, b.up)) < 1e-10
    assert np.allclose(a.up_cov, b.up_cov, rtol=1e-6)
    # (alpha, beta) reproduce the fitted gravity torque at every delta.
    rec = data[1][0]
    delta = rec.q - j2[1].q_ref
    alpha, beta = j2[1].alpha_beta
    assert np.allclose(
        alpha * np.cos(delta) + beta * np.sin(delta), data[1][2].gravity_torque(rec.q), atol=1e-9
    )


# --------------------------------------------------------------------------------------------
# Sign rules: wall and ceiling mounts
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tilt", "hint"),
    [(np.pi / 2, (1.0, 0.0, 0.0)), (np.pi, (0.0, 0.0, -1.0)), (0.2, (0.0, 0.0, 1.0))],
)
def test_sign_from_hemisphere_wall_and_ceiling(tilt, hint):
    rng = np.random.default_rng(5)
    arm = iiwa_arm(up_from_base_tilt(tilt, 0.0))
    sensors = quiet(realistic_sensors(rng, arm.peak_gravity_torque()))
    config = np.array([0.0, 0.7, 0.0, -1.0, 0.0, 0.5, 0.0])
    data = j2_sweeps(arm, sensors, config, 0.0, (0, np.pi / 2, np.pi), 2.0)
    sweeps = [joint_sweep_from_chain(chain, c, 1, fit) for _, c, fit, chain in data]
    est = estimate_up(sweeps, up_hint=hint)
    assert float(angle_between(est.up, arm.up)) < 1e-8
    assert est.sign_rule == "hemisphere"
    # The opposite hint gives the opposite sign, and the moments flip with it.
    flipped = estimate_up(sweeps, up_hint=-np.asarray(hint))
    assert float(angle_between(flipped.up, -arm.up)) < 1e-8
    assert np.allclose(flipped.moments, -est.moments, atol=1e-8)


def test_sign_from_moment_hint_overrides_hemisphere():
    rng = np.random.default_rng(6)
    arm = ur5_arm(up_from_base_tilt(np.pi, 0.0))  # ceiling mount
    sensors = quiet(realistic_sensors(rng, arm.peak_gravity_torque()))
    config = np.array([0.0, -1.2, 0.8, -1.0, 0.5, 0.0])
    data = j2_sweeps(arm, sensors, config, 0.0, (0, np.pi / 2, np.pi), 2.0)
    chain = data[0][3]
    sweeps = [joint_sweep_from_chain(chain, c, 1, fit) for _, c, fit, _ in data]
    # Rough direction of J2's distal moment in its link frame: toward the distal centre of mass.
    frames = link_frames(chain, config)
    centres = np.einsum("kij,kj->ki", frames.rotations, arm.coms) + frames.origins
    com = np.average(centres[1:], axis=0, weights=arm.masses[1:])
    m_hint = frames.rotations[1].T @ (com - frames.joint_points[1])
    m_hint = m_hint + rng.normal(0.0, 0.1, 3) * np.linalg.norm(m_hint)
    # A wrong hemisphere hint is overridden by the moment hint.
    est = estimate_up(sweeps, up_hint=(0, 0, 1), moment_hints={1: m_hint})
    assert est.sign_rule == "moment hint"
    assert float(angle_between(est.up, arm.up)) < 1e-8
    assert est.sign_margin > 0.5


def test_marginal_sign_warns():
    rng = np.random.default_rng(7)
    arm = iiwa_arm(up_from_base_tilt(np.pi / 2, 0.0))
    sensors = quiet(realistic_sensors(rng, arm.peak_gravity_torque()))
    config = np.array([0.0, 0.7, 0.0, -1.0, 0.0, 0.5, 0.0])
    data = j2_sweeps(arm, sensors, config, 0.0, (0, np.pi / 2, np.pi), 2.0)
    sweeps = [joint_sweep_from_chain(chain, c, 1, fit) for _, c, fit, chain in data]
    with pytest.warns(GravdirWarning, match="marginal"):
        est = estimate_up(sweeps)  # up is horizontal: base +z sits on the boundary
    assert est.sign_margin < 0.05


# --------------------------------------------------------------------------------------------
# Monte Carlo: efficiency and the reported covariance
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "tilt", "config"),
    [
        (ur5_arm, 0.6, [0.0, -np.pi / 2, 0.0, -np.pi / 2, 0.0, 0.0]),
        (iiwa_arm, 2.0, [0.0, 0.5, 0.0, -1.0, 0.0, 0.5, 0.0]),
    ],
)
def test_monte_carlo_attains_crlb(make, tilt, config):
    rng = np.random.default_rng(11)
    arm = make(up_from_base_tilt(tilt, 0.7))
    chain = chain_of(arm)
    sensors = realistic_sensors(rng, arm.peak_gravity_torque())
    draws, arc = 250, np.radians(120.0)
    fit_kw = {"load_friction": "abs", "harmonics": (sensors[1].ripple_order,)}
    data = j2_sweeps(
        arm,
        quiet(sensors, ripple=True),
        config,
        0.4,
        (0, np.pi / 2, np.pi),
        arc,
        fit_kw=fit_kw,
        draws=draws,
        noise_std=sensors[1].noise_std,
        rng=rng,
    )
    ups, reported = [], []
    for d in range(draws):
        sweeps = [joint_sweep_from_chain(chain, c, 1, take(fit, d)) for _, c, fit, _ in data]
        est = estimate_up(sweeps, up_hint=arm.up)
        ups.append(est.up)
        reported.append(np.trace(est.up_cov))
    ups = np.array(ups)
    errors = angle_between(ups, arm.up)
    rms = float(np.sqrt(np.mean(errors**2)))
    plans = [
        PlannedSweep(
            1,
            link_frames(chain, c).rotations[1],
            chain.axes_in_link[1],
            c[1],
            rec.q,
            rec.velocity,
            sensors[1].gain * moment_from_mass_model(chain, c, 1, arm.masses, arm.coms),
            sensors[1].noise_std,
        )
        for rec, c, _, _ in data
    ]
    bound = crlb_up(plans, up_hint=arm.up, load_friction="abs")
    assert 1 / 1.15 < rms / np.radians(bound.up_std_deg) < 1.15
    empirical = float(np.sum(np.var(ups - arm.up, axis=0, ddof=1)))
    assert 1 / 1.15 < np.sqrt(np.mean(reported) / empirical) < 1.15


# --------------------------------------------------------------------------------------------
# Planning
# --------------------------------------------------------------------------------------------


def test_plan_sweeps_reaches_target_and_flags_degenerate_candidates():
    arm = ur5_arm()
    chain = chain_of(arm)
    config = np.array([0.0, -np.pi / 2, 0.0, -np.pi / 2, 0.0, 0.0])
    common = {"masses": arm.masses, "coms": arm.coms, "noise_std": 0.3}
    loose = plan_sweeps(chain, config, target_std=np.radians(0.5), **common)
    tight = plan_sweeps(chain, config, target_std=np.radians(0.05), **common)
    assert loose.reached and tight.reached
    assert loose.bound.up_std_deg <= 0.5 and tight.bound.up_std_deg <= 0.05
    assert (len(tight.sweeps), tight.arc) > (len(loose.sweeps), loose.arc)
    with pytest.warns(GravdirWarning, match="No candidate"):
        hopeless = plan_sweeps(chain, config, target_std=1e-9, **common)
    assert not hopeless.reached
    finite = hopeless.candidates[np.isfinite(hopeless.candidates[:, 3])]
    assert np.radians(hopeless.bound.up_std_deg) == pytest.approx(finite[:, 3].min())
    # On the upright prior two J2 sweeps carry no first-order information (infinite bounds in
    # the table); three do. Two sweeps 180 degrees apart are degenerate at any prior.
    assert np.isinf(hopeless.candidates[hopeless.candidates[:, 0] == 2][:, 3]).all()
    assert np.isfinite(hopeless.candidates[hopeless.candidates[:, 0] == 3][:, 3]).all()
    with pytest.raises(DegenerateGeometryError, match="determine `up`"):
        plan_sweeps(chain, config, target_std=0.1, counts=(2,), spacings=(np.pi,), **common)


def test_crlb_shrinks_with_longer_arcs_and_more_sweeps():
    arm = iiwa_arm()
    chain = chain_of(arm)
    config = np.array([0.0, 0.5, 0.0, -1.0, 0.0, 0.5, 0.0])

    def bound(arc, offsets, up=(0.0, 0.0, 1.0)):
        plans = []
        for off in offsets:
            c = config.copy()
            c[0] = off
            plans.append(
                planned_sweep_from_chain(
                    chain, c, 1, arc, masses=arm.masses, coms=arm.coms, noise_std=0.2
                )
            )
        return np.radians(crlb_up(plans, up_hint=up).up_std_deg)

    three = (0, np.pi / 2, np.pi)
    assert bound(np.radians(150), three) < bound(np.radians(60), three)
    assert bound(np.radians(90), (*three, 3 * np.pi / 2)) < bound(np.radians(90), three)
    tilted = up_from_base_tilt(0.5, 0.3)
    assert bound(np.radians(90), three, tilted) < bound(np.radians(90), (0, 1.6), tilted)
    # Two J2 sweeps tell nothing to first order on an upright base: every J2 sweep then sees
    # the same gravity whatever J1 does, and the information vanishes with the tilt.
    with pytest.raises(DegenerateGeometryError, match="singular Fisher"):
        bound(np.radians(90), (0, 1.6))
    assert bound(np.radians(90), (0, 1.6), up_from_base_tilt(0.01, 0.3)) > 10 * bound(
        np.radians(90), (0, 1.6), up_from_base_tilt(0.1, 0.3)
    )


# --------------------------------------------------------------------------------------------
# Bad input
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def good_sweeps():
    rng = np.random.default_rng(21)
    arm = ur5_arm(up_from_base_tilt(0.5, 0.3))
    sensors = quiet(realistic_sensors(rng, arm.peak_gravity_torque()))
    config = np.array([0.0, -1.2, 0.8, -1.0, 0.5, 0.0])
    data = j2_sweeps(arm, sensors, config, 0.0, (0, np.pi / 2, np.pi), 2.0)
    chain = data[0][3]
    rec1 = arm.sweep(0, config, -1.5, 1.5, 0.5, 100.0, sensor=sensors)
    fit1 = fit_sweep(rec1.q, rec1.torque, rec1.velocity)
    c1 = config.copy()
    c1[0] = rec1.q[0]
    j1 = joint_sweep_from_chain(chain, c1, 0, fit1)
    return [joint_sweep_from_chain(chain, c, 1, fit) for _, c, fit, _ in data], j1, chain


def test_joint_sweep_rejects_bad_records(good_sweeps):
    sweeps, _, _ = good_sweeps
    s = sweeps[0]
    with pytest.raises(ValueError, match="`rotation` to be rotation matrices"):
        JointSweep(1, 1.1 * s.rotation, s.axis, s.q_ref, s.fit)
    with pytest.raises(ValueError, match="proper rotations"):
        JointSweep(1, -s.rotation, s.axis, s.q_ref, s.fit)
    with pytest.raises(ValueError, match=r"`rotation` to have shape \(\.\.\., 3, 3\)"):
        JointSweep(1, np.eye(2), s.axis, s.q_ref, s.fit)
    with pytest.raises(ValueError, match="`axis` to have unit norm"):
        JointSweep(1, s.rotation, [0, 0, 2.0], s.q_ref, s.fit)
    with pytest.raises(ValueError, match=r"`axis` to have shape \(3,\)"):
        JointSweep(1, s.rotation, np.eye(3), s.q_ref, s.fit)
    with pytest.raises(ValueError, match="`joint` to be a non-negative int"):
        JointSweep(-1, s.rotation, s.axis, s.q_ref, s.fit)
    with pytest.raises(ValueError, match="`q_ref` to be a scalar"):
        JointSweep(1, s.rotation, s.axis, [0.0, 1.0], s.fit)
    with pytest.raises(ValueError, match="`q_ref` to be finite"):
        JointSweep(1, s.rotation, s.axis, np.nan, s.fit)
    with pytest.raises(ValueError, match="`fit` to be a SweepFit"):
        JointSweep(1, s.rotation, s.axis, s.q_ref, "fit")
    q = np.tile(np.concatenate([np.linspace(-1, 1, 50), np.linspace(1, -1, 50)]), (2, 1))
    v = np.sign(np.gradient(q, axis=-1))
    batched = fit_sweep(q, np.cos(q) + 0.1 * v, v)
    with pytest.raises(ValueError, match="single sweep"):
        JointSweep(1, s.rotation, s.axis, s.q_ref, batched)
    with pytest.raises(ValueError, match="`group` to be hashable"):
        JointSweep(1, s.rotation, s.axis, s.q_ref, s.fit, group=[1])


def test_estimate_up_rejects_bad_sets(good_sweeps):
    sweeps, j1, chain = good_sweeps
    with pytest.raises(InsufficientDataError, match="at least 2 sweeps"):
        estimate_up(sweeps[:1])
    with pytest.raises(ValueError, match="sequence of JointSweep"):
        estimate_up(sweeps[0])
    with pytest.raises(ValueError, match=r"`sweeps\[1\]` to be a JointSweep"):
        estimate_up([sweeps[0], "x"])
    # Only J1 sweeps: J1 swept at two positions of itself (same group, same axis line).
    j1b = JointSweep(
        0, link_frames(chain, np.r_[1.0, np.zeros(5)]).rotations[0], j1.axis, 1.0, j1.fit
    )
    with pytest.raises(DegenerateGeometryError, match="one-parameter family"):
        estimate_up([j1, j1b])
    with pytest.raises(DegenerateGeometryError, match="only J1"):
        estimate_up([j1, dataclasses.replace(j1, group="other")])
    # One sweep per group.
    with pytest.raises(DegenerateGeometryError, match="single sweep"):
        estimate_up([sweeps[0], dataclasses.replace(sweeps[1], group="b")])
    # J2 at theta1 and theta1 + pi: parallel axes, a one-parameter family.
    with pytest.raises(DegenerateGeometryError, match="θ1 \\+ π"):
        estimate_up([sweeps[0], sweeps[2]])
    # A group mixing joints or axes.
    with pytest.raises(ValueError, match="to sweep one joint"):
        estimate_up([sweeps[0], dataclasses.replace(sweeps[1], joint=2, group=1)])
    other_axis = JointSweep(1, sweeps[1].rotation, [1.0, 0, 0], sweeps[1].q_ref, sweeps[1].fit)
    with pytest.raises(ValueError, match="share one `axis`"):
        estimate_up([sweeps[0], other_axis])
    with pytest.raises(ValueError, match="keys of `moment_hints`"):
        estimate_up(sweeps, moment_hints={7: [1, 0, 0]})
    with pytest.raises(ValueError, match="away from the joint axis"):
        estimate_up(sweeps, moment_hints={1: sweeps[0].axis})
    with pytest.raises(ValueError, match="`up_hint` to be non-zero"):
        estimate_up(sweeps, up_hint=[0, 0, 0])
    with pytest.raises(ValueError, match="`n_grid` to be a positive int"):
        estimate_up(sweeps, n_grid=0)
    # Torque-free data: every amplitude zero.
    flat = fit_sweep(*_flat_sweep())
    zero = [dataclasses.replace(s, fit=flat) for s in sweeps]
    with pytest.raises(DegenerateGeometryError, match="non-zero gravity amplitude"):
        estimate_up(zero)


def _flat_sweep():
    q = np.concatenate([np.linspace(-1, 1, 100), np.linspace(1, -1, 100)])
    v = np.concatenate([np.full(100, 0.5), np.full(100, -0.5)])
    return q, 0.3 * np.sign(v), v


def test_crlb_and_planning_reject_bad_input():
    q, v = sweep_samples(0.0, 1.5, 0.5, 100.0)
    r = np.eye(3)
    ok = PlannedSweep(1, r, [0, 0, 1], 0.0, q, v, [1.0, 0, 0], 0.1)
    with pytest.raises(ValueError, match=r"`velocity` to have the shape of `q`"):
        PlannedSweep(1, r, [0, 0, 1], 0.0, q, v[:-1], [1.0, 0, 0], 0.1)
    with pytest.raises(ValueError, match="`noise_std` to be a finite positive"):
        PlannedSweep(1, r, [0, 0, 1], 0.0, q, v, [1.0, 0, 0], 0.0)
    with pytest.raises(ValueError, match=r"`moment` to have shape \(3,\)"):
        PlannedSweep(1, r, [0, 0, 1], 0.0, q, v, [1.0, 0], 0.1)
    with pytest.raises(InsufficientDataError, match="at least 2 sweeps"):
        crlb_up([ok])
    rx = np.array([[1.0, 0, 0], [0, 0, -1], [0, 1, 0]])
    other = PlannedSweep(1, rx, [0, 0, 1], 0.0, q, v, [2.0, 0, 0], 0.1)
    with pytest.raises(ValueError, match="share one `moment`"):
        crlb_up([ok, other])
    with pytest.raises(ValueError, match="`load_friction` to be one of"):
        crlb_up([ok, ok], load_friction="signed")
    with pytest.raises(DegenerateGeometryError, match="non-parallel axes"):
        crlb_up([ok, ok])
    with pytest.raises(ValueError, match="`arc` to be a finite positive"):
        sweep_samples(0.0, -1.0, 0.5, 100.0)
    chain = chain_from_dh([0.2, 0.0], [0.0, 0.0], [0.0, 0.5], [np.pi / 2, 0.0])
    with pytest.raises(ValueError, match="`reference_joint` to be proximal"):
        plan_sweeps(
            chain,
            [0, 0],
            masses=[1, 1],
            coms=np.zeros((2, 3)),
            noise_std=0.1,
            target_std=0.01,
            joint=1,
            reference_joint=1,
        )
    with pytest.raises(ValueError, match=r"`masses` to have shape \(2,\)"):
        moment_from_mass_model(chain, [0, 0], 1, [1.0], np.zeros((2, 3)))


def test_no_warning_on_clear_sign(good_sweeps):
    sweeps, _, _ = good_sweeps
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = estimate_up(sweeps)
    assert est.sign_margin > 0.5
    assert "tilt=" in repr(est)


def test_moment_from_mass_model_separates_shape_and_sign_errors():
    chain = chain_from_dh([0.2, 0.0], [0.0, 0.0], [0.0, 0.5], [np.pi / 2, 0.0])
    with pytest.raises(ValueError, match=r"`masses` to be non-negative, got a minimum of -2"):
        moment_from_mass_model(chain, [0, 0], 1, [1.0, -2.0], np.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"`masses` to have shape \(2,\), got \(3,\)\."):
        moment_from_mass_model(chain, [0, 0], 1, [1.0, 1.0, 1.0], np.zeros((2, 3)))


def test_sweep_samples_refuses_more_than_max_samples():
    with pytest.raises(
        ValueError, match=r"at most `max_samples` = 10000000 samples.*`speed` = 1e-09"
    ):
        sweep_samples(0.0, 100.0, 1e-9, 1e3)
    with pytest.raises(ValueError, match=r"at most `max_samples` = 100 samples"):
        sweep_samples(0.0, 1.0, 0.5, 100.0, max_samples=100)
    with pytest.raises(ValueError, match=r"`max_samples` to be an int >= 8"):
        sweep_samples(0.0, 1.0, 0.5, 100.0, max_samples=2.5)
    # 1 rad at 0.5 rad/s and 100 Hz: 201 samples per pass, 402 in all; the limit is inclusive.
    q, v = sweep_samples(0.0, 1.0, 0.5, 100.0, max_samples=402)
    assert q.shape == v.shape == (402,)


def test_plan_sweeps_searches_spacings_in_ascending_order():
    arm = ur5_arm()
    chain = chain_of(arm)
    config = np.array([0.0, -np.pi / 2, 0.0, -np.pi / 2, 0.0, 0.0])
    common = {"masses": arm.masses, "coms": arm.coms, "noise_std": 0.3, "counts": (3,)}
    spacings = (2 * np.pi / 3, np.pi / 3, np.pi / 2)
    # A target every candidate reaches: the first one searched is returned.
    plan = plan_sweeps(chain, config, target_std=np.radians(20.0), spacings=spacings, **common)
    assert plan.reached
    assert plan.spacing == pytest.approx(np.pi / 3)
    with pytest.warns(GravdirWarning, match="No candidate"):
        full = plan_sweeps(chain, config, target_std=1e-9, spacings=spacings, **common)
    first_arc = full.candidates[full.candidates[:, 2] == full.candidates[0, 2]]
    np.testing.assert_allclose(first_arc[:, 1], [np.pi / 3, np.pi / 2, 2 * np.pi / 3])


# --------------------------------------------------------------------------------------------
# Iterations, the result contract and the gravity constant
# --------------------------------------------------------------------------------------------


def test_estimate_up_reports_iteration_limit(good_sweeps):
    sweeps, _, _ = good_sweeps
    with pytest.warns(ConvergenceWarning, match="`max_iter`=1"):
        stopped = estimate_up(sweeps, max_iter=1)
    assert stopped.converged is False
    assert stopped.n_iter == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = estimate_up(sweeps)
    assert est.converged is True
    assert 1 < est.n_iter < 50
    with pytest.raises(ValueError, match="`max_iter` to be a positive int"):
        estimate_up(sweeps, max_iter=0)
    with pytest.raises(ValueError, match="`xtol` to be a finite positive"):
        estimate_up(sweeps, xtol=0.0)


def _check_contract(result):
    copy = pickle.loads(pickle.dumps(result))
    assert copy == result
    json.dumps(result.to_dict())
    for f in dataclasses.fields(result):
        value = getattr(result, f.name)
        if isinstance(value, np.ndarray):
            assert not value.flags.writeable, f.name
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.up = None


def test_results_follow_the_contract(good_sweeps):
    sweeps, _, chain = good_sweeps
    est = estimate_up(sweeps)
    _check_contract(est)
    _check_contract(sweeps[0])
    # Gravity-direction result: information symmetric, PSD, rank 2, up in its null space.
    info = est.up_information
    assert np.allclose(info, info.T)
    assert np.linalg.eigvalsh(info)[0] > -1e-9 * np.abs(info).max()
    assert np.linalg.matrix_rank(info, tol=1e-9 * np.abs(info).max()) == 2
    assert np.allclose(info @ est.up, 0.0, atol=1e-9 * np.abs(info).max())
    assert np.allclose(est.up_cov @ info @ est.up_cov, est.up_cov, rtol=1e-6, atol=0.0)
    assert est.up_std_deg == pytest.approx(np.degrees(np.sqrt(np.trace(est.up_cov))))
    config = np.array([0.0, -1.2, 0.8, -1.0, 0.5, 0.0])
    arm = ur5_arm()
    plan = plan_sweeps(
        chain,
        config,
        masses=arm.masses,
        coms=arm.coms,
        noise_std=0.3,
        target_std=np.radians(0.5),
        up_hint=up_from_base_tilt(0.2, 0.3),
    )
    _check_contract(plan)
    _check_contract(plan.bound)
    _check_contract(plan.sweeps[0])
    assert "up_std=" in repr(plan) and "°" in repr(plan.bound)


def test_planned_sweep_copies_the_callers_arrays():
    q, v = sweep_samples(0.0, 1.5, 0.5, 100.0)
    w = np.array([1.0, 0.0, 0.0])
    plan = PlannedSweep(1, np.eye(3), [0, 0, 1], 0.0, q, v, w, 0.1)
    q[0], v[0], w[0] = 99.0, 99.0, 99.0
    assert plan.q[0] == -0.75 and plan.velocity[0] == 0.5 and plan.moment[0] == 1.0


def test_moment_scales_with_gravity_default_standard():
    chain = chain_from_dh([0.0], [0.0], [1.0], [0.0])
    args = (chain, [0.0], 0, [2.0], [[0.0, 0.0, 0.0]])
    assert moment_from_mass_model(*args)[1] == pytest.approx(2.0 * 9.80665, rel=1e-15)
    assert moment_from_mass_model(*args, gravity=1.62)[1] == pytest.approx(2.0 * 1.62)
    with pytest.raises(ValueError, match="`gravity` to be a finite positive"):
        moment_from_mass_model(*args, gravity=0.0)
