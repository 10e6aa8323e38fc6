"""Synthetic arms from URDF text, the UR5e-like description, and synthetic controller logs.

The truth is computed here from the numbers the URDF text is written from: link poses by SciPy
rotations (fixed-axis roll-pitch-yaw, rotation vectors), every link kept as its own body (no
lumping), potential and kinetic energy summed link by link, velocities by finite differences.
"""

from __future__ import annotations

import dataclasses
import json
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from gravdir._constants import STANDARD_GRAVITY
from gravdir.synthetic import (
    UR5E_LIKE_URDF,
    SyntheticArm,
    SyntheticUrdfArm,
    TorqueSensor,
    arm_from_urdf,
    controller_log,
    realistic_sensors,
    up_from_base_tilt,
)

G = STANDARD_GRAVITY
seeds = st.integers(0, 2**32 - 1)


# --------------------------------------------------------------------------------------------
# A random URDF and its independent model


def _f(x: float) -> str:
    return repr(float(x))


def _consistent_inertia(rng: np.random.Generator) -> np.ndarray:
    points = rng.normal(size=(5, 3)) * rng.uniform(0.02, 0.15)
    w = rng.uniform(0.1, 1.0, 5)
    d = points - (w[:, None] * points).sum(0) / w.sum()
    return sum(wi * (di @ di * np.eye(3) - np.outer(di, di)) for wi, di in zip(w, d, strict=True))


