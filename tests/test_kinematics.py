"""Tests for gravdir.kinematics: DH, modified DH and PoE descriptions of serial chains."""

from __future__ import annotations

import dataclasses
import json
import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from gravdir.frames import angle_between
from gravdir.kinematics import (
    ChainFrames,
    SerialChain,
    chain_from_dh,
    chain_from_poe,
    link_frames,
)

# Public UR5 standard DH parameters (metres, radians).
UR5_D = np.array([0.089159, 0.0, 0.0, 0.10915, 0.09465, 0.0823])
UR5_A = np.array([0.0, -0.425, -0.39225, 0.0, 0.0, 0.0])
UR5_ALPHA = np.array([np.pi / 2, 0.0, 0.0, np.pi / 2, -np.pi / 2, 0.0])
UR5_OFFSET = np.zeros(6)


# Elementary transforms written out by hand, independent of the library.
def rot_z(t: float) -> np.ndarray:
    c, s = np.cos(t), np.sin(t)
    return np.array([[c, -s, 0, 0], [s, c, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]])


def rot_x(t: float) -> np.ndarray:
    c, s = np.cos(t), np.sin(t)
    return np.array([[1, 0, 0, 0], [0, c, -s, 0], [0, s, c, 0], [0, 0, 0, 1.0]])


def trans_z(d: float) -> np.ndarray:
    return np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, d], [0, 0, 0, 1.0]])


def trans_x(a: float) -> np.ndarray:
    return np.array([[1, 0, 0, a], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]])


def dh_frames(q, d, offset, a, alpha, base=None) -> list[np.ndarray]:  # type: ignore[no-untyped-def]
    """Frames 0..n of a standard DH chain by explicit products."""
    frames = [np.eye(4) if base is None else base]
    for i in range(len(d)):
        a_i = rot_z(q[i] + offset[i]) @ trans_z(d[i]) @ trans_x(a[i]) @ rot_x(alpha[i])
        frames.append(frames[-1] @ a_i)
    return frames


def modified_dh_frames(q, d, offset, a, alpha) -> list[np.ndarray]:  # type: ignore[no-untyped-def]
    """Frames 0..n of a modified DH chain by explicit products."""
    frames = [np.eye(4)]
    for i in range(len(d)):
        a_i = rot_x(alpha[i]) @ trans_x(a[i]) @ rot_z(q[i] + offset[i]) @ trans_z(d[i])
        frames.append(frames[-1] @ a_i)
    return frames


def ur5_modified() -> SerialChain:
    """The UR5 in modified DH: a_{i-1}, alpha_{i-1} move one row down; the last go to the tool."""
    a = np.concatenate([[0.0], UR5_A[:-1]])
    alpha = np.concatenate([[0.0], UR5_ALPHA[:-1]])
    tool = trans_x(UR5_A[-1]) @ rot_x(UR5_ALPHA[-1])
    return chain_from_dh(UR5_D, UR5_OFFSET, a, alpha, convention="modified", link_from_flange=tool)


def ur5_poe_from_hand_frames(with_links: bool) -> SerialChain:
    """The UR5 as a product of exponentials, screws read off hand-computed home DH frames."""
    frames = dh_frames(np.zeros(6), UR5_D, UR5_OFFSET, UR5_A, UR5_ALPHA)
    screws = []
    for i in range(6):
        w, p = frames[i][:3, 2], frames[i][:3, 3]
        screws.append(np.concatenate([w, -np.cross(w, p)]))
    links = np.array(frames[1:]) if with_links else None
    return chain_from_poe(np.array(screws), frames[-1], home_links=links)


def assert_same_lines(frames_a: ChainFrames, frames_b: ChainFrames) -> None:
    np.testing.assert_allclose(frames_a.joint_axes, frames_b.joint_axes, atol=1e-12)
    offset = frames_a.joint_points - frames_b.joint_points
    np.testing.assert_allclose(np.cross(offset, frames_a.joint_axes), 0.0, atol=1e-12)


