"""chain_from_urdf and chain_from_pinocchio against pinocchio's forward kinematics.

Every URDF file that example-robot-data ships is read (by this test, not by gravdir) and every
serial revolute chain in it is compared with pinocchio: the link frames of `link_frames` with
pinocchio's `forwardKinematics` and `updateFramePlacements`, at seeded random joint angles, to
1e-9. Skipped where pinocchio is not installed (``pip install '.[pinocchio]'``); with
``GRAVDIR_REQUIRE_PINOCCHIO=1`` (as in CI) a missing pinocchio or example-robot-data fails.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import xml.etree.ElementTree as ET
import zlib
from pathlib import Path

import numpy as np
import pytest

import gravdir
from gravdir.kinematics import link_frames
from gravdir.pinocchio import chain_from_pinocchio
from gravdir.urdf import chain_from_urdf

REQUIRED = os.environ.get("GRAVDIR_REQUIRE_PINOCCHIO") == "1"
WHY = (
    "pinocchio is not installed (pip install '.[pinocchio]'; PyPI package `pin`); set "
    "GRAVDIR_REQUIRE_PINOCCHIO=1 to make its absence fail"
)
if REQUIRED:
    pin = importlib.import_module("pinocchio")  # an ImportError here fails the run
else:
    pin = pytest.importorskip("pinocchio", reason=WHY)

TOL = 1e-9
N_CONFIGURATIONS = 4
# Found on example-robot-data 6.0.0 by `_chains` below: URDF files with at least one serial
# revolute chain, and the chains. A smaller count means files or chains went missing.
MIN_ROBOTS = 66
MIN_CHAINS = 574
# Shipped URDF files that pinocchio itself cannot read (no robot name): not compared.
UNREADABLE_BY_PINOCCHIO = {"ur_description/urdf/ur3.urdf"}
REVOLUTE = ("revolute", "continuous")


# --------------------------------------------------------------------------------------------
# The robots of example-robot-data, found from the package's own file list


def _robot_root_and_files() -> tuple[Path | None, list[str]]:
    """The robots folder of example-robot-data and its URDF files (relative paths).

    example-robot-data 6 ships only the descriptions (its Python loaders moved to another
    package, pinned to an older release), so the list is made from the files the installed
    distribution records: every ``.urdf`` under ``share/example-robot-data/robots``.
    """
    try:
        files = importlib.metadata.files("example-robot-data") or []
    except importlib.metadata.PackageNotFoundError:
        return None, []
    marker = "example-robot-data/robots/"
    found = {}
    for file in files:
        text = str(file).replace("\\", "/")
        if file.suffix == ".urdf" and marker in text:
            found[text.split(marker, 1)[1]] = Path(str(file.locate()))
    if not found:
        return None, []
    some_rel, some_path = next(iter(found.items()))
    root = Path(str(some_path)[: -len(some_rel)])
    return root, sorted(found)


ROOT, FILES = _robot_root_and_files()


def _require_robots() -> Path:
    if ROOT is None:
        message = "example-robot-data is not installed (pip install '.[pinocchio]')"
        if REQUIRED:
            pytest.fail(message)
        pytest.skip(message)
    return ROOT


def _chains(text: str) -> list[tuple[str, str]]:
    """(base link, tip link) of every maximal serial revolute chain of a URDF, read here.

    Bases: the root link, and the child link of every joint that is neither revolute,
    continuous nor fixed (a robot's arms above a prismatic torso, the trunk above a free
    joint). Tips: from each base, through revolute, continuous and fixed joints only, the
    links with no further such joint and at least one revolute joint above them: one chain
    per arm, leg, finger and head, ending where a gripper's prismatic fingers begin.
    """
    robot = ET.fromstring(text)
    children: dict[str, list[tuple[str, str]]] = {}
    child_links = set()
    for joint in robot.findall("joint"):
        parent = joint.find("parent").get("link")
        child = joint.find("child").get("link")
        children.setdefault(parent, []).append((joint.get("type"), child))
        child_links.add(child)
    links = [link.get("name") for link in robot.findall("link")]
    (root,) = [link for link in links if link not in child_links]
    bases = [root] + [
        child
        for below in children.values()
        for kind, child in below
        if kind not in (*REVOLUTE, "fixed")
    ]
    chains = []
    for base in bases:
        stack = [(base, 0)]
        while stack:
            link, n_revolute = stack.pop()
            onward = [(k, c) for k, c in children.get(link, []) if k in (*REVOLUTE, "fixed")]
            if not onward and n_revolute:
                chains.append((base, link))
            stack.extend((c, n_revolute + (k in REVOLUTE)) for k, c in onward)
    return chains


def _angles(model, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Random angles of every joint, and pinocchio's configuration holding them.

    A revolute joint's configuration is its angle; an unbounded one's is (cos, sin) of it; a
    prismatic joint gets a random position, a free flyer a random pose, the others stay
    neutral.
    """
    q = pin.neutral(model)
    theta = rng.uniform(-np.pi, np.pi, model.njoints)
    for j in range(1, model.njoints):
        joint, kind = model.joints[j], model.joints[j].shortname()
        i = joint.idx_q
        if kind.startswith(("JointModelR", "JointModelP")) and joint.nq == 1:
            q[i] = theta[j]
        elif kind.startswith("JointModelRUB") or kind == "JointModelRevoluteUnboundedUnaligned":
            q[i : i + 2] = np.cos(theta[j]), np.sin(theta[j])
        elif kind == "JointModelFreeFlyer":
            quaternion = rng.normal(size=4)
            quaternion /= np.linalg.norm(quaternion)
            q[i : i + 7] = np.concatenate([rng.normal(size=3), quaternion])
    return theta, q


