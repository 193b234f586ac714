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


# ---------------------------------------------------------------------------
# Queues and device workers

cdef inline int _node_device(Node node):
    if node._meta0 is None:
        return CPU_DEVICE
    cdef Device d = node._meta0.device
    if d.type == RG_DEV_CPU and d.index <= 0:
        return CPU_DEVICE
    return d.key()


cdef RgReadyQueue* _ready_queue(RgReadyQueue* cpu_queue, int device) except NULL:
    # Once the workers are stopped (interpreter exit: a later atexit handler
    # may still run a backward), every node runs on the calling thread.
    if device == CPU_DEVICE or not _multithreading_enabled or _shutting_down:
        return cpu_queue
    return _device_queue(device)


cdef RgReadyQueue* _ready_queue_by_index(RgReadyQueue* cpu_queue, int device) except NULL:
    if device == CPU_DEVICE:
        return cpu_queue
    return _device_queue(device)


cdef RgReadyQueue* _device_queue(int device) except NULL:
    cdef RgReadyQueue* q
    if device < 0 or device >= MAX_DEVICES:
        raise RuntimeError(f"autograd engine: invalid device key {device}")
    q = _device_queues[device]
    if q != NULL:
        return q
    with _device_lock:
        if _device_queues[device] == NULL:
            if _shutting_down:
                raise RuntimeError("the autograd engine is shutting down (interpreter exit)")
            q = new RgReadyQueue()
            _device_queues[device] = q
            t = _threading.Thread(target=_device_thread_main, args=(device,),
                                  name=f"retrograd-engine-device-{device}", daemon=True)
            _device_threads.append((device, t))
            t.start()
    return _device_queues[device]


def _device_thread_main(int device):
    global rg_tls_worker_device, rg_tls_local_queue
    rg_tls_worker_device = device
    rg_tls_local_queue = _device_queues[device]
    # backward formulas never emit NumPy floating-point warnings (torch is
    # silent); this thread is the engine's, so its errstate is ours to set
    np.seterr(all="ignore")
    while True:
        try:
            _thread_main(None)
            return                  # shutdown task
        except BaseException as exc:
            # Errors of nodes are stored on their graph task inside
            # _thread_main; anything reaching here is the engine's own
            # failure. The worker must survive it: a dead worker would leave
            # every later backward on this device waiting forever.
            _report_worker_error(device, exc)


cdef _report_worker_error(int device, BaseException exc):
    try:
        _sys.stderr.write(f"retrograd-engine: internal error on the cpu/cuda device worker "
                          f"{device}: {type(exc).__name__}: {exc}\n")
    except BaseException:
        pass


cdef int _push(RgReadyQueue* q, GraphTask gt, Node node, list inputs) except -1:
    cdef RgNodeTask task
    task.graph_task = <PyObject*>gt
    Py_INCREF(gt)
    if node is not None:
        task.node = <PyObject*>node
        Py_INCREF(node)
        task.inputs = <PyObject*>inputs
        Py_INCREF(inputs)
        task.sequence_nr = node.seq_nr
    task.reentrant_depth = gt.reentrant_depth
    task.is_shutdown = False
    gt.outstanding_tasks += 1
    q.push(task)
    return 0


cdef void _push_shutdown(RgReadyQueue* q) noexcept nogil:
    cdef RgNodeTask task
    task.is_shutdown = True
    q.push(task)


def _shutdown_device_threads(double timeout=1.0):
    """Stop every device worker (at interpreter exit); never hangs."""
    global _shutting_down
    _shutting_down = True
    cdef int dev
    for dev, _t in list(_device_threads):
        if _device_queues[dev] != NULL:
            _push_shutdown(_device_queues[dev])
    for _dev, t in list(_device_threads):
        t.join(timeout)


_atexit.register(_shutdown_device_threads)


