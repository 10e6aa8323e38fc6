"""Re-create docs/assets/mathjax/ from the npm package of MathJax (the renderer of the docs' maths).

Usage, from the repository root::

    npm pack mathjax@3.2.2            # writes mathjax-3.2.2.tgz
    python tools/vendor_mathjax.py mathjax-3.2.2.tgz

The site loads ``tex-svg-full.js``: TeX input with every TeX extension built in (nothing is
autoloaded at run time) and SVG output, whose glyphs are in the script itself (no font files).
The speech-rule engine inside the script names three CDN addresses; they are fetched only if a
reader turns on speech in MathJax's menu, and are replaced here by paths beside the script, so
the site references no CDN at all. Nothing else is changed (``NOTICE`` says so, as the Apache 2.0
license asks).
"""

from __future__ import annotations

import hashlib
import sys
import tarfile
from pathlib import Path

VERSION = "3.2.2"
TARBALL_SHA256 = "1b9c0a1c44df864e915690558e72adb9cc5203360daefd385084ced3b6c64c09"
MEMBER = "package/es5/tex-svg-full.js"
OUT = Path(__file__).resolve().parent.parent / "docs" / "assets" / "mathjax"
_CDN = '"https://cdn.jsdelivr.net/npm/'
SUBSTITUTIONS = {
    _CDN + 'speech-rule-engine@"+r.VERSION+"/lib/mathmaps"': '"sre/mathmaps"',
    _CDN + 'wicked-good-xpath@1.3.0/dist/wgxpath.install.js"': '"sre/wgxpath.install.js"',
    _CDN + 'sre-mathmaps-ie@"+variables_1.Variables.VERSION+"mathmaps_ie.js"': (
        '"sre/mathmaps_ie.js"'
    ),
}
NOTICE = f"""MathJax {VERSION} (https://www.mathjax.org), Apache License 2.0
(LICENSE beside this file).

tex-svg-full.js is es5/tex-svg-full.js of the npm package mathjax@{VERSION}
(tarball sha256 {TARBALL_SHA256}),
changed only where its speech-rule engine names three addresses on a public CDN (its mathmaps,
the IE mathmaps and the wicked-good-xpath polyfill, fetched only when a reader turns on speech in
MathJax's menu): they now name paths beside the script (sre/mathmaps, sre/mathmaps_ie.js,
sre/wgxpath.install.js). The exact substitutions are in tools/vendor_mathjax.py, which re-creates
this directory.
"""


def main(tarball: str) -> None:
    """Check the tarball, patch the script, write it with LICENSE and NOTICE into ``OUT``."""
    digest = hashlib.sha256(Path(tarball).read_bytes()).hexdigest()
    if digest != TARBALL_SHA256:
        raise SystemExit(f"{tarball}: sha256 {digest}, expected {TARBALL_SHA256}")
    with tarfile.open(tarball) as tar:
        script = tar.extractfile(MEMBER).read().decode("utf-8")  # type: ignore[union-attr]
        license_text = tar.extractfile("package/LICENSE").read()  # type: ignore[union-attr]
    for old, new in SUBSTITUTIONS.items():
        if script.count(old) != 1:
            raise SystemExit(f"expected exactly one {old!r} in {MEMBER}")
        script = script.replace(old, new)
    if "cdn." in script.lower():
        raise SystemExit(f"{MEMBER} still names a CDN after the substitutions")
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "tex-svg-full.js").write_text(script, encoding="utf-8")
    (OUT / "LICENSE").write_bytes(license_text)
    (OUT / "NOTICE").write_text(NOTICE, encoding="utf-8")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    main(sys.argv[1])
