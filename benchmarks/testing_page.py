# %% [markdown]
# # How long the property tests of `docs/testing.md` take to catch a halved covariance
#
# The page's Python blocks are written verbatim into a temporary directory of their own (an
# empty `pytest.ini`, none of this repository's conftest or options) with a wrapper that halves
# the covariance `calibrate` reports, and pytest runs the honesty test in a fresh interpreter.
# Printed: the wall time of that failing run as the page sets it up (no shrink phase), and of
# the same test with hypothesis's shrink phase left on, each the median of `--repeats` runs,
# with the machine's load average (it may be shared). Also the correct wrapper's two tests.
# Run: `python benchmarks/testing_page.py [--repeats N] [--seed S]`.

# %%
from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "testing.md"
NO_SHRINK = ", phases=[Phase.explicit, Phase.reuse, Phase.generate]"
HALVED = """

_calibrate = calibrate


def calibrate(exp):
    up, cov, tilt, azimuth = _calibrate(exp)
    return up, 0.5 * cov, tilt, azimuth
"""


def page_code() -> str:
    text = PAGE.read_text(encoding="utf-8")
    return "\n\n".join(re.findall(r"^```python\n(.*?)^```", text, re.S | re.M))


def timed_run(code: str, seed: int, *args: str) -> tuple[float, str]:
    """Wall time and outcome line of pytest on `code` in a fresh directory and interpreter."""
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
        Path(folder, "test_page.py").write_text(code, encoding="utf-8")
        start = time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
             f"--hypothesis-seed={seed}", "test_page.py", *args],
            cwd=folder, capture_output=True, text=True, check=False,
            env={**os.environ, "OPENBLAS_NUM_THREADS": "1"},
        )
        elapsed = time.perf_counter() - start
    lines = out.stdout.strip().splitlines()
    return elapsed, (lines[-1] if lines else out.stderr.strip()[-200:])


def main() -> None:
    parser = argparse.ArgumentParser(description="Time the property tests of docs/testing.md.")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    opts = parser.parse_args()
    code = page_code()
    if NO_SHRINK not in code:
        raise SystemExit("docs/testing.md no longer sets the phases this benchmark removes.")
    cases = {
        "correct wrapper, both tests": (code, ()),
        "halved covariance, honesty test, as the page sets it": (code + HALVED, ("-k", "honest")),
        "halved covariance, honesty test, shrink phase on": (
            code.replace(NO_SHRINK, "") + HALVED, ("-k", "honest")
        ),
    }
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    for name, (source, args) in cases.items():
        times, outcome = [], ""
        for _ in range(opts.repeats):
            elapsed, outcome = timed_run(source, opts.seed, *args)
            times.append(elapsed)
        print(f"{name}: median {statistics.median(times):.1f} s of {opts.repeats} "
              f"(min {min(times):.1f} s, max {max(times):.1f} s); {outcome}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
