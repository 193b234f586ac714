"""F.normalize, F.cosine_similarity, F.pairwise_distance, F.pdist and the
CosineSimilarity / PairwiseDistance modules against torch 2.13."""
import numpy as np
import pytest

import retrograd as rg
import retrograd.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional
pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(5)


def _pair(x):
    return rg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)


def _close(a, b, rtol=1e-10, atol=1e-12):
    np.testing.assert_allclose(np.asarray(a.detach()), b.detach().numpy(), rtol=rtol, atol=atol)


def _check(fa, fb, *arrays):
    pairs = [_pair(x) for x in arrays]
    ya, yb = fa(*(p[0] for p in pairs)), fb(*(p[1] for p in pairs))
    _close(ya, yb)
    seed = RNG.standard_normal(tuple(yb.shape))
    ya.backward(rg.tensor(seed))
    yb.backward(torch.tensor(seed))
    for a, b in pairs:
        _close(a.grad, b.grad)


@pytest.mark.parametrize("p, dim", [(2.0, 1), (1.0, 0), (3.0, -1), (float("inf"), 1), (2.0, (0, 2))])
def test_normalize_as_torch(p, dim):
    x = RNG.standard_normal((3, 4, 2))
    x[1, :, 0] = 0.0       # a zero vector: the norm is floored at eps
    _check(lambda a: F.normalize(a, p, dim), lambda b: TF.normalize(b, p, dim), x)


def test_normalize_out_and_errors_as_torch():
    out_a, out_b = rg.zeros(2, 2), torch.zeros(2, 2, dtype=torch.float64)
    x = np.array([[3.0, 4.0], [0.0, 2.0]])
    assert F.normalize(rg.tensor(x), out=out_a) is out_a
    assert TF.normalize(torch.tensor(x), out=out_b) is out_b
    _close(out_a, out_b)
    for lib, f in ((torch, TF), (rg, F)):
        with pytest.raises(RuntimeError, match="floating point"):
            f.normalize(lib.arange(3))
        with pytest.raises(RuntimeError, match="out=... arguments don't support automatic differentiation"):
            f.normalize(lib.ones(2, 2, requires_grad=True), out=lib.zeros(2, 2))


@pytest.mark.parametrize("s1, s2, dim", [((3, 4), (3, 4), 1), ((3, 4), (4,), -1), ((2, 3, 4), (1, 3, 4), 0),
                                         ((5,), (5,), 0)])
def test_cosine_similarity_as_torch(s1, s2, dim):
    _check(lambda a, b: F.cosine_similarity(a, b, dim), lambda a, b: TF.cosine_similarity(a, b, dim),
           RNG.standard_normal(s1), RNG.standard_normal(s2))


def test_cosine_similarity_of_tiny_and_zero_vectors_as_torch():
    x1 = np.array([[0.0, 0.0, 0.0], [1e-9, 2e-9, 0.0], [1.0, 2.0, 3.0]])
    x2 = np.array([[1.0, 2.0, 3.0], [3.0, -1.0, 2.0], [1e-10, 0.0, 0.0]])
    _check(lambda a, b: F.cosine_similarity(a, b, eps=1e-8), lambda a, b: TF.cosine_similarity(a, b, eps=1e-8),
           x1, x2)


@pytest.mark.float32_default
def test_cosine_similarity_promotes_integers_and_refuses_all_integers_as_torch():
    ya = F.cosine_similarity(rg.tensor([1, 2, 3]), rg.tensor([1.0, 0.0, 1.0]), dim=0)
    yb = TF.cosine_similarity(torch.tensor([1, 2, 3]), torch.tensor([1.0, 0.0, 1.0]), dim=0)
    assert ya.dtype == np.float32
    np.testing.assert_allclose(ya.numpy(), yb.numpy(), rtol=1e-6)
    for lib, f in ((torch, TF), (rg, F)):
        with pytest.raises(RuntimeError, match="expected common dtype to be floating point"):
            f.cosine_similarity(lib.arange(3), lib.arange(3), dim=0)
        with pytest.raises(RuntimeError):
            f.cosine_similarity(lib.ones(3), lib.ones(4), dim=0)
        with pytest.raises(IndexError):
            f.cosine_similarity(lib.ones(2, 3), lib.ones(2, 3), dim=2)


