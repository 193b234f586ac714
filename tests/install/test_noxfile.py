"""The noxfile runs in nox's own Python, which holds nox and nothing else
(the README puts nox in a virtual environment of its own). Here it is loaded
in a subprocess where pytest cannot be imported, as on a fresh machine:
`nox --list` must work, and so must the choice of test folders for every
install set (it once imported tests/_distributions.py, a pytest plugin, and
every set with one optional distribution failed before its tests ran)."""
import json
import pathlib
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("nox", reason="needs nox (the tests sessions install it; pip install nox)")

ROOT = pathlib.Path(__file__).resolve().parents[2]
NOXFILE = ROOT / "noxfile.py"
if not NOXFILE.exists():        # an installed copy of the tests, away from the checkout
    pytest.skip("needs the repository's noxfile.py", allow_module_level=True)

# Makes `import pytest` fail in the subprocess, as where nox's Python lacks it.
HIDE_PYTEST = textwrap.dedent("""
    import importlib.abc, sys

    class HidePytest(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.partition(".")[0] in ("pytest", "_pytest", "pluggy"):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, HidePytest())
    try:
        import pytest
    except ModuleNotFoundError:
        pass
    else:
        raise SystemExit("the subprocess can still import pytest")
""")


def _run(code):
    res = subprocess.run([sys.executable, "-I", "-c", HIDE_PYTEST + textwrap.dedent(code)],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return res.stdout


def test_nox_lists_its_sessions_without_pytest():
    out = _run(f"""
        import sys
        from nox.__main__ import main
        sys.argv = ["nox", "--list", "--noxfile", {str(NOXFILE)!r}]
        try:
            main()
        except SystemExit as exc:
            if exc.code not in (0, None):
                raise
    """)
    for session in ("tests(core)", "tests(all)", "tests(all-oldest-numpy)", "demo", "docs", "lint"):
        assert session in out, out


def test_every_install_set_chooses_its_tests_without_pytest():
    out = _run(f"""
        import importlib.util, json
        spec = importlib.util.spec_from_file_location("noxfile", {str(NOXFILE)!r})
        noxfile = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(noxfile)
        print(json.dumps({{s: noxfile._tests_of_set(s) for s in noxfile.INSTALL_SETS}}))
        print(json.dumps(noxfile.OPTIONAL))
    """)
    chosen_line, optional_line = out.strip().splitlines()[-2:]
    chosen, optional = json.loads(chosen_line), json.loads(optional_line)
    assert chosen["all"] == ["tests"]
    assert chosen["core"] == ["tests"]
    single = {s: tests for s, tests in chosen.items() if s not in ("all", "core") and tests != ["tests"]}
    assert single, chosen      # the sets with one optional distribution
    for set_id, tests in single.items():
        extra = set_id.split("+")[-1]
        assert extra in optional
        assert "tests/install" in tests
        for folder in tests:
            assert (ROOT / folder).exists(), (set_id, folder)
    # the sets whose optional distribution has a test folder of its own run it
    assert "tests/profiler" in chosen["core+engine+profiler"]
    assert "tests/forward_ad" in chosen["core+engine+forward_ad"]
