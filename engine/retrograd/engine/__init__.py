"""retrograd-engine: the Cython backward engine for retrograd-core's graphs.

Importing it registers the executor in core's engine slot (core imports it
lazily on the first backward). Loading the compiled module runs the ABI
handshake with core first (core's abi.pxd, rule 3).
"""
import retrograd.core as _core

# Loading _engine runs the ABI handshake first (abi.pxd's import_core).
_engine = _core.import_extension("retrograd-engine", "retrograd.engine._engine")
from retrograd.engine._engine import (  # noqa: E402,F401
    ExecInfo,
    GraphTask,
    current_worker_device,
    device_threads,
    get_max_reentrant_depth,
    is_checkpoint_valid,
    is_multithreading_enabled,
    set_max_reentrant_depth,
    queue_callback,
    current_graph_task_id,
    will_engine_execute_node,
)

from retrograd.engine._version import __version__  # noqa: E402,F401

_engine._register()


class set_multithreading_enabled:
    """Run every node on the calling thread (False) or on its device's worker
    (True, the default). Takes effect at once; as a context manager it
    restores the previous setting on exit (``torch.autograd.set_multithreading_enabled``)."""

    def __init__(self, mode: bool) -> None:
        if not isinstance(mode, bool):
            raise TypeError(f"set_multithreading_enabled(mode) expects a bool, got {type(mode).__name__}")
        self.prev = _engine.is_multithreading_enabled()
        _engine.set_multithreading_enabled_(mode)

    def __enter__(self) -> "set_multithreading_enabled":
        return self

    def __exit__(self, *exc: object) -> None:
        _engine.set_multithreading_enabled_(self.prev)


def shutdown_device_threads(timeout: float = 1.0) -> None:
    """Stop the device worker threads (done automatically at interpreter exit)."""
    _engine._shutdown_device_threads(timeout)


__all__ = ["GraphTask", "ExecInfo", "set_multithreading_enabled", "is_multithreading_enabled",
           "set_max_reentrant_depth", "get_max_reentrant_depth", "current_worker_device",
           "device_threads", "shutdown_device_threads", "queue_callback",
           "current_graph_task_id", "will_engine_execute_node", "is_checkpoint_valid"]
