"""retrograd-core: tensors that record PyTorch-style autograd graphs over NumPy/CuPy.

This distribution holds the graph structures (Tensor, Node, Edge,
SavedVariable, AccumulateGrad, ...), grad modes and the op library generated
from derivatives.yaml. Running backward needs retrograd-engine; other
distributions compose with core only through its ABI layer
(``retrograd/core/abi.pxd``, see ``get_include()``).
"""
from __future__ import annotations

import os as _os

from retrograd.core import abi as _abi
from retrograd.core.abi import (  # noqa: F401
    ABI_VERSION,
    AccumulateGrad,
    DelayedError,
    Device,
    Edge,
    Error,
    GraphRoot,
    InputMetadata,
    Node,
    RemovableHandle,
    SavedVariable,
    Tensor,
    VersionCounter,
    device,
    num_virtual_cpu_devices,
    set_virtual_cpu_devices,
    sum_to,
)
from retrograd.core.grad_mode import (  # noqa: F401
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from retrograd.core._autograd import backward, grad, is_warn_always_enabled, set_warn_always  # noqa: F401
from retrograd.core._creation import *  # noqa: F401,F403
from retrograd.core._creation import __all__ as _creation_all
from retrograd.core._sampling import bernoulli, multinomial, normal, poisson  # noqa: F401
from retrograd.core._pointwise import addcdiv, addcmul  # noqa: F401
from retrograd.core._random_state import Generator, get_rng_state, set_rng_state  # noqa: F401
from retrograd.core._dtype_rules import get_default_dtype, set_default_dtype  # noqa: F401
from retrograd.core._dlpack import from_dlpack  # noqa: F401

from retrograd.core._version import __version__  # noqa: E402,F401

# Every public op of derivatives.yaml, as a module-level function.
TYPE_CHECKING = False
if TYPE_CHECKING:   # type checkers see the ops through abi.pyi (a generated stub)
    from retrograd.core.abi import *  # noqa: F403
del TYPE_CHECKING
OPS = tuple(_abi.GENERATED_OPS) + tuple(_abi.SHAPE_COMPOSITES)
SHAPE_COMPOSITES = tuple(_abi.SHAPE_COMPOSITES)
# torch's other names of the ops (arccos, multiply, clip, ...) and the
# in-place functions (sin_, ...): `aliases:`/`inplace_function:` of the table
ALIASES = tuple(_abi.GENERATED_ALIASES)
for _name in OPS + ALIASES:
    globals()[_name] = getattr(_abi, _name)
del _name


def get_include() -> str:
    """The directory to put on Cython's include path to ``cimport retrograd.core.abi``.

    A distribution that extends core in Cython (as the engine does) compiles
    against core's ``abi.pxd``; its build passes this directory to Cython
    (``-I``) and to the C compiler.

    Returns
    -------
    str
        An existing directory that holds ``retrograd/core/abi.pxd``.

    Examples
    --------
    >>> import os
    >>> import retrograd as rg
    >>> inc = rg.get_include()
    >>> os.path.isfile(os.path.join(inc, "retrograd", "core", "abi.pxd"))
    True
    """
    here = _os.path.dirname(_os.path.abspath(__file__))
    include = _os.path.join(here, "include")
    if not _os.path.isdir(include):
        # an editable (development) install runs from the source tree, where
        # retrograd/core/abi.pxd sits two levels above this package's files
        return _os.path.dirname(_os.path.dirname(here))
    return include


def check_abi(consumer: str, built_against: tuple, running: tuple = ABI_VERSION) -> None:
    """Raise ImportError unless ``consumer``, compiled against core ABI
    ``built_against`` (major, minor), can run on core ABI ``running``.

    Compatible means: same major, and the running minor is at least the one
    built against (minors only append). Every consumer calls this at import,
    before touching any core type (abi.pxd, rule 3; docs/design.md, "The ABI").

    Parameters
    ----------
    consumer : str
        The distribution's name, as pip knows it (named in the error).
    built_against : tuple of (int, int)
        The core ABI ``(major, minor)`` the consumer was compiled against.
    running : tuple of (int, int)
        The core ABI to check against: the installed core's
        ``ABI_VERSION`` unless given.

    Raises
    ------
    ImportError
        The majors differ, or the running minor is older than the one built
        against; the message says what to install or rebuild.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.check_abi("my-extension", (1, 0), running=(1, 3))
    >>> rg.check_abi("my-extension", (1, 4), running=(1, 3))
    Traceback (most recent call last):
        ...
    ImportError: my-extension was built against retrograd-core ABI 1.4, but the installed ...
    """
    bmaj, bmin = built_against
    rmaj, rmin = running
    if bmaj != rmaj:
        raise ImportError(
            f"{consumer} was built against retrograd-core ABI {bmaj}.{bmin}, but the installed "
            f"retrograd-core provides ABI {rmaj}.{rmin} (a different major version, which is "
            f"incompatible). Install a {consumer} release built for ABI {rmaj}.x, or rebuild it "
            f"from source against this retrograd-core (pip install --no-binary :all: {consumer}).")
    if rmin < bmin:
        raise ImportError(
            f"{consumer} was built against retrograd-core ABI {bmaj}.{bmin}, but the installed "
            f"retrograd-core only provides ABI {rmaj}.{rmin}: upgrade retrograd-core "
            f"(pip install -U retrograd-core), or rebuild {consumer} against the installed one.")


def import_extension(consumer: str, module: str):
    """Import ``module``, a compiled extension of distribution ``consumer``
    that cimports ``retrograd.core.abi``, and return it.

    The extension's first statement is the ABI handshake (abi.pxd's
    ``import_core``), which raises ImportError naming both ABI versions. Two
    mismatches fail earlier, while Python loads the extension, with Cython's
    own errors: a core class smaller than the extension was compiled for
    (ValueError, "size changed") and a missing or changed core function.
    Those are raised here as ImportError saying what to install. A core
    class that only grew (fields appended by a newer minor, abi.pxd rule 1)
    is what the handshake vouches for, so Cython's warning about it is
    silenced.

    Parameters
    ----------
    consumer : str
        The distribution's name, as pip knows it (named in the error).
    module : str
        The extension's full module name.

    Returns
    -------
    module
        The imported extension module.

    Raises
    ------
    ImportError
        The extension was built for a core ABI this core cannot serve.

    Examples
    --------
    In a sibling's ``__init__.py``::

        import retrograd.core as _core
        _engine = _core.import_extension("retrograd-engine", "retrograd.engine._engine")
    """
    import importlib
    import warnings

    rmaj, rmin = ABI_VERSION
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=r"retrograd\.core\.abi\.\w+ size changed",
                                    category=RuntimeWarning)
            return importlib.import_module(module)
    except ImportError as exc:
        if "retrograd-core ABI" in str(exc):      # the handshake's own message
            raise
        raise ImportError(
            f"{consumer} does not match the installed retrograd-core (ABI {rmaj}.{rmin}): {exc}. "
            f"Install the {consumer} release for this retrograd-core, or rebuild it from source "
            f"against it (pip install --no-binary :all: {consumer}).") from exc
    except ValueError as exc:
        raise ImportError(
            f"{consumer} was compiled against another retrograd-core ABI than the installed one "
            f"(ABI {rmaj}.{rmin}): {exc}. Install the {consumer} release for this retrograd-core, "
            f"or rebuild it from source against it (pip install --no-binary :all: {consumer}).") from exc


