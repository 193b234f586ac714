"""torch's other names of the table's ops (`aliases:`) and its in-place
functions (`inplace_function:`): each is the op itself under torch's name,
as a function, a Tensor method and an in-place method, and agrees with
torch's function of that name."""
from __future__ import annotations

import numpy as np
import pytest

import retrograd as rg
from retrograd.core._generated_ops_info import OPS as TABLE

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle

ALIASES = [(op, a) for op, info in TABLE.items() for a in info["aliases"]]
INPLACE_FUNCTIONS = [(op, f) for op, info in TABLE.items() for f in info["inplace_functions"]]

X = np.array([[0.3, -0.6, 0.9], [-0.2, 0.5, -0.8]])
Y = np.array([[0.7, 0.4, -0.5], [0.6, -0.9, 0.2]])


def _args(op: str):
    info = TABLE[op]
    n = len(info["inputs"])
    if op in ("clamp",):
        return (X, -0.5, 0.5)
    if op in ("fill",):
        return (X, 0.25)
    if op in ("gcd", "lcm"):
        return (np.array([12, 18, 7]), np.array([8, 12, 14]))
    if op == "outer":
        return (X[0], Y[1])
    if op in ("acosh",):
        return (X + 2.0,)
    if op in ("clamp_min", "clamp_max"):
        return (X, 0.1)
    return (X, Y)[:n] if n <= 2 else (X, Y, 0.5)


def _rg(a):
    return rg.tensor(a) if isinstance(a, np.ndarray) else a


def _torch(a):
    return torch.tensor(a) if isinstance(a, np.ndarray) else a


def test_the_tables_lists():
    # the aliases and in-place functions the build generated are module functions of rg and of torch
    assert ("acos", "arccos") in ALIASES and ("clamp", "clip") in ALIASES
    assert ("sin", "sin_") in INPLACE_FUNCTIONS
    for _, name in ALIASES + INPLACE_FUNCTIONS:
        assert callable(getattr(rg, name)), name
        assert hasattr(torch, name), f"torch has no {name}: not an alias torch knows"
    assert set(rg.core.ALIASES) == {a for _, a in ALIASES + INPLACE_FUNCTIONS}


@pytest.mark.parametrize("op,alias", ALIASES, ids=[a for _, a in ALIASES])
def test_alias_function_and_methods(op, alias):
    args = _args(op)
    want = getattr(rg, op)(*map(_rg, args))
    got = getattr(rg, alias)(*map(_rg, args))
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    ref = getattr(torch, alias)(*map(_torch, args))
    np.testing.assert_allclose(np.asarray(got), ref.numpy(), rtol=1e-12, atol=1e-12)
    assert f"Alias of :func:`retrograd.{op}`" in getattr(rg, alias).__doc__
    if op in TABLE[op]["methods"]:
        x = _rg(args[0])
        np.testing.assert_array_equal(np.asarray(getattr(x, alias)(*map(_rg, args[1:]))), np.asarray(want))
    if op + "_" in TABLE[op]["inplace"]:
        x = _rg(args[0]).clone()
        out = getattr(x, alias + "_")(*map(_rg, args[1:]))
        assert out is x
        np.testing.assert_array_equal(np.asarray(x), np.asarray(want).astype(np.asarray(x).dtype))


def test_alias_records_the_ops_node():
    x = rg.tensor(X, requires_grad=True)
    assert rg.arccos(x).grad_fn.name() == "AcosBackward0"
    assert rg.clip(x, -0.5, 0.5).grad_fn.name() == "ClampBackward0"
    assert x.multiply(2).grad_fn.name() == "MulBackward0"
    g, = rg.autograd.grad(rg.arctan2(x, rg.tensor(Y)).sum(), x)
    xt = torch.tensor(X, requires_grad=True)
    gt, = torch.autograd.grad(torch.arctan2(xt, torch.tensor(Y)).sum(), xt)
    np.testing.assert_allclose(np.asarray(g), gt.numpy(), rtol=1e-12)


@pytest.mark.parametrize("op,fname", INPLACE_FUNCTIONS, ids=[f for _, f in INPLACE_FUNCTIONS])
def test_inplace_function(op, fname):
    args = _args(op)
    x = _rg(args[0]).clone()
    out = getattr(rg, fname)(x, *map(_rg, args[1:]))
    assert out is x
    xt = _torch(args[0]).clone()
    getattr(torch, fname)(xt, *map(_torch, args[1:]))
    np.testing.assert_allclose(np.asarray(x), xt.numpy(), rtol=1e-12, atol=1e-12)


def test_inplace_function_refuses_a_non_tensor():
    with pytest.raises(TypeError, match=r"sin_\(\): argument 'input' must be Tensor, not list"):
        rg.sin_([1.0])


def test_inplace_comparison_and_cumulative_methods():
    for name in ("gt_", "ge_", "lt_", "le_", "eq_", "ne_", "greater_", "less_equal_", "not_equal_",
                 "logical_and_", "logical_or_", "logical_xor_"):
        x, xt = rg.tensor(X), torch.tensor(X)
        getattr(x, name)(rg.tensor(Y))
        getattr(xt, name)(torch.tensor(Y))
        np.testing.assert_array_equal(np.asarray(x), xt.numpy(), err_msg=name)
    x, xt = rg.tensor(X), torch.tensor(X)
    x.logical_not_()
    xt.logical_not_()
    np.testing.assert_array_equal(np.asarray(x), xt.numpy())
    for name in ("cumsum_", "cumprod_"):
        x, xt = rg.tensor(X), torch.tensor(X)
        getattr(x, name)(1)
        getattr(xt, name)(1)
        np.testing.assert_allclose(np.asarray(x), xt.numpy(), rtol=1e-12)


def test_inplace_arithmetic_aliases_and_triangles():
    x = rg.tensor(X, requires_grad=True)
    y = x * 1.0
    y.subtract_(rg.tensor(Y), alpha=2).multiply_(3).divide_(2)
    xt = torch.tensor(X, requires_grad=True)
    yt = xt * 1.0
    yt.subtract_(torch.tensor(Y), alpha=2).multiply_(3).divide_(2)
    np.testing.assert_allclose(np.asarray(y.detach()), yt.detach().numpy(), rtol=1e-12)
    g, = rg.autograd.grad(y.sum(), x)
    gt, = torch.autograd.grad(yt.sum(), xt)
    np.testing.assert_allclose(np.asarray(g), gt.numpy())
    m = np.arange(1.0, 10.0).reshape(3, 3)
    for name, k in (("tril_", 0), ("triu_", 1), ("tril_", -1)):
        a, at = rg.tensor(m), torch.tensor(m)
        assert getattr(a, name)(k) is a
        getattr(at, name)(k)
        np.testing.assert_array_equal(np.asarray(a), at.numpy())
