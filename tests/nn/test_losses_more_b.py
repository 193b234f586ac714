"""multilabel_soft_margin_loss, multilabel_margin_loss, multi_margin_loss,
poisson_nll_loss and gaussian_nll_loss (functions and layers), and
NLLLoss2d, against torch 2.13: values and gradients for every reduction,
shapes and broadcasting, the errors, and gradcheck."""
import warnings

import numpy as np
import pytest

import retrograd as rg
import retrograd.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional
pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(4141)
REDUCTIONS = ["mean", "sum", "none"]


def _check(rg_fn, torch_fn, arrays, grads, rtol=1e-10, **kw):
    """Both libraries on the same arrays (float ones as float64 tensors,
    integer ones as int64): outputs, then every gradient for one random seed."""
    ours = [rg.tensor(a, requires_grad=g) for a, g in zip(arrays, grads)]
    theirs = [torch.tensor(a, requires_grad=g) for a, g in zip(arrays, grads)]
    out, want = rg_fn(*ours, **kw), torch_fn(*theirs, **kw)
    assert tuple(out.shape) == tuple(want.shape)
    np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(), rtol=rtol, atol=1e-12)
    seed = RNG.standard_normal(tuple(want.shape))
    out.backward(rg.tensor(seed))
    want.backward(torch.tensor(seed))
    for o, t, g in zip(ours, theirs, grads):
        if g:
            np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=rtol, atol=1e-12)


def _same_error(call, exc, match):
    """The call raises ``exc`` (matching ``match``) in both libraries;
    ``call(lib)`` builds its tensors with ``lib``."""
    with pytest.raises(exc, match=match):
        call(rg, F)
    with pytest.raises(exc, match=match):
        call(torch, TF)


# --- multilabel_soft_margin_loss ---------------------------------------------------------

@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_multilabel_soft_margin_matches_torch(reduction, weighted):
    x, y = RNG.normal(0, 2, (4, 5)), RNG.integers(0, 2, (4, 5)).astype(float)
    w = RNG.uniform(0.5, 2.0, 5) if weighted else None
    ours, theirs = rg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    yo, yt = rg.tensor(y, requires_grad=True), torch.tensor(y, requires_grad=True)
    out = F.multilabel_soft_margin_loss(ours, yo, weight=None if w is None else rg.tensor(w), reduction=reduction)
    want = TF.multilabel_soft_margin_loss(theirs, yt, weight=None if w is None else torch.tensor(w),
                                          reduction=reduction)
    np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(), rtol=1e-10)
    seed = RNG.standard_normal(tuple(want.shape))
    out.backward(rg.tensor(seed))
    want.backward(torch.tensor(seed))
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(yo.grad.numpy(), yt.grad.numpy(), rtol=1e-10)


def test_multilabel_soft_margin_shapes_errors_and_layer():
    x = RNG.normal(size=(2, 3, 4))
    _check(F.multilabel_soft_margin_loss, TF.multilabel_soft_margin_loss, [x, RNG.random((2, 3, 4))],
           [True, False], reduction="none")
    _check(F.multilabel_soft_margin_loss, TF.multilabel_soft_margin_loss, [x[0, 0], RNG.random(4)],
           [True, False], reduction="none")
    _same_error(lambda lib, fn: fn.multilabel_soft_margin_loss(lib.ones(2, 3), lib.ones(2, 3), reduction="avg"),
                ValueError, "avg is not valid")
    with pytest.raises(IndexError, match="no dimensions"):
        F.multilabel_soft_margin_loss(rg.tensor(1.0), rg.tensor(1.0))
    w = RNG.uniform(0.5, 2.0, 3)
    layer = rg.nn.MultiLabelSoftMarginLoss(weight=rg.tensor(w), reduction="sum")
    assert "weight" in dict(layer.named_buffers())
    x, y = RNG.normal(size=(2, 3)), RNG.integers(0, 2, (2, 3)).astype(float)
    want = torch.nn.MultiLabelSoftMarginLoss(weight=torch.tensor(w), reduction="sum")(torch.tensor(x),
                                                                                        torch.tensor(y))
    np.testing.assert_allclose(layer(rg.tensor(x), rg.tensor(y)).item(), want.item(), rtol=1e-12)


# --- multilabel_margin_loss --------------------------------------------------------------