def _path(model, base: int, tip: int) -> list[int]:
    """Joints from frame `base` down to frame `tip`, base first, by pinocchio's `parents`."""
    top = model.frames[base].parentJoint
    path, joint = [], model.frames[tip].parentJoint
    while joint != top:
        path.append(joint)
        joint = model.parents[joint]
    return path[::-1]


def _worst_error(model, chains, text: str, seed: int) -> tuple[float, int]:
    """Largest difference between gravdir's chains and pinocchio over the chains of a model."""
    rng = np.random.default_rng(seed)
    data = model.createData()
    configurations = [_angles(model, rng) for _ in range(N_CONFIGURATIONS)]
    worst, checked = 0.0, 0
    for base_link, tip_link in chains:
        base = model.getFrameId(base_link, pin.FrameType.BODY)
        tip = model.getFrameId(tip_link, pin.FrameType.BODY)
        path = _path(model, base, tip)
        from_urdf = chain_from_urdf(text, base_link=base_link, tip_link=tip_link)
        from_model = chain_from_pinocchio(model, base_frame=base_link, tip_frame=tip_link)
        assert from_urdf.n_joints == from_model.n_joints == len(path), (base_link, tip_link)
        theta = np.stack([t[path] for t, _ in configurations])
        ours = [link_frames(chain, theta) for chain in (from_urdf, from_model)]
        for b, (_, q) in enumerate(configurations):
            pin.forwardKinematics(model, data, q)
            pin.updateFramePlacements(model, data)
            base_from_world = data.oMf[base].inverse()
            links = np.stack([(base_from_world * data.oMi[j]).homogeneous for j in path])
            flange = (base_from_world * data.oMf[tip]).homogeneous
            for frames in ours:
                worst = max(
                    worst,
                    float(np.abs(frames.link_poses[b] - links).max()),
                    float(np.abs(frames.flange[b] - flange).max()),
                )
        checked += 1
    return worst, checked


# --------------------------------------------------------------------------------------------
# Agreement with pinocchio on every robot


