"""rg.nn.functional against torch.nn.functional (values and gradients,
float64), finite-difference gradient checks of the composites, and the
semantics the registry samples do not reach (dropout, padding_idx, errors)."""
import warnings

import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")
TF = torch.nn.functional
F = rg.nn.functional

RNG = np.random.default_rng(0)


def _r(*shape, scale=1.0):
    return RNG.standard_normal(shape) * scale


def _run(rfn, tfn, arrays, diff, consts=()):
    """forward + VJP of rfn vs tfn; arrays[i] is differentiated where diff[i]."""
    rt = [rg.tensor(a, requires_grad=bool(d) and a.dtype.kind == "f") for a, d in zip(arrays, diff)]
    tt = [torch.tensor(a, requires_grad=bool(d) and a.dtype.kind == "f") for a, d in zip(arrays, diff)]
    ro, to = rfn(*rt), tfn(*tt)
    np.testing.assert_allclose(np.asarray(ro.detach()), to.detach().numpy(), rtol=1e-10, atol=1e-12)
    assert ro.dtype == np.dtype(str(to.dtype).replace("torch.", ""))
    rl = [t for t in rt if t.requires_grad]
    tl = [t for t in tt if t.requires_grad]
    if not rl:
        return
    v = RNG.standard_normal(tuple(to.shape))
    rg_g = rg.autograd.grad(ro, rl, rg.tensor(v), allow_unused=True)
    t_g = torch.autograd.grad(to, tl, torch.tensor(v), allow_unused=True)
    for a, b in zip(rg_g, t_g):
        if b is None:
            assert a is None or not np.asarray(a).any()
            continue
        np.testing.assert_allclose(np.asarray(a), b.numpy(), rtol=1e-9, atol=1e-11)


def _fd_check(fn, arrays, eps=1e-6, rtol=1e-5, atol=1e-7):
    """Central differences of <v, fn(...)> against retrograd's VJP."""
    ts = [rg.tensor(a, requires_grad=True) for a in arrays]
    out = fn(*ts)
    v = RNG.standard_normal(tuple(out.shape))
    grads = rg.autograd.grad(out, ts, rg.tensor(v), allow_unused=True)
    for i, a in enumerate(arrays):
        num = np.zeros_like(a)
        it = np.nditer(a, flags=["multi_index"])
        for _ in it:
            idx = it.multi_index
            vals = []
            for sgn in (1, -1):
                args = [x.copy() for x in arrays]
                args[i][idx] += sgn * eps
                with rg.no_grad():
                    vals.append(float((np.asarray(fn(*[rg.tensor(x) for x in args])) * v).sum()))
            num[idx] = (vals[0] - vals[1]) / (2 * eps)
        g = np.zeros_like(a) if grads[i] is None else np.asarray(grads[i])
        np.testing.assert_allclose(g, num, rtol=rtol, atol=atol)


# --- oracle: composites ------------------------------------------------------------------

@pytest.mark.parametrize("bias", [True, False])
def test_linear(bias):
    arrays = [_r(4, 3), _r(5, 3)] + ([_r(5)] if bias else [])
    _run(lambda *a: F.linear(*a), lambda *a: TF.linear(*a), arrays, [1] * len(arrays))
    _run(lambda x, w: F.linear(x, w), lambda x, w: TF.linear(x, w), [_r(2, 4, 3), _r(3)], [1, 1])


CONV2D_CASES = [
    dict(),
    dict(stride=2, padding=1),
    dict(stride=(2, 1), padding=(1, 0), dilation=(1, 2), groups=2),
    dict(padding="same"),
    dict(padding="same", dilation=2),
    dict(padding="valid"),
]


