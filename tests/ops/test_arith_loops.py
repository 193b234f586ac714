"""add, sub, mul, div and neg run a C loop (_elementwise_loops.pyx,
`fast_kernel:` in derivatives.yaml) on C-contiguous float32/float64 arrays
of one dtype and shape, or one such array and a Python scalar. IEEE
arithmetic is exactly rounded, so the loop must give the NumPy ufunc's
result bit for bit (NaN bits, signed zeros and infinities included), in
the ufunc's dtype; every other input (broadcasting, mixed dtypes, integer
arrays, scalars a double cannot hold, alpha) must still be computed by
the ufunc."""
import operator
import threading
import warnings

import numpy as np
import pytest

import retrograd as rg
from _arrays import values  # noqa: E402

OPS = {
    "add": (operator.add, np.add),
    "sub": (operator.sub, np.subtract),
    "mul": (operator.mul, np.multiply),
    "div": (operator.truediv, np.true_divide),
}
DTYPES = [np.float32, np.float64]


def _specials(dtype, n=40, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n).astype(dtype) * dtype(10)
    info = np.finfo(dtype)
    x[:12] = [0.0, -0.0, np.inf, -np.inf, np.nan, info.max, -info.max, info.tiny,
              info.smallest_subnormal, 1.0, -1.0, 3.0]
    return x


def _ufunc(ufunc, a, b):
    with np.errstate(all="ignore"):
        return values(ufunc(a, b))


def _same_bits(got, ref):
    got, ref = values(got), values(ref)
    assert got.dtype == ref.dtype
    assert got.shape == ref.shape
    assert got.tobytes() == ref.tobytes()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", sorted(OPS))
def test_array_array_bits_are_the_ufuncs(op, dtype):
    pyop, ufunc = OPS[op]
    a0, b0 = _specials(dtype), _specials(dtype, seed=1)[::-1].copy()
    b0[:5] = [0.0, -0.0, np.inf, np.nan, -np.inf]      # 0/0, inf-inf, 0*inf, ...
    _same_bits(pyop(rg.tensor(a0), rg.tensor(b0)), _ufunc(ufunc, a0, b0))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("scalar", [1.01, -0.0, 0, 7, 1e300, float("inf"), float("nan"), 2 ** 53, -(2 ** 53)],
                         ids=lambda s: repr(s))
def test_array_scalar_both_orders_bits_are_the_ufuncs(op, dtype, scalar):
    # the scalar is cast to the array's dtype first (NumPy's weak scalar):
    # 1e300 becomes inf for float32, 1.01 rounds to float32's nearest
    pyop, ufunc = OPS[op]
    a0 = _specials(dtype)
    x = rg.tensor(a0)
    _same_bits(pyop(x, scalar), _ufunc(ufunc, a0, scalar))
    _same_bits(pyop(scalar, x), _ufunc(ufunc, scalar, a0))


@pytest.mark.parametrize("dtype", DTYPES)
def test_neg_bits_are_the_ufuncs(dtype):
    a0 = _specials(dtype)
    _same_bits(-rg.tensor(a0), np.negative(a0))


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("shape", [(), (0,), (3, 0), (1,), (7, 5), (2, 3, 4)])
def test_shapes_zero_d_and_empty(op, shape):
    pyop, ufunc = OPS[op]
    rng = np.random.default_rng(2)
    a0 = values(rng.uniform(1, 2, size=shape))
    b0 = values(rng.uniform(1, 2, size=shape))
    y = pyop(rg.tensor(a0), rg.tensor(b0))
    assert y.shape == shape
    _same_bits(y, _ufunc(ufunc, a0, b0))
    _same_bits(pyop(rg.tensor(a0), 2.5), _ufunc(ufunc, a0, 2.5))


@pytest.mark.parametrize("op", sorted(OPS))
def test_large_arrays_release_the_gil_and_stay_exact(op):
    # past the size where the loop runs without the GIL: another thread
    # computing at the same time gets its own, right results
    pyop, ufunc = OPS[op]
    rng = np.random.default_rng(3)
    a0, b0 = rng.standard_normal(200_000), rng.uniform(1, 2, 200_000)
    results = {}

    def work(k):
        results[k] = pyop(rg.tensor(a0 * k), rg.tensor(b0))

    threads = [threading.Thread(target=work, args=(k,)) for k in (1, 2, 3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in (1, 2, 3):
        _same_bits(results[k], _ufunc(ufunc, a0 * k, b0))


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("case", ["broadcast", "mixed_dtypes", "int_arrays", "bool_scalar", "huge_int",
                                  "float16", "zero_d_operand", "numpy_scalar"])
def test_inputs_the_loop_does_not_take_are_the_ufuncs(op, case):
    pyop, ufunc = OPS[op]
    rng = np.random.default_rng(4)
    a0 = rng.uniform(1, 2, (3, 4))
    b = {
        "broadcast": rng.uniform(1, 2, (4,)),
        "mixed_dtypes": rng.uniform(1, 2, (3, 4)).astype(np.float32),
        "int_arrays": None,
        "bool_scalar": True,
        "huge_int": 2 ** 60 + 1,
        "float16": None,
        "zero_d_operand": np.array(1.5),
        "numpy_scalar": np.float32(1.5),
    }[case]
    if case == "int_arrays":
        a0, b = np.arange(1, 13).reshape(3, 4), np.arange(2, 14).reshape(3, 4)
        ref = _ufunc(ufunc, a0, b)          # (int / int: float64, NumPy's promotion; see docs/from_pytorch.md)
    elif case == "float16":
        a0 = a0.astype(np.float16)
        b = rng.uniform(1, 2, (3, 4)).astype(np.float16)
        ref = _ufunc(ufunc, a0, b)
    else:
        ref = _ufunc(ufunc, a0, b)
    bt = rg.tensor(b) if isinstance(b, np.ndarray) and b.ndim else b
    got = pyop(rg.tensor(a0), bt)
    np.testing.assert_array_equal(values(got), ref)
    assert values(got).dtype == ref.dtype


@pytest.mark.parametrize("alpha", [2, 0.5, -1])
@pytest.mark.parametrize("op", ["add", "sub"])
def test_alpha_takes_the_ufunc_path(op, alpha):
    a0, b0 = np.array([1.0, 2.0, 3.0]), np.array([0.5, 0.25, 0.125])
    got = getattr(rg, op)(rg.tensor(a0), rg.tensor(b0), alpha=alpha)
    want = a0 + alpha * b0 if op == "add" else a0 - alpha * b0
    np.testing.assert_array_equal(values(got), want)


def test_gradients_through_the_loops():
    x = rg.tensor([1.0, 2.0, 4.0], requires_grad=True)
    y = rg.tensor([0.5, -1.0, 2.0], requires_grad=True)
    z = ((x * y + x) / y - 2.0 * x) - (-y)
    gx, gy = rg.autograd.grad(z.sum(), [x, y])
    x0, y0 = np.array([1.0, 2.0, 4.0]), np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(values(gx), 1 + 1 / y0 - 2)
    np.testing.assert_allclose(values(gy), -x0 / y0 ** 2 + 1)


def test_overflow_is_silent_and_inf():
    # torch gives inf without a word; NumPy's multiply would warn
    x = rg.tensor([1e308, -1e308], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = x * 10.0
        z = x + x
        w = x / 1e-10
    for t in (y, z, w):
        np.testing.assert_array_equal(values(t), [np.inf, -np.inf])
