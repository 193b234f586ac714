"""Differential tests against PyTorch: for every op of the sample registry
(tests/ops/op_samples.py) and every sample, the forward value and the
gradients for a random upstream gradient match torch (float64)."""
import os
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ops"))

import retrograd as rg  # noqa: E402
from op_samples import DIFF_OPS, GRADGRAD_OPS, OP_DB, all_samples, make_tensors, torch_tensors  # noqa: E402

pytestmark = pytest.mark.oracle


def _torch_args(sample, requires_grad=True):
    return torch_tensors(torch, sample, requires_grad)


def _tnp(t):
    return t.detach().numpy(force=True)      # force: torch's ZeroTensor gradients (piecewise-linear ops)


@pytest.mark.parametrize("op,sample", all_samples(OP_DB))
def test_forward_matches_torch(op, sample):
    targs, _ = make_tensors(sample, requires_grad=False)
    out = op.op(*targs, **sample.kwargs)
    ref = op.torch_call(torch, *_torch_args(sample, False)[0], **sample.kwargs)
    r = _tnp(ref)
    assert tuple(out.shape) == r.shape, f"{op.name} {sample}: shape {out.shape} vs torch {r.shape}"
    assert out.dtype == r.dtype, f"{op.name} {sample}: dtype {out.dtype} vs torch {r.dtype}"
    np.testing.assert_allclose(np.asarray(out), r, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("op,sample", all_samples(DIFF_OPS))
def test_gradients_match_torch(op, sample):
    if not sample.diff_positions():
        pytest.skip("no differentiable input")
    targs, leaves = make_tensors(sample)
    out = op.op(*targs, **sample.kwargs)
    tin, tleaves = _torch_args(sample)
    tout = op.torch_call(torch, *tin, **sample.kwargs)
    v = np.random.default_rng(7).standard_normal(tuple(out.shape)).astype(out.dtype)
    grads = rg.autograd.grad(out, leaves, grad_outputs=rg.from_numpy(v), allow_unused=True)
    tgrads = torch.autograd.grad(tout, tleaves, grad_outputs=torch.from_numpy(v), allow_unused=True)
    for i, (g, tg) in enumerate(zip(grads, tgrads)):
        if tg is None:
            tg = torch.zeros_like(tleaves[i])
        g = np.zeros(leaves[i].shape) if g is None else np.asarray(g)
        assert g.shape == tuple(tg.shape)
        np.testing.assert_allclose(g, _tnp(tg), rtol=1e-10, atol=1e-12,
                                   err_msg=f"{op.name} {sample}: gradient {i} vs torch")


@pytest.mark.parametrize("op,sample", all_samples(GRADGRAD_OPS))
def test_second_order_matches_torch(op, sample):
    """grad with create_graph=True, then the gradient of a projection of it
    w.r.t. the inputs and the upstream gradient."""
    if not sample.diff_positions():
        pytest.skip("no differentiable input")
    rng = np.random.default_rng(11)
    targs, leaves = make_tensors(sample)
    out = op.op(*targs, **sample.kwargs)
    v = rng.standard_normal(tuple(out.shape)).astype(out.dtype)
    w = [rng.standard_normal(tuple(leaf.shape)) for leaf in leaves]

    vt = rg.from_numpy(v.copy()).requires_grad_(True)
    gs = rg.autograd.grad(out, leaves, grad_outputs=vt, create_graph=True, allow_unused=True)
    terms = [(g * rg.from_numpy(wi)).sum() for g, wi in zip(gs, w) if g is not None and g.requires_grad]

    tin, tleaves = _torch_args(sample)
    tout = op.torch_call(torch, *tin, **sample.kwargs)
    tv = torch.from_numpy(v.copy()).requires_grad_(True)
    tgs = torch.autograd.grad(tout, tleaves, grad_outputs=tv, create_graph=True, allow_unused=True)
    tterms = [(g * torch.from_numpy(wi)).sum() for g, wi in zip(tgs, w) if g is not None and g.requires_grad]
    # A first gradient that does not depend on anything (x ** 0) may or may
    # not record a graph; its second-order gradients are zero either way.
    second = [None] * (len(leaves) + 1)
    if terms:
        s = sum(terms[1:], terms[0])
        second = rg.autograd.grad(s, leaves + [vt], allow_unused=True)
    tsecond = [None] * (len(leaves) + 1)
    if tterms:
        ts = sum(tterms[1:], tterms[0])
        tsecond = torch.autograd.grad(ts, tleaves + [tv], allow_unused=True)
    for i, (g, tg) in enumerate(zip(second, tsecond)):
        ref = np.zeros(tuple((tleaves + [tv])[i].shape)) if tg is None else _tnp(tg)
        got = np.zeros(ref.shape) if g is None else np.asarray(g)
        np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-12,
                                   err_msg=f"{op.name} {sample}: second-order gradient {i} vs torch")