MULTILABEL_TARGETS = np.array([[3, 0, -1, 1, 2], [0, 1, 2, 3, 4], [-1, 1, 2, 3, 0], [4, 4, -1, 0, 0],
                               [2, -1, -1, 3, 3]])


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_multilabel_margin_matches_torch(reduction):
    # rows: a list ending at -1, every class (no non-targets), an empty list,
    # a repeated class, junk after the -1
    x = RNG.normal(size=(5, 5))
    _check(F.multilabel_margin_loss, TF.multilabel_margin_loss, [x, MULTILABEL_TARGETS], [True, False],
           reduction=reduction)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_multilabel_margin_unbatched_and_empty_batch(reduction):
    x = RNG.normal(size=5)
    _check(F.multilabel_margin_loss, TF.multilabel_margin_loss, [x, MULTILABEL_TARGETS[0]], [True, False],
           reduction=reduction)
    _check(F.multilabel_margin_loss, TF.multilabel_margin_loss, [np.array(0.3), np.array(0)], [True, False],
           reduction=reduction)
    out = F.multilabel_margin_loss(rg.randn(0, 4), rg.zeros((0, 4), dtype=rg.int64), reduction=reduction)
    assert tuple(out.shape) == ((0,) if reduction == "none" else ())
    if reduction == "mean":
        assert np.isnan(out.item())          # (torch returns an uninitialised value)


@pytest.mark.parametrize("x_shape, t_shape, match", [
    ((3, 4), (2, 4), r"inconsistent target size: \[2, 4\] for input of size: \[3, 4\]"),
    ((4,), (1, 4), "inconsistent target size"),
    ((2, 3, 4), (2, 3, 4), "Expected non-empty vector or matrix"),
    ((3, 0), (3, 0), "Expected non-empty vector or matrix"),
])
def test_multilabel_margin_shape_errors(x_shape, t_shape, match):
    _same_error(lambda lib, fn: fn.multilabel_margin_loss(lib.ones(x_shape), lib.zeros(t_shape, dtype=lib.int64)),
                RuntimeError, match)


def test_multilabel_margin_value_and_dtype_errors_and_layer():
    for bad in ([[4, -1, 0, 0]], [[3, -2, 1, 0]], [[3, -1, 7, 0]]):
        _same_error(lambda lib, fn: fn.multilabel_margin_loss(lib.ones((1, 4)), lib.tensor(bad)),
                    RuntimeError, "out of range")
    _same_error(lambda lib, fn: fn.multilabel_margin_loss(lib.ones((1, 4)), lib.zeros((1, 4))),
                RuntimeError, "expected scalar type Long")
    with pytest.raises(NotImplementedError):
        F.multilabel_margin_loss(rg.ones((1, 4), dtype=rg.int64), rg.zeros((1, 4), dtype=rg.int64))
    x = RNG.normal(size=(5, 5))
    got = rg.nn.MultiLabelMarginLoss()(rg.tensor(x), rg.tensor(MULTILABEL_TARGETS))
    want = torch.nn.MultiLabelMarginLoss()(torch.tensor(x), torch.tensor(MULTILABEL_TARGETS))
    np.testing.assert_allclose(got.item(), want.item(), rtol=1e-12)


# --- multi_margin_loss -----------------------------------------------------------------

@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("weighted", [False, True])
def test_multi_margin_matches_torch(reduction, p, weighted):
    x, t = RNG.normal(size=(6, 4)), RNG.integers(0, 4, 6)
    w = RNG.uniform(0.5, 2.0, 4)
    ours, theirs = rg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out = F.multi_margin_loss(ours, rg.tensor(t), p=p, margin=0.7, weight=rg.tensor(w) if weighted else None,
                              reduction=reduction)
    want = TF.multi_margin_loss(theirs, torch.tensor(t), p=p, margin=0.7,
                                weight=torch.tensor(w) if weighted else None, reduction=reduction)
    assert tuple(out.shape) == tuple(want.shape)
    np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(), rtol=1e-10)
    seed = RNG.standard_normal(tuple(want.shape))
    out.backward(rg.tensor(seed))
    want.backward(torch.tensor(seed))
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_multi_margin_unbatched_shapes(reduction):
    x = RNG.normal(size=4)
    for t in (np.array(2), np.array([2])):
        _check(F.multi_margin_loss, TF.multi_margin_loss, [x, t], [True, False], reduction=reduction)
    _check(F.multi_margin_loss, TF.multi_margin_loss, [np.array(0.5), np.array(0)], [True, False],
           reduction=reduction)


