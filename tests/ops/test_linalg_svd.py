"""rg.linalg.svd / svdvals and the matrix norms built on them ('nuc', 2, -2),
against torch and finite differences. The registry (op_samples_reductions_
linalg.py) runs the generic checks of the SVD entry; this file adds
the JVPs of U and Vh (sign-aligned finite differences), matrix_norm/norm
over dims and batches, and the errors."""
import numpy as np
import pytest
import torch

import retrograd as rg
import torch.autograd.forward_ad as tfwAD
from retrograd.core import abi
from _arrays import values  # noqa: E402


def _aligned(x, ref, axis):
    # flip each singular vector of x to the sign of ref's (the SVD's gauge)
    return x * np.sign(np.sum(x * ref, axis=axis, keepdims=True))


@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (3, 3), (2, 4, 2), (2, 1, 2, 3)])
@pytest.mark.parametrize("which", [0, 1, 2])
def test_svd_jvp_vs_finite_differences(shape, which):
    rng = np.random.default_rng(sum(shape) + which)
    a = rng.standard_normal(shape)
    t = rng.standard_normal(shape)
    U, S, Vh = (rg.from_numpy(f) for f in np.linalg.svd(a, full_matrices=False))
    got = values(abi.svd_jvp(abi.T, rg.from_numpy(t), U, S, Vh)[which])
    eps = 1e-6
    f = lambda x: np.linalg.svd(x, full_matrices=False)[which]  # noqa: E731
    ref = f(a)
    plus, minus = f(a + eps * t), f(a - eps * t)
    if which != 1:
        axis = -2 if which == 0 else -1
        plus, minus = _aligned(plus, ref, axis), _aligned(minus, ref, axis)
    np.testing.assert_allclose(got, (plus - minus) / (2 * eps), rtol=1e-5, atol=1e-6)


def _grads(fn, tfn, a, rng):
    x = rg.tensor(a, requires_grad=True)
    tx = torch.tensor(a, requires_grad=True)
    y, ty = fn(x), tfn(tx)
    np.testing.assert_allclose(values(y), ty.detach().numpy(), rtol=1e-12, atol=1e-12)
    assert y.shape == tuple(ty.shape)
    v = rng.standard_normal(tuple(ty.shape))
    g, = rg.autograd.grad(y, x, grad_outputs=rg.tensor(v))
    tg, = torch.autograd.grad(ty, tx, torch.tensor(v))
    np.testing.assert_allclose(values(g), tg.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("ord", ["nuc", 2, -2])
@pytest.mark.parametrize("shape,dim", [((4, 3), (-2, -1)), ((3, 5), (-2, -1)), ((2, 3, 4), (-2, -1)),
                                       ((3, 2, 4), (0, 2)), ((2, 3, 4), (2, 0)), ((2, 2, 3, 2), (1, 3))])
@pytest.mark.parametrize("keepdim", [False, True])
def test_matrix_norm_svd_orders_match_torch(ord, shape, dim, keepdim):
    rng = np.random.default_rng(len(shape) * 7 + dim[0])
    a = rng.standard_normal(shape)
    _grads(lambda x: rg.linalg.matrix_norm(x, ord, dim, keepdim),
           lambda x: torch.linalg.matrix_norm(x, ord, dim, keepdim), a, rng)
    _grads(lambda x: rg.linalg.norm(x, ord, dim, keepdim),
           lambda x: torch.linalg.norm(x, ord, dim, keepdim), a, rng)


@pytest.mark.parametrize("ord", ["nuc", 2, -2])
def test_norm_of_a_matrix_with_ord_only(ord):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 4))
    _grads(lambda x: rg.linalg.norm(x, ord), lambda x: torch.linalg.norm(x, ord), a, rng)


@pytest.mark.parametrize("ord", ["nuc", 2, -2])
def test_matrix_norm_second_order_matches_torch(ord):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((2, 4, 3))
    x = rg.tensor(a, requires_grad=True)
    tx = torch.tensor(a, requires_grad=True)
    g, = rg.autograd.grad(rg.linalg.matrix_norm(x, ord).sum(), x, create_graph=True)
    tg, = torch.autograd.grad(torch.linalg.matrix_norm(tx, ord).sum(), tx, create_graph=True)
    w = rng.standard_normal(a.shape)
    gg, = rg.autograd.grad((g * rg.tensor(w)).sum(), x)
    tgg, = torch.autograd.grad((tg * torch.tensor(w)).sum(), tx)
    np.testing.assert_allclose(values(gg), tgg.numpy(), rtol=1e-8, atol=1e-10)


