"""F.scaled_dot_product_attention against torch 2.13: values and gradients for
masks (bool, float, causal), scale, GQA and broadcast batch dims; fully masked
rows (zeros, as torch's CPU kernels); gradcheck in float64; torch's errors."""
import warnings

import numpy as np
import pytest

import retrograd as rg
import retrograd.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional
pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(7)


def _both(*arrays, grad=True):
    return ([rg.tensor(a, requires_grad=grad) for a in arrays], [torch.tensor(a, requires_grad=grad) for a in arrays])


def _compare(shapes, mask=None, rtol=1e-10, **kw):
    arrays = [RNG.standard_normal(s) for s in shapes]
    (qr, kr, vr), (qt, kt, vt) = _both(*arrays)
    mr = None if mask is None else rg.tensor(mask)
    mt = None if mask is None else torch.tensor(mask)
    yr = F.scaled_dot_product_attention(qr, kr, vr, attn_mask=mr, **kw)
    yt = TF.scaled_dot_product_attention(qt, kt, vt, attn_mask=mt, **kw)
    assert yr.shape == tuple(yt.shape)
    np.testing.assert_allclose(yr.detach().numpy(), yt.detach().numpy(), rtol=rtol, atol=1e-12)
    seed = RNG.standard_normal(tuple(yt.shape))
    yr.backward(rg.tensor(seed))
    yt.backward(torch.tensor(seed))
    for a, b in zip((qr, kr, vr), (qt, kt, vt)):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=rtol, atol=1e-12)
    return yr


@pytest.mark.parametrize("shapes, kw", [
    (((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 7)), {}),
    (((4, 5), (6, 5), (6, 3)), {}),                                          # no batch dims
    (((2, 4, 5), (2, 6, 5), (2, 6, 3)), {"scale": 0.3}),
    (((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 7)), {"is_causal": True}),       # L < S
    (((1, 2, 6, 5), (1, 2, 4, 5), (1, 2, 4, 3)), {"is_causal": True}),       # L > S
    (((1, 2, 3, 4, 5), (2, 1, 6, 5), (2, 1, 6, 5)), {}),                     # broadcast batch dims
    (((2, 4, 3, 5), (2, 2, 6, 5), (2, 1, 6, 4)), {"enable_gqa": True}),
    (((4, 3, 5), (2, 6, 5), (4, 6, 5)), {"enable_gqa": True}),
])
def test_values_and_gradients_as_torch(shapes, kw):
    _compare(shapes, **kw)


def test_bool_mask_true_attends():
    mask = RNG.random((4, 6)) > 0.4
    mask[:, 0] = True
    _compare(((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 7)), mask=mask)
    # a batched mask broadcasting over the heads
    mask = RNG.random((2, 1, 4, 6)) > 0.4
    mask[..., 0] = True
    _compare(((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 7)), mask=mask)


def test_float_mask_is_added_and_gets_its_gradient():
    mask = RNG.standard_normal((4, 6))
    _compare(((2, 4, 5), (2, 6, 5), (2, 6, 3)), mask=mask)
    q, k, v = (RNG.standard_normal(s) for s in ((2, 4, 5), (2, 6, 5), (2, 6, 3)))
    (mr,), (mt,) = _both(mask)
    F.scaled_dot_product_attention(rg.tensor(q), rg.tensor(k), rg.tensor(v), attn_mask=mr).sum().backward()
    TF.scaled_dot_product_attention(torch.tensor(q), torch.tensor(k), torch.tensor(v), attn_mask=mt).sum().backward()
    np.testing.assert_allclose(mr.grad.numpy(), mt.grad.numpy(), rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("kind", ["bool", "float"])
def test_fully_masked_rows_give_zeros_as_torch(kind):
    keep = RNG.random((4, 6)) > 0.5
    keep[:, 0] = True
    keep[1] = False
    mask = keep if kind == "bool" else np.where(keep, 0.0, -np.inf)
    y = _compare(((2, 4, 5), (2, 6, 5), (2, 6, 3)), mask=mask)
    assert np.all(y.detach().numpy()[:, 1] == 0.0)
    assert np.isfinite(y.detach().numpy()).all()


def test_float32_and_float32_mask_with_float64_query():
    q, k, v = (RNG.standard_normal(s).astype(np.float32) for s in ((2, 4, 8), (2, 5, 8), (2, 5, 8)))
    yr = F.scaled_dot_product_attention(rg.tensor(q), rg.tensor(k), rg.tensor(v), is_causal=True)
    yt = TF.scaled_dot_product_attention(torch.tensor(q), torch.tensor(k), torch.tensor(v), is_causal=True)
    assert yr.dtype == np.float32
    np.testing.assert_allclose(yr.numpy(), yt.numpy(), rtol=1e-5, atol=1e-6)
    # a float32 mask with float64 inputs is allowed (torch's "float" mask)
    m = np.zeros((4, 5), np.float32)
    out = F.scaled_dot_product_attention(rg.tensor(q).double(), rg.tensor(k).double(), rg.tensor(v).double(),
                                         attn_mask=rg.tensor(m))
    assert out.dtype == np.float64


def test_gradcheck_float64():
    q, k, v = (rg.tensor(RNG.standard_normal(s), requires_grad=True) for s in ((2, 3, 4), (2, 5, 4), (2, 5, 3)))
    m = rg.tensor(RNG.standard_normal((3, 5)), requires_grad=True)
    assert rg.autograd.gradcheck(lambda a, b, c, d: F.scaled_dot_product_attention(a, b, c, attn_mask=d),
                                 (q, k, v, m))
    assert rg.autograd.gradcheck(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, is_causal=True, scale=0.5),
                                 (q, k, v))
    keep = rg.tensor(np.array([[True] * 5, [False] * 5, [True, False, True, False, True]]))
    assert rg.autograd.gradcheck(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, attn_mask=keep), (q, k, v))


