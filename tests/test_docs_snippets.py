"""Every Python block of the documentation runs as printed.

A reader runs a page's blocks top to bottom in one interpreter: each page's ```` ```python ````
blocks of ``docs/*.md`` and ``README.md``, verbatim and in order, make one script, run here in a
fresh interpreter in an empty temporary directory (no file of this repository is at hand) with
the Agg backend of matplotlib and one BLAS thread. A block that raises fails its page's test.
``docs/testing.md`` is left to ``tests/test_docs_testing_page.py``, which runs its blocks as a
reader's pytest file. A page needing a package the ``test`` extra does not install is skipped
where that package is absent, unless its variable asks for it; ``.ci/run`` runs those pages in the
venvs that have the package, with the variable set, so that every page runs in CI.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
# Pages whose blocks another test runs.
COVERED_ELSEWHERE = {"docs/testing.md"}
# Pages whose blocks import a package outside the `test` extra: (package, where it comes from,
# the variable that makes its absence fail, as in tests/test_pinocchio.py and tests/test_fleet.py;
# .ci/run sets each where it runs the page).
NEEDS = {
    "docs/fleet.md": ("distributed", "the fleet extra", "GRAVDIR_REQUIRE_DASK"),
    "docs/synthetic.md": ("pandas", "the examples or docs extra", "GRAVDIR_REQUIRE_PANDAS"),
    "docs/urdf.md": ("pinocchio", "the pinocchio extra", "GRAVDIR_REQUIRE_PINOCCHIO"),
    "docs/walkthrough.md": ("pandas", "the examples or docs extra", "GRAVDIR_REQUIRE_PANDAS"),
}


def page_blocks(page: Path) -> list[str]:
    """The page's Python blocks, verbatim, in order."""
    return BLOCK.findall(page.read_text(encoding="utf-8"))


def page_code(page: Path) -> str:
    """The page's Python blocks as one script, as a reader runs them top to bottom."""
    return "\n\n".join(page_blocks(page))


def pages() -> list[str]:
    """The pages with at least one Python block, relative to the repository root."""
    found = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    names = [path.relative_to(ROOT).as_posix() for path in found if page_blocks(path)]
    return [name for name in names if name not in COVERED_ELSEWHERE]


def run_code(code: str, folder: Path) -> subprocess.CompletedProcess[str]:
    """`code` as a script in a fresh interpreter, in `folder`."""
    env = os.environ | {"MPLBACKEND": "Agg", "OPENBLAS_NUM_THREADS": "1"}
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.mark.parametrize("page", pages())
def test_the_page_code_runs_as_printed(page, tmp_path):
    if page in NEEDS:
        package, extra, required = NEEDS[page]
        absent = importlib.util.find_spec(package) is None
        if absent and not (required and os.environ.get(required) == "1"):
            pytest.skip(f"{page} imports {package} ({extra}), which is not installed")
    out = run_code(page_code(ROOT / page), tmp_path)
    assert out.returncode == 0, f"{page} failed:\n{out.stderr}"


def test_the_pages_are_found():
    assert "docs/walkthrough.md" in pages()
    assert "docs/testing.md" not in pages()
    assert all(page_blocks(ROOT / page) for page in pages())


def test_a_page_whose_block_raises_fails(tmp_path):
    """The blocks of a page share one namespace, other fences are left out, and a block that
    raises fails the run with its message on stderr."""
    page = tmp_path / "page.md"
    page.write_text(
        "# A page\n\n```python\nx = 1\n```\n\nText.\n\n```bash\nexit 0\n```\n\n"
        "```python\nraise ValueError(f'the second block sees x = {x}')\n```\n",
        encoding="utf-8",
    )
    assert len(page_blocks(page)) == 2
    out = run_code(page_code(page), tmp_path)
    assert out.returncode != 0
    assert "ValueError: the second block sees x = 1" in out.stderr
