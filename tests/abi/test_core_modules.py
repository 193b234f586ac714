"""Core's topic modules (docs/design.md, "Core's modules").

Each topic module is an extension module with its own private `.pxd`.
From `abi` it may cimport the public header's declarations, as a sibling
does, but never import a Python name: `abi` imports the topic modules
during its own initialisation, before its body has defined those names.
The imports among the topic modules must form no cycle. No hand-written
Cython file of core is longer than the size limit of the code-layout rules.
"""
from __future__ import annotations

import importlib
import pathlib
import re
import subprocess
import sys

import pytest

CORE = pathlib.Path(__file__).resolve().parents[2] / "core" / "retrograd" / "core"
MAX_LINES = 800

# a topic module: a .pyx beside its .pxd (abi is the public module, not a topic)
TOPICS = sorted(p.stem for p in CORE.glob("_*.pyx") if (CORE / f"{p.stem}.pxd").exists())
HEADER_ONLY = sorted(p.stem for p in CORE.glob("_*.pxd")
                     if not p.stem.startswith("__") and not (CORE / f"{p.stem}.pyx").exists())

_IMPORT = re.compile(r"^\s*(?:from\s+retrograd\.core\.(\w+)\s+c?import|c?import\s+retrograd\.core\.(\w+))", re.M)
# a Python-level import of abi (not a cimport of its header)
_PY_IMPORT_ABI = re.compile(r"^\s*(?:from\s+retrograd\.core(?:\.abi)?\s+import\b|import\s+retrograd\.core\.abi\b)", re.M)
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
    for name in ("_array_module", "_dtype_rules", "_fp_errstate", "_arg_checks", "_elementwise_loops",
                 "_nn_loops", "_kernels_core", "_kernels_shape", "_kernels_elementwise", "_kernels_linalg",
                 "_kernels_nn"):
        assert name in TOPICS


@pytest.mark.parametrize("name", TOPICS)
def test_topic_module_imports_and_is_compiled(name):
    module = importlib.import_module(f"retrograd.core.{name}")
    assert module.__file__.endswith((".so", ".pyd")), module.__file__


@pytest.mark.parametrize("name", TOPICS)
def test_topic_module_imported_first_leaves_core_whole(name):
    # a fresh interpreter whose first import is the topic module: the package
    # (and abi, which imports the topic modules during its own start) comes
    # up whole, and ops that run kernels of several topic modules record a
    # graph (core alone: no engine needed)
    code = (f"import retrograd.core.{name}\n"
            "import numpy as np\n"
            "import retrograd.core as core\n"
            "x = core.abi._wrap(np.arange(6.0).reshape(2, 3), requires_grad=True)\n"
            "y = core.abi.softmax(x * x, 1).sum()\n"
            "print(round(float(y._array), 6), y.grad_fn.name())\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["2.0", "SumBackward0"]


@pytest.mark.parametrize("name", TOPICS + HEADER_ONLY)
def test_topic_module_never_imports_abi_names_or_includes(name):
    for suffix in (".pyx", ".pxd"):
        path = CORE / f"{name}{suffix}"
        if path.exists():
            code = _code(path)
            assert not _PY_IMPORT_ABI.search(code), \
                f"{path.name} imports from abi at Python level: abi's names do not exist yet when it loads"
            assert not _INCLUDE.search(code), f"{path.name} includes a .pxi: declare in a .pxd instead"


@pytest.mark.parametrize("name", TOPICS + HEADER_ONLY)
def test_topic_headers_never_cimport_abi(name):
    # abi.pyx cimports every topic header: one that cimported abi back would
    # make abi's own compilation circular
    path = CORE / f"{name}.pxd"
    assert "abi" not in {a or b for a, b in _IMPORT.findall(_code(path))}, f"{path.name} cimports abi"


def test_loop_modules_know_no_tensor():
    # the C loops and the array module work on arrays only
    for name in ("_array_module", "_elementwise_loops", "_nn_loops", "_loop_support"):
        for suffix in (".pyx", ".pxd"):
            path = CORE / f"{name}{suffix}"
            if path.exists():
                assert not re.search(r"\bTensor\b", _code(path)), f"{path.name} uses Tensor"


def test_topic_modules_import_each_other_without_a_cycle():
    graph = {name: _core_imports(name) & set(TOPICS + HEADER_ONLY) for name in TOPICS + HEADER_ONLY}
    assert graph["_kernels_nn"] >= {"_nn_loops", "_arg_checks"}   # the scan sees imports
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
    sources = {p.name: p.read_text() for p in CORE.iterdir() if p.suffix in (".pyx", ".pxd", ".pxi")}
    for file, source in sources.items():
        assert not re.search(r"cimport\s+\*", _code(CORE / file)), f"{file} uses cimport *"
    for name in TOPICS + HEADER_ONLY:
        assert any(f"from retrograd.core.{name} cimport" in s for s in sources.values()), f"{name} is unused"


@pytest.mark.parametrize("path", sorted(p.name for p in CORE.glob("*.p[xy][xid]") if p.suffix in (".pyx", ".pxi", ".pxd")))
def test_no_hand_written_cython_file_over_the_size_limit(path):
    lines = len((CORE / path).read_text().splitlines())
    assert lines <= MAX_LINES, f"{path} has {lines} lines (limit {MAX_LINES}): split it by topic"
