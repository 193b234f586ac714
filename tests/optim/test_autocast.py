"""rg.autocast against torch.autocast (torch 2.13, CPU): which ops cast to
the lower precision, which to float32, which keep their inputs' dtype; the
values and the gradients that reach float32 parameters; nesting, the
decorator form, per-thread state, custom_fwd/custom_bwd, and the state
functions (rg.is_autocast_enabled, rg.get_autocast_dtype, ...).
"""
from __future__ import annotations

import subprocess
import sys
import threading
import warnings

import numpy as np
import pytest

import retrograd as rg
import retrograd.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional
pytestmark = [pytest.mark.oracle, pytest.mark.float32_default]


def _pair(*shape, seed=0, dtype=np.float32):
    a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return rg.tensor(a), torch.tensor(a)


def _positive_definite(n):
    a = np.random.default_rng(3).standard_normal((n, n)).astype(np.float32)
    a = a @ a.T + n * np.eye(n, dtype=np.float32)
    return rg.tensor(a), torch.tensor(a)


# name -> (args maker, rg fn, torch fn): each op is called on float32
# inputs, and again on float16 inputs (to see the fp32 policy cast them up)
def _cases():
    x2, tx2 = _pair(3, 4)
    w2, tw2 = _pair(4, 5, seed=1)
    b3, tb3 = _pair(2, 3, 4, seed=2)
    c3, tc3 = _pair(2, 4, 5, seed=3)
    img, timg = _pair(1, 2, 5, 5, seed=4)
    ker, tker = _pair(3, 2, 3, 3, seed=5)
    kt, tkt = _pair(2, 3, 3, 3, seed=6)
    seq, tseq = _pair(1, 2, 6, seed=7)
    k1, tk1 = _pair(3, 2, 3, seed=8)
    q, tq = _pair(1, 2, 4, 8, seed=9)
    v3, tv3 = _pair(3, 5, seed=10)
    y3, ty3 = _pair(3, 5, seed=11)
    lbl, tlbl = rg.tensor(np.array([1, 0, 4])), torch.tensor(np.array([1, 0, 4]))
    pd, tpd = _positive_definite(3)
    bias, tbias = _pair(5, seed=12)
    pw, tpw = rg.tensor(np.full(2, 0.25, np.float32)), torch.tensor(np.full(2, 0.25, np.float32))
    return {
        "mm": ((x2, w2), (tx2, tw2), rg.mm, torch.mm),
        "matmul": ((x2, w2), (tx2, tw2), rg.matmul, torch.matmul),
        "bmm": ((b3, c3), (tb3, tc3), rg.bmm, torch.bmm),
        "addmm": ((bias, x2, w2), (tbias, tx2, tw2), rg.addmm, torch.addmm),
        "baddbmm": ((rg.zeros(2, 3, 5), b3, c3), (torch.zeros(2, 3, 5), tb3, tc3), rg.baddbmm, torch.baddbmm),
        "linear": ((x2, w2.T, bias), (tx2, tw2.T, tbias), F.linear, TF.linear),
        "conv1d": ((seq, k1), (tseq, tk1), F.conv1d, TF.conv1d),
        "conv2d": ((img, ker), (timg, tker), F.conv2d, TF.conv2d),
        "conv_transpose2d": ((img, kt), (timg, tkt), F.conv_transpose2d, TF.conv_transpose2d),
        "prelu": ((img, pw), (timg, tpw), F.prelu, TF.prelu),
        "scaled_dot_product_attention": ((q, q, q), (tq, tq, tq), F.scaled_dot_product_attention,
                                         TF.scaled_dot_product_attention),
        "mse_loss": ((v3, y3), (tv3, ty3), F.mse_loss, TF.mse_loss),
        "l1_loss": ((v3, y3), (tv3, ty3), F.l1_loss, TF.l1_loss),
        "smooth_l1_loss": ((v3, y3), (tv3, ty3), F.smooth_l1_loss, TF.smooth_l1_loss),
        "cross_entropy": ((v3, lbl), (tv3, tlbl), F.cross_entropy, TF.cross_entropy),
        "kl_div": ((v3, y3, None, None, "batchmean"), (tv3, ty3, None, None, "batchmean"), F.kl_div, TF.kl_div),
        "bce_with_logits": ((v3, y3.sigmoid()), (tv3, ty3.sigmoid()), F.binary_cross_entropy_with_logits,
                            TF.binary_cross_entropy_with_logits),
        "prod": ((v3,), (tv3,), rg.prod, torch.prod),
        "cdist": ((v3, y3), (tv3, ty3), rg.cdist, torch.cdist),
        "inverse": ((pd,), (tpd,), rg.inverse, torch.inverse),
        "cholesky": ((pd,), (tpd,), rg.linalg.cholesky, torch.linalg.cholesky),
        "trace": ((x2,), (tx2,), rg.trace, torch.trace),
        # unlisted on the CPU: the inputs' dtype
        "exp": ((v3,), (tv3,), rg.exp, torch.exp),
        "softmax": ((v3, 1), (tv3, 1), rg.softmax, torch.softmax),
        "sum": ((v3,), (tv3,), rg.sum, torch.sum),
        "relu": ((v3,), (tv3,), F.relu, TF.relu),
        "add": ((v3, y3), (tv3, ty3), rg.add, torch.add),
    }


