"""rg.linalg.svd / svdvals and the matrix norms built on them ('nuc', 2, -2),
against torch and finite differences. The registry (op_samples_reductions_
linalg.py) runs the generic checks of the SVD entry; this file adds
the JVPs of U and Vh (sign-aligned finite differences), matrix_norm/norm
over dims and batches, and the errors."""
import numpy as np
import pytest
import torch

import retrograd as rg
from retrograd.core import abi


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
    got = np.asarray(abi.svd_jvp(abi.T, rg.from_numpy(t), U, S, Vh)[which])
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
    np.testing.assert_allclose(np.asarray(y), ty.detach().numpy(), rtol=1e-12, atol=1e-12)
    assert y.shape == tuple(ty.shape)
    v = rng.standard_normal(tuple(ty.shape))
    g, = rg.autograd.grad(y, x, grad_outputs=rg.tensor(v))
    tg, = torch.autograd.grad(ty, tx, torch.tensor(v))
    np.testing.assert_allclose(np.asarray(g), tg.numpy(), rtol=1e-10, atol=1e-12)


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
    np.testing.assert_allclose(np.asarray(gg), tgg.numpy(), rtol=1e-8, atol=1e-10)


def test_svd_reconstructs_and_matches_torch_values():
    rng = np.random.default_rng(4)
    a = rng.standard_normal((2, 5, 3))
    U, S, Vh = rg.linalg.svd(rg.tensor(a), full_matrices=False)
    assert (U.shape, S.shape, Vh.shape) == ((2, 5, 3), (2, 3), (2, 3, 3))
    np.testing.assert_allclose(np.asarray(U) * np.asarray(S)[..., None, :] @ np.asarray(Vh), a, atol=1e-12)
    np.testing.assert_allclose(np.asarray(S), torch.linalg.svdvals(torch.tensor(a)).numpy(), rtol=1e-12)
    assert type(rg.linalg.svd(rg.tensor(a), full_matrices=False)).__name__ == "svd"


def test_svd_errors():
    with pytest.raises(ValueError, match="full_matrices=False"):
        rg.linalg.svd(rg.ones((3, 2)))
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        rg.linalg.svdvals(rg.ones(3))
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        rg.linalg.matrix_norm(rg.ones(3), "nuc")
