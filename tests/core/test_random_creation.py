"""randint, randperm, rand_like, randn_like: torch's signatures and
default dtypes, retrograd's generator (manual_seed) or a given
np.random.Generator, and torch's errors."""
import numpy as np
import pytest

import retrograd as rg


def test_randint_signatures_dtype_and_range():
    rg.manual_seed(0)
    a = rg.randint(10, (3, 4))
    b = rg.randint(-5, 5, (1000,))
    assert a.shape == (3, 4) and a.dtype == np.int64 and b.dtype == np.int64
    assert 0 <= a.min().item() and a.max().item() < 10
    assert -5 <= b.min().item() and b.max().item() < 5
    assert set(b.tolist()) == set(range(-5, 5))          # every value can come out
    assert rg.randint(3, size=(2,)).shape == (2,)
    assert rg.randint(0, 3, (2, 2), dtype=rg.float32).dtype == np.float32
    assert rg.randint(0, 3, ()).shape == ()
    assert rg.randint(0, 3, (0, 2)).shape == (0, 2)
    f = rg.randint(0, 3, (2,), dtype=rg.float64, requires_grad=True)
    assert f.requires_grad and f.is_leaf


def test_random_generators_are_reproducible():
    for fn in (lambda g: rg.randint(0, 100, (5,), generator=g), lambda g: rg.randperm(7, generator=g),
               lambda g: rg.rand_like(rg.zeros(3), generator=g), lambda g: rg.randn_like(rg.zeros(3), generator=g)):
        x = fn(np.random.default_rng(42))
        y = fn(np.random.default_rng(42))
        np.testing.assert_array_equal(x.numpy(), y.numpy())
        rg.manual_seed(3)
        u = fn(None)
        rg.manual_seed(3)
        np.testing.assert_array_equal(u.numpy(), fn(None).numpy())


def test_randint_errors():
    with pytest.raises(RuntimeError, match="expects 'from' to be less than 'to'"):
        rg.randint(5, 5, (2,))
    with pytest.raises(TypeError, match="size"):
        rg.randint(5)
    with pytest.raises(TypeError, match="must be a tuple of ints"):
        rg.randint(0, 5, 3)
    with pytest.raises(RuntimeError, match="floating point"):
        rg.randint(0, 5, (2,), requires_grad=True)
    with pytest.raises(TypeError, match="numpy.random.Generator"):
        rg.randint(0, 5, (2,), generator=0)
    with pytest.raises(RuntimeError, match="does not fit"):
        rg.randint(0, 300, (2,), dtype=rg.uint8)


def test_randperm():
    rg.manual_seed(1)
    p = rg.randperm(10)
    assert p.dtype == np.int64 and sorted(p.tolist()) == list(range(10))
    assert rg.randperm(0).shape == (0,)
    assert rg.randperm(4, dtype=rg.float32).dtype == np.float32
    with pytest.raises(RuntimeError, match="non-negative"):
        rg.randperm(-1)
    with pytest.raises(TypeError):
        rg.randperm(2.5)


def test_rand_like_randn_like():
    x = rg.zeros(2, 3, dtype=rg.float32)
    for fn in (rg.rand_like, rg.randn_like):
        r = fn(x)
        assert r.shape == (2, 3) and r.dtype == np.float32 and not r.requires_grad
        assert fn(x, dtype=rg.float64).dtype == np.float64
        assert fn(x, requires_grad=True).requires_grad
        with pytest.raises(RuntimeError, match="floating"):
            fn(rg.zeros(2, dtype=rg.int64))
        with pytest.raises(TypeError, match="Tensor"):
            fn([1.0, 2.0])
    u = rg.rand_like(rg.zeros(10000), generator=np.random.default_rng(0)).numpy()
    assert u.min() >= 0 and u.max() < 1 and abs(u.mean() - 0.5) < 0.02
    n = rg.randn_like(rg.zeros(10000), generator=np.random.default_rng(0)).numpy()
    assert abs(n.mean()) < 0.05 and abs(n.std() - 1) < 0.05
    c = rg.randn_like(rg.zeros(20000, dtype=rg.complex128), generator=np.random.default_rng(0)).numpy()
    assert c.dtype == np.complex128 and abs(c.real.var() - 0.5) < 0.03 and abs(c.imag.var() - 0.5) < 0.03


@pytest.mark.oracle
def test_default_dtypes_match_torch():
    torch = pytest.importorskip("torch")
    assert str(torch.randint(0, 3, (2,)).dtype) == "torch.int64" and rg.randint(0, 3, (2,)).dtype == np.int64
    assert str(torch.randperm(3).dtype) == "torch.int64" and rg.randperm(3).dtype == np.int64