def _half(args, lib):
    f16 = rg.float16 if lib is rg else torch.float16
    return tuple(a.to(f16) if hasattr(a, "dtype") and a.dtype in (np.float32, torch.float32) else a
                 for a in args)


def _dtype_name(t):
    return str(t.dtype).replace("torch.", "")


@pytest.mark.parametrize("name", sorted(_cases()))
@pytest.mark.parametrize("inputs", ["float32", "float16"])
def test_each_listed_op_casts_as_torch(name, inputs):
    args, targs, fn, tfn = _cases()[name]
    if inputs == "float16":
        args, targs = _half(args, rg), _half(targs, torch)
    with rg.autocast("cpu", dtype=rg.float16):
        out = fn(*args)
    with torch.autocast("cpu", dtype=torch.float16):
        tout = tfn(*targs)
    out = out[0] if isinstance(out, tuple) else out
    tout = tout[0] if isinstance(tout, tuple) else tout
    assert _dtype_name(out) == _dtype_name(tout), (name, inputs)
    tol = 2e-3 if _dtype_name(out) == "float16" or inputs == "float16" else 1e-5
    np.testing.assert_allclose(out.detach().numpy().astype(np.float64),
                               tout.detach().float().numpy().astype(np.float64), rtol=tol, atol=tol)


def test_gradients_reach_float32_parameters_as_torch():
    x, tx = _pair(4, 3)
    w0 = np.random.default_rng(1).standard_normal((5, 3)).astype(np.float32)
    b0 = np.zeros(5, np.float32)
    lin, tlin = rg.nn.Linear(3, 5), torch.nn.Linear(3, 5)
    with rg.no_grad():
        lin.weight.copy_(rg.tensor(w0))
        lin.bias.copy_(rg.tensor(b0))
    with torch.no_grad():
        tlin.weight.copy_(torch.tensor(w0))
        tlin.bias.copy_(torch.tensor(b0))
    with rg.autocast("cpu", dtype=rg.float16):
        h = lin(x)
        loss = F.mse_loss(h.relu(), rg.ones(4, 5))
    with torch.autocast("cpu", dtype=torch.float16):
        th = tlin(tx)
        tloss = TF.mse_loss(th.relu(), torch.ones(4, 5))
    assert h.dtype == np.float16 and th.dtype == torch.float16
    assert loss.dtype == np.float32 and tloss.dtype == torch.float32
    loss.backward()
    tloss.backward()
    assert lin.weight.grad.dtype == np.float32 and lin.bias.grad.dtype == np.float32
    np.testing.assert_allclose(loss.item(), tloss.item(), rtol=1e-3)
    np.testing.assert_allclose(lin.weight.grad.numpy(), tlin.weight.grad.numpy(), rtol=5e-3, atol=5e-3)
    np.testing.assert_allclose(lin.bias.grad.numpy(), tlin.bias.grad.numpy(), rtol=5e-3, atol=5e-3)


def test_float64_and_integer_tensors_are_never_cast():
    a = rg.ones(2, 3, dtype=rg.float64)
    with rg.autocast("cpu", dtype=rg.float16):
        assert (a @ a.T).dtype == np.float64
        assert F.mse_loss(a, a).dtype == np.float64
        i = rg.ones(2, 2, dtype=rg.int64)
        assert (i @ i).dtype == np.int64


def test_regions_nest_and_restore_the_state():
    a = rg.ones(2, 2)
    assert not rg.is_autocast_enabled("cpu")
    with rg.autocast("cpu", dtype=rg.float16):
        assert rg.is_autocast_enabled("cpu") and rg.get_autocast_dtype("cpu") == np.float16
        with rg.autocast("cpu", enabled=False):
            assert not rg.is_autocast_enabled("cpu")
            assert (a @ a).dtype == np.float32
        assert (a @ a).dtype == np.float16
        with pytest.raises(ZeroDivisionError):
            with rg.autocast("cpu", enabled=False):
                1 / 0
        assert rg.is_autocast_enabled("cpu")
    assert not rg.is_autocast_enabled("cpu")
    assert (a @ a).dtype == np.float32
    assert not rg.is_autocast_enabled("cuda")       # the other device type is untouched


