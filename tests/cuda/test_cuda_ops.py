"""Every op of the sample registry (tests/ops/op_samples.py) on CUDA: values
and gradients computed on the device equal the CPU's, results and gradients
stay on the device as CuPy arrays, in float64 and float32."""
import os
import sys

import numpy as np
import pytest

from _cuda import assert_on_cuda, host, require_cuda

cp = require_cuda()

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "ops"))
import retrograd as rg  # noqa: E402
import opcheck  # noqa: E402
from op_samples import OP_DB, all_samples  # noqa: E402


def _cuda_args(sample):
    args, leaves = [], []
    for a in sample.args:
        if isinstance(a, np.ndarray):
            t = rg.tensor(a, device="cuda")
            assert t.dtype == a.dtype
            if a.dtype.kind == "f":
                t.requires_grad_(True)
                leaves.append(t)
            args.append(t)
        else:
            args.append(a)
    return args, leaves


def _check(op, sample, rtol, atol):
    differentiable = op.differentiable and bool(sample.diff_positions())
    if differentiable:
        v = opcheck.upstream(op, sample)
        out_c, grads_c = opcheck.vjp(op, sample, v)
    else:
        targs, _ = opcheck.make_tensors(sample, requires_grad=False)
        out_c, grads_c = op.op(*targs, **sample.kwargs), []
    args, leaves = _cuda_args(sample)
    out = op.op(*args, **sample.kwargs)
    assert_on_cuda(out, f"{op.name}'s result")
    assert out.dtype == out_c.dtype and out.shape == out_c.shape
    np.testing.assert_allclose(host(out), np.asarray(out_c), rtol=rtol, atol=atol)
    if not differentiable:
        assert not out.requires_grad
        return
    grads = rg.autograd.grad(out, leaves, grad_outputs=rg.tensor(v, device="cuda"), allow_unused=True)
    for i, (leaf, g, gc) in enumerate(zip(leaves, grads, grads_c)):
        if g is None:
            assert not np.any(np.asarray(gc)), f"{op.name}: no gradient on the device for input {i}"
            continue
        assert_on_cuda(g, f"{op.name}'s gradient {i}")
        assert g.dtype == leaf.dtype and g.shape == leaf.shape
        np.testing.assert_allclose(host(g), np.asarray(gc), rtol=rtol, atol=atol,
                                   err_msg=f"{op.name}: gradient {i}")


@pytest.mark.parametrize("op,sample", all_samples(OP_DB))
def test_op_on_cuda_float64(op, sample):
    _check(op, sample, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("op,sample", all_samples(OP_DB, dtype=np.float32))
def test_op_on_cuda_float32(op, sample):
    _check(op, sample, rtol=op.f32_rtol, atol=op.f32_atol * 10)
