"""Check a built documentation site for resources fetched from a CDN (CI runs it after the build).

Usage: ``python tools/check_site_offline.py SITE_DIR``. Exits 1, listing every finding, if

* an HTML page loads a script, stylesheet, font or image from another host (``src=``/``href=``
  of ``<script>``, ``<link>``, ``<img>``, ``<iframe>``, or a CSS ``@import``/``url()``): the site
  must render, maths included, with no network; ordinary links (``<a href>``) are not resources;
* any file of the site names a CDN host (jsDelivr, cdnjs, unpkg, the MathJax CDN, polyfill.io,
  Google's font servers, DataTables, jQuery's). The theme, pydata-sphinx-theme, ships its fonts
  and icons and names none, so no file is excepted; sphinx-gallery's computation-times page,
  which loads DataTables from CDNs, is not written (``docs/conf.py``).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

CDN = re.compile(
    r"cdn\.jsdelivr\.net|cdnjs\.cloudflare\.com|unpkg\.com|cdn\.mathjax\.org|polyfill\.io"
    r"|fonts\.googleapis\.com|fonts\.gstatic\.com|cdn\.datatables\.net|code\.jquery\.com",
    re.IGNORECASE,
)
# A resource (not a hyperlink) with an absolute or protocol-relative address.
EXTERNAL_RESOURCE = re.compile(
    r"<(?:script|link|img|iframe|source|embed)\b[^>]*?\b(?:src|href)\s*=\s*[\"']?\s*"
    r"((?:https?:)?//[^\"'\s>]+)"
    r"|@import\s+(?:url\()?[\"']?((?:https?:)?//[^\"')\s]+)"
    r"|url\(\s*[\"']?((?:https?:)?//[^\"')\s]+)",
    re.IGNORECASE,
)
TEXT_SUFFIXES = {".html", ".js", ".css", ".json", ".map", ".xml", ".txt", ".svg", ".ipynb", ""}


def findings(site: Path) -> list[str]:
    """Every CDN reference and external resource of the site under ``site``, one line each."""
    found: list[str] = []
    for path in sorted(p for p in site.rglob("*") if p.is_file()):
        if path.suffix.lower() not in TEXT_SUFFIXES:
            continue
        rel = path.relative_to(site).as_posix()
        text = path.read_text(encoding="utf-8", errors="replace")
        if path.suffix.lower() == ".html":
            for m in EXTERNAL_RESOURCE.finditer(text):
                url = next(g for g in m.groups() if g)
                found.append(f"{rel}: loads {url}")
        for m in CDN.finditer(text):
            context = text[max(0, m.start() - 40) : m.end() + 80]
            found.append(f"{rel}: names {context.strip()!r}")
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
    found = findings(site)
    for line in found:
        print(line, file=sys.stderr)
    if found:
        print(f"{len(found)} CDN reference(s) in the built site", file=sys.stderr)
        return 1
    pages = sum(1 for _ in site.rglob("*.html"))
    print(f"site offline check: {pages} pages, no CDN reference, no external resource")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
