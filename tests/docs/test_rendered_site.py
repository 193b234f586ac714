"""The built documentation site, read as a browser would: the HTML, not the sources.

The site is built by ``nox -s docs`` (Sphinx, ``-n -W``), which then runs this
file with ``RG_DOCS_HTML`` naming the build folder. Without it the tests skip:
the ``tests`` sessions do not build the site. By hand::

    python -m sphinx -n -W --keep-going -b html docs /tmp/docs_html
    RG_DOCS_HTML=/tmp/docs_html python -m pytest tests/docs/test_rendered_site.py

What it checks:

* every public name of ``rg``, ``rg.Tensor``, ``rg.nn``, ``rg.nn.functional``,
  ``rg.optim``, ``rg.autograd`` and ``rg.utils.data`` has an anchor (an HTML
  ``id``) under its own spelling: ``retrograd.autograd.grad``,
  ``retrograd.Tensor.add``, ``module-retrograd.nn.functional``;
* the classes' members are rendered (Module's, Optimizer's, Function's ...);
* no page loads a script, a stylesheet, a font or an image from the
  network, and formulas are MathML (no MathJax to fetch);
* every tutorial page shows at least one output block;
* the changelog page lists every distribution with its version.
"""
from __future__ import annotations

import functools
import importlib
import os
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
_HTML = os.environ.get("RG_DOCS_HTML")

pytestmark = pytest.mark.skipif(
    not _HTML, reason="RG_DOCS_HTML names no built site (nox -s docs builds it and sets it)")

NAMESPACES = ("retrograd", "retrograd.nn", "retrograd.nn.functional", "retrograd.optim", "retrograd.autograd",
              "retrograd.utils.data")


def _site() -> pathlib.Path:
    site = pathlib.Path(_HTML or "")
    if not site.is_absolute():
        site = ROOT / site
    assert (site / "index.html").is_file(), f"{site} holds no built site (no index.html)"
    return site


@functools.cache
def _pages() -> dict[str, str]:
    site = _site()
    return {p.relative_to(site).as_posix(): p.read_text(encoding="utf-8") for p in site.rglob("*.html")
            if "_sources" not in p.parts and "_modules" not in p.parts}


@functools.cache
def _ids() -> frozenset[str]:
    ids: set[str] = set()
    for text in _pages().values():
        ids.update(re.findall(r'\bid="([^"]+)"', text))
    return frozenset(ids)


def _public_names(module) -> list[str]:
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in dir(module) if not n.startswith("_")]
    return list(dict.fromkeys(names))


def _anchors_wanted() -> dict[str, tuple[str, ...]]:
    """Each public name (as a user spells it) and the ids that would be its anchor."""
    import types

    wanted: dict[str, tuple[str, ...]] = {}
    for modname in NAMESPACES:
        module = importlib.import_module(modname)
        for name in _public_names(module):
            full = f"{modname}.{name}"
            value = getattr(module, name, None)
            if isinstance(value, types.ModuleType):
                wanted[full] = (f"module-{full}", f"module-{value.__name__}")
            else:
                wanted[full] = (full,)
    tensor = importlib.import_module("retrograd").Tensor
    for name in dir(tensor):
        if not name.startswith("_"):
            wanted[f"retrograd.Tensor.{name}"] = (f"retrograd.Tensor.{name}",)
    return wanted


def test_every_public_name_has_an_anchor():
    ids = _ids()
    wanted = _anchors_wanted()
    missing = sorted(name for name, anchors in wanted.items() if not any(a in ids for a in anchors))
    assert not missing, (f"{len(missing)} of {len(wanted)} public names have no anchor in the built site:\n  "
                         + "\n  ".join(missing))


@pytest.mark.parametrize("cls, members", [
    ("retrograd.Tensor", ("backward", "register_hook", "grad", "requires_grad", "add", "view")),
    ("retrograd.nn.Module", ("forward", "train", "eval", "state_dict", "load_state_dict", "parameters",
                             "register_forward_hook", "to", "zero_grad")),
    ("retrograd.optim.Optimizer", ("step", "zero_grad", "state_dict", "add_param_group")),
    ("retrograd.autograd.Function", ("forward", "backward", "apply")),
    ("retrograd.autograd.FunctionCtx", ("save_for_backward", "mark_dirty", "mark_non_differentiable")),
    ("retrograd.Node", ("name", "next_functions", "register_hook")),
    ("retrograd.utils.data.DataLoader", ("__iter__",)),
])
def test_class_members_are_rendered(cls, members):
    ids = _ids()
    present = [m for m in members if f"{cls}.{m}" in ids]
    if cls.endswith("DataLoader"):            # its members are few: the class page itself must be there
        assert cls in ids
        return
    assert present == list(members), f"{cls}: members without an anchor: {set(members) - set(present)}"


