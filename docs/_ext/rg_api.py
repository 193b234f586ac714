"""What the API reference documents: one list of modules, read by the docs
build (which writes an autosummary page per module) and by
``tests/docs/test_docstrings.py`` (which checks the docstrings of the same
objects). Add a module here and it gets a reference page and a docstring
check.

An object is documented once, under the first module of ``MODULES`` that
exports it (``rg.no_grad`` is also ``rg.autograd.no_grad``: its page is
under ``retrograd``), or under the module that names it in ``owns`` (its
PyTorch spelling: ``rg.autograd.grad``); the other modules that export it
list it as an alias pointing there. A module's public names are its ``__all__``, or, without
one, the names of ``dir()`` without a leading underscore; submodules and
NumPy's own objects (the dtypes ``rg.float32`` ..., which are NumPy's) are
left out.
"""
from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import sys
import types
import typing
from dataclasses import dataclass, field


@dataclass(frozen=True)
class ApiModule:
    """One page of the API reference."""

    name: str                       # the import name
    title: str                      # the page's title
    intro: str = ""                 # a paragraph under the title (reST)
    # named groups of the page, in order: (heading, [names]); the names
    # not in any group are listed last under `rest`
    groups: tuple = field(default_factory=tuple)
    rest: str = "Contents"
    # names documented here although an earlier module exports them too: the
    # PyTorch spelling is canonical (``torch.autograd.grad``, not ``rg.grad``)
    owns: tuple = ()
    # list the names that another module documents as aliases on this page
    # (off for retrograd.core, whose every name the umbrella re-exports)
    aliases: bool = True


# The ops and Tensor live in retrograd.core and are re-exported by the
# umbrella; these groups sort rg's page, every other public name of rg is
# an operation.
_RG_GROUPS = (
    ("Tensors", ["Tensor", "is_tensor"]),
    ("Creating tensors", ["tensor", "as_tensor", "from_numpy", "zeros", "ones", "full", "empty", "arange",
                          "linspace", "eye", "zeros_like", "ones_like", "full_like", "empty_like", "from_dlpack"]),
    ("Random numbers", ["manual_seed", "get_rng", "Generator", "get_rng_state", "set_rng_state", "rand", "randn",
                        "randint", "randperm", "rand_like", "randn_like", "multinomial", "bernoulli", "normal",
                        "poisson"]),
    ("Dtypes", ["get_default_dtype", "set_default_dtype", "finfo", "iinfo"]),
    ("Gradient modes", ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
                        "is_inference_mode_enabled"]),
    ("Anomaly detection", ["is_anomaly_enabled", "is_anomaly_check_nan_enabled", "set_anomaly_enabled"]),
    ("Backward", ["backward", "grad"]),
    ("Devices", ["Device", "device", "set_virtual_cpu_devices", "num_virtual_cpu_devices"]),
    ("Saving and loading", ["save", "load"]),
    ("Graph structures", ["Node", "Edge", "AccumulateGrad", "GraphRoot", "SavedVariable", "InputMetadata",
                          "VersionCounter", "RemovableHandle", "Error", "DelayedError"]),
    ("For extension authors", ["get_include", "check_abi", "import_extension", "ABI_VERSION"]),
)

