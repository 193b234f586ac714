"""A downstream project compiled with meson against the installed core's
.pxd files (tests/abi/downstream): it cimports Tensor and Node, calls free
functions, and runs; built for another ABI major, core's check refuses it
with both versions named (abi.pxd, rule 3)."""
import os
import pathlib
import re
import shutil
import subprocess
import sys
import textwrap

import pytest

import retrograd.core as core

HERE = pathlib.Path(__file__).resolve().parent
TOOLS = ("meson", "ninja", "cython")
_missing = [t for t in TOOLS if shutil.which(t, path=os.path.dirname(sys.executable) + os.pathsep
                                             + os.environ.get("PATH", "")) is None]
pytestmark = pytest.mark.skipif(bool(_missing), reason=f"needs the build tools {', '.join(_missing)} "
                                "(`nox -s abi` installs them)")


def _env():
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    return env


def _build(tmp_path, core_include=None):
    build = tmp_path / "build"
    args = ["meson", "setup", str(build), str(HERE / "downstream"), f"-Dpython={sys.executable}"]
    if core_include:
        args.append(f"-Dcore_include={core_include}")
    for cmd in (args, ["meson", "compile", "-C", str(build)]):
        res = subprocess.run(cmd, capture_output=True, text=True, env=_env(), timeout=600)
        assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return build


def _run(build, code):
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, env={**_env(), "PYTHONPATH": str(build)}, timeout=300)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return _build(tmp_path_factory.mktemp("downstream"))


def test_downstream_project_runs(built):
    res = _run(built, """
        import numpy as np
        import retrograd.core as core
        import rg_downstream_abi
        core.check_abi("rg-downstream", rg_downstream_abi.BUILT_AGAINST)
        import rg_downstream as ds

        a = np.array([1.0, 2.0, 3.0])
        t = ds.wrap(a)
        assert isinstance(t, core.Tensor) and t.is_leaf and ds.data_is(t, a)
        assert ds.grad_enabled() is True
        with core.no_grad():
            assert ds.grad_enabled() is False
        x = core.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x).sum()
        print(ds.graph_of(y), ds.graph_of(x))
        print(rg_downstream_abi.BUILT_AGAINST == core.ABI_VERSION)
    """)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split("\n")[:2] == ["('SumBackward0', [('MulBackward0', 0)]) None", "True"]


def test_run_time_lookup_checks_the_signature(built):
    # rg_core_function: the capsule's C signature must be the one compiled
    # for, or the lookup refuses (calling through it would corrupt the stack)
    res = _run(built, """
        import numpy as np
        import rg_downstream as ds
        print(ds.sum_to_by_lookup(np.ones((2, 3)), (1, 3)).tolist())
        print(ds.lookup("rg_sum_to", "PyObject *(PyObject *, PyObject *)"))
        print(ds.lookup("rg_not_in_this_core", "int (void)"))
        try:
            ds.lookup("rg_sum_to", "int (PyObject *)")
        except ImportError as exc:
            print("REFUSED", exc)
    """)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[:3] == ["[[2.0, 2.0, 2.0]]", "True", "False"], res.stdout
    assert lines[3].startswith("REFUSED") and "rg_sum_to" in lines[3] and "rebuild" in lines[3]


def test_downstream_for_another_major_is_refused(tmp_path):
    """The headers of a hypothetical next major: built against them, the
    project's import check names both versions and what to do."""
    include = tmp_path / "include"
    shutil.copytree(core.get_include(), include,
                    ignore=shutil.ignore_patterns("*.py", "*.so", "*.pyx", "*.pxi", "*.yaml", "_*"))
    pxd = include / "retrograd" / "core" / "abi.pxd"
    major, minor = core.ABI_VERSION
    pxd.write_text(re.sub(r"RG_ABI_MAJOR = \d+", f"RG_ABI_MAJOR = {major + 1}", pxd.read_text()))
    for marker in (include / "retrograd" / "__init__.pxd", include / "retrograd" / "core" / "__init__.pxd"):
        marker.touch()
    build = _build(tmp_path, include)
    res = _run(build, """
        import retrograd.core as core
        import rg_downstream_abi
        try:
            core.check_abi("rg-downstream", rg_downstream_abi.BUILT_AGAINST)
        except ImportError as exc:
            print(exc)
    """)
    assert res.returncode == 0, res.stderr
    msg = res.stdout
    assert f"ABI {major + 1}.{minor}" in msg and f"ABI {major}.{minor}" in msg, msg
    assert "rg-downstream" in msg and ("rebuild" in msg or "Install" in msg), msg


