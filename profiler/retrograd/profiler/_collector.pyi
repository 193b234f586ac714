# The type stub of retrograd.profiler._collector, written by hand (the compiled
# module is _collector.pyx): what the profiler's Python modules use.
# tests/install/test_stubs.py checks it against the module.
from typing import Any

EVALUATE_PREFIX: str
KIND_OP: int
KIND_BACKWARD: int
KIND_EVALUATE: int
KIND_USER: int

class RawEvent:
    """One recorded range, before the profiler's Python side turns it into an event."""
    name: str | None
    kind: int
    start_ns: int
    end_ns: int
    sequence_nr: int
    tid: int
    fwd_tid: int
    input_shapes: list[Any] | None
    input_types: list[str] | None
    stack: list[str] | None
    nbytes: int
    user_args: str | None

def clock_ns() -> int: ...
def start(record_shapes: bool, with_stack: bool, profile_memory: bool) -> None: ...
def stop() -> tuple[list[RawEvent], list[list[Any]], list[tuple[int, int, int]]]: ...
def session() -> int: ...
def record_user_event(session: int, name: str, start_ns: int, end_ns: int,
                      user_args: str | None = None) -> None: ...

# the core ABI (major, minor) this module was compiled against
BUILT_AGAINST: tuple[int, int]
