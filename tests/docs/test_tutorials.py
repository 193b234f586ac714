"""Every tutorial runs.

The tutorials' code (the ``rg-run`` blocks of docs/tutorials/*.md) runs
when the site is built, and the site keeps the outputs in a cache keyed by
the code: a change in retrograd that broke a tutorial would not show until
the code of that page changed. This test runs every page's blocks on every
test run, with the executor the docs build uses (docs/_ext/rg_exec.py, which
needs no Sphinx), and checks that the downloadable script of each page
runs too.
"""
from __future__ import annotations

import importlib.util
import pathlib
import subprocess
import sys

import pytest

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs"
_spec = importlib.util.spec_from_file_location("_rg_exec", DOCS / "_ext" / "rg_exec.py")
rg_exec = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rg_exec)

TUTORIALS = sorted(p for p in (DOCS / "tutorials").glob("*.md") if p.name != "index.md")
# what a page needs beyond retrograd itself
_NEEDS = {"profiling.md": ("retrograd.profiler",), "higher_order.md": ("scipy",)}


def _needs(page: pathlib.Path) -> None:
    for module in _NEEDS.get(page.name, ()):
        pytest.importorskip(module, reason=f"{page.name} needs {module}")


def test_every_tutorial_has_runnable_blocks():
    assert len(TUTORIALS) >= 7
    empty = [p.name for p in TUTORIALS if not rg_exec.blocks(p.read_text(encoding="utf-8"))]
    assert not empty, f"tutorials without rg-run blocks: {empty}"


@pytest.mark.parametrize("page", TUTORIALS, ids=lambda p: p.name)
def test_tutorial_runs_and_prints(page):
    _needs(page)
    blocks = rg_exec.blocks(page.read_text(encoding="utf-8"))
    results = rg_exec.run_page(blocks, page.name)
    assert len(results) == len(blocks), "a block failed and the page stopped there"
    for i, (block, result) in enumerate(zip(blocks, results), 1):
        if "raises" in block["options"]:
            assert result["error"], f"{page.name} block {i} is marked :raises: but raised nothing"
        else:
            assert not result["error"], f"{page.name} block {i} failed:\n{result.get('traceback')}"
    shown = [r for r in results if r["stdout"].strip() or r["dot"] or r["figures"] or r["error"]]
    assert shown, f"{page.name} shows no output"


@pytest.mark.parametrize("page", TUTORIALS, ids=lambda p: p.name)
def test_tutorial_script_runs(page, tmp_path):
    _needs(page)
    text = page.read_text(encoding="utf-8")
    script = tmp_path / (page.stem + ".py")
    script.write_text(rg_exec.script(page.stem, rg_exec.blocks(text)), encoding="utf-8")
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
