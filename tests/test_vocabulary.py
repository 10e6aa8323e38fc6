"""The public vocabulary: the snapshot of every public signature (``tests/signatures.txt``) and
the vocabulary table of ``docs/conventions.md``, which every public signature follows."""

from __future__ import annotations

import fnmatch
import importlib
import re
import sys
import typing
from dataclasses import dataclass
from pathlib import Path

from _tools import load_tool

import gravdir

ROOT = Path(__file__).resolve().parent.parent
CONVENTIONS = ROOT / "docs" / "conventions.md"
signatures = load_tool("signatures")

ARGUMENT_KINDS = {"function", "class", "method", "staticmethod", "classmethod"}
FIELD_KINDS = {"result", "field"}  # a result's constructor takes its fields: names, not arguments
ORDER = re.compile(r"first|keyword-only|any|field|series (\d+)|required in (.+)")


# -- the snapshot ----------------------------------------------------------------------------


def test_signature_snapshot_is_current():
    """``tests/signatures.txt`` holds every public signature as the code defines it now."""
    old = signatures.SNAPSHOT.read_text(encoding="utf-8")
    new = signatures.snapshot()
    assert new == old, (
        "A public signature changed. If the change is meant, regenerate the snapshot with "
        f"`{signatures.COMMAND}` and list the change in CHANGELOG.md.\n" + signatures.diff(old, new)
    )


def test_snapshot_lists_each_public_name_and_the_parameter_kinds():
    entries = signatures.public_callables()
    lines = signatures.snapshot().splitlines()
    assert len(lines) == len(set(lines)), "a line written twice"
    names = {e.name for e in entries}
    assert set(gravdir.__all__) <= names
    line = next(e.line() for e in entries if e.name == "joint_velocity")
    assert line.startswith("function joint_velocity(pos-or-kw time: ArrayLike; ")
    assert "kw-only nan_policy: NanPolicy = 'raise'" in line
    assert line.endswith(") -> NDArray[np.float64]")
    assert any(e.name == "SweepAccumulator.add" and e.kind == "method" for e in entries)
    assert any(e.name == "SweepFit" and e.kind == "result" for e in entries)


# -- the table --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    """One row of the table of argument names."""

    names: tuple[str, ...]
    types: tuple[str, ...]  # annotations an argument may carry (a trailing `| None` aside)
    order: tuple[str, ...]  # tokens: first, keyword-only, any, field, series N, required in ...
    replaces: tuple[tuple[str, tuple[str, ...]], ...]  # (old name, scopes: globs of callables)

    def series(self) -> int | None:
        for token in self.order:
            m = ORDER.fullmatch(token)
            if m and m.group(1):
                return int(m.group(1))
        return None

    def required_in(self) -> tuple[str, ...]:
        for token in self.order:
            m = ORDER.fullmatch(token)
            if m and m.group(2):
                return tuple(re.findall(r"`([^`]+)`", m.group(2)))
        return ()


def _cells(line: str) -> list[str]:
    """The cells of a markdown table row; ``\\|`` is a pipe inside a cell."""
    cells = re.split(r"(?<!\\)\|", line.strip())[1:-1]
    return [c.strip().replace("\\|", "|") for c in cells]


def _table_after(text: str, header: str) -> list[list[str]]:
    """The rows of the table whose header line is `header`."""
    lines = text.splitlines()
    start = lines.index(header)
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append(_cells(line))
    return rows


def _ticks(cell: str) -> tuple[str, ...]:
    return tuple(re.findall(r"`([^`]+)`", cell))


def vocabulary(text: str | None = None) -> list[Row]:
    """The table of argument names of ``docs/conventions.md``."""
    text = CONVENTIONS.read_text(encoding="utf-8") if text is None else text
    header = "| name | meaning | unit | type | shape | order | replaces | reason |"
    rows = []
    for cells in _table_after(text, header):
        assert len(cells) == 8, cells
        name, _, _, type_, _, order, replaces, _ = cells
        old = []
        if replaces != "—":
            for item in replaces.split("; "):
                ticks = _ticks(item)
                assert ticks, f"a replaced name out of backticks: {item!r}"
                scoped = " in " in item
                old.append((ticks[0], ticks[1:] if scoped else ()))
        rows.append(Row(_ticks(name), _ticks(type_), tuple(order.split("; ")), tuple(old)))
    return rows


