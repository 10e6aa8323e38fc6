"""Shared test configuration: a deterministic hypothesis profile and the `geometry` marker."""

import inspect
import re

import pytest
from hypothesis import HealthCheck, settings

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
    r"DegenerateGeometryError|degenera|undetermined|not determined|rank|collinear"
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
