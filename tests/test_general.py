"""Tests of the general gravity estimator against synthetic arms.

The torques come from :class:`gravdir.synthetic.SyntheticArm` (explicit transforms and cross
products); the estimator's inputs (link rotations, axes) come from :mod:`gravdir.kinematics`
built from the same DH table, so a convention error in either cannot cancel out.
"""

from __future__ import annotations

import dataclasses
import json
import pickle
import time
import warnings
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gravdir import testing
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
        fit = fit_sweep(rec.q, velocity=rec.velocity, torque=tau, **fit_kw)
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
    up=testing.ups(),
)
def test_noise_free_random_chains_exact(seed, n_joints, up):
    rng = np.random.default_rng(seed)
    base = random_arm(rng, n_joints)
    dh = np.array(base.dh)
    # J2's axis must not be parallel to J1's (alpha_0 = 0 or pi makes every J2 sweep turn about
    # the J1 axis line, a degenerate plan tested separately).
    if abs(np.sin(dh[0, 3])) < 0.3:
        dh[0, 3] = rng.choice([np.pi / 2, -np.pi / 2])
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
    fit1 = fit_sweep(rec1.q, velocity=rec1.velocity, torque=rec1.torque, load_friction="abs")
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
    fit1 = fit_sweep(rec1.q, velocity=rec1.velocity, torque=rec1.torque, load_friction="abs")
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
    # The default hemisphere (base +z, wrong here) is overridden by the moment hint.
    est = estimate_up(sweeps, moment_hints={1: m_hint})
    assert est.sign_rule == "moment hint"
    assert float(angle_between(est.up, arm.up)) < 1e-8
    assert est.sign_margin > 0.5
    # An up_hint the caller gives is checked instead: a wrong one is a contradiction.
    with pytest.raises(ValueError, match="`up_hint` and `moment_hints` to select one sign"):
        estimate_up(sweeps, up_hint=(0, 0, 1), moment_hints={1: m_hint})


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


@pytest.mark.slow
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
    fit1 = fit_sweep(rec1.q, velocity=rec1.velocity, torque=rec1.torque)
    c1 = config.copy()
    c1[0] = rec1.q[0]
    j1 = joint_sweep_from_chain(chain, c1, 0, fit1)
    return [joint_sweep_from_chain(chain, c, 1, fit) for _, c, fit, _ in data], j1, chain


def test_joint_sweep_takes_a_scipy_rotation(good_sweeps):
    # A Rotation object used to be refused ("Expected `rotation` to be numeric").
    from scipy.spatial.transform import Rotation

    sweeps, _, _ = good_sweeps
    s = sweeps[0]
    matrix = np.array(s.rotation)  # a writable copy: SciPy 1.13 refuses read-only buffers
    as_object = JointSweep(1, Rotation.from_matrix(matrix), s.joint_axis, s.q_ref, s.fit)
    as_matrix = JointSweep(1, s.rotation, s.joint_axis, s.q_ref, s.fit)
    np.testing.assert_allclose(as_object.rotation, as_matrix.rotation, rtol=0, atol=1e-15)
    assert as_object.rotation.shape == (3, 3)
    with pytest.raises(ValueError, match=r"`rotation` to have shape"):
        JointSweep(1, Rotation.from_matrix([matrix] * 2), s.joint_axis, s.q_ref, s.fit)


