"""F.ctc_loss and nn.CTCLoss against torch 2.13: losses and gradients for
every reduction, padded and concatenated targets, unbatched inputs, lengths
as tensors or tuples, impossible alignments with and without zero_infinity,
the argument checks, and gradcheck through log_softmax."""
import numpy as np
import pytest

import retrograd as rg
import retrograd.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional
pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(2006)
REDUCTIONS = ["mean", "sum", "none"]


def _log_probs(T, N, C, dtype=np.float64):
    z = RNG.normal(0, 1.5, (T, N, C))
    return (z - np.log(np.exp(z).sum(-1, keepdims=True))).astype(dtype)


def _compare(lp, targets, input_lengths, target_lengths, rtol=1e-9, atol=1e-11, seed=True, **kw):
    """Loss and the gradient of the raw log-probabilities, ours against
    torch's (lengths given as arrays become int64 tensors; tuples stay)."""
    def lengths(lib, v):
        return lib.tensor(v) if isinstance(v, np.ndarray) else v
    x, tx = rg.tensor(lp, requires_grad=True), torch.tensor(lp, requires_grad=True)
    out = F.ctc_loss(x, rg.tensor(targets), lengths(rg, input_lengths), lengths(rg, target_lengths), **kw)
    want = TF.ctc_loss(tx, torch.tensor(targets), lengths(torch, input_lengths), lengths(torch, target_lengths),
                       **kw)
    assert tuple(out.shape) == tuple(want.shape) and out.dtype == np.dtype(str(want.dtype).split(".")[1])
    np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(), rtol=rtol, atol=atol)
    g = RNG.uniform(0.5, 1.5, tuple(want.shape)).astype(lp.dtype) if seed else np.ones(tuple(want.shape), lp.dtype)
    out.backward(rg.tensor(g))
    want.backward(torch.tensor(g))
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=rtol, atol=atol)
    return out, x.grad.numpy()


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("zero_infinity", [False, True])
def test_padded_targets_match_torch(reduction, zero_infinity):
    T, N, C = 12, 4, 6
    tl = np.array([3, 5, 0, 2])
    targets = RNG.integers(1, C, (N, 5))
    targets[0, :3] = [2, 2, 3]                    # a repeat needs a blank between
    targets[2] = -1                               # padding beyond a length is never read
    _compare(_log_probs(T, N, C), targets, np.array([12, 10, 7, 4]), tl, reduction=reduction,
             zero_infinity=zero_infinity)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_concatenated_targets_and_tuple_lengths(reduction):
    T, N, C = 9, 3, 5
    tl = (2, 4, 1)
    flat = RNG.integers(1, C, sum(tl))
    lp = _log_probs(T, N, C)
    out, _ = _compare(lp, flat, (9, 8, 6), tl, reduction=reduction)
    # the same as the padded form
    padded = np.zeros((N, 4), dtype=np.int64)
    padded[0, :2], padded[1], padded[2, :1] = flat[:2], flat[2:6], flat[6:]
    same = F.ctc_loss(rg.tensor(lp), rg.tensor(padded), [9, 8, 6], list(tl), reduction=reduction)
    np.testing.assert_allclose(same.numpy(), out.detach().numpy(), rtol=1e-12)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("lengths", ["0-d", "1-elem", "tuple"])
def test_unbatched_input(reduction, lengths):
    T, C = 7, 4
    lp = _log_probs(T, 1, C)[:, 0]
    target = np.array([1, 3, 3])
    il, tl = {"0-d": (np.array(7), np.array(3)), "1-elem": (np.array([6]), np.array([3])),
              "tuple": ((7,), (3,))}[lengths]
    _compare(lp, target, il, tl, reduction=reduction)


def test_other_blank_class_and_target_that_is_blank():
    T, N, C = 8, 2, 5
    targets = np.array([[0, 1, 2], [3, 3, 1]])      # class 0 is an ordinary label here
    _compare(_log_probs(T, N, C), targets, np.array([8, 8]), np.array([3, 3]), blank=4, reduction="none")
    # a target equal to the blank is read as torch reads it
    _compare(_log_probs(T, 1, C), np.array([[1, 0, 2]]), np.array([8]), np.array([3]), reduction="none")


