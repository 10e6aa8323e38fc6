"""MkDocs hook: the example scripts as executed notebooks in the documentation site.

Every ``examples/*.py`` (a jupytext percent script) is read as a notebook, executed in a fresh
IPython kernel (nbclient; matplotlib's inline backend, whatever ``MPLBACKEND`` the build runs
with, so that figures left open at the end of a cell are shown), and rendered into the page
``examples/<name>.md`` of the site: markdown cells as they are (their maths goes through the same
``pymdownx.arithmatex`` as every other page), code cells as Python blocks, and below each its
printed text, rich tables (``_repr_html_`` / ``_repr_markdown_``) and figures (PNG/SVG files
beside the page); ``# noqa`` pragmas are dropped from the code shown. The executed notebook is
published too, as ``examples/<name>.ipynb``.

A cell that raises fails the build with the cell's traceback. No notebook template is used, so the
pages carry no script or stylesheet of their own (no require.js, no MathJax from a CDN).

An example that needs what the documentation build does not install is shown without being
executed, its page saying why (``NOT_EXECUTED``): ``examples/fleet.py`` starts a Dask cluster of
worker processes, needs the ``fleet`` extra, and runs in a CI step of its own, in a venv that
has it.

A page may include an executed example in place of the line ``<!-- example: NAME -->``: its cells
and outputs without its title (``docs/getting_started.md`` shows the quickstart that way).

Enabled in ``mkdocs.yml`` by ``hooks: [tools/docs_notebooks.py]``. ``GRAVDIR_DOCS_EXAMPLES``, a
directory, overrides where the examples are read from (to check, for instance, that a copy of
them with one broken example fails the build).
"""

from __future__ import annotations

import base64
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jupytext
import nbformat
from jupyter_client.manager import KernelManager
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError

SITE_DIR = "examples"
CELL_TIMEOUT_S = 300
INCLUDE = re.compile(r"^<!-- example: ([A-Za-z0-9_]+) -->[ \t]*$", re.MULTILINE)
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# Reprs such as "<matplotlib.legend.Legend at 0x7f...>" say nothing to a reader.
_ADDRESS_REPR = re.compile(r"^<.* at 0x[0-9a-fA-F]+>$", re.DOTALL)
_NOQA = re.compile(r"[ \t]+# noqa\b.*$", re.MULTILINE)
_KERNEL_ENV = {"MPLBACKEND": "module://matplotlib_inline.backend_inline"}
# Examples shown but not executed by the build, with the reason their page states.
NOT_EXECUTED = {
    "fleet": (
        "it starts a Dask cluster of two worker processes and needs the `fleet` extra "
        "(`pip install -e '.[fleet]'`), which the documentation build does not install; CI runs "
        "it in a step of its own, in a venv that has the extra"
    ),
}


@dataclass
class Rendered:
    """One executed example: its title, page body (cells and outputs) and figure files."""

    name: str
    title: str
    body: str
    notebook: str
    assets: dict[str, bytes] = field(default_factory=dict)


_RENDERED: dict[str, Rendered] = {}


def examples_dir(config: MkDocsConfig) -> Path:
    """The directory of the example scripts: ``examples/`` beside ``mkdocs.yml``."""
    override = os.environ.get("GRAVDIR_DOCS_EXAMPLES")
    if override:
        return Path(override).resolve()
    return Path(config.config_file_path).resolve().parent / "examples"


def execute(script: Path, cwd: Path) -> nbformat.NotebookNode:
    """Read ``script`` with jupytext and run it in a new kernel; raise on the first failing cell."""
    nb: nbformat.NotebookNode = jupytext.read(script)
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    env = dict(os.environ, **_KERNEL_ENV)
    # The kernel talks to this process over Unix sockets in a private directory (not TCP).
    with tempfile.TemporaryDirectory(prefix="gravdir-kernel-") as sockets:
        km = KernelManager(kernel_name="python3", transport="ipc", ip=str(Path(sockets) / "k"))
        client = NotebookClient(
            nb, km=km, timeout=CELL_TIMEOUT_S, resources={"metadata": {"path": str(cwd)}}
        )
        try:
            client.execute(env=env, cwd=str(cwd))
        except (CellExecutionError, CellTimeoutError) as exc:
            index = _failing_cell(nb)
            where = f"cell {index + 1}" if index is not None else "a cell"
            raise PluginError(
                f"{script.name}: {where} failed while the docs were built:\n"
                f"{_ANSI.sub('', str(exc))}"
            ) from exc
    return nb


def _failing_cell(nb: nbformat.NotebookNode) -> int | None:
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and any(o.output_type == "error" for o in cell.outputs):
            return i
    return None


def _fence(text: str, lang: str) -> str:
    ticks = "```"
    while ticks in text:
        ticks += "`"
    return f"{ticks}{lang}\n{text.rstrip()}\n{ticks}"


