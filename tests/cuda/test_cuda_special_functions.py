"""torch's special functions on CUDA (lgamma, digamma, polygamma, mvlgamma, i0,
igamma, igammac): their kernels call cupyx.scipy.special on device arrays;
values and gradients stay on the device, in the input's dtype, and agree with
the CPU's C loops (which follow torch's algorithms; CuPy's are Cephes's and
SciPy's, so the two agree to rounding away from the poles)."""
import numpy as np
import pytest

from _cuda import assert_on_cuda, host, require_cuda

cp = require_cuda()

import retrograd as rg  # noqa: E402

X = np.array([[0.3, 1.7, 4.2], [-1.6, -2.3, 9.5]])
A = np.array([[0.5, 1.0, 2.0], [3.5, 7.0, 0.2]])

CASES = {
    "lgamma": lambda x: rg.lgamma(x),
    "digamma": lambda x: rg.digamma(x),
    "polygamma0": lambda x: rg.polygamma(0, x),
    "polygamma1": lambda x: rg.polygamma(1, x),
    "polygamma3": lambda x: x.polygamma(3),
    "mvlgamma": lambda x: rg.mvlgamma(x.abs() + 1.5, 3),
    "i0": lambda x: rg.i0(x),
    "igamma": lambda x: rg.igamma(rg.tensor(A, device=x.device, dtype=x.dtype), x.abs()),
    "igammac": lambda x: rg.igammac(rg.tensor(A, device=x.device, dtype=x.dtype), x.abs()),
}


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_values_and_gradients_on_device(case, dtype):
    fn = CASES[case]
    x = X.astype(dtype)
    xc = rg.tensor(x, requires_grad=True)
    xg = rg.tensor(x, device="cuda", requires_grad=True)
    out_c, out_g = fn(xc), fn(xg)
    assert_on_cuda(out_g, f"{case}'s result")
    assert out_g.dtype == out_c.dtype == dtype
    # (trigamma: torch's short asymptotic series on the CPU, within 5e-10 of
    # the exact value; CuPy's Hurwitz zeta on the device)
    rtol = (1e-9 if case == "polygamma1" else 1e-11) if dtype == np.float64 else 2e-5
    np.testing.assert_allclose(host(out_g), host(out_c), rtol=rtol, atol=1e-300 if dtype == np.float64 else 1e-6)
    v = np.linspace(-1.0, 1.0, x.size).reshape(x.shape).astype(dtype)
    g_c, = rg.autograd.grad(out_c, xc, grad_outputs=rg.tensor(v))
    g_g, = rg.autograd.grad(out_g, xg, grad_outputs=rg.tensor(v, device="cuda"))
    assert_on_cuda(g_g, f"{case}'s gradient")
    assert g_g.dtype == dtype
    # (trigamma again in digamma's derivative and polygamma(0)'s)
    np.testing.assert_allclose(host(g_g), host(g_c), rtol=1e-9 if dtype == np.float64 else 1e-4, atol=1e-6)


def test_inplace_on_device():
    t = rg.tensor(X, device="cuda")
    t.lgamma_()
    assert_on_cuda(t)
    np.testing.assert_allclose(host(t), host(rg.lgamma(rg.tensor(X))), rtol=1e-12)
    u = rg.tensor(np.abs(X) + 0.1, device="cuda")
    u.polygamma_(2)
    np.testing.assert_allclose(host(u), host(rg.polygamma(2, rg.tensor(np.abs(X) + 0.1))), rtol=1e-11)
    w = rg.tensor(X, device="cuda")
    assert rg.i0_(w) is w
    np.testing.assert_allclose(host(w), host(rg.i0(rg.tensor(X))), rtol=1e-12)


def test_igamma_with_a_python_number_on_device():
    a = rg.tensor(A.astype(np.float32), device="cuda")
    out = rg.igammac(a, 2.0)
    assert_on_cuda(out)
    assert out.dtype == np.float32
    np.testing.assert_allclose(host(out), host(rg.igammac(rg.tensor(A.astype(np.float32)), 2.0)), rtol=1e-5)


def test_errors_on_device():
    with pytest.raises(RuntimeError, match="does not support negative n"):
        rg.polygamma(-1, rg.tensor(X, device="cuda"))
    with pytest.raises(RuntimeError, match="p has to be greater than or equal to 1"):
        rg.mvlgamma(rg.tensor(X, device="cuda"), 0)
    a = rg.tensor(A, device="cuda", requires_grad=True)
    out = rg.igamma(a, rg.tensor(np.abs(X), device="cuda"))
    with pytest.raises(NotImplementedError, match="igamma: input"):
        out.sum().backward()