def _reset_after_fork():
    # Note [Fork]
    #   fork() copies only the calling thread: in the child the device
    #   workers are gone, while their queues, the lock guarding them and the
    #   table of consumed nodes still say they exist (and a queue's mutex may
    #   have been held by a worker at the moment of the fork). As torch does,
    #   the child starts with no workers and creates them on demand: forget
    #   the parent's queues (leaked, not freed: their mutexes may be locked)
    #   and threads, and take fresh locks. The forking thread's own CPU queue
    #   is replaced for the same reason.
    global _device_lock, _device_threads, _shutting_down
    cdef int dev
    for dev in range(MAX_DEVICES):
        _device_queues[dev] = NULL
    _device_threads = []
    _device_lock = _threading.Lock()
    _shutting_down = False
    _consumed_nodes.clear()
    _consumed_by.clear()
    rg_reset_thread_cpu_queue()


import os as _os
if hasattr(_os, "register_at_fork"):
    _os.register_at_fork(after_in_child=_reset_after_fork)


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
    if gt.anomaly_flags and rg_node_anomaly_trace(node) is not None:
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
        where += _parent_traces(node)
    if where not in getattr(exc, "__notes__", ()):
        exc.add_note(where)


cdef str _trace_text(object trace):
    # core records the forward traceback as torch does (a list of frame strings).
    return trace if isinstance(trace, str) else "".join(trace)


cdef _warn_anomaly(Node node):
    # PyTorch warns before re-raising, so that the forward trace shows even
    # when the error is caught and replaced further up. Where warnings are
    # errors, torch still shows it: the warning that could not be issued is
    # written to stderr, and the node's own error goes on to the caller.
    import warnings
    msg = (f"Error detected in {node.name()}. Traceback of forward call that caused the "
           f"error:\n{_trace_text(rg_node_anomaly_trace(node))}{_parent_traces(node)}")
    try:
        warnings.warn(msg, UserWarning, stacklevel=2)
    except Exception as w:
        try:
            _sys.stderr.write(f"{type(w).__name__}: {w}\n")
        except Exception:
            pass


cdef str _parent_traces(Node node):
    # torch's AnomalyMetadata::print_stack: a node created by another node's
    # backward (create_graph) names that node's forward too, up the chain.
    out = []
    seen = set()
    meta = rg_node_metadata(node)
    parent = meta.get("parent_") if meta is not None else None
    while isinstance(parent, Node) and id(parent) not in seen:
        seen.add(id(parent))
        trace = rg_node_anomaly_trace(<Node>parent)
        if trace is None:
            break
        out.append(f"\n\nTraceback of forward call that induced the previous calculation "
                   f"({(<Node>parent).name()}):\n{_trace_text(trace)}")
        meta = rg_node_metadata(<Node>parent)
        parent = meta.get("parent_") if meta is not None else None
    return "".join(out)


# ---------------------------------------------------------------------------
# Running one node

cdef inline object _wrap_for_hook(object g, Node node, int input_nr):
    # Hooks see Tensors; in plain backward the engine moves ndarrays.
    if g is None or isinstance(g, Tensor):
        return g
    if input_nr < node._num_inputs:
        return rg_wrap(g, node.metadata_of(input_nr).device)
    return rg_wrap(g, rg_cpu_device())


cdef inline object _wrap_output_for_hook(object g, Node node, int i):
    # An output of `node` flows into its i-th next edge, whose input metadata
    # says the device.
    if g is None or isinstance(g, Tensor):
        return g
    if i < node._num_edges and rg_next_fn(node, i) is not None:
        return _wrap_for_hook(g, rg_next_fn(node, i), rg_next_nr(node, i))
    return rg_wrap(g, rg_cpu_device())


cdef str _hook_name(object fn):
    # torch names a hook by its __name__ ('<unknown>' for a partial or a
    # callable object) in the errors about what it returned.
    name = getattr(fn, "__name__", None)
    return name if isinstance(name, str) else "<unknown>"


