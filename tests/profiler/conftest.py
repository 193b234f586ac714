"""Shared helpers of the profiler tests."""
import pytest


@pytest.fixture
def torch():
    """PyTorch as the oracle (skips when absent)."""
    return pytest.importorskip("torch")
