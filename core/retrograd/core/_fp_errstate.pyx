# cython: language_level=3
# retrograd.core._fp_errstate: floating-point errors, torch never warns
# (declared in _fp_errstate.pxd).
#
# log(0), 1/0, exp(1000), sqrt(-1), inf - inf and 1e308 * 10 are silent in
# torch; NumPy's ufuncs warn (RuntimeWarning: divide by zero encountered in
# log) under the default errstate. One policy for every op: its kernel runs
# with NumPy's errstate set to ignore, whatever the user's errstate
# (np.errstate(all='raise') included, as torch ignores it too). The state is
# NumPy's context variable, and how it is switched depends on what runs
# under it:
# - a kernel (_fp_kernel_enter) runs no user code, so it runs in a Context
#   of its own holding only the quiet errstate: one Context per thread, kept
#   in the thread state's dict and entered for the kernel (~35 ns; setting
#   the variable in the caller's Context, below, costs ~150 ns, as much as
#   the rest of a small op's overhead);
# - a backward (_engine_execute) runs user hooks, which must see the
#   caller's context variables: the variable is set in the caller's Context
#   (_fp_quiet_enter), once per backward.
# The C loops (_elementwise_loops.pyx) raise no warning and skip both.

from cpython.object cimport PyObject as _PyObject
import contextvars as _contextvars
import numpy as np

cdef extern from "Python.h":
    object _rg_cv_set "PyContextVar_Set" (object var, object value)
    int _rg_cv_reset "PyContextVar_Reset" (object var, object token) except -1
    int _rg_cv_get "PyContextVar_Get" (object var, _PyObject* dflt, _PyObject** value) except -1
    int _rg_ctx_enter "PyContext_Enter" (object ctx) except -1
    int _rg_ctx_exit "PyContext_Exit" (object ctx) except -1
    _PyObject* _rg_thread_dict "PyThreadState_GetDict" ()
    void _rg_xdecref "Py_XDECREF" (_PyObject* o)

cdef extern from *:
    """
    /* The quiet Context of this thread (_fp_kernel_enter), borrowed from the
       thread state's dict that owns it, and which thread state that was:
       checked on each use, so that a thread state freed and another made at
       its address (a C thread calling in again) never reads a freed one. */
    typedef struct {
        PyObject *ctx;
        PyThreadState *ts;
        uint64_t ts_id;
        int in_kernel;       /* running a kernel in ctx now */
    } rg_quiet_tls_t;
    static __thread rg_quiet_tls_t rg_quiet_tls = {NULL, NULL, 0, 0};
    """
    ctypedef struct rg_quiet_tls_t:
        _PyObject* ctx
        void* ts
        unsigned long long ts_id
        int in_kernel
    rg_quiet_tls_t rg_quiet_tls
    void* _rg_ts_get "PyThreadState_Get" ()
    unsigned long long _rg_ts_id "PyThreadState_GetID" (void* ts)

cdef object _np_extobj_var = None       # NumPy's errstate context variable
cdef object _np_quiet_extobj = None     # its value under np.errstate(all="ignore")
try:
    from numpy._core._multiarray_umath import _extobj_contextvar as _np_var, _make_extobj as _np_make
    _np_extobj_var = _np_var
    _np_quiet_extobj = _np_make(all="ignore")
except Exception:                       # another NumPy layout: the Python errstate below
    pass

# the thread state dict's key of the thread's quiet Context
cdef str _QUIET_CONTEXT_KEY = "retrograd.core.fp_quiet_context"


cdef object _fp_quiet_enter():
    # a token for _fp_quiet_exit; None when NumPy already ignores (nested ops)
    cdef _PyObject* cur = NULL
    if _np_extobj_var is None:
        cm = np.errstate(all="ignore")
        cm.__enter__()
        return cm
    _rg_cv_get(_np_extobj_var, NULL, &cur)
    if cur == <_PyObject*>_np_quiet_extobj:
        _rg_xdecref(cur)
        return None
    _rg_xdecref(cur)
    return _rg_cv_set(_np_extobj_var, _np_quiet_extobj)


cdef int _fp_quiet_exit(object token) except -1:
    if token is None:
        return 0
    if _np_extobj_var is None:
        token.__exit__(None, None, None)
        return 0
    _rg_cv_reset(_np_extobj_var, token)
    return 0


cdef object _new_quiet_context():
    ctx = _contextvars.Context()
    ctx.run(_np_extobj_var.set, _np_quiet_extobj)
    return ctx


cdef object _fp_kernel_enter():
    # Enter this thread's quiet Context for a kernel; the token for
    # _fp_kernel_exit (None inside a kernel already: a kernel that runs ops).
    cdef rg_quiet_tls_t* tls = &rg_quiet_tls
    if tls.in_kernel:
        return None
    if _np_extobj_var is None:
        return _fp_quiet_enter()
    cdef void* ts = _rg_ts_get()
    if tls.ts != ts or tls.ts_id != _rg_ts_id(ts) or tls.ctx == NULL:
        _find_quiet_context(tls, ts)
    cdef object ctx = <object>tls.ctx
    _rg_ctx_enter(ctx)
    tls.in_kernel = 1
    return ctx


cdef int _find_quiet_context(rg_quiet_tls_t* tls, void* ts) except -1:
    # this thread state's quiet Context, made on first use
    cdef _PyObject* d = _rg_thread_dict()
    if d == NULL:
        raise RuntimeError("retrograd: no thread state dict to keep the op's errstate in")
    ctx = (<dict><object>d).get(_QUIET_CONTEXT_KEY)
    if ctx is None:
        ctx = _new_quiet_context()
        (<dict><object>d)[_QUIET_CONTEXT_KEY] = ctx
    tls.ctx = <_PyObject*>ctx
    tls.ts = ts
    tls.ts_id = _rg_ts_id(ts)
    return 0


cdef int _fp_kernel_exit(object token) except -1:
    if token is None:
        return 0
    if _np_extobj_var is None:
        return _fp_quiet_exit(token)
    rg_quiet_tls.in_kernel = 0
    _rg_ctx_exit(token)
    return 0
