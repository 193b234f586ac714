"""rg.nn.functional's leaky_relu, elu, batch_norm, pad, one_hot, l1_loss,
huber_loss and adaptive_avg_pool2d: values and gradients against
torch.nn.functional (float64), first and second derivatives by finite
differences (gradcheck, gradgradcheck), torch's errors."""
import warnings

import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")
TF = torch.nn.functional
F = rg.nn.functional
gradcheck, gradgradcheck = rg.autograd.gradcheck, rg.autograd.gradgradcheck

pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(16)


def _r(*shape):
    return RNG.standard_normal(shape)


def _compare(rfn, tfn, arrays, rtol=1e-12, atol=1e-13):
    """Forward values and the VJP of every float input against torch."""
    rt = [rg.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
    tt = [torch.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
    ro, to = rfn(*rt), tfn(*tt)
    np.testing.assert_allclose(np.asarray(ro.detach()), to.detach().numpy(), rtol=rtol, atol=atol)
    assert ro.dtype == np.dtype(str(to.dtype).replace("torch.", ""))
    v = RNG.standard_normal(tuple(to.shape))
    rl = [t for t in rt if t.requires_grad]
    tl = [t for t in tt if t.requires_grad]
    gr = rg.autograd.grad(ro, rl, rg.tensor(v), allow_unused=True)
    gt = torch.autograd.grad(to, tl, torch.tensor(v), allow_unused=True)
    for a, b in zip(gr, gt):
        if b is None:
            assert a is None or not np.asarray(a).any()
        else:
            np.testing.assert_allclose(np.asarray(a), b.numpy(), rtol=rtol * 100, atol=atol * 100)


def _checks(fn, arrays):
    ts = [rg.tensor(a, requires_grad=True) for a in arrays]
    assert gradcheck(fn, ts)
    assert gradgradcheck(fn, ts)


# --- leaky_relu and elu -----------------------------------------------------------------

X_ACT = np.array([[-800.0, -3.0, -0.5, 0.0], [0.25, 1.5, 30.0, 800.0]])


@pytest.mark.parametrize("slope", [0.01, 0.2, -0.5])
def test_leaky_relu_matches_torch(slope):
    _compare(lambda x: F.leaky_relu(x, slope), lambda x: TF.leaky_relu(x, slope), [X_ACT])
    _checks(lambda x: F.leaky_relu(x, slope), [_r(3, 4)])


@pytest.mark.parametrize("alpha", [1.0, 0.3, 2.5])
def test_elu_matches_torch_and_stays_finite_for_large_inputs(alpha):
    _compare(lambda x: F.elu(x, alpha), lambda x: TF.elu(x, alpha), [X_ACT])
    _checks(lambda x: F.elu(x, alpha), [_r(3, 4)])
    x = rg.tensor(X_ACT, requires_grad=True)
    F.elu(x, alpha).sum().backward()
    assert np.isfinite(np.asarray(x.grad)).all()


@pytest.mark.parametrize("name,kw", [("leaky_relu", {"negative_slope": 0.1}), ("elu", {"alpha": 0.7})])
def test_inplace_activations_match_torch(name, kw):
    x = rg.tensor(X_ACT[:, 1:-1], requires_grad=True)
    xt = torch.tensor(X_ACT[:, 1:-1], requires_grad=True)
    h, ht = x * 2, xt * 2
    y = getattr(F, name)(h, inplace=True, **kw)
    yt = getattr(TF, name)(ht, inplace=True, **kw)
    assert y is h and h._version == 1
    np.testing.assert_allclose(np.asarray(y.detach()), yt.detach().numpy(), rtol=1e-14)
    (y * y).sum().backward()
    (yt * yt).sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad), xt.grad.numpy(), rtol=1e-13)
    z = rg.tensor([-1.0, 2.0])
    assert getattr(F, name + "_")(z, *kw.values()) is z
    np.testing.assert_allclose(np.asarray(z), getattr(TF, name)(torch.tensor([-1.0, 2.0]), **kw).numpy())


