"""The code on the documentation site's pages runs and prints what the page says.

Every ```pycon block of a page under docs/ is a doctest; the blocks of one
page run in order in one namespace, as a reader would type them. Plain
```python blocks are not run (they show programs and shell set-up); the
tutorials' complete programs are files of examples/, run by tests/examples.
"""
from __future__ import annotations

import doctest
import pathlib
import re

import numpy as np
import pytest

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs"
_BLOCK = re.compile(r"^([ \t]*)```pycon[^\n]*\n(.*?)^\1```", re.S | re.M)


def _pages():
    return sorted(p for p in DOCS.rglob("*.md") if "_build" not in p.parts)


def _blocks(text: str) -> list[tuple[int, str]]:
    out = []
    for m in _BLOCK.finditer(text):
        indent = m.group(1)
        body = "\n".join(line[len(indent):] if line.startswith(indent) else line
                         for line in m.group(2).splitlines())
        out.append((text.count("\n", 0, m.start()) + 1, body + "\n"))
    return out


def test_pages_have_runnable_blocks():
    # the pages that promise runnable examples have some (a broken fence
    # pattern would otherwise make the test below check nothing)
    with_blocks = [p.relative_to(DOCS).as_posix() for p in _pages() if _blocks(p.read_text(encoding="utf-8"))]
    assert "quickstart.md" in with_blocks and "from_pytorch.md" in with_blocks, with_blocks


@pytest.mark.parametrize("page", _pages(), ids=lambda p: p.relative_to(DOCS).as_posix())
def test_page_examples_run(page, tmp_path, monkeypatch):
    blocks = _blocks(page.read_text(encoding="utf-8"))
    if not blocks:
        pytest.skip(f"{page.name} has no ```pycon blocks")
    if "forward_ad" in page.read_text(encoding="utf-8"):
        pytest.importorskip("retrograd.forward_ad", reason="the page uses retrograd-forward-ad")
    if "rg.profiler" in page.read_text(encoding="utf-8"):
        pytest.importorskip("retrograd.profiler", reason="the page uses retrograd-profiler")
    monkeypatch.chdir(tmp_path)              # pages that write files write them here
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    globs: dict = {"__name__": "__docs__"}
    failures = []
    saved = np.get_printoptions()
    try:
        for lineno, body in blocks:
            test = parser.get_doctest(body, globs, f"{page.name}:{lineno}", str(page), lineno)
            out: list[str] = []
            result = runner.run(test, out=out.append, clear_globs=False)
            globs.update(test.globs)         # DocTest ran on a copy: carry the names on
            if result.failed:
                failures.append("".join(out))
    finally:
        np.set_printoptions(**saved)
    assert not failures, "\n".join(failures)
