"""rrelu / rrelu_ / RReLU, gumbel_softmax, channel_shuffle / ChannelShuffle,
Softmax2d and the in-place activations celu_, selu_, hardtanh_, threshold_
(and inplace=True of the activations that take it): values and gradients
against torch (float64), the random parts by their statistics, torch's errors."""
import warnings

import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")
TF = torch.nn.functional
F = rg.nn.functional

pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(41)


def _pair(*shape):
    a = RNG.standard_normal(shape)
    return rg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


def _close(r, t, rtol=1e-12, atol=1e-13):
    np.testing.assert_allclose(np.asarray(r.detach()), t.detach().numpy(), rtol=rtol, atol=atol)


# --- rrelu ---------------------------------------------------------------------------------

def test_rrelu_eval_is_leaky_relu_with_the_mean_slope():
    x, xt = _pair(3, 5)
    y, yt = F.rrelu(x, 0.1, 0.4), TF.rrelu(xt, 0.1, 0.4)
    _close(y, yt)
    g = RNG.standard_normal((3, 5))
    y.backward(rg.tensor(g))
    yt.backward(torch.tensor(g))
    _close(x.grad, xt.grad)
    m, mt = rg.nn.RReLU(0.2, 0.3).eval(), torch.nn.RReLU(0.2, 0.3).eval()
    _close(m(x), mt(xt))
    assert repr(m) == repr(mt) and repr(rg.nn.RReLU(inplace=True)) == repr(torch.nn.RReLU(inplace=True))
    assert repr(rg.nn.RReLU()) == repr(torch.nn.RReLU())


def test_rrelu_training_slopes_are_uniform_and_are_the_gradient():
    rg.manual_seed(0)
    x = rg.tensor(-np.abs(RNG.standard_normal(20000)) - 0.1, requires_grad=True)
    y = F.rrelu(x, 0.1, 0.5, training=True)
    slope = np.asarray(y.detach()) / np.asarray(x.detach())
    assert slope.min() >= 0.1 and slope.max() <= 0.5
    assert abs(slope.mean() - 0.3) < 0.01 and abs(slope.var() - 0.4 ** 2 / 12) < 0.002
    y.sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad), slope, rtol=1e-12)
    # positive inputs pass with slope 1, zero gets a random slope's gradient (as torch)
    z = rg.tensor([2.0, 0.0], requires_grad=True)
    F.rrelu(z, 0.1, 0.5, training=True).sum().backward()
    zt = torch.tensor([2.0, 0.0], requires_grad=True)
    TF.rrelu(zt, 0.1, 0.5, training=True).sum().backward()
    assert z.grad[0] == 1 and 0.1 <= float(z.grad[1]) <= 0.5 and 0.1 <= float(zt.grad[1]) <= 0.5
    # a module in training mode draws new slopes
    m = rg.nn.RReLU()
    assert not np.array_equal(np.asarray(m(-rg.ones(50))), np.asarray(m(-rg.ones(50))))


def test_rrelu_gradcheck_with_fixed_noise():
    def f(t):
        rg.manual_seed(3)
        return F.rrelu(t, 0.1, 0.3, training=True)
    assert rg.autograd.gradcheck(f, (rg.tensor(RNG.standard_normal(6) + 0.05, requires_grad=True),))


def test_rrelu_inplace_and_errors():
    x, xt = _pair(4)
    h, ht = x * 1.0, xt * 1.0
    assert F.rrelu(h, inplace=True) is h and h._version == 1
    TF.rrelu(ht, inplace=True)
    _close(h, ht)
    h.sum().backward()
    ht.sum().backward()
    _close(x.grad, xt.grad)
    u = rg.tensor([-1.0, 1.0])
    assert F.rrelu_(u, 0.2, 0.4) is u
    _close(u, TF.rrelu_(torch.tensor([-1.0, 1.0], dtype=torch.float64), 0.2, 0.4))
    for training in (False, True):
        with pytest.raises(RuntimeError, match="Lower bound should be less than or equal to the upper bound"):
            F.rrelu(rg.ones(2), 0.5, 0.1, training)
        with pytest.raises(RuntimeError, match="Lower bound should be less than or equal"):
            TF.rrelu(torch.ones(2), 0.5, 0.1, training)
        with pytest.raises(NotImplementedError, match="not implemented for int64"):
            F.rrelu(rg.tensor([1, 2]), training=training)
    with pytest.raises(RuntimeError, match="leaf"):
        F.rrelu(rg.ones(2, requires_grad=True), inplace=True)


