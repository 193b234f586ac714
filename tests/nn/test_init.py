"""rg.nn.init: fans and gains against torch's, the distributions checked
statistically on large tensors, in-place semantics (same tensor, no graph,
version bump), generators and torch's errors."""
import math
import warnings

import numpy as np
import pytest

import retrograd as rg
from _arrays import values  # noqa: E402

init = rg.nn.init
torch = pytest.importorskip("torch")
TI = torch.nn.init

SHAPES = [(3, 5), (7, 2, 3), (4, 6, 3, 2), (2, 3, 1, 1, 4)]
N = 200_000          # samples for the statistical checks: the mean's std error is std / 450


@pytest.mark.oracle
@pytest.mark.parametrize("shape", SHAPES)
def test_fans_match_torch(shape):
    assert init._calculate_fan_in_and_fan_out(rg.empty(*shape)) == TI._calculate_fan_in_and_fan_out(
        torch.empty(*shape))
    for mode in ("fan_in", "fan_out", "FAN_IN"):
        assert init._calculate_correct_fan(rg.empty(*shape), mode) == TI._calculate_correct_fan(
            torch.empty(*shape), mode)


@pytest.mark.oracle
@pytest.mark.parametrize("args", [("linear",), ("conv2d",), ("conv_transpose3d",), ("sigmoid",), ("tanh",),
                                  ("relu",), ("leaky_relu",), ("leaky_relu", 0.2), ("leaky_relu", 3),
                                  ("selu",), ("relu", 7)])
def test_gains_match_torch(args):
    assert init.calculate_gain(*args) == TI.calculate_gain(*args)


def test_gain_and_fan_errors_like_torch():
    with pytest.raises(ValueError, match="Unsupported nonlinearity foo"):
        init.calculate_gain("foo")
    with pytest.raises(ValueError, match="negative_slope True not a valid number"):
        init.calculate_gain("leaky_relu", True)
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init.xavier_uniform_(rg.empty(3))
    with pytest.raises(ValueError, match="Mode fan_x not supported"):
        init.kaiming_uniform_(rg.empty(3, 3), mode="fan_x")
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        init.eye_(rg.empty(2, 2, 2))
    with pytest.raises(ValueError, match="Only tensors with 2 or more dimensions are supported"):
        init.orthogonal_(rg.empty(3))
    with pytest.raises(NotImplementedError, match="int64"):
        init.normal_(rg.zeros(3, dtype=rg.int64))
    with pytest.raises(RuntimeError, match="from=1 > to=0"):
        init.uniform_(rg.empty(3), 1, 0)
    with pytest.raises(RuntimeError, match="std >= 0.0"):
        init.normal_(rg.empty(3), 0, -1)
    with pytest.raises(TypeError, match="np.random.Generator"):
        init.normal_(rg.empty(3), generator=torch.Generator())
    with pytest.raises(TypeError, match="retrograd Tensor"):
        init.ones_(np.zeros(3))


def _stats_uniform(t, lo, hi):
    a = values(t).ravel()
    assert a.min() >= lo and a.max() <= hi
    # close to the bounds at both ends, mean and std of U(lo, hi)
    width = hi - lo
    assert a.min() < lo + width * 1e-3 and a.max() > hi - width * 1e-3
    np.testing.assert_allclose(a.mean(), (lo + hi) / 2, atol=5 * width / math.sqrt(12 * a.size))
    np.testing.assert_allclose(a.std(), width / math.sqrt(12), rtol=0.01)


def _stats_normal(t, mean, std):
    a = values(t).ravel()
    np.testing.assert_allclose(a.mean(), mean, atol=5 * std / math.sqrt(a.size))
    np.testing.assert_allclose(a.std(), std, rtol=0.01)


def test_uniform_and_normal_distributions():
    rg.manual_seed(0)
    _stats_uniform(init.uniform_(rg.empty(N), -2.0, 3.0), -2.0, 3.0)
    _stats_uniform(init.uniform_(rg.empty(N)), 0.0, 1.0)
    _stats_normal(init.normal_(rg.empty(N), 1.5, 0.3), 1.5, 0.3)
    t = init.normal_(rg.empty(N, dtype=rg.float32), 0.0, 2.0)
    assert t.dtype == np.float32
    _stats_normal(t, 0.0, 2.0)


@pytest.mark.parametrize("mean,std,a,b", [(0.0, 1.0, -2.0, 2.0), (0.0, 0.02, -0.04, 0.04), (1.0, 1.0, 2.5, 3.0),
                                          (0.0, 1.0, -0.1, 0.2), (0.0, 1.0, 0.0, math.inf)])
def test_trunc_normal_matches_the_truncated_distribution(mean, std, a, b):
    scipy_stats = pytest.importorskip("scipy.stats")
    rg.manual_seed(1)
    t = values(init.trunc_normal_(rg.empty(N), mean, std, a, b))
    assert t.min() >= a and t.max() <= b
    dist = scipy_stats.truncnorm((a - mean) / std, (b - mean) / std, loc=mean, scale=std)
    np.testing.assert_allclose(t.mean(), dist.mean(), atol=5 * dist.std() / math.sqrt(N))
    np.testing.assert_allclose(t.std(), dist.std(), rtol=0.01)
    # the whole distribution, not just two moments
    assert scipy_stats.kstest(t[:20000], dist.cdf).pvalue > 1e-4


