"""F.linear_cross_entropy (reference and chunked paths), nn.LinearCrossEntropyOptions,
nn.LinearCrossEntropyLoss, F.conv_tbc and grid_sample's mode tables, against torch 2.13:
values and every gradient, the options' validation and chunk sizing, the fall-back
warning, and the errors."""
import warnings

import numpy as np
import pytest

import retrograd as rg
import retrograd.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional
pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(4141)


def _pair(a, requires_grad=True):
    return rg.tensor(a, requires_grad=requires_grad), torch.tensor(a, requires_grad=requires_grad)


def _compare(kwargs_rg, kwargs_t, n=7, f=3, c=5, bias=True, target=None, cw=None, seed_shape=None, rtol=1e-10):
    x, tx = _pair(RNG.standard_normal((n, f)))
    w, tw = _pair(RNG.standard_normal((c, f)))
    b, tb = _pair(RNG.standard_normal(c)) if bias else (None, None)
    tgt = RNG.integers(0, c, n) if target is None else target
    extra_rg, extra_t = {}, {}
    if cw is not None:
        extra_rg["weight"], extra_t["weight"] = rg.tensor(cw), torch.tensor(cw)
    out = F.linear_cross_entropy(x, w, rg.tensor(tgt), linear_bias=b, **extra_rg, **kwargs_rg)
    want = TF.linear_cross_entropy(tx, tw, torch.tensor(tgt), linear_bias=tb, **extra_t, **kwargs_t)
    np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(), rtol=rtol, atol=1e-12)
    seed = RNG.standard_normal(tuple(want.shape))
    out.backward(rg.tensor(seed))
    want.backward(torch.tensor(seed))
    pairs = [(x, tx), (w, tw)] + ([(b, tb)] if bias else [])
    for o, t in pairs:
        np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=rtol, atol=1e-12)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("chunk", [None, 1, 3, 100])
def test_chunked_matches_torch(reduction, chunk):
    tgt = np.array([0, 4, -100, 2, 2, 1, 3])
    cw = RNG.uniform(0.5, 2.0, 5)
    opts = None if chunk is None else rg.nn.LinearCrossEntropyOptions(batch_chunk_size=chunk)
    topts = None if chunk is None else torch.nn.LinearCrossEntropyOptions(batch_chunk_size=chunk)
    _compare(dict(reduction=reduction, options=opts), dict(reduction=reduction, options=topts), target=tgt, cw=cw)


@pytest.mark.parametrize("ignore_index", [1, 7])
def test_chunked_ignore_index_and_no_bias(ignore_index):
    tgt = np.array([1, 0, 1, 3, 4, 1, 2])
    opts, topts = (rg.nn.LinearCrossEntropyOptions(chunking_method="aspect_ratio"),
                   torch.nn.LinearCrossEntropyOptions(chunking_method="aspect_ratio"))
    for reduction in ("mean", "none"):
        _compare(dict(reduction=reduction, ignore_index=ignore_index, options=opts),
                 dict(reduction=reduction, ignore_index=ignore_index, options=topts), target=tgt, bias=False)


def test_chunked_path_is_a_custom_function_and_recomputes():
    x = rg.randn(6, 3, requires_grad=True)
    w = rg.randn(9, 3, requires_grad=True)
    loss = F.linear_cross_entropy(x, w, rg.tensor([0, 1, 2, 3, 4, 8]),
                                  options=rg.nn.LinearCrossEntropyOptions(batch_chunk_size=2))
    assert loss.grad_fn.name() == "_ChunkedLinearCrossEntropyBackward"
    # the backward recomputes from the saved inputs, so a second backward gives the same gradients
    loss.backward(retain_graph=True)
    first = w.grad.clone()
    loss.backward()
    np.testing.assert_allclose(w.grad.numpy(), 2 * first.numpy(), rtol=1e-12)
    # double backward is refused, as torch's chunked op refuses it
    loss = F.linear_cross_entropy(x, w, rg.tensor([0, 1, 2, 3, 4, 8]), options=rg.nn.LinearCrossEntropyOptions())
    (g,) = rg.autograd.grad(loss ** 2, x, create_graph=True)
    with pytest.raises(RuntimeError, match="differentiate twice"):
        g.sum().backward()