# --- in-place activations ----------------------------------------------------------------------

@pytest.mark.parametrize("name,args", [("celu", (0.7,)), ("selu", ()), ("hardtanh", (-0.5, 0.8)),
                                       ("threshold", (0.1, -2.0))])
def test_inplace_underscore_forms_match_torch(name, args):
    x, xt = _pair(3, 4)
    h, ht = x * 2, xt * 2
    y = getattr(F, name + "_")(h, *args)
    yt = getattr(TF, name + "_")(ht, *args)
    assert y is h and h._version == 1
    # (torch's celu kernel rounds 1 / alpha to float32)
    tol = 1e-7 if name == "celu" else 1e-12
    _close(y, yt, rtol=tol)
    (y * y).sum().backward()
    (yt * yt).sum().backward()
    _close(x.grad, xt.grad, rtol=tol)
    with pytest.raises(RuntimeError, match="leaf"):
        getattr(F, name + "_")(rg.ones(2, requires_grad=True), *args)


@pytest.mark.parametrize("name", ["hardtanh", "relu6", "hardsigmoid", "hardswish", "mish", "selu", "celu"])
def test_inplace_flag_of_activations_matches_torch(name):
    x, xt = _pair(3, 4)
    h, ht = x * 4, xt * 4
    y = getattr(F, name)(h, inplace=True)
    yt = getattr(TF, name)(ht, inplace=True)
    assert y is h and h._version == 1
    # (torch's hardsigmoid and celu kernels use float32 constants: 1/6, 1/alpha)
    tol = 1e-7 if name in ("hardsigmoid", "celu") else 1e-12
    _close(y, yt, rtol=tol)
    y.sum().backward()
    yt.sum().backward()
    _close(x.grad, xt.grad, rtol=tol)


# --- gumbel_softmax -------------------------------------------------------------------------------

def test_gumbel_softmax_soft_samples_and_their_distribution():
    rg.manual_seed(1)
    logits = rg.tensor(np.log([[0.2, 0.5, 0.3]]).repeat(20000, 0))
    y = F.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(np.asarray(y.sum(-1)), 1.0, rtol=1e-12)
    # the argmax of a Gumbel-perturbed logit vector is a sample of the categorical
    freq = np.bincount(np.asarray(y.argmax(-1)), minlength=3) / 20000
    np.testing.assert_allclose(freq, [0.2, 0.5, 0.3], atol=0.015)
    yh = F.gumbel_softmax(logits, hard=True)
    assert set(np.unique(np.asarray(yh)).tolist()) == {0.0, 1.0}
    np.testing.assert_array_equal(np.asarray(yh.sum(-1)), 1.0)
    freq = np.asarray(yh).mean(0)
    np.testing.assert_allclose(freq, [0.2, 0.5, 0.3], atol=0.015)


