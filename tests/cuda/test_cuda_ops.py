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
from op_samples import GRADGRAD_OPS, OP_DB, all_samples, make_tensors  # noqa: E402


def _check(op, sample, rtol, atol):
    differentiable = op.differentiable and bool(sample.diff_positions())
    if differentiable:
        v = opcheck.upstream(op, sample)
        out_c, grads_c = opcheck.vjp(op, sample, v)
    else:
        targs, _ = make_tensors(sample, requires_grad=False)
        out_c, grads_c = op.op(*targs, **sample.kwargs), []
    args, leaves = make_tensors(sample, device="cuda")
    assert all(t.dtype == a.dtype for t, a in zip(args, sample.args) if isinstance(a, np.ndarray))
    out = op.op(*args, **sample.kwargs)
    assert_on_cuda(out, f"{op.name}'s result")
    assert out.dtype == out_c.dtype and out.shape == out_c.shape
    np.testing.assert_allclose(host(out), host(out_c), rtol=rtol, atol=atol)
    if not differentiable:
        assert not out.requires_grad
        return
    grads = rg.autograd.grad(out, leaves, grad_outputs=rg.tensor(v, device="cuda"), allow_unused=True)
    for i, (leaf, g, gc) in enumerate(zip(leaves, grads, grads_c)):
        if g is None:
            assert not np.any(host(gc)), f"{op.name}: no gradient on the device for input {i}"
            continue
        assert_on_cuda(g, f"{op.name}'s gradient {i}")
        assert g.dtype == leaf.dtype and g.shape == leaf.shape
        np.testing.assert_allclose(host(g), host(gc), rtol=rtol, atol=atol,
                                   err_msg=f"{op.name}: gradient {i}")


@pytest.mark.parametrize("op,sample", all_samples(OP_DB))
def test_op_on_cuda_float64(op, sample):
    _check(op, sample, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("op,sample", all_samples(OP_DB, dtype=np.float32))
def test_op_on_cuda_float32(op, sample):
    _check(op, sample, rtol=op.f32_rtol, atol=op.f32_atol * 10)


def _jvp(op, sample, tangents, device):
    fwAD = pytest.importorskip("retrograd.forward_ad")
    args, _ = make_tensors(sample, requires_grad=False, device=device)
    with fwAD.dual_level():
        for p, v in tangents.items():
            args[p] = fwAD.make_dual(args[p], rg.tensor(v, device=device))
        primal, tangent = fwAD.unpack_dual(op.op(*args, **sample.kwargs))
    return primal, tangent


@pytest.mark.parametrize("op,sample", all_samples([o for o in OP_DB if o.differentiable]))
def test_forward_ad_on_cuda(op, sample):
    """Tangents computed on the device (the JVP table run on CuPy arrays)
    equal the CPU's, and stay on the device."""
    if not sample.diff_positions():
        pytest.skip("no differentiable input")
    rng = np.random.default_rng(5)
    tangents = {p: rng.standard_normal(sample.args[p].shape).astype(sample.args[p].dtype)
                for p in sample.diff_positions()}
    pc, tc = _jvp(op, sample, tangents, "cpu")
    pg, tg = _jvp(op, sample, tangents, "cuda")
    assert_on_cuda(pg, f"{op.name}'s primal")
    np.testing.assert_allclose(host(pg), np.asarray(pc._array), rtol=1e-9, atol=1e-11)
    if tc is None:
        assert tg is None or not np.any(host(tg))
        return
    assert tg is not None, f"{op.name}: no tangent on the device"
    assert_on_cuda(tg, f"{op.name}'s tangent")
    np.testing.assert_allclose(host(tg), np.asarray(tc._array), rtol=1e-9, atol=1e-11,
                               err_msg=f"{op.name}: tangent")


def _grad_of_grad(op, sample, v, w, device):
    args, leaves = make_tensors(sample, device=device)
    out = op.op(*args, **sample.kwargs)
    gs = rg.autograd.grad(out, leaves, grad_outputs=rg.tensor(v, device=device), create_graph=True,
                          allow_unused=True)
    terms = [(g * rg.tensor(wi, device=device)).sum() for g, wi in zip(gs, w) if g is not None and g.requires_grad]
    if not terms:
        return None
    return rg.autograd.grad(sum(terms), leaves, allow_unused=True)


@pytest.mark.parametrize("op,sample", all_samples(GRADGRAD_OPS))
def test_double_backward_on_cuda(op, sample):
    """Second derivatives (the backward formulas run on tensors, create_graph)
    computed on the device equal the CPU's."""
    if not sample.diff_positions():
        pytest.skip("no differentiable input")
    rng = np.random.default_rng(7)
    v = opcheck.upstream(op, sample)
    w = [rng.standard_normal(sample.args[p].shape) for p in sample.diff_positions()]
    ref = _grad_of_grad(op, sample, v, w, "cpu")
    got = _grad_of_grad(op, sample, v, w, "cuda")
    if ref is None:
        assert got is None
        return
    for i, (a, b) in enumerate(zip(got, ref)):
        if b is None:
            assert a is None or not np.any(host(a))
            continue
        assert_on_cuda(a, f"{op.name}'s second-order gradient {i}")
        np.testing.assert_allclose(host(a), np.asarray(b._array), rtol=1e-9, atol=1e-11,
                                   err_msg=f"{op.name}: second-order gradient {i}")
