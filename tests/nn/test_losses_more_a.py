"""smooth_l1_loss, kl_div, margin_ranking_loss, hinge_embedding_loss,
cosine_embedding_loss, triplet_margin_loss, triplet_margin_with_distance_loss
and soft_margin_loss (functions and layers) against torch 2.13: values and
gradients for every reduction, broadcasting, the errors, and gradcheck."""
import warnings

import numpy as np
import pytest

import retrograd as rg
import retrograd.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional
pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(41)
REDUCTIONS = ["mean", "sum", "none"]


def _run(rg_fn, torch_fn, arrays, grads, rtol=1e-10, **kw):
    """Call both libraries on float64 copies of ``arrays`` (those flagged in
    ``grads`` require grad), compare the outputs, backpropagate one random
    seed through both and compare every gradient."""
    ours = [rg.tensor(a, requires_grad=g) for a, g in zip(arrays, grads)]
    theirs = [torch.tensor(a, requires_grad=g) for a, g in zip(arrays, grads)]
    out, want = rg_fn(*ours, **kw), torch_fn(*theirs, **kw)
    assert tuple(out.shape) == tuple(want.shape)
    np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(), rtol=1e-10, atol=1e-12)
    seed = RNG.standard_normal(tuple(want.shape))
    out.backward(rg.tensor(seed))
    want.backward(torch.tensor(seed))
    for o, t, g in zip(ours, theirs, grads):
        if g:
            np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=rtol, atol=1e-12)
    return out


def _signs(shape):
    return np.where(RNG.random(shape) < 0.5, -1.0, 1.0)


# --- smooth_l1_loss ----------------------------------------------------------------

@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("beta", [0.0, 0.5, 1.0, 2.5])
def test_smooth_l1_matches_torch(reduction, beta):
    x, y = RNG.normal(0, 2, (4, 5)), RNG.normal(0, 2, (4, 5))
    _run(F.smooth_l1_loss, TF.smooth_l1_loss, [x, y], [True, True], reduction=reduction, beta=beta)


def test_smooth_l1_broadcasts_with_torchs_warning():
    x, y = RNG.normal(size=(3, 4)), RNG.normal(size=(4,))
    with pytest.warns(UserWarning, match="different to the input size"):
        _run(F.smooth_l1_loss, TF.smooth_l1_loss, [x, y], [True, True], reduction="none")


def test_smooth_l1_errors_and_legacy_arguments():
    x, y = rg.randn(3), rg.randn(3)
    with pytest.raises(RuntimeError, match="negative values for beta"):
        F.smooth_l1_loss(x, y, beta=-1.0)
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        F.smooth_l1_loss(x, y, reduction="avg")
    with pytest.raises(NotImplementedError, match="smooth_l1"):
        F.smooth_l1_loss(rg.tensor([1, 2]), rg.tensor([0, 0]))
    with pytest.raises(RuntimeError), pytest.warns(UserWarning, match="target size"):
        F.smooth_l1_loss(rg.randn(3, 4), rg.randn(2, 4))
    got = F.smooth_l1_loss(x, y, size_average=False)
    np.testing.assert_allclose(got.item(), F.smooth_l1_loss(x, y, reduction="sum").item())


def test_smooth_l1_layer():
    x, y = RNG.normal(size=(2, 3)), RNG.normal(size=(2, 3))
    got = rg.nn.SmoothL1Loss(reduction="sum", beta=0.3)(rg.tensor(x), rg.tensor(y))
    want = torch.nn.SmoothL1Loss(reduction="sum", beta=0.3)(torch.tensor(x), torch.tensor(y))
    np.testing.assert_allclose(got.item(), want.item(), rtol=1e-12)
    with pytest.warns(UserWarning, match="size_average and reduce"):
        assert rg.nn.SmoothL1Loss(reduce=False).reduction == "none"


# --- kl_div ----------------------------------------------------------------------

