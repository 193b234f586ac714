"""Forward mode in the Python API: functional.jvp (forward AD), jacobian with
strategy="forward-mode", hessian forward-over-reverse, Hessian-vector
products forward-over-reverse (tangents flowing through a create_graph
backward), and custom Function.jvp / ctx.save_for_forward."""
import numpy as np
import pytest

fwAD = pytest.importorskip("retrograd.forward_ad", reason="needs the retrograd-forward-ad distribution")
torch = pytest.importorskip("torch")
tfw = torch.autograd.forward_ad

import retrograd as rg  # noqa: E402
from retrograd.autograd import functional as F  # noqa: E402
from _arrays import values  # noqa: E402


def _f(x, w):
    return rg.tanh(w @ x).pow(2).sum() + (x * x).sum()


def _tf(x, w):
    return torch.tanh(w @ x).pow(2).sum() + (x * x).sum()


RNG = np.random.default_rng(0)
X0 = RNG.standard_normal(5)
W0 = RNG.standard_normal((4, 5))
V0 = RNG.standard_normal(5)


def test_functional_jvp_uses_forward_ad_and_matches_torch():
    out, jv = F.jvp(lambda x: rg.sin(x) * x.sum(), rg.tensor(X0), rg.tensor(V0))
    tout, tjv = torch.autograd.functional.jvp(lambda x: torch.sin(x) * x.sum(), torch.tensor(X0),
                                              torch.tensor(V0))
    np.testing.assert_allclose(values(out), tout.numpy(), rtol=1e-14)
    np.testing.assert_allclose(values(jv), tjv.numpy(), rtol=1e-12)
    assert not out.requires_grad and not jv.requires_grad


def test_functional_jvp_tuple_inputs_and_create_graph():
    x = rg.tensor(X0, requires_grad=True)
    w = rg.tensor(W0)
    (o1, o2), (j1, j2) = F.jvp(lambda a, b: (b @ a, a.exp()), (x, w),
                               (rg.tensor(V0), rg.zeros(4, 5)), create_graph=True)
    np.testing.assert_allclose(values(j1.detach()), W0 @ V0, rtol=1e-12)
    np.testing.assert_allclose(values(j2.detach()), np.exp(X0) * V0, rtol=1e-12)
    # create_graph: the JVP is differentiable w.r.t. the inputs
    (g,) = rg.autograd.grad(j2.sum(), (x,))
    np.testing.assert_allclose(values(g), np.exp(X0) * V0, rtol=1e-12)


def test_functional_jvp_independent_output_and_default_v():
    out, jv = F.jvp(lambda x: rg.ones(3), rg.tensor(X0), rg.tensor(V0))
    np.testing.assert_array_equal(values(jv), np.zeros(3))
    with pytest.raises(RuntimeError, match="does not require gradients"):    # strict: torch's method and message
        F.jvp(lambda x: rg.ones(3), rg.tensor(X0), rg.tensor(V0), strict=True)
    out, jv = F.jvp(lambda x: x.exp() * 2, rg.tensor([0.5]))     # one element: v defaults to 1
    np.testing.assert_allclose(values(jv), 2 * np.exp([0.5]))


def test_jacobian_forward_mode_matches_reverse_and_torch():
    fn = lambda x, w: (rg.tanh(w @ x), x.pow(3))   # noqa: E731
    tfn = lambda x, w: (torch.tanh(w @ x), x.pow(3))   # noqa: E731
    fwd = F.jacobian(fn, (rg.tensor(X0), rg.tensor(W0)), vectorize=True, strategy="forward-mode")
    rev = F.jacobian(fn, (rg.tensor(X0), rg.tensor(W0)))
    tj = torch.autograd.functional.jacobian(tfn, (torch.tensor(X0), torch.tensor(W0)), vectorize=True,
                                            strategy="forward-mode")
    for i in range(2):
        for j in range(2):
            assert tuple(fwd[i][j].shape) == tuple(tj[i][j].shape)
            np.testing.assert_allclose(values(fwd[i][j]), values(rev[i][j]), rtol=1e-12, atol=1e-14)
            np.testing.assert_allclose(values(fwd[i][j]), tj[i][j].numpy(), rtol=1e-12, atol=1e-14)
    with pytest.raises(NotImplementedError, match="vectorize=True"):
        F.jacobian(fn, (rg.tensor(X0), rg.tensor(W0)), strategy="forward-mode")


