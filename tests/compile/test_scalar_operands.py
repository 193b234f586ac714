"""Python scalars in compiled kernels: the numpy backend passes a Python
scalar operand as a 0-d array made once, of the dtype NumPy would compute
in (the tensor operands'), never of the result's dtype: a comparison's bool
result would turn the threshold 0.1 into True, that is 1.0."""
import numpy as np
import pytest

import retrograd as rg
import retrograd.compile
from retrograd.compile import _kernels, _program
from retrograd.compile._trace import Ref, Step


def _dtype_for(name, fn, args, out, slot_arrays):
    st = Step("op", name, fn, args, (len(slot_arrays) - 1,))
    k = _kernels.candidate(st, out)
    assert k is not None
    return _program._scalar_dtype(k, slot_arrays)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_comparison_threshold_takes_the_operands_float_dtype_not_bool(dtype):
    x = np.array([0.5, 2.0], dtype)
    out = x >= 0.1
    assert _dtype_for("ge", rg.ge, (Ref(0), 0.1), out, [x, out]) == np.dtype(dtype)


def test_a_float_scalar_with_an_integer_tensor_stays_a_python_scalar():
    x = np.array([1, 2], np.int64)
    out = x >= 1.5
    assert _dtype_for("ge", rg.ge, (Ref(0), 1.5), out, [x, out]) is None


def test_a_compiled_threshold_between_zero_and_one_selects_as_eager():
    f = rg.compile(lambda x: rg.where(x >= 0.1, x * 2.0, x * 0.0).sum(), backend="numpy")
    # traced where x >= 0.1 and x >= 1 agree, then called where they differ
    for values in ([2.0, -0.5, 3.0, -1.0], [0.5, 0.2, -0.3, 0.05]):
        x = rg.tensor(values, requires_grad=True)
        f(x).backward()
        want = np.where(np.array(values) >= 0.1, 2.0, 0.0)
        np.testing.assert_array_equal(x.grad.numpy(), want)
    assert f.cache_info() == {"compiled": 1, "eager": 0}