def test_multi_margin_errors():
    _same_error(lambda lib, fn: fn.multi_margin_loss(lib.ones(3, 4), lib.tensor([0, 1, 2]), p=3),
                ValueError, "only p == 1 and p == 2 supported")
    _same_error(lambda lib, fn: fn.multi_margin_loss(lib.ones(3, 4), lib.tensor([0, 1, 2]), weight=lib.ones(4, 1)),
                ValueError, "weight must be one-dimensional")
    _same_error(lambda lib, fn: fn.multi_margin_loss(lib.ones(3, 4), lib.tensor([0, 1, 2]), weight=lib.ones(3)),
                RuntimeError, "inconsistent weight size, expected 4")
    _same_error(lambda lib, fn: fn.multi_margin_loss(lib.ones(3, 4), lib.tensor([0, 4, 1])),
                RuntimeError, "target out of range")
    _same_error(lambda lib, fn: fn.multi_margin_loss(lib.ones(3, 4), lib.tensor([0, -1, 1])),
                RuntimeError, "target out of range")
    _same_error(lambda lib, fn: fn.multi_margin_loss(lib.ones(3, 4), lib.tensor([0, 1])),
                RuntimeError, r"Expected target size \[3\], but got \[2\]")
    _same_error(lambda lib, fn: fn.multi_margin_loss(lib.ones(3, 4), lib.tensor([[0], [1], [2]])),
                RuntimeError, "target tensor should be 1-D")
    _same_error(lambda lib, fn: fn.multi_margin_loss(lib.ones(2, 3, 4), lib.tensor([0, 1])),
                RuntimeError, "Expected non-empty vector or matrix")
    _same_error(lambda lib, fn: fn.multi_margin_loss(lib.ones(3, 4), lib.tensor([0.0, 1.0, 2.0])),
                RuntimeError, "expected scalar type Long")
    _same_error(lambda lib, fn: fn.multi_margin_loss(lib.ones(3, 4), lib.tensor([0, 1, 2]),
                                                     weight=lib.ones(4, requires_grad=True)),
                RuntimeError, "not differentiable with respect to argument 'weight'")
    with pytest.raises(RuntimeError, match="expected scalar type"):
        F.multi_margin_loss(rg.ones(3, 4), rg.tensor([0, 1, 2]), weight=rg.ones(4, dtype=rg.float32))


def test_multi_margin_layer():
    w = RNG.uniform(0.5, 2.0, 4)
    x, t = RNG.normal(size=(3, 4)), RNG.integers(0, 4, 3)
    layer = rg.nn.MultiMarginLoss(p=2, margin=0.5, weight=rg.tensor(w))
    want = torch.nn.MultiMarginLoss(p=2, margin=0.5, weight=torch.tensor(w))(torch.tensor(x), torch.tensor(t))
    np.testing.assert_allclose(layer(rg.tensor(x), rg.tensor(t)).item(), want.item(), rtol=1e-12)
    assert "weight" in dict(layer.named_buffers())
    with pytest.raises(ValueError, match="only p == 1 and p == 2"):
        rg.nn.MultiMarginLoss(p=3)
    with pytest.raises(ValueError, match="expected weight to be None or 1D tensor, got 2D"):
        rg.nn.MultiMarginLoss(weight=rg.ones(2, 2))


# --- poisson_nll_loss ---------------------------------------------------------------------

@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("log_input", [True, False])
@pytest.mark.parametrize("full", [False, True])
def test_poisson_nll_matches_torch(reduction, log_input, full):
    x = RNG.normal(size=(3, 4)) if log_input else RNG.uniform(0.1, 3.0, (3, 4))
    y = RNG.poisson(2.0, (3, 4)).astype(float) + 0.5       # positive: the target's log is differentiable
    y[0, :2] = [0.5, 1.0]                                   # at or below 1: no Stirling term
    _check(F.poisson_nll_loss, TF.poisson_nll_loss, [x, y], [True, True], log_input=log_input, full=full,
           eps=1e-6, reduction=reduction)


def test_poisson_nll_zero_counts_broadcasting_errors_and_layer():
    x, y = RNG.normal(size=(3, 4)), RNG.poisson(1.0, 4).astype(float)
    y[0] = 0.0
    _check(F.poisson_nll_loss, TF.poisson_nll_loss, [x, y], [True, False], full=True, reduction="none")
    _same_error(lambda lib, fn: fn.poisson_nll_loss(lib.ones(3), lib.ones(3), reduction="avg"),
                ValueError, "avg is not a valid value for reduction")
    with pytest.raises(RuntimeError):
        F.poisson_nll_loss(rg.ones(3, 4), rg.ones(2, 4))
    layer = rg.nn.PoissonNLLLoss(log_input=False, full=True, eps=1e-3, reduction="sum")
    xr, yr = RNG.uniform(0.1, 2.0, 5), RNG.poisson(3.0, 5).astype(float)
    want = torch.nn.PoissonNLLLoss(log_input=False, full=True, eps=1e-3, reduction="sum")(torch.tensor(xr),
                                                                                           torch.tensor(yr))
    np.testing.assert_allclose(layer(rg.tensor(xr), rg.tensor(yr)).item(), want.item(), rtol=1e-12)


