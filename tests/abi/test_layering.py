"""The line of distributions (docs/design.md, "Layers"), enforced.

    core <- engine <- (forward_ad, profiler) <- (compile, distributed) <- retrograd

Every hand-written source file of every distribution (.py, and .pyx/.pxd/.pxi,
whose import and cimport lines are read with a regex, as test_seam.py reads
Cython) may import only

- its own distribution, or one in a LOWER layer that its pyproject.toml
  declares (a dependency or an optional extra): never one in its own layer
  or above (what a lower part needs of a higher one arrives through a slot
  or a registration, never an import);
- public names of other distributions: no `_private` module, and no
  `_private` name imported or read as an attribute of another
  distribution's module (test_seam.py checks core's private *fields* too).

It may not read another frame's locals (`f_locals`), and may walk frames
(`sys._getframe`, `inspect.currentframe`, `f_back`, `inspect.stack`) only in
the functions FRAME_WALKS names, which read code locations, never locals.

And every hand-written source file stays under MAX_CODE_LINES lines of code
(not blank, not comments, not docstrings), code generators included, but for
today's offenders in TOO_LONG, each with its reason, which may only shrink.

Each check is proven to fire by planted violations below.
"""
from __future__ import annotations

import ast
import io
import pathlib
import re
import sys
import tokenize

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:                                   # pragma: no cover (3.10)
    tomllib = pytest.importorskip("tomli")

ROOT = pathlib.Path(__file__).resolve().parents[2]

# distribution -> (layer, project folder, package folder, import prefix)
DISTRIBUTIONS = {
    "retrograd-core": (0, "core", "core/retrograd/core", "retrograd.core"),
    "retrograd-engine": (1, "engine", "engine/retrograd/engine", "retrograd.engine"),
    "retrograd-forward-ad": (2, "forward_ad", "forward_ad/retrograd/forward_ad", "retrograd.forward_ad"),
    "retrograd-profiler": (2, "profiler", "profiler/retrograd/profiler", "retrograd.profiler"),
    "retrograd-compile": (3, "compile", "compile/retrograd/compile", "retrograd.compile"),
    "retrograd-distributed": (3, "distributed", "distributed/retrograd/distributed", "retrograd.distributed"),
    "retrograd": (4, "packages/retrograd", "packages/retrograd/retrograd", "retrograd"),
}
SOURCE_SUFFIXES = {".py", ".pyx", ".pxd", ".pxi"}
MAX_CODE_LINES = 800

# Couplings the line still has, each with its reason: (file relative to the
# repository, the module it reaches) -> why. Only the first is by design;
# the others are later work and this list may only shrink (a listed one
# that is gone fails, so that its entry goes too).
KNOWN_COUPLINGS = {
    ("core/retrograd/core/_slots.pxi", "retrograd.engine"):
        "by design (docs/design.md, 'Core stands alone'): the first backward with an empty engine "
        "slot imports the engine by name, which registers itself in the slot",
    ("core/retrograd/core/_tensor.pxi", "retrograd.forward_ad._dual"):
        "later work: Tensor.__repr__ reads a tangent through sys.modules; it should come through "
        "the forward-grad slot (an ABI addition)",
    ("packages/retrograd/retrograd/autograd/functional.py", "retrograd.forward_ad._dual"):
        "later work: jacobian(strategy='forward-mode') enters a batched dual level with "
        "forward_ad's private _enter_batched_dual_level; forward_ad should make it public",
}

# Frame walks that read where code is (file, line, function name), never a
# frame's locals: (distribution, file relative to its package folder, function).
FRAME_WALKS = {
    ("retrograd-core", "_autograd.py", "_warn_level"):
        "a warning's stacklevel: counts this module's own frames",
    ("retrograd-profiler", "_collector.pyx", "_python_stack"):
        "with_stack=True: torch's Python stack of each event (file, line, function)",
    ("retrograd-compile", "_trace.pyx", "user_line"):
        "a graph break's location in the user's code (file:line)",
}

# Today's files over MAX_CODE_LINES lines of code, each with why it is long.
# Splitting them is later work (issue 45); this list may only shrink: a file
# not listed here that grows past the limit fails, and so does a listed one
# that no longer needs its entry.
TOO_LONG = {
    "core/retrograd/core/_codegen/gen_ops.py":
        "the op generator: one emitter per generated artefact (ops, nodes, stubs), to become a package",
    "packages/retrograd/retrograd/nn/functional.py":
        "torch.nn.functional's shared helpers and the functionals not yet in topic modules",
}


