from typing import Any

OP: int
INPLACE_BEGIN: int
INPLACE: int
RANDOM: int
BREAK: int
COMPOSITE_BEGIN: int
COMPOSITE_END: int
NEW: int
FACTORY: int
FUNCTION: int

UNSET: object

class Ref:
    slot: int
    def __init__(self, slot: int) -> None: ...

class Step:
    kind: str
    name: str
    fn: Any
    args: Any
    outs: tuple[int, ...]
    cast: Any
    kernel: Any
    def __init__(self, kind: str, name: str, fn: Any, args: Any, outs: tuple[int, ...],
                 cast: Any = ...) -> None: ...
    def refs(self) -> list[int]: ...

class Abort(BaseException): ...

def user_line() -> str: ...

class Recorder:
    fullgraph: bool
    abort: bool
    raise_error: Any
    steps: list[Step]
    slot_arrays: list[Any]
    by_id: dict[int, int]
    keep: list[Any]
    random_devices: dict[int, Any]
    inputs: list[int]
    lifted: list[tuple[int, Any]]
    consts: list[tuple[int, Any]]
    born: set[int]
    input_slots: set[int]
    alias: list[int]
    mute: int
    inplace_stack: list[Any]
    broken: tuple[str, str] | None
    phase: str
    const_log: list[tuple[str, Any]]
    guarded_arrays: frozenset[int]
    bwd_start: int | None
    mutated: list[tuple[Any, int]]
    restore: list[tuple[Any, Any]]
    function: Any
    def __init__(self, fullgraph: bool, raise_error: Any, abort: bool = ...) -> None: ...
    def new_slot(self, array: Any, alias_of: int | None = ...) -> int: ...
    def add_input(self, t: Any) -> int: ...
    def slot_of(self, t: Any) -> int: ...
    def template(self, x: Any) -> Any: ...
    def brk(self, what: str) -> None: ...
    def event(self, kind: int, op: str, inputs: tuple[Any, ...], outputs: tuple[Any, ...],
              attrs: Any) -> None: ...
    def record_op(self, kind: str, name: str, fn: Any, inputs: tuple[Any, ...],
                  outputs: tuple[Any, ...]) -> None: ...
    def check_inplace(self, op: str, t: Any) -> None: ...
    def record_inplace(self, op: str, fn: Any, inputs: tuple[Any, ...]) -> None: ...