def test_joint_sweep_rejects_bad_records(good_sweeps):
    sweeps, _, _ = good_sweeps
    s = sweeps[0]
    with pytest.raises(ValueError, match="`rotation` to be rotation matrices"):
        JointSweep(1, 1.1 * s.rotation, s.joint_axis, s.q_ref, s.fit)
    with pytest.raises(ValueError, match="proper rotations"):
        JointSweep(1, -s.rotation, s.joint_axis, s.q_ref, s.fit)
    with pytest.raises(ValueError, match=r"`rotation` to have shape \(\.\.\., 3, 3\)"):
        JointSweep(1, np.eye(2), s.joint_axis, s.q_ref, s.fit)
    with pytest.raises(ValueError, match="`joint_axis` to have unit norm"):
        JointSweep(1, s.rotation, [0, 0, 2.0], s.q_ref, s.fit)
    with pytest.raises(ValueError, match=r"`joint_axis` to have shape \(3,\)"):
        JointSweep(1, s.rotation, np.eye(3), s.q_ref, s.fit)
    with pytest.raises(ValueError, match="`joint` to be an integer from 0 to 999"):
        JointSweep(-1, s.rotation, s.joint_axis, s.q_ref, s.fit)
    with pytest.raises(ValueError, match="`q_ref` to be a scalar"):
        JointSweep(1, s.rotation, s.joint_axis, [0.0, 1.0], s.fit)
    with pytest.raises(ValueError, match="`q_ref` to be finite"):
        JointSweep(1, s.rotation, s.joint_axis, np.nan, s.fit)
    with pytest.raises(ValueError, match="`fit` to be a SweepFit"):
        JointSweep(1, s.rotation, s.joint_axis, s.q_ref, "fit")
    q = np.tile(np.concatenate([np.linspace(-1, 1, 50), np.linspace(1, -1, 50)]), (2, 1))
    v = np.sign(np.gradient(q, axis=-1))
    batched = fit_sweep(q, velocity=v, torque=np.cos(q) + 0.1 * v)
    with pytest.raises(ValueError, match="single sweep"):
        JointSweep(1, s.rotation, s.joint_axis, s.q_ref, batched)
    with pytest.raises(ValueError, match="`group` to be hashable"):
        JointSweep(1, s.rotation, s.joint_axis, s.q_ref, s.fit, group=[1])


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
        0, link_frames(chain, np.r_[1.0, np.zeros(5)]).rotations[0], j1.joint_axis, 1.0, j1.fit
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
    with pytest.raises(ValueError, match="share one `joint_axis`"):
        estimate_up([sweeps[0], other_axis])
    with pytest.raises(ValueError, match="keys of `moment_hints`"):
        estimate_up(sweeps, moment_hints={7: [1, 0, 0]})
    with pytest.raises(ValueError, match="away from the joint axis"):
        estimate_up(sweeps, moment_hints={1: sweeps[0].joint_axis})
    with pytest.raises(ValueError, match="`up_hint` to be non-zero"):
        estimate_up(sweeps, up_hint=[0, 0, 0])
    with pytest.raises(ValueError, match="`n_grid` to be a positive int"):
        estimate_up(sweeps, n_grid=0)
    # Torque-free data: every amplitude zero.
    q, torque, v = _flat_sweep()
    flat = fit_sweep(q, velocity=v, torque=torque)
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
        sweep_samples(0.0, 10.0, 1e-9, 1e3)  # 10 rad: radians, too many samples
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


# --------------------------------------------------------------------------------------------
# Hardening: the inputs and outcomes an adversarial run found (issue 11)
# --------------------------------------------------------------------------------------------


def _two_joint_chain():
    return chain_from_dh([0.2, 0.0], [0.0, 0.0], [0.0, 0.5], [np.pi / 2, 0.0])


def _two_joint_sweeps(up, noise_std, seed, *, gravity=True):
    """J2 of the two-joint chain swept over 2 rad at J1 = 0, 90°, 180°, white noise added."""
    chain = _two_joint_chain()
    rng = np.random.default_rng(seed)
    q = np.concatenate([np.linspace(-1, 1, 200), np.linspace(1, -1, 200)])
    v = np.concatenate([np.full(200, 0.3), np.full(200, -0.3)])
    w = np.array([0.0, 9.81, 0.0])  # g (a x m) for a first moment along link x
    sweeps = []
    for q1 in (0.0, np.pi / 2, np.pi):
        r, a = link_frames(chain, [q1, 0.0]).rotations[1], chain.axes_in_link[1]
        tau = np.cos(q)[:, None] * (r @ w) + np.sin(q)[:, None] * (r @ np.cross(a, w))
        torque = (tau @ up if gravity else 0.0) + 0.2 * np.sign(v)
        torque = torque + noise_std * rng.standard_normal(q.size)
        sweeps.append(JointSweep(1, r, a, 0.0, fit_sweep(q, velocity=v, torque=torque)))
    return sweeps