def test_activation_errors_like_torch():
    with pytest.raises(RuntimeError, match="leaf"):
        F.leaky_relu(rg.tensor([1.0], requires_grad=True), inplace=True)
    for fn in (F.leaky_relu, F.elu):
        with pytest.raises(NotImplementedError, match="not implemented for int64"):
            fn(rg.tensor([1, 2]))
    x = rg.tensor([-1.0, 1.0], dtype=rg.float32)
    assert F.leaky_relu(x).dtype == np.float32 and F.elu(x).dtype == np.float32


# --- batch_norm -------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(5, 3), (4, 3, 6), (2, 3, 4, 5), (2, 3, 2, 2, 3)])
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_training_matches_torch_and_updates_running_stats(shape, affine):
    x = _r(*shape)
    w, b = _r(3), _r(3)
    rm, rv = _r(3), np.abs(_r(3)) + 0.5
    rms, rvs = rg.tensor(rm), rg.tensor(rv)
    tms, tvs = torch.tensor(rm), torch.tensor(rv)

    def rfn(x, w, b):
        return F.batch_norm(x, rms, rvs, w if affine else None, b if affine else None, True, 0.3, 1e-3)

    def tfn(x, w, b):
        return TF.batch_norm(x, tms, tvs, w if affine else None, b if affine else None, True, 0.3, 1e-3)

    _compare(rfn, tfn, [x, w, b])
    np.testing.assert_allclose(np.asarray(rms), tms.numpy(), rtol=1e-13)
    np.testing.assert_allclose(np.asarray(rvs), tvs.numpy(), rtol=1e-13)
    assert rms._version > 0
    _checks(lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), [x, w, b])


@pytest.mark.parametrize("shape", [(5, 3), (2, 3, 4, 5)])
def test_batch_norm_eval_uses_running_stats(shape):
    x, w, b = _r(*shape), _r(3), _r(3)
    rm, rv = _r(3), np.abs(_r(3)) + 0.5
    _compare(lambda x, w, b: F.batch_norm(x, rg.tensor(rm), rg.tensor(rv), w, b),
             lambda x, w, b: TF.batch_norm(x, torch.tensor(rm), torch.tensor(rv), w, b), [x, w, b])
    rms, rvs = rg.tensor(rm), rg.tensor(rv)
    F.batch_norm(rg.tensor(x), rms, rvs)
    assert rms._version == 0 and np.array_equal(np.asarray(rms), rm)
    _checks(lambda x, w, b: F.batch_norm(x, rg.tensor(rm), rg.tensor(rv), w, b), [x, w, b])


def test_batch_norm_float32_keeps_running_stats_dtype():
    x = rg.tensor(_r(6, 2), dtype=rg.float32)
    rm, rv = rg.zeros(2, dtype=rg.float32), rg.ones(2, dtype=rg.float32)
    y = F.batch_norm(x, rm, rv, training=True)
    assert y.dtype == np.float32 and rm.dtype == np.float32 and rv.dtype == np.float32
    tm, tv = torch.zeros(2), torch.ones(2)
    TF.batch_norm(torch.tensor(np.asarray(x)), tm, tv, training=True)
    np.testing.assert_allclose(np.asarray(rv), tv.numpy(), rtol=1e-6)


def test_batch_norm_errors_like_torch():
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        F.batch_norm(rg.ones(1, 3), rg.zeros(3), rg.ones(3), training=True)
    with pytest.raises(RuntimeError, match="running_mean must be defined in evaluation mode"):
        F.batch_norm(rg.ones(2, 3), None, None)
    with pytest.raises(RuntimeError, match="running_mean should contain 3 elements not 4"):
        F.batch_norm(rg.ones(2, 3), rg.zeros(4), rg.ones(4), training=True)
    with pytest.raises(RuntimeError, match="weight should contain 3 elements not 2"):
        F.batch_norm(rg.ones(2, 3), rg.zeros(3), rg.ones(3), weight=rg.ones(2))
    with pytest.raises(NotImplementedError, match="batch_norm"):
        F.batch_norm(rg.tensor([[1, 2], [3, 4]]), None, None, training=True)
    with pytest.raises(ValueError, match="eps must be positive during training"):
        F.batch_norm(rg.ones(2, 3), None, None, training=True, eps=0.0)
    with pytest.raises(ValueError, match="eps must be non-negative"):
        F.batch_norm(rg.ones(2, 3), rg.zeros(3), rg.ones(3), eps=-1.0)
    with pytest.raises(RuntimeError, match="not differentiable with respect to argument 'running_mean'"):
        F.batch_norm(rg.ones(2, 3), rg.zeros(3, requires_grad=True), rg.ones(3))
    with pytest.raises(RuntimeError, match="expected an input of shape"):
        F.batch_norm(rg.ones(3), rg.zeros(3), rg.ones(3))
    # without running statistics, training mode normalises with the batch's own
    y = F.batch_norm(rg.tensor([[1.0], [3.0]]), None, None, training=True)
    np.testing.assert_allclose(np.asarray(y), [[-1.0], [1.0]], rtol=1e-5)


