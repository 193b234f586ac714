"""Stream semantics on a real GPU, with a deliberately slow producer: each
branch's backward is a kernel that spins for ~50 ms before it writes its
gradient into uninitialised memory, on the stream its forward ran on. A
missing wait anywhere (producer -> consumer, the buffer sum, the caller's
stream at the end) would read that memory before it is written and give
garbage; no explicit synchronize is made. The CPU stand-in runs kernels
synchronously, so it could not show a missing wait: this file needs a GPU
(the stand-in checks the waits themselves, test_cuda_streams.py)."""
import numpy as np
import pytest

from _cuda import require_cuda

cp = require_cuda()

import retrograd as rg  # noqa: E402

pytestmark = pytest.mark.skipif(getattr(cp, "_FAKE", False) or not hasattr(cp, "RawKernel"),
                                reason="needs a real GPU: the CPU stand-in runs every kernel at once")

_SPIN_SCALE = r'''
extern "C" __global__ void spin_scale(const double* g, double* out, double factor,
                                      long long cycles, int n) {
    long long start = clock64();
    while (clock64() - start < cycles) { }
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i < n) out[i] = g[i] * factor;
}
'''


def _slow_scale_function():
    kernel = cp.RawKernel(_SPIN_SCALE, "spin_scale")
    cycles = np.int64(100_000_000)              # ~50 ms at ~2 GHz

    class SlowScale(rg.autograd.Function):
        @staticmethod
        def forward(ctx, x, factor):
            ctx.factor = factor
            return x * factor

        @staticmethod
        def backward(ctx, g):
            garr = cp.ascontiguousarray(g._array if isinstance(g, rg.Tensor) else g)
            out = cp.empty_like(garr)           # garbage until the kernel writes it
            n = garr.size
            # launched on the current stream: the engine made it the forward's
            kernel(((n + 255) // 256,), (256,), (garr, out, np.float64(ctx.factor), cycles, np.int32(n)))
            return rg.as_tensor(out), None
    return SlowScale


def test_two_slow_streams_meet_in_one_buffer():
    SlowScale = _slow_scale_function()
    n = 1 << 16
    s1, s2 = rg.cuda.Stream(), rg.cuda.Stream()
    for _ in range(3):
        x = rg.ones(n, device="cuda", requires_grad=True)
        with rg.cuda.stream(s1):
            a = SlowScale.apply(x, 3.0)
        with rg.cuda.stream(s2):
            b = SlowScale.apply(x, 5.0)
        loss = (a + b).sum()
        loss.backward()
        # read on the caller's stream right away: correct only if it waited
        np.testing.assert_array_equal(cp.asnumpy(x.grad._array), np.full(n, 8.0))


def test_grad_of_a_slow_stream_is_ready_on_the_caller_stream():
    SlowScale = _slow_scale_function()
    s = rg.cuda.Stream()
    x = rg.ones(1 << 16, device="cuda", requires_grad=True)
    with rg.cuda.stream(s):
        y = SlowScale.apply(x, 7.0).sum()
    (g,) = rg.autograd.grad(y, x)
    np.testing.assert_array_equal(cp.asnumpy(g._array), np.full(1 << 16, 7.0))
