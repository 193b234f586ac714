"""Integer and bool inputs of floating-point ops compute as torch computes
them: in torch's default float dtype (float32), from the integer values
(sigmoid(uint8 255) is sigmoid(255.0), never sigmoid of a wrapped -255),
with torch's result dtype. NumPy alone would pick float16 for 8-bit and
bool inputs and float64 for wider integers. Ops torch does not define for
integers raise its NotImplementedError (also a TypeError). True division of
integers gives the default float dtype, as torch's (int64 / 2 is float32);
the other arithmetic operators keep NumPy's promotion (docs/from_pytorch.md).
Run with the real default dtype, float32, as torch's."""
import numpy as np
import pytest

import retrograd as rg
import retrograd.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional

pytestmark = pytest.mark.float32_default

INT_VALUES = {
    "int8": [2, 0, -3, 127, -128, 5],
    "uint8": [2, 0, 255, 7, 128, 1],
    "int32": [2, 0, -3, 100, -70, 1],
    "int64": [2, 0, -3, 100, -70, 1],
    "bool": [True, False, True, True, False, True],
}

# unary ops that compute in floating point, in torch and here
FLOAT_OPS = ["exp", "log", "sin", "cos", "tanh", "sigmoid", "exp2", "log2", "log10", "log1p", "expm1",
             "sqrt", "rsqrt", "reciprocal", "tan", "asin", "acos", "atan", "sinh", "cosh", "erf"]


def _close(got, ref):
    got = np.asarray(got)
    ref = ref.numpy()
    assert str(got.dtype) == str(ref.dtype).replace("torch.", "")
    np.testing.assert_allclose(got, ref, rtol=2e-6, atol=1e-7, equal_nan=True)


@pytest.mark.parametrize("dtype", sorted(INT_VALUES))
@pytest.mark.parametrize("op", FLOAT_OPS)
def test_unary_float_op_of_integers_matches_torch(op, dtype):
    a = np.array(INT_VALUES[dtype], dtype=dtype)
    ref = getattr(torch, op)(torch.tensor(a))
    got = getattr(rg, op)(rg.tensor(a))
    assert ref.dtype == torch.float32
    assert got.dtype == np.float32
    with np.errstate(all="ignore"):
        _close(got, ref)


@pytest.mark.parametrize("dtype", sorted(INT_VALUES))
@pytest.mark.parametrize("op", ["exp", "sqrt", "sigmoid", "log"])
def test_tensor_methods_and_numpy_ufuncs_promote_too(op, dtype):
    a = np.array(INT_VALUES[dtype], dtype=dtype)
    ref = getattr(torch.tensor(a), op)()
    _close(getattr(rg.tensor(a), op)(), ref)
    if op != "sigmoid":
        _close(getattr(np, op)(rg.tensor(a)), ref)         # __array_ufunc__ runs the op


def test_sigmoid_of_uint8_uses_the_integer_values():
    # -x in uint8 wraps (-255 == 1): sigmoid(255) came out as 0.27
    got = np.asarray(rg.sigmoid(rg.tensor(np.array([2, 0, 255], dtype=np.uint8))))
    np.testing.assert_allclose(got, 1 / (1 + np.exp(-np.array([2.0, 0.0, 255.0]))), rtol=1e-6)


@pytest.mark.parametrize("dtype", sorted(INT_VALUES))
@pytest.mark.parametrize("op", ["atan2"])
def test_binary_float_ops_of_integers_match_torch(op, dtype):
    a = np.array(INT_VALUES[dtype], dtype=dtype)
    b = np.array([1, 2, 1, 3, 1, 2], dtype=dtype)
    ref = getattr(torch, op)(torch.tensor(a), torch.tensor(b))
    _close(getattr(rg, op)(rg.tensor(a), rg.tensor(b)), ref)
    ref = getattr(torch, op)(torch.tensor(a), torch.tensor(b, dtype=torch.float64))
    _close(getattr(rg, op)(rg.tensor(a), rg.tensor(b.astype(np.float64))), ref)


@pytest.mark.parametrize("dtype", sorted(INT_VALUES))
def test_logsumexp_of_integers(dtype):
    a = np.array(INT_VALUES[dtype], dtype=dtype)
    _close(rg.logsumexp(rg.tensor(a), 0), torch.logsumexp(torch.tensor(a), 0))


