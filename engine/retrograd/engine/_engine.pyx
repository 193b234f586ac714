# cython: language_level=3
# distutils: language = c++
# retrograd-engine: executes the graph that retrograd-core records (PyTorch's
# engine.cpp, in Cython). Cimports nothing from core but abi.pxd.
#
# Note [Threading model]
#   CPU nodes run on the thread that called backward, from that thread's own
#   ReadyQueue. Every other device (virtual CPU devices "cpu:N", CUDA devices)
#   has one long-lived worker thread and one ReadyQueue; a node runs on the
#   worker of its input's device. Queues are C++ (ready_queue.h) and workers
#   wait on them without the GIL and take it to evaluate a task. The GIL does
#   not make a task's evaluation atomic (NumPy releases it inside large
#   additions, the interpreter switches threads inside hooks), so the
#   GraphTask bookkeeping (dependencies, input buffers) is done under the
#   graph task's own mutex, as in PyTorch; plain C counters and flags need
#   only the GIL (Note [What the GIL protects]). A node's apply never runs
#   concurrently with itself within a graph task; AccumulateGrad locks to
#   extend that across graph tasks (see core's _node.pxi). The design rules
#   behind this: docs/design.md, "Threading".
#
# Note [What the GIL protects]
#   These are plain C fields and globals, not atomics. Every thread that
#   reads or writes them holds the GIL, and each read-modify-write is C code
#   with no Python call between the read and the write (nothing that could
#   run Python code, such as a decref, and so let the interpreter switch
#   threads): the GIL changes hands only inside Python calls and in `with
#   nogil` blocks, so no thread sees a half-done update. The `with nogil`
#   blocks of this module (RgReadyQueue.pop(), RgMutex.lock(),
#   RgEvent.wait(), _claim_node's usleep) touch none of them.
#   - GraphTask.outstanding_tasks: +1 in _push (any thread, for any push),
#     -1 in _thread_main once a task is done, and completed() reads it right
#     after that decrement. A node's successors are pushed (+1) before its
#     own task is counted down (-1), so it reaches 0 only when no work is
#     left.
#   - GraphTask.has_error, error, completed_flag, completing: each set once
#     by a check-then-set with no Python call in between
#     (_thread_on_exception, _pool_thread_main, _mark_completed).
#   - _next_graph_task_id: the graph task ids (_execute_task).
#   - _consumed_nodes/_consumed_by (Note [Consuming a node]): _claim_node's
#     scan and its push_back have no Python call between them; when it waits
#     (without the GIL) it scans again afterwards.
#   - _device_queues[]: each entry written once, under _device_lock (which
#     serialises the creation of a worker) and the GIL; read with the GIL
#     only.
#   - _multithreading_enabled, _shutting_down, MAX_REENTRANT_DEPTH: flags.
#   - GraphTask.nodes_in_graph: built on first use; two threads may both
#     build it, and they build the same set.
#   What the GIL does NOT protect, because Python code runs in the middle of
#   the update (NumPy releases the GIL inside large additions; hooks are
#   Python): a graph task's dependencies, not_ready buffers and
#   final_callbacks take GraphTask.mutex; the ready queues have their own
#   C++ mutex (ready_queue.h). Free-threaded CPython: this module does not
#   declare itself free-threading compatible, so importing it turns the GIL
#   back on and all of the above keeps holding; declaring it would first
#   need these counters made atomic.
#
# Note [Reentrant backwards]
#   A backward started inside a node or hook (on any thread) runs its graph
#   task on the same thread, one depth deeper, popping from the same queue
#   (deeper tasks first). Past MAX_REENTRANT_DEPTH nested levels it hands the
#   task to a fresh pool thread and waits (without the GIL), so deep
#   recursion never overflows one thread's C stack or Python's recursion
#   limit, as PyTorch does.
#
# Thread-locals (rg_tls_* below), who sets them and when:
#   worker_device: the device a thread serves. NO_DEVICE on user threads
#     outside backward; set to CPU_DEVICE by execute() for the duration of a
#     backward; set once to the device key by a device worker; set to the
#     owner's device by a pool thread.
#   current_depth: nesting of reentrant backwards on this thread (execute()).
#   total_depth: nesting across pool threads (execute(), pool threads).
#   local_queue: the queue this thread pops (its CPU queue, or its device's).
#   current_graph_task: the graph task whose node (or final callbacks) this
#     thread is running, borrowed; NULL otherwise. Set by _thread_main around
#     each node and by _execute around the final callbacks; read by
#     queue_callback and the multi-grad hooks (PyTorch's current_graph_task).
#   anomaly mode (core's thread-local): set by _thread_main to the graph
#     task's, on a thread whose own differs (device workers), around a node.