@pytest.mark.parametrize("p", [2.0, 1.0, 3.5, float("inf"), 0.5])
@pytest.mark.parametrize("s1, s2, keepdim", [((4, 3), (4, 3), False), ((4, 3), (3,), True), ((3,), (3,), False),
                                              ((2, 4, 3), (4, 3), False)])
def test_pairwise_distance_as_torch(p, s1, s2, keepdim):
    _check(lambda a, b: F.pairwise_distance(a, b, p, 1e-6, keepdim),
           lambda a, b: TF.pairwise_distance(a, b, p, 1e-6, keepdim), RNG.standard_normal(s1), RNG.standard_normal(s2))


def test_pairwise_distance_of_scalars_and_equal_rows_as_torch():
    _check(lambda a, b: F.pairwise_distance(a, b), lambda a, b: TF.pairwise_distance(a, b), np.array(1.0),
           np.array(3.0))
    x = RNG.standard_normal((3, 2))
    _check(lambda a, b: F.pairwise_distance(a, b, eps=0.0), lambda a, b: TF.pairwise_distance(a, b, eps=0.0), x,
           x.copy())
    for lib, f in ((torch, TF), (rg, F)):
        with pytest.raises(RuntimeError):
            f.pairwise_distance(lib.ones(3), lib.ones(4))


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, 0.0, float("inf")])
@pytest.mark.parametrize("n", [1, 2, 5])
def test_pdist_as_torch(p, n):
    _check(lambda a: F.pdist(a, p), lambda b: TF.pdist(b, p), RNG.standard_normal((n, 3)))


def test_pdist_edge_cases_and_errors_as_torch():
    for lib, f in ((torch, TF), (rg, F)):
        assert tuple(f.pdist(lib.ones(3, 0)).shape) == (3,)
        assert float(f.pdist(lib.ones(3, 0)).sum()) == 0.0
        with pytest.raises(RuntimeError, match="pdist only supports 2D tensors"):
            f.pdist(lib.ones(3))
        with pytest.raises(RuntimeError, match="non-negative p"):
            f.pdist(lib.ones(3, 2), -1.0)
        with pytest.raises(RuntimeError, match="floating-point"):
            f.pdist(lib.ones(3, 2, dtype=lib.int64))


def test_gradcheck_distances():
    a = rg.tensor(RNG.standard_normal((4, 3)), requires_grad=True)
    b = rg.tensor(RNG.standard_normal((4, 3)), requires_grad=True)
    assert rg.autograd.gradcheck(lambda a, b: F.cosine_similarity(a, b), (a, b))
    assert rg.autograd.gradcheck(lambda a, b: F.pairwise_distance(a, b, 3.0), (a, b))
    assert rg.autograd.gradcheck(lambda a: F.pdist(a), (a,))
    assert rg.autograd.gradcheck(lambda a: F.normalize(a, dim=0), (a,))
    assert rg.autograd.gradgradcheck(lambda a, b: F.cosine_similarity(a, b), (a, b))


def test_modules_as_torch():
    x1, x2 = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))
    for make in (lambda nn: nn.CosineSimilarity(dim=0, eps=1e-6), lambda nn: nn.PairwiseDistance(p=1.0, keepdim=True),
                 lambda nn: nn.CosineSimilarity(), lambda nn: nn.PairwiseDistance()):
        mr, mt = make(rg.nn), make(torch.nn)
        _close(mr(rg.tensor(x1), rg.tensor(x2)), mt(torch.tensor(x1), torch.tensor(x2)))
        assert repr(mr) == repr(mt)
        assert mr.__constants__ == mt.__constants__
