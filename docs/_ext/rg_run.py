"""The ``rg-run`` directive: code that runs when the site is built, shown
with what it printed and the pictures it drew, as a notebook does.

The ``rg-run`` blocks of a page run in order, in one namespace, in a
scratch folder, as a reader typing them into Python would; each block is
shown followed by its output:

* what it printed (``print``), and the ``repr`` of the value of its last
  line when that line is an expression (not ``None``), as Python's prompt
  shows it;
* a picture when that value is a graph from ``rg.autograd.graph.to_dot``
  (drawn by Graphviz's ``dot``, as the ``rg-graph`` directive does), and
  each Matplotlib figure the block left open (SVG).

A block that raises fails the build, naming the page and the block, unless
it has the ``:raises:`` option, which shows the exception's last line as
the output (for examples of errors).

Each page that has ``rg-run`` blocks also gets a link, under its title, to
the whole page as a Python script (its prose as comments), written into
``tutorials/generated/`` (not committed) and served by ``{download}``.

Outputs are cached, keyed by the page's code, the Python and the retrograd
version, in ``<doctrees>/rg_run/`` (kept by ``-E``), so that a rebuild
runs only the pages whose code changed; ``RG_DOCS_RERUN=1`` runs every
page again. ``tests/docs/test_tutorials.py`` runs every page's blocks on
every test run, so a cached output cannot hide a page that broke.

Usage (MyST)::

    ```{rg-run}
    import retrograd as rg
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum()
    ```
"""
from __future__ import annotations

import json
import os
import re

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from rg_exec import blocks, cache_key, run_page, script

logger = logging.getLogger(__name__)

# -- Sphinx --------------------------------------------------------------------

_RESULTS: dict[str, list[dict]] = {}


def _source_read(app, docname, source):
    text = source[0]
    page_blocks = blocks(text)
    if not page_blocks:
        return
    cache_dir = os.path.join(app.doctreedir, "rg_run")
    os.makedirs(cache_dir, exist_ok=True)
    key = cache_key(page_blocks)
    cache = os.path.join(cache_dir, docname.replace("/", "__") + ".json")
    results = None
    if os.environ.get("RG_DOCS_RERUN") != "1" and os.path.exists(cache):
        with open(cache, encoding="utf-8") as f:
            stored = json.load(f)
        if stored.get("key") == key:
            results = stored["results"]
    if results is None:
        results = run_page(page_blocks, docname)
        with open(cache, "w", encoding="utf-8") as f:
            json.dump({"key": key, "results": results}, f)
    _RESULTS[docname] = results
    # the script, and a link to it under the page's title
    title_match = re.search(r"^# (.+)$", text, re.M)
    title = title_match.group(1).strip() if title_match else docname
    name = os.path.basename(docname) + ".py"
    folder = os.path.join(app.srcdir, os.path.dirname(docname), "generated")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, name)
    body = script(title, page_blocks)
    if not os.path.exists(path) or open(path, encoding="utf-8").read() != body:
        with open(path, "w", encoding="utf-8") as f:
            f.write(body)
    link = (f"\n\n```{{note}}\nThis page runs when the site is built: the outputs below are what the code "
            f"printed. Download it as a script: {{download}}`{name} <generated/{name}>`.\n```\n")
    if title_match:
        source[0] = text[:title_match.end()] + link + text[title_match.end():]


class RgRun(SphinxDirective):
    has_content = True
    option_spec = {"raises": directives.flag}

    def run(self) -> list[nodes.Node]:
        index = self.env.temp_data.get("rg_run_index", 0)
        self.env.temp_data["rg_run_index"] = index + 1
        results = _RESULTS.get(self.env.docname, [])
        code = "\n".join(self.content).rstrip() + "\n"
        out: list[nodes.Node] = [nodes.literal_block(code, code, language="python")]
        if index >= len(results):
            return out + [self.state.document.reporter.error(
                f"rg-run: block {index + 1} did not run (an earlier block of the page failed)", line=self.lineno)]
        result = results[index]
        text = result["stdout"]
        if result["error"]:
            if "raises" not in self.options:
                return out + [self.state.document.reporter.error(
                    f"rg-run: block {index + 1} of {self.env.docname} failed:\n"
                    f"{result.get('traceback') or result['error']}", line=self.lineno)]
            text += result["error"] + "\n"
        elif "raises" in self.options:
            return out + [self.state.document.reporter.error(
                f"rg-run: block {index + 1} has :raises: but raised nothing", line=self.lineno)]
        if text.strip():
            box = nodes.container(classes=["rg-output"])
            box += nodes.literal_block(text, text.rstrip("\n"), language="none", classes=["rg-output-text"])
            out.append(box)
        if result["dot"]:
            from sphinx.ext.graphviz import graphviz
            node = graphviz()
            node["code"] = result["dot"]
            node["options"] = {"docname": self.env.docname}
            node["alt"] = "the backward graph drawn by rg.autograd.graph.to_dot"
            box = nodes.container(classes=["rg-output", "rg-output-picture"])
            box += node
            out.append(box)
        for svg in result["figures"]:
            box = nodes.container(classes=["rg-output", "rg-output-picture"])
            box += nodes.raw("", svg, format="html")
            out.append(box)
        return out


def setup(app):
    app.setup_extension("sphinx.ext.graphviz")
    app.add_directive("rg-run", RgRun)
    app.connect("source-read", _source_read)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