def test_estimate_up_refuses_sweeps_without_a_gravity_signal():
    # No gravity torque at all: friction and noise only. The fitted amplitudes are 1.0 to 2.6
    # standard deviations; estimate_up used to return a tilt of about 17° without a word.
    sweeps = _two_joint_sweeps(np.array([0.0, 0.0, 1.0]), 0.05, 6, gravity=False)
    snr = [float(s.fit.amplitude / s.fit.amplitude_std) for s in sweeps]
    assert min(snr) > 0.6 and max(snr) < 2.7
    with pytest.raises(InsufficientDataError, match=r"`sweeps` to be significant.*2\.6 standard"):
        estimate_up(sweeps)
    with pytest.raises(InsufficientDataError, match=r"p = 0\.06.*`significance` = 1e-06"):
        estimate_up(sweeps)
    # The test can be switched off; the estimate then carries its (large) uncertainty.
    loose = estimate_up(sweeps, significance=1.0)
    assert loose.up_std_deg > 10.0
    # A real gravity signal passes by many orders of magnitude.
    up = np.array([np.sin(0.3), 0.0, np.cos(0.3)])
    est = estimate_up(_two_joint_sweeps(up, 0.05, 6))
    assert float(angle_between(est.up, up)) < np.radians(0.5)
    with pytest.raises(ValueError, match="`significance` to be a positive number of at most 1,"):
        estimate_up(sweeps, significance=2.0)


def test_sign_within_a_few_standard_deviations_warns_with_the_margin():
    # up 86° from the hint: a cosine of about 0.1, above `sign_tol` (0.05), but the noise makes
    # its standard deviation about 0.04, so the sign is decided by under 3 standard deviations.
    tilt = np.radians(86.0)
    up = np.array([np.sin(tilt), 0.0, np.cos(tilt)])
    sweeps = _two_joint_sweeps(up, 2.0, 1)
    with pytest.warns(GravdirWarning, match=r"cosine of 0\.106.*2\.73 standard deviation"):
        est = estimate_up(sweeps)
    assert est.sign_margin > 0.05
    # The same geometry with little noise decides the sign by many standard deviations.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        estimate_up(_two_joint_sweeps(up, 0.05, 1))
    # The moment-hint rule is tested the same way, on its own deciding quantity.
    with pytest.warns(GravdirWarning, match="moment hint rule"):
        estimate_up(sweeps, moment_hints={1: [1.0, 0.0, 0.0]}, sign_nsigma=100.0)
    with pytest.raises(ValueError, match="`sign_nsigma`"):
        estimate_up(sweeps, sign_nsigma=-1.0)


def test_estimate_up_options_are_bounded():
    sweeps = _two_joint_sweeps(np.array([np.sin(0.3), 0.0, np.cos(0.3)]), 0.05, 2)
    # covariance_floor=1e300 used to raise OverflowError.
    with pytest.raises(ValueError, match="`covariance_floor` to be a number from 1e-15 to 0.1"):
        estimate_up(sweeps, covariance_floor=1e300)
    with pytest.raises(ValueError, match="`covariance_floor`"):
        estimate_up(sweeps, covariance_floor=1e-300)
    with pytest.raises(ValueError, match="`n_grid` to be a positive int at most 20000"):
        estimate_up(sweeps, n_grid=10**12)
    with pytest.raises(ValueError, match="`n_starts` to be a positive int at most 32"):
        estimate_up(sweeps, n_starts=1000)
    with pytest.raises(ValueError, match="`max_iter` to be a positive int at most 1000"):
        estimate_up(sweeps, max_iter=10**6)
    with pytest.raises(ValueError, match="`xtol` to be a positive number of at most 0.01,"):
        estimate_up(sweeps, xtol=1e300)
    with pytest.raises(ValueError, match="`rcond`"):
        estimate_up(sweeps, rcond=2.0)
    with pytest.raises(ValueError, match="`n_grid`"):
        estimate_up(sweeps, n_grid="400")
    with pytest.raises(ValueError, match="`xtol` to be a number"):
        estimate_up(sweeps, xtol="1e-10")
    # Any non-zero finite `up_hint` is a direction, whatever its scale.
    ref = estimate_up(sweeps)
    for scale in (1e-300, 1e300):
        assert estimate_up(sweeps, up_hint=np.array([0.0, 0.0, scale])) == ref