@pytest.mark.parametrize("relative", FILES or ["<none>"])
def test_urdf_and_pinocchio_chains_match_forward_kinematics(relative):
    root = _require_robots()
    if relative in UNREADABLE_BY_PINOCCHIO:
        with pytest.raises(Exception):  # noqa: B017 - pinocchio's own error type
            pin.buildModelFromXML((root / relative).read_text(encoding="utf-8"))
        pytest.skip(f"pinocchio cannot read {relative}")
    text = (root / relative).read_text(encoding="utf-8")
    chains = _chains(text)
    if not chains:
        pytest.skip(f"{relative} has no revolute joint")
    seed = zlib.crc32(relative.encode())
    fixed = pin.buildModelFromXML(text)
    worst, checked = _worst_error(fixed, chains, text, seed)
    assert checked == len(chains)
    assert worst <= TOL, f"{relative}: {worst:.3g}"
    # The same robot on a free-flying base: the chains, relative to their base link, agree.
    floating = pin.buildModelFromXML(text, pin.JointModelFreeFlyer())
    worst, _ = _worst_error(floating, chains, text, seed + 1)
    assert worst <= TOL, f"{relative} on a free flyer: {worst:.3g}"


def test_every_robot_with_a_revolute_chain_is_compared():
    root = _require_robots()
    robots = chains = 0
    for relative in FILES:
        if relative in UNREADABLE_BY_PINOCCHIO:
            continue
        found = _chains((root / relative).read_text(encoding="utf-8"))
        robots += bool(found)
        chains += len(found)
    assert robots >= MIN_ROBOTS
    assert chains >= MIN_CHAINS


# Arms a user would ask for, with the chain to the flange or tool frame among those compared.
FAMILIAR = [
    ("panda_description/urdf/panda.urdf", "panda_link0", "panda_hand_tcp", 7),
    ("ur_description/urdf/ur5_robot.urdf", "world", "tool0", 6),
    ("ur_description/urdf/ur10_robot.urdf", "world", "tool0", 6),
    ("kinova_description/robots/kinova.urdf", "base", "j2s6s200_end_effector", 6),
    ("xarm_description/urdf/xarm7.urdf", "world", "link_eef", 7),
    ("pr2_description/urdf/pr2.urdf", "torso_lift_link", "l_gripper_tool_frame", 7),
    ("baxter_description/urdf/baxter.urdf", "base", "right_gripper", 7),
]


@pytest.mark.parametrize(("relative", "base", "tip", "n"), FAMILIAR)
def test_familiar_arms_are_among_the_compared_chains(relative, base, tip, n):
    text = (_require_robots() / relative).read_text(encoding="utf-8")
    assert (base, tip) in _chains(text)
    model = pin.buildModelFromXML(text)
    assert chain_from_urdf(text, base_link=base, tip_link=tip).n_joints == n
    assert chain_from_pinocchio(model, base_frame=base, tip_frame=tip).n_joints == n


def _leaves_in(message: str) -> set[str]:
    return set(message.rsplit(": ", 1)[1].rstrip(".").split(", "))


def test_panda_fingers_are_left_out_by_the_tip_and_refused_on_the_path():
    text = (_require_robots() / "panda_description/urdf/panda.urdf").read_text(encoding="utf-8")
    model = pin.buildModelFromXML(text)
    for tip in ("panda_link8", "panda_hand"):
        assert chain_from_urdf(text, tip_link=tip).n_joints == 7
        assert chain_from_pinocchio(model, tip_frame=tip).n_joints == 7
    with pytest.raises(ValueError, match=r"prismatic joint 'panda_finger_joint1'"):
        chain_from_urdf(text, tip_link="panda_leftfinger")
    with pytest.raises(ValueError, match=r"JointModelP\w* joint 'panda_finger_joint1'"):
        chain_from_pinocchio(model, tip_frame="panda_leftfinger")
    # Without a tip both refuse, listing the same leaves.
    with pytest.raises(ValueError, match=r"`tip_link`") as from_urdf:
        chain_from_urdf(text)
    with pytest.raises(ValueError, match=r"`tip_frame`") as from_model:
        chain_from_pinocchio(model)
    leaves = _leaves_in(str(from_urdf.value))
    assert leaves == _leaves_in(str(from_model.value))
    assert {"panda_leftfinger", "panda_rightfinger", "panda_hand_tcp"} <= leaves


