"""The default dtype (Note [Default dtype]): float32 unless set, as torch's,
checked side by side with torch 2.13. These tests run with the real default
(the `float32_default` marker; the rest of the suite runs in float64)."""
import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.float32_default


def _same(got, want):
    assert str(got.dtype) == str(want.dtype).replace("torch.", ""), (got.dtype, want.dtype)


MAKERS = [
    ("tensor floats", lambda L: L.tensor([1.5, 2.0])),
    ("tensor scalar", lambda L: L.tensor(3.5)),
    ("tensor ints", lambda L: L.tensor([1, 2])),
    ("tensor bools", lambda L: L.tensor([True])),
    ("tensor complex", lambda L: L.tensor([1 + 2j])),
    ("tensor mixed", lambda L: L.tensor([1, 2.5])),
    ("tensor float64 array", lambda L: L.tensor(np.array([1.5]))),
    ("tensor float32 array", lambda L: L.tensor(np.array([1.5], dtype=np.float32))),
    ("from_numpy", lambda L: L.from_numpy(np.array([1.5]))),
    ("as_tensor list", lambda L: L.as_tensor([1.5])),
    ("zeros", lambda L: L.zeros(2)),
    ("ones", lambda L: L.ones(2, 3)),
    ("empty", lambda L: L.empty(2)),
    ("eye", lambda L: L.eye(2)),
    ("rand", lambda L: L.rand(2)),
    ("randn", lambda L: L.randn(2)),
    ("full float", lambda L: L.full((2,), 1.5)),
    ("full int", lambda L: L.full((2,), 7)),
    ("full bool", lambda L: L.full((2,), True)),
    ("arange int", lambda L: L.arange(5)),
    ("arange float", lambda L: L.arange(0, 1, 0.25)),
    ("linspace", lambda L: L.linspace(0, 1, 5)),
    ("Tensor list", lambda L: L.Tensor([1, 2])),
    ("Tensor empty", lambda L: L.Tensor()),
    ("int / int", lambda L: L.tensor([1, 2]) / L.tensor([2, 2])),
    ("int / 2", lambda L: L.tensor([1, 2]) / 2),
    ("sqrt int", lambda L: L.sqrt(L.tensor([4]))),
    ("linear weight", lambda L: L.nn.Linear(2, 3).weight),
    ("conv bias", lambda L: L.nn.Conv2d(1, 2, 3).bias),
    ("batchnorm running_mean", lambda L: L.nn.BatchNorm1d(3).running_mean),
    ("embedding", lambda L: L.nn.Embedding(4, 2).weight),
]


@pytest.mark.parametrize("label, make", MAKERS, ids=[m[0] for m in MAKERS])
def test_dtype_as_torch(label, make):
    _same(make(rg), make(torch))


@pytest.mark.parametrize("label, make", MAKERS, ids=[m[0] for m in MAKERS])
def test_dtype_as_torch_with_float64_default(label, make):
    rg.set_default_dtype(rg.float64)
    torch.set_default_dtype(torch.float64)
    try:
        _same(make(rg), make(torch))
    finally:
        rg.set_default_dtype(rg.float32)
        torch.set_default_dtype(torch.float32)


def test_get_and_set():
    assert rg.get_default_dtype() == np.float32
    rg.set_default_dtype("float64")
    try:
        assert rg.get_default_dtype() == np.float64
        assert rg.tensor([1j]).dtype == np.complex128
    finally:
        rg.set_default_dtype(np.float32)
    assert rg.tensor([1j]).dtype == np.complex64


@pytest.mark.parametrize("bad", [rg.int64, np.int32, rg.bool, rg.complex64])
def test_only_floating_defaults(bad):
    with pytest.raises(TypeError):
        torch.set_default_dtype({rg.int64: torch.int64, np.int32: torch.int32, rg.bool: torch.bool,
                                 rg.complex64: torch.complex64}[bad])
    with pytest.raises(TypeError, match="floating-point"):
        rg.set_default_dtype(bad)
    assert rg.get_default_dtype() == np.float32


def test_repr_omits_the_default_dtype_only():
    assert repr(rg.tensor([1.5])) == "tensor([1.5])"
    assert repr(rg.tensor([1.5], dtype=rg.float64)) == "tensor([1.5], dtype=float64)"
    assert repr(rg.tensor([1j])) == "tensor([0.+1.j])"
    rg.set_default_dtype(rg.float64)
    try:
        assert repr(rg.tensor([1.5], dtype=rg.float32)) == "tensor([1.5], dtype=float32)"
    finally:
        rg.set_default_dtype(rg.float32)


def test_training_step_in_float32_matches_torch():
    rng = np.random.default_rng(0)
    w0, x0, y0 = rng.standard_normal((3, 4)), rng.standard_normal((8, 4)), rng.standard_normal((8, 3))
    losses = {}
    for L in (rg, torch):
        lin = L.nn.Linear(4, 3)
        with L.no_grad():
            lin.weight.copy_(L.tensor(w0.astype(np.float32)))
            lin.bias.zero_()
        opt = L.optim.SGD(lin.parameters(), lr=0.1)
        x, y = L.tensor(x0.astype(np.float32)), L.tensor(y0.astype(np.float32))
        out = []
        for _ in range(3):
            opt.zero_grad()
            loss = ((lin(x) - y) ** 2).mean()
            loss.backward()
            opt.step()
            out.append(loss.item())
        assert str(lin.weight.dtype).endswith("float32")
        losses[L.__name__] = out
    np.testing.assert_allclose(losses["retrograd"], losses["torch"], rtol=1e-5)