def test_plan_sweeps_refuses_degrees_unbounded_counts_and_wrong_names():
    chain = _two_joint_chain()
    common = {
        "masses": [1.0, 2.0],
        "coms": np.zeros((2, 3)),
        "noise_std": 0.05,
        "target_std": np.radians(0.2),
    }
    # Degrees for radians used to plan "arc=3438°, reached=True".
    with pytest.raises(ValueError, match=r"`arcs` in radians.*degrees\?"):
        plan_sweeps(chain, [0.0, 0.0], arcs=(60.0, 90.0, 120.0), **common)
    with pytest.raises(ValueError, match=r"`spacings` in radians.*degrees\?"):
        plan_sweeps(chain, [0.0, 0.0], spacings=(60.0, 90.0), **common)
    with pytest.raises(ValueError, match=r"`q` .*degrees\?"):
        plan_sweeps(chain, [0.0, 90.0], **common)
    # counts=(10**6,) used to run for more than 40 s.
    start = time.perf_counter()
    with pytest.raises(ValueError, match="`counts` to hold ints >= 2 and at most 36"):
        plan_sweeps(chain, [0.0, 0.0], counts=(10**6,), **common)
    with pytest.raises(ValueError, match="at most 2000 sweeps in all"):
        plan_sweeps(chain, [0.0, 0.0], counts=tuple(range(2, 37)), **common)
    with pytest.raises(ValueError, match="at most 20000000 samples in all"):
        plan_sweeps(chain, [0.0, 0.0], speed=1e-3, sample_rate=1e3, **common)
    with pytest.raises(ValueError, match="`counts` to hold ints"):
        plan_sweeps(chain, [0.0, 0.0], counts=(2.5,), **common)
    assert time.perf_counter() - start < 2.0
    # Every message names the argument of plan_sweeps the caller gave.
    with pytest.raises(TypeError, match="up_prior"):
        plan_sweeps(chain, [0.0, 0.0], up_prior=[[0, 0, 1]], **common)
    with pytest.raises(ValueError, match=r"Expected `up_hint` to have shape \(3,\)"):
        plan_sweeps(chain, [0.0, 0.0], up_hint=[[0, 0, 1]], **common)
    with pytest.raises(ValueError, match=r"at least 4 samples per pass \(`arcs`"):
        plan_sweeps(chain, [0.0, 0.0], arcs=(0.001,), **common)
    with pytest.raises(ValueError, match="`noise_std` to be a number"):
        plan_sweeps(chain, [0.0, 0.0], **{**common, "noise_std": "0.05"})
    with pytest.raises(ValueError, match="`masses` and `noise_std` to give a ratio"):
        plan_sweeps(chain, [0.0, 0.0], **{**common, "noise_std": 1e-300})


def test_sweep_samples_refuses_degrees():
    # A 90 "rad" sweep used to make 36,002 samples.
    with pytest.raises(ValueError, match=r"`arc` in radians, got a span of 90 rad.*degrees\?"):
        sweep_samples(0.0, 90.0, 0.5, 100.0)
    with pytest.raises(ValueError, match=r"`center` to hold joint positions in radians.*degrees\?"):
        sweep_samples(90.0, 1.0, 0.5, 100.0)
    with pytest.raises(ValueError, match="`max_samples` to be an int >= 8 and at most 10000000"):
        sweep_samples(0.0, 1.0, 0.5, 100.0, max_samples=10**12)
    q, v = sweep_samples(0.0, 4 * np.pi, 0.5, 100.0)  # two full turns are still radians
    assert np.ptp(q) == pytest.approx(4 * np.pi)