cimport cython
from cython.operator cimport dereference as deref
from cpython.ref cimport PyObject, Py_INCREF, Py_DECREF, Py_XDECREF, Py_REFCNT
from cpython.pythread cimport PyThread_get_thread_ident
from posix.unistd cimport usleep
from libc.stdint cimport uint64_t
from libcpp.unordered_map cimport unordered_map
from libcpp.vector cimport vector

ctypedef PyObject* PyObjPtr

cimport numpy as cnp
from retrograd.core.abi cimport (
    RG_ABI_MAJOR, RG_ABI_MINOR, import_core,
    Tensor, Node, Edge, InputMetadata, Device, AccumulateGrad, rg_next_fn, rg_next_nr,
    rg_register_engine, rg_wrap, rg_grad_enabled, rg_set_grad_enabled,
    rg_sum_to, rg_cpu_device, RG_DEV_CPU,
    rg_anomaly_flags, rg_set_anomaly_flags, RG_ANOMALY_CHECK_NAN, RG_ANOMALY_CHECK_INF,
    rg_exchange_current_node, rg_op_events_active, rg_op_event_enter, rg_op_event_exit,
    rg_register_engine_batched, rg_node_batching, rg_apply_batched,
    RG_BATCH_SAFE, RG_BATCH_RULE,
    rg_graph_root, rg_saved_tensors_hooks_state, rg_set_saved_tensors_hooks_state,
    rg_node_has_extras, rg_node_pre_hooks, rg_node_post_hooks, rg_node_retains_grad_hooks,
    rg_node_anomaly_trace, rg_node_metadata, rg_same_dims,
)

# The ABI handshake (abi.pxd), before anything else runs.
import_core("retrograd-engine")
# The core ABI this engine was compiled against (major, minor).
BUILT_AGAINST = (RG_ABI_MAJOR, RG_ABI_MINOR)

import sys as _sys
import threading as _threading
import atexit as _atexit

import numpy as np
from numpy import ndarray

cnp.import_array()


cdef extern from "ready_queue.h" nogil:
    cdef cppclass RgNodeTask:
        PyObject* graph_task
        PyObject* node
        PyObject* inputs
        int reentrant_depth
        uint64_t sequence_nr
        bint is_shutdown
    cdef cppclass RgReadyQueue:
        void push(const RgNodeTask& task)
        RgNodeTask pop()
        bint try_pop(RgNodeTask* out)
        size_t size()
    cdef cppclass RgEvent:
        void set()
        void wait()
        bint is_set()
    cdef cppclass RgMutex:
        bint try_lock()
        void lock()
        void unlock()
    RgReadyQueue* rg_thread_cpu_queue()
    void rg_reset_thread_cpu_queue()


cdef extern from *:
    """
    static __thread int rg_tls_worker_device = -2;   /* NO_DEVICE */
    static __thread int rg_tls_current_depth = 0;
    static __thread int rg_tls_total_depth = 0;
    static __thread RgReadyQueue* rg_tls_local_queue = NULL;
    static __thread PyObject* rg_tls_current_graph_task = NULL;
    """
    int rg_tls_worker_device
    int rg_tls_current_depth
    int rg_tls_total_depth
    RgReadyQueue* rg_tls_local_queue
    PyObject* rg_tls_current_graph_task


# rg_tls_worker_device values besides a device worker's Device.key(), and the
# size of the device-queue table (keys are below it).
cdef enum:
    NO_DEVICE = -2
    CPU_DEVICE = -1
    MAX_DEVICES = 512

# Past this many nested reentrant backwards on one thread, continue on a pool
# thread (PyTorch uses 60 too).
cdef int MAX_REENTRANT_DEPTH = 60

cdef bint _multithreading_enabled = True
cdef RgReadyQueue* _device_queues[MAX_DEVICES]
cdef list _device_threads = []
cdef object _device_lock = _threading.Lock()
cdef bint _shutting_down = False
cdef Py_ssize_t _next_graph_task_id = 0

