"""The shape of the package: file sizes, the import graph, the public surface and its table."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import gravdir
import gravdir.errors

SRC = Path(gravdir.__file__).resolve().parent
DOCS = SRC.parent.parent / "docs"
ESTIMATORS = {
    "gravdir.sweep",
    "gravdir.general",
    "gravdir.closed_form",
    "gravdir.touch",
    "gravdir.friction",
    "gravdir.kinematic_error",
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """Every gravdir module `path` imports, at any depth (TYPE_CHECKING blocks included)."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("gravdir"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if module.startswith("gravdir"):
                found.add(module)
                # `from gravdir.x import y` may import the submodule gravdir.x.y
                found.update(
                    f"{module}.{a.name}"
                    for a in node.names
                    if (SRC.parent / f"{module}.{a.name}".replace(".", "/")).exists()
                    or (SRC.parent / (f"{module}.{a.name}".replace(".", "/") + ".py")).exists()
                )
    return found


def _graph() -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in SRC.rglob("*.py")}
    graph = {}
    for name, path in modules.items():
        # Only written imports count: the implicit import of a module's parent packages is not an
        # edge (a private part importing its own package back would be, and closes a loop).
        graph[name] = {m for m in _imports(path) if m in modules and m != name}
    return graph


def test_no_source_file_over_800_lines():
    long = {
        str(p.relative_to(SRC)): n
        for p in SRC.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > 800
    }
    assert long == {}


def test_import_graph_has_no_cycle():
    graph = _graph()
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        state[node] = 2
        stack.pop()
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            assert cycle is None, " -> ".join(cycle)


def test_no_package_imports_another_packages_private_module():
    """A package's private modules (`gravdir.sweep._design`) serve that package alone; what
    several packages share lives in a top-level private module (`gravdir._sphere`,
    `gravdir._checks`) or is imported through the public name."""
    crossings = []
    for name, imported in _graph().items():
        package = name.split(".")[1] if name.count(".") else ""
        for target in imported:
            parts = target.split(".")
            private_inside = any(p.startswith("_") for p in parts[2:])
            if len(parts) > 2 and private_inside and parts[1] != package:
                crossings.append(f"{name} -> {target}")
    assert sorted(crossings) == []


def test_synthetic_is_independent_of_the_estimators():
    graph = _graph()
    for name, deps in graph.items():
        if name.startswith("gravdir.synthetic"):
            bad = {d for d in deps if any(d == e or d.startswith(e + ".") for e in ESTIMATORS)}
            assert bad == set(), f"{name} imports {sorted(bad)}"


def test_core_imports_neither_synthetic_nor_plot():
    # gravdir.testing draws synthetic worlds for property tests: like the synthetic and plot
    # packages it sits on top of the core, and nothing in the core imports it.
    for name, deps in _graph().items():
        if name.startswith(("gravdir.synthetic", "gravdir.plot", "gravdir.testing")):
            continue
        bad = {
            d
            for d in deps
            if d.startswith(("gravdir.synthetic", "gravdir.plot", "gravdir.testing"))
        }
        assert bad == set(), f"{name} imports {sorted(bad)}"


def test_error_types_are_public():
    for name in gravdir.errors.__all__:
        obj = getattr(gravdir.errors, name)
        assert issubclass(obj, ValueError | UserWarning)
        assert obj.__module__ == "gravdir.errors"
        assert obj.__doc__


def test_public_table_lists_every_module_name_in_its_module_section():
    """docs/api.md lists each name of a public module's `__all__` in that module's section."""
    text = (DOCS / "api.md").read_text(encoding="utf-8")
    sections = re.split(r"^## \{py:mod\}`([\w.]+)`$", text, flags=re.MULTILINE)[1:]
    listed = {
        module: re.findall(r"^\| \{py:obj\}`\w+ <([\w.]+)>`", body, flags=re.MULTILINE)
        for module, body in zip(sections[::2], sections[1::2], strict=True)
    }
    for module, entries in listed.items():
        assert all(e.rpartition(".")[0] == module for e in entries), module
        if module != "gravdir":
            names = importlib.import_module(module).__all__
            assert {e.rpartition(".")[2] for e in entries} >= set(names), module


def test_every_public_name_resolves_and_is_documented():
    for name in gravdir.__all__:
        obj = getattr(gravdir, name)
        if callable(obj):
            assert obj.__doc__, name
