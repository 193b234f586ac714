"""Math rendered at build time, as MathML: the site needs no script and no
network to show a formula (MathJax from a CDN showed raw ``\\(g_t\\)``
offline, the normal case for a site built locally).

``latex2mathml`` turns each ``:math:`` role and ``math`` directive into
MathML, which browsers draw natively. A formula it cannot convert fails the
build, naming it, rather than showing as raw LaTeX.
"""
from __future__ import annotations

from docutils import nodes
from latex2mathml.converter import convert
from sphinx.util import logging

logger = logging.getLogger(__name__)


def _mathml(latex: str, display: str, node) -> str:
    try:
        return convert(latex, display=display)
    except Exception as exc:  # the build names the formula and why
        logger.warning("rg_math: cannot convert %r to MathML: %s", latex, exc, location=node)
        return f"<code>{latex}</code>"


def visit_math(self, node):
    self.body.append(self.starttag(node, "span", "", CLASS="math notranslate"))
    self.body.append(_mathml(node.astext(), "inline", node))
    self.body.append("</span>")
    raise nodes.SkipNode


def visit_displaymath(self, node):
    if node.get("label"):
        self.body.append(self.starttag(node, "div", "", CLASS="math notranslate", ids=[node["label"]]))
    else:
        self.body.append(self.starttag(node, "div", "", CLASS="math notranslate"))
    latex = node.astext()
    parts = [latex] if node.get("nowrap") else [p for p in latex.split("\n\n") if p.strip()]
    for part in parts:
        self.body.append(_mathml(part, "block", node))
    self.body.append("</div>\n")
    raise nodes.SkipNode


def setup(app):
    app.add_html_math_renderer("mathml", (visit_math, None), (visit_displaymath, None))
    app.config.html_math_renderer = "mathml"
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
