# cython: language_level=3
# The compiled half of retrograd-compile: the callback that fills core's
# tracing slot (abi.pxd, ABI 1.5) while some thread traces, and the two
# things the programs need of core's objects at C speed: a tensor's array
# (an ABI field) and a new tensor around an array (rg_wrap).
#
# Must never: keep the slot filled while no thread traces (an idle compiler
# must cost an op one branch on core's NULL slot), or hand events of one
# thread to another thread's recorder.

cimport numpy as cnp
from cpython.dict cimport PyDict_GetItem
from cpython.object cimport PyObject

from retrograd.core.abi cimport (
    RG_ABI_MAJOR, RG_ABI_MINOR, import_core, Tensor, Device, rg_register_trace,
    rg_wrap, rg_cpu_device, rg_forward_grads,
)

# The ABI handshake (abi.pxd), before anything else runs.
import_core("retrograd-compile")

import numpy as np

cnp.import_array()
# The core ABI this module was compiled against (major, minor).
BUILT_AGAINST = (RG_ABI_MAJOR, RG_ABI_MINOR)

cdef extern from *:
    """
    /* The recorder of the trace running on this thread (a borrowed reference:
       begin() keeps it alive in _recorders until end()), or NULL. */
    static __thread void* rg_compile_tls_recorder = NULL;
    """
    void* rg_compile_tls_recorder

cdef extern from "Python.h":
    unsigned long PyThread_get_thread_ident()

# How many threads trace now; the slot is filled while it is > 0. Plain C
# int read and written with the GIL held, without a Python call in between.
cdef int _tracing_threads = 0
# thread ident -> its recorder, which keeps the borrowed pointer valid
cdef dict _recorders = {}


cdef int _on_trace(int kind, str op, tuple inputs, tuple outputs, object attrs) except -1:
    if rg_compile_tls_recorder == NULL:
        return 0           # another thread's op: it runs eagerly, untraced
    (<object>rg_compile_tls_recorder).event(kind, op, inputs, outputs, attrs)
    return 0


def begin(recorder):
    """Route this thread's ops to ``recorder.event(kind, op, inputs, outputs,
    attrs)`` until :func:`end` (nested traces are refused by the caller)."""
    global _tracing_threads, rg_compile_tls_recorder
    if rg_compile_tls_recorder != NULL:
        raise RuntimeError("a trace is already running on this thread")
    _recorders[PyThread_get_thread_ident()] = recorder
    rg_compile_tls_recorder = <void*>recorder
    _tracing_threads += 1
    if _tracing_threads == 1:
        rg_register_trace(_on_trace)


def end():
    """Stop routing this thread's ops; empty the slot when no thread traces."""
    global _tracing_threads, rg_compile_tls_recorder
    if rg_compile_tls_recorder == NULL:
        return
    rg_compile_tls_recorder = NULL
    _recorders.pop(PyThread_get_thread_ident(), None)
    _tracing_threads -= 1
    if _tracing_threads == 0:
        rg_register_trace(NULL)


def paused():
    """Whether no trace runs on this thread (ops here are not recorded)."""
    return rg_compile_tls_recorder == NULL


def array_of(Tensor t not None):
    """The array a Tensor wraps (its ABI field ``_array``), no copy."""
    return t._array


def device_of(Tensor t not None):
    """The Device object of a Tensor."""
    return t._device


cpdef Tensor wrap(object array, object device):
    """A new leaf Tensor around ``array`` (no copy) on ``device`` (a Device
    object, or None for the CPU)."""
    if device is None:
        return rg_wrap(array, rg_cpu_device())
    return rg_wrap(array, <Device>device)


def wrap_all(list arrays, object device):
    """Leaf Tensors around each array of ``arrays`` (None stays None)."""
    cdef Device dev = rg_cpu_device() if device is None else <Device>device
    return [None if a is None else rg_wrap(a, dev) for a in arrays]


def arrays_of(tuple tensors):
    """The arrays of ``tensors`` (a compiled call's arguments), as a list."""
    cdef Py_ssize_t i, n = len(tensors)
    cdef list out = [None] * n
    for i in range(n):
        out[i] = (<Tensor?>tensors[i])._array
    return out


