"""The code of ``docs/testing.md`` runs as printed, outside this repository's test setup.

A reader copies the page's Python blocks into a test file of their own project: no
``tests/conftest.py`` (whose hypothesis profile sets ``deadline=None`` and derandomises), no
``pyproject.toml`` options. These tests do the same in a temporary directory and run pytest on
the result in a fresh interpreter: the correct wrapper passes both property tests, and a wrapper
that halves its covariance fails the honesty test with a traceback that ends in the reader's own
code, not inside gravdir.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import gravdir

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "testing.md"
GRAVDIR_DIR = Path(gravdir.__file__).resolve().parent

# The planted bug, as a reader would write it around the page's `calibrate`: the covariance it
# reports is half the estimator's, so every sigma is too small by a factor of 1.41.
HALVED = '''

_calibrate = calibrate


def calibrate(exp):
    up, cov, tilt, azimuth = _calibrate(exp)
    return up, 0.5 * cov, tilt, azimuth
'''


def page_code() -> str:
    """The page's Python blocks, verbatim, in order, as one module."""
    blocks = re.findall(r"^```python\n(.*?)^```", PAGE.read_text(encoding="utf-8"), re.S | re.M)
    assert len(blocks) >= 2  # the wrapper and its property tests
    return "\n\n".join(blocks)


def run_pytest(folder: Path, code: str, *args: str) -> subprocess.CompletedProcess[str]:
    """pytest in a fresh interpreter on `code` as ``test_page.py`` in `folder`, whose empty
    ``pytest.ini`` makes it the root: no conftest or options of this repository apply. The
    hypothesis seed is fixed so the run is reproducible; the page's settings are its own."""
    (folder / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (folder / "test_page.py").write_text(code, encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--hypothesis-seed=0",
         "test_page.py", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def gravdir_frames(output: str) -> list[str]:
    """Lines of a pytest report that name a file inside the gravdir package."""
    return [
        line
        for line in output.splitlines()
        if str(GRAVDIR_DIR) in line or re.search(r"src/gravdir/\S+\.py", line)
    ]


def test_the_page_code_passes_as_printed(tmp_path):
    out = run_pytest(tmp_path, page_code())
    assert out.returncode == 0, out.stdout + out.stderr
    assert "2 passed" in out.stdout


def test_a_halved_covariance_fails_the_honesty_test_in_the_callers_frame(tmp_path):
    out = run_pytest(tmp_path, page_code() + HALVED, "-k", "honest", "--tb=long")
    report = out.stdout + out.stderr
    assert out.returncode == 1, report
    assert "1 failed" in out.stdout
    assert "The `covariances` are too small (over-confident)" in report
    assert "test_page.py" in report  # the failing line is the reader's own
    assert gravdir_frames(report) == [], "\n".join(gravdir_frames(report))


def test_the_frame_check_sees_gravdir_frames_where_they_are_shown(tmp_path):
    """The check above can fail: a native traceback ignores ``__tracebackhide__`` and shows
    the assertion's frames inside gravdir, which `gravdir_frames` then finds."""
    out = run_pytest(tmp_path, page_code() + HALVED, "-k", "honest", "--tb=native")
    assert out.returncode == 1
    assert any("_assertions.py" in line for line in gravdir_frames(out.stdout + out.stderr))
