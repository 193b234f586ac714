"""gradcheck (slow and fast mode, with the batched-grad check) passes on
every sample of the op registry (tests/ops/op_samples.py)."""
import os
import sys
import warnings

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ops"))

import retrograd as rg  # noqa: E402
from retrograd.autograd import gradcheck, gradgradcheck  # noqa: E402
from op_samples import DIFF_OPS, GRADGRAD_OPS, all_samples, make_tensors  # noqa: E402


def _low_precision_output(op, sample):
    # A float32 result cannot resolve a 1e-6 finite difference (torch's
    # gradcheck fails there too): _to_dtype casting float64 -> float32.
    return op.name == "_to_dtype" and np.dtype(sample.args[1]) != np.float64


def _op_as_function(op, sample):
    # The sample's op as a function of its differentiable tensor arguments
    # (the others fixed), and those arguments; skips what gradcheck can't take.
    targs, leaves = make_tensors(sample)
    if not leaves:
        pytest.skip("no differentiable argument")
    if _low_precision_output(op, sample):
        pytest.skip("float32 output: finite differences at eps=1e-6 are below its precision")
    pos = [i for i, a in enumerate(targs) if isinstance(a, rg.Tensor) and a.requires_grad]

    def f(*xs):
        args = list(targs)
        for p, x in zip(pos, xs):
            args[p] = x
        return op.op(*args, **sample.kwargs)
    return f, leaves


@pytest.mark.parametrize("fast_mode", [False, True], ids=["slow", "fast"])
@pytest.mark.parametrize("op,sample", all_samples(DIFF_OPS))
def test_gradcheck_op_samples(op, sample, fast_mode):
    f, leaves = _op_as_function(op, sample)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # float32 inputs warn, as in torch
        assert gradcheck(f, tuple(leaves), fast_mode=fast_mode, check_batched_grad=True,
                         atol=op.atol * 10, rtol=op.rtol * 100)


@pytest.mark.parametrize("op,sample", all_samples(GRADGRAD_OPS))
def test_gradgradcheck_op_samples(op, sample):
    # second order, with the batched check on the create_graph gradients
    f, leaves = _op_as_function(op, sample)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert gradgradcheck(f, tuple(leaves), check_batched_grad=True,
                             atol=op.atol * 10, rtol=op.rtol * 100)
