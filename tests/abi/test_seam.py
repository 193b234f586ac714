"""The seam: the engine, forward_ad, the profiler and the umbrella use only
what core's abi.pxd declares and core's public Python API (docs/design.md,
"The ABI").

Two checks, each of which fails on a planted private access (tested below):
- their sources: no import of a private core module or name, no private
  attribute of a core module, no private field of a core class (abi.pxd says
  which fields are ABI), no node class or saved-field name, no generated
  module, no capsule table read by hand;
- their compiled modules: the names a Cython module looks up at run time
  (imports, attributes) are string constants in the binary; none may be a
  private name of core's, a node class of the table, or a private core
  module.
"""
from __future__ import annotations

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SIBLINGS = {
    "retrograd-engine": ROOT / "engine" / "retrograd" / "engine",
    "retrograd-forward-ad": ROOT / "forward_ad" / "retrograd" / "forward_ad",
    "retrograd-profiler": ROOT / "profiler" / "retrograd" / "profiler",
    "retrograd-distributed": ROOT / "distributed" / "retrograd" / "distributed",
    "retrograd-compile": ROOT / "compile" / "retrograd" / "compile",
    "retrograd": ROOT / "packages" / "retrograd" / "retrograd",
}
SOURCE_SUFFIXES = {".py", ".pyx", ".pxi", ".pxd"}
ABI_PXD = ROOT / "core" / "retrograd" / "core" / "abi.pxd"
# core's public Python modules besides the package itself
PUBLIC_CORE_MODULES = {"extending", "grad_mode", "anomaly_mode", "linalg"}


# -- what is private ---------------------------------------------------------------

def private_fields() -> set[str]:
    """Fields of abi.pxd's classes that are core's own: neither readonly/public
    nor marked ABI in their comment, in any class (a scan cannot tell which
    class an object is)."""
    private, shared, in_class = set(), set(), False
    for line in ABI_PXD.read_text().splitlines():
        if line.startswith("cdef class "):
            in_class = True
            continue
        if line and not line[0].isspace():
            in_class = False
        code, _, comment = line.partition("#")
        method = re.match(r"\s+c?p?def [\w ]+?\b(\w+)\(", code)
        if in_class and method:
            shared.add(method.group(1))         # a cdef method (the vtable is ABI)
            continue
        m = re.match(r"\s+cdef ([\w ]+?)\b(\w+)\s*$", code)
        if not (in_class and m):
            continue
        if "ABI" in comment or re.match(r"(readonly|public)\b", m.group(1)):
            shared.add(m.group(2))
        else:
            private.add(m.group(2))
    return private - shared - {"__weakref__"}


def generated_saved_fields() -> set[str]:
    """The `_saved_<name>` accessors of the table's node classes."""
    from retrograd.core import abi
    return {a for n in dir(abi) if isinstance(getattr(abi, n), type)
            and issubclass(getattr(abi, n), abi.Node) for a in vars(getattr(abi, n))
            if a.startswith("_saved_")}


def node_class_names() -> set[str]:
    import retrograd.core as core
    from retrograd.core import abi
    return {n for n in dir(abi) if isinstance(getattr(abi, n), type)
            and issubclass(getattr(abi, n), abi.Node) and not hasattr(core, n)}


def _imported_names(code: str):
    """(module, name, offset) of every `from retrograd.core[.x] import ...`
    (aliases dropped, parenthesised lists joined)."""
    for m in re.finditer(r"^\s*from (retrograd\.core(?:\.\w+)?) +import +(\([^)]*\)|[^\n]*)",
                         code, re.M):
        if re.match(r"\s*cimport", m.group(2)):
            continue
        for item in m.group(2).strip("()").split(","):
            name = item.split()[0] if item.split() else ""
            if name:
                yield m.group(1), name, m.start()


def _strip(text: str, suffix: str) -> str:
    """Code without comments, docstrings and `if TYPE_CHECKING:` blocks (what
    type checkers read is the stubs' business, not the run time's). A
    string that is exactly a name stays (getattr(mod, "name"))."""
    def blank(m):
        body = m.group(0)
        inner = body.strip("\"'")
        return body if re.fullmatch(r"[A-Za-z_]\w*", inner) else "\n" * body.count("\n") + '""'
    text = re.sub(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'', blank, text)
    text = re.sub(r'"[^"\n]*"|\'[^\'\n]*\'', blank, text)
    lines, skip_indent = [], None
    for line in text.splitlines():
        indent = len(line) - len(line.lstrip())
        if skip_indent is not None:
            if line.strip() and indent <= skip_indent:
                skip_indent = None
            else:
                continue
        if re.match(r"\s*if (typing\.)?TYPE_CHECKING\s*:", line):
            skip_indent = indent
            continue
        lines.append(re.sub(r"(^|\s)#.*$", "", line))
    return "\n".join(lines)