cdef object _check_hook_value(object fn, object res, object orig, bint create_graph):
    # One gradient a hook returned in place of `orig` (the Tensor it was
    # given, or None): torch's check_single_result. A hook may not change
    # the dtype, device or shape of a gradient: a cast here would hide a bug
    # in the hook (torch refuses it too). Returns what the engine carries on.
    cdef Tensor r, o
    if res is None:
        return None
    if orig is None:
        raise RuntimeError(
            f"hook '{_hook_name(fn)}' can't replace a None gradient with a non-None value; "
            "return None (or nothing) for a gradient that is None")
    if not isinstance(res, Tensor):
        raise TypeError(
            f"expected Variable, but hook returned '{type(res).__name__}': hook "
            f"'{_hook_name(fn)}' must return a Tensor (or None to keep the gradient)")
    r = <Tensor>res
    o = <Tensor>orig
    if r._array.dtype != o._array.dtype:
        raise RuntimeError(
            f"hook '{_hook_name(fn)}' has changed the type of value (was {o._array.dtype} got "
            f"{r._array.dtype}); a gradient hook must return a gradient of the dtype it received "
            f"(cast inside the hook's computation, not its result)")
    if r._device is not o._device:
        raise RuntimeError(
            f"hook '{_hook_name(fn)}' has changed the type of value (was {o._device} tensor got "
            f"{r._device} tensor); a gradient hook must return a gradient on the device it received")
    if r._array.shape != o._array.shape:
        raise RuntimeError(
            f"hook '{_hook_name(fn)}' has changed the size of value (was {list(o._array.shape)} "
            f"got {list(r._array.shape)}); a gradient hook must return a gradient of the shape it "
            "received")
    if create_graph:
        return r
    return r._array


cdef list _check_hook_values(object fn, object res, tuple origs, bint create_graph, bint batched):
    # A node hook's result: a tuple of one gradient (or None) per gradient it
    # was given (torch's check_result), each checked as above.
    cdef Py_ssize_t i, n = len(origs)
    if batched and isinstance(res, Tensor):
        res = (res,)             # (_call_hook_per_sample stacks a lone Tensor as is)
    if not isinstance(res, tuple):
        raise TypeError(
            f"expected tuple, but hook returned '{type(res).__name__}': hook '{_hook_name(fn)}' "
            "must return a tuple with one gradient (or None) per gradient it received, or None")
    if len(res) != n:
        raise RuntimeError(
            f"hook '{_hook_name(fn)}' has returned an incorrect number of values (got {len(res)}, "
            f"but expected {n})")
    return [_check_hook_value(fn, res[i], origs[i], create_graph) for i in range(n)]


cdef list _call_tensor_pre_hooks(Node node, list inputs, bint create_graph, Py_ssize_t batch=-1):
    # See core's Note [Hook order]: tensor hooks, then retains-grad hooks.
    # batch >= 0: a batched backward, where hooks see one element at a time
    # (see Note [Batched gradients]).
    cdef list hooks = node.tensor_pre_hooks()
    cdef dict rg_hooks = rg_node_retains_grad_hooks(node)
    cdef int nr
    if hooks:
        for h in list(hooks):
            nr = h[1]
            g = inputs[nr]
            if g is None:
                continue
            gw = _wrap_for_hook(g, node, nr)
            if batch >= 0:
                res = _call_hook_per_sample(h[2], (gw,), batch)
            else:
                res = h[2](gw)
            if res is not None:
                inputs[nr] = _check_hook_value(h[2], res, gw, create_graph)
    if rg_hooks:
        for nr, fn in list(rg_hooks.items()):
            g = inputs[nr]
            if g is not None:
                if batch >= 0:
                    _refuse_batched_retain_grad(node, nr)
                fn(_wrap_for_hook(g, node, nr))
    return inputs


