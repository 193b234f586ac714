"""Without CuPy, asking for a CUDA tensor is a clear RuntimeError that says
what to install (never an ImportError from deep inside, never a CPU tensor
labelled cuda)."""
import importlib.util

import numpy as np
import pytest

import retrograd as rg

pytestmark = pytest.mark.skipif(importlib.util.find_spec("cupy") is not None,
                                reason="CuPy is installed here (tests/cuda covers CUDA tensors)")


@pytest.mark.parametrize("make", [
    lambda: rg.tensor([1.0, 2.0], device="cuda"),
    lambda: rg.zeros(2, device="cuda:0"),
    lambda: rg.tensor(np.ones(3)).cuda(),
    lambda: rg.tensor(np.ones(3), requires_grad=True).to("cuda"),
])
def test_cuda_tensor_without_cupy(make):
    with pytest.raises(RuntimeError, match="CuPy"):
        make()