def test_decorator_form():
    @rg.autocast("cpu", dtype=rg.float16)
    def f(x):
        return x @ x
    assert f(rg.ones(2, 2)).dtype == np.float16
    assert not rg.is_autocast_enabled("cpu")


def test_state_is_per_thread():
    seen = []
    with rg.autocast("cpu", dtype=rg.float16):
        t = threading.Thread(target=lambda: seen.append((rg.is_autocast_enabled("cpu"),
                                                          (rg.ones(2, 2) @ rg.ones(2, 2)).dtype)))
        t.start()
        t.join()
    assert seen == [(False, np.float32)]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_an_unsupported_dtype_disables_the_region_with_torchs_warning(dtype):
    with pytest.warns(UserWarning, match="target dtype is not supported"):
        ctx = rg.autocast("cpu", dtype=getattr(rg, dtype))
    with ctx:
        assert not rg.is_autocast_enabled("cpu")
        assert (rg.ones(2, 2) @ rg.ones(2, 2)).dtype == np.float32
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.autocast("cpu", dtype=getattr(torch, dtype)):
            assert not torch.is_autocast_enabled("cpu")


def test_bad_device_type():
    with pytest.raises(RuntimeError, match="unsupported autocast device_type"):
        rg.autocast("tpu")
    with pytest.raises(ValueError, match="device_type"):
        rg.autocast(3)


def test_state_functions_as_torch():
    for name in ("is_autocast_enabled", "set_autocast_enabled", "get_autocast_dtype", "set_autocast_dtype",
                 "is_autocast_cache_enabled", "set_autocast_cache_enabled", "clear_autocast_cache",
                 "autocast_increment_nesting", "autocast_decrement_nesting", "is_autocast_cpu_enabled",
                 "set_autocast_cpu_enabled", "get_autocast_cpu_dtype", "set_autocast_cpu_dtype",
                 "get_autocast_gpu_dtype", "set_autocast_gpu_dtype"):
        assert callable(getattr(torch, name)) and callable(getattr(rg, name)), name
    assert rg.is_autocast_enabled() == torch.is_autocast_enabled() is False
    assert rg.autocast_increment_nesting() == torch.autocast_increment_nesting() == 1
    assert rg.autocast_decrement_nesting() == torch.autocast_decrement_nesting() == 0
    assert str(rg.get_autocast_dtype("cuda")) == _dtype_name(torch.ones(1, dtype=torch.get_autocast_dtype("cuda")))
    prev = rg.get_autocast_dtype("cpu")
    rg.set_autocast_dtype("cpu", rg.float16)
    try:
        rg.set_autocast_enabled("cpu", True)
        assert (rg.ones(2, 2) @ rg.ones(2, 2)).dtype == np.float16
        rg.set_autocast_enabled("cpu", False)
        assert (rg.ones(2, 2) @ rg.ones(2, 2)).dtype == np.float32
    finally:
        rg.set_autocast_enabled("cpu", False)
        if prev is not None:
            rg.set_autocast_dtype("cpu", prev)
    with pytest.raises(ValueError, match="float16 or bfloat16"):
        rg.set_autocast_dtype("cpu", rg.float32)
    with pytest.raises(RuntimeError, match="device_type"):
        rg.is_autocast_enabled("tpu")


def test_custom_fwd_and_bwd():
    class Mul(rg.autograd.Function):
        @staticmethod
        @rg.amp.custom_fwd(device_type="cpu", cast_inputs=rg.float32)
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            ctx.inner_enabled = rg.is_autocast_enabled("cpu")
            return a @ b

        @staticmethod
        @rg.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return g @ b.T, a.T @ g

    a = rg.ones(2, 3, dtype=rg.float16, requires_grad=True)
    b = rg.ones(3, 2, requires_grad=True)
    with rg.autocast("cpu", dtype=rg.float16):
        y = Mul.apply(a, b)
    assert y.dtype == np.float32 and y.grad_fn is not None
    y.sum().backward()
    assert a.grad.dtype == np.float16 and b.grad.dtype == np.float32
    np.testing.assert_allclose(b.grad.numpy(), np.full((3, 2), 2.0))
    with pytest.raises(ValueError, match="device_type"):
        rg.amp.custom_fwd(device_type=None)


def test_bfloat16_needs_ml_dtypes():
    # without ml_dtypes, entering a bfloat16 region says what to install
    code = ("import sys; sys.modules['ml_dtypes'] = None\n"
            "import retrograd as rg\n"
            "try:\n"
            "    with rg.autocast('cpu'):\n"
            "        pass\n"
            "except AttributeError as e:\n"
            "    print('refused:', e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "refused:" in out.stdout and "ml_dtypes" in out.stdout, out.stdout + out.stderr
