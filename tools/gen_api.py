"""Write the table of public names in ``docs/api.md`` from the stub ``src/gravdir/__init__.pyi``.

Usage: ``python tools/gen_api.py`` rewrites the table; ``python tools/gen_api.py --check`` exits 1
if the checked-in table differs from the generated one (``tests/test_public_names.py`` checks the
same). The page's text above the marker line ``MARKER`` is written by hand and kept as it is;
everything below it is generated: one section per module, in the order of the stub, and a row per
name with its kind and the summary line of its docstring (for a constant, the first sentence of
its ``#:`` comment, and its value).

The page is Markdown read by myst-parser: each name is a cross-reference (``{py:obj}``) to its
entry in the API reference, ``<module>.<name>`` in the module that documents it, and the
summary's reStructuredText (``:func:`x```, ``:math:`x```, double backticks) is written in the
page's own syntax, so that the site shows links and maths rather than the roles.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
API = ROOT / "docs" / "api.md"
MARKER = "<!-- Generated from src/gravdir/__init__.pyi by tools/gen_api.py: do not edit below. -->"


def _gravdir() -> object:
    """The gravdir of this checkout (its ``src``), whatever is installed."""
    sys.path.insert(0, str(ROOT / "src"))
    try:
        return importlib.import_module("gravdir")
    finally:
        sys.path.pop(0)


def kind(obj: object) -> str:
    """What a public name is, as the table says it: error, warning, result, class, function or
    constant."""
    from gravdir._results import Result

    if inspect.isclass(obj):
        if issubclass(obj, Warning):
            return "warning"
        if issubclass(obj, BaseException):
            return "error"
        return "result" if issubclass(obj, Result) else "class"
    return "function" if callable(obj) else "constant"


def _comment(module: str, name: str) -> str:
    """The ``#:`` comment above the assignment of `name` in `module`, as one line."""
    source = inspect.getsource(importlib.import_module(module))
    lines = source.splitlines()
    for node in ast.parse(source).body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            above: list[str] = []
            i = node.lineno - 2
            while i >= 0 and lines[i].lstrip().startswith("#:"):
                above.insert(0, lines[i].lstrip()[2:].strip())
                i -= 1
            return " ".join(above)
    return ""


_ROLE = re.compile(r":(\w+):`([^`]+)`")


def markdown(text: str) -> str:
    """`text`, a docstring's reStructuredText, in the Markdown of the pages: roles as myst roles
    (``:math:`x``` as ``$x$``), literals in single backticks."""

    def role(m: re.Match[str]) -> str:
        kind, target = m.groups()
        return f"${target}$" if kind == "math" else f"{{py:{kind}}}`{target}`"

    return _ROLE.sub(role, text).replace("``", "`")


def summary(obj: object, module: str, name: str) -> str:
    """The one-line summary of a public name: the first paragraph of its docstring; for a
    constant, the first sentence of its ``#:`` comment and its value."""
    if kind(obj) == "constant":
        sentence = re.split(r"(?<=\.)\s+(?=[A-Z])", _comment(module, name), maxsplit=1)[0]
        text = f"{sentence} Its value: `{obj!r}`."
    else:
        text = markdown(" ".join((inspect.getdoc(obj) or "").split("\n\n")[0].split()))
    return text.replace("|", r"\|")


def _heading(module: str) -> str:
    """The public module a name is shown under: a private module's (``gravdir._constants``) is
    the package above it."""
    parts = module.split(".")
    public = [p for i, p in enumerate(parts) if not any(q.startswith("_") for q in parts[: i + 1])]
    return ".".join(public)


def table() -> str:
    """The generated part of ``docs/api.md``: a section per module, a row per public name."""
    gravdir = _gravdir()
    exports: dict[str, tuple[str, str]] = gravdir._EXPORTS  # type: ignore[attr-defined]
    sections: dict[str, list[str]] = {}
    for name, (module, attribute) in exports.items():
        obj = getattr(importlib.import_module(module), attribute)
        entry = f"{_heading(module)}.{name}"
        row = f"| {{py:obj}}`{name} <{entry}>` | {kind(obj)} | {summary(obj, module, attribute)} |"
        sections.setdefault(_heading(module), []).append(row)
    out = []
    for heading, rows in sections.items():
        out += ["", f"## {{py:mod}}`{heading}`", ""]
        out += ["| name | kind | what it is |", "|---|---|---|", *rows]
    return "\n".join(out) + "\n"


def render(text: str) -> str:
    """`text` (the page as it is) with everything below ``MARKER`` generated afresh."""
    head, found, _ = text.partition(MARKER + "\n")
    if not found:
        raise ValueError(f"{API} has no line {MARKER!r}")
    return head + MARKER + "\n" + table()


def main(argv: list[str]) -> int:
    text = API.read_text(encoding="utf-8")
    new = render(text)
    if argv == ["--check"]:
        if new != text:
            print(f"{API} is out of date: run python tools/gen_api.py", file=sys.stderr)
            return 1
        return 0
    if argv:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    API.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