# -- the distributions ---------------------------------------------------------------

def _pyproject(dist: str) -> dict:
    return tomllib.loads((ROOT / DISTRIBUTIONS[dist][1] / "pyproject.toml").read_text())


def _requirement_name(req: str) -> str:
    return re.match(r"\s*([A-Za-z0-9_.\-]+)", req).group(1).lower().replace("_", "-")


def declared(dist: str) -> set[str]:
    """The distributions ``dist`` may import: its dependencies and its
    optional extras (an extra's import is guarded where it is used)."""
    project = _pyproject(dist)["project"]
    names = {_requirement_name(r) for r in project.get("dependencies", [])}
    for reqs in project.get("optional-dependencies", {}).values():
        names |= {_requirement_name(r) for r in reqs}
    return names


def dist_of_module(module: str) -> str | None:
    """The retrograd distribution that provides ``module``, or None for
    anything else."""
    if module != "retrograd" and not module.startswith("retrograd."):
        return None
    best = "retrograd"
    for dist, (_, _, _, prefix) in DISTRIBUTIONS.items():
        if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > len(DISTRIBUTIONS[best][3]):
            best = dist
    return best


def sources():
    """(distribution, path) of every hand-written source file."""
    for dist, (_, _, folder, _) in DISTRIBUTIONS.items():
        base = ROOT / folder
        for path in sorted(base.rglob("*")):
            rel = path.relative_to(base).parts
            if path.suffix not in SOURCE_SUFFIXES or "build" in rel or "__pycache__" in rel:
                continue
            if dist == "retrograd" and rel[0] in {"core", "engine", "forward_ad", "profiler", "compile",
                                                    "distributed"}:
                continue            # (another distribution's folder, were one nested)
            yield dist, path


# -- reading a file's imports ---------------------------------------------------------

class Use:
    """One import (or dynamic import, or private attribute read) in a file."""

    def __init__(self, line: int, module: str, names: tuple = (), what: str = "import",
                 guarded: bool = False):
        self.line, self.module, self.names, self.what, self.guarded = line, module, names, what, guarded


def _resolve_relative(module: str | None, level: int, dist: str, path: pathlib.Path) -> str:
    if not level:
        return module or ""
    folder, prefix = ROOT / DISTRIBUTIONS[dist][2], DISTRIBUTIONS[dist][3]
    parts = prefix.split(".") + list(path.relative_to(folder).parent.parts)
    parts = parts[:len(parts) - (level - 1)]
    return ".".join(parts + ([module] if module else []))


_DYNAMIC = {"import_module", "__import__", "import_extension"}


def python_uses(text: str, dist: str, path: pathlib.Path) -> list[Use]:
    """The imports of a Python file, from its syntax tree. An import inside
    ``try: ... except ImportError`` is marked guarded."""
    tree = ast.parse(text)
    uses, aliases = [], {}
    guarded_lines, typing_lines = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.dump(node.test):
            # (what type checkers read is the stubs' business, not the run time's)
            for stmt in node.body:
                typing_lines.update(range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1))
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(
                h.type is not None and any(n in ast.dump(h.type) for n in ("ImportError", "ModuleNotFoundError"))
                for h in node.handlers):
            for stmt in node.body:
                guarded_lines.update(range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1))
    for node in ast.walk(tree):
        g = getattr(node, "lineno", 0) in guarded_lines
        if getattr(node, "lineno", 0) in typing_lines:
            continue
        if isinstance(node, ast.Import):
            for a in node.names:
                uses.append(Use(node.lineno, a.name, guarded=g))
                aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            module = _resolve_relative(node.module, node.level, dist, path)
            for a in node.names:
                aliases[a.asname or a.name] = f"{module}.{a.name}"
                full = f"{module}.{a.name}"
                if dist_of_module(full) not in (None, dist_of_module(module)):
                    # `from retrograd import engine`: the submodule is the import
                    uses.append(Use(node.lineno, full, guarded=g))
                else:
                    uses.append(Use(node.lineno, module, (a.name,), guarded=g))
        elif isinstance(node, ast.Call):
            fn = node.func
            name = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", None)
            if name in _DYNAMIC:
                for arg in node.args[:2]:
                    if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and \
                            re.fullmatch(r"[A-Za-z_][\w.]*", arg.value) and "." in arg.value:
                        uses.append(Use(node.lineno, arg.value, what="dynamic import", guarded=g))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            chain = _dotted(node.value, aliases)
            # (a module's attribute; a class's underscore names are torch's
            # API where torch has them, Tensor._make_subclass, and its
            # fields are test_seam.py's business)
            if chain and dist_of_module(chain) not in (None, dist) and not chain.split(".")[-1][:1].isupper():
                uses.append(Use(node.lineno, chain, (node.attr,), what="attribute"))
    return uses