def test_trunc_normal_warns_and_errors():
    with pytest.warns(UserWarning, match="mean is more than 2 std from"):
        init.trunc_normal_(rg.empty(10), mean=10.0, std=1.0, a=-1.0, b=1.0)
    with pytest.raises(ValueError, match="finite bounds"):
        init.trunc_normal_(rg.empty(10), mean=0.0, std=1.0, a=1.5, b=math.inf)
    with pytest.raises(ValueError, match="a < b"):
        init.trunc_normal_(rg.empty(10), a=1.0, b=0.0)


@pytest.mark.parametrize("shape", [(300, 500), (64, 32, 3, 3)])
@pytest.mark.parametrize("gain", [1.0, 5 / 3])
def test_xavier(shape, gain):
    fan_in, fan_out = TI._calculate_fan_in_and_fan_out(torch.empty(*shape))
    std = gain * math.sqrt(2.0 / (fan_in + fan_out))
    rg.manual_seed(2)
    bound = math.sqrt(3.0) * std
    _stats_uniform(init.xavier_uniform_(rg.empty(*shape), gain), -bound, bound)
    _stats_normal(init.xavier_normal_(rg.empty(*shape), gain), 0.0, std)


@pytest.mark.parametrize("shape", [(300, 500), (64, 32, 3, 3)])
@pytest.mark.parametrize("a,mode,nonlinearity", [(0, "fan_in", "leaky_relu"), (math.sqrt(5), "fan_in", "leaky_relu"),
                                                 (0, "fan_out", "relu"), (0.2, "fan_out", "leaky_relu"),
                                                 (0, "fan_in", "tanh")])
def test_kaiming(shape, a, mode, nonlinearity):
    fan = TI._calculate_correct_fan(torch.empty(*shape), mode)
    std = TI.calculate_gain(nonlinearity, a) / math.sqrt(fan)
    rg.manual_seed(3)
    bound = math.sqrt(3.0) * std
    _stats_uniform(init.kaiming_uniform_(rg.empty(*shape), a, mode, nonlinearity), -bound, bound)
    _stats_normal(init.kaiming_normal_(rg.empty(*shape), a, mode, nonlinearity), 0.0, std)


def test_kaiming_zero_element_tensor_warns_and_is_unchanged():
    t = rg.empty(0, 3)
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        assert init.kaiming_uniform_(t) is t
    with pytest.warns(UserWarning, match="zero-element"):
        init.kaiming_normal_(t)


@pytest.mark.parametrize("shape", [(5, 5), (3, 7), (7, 3), (4, 2, 3, 3)])
@pytest.mark.parametrize("gain", [1.0, 2.0])
def test_orthogonal(shape, gain):
    w = values(init.orthogonal_(rg.empty(*shape), gain)).reshape(shape[0], -1) / gain
    rows, cols = w.shape
    if rows <= cols:
        np.testing.assert_allclose(w @ w.T, np.eye(rows), atol=1e-12)
    else:
        np.testing.assert_allclose(w.T @ w, np.eye(cols), atol=1e-12)


def test_orthogonal_is_uniform_over_signs():
    # without the sign fix from R's diagonal, numpy's QR gives a biased Q
    rg.manual_seed(4)
    diag = np.array([np.diag(values(init.orthogonal_(rg.empty(3, 3)))) for _ in range(2000)])
    np.testing.assert_allclose(diag.mean(axis=0), 0.0, atol=0.05)


def test_constants_and_eye():
    np.testing.assert_array_equal(values(init.constant_(rg.empty(2, 3), 0.25)), np.full((2, 3), 0.25))
    np.testing.assert_array_equal(values(init.ones_(rg.empty(4))), np.ones(4))
    np.testing.assert_array_equal(values(init.zeros_(rg.empty(4))), np.zeros(4))
    np.testing.assert_array_equal(values(init.eye_(rg.empty(3, 5))), np.eye(3, 5))
    np.testing.assert_array_equal(values(init.constant_(rg.empty(2, dtype=rg.int64), 3)), [3, 3])


ALL_FILLS = [
    lambda t, g: init.uniform_(t, generator=g), lambda t, g: init.normal_(t, generator=g),
    lambda t, g: init.trunc_normal_(t, generator=g), lambda t, g: init.xavier_uniform_(t, generator=g),
    lambda t, g: init.xavier_normal_(t, generator=g), lambda t, g: init.kaiming_uniform_(t, generator=g),
    lambda t, g: init.kaiming_normal_(t, generator=g), lambda t, g: init.orthogonal_(t, generator=g),
]


@pytest.mark.parametrize("fill", ALL_FILLS)
def test_in_place_no_grad_and_generators(fill):
    p = rg.nn.Parameter(rg.zeros(6, 4))
    v = p._version
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = fill(p, np.random.default_rng(5))
    assert out is p and p.requires_grad and p.is_leaf and p.grad_fn is None and p._version > v
    assert isinstance(p, rg.nn.Parameter)
    # the same generator seed gives the same values; the global generator too
    np.testing.assert_array_equal(values(fill(rg.zeros(6, 4), np.random.default_rng(5))), values(p))
    rg.manual_seed(7)
    a = values(fill(rg.zeros(6, 4), None))
    rg.manual_seed(7)
    np.testing.assert_array_equal(values(fill(rg.zeros(6, 4), None)), a)
    t32 = fill(rg.zeros(6, 4, dtype=rg.float32), None)
    assert t32.dtype == np.float32
