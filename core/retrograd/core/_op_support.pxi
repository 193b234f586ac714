# What every generated op uses: argument unwrapping, device checks, graph
# recording (collect_next_edges / set_history), view bookkeeping and the
# array helpers that generated kernels call. Part of abi.pyx.

import traceback as _traceback


cdef inline object _arg_array(object x, str fn=None, str arg=None):
    # A non-Tensor argument of a Tensor parameter: Python scalars stay scalars
    # (NumPy's weak promotion: float32 tensor * 2.0 stays float32); anything
    # else becomes an array without copying. An error names the op and the
    # argument where given, as torch's argument parser does
    # ("exp(): argument 'input'").
    if type(x) is float or type(x) is int or type(x) is bool or type(x) is ndarray:
        return x
    if _cupy_ndarray is not None and type(x) is _cupy_ndarray:
        return x
    if isinstance(x, (complex, np.generic)):
        return x
    return _checked_asarray(x, "argument" if fn is None else f"{fn}(): argument '{arg}'")


cdef inline bint _is_cupy(object a):
    return _cupy_ndarray is not None and type(a) is _cupy_ndarray


# --- dtypes that ops compute in (torch's rules) -----------------------------
# The kernels are NumPy expressions, and NumPy's ufuncs pick their own loop:
# np.exp(uint8) computes in float16, np.exp(int64) in float64, sigmoid's
# -x wraps in uint8 first, np.sign(complex) is z/|z| and max/relu order
# complex numbers lexicographically. torch computes a floating-point op of an
# integer or bool tensor in its default dtype (float32), and refuses the ops
# it does not define for a dtype. These helpers sit in the kernels; each
# costs one C type test on the usual float input.

# the error a kernel raises for a dtype torch does not support: torch's
# class (NotImplementedError or RuntimeError) that is also a TypeError, the
# class Python uses for an argument of the wrong type
class DtypeNotImplementedError(NotImplementedError, TypeError):
    pass


class DtypeRuntimeError(RuntimeError, TypeError):
    pass


cdef inline int _kind_of(object a):
    # 'i' for a bool or integer array, 'c' for a complex one, 'f' else
    # (float arrays, Python floats; Python ints and bools count as 'i',
    # Python complex numbers as 'c')
    cdef int t
    if type(a) is ndarray:
        t = _cnp.PyArray_TYPE(<_cnp.ndarray>a)
        if t <= _cnp.NPY_ULONGLONG:            # NPY_BOOL .. NPY_ULONGLONG
            return 105
        if t == _cnp.NPY_CFLOAT or t == _cnp.NPY_CDOUBLE or t == _cnp.NPY_CLONGDOUBLE:
            return 99
        return 102
    if type(a) is float:
        return 102
    if type(a) is int or type(a) is bool:
        return 105
    if type(a) is complex:
        return 99
    k = getattr(getattr(a, "dtype", None), "kind", "f")        # CuPy arrays, NumPy scalars
    return 105 if k in "biu" else (99 if k == "c" else 102)


cdef object k_float(object a):
    # the input of a floating-point op: integer and bool arrays in torch's
    # default float dtype (sqrt(int64) is float32, as torch's), the rest as is
    if _kind_of(a) == 105 and (type(a) is ndarray or _is_cupy(a) or isinstance(a, np.generic)):
        return a.astype(np.float32)
    return a


cdef str _dtype_str(object a):
    return str(a.dtype) if hasattr(a, "dtype") else type(a).__name__


cdef object k_float_only(object a, str name):
    # ops torch defines for floating-point (and complex) tensors only:
    # silu(int64) raises there, where NumPy would compute in float64
    if _kind_of(a) == 105:
        raise DtypeNotImplementedError(
            f"{name}(): not implemented for integer or bool tensors (got {_dtype_str(a)}), as in torch; "
            f"convert the input first, e.g. x.float()")
    return a


cdef object k_real(object a, str name, bint runtime=False):
    # ops torch does not define for complex tensors (relu, max, floor, erf,
    # comparisons...): NumPy would order complex numbers lexicographically,
    # or drop the imaginary part. Raise, as torch does, rather than give a
    # result torch never would.
    if _kind_of(a) == 99:
        msg = (f"{name}(): not implemented for complex tensors (got {_dtype_str(a)}), as in torch; "
               f"apply it to x.real, x.imag or x.abs() instead")
        if runtime:
            raise DtypeRuntimeError(msg)
        raise DtypeNotImplementedError(msg)
    return a