# --------------------------------------------------------------------------------------------
# chain_from_pinocchio on its own: joint types, frames, defaults and refusals


def _random_urdf(rng: np.random.Generator, n: int) -> str:
    """A random chain with unaligned axes (pinocchio's RevoluteUnaligned and
    RevoluteUnboundedUnaligned), aligned ones and fixed joints in between."""
    joints, parent = [], "base"
    links = ["base"]
    for k in range(n):
        kind = "continuous" if k % 2 else "revolute"
        axis = rng.normal(size=3) if k % 3 else np.eye(3)[k % 3] * rng.choice([-1, 1])
        xyz = " ".join(repr(float(v)) for v in rng.normal(size=3))
        rpy = " ".join(repr(float(v)) for v in rng.uniform(-np.pi, np.pi, 3))
        axis = " ".join(repr(float(v)) for v in axis)
        limit = '<limit lower="-4" upper="4" effort="1" velocity="1"/>'
        limit = limit if kind == "revolute" else ""
        for name, child, body in [
            (f"fix{k}", f"mount{k}", '<origin xyz="0.1 0 0.2" rpy="0.3 0 0"/>'),
            (
                f"j{k}",
                f"link{k}",
                f'<origin xyz="{xyz}" rpy="{rpy}"/><axis xyz="{axis}"/>{limit}',
            ),
        ]:
            kind_here = "fixed" if name.startswith("fix") else kind
            joints.append(
                f'<joint name="{name}" type="{kind_here}"><parent link="{parent}"/>'
                f'<child link="{child}"/>{body}</joint>'
            )
            links.append(child)
            parent = child
    joints.append(
        f'<joint name="flange" type="fixed"><parent link="{parent}"/><child link="tool"/>'
        '<origin xyz="0 0 0.1"/></joint>'
    )
    links.append("tool")
    body = "".join(f'<link name="{link}"/>' for link in links) + "".join(joints)
    return f'<robot name="random">{body}</robot>'


@pytest.mark.parametrize("seed", range(6))
def test_every_revolute_joint_type_matches_forward_kinematics(seed):
    rng = np.random.default_rng(seed)
    text = _random_urdf(rng, 6)
    model = pin.buildModelFromXML(text)
    kinds = {model.joints[j].shortname() for j in range(1, model.njoints)}
    assert {"JointModelRevoluteUnaligned", "JointModelRevoluteUnboundedUnaligned"} <= kinds
    chain = chain_from_pinocchio(model)
    reference = chain_from_urdf(text)
    for field in ("home_axes", "home_points", "home_links", "home_flange"):
        np.testing.assert_allclose(getattr(chain, field), getattr(reference, field), atol=1e-12)
    worst, checked = _worst_error(model, [("base", "tool")], text, seed)
    assert checked == 1 and worst <= 1e-12


def _hand_built(first) -> tuple[object, int]:
    """`first` at the root, then a revolute joint about z carrying a body frame "tool"."""
    model = pin.Model()
    placement = pin.SE3(np.eye(3), np.array([0.0, 0.0, 1.0]))
    top = model.addJoint(0, first, placement, "first")
    top_frame = model.addJointFrame(top, 0)
    hinge = model.addJoint(top, pin.JointModelRZ(), placement, "hinge")
    hinge_frame = model.addJointFrame(hinge, top_frame)
    model.addBodyFrame("top_body", top, pin.SE3.Identity(), top_frame)
    model.addBodyFrame("tool", hinge, placement, hinge_frame)
    return model, top


