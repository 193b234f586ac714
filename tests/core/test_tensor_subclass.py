"""A Python subclass of rg.Tensor (rg.nn.Parameter is one) is a tensor to
every op, the engine and forward AD: it records the graph, receives
gradients and carries tangents, never being read as a bare array."""
import numpy as np
import pytest

import retrograd as rg
from _arrays import values  # noqa: E402


class Sub(rg.Tensor):
    pass


def sub(values, requires_grad=True):
    return Sub(np.array(values, dtype=float), requires_grad=requires_grad)


def test_python_can_subclass_tensor():
    s = sub([1.0, 2.0])
    assert type(s) is Sub and isinstance(s, rg.Tensor) and s.is_leaf and s.requires_grad
    assert type(s * 2) is rg.Tensor          # op results are plain tensors


def test_ops_record_the_graph_through_a_subclass():
    a, b = sub([1.0, 2.0]), sub([3.0, 4.0])
    (a * b + a.exp()).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [3 + np.e, 4 + np.e ** 2])
    a.grad = None
    rg.cat([a, b]).sum().backward()          # a list-of-tensors argument
    assert a.grad.tolist() == [1.0, 1.0]
    a.grad = None
    c = rg.ones(2, requires_grad=True) * 1
    c.add_(a)                                 # the other operand of an in-place op
    c.sum().backward()
    assert a.grad.tolist() == [1.0, 1.0]
    a.grad = None
    h = rg.ones(2, requires_grad=True) * 1
    h[0] = a[0]                               # a value assigned by __setitem__
    h.sum().backward()
    assert a.grad.tolist() == [1.0, 0.0]


def test_functions_backward_arguments_and_grad():
    class Double(rg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2
    a = sub([1.0, 2.0])
    Double.apply(a).sum().backward()
    assert a.grad.tolist() == [2.0, 2.0]
    a.grad = None
    (a * 3).backward(sub([1.0, 1.0], requires_grad=False))   # grad_tensors given as a subclass
    assert a.grad.tolist() == [3.0, 3.0]
    g, = rg.autograd.grad((a * a).sum(), [a])
    assert g.tolist() == [2.0, 4.0]


@pytest.mark.requires("retrograd-forward-ad")
def test_forward_ad_through_a_subclass():
    import retrograd.forward_ad as fwAD
    with fwAD.dual_level():
        d = fwAD.make_dual(sub([1.0, 2.0], False), sub([1.0, 0.0], False))
        assert fwAD.unpack_dual(d * d).tangent.tolist() == [2.0, 0.0]


def test_make_subclass_is_a_detach_of_the_subclass():
    # torch's Tensor._make_subclass(cls, data, require_grad): data.detach()
    # as a cls: the array and the version counter are shared
    base = rg.ones(2, requires_grad=True)
    s = rg.Tensor._make_subclass(Sub, base, True)
    assert type(s) is Sub and s.is_leaf and s.requires_grad and s.grad_fn is None
    assert np.shares_memory(values(s), values(base))
    with rg.no_grad():
        base.add_(1)
    assert s._version == base._version == 1 and s.tolist() == [2.0, 2.0]
    assert not rg.Tensor._make_subclass(Sub, base).requires_grad
    assert type(rg.Tensor._make_subclass(rg.Tensor, base)) is rg.Tensor


def test_make_subclass_errors():
    with pytest.raises(TypeError, match="subclass of Tensor"):
        rg.Tensor._make_subclass(int, rg.ones(1))
    with pytest.raises(TypeError, match="must be a Tensor, not list"):
        rg.Tensor._make_subclass(Sub, [1.0])
    with pytest.raises(RuntimeError, match="floating point and complex"):
        rg.Tensor._make_subclass(Sub, rg.tensor([1, 2]), True)
