"""rg.cuda where CuPy or a GPU is missing: as torch.cuda without CUDA, the
queries answer (False, 0), seeding and empty_cache do nothing, and the rest
raises a RuntimeError saying what to install."""
import sys

import pytest

import retrograd as rg


@pytest.fixture
def no_cupy(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)      # import cupy -> ImportError


def test_queries_answer_without_cupy(no_cupy):
    assert rg.cuda.is_available() is False
    assert rg.cuda.device_count() == 0
    rg.cuda.manual_seed(0)
    rg.cuda.manual_seed_all(0)
    rg.cuda.empty_cache()
    with rg.cuda.stream(None):
        pass


@pytest.mark.parametrize("call", [rg.cuda.current_device, rg.cuda.synchronize, rg.cuda.Stream, rg.cuda.Event,
                                  rg.cuda.current_stream, rg.cuda.default_stream, rg.cuda.memory_allocated,
                                  rg.cuda.max_memory_allocated, rg.cuda.reset_peak_memory_stats,
                                  rg.cuda.memory_reserved, rg.cuda.get_device_name, lambda: rg.cuda.set_device(0)])
def test_device_calls_say_what_is_missing(no_cupy, call):
    with pytest.raises(RuntimeError, match="CuPy"):
        call()


def test_seed_is_checked():
    with pytest.raises(ValueError, match="nonnegative"):
        rg.cuda.manual_seed(-3)
    with pytest.raises(TypeError, match="int"):
        rg.cuda.manual_seed(1.5)
