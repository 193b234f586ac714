"""grad(..., is_grads_batched=True): one backward over a leading batch dim of
the grad_outputs (engine Note [Batched gradients]). For every op of the
sample registry, the batched result equals the stack of per-row grads; a few
graphs are compared with torch."""
import os
import sys

import numpy as np
import pytest
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ops"))

import retrograd as rg  # noqa: E402
from op_samples import DIFF_OPS, all_samples, make_tensors  # noqa: E402

B = 3


def _tensor_outputs(out):
    outs = out if isinstance(out, (tuple, list)) else (out,)
    return [o for o in outs if isinstance(o, rg.Tensor) and o.requires_grad]


def _arr(t):
    return np.asarray(t._array)


@pytest.mark.parametrize("create_graph", [False, True], ids=["arrays", "create_graph"])
@pytest.mark.parametrize("op,sample", all_samples(DIFF_OPS))
def test_batched_equals_stacked_rows(op, sample, create_graph):
    targs, leaves = make_tensors(sample)
    if not leaves:
        pytest.skip("no differentiable argument")
    outs = _tensor_outputs(op.op(*targs, **sample.kwargs))
    if not outs:
        pytest.skip("no output requires grad")
    rng = np.random.default_rng(7)
    gos = [rng.standard_normal((B,) + tuple(o.shape)).astype(o.dtype) for o in outs]
    expected = []
    for b in range(B):
        row = rg.autograd.grad(outs, leaves, [rg.tensor(g[b]) for g in gos], retain_graph=True,
                               allow_unused=True)
        expected.append([np.zeros(tuple(x.shape)) if g is None else _arr(g)
                         for g, x in zip(row, leaves)])
    got = rg.autograd.grad(outs, leaves, [rg.tensor(g) for g in gos], retain_graph=True,
                           allow_unused=True, is_grads_batched=True, create_graph=create_graph)
    for i, (g, x) in enumerate(zip(got, leaves)):
        exp = np.stack([r[i] for r in expected])
        if g is None:
            assert not exp.any(), f"{op.name}: batched grad of input {i} is None, rows are not zero"
            continue
        assert tuple(g.shape) == (B,) + tuple(x.shape)
        assert g.dtype == x.dtype
        np.testing.assert_allclose(_arr(g), exp, rtol=1e-12, atol=1e-12,
                                   err_msg=f"{op.name} {sample}: input {i}")


def test_elementwise_chain_hook_sees_one_element_at_a_time():
    # As under torch's vmap, a hook on an intermediate sees one batch
    # element's gradient, shaped like the tensor, never the whole batch.
    x = rg.tensor(np.linspace(-1, 1, 5), requires_grad=True)
    y = x.sin()
    seen = []
    y.register_hook(lambda g: seen.append(tuple(g.shape)))
    z = (y * 2.0).exp()
    gos = rg.tensor(np.random.default_rng(0).standard_normal((4, 5)))
    (g,) = rg.autograd.grad(z, x, gos, is_grads_batched=True)
    assert seen == [(5,)] * 4
    ref = np.cos(_arr(x)) * 2.0 * np.exp(2.0 * np.sin(_arr(x)))
    np.testing.assert_allclose(_arr(g), _arr(gos) * ref, rtol=1e-12)


