"""torch is silent on floating-point exceptions (log(0), 1/0, exp overflow,
sqrt(-1)); so are retrograd's ops and their gradients, with or without
anomaly mode, whatever NumPy's errstate, while the user's own NumPy calls
keep theirs."""
import warnings

import numpy as np
import pytest

import retrograd as rg
import retrograd.nn.functional as F
from _arrays import values  # noqa: E402

torch = pytest.importorskip("torch")

FORWARD = {
    "log0": lambda x: rg.log(x * 0.0),
    "log_negative": lambda x: rg.log(-x),
    "log2_0": lambda x: rg.log2(x * 0.0),
    "log10_0": lambda x: rg.log10(x * 0.0),
    "log1p_minus1": lambda x: rg.log1p(x * 0.0 - 1.0),
    "div_by_zero": lambda x: x / (x * 0.0),
    "zero_by_zero": lambda x: (x * 0.0) / (x * 0.0),
    "rdiv_by_zero": lambda x: 1.0 / (x * 0.0),
    "reciprocal0": lambda x: rg.reciprocal(x * 0.0),
    "rsqrt0": lambda x: rg.rsqrt(x * 0.0),
    "exp_overflow": lambda x: rg.exp(x * 1000.0),
    "exp2_overflow": lambda x: rg.exp2(x * 2000.0),
    "expm1_overflow": lambda x: rg.expm1(x * 1000.0),
    "sinh_overflow": lambda x: rg.sinh(x * 1000.0),
    "cosh_overflow": lambda x: rg.cosh(x * 1000.0),
    "sqrt_negative": lambda x: rg.sqrt(-x),
    "pow_negative_half": lambda x: rg.pow(-x, 0.5),
    "pow_zero_negative": lambda x: rg.pow(x * 0.0, -1.0),
    "asin_domain": lambda x: rg.asin(x * 3.0),
    "acos_domain": lambda x: rg.acos(x * 3.0),
    "floor_divide0": lambda x: rg.floor_divide(x, x * 0.0),
    "remainder0": lambda x: rg.remainder(x, x * 0.0),
    "prod_overflow": lambda x: rg.prod(x * 1e200),
    "norm_overflow": lambda x: rg.norm(x * 1e300),
    "var_single": lambda x: rg.var(x[:1], correction=0) + rg.std(x[:0], dim=0).sum(),
    "mean_empty": lambda x: rg.mean(x[:0]),
    "softplus_big": lambda x: F.softplus(x * 1000.0, beta=1000.0),
    "gelu_tanh_big": lambda x: F.gelu(x * 1e120, approximate="tanh"),
    "logsumexp_neg_inf": lambda x: rg.logsumexp(rg.log(x * 0.0), 0),
    "softmax_inf": lambda x: rg.softmax(rg.exp(x * 1000.0), 0),
    "log_softmax_inf": lambda x: F.log_softmax(rg.exp(x * 1000.0), 0),
    "sigmoid_inf": lambda x: rg.sigmoid(rg.exp(x * 1000.0)),
    "erf_inf": lambda x: rg.erf(rg.exp(x * 1000.0)),
    "lerp_inf": lambda x: rg.lerp(rg.exp(x * 1000.0), x, 0.5),
    "atan2_zero": lambda x: rg.atan2(x * 0.0, x * 0.0),
    "tan_inf": lambda x: rg.tan(rg.exp(x * 1000.0)),
    # the cheapest ops too: overflow, inf - inf, 0 * inf, sin(inf), both in
    # their C loops and (strided, broadcast) in NumPy's ufuncs
    "mul_overflow": lambda x: x * 1e308 * 10.0,
    "mul_overflow_strided": lambda x: rg.cat([x, x])[::2] * 1e308 * 10.0,
    "add_overflow_broadcast": lambda x: (x * 1e308)[:, None] + x[None, :] * 1e308,
    "inf_minus_inf": lambda x: rg.exp(x * 1000.0) - rg.exp(x * 1000.0),
    "zero_times_inf": lambda x: (x * 0.0) * rg.exp(x * 1000.0),
    "sub_overflow": lambda x: -(x * 1e308) - x * 1e308,
    "sin_inf": lambda x: rg.sin(rg.exp(x * 1000.0)),
    "cos_inf": lambda x: rg.cos(rg.exp(x * 1000.0)),
    "tanh_nan": lambda x: rg.tanh(rg.exp(x * 1000.0) - rg.exp(x * 1000.0)),
    "sum_overflow": lambda x: rg.sum(x * 1e308),
    "matmul_overflow": lambda x: (x * 1e200) @ (x * 1e200),
    "mm_overflow": lambda x: (x * 1e200)[None] @ (x * 1e200)[:, None],
    "square_overflow": lambda x: rg.square(x * 1e200),
    "cumsum_overflow": lambda x: rg.cumsum(x * 1e308, 0),
    "clamp_nan": lambda x: rg.clamp(rg.exp(x * 1000.0) - rg.exp(x * 1000.0), 0.0, 1.0),
    "float32_cast_overflow": lambda x: (x * 1e300).to(rg.float32),
}


