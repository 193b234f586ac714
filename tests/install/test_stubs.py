"""Typing: every compiled module ships a stub (.pyi) that matches it, and a
PEP 561 marker (py.typed), so editors complete and mypy checks user code."""
import importlib
import importlib.util
import pathlib
import subprocess
import sys
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "core" / "retrograd" / "core" / "_codegen"))
import gen_stubs  # noqa: E402

sys.path.pop(0)
DIST_OF = {"retrograd.core.abi": "retrograd-core", "retrograd.engine._engine": "retrograd-engine",
           "retrograd.engine._abi_check": "retrograd-engine",
           "retrograd.forward_ad._dual": "retrograd-forward-ad",
           "retrograd.forward_ad._abi_check": "retrograd-forward-ad",
           "retrograd.profiler._collector": "retrograd-profiler",
           "retrograd.profiler._abi_check": "retrograd-profiler"}


def _require(mod_name):
    dist = DIST_OF[mod_name]
    if importlib.util.find_spec(mod_name.rsplit(".", 1)[0]) is None:
        pytest.skip(f"needs {dist}, not installed in this environment")


@pytest.mark.parametrize("mod_name", sorted(gen_stubs.STUBS))
def test_stub_is_current(mod_name):
    _require(mod_name)
    # in a fresh interpreter: a stub describes the module as imported, before
    # anything (other tests) sets attributes on it
    res = subprocess.run([sys.executable, str(pathlib.Path(gen_stubs.__file__)), "--check", mod_name],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr


@pytest.mark.parametrize("mod_name", sorted(gen_stubs.STUBS))
def test_stub_and_marker_are_installed(mod_name):
    _require(mod_name)
    package = importlib.import_module(mod_name.rsplit(".", 1)[0])
    folder = pathlib.Path(package.__file__).parent
    if not (folder / (mod_name.rsplit(".", 1)[1] + ".pyx")).exists():   # not the source tree
        assert (folder / "py.typed").exists()
        assert (folder / (mod_name.rsplit(".", 1)[1] + ".pyi")).read_text() == \
            gen_stubs.STUBS[mod_name].read_text()
    else:
        assert (folder / "py.typed").exists() and gen_stubs.STUBS[mod_name].exists()


def test_stub_types_what_users_call():
    text = gen_stubs.STUBS["retrograd.core.abi"].read_text()
    assert "\ndef mul(self: Any, other: Any) -> Tensor: ...\n" in text
    assert "\nclass Tensor:\n" in text and "\nclass Node:\n" in text
    tensor = text.split("\nclass Tensor:\n", 1)[1].split("\nclass ", 1)[0]
    assert "    def backward(self, gradient: Any = ..., retain_graph: Any = ..., create_graph: Any = ..., " \
           "inputs: Any = ...) -> Any: ..." in tensor
    assert "    def __add__(self, other: Any) -> Tensor: ..." in tensor
    assert "    def grad(self) -> Tensor | None: ..." in tensor
    assert "    def exp(self) -> Tensor: ..." in tensor


def test_mypy_checks_user_code(tmp_path):
    """mypy against the installed stubs: right code passes, a wrong call fails."""
    pytest.importorskip("mypy", reason="needs mypy (`nox -s typing` installs it)")
    pytest.importorskip("retrograd.autograd", reason="needs the umbrella retrograd")
    if ROOT / "core" in pathlib.Path(importlib.import_module("retrograd.core").__file__).resolve().parents:
        pytest.skip("mypy cannot follow a development (editable) install")
    good = tmp_path / "good.py"
    good.write_text(textwrap.dedent("""
        import retrograd as rg
        x = rg.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x).exp().sum()
        y.backward()
        g: rg.Tensor | None = x.grad
        z: rg.Tensor = rg.exp(x) + 1.0
    """))
    bad = tmp_path / "bad.py"
    bad.write_text("import retrograd as rg\nx = rg.tensor([1.0])\nx.no_such_method()\nrg.no_such_op(x)\n")
    run = [sys.executable, "-m", "mypy", "--no-incremental", "--cache-dir", str(tmp_path / "cache")]
    res = subprocess.run(run + [str(good)], capture_output=True, text=True, cwd=tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr
    res = subprocess.run(run + [str(bad)], capture_output=True, text=True, cwd=tmp_path)
    assert res.returncode == 1, res.stdout + res.stderr
    assert '"Tensor" has no attribute "no_such_method"' in res.stdout, res.stdout
    # the umbrella's module __getattr__ (rg.profiler) types unknown names as modules
    assert "bad.py:4: error:" in res.stdout, res.stdout
