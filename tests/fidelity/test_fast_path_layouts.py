"""Every C fast path reads its arrays through typed pointers, so it may run
only on arrays it can index as plain C arrays: native byte order, aligned,
C-contiguous. Arrays of the right dtype number but another layout
(big-endian '>f8', a view at an odd byte offset of a buffer, strided and
reversed views) must take the NumPy path and give torch's values, forward
and backward. Each test builds the same values in every layout and compares
with torch on an ordinary array.

Fast paths covered: sigmoid, silu and softplus forward and backward,
maximum/minimum backward, add/sub/mul/div/neg forward (_elementwise_loops.pyx), max_pool2d's tiled
backward (_nn_loops.pyx), conv2d's column-matrix kernels forward and both
gradients (_nn_loops.pyx), and the engine's small-gradient sum."""
import numpy as np
import pytest

import retrograd as rg
import retrograd.nn.functional as F
from _arrays import values  # noqa: E402

torch = pytest.importorskip("torch")
TF = torch.nn.functional

LAYOUTS = ["big_endian", "misaligned", "non_contiguous", "negative_stride"]
DTYPES = [np.float32, np.float64]


def _layout(a, layout):
    """The values of `a` (a native C-contiguous array) in another memory layout."""
    a = values(a)
    if layout == "big_endian":
        out = a.astype(a.dtype.newbyteorder(">"))
        assert not out.dtype.isnative
    elif layout == "misaligned":
        buf = np.zeros(a.nbytes + 1, dtype=np.uint8)
        out = buf[1:].view(a.dtype).reshape(a.shape)
        out[...] = a
        assert not out.flags.aligned
    elif layout == "non_contiguous":
        wide = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), dtype=a.dtype)
        out = wide[..., ::2]
        out[...] = a
        assert not out.flags.c_contiguous
    elif layout == "negative_stride":
        out = np.flip(np.ascontiguousarray(np.flip(a)))
        assert all(s < 0 for s, n in zip(out.strides, out.shape) if n > 1)
    else:
        raise AssertionError(layout)
    np.testing.assert_array_equal(out, a)
    return out


def _tensor(a, layout, requires_grad=False):
    # from_numpy shares the array: the op sees the layout, not a copy of it
    t = rg.from_numpy(_layout(a, layout))
    return t.requires_grad_() if requires_grad else t


def _tol(dtype):
    return dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-13)


def _check(got, ref, dtype, gemm=False):
    # gemm: sums of products in another order than torch's (float32 rounding)
    got = values(got)
    ref = ref.detach().numpy() if isinstance(ref, torch.Tensor) else values(ref)
    assert got.shape == ref.shape
    tol = dict(rtol=1e-4, atol=1e-5) if gemm and dtype == np.float32 else _tol(dtype)
    np.testing.assert_allclose(got.astype(np.float64), ref.astype(np.float64), **tol)


