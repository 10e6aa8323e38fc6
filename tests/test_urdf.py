"""Tests of gravdir.urdf: chains and inertials from URDF text, and refusal of hostile text."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
import types

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import gravdir
from gravdir.kinematics import link_frames
from gravdir.urdf import UrdfInertials, chain_from_urdf, inertials_from_urdf

# --------------------------------------------------------------------------------------------
# Building URDF text and its forward kinematics independently


def _rx(a: float) -> np.ndarray:
    c, s = np.cos(a), np.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def _ry(a: float) -> np.ndarray:
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def _rz(a: float) -> np.ndarray:
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def _pose(xyz, rpy) -> np.ndarray:
    t = np.eye(4)
    t[:3, :3] = _rz(rpy[2]) @ _ry(rpy[1]) @ _rx(rpy[0])
    t[:3, 3] = xyz
    return t


def _rodrigues(axis, angle: float) -> np.ndarray:
    k = np.asarray(axis, dtype=float)
    k = k / np.linalg.norm(k)
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    t = np.eye(4)
    t[:3, :3] = np.eye(3) + np.sin(angle) * kx + (1 - np.cos(angle)) * kx @ kx
    return t


def _joint_xml(name, kind, parent, child, xyz=None, rpy=None, axis=None) -> str:
    origin = ""
    if xyz is not None or rpy is not None:
        attrs = "".join(
            f' {key}="{" ".join(repr(float(v)) for v in val)}"'
            for key, val in (("xyz", xyz), ("rpy", rpy))
            if val is not None
        )
        origin = f"<origin{attrs}/>"
    axis_xml = "" if axis is None else f'<axis xyz="{" ".join(repr(float(v)) for v in axis)}"/>'
    return (
        f'<joint name="{name}" type="{kind}"><parent link="{parent}"/>'
        f'<child link="{child}"/>{origin}{axis_xml}</joint>'
    )


def _robot(links, joints) -> str:
    body = "".join(f'<link name="{name}"/>' for name in links) + "".join(joints)
    return f'<?xml version="1.0"?>\n<robot name="test">{body}</robot>'


def _random_chain(rng: np.random.Generator, n_moving: int):
    """URDF text of a random chain with fixed joints interleaved, and its joint specs."""
    specs = []
    links = ["base"]
    for i in range(n_moving):
        for _ in range(int(rng.integers(0, 2))):  # sometimes a fixed joint before a moving one
            specs.append(
                dict(kind="fixed", xyz=rng.normal(size=3), rpy=rng.uniform(-np.pi, np.pi, 3))
            )
        axis = None if rng.random() < 0.2 else rng.normal(size=3) * rng.uniform(0.1, 5)
        specs.append(
            dict(
                kind="revolute" if i % 2 else "continuous",
                xyz=rng.normal(size=3) if rng.random() < 0.9 else None,
                rpy=rng.uniform(-np.pi, np.pi, 3) if rng.random() < 0.9 else None,
                axis=axis,
            )
        )
    specs.append(dict(kind="fixed", xyz=rng.normal(size=3), rpy=rng.uniform(-np.pi, np.pi, 3)))
    joints = []
    for k, spec in enumerate(specs):
        links.append(f"link{k}")
        joints.append(_joint_xml(f"joint{k}", parent=links[-2], child=links[-1], **spec))
    return _robot(links, joints), specs


def _forward(specs, q) -> tuple[list[np.ndarray], np.ndarray]:
    """Poses of the moving joints' child links and of the tip, by explicit 4x4 products."""
    t = np.eye(4)
    frames = []
    i = 0
    for spec in specs:
        xyz = np.zeros(3) if spec.get("xyz") is None else spec["xyz"]
        rpy = np.zeros(3) if spec.get("rpy") is None else spec["rpy"]
        t = t @ _pose(xyz, rpy)
        if spec["kind"] != "fixed":
            axis = (1.0, 0.0, 0.0) if spec.get("axis") is None else spec["axis"]
            t = t @ _rodrigues(axis, q[i])
            frames.append(t)
            i += 1
    return frames, t


# --------------------------------------------------------------------------------------------
# Kinematics


