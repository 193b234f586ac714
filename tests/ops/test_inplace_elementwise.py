"""Every in-place method the table generates (derivatives.yaml `inplace:`:
exp_, clamp_, lerp_, floor_divide_, __imod__, fill_, zero_, ...) gives the
values and gradients (first and second order) of its out-of-place twin, on
the registry's samples; without a graph it writes the twin's value in place."""
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import retrograd as rg  # noqa: E402
from op_samples import OPS_BY_NAME, TABLE  # noqa: E402
from _arrays import values  # noqa: E402


def _cases():
    out = []
    for name, info in TABLE.items():
        if info["nondifferentiable"]:
            continue       # (bitwise ops, on integers: tests/ops/test_logical_bitwise.py)
        if name in ("igamma", "igammac"):
            continue       # no derivative for self, as torch: test_special_functions.py tests their in-place forms
        for m in info.get("inplace", []):
            out.append(pytest.param(name, m, id=f"{name}.{m}"))
    return out


CASES = _cases()


def test_inplace_methods_are_generated():
    names = {m for _, m in (c.values for c in CASES)}
    for m in ["exp_", "log_", "sin_", "cos_", "tanh_", "sigmoid_", "relu_", "neg_", "abs_", "sqrt_",
              "rsqrt_", "clamp_", "clip_", "floor_", "ceil_", "round_", "trunc_", "sign_", "erf_",
              "lerp_", "fill_", "zero_", "floor_divide_", "remainder_", "__ifloordiv__", "__imod__",
              "atan2_", "true_divide_", "exp2_", "log2_", "log10_", "log1p_", "expm1_", "square_",
              "reciprocal_", "tan_", "asin_", "acos_", "atan_", "sinh_", "cosh_"]:
        assert m in names, m
        assert callable(getattr(rg.Tensor, m))


def _twin(name):
    if name == "_zero":
        return lambda a: rg.fill(a, 0.0)
    return OPS_BY_NAME[name].op


def _usable(sample, op):
    # in place: self is a float tensor and the result keeps self's shape
    a0 = sample.args[0] if sample.args else None
    if not isinstance(a0, np.ndarray) or a0.dtype.kind != "f":
        return False
    shapes = [np.shape(a) for a in sample.args if isinstance(a, np.ndarray)]
    try:
        return np.broadcast_shapes(*shapes) == a0.shape
    except ValueError:      # not elementwise (addmm_): the result's shape decides
        args = [rg.tensor(a) if isinstance(a, np.ndarray) else a for a in sample.args]
        return tuple(op.op(*args, **sample.kwargs).shape) == a0.shape


def _run(fn, sample, inplace, method=None):
    leaves, args = [], []
    for a in sample.args:
        if isinstance(a, np.ndarray):
            t = rg.tensor(a.copy(), requires_grad=a.dtype.kind == "f")
            if a.dtype.kind == "f":
                leaves.append(t)
            args.append(t)
        else:
            args.append(a)
    a0 = args[0] * 1.0                          # a non-leaf
    if inplace:
        b = a0.clone()
        v0 = b._version
        out = getattr(b, method)(*args[1:], **sample.kwargs)
        assert out is b and b._version > v0
    else:
        out = fn(a0, *args[1:], **sample.kwargs)
    y = out * out
    v = rg.from_numpy(np.random.default_rng(5).standard_normal(tuple(y.shape)))
    grads = rg.autograd.grad(y, leaves, grad_outputs=v, create_graph=True, allow_unused=True)
    grads = [g if g is not None else rg.zeros_like(l) for g, l in zip(grads, leaves)]
    s = sum(((g * g).sum() for g in grads[1:]), (grads[0] * grads[0]).sum())
    second = rg.autograd.grad(s, leaves, allow_unused=True) if s.requires_grad else [None] * len(leaves)
    return out, grads, second


