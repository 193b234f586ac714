"""Behaviours from torch's test/test_autograd.py, translated (part c2): TestAutogradDeviceType on CPU and
TestMultithreadAutograd, from the tests whose ``def test_`` line starts after character 184,000 of the stored
copy. test_torch_autograd_c1.py has the TestAutogradComplex and TestAutogradFunctional tests of that part.

Of the 54 torch tests of these two classes, 25 are translated here and 29 excluded.
test_min_max_median_backprops_to_all_values keeps min and max (median is missing); test_copy_ keeps
float16/32/64 (bfloat16 is missing); test_leaky_relu_inplace_with_neg_slope keeps leaky_relu_ (rrelu_ is
missing). Dtype-parametrized torch tests are parametrized here too.

Excluded:
test_cdist: needs cdist, which retrograd does not have
test_cdist_same_inputs: needs cdist
test_parameter_resize: needs Tensor.set_, which retrograd does not have
test_sparse_ctor_getter_backward: sparse tensors
test_sparse_mask_autograd: sparse tensors
test_advanced_indexing_backwards_large: CUDA only
test_advanced_indexing_backwards_memory_format: needs channels_last / Tensor.contiguous(memory_format=)
test_reentrant_parent_error_on_cpu: CUDA only (CUDA memory leak check)
test_pdist_large: needs pdist, which retrograd does not have
test_ctc_loss: needs nn.functional.ctc_loss, which retrograd does not have
test_ctc_loss_cudnn: CUDA only
test_free_unneeded_tensor: CUDA only
test_pin_memory: CUDA only
test_profiler_emit_nvtx: CUDA only
test_rnn_backward_to_input_but_not_parameters: CUDA only
test_lstmcell_backward_only_one_output_grad: CUDA only
test_LSTM_grad_and_gradgrad: needs nn.LSTM, which retrograd does not have
test_GRU_grad_and_gradgrad: needs nn.GRU, which retrograd does not have
test_unused_output_device: needs two devices (CUDA Broadcast); skipped on CPU in torch
test_backward_device: needs two devices; skipped on CPU in torch
test_inputbuffer_add_multidevice: needs two devices; skipped on CPU in torch
test_simple_reentrant_cross_device: CUDA only
test_cross_device_reentrant_autograd: CUDA only
test_inplace_view_multi_output_unsafe: needs unsafe_split / unsafe_split_with_sizes / unsafe_chunk
test_inplace_view_multi_output_safe: fails on torch 2.13 (the in-place write now raises instead of warning)
test_logcumsumexp_large_value: needs logcumsumexp, which retrograd does not have
test_strided_leaf_grad_layout: needs Tensor.stride, channels_last and empty_strided
test_atleast: needs atleast_1d / atleast_2d / atleast_3d, which retrograd does not have
test_fork_join_in_middle: torch.jit (fork/join of TorchScript functions)
"""
import math
import sys
import threading

import numpy as np
import pytest

import retrograd as rg
from retrograd.autograd import gradcheck, gradgradcheck

_GEN = np.random.default_rng(232000)


def _randn(*shape, grad=True):
    return rg.tensor(_GEN.standard_normal(shape), requires_grad=grad)


def _np(t):
    return t.detach().numpy()


# -- TestAutogradDeviceType, on CPU ------------------------------------------------------------------------------

@pytest.mark.parametrize("reduce", ["min", "max"])
def test_min_max_backprops_to_all_values(reduce):
    """Torch's test_min_max_median_backprops_to_all_values, without median: ties share the gradient."""
    x = rg.tensor([1.0, 0.0, 1.0, 0.0, 1.0, 0.0], requires_grad=True)
    getattr(rg, reduce)(x).backward()
    g = _np(x.grad)
    assert g.sum() == pytest.approx(1.0)
    assert int((g == 1 / 3).sum()) == 3