MODULES: tuple[ApiModule, ...] = (
    ApiModule("retrograd", "retrograd (rg): tensors and operations",
              "``import retrograd as rg``. Tensors, their creation, the operations recorded by autograd, "
              "gradient modes, and saving.", _RG_GROUPS, rest="Operations"),
    ApiModule("retrograd.autograd", "retrograd.autograd",
              "Backward, custom Functions, gradient checking, and the engine's switches "
              "(``torch.autograd``). The gradient modes are described under :mod:`retrograd`.",
              owns=("backward", "grad")),
    ApiModule("retrograd.autograd.functional", "retrograd.autograd.functional",
              "Jacobians, Hessians and their products with vectors (``torch.autograd.functional``)."),
    ApiModule("retrograd.autograd.graph", "retrograd.autograd.graph",
              "Inspecting and hooking the backward graph (``torch.autograd.graph``)."),
    ApiModule("retrograd.autograd.forward_ad", "retrograd.autograd.forward_ad",
              "Forward-mode AD (``torch.autograd.forward_ad``; the ``retrograd-forward-ad`` distribution)."),
    ApiModule("retrograd.nn", "retrograd.nn", "Modules, parameters, layers and losses (``torch.nn``)."),
    ApiModule("retrograd.nn.functional", "retrograd.nn.functional",
              "Layers and losses as functions (``torch.nn.functional``)."),
    ApiModule("retrograd.nn.grad", "retrograd.nn.grad",
              "Gradients of the convolutions with respect to their input and weight (``torch.nn.grad``)."),
    ApiModule("retrograd.nn.init", "retrograd.nn.init", "Parameter initialisation (``torch.nn.init``)."),
    ApiModule("retrograd.nn.utils", "retrograd.nn.utils",
              "Gradient clipping, parameter vectors, weight and spectral normalisation, and fusing batch norm "
              "(``torch.nn.utils``)."),
    ApiModule("retrograd.nn.utils.rnn", "retrograd.nn.utils.rnn",
              "Packed and padded sequences for the recurrent layers (``torch.nn.utils.rnn``)."),
    ApiModule("retrograd.nn.utils.parametrize", "retrograd.nn.utils.parametrize",
              "Parametrizations of a module's tensors (``torch.nn.utils.parametrize``)."),
    ApiModule("retrograd.nn.utils.parametrizations", "retrograd.nn.utils.parametrizations",
              "Ready-made parametrizations: orthogonal, weight and spectral norm "
              "(``torch.nn.utils.parametrizations``)."),
    ApiModule("retrograd.optim", "retrograd.optim", "Optimizers (``torch.optim``)."),
    ApiModule("retrograd.optim.lr_scheduler", "retrograd.optim.lr_scheduler",
              "Learning-rate schedules (``torch.optim.lr_scheduler``)."),
    ApiModule("retrograd.optim.swa_utils", "retrograd.optim.swa_utils",
              "Weight averaging: SWA and EMA (``torch.optim.swa_utils``)."),
    ApiModule("retrograd.utils.data", "retrograd.utils.data",
              "Datasets, samplers and the DataLoader (``torch.utils.data``)."),
    ApiModule("retrograd.utils.checkpoint", "retrograd.utils.checkpoint",
              "Activation checkpointing: recompute instead of saving (``torch.utils.checkpoint``)."),
    ApiModule("retrograd.cuda", "retrograd.cuda",
              "CUDA devices, streams, events, memory statistics and seeding, over CuPy (``torch.cuda``)."),
    ApiModule("retrograd.amp", "retrograd.amp",
              "Mixed precision: autocast and GradScaler (``torch.amp``)."),
    ApiModule("retrograd.cuda.amp", "retrograd.cuda.amp",
              "torch.cuda.amp's names: autocast on CUDA and GradScaler (``torch.cuda.amp``)."),
    ApiModule("retrograd.backends", "retrograd.backends",
              "torch.backends' switches, kept and without effect on NumPy (``torch.backends``)."),
    ApiModule("retrograd.backends.cudnn", "retrograd.backends.cudnn",
              "cuDNN's flags (``torch.backends.cudnn``); retrograd does not use cuDNN."),
    ApiModule("retrograd.backends.cuda", "retrograd.backends.cuda",
              "CUDA matmul switches (``torch.backends.cuda``)."),
    ApiModule("retrograd.backends.mps", "retrograd.backends.mps",
              "Apple's Metal devices: not supported (``torch.backends.mps``)."),
    ApiModule("retrograd.backends.cpu", "retrograd.backends.cpu", "The CPU's capability (``torch.backends.cpu``)."),
    ApiModule("retrograd.accelerator", "retrograd.accelerator",
              "The current accelerator, device-agnostic (``torch.accelerator``)."),
    ApiModule("retrograd.onnx", "retrograd.onnx",
              "torch.onnx's names; exporting is not supported (``torch.onnx``)."),
    ApiModule("retrograd.serialization", "retrograd.serialization",
              "Saving and loading in torch's file format, and the allow-list of weights-only loading "
              "(``torch.serialization``)."),
    ApiModule("retrograd.utils.tensorboard", "retrograd.utils.tensorboard",
              "Logging for TensorBoard: SummaryWriter (``torch.utils.tensorboard``; needs the ``tensorboard`` "
              "package)."),
    ApiModule("retrograd.utils.dlpack", "retrograd.utils.dlpack",
              "Zero-copy exchange with NumPy, CuPy, torch and JAX arrays (``torch.utils.dlpack``)."),
    ApiModule("retrograd.linalg", "retrograd.linalg", "Linear algebra (``torch.linalg``)."),
    ApiModule("retrograd.utils", "retrograd.utils",
              "Utilities (``torch.utils``): the data, checkpoint, dlpack and tensorboard modules, each with its "
              "own page."),
    ApiModule("retrograd.core", "retrograd.core",
              "The ``retrograd-core`` distribution: the tensor, the operations and the autograd engine's data "
              "structures, in Cython. Every public name is re-exported by the umbrella package and described "
              "under :mod:`retrograd`; import it from there.", aliases=False),
    ApiModule("retrograd.profiler", "retrograd.profiler",
              "The profiler (``torch.profiler``; the ``retrograd-profiler`` distribution)."),
    ApiModule("retrograd.nn.parallel", "retrograd.nn.parallel",
              "DataParallel, DistributedDataParallel and the comm ops between devices (``torch.nn.parallel``)."),
    ApiModule("retrograd.nn.parallel.comm", "retrograd.nn.parallel.comm",
              "Broadcast, scatter, gather and reduce-add across the devices of one process, "
              "differentiable (``torch.nn.parallel.comm``)."),
    ApiModule("retrograd.distributed", "retrograd.distributed",
              "Process groups and collectives over MPI (``torch.distributed``; the "
              "``retrograd-distributed`` distribution)."),
    ApiModule("retrograd.distributed.nn.functional", "retrograd.distributed.nn.functional",
              "Collectives that autograd differentiates (``torch.distributed.nn.functional``)."),
    ApiModule("retrograd.distributed.run", "retrograd.distributed.run",
              "The launcher: ``python -m retrograd.distributed.run --nproc N script.py``."),
    ApiModule("retrograd.compile", "retrograd.compile",
              "Tracing compiler: forward and backward as straight-line programs (``torch.compile``; "
              "the ``retrograd-compile`` distribution)."),
    ApiModule("retrograd.compile.exc", "retrograd.compile.exc",
              "The errors of ``rg.compile`` (``torch._dynamo.exc``)."),
)


