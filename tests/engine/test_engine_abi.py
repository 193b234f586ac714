"""The engine's import handshake with core (abi.pxd, rule 3) and what
Tensor.backward says when the engine cannot be imported."""
import pytest

import retrograd.core as core
import retrograd.engine as engine


def test_engine_registered_in_core_slot():
    assert core.abi._slot_status()["engine"]


def test_engine_was_built_against_a_compatible_core():
    # the same major, and a minor the running core provides (equal in the
    # development build; older when built against kept headers, nox -s old_headers)
    from retrograd.engine._engine import BUILT_AGAINST
    assert BUILT_AGAINST[0] == core.ABI_VERSION[0] and BUILT_AGAINST[1] <= core.ABI_VERSION[1]


@pytest.mark.parametrize("built,running", [
    ((1, 0), (1, 0)),
    ((1, 0), (1, 3)),          # a newer core minor only appends
    ((2, 5), (2, 7)),
])
def test_check_abi_passes_when_compatible(built, running):
    core.check_abi("retrograd-engine", built, running)


@pytest.mark.parametrize("built,running", [
    ((1, 0), (2, 0)),          # different major, either way
    ((2, 0), (1, 0)),
    ((1, 4), (1, 3)),          # running minor older than the one built against
])
def test_check_abi_rejects_incompatible(built, running):
    with pytest.raises(ImportError) as info:
        core.check_abi("retrograd-engine", built, running)
    msg = str(info.value)
    assert "retrograd-engine" in msg
    assert f"{built[0]}.{built[1]}" in msg and f"{running[0]}.{running[1]}" in msg
    # It says what to do.
    assert "install" in msg or "rebuild" in msg


def test_import_fails_against_a_different_core_major(run_python):
    res = run_python("""
        import retrograd.core as core
        # (the engine may be built against an older minor than this core:
        # nox -s old_headers; the message names what it was built against)
        core.ABI_VERSION = (2, 0)
        try:
            import retrograd.engine
        except ImportError as exc:
            msg = str(exc)
            assert "retrograd-engine" in msg, msg
            assert "was built against retrograd-core ABI 1." in msg and "provides ABI 2.0" in msg, msg
            print("IMPORT-ERROR-OK")
        else:
            print("IMPORTED")
    """)
    assert res.returncode == 0, res.stderr
    assert "IMPORT-ERROR-OK" in res.stdout, res.stdout


def test_import_fails_against_an_older_core_minor(run_python):
    res = run_python("""
        import retrograd.core as core
        # The development build compiles the engine against this very core
        # (test_engine_was_built_against_the_running_core); importing
        # _engine here would run the handshake before the patch.
        built = core.ABI_VERSION
        # older than any minor an engine can be built against (1.1 or later)
        core.ABI_VERSION = (built[0], 0)
        try:
            import retrograd.engine
        except ImportError as exc:
            assert "retrograd-core" in str(exc), exc
            print("IMPORT-ERROR-OK")
    """)
    assert res.returncode == 0, res.stderr
    assert "IMPORT-ERROR-OK" in res.stdout, res.stdout


BLOCK_ENGINE = """
    import sys
    class BlockEngine:
        def find_spec(self, name, path=None, target=None):
            if name == "retrograd.engine" or name.startswith("retrograd.engine."):
                raise ImportError(f"No module named {name!r} (blocked by the test)", name=name)
            return None
    sys.meta_path.insert(0, BlockEngine())
"""


def test_backward_without_engine_names_the_distribution(run_python):
    res = run_python(BLOCK_ENGINE + """
    import retrograd as rg
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    for call in (lambda: y.backward(), lambda: rg.autograd.grad(y, x)):
        try:
            call()
        except Exception as exc:
            assert "retrograd-engine" in str(exc), exc
            assert "install" in str(exc), exc
            print("ERR", type(exc).__name__)
        else:
            print("NO-ERROR")
    # Forward still works without the engine.
    assert (x * 2.0).tolist() == [2.0, 4.0]
    """)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["ERR", "RuntimeError", "ERR", "RuntimeError"], res.stdout


def test_multithreading_switch_without_engine_names_the_distribution(run_python):
    res = run_python(BLOCK_ENGINE + """
    import retrograd as rg
    try:
        rg.autograd.set_multithreading_enabled(False)
    except ImportError as exc:
        print("ImportError", "retrograd-engine" in str(exc) or "retrograd.engine" in str(exc))
    """)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["ImportError", "True"], res.stdout


def test_engine_public_names():
    for name in ("GraphTask", "ExecInfo", "set_multithreading_enabled", "is_multithreading_enabled",
                 "set_max_reentrant_depth", "get_max_reentrant_depth", "current_worker_device",
                 "device_threads", "shutdown_device_threads"):
        assert hasattr(engine, name), name