def test_class_pages_show_members_and_python_signatures():
    page = _pages()["api/generated/objects/retrograd.Tensor.html"]
    # signatures as Python writes them: no C type before a parameter name
    assert "bool requires_grad" not in page
    assert "requires_grad" in page
    module_page = _pages()["api/generated/objects/retrograd.nn.Linear.html"]
    assert "_ConvNd" not in _pages()["api/generated/objects/retrograd.nn.Conv2d.html"]
    assert "Bases:" in module_page and "retrograd.nn.Module" in module_page


_NETWORK = re.compile(r"<(script|link|img|iframe|source|video|audio)\b[^>]*\b(src|href)=\"(https?:)?//[^\"]*\"",
                      re.I)
_CSS_NETWORK = re.compile(r"(@import\s+(url\()?|url\()\s*['\"]?(https?:)?//", re.I)


def test_no_page_loads_anything_from_the_network():
    offenders = []
    for path, text in _pages().items():
        for m in _NETWORK.finditer(text):
            if m.group(1).lower() == "link" and 'rel="canonical"' in m.group(0):
                continue                      # a link, not a download
            offenders.append(f"{path}: {m.group(0)[:160]}")
    site = _site()
    for css in list(site.rglob("*.css")) + list(site.rglob("*.js")):
        text = css.read_text(encoding="utf-8", errors="replace")
        if css.suffix == ".css":
            for m in _CSS_NETWORK.finditer(text):
                offenders.append(f"{css.relative_to(site)}: {text[m.start():m.start() + 120]}")
    assert not offenders, "pages that fetch from the network:\n  " + "\n  ".join(offenders[:30])


def test_math_is_rendered_without_a_script():
    pages = _pages()
    assert not any("mathjax" in text.lower() for text in pages.values()), "a page loads MathJax"
    with_math = [p for p, text in pages.items() if 'class="math' in text]
    assert with_math, "no page has a formula: the check below would check nothing"
    raw = [p for p in with_math if re.search(r'class="math[^"]*">\\\(', pages[p])]
    assert not raw, f"formulas left as LaTeX: {raw[:5]}"
    assert all("<math" in pages[p] for p in with_math)


def test_every_tutorial_shows_output():
    pages = _pages()
    tutorials = sorted(p for p in pages if p.startswith("tutorials/") and not p.endswith("index.html"))
    assert len(tutorials) >= 7, tutorials
    silent = [p for p in tutorials if not re.search(r'class="[^"]*\brg-output\b', pages[p])]
    assert not silent, f"tutorial pages without an output block: {silent}"
    no_script = [p for p in tutorials if not re.search(r'href="[^"]*\.py"[^>]*download|download[^>]*href="[^"]*\.py"',
                                                        pages[p]) and ".py\"" not in pages[p]]
    assert not no_script, f"tutorial pages without a script to download: {no_script}"


def test_changelog_lists_every_distribution_and_version():
    page = _pages()["changelog.html"]
    for folder, dist in (("core", "retrograd-core"), ("engine", "retrograd-engine"),
                         ("forward_ad", "retrograd-forward-ad"), ("profiler", "retrograd-profiler"),
                         ("compile", "retrograd-compile"), ("distributed", "retrograd-distributed"),
                         ("packages/retrograd", "retrograd")):
        version = (ROOT / folder / "VERSION").read_text(encoding="utf-8").strip()
        assert dist in page and version in page, f"{dist} {version} is not on the changelog page"


def test_pages_have_source_links_and_copy_buttons():
    pages = _pages()
    linear = pages["api/generated/objects/retrograd.nn.Linear.html"]
    assert "viewcode-link" in linear, "no [source] link on a Python class's page"
    assert "copybutton" in pages["quickstart.html"] or "clipboard" in pages["quickstart.html"]
