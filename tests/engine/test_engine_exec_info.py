"""grad(outputs, inputs) and backward(inputs=) run only the nodes on a path
from the outputs to the requested inputs (PyTorch's ExecInfo), and the
gradients they capture see tensor hooks as PyTorch's do."""
import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")


def leaf(data):
    return rg.tensor(np.asarray(data, dtype=np.float64), requires_grad=True)


def _graph():
    a, b, c = leaf([1.0, 2.0]), leaf([3.0, 4.0]), leaf([5.0, 6.0])
    m = a * b
    s = c.sin()
    t = s * 2.0           # a chain below out that leads only to c
    out = (m + t).sum()
    return a, b, c, m, s, t, out


def _record_prehooks(nodes):
    fired = []
    for name, node in nodes.items():
        node.register_prehook(lambda g, name=name: fired.append(name))
    return fired


def test_grad_runs_only_nodes_on_a_path_to_the_inputs():
    a, b, c, m, s, t, out = _graph()
    fired = _record_prehooks({"mul": m.grad_fn, "sin": s.grad_fn, "t": t.grad_fn,
                              "sum": out.grad_fn, "acc_a": a.grad_fn or _acc(a)})
    (ga,) = rg.autograd.grad(out, [a], retain_graph=True)
    np.testing.assert_array_equal(ga.numpy(), [3.0, 4.0])
    assert "sin" not in fired and "t" not in fired
    assert "sum" in fired and "mul" in fired
    # The input's own AccumulateGrad does not run either: grad() captures.
    assert "acc_a" not in fired
    assert a.grad is None and b.grad is None and c.grad is None


def _acc(t):
    # A leaf's AccumulateGrad: the node its gradient edge points to.
    y = t * 1.0
    return y.grad_fn.next_functions[0][0]


def test_grad_wrt_the_other_branch_skips_mul():
    a, b, c, m, s, t, out = _graph()
    fired = _record_prehooks({"mul": m.grad_fn, "sin": s.grad_fn})
    (gc,) = rg.autograd.grad(out, [c])
    np.testing.assert_allclose(gc.numpy(), 2.0 * np.cos([5.0, 6.0]))
    assert fired == ["sin"]


def test_grad_wrt_intermediate_stops_there():
    a, b, c, m, s, t, out = _graph()
    fired = _record_prehooks({"mul": m.grad_fn, "sin": s.grad_fn, "t": t.grad_fn})
    (gs,) = rg.autograd.grad(out, [s])
    np.testing.assert_array_equal(gs.numpy(), [2.0, 2.0])
    assert fired == ["t"]       # s's own grad_fn (SinBackward0) is not run


def test_backward_inputs_runs_only_needed_nodes():
    a, b, c, m, s, t, out = _graph()
    fired = _record_prehooks({"mul": m.grad_fn, "sin": s.grad_fn, "t": t.grad_fn})
    out.backward(inputs=[a])
    assert "sin" not in fired and "t" not in fired
    np.testing.assert_array_equal(a.grad.numpy(), [3.0, 4.0])
    assert b.grad is None and c.grad is None


def test_plain_backward_runs_everything():
    a, b, c, m, s, t, out = _graph()
    fired = _record_prehooks({"mul": m.grad_fn, "sin": s.grad_fn, "t": t.grad_fn})
    out.backward()
    assert sorted(fired) == ["mul", "sin", "t"]


def test_tensor_hook_on_nonleaf_modifies_captured_grad():
    res = {}
    for lib, mk in ((rg, leaf), (torch, lambda d: torch.tensor(d, dtype=torch.float64, requires_grad=True))):
        x = mk([1.0, 2.0])
        y = x * 2.0
        y.register_hook(lambda g: g * 10.0)
        out = (y * y).sum()
        res[lib.__name__] = [
            lib.autograd.grad(out, [y], retain_graph=True),
            lib.autograd.grad(out, [x], retain_graph=True),
            # torch captures y's gradient before running its hooks when y's
            # node must also run for x: the captured value is unmodified.
            lib.autograd.grad(out, [y, x], retain_graph=True),
        ]
    got, want = res["retrograd"], res["torch"]
    np.testing.assert_array_equal(got[0][0].numpy(), [40.0, 80.0])
    for g_tuple, w_tuple in zip(got, want):
        for g, w in zip(g_tuple, w_tuple):
            np.testing.assert_allclose(np.asarray(g), w.detach().numpy())


def test_tensor_hook_on_leaf_modifies_captured_grad():
    x = leaf([1.0, 2.0])
    x.register_hook(lambda g: g + 1000.0)
    (g,) = rg.autograd.grad((x * x).sum(), x)
    np.testing.assert_array_equal(g.numpy(), [1002.0, 1004.0])
    tx = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    tx.register_hook(lambda g: g + 1000.0)
    (tg,) = torch.autograd.grad((tx * tx).sum(), tx)
    np.testing.assert_array_equal(g.numpy(), tg.numpy())


def test_hook_order_tensor_hook_then_retain_grad():
    x = leaf([1.0, 2.0])
    z = x * 3.0
    z.retain_grad()
    z.register_hook(lambda g: g * 7.0)
    z.sum().backward()
    np.testing.assert_array_equal(z.grad.numpy(), [7.0, 7.0])
    np.testing.assert_array_equal(x.grad.numpy(), [21.0, 21.0])


def test_hooks_not_on_path_do_not_fire():
    a, b = leaf([1.0]), leaf([2.0])
    ya, yb = a * 2.0, b * 3.0
    fired = []
    yb.register_hook(lambda g: fired.append("yb"))
    ya.register_hook(lambda g: fired.append("ya"))
    out = (ya + yb).sum()
    rg.autograd.grad(out, [a])
    assert fired == ["ya"]


def test_deep_chain_exec_info_is_iterative():
    # ExecInfo's walk must not recurse per node (a deep graph would overflow).
    x = leaf([1.0])
    y = x
    for _ in range(20000):
        y = y * 1.0
    (g,) = rg.autograd.grad(y.sum(), x)
    assert float(g[0]) == 1.0
