"""Tests for gravdir.frames: up <-> tilt/azimuth, minimal rotations, canonical angles."""

from __future__ import annotations

import dataclasses
import json
import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from gravdir import testing
from gravdir.frames import (
    CanonicalAngles,
    TiltAzimuth,
    angle_between,
    azimuth_from_up,
    canonical_from_up,
    rotation_from_up,
    rotation_matrix_from_up,
    tilt_azimuth_from_up,
    tilt_from_up,
    up_from_canonical,
    up_from_tilt_azimuth,
    vector_in_target_frame,
)

Z = np.array([0.0, 0.0, 1.0])

tilts = testing.tilts()
azimuths = testing.azimuths()
unit_vectors = testing.ups()


def random_unit(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    v = rng.normal(size=shape + (3,))
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


# --------------------------------------------------------------------------------------------
# tilt / azimuth
# --------------------------------------------------------------------------------------------


def test_up_from_tilt_azimuth_known_values() -> None:
    np.testing.assert_allclose(up_from_tilt_azimuth(0.0, 1.3), [0, 0, 1], atol=1e-15)
    np.testing.assert_allclose(up_from_tilt_azimuth(np.pi / 2, 0.0), [1, 0, 0], atol=1e-15)
    np.testing.assert_allclose(
        up_from_tilt_azimuth(np.pi / 3, -np.pi / 2),
        [0, -np.sin(np.pi / 3), 0.5],
        atol=1e-15,
    )


def test_up_from_tilt_azimuth_broadcasts() -> None:
    up = up_from_tilt_azimuth(np.linspace(0, 1, 4)[:, None], np.linspace(-1, 1, 5))
    assert up.shape == (4, 5, 3)
    np.testing.assert_allclose(np.linalg.norm(up, axis=-1), 1.0, atol=1e-15)


@given(tilts, azimuths)
def test_tilt_azimuth_round_trip(tilt: float, azimuth: float) -> None:
    up = up_from_tilt_azimuth(tilt, azimuth)
    result = tilt_azimuth_from_up(up)
    assert abs(result.tilt - tilt) <= 1e-14
    assert -np.pi < result.azimuth <= np.pi
    if np.sin(tilt) > 1e-9:
        assert result.azimuth_defined
        assert (
            angle_between(
                [np.cos(result.azimuth), np.sin(result.azimuth), 0],
                [np.cos(azimuth), np.sin(azimuth), 0],
            )
            <= 1e-14 / np.sin(tilt) + 1e-15
        )
    # Inside the vertical band (sin tilt <= 1e-12) the azimuth is reset to 0, which moves the
    # rebuilt vector by at most 2e-12.
    np.testing.assert_allclose(result.up, up, atol=2e-12 if result.tilt < 1e-9 else 1e-14)


@given(unit_vectors)
def test_up_round_trip_through_tilt_azimuth(up: np.ndarray) -> None:
    back = up_from_tilt_azimuth(tilt_from_up(up), azimuth_from_up(up))
    np.testing.assert_allclose(back, up, atol=2e-15)


def test_tilt_is_accurate_near_zero_and_pi() -> None:
    for t in (1e-10, 1e-6, np.pi - 1e-10):
        up = up_from_tilt_azimuth(t, 0.7)
        assert tilt_from_up(up) == pytest.approx(t, rel=1e-12, abs=1e-24)


def test_azimuth_minus_zero_folds_to_pi() -> None:
    assert azimuth_from_up([-1.0, -0.0, 0.0]) == np.pi
    assert azimuth_from_up([-1.0, 0.0, 0.0]) == np.pi


def test_vertical_up_has_zero_azimuth_and_is_flagged() -> None:
    ups = np.array(
        [[0, 0, 1.0], [0, 0, -1.0], [1e-13, -1e-13, 1.0], [-1e-13, 0, -1.0], [-1e-10, 0, -1]]
    )
    result = tilt_azimuth_from_up(ups)
    np.testing.assert_array_equal(result.azimuth[:4], 0.0)
    np.testing.assert_array_equal(result.azimuth_defined, [False, False, False, False, True])
    assert result.azimuth[4] == np.pi
    np.testing.assert_allclose(result.tilt, [0, np.pi, 0, np.pi, np.pi], atol=1e-9)
    # A looser tolerance widens the vertical band.
    assert azimuth_from_up([-1e-10, 0, -1], vertical_atol=1e-9) == 0.0


def test_unit_requirement_and_normalize() -> None:
    with pytest.raises(ValueError, match="`up` to have unit norm"):
        tilt_from_up([0, 0, 9.81])
    assert tilt_from_up([0, 3.0, 3.0], normalize=True) == pytest.approx(np.pi / 4, abs=1e-15)
    assert azimuth_from_up([0, 3.0, 3.0], normalize=True) == pytest.approx(np.pi / 2, abs=1e-15)
    # Within atol is accepted; a looser atol accepts more.
    assert tilt_from_up([0, 0, 1 + 1e-8]) == 0.0
    assert tilt_from_up([0, 0, 1.01], atol=0.1) == 0.0
    with pytest.raises(ValueError, match="`up` to be non-zero"):
        tilt_from_up([0, 0, 0], normalize=True)


@pytest.mark.parametrize(
    ("bad", "match"),
    [
        ([0, 1], r"`up` to have shape \(\.\.\., 3\)"),
        ([0, np.nan, 1], "`up` to be finite"),
        ("abc", "`up` to be a number or an array of numbers"),
    ],
)
def test_bad_up_raises(bad: object, match: str) -> None:
    for func in (tilt_from_up, azimuth_from_up, tilt_azimuth_from_up, rotation_matrix_from_up):
        with pytest.raises(ValueError, match=match):
            func(bad)  # type: ignore[operator]


def test_bad_tolerances_and_angles_raise() -> None:
    with pytest.raises(ValueError, match="`atol`"):
        tilt_from_up([0, 0, 1], atol=-1.0)
    with pytest.raises(ValueError, match="`vertical_atol`"):
        azimuth_from_up([0, 0, 1], vertical_atol=0.0)
    with pytest.raises(ValueError, match="`vertical_atol`"):
        rotation_matrix_from_up([0, 0, 1], vertical_atol=np.inf)
    with pytest.raises(ValueError, match="`tilt` and `azimuth` to broadcast"):
        up_from_tilt_azimuth([0.1, 0.2], [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="`azimuth` to be finite"):
        up_from_tilt_azimuth(0.1, np.inf)


def test_tilt_azimuth_result_is_frozen_and_prints_degrees() -> None:
    result = tilt_azimuth_from_up(up_from_tilt_azimuth(np.radians(30.0), np.radians(-120.0)))
    assert isinstance(result, TiltAzimuth)
    assert repr(result) == "TiltAzimuth(tilt_deg=30.0000, azimuth_deg=-120.0000)"
    assert result.tilt_deg == pytest.approx(30.0)
    assert result.azimuth_deg == pytest.approx(-120.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.tilt = 0.0  # type: ignore[misc]
    batch = tilt_azimuth_from_up(up_from_tilt_azimuth([0.0, np.pi / 2], [0.0, np.pi / 2]))
    assert "tilt_deg=[ 0., 90.]" in repr(batch)
    assert batch.tilt.shape == (2,)


def test_value_types_follow_the_result_contract() -> None:
    ups = up_from_tilt_azimuth([0.0, 0.3, np.pi], [0.0, -1.0, 0.0])
    results = [
        tilt_azimuth_from_up(ups),
        tilt_azimuth_from_up(ups[1]),
        canonical_from_up(ups, zero="stable"),
        canonical_from_up(ups[1]),
    ]
    for result in results:
        copy = pickle.loads(pickle.dumps(result))
        assert copy == result
        assert repr(copy) == repr(result)
        json.dumps(result.to_dict())
        for field in dataclasses.fields(result):
            value = getattr(copy, field.name)
            if isinstance(value, np.ndarray):
                assert not value.flags.writeable
                with pytest.raises(ValueError, match="read-only"):
                    value[...] = 0
    assert results[0] != results[1]  # different shapes: not equal, and no error
    assert results[2] != canonical_from_up(ups, zero="unstable")
    assert results[2].to_dict()["zero"] == "stable"
    assert results[1].to_dict()["azimuth_defined"] is True


def test_value_types_copy_the_callers_arrays() -> None:
    tilt, defined = np.array([0.1, 0.2]), np.array([True, False])
    result = TiltAzimuth(tilt=tilt, azimuth=tilt, azimuth_defined=defined)
    angles = CanonicalAngles(theta1=tilt, theta2=tilt, theta1_defined=defined, zero="stable")
    tilt[0], defined[0] = 9.0, False
    for value in (result.tilt, result.azimuth, angles.theta1, angles.theta2):
        np.testing.assert_array_equal(value, [0.1, 0.2])
    np.testing.assert_array_equal(result.azimuth_defined, [True, False])
    np.testing.assert_array_equal(angles.theta1_defined, [True, False])
    assert TiltAzimuth(tilt=0.1, azimuth=0.2, azimuth_defined=True).tilt == 0.1
    with pytest.raises(ValueError, match="`zero` to be one of"):
        CanonicalAngles(theta1=0.0, theta2=0.0, theta1_defined=True, zero="high")  # type: ignore[arg-type]


def test_batched_tilt_azimuth_equals_loop() -> None:
    rng = np.random.default_rng(1)
    ups = random_unit(rng, (4, 5))
    result = tilt_azimuth_from_up(ups)
    for idx in np.ndindex(4, 5):
        single = tilt_azimuth_from_up(ups[idx])
        assert result.tilt[idx] == single.tilt
        assert result.azimuth[idx] == single.azimuth


# --------------------------------------------------------------------------------------------
# Minimal rotation
# --------------------------------------------------------------------------------------------


def reference_rotation(tilt: float, azimuth: float) -> np.ndarray:
    """Rotation by `tilt` about the horizontal axis z x up, by SciPy from a rotation vector."""
    axis = np.array([-np.sin(azimuth), np.cos(azimuth), 0.0])
    return Rotation.from_rotvec(tilt * axis).as_matrix()


@given(st.floats(0.0, np.pi - 1e-9), azimuths)
def test_rotation_matrix_from_up_properties(tilt: float, azimuth: float) -> None:
    up = up_from_tilt_azimuth(tilt, azimuth)
    r = rotation_matrix_from_up(up)
    np.testing.assert_allclose(r @ Z, up, atol=1e-15)
    np.testing.assert_allclose(r.T @ r, np.eye(3), atol=4e-15)
    assert np.linalg.det(r) == pytest.approx(1.0, abs=4e-15)
    angle = Rotation.from_matrix(r).magnitude()
    assert angle == pytest.approx(tilt, abs=2e-8)
    # Independent construction: Rodrigues via SciPy's rotation vector about z x up.
    np.testing.assert_allclose(r, reference_rotation(tilt, azimuth), atol=1e-14)


@given(unit_vectors)
def test_rotation_matrix_maps_z_to_any_up(up: np.ndarray) -> None:
    r = rotation_matrix_from_up(up)
    np.testing.assert_allclose(r @ Z, up, atol=1e-12)
    np.testing.assert_allclose(r @ r.T, np.eye(3), atol=1e-14)
    # Minimal: the rotation angle equals the angle between z and up, and the axis is z x up.
    rotvec = Rotation.from_matrix(r).as_rotvec()
    assert np.linalg.norm(rotvec) == pytest.approx(angle_between(Z, up), abs=1e-7)
    assert abs(rotvec[2]) <= 1e-7


def test_rotation_near_tilt_zero_is_exact() -> None:
    for tilt in (0.0, 1e-300, 1e-12, 1e-8):
        r = rotation_matrix_from_up(up_from_tilt_azimuth(tilt, 0.4))
        np.testing.assert_allclose(r, reference_rotation(tilt, 0.4), rtol=0, atol=1e-16)


def test_rotation_near_tilt_pi() -> None:
    for eps in (1e-6, 1e-9, 1e-11):
        tilt = np.pi - eps
        up = up_from_tilt_azimuth(tilt, -2.2)
        r = rotation_matrix_from_up(up)
        np.testing.assert_allclose(r @ Z, up, atol=1e-16)
        np.testing.assert_allclose(r, reference_rotation(tilt, -2.2), atol=1e-10)
        np.testing.assert_allclose(r.T @ r, np.eye(3), atol=1e-15)


def test_rotation_at_down_is_pi_about_x() -> None:
    expected = np.diag([1.0, -1.0, -1.0])
    np.testing.assert_array_equal(rotation_matrix_from_up([0, 0, -1]), expected)
    np.testing.assert_array_equal(rotation_matrix_from_up([3e-13, -1e-13, -1]), expected)
    # Outside the vertical band the exact minimal rotation is used.
    up = np.array([1e-10, 0, -1.0])
    r = rotation_matrix_from_up(up)
    np.testing.assert_allclose(r @ Z, up, atol=1e-18)
    assert not np.allclose(r, expected)


def test_rotation_matrix_batched_equals_loop() -> None:
    rng = np.random.default_rng(2)
    ups = random_unit(rng, (2, 3))
    ups[0, 0] = [0, 0, -1]
    ups[1, 2] = [0, 0, 1]
    r = rotation_matrix_from_up(ups)
    assert r.shape == (2, 3, 3, 3)
    for idx in np.ndindex(2, 3):
        np.testing.assert_array_equal(r[idx], rotation_matrix_from_up(ups[idx]))


def test_rotation_matrix_normalises_accepted_input() -> None:
    r = rotation_matrix_from_up([0, 3.0, 4.0], normalize=True)
    np.testing.assert_allclose(r @ Z, [0, 0.6, 0.8], atol=1e-15)
    r = rotation_matrix_from_up([0, 0.6, 0.8 + 5e-7])
    np.testing.assert_allclose(r.T @ r, np.eye(3), atol=1e-15)


def test_rotation_from_up_returns_scipy_rotation() -> None:
    rng = np.random.default_rng(3)
    ups = random_unit(rng, (5,))
    rot = rotation_from_up(ups)
    assert isinstance(rot, Rotation)
    assert len(rot) == 5
    np.testing.assert_allclose(rot.apply(Z), ups, atol=1e-14)
    single = rotation_from_up(ups[0])
    assert single.single
    np.testing.assert_allclose(single.magnitude(), angle_between(Z, ups[0]), atol=1e-12)


# --------------------------------------------------------------------------------------------
# Canonical two-joint model
# --------------------------------------------------------------------------------------------


def point_mass_torque_and_height(
    up: np.ndarray, q1: np.ndarray, arm_azimuth: float, gamma: float, length: float = 0.7
) -> tuple[np.ndarray, np.ndarray]:
    """Holding torque about +z and height of a point mass on the arm, by explicit cross product.

    The holding torque is the actuator's, the opposite of the gravity torque (design notes).
    """
    h = np.stack([np.cos(q1 + arm_azimuth), np.sin(q1 + arm_azimuth), 0 * q1], axis=-1)
    c = length * (np.cos(gamma) * Z + np.sin(gamma) * h)
    force = -9.81 * 2.0 * up
    torque = -np.cross(c, force) @ Z
    return torque, c @ up


@given(
    st.floats(-np.pi, np.pi),
    st.floats(0.05, np.pi - 0.05),
    st.floats(-np.pi, np.pi),
    st.floats(0.2, np.pi - 0.2),
)
def test_up_from_canonical_matches_point_mass_model(
    theta1: float, theta2: float, arm_azimuth: float, gamma: float
) -> None:
    up = up_from_canonical(theta1, theta2, arm_azimuth=arm_azimuth)
    assert angle_between(up, Z) == pytest.approx(theta2, abs=1e-12)
    q1 = theta1 + np.linspace(-np.pi, np.pi, 721)
    torque, height = point_mass_torque_and_height(up, q1, arm_azimuth, gamma)
    t0, h0 = point_mass_torque_and_height(up, np.array(theta1), arm_azimuth, gamma)
    assert abs(t0) <= 1e-12
    assert h0 >= height.max() - 1e-12  # unstable zero: the mass is highest
    stable = up_from_canonical(theta1, theta2, arm_azimuth=arm_azimuth, zero="stable")
    t1, h1 = point_mass_torque_and_height(stable, np.array(theta1), arm_azimuth, gamma)
    torque_s, height_s = point_mass_torque_and_height(stable, q1, arm_azimuth, gamma)
    assert abs(t1) <= 1e-12
    assert h1 <= height_s.min() + 1e-12  # stable zero: the mass is lowest
    # The holding torque falls through the unstable zero: dtau/dq1 < 0 there.
    tp, _ = point_mass_torque_and_height(up, np.array(theta1 + 1e-3), arm_azimuth, gamma)
    assert tp < 0 < np.max(np.abs(torque))


@given(st.floats(-np.pi, np.pi, exclude_min=True), st.floats(1e-6, np.pi - 1e-6))
def test_canonical_round_trip(theta1: float, theta2: float) -> None:
    for zero in ("unstable", "stable"):
        up = up_from_canonical(theta1, theta2, arm_azimuth=0.3, zero=zero)
        angles = canonical_from_up(up, arm_azimuth=0.3, zero=zero)
        assert isinstance(angles, CanonicalAngles)
        assert angles.theta2 == pytest.approx(theta2, abs=1e-13)
        assert -np.pi < angles.theta1 <= np.pi
        dtheta = np.angle(np.exp(1j * (angles.theta1 - theta1)))
        assert abs(dtheta) <= 1e-9
        assert angles.theta1_defined


def test_canonical_batch_and_vertical() -> None:
    up = up_from_canonical([0.0, 1.0, 2.0], [0.0, 0.5, np.pi])
    angles = canonical_from_up(up, zero="stable")
    np.testing.assert_array_equal(angles.theta1_defined, [False, True, False])
    np.testing.assert_allclose(angles.theta1, [np.pi, 1.0 - np.pi, np.pi], atol=1e-12)
    np.testing.assert_allclose(angles.theta2_deg, np.degrees([0.0, 0.5, np.pi]), atol=1e-9)
    assert "zero='stable'" in repr(angles)
    per_arm = canonical_from_up([0, 1.0, 0], arm_azimuth=[0.0, np.pi / 2])
    np.testing.assert_allclose(per_arm.theta1, [np.pi / 2, 0.0], atol=1e-15)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: up_from_tilt_azimuth(45.0, 0.3), "tilt"),
        (lambda: up_from_tilt_azimuth(0.3, 30.0), "azimuth"),
        (lambda: up_from_tilt_azimuth([0.1, 0.2], [0.0, -30.0]), "azimuth"),
        (lambda: up_from_tilt_azimuth(-45.0, 0.3), "tilt"),
        (lambda: up_from_canonical(22.9, 0.1), "theta1"),
        (lambda: up_from_canonical(0.4, 5.7), "theta2"),
        (lambda: up_from_canonical(0.4, 0.1, arm_azimuth=30.0), "arm_azimuth"),
        (lambda: canonical_from_up(Z, arm_azimuth=30.0), "arm_azimuth"),
        (lambda: canonical_from_up(np.tile(Z, (2, 1)), arm_azimuth=[0.0, -90.0]), "arm_azimuth"),
    ],
)
def test_angles_in_degrees_are_refused(call, name: str) -> None:
    # Seen: up_from_tilt_azimuth(45, 30) and up_from_canonical(22.9, 5.7) returned directions.
    with pytest.raises(ValueError, match=rf"`{name}` to hold .* in radians.*degrees\?$"):
        call()