def random_q(rng: np.random.Generator, shape: tuple[int, ...], n: int = 6) -> np.ndarray:
    return rng.uniform(-np.pi, np.pi, size=shape + (n,))


# --------------------------------------------------------------------------------------------
# Against explicit products
# --------------------------------------------------------------------------------------------


def test_dh_matches_explicit_product() -> None:
    rng = np.random.default_rng(10)
    chain = chain_from_dh(UR5_D, UR5_OFFSET, UR5_A, UR5_ALPHA)
    for q in random_q(rng, (5,)):
        frames = link_frames(chain, q)
        expected = dh_frames(q, UR5_D, UR5_OFFSET, UR5_A, UR5_ALPHA)
        for i in range(6):
            np.testing.assert_allclose(frames.link_poses[i], expected[i + 1], atol=1e-13)
            np.testing.assert_allclose(frames.joint_axes[i], expected[i][:3, 2], atol=1e-13)
            np.testing.assert_allclose(frames.joint_points[i], expected[i][:3, 3], atol=1e-13)
        np.testing.assert_allclose(frames.flange, expected[-1], atol=1e-13)


def test_modified_dh_matches_explicit_product() -> None:
    rng = np.random.default_rng(11)
    d, off = rng.uniform(-0.5, 0.5, 5), rng.uniform(-np.pi, np.pi, 5)
    a, alpha = rng.uniform(-0.5, 0.5, 5), rng.uniform(-np.pi, np.pi, 5)
    chain = chain_from_dh(d, off, a, alpha, convention="modified")
    assert chain.description == "modified_dh"
    for q in random_q(rng, (4,), n=5):
        frames = link_frames(chain, q)
        expected = modified_dh_frames(q, d, off, a, alpha)
        for i in range(5):
            np.testing.assert_allclose(frames.link_poses[i], expected[i + 1], atol=1e-13)
            np.testing.assert_allclose(frames.joint_axes[i], expected[i + 1][:3, 2], atol=1e-13)
            np.testing.assert_allclose(frames.joint_points[i], expected[i + 1][:3, 3], atol=1e-13)
        np.testing.assert_allclose(frames.flange, expected[-1], atol=1e-13)
    np.testing.assert_allclose(chain.axes_in_link, np.tile([0, 0, 1.0], (5, 1)), atol=1e-15)


def test_ur5_dh_modified_dh_and_poe_agree() -> None:
    rng = np.random.default_rng(12)
    q = random_q(rng, (20,))
    dh = link_frames(chain_from_dh(UR5_D, UR5_OFFSET, UR5_A, UR5_ALPHA), q)
    mdh = link_frames(ur5_modified(), q)
    poe = link_frames(ur5_poe_from_hand_frames(with_links=False), q)
    poe_links = link_frames(ur5_poe_from_hand_frames(with_links=True), q)
    for other in (mdh, poe, poe_links):
        assert_same_lines(dh, other)
        np.testing.assert_allclose(other.flange, dh.flange, atol=1e-13)
    # With the DH frames as home link frames, the PoE link frames are the DH ones.
    np.testing.assert_allclose(poe_links.rotations, dh.rotations, atol=1e-13)
    np.testing.assert_allclose(poe_links.origins, dh.origins, atol=1e-13)
    # Standard DH joint i's point is the origin of frame i - 1: the base origin for joint 1.
    np.testing.assert_allclose(dh.joint_points[:, 0], 0.0, atol=1e-15)


