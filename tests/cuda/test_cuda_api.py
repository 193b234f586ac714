"""rg.cuda (torch.cuda's API over CuPy): devices, streams, events, memory
statistics and seeding. On the CPU stand-in the stream and event calls are
read back from its record; memory figures come from its pool, which counts
blocks as CuPy's does."""
import numpy as np
import pytest

from _cuda import host, require_cuda

cp = require_cuda()

import retrograd as rg  # noqa: E402

FAKE = getattr(cp, "_FAKE", False)


def test_devices():
    assert rg.cuda.is_available()
    assert rg.cuda.device_count() == cp.cuda.runtime.getDeviceCount() >= 1
    assert rg.cuda.current_device() == 0
    rg.cuda.set_device("cuda:0")
    rg.cuda.set_device(rg.device("cuda:0"))
    rg.cuda.set_device(-1)                          # torch: a negative index does nothing
    assert rg.cuda.current_device() == 0
    assert isinstance(rg.cuda.get_device_name(), str) and rg.cuda.get_device_name()
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        rg.cuda.set_device(rg.cuda.device_count())
    with pytest.raises(ValueError, match="Expected a cuda device, but got: cpu"):
        rg.cuda.set_device("cpu")
    with pytest.raises(TypeError, match="cuda device"):
        rg.cuda.set_device(1.5)
    rg.cuda.synchronize()
    rg.cuda.synchronize(0)


def test_streams_are_current_inside_their_block():
    s = rg.cuda.Stream()
    assert s.device == rg.device("cuda:0") and s.device_index == 0
    assert s != rg.cuda.default_stream() and s == rg.cuda.Stream._wrap(s.cupy_stream)
    assert rg.cuda.current_stream() == rg.cuda.default_stream()
    with rg.cuda.stream(s):
        assert rg.cuda.current_stream() == s
        assert cp.cuda.get_current_stream().ptr == s.cuda_stream
        inner = rg.cuda.Stream()
        with inner:
            assert rg.cuda.current_stream() == inner
        assert rg.cuda.current_stream() == s
    assert rg.cuda.current_stream() == rg.cuda.default_stream()
    with rg.cuda.stream(None):                      # no change
        assert rg.cuda.current_stream() == rg.cuda.default_stream()
    assert s.query() in (True, False)
    s.synchronize()
    with pytest.raises(TypeError, match="Stream"):
        rg.cuda.stream(cp.cuda.Stream())           # a CuPy stream: wrap it first


def test_ops_in_a_stream_block_and_their_values():
    s = rg.cuda.Stream()
    x = rg.tensor(np.arange(4.0), device="cuda", requires_grad=True)
    with rg.cuda.stream(s):
        y = (x * x).sum()
    rg.cuda.current_stream().wait_stream(s)
    y.backward()
    np.testing.assert_array_equal(host(x.grad), 2 * np.arange(4.0))


@pytest.mark.skipif(not FAKE, reason="reads the CPU stand-in's record")
def test_events_and_waits_reach_cupy():
    cp.cuda._log.clear()
    s1, s2 = rg.cuda.Stream(), rg.cuda.Stream()
    e = s1.record_event()
    s2.wait_event(e)
    s2.wait_stream(s1)
    e2 = rg.cuda.Event()
    e2.record()
    e2.wait(s1)
    verbs = [(v, st.ptr if st is not None else None) for v, st, _ in cp.cuda._log]
    assert verbs == [("record", s1.cuda_stream), ("wait_event", s2.cuda_stream), ("record", s1.cuda_stream),
                     ("wait_event", s2.cuda_stream), ("record", 0), ("wait_event", s1.cuda_stream)]


def test_event_timing():
    start, end = rg.cuda.Event(enable_timing=True), rg.cuda.Event(enable_timing=True)
    with pytest.raises(RuntimeError, match="recorded"):
        start.elapsed_time(end)
    start.record()
    rg.ones(100, device="cuda").exp()
    end.record()
    end.synchronize()
    assert start.elapsed_time(end) >= 0.0
    assert end.query()
    untimed = rg.cuda.Event()
    untimed.record()
    with pytest.raises(RuntimeError):
        start.elapsed_time(untimed)
    with pytest.raises(ValueError, match="interprocess"):
        rg.cuda.Event(enable_timing=True, interprocess=True)


def test_memory_statistics_follow_allocations():
    x = None
    rg.cuda.empty_cache()
    base = rg.cuda.memory_allocated()
    rg.cuda.reset_peak_memory_stats()
    assert rg.cuda.max_memory_allocated() == base
    x = rg.zeros(1 << 17, device="cuda")            # 1 MiB of float64
    assert rg.cuda.memory_allocated() >= base + (1 << 20)
    del x
    assert rg.cuda.memory_allocated() == base
    assert rg.cuda.max_memory_allocated() >= base + (1 << 20)   # the peak remembers it
    assert rg.cuda.memory_reserved() >= base + (1 << 20)        # cached in the pool
    rg.cuda.empty_cache()
    assert rg.cuda.memory_reserved() == rg.cuda.memory_allocated()
    rg.cuda.reset_peak_memory_stats()
    assert rg.cuda.max_memory_allocated() == rg.cuda.memory_allocated()


def test_peak_includes_a_backward_temporary():
    x = rg.randn(1 << 14, device="cuda", requires_grad=True)
    rg.cuda.reset_peak_memory_stats()
    start = rg.cuda.memory_allocated()
    (x.exp() * x).sum().backward()
    assert rg.cuda.max_memory_allocated() > start + 3 * x.numel() * 8      # exp(x), the grads


def test_seeding_repeats_cuda_draws():
    for make in (lambda: rg.rand(5, device="cuda"), lambda: rg.randn(2, 3, device="cuda"),
                 lambda: rg.randint(0, 100, (6,), device="cuda"), lambda: rg.randperm(7, device="cuda"),
                 lambda: rg.rand_like(rg.zeros(4, device="cuda"))):
        rg.cuda.manual_seed(3)
        a = host(make())
        rg.cuda.manual_seed(3)
        np.testing.assert_array_equal(host(make()), a)
        rg.manual_seed(3)                           # torch.manual_seed seeds CUDA too
        np.testing.assert_array_equal(host(make()), a)
        rg.cuda.manual_seed_all(3)
        np.testing.assert_array_equal(host(make()), a)
    t = rg.randn(3, device="cuda")
    assert type(t._array) is cp.ndarray             # drawn on the device
    with pytest.raises(ValueError, match="nonnegative"):
        rg.cuda.manual_seed(-1)
    # a given NumPy generator is honoured on CUDA too
    a = host(rg.rand(3, device="cuda", generator=np.random.default_rng(1)))
    np.testing.assert_array_equal(a, np.random.default_rng(1).random(3))
