"""dropout1d/2d/3d, alpha_dropout, feature_alpha_dropout and their layers:
the statistics of the masks (whole channels, scaling, alpha dropout's mean and
variance), eval-mode identity, gradients through the mask, in-place forms,
torch's shape rules, warnings and errors."""
import warnings

import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")
TF = torch.nn.functional
F = rg.nn.functional

pytestmark = pytest.mark.oracle

_ALPHA = 1.7580993408473766


def _channel_const(y, lead):
    # every slice over the dims after `lead` holds one value
    a = np.asarray(y.detach()).reshape(tuple(y.shape[:lead]) + (-1,))
    return bool((a == a[..., :1]).all())


@pytest.mark.parametrize("fn,shape,lead", [
    ("dropout1d", (8, 16, 5), 2), ("dropout1d", (16, 5), 1), ("dropout2d", (8, 16, 3, 3), 2),
    ("dropout3d", (4, 16, 2, 2, 2), 2), ("dropout3d", (16, 2, 2, 2), 1)])
def test_feature_dropout_zeroes_whole_channels_and_scales(fn, shape, lead):
    rg.manual_seed(0)
    p = 0.3
    y = getattr(F, fn)(rg.ones(*shape), p=p)
    assert y.shape == shape
    vals = set(np.unique(np.asarray(y)).tolist())
    assert vals <= {0.0, 1 / (1 - p)}
    assert _channel_const(y, lead)
    # the fraction of dropped channels is about p
    dropped = (np.asarray(y).reshape(tuple(shape[:lead]) + (-1,))[..., 0] == 0).mean()
    assert abs(dropped - p) < 0.2


def test_feature_dropout_frequency_over_many_channels():
    rg.manual_seed(1)
    y = F.dropout2d(rg.ones(200, 50, 2, 2), p=0.25)
    assert _channel_const(y, 2)
    dropped = (np.asarray(y)[:, :, 0, 0] == 0).mean()
    assert abs(dropped - 0.25) < 0.02
    # the expectation is kept
    assert abs(float(y.mean()) - 1.0) < 0.03


@pytest.mark.parametrize("fn,shape", [("dropout1d", (2, 3, 4)), ("dropout2d", (2, 3, 4, 4)),
                                      ("dropout3d", (2, 3, 2, 2, 2)), ("alpha_dropout", (5, 4)),
                                      ("feature_alpha_dropout", (2, 3, 4))])
def test_eval_mode_and_p0_are_exact_identity(fn, shape):
    x = rg.randn(*shape)
    assert getattr(F, fn)(x, 0.5, False) is x
    assert getattr(F, fn)(x, 0.0, True) is x
    xt = torch.randn(*shape)
    assert getattr(TF, fn)(xt, 0.5, False) is xt


def test_unbatched_eval_is_a_new_view_as_torch():
    x = rg.randn(3, 4)
    y = F.dropout1d(x, training=False)
    assert y is not x and np.array_equal(np.asarray(y), np.asarray(x))
    assert TF.dropout1d(torch.randn(3, 4), training=False) is not None
    assert F.dropout1d(x, training=False, inplace=True) is x


@pytest.mark.parametrize("fn,shape,lead", [("dropout1d", (3, 4, 5), 2), ("dropout2d", (3, 4, 2, 2), 2),
                                           ("dropout3d", (4, 2, 2, 2), 1), ("feature_alpha_dropout", (3, 4, 5), 2),
                                           ("alpha_dropout", (3, 4), None)])
def test_gradient_flows_through_the_mask(fn, shape, lead):
    rg.manual_seed(3)
    x = rg.randn(*shape, requires_grad=True)
    y = getattr(F, fn)(x, 0.4, True)
    y.sum().backward()
    g = np.asarray(x.grad)
    out, xv = np.asarray(y.detach()), np.asarray(x.detach())
    if "alpha" in fn:
        a = 1.0 / np.sqrt((_ALPHA ** 2 * 0.4 + 1) * 0.6)
        kept = g != 0
        np.testing.assert_allclose(g[kept], a)
        np.testing.assert_allclose(out[kept], a * xv[kept] + _ALPHA * a * 0.4, rtol=1e-12)
        np.testing.assert_allclose(out[~kept], -_ALPHA * a * 0.6, rtol=1e-12)
    else:
        assert set(np.unique(g).tolist()) <= {0.0, 1 / 0.6}
        np.testing.assert_allclose(out, xv * g, rtol=1e-12)
    if lead is not None:
        assert _channel_const(rg.tensor(g), lead)
    # a second draw through the same graph pattern: gradcheck with a fixed seed
    for _ in range(2):
        def f(t):
            rg.manual_seed(7)
            return getattr(F, fn)(t, 0.4, True)
        assert rg.autograd.gradcheck(f, (rg.randn(*shape, requires_grad=True),))


