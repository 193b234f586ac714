"""Cases the full-size fuzz (`nox -s fuzz`) found, each checked against torch
2.13."""
import numpy as np
import pytest

import retrograd as rg
import retrograd.nn.functional as F

torch = pytest.importorskip("torch")


def test_var_gradient_of_an_infinite_single_element_is_nan():
    # no degrees of freedom: torch's 2/0 * (x - mean) is NaN where x - mean
    # is NaN (inf - inf), not inf
    for value in (float("inf"), float("-inf"), 2.0):
        x = rg.tensor(value, requires_grad=True)
        tx = torch.tensor(value, dtype=torch.float64, requires_grad=True)
        rg.var(x).backward()
        torch.var(tx).backward()
        np.testing.assert_array_equal(np.asarray(x.grad), tx.grad.numpy())


def test_lerp_of_integer_start_and_float_end_raises_runtime_error_as_torch():
    start, end = rg.ones((4, 1), dtype=rg.uint8), rg.ones((4, 1))
    with pytest.raises(RuntimeError, match="expected dtype uint8 for `end`"):
        rg.lerp(start, end, 0.3)
    with pytest.raises(RuntimeError):
        torch.lerp(torch.ones(4, 1, dtype=torch.uint8), torch.ones(4, 1, dtype=torch.float64), 0.3)
    # same integer dtype on both: no kernel, as torch's NotImplementedError
    with pytest.raises(NotImplementedError):
        rg.lerp(start, start, 0.3)
    with pytest.raises(NotImplementedError):
        torch.lerp(torch.ones(2, dtype=torch.uint8), torch.ones(2, dtype=torch.uint8), 0.3)


@pytest.mark.parametrize("dtype", ["int64", "bool"])
def test_layer_norm_of_integer_input_is_not_implemented_as_torch(dtype):
    with pytest.raises(NotImplementedError, match="layer_norm"):
        F.layer_norm(rg.ones((2, 3), dtype=dtype), (3,))
    with pytest.raises(NotImplementedError):
        torch.nn.functional.layer_norm(torch.ones(2, 3, dtype=getattr(torch, dtype)), (3,))
