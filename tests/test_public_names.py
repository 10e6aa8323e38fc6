"""The one list of public names, ``src/gravdir/__init__.pyi``, against what reads it: the modules
that define the names, ``gravdir`` at run time, ``docs/api.md`` and a type checker."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from _tools import load_tool

import gravdir

PACKAGE = Path(gravdir.__file__).resolve().parent
STUB = PACKAGE / "__init__.pyi"
ROOT = Path(__file__).resolve().parent.parent


def _stub_lines() -> list[tuple[str, str, str]]:
    """(module, attribute, public name) of each import of the stub, in its order."""
    found = []
    for node in ast.parse(STUB.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom):
            module = importlib.util.resolve_name("." * node.level + (node.module or ""), "gravdir")
            found += [(module, a.name, a.asname or a.name) for a in node.names]
    return found


def test_stub_holds_only_explicit_re_exports_and_the_version():
    """Each import is ``from .module import name as name`` (the redundant alias makes it a
    re-export for type checkers); the one other statement declares ``__version__``."""
    others = []
    for node in ast.parse(STUB.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom):
            assert node.level == 1, ast.unparse(node)
            for alias in node.names:
                assert alias.asname == alias.name, ast.unparse(node)
        else:
            others.append(ast.unparse(node))
    assert others == ["__version__: str"]


def test_stub_is_all_and_the_run_time_table():
    lines = _stub_lines()
    names = [name for _, _, name in lines]
    assert len(names) == len(set(names)), "a name listed twice"
    assert gravdir.__all__ == sorted(names)
    table = {name: (module, attr) for module, attr, name in lines}
    assert table == gravdir._EXPORTS
    assert "__version__" not in gravdir.__all__
    assert isinstance(gravdir.__version__, str)


@pytest.mark.parametrize(("module", "attribute", "name"), _stub_lines())
def test_every_stub_name_is_public_in_its_module_and_resolves(module, attribute, name):
    """The stub re-exports a name its module lists in ``__all__``, and ``gravdir.<name>`` is that
    very object."""
    defining = importlib.import_module(module)
    assert attribute in defining.__all__, f"{module}.__all__ lacks {attribute}"
    assert getattr(gravdir, name) is getattr(defining, attribute)


def test_stub_sections_are_subpackages_or_the_constants():
    """Names come from gravdir's public modules, except the constants of ``gravdir._constants``."""
    modules = {module for module, _, _ in _stub_lines()}
    private = {m for m in modules if any(p.startswith("_") for p in m.split("."))}
    assert private == {"gravdir._constants"}


def test_errors_and_warnings_are_at_the_top_level():
    """``docs/api.md``: the errors and warnings of ``gravdir.errors`` are re-exported."""
    import gravdir.errors

    assert set(gravdir.errors.__all__) <= set(gravdir.__all__)


def test_stub_ships_as_package_data():
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    section = text.split("[tool.setuptools.package-data]", 1)[1].split("\n[", 1)[0]
    assert '"__init__.pyi"' in section and '"py.typed"' in section


def test_api_page_is_generated_from_the_stub():
    """``docs/api.md`` below its marker is what ``tools/gen_api.py`` writes now."""
    gen_api = load_tool("gen_api")
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    assert gen_api.render(text) == text, "docs/api.md is out of date: run python tools/gen_api.py"
    rows = re.findall(
        r"^\| \{py:obj\}`(\w+) <([\w.]+)>` \| (\w+) \| (.+) \|$", text, flags=re.MULTILINE
    )
    # Every public name once: the stub's, then each public module's building blocks.
    dotted = [entry for _, entry, _, _ in rows]
    assert sorted(dotted) == sorted(set(gen_api.stub_names()) | set(gen_api.every_name()))
    assert len(dotted) == len(set(dotted))
    # Each name links to its reference entry, in the public module that defines it.
    entries = {name: entry for name, entry, _, _ in rows if entry in gen_api.stub_names()}
    assert sorted(entries) == gravdir.__all__
    assert entries["fit_sweep"] == "gravdir.sweep.fit_sweep"
    assert entries["STANDARD_GRAVITY"] == "gravdir.STANDARD_GRAVITY"
    for name, entry in entries.items():
        module, _, attribute = entry.rpartition(".")
        assert attribute == name
        assert getattr(importlib.import_module(module), name) is getattr(gravdir, name)
    for _, entry, _, _ in rows:
        module, _, attribute = entry.rpartition(".")
        assert getattr(importlib.import_module(module), attribute) is not None
    assert "gravdir.sweep.wrap_angle" in dotted and "wrap_angle" not in gravdir.__all__
    kinds = {name: kind for name, entry, kind, _ in rows if entry in entries.values()}
    assert kinds["fit_sweep"] == "function"
    assert kinds["SweepFit"] == "result"
    assert kinds["SweepAccumulator"] == "class"
    assert kinds["DegenerateGeometryError"] == "error"
    assert kinds["ConvergenceWarning"] == "warning"
    assert kinds["STANDARD_GRAVITY"] == "constant"
    assert all(summary.strip() for _, _, _, summary in rows)


def _mypy(tmp_path: Path, *targets: str) -> subprocess.CompletedProcess[str]:
    """Run ``mypy --strict`` from `tmp_path` (no project configuration) on `targets`, silent on
    the modules they import (from a source checkout mypy would report SciPy's missing stubs)."""
    pytest.importorskip("mypy", reason="mypy (in the `test` extra) is not installed")
    env = dict(os.environ)
    if PACKAGE.parent.name != "site-packages":  # a source checkout: show mypy where gravdir is
        env["MYPYPATH"] = str(PACKAGE.parent)
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent"]
        + ["--cache-dir", str(tmp_path / "cache"), *targets],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=600,
    )


@pytest.mark.slow
def test_type_checker_sees_each_names_own_signature(tmp_path):
    """mypy reads the stub: ``gravdir.fit_sweep`` has the signature of its definition (a wrong
    keyword is an error, not ``Any``), and every public name is an explicit re-export (``--strict``
    implies ``--no-implicit-reexport``)."""
    snippet = tmp_path / "uses_gravdir.py"
    snippet.write_text(
        "import gravdir\n"
        f"from gravdir import {', '.join(gravdir.__all__)}\n"
        "reveal_type(gravdir.fit_sweep)\n"
        "reveal_type(gravdir.__version__)\n"
        "gravdir.fit_sweep([0.0, 1.0], velocity=[0.1, 0.1], torque=[0, 1], no_such_keyword=1)\n",
        encoding="utf-8",
    )
    run = _mypy(tmp_path, snippet.name)
    errors = [line for line in run.stdout.splitlines() if ": error:" in line]
    assert errors == [
        'uses_gravdir.py:5: error: Unexpected keyword argument "no_such_keyword" for "fit_sweep"'
        "  [call-arg]"
    ], run.stdout + run.stderr
    revealed = re.findall(r'Revealed type is "(.*)"', run.stdout)
    assert re.fullmatch(
        r"def \(q: .+, \*, velocity: .+, acceleration: .+, torque: .+, min_speed: .+\)"
        r" -> gravdir\.sweep\.[\w.]*SweepFit",
        revealed[0],
    ), revealed[0]
    assert revealed[1] in ("str", "builtins.str")  # the spelling varies with mypy's version


@pytest.mark.slow
def test_run_time_loader_type_checks(tmp_path):
    """``mypy --strict src`` reads the stub in place of ``__init__.py``: the loader itself is
    checked here, by its path."""
    run = _mypy(tmp_path, str(PACKAGE / "__init__.py"))
    assert run.returncode == 0, run.stdout + run.stderr
