from typing import Any

MISS: object

def configure(*, key: Any, function: type, finish: Any, aliases: Any,
              graph_backward: Any) -> None: ...
def args_key(args: tuple[Any, ...], tensors: list[Any]) -> tuple[Any, ...]: ...
def run_cached(cc: Any, args: tuple[Any, ...]) -> Any: ...
def run(entry: Any, tensors: list[Any]) -> Any: ...
def node_forward(entry: Any, handoff: list[Any], *tensors: Any) -> Any: ...
def node_setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None: ...
def node_backward(ctx: Any, *gouts: Any) -> tuple[Any, ...]: ...

class EntryBase:
    progs: Any
    lifted: Any
    device: Any
    n_out: int
    mutations: Any
    struct: Any
    watched: bool
    outside_meta: Any
    source_guards: Any
    value_guards: Any
    random_slots: Any
    all_diff: bool
    out_diff: Any
    saved_out_index: Any
    diff_out_index: Any
    out_xp: Any
    out_meta: Any
    grad_inputs: Any
    def outside_ok(self) -> bool: ...

def outside_meta_of(t: Any) -> tuple[Any, Any, bool]: ...

class CallableBase:
    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...
