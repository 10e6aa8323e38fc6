"""The documentation site's configuration: navigation, executed examples, maths served offline.

The build itself (every example executed as a notebook, then the built site checked for CDN
references by ``tools/check_site_offline.py``) runs in CI after the test suite; these tests check
what can be checked without building, with the standard library only.
"""

from __future__ import annotations

import re
from pathlib import Path

from _tools import load_tool

import gravdir

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
MKDOCS = ROOT / "mkdocs.yml"
CDN = re.compile(
    r"cdn\.jsdelivr\.net|cdnjs\.cloudflare\.com|unpkg\.com|cdn\.mathjax\.org|polyfill\.io"
    r"|fonts\.googleapis\.com",
    re.IGNORECASE,
)


def _nav() -> list[tuple[int, str, str | None]]:
    """The ``nav`` of mkdocs.yml in order: (depth, title, page or None for a section)."""
    entries: list[tuple[int, str, str | None]] = []
    in_nav = False
    for line in MKDOCS.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line.startswith(" "):
            in_nav = line.rstrip() == "nav:"
            continue
        if not in_nav:
            continue
        m = re.match(r"""^( *)- ("[^"]*"|'[^']*'|[^:]+):(?: (.+))?$""", line)
        assert m, f"unexpected nav line {line!r}"
        title = m.group(2).strip().strip("\"'")
        entries.append(((len(m.group(1)) - 2) // 4, title, m.group(3)))
    return entries


def _top_level(key: str) -> list[str]:
    """The list items under a top-level key of mkdocs.yml."""
    items: list[str] = []
    lines = MKDOCS.read_text(encoding="utf-8").splitlines()
    start = lines.index(f"{key}:")
    for line in lines[start + 1 :]:
        if line.startswith("  - "):
            items.append(line[4:].strip())
        elif line.strip() and not line.startswith("#"):
            break
    return items


def test_getting_started_is_first_in_the_navigation() -> None:
    nav = _nav()
    assert nav[0] == (0, "Getting started", "getting_started.md")
    assert (DOCS / "getting_started.md").is_file()


def test_every_example_is_a_page_under_examples_in_the_navigation() -> None:
    nav = _nav()
    examples = {p.stem for p in (ROOT / "examples").glob("*.py")}
    assert len(examples) >= 6
    i = next(i for i, e in enumerate(nav) if e == (0, "Examples", None))
    section = []
    for depth, _, page in nav[i + 1 :]:
        if depth == 0:
            break
        section.append(page)
    assert sorted(section) == sorted(f"examples/{name}.md" for name in examples)
    # The pages are generated at build time; none is written by hand under docs/.
    assert not (DOCS / "examples").exists()


def test_every_nav_page_exists() -> None:
    for _, title, page in _nav():
        if page is None or page.startswith("examples/"):
            continue
        assert (DOCS / page).is_file(), f"{title}: {page}"


def test_the_notebook_hook_is_enabled() -> None:
    assert _top_level("hooks") == ["tools/docs_notebooks.py"]
    assert (ROOT / "tools" / "docs_notebooks.py").is_file()


def test_the_maths_renderer_is_served_by_the_site() -> None:
    scripts = _top_level("extra_javascript")
    assert scripts == ["assets/javascripts/mathjax-config.js", "assets/mathjax/tex-svg-full.js"]
    for script in scripts:
        assert not re.match(r"(https?:)?//", script)
        assert (DOCS / script).is_file()
    vendored = DOCS / "assets" / "mathjax"
    assert "Apache License" in (vendored / "LICENSE").read_text(encoding="utf-8")
    assert "3.2.2" in (vendored / "NOTICE").read_text(encoding="utf-8")
    # The component with every TeX extension built in: nothing is autoloaded at run time.
    script = (vendored / "tex-svg-full.js").read_text(encoding="utf-8")
    assert 'VERSION="3.2.2"' in script


def test_no_cdn_in_the_site_configuration_or_sources() -> None:
    sources = [MKDOCS, *sorted(DOCS.rglob("*"))]
    checked = 0
    for path in sources:
        if not path.is_file() or path.suffix not in {".yml", ".md", ".js", ".css", ".html", ""}:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        hits = [m.group(0) for m in CDN.finditer(text)]
        assert not hits, f"{path.relative_to(ROOT)} names {hits}"
        checked += 1
    assert checked > 20


def test_theme_fetches_no_web_font() -> None:
    assert re.search(r"^theme:\n(?:  .*\n)*?  font: false$", MKDOCS.read_text(), re.MULTILINE)


def test_getting_started_shows_install_quickstart_and_estimator_choice() -> None:
    page = (DOCS / "getting_started.md").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = re.findall(r"```bash\n(.+?)\n```", readme)
    assert len(commands) >= 2
    for command in commands[:2]:
        assert command in page
    # The executed quickstart (code and outputs) is included at build time.
    assert re.search(r"^<!-- example: quickstart -->$", page, re.MULTILINE)
    table = page[page.index("## Which estimator for which sensor") :]
    for sensor in ("sweeps", "ordinary motion", "level plane", "accelerometer", "Several"):
        assert sensor in table
    names = set(re.findall(r"`([a-z_][a-z0-9_]*|[A-Z][A-Za-z]+)`", table))
    assert {"fit_sweep", "estimate_up", "up_from_accelerometer", "fuse_up"} <= names
    for name in names - {"up", "up_std_deg"}:
        if name.startswith("gravdir"):
            continue
        assert hasattr(gravdir, name), name


def test_site_check_finds_cdn_scripts_and_passes_a_clean_site(tmp_path: Path) -> None:
    check = load_tool("check_site_offline")
    page = '<html><script src="../assets/mathjax/tex-svg-full.js"></script>{}</html>'
    (tmp_path / "index.html").write_text(page.format('<a href="https://example.org/">x</a>'))
    bundle = tmp_path / "assets" / "javascripts" / "bundle.0123abcd.min.js"
    bundle.parent.mkdir(parents=True)
    # The theme's bundle names mermaid on a CDN (fetched only for mermaid diagrams): allowed.
    bundle.write_text('var m="https://unpkg.com/mermaid@11/dist/mermaid.min.js";')
    assert check.findings(tmp_path) == []
    assert check.main([str(tmp_path)]) == 0

    (tmp_path / "nb").mkdir()
    (tmp_path / "nb" / "index.html").write_text(
        page.format(
            '<script src="https://cdnjs.cloudflare.com/ajax/libs/require.js/2.1.10/require.min.js">'
            "</script>"
        )
    )
    found = check.findings(tmp_path)
    assert len(found) == 2  # loaded from another host, and a CDN named
    assert all(line.startswith("nb/index.html: ") for line in found)
    assert check.main([str(tmp_path)]) == 1

    (tmp_path / "nb" / "index.html").unlink()
    bundle.write_text('var m="https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-svg.js";')
    assert len(check.findings(tmp_path)) == 1  # a maths CDN is reported even in the bundle
    (tmp_path / "style.css").write_text("@import url(//fonts.googleapis.com/css?family=Roboto);")
    bundle.unlink()
    assert [line.split(":")[0] for line in check.findings(tmp_path)] == ["style.css"]
