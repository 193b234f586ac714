"""In-place operators (+= -= *= /= **=) and methods (add_ sub_ mul_ div_
pow_) on non-leaf tensors give the values and gradients (first and second
order) of their out-of-place twins."""
import operator

import numpy as np
import pytest

import retrograd as rg
from _arrays import values  # noqa: E402


def _iadd(a, b):
    a += b
    return a


def _isub(a, b):
    a -= b
    return a


def _imul(a, b):
    a *= b
    return a


def _idiv(a, b):
    a /= b
    return a


def _ipow(a, b):
    a **= b
    return a


# name, in-place form, out-of-place twin
TWINS = [
    ("+=", _iadd, operator.add),
    ("-=", _isub, operator.sub),
    ("*=", _imul, operator.mul),
    ("/=", _idiv, operator.truediv),
    ("**=", _ipow, operator.pow),
    ("add_", lambda a, b: a.add_(b), rg.add),
    ("sub_", lambda a, b: a.sub_(b), rg.sub),
    ("mul_", lambda a, b: a.mul_(b), rg.mul),
    ("div_", lambda a, b: a.div_(b), rg.div),
    ("pow_", lambda a, b: a.pow_(b), rg.pow),
    ("add_alpha", lambda a, b: a.add_(b, alpha=2.5), lambda a, b: rg.add(a, b, alpha=2.5)),
    ("sub_alpha", lambda a, b: a.sub_(b, alpha=-1.5), lambda a, b: rg.sub(a, b, alpha=-1.5)),
]

# self shape, other: a shape (tensor) or a Python scalar
OTHERS = [
    ("same", (3, 4), (3, 4)),
    ("broadcast", (3, 4), (4,)),
    ("broadcast_col", (3, 4), (3, 1)),
    ("zero_d_other", (2, 3), ()),
    ("zero_d_self", (), ()),
    ("python_scalar", (2, 3), 1.5),
]


def _data(shape, seed, positive=False):
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.5, 2.0, size=shape) if positive else rng.uniform(-2, 2, size=shape)
    if not positive:
        a = np.where(np.abs(a) < 0.3, 0.7, a)
    return values(a)


def _run(fn, x_arr, o, dtype, inplace, create_graph):
    x = rg.tensor(x_arr.astype(dtype), requires_grad=True)
    leaves = [x]
    if isinstance(o, np.ndarray):
        other = rg.tensor(o.astype(dtype), requires_grad=True)
        leaves.append(other)
    else:
        other = o
    a = x * 1.0                     # a non-leaf
    b = a.clone() if inplace else a
    if inplace:
        v0 = b._version
        out = fn(b, other)
        assert out is b, "an in-place op returns its self"
        assert b._version > v0, "an in-place op bumps the version counter"
    else:
        out = fn(b, other)
    y = out * out                   # uses the in-place result downstream
    v = rg.from_numpy(np.random.default_rng(5).standard_normal(tuple(y.shape)).astype(dtype))
    grads = rg.autograd.grad(y, leaves, grad_outputs=v, create_graph=create_graph)
    if not create_graph:
        return out, grads, None
    s = sum(((g * g).sum() for g in grads[1:]), (grads[0] * grads[0]).sum())
    second = rg.autograd.grad(s, leaves, allow_unused=True)
    return out, grads, second


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case,self_shape,other", OTHERS, ids=[o[0] for o in OTHERS])
@pytest.mark.parametrize("name,inplace_fn,twin", TWINS, ids=[t[0] for t in TWINS])
def test_inplace_matches_out_of_place(name, inplace_fn, twin, case, self_shape, other, dtype):
    pow_ = "pow" in name or "**" in name
    x_arr = _data(self_shape, 0, positive=pow_)
    o = _data(other, 1, positive=name in ("/=", "div_")) if isinstance(other, tuple) else other
    if isinstance(o, np.ndarray) and ("/" in name or "div" in name):
        o = np.where(np.abs(o) < 0.5, 0.9, o)
    out_i, g_i, gg_i = _run(inplace_fn, x_arr, o, dtype, True, create_graph=True)
    out_o, g_o, gg_o = _run(twin, x_arr, o, dtype, False, create_graph=True)
    tol = dict(rtol=1e-12, atol=1e-12) if dtype == np.float64 else dict(rtol=1e-5, atol=1e-6)
    assert out_i.dtype == out_o.dtype == dtype
    assert out_i.shape == out_o.shape
    np.testing.assert_allclose(values(out_i), values(out_o), **tol)
    assert out_i.grad_fn is not None and out_i.grad_fn.name() == out_o.grad_fn.name()
    for a, b in zip(g_i, g_o):
        assert a.dtype == b.dtype == dtype
        np.testing.assert_allclose(values(a), values(b), **tol)
    for a, b in zip(gg_i, gg_o):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(values(a), values(b), **tol)


@pytest.mark.parametrize("name,inplace_fn,twin", TWINS, ids=[t[0] for t in TWINS])
def test_inplace_without_grad_matches(name, inplace_fn, twin):
    """No graph recorded (no_grad, or nothing requires grad): same values."""
    x_arr = _data((3, 4), 2, positive=True)
    o = _data((4,), 3, positive=True)
    ref = values(twin(rg.tensor(x_arr), rg.tensor(o)))
    a = rg.tensor(x_arr.copy())
    v0 = a._version
    out = inplace_fn(a, rg.tensor(o))
    assert out is a and a._version > v0
    np.testing.assert_allclose(values(a), ref, rtol=1e-13)
    leaf = rg.tensor(x_arr.copy(), requires_grad=True)
    with rg.no_grad():
        inplace_fn(leaf, rg.tensor(o))
    np.testing.assert_allclose(values(leaf), ref, rtol=1e-13)
    assert leaf.grad_fn is None


def test_inplace_python_scalar_float32_keeps_dtype():
    a = rg.tensor(np.ones(3, dtype=np.float32), requires_grad=True) * 1.0
    a += 2.5
    a *= 3
    a.add_(1.5, alpha=2)
    assert a.dtype == np.float32
    np.testing.assert_allclose(values(a), np.full(3, (1 + 2.5) * 3 + 3.0, dtype=np.float32))


def test_inplace_errors():
    x = rg.tensor(np.ones((4,)), requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        x += 1.0
    a = x * 1.0
    with pytest.raises(RuntimeError):
        a += rg.ones((3, 4))            # would change a's shape
    i = rg.tensor(np.arange(3))
    with pytest.raises(RuntimeError):
        i += 1.5                        # float result into an integer tensor
    # an in-place change of a tensor saved for backward is detected
    b = x * 1.0
    y = b * b
    b += 1.0
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