class RandomRobot:
    """A random URDF: revolute joints, fixed spacers between them, fixed gadgets hanging off
    the chain, a fixed tool with mass, and the truth computed without the code under test."""

    def __init__(self, seed: int, n: int = 4) -> None:
        rng = np.random.default_rng(seed)
        self.n = n
        self.links: dict[str, dict] = {}  # name -> inertial (mass, xyz, rpy, inertia) or None
        self.joints: list[dict] = []  # name, kind, parent, child, xyz, rpy, axis
        self._add_link("base", None)
        parent = "base"
        for i in range(n):
            if rng.random() < 0.5:  # a fixed spacer with its own mass before the joint
                self._add_link(f"spacer{i}", self._inertial(rng))
                self._add_joint(rng, f"fix{i}", "fixed", parent, f"spacer{i}")
                parent = f"spacer{i}"
            self._add_link(f"link{i}", self._inertial(rng))
            self._add_joint(rng, f"joint{i}", "revolute", parent, f"link{i}")
            if rng.random() < 0.5:  # a fixed gadget off the path
                self._add_link(f"gadget{i}", self._inertial(rng))
                self._add_joint(rng, f"mount{i}", "fixed", f"link{i}", f"gadget{i}")
            parent = f"link{i}"
        self._add_link("tool", self._inertial(rng))
        self._add_joint(rng, "flange", "fixed", parent, "tool")
        self.moving = [j["child"] for j in self.joints if j["kind"] == "revolute"]

    @staticmethod
    def _inertial(rng: np.random.Generator) -> dict:
        return {
            "mass": rng.uniform(0.2, 5.0),
            "xyz": rng.uniform(-0.2, 0.2, 3),
            "rpy": rng.uniform(-np.pi, np.pi, 3),
            "inertia": _consistent_inertia(rng),
        }

    def _add_link(self, name: str, inertial: dict | None) -> None:
        self.links[name] = inertial  # type: ignore[assignment]

    def _add_joint(self, rng, name, kind, parent, child) -> None:
        axis = rng.normal(size=3)
        self.joints.append(
            {
                "name": name,
                "kind": kind,
                "parent": parent,
                "child": child,
                "xyz": rng.uniform(-0.4, 0.4, 3),
                "rpy": rng.uniform(-np.pi, np.pi, 3),
                "axis": axis / np.linalg.norm(axis),
            }
        )

    def text(self) -> str:
        out = ['<?xml version="1.0"?>', '<robot name="random">']
        for name, inertial in self.links.items():
            if inertial is None:
                out.append(f'  <link name="{name}"/>')
                continue
            i = inertial["inertia"]
            out += [
                f'  <link name="{name}"><inertial>',
                f'    <origin xyz="{" ".join(map(_f, inertial["xyz"]))}" '
                f'rpy="{" ".join(map(_f, inertial["rpy"]))}"/>',
                f'    <mass value="{_f(inertial["mass"])}"/>',
                f'    <inertia ixx="{_f(i[0, 0])}" ixy="{_f(i[0, 1])}" ixz="{_f(i[0, 2])}" '
                f'iyy="{_f(i[1, 1])}" iyz="{_f(i[1, 2])}" izz="{_f(i[2, 2])}"/>',
                "  </inertial></link>",
            ]
        for j in self.joints:
            out += [
                f'  <joint name="{j["name"]}" type="{j["kind"]}">',
                f'    <parent link="{j["parent"]}"/> <child link="{j["child"]}"/>',
                f'    <origin xyz="{" ".join(map(_f, j["xyz"]))}" '
                f'rpy="{" ".join(map(_f, j["rpy"]))}"/>',
                f'    <axis xyz="{" ".join(map(_f, j["axis"]))}"/>',
                "  </joint>",
            ]
        out.append("</robot>")
        return "\n".join(out)

    def poses(self, q: np.ndarray) -> dict[str, np.ndarray]:
        """Pose of every link in the base frame at joint angles `q` (SciPy rotations)."""
        out = {"base": np.eye(4)}
        k = 0
        for j in self.joints:  # parents come first by construction
            origin = np.eye(4)
            origin[:3, :3] = Rotation.from_euler("xyz", j["rpy"]).as_matrix()
            origin[:3, 3] = j["xyz"]
            turn = np.eye(4)
            if j["kind"] == "revolute":
                turn[:3, :3] = Rotation.from_rotvec(j["axis"] * q[k]).as_matrix()
                k += 1
            out[j["child"]] = out[j["parent"]] @ origin @ turn
        return out

    def bodies(self, q: np.ndarray) -> list[tuple[float, np.ndarray, np.ndarray, np.ndarray]]:
        """(mass, centre of mass, orientation of its inertia frame, inertia) of every link that
        moves (links above the first joint do not)."""
        poses = self.poses(q)
        fixed_above = {"base"}
        for j in self.joints:
            if j["child"] == self.moving[0]:
                break
            fixed_above.add(j["child"])
        out = []
        for name, inertial in self.links.items():
            if inertial is None or name in fixed_above:
                continue
            frame = np.eye(4)
            frame[:3, :3] = Rotation.from_euler("xyz", inertial["rpy"]).as_matrix()
            frame[:3, 3] = inertial["xyz"]
            world = poses[name] @ frame
            out.append((inertial["mass"], world[:3, 3], world[:3, :3], inertial["inertia"]))
        return out

    def potential(self, q: np.ndarray, up: np.ndarray) -> float:
        return sum(m * G * up @ c for m, c, _, _ in self.bodies(q))

    def kinetic(self, q: np.ndarray, qd: np.ndarray, h: float = 1e-6) -> float:
        ahead, behind, now = self.bodies(q + h * qd), self.bodies(q - h * qd), self.bodies(q)
        total = 0.0
        for (m, c1, r1, _), (_, c0, r0, _), (_, _, r, inertia) in zip(
            ahead, behind, now, strict=True
        ):
            v = (c1 - c0) / (2 * h)
            spin = (r1 - r0) / (2 * h) @ r.T
            omega = np.array([spin[2, 1], spin[0, 2], spin[1, 0]])
            total += 0.5 * m * v @ v + 0.5 * omega @ (r @ inertia @ r.T) @ omega
        return total


@settings(max_examples=15, deadline=None)
@given(seed=seeds)
def test_urdf_arm_kinematics_match_explicit_products(seed: int) -> None:
    robot = RandomRobot(seed)
    arm = arm_from_urdf(robot.text(), tip_link="tool")
    assert arm.n_joints == robot.n
    q = np.random.default_rng(seed).uniform(-np.pi, np.pi, robot.n)
    poses, truth = arm.link_poses(q), robot.poses(q)
    for i, name in enumerate(robot.moving):
        np.testing.assert_allclose(poses[i + 1], truth[name], atol=1e-12)
    axes = arm.joint_axes(q)
    for i, name in enumerate(robot.moving):
        joint = next(j for j in robot.joints if j["child"] == name)
        np.testing.assert_allclose(axes[i], truth[name][:3, :3] @ joint["axis"], atol=1e-12)


