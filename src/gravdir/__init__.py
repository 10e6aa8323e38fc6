"""gravdir: calibrate robot arms from their own sensors.

Public names are re-exported here from the modules that define them: what a calibration pipeline
calls and the result types it receives (the rule and the table are in ``docs/api.md``). Building
blocks stay importable from their modules.

The names are imported on first use (``import gravdir`` loads none of the estimators, and no
heavy SciPy submodule). They are listed once, in the stub ``__init__.pyi`` beside this file, a
line ``from .module import name as name`` each: type checkers and IDEs read the stub, and through
it the signature of each name where it is defined; at import time this module reads the same
lines into the table of where each name is imported from, and ``__all__``. To add a public name,
add its line to the stub and regenerate ``docs/api.md`` (``python tools/gen_api.py``);
``tests/test_public_names.py`` checks that the stub, the modules and the table agree.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import os
from typing import Any

from gravdir._imports import IMPORT_LOCK

__version__ = "0.1.0"


def _read_stub() -> dict[str, tuple[str, str]]:
    """Public name -> (module, attribute) from the ``from .module import a as b`` lines of the
    stub ``__init__.pyi``: the table ``lazy_loader.attach_stub`` builds, in a few lines.

    >>> _read_stub()["fit_sweep"]
    ('gravdir.sweep', 'fit_sweep')
    >>> _read_stub()["STANDARD_GRAVITY"]
    ('gravdir._constants', 'STANDARD_GRAVITY')
    """
    stub = os.path.splitext(__file__)[0] + ".pyi"
    with open(stub, encoding="utf-8") as f:
        tree = ast.parse(f.read(), stub)
    table: dict[str, tuple[str, str]] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            module = importlib.util.resolve_name("." * node.level + (node.module or ""), __name__)
            for alias in node.names:
                table[alias.asname or alias.name] = (module, alias.name)
    return table


_EXPORTS = _read_stub()
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """Import a public name's module on first access of the name (PEP 562).

    Subpackages (``gravdir.sweep``, ``gravdir.plot``, ...) are imported on first access too,
    as ``import gravdir.sweep`` would. The imports run under gravdir's import lock
    (:mod:`gravdir._imports`), which makes concurrent first accesses from several threads safe.
    """
    target = _EXPORTS.get(name)
    if target is not None:
        module, attribute = target
        with IMPORT_LOCK:
            value = getattr(importlib.import_module(module), attribute)
        globals()[name] = value
        return value
    if not name.startswith("_") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
        with IMPORT_LOCK:
            return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