def suffixes(text: str | None = None) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """(suffix patterns, result names) of each row of the table of result kinds."""
    text = CONVENTIONS.read_text(encoding="utf-8") if text is None else text
    rows = _table_after(text, "| suffix | what it is | results |")
    return [(_ticks(suffix), _ticks(results)) for suffix, _, results in rows]


# -- the checks -------------------------------------------------------------------------------


def _split_union(annotation: str) -> list[str]:
    """The top-level members of ``a | b | c`` (brackets respected)."""
    parts, depth, current = [], 0, ""
    for char in annotation:
        depth += (char in "[(") - (char in "])")
        if char == "|" and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += char
    return [*parts, current.strip()]


def normalised(annotation: str) -> str:
    """`annotation` without ``InitVar[...]`` and without a ``None`` member."""
    m = re.fullmatch(r"InitVar\[(.*)\]", annotation)
    annotation = m.group(1) if m else annotation
    return " | ".join(p for p in _split_union(annotation) if p != "None")


def _options(annotation: str, namespace: dict[str, object]) -> frozenset[object] | None:
    """The options of a ``Literal`` annotation (an alias resolved in `namespace`), else None."""
    try:
        # Annotations are strings (postponed evaluation): resolve the alias where it is used.
        resolved = eval(annotation, dict(namespace), {"Literal": typing.Literal})
    except Exception:
        return None
    if typing.get_origin(resolved) is typing.Literal:
        return frozenset(typing.get_args(resolved))
    return None


def _type_ok(annotation: str, allowed: tuple[str, ...], module: str) -> bool:
    """Whether each member of the union `annotation` (``None`` aside) is one of `allowed`: the
    same text, or a ``Literal`` (an alias resolved in `module`) with the same options."""
    namespace = vars(sys.modules[module]) if module in sys.modules else {}
    literals = [_options(a, {}) for a in allowed if a.startswith("Literal[")]
    for member in _split_union(normalised(annotation)):
        if member in allowed:
            continue
        options = _options(member, namespace)
        if options is None or options not in literals:
            return False
    return True


def contradictions(entries: list, rows: list[Row]) -> list[str]:
    """Every place where the signatures in `entries` contradict the table `rows`."""
    found = []
    by_name = {name: row for row in rows for name in row.names}
    replaced = [(old, scopes, row.names[0]) for row in rows for old, scopes in row.replaces]
    for entry in entries:
        parameters = [p for p in entry.parameters if p.kind not in ("var-pos", "var-kw")]
        argument = entry.kind in ARGUMENT_KINDS
        if not argument and entry.kind not in FIELD_KINDS:
            continue
        what = "argument" if argument else "field"
        for p in parameters:
            for old, scopes, new in replaced:
                if p.name == old and (
                    not scopes or any(fnmatch.fnmatchcase(entry.name, s) for s in scopes)
                ):
                    found.append(f"{entry.name}: {what} `{old}` is `{new}`")
        if not argument:
            continue
        series = []
        for index, p in enumerate(parameters):
            row = by_name.get(p.name)
            if row is None:
                continue
            if row.types and not _type_ok(p.annotation, row.types, entry.module):
                found.append(
                    f"{entry.name}: `{p.name}: {p.annotation}` is not of type "
                    + " or ".join(row.types)
                )
            if "first" in row.order and index != 0:
                found.append(f"{entry.name}: `{p.name}` is not the first parameter")
            if "keyword-only" in row.order and p.kind != "kw-only":
                found.append(f"{entry.name}: `{p.name}` is not keyword-only")
            if "field" in row.order:
                found.append(f"{entry.name}: `{p.name}` is a result field, not an argument")
            rank = row.series()
            if rank is not None:
                series.append((rank, p))
        ranks = [rank for rank, _ in series]
        if ranks != sorted(ranks):
            order = ", ".join(p.name for _, p in series)
            found.append(f"{entry.name}: the series ({order}) are not in the declared order")
        for _, p in series[1:]:
            if p.kind != "kw-only":
                found.append(
                    f"{entry.name}: `{p.name}` follows the series `{series[0][1].name}` and is "
                    "not keyword-only"
                )
    takes = {(e.name, p.name) for e in entries if e.kind in ARGUMENT_KINDS for p in e.parameters}
    for row in rows:
        for callable_name in row.required_in():
            for name in row.names:
                if (callable_name, name) not in takes:
                    found.append(f"{callable_name}: does not take `{name}`")
    return found