# --- pad ------------------------------------------------------------------------------------

PAD_CASES = [
    ((2, 5), (1, 2)), ((2, 3, 5), (2, 1)), ((2, 3, 5), (-1, 2)), ((2, 3, 5), (2, -1)), ((2, 3, 5), (-2, -2)),
    ((2, 3, 5), (4, 4)), ((1, 1, 5), (-4, 1)), ((2, 3, 4), (1, 1, 2, 0)), ((2, 2, 3, 4), (1, -1, 2, 1)),
    ((1, 2, 3, 4, 3), (1, 1, 2, 0, 1, 2)), ((2, 3, 4, 3), (2, 0, 1, 1, 0, 1)), ((0, 2, 3), (1, 1)),
]


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("shape,p", PAD_CASES)
def test_pad_modes_match_torch(mode, shape, p):
    x = _r(*shape)
    try:
        expected = TF.pad(torch.tensor(x), p, mode=mode)
    except (RuntimeError, NotImplementedError) as e:
        with pytest.raises(type(e)):
            F.pad(rg.tensor(x), p, mode=mode)
        return
    _compare(lambda x: F.pad(x, p, mode=mode), lambda x: TF.pad(x, p, mode=mode), [x])
    assert tuple(F.pad(rg.tensor(x), p, mode=mode).shape) == tuple(expected.shape)


@pytest.mark.parametrize("p,value", [((1, 2), None), ((1, 1, -1, 2), 2.5), ((-1, -2, 0, 1, 2, 0), -1.0),
                                     ((0, 0, 1, 1, 1, 0, 1, 1), 0.0)])
def test_pad_constant_matches_torch(p, value):
    x = _r(2, 3, 4, 3)
    _compare(lambda x: F.pad(x, p, value=value), lambda x: TF.pad(x, p, value=value), [x])
    xi = np.arange(6).reshape(2, 3)
    np.testing.assert_array_equal(np.asarray(F.pad(rg.tensor(xi), (1, 1), value=2.5)),
                                  TF.pad(torch.tensor(xi), (1, 1), value=2.5).numpy())


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad_second_derivatives(mode):
    _checks(lambda x: F.pad(x, (2, 1, 1, -1), mode=mode) ** 2, [_r(2, 3, 4)])


def test_pad_returns_a_copy_when_nothing_changes():
    x = rg.tensor(_r(2, 3))
    for mode in ("constant", "reflect"):
        y = F.pad(x, (0, 0), mode=mode)
        assert y is not x and np.array_equal(np.asarray(y), np.asarray(x))


