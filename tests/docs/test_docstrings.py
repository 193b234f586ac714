"""Every public object of the API reference has a numpydoc docstring whose
Examples run.

The modules and objects are those of the documentation site's API reference
(``docs/_ext/rg_api.py``: one list for both), each object once, under the
first module that exports it, plus the public methods that a public class
defines itself. For each one:

(a) its docstring's doctests run and print what they say (a fresh namespace:
    each Examples section imports what it uses, starting with
    ``>>> import retrograd as rg``);
(b) it has a summary line, a ``Parameters`` section when the callable takes
    parameters, a ``Returns`` (or ``Yields``) section when it returns
    something, and an ``Examples`` section. Properties, and methods that
    override a documented method of a retrograd base class (a layer's
    ``forward``), need a summary only, or none when they inherit the base
    method's docstring. A C-level attribute (a ``cdef readonly`` field, a
    ``__slots__`` entry), which cannot hold a docstring, is documented in
    its class's numpydoc ``Attributes`` section instead.

One test per module, failing with one message that names every object that
falls short and what it lacks.
"""
from __future__ import annotations

import ast
import doctest
import importlib.util
import inspect
import pathlib
import re
import sys
import textwrap

import numpy as np
import pytest

_API_FILE = pathlib.Path(__file__).resolve().parents[2] / "docs" / "_ext" / "rg_api.py"
_spec = importlib.util.spec_from_file_location("_rg_api", _API_FILE)
rg_api = importlib.util.module_from_spec(_spec)
sys.modules["_rg_api"] = rg_api             # dataclasses look their module up there
_spec.loader.exec_module(rg_api)

# The optional distributions a module needs: skipped, with the reason, when absent.
_NEEDS = {
    "retrograd.autograd.forward_ad": "retrograd.forward_ad",
    "retrograd.profiler": "retrograd.profiler",
    # (examples that start an MPI process group need mpi4py too)
    "retrograd.distributed": ("retrograd.distributed", "mpi4py"),
    "retrograd.distributed.nn.functional": ("retrograd.distributed", "mpi4py"),
    "retrograd.distributed.run": "retrograd.distributed",
    "retrograd.nn.parallel": ("retrograd.distributed", "mpi4py"),
}

# objects whose examples need an optional distribution their module does not
# (their numpydoc parts are still checked without it)
_OBJECT_NEEDS = {
    "retrograd.nn.Module.compile": "retrograd.compile",
}

_SECTION = re.compile(r"^[ \t]*([A-Z][A-Za-z ]+)\n[ \t]*(-{3,})[ \t]*$", re.M)


def _sections(doc: str) -> set[str]:
    return {m.group(1).strip() for m in _SECTION.finditer(doc) if len(m.group(2)) >= len(m.group(1).strip())}


def _summary(doc: str, name: str) -> str:
    lines = [ln.strip() for ln in doc.strip().splitlines()]
    # Cython embeds the signature as the first line: `name(args)`; skip it
    if lines and re.match(rf"^{re.escape(name)}\(.*\)(\s*->.*)?$", lines[0]):
        lines = lines[1:]
    lines = [ln for ln in lines if ln]
    return lines[0] if lines else ""


