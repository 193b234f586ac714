"""retrograd-profiler: op and engine events, tables and traces.

``import retrograd as rg; rg.profiler.profile(...)`` works as
``torch.profiler.profile``. Nothing is registered in core at import: the
callbacks fill core's op-event slot only while a profile records. The ABI
check below runs before any core type is touched (core's abi.pxd, rule 3).
"""
from retrograd.profiler._abi_check import BUILT_AGAINST as _BUILT_AGAINST

import retrograd.core as _core

_core.check_abi("retrograd-profiler", _BUILT_AGAINST, _core.ABI_VERSION)

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