@settings(max_examples=15, deadline=None)
@given(seed=seeds)
def test_urdf_arm_torque_is_gradient_of_potential_of_unlumped_links(seed: int) -> None:
    robot = RandomRobot(seed)
    rng = np.random.default_rng(seed)
    up = up_from_base_tilt(rng.uniform(0, np.pi), rng.uniform(-np.pi, np.pi))
    arm = arm_from_urdf(robot.text(), tip_link="tool", up=up)
    q = rng.uniform(-np.pi, np.pi, robot.n)
    h, e = 1e-6, np.eye(robot.n)
    grad = [
        (robot.potential(q + h * e[i], up) - robot.potential(q - h * e[i], up)) / (2 * h)
        for i in range(robot.n)
    ]
    torque = arm.gravity_torque(q)
    np.testing.assert_allclose(torque, grad, atol=1e-7 * np.abs(torque).max())
    assert float(arm.potential_energy(q)) - robot.potential(q, up) == pytest.approx(
        float(arm.potential_energy(np.zeros(robot.n))) - robot.potential(np.zeros(robot.n), up),
        abs=1e-9,
    )


@settings(max_examples=10, deadline=None)
@given(seed=seeds)
def test_urdf_arm_mass_matrix_is_kinetic_energy_of_unlumped_links(seed: int) -> None:
    # Fixed spacers, gadgets and the tool are separate bodies here; the arm lumps them into
    # their moving link by the parallel-axis theorem. The two must give the same energy.
    robot = RandomRobot(seed)
    arm = arm_from_urdf(robot.text(), tip_link="tool")
    q = np.random.default_rng(seed).uniform(-np.pi, np.pi, robot.n)
    e = np.eye(robot.n)
    fd = np.array(
        [
            [
                robot.kinetic(q, e[i] + e[j]) - robot.kinetic(q, e[i]) - robot.kinetic(q, e[j])
                for j in range(robot.n)
            ]
            for i in range(robot.n)
        ]
    )
    m = arm.mass_matrix(q)
    np.testing.assert_allclose(m, fd, atol=1e-7 * np.abs(m).max())


def test_fixed_tool_is_lumped_by_the_parallel_axis_theorem() -> None:
    text = """<robot name="lump">
      <link name="base"/>
      <link name="arm"><inertial><origin xyz="0.3 0 0"/><mass value="2"/>
        <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.05" iyz="0" izz="0.05"/></inertial></link>
      <link name="tool"><inertial><origin xyz="0 0.1 0" rpy="0 0 1.5707963267948966"/>
        <mass value="1"/>
        <inertia ixx="0.002" ixy="0" ixz="0" iyy="0.004" iyz="0" izz="0.005"/></inertial></link>
      <joint name="hinge" type="revolute"><parent link="base"/><child link="arm"/>
        <axis xyz="0 0 1"/></joint>
      <joint name="mount" type="fixed"><parent link="arm"/><child link="tool"/>
        <origin xyz="0.6 0 0"/></joint>
    </robot>"""
    arm = arm_from_urdf(text)
    # By hand: masses 2 at (0.3, 0, 0) and 1 at (0.6, 0.1, 0) -> 3 kg at (0.4, 1/30, 0).
    assert arm.masses[0] == pytest.approx(3.0)
    np.testing.assert_allclose(arm.coms[0], [0.4, 1 / 30, 0.0], atol=1e-15)
    tool = np.diag([0.004, 0.002, 0.005])  # the tool's axes turned by 90° about z
    d1, d2 = np.array([-0.1, -1 / 30, 0.0]), np.array([0.2, 0.1 - 1 / 30, 0.0])
    expected = (
        np.diag([0.01, 0.05, 0.05])
        + tool
        + 2 * (d1 @ d1 * np.eye(3) - np.outer(d1, d1))
        + 1 * (d2 @ d2 * np.eye(3) - np.outer(d2, d2))
    )
    np.testing.assert_allclose(arm.inertias[0], expected, atol=1e-15)
    # About the hinge: izz of both bodies plus m r^2 of each centre.
    about_hinge = 0.05 + 0.005 + 2 * 0.3**2 + 1 * (0.6**2 + 0.1**2)
    assert arm.joint_inertia([0.7])[0] == pytest.approx(about_hinge, rel=1e-12)


# --------------------------------------------------------------------------------------------
# The UR5e-like description


