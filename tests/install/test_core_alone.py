"""retrograd-core on its own (`pip install retrograd-core`): forward ops, graph
structure and grad modes work without the engine, and backward says which
distribution to install. Runs in every install set; the tests marked
``absent`` run only where the engine is missing (the nox session tests(core))."""
import numpy as np
import pytest

import retrograd.core as core

torch = pytest.importorskip("torch")


def test_forward_ops_match_torch():
    a = np.array([[0.5, -1.0, 2.0], [3.0, 0.25, -0.75]])
    b = np.array([1.5, 2.0, -0.5])
    x, y = core.tensor(a), core.tensor(b)
    tx, ty = torch.tensor(a), torch.tensor(b)
    for ours, theirs in [
        (core.exp(x) * y - x / 3.0, torch.exp(tx) * ty - tx / 3.0),
        (core.matmul(x, y), torch.matmul(tx, ty)),
        (x.sum(dim=1, keepdim=True), tx.sum(dim=1, keepdim=True)),
        (core.tanh(x).transpose(0, 1).reshape(-1), torch.tanh(tx).transpose(0, 1).reshape(-1)),
    ]:
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-12)


def test_graph_structure_matches_torch():
    x = core.tensor([1.0, 2.0, 3.0], requires_grad=True)
    tx = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (x * x).sum()
    ty = (tx * tx).sum()
    assert y.requires_grad and not y.is_leaf and x.is_leaf
    assert y.grad_fn.name() == ty.grad_fn.name() == "SumBackward0"
    (mul, nr), = y.grad_fn.next_functions
    (tmul, tnr), = ty.grad_fn.next_functions
    assert (mul.name(), nr) == (tmul.name(), tnr) == ("MulBackward0", 0)
    ours = [(fn.name(), n) for fn, n in mul.next_functions]
    # torch's C++ node names carry their namespace
    theirs = [(fn.name().rpartition("::")[2], n) for fn, n in tmul.next_functions]
    assert ours == theirs == [("AccumulateGrad", 0), ("AccumulateGrad", 0)]
    assert mul.next_functions[0][0].variable is x


def test_grad_modes_without_engine():
    x = core.tensor([1.0], requires_grad=True)
    with core.no_grad():
        assert not (x * 2.0).requires_grad
        assert not core.is_grad_enabled()
    assert (x * 2.0).requires_grad


def test_import_core_does_not_import_the_engine(run_python):
    res = run_python("""
        import sys
        import retrograd.core as core
        x = core.tensor([1.0], requires_grad=True)
        (x * 3.0).sum()
        print(sorted(m for m in sys.modules if m.startswith("retrograd.engine")))
    """)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "[]"


@pytest.mark.absent("retrograd-engine")
@pytest.mark.parametrize("call", ["backward", "grad"])
def test_backward_names_the_engine_distribution(call):
    x = core.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    with pytest.raises(RuntimeError) as info:
        if call == "backward":
            y.backward()
        else:
            core.grad(y, x)
    msg = str(info.value)
    assert "retrograd-engine" in msg and "pip install" in msg, msg
    # the failure leaves the graph and the leaf untouched: installing the engine is enough
    assert x.grad is None and y.grad_fn is not None