# Note [Consuming a node]
#   A graph task without retain_graph consumes each node it runs: apply, then
#   release_variables. Two such tasks on one graph (two threads calling
#   backward on the same output) must not both run a node that saved
#   tensors: the GIL alone does not keep them apart, as NumPy releases it
#   inside apply, between the node's "released?" check and the release. So
#   apply + release of a consumed node is one claim (torch: the node's mutex
#   around apply and release_variables): a second consumer waits for the
#   first to finish and then finds the saved tensors freed ("Trying to
#   backward through the graph a second time"), while nodes that saved
#   nothing run again, as in torch. The claims live in this small table
#   (one entry per node being consumed right now, all threads; read and
#   written holding the GIL): no field in Node, and a scan of a handful of
#   pointers per node.
cdef vector[PyObjPtr] _consumed_nodes
cdef vector[unsigned long] _consumed_by


@cython.final
cdef class ExecInfo:
    """Whether a node must run in this graph task, and which of its input
    gradients autograd.grad captures: list of (input_nr, output_index)."""
    cdef public bint needed
    cdef public list captures

    cdef inline bint should_execute(self):
        return self.needed or self.captures is not None


@cython.final
cdef class GraphTask:
    """The state of one backward call (PyTorch's GraphTask)."""
    cdef readonly bint keep_graph
    cdef readonly bint create_graph
    cdef readonly int reentrant_depth
    cdef readonly int owner
    cdef RgReadyQueue* cpu_ready_queue
    cdef unordered_map[PyObjPtr, int] dependencies
    cdef dict not_ready                 # node -> input buffer (list)
    cdef dict exec_info                 # node -> ExecInfo; empty: run everything
    cdef list captured_vars
    cdef Py_ssize_t outstanding_tasks
    cdef bint has_error
    cdef object error                   # the first exception raised
    cdef bint completed_flag
    cdef bint completing                # _mark_completed has started (callbacks run once)
    cdef RgEvent* done_event
    cdef RgMutex* mutex                 # guards dependencies and not_ready (see Note [Threading model])
    cdef list final_callbacks
    cdef Node graph_root                # keeps the graph alive while it runs
    cdef readonly Py_ssize_t batch_size # is_grads_batched: B (see Note [Batched gradients]); else -1
    cdef int anomaly_flags              # the caller's anomaly mode (core's RG_ANOMALY_* bits)
    cdef readonly Py_ssize_t id         # PyTorch's graph task id (torch._C._current_graph_task_id)
    cdef uint64_t min_topo_nr
    cdef set nodes_in_graph             # built on first use (_will_engine_execute_node)
    cdef bint root_validated            # graph_root is a GraphRoot of gradients _execute validated
    cdef tuple hooks_state              # the caller's saved-tensor hooks (core's stack), or None
    cdef list leaf_streams              # CUDA streams the caller waits for at the end (_streams.pxi), or None

    def __cinit__(self):
        self.batch_size = -1
        self.done_event = new RgEvent()
        self.mutex = new RgMutex()
        self.not_ready = {}
        self.exec_info = {}

    def __dealloc__(self):
        del self.done_event
        del self.mutex

    cdef inline void lock(self):
        if not self.mutex.try_lock():
            with nogil:
                self.mutex.lock()

    cdef inline void unlock(self) noexcept:
        self.mutex.unlock()

    cdef inline bint completed(self):
        return self.outstanding_tasks == 0 or self.has_error


include "_device_threads.pxi"


# ---------------------------------------------------------------------------
# The scheduling loop

