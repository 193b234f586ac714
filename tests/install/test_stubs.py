"""Typing: every compiled module that code outside its distribution imports
(core's abi and each sibling's extension) ships a stub (.pyi) and a PEP 561
marker (py.typed), and the stub tells the truth about the module as built.
Core's topic modules (docs/design.md, "Core's modules") are private to core
and ship none.

Nothing here compares against a committed file: core's stub is written at
build time (core/retrograd/core/_codegen/gen_stubs.py, from abi.pyi.in and
derivatives.yaml), the siblings' stubs are written by hand; both are read
where the build put them and checked against the imported module.
"""
import ast
import importlib
import importlib.util
import inspect
import pathlib
import shutil
import subprocess
import sys
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
CODEGEN = ROOT / "core" / "retrograd" / "core" / "_codegen"

# compiled module -> its distribution
DIST_OF = {"retrograd.core.abi": "retrograd-core", "retrograd.engine._engine": "retrograd-engine",
           "retrograd.forward_ad._dual": "retrograd-forward-ad",
           "retrograd.profiler._collector": "retrograd-profiler"}
# the private names a stub may hold: those the distributions' own Python
# modules call (test_private_stub_names_are_used checks they still do)
PRIVATE_ALLOWED = {"retrograd.engine._engine": {"_register", "_shutdown_device_threads"},
                   "retrograd.forward_ad._dual": {"_enter_batched_dual_level"}}
# dunders a class stub must declare when the runtime class defines them (not
# the ordering ones: Cython fills every rich-comparison slot of a class that
# defines __eq__, and they return NotImplemented)
PROTOCOL_DUNDERS = {"__init__", "__call__", "__getitem__", "__setitem__", "__iter__", "__len__",
                    "__bool__", "__int__", "__float__", "__index__", "__enter__", "__exit__",
                    "__eq__", "__ne__"}


def _module(mod_name):
    if importlib.util.find_spec(mod_name.rsplit(".", 1)[0]) is None:
        pytest.skip(f"needs {DIST_OF[mod_name]}, not installed in this environment")
    return importlib.import_module(mod_name)


def _stub_path(mod_name) -> pathlib.Path:
    """Where the install put the stub: beside the compiled module (a wheel, or
    the build directory of an editable install), else beside the package's
    Python files (an editable install of a hand-written stub)."""
    mod = _module(mod_name)
    short = mod_name.rsplit(".", 1)[1] + ".pyi"
    package = importlib.import_module(mod_name.rsplit(".", 1)[0])
    for folder in (pathlib.Path(mod.__file__).parent, pathlib.Path(package.__file__).parent):
        if (folder / short).exists():
            return folder / short
    pytest.fail(f"{mod_name}: no {short} beside {mod.__file__} or {package.__file__}")


def _is_typevar(node) -> bool:
    return isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and \
        getattr(node.value.func, "id", None) == "TypeVar"


def _members(body) -> dict:
    """name -> its ast node(s), for what a stub body defines (imports and
    TypeVars excluded: they are not the module's names)."""
    out = {}
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            out.setdefault(node.name, []).append(node)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out.setdefault(node.target.id, []).append(node)
        elif isinstance(node, ast.Assign) and not _is_typevar(node):
            for t in node.targets:
                if isinstance(t, ast.Name) and t.id != "__all__":
                    out.setdefault(t.id, []).append(node)
    return out


def _stub(mod_name):
    return ast.parse(_stub_path(mod_name).read_text())


def _formula_internals(mod) -> set:
    """Names of core's module that only generated code calls: the formula
    vocabulary of _codegen/formulas.py (helpers, kernels, the A/T namespaces)."""
    if mod.__name__ != "retrograd.core.abi":
        return set()
    sys.path.insert(0, str(CODEGEN))
    try:
        import formulas
    finally:
        sys.path.pop(0)
    names = set(formulas.NS_HELPERS) | set(formulas.VALUE_HELPERS) | {"A", "T"}
    return names | {n for n in vars(mod) if n.startswith(formulas.KERNEL_PREFIXES)}


def _public_runtime_names(mod) -> set:
    out = set()
    for name, value in vars(mod).items():
        if name.startswith("_") or inspect.ismodule(value):
            continue
        owner = getattr(value, "__module__", mod.__name__)
        if (inspect.isclass(value) or callable(value)) and owner != mod.__name__:
            continue            # re-exported from elsewhere (ndarray, LinAlgError)
        out.add(name)
    return out - _formula_internals(mod)


