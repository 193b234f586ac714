# cython: language_level=3
# The recording half of retrograd-profiler: the callbacks registered in
# core's op-event slot while a profile is active, the one clock, and the raw
# event records. Everything that turns records into tables and traces is
# Python (profiler.py, _events.py, _trace.py, _memory.py).
#
# Must never: register the callbacks while no profile is active (an inactive
# profiler must cost an op one branch on core's NULL slot), touch core's
# private fields, or keep an op's inputs past its exit.
#
# Note [Event kinds]: the slot reports ops (generated and hand-written; torch's
# names, "aten::mul"), custom Functions (their class name) and, from the
# engine, two nested events per node: "autograd::engine::evaluate_function:
# <node>" around its whole evaluation and "<node>" around its apply. An
# event's kind is decided at its enter: the evaluate_function prefix marks the
# outer one, and the next event on the same thread named after that node is
# its apply (a node's pre-hooks may run ops in between). Threads are told apart
# by their native id; the callbacks run with the GIL held, so the shared lists
# need no lock of their own.

from libc.stdint cimport uint64_t, int64_t, UINT64_MAX

from retrograd.core.abi cimport (
    RG_ABI_MAJOR, RG_ABI_MINOR, import_core,
    Tensor, rg_register_op_events, rg_register_op_outputs, rg_grad_enabled,
)

# The ABI handshake (abi.pxd), before anything else runs.
import_core("retrograd-profiler")
# The core ABI this profiler was compiled against (major, minor).
BUILT_AGAINST = (RG_ABI_MAJOR, RG_ABI_MINOR)

import sys as _sys
import weakref as _weakref

import numpy as np

cdef extern from "<time.h>" nogil:
    ctypedef long time_t
    cdef struct timespec:
        time_t tv_sec
        long tv_nsec
    int clock_gettime(int clk_id, timespec* tp)
    int CLOCK_MONOTONIC

cdef extern from "Python.h":
    unsigned long PyThread_get_thread_native_id()

cdef extern from *:
    """
    /* the evaluate_function events open on this thread (Note [Event kinds]) */
    static __thread int rg_prof_tls_pending = 0;
    static __thread int rg_prof_tls_backward = 0;
    static __thread Py_ssize_t rg_prof_tls_session = 0;   /* the session the two above belong to */
    static __thread unsigned long rg_prof_tls_tid = 0;     /* this thread's native id, once known */
    """
    int rg_prof_tls_pending
    int rg_prof_tls_backward
    Py_ssize_t rg_prof_tls_session
    unsigned long rg_prof_tls_tid


# Event kinds (FunctionEvent.scope follows torch: 0 forward op, 1 backward function).
cpdef enum:
    KIND_OP = 0                 # an op or a custom Function's forward
    KIND_USER = 1               # a record_function range (torch's user_annotation)
    KIND_EVALUATE = 2           # autograd::engine::evaluate_function: <node>
    KIND_BACKWARD = 3           # a node's apply

EVALUATE_PREFIX = "autograd::engine::evaluate_function: "
cdef str _EVALUATE_PREFIX = EVALUATE_PREFIX
cdef Py_ssize_t _EVALUATE_PREFIX_LEN = len(EVALUATE_PREFIX)


cdef inline int64_t _now() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return <int64_t>ts.tv_sec * 1000000000 + ts.tv_nsec


def clock_ns() -> int:
    """The profiler's clock: CLOCK_MONOTONIC in nanoseconds (time.monotonic_ns's)."""
    return _now()


cdef class RawEvent:
    """One recorded range: what the callbacks fill in, read by _events.py."""
    cdef public str name
    cdef public int kind
    cdef public int64_t start_ns
    cdef public int64_t end_ns          # -1 while open
    cdef public int64_t sequence_nr     # -1: none (grad mode off, AccumulateGrad, ...)
    cdef public unsigned long tid
    cdef public object input_shapes     # list of lists, or None (record_shapes off)
    cdef public object input_types      # list of torch's type names, or None
    cdef public object stack            # list of "file(line): function", or None
    cdef public int64_t nbytes          # bytes its outputs allocated (profile_memory)
    cdef public int64_t fwd_tid         # backward events: the forward thread (torch's "Fwd thread id")
    cdef public object user_args        # record_function(name, args): its args string, or None
    cdef object _inputs                 # profile_memory: held from enter to exit only
    cdef Py_ssize_t _session            # the recording session it began in

    def __repr__(self):
        return (f"RawEvent({self.name!r}, kind={self.kind}, start_ns={self.start_ns}, "
                f"end_ns={self.end_ns}, sequence_nr={self.sequence_nr}, tid={self.tid})")


# ---------------------------------------------------------------------------
# Session state: one profile records at a time (torch refuses a second one).

cdef bint _active = False
cdef Py_ssize_t _session = 0        # bumped by every start(): record_function ranges belong to one
cdef bint _record_shapes = False
cdef bint _with_stack = False
cdef bint _profile_memory = False
cdef list _events = []              # finished RawEvents, in exit order
cdef list _allocations = []         # profile_memory: [start_ns, end_ns or -1, nbytes, category]
cdef list _frees = []               # profile_memory: (time_ns, tid, nbytes) of allocations freed while recording
cdef dict _pending = {}             # native tid -> node name awaiting its apply event
cdef object _stack_skip = None      # filename prefixes left out of with_stack