cdef object k_no_bool(object a, str name):
    # ops torch does not define for bool tensors (abs, floor, ...: NumPy
    # returns the bools; neg: NumPy's own TypeError)
    if type(a) is ndarray and _cnp.PyArray_TYPE(<_cnp.ndarray>a) == _cnp.NPY_BOOL:
        if name == "neg":
            raise DtypeRuntimeError(
                "Negation, the `-` operator, on a bool tensor is not supported (as in torch). If you are "
                "trying to invert a mask, use the `~` or `logical_not()` operator instead.")
        raise DtypeNotImplementedError(
            f"{name}(): not implemented for bool tensors, as in torch; convert the input first, "
            f"e.g. x.int() or x.float()")
    return a


cdef object k_square(object a):
    # torch: the square of a bool tensor is int64 (NumPy's is int8)
    if type(a) is ndarray and _cnp.PyArray_TYPE(<_cnp.ndarray>a) == _cnp.NPY_BOOL:
        a = a.astype(np.int64)
    return np.square(a)


cdef object k_real_float(object a, str name):
    # floating-point only: neither integer nor complex (silu excepted: torch
    # computes its complex values)
    return k_float_only(k_real(a, name), name)


# --- floating-point errors: torch never warns --------------------------------
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
# The C loops (_elementwise_loops.pxi) raise no warning and skip both.
from cpython.object cimport PyObject as _PyObject
import contextvars as _contextvars

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


cpdef object k_sign(object a):
    # torch's sign: 0 at NaN (NumPy's is NaN), so abs's and norm's gradients
    # (grad * sign(x)) are 0 there as in torch; complex raises (torch has sgn)
    k_real(a, "sign")
    if _arr(a).dtype == np.bool_:
        return _arr(a).copy()           # torch: sign of a bool tensor is itself
    r = np.sign(a)
    if _kind_of(a) == 102 and (type(r) is ndarray or _is_cupy(r)):
        nan = np.isnan(r)
        if nan.any():
            r = _xp(r).where(nan, 0, r).astype(r.dtype, copy=False)
    elif isinstance(r, (float, np.floating)) and r != r:
        r = type(r)(0)
    return r


cdef inline object _xp(object a):
    # The array module of `a`: CuPy for a device array, else NumPy. Arrays a
    # kernel creates (zeros, empty, arange) come from it, so they live on
    # the same device as the kernel's inputs (NumPy's creation functions
    # always make host arrays, and CuPy refuses to mix them with its own).
    return _cupy if _cupy_ndarray is not None and type(a) is _cupy_ndarray else np


cdef Device _device_of_array(object a):
    # The device of an array that is not a Tensor's (ops called on bare
    # arrays, as formulas do): a CuPy array's GPU, else the CPU.
    if _cupy_ndarray is not None and type(a) is _cupy_ndarray:
        return _make_device(RG_DEV_CUDA, a.device.id)
    return _CPU


cdef object _to_device_array(object a, Device dev):
    # A host array in an op on a CUDA device (a 0-d CPU tensor, or an array
    # argument that is not a Tensor): the same values on the device.
    if type(a) is ndarray and a.dtype.kind != "O":     # (None stands for an absent operand)
        with _cupy.cuda.Device(dev.index if dev.index >= 0 else 0):
            return _cupy.asarray(a)
    return a


cdef inline Device _dev2(Tensor a, Tensor b):
    if a is None:
        return b._device if b is not None else _CPU
    if b is None or b._device is a._device:
        return a._device
    if b._array.ndim == 0 and b._device is _CPU:
        return a._device
    if a._array.ndim == 0 and a._device is _CPU:
        return b._device
    raise RuntimeError(
        f"Expected all tensors to be on the same device, but found at least two devices, "
        f"{a._device} and {b._device}! Move them with .to(device) first.")


cdef inline Device _dev3(Tensor a, Tensor b, Tensor c):
    return _dev2(_dev_carrier(a, b), c)


cdef inline Tensor _dev_carrier(Tensor a, Tensor b):
    _dev2(a, b)
    return a if a is not None else b


cdef inline Node _edge_fn(Tensor t):
    # collect_next_edges, one input at a time: the node this input's gradient
    # flows into (its grad_fn, or a leaf's AccumulateGrad), or None.
    if t is None:
        return None
    if t._base is not None and t._version_counter.version != t._view_version:
        _current_grad_fn(t)             # a view whose base changed in place
    if t._grad_fn is not None:
        return t._grad_fn
    if t._requires_grad:
        return t.grad_accumulator()
    return None


cdef inline int _edge_nr(Tensor t):
    return t._output_nr if t is not None else 0


cdef inline void _set_edges1(Node node, Node f0, int n0):
    # set_next_edges for one input, without building a tuple (hot path).
    node._fn0 = f0
    node._nr0 = n0
    node._num_edges = 1
    node.topo_nr = f0.topo_nr + 1 if f0 is not None else 0