def test_pyscalar_conversions():
    ints = rg.zeros(1, 1, 1, dtype=rg.long)
    ints[0] = -12345
    assert int(ints) == -12345

    flts = rg.randn(1, 1, dtype=rg.double)
    flts[0] = -12345.1
    assert float(flts) == -12345.1
    flts[0] = math.nan
    assert math.isnan(float(flts))
    for special in (math.inf, -math.inf):
        flts[0] = special
        assert float(flts) == special

    big = 1234567890123456789
    assert int(float(big)) != big
    ints[0] = big
    assert float(ints) == float(big)

    flts[0] = math.nan
    with pytest.raises(ValueError):
        int(flts[0])
    for special in (math.inf, -math.inf):
        flts[0] = special
        with pytest.raises(OverflowError):
            int(flts[0])
    flts[0] = sys.float_info.max
    assert int(flts) == sys.float_info.max

    for t, value, truth in [(ints, 0, False), (ints, -2, True), (flts, 0.0, False),
                            (flts, sys.float_info.min, True), (flts, math.nan, True),
                            (flts, math.inf, True), (flts, -math.inf, True)]:
        t[0] = value
        assert bool(t) is truth
        assert (1 if t else 0) == int(truth)


@pytest.mark.parametrize("dtype", ["float", "double", "int8", "int16", "int32", "int64"])
def test_set_requires_grad_only_for_floats(dtype):
    dt = getattr(rg, dtype)
    t = rg.ones(1, dtype=dt)
    t.requires_grad = False
    t.requires_grad_(False)
    assert not t.requires_grad

    def by_method():
        rg.ones(1, dtype=dt).requires_grad_()

    def by_attribute():
        rg.ones(1, dtype=dt).requires_grad = True

    def by_factory():
        rg.ones(1, dtype=dt, requires_grad=True)

    for attempt in (by_method, by_attribute, by_factory):
        if dtype in ("float", "double"):
            attempt()
        else:
            with pytest.raises(RuntimeError, match="floating point"):
                attempt()


_MASK = rg.tensor(np.array([[1, 0, 1, 1, 0], [0, 0, 1, 0, 1], [1, 1, 0, 0, 0],
                            [0, 1, 0, 1, 1], [1, 0, 0, 1, 0]], dtype=bool))


def _pick(cond, a, b):
    return rg.where(cond, a, b)


def test_where_functional():
    a, b = _randn(5, 5), _randn(5, 5)
    assert gradcheck(_pick, [_MASK, a, b])
    assert gradgradcheck(_pick, [_MASK, a, b], [_randn(5, 5, grad=False)])

    a, b = _randn(5, 1, 5), _randn(5, 5, 1)
    assert gradcheck(_pick, [_MASK, a, b])
    assert gradgradcheck(_pick, [_MASK, a, b], [_randn(5, 5, 5, grad=False)])


def test_where_scalar():
    a = _randn(5, 5)

    def scalar_first(cond, t):
        return rg.where(cond, 4.0, t)

    def scalar_second(cond, t):
        return rg.where(cond, t, 4.0)

    for fn in (scalar_first, scalar_second):
        assert gradcheck(fn, (_MASK, a))
        assert gradgradcheck(fn, (_MASK, a))


def test_leaky_relu_inplace_with_neg_slope():
    """Torch's test also checks rrelu_, which retrograd does not have."""
    a = rg.tensor([-1.0, 1.0], requires_grad=True)
    out = rg.nn.functional.leaky_relu_(a.clone(), -2)
    with pytest.raises(RuntimeError, match="call out-of-place version"):
        out.backward(rg.ones(2))


def test_leaky_relu_inplace_with_zero_slope():
    a = rg.tensor([-2.0, 0.0, 2.0], requires_grad=True)
    rg.nn.functional.leaky_relu_(a.clone(), 0.0).backward(rg.ones(3))
    np.testing.assert_array_equal(_np(a.grad), [0.0, 0.0, 1.0])


def test_grad_assignment():
    t = rg.randn(5, 5)
    with pytest.raises(RuntimeError):
        t.grad = rg.randn(2, 2)
    with pytest.raises(RuntimeError):
        t.grad = rg.zeros(5, 5, dtype=rg.long)
    with pytest.raises(RuntimeError):
        t.grad = t