def test_pad_errors_like_torch():
    x = rg.tensor(_r(1, 2, 3))
    with pytest.raises(NotImplementedError, match="Unrecognised padding mode foo"):
        F.pad(x, (1, 1), mode="foo")
    with pytest.raises(RuntimeError, match="doesn't take in value argument"):
        F.pad(x, (1, 1), mode="reflect", value=2)
    with pytest.raises(RuntimeError, match="Padding length must be divisible by 2"):
        F.pad(x, (1,))
    with pytest.raises(RuntimeError, match="Padding length should be less than or equal to two times"):
        F.pad(x, (1,) * 8)
    with pytest.raises(NotImplementedError, match="Padding size 6 is not supported for 3D input tensor"):
        F.pad(x, (1,) * 6, mode="replicate")
    with pytest.raises(NotImplementedError, match="Padding size 2 is not supported for 1D input tensor"):
        F.pad(rg.ones(3), (1, 1), mode="reflect")
    with pytest.raises(RuntimeError, match="Padding size should be less than the corresponding input dimension"):
        F.pad(x, (3, 1), mode="reflect")
    with pytest.raises(RuntimeError, match="wrapping around more than once"):
        F.pad(x, (4, 0), mode="circular")
    with pytest.raises(RuntimeError, match="wrapping around more than once"):
        F.pad(x, (-3, 1), mode="circular")      # torch reads uninitialised memory here
    with pytest.raises(RuntimeError, match="non-zero dimensions"):
        F.pad(rg.ones(2, 0, 3), (1, 1), mode="replicate")
    with pytest.raises(TypeError, match="must be tuple of ints"):
        F.pad(x, 1)
    with pytest.raises(TypeError, match="pos 0"):
        F.pad(x, (1.5, 1))


# --- one_hot ----------------------------------------------------------------------------------

@pytest.mark.parametrize("idx,n", [([0, 2, 1], -1), ([[0, 3], [1, 1]], 5), (2, 4), ([], 3)])
def test_one_hot_matches_torch(idx, n):
    a = np.array(idx, dtype=np.int64)
    r = F.one_hot(rg.tensor(a), n)
    t = TF.one_hot(torch.tensor(a), n)
    assert r.dtype == np.int64 and not r.requires_grad
    np.testing.assert_array_equal(np.asarray(r), t.numpy())


def test_one_hot_errors_like_torch():
    with pytest.raises(RuntimeError, match="only applicable to index tensor of type LongTensor"):
        F.one_hot(rg.tensor([0, 1], dtype=rg.int32))
    with pytest.raises(RuntimeError, match="only applicable to index tensor of type LongTensor"):
        F.one_hot(rg.tensor([0.0, 1.0]))
    with pytest.raises(RuntimeError, match="Class values must be non-negative"):
        F.one_hot(rg.tensor([-1, 2]))
    with pytest.raises(RuntimeError, match="Class values must be smaller than num_classes"):
        F.one_hot(rg.tensor([0, 3]), 3)
    with pytest.raises(RuntimeError, match="Can not infer total number of classes from empty tensor"):
        F.one_hot(rg.tensor(np.array([], dtype=np.int64)))


# --- l1_loss and huber_loss --------------------------------------------------------------------

@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_l1_loss_matches_torch(reduction, weighted):
    x, y, w = _r(3, 4), _r(3, 4), np.abs(_r(3, 4))
    x[0, 0] = y[0, 0]                                         # |d| at its kink: gradient 0, as torch
    kw = {"reduction": reduction}
    if weighted:
        _compare(lambda x, y, w: F.l1_loss(x, y, weight=w, **kw), lambda x, y, w: TF.l1_loss(x, y, weight=w, **kw),
                 [x, y, w])
    else:
        _compare(lambda x, y: F.l1_loss(x, y, **kw), lambda x, y: TF.l1_loss(x, y, **kw), [x, y])
    _checks(lambda x, y: F.l1_loss(x, y, **kw), [_r(2, 3), _r(2, 3)])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("delta", [1.0, 0.3, 2.0])
def test_huber_loss_matches_torch(reduction, delta):
    x, y, w = _r(4, 5) * 2, _r(4, 5), np.abs(_r(4, 5))
    x[0, 0], x[0, 1], x[0, 2] = y[0, 0], y[0, 1] + delta, y[0, 2] - delta    # at 0 and at +-delta
    kw = {"reduction": reduction, "delta": delta}
    _compare(lambda x, y: F.huber_loss(x, y, **kw), lambda x, y: TF.huber_loss(x, y, **kw), [x, y])
    _compare(lambda x, y, w: F.huber_loss(x, y, weight=w, **kw),
             lambda x, y, w: TF.huber_loss(x, y, weight=w, **kw), [x, y, w])
    _checks(lambda x, y: F.huber_loss(x, y, **kw), [_r(2, 3) * 2, _r(2, 3)])