cdef object _thread_main(GraphTask graph_task):
    # graph_task None: a device worker, runs until shutdown. Otherwise returns
    # once graph_task has completed.
    cdef RgNodeTask task
    cdef GraphTask gt
    cdef Node node
    cdef list inputs
    cdef RgReadyQueue* q
    cdef bint prev_grad
    cdef PyObject* prev_gt
    cdef int prev_anomaly
    global rg_tls_current_graph_task
    while graph_task is None or not graph_task.completed_flag:
        q = rg_tls_local_queue
        # Take ready work without giving up the GIL; sleep (without it) only
        # when the queue is empty.
        if not q.try_pop(&task):
            with nogil:
                task = q.pop()
        if task.is_shutdown:
            break
        gt = <GraphTask>task.graph_task
        Py_DECREF(gt)                # the task's reference, now held by `gt`
        node = None
        inputs = None
        if task.node != NULL:
            node = <Node>task.node
            Py_DECREF(node)
            inputs = <list>task.inputs
            Py_DECREF(inputs)
        if node is not None and not gt.has_error:
            prev_grad = rg_grad_enabled()
            rg_set_grad_enabled(gt.create_graph)
            prev_gt = rg_tls_current_graph_task
            rg_tls_current_graph_task = <PyObject*>gt
            prev_anomaly = rg_anomaly_flags()
            if prev_anomaly != gt.anomaly_flags:
                rg_set_anomaly_flags(gt.anomaly_flags)
            prev_hooks = None
            if graph_task is None and gt.hooks_state is not None:
                # A device worker runs the node with the caller's saved-tensor
                # hooks, and none of them (nor any a hook entered) stays on
                # the worker afterwards (torch: the graph task's thread-local
                # state around each node).
                prev_hooks = rg_saved_tensors_hooks_state()
                if prev_hooks == gt.hooks_state:
                    prev_hooks = None
                else:
                    rg_set_saved_tensors_hooks_state(gt.hooks_state)
            try:
                _evaluate_function(gt, node, inputs)
            except BaseException as exc:
                _thread_on_exception(gt, node, exc)
            finally:
                rg_set_grad_enabled(prev_grad)
                rg_tls_current_graph_task = prev_gt
                if prev_anomaly != gt.anomaly_flags:
                    rg_set_anomaly_flags(prev_anomaly)
                if prev_hooks is not None:
                    rg_set_saved_tensors_hooks_state(prev_hooks)
                elif graph_task is None and gt.hooks_state is not None \
                        and rg_saved_tensors_hooks_state() != gt.hooks_state:
                    rg_set_saved_tensors_hooks_state(gt.hooks_state)
        node = None
        inputs = None
        gt.outstanding_tasks -= 1
        if gt.completed():
            _mark_completed(gt)
            if rg_tls_worker_device != gt.owner:
                # The owner may be asleep in pop(): wake it so it sees that
                # its task has completed.
                _push(_ready_queue_by_index(gt.cpu_ready_queue, gt.owner), gt, None, None)


cdef void _mark_completed(GraphTask gt):
    # Runs once: the owner and a worker may both see the task complete.
    # (The final callbacks run later, on the thread that called backward:
    # see _run_final_callbacks.)
    if gt.completing:
        return
    gt.completing = True
    gt.completed_flag = True
    gt.done_event.set()


cdef int _run_final_callbacks(GraphTask gt) except -1:
    # Note [Final callbacks]
    #   queue_callback(fn) adds fn to the graph task whose node is running on
    #   the calling thread (the innermost one under reentrant backward). Once
    #   every node of that task has run, the thread that started it runs them
    #   in order, with the task still current, so that a callback may queue
    #   more (they run too). A callback's exception propagates out of
    #   backward(), as in PyTorch.
    global rg_tls_current_graph_task
    cdef PyObject* prev_gt = rg_tls_current_graph_task
    cdef Py_ssize_t i = 0
    rg_tls_current_graph_task = <PyObject*>gt
    try:
        while i < len(gt.final_callbacks):
            cb = gt.final_callbacks[i]
            i += 1
            cb()
    finally:
        rg_tls_current_graph_task = prev_gt
        gt.final_callbacks = None
    return 0


cdef void _thread_on_exception(GraphTask gt, Node node, BaseException exc):
    if gt.has_error:
        return
    if gt.anomaly_flags:
        _warn_anomaly(node)
    try:
        _annotate(exc, node)
    except BaseException:
        pass                        # an exception that refuses notes still reaches the caller
    # error before has_error: whoever sees has_error may raise gt.error at once.
    if not gt.has_error:
        gt.error = exc
        gt.has_error = True


cdef _annotate(BaseException exc, Node node):
    # The caller gets the very exception the node (or its hook) raised, args
    # untouched, as in torch; a note (shown under the traceback) says which
    # node it came from and, in anomaly mode, where the forward created it.
    where = f"(raised while running {node.name()} during backward)"
    trace = rg_node_anomaly_trace(node)
    if trace is not None:
        where += f"\nThe forward call that created {node.name()} was:\n{_trace_text(trace)}"
        where += "".join(f"\n\nTraceback of forward call that induced the previous calculation ({name}):\n{tr}"
                         for name, tr in _parent_chain(node))
    if where not in getattr(exc, "__notes__", ()):
        exc.add_note(where)