def test_crlb_up_clear_errors():
    chain = _two_joint_chain()
    plans = [
        planned_sweep_from_chain(
            chain, [q1, 0.0], 1, 2.0, masses=[1.0, 2.0], coms=np.zeros((2, 3)), noise_std=0.05
        )
        for q1 in (0.0, np.pi / 2, np.pi)
    ]
    # min_speed=1e300 used to end in "zero-size array to reduction operation".
    with pytest.raises(InsufficientDataError, match=r"`sweeps\[0\]`.*`min_speed` = 1e\+300"):
        crlb_up(plans, min_speed=1e300)
    # Sweeps in one direction cannot separate Coulomb friction from the offset.
    one_way = [dataclasses.replace(p, velocity=np.abs(p.velocity)) for p in plans]
    with pytest.raises(InsufficientDataError, match=r"`sweeps\[0\]` to separate"):
        crlb_up(one_way)
    assert crlb_up(one_way, friction="none").up_std_deg > 0.0
    # The bound does not depend on the units of the moments and the noise.
    ref = crlb_up(plans)
    for scale in (1e-150, 1e150):
        scaled = [
            dataclasses.replace(p, moment=p.moment * scale, noise_std=p.noise_std * scale)
            for p in plans
        ]
        assert np.allclose(crlb_up(scaled).up_information, ref.up_information, rtol=1e-9)
    absurd = [dataclasses.replace(p, noise_std=1e-300) for p in plans]
    with pytest.raises(ValueError, match="`noise_std` of `sweeps` to give a ratio"):
        crlb_up(absurd)


def test_non_finite_or_underflowed_covariance_is_never_certainty(good_sweeps):
    sweeps, _, _ = good_sweeps
    fit = sweeps[0].fit
    for bad in (np.inf, np.nan):
        cov = np.array(fit.covariance)
        cov[1, 1] = bad
        with pytest.raises(ValueError, match="`fit` to have a finite sin/cos covariance"):
            JointSweep(
                1, sweeps[0].rotation, sweeps[0].joint_axis, 0.0, replace(fit, covariance=cov)
            )
    noisy = _two_joint_sweeps(np.array([np.sin(0.3), 0.0, np.cos(0.3)]), 0.05, 3)
    zero = replace(noisy[0].fit, covariance=np.zeros_like(noisy[0].fit.covariance))
    with pytest.raises(ValueError, match="covariance underflowed"):
        JointSweep(1, noisy[0].rotation, noisy[0].joint_axis, 0.0, zero)
    # A covariance beyond the float range relative to the amplitudes gives that sweep no
    # weight (infinite variance), with a warning; it never makes the estimate more certain.
    # (Torques in units of 1e-110, and a third sweep whose variance is 1e320 times its amplitude
    # squared.)
    scaled = [
        dataclasses.replace(
            s,
            fit=replace(
                s.fit,
                coefficients=np.asarray(s.fit.coefficients) * 1e-110,
                covariance=np.asarray(s.fit.covariance) * (1e100 if i == 2 else 1e-220),
            ),
        )
        for i, s in enumerate(noisy)
    ]
    with pytest.warns(GravdirWarning, match=r"`sweeps` \[2\] overflows"):
        est = estimate_up(scaled)
    two = estimate_up(noisy[:2])
    assert est.up_std_deg == pytest.approx(two.up_std_deg, rel=1e-6)
    negative = replace(fit, covariance=-np.asarray(fit.covariance))
    with pytest.raises(ValueError, match="positive semi-definite"):
        JointSweep(1, noisy[0].rotation, noisy[0].joint_axis, 0.0, negative)


