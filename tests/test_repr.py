"""The notebook table of every result type: values, units, uncertainties and flags.

Every public result type (found by `test_contract`, whose `FACTORIES` build the instances from
real calls) renders as HTML and Markdown. The tables are read back here and checked against the
instance: each numeric field's value (6 significant digits), its unit from the class's
`_units`, its uncertainty where the type has one (a `_std`/`_cov` companion; tilt and azimuth
of `up` recomputed from `up_cov` by explicit geometry), the flags, and a NaN never shown bare.
"""

from __future__ import annotations

import dataclasses
import math
import re
import warnings
from html.parser import HTMLParser
from typing import Any

import numpy as np
import pytest
from test_contract import FACTORIES, _public_result_types

import gravdir._results as results_module
from gravdir._results import Result, UpResult, display_unit, result_units
from gravdir.controllers import GravityDirection

NUMERIC_ANNOTATION = re.compile(r"float|complex|NDArray|ndarray|ArrayLike")
MAX_WRITTEN = 9  # arrays with more elements are summarised


class _Cells(HTMLParser):
    """The text of each table cell of an HTML document, row by row."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)


def _html_rows(obj: Result) -> tuple[dict[str, tuple[str, str, str]], str]:
    parser = _Cells()
    parser.feed(obj._repr_html_())
    header, *body = parser.rows
    assert header == ["field", "value", "unit", "uncertainty (1σ)"]
    return {r[0]: (r[1], r[2], r[3]) for r in body}, "".join(parser.text)


def _markdown_rows(obj: Result) -> tuple[dict[str, tuple[str, str, str]], str]:
    text = obj._repr_markdown_()
    rows = {}
    for line in text.splitlines():
        if line.startswith("| `"):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            name, value, unit, unc = (c.replace("\\|", "|").replace("\\\\", "\\") for c in cells)
            rows[name.strip("`")] = (value, unit, unc)
    return rows, text


def _fmt(x: Any) -> str:
    if isinstance(x, bool | np.bool_):
        return str(bool(x))
    if isinstance(x, int | np.integer):
        return str(int(x))
    x = float(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return format(x + 0.0, ".6g")  # a negative zero is shown as 0


def _expected_numbers(value: Any) -> list[str]:
    """What a value cell must contain: every element of a small array, else shape and range."""
    arr = np.asarray(value)
    if arr.dtype.kind == "c":
        if arr.size > MAX_WRITTEN:
            mag = np.abs(arr)[np.isfinite(arr)]
            return [str(arr.shape), _fmt(mag.min()), _fmt(mag.max())] if mag.size else []
        return [_fmt(z.real) for z in arr.ravel()] + [_fmt(abs(z.imag)) for z in arr.ravel()]
    if arr.dtype.kind == "b":
        return [str(int(np.count_nonzero(arr)))] if arr.ndim else [str(bool(arr))]
    if arr.size > MAX_WRITTEN:
        finite = arr[np.isfinite(arr)]
        return [str(arr.shape)] + ([_fmt(finite.min()), _fmt(finite.max())] if finite.size else [])
    return [_fmt(x) for x in arr.ravel()]


def _is_numeric(value: Any) -> bool:
    if isinstance(value, bool | np.bool_ | str) or value is None:
        return False
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "fciu"
    return isinstance(value, int | float | complex | np.number)


def _companion_of(obj: Result, name: str) -> str | None:
    """The field whose uncertainty `name` is, where the table shows it so."""
    for suffix in ("_std", "_cov", "_std_deg"):
        base = name.removesuffix(suffix)
        if (
            base != name
            and base in {f.name for f in dataclasses.fields(obj)}
            and (suffix == "_cov" or np.shape(getattr(obj, name)) == np.shape(getattr(obj, base)))
        ):
            return base
    return None


def _uncertainty_numbers(cell: str) -> np.ndarray:
    assert cell.startswith("± "), cell
    return np.array([float(x) for x in re.findall(r"-?\d[\d.e+-]*|inf", cell.split(" (")[0])])


def _assert_spread(cell: str, expected: np.ndarray, rtol: float) -> None:
    """The uncertainty cell holds `expected`: element by element, or as the range of a
    summarised array (finite values), with a note where some are infinite."""
    if expected.size <= MAX_WRITTEN:
        got, expected = _uncertainty_numbers(cell), np.ravel(expected)
        finite = np.isfinite(expected)
        np.testing.assert_allclose(got[finite], expected[finite], rtol=rtol)
        assert np.all(np.isinf(got[~finite]))
        return
    assert cell.startswith(f"± shape {expected.shape}, in ["), cell
    low, high = (float(x) for x in cell.split("in [")[1].split("]")[0].split(", "))
    finite = expected[np.isfinite(expected)]
    np.testing.assert_allclose([low, high], [finite.min(), finite.max()], rtol=rtol)
    assert ("infinite" in cell) == bool(np.any(np.isinf(expected)))


def _check_up(obj: UpResult, rows: dict[str, tuple[str, str, str]]) -> None:
    """Tilt and azimuth of `up` in degrees, with standard deviations from `up_information`
    seen along the explicit directions of increasing tilt and azimuth (one `up` at a time)."""
    up = np.asarray(obj.up).reshape(-1, 3)
    info = np.asarray(obj.up_information).reshape(-1, 3, 3)
    tilt = np.degrees(np.arctan2(np.hypot(up[:, 0], up[:, 1]), up[:, 2]))
    az = np.arctan2(up[:, 1], up[:, 0])
    t = np.radians(tilt)
    tilt_std, az_std = np.empty(len(up)), np.empty(len(up))
    for i in range(len(up)):
        along_tilt = [np.cos(t[i]) * np.cos(az[i]), np.cos(t[i]) * np.sin(az[i]), -np.sin(t[i])]
        along_az = [-np.sin(az[i]), np.cos(az[i]), 0.0]
        basis = np.array([along_tilt, along_az])
        vals, vecs = np.linalg.eigh(basis @ info[i] @ basis.T)
        known = vals > max(1e-12 * vals.max(), 1e-200)
        # Variance along each basis direction: sum over eigen-directions of weight / value,
        # infinite where an uninformed eigen-direction has a share in it.
        inverse = np.where(known, 1.0 / np.where(known, vals, 1.0), np.inf)
        share = vecs**2  # share[k, j]: of eigen-direction j along basis direction k
        var = [sum(share[k, j] * inverse[j] for j in range(2) if share[k, j] > 1e-15)
               for k in range(2)]
        tilt_std[i] = np.degrees(np.sqrt(var[0]))
        az_std[i] = np.degrees(np.sqrt(var[1]) / np.sin(t[i])) if np.sin(t[i]) > 0 else np.nan
        cov = np.asarray(obj.up_cov).reshape(-1, 3, 3)[i]
        if np.all(np.isfinite(cov)):  # the same from the covariance
            np.testing.assert_allclose(
                tilt_std[i], np.degrees(np.sqrt(basis[0] @ cov @ basis[0])), rtol=1e-6
            )
    batch = np.shape(obj.up)[:-1]
    std = np.asarray(obj.up_std_deg).reshape(batch)
    tilt_std, az_std = tilt_std.reshape(batch), az_std.reshape(batch)
    value, unit, unc = rows["up"]
    assert unit == "" and all(s in value for s in _expected_numbers(obj.up))
    _assert_spread(unc, std, rtol=1e-5)
    assert "deg" in unc

    value, unit, unc = rows["tilt"]
    assert unit == "deg" and all(x in value for x in _expected_numbers(tilt.reshape(batch)))
    vertical = (np.hypot(up[:, 0], up[:, 1]) <= 1e-12).reshape(batch)
    _assert_spread(unc, np.where(vertical, std, tilt_std), rtol=1e-4)

    value, unit, unc = rows["azimuth"]
    assert unit == "deg"
    if np.all(vertical):
        assert "undefined" in value
    elif np.any(vertical):
        assert "undefined where up is vertical" in value
    else:
        assert all(x in value for x in _expected_numbers(np.degrees(az).reshape(batch)))
        _assert_spread(unc, az_std, rtol=1e-4)
    for row in ("up", "tilt", "azimuth"):
        if "inf" in rows[row][2]:
            assert "not determined" in rows[row][2]


def _shown(value: Any, unit: str) -> Any:
    """`value` as the table shows a field of declared `unit`: an angle in degrees."""
    factor = display_unit(unit)[1]
    arr = np.asarray(value)
    return arr * factor if factor != 1.0 and arr.dtype.kind == "f" else value


def _check_table(obj: Result) -> None:
    rows, text = _html_rows(obj)
    md_rows, md_text = _markdown_rows(obj)
    assert rows == md_rows  # the two renderings say the same
    units = result_units(type(obj))
    assert type(obj).__name__ in text
    if isinstance(obj, UpResult):
        _check_up(obj, rows)
    flags_line = text[text.rfind("flags:"):] if "flags:" in text else ""
    for f in dataclasses.fields(obj):
        if not f.repr or (isinstance(obj, UpResult) and f.name in ("up", "up_information")):
            continue
        value = getattr(obj, f.name)
        if isinstance(value, bool | np.bool_) or (
            isinstance(value, np.ndarray) and value.dtype.kind == "b" and f.name not in rows
        ):
            assert f"{f.name} = " in flags_line, f.name
            assert all(s in flags_line for s in _expected_numbers(value))
            continue
        if f.name not in rows:
            base = _companion_of(obj, f.name)
            assert base is not None and rows[base][2].startswith("± "), (f.name, rows.get(base))
            if f.name.endswith("_std") and np.size(value) <= MAX_WRITTEN:
                std_unit = units.get(f.name, units.get(base, ""))
                expected = _expected_numbers(_shown(value, std_unit))
                assert all(s in rows[base][2] for s in expected), f.name
            continue
        cell, unit, unc = rows[f.name]
        if _is_numeric(value):
            assert unit == display_unit(units.get(f.name, ""))[0], f.name
            shown = _shown(value, units.get(f.name, ""))
            assert all(s in cell for s in _expected_numbers(shown)), (f.name, cell)
        elif isinstance(value, str):
            assert cell == value
        elif isinstance(value, Result):
            assert type(value).__name__ in cell
        columns = getattr(obj, "column_names", ())
        if f.name in columns and not hasattr(obj, f.name + "_std"):
            k = columns.index(f.name)
            from_cov = _shown(np.sqrt(np.asarray(obj.covariance)[..., k, k]), units.get(f.name, ""))
            assert all(s in unc for s in _expected_numbers(from_cov)), (f.name, unc)
        std = getattr(obj, f.name + "_std", None)
        if std is not None and np.shape(std) == np.shape(value) and np.size(std) <= MAX_WRITTEN:
            std_unit = units.get(f.name + "_std", units.get(f.name, ""))
            assert all(s in unc for s in _expected_numbers(_shown(std, std_unit))), (f.name, unc)
            if units.get(f.name):
                assert unc.endswith(display_unit(std_unit)[0])
    for cells in rows.values():
        for cell in cells:
            if "NaN" in cell:  # never a silent NaN
                assert "not determined" in cell or "undefined" in cell, cell


def _numeric_fields(cls: type) -> list[str]:
    names = []
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        kind = str(f.type)
        if not f.repr or ("bool_" in kind and "float" not in kind):
            continue
        if NUMERIC_ANNOTATION.search(kind):
            names.append(f.name)
    return names


@pytest.mark.parametrize("name", sorted(_public_result_types()))
def test_every_result_class_declares_a_unit_for_every_numeric_field(name):
    cls = _public_result_types()[name]
    units = result_units(cls)
    missing = [n for n in _numeric_fields(cls) if n not in units]
    assert not missing, f"{name} declares no unit for {missing}"
    names = {f.name for f in dataclasses.fields(cls)}
    assert all(isinstance(u, str) for u in units.values())
    unknown = [n for n in units if n not in names and not hasattr(cls, n)]
    assert not unknown, f"{name}._units names no field or property {unknown}"


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_notebook_table_shows_values_units_uncertainty_and_flags(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the calls' own warnings are tested where they live
        instances = FACTORIES[name]()
    for obj in instances:
        units = result_units(type(obj))
        for f in dataclasses.fields(obj):
            value = getattr(obj, f.name)
            if f.repr and _is_numeric(value) and not isinstance(value, int | np.integer):
                assert f.name in units, f"{name}.{f.name} has no unit"
        _check_table(obj)


def test_nan_is_never_shown_as_a_silent_value():
    fit = FACTORIES["SweepFit"]()[0]
    nan = dataclasses.replace(fit, offset=np.array(np.nan), arc=np.full(20, np.nan))
    rows, _ = _html_rows(nan)
    assert rows["offset"][0] == "NaN (not determined)"
    assert "20 NaN" in rows["arc"][0] and "not determined" in rows["arc"][0]
    assert "NaN (not determined)" in nan._repr_markdown_()


def test_undetermined_up_is_infinite_and_said_so():
    result = GravityDirection(np.array([0.0, 0.6, 0.8]), np.zeros((3, 3)), "base")
    rows, _ = _html_rows(result)
    assert rows["up"][2].startswith("± inf deg") and "not determined" in rows["up"][2]
    assert rows["tilt"][0] == _fmt(np.degrees(np.arctan2(0.6, 0.8)))
    assert rows["azimuth"][0] == "90"
    vertical = GravityDirection(np.array([0.0, 0.0, 1.0]), np.eye(3) * 1e4, "")
    rows, _ = _html_rows(vertical)
    assert rows["azimuth"][0] == "undefined (up is vertical)" and rows["azimuth"][2] == ""
    broken = GravityDirection(np.array([np.nan, 0.0, 1.0]), np.full((3, 3), np.nan), "")
    rows, _ = _html_rows(broken)
    for name in ("up", "tilt", "azimuth"):
        assert "not determined" in rows[name][0] and "not determined" in rows[name][2]


def test_text_is_escaped():
    result = GravityDirection(np.array([0.0, 0.0, 1.0]), np.zeros((3, 3)), "<b>a|b & c</b>")
    html_text = result._repr_html_()
    assert "<b>a|b" not in html_text and "&lt;b&gt;a|b &amp; c&lt;/b&gt;" in html_text
    assert "<b>a\\|b & c</b>" in result._repr_markdown_()
    rows, _ = _markdown_rows(result)
    assert rows["frame"][0] == "<b>a|b & c</b>"


def test_a_large_batch_is_summarised_not_formatted_element_by_element(monkeypatch):
    rng = np.random.default_rng(7)
    n = 200_000
    up = rng.normal(size=(n, 3))
    up /= np.linalg.norm(up, axis=1, keepdims=True)
    # Information 1e6/rad² across both tangent directions: (I - u uᵀ) * 1e6.
    info = (np.eye(3) - up[:, :, None] * up[:, None, :]) * 1e6
    result = GravityDirection(up, info, "base")
    calls = []
    original = results_module._number

    def counting(x):
        calls.append(x)
        return original(x)

    monkeypatch.setattr(results_module, "_number", counting)
    html_text = result._repr_html_()
    assert len(calls) < 100 and len(html_text) < 3000
    rows, _ = _html_rows(result)
    assert "batch of shape (200000,)" in html_text
    assert "shape (200000,)" in rows["tilt"][0]
    tilt = np.degrees(np.arctan2(np.hypot(up[:, 0], up[:, 1]), up[:, 2]))
    assert _fmt(tilt.min()) in rows["tilt"][0] and _fmt(tilt.max()) in rows["tilt"][0]
    # Every up carries the same spread: sqrt(2e-6) rad.
    std = _uncertainty_numbers(rows["up"][2])
    np.testing.assert_allclose(std, np.degrees(math.sqrt(2e-6)), rtol=1e-5)


# Units that the name of a field fixes, by the conventions (radians and SI throughout).
UNIT_OF_NAME = {
    **dict.fromkeys(("phase", "tilt", "azimuth", "theta1", "theta2", "q", "q_ref", "arc",
                     "beta", "angle", "motor_angle", "output_angle"), "rad"),
    **dict.fromkeys(("time", "duration"), "s"),
    **dict.fromkeys(("sample_rate", "base_frequency"), "Hz"),
    **dict.fromkeys(("torque", "gravity_torque", "actuator_torque", "coulomb", "amplitude"), "N·m"),
    "viscous": "N·m·s/rad",
    "up": "",
}


@pytest.mark.parametrize("name", sorted(_public_result_types()))
def test_declared_units_follow_the_conventions(name):
    units = result_units(_public_result_types()[name])
    wrong = {
        n: (units[n], unit)
        for n, unit in UNIT_OF_NAME.items()
        if n in units and units[n] != unit
    }
    assert not wrong, f"{name}: declared vs conventional unit {wrong}"
    assert units.get("up_std_deg", "deg") == "deg"
    assert all(u == "deg" for n, u in units.items() if n.endswith("_deg"))
