"""The documentation site's configuration: navigation, reference, examples gallery, maths served
offline, and the two checks CI runs on the built site.

The build itself (Sphinx; every example executed by sphinx-gallery; the built site then checked
by ``tools/check_site_rendered.py`` and ``tools/check_site_offline.py``) runs in CI after the
test suite; these tests check what can be checked without building, and that both checks fail
a site that breaks their rules.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import runpy
import sys
from pathlib import Path
from typing import Any

import pytest
from _tools import load_tool

import gravdir

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
CDN = re.compile(
    r"cdn\.jsdelivr\.net|cdnjs\.cloudflare\.com|unpkg\.com|cdn\.mathjax\.org|polyfill\.io"
    r"|fonts\.googleapis\.com|fonts\.gstatic\.com",
    re.IGNORECASE,
)
TOCTREE = re.compile(r"^```\{toctree\}\n(.*?)^```", re.MULTILINE | re.DOTALL)


def _toctree(page: str) -> list[str]:
    """The entries of a page's toctrees, in order."""
    text = (DOCS / page).read_text(encoding="utf-8")
    entries: list[str] = []
    for body in TOCTREE.findall(text):
        lines = [line.strip() for line in body.splitlines()]
        entries += [line for line in lines if line and not line.startswith(":")]
    return entries


def _conf() -> dict[str, Any]:
    return runpy.run_path(str(DOCS / "conf.py"))


