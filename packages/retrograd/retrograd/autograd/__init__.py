"""retrograd.autograd: backward, grad, grad modes, custom Functions,
gradient checking and the engine's switches (``torch.autograd``).

Submodules: :mod:`retrograd.autograd.functional` (Jacobians, Hessians and
their products), :mod:`retrograd.autograd.graph` (the graph's nodes, hooks
and pictures) and ``retrograd.autograd.forward_ad`` (forward mode, from the
retrograd-forward-ad distribution).
"""
from retrograd.autograd import function  # noqa: F401
from retrograd.autograd.function import Function, FunctionCtx, once_differentiable  # noqa: F401
_FUNCTION_API = ["Function", "FunctionCtx", "once_differentiable"]
from retrograd.core import (  # noqa: F401,E402
    backward,
    enable_grad,
    grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from retrograd.core import Node as _Node  # noqa: F401,E402
from retrograd.autograd import graph  # noqa: F401,E402


from types import ModuleType as _ModuleType  # noqa: E402

TYPE_CHECKING = False
if TYPE_CHECKING:
    from retrograd.engine import set_multithreading_enabled as _engine_set_multithreading_enabled
del TYPE_CHECKING


def set_multithreading_enabled(mode: bool) -> "_engine_set_multithreading_enabled":
    """Choose whether backward runs nodes on their device's worker threads.

    With True (the default) each non-CPU device (a CUDA device, a virtual
    CPU device ``cpu:1``, ...) runs its nodes on its own worker thread; with
    False every node runs on the thread that called backward
    (``torch.autograd.set_multithreading_enabled``). The setting is the
    engine's, shared by every thread. Works as a function and as a context
    manager that restores the previous setting on exit.

    Parameters
    ----------
    mode : bool
        True to use the device worker threads, False to run everything on
        the calling thread.

    Returns
    -------
    set_multithreading_enabled
        A context manager (the setting is already applied when it returns).

    Examples
    --------
    >>> import retrograd as rg
    >>> with rg.autograd.set_multithreading_enabled(False):
    ...     x = rg.tensor([1.0, 2.0], requires_grad=True)
    ...     (x * x).sum().backward()
    >>> x.grad
    tensor([2., 4.])
    """
    from retrograd.engine import set_multithreading_enabled as _impl
    return _impl(mode)


def is_multithreading_enabled() -> bool:
    """Whether backward runs nodes on their device's worker threads.

    ``torch.autograd.is_multithreading_enabled``.

    Returns
    -------
    bool
        True (the default) when each node runs on the worker thread of its
        device (nodes on the CPU run on the thread that called
        ``backward``); False inside ``set_multithreading_enabled(False)``,
        where every node runs on the calling thread.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.autograd.is_multithreading_enabled()
    True
    >>> with rg.autograd.set_multithreading_enabled(False):
    ...     rg.autograd.is_multithreading_enabled()
    False
    """
    from retrograd.engine import is_multithreading_enabled as _impl
    return bool(_impl())


def __getattr__(name: str) -> "_ModuleType":
    if name == "forward_ad":
        # a submodule that stands for retrograd.forward_ad (see forward_ad.py)
        import importlib
        return importlib.import_module("retrograd.autograd.forward_ad")
    raise AttributeError(f"module 'retrograd.autograd' has no attribute {name!r}")


__all__ = [*_FUNCTION_API, "backward", "grad", "no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "is_grad_enabled", "is_inference_mode_enabled", "set_multithreading_enabled",
           "is_multithreading_enabled"]

# gradcheck and the functional API (torch.autograd.gradcheck / .functional)
from retrograd.autograd import functional  # noqa: E402,F401
from retrograd.autograd.gradcheck import (  # noqa: E402,F401
    GradcheckError,
    gradcheck,
    gradgradcheck,
)

__all__ += ["gradcheck", "gradgradcheck", "GradcheckError", "functional"]
# --- anomaly mode and the graph API --------------------------------------------
from retrograd.core.anomaly_mode import (  # noqa: E402,F401
    detect_anomaly, set_detect_anomaly,
)
from retrograd.core import anomaly_mode  # noqa: E402,F401

__all__ += ["detect_anomaly", "set_detect_anomaly", "graph"]