def _x():
    return rg.tensor([1.0, 2.0, 3.0], requires_grad=True)


@pytest.fixture
def warnings_are_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # entering anomaly mode warns (as torch's does): not what is tested here
        warnings.filterwarnings("ignore", message="Anomaly Detection has been enabled")
        yield


@pytest.mark.parametrize("anomaly", [False, True], ids=["plain", "anomaly"])
@pytest.mark.parametrize("case", sorted(FORWARD))
def test_forward_and_backward_are_silent(case, anomaly, warnings_are_errors):
    x = _x()
    if anomaly:
        # check_nan off: the NaNs are the point here, not an anomaly report
        with rg.autograd.detect_anomaly(check_nan=False):
            y = FORWARD[case](x)
            y.sum().backward()
    else:
        y = FORWARD[case](x)
        y.sum().backward()
    assert x.grad is not None


@pytest.mark.parametrize("case", ["log0", "div_by_zero", "exp_overflow", "sqrt_negative"])
def test_silent_under_errstate_raise(case):
    # torch ignores NumPy's errstate; so do the ops (their errstate is theirs)
    x = _x()
    with np.errstate(all="raise"):
        FORWARD[case](x).sum().backward()
    assert x.grad is not None


def test_values_are_torch_values():
    # silence changes no value: inf, nan and -inf where torch has them
    x0 = np.array([0.0, -1.0, 1000.0])
    x, xt = rg.tensor(x0, requires_grad=True), torch.tensor(x0, requires_grad=True)
    for rf, tf in ((rg.log, torch.log), (rg.sqrt, torch.sqrt), (rg.exp, torch.exp),
                   (rg.reciprocal, torch.reciprocal)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            y = rf(x)
            (g,) = rg.autograd.grad(y.sum(), [x])
        yt = tf(xt)
        (gt,) = torch.autograd.grad(yt.sum(), [xt])
        np.testing.assert_array_equal(values(y), yt.detach().numpy())
        np.testing.assert_array_equal(values(g), gt.numpy())


def test_create_graph_and_numpy_dispatch_are_silent(warnings_are_errors):
    x = _x()
    y = np.log(x * 0.0 + x) / (x - x)               # __array_ufunc__ runs the ops
    (g,) = rg.autograd.grad(y.sum(), [x], create_graph=True)
    (gg,) = rg.autograd.grad(g.sum(), [x])
    assert gg.shape == x.shape


def test_device_worker_backward_is_silent(virtual_cpu_devices, warnings_are_errors):
    # nodes of a virtual device run on the engine's worker thread
    x = rg.tensor([0.0, 1.0], requires_grad=True)
    y = rg.log(x.to("cpu:1"))
    y.sum().backward()
    assert np.isinf(values(x.grad)[0])


def test_users_numpy_errstate_is_left_alone():
    x = _x()
    rg.log(x * 0.0).sum().backward()
    with pytest.warns(RuntimeWarning):
        np.log(np.zeros(1))
    with np.errstate(divide="raise"):
        rg.log(x * 0.0)
        with pytest.raises(FloatingPointError):
            np.log(np.zeros(1))
        assert np.geterr()["divide"] == "raise"
    assert np.geterr()["divide"] == "warn"


def test_untracked_inplace_ops_are_silent(warnings_are_errors):
    # an optimizer's update under no_grad: the in-place ufunc is a kernel too
    p = rg.tensor([1e308, 1.0, 0.0])
    with rg.no_grad():
        p.mul_(10.0)
        p.sub_(rg.tensor([np.inf, 0.0, 0.0]))
        p.div_(0.0)
    assert np.isnan(values(p)[0])


def test_silent_on_a_new_thread(warnings_are_errors):
    # each thread has its own quiet state; a fresh thread must get one too
    import threading
    errors = []

    def work():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                x = _x()
                (rg.sin(rg.exp(x * 1000.0)) + x * 1e308 * 10.0).sum().backward()
        except Exception as exc:     # noqa: BLE001 (reported below)
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_users_context_variables_are_seen_around_ops_and_in_hooks():
    # the ops' quiet state must not hide the user's own context variables,
    # neither after an op nor inside a hook that a backward runs
    import contextvars
    var = contextvars.ContextVar("user_var", default="unset")
    token = var.set("set")
    try:
        seen = []
        x = _x()
        y = rg.log(x * 0.0)
        assert var.get() == "set"
        y.register_hook(lambda g: seen.append(var.get()))
        y.sum().backward()
        assert seen == ["set"]
        assert var.get() == "set"
    finally:
        var.reset(token)


def test_users_numpy_warns_between_ops():
    # the quiet state is the op's own: the user's NumPy, right after an op
    # (also an op that ran a C loop), warns as NumPy does
    x = _x()
    x * 1e308 * 10.0
    rg.sin(rg.exp(x * 1000.0))
    with pytest.warns(RuntimeWarning):
        np.multiply(np.array([1e308]), 10.0)
    with pytest.warns(RuntimeWarning):
        np.sin(np.array([np.inf]))
