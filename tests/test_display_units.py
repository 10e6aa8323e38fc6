"""One unit rule for every display of a result: its text ``repr`` and its notebook table.

For every public result type (the instances of `test_contract.FACTORIES`, built from real calls
on small seeded cases) each quantity that both displays show is read back from both: the text's
``name=value [unit] [± std [unit]]`` and the table's value, unit and uncertainty. They must be in
the same unit -- an angle in degrees in both, with its σ in degrees -- and agree to the digits
the text prints. A text field ``x_deg`` is the table's ``x`` in degrees; ``x_std`` and
``x_std_deg`` are the uncertainty of the table's ``x``.
"""

from __future__ import annotations

import math
import re
import warnings

import pytest
from test_contract import FACTORIES

from gravdir._results import Result

NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?|[-+]?inf|nan"
ARRAY = r"\[[-+\d.e,\s\[\]naif]*\]"
VALUE = rf"(?:{ARRAY}|{NUMBER})"
UNIT = r"(?:°|\s(?!±|\()[^\s,;()]+|\s\([^\s,;()]+\)[^\s,;()]*)"
FIELD = re.compile(
    rf"(?:^|[\s,(])(\w+)=({VALUE})({UNIT})?(?:\s?±\s?({VALUE})({UNIT})?)?(?=[,;)\s]|$)"
)


def _instances() -> list[tuple[str, Result]]:
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in sorted(FACTORIES):
            out += [(f"{name}[{i}]", obj) for i, obj in enumerate(FACTORIES[name]())]
    return out


INSTANCES = _instances()


def _top_level(text: str) -> str:
    """The body of ``Name(...)`` with every nested ``Other(...)`` (a nested result's repr)
    removed, so only the result's own fields remain."""
    body = text[text.index("(") + 1 : text.rindex(")")] if "(" in text else text
    out, depth = [], 0
    for i, ch in enumerate(body):
        if ch == "(" and (depth or (i and (body[i - 1].isalnum() or body[i - 1] == "_"))):
            depth += 1
        elif ch == ")" and depth:
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def _unit(text: str | None) -> str:
    text = (text or "").strip()
    return "deg" if text in ("°", "deg") else text


def text_fields(obj: Result) -> dict[str, tuple[str, str, str | None, str]]:
    """``name -> (value, unit, std or None, std unit)`` of the text repr's own fields."""
    fields = {}
    for m in FIELD.finditer(_top_level(repr(obj))):
        name, value, unit, std, std_unit = m.groups()
        if name not in fields:
            fields[name] = (value, _unit(unit), std, _unit(std_unit or unit))
    return fields


def table_rows(obj: Result) -> dict[str, tuple[str, str, str]]:
    """``name -> (value, unit, uncertainty)`` of the Markdown table."""
    rows = {}
    for line in obj._repr_markdown_().splitlines():
        if line.startswith("| `"):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            rows[cells[0].strip("`")] = (cells[1], cells[2], cells[3])
    return rows


def _numbers(text: str) -> list[str]:
    return re.findall(NUMBER, text)


def _resolution(number: str) -> float:
    """Half a unit in the last printed digit of `number` (its rounding)."""
    mantissa, _, exponent = number.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    return 0.5 * 10.0 ** (-decimals + (int(exponent) if exponent else 0))


def _agree(text: str, table: str, what: str) -> None:
    """The numbers printed in `text` equal those in `table` (6 significant digits) within the
    rounding of the text."""
    t, g = _numbers(text), _numbers(table)
    assert len(t) == len(g), f"{what}: text {text!r} and table {table!r} hold different counts"
    for a, b in zip(t, g, strict=True):
        x, y = float(a), float(b)
        if math.isinf(x) or math.isnan(x) or math.isinf(y) or math.isnan(y):
            assert a.lstrip("+") == b.lstrip("+") or (math.isnan(x) and math.isnan(y)), what
            continue
        tol = _resolution(a) + 1e-5 * abs(y) + 1e-300
        assert abs(x - y) <= tol, f"{what}: text {a} against table {b} (tolerance {tol:.3g})"


