"""Per-op checks driven by the sample registry (tests/ops/op_samples.py):
gradients against finite differences, second order, float32, non-contiguous
inputs, and that the registry covers every op of derivatives.yaml."""
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import retrograd as rg  # noqa: E402
from op_samples import (  # noqa: E402
    COVERED_ELSEWHERE, DIFF_OPS, GRADGRAD_OPS, OP_DB, OPS_BY_NAME, TABLE, all_samples,
    make_tensors, noncontiguous,
)
import opcheck  # noqa: E402
from _arrays import values  # noqa: E402


# --- coverage of the table ---------------------------------------------------------

def test_every_public_op_has_samples():
    missing = [name for name, info in TABLE.items()
               if info["public"] and name not in OPS_BY_NAME]
    assert not missing, (f"ops of derivatives.yaml without samples: {missing}; add an OpInfo to "
                         "tests/ops/op_samples.py")
    for op in OP_DB:
        assert op.samples(), f"{op.name}: the sample function returned no samples"


def test_private_ops_are_covered():
    missing = [name for name, info in TABLE.items()
               if not info["public"] and name not in OPS_BY_NAME and name not in COVERED_ELSEWHERE]
    assert not missing, f"private ops neither sampled nor listed in COVERED_ELSEWHERE: {missing}"
    assert not (set(COVERED_ELSEWHERE) & {n for n, i in TABLE.items() if i["public"]})


def test_registry_matches_table():
    for op in OP_DB:
        if op.name in rg.core.SHAPE_COMPOSITES:        # composites of table ops
            continue
        assert op.name in TABLE, f"registry entry {op.name!r} is not an op of derivatives.yaml"
        assert op.differentiable == (not TABLE[op.name]["nondifferentiable"]), op.name


# --- gradients --------------------------------------------------------------------

@pytest.mark.parametrize("op,sample", all_samples(DIFF_OPS))
def test_grad_vs_finite_differences(op, sample):
    opcheck.check_grad(op, sample)


@pytest.mark.parametrize("op,sample", all_samples(GRADGRAD_OPS))
def test_gradgrad_vs_finite_differences(op, sample):
    opcheck.check_gradgrad(op, sample)


def _result_and_grads(op, sample, transform=None, v_transform=None):
    if op.differentiable and sample.diff_positions():
        v = opcheck.upstream(op, sample)
        out, grads = opcheck.vjp(op, sample, v, transform=transform, v_transform=v_transform)
        return out, grads
    targs, _ = make_tensors(sample, requires_grad=False, transform=transform)
    return op.op(*targs, **sample.kwargs), []


def _check_result_array(out, ref_shape):
    assert isinstance(out, rg.Tensor)
    arr = values(out)
    assert type(arr) is np.ndarray, f"result holds a {type(arr)}, not an ndarray"
    assert arr.shape == ref_shape, f"result shape {arr.shape}, expected {ref_shape}"


@pytest.mark.parametrize("op,sample", all_samples(OP_DB, dtype=np.float32))
def test_float32(op, sample):
    """float32 inputs: float32 results and gradients (NumPy promotion: Python
    scalars do not widen), close to the float64 computation."""
    s64 = sample.with_args([a.astype(np.float64) if isinstance(a, np.ndarray) and a.dtype == np.float32
                            else a for a in sample.args])
    out32, g32 = _result_and_grads(op, sample)
    out64, g64 = _result_and_grads(op, s64)
    _check_result_array(out32, values(out64).shape)
    if op.name == "_to_dtype":
        return
    want = np.dtype(sample.kwargs["dtype"]) if sample.kwargs.get("dtype") is not None else None
    if values(out64).dtype.kind == "f":
        assert out32.dtype == (want or np.float32), f"{op.name}: float32 inputs gave {out32.dtype}"
    np.testing.assert_allclose(values(out32), values(out64), rtol=op.f32_rtol, atol=op.f32_atol)
    for a, b in zip(g32, g64):
        assert a.dtype == np.float32, f"{op.name}: gradient of a float32 input is {a.dtype}"
        np.testing.assert_allclose(values(a), values(b), rtol=op.f32_rtol * 10, atol=op.f32_atol * 10)