def source_violations(path: pathlib.Path, text: str) -> list[str]:
    """Every private access to core in one source file, as 'file:line: why'."""
    code = _strip(text, path.suffix)
    found = []
    aliases = set()
    for m in re.finditer(r"^\s*import retrograd\.core(?:\.(\w+))? as (\w+)", code, re.M):
        aliases.add(m.group(2))
    for m in re.finditer(r"^\s*from retrograd import core as (\w+)", code, re.M):
        aliases.add(m.group(1))
    for m in re.finditer(r"^\s*from retrograd\.core import (\w+) as (\w+)", code, re.M):
        if m.group(1) in PUBLIC_CORE_MODULES | {"abi"}:
            aliases.add(m.group(2))
    cython = path.suffix in {".pyx", ".pxi", ".pxd"}
    fields = private_fields() if cython else set()
    for module, name, at in _imported_names(code):
        line = code.count("\n", 0, at) + 1
        if (name.startswith("_") and not name.startswith("__")) or (module == "retrograd.core" and name == "abi") \
                or module == "retrograd.core.abi":
            found.append(f"{path}:{line}: from {module} import {name}: a private core name "
                         "(cimport abi.pxd, or use retrograd.core's public API)")
    rules = [
        (r"\bretrograd\.core\.(_\w+)", "a private core module"),
        (r"^\s*import retrograd\.core\.abi\b",
         "a Python import of core's compiled module (cimport abi.pxd, or use retrograd.core)"),
        (r"\b_generated_ops_info\b", "core's generated table module"),
        (r"\b(?:%s)\b" % "|".join(sorted(node_class_names())), "a node class of core's table"),
        (r"\.(?:%s)\b" % "|".join(sorted(generated_saved_fields())), "a generated saved field"),
        (r"__pyx_capi__", "core's capsules read by hand (use abi.pxd's rg_core_function)"),
    ]
    if aliases:
        rules.append((r"\b(?:%s)\._(?!_)\w+" % "|".join(map(re.escape, sorted(aliases))),
                      "a private attribute of a core module"))
    if fields:
        rules.append((r"\.(%s)\b" % "|".join(sorted(fields)), "a private field of a core class"))
    for pattern, why in rules:
        for m in re.finditer(pattern, code, re.M):
            line = code.count("\n", 0, m.start()) + 1
            found.append(f"{path}:{line}: {m.group(0).strip()!r}: {why}")
    return found


def sibling_sources():
    for dist, folder in SIBLINGS.items():
        if not folder.is_dir():
            continue
        for path in sorted(folder.rglob("*")):
            if path.suffix in SOURCE_SUFFIXES and "build" not in path.parts:
                yield dist, path


# -- the sources ------------------------------------------------------------------

def test_sibling_sources_use_only_the_seam():
    found = [v for _, p in sibling_sources() for v in source_violations(p, p.read_text())]
    assert not found, "private core access outside core:\n" + "\n".join(found)


def test_the_scan_covers_every_sibling():
    dists = {d for d, _ in sibling_sources()}
    assert dists == set(SIBLINGS)
    assert {"_extra", "_fw_grads", "_base"} <= private_fields()
    assert "_array" not in private_fields() and "_grad_fn" not in private_fields()


PLANTED = [
    ("x.py", "from retrograd.core import _generated_ops_info\n"),
    ("x.py", "from retrograd.core._creation import get_rng\n"),
    ("x.py", "import retrograd.core.abi as _abi\nf = _abi._wrap\n"),
    ("x.py", "from retrograd.core import abi\n"),
    ("x.py", "import retrograd.core as _core\n_core._slot_status()\n"),
    ("x.py", "from retrograd.core.extending import _hidden\n"),
    ("x.pyx", "cdef f(Tensor t):\n    return t._fw_grads\n"),
    ("x.pyx", "cdef g(Node n):\n    return n._extra.pre_hooks\n"),
    ("x.pxi", "rules = {core.MatmulBackward0: rule}\n"),
    ("x.pxi", "shape = node._saved_self_shape\n"),
    ("x.py", "cls = getattr(abi, 'MulBackward0')\n"),
    ("x.py", "from retrograd.core import (Tensor,\n    _creation)\n"),
    ("x.pyx", "cap = mod.__pyx_capi__['rg_wrap']\n"),
]


