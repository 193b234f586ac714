"""rg.autograd.functional against torch.autograd.functional: same results,
same tuple/non-tuple mirroring, create_graph results differentiable, strict
errors with torch's messages."""
import re

import sys

import numpy as np
import pytest
import torch
import torch.autograd.functional as TF

import retrograd as rg
from retrograd.autograd import functional as F

RNG = np.random.default_rng(0)
W = RNG.standard_normal((3, 4))


# Each case: (name, rg function, torch function, input shapes); written once
# over a namespace so both libraries run the same code.
def _cases(lib):
    W_ = lib.tensor(W)
    return {
        "scalar": (lambda x: (x.exp() * x).sum(), [(4,)]),
        "tuple_in_out": (lambda x, y: (x * y + y.sin(), x.tanh()), [(3,), (3,)]),
        "mlp": (lambda x: (W_ @ x).tanh(), [(4,)]),
        "matrix_in": (lambda x: (x * x).sum(dim=1), [(2, 3)]),
        "scalar_two_in": (lambda x, y: (x.sin() * y).sum() + (x * x).sum(), [(3,), (3,)]),
    }


def _inputs(shapes, seed=1):
    rng = np.random.default_rng(seed)
    arrays = [rng.uniform(-1, 1, s) for s in shapes]
    return arrays


def _pair(name, tuple_inputs=True):
    rf, shapes = _cases(rg)[name]
    tf, _ = _cases(torch)[name]
    arrays = _inputs(shapes)
    if len(arrays) == 1 and not tuple_inputs:
        return rf, tf, rg.tensor(arrays[0]), torch.tensor(arrays[0])
    return rf, tf, tuple(rg.tensor(a) for a in arrays), tuple(torch.tensor(a) for a in arrays)


def _same(a, b, rtol=1e-10):
    if isinstance(b, torch.Tensor):
        assert isinstance(a, rg.Tensor), f"expected a Tensor, got {type(a).__name__}"
        assert tuple(a.shape) == tuple(b.shape), (a.shape, b.shape)
        np.testing.assert_allclose(np.asarray(a._array), b.detach().numpy(), rtol=rtol, atol=1e-12)
        return
    assert isinstance(a, tuple) and len(a) == len(b), (type(a), a, b)
    for x, y in zip(a, b):
        _same(x, y, rtol)


def _v_like(t_ref, lib, seed=5):
    rng = np.random.default_rng(seed)
    if isinstance(t_ref, tuple):
        return tuple(_v_like(t, lib, seed + i) for i, t in enumerate(t_ref))
    return lib.tensor(rng.standard_normal(tuple(t_ref.shape)))


ALL = ["scalar", "tuple_in_out", "mlp", "matrix_in", "scalar_two_in"]
SCALAR = ["scalar", "scalar_two_in"]


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("tuple_inputs", [True, False])
def test_vjp(name, tuple_inputs):
    rf, tf, x, tx = _pair(name, tuple_inputs)
    tout = tf(*tx) if isinstance(tx, tuple) else tf(tx)
    tv = _v_like(tout, torch)
    v = tuple(rg.tensor(t.numpy()) for t in tv) if isinstance(tv, tuple) else rg.tensor(tv.numpy())
    _same(F.vjp(rf, x, v), TF.vjp(tf, tx, tv))


@pytest.mark.parametrize("name", ALL)
def test_jvp(name):
    rf, tf, x, tx = _pair(name)
    tv = _v_like(tx, torch)
    v = tuple(rg.tensor(t.numpy()) for t in tv)
    _same(F.jvp(rf, x, v), TF.jvp(tf, tx, tv))


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("vectorize", [False, True])
@pytest.mark.parametrize("tuple_inputs", [True, False])
def test_jacobian(name, vectorize, tuple_inputs):
    rf, tf, x, tx = _pair(name, tuple_inputs)
    _same(F.jacobian(rf, x, vectorize=vectorize), TF.jacobian(tf, tx, vectorize=vectorize))


@pytest.mark.parametrize("name", SCALAR)
@pytest.mark.parametrize("vectorize", [False, True])
def test_hessian(name, vectorize):
    rf, tf, x, tx = _pair(name)
    _same(F.hessian(rf, x, vectorize=vectorize), TF.hessian(tf, tx, vectorize=vectorize))
    rf, tf, x, tx = _pair("scalar", tuple_inputs=False)
    _same(F.hessian(rf, x, vectorize=vectorize), TF.hessian(tf, tx, vectorize=vectorize))