__all__ = [
    "ABI_VERSION", "Tensor", "Node", "Edge", "InputMetadata", "SavedVariable", "AccumulateGrad",
    "GraphRoot", "Error", "DelayedError", "VersionCounter", "Device", "RemovableHandle", "device",
    "set_virtual_cpu_devices", "num_virtual_cpu_devices", "no_grad", "enable_grad",
    "set_grad_enabled", "inference_mode", "is_grad_enabled", "is_inference_mode_enabled",
    "backward", "grad", "set_warn_always", "is_warn_always_enabled", "get_include", "check_abi",
    "import_extension", "sum_to", "from_dlpack", "multinomial", "bernoulli", "normal", "poisson", "addcmul", "addcdiv", "Generator",
    "get_rng_state", "set_rng_state", "get_default_dtype", "set_default_dtype",
    *OPS, *ALIASES, *_creation_all,
]

# --- reductions and linear algebra ---
# Composites (several results, or varargs operands) and the linalg namespace.
from retrograd.core._composites_reductions_linalg import (  # noqa: E402,F401
    einsum, max, min, return_types, sort, tensordot, topk,
)
from retrograd.core import linalg  # noqa: E402,F401

__all__ += ["max", "min", "sort", "topk", "einsum", "tensordot", "return_types", "linalg"]

