# The engine's Python API (retrograd.engine and rg.autograd re-export it).
# Part of _engine.pyx, included last.

# ---------------------------------------------------------------------------
# Python API

def set_multithreading_enabled_(bint enabled):
    global _multithreading_enabled
    _multithreading_enabled = enabled


def is_multithreading_enabled():
    return _multithreading_enabled


def set_max_reentrant_depth(int depth):
    """Nested reentrant backwards allowed on one thread before moving to a pool thread."""
    global MAX_REENTRANT_DEPTH
    if depth < 1:
        raise ValueError(f"depth must be at least 1, got {depth}")
    MAX_REENTRANT_DEPTH = depth


def get_max_reentrant_depth():
    return MAX_REENTRANT_DEPTH


def current_worker_device():
    """The device key this thread serves: -2 outside backward, -1 CPU, N for a device worker."""
    return rg_tls_worker_device


def device_threads():
    """{device key: threading.Thread} of the running device workers."""
    return {dev: t for dev, t in _device_threads}


def _register():
    rg_register_engine(_execute)
    rg_register_engine_batched(_execute_batched)


# -- the current graph task (PyTorch's Variable._execution_engine API) -------

cdef GraphTask _current_graph_task():
    if rg_tls_current_graph_task == NULL:
        return None
    return <GraphTask>rg_tls_current_graph_task


def queue_callback(callback):
    """Run ``callback()`` once the backward now running on this thread ends.

    See Note [Final callbacks]."""
    cdef GraphTask gt = _current_graph_task()
    if not callable(callback):
        raise TypeError(f"queue_callback expects a callable, got {type(callback).__name__}")
    if gt is None:
        raise RuntimeError(
            "Final callbacks can only be installed during backward pass: call queue_callback from "
            "a backward hook or a Function's backward, while the engine runs it.")
    gt.lock()
    try:
        if gt.final_callbacks is None:
            gt.final_callbacks = []
        gt.final_callbacks.append(callback)
    finally:
        gt.unlock()


def current_graph_task_id():
    """The id of the graph task running on this thread, or -1 outside backward."""
    cdef GraphTask gt = _current_graph_task()
    return -1 if gt is None else gt.id


def is_checkpoint_valid():
    """False while a backward that runs only part of the graph (``grad()`` or
    ``backward(inputs=...)``) runs on this thread (``torch.autograd.
    _is_checkpoint_valid``): a reentrant checkpoint cannot honour it."""
    cdef GraphTask gt = _current_graph_task()
    return gt is None or not gt.exec_info


def will_engine_execute_node(node):
    """Whether the backward running on this thread will run ``node``
    (``torch._C._will_engine_execute_node``)."""
    cdef GraphTask gt = _current_graph_task()
    cdef ExecInfo info
    if gt is None:
        raise RuntimeError(
            "_will_engine_execute_node should only be called during the backward pass "
            "(from a hook or a Function's backward)")
    if not isinstance(node, Node):
        raise TypeError(f"expected a graph Node, got {type(node).__name__}")
    if gt.exec_info:
        info = gt.exec_info.get(node)
        return info is not None and info.should_execute()
    if gt.nodes_in_graph is None:
        gt.nodes_in_graph = _reachable_nodes(gt.graph_root, gt.min_topo_nr)
    return node in gt.nodes_in_graph


cdef set _reachable_nodes(Node root, uint64_t min_topo_nr):
    # The nodes _compute_dependencies visits (built only when asked: most
    # backwards never need it).
    cdef set seen = set()
    cdef list stack = []
    cdef Node fn, nxt
    cdef int i
    if root is None:
        return seen
    seen.add(root)
    stack.append(root)
    while stack:
        fn = <Node>stack.pop()
        if fn.topo_nr < min_topo_nr:
            continue
        for i in range(fn._num_edges):
            nxt = rg_next_fn(fn, i)
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return seen
