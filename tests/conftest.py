"""Fixtures shared by every test area. Keep this file small and generic."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

# Skips tests whose distributions the environment lacks (the nox install matrix).
pytest_plugins = ["_distributions"]


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