cdef list _call_pre_hooks(Node node, list inputs, bint create_graph, Py_ssize_t batch=-1):
    cdef list hooks = rg_node_pre_hooks(node)
    if not hooks:
        return inputs
    for h in list(hooks):
        grads = tuple([_wrap_for_hook(g, node, i) for i, g in enumerate(inputs)])
        res = _call_hook_per_sample(h[1], (grads,), batch) if batch >= 0 else h[1](grads)
        if res is not None:
            inputs = _check_hook_values(h[1], res, grads, create_graph, batch >= 0)
    return inputs


cdef list _call_post_hooks(Node node, list outputs, list inputs, bint create_graph,
                           Py_ssize_t batch=-1):
    for h in list(rg_node_post_hooks(node)):
        grad_inputs = tuple([_wrap_output_for_hook(g, node, i) for i, g in enumerate(outputs)])
        grad_outputs = tuple([_wrap_for_hook(g, node, i) for i, g in enumerate(inputs)])
        if batch >= 0:
            res = _call_hook_per_sample(h[1], (grad_inputs, grad_outputs), batch)
        else:
            res = h[1](grad_inputs, grad_outputs)
        if res is not None:
            outputs = _check_hook_values(h[1], res, grad_inputs, create_graph, batch >= 0)
    return outputs


cdef list _call_function(GraphTask gt, Node node, list inputs, bint profiled=False):
    cdef list outputs
    cdef list inputs_copy = None
    cdef bint post = False
    if rg_node_has_extras(node) or type(node) is AccumulateGrad:
        inputs = _call_tensor_pre_hooks(node, inputs, gt.create_graph, gt.batch_size)
        inputs = _call_pre_hooks(node, inputs, gt.create_graph, gt.batch_size)
        post = bool(rg_node_post_hooks(node))
        if post:
            inputs_copy = list(inputs)
    if gt.batch_size >= 0 and rg_node_batching(node) != RG_BATCH_SAFE:
        outputs = _apply_batched(gt, node, inputs)
    elif profiled:
        outputs = _apply_profiled(node, inputs, gt.create_graph)     # see _profiled.pxi
    else:
        outputs = node.apply(inputs, gt.create_graph)
    if len(outputs) != node._num_edges:
        raise RuntimeError(
            f"function {node.name()} returned an incorrect number of gradients "
            f"(expected {node._num_edges}, got {len(outputs)})")
    if not (gt.root_validated and node is gt.graph_root):
        # (A GraphRoot hands on the root gradients _execute validated
        # against the same edges: checking them again is one pass per root.)
        _validate_outputs(node, None, outputs, node, gt.batch_size)
    if post:
        outputs = _call_post_hooks(node, outputs, inputs_copy, gt.create_graph, gt.batch_size)
        _validate_outputs(node, None, outputs, node, gt.batch_size)
    return outputs


