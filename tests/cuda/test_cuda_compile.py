"""rg.compile with CUDA tensors: this release compiles CPU tensors only, so a
call with CUDA tensors runs eagerly, with one warning, and agrees with eager
(on a GPU, or on the CPU stand-in tests/cuda/fake_cupy)."""
import numpy as np
import pytest

import retrograd as rg
from _cuda import host, require_cuda

require_cuda()
pytest.importorskip("retrograd.compile", reason="needs retrograd-compile")


def test_cuda_calls_run_eagerly_with_one_warning():
    def fn(x):
        return (x.sin() * 2).sum()

    f = rg.compile(fn)
    a = np.linspace(0.1, 1.0, 8)
    x = rg.tensor(a, device="cuda", requires_grad=True)
    with pytest.warns(RuntimeWarning, match="CUDA tensors run eagerly"):
        out = f(x)
    out.backward()
    np.testing.assert_allclose(host(x.grad), 2 * np.cos(a), rtol=1e-12)
    assert f.cache_info() == {"compiled": 0, "eager": 0}
