"""Valid calls of `gravdir.sweep.SweepAccumulator` for the fuzz suite (tests/test_fuzz.py).

The factory returns the options of one valid accumulator; the suite then replaces each option in
turn by hostile variants (the constructor refuses each with a ValueError naming it). Its `add`
and `fit` are exercised on bad input, and its merges (`a + b`: of different options or batch
shapes, of an accumulator with itself or its copy, of accumulators that share samples) in
tests/test_accumulator.py: the suite calls public callables with arguments, not operators.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def _accumulator() -> tuple[tuple[Any, ...], dict[str, Any]]:
    kwargs = dict(
        min_speed=0.05,
        friction="auto",
        load_friction="signed",
        harmonics=[3.0],
        inertia=True,
        min_arc=0.5,
        single_speed_rtol=1e-6,
        torque_sign=1,
        nan_policy="omit",
    )
    return (), kwargs


CASES: dict[str, Callable[[], tuple[tuple[Any, ...], dict[str, Any]]]] = {
    "gravdir.sweep.SweepAccumulator": _accumulator,
}