@pytest.mark.parametrize("reduction", ["batchmean", "sum", "none", "mean"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div_matches_torch(reduction, log_target):
    logq = np.log(RNG.dirichlet(np.ones(5), 3))
    p = RNG.dirichlet(np.ones(5), 3)
    target = np.log(p) if log_target else p
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        _run(F.kl_div, TF.kl_div, [logq, target], [True, True], reduction=reduction, log_target=log_target)


def test_kl_div_mean_warns_as_torch():
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        F.kl_div(rg.randn(2, 3), rg.rand(2, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.kl_div(rg.randn(2, 3), rg.rand(2, 3), reduction="batchmean")
        F.kl_div(rg.randn(2, 3), rg.rand(2, 3), size_average=True)      # the legacy path does not warn


def test_kl_div_zero_targets_and_broadcasting():
    x = RNG.normal(size=(3, 4))
    t = np.abs(RNG.normal(size=(4,)))
    t[1] = 0.0
    _run(F.kl_div, TF.kl_div, [x, t], [True, False], reduction="none")
    # the target's gradient at a zero target is NaN in both
    ours, theirs = rg.tensor(t, requires_grad=True), torch.tensor(t, requires_grad=True)
    F.kl_div(rg.tensor(x), ours, reduction="sum").backward()
    TF.kl_div(torch.tensor(x), theirs, reduction="sum").backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-10)
    assert np.isnan(ours.grad.numpy()[1])


def test_kl_div_batchmean_edge_cases_and_errors():
    x, t = RNG.normal(size=(3, 4)), RNG.random((3, 4))
    # batchmean divides even a legacy reduction by the batch size, as torch
    got = F.kl_div(rg.tensor(x), rg.tensor(t), size_average=False, reduction="batchmean")
    with pytest.warns(UserWarning):
        want = TF.kl_div(torch.tensor(x), torch.tensor(t), size_average=False, reduction="batchmean")
    np.testing.assert_allclose(got.item(), want.item(), rtol=1e-12)
    got0 = F.kl_div(rg.tensor(-1.0), rg.tensor(0.5), reduction="batchmean")
    want0 = TF.kl_div(torch.tensor(-1.0, dtype=torch.float64), torch.tensor(0.5, dtype=torch.float64),
                      reduction="batchmean")
    np.testing.assert_allclose(got0.item(), want0.item(), rtol=1e-12)
    with pytest.raises(RuntimeError, match="Integral inputs not supported"):
        F.kl_div(rg.tensor([1, 2]), rg.tensor([1, 2]), reduction="sum")
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        F.kl_div(rg.randn(2), rg.rand(2), reduction="bad")


def test_kl_div_layer():
    x, t = np.log(RNG.dirichlet(np.ones(3), 2)), RNG.dirichlet(np.ones(3), 2)
    got = rg.nn.KLDivLoss(reduction="batchmean", log_target=True)(rg.tensor(x), rg.tensor(np.log(t)))
    want = torch.nn.KLDivLoss(reduction="batchmean", log_target=True)(torch.tensor(x), torch.tensor(np.log(t)))
    np.testing.assert_allclose(got.item(), want.item(), rtol=1e-12)


# --- margin_ranking_loss, hinge_embedding_loss, soft_margin_loss --------------------------

@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("margin", [0.0, 0.5])
def test_margin_ranking_matches_torch(reduction, margin):
    a, b, y = RNG.normal(size=(6,)), RNG.normal(size=(6,)), _signs((6,))
    _run(F.margin_ranking_loss, TF.margin_ranking_loss, [a, b, y], [True, True, True], margin=margin,
         reduction=reduction)


def test_margin_ranking_broadcasts_and_checks_dimensions():
    a, b, y = RNG.normal(size=(3, 4)), RNG.normal(size=(3, 4)), _signs((3, 1))
    _run(F.margin_ranking_loss, TF.margin_ranking_loss, [a, b, y], [True, True, False], reduction="none")
    with pytest.raises(RuntimeError, match="All input tensors should have same dimension"):
        F.margin_ranking_loss(rg.tensor(a), rg.tensor(b), rg.tensor(y[:, 0]))
    with pytest.raises(RuntimeError):
        F.margin_ranking_loss(rg.tensor(a), rg.tensor(b), rg.ones(2, 4))
    got = rg.nn.MarginRankingLoss(margin=0.2)(rg.tensor(a), rg.tensor(b), rg.tensor(y))
    want = torch.nn.MarginRankingLoss(margin=0.2)(torch.tensor(a), torch.tensor(b), torch.tensor(y))
    np.testing.assert_allclose(got.item(), want.item(), rtol=1e-12)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_hinge_embedding_matches_torch(reduction):
    x = RNG.normal(0.5, 1.0, (4, 3))
    y = _signs((4, 3))
    y[0, 0] = 0.0                            # neither 1 nor -1: both terms, as torch
    _run(F.hinge_embedding_loss, TF.hinge_embedding_loss, [x, y], [True, False], margin=0.7, reduction=reduction)


def test_hinge_embedding_broadcasting_errors_and_layer():
    x, y = RNG.normal(size=(3, 4)), _signs((4,))
    _run(F.hinge_embedding_loss, TF.hinge_embedding_loss, [x, y], [True, False], reduction="none")
    with pytest.raises(RuntimeError):
        F.hinge_embedding_loss(rg.tensor(x), rg.ones(2, 4))
    got = rg.nn.HingeEmbeddingLoss(margin=2.0, reduction="sum")(rg.tensor(x), rg.tensor(y))
    want = torch.nn.HingeEmbeddingLoss(margin=2.0, reduction="sum")(torch.tensor(x), torch.tensor(y))
    np.testing.assert_allclose(got.item(), want.item(), rtol=1e-12)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_soft_margin_matches_torch(reduction):
    x, y = RNG.normal(0, 3, (3, 4)), _signs((3, 4))
    _run(F.soft_margin_loss, TF.soft_margin_loss, [x, y], [True, False], reduction=reduction)
    _run(F.soft_margin_loss, TF.soft_margin_loss, [x, y[0]], [True, False], reduction=reduction)


def test_soft_margin_errors_and_layer():
    with pytest.raises(RuntimeError, match="not differentiable with respect to argument 'target'"):
        F.soft_margin_loss(rg.randn(3), rg.ones(3, requires_grad=True))
    with pytest.raises(RuntimeError):
        F.soft_margin_loss(rg.tensor([1, 2]), rg.tensor([1, -1]))
    with pytest.raises(RuntimeError):
        F.soft_margin_loss(rg.randn(3, 4), rg.ones(2, 4))
    x, y = RNG.normal(size=5), _signs((5,))
    got = rg.nn.SoftMarginLoss()(rg.tensor(x), rg.tensor(y))
    np.testing.assert_allclose(got.item(), torch.nn.SoftMarginLoss()(torch.tensor(x), torch.tensor(y)).item(),
                               rtol=1e-12)
    # stable where torch's log(1 + exp(.)) is still finite
    big = F.soft_margin_loss(rg.tensor([-700.0]), rg.tensor([1.0]))
    np.testing.assert_allclose(big.item(), 700.0)


# --- cosine_embedding_loss -----------------------------------------------------------

@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("margin", [0.0, -0.3, 0.4])
def test_cosine_embedding_matches_torch(reduction, margin):
    a, b, y = RNG.normal(size=(5, 3)), RNG.normal(size=(5, 3)), _signs((5,))
    _run(F.cosine_embedding_loss, TF.cosine_embedding_loss, [a, b, y], [True, True, False], margin=margin,
         reduction=reduction)


def test_cosine_embedding_unbatched_zero_vector_and_layer():
    a, b = RNG.normal(size=3), RNG.normal(size=3)
    for y in (1.0, -1.0):
        _run(F.cosine_embedding_loss, TF.cosine_embedding_loss, [a, b, np.array(y)], [True, True, False],
             reduction="none")
    # a zero embedding: the 1e-12 guard keeps it finite (its gradient is ~1e6), as torch
    _run(F.cosine_embedding_loss, TF.cosine_embedding_loss, [np.zeros((1, 3)), b[None], np.ones(1)],
         [True, True, False], rtol=1e-7)
    got = rg.nn.CosineEmbeddingLoss(margin=0.1)(rg.tensor(a[None]), rg.tensor(b[None]), rg.tensor([-1.0]))
    want = torch.nn.CosineEmbeddingLoss(margin=0.1)(torch.tensor(a[None]), torch.tensor(b[None]),
                                                    torch.tensor([-1.0]))
    np.testing.assert_allclose(got.item(), want.item(), rtol=1e-12)


@pytest.mark.parametrize("shapes, match", [
    (((3, 4), (3, 4), (3, 1)), "0D or 1D target tensor expected"),
    (((3, 4), (4,), (3,)), "1D target tensor expects 2D input tensors"),
    (((3, 4), (3, 4), ()), "0D target tensor expects 1D input tensors"),
])
def test_cosine_embedding_shape_errors(shapes, match):
    a, b, y = (rg.ones(s) for s in shapes)
    with pytest.raises(RuntimeError, match=match):
        F.cosine_embedding_loss(a, b, y)
    with pytest.raises(RuntimeError, match=match):
        TF.cosine_embedding_loss(*(torch.ones(s) for s in shapes))


# --- triplet losses ---------------------------------------------------------------------

@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("p", [1.0, 2.0, 3.0])
@pytest.mark.parametrize("swap", [False, True])
def test_triplet_margin_matches_torch(reduction, p, swap):
    a, pos, neg = (RNG.normal(size=(4, 3)) for _ in range(3))
    _run(F.triplet_margin_loss, TF.triplet_margin_loss, [a, pos, neg], [True, True, True], margin=1.5, p=p,
         swap=swap, reduction=reduction)


def test_triplet_margin_unbatched_three_dims_and_eps():
    a, pos, neg = (RNG.normal(size=3) for _ in range(3))
    _run(F.triplet_margin_loss, TF.triplet_margin_loss, [a, pos, neg], [True, True, True], reduction="none")
    a, pos, neg = (RNG.normal(size=(2, 3, 4)) for _ in range(3))
    _run(F.triplet_margin_loss, TF.triplet_margin_loss, [a, pos, neg], [True, True, True], eps=0.1,
         reduction="none")


def test_triplet_margin_errors_and_layer():
    a = rg.randn(3, 4)
    with pytest.raises(ValueError, match="margin must be greater than 0"):
        F.triplet_margin_loss(a, a, a, margin=0.0)
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        F.triplet_margin_loss(a, a, rg.randn(4))
    with pytest.raises(ValueError, match="expected margin to be greater than 0"):
        rg.nn.TripletMarginLoss(margin=-1.0)
    x = [RNG.normal(size=(3, 4)) for _ in range(3)]
    got = rg.nn.TripletMarginLoss(p=1.0, swap=True)(*(rg.tensor(v) for v in x))
    want = torch.nn.TripletMarginLoss(p=1.0, swap=True)(*(torch.tensor(v) for v in x))
    np.testing.assert_allclose(got.item(), want.item(), rtol=1e-12)


def _cos_distance(lib):
    def dist(u, v):
        return 1.0 - (u * v).sum(-1) / ((u * u).sum(-1) * (v * v).sum(-1)).sqrt()
    return dist


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("swap", [False, True])
@pytest.mark.parametrize("custom", [False, True])
def test_triplet_with_distance_matches_torch(reduction, swap, custom):
    a, pos, neg = (RNG.normal(size=(5, 3)) for _ in range(3))
    ours = dict(distance_function=_cos_distance(rg) if custom else None, margin=0.8, swap=swap, reduction=reduction)
    theirs = dict(ours, distance_function=_cos_distance(torch) if custom else None)
    arrays = [rg.tensor(v, requires_grad=True) for v in (a, pos, neg)]
    tarrays = [torch.tensor(v, requires_grad=True) for v in (a, pos, neg)]
    out = F.triplet_margin_with_distance_loss(*arrays, **ours)
    want = TF.triplet_margin_with_distance_loss(*tarrays, **theirs)
    np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(), rtol=1e-10)
    out.sum().backward()
    want.sum().backward()
    for o, t in zip(arrays, tarrays):
        np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_triplet_with_distance_errors_and_layer():
    a = rg.randn(2, 3)
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        F.triplet_margin_with_distance_loss(a, a, a, reduction="avg")
    with pytest.raises(ValueError, match="margin must be greater than 0"):
        F.triplet_margin_with_distance_loss(a, a, a, margin=0.0)
    with pytest.raises(RuntimeError, match="anchor 2D, positive 2D, and negative 1D"):
        F.triplet_margin_with_distance_loss(a, a, rg.randn(3))
    with pytest.raises(ValueError, match="expected margin to be greater than 0"):
        rg.nn.TripletMarginWithDistanceLoss(margin=0.0)
    x = [RNG.normal(size=(3, 4)) for _ in range(3)]
    layer = rg.nn.TripletMarginWithDistanceLoss(swap=True)
    assert repr(layer) == repr(torch.nn.TripletMarginWithDistanceLoss(swap=True))
    got = layer(*(rg.tensor(v) for v in x))
    want = torch.nn.TripletMarginWithDistanceLoss(swap=True)(*(torch.tensor(v) for v in x))
    np.testing.assert_allclose(got.item(), want.item(), rtol=1e-12)


# --- gradcheck in float64 -------------------------------------------------------------

def _t(a):
    return rg.tensor(a, requires_grad=True)


SIGNS4, SIGNS5, SIGNS3, SIGNS23 = _signs((4,)), _signs((5,)), _signs((3,)), _signs((2, 3))
GRADCHECKS = {
    "smooth_l1": lambda: (lambda x, y: F.smooth_l1_loss(x, y, beta=0.7), (_t(RNG.normal(size=(2, 3))),
                                                                           _t(RNG.normal(size=(2, 3))))),
    "kl_div": lambda: (lambda x, y: F.kl_div(x, y, reduction="batchmean"), (_t(RNG.normal(size=(2, 3))),
                                                                            _t(RNG.random((2, 3)) + 0.1))),
    "kl_div_log_target": lambda: (lambda x, y: F.kl_div(x, y, reduction="sum", log_target=True),
                                  (_t(RNG.normal(size=(2, 3))), _t(RNG.normal(size=(2, 3))))),
    "margin_ranking": lambda: (lambda a, b, y: F.margin_ranking_loss(a, b, y, margin=0.3),
                               (_t(RNG.normal(size=4)), _t(RNG.normal(size=4)), _t(SIGNS4))),
    "hinge_embedding": lambda: (lambda x: F.hinge_embedding_loss(x, rg.tensor(SIGNS5)), (_t(RNG.normal(size=5)),)),
    "cosine_embedding": lambda: (lambda a, b: F.cosine_embedding_loss(a, b, rg.tensor(SIGNS3), margin=-0.5),
                                 (_t(RNG.normal(size=(3, 4))), _t(RNG.normal(size=(3, 4))))),
    "triplet": lambda: (lambda a, p, n: F.triplet_margin_loss(a, p, n, margin=2.0, swap=True),
                        tuple(_t(RNG.normal(size=(3, 4))) for _ in range(3))),
    "triplet_distance": lambda: (lambda a, p, n: F.triplet_margin_with_distance_loss(a, p, n, margin=2.0),
                                 tuple(_t(RNG.normal(size=(3, 4))) for _ in range(3))),
    "soft_margin": lambda: (lambda x: F.soft_margin_loss(x, rg.tensor(SIGNS23)), (_t(RNG.normal(size=(2, 3))),)),
}


@pytest.mark.parametrize("name", sorted(GRADCHECKS))
def test_gradcheck(name):
    fn, inputs = GRADCHECKS[name]()
    assert rg.autograd.gradcheck(fn, inputs)
    assert rg.autograd.gradgradcheck(fn, inputs)
