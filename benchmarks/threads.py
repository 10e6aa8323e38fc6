"""Benchmark: default BLAS threads against one thread, on an idle and on a loaded machine.

Every call of ``benchmarks/motion.py --cost`` (``estimate_up_from_motion`` and ``track_up`` on a
60 s, 100 Hz six-joint log and on a 20 s, 1 kHz seven-joint log) and of
``benchmarks/hot_paths.py`` (``KinematicErrorModel.correction`` of one angle and of 1000,
``SweepAccumulator.add`` of chunks of 10 and of 1000 samples and its ``fit()``, ``fit_sweep`` of
one 500-sample sweep) is timed in a fresh interpreter with OpenBLAS's default threads (the
variable unset) and with ``OPENBLAS_NUM_THREADS=1``, each on an idle machine and with a second
CPU-bound process running beside it ("loaded": a Python loop, started before the interpreter
and stopped after it). The four settings are run in turn, three rounds, and each call's wall time
is the median over the rounds of its median within a round. Printed: the ratio of default threads
to one thread, loaded and idle; the target is at most 1.25 loaded and no slower idle.

``GRAVDIR_BLAS_THREADS=keep python benchmarks/threads.py`` measures the library without its
one-thread limit (``gravdir._threads``).

Run: ``python benchmarks/threads.py [rounds]`` (about ten minutes on two cores).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def child() -> None:
    """Time every call in this interpreter; print {call: seconds} as JSON."""
    import warnings

    import numpy as np

    sys.path.insert(0, str(HERE))
    import hot_paths  # its data and timer
    import motion  # the logs of benchmarks/motion.py --cost

    from gravdir import SweepAccumulator, estimate_up_from_motion, fit_sweep
    from gravdir.motion import track_up

    warnings.simplefilter("ignore")
    out: dict[str, float] = {}

    def wall(label: str, call: object, repeats: int = 3) -> None:
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            call()  # type: ignore[operator]
            times.append(time.perf_counter() - t0)
        out[label] = float(np.median(times))

    logs = {
        "100 Hz, 6 joints, 60 s": motion._ur_log(60.0, 100.0),
        "1 kHz, 7 joints, 20 s": motion._seven_joint_log(20.0, 1000.0),
    }
    motion.warm_up()
    for label, (chain, (t, q, qd, tau)) in logs.items():
        fit = estimate_up_from_motion(chain, t, q=q, velocity=qd, torque=tau)  # type: ignore[arg-type]
        wall(
            f"estimate_up_from_motion, {label}",
            lambda: estimate_up_from_motion(chain, t, q=q, velocity=qd, torque=tau),  # noqa: B023
            repeats=1,
        )
        wall(f"track_up, {label}", lambda: track_up(fit, t, q=q, velocity=qd, torque=tau))  # noqa: B023

    # The data of benchmarks/hot_paths.py.
    rng = np.random.default_rng(3)
    model = hot_paths.correction_model(rng)
    q, torque, v = hot_paths.sweep_data(10_000)
    acc = SweepAccumulator(min_speed=0.05)
    acc.add(q, velocity=v, torque=torque)
    sq, st, sv = hot_paths.sweep_data(500, seed=2, per_pass=250)
    namespace: dict[str, object] = {
        "m": model, "x": 0.7312, "many": rng.uniform(-50, 50, 1000), "acc": acc, "q": q,
        "v": v, "t": torque, "fit_sweep": fit_sweep, "sq": sq, "sv": sv, "st": st,
    }  # fmt: skip
    calls = {
        "correction, one float": ("m.correction(x)", 20_000),
        "correction, 1000 angles": ("m.correction(many)", 200),
        "SweepAccumulator.add, chunk of 10": (
            "acc.add(q[:10], velocity=v[:10], torque=t[:10])", 2_000,
        ),
        "SweepAccumulator.add, chunk of 1000": (
            "acc.add(q[:1000], velocity=v[:1000], torque=t[:1000])", 40,
        ),
        "SweepAccumulator.fit()": ("acc.fit()", 200),
        "fit_sweep, one sweep of 500 samples": ("fit_sweep(sq, velocity=sv, torque=st)", 300),
    }  # fmt: skip
    for label, (stmt, number) in calls.items():
        out[label] = hot_paths.per_call(stmt, namespace, number)
    print(json.dumps(out))


def run(threads: str | None, loaded: bool) -> dict[str, float]:
    env = dict(os.environ)
    env.pop("OPENBLAS_NUM_THREADS", None)
    env.pop("OMP_NUM_THREADS", None)
    if threads is not None:
        env["OPENBLAS_NUM_THREADS"] = threads
    burner = None
    if loaded:
        burner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        time.sleep(0.5)
    try:
        done = subprocess.run(
            [sys.executable, __file__, "--child"], env=env, capture_output=True, text=True,
            check=True,
        )  # fmt: skip
    finally:
        if burner is not None:
            burner.kill()
            burner.wait()
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    settings = [(None, True), ("1", True), (None, False), ("1", False)]
    results: dict[tuple[str | None, bool], list[dict[str, float]]] = {s: [] for s in settings}
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()}, "
          f"GRAVDIR_BLAS_THREADS={os.environ.get('GRAVDIR_BLAS_THREADS')}")  # fmt: skip
    for _ in range(rounds):
        for s in settings:
            results[s].append(run(*s))
    import statistics

    def median(s: tuple[str | None, bool], call: str) -> float:
        return statistics.median(r[call] for r in results[s])

    calls = list(results[settings[0]][0])
    print(f"\nwall time, default threads / OPENBLAS_NUM_THREADS=1 (medians of {rounds} rounds)")
    print(f"  {'call':52s} {'loaded':>8s} {'idle':>8s}   one thread, loaded")
    worst = 0.0
    for call in calls:
        loaded = median((None, True), call) / median(("1", True), call)
        idle = median((None, False), call) / median(("1", False), call)
        worst = max(worst, loaded)
        one = median(("1", True), call)
        shown = f"{one:.3g} s" if one >= 1e-3 else f"{one * 1e6:.3g} us"
        print(f"  {call:52s} {loaded:8.2f} {idle:8.2f}   {shown}")
    print(f"  largest loaded ratio {worst:.2f} (target <= 1.25)")


if __name__ == "__main__":
    if "--child" in sys.argv:
        child()
    else:
        main()