def public_names(module: types.ModuleType) -> list[str]:
    """The public names of ``module``: ``__all__``, else ``dir()`` without underscores."""
    names = getattr(module, "__all__", None)
    if names is None:
        names = dir(module)
    # (core's __all__ lists its table's underscored ops, _conv2d, which only
    # reach users through retrograd.core.extending)
    return list(dict.fromkeys(n for n in names if not n.startswith("_")))


def _documentable(obj) -> bool:
    if isinstance(obj, types.ModuleType):
        return False
    owner = getattr(obj, "__module__", None) or ""
    if owner == "numpy" or owner.startswith("numpy."):
        return False                       # NumPy's own (the dtypes): NumPy documents them
    return callable(obj) or isinstance(obj, type)


# the optional distributions' modules: an install set may lack them
_OPTIONAL = ("retrograd.forward_ad", "retrograd.profiler", "retrograd.distributed", "retrograd.compile",
             "retrograd.compile.exc")


def _absent(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is None
    except ImportError:
        return True


def _imported(skip_absent: bool) -> list[tuple[ApiModule, types.ModuleType]]:
    out = []
    for entry in MODULES:
        try:
            module = importlib.import_module(entry.name)
        except ImportError:
            # (the umbrella's shims raise ImportError naming the distribution)
            if skip_absent and any(_absent(dist) for dist in _OPTIONAL):
                continue
            raise
        out.append((entry, module))
    return out


def collect(skip_absent: bool = False) -> list[tuple[ApiModule, list[tuple[str, object]]]]:
    """Each module of MODULES with the ``(name, object)`` pairs it documents.

    An object exported by several modules belongs to the first, unless a
    later one names it in ``owns`` (the PyTorch spelling). A module that
    cannot be imported because an optional distribution is not installed
    (retrograd.profiler, retrograd.forward_ad) raises, unless ``skip_absent``
    (the tests of an install set without it), which leaves it out.
    """
    modules = _imported(skip_absent)
    claimed: dict[int, str] = {}
    for entry, module in modules:
        for name in entry.owns:
            obj = getattr(module, name, None)
            if obj is not None and _documentable(obj):
                claimed.setdefault(id(obj), entry.name)
    seen: set[int] = set()
    out = []
    for entry, module in modules:
        members = []
        names = public_names(module)
        for name in names:
            obj = getattr(module, name, None)
            if obj is None or not _documentable(obj) or id(obj) in seen:
                continue
            if claimed.get(id(obj), entry.name) != entry.name:
                continue
            own = getattr(obj, "__name__", name)
            if own != name and own in names and getattr(module, own, None) is obj:
                continue                  # `group = GroupMember`: described under its own name
            seen.add(id(obj))
            members.append((name, obj))
        out.append((entry, members))
    return out


def public_methods(cls: type) -> list[tuple[str, object]]:
    """The public methods and properties that ``cls`` itself defines (not inherited)."""
    out = []
    for name, attr in vars(cls).items():
        if name.startswith("_"):
            continue
        if isinstance(attr, (staticmethod, classmethod)):
            attr = attr.__func__
        if isinstance(attr, property) or inspect.isroutine(attr) or inspect.isdatadescriptor(attr):
            out.append((name, attr))
    return out


# -- the site: what each page holds -------------------------------------------

# The API index's sections, in the order of torch's; a module of MODULES that
# no section names is listed under "More".
SECTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Tensors and operations", ("retrograd", "retrograd.linalg", "retrograd.core")),
    ("Automatic differentiation", ("retrograd.autograd", "retrograd.autograd.functional",
                                   "retrograd.autograd.graph", "retrograd.autograd.forward_ad")),
    ("Neural networks", ("retrograd.nn", "retrograd.nn.functional", "retrograd.nn.init", "retrograd.nn.grad",
                         "retrograd.nn.utils", "retrograd.nn.utils.rnn", "retrograd.nn.utils.parametrize",
                         "retrograd.nn.utils.parametrizations")),
    ("Optimization", ("retrograd.optim", "retrograd.optim.lr_scheduler", "retrograd.optim.swa_utils")),
    ("Data", ("retrograd.utils", "retrograd.utils.data")),
    ("Memory and precision", ("retrograd.utils.checkpoint", "retrograd.amp", "retrograd.cuda.amp")),
    ("Profiler", ("retrograd.profiler",)),
    ("Compiler", ("retrograd.compile", "retrograd.compile.exc")),
    ("Distributed", ("retrograd.distributed", "retrograd.distributed.nn.functional", "retrograd.distributed.run",
                     "retrograd.nn.parallel", "retrograd.nn.parallel.comm")),
    ("Devices and backends", ("retrograd.cuda", "retrograd.accelerator", "retrograd.backends",
                              "retrograd.backends.cudnn", "retrograd.backends.cuda", "retrograd.backends.mps",
                              "retrograd.backends.cpu")),
    ("Saving, exchange and logging", ("retrograd.serialization", "retrograd.utils.dlpack",
                                      "retrograd.utils.tensorboard", "retrograd.onnx")),
)


