"""The ``rg-omissions`` directive: the table of torch names retrograd
deliberately lacks, from ``retrograd._omissions.OMISSIONS`` (the one source
the AttributeError messages and tests/fidelity/test_torch_coverage.py read), and
the coverage of torch's names when torch is installed at build time.

Usage (MyST)::

    ```{rg-omissions}
    ```
"""
from __future__ import annotations

import importlib

from docutils import nodes
from sphinx.util.docutils import SphinxDirective


def _table(rows: list[list[str]], header: list[str]) -> nodes.table:
    table = nodes.table()
    group = nodes.tgroup(cols=len(header))
    table += group
    for width in (30, 40, 30)[:len(header)]:
        group += nodes.colspec(colwidth=width)

    def row(cells, head=False):
        r = nodes.row()
        for i, c in enumerate(cells):
            entry = nodes.entry()
            # the names in code style, the prose as it is
            para = nodes.paragraph("", "", nodes.literal(text=c)) if i == 0 and not head else nodes.paragraph(text=c)
            entry += para
            r += entry
        return r

    thead = nodes.thead()
    thead += row(header, head=True)
    group += thead
    body = nodes.tbody()
    for cells in rows:
        body += row(cells)
    group += body
    return table


def coverage_lines() -> list[str]:
    """The coverage of torch's names, one line per namespace (empty without torch)."""
    try:
        import torch  # noqa: F401
    except ImportError:
        return []
    from retrograd import _omissions
    out = []
    total = covered = 0
    for ns, module in _omissions.MODULES.items():
        if ns == "torch.Tensor":
            names = {n for n in dir(torch.Tensor) if not n.startswith("_")}
            ours = importlib.import_module("retrograd").Tensor
        else:
            mod = importlib.import_module(ns)
            names = {n for n in (getattr(mod, "__all__", None) or dir(mod)) if not n.startswith("_")}
            ours = importlib.import_module(module)
        table = _omissions.index()[ns]
        present = {n for n in names if hasattr(ours, n)}
        omitted = {n for n in names - present if n in table}
        total += len(names)
        covered += len(present) + len(omitted)
        out.append(f"{ns}: {len(names)} names, {len(present)} present, {len(omitted)} deliberately omitted, "
                   f"{len(names) - len(present) - len(omitted)} missing")
    out.append(f"all: {100.0 * covered / total:.1f}% of {total} names present or deliberately omitted "
               f"(torch {torch.__version__})")
    return out


class RgOmissions(SphinxDirective):
    has_content = False

    def run(self):
        from retrograd import _omissions
        out: list[nodes.Node] = []
        lines = coverage_lines()
        if lines:
            bullets = nodes.bullet_list()
            for line in lines:
                item = nodes.list_item()
                item += nodes.paragraph(text=line)
                bullets += item
            out.append(bullets)
        else:
            out.append(nodes.paragraph(text="(torch is not installed where these docs were built: run "
                                            "tests/fidelity/test_torch_coverage.py for the coverage figures.)"))
        for ns, rows in _omissions.OMISSIONS.items():
            if not rows:
                continue
            # a rubric, not a section: a directive's output cannot open sections
            out.append(nodes.rubric(text=ns))
            cells = [[", ".join(names.split()), reason, instead] for names, reason, instead in rows]
            out.append(_table(cells, ["Names", "Why", "Use instead"]))
        return out


def setup(app):
    app.add_directive("rg-omissions", RgOmissions)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
