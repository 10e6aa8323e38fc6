"""A fuzz suite over the whole public API.

Every public callable of every module (each module's `__all__`, so the suite cannot fall behind
the API) has a valid call in one of the `fuzz_cases_*.py` files beside this one. The suite calls
it as given, then with each argument replaced in turn by a hostile variant — NaN and infinity,
empty and tiny arrays, an extra axis, a column vector, a 0-d array, lists, float32, strided and
read-only arrays, values scaled by 1e±160 (where squares underflow or overflow) and 1e±300,
constant data, complex values, numeric strings, negative, zero and huge numbers, a Python int
beyond the float range, booleans — and once with a misspelled keyword. Each outcome must be one of

* a clear error: a `ValueError` (or documented subclass) whose message names an argument in
  backticks, or a `TypeError` for a misspelled keyword;
* a result that contains no NaN, whose infinities stand only in uncertainty fields, that leaves
  every input unchanged and that the call returns again, equal, when repeated.

Anything else — another exception type, a silent NaN, complex values silently truncated to their
real part (numpy's `ComplexWarning`), a mutated input, a call over 10 s of CPU time — fails. The
time limit is CPU time of the whole process (user and system, every thread), so time spent
waiting on a busy machine does not count; run with one BLAS thread (`tests/conftest.py` sets
`OPENBLAS_NUM_THREADS=1` unless the environment says otherwise), as numpy's BLAS threads count
towards it. A test reports every failing variant of its function, not only the first.
The metamorphic relations at the end check what the maths says of the main estimators: rotating
the base rotates the result, scaling the torque scales the fit, the order of samples and points
does not matter, and a batch equals a loop.
Angles in radians given in degrees must be refused with an error ending in "degrees?" (the
`ANGLES` table). Variants that keep every value (a list, a strided or a read-only array, a scalar
as a 0-d array) must also give the valid call's result within rounding. The default profile runs
every variant above within a minute. A callable with several paths (the batched fast path of
`fit_sweep`) has a further case per path (`PATH_CASES`). `GRAVDIR_FUZZ=long` adds, per argument,
random scales from 1e-300 to 1e300 (and 1e±160 for scalars) and a NaN at a random place (seeded,
so each run is the same).
"""

from __future__ import annotations

import copy
import dataclasses
import importlib
import inspect
import math
import os
import pkgutil
import re
import signal
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import gravdir
from gravdir._results import Result

CASE_MODULES = [
    "fuzz_cases_sweep",
    "fuzz_cases_accumulator",
    "fuzz_cases_general",
    "fuzz_cases_closed_form",
    "fuzz_cases_touch",
    "fuzz_cases_kinematic_error",
    "fuzz_cases_friction",
    "fuzz_cases_foundations",
    "fuzz_cases_urdf",
    "fuzz_cases_synthetic",
    "fuzz_cases_controllers",
    "fuzz_cases_fusion",
    "fuzz_cases_accelerometer",
    "fuzz_cases_dynamics",
    "fuzz_cases_plot",
    "fuzz_cases_motion_track",
    "fuzz_cases_motion",
    "fuzz_cases_testing",
]
# The limit of one call, in CPU seconds of the process (ITIMER_PROF: user and system time of
# every thread); a call blocked without computing is stopped after WALL_SECONDS of wall time.
CALL_SECONDS = 10
WALL_SECONDS = 60
LONG = os.environ.get("GRAVDIR_FUZZ", "") == "long"
# Field names where an infinity is an honest "unknown" or "known exactly": uncertainties, bounds,
# conditions and degrees of freedom (inf: a covariance known, not estimated).
INFINITE_OK = re.compile(r"std|cov|var|condition|bound|chi2|spread|snr|margin|error|candidates|dof")