def _public_names() -> set[str]:
    """The names of the stub, and the names its modules make public."""
    names = set(gravdir.__all__)
    for module, _ in gravdir._EXPORTS.values():
        names |= set(getattr(importlib.import_module(module), "__all__", ()))
    return names


def grammar() -> list[re.Pattern[str]]:
    """The names a function that estimates or bounds `up` may take, from the row of the table of
    other names that holds ``up_from_<sensor>``: ``<sensor>`` is a word, ``[...]`` optional."""
    text = CONVENTIONS.read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if "`up_from_<sensor>`" in line)
    patterns = _ticks(_cells(row)[1])
    out = []
    for pattern in patterns:
        regex = re.escape(pattern).replace("<sensor>", "[a-z_]+").replace("…", ".*")
        regex = regex.replace(r"\[", "(?:").replace(r"\]", ")?")
        out.append(re.compile(regex))
    return out


def name_contradictions(entries: list, patterns: list[re.Pattern[str]]) -> list[str]:
    """Functions named ``crlb_up…`` or ``estimate_up…`` outside the grammar of `patterns`."""
    return [
        f"{e.name}: not named by the grammar of the table of other names"
        for e in entries
        if e.kind == "function"
        and e.name.startswith(("crlb_up", "estimate_up"))
        and not any(p.fullmatch(e.name) for p in patterns)
    ]


def result_contradictions(entries: list, kinds: list) -> list[str]:
    """Where the public results and the table of result kinds disagree."""
    found = []
    results = {e.name for e in entries if e.kind == "result"}
    listed: dict[str, tuple[str, ...]] = {}
    public = _public_names()
    for patterns, names in kinds:
        for name in names:
            if name in listed:
                found.append(f"`{name}` is listed under two kinds")
            listed[name] = patterns
            if name not in public:
                found.append(f"`{name}` is listed but is no public name")
            if patterns and not any(fnmatch.fnmatchcase(name, p) for p in patterns):
                found.append(f"`{name}` does not match " + " or ".join(patterns))
    for name in sorted(results - set(listed)):
        found.append(f"the result `{name}` is not listed in the table of result kinds")
    return found


# -- tests of the table -----------------------------------------------------------------------


def test_vocabulary_table_is_well_formed():
    rows = vocabulary()
    names = [name for row in rows for name in row.names]
    assert len(names) == len(set(names)), "a name with two rows"
    assert all(re.fullmatch(r"[a-z][a-z0-9_]*", n) for n in names), names
    replaced = [old for row in rows for old, scopes in row.replaces if not scopes]
    assert not set(replaced) & set(names), "a name both used and replaced everywhere"
    ranks = [row.series() for row in rows if row.series() is not None]
    assert len(ranks) == len(set(ranks)), "two series of one rank"
    for row in rows:
        assert row.order, row
        for token in row.order:
            assert ORDER.fullmatch(token), f"{row.names}: unknown order {token!r}"
        for allowed in row.types:
            if allowed.startswith("Literal["):
                assert _options(allowed, {}), allowed
    series = sorted((row.series(), row.names[0]) for row in rows if row.series() is not None)
    assert [name for _, name in series][:6] == [
        "time", "motor_angle", "q", "velocity", "acceleration", "torque"
    ]  # fmt: skip