def test_batching_kind_comes_from_the_table():
    # core says how each node runs in a batched backward (the engine knows no
    # op): `batched: true` entries run as they are, entries with batching
    # formulas run those, every other node loops over the batch.
    from retrograd.core import _generated_ops_info
    from retrograd.core.abi import _node_batching_kind
    table = _generated_ops_info.OPS
    x = rg.tensor(np.ones((2, 3)), requires_grad=True)
    w = rg.tensor(np.ones((3, 4)), requires_grad=True)
    cases = {"mul": x * 2.0, "exp": x.exp(), "sum": x.sum(), "mean": x.mean(),
             "matmul": x @ w, "mm": rg.mm(x, w), "reshape": x.reshape(3, 2),
             "transpose": x.transpose(0, 1), "expand": x.expand(4, 2, 3),
             "cumsum": x.cumsum(0)}
    for op, out in cases.items():
        spec = table[op]["batched"]
        expected = "safe" if spec is True else ("rule" if spec else "loop")
        assert _node_batching_kind(out.grad_fn) == expected, op
    assert table["mul"]["batched"] is True
    assert set(table["matmul"]["batched"]) == {"self", "other"}
    assert not table["cumsum"]["batched"]
    # GraphRoot (several roots) passes gradients through: safe
    a, b = x.sum(dim=0), x.sum(dim=1)
    (ga,) = rg.autograd.grad((a, b), x, (rg.ones((4, 3)), rg.ones((4, 2))), is_grads_batched=True)
    np.testing.assert_allclose(_arr(ga), np.full((4, 2, 3), 2.0))


def _torch_and_rg(fn_rg, fn_t, shapes, B=5, create_graph=False):
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal(s) for s in shapes]
    xs = [rg.tensor(a, requires_grad=True) for a in arrays]
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    out, tout = fn_rg(*xs), fn_t(*ts)
    go = rng.standard_normal((B,) + tuple(tout.shape))
    g = rg.autograd.grad(out, xs, rg.tensor(go), is_grads_batched=True, create_graph=create_graph)
    tg = torch.autograd.grad(tout, ts, torch.tensor(go), is_grads_batched=True,
                             create_graph=create_graph)
    for a, b in zip(g, tg):
        np.testing.assert_allclose(_arr(a), b.detach().numpy(), rtol=1e-10, atol=1e-12)
    return xs, ts, g, tg


@pytest.mark.parametrize("name", ["mlp", "broadcast", "reductions", "scalar_out", "shape_ops"])
def test_matches_torch(name):
    if name == "mlp":
        _torch_and_rg(lambda W, x, b: (W @ x + b).tanh(),
                      lambda W, x, b: (W @ x + b).tanh(), [(4, 6), (6,), (4,)])
    elif name == "broadcast":
        _torch_and_rg(lambda a, b: (a * b).sigmoid() - b / (1 + a * a),
                      lambda a, b: (a * b).sigmoid() - b / (1 + a * a), [(3, 1, 4), (2, 4)])
    elif name == "reductions":
        _torch_and_rg(lambda a: a.exp().sum(dim=1) * a.mean(dim=1),
                      lambda a: a.exp().sum(dim=1) * a.mean(dim=1), [(3, 4)])
    elif name == "scalar_out":
        _torch_and_rg(lambda a, b: (a * b).sum(), lambda a, b: (a * b).sum(), [(3, 2), (2,)])
    else:
        _torch_and_rg(lambda a: a.reshape(2, 6).transpose(0, 1)[1:4] * 3.0,
                      lambda a: a.reshape(2, 6).transpose(0, 1)[1:4] * 3.0, [(3, 4)])


def test_create_graph_batched_is_differentiable():
    xs, ts, g, tg = _torch_and_rg(lambda W, x: (W @ x).tanh(), lambda W, x: (W @ x).tanh(),
                                  [(3, 4), (4,)], B=2, create_graph=True)
    assert g[0].requires_grad and g[1].requires_grad
    s = (g[0] * g[0]).sum() + g[1].sum()
    ts_ = (tg[0] * tg[0]).sum() + tg[1].sum()
    second = rg.autograd.grad(s, xs)
    tsecond = torch.autograd.grad(ts_, ts)
    for a, b in zip(second, tsecond):
        np.testing.assert_allclose(_arr(a), b.numpy(), rtol=1e-10, atol=1e-12)