@dataclass
class Page:
    """One module's page: what it describes, and the names it only points from."""

    entry: ApiModule
    module: types.ModuleType
    members: list                   # (name, object) described here
    aliases: list                   # (name, object, canonical full name) described elsewhere
    data: list                      # (name, value): constants and NumPy's dtypes


@dataclass
class Site:
    pages: list
    canonical: dict                 # id(object) -> its canonical full name

    def name_of(self, obj) -> str | None:
        return self.canonical.get(id(obj))


def site(skip_absent: bool = False) -> Site:
    """Every page of the API reference, with the canonical name of each object."""
    modules = dict((e.name, m) for e, m in _imported(skip_absent))
    described = collect(skip_absent)
    canonical = {id(obj): f"{entry.name}.{name}" for entry, members in described for name, obj in members}
    pages = []
    for entry, members in described:
        module = modules[entry.name]
        own = {f"{entry.name}.{n}" for n, _ in members}
        aliases, data = [], []
        for name in public_names(module):
            if not hasattr(module, name):
                continue
            obj = getattr(module, name)
            if isinstance(obj, types.ModuleType):
                continue
            if _documentable(obj):
                target = canonical.get(id(obj))
                if entry.aliases and target and f"{entry.name}.{name}" not in own:
                    aliases.append((name, obj, target))
            elif entry.aliases:
                data.append((name, obj))
        pages.append(Page(entry, module, members, aliases, data))
    return Site(pages, canonical)


def ours(klass: type) -> bool:
    """A class of retrograd's distributions (retrograd-compile's Cython
    module is named ``compile._call``)."""
    return (getattr(klass, "__module__", "") or "").split(".")[0] in ("retrograd", "compile")