def _signature_names(obj):
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None             # no signature to compare (a C slot wrapper)
    return [p.name for p in sig.parameters.values()]


def _stub_names(fn: ast.FunctionDef):
    a = fn.args
    names = [p.arg for p in a.posonlyargs + a.args]
    if a.vararg:
        names.append(a.vararg.arg)
    names += [p.arg for p in a.kwonlyargs]
    if a.kwarg:
        names.append(a.kwarg.arg)
    return names


def _check_function(where, runtime, defs, problems):
    if type(runtime).__name__ == "wrapper_descriptor":
        return      # a C slot (Cython's __add__, __init__ of a cdef class): generic (self, value) names
    names = _signature_names(runtime)
    if names is None:
        return
    stub_sigs = [_stub_names(d) for d in defs if isinstance(d, ast.FunctionDef)
                 and not any(getattr(dec, "id", None) == "overload" for dec in d.decorator_list)]
    stub_sigs = stub_sigs or [_stub_names(d) for d in defs if isinstance(d, ast.FunctionDef)]
    if not stub_sigs:
        problems.append(f"{where}: a function at run time, not in the stub")
        return
    # an overloaded method: the runtime parameters must be one overload's
    if names not in stub_sigs and not any(s[:1] == ["self"] and names == s[1:] for s in stub_sigs):
        problems.append(f"{where}: parameters {names} at run time, {stub_sigs} in the stub")


@pytest.mark.parametrize("mod_name", sorted(DIST_OF))
def test_stub_and_marker_are_installed(mod_name):
    path = _stub_path(mod_name)
    package = importlib.import_module(mod_name.rsplit(".", 1)[0])
    assert (pathlib.Path(package.__file__).parent / "py.typed").exists()
    assert path.read_text().strip()


@pytest.mark.parametrize("mod_name", sorted(DIST_OF))
def test_every_public_name_has_a_stub(mod_name):
    mod = _module(mod_name)
    stubbed = _members(_stub(mod_name).body)
    missing = sorted(_public_runtime_names(mod) - set(stubbed))
    assert not missing, f"{mod_name}: public names without a stub: {missing}"


@pytest.mark.parametrize("mod_name", sorted(DIST_OF))
def test_stub_matches_the_runtime(mod_name):
    """Each stubbed name exists at run time; functions and methods take the
    parameters the runtime signature names; classes stub their public
    methods and properties."""
    mod = _module(mod_name)
    problems = []
    for name, defs in _members(_stub(mod_name).body).items():
        if not hasattr(mod, name):
            problems.append(f"{name}: in the stub, not in the module")
            continue
        runtime = getattr(mod, name)
        if isinstance(defs[0], ast.FunctionDef):
            _check_function(name, runtime, defs, problems)
        elif isinstance(defs[0], ast.ClassDef):
            members = _members(defs[0].body)
            for attr, value in vars(runtime).items():
                if (attr.startswith("_") and attr not in PROTOCOL_DUNDERS) or attr in members:
                    continue
                if callable(value) or isinstance(value, property) or \
                        type(value).__name__ in ("getset_descriptor", "member_descriptor"):
                    problems.append(f"{name}.{attr}: at run time, not in the stub")
            for attr, mdefs in members.items():
                if not hasattr(runtime, attr):
                    problems.append(f"{name}.{attr}: in the stub, not at run time")
                elif isinstance(mdefs[0], ast.FunctionDef) and not any(
                        getattr(d, "id", getattr(d, "attr", None)) in ("property", "setter")
                        for d in mdefs[0].decorator_list):
                    _check_function(f"{name}.{attr}", getattr(runtime, attr), mdefs, problems)
    assert not problems, f"{mod_name}:\n" + "\n".join(problems)


@pytest.mark.parametrize("mod_name", sorted(DIST_OF))
def test_no_private_names(mod_name):
    """A stub describes what users (and the distributions' own Python
    modules) reach: no private names, classes' members included."""
    tree = _stub(mod_name)
    allowed = PRIVATE_ALLOWED.get(mod_name, set())
    found = [n for n in _members(tree.body) if n.startswith("_") and n not in allowed]
    for cls in (d for defs in _members(tree.body).values() for d in defs if isinstance(d, ast.ClassDef)):
        found += [f"{cls.name}.{n}" for n in _members(cls.body)
                  if n.startswith("_") and not (n.startswith("__") and n.endswith("__"))]
    assert not found, f"{mod_name}: private names in the stub: {found}"