cdef str _trace_text(object trace):
    # core records the forward traceback as torch does (a list of frame strings).
    return trace if isinstance(trace, str) else "".join(trace)


cdef _warn_anomaly(Node node):
    # PyTorch warns before re-raising, so that the forward trace shows even
    # when the error is caught and replaced further up: one warning for the
    # failing node, then one per node whose backward created it
    # (create_graph), up the chain (torch's AnomalyMetadata::print_stack).
    trace = rg_node_anomaly_trace(node)
    if trace is None:
        # the forward ran outside anomaly mode (torch says so in the same words)
        _warn_or_write(f"Error detected in {node.name()}. No forward pass information available. Enable "
                       "detect anomaly during forward pass for more information.")
        return
    _warn_or_write(f"Error detected in {node.name()}. Traceback of forward call that caused the "
                   f"error:\n{_trace_text(trace)}")
    for name, trace in _parent_chain(node):
        _warn_or_write(f"\n\nPrevious calculation was induced by {name}. Traceback of forward call that "
                       f"induced the previous calculation:\n{trace}")


cdef list _parent_chain(Node node):
    # (name, forward traceback) of the node whose backward created `node`
    # (create_graph; metadata["parent_"], as torch), then of its parent, ...
    out = []
    seen = set()
    meta = rg_node_metadata(node)
    parent = meta.get("parent_") if meta is not None else None
    while isinstance(parent, Node) and id(parent) not in seen:
        seen.add(id(parent))
        trace = rg_node_anomaly_trace(<Node>parent)
        if trace is None:
            break
        out.append(((<Node>parent).name(), _trace_text(trace)))
        meta = rg_node_metadata(<Node>parent)
        parent = meta.get("parent_") if meta is not None else None
    return out


cdef _warn_or_write(str msg):
    # Where warnings are errors, torch still shows the report: the warning
    # that could not be issued is written to stderr, and the node's own error
    # goes on to the caller.
    import warnings
    try:
        warnings.warn(msg, UserWarning, stacklevel=2)
    except Exception as w:
        try:
            _sys.stderr.write(f"{type(w).__name__}: {w}\n")
        except Exception:
            pass


include "_streams.pxi"
include "_node_hooks.pxi"
include "_node_outputs.pxi"


# ---------------------------------------------------------------------------
# Building a graph task

cdef int _compute_dependencies(GraphTask gt, Node root, uint64_t min_topo_nr) except -1:
    cdef vector[PyObjPtr] stack
    cdef Node fn, nxt
    cdef Py_ssize_t i
    cdef int* count
    stack.push_back(<PyObject*>root)
    while not stack.empty():
        fn = <Node>stack.back()
        stack.pop_back()
        if fn.topo_nr < min_topo_nr:
            continue
        for i in range(fn._num_edges):
            nxt = rg_next_fn(fn, i)
            if nxt is None:
                continue
            # A node's first dependency is its first visit (the graph is
            # acyclic, and the root is no one's child): no separate seen-set,
            # one hash-table insertion per node instead of two.
            count = &gt.dependencies[<PyObject*>nxt]
            count[0] += 1
            if count[0] == 1:
                stack.push_back(<PyObject*>nxt)
    return 0


cdef inline bint _should_execute(GraphTask gt, Node fn):
    cdef ExecInfo info = gt.exec_info.get(fn)
    return info is not None and info.should_execute()