def class_members(cls: type, documented: set[int]) -> list[str]:
    """The members a class page describes: the public ones ``cls`` defines,
    and those it inherits from a base with no page of its own (a private
    base such as ``_ConvNd``); those of a documented base (``Module``) are on
    that base's page, and those of Python's own bases (``object``,
    ``Exception``) are Python's."""
    out = []
    for klass in cls.__mro__:
        if klass is not cls and (id(klass) in documented or not ours(klass)):
            continue
        for name in vars(klass):
            if name.startswith("_") or name in out:
                continue
            owner = next(k for k in cls.__mro__ if name in vars(k))
            if owner is klass:
                out.append(name)
    return out


def _python_own(cls) -> bool:
    """A class of Python itself (``Exception``, ``enum.Enum``, ``abc.ABC``)."""
    return (getattr(cls, "__module__", "") or "").split(".")[0] in sys.stdlib_module_names


def public_bases(cls: type, canonical: dict) -> list:
    """The bases a class page shows (reST, or Python's own classes).

    A base without a page of its own (a private ``_ConvNd``, ``_Loss``, or
    a mixin) is replaced by its own bases, up to the nearest documented
    class (its members are on the subclass's page: see ``class_members``);
    ``object`` and ``Generic`` are left out; a documented base is named by
    its canonical name (``retrograd.nn.Module``, not the module it is
    defined in); another library's class is named, not linked (the build
    has no intersphinx)."""
    out: list = []

    def add(base):
        origin = typing.get_origin(base)
        if origin is not None:                   # Sampler[T_co], Generic[T_co]: the class itself
            if origin is typing.Generic or origin is typing.Protocol:
                return
            base = origin
        if base is object or not isinstance(base, type):
            return
        if id(base) in canonical:
            entry = f":py:class:`{canonical[id(base)]}`"
        elif _python_own(base):
            entry = base
        elif ours(base):
            for b in getattr(base, "__orig_bases__", base.__bases__):   # its own bases, in its place
                add(b)
            return
        else:                                    # another library's class (NumPy's Generator): its name
            entry = f"``{base.__module__.split('.')[0]}.{base.__qualname__}``"
        if entry not in out:
            out.append(entry)

    for base in getattr(cls, "__orig_bases__", cls.__bases__):
        add(base)
    return out


def _autosummary(names: list[str], toctree: bool = True) -> list[str]:
    lines = [".. autosummary::"] + (["   :toctree: objects"] if toctree else []) + ["   :nosignatures:", ""]
    lines += [f"   {n}" for n in names]
    return lines + [""]


def _indent(text: str, by: str = "   ") -> list[str]:
    return [by + line if line else "" for line in text.splitlines()]


def _value_text(name: str, value) -> str:
    """A line about a constant or a dtype of a module."""
    import numpy as np
    if isinstance(value, np.dtype):
        return (f"The dtype ``numpy.{value.name}`` (``torch.{name}``): retrograd's dtypes are NumPy's, "
                "and ``rg.float32 == np.float32``.")
    if isinstance(value, type) and (value.__module__ or "").startswith("numpy"):
        return f"NumPy's ``numpy.{value.__name__}``: retrograd's dtypes are NumPy's."
    text = repr(value)
    if len(text) > 120:
        text = text[:117] + "..."
    if isinstance(value, float):
        return f"The constant ``{text}`` (``torch.{name}``, ``math.{name}``)."
    return f"The constant ``{text}``."


def _alias_directive(name: str, obj, target: str) -> list[str]:
    if isinstance(obj, type):
        kind, role = "class", "class"
    elif callable(obj):
        kind, role = "function", "func"
    else:
        kind, role = "data", "data"
    return [f".. py:{kind}:: {name}", "", f"   The same object as :{role}:`{target}`, which describes it.", ""]


def page(p: Page) -> str:
    """The reST of one module's page (autosummary tables linking a page per object in ``objects/``)."""
    entry, members = p.entry, p.members
    lines = [entry.title, "=" * len(entry.title), "", f".. module:: {entry.name}", "",
             f".. currentmodule:: {entry.name}", ""]
    if entry.intro:
        lines += [entry.intro, ""]
    names = [n for n, _ in members]
    alias_names = [n for n, _, _ in p.aliases]
    placed: set[str] = set()
    for heading, group in entry.groups:
        present = [n for n in group if n in names]
        linked = [n for n in group if n in alias_names]
        if not present and not linked:
            continue
        placed.update(present)
        lines += [heading, "-" * len(heading), ""]
        if present:
            lines += _autosummary(present)
        if linked:
            lines += ["Described under their PyTorch spelling:", ""] + _autosummary(linked, toctree=False)
    rest = [n for n in names if n not in placed]
    if rest:
        classes = [n for n in rest if isinstance(dict(members)[n], type)]
        functions = [n for n in rest if n not in classes]
        if entry.groups:
            lines += [entry.rest, "-" * len(entry.rest), ""] + _autosummary(rest)
        else:
            for heading, group in (("Classes", classes), ("Functions", functions)):
                if group:
                    lines += [heading, "-" * len(heading), ""] + _autosummary(group)
    if p.data:
        lines += ["Constants and dtypes", "-" * 20, ""]
        for name, value in p.data:
            lines += [f".. py:data:: {name}", "", *_indent(_value_text(name, value)), ""]
    if p.aliases:
        lines += ["Aliases", "-" * 7, "",
                  "Names of this module that are described once, under another name.", ""]
        for name, obj, target in p.aliases:
            lines += _alias_directive(name, obj, target)
    return "\n".join(lines)


