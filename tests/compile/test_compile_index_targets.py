"""Functions whose index, mask or target tensors change from call to call
compile, and each call reads its own: cross_entropy and nll_loss with class
indices (weights, ignore_index, label smoothing, each reduction),
embedding, index_select, masked_fill and take_along_dim. A program that
baked in the first call's targets would give the first call's loss for
every later one; these tests draw new targets for each call and compare
the loss and the gradients with eager's."""
import warnings

import numpy as np
import pytest

import retrograd as rg
import retrograd.compile
import retrograd.nn.functional as F

RNG = np.random.default_rng(11)
W = rg.tensor(RNG.standard_normal((8, 5)), requires_grad=True)
CLASS_WEIGHTS = rg.tensor(RNG.random(5) + 0.5)
TABLE = rg.tensor(RNG.standard_normal((7, 3)), requires_grad=True)


def _labels(n=16, k=5):
    return rg.tensor(RNG.integers(0, k, n))


def _same_as_eager(fn, make_args, calls=4):
    cf = rg.compile(fn, backend="numpy")
    params = [W, TABLE]
    with warnings.catch_warnings():
        warnings.simplefilter("error")           # a graph break warns: fail on it
        for _ in range(calls):
            args = make_args()
            for p in params:
                p.grad = None
            got = cf(*args)
            got.backward()
            got_grads = [None if p.grad is None else p.grad.numpy().copy() for p in params]
            for p in params:
                p.grad = None
            want = fn(*args)
            want.backward()
            np.testing.assert_allclose(got.item(), want.item(), rtol=1e-12)
            for g, p in zip(got_grads, params):
                if p.grad is None:
                    assert g is None
                else:
                    np.testing.assert_allclose(g, p.grad.numpy(), rtol=1e-12, atol=1e-15)
    assert cf.cache_info() == {"compiled": 1, "eager": 0}
    return cf


CROSS_ENTROPY = {
    "mean": {},
    "sum": {"reduction": "sum"},
    "none": {"reduction": "none"},
    "weight": {"weight": CLASS_WEIGHTS},
    "ignore_index": {"ignore_index": 2},
    "label_smoothing": {"label_smoothing": 0.1},
    "all_of_them": {"weight": CLASS_WEIGHTS, "ignore_index": 1, "label_smoothing": 0.2},
}


@pytest.mark.parametrize("case", sorted(CROSS_ENTROPY))
def test_cross_entropy_reads_each_calls_class_indices(case):
    kw = CROSS_ENTROPY[case]

    def loss(x, y):
        out = F.cross_entropy(x @ W, y, **kw)
        return out.sum() if out.ndim else out
    _same_as_eager(loss, lambda: (rg.tensor(RNG.standard_normal((16, 8))), _labels()))


def test_nll_loss_of_an_image_shaped_input_reads_each_calls_targets():
    def loss(x, y):
        logits = (x @ W).permute(0, 2, 1)                 # (N, C, d)
        return F.nll_loss(logits.log_softmax(1), y, weight=CLASS_WEIGHTS)
    _same_as_eager(loss, lambda: (rg.tensor(RNG.standard_normal((4, 6, 8))),
                                  rg.tensor(RNG.integers(0, 5, (4, 6)))))


def test_every_target_ignored_gives_a_nan_loss_with_zero_gradient_when_compiled():
    cf = rg.compile(lambda x, y: F.cross_entropy(x @ W, y, ignore_index=3), backend="numpy")
    x = rg.tensor(RNG.standard_normal((4, 8)))
    cf(x, _labels(4))                                       # traced on ordinary targets
    W.grad = None
    loss = cf(x, rg.tensor(np.full(4, 3)))
    loss.backward()
    assert np.isnan(loss.item())
    np.testing.assert_array_equal(W.grad.numpy(), 0.0)


@pytest.mark.parametrize("bad", [5, -1])
def test_a_class_out_of_range_in_a_compiled_call_raises_index_error(bad):
    cf = rg.compile(lambda x, y: F.cross_entropy(x @ W, y), backend="numpy")
    x = rg.tensor(RNG.standard_normal((6, 8)))
    cf(x, _labels(6))
    y = _labels(6)
    y.numpy()[2] = bad
    # the program's IndexError hands the call to eager: torch's message
    with pytest.raises(IndexError, match=f"Target {bad} is out of bounds"):
        cf(x, y)
    with pytest.raises(IndexError, match=f"Target {bad} is out of bounds"):
        F.cross_entropy(x @ W, y)


@pytest.mark.parametrize("padding_idx", [None, 2])
def test_embedding_reads_each_calls_indices(padding_idx):
    def f(i):
        return (F.embedding(i, TABLE, padding_idx=padding_idx) ** 2).sum()
    _same_as_eager(f, lambda: (rg.tensor(RNG.integers(0, 7, (3, 4))),))


def test_embedding_refuses_a_negative_index_in_a_compiled_call():
    cf = rg.compile(lambda i: F.embedding(i, TABLE).sum(), backend="numpy")
    cf(rg.tensor(RNG.integers(0, 7, 5)))
    with pytest.raises(IndexError):
        cf(rg.tensor(np.array([0, -1, 2, 3, 4])))


def test_index_select_reads_each_calls_positions_and_refuses_negative_ones():
    def f(i):
        return (TABLE.index_select(0, i) * 3.0).sum()
    cf = _same_as_eager(f, lambda: (rg.tensor(RNG.integers(0, 7, 4)),))
    with pytest.raises(IndexError):
        cf(rg.tensor(np.array([0, -1, 2, 3])))


def test_masked_fill_reads_each_calls_mask():
    def f(m):
        return (TABLE.masked_fill(m, -1.5) ** 2).sum()
    _same_as_eager(f, lambda: (rg.tensor(RNG.random((7, 3)) < 0.5),))


@pytest.mark.parametrize("dim", [0, 1, None])
def test_take_along_dim_reads_each_calls_positions(dim):
    def f(i):
        return (rg.take_along_dim(TABLE, i, dim) ** 2).sum()
    shape = {0: (2, 3), 1: (7, 2), None: (5,)}[dim]
    high = {0: 7, 1: 3, None: 21}[dim]
    low = 0 if dim is None else -high          # (negative positions count from the end)
    _same_as_eager(f, lambda: (rg.tensor(RNG.integers(low, high, shape)),))


def test_is_compiling_is_true_only_while_tracing_on_this_thread():
    seen = []

    @rg.compile(backend="numpy")
    def f(x):
        seen.append(rg.compile.is_compiling())
        return x * 2.0
    assert not rg.compile.is_compiling()
    f(rg.ones(3))
    n = len(seen)
    f(rg.ones(3))
    assert n >= 1 and all(seen) and len(seen) == n
    assert not rg.compile.is_compiling()
