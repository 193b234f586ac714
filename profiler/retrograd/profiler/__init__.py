"""retrograd-profiler: op and engine events, tables and traces.

``import retrograd as rg; rg.profiler.profile(...)`` works as
``torch.profiler.profile``. Nothing is registered in core at import: the
callbacks fill core's op-event slot only while a profile records. Loading
the compiled module runs the ABI handshake with core first (abi.pxd, rule 3).
"""
import retrograd.core as _core

# Loading _collector runs the ABI handshake first (abi.pxd's import_core).
_core.import_extension("retrograd-profiler", "retrograd.profiler._collector")

from retrograd.profiler.profiler import (  # noqa: E402
    ProfilerAction,
    ProfilerActivity,
    profile,
    record_function,
    schedule,
    supported_activities,
    tensorboard_trace_handler,
)
from retrograd.profiler._events import (  # noqa: E402
    EventList,
    FunctionEvent,
    FunctionEventAvg,
)

from retrograd.profiler._version import __version__  # noqa: E402,F401

__all__ = ["profile", "record_function", "schedule", "ProfilerActivity", "ProfilerAction",
           "supported_activities", "tensorboard_trace_handler", "EventList", "FunctionEvent",
           "FunctionEventAvg"]