cdef int _init_to_execute(GraphTask gt, Node root, tuple outputs, bint accumulate_grad,
                          uint64_t min_topo_nr) except -1:
    # Mark the nodes on a path from root to one of `outputs` (the edges whose
    # gradients were asked for): only they run.
    cdef ExecInfo info
    cdef Edge e
    cdef int idx = 0
    # The root is needed only if it reaches an output, as any node (torch,
    # since #39784): a custom Function at the root of an unrelated graph
    # must not run.
    for x in outputs:
        e = <Edge>x
        info = gt.exec_info.get(e.function)
        if info is None:
            info = ExecInfo()
            gt.exec_info[e.function] = info
        if accumulate_grad:
            info.needed = True
        else:
            if info.captures is None:
                info.captures = []
            info.captures.append((e.input_nr, idx))
            idx += 1
    gt.captured_vars = [None] * idx
    # Iterative DFS (a graph may be a million nodes deep). Frame: [node, next edge index].
    cdef list stack = [[root, 0]]
    cdef set seen = {root}
    cdef Node fn, child
    cdef list frame
    while stack:
        frame = stack[-1]
        fn = <Node>frame[0]
        child = None
        while frame[1] < fn._num_edges:
            c = rg_next_fn(fn, frame[1])
            frame[1] += 1
            if c is None:
                continue
            if c in seen:
                if _should_execute(gt, c):
                    _mark_needed(gt, fn)
                continue
            seen.add(c)
            child = c
            break
        if child is not None:
            if child.topo_nr < min_topo_nr:
                continue
            stack.append([child, 0])
        else:
            stack.pop()
            if stack and _should_execute(gt, fn):
                _mark_needed(gt, <Node>stack[-1][0])
    # An input the outputs do not reach (backward(inputs=[t]) with t outside
    # the graph) will not run: as in torch, will_engine_execute_node says so
    # (register_multi_grad_hook then fires without it). Its entry stays, as
    # one that does not execute: exec_info must not become empty, which would
    # mean "run everything" (and run a root that reaches no input).
    for x in outputs:
        fn = (<Edge>x).function
        if fn not in seen:
            info = gt.exec_info.get(fn)
            if info is not None:
                info.needed = False
                info.captures = None
    return 0


cdef inline void _mark_needed(GraphTask gt, Node fn):
    cdef ExecInfo info = gt.exec_info.get(fn)
    if info is None:
        info = ExecInfo()
        gt.exec_info[fn] = info
    info.needed = True


# ---------------------------------------------------------------------------
# Entry point (core's engine slot)

cdef object _execute(tuple roots, tuple grads, bint keep_graph, bint create_graph,
                     tuple inputs, bint accumulate_grad):
    return _execute_task(roots, grads, keep_graph, create_graph, inputs, accumulate_grad, -1)


cdef object _execute_task(tuple roots, tuple grads, bint keep_graph, bint create_graph,
                          tuple inputs, bint accumulate_grad, Py_ssize_t batch_size):
    cdef GraphTask gt = GraphTask.__new__(GraphTask)
    cdef Node graph_root
    cdef list buf
    cdef Edge e
    cdef uint64_t min_topo_nr = 0
    global _next_graph_task_id
    if len(roots) != len(grads):
        raise RuntimeError(f"got {len(grads)} gradients for {len(roots)} roots")
    # A user thread starts at depth 0; a reentrant call goes one deeper.
    if rg_tls_worker_device == NO_DEVICE:
        gt.reentrant_depth = 0
        gt.cpu_ready_queue = rg_thread_cpu_queue()
    else:
        gt.reentrant_depth = rg_tls_total_depth + 1
        gt.cpu_ready_queue = rg_tls_local_queue if rg_tls_local_queue != NULL else rg_thread_cpu_queue()
    gt.keep_graph = keep_graph
    gt.create_graph = create_graph
    gt.final_callbacks = None
    gt.batch_size = batch_size
    gt.anomaly_flags = rg_anomaly_flags()
    gt.id = _next_graph_task_id
    _next_graph_task_id += 1

    glist = list(grads)
    flat = []
    for x in roots:
        flat.append((<Edge>x).function)
        flat.append((<Edge>x).input_nr)
    _validate_outputs(None, tuple(flat), glist, None, batch_size)
    if len(roots) == 1:
        e = <Edge>roots[0]
        graph_root = e.function
        buf = [None] * (graph_root._num_inputs if graph_root._num_inputs > 0 else 1)
        buf[e.input_nr] = glist[0]
        root_stream = _input_stream(graph_root, e.input_nr)
        if root_stream is not None:
            # the root gradient was made on the caller's current stream
            import cupy
            _wait_for(root_stream, cupy.cuda.get_current_stream(root_stream.device_id))
    else:
        graph_root = rg_graph_root(roots, tuple(glist))
        buf = []
        gt.root_validated = True
    gt.graph_root = graph_root

    if inputs:
        min_topo_nr = 0xFFFFFFFFFFFFFFFF
        for x in inputs:
            e = <Edge>x
            if e.function.topo_nr < min_topo_nr:
                min_topo_nr = e.function.topo_nr
    gt.min_topo_nr = min_topo_nr
    _compute_dependencies(gt, graph_root, min_topo_nr)
    if inputs:
        _init_to_execute(gt, graph_root, inputs, accumulate_grad, min_topo_nr)
    hooks_state = rg_saved_tensors_hooks_state()
    gt.hooks_state = hooks_state
    try:
        _execute_with_graph_task(gt, graph_root, buf)
    finally:
        if hooks_state is not None and rg_saved_tensors_hooks_state() != hooks_state:
            # saved_tensors_hooks entered (or left) by a hook or a node during
            # this backward end with it (torch restores the thread-local
            # state the graph task started with).
            rg_set_saved_tensors_hooks_state(hooks_state)
    if not gt.has_error and gt.leaf_streams is not None:
        _sync_caller_streams(gt)
    if not gt.has_error and gt.final_callbacks:
        try:
            _run_final_callbacks(gt)
        except BaseException as exc:
            gt.has_error = True
            gt.error = exc
    gt.nodes_in_graph = None
    # Stale tasks of this graph task (a failed one) may still sit in device
    # queues, each holding it: let it not hold the graph and its buffers too.
    gt.graph_root = None
    if gt.has_error:
        gt.lock()
        try:
            gt.not_ready.clear()
        finally:
            gt.unlock()
        err = gt.error
        gt.error = None
        raise err
    if inputs and not accumulate_grad:
        return gt.captured_vars
    return None


