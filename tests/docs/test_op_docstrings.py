"""Core's docstrings: every public op of derivatives.yaml has a `doc:` (its
numpydoc body, _codegen/docs.py), and the examples of every op, Tensor
method and other public name of core reachable as `rg.X` run as doctests
and print what they say."""
from __future__ import annotations

import doctest
import inspect

import numpy as np
import pytest

import retrograd as rg
from retrograd.core._generated_ops_info import OPS

PUBLIC_OPS = sorted(n for n, info in OPS.items() if info["public"] and not n.startswith("_"))
# Tensor methods bound by the table (operators carry no docstring of their own)
METHODS = sorted({(m, n) for n, info in OPS.items() for m in info["methods"] + info["inplace"]
                  if not m.startswith("__")})


def _run_doctests(doc: str, name: str) -> None:
    """Run the doctests of `doc`; fail with doctest's report when one fails."""
    test = doctest.DocTestParser().get_doctest(doc, {"np": np}, name, None, 0)
    assert test.examples, f"{name}: no examples in its docstring"
    out = []
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    state = np.get_printoptions()
    try:
        rg.manual_seed(0)
        runner.run(test, out=out.append)
    finally:
        np.set_printoptions(**state)
    assert runner.failures == 0, "".join(out)


def _sections(doc: str) -> list:
    lines = inspect.cleandoc(doc).split("\n")
    return [lines[i] for i in range(len(lines) - 1)
            if lines[i + 1].strip() and set(lines[i + 1].strip()) == {"-"} and lines[i].strip()]


def test_every_public_op_has_a_doc():
    missing = [f"{n} (derivatives.yaml line {OPS[n]['line']})" for n in PUBLIC_OPS if not OPS[n]["doc"]]
    assert not missing, "public ops without a `doc:` in derivatives.yaml:\n" + "\n".join(missing)


@pytest.mark.parametrize("name", PUBLIC_OPS)
def test_op_docstring(name):
    fn = getattr(rg, name)
    assert fn.__doc__, name
    if OPS[name]["doc"] is None:
        pytest.skip(f"{name} has no doc (test_every_public_op_has_a_doc lists it)")
    assert OPS[name]["doc"].rstrip("\n") in fn.__doc__
    assert {"Parameters", "Returns", "Examples"} <= set(_sections(fn.__doc__))
    _run_doctests(fn.__doc__, f"rg.{name}")


@pytest.mark.parametrize("method,op", METHODS, ids=[m for m, _ in METHODS])
def test_method_docstring(method, op):
    if OPS[op]["doc"] is None:
        pytest.skip(f"{op} has no doc (test_every_public_op_has_a_doc lists it)")
    doc = getattr(rg.Tensor, method).__doc__
    assert {"Returns", "Examples"} <= set(_sections(doc)), method
    examples = doc.split("Examples\n--------", 1)[1]
    # the examples show the method itself, not only the function
    assert f".{method}(" in examples, f"Tensor.{method}: its examples never call it"
    _run_doctests(doc, f"Tensor.{method}")


ALIAS_FUNCTIONS = sorted((a, n) for n, info in OPS.items() for a in info["aliases"] + info["inplace_functions"])


@pytest.mark.parametrize("name,op", ALIAS_FUNCTIONS, ids=[a for a, _ in ALIAS_FUNCTIONS])
def test_alias_and_inplace_function_docstring(name, op):
    # torch's other names of an op (`aliases:`) and its in-place functions
    # (`inplace_function:`): docstrings derived from the op's, examples that call them
    if OPS[op]["doc"] is None:
        pytest.skip(f"{op} has no doc (test_every_public_op_has_a_doc lists it)")
    doc = getattr(rg, name).__doc__
    assert {"Parameters", "Returns", "Examples"} <= set(_sections(doc)), name
    assert f"rg.{name}(" in doc.split("Examples\n--------", 1)[1], f"rg.{name}: its examples never call it"
    _run_doctests(doc, f"rg.{name}")