def _extension(name: str) -> Any:
    """The documentation extension `name`, with the path the build gives it (docs/conf.py):
    ``docs/_ext`` and ``tools``."""
    sys.path[:0] = [str(DOCS / "_ext"), str(ROOT / "tools")]
    try:
        spec = importlib.util.spec_from_file_location(name, DOCS / "_ext" / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        del sys.path[:2]


def _require_sphinx() -> None:
    """Skip where Sphinx (the docs extra) is not installed; with ``GRAVDIR_REQUIRE_SPHINX=1``
    (CI, after installing the docs extra) fail instead."""
    if importlib.util.find_spec("sphinx") is None:
        reason = "Sphinx is not installed (pip install -e '.[docs]')"
        if os.environ.get("GRAVDIR_REQUIRE_SPHINX") == "1":
            pytest.fail(reason)
        pytest.skip(reason + "; set GRAVDIR_REQUIRE_SPHINX=1 to make its absence fail")


def test_home_comes_first_and_getting_started_second() -> None:
    assert _conf()["root_doc"] == "index"
    assert _toctree("index.md")[0] == "getting_started"


def test_every_page_is_in_the_navigation_once() -> None:
    entries = _toctree("index.md") + _toctree("api.md")
    assert len(entries) == len(set(entries))
    pages = {p.stem for p in DOCS.glob("*.md")} - {"index"}
    assert {e for e in entries if "/" not in e} == pages
    assert {"auto_examples/index", "reference/gravdir"} <= set(entries)


def test_every_example_is_in_the_gallery_with_a_title() -> None:
    examples = sorted(p.name for p in (ROOT / "examples").glob("*.py"))
    assert len(examples) >= 6
    assert sorted(_extension("gallery_order").ORDER) == examples
    assert (ROOT / "examples" / "GALLERY_HEADER.rst").is_file()
    for name in examples:
        docstring = ast.get_docstring(ast.parse((ROOT / "examples" / name).read_text()))
        assert docstring, f"{name}: sphinx-gallery takes the page's title from the docstring"
        title, underline = docstring.splitlines()[:2]
        assert re.fullmatch(r"=+", underline) and len(underline) >= len(title), name


def test_the_gallery_runs_every_example_but_the_fleet() -> None:
    pattern = _conf()["sphinx_gallery_conf"]["filename_pattern"]
    for path in (ROOT / "examples").glob("*.py"):
        runs = re.search(pattern, str(path)) is not None
        assert runs == (path.name != "fleet.py"), path.name


def test_every_public_module_has_a_reference_page() -> None:
    _require_sphinx()
    reference = _extension("gravdir_reference")
    modules = reference.public_modules()
    for module in (
        "gravdir",
        "gravdir.errors",
        "gravdir.motion",
        "gravdir.pinocchio",
        "gravdir.plot",
        "gravdir.synthetic",
        "gravdir.synthetic.motion",
        "gravdir.testing",
        "gravdir.urdf",
    ):
        assert module in modules
    assert not [m for m in modules if "._" in m]
    page = reference.module_page("gravdir.sweep")
    for name in gravdir.sweep.__all__:
        assert f"gravdir.sweep.{name}\n" in page


def test_the_maths_renderer_is_served_by_the_site() -> None:
    conf = _conf()
    assert conf["html_static_path"] == ["assets"]
    assert not re.match(r"(https?:)?//", conf["mathjax_path"])
    assert (DOCS / "assets" / conf["mathjax_path"]).is_file()
    (config, _), *_ = conf["html_js_files"]
    script = (DOCS / "assets" / config).read_text(encoding="utf-8")
    # Sphinx puts each formula, as \(...\) or \[...\], in an element of class "math".
    assert 'processHtmlClass: "math"' in script
    vendored = DOCS / "assets" / "mathjax"
    assert "Apache License" in (vendored / "LICENSE").read_text(encoding="utf-8")
    assert "3.2.2" in (vendored / "NOTICE").read_text(encoding="utf-8")
    # The component with every TeX extension built in: nothing is autoloaded at run time.
    assert 'VERSION="3.2.2"' in (vendored / "tex-svg-full.js").read_text(encoding="utf-8")


def test_no_cdn_in_the_site_configuration_or_sources() -> None:
    checked = 0
    for path in sorted(DOCS.rglob("*")):
        if {"auto_examples", "reference"} & set(path.relative_to(DOCS).parts):
            continue  # generated by the build
        if not path.is_file() or path.suffix not in {".py", ".md", ".js", ".css", ".html", ""}:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        hits = [m.group(0) for m in CDN.finditer(text)]
        assert not hits, f"{path.relative_to(ROOT)} names {hits}"
        checked += 1
    assert checked > 20


def test_the_theme_names_no_cdn_and_no_font_server() -> None:
    theme = _conf()["html_theme"]
    spec = importlib.util.find_spec(theme)
    if spec is None or spec.origin is None:
        pytest.skip(f"{theme} (the docs extra) is not installed")
    static = [p for p in Path(spec.origin).parent.rglob("*") if p.suffix in {".js", ".css"}]
    assert static
    for path in static:
        hits = CDN.findall(path.read_text(encoding="utf-8", errors="replace"))
        assert not hits, f"{path} names {hits}"


def test_getting_started_shows_install_quickstart_and_estimator_choice() -> None:
    page = (DOCS / "getting_started.md").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = re.findall(r"```bash\n(.+?)\n```", readme)
    assert len(commands) >= 2
    for command in commands[:2]:
        assert command in page
    # The executed quickstart (code and outputs) is its gallery page, included from the line of
    # the example's docstring that the include names.
    include = re.search(
        r"^\.\. include:: auto_examples/quickstart\.rst\n   :start-after: (.+)\n", page, re.M
    )
    assert include, "getting_started.md does not include the quickstart's page"
    docstring = ast.get_docstring(ast.parse((ROOT / "examples" / "quickstart.py").read_text()))
    assert docstring and include.group(1) in docstring.splitlines()
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
    page = '<html><script src="_static/mathjax/tex-svg-full.js"></script>{}</html>'
    (tmp_path / "index.html").write_text(page.format('<a href="https://example.org/">x</a>'))
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
    bundle = tmp_path / "_static" / "scripts" / "bundle.js"
    bundle.parent.mkdir(parents=True)
    bundle.write_text('var m="https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-svg.js";')
    assert len(check.findings(tmp_path)) == 1  # a theme's bundle is not excepted
    (tmp_path / "style.css").write_text("@import url(//fonts.googleapis.com/css?family=Roboto);")
    bundle.unlink()
    assert [line.split(":")[0] for line in check.findings(tmp_path)] == ["style.css"]


def _rendered_site(
    root: Path, stub: list[str], every: list[str], extra: str = "", unlinked: str = ""
) -> None:
    """A site as Sphinx lays it out: one reference page with an entry per name, and the Public
    names page linking to the entry of every name (but `unlinked`)."""
    root.mkdir()
    entries = "".join(f'<dt id="{name}">{name}</dt>' for name in sorted(set(stub) | set(every)))
    (root / "reference").mkdir()
    (root / "reference" / "all.html").write_text(f"<html><dl>{entries}</dl></html>")
    links = "".join(
        f'<a href="reference/all.html#{name}"><code>{name}</code></a>'
        for name in sorted(set(stub) | set(every))
        if name != unlinked
    )
    (root / "api.html").write_text(f"<html>{links}</html>")
    maths = r'<span class="math notranslate">\(x = \$1\)</span>'
    code = "<pre>:func:`fit_sweep` costs $1</pre><code>:math:`x`</code>"
    (root / "index.html").write_text(f"<html><p>Fine: {maths}</p>{code}{extra}</html>")


def test_rendered_check_passes_a_rendered_site_and_fails_a_broken_one(tmp_path: Path) -> None:
    check = load_tool("check_site_rendered")
    stub, every = check.public_names()
    assert "gravdir.sweep.fit_sweep" in stub and "gravdir.synthetic.motion.motion_log" in every
    _rendered_site(tmp_path / "good", stub, every)
    assert check.findings(tmp_path / "good", stub, every) == []
    assert check.main([str(tmp_path / "good")]) == 0

    _rendered_site(tmp_path / "raw", stub, every, extra="<p>see :func:`fit_sweep`, $x$</p>")
    found = check.findings(tmp_path / "raw", stub, every)
    assert len(found) == 2 and all(line.startswith("index.html:") for line in found)
    assert "unrendered role" in found[0] and "stray $" in found[1]
    assert check.main([str(tmp_path / "raw")]) == 1

    # A name of the stub and a building block only in its module's __all__ must both be linked.
    for name in ("gravdir.sweep.fit_sweep", "gravdir.sweep.wrap_angle"):
        _rendered_site(tmp_path / name, stub, every, unlinked=name)
        found = check.findings(tmp_path / name, stub, every)
        assert found == [f"api.html: no link to the entry of {name} (reference/all.html#{name})"]
    assert "gravdir.sweep.wrap_angle" not in stub

    others = [n for n in every if n != "gravdir.synthetic.motion.motion_log"]
    _rendered_site(tmp_path / "missing", stub, others)
    found = check.findings(tmp_path / "missing", stub, every)
    assert found == [
        "gravdir.synthetic.motion.motion_log: no reference entry"
        " (no element with id='gravdir.synthetic.motion.motion_log')"
    ]


def _calls(path: Path) -> set[str]:
    """The names a script calls (``f(...)``), read from its syntax tree: comments do not count."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {
        node.func.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }


def test_every_plot_function_draws_a_figure_in_the_gallery_and_on_the_plots_page():
    import gravdir.plot

    called = set().union(*(_calls(p) for p in sorted((ROOT / "examples").glob("*.py"))))
    missing = set(gravdir.plot.__all__) - called
    assert not missing, f"gravdir.plot functions no example draws: {sorted(missing)}"
    # The Plots page shows the figures the gallery example makes, one per call, in order.
    page = (DOCS / "plot.md").read_text(encoding="utf-8")
    shown = re.findall(r"\]\(auto_examples/images/sphx_glr_plots_(\d{3})\.png\)", page)
    example = (ROOT / "examples" / "plots.py").read_text(encoding="utf-8")
    figures = len(re.findall(r"^fig, axes = plot_\w+\(", example, re.MULTILINE))
    assert shown == [f"{i:03d}" for i in range(1, figures + 1)]
    assert {f"plot_{m}" for m in re.findall(r"!\[plot_(\w+)", page)} == set(gravdir.plot.__all__)
