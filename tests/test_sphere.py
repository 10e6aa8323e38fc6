"""Tests of gravdir._sphere: the maths on the unit sphere every direction estimator calls."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.optimize import least_squares
from scipy.spatial.transform import Rotation

from gravdir._sphere import (
    ABS_FLOOR,
    REL_FLOOR,
    Linearisation,
    cov_from_up_information,
    fibonacci_directions,
    informative,
    refine_direction,
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


# --------------------------------------------------------------------------------------------
# refine_direction: the one damped Gauss-Newton loop on the sphere


class ScaledProjection:
    """Readings ``y_i = s (v_i . up) + b + e_i`` (noise `sigma`): `up` on the sphere, the scale
    ``s`` and offset ``b`` linear and projected out at every trial (variable projection)."""

    def __init__(self, seed: int, sigma: float, count: int = 40) -> None:
        rng = np.random.default_rng(seed)
        self.v = rng.normal(size=(count, 3))
        self.up = np.array([0.3, -0.2, 0.9]) / np.linalg.norm([0.3, -0.2, 0.9])
        self.sigma = sigma
        self.y = 2.0 * self.v @ self.up + 0.5 + sigma * rng.normal(size=count)

    def design(self, up: np.ndarray) -> np.ndarray:
        return np.c_[self.v @ up, np.ones(len(self.y))] / self.sigma

    def evaluate(self, up: np.ndarray, _step: object = None, _state: object = None):
        a = self.design(up)
        x = np.linalg.lstsq(a, self.y / self.sigma, rcond=None)[0]
        r = self.y / self.sigma - a @ x
        return float(r @ r), x

    def linearise(self, up: np.ndarray, basis: np.ndarray, x: np.ndarray) -> Linearisation:
        jac = np.c_[x[0] * self.v @ basis.T / self.sigma, self.design(up)]
        r = self.y / self.sigma - self.design(up) @ x
        return Linearisation(grad=jac.T @ r, jacobian=jac)

    def run(self, start: np.ndarray, **options: object):
        cost, x = self.evaluate(start)
        options = {"max_iter": 50, "xtol": 1e-12, **options}
        return refine_direction(start, cost, x, self.evaluate, self.linearise, **options)

    def reference(self) -> np.ndarray:
        """The same minimum found by SciPy over two angles and (s, b) together."""

        def residual(p: np.ndarray) -> np.ndarray:
            u = np.array([np.sin(p[0]) * np.cos(p[1]), np.sin(p[0]) * np.sin(p[1]), np.cos(p[0])])
            return (self.y - p[2] * self.v @ u - p[3]) / self.sigma

        p0 = [np.arccos(self.up[2]), np.arctan2(self.up[1], self.up[0]), 2.0, 0.5]
        p = least_squares(residual, p0, xtol=1e-15, ftol=1e-15, gtol=1e-15).x
        return np.array([np.sin(p[0]) * np.cos(p[1]), np.sin(p[0]) * np.sin(p[1]), np.cos(p[0])])


def angle(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.arctan2(np.linalg.norm(np.cross(a, b)), a @ b))


def start_off(up: np.ndarray, degrees: float) -> np.ndarray:
    return retract(up, tangent_basis(up), np.radians([degrees, 0.5 * degrees]))


def test_refine_direction_converges_to_the_least_squares_minimum() -> None:
    prob = ScaledProjection(3, sigma=0.01)
    run = prob.run(start_off(prob.up, 20.0))
    assert run.converged
    assert 1 < run.n_iter < 20
    assert angle(run.up, prob.reference()) < 1e-10
    assert abs(np.linalg.norm(run.up) - 1.0) < 1e-15
    np.testing.assert_allclose(run.state, [2.0, 0.5], atol=0.01)
    assert run.cost == pytest.approx(prob.evaluate(run.up)[0], rel=1e-12)


def test_refine_direction_reports_an_iteration_cap_as_not_converged() -> None:
    prob = ScaledProjection(3, sigma=0.01)
    for cap in (1, 2):
        run = prob.run(start_off(prob.up, 20.0), max_iter=cap)
        assert not run.converged and run.n_iter == cap
        assert angle(run.up, prob.reference()) > 1e-9


def test_refine_direction_honours_xtol() -> None:
    prob = ScaledProjection(3, sigma=1e-9)  # the decrement test never fires first
    tight = prob.run(start_off(prob.up, 20.0))
    loose = prob.run(start_off(prob.up, 20.0), xtol=1e-3)
    assert tight.converged and loose.converged
    assert loose.n_iter < tight.n_iter
    # Stopped on a proposed step of at most 1e-3 rad: at most that far from the minimum.
    assert 1e-9 < angle(loose.up, tight.up) <= 1e-3


def reduced_std(prob: ScaledProjection, up: np.ndarray, x: np.ndarray) -> float:
    """The largest standard deviation of `up`, rad, with (s, b) eliminated."""
    jac = prob.linearise(up, tangent_basis(up), x).jacobian
    q, _ = np.linalg.qr(jac[:, 2:])
    reduced = jac[:, :2] - q @ (q.T @ jac[:, :2])
    return float(1.0 / np.sqrt(np.linalg.eigvalsh(reduced.T @ reduced)[0]))


def test_refine_direction_converges_at_the_resolution_of_the_data() -> None:
    # An `xtol` no step reaches: the steps stop shrinking at rounding level, below 1e-6 of the
    # standard deviation, and the run has converged there (not a ConvergenceWarning).
    prob = ScaledProjection(3, sigma=1.0)
    run = prob.run(start_off(prob.up, 20.0), xtol=1e-300)
    assert run.converged and run.n_iter < 40
    assert angle(run.up, prob.reference()) < 1e-6 * reduced_std(prob, run.up, run.state)


def test_refine_direction_capped_within_a_millionth_sigma_has_converged() -> None:
    prob = ScaledProjection(3, sigma=1.0)
    ref = prob.reference()
    flags = []
    for cap in range(1, 12):
        run = prob.run(start_off(prob.up, 20.0), max_iter=cap, xtol=1e-300)
        assert run.n_iter <= cap
        flags.append(run.converged)
        std = reduced_std(prob, run.up, run.state)
        # Converged exactly when within 1e-6 sigma (the decrement at most 1e-12).
        assert run.converged == (angle(run.up, ref) < 1e-6 * std)
    assert not flags[0] and flags[-1]
    first = flags.index(True)
    assert all(flags[first:])


def test_refine_direction_converges_where_the_cost_moves_at_its_rounding_level() -> None:
    # Steps that never shrink below 1e-9 rad (a gradient at the rounding level of its sums)
    # on a cost whose changes are below its stated rounding level: converged, not a warning.
    prob = ScaledProjection(3, sigma=1e-6)
    rng = np.random.default_rng(5)

    def jittered(up: np.ndarray, basis: np.ndarray, x: np.ndarray) -> Linearisation:
        lin = prob.linearise(up, basis, x)
        info = lin.jacobian.T @ lin.jacobian
        push = np.r_[1e-9 * rng.normal(size=2), 0.0, 0.0]
        return Linearisation(grad=lin.grad + info @ push, jacobian=lin.jacobian)

    start = start_off(prob.up, 5.0)
    cost, x = prob.evaluate(start)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run = refine_direction(
            start, cost, x, prob.evaluate, jittered, max_iter=200, xtol=1e-14, cost_slack=1e3
        )
    assert run.converged
    assert run.n_iter < 50
    assert angle(run.up, prob.reference()) < 1e-7


def test_refine_direction_is_bounded_when_no_step_lowers_the_cost() -> None:
    prob = ScaledProjection(3, sigma=0.01)
    start = start_off(prob.up, 20.0)
    cost, x = prob.evaluate(start)

    def worse(up: np.ndarray, step: np.ndarray, state: np.ndarray):
        return cost + 1.0, state

    run = refine_direction(start, cost, x, worse, prob.linearise, max_iter=10_000, xtol=1e-12)
    # The damping grows tenfold per refused step, from 1e-3 to beyond 1e12: 16 trials.
    assert not run.converged and run.n_iter == 16
    assert np.array_equal(run.up, start)
    refused = refine_direction(
        start, cost, x, lambda *_: None, prob.linearise, max_iter=10_000, xtol=1e-12
    )
    assert not refused.converged and refused.n_iter == 16


def test_refine_direction_without_information_on_up_does_not_converge() -> None:
    prob = ScaledProjection(3, sigma=0.01)
    start = start_off(prob.up, 20.0)
    cost, x = prob.evaluate(start)

    def blind(up: np.ndarray, basis: np.ndarray, x: np.ndarray) -> Linearisation:
        lin = prob.linearise(up, basis, x)
        jac = lin.jacobian.copy()
        jac[:, :2] = 0.0
        return Linearisation(grad=jac.T @ np.ones(len(jac)), jacobian=jac)

    run = refine_direction(start, cost, x, prob.evaluate, blind, max_iter=50, xtol=1e-12)
    assert not run.converged and run.n_iter == 1
    nan = refine_direction(
        start,
        cost,
        x,
        prob.evaluate,
        lambda u, b, s: Linearisation(grad=np.full(4, np.nan), info=np.eye(4)),
        max_iter=50,
        xtol=1e-12,
    )
    assert not nan.converged and nan.n_iter == 1


def test_refine_direction_normal_matrix_and_jacobian_agree() -> None:
    prob = ScaledProjection(8, sigma=0.01)

    def normal(up: np.ndarray, basis: np.ndarray, x: np.ndarray) -> Linearisation:
        lin = prob.linearise(up, basis, x)
        return Linearisation(grad=lin.grad, info=lin.jacobian.T @ lin.jacobian)

    start = start_off(prob.up, 10.0)
    cost, x = prob.evaluate(start)
    a = refine_direction(start, cost, x, prob.evaluate, normal, max_iter=50, xtol=1e-12)
    b = prob.run(start)
    assert a.converged and b.converged
    assert angle(a.up, b.up) < 1e-12
