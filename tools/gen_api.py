"""Write the table of public names in ``docs/api.md`` from the stub ``src/gravdir/__init__.pyi``
and the ``__all__`` of every public module.

Usage: ``python tools/gen_api.py`` rewrites the table; ``python tools/gen_api.py --check`` exits 1
if the checked-in table differs from the generated one (``tests/test_public_names.py`` checks the
same). The page's text above the marker line ``MARKER`` is written by hand and kept as it is;
everything below it is generated: one section per public module, first those of the stub in its
order, then the others by name, and a row per name with its kind and the summary line of its
docstring (for a constant, the first sentence of its ``#:`` comment, and its value). A module's
section has the stub's names that module documents, then the other names of its ``__all__``
(the building blocks that ``import gravdir`` does not export); a name a package re-exports from
one of its public submodules says so and links to the submodule's entry.

The page is Markdown read by myst-parser: each name is a cross-reference (``{py:obj}``) to its
entry in the API reference, ``<module>.<name>`` in the module that documents it, and the
summary's reStructuredText (``:func:`x```, ``:math:`x```, double backticks) is written in the
page's own syntax, so that the site shows links and maths rather than the roles.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
import sys
import typing
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
    """What a public name is, as the table says it: error, warning, result, class, function,
    type (an alias such as a ``Literal`` of option names) or constant."""
    from gravdir._results import Result

    if inspect.isclass(obj):
        if issubclass(obj, Warning):
            return "warning"
        if issubclass(obj, BaseException):
            return "error"
        return "result" if issubclass(obj, Result) else "class"
    if typing.get_origin(obj) is not None:
        return "type"
    return "function" if callable(obj) else "constant"


def _comment(module: str, name: str) -> str:
    """The documentation of the assignment of `name` in `module` or in another module of its
    package (where a public module takes it from a private one), as one line: its ``#:``
    comment above, or the string literal below it."""
    is_package = hasattr(importlib.import_module(module), "__path__")
    package = module if is_package else module.rpartition(".")[0]
    path = importlib.import_module(package).__path__
    places = [module, *(info.name for info in pkgutil.iter_modules(path, package + "."))]
    for place in places:
        source = inspect.getsource(importlib.import_module(place))
        lines = source.splitlines()
        body = ast.parse(source).body
        for k, node in enumerate(body):
            targets = (
                node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
            )
            if not any(isinstance(t, ast.Name) and t.id == name for t in targets):
                continue
            above: list[str] = []
            i = node.lineno - 2
            while i >= 0 and lines[i].lstrip().startswith("#:"):
                above.insert(0, lines[i].lstrip()[2:].strip())
                i -= 1
            after = body[k + 1] if k + 1 < len(body) else None
            if not above and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant):
                above = [str(after.value.value)]
            return " ".join(" ".join(above).split())
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
    if kind(obj) in ("constant", "type"):
        sentence = re.split(r"(?<=\.)\s+(?=[A-Z])", _comment(module, name), maxsplit=1)[0]
        value = repr(obj)
        # A short value is shown; a long one (a table of arrays) is on the name's entry.
        text = f"{sentence} Its value: `{value}`." if len(value) <= 60 else sentence
        text = markdown(text)
    else:
        text = markdown(" ".join((inspect.getdoc(obj) or "").split("\n\n")[0].split()))
    return text.replace("|", r"\|")


def documenting_module(module: str) -> str:
    """The public module a name is shown under: a private module's (``gravdir._constants``) is
    the package above it."""
    parts = module.split(".")
    public = [p for i, p in enumerate(parts) if not any(q.startswith("_") for q in parts[: i + 1])]
    return ".".join(public)


def public_modules() -> list[str]:
    """The package and every module under it whose dotted name has no part starting with ``_``,
    sorted: the modules the reference documents, each with every name of its ``__all__``."""
    package = _gravdir()
    names = ["gravdir"]
    for info in pkgutil.walk_packages(package.__path__, "gravdir."):  # type: ignore[attr-defined]
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    return sorted(names)


def stub_names() -> list[str]:
    """The dotted name of every name of the stub, as the module that documents it gives it."""
    exports: dict[str, tuple[str, str]] = _gravdir()._EXPORTS  # type: ignore[attr-defined]
    return [f"{documenting_module(module)}.{name}" for name, (module, _) in exports.items()]


def every_name() -> list[str]:
    """The dotted name of every name of every public module's ``__all__`` but the package's own
    (its names are the stub's, documented in the modules that define them)."""
    return [
        f"{m}.{name}"
        for m in public_modules()
        if m != "gravdir"
        for name in importlib.import_module(m).__all__
    ]


def documented_in(module: str, name: str) -> str | None:
    """The public submodule of `module` whose ``__all__`` holds the same object as `module`'s
    `name` (``gravdir.synthetic.ur5_arm`` is ``gravdir.synthetic.robot.ur5_arm``), or None."""
    obj = getattr(importlib.import_module(module), name)
    for sub in public_modules():
        if sub.startswith(module + ".") and sub.count(".") == module.count(".") + 1:
            submodule = importlib.import_module(sub)
            if name in submodule.__all__ and getattr(submodule, name) is obj:
                return sub
    return None


def table() -> str:
    """The generated part of ``docs/api.md``: a section per module, a row per public name."""
    gravdir = _gravdir()
    exports: dict[str, tuple[str, str]] = gravdir._EXPORTS  # type: ignore[attr-defined]
    sections: dict[str, list[str]] = {}
    listed: set[str] = set()
    for name, (module, attribute) in exports.items():
        obj = getattr(importlib.import_module(module), attribute)
        entry = f"{documenting_module(module)}.{name}"
        row = f"| {{py:obj}}`{name} <{entry}>` | {kind(obj)} | {summary(obj, module, attribute)} |"
        sections.setdefault(documenting_module(module), []).append(row)
        listed.add(entry)
    for dotted in every_name():
        if dotted in listed:
            continue
        module, _, name = dotted.rpartition(".")
        obj = getattr(importlib.import_module(module), name)
        sub = documented_in(module, name)
        what = f"The same as {{py:obj}}`{sub}.{name}`." if sub else summary(obj, module, name)
        row = f"| {{py:obj}}`{name} <{dotted}>` | {kind(obj)} | {what} |"
        sections.setdefault(module, []).append(row)
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