def test_integer_lengths_and_float_targets_are_accepted():
    lp = _log_probs(6, 2, 4)
    targets = np.array([[1, 2], [3, 1]])
    _compare(lp, targets.astype(np.int32), np.array([6, 5], dtype=np.int32), np.array([2, 2], dtype=np.int32))
    _compare(lp, targets.astype(np.float64), np.array([6, 5]), np.array([2, 2]))


@pytest.mark.parametrize("zero_infinity", [False, True])
def test_impossible_alignments(zero_infinity):
    # sample 0: 3 labels with a repeat need 4 frames but get 3; sample 1 is fine
    T, N, C = 5, 2, 4
    lp = _log_probs(T, N, C)
    targets = np.array([[1, 1, 2], [2, 3, 0]])
    il, tl = np.array([3, 5]), np.array([3, 2])
    out, grad = _compare(lp, targets, il, tl, reduction="none", zero_infinity=zero_infinity)
    if zero_infinity:
        assert out[0].item() == 0.0 and not grad[:, 0].any()
    else:
        assert np.isinf(out[0].item())
        assert np.isnan(grad[:3, 0]).all() and not grad[3:, 0].any()
    assert np.isfinite(grad[:, 1]).all()
    _compare(lp, targets, il, tl, reduction="sum", zero_infinity=zero_infinity)


def test_empty_inputs_and_targets():
    lp = _log_probs(4, 3, 3)
    # no frames and no labels: probability 1; no frames for a label: infinite
    out, grad = _compare(lp, np.array([[1], [2], [1]]), np.array([0, 0, 4]), np.array([0, 1, 0]),
                         reduction="none")
    assert out[0].item() == 0.0 and np.isinf(out[1].item())
    assert not grad[:, :2].any()
    _compare(lp, np.zeros(0, dtype=np.int64), np.array([4, 3, 2]), np.array([0, 0, 0]), reduction="mean")


def test_float32_and_frames_beyond_the_input_length():
    T, N, C = 10, 3, 5
    lp = _log_probs(T, N, C, np.float32)
    out, grad = _compare(lp, RNG.integers(1, C, (N, 3)), np.array([10, 6, 8]), np.array([3, 2, 3]),
                         rtol=2e-5, atol=2e-6, reduction="none")
    assert out.dtype == np.float32
    assert not grad[6:, 1].any() and not grad[8:, 2].any()
    # torch's gradient of the raw log-probabilities sums to 0 over classes
    np.testing.assert_allclose(grad.sum(-1), 0.0, atol=1e-5)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_gradient_through_log_softmax_matches_torch(reduction):
    T, N, C = 8, 3, 5
    z = RNG.normal(size=(T, N, C))
    targets, il, tl = RNG.integers(1, C, (N, 3)), [8, 7, 5], [3, 1, 2]
    x, tx = rg.tensor(z, requires_grad=True), torch.tensor(z, requires_grad=True)
    out = F.ctc_loss(F.log_softmax(x, 2), rg.tensor(targets), rg.tensor(il), rg.tensor(tl), reduction=reduction)
    want = TF.ctc_loss(TF.log_softmax(tx, 2), torch.tensor(targets), torch.tensor(il), torch.tensor(tl),
                       reduction=reduction)
    out.sum().backward()
    want.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("zero_infinity", [False, True])
def test_gradcheck_through_log_softmax(zero_infinity):
    targets = rg.tensor([[1, 2, 2], [3, 1, 0]])
    il, tl = rg.tensor([6, 5]), rg.tensor([3, 2])

    def loss(z):
        return F.ctc_loss(F.log_softmax(z, 2), targets, il, tl, reduction="sum", zero_infinity=zero_infinity)
    assert rg.autograd.gradcheck(loss, (rg.tensor(RNG.normal(size=(6, 2, 4)), requires_grad=True),))


def test_larger_random_batch():
    T, N, C, S = 30, 5, 8, 10
    tl = RNG.integers(0, S + 1, N)
    _compare(_log_probs(T, N, C), RNG.integers(1, C, (N, S)), RNG.integers(S, T + 1, N), tl, reduction="mean")


def test_second_derivative_is_refused_as_torch():
    x = rg.tensor(_log_probs(5, 1, 3), requires_grad=True)
    (g,) = rg.autograd.grad(F.ctc_loss(x, rg.tensor([[1]]), (5,), (1,)), x, create_graph=True)
    with pytest.raises(RuntimeError):
        g.sum().backward()


