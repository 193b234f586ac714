"""Core's topic modules (docs/design.md, "Core's modules").

Each topic module is an extension module with its own private `.pxd`.
It knows no Tensor and never cimports `abi`, so `abi` can import it fully
before its own body runs. Its imports among the topic modules must form no
cycle. No hand-written Cython file of core is longer than the size limit
of the code-layout rules.
"""
from __future__ import annotations

import importlib
import pathlib
import re

import pytest

CORE = pathlib.Path(__file__).resolve().parents[2] / "core" / "retrograd" / "core"
MAX_LINES = 800

# a topic module: a .pyx beside its .pxd (abi is the public module, not a topic)
TOPICS = sorted(p.stem for p in CORE.glob("_*.pyx") if (CORE / f"{p.stem}.pxd").exists())
HEADER_ONLY = sorted(p.stem for p in CORE.glob("_*.pxd")
                     if not p.stem.startswith("__") and not (CORE / f"{p.stem}.pyx").exists())

_IMPORT = re.compile(r"^\s*(?:from\s+retrograd\.core\.(\w+)\s+c?import|c?import\s+retrograd\.core\.(\w+))", re.M)
_INCLUDE = re.compile(r'^\s*include\s+"', re.M)


def _code(path: pathlib.Path) -> str:
    # the source without comment lines (a comment may name abi or a Tensor)
    return "\n".join(line for line in path.read_text().splitlines() if not line.lstrip().startswith("#"))


def _core_imports(name: str) -> set[str]:
    found = set()
    for suffix in (".pyx", ".pxd"):
        path = CORE / f"{name}{suffix}"
        if path.exists():
            for a, b in _IMPORT.findall(_code(path)):
                found.add(a or b)
    return found


def test_there_are_topic_modules():
    # the split exists: the loops, the array module, the dtype rules, the errstate
    for name in ("_array_module", "_dtype_rules", "_fp_errstate", "_elementwise_loops", "_nn_loops"):
        assert name in TOPICS


@pytest.mark.parametrize("name", TOPICS)
def test_topic_module_imports_and_is_compiled(name):
    module = importlib.import_module(f"retrograd.core.{name}")
    assert module.__file__.endswith((".so", ".pyd")), module.__file__


@pytest.mark.parametrize("name", TOPICS + HEADER_ONLY)
def test_topic_module_never_uses_abi_or_includes(name):
    imports = _core_imports(name)
    assert "abi" not in imports, f"{name} imports abi: topic modules sit below it"
    for suffix in (".pyx", ".pxd"):
        path = CORE / f"{name}{suffix}"
        if path.exists():
            assert not _INCLUDE.search(_code(path)), f"{path.name} includes a .pxi: declare in a .pxd instead"


@pytest.mark.parametrize("name", TOPICS + HEADER_ONLY)
def test_topic_module_knows_no_tensor(name):
    for suffix in (".pyx", ".pxd"):
        path = CORE / f"{name}{suffix}"
        if path.exists():
            assert not re.search(r"\bTensor\b", _code(path)), f"{path.name} uses Tensor"


def test_topic_modules_import_each_other_without_a_cycle():
    graph = {name: _core_imports(name) & set(TOPICS + HEADER_ONLY) for name in TOPICS + HEADER_ONLY}
    done: set[str] = set()

    def visit(name, path):
        assert name not in path, f"import cycle: {' -> '.join(path + [name])}"
        if name in done:
            return
        for dep in graph[name]:
            visit(dep, path + [name])
        done.add(name)

    for name in graph:
        visit(name, [])


def test_topic_names_are_cimported_explicitly():
    # every name taken from a topic module is listed where it is cimported
    # (no `cimport *`), so a reader finds its declaration site; and every
    # topic module is used (by abi or by another topic module)
    sources = {p.name: p.read_text() for p in CORE.glob("*.p[xy][xd]")}
    for file, source in sources.items():
        assert not re.search(r"cimport\s+\*", _code(CORE / file)), f"{file} uses cimport *"
    for name in TOPICS + HEADER_ONLY:
        assert any(f"from retrograd.core.{name} cimport" in s for s in sources.values()), f"{name} is unused"


@pytest.mark.parametrize("path", sorted(p.name for p in CORE.glob("*.p[xy][xid]") if p.suffix in (".pyx", ".pxi", ".pxd")))
def test_no_hand_written_cython_file_over_the_size_limit(path):
    lines = len((CORE / path).read_text().splitlines())
    assert lines <= MAX_LINES, f"{path} has {lines} lines (limit {MAX_LINES}): split it by topic"
