"""F.binary_cross_entropy and nn.BCELoss against torch 2.13: values, the
gradients of the input and the target, weights, reductions, the errors."""
import numpy as np
import pytest

import retrograd as rg
import retrograd.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional

RNG = np.random.default_rng(7)


def _pair(a, requires_grad=True):
    return rg.tensor(a, requires_grad=requires_grad), torch.tensor(a, requires_grad=requires_grad)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_values_and_gradients_match_torch(reduction, weighted):
    p = RNG.uniform(0.02, 0.98, (4, 3))
    y = RNG.uniform(0, 1, (4, 3))
    w = RNG.uniform(0.5, 2, (3,)) if weighted else None
    x, tx = _pair(p)
    t, tt = _pair(y)
    out = F.binary_cross_entropy(x, t, None if w is None else rg.tensor(w), reduction=reduction)
    tout = TF.binary_cross_entropy(tx, tt, None if w is None else torch.tensor(w), reduction=reduction)
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-12)
    seed = RNG.standard_normal(tuple(tout.shape))
    out.backward(rg.tensor(seed))
    tout.backward(torch.tensor(seed))
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(t.grad.numpy(), tt.grad.numpy(), rtol=1e-10)


def test_module_matches_functional_and_torch():
    p, y = RNG.uniform(0.1, 0.9, 5), RNG.integers(0, 2, 5).astype(float)
    w = RNG.uniform(0.5, 2, 5)
    got = rg.nn.BCELoss(weight=rg.tensor(w), reduction="sum")(rg.tensor(p), rg.tensor(y))
    want = torch.nn.BCELoss(weight=torch.tensor(w), reduction="sum")(torch.tensor(p), torch.tensor(y))
    np.testing.assert_allclose(got.item(), want.item(), rtol=1e-12)
    assert "weight" in dict(rg.nn.BCELoss(weight=rg.tensor(w)).named_buffers())


def test_probabilities_of_zero_and_one_give_the_clamped_loss():
    p, y = np.array([0.0, 1.0, 0.0, 1.0]), np.array([1.0, 0.0, 0.0, 1.0])
    got = F.binary_cross_entropy(rg.tensor(p), rg.tensor(y), reduction="none")
    want = TF.binary_cross_entropy(torch.tensor(p), torch.tensor(y), reduction="none")
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert np.isfinite(got.numpy()).all()


def test_second_derivative_matches_torch():
    p, y = RNG.uniform(0.1, 0.9, 4), RNG.uniform(0, 1, 4)
    x, tx = _pair(p)
    (g,) = rg.autograd.grad(F.binary_cross_entropy(x, rg.tensor(y)), x, create_graph=True)
    (tg,) = torch.autograd.grad(TF.binary_cross_entropy(tx, torch.tensor(y)), tx, create_graph=True)
    (gg,) = rg.autograd.grad(g.sum(), x)
    (tgg,) = torch.autograd.grad(tg.sum(), tx)
    np.testing.assert_allclose(gg.numpy(), tgg.numpy(), rtol=1e-9)
    assert rg.autograd.gradcheck(lambda a: F.binary_cross_entropy(a, rg.tensor(y)), (rg.tensor(p, requires_grad=True),))


@pytest.mark.parametrize("p, y, cls", [
    ([0.5, 1.5], [1.0, 0.0], RuntimeError),
    ([-0.1, 0.5], [1.0, 0.0], RuntimeError),
    ([0.5, 0.5], [1.0, 0.0, 1.0], ValueError),
])
def test_errors_have_torchs_classes(p, y, cls):
    with pytest.raises(cls):
        TF.binary_cross_entropy(torch.tensor(p), torch.tensor(y))
    with pytest.raises(cls):
        F.binary_cross_entropy(rg.tensor(p), rg.tensor(y))


def test_lists_are_refused_as_torch():
    with pytest.raises(TypeError):
        F.binary_cross_entropy([0.5], rg.tensor([1.0]))
