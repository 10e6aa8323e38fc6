# %% [markdown]
# # Hot paths against a 1 kHz cycle, and the time of `import gravdir`
#
# A controller running at 1 kHz has 1 ms per cycle. Printed, each with its share of that cycle:
#
# 1. **Import time.** `import gravdir` against `import numpy, scipy.linalg` (what any numerical
#    Python program pays anyway), each in a fresh interpreter, the two alternated over many
#    repetitions and compared by their medians, so that a change of the machine's load affects
#    both alike. Also timed in the same alternation: `from gravdir import` three estimators (the
#    modules behind them load on that first access), every public name resolved, and -- with
#    `--before REF` (default: the last commit before the imports became lazy, when the
#    repository has it) -- `import gravdir` of that commit's sources, extracted with
#    `git archive` into a temporary directory.
# 2. **Single-angle correction.** `KinematicErrorModel.correction` on one Python float (the call a
#    position loop makes each cycle), on a 0-d array (the array path), and on 1000 angles.
# 3. **Streaming sweep fit.** `SweepAccumulator.add` per sample, per chunk of 10 and amortised
#    over chunks of 1000, and `fit()`; the tables of `benchmarks/accumulator.py` show that the
#    cost per sample and the memory stay flat in the number of samples.
# 4. **Batch sweep fit.** One `fit_sweep` on 500 samples (`benchmarks/sweep_fit.py` compares it
#    with `scipy.optimize.curve_fit`).
#
# Latencies are medians of repeated timed loops (`timeit`, median of the per-call time of each
# repeat); the machine may be shared, so the load average is printed before and after.
# Run: `python benchmarks/hot_paths.py [--repeats N] [--before REF | --no-before]`.

# %%
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import timeit
from pathlib import Path
from typing import Any

import numpy as np

CYCLE = 1e-3  # seconds: one cycle of a 1 kHz controller
ROOT = Path(__file__).resolve().parents[1]
#: The last commit whose `import gravdir` loaded every estimator (and scipy.stats,
#: scipy.optimize, scipy.signal): the "before" of the import-time figure.
BEFORE_REF = "b08c51e"

IMPORTS = {
    "numpy + scipy.linalg": "import numpy, scipy.linalg",
    "import gravdir": "import gravdir",
    "from gravdir import fit_sweep, estimate_up, KinematicErrorModel": (
        "from gravdir import fit_sweep, estimate_up, KinematicErrorModel"
    ),
    "gravdir, every public name resolved": (
        "import gravdir\nfor n in gravdir.__all__: getattr(gravdir, n)"
    ),
}


def share(seconds: float) -> str:
    return f"{100 * seconds / CYCLE:6.2f}% of 1 ms"


def per_call(stmt: str, namespace: dict[str, object], number: int, repeat: int = 7) -> float:
    """Median over `repeat` loops of the time per call of `stmt` (seconds)."""
    times = timeit.repeat(stmt, globals=namespace, number=number, repeat=repeat)
    return statistics.median(times) / number


def extract_before(ref: str, into: Path) -> Path | None:
    """The `src` tree of commit `ref` under `into` (read-only use of the repository)."""
    try:
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", ref, "src"],
            capture_output=True,
            check=True,
            timeout=60,
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    return into / "src"


def import_times(repeats: int, before: Path | None, pycache: Path | None) -> dict[str, float]:
    """Median wall time of each statement of `IMPORTS` in a fresh interpreter, alternated.

    With `pycache`, bytecode is written to and read from that directory (``PYTHONPYCACHEPREFIX``)
    and every statement runs once before the timed runs, as for an installed package whose
    bytecode is compiled; without it, ``PYTHONDONTWRITEBYTECODE=1`` and a module without a
    ``__pycache__`` next to its source is compiled at every import.
    """
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    env.pop("PYTHONPATH", None)
    if pycache is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(pycache)
    else:
        env.pop("PYTHONPYCACHEPREFIX", None)
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    cases = [(label, code, env) for label, code in IMPORTS.items()]
    if before is not None:
        before_env = dict(env, PYTHONPATH=str(before))
        cases.append((f"import gravdir at {BEFORE_REF} (before)", "import gravdir", before_env))
    if pycache is not None:
        for _, code, case_env in cases:
            subprocess.run([sys.executable, "-c", code], env=case_env, check=True)
    samples: dict[str, list[float]] = {label: [] for label, _, _ in cases}
    for _ in range(repeats):
        for label, code, case_env in cases:
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], env=case_env, check=True)
            samples[label].append(time.perf_counter() - t0)
    return {label: statistics.median(values) for label, values in samples.items()}


def print_import_times(times: dict[str, float], repeats: int, title: str) -> None:
    base = times["numpy + scipy.linalg"]
    print(f"\nimport time, {title}: fresh interpreter, median of {repeats} alternated runs")
    for label, t in times.items():
        print(f"  {label:64s} {t * 1e3:7.1f} ms  {t / base:5.2f}x numpy + scipy.linalg")


def correction_model(rng: np.random.Generator) -> Any:
    """A kinematic-error model on the default basis of a harmonic drive with 100 and 102 teeth."""
    from gravdir import KinematicErrorModel, harmonic_drive_orders

    orders = harmonic_drive_orders(100, 102)
    return KinematicErrorModel(orders, rng.uniform(-1e-3, 1e-3, (orders.size, 2)))


