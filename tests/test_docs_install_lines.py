"""Every install line of an extra works from a checkout: ``pip install -e '.[extra]'``, quoted.

gravdir is installed from its repository (README.md), so ``pip install gravdir[plot]`` would ask
a package index for a distribution that is not there, and an unquoted ``.[plot]`` is a glob to
zsh. The README, the documentation pages, the examples and every docstring and message in
``src/gravdir`` name an extra in the one form that works.
"""

from __future__ import annotations

import re
from pathlib import Path

from _tools import load_tool

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


def test_every_extra_named_in_an_install_line_is_declared():
    import tomllib

    declared = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    )
    named = {
        extra
        for path in _files()
        for match in INSTALL.finditer(path.read_text(encoding="utf-8"))
        for extra in match.group(3).split(",")
    }
    assert named >= {"test", "plot", "testing", "pinocchio", "fleet"}
    assert named <= declared, f"extras named but not declared: {sorted(named - declared)}"


def test_the_shell_blocks_ci_runs(tmp_path):
    """tools/shell_blocks.py (run by .ci/run on a fresh copy) takes every bash block once, the
    README's test commands left out because .ci/run's first step runs them verbatim."""
    shell = load_tool("shell_blocks")
    found = shell.blocks(ROOT)
    texts = [b.text for b in found]
    assert len(texts) == len(set(texts))
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = shell.test_commands(readme)
    assert len(commands) == 2 and all("pytest" in c for c in commands)
    assert not commands & set(texts)
    quickstart = [b for b in found if "examples/quickstart.py" in b.text]
    assert [b.where for b in quickstart] == ["README.md:14"]
    assert any("pip install -e '.[testing]'" in t for t in texts)
    # A page with a new block is picked up; a repeated block is not run twice.
    (tmp_path / "docs").mkdir()
    (tmp_path / "README.md").write_text(readme)
    page = "# A page\n\n```bash\necho one\n```\n\n```python\nx = 1\n```\n\n```bash\necho one\n```\n"
    (tmp_path / "docs" / "page.md").write_text(page)
    extra = [b for b in shell.blocks(tmp_path) if b.text == "echo one"]
    assert extra == [shell.Block("echo one", "docs/page.md:4")]