# --- gaussian_nll_loss ------------------------------------------------------------------

@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("full", [False, True])
@pytest.mark.parametrize("var_shape", [(3, 4), (3,), (3, 1), (1, 4)])
def test_gaussian_nll_matches_torch(reduction, full, var_shape):
    x, y = RNG.normal(size=(3, 4)), RNG.normal(size=(3, 4))
    v = RNG.uniform(0.2, 2.0, var_shape)
    _check(F.gaussian_nll_loss, TF.gaussian_nll_loss, [x, y, v], [True, True, True], full=full,
           reduction=reduction)


def test_gaussian_nll_float_var_clamp_and_shapes():
    x, y = RNG.normal(size=(2, 3)), RNG.normal(size=(2, 3))
    got = F.gaussian_nll_loss(rg.tensor(x), rg.tensor(y), 0.5, reduction="none")
    want = TF.gaussian_nll_loss(torch.tensor(x), torch.tensor(y), 0.5, reduction="none")
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)
    # variances below eps: clamped value, the gradient still reaches var (as torch)
    v = np.array([[1e-9, 0.5, 0.0], [2.0, 1e-8, 1.0]])
    _check(F.gaussian_nll_loss, TF.gaussian_nll_loss, [x, y, v], [True, True, True], rtol=1e-9, eps=1e-4,
           reduction="sum")
    # one variance for a whole unbatched sample; broadcasting the target
    _check(F.gaussian_nll_loss, TF.gaussian_nll_loss, [x[0], y[0], np.array(0.7)], [True, True, True])
    _check(F.gaussian_nll_loss, TF.gaussian_nll_loss, [x, y[0], np.ones((2, 3))], [True, True, False],
           reduction="none")
    layer = rg.nn.GaussianNLLLoss(full=True, eps=1e-3, reduction="sum")
    want = torch.nn.GaussianNLLLoss(full=True, eps=1e-3, reduction="sum")(torch.tensor(x), torch.tensor(y),
                                                                           torch.ones(2, 1, dtype=torch.float64))
    np.testing.assert_allclose(layer(rg.tensor(x), rg.tensor(y), rg.ones(2, 1)).item(), want.item(), rtol=1e-12)


@pytest.mark.parametrize("var_shape", [(4,), (1, 1), (), (3, 4, 1), (2, 4)])
def test_gaussian_nll_var_size_errors(var_shape):
    _same_error(lambda lib, fn: fn.gaussian_nll_loss(lib.ones(3, 4), lib.ones(3, 4), lib.ones(var_shape)),
                ValueError, "var is of incorrect size")


def test_gaussian_nll_other_errors():
    _same_error(lambda lib, fn: fn.gaussian_nll_loss(lib.ones(3), lib.ones(3), -1.0),
                ValueError, "var has negative entry")
    _same_error(lambda lib, fn: fn.gaussian_nll_loss(lib.ones(3), lib.ones(3), -lib.ones(3)),
                ValueError, "var has negative entry")
    _same_error(lambda lib, fn: fn.gaussian_nll_loss(lib.ones(3), lib.ones(3), lib.ones(3), reduction="avg"),
                ValueError, "avg is not valid")
    with pytest.raises(TypeError):
        TF.gaussian_nll_loss(torch.ones(3), torch.ones(3), 1)
    with pytest.raises(TypeError, match="var must be a Tensor or a float"):
        F.gaussian_nll_loss(rg.ones(3), rg.ones(3), 1)


# --- NLLLoss2d --------------------------------------------------------------------------

def test_nll_loss_2d_is_a_deprecated_nll_loss():
    with pytest.warns(FutureWarning, match="`NLLLoss2d` has been deprecated"):
        layer = rg.nn.NLLLoss2d(ignore_index=1, reduction="sum")
    assert isinstance(layer, rg.nn.NLLLoss)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        theirs = torch.nn.NLLLoss2d(ignore_index=1, reduction="sum")
    x = np.log(RNG.dirichlet(np.ones(3), (2, 2, 2))).transpose(0, 3, 1, 2)
    t = RNG.integers(0, 3, (2, 2, 2))
    np.testing.assert_allclose(layer(rg.tensor(x), rg.tensor(t)).item(),
                               theirs(torch.tensor(x), torch.tensor(t)).item(), rtol=1e-12)


# --- gradcheck in float64 ----------------------------------------------------------------

def _t(a):
    return rg.tensor(a, requires_grad=True)