def test_poe_matches_published_ur5_example() -> None:
    # Lynch and Park, Modern Robotics, example 4.5: the UR5 in the space frame.
    w1, w2, l1, l2, h1, h2 = 0.109, 0.082, 0.425, 0.392, 0.089, 0.095
    home = np.array([[-1, 0, 0, l1 + l2], [0, 0, 1, w1 + w2], [0, 1, 0, h1 - h2], [0, 0, 0, 1.0]])
    screws = np.array(
        [
            [0, 0, 1, 0, 0, 0],
            [0, 1, 0, -h1, 0, 0],
            [0, 1, 0, -h1, 0, l1],
            [0, 1, 0, -h1, 0, l1 + l2],
            [0, 0, -1, -w1, l1 + l2, 0],
            [0, 1, 0, h2 - h1, 0, l1 + l2],
        ],
        dtype=float,
    )
    frames = link_frames(chain_from_poe(screws, home), [0, -np.pi / 2, 0, 0, np.pi / 2, 0])
    expected = np.array([[0, -1, 0, 0.095], [1, 0, 0, 0.109], [0, 0, 1, 0.988], [0, 0, 0, 1.0]])
    np.testing.assert_allclose(frames.flange, expected, atol=1e-12)


dh_rows = st.integers(1, 6).flatmap(
    lambda n: st.tuples(
        *(
            st.lists(st.floats(lo, hi), min_size=n, max_size=n)
            for lo, hi in [(-1, 1), (-4, 4), (-1, 1), (-4, 4), (-4, 4)]
        )
    )
)


@given(dh_rows)
def test_random_dh_chains_agree_with_products_and_poe(rows: tuple[list[float], ...]) -> None:
    d, off, a, alpha, q = (np.array(r) for r in rows)
    n = d.size
    base = np.eye(4)
    base[:3, :3] = Rotation.from_rotvec([0.3, -0.2, 0.5]).as_matrix()
    base[:3, 3] = [0.1, -0.2, 0.3]
    chain = chain_from_dh(d, off, a, alpha, base=base)
    frames = link_frames(chain, q)
    expected = dh_frames(q, d, off, a, alpha, base)
    np.testing.assert_allclose(frames.link_poses, np.array(expected[1:]), atol=1e-12)
    # The same chain as a product of exponentials in frame 0, placed by `base`.
    home = dh_frames(np.zeros(n), d, off, a, alpha)
    screws = [np.concatenate([f[:3, 2], -np.cross(f[:3, 2], f[:3, 3])]) for f in home[:-1]]
    poe = link_frames(chain_from_poe(np.array(screws), home[-1], base=base), q)
    assert_same_lines(frames, poe)
    np.testing.assert_allclose(poe.flange, frames.flange, atol=1e-12)
    # Standard DH: joint i's axis in link i's frame is (0, sin alpha_i, cos alpha_i).
    np.testing.assert_allclose(
        chain.axes_in_link, np.stack([0 * alpha, np.sin(alpha), np.cos(alpha)], -1), atol=1e-14
    )


# --------------------------------------------------------------------------------------------
# Convention: the joint axis is fixed in its link's frame; the joint turns its link about it
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("which", ["dh", "modified", "poe_links"])
def test_axes_in_link_are_constant_and_joint_turns_link_about_axis(which: str) -> None:
    chain = {
        "dh": chain_from_dh(UR5_D, UR5_OFFSET, UR5_A, UR5_ALPHA),
        "modified": ur5_modified(),
        "poe_links": ur5_poe_from_hand_frames(with_links=True),
    }[which]
    rng = np.random.default_rng(13)
    q = random_q(rng, (8,))
    frames = link_frames(chain, q)
    in_link = np.einsum("...nji,...nj->...ni", frames.rotations, frames.joint_axes)
    np.testing.assert_allclose(
        in_link, np.broadcast_to(chain.axes_in_link, in_link.shape), atol=1e-13
    )
    np.testing.assert_allclose(frames.axes_in_link, chain.axes_in_link)
    step = 0.37
    for i in range(6):
        moved = link_frames(chain, q + step * np.eye(6)[i])
        # Links before i do not move.
        np.testing.assert_allclose(moved.link_poses[:, :i], frames.link_poses[:, :i], atol=1e-13)
        # Link i turns by `step` about its joint's axis line, right-handedly.
        delta = moved.link_poses[:, i] @ np.linalg.inv(frames.link_poses[:, i])
        rotvec = Rotation.from_matrix(delta[:, :3, :3]).as_rotvec()
        np.testing.assert_allclose(rotvec, step * frames.joint_axes[:, i], atol=1e-12)
        p = frames.joint_points[:, i]
        np.testing.assert_allclose(
            np.einsum("nij,nj->ni", delta[:, :3, :3], p) + delta[:, :3, 3], p, atol=1e-12
        )