@pytest.mark.parametrize("dtype", ["float", "double"])
def test_requires_grad_factory(dtype):
    dt = getattr(rg, dtype)
    src = rg.randn(2, 3, dtype=dt)
    for factory in (rg.ones_like, rg.randn_like):
        for flag in (True, False):
            made = factory(src, dtype=dt, device="cpu", requires_grad=flag)
            assert made.requires_grad is flag
            assert made.dtype == dt
            assert str(made.device) == "cpu"


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_copy_(dtype):
    """Torch's test_copy_ on the floating dtypes retrograd has (no bfloat16)."""
    dt = getattr(rg, dtype)
    src = rg.randn(10, requires_grad=True)
    dst = rg.empty(10, dtype=dt)
    dst.copy_(src)
    assert dst.requires_grad
    assert src.to(dt).requires_grad


def test_inplace_view_backprop_base():
    root = _randn(2, 2)
    base = root.clone()
    base.narrow(0, 0, 1).mul_(2)
    base.sum().backward()
    assert root.grad.tolist() == [[2.0, 2.0], [1.0, 1.0]]


def test_inplace_view_backprop_view_of_view():
    root = _randn(2, 2)
    base = root.clone()
    first, second = base.narrow(0, 0, 1), base.narrow(0, 0, 1)
    first.mul_(2)
    second.sum().backward()
    assert root.grad.tolist() == [[2.0, 2.0], [0.0, 0.0]]


def test_inplace_view_of_view():
    root = _randn(2, 2)
    base = root.clone()
    base.narrow(0, 0, 1).narrow(1, 1, 1).mul_(2)
    base.sum().backward()
    assert root.grad.tolist() == [[1.0, 2.0], [1.0, 1.0]]


def test_inplace_view_gradcheck():
    def scale_two_blocks(root, factor):
        out = root.clone()
        out.narrow(1, 2, 2).narrow(0, 1, 2).mul_(factor)
        out.narrow(1, 0, 2).narrow(0, 1, 2).mul_(factor)
        return out

    a, b = _randn(4, 4), _randn(2, 2)
    assert gradcheck(scale_two_blocks, [a, b])
    assert gradgradcheck(scale_two_blocks, (a, b), (_randn(4, 4),))


def test_inplace_view_multiple_outputs():
    base = rg.arange(9.0).reshape(3, 3).requires_grad_().clone()
    rows = base.unbind()
    with pytest.raises(RuntimeError):
        rows[0].mul_(2)


def test_inplace_view_makes_base_require_grad():
    flags = []

    def write_columns(root, cols):
        out = root.clone()
        flags.append(out.requires_grad)
        out.narrow(1, 2, 2).mul_(cols)
        flags.append(out.requires_grad)
        return out

    a, b = _randn(4, 4, grad=False), _randn(4, 2)
    assert gradcheck(write_columns, [a, b])
    assert flags[:2] == [False, True]
    assert gradgradcheck(write_columns, (a, b), (_randn(4, 4),))


def test_inplace_view_backprop_view():
    a = rg.tensor([2.0, 5.0])
    b = rg.tensor([3.0], requires_grad=True)
    a.narrow(0, 1, 1).mul_(b).sum().backward()
    assert b.grad.tolist() == [5.0]
    assert a.grad is None


def test_inplace_view_modify_base():
    seen = []

    def through_base(r):
        buf = rg.ones(5)
        picked = buf.select(0, 1)
        seen.append((picked.requires_grad, picked.grad_fn is None))
        buf.add_(r)
        seen.append((picked.requires_grad, None))
        return picked

    r = rg.ones(1, dtype=rg.double, requires_grad=True)
    assert gradcheck(through_base, [r])
    assert gradgradcheck(through_base, [r])
    assert seen[0] == (False, True)
    assert seen[1][0] is True