def _dotted(node, aliases) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in aliases:
        return None
    return ".".join([aliases[node.id]] + parts[::-1])


_CY_FROM = re.compile(r"^[ \t]*from[ \t]+(\.*[\w.]*)[ \t]+c?import[ \t]+(\([^)]*\)|[^\n]*)", re.M)
_CY_IMPORT = re.compile(r"^[ \t]*c?import[ \t]+([^\n]+)", re.M)
_CY_DYNAMIC = re.compile(r"\b(?:import_module|__import__|import_extension)\((?:[^,()]*,\s*)?[\"']([\w.]+)[\"']")
_CY_ATTR = re.compile(r"\b(retrograd(?:\.\w+)+)\.(_(?!_)\w+)")


def _strip_cython(text: str) -> str:
    """Cython source without comments and string bodies (line numbers kept);
    a string that is exactly a dotted name stays (import_module("x.y"))."""
    def blank(m):
        body = m.group(0)
        return body if re.fullmatch(r"[\"'][\w.]+[\"']", body) else '""' + "\n" * body.count("\n")
    text = re.sub(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'', blank, text)
    text = re.sub(r'"[^"\n]*"|\'[^\'\n]*\'', blank, text)
    return "\n".join(re.sub(r"(^|\s)#.*$", "", line) for line in text.splitlines())


def cython_uses(text: str, dist: str, path: pathlib.Path) -> list[Use]:
    code = _strip_cython(text)
    uses = []

    def line_of(at):
        return code.count("\n", 0, at) + 1

    for m in _CY_FROM.finditer(code):
        module = m.group(1)
        level = len(module) - len(module.lstrip("."))
        module = _resolve_relative(module.lstrip(".") or None, level, dist, path)
        names = tuple(item.split()[0] for item in m.group(2).strip("()").replace("\n", " ").split(",")
                      if item.split())
        for name in names:
            full = f"{module}.{name}"
            if dist_of_module(full) not in (None, dist_of_module(module)):
                uses.append(Use(line_of(m.start()), full))
            else:
                uses.append(Use(line_of(m.start()), module, (name,)))
    for m in _CY_IMPORT.finditer(code):
        for item in m.group(1).split(","):
            if item.split():
                uses.append(Use(line_of(m.start()), item.split()[0]))
    for m in _CY_DYNAMIC.finditer(code):
        uses.append(Use(line_of(m.start()), m.group(1), what="dynamic import"))
    for m in _CY_ATTR.finditer(code):
        uses.append(Use(line_of(m.start()), m.group(1), (m.group(2),), what="attribute"))
    return uses


# -- the checks --------------------------------------------------------------------------

def import_violations(dist: str, path: pathlib.Path, text: str) -> list[str]:
    """Every import of ``path`` (a file of ``dist``) that breaks the line."""
    uses = python_uses(text, dist, path) if path.suffix == ".py" else cython_uses(text, dist, path)
    layer, allowed = DISTRIBUTIONS[dist][0], declared(dist)
    found = []
    for u in uses:
        rel = path.relative_to(ROOT).as_posix() if path.is_absolute() else str(path)
        where = f"{rel}:{u.line}"
        target = dist_of_module(u.module)
        if target is None or target == dist:
            continue            # (third-party packages: not this test's business)
        reached = u.module + (f".{u.names[0]}" if u.what == "attribute" else "")
        if any(k_rel == rel and (reached + ".").startswith(k_mod + ".") for k_rel, k_mod in KNOWN_COUPLINGS):
            continue
        t_layer = DISTRIBUTIONS[target][0]
        if t_layer >= layer:
            found.append(f"{where}: {u.what} of {u.module!r} ({target}, layer {t_layer}) from {dist} "
                         f"(layer {layer}): a distribution imports only those below it; what a lower "
                         "part needs of a higher one arrives through a slot or a registration")
        elif target not in allowed:
            found.append(f"{where}: imports {u.module!r} from {target}, which {dist}'s pyproject.toml "
                         "does not declare")
        private = [p for p in u.module.split(".") if p.startswith("_") and not p.startswith("__")]
        private += [n for n in u.names if n.startswith("_") and not n.startswith("__")]
        if private:
            found.append(f"{where}: {u.what} of {', '.join(private)} ({u.module}): a private module or "
                         f"name of {target}; make what is needed public there")
    return found


