"""Tests of gravdir.poses against explicit products of elementary rotations."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gravdir.errors import GravdirWarning
from gravdir.poses import (
    abb_from_pose,
    check_poses,
    fanuc_from_pose,
    kuka_from_pose,
    pose_from_abb,
    pose_from_fanuc,
    pose_from_kuka,
    pose_from_ur,
    ur_from_pose,
)


def rx(a: float) -> np.ndarray:
    c, s = np.cos(a), np.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def ry(a: float) -> np.ndarray:
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def rz(a: float) -> np.ndarray:
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


angle = st.floats(-179.0, 179.0)
middle = st.floats(-89.0, 89.0)


@given(angle, middle, angle)
def test_kuka_is_rz_ry_rx_and_round_trips(a: float, b: float, c: float) -> None:
    xyzabc = [123.0, -45.0, 678.0, a, b, c]
    t = pose_from_kuka(xyzabc, unit="mm", angles="deg")
    want = rz(np.radians(a)) @ ry(np.radians(b)) @ rx(np.radians(c))
    assert np.allclose(t[:3, :3], want, atol=1e-12)
    assert np.allclose(t[:3, 3], [0.123, -0.045, 0.678])
    assert np.allclose(kuka_from_pose(t, unit="mm", angles="deg"), xyzabc, atol=1e-8)


@given(angle, middle, angle)
def test_fanuc_is_fixed_xyz_and_round_trips(w: float, p: float, r: float) -> None:
    xyzwpr = np.array([0.5, 0.1, 0.2, np.radians(w), np.radians(p), np.radians(r)])
    t = pose_from_fanuc(xyzwpr, unit="m", angles="rad")
    want = rz(np.radians(r)) @ ry(np.radians(p)) @ rx(np.radians(w))
    assert np.allclose(t[:3, :3], want, atol=1e-12)
    assert np.allclose(fanuc_from_pose(t, unit="m", angles="rad"), xyzwpr, atol=1e-10)


@given(st.lists(st.floats(-3.0, 3.0), min_size=3, max_size=3))
def test_ur_rotation_vector_is_rodrigues_and_round_trips(rv: list[float]) -> None:
    r = np.array(rv)
    theta = np.linalg.norm(r)
    pose = np.r_[0.4, -0.2, 0.1, r]
    t = pose_from_ur(pose, unit="m")
    if theta > 1e-9:
        k = r / theta
        kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
        want = np.eye(3) + np.sin(theta) * kx + (1 - np.cos(theta)) * kx @ kx
        assert np.allclose(t[:3, :3], want, atol=1e-12)
    back = ur_from_pose(t, unit="mm")
    assert np.allclose(back[:3], [400.0, -200.0, 100.0])
    if theta < np.pi - 1e-6:
        assert np.allclose(back[3:], r, atol=1e-9)
    else:  # the same rotation, with angle 2 pi - |r| about -r
        assert np.linalg.norm(back[3:]) <= np.pi + 1e-12
        assert np.allclose(pose_from_ur(back, unit="mm"), t, atol=1e-12)


@given(st.lists(st.floats(-1.0, 1.0), min_size=4, max_size=4))
def test_abb_quaternion_scalar_first_and_round_trips(q: list[float]) -> None:
    qa = np.array(q)
    if np.linalg.norm(qa) < 0.1:
        qa = np.array([1.0, 0.0, 0.0, 0.0])
    qa = qa / np.linalg.norm(qa)
    w, x, y, z = qa
    v = np.array([x, y, z])
    vx = np.array([[0, -z, y], [z, 0, -x], [-y, x, 0]])
    want = np.eye(3) + 2 * w * vx + 2 * vx @ vx
    t = pose_from_abb(np.r_[600.0, 0.0, 400.0, qa], unit="mm")
    assert np.allclose(t[:3, :3], want, atol=1e-12)
    back = abb_from_pose(t, unit="mm")
    sign = 1.0 if qa[0] >= 0 else -1.0
    if abs(qa[0]) > 1e-9:
        assert np.allclose(back[3:], sign * qa, atol=1e-9)
    assert np.allclose(back[:3], [600.0, 0.0, 400.0])
    assert np.linalg.norm(v) <= 1.0 + 1e-12


def test_documented_examples() -> None:
    # Tool pointing down: pi about y (UR), quaternion [0, 0, 1, 0] (ABB), C = 180 (KUKA).
    down = np.array([0.0, 0.0, -1.0])
    assert np.allclose(pose_from_ur([0.4, 0, 0.3, 0, np.pi, 0], unit="m")[:3, 2], down)
    assert np.allclose(pose_from_abb([600, 0, 400, 0, 0, 1, 0], unit="mm")[:3, 2], down)
    tk = pose_from_kuka([500, 0, 800, 0, 0, 180], unit="mm", angles="deg")
    assert np.allclose(tk[:3, 2], down)
    tf = pose_from_fanuc([500, 0, 800, 180, 0, 0], unit="mm", angles="deg")
    assert np.allclose(tf, tk)


def test_batch_shapes() -> None:
    rng = np.random.default_rng(0)
    poses = np.c_[rng.uniform(-500, 500, (2, 3, 3)), rng.uniform(-1, 1, (2, 3, 3))]
    t = pose_from_ur(poses, unit="mm")
    assert t.shape == (2, 3, 4, 4)
    assert np.allclose(t[1, 2], pose_from_ur(poses[1, 2], unit="mm"))
    assert ur_from_pose(t, unit="mm").shape == (2, 3, 6)


def test_gimbal_lock_warns() -> None:
    t = pose_from_kuka([0, 0, 0, 30, 90, 10], unit="mm", angles="deg")
    with pytest.warns(GravdirWarning, match="gimbal lock"):
        abc = kuka_from_pose(t, unit="mm", angles="deg")
    assert np.allclose(pose_from_kuka(abc, unit="mm", angles="deg"), t, atol=1e-9)


def test_errors_name_the_argument() -> None:
    with pytest.raises(ValueError, match="`unit` to be one of 'mm', 'm', got 'cm'"):
        pose_from_ur([0, 0, 0, 0, 0, 0], unit="cm")
    with pytest.raises(ValueError, match="`angles`"):
        pose_from_kuka([0, 0, 0, 0, 0, 0], unit="mm", angles="grad")
    with pytest.raises(ValueError, match=r"`xyzwpr` to have shape \(\.\.\., 6\)"):
        pose_from_fanuc([0, 0, 0, 0, 0], unit="mm", angles="deg")
    with pytest.raises(ValueError, match="quaternion in `pose` to have unit norm"):
        pose_from_abb([0, 0, 0, 1, 1, 0, 0], unit="mm")
    with pytest.raises(ValueError, match="`pose` to be finite"):
        pose_from_ur([0, 0, np.nan, 0, 0, 0], unit="m")
    bad = np.eye(4)
    bad[0, 0] = 2.0
    with pytest.raises(ValueError, match="`pose` to be rotation matrices"):
        ur_from_pose(bad, unit="m")
    with pytest.raises(ValueError, match="`T` to have bottom row"):
        check_poses(np.ones((4, 4)), "T")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert check_poses(np.eye(4), "T").shape == (4, 4)


def test_atol_is_checked_and_named() -> None:
    # Seen to fail: atol=nan passed check_poses, and atol=-1 blamed `pose`.
    for atol in (np.nan, -1.0, 0.0, np.inf, 1.0, "1e-6", True):
        with pytest.raises(ValueError, match="`atol`"):
            check_poses(np.eye(4), "pose", atol=atol)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="`atol`"):
            pose_from_abb([0, 0, 0, 1, 0, 0, 0], unit="mm", atol=atol)  # type: ignore[arg-type]
    assert check_poses(np.eye(4), "pose", atol=0.5).shape == (4, 4)


def test_pose_from_ur_accepts_read_only_input() -> None:
    # Seen to fail: a read-only array was refused ("buffer source array is read-only").
    pose = np.array([0.4, -0.1, 0.3, 0.1, 3.0, -0.2])
    frozen = pose.copy()
    frozen.flags.writeable = False
    np.testing.assert_array_equal(pose_from_ur(frozen, unit="m"), pose_from_ur(pose, unit="m"))
    t = pose_from_ur(pose, unit="m")
    t.flags.writeable = False
    np.testing.assert_array_equal(ur_from_pose(t, unit="m"), ur_from_pose(t.copy(), unit="m"))
    quat = np.array([600.0, 0.0, 400.0, 0.0, 0.0, 1.0, 0.0])
    quat.flags.writeable = False
    assert np.all(np.isfinite(pose_from_abb(quat, unit="mm")))


def test_angles_beyond_two_turns_are_refused() -> None:
    # Seen to fail: a huge rotation vector gave a pose of NaN without a warning.
    with np.errstate(all="raise"):
        with pytest.raises(ValueError, match=r"angle \|r\| of `pose` in radians.*degrees\?"):
            pose_from_ur([0.4, 0.0, 0.3, 0.0, 0.0, 1e300], unit="m")
        with pytest.raises(ValueError, match=r"degrees\?"):
            pose_from_ur([0.4, 0.0, 0.3, 0.0, 180.0, 0.0], unit="m")
        with pytest.raises(ValueError, match=r"angles of `xyzabc` in radians.*degrees\?"):
            pose_from_kuka([500, 0, 800, 30, -20, 175], unit="mm", angles="rad")
        with pytest.raises(ValueError, match=r"angles of `xyzwpr` in degrees, at most 720"):
            pose_from_fanuc([500, 0, 800, 1e300, 0, 0], unit="mm", angles="deg")
    # Up to two turns a rotation vector is accepted, and means what it says.
    t = pose_from_ur([0.0, 0.0, 0.0, 0.0, 0.0, 2 * np.pi + 0.5], unit="m")
    np.testing.assert_allclose(t, pose_from_ur([0, 0, 0, 0, 0, 0.5], unit="m"), atol=1e-12)


def test_extreme_entries_give_clear_errors() -> None:
    with np.errstate(all="raise"):
        huge = np.eye(4)
        huge[:3, :3] *= 1e300
        with pytest.raises(ValueError, match="`pose` to be rotation matrices"):
            check_poses(huge, "pose")
        far = np.eye(4)
        far[0, 3] = 1e306
        with pytest.raises(ValueError, match="translation of `pose` to be finite in mm"):
            ur_from_pose(far, unit="mm")
        assert ur_from_pose(far, unit="m")[0] == 1e306
        tiny = pose_from_ur([1e-310, 0.0, 0.0, 1e-300, 0.0, 0.0], unit="mm")
        np.testing.assert_allclose(tiny[:3, :3], np.eye(3), rtol=0, atol=2e-300)
        assert abs(tiny[0, 3]) < 1e-312
        with pytest.raises(ValueError, match="quaternion in `pose` to have unit norm"):
            pose_from_abb([0, 0, 0, 1e300, 1e300, 0, 0], unit="mm")