cdef int _execute_with_graph_task(GraphTask gt, Node root, list buf) except -1:
    global rg_tls_worker_device, rg_tls_current_depth, rg_tls_total_depth, rg_tls_local_queue
    cdef RgReadyQueue* q = _ready_queue(gt.cpu_ready_queue, _node_device(root))
    cdef RgReadyQueue* prev_local
    if rg_tls_worker_device == NO_DEVICE:
        # A user thread drives its own graph task (not reentrant).
        rg_tls_worker_device = CPU_DEVICE
        prev_local = rg_tls_local_queue
        rg_tls_local_queue = gt.cpu_ready_queue
        gt.owner = CPU_DEVICE
        try:
            _push(q, gt, root, buf)
            _thread_main(gt)
        finally:
            rg_tls_worker_device = NO_DEVICE
            rg_tls_local_queue = prev_local
            _drain_dead_tasks(gt.cpu_ready_queue)
        return 0
    # Reentrant: see Note [Reentrant backwards].
    gt.owner = rg_tls_worker_device
    _push(q, gt, root, buf)
    if rg_tls_current_depth >= MAX_REENTRANT_DEPTH:
        _run_on_pool_thread(gt)
    else:
        rg_tls_current_depth += 1
        rg_tls_total_depth += 1
        try:
            _thread_main(gt)
        finally:
            rg_tls_current_depth -= 1
            rg_tls_total_depth -= 1
    return 0


cdef void _drain_dead_tasks(RgReadyQueue* q):
    # When a top-level backward returns, every task left in its thread's CPU
    # queue is dead: tasks of a graph task that failed (skipped by whoever
    # pops them) and wake-ups. Drop them now, or they keep the graph nodes
    # and gradient buffers they hold alive until this thread's next backward.
    cdef RgNodeTask task
    while q.try_pop(&task):
        Py_XDECREF(task.graph_task)
        Py_XDECREF(task.node)
        Py_XDECREF(task.inputs)


cdef int _run_on_pool_thread(GraphTask gt) except -1:
    t = _threading.Thread(target=_pool_thread_main, args=(gt,),
                          name="retrograd-engine-reentrant", daemon=True)
    t.start()
    with nogil:
        gt.done_event.wait()
    t.join()
    return 0


def _pool_thread_main(GraphTask gt):
    global rg_tls_worker_device, rg_tls_local_queue, rg_tls_total_depth, rg_tls_current_depth
    rg_tls_worker_device = gt.owner
    rg_tls_local_queue = _ready_queue_by_index(gt.cpu_ready_queue, gt.owner)
    rg_tls_total_depth = gt.reentrant_depth
    rg_tls_current_depth = 0
    np.seterr(all="ignore")             # as _device_thread_main
    try:
        _thread_main(gt)
    except BaseException as exc:          # never lose an error on a pool thread
        if not gt.has_error:
            gt.has_error = True
            gt.error = exc
        _mark_completed(gt)


include "_batched.pxi"
include "_profiled.pxi"
include "_api.pxi"