def test_records_copy_and_refuse_hostile_arrays(good_sweeps):
    sweeps, _, _ = good_sweeps
    s = sweeps[0]
    q, v = sweep_samples(0.0, 1.5, 0.5, 100.0)
    rot, axis, w = np.eye(3), np.array([0.0, 0.0, 1.0]), np.array([1.0, 0.0, 0.0])
    plan = PlannedSweep(1, rot, axis, 0.0, q, v, w, 0.1)
    rot_js, axis_js = np.array(s.rotation), np.array(s.joint_axis)
    sweep = JointSweep(1, rot_js, axis_js, s.q_ref, s.fit)
    for arr in (q, v, w, rot, axis, rot_js, axis_js):
        arr[...] = 7.0
    assert plan.q[0] == -0.75 and plan.velocity[0] == 0.5 and plan.moment[0] == 1.0
    assert np.array_equal(plan.rotation, np.eye(3)) and plan.joint_axis[2] == 1.0
    assert np.allclose(sweep.rotation, s.rotation) and np.allclose(sweep.joint_axis, s.joint_axis)
    # Hostile arrays: clear errors naming the argument, no overflow or underflow.
    with np.errstate(under="ignore"):
        huge, tiny, long_axis = s.rotation * 1e300, s.rotation * 1e-300, s.joint_axis * 1e300
    with np.errstate(all="raise"):
        with pytest.raises(ValueError, match="`rotation` to be rotation matrices"):
            JointSweep(1, huge, s.joint_axis, s.q_ref, s.fit)
        with pytest.raises(ValueError, match="`rotation` to be rotation matrices"):
            JointSweep(1, tiny, s.joint_axis, s.q_ref, s.fit)
        with pytest.raises(ValueError, match="`joint_axis` to have unit norm"):
            JointSweep(1, s.rotation, long_axis, s.q_ref, s.fit)
        with pytest.raises(ValueError, match=r"`q_ref` to hold joint positions.*degrees\?"):
            JointSweep(1, s.rotation, s.joint_axis, 90.0, s.fit)
        with pytest.raises(ValueError, match="`q_ref`"):
            JointSweep(1, s.rotation, s.joint_axis, "0.5", s.fit)
        with pytest.raises(ValueError, match="`group` to be a key other than NaN"):
            JointSweep(1, s.rotation, s.joint_axis, s.q_ref, s.fit, group=float("nan"))
        with pytest.raises(ValueError, match=r"`q` in radians within 4π of `q_ref`.*degrees\?"):
            PlannedSweep(1, np.eye(3), [0, 0, 1], 0.0, np.degrees(q), v, w, 0.1)
        with pytest.raises(ValueError, match="`q` to sweep an arc"):
            PlannedSweep(1, np.eye(3), [0, 0, 1], 0.0, np.zeros_like(q), v, w, 0.1)
        with pytest.raises(ValueError, match=r"`q` to have shape \(m,\)"):
            PlannedSweep(1, np.eye(3), [0, 0, 1], 0.0, q[:, None], v, w, 0.1)
        with pytest.raises(ValueError, match="`masses`, `coms` and `gravity` to give a finite"):
            chain = _two_joint_chain()
            moment_from_mass_model(chain, [0, 0], 0, [1e300, 1e300], np.full((2, 3), 1e300))


def test_estimate_up_converges_at_the_resolution_of_the_data(good_sweeps):
    # An `xtol` below rounding on nearly noise-free sweeps: the steps wander at the rounding
    # level of the sums instead of shrinking to it. The run has converged there (at rounding
    # level of the estimate with the default `xtol`): no ConvergenceWarning, `max_iter` unspent.
    sweeps, _, _ = good_sweeps
    ref = estimate_up(sweeps)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = estimate_up(sweeps, xtol=1e-300)
    assert est.converged is True
    assert est.n_iter < 50
    assert float(angle_between(est.up, ref.up)) < 1e-12


