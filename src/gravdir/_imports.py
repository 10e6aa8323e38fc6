"""One lock for gravdir's deferred imports.

``import gravdir`` loads SciPy's slower submodules (``scipy.optimize``, ``scipy.stats``,
``scipy.spatial.transform``, ...) and gravdir's own subpackages only when they are first needed.
Python's per-module import locks do not make such first imports safe when several threads race
to trigger them: SciPy's packages import each other circularly (``scipy.linalg`` and
``scipy.linalg.lapack``, for one), and two threads entering such a cycle from different ends get
``ImportError`` ("deadlock detected by _ModuleLock" or "partially initialized module"). Every
deferred import in gravdir therefore runs under :data:`IMPORT_LOCK`, so at most one of them runs
at a time; a re-entrant lock, because one deferred import can trigger another in the same thread.
"""

from __future__ import annotations

import threading

__all__ = ["IMPORT_LOCK"]

IMPORT_LOCK = threading.RLock()