UR5E_DH = np.array(
    [
        [0.1625, 0.0, 0.0, np.pi / 2],
        [0.0, 0.0, -0.425, 0.0],
        [0.0, 0.0, -0.3922, 0.0],
        [0.1333, 0.0, 0.0, np.pi / 2],
        [0.0997, 0.0, 0.0, -np.pi / 2],
        [0.0996, 0.0, 0.0, 0.0],
    ]
)
UR5E_MASSES = [3.761, 8.058, 2.846, 1.37, 1.3, 0.365]
UR5E_COMS_DH = [
    [0, -0.02561, 0.00193],
    [0.2125, 0, 0.11336],
    [0.15, 0.0, 0.0265],
    [0, -0.0018, 0.01634],
    [0, 0.0018, 0.01634],
    [0, 0, -0.001159],
]
# The inertias of the text, written in the DH frames (the text's inertial frames are these).
UR5E_INERTIAS_DH = np.stack(
    [
        np.diag(v)
        for v in (
            [0.0104, 0.0104, 0.0068],
            [0.0145, 0.1285, 0.1285],
            [0.0029, 0.0379, 0.0379],
            [0.00234, 0.00234, 0.00139],
            [0.00222, 0.00222, 0.00132],
            [0.000173, 0.000173, 0.000292],
        )
    ]
)
RZ_PI = np.diag([-1.0, -1.0, 1.0])  # base_link -> the controller's base: pi about z


@pytest.mark.parametrize("seed", range(5))
def test_ur5e_like_urdf_is_the_published_dh_arm_in_the_controller_base(seed: int) -> None:
    rng = np.random.default_rng(seed)
    up = up_from_base_tilt(rng.uniform(0, np.pi), rng.uniform(-np.pi, np.pi))  # in base_link
    urdf = arm_from_urdf(UR5E_LIKE_URDF, tip_link="tool0", up=up)
    dh = SyntheticArm(UR5E_DH, UR5E_MASSES, UR5E_COMS_DH, RZ_PI @ up, inertias=UR5E_INERTIAS_DH)
    q = rng.uniform(-np.pi, np.pi, (3, 6))
    np.testing.assert_allclose(urdf.gravity_torque(q), dh.gravity_torque(q), atol=1e-12)
    np.testing.assert_allclose(urdf.mass_matrix(q), dh.mass_matrix(q), atol=1e-12)
    np.testing.assert_allclose(urdf.joint_axes(q), dh.joint_axes(q) @ RZ_PI, atol=1e-12)
    np.testing.assert_allclose(urdf.com_positions(q), dh.com_positions(q) @ RZ_PI, atol=1e-12)
    qd, qdd = rng.normal(size=(3, 6)), rng.normal(size=(3, 6))
    np.testing.assert_allclose(
        urdf.inverse_dynamics(q, qd, qdd), dh.inverse_dynamics(q, qd, qdd), atol=1e-11
    )


def test_ur5e_like_urdf_frames() -> None:
    arm = arm_from_urdf(UR5E_LIKE_URDF, tip_link="tool0")
    assert arm.joint_names == (
        "shoulder_pan_joint",
        "shoulder_lift_joint",
        "elbow_joint",
        "wrist_1_joint",
        "wrist_2_joint",
        "wrist_3_joint",
    )
    assert arm.masses.sum() == pytest.approx(17.7)  # the base does not move
    # At q = 0 the arm stretches along +x of base_link: -x of the controller's base.
    wrist = arm.link_poses(np.zeros(6))[4, :3, 3]
    np.testing.assert_allclose(wrist, [0.425 + 0.3922, 0.1333, 0.1625], atol=1e-12)
    with pytest.raises(ValueError, match=r"`tip_link`.*base, tool0"):
        arm_from_urdf(UR5E_LIKE_URDF)


# --------------------------------------------------------------------------------------------
# Checks and the result contract


def test_arm_from_urdf_refuses_what_it_cannot_model() -> None:
    bad = """<robot name="bad"><link name="a"/>
      <link name="b"><inertial><mass value="1"/>
        <inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="1.0"/></inertial></link>
      <joint name="j" type="revolute"><parent link="a"/><child link="b"/>
        <axis xyz="0 0 1"/></joint></robot>"""
    with pytest.raises(ValueError, match=r"`urdf_text`.*triangle inequality"):
        arm_from_urdf(bad)
    with pytest.raises(ValueError, match="`up` to have unit norm"):
        arm_from_urdf(UR5E_LIKE_URDF, tip_link="tool0", up=[0, 0, 2])
    with pytest.raises(ValueError, match="`gravity`"):
        arm_from_urdf(UR5E_LIKE_URDF, tip_link="tool0", gravity=-9.8)
    with pytest.raises(ValueError, match="`name`"):
        arm_from_urdf(UR5E_LIKE_URDF, tip_link="tool0", name=3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="DOCTYPE"):
        arm_from_urdf('<!DOCTYPE r [<!ENTITY a "b">]><robot name="r"/>')


