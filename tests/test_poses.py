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
    t = pose_from_abb([600.0, 0.0, 400.0], quaternion_wxyz=qa, unit="mm")
    assert np.allclose(t[:3, :3], want, atol=1e-12)
    back = abb_from_pose(t, unit="mm")
    assert back[3] >= 0.0
    sign = 1.0 if qa[0] >= 0 else -1.0
    if abs(qa[0]) > 1e-9:
        assert np.allclose(back[3:], sign * qa, atol=1e-9)
    assert np.allclose(back[:3], [600.0, 0.0, 400.0])
    assert np.linalg.norm(v) <= 1.0 + 1e-12


def test_documented_examples() -> None:
    # Tool pointing down: pi about y (UR), quaternion [0, 0, 1, 0] (ABB), C = 180 (KUKA).
    down = np.array([0.0, 0.0, -1.0])
    assert np.allclose(pose_from_ur([0.4, 0, 0.3, 0, np.pi, 0], unit="m")[:3, 2], down)
    tool_down = pose_from_abb([600, 0, 400], quaternion_wxyz=[0, 0, 1, 0], unit="mm")
    assert np.allclose(tool_down[:3, 2], down)
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
    with pytest.raises(ValueError, match="`quaternion_wxyz` to have unit norm"):
        pose_from_abb([0, 0, 0], quaternion_wxyz=[1, 1, 0, 0], unit="mm")
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
            pose_from_abb(
                [0, 0, 0], quaternion_wxyz=[1, 0, 0, 0], unit="mm", atol=atol  # type: ignore[arg-type]
            )
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
    trans = np.array([600.0, 0.0, 400.0])
    quat = np.array([0.0, 0.0, 1.0, 0.0])
    trans.flags.writeable = False
    quat.flags.writeable = False
    assert np.all(np.isfinite(pose_from_abb(trans, quaternion_wxyz=quat, unit="mm")))


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
        with pytest.raises(ValueError, match="`quaternion_wxyz` to have unit norm"):
            pose_from_abb([0, 0, 0], quaternion_wxyz=[1e300, 1e300, 0, 0], unit="mm")


# --- quaternion guards -----------------------------------------------------------------------


def _angle_between_rotations(a: np.ndarray, b: np.ndarray) -> float:
    """Angle of the rotation a^T b, from its trace (explicit, not via scipy)."""
    return float(np.degrees(np.arccos(np.clip((np.trace(a.T @ b) - 1.0) / 2.0, -1.0, 1.0))))


def test_scalar_last_quaternion_cannot_be_passed_unnamed() -> None:
    # Seen to fail: a scalar-last quaternion in the 7-vector of pose_from_abb gave a pose 176°
    # off, with no error: both orders are unit quaternions, so no check on the values can tell.
    half = np.radians(4.0) / 2  # 4° about z: RAPID's rot = [cos, 0, 0, sin]
    wxyz = np.array([np.cos(half), 0.0, 0.0, np.sin(half)])
    xyzw = wxyz[[1, 2, 3, 0]]
    right = pose_from_abb([600.0, 0.0, 400.0], quaternion_wxyz=wxyz, unit="mm")
    np.testing.assert_allclose(right[:3, :3], rz(np.radians(4.0)), atol=1e-12)
    # The scalar-last values read as scalar-first are a valid rotation 176° away ...
    wrong = pose_from_abb([600.0, 0.0, 400.0], quaternion_wxyz=xyzw, unit="mm")
    # (the relative rotation has scalar part sin(4°)/2: 2 acos(0.0349) = 176.0°)
    assert _angle_between_rotations(right[:3, :3], wrong[:3, :3]) == pytest.approx(176.0, abs=0.01)
    # ... so the order is in the name: the old unnamed 7-vector call is refused,
    with pytest.raises(ValueError, match=r"exactly one of `quaternion_wxyz`.*7 columns"):
        pose_from_abb(np.r_[600.0, 0.0, 400.0, xyzw], unit="mm")
    # a scalar-last quaternion has its own name and gives the right pose,
    named = pose_from_abb([600.0, 0.0, 400.0], quaternion_xyzw=xyzw, unit="mm")
    np.testing.assert_allclose(named, right, atol=1e-15)
    # and one of the two names is required, never both.
    with pytest.raises(ValueError, match="exactly one of `quaternion_wxyz`.*got neither"):
        pose_from_abb([600.0, 0.0, 400.0], unit="mm")
    with pytest.raises(ValueError, match="exactly one of `quaternion_wxyz`.*got both"):
        pose_from_abb([0, 0, 0], quaternion_wxyz=wxyz, quaternion_xyzw=xyzw, unit="mm")