def _call(lib, fn, lp_shape=(6, 2, 5), targets=((1, 2, 2), (3, 1, 0)), il=np.array([6, 5]), tl=np.array([3, 2]),
          dtype=None, **kw):
    lp = lib.zeros(lp_shape, dtype=dtype or lib.float64)
    def as_len(v):
        return lib.tensor(v) if not isinstance(v, (tuple, list, int)) else v
    return fn.ctc_loss(lp, lib.tensor(targets), as_len(il), as_len(tl), **kw)


@pytest.mark.parametrize("kw, exc, match", [
    (dict(il=np.array([7, 5])), RuntimeError, "Expected input_lengths to have value at most 6, but got value 7"),
    (dict(il=np.array([-1, 5])), RuntimeError, "Expected input_lengths to have value at least 0"),
    (dict(tl=np.array([-1, 2])), RuntimeError, "Expected target_lengths to have value at least 0"),
    (dict(tl=np.array([4, 2])), RuntimeError, "Expected tensor to have size at least 4 at dimension 1"),
    (dict(tl=np.array([3, 2, 1])), RuntimeError, "target_lengths must be of size batch_size"),
    (dict(il=np.array([6])), RuntimeError, "input_lengths must be of size batch_size"),
    (dict(blank=5), RuntimeError, "blank must be in label range"),
    (dict(blank=-1), RuntimeError, "blank must be in label range"),
    (dict(il=np.array([6.0, 5.0])), RuntimeError, "input_lengths must be integral"),
    (dict(targets=(1, 2, 2, 3)), RuntimeError, "Expected tensor to have size 5 at dimension 0, but got size 4"),
    (dict(targets=((1, 2, 2),)), RuntimeError, "Expected tensor to have size 2 at dimension 0, but got size 1"),
    (dict(targets=(((1,), (2,)), ((3,), (1,)))), RuntimeError, "Expected 1 to 2 dimensions"),
    (dict(lp_shape=(1, 6, 2, 5)), RuntimeError, "Expected 3-dimensional tensor, but got 5-dimensional"),
    (dict(lp_shape=(0, 2, 5), il=np.array([0, 0]), tl=np.array([0, 0])), RuntimeError,
     "log_probs tensor must not be empty"),
    (dict(reduction="avg"), ValueError, "avg is not a valid value for reduction"),
    (dict(il=6, tl=3), TypeError, ""),
    (dict(il=(6, 5.0), tl=(3, 2)), TypeError, ""),
    (dict(il=(6, 5)), TypeError, ""),
])
def test_argument_errors_as_torch(kw, exc, match):
    with pytest.raises(exc, match=match or None):
        _call(torch, TF, **kw)
    with pytest.raises(exc, match=match or None):
        _call(rg, F, **kw)


def test_dtype_and_label_range_errors():
    with pytest.raises(NotImplementedError, match="ctc_loss"):
        _call(rg, F, dtype=rg.float16)
    with pytest.raises(NotImplementedError, match="ctc_loss"):
        _call(torch, TF, dtype=torch.float16)
    # torch reads out of bounds for a class outside [0, C); retrograd refuses it
    with pytest.raises(IndexError, match="target label 7 is out of range"):
        _call(rg, F, targets=((1, 7, 2), (3, 1, 0)))


def test_layer_matches_functional_and_torch():
    lp = _log_probs(7, 2, 4)
    targets, il, tl = np.array([[1, 2], [3, 3]]), np.array([7, 6]), np.array([2, 2])
    layer = rg.nn.CTCLoss(blank=0, reduction="sum", zero_infinity=True)
    got = layer(rg.tensor(lp), rg.tensor(targets), rg.tensor(il), rg.tensor(tl))
    want = torch.nn.CTCLoss(reduction="sum", zero_infinity=True)(torch.tensor(lp), torch.tensor(targets),
                                                                 torch.tensor(il), torch.tensor(tl))
    np.testing.assert_allclose(got.item(), want.item(), rtol=1e-12)
    assert layer.blank == 0 and layer.zero_infinity and layer.reduction == "sum"
    assert repr(layer) == "CTCLoss()"