def test_array_function_node_records_outputs_under_one_node(built):
    # abi.pxd's rg_array_function (ABI 1.7): the node's edges, its outputs,
    # which of them carry it, and when no node is made
    res = _run(built, """
        import numpy as np
        import retrograd.core as core
        import rg_downstream as ds

        x = core.tensor([1.0, 2.0], requires_grad=True)
        c = core.tensor([3.0, 4.0])
        outs = ds.array_function("MyBackward", (x, c), [np.ones(2), np.zeros(2), np.arange(2)],
                                 (True, False, True), (0,), (np.full(3, 7.0), None), None, None)
        print(outs[0].grad_fn.name(), ds.graph_of(outs[0])[1])
        print([o.requires_grad for o in outs], outs[1].grad_fn, outs[2].dtype.kind)
        print([(name, a.tolist()) for name, a in outs[0].grad_fn._saved_arrays()])
        with core.no_grad():
            plain = ds.array_function("MyBackward", (x,), [np.ones(2)], None, None, None, None, None)
        print(plain[0].grad_fn, plain[0].requires_grad)
        print(ds.saved_tensors_hooks_active())
        from retrograd.core import extending
        extending.push_saved_tensors_hooks(lambda t: t, lambda t: t)
        try:
            print(ds.saved_tensors_hooks_active())
            try:
                ds.array_function("MyBackward", (x,), [np.ones(2)], None, None, None, None, None)
            except RuntimeError as exc:
                print("REFUSED", "saved-tensor hooks" in str(exc))
        finally:
            extending.pop_saved_tensors_hooks()
        try:
            ds.array_function("MyBackward", (x, 2.0), [np.ones(2)], None, None, None, None, None)
        except TypeError:
            print("TYPE")
    """)
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines() == [
        "MyBackward [('AccumulateGrad', 0), (None, 0)]",
        "[True, False, False] None i",
        "[('inputs[0]', [1.0, 2.0]), ('inputs[1]', [3.0, 4.0]), ('saved[0]', [7.0, 7.0, 7.0]), "
        "('outputs[0]', [1.0, 1.0])]",
        "None False",
        "False", "True", "REFUSED True",
        "TYPE"], res.stdout


def test_array_function_node_backward_checks_versions_and_release(built):
    pytest.importorskip("retrograd.engine", reason="needs retrograd-engine (backward)")
    res = _run(built, """
        import numpy as np
        import retrograd as rg
        import rg_downstream as ds

        seen = []

        def backward(state, saved, grads, create_graph, inputs):
            seen.append((state, saved, [type(g).__name__ for g in grads], create_graph, len(inputs)))
            if create_graph:
                return [grads[0] * inputs[0] * 2, None]
            return [grads[0] * 2 * inputs[0]._array, None]

        def make(saved=None):
            x = rg.tensor([1.0, 2.0], requires_grad=True)
            c = rg.tensor([5.0, 5.0])
            (y,) = ds.array_function("SquareBackward", (x, c), [x.detach().numpy() ** 2],
                                     None, saved, ("kept",), backward, "state")
            return x, c, y

        x, c, y = make()
        y.sum().backward()
        print(x.grad.tolist(), seen[-1])
        try:
            y.sum().backward()
        except RuntimeError as exc:
            print("RELEASED", "second time" in str(exc), y.grad_fn._saved_arrays())
        x, c, y = make()
        (g,) = rg.autograd.grad(y.sum(), x, create_graph=True)
        (h,) = rg.autograd.grad(g.sum(), x)
        print(g.tolist(), h.tolist(), seen[-1][2:])
        x, c, y = make()
        c.add_(1.0)
        try:
            y.sum().backward()
        except RuntimeError as exc:
            print("INPUT", "modified by an inplace operation" in str(exc), "SquareBackward" in str(exc))
        x, c, y = make(saved=(0,))
        y.mul_(3.0)
        try:
            y.sum().backward()
        except RuntimeError as exc:
            print("OUTPUT", "output 0 of SquareBackward" in str(exc))

        def wrong(state, saved, grads, create_graph, inputs):
            return [None]
        x = rg.tensor([1.0], requires_grad=True)
        (y,) = ds.array_function("WrongBackward", (x,), [np.ones(1)], None, None, None, wrong, None)
        y.sum().backward()
        print("OK ONE", x.grad)
        (y,) = ds.array_function("WrongBackward", (x, x), [np.ones(1)], None, None, None, wrong, None)
        try:
            y.sum().backward()
        except RuntimeError as exc:
            print("COUNT", "incorrect number of gradients" in str(exc))
    """)
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines() == [
        "[2.0, 4.0] ('state', ('kept',), ['ndarray'], False, 2)",
        "RELEASED True []",
        "[2.0, 4.0] [2.0, 2.0] (['Tensor'], True, 2)",
        "INPUT True True",
        "OUTPUT True",
        "OK ONE None",
        "COUNT True"], res.stdout
