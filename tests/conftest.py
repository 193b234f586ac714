"""Fixtures shared by every test area. Keep this file small and generic."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

# Skips tests whose distributions the environment lacks (the nox install matrix).
pytest_plugins = ["_distributions"]


@pytest.fixture(autouse=True)
def _float64_default(request):
    """Most of the suite checks values and gradients to float64 precision (as
    torch's own tests run in double): it runs with float64 as the default
    dtype. The tests of the default itself, the docstrings' examples and the
    example programs (tests/docs, tests/examples: what a user sees) run with
    the real default, float32; mark a test `float32_default` to do the same
    (Note [Default dtype])."""
    path = str(request.path)
    if (request.node.get_closest_marker("float32_default") is not None or "tests/docs/" in path
            or "tests/examples/" in path):
        yield
        return
    try:
        from retrograd.core import get_default_dtype, set_default_dtype
    except ImportError:                 # (an environment without retrograd-core)
        yield
        return
    before = get_default_dtype()
    set_default_dtype("float64")
    try:
        yield
    finally:
        set_default_dtype(before)


@pytest.fixture
def virtual_cpu_devices():
    """Two virtual CPU devices ("cpu:1", "cpu:2") for the test, restored afterwards."""
    import retrograd as rg
    prev = rg.num_virtual_cpu_devices()
    rg.set_virtual_cpu_devices(max(prev, 2))
    try:
        yield 2
    finally:
        rg.set_virtual_cpu_devices(prev)


@pytest.fixture
def run_python():
    """Run a Python snippet in a fresh interpreter: ``run_python(code, env=None, timeout=...)``
    returns the CompletedProcess (text mode, stdout and stderr captured).

    The timeout is generous on purpose: importing retrograd in a fresh process
    may first rebuild the development install. Tests that care about speed
    time the part they care about inside the snippet."""
    def run(code: str, env: dict | None = None, timeout: float = 600.0):
        full_env = dict(os.environ)
        full_env.pop("RETROGRAD_VIRTUAL_CPU_DEVICES", None)
        if env:
            full_env.update(env)
        return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                              text=True, timeout=timeout, env=full_env)
    return run
