"""Sphinx configuration of retrograd's documentation site.

Build it with ``nox -s docs`` (warnings are errors), or by hand from the
repository root in an environment where retrograd is installed::

    sphinx-build -W --keep-going -b html docs docs/_build/html

The API reference is generated from the docstrings of the installed
package (autosummary writes its stub pages into ``docs/api/generated`` at
build time; they are not committed), and the pictures of graphs are drawn
at build time by ``rg.autograd.graph.to_dot`` (``docs/_ext/rg_graph.py``),
which needs Graphviz's ``dot`` on the PATH.
"""
from __future__ import annotations

import os
import sys

# The docs' own extensions (rg_graph) live beside this file.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "_ext"))
# Pin BLAS to one thread: the build runs the graph examples, and a page's
# output must not depend on the machine.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import retrograd  # noqa: E402  (after the environment above)

project = "retrograd"
author = "the retrograd developers"
copyright = "the retrograd developers"
release = retrograd.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "sphinx.ext.graphviz",
    "rg_graph",
    "rg_omissions",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
templates_path = ["_templates"]

# MyST: ::: fences for directives, and anchors for headings (links such as
# design.md#the-abi).
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

# autodoc / autosummary: stub pages are generated at build time.
autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": False}
autodoc_typehints = "none"        # numpydoc's Parameters section says the types
autodoc_member_order = "bysource"

# numpydoc: autosummary lists the members (templates in _templates), so
# numpydoc does not add its own member tables.
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# Graphviz: SVG, drawn by the `dot` on the PATH.
graphviz_output_format = "svg"

# intersphinx is off: the build needs no network.


html_theme = "pydata_sphinx_theme"
html_title = f"retrograd {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
}
html_static_path: list[str] = []
html_show_sourcelink = False

# The API reference: one page per module of rg_api.MODULES (the list the
# docstring test reads too), written before Sphinx looks for sources.
import rg_api  # noqa: E402

rg_api.write_pages(os.path.join(os.path.dirname(os.path.abspath(__file__)), "api", "generated"))