@pytest.mark.parametrize("name,code", PLANTED)
def test_a_planted_private_access_is_caught(name, code):
    assert source_violations(pathlib.Path(name), code)


def test_planted_into_a_real_sibling_file_is_caught():
    path = SIBLINGS["retrograd-engine"] / "_engine.pyx"
    text = path.read_text()
    assert not source_violations(path, text)
    planted = text + "\n\ncdef object _peek(Tensor t):\n    return t._fw_grads\n"
    assert any("_fw_grads" in v for v in source_violations(path, planted))


@pytest.mark.parametrize("code", [
    "from retrograd.core.abi cimport Tensor, rg_wrap\n",
    "from retrograd.core import Tensor, extending as _ext\n_ext.wrap(a)\n",
    "import retrograd.core as _core\n_core.check_abi('x', (1, 0))\n",
    "# a comment naming MulBackward0 and t._fw_grads\n",
    'def f():\n    """Docs may name MulBackward0 and node._saved_self."""\n',
    "from retrograd.core import stack as _stack, get_rng as _rng\n",
    "if TYPE_CHECKING:\n    from retrograd.core.abi import *\nx = 1\n",
    "cdef f(Tensor t):\n    return t._array, t._grad_fn\n",
])
def test_public_use_is_not_flagged(code):
    assert not source_violations(pathlib.Path("x.pyx"), code)


# -- the compiled modules -----------------------------------------------------------

def _string_constants(binary: bytes) -> set[str]:
    # Cython keeps the names it looks up (imports, attributes, globals) as
    # NUL-terminated string constants
    return {s.decode("ascii", "replace") for s in re.findall(rb"[\x20-\x7e]{2,}", binary)}


def private_core_names() -> set[str]:
    import retrograd.core as core
    from retrograd.core import abi
    names = {n for n in dir(abi) if n.startswith("_") and not n.startswith("__")}
    names |= {n for n in dir(core) if n.startswith("_") and not n.startswith("__")}
    nodes = {n for n in dir(abi) if isinstance(getattr(abi, n), type)
             and issubclass(getattr(abi, n), abi.Node) and not hasattr(core, n)}
    # (__pyx_capi__ is in every Cython binary: cimported functions resolve
    # through it at import, with the signature check Cython does)
    return names | nodes | {"_generated_ops_info"}


def compiled_violations(path: pathlib.Path, private: set[str]) -> list[str]:
    found = []
    for s in sorted(_string_constants(path.read_bytes())):
        if s in private:
            found.append(f"{path.name}: looks up {s!r}, a private name of core's")
        elif re.fullmatch(r"retrograd\.core\._\w+", s):
            found.append(f"{path.name}: imports {s!r}, a private core module")
        elif re.fullmatch(r"_saved_\w+", s):
            found.append(f"{path.name}: looks up {s!r}, a generated saved field")
    return found


def _compiled_modules():
    import importlib.util
    out = []
    for dist, mod in [("retrograd-engine", "retrograd.engine._engine"),
                      ("retrograd-forward-ad", "retrograd.forward_ad._dual"),
                      ("retrograd-profiler", "retrograd.profiler._collector"),
                      ("retrograd-compile", "retrograd.compile._tracer")]:
        try:
            spec = importlib.util.find_spec(mod)
        except ImportError:
            spec = None
        if spec is not None and spec.origin and spec.origin.endswith((".so", ".pyd")):
            out.append(pathlib.Path(spec.origin))
    return out


def test_compiled_siblings_look_up_no_private_core_name():
    modules = _compiled_modules()
    if not modules:
        pytest.skip("no compiled sibling installed")
    private = private_core_names()
    assert "_wrap" in private and "MatmulBackward0" in private
    found = [v for p in modules for v in compiled_violations(p, private)]
    assert not found, "\n".join(found)


def test_a_planted_lookup_in_a_binary_is_caught(tmp_path):
    fake = tmp_path / "_fake.so"
    fake.write_bytes(b"\x7fELF\x00retrograd.core.abi\x00_graph_root\x00queue_callback\x00"
                     b"retrograd.core._creation\x00MatmulBackward0\x00_saved_mat2\x00")
    found = compiled_violations(fake, private_core_names() | {"_graph_root"})
    assert len(found) == 4, found