def test_urdf_arm_constructor_checks() -> None:
    good = arm_from_urdf(UR5E_LIKE_URDF, tip_link="tool0")
    fields = {f.name: getattr(good, f.name) for f in dataclasses.fields(good)}
    skew = np.array(fields["origins"])
    skew[0, :3, :3] *= 1.1
    cases = [
        ({"origins": np.zeros((0, 4, 4))}, "`origins` to have shape"),
        ({"origins": skew}, "`origins` to be rotation"),
        ({"axes": np.array(fields["axes"]) * 2}, "`axes` to be unit"),
        ({"masses": -np.array(fields["masses"])}, "`masses` to be non-negative"),
        ({"coms": np.zeros((6, 2))}, r"`coms` to have shape \(6, 3\)"),
        ({"joint_names": ("a", "b")}, "`joint_names`"),
        ({"joint_names": "abcdef"}, "`joint_names`"),
        ({"inertias": -np.array(fields["inertias"])}, "positive semi-definite"),
    ]
    for change, match in cases:
        with pytest.raises(ValueError, match=match):
            SyntheticUrdfArm(**{**fields, **change})
    assert SyntheticUrdfArm(**{**fields, "joint_names": ()}).joint_names == ()


def test_urdf_arm_follows_the_result_contract() -> None:
    arm = arm_from_urdf(UR5E_LIKE_URDF, tip_link="tool0", up=up_from_base_tilt(0.2, 0.4))
    copy = pickle.loads(pickle.dumps(arm))
    assert copy == arm and arm == dataclasses.replace(arm)
    assert arm != dataclasses.replace(arm, gravity=9.81)
    json.dumps(arm.to_dict())
    with pytest.raises(ValueError, match="read-only"):
        arm.origins[0, 0, 0] = 2.0
    assert "SyntheticUrdfArm(" in repr(arm) and "tilt=11.46°" in repr(arm)


# --------------------------------------------------------------------------------------------
# Controller logs

CONFIG = np.array([0.0, -1.5, 1.2, -1.0, 0.5, 0.0])


def _session(**overrides: object):
    arm = overrides.pop(
        "arm", arm_from_urdf(UR5E_LIKE_URDF, tip_link="tool0", up=up_from_base_tilt(0.25, 1.0))
    )
    args = {
        "joints": [0, 1, 1, 2],
        "configurations": [CONFIG, CONFIG, CONFIG + [np.pi / 2, 0, 0, 0, 0, 0], CONFIG],
        "arcs": [[-1.0, 1.0], [-2.4, -0.6], [-2.4, -0.6], [0.4, 2.0]],
        "speeds": [0.4, 0.3, 0.6, 0.5],
    }
    args.update({k: overrides.pop(k) for k in list(overrides) if k in args})
    return arm, controller_log(arm, **args, **overrides)  # type: ignore[arg-type]


