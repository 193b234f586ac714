"""The graph's shape where torch's has a particular one, side by side with
torch 2.13: split/chunk/unbind outputs share one node (Note [Multi-output
views]); x ** 2 and x % 2 are torch's Scalar overloads, with one edge;
calling a node with one edge gives its gradient alone; Tensor._grad_fn."""
import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")


def _libs():
    return [(rg, rg.tensor), (torch, torch.tensor)]


def _np(t):
    return np.asarray(t.detach())


SPLITTERS = [
    ("unbind", lambda x: x.unbind(1), "UnbindBackward0"),
    ("split", lambda x: x.split(2, dim=1), "SplitBackward0"),
    ("split_sizes", lambda x: x.split([1, 3], dim=1), "SplitWithSizesBackward0"),
    ("chunk", lambda x: x.chunk(3, dim=1), "SplitBackward0"),
    ("function", lambda x: rg.split(x, 3, 1) if isinstance(x, rg.Tensor) else torch.split(x, 3, 1),
     "SplitBackward0"),
]


@pytest.mark.parametrize("label, cut, name", SPLITTERS, ids=[s[0] for s in SPLITTERS])
def test_pieces_share_one_node_with_torchs_name(label, cut, name):
    for lib, tensor in _libs():
        base = tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
        parts = cut(base * 1)
        nodes = {id(p.grad_fn) for p in parts}
        assert len(nodes) == 1, lib.__name__
        fn = parts[0].grad_fn
        assert fn.name() == name
        assert [p.output_nr for p in parts] == list(range(len(parts)))
        assert len(fn.next_functions) == 1 and fn.next_functions[0][0].name() == "MulBackward0"
        assert all(p._is_view() for p in parts)


@pytest.mark.parametrize("label, cut, name", SPLITTERS, ids=[s[0] for s in SPLITTERS])
def test_gradient_through_some_pieces(label, cut, name):
    grads = {}
    for lib, tensor in _libs():
        base = tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
        parts = cut(base * 1)
        w = tensor(np.linspace(1, 2, parts[-1].numel()).reshape(parts[-1].shape))
        (parts[0].exp().sum() + (parts[-1] * w).sum()).backward()
        grads[lib.__name__] = _np(base.grad)
    np.testing.assert_allclose(grads["retrograd"], grads["torch"], rtol=1e-12)


def test_double_backward_through_unbind():
    got = {}
    for lib, tensor in _libs():
        x = tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        a, b = x.unbind()
        y = (a ** 3).sum() + (a * b).sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        g.pow(2).sum().backward()
        got[lib.__name__] = (_np(g), _np(x.grad))
    for u, v in zip(got["retrograd"], got["torch"]):
        np.testing.assert_allclose(u, v, rtol=1e-12)


def test_hook_on_a_piece_without_gradient_is_called_with_none():
    seen = {}
    for lib, tensor in _libs():
        x = tensor([1.0, 2.0, 3.0], requires_grad=True)
        parts = x.split(1)
        calls = []
        parts[1].register_hook(lambda g: calls.append(g if g is None else _np(g)))
        parts[0].sum().backward(retain_graph=True)
        parts[1].sum().backward()
        seen[lib.__name__] = calls
    assert seen["retrograd"][0] is None and seen["torch"][0] is None
    np.testing.assert_allclose(seen["retrograd"][1], seen["torch"][1])


def test_calling_the_shared_node_directly():
    out = {}
    for lib, tensor in _libs():
        x = tensor([1.0, 2.0], requires_grad=True)
        a, b = (x * 1).unbind()
        res = a.grad_fn(tensor(3.0), None)
        out[lib.__name__] = _np(res)
    np.testing.assert_allclose(out["retrograd"], out["torch"])
    np.testing.assert_allclose(out["retrograd"], [3.0, 0.0])


def test_pieces_stay_unmodifiable_in_place():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    a, _ = (x * 1).unbind()
    with pytest.raises(RuntimeError, match="Output 0 of Unbind is a view"):
        a.mul_(2)


def test_no_node_without_grad():
    x = rg.tensor([1.0, 2.0])
    assert all(p.grad_fn is None for p in x.unbind())
    with rg.no_grad():
        y = rg.tensor([1.0, 2.0], requires_grad=True)
        assert all(p.grad_fn is None for p in y.split(1))


@pytest.mark.parametrize("expr, n_edges", [
    (lambda x: x ** 2, 1),
    (lambda x: x % 2, 1),
    (lambda x: x.pow(2.5), 1),
    (lambda x: x ** x, 2),
    (lambda x: x * 3, 2),
    (lambda x: x + 2, 2),
])
def test_edges_of_scalar_overloads(expr, n_edges):
    for lib, tensor in _libs():
        x = tensor([1.0, 2.0], requires_grad=True)
        fn = expr(x).grad_fn
        assert len(fn.next_functions) == n_edges, (lib.__name__, fn.name())


def test_scalar_exponent_gradient_and_bare_call():
    got = {}
    for lib, tensor in _libs():
        x = tensor([1.0, 2.0], requires_grad=True)
        y = x ** 3
        direct = y.grad_fn(tensor([1.0, 1.0]))
        assert isinstance(direct, lib.Tensor)
        y.sum().backward()
        z = x % 1.5
        z.sum().backward()
        got[lib.__name__] = (_np(direct), _np(x.grad))
    for u, v in zip(got["retrograd"], got["torch"]):
        np.testing.assert_allclose(u, v)


def test_node_with_two_edges_returns_a_tuple():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    out = (x * 3).grad_fn(rg.ones(2))
    assert isinstance(out, tuple) and out[1] is None


def test_private_grad_fn():
    for lib, tensor in _libs():
        x = tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        assert x._grad_fn is None and y._grad_fn is y.grad_fn
        with pytest.raises(RuntimeError):
            del y._grad_fn
        with pytest.raises(RuntimeError):
            y._grad_fn = (y * 1).grad_fn
        with pytest.raises(RuntimeError):
            del y._backward_hooks
        y._grad_fn = None               # detaches in place
        assert y.grad_fn is None and not y.requires_grad
