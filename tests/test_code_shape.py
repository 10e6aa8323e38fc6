"""The shape of the code read from its syntax tree: function length and what docstrings hold.

*Public* here is every function whose name does not start with ``_`` at the top level of any
module of ``src/gravdir`` (private modules included: their public functions are what the
package's modules call), and every method whose name does not start with ``_`` of a class whose
name does not start with ``_``. That covers every name of the stub ``gravdir/__init__.pyi`` (each
is such a function or class, checked below) and everything reachable from them by name.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from collections.abc import Iterator
from pathlib import Path

import gravdir

SRC = Path(gravdir.__file__).resolve().parent
# A public function's body, docstring excluded, holds at most this many lines: a reader can hold
# it at once, and anything longer has stages that read better as named functions.
MAX_BODY_LINES = 120


def _modules() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(SRC.rglob("*.py")):
        yield str(path.relative_to(SRC)), ast.parse(path.read_text(encoding="utf-8"))


def _has_docstring(node: ast.AST) -> bool:
    body = getattr(node, "body", [])
    return bool(
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    )


def body_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines from the first statement after the docstring to the end of the last statement."""
    stmts = node.body[1:] if _has_docstring(node) else node.body
    if not stmts:
        return 0
    return (stmts[-1].end_lineno or stmts[-1].lineno) - stmts[0].lineno + 1


def public_functions() -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """(``file:Class.name``, node) of every public function and method (module docstring)."""
    functions = (ast.FunctionDef, ast.AsyncFunctionDef)
    for name, tree in _modules():
        for node in tree.body:
            if isinstance(node, functions) and not node.name.startswith("_"):
                yield f"{name}:{node.name}", node
            elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                for item in node.body:
                    if isinstance(item, functions) and not item.name.startswith("_"):
                        yield f"{name}:{node.name}.{item.name}", item


def test_body_lines_skip_the_docstring() -> None:
    tree = ast.parse('def f():\n    """Doc.\n\n    More.\n    """\n    a = 1\n\n    return a\n')
    node = tree.body[0]
    assert isinstance(node, ast.FunctionDef)
    assert body_lines(node) == 3


def test_stub_names_are_public_functions_and_classes() -> None:
    """Every name of the stub is defined under a public name, so the rule below reaches it."""
    private = {}
    for name in gravdir.__all__:
        obj = getattr(gravdir, name)
        if inspect.isfunction(obj) or inspect.isclass(obj):
            module = importlib.import_module(obj.__module__)
            if obj.__name__.startswith("_") or getattr(module, obj.__name__, None) is not obj:
                private[name] = f"{obj.__module__}.{obj.__name__}"
    assert private == {}


def test_no_public_function_body_over_120_lines() -> None:
    names = [name for name, _ in public_functions()]
    assert any(n.endswith(":estimate_up_from_motion") for n in names)
    assert any(n.endswith(":MotionFit.predict_torque") for n in names)
    long = {
        name: n for name, node in public_functions() if (n := body_lines(node)) > MAX_BODY_LINES
    }
    assert long == {}


# ---------------------------------------------------------------------------------------------
# Docstrings define; the documentation pages measure.

# Words that report a measurement: a statistic of errors or a benchmark.
_MEASURE = re.compile(r"\b(median|p\d\d|percentiles?|RMS|rms|measured|benchmarks?|benchmarked)\b")
# A figure: a number with a unit, a per cent or a factor (``0.33°``, ``12 ms``, ``5%``, ``3×``);
# a bare count (``3 joints``, ``shape (n, 3)``) or a name (``float64``) is not one.
_FIGURE = re.compile(
    r"(?<![\w.])\d+(\.\d+)?(e-?\d+)?\s?(%|°|deg\b|degrees\b|mrad\b|rad\b|ms\b|µs\b|us\b|s\b"
    r"|σ|×|x\b|times\b|standard deviations\b)"
)
# A time of microseconds or nanoseconds is the speed of code: a benchmark figure with any words.
_TIMING = re.compile(r"(?<![\w.])\d+(\.\d+)?\s?(µs|ns)\b")
# What is not prose: inline literals, roles (``:math:`...```) and references (`name`).
_NOT_PROSE = re.compile(r"``.*?``|:\w+:`[^`]*`|`[^`]*`")
# A numpydoc entry (``name : type``) or section underline starts a new paragraph.
_ENTRY = re.compile(r"^(\w[\w, *]*\s:\s|-{3,}$)")


def measured_figures(doc: str) -> list[str]:
    """The sentences of `doc` that name a measurement beside a figure, or time code."""
    paragraphs: list[list[str]] = [[]]
    for line in doc.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith((">>>", "...")) or _ENTRY.match(stripped):
            paragraphs.append([])
        if stripped and not stripped.startswith((">>>", "...")):
            paragraphs[-1].append(stripped)
    hits = []
    for paragraph in paragraphs:
        text = _NOT_PROSE.sub(" ", " ".join(paragraph))
        for sentence in re.split(r"(?<=[.;])\s+", text):
            if (_MEASURE.search(sentence) and _FIGURE.search(sentence)) or _TIMING.search(sentence):
                hits.append(sentence.strip())
    return hits


def test_measured_figures_are_recognised() -> None:
    assert measured_figures("Unmodelled, it moved `up` by 0.33° median on realistic logs.")
    assert measured_figures("The p95 error is 0.5 deg.")
    assert measured_figures("Measured: 12 ms per call on the benchmark.")
    assert measured_figures("Errors of 0.1° RMS in\n    the benchmark.")
    assert measured_figures("The scalar path takes about 1 µs.")
    assert measured_figures(
        "x : float\n    Window, s (default 0.2: within 0.5% at 2 Hz, measured)."
    )
    # Definitions without a figure, shapes, literals and code are not measurements.
    assert not measured_figures("RMS angle in degrees.")
    assert not measured_figures("residual_rms : ndarray, shape (n, 3)\n    The residual RMS.")
    assert not measured_figures("The RMS of ``x[2]`` over :math:`k = 1` samples.")
    assert not measured_figures("Measured torques.\n\n    >>> rms(np.ones(3))\n    1.0 s")
    assert not measured_figures("Azimuth, measured from +x.\n\ntilt : float\n    Within 5°.")
    assert not measured_figures("The RMS over 3 joints and 20 samples.")


def docstrings() -> Iterator[tuple[str, str]]:
    """(``file:name``, docstring) of every module, class and function of ``src/gravdir``."""
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    for name, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, kinds) and (doc := ast.get_docstring(node, clean=True)):
                yield f"{name}:{getattr(node, 'name', '<module>')}", doc


def test_docstrings_carry_no_measured_figures() -> None:
    """Measured accuracy and speed belong on the documentation pages, which are checked against
    the benchmarks; a docstring says what a thing is, its unit, default and constraints."""
    found = {name: hits for name, doc in docstrings() if (hits := measured_figures(doc))}
    assert found == {}