@pytest.mark.parametrize("op,sample", all_samples([o for o in OP_DB if o.noncontig]))
def test_noncontiguous_inputs(op, sample):
    """Transposed / strided inputs and upstream gradients give the same values
    and gradients as contiguous ones."""
    out_c, g_c = _result_and_grads(op, sample)
    out_n, g_n = _result_and_grads(op, sample, transform=noncontiguous, v_transform=noncontiguous)
    np.testing.assert_allclose(values(out_n), values(out_c), rtol=1e-13, atol=1e-13)
    for a, b in zip(g_n, g_c):
        assert a.shape == b.shape
        np.testing.assert_allclose(values(a), values(b), rtol=1e-13, atol=1e-13)


def test_view_of_noncontiguous_is_rejected_or_a_view():
    x = rg.from_numpy(noncontiguous(np.arange(12.0).reshape(3, 4)))
    with pytest.raises(RuntimeError, match="view"):
        rg.view(x, (12,))
    y = rg.view(rg.from_numpy(noncontiguous(np.arange(12.0).reshape(3, 4))), (3, 4))
    assert y.shape == (3, 4)


# --- non-differentiable ops ----------------------------------------------------------

@pytest.mark.parametrize("op,sample", all_samples([o for o in OP_DB if not o.differentiable]))
def test_nondifferentiable_results(op, sample):
    targs, leaves = make_tensors(sample)
    out = op.op(*targs, **sample.kwargs)
    # bool (comparisons, logical ops), int64 (argmax/argmin), or the integer
    # dtype of the inputs (bitwise ops)
    ints = [a.dtype for a in sample.args if isinstance(a, np.ndarray) and a.dtype.kind in "iu"]
    # nextafter's float result has no gradient in torch either (not implemented there)
    floats = [a.dtype for a in sample.args if isinstance(a, np.ndarray)] if op.name == "nextafter" else []
    assert out.dtype == np.bool_ or out.dtype == np.int64 or out.dtype in ints or out.dtype in floats
    assert not out.requires_grad and out.grad_fn is None


# --- outputs of differentiable ops require grad exactly when an input does ----------

@pytest.mark.parametrize("op", DIFF_OPS, ids=lambda o: o.name)
def test_requires_grad_propagation(op):
    for sample in op.samples():
        targs, leaves = make_tensors(sample)
        out = op.op(*targs, **sample.kwargs)
        assert out.requires_grad == bool(leaves), (op.name, sample)
        with rg.no_grad():
            res = op.op(*targs, **sample.kwargs)
        # under no_grad nothing is recorded, but a view of a tensor that
        # requires grad still requires grad (torch's views do)
        assert res.grad_fn is None
        assert res.requires_grad == (res._base is not None and res._base.requires_grad)
        targs, _ = make_tensors(sample, requires_grad=False)
        assert not op.op(*targs, **sample.kwargs).requires_grad


# --- methods and operators of the table ---------------------------------------------

def _method_cases():
    cases = []
    for name, info in TABLE.items():
        for m in info["methods"]:
            cases.append(pytest.param(name, m, id=f"{name}.{m}"))
    return cases


_REFLECTED = {"__radd__", "__rsub__", "__rmul__", "__rtruediv__", "__rpow__", "__rmatmul__", "__rfloordiv__", "__rmod__"}


@pytest.mark.parametrize("name,method", _method_cases())
def test_table_methods_match_functions(name, method):
    op = OPS_BY_NAME[name]
    checked = 0
    for sample in op.samples():
        if method.startswith("__") and sample.kwargs:
            continue
        targs, _ = make_tensors(sample, requires_grad=False)
        if method in _REFLECTED:
            if not isinstance(targs[1], rg.Tensor):
                continue
            # y.__rsub__(x) is sub(x, y) with x a Python scalar or an ndarray
            ref = op.op(*targs)
            fwd = getattr(targs[1], method)(sample.args[0])
        elif not isinstance(sample.args[0], np.ndarray):
            continue
        else:
            ref = op.op(*targs, **sample.kwargs)
        if method in _REFLECTED:
            pass
        elif method.startswith("__") and method != "__getitem__":
            fwd = getattr(targs[0], method)(*targs[1:])
        else:
            fwd = getattr(targs[0], method)(*targs[1:], **sample.kwargs)
        np.testing.assert_array_equal(values(fwd), values(ref))
        assert fwd.dtype == ref.dtype
        checked += 1
    assert checked, f"no sample exercised {name}.{method}"


