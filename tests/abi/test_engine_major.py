"""An engine compiled for another core ABI major is refused at import, with
a message naming both versions and what to do (abi.pxd, rule 3). `nox -s
old_headers` installs an engine built against next-major headers and runs
this; with an engine built for the running major it is skipped."""
import importlib.util
import pathlib

import pytest

import retrograd.core as core


def _built_against():
    """The engine's compiled-in ABI, read without importing retrograd.engine
    (whose __init__ runs the very check under test)."""
    spec = importlib.util.find_spec("retrograd.engine")
    if spec is None:
        pytest.skip("needs retrograd-engine")
    folder = pathlib.Path(next(iter(spec.submodule_search_locations)))
    candidates = sorted(folder.glob("_abi_check*.so")) + sorted(folder.glob("_abi_check*.pyd"))
    if not candidates:
        pytest.skip("retrograd-engine's _abi_check is not a plain file here (development install)")
    mod_spec = importlib.util.spec_from_file_location("retrograd.engine._abi_check", candidates[0])
    module = importlib.util.module_from_spec(mod_spec)
    mod_spec.loader.exec_module(module)
    return tuple(module.BUILT_AGAINST)


def test_engine_for_another_major_is_refused(run_python):
    built = _built_against()
    running = tuple(core.ABI_VERSION)
    if built[0] == running[0]:
        pytest.skip(f"this engine was built for ABI {built[0]}.x, the running major "
                    "(nox -s old_headers installs one built for another)")
    res = run_python("""
        try:
            import retrograd.engine
        except ImportError as exc:
            print(exc)
        else:
            print("IMPORTED")
    """)
    assert res.returncode == 0, res.stderr
    msg = res.stdout
    assert "IMPORTED" not in msg
    assert f"ABI {built[0]}.{built[1]}" in msg and f"ABI {running[0]}.{running[1]}" in msg, msg
    assert "retrograd-engine" in msg and "rebuild" in msg and "Install" in msg, msg
    # backward says the same, not a crash
    res = run_python("""
        import retrograd.core as core
        x = core.tensor([1.0], requires_grad=True)
        try:
            (x * x).sum().backward()
        except RuntimeError as exc:
            print(exc)
    """)
    assert res.returncode == 0, res.stderr
    assert f"ABI {built[0]}.{built[1]}" in res.stdout and "retrograd-engine" in res.stdout, res.stdout