def correction_latency() -> None:
    rng = np.random.default_rng(3)
    model = correction_model(rng)
    orders = model.orders
    ns: dict[str, object] = {
        "m": model,
        "x": 0.7312,
        "a0": np.array(0.7312),
        "many": rng.uniform(-50, 50, 1000),
    }
    print(f"\nKinematicErrorModel.correction, {orders.size} orders")
    one = per_call("m.correction(x)", ns, 20_000)
    arr = per_call("m.correction(a0)", ns, 2_000)
    thousand = per_call("m.correction(many)", ns, 200)
    print(f"  one float angle  : {one * 1e6:7.2f} us  ({share(one)})   target <= 3 us")
    print(f"  one 0-d array    : {arr * 1e6:7.2f} us  ({share(arr)})")
    print(f"  1000 angles      : {thousand * 1e6:7.2f} us  ({thousand / 1000 * 1e9:.1f} ns/angle)")
    x = 0.7312
    fast, slow = float(model.correction(x)), float(model.correction(np.array(x)))
    print(f"  float path - array path: {abs(fast - slow):.1e} rad")


def sweep_data(
    n: int, seed: int = 1, per_pass: int = 500
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Back-and-forth passes of `per_pass` samples each way over 120 degrees, noisy torque."""
    rng = np.random.default_rng(seed)
    s = np.linspace(0.0, 1.0, per_pass)
    one = np.radians(120.0) * (s - np.sin(2 * np.pi * s) / (2 * np.pi)) - np.radians(60.0)
    speed = 0.4 * (1 - np.cos(2 * np.pi * s))
    reps = -(-n // (2 * per_pass))
    q = np.tile(np.concatenate([one, one[::-1]]), reps)[:n]
    v = np.tile(np.concatenate([speed, -speed[::-1]]), reps)[:n]
    torque = 0.2 + 5.0 * np.sin(q + 0.4) + 0.3 * np.sign(v) + 0.1 * v + rng.normal(0, 0.02, n)
    return q, torque, v


def accumulator_latency() -> None:
    import gravdir

    if "SweepAccumulator" not in gravdir.__all__:
        print("\nSweepAccumulator: not available in this version (see benchmarks/accumulator.py)")
        return
    from gravdir import SweepAccumulator

    print("\nSweepAccumulator (min_speed=0.05, default options)")
    rows = (
        (1, 20_000, "per sample        "),
        (10, 2_000, "per chunk of 10   "),
        (1000, 40, "per chunk of 1000 "),
    )
    for chunk, n_chunks, label in rows:
        q, torque, v = sweep_data(chunk * n_chunks)
        chunks = [
            (q[i : i + chunk], torque[i : i + chunk], v[i : i + chunk])
            for i in range(0, q.size, chunk)
        ]
        if chunk == 1:  # one sample as Python floats, as a control loop has it
            chunks = [(float(a[0]), float(b[0]), float(c[0])) for a, b, c in chunks]
        runs = []
        for _ in range(5):  # the mean over all chunks includes the periodic block folds
            acc = SweepAccumulator(min_speed=0.05)
            t0 = time.perf_counter()
            for a, b, c in chunks:
                acc.add(a, velocity=c, torque=b)
            runs.append((time.perf_counter() - t0) / n_chunks)
        t = statistics.median(runs)
        print(
            f"  add {label}: {t * 1e6:8.2f} us/call ({share(t)}), {t / chunk * 1e6:7.3f} us/sample"
        )
    q, torque, v = sweep_data(10_000)
    acc = SweepAccumulator(min_speed=0.05)
    acc.add(q, velocity=v, torque=torque)
    acc.fit()
    t_fit = per_call("acc.fit()", {"acc": acc}, 200)
    print(f"  fit() after 10^4 samples: {t_fit * 1e6:8.1f} us ({share(t_fit)})")
    print("  targets: <= 20 us per chunk of 10, <= 2 us per sample over chunks of 1000")


def fit_sweep_latency() -> None:
    from gravdir import fit_sweep

    q, torque, v = sweep_data(500, seed=2, per_pass=250)
    t = per_call(
        "fit_sweep(q, velocity=v, torque=torque)",
        {"fit_sweep": fit_sweep, "q": q, "torque": torque, "v": v},
        300,
    )
    print(f"\nfit_sweep, one sweep of 500 samples: {t * 1e6:8.1f} us ({share(t)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=21, help="fresh interpreters per import")
    parser.add_argument("--before", default=BEFORE_REF, help="git commit of the 'before' import")
    parser.add_argument("--no-before", action="store_true", help="skip the 'before' import")
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, {os.cpu_count()} CPUs")
    print(f"load average (1, 5, 15 min): {os.getloadavg()}")
    with tempfile.TemporaryDirectory() as tmp:
        before = None if args.no_before else extract_before(args.before, Path(tmp))
        if not args.no_before and before is None:
            print(f"(commit {args.before} not found: no 'before' import time)")
        cached = import_times(args.repeats, before, Path(tmp) / "pycache")
        uncached = import_times(args.repeats, before, None)
    print_import_times(cached, args.repeats, "bytecode compiled (as installed)")
    print_import_times(uncached, args.repeats, "PYTHONDONTWRITEBYTECODE=1, no bytecode of gravdir")
    print("  target: import gravdir <= 1.5x numpy + scipy.linalg")
    correction_latency()
    accumulator_latency()
    fit_sweep_latency()
    print(f"\nload average (1, 5, 15 min): {os.getloadavg()}")


if __name__ == "__main__":
    main()