_FRAME_NAMES = re.compile(r"\b(?:sys\.|_sys\.)?_getframe\b|\bcurrentframe\b|\.f_back\b|\binspect\.stack\b"
                          r"|\.f_locals\b|\bf_locals\b")


def _enclosing_functions(text: str) -> list[tuple[int, str]]:
    """(first line, name) of each top-level def/cdef/cpdef, in order."""
    return [(text.count("\n", 0, m.start()) + 1, m.group(1))
            for m in re.finditer(r"^(?:async def|def|cdef|cpdef)\s+(?:[\w\[\], *]+\s+)?\*?(\w+)\s*\(", text, re.M)]


def frame_violations(dist: str, path: pathlib.Path, text: str, rel: str) -> list[str]:
    code = _strip_cython(text)
    functions = _enclosing_functions(code)
    found = []
    for m in _FRAME_NAMES.finditer(code):
        line = code.count("\n", 0, m.start()) + 1
        fn = next((name for start, name in reversed(functions) if start <= line), None)
        if "f_locals" not in m.group(0) and (dist, rel, fn) in FRAME_WALKS:
            continue
        found.append(f"{path}:{line}: {m.group(0).strip('.')!r} in {fn or 'module level'}: reads another "
                     "frame (a caller's locals are no interface: pass what is needed, or have core's event "
                     "carry it)")
    return found


def code_lines(text: str, suffix: str) -> int:
    """Lines that are not blank, not comments and not inside docstrings
    (a string expression that is a statement of its own)."""
    if suffix == ".py":
        doc = set()
        tree = ast.parse(text)
        for node in ast.walk(tree):
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and \
                    isinstance(node.value.value, str):
                doc.update(range(node.lineno, node.end_lineno + 1))
        comment_only = set()
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT and not tok.line[:tok.start[1]].strip():
                comment_only.add(tok.start[0])
        return sum(1 for i, line in enumerate(text.splitlines(), 1)
                   if line.strip() and i not in doc and i not in comment_only)
    # Cython: a triple-quoted string that starts a line is a docstring
    count, in_doc, quote = 0, False, None
    for line in text.splitlines():
        s = line.strip()
        if in_doc:
            if quote in s:
                in_doc = False
            continue
        if not s or s.startswith("#"):
            continue
        m = re.match(r'[rbuRBU]?("""|\'\'\')', s)
        if m:
            quote = m.group(1)
            if s.count(quote) < 2:
                in_doc = True
            continue
        count += 1
    return count


# -- the tests ----------------------------------------------------------------------------

def _rel(dist, path):
    return path.relative_to(ROOT / DISTRIBUTIONS[dist][2]).as_posix()


def test_every_distribution_is_scanned():
    dists = {d for d, _ in sources()}
    assert dists == set(DISTRIBUTIONS)
    # (the layering test covers the files test_seam.py skips: core itself)
    assert any(p.name == "_autograd.py" for d, p in sources() if d == "retrograd-core")


def test_imports_keep_the_line():
    found = [v for d, p in sources() for v in import_violations(d, p, p.read_text())]
    assert not found, "imports that break the line of distributions:\n" + "\n".join(found)


