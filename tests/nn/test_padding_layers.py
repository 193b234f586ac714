"""The padding layers (zero, constant, reflection, replication, circular; 1-d,
2-d and 3-d) against torch 2.13: values, gradients, batched and unbatched
input, negative amounts, reprs and errors."""
import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(2)

LAYERS = [  # (class, constructor args, input shapes)
    ("ZeroPad1d", (2,), [(2, 3, 4), (3, 4)]), ("ZeroPad1d", ((1, -1),), [(2, 3, 4)]),
    ("ZeroPad2d", ((1, 0, 2, 3),), [(2, 3, 4, 5), (3, 4, 5)]), ("ZeroPad3d", (1,), [(1, 2, 3, 4, 2), (2, 3, 4, 2)]),
    ("ConstantPad1d", (2, 3.5), [(2, 3, 4), (3, 4)]), ("ConstantPad2d", ((1, 0, -1, 2), -1.0), [(2, 3, 4, 5)]),
    ("ConstantPad3d", ((1, 2, 0, 1, 2, 0), 0.5), [(2, 3, 4, 2), (1, 2, 3, 4, 2)]),
    ("ReflectionPad1d", ((3, 1),), [(2, 3, 4), (3, 4)]), ("ReflectionPad2d", (2,), [(2, 3, 4, 5), (3, 4, 5)]),
    ("ReflectionPad3d", ((1, 0, 2, 1, 1, 1),), [(1, 2, 3, 4, 2), (2, 3, 4, 2)]),
    ("ReplicationPad1d", ((0, 5),), [(2, 3, 4), (3, 4)]), ("ReplicationPad2d", ((1, 2, 3, 0),), [(2, 3, 4, 5)]),
    ("ReplicationPad3d", (2,), [(1, 2, 3, 4, 2), (2, 3, 4, 2)]),
    ("CircularPad1d", ((2, 1),), [(2, 3, 4), (3, 4)]), ("CircularPad2d", ((1, 1, 2, 0),), [(2, 3, 4, 5), (3, 4, 5)]),
    ("CircularPad3d", (1,), [(1, 2, 3, 4, 2), (2, 3, 4, 2)]), ("CircularPad1d", ((-1, 2),), [(2, 3, 4)]),
]


@pytest.mark.parametrize("name, args, shapes", LAYERS, ids=[f"{c[0]}{i}" for i, c in enumerate(LAYERS)])
def test_layers_as_torch(name, args, shapes):
    mr, mt = getattr(rg.nn, name)(*args), getattr(torch.nn, name)(*args)
    assert repr(mr) == repr(mt)
    assert mr.padding == mt.padding
    for shape in shapes:
        x = RNG.standard_normal(shape)
        a, b = rg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        ya, yb = mr(a), mt(b)
        np.testing.assert_array_equal(ya.detach().numpy(), yb.detach().numpy())
        seed = RNG.standard_normal(tuple(yb.shape))
        ya.backward(rg.tensor(seed))
        yb.backward(torch.tensor(seed))
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_gradcheck_through_a_reflection_layer():
    x = rg.tensor(RNG.standard_normal((1, 2, 3, 3)), requires_grad=True)
    assert rg.autograd.gradcheck(rg.nn.ReflectionPad2d((2, 1, 0, 2)), (x,))


def test_float32_stays_float32():
    y = rg.nn.ReplicationPad2d(1)(rg.ones(1, 1, 2, 2, dtype=rg.float32))
    assert y.dtype == rg.float32 and tuple(y.shape) == (1, 1, 4, 4)


@pytest.mark.parametrize("name, args, shape, exc, match", [
    ("CircularPad2d", (1,), (4, 5), ValueError, r"expected 3D or 4D input \(got 2D input\)"),
    ("CircularPad1d", (1,), (1, 2, 3, 4), ValueError, r"expected 2D or 3D input \(got 4D input\)"),
    ("CircularPad3d", (1,), (3, 4, 5), ValueError, r"expected 4D or 5D input \(got 3D input\)"),
    ("ReflectionPad1d", (4,), (2, 3, 4), RuntimeError, "Padding size should be less than the corresponding input"),
    ("CircularPad1d", (5,), (2, 3, 4), RuntimeError, "Padding value causes wrapping around more than once"),
])
def test_errors_as_torch(name, args, shape, exc, match):
    with pytest.raises(exc, match=match):
        getattr(torch.nn, name)(*args)(torch.ones(shape))
    with pytest.raises(exc, match=match):
        getattr(rg.nn, name)(*args)(rg.ones(shape))
