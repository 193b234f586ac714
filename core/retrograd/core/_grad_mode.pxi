# Thread-local autograd state: grad mode, inference mode, anomaly mode and the
# sequence counter. Part of _ops.pyx.
#
# Each is a C `__thread` variable: new threads start with grad mode on,
# inference and anomaly mode off, as in PyTorch (whose anomaly mode is one
# process-wide flag; here it is per thread, like grad mode, and the engine
# carries the calling thread's to its device workers, see _engine.pyx). Who sets them: the grad-mode
# context managers (grad_mode.py) on the user's thread; the engine, around
# each node's apply on a worker thread, to the graph task's create_graph.

cdef extern from *:
    """
    static __thread int rg_tls_grad_enabled = 1;
    static __thread int rg_tls_inference_mode = 0;
    static __thread unsigned long long rg_tls_sequence_nr = 0;
    static __thread int rg_anomaly_mode = 0;
    static __thread int rg_anomaly_check_nan = 1;
    static __thread int rg_anomaly_check_inf = 0;
    static __thread void* rg_tls_current_node = 0;
    """
    int rg_tls_grad_enabled
    int rg_tls_inference_mode
    unsigned long long rg_tls_sequence_nr
    int rg_anomaly_mode
    int rg_anomaly_check_nan
    int rg_anomaly_check_inf
    void* rg_tls_current_node


cdef bint _rg_grad_enabled() noexcept nogil:
    return rg_tls_grad_enabled


cdef bint _rg_inference_mode() noexcept nogil:
    # (no ABI function: abi's Tensor reads it when it makes a tensor)
    return rg_tls_inference_mode


cdef void _rg_set_grad_enabled(bint enabled) noexcept nogil:
    global rg_tls_grad_enabled
    rg_tls_grad_enabled = enabled


cdef uint64_t _rg_next_sequence_nr() noexcept nogil:
    # Thread-local and monotone: a node created later on the same thread has
    # a greater number, so the engine runs it first (PyTorch's rule).
    global rg_tls_sequence_nr
    cdef uint64_t n = rg_tls_sequence_nr
    rg_tls_sequence_nr += 1
    return n


cdef bint _rg_anomaly_enabled() noexcept nogil:
    return rg_anomaly_mode


def is_grad_enabled():
    """Whether operations record the autograd graph on this thread.

    Off inside :func:`no_grad` and :func:`inference_mode`, or after
    ``set_grad_enabled(False)``; each thread has its own setting, and a new
    thread starts with it on.

    Returns
    -------
    bool

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.is_grad_enabled()
    True
    >>> with rg.no_grad():
    ...     rg.is_grad_enabled()
    False
    """
    return bool(rg_tls_grad_enabled)


def _set_grad_enabled(bint mode):
    global rg_tls_grad_enabled
    rg_tls_grad_enabled = mode


def is_inference_mode_enabled():
    """Whether this thread is inside :func:`inference_mode`.

    Returns
    -------
    bool

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.is_inference_mode_enabled()
    False
    >>> with rg.inference_mode():
    ...     rg.is_inference_mode_enabled()
    True
    """
    return bool(rg_tls_inference_mode)


def _set_inference_mode(bint mode):
    global rg_tls_inference_mode
    rg_tls_inference_mode = mode


def is_anomaly_enabled():
    """Whether anomaly detection is on (``autograd.detect_anomaly``).

    While it is on, every node records the traceback of the forward op that
    made it (shown when its backward fails), and backward checks gradients
    for NaN as :func:`is_anomaly_check_nan_enabled` says.

    Returns
    -------
    bool

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.is_anomaly_enabled()
    False
    >>> with rg.autograd.set_detect_anomaly(True):
    ...     rg.is_anomaly_enabled()
    True
    """
    return bool(rg_anomaly_mode)


def is_anomaly_check_nan_enabled():
    """Whether anomaly detection, when on, checks gradients for NaN.

    The ``check_nan`` argument of ``autograd.detect_anomaly`` and
    ``set_detect_anomaly``; True by default, as torch's.

    Returns
    -------
    bool

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.is_anomaly_check_nan_enabled()
    True
    """
    return bool(rg_anomaly_check_nan)


def is_anomaly_check_inf_enabled():
    return bool(rg_anomaly_check_inf)


def _set_anomaly_enabled(bint mode, bint check_nan=True, bint check_inf=False):
    global rg_anomaly_mode, rg_anomaly_check_nan, rg_anomaly_check_inf
    rg_anomaly_mode = mode
    rg_anomaly_check_nan = check_nan
    rg_anomaly_check_inf = check_inf


cdef int _rg_anomaly_flags() noexcept nogil:
    # All of this thread's anomaly state in one int (RG_ANOMALY_* bits): what
    # a graph task records at its start and its device workers run under.
    if not rg_anomaly_mode:
        return 0
    return (RG_ANOMALY_ENABLED | (RG_ANOMALY_CHECK_NAN if rg_anomaly_check_nan else 0)
            | (RG_ANOMALY_CHECK_INF if rg_anomaly_check_inf else 0))


cdef void _rg_set_anomaly_flags(int flags) noexcept nogil:
    global rg_anomaly_mode, rg_anomaly_check_nan, rg_anomaly_check_inf
    rg_anomaly_mode = (flags & RG_ANOMALY_ENABLED) != 0
    rg_anomaly_check_nan = (flags & RG_ANOMALY_CHECK_NAN) != 0
    rg_anomaly_check_inf = (flags & RG_ANOMALY_CHECK_INF) != 0


cdef void* _rg_exchange_current_node(void* node) noexcept nogil:
    # The node the engine is running on this thread (a borrowed pointer, set
    # around apply while anomaly mode is on): nodes created meanwhile (a
    # create_graph backward) record it as their parent, torch's
    # current_evaluating_node. Returns the previous one, for the engine to
    # restore.
    global rg_tls_current_node
    cdef void* prev = rg_tls_current_node
    rg_tls_current_node = node
    return prev


def _peek_sequence_nr():
    """The sequence number the next node created on this thread will get."""
    return rg_tls_sequence_nr
