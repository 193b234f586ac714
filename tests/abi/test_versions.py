"""Versions and requirements between the distributions: one source of truth
each, checked rather than kept "in sync" by hand.

- Each distribution's version is its VERSION file (meson reads it for the
  wheel; a generated _version.py gives ``__version__``).
- retrograd-core's major.minor IS its ABI version (RG_ABI_MAJOR/MINOR in
  abi.pxd), so siblings require ABI ranges: ``retrograd-core>=A.B,<A+1``.
- The engine's floor A.B is the oldest core it supports: the kept headers
  tests/abi/headers/A.B that `nox -s old_headers` builds it against.
"""
import importlib
import importlib.metadata as md
import pathlib
import re
import tomllib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
HEADERS = ROOT / "tests" / "abi" / "headers"
FOLDERS = {"retrograd-core": "core", "retrograd-engine": "engine", "retrograd": "packages/retrograd",
           "retrograd-forward-ad": "forward_ad", "retrograd-profiler": "profiler",
           "retrograd-distributed": "distributed", "retrograd-compile": "compile"}
MODULES = {"retrograd-core": "retrograd.core", "retrograd-engine": "retrograd.engine",
           "retrograd": "retrograd", "retrograd-forward-ad": "retrograd.forward_ad",
           "retrograd-profiler": "retrograd.profiler", "retrograd-distributed": "retrograd.distributed",
           "retrograd-compile": "retrograd.compile"}
PRESENT = {d: f for d, f in FOLDERS.items() if (ROOT / f / "pyproject.toml").exists()}


def _abi_of(pxd: pathlib.Path):
    text = pxd.read_text()
    return tuple(int(re.search(rf"RG_ABI_{part} = (\d+)", text).group(1)) for part in ("MAJOR", "MINOR"))


def _version(folder):
    return (ROOT / folder / "VERSION").read_text().strip()


def _project(folder):
    return tomllib.loads((ROOT / folder / "pyproject.toml").read_text())["project"]


def _requirement(folder, dist):
    reqs = [r for r in _project(folder).get("dependencies", []) if re.match(rf"{dist}\b(?!-)", r)]
    return reqs[0] if reqs else None


CORE_ABI = _abi_of(ROOT / "core" / "retrograd" / "core" / "abi.pxd")
OLDEST = sorted(_abi_of(p / "retrograd" / "core" / "abi.pxd") for p in HEADERS.iterdir())[0]


def test_core_version_is_its_abi_version():
    major, minor, *_ = map(int, _version("core").split("."))
    assert (major, minor) == CORE_ABI, (
        f"core/VERSION {_version('core')} but abi.pxd declares ABI {CORE_ABI[0]}.{CORE_ABI[1]}: "
        "core's major.minor is its ABI version; bump both together")


@pytest.mark.parametrize("dist", sorted(PRESENT))
def test_every_distribution_has_its_own_version_file(dist):
    folder = PRESENT[dist]
    assert re.fullmatch(r"\d+\.\d+\.\d+", _version(folder))
    assert _project(folder)["dynamic"] == ["version"]       # meson reads VERSION
    assert "version: files('VERSION')" in (ROOT / folder / "meson.build").read_text()


@pytest.mark.parametrize("dist", sorted(d for d in PRESENT if d != "retrograd-core"))
def test_siblings_require_an_abi_range_of_core(dist):
    req = _requirement(PRESENT[dist], "retrograd-core")
    assert req, f"{dist} must declare its retrograd-core range"
    m = re.fullmatch(r"retrograd-core>=(\d+)\.(\d+),<(\d+)", req.replace(" ", ""))
    assert m, f"{dist}: {req!r} is not an ABI range retrograd-core>=A.B,<A+1"
    floor = (int(m.group(1)), int(m.group(2)))
    assert int(m.group(3)) == floor[0] + 1
    assert floor[0] == CORE_ABI[0] and floor <= CORE_ABI


def test_engine_floor_is_the_oldest_kept_headers():
    req = _requirement("engine", "retrograd-core").replace(" ", "")
    assert req == f"retrograd-core>={OLDEST[0]}.{OLDEST[1]},<{OLDEST[0] + 1}", (
        f"the engine is tested against the headers of core ABI {OLDEST[0]}.{OLDEST[1]} "
        "(tests/abi/headers); its retrograd-core floor must say so")


