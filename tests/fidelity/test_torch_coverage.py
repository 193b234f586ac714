"""Coverage of torch's names (issue 41): every public name of ``torch``,
``torch.Tensor``, ``torch.nn``, ``torch.nn.functional``, ``torch.optim``,
``torch.optim.lr_scheduler`` and ``torch.utils.data`` is either present in
retrograd or listed, with a reason, in the omissions table
(``retrograd._omissions``); an omitted name raises an AttributeError that
says so and what to use instead. The figures are printed in the terminal
summary (tests/abi/conftest.py), whatever ``-s`` says.
"""
from __future__ import annotations

import importlib

import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle

import retrograd as rg  # noqa: E402
from retrograd import _omissions  # noqa: E402

# present or deliberately omitted, over all namespaces together
TARGET = 0.95

NAMESPACES = ["torch", "torch.Tensor", "torch.nn", "torch.nn.functional", "torch.optim",
              "torch.optim.lr_scheduler", "torch.utils.data"]


def _torch_names(ns: str) -> list[str]:
    if ns == "torch.Tensor":
        return sorted(n for n in dir(torch.Tensor) if not n.startswith("_"))
    mod = importlib.import_module(ns)
    names = getattr(mod, "__all__", None)
    if names is None:
        names = [n for n in dir(mod) if not n.startswith("_")]
    return sorted({n for n in names if not n.startswith("_")})


def _ours(ns: str):
    if ns == "torch.Tensor":
        return rg.Tensor
    return importlib.import_module(_omissions.MODULES[ns])


def _present(ns: str, name: str) -> bool:
    try:
        getattr(_ours(ns), name)
    except AttributeError:
        return False
    except ImportError:
        # an optional distribution's namespace (rg.compile, rg.distributed, rg.profiler) that this install
        # set lacks: retrograd has the name, its ImportError says what to install
        return True
    return True


def _figures() -> dict:
    out = {}
    for ns in NAMESPACES:
        table = _omissions.index()[ns]
        names = _torch_names(ns)
        present = [n for n in names if _present(ns, n)]
        omitted = [n for n in names if n not in present and n in table]
        missing = [n for n in names if n not in present and n not in table]
        out[ns] = {"total": len(names), "present": present, "omitted": omitted, "missing": missing}
    return out


@pytest.fixture(scope="module", autouse=True)
def figures():
    # autouse: the figures are printed whichever of this module's tests run
    figs = _figures()
    lines = ["coverage of torch 2.13's public names (present / deliberately omitted / missing):"]
    total = covered = 0
    for ns, f in figs.items():
        cov = len(f["present"]) + len(f["omitted"])
        total += f["total"]
        covered += cov
        lines.append(f"  {ns:26s} {f['total']:5d} names: {len(f['present']):5d} present, "
                     f"{len(f['omitted']):4d} omitted, {len(f['missing']):4d} missing "
                     f"({100.0 * cov / max(f['total'], 1):5.1f}%)")
    lines.append(f"  {'all':26s} {total:5d} names: {100.0 * covered / total:5.1f}% present or omitted "
                 f"(target {100 * TARGET:.0f}%)")
    REPORT[:] = lines
    print("\n".join(lines))
    return figs


# the figures' lines, which conftest.py prints in the terminal summary
REPORT: list[str] = []


def test_coverage_target(figures):
    total = sum(f["total"] for f in figures.values())
    covered = sum(len(f["present"]) + len(f["omitted"]) for f in figures.values())
    missing = {ns: f["missing"] for ns, f in figures.items() if f["missing"]}
    assert covered / total >= TARGET, (
        f"{covered}/{total} = {100.0 * covered / total:.1f}% of torch's names are present or omitted "
        f"(target {100 * TARGET:.0f}%); missing: {missing}")


def test_table_names_are_torch_names():
    # a row naming something torch 2.13 does not have is a typo or stale
    for ns in NAMESPACES:
        unknown = sorted(set(_omissions.index()[ns]) - set(_torch_names(ns)))
        assert not unknown, f"{ns}: the omissions table lists names torch does not have: {unknown}"


@pytest.mark.parametrize("ns", NAMESPACES)
def test_no_name_is_present_and_omitted(ns):
    both = sorted(n for n in _omissions.index()[ns] if _present(ns, n))
    assert not both, f"{ns}: present in retrograd and listed as omitted: {both}"


@pytest.mark.parametrize("ns", NAMESPACES)
def test_omissions_raise_helpful_errors(ns):
    ours = _ours(ns)
    for name, (reason, instead) in _omissions.index()[ns].items():
        target = rg.zeros(1) if ns == "torch.Tensor" else ours
        with pytest.raises(AttributeError) as info:
            getattr(target, name)
        msg = str(info.value)
        assert "deliberately leaves out" in msg and reason in msg and instead in msg, (ns, name, msg)
        assert not hasattr(target, name)


def test_every_row_has_reason_and_alternative():
    for ns, rows in _omissions.OMISSIONS.items():
        for names, reason, instead in rows:
            assert names.split() and reason.strip() and instead.strip(), (ns, names)


def test_unknown_names_keep_pythons_message():
    with pytest.raises(AttributeError, match="module 'retrograd' has no attribute 'no_such_name'"):
        rg.no_such_name  # noqa: B018
    with pytest.raises(AttributeError, match="'Tensor' object has no attribute 'no_such_name'"):
        rg.zeros(1).no_such_name  # noqa: B018
    with pytest.raises(AttributeError, match="module 'retrograd.nn' has no attribute 'no_such_name'"):
        rg.nn.no_such_name  # noqa: B018


def test_omitted_tensor_attribute_message():
    with pytest.raises(AttributeError, match=r"leaves out torch\.Tensor\.to_sparse .*sparse layouts"):
        rg.zeros(2).to_sparse()
    with pytest.raises(AttributeError, match=r"torch\.ScriptModule .*TorchScript"):
        rg.ScriptModule  # noqa: B018


def test_import_does_not_load_the_table():
    import subprocess
    import sys
    code = "import sys, retrograd; print('retrograd._omissions' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