def test_pointwise_loss_errors_and_warnings_like_torch():
    with pytest.raises(RuntimeError, match="huber_loss does not support non-positive values for delta"):
        F.huber_loss(rg.ones(3), rg.zeros(3), delta=0.0)
    with pytest.raises(ValueError, match="foo is not a valid value for reduction"):
        F.l1_loss(rg.ones(3), rg.zeros(3), reduction="foo")
    with pytest.raises(ValueError, match="Weights and input must have the same size"):
        F.l1_loss(rg.ones(3), rg.zeros(3), weight=rg.ones(2))
    with pytest.warns(UserWarning, match="Using a target size"):
        F.huber_loss(rg.ones(3, 1), rg.zeros(3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.l1_loss(rg.ones(3), rg.zeros(3))
    with pytest.raises(RuntimeError, match="could not infer output dtype"):
        F.l1_loss(rg.tensor([1, 2]), rg.tensor([0, 0]))
    np.testing.assert_array_equal(np.asarray(F.l1_loss(rg.tensor([1, -2]), rg.tensor([0, 0]), reduction="sum")), 3)
    # the legacy size_average/reduce arguments
    assert float(F.l1_loss(rg.ones(4), rg.zeros(4), size_average=False)) == 4.0


def test_mse_loss_weight_matches_torch():
    x, y, w = _r(3, 2), _r(3, 2), np.abs(_r(3, 2))
    _compare(lambda x, y, w: F.mse_loss(x, y, weight=w), lambda x, y, w: TF.mse_loss(x, y, weight=w), [x, y, w])


# --- adaptive_avg_pool2d ----------------------------------------------------------------------

@pytest.mark.parametrize("shape,size", [((2, 3, 6, 8), (3, 4)), ((2, 3, 7, 5), (3, 2)), ((3, 5, 7), 4),
                                        ((2, 2, 5, 6), (2, None)), ((1, 2, 4, 5), 1), ((1, 2, 3, 4), (5, 7)),
                                        ((0, 2, 3, 4), 2), ((1, 2, 3, 4), 0), ((2, 3, 6, 5), (None, 3))])
def test_adaptive_avg_pool2d_matches_torch(shape, size):
    if size == 0:
        # torch's backward refuses an empty output; the values still compare
        y = F.adaptive_avg_pool2d(rg.tensor(_r(*shape)), size)
        assert tuple(y.shape) == shape[:2] + (0, 0)
        return
    _compare(lambda x: F.adaptive_avg_pool2d(x, size), lambda x: TF.adaptive_avg_pool2d(x, size), [_r(*shape)])


@pytest.mark.parametrize("size", [(2, 3), 2, (3, None)])
def test_adaptive_avg_pool2d_second_derivatives(size):
    _checks(lambda x: F.adaptive_avg_pool2d(x, size) ** 2, [_r(1, 2, 5, 4)])


def test_adaptive_avg_pool2d_float32_and_errors():
    x = rg.tensor(_r(1, 2, 5, 7), dtype=rg.float32)
    y = F.adaptive_avg_pool2d(x, 3)
    assert y.dtype == np.float32
    np.testing.assert_allclose(np.asarray(y), TF.adaptive_avg_pool2d(torch.tensor(np.asarray(x)), 3).numpy(),
                               rtol=1e-6)
    with pytest.raises(RuntimeError, match=r"Expected 3D or 4D tensor, but got \[3, 4\]"):
        F.adaptive_avg_pool2d(rg.ones(3, 4), 2)
    with pytest.raises(RuntimeError, match="output_size must be 2"):
        F.adaptive_avg_pool2d(rg.ones(1, 3, 4, 5), (2, 3, 4))
    with pytest.raises(RuntimeError, match="dimension 2 being empty"):
        F.adaptive_avg_pool2d(rg.ones(1, 3, 0, 5), 2)
    with pytest.raises(RuntimeError, match="greater than or equal to 0"):
        F.adaptive_avg_pool2d(rg.ones(1, 3, 4, 5), -1)
    with pytest.raises(NotImplementedError, match="adaptive_avg_pool2d"):
        F.adaptive_avg_pool2d(rg.tensor(np.ones((1, 1, 2, 2), dtype=np.int64)), 1)