def test_umbrella_offers_the_optional_distributions_as_extras():
    extras = _project("packages/retrograd")["optional-dependencies"]
    assert [r.split(">=")[0] for r in extras["forward-ad"]] == ["retrograd-forward-ad"]
    assert [r.split(">=")[0] for r in extras["profiler"]] == ["retrograd-profiler"]
    assert [r.split(">=")[0] for r in extras["distributed"]] == ["retrograd-distributed"]
    assert [r.split(">=")[0] for r in extras["graph"]] == ["graphviz"]      # to_dot(...).render()
    assert [r.split(">=")[0] for r in extras["compile"]] == ["retrograd-compile"]
    assert [r.split(">=")[0] for r in extras["bfloat16"]] == ["ml_dtypes"]   # rg.bfloat16
    assert extras["all"] == ["retrograd[forward-ad,profiler,distributed,compile,graph,bfloat16]"]
    deps = [re.match(r"[\w-]+", r).group(0) for r in _project("packages/retrograd")["dependencies"]]
    assert "retrograd-core" in deps and "retrograd-engine" in deps
    for reqs in [*extras.values(), _project("packages/retrograd")["dependencies"]]:
        for r in reqs:
            if r.startswith("retrograd-"):
                assert "==" not in r and "<" in r, f"{r}: a range, never a pin"


def _specifiers(req):
    """'name>=1.1,<2' -> ('name', {'>=1.1', '<2'}), whatever the order."""
    req = req.split(";")[0].replace(" ", "")
    name = re.match(r"[A-Za-z0-9_.\-]+", req).group(0)
    return name, frozenset(req[len(name):].split(","))


def _installed(dist):
    try:
        return md.version(dist)
    except md.PackageNotFoundError:
        return None


@pytest.mark.parametrize("dist", sorted(FOLDERS))
def test_installed_versions_are_the_version_files(dist):
    version = _installed(dist)
    if version is None:
        pytest.skip(f"{dist} is not installed as its own distribution here (development "
                    "install, or absent from this install set)")
    assert version == _version(FOLDERS[dist])
    assert importlib.import_module(MODULES[dist]).__version__ == version


@pytest.mark.skipif(_installed("retrograd-engine") is None, reason="needs retrograd-engine installed as a wheel")
def test_installed_engine_metadata_declares_the_core_range():
    reqs = md.requires("retrograd-engine") or []
    core_req = [r for r in reqs if r.startswith("retrograd-core")]
    assert [_specifiers(r) for r in core_req] == [_specifiers(_requirement("engine", "retrograd-core"))]


@pytest.mark.skipif(_installed("retrograd") is None, reason="needs the umbrella installed as a wheel")
def test_installed_umbrella_metadata_declares_the_extras():
    reqs = md.requires("retrograd") or []
    extra = {_specifiers(r)[0]: r.split(";")[1] for r in reqs if ";" in r}
    assert 'extra == "forward-ad"' in extra["retrograd-forward-ad"]
    assert 'extra == "profiler"' in extra["retrograd-profiler"]
    assert 'extra == "distributed"' in extra["retrograd-distributed"]
    assert set(md.metadata("retrograd").get_all("Provides-Extra")) >= {"forward-ad", "profiler", "all"}


def test_built_against_headers_when_installed():
    """In `nox -s old_headers` the engine was compiled against the oldest kept
    headers; anywhere else, against the running core. Either way, its ABI
    check accepted the running core."""
    abi_check = pytest.importorskip("retrograd.engine._engine",
                                    reason="needs retrograd-engine")
    built = tuple(abi_check.BUILT_AGAINST)
    assert built in {CORE_ABI, OLDEST}
    assert built[0] == CORE_ABI[0] and built <= CORE_ABI


@pytest.mark.parametrize("dist", sorted(d for d in PRESENT if d != "retrograd-core"))
def test_numpy_floor_is_cores(dist):
    """One NumPy floor for all: core's (the oldest NumPy `nox -s
    "tests(all-oldest-numpy)"` runs the suite on)."""
    def floor(folder):
        reqs = [r for r in _project(folder).get("dependencies", []) if re.match(r"numpy\b", r)]
        return reqs[0].replace(" ", "") if reqs else None
    assert floor(PRESENT[dist]) == floor("core"), f"{dist} declares {floor(PRESENT[dist])}, core {floor('core')}"
