"""rg.bernoulli, rg.normal and rg.poisson against torch 2.13: shapes, dtypes,
errors, the moments of many draws, and normal's gradients."""
import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.float32_default


def test_dtypes_and_shapes_as_torch():
    for lib in (rg, torch):
        p = lib.tensor([[0.2, 0.8], [0.5, 0.5]])
        outs = [lib.bernoulli(p), lib.normal(lib.zeros(2, 3), 1.0), lib.normal(0.0, lib.ones(4)),
                lib.normal(0.0, 1.0, size=(2, 2)), lib.poisson(lib.tensor([1.0, 2.0]))]
        assert [tuple(o.shape) for o in outs] == [(2, 2), (2, 3), (4,), (2, 2), (2,)]
        assert all(str(o.dtype).endswith("float32") for o in outs)


def test_moments_of_many_draws():
    rg.manual_seed(0)
    b = rg.bernoulli(rg.full((200000,), 0.3)).numpy()
    assert set(np.unique(b)) <= {0.0, 1.0} and abs(b.mean() - 0.3) < 0.01
    assert rg.bernoulli(rg.zeros(100), 1.0).numpy().all()
    n = rg.normal(rg.full((200000,), 2.0), 3.0).numpy()
    assert abs(n.mean() - 2.0) < 0.05 and abs(n.std() - 3.0) < 0.05
    k = rg.poisson(rg.full((200000,), 4.0)).numpy()
    assert abs(k.mean() - 4.0) < 0.05 and abs(k.var() - 4.0) < 0.1 and (k == np.round(k)).all()


def test_normal_gradients_are_zero_as_torch():
    for lib in (rg, torch):
        mean = lib.tensor([1.0, 2.0], requires_grad=True)
        std = lib.tensor([0.5, 1.5], requires_grad=True)
        out = lib.normal(mean, std)
        assert out.requires_grad
        out.sum().backward()
        np.testing.assert_array_equal(np.asarray(mean.grad), [0.0, 0.0])
        np.testing.assert_array_equal(np.asarray(std.grad), [0.0, 0.0])


@pytest.mark.parametrize("call, cls", [
    (lambda L: L.bernoulli(L.tensor([1.5])), RuntimeError),
    (lambda L: L.bernoulli(L.tensor([1, 0])), NotImplementedError),
    (lambda L: L.normal(L.zeros(2), -L.ones(2)), RuntimeError),
    (lambda L: L.normal(0.0, 1.0), TypeError),
    (lambda L: L.poisson(L.tensor([-1.0])), RuntimeError),
])
def test_errors_as_torch(call, cls):
    with pytest.raises(cls):
        call(torch)
    with pytest.raises(cls):
        call(rg)


def test_generator_makes_draws_repeatable():
    a = rg.normal(0.0, 1.0, size=(3,), generator=np.random.default_rng(1))
    b = rg.normal(0.0, 1.0, size=(3,), generator=np.random.default_rng(1))
    np.testing.assert_array_equal(a.numpy(), b.numpy())
