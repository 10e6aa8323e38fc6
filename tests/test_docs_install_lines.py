"""Every install line of an extra works from a checkout: ``pip install -e '.[extra]'``, quoted.

gravdir is installed from its repository (README.md), so ``pip install gravdir[plot]`` would ask
a package index for a distribution that is not there, and an unquoted ``.[plot]`` is a glob to
zsh. The README, the documentation pages, the examples and every docstring and message in
``src/gravdir`` name an extra in the one form that works.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Any pip install of something with an extra in brackets, whatever its quoting.
INSTALL = re.compile(r"pip install(?: -\w+)*\s+(?:-e\s+)?(['\"]?)([\w.\-]*)\[([\w,\-]+)\]\1")
CHECKOUT = re.compile(r"pip install(?: -q)? -e '\.\[[\w,\-]+\]'")


def _files() -> list[Path]:
    files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    for folder in ("src/gravdir", "examples", "benchmarks", "tools"):
        files += sorted((ROOT / folder).rglob("*.py"))
    return files


def test_every_install_line_of_an_extra_is_the_checkout_form():
    seen = 0
    bad = []
    for path in _files():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for match in INSTALL.finditer(line):
                seen += 1
                if not CHECKOUT.fullmatch(match.group(0)):
                    bad.append(f"{path.relative_to(ROOT)}:{number}: {match.group(0)}")
    assert not bad, "install lines that do not work from a checkout:\n" + "\n".join(bad)
    assert seen >= 10  # the pattern finds the lines it checks


def test_the_pattern_catches_the_package_index_form():
    for line in ("pip install gravdir[plot]", "pip install 'gravdir[plot]'", "pip install .[plot]"):
        match = INSTALL.search(line)
        assert match is not None and not CHECKOUT.fullmatch(match.group(0))
    assert CHECKOUT.fullmatch("pip install -e '.[test,pinocchio]'")
