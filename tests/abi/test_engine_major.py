"""An engine compiled for another core ABI major is refused at import, with
a message naming both versions and what to do (abi.pxd, rule 3). `nox -s
old_headers` installs an engine built against next-major headers and runs
this; with an engine built for the running major it is skipped."""
import importlib.util
import re

import pytest

import retrograd.core as core


def test_engine_for_another_major_is_refused(run_python):
    if importlib.util.find_spec("retrograd.engine") is None:
        pytest.skip("needs retrograd-engine")
    running = tuple(core.ABI_VERSION)
    res = run_python("""
        try:
            import retrograd.engine
        except ImportError as exc:
            print(exc)
        else:
            import retrograd.engine._engine as e
            print("IMPORTED", *e.BUILT_AGAINST)
    """)
    assert res.returncode == 0, res.stderr
    msg = res.stdout
    if msg.startswith("IMPORTED"):
        built = tuple(int(v) for v in msg.split()[1:3])
        assert built[0] == running[0], msg
        pytest.skip(f"this engine was built for ABI {built[0]}.x, the running major "
                    "(nox -s old_headers installs one built for another)")
    # the handshake (abi.pxd's import_core) names both versions and what to do
    versions = {tuple(map(int, v)) for v in re.findall(r"ABI (\d+)\.(\d+)", msg)}
    assert running in versions, msg
    built = next(v for v in versions if v != running)
    assert built[0] != running[0], msg
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