def test_batched_equals_loop_and_shapes() -> None:
    rng = np.random.default_rng(14)
    chain = chain_from_dh(UR5_D, UR5_OFFSET, UR5_A, UR5_ALPHA)
    q = random_q(rng, (3, 4))
    frames = link_frames(chain, q)
    assert frames.rotations.shape == (3, 4, 6, 3, 3)
    assert frames.origins.shape == (3, 4, 6, 3)
    assert frames.joint_axes.shape == (3, 4, 6, 3)
    assert frames.joint_points.shape == (3, 4, 6, 3)
    assert frames.flange.shape == (3, 4, 4, 4)
    assert frames.link_poses.shape == (3, 4, 6, 4, 4)
    for idx in np.ndindex(3, 4):
        single = link_frames(chain, q[idx])
        np.testing.assert_allclose(single.rotations, frames.rotations[idx], atol=1e-15)
        np.testing.assert_allclose(single.joint_points, frames.joint_points[idx], atol=1e-15)
        np.testing.assert_allclose(single.flange, frames.flange[idx], atol=1e-15)
    np.testing.assert_allclose(np.linalg.norm(frames.joint_axes, axis=-1), 1.0, atol=1e-14)
    assert repr(frames) == "ChainFrames(batch_shape=(3, 4), n_joints=6)"


def test_base_pose_moves_everything() -> None:
    rng = np.random.default_rng(15)
    base = np.eye(4)
    base[:3, :3] = Rotation.random(None, rng).as_matrix()
    base[:3, 3] = rng.normal(size=3)
    q = random_q(rng, (5,))
    plain = link_frames(chain_from_dh(UR5_D, UR5_OFFSET, UR5_A, UR5_ALPHA), q)
    placed = link_frames(chain_from_dh(UR5_D, UR5_OFFSET, UR5_A, UR5_ALPHA, base=base), q)
    np.testing.assert_allclose(placed.flange, base @ plain.flange, atol=1e-13)
    np.testing.assert_allclose(placed.link_poses, base @ plain.link_poses, atol=1e-13)
    np.testing.assert_allclose(placed.joint_axes, plain.joint_axes @ base[:3, :3].T, atol=1e-13)
    # Planar sanity check with a known answer: unit links, second joint at 90 degrees.
    frames = link_frames(chain_from_dh([0, 0], [0, 0], [1, 1], [0, 0]), [0.0, np.pi / 2])
    np.testing.assert_allclose(frames.flange[:3, 3], [1, 1, 0], atol=1e-15)
    assert angle_between(frames.joint_axes[1], [0, 0, 1]) == 0.0


def test_chain_is_frozen_and_read_only() -> None:
    chain = chain_from_dh(UR5_D, UR5_OFFSET, UR5_A, UR5_ALPHA)
    assert repr(chain) == "SerialChain(n_joints=6, description='dh')"
    assert chain.n_joints == 6
    assert chain.screws.shape == (6, 6)
    with pytest.raises(dataclasses.FrozenInstanceError):
        chain.description = "x"  # type: ignore[misc]
    with pytest.raises(ValueError, match="read-only"):
        chain.home_axes[0, 0] = 2.0
    # Screws round-trip through chain_from_poe.
    again = chain_from_poe(chain.screws, chain.home_flange, home_links=chain.home_links)
    q = np.full(6, 0.3)
    np.testing.assert_allclose(
        link_frames(again, q).link_poses, link_frames(chain, q).link_poses, atol=1e-14
    )


