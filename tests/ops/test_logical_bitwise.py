"""The logical ops (logical_and/or/xor/not) and the bitwise ops with their
operators (&, |, ^, ~ and the in-place &=, |=, ^=) against torch: values,
result dtypes (a Python int does not widen an integer tensor; bool with int
gives the int), the refusal of float tensors by the bitwise ops, and that
no result requires grad."""
import operator

import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")

_INT_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64"]


def _values(dtype, n=6, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.integers(0, 2, n).astype(bool)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -100), min(info.max, 100), n).astype(dtype)


def _same(got, ref):
    assert isinstance(got, rg.Tensor)
    assert str(got.dtype) == str(ref.dtype).replace("torch.", "")
    np.testing.assert_array_equal(got.numpy(), ref.numpy())


@pytest.mark.parametrize("op", [operator.and_, operator.or_, operator.xor])
@pytest.mark.parametrize("da", _INT_DTYPES)
@pytest.mark.parametrize("db", _INT_DTYPES)
def test_binary_bitwise_operators_match_torch_for_every_pair_of_integer_dtypes(op, da, db):
    a, b = _values(da), _values(db, seed=1)
    _same(op(rg.tensor(a), rg.tensor(b)), op(torch.from_numpy(a), torch.from_numpy(b)))


@pytest.mark.parametrize("name", ["bitwise_and", "bitwise_or", "bitwise_xor"])
@pytest.mark.parametrize("dtype", _INT_DTYPES)
@pytest.mark.parametrize("scalar", [0, 6, True, -3])
def test_python_scalars_on_either_side_keep_torchs_dtype(name, dtype, scalar):
    if dtype == "uint8" and scalar == -3:
        pytest.skip("torch wraps a negative Python int into uint8; NumPy refuses it")
    a = _values(dtype)
    _same(getattr(rg, name)(rg.tensor(a), scalar), getattr(torch, name)(torch.from_numpy(a), scalar))
    op = {"bitwise_and": operator.and_, "bitwise_or": operator.or_, "bitwise_xor": operator.xor}[name]
    _same(op(scalar, rg.tensor(a)), op(scalar, torch.from_numpy(a)))


@pytest.mark.parametrize("dtype", _INT_DTYPES)
def test_invert_matches_torch(dtype):
    a = _values(dtype)
    _same(~rg.tensor(a), ~torch.from_numpy(a))
    _same(rg.bitwise_not(rg.tensor(a)), torch.bitwise_not(torch.from_numpy(a)))


@pytest.mark.parametrize("name", ["logical_and", "logical_or", "logical_xor"])
@pytest.mark.parametrize("da,db", [("float64", "float64"), ("float32", "int64"), ("bool", "float64"),
                                   ("int32", "uint8"), ("complex128", "float64")])
def test_logical_ops_take_any_dtype_and_give_bool(name, da, db):
    def operand(dtype, floats, seed):
        # zeros, NaN (nonzero: True) and other values; integer and bool
        # operands drawn (NaN has no integer value)
        if dtype == "bool" or "int" in dtype:
            return _values(dtype, seed=seed)
        return np.array(floats).astype(dtype)

    a = operand(da, [0.0, 1.0, -2.5, np.nan, 0.0, 3.0], 3)
    b = operand(db, [1.0, 0.0, 0.0, 0.0, 0.0, np.nan], 2)
    got = getattr(rg, name)(rg.tensor(a), rg.tensor(b))
    _same(got, getattr(torch, name)(torch.from_numpy(a), torch.from_numpy(b)))
    _same(getattr(rg.tensor(a), name)(rg.tensor(b)), getattr(torch.from_numpy(a), name)(torch.from_numpy(b)))


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "bool", "complex64"])
def test_logical_not_matches_torch(dtype):
    a = (np.array([0.0, 1.5, np.nan, -0.0, 2.0]).astype(dtype) if dtype[0] in "fc"
         else _values(dtype))
    _same(rg.logical_not(rg.tensor(a)), torch.logical_not(torch.from_numpy(a)))
    _same(rg.tensor(a).logical_not(), torch.from_numpy(a).logical_not())


def test_logical_and_bitwise_ops_broadcast():
    a = np.array([[True], [False]])
    b = np.array([True, False, True])
    _same(rg.tensor(a) & rg.tensor(b), torch.from_numpy(a) & torch.from_numpy(b))
    _same(rg.logical_xor(rg.tensor(a), rg.tensor(b)), torch.logical_xor(torch.from_numpy(a), torch.from_numpy(b)))
    with pytest.raises(RuntimeError):
        rg.tensor([True, False]) | rg.tensor([True, False, True])


@pytest.mark.parametrize("expr", ["a & a", "a | b", "b ^ a", "rg.bitwise_and(a, b)", "a & 1.5",
                                  "rg.bitwise_not(a)"])
def test_bitwise_ops_refuse_float_tensors_with_torchs_exception_class(expr):
    a, b = rg.tensor([1.5, 0.0]), rg.tensor([1, 3])  # noqa: F841 (read by eval)
    with pytest.raises(NotImplementedError, match="integer or bool tensors"):
        eval(expr)


def test_invert_of_a_float_tensor_is_a_type_error_as_in_torch():
    with pytest.raises(TypeError, match="bitwise_not"):
        ~rg.tensor([1.0, 2.0])
    with pytest.raises(TypeError):
        ~torch.tensor([1.0, 2.0])


def test_in_place_operators_write_into_the_tensor_and_bump_its_version():
    m = rg.tensor([True, True, False])
    before = m._version
    same = m
    m &= rg.tensor([True, False, False])
    assert m is same and m._version == before + 1
    np.testing.assert_array_equal(m.numpy(), [True, False, False])
    m |= rg.tensor([False, False, True])
    m ^= rg.tensor([True, True, True])
    np.testing.assert_array_equal(m.numpy(), [False, True, False])
    n = rg.tensor([12, 10])
    n.bitwise_and_(6)
    np.testing.assert_array_equal(n.numpy(), [4, 2])
    n.bitwise_not_()
    np.testing.assert_array_equal(n.numpy(), [-5, -3])


def test_in_place_refuses_a_result_its_dtype_cannot_hold_as_torch():
    a, b = rg.tensor(np.array([1, 2], dtype=np.int32)), rg.tensor([3, 4])
    ta, tb = torch.tensor([1, 2], dtype=torch.int32), torch.tensor([3, 4])
    ta &= tb                                     # torch: int64 into int32 in place is allowed
    a &= b
    _same(a, ta)
    with pytest.raises(RuntimeError):
        tm = torch.tensor([True, False])
        tm &= torch.tensor([1, 2])
    with pytest.raises(RuntimeError):
        m = rg.tensor([True, False])
        m &= rg.tensor([1, 2])


def test_results_never_require_grad_and_take_no_part_in_backward():
    x = rg.tensor([0.0, 1.0, -2.0], requires_grad=True)
    for out in (rg.logical_and(x, x), rg.logical_not(x), rg.logical_or(x, 0), (x > 0) & (x < 1), ~(x > 0)):
        assert not out.requires_grad and out.grad_fn is None
    # a mask made with the operators selects a gradient as torch's does
    y = rg.where((x > -1) & ~(x > 0.5), x * 3, x * 0)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 0.0, 0.0])