@pytest.mark.parametrize("seed", range(8))
def test_link_frames_match_explicit_urdf_products(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 8))
    text, specs = _random_chain(rng, n)
    chain = chain_from_urdf(text)
    assert chain.n_joints == n
    q = rng.uniform(-np.pi, np.pi, size=(5, n))
    frames = link_frames(chain, q)
    for b in range(q.shape[0]):
        links, tip = _forward(specs, q[b])
        np.testing.assert_allclose(frames.link_poses[b], np.stack(links), rtol=0, atol=1e-12)
        np.testing.assert_allclose(frames.flange[b], tip, rtol=0, atol=1e-12)


def test_rpy_is_fixed_axis_roll_pitch_yaw():
    rpy = [0.3, -0.7, 1.1]
    text = _robot(["a", "b"], [_joint_xml("j", "revolute", "a", "b", xyz=[0, 0, 0], rpy=rpy)])
    chain = chain_from_urdf(text)
    expected = Rotation.from_euler("xyz", rpy).as_matrix()  # extrinsic x, then y, then z
    np.testing.assert_allclose(chain.home_flange[:3, :3], expected, atol=1e-15)


def test_default_axis_is_x_and_axes_are_normalised():
    joints = [
        _joint_xml("j1", "revolute", "a", "b"),
        _joint_xml("j2", "revolute", "b", "c", axis=[0, 0, 7]),
    ]
    chain = chain_from_urdf(_robot(["a", "b", "c"], joints))
    np.testing.assert_array_equal(chain.home_axes, [[1, 0, 0], [0, 0, 1]])


def test_fixed_joints_are_folded_into_the_next_joint():
    rng = np.random.default_rng(3)
    a, b = _pose(rng.normal(size=3), rng.uniform(-1, 1, 3)), _pose([0.1, 0.2, 0.3], [0, 0, 0])
    folded = a @ b
    xyz, rpy = folded[:3, 3], Rotation.from_matrix(folded[:3, :3]).as_euler("xyz")
    split = _robot(
        ["r", "m", "x", "t"],
        [
            _joint_xml(
                "f",
                "fixed",
                "r",
                "m",
                xyz=a[:3, 3],
                rpy=Rotation.from_matrix(a[:3, :3]).as_euler("xyz"),
            ),
            _joint_xml("j", "revolute", "m", "x", xyz=[0.1, 0.2, 0.3], axis=[0, 1, 0]),
            _joint_xml("g", "fixed", "x", "t", xyz=[0.5, 0, 0]),
        ],
    )
    merged = _robot(
        ["r", "x", "t"],
        [
            _joint_xml("j", "revolute", "r", "x", xyz=xyz, rpy=rpy, axis=[0, 1, 0]),
            _joint_xml("g", "fixed", "x", "t", xyz=[0.5, 0, 0]),
        ],
    )
    one, two = chain_from_urdf(split), chain_from_urdf(merged)
    assert one.n_joints == two.n_joints == 1
    q = np.array([[0.4], [-2.0]])
    np.testing.assert_allclose(link_frames(one, q).flange, link_frames(two, q).flange, atol=1e-12)
    # The fixed joint after the last moving joint is the flange, not a link of the chain.
    np.testing.assert_allclose(
        one.home_flange[:3, 3] - one.home_links[0, :3, 3],
        one.home_links[0, :3, :3] @ [0.5, 0, 0],
        atol=1e-12,
    )


def test_branches_off_the_path_are_ignored():
    rng = np.random.default_rng(11)
    text, specs = _random_chain(rng, 4)
    branch = (
        _joint_xml("finger", "prismatic", "link1", "finger_link", xyz=[1, 2, 3], axis=[0, 1, 0])
        + _joint_xml("spin", "floating", "base", "other")
        + '<link name="finger_link"/><link name="other"/>'
    )
    tip = f"link{len(specs) - 1}"
    with_branch = text.replace("</robot>", branch + "</robot>")
    assert chain_from_urdf(with_branch, tip_link=tip) == chain_from_urdf(text)