def test_chunked_logits_never_exceed_a_chunk(monkeypatch):
    import retrograd.nn._linear_cross_entropy as lce
    shapes = []
    real = lce._chunk_logits

    def spy(x_c, w, b):
        out = real(x_c, w, b)
        shapes.append(tuple(out.shape))
        return out

    monkeypatch.setattr(lce, "_chunk_logits", spy)
    x = rg.randn(10, 4, requires_grad=True)
    w = rg.randn(50, 4, requires_grad=True)
    loss = F.linear_cross_entropy(x, w, rg.randint(0, 50, (10,)),
                                  options=rg.nn.LinearCrossEntropyOptions(batch_chunk_size=4))
    assert shapes == [(4, 50), (4, 50), (2, 50)]
    loss.backward()
    # backward computes each chunk's logits again, one chunk at a time
    assert shapes[3:] == [(4, 50), (4, 50), (2, 50)]


def test_unbatched_and_edge_cases():
    opts, topts = rg.nn.LinearCrossEntropyOptions(), torch.nn.LinearCrossEntropyOptions()
    x = RNG.standard_normal(3)
    w = RNG.standard_normal((4, 3))
    for reduction in ("mean", "none"):
        for o, to in ((None, None), (opts, topts)):
            out = F.linear_cross_entropy(rg.tensor(x), rg.tensor(w), rg.tensor(2), reduction=reduction, options=o)
            want = TF.linear_cross_entropy(torch.tensor(x), torch.tensor(w), torch.tensor(2), reduction=reduction,
                                           options=to)
            assert out.shape == tuple(want.shape)
            np.testing.assert_allclose(out.numpy(), want.numpy(), rtol=1e-12)
    # every row ignored, or no rows: mean is NaN, sum 0, none empty (torch's values)
    empty = rg.zeros(0, 3)
    assert np.isnan(F.linear_cross_entropy(empty, rg.tensor(w), rg.tensor([], dtype=rg.int64), options=opts).item())
    assert F.linear_cross_entropy(empty, rg.tensor(w), rg.tensor([], dtype=rg.int64), reduction="sum",
                                  options=opts).item() == 0.0
    assert np.isnan(F.linear_cross_entropy(rg.ones(2, 3), rg.tensor(w), rg.tensor([-100, -100]),
                                           options=opts).item())


def test_reference_path_k_dimensional_and_probabilities():
    n, f, c = 3, 4, 5
    x, tx = _pair(RNG.standard_normal((n, f)))
    w, tw = _pair(RNG.standard_normal((c, 2, f)))
    b, tb = _pair(RNG.standard_normal((c, 2)))
    tgt = RNG.integers(0, c, (n, 2))
    out = F.linear_cross_entropy(x, w, rg.tensor(tgt), linear_bias=b, label_smoothing=0.1)
    want = TF.linear_cross_entropy(tx, tw, torch.tensor(tgt), linear_bias=tb, label_smoothing=0.1)
    np.testing.assert_allclose(out.item(), want.item(), rtol=1e-12)
    out.backward()
    want.backward()
    for o, t in ((x, tx), (w, tw), (b, tb)):
        np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12)
    probs = RNG.dirichlet(np.ones(c), n)
    out = F.linear_cross_entropy(x, rg.tensor(tw.detach().numpy()[:, 0]), rg.tensor(probs))
    want = TF.linear_cross_entropy(tx, tw.detach()[:, 0], torch.tensor(probs))
    np.testing.assert_allclose(out.item(), want.item(), rtol=1e-12)


def test_options_fall_back_with_a_warning():
    x, w = rg.randn(4, 3), rg.randn(5, 3)
    t = rg.tensor([0, 1, 2, 3])
    opts = rg.nn.LinearCrossEntropyOptions()
    with pytest.warns(UserWarning, match="``options`` ignored"):
        out = F.linear_cross_entropy(x, w, t, options=opts, label_smoothing=0.2)
    np.testing.assert_allclose(out.item(), F.linear_cross_entropy(x, w, t, label_smoothing=0.2).item())