def test_nearly_rigid_inputs_are_cleaned() -> None:
    tool = np.eye(4)
    tool[:3, :3] += 1e-8 * np.array([[0, 1, 0], [0, 0, 0], [0, 0, 0]])
    chain = chain_from_dh([0.1], [0.0], [0.2], [0.3], link_from_flange=tool)
    r = chain.home_flange[:3, :3]
    np.testing.assert_allclose(r.T @ r, np.eye(3), atol=1e-15)
    screws = np.array([[0, 0, 1 + 1e-8, 0.1, 0, 1e-9]])
    poe = chain_from_poe(screws, np.eye(4))
    np.testing.assert_allclose(np.linalg.norm(poe.home_axes, axis=-1), 1.0, atol=1e-15)
    assert abs(poe.screws[0, :3] @ poe.screws[0, 3:]) <= 1e-15


# --------------------------------------------------------------------------------------------
# Bad input
# --------------------------------------------------------------------------------------------


def test_dh_bad_input_raises() -> None:
    with pytest.raises(ValueError, match=r"`a` to have shape \(6,\) like `d`, got \(5,\)"):
        chain_from_dh(UR5_D, UR5_OFFSET, UR5_A[:5], UR5_ALPHA)
    with pytest.raises(ValueError, match="`d` to have shape"):
        chain_from_dh(
            np.zeros((2, 3)), np.zeros(3), np.zeros(3), np.zeros(3), convention="modified"
        )
    with pytest.raises(ValueError, match="`convention` to be one of 'standard', 'modified'"):
        chain_from_dh([0.0], [0.0], [0.0], [0.0], convention="craig")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`d` to have shape"):
        chain_from_dh([], [], [], [])
    with pytest.raises(ValueError, match="`alpha` to be finite"):
        chain_from_dh([0.0], [0.0], [0.0], [np.nan])
    with pytest.raises(ValueError, match=r"rotation part \[:3, :3\] of `base` to be rotation"):
        chain_from_dh([0.0], [0.0], [0.0], [0.0], base=2 * np.eye(4))
    bad_row = np.eye(4)
    bad_row[3, 0] = 0.5
    with pytest.raises(ValueError, match="last row of `link_from_flange`"):
        chain_from_dh([0.0], [0.0], [0.0], [0.0], link_from_flange=bad_row)
    with pytest.raises(ValueError, match=r"`base` to have shape \(4, 4\)"):
        chain_from_dh([0.0], [0.0], [0.0], [0.0], base=np.eye(3))
    with pytest.raises(ValueError, match="`atol`"):
        chain_from_dh([0.0], [0.0], [0.0], [0.0], atol=0.0)


def test_poe_bad_input_raises() -> None:
    good = np.array([[0, 0, 1, 0, 0, 0.0]])
    with pytest.raises(ValueError, match=r"`screws` to have shape \(\.\.\., 6\)"):
        chain_from_poe(np.zeros((2, 5)), np.eye(4))
    with pytest.raises(ValueError, match=r"`screws` to have shape \(n, 6\)"):
        chain_from_poe(np.zeros((2, 2, 6)), np.eye(4))
    with pytest.raises(ValueError, match="revolute joints only"):
        chain_from_poe([[0, 0, 2.0, 0, 0, 0]], np.eye(4))
    with pytest.raises(ValueError, match="zero pitch"):
        chain_from_poe([[0, 0, 1.0, 0, 0, 0.1]], np.eye(4))
    with pytest.raises(ValueError, match=r"`home_links` to have shape \(1, 4, 4\)"):
        chain_from_poe(good, np.eye(4), home_links=np.tile(np.eye(4), (2, 1, 1)))
    mirror = np.diag([1.0, 1.0, -1.0, 1.0])
    with pytest.raises(ValueError, match="`home_flange.*proper rotations"):
        chain_from_poe(good, mirror)
    with pytest.raises(ValueError, match="`home_flange` to be finite"):
        chain_from_poe(good, np.full((4, 4), np.inf))