cdef int _validate_outputs(Node owner, tuple roots, list grads, Node node,
                           Py_ssize_t batch=-1) except -1:
    # Each gradient must match the input it flows into: a broadcast shape is
    # summed back (this is how broadcasting ops need no reduction of their
    # own), a different dtype is cast, anything else is an error.
    # The gradients flow along `owner`'s next edges or, for the roots of a
    # backward (owner None), along `roots`: flat (node, input_nr) pairs.
    cdef Py_ssize_t i, n = len(grads)
    cdef Node fn
    cdef int nr
    cdef tuple mshape
    cdef object mdtype
    cdef InputMetadata meta
    for i in range(n):
        g = grads[i]
        if g is None:
            continue
        x = rg_next_fn(owner, i) if owner is not None else roots[2 * i]
        if x is None:
            grads[i] = None
            continue
        if type(g) is not ndarray and isinstance(g, np.generic):
            # NumPy turns 0-d results into scalars; a gradient is an array
            # (hooks wrap it in a Tensor, whose data must be an ndarray).
            g = np.asarray(g)
        fn = <Node>x
        nr = rg_next_nr(owner, i) if owner is not None else roots[2 * i + 1]
        meta = fn._meta0 if nr == 0 else fn.metadata_of(nr)
        mshape = meta.shape
        if batch >= 0:
            # A batched graph task's gradients carry the batch as their first dim.
            mshape = (batch,) + mshape
        mdtype = meta.dtype
        mdevice = meta.device
        if type(g) is ndarray:
            # Fast path: compare dims and dtype at C level, no tuple built
            # (builtin dtypes are singletons, so identity usually decides).
            if not _same_shape(<cnp.ndarray>g, mshape):
                g = _fix_shape(g, mshape, node, i, batch >= 0)
            if <object>cnp.PyArray_DESCR(<cnp.ndarray>g) is not mdtype and g.dtype != mdtype:
                _check_grad_dtype(g.dtype, mdtype, node, i)
                g = g.astype(mdtype)
            if meta.is_cupy:
                g = _array_to_input_device(g, meta, node, i)
        else:
            shape = g.shape
            if shape != mshape:
                g = _fix_shape(g, mshape, node, i, batch >= 0)
            dt = g.dtype
            if dt is not mdtype and dt != mdtype:
                _check_grad_dtype(dt, mdtype, node, i)
                if isinstance(g, Tensor):
                    g = g.to(mdtype)
                else:
                    g = g.astype(mdtype)
            if type(g) is not Tensor and (type(g) is not ndarray) != meta.is_cupy:
                g = _array_to_input_device(g, meta, node, i)
            if type(g) is Tensor and (<Tensor>g)._device is not mdevice:
                # Only Tensors (create_graph) know their device. As in PyTorch, a
                # 0-d gradient moves; anything else means a wrong backward formula.
                if (<Tensor>g)._array.ndim == 0:
                    g = g.to(mdevice)
                else:
                    raise RuntimeError(
                        f"Function {node.name() if node is not None else 'backward'} returned an invalid "
                        f"gradient at index {i} - expected device {mdevice} but got "
                        f"{(<Tensor>g)._device}")
        grads[i] = g
    return 0


cdef int _check_grad_dtype(object gdt, object mdt, Node node, Py_ssize_t i) except -1:
    # torch's validate_outputs: a floating gradient is cast to the dtype of
    # the input it flows into, and so is an integer or bool one for a real
    # input; a complex gradient for a real input, or a non-floating one for
    # a complex input, would lose (or invent) an imaginary part: an error.
    cdef str gk = gdt.kind, mk = mdt.kind
    if gk == "f" or (gk in "iub" and mk != "c") or (gk == "c" and mk == "c"):
        return 0
    raise RuntimeError(
        f"Function {node.name() if node is not None else 'backward'} returned an invalid gradient "
        f"at index {i} - expected dtype {mdt} but got {gdt}: a gradient must be real for a real "
        "input and floating or complex for a complex input")


cdef object _array_to_input_device(object g, InputMetadata meta, Node node, Py_ssize_t i):
    # A gradient array on the host for a CUDA input, or on a GPU for a CPU
    # input: as in PyTorch, a 0-d gradient (a 0-d CPU tensor that joined a
    # CUDA op) moves; anything else means a wrong backward formula.
    if g.ndim != 0:
        raise RuntimeError(
            f"Function {node.name() if node is not None else 'backward'} returned an invalid gradient "
            f"at index {i} - expected device {meta.device} but got "
            f"{'cpu' if type(g) is ndarray else 'cuda'}")
    if meta.is_cupy:
        import cupy
        with cupy.cuda.Device(meta.device.index if meta.device.index >= 0 else 0):
            return cupy.asarray(g)
    return g.get()


cdef inline bint _same_shape(cnp.ndarray a, tuple shape):
    cdef int nd = cnp.PyArray_NDIM(a), k
    cdef cnp.npy_intp* dims
    if nd != len(shape):
        return False
    dims = cnp.PyArray_DIMS(a)
    for k in range(nd):
        if dims[k] != <cnp.npy_intp>shape[k]:
            return False
    return True