def test_options_fields_and_validation():
    o, to = rg.nn.LinearCrossEntropyOptions(), torch.nn.LinearCrossEntropyOptions()
    for field in ("allow_retain_graph", "batch_chunk_size", "chunking_method", "acc_policy", "acc_dtype"):
        assert getattr(o, field) == getattr(to, field)
    with pytest.raises(Exception, match="cannot assign|FrozenInstance"):
        o.batch_chunk_size = 3
    for kwargs, match in ((dict(acc_policy="fast"), "invalid acc_policy"),
                          (dict(chunking_method="aspect"), "invalid chunking_method"),
                          (dict(chunking_method="aspect_ratio:0"), "invalid chunking_method"),
                          (dict(batch_chunk_size=0), "batch_chunk_size must be positive int"),
                          (dict(batch_chunk_size=2.0), "batch_chunk_size must be positive int")):
        with pytest.raises(ValueError, match=match):
            rg.nn.LinearCrossEntropyOptions(**kwargs)
        with pytest.raises(ValueError, match=match):
            torch.nn.LinearCrossEntropyOptions(**kwargs)
    with pytest.raises(ValueError, match="acc_dtype must be one of"):
        rg.nn.LinearCrossEntropyOptions(acc_dtype=rg.int64)
    assert rg.nn.LinearCrossEntropyOptions(acc_dtype=rg.float32).acc_dtype == rg.float32


@pytest.mark.parametrize("kwargs", [dict(), dict(chunking_method="aspect_ratio"), dict(chunking_method="aspect_ratio:4"),
                                    dict(batch_chunk_size=5), dict(batch_chunk_size=100, chunking_method=None)])
@pytest.mark.parametrize("shape", [(100, 8, 50), (33, 16, 8), (1, 4, 7)])
def test_chunk_size_resolution_matches_torch(kwargs, shape):
    n, f, c = shape
    ours = rg.nn.LinearCrossEntropyOptions(**kwargs)._adjust(n, f, c, rg.float32, rg.device("cpu"))
    theirs = torch.nn.LinearCrossEntropyOptions(**kwargs)._adjust(n, f, c, torch.float32, torch.device("cpu"))
    assert (ours.batch_chunk_size, ours.acc_policy, ours.chunking_method) == \
        (theirs.batch_chunk_size, theirs.acc_policy, theirs.chunking_method)
    assert ours.acc_dtype == rg.float32


def test_conflicting_chunk_size_and_method():
    opts = rg.nn.LinearCrossEntropyOptions(batch_chunk_size=3, chunking_method="aspect_ratio")
    with pytest.raises(ValueError, match="give different chunk sizes"):
        F.linear_cross_entropy(rg.randn(5, 3), rg.randn(4, 3), rg.tensor([0, 1, 2, 3, 1]), options=opts)


def test_half_precision_accumulates_in_float32():
    x = RNG.standard_normal((6, 4)).astype(np.float16)
    w = RNG.standard_normal((9, 4)).astype(np.float16)
    t = np.array([0, 8, 3, 2, 5, 1])
    out = F.linear_cross_entropy(rg.tensor(x), rg.tensor(w), rg.tensor(t),
                                 options=rg.nn.LinearCrossEntropyOptions(batch_chunk_size=4))
    assert out.dtype == np.float16
    ref = F.linear_cross_entropy(rg.tensor(x.astype(np.float32)), rg.tensor(w.astype(np.float32)), rg.tensor(t))
    np.testing.assert_allclose(float(out), float(ref), rtol=1e-3)
    with pytest.raises(RuntimeError, match="supports float32 acc_dtype"):
        F.linear_cross_entropy(rg.randn(2, 3), rg.randn(4, 3), rg.tensor([0, 1]),
                               options=rg.nn.LinearCrossEntropyOptions(acc_dtype=rg.float16))