def test_gradgradcheck_float64():
    q, k, v = (rg.tensor(RNG.standard_normal(s), requires_grad=True) for s in ((1, 3, 2), (1, 4, 2), (1, 4, 2)))
    keep = rg.tensor(np.array([[True, True, False, True], [False] * 4, [True] * 4]))
    assert rg.autograd.gradgradcheck(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, attn_mask=keep),
                                     (q, k, v))
    assert rg.autograd.gradgradcheck(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, is_causal=True),
                                     (q, k, v))


def test_exported_by_functional():
    assert {"scaled_dot_product_attention", "multi_head_attention_forward"} <= set(F.__all__)


def test_dropout_statistics_and_determinism():
    q = rg.zeros(1, 1, 2000, 4)            # uniform weights 1/S: the output is the dropped mean of v
    v = rg.ones(1, 1, 10, 3)
    _ = rg.manual_seed(3)
    y1 = F.scaled_dot_product_attention(q, rg.zeros(1, 1, 10, 4), v, dropout_p=0.5)
    _ = rg.manual_seed(3)
    y2 = F.scaled_dot_product_attention(q, rg.zeros(1, 1, 10, 4), v, dropout_p=0.5)
    np.testing.assert_array_equal(y1.numpy(), y2.numpy())
    assert abs(float(y1.mean()) - 1.0) < 0.05      # E[mask / (1 - p)] = 1
    assert float(y1.std()) > 0.1
    with pytest.raises(RuntimeError, match="dropout probability"):
        F.scaled_dot_product_attention(q, q, q, dropout_p=1.5)


def test_empty_keys_give_zeros():
    y = F.scaled_dot_product_attention(rg.ones(1, 2, 4), rg.ones(1, 0, 4), rg.ones(1, 0, 4))
    yt = TF.scaled_dot_product_attention(torch.ones(1, 2, 4), torch.ones(1, 0, 4), torch.ones(1, 0, 4))
    np.testing.assert_array_equal(y.numpy(), yt.numpy())


def test_profiled_under_its_name():
    pytest.importorskip("retrograd.profiler")
    x = rg.randn(1, 2, 3)
    with rg.profiler.profile() as prof:
        F.scaled_dot_product_attention(x, x, x)
    assert "aten::scaled_dot_product_attention" in {e.name for e in prof.events()}


@pytest.mark.parametrize("call, exc, match", [
    (lambda f, t: f(t(2, 3, 4), t(2, 5, 4), t(2, 5, 4), attn_mask=t(3, 5) > 0, is_causal=True), RuntimeError,
     "(?i)attn_mask should not be set when is_causal"),
    (lambda f, t: f(t(4), t(2, 4), t(2, 4)), RuntimeError, "2 dimensional|2-dimensional"),
    (lambda f, t: f(t(2, 3, 4).double(), t(2, 5, 4).float(), t(2, 5, 4).double()), RuntimeError, "same dtype"),
    (lambda f, t: f(t(2, 3, 4), t(2, 5, 4), t(2, 5, 4), attn_mask=t(3, 5).long()), RuntimeError, "attn_mask dtype"),
    (lambda f, t: f(t(2, 3, 4).float(), t(2, 5, 4).float(), t(2, 5, 4).float(), attn_mask=t(3, 5).double()),
     RuntimeError, "attn_mask dtype"),
    (lambda f, t: f(t(1, 4, 3, 5), t(1, 3, 6, 5), t(1, 3, 6, 5), enable_gqa=True), RuntimeError,
     "(?i)number of heads"),
    (lambda f, t: f(t(2, 3, 4), t(2, 5, 4), t(2, 5, 4), is_causal=1), TypeError, "is_causal"),
    (lambda f, t: f(t(2, 3, 4), t(2, 5, 4), t(2, 5, 4), scale="a"), TypeError, "scale"),
    (lambda f, t: f([1.0], t(2, 5, 4), t(2, 5, 4)), TypeError, "query"),
    (lambda f, t: f(t(2, 3, 4), t(2, 5, 4), t(2, 5, 4), attn_mask=[1]), TypeError, "attn_mask"),
    (lambda f, t: f(t(2, 3, 4), t(2, 5, 3), t(2, 5, 4)), RuntimeError, "last dim"),
    (lambda f, t: f(t(2, 3, 4), t(2, 5, 4), t(2, 4, 4)), RuntimeError, "as many entries"),
])
def test_errors_as_torch(call, exc, match):
    # the class is torch's; the message is checked on retrograd's side
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(exc):
            call(TF.scaled_dot_product_attention, torch.ones)
    with pytest.raises(exc, match=match):
        call(F.scaled_dot_product_attention, rg.ones)


def test_integer_inputs_refused():
    x = rg.ones(2, 3, dtype=rg.int64)
    with pytest.raises(RuntimeError, match="floating-point"):
        F.scaled_dot_product_attention(x, x, x)
    with pytest.raises(RuntimeError):
        TF.scaled_dot_product_attention(*(torch.ones(2, 3, dtype=torch.int64),) * 3)
