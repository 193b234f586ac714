"""The docstrings of core's Python-level API that users reach as ``rg.X``,
``rg.linalg.X`` and ``rg.Tensor.X`` (the ops of derivatives.yaml:
test_op_docstrings.py): each is numpydoc with an Examples section, and the
examples run as doctests and print what they say."""
from __future__ import annotations

import doctest
import inspect

import numpy as np
import pytest

import retrograd as rg
import retrograd.core as core
from retrograd.core import anomaly_mode, grad_mode, linalg
from retrograd.core import (_config, _numpy_like, _numpy_like_index, _numpy_like_linalg, _numpy_like_misc,
                            _numpy_like_select, _numpy_like_shape)
from retrograd.core._composites_reductions_linalg import __all__ as _redlin_all
from retrograd.core._creation import __all__ as _creation_all
from retrograd.core._generated_ops_info import OPS

_TABLE_METHODS = {m for info in OPS.values() for m in info["methods"] + info["inplace"]}


def _objects() -> dict:
    out = {f"rg.{n}": getattr(core, n) for n in _creation_all}
    out.update({f"rg.{n}": getattr(grad_mode, n) for n in ("no_grad", "enable_grad", "set_grad_enabled",
                                                           "inference_mode")})
    out.update({f"anomaly_mode.{n}": getattr(anomaly_mode, n)
                for n in ("set_anomaly_enabled", "detect_anomaly", "set_detect_anomaly")})
    out.update({f"rg.{n}": getattr(rg, n) for n in _redlin_all})
    out.update({f"rg.linalg.{n}": getattr(linalg, n) for n in linalg.__all__ if n != "LinAlgError"})
    out.update({f"rg.{n}": getattr(core, n) for n in core.SHAPE_COMPOSITES})
    # torch's functions written as composites (issue 41), and the switches
    for mod in (_numpy_like, _numpy_like_shape, _numpy_like_linalg, _numpy_like_misc, _numpy_like_index,
                _numpy_like_select, _config):
        out.update({f"rg.{n}": getattr(core, n) for n in mod.__all__ if callable(getattr(core, n))})
    out["rg.Tensor"] = rg.Tensor
    for n in dir(rg.Tensor):
        if not n.startswith("_") and n not in _TABLE_METHODS:
            out[f"rg.Tensor.{n}"] = inspect.getattr_static(rg.Tensor, n)
    return out


OBJECTS = _objects()

def _doc(obj) -> str:
    return inspect.getdoc(obj) or ""


def _has_examples(obj) -> bool:
    return "Examples\n--------\n>>> import retrograd as rg" in _doc(obj)


def test_every_object_has_examples():
    missing = sorted(n for n, o in OBJECTS.items() if not _has_examples(o))
    assert not missing, f"these lack a numpydoc Examples section starting with `>>> import retrograd as rg`: {missing}"


DOCUMENTED = sorted(n for n, o in OBJECTS.items() if _has_examples(o))


@pytest.mark.parametrize("name", DOCUMENTED)
def test_docstring_examples_run(name):
    doc = _doc(OBJECTS[name])
    if callable(OBJECTS[name]) and not isinstance(OBJECTS[name], property):
        # a callable documents what it returns (a class documents itself)
        assert inspect.isclass(OBJECTS[name]) or "Returns\n-------" in doc or name.startswith("rg.Tensor."), name
    test = doctest.DocTestParser().get_doctest(doc, {}, name, None, 0)
    out = []
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    grad_on = rg.is_grad_enabled()
    try:
        rg.manual_seed(0)
        runner.run(test, out=out.append)
    finally:
        rg.set_grad_enabled(grad_on)
        rg.set_anomaly_enabled(False)
    assert runner.failures == 0, "".join(out)


def test_seeded_examples_are_reproducible():
    # what the docstrings of rand/randn rely on: manual_seed fixes the stream
    rg.manual_seed(0)
    a = rg.rand(3).numpy().copy()
    rg.manual_seed(0)
    assert np.array_equal(rg.rand(3).numpy(), a)