def test_gumbel_softmax_gradient_is_the_soft_sample_s():
    # with the noise fixed by the seed, hard=True has the soft sample's gradient
    a = RNG.standard_normal((4, 5))
    w = RNG.standard_normal((4, 5))
    grads = []
    for hard in (False, True):
        x = rg.tensor(a, requires_grad=True)
        rg.manual_seed(9)
        y = F.gumbel_softmax(x, tau=0.7, hard=hard, dim=0)
        (y * rg.tensor(w)).sum().backward()
        grads.append(np.asarray(x.grad))
        if hard:
            # the one-hot sits at the soft sample's argmax along dim 0
            rg.manual_seed(9)
            ys = F.gumbel_softmax(rg.tensor(a), tau=0.7, dim=0)
            np.testing.assert_array_equal(np.asarray(y.detach()).argmax(0), np.asarray(ys).argmax(0))
            np.testing.assert_allclose(np.asarray(y.detach()).sum(0), 1.0)
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-10, atol=1e-12)
    # the soft sample's gradient is softmax's at (logits + g) / tau
    rg.manual_seed(9)
    y = F.gumbel_softmax(rg.tensor(a), tau=0.7, dim=0)
    s = np.asarray(y)
    v = w - (s * w).sum(0, keepdims=True)
    np.testing.assert_allclose(grads[0], s * v / 0.7, rtol=1e-10, atol=1e-12)

    def f(t):
        rg.manual_seed(2)
        return F.gumbel_softmax(t, tau=1.3)
    assert rg.autograd.gradcheck(f, (rg.tensor(RNG.standard_normal((2, 3)), requires_grad=True),))


def test_gumbel_softmax_eps_warns_like_torch():
    with pytest.warns(UserWarning, match="`eps` parameter is deprecated"):
        F.gumbel_softmax(rg.zeros(3), eps=1e-5)
    with pytest.warns(UserWarning, match="`eps` parameter is deprecated"):
        TF.gumbel_softmax(torch.zeros(3), eps=1e-5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.gumbel_softmax(rg.zeros(3))


# --- channel shuffle and Softmax2d ---------------------------------------------------------------------

@pytest.mark.parametrize("shape,groups", [((2, 6, 3), 2), ((2, 6, 3, 2), 3), ((1, 4, 2, 2, 2), 4), ((3, 5, 2), 1)])
def test_channel_shuffle_matches_torch(shape, groups):
    x, xt = _pair(*shape)
    for fn in ("channel_shuffle", "native_channel_shuffle"):
        y, yt = getattr(F, fn)(x, groups), getattr(TF, fn)(xt, groups)
        _close(y, yt, rtol=0, atol=0)
    m, mt = rg.nn.ChannelShuffle(groups), torch.nn.ChannelShuffle(groups)
    assert repr(m) == repr(mt)
    g = RNG.standard_normal(shape)
    m(x).backward(rg.tensor(g))
    mt(xt).backward(torch.tensor(g))
    _close(x.grad, xt.grad, rtol=0, atol=0)
    assert F.channel_shuffle(rg.tensor([[[1], [2]]]), 2).dtype == np.int64


def test_channel_shuffle_errors_like_torch():
    cases = [((4,), 2, "channel_shuffle expects input with > 2 dims, but got input with sizes \\[4\\]"),
             ((2, 3), 3, "> 2 dims"),
             ((2, 3, 4), 0, "Number of groups to divide channels in must be positive. Value of groups:0"),
             ((2, 3, 4), 2, "Number of channels must be divisible by groups. Got 3 channels and 2 groups.")]
    for shape, groups, msg in cases:
        for fn in ("channel_shuffle", "native_channel_shuffle"):
            with pytest.raises(RuntimeError, match=msg):
                getattr(F, fn)(rg.ones(*shape), groups)
            with pytest.raises(RuntimeError, match=msg):
                getattr(TF, fn)(torch.ones(*shape), groups)
    with pytest.raises(TypeError):
        F.channel_shuffle([[1.0]], 1)


def test_softmax2d_matches_torch():
    for shape in ((2, 3, 4, 5), (3, 4, 5)):
        x, xt = _pair(*shape)
        m, mt = rg.nn.Softmax2d(), torch.nn.Softmax2d()
        y, yt = m(x), mt(xt)
        _close(y, yt)
        g = RNG.standard_normal(shape)
        y.backward(rg.tensor(g))
        yt.backward(torch.tensor(g))
        _close(x.grad, xt.grad)
    assert repr(rg.nn.Softmax2d()) == repr(torch.nn.Softmax2d())
    with pytest.raises(ValueError, match="Softmax2d: expected input to be 3D or 4D, got 2D instead"):
        rg.nn.Softmax2d()(rg.ones(2, 3))