class _DirtyAdd(rg.autograd.Function):
    @staticmethod
    def forward(ctx, target, other):
        ctx.mark_dirty(target)
        target.add_(other)
        return target

    @staticmethod
    def backward(ctx, grad):
        return grad, grad


def test_inplace_view_python():
    def add_into_blocks(root, other):
        out = root.clone()
        _DirtyAdd.apply(out.narrow(1, 2, 2).narrow(0, 1, 2), other)
        _DirtyAdd.apply(out.narrow(1, 0, 2).narrow(0, 1, 2), other)
        return out

    a, b = _randn(4, 4), _randn(2, 2)
    assert gradcheck(add_into_blocks, [a, b])
    assert gradgradcheck(add_into_blocks, (a, b), (_randn(4, 4),))


def test_inplace_view_non_contig():
    root = rg.ones(2, 3, 2).select(2, 1).t().requires_grad_(True)
    base = root.clone()
    base.narrow(0, 0, 1).narrow(1, 1, 1).mul_(2)
    base.sum().backward()
    assert root.grad.tolist() == [[1.0, 2.0], [1.0, 1.0], [1.0, 1.0]]


def test_mv_grad_stride_0():
    mat = _randn(2, 2, grad=False)

    def spread(vec):
        return (mat @ vec.expand(2)).sum()

    vec = _randn(1)
    assert gradcheck(spread, vec)
    assert gradgradcheck(spread, vec)


def test_movedim():
    x = _randn(4, 3, 2, 1)
    for src, dst in [((0, 1, 2, 3), (3, 2, 1, 0)), ((0, -1, -2, -3), (-3, -2, -1, -0))]:
        assert gradcheck(lambda t, s=src, d=dst: rg.movedim(t, s, d), x)
        assert gradgradcheck(lambda t, s=src, d=dst: rg.movedim(t, s, d), x)


# -- TestMultithreadAutograd -------------------------------------------------------------------------------------

def _in_threads(target, args=(), count=10):
    """Run target(*args) in count threads; return the exceptions they raised."""
    errors = []

    def guarded():
        try:
            target(*args)
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            errors.append(exc)

    workers = [threading.Thread(target=guarded) for _ in range(count)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return errors


def test_simple_backward():
    def train():
        x = rg.ones(5, 5, requires_grad=True)
        ((x + 3) * (x + 4) * 0.5).sum().backward()
        np.testing.assert_allclose(_np(x.grad), np.full((5, 5), 4.5))

    assert _in_threads(train) == []


def test_simple_backward_same_input():
    shared = rg.ones(5, 5, requires_grad=True)

    def accumulate(x):
        ((x + 3) * (x + 4) * 0.5).sum().backward()

    assert _in_threads(accumulate, (shared,)) == []
    np.testing.assert_allclose(_np(shared.grad), np.full((5, 5), 45.0))

    def functional(x):
        got = rg.autograd.grad(((x + 3) * (x + 4) * 0.5).sum(), x)
        assert len(got) == 1
        np.testing.assert_allclose(_np(got[0]), np.full((5, 5), 4.5))

    assert _in_threads(functional, (shared,)) == []


def test_python_thread_in_middle():
    def finish(middle, **kw):
        (middle + middle ** 2).sum().backward(**kw)

    leaf = rg.ones(5, 5, requires_grad=True)
    middle = leaf + leaf ** 2
    errors = _in_threads(finish, (middle,), count=5)
    assert len(errors) <= 4
    for exc in errors:
        assert isinstance(exc, RuntimeError)
        assert "Specify retain_graph=True" in str(exc)

    leaf = rg.ones(5, 5, requires_grad=True)
    middle = leaf + leaf ** 2
    assert _in_threads(lambda m: finish(m, retain_graph=True), (middle,), count=5) == []
    # d/dx of (x + x^2) + (x + x^2)^2 at x = 1 is 1 + 2 + 2 * 2 * 3 = 15, five times over
    np.testing.assert_allclose(_np(leaf.grad), np.full((5, 5), 75.0))