def test_errors():
    x, w = rg.randn(5, 3), rg.randn(4, 3)
    t = rg.tensor([0, 1, 2, 3, 1])
    opts = rg.nn.LinearCrossEntropyOptions(batch_chunk_size=2)
    cases = [
        (lambda: F.linear_cross_entropy(rg.randn(2, 2, 3), w, t), RuntimeError, "dimensionality 1 or 2"),
        (lambda: F.linear_cross_entropy(x, rg.randn(3), t), RuntimeError, "at least 2"),
        (lambda: F.linear_cross_entropy(x, rg.randn(4, 2), t), RuntimeError, "in_features"),
        (lambda: F.linear_cross_entropy(x, w, t, linear_bias=rg.randn(3)), RuntimeError, "linear_bias shape"),
        (lambda: F.linear_cross_entropy(rg.randn(3), rg.randn(4, 2, 3), rg.tensor(0)), RuntimeError,
         "requires batched input"),
        (lambda: F.linear_cross_entropy(x, w, rg.randn(5, 4).softmax(1), ignore_index=1), RuntimeError,
         "ignore_index cannot be specified"),
        (lambda: F.linear_cross_entropy(x, w, rg.tensor([0, 1, 2, 3, 7])), IndexError, "Target 7 is out of bounds"),
        (lambda: F.linear_cross_entropy(x, w, rg.tensor([0, 1, 2, 3, 7]), options=opts), IndexError,
         "Target 7 is out of bounds"),
        (lambda: F.linear_cross_entropy(x, w, t, weight=rg.ones(3), options=opts), RuntimeError,
         "for all 4 classes"),
        (lambda: F.linear_cross_entropy(x, w, rg.tensor([[0], [1], [2], [3], [1]]), options=opts), RuntimeError,
         "target of shape"),
        (lambda: F.linear_cross_entropy(x, w, t, options="chunk"), TypeError, "LinearCrossEntropyOptions"),
    ]
    for call, exc, match in cases:
        with pytest.raises(exc, match=match):
            call()
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            F.linear_cross_entropy(x, w, t, options=opts, reduction="avg")


@pytest.mark.parametrize("options", [False, True])
def test_module_matches_torch(options):
    kw = dict(out_features=(), bias=True, reduction="sum", ignore_index=2)
    if options:
        ours = rg.nn.LinearCrossEntropyLoss(4, 6, options=rg.nn.LinearCrossEntropyOptions(batch_chunk_size=3), **kw)
        theirs = torch.nn.LinearCrossEntropyLoss(4, 6, options=torch.nn.LinearCrossEntropyOptions(batch_chunk_size=3),
                                                 dtype=torch.float64, **kw)
    else:
        ours = rg.nn.LinearCrossEntropyLoss(4, 6, **kw)
        theirs = torch.nn.LinearCrossEntropyLoss(4, 6, dtype=torch.float64, **kw)
    with rg.no_grad():
        ours.linear.weight.copy_(rg.tensor(theirs.linear.weight.detach().numpy()))
        ours.linear.bias.copy_(rg.tensor(theirs.linear.bias.detach().numpy()))
    x, tx = _pair(RNG.standard_normal((5, 4)))
    t = RNG.integers(0, 6, 5)
    out, want = ours(x, rg.tensor(t)), theirs(tx, torch.tensor(t))
    np.testing.assert_allclose(out.item(), want.item(), rtol=1e-12)
    out.backward()
    want.backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ours.linear.weight.grad.numpy(), theirs.linear.weight.grad.numpy(), rtol=1e-10,
                               atol=1e-12)
    np.testing.assert_allclose(ours.linear.bias.grad.numpy(), theirs.linear.bias.grad.numpy(), rtol=1e-10,
                               atol=1e-12)
    assert repr(ours).split("options=")[0] == repr(theirs).split("options=")[0]