# numpy dtype -> torch's c10 type name, as "Input type" writes it
_TYPE_NAMES = {
    np.dtype(np.float32): "float", np.dtype(np.float64): "double",
    np.dtype(np.float16): "c10::Half", np.dtype(np.int64): "long int",
    np.dtype(np.int32): "int", np.dtype(np.int16): "short int",
    np.dtype(np.int8): "signed char", np.dtype(np.uint8): "unsigned char",
    np.dtype(np.bool_): "bool", np.dtype(np.complex64): "c10::complex<float>",
    np.dtype(np.complex128): "c10::complex<double>",
}


cdef object _type_name(object dtype):
    name = _TYPE_NAMES.get(dtype)
    return name if name is not None else str(dtype)


cdef inline object _array_of(object x):
    if isinstance(x, Tensor):
        return (<Tensor>x)._array
    if isinstance(x, np.ndarray):
        return x
    return None


cdef int _record_inputs(RawEvent ev, tuple inputs) except -1:
    # torch's "Input Dims" / "Input type": a tensor's shape and element type,
    # [] and "Scalar" for a number, "" for None, "ScalarList"/"TensorList".
    cdef list shapes = []
    cdef list types = []
    for x in inputs:
        a = _array_of(x)
        if a is not None:
            shapes.append(list(a.shape))
            types.append(_type_name(a.dtype))
        elif x is None:
            shapes.append([])
            types.append("")
        elif isinstance(x, (list, tuple)):
            if len(x) and all(_array_of(y) is not None for y in x):
                shapes.append([list(_array_of(y).shape) for y in x])
                types.append("TensorList")
            else:
                shapes.append([])
                types.append("ScalarList")
        elif isinstance(x, (bool, int, float, complex, np.generic)):
            shapes.append([])
            types.append("Scalar")
        else:
            shapes.append([])
            types.append(type(x).__name__)
    ev.input_shapes = shapes
    ev.input_types = types
    return 0


cdef list _python_stack():
    # torch's with_stack format, innermost frame first, without the
    # profiler's own frames.
    cdef list out = []
    f = _sys._getframe(0)
    while f is not None:
        code = f.f_code
        fn = code.co_filename
        if not fn.startswith(_stack_skip):
            out.append(f"{fn}({f.f_lineno}): {code.co_name}")
        f = f.f_back
    return out


cdef object _op_enter(str name, uint64_t sequence_nr, tuple inputs):
    global rg_prof_tls_pending, rg_prof_tls_backward, rg_prof_tls_session, rg_prof_tls_tid
    cdef RawEvent ev = RawEvent.__new__(RawEvent)
    if rg_prof_tls_tid == 0:
        rg_prof_tls_tid = PyThread_get_thread_native_id()     # (a system call: once per thread)
    cdef unsigned long tid = rg_prof_tls_tid
    if rg_prof_tls_session != _session:
        # This thread's first event of the session: forget what an earlier
        # session left open here (a failed op or backward).
        rg_prof_tls_session = _session
        rg_prof_tls_pending = 0
        rg_prof_tls_backward = 0
    ev.name = name
    ev.tid = tid
    ev._session = _session
    ev.end_ns = -1
    ev.fwd_tid = -1
    ev.kind = KIND_OP
    if rg_prof_tls_pending and _pending.get(tid) == name:
        # The apply of the node whose evaluate_function is open (Note [Event kinds]).
        ev.kind = KIND_BACKWARD
        del _pending[tid]
        rg_prof_tls_pending = 0
    elif inputs is None and name.startswith(_EVALUATE_PREFIX):     # (ops always pass a tuple)
        ev.kind = KIND_EVALUATE
        _pending[tid] = name[_EVALUATE_PREFIX_LEN:]
        rg_prof_tls_pending = 1
        rg_prof_tls_backward += 1
    if ev.kind == KIND_OP:
        # torch records an op's sequence number only where grad mode is on
        # (the node it may create gets that number).
        ev.sequence_nr = <int64_t>sequence_nr if rg_grad_enabled() and sequence_nr != UINT64_MAX else -1
    else:
        ev.sequence_nr = <int64_t>sequence_nr if sequence_nr != UINT64_MAX else -1
        ev.fwd_tid = 1 if ev.sequence_nr >= 0 else -1
    if _record_shapes and inputs is not None:
        _record_inputs(ev, inputs)
    if _with_stack and ev.kind == KIND_OP:
        ev.stack = _python_stack()
    if _profile_memory:
        ev._inputs = inputs
    ev.start_ns = _now()
    return ev