@pytest.mark.parametrize("seed", range(4))
def test_base_link_below_the_root_is_the_base_frame(seed):
    rng = np.random.default_rng(seed)
    text, specs = _random_chain(rng, 3)
    chain = chain_from_urdf(text, base_link="link0")  # link0 is the child of specs[0]
    n_above = int(specs[0]["kind"] != "fixed")
    assert chain.n_joints == 3 - n_above
    q = rng.uniform(-1, 1, size=(4, chain.n_joints))
    frames = link_frames(chain, q)
    for b in range(q.shape[0]):
        links, tip = _forward(specs[1:], q[b])
        np.testing.assert_allclose(frames.link_poses[b], np.stack(links), rtol=0, atol=1e-12)
        np.testing.assert_allclose(frames.flange[b], tip, rtol=0, atol=1e-12)


def test_chain_from_urdf_is_exported_at_top_level():
    assert gravdir.chain_from_urdf is chain_from_urdf


# --------------------------------------------------------------------------------------------
# chain_from_pinocchio without pinocchio (tests/test_pinocchio.py compares it with pinocchio)


def test_importing_gravdir_does_not_import_pinocchio():
    code = "import sys, gravdir; gravdir.chain_from_pinocchio; print('pinocchio' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_chain_from_pinocchio_says_how_to_install_pinocchio(monkeypatch):
    monkeypatch.setitem(sys.modules, "pinocchio", None)  # makes `import pinocchio` fail
    with pytest.raises(ImportError, match=r"pip install -e '\.\[pinocchio\]'.*`pin`"):
        gravdir.chain_from_pinocchio(object())


def test_chain_from_pinocchio_detects_the_unrelated_pinocchio_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "pinocchio", types.ModuleType("pinocchio"))
    with pytest.raises(ImportError, match=r"not the robotics library.*-e '\.\[pinocchio\]'"):
        gravdir.chain_from_pinocchio(object())


# --------------------------------------------------------------------------------------------
# Refusals


def _two_leaves() -> str:
    return _robot(
        ["base", "arm", "left", "right"],
        [
            _joint_xml("j", "revolute", "base", "arm"),
            _joint_xml("l", "revolute", "arm", "left"),
            _joint_xml("r", "revolute", "arm", "right"),
        ],
    )


def test_tip_link_is_required_with_several_leaves():
    with pytest.raises(ValueError, match=r"`tip_link`.*several leaves.*left, right"):
        chain_from_urdf(_two_leaves())
    assert chain_from_urdf(_two_leaves(), tip_link="right").n_joints == 2


@pytest.mark.parametrize("kind", ["prismatic", "floating", "planar"])
def test_non_revolute_joints_on_the_path_are_refused(kind):
    text = _robot(
        ["a", "b", "c"],
        [_joint_xml("j1", "revolute", "a", "b"), _joint_xml("slide", kind, "b", "c")],
    )
    with pytest.raises(ValueError, match=rf"{kind} joint 'slide'"):
        chain_from_urdf(text)
    assert chain_from_urdf(text, tip_link="b").n_joints == 1


def test_unknown_joint_type_on_the_path_is_refused():
    text = _robot(["a", "b"], [_joint_xml("j", "hinge", "a", "b")])
    with pytest.raises(ValueError, match=r"`urdf_text`.*'j'.*unknown type 'hinge'"):
        chain_from_urdf(text)


def test_a_path_of_fixed_joints_only_is_refused():
    text = _robot(["a", "b"], [_joint_xml("j", "fixed", "a", "b")])
    with pytest.raises(ValueError, match=r"at least one revolute"):
        chain_from_urdf(text)


BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
]>
<robot name="&lol4;"><link name="a"/></robot>"""

EXTERNAL_ENTITY = """<?xml version="1.0"?>
<!DOCTYPE robot [<!ENTITY secret SYSTEM "file:///etc/passwd">]>
<robot name="x"><link name="&secret;"/></robot>"""


@pytest.mark.parametrize("text", [BILLION_LAUGHS, EXTERNAL_ENTITY, "<!ENTITY x 'y'><robot/>"])
def test_entity_and_doctype_declarations_are_refused(text):
    with pytest.raises(ValueError, match=r"`urdf_text` without a DOCTYPE or ENTITY"):
        chain_from_urdf(text)


# Entity expansion without a declaration in the text: a parameter entity, an undeclared entity
# (expat would look for it in an external DTD), a DOCTYPE hidden by case or by whitespace, and
# one pointing at an external DTD.
HIDDEN_DECLARATIONS = [
    '<?xml version="1.0"?>\n<!doctype robot [<!ENTITY % p SYSTEM "http://x/e.dtd"> %p;]>'
    '<robot name="x"/>',
    '<!DOCTYPE robot SYSTEM "http://example.invalid/robot.dtd"><robot name="x"/>',
    '<?xml version="1.0"?>\n  <!DOCTYPE\n robot><robot name="x"><link name="a"/></robot>',
]


@pytest.mark.parametrize("text", HIDDEN_DECLARATIONS)
def test_hidden_and_external_declarations_are_refused(text):
    with pytest.raises(ValueError, match=r"`urdf_text` without a DOCTYPE or ENTITY"):
        chain_from_urdf(text)


def test_an_undeclared_entity_is_refused_not_resolved():
    text = _robot(["a", "b"], [_joint_xml("j", "revolute", "a", "b")]).replace(
        '<link name="a"/>', '<link name="&secret;"/>'
    )
    with pytest.raises(ValueError, match=r"`urdf_text` to be well-formed XML.*undefined entity"):
        chain_from_urdf(text)


def test_xinclude_is_not_followed():
    # ElementTree does not process XInclude: the element is an unknown tag, ignored like any.
    include = (
        '<xi:include xmlns:xi="http://www.w3.org/2001/XInclude" href="file:///etc/passwd" '
        'parse="text"/>'
    )
    text = _robot(["a", "b"], [_joint_xml("j", "revolute", "a", "b")])
    assert chain_from_urdf(text.replace("</robot>", include + "</robot>")) == chain_from_urdf(text)


def test_oversized_text_and_too_many_links_are_refused():
    with pytest.raises(ValueError, match=r"`urdf_text` to have at most 10000000 characters"):
        chain_from_urdf("<robot>" + " " * 10_000_000 + "</robot>")
    with pytest.raises(ValueError, match=r"`urdf_text`.*at most 10000 links"):
        chain_from_urdf(_robot([f"l{i}" for i in range(10_001)], []))


def test_comments_and_cdata_are_accepted():
    text = _robot(["a", "b"], [_joint_xml("j", "revolute", "a", "b")])
    text = text.replace("<robot", "<!-- a comment --><robot").replace(
        "</robot>", "<![CDATA[ notes ]]></robot>"
    )
    assert chain_from_urdf(text).n_joints == 1


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("<robot><link name='a'></robot>", r"`urdf_text` to be well-formed XML"),
        ("", r"`urdf_text` to be well-formed XML"),
        ("<model/>", r"`urdf_text`.*<robot>"),
        ("<robot/>", r"`urdf_text`.*no <link>"),
    ],
)
def test_malformed_text_is_refused(text, match):
    with pytest.raises(ValueError, match=match):
        chain_from_urdf(text)


@pytest.mark.parametrize("value", [b"<robot/>", None, 3.0])
def test_urdf_text_must_be_a_string(value):
    with pytest.raises(ValueError, match=r"`urdf_text` to be a str"):
        chain_from_urdf(value)


@pytest.mark.parametrize(
    ("links", "joints", "match"),
    [
        (["a"], [_joint_xml("j", "revolute", "a", "ghost")], r"child link 'ghost' of joint 'j'"),
        (["b"], [_joint_xml("j", "revolute", "ghost", "b")], r"parent link 'ghost' of joint 'j'"),
        (
            ["a", "b"],
            ['<joint name="j" type="revolute"><parent link="a"/></joint>'],
            r"joint 'j' has no <child",
        ),
        (["a", "b"], [], r"one root link, got 2: a, b"),
        (
            ["a", "b", "c"],
            [
                _joint_xml("j1", "revolute", "a", "b"),
                _joint_xml("j2", "revolute", "b", "c"),
                _joint_xml("j3", "revolute", "c", "b"),
            ],
            r"link 'b' is the child of two joints",
        ),
        (
            ["a", "b"],
            [_joint_xml("j1", "revolute", "a", "b"), _joint_xml("j2", "revolute", "b", "a")],
            r"no root link: its joints form a cycle",
        ),
        (
            ["r", "a", "b"],
            [_joint_xml("j1", "revolute", "a", "b"), _joint_xml("j2", "revolute", "b", "a")],
            r"joints j1, j2 form a cycle",
        ),
        (["a", "a"], [], r"link 'a' is defined twice"),
        (
            ["a", "b", "c"],
            [_joint_xml("j", "revolute", "a", "b"), _joint_xml("j", "revolute", "b", "c")],
            r"joint 'j' is defined twice",
        ),
        (["a", "b"], [_joint_xml("j", "revolute", "a", "b", axis=[0, 0, 0])], r"non-zero"),
    ],
)
def test_broken_trees_are_refused(links, joints, match):
    with pytest.raises(ValueError, match=r"`urdf_text`.*" + match):
        chain_from_urdf(_robot(links, joints))


def test_a_cycle_beside_a_root_is_refused():
    # r has no parent, a and b form a loop that r does not reach: several-roots check passes.
    text = _robot(
        ["r", "a", "b"],
        [_joint_xml("j1", "revolute", "a", "b"), _joint_xml("j2", "revolute", "b", "a")],
    )
    with pytest.raises(ValueError, match="cycle"):
        chain_from_urdf(text)


@pytest.mark.parametrize(
    ("origin", "match"),
    [
        ('<origin xyz="1 2"/>', r"3 decimal numbers"),
        ('<origin xyz="1 2 nan"/>', r"3 decimal numbers"),
        ('<origin xyz="1 2 1_0"/>', r"3 decimal numbers"),
        # Arabic-Indic, Devanagari and full-width digits and a no-break space once read as
        # "1 0 0"; a URDF number (xs:double) is ASCII.
        ('<origin xyz="\u0661 \u0660 \u0660"/>', r"3 decimal numbers written in ASCII"),
        ('<origin rpy="0 0 \u0967"/>', r"3 decimal numbers written in ASCII"),
        ('<origin xyz="\uff11 0 0"/>', r"3 decimal numbers written in ASCII"),
        ('<origin xyz="1\u00a00 0"/>', r"3 decimal numbers written in ASCII"),
        ('<origin xyz="1 2 1e400"/>', r"finite"),
        ('<origin xyz="1 2 1e200"/>', r"within"),
        ('<origin rpy="0 0 90"/>', r"degrees\?"),
    ],
)
def test_bad_numbers_are_refused(origin, match):
    joint = f'<joint name="j" type="revolute"><parent link="a"/><child link="b"/>{origin}</joint>'
    with pytest.raises(ValueError, match=r"`urdf_text`.*" + match):
        chain_from_urdf(_robot(["a", "b"], [joint]))


def test_base_and_tip_links_are_checked():
    text = _two_leaves()
    with pytest.raises(ValueError, match=r"`base_link` to be a link of `urdf_text`, got 'x'"):
        chain_from_urdf(text, base_link="x", tip_link="left")
    with pytest.raises(ValueError, match=r"`tip_link` to be a link name"):
        chain_from_urdf(text, tip_link=3)
    with pytest.raises(ValueError, match=r"`tip_link` below `base_link` 'left'"):
        chain_from_urdf(text, base_link="left", tip_link="right")


# --------------------------------------------------------------------------------------------
# Inertials


def _inertial_xml(mass, xyz=(0, 0, 0), rpy=(0, 0, 0), inertia=(0, 0, 0, 0, 0, 0)) -> str:
    keys = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
    attrs = " ".join(f'{k}="{v!r}"' for k, v in zip(keys, map(float, inertia), strict=True))
    return (
        f'<inertial><origin xyz="{" ".join(map(repr, map(float, xyz)))}" '
        f'rpy="{" ".join(map(repr, map(float, rpy)))}"/><mass value="{float(mass)!r}"/>'
        f"<inertia {attrs}/></inertial>"
    )


def _inertial_robot(links: dict[str, str], joints) -> str:
    body = "".join(f'<link name="{k}">{v}</link>' for k, v in links.items())
    return f'<robot name="t">{body}{"".join(joints)}</robot>'


def test_inertials_of_single_links_are_rotated_into_the_link_frame():
    rng = np.random.default_rng(2)
    rpy = rng.uniform(-1, 1, 3)
    principal = np.array([0.1, 0.2, 0.3])
    text = _inertial_robot(
        {
            "a": "",
            "b": _inertial_xml(
                2.5, xyz=(0.1, -0.2, 0.3), rpy=rpy, inertia=(0.1, 0, 0, 0.2, 0, 0.3)
            ),
        },
        [_joint_xml("j", "revolute", "a", "b", xyz=[1, 0, 0], axis=[0, 0, 1])],
    )
    body = inertials_from_urdf(text)
    r = _pose([0, 0, 0], rpy)[:3, :3]
    assert body.joint_names == ("j",) and body.link_names == ("b",)
    np.testing.assert_array_equal(body.mass, [2.5])
    np.testing.assert_allclose(body.com_in_link, [[0.1, -0.2, 0.3]], atol=1e-15)
    np.testing.assert_allclose(body.inertia_in_link[0], r @ np.diag(principal) @ r.T, atol=1e-15)


def test_fixed_children_and_branches_are_lumped_by_the_parallel_axis_theorem():
    # Two point masses of 1 kg at x = 0 (link b) and x = 2 (link c, fixed to b), and a 2 kg
    # point mass on a finger (prismatic, off the path, at zero) at y = 1.
    text = _inertial_robot(
        {
            "a": _inertial_xml(9.0),  # does not move: left out
            "b": _inertial_xml(1.0),
            "c": _inertial_xml(1.0),
            "finger": _inertial_xml(2.0),
            "d": _inertial_xml(3.0, xyz=(0, 0, 1)),
        },
        [
            _joint_xml("j1", "revolute", "a", "b", xyz=[0, 0, 5]),
            _joint_xml("fix", "fixed", "b", "c", xyz=[2, 0, 0]),
            _joint_xml("slide", "prismatic", "b", "finger", xyz=[0, 1, 0], axis=[0, 1, 0]),
            _joint_xml("j2", "revolute", "c", "d", rpy=[0, 0, np.pi / 2]),
        ],
    )
    body = inertials_from_urdf(text, tip_link="d")
    np.testing.assert_array_equal(body.mass, [4.0, 3.0])
    np.testing.assert_allclose(body.com_in_link, [[0.5, 0.5, 0], [0, 0, 1]], atol=1e-15)
    points = np.array([[0, 0, 0], [2, 0, 0], [0, 1, 0]]) - [0.5, 0.5, 0]
    masses = np.array([1.0, 1.0, 2.0])
    expected = sum(
        m * (p @ p * np.eye(3) - np.outer(p, p)) for m, p in zip(masses, points, strict=True)
    )
    np.testing.assert_allclose(body.inertia_in_link[0], expected, atol=1e-14)
    np.testing.assert_allclose(body.inertia_in_link[1], np.zeros((3, 3)), atol=1e-15)
    assert body.link_names == ("b", "d")


def test_inertials_agree_with_the_chain():
    rng = np.random.default_rng(9)
    text, specs = _random_chain(rng, 4)
    chain = chain_from_urdf(text)
    body = inertials_from_urdf(text)
    assert body.mass.shape == (4,) and body.com_in_link.shape == (4, 3)
    assert body.inertia_in_link.shape == (4, 3, 3)
    np.testing.assert_array_equal(body.mass, 0.0)  # no <inertial>: massless
    assert len(body.joint_names) == chain.n_joints


def test_inertials_result_contract():
    text = _inertial_robot(
        {"a": "", "b": _inertial_xml(1.0, inertia=(1, 0, 0, 1, 0, 1))},
        [_joint_xml("j", "revolute", "a", "b")],
    )
    body = inertials_from_urdf(text)
    assert isinstance(body, UrdfInertials)
    assert body == inertials_from_urdf(text) == pickle.loads(pickle.dumps(body))
    json.dumps(body.to_dict())
    assert not body.mass.flags.writeable
    assert "UrdfInertials" in repr(body)


@pytest.mark.parametrize(
    ("inertial", "match"),
    [
        ("<inertial/>", r"no <mass"),
        ('<inertial><mass value="-1"/></inertial>', r"non-negative"),
        ('<inertial><mass value="1"/><inertia ixx="a"/></inertial>', r"ixx"),
        ('<inertial><mass value="1e200"/></inertial>', r"within"),
        ('<inertial><mass value="\u0662"/></inertial>', r"a decimal number written in ASCII"),
    ],
)
def test_bad_inertials_are_refused(inertial, match):
    text = _inertial_robot({"a": "", "b": inertial}, [_joint_xml("j", "revolute", "a", "b")])
    with pytest.raises(ValueError, match=r"`urdf_text`.*" + match):
        inertials_from_urdf(text)
