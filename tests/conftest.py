"""Shared test configuration: a deterministic hypothesis profile."""

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