def _load_cases() -> tuple[dict[str, Callable[[], tuple[tuple, dict]]], dict[str, str]]:
    cases: dict[str, Callable[[], tuple[tuple, dict]]] = {}
    not_called: dict[str, str] = {}
    for name in CASE_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue  # the coverage test below reports what is missing
        for key in module.CASES:
            assert key not in cases, f"{key} has two cases"
        cases.update(module.CASES)
        not_called.update(getattr(module, "NOT_CALLED", {}))
        # Further calls of a public callable that take another path through it, keyed
        # "module.name[path]".
        for key in getattr(module, "PATH_CASES", {}):
            assert key not in cases and key.partition("[")[0] in module.CASES, key
        cases.update(getattr(module, "PATH_CASES", {}))
    return cases, not_called


CASES, NOT_CALLED = _load_cases()


def _public_modules() -> list[Any]:
    """gravdir and every module or package of it whose path has no private (`_`) part."""
    found = [gravdir]
    for info in pkgutil.walk_packages(gravdir.__path__, "gravdir."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            found.append(importlib.import_module(info.name))
    return found


def _public_names() -> set[str]:
    """``module.name`` of every public function and class, under the deepest public module
    whose `__all__` lists it (``gravdir.sweep.fit_sweep``, not ``gravdir.fit_sweep``)."""
    where: dict[int, str] = {}
    for module in _public_modules():
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if inspect.isfunction(obj) or inspect.isclass(obj):
                key = f"{module.__name__}.{name}"
                if id(obj) not in where or key.count(".") > where[id(obj)].count("."):
                    where[id(obj)] = key
    return set(where.values())


def _resolve(qualname: str) -> Callable[..., Any]:
    module, _, name = qualname.partition("[")[0].rpartition(".")
    return getattr(importlib.import_module(module), name)


def test_every_public_callable_has_a_case():
    public = _public_names()
    covered = {key.partition("[")[0] for key in CASES} | set(NOT_CALLED)
    assert sorted(public - covered) == []
    assert sorted(covered - public) == []
    for name, why in NOT_CALLED.items():
        obj = _resolve(name)
        # Only types a user receives (results, errors, warnings, protocols) need no call.
        assert inspect.isclass(obj) and why, name


# --------------------------------------------------------------------------------------------
# Hostile variants of an argument


def _array_variants(x: np.ndarray) -> Iterator[tuple[str, Any]]:
    if x.dtype.kind not in "fiu" or x.size == 0:
        return
    flat = x.astype(float)
    nan = flat.copy()
    nan.flat[nan.size // 2] = np.nan
    yield "nan", nan
    inf = flat.copy()
    inf.flat[0] = np.inf
    yield "inf", inf
    yield "empty", np.empty((0,) + x.shape[1:]) if x.ndim else np.empty(0)
    yield "extra axis", flat[None, ..., None]
    if x.ndim == 1:
        yield "column vector", flat[:, None]
        yield "one sample", flat[:1]
    yield "list", flat.tolist()
    yield "float32", flat.astype(np.float32)
    strided = np.repeat(flat, 2, axis=-1)[..., ::2] if x.ndim else flat
    yield "strided", strided
    ro = flat.copy()
    ro.flags.writeable = False
    yield "read-only", ro
    if x.ndim:
        yield "0-d (one value)", np.asarray(flat.flat[0])
    yield "scaled 1e300", flat * 1e300
    yield "scaled 1e-300", flat * 1e-300
    # Squares of these overflow to inf or underflow to zero: a sum of squares without scaling.
    yield "scaled 1e160", flat * 1e160
    yield "scaled 1e-160", flat * 1e-160
    yield "constant", np.full_like(flat, flat.flat[0])
    yield "complex", flat + 0.5j
    yield "numeric strings", flat.astype(str)
    if x.dtype.kind in "iu":
        yield "floats for ints", flat + 0.5


def _scalar_variants(x: Any) -> Iterator[tuple[str, Any]]:
    yield "nan", math.nan
    yield "inf", math.inf
    yield "negative", -abs(x) - 1
    yield "zero", 0 if isinstance(x, int) else 0.0
    yield "huge", 10**12 if isinstance(x, int) else 1e300
    yield "tiny", 1e-300
    yield "int beyond float", 10**400
    yield "0-d array", np.asarray(x)
    yield "complex", complex(x, 0.5)
    yield "numpy complex", np.complex128(complex(x, 0.5))
    yield "numeric string", str(x)
    yield "bool", True
    if isinstance(x, int):
        yield "float for int", x + 0.5


def _variants(value: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(value, bool | str) or value is None:
        return
    if isinstance(value, int | float | np.integer | np.floating):
        yield from _scalar_variants(value.item() if isinstance(value, np.generic) else value)
    elif isinstance(value, np.ndarray):
        yield from _array_variants(value)
    elif isinstance(value, list | tuple) and value and all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in value
    ):
        yield from _array_variants(np.asarray(value))


# --------------------------------------------------------------------------------------------
# Running one call and classifying what happens


class _Timeout(BaseException):
    """Raised in the call by the timer's signal (a BaseException: no `except Exception` of the
    code under test swallows it)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _stop(signum: int, frame: Any) -> None:
    raise _Timeout(signum)


class _Generator:
    """Stands for a random generator: drawing from it changes its state by design."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Generator | np.random.Generator)


def _without_generators(obj: Any) -> Any:
    """`obj` with generators replaced by a stand-in and rotations by their matrices (SciPy's
    `Rotation` has no value equality)."""
    from scipy.spatial.transform import Rotation

    if isinstance(obj, np.random.Generator):
        return _Generator()
    if isinstance(obj, Rotation):
        return obj.as_matrix()
    if isinstance(obj, tuple | list):
        items = [_without_generators(v) for v in obj]
        return type(obj)(*items) if hasattr(obj, "_fields") else type(obj)(items)
    if isinstance(obj, dict):
        return {k: _without_generators(v) for k, v in obj.items()}
    return obj


def _snapshot(obj: Any) -> Any:
    try:
        return copy.deepcopy(_without_generators(obj))
    except Exception:  # an object that cannot be copied is compared by identity only
        return obj


def _same(a: Any, b: Any) -> bool:
    from gravdir._results import _equal

    return _equal(_without_generators(a), _without_generators(b))


def _bad_floats(obj: Any, path: str = "", seen: set[int] | None = None) -> list[str]:
    """Paths to NaN anywhere, and to infinities outside uncertainty fields."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return []
    seen.add(id(obj))
    bad: list[str] = []
    if isinstance(obj, float | np.floating | np.ndarray):
        arr = np.asarray(obj)
        if arr.dtype.kind in "fc":
            if np.isnan(arr).any():
                bad.append(f"{path}: NaN")
            elif np.isinf(arr).any() and not INFINITE_OK.search(path):
                bad.append(f"{path}: inf")
    elif isinstance(obj, Result):
        for f in dataclasses.fields(obj):
            bad += _bad_floats(getattr(obj, f.name), f"{path}.{f.name}", seen)
        for prop in ("up_cov", "up_std_deg", "amplitude_std", "phase_std"):
            if hasattr(type(obj), prop):
                bad += _bad_floats(getattr(obj, prop), f"{path}.{prop}", seen)
    elif isinstance(obj, list | tuple):
        for i, v in enumerate(obj):
            bad += _bad_floats(v, f"{path}[{i}]", seen)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            bad += _bad_floats(v, f"{path}[{k!r}]", seen)
    return bad


def _outcome(
    func: Callable[..., Any],
    args: tuple,
    kwargs: dict,
    *,
    cpu_seconds: float = CALL_SECONDS,
    wall_seconds: float = WALL_SECONDS,
) -> tuple[str, Any]:
    """("error", exc), ("type error", exc) or ("result", value); a call over `cpu_seconds` of
    process CPU time (or `wall_seconds` of wall time), a leaked floating-point error, complex
    values truncated to their real part and a mutated input raise AssertionError."""
    before = _snapshot((args, kwargs))
    old_prof = signal.signal(signal.SIGPROF, _stop)
    old_alarm = signal.signal(signal.SIGALRM, _stop)
    signal.setitimer(signal.ITIMER_PROF, cpu_seconds)
    signal.setitimer(signal.ITIMER_REAL, wall_seconds)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # numpy warns, and keeps the real part, where complex values become floats.
            warnings.simplefilter("error", np.exceptions.ComplexWarning)
            with np.errstate(all="raise"):
                result = func(*args, **kwargs)
    except _Timeout as stop:
        what = "of CPU time" if stop.signum == signal.SIGPROF else "of wall time (blocked?)"
        limit = cpu_seconds if stop.signum == signal.SIGPROF else wall_seconds
        raise AssertionError(f"call took more than {limit:g} s {what}") from None
    except np.exceptions.ComplexWarning as exc:
        raise AssertionError(f"complex values silently truncated to reals: {exc}") from None
    except ValueError as exc:
        return "error", exc
    except TypeError as exc:
        return "type error", exc
    except FloatingPointError as exc:
        raise AssertionError(f"floating-point error leaked: {exc}") from exc
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGPROF, old_prof)
        signal.signal(signal.SIGALRM, old_alarm)
    assert _same(before, (args, kwargs)), "an input was changed in place"
    return "result", result


def _check_error(exc: BaseException, context: str) -> None:
    assert re.search(r"`[A-Za-z_][A-Za-z0-9_\[\]]*`", str(exc)), (
        f"{context}: ValueError without an argument name: {exc!r}"
    )


def _check_result(result: Any, context: str) -> None:
    bad = _bad_floats(result, "result")
    assert not bad, f"{context}: non-finite values {bad[:5]}"


def _close(a: Any, b: Any, path: str = "result") -> list[str]:
    """Paths where two results differ beyond rounding (1e-9 relative)."""
    if isinstance(a, Result) and type(a) is type(b):
        return [
            d
            for f in dataclasses.fields(a)
            for d in _close(getattr(a, f.name), getattr(b, f.name), f"{path}.{f.name}")
        ]
    if isinstance(a, list | tuple) and isinstance(b, list | tuple) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in _close(x, y, path)]
    if isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys():
        return [d for k in a for d in _close(a[k], b[k], f"{path}[{k!r}]")]
    if isinstance(a, float | np.floating | np.ndarray) or isinstance(b, np.ndarray):
        x, y = np.asarray(a), np.asarray(b)
        if x.shape != y.shape:
            return [f"{path}: shape {x.shape} != {y.shape}"]
        if x.dtype.kind in "fc" and y.dtype.kind in "fc":
            # The scale of the finite entries: an infinite one (a known covariance's degrees of
            # freedom, an undetermined direction's std) must equal its twin, not set the scale.
            top = max(1e-300, float(np.abs(x[np.isfinite(x)]).max(initial=0)))
            if path.endswith(".residual_lag1"):
                # A correlation's scale is 1, whatever its value: a fit that forms its residual
                # sum of squares from the normal equations knows it to about 1e-16 times the
                # torque's sum of squares over the residuals'.
                top = 1.0
            ok = np.allclose(x, y, rtol=1e-9, atol=1e-9 * top, equal_nan=True)
        else:
            ok = np.array_equal(x, y)
        return [] if ok else [path]
    return [] if _same(a, b) else [path]


# Variants that keep every value: the result must be the valid call's, within rounding.
SAME_VALUES = ("list", "strided", "read-only", "0-d array")


def _random_variants(value: Any, rng: np.random.Generator) -> Iterator[tuple[str, Any]]:
    """The long profile's extra variants: random scales (and 1e±160 for scalars) and a NaN at a
    random place."""
    if isinstance(value, np.ndarray) and value.dtype.kind in "fiu" and value.size:
        for _ in range(8):
            k = int(rng.integers(-300, 301))
            yield f"scaled 1e{k}", value.astype(float) * 10.0**k
        bad = value.astype(float)
        bad.flat[int(rng.integers(bad.size))] = np.nan
        yield "nan at random", bad
    elif isinstance(value, int | float) and not isinstance(value, bool):
        yield "scaled 1e160", value * 1e160
        yield "scaled 1e-160", value * 1e-160
        for _ in range(4):
            k = int(rng.integers(-300, 301))
            yield f"scaled 1e{k}", value * 10.0**k


def _mutations(args: tuple, kwargs: dict) -> Iterator[tuple[str, tuple, dict]]:
    params = [(i, None, v) for i, v in enumerate(args)] + [(None, k, v) for k, v in kwargs.items()]
    rng = np.random.default_rng(20261202)
    for index, key, value in params:
        label = f"arg {index}" if key is None else f"`{key}`"
        variants = list(_variants(value))
        if LONG:
            variants += list(_random_variants(value, rng))
        for name, variant in variants:
            a, k = list(args), dict(kwargs)
            if key is None:
                a[index] = variant
            else:
                k[key] = variant
            yield f"{label} -> {name}", tuple(a), k


# Angles in radians whose degrees must be caught: argument -> the largest magnitude that can be
# radians (two turns for a joint's positions and spans, half a turn for a tilt limit).
TWO_TURNS, HALF_TURN = 4 * np.pi, np.pi
ANGLES: dict[str, dict[str, float]] = {
    "gravdir.sweep.fit_sweep": {"q": TWO_TURNS},
    "gravdir.sweep.fit_sweep[batched fast path]": {"q": TWO_TURNS},
    "gravdir.sweep.fit_sweep_common_mode": {"q": TWO_TURNS},
    "gravdir.sweep.amplitude_phase_bound": {"q": TWO_TURNS},
    "gravdir.general.plan_sweeps": {"q": TWO_TURNS, "arcs": TWO_TURNS, "spacings": TWO_TURNS},
    "gravdir.general.sweep_samples": {"arc": TWO_TURNS},
    "gravdir.general.planned_sweep_from_chain": {"q": TWO_TURNS, "arc": TWO_TURNS},
    "gravdir.general.joint_sweep_from_chain": {"q": TWO_TURNS},
    "gravdir.general.moment_from_mass_model": {"q": TWO_TURNS},
    "gravdir.friction.excitation_trajectory": {"q_min": TWO_TURNS, "q_max": TWO_TURNS},
    "gravdir.touch.plan_touches": {"max_tilt": HALF_TURN},
    "gravdir.synthetic.touch.touch_contacts": {"max_tilt": HALF_TURN},
    "gravdir.closed_form.solve_point_mass": {"q1_at_j2": TWO_TURNS, "gamma": HALF_TURN},
    "gravdir.closed_form.solve_l2_offset": {"q1_at_j2": TWO_TURNS, "gamma": HALF_TURN},
    "gravdir.closed_form.solve_l3_offset": {"q1_at_j2": TWO_TURNS, "gamma": HALF_TURN},
    "gravdir.closed_form.solve_two_branch": {"q1_at_j2_a": TWO_TURNS, "q1_at_j2_b": TWO_TURNS},
    "gravdir.kinematics.chain_from_dh": {"alpha": TWO_TURNS, "theta_offset": TWO_TURNS},
    "gravdir.kinematics.link_frames": {"q": TWO_TURNS},
    "gravdir.frames.up_from_tilt_azimuth": {"tilt": HALF_TURN, "azimuth": TWO_TURNS},
    "gravdir.frames.up_from_canonical": {
        "theta1": TWO_TURNS,
        "theta2": HALF_TURN,
        "arm_azimuth": TWO_TURNS,
    },
    "gravdir.frames.canonical_from_up": {"arm_azimuth": TWO_TURNS},
    "gravdir.synthetic.robot.up_from_base_tilt": {"tilt": HALF_TURN, "azimuth": TWO_TURNS},
    "gravdir.synthetic.robot.random_arm": {"max_tilt": HALF_TURN},
    "gravdir.dynamics.inverse_dynamics_regressor": {"q": TWO_TURNS},
    "gravdir.accelerometer.up_from_accelerometer": {"q": TWO_TURNS},
    "gravdir.accelerometer.crlb_up_from_accelerometer": {"q": TWO_TURNS},
    "gravdir.accelerometer.plan_accelerometer_poses": {"q_limits": TWO_TURNS},
}


@pytest.mark.parametrize("qualname", sorted(ANGLES))
def test_degrees_for_radians_are_caught(qualname):
    func = _resolve(qualname)
    args, kwargs = CASES[qualname]()
    names = list(inspect.signature(func).parameters)
    for name, limit in ANGLES[qualname].items():
        a, k = list(args), dict(kwargs)
        value = k[name] if name in k else a[names.index(name)]
        radians = np.asarray(value, dtype=float)
        largest = float(np.abs(radians).max())
        if np.degrees(largest) <= limit:
            # Too small to be caught in degrees: the same angles scaled to a largest of 1 rad,
            # whose 57.3° lies beyond every limit of the table.
            radians = radians / largest if largest > 0 else np.ones_like(radians)
        degrees = np.degrees(radians)
        if isinstance(value, list | tuple):
            variant: Any = degrees.tolist()
        else:
            variant = float(degrees) if np.ndim(degrees) == 0 else degrees
        if name in k:
            k[name] = variant
        else:
            a[names.index(name)] = variant
        kind, outcome = _outcome(func, tuple(a), k)
        assert kind == "error" and "degrees?" in str(outcome), (
            f"{qualname}: `{name}` in degrees ({np.abs(degrees).max():.4g}) was not caught: "
            f"{kind} {outcome!r:.200}"
        )


def _uses_rng(args: tuple, kwargs: dict) -> bool:
    return any(isinstance(v, np.random.Generator) for v in (*args, *kwargs.values()))


def _judge(
    func: Callable[..., Any], args: tuple, kwargs: dict, where: str, valid: Any, same: bool
) -> None:
    """Raise AssertionError unless the call gives a named error or a clean result (equal to
    `valid` within rounding where `same`)."""
    try:
        kind, value = _outcome(func, args, kwargs)
    except AssertionError as exc:
        raise AssertionError(f"{where}: {exc}") from None
    except Exception as exc:  # anything but ValueError and TypeError leaked
        raise AssertionError(f"{where}: {type(exc).__name__} leaked: {exc}") from None
    if kind == "error":
        _check_error(value, where)
    elif kind == "type error":
        raise AssertionError(f"{where}: TypeError leaked: {value!r}")
    else:
        _check_result(value, where)
        if same:
            diff = _close(valid, value)
            assert not diff, f"{where}: the result changed with the representation: {diff[:5]}"


@pytest.mark.parametrize("qualname", sorted(CASES))
def test_fuzz(qualname):
    func = _resolve(qualname)
    args, kwargs = CASES[qualname]()
    kind, value = _outcome(func, args, kwargs)
    assert kind == "result", f"the valid call of {qualname} failed: {value!r}"
    _check_result(value, f"{qualname} (valid call)")
    again = _outcome(func, *CASES[qualname]())[1]
    assert _same(value, again), f"{qualname}: a repeated call gave another result"
    valid = again
    failures = []
    for context, a, k in _mutations(args, kwargs):
        same = context.endswith(SAME_VALUES) and not _uses_rng(args, kwargs)
        try:
            _judge(func, a, k, f"{qualname}, {context}", valid, same)
        except AssertionError as exc:
            failures.append(str(exc).split("\n")[0][:400])
    assert not failures, f"{len(failures)} variant(s) failed:\n" + "\n".join(failures)
    kind, value = _outcome(func, args, {**kwargs, "not_an_argument": 1})
    if inspect.signature(func).parameters and not any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in inspect.signature(func).parameters.values()
    ):
        assert kind == "type error" and "not_an_argument" in str(value), (
            f"{qualname}: a misspelled keyword was not refused: {kind} {value!r}"
        )


def test_the_harness_flags_what_it_must():
    """The classification can fail: a silent NaN, a leaked error, a mutated input, a bare error."""

    def nan_result(x):
        return np.full_like(np.asarray(x, dtype=float), np.nan)

    def leaks(x):
        return np.linalg.inv(np.zeros((2, 2)))

    def mutates(x):
        x[0] = 1.0
        return x

    def bare_error(x):
        raise ValueError("bad input")

    def named_error(x):
        raise ValueError("Expected `x` to be positive, got -1.")

    x = np.zeros(3)
    with pytest.raises(AssertionError, match="non-finite"):
        _check_result(_outcome(nan_result, (x,), {})[1], "nan")
    kind, exc = _outcome(leaks, (x,), {})  # LinAlgError is a ValueError without a name
    with pytest.raises(AssertionError, match="without an argument name"):
        _check_error(exc, "leak")
    with pytest.raises(AssertionError, match="changed in place"):
        _outcome(mutates, (x.copy(),), {})
    with pytest.raises(AssertionError, match="without an argument name"):
        _check_error(_outcome(bare_error, (x,), {})[1], "bare")
    _check_error(_outcome(named_error, (x,), {})[1], "named")
    assert _close({"a": np.ones(2)}, {"a": np.ones(2) * (1 + 1e-6)}) == ["result['a']"]


def test_the_harness_times_cpu_and_flags_truncated_complex():
    """The limit is CPU time, not wall time: a call that waits passes, one that computes does
    not; complex values cast to floats (numpy's ComplexWarning) fail."""
    import time

    def waits(x):
        time.sleep(0.3)
        return x

    def computes(x):
        end = time.process_time() + 1.0
        while time.process_time() < end:
            pass
        return x

    def truncates(x):
        return np.asarray(x).astype(np.float64)

    x = np.zeros(3)
    assert _outcome(waits, (x,), {}, cpu_seconds=0.1)[0] == "result"
    with pytest.raises(AssertionError, match="more than 0.1 s of CPU time"):
        _outcome(computes, (x,), {}, cpu_seconds=0.1)
    with pytest.raises(AssertionError, match="of wall time"):
        _outcome(waits, (x,), {}, wall_seconds=0.1)
    with pytest.raises(AssertionError, match="complex values silently truncated"):
        _outcome(truncates, (x + 0.5j,), {})
    with pytest.raises(AssertionError, match="OverflowError leaked"):
        _judge(float, (10**400,), {}, "float", None, False)


# --------------------------------------------------------------------------------------------
# Metamorphic relations: what the maths says must not change (or must change in a known way)


def _sweep_data(rng: np.random.Generator, n: int = 400) -> tuple[np.ndarray, ...]:
    half = n // 2
    fwd = np.linspace(-1.2, 1.2, half)
    q = np.concatenate([fwd, fwd[::-1]]) + rng.uniform(-1, 1)
    v = np.concatenate([np.full(half, 0.3), np.full(half, -0.3)])
    torque = (
        rng.uniform(-1, 1)
        + rng.uniform(5, 50) * np.sin(q + rng.uniform(-np.pi, np.pi))
        + rng.uniform(0.5, 2.0) * np.sign(v)
        + rng.normal(0, 0.1, n)
    )
    return q, torque, v


def _rotation(rng: np.random.Generator) -> np.ndarray:
    from scipy.spatial.transform import Rotation

    return Rotation.random(random_state=rng).as_matrix()


@pytest.mark.parametrize("seed", range(5))
def test_fit_sweep_scales_with_torque_and_ignores_sample_order(seed):
    rng = np.random.default_rng(seed)
    q, torque, v = _sweep_data(rng)
    fit = gravdir.fit_sweep(q, velocity=v, torque=torque)
    for k in (-300, -60, 60, 300):  # a power of two scales exactly
        scaled = gravdir.fit_sweep(q, velocity=v, torque=torque * 2.0**k)
        assert np.allclose(scaled.amplitude, fit.amplitude * 2.0**k, rtol=1e-12)
        assert np.allclose(scaled.amplitude_std, fit.amplitude_std * 2.0**k, rtol=1e-9)
        assert np.allclose(scaled.phase, fit.phase, rtol=0, atol=1e-12)
        assert np.allclose(scaled.phase_std, fit.phase_std, rtol=1e-9)
    order = rng.permutation(q.size)
    shuffled = gravdir.fit_sweep(q[order], velocity=v[order], torque=torque[order])
    # Every field but the diagnostic of the residuals as a series in time, which the order makes.
    assert set(_close(fit, shuffled)) <= {"result.residual_lag1", "result.effective_samples"}
    assert abs(float(shuffled.residual_lag1)) < 4 / np.sqrt(q.size)


def test_fit_sweep_batch_equals_loop():
    rng = np.random.default_rng(7)
    data = [_sweep_data(rng) for _ in range(4)]
    q, torque, v = (np.stack(x) for x in zip(*data, strict=True))
    batch = gravdir.fit_sweep(q, velocity=v, torque=torque)
    for i, (q, torque, v) in enumerate(data):
        assert not _close(batch[i], gravdir.fit_sweep(q, velocity=v, torque=torque))


@pytest.mark.parametrize("seed", range(5))
def test_plane_fit_is_rotation_equivariant_scale_and_order_invariant(seed):
    rng = np.random.default_rng(seed)
    up = gravdir.up_from_tilt_azimuth(rng.uniform(0, 0.2), rng.uniform(-np.pi, np.pi))
    basis = np.linalg.svd(up[None, :])[2][1:]
    points = rng.uniform(-0.3, 0.3, (10, 2)) @ basis + rng.normal(0, 1e-5, (10, 3))
    fit = gravdir.up_from_touch_points(points, up_hint=up)
    rot = _rotation(rng)
    turned = gravdir.up_from_touch_points(points @ rot.T, up_hint=rot @ up)
    assert np.allclose(turned.up, rot @ fit.up, atol=1e-12)
    assert np.isclose(turned.up_std_deg, fit.up_std_deg, rtol=1e-9)
    for scale in (2.0**-500, 2.0**500):
        scaled = gravdir.up_from_touch_points(points * scale, up_hint=up)
        assert np.allclose(scaled.up, fit.up, atol=1e-14)
        assert np.isclose(scaled.up_std_deg, fit.up_std_deg, rtol=1e-9)
    shuffled = gravdir.up_from_touch_points(points[rng.permutation(10)], up_hint=up)
    assert np.allclose(shuffled.up, fit.up, atol=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_directions_are_rotation_invariant_and_batch_equals_loop(seed):
    rng = np.random.default_rng(seed)
    u, w = rng.normal(size=(2, 6, 3)) * 10.0 ** rng.integers(-200, 200, (2, 6, 1))
    rot = _rotation(rng)
    angles = gravdir.angle_between(u, w)
    assert np.allclose(gravdir.angle_between(u @ rot.T, w @ rot.T), angles, atol=1e-12)
    assert np.allclose(angles, [gravdir.angle_between(a, b) for a, b in zip(u, w, strict=True)])
    tilts = gravdir.tilt_from_up(u, normalize=True)
    assert np.array_equal(tilts, [gravdir.tilt_from_up(a, normalize=True) for a in u])


@pytest.mark.parametrize("seed", range(3))
def test_friction_fit_scales_with_torque(seed):
    rng = np.random.default_rng(seed)
    velocity = np.concatenate([np.linspace(0.05, 1.0, 200), -np.linspace(0.05, 1.0, 200)])
    torque = 2.0 * np.sign(velocity) + 0.8 * velocity + rng.normal(0, 0.02, velocity.size)
    fit = gravdir.fit_friction(velocity, torque=torque, model="coulomb-viscous")
    for k in (-300, 300):
        scaled = gravdir.fit_friction(velocity, torque=torque * 2.0**k, model="coulomb-viscous")
        assert np.allclose(scaled.parameters, fit.parameters * 2.0**k, rtol=1e-12)
        assert np.allclose(scaled.parameters_std, fit.parameters_std * 2.0**k, rtol=1e-9)