@pytest.mark.parametrize("kw", CONV2D_CASES, ids=str)
@pytest.mark.parametrize("ksize", [(3, 3), (2, 4)])
def test_conv2d(kw, ksize):
    x, w, b = _r(2, 4, 7, 8), _r(6, 4 // kw.get("groups", 1), *ksize), _r(6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)     # torch: 'same' with even kernels
        _run(lambda x, w, b: F.conv2d(x, w, b, **kw), lambda x, w, b: TF.conv2d(x, w, b, **kw),
             [x, w, b], [1, 1, 1])


def test_conv2d_unbatched_and_float32():
    _run(lambda x, w: F.conv2d(x, w, padding=1), lambda x, w: TF.conv2d(x, w, padding=1),
         [_r(3, 5, 5), _r(2, 3, 3, 3)], [1, 1])
    x = rg.tensor(_r(2, 3, 6, 6).astype(np.float32), requires_grad=True)
    w = rg.tensor(_r(4, 3, 3, 3).astype(np.float32), requires_grad=True)
    out = F.conv2d(x, w, rg.zeros(4, dtype=np.float32), padding=1)
    assert out.dtype == np.float32
    out.sum().backward()
    assert x.grad.dtype == np.float32 and w.grad.dtype == np.float32


@pytest.mark.parametrize("kw", [dict(), dict(stride=2, padding=2, dilation=2), dict(padding="same"),
                                dict(groups=2, stride=3)], ids=str)
def test_conv1d(kw):
    _run(lambda x, w, b: F.conv1d(x, w, b, **kw), lambda x, w, b: TF.conv1d(x, w, b, **kw),
         [_r(2, 4, 11), _r(6, 4 // kw.get("groups", 1), 3), _r(6)], [1, 1, 1])
    _run(lambda x, w: F.conv1d(x, w, **kw), lambda x, w: TF.conv1d(x, w, **kw),
         [_r(4, 11), _r(2, 4 // kw.get("groups", 1), 3)], [1, 1])


def test_conv_double_backward_matches_torch():
    x, w = _r(2, 2, 6, 5), _r(3, 2, 3, 2)
    rx, rw = rg.tensor(x, requires_grad=True), rg.tensor(w, requires_grad=True)
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    res = []
    for mod, F_, a, b in ((rg, F, rx, rw), (torch, TF, tx, tw)):
        out = F_.conv2d(a, b, stride=(2, 1), padding=1, dilation=(1, 2))
        g = mod.autograd.grad((out * out).sum(), [a, b], create_graph=True)
        s = (g[0] * g[0]).sum() + (g[1] * g[1] * g[1]).sum()
        res.append([np.asarray(t.detach()) for t in mod.autograd.grad(s, [a, b])])
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-9)


def test_max_pool2d_ties_take_one_index():
    x = np.zeros((1, 1, 4, 4))
    _run(lambda x: F.max_pool2d(x, 2), lambda x: TF.max_pool2d(x, 2), [x], [1])
    _run(lambda x: F.max_pool2d(x, 3, 1, 1), lambda x: TF.max_pool2d(x, 3, 1, 1), [x], [1])
    t = rg.tensor(x, requires_grad=True)
    F.max_pool2d(t, 2).sum().backward()
    assert np.asarray(t.grad).sum() == 4.0


def test_pool_errors():
    with pytest.raises(RuntimeError, match="at most half"):
        F.max_pool2d(rg.zeros(1, 1, 4, 4), 2, padding=2)
    with pytest.raises(RuntimeError, match="Kernel size"):
        F.avg_pool2d(rg.zeros(1, 1, 2, 2), 3)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_family(dim):
    x = _r(3, 4, 5, scale=10)
    _run(lambda x: F.softmax(x, dim), lambda x: TF.softmax(x, dim), [x], [1])
    _run(lambda x: F.log_softmax(x, dim), lambda x: TF.log_softmax(x, dim), [x], [1])
    big = np.array([[1000.0, 0.0, -1000.0]])
    assert np.isfinite(np.asarray(F.log_softmax(rg.tensor(big), 1))).all()


def test_softmax_dtype_and_implicit_dim():
    x = rg.tensor(_r(2, 3).astype(np.float32))
    assert F.softmax(x, 1, dtype=np.float64).dtype == np.float64
    with pytest.warns(UserWarning, match="Implicit dimension"):
        y = F.softmax(x)
    np.testing.assert_allclose(np.asarray(y).sum(1), 1.0, rtol=1e-6)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("smoothing", [0.0, 0.25])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_class_indices(reduction, smoothing, weighted):
    w = RNG.uniform(0.5, 2.0, 4) if weighted else None
    for shape, tshape in (((6, 4), (6,)), ((2, 4, 3, 2), (2, 3, 2)), ((4,), ())):
        t = RNG.integers(0, 4, tshape)
        if t.ndim:
            t.flat[0] = -100 if shape != (4,) else t.flat[0]
        _run(lambda x: F.cross_entropy(x, t, weight=w, reduction=reduction, label_smoothing=smoothing),
             lambda x: TF.cross_entropy(x, torch.tensor(t), weight=None if w is None else torch.tensor(w),
                                        reduction=reduction, label_smoothing=smoothing),
             [_r(*shape)], [1])


def test_cross_entropy_custom_ignore_index():
    t = np.array([1, 3, 3, 0])
    _run(lambda x: F.cross_entropy(x, t, ignore_index=3), lambda x: TF.cross_entropy(
        x, torch.tensor(t), ignore_index=3), [_r(4, 5)], [1])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_cross_entropy_probabilities(reduction, smoothing):
    p = RNG.uniform(size=(5, 4))
    p /= p.sum(1, keepdims=True)
    w = RNG.uniform(0.5, 2.0, 4)
    _run(lambda x, p: F.cross_entropy(x, p, weight=w, reduction=reduction, label_smoothing=smoothing),
         lambda x, p: TF.cross_entropy(x, p, weight=torch.tensor(w), reduction=reduction,
                                       label_smoothing=smoothing), [_r(5, 4), p], [1, 1])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss(reduction):
    w = RNG.uniform(0.5, 2.0, 3)
    t = np.array([0, 2, -100, 1, 2])
    _run(lambda x: F.nll_loss(x, t, weight=w, reduction=reduction),
         lambda x: TF.nll_loss(x, torch.tensor(t), weight=torch.tensor(w), reduction=reduction),
         [_r(5, 3)], [1])


def test_nll_loss_all_ignored_is_nan_and_errors():
    out = F.nll_loss(rg.tensor(_r(2, 3)), np.array([-100, -100]))
    assert np.isnan(float(out))
    with pytest.raises(IndexError, match="out of bounds"):
        F.nll_loss(rg.tensor(_r(2, 3)), np.array([0, 3]))
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        F.nll_loss(rg.tensor(_r(2, 3)), np.array([0, 1]), reduction="avg")
    with pytest.raises(RuntimeError, match="Long"):
        F.nll_loss(rg.tensor(_r(2, 3)), np.array([0.0, 1.0]))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss(reduction):
    _run(lambda a, b: F.mse_loss(a, b, reduction=reduction),
         lambda a, b: TF.mse_loss(a, b, reduction=reduction), [_r(3, 4), _r(3, 4)], [1, 1])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weights", [False, True])
def test_bce_with_logits(reduction, weights):
    x = _r(4, 3, scale=40.0)           # large logits: the stable form matters
    y = RNG.uniform(size=(4, 3))
    w = RNG.uniform(0.5, 2, 3) if weights else None
    pw = RNG.uniform(0.5, 2, 3) if weights else None
    tw = (lambda a: None if a is None else torch.tensor(a))
    _run(lambda x, y: F.binary_cross_entropy_with_logits(x, y, weight=w, reduction=reduction, pos_weight=pw),
         lambda x, y: TF.binary_cross_entropy_with_logits(x, y, weight=tw(w), reduction=reduction,
                                                          pos_weight=tw(pw)), [x, y], [1, 1])
    with pytest.raises(ValueError, match="same as input size"):
        F.binary_cross_entropy_with_logits(rg.zeros(3), rg.zeros(4))


@pytest.mark.parametrize("affine", [False, True])
def test_layer_norm(affine):
    x = _r(2, 3, 4, 5)
    extra = [_r(4, 5), _r(4, 5)] if affine else []
    _run(lambda x, *wb: F.layer_norm(x, (4, 5), *wb), lambda x, *wb: TF.layer_norm(x, (4, 5), *wb),
         [x] + extra, [1] * (1 + len(extra)))
    _run(lambda x: F.layer_norm(x, 5, eps=1e-3), lambda x: TF.layer_norm(x, (5,), eps=1e-3), [x], [1])
    with pytest.raises(RuntimeError, match="normalized_shape"):
        F.layer_norm(rg.tensor(x), (4,))


@pytest.mark.parametrize("padding_idx", [None, 1, -1])
def test_embedding(padding_idx):
    idx = np.array([[1, 2, 1, 1], [0, 3, 3, 2]])
    _run(lambda w: F.embedding(idx, w, padding_idx=padding_idx),
         lambda w: TF.embedding(torch.tensor(idx), w, padding_idx=padding_idx), [_r(4, 3)], [1])
    w = rg.tensor(_r(4, 3), requires_grad=True)
    F.embedding(idx, w, padding_idx=padding_idx).sum().backward()
    counts = np.bincount(idx.ravel(), minlength=4).astype(float)
    if padding_idx is not None:
        counts[padding_idx] = 0.0
    np.testing.assert_array_equal(np.asarray(w.grad), np.repeat(counts[:, None], 3, 1))


# --- dropout -------------------------------------------------------------------------------

def test_dropout_mask_scaling_and_seed():
    x = rg.ones(2000, requires_grad=True)
    rg.manual_seed(5)
    y = F.dropout(x, 0.25)
    vals = np.unique(np.asarray(y.detach()))
    np.testing.assert_allclose(vals, [0.0, 1 / 0.75])
    assert abs((np.asarray(y.detach()) == 0).mean() - 0.25) < 0.05
    y.sum().backward()
    np.testing.assert_array_equal(np.asarray(x.grad), np.asarray(y.detach()))
    rg.manual_seed(5)
    np.testing.assert_array_equal(np.asarray(F.dropout(x, 0.25).detach()), np.asarray(y.detach()))


def test_dropout_identity_and_zero():
    x = rg.tensor(_r(3, 4), requires_grad=True)
    assert F.dropout(x, 0.0) is x and F.dropout(x, 0.7, training=False) is x
    z = F.dropout(x, 1.0)
    assert not np.asarray(z.detach()).any() and z.requires_grad
    z32 = F.dropout(rg.ones(5, dtype=np.float32), 0.5)
    assert z32.dtype == np.float32
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.dropout(x, 1.5)


# --- finite differences of the composites --------------------------------------------------

def test_finite_differences():
    t = np.array([0, 2, 1])
    _fd_check(lambda x: F.cross_entropy(x, t, label_smoothing=0.1), [_r(3, 4)])
    _fd_check(lambda x, y: F.binary_cross_entropy_with_logits(x, y, pos_weight=rg.tensor([2.0, 0.5])),
              [_r(3, 2), RNG.uniform(size=(3, 2))])
    _fd_check(lambda x, w, b: F.layer_norm(x, (3,), w, b), [_r(2, 3), _r(3), _r(3)])
    _fd_check(lambda x, w, b: F.conv1d(x, w, b, padding="same"), [_r(1, 2, 5), _r(2, 2, 2), _r(2)])
    _fd_check(lambda x, w: F.linear(x, w), [_r(2, 3), _r(2, 3)])
    _fd_check(lambda a, b: F.mse_loss(a, b), [_r(2, 3), _r(2, 3)])


def test_conv_errors_say_what_is_wrong():
    with pytest.raises(RuntimeError, match="channels"):
        F.conv2d(rg.zeros(1, 3, 5, 5), rg.zeros(2, 2, 3, 3))
    with pytest.raises(RuntimeError, match="strided"):
        F.conv2d(rg.zeros(1, 3, 5, 5), rg.zeros(2, 3, 3, 3), stride=2, padding="same")
    with pytest.raises(RuntimeError, match="Kernel size"):
        F.conv2d(rg.zeros(1, 3, 2, 2), rg.zeros(2, 3, 3, 3))


def test_max_pool2d_tie_and_nan_in_other_windows():
    # one window with a tie, another with NaN: the tiled fast path must not
    # mistake the hit count for "one hit per window"
    x = np.arange(16.0).reshape(1, 1, 4, 4)
    x[0, 0, 0, 0] = x[0, 0, 0, 1] = x[0, 0, 1, 0] = x[0, 0, 1, 1] = 7.0
    x[0, 0, 2, 2] = np.nan
    t = rg.tensor(x, requires_grad=True)
    tt = torch.tensor(x, requires_grad=True)
    F.max_pool2d(t, 2).sum().backward()
    TF.max_pool2d(tt, 2).sum().backward()
    g = np.asarray(t.grad)
    assert g[0, 0, :2, :2].sum() == 1.0 and g[0, 0, 0, 0] == 1.0
    np.testing.assert_array_equal(g[0, 0, :2], tt.grad.numpy()[0, 0, :2])
    assert g[0, 0, 2:, 2:].sum() == 1.0


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_max_pool2d_tiled_windows_with_many_ties_match_torch(k, dtype):
    # after a relu most windows hold several zeros: the tiled fast path must
    # send each window's gradient to its first maximum, as torch does
    rng = np.random.default_rng(3)
    a = np.maximum(rng.standard_normal((2, 3, 6 * k // 2 * 2, 4 * k)), 0).astype(dtype)
    a[0, 0, :k, :k] = 0.0                                  # a window of zeros only
    a[1, 2, :k, :k] = 1.5                                  # a window of equal positives
    x = rg.tensor(a, requires_grad=True)
    xt = torch.tensor(a, requires_grad=True)
    g = rng.standard_normal(F.max_pool2d(x, k).shape).astype(dtype)
    F.max_pool2d(x, k).backward(rg.tensor(g))
    TF.max_pool2d(xt, k).backward(torch.tensor(g))
    np.testing.assert_array_equal(np.asarray(x.grad), xt.grad.numpy())


@pytest.mark.parametrize("call", [
    lambda F, x, t, w: F.nll_loss(F.log_softmax(x, 1), t, weight=w),
    lambda F, x, t, w: F.cross_entropy(x, t, weight=w),
    lambda F, x, t, w: F.cross_entropy(x, t, weight=w, label_smoothing=0.1),
])
def test_class_weights_that_require_grad_raise_like_torch(call):
    # torch: "The function 'nll_loss_forward' is not differentiable with
    # respect to argument 'weight'" (never a silently missing gradient)
    import torch
    x = np.random.default_rng(0).standard_normal((4, 3))
    t = np.array([0, 2, 1, 2])
    w = np.array([0.5, 1.0, 2.0])
    with pytest.raises(RuntimeError, match="not differentiable with respect to argument 'weight'"):
        call(torch.nn.functional, torch.tensor(x, requires_grad=True), torch.tensor(t),
             torch.tensor(w, requires_grad=True))
    with pytest.raises(RuntimeError, match="not differentiable with respect to argument 'weight'"):
        call(F, rg.tensor(x, requires_grad=True), rg.tensor(t), rg.tensor(w, requires_grad=True))
    with rg.no_grad():                  # nothing is recorded: allowed, as in torch
        call(F, rg.tensor(x), rg.tensor(t), rg.tensor(w, requires_grad=True))
    # probability targets: weight is differentiable there (torch's composite)
    p = np.full((4, 3), 1 / 3)
    wt = rg.tensor(w, requires_grad=True)
    F.cross_entropy(rg.tensor(x), rg.tensor(p), weight=wt).backward()
    tw = torch.tensor(w, requires_grad=True)
    torch.nn.functional.cross_entropy(torch.tensor(x), torch.tensor(p), weight=tw).backward()
    np.testing.assert_allclose(wt.grad.numpy(), tw.grad.numpy(), rtol=1e-12)