def test_vocabulary_covers_every_shared_argument():
    """Every argument name that more than one public callable takes has a row (or is a name the
    table replaces)."""
    users: dict[str, set[str]] = {}
    for entry in signatures.public_callables():
        if entry.kind in ARGUMENT_KINDS:
            for p in entry.parameters:
                users.setdefault(p.name, set()).add(entry.name)
    rows = vocabulary()
    known = {n for row in rows for n in row.names} | {o for row in rows for o, _ in row.replaces}
    shared = {name for name, who in users.items() if len(who) > 1}
    assert shared - known == set(), f"shared argument names missing from {CONVENTIONS.name}"


def test_every_result_kind_pattern_is_a_suffix_or_prefix():
    kinds = suffixes()
    assert kinds, "no table of result kinds"
    for patterns, names in kinds:
        assert names, patterns
        assert all(p.startswith("*") or p.endswith("*") for p in patterns), patterns


def _fake(name, *params, kind="function"):
    """An entry of `signatures` built by hand: params are (name, kind, annotation)."""
    parameters = tuple(signatures.Parameter(n, k, a, None) for n, k, a in params)
    return signatures.Entry(kind, name, parameters, "None", __name__)


def test_the_checks_catch_each_kind_of_contradiction():
    """The checker itself, on signatures built to break each rule once."""
    rows = vocabulary()
    pos, kw = "pos-or-kw", "kw-only"
    bad = [
        _fake("fit_x", ("q", pos, "ArrayLike"), ("torque", pos, "ArrayLike"),
              ("velocity", pos, "ArrayLike")),
        _fake("up_from_x", ("chain", pos, "SerialChain"), ("configurations", pos, "ArrayLike"),
              ("tol", kw, "float"), ("up", kw, "ArrayLike")),
        _fake("fit_y", ("q", pos, "ArrayLike"), ("friction", kw, "bool"),
              ("load_friction", kw, "Literal['none', 'signed']"), ("max_iter", pos, "int")),
        _fake("Thing", ("rms", pos, "float"), kind="result"),
    ]  # fmt: skip
    found = contradictions(bad, rows)
    expected = [
        "fit_x: `torque` follows the series `q` and is not keyword-only",
        "fit_x: the series (q, torque, velocity) are not in the declared order",
        "up_from_x: argument `configurations` is `q`",
        "up_from_x: argument `tol` is `xtol`",
        "up_from_x: argument `up` is `up_hint`",
        "fit_y: `max_iter` is not keyword-only",
        "Thing: field `rms` is `residual_rms`",
    ]
    for message in expected:
        assert message in found, (message, found)
    assert any(m.startswith("fit_y: `friction: bool` is not of type") for m in found), found
    assert any(m.startswith("fit_y: `load_friction: Literal") for m in found), found
    good = [
        _fake("fit_z", ("q", pos, "ArrayLike"), ("velocity", kw, "ArrayLike"),
              ("acceleration", kw, "ArrayLike | None"), ("torque", kw, "ArrayLike"),
              ("friction", kw, 'Literal["none", "coulomb", "coulomb-viscous-quadratic", '
                                   '"coulomb-viscous", "auto"]'),
              ("xtol", kw, "float")),
    ]  # fmt: skip
    assert [m for m in contradictions(good, rows) if m.startswith("fit_z")] == []
    names = [_fake("crlb_up_accelerometer"), _fake("crlb_up_from_touches"), _fake("estimate_up")]
    assert name_contradictions(names, grammar()) == [
        "crlb_up_accelerometer: not named by the grammar of the table of other names"
    ]


def test_public_signatures_follow_the_vocabulary():
    """No public signature contradicts the table of argument names, and every public result is
    listed under its kind."""
    entries = signatures.public_callables()
    found = (
        contradictions(entries, vocabulary())
        + name_contradictions(entries, grammar())
        + result_contradictions(entries, suffixes())
    )
    assert found == [], f"{len(found)} contradictions of {CONVENTIONS.name}:\n" + "\n".join(found)