def _uncertainty(cell: str) -> tuple[str, str]:
    """The number(s) and unit of a table's uncertainty cell ``± 0.06 deg``."""
    m = re.fullmatch(rf"± ({VALUE}|shape .*?)(?: (.*?))?", re.sub(r"\s*\(.*\)$", "", cell))
    assert m is not None, cell
    return m.group(1), _unit(m.group(2))


def compared(obj: Result) -> list[tuple[str, str]]:
    """Check every quantity both displays show; return (field, unit) of each one compared."""
    rows, seen = table_rows(obj), []
    for name, (value, unit, std, std_unit) in text_fields(obj).items():
        base, is_std = name, False
        for suffix, spread in (("_std_deg", True), ("_std", True), ("_deg", False)):
            if name not in rows and name.endswith(suffix) and name[: -len(suffix)] in rows:
                base, is_std = name[: -len(suffix)], spread
                if suffix.endswith("_deg"):
                    unit = unit or "deg"
                break
        if base not in rows:
            continue
        t_value, t_unit, t_unc = rows[base]
        if t_value.startswith(("shape", "empty")) or not _numbers(t_value):
            continue
        what = f"{type(obj).__name__}.{name}"
        if is_std:
            assert t_unc, f"{what}: shown in the text, no uncertainty in the table"
            number, u = _uncertainty(t_unc)
            _same_unit(obj, rows, unit, u, what)
            _agree(value, number, what)
            seen.append((name, u))
            continue
        _same_unit(obj, rows, unit, t_unit, what)
        _agree(value, t_value, what)
        seen.append((name, t_unit))
        if std is not None:
            assert t_unc, f"{what}: the text shows ± {std}, the table no uncertainty"
            number, u = _uncertainty(t_unc)
            _same_unit(obj, rows, std_unit, u, what + " σ")
            _agree(std, number, what + " σ")
            seen.append((name + " σ", u))
    return seen


def _same_unit(
    obj: Result, rows: dict[str, tuple[str, str, str]], text: str, table: str, what: str
) -> None:
    """The text's unit is the table's. An angle is in degrees in both; a number the text prints
    without a unit is in the table's unit unless that is degrees (the text must then say so);
    a unit of several words is printed whole after the number; the table's "as in `units`"
    refers to its `units` row."""
    if not text:
        assert table != "deg", f"{what}: the table shows degrees, the text no unit"
        return
    if table == "as in `units`" and "units" in rows:
        assert text in rows["units"][0].split(", "), f"{what}: {text!r} not in `units`"
        return
    if table != text and table.startswith(text + " "):
        assert f" {table}" in repr(obj), f"{what}: text in {text!r}, table in {table!r}"
        return
    assert text == table, f"{what}: text in {text!r}, table in {table!r}"


@pytest.mark.parametrize("label, obj", INSTANCES, ids=[label for label, _ in INSTANCES])
def test_text_and_table_show_each_quantity_in_one_unit(label, obj):
    compared(obj)


def test_the_check_compares_angles_and_their_spreads():
    """The comparison reaches the quantities the rule is about: SweepFit's phase and its σ,
    a tilt in degrees, and many quantities over all result types."""
    fits = [obj for label, obj in INSTANCES if label.startswith("SweepFit[")]
    single = next(f for f in fits if not f.batch_shape)
    assert ("phase", "deg") in compared(single)
    assert ("phase σ", "deg") in compared(single)
    tilts = [obj for label, obj in INSTANCES if label.startswith("TiltAzimuth[")]
    assert ("tilt_deg", "deg") in compared(tilts[0])
    total = sum(len(compared(obj)) for _, obj in INSTANCES)
    assert total >= 60


def test_angles_and_their_spread_are_in_degrees_in_every_table():
    """No table shows a field in radians: the display rule turns ``rad`` into degrees."""
    for label, obj in INSTANCES:
        for name, (_, unit, unc) in table_rows(obj).items():
            assert unit != "rad", f"{label}.{name}"
            assert not unc.endswith(" rad"), f"{label}.{name}: {unc}"


def test_no_negative_zero_and_no_list_of_empty_lists():
    for label, obj in INSTANCES:
        for name, (value, _, unc) in table_rows(obj).items():
            for cell in (value, unc):
                assert not re.search(r"(?<![\de.])-0(?![.\de])", cell), f"{label}.{name}: {cell}"
                assert "[]" not in cell, f"{label}.{name}: {cell}"