def _takes_parameters(obj, is_method: bool) -> bool | None:
    target = obj.__init__ if isinstance(obj, type) else obj
    if isinstance(obj, type) and target is object.__init__:
        return False
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        return None                           # unknown: not checked
    params = list(sig.parameters.values())
    if params and params[0].name in ("self", "cls") and (is_method or isinstance(obj, type)):
        params = params[1:]
    if isinstance(obj, type) and all(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
        return False                          # a class that takes nothing of its own (torch's Module(*args))
    return bool(params)


def _returns_something(obj) -> bool:
    if isinstance(obj, type):
        return False
    try:
        sig = inspect.signature(obj)
        ann = sig.return_annotation
    except (TypeError, ValueError):
        ann = inspect.Signature.empty
    if ann in (None, "None"):
        return False
    if ann is not inspect.Signature.empty:
        return True
    try:
        source = textwrap.dedent(inspect.getsource(obj))
        tree = ast.parse(source)
    except (OSError, TypeError, SyntaxError):
        return True                           # compiled: the ops return tensors
    func = tree.body[0]
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return True

    def walk(node):                           # the function's own body, not nested defs
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                continue
            yield child
            yield from walk(child)

    for node in walk(func):
        if isinstance(node, ast.Return) and node.value is not None and not (
                isinstance(node.value, ast.Constant) and node.value.value is None):
            return True
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return True
    return False


def _overrides_documented(owner: type, mname: str) -> bool:
    # a method that overrides a documented base method (a layer's forward,
    # extra_repr, an optimizer's step): the base documents its parameters
    for base in owner.__mro__[1:]:
        attr = base.__dict__.get(mname)
        if attr is not None and getattr(attr, "__doc__", None) and base.__module__.startswith("retrograd"):
            return True
    return False


def _described_by_owner(obj) -> bool:
    # A C-level attribute (a `cdef readonly` field declared in core's
    # abi.pxd, a __slots__ entry) cannot carry a docstring of its own; numpydoc
    # documents it in its class's "Attributes" section, as ``name : type``.
    owner = getattr(obj, "__objclass__", None)
    name = getattr(obj, "__name__", None)
    if owner is None or name is None or not (owner.__doc__ or "").strip():
        return False
    doc = inspect.cleandoc(owner.__doc__)
    match = re.search(r"^Attributes\n-{10,}\n(.*?)(?:\n\n[A-Z][A-Za-z ]+\n-{3,}|\Z)", doc, re.M | re.S)
    return bool(match and re.search(rf"^{re.escape(name)} :", match.group(1), re.M))


def _lacks(name: str, obj, is_method: bool, is_property: bool) -> list[str]:
    doc = inspect.getdoc(obj) if not is_property else (obj.__doc__ or "")
    if (not doc or not doc.strip()) and is_property and _described_by_owner(obj):
        return []
    if not doc or not doc.strip():
        return ["a docstring"]
    short = name.rsplit(".", 1)[-1]
    missing = []
    if not _summary(doc, short):
        missing.append("a summary")
    if is_property or (isinstance(obj, type) and issubclass(obj, BaseException)):
        return missing                        # attributes and exceptions: a summary says it
    sections = _sections(doc)
    if _takes_parameters(obj, is_method) and "Parameters" not in sections:
        missing.append("Parameters")
    if _returns_something(obj) and not ({"Returns", "Yields"} & sections):
        missing.append("Returns")
    if "Examples" not in sections:
        missing.append("Examples")
    return missing


def _run_doctests(name: str, obj) -> str | None:
    finder = doctest.DocTestFinder(recurse=False, exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    try:
        tests = finder.find(obj, name, module=False, globs={"__name__": "__docstring__"})
    except ValueError:
        return None                           # no docstring source to read
    out: list[str] = []
    saved = np.get_printoptions()
    try:
        for test in tests:
            runner.run(test, out=out.append)
    finally:
        np.set_printoptions(**saved)
    report = "".join(out)
    if runner.failures and any(f"'{dist}' distribution, which is not installed" in report
                               or f"No module named '{module}'" in report for dist, module in _ABSENT):
        return None                           # an example of an optional distribution this set lacks
    return report if runner.failures else None


# the optional distributions not installed here (their examples cannot run)
_ABSENT = [(dist, module) for dist, module in (("retrograd-forward-ad", "retrograd.forward_ad"),
                                               ("retrograd-profiler", "retrograd.profiler"),
                                               ("retrograd-distributed", "retrograd.distributed"))
           if rg_api._absent(module)]


def _objects(entry_name: str):
    for entry, members in rg_api.collect(skip_absent=True):
        if entry.name != entry_name:
            continue
        for name, obj in members:
            yield f"{entry_name}.{name}", obj, False, False
            if isinstance(obj, type):
                for mname, attr in rg_api.public_methods(obj):
                    # a property, or an override of a documented base method:
                    # a summary is enough
                    if _overrides_documented(obj, mname) and not (getattr(attr, "__doc__", None) or "").strip():
                        continue              # inherits the base method's docstring, as help() shows it
                    summary_only = isinstance(attr, property) or (
                        inspect.isdatadescriptor(attr) and not inspect.isroutine(attr)) or (
                        _overrides_documented(obj, mname))
                    yield f"{entry_name}.{name}.{mname}", attr, True, summary_only


@pytest.mark.parametrize("module", [m.name for m in rg_api.MODULES])
def test_module_docstrings(module, tmp_path, monkeypatch):
    needs = _NEEDS.get(module, ())
    for need in (needs,) if isinstance(needs, str) else needs:
        pytest.importorskip(need, reason=f"{module} needs {need}")
    monkeypatch.chdir(tmp_path)               # examples that write files write them here
    lacking, failing = [], []
    for name, obj, is_method, summary_only in _objects(module):
        missing = _lacks(name, obj, is_method, summary_only)
        if missing:
            lacking.append(f"{name}: lacks {', '.join(missing)}")
        if name in _OBJECT_NEEDS and importlib.util.find_spec(_OBJECT_NEEDS[name]) is None:
            continue
        if not isinstance(obj, property) and not (inspect.isdatadescriptor(obj) and not inspect.isroutine(obj)):
            failure = _run_doctests(name, obj)
            if failure:
                failing.append(failure)
    message = []
    if lacking:
        message.append(f"{len(lacking)} objects of {module} lack numpydoc parts:\n  " + "\n  ".join(lacking))
    if failing:
        message.append(f"{len(failing)} docstrings of {module} have failing examples:\n" + "\n".join(failing))
    assert not message, "\n\n".join(message)