def test_errors():
    x = rg.tensor(np.ones(3), requires_grad=True)
    y = x * 2.0
    with pytest.raises(RuntimeError, match="first dimension of each grad_output as the batch"):
        rg.autograd.grad(y, x, rg.tensor(np.ones((2, 4))), is_grads_batched=True)
    with pytest.raises(RuntimeError, match="needs grad_outputs"):
        rg.autograd.grad(y, x, is_grads_batched=True)
    z = x.sum()
    with pytest.raises(RuntimeError, match="different batch sizes"):
        rg.autograd.grad([y, z], x, [rg.tensor(np.ones((2, 3))), rg.tensor(np.ones(3))],
                         is_grads_batched=True)


def test_unused_input_and_materialize():
    x = rg.tensor(np.ones(3), requires_grad=True)
    w = rg.tensor(np.ones(2), requires_grad=True)
    y = x * 2.0
    go = rg.tensor(np.ones((4, 3)))
    with pytest.raises(RuntimeError, match="allow_unused=True"):
        rg.autograd.grad(y, [x, w], go, is_grads_batched=True, retain_graph=True)
    gx, gw = rg.autograd.grad(y, [x, w], go, is_grads_batched=True, allow_unused=True,
                              retain_graph=True)
    assert gw is None and tuple(gx.shape) == (4, 3)
    gx, gw = rg.autograd.grad(y, [x, w], go, is_grads_batched=True, materialize_grads=True)
    assert tuple(gw.shape) == (4, 2) and not _arr(gw).any()


@pytest.mark.parametrize("name,f", [
    ("matmul_rule", lambda x, W: (W @ x).tanh()),
    ("mm_rule", lambda x, W: rg.mm(W, x.reshape(4, 1)).sin()),
    ("sum_mean_rules", lambda x, W: (x * x).sum() * x.mean(dim=0, keepdim=True) + W.mean(dim=1)),
    ("fallback", lambda x, W: rg.cumsum(x.exp(), dim=0) * W.sum(dim=0)),
])
def test_batched_create_graph_gradients_pass_gradcheck(name, f):
    # The batched first derivative, recorded with create_graph=True, is
    # itself differentiable and its derivative is right (batching rules and
    # the per-sample fallback record correct graphs).
    from retrograd.autograd import gradcheck
    rng = np.random.default_rng(11)
    W = rg.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    x = rg.tensor(rng.standard_normal(4), requires_grad=True)
    out_shape = tuple(f(x, W).shape)
    go = rg.tensor(rng.standard_normal((2,) + out_shape))

    def first(x_, W_):
        return rg.autograd.grad(f(x_, W_), (x_, W_), go, create_graph=True, is_grads_batched=True)

    assert gradcheck(first, (x, W))
    gx, _ = rg.autograd.grad(f(x, W), (x, W), go, is_grads_batched=True)
    assert gx.grad_fn is None and not gx.requires_grad


def test_empty_batch_is_refused():
    x = rg.tensor(np.ones(3), requires_grad=True)
    with pytest.raises(RuntimeError, match="empty batch"):
        rg.autograd.grad(x * 2.0, x, rg.tensor(np.ones((0, 3))), is_grads_batched=True)


def _hooked_graph(lib):
    # (leaf, output, batched grad_outputs, what the hooks saw) with a tensor
    # hook, a node pre-hook and a node post-hook on one graph; the tensor
    # hook's result depends on its own element's values only.
    x = lib.tensor(np.linspace(-1.0, 1.0, 3), requires_grad=True)
    seen = []
    y = x * x
    y.register_hook(lambda g: (seen.append(("tensor", tuple(g.shape))),
                               g / (1.0 + (g * g).sum()))[1])
    y.grad_fn.register_prehook(
        lambda gi: (seen.append(("pre", tuple(gi[0].shape))), (gi[0] * 3.0,))[1])
    y.grad_fn.register_hook(
        lambda gi, go: (seen.append(("post", tuple(gi[0].shape), tuple(go[0].shape))),
                        tuple(t + go[0].sum() for t in gi))[1])
    z = y.sin()
    gos = lib.tensor(np.array([[1.0, -2.0, 0.5], [0.0, 3.0, 1.0]]))
    return x, z, gos, seen