def test_svd_reconstructs_and_matches_torch_values():
    rng = np.random.default_rng(4)
    a = rng.standard_normal((2, 5, 3))
    U, S, Vh = rg.linalg.svd(rg.tensor(a), full_matrices=False)
    assert (U.shape, S.shape, Vh.shape) == ((2, 5, 3), (2, 3), (2, 3, 3))
    np.testing.assert_allclose(values(U) * values(S)[..., None, :] @ values(Vh), a, atol=1e-12)
    np.testing.assert_allclose(values(S), torch.linalg.svdvals(torch.tensor(a)).numpy(), rtol=1e-12)
    assert type(rg.linalg.svd(rg.tensor(a), full_matrices=False)).__name__ == "svd"


def test_svd_errors():
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        rg.linalg.svdvals(rg.ones(3))
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        rg.linalg.matrix_norm(rg.ones(3), "nuc")


# -- full_matrices=True (torch's default) ----------------------------------------
# U (m x m) and Vh (n x n); beyond the first k = min(m, n) columns of U and
# rows of Vh they are any orthonormal completion: compared through
# gauge-invariant quantities, as torch's own tests do.

FULL_SHAPES = [(5, 3), (3, 5), (4, 4), (2, 4, 2), (2, 1, 2, 3)]


@pytest.mark.oracle
@pytest.mark.parametrize("shape", FULL_SHAPES)
def test_svd_full_matrices_values(shape):
    a = np.random.default_rng(sum(shape)).standard_normal(shape)
    m, n = shape[-2:]
    k = min(m, n)
    res = rg.linalg.svd(rg.tensor(a))            # full_matrices=True by default, as torch
    U, S, Vh = (values(f) for f in res)
    tU, tS, tVh = (f.numpy() for f in torch.linalg.svd(torch.tensor(a)))
    assert U.shape == tU.shape == shape[:-2] + (m, m) and Vh.shape == tVh.shape == shape[:-2] + (n, n)
    assert type(res).__name__ == "svd"
    np.testing.assert_allclose(S, tS, rtol=1e-12)
    np.testing.assert_allclose(U[..., :k] * S[..., None, :] @ Vh[..., :k, :], a, atol=1e-12)
    eye_m, eye_n = np.eye(m), np.eye(n)
    np.testing.assert_allclose(np.swapaxes(U, -1, -2) @ U, np.broadcast_to(eye_m, U.shape), atol=1e-12)
    np.testing.assert_allclose(Vh @ np.swapaxes(Vh, -1, -2), np.broadcast_to(eye_n, Vh.shape), atol=1e-12)
    # the leading factors agree with torch's up to the sign of each vector
    np.testing.assert_allclose(np.abs(U[..., :k]), np.abs(tU[..., :k]), atol=1e-10)
    np.testing.assert_allclose(np.abs(Vh[..., :k, :]), np.abs(tVh[..., :k, :]), atol=1e-10)


def _gauge_invariant_loss(lib, U, S, Vh, wu, wv, ws):
    # invariant to the sign of each singular vector: it reads U and Vh only
    # through U_k diag(S) U_k^T and V_k diag(S) V_k^T (k leading vectors)
    k = S.shape[-1]
    Uk, Vk = U[..., :k], Vh[..., :k, :]
    pu = Uk * S.unsqueeze(-2) @ Uk.mT          # U_k diag(S) U_k^T (sign-free)
    pv = Vk.mT * S.unsqueeze(-2) @ Vk          # V_k diag(S) V_k^T
    return (pu * wu).sum() + (pv * wv).sum() + (S * S * ws).sum()


@pytest.mark.oracle
@pytest.mark.parametrize("shape", FULL_SHAPES)
def test_svd_full_matrices_gradient_matches_torch(shape):
    rng = np.random.default_rng(10 + sum(shape))
    a = rng.standard_normal(shape)
    m, n = shape[-2:]
    wu = rng.standard_normal(shape[:-2] + (m, m))
    wv = rng.standard_normal(shape[:-2] + (n, n))
    ws = rng.standard_normal(shape[:-2] + (min(m, n),))
    x = rg.tensor(a, requires_grad=True)
    tx = torch.tensor(a, requires_grad=True)
    loss = _gauge_invariant_loss(rg, *rg.linalg.svd(x), rg.tensor(wu), rg.tensor(wv), rg.tensor(ws))
    tloss = _gauge_invariant_loss(torch, *torch.linalg.svd(tx), torch.tensor(wu), torch.tensor(wv),
                                  torch.tensor(ws))
    np.testing.assert_allclose(float(loss), float(tloss.detach()), rtol=1e-10)
    g, = rg.autograd.grad(loss, x)
    tg, = torch.autograd.grad(tloss, tx)
    np.testing.assert_allclose(values(g), tg.numpy(), rtol=1e-9, atol=1e-10)
    # the same loss through the reduced SVD gives the same gradient
    gr, = rg.autograd.grad(_gauge_invariant_loss(rg, *rg.linalg.svd(x, full_matrices=False), rg.tensor(wu),
                                                 rg.tensor(wv), rg.tensor(ws)), x)
    np.testing.assert_allclose(values(gr), values(g), rtol=1e-10, atol=1e-12)


