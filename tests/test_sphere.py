"""Tests of gravdir._sphere: the maths on the unit sphere every direction estimator calls."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from gravdir._sphere import (
    ABS_FLOOR,
    REL_FLOOR,
    cov_from_up_information,
    fibonacci_directions,
    informative,
    retract,
    tangent_basis,
    up_information_from_cov,
    up_information_from_tangent,
)


def unit_vectors(seed: int, count: int) -> np.ndarray:
    """Random unit vectors plus the base axes, their opposites and near-vertical ones."""
    v = np.random.default_rng(seed).normal(size=(count, 3))
    special = np.concatenate(
        [np.eye(3), -np.eye(3), [[1e-13, 0.0, 1.0], [0.0, -1e-13, -1.0], [0.6, 0.0, 0.8]]]
    )
    v = np.concatenate([v, special])
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def spd2(rng: np.random.Generator) -> np.ndarray:
    a = rng.normal(size=(2, 2))
    return a @ a.T + 0.1 * np.eye(2)


def test_tangent_basis_orthonormal_right_handed_and_downhill() -> None:
    for u in unit_vectors(0, 200):
        b = tangent_basis(u)
        assert b.shape == (2, 3)
        np.testing.assert_allclose(b @ b.T, np.eye(2), atol=1e-14)  # to a few rounding units
        np.testing.assert_allclose(b @ u, 0.0, atol=1e-14)
        np.testing.assert_allclose(np.cross(b[0], b[1]), u, atol=1e-14)
        if abs(u[2]) < 1.0 - 1e-12:  # the first row points towards larger tilt: z falls
            assert b[0, 2] < 0.0


def test_tangent_basis_stacked_equals_single() -> None:
    u = unit_vectors(1, 100)
    stacked = tangent_basis(u.reshape(-1, 1, 3))
    assert stacked.shape == (u.shape[0], 1, 2, 3)
    for i, ui in enumerate(u):
        np.testing.assert_allclose(stacked[i, 0], tangent_basis(ui), rtol=0.0, atol=1e-15)


def test_tangent_basis_projector_is_rotation_equivariant() -> None:
    rot = Rotation.random(20, random_state=2).as_matrix()
    for u, r in zip(unit_vectors(3, 20), rot, strict=False):
        b, br = tangent_basis(u), tangent_basis(r @ u)
        # The basis depends on the base frame; the plane it spans (its projector) does not.
        np.testing.assert_allclose(br.T @ br, r @ (b.T @ b) @ r.T, atol=1e-14)


def test_retract_stays_on_sphere_and_moves_along_the_step() -> None:
    u = np.array([0.0, 0.6, 0.8])
    b = tangent_basis(u)
    out = retract(u, b, np.array([1e-3, 0.0]))
    assert abs(np.linalg.norm(out) - 1.0) < 1e-15
    np.testing.assert_allclose(b @ (out - u), [1e-3, 0.0], rtol=1e-5, atol=1e-12)


@pytest.mark.parametrize("count", [1, 2, 7, 100, 400, 1000])
def test_fibonacci_grid_counts_units_and_halves(count: int) -> None:
    sphere = fibonacci_directions(count)
    half = fibonacci_directions(count, hemisphere=True)
    assert sphere.shape == half.shape == (count, 3)
    np.testing.assert_allclose(np.linalg.norm(sphere, axis=1), 1.0, atol=1e-15)
    np.testing.assert_allclose(np.linalg.norm(half, axis=1), 1.0, atol=1e-15)
    assert np.all(half[:, 2] > 0.0)
    # The sphere's lattice is symmetric in z: its heights are those of the hemisphere's lattice
    # of half as many points, mirrored.
    np.testing.assert_allclose(np.sort(sphere[:, 2]), -np.sort(sphere[:, 2])[::-1], atol=1e-15)
    k = np.arange(count) + 0.5
    np.testing.assert_array_equal(half[:, 2], 1.0 - k / count)
    np.testing.assert_array_equal(sphere[:, 2], 1.0 - 2.0 * k / count)


@pytest.mark.parametrize("hemisphere", [False, True])
def test_fibonacci_grid_covers_every_direction(hemisphere: bool) -> None:
    count = 400
    grid = fibonacci_directions(count, hemisphere=hemisphere)
    probes = unit_vectors(4, 5000)
    cos = probes @ grid.T
    if hemisphere:  # each line through the origin is met once
        cos = np.abs(cos)
    worst = np.degrees(np.arccos(np.clip(cos.max(axis=1), -1.0, 1.0))).max()
    area = (2.0 if hemisphere else 4.0) * np.pi / count  # sr per point
    # No direction is farther from the grid than one point spacing (sqrt of the area per point).
    assert worst < np.degrees(np.sqrt(area))


def test_informative_is_the_one_floor() -> None:
    vals = np.array(
        [
            [1.0, 2.0],
            [0.5e-12, 1.0],  # at most 1e-12 of the largest: none
            [2e-12, 1.0],
            [1e-201, 1e-190],  # below 1e-200: none, even well within 1e-12 of the largest
            [0.0, 0.0],
            [-1.0, 0.0],
            [np.nan, 1.0],
        ]
    )
    expected = [
        [True, True],
        [False, True],
        [True, True],
        [False, True],
        [False, False],
        [False, False],
        [False, False],  # a NaN information decides nothing
    ]
    np.testing.assert_array_equal(informative(vals), expected)
    assert REL_FLOOR == 1e-12 and ABS_FLOOR == 1e-200


def test_information_covariance_round_trip() -> None:
    rng = np.random.default_rng(5)
    for u in unit_vectors(6, 50):
        b = tangent_basis(u)
        cov3 = b.T @ spd2(rng) @ b * 1e-6
        info = up_information_from_cov(u, cov3)
        np.testing.assert_allclose(info @ u, 0.0, atol=1e-9 * np.abs(info).max())
        np.testing.assert_allclose(info, info.T, rtol=0, atol=0)
        np.testing.assert_allclose(cov_from_up_information(u, info), cov3, rtol=1e-9, atol=1e-18)
        # the tangent-plane form gives the same information
        np.testing.assert_allclose(up_information_from_cov(u, b @ cov3 @ b.T), info, rtol=1e-12)


def test_floor_gives_infinite_variance_along_the_undetermined_direction() -> None:
    u = np.array([0.0, 0.0, 1.0])
    b = tangent_basis(u)
    np.testing.assert_array_equal(b, [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])  # vertical: x, z × x
    for small in (0.0, 1e-13, 1e-250):  # zero, below 1e-12 of the largest, below 1e-200
        info = up_information_from_tangent(u, b, np.diag([4.0, small]))
        cov = cov_from_up_information(u, info)
        # finite along x, infinite along y, exact zeros where y has no component
        np.testing.assert_array_equal(cov, [[0.25, 0.0, 0.0], [0.0, np.inf, 0.0], [0.0] * 3])
    # a rotated undetermined direction is infinite wherever it has a component
    tilt = np.array([1.0, 1.0, 0.0]) / np.sqrt(2.0)
    cov = cov_from_up_information(u, 4.0 * np.outer(tilt, tilt))
    assert np.all(np.isinf(cov[:2, :2])) and np.all(cov[2] == 0.0)
    # nothing known: infinite variance in the plane, zero along `up`
    cov = cov_from_up_information(u, 1e-201 * np.diag([1.0, 1.0, 0.0]))
    np.testing.assert_array_equal(cov, np.diag([np.inf, np.inf, 0.0]))


def test_infinite_variance_gives_zero_information_and_min_variance_caps_it() -> None:
    u = np.array([0.0, 0.6, 0.8])
    b = tangent_basis(u)
    info = up_information_from_cov(u, np.diag([0.04, np.inf]))
    np.testing.assert_allclose(b @ info @ b.T, np.diag([25.0, 0.0]), atol=1e-12)
    np.testing.assert_array_equal(up_information_from_cov(u, np.full((3, 3), np.nan)), 0.0)
    capped = up_information_from_cov(u, np.diag([0.0, 0.04]), min_variance=1e-4)
    np.testing.assert_allclose(b @ capped @ b.T, np.diag([1e4, 25.0]), rtol=1e-12)
    # a (2, 2) covariance in a caller's own basis
    other = np.stack([b[1], -b[0]])
    info = up_information_from_cov(u, np.diag([0.04, 1.0]), basis=other)
    np.testing.assert_allclose(other @ info @ other.T, np.diag([25.0, 1.0]), rtol=1e-12)


def test_conversions_are_rotation_equivariant() -> None:
    rng = np.random.default_rng(7)
    rot = Rotation.random(30, random_state=8).as_matrix()
    for u, r in zip(unit_vectors(9, 30), rot, strict=False):
        b = tangent_basis(u)
        info = up_information_from_tangent(u, b, spd2(rng))
        np.testing.assert_allclose(
            cov_from_up_information(r @ u, r @ info @ r.T),
            r @ cov_from_up_information(u, info) @ r.T,
            rtol=1e-9,
            atol=1e-12,
        )
        cov = b.T @ spd2(rng) @ b
        np.testing.assert_allclose(
            up_information_from_cov(r @ u, r @ cov @ r.T),
            r @ up_information_from_cov(u, cov) @ r.T,
            rtol=1e-9,
            atol=1e-9,
        )


def test_up_information_from_tangent_stacked_equals_loop() -> None:
    rng = np.random.default_rng(10)
    u = unit_vectors(11, 20)
    b = tangent_basis(u)
    info2 = np.stack([spd2(rng) for _ in u])
    stacked = up_information_from_tangent(u, b, info2)
    for i in range(len(u)):
        np.testing.assert_array_equal(stacked[i], up_information_from_tangent(u[i], b[i], info2[i]))
