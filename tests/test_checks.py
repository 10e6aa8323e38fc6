"""The shared validators refuse what numpy would quietly turn into numbers."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from gravdir._checks import (
    MAX_JOINT_ANGLE,
    check_angle_span,
    check_array,
    check_count,
    check_direction,
    check_per_joint,
    check_positive,
    check_radians,
    check_rotation_matrix,
    check_scalar,
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


# --- what numpy would fail on without a name, or quietly change ------------------------------


@pytest.mark.parametrize("value", [[[1.0, 2.0], [3.0]], ([1.0], 2.0), [np.zeros(2), np.zeros(3)]])
def test_ragged_sequences_are_refused_by_name(value):
    with pytest.raises(ValueError, match=r"`x` to be numeric .*got a ragged"):
        check_array(value, "x")
    with pytest.raises(ValueError, match=r"`x` to be numeric .*got a ragged"):
        check_scalar(value, "x")


@pytest.mark.parametrize("value", [np.array([1.0, 2.0]) + 0.5j, np.complex128(1 + 1j), [1j], 2j])
def test_complex_values_are_refused_where_reals_are_expected(value):
    # numpy would keep the real part with only a ComplexWarning.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="`x` to be real"):
            check_array(value, "x")
        if np.ndim(value) == 0:
            with pytest.raises(ValueError, match="`x` to be a real number, got complex"):
                check_positive(value, "x")


@pytest.mark.parametrize(
    "value",
    [10**400, -(10**400), [1.0, 10**400], np.array([10**309], dtype=object)],
    ids=["1e400", "-1e400", "in a list", "in an object array"],
)
def test_integers_beyond_the_float_range_are_refused_by_name(value):
    # numpy raises OverflowError ("int too large to convert to float"), which names nothing.
    expected = r"`x` within the float64 range \(magnitude at most 1.798e\+308\), got an integer"
    with pytest.raises(ValueError, match=expected):
        check_array(value, "x")
    if np.ndim(value) == 0:
        with pytest.raises(ValueError, match=r"`x` within the float64 range"):
            check_scalar(value, "x")
        with pytest.raises(ValueError, match=r"`x` to be a finite positive number .*about -?1e400"):
            check_positive(value, "x")


def test_integers_within_the_float_range_still_convert():
    assert check_scalar(2**70, "x") == 2.0**70
    assert check_array([2**64, 1], "x").tolist() == [2.0**64, 1.0]
    assert check_positive(10**300, "x") == 1e300


def test_a_huge_count_is_refused_with_a_short_message():
    with pytest.raises(ValueError, match=r"`n` to be an integer from 1 to 10, got an integer of "
                                         r"about 1e5000\.$"):
        check_count(10**5000, "n", maximum=10)  # str() of it would itself raise


def test_zero_d_arrays_are_scalars_and_nothing_else():
    assert check_scalar(np.asarray(0.25), "x") == 0.25
    assert check_positive(np.asarray(0.25), "x") == 0.25
    assert check_count(np.asarray(3), "n", maximum=10) == 3
    with pytest.raises(ValueError, match=r"`x` to have shape \(\.\.\., 3\), got \(\)"):
        check_array(np.asarray(1.0), "x", tail=(3,))
    with pytest.raises(ValueError, match="`x` to have shape 1-D or more, got ()"):
        check_array(np.asarray(1.0), "x", min_ndim=1)
    with pytest.raises(ValueError, match=r"`x` to be a number, got an array of shape \(1,\)"):
        check_positive(np.array([0.25]), "x")
    with pytest.raises(ValueError, match=r"`n` to be an integer, got array\(3\.\)"):
        check_count(np.asarray(3.0), "n", maximum=10)
    with pytest.raises(ValueError, match="`n` to be an integer"):
        check_count(np.asarray([3]), "n", maximum=10)


def test_direction_normalises_any_length_without_overflow():
    with np.errstate(all="raise"):
        assert check_direction([0.0, 0.0, 2.0], "up_hint").tolist() == [0.0, 0.0, 1.0]
        big = check_direction([1e308, -1e308, 0.0], "up_hint")
        tiny = check_direction([5e-324, 0.0, 5e-324], "up_hint")
    assert np.allclose(big, [2**-0.5, -(2**-0.5), 0.0], rtol=0, atol=1e-15)
    assert np.allclose(tiny, [2**-0.5, 0.0, 2**-0.5], rtol=0, atol=1e-15)
    batch = check_direction([[3.0, 0.0, 4.0], [0.0, -7.0, 0.0]], "axes", batch=True)
    assert batch.tolist() == [[0.6, 0.0, 0.8], [0.0, -1.0, 0.0]]
    assert check_direction(np.zeros((0, 3)), "axes", batch=True).shape == (0, 3)


@pytest.mark.parametrize(
    ("value", "batch", "match"),
    [
        ([0.0, 0.0, 0.0], False, "`up_hint` to be non-zero, got a zero vector"),
        ([[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]], True, "`up_hint` to be non-zero vector"),
        ([1.0, 0.0], False, r"`up_hint` to have shape \(3,\), got \(2,\)"),
        ([[0.0, 0.0, 1.0]], False, r"`up_hint` to have shape \(3,\), got \(1, 3\)"),
        ([1.0, 0.0], True, r"`up_hint` to have shape \(\.\.\., 3\)"),
        ([np.nan, 0.0, 1.0], False, "`up_hint` to be finite"),
        ([np.inf, 0.0, 1.0], True, "`up_hint` to be finite"),
        (["1", "0", "0"], False, "`up_hint`"),
        ([1.0 + 1j, 0.0, 0.0], False, "`up_hint` to be real"),
    ],
)
def test_direction_refuses_naming_the_argument(value, batch, match):
    with pytest.raises(ValueError, match=match):
        check_direction(value, "up_hint", batch=batch)


def test_per_joint_broadcasts_a_scalar_and_returns_a_new_array():
    given = np.array([1.0, 2.0, 3.0])
    out = check_per_joint(given, "gains", 3)
    out[0] = 5.0
    assert given[0] == 1.0
    assert check_per_joint(0.5, "noise_std", 2).tolist() == [0.5, 0.5]
    assert check_per_joint([0.0, 1.0], "masses", 2, scalar=False, sign="non-negative").tolist() == [
        0.0,
        1.0,
    ]
    assert check_per_joint([-1.0, 1.0], "offsets", 2, sign="any").tolist() == [-1.0, 1.0]


@pytest.mark.parametrize(
    ("value", "kwargs", "match"),
    [
        ([1.0, 2.0], {}, r"`x` to be a scalar or have shape \(3,\), got \(2,\)\.$"),
        (1.0, {"scalar": False}, r"`x` to have shape \(3,\), got \(\)\.$"),
        (np.ones((3, 1)), {}, r"`x` to be a scalar or have shape \(3,\), got \(3, 1\)"),
        ([1.0, 0.0, 1.0], {}, "`x` to be positive, got a minimum of 0"),
        ([1.0, -2.0, 1.0], {"sign": "non-negative"}, "`x` to be non-negative, got a minimum of -2"),
        ([1.0, np.nan, 1.0], {"sign": "any"}, "`x` to be finite"),
        (True, {}, "`x`"),
    ],
)
def test_per_joint_refuses_naming_the_argument(value, kwargs, match):
    with pytest.raises(ValueError, match=match):
        check_per_joint(value, "x", 3, **kwargs)


def test_radians_reports_nan_as_not_finite():
    # min and max propagate a NaN, which compares False with both bounds: it must not pass.
    with pytest.raises(ValueError, match="`q` to be finite"):
        check_radians([0.1, np.nan], "q")
    with pytest.raises(ValueError, match="`q` to be finite"):
        check_radians([0.1, np.inf], "q", allow_nan=True)
    # With allow_nan a NaN is skipped, and a value in degrees beside it is still refused.
    with pytest.raises(ValueError, match=r"`q` to hold joint positions .* got 90 .*degrees\?$"):
        check_radians([[np.nan, 0.1], [90.0, 0.2]], "q", allow_nan=True)
    kept = check_radians([np.nan, -MAX_JOINT_ANGLE, MAX_JOINT_ANGLE], "q", allow_nan=True)
    assert np.isnan(kept[0])
    assert np.isnan(check_radians([np.nan, np.nan], "q", allow_nan=True)).all()


def test_angle_span_default_is_the_joint_angle_cap_and_never_overflows():
    assert check_angle_span(MAX_JOINT_ANGLE, "arc") == MAX_JOINT_ANGLE
    with pytest.raises(ValueError, match=r"`arc` in radians, got a span of .*720°\): degrees\?"):
        check_angle_span(np.nextafter(MAX_JOINT_ANGLE, np.inf), "arc")
    with np.errstate(all="raise"), pytest.raises(ValueError, match=r"\(inf°, more than 720°\)"):
        check_angle_span(1e308, "arc")
    with pytest.raises(ValueError, match="`arc` to be finite, got a span of NaN"):
        check_angle_span(float("nan"), "arc")