MM_TARGET = RNG.integers(0, 4, 3)
ML_TARGET = np.array([[2, 0, -1, 1], [1, -1, 0, 0], [3, 2, 1, -1]])
GRADCHECKS = {
    "multilabel_soft_margin": lambda: (
        lambda x: F.multilabel_soft_margin_loss(x, rg.tensor(ML_TARGET.clip(0, 1).astype(float)),
                                                weight=rg.tensor([1.0, 2.0, 0.5, 1.5])),
        (_t(RNG.normal(size=(3, 4))),)),
    "multilabel_margin": lambda: (lambda x: F.multilabel_margin_loss(x, rg.tensor(ML_TARGET)),
                                  (_t(RNG.normal(size=(3, 4))),)),
    "multi_margin_p1": lambda: (lambda x: F.multi_margin_loss(x, rg.tensor(MM_TARGET), weight=rg.tensor([1.0, 2.0,
                                                                                                        0.5, 1.0])),
                                (_t(RNG.normal(size=(3, 4))),)),
    "multi_margin_p2": lambda: (lambda x: F.multi_margin_loss(x, rg.tensor(MM_TARGET), p=2, margin=2.0),
                                (_t(RNG.normal(size=(3, 4))),)),
    "poisson_nll": lambda: (lambda x, y: F.poisson_nll_loss(x, y, full=True),
                            (_t(RNG.normal(size=(2, 3))), _t(RNG.uniform(1.5, 4.0, (2, 3))))),
    "poisson_nll_rate": lambda: (lambda x: F.poisson_nll_loss(x, rg.tensor([[1.0, 0.0, 3.0]]), log_input=False),
                                 (_t(RNG.uniform(0.5, 2.0, (1, 3))),)),
    "gaussian_nll": lambda: (lambda x, y, v: F.gaussian_nll_loss(x, y, v, full=True),
                             (_t(RNG.normal(size=(2, 3))), _t(RNG.normal(size=(2, 3))),
                              _t(RNG.uniform(0.5, 2.0, (2, 1))))),
}


@pytest.mark.parametrize("name", sorted(GRADCHECKS))
def test_gradcheck(name):
    fn, inputs = GRADCHECKS[name]()
    assert rg.autograd.gradcheck(fn, inputs)
    assert rg.autograd.gradgradcheck(fn, inputs)


# --- float32, the default dtype --------------------------------------------------------

FLOAT32_CASES = {
    "smooth_l1_loss": lambda lib, x, y: (x, y),
    "kl_div": lambda lib, x, y: (x, y.abs()),
    "soft_margin_loss": lambda lib, x, y: (x, y.sign()),
    "multilabel_soft_margin_loss": lambda lib, x, y: (x, (y > 0).float()),
    "poisson_nll_loss": lambda lib, x, y: (x, y.abs()),
    "gaussian_nll_loss": lambda lib, x, y: (x, y, x.abs() + 0.1),
    "multi_margin_loss": lambda lib, x, y: (x, lib.tensor([0, 2, 1])),
    "triplet_margin_loss": lambda lib, x, y: (x, y, x * 0.5),
}


@pytest.mark.float32_default
@pytest.mark.parametrize("name", sorted(FLOAT32_CASES))
def test_float32_inputs_stay_float32(name):
    x, y = RNG.normal(size=(3, 3)).astype(np.float32), RNG.normal(size=(3, 3)).astype(np.float32)
    ours = getattr(F, name)(*FLOAT32_CASES[name](rg, rg.tensor(x), rg.tensor(y)), reduction="sum")
    theirs = getattr(TF, name)(*FLOAT32_CASES[name](torch, torch.tensor(x), torch.tensor(y)), reduction="sum")
    assert ours.dtype == np.float32 and theirs.dtype == torch.float32
    np.testing.assert_allclose(ours.item(), theirs.item(), rtol=2e-5)


def test_every_name_is_exported_as_in_torch():
    from retrograd.nn import _losses
    from retrograd.nn.modules import loss_more
    assert set(_losses.__all__) <= set(F.__all__)
    assert all(hasattr(TF, name) for name in _losses.__all__)
    assert set(loss_more.__all__) <= set(rg.nn.__all__)
    assert all(hasattr(torch.nn, name) for name in loss_more.__all__)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        # (LinearCrossEntropyLoss needs its sizes: tested in test_linear_cross_entropy.py)
        plain = [name for name in loss_more.__all__ if name != "LinearCrossEntropyLoss"]
        reprs = {name: repr(getattr(rg.nn, name)()) for name in plain}
        want = {name: repr(getattr(torch.nn, name)()) for name in plain}
    assert reprs == want
