"""Backward of advanced indexing with integer arrays off the leading dims
(x[:, idx], x[..., idx], x[idx1, :, idx2], x[:, i, j], x[0, :, idx],
x[idx, 1:3]) against torch: repeated indices accumulate. These take the
flat-position bincount path of _op_support.pxi's _accumulate, not np.add.at."""
import numpy as np
import pytest
import torch

import retrograd as rg

RNG = np.random.default_rng(21)
I = RNG.integers(-4, 5, 40)            # repeats and negative indices
J = RNG.integers(0, 5, 40)

CASES = {
    "cols": ((3, 5), lambda: (slice(None), I)),
    "ellipsis": ((2, 3, 5), lambda: (Ellipsis, I)),
    "split": ((5, 3, 5), lambda: (I, slice(None), J)),
    "middle_pair": ((3, 5, 5), lambda: (slice(None), I, J)),
    # NumPy puts the dims of separated advanced indices (the int counts as
    # one) first: (40, 3) where torch gives (3, 40); compared transposed
    "int_then_array": ((2, 3, 5), lambda: (1, slice(None), I)),
    "array_then_slice": ((5, 6), lambda: (I, slice(1, 4))),
    "array_2d": ((3, 5), lambda: (slice(None), I.reshape(8, 5))),
    "broadcast_arrays": ((5, 4, 5), lambda: (I[:8, None], slice(None), J[None, :6])),
    "mask_and_array": ((4, 5), lambda: (np.array([True, False, True, True]), I[:3])),
    # a few picks out of a large input: the np.add.at fallback
    "few_picks_large": ((300, 300, 2), lambda: (np.array([1, 1, -2]), slice(None), np.array([0, 1, 1]))),
}


def _torch_index(index):
    return tuple(torch.from_numpy(i) if isinstance(i, np.ndarray) else i for i in index)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", list(CASES))
def test_index_backward_matches_torch(case, dtype):
    shape, make = CASES[case]
    index = make()
    a = RNG.standard_normal(shape).astype(dtype)
    x = rg.tensor(a, requires_grad=True)
    y = x[index]
    tx = torch.tensor(a, requires_grad=True)
    ty = tx[_torch_index(index)] if case != "int_then_array" else tx[_torch_index(index)].T
    assert y.shape == tuple(ty.shape)
    v = RNG.standard_normal(y.shape).astype(dtype)
    g, = rg.autograd.grad(y, x, rg.tensor(v))
    tg, = torch.autograd.grad(ty, tx, torch.tensor(v))
    assert g.dtype == dtype
    tol = 1e-12 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(np.asarray(g), tg.numpy(), rtol=tol, atol=tol)
    # repeated positions accumulate: the gradient sums to the upstream's sum
    np.testing.assert_allclose(np.asarray(g).sum(), v.sum(), rtol=tol * 10)


def test_index_backward_second_order():
    a = RNG.standard_normal((5, 3, 5))
    index = CASES["split"][1]()
    x = rg.tensor(a, requires_grad=True)
    tx = torch.tensor(a, requires_grad=True)
    g, = rg.autograd.grad((x[index] ** 3).sum(), x, create_graph=True)
    tg, = torch.autograd.grad((tx[_torch_index(index)] ** 3).sum(), tx, create_graph=True)
    gg, = rg.autograd.grad((g * g).sum(), x)
    tgg, = torch.autograd.grad((tg * tg).sum(), tx)
    np.testing.assert_allclose(np.asarray(gg), tgg.numpy(), rtol=1e-12)

