"""Sphinx configuration of the gravdir documentation site.

Build: ``sphinx-build -W --keep-going -b html docs SITE_DIR`` (``docs/contributing.md``). The
Markdown pages are read by myst-parser, the API reference is written by autodoc from the
numpydoc docstrings (``_ext/gravdir_reference.py``, a page per public module), and every
``examples/*.py`` is executed by sphinx-gallery into a page with its output and figures.
"""

from __future__ import annotations

import sys
from importlib.metadata import version as _version
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))
# tools/gen_api.py: the list of public modules and names, shared with the Public names table.
sys.path.insert(0, str(HERE.parent / "tools"))

project = "gravdir"
author = "the gravdir authors"
copyright = "the gravdir authors"
release = _version("gravdir")
version = release
html_title = f"gravdir {release}"

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
    "gravdir_reference",
]

root_doc = "index"
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
# The vendored MathJax (its LICENSE and NOTICE) is served as static files, not read as pages.
exclude_patterns = ["_build", "assets"]
# Every cross-reference must resolve: an unresolved one is a warning, and -W fails the build.
nitpicky = True
# Names of other libraries (numpy, scipy, matplotlib, hypothesis, the standard library) have no
# inventory here: the build fetches nothing from the network, so they render as code, unlinked.
nitpick_ignore_regex = [
    (r"py:.*", r"(numpy|np|scipy|matplotlib|hypothesis|pinocchio|pandas|dask|distributed)(\..*)?"),
    (r"py:.*", r"(typing|collections|dataclasses|enum|warnings|math|json)(\..*)?"),
    (r"py:.*", r"(threading|concurrent)(\..*)?"),
    (r"py:.*", r"(int|float|bool|str|bytes|tuple|list|dict|object|None|callable|Exception)"),
    (r"py:.*", r"(ValueError|TypeError|Warning|UserWarning|RuntimeWarning|ArithmeticError)"),
    # Private helpers (the shared result base, the sphere's tangent basis) that docstrings name
    # for the curious: not public, so without a reference entry; they render as code.
    (r"py:.*", r"gravdir(\.\w+)*\._\w+(\.\w+)*"),
    (r"py:.*", r"(gravdir\.)?UpResult(\.\w+)?"),
]

# --- Markdown pages (myst-parser): the maths is written $...$ and $$...$$, as before.
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_dmath_double_inline = True
# Links such as conventions.md#result-types name a heading by its slug.
myst_heading_anchors = 4

# --- API reference (autodoc + numpydoc).
autodoc_typehints = "none"
autodoc_member_order = "bysource"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False

# --- Maths: MathJax 3 served from the site (docs/assets/mathjax), configured by
# docs/assets/javascripts/mathjax-config.js, loaded before it.
html_static_path = ["assets"]
mathjax_path = "mathjax/tex-svg-full.js"
html_js_files = [("javascripts/mathjax-config.js", {"priority": 100})]
html_css_files = ["stylesheets/site.css"]

# --- Examples (sphinx-gallery): every examples/*.py executed, except fleet.py (it starts a Dask
# cluster and needs the `fleet` extra; CI runs it in a venv of its own), shown without outputs.
sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"[\\/](?!fleet\.py$)[^\\/]+\.py$",
    "within_subsection_order": "gallery_order.NavigationOrder",
    "download_all_examples": False,
    "remove_config_comments": True,
    "capture_repr": ("_repr_html_", "__repr__"),
    # The computation-times pages load jQuery, DataTables and Bootstrap from CDNs.
    "write_computation_times": False,
}

# --- HTML theme: pydata-sphinx-theme (the SciPy and scikit-learn theme), its fonts and icons
# bundled: nothing is fetched from a font server or a CDN.
html_theme = "pydata_sphinx_theme"
html_theme_options = {
    "navbar_align": "left",
    "header_links_before_dropdown": 5,
    "footer_start": ["copyright", "version"],
    "footer_end": ["sphinx-version", "theme-version"],
    "navigation_with_keys": False,
    "show_toc_level": 2,
}
templates_path = ["_templates"]
html_show_sourcelink = False
html_copy_source = False
