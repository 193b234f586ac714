"""Core's modules (docs/design.md, "Core's modules").

`abi` defines the classes and functions of abi.pxd and nothing else; the
implementation module `_ops` holds the ops and the state they share; the
two import each other, by design. Each topic module below them is an
extension module with its own private `.pxd`. From `abi` it may cimport the
public header's declarations, as a sibling does, but never import a Python
name: `abi` imports the topic modules during its own initialisation, before
its body has defined those names. The imports among the topic modules must
form no cycle. No hand-written Cython file of core is longer than the size
limit of the code-layout rules.
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

# a topic module: a .pyx beside its .pxd (abi, the public module, and _ops,
# the implementation module above the topics, are not topics)
TOPICS = sorted(p.stem for p in CORE.glob("_*.pyx") if (CORE / f"{p.stem}.pxd").exists() and p.stem != "_ops")
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


@pytest.mark.parametrize("name", TOPICS + ["_ops"])
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
    # abi.pyx and _ops.pyx cimport the topic headers: one that cimported abi back would
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
    # (a topic whose kernels only the generated code calls is used by the table)
    table = (CORE / "derivatives.yaml").read_text()
    for name in TOPICS + HEADER_ONLY + ["_ops"]:
        pxd = CORE / f"{name}.pxd"
        kernels = re.findall(r"^cp?def\s+object\s+(k_\w+)\s*\(", pxd.read_text(), re.M) if pxd.exists() else []
        assert (any(f"from retrograd.core.{name} cimport" in s for s in sources.values())
                or any(re.search(rf"\b{k}\(", table) for k in kernels)), f"{name} is unused"


@pytest.mark.parametrize("path", sorted(p.name for p in CORE.glob("*.p[xy][xid]") if p.suffix in (".pyx", ".pxi", ".pxd")))
def test_no_hand_written_cython_file_over_the_size_limit(path):
    lines = len((CORE / path).read_text().splitlines())
    assert lines <= MAX_LINES, f"{path} has {lines} lines (limit {MAX_LINES}): split it by topic"


# -- abi and _ops ---------------------------------------------------------------

_INCLUDED = re.compile(r'^include\s+"(\w+)\.pxi"', re.M)
_CLASS = re.compile(r"^cdef\s+class\s+(\w+)", re.M)
_FUNC = re.compile(r"^cdef\s+(?!inline\b|class\b|extern\b|enum\b)[\w.]+\s*\**\s*(\w+)\s*\(", re.M)
_PXD_FUNC = re.compile(r"^cdef\s+(?!inline\b|class\b|extern\b|enum\b)([\w.]+\s*\**)\s*(\w+)\s*\(([^)]*)\)([^\n]*)$", re.M)


def _abi_sources() -> dict[str, str]:
    # abi.pyx and the files it includes (the Tensor template stands for the
    # generated _tensor_generated.pxi, which is it plus the op methods)
    files = {"abi.pyx": _code(CORE / "abi.pyx")}
    for inc in _INCLUDED.findall(files["abi.pyx"]):
        name = "_tensor" if inc == "_tensor_generated" else inc
        files[f"{name}.pxi"] = _code(CORE / f"{name}.pxi")
    return files


def test_abi_defines_the_classes_and_functions_of_abi_pxd_and_nothing_else():
    header = _code(CORE / "abi.pxd")
    declared_classes = set(_CLASS.findall(header))
    declared_funcs = {m[1] for m in _PXD_FUNC.findall(header)}
    classes, funcs = set(), set()
    for source in _abi_sources().values():
        classes.update(_CLASS.findall(source))
        funcs.update(_FUNC.findall(source))
    assert classes == declared_classes
    assert funcs == declared_funcs


def test_each_function_abi_hands_to_ops_has_the_same_signature_there():
    # abi's rg_X calls _rg_X of _ops.pxd: the two declarations must agree,
    # or the entry point converts (or truncates) what it passes on
    header = {m[1]: m for m in _PXD_FUNC.findall(_code(CORE / "abi.pxd"))}
    ops = {m[1]: m for m in _PXD_FUNC.findall(_code(CORE / "_ops.pxd"))}
    exports = _code(CORE / "_abi_exports.pxi")
    handed = re.findall(r"^cdef[^\n]*\b(rg_\w+)\([^\n]*:\n\s+(?:return\s+)?_(rg_\w+)\(", exports, re.M)
    assert len(handed) >= 20
    for name, target in handed:
        assert name == target, f"{name} hands its call to _{target}"
        ret, _, args, tail = header[name]
        oret, _, oargs, otail = ops[f"_{name}"]
        norm = lambda a: [" ".join(x.split()[:-1]) for x in a.split(",") if x.strip()]   # types only
        assert (ret.strip(), norm(args), tail.strip()) == (oret.strip(), norm(oargs), otail.strip()), name


def test_thread_state_is_defined_in_one_module():
    # the per-thread state is C `__thread` variables in verbatim C: in a .pxd
    # each module cimporting it would get its own copy, silently
    for pxd in CORE.glob("*.pxd"):
        assert "__thread" not in pxd.read_text(), f"{pxd.name} defines thread-local state"
    assert "__thread" not in "".join(_abi_sources().values())


def test_node_subclasses_of_ops_use_the_trashcan():
    # Node's @cython.trashcan is not inherited across modules (see _ops.pxd):
    # every Node subclass of _ops asks for it, or freeing a long graph
    # overflows the C stack
    build = CORE.parents[2] / "build"
    generated = sorted(build.glob("*/core/retrograd/core/_generated_ops.pxi"))
    ops_files = set(_INCLUDED.findall(_code(CORE / "_ops.pyx"))) - {"_generated_ops"}
    assert "_graph_support" in ops_files and "_function" in ops_files
    sources = [(CORE / f"{n}.pxi").read_text() for n in sorted(ops_files)] + [p.read_text() for p in generated[:1]]
    nodes = {"Node"}
    found = 0
    for source in sources:
        for m in re.finditer(r"((?:^@[^\n]*\n)*)^cdef\s+class\s+(\w+)\((\w+)\)", source, re.M):
            decorators, name, base = m.groups()
            if base in nodes or base in ("Error", "_FunctionBase"):
                nodes.add(name)
                found += 1
                assert "@cython.trashcan(True)" in decorators, f"{name}({base}) lacks @cython.trashcan(True)"
    assert found >= 5


def test_abi_names_every_python_name_of_ops():
    # abi's Python namespace is core's compiled API: what moved to _ops is
    # still reached as retrograd.core.abi.<name> (the stub, pickles, users)
    from retrograd.core import _ops, abi
    missing = [n for n in vars(_ops) if not n.startswith("__") and not hasattr(abi, n)]
    assert not missing
    assert abi.add is _ops.add and abi.GraphRoot is _ops.GraphRoot and abi.Tensor.__module__ == "retrograd.core.abi"


@pytest.mark.parametrize("module", ["abi.pyx", "_ops.pyx"])
def test_included_files_do_not_depend_on_their_order(module):
    # Cython resolves cdef names module-wide, whatever the order; only the
    # statements a file runs at import could need a Python name that a later
    # file defines. None does, so the include list may be reordered freely.
    included = [n for n in _INCLUDED.findall(_code(CORE / module)) if not n.startswith("_generated")]
    files = [(n, (CORE / ("_tensor" if n == "_tensor_generated" else n)).with_suffix(".pxi").read_text())
             for n in included]
    defined_in = {}
    for index, (_, source) in enumerate(files):
        for name in re.findall(r"^(?:def|class)\s+(\w+)", source, re.M) + re.findall(r"^(\w+)\s*=", source, re.M):
            defined_in.setdefault(name, index)
    assert len(defined_in) > 10
    for index, (name, source) in enumerate(files):
        lines = source.split("\n")
        for k, line in enumerate(lines):
            if not line or line[0] in " \t#@)" or re.match(r"(def|cdef|cpdef|class|import|from|include|ctypedef)\b", line):
                continue
            statement = line.split("#")[0]
            for later in set(re.findall(r"\b\w+\b", statement)):
                assert defined_in.get(later, -1) <= index, \
                    f"{name}.pxi:{k + 1} runs at import and needs {later}, which a later file defines"
