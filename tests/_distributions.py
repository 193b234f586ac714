"""Skip what the installed distributions cannot run, with a reason naming them.

A pytest plugin (tests/conftest.py loads it). The nox matrix (noxfile.py)
installs subsets of retrograd's distributions; a test whose distribution is
absent is skipped, never broken by an ImportError at collection. Folders say
what their modules import at the top (FOLDER_REQUIRES: every folder not
listed needs the umbrella `retrograd`, which brings core and engine); single
tests refine it with markers:

    @pytest.mark.requires("retrograd-engine")   # skipped unless installed
    @pytest.mark.absent("retrograd-engine")     # runs only where it is NOT installed
                                                # (the messages a user gets without it)

Never import a retrograd module at this file's top: it decides what can be.
"""
from __future__ import annotations

import functools
import importlib.util
import pathlib

import pytest

TESTS = pathlib.Path(__file__).resolve().parent

# distribution -> a module only it provides, found without importing it
PROVIDES = {
    "retrograd-core": "retrograd.core",
    "retrograd-engine": "retrograd.engine",
    "retrograd": "retrograd.autograd",
    "retrograd-forward-ad": "retrograd.forward_ad",
    "retrograd-profiler": "retrograd.profiler",
    "retrograd-distributed": "retrograd.distributed",
    "retrograd-compile": "retrograd.compile",
}

# tests/<folder>/ -> the distributions its modules import at the top. Keep it a
# literal: noxfile.py reads it with ast (nox's Python has no pytest to import this)
FOLDER_REQUIRES = {
    "abi": ("retrograd-core",),
    "install": ("retrograd-core",),
    "forward_ad": ("retrograd", "retrograd-forward-ad"),
    "profiler": ("retrograd", "retrograd-profiler"),
    "distributed": ("retrograd", "retrograd-distributed"),
    "compile": ("retrograd", "retrograd-compile"),
}
DEFAULT_REQUIRES = ("retrograd",)


@functools.lru_cache(maxsize=None)
def installed(dist: str) -> bool:
    """Whether ``dist`` is installed (its module can be found; importing it
    may still fail, and then its tests fail rather than skip)."""
    module = PROVIDES[dist]
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError as exc:
        # only "a parent package is absent" means not installed
        if exc.name and module.startswith(exc.name):
            return False
        raise


def _missing_reason(missing) -> str:
    return (f"needs {', '.join(missing)}, not installed in this environment "
            f"(pip install {' '.join(missing)})")


def requires_for(path: pathlib.Path) -> tuple:
    try:
        parts = path.resolve().relative_to(TESTS).parts
    except ValueError:
        return DEFAULT_REQUIRES
    folder = parts[0] if len(parts) > 1 else None
    return FOLDER_REQUIRES.get(folder, DEFAULT_REQUIRES)


class _AbsentDistributionModule(pytest.Module):
    """A test module that is not imported: its distributions are absent."""

    skip_reason = ""

    def collect(self):
        pytest.skip(self.skip_reason)


def pytest_configure(config):
    config.addinivalue_line("markers", "requires(*dists): skip unless these distributions are installed")
    config.addinivalue_line("markers", "absent(dist): run only where this distribution is NOT installed")


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makemodule(module_path, parent):
    missing = [d for d in requires_for(module_path) if not installed(d)]
    if missing:
        module = _AbsentDistributionModule.from_parent(parent, path=module_path)
        module.skip_reason = _missing_reason(missing)
        return module
    return None


def pytest_runtest_setup(item):
    for mark in item.iter_markers("requires"):
        for dist in mark.args:
            if dist not in PROVIDES:
                raise ValueError(f"@pytest.mark.requires: unknown distribution {dist!r}; "
                                 f"known: {', '.join(PROVIDES)}")
        missing = [d for d in mark.args if not installed(d)]
        if missing:
            pytest.skip(_missing_reason(missing))
    for mark in item.iter_markers("absent"):
        present = [d for d in mark.args if installed(d)]
        if present:
            pytest.skip(f"checks what happens without {', '.join(present)}, which is installed here")