cdef object _fix_shape(object g, tuple mshape, Node node, Py_ssize_t i, bint batched=False):
    shape = tuple(g.shape)
    if batched:
        return _fix_batched_shape(g, mshape, node, i)
    if _expandable(mshape, shape):
        return rg_sum_to(g, mshape)
    raise RuntimeError(
        f"Function {node.name() if node is not None else 'backward'} returned an invalid "
        f"gradient at index {i} - got {list(shape)} but expected shape compatible with "
        f"{list(mshape)}")


cdef bint _expandable(tuple shape, tuple target):
    cdef Py_ssize_t n = len(shape), m = len(target), i
    if n > m:
        return False
    for i in range(n):
        s = shape[n - 1 - i]
        if s != target[m - 1 - i] and s != 1:
            return False
    return True


# Gradients of small tensors are summed by a plain loop: for a few dozen
# elements, NumPy's ufunc dispatch (`old += g`) costs ~20x the additions
# themselves, and fan-in (a tensor used by many ops) sums one gradient per
# use. Larger arrays keep NumPy's loops, which release the GIL.
cdef enum:
    _SMALL_ADD = 4096


ctypedef fused _real:
    float
    double


cdef inline void _add_loop(_real* a, const _real* b, Py_ssize_t n) noexcept:
    cdef Py_ssize_t i
    for i in range(n):
        a[i] += b[i]


cdef inline bint _add_small_inplace(cnp.ndarray old, cnp.ndarray g) noexcept:
    # old += g for C-contiguous, aligned, native float32/float64 arrays of
    # the same dtype and shape (the caller checked both); False: not done.
    cdef Py_ssize_t n = cnp.PyArray_SIZE(old)
    cdef int t
    if (n > _SMALL_ADD or not cnp.PyArray_IS_C_CONTIGUOUS(old) or not cnp.PyArray_IS_C_CONTIGUOUS(g)
            or not cnp.PyArray_ISALIGNED(old) or not cnp.PyArray_ISALIGNED(g)
            or not cnp.PyArray_ISNOTSWAPPED(old) or not cnp.PyArray_ISNOTSWAPPED(g)):
        return False
    t = cnp.PyArray_TYPE(old)
    if t == cnp.NPY_DOUBLE:
        _add_loop(<double*>cnp.PyArray_DATA(old), <double*>cnp.PyArray_DATA(g), n)
        return True
    if t == cnp.NPY_FLOAT:
        _add_loop(<float*>cnp.PyArray_DATA(old), <float*>cnp.PyArray_DATA(g), n)
        return True
    return False


cdef inline void _accumulate(list buf, int pos, object g, bint create_graph) except *:
    # PyTorch's InputBuffer::add: sum gradients arriving at one input,
    # in place when the buffered array is ours alone. An undefined gradient
    # (a backward that returned None there) adds nothing.
    if g is None:
        return
    old = buf[pos]
    if old is None:
        buf[pos] = g
        return
    if create_graph:
        buf[pos] = old + g
        return
    # References: the buffer and `old`. More means someone else can see it.
    # (Checked at C level: .flags, .dtype and .shape would each build an
    # object, a third of a small accumulation's cost.)
    if (type(old) is ndarray and type(g) is ndarray and Py_REFCNT(old) <= 2
            and cnp.PyArray_BASE(<cnp.ndarray>old) == NULL
            and cnp.PyArray_ISWRITEABLE(<cnp.ndarray>old)
            and cnp.PyArray_DESCR(<cnp.ndarray>old) == cnp.PyArray_DESCR(<cnp.ndarray>g)
            and rg_same_dims(old, g)):
        if not _add_small_inplace(<cnp.ndarray>old, <cnp.ndarray>g):
            old += g
    else:
        s = old + g
        buf[pos] = np.asarray(s) if isinstance(s, np.generic) else s    # 0-d + 0-d is a scalar


