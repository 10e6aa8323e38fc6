"""Check that a built documentation site shows rendered text, and a reference entry for every
public name (CI runs it after the build, beside ``tools/check_site_offline.py``).

Usage: ``python tools/check_site_rendered.py SITE_DIR``. Exits 1, listing every finding, if

* a page's text, outside ``<pre>``, ``<code>``, scripts and styles, shows a reStructuredText role
  such as ``:math:`` or ``:func:`` (a docstring's role the site printed instead of rendering);
* a page's text, outside those and outside the maths MathJax typesets (an element of class
  ``math``, where Sphinx puts every formula), has a ``$`` (Markdown maths left as it was typed);
* a public name (a name of the stub ``src/gravdir/__init__.pyi``, or of the ``__all__`` of a
  public module) has no reference entry, an element whose ``id`` is its dotted name, or the
  Public names page (``api.html``) does not link to its entry.

The public names are those of ``tools/gen_api.py``, which writes the Public names table.
"""

from __future__ import annotations

import importlib.util
import posixpath
import re
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

# Roles of reStructuredText and of Sphinx's Python domain, as they look unrendered.
ROLE = re.compile(
    r":(?:math|func|class|meth|attr|mod|obj|data|exc|const|ref|doc|term|py:\w+):`", re.I
)
# Elements whose text is code or not text: a role or a $ there is what the reader should see.
RAW = {"pre", "code", "kbd", "samp", "script", "style", "textarea"}
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source"}
VOID |= {"track", "wbr"}
PACKAGE = "gravdir"


class _Page(HTMLParser):
    """The ids of a page, its links, and its text outside code (and outside maths)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.hrefs: list[str] = []
        self.prose: list[tuple[int, str]] = []  # (line, text) outside code
        self.plain: list[tuple[int, str]] = []  # the same, outside maths too
        self._stack: list[tuple[str, bool, bool]] = []  # (tag, raw, maths)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if attributes.get("id"):
            self.ids.add(str(attributes["id"]))
        if tag == "a" and attributes.get("href"):
            self.hrefs.append(str(attributes["href"]))
        if tag in VOID:
            return
        raw, maths = self._stack[-1][1:] if self._stack else (False, False)
        classes = (attributes.get("class") or "").split()
        self._stack.append((tag, raw or tag in RAW, maths or "math" in classes))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if attributes.get("id"):
            self.ids.add(str(attributes["id"]))

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self._stack) - 1, -1, -1):
            if self._stack[i][0] == tag:
                del self._stack[i:]
                return

    def handle_data(self, data: str) -> None:
        raw, maths = self._stack[-1][1:] if self._stack else (False, False)
        if raw:
            return
        line = self.getpos()[0]
        self.prose.append((line, data))
        if not maths:
            self.plain.append((line, data))


def public_names() -> tuple[list[str], list[str]]:
    """(The dotted names of the stub's names, the dotted names of every public module's
    ``__all__``), each as the reference documents it."""
    gen_api = _gen_api()
    return gen_api.stub_names(), gen_api.every_name()


def _gen_api() -> Any:
    """``tools/gen_api.py``, beside this file, as a module."""
    spec = importlib.util.spec_from_file_location("gen_api", Path(__file__).with_name("gen_api.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def findings(site: Path, stub: list[str], every: list[str]) -> list[str]:
    """Every unrendered role, stray ``$`` and missing reference entry or link of the site."""
    found: list[str] = []
    pages: dict[str, _Page] = {}
    for path in sorted(site.rglob("*.html")):
        rel = path.relative_to(site).as_posix()
        page = _Page()
        page.feed(path.read_text(encoding="utf-8", errors="replace"))
        page.close()
        pages[rel] = page
        for line, text in page.prose:
            for m in ROLE.finditer(text):
                found.append(f"{rel}:{line}: unrendered role {text[m.start() : m.end() + 30]!r}")
        for line, text in page.plain:
            if "$" in text:
                i = text.index("$")
                found.append(f"{rel}:{line}: stray $ in {text[max(0, i - 40) : i + 40]!r}")
    where: dict[str, str] = {}
    for rel, page in pages.items():
        for anchor in page.ids:
            where.setdefault(anchor, rel)
    for name in sorted(set(stub) | set(every)):
        if name not in where:
            found.append(f"{name}: no reference entry (no element with id={name!r})")
    api = pages.get("api.html")
    if api is None:
        found.append("api.html: no Public names page")
        return found
    linked = set()
    for href in api.hrefs:
        target, _, anchor = href.partition("#")
        if anchor and not re.match(r"[a-z]+:|/", target):
            linked.add((posixpath.normpath(target or "api.html"), anchor))
    for name in sorted(set(stub) | set(every)):
        if name in where and (where[name], name) not in linked:
            found.append(f"api.html: no link to the entry of {name} ({where[name]}#{name})")
    return found


def main(argv: list[str]) -> int:
    """Print the findings for ``argv[0]`` and return 1 if there are any."""
    if len(argv) != 1 or not Path(argv[0]).is_dir():
        print(__doc__, file=sys.stderr)
        return 2
    site = Path(argv[0])
    if not (site / "index.html").is_file():
        print(f"{site}: no index.html, not a built site", file=sys.stderr)
        return 2
    stub, every = public_names()
    found = findings(site, stub, every)
    for line in found:
        print(line, file=sys.stderr)
    if found:
        print(f"{len(found)} finding(s) in the built site", file=sys.stderr)
        return 1
    pages = sum(1 for _ in site.rglob("*.html"))
    names = len(set(stub) | set(every))
    print(f"site rendered check: {pages} pages, no raw role or stray $, {names} names documented")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