def _values(dtype, n=23, lo=-8.0, hi=8.0, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(lo, hi, size=(n,)).astype(dtype)


UNARY = {
    "sigmoid": (rg.sigmoid, torch.sigmoid),
    "silu": (F.silu, TF.silu),
    "softplus": (F.softplus, TF.softplus),
    "softplus_beta": (lambda x: F.softplus(x, beta=2.0, threshold=5.0),
                      lambda x: TF.softplus(x, beta=2.0, threshold=5.0)),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_loops_input_layouts(op, layout, dtype):
    rf, tf = UNARY[op]
    x0 = _values(dtype).reshape(23)
    g0 = _values(dtype, seed=1)
    x = _tensor(x0, layout, requires_grad=True)
    y = rf(x)
    (gx,) = rg.autograd.grad(y, [x], rg.tensor(g0))
    xt = torch.tensor(x0, requires_grad=True)
    yt = tf(xt)
    (gt,) = torch.autograd.grad(yt, [xt], torch.tensor(g0))
    _check(y, yt, dtype)
    _check(gx, gt, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", ["misaligned", "non_contiguous", "negative_stride"])
@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_loops_gradient_layouts(op, layout, dtype):
    # the incoming gradient in another layout (the loops read it too)
    rf, tf = UNARY[op]
    x0 = _values(dtype).reshape(23)
    g0 = _values(dtype, seed=1)
    x = rg.tensor(x0, requires_grad=True)
    (gx,) = rg.autograd.grad(rf(x), [x], _tensor(g0, layout))
    xt = torch.tensor(x0, requires_grad=True)
    (gt,) = torch.autograd.grad(tf(xt), [xt], torch.tensor(g0))
    _check(gx, gt, dtype)


def test_sigmoid_big_endian_is_not_read_as_garbage():
    # byte-swapped doubles read natively were tiny
    # numbers, and sigmoid(tiny) is 0.5
    x = rg.from_numpy(np.array([1.0, 2.0, 3.0], dtype=">f8"))
    np.testing.assert_allclose(values(rg.sigmoid(x)), 1 / (1 + np.exp(-np.array([1.0, 2.0, 3.0]))),
                               rtol=1e-15)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("op", ["maximum", "minimum"])
def test_max_min_backward_layouts(op, layout, dtype):
    # ties included: the loop halves the gradient there
    a0 = np.array([0.1, 0.5, 0.2, 0.3, -1.0, 2.0, 7.0, -3.0], dtype=dtype)
    b0 = np.array([0.3, 0.3, 0.3, 0.3, -1.0, 1.0, 8.0, -4.0], dtype=dtype)
    g0 = np.linspace(-2, 3, a0.size).astype(dtype)
    a = _tensor(a0, layout, requires_grad=True)
    b = _tensor(b0, layout, requires_grad=True)
    ga, gb = rg.autograd.grad(getattr(rg, op)(a, b), [a, b], rg.tensor(g0))
    at, bt = torch.tensor(a0, requires_grad=True), torch.tensor(b0, requires_grad=True)
    ta, tb = torch.autograd.grad(getattr(torch, op)(at, bt), [at, bt], torch.tensor(g0))
    np.testing.assert_array_equal(values(ga), ta.numpy())
    np.testing.assert_array_equal(values(gb), tb.numpy())


def test_minimum_of_big_endian_sum_backward():
    # both operands big-endian, through a sum's backward
    x = rg.from_numpy(np.array([0.1, 0.5, 0.2, 0.3], dtype=">f8")).requires_grad_()
    y = rg.from_numpy(np.full(4, 0.3, dtype=">f8"))
    rg.minimum(x, y).sum().backward()
    np.testing.assert_array_equal(values(x.grad), [1.0, 0.0, 1.0, 0.5])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("kernel", [2, 3])
def test_max_pool2d_tiled_backward_layouts(kernel, layout, dtype):
    # windows that tile the input (stride == kernel): the C loop's case
    rng = np.random.default_rng(3)
    x0 = rng.standard_normal((2, 3, 6, 6)).astype(dtype)
    x0[0, 0, :2, :2] = 1.0                   # a tied window
    x = _tensor(x0, layout, requires_grad=True)
    y = F.max_pool2d(x, kernel)
    g0 = rng.standard_normal(np.shape(y)).astype(dtype)
    for glayout in (None, "misaligned", "negative_stride"):
        g = rg.tensor(g0) if glayout is None else _tensor(g0, glayout)
        (gx,) = rg.autograd.grad(y, [x], g, retain_graph=True)
        xt = torch.tensor(x0, requires_grad=True)
        (gt,) = torch.autograd.grad(TF.max_pool2d(xt, kernel), [xt], torch.tensor(g0))
        _check(y, TF.max_pool2d(torch.tensor(x0), kernel), dtype)
        np.testing.assert_array_equal(values(gx), gt.numpy())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("which", ["input", "weight", "both"])
def test_conv2d_column_kernels_layouts(which, layout, dtype):
    # stride 1, no groups, 3 channels of 3x3 on 10x10 images: the C im2col
    # and col2im loops of _nn_loops.pyx (forward and both gradients)
    rng = np.random.default_rng(4)
    x0 = rng.standard_normal((2, 3, 10, 10)).astype(dtype)
    w0 = rng.standard_normal((4, 3, 3, 3)).astype(dtype)
    b0 = rng.standard_normal(4).astype(dtype)
    lx = layout if which in ("input", "both") else None
    lw = layout if which in ("weight", "both") else None
    x = rg.tensor(x0, requires_grad=True) if lx is None else _tensor(x0, lx, requires_grad=True)
    w = rg.tensor(w0, requires_grad=True) if lw is None else _tensor(w0, lw, requires_grad=True)
    xt, wt = torch.tensor(x0, requires_grad=True), torch.tensor(w0, requires_grad=True)
    for bias in (None, b0):
        y = F.conv2d(x, w, None if bias is None else rg.tensor(bias), padding=1)
        yt = TF.conv2d(xt, wt, None if bias is None else torch.tensor(bias), padding=1)
        g0 = rng.standard_normal(tuple(yt.shape)).astype(dtype)
        gx, gw = rg.autograd.grad(y, [x, w], rg.tensor(g0))
        tx, tw = torch.autograd.grad(yt, [xt, wt], torch.tensor(g0))
        _check(y, yt, dtype, gemm=True)
        _check(gx, tx, dtype, gemm=True)
        _check(gw, tw, dtype, gemm=True)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", ["misaligned", "non_contiguous", "negative_stride"])
def test_conv2d_gradient_layouts(layout, dtype):
    # the incoming gradient in another layout: the input gradient's GEMM
    # reads it, col2im writes the result
    rng = np.random.default_rng(5)
    x0 = rng.standard_normal((2, 3, 10, 10)).astype(dtype)
    w0 = rng.standard_normal((4, 3, 3, 3)).astype(dtype)
    x, w = rg.tensor(x0, requires_grad=True), rg.tensor(w0, requires_grad=True)
    y = F.conv2d(x, w)
    g0 = rng.standard_normal(np.shape(y)).astype(dtype)
    gx, gw = rg.autograd.grad(y, [x, w], _tensor(g0, layout))
    xt, wt = torch.tensor(x0, requires_grad=True), torch.tensor(w0, requires_grad=True)
    tx, tw = torch.autograd.grad(TF.conv2d(xt, wt), [xt, wt], torch.tensor(g0))
    _check(gx, tx, dtype, gemm=True)
    _check(gw, tw, dtype, gemm=True)


class _PassLayout(rg.autograd.Function):
    """Identity whose backward hands back the gradient in a given layout."""

    @staticmethod
    def forward(ctx, x, layout):
        ctx.layout = layout
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        return _tensor(values(g), ctx.layout), None


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_engine_small_gradient_sum_layouts(layout, dtype):
    # x feeds three branches whose gradients the engine sums in its input
    # buffer (the small-array C loop, in place when it owns the buffer)
    x0 = _values(dtype, n=17)
    x = rg.from_numpy(x0.astype(np.dtype(dtype).newbyteorder(">")) if layout == "big_endian"
                      else x0.copy()).requires_grad_()
    ys = [_PassLayout.apply(x, layout) * float(k + 1) for k in range(3)]
    (ys[0] + ys[1] + ys[2]).sum().backward()
    np.testing.assert_array_equal(values(x.grad), np.full(17, 6.0, dtype=dtype))


ARITH = {
    "add": (lambda a, b: a + b),
    "sub": (lambda a, b: a - b),
    "mul": (lambda a, b: a * b),
    "div": (lambda a, b: a / b),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("which", ["left", "right", "both", "scalar"])
@pytest.mark.parametrize("op", sorted(ARITH))
def test_arith_loops_layouts(op, which, layout, dtype):
    # exactly rounded arithmetic: NumPy's values on the native array bit for
    # bit, in any layout, and torch's (within an ulp: torch divides a float32
    # tensor by a scalar through its reciprocal)
    f = ARITH[op]
    a0, b0 = _values(dtype), _values(dtype, seed=2, lo=0.5, hi=4.0)
    a = _tensor(a0, layout, True) if which in ("left", "both", "scalar") else rg.tensor(a0, requires_grad=True)
    at = torch.tensor(a0, requires_grad=True)
    if which == "scalar":
        for s in (1.01, 3, -0.5):
            with np.errstate(all="ignore"):
                refs = (f(a0, s), f(s, a0))
            for y, yt, ref in ((f(a, s), f(at, s), refs[0]), (f(s, a), f(s, at), refs[1])):
                assert values(y).dtype == dtype
                assert values(y).tobytes() == values(ref).tobytes()
                _check(y, yt, dtype)
        return
    b = _tensor(b0, layout) if which in ("right", "both") else rg.tensor(b0)
    y, yt = f(a, b), f(at, torch.tensor(b0))
    np.testing.assert_array_equal(values(y), yt.detach().numpy())
    (ga,) = rg.autograd.grad(y.sum(), [a])
    (gt,) = torch.autograd.grad(yt.sum(), [at])
    np.testing.assert_array_equal(values(ga), gt.numpy())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_neg_loop_layouts(layout, dtype):
    x0 = _values(dtype)
    y = -_tensor(x0, layout)
    np.testing.assert_array_equal(values(y), (-torch.tensor(x0)).numpy())
