"""What the API reference documents: one list of modules, read by the docs
build (which writes an autosummary page per module) and by
``tests/docs/test_docstrings.py`` (which checks the docstrings of the same
objects). Add a module here and it gets a reference page and a docstring
check.

An object is documented once, under the first module of ``MODULES`` that
exports it (``rg.no_grad`` is also ``rg.autograd.no_grad``: its page is
under ``retrograd``). A module's public names are its ``__all__``, or, without
one, the names of ``dir()`` without a leading underscore; submodules and
NumPy's own objects (the dtypes ``rg.float32`` ..., which are NumPy's) are
left out.
"""
from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import types
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
              "(``torch.autograd``). The gradient modes and ``backward``/``grad`` are listed under "
              ":doc:`retrograd`."),
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
        names = [n for n in dir(module) if not n.startswith("_")]
    return list(dict.fromkeys(names))


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


def collect(skip_absent: bool = False) -> list[tuple[ApiModule, list[tuple[str, object]]]]:
    """Each module of MODULES with the ``(name, object)`` pairs it documents.

    An object exported by several modules belongs to the first. A module that
    cannot be imported because an optional distribution is not installed
    (retrograd.profiler, retrograd.forward_ad) raises, unless ``skip_absent``
    (the tests of an install set without it), which leaves it out.
    """
    seen: set[int] = set()
    out = []
    for entry in MODULES:
        try:
            module = importlib.import_module(entry.name)
        except ImportError:
            # (the umbrella's shims raise ImportError naming the distribution)
            if skip_absent and any(_absent(dist) for dist in _OPTIONAL):
                continue
            raise
        members = []
        for name in public_names(module):
            obj = getattr(module, name, None)
            if obj is None or not _documentable(obj) or id(obj) in seen:
                continue
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


def _autosummary(names: list[str]) -> list[str]:
    lines = [".. autosummary::", "   :toctree: objects", "   :nosignatures:", ""]
    lines += [f"   {n}" for n in names]
    return lines + [""]


def page(entry: ApiModule, members: list[tuple[str, object]]) -> str:
    """The reST of one API page (autosummary tables; a page per object in ``objects/``)."""
    lines = [entry.title, "=" * len(entry.title), "", f".. currentmodule:: {entry.name}", ""]
    if entry.intro:
        lines += [entry.intro, ""]
    names = [n for n, _ in members]
    placed: set[str] = set()
    for heading, group in entry.groups:
        present = [n for n in group if n in names]
        if not present:
            continue
        placed.update(present)
        lines += [heading, "-" * len(heading), ""] + _autosummary(present)
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
    return "\n".join(lines)


def write_pages(outdir: str) -> list[str]:
    """Write one page per module into ``outdir`` (only where the text changed,
    so that Sphinx rebuilds only what changed). Returns the page names."""
    os.makedirs(outdir, exist_ok=True)
    written = []
    for entry, members in collect():
        text = page(entry, members)
        path = os.path.join(outdir, entry.name + ".rst")
        old = None
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                old = f.read()
        if old != text:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        written.append(entry.name)
    return written