def test_estimate_up_does_not_depend_on_torque_units():
    # Both solves stop when a step is below `xtol`; a tight one makes the comparison about the
    # units, not about where two sequences of iterates happened to stop.
    sweeps = _two_joint_sweeps(np.array([np.sin(0.3), 0.0, np.cos(0.3)]), 0.05, 4)
    ref = estimate_up(sweeps, xtol=1e-14)
    for scale in (1e-150, 1e150):
        scaled = [
            dataclasses.replace(
                s,
                fit=replace(
                    s.fit,
                    coefficients=np.asarray(s.fit.coefficients) * scale,
                    covariance=np.asarray(s.fit.covariance) * scale**2,
                ),
            )
            for s in sweeps
        ]
        with np.errstate(all="raise"):
            est = estimate_up(scaled, xtol=1e-14)
        assert float(angle_between(est.up, ref.up)) < 1e-12
        assert np.allclose(est.up_information, ref.up_information, rtol=1e-9)
        assert np.allclose(est.moments / scale, ref.moments, rtol=1e-9)
        assert est.chi2 == pytest.approx(ref.chi2, rel=1e-9)


def test_plan_sweeps_refuses_complex_and_zero_d_grids():
    # Complex spacings and arcs used to be planned with their imaginary parts dropped (a
    # ComplexWarning only): "positions=[0.0°, 60.0°, 120.0°], reached=True".
    chain = _two_joint_chain()
    common = {"masses": [1.0, 2.0], "coms": np.zeros((2, 3)), "noise_std": 0.05}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="`spacings` to be a real number, got complex"):
            plan_sweeps(
                chain, [0.0, 0.0], target_std=0.003,
                spacings=np.array([np.pi / 3, np.pi / 2]) + 0.5j, **common,
            )
        with pytest.raises(ValueError, match="`arcs` to be a real number, got complex"):
            plan_sweeps(chain, [0.0, 0.0], target_std=0.003, arcs=(1.0 + 3j,), **common)
        with pytest.raises(ValueError, match=r"`noise_std` to be a real number, got complex"):
            plan_sweeps(chain, [0.0, 0.0], target_std=0.003, **{**common, "noise_std": 0.05j})
    # A 0-d array is not a sequence of candidates (iterating it raised TypeError).
    for name in ("counts", "spacings", "arcs"):
        with pytest.raises(ValueError, match=rf"`{name}` to be a sequence \(1-D\), got an array"):
            plan_sweeps(chain, [0.0, 0.0], target_std=0.003, **{name: np.asarray(3)}, **common)


def test_joint_index_beyond_any_arm_is_refused(good_sweeps):
    # JointSweep(10**400, ...) used to be accepted and carried a 401-digit joint.
    sweeps, _, _ = good_sweeps
    s = sweeps[0]
    for joint in (10**400, 1000, np.int64(2**40)):
        with pytest.raises(ValueError, match="`joint` to be an integer from 0 to 999"):
            JointSweep(joint, s.rotation, s.joint_axis, s.q_ref, s.fit)
    assert JointSweep(999, s.rotation, s.joint_axis, s.q_ref, s.fit).joint == 999
    assert JointSweep(np.asarray(1), s.rotation, s.joint_axis, s.q_ref, s.fit).joint == 1
    with pytest.raises(ValueError, match="`q_ref` within the float64 range"):
        JointSweep(1, s.rotation, s.joint_axis, 10**400, s.fit)
    with pytest.raises(ValueError, match="`reference_joint` to be an integer from 0 to 999"):
        plan_sweeps(
            _two_joint_chain(), [0.0, 0.0], masses=[1.0, 2.0], coms=np.zeros((2, 3)),
            noise_std=0.05, target_std=0.003, reference_joint=10**400,
        )


