"""The shared validators refuse what numpy would quietly turn into numbers."""

from __future__ import annotations

import numpy as np
import pytest

from gravdir._checks import (
    check_array,
    check_positive,
    check_rotation_matrix,
    drop_nan_samples,
    matrix_if_rotation,
)


@pytest.mark.parametrize("value", [True, np.bool_(False), np.array([True, False]), [True, False]])
def test_booleans_are_not_numbers(value):
    with pytest.raises(ValueError, match="`x` to be (numeric|a number)"):
        check_array(value, "x")


@pytest.mark.parametrize("value", ["1.5", ["1", "2"], np.array(["1.5"])])
def test_numeric_text_is_not_a_number(value):
    with pytest.raises(ValueError, match="`x`"):
        check_array(value, "x")
    with pytest.raises(ValueError, match="`x`"):
        check_positive(value, "x")


def test_mixed_numbers_and_booleans_stay_numbers():
    assert check_array([1.0, True], "x").tolist() == [1.0, 1.0]


def test_rotation_check_survives_extreme_entries():
    with np.errstate(all="raise"):
        with pytest.raises(ValueError, match=r"`r` to be rotation matrices \(entries within"):
            check_rotation_matrix(np.eye(3) * 1e300, "r")
        with pytest.raises(ValueError, match="`r` to be rotation matrices"):
            check_rotation_matrix(np.eye(3) * 1e-300, "r")
        tiny = np.eye(3)
        tiny[0, 1] = 1e-310  # a subnormal entry of a valid rotation
        assert check_rotation_matrix(tiny, "r").shape == (3, 3)


# --- nan_policy: the shared sample-dropping helper ------------------------------------------


def test_drop_nan_samples_omit_drops_the_row_in_every_array():
    q = np.array([0.0, 0.1, 0.2, 0.3, 0.4])
    tau = np.array([[1.0, 2.0, np.nan, 4.0, 5.0], [1.0, np.nan, 3.0, 4.0, 5.0]])
    kept, keep = drop_nan_samples({"q": q, "tau": tau}, "omit")
    assert keep.tolist() == [True, False, False, True, True]
    assert kept["q"].tolist() == [0.0, 0.3, 0.4]
    assert kept["tau"].tolist() == [[1.0, 4.0, 5.0], [1.0, 4.0, 5.0]]


def test_drop_nan_samples_raise_names_the_array_and_the_way_out():
    q = np.zeros(4)
    tau = np.array([1.0, np.nan, 1.0, 1.0])
    with pytest.raises(ValueError, match=r'`tau` to be finite.*nan_policy="omit"'):
        drop_nan_samples({"q": q, "tau": tau}, "raise")
    # Without a NaN "raise" is a no-op that keeps everything.
    kept, keep = drop_nan_samples({"q": q, "tau": np.ones(4)}, "raise")
    assert keep.tolist() == [True] * 4 and kept["tau"].shape == (4,)


@pytest.mark.parametrize("policy", ["raise", "omit"])
def test_drop_nan_samples_refuses_infinity_under_both_policies(policy):
    with pytest.raises(ValueError, match="`tau` to be finite, got 1 infinite"):
        drop_nan_samples({"q": np.zeros(3), "tau": np.array([0.0, -np.inf, 1.0])}, policy)


def test_drop_nan_samples_point_sets_along_axis_minus_two():
    pts = np.array([[0.0, 0, 0], [1, np.nan, 0], [0, 1, 0], [1, 1, 0]])
    tool = np.array([0.0, 0.0, 0.1])  # one vector broadcast over the samples: never sliced
    kept, keep = drop_nan_samples({"points": pts, "tool": tool}, "omit", axis=-2)
    assert keep.tolist() == [True, False, True, True]
    assert kept["points"].tolist() == [[0.0, 0, 0], [0, 1, 0], [1, 1, 0]]
    assert kept["tool"].tolist() == tool.tolist()


def test_drop_nan_samples_validates_its_options():
    with pytest.raises(ValueError, match="`nan_policy` to be one of 'raise', 'omit'"):
        drop_nan_samples({"q": np.zeros(3)}, "propagate")
    with pytest.raises(ValueError, match="same number of samples"):
        drop_nan_samples({"q": np.zeros(3), "tau": np.zeros(4)}, "omit")


# --- scipy Rotation where a rotation is taken ---------------------------------------------


def test_rotation_matrix_check_takes_a_scipy_rotation():
    # Seen to fail: a Rotation object was refused ("to be numeric ... got Rotation").
    from scipy.spatial.transform import Rotation

    one = Rotation.from_rotvec([0.1, -0.2, 0.3])
    np.testing.assert_array_equal(check_rotation_matrix(one, "r"), one.as_matrix())
    stack = Rotation.from_rotvec([[0.1, -0.2, 0.3], [0.0, 0.0, 2.0], [1.0, 0.0, 0.0]])
    out = check_rotation_matrix(stack, "r")
    assert out.shape == (3, 3, 3)
    np.testing.assert_array_equal(out, stack.as_matrix())
    # Only the rotation check converts: a plain array check still refuses the object.
    with pytest.raises(ValueError, match="`r` to be numeric"):
        check_array(one, "r")
    assert matrix_if_rotation("text") == "text"