@pytest.mark.parametrize(
    ("first", "kind"),
    [
        (pin.JointModelFreeFlyer(), "JointModelFreeFlyer"),
        (pin.JointModelPlanar(), "JointModelPlanar"),
        (pin.JointModelSpherical(), "JointModelSpherical"),
        (pin.JointModelSphericalZYX(), "JointModelSphericalZYX"),
        (pin.JointModelTranslation(), "JointModelTranslation"),
        (pin.JointModelPX(), "JointModelPX"),
        (pin.JointModelHX(), "JointModelHX"),
        (pin.JointModelUniversal(np.eye(3)[0], np.eye(3)[1]), "JointModelUniversal"),
    ],
)
def test_other_joints_on_the_path_are_refused_and_above_the_base_ignored(first, kind):
    model, _ = _hand_built(first)
    with pytest.raises(ValueError, match=rf"`model`, got {kind} joint 'first'"):
        chain_from_pinocchio(model, tip_frame="tool")
    chain = chain_from_pinocchio(model, base_frame="top_body", tip_frame="tool")
    assert chain.n_joints == 1
    np.testing.assert_allclose(chain.home_axes, [[0, 0, 1]], atol=1e-15)
    np.testing.assert_allclose(chain.home_flange[:3, 3], [0, 0, 2], atol=1e-15)


def test_frame_names_are_resolved_and_checked():
    model, top = _hand_built(pin.JointModelRX())
    # A name shared by a BODY frame and another frame means the BODY frame.
    model.addFrame(pin.Frame("tool", top, 0, pin.SE3.Identity(), pin.FrameType.OP_FRAME))
    assert chain_from_pinocchio(model, tip_frame="tool").n_joints == 2
    model.addFrame(pin.Frame("probe", top, 0, pin.SE3.Identity(), pin.FrameType.OP_FRAME))
    model.addFrame(pin.Frame("probe", top, 0, pin.SE3.Identity(), pin.FrameType.SENSOR))
    with pytest.raises(ValueError, match=r"`tip_frame` to name one frame.*'probe'.*2 frames"):
        chain_from_pinocchio(model, tip_frame="probe")
    with pytest.raises(ValueError, match=r"`base_frame` to be a frame of `model`, got 'x'"):
        chain_from_pinocchio(model, base_frame="x", tip_frame="tool")
    with pytest.raises(ValueError, match=r"`tip_frame` to be a frame name \(str\), got 3"):
        chain_from_pinocchio(model, tip_frame=3)
    with pytest.raises(ValueError, match=r"`tip_frame` below `base_frame` 'tool'"):
        chain_from_pinocchio(model, base_frame="tool", tip_frame="top_body")
    with pytest.raises(ValueError, match=r"at least one revolute joint.*'hinge'.*'tool'"):
        chain_from_pinocchio(model, base_frame="hinge", tip_frame="tool")
    with pytest.raises(ValueError, match=r"`model` to be a pinocchio.Model, got str"):
        chain_from_pinocchio("model")


def test_defaults_match_chain_from_urdf():
    rng = np.random.default_rng(5)
    text = _random_urdf(rng, 3)
    model = pin.buildModelFromXML(text)
    assert chain_from_pinocchio(model) == chain_from_pinocchio(
        model, base_frame="universe", tip_frame="tool"
    )
    root = _require_robots()
    text = (root / "ur_description/urdf/ur5_robot.urdf").read_text(encoding="utf-8")
    with pytest.raises(ValueError, match=r"`tip_frame` for a model with 3 leaf frames") as error:
        chain_from_pinocchio(pin.buildModelFromXML(text))
    assert _leaves_in(str(error.value)) == {"base", "ee_link", "tool0"}
    with pytest.raises(ValueError, match=r"`tip_link`.*: base, ee_link, tool0\.$"):
        chain_from_urdf(text)


def test_chain_from_pinocchio_is_exported_at_top_level():
    assert gravdir.chain_from_pinocchio is chain_from_pinocchio