@pytest.mark.oracle
@pytest.mark.parametrize("shape", [(5, 3), (3, 5)])
def test_svd_full_matrices_completion_gets_no_gradient_as_torch(shape):
    # a loss on the completion columns of U / rows of Vh: torch's entry
    # narrows their gradient away (the result is 0); so does ours
    a = np.random.default_rng(3).standard_normal(shape)
    k = min(shape)
    x = rg.tensor(a, requires_grad=True)
    tx = torch.tensor(a, requires_grad=True)
    U, _, Vh = rg.linalg.svd(x)
    tU, _, tVh = torch.linalg.svd(tx)
    g, = rg.autograd.grad((U[:, k:] ** 2).sum() + (Vh[k:, :] ** 2).sum(), x, allow_unused=True)
    tg, = torch.autograd.grad((tU[:, k:] ** 2).sum() + (tVh[k:, :] ** 2).sum(), tx, allow_unused=True)
    np.testing.assert_array_equal(values(g), tg.numpy())
    assert not np.any(values(g))


@pytest.mark.parametrize("shape", FULL_SHAPES)
def test_svd_full_matrices_gradcheck_and_gradgradcheck(shape):
    a = np.random.default_rng(20 + sum(shape)).standard_normal(shape)
    m, n = shape[-2:]
    rng = np.random.default_rng(1)
    wu = rg.tensor(rng.standard_normal(shape[:-2] + (m, m)))
    wv = rg.tensor(rng.standard_normal(shape[:-2] + (n, n)))
    ws = rg.tensor(rng.standard_normal(shape[:-2] + (min(m, n),)))

    def f(x):
        return _gauge_invariant_loss(rg, *rg.linalg.svd(x), wu, wv, ws)
    x = rg.tensor(a, requires_grad=True)
    assert rg.autograd.gradcheck(f, (x,))
    assert rg.autograd.gradgradcheck(f, (x,))


@pytest.mark.oracle
@pytest.mark.requires("retrograd-forward-ad")
@pytest.mark.parametrize("shape", FULL_SHAPES)
def test_svd_full_matrices_jvp_matches_torch(shape):
    import retrograd.forward_ad as fwAD
    rng = np.random.default_rng(30 + sum(shape))
    a, t = rng.standard_normal(shape), rng.standard_normal(shape)
    k = min(shape[-2:])
    with fwAD.dual_level():
        outs = [fwAD.unpack_dual(o) for o in rg.linalg.svd(fwAD.make_dual(rg.tensor(a), rg.tensor(t)))]
    with tfwAD.dual_level():
        touts = [tfwAD.unpack_dual(o) for o in torch.linalg.svd(tfwAD.make_dual(torch.tensor(a), torch.tensor(t)))]
    (U, dU), (S, dS), (Vh, dVh) = ((values(p), values(d)) for p, d in outs)
    (tU, tdU), (tS, tdS), (tVh, tdVh) = ((p.numpy(), d.numpy()) for p, d in touts)
    np.testing.assert_allclose(dS, tdS, rtol=1e-9, atol=1e-10)
    # the completion gets a zero tangent, as torch's
    assert dU.shape == U.shape and dVh.shape == Vh.shape
    assert not np.any(dU[..., k:]) and not np.any(dVh[..., k:, :])
    assert not np.any(tdU[..., k:]) and not np.any(tdVh[..., k:, :])
    # the leading vectors: equal to torch's once both are sign-aligned
    su = np.sign(np.sum(U[..., :k] * tU[..., :k], axis=-2, keepdims=True))
    sv = np.sign(np.sum(Vh[..., :k, :] * tVh[..., :k, :], axis=-1, keepdims=True))
    np.testing.assert_allclose(dU[..., :k] * su, tdU[..., :k], rtol=1e-8, atol=1e-9)
    np.testing.assert_allclose(dVh[..., :k, :] * sv, tdVh[..., :k, :], rtol=1e-8, atol=1e-9)
