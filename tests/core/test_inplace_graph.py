"""In-place ops (add_, sub_, mul_, div_, pow_ and += -= *= /= **=): values and
gradients equal their out-of-place twins', versions bump, leaves are guarded."""
import operator

import numpy as np
import pytest

import retrograd as rg

INPLACE = {
    "add_": (lambda t, o: t.add_(o), operator.add),
    "sub_": (lambda t, o: t.sub_(o), operator.sub),
    "mul_": (lambda t, o: t.mul_(o), operator.mul),
    "div_": (lambda t, o: t.div_(o), operator.truediv),
    "pow_": (lambda t, o: t.pow_(o), operator.pow),
    "+=": (operator.iadd, operator.add),
    "-=": (operator.isub, operator.sub),
    "*=": (operator.imul, operator.mul),
    "/=": (operator.itruediv, operator.truediv),
    "**=": (operator.ipow, operator.pow),
}
OTHER = ["scalar", "leaf", "constant", "broadcast_leaf", "non_leaf"]


def _inputs():
    x = rg.tensor([[1.5, 2.0], [3.0, 0.5]], requires_grad=True)
    o = rg.tensor([0.5, 2.5], requires_grad=True)
    return x, o


def _other(kind, o):
    return {"scalar": 1.5, "leaf": rg.tensor([[0.5, 2.5], [1.0, 2.0]], requires_grad=True),
            "constant": rg.tensor([[0.5, 2.5], [1.0, 2.0]]), "broadcast_leaf": o,
            "non_leaf": o * 2}[kind]


@pytest.mark.parametrize("kind", OTHER)
@pytest.mark.parametrize("name", list(INPLACE))
def test_inplace_equals_out_of_place(name, kind):
    inplace, outofplace = INPLACE[name]
    results = []
    for use_inplace in (True, False):
        x, o = _inputs()
        other = _other(kind, o)
        h = x * 1.0
        if use_inplace:
            before = h._version
            ret = inplace(h, other)
            assert ret is h                         # the same tensor, rebased
            assert h._version == before + 1
            out = h
        else:
            out = outofplace(h, other)
        (out * out).sum().backward()
        results.append((out.detach().numpy().copy(), out.grad_fn.name(), x.grad.numpy(),
                        None if o.grad is None else o.grad.numpy(),
                        other.grad.numpy() if kind in ("leaf",) else None))
    (v1, n1, gx1, go1, gl1), (v2, n2, gx2, go2, gl2) = results
    np.testing.assert_allclose(v1, v2)
    assert n1 == n2
    np.testing.assert_allclose(gx1, gx2)
    if go2 is None:
        assert go1 is None
    else:
        np.testing.assert_allclose(go1, go2)
    if gl2 is not None:
        np.testing.assert_allclose(gl1, gl2)


@pytest.mark.parametrize("name", list(INPLACE))
def test_inplace_without_grad_uses_the_same_array(name):
    inplace, outofplace = INPLACE[name]
    a = np.array([1.0, 2.0, 4.0])
    t = rg.from_numpy(a)
    expected = outofplace(a.copy(), 2.0)
    assert inplace(t, 2.0) is t
    assert t.numpy() is a and np.allclose(a, expected)
    assert t._version == 1 and t.grad_fn is None


@pytest.mark.parametrize("name", list(INPLACE))
def test_inplace_on_a_leaf_requiring_grad_is_an_error(name):
    inplace, _ = INPLACE[name]
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad.*no_grad"):
        inplace(x, 2.0)
    assert x.tolist() == [1.0, 2.0] and x._version == 0
    with pytest.raises(RuntimeError, match="view of a leaf Variable"):
        inplace(x[1:], 2.0)
    with rg.no_grad():
        assert inplace(x, 2.0) is x
    assert x._version == 1 and x.is_leaf and x.requires_grad and x.grad_fn is None


def test_inplace_with_a_grad_requiring_operand_makes_a_non_leaf():
    c = rg.tensor([1.0, 2.0])
    x = rg.tensor([3.0, 4.0], requires_grad=True)
    c.mul_(x)
    assert not c.is_leaf and c.requires_grad and c.grad_fn.name() == "MulBackward0"
    c.sum().backward()
    assert c.tolist() == [3.0, 8.0] and x.grad.tolist() == [1.0, 2.0]


def test_chained_inplace_ops_on_a_non_leaf():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    h = x * 1.0
    h += 1
    h *= rg.tensor([2.0, 3.0])
    h **= 2
    h /= 4
    h.sum().backward()
    # h = ((x + 1) * c) ** 2 / 4 with c = x + 1 (a constant)
    c = np.array([2.0, 3.0])
    np.testing.assert_allclose(x.grad.numpy(), 2 * ((np.array([1.0, 2.0]) + 1) * c) * c / 4)
    assert h._version == 4


def test_inplace_keeps_the_dtype_and_shape():
    t = rg.tensor([1.0, 2.0], dtype=np.float32)
    t += rg.tensor([1.0, 1.0], dtype=np.float64)
    assert t.dtype == np.float32
    with pytest.raises(RuntimeError, match="int64"):
        i = rg.tensor([1, 2])
        i += 1.5
    with pytest.raises(RuntimeError, match="broadcast"):
        rg.tensor([1.0, 2.0]).add_(rg.ones(2, 2))
    h = rg.tensor([1.0, 2.0], requires_grad=True) * 1
    with pytest.raises(RuntimeError, match="shape"):
        h.add_(rg.ones(2, 2))


def test_inplace_on_a_view_of_a_graph_tensor_rebases_the_base():
    # CopySlices (tests/core/test_copy_slices.py has the torch comparisons).
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    h = x * 1
    h[0:1].mul_(2)
    h.sum().backward()
    assert x.grad.tolist() == [2.0, 1.0]


@pytest.mark.oracle
@pytest.mark.parametrize("name", list(INPLACE))
def test_inplace_matches_torch(name):
    torch = pytest.importorskip("torch")
    inplace, _ = INPLACE[name]

    def run(tensor):
        x = tensor([[1.5, 2.0], [3.0, 0.5]], requires_grad=True)
        o = tensor([0.5, 2.5], requires_grad=True)
        h = x * 1.0
        inplace(h, 2.0)
        inplace(h, o)
        (h * h).sum().backward()
        return h.tolist(), h._version, x.grad.tolist(), o.grad.tolist()

    ours = run(rg.tensor)
    theirs = run(lambda d, **k: torch.tensor(d, dtype=torch.float64, **k))
    np.testing.assert_allclose(ours[0], theirs[0])
    assert ours[1] == theirs[1]
    np.testing.assert_allclose(ours[2], theirs[2])
    np.testing.assert_allclose(ours[3], theirs[3])
