"""Shared test configuration: one BLAS thread, a deterministic hypothesis profile and the
`geometry` marker."""

import os

# One BLAS thread unless the environment says otherwise. It must be set before numpy is first
# imported (OpenBLAS reads it when it loads), which this file is: pytest loads it before it
# collects any test module. The fuzz suite's time limit is CPU time of the whole process, which
# counts every BLAS thread; with one thread it measures the work of the call, on any machine.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import inspect  # noqa: E402
import re  # noqa: E402

import pytest  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

settings.register_profile(
    "gravdir",
    derandomize=True,
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.load_profile("gravdir")


# Degenerate-geometry tests are marked `geometry` by rule, so none can be forgotten: a test whose
# source expects `DegenerateGeometryError` or speaks of a degenerate, undetermined or
# rank-deficient case. CI runs them under several OpenBLAS kernels (`.ci/run`).
_GEOMETRY_WORDS = re.compile(
    r"DegenerateGeometryError|degenera|undetermined|not determined|\brank|collinear"
    r"|reciprocal_condition"
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        func = getattr(item, "function", None)
        if func is None:
            continue
        try:
            source = inspect.getsource(func)
        except (OSError, TypeError):
            continue
        if _GEOMETRY_WORDS.search(source) or _GEOMETRY_WORDS.search(item.name):
            item.add_marker(pytest.mark.geometry)
