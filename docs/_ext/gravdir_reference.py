"""Sphinx extension: the API reference of gravdir, a page per public module, and the resolution
of the docstrings' short cross-references.

The public modules are every module of the package whose dotted name has no part starting with
``_`` (``gravdir.synthetic.motion`` included); each gets ``reference/<module>.rst``, written at
``builder-inited`` (the pages are generated, not kept in the repository), with its docstring and
an entry (autodoc, rendered by numpydoc) for every name of its ``__all__``, in that order. A
class's entry includes the members it inherits from gravdir's own bases (a result's
``to_dict``, ``up_cov``). A name that a package re-exports from one of its public submodules
(``gravdir.synthetic.ur5_arm``, from ``gravdir.synthetic.robot``) gets a short entry of its own
that links to the full one, so that every public dotted name has its anchor and no object is
described twice. The package ``gravdir`` itself gets ``STANDARD_GRAVITY`` and the list of the
modules; its other names are documented in the module that defines them (``docs/api.md`` links
each name to that entry).

Docstrings write cross-references as a reader would, by the short name (``:func:`fit_sweep```
in ``gravdir.general``, ``See Also: estimate_up``, ``:attr:`up_cov``` in a result's docstring)
or as ``import gravdir`` gives it (``gravdir.fit_sweep``). Sphinx resolves a short name only
within the current module and class; ``missing-reference`` here resolves it to the documented
gravdir object whose dotted name ends with it: a full entry before a re-export's, then the one
nearest the reference's own module and class, then the shortest name. A dataclass field
(``:attr:`SerialChain.home_links```), described in its class's Attributes section, links to the
class. A name that matches nothing stays a warning, which fails the strict build.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from docutils import nodes

# tools/gen_api.py (on the path from docs/conf.py): the public modules, as the table lists them.
from gen_api import documented_in, documenting_module, public_modules
from sphinx.addnodes import pending_xref
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.util.nodes import make_refnode

PACKAGE = "gravdir"
OUT = "reference"
# Bases whose members a class's entry leaves out: documented by Python, not gravdir.
_FOREIGN_BASES = ("object", "Mapping", "Generic", "tuple", "dict", "Exception", "Warning")
# The dotted names whose entry only points to the full entry in a submodule.
ALIASES: set[str] = set()


def public_names(module: str) -> list[str]:
    """The names of `module`'s ``__all__`` as its reference page documents them."""
    if module == PACKAGE:
        return ["STANDARD_GRAVITY"]
    return list(importlib.import_module(module).__all__)


def _directive(module: str, name: str) -> str:
    obj = getattr(importlib.import_module(module), name)
    sub = documented_in(module, name)
    if sub is not None:
        # A re-export: an entry of its own (so that every public dotted name has its anchor),
        # whose text links to the full entry in the submodule.
        if isinstance(obj, type):
            kind = "exception" if issubclass(obj, BaseException) else "class"
            role = "exc" if kind == "exception" else "class"
        elif callable(obj):
            kind, role = "function", "func"
        else:
            kind = role = "data"
        ALIASES.add(f"{module}.{name}")
        return (
            f".. py:{kind}:: {name}\n   :module: {module}\n\n"
            f"   The same as :{role}:`{sub}.{name}`, re-exported here.\n"
        )
    if isinstance(obj, type):
        kind = "exception" if issubclass(obj, BaseException) else "class"
        # Members inherited from gravdir's own bases (a result's to_dict, up_cov), not from
        # the standard library's (a Mapping's keys and items).
        return (
            f".. auto{kind}:: {module}.{name}\n   :members:\n"
            f"   :inherited-members: {', '.join(_FOREIGN_BASES)}\n"
        )
    if callable(obj):
        return f".. autofunction:: {module}.{name}\n"
    return f".. autodata:: {module}.{name}\n   :no-value:\n"


def module_page(module: str) -> str:
    """The reST of `module`'s reference page."""
    title = f"``{module}``"
    lines = [title, "=" * len(title), "", f".. automodule:: {module}", "   :no-members:", ""]
    if module == PACKAGE:
        lines += [
            "Every other name of ``import gravdir`` is documented in the module that defines it"
            " (:doc:`/api`); the modules:",
            "",
            ".. toctree::",
            "   :maxdepth: 1",
            "",
            *(f"   {m}" for m in public_modules() if m != PACKAGE),
            "",
        ]
    names = public_names(module)
    if names:
        lines += [".. currentmodule:: " + module, ""]
        lines += [_directive(module, name) for name in names]
    return "\n".join(lines) + "\n"


def write_pages(app: Sphinx) -> None:
    """Write ``reference/<module>.rst`` for every public module; unchanged files keep their
    modification time, so an incremental build does not re-read them."""
    out = Path(app.srcdir) / OUT
    out.mkdir(exist_ok=True)
    wanted = {f"{m}.rst": module_page(m) for m in public_modules()}
    for stale in out.glob("*.rst"):
        if stale.name not in wanted:
            stale.unlink()
    for filename, text in wanted.items():
        path = out / filename
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")


def resolve_short_name(
    app: Sphinx, env: BuildEnvironment, node: pending_xref, contnode: nodes.Element
) -> nodes.Element | None:
    """A link for a short gravdir name that Sphinx found no target for in the current module."""
    if node.get("refdomain") != "py":
        return None
    target = node["reftarget"].lstrip(".~")
    exports = importlib.import_module(PACKAGE)._EXPORTS
    head, _, tail = target.partition(".")
    if head == PACKAGE and tail in exports:
        # gravdir.fit_sweep: the name as `import gravdir` gives it, documented in its module.
        target = f"{documenting_module(exports[tail][0])}.{tail}"
    domain: Any = env.get_domain("py")
    candidates = [
        (name, obj)
        for name, obj in domain.objects.items()
        if name.startswith(PACKAGE + ".")
        and (name == target or name.endswith("." + target))
        and not obj.aliased
    ]
    if not candidates and node["reftype"] == "attr" and "." in target:
        # A dataclass field (``SerialChain.home_links``) is described in its class's entry
        # (numpydoc's Attributes section), which has no anchor of its own: link to the class.
        parent = target.rsplit(".", 1)[0]
        candidates = [
            (name, obj)
            for name, obj in domain.objects.items()
            if name.startswith(PACKAGE + ".")
            and (name == parent or name.endswith("." + parent))
            and obj.objtype in {"class", "exception"}
        ]
    if not candidates:
        return None
    # The full entry before a re-export's, then the name nearest the reference's own module and
    # class (``up_cov`` in a result's docstring is that result's), then the shortest.
    context = ".".join(filter(None, [node.get("py:module"), node.get("py:class")]))

    def rank(candidate: tuple[str, Any]) -> tuple[bool, int, int, str]:
        name = candidate[0]
        shared = 0
        for a, b in zip(name.split("."), context.split("."), strict=False):
            if a != b:
                break
            shared += 1
        return name in ALIASES, -shared, name.count("."), name

    name, obj = min(candidates, key=rank)
    return make_refnode(app.builder, node["refdoc"], obj.docname, obj.node_id, contnode, name)


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("builder-inited", write_pages)
    app.connect("missing-reference", resolve_short_name)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
