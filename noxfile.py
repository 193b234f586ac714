"""Every check a developer or CI runs: `nox -l` lists them.

Sessions are generated from one list of distributions, in dependency order
(DISTRIBUTIONS). Each session builds the distributions it needs and installs
them as users do (not editable) into a fresh virtualenv, then runs pytest
against the installed packages. nox uses the virtualenv backend and pip:
pip finds the CPU torch wheel for the oracle tests on this machine's disk,
where uv would download a multi-GB CUDA build.
"""
from __future__ import annotations

import os
import sys

import nox

nox.options.default_venv_backend = "virtualenv"
nox.options.sessions = ["tests"]
nox.options.error_on_external_run = True

PYTHON = f"{sys.version_info.major}.{sys.version_info.minor}"

# Distributions in dependency order: each may cimport/import only those before it.
DISTRIBUTIONS = {
    "core": "core",
    "engine": "engine",
    "forward_ad": "forward_ad",
    "profiler": "profiler",
    "retrograd": "packages/retrograd",
}

# What building any distribution needs (no build isolation: engine compiles
# against the retrograd-core installed in the session, which is not on PyPI).
BUILD_REQUIREMENTS = ["meson-python>=0.16", "meson>=1.4", "ninja", "cython>=3.0.8",
                      "numpy>=2.0", "pyyaml>=6"]
TEST_REQUIREMENTS = ["pytest>=8"]
ORACLE_REQUIREMENTS = ["torch==2.13.0"]


def _print_facts(session: nox.Session) -> None:
    session.run("python", "-c",
                "import sys, platform, numpy; print('python', sys.version.split()[0], "
                "platform.machine(), '| numpy', numpy.__version__)")


def _install_distributions(session: nox.Session, names) -> None:
    session.install(*BUILD_REQUIREMENTS)
    for name in names:
        session.install("--no-build-isolation", "--no-deps", f"./{DISTRIBUTIONS[name]}")


def _pytest(session: nox.Session, *paths: str) -> None:
    args = session.posargs or list(paths) or ["tests"]
    # pytest exits 5 when it collected nothing: that is a failure of the suite's
    # wiring, except when the caller narrowed the selection on purpose.
    session.run("python", "-m", "pytest", "--strict-markers", *args)


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """Build and install every distribution (non-editable), install torch for the
    oracle tests, and run the whole test suite."""
    _install_distributions(session, DISTRIBUTIONS)
    session.install(*TEST_REQUIREMENTS, *ORACLE_REQUIREMENTS)
    _print_facts(session)
    _pytest(session, "tests")


@nox.session(python=PYTHON)
def example(session: nox.Session) -> None:
    """Build and install retrograd, then run the README's example (examples/mlp.py)."""
    _install_distributions(session, DISTRIBUTIONS)
    session.run("python", "examples/mlp.py")


@nox.session(python=PYTHON, default=False)
def bench(session: nox.Session) -> None:
    """Run benchmarks/compare.py: retrograd vs PyTorch vs hand-written NumPy, side by side."""
    _install_distributions(session, DISTRIBUTIONS)
    session.install(*ORACLE_REQUIREMENTS)
    session.run("python", "benchmarks/compare.py", *session.posargs)


@nox.session(python=PYTHON, default=False)
def asv(session: nox.Session) -> None:
    """Run the asv suite once on the working tree (`asv run --quick` equivalent)."""
    session.install("asv", "virtualenv")
    session.run("asv", "machine", "--yes")
    session.run("asv", "run", "--quick", "--show-stderr", "--python=same", *session.posargs)


@nox.session(python=PYTHON, default=False)
def dev(session: nox.Session) -> None:
    """A development environment: one editable build of everything (`pip install -e .`)."""
    session.install(*BUILD_REQUIREMENTS, *TEST_REQUIREMENTS, *ORACLE_REQUIREMENTS)
    session.install("--no-build-isolation", "-e", ".")
    session.log(f"activate with: source {os.path.join(session.virtualenv.location, 'bin', 'activate')}")