@pytest.mark.parametrize("create_graph", [False, True], ids=["arrays", "create_graph"])
def test_hooks_run_per_element_like_torch(create_graph):
    x, z, gos, seen = _hooked_graph(rg)
    (g,) = rg.autograd.grad(z, x, gos, is_grads_batched=True, create_graph=create_graph)
    tx, tz, tgos, tseen = _hooked_graph(torch)
    (tg,) = torch.autograd.grad(tz, tx, tgos, is_grads_batched=True, create_graph=create_graph)
    np.testing.assert_allclose(_arr(g), tg.detach().numpy(), rtol=1e-12)
    # torch calls each hook once, on a BatchedTensor; here once per element,
    # each time with the shapes torch's hook sees.
    assert seen == [s for s in tseen for _ in range(2)]
    assert g.requires_grad == create_graph
    if create_graph:
        # the stacked hook results are part of the graph
        (gg,) = rg.autograd.grad(g.sum(), x)
        (tgg,) = torch.autograd.grad(tg.sum(), tx)
        np.testing.assert_allclose(_arr(gg), tgg.numpy(), rtol=1e-10)


def test_hooks_per_element_on_the_inputs_of_grad():
    # The hook on an input of grad() runs on the captured gradient: one
    # element at a time too, and its result is what grad returns.
    x = rg.tensor(np.arange(3.0), requires_grad=True)
    seen = []
    x.register_hook(lambda g: (seen.append(tuple(g.shape)), g * 2.0)[1])
    (g,) = rg.autograd.grad((x * x).sum(), x, rg.tensor(np.array([1.0, 3.0])), is_grads_batched=True)
    tx = torch.arange(3.0, dtype=torch.float64, requires_grad=True)
    tx.register_hook(lambda g: g * 2.0)
    (tg,) = torch.autograd.grad((tx * tx).sum(), tx, torch.tensor([1.0, 3.0], dtype=torch.float64),
                                is_grads_batched=True)
    np.testing.assert_allclose(_arr(g), tg.numpy())
    assert seen == [(3,), (3,)]


def test_hook_returning_none_for_some_elements_keeps_them():
    x = rg.tensor(np.arange(3.0), requires_grad=True)
    y = x * 1.0
    y.register_hook(lambda g: g * 10.0 if float(g.sum()) > 5.0 else None)
    (g,) = rg.autograd.grad(y.sum(), x, rg.tensor(np.array([1.0, 3.0])), is_grads_batched=True)
    np.testing.assert_allclose(_arr(g), np.array([[1.0] * 3, [30.0] * 3]))


def test_hook_with_a_wrong_result_in_a_batched_backward_raises():
    x = rg.tensor(np.arange(3.0), requires_grad=True)
    y = x * 1.0
    y.register_hook(lambda g: 5.0)
    with pytest.raises(TypeError, match="must return a Tensor or None"):
        rg.autograd.grad(y.sum(), x, rg.tensor(np.array([1.0, 3.0])), is_grads_batched=True)
    y = x * 1.0
    y.register_hook(lambda g: g[:2])
    with pytest.raises(RuntimeError, match="has changed the size of value"):
        rg.autograd.grad(y.sum(), x, rg.tensor(np.array([1.0, 3.0])), is_grads_batched=True)


def test_retain_grad_in_a_batched_backward_raises():
    x = rg.tensor(np.arange(3.0), requires_grad=True)
    y = x * 2.0
    y.retain_grad()
    with pytest.raises(RuntimeError, match="retain_grad"):
        rg.autograd.grad((y * y).sum(), x, rg.tensor(np.array([1.0, 3.0])), is_grads_batched=True)
    # (torch stores a BatchedTensor leaked from its vmap in .grad, which then
    # raises on first use, e.g. printing it: refusing up front is clearer.)