def object_page(module: str, name: str, obj, canonical: dict) -> str:
    """The reST of one object's page (what autosummary's templates wrote before)."""
    full = f"{module}.{name}"
    lines = [full, "=" * len(full), "", f".. currentmodule:: {module}", ""]
    if isinstance(obj, type):
        lines.append(f".. autoclass:: {name}")
        members = class_members(obj, set(canonical))
        if members:
            lines.append(f"   :members: {', '.join(members)}")
            lines.append("   :undoc-members:")           # a C attribute cannot hold a docstring
            if len(members) > 60:                  # Tensor: findable in alphabetical order, as torch's
                lines.append("   :member-order: alphabetical")
        if public_bases(obj, canonical):
            lines.append("   :show-inheritance:")
    elif isinstance(obj, types.FunctionType | types.BuiltinFunctionType) or inspect.isroutine(obj):
        lines.append(f".. autofunction:: {name}")
    else:                                          # a callable instance (a decorator object ...)
        lines.append(f".. autodata:: {name}")
        lines.append("   :no-value:")
    return "\n".join(lines) + "\n"


def index_text(s: Site) -> str:
    """The API index: a table per section, a line per module, and the toctrees."""
    entries = {p.entry.name: p.entry for p in s.pages}
    sections = [(title, [n for n in names if n in entries]) for title, names in SECTIONS]
    listed = {n for _, names in sections for n in names}
    more = [n for n in entries if n not in listed]
    if more:
        sections.append(("More", more))
    lines: list[str] = []
    for title, names in sections:
        if not names:
            continue
        lines += [title, "-" * len(title), "", ".. list-table::", "   :widths: 35 65", ""]
        for n in names:
            intro = " ".join(entries[n].intro.split()) or entries[n].title
            lines += [f"   * - :mod:`{n}`", f"     - {intro}"]
        lines += ["", ".. toctree::", "   :hidden:", f"   :caption: {title}", ""]
        lines += [f"   generated/{n}" for n in names]
        lines.append("")
    return "\n".join(lines)


def _write(path: str, text: str) -> None:
    old = None
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            old = f.read()
    if old != text:                                # unchanged pages are not rebuilt
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


_SITE: list = []


def current_site() -> Site:
    """The site of the last ``write_pages`` (computed once per build)."""
    if not _SITE:
        _SITE.append(site())
    return _SITE[0]


def write_pages(outdir: str) -> Site:
    """Write the module pages, the object pages (``objects/``) and the API
    index's sections (``sections.rst.inc``) into ``outdir``, each only where
    its text changed (so that Sphinx rebuilds only what changed), and remove
    the pages of names that are gone. Returns the site."""
    s = site()
    _SITE[:] = [s]
    objdir = os.path.join(outdir, "objects")
    os.makedirs(objdir, exist_ok=True)
    wanted = {"sections.rst.inc"}
    for p in s.pages:
        _write(os.path.join(outdir, p.entry.name + ".rst"), page(p))
        wanted.add(p.entry.name + ".rst")
        for name, obj in p.members:
            fname = f"{p.entry.name}.{name}.rst"
            _write(os.path.join(objdir, fname), object_page(p.entry.name, name, obj, s.canonical))
            wanted.add("objects/" + fname)
    _write(os.path.join(outdir, "sections.rst.inc"), index_text(s))
    for folder, prefix in ((outdir, ""), (objdir, "objects/")):
        for fname in os.listdir(folder):
            if fname.endswith((".rst", ".inc")) and prefix + fname not in wanted:
                os.remove(os.path.join(folder, fname))
    return s