def test_reflected_operators_with_python_scalars():
    x = rg.tensor([0.5, 1.5, 2.0], requires_grad=True)
    for f, tf in [(lambda t: 2.0 + t, lambda a: 2.0 + a), (lambda t: 2.0 - t, lambda a: 2.0 - a),
                  (lambda t: 2.0 * t, lambda a: 2.0 * a), (lambda t: 2.0 / t, lambda a: 2.0 / a),
                  (lambda t: 2.0 ** t, lambda a: 2.0 ** a)]:
        y = f(x)
        np.testing.assert_allclose(values(y), tf(np.array([0.5, 1.5, 2.0])))
        g, = rg.autograd.grad(y.sum(), x)
        eps = 1e-6
        a = np.array([0.5, 1.5, 2.0])
        np.testing.assert_allclose(values(g), (tf(a + eps) - tf(a - eps)) / (2 * eps), rtol=1e-6)


# --- only some inputs require grad ---------------------------------------------------

def _multi_input_samples():
    out = []
    for p in all_samples(DIFF_OPS):
        op, sample = p.values
        if len(sample.diff_positions()) >= 2:
            out.append(p)
    return out


@pytest.mark.parametrize("op,sample", _multi_input_samples())
def test_one_input_requires_grad(op, sample):
    """A node records and saves only what the inputs that require grad need:
    differentiating one input at a time gives the same gradient (array mode
    and create_graph mode)."""
    v = opcheck.upstream(op, sample)
    _, full = opcheck.vjp(op, sample, v)
    for k, p in enumerate(sample.diff_positions()):
        targs, leaves = make_tensors(sample)
        for j, t in enumerate(leaves):
            if j != k:
                t.requires_grad_(False)
        out = op.op(*targs, **sample.kwargs)
        for create_graph in (False, True):
            g, = rg.autograd.grad(out, [leaves[k]], grad_outputs=rg.from_numpy(v.copy()),
                                  retain_graph=True, create_graph=create_graph)
            np.testing.assert_allclose(values(g), values(full[k]), rtol=1e-13, atol=1e-13)


# --- the checkers themselves catch wrong derivatives -------------------------------

def _fake(name, fn):
    from op_samples import OpInfo, SampleInput
    return OpInfo(name, lambda g: [SampleInput((g(3, 2),))], op=fn), SampleInput(
        (np.random.default_rng(0).uniform(0.5, 2, (3, 2)),))


def test_checker_detects_wrong_first_derivative():
    op, s = _fake("square_wrong", lambda x: rg.mul(x, x.detach()))       # d/dx says x, not 2x
    with pytest.raises(AssertionError, match="finite differences"):
        opcheck.check_grad(op, s)


def test_checker_detects_wrong_second_derivative():
    # value x*x, first derivative 2x (right), but it is recorded as a constant:
    # the second derivative comes out 0 instead of 2.
    op, s = _fake("square_flat", lambda x: rg.add(rg.mul(x, x.detach()),
                                                  rg.mul(rg.sub(x, x.detach()), x.detach())))
    opcheck.check_grad(op, s)
    with pytest.raises(AssertionError, match="second derivative"):
        opcheck.check_gradgrad(op, s)


# --- _to_device (a private op: Tensor.to(device)) ------------------------------------

@pytest.fixture
def virtual_device():
    n = rg.num_virtual_cpu_devices()
    rg.set_virtual_cpu_devices(max(n, 1))
    try:
        yield "cpu:1"
    finally:
        rg.set_virtual_cpu_devices(n)


def test_to_device_gradients(virtual_device):
    from op_samples import OpInfo, SampleInput
    op = OpInfo("_to_device", lambda g: [], op=lambda x: rg.mul(x.to(virtual_device), 2.0).to("cpu"))
    s = SampleInput((np.random.default_rng(0).standard_normal((3, 2)),))
    x = rg.tensor(s.args[0], requires_grad=True)
    y = x.to(virtual_device)
    assert str(y.device) == virtual_device and y.grad_fn.name() == "ToDeviceBackward0"
    opcheck.check_grad(op, s)
    opcheck.check_gradgrad(op, s)


@pytest.mark.parametrize("sym", ["+", "-", "*", "/", "**", "@"])
def test_ndarray_on_the_left_keeps_the_graph(sym):
    """`ndarray <op> tensor` dispatches to the tensor's reflected operator (the
    table's `reflected` methods), so the result is a Tensor with a graph."""
    a = np.array([0.5, 1.5, 2.0])  # noqa: F841 (used by eval)
    x = rg.tensor([1.0, 2.0, 3.0], requires_grad=True)  # noqa: F841 (used by eval)
    y = eval(f"a {sym} x")
    assert isinstance(y, rg.Tensor) and y.grad_fn is not None
    np.testing.assert_allclose(values(y), eval(f"a {sym} np.array([1.0, 2.0, 3.0])"))