cdef int _evaluate_function(GraphTask gt, Node node, list inputs) except -1:
    # In anomaly mode the node is the thread's current node while it runs
    # and its gradients are summed into the next nodes' buffers (torch's
    # NodeGuard): nodes created meanwhile (create_graph) record it as parent.
    cdef void* prev_node
    if gt.anomaly_flags:
        prev_node = rg_exchange_current_node(<void*>node)
        try:
            return _evaluate_function_impl(gt, node, inputs)
        finally:
            rg_exchange_current_node(prev_node)
    return _evaluate_function_impl(gt, node, inputs)


cdef int _evaluate_function_impl(GraphTask gt, Node node, list inputs) except -1:
    cdef ExecInfo info
    cdef list outputs
    cdef Py_ssize_t i, n
    cdef Node nxt
    cdef PyObject* key
    cdef unordered_map[PyObjPtr, int].iterator it
    cdef bint ready
    cdef list buf
    cdef int nr
    if gt.exec_info:
        info = gt.exec_info.get(node)
        if info is None:
            return 0
        if not info.needed:
            inputs = _call_tensor_pre_hooks(node, inputs, gt.create_graph, gt.batch_size)
        if info.captures is not None:
            for cap in info.captures:
                gt.captured_vars[cap[1]] = inputs[cap[0]]
        if not info.needed:
            return 0
    if gt.keep_graph:
        if rg_op_events_active():
            outputs = _call_function_profiled(gt, node, inputs)     # see _profiled.pxi
        else:
            outputs = _call_function(gt, node, inputs)
    else:
        _claim_node(node)                   # see Note [Consuming a node]
        try:
            if rg_op_events_active():
                outputs = _call_function_profiled(gt, node, inputs)
            else:
                outputs = _call_function(gt, node, inputs)
            node.release_variables()
        finally:
            _unclaim_node(node)
    n = len(outputs)
    if n == 0:
        return 0
    if gt.anomaly_flags:
        _check_anomaly(gt, node, inputs, outputs)
    # See Note [Threading model]: nodes of this task running on other threads
    # may feed the same buffers.
    gt.lock()
    try:
        for i in range(n):
            nxt = rg_next_fn(node, i)
            if nxt is None:
                continue
            nr = rg_next_nr(node, i)
            key = <PyObject*>nxt
            it = gt.dependencies.find(key)
            if it == gt.dependencies.end():
                raise RuntimeError(f"dependency not found for {nxt.name()}")
            ready = False
            if deref(it).second == 1:
                gt.dependencies.erase(it)
                ready = True
            else:
                gt.dependencies[key] -= 1     # (deref(it).second -= 1 would decrement a copy)
            buf = gt.not_ready.get(nxt)
            if buf is None:
                if gt.exec_info:
                    info = gt.exec_info.get(nxt)
                    if info is None or not info.should_execute():
                        continue
                buf = [None] * (nxt._num_inputs if nxt._num_inputs > 0 else 1)
                _accumulate(buf, nr, outputs[i], gt.create_graph)
                if ready:
                    _push(_ready_queue(gt.cpu_ready_queue, _node_device(nxt)), gt, nxt, buf)
                else:
                    gt.not_ready[nxt] = buf
            else:
                _accumulate(buf, nr, outputs[i], gt.create_graph)
                if ready:
                    del gt.not_ready[nxt]
                    _push(_ready_queue(gt.cpu_ready_queue, _node_device(nxt)), gt, nxt, buf)
    finally:
        gt.unlock()
    return 0