def _joined(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def _text_block(text: str, css: str = "nb-output") -> str:
    return f'<div class="{css}" markdown="1">\n\n{_fence(text, "text")}\n\n</div>'


def _outputs(
    cell: nbformat.NotebookNode, name: str, prefix: str, assets: dict[str, bytes]
) -> list[str]:
    blocks: list[str] = []
    streams: list[tuple[str, str]] = []

    def flush() -> None:
        for stream, text in streams:
            css = "nb-output nb-stderr" if stream == "stderr" else "nb-output nb-stdout"
            blocks.append(_text_block(text, css))
        streams.clear()

    for out in cell.outputs:
        if out.output_type == "stream":
            text = _ANSI.sub("", _joined(out.text))
            if streams and streams[-1][0] == out.name:
                streams[-1] = (out.name, streams[-1][1] + text)
            else:
                streams.append((out.name, text))
            continue
        flush()
        if out.output_type not in ("display_data", "execute_result"):
            continue
        data = out.data
        if "image/png" in data or "image/svg+xml" in data:
            ext = "png" if "image/png" in data else "svg"
            raw = data["image/png"] if ext == "png" else data["image/svg+xml"]
            figure = f"figure-{len(assets) + 1}.{ext}"
            assets[figure] = base64.b64decode(raw) if ext == "png" else _joined(raw).encode()
            blocks.append(f"![Figure {len(assets)}]({prefix}{name}/{figure})")
        elif "text/html" in data:
            html = _joined(data["text/html"]).strip()
            blocks.append(f'<div class="nb-output nb-html">\n{html}\n</div>')
        elif "text/markdown" in data:
            blocks.append(_joined(data["text/markdown"]).strip())
        elif "text/plain" in data:
            text = _joined(data["text/plain"])
            if not _ADDRESS_REPR.match(text.strip()):
                blocks.append(_text_block(text))
    flush()
    return blocks


def _demote(markdown: str, levels: int) -> str:
    lines, fenced = [], False
    for line in markdown.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and re.match(r"#{1,6} ", line):
            line = "#" * levels + line
        lines.append(line)
    return "\n".join(lines)


def render(name: str, nb: nbformat.NotebookNode, prefix: str = "", demote: int = 0) -> Rendered:
    """Markdown of an executed notebook.

    Figure links are ``{prefix}{name}/figure-N.ext``; the headings of markdown cells are moved
    ``demote`` levels down (for a notebook included under a page's own section).
    """
    assets: dict[str, bytes] = {}
    blocks: list[str] = []
    title = name.replace("_", " ").capitalize()
    for i, cell in enumerate(nb.cells):
        source = _joined(cell.source).strip()
        if cell.cell_type == "markdown":
            if i == 0 and source.startswith("# "):
                first, _, rest = source.partition("\n")
                title = first[2:].strip()
                source = rest.strip()
            if source and demote:
                source = _demote(source, demote)
            if source:
                blocks.append(source)
        elif cell.cell_type == "code":
            # Lint pragmas speak to ruff, not to a reader.
            source = _NOQA.sub("", source)
            if source:
                blocks.append(_fence(source, "python"))
            blocks.extend(_outputs(cell, name, prefix, assets))
    text = nbformat.writes(nb)  # type: ignore[no-untyped-call]
    return Rendered(name, title, "\n\n".join(blocks) + "\n", text, assets)


def _page(rendered: Rendered) -> str:
    if rendered.name in NOT_EXECUTED:
        note = (
            f'!!! note "Not run when this site was built"\n'
            f"    This page is `examples/{rendered.name}.py` shown as a notebook without its "
            f"outputs: {NOT_EXECUTED[rendered.name]}. Download the "
            f"[notebook]({rendered.name}.ipynb), or run the script from a checkout: "
            f"`python examples/{rendered.name}.py`."
        )
        return f"# {rendered.title}\n\n{note}\n\n{rendered.body}"
    note = (
        f'!!! note "Run when this site was built"\n'
        f"    This page is `examples/{rendered.name}.py` executed as a notebook while the "
        f"documentation was built; the outputs below are that run's. Download the "
        f"[notebook with its outputs]({rendered.name}.ipynb), or run the script from a checkout: "
        f"`python examples/{rendered.name}.py`."
    )
    return f"# {rendered.title}\n\n{note}\n\n{rendered.body}"


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Execute every example and add its page, notebook and figures to the site's files."""
    _RENDERED.clear()
    source = examples_dir(config)
    root = Path(config.config_file_path).resolve().parent
    scripts = sorted(source.glob("*.py"))
    if not scripts:
        raise PluginError(f"no example scripts in {source}")
    for script in scripts:
        name = script.stem
        if name in NOT_EXECUTED:
            notebook: nbformat.NotebookNode = jupytext.read(script)
            rendered = render(name, notebook)
        else:
            rendered = render(name, execute(script, root))
        _RENDERED[name] = rendered
        files.append(File.generated(config, f"{SITE_DIR}/{name}.md", content=_page(rendered)))
        files.append(File.generated(config, f"{SITE_DIR}/{name}.ipynb", content=rendered.notebook))
        for figure, data in rendered.assets.items():
            files.append(File.generated(config, f"{SITE_DIR}/{name}/{figure}", content=data))
    return files


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    """Replace ``<!-- example: NAME -->`` lines with the executed example ``NAME``."""

    def include(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in _RENDERED:
            raise PluginError(f"{page.file.src_uri}: no example named {name!r} to include")
        depth = page.file.src_uri.count("/")
        prefix = "../" * depth + f"{SITE_DIR}/"
        text = _RENDERED[name].notebook
        notebook = nbformat.reads(text, as_version=4)  # type: ignore[no-untyped-call]
        # The included cells sit under the including page's section: one heading level down.
        return render(name, notebook, prefix, demote=1).body

    return INCLUDE.sub(include, markdown)


def on_serve(server: Any, config: MkDocsConfig, builder: Any) -> Any:
    """Under ``mkdocs serve``, rebuild (and re-execute) when an example changes."""
    server.watch(str(examples_dir(config)))
    return server