def test_known_couplings_are_still_there():
    # an entry whose coupling is gone goes too (the list only shrinks)
    saved = dict(KNOWN_COUPLINGS)
    try:
        for (rel, module), why in saved.items():
            path = ROOT / rel
            dist = next(d for d, (_, _, folder, _) in DISTRIBUTIONS.items()
                        if rel.startswith(folder + "/"))
            KNOWN_COUPLINGS.pop((rel, module))
            found = import_violations(dist, path, path.read_text())
            KNOWN_COUPLINGS[(rel, module)] = why
            reached = module.rsplit(".", 1)
            assert any(module in v or (reached[0] in v and reached[-1] in v) for v in found), \
                f"{rel} no longer reaches {module}: drop its entry"
    finally:
        KNOWN_COUPLINGS.clear()
        KNOWN_COUPLINGS.update(saved)


def test_no_frame_is_read():
    found = [v for d, p in sources() for v in frame_violations(d, p, p.read_text(), _rel(d, p))]
    assert not found, "\n".join(found)


def test_frame_walks_listed_still_exist():
    for (dist, rel, fn), why in FRAME_WALKS.items():
        text = (ROOT / DISTRIBUTIONS[dist][2] / rel).read_text()
        assert re.search(rf"^(?:c?p?def)\s+(?:\w+\s+)?{fn}\s*\(", text, re.M), (dist, rel, fn, why)


def test_files_stay_under_the_line_limit():
    over = {}
    for dist, path in sources():
        n = code_lines(path.read_text(), path.suffix)
        if n > MAX_CODE_LINES:
            over[path.relative_to(ROOT).as_posix()] = n
    new = {p: n for p, n in over.items() if p not in TOO_LONG}
    assert not new, (f"files over {MAX_CODE_LINES} lines of code (split them by topic): {new}")
    stale = set(TOO_LONG) - set(over)
    assert not stale, f"now under {MAX_CODE_LINES} lines of code: drop from TOO_LONG: {sorted(stale)}"


def test_pyprojects_declare_the_line():
    # every retrograd distribution a pyproject declares is below it
    for dist in DISTRIBUTIONS:
        for name in declared(dist):
            if name in DISTRIBUTIONS and dist != "retrograd":
                assert DISTRIBUTIONS[name][0] < DISTRIBUTIONS[dist][0], (dist, name)


# -- planted violations: each check fires ----------------------------------------------------

def _planted(dist: str, name: str, code: str) -> list[str]:
    path = ROOT / DISTRIBUTIONS[dist][2] / name
    return import_violations(dist, path, code)


PLANTED_IMPORTS = [
    # a higher layer
    ("retrograd-compile", "x.py", "import retrograd as rg\n", "layer"),
    ("retrograd-compile", "x.py", "from retrograd.autograd import Function\n", "layer"),
    ("retrograd-compile", "x.pyx", "import retrograd as rg\n", "layer"),
    ("retrograd-distributed", "x.py", "from retrograd.nn import Module\n", "layer"),
    ("retrograd-core", "x.py", "import retrograd.engine\n", "layer"),
    ("retrograd-core", "x.pyx", "from retrograd.profiler import profile\n", "layer"),
    ("retrograd-engine", "x.py", "def f():\n    import retrograd.compile\n", "layer"),
    # the same layer
    ("retrograd-compile", "x.py", "import retrograd.distributed\n", "layer"),
    ("retrograd-profiler", "x.py", "from retrograd.forward_ad import dual_level\n", "layer"),
    # dynamic imports count
    ("retrograd-compile", "x.py", "import importlib\nm = importlib.import_module('retrograd.nn')\n", "layer"),
    # a lower layer the pyproject does not declare
    ("retrograd-forward-ad", "x.py", "from retrograd.engine import queue_callback\n", "declare"),
    ("retrograd-distributed", "x.py", "import retrograd.engine\n", "declare"),
    # private modules and names of another distribution
    ("retrograd", "x.py", "from retrograd.engine._engine import is_checkpoint_valid\n", "private"),
    ("retrograd", "x.py", "from retrograd.engine import _engine\n", "private"),
    ("retrograd", "x.py", "import retrograd.engine as e\ne._engine.x()\n", "private"),
    ("retrograd", "x.pyx", "x = retrograd.profiler._collector.start\n", "private"),
    ("retrograd-compile", "x.pyx", "from retrograd.core.extending cimport (a,\n    _b)\n", "private"),
]


@pytest.mark.parametrize("dist,name,code,kind", PLANTED_IMPORTS)
def test_a_planted_import_is_caught(dist, name, code, kind):
    found = _planted(dist, name, code)
    assert found, (dist, code)
    words = {"layer": "layer", "declare": "does not declare", "private": "private"}
    assert any(words[kind] in v for v in found), found