@pytest.mark.parametrize("name", SCALAR)
@pytest.mark.parametrize("which", ["hvp", "vhp"])
def test_hvp_vhp(name, which):
    rf, tf, x, tx = _pair(name)
    tv = _v_like(tx, torch)
    v = tuple(rg.tensor(t.numpy()) for t in tv)
    _same(getattr(F, which)(rf, x, v), getattr(TF, which)(tf, tx, tv))


def test_scalar_input_v_default():
    x, tx = rg.tensor(np.array(0.7)), torch.tensor(0.7, dtype=torch.float64)
    f = lambda t: (t * t * t).sin()      # noqa: E731
    for fn in ("vjp", "jvp", "hvp", "vhp"):
        _same(getattr(F, fn)(f, x), getattr(TF, fn)(f, tx))


@pytest.mark.parametrize("fn", ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"])
def test_create_graph_results_are_differentiable(fn):
    name = "scalar_two_in" if fn in ("hessian", "hvp", "vhp") else "tuple_in_out"
    rf, tf, x, tx = _pair(name)
    x = tuple(t.requires_grad_() for t in x)
    tx = tuple(t.requires_grad_() for t in tx)
    kwargs = {}
    if fn in ("vjp",):
        tout = tf(*tx)
        tv = _v_like(tout, torch)
        kwargs_t = {"v": tv}
        kwargs = {"v": tuple(rg.tensor(t.numpy()) for t in tv)}
    elif fn in ("jvp", "hvp", "vhp"):
        tv = _v_like(tx, torch)
        kwargs_t = {"v": tv}
        kwargs = {"v": tuple(rg.tensor(t.numpy()) for t in tv)}
    else:
        kwargs_t = {}
    res = getattr(F, fn)(rf, x, create_graph=True, **kwargs)
    tres = getattr(TF, fn)(tf, tx, create_graph=True, **kwargs_t)
    flat = _flatten(res[1] if fn not in ("jacobian", "hessian") else res)
    tflat = _flatten(tres[1] if fn not in ("jacobian", "hessian") else tres)
    # the same entries carry a graph as in torch (an entry for an input that
    # the output does not depend on is a plain zero tensor in both)
    assert [t.requires_grad for t in flat] == [t.requires_grad for t in tflat]
    assert any(t.requires_grad for t in flat)
    s = sum(((t * t).sum() for t in flat), rg.tensor(0.0))
    ts = sum((t * t).sum() for t in tflat)
    g = rg.autograd.grad(s, x, allow_unused=True, materialize_grads=True)
    tg = torch.autograd.grad(ts, tx, allow_unused=True, materialize_grads=True)
    _same(tuple(g), tuple(tg), rtol=1e-9)


def _flatten(x):
    if isinstance(x, (tuple, list)):
        return [y for el in x for y in _flatten(el)]
    return [x]


def test_results_without_create_graph_have_no_history():
    rf, tf, x, tx = _pair("tuple_in_out")
    x = tuple(t.requires_grad_() for t in x)
    out, v = F.vjp(rf, x, (rg.tensor(np.ones(3)), rg.tensor(np.ones(3))))
    assert all(t.grad_fn is None and not t.requires_grad for t in out + v)
    jac = F.jacobian(rf, x, vectorize=True)
    assert all(t.grad_fn is None for t in _flatten(jac))


def _message(fn):
    try:
        fn()
    except RuntimeError as e:
        # torch prints sizes as torch.Size([3]); retrograd as a shape tuple (3,)
        return re.sub(r"torch\.Size\(\[([^\]]*)\]\)",
                      lambda m: repr(tuple(int(v) for v in m.group(1).split(",") if v.strip())),
                      str(e))
    raise AssertionError("no RuntimeError raised")


@pytest.mark.parametrize("case", [
    ("vjp", lambda lib: (lambda x, y: x * 2.0), {"v": "out"}),
    ("jvp", lambda lib: (lambda x, y: x * 2.0), {"v": "in"}),
    ("jacobian", lambda lib: (lambda x, y: x * 2.0), {}),
    ("jacobian_no_grad_out", lambda lib: (lambda x, y: lib.zeros_like(x)), {}),
    ("hessian", lambda lib: (lambda x, y: (x * 2.0).sum()), {}),
    ("hvp", lambda lib: (lambda x, y: (x * x).sum()), {"v": "in"}),
    ("vhp", lambda lib: (lambda x, y: (x * x).sum()), {"v": "in"}),
    ("vjp_create_graph", lambda lib: (lambda x, y: x * 2.0 + y), {"v": "out", "create_graph": True}),
])
def test_strict_errors_match_torch(case):
    which, make, opts = case
    fn = which.split("_")[0]
    a = np.linspace(0.1, 0.3, 3)

    def run(lib, mod):
        x = (lib.tensor(a), lib.tensor(a + 1))
        f = make(lib)
        kwargs = {"strict": True}
        if opts.get("create_graph"):
            kwargs["create_graph"] = True
        if opts.get("v") == "out":
            kwargs["v"] = lib.tensor(np.ones(3))
        elif opts.get("v") == "in":
            kwargs["v"] = (lib.tensor(np.ones(3)), lib.tensor(np.ones(3)))
        return _message(lambda: getattr(mod, fn)(f, x, **kwargs))

    assert run(rg, F) == run(torch, TF)


def test_argument_errors_match_torch():
    x = (rg.tensor(np.ones(3)), rg.tensor(np.ones(3)))
    tx = (torch.ones(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64))
    f = lambda a, b: a * b       # noqa: E731
    # v of the wrong size / length, v omitted for a non-scalar output
    for args, targs in [((f, x, rg.tensor(np.ones(2))), (f, tx, torch.ones(2, dtype=torch.float64))),
                        ((f, x), (f, tx))]:
        assert _message(lambda: F.vjp(*args)) == _message(lambda: TF.vjp(*targs))
    assert (_message(lambda: F.jvp(f, x, (rg.tensor(np.ones(3)),)))
            == _message(lambda: TF.jvp(f, tx, (torch.ones(3, dtype=torch.float64),))))
    assert (_message(lambda: F.hvp(f, x, x)) == _message(lambda: TF.hvp(f, tx, tx)))
    with pytest.raises(TypeError, match="must be either a Tensor or a tuple of Tensors"):
        F.vjp(f, (x[0], 3.0))


def test_jacobian_strategies():
    x = rg.tensor(np.ones(3))
    f = lambda a: a * 2.0        # noqa: E731
    with pytest.raises(RuntimeError, match="strict=True` and `vectorized=True"):
        F.jacobian(f, x, strict=True, vectorize=True)
    with pytest.raises(NotImplementedError, match="only implemented for `vectorize=True`"):
        F.jacobian(f, x, strategy="forward-mode")
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(sys.modules, "retrograd.forward_ad", None)     # as if not installed
        with pytest.raises(RuntimeError, match="retrograd-forward-ad"):
            F.jacobian(f, x, strategy="forward-mode", vectorize=True)
    with pytest.raises(ValueError, match="forward-mode.*reverse-mode"):
        F.jacobian(f, x, strategy="sideways")


def test_inputs_captured_by_the_function_are_not_differentiated():
    # torch re-wraps the inputs, so a tensor the function closes over (even
    # the same object the caller passes) is a constant for the jacobian.
    x = rg.tensor(np.array([1.0, 2.0]))
    tx = torch.tensor([1.0, 2.0], dtype=torch.float64)
    _same(F.jacobian(lambda a: a * x, x), TF.jacobian(lambda a: a * tx, tx))


def test_forward_mode_outer_strategy_is_refused_clearly():
    x = rg.tensor(np.ones(3))
    f = lambda a: (a * a).sum()      # noqa: E731
    with pytest.raises(NotImplementedError, match="only implemented for `vectorize=True`"):
        F.hessian(f, x, outer_jacobian_strategy="forward-mode")
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(sys.modules, "retrograd.forward_ad", None)
        with pytest.raises(RuntimeError, match="retrograd-forward-ad"):
            F.hessian(f, x, outer_jacobian_strategy="forward-mode", vectorize=True)
    with pytest.raises(NotImplementedError, match="create_graph=True"):
        F.jacobian(f, x, strategy="forward-mode", create_graph=True)


def test_hessian_must_be_scalar():
    x = rg.tensor(np.ones(3))
    tx = torch.ones(3, dtype=torch.float64)
    assert (_message(lambda: F.hessian(lambda a: a * a, x))
            == _message(lambda: TF.hessian(lambda a: a * a, tx)))
    assert (_message(lambda: F.hessian(lambda a: (a, a.sum()), x))
            == _message(lambda: TF.hessian(lambda a: (a, a.sum()), tx)))