@pytest.mark.float32_default
def test_module_construction():
    m = rg.nn.LinearCrossEntropyLoss(3, 4, out_features=(2, 5), bias=True)
    assert m.linear.weight.shape == (40, 3) and m.linear.bias.shape == (40,)
    assert m.linear.weight.dtype == np.float32 and m.weight is None and m.ignore_index is None
    out = m(rg.randn(2, 3), rg.randint(0, 4, (2, 2, 5)))
    assert out.shape == () and out.dtype == np.float32
    with pytest.raises(RuntimeError, match=r"expected weight shape to be \(4,\)"):
        rg.nn.LinearCrossEntropyLoss(3, 4, weight=rg.ones(3))
    with pytest.raises(RuntimeError, match="label_smoothing to be in range"):
        rg.nn.LinearCrossEntropyLoss(3, 4, label_smoothing=1.5)


@pytest.mark.parametrize("pad", [0, 1, 2, -1])
def test_conv_tbc_matches_torch(pad):
    x, tx = _pair(RNG.standard_normal((6, 2, 3)))
    w, tw = _pair(RNG.standard_normal((3, 3, 4)))
    b, tb = _pair(RNG.standard_normal(4))
    out, want = F.conv_tbc(x, w, b, pad), TF.conv_tbc(tx, tw, tb, pad)
    assert out.shape == tuple(want.shape)
    np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(), rtol=1e-10, atol=1e-12)
    seed = RNG.standard_normal(tuple(want.shape))
    out.backward(rg.tensor(seed))
    want.backward(torch.tensor(seed))
    for o, t in ((x, tx), (w, tw), (b, tb)):
        np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_conv_tbc_empty_output_and_errors():
    x = rg.randn(2, 2, 3, requires_grad=True)
    out = F.conv_tbc(x, rg.randn(3, 3, 4), rg.randn(4), 0)
    assert out.shape == (0, 2, 4)
    out.sum().backward()
    assert x.grad.shape == (2, 2, 3) and not x.grad.numpy().any()
    w, b = rg.randn(3, 3, 4), rg.randn(4)
    cases = [
        (lambda: F.conv_tbc(rg.randn(5, 3), w, b), RuntimeError, "Input must have 3 dims"),
        (lambda: F.conv_tbc(rg.randn(5, 2, 3), rg.randn(3, 4), b), RuntimeError, "Weight tensor must have 3 dims"),
        (lambda: F.conv_tbc(rg.randn(5, 2, 3), w, rg.randn(4, 1)), RuntimeError, "Bias must be 1-D"),
        (lambda: F.conv_tbc(rg.randn(5, 2, 2), w, b), RuntimeError, "input channels"),
        (lambda: F.conv_tbc(rg.randn(5, 2, 3), w, rg.randn(3)), RuntimeError, "Bias size must equal"),
        (lambda: F.conv_tbc(rg.randn(1, 2, 3), w, b), RuntimeError, "negative dimension -1"),
        (lambda: F.conv_tbc(rg.randn(5, 2, 3), w, None), TypeError, "argument 'bias'"),
        (lambda: F.conv_tbc(rg.randn(5, 2, 3), w, b, 1.5), TypeError, "argument 'pad'"),
    ]
    for call, exc, match in cases:
        with pytest.raises(exc, match=match):
            call()


def test_conv_tbc_gradcheck():
    x = rg.randn(5, 2, 2, requires_grad=True)
    w = rg.randn(2, 2, 3, requires_grad=True)
    b = rg.randn(3, requires_grad=True)
    assert rg.autograd.gradcheck(lambda x, w, b: F.conv_tbc(x, w, b, 1), (x, w, b))


def test_grid_sample_tables():
    assert F.GRID_SAMPLE_INTERPOLATION_MODES == TF.GRID_SAMPLE_INTERPOLATION_MODES
    assert F.GRID_SAMPLE_PADDING_MODES == TF.GRID_SAMPLE_PADDING_MODES


@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_chunked_gradcheck(reduction):
    x = rg.randn(5, 3, requires_grad=True)
    w = rg.randn(4, 3, requires_grad=True)
    b = rg.randn(4, requires_grad=True)
    t = rg.tensor([0, 3, 1, -100, 2])
    opts = rg.nn.LinearCrossEntropyOptions(batch_chunk_size=2)
    assert rg.autograd.gradcheck(
        lambda x, w, b: F.linear_cross_entropy(x, w, t, linear_bias=b, reduction=reduction, options=opts), (x, w, b))
