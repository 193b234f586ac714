"""The ``rg-graph`` directive: run a snippet of Python at build time and
draw the backward graph it makes with ``rg.autograd.graph.to_dot``.

The content is shown as a code block, then executed; it must bind the name
``graph`` to what ``to_dot`` returned. The DOT source goes to Sphinx's
graphviz extension, which renders it with the ``dot`` binary. Nothing is
committed: the pictures are drawn from the code on every build, so they
always show what the code does today.

Usage (MyST)::

    ```{rg-graph}
    :caption: y = (x * w).sum()

    import retrograd as rg
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    graph = rg.autograd.graph.to_dot((x * x).sum(), params={"x": x})
    ```
"""
from __future__ import annotations

import traceback

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.ext.graphviz import figure_wrapper, graphviz
from sphinx.util.docutils import SphinxDirective


def _dot_source(graph) -> str:
    # to_dot returns DOT source text: a str subclass or an object holding it
    # in .source (as the graphviz package's Digraph does).
    source = getattr(graph, "source", graph)
    if not isinstance(source, str):
        raise TypeError(f"`graph` must be DOT source text or have a .source, got {type(graph).__name__}")
    return str(source)


class RgGraph(SphinxDirective):
    has_content = True
    option_spec = {
        "caption": directives.unchanged,
        "alt": directives.unchanged,
        "hide-code": directives.flag,
    }

    def run(self) -> list[nodes.Node]:
        code = "\n".join(self.content)
        namespace: dict = {"__name__": f"rg_graph:{self.env.docname}"}
        try:
            exec(compile(code, f"<rg-graph in {self.env.docname}>", "exec"), namespace)
            dot = _dot_source(namespace["graph"])
        except Exception:  # the build must say which snippet failed and why
            return [self.state.document.reporter.error(
                f"rg-graph: the snippet failed:\n{traceback.format_exc()}", line=self.lineno)]
        result: list[nodes.Node] = []
        if "hide-code" not in self.options:
            block = nodes.literal_block(code, code, language="python")
            result.append(block)
        node = graphviz()
        node["code"] = dot
        node["options"] = {"docname": self.env.docname}
        node["alt"] = self.options.get("alt", self.options.get("caption", "backward graph"))
        if "caption" in self.options:
            result.append(figure_wrapper(self, node, self.options["caption"]))
        else:
            result.append(node)
        return result


def setup(app):
    app.setup_extension("sphinx.ext.graphviz")
    app.add_directive("rg-graph", RgGraph)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
