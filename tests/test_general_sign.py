"""The sign of `up` when the caller's knowledge contradicts itself: reported, never a 180° error.

The torques come from :class:`gravdir.synthetic.SyntheticArm` (explicit transforms and cross
products, in gravdir's sign: the holding torque). A controller that reports the opposite sign is
simulated by negating the recorded torque; the moment hints come from the arm's own centres of
mass, through forward kinematics built independently of the estimator.
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest

from gravdir.errors import GravdirWarning, SignConflictError
from gravdir.frames import angle_between
from gravdir.general import estimate_up, joint_sweep_from_chain
from gravdir.kinematics import SerialChain, chain_from_dh, link_frames
from gravdir.sweep import fit_sweep
from gravdir.synthetic.robot import SyntheticArm, iiwa_arm, up_from_base_tilt, ur5_arm
from gravdir.synthetic.sensors import realistic_sensors

UR5_CONFIG = np.array([0.0, -1.2, 0.8, -1.0, 0.5, 0.0])
IIWA_CONFIG = np.array([0.0, 0.7, 0.0, -1.0, 0.0, 0.5, 0.0])
OFFSETS = (0.0, np.pi / 2, np.pi)


def chain_of(arm: SyntheticArm) -> SerialChain:
    return chain_from_dh(arm.dh[:, 0], arm.dh[:, 1], arm.dh[:, 2], arm.dh[:, 3])


def sweeps_of(arm, sensors, rng, config, joint, *, reported_sign=1, torque_sign=1, arc=2.0):
    """JointSweeps of `joint` swept at J1 = 0, 90°, 180°.

    The controller reports ``reported_sign`` times gravdir's torque; the fit is told
    `torque_sign` (right when the two are equal).
    """
    chain = chain_of(arm)
    out = []
    for off in OFFSETS:
        c = np.array(config, dtype=float)
        c[0] = off
        rec = arm.sweep(
            joint, c, c[joint] - arc / 2, c[joint] + arc / 2, 0.5, 100.0, sensor=sensors, rng=rng
        )
        c[joint] = rec.q[0]
        logged = reported_sign * rec.torque
        fit = fit_sweep(
            rec.q,
            velocity=rec.velocity,
            torque=logged,
            load_friction="abs",
            torque_sign=torque_sign,
        )
        out.append(joint_sweep_from_chain(chain, c, joint, fit))
    return out


def moment_hint(arm, config, joint, rng, *, roughness=0.2):
    """A rough direction of the distal first moment of `joint` in its link frame.

    From the arm's known centres of mass (what a user reads off the data sheet or sees: the
    arm extends that way), perturbed by `roughness` of its length.
    """
    frames = link_frames(chain_of(arm), config)
    centres = np.einsum("kij,kj->ki", frames.rotations, arm.coms) + frames.origins
    com = np.average(centres[joint:], axis=0, weights=arm.masses[joint:])
    m = frames.rotations[joint].T @ (com - frames.joint_points[joint])
    return m + roughness * np.linalg.norm(m) * rng.standard_normal(3)


def degrees_between(a, b):
    return float(np.degrees(angle_between(a, b)))


CASES = [
    # arm, base tilt and azimuth, the posture, the caller's rough up_hint
    pytest.param(ur5_arm, 0.5, 0.4, UR5_CONFIG, (0.1, -0.1, 1.0), id="ur5-tilt29"),
    pytest.param(iiwa_arm, 1.0, -2.0, IIWA_CONFIG, (0.0, 0.0, 1.0), id="iiwa-tilt57"),
    pytest.param(ur5_arm, 2.9, 1.0, UR5_CONFIG, (0.0, 0.0, -1.0), id="ur5-ceiling"),
]


@pytest.mark.parametrize(("make", "tilt", "azimuth", "config", "up_hint"), CASES)
def test_wrong_torque_sign_with_both_hints_is_reported(make, tilt, azimuth, config, up_hint):
    rng = np.random.default_rng(12)
    arm = make(up_from_base_tilt(tilt, azimuth))
    sensors = realistic_sensors(rng, arm.peak_gravity_torque())
    hints = {1: moment_hint(arm, config, 1, rng)}
    # The controller reports the opposite of gravdir's torque.
    wrong = sweeps_of(arm, sensors, rng, config, 1, reported_sign=-1, torque_sign=1)
    right = sweeps_of(arm, sensors, rng, config, 1, reported_sign=-1, torque_sign=-1)

    # This call used to return -up silently; now the contradiction is raised, naming the fix.
    with pytest.raises(SignConflictError, match=r"torque_sign=-1") as info:
        estimate_up(wrong, up_hint=up_hint, moment_hints=hints)
    message = str(info.value)
    assert "`up_hint`" in message and "`moment_hints`" in message
    assert "180°" in message

    # The 180° error the moment hints alone still produce: the data cannot tell it.
    alone = estimate_up(wrong, moment_hints=hints)
    assert degrees_between(alone.up, arm.up) > 179.5
    # The hemisphere rule alone gets `up` right and the moments wrong: neither rule by itself
    # can see the flipped sign, only the two together.
    hemisphere = estimate_up(wrong, up_hint=up_hint)
    assert degrees_between(hemisphere.up, arm.up) < 0.5
    w = hemisphere.moments[0]
    a = wrong[0].joint_axis
    assert w @ np.cross(a, hints[1]) < 0

    # The right torque sign: nothing reported, `up` right, decided by the moment hint.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = estimate_up(right, up_hint=up_hint, moment_hints=hints)
    assert est.sign_rule == "moment hint"
    assert degrees_between(est.up, arm.up) < 0.5
    assert est.sign_margin > 0.5


def test_the_error_says_how_far_and_where_up_would_be():
    rng = np.random.default_rng(3)
    arm = ur5_arm(up_from_base_tilt(0.3, 0.0))
    sensors = realistic_sensors(rng, arm.peak_gravity_torque())
    hints = {1: moment_hint(arm, UR5_CONFIG, 1, rng)}
    wrong = sweeps_of(arm, sensors, rng, UR5_CONFIG, 1, reported_sign=-1)
    with pytest.raises(ValueError) as info:
        estimate_up(wrong, up_hint=(0.0, 0.0, 1.0), moment_hints=hints)
    message = str(info.value)
    # up lands 180° - 17° = 163° from the hint; the message gives that angle and the candidate.
    angle = float(message.split("`up` at ")[1].split("°")[0])
    assert abs(angle - (180.0 - np.degrees(0.3))) < 0.5
    assert "standard deviation" in message
    assert "they give up = [" in message


def test_one_joint_with_a_flipped_sign_contradicts_the_other_hint():
    rng = np.random.default_rng(21)
    arm = ur5_arm(up_from_base_tilt(0.6, -1.0))
    sensors = realistic_sensors(rng, arm.peak_gravity_torque())
    hints = {1: moment_hint(arm, UR5_CONFIG, 1, rng), 2: moment_hint(arm, UR5_CONFIG, 2, rng)}
    j2 = sweeps_of(arm, sensors, rng, UR5_CONFIG, 1)
    j3_right = sweeps_of(arm, sensors, rng, UR5_CONFIG, 2)
    # One joint's drive counts the other way round (its motor mounted reversed, say).
    j3_wrong = sweeps_of(arm, sensors, rng, UR5_CONFIG, 2, reported_sign=-1)

    # A per-joint sign error does not move `up` (that group's moment absorbs it) ...
    hemisphere = estimate_up([*j2, *j3_wrong])
    assert degrees_between(hemisphere.up, arm.up) < 0.5
    # ... but it contradicts that joint's moment hint, and this is reported.
    conflict = r"group 2 points 1[0-9]{2}\.\d° away.*torque_sign=-1"
    with pytest.raises(SignConflictError, match=conflict):
        estimate_up([*j2, *j3_wrong], moment_hints=hints)
    # With the up_hint as well, still reported (and not a silent choice).
    with pytest.raises(ValueError, match="group 2"):
        estimate_up([*j2, *j3_wrong], up_hint=(0, 0, 1), moment_hints=hints)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = estimate_up([*j2, *j3_right], up_hint=(0, 0, 1), moment_hints=hints)
    assert degrees_between(est.up, arm.up) < 0.5


def test_disagreement_within_the_margins_warns_and_keeps_the_moment_hint():
    rng = np.random.default_rng(5)
    arm = iiwa_arm(up_from_base_tilt(0.4, 0.7))
    sensors = realistic_sensors(rng, arm.peak_gravity_torque())
    hints = {1: moment_hint(arm, IIWA_CONFIG, 1, rng)}
    right = sweeps_of(arm, sensors, rng, IIWA_CONFIG, 1)
    # An up_hint 91° from up: on the wrong side, but by a cosine of -0.017, inside `sign_tol`.
    side = np.cross(arm.up, [1.0, 0.0, 0.0])
    side /= np.linalg.norm(side)
    hint = np.cos(np.radians(91.0)) * arm.up + np.sin(np.radians(91.0)) * side
    with pytest.warns(GravdirWarning, match=r"disagree within their margins.*91\.0°"):
        est = estimate_up(right, up_hint=hint, moment_hints=hints)
    assert degrees_between(est.up, arm.up) < 0.5


def test_a_disagreement_counts_only_beyond_sign_nsigma_standard_deviations():
    # Noisier sensors, so that the standard deviation of up . up_hint is a few hundredths.
    rng = np.random.default_rng(8)
    arm = iiwa_arm(up_from_base_tilt(0.4, 0.7))
    sensors = [
        dataclasses.replace(s, noise_std=5.0 * s.noise_std)
        for s in realistic_sensors(rng, arm.peak_gravity_torque())
    ]
    hints = {1: moment_hint(arm, IIWA_CONFIG, 1, rng)}
    right = sweeps_of(arm, sensors, rng, IIWA_CONFIG, 1)
    ref = estimate_up(right, moment_hints=hints)
    # A (wrong) up_hint 95° from the estimate: a cosine of -0.087, beyond `sign_tol`.
    side = np.cross(ref.up, [1.0, 0.0, 0.0])
    side /= np.linalg.norm(side)
    hint = np.cos(np.radians(95.0)) * ref.up + np.sin(np.radians(95.0)) * side
    sigmas = abs(hint @ ref.up) / np.sqrt(hint @ ref.up_cov @ hint)
    assert 3.0 < sigmas < 80.0  # the geometry this test needs
    with pytest.raises(ValueError, match=r"contradiction.*95\.0° from `up_hint`"):
        estimate_up(right, up_hint=hint, moment_hints=hints, sign_nsigma=0.8 * sigmas)
    with pytest.warns(GravdirWarning, match=r"disagree within their margins.*95\.0°"):
        est = estimate_up(right, up_hint=hint, moment_hints=hints, sign_nsigma=1.25 * sigmas)
    assert degrees_between(est.up, ref.up) < 1e-9


def test_default_up_hint_is_not_checked_against_moment_hints():
    # A ceiling mount with only moment hints: the default hemisphere (+z) is overridden, not
    # reported as a contradiction, since the caller said nothing about it.
    rng = np.random.default_rng(6)
    arm = ur5_arm(up_from_base_tilt(np.pi, 0.0))
    sensors = realistic_sensors(rng, arm.peak_gravity_torque())
    hints = {1: moment_hint(arm, UR5_CONFIG, 1, rng)}
    sweeps = sweeps_of(arm, sensors, rng, UR5_CONFIG, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = estimate_up(sweeps, moment_hints=hints)
        assert estimate_up(sweeps, up_hint=(0.0, 0.1, -1.0), moment_hints=hints) == est
    assert degrees_between(est.up, arm.up) < 0.5
    with pytest.raises(SignConflictError, match="torque_sign=-1"):
        estimate_up(sweeps, up_hint=(0.0, 0.0, 1.0), moment_hints=hints)