def test_printed_six_decimal_quaternion_is_accepted_and_renormalised() -> None:
    rng = np.random.default_rng(3)
    for _ in range(200):
        q = rng.normal(size=4)
        q /= np.linalg.norm(q)
        printed = np.round(q, 6)  # a log printed with 6 decimals
        assert abs(np.linalg.norm(printed) - 1.0) <= 2e-6
        t = pose_from_abb([0.0, 0.0, 0.0], quaternion_wxyz=printed, unit="m")
        r = t[:3, :3]
        np.testing.assert_allclose(r.T @ r, np.eye(3), atol=1e-14)  # renormalised
        exact = pose_from_abb([0.0, 0.0, 0.0], quaternion_wxyz=q, unit="m")
        assert _angle_between_rotations(r, exact[:3, :3]) < 1e-3  # degrees


def test_quaternion_off_unit_by_1e_3_is_refused() -> None:
    # Seen to pass silently: the old default tolerance (1e-4) was loose, and a caller's
    # quaternion off by 1e-3 was normalised without a word.
    q = np.array([0.5, 0.5, 0.5, 0.5]) * 1.001
    msg = r"`quaternion_wxyz` to have unit norm \(within `atol`=1e-05"
    with pytest.raises(ValueError, match=msg):
        pose_from_abb([0, 0, 0], quaternion_wxyz=q, unit="mm")
    with pytest.raises(ValueError, match="`quaternion_xyzw` to have unit norm"):
        pose_from_abb([0, 0, 0], quaternion_xyzw=q, unit="mm")
    # 1e-5 is the edge; a log printed with 4 decimals passes with a looser, stated `atol`.
    ok = np.array([1.0, 0.0, 0.0, 0.0]) * (1 + 0.9e-5)
    assert pose_from_abb([0, 0, 0], quaternion_wxyz=ok, unit="mm").shape == (4, 4)
    bad = np.array([1.0, 0.0, 0.0, 0.0]) * (1 + 1.1e-5)
    with pytest.raises(ValueError, match="unit norm"):
        pose_from_abb([0, 0, 0], quaternion_wxyz=bad, unit="mm")
    four = np.round(np.array([0.1, 0.7, 0.7, 0.1]) / np.linalg.norm([0.1, 0.7, 0.7, 0.1]), 4)
    assert pose_from_abb([0, 0, 0], quaternion_wxyz=four, unit="mm", atol=1e-4).shape == (4, 4)


def test_abb_round_trip_and_batch() -> None:
    rng = np.random.default_rng(8)
    q = rng.normal(size=(5, 4))
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    trans = rng.uniform(-800, 800, (5, 3))
    t = pose_from_abb(trans, quaternion_wxyz=q, unit="mm")
    assert t.shape == (5, 4, 4)
    for i in range(5):
        np.testing.assert_array_equal(
            t[i], pose_from_abb(trans[i], quaternion_wxyz=q[i], unit="mm")
        )
    r = abb_from_pose(t, unit="mm")
    assert np.all(r[:, 3] >= 0)
    np.testing.assert_allclose(r[:, 3:], q * np.sign(q[:, :1]), atol=1e-12)
    back = pose_from_abb(r[:, :3], quaternion_wxyz=r[:, 3:], unit="mm")
    np.testing.assert_allclose(back, t, atol=1e-12)
    # One quaternion broadcasts over many positions.
    many = pose_from_abb(trans, quaternion_wxyz=q[0], unit="mm")
    np.testing.assert_allclose(many[:, :3, :3], np.broadcast_to(t[0, :3, :3], (5, 3, 3)))
    with pytest.raises(ValueError, match="`trans` .* `quaternion_wxyz` .* broadcast"):
        pose_from_abb(trans[:2], quaternion_wxyz=q[:3], unit="mm")


def test_abb_canonical_sign_where_the_scalar_is_zero() -> None:
    # q1 = 0: a half turn; the first non-zero component is made positive.
    t = pose_from_abb([0, 0, 0], quaternion_wxyz=[0.0, 0.0, -1.0, 0.0], unit="m")
    np.testing.assert_allclose(abb_from_pose(t, unit="m")[3:], [0, 0, 1, 0], atol=1e-15)
