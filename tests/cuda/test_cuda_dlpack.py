"""DLPack with CUDA tensors: a CuPy array comes in as a cuda tensor over the
same memory, and goes out to CuPy the same way (the CPU stand-in checks the
routing; a real GPU also checks the memory)."""
import numpy as np
import pytest

from _cuda import assert_on_cuda, host, require_cuda

cp = require_cuda()

import retrograd as rg  # noqa: E402


def test_cupy_array_in_and_out_without_copy():
    a = cp.arange(6.0).reshape(2, 3)
    t = rg.from_dlpack(a)
    assert_on_cuda(t)
    assert t.device == rg.device("cuda:0") and not t.requires_grad
    assert t.__dlpack_device__() == (2, 0)
    t[0, 1] = 42.0
    assert float(a[0, 1].get() if hasattr(a[0, 1], "get") else a[0, 1]) == 42.0
    b = cp.from_dlpack(t)
    b[1, 2] = -1.0
    np.testing.assert_array_equal(host(t)[1], [3.0, 4.0, -1.0])


@pytest.mark.skipif(getattr(cp, "_FAKE", False), reason="the CPU stand-in's capsules hold host memory: NumPy "
                    "refuses device memory by the capsule's device, which only a real GPU has")
def test_numpy_cannot_take_device_memory():
    t = rg.tensor([1.0, 2.0], device="cuda")
    with pytest.raises((RuntimeError, BufferError, TypeError)):
        np.from_dlpack(t)


def test_requires_grad_refuses_export():
    x = rg.tensor([1.0], device="cuda", requires_grad=True)
    with pytest.raises(RuntimeError, match="require gradient"):
        cp.from_dlpack(x)