def test_alpha_dropout_keeps_mean_and_variance():
    rg.manual_seed(4)
    x = rg.randn(400000)
    for p in (0.1, 0.5):
        y = F.alpha_dropout(x, p, True)
        assert abs(float(y.mean())) < 0.01
        assert abs(float(y.var()) - 1.0) < 0.01
        yt = TF.alpha_dropout(torch.tensor(np.asarray(x)), p, True)
        assert abs(float(yt.mean()) - float(y.mean())) < 0.02 and abs(float(yt.var()) - float(y.var())) < 0.02
    yf = F.feature_alpha_dropout(rg.randn(2000, 200, 1), 0.2, True)
    assert abs(float(yf.mean())) < 0.02 and abs(float(yf.var()) - 1.0) < 0.02


def test_p_one_zeroes_everything():
    x = rg.randn(2, 3, 4)
    for fn in ("dropout1d", "dropout2d", "alpha_dropout", "feature_alpha_dropout"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = getattr(F, fn)(x, 1.0, True)
            yt = getattr(TF, fn)(torch.tensor(np.asarray(x)), 1.0, True)
        np.testing.assert_array_equal(np.asarray(y), yt.numpy())


def test_inplace_forms_write_into_the_input():
    rg.manual_seed(5)
    x = rg.randn(2, 6, 4, requires_grad=True)
    h = x * 1.0
    y = F.dropout1d(h, 0.5, True, inplace=True)
    assert y is h and h._version == 1
    y.sum().backward()
    assert _channel_const(x.grad, 2)
    u = rg.ones(6, 4)
    assert F.dropout1d(u, 0.5, True, inplace=True) is u and _channel_const(u, 1)
    a = rg.randn(50, 4)
    before = np.asarray(a).copy()
    assert F.alpha_dropout(a, 0.5, True, inplace=True) is a
    assert not np.array_equal(np.asarray(a), before)
    with pytest.raises(RuntimeError, match="leaf"):
        F.dropout2d(rg.ones(1, 2, 2, 2, requires_grad=True), 0.5, True, inplace=True)


def test_shape_rules_warnings_and_errors_like_torch():
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input"):
        F.dropout1d(rg.ones(3))
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input"):
        TF.dropout1d(torch.ones(3))
    with pytest.warns(UserWarning, match="Received a 3D input to dropout2d"):
        F.dropout2d(rg.ones(2, 3, 4))
    with pytest.warns(UserWarning, match="Received a 2-D input to dropout2d"):
        F.dropout2d(rg.ones(2, 3))
    with pytest.warns(UserWarning, match="deprecated"), pytest.raises(RuntimeError, match="at least 2 dim"):
        F.dropout2d(rg.ones(3))
    with pytest.warns(UserWarning, match="Received a 3-D input to dropout3d"):
        y = F.dropout3d(rg.ones(3, 4, 5))
    assert y.shape == (3, 4, 5)
    with pytest.raises(RuntimeError, match="Feature dropout requires at least 2 dimensions"):
        F.feature_alpha_dropout(rg.ones(3), 0.5, True)
    for fn in ("dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"):
        with pytest.raises(ValueError, match="between 0 and 1, but got 1.5"):
            getattr(F, fn)(rg.ones(2, 2, 2, 2), 1.5)
        with pytest.raises(ValueError, match="between 0 and 1"):
            getattr(TF, fn)(torch.ones(2, 2, 2, 2), 1.5)
    # a 3-D input to dropout2d drops (N, C) slices, as torch
    rg.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _channel_const(F.dropout2d(rg.ones(4, 8, 5), 0.5), 2)


def test_layers_repr_modes_and_defaults():
    for name in ("Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"):
        m, mt = getattr(rg.nn, name)(0.2), getattr(torch.nn, name)(0.2)
        assert repr(m) == repr(mt)
        assert repr(getattr(rg.nn, name)(inplace=True)) == repr(getattr(torch.nn, name)(inplace=True))
        with pytest.raises(ValueError, match="between 0 and 1"):
            getattr(rg.nn, name)(-0.1)
        x = {"Dropout1d": rg.randn(2, 3, 4), "Dropout3d": rg.randn(2, 3, 2, 2, 2)}.get(name, rg.randn(2, 3, 4, 4))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert m.eval()(x) is x
            y = m.train()(x)
        assert y.shape == x.shape
    assert isinstance(rg.nn.Dropout(0.1), rg.nn.modules.dropout._DropoutNd)
    rg.manual_seed(2)
    y = rg.nn.Dropout2d(0.5)(rg.ones(4, 6, 3, 3))
    assert _channel_const(y, 2)
    # AlphaDropout ignores inplace, as torch's
    x = rg.randn(10)
    before = np.asarray(x).copy()
    rg.nn.AlphaDropout(0.5, inplace=True)(x)
    np.testing.assert_array_equal(np.asarray(x), before)


def test_dtype_is_kept():
    rg.manual_seed(0)
    x = rg.ones(2, 3, 4, dtype=rg.float32)
    for fn in ("dropout1d", "alpha_dropout", "feature_alpha_dropout"):
        assert getattr(F, fn)(x, 0.5, True).dtype == np.float32