def test_link_frames_bad_input_raises() -> None:
    chain = chain_from_dh(UR5_D, UR5_OFFSET, UR5_A, UR5_ALPHA)
    with pytest.raises(ValueError, match=r"`q` to have shape \(\.\.\., 6\) for a chain of 6"):
        link_frames(chain, np.zeros((4, 5)))
    with pytest.raises(ValueError, match=r"`q` to have shape"):
        link_frames(chain, 0.0)
    with pytest.raises(ValueError, match="`q` to be finite"):
        link_frames(chain, [0, 0, 0, 0, 0, np.nan])
    with pytest.raises(ValueError, match="`chain` to be a SerialChain"):
        link_frames("ur5", np.zeros(6))  # type: ignore[arg-type]


def test_serial_chain_direct_construction_validates() -> None:
    links = np.tile(np.eye(4), (2, 1, 1))
    with pytest.raises(ValueError, match="`home_axes` to be unit"):
        SerialChain(np.ones((2, 3)), np.zeros((2, 3)), links, np.eye(4))
    with pytest.raises(ValueError, match=r"`home_points` to have shape \(2, 3\)"):
        SerialChain(np.eye(3)[:2], np.zeros((3, 3)), links, np.eye(4))
    with pytest.raises(ValueError, match=r"`home_axes` to have shape \(n, 3\)"):
        SerialChain(np.zeros((0, 3)), np.zeros((0, 3)), links[:0], np.eye(4))
    with pytest.raises(ValueError, match="`description` to be one of"):
        SerialChain(np.eye(3)[:2], np.zeros((2, 3)), links, np.eye(4), description="urdf")  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# Result contract
# --------------------------------------------------------------------------------------------


def test_chain_and_frames_follow_the_result_contract() -> None:
    chain = chain_from_dh(UR5_D, UR5_OFFSET, UR5_A, UR5_ALPHA)
    frames = link_frames(chain, np.full((2, 6), 0.4))
    for result in (chain, frames):
        copy = pickle.loads(pickle.dumps(result))
        assert copy == result
        json.dumps(result.to_dict())
        for field in dataclasses.fields(result):
            value = getattr(copy, field.name)
            if isinstance(value, np.ndarray):
                assert not value.flags.writeable
    assert chain == chain_from_dh(UR5_D, UR5_OFFSET, UR5_A, UR5_ALPHA)
    assert chain != chain_from_dh(UR5_D, UR5_OFFSET, UR5_A + 0.01, UR5_ALPHA)
    assert frames != link_frames(chain, np.full((2, 6), 0.5))
    assert chain.to_dict()["description"] == "dh"


def test_chain_copies_the_callers_arrays() -> None:
    axes, points = np.eye(3)[:2].copy(), np.zeros((2, 3))
    links = np.tile(np.eye(4), (2, 1, 1))
    chain = SerialChain(axes, points, links, np.eye(4))
    axes[0, 0], points[0, 0], links[0, 0, 3] = 0.0, 5.0, 5.0
    np.testing.assert_array_equal(chain.home_axes, np.eye(3)[:2])
    np.testing.assert_array_equal(chain.home_points, 0.0)
    np.testing.assert_array_equal(chain.home_links, np.tile(np.eye(4), (2, 1, 1)))


# --------------------------------------------------------------------------------------------
# Units, scale and types (issue 11)
# --------------------------------------------------------------------------------------------


def test_dh_angles_in_degrees_are_refused() -> None:
    with pytest.raises(ValueError, match=r"`alpha` in radians.*degrees\?"):
        chain_from_dh(UR5_D, UR5_OFFSET, UR5_A, np.degrees(UR5_ALPHA))
    with pytest.raises(ValueError, match=r"`theta_offset` in radians.*degrees\?"):
        chain_from_dh([0.0, 0.0], [0.0, 180.0], [0.5, 0.5], [0.0, 0.0], convention="modified")
    # A full turn is still radians.
    chain_from_dh([0.0], [-2 * np.pi], [0.5], [2 * np.pi])


