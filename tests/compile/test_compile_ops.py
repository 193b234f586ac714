"""Every op sample of the registry (tests/ops/op_samples.py) through
rg.compile, against eager: values, gradients and (for the ops whose formulas
are differentiable) second-order gradients through the compiled node, in
float64 and float32.

A sample either compiles (its guard key has programs) or its op is listed in
EAGER_OPS with the reason it breaks the graph: a new break fails here."""
import os
import sys
import warnings

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ops"))

import retrograd as rg  # noqa: E402
from op_samples import DIFF_OPS, GRADGRAD_OPS, OP_DB, make_tensors  # noqa: E402

# ops whose samples run eagerly under rg.compile, and why
EAGER_OPS = {
    # a value the ops did not compute reaches an op: a mask, indices or a
    # zero gradient made in NumPy by the backward formula (or the forward
    # composite). It would be baked in as traced, and nothing proves it
    # does not depend on the inputs, so the key runs eagerly
    **{name: "a value computed outside the ops (never baked in)" for name in (
        "_linalg_cholesky", "_linalg_svd", "_linalg_eigh", "_linalg_qr")},
    # its backward's formula depends on whether a matrix is singular (the
    # singular one is NumPy's SVD): the formula breaks the graph
    "_linalg_det": "a backward that branches on singularity",
    # the sample's op calls np.asarray on a tensor (data-dependent Python)
    "_take_dim": "np.asarray(tensor) in the sample's op",
}

_GRADGRAD = {o.name for o in GRADGRAD_OPS}
_DIFF = {o.name for o in DIFF_OPS}


def _outs(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _weights(outs, seed=3):
    rng = np.random.default_rng(seed)
    return [rg.tensor(rng.standard_normal(o.shape).astype(o.dtype), device=o.device) for o in outs]


def _loss(outs):
    diff = [o for o in outs if isinstance(o, rg.Tensor) and o.requires_grad]
    if not diff:
        return None
    ws = _weights(diff)
    return sum(((o * w).sum() for o, w in zip(diff, ws)), rg.zeros((), device=diff[0].device))


def _host(t):
    return np.array(t.detach().cpu().numpy())


def _grads(op, sample, fn, create_graph, device=None):
    args, leaves = make_tensors(sample, device=device)
    outs = _outs(fn(*args, **sample.kwargs))
    vals = [_host(o) for o in outs]
    loss = _loss(outs)
    if loss is None or not leaves:
        return vals, None, None
    gs = rg.autograd.grad(loss, leaves, create_graph=create_graph, allow_unused=True)
    g1 = [None if g is None else _host(g) for g in gs]
    g2 = None
    if create_graph:
        used = [g for g in gs if g is not None and g.requires_grad]
        if used:
            s = _loss(used)
            g2s = rg.autograd.grad(s, leaves, allow_unused=True)
            g2 = [None if g is None else _host(g) for g in g2s]
    return vals, g1, g2


def _close(a, b, dtype):
    if a is None or b is None:
        assert a is None and b is None
        return
    tol = 1e-9 if dtype == np.float64 else 1e-4
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def _params(dtype):
    out = []
    for op in OP_DB:
        for i, s in enumerate(op.samples(dtype)):
            out.append(pytest.param(op, s, id=f"{op.name}-{i}-{s.desc}"))
    return out


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
def test_every_op_sample_compiles_and_agrees(dtype):
    check_every_op_sample(dtype)


def check_every_op_sample(dtype, device=None, eager_ops=EAGER_OPS):
    """Each sample of the registry through rg.compile on ``device`` agrees
    with eager; a sample that runs eagerly must be one of ``eager_ops``."""
    seen, eager, names = 0, {}, set()
    for p in _params(dtype):
        op, sample = p.values
        names.add(op.name)
        if op.name in ("rand_like", "randn_like", "dropout"):
            continue                 # random: tests/compile/test_compile_random.py
        gg = dtype == np.float64 and op.name in _GRADGRAD

        def fn(*args, **kwargs):
            return op.op(*args, **kwargs)

        cf = rg.compile(fn)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            try:
                want = _grads(op, sample, fn, gg, device)
            except Exception:
                continue             # the sample is an error case: eager raises too
            first = _grads(op, sample, cf, gg, device)       # traces (eager values)
            got = _grads(op, sample, cf, gg, device)         # the programs
        for a, b in zip(first, want):
            for x, y in zip(a or [], b or []):
                _close(x, y, dtype)
        for a, b in zip(got, want):
            assert (a is None) == (b is None), (p.id, a, b)
            for x, y in zip(a or [], b or []):
                _close(x, y, dtype)
        info = cf.cache_info()
        seen += 1
        if info["compiled"] == 0:
            eager.setdefault(op.name, []).append(p.id)
    unexpected = {k: v for k, v in eager.items() if k not in eager_ops}
    assert not unexpected, f"samples that ran eagerly: {unexpected}"
    # (and the list stays true: an op listed runs some sample eagerly)
    stale = sorted(k for k in eager_ops if k in names and k not in eager)
    assert not stale, f"ops listed as eager whose samples all compile now: {stale}"
    assert seen > 300