# --- elementwise ops -------------------------------------------------------------
# torch's functions that are composites of the ops, for NumPy-minded programs
from retrograd.core import _numpy_like, _numpy_like_shape, _numpy_like_linalg, _config  # noqa: E402
from retrograd.core import _numpy_like_misc, _numpy_like_index, _numpy_like_select  # noqa: E402
from retrograd.core._numpy_like_select import *  # noqa: E402,F401,F403
from retrograd.core._numpy_like_linalg import *  # noqa: E402,F401,F403
from retrograd.core._numpy_like_misc import *  # noqa: E402,F401,F403
from retrograd.core._numpy_like_index import *  # noqa: E402,F401,F403
from retrograd.core._config import *  # noqa: E402,F401,F403
from retrograd.core._numpy_like import *  # noqa: E402,F401,F403
from retrograd.core._numpy_like_shape import *  # noqa: E402,F401,F403

__all__ += (_numpy_like.__all__ + _numpy_like_shape.__all__ + _numpy_like_linalg.__all__ + _numpy_like_misc.__all__
            + _numpy_like_index.__all__ + _numpy_like_select.__all__ + _config.__all__)

# torch's autocast switches (Note [Autocast] in _autocast_policy.py)
from retrograd.core._autocast_fns import *  # noqa: E402,F401,F403
from retrograd.core import _autocast_fns  # noqa: E402

__all__ += _autocast_fns.__all__

# Tensor's methods written in Python (Note [Python-written Tensor methods])
from retrograd.core import _tensor_methods_py  # noqa: E402
from retrograd.core.abi import _install_tensor_methods  # noqa: E402

from retrograd.core import _tensor_views_py  # noqa: E402
from retrograd.core._tensor_views_py import as_strided, as_strided_, as_strided_scatter  # noqa: E402,F401

_install_tensor_methods(_tensor_methods_py.METHODS)
_install_tensor_methods(_tensor_views_py.METHODS)
__all__ += _tensor_views_py.__all__
del _install_tensor_methods


def detach(input):
    """A tensor that shares ``input``'s data but is not part of any graph.

    The function form of :meth:`Tensor.detach` (``torch.detach``): the
    result never requires grad, and in-place changes to either tensor are
    seen by the other (they share data and the version counter).

    Parameters
    ----------
    input : Tensor
        The tensor to detach.

    Returns
    -------
    Tensor
        A new tensor on the same data, without a ``grad_fn``.

    Raises
    ------
    TypeError
        If ``input`` is not a Tensor.

    Examples
    --------
    >>> import retrograd as rg
    >>> x = rg.tensor([1.0, 2.0], requires_grad=True)
    >>> y = rg.detach(x * 2)
    >>> y.requires_grad, y.grad_fn is None
    (False, True)
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"detach(): argument 'input' must be Tensor, not {type(input).__name__}")
    return input.detach()


__all__.append("detach")

# --- dtype names: torch's names for NumPy dtypes. Imported last:
# `float`, `int` and `bool` are among them and would shadow the builtins in
# this module's code above.
from retrograd.core import _dtypes  # noqa: E402
from retrograd.core._dtypes import *  # noqa: E402,F401,F403

__all__ += _dtypes.__all__
# core's answer to "is this dtype floating-point?" (bfloat16 is NumPy kind 'V'),
# for the other distributions; not a torch name, so not in __all__
from retrograd.core._dtypes import is_floating_dtype  # noqa: E402,F401


def __getattr__(name: str) -> object:
    # torch.bfloat16, where ml_dtypes provides it (see _dtypes._bfloat16)
    if name == "bfloat16":
        return _dtypes._bfloat16()
    raise AttributeError(f"module 'retrograd.core' has no attribute {name!r}")