cdef bint _may_alias(object a, list arrays, object slow) except -1:
    # Whether result `a` may share memory with an argument. NumPy collapses a
    # view's base to the array that owns the memory (or to the last array
    # before a base of another type: a buffer, a subclass), so a view of
    # argument b has b or b.base as its base. A base that owns its memory
    # and is neither is memory the program made (a block of fused values).
    # Anything else (CuPy arrays, subclasses) asks ``slow``.
    if type(a) is not cnp.ndarray:
        return a.base is not None and slow(a, arrays)
    cdef PyObject* p = cnp.PyArray_BASE(<cnp.ndarray>a)
    if p == NULL:
        return False
    base = <object>p
    for b in arrays:
        if base is b or (type(b) is cnp.ndarray and p == cnp.PyArray_BASE(<cnp.ndarray>b)):
            return True
    if type(base) is cnp.ndarray and cnp.PyArray_CHKFLAGS(<cnp.ndarray>base, cnp.NPY_ARRAY_OWNDATA):
        return False
    return slow(a, arrays)


cpdef bint may_alias(object a, list arrays, object slow) except -1:
    """Whether the program result ``a`` may share memory with one of
    ``arrays`` (the program's arguments); ``slow(a, arrays)`` decides the
    cases NumPy's bases do not."""
    return _may_alias(a, arrays, slow)


def wrap_results(tuple res, Py_ssize_t n, list arrays, object device, object slow):
    """Leaf Tensors around the first ``n`` arrays of a program's result
    ``res`` on ``device``; one that may share memory with an argument (of
    ``arrays``; ``slow(a, arrays)`` decides the cases NumPy's bases do
    not) is copied first: the node's results are its own tensors, with a
    version counter of their own, so they must not share an input's
    memory."""
    cdef Device dev = rg_cpu_device() if device is None else <Device>device
    cdef Py_ssize_t i
    cdef list out = [None] * n
    for i in range(n):
        a = res[i]
        if _may_alias(a, arrays, slow):
            a = a.copy()
        out[i] = rg_wrap(a, dev)
    return tuple(out)


def wrap_grads(tuple res, tuple grad_inputs, tuple tensors):
    """The gradients a compiled node's backward returns: None for the node's
    first forward argument (its program entry), then one per tensor of
    ``tensors``: ``res[k]`` wrapped on its tensor's device at position
    ``1 + grad_inputs[k]``, None elsewhere."""
    cdef Py_ssize_t k, i
    cdef list out = [None] * (1 + len(tensors))
    for k in range(len(grad_inputs)):
        a = res[k]
        if a is not None:
            i = grad_inputs[k]
            out[1 + i] = rg_wrap(a, (<Tensor?>tensors[i])._device)
    return tuple(out)


def any_tangent(list tensors):
    """Whether any of ``tensors`` carries a forward-AD tangent (its
    forward-grad storage, an ABI accessor, is non-empty)."""
    cdef Tensor t
    for x in tensors:
        t = <Tensor?>x
        if rg_forward_grads(t):
            return True
    return False


# -- guards on Python values (api._value_guards, api._nn_state_guards) --------

cdef extern from "Python.h":
    PyObject* PyCell_GET(object cell)

# The Python values a guard holds by value (api._value_guards finds them,
# and sequences of them); a guard compares these and tuples and lists of
# them by value, anything else by identity.
SCALARS = (bool, int, float, complex, str, bytes, type(None), np.bool_, np.integer, np.floating)
cdef tuple _BY_VALUE = SCALARS + (tuple, list)


cdef bint _same_value(object a, object b) except -1:
    # the same type and an equal value (NaN equal to NaN), item by item for
    # a sequence; the same object for anything else (a tensor, a module)
    cdef Py_ssize_t i
    if a is b:
        return True
    if type(a) is not type(b) or not isinstance(b, _BY_VALUE):
        return False
    if type(a) is tuple or type(a) is list:
        if len(a) != len(b):
            return False
        for i in range(len(a)):
            if not _same_value(a[i], b[i]):
                return False
        return True
    try:
        return bool(a == b) or (a != a and b != b)
    except Exception:
        return False


def guards_hold(list guards):
    """Whether every guard (holder, key, value, by_value) still finds the
    value the trace read: at ``holder[key]`` (a dict) or in the closure cell
    ``holder`` (key None), compared by value or by identity."""
    cdef PyObject* found
    cdef tuple g
    for item in guards:
        g = <tuple>item
        holder, key = g[0], g[1]
        if key is None:
            found = PyCell_GET(holder)
        else:
            found = PyDict_GetItem(<dict?>holder, key)
        if found == NULL:
            return False
        if <object>found is g[2]:
            continue
        if not g[3] or not _same_value(<object>found, g[2]):
            return False
    return True