def test_joint_angles_are_named_q_and_old_names_are_gone(good_sweeps):
    chain = _two_joint_chain()
    mass = {"masses": [1.0, 2.0], "coms": np.zeros((2, 3))}
    fit = good_sweeps[0][0].fit
    # The joint angles are `q`, by keyword as by position.
    by_name = joint_sweep_from_chain(chain, q=[0.3, 0.0], joint=1, fit=fit)
    by_position = joint_sweep_from_chain(chain, [0.3, 0.0], 1, fit)
    np.testing.assert_array_equal(by_name.rotation, by_position.rotation)
    plan = planned_sweep_from_chain(chain, q=[0.3, 0.0], joint=1, arc=1.5, noise_std=0.05, **mass)
    same = planned_sweep_from_chain(chain, [0.3, 0.0], 1, 1.5, noise_std=0.05, **mass)
    np.testing.assert_array_equal(plan.q, same.q)
    np.testing.assert_array_equal(
        moment_from_mass_model(chain, q=[0.3, 0.0], joint=1, **mass),
        moment_from_mass_model(chain, [0.3, 0.0], 1, mass["masses"], mass["coms"]),
    )
    # The old name is refused, not forwarded.
    with pytest.raises(TypeError, match="configuration"):
        joint_sweep_from_chain(chain, configuration=[0.3, 0.0], joint=1, fit=fit)
    with pytest.raises(TypeError, match="configuration"):
        planned_sweep_from_chain(
            chain, configuration=[0.3, 0.0], joint=1, arc=1.5, noise_std=0.05, **mass
        )
    with pytest.raises(TypeError, match="configuration"):
        plan_sweeps(chain, configuration=[0.0, 0.0], noise_std=0.05, target_std=0.01, **mass)
    # Errors name `q`.
    with pytest.raises(ValueError, match=r"`q` .*degrees\?"):
        joint_sweep_from_chain(chain, [0.3, 90.0], 1, fit)
    with pytest.raises(ValueError, match=r"`q` to have shape \(2,\)"):
        planned_sweep_from_chain(chain, [0.3, 0.0, 0.0], 1, 1.5, noise_std=0.05, **mass)


def test_joint_axis_field_replaces_axis(good_sweeps):
    s = good_sweeps[0][0]
    sweep = JointSweep(joint=1, rotation=s.rotation, joint_axis=s.joint_axis, q_ref=0.0, fit=s.fit)
    np.testing.assert_array_equal(sweep.joint_axis, s.joint_axis)
    assert not hasattr(sweep, "axis") and "joint_axis" in sweep.to_dict()
    with pytest.raises(TypeError, match="axis"):
        JointSweep(joint=1, rotation=s.rotation, axis=s.joint_axis, q_ref=0.0, fit=s.fit)
    q, v = sweep_samples(0.0, 1.5, 0.5, 100.0)
    plan = PlannedSweep(
        joint=1,
        rotation=np.eye(3),
        joint_axis=[0, 0, 1],
        q_ref=0.0,
        q=q,
        velocity=v,
        moment=[1.0, 0.0, 1.0],
        noise_std=0.1,
    )
    # The moment's component along `joint_axis` is removed.
    np.testing.assert_array_equal(plan.moment, [1.0, 0.0, 0.0])
    assert not hasattr(plan, "axis") and "joint_axis" in plan.to_dict()
    with pytest.raises(ValueError, match="`joint_axis` to have unit norm"):
        PlannedSweep(1, np.eye(3), [0, 0, 2.0], 0.0, q, v, [1.0, 0, 0], 0.1)


@pytest.mark.parametrize(
    ("option", "value", "listed"),
    [
        ("friction", "coulomb", "'auto', 'none'"),
        ("friction", "coulomb-viscous", "'auto', 'none'"),
        ("friction", True, "'auto', 'none'"),
        ("load_friction", "signed", "'none', 'abs'"),
        ("load_friction", "auto", "'none', 'abs'"),
        ("load_friction", False, "'none', 'abs'"),
    ],
)
def test_crlb_up_refuses_the_friction_options_it_does_not_implement(option, value, listed):
    chain = _two_joint_chain()
    mass = {"masses": [1.0, 2.0], "coms": np.zeros((2, 3)), "noise_std": 0.05}
    plans = [
        planned_sweep_from_chain(chain, [q1, 0.0], 1, np.radians(120), **mass)
        for q1 in (0.0, np.pi / 2, np.pi)
    ]
    with pytest.raises(ValueError, match=f"`{option}` to be one of {listed}, got"):
        crlb_up(plans, **{option: value})
    if option == "load_friction":
        with pytest.raises(ValueError, match=f"`load_friction` to be one of {listed}, got"):
            plan_sweeps(chain, [0.0, 0.0], target_std=0.01, load_friction=value, **mass)
