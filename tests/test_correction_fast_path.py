"""`KinematicErrorModel.correction` of one angle: the plain-Python path against the array path."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from gravdir import KinematicErrorModel


def _random_model(rng: np.random.Generator) -> KinematicErrorModel:
    k = int(rng.integers(1, 12))
    orders = rng.choice(np.arange(1, 4000) * 0.25, k, replace=False)
    coefficients = rng.uniform(-3.0, 3.0, (k, 2)) * 10.0 ** rng.uniform(-6.0, 0.0)
    return KinematicErrorModel(orders, coefficients)


def test_one_angle_equals_the_array_path():
    """Within 1e-15 of the sum of the coefficients' magnitudes (the size of the terms), over
    random models and angles from 1e-3 to 1e9 rad, given as float, int and numpy float64."""
    rng = np.random.default_rng(20)
    worst = 0.0
    for _ in range(3000):
        model = _random_model(rng)
        theta = float(rng.choice([-1.0, 1.0]) * 10.0 ** rng.uniform(-3.0, 9.0))
        ref = float(model.correction(np.array([theta]))[0])
        scale = float(np.abs(model.coefficients).sum())
        for angle in (theta, np.float64(theta)):
            out = model.correction(angle)
            assert type(out) is float
            worst = max(worst, abs(float(out) - ref) / scale)
        whole = round(theta)
        assert (
            abs(float(model.correction(whole)) - float(model.correction(np.array(whole, float))))
            <= 1e-15 * scale
        )
    assert worst <= 1e-15


def test_known_value():
    """u(θ) = Σ a cos(qθ) + b sin(qθ), built here term by term."""
    model = KinematicErrorModel([1.0, 2.5], [[0.01, -0.002], [0.0005, 0.003]])
    theta = 0.8
    expected = (
        0.01 * np.cos(theta)
        - 0.002 * np.sin(theta)
        + 0.0005 * np.cos(2.5 * theta)
        + 0.003 * np.sin(2.5 * theta)
    )
    assert float(model.correction(theta)) == pytest.approx(expected, rel=1e-15, abs=1e-18)
    assert float(model.correction(0)) == pytest.approx(0.0105, rel=1e-15)


@pytest.mark.parametrize(
    "angle", [float("nan"), float("inf"), -float("inf"), 1e9 * (1 + 1e-12), -2e9, 10**400]
)
def test_bad_angle_raises_as_the_array_path(angle):
    model = KinematicErrorModel([2.0], [[0.01, 0.0]])
    with pytest.raises(ValueError, match="`motor_angle`"):
        model.correction(angle)


@pytest.mark.parametrize("angle", [True, "0.5", b"1", None])
def test_non_numbers_raise(angle):
    model = KinematicErrorModel([2.0], [[0.01, 0.0]])
    with pytest.raises(ValueError, match="`motor_angle`"):
        model.correction(angle)


def test_limits_are_inclusive():
    model = KinematicErrorModel([1.0], [[0.01, 0.02]])
    for angle in (1e9, -1e9, 10**9):
        fast = float(model.correction(angle))
        assert fast == pytest.approx(
            float(model.correction(np.array([float(angle)]))[0]), abs=1e-16
        )


def test_array_shapes_unchanged():
    model = KinematicErrorModel([1.0, 3.0], [[0.01, 0.0], [0.0, 0.001]])
    assert model.correction(np.zeros((2, 3))).shape == (2, 3)
    assert model.correction([0.1]).shape == (1,)
    assert model.correction(np.array(0.1)).shape == ()


def test_pickled_model_keeps_the_fast_path():
    model = KinematicErrorModel([1.0, 3.0], [[0.01, 0.0], [0.0, 0.001]])
    again = pickle.loads(pickle.dumps(model))
    assert again == model
    assert float(again.correction(0.4)) == float(model.correction(0.4))
    # A state without the cached terms (an older pickle) still computes the same value.
    vars(again).pop("_terms")
    assert float(again.correction(0.4)) == float(model.correction(0.4))