def test_private_stub_names_are_used():
    """Each private name a stub keeps is still called by a Python module of
    the repository (else it goes from the stub)."""
    sources = "\n".join(p.read_text() for folder in ("core", "engine", "forward_ad", "profiler", "packages")
                        for p in (ROOT / folder).rglob("*.py") if "build" not in p.parts)
    for mod_name, names in PRIVATE_ALLOWED.items():
        for name in names:
            assert f".{name}" in sources or f"import {name}" in sources, (mod_name, name)


def test_generated_ops_are_typed_from_the_table():
    """The op part of core's stub: one typed function per public entry,
    Tensor's op methods, one Node class per backward node."""
    mod = _module("retrograd.core.abi")
    text = _stub_path("retrograd.core.abi").read_text()
    # (the body of a documented op is its docstring, of an undocumented one `...`)
    assert "\ndef mul(self: Tensor | ArrayLike, other: Tensor | ArrayLike) -> Tensor:" in text
    assert "\ndef sum(self: Tensor | ArrayLike, dim: int | tuple[int, ...] | None = None, keepdim: bool = False, " \
           "*, dtype: DTypeLike | None = None) -> Tensor:\n    \"\"\"Sum of the elements" in text
    assert "\ndef cat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:" in text
    tensor = text.split("\nclass Tensor:\n", 1)[1].split("\nclass ", 1)[0]
    assert "    def __add__(self, other: Tensor | ArrayLike) -> Tensor: ...\n" in tensor
    assert "    def exp_(self) -> Tensor:" in tensor
    assert not [line for line in text.splitlines() if line.lstrip().startswith("# @@GENERATED")]
    for name in mod.GENERATED_OPS:
        if not name.startswith("_"):
            assert f"\ndef {name}(" in text, name
    assert "\nclass MulBackward0(Node): ...\n" in text


def _gen_stubs():
    sys.path.insert(0, str(CODEGEN))
    try:
        return importlib.import_module("gen_stubs")
    finally:
        sys.path.pop(0)


def test_generator_types_parameters_from_the_signature(tmp_path):
    pytest.importorskip("yaml")
    gen = _gen_stubs()
    table = tmp_path / "derivatives.yaml"
    table.write_text(textwrap.dedent("""\
        - name: scale(Tensor self, Tensor other, dim=None, bool keepdim=False, *, float alpha=1.0)
          kernel: self * other * alpha
          self: grad * other * alpha
          other: grad * self * alpha
          methods: [scale, __mul__]
          inplace: true
        """))
    template = (ROOT / "core" / "retrograd" / "core" / "abi.pyi.in").read_text()
    text = gen.render(gen.load(str(table)), template)
    assert "\ndef scale(self: Tensor | ArrayLike, other: Tensor | ArrayLike, dim: int | tuple[int, ...] | None = None, " \
           "keepdim: bool = False, *, alpha: float = ...) -> Tensor: ...\n" in text
    assert "    def __mul__(self, other: Tensor | ArrayLike) -> Tensor: ...\n" in text
    # in class Tensor, whose methods int/float/bool shadow the builtins
    assert "    def scale_(self, other: Tensor | ArrayLike, dim: builtins.int | tuple[builtins.int, ...] | None " \
           "= None, keepdim: builtins.bool = False, *, alpha: builtins.float = ...) -> Tensor: ...\n" in text
    assert "\nclass ScaleBackward0(Node): ...\n" in text
    assert "__all__ += ['scale']" in text


def test_generator_refuses_an_untyped_unknown_parameter(tmp_path):
    pytest.importorskip("yaml")
    gen = _gen_stubs()
    table = tmp_path / "derivatives.yaml"
    table.write_text("- name: odd(Tensor self, wobble)\n  kernel: self\n  self: grad\n")
    out = tmp_path / "abi.pyi"
    res = subprocess.run([sys.executable, str(CODEGEN / "gen_stubs.py"), str(table),
                          str(ROOT / "core" / "retrograd" / "core" / "abi.pyi.in"), str(out)],
                         capture_output=True, text=True)
    assert res.returncode == 1 and not out.exists()
    assert "untyped parameter 'wobble'" in res.stderr and "PARAM_TYPES" in res.stderr
    with pytest.raises(gen.TableError, match="exactly once"):
        gen.render(gen.load(str(table)), "class Tensor:\n    pass\n")


