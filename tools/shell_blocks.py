"""Run the shell blocks of README.md and docs/*.md as a reader would: as written, in a fresh copy.

Usage: ``python tools/shell_blocks.py [--list] DIR``, DIR a copy of the repository's committed
files (``git archive HEAD | tar -x -C DIR``: no venv, no build output). Every distinct
```` ```bash ```` block of ``DIR/README.md`` and ``DIR/docs/*.md`` runs once, in document order,
with ``bash -e -o pipefail -c``, its working directory DIR, a venv ``DIR/.venv-shell`` made first
and activated (its ``bin`` first on ``PATH``, ``VIRTUAL_ENV`` set), as a reader's shell would be
after ``source .venv-shell/bin/activate``: so a block's ``pip`` and ``python`` are that venv's,
and a block that makes a venv of its own (the quickstart line) uses that one. The blocks share
the venv in order, as one reader following the pages would.

The README's two test commands (the lines after ``<!-- test-command -->`` and
``<!-- test-command-full -->``) are left out: ``.ci/run`` runs them verbatim in its first step.
``--list`` prints the blocks it would run, with where each is first written, and runs nothing.
Exits 1 at the first block that fails, naming it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import venv
from pathlib import Path
from typing import NamedTuple

FENCE = re.compile(r"^```bash\n(.*?)^```", re.MULTILINE | re.DOTALL)
MARKERS = ("<!-- test-command -->", "<!-- test-command-full -->")


class Block(NamedTuple):
    """A shell block: its text and where it is first written (``path:line``)."""

    text: str
    where: str


def test_commands(readme: str) -> set[str]:
    """The README's test commands: the second line after each marker, as ``.ci/run`` reads it."""
    lines = readme.splitlines()
    found = set()
    for i, line in enumerate(lines):
        if line.strip() in MARKERS and i + 2 < len(lines):
            found.add(lines[i + 2].strip())
    return found


def blocks(root: Path) -> list[Block]:
    """The distinct bash blocks of README.md then docs/*.md (sorted), test commands left out."""
    readme = (root / "README.md").read_text(encoding="utf-8")
    skip = test_commands(readme)
    seen: set[str] = set()
    out = []
    for path in [root / "README.md", *sorted((root / "docs").glob("*.md"))]:
        text = path.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            body = match.group(1).strip()
            if body in skip or body in seen:
                continue
            seen.add(body)
            line = text.count("\n", 0, match.start()) + 2
            out.append(Block(body, f"{path.relative_to(root)}:{line}"))
    return out


def main(argv: list[str]) -> int:
    listing = "--list" in argv
    args = [a for a in argv if a != "--list"]
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    root = Path(args[0]).resolve()
    todo = blocks(root)
    if listing:
        for block in todo:
            print(f"# {block.where}\n{block.text}\n")
        return 0
    env_dir = root / ".venv-shell"
    venv.create(env_dir, with_pip=True)
    env = dict(os.environ)
    env["VIRTUAL_ENV"] = str(env_dir)
    env["PATH"] = f"{env_dir / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env.pop("PYTHONHOME", None)
    for block in todo:
        print(f"+ {block.where}\n{block.text}", flush=True)
        done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block.text], cwd=root, env=env)
        if done.returncode != 0:
            print(f"the shell block at {block.where} failed (status {done.returncode})")
            return 1
    print(f"{len(todo)} shell blocks ran as written")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
