# Stubs for the compiled recorder (_collector.pyx).
from typing import Any

KIND_OP: int
KIND_USER: int
KIND_EVALUATE: int
KIND_BACKWARD: int
EVALUATE_PREFIX: str

class RawEvent:
    name: str
    kind: int
    start_ns: int
    end_ns: int
    sequence_nr: int
    tid: int
    input_shapes: list[Any] | None
    input_types: list[str] | None
    stack: list[str] | None
    nbytes: int
    fwd_tid: int
    user_args: str | None

def clock_ns() -> int: ...
def native_thread_id() -> int: ...
def start(record_shapes: bool, with_stack: bool, profile_memory: bool) -> None: ...
def stop() -> tuple[list[RawEvent], list[list[Any]]]: ...
def is_active() -> bool: ...
def session() -> int: ...
def record_user_event(session: int, name: str, start_ns: int, end_ns: int,
                      user_args: str | None = ...) -> None: ...
