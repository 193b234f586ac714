"""The distributions' versions and changelogs, read from the repository at
build time, so the site never disagrees with the files it documents.

A Markdown page writes a marker line and gets, in its place:

``% rg:versions``
    a table of the distributions: name, version (the ``VERSION`` file the
    build reads), what it gives, and the pip extra of the umbrella that
    brings it in;
``% rg:changelogs``
    every distribution's ``CHANGELOG.md``, one section each, its headings
    moved one level down.

(``%`` starts a MyST comment: a page read without this extension shows
nothing there.) The page is rebuilt when a changelog or a version changes.
"""
from __future__ import annotations

import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# (distribution, folder, what it gives, the umbrella's extra that installs it)
DISTRIBUTIONS = (
    ("retrograd", "packages/retrograd", "the API you use: `rg.nn`, `rg.optim`, `rg.utils.data`, `rg.autograd`, "
     "`rg.linalg`, saving", "(the umbrella)"),
    ("retrograd-core", "core", "tensors, the operations, the graph's data structures (Cython)", "always"),
    ("retrograd-engine", "engine", "the backward engine: `backward()`, `grad()`, worker threads", "always"),
    ("retrograd-forward-ad", "forward_ad", "forward-mode AD: dual levels and tangents", "`forward-ad`"),
    ("retrograd-profiler", "profiler", "op and backward-node events, tables, Chrome traces, memory timelines",
     "`profiler`"),
    ("retrograd-compile", "compile", "`rg.compile`: traced forward and backward as straight-line programs",
     "`compile`"),
    ("retrograd-distributed", "distributed", "process groups and collectives over MPI, DDP's backend",
     "`distributed`"),
)


def version(folder: str) -> str:
    with open(os.path.join(ROOT, folder, "VERSION"), encoding="utf-8") as f:
        return f.read().strip()


def versions_table() -> str:
    lines = ["| distribution | version | what it gives | installed by |", "|---|---|---|---|"]
    for name, folder, what, extra in DISTRIBUTIONS:
        lines.append(f"| `{name}` | {version(folder)} | {what} | {extra} |")
    return "\n".join(lines)


def changelogs() -> str:
    parts = []
    for name, folder, _, _ in DISTRIBUTIONS:
        path = os.path.join(ROOT, folder, "CHANGELOG.md")
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8") as f:
            text = f.read()
        # one level down: the file's "# name changelog" becomes a section of the page
        text = re.sub(r"^(#{1,5}) ", lambda m: "#" + m.group(1) + " ", text, flags=re.M)
        text = re.sub(r"^## .*$", f"## {name} {version(folder)}", text, count=1, flags=re.M)
        parts.append(text.strip())
    return "\n\n".join(parts)


def _source_read(app, docname, source):
    text = source[0]
    if "% rg:versions" not in text and "% rg:changelogs" not in text:
        return
    for _, folder, _, _ in DISTRIBUTIONS:
        for fname in ("VERSION", "CHANGELOG.md"):
            path = os.path.join(ROOT, folder, fname)
            if os.path.exists(path):
                app.env.note_dependency(path)
    text = re.sub(r"^% rg:versions[ \t]*$", lambda _: versions_table(), text, flags=re.M)
    text = re.sub(r"^% rg:changelogs[ \t]*$", lambda _: changelogs(), text, flags=re.M)
    source[0] = text


def setup(app):
    app.connect("source-read", _source_read)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
