"""Tensor.type(): torch's legacy type names and conversions, against torch."""
import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")

PAIRS = [(np.float32, torch.float32), (np.float64, torch.float64), (np.float16, torch.float16),
         (np.int64, torch.int64), (np.int32, torch.int32), (np.int16, torch.int16), (np.int8, torch.int8),
         (np.uint8, torch.uint8), (np.bool_, torch.bool), (np.complex64, torch.complex64),
         (np.complex128, torch.complex128)]


@pytest.mark.parametrize("nd, td", PAIRS, ids=[str(p[1]) for p in PAIRS])
def test_names_as_torch(nd, td):
    assert rg.zeros(2, dtype=nd).type() == torch.zeros(2, dtype=td).type()


@pytest.mark.parametrize("name", ["torch.DoubleTensor", "torch.FloatTensor", "torch.LongTensor", "torch.BoolTensor"])
def test_conversion_by_name(name):
    got = rg.tensor([1.5, 0.0]).type(name)
    want = torch.tensor([1.5, 0.0]).type(name)
    assert got.type() == want.type()
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_conversion_by_dtype_keeps_the_graph():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    y = x.type(rg.float32)
    assert y.dtype == np.float32 and y.requires_grad
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0])
    assert x.type(x.dtype) is x


def test_unknown_name_is_a_value_error():
    with pytest.raises(ValueError, match="invalid type"):
        rg.tensor([1.0]).type("torch.NoSuchTensor")