def test_tilts_are_held_to_zero_to_pi_and_azimuths_to_two_turns() -> None:
    within = r"in radians within \[0, π\]"
    with pytest.raises(ValueError, match=rf"`tilt` to hold tilts {within}, got -0\.1\.$"):
        up_from_tilt_azimuth(-0.1, 0.0)
    with pytest.raises(ValueError, match=r"`theta2` to hold tilts.*got -1e-09\.$"):
        up_from_canonical(0.0, -1e-9)
    with pytest.raises(ValueError, match=r"`tilt`.*degrees\?$"):
        up_from_tilt_azimuth(np.nextafter(np.pi, 4.0), 0.0)
    # The ends of the ranges are accepted: a tilt of 0 or pi, an azimuth of two turns.
    ups = up_from_tilt_azimuth([0.0, np.pi, 0.5, 0.5], [0.0, 0.0, 4 * np.pi, -4 * np.pi])
    np.testing.assert_allclose(ups[2:], up_from_tilt_azimuth([0.5, 0.5], 0.0), atol=1e-14)
    up = up_from_canonical(-4 * np.pi, np.pi, arm_azimuth=4 * np.pi)
    np.testing.assert_allclose(up, [0.0, 0.0, -1.0], atol=1e-15)
    angles = canonical_from_up(up_from_canonical(0.3, 0.2), arm_azimuth=4 * np.pi)
    assert angles.theta1 == pytest.approx(0.3, abs=1e-12)


