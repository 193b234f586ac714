"""What the translated torch.autograd.functional tests (test_torch_functional_a/_b.py) share:
structure and value checks of Jacobian-like results, and small test functions."""
import importlib.util

import numpy as np

import retrograd as rg

_HAS_FORWARD_AD = importlib.util.find_spec("retrograd.forward_ad") is not None

F = rg.autograd.functional
gradcheck = rg.autograd.gradcheck
gradgradcheck = rg.autograd.gradgradcheck

DT = rg.float64


def _np(t):
    return t.detach().numpy()


def _is_tensor(t):
    return isinstance(t, rg.Tensor)


def _shape(t):
    return tuple(t.shape)


def _check_like(got, ref):
    """``got`` has the structure of ``ref`` (a Tensor or a tuple of Tensors) and the same shapes."""
    if _is_tensor(ref):
        assert _is_tensor(got)
        assert _shape(got) == _shape(ref)
        return
    assert isinstance(ref, tuple) and isinstance(got, tuple)
    assert len(got) == len(ref)
    for g, r in zip(got, ref):
        assert _is_tensor(g) and _is_tensor(r)
        assert _shape(g) == _shape(r)


def _check_blocks(got, rows, cols):
    """``got`` is a Jacobian-like nesting: one block per (row entry, column entry), shaped row + col."""
    rows_tuple, cols_tuple = isinstance(rows, tuple), isinstance(cols, tuple)
    if not rows_tuple and not cols_tuple:
        assert _is_tensor(got)
        assert _shape(got) == _shape(rows) + _shape(cols)
        return
    if not rows_tuple:
        assert isinstance(got, tuple) and len(got) == len(cols)
        for g, c in zip(got, cols):
            assert _is_tensor(g) and _shape(g) == _shape(rows) + _shape(c)
        return
    assert isinstance(got, tuple) and len(got) == len(rows)
    for g_row, r in zip(got, rows):
        if not cols_tuple:
            assert _is_tensor(g_row) and _shape(g_row) == _shape(r) + _shape(cols)
            continue
        assert isinstance(g_row, tuple) and len(g_row) == len(cols)
        for g, c in zip(g_row, cols):
            assert _is_tensor(g) and _shape(g) == _shape(r) + _shape(c)


def _same(a, b):
    """Equal nesting, dtypes and (to rounding) values (torch's forward mode nests lists, not tuples)."""
    if isinstance(a, (tuple, list)):
        assert isinstance(b, (tuple, list)) and len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
        return
    assert a.dtype == b.dtype
    assert _shape(a) == _shape(b)
    np.testing.assert_allclose(_np(a), _np(b), rtol=1e-6, atol=1e-7)


def _all_zero(t):
    return float(t.detach().abs().sum()) == 0.0


def _three_first(a):
    return 3 * a.narrow(0, 0, 3)


def _with_str(a):
    return 3 * a.narrow(0, 0, 3), "not a tensor"


def _cut_off(a):
    # requires grad, but is not connected to ``a``
    return a.long().float().requires_grad_().clone()