def test_link_frames_refuses_joint_positions_in_degrees() -> None:
    # Seen: link_frames took a configuration in degrees and returned a flange pose for it,
    # while joint_sweep_from_chain refused the same numbers as degrees.
    chain = chain_from_dh(UR5_D, UR5_OFFSET, UR5_A, UR5_ALPHA)
    q = np.degrees([0.1, -0.5, 0.3, 1.0, -0.2, 1.5])
    with pytest.raises(ValueError, match=r"`q` to hold joint positions in radians.*degrees\?$"):
        link_frames(chain, q)
    batch = np.zeros((3, 6))
    batch[2, 4] = -4 * np.pi * (1 + 1e-12)
    with pytest.raises(ValueError, match=r"`q`.*-12\.566.*degrees\?$"):
        link_frames(chain, batch)
    # Two full turns either way are radians, and equal to no turn at all.
    batch[2, 4] = -4 * np.pi
    batch[1, :] = 4 * np.pi
    frames = link_frames(chain, batch)
    np.testing.assert_allclose(frames.link_poses[:2], frames.link_poses[[0, 0]], atol=1e-12)


def test_scaled_poses_and_screws_are_refused_without_overflow() -> None:
    screws = np.array([[0, 0, 1.0, 0, 0, 0], [0, 0, 1.0, 0, -0.5, 0]])
    with np.errstate(all="raise"):
        with pytest.raises(ValueError, match="rotation part .* of `base` to be rotation"):
            chain_from_dh([0.0], [0.0], [0.5], [0.0], base=np.eye(4) * 1e300)
        with pytest.raises(ValueError, match="rotation part .* of `base` to be rotation"):
            chain_from_dh([0.0], [0.0], [0.5], [0.0], base=np.eye(4) * 1e-300)
        with pytest.raises(ValueError, match="of `screws` to be unit"):
            chain_from_poe(screws * 1e300, np.eye(4))
        with pytest.raises(ValueError, match="of `screws` to be unit"):
            chain_from_poe(np.ones((2, 6)), np.eye(4))
        with pytest.raises(ValueError, match=r"lengths of `d` within \+-1e\+100"):
            chain_from_dh([1e300], [0.0], [0.0], [0.0])
        with pytest.raises(ValueError, match="translations of `home_flange`"):
            flange = np.eye(4)
            flange[0, 3] = 1e300
            chain_from_poe(screws, flange)
        with pytest.raises(ValueError, match="`home_axes` to be unit"):
            SerialChain(np.eye(3)[:1] * 1e300, np.zeros((1, 3)), np.eye(4)[None], np.eye(4))
        with pytest.raises(ValueError, match="frame origins of `d`, `a`"):
            chain_from_dh([1e100, 1e100], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0])


def test_tiny_lengths_and_angles_do_not_underflow() -> None:
    with np.errstate(all="raise"):
        chain = chain_from_dh(UR5_D * 1e-300, UR5_OFFSET, UR5_A * 1e-300, UR5_ALPHA * 1e-300)
        frames = link_frames(chain, np.full(6, 1e-300))
    assert all(np.all(np.isfinite(getattr(frames, f.name))) for f in dataclasses.fields(frames))
    np.testing.assert_allclose(frames.rotations, np.broadcast_to(np.eye(3), (6, 3, 3)), atol=1e-15)


def test_kinematics_atol_and_types() -> None:
    with pytest.raises(ValueError, match="`atol` to be below 1"):
        chain_from_dh([0.0], [0.0], [0.0], [0.0], atol=1.0)
    with pytest.raises(ValueError, match="`atol`"):
        chain_from_poe([[0, 0, 1.0, 0, 0, 0]], np.eye(4), atol=True)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`d` to be numeric"):
        chain_from_dh(np.array([True]), [0.0], [0.0], [0.0])
    with pytest.raises(ValueError, match="`alpha`"):
        chain_from_dh([0.0], [0.0], [0.0], ["0.5"])
    chain = chain_from_dh(UR5_D, UR5_OFFSET, UR5_A, UR5_ALPHA)
    with pytest.raises(ValueError, match="`q`"):
        link_frames(chain, np.array(["0.1"] * 6))