cdef int _claim_node(Node node) except -1:
    # Wait (without the GIL) while another thread consumes `node`; this
    # thread's own claim (a reentrant backward inside the node) does not
    # block it.
    cdef unsigned long me = PyThread_get_thread_ident()
    cdef size_t i
    cdef bint busy = True
    cdef unsigned int pause = 20            # us; doubled up to 1 ms (rare, brief waits)
    while busy:
        busy = False
        for i in range(_consumed_nodes.size()):
            if _consumed_nodes[i] == <PyObject*>node and _consumed_by[i] != me:
                busy = True
                break
        if busy:
            with nogil:
                usleep(pause)
            if pause < 1000:
                pause *= 2
    _consumed_nodes.push_back(<PyObject*>node)
    _consumed_by.push_back(me)
    return 0


cdef void _unclaim_node(Node node) noexcept:
    cdef unsigned long me = PyThread_get_thread_ident()
    cdef size_t i = _consumed_nodes.size()
    while i > 0:
        i -= 1
        if _consumed_nodes[i] == <PyObject*>node and _consumed_by[i] == me:
            _consumed_nodes[i] = _consumed_nodes.back()
            _consumed_by[i] = _consumed_by.back()
            _consumed_nodes.pop_back()
            _consumed_by.pop_back()
            return


cdef int _check_anomaly(GraphTask gt, Node node, list inputs, list outputs) except -1:
    # PyTorch's anomaly check (engine.cpp, evaluate_function): a node that
    # returns NaN (or, with check_inf, infinite) gradients fails the backward.
    # New: the message shows what the node received and returned.
    cdef bint nan = (gt.anomaly_flags & RG_ANOMALY_CHECK_NAN) != 0
    cdef bint inf = (gt.anomaly_flags & RG_ANOMALY_CHECK_INF) != 0
    if not nan and not inf:
        return 0
    for i, g in enumerate(outputs):
        if g is None:
            continue
        arr = (<Tensor>g)._array if isinstance(g, Tensor) else g
        if arr.dtype.kind not in "fc":
            continue
        what = None
        if nan and bool(np.isnan(arr).any()):
            what = "nan"
        elif inf and bool(np.isinf(arr).any()):
            what = "inf"
        if what is not None:
            raise RuntimeError(
                f"Function '{node.name()}' returned {what} values in its {i}th output.\n"
                f"  gradients it received: {_describe_grads(inputs)}\n"
                f"  gradients it returned: {_describe_grads(outputs)}")
    return 0


cdef str _describe_grads(list grads):
    # "[0] float64 shape (3,): min 0.5, max inf, 1 nan", one entry per gradient.
    parts = []
    for i, g in enumerate(grads):
        if g is None:
            parts.append(f"[{i}] None")
            continue
        arr = (<Tensor>g)._array if isinstance(g, Tensor) else g
        parts.append(f"[{i}] {_describe_array(arr)}")
    return "; ".join(parts) if parts else "none"


cdef str _describe_array(object arr):
    import warnings
    desc = f"{arr.dtype} shape {tuple(arr.shape)}"
    if arr.size == 0:
        return desc + ": empty"
    if arr.dtype.kind not in "fciub":
        return desc
    vals = abs(arr) if arr.dtype.kind == "c" else arr      # (complex: magnitudes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)     # all-NaN arrays
        if arr.dtype.kind in "fc":
            lo, hi = vals.min(), vals.max()
            nnan = int(np.count_nonzero(np.isnan(vals)))
            if nnan:
                lo, hi = np.nanmin(vals), np.nanmax(vals)
            desc += f": min {lo}, max {hi}" + (f", {nnan} nan" if nnan else "")
        else:
            desc += f": min {vals.min()}, max {vals.max()}"
    return desc + (" (of |values|)" if arr.dtype.kind == "c" else "")


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
    root_info = ExecInfo()
    root_info.needed = True
    gt.exec_info[root] = root_info
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
    # (register_multi_grad_hook then fires without it).
    for x in outputs:
        fn = (<Edge>x).function
        if fn not in seen:
            gt.exec_info.pop(fn, None)
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