cdef inline void _set_edges2(Node node, Node f0, int n0, Node f1, int n1):
    cdef uint64_t topo = 0
    node._fn0 = f0
    node._nr0 = n0
    node._fn1 = f1
    node._nr1 = n1
    node._num_edges = 2
    if f0 is not None:
        topo = f0.topo_nr + 1
    if f1 is not None and f1.topo_nr >= topo:
        topo = f1.topo_nr + 1
    node.topo_nr = topo


cdef inline bint _needs(Tensor t):
    # A view requires grad whenever its base does, as torch's
    # DifferentiableViewMeta::requires_grad: a view whose base joined the
    # graph through an in-place op on another view (before its grad_fn is
    # re-derived), or one made under no_grad of a tensor that requires grad.
    return t is not None and (t._grad_fn is not None or t._requires_grad or
                              (t._base is not None and (t._base._grad_fn is not None or
                                                        t._base._requires_grad)))


cdef inline bint _record(object out):
    # Only floating (and complex) results carry gradients.
    cdef char c
    if type(out) is ndarray:            # (the dtype's kind read in C: no attribute lookups)
        c = (<_cnp.dtype><object>_cnp.PyArray_DESCR(<_cnp.ndarray>out)).kind
        return c == b'f' or c == b'c'
    cdef str k = out.dtype.kind
    return k == 'f' or k == 'c'


cdef inline int _record_op(object out) except -1:
    # _record for the ops of the table. Their backward formulas are real
    # calculus: torch's complex gradients are conjugate (Wirtinger)
    # derivatives (grad * conj(other) for mul), which the formulas do not
    # take. A complex result that would need a gradient is refused, loudly,
    # rather than given a silently wrong gradient. (Custom Functions keep
    # _record: their backward is the user's.)
    cdef char c
    if type(out) is ndarray:
        c = (<_cnp.dtype><object>_cnp.PyArray_DESCR(<_cnp.ndarray>out)).kind
        if c == b'f':
            return 1
        if c != b'c':
            return 0
    elif not _record(out):
        return 0
    elif out.dtype.kind != 'c':
        return 1
    raise RuntimeError(
        f"gradients of complex tensors are not supported: this op's result is {out.dtype} and requires "
        f"grad, and retrograd's backward formulas are real derivatives, not the conjugate (Wirtinger) "
        f"ones torch uses for complex autograd. Compute on the real and imaginary parts (x.real, x.imag) "
        f"as separate real tensors, or run the op under no_grad")


cdef inline void _finish_node(Node node, object out, Device dev):
    node.seq_nr = rg_next_sequence_nr()
    # Input 0's metadata, inline (see Node): what add_input_metadata does,
    # minus the call.
    node._meta0 = _intern_meta(out, dev)
    node._num_inputs = 1
    if rg_anomaly_mode:
        _record_anomaly_trace(node)     # see _anomaly.pxi


cdef inline void _mark_view(Tensor result, Tensor base, object out):
    # A view shares memory and the version counter with its base (the root
    # base, as in PyTorch: views of views point at the original).
    if base is None:
        return
    if base._is_inference:
        # An inference tensor has no autograd metadata in torch: its views
        # share its memory and are inference tensors, but are not autograd
        # views (their _base is None).
        result._version_counter = base._version_counter
        result._is_inference = True
        return
    result._base = base._base if base._base is not None else base
    result._version_counter = base._version_counter
    result._view_version = base._version_counter.version
    # (A view of a normal tensor is normal, whichever mode it is made in.)
    result._is_inference = False
    # Note [View creation meta]: how the view was made decides which in-place
    # changes it allows (torch's CreationMeta, see _copy_slices.pxi). A view
    # of a view inherits its base's, as torch's propagate_creation_meta.
    if not rg_tls_grad_enabled:
        if base._name is not _CM_INFERENCE_MODE:
            result._name = _CM_INFERENCE_MODE if rg_tls_inference_mode else _CM_NO_GRAD_MODE
        else:
            result._name = base._name
    elif base._name is not None:
        result._name = base._name if type(base._name) is not tuple else (<tuple>base._name)[0]


cdef inline void _maybe_mark_view(Tensor result, Tensor base, object out, object a):
    if base is None:
        return
    if type(out) is ndarray and out.base is not None and np.may_share_memory(out, a):
        _mark_view(result, base, out)


cdef object _call_forward_grad_slot(str op, tuple inputs, tuple outputs, object attrs):
    _forward_grad_slot(op, inputs, outputs, attrs)