def _typing_tree(tmp_path) -> pathlib.Path | None:
    """For a development (editable) install, which mypy cannot follow: the
    packages' Python files and stubs joined into one `retrograd` tree, with
    the built abi.pyi. None for a regular install (mypy reads site-packages)."""
    core = pathlib.Path(importlib.import_module("retrograd.core").__file__).resolve()
    if ROOT not in core.parents:
        return None
    tree = tmp_path / "tree"
    for folder in ("core/retrograd", "engine/retrograd", "forward_ad/retrograd", "profiler/retrograd",
                   "packages/retrograd/retrograd"):
        shutil.copytree(ROOT / folder, tree / "retrograd", dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("*.pyx", "*.pxi", "*.pxd", "*.so", "__pycache__",
                                                      "_codegen", "meson.build", "*.in", "include"))
    shutil.copy(_stub_path("retrograd.core.abi"), tree / "retrograd" / "core" / "abi.pyi")
    for name in ("core", "engine", "forward_ad", "profiler", ""):
        version = tree / "retrograd" / name / "_version.py"
        if not version.exists():
            version.write_text('__version__ = "0"\n')
    return tree


def test_mypy_sees_the_public_api_typed(tmp_path):
    """mypy --strict on tests/typing/typed_usage.py: its assert_type lines
    pin F.linear, F.cross_entropy, Tensor.item, rg.autograd.grad and
    autograd.functional.hessian (and more) to their types, not Any; then a
    wrong program must fail."""
    pytest.importorskip("mypy", reason="needs mypy (`nox -s typing` installs it)")
    pytest.importorskip("retrograd.autograd", reason="needs the umbrella retrograd")
    tree = _typing_tree(tmp_path)
    env = None
    if tree is not None:
        import os
        env = {**os.environ, "MYPYPATH": str(tree)}
    program = ROOT / "tests" / "typing" / "typed_usage.py"
    run = [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--follow-imports=silent",
           "--python-version", "3.10", "--cache-dir", str(tmp_path / "cache"), "--config-file", "",
           "--no-warn-unused-ignores"]
    res = subprocess.run(run + [str(program)], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert res.returncode == 0, res.stdout + res.stderr
    revealed = tmp_path / "revealed.py"
    revealed.write_text(textwrap.dedent("""\
        import retrograd as rg
        import retrograd.nn.functional as F
        from retrograd.autograd.functional import hessian
        x = rg.tensor([1.0])
        reveal_type(F.linear)
        reveal_type(F.cross_entropy(x, x))
        reveal_type(x.item())
        reveal_type(rg.autograd.grad)
        reveal_type(hessian(lambda t: t.sum(), x))
        x.no_such_method()
        rg.exp(x, no_such_param=1)
    """))
    res = subprocess.run(run + [str(revealed)], capture_output=True, text=True, cwd=tmp_path, env=env)
    out = res.stdout
    assert res.returncode == 1, out + res.stderr
    lines = [line for line in out.splitlines() if "Revealed type" in line]
    assert len(lines) == 5 and not any('"Any"' in line for line in lines), out
    assert "retrograd.core.abi.Tensor" in lines[0] and "bias" in lines[0], out
    assert lines[1].endswith('"retrograd.core.abi.Tensor"'), out
    assert lines[2].endswith('"int | float"'), out      # bool is an int to mypy
    assert "tuple[retrograd.core.abi.Tensor, ...]" in lines[3], out
    assert lines[4].endswith('"retrograd.core.abi.Tensor"'), out
    assert '"Tensor" has no attribute "no_such_method"' in out, out
    assert 'Unexpected keyword argument "no_such_param"' in out, out


def test_typed_program_runs():
    """The typed program is a real one: it runs, and its isinstance checks
    agree with the types mypy was told."""
    pytest.importorskip("retrograd.autograd", reason="needs the umbrella retrograd")
    res = subprocess.run([sys.executable, str(ROOT / "tests" / "typing" / "typed_usage.py")],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
