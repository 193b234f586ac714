"""retrograd-forward-ad as a distribution: registered in core's forward-grad
slot only while a level is active, ABI-checked at import, and named by the
umbrella when it is missing."""
import pytest

fwAD = pytest.importorskip("retrograd.forward_ad", reason="needs the retrograd-forward-ad distribution")

import retrograd as rg  # noqa: E402
import retrograd.core as core  # noqa: E402
from retrograd.core import abi  # noqa: E402


def test_built_against_the_running_core():
    from retrograd.forward_ad._dual import BUILT_AGAINST
    assert tuple(BUILT_AGAINST) == tuple(core.ABI_VERSION)


def test_umbrella_reexports_it():
    assert rg.autograd.forward_ad is fwAD
    for name in ("dual_level", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual",
                 "UnpackedDualTensor"):
        assert hasattr(rg.autograd.forward_ad, name)


def test_slot_filled_only_while_a_level_is_active():
    assert not abi._slot_status()["forward_grad"]
    lvl = fwAD.enter_dual_level()
    assert abi._slot_status()["forward_grad"]
    fwAD.exit_dual_level(level=lvl)
    assert not abi._slot_status()["forward_grad"]


def test_import_fails_against_a_different_core_major(run_python):
    res = run_python("""
        import retrograd.core as core
        built = core.ABI_VERSION
        core.ABI_VERSION = (built[0] + 1, 0)
        try:
            import retrograd.forward_ad
        except ImportError as exc:
            msg = str(exc)
            assert "retrograd-forward-ad" in msg, msg
            assert f"{built[0]}.{built[1]}" in msg and f"{built[0] + 1}.0" in msg, msg
            print("IMPORT-ERROR-OK")
        else:
            print("IMPORTED")
    """)
    assert res.returncode == 0, res.stderr
    assert "IMPORT-ERROR-OK" in res.stdout, res.stdout


def test_missing_distribution_is_named(run_python):
    res = run_python("""
        import sys
        class Block:
            def find_spec(self, name, path=None, target=None):
                if name == "retrograd.forward_ad" or name.startswith("retrograd.forward_ad."):
                    raise ImportError(f"No module named {name!r} (blocked by the test)", name=name)
                return None
        sys.meta_path.insert(0, Block())
        import retrograd as rg
        try:
            rg.autograd.forward_ad
        except ImportError as exc:
            assert "retrograd-forward-ad" in str(exc), exc
            print("IMPORT-ERROR-OK")
        # core and engine work as before
        x = rg.tensor([1.0, 2.0], requires_grad=True)
        (x * x).sum().backward()
        assert x.grad.tolist() == [2.0, 4.0]
        # functional.jvp falls back to the double-backward trick
        from retrograd.autograd import functional as F
        out, jv = F.jvp(lambda a: a * a, rg.tensor([3.0]), rg.tensor([1.0]))
        assert jv.tolist() == [6.0]
        print("WORKS")
    """)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["IMPORT-ERROR-OK", "WORKS"], res.stdout
