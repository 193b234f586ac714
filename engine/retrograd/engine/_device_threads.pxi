# Queues and device workers: one long-lived thread and ReadyQueue per
# non-CPU device (see Note [Threading model] in _engine.pyx). Part of
# _engine.pyx, included in place.

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