def test_canonical_bad_input() -> None:
    with pytest.raises(ValueError, match="`zero` to be one of"):
        up_from_canonical(0.0, 0.1, zero="highest")
    with pytest.raises(ValueError, match="`zero` to be one of"):
        canonical_from_up([0, 0, 1], zero="low")
    with pytest.raises(ValueError, match="`theta2` to be finite"):
        up_from_canonical(0.0, np.nan)
    with pytest.raises(ValueError, match="to broadcast"):
        up_from_canonical([0.0, 1.0], [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="`arm_azimuth` to broadcast"):
        canonical_from_up(np.tile(Z, (3, 1)), arm_azimuth=[0.0, 1.0])


# --------------------------------------------------------------------------------------------
# angle_between and vector_in_target_frame
# --------------------------------------------------------------------------------------------


def test_angle_between_small_and_near_pi() -> None:
    for eps in (1e-12, 1e-9, 1e-5):
        u = np.array([1.0, 0, 0])
        v = np.array([np.cos(eps), np.sin(eps), 0])
        assert angle_between(u, v) == pytest.approx(eps, rel=1e-9)
        assert angle_between(u, -v) == pytest.approx(np.pi - eps, rel=1e-15)
    # For comparison, arccos of the dot product cannot resolve 1e-12 rad at all.
    assert np.arccos(np.clip(np.cos(1e-12), -1, 1)) == 0.0


@given(unit_vectors, unit_vectors, st.floats(1e-3, 1e3), st.floats(1e-3, 1e3))
def test_angle_between_scale_invariant_and_symmetric(
    u: np.ndarray, v: np.ndarray, su: float, sv: float
) -> None:
    angle = angle_between(u, v)
    assert 0.0 <= angle <= np.pi
    assert angle_between(su * u, sv * v) == pytest.approx(angle, abs=1e-14)
    assert angle_between(v, u) == angle
    assert angle + angle_between(u, -v) == pytest.approx(np.pi, abs=1e-14)


def test_angle_between_batched_and_errors() -> None:
    rng = np.random.default_rng(4)
    u, v = random_unit(rng, (3, 4)), random_unit(rng, (4,))
    angles = angle_between(u, v)
    assert angles.shape == (3, 4)
    np.testing.assert_allclose(angles, np.arccos(np.einsum("...i,...i", u, v)), atol=1e-7)
    with pytest.raises(ValueError, match="`u` to be non-zero"):
        angle_between([0, 0, 0], [1, 0, 0])
    with pytest.raises(ValueError, match="`v` to have shape"):
        angle_between([0, 0, 1], [1, 0])
    with pytest.raises(ValueError, match="`u` and `v` to broadcast"):
        angle_between(np.ones((2, 3)), np.ones((3, 3)))


def test_vector_in_target_frame_inverts_rotation() -> None:
    rng = np.random.default_rng(5)
    r = Rotation.random(6, rng).as_matrix()
    v_target = random_unit(rng, (6,))
    v_base = np.einsum("nij,nj->ni", r, v_target)
    np.testing.assert_allclose(vector_in_target_frame(v_base, r), v_target, atol=1e-15)
    # The frame whose z axis is `up` sees `up` as its +z.
    up = random_unit(rng, ())
    np.testing.assert_allclose(
        vector_in_target_frame(up, rotation_matrix_from_up(up)), Z, atol=1e-15
    )
    with pytest.raises(ValueError, match="`base_from_target`"):
        vector_in_target_frame(Z, 2 * np.eye(3))


def test_vector_in_target_frame_names_mismatched_batches() -> None:
    from gravdir.frames import vector_in_target_frame

    with pytest.raises(ValueError, match="`v_base`.*`base_from_target`"):
        vector_in_target_frame(np.zeros((2, 3)) + [0, 0, 1], np.stack([np.eye(3)] * 3))


# --------------------------------------------------------------------------------------------
# Scale, units and types (issue 11): every finite direction works, bad inputs are refused
# --------------------------------------------------------------------------------------------


def test_angle_between_survives_scale() -> None:
    # Seen: 0.0 for two perpendicular vectors of norm 1e200 (their squares overflowed), and a
    # "zero vector" error for (1e-13, 0, 0).
    with np.errstate(all="raise"):
        assert angle_between([1e200, 0, 0], [0, 1e200, 0]) == np.pi / 2
        assert angle_between([1e-13, 0, 0], [0, 1, 0]) == np.pi / 2
        assert angle_between([5e-324, 0, 0], [0, 1e308, 1e308]) == np.pi / 2
        assert angle_between([1e300, 1e300, 0], [1e-300, 0, 0]) == pytest.approx(np.pi / 4)
    # Only the exact zero vector is zero.
    with pytest.raises(ValueError, match="`u` to be non-zero"):
        angle_between([0.0, 0.0, 0.0], [0, 1, 0])


def test_angle_between_batch_of_mixed_scales_equals_loop() -> None:
    rng = np.random.default_rng(11)
    u = rng.normal(size=(6, 3)) * 10.0 ** rng.integers(-300, 300, size=(6, 1))
    v = rng.normal(size=(6, 3)) * 10.0 ** rng.integers(-300, 300, size=(6, 1))
    with np.errstate(all="raise"):
        batch = angle_between(u, v)
        loop = [angle_between(a, b) for a, b in zip(u, v, strict=True)]
    np.testing.assert_array_equal(batch, loop)
    np.testing.assert_allclose(
        batch,
        angle_between(u / np.abs(u).max(1, keepdims=True), v / np.abs(v).max(1, keepdims=True)),
        rtol=1e-15,
    )


def test_tilt_and_rotation_of_huge_vectors() -> None:
    # Seen: tilt_from_up([1e300, 0, 1e300], normalize=True) -> nan, and rotation_from_up on
    # the same vector -> LinAlgError.
    huge = [1e300, 0.0, 1e300]
    with np.errstate(all="raise"):
        assert tilt_from_up(huge, normalize=True) == pytest.approx(np.pi / 4, abs=1e-15)
        rot = rotation_from_up(huge, normalize=True)
        matrix = rotation_matrix_from_up(huge, normalize=True)
        ta = tilt_azimuth_from_up([1e-320, 0.0, 1e-320], normalize=True)
    assert rot.magnitude() == pytest.approx(np.pi / 4, abs=1e-15)
    np.testing.assert_allclose(matrix @ Z, np.sqrt([0.5, 0.0, 0.5]), atol=1e-15)
    assert ta.tilt == pytest.approx(np.pi / 4, abs=1e-15)


def test_nearly_vertical_up_does_not_underflow() -> None:
    # u_x^2 of a down-pointing up with u_x = 1e-200 underflows; the rotation is still exact.
    with np.errstate(all="raise"):
        down = rotation_matrix_from_up([1e-200, 0.0, -1.0])
        near = rotation_matrix_from_up([np.sin(1e-9), 0.0, -np.cos(1e-9)])
    np.testing.assert_array_equal(down, np.diag([1.0, -1.0, -1.0]))
    expected = Rotation.from_rotvec([0.0, np.pi - 1e-9, 0.0]).as_matrix()
    np.testing.assert_allclose(near, expected, atol=1e-14)


def test_tolerances_of_one_or_more_are_refused() -> None:
    # With atol >= 1 the zero vector passed the unit check and came back as NaN.
    with pytest.raises(ValueError, match="`atol` to be below 1"):
        tilt_from_up([0.0, 0.0, 0.0], atol=2.0)
    with pytest.raises(ValueError, match="`vertical_atol` to be below 1"):
        rotation_matrix_from_up([0.0, 0.0, 1.0], vertical_atol=1.0)
    with pytest.raises(ValueError, match="`atol`"):
        tilt_from_up([0.0, 0.0, 1.0], atol=np.nan)
    with pytest.raises(ValueError, match="`normalize` to be True or False"):
        tilt_from_up([0.0, 0.0, 2.0], normalize="yes")  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [True, np.array([True, False]), "0.1", ["0.1", "0.2"]])
