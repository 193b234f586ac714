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
    "sphinx.ext.viewcode",
    "numpydoc",
    "sphinx.ext.graphviz",
    "sphinx_copybutton",
    "rg_autodoc",
    "rg_changelog",
    "rg_graph",
    "rg_math",
    "rg_omissions",
    "rg_run",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "api/generated/sections.rst.inc"]
templates_path = ["_templates"]

# MyST: ::: fences for directives, and anchors for headings (links such as
# design.md#the-abi).
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

# autodoc / autosummary: rg_api writes the module and object pages at build
# time (below); each class page names the members it describes.
autosummary_generate = False
autosummary_imported_members = True
autodoc_typehints = "none"        # numpydoc's Parameters section says the types
autodoc_member_order = "bysource"

# Every cross-reference must resolve (-n -W). The names below are outside
# the project, which has no intersphinx (the build needs no network): the
# standard library's and NumPy's, named by the docstrings that say where a
# name comes from.
nitpicky = True
nitpick_ignore = [
    ("py:class", "abc.ABC"),
    ("py:class", "contextlib.ContextDecorator"),
    ("py:class", "enum.Enum"),
    ("py:mod", "pickle"),
]

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
    # the left sidebar lists a section's pages, down one level: the API
    # reference's modules, not its thousand object pages (reached from their
    # module's page)
    "navigation_depth": 1,
}
# The top-level pages have no section to navigate: no left sidebar (it would
# show an empty "Section Navigation").
html_sidebars = {
    os.path.splitext(name)[0]: []
    for name in os.listdir(os.path.dirname(os.path.abspath(__file__)))
    if name.endswith(".md")
}
# An object's page (a class, a function) is reached from its module's page
# and its breadcrumbs, and gives its width to the text: no left sidebar.
# (The theme renders the sidebar anew for each page of a thousand, most of a
# build's time.)
html_sidebars["api/generated/objects/*"] = []
html_static_path = ["_static"]
html_css_files = ["rg.css"]
html_show_sourcelink = False

# the copy button copies the code without the prompts of ``>>>`` examples
copybutton_prompt_text = r">>> |\.\.\. |\$ "
copybutton_prompt_is_regexp = True
copybutton_only_copy_prompt_lines = True

# The API reference: one page per module of rg_api.MODULES (the list the
# docstring test reads too), written before Sphinx looks for sources.
import rg_api  # noqa: E402

rg_api.write_pages(os.path.join(os.path.dirname(os.path.abspath(__file__)), "api", "generated"))
