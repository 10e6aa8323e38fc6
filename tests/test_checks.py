"""The shared validators refuse what numpy would quietly turn into numbers."""

from __future__ import annotations

import numpy as np
import pytest

from gravdir._checks import check_array, check_positive, check_rotation_matrix


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
