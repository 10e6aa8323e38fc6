"""Inertia, mass matrix, inverse dynamics, motion profiles and inertial sweeps of synthetic arms.

The truth is built independently of the code under test: link velocities from finite differences
of the link poses (or from explicit cross products), the kinetic energy summed link by link, the
Coriolis terms from finite differences of the mass matrix (Christoffel symbols), and the textbook
planar two-link arm.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gravdir.synthetic import SyntheticArm, random_arm, up_from_base_tilt, ur5_arm

seeds = st.integers(0, 2**32 - 1)


def random_inertia(rng: np.random.Generator) -> np.ndarray:
    """The inertia about its centre of mass of a random cloud of point masses (consistent)."""
    points = rng.normal(size=(6, 3)) * rng.uniform(0.02, 0.2)
    w = rng.uniform(0.1, 1.0, 6)
    d = points - (w[:, None] * points).sum(0) / w.sum()
    return sum(wi * (di @ di * np.eye(3) - np.outer(di, di)) for wi, di in zip(w, d, strict=True))


def arm_with_inertias(seed: int, n: int = 5) -> SyntheticArm:
    rng = np.random.default_rng(seed)
    base = random_arm(rng, n)
    inertias = np.stack([random_inertia(rng) for _ in range(n)])
    return SyntheticArm(base.dh, base.masses, base.coms, base.up, inertias=inertias)


def kinetic_energy_fd(arm, q: np.ndarray, qd: np.ndarray, h: float = 1e-6) -> float:
    """½ Σ m v² + ω·Iω, velocities from central differences of the link poses along qd."""
    ahead, behind, now = arm.link_poses(q + h * qd), arm.link_poses(q - h * qd), arm.link_poses(q)
    c1, c0 = arm.com_positions(q + h * qd), arm.com_positions(q - h * qd)
    total = 0.0
    for k in range(arm.n_joints):
        v = (c1[k] - c0[k]) / (2 * h)
        rdot = (ahead[k + 1, :3, :3] - behind[k + 1, :3, :3]) / (2 * h)
        spin = rdot @ now[k + 1, :3, :3].T  # [ω]×
        omega = np.array([spin[2, 1], spin[0, 2], spin[1, 0]])
        inertia = now[k + 1, :3, :3] @ arm.inertias[k] @ now[k + 1, :3, :3].T
        total += 0.5 * arm.masses[k] * v @ v + 0.5 * omega @ inertia @ omega
    return total


def kinetic_energy_cross(arm, q: np.ndarray, qd: np.ndarray) -> float:
    """The same energy with link velocities from explicit cross products of the joint twists."""
    poses = arm.link_poses(q)
    coms = arm.com_positions(q)
    axes, points = arm._axes_points(poses)
    total = 0.0
    for k in range(arm.n_joints):
        omega = sum(axes[j] * qd[j] for j in range(k + 1))
        v = sum(np.cross(axes[j], coms[k] - points[j]) * qd[j] for j in range(k + 1))
        r = poses[k + 1, :3, :3]
        total += 0.5 * arm.masses[k] * v @ v + 0.5 * omega @ (r @ arm.inertias[k] @ r.T) @ omega
    return total


def mass_matrix_from_energy(energy, arm, q: np.ndarray) -> np.ndarray:
    """M from an energy quadratic in qd: M_ij = T(e_i + e_j) - T(e_i) - T(e_j) (exact)."""
    n = arm.n_joints
    e = np.eye(n)
    return np.array(
        [
            [
                energy(arm, q, e[i] + e[j]) - energy(arm, q, e[i]) - energy(arm, q, e[j])
                for j in range(n)
            ]
            for i in range(n)
        ]
    )


# --------------------------------------------------------------------------------------------
# Mass matrix and joint inertia


@settings(max_examples=15, deadline=None)
@given(seed=seeds)
def test_mass_matrix_equals_kinetic_energy_of_link_velocities(seed: int) -> None:
    arm = arm_with_inertias(seed)
    q = np.random.default_rng(seed + 1).uniform(-np.pi, np.pi, arm.n_joints)
    m = arm.mass_matrix(q)
    scale = np.abs(m).max()
    fd = mass_matrix_from_energy(kinetic_energy_fd, arm, q)
    np.testing.assert_allclose(m, fd, atol=1e-7 * scale)
    cross = mass_matrix_from_energy(kinetic_energy_cross, arm, q)
    np.testing.assert_allclose(m, cross, atol=1e-12 * scale)
    np.testing.assert_allclose(arm.joint_inertia(q), np.diag(m), rtol=1e-12)
    np.testing.assert_allclose(m, m.T, atol=1e-14 * scale)
    assert np.linalg.eigvalsh(m).min() > -1e-12 * scale


def test_planar_two_link_matches_the_textbook() -> None:
    # Spong, Hutchinson & Vidyasagar, Robot Modeling and Control (2006), §7.4.1: two links of
    # lengths l1, l2 with centres at lc1, lc2 and inertias I1, I2 about axes parallel to z.
    l1, lc1, lc2, m1, m2, i1, i2 = 0.7, 0.3, 0.25, 3.0, 2.0, 0.05, 0.02
    inertias = np.stack([np.diag([0.01, i1, i1]), np.diag([0.004, i2, i2])])
    arm = SyntheticArm(
        dh=[[0, 0, l1, 0], [0, 0, 0.5, 0]],
        masses=[m1, m2],
        coms=[[lc1 - l1, 0, 0], [lc2 - 0.5, 0, 0]],
        inertias=inertias,
    )
    for q2 in (0.0, 0.7, -2.1):
        m = arm.mass_matrix([0.4, q2])
        c2 = np.cos(q2)
        expected = np.array(
            [
                [
                    m1 * lc1**2 + m2 * (l1**2 + lc2**2 + 2 * l1 * lc2 * c2) + i1 + i2,
                    m2 * (lc2**2 + l1 * lc2 * c2) + i2,
                ],
                [m2 * (lc2**2 + l1 * lc2 * c2) + i2, m2 * lc2**2 + i2],
            ]
        )
        np.testing.assert_allclose(m, expected, rtol=1e-12)


@given(seed=seeds, joint=st.integers(0, 4))
@settings(max_examples=20, deadline=None)
def test_joint_inertia_depends_only_on_distal_joints(seed: int, joint: int) -> None:
    arm = arm_with_inertias(seed)
    rng = np.random.default_rng(seed)
    q = rng.uniform(-np.pi, np.pi, 5)
    moved = q.copy()
    moved[: joint + 1] = rng.uniform(-np.pi, np.pi, joint + 1)  # the joint and proximal ones
    before, after = arm.joint_inertia(q)[joint], arm.joint_inertia(moved)[joint]
    assert after == pytest.approx(before, rel=1e-12)
    # ... but distal joints change it (generically).
    if joint < 3:
        other = q.copy()
        other[joint + 1] += 1.0
        assert abs(arm.joint_inertia(other)[joint] - before) > 1e-9 * before


def test_point_masses_by_default_and_batches() -> None:
    arm = ur5_arm()
    np.testing.assert_array_equal(arm.inertias, np.zeros((6, 3, 3)))
    rng = np.random.default_rng(3)
    q = rng.uniform(-np.pi, np.pi, (4, 2, 6))
    batch = arm.mass_matrix(q)
    diag = arm.joint_inertia(q)
    assert batch.shape == (4, 2, 6, 6) and diag.shape == (4, 2, 6)
    for index in np.ndindex(4, 2):
        np.testing.assert_allclose(batch[index], arm.mass_matrix(q[index]), rtol=1e-14)
        np.testing.assert_allclose(diag[index], np.diag(batch[index]), atol=1e-12 * diag.max())
    # A point mass m at distance r from a lone joint's axis: m r². Link frame: Rz(q) Tz(0.3)
    # Tx(0.5) Rx(0.4), so the mass at (0.1, 0.2, 0) sits 0.6 along x and 0.2 cos 0.4 along y.
    one = SyntheticArm(dh=[[0.3, 0, 0.5, 0.4]], masses=[2.0], coms=[[0.1, 0.2, 0.0]])
    r2 = 0.6**2 + (0.2 * np.cos(0.4)) ** 2
    assert one.joint_inertia([1.0])[0] == pytest.approx(2.0 * r2, rel=1e-12)


# --------------------------------------------------------------------------------------------
# Inverse dynamics (recursive Newton-Euler)


@settings(max_examples=10, deadline=None)
@given(seed=seeds)
def test_inverse_dynamics_is_the_lagrangian(seed: int) -> None:
    arm = arm_with_inertias(seed)
    rng = np.random.default_rng(seed + 2)
    n = arm.n_joints
    q, qd, qdd = rng.uniform(-np.pi, np.pi, n), rng.normal(size=n), rng.normal(size=n)
    m = arm.mass_matrix(q)
    g = arm.gravity_torque(q)
    np.testing.assert_allclose(arm.inverse_dynamics(q, 0 * qd, 0 * qdd), g, atol=1e-12)
    scale = np.abs(m).max()
    np.testing.assert_allclose(
        arm.inverse_dynamics(q, 0 * qd, qdd) - g, m @ qdd, atol=1e-12 * scale
    )
    # Coriolis and centripetal torques from the Christoffel symbols of finite-differenced M.
    h, e = 1e-6, np.eye(n)
    dm = np.stack(
        [
            (arm.mass_matrix(q + h * e[k]) - arm.mass_matrix(q - h * e[k])) / (2 * h)
            for k in range(n)
        ]
    )  # dm[k, i, j] = dM_ij / dq_k
    coriolis = np.einsum("kij,j,k->i", dm, qd, qd) - 0.5 * np.einsum("ijk,j,k->i", dm, qd, qd)
    np.testing.assert_allclose(
        arm.inverse_dynamics(q, qd, 0 * qdd) - g, coriolis, atol=1e-7 * scale
    )
    # Power balance: d/dt (T + V) = qd · tau along the motion.
    full = arm.inverse_dynamics(q, qd, qdd)
    dt = 1e-6

    def energy(t: float) -> float:
        qt, vt = q + qd * t + 0.5 * qdd * t**2, qd + qdd * t
        return 0.5 * vt @ arm.mass_matrix(qt) @ vt + float(arm.potential_energy(qt))

    assert (energy(dt) - energy(-dt)) / (2 * dt) == pytest.approx(qd @ full, rel=1e-6, abs=1e-6)


def test_inverse_dynamics_broadcasts_and_rejects_bad_shapes() -> None:
    arm = ur5_arm(up_from_base_tilt(0.2, 0.3))
    rng = np.random.default_rng(5)
    q, qd = rng.uniform(-2, 2, (3, 6)), rng.normal(size=6)
    out = arm.inverse_dynamics(q, qd, np.zeros(6))
    for i in range(3):
        np.testing.assert_allclose(out[i], arm.inverse_dynamics(q[i], qd, np.zeros(6)), rtol=1e-14)
    with pytest.raises(ValueError, match="`velocity` to have shape"):
        arm.inverse_dynamics(q, np.zeros(5), np.zeros(6))
    with pytest.raises(ValueError, match="broadcastable"):
        arm.inverse_dynamics(q, np.zeros((2, 6)), np.zeros(6))
    with pytest.raises(ValueError, match="`velocity` and `acceleration` small enough"):
        arm.inverse_dynamics(q, np.full(6, 1e200), np.zeros(6))


# --------------------------------------------------------------------------------------------
# Inertia checks


@pytest.mark.parametrize(
    ("inertias", "match"),
    [
        (np.zeros((2, 3, 3)), r"`inertias` to have shape \(3, 3, 3\)"),
        (
            np.stack(
                [np.diag([1.0, 1.0, 1.0])] * 2 + [np.array([[1, 0.1, 0], [0, 1, 0], [0, 0, 1]])]
            ),
            "symmetric",
        ),
        (np.stack([np.eye(3), np.eye(3), np.diag([1.0, 1.0, -0.5])]), "positive semi-definite"),
        (np.stack([np.eye(3), np.eye(3), np.diag([0.1, 0.1, 1.0])]), "triangle inequality"),
        (np.full((3, 3, 3), 1e260), "within"),
        (np.full((3, 3, 3), np.nan), "`inertias`"),
    ],
)
def test_inconsistent_inertias_are_refused(inertias: np.ndarray, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        SyntheticArm(np.zeros((3, 4)), np.ones(3), np.zeros((3, 3)), inertias=inertias)


def test_consistent_limits_are_accepted_and_huge_scales_refused() -> None:
    rod = np.diag([0.0, 1.0, 1.0])  # a thin rod: on the edge of the triangle inequality
    arm = SyntheticArm([[0, 0, 1.0, 0]], [1.0], [[0, 0, 0]], inertias=[rod * (1 + 1e-9)])
    assert arm.joint_inertia([0.0])[0] == pytest.approx(1.0 + 1.0, rel=1e-6)
    with pytest.raises(ValueError, match="mass matrix within 1e"):
        SyntheticArm([[0, 0, 1e99, 0]], [1e120], [[0, 0, 0]], gravity=1e-200)
    arm = SyntheticArm([[0, 0, 1.0, 0]], [1.0], [[0, 0, 0]])
    assert dataclasses.replace(arm, inertias=[np.eye(3)]).inertias[0, 0, 0] == 1.0
    assert arm != dataclasses.replace(arm, inertias=[np.eye(3)])
    assert "inertias" in arm.to_dict()


# --------------------------------------------------------------------------------------------
# Sweeps: profiles, acceleration, jitter, inertial torque

PROFILES = ("trapezoid", "s-curve", "varying")
CONFIG = np.array([0.3, -1.0, 0.5, -0.7, 0.4, 0.1])


def _record(**overrides: object):
    arm = overrides.pop("arm", ur5_arm(up_from_base_tilt(0.3, 0.8)))
    kwargs: dict[str, object] = {
        "joint": 1,
        "configuration": CONFIG,
        "start": -1.6,
        "stop": -0.2,
        "speed": 0.5,
        "sample_rate": 1000.0,
    }
    kwargs.update(overrides)
    return arm, arm.sweep(**kwargs)  # type: ignore[arg-type]


def _smooth_part(rec, ramp: float, margin: float = 2.0) -> np.ndarray:
    """Samples at least `margin` samples away from a point where the acceleration steps."""
    step = np.abs(np.diff(rec.acceleration)) > 1e-9 * np.abs(rec.acceleration).max()
    near = np.zeros(rec.q.size, dtype=bool)
    for k in np.flatnonzero(step):
        near[max(0, k - int(margin)) : k + int(margin) + 2] = True
    return ~near


@pytest.mark.parametrize("profile", PROFILES)
def test_profile_position_velocity_and_acceleration_agree(profile: str) -> None:
    _, rec = _record(profile=profile, cycles=2)
    dt = 1.0 / rec.sample_rate
    # v = dq/dt and a = dv/dt by central differences (second-order accurate).
    v_fd = np.gradient(rec.q, rec.time)
    a_fd = np.gradient(rec.velocity, rec.time)
    jerk = np.abs(np.diff(rec.acceleration)).max() / dt
    inner = slice(1, -1)
    ok = _smooth_part(rec, 0.2)[inner]
    np.testing.assert_allclose(v_fd[inner][ok], rec.velocity[inner][ok], atol=jerk * dt**2 + 1e-9)
    np.testing.assert_allclose(a_fd[inner][ok], rec.acceleration[inner][ok], atol=1e-3 * 8)
    # Rest at both ends of every pass: the record starts and ends at rest at `start`.
    assert rec.velocity[0] == 0.0 and abs(rec.velocity[-1]) < 1e-9
    assert rec.q[0] == pytest.approx(-1.6) and rec.q[-1] == pytest.approx(-1.6, abs=1e-9)
    assert rec.q.max() == pytest.approx(-0.2, abs=1e-9)
    assert np.abs(rec.velocity).max() == pytest.approx(0.5, rel=1e-6)


def test_profile_shapes_and_default_acceleration() -> None:
    _, trap = _record()
    ramp = 0.2  # the default ramp: acceleration speed / 0.2 s = 2.5 rad/s²
    assert set(np.round(np.abs(trap.acceleration), 9)) == {0.0, 2.5}
    np.testing.assert_array_equal(trap.acceleration[trap.at_cruise], 0.0)
    _, smooth = _record(profile="s-curve")
    assert np.abs(smooth.acceleration).max() == pytest.approx(np.pi / 2 * 0.5 / ramp, rel=1e-4)
    # Continuous acceleration, jerk bounded by pi^2 v / (2 T_r^2).
    jerk = np.abs(np.diff(smooth.acceleration)) * smooth.sample_rate
    assert jerk.max() <= np.pi**2 * 0.5 / (2 * ramp**2) * (1 + 1e-6)
    assert smooth.time[-1] == pytest.approx(trap.time[-1], abs=1e-3)  # same pass time
    _, varying = _record(profile="varying")
    assert not varying.at_cruise.any()
    assert varying.time[-1] == pytest.approx(2 * 2 * 1.4 / 0.5, abs=1e-3)  # T = 2D / v per pass
    # Mostly accelerating: the speed grows over most of each pass.
    speed_up = np.sign(varying.acceleration) == np.sign(varying.velocity)
    assert speed_up.mean() > 0.85


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("acceleration", [1.0, 4.0])
def test_acceleration_sets_the_peak(profile: str, acceleration: float) -> None:
    _, rec = _record(profile=profile, acceleration=acceleration)
    assert np.abs(rec.acceleration).max() == pytest.approx(acceleration, rel=1e-4)


def test_profile_arguments_are_checked() -> None:
    cases = [
        ({"ramp_time": 0.2, "acceleration": 2.0}, "either `ramp_time` or `acceleration`"),
        ({"profile": "s-curve", "ramp_time": 0.0}, "positive `ramp_time`"),
        ({"inertial": True, "ramp_time": 0.0}, "positive `ramp_time`"),
        ({"profile": "sine"}, "`profile` to be one of"),
        ({"inertial": 1}, "`inertial` to be True or False"),
        ({"acceleration": 0.1}, r"`speed` \* `ramp_time`.*`acceleration`"),
        ({"acceleration": -1.0}, "`acceleration`"),
        ({"time_jitter": 1e-3}, "`time_jitter` at most a quarter"),
        ({"time_jitter": 1e-5}, "`rng`"),
        ({"speed": 1e200, "ramp_time": 1e-200, "start": -1e-8, "stop": 1e-8}, "finite accel"),
    ]
    for overrides, match in cases:
        with pytest.raises(ValueError, match=match):
            _record(**overrides)


def test_ramp_time_zero_keeps_a_step_reversal() -> None:
    _, rec = _record(ramp_time=0.0)
    np.testing.assert_array_equal(rec.acceleration, 0.0)
    np.testing.assert_allclose(np.abs(rec.velocity), 0.5)


@pytest.mark.slow
@pytest.mark.parametrize("profile", PROFILES)
def test_inertial_sweep_torque_is_inertia_times_acceleration_plus_gravity(profile: str) -> None:
    rng = np.random.default_rng(8)
    base = ur5_arm(up_from_base_tilt(0.4, -0.6))
    inertias = np.stack([random_inertia(rng) for _ in range(6)])
    arm = SyntheticArm(base.dh, base.masses, base.coms, base.up, inertias=inertias)
    for joint in (0, 1, 2):
        _, rec = _record(arm=arm, joint=joint, profile=profile, inertial=True, acceleration=3.0)
        positions = rec.joint_positions
        m_jj = arm.joint_inertia(positions)[:, joint]
        np.testing.assert_allclose(
            rec.torque, m_jj * rec.acceleration + rec.gravity_torque, rtol=1e-12, atol=1e-12
        )
        # The recursive Newton-Euler torque of the same motion (Coriolis included) agrees.
        qd = np.zeros_like(positions)
        qdd = np.zeros_like(positions)
        qd[:, joint], qdd[:, joint] = rec.velocity, rec.acceleration
        full = arm.inverse_dynamics(positions, qd, qdd)[:, joint]
        np.testing.assert_allclose(rec.torque, full, atol=1e-10 * np.abs(full).max())
        assert np.abs(rec.torque - rec.gravity_torque).max() > 0.05
        # Quasi-static by default: the same sweep without the inertial torque.
        _, still = _record(arm=arm, joint=joint, profile=profile, acceleration=3.0)
        np.testing.assert_array_equal(still.torque, still.gravity_torque)
        np.testing.assert_array_equal(still.acceleration, rec.acceleration)


def test_inertial_torque_passes_through_the_sensor_gain() -> None:
    from gravdir.synthetic import TorqueSensor

    sensor = TorqueSensor(gain=1.1, offset=0.2, coulomb=0.5, viscous=0.3, load_coefficient=0.04)
    arm, rec = _record(sensor=sensor, inertial=True, profile="s-curve")
    tau, v = rec.gravity_torque, rec.velocity
    m_jj = arm.joint_inertia(rec.joint_positions)[:, 1]
    rigid = tau + m_jj * rec.acceleration  # the load friction grows with all of it
    friction = (0.5 + 0.04 * np.abs(rigid)) * np.sign(v) + 0.3 * v
    expected = 1.1 * (rigid + friction) + 0.2
    np.testing.assert_allclose(rec.torque, expected, atol=1e-12)


def test_time_jitter_moves_the_samples_and_the_signals_follow() -> None:
    fs, jitter = 100.0, 0.5e-3
    _, rec = _record(sample_rate=fs, time_jitter=jitter, rng=np.random.default_rng(4))
    _, plain = _record(sample_rate=fs)
    assert rec.q.size == plain.q.size
    offset = rec.time - np.arange(rec.q.size) / fs
    assert np.std(offset[1:-1]) == pytest.approx(jitter, rel=0.1)
    assert np.all(np.diff(rec.time) > 0) and rec.time[0] >= 0.0
    assert np.abs(offset).max() <= 0.45 / fs
    # On the first cruise stretch the angle is linear in the (jittered) time.
    cruise = rec.at_cruise & (rec.direction > 0)
    t0 = 0.2 / 2  # the ramp covers speed * T_r / 2 of the arc
    np.testing.assert_allclose(
        rec.q[cruise], -1.6 + 0.5 * t0 + 0.5 * (rec.time[cruise] - 0.2), atol=1e-12
    )
    # Reproducible from the seed; a different seed moves other samples.
    _, again = _record(sample_rate=fs, time_jitter=jitter, rng=np.random.default_rng(4))
    assert again == rec
    _, other = _record(sample_rate=fs, time_jitter=jitter, rng=np.random.default_rng(5))
    assert not np.array_equal(other.time, rec.time)


def test_record_built_by_hand_has_zero_acceleration() -> None:
    from gravdir.synthetic import SweepRecord

    q = np.linspace(0, 1, 4)
    kwargs = {
        "joint": 0,
        "configuration": np.zeros(1),
        "up": [0, 0, 1.0],
        "time": q,
        "q": q,
        "velocity": q,
        "direction": np.ones(4),
        "at_cruise": np.ones(4, dtype=bool),
        "torque": q,
        "gravity_torque": q,
        "speed": 0.1,
        "sample_rate": 1.0,
    }
    np.testing.assert_array_equal(SweepRecord(**kwargs).acceleration, np.zeros(4))
    empty = {
        **kwargs,
        **{
            k: np.empty(0)
            for k in ("time", "q", "velocity", "direction", "torque", "gravity_torque")
        },
    }
    assert SweepRecord(**empty, acceleration=np.empty(0)).acceleration.shape == (0,)


# --------------------------------------------------------------------------------------------
# Hostile inputs to the new methods


def _method_cases() -> list[tuple[str, object, tuple[object, ...], dict[str, object]]]:
    from gravdir.synthetic import UR5E_LIKE_URDF, arm_from_urdf

    arm = arm_with_inertias(9, 6)
    urdf = arm_from_urdf(UR5E_LIKE_URDF, tip_link="tool0", up=up_from_base_tilt(0.3, 0.2))
    q = np.array([[0.3, -1.0, 0.5, -0.7, 0.4, 0.1], [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]])
    qd = np.array([0.1, -0.2, 0.3, 0.0, 0.5, -0.1])
    sweep_kwargs: dict[str, object] = {
        "speed": 0.5,
        "sample_rate": 50.0,
        "acceleration": 3.0,
        "profile": "s-curve",
        "inertial": True,
        "time_jitter": 1e-3,
        "rng": np.random.default_rng(2),
    }
    return [
        ("joint_inertia", arm.joint_inertia, (q,), {}),
        ("mass_matrix", arm.mass_matrix, (q,), {}),
        ("inverse_dynamics", arm.inverse_dynamics, (q, qd, qd), {}),
        ("sweep", arm.sweep, (1, CONFIG, -1.0, 1.0), sweep_kwargs),
        ("urdf link_poses", urdf.link_poses, (q,), {}),
        ("urdf gravity_torque", urdf.gravity_torque, (q,), {}),
        ("urdf inverse_dynamics", urdf.inverse_dynamics, (q, qd, qd), {}),
        ("urdf sweep", urdf.sweep, (2, CONFIG, -1.0, 1.0), sweep_kwargs),
    ]


@pytest.mark.parametrize("index", range(8))
def test_new_methods_give_a_clear_error_or_a_finite_result(index: int) -> None:
    import test_fuzz

    name, method, args, kwargs = _method_cases()[index]
    kind, value = test_fuzz._outcome(method, args, kwargs)
    assert kind == "result", f"{name}: {value!r}"
    for context, a, k in test_fuzz._mutations(args, kwargs):
        kind, value = test_fuzz._outcome(method, a, k)
        assert kind != "type error", f"{name}, {context}: {value!r}"
        if kind == "error":
            test_fuzz._check_error(value, f"{name}, {context}")
        else:
            test_fuzz._check_result(value, f"{name}, {context}")
