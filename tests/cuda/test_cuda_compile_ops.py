"""Every op sample of the registry through rg.compile on CUDA tensors,
against eager on CUDA: values, gradients and second-order gradients, in
float64 and float32 (tests/compile/test_compile_ops.py, on the device)."""
import os
import sys

import numpy as np
import pytest

from _cuda import require_cuda

require_cuda()
pytest.importorskip("retrograd.compile", reason="needs retrograd-compile")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "compile"))

from test_compile_ops import EAGER_OPS, check_every_op_sample  # noqa: E402


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
def test_every_op_sample_compiles_on_cuda_and_agrees(dtype):
    check_every_op_sample(dtype, device="cuda", eager_ops=EAGER_OPS)