@pytest.mark.parametrize("name,method", CASES)
def test_inplace_matches_out_of_place(name, method):
    op = OPS_BY_NAME[name]
    samples = [s for s in op.samples() if _usable(s, op)]
    if method.startswith("__"):
        samples = [s for s in samples if not s.kwargs and len(s.args) == 2]
    assert samples, f"no sample of {name} can run in place"
    for sample in samples:
        out_i, g_i, gg_i = _run(None, sample, True, method)
        out_o, g_o, gg_o = _run(_twin(name), sample, False)
        np.testing.assert_allclose(values(out_i), values(out_o), rtol=1e-13, atol=1e-13)
        assert out_i.dtype == out_o.dtype
        if name != "_zero":
            assert out_i.grad_fn.name() == out_o.grad_fn.name()
        for a, b in zip(g_i, g_o):
            np.testing.assert_allclose(values(a), values(b), rtol=1e-12, atol=1e-12)
        for a, b in zip(gg_i, gg_o):
            a = 0.0 if a is None else values(a)
            b = 0.0 if b is None else values(b)
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name,method", CASES)
def test_inplace_without_graph(name, method):
    op = OPS_BY_NAME[name]
    sample = next(s for s in op.samples() if _usable(s, op))
    if method.startswith("__") and (sample.kwargs or len(sample.args) != 2):
        return
    plain = [rg.tensor(a.copy()) if isinstance(a, np.ndarray) else a for a in sample.args]
    ref = values(_twin(name)(*plain, **sample.kwargs))
    a = rg.tensor(sample.args[0].copy())
    v0 = a._version
    assert getattr(a, method)(*plain[1:], **sample.kwargs) is a
    assert a._version == v0 + 1
    np.testing.assert_allclose(values(a), ref, rtol=1e-13, atol=1e-13)
    leaf = rg.tensor(sample.args[0].copy(), requires_grad=True)
    with rg.no_grad():
        getattr(leaf, method)(*plain[1:], **sample.kwargs)
    np.testing.assert_allclose(values(leaf), ref, rtol=1e-13, atol=1e-13)
    assert leaf.grad_fn is None and leaf.requires_grad


def test_inplace_errors():
    x = rg.tensor([0.5, 1.5], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        x.exp_()
    i = rg.tensor(np.arange(3))
    with pytest.raises(RuntimeError, match="can't be cast"):
        i.exp_()                                # float result into an integer tensor
    i.abs_().clamp_(0, 1)                       # integer results stay integers
    np.testing.assert_array_equal(values(i), [0, 1, 1])
    a = x * 1.0
    with pytest.raises(RuntimeError, match="shape"):
        a.clamp_(rg.zeros((3, 2)), None)        # would change a's shape
    with pytest.raises(RuntimeError, match="0-dimension"):
        a.fill_(rg.ones(2))
    b = x * 1.0
    y = b.exp()
    b.sqrt_()                                   # exp saved its result, not b: no error
    y.sum().backward()
    c = x * 1.0
    y = c * c
    c.exp_()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_inplace_float32_and_python_scalars_keep_dtype():
    a = rg.tensor(np.array([0.5, 2.0], dtype=np.float32), requires_grad=True) * 1.0
    a.clamp_(0.75, 1.5).lerp_(rg.ones(2, dtype=np.float32), 0.25).fill_(2.0).sqrt_()
    assert a.dtype == np.float32
    a //= 0.5
    a %= 1.5
    assert a.dtype == np.float32 and a.grad_fn is not None


def test_zero_and_fill_gradients():
    x = rg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    v = rg.tensor(4.0, requires_grad=True)
    a = x * 2.0
    a.fill_(v)
    (a * rg.tensor([1.0, 2.0, 3.0])).sum().backward()
    np.testing.assert_array_equal(values(x.grad), [0.0, 0.0, 0.0])
    assert float(v.grad) == 6.0
    b = x * 2.0
    b.zero_()
    assert b.requires_grad and b.grad_fn.name() == "ZeroBackward0"
    np.testing.assert_array_equal(values(b), 0.0)