def test_integer_true_division_gives_the_default_dtype_as_torch():
    # int / int is a floating-point op on integers: the default dtype, as
    # torch's; a float operand keeps NumPy's promotion (int64 * 2.5 and
    # int64 / float64 array are float64)
    i64 = rg.tensor(np.array([1, 2, 3]))
    t64 = torch.tensor([1, 2, 3])
    for got, want in [(i64 / 2, t64 / 2), (i64 / i64, t64 / t64), (rg.div(2, i64), torch.div(2, t64)),
                      (rg.true_divide(i64, 3), torch.true_divide(t64, 3))]:
        assert got.dtype == np.float32 and want.dtype == torch.float32
        np.testing.assert_allclose(np.asarray(got), want.numpy())
    assert (i64 / rg.tensor(np.array([2.0, 2.0, 2.0]))).dtype == np.float64
    rg.set_default_dtype(rg.float64)
    try:
        assert (i64 / 2).dtype == np.float64
    finally:
        rg.set_default_dtype(rg.float32)


@pytest.mark.parametrize("dtype", sorted(INT_VALUES))
@pytest.mark.parametrize("op", ["silu", "gelu", "softplus", "logsigmoid", "softmax", "log_softmax"])
def test_float_only_ops_refuse_integers_as_torch(op, dtype):
    a = np.array(INT_VALUES[dtype], dtype=dtype)
    args = (0,) if op in ("softmax", "log_softmax") else ()
    with pytest.raises(NotImplementedError):
        getattr(TF, op)(torch.tensor(a), *args)
    with pytest.raises(NotImplementedError, match=op) as info:
        getattr(F, op)(rg.tensor(a), *args)
    assert isinstance(info.value, TypeError)
    assert dtype in str(info.value)


@pytest.mark.parametrize("dtype", sorted(INT_VALUES))
def test_mean_of_integers_raises_as_torch(dtype):
    a = np.array(INT_VALUES[dtype], dtype=dtype)
    with pytest.raises(RuntimeError):
        torch.tensor(a).mean()
    with pytest.raises(RuntimeError, match="mean"):
        rg.tensor(a).mean()
    # with a float dtype given it is defined, in both
    np.testing.assert_allclose(np.asarray(rg.tensor(a).mean(dtype=np.float64)),
                               torch.tensor(a).mean(dtype=torch.float64).numpy())


def test_relu_of_bool_raises_as_torch():
    with pytest.raises(RuntimeError):
        torch.relu(torch.tensor([True, False]))
    with pytest.raises(RuntimeError, match="Boolean"):
        rg.relu(rg.tensor([True, False]))


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "int64"])
@pytest.mark.parametrize("op", ["abs", "neg", "relu", "square", "sign", "floor", "ceil", "round", "trunc"])
def test_integer_preserving_ops_keep_the_integer_dtype(op, dtype):
    a = np.array(INT_VALUES[dtype], dtype=dtype)
    ref = getattr(torch, op)(torch.tensor(a))
    got = getattr(rg, op)(rg.tensor(a))
    assert str(np.asarray(got).dtype) == str(ref.dtype).replace("torch.", "")
    np.testing.assert_array_equal(np.asarray(got), ref.numpy())


def test_sign_of_bool_is_bool_as_torch():
    a = np.array([True, False, True])
    np.testing.assert_array_equal(np.asarray(rg.sign(rg.tensor(a))), torch.sign(torch.tensor(a)).numpy())


def test_float_inputs_keep_their_dtype():
    # the promotion is for integers only: float16/32/64 compute in their own dtype
    for dt in (np.float16, np.float32, np.float64):
        x = np.array([0.5, 1.5], dtype=dt)
        for op in ("exp", "sqrt", "sigmoid", "reciprocal", "rsqrt", "erf"):
            assert getattr(rg, op)(rg.tensor(x)).dtype == dt, op


@pytest.mark.parametrize("op", ["abs", "floor", "ceil", "round", "trunc"])
def test_ops_torch_refuses_for_bool(op):
    a = np.array([True, False, True])
    with pytest.raises(NotImplementedError):
        getattr(torch, op)(torch.tensor(a))
    with pytest.raises(NotImplementedError, match=op):
        getattr(rg, op)(rg.tensor(a))


def test_neg_of_bool_raises_runtime_error_as_torch():
    a = np.array([True, False])
    with pytest.raises(RuntimeError):
        -torch.tensor(a)
    with pytest.raises(RuntimeError, match="logical_not"):
        -rg.tensor(a)
    with pytest.raises(RuntimeError, match="logical_not"):
        rg.neg(rg.tensor(a))


def test_square_of_bool_is_int64_as_torch():
    a = np.array([True, False, True])
    ref = torch.square(torch.tensor(a))
    got = rg.square(rg.tensor(a))
    assert got.dtype == np.int64 and ref.dtype == torch.int64
    np.testing.assert_array_equal(np.asarray(got), ref.numpy())