cdef int _op_exit(object token) except -1:
    global rg_prof_tls_pending, rg_prof_tls_backward
    cdef int64_t t = _now()
    if token is None:
        # The op began before this profile filled the slot (another thread
        # started it while the op ran): nothing to end.
        return 0
    cdef RawEvent ev = <RawEvent>token
    ev._inputs = None
    if ev._session != _session:
        return 0                    # begun in an earlier session: dropped
    ev.end_ns = t
    if ev.kind == KIND_EVALUATE and rg_prof_tls_backward > 0:
        rg_prof_tls_backward -= 1
        if rg_prof_tls_pending:
            _pending.pop(ev.tid, None)
            rg_prof_tls_pending = 0
    _events.append(ev)
    return 0


cdef inline object _root(object a):
    while a.base is not None and isinstance(a.base, np.ndarray):
        a = a.base
    return a


cdef object _free_callback(list alloc):
    # An array an op allocated is freed: the allocation ends, and the free is
    # charged (negative bytes) to the innermost range open on the freeing
    # thread, as torch's memory events are (_events.build_events).
    def freed(ref):
        if alloc[1] < 0:
            alloc[1] = _now()
            _frees.append((alloc[1], PyThread_get_thread_native_id(), alloc[2]))
    return freed


cdef int _op_outputs(object token, object outputs) except -1:
    # profile_memory: the bytes an op's outputs allocated. An output that is a
    # view of an input's memory allocated nothing (torch's as_strided: 0 B).
    if token is None:
        return 0                    # (see _op_exit)
    cdef RawEvent ev = <RawEvent>token
    cdef int64_t total = 0
    cdef tuple outs = outputs if isinstance(outputs, tuple) else (outputs,)
    cdef set input_roots = None
    cdef list alloc
    for o in outs:
        a = _array_of(o)
        if a is None:
            continue
        r = _root(a)
        if input_roots is None:
            input_roots = set()
            if ev._inputs is not None:
                for x in ev._inputs:
                    xa = _array_of(x)
                    if xa is not None:
                        input_roots.add(id(_root(xa)))
                    elif isinstance(x, (list, tuple)):
                        for y in x:
                            ya = _array_of(y)
                            if ya is not None:
                                input_roots.add(id(_root(ya)))
        if id(r) in input_roots:
            continue
        input_roots.add(id(r))      # two outputs sharing one buffer count once
        nbytes = r.nbytes
        total += nbytes
        if rg_prof_tls_backward > 0:
            category = "gradients"
        elif isinstance(o, Tensor) and (<Tensor>o)._grad_fn is not None:
            category = "saved_tensors"
        else:
            category = "other"
        alloc = [ev.start_ns, -1, nbytes, category]
        try:
            alloc.append(_weakref.ref(r, _free_callback(alloc)))
        except TypeError:
            pass                    # (an array type without weak references: held to the end)
        _allocations.append(alloc)
    ev.nbytes = total
    return 0


# ---------------------------------------------------------------------------
# Python API, used by profiler.profile

def start(bint record_shapes, bint with_stack, bint profile_memory):
    """Fill core's op-event slot and start recording (one profile at a time)."""
    global _active, _record_shapes, _with_stack, _profile_memory, _events, _allocations, _frees
    global _stack_skip, _session
    if _active:
        raise RuntimeError(
            "a retrograd profiler is already recording: profiles do not nest. "
            "Leave the running profile (or call its stop()) before starting another.")
    _record_shapes = record_shapes
    _with_stack = with_stack
    _profile_memory = profile_memory
    _events = []
    _allocations = []
    _frees = []
    _pending.clear()
    _session += 1
    if _stack_skip is None:
        import os
        _stack_skip = os.path.dirname(__file__) + os.sep
    _active = True
    rg_register_op_events(_op_enter, _op_exit)
    if profile_memory:
        rg_register_op_outputs(_op_outputs)
    return None


def stop():
    """Empty core's slot; return (events, allocations, frees) recorded since start()."""
    global _active, _events, _allocations, _frees
    if not _active:
        raise RuntimeError("the retrograd profiler is not recording: stop() without start()")
    rg_register_op_outputs(NULL)
    rg_register_op_events(NULL, NULL)
    _active = False
    cdef int64_t t = _now()
    events, _events = _events, []
    allocations, _allocations = _allocations, []
    _pending.clear()
    for a in allocations:
        if len(a) > 4:
            del a[4]                # drop the weak reference: its callback must not fire later
        if a[1] < 0:
            a[1] = t                # still alive when the profile ended
    frees, _frees = _frees, []
    return events, allocations, frees


def session() -> int:
    """The recording session's number, or 0 when none records."""
    return _session if _active else 0


def record_user_event(Py_ssize_t session, str name, int64_t start_ns, int64_t end_ns,
                      object user_args=None):
    """Add a finished record_function range, if the session it began in still records."""
    if not _active or session != _session:
        return
    cdef RawEvent ev = RawEvent.__new__(RawEvent)
    ev.name = name
    ev.kind = KIND_USER
    ev.start_ns = start_ns
    ev.end_ns = end_ns
    ev.sequence_nr = -1
    ev.fwd_tid = -1
    ev.tid = PyThread_get_thread_native_id()
    ev.user_args = user_args
    if _record_shapes:
        ev.input_shapes = []
        ev.input_types = []
    _events.append(ev)