def test_angles_refuse_booleans_and_numeric_strings(bad: object) -> None:
    with pytest.raises(ValueError, match="`tilt`"):
        up_from_tilt_azimuth(bad, 0.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`theta1`"):
        up_from_canonical(bad, 0.2)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`arm_azimuth`"):
        canonical_from_up(Z, arm_azimuth=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`up`"):
        tilt_from_up("0, 0, 1")


def test_huge_angles_are_refused_and_the_extreme_accepted_ones_give_finite_directions() -> None:
    # No angle in radians comes near 1.7e308, nor in degrees: it is refused as garbage by name.
    with pytest.raises(ValueError, match=r"`theta1`.*no angle in degrees either \(corrupted\?\)"):
        up_from_canonical(1.7e308, 1.0, arm_azimuth=0.0)
    with pytest.raises(ValueError, match=r"`arm_azimuth`.*no angle in degrees either"):
        up_from_canonical(0.0, 1.0, arm_azimuth=1.7e308)
    with np.errstate(all="raise"):
        up = up_from_canonical(4 * np.pi, np.pi / 3, arm_azimuth=4 * np.pi, zero="stable")
        tiny = up_from_tilt_azimuth(1e-300, 1e-300)
    np.testing.assert_allclose(up, up_from_canonical(0.0, np.pi / 3, zero="stable"), atol=1e-14)
    assert np.linalg.norm(up) == pytest.approx(1.0)
    np.testing.assert_array_equal(tiny, [1e-300, 0.0, 1.0])


def test_vector_in_target_frame_refuses_scaled_rotations_and_overflow() -> None:
    r = rotation_matrix_from_up(up_from_tilt_azimuth(0.4, 1.0))
    with np.errstate(all="raise"):
        with pytest.raises(ValueError, match="`base_from_target` to be rotation matrices"):
            vector_in_target_frame(Z, r * 1e300)
        with pytest.raises(ValueError, match="`base_from_target` to be rotation matrices"):
            vector_in_target_frame(Z, r * 1e-300)
        c = np.sqrt(0.5)  # a turn by 45 degrees about z: (1.7e308, 1.7e308) has x' = 2.4e308
        turn = np.array([[c, -c, 0.0], [c, c, 0.0], [0.0, 0.0, 1.0]])
        with pytest.raises(ValueError, match="`v_base` to stay within the float range"):
            vector_in_target_frame([1.7e308, 1.7e308, 0.0], turn)
        big = vector_in_target_frame(Z * 1e300, r)
    np.testing.assert_allclose(big, r.T @ Z * 1e300, rtol=1e-15)


@given(u=unit_vectors, v=unit_vectors, exponent=st.integers(-300, 300))
def test_directions_are_scale_invariant(u: np.ndarray, v: np.ndarray, exponent: int) -> None:
    with np.errstate(under="ignore"):
        big, small = u * 10.0**exponent, v / 10.0**exponent
    with np.errstate(all="raise"):
        tilt = tilt_from_up(big, normalize=True)
        angle = angle_between(big, small)
        matrix = rotation_matrix_from_up(big, normalize=True)
    assert tilt == pytest.approx(tilt_from_up(u), abs=1e-15)
    assert angle == pytest.approx(angle_between(u, v), abs=1e-15)
    np.testing.assert_allclose(matrix, rotation_matrix_from_up(u), atol=1e-15)


def test_vector_in_target_frame_takes_a_scipy_rotation():
    # Seen to fail: a scipy Rotation was refused where a rotation is taken.
    rng = np.random.default_rng(12)
    rot = Rotation.random(4, rng)
    v = rng.normal(size=(4, 3))
    want = vector_in_target_frame(v, rot.as_matrix())
    np.testing.assert_array_equal(vector_in_target_frame(v, rot), want)
    one = rot[0]
    np.testing.assert_array_equal(
        vector_in_target_frame(v[0], one), vector_in_target_frame(v[0], one.as_matrix())
    )
    # Explicitly: the target frame's axes are the rotation's columns.
    np.testing.assert_allclose(want[0], one.as_matrix().T @ v[0], atol=1e-15)


def test_rotation_from_up_refuses_an_empty_batch_by_name():
    # Seen at the SciPy floor: an empty `up` leaked SciPy's "Invalid shape in axis 0: 0."
    with pytest.raises(ValueError, match="`up` to hold at least one vector"):
        rotation_from_up(np.empty((0, 3)))
    ups = up_from_tilt_azimuth([0.2, 0.5], [1.0, -2.0])
    np.testing.assert_allclose(
        rotation_from_up(ups).as_matrix(), rotation_matrix_from_up(ups), atol=1e-15
    )