def test_hessian_forward_over_reverse():
    x = rg.tensor(X0)
    w = rg.tensor(W0)
    h_fwd = F.hessian(lambda a: _f(a, w), x, vectorize=True, outer_jacobian_strategy="forward-mode")
    h_rev = F.hessian(lambda a: _f(a, w), x)
    th = torch.autograd.functional.hessian(lambda a: _tf(a, torch.tensor(W0)), torch.tensor(X0))
    np.testing.assert_allclose(values(h_fwd), values(h_rev), rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(values(h_fwd), th.numpy(), rtol=1e-11, atol=1e-12)


def test_hvp_forward_over_reverse_matches_functional_hvp():
    # H v = d/dt grad f(x + t v): tangents flow through a create_graph backward
    w = rg.tensor(W0)
    with fwAD.dual_level():
        x = fwAD.make_dual(rg.tensor(X0, requires_grad=True), rg.tensor(V0))
        (g,) = rg.autograd.grad(_f(x, w), (x,), create_graph=True)
        hv = values(fwAD.unpack_dual(g).tangent)
    _, want = F.hvp(lambda a: _f(a, w), rg.tensor(X0), rg.tensor(V0))
    np.testing.assert_allclose(hv, values(want), rtol=1e-11, atol=1e-12)
    tx = torch.tensor(X0, requires_grad=True)
    (tg,) = torch.autograd.grad(_tf(tx, torch.tensor(W0)), tx, create_graph=True)
    (thv,) = torch.autograd.grad(tg, tx, torch.tensor(V0))
    np.testing.assert_allclose(hv, thv.numpy(), rtol=1e-11, atol=1e-12)


def test_forward_over_reverse_through_saved_outputs_and_views():
    # saved outputs (exp, tanh), saved non-leaf inputs (pow), views (reshape, getitem)
    w = rg.tensor(W0)

    def f(x):
        h = rg.exp(x.reshape(5, 1)[:, 0]) * rg.tanh(w @ x).sum()
        return (h.pow(3) / 7).sum()

    def tf(x):
        h = torch.exp(x.reshape(5, 1)[:, 0]) * torch.tanh(torch.tensor(W0) @ x).sum()
        return (h.pow(3) / 7).sum()

    with fwAD.dual_level():
        x = fwAD.make_dual(rg.tensor(X0, requires_grad=True), rg.tensor(V0))
        (g,) = rg.autograd.grad(f(x), (x,), create_graph=True)
        hv = values(fwAD.unpack_dual(g).tangent)
    tx = torch.tensor(X0, requires_grad=True)
    (tg,) = torch.autograd.grad(tf(tx), tx, create_graph=True)
    (thv,) = torch.autograd.grad(tg, tx, torch.tensor(V0))
    np.testing.assert_allclose(hv, thv.numpy(), rtol=1e-10, atol=1e-12)


def test_reverse_over_forward():
    # the tangent is differentiable: grad of (J v) w.r.t. x
    x = rg.tensor(X0, requires_grad=True)
    with fwAD.dual_level():
        y = rg.sin(fwAD.make_dual(x, rg.tensor(V0)))
        t = fwAD.unpack_dual(y).tangent
    (g,) = rg.autograd.grad(t.sum(), (x,))
    np.testing.assert_allclose(values(g), -np.sin(X0) * V0, rtol=1e-13)


# --- custom Functions -------------------------------------------------------------------

class MulSin(rg.autograd.Function):
    @staticmethod
    def forward(ctx, x, y, k):
        ctx.save_for_forward(x, y)
        ctx.k = k
        return x * rg.sin(y) * k

    @staticmethod
    def jvp(ctx, xt, yt, kt):
        assert kt is None                      # non-tensor input
        x, y = ctx.saved_tensors
        return (xt * rg.sin(y) + x * rg.cos(y) * yt) * ctx.k

    @staticmethod
    def backward(ctx, g):
        raise AssertionError("not used")


def test_function_jvp_and_save_for_forward():
    with fwAD.dual_level():
        x = fwAD.make_dual(rg.tensor(X0), rg.tensor(V0))
        y = rg.tensor(X0 + 1)                      # no tangent: materialized as zeros
        out = MulSin.apply(x, y, 2.0)
        t = values(fwAD.unpack_dual(out).tangent)
    np.testing.assert_allclose(t, V0 * np.sin(X0 + 1) * 2.0, rtol=1e-14)


def test_function_without_jvp_raises():
    class NoJvp(rg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    with fwAD.dual_level():
        x = fwAD.make_dual(rg.tensor(X0), rg.tensor(V0))
        with pytest.raises(NotImplementedError, match="implement the jvp function"):
            NoJvp.apply(x)
        NoJvp.apply(rg.tensor(X0))               # no tangent: jvp is not needed


def test_function_jvp_wrong_count_and_shape():
    class Two(rg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def jvp(ctx, t):
            return t, t

    class Shape(rg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def jvp(ctx, t):
            return rg.ones(7)

    with fwAD.dual_level():
        x = fwAD.make_dual(rg.tensor(X0), rg.tensor(V0))
        with pytest.raises(RuntimeError, match=r"jvp returned an invalid number of forward "
                                               r"gradients \(expected 1 but got 2\)"):
            Two.apply(x)
        with pytest.raises(RuntimeError, match=r"forward gradient that has a different size than "
                                               r"that of the original Tensor.*size \[7\]"):
            Shape.apply(x)


# --- gradcheck(check_forward_ad=True) ------------------------------------------------------

def test_gradcheck_forward_ad_passes_and_catches_a_wrong_jvp():
    from retrograd.autograd import gradcheck, GradcheckError

    x = rg.tensor(X0, requires_grad=True)
    w = rg.tensor(W0, requires_grad=True)
    assert gradcheck(lambda a, b: rg.tanh(b @ a) * a.sum(), (x, w), check_forward_ad=True)
    assert gradcheck(lambda a: a.exp(), (x,), check_forward_ad=True, check_backward_ad=False)

    class WrongJvp(rg.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 3

        @staticmethod
        def backward(ctx, g):
            return g * 3

        @staticmethod
        def jvp(ctx, t):
            return t * 2

    with pytest.raises(GradcheckError, match="forward mode mismatch for output 0 with respect to input 0"):
        gradcheck(WrongJvp.apply, (x,), check_forward_ad=True)
    assert gradcheck(WrongJvp.apply, (x,), check_forward_ad=False)
    with pytest.raises(NotImplementedError, match="batched tangents"):
        gradcheck(lambda a: a * 2, (x,), check_forward_ad=True, check_batched_forward_grad=True)


# --- batched levels (jacobian vectorize=True in one forward pass) ---------------------------

def test_batched_level_pushes_every_tangent_in_one_pass():
    from retrograd.forward_ad import _dual
    x0 = np.array([[0.5, -1.0, 2.0], [1.0, 0.3, -0.2]])
    w0 = RNG.standard_normal((3, 4))
    lvl = _dual._enter_batched_dual_level(6)
    try:
        basis = np.eye(6).reshape(6, 2, 3)
        x = fwAD.make_dual(rg.tensor(x0), rg.tensor(basis), level=lvl)
        # elementwise (one call), matmul / reductions / views (per-entry fallback), broadcasting
        y = (rg.tanh(x) * 2 + x[0]) @ rg.tensor(w0)
        z = y.sum(dim=1) + x.transpose(0, 1).reshape(-1)[:2]
        ty = values(fwAD.unpack_dual(y, level=lvl).tangent)
        tz = values(fwAD.unpack_dual(z, level=lvl).tangent)
        with pytest.raises(RuntimeError, match=r"batched \(6 tangents\)"):
            fwAD.make_dual(rg.tensor(x0), rg.tensor(x0), level=lvl)
    finally:
        fwAD.exit_dual_level(level=lvl)
    for b in range(6):
        with fwAD.dual_level():
            x = fwAD.make_dual(rg.tensor(x0), rg.tensor(basis[b]))
            y = (rg.tanh(x) * 2 + x[0]) @ rg.tensor(w0)
            z = y.sum(dim=1) + x.transpose(0, 1).reshape(-1)[:2]
            np.testing.assert_allclose(ty[b], values(fwAD.unpack_dual(y).tangent), rtol=1e-13)
            np.testing.assert_allclose(tz[b], values(fwAD.unpack_dual(z).tangent), rtol=1e-13)


def test_batched_level_inplace_on_views():
    from retrograd.forward_ad import _dual
    lvl = _dual._enter_batched_dual_level(2)
    try:
        base = rg.zeros(2, 3)
        row = base[1]
        row.copy_(fwAD.make_dual(rg.tensor([1.0, 2.0, 3.0]), rg.tensor(np.arange(6.0).reshape(2, 3)),
                                 level=lvl))
        t = values(fwAD.unpack_dual(base, level=lvl).tangent)
    finally:
        fwAD.exit_dual_level(level=lvl)
    want = np.zeros((2, 2, 3))
    want[:, 1] = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(t, want)