@pytest.mark.parametrize("dist,name,code", [
    ("retrograd-compile", "x.py", "import retrograd.core as _core\nfrom retrograd.core import extending\n"),
    ("retrograd-compile", "x.pyx", "from retrograd.core.abi cimport Tensor, import_core\n"),
    ("retrograd-compile", "x.py", "from retrograd.compile import _kernels\nfrom . import _arrays\n"),
    ("retrograd-compile", "x.py", "from retrograd.engine import set_multithreading_enabled\n"),
    ("retrograd", "x.py", "from retrograd.engine import is_checkpoint_valid\n"),
    ("retrograd", "x.py", "try:\n    import retrograd.compile\nexcept ImportError:\n    pass\n"),
    ("retrograd-core", "x.py", "'''import retrograd as rg'''\n# import retrograd.engine\n"),
    ("retrograd-core", "x.pyx", "def f():\n    '''>>> import retrograd as rg'''\n"),
    ("retrograd-distributed", "x.py", "try:\n    from mpi4py import MPI\nexcept ImportError:\n    MPI = None\n"),
])
def test_a_sound_import_is_not_flagged(dist, name, code):
    assert not _planted(dist, name, code)


@pytest.mark.parametrize("code", [
    "import sys\ncls = sys._getframe(1).f_locals['cls']\n",
    "import inspect\ndef g():\n    return inspect.currentframe().f_back\n",
    "def h(f):\n    return f.f_locals\n",
    "import inspect\nst = inspect.stack()\n",
])
def test_a_planted_frame_read_is_caught(code):
    assert frame_violations("retrograd-compile", pathlib.Path("x.py"), code, "x.py")


def test_a_listed_frame_walk_may_not_read_locals():
    code = "def user_line():\n    f = sys._getframe(1)\n    return f.f_locals\n"
    found = frame_violations("retrograd-compile", pathlib.Path("_trace.pyx"), code, "_trace.pyx")
    assert len(found) == 1 and "f_locals" in found[0]
    # the same walk, reading code locations only, is allowed there
    ok = "def user_line():\n    f = sys._getframe(1)\n    return f.f_back.f_lineno\n"
    assert not frame_violations("retrograd-compile", pathlib.Path("_trace.pyx"), ok, "_trace.pyx")


def test_the_old_couplings_would_be_caught():
    # each coupling issue 45 lists, as it was written
    assert _planted("retrograd-compile", "api.py", "import retrograd as rg\n")
    assert _planted("retrograd-compile", "_call.pyx", "import retrograd as rg\n")
    assert _planted("retrograd-distributed", "nn/functional.py",
                    "try:\n    from retrograd.autograd import Function\nexcept ImportError:\n    raise\n")
    assert _planted("retrograd", "utils/_checkpoint_reentrant.py",
                    "def f():\n    from retrograd.engine._engine import is_checkpoint_valid\n")
    frames = "def _inlinable(name):\n    f = sys._getframe(0)\n    cls = f.f_locals.get('cls')\n"
    assert frame_violations("retrograd-compile", pathlib.Path("_trace.pyx"), frames, "_trace.pyx")


def test_planted_into_a_real_file_is_caught():
    path = ROOT / DISTRIBUTIONS["retrograd-compile"][2] / "api.py"
    text = path.read_text()
    assert not import_violations("retrograd-compile", path, text)
    assert import_violations("retrograd-compile", path, text + "\n\nimport retrograd as rg\n")


def test_code_lines_count_code_only():
    py = '"""Doc\n\nmore doc"""\n# a comment\n\nx = 1  # trailing\n\n\ndef f():\n    """doc"""\n    return x\n'
    assert code_lines(py, ".py") == 3
    pyx = '# c\n"""doc\nstill doc\n"""\ncdef int x = 1\n\ndef f():\n    """one line"""\n    return x\n'
    assert code_lines(pyx, ".pyx") == 3


def test_a_new_long_file_is_caught(tmp_path):
    body = "\n".join(f"x{i} = {i}" for i in range(MAX_CODE_LINES + 1)) + "\n"
    assert code_lines(body, ".py") > MAX_CODE_LINES
    assert "core/retrograd/core/_new_long.py" not in TOO_LONG