@pytest.mark.parametrize("profile", ["trapezoid", "s-curve", "varying"])
def test_log_is_a_continuous_session_with_exact_torques(profile: str) -> None:
    arm, log = _session(profile=profile, sample_rate=200.0, acceleration=2.0)
    m, n = log.q.shape
    assert n == 6 and log.time.shape == log.sweep_index.shape == (m,)
    for name in ("velocity", "acceleration", "torque", "current", "gravity_torque"):
        assert getattr(log, name).shape == (m, n)
    np.testing.assert_array_equal(log.sweep_joint, [0, 1, 1, 2])
    # Sweeps in order, each one block of samples, with rests and moves (-1) around them.
    order = [s for s in dict.fromkeys(log.sweep_index.tolist()) if s >= 0]
    assert order == [0, 1, 2, 3]
    assert log.sweep_index[0] == -1 and log.sweep_index[-1] == -1
    for s, joint in enumerate(log.sweep_joint):
        rows = np.flatnonzero(log.sweep_index == s)
        assert np.all(np.diff(rows) == 1)
        moving = np.flatnonzero(np.abs(log.velocity[rows]).max(axis=0) > 0)
        np.testing.assert_array_equal(moving, [joint])
    # Continuous motion: v = dq/dt and a = dv/dt by central differences; no jumps in q.
    dt = 1 / 200.0
    assert np.abs(np.diff(log.q, axis=0)).max() <= 0.6 * dt * 1.001
    v_fd = np.gradient(log.q, log.time, axis=0)
    np.testing.assert_allclose(v_fd, log.velocity, atol=2.0 * dt)
    # Ideal sensors: the torque is the inverse dynamics of the logged motion, every joint.
    np.testing.assert_allclose(
        log.torque, arm.inverse_dynamics(log.q, log.velocity, log.acceleration), atol=1e-12
    )
    np.testing.assert_allclose(log.gravity_torque, arm.gravity_torque(log.q), atol=1e-12)
    np.testing.assert_array_equal(log.current, log.torque)  # drive gain 1
    # On the swept joint the inertial part is M_jj qdd.
    rows = log.sweep_index == 1
    m_jj = arm.joint_inertia(log.q[rows])[:, 1]
    np.testing.assert_allclose(
        log.torque[rows, 1],
        m_jj * log.acceleration[rows, 1] + log.gravity_torque[rows, 1],
        atol=1e-12,
    )


def test_log_sensors_gains_jitter_and_quasi_static_option() -> None:
    rng = np.random.default_rng(3)
    arm = arm_from_urdf(UR5E_LIKE_URDF, tip_link="tool0", up=up_from_base_tilt(0.25, 1.0))
    sensors = realistic_sensors(rng, arm.peak_gravity_torque())
    gains = np.array([13.0, 13.0, 9.0, 4.5, 4.5, 4.5])
    _, log = _session(arm=arm, sensors=sensors, rng=rng, drive_gain=gains, time_jitter=2e-4)
    np.testing.assert_allclose(log.current * gains, log.torque, rtol=1e-15)
    assert np.std(log.time - np.arange(log.time.size) / 100.0) == pytest.approx(2e-4, rel=0.1)
    # Each joint's reading is its sensor model around the true torque: the residual after
    # removing gain, offset, friction, ripple and inertia is the white noise.
    true = arm.inverse_dynamics(log.q, log.velocity, log.acceleration)
    for i, s in enumerate(sensors):
        v = log.velocity[:, i]
        friction = (s.coulomb + s.load_coefficient * np.abs(true[:, i])) * np.sign(v)
        friction += s.viscous * v
        model = s.gain * (true[:, i] + friction) + s.offset + s.ripple(log.q[:, i])
        assert np.std(log.torque[:, i] - model) == pytest.approx(s.noise_std, rel=0.1)
    _, still = _session(arm=arm, inertial=False)
    np.testing.assert_allclose(still.torque, still.gravity_torque, atol=0)


def test_log_checks_its_arguments() -> None:
    cases = [
        ({"joints": [0, 1, 1, 6]}, "`joints` to be integers from 0 to 5"),
        ({"joints": [0, 1, 1.5, 2]}, "`joints` to be integers"),
        ({"configurations": np.zeros((4, 5))}, r"`configurations` to have shape \(4, 6\)"),
        ({"arcs": [[0, 1]] * 3}, r"`arcs` to have shape \(4, 2\)"),
        ({"arcs": [[0, 90.0]] * 4}, r"sweep 0 .*degrees\?"),
        ({"speeds": [0.4, 0.3]}, "`speeds` to have shape"),
        ({"speeds": [0.4, 0.3, -0.6, 0.5]}, r"sweep 2 .*`speed`"),
        ({"sensors": (TorqueSensor(),) * 5}, "`sensors`"),
        ({"sensors": (TorqueSensor(noise_std=0.1),) * 6}, "`rng`"),
        ({"drive_gain": np.zeros(6)}, "`drive_gain`"),
        ({"rest_time": -1.0}, "`rest_time`"),
        ({"sample_rate": 1e5, "cycles": 100}, "at most 1,000,000 samples"),
    ]
    for change, match in cases:
        with pytest.raises(ValueError, match=match):
            _session(**change)
    with pytest.raises(ValueError, match="`arm` to be a SyntheticArm"):
        controller_log(object(), [0], [CONFIG], [[0, 1]], 0.5)  # type: ignore[arg-type]
