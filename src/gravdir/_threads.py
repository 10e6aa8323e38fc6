"""One BLAS thread inside the estimators that make many small BLAS calls.

The motion estimator and the tracker make thousands of BLAS and LAPACK calls on matrices of tens
to a few hundred rows (eigendecompositions of the normal matrices, Gram products of chunks of a
log). With OpenBLAS's default threads and another CPU-bound process beside it, such a call took
two to eight times as long as with one thread on the two-core machine of the *Performance* page
("Threads", ``benchmarks/threads.py``). With ``threadpoolctl`` installed (the ``threads``
extra), :func:`one_blas_thread` limits the BLAS libraries NumPy and SciPy have loaded to one
thread for the duration of such a call and then restores the limits the process had; without
it, it does nothing. Setting the environment variable ``GRAVDIR_BLAS_THREADS`` to ``keep``
leaves the limits alone.

The limit holds for the whole process while it lasts: BLAS calls that other threads make
meanwhile run on one thread too. It is set only for calls from the main thread:
threadpoolctl is documented for BLAS called from the main Python thread only, and with the
OpenBLAS that NumPy ships a setting made in another thread is not what the main thread reads
back, so limits set and restored from several threads could be left behind. Nested calls share
the outermost call's limit.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from typing import Any

from gravdir._imports import IMPORT_LOCK

# The environment variable that leaves the BLAS thread limits alone, and its value.
ENV = "GRAVDIR_BLAS_THREADS"
KEEP = "keep"

_lock = threading.Lock()
_state: dict[str, Any] = {"depth": 0, "limiter": None, "controller": None}


def _controller() -> Any:
    """threadpoolctl's controller of the BLAS libraries loaded, built once (None without
    threadpoolctl). SciPy's own OpenBLAS is loaded first, so that it is among them."""
    if _state["controller"] is None:
        with IMPORT_LOCK:
            try:
                import scipy.linalg  # noqa: F401  (loads SciPy's BLAS)
                from threadpoolctl import ThreadpoolController  # type: ignore[import-untyped, import-not-found, unused-ignore]
            except ImportError:
                _state["controller"] = False
                return None
            _state["controller"] = ThreadpoolController()
    return _state["controller"] or None


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """Within the block, BLAS runs on one thread (see the module's docstring)."""
    if (
        os.environ.get(ENV, "").strip().lower() == KEEP
        or threading.current_thread() is not threading.main_thread()
    ):
        yield
        return
    with _lock:
        controller = _controller()
        if controller is None:
            limited = False
        else:
            if _state["depth"] == 0:
                _state["limiter"] = controller.limit(limits=1, user_api="blas")
            _state["depth"] += 1
            limited = True
    try:
        yield
    finally:
        if limited:
            with _lock:
                _state["depth"] -= 1
                if _state["depth"] == 0:
                    _state["limiter"].restore_original_limits()
                    _state["limiter"] = None

