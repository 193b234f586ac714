"""Forward-mode AD for every op of the sample registry (tests/ops/op_samples.py):
with a random tangent on every floating input, the tangent of the output

- equals the reverse-mode Jacobian times the tangents (the Jacobian's rows
  from one batched backward over the output's basis), and
- equals PyTorch's forward AD on the same sample (float64).

Also float32 samples against reverse mode, and non-contiguous inputs."""
import os
import sys

import numpy as np
import pytest

fwAD = pytest.importorskip("retrograd.forward_ad", reason="needs the retrograd-forward-ad distribution")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ops"))

import retrograd as rg  # noqa: E402
from op_samples import DIFF_OPS, all_samples, make_tensors, noncontiguous  # noqa: E402


def _tangents(sample, seed=5):
    rng = np.random.default_rng(seed)
    return {p: rng.standard_normal(sample.args[p].shape).astype(sample.args[p].dtype)
            for p in sample.diff_positions()}


def _rg_jvp(op, sample, tangents, transform=None):
    targs, _ = make_tensors(sample, requires_grad=False, transform=transform)
    with fwAD.dual_level():
        args = list(targs)
        for p, v in tangents.items():
            args[p] = fwAD.make_dual(targs[p], rg.from_numpy(v.copy()))
        out = op.op(*args, **sample.kwargs)
        primal, tangent = fwAD.unpack_dual(out)
        value = np.asarray(primal)
        jvp = np.zeros_like(value) if tangent is None else np.asarray(tangent)
    return value, jvp


def _reverse_jvp(op, sample, tangents):
    targs, leaves = make_tensors(sample)
    out = op.op(*targs, **sample.kwargs)
    n = int(np.prod(out.shape))
    if n == 0 or not leaves:
        return np.zeros(out.shape, dtype=out.dtype)
    basis = np.eye(n, dtype=out.dtype).reshape((n,) + tuple(out.shape))
    rows = rg.autograd.grad(out, leaves, grad_outputs=rg.from_numpy(basis), is_grads_batched=True,
                            allow_unused=True)
    total = np.zeros(n, dtype=out.dtype)
    for leaf_pos, (p, v) in enumerate(sorted(tangents.items())):
        r = rows[leaf_pos]
        if r is None:
            continue
        total += np.asarray(r).reshape(n, -1) @ v.reshape(-1)
    return total.reshape(out.shape)


@pytest.mark.parametrize("op,sample", all_samples(DIFF_OPS))
def test_jvp_matches_reverse_mode(op, sample):
    if not sample.diff_positions():
        pytest.skip("no differentiable input")
    tangents = _tangents(sample)
    _, jvp = _rg_jvp(op, sample, tangents)
    want = _reverse_jvp(op, sample, tangents)
    assert jvp.shape == want.shape
    np.testing.assert_allclose(jvp, want, rtol=1e-9, atol=1e-10,
                               err_msg=f"{op.name} {sample}: forward AD vs reverse-mode Jacobian")


@pytest.mark.parametrize("op,sample", all_samples(DIFF_OPS))
def test_jvp_matches_torch(op, sample):
    torch = pytest.importorskip("torch")
    tfw = torch.autograd.forward_ad
    if not sample.diff_positions():
        pytest.skip("no differentiable input")
    tangents = _tangents(sample)
    value, jvp = _rg_jvp(op, sample, tangents)
    with tfw.dual_level():
        args = []
        for i, a in enumerate(sample.args):
            if isinstance(a, np.ndarray):
                t = torch.from_numpy(a.copy())
                if i in tangents:
                    t = tfw.make_dual(t, torch.from_numpy(tangents[i].copy()))
                args.append(t)
            else:
                args.append(a)
        out = op.torch_call(torch, *args, **sample.kwargs)
        tp, tt = tfw.unpack_dual(out)
        tt = np.zeros(tuple(tp.shape)) if tt is None else tt.detach().numpy(force=True)
    np.testing.assert_allclose(value, tp.detach().numpy(force=True), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(jvp, tt, rtol=1e-9, atol=1e-10,
                               err_msg=f"{op.name} {sample}: forward AD vs torch's forward AD")


@pytest.mark.parametrize("op,sample", all_samples(DIFF_OPS, dtype=np.float32))
def test_jvp_float32(op, sample):
    if not sample.diff_positions():
        pytest.skip("no differentiable input")
    tangents = _tangents(sample)
    value, jvp = _rg_jvp(op, sample, tangents)
    want = _reverse_jvp(op, sample, tangents)
    assert jvp.dtype == value.dtype, f"{op.name}: tangent dtype {jvp.dtype} vs output {value.dtype}"
    np.testing.assert_allclose(jvp, want, rtol=op.f32_rtol * 10, atol=op.f32_atol * 10)


@pytest.mark.parametrize("op,sample", all_samples([o for o in DIFF_OPS if o.noncontig]))
def test_jvp_noncontiguous(op, sample):
    if not sample.diff_positions():
        pytest.skip("no differentiable input")
    tangents = _tangents(sample)
    _, jvp = _rg_jvp(op, sample, tangents, transform=noncontiguous)
    _, want = _rg_jvp(op, sample, tangents)
    np.testing.assert_allclose(jvp, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("op,sample", all_samples(DIFF_OPS))
def test_jvp_batched_level(op, sample):
    # three tangents pushed at once on a batched level == three separate pushes
    from retrograd.forward_ad import _dual
    if not sample.diff_positions():
        pytest.skip("no differentiable input")
    tangents = [_tangents(sample, seed=s) for s in (1, 2, 3)]
    targs, _ = make_tensors(sample, requires_grad=False)
    lvl = _dual._enter_batched_dual_level(3)
    try:
        args = list(targs)
        for p in sample.diff_positions():
            args[p] = fwAD.make_dual(targs[p], rg.from_numpy(np.stack([t[p] for t in tangents])),
                                     level=lvl)
        out = op.op(*args, **sample.kwargs)
        t = fwAD.unpack_dual(out, level=lvl).tangent
        got = np.zeros((3,) + tuple(out.shape)) if t is None else np.asarray(t)
    finally:
        fwAD.exit_dual_level(level=lvl)
    assert got.shape == (3,) + tuple(out.shape)
    for b in range(3):
        _, want = _rg_jvp(op, sample, tangents[b])
        np.testing.assert_allclose(got[b], want, rtol=1e-12, atol=1e-13,
                                   err_msg=f"{op.name} {sample}: batched tangent {b}")
