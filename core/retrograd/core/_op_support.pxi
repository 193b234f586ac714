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


# ---------------------------------------------------------------------------
# Kernels: array code that the `kernel:` expressions of derivatives.yaml call.

cdef object _norm_dims(object dim, int ndim):
    # torch's dim argument (None, int, or a sequence) as a NumPy axis.
    # A 0-d tensor accepts dim 0 / -1 (torch's rule); NumPy has no axis there.
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        if len(dim) == 0:
            return None
        seen = set()
        _check_int_list(dim, "dim", None)
        for d in dim:
            w = _wrap_dim(d, ndim)
            if w in seen:
                raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
            seen.add(w)
        return None if ndim == 0 else tuple(sorted(seen))
    d = _wrap_dim(dim, ndim)
    return None if ndim == 0 else d


cdef object k_zeros_like(object a):
    # A zero gradient (floor, sign, ...: torch's zeros_like(grad)).
    # np.zeros_like is a Python function behind __array_function__ dispatch,
    # ~1 us on small arrays; a gradient needs only the shape and dtype.
    if type(a) is ndarray:
        return _cnp.PyArray_ZEROS(_cnp.PyArray_NDIM(<_cnp.ndarray>a), _cnp.PyArray_DIMS(<_cnp.ndarray>a),
                                  _cnp.PyArray_TYPE(<_cnp.ndarray>a), 0)
    return np.zeros_like(a)


cdef object k_scale(object other, object alpha):
    # other * alpha for add/sub's alpha. Python scalars stay Python scalars
    # (NumPy's weak promotion: float32 + 1.5 * 2 stays float32).
    if type(other) is float or type(other) is int or type(other) is bool:
        return other * alpha
    return np.multiply(other, alpha)


cdef object k_sum(object a, object dim, bint keepdim, object dtype):
    # np.add.reduce is np.sum without its Python-level dispatch (~1.5 us a
    # call on small arrays); integer and bool inputs keep np.sum's promotion.
    if type(a) is ndarray and a.ndim > 0 and a.dtype.kind in "fc":
        return np.add.reduce(a, axis=_norm_dims(dim, a.ndim), keepdims=keepdim, dtype=dtype)
    return np.sum(a, axis=_norm_dims(dim, a.ndim), keepdims=keepdim, dtype=dtype)


cdef object k_mean(object a, object dim, bint keepdim, object dtype):
    # As np.mean (pairwise sum, then one division in the input's float type)
    # without its Python-level overhead; other dtypes go through np.mean.
    cdef Py_ssize_t count = 1
    if type(a) is ndarray and a.ndim > 0 and dtype is None and a.dtype.kind == "f" \
            and a.dtype.itemsize >= 4:
        axis = _norm_dims(dim, a.ndim)
        if axis is None:
            count = a.size
        elif isinstance(axis, tuple):
            for ax in axis:
                count *= a.shape[ax]
        else:
            count = a.shape[axis]
        if count == 0:
            # the mean of nothing is nan, silently (torch's)
            with np.errstate(invalid="ignore", divide="ignore"):
                return np.true_divide(np.add.reduce(a, axis=axis, keepdims=keepdim), count)
        return np.true_divide(np.add.reduce(a, axis=axis, keepdims=keepdim), count)
    if dtype is None and _kind_of(a) == 105:
        # torch has no mean of integers or bools (NumPy's is float64)
        raise DtypeRuntimeError(
            f"mean(): could not infer output dtype. Input dtype must be either a floating point or "
            f"complex dtype. Got: {_dtype_str(a)}; convert first (x.float()) or pass dtype=")
    if np.size(a) == 0:
        # the mean of nothing is nan, silently (torch's; np.mean warns)
        import warnings
        with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
            warnings.simplefilter("ignore", RuntimeWarning)
            return np.mean(a, axis=_norm_dims(dim, np.ndim(a)), keepdims=keepdim, dtype=dtype)
    return np.mean(a, axis=_norm_dims(dim, a.ndim), keepdims=keepdim, dtype=dtype)


cdef inline object _shape_of(object a):
    return a.shape if type(a) is ndarray else np.shape(a)


cdef inline object _dtype_of(object a):
    return a.dtype if type(a) is ndarray else np.result_type(a)


cdef object k_transpose(object a, object d0, object d1):
    cdef int w0 = _wrap_dim(d0, a.ndim), w1 = _wrap_dim(d1, a.ndim)    # validates 0-d dims too
    if a.ndim == 0:
        return a
    return np.swapaxes(a, w0, w1)


cdef object k_permute(object a, object dims):
    _check_int_list(dims, "dims", "permute")
    if len(dims) != a.ndim:
        raise RuntimeError(
            f"permute(sparse_coo): number of dimensions in the tensor input does not match the length "
            f"of the desired ordering of dimensions i.e. input.dim() = {a.ndim} is not equal to len(dims) = {len(dims)}")
    wrapped = tuple(_wrap_dim(d, a.ndim) for d in dims)
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return np.transpose(a, wrapped)


cdef object k_reshape(object a, object shape):
    _check_int_list(shape, "shape", "reshape")
    for i, s in enumerate(shape):
        if s < -1:      # NumPy takes any negative size as -1
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape {list(shape)}")
    try:
        return np.reshape(a, shape)
    except ValueError:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {a.size}") from None
    except TypeError:
        raise _shape_type_error("reshape", shape) from None


cdef object _shape_type_error(str fn, object shape):
    # NumPy's "'float' object cannot be interpreted as an integer", said as torch
    bad = next((x for x in (shape if isinstance(shape, (tuple, list)) else (shape,))
                if type(x) is not int), shape)
    return TypeError(f"{fn}(): argument 'size' must be a tuple of ints, but found element of type "
                     f"{_type_name(bad)} ({bad!r})")


cdef object k_view(object a, object shape):
    out = k_reshape(a, shape)
    if out.size and not np.may_share_memory(out, a):
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one dimension "
            "spans across two contiguous subspaces). Use .reshape(...) instead.")
    return out


cdef object k_expand(object a, object shape):
    # torch's expand: -1 keeps a dimension; new leading dimensions may be added.
    shape = tuple(shape)
    _check_int_list(shape, "size", "expand")
    cdef int lead = len(shape) - a.ndim
    if lead < 0:
        raise RuntimeError(
            f"expand: the number of sizes provided ({len(shape)}) must be greater or equal to the "
            f"number of dimensions in the tensor ({a.ndim})")
    target = tuple(a.shape[i - lead] if (s == -1 and i >= lead) else s for i, s in enumerate(shape))
    try:
        return np.broadcast_to(a, target)
    except TypeError:
        raise _shape_type_error("expand", shape) from None
    except ValueError:
        raise RuntimeError(
            f"The expanded size of the tensor must match the existing size at non-singleton "
            f"dimensions: cannot expand shape {tuple(a.shape)} to {shape}") from None


cdef object k_broadcast_to(object a, object shape):
    try:
        return np.broadcast_to(a, tuple(shape))
    except TypeError:
        raise _shape_type_error("broadcast_to", shape) from None
    except ValueError:
        raise RuntimeError(f"cannot broadcast shape {tuple(a.shape)} to {tuple(shape)}") from None


cdef inline void _matrix_operands(str fn, object a, object b, str name_a, str name_b) except *:
    # torch's matmul/mm/bmm/dot/outer take tensors only: a Python number (kept
    # as a scalar by _arg_array) would otherwise reach NumPy's matmul.
    if type(a) is not ndarray and not _is_cupy(a):
        raise TypeError(f"{fn}(): argument '{name_a}' (position 1) must be Tensor, not {_type_name(a)}")
    if type(b) is not ndarray and not _is_cupy(b):
        raise TypeError(f"{fn}(): argument '{name_b}' (position 2) must be Tensor, not {_type_name(b)}")


cdef object k_matmul(object a, object b):
    _matrix_operands("matmul", a, b, "input", "other")
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        raise RuntimeError("both arguments to matmul need to be at least 1D, but they are "
                           f"{np.ndim(a)}D and {np.ndim(b)}D")
    try:
        return np.matmul(a, b)
    except ValueError as exc:
        raise RuntimeError(f"matmul: shapes {np.shape(a)} and {np.shape(b)} cannot be multiplied ({exc})") from None


cdef object k_sigmoid(object a):
    # Stable for large |a|: exp never overflows. 1/(1+e) where a >= 0,
    # e/(1+e) elsewhere, the latter as r*e in place (two ufunc calls fewer
    # than a where of both branches: this is most of sigmoid's cost on small
    # arrays, and silu and softplus's backward use it too).
    r = _loop_sigmoid(a, 0)             # the same values, one ufunc call
    if r is not None:
        return r
    cdef int kind = _kind_of(a)
    if kind == 99:
        # complex: 1 / (1 + exp(-z)), as torch (|z| would drop the imaginary part)
        return np.reciprocal(np.add(1, np.exp(np.negative(a))))
    if kind == 105:
        a = k_float(a)                  # uint8's -x would wrap
        r = _loop_sigmoid(a, 0)
        if r is not None:
            return r
    e = np.exp(np.negative(np.abs(a)))
    r = np.divide(1, 1 + e)
    if type(r) is not ndarray and not _is_cupy(r):    # 0-d input: NumPy gave a scalar
        r = np.asarray(r)
    if _is_cupy(r):                     # CuPy's ufuncs take no where=
        r = np.where(np.less(a, 0), r * e, r)
    else:
        np.multiply(r, e, out=r, where=np.less(a, 0))
    if type(a) is ndarray and _cnp.PyArray_DESCR(<_cnp.ndarray>a) == _cnp.PyArray_DESCR(<_cnp.ndarray>r):
        return r
    return r.astype(np.result_type(a, np.float16), copy=False)


cdef object k_relu(object a):
    cdef int kind = _kind_of(a)
    if kind == 99:
        k_real(a, "relu")
    if kind == 105 and _arr(a).dtype == np.bool_:
        raise DtypeRuntimeError("relu(): Boolean inputs not supported for relu (as in torch); "
                                "convert the input first, e.g. x.float()")
    return np.maximum(a, 0).astype(np.result_type(a), copy=False)


cdef object _raise_dtype_error(object exc, str op, object a):
    # A NumPy ufunc without a loop for the input's dtype (or NumPy's refusal of
    # `-` on bools) is torch's NotImplementedError ("trunc" not implemented
    # for complex); never NumPy's "ufunc ... not supported for the input types".
    msg = str(exc)
    if ("not supported for the input types" in msg or "did not contain a loop" in msg
            or "numpy boolean" in msg):
        dt = a.dtype if hasattr(a, "dtype") else np.result_type(a)
        raise NotImplementedError(f"\"{op}\" is not implemented for {dt} tensors; convert the input with "
                                  f".double() (or .to(the dtype you need)) first") from None


cdef object _raise_shape_error(object exc):
    # The generated ops with several tensor inputs call this on a kernel's
    # ValueError: NumPy's "could not be broadcast" is torch's RuntimeError
    # (the exception type torch raises). Other ValueErrors propagate.
    if "broadcast" in str(exc):
        raise RuntimeError(f"{exc}: the shapes must be broadcastable (as in torch)") from None


cdef object k_getitem(object a, object index):
    if _is_cupy(a):
        return a[_device_index(_unwrap_index(index), a)]
    try:
        return a[_unwrap_index(index)]
    except OverflowError:
        raise _index_overflow(index) from None
    except IndexError as exc:
        # NumPy wraps index values beyond int64 (2**63 becomes -2**63): refuse
        # them as torch does instead of reporting a wrapped, wrong index
        if _has_huge_index(index):
            raise _index_overflow(index) from None
        raise exc


cdef object _index_overflow(object index):
    return ValueError(f"Overflow when unpacking long long: index {index!r} does not fit in int64; "
                      "indices must lie in [-2**63, 2**63 - 1]")


cdef bint _has_huge_index(object index):
    items = index if isinstance(index, tuple) else (index,)
    for i in items:
        if isinstance(i, list):
            if _has_huge_index(tuple(i)):
                return True
        elif type(i) is int and not (-(1 << 63) <= i < (1 << 63)):
            return True
        elif type(i) is ndarray and i.dtype == np.uint64 and i.size and i.max() >= (1 << 63):
            return True
    return False


cdef object k_index_backward(object g, object shape, object dtype, object index):
    # zeros on g's device: np.zeros_like dispatches to CuPy for a cupy g
    z = _xp(g).zeros(shape, dtype=dtype)
    _add_at(z, _unwrap_index(index), g)
    return z


cdef object _add_at(object z, object index, object g):
    # Basic indexing never repeats an element: plain assignment-add is exact.
    # Advanced (integer array) indices may repeat: np.add.at accumulates them.
    if _is_basic_index(index):
        z[index] += g
    else:
        _accumulate(z, index, g)


cdef bint _is_basic_index(object index):
    if isinstance(index, tuple):
        for i in index:
            if not (i is None or i is Ellipsis or isinstance(i, (int, slice, np.integer))):
                return False
        return True
    return index is None or index is Ellipsis or isinstance(index, (int, slice, np.integer))


cdef object k_to_dtype(object a, object dtype):
    return a.astype(dtype)


cdef object k_clone(object a):
    return a.copy()


cdef object rg_sum_to(object g, tuple shape):
    """Sum ``g`` down to ``shape`` (the inverse of broadcasting)."""
    if isinstance(g, Tensor):
        return _t_sum_to(<Tensor>g, shape)
    gshape = g.shape
    if gshape == shape:
        return g
    cdef int lead = len(gshape) - len(shape)
    if lead < 0:
        raise RuntimeError(f"sum_to: gradient of shape {gshape} cannot be reduced to {shape}")
    axes = list(range(lead))
    for i in range(len(shape)):
        if shape[i] == 1 and gshape[lead + i] != 1:
            axes.append(lead + i)
        elif shape[i] != gshape[lead + i]:
            raise RuntimeError(f"sum_to: gradient of shape {gshape} cannot be reduced to {shape}")
    if axes:
        g = g.sum(axis=tuple(axes), keepdims=True)
    if lead:
        g = g.reshape(shape)
    return g


cdef Tensor _t_sum_to(Tensor g, tuple shape):
    gshape = g._array.shape
    if gshape == shape:
        return g
    cdef int lead = len(gshape) - len(shape)
    axes = list(range(lead))
    for i in range(len(shape)):
        if shape[i] == 1 and gshape[lead + i] != 1:
            axes.append(lead + i)
    out = g
    if axes:
        out = _op_sum(out, tuple(axes), True, None)
    if lead:
        out = _op_reshape(out, shape)
    return out


cdef bint _expandable_to(tuple shape, tuple target):
    # Whether `shape` broadcasts to `target` (so a gradient of shape `target`
    # can be summed back to `shape`).
    cdef Py_ssize_t n = len(shape), m = len(target)
    if n > m:
        return False
    for i in range(n):
        s = shape[n - 1 - i]
        t = target[m - 1 - i]
        if s != t and s != 1:
            return False
    return True


def sum_to(g, shape):
    """Sum an array or tensor down to ``shape`` (the inverse of broadcasting)."""
    return rg_sum_to(g, tuple(shape))


def _expandable(shape, target):
    return _expandable_to(tuple(shape), tuple(target))


# --- in-place on views and __setitem__ (see _copy_slices.pxi) ---

cdef object _strided_region(object a, object offset, object shape, object strides):
    # The region of C-contiguous `a` that a view with this geometry covers.
    return _xp(a).lib.stride_tricks.as_strided(a.reshape(-1)[offset:], shape, strides)


cdef object k_view_scatter(object base, object src, object offset, object shape, object strides):
    out = _xp(base).array(base, copy=True, order="C")
    _strided_region(out, offset, shape, strides)[...] = src
    return out


cdef object k_as_strided(object a, object offset, object shape, object strides):
    return _strided_region(_contig(a), offset, shape, strides)


cdef object k_index_put(object a, object index, object values):
    out = _xp(a).array(a, copy=True)
    out[_device_index(_unwrap_index(index), a)] = values
    return out



# --- shape and indexing ---
# Python's builtins by their full name: the table's ops (sum, max, min, abs,
# round, ...) are module-level functions of this module and shadow them.
import builtins as _bi

cdef object k_cat(list arrs, object dim):
    if type(dim) is not int:
        dim = _int_arg(dim, "dim", "cat")
    for i, a in enumerate(arrs):
        if np.ndim(a) == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    cdef int d = _wrap_dim(dim, np.ndim(arrs[0]))
    try:
        return np.concatenate(arrs, axis=d)
    except ValueError as exc:
        raise RuntimeError(f"cat(): Sizes of tensors must match except in dimension {d}: {exc}. "
                           "Reshape or pad the inputs first.") from None


cdef object k_stack(list arrs, object dim):
    shape0 = np.shape(arrs[0])
    for i, a in enumerate(arrs):
        if np.shape(a) != shape0:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(shape0)} at "
                               f"entry 0 and {list(np.shape(a))} at entry {i}")
    cdef int d = _wrap_dim(dim, len(shape0) + 1)
    return np.stack(arrs, axis=d)


cdef object k_diagonal(object a, object offset, object dim1, object dim2):
    # A writable view (np.diagonal's is read-only): the diagonal of the two
    # dims moved last, as one axis whose stride is the sum of theirs.
    cdef int nd = np.ndim(a)
    if nd < 2:
        # torch wraps dim1/dim2 (0, 1) first: its IndexError for fewer dims
        raise IndexError(f"Dimension out of range (expected to be in range of [{-_bi.max(nd, 1)}, "
                         f"{_bi.max(nd, 1) - 1}], but got 1): diagonal() needs a tensor with at least 2 "
                         f"dimensions, got {nd}")
    cdef int d1 = _wrap_dim(dim1, nd), d2 = _wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    cdef Py_ssize_t off = _int_arg(offset, "offset", "diagonal")
    b = np.moveaxis(a, (d1, d2), (-2, -1))
    b = b[..., :, off:] if off >= 0 else b[..., -off:, :]
    n = _bi.max(_bi.min(b.shape[-2], b.shape[-1]), 0)
    return _xp(b).lib.stride_tricks.as_strided(
        b, b.shape[:-2] + (n,), b.strides[:-2] + (b.strides[-2] + b.strides[-1],))


cdef object k_diagonal_backward(object g, object shape, object dtype, object offset, object dim1,
                                object dim2):
    z = _xp(g).zeros(shape, dtype=dtype)
    k_diagonal(z, offset, dim1, dim2)[...] = g
    return z


cdef tuple _scatter_coords(object index, int d):
    # The full coordinates of each position of `index` along dim d (the
    # index's values) and the other dims (their positions): an advanced index.
    cdef int nd = index.ndim
    xp = _xp(index)
    coords = []
    for i in range(nd):
        if i == d:
            coords.append(index)
        else:
            sh = [1] * nd
            sh[i] = index.shape[i]
            coords.append(xp.arange(index.shape[i]).reshape(sh))
    return tuple(coords)


cdef object _check_gather_index(str op, object a, object index, int d, object other=None):
    if index.dtype.kind not in "iu":
        raise RuntimeError(f"{op}(): Expected dtype int64 for index, got {index.dtype}")
    cdef int nd = np.ndim(a)
    if index.ndim != _bi.max(nd, 1) and not (nd == 0 and index.ndim == 0):
        raise RuntimeError(f"Index tensor must have the same number of dimensions as input tensor "
                           f"({op}: index has {index.ndim}, input {nd})")
    for i in range(index.ndim):
        if nd and i != d and index.shape[i] > a.shape[i]:
            raise RuntimeError(f"Size does not match at dimension {i} expected index {list(index.shape)} "
                               f"to be smaller than self {list(a.shape)} apart from dimension {d}")
        if other is not None and index.shape[i] > np.shape(other)[i]:
            raise RuntimeError(f"Size does not match at dimension {i} expected index {list(index.shape)} "
                               f"to be smaller than src {list(np.shape(other))}")
    if index.size and nd:
        lo, hi = index.min(), index.max()
        if lo < 0 or hi >= a.shape[d]:      # torch: no negative (wrapping) indices
            raise RuntimeError(f"{op}(): index {hi if hi >= a.shape[d] else lo} is out of bounds for "
                               f"dimension {d} with size {a.shape[d]}")


cdef object k_gather(object a, object dim, object index):
    index = _ensure_array(np.asarray(index)) if not hasattr(index, "ndim") else index
    cdef int nd = np.ndim(a)
    cdef int d = _wrap_dim(dim, nd)
    _check_gather_index("gather", a, index, d)
    if nd == 0:
        return _arr(a)[()] * _xp(index).ones(index.shape, dtype=np.result_type(a))
    return a[_scatter_coords(index, d)]


cdef object k_scatter_add(object a, object dim, object index, object src):
    index = _ensure_array(np.asarray(index)) if not hasattr(index, "ndim") else index
    cdef int nd = np.ndim(a)
    cdef int d = _wrap_dim(dim, nd)
    _check_gather_index("scatter_add", a, index, d, src if np.ndim(src) else None)
    out = _xp(a).array(a, copy=True, dtype=np.result_type(a)) if type(a) is not ndarray or nd == 0 \
        else a.copy()
    if index.size == 0 or nd == 0:
        return out
    part = src[tuple(slice(0, s) for s in index.shape)] if np.ndim(src) else \
        np.broadcast_to(src, index.shape)
    coords = _scatter_coords(index, d)
    if type(out) is ndarray and out.dtype.kind == "f":
        # np.add.at is slow; the flat positions and one bincount are not.
        # `out` is a fresh copy: a pass over all of it costs no more.
        coords = tuple(np.where(c < 0, c + a.shape[i], c) if i == d else c
                       for i, c in enumerate(coords))
        lin = np.ravel_multi_index(np.broadcast_arrays(*coords), out.shape).ravel()
        flat = out.reshape(-1)
        flat += np.bincount(lin, weights=np.asarray(part, dtype=np.float64).ravel(),
                            minlength=out.size)
        return out
    if _is_cupy(out):
        _cupy_add_at(out, coords, part)
        return out
    np.add.at(out, coords, part)
    return out


cdef object k_to_device(object a, object device):
    # A copy of `a` on `device`: host <-> GPU and GPU <-> GPU through CuPy,
    # and a plain copy between the host's (virtual) CPU devices.
    cdef Device d = _parse_device(device)
    if d.type == RG_DEV_CUDA:
        if _cupy is None:
            raise RuntimeError(f"cannot move a tensor to {d}: CUDA tensors need CuPy "
                               "(pip install cupy-cuda12x or the build for your CUDA) and a GPU")
        with _cupy.cuda.Device(d.index if d.index >= 0 else 0):
            return _cupy.array(a, copy=True)
    if _is_cupy(a):
        return a.get()
    return k_clone(a)


cdef object _cupy_add_at(object z, object index, object g):
    # np.add.at for CuPy arrays: cupy.add.at (cupyx.scatter_add before it)
    at = getattr(_cupy.add, "at", None)
    if at is not None:
        at(z, index, g)
    else:
        import cupyx
        cupyx.scatter_add(z, index, g)


cdef object _contig(object a):
    # np.ascontiguousarray, on a's device (NumPy's would copy to the host)
    return _xp(a).ascontiguousarray(a)


cdef object _on_device_of(object like, object a):
    # `a` (a host array or scalar a kernel computed from shapes) on like's device
    if _is_cupy(like) and type(a) is ndarray:
        return _cupy.asarray(a)
    return a


cdef object _device_index(object index, object like):
    # An index for a CuPy array: its NumPy array and list components moved to
    # the device (CuPy does not index with host arrays)
    if not _is_cupy(like):
        return index
    if isinstance(index, tuple):
        return tuple(_cupy.asarray(i) if type(i) is ndarray or isinstance(i, list) else i for i in index)
    if type(index) is ndarray or isinstance(index, list):
        return _cupy.asarray(index)
    return index


cdef object _accumulate(object z, object index, object g):
    # z[index] += g where `index` (advanced) may repeat positions: np.add.at's
    # semantics, without its cost (np.add.at is ~10-50x slower than the
    # vectorized paths below).
    if _is_cupy(z):                     # CuPy has no ufunc.at: its scatter_add
        _cupy_add_at(z, _device_index(index, z), g)
        return
    if type(z) is not ndarray or z.size == 0:
        np.add.at(z, index, g)
        return
    comps = index if isinstance(index, tuple) else (index,)
    adv = []
    for i, c in enumerate(comps):
        if not (c is None or c is Ellipsis or isinstance(c, (int, slice, np.integer))):
            adv.append(i)
    # Boolean masks select each position at most once: plain += is exact.
    if _bi.all(isinstance(comps[i], ndarray) and comps[i].dtype == np.bool_ for i in adv):
        z[index] += g
        return
    # One integer array on one axis, every other component a full slice:
    # sort the positions and sum runs of equal ones (a segment sum).
    if len(adv) == 1 and z.dtype.kind in "fc":
        full = True
        for i, c in enumerate(comps):
            if i != adv[0] and not (c is Ellipsis or (isinstance(c, slice) and c == slice(None))):
                full = False
        if full and _bi.sum(1 for c in comps if c is Ellipsis) <= 1:
            k = adv[0]
            if Ellipsis in comps[:k]:
                k += z.ndim - len(comps)          # the dims the Ellipsis stands for, minus itself
            arr = np.asarray(comps[adv[0]])
            if arr.dtype.kind in "iu":
                _segment_add(z, k, arr, g)
                return
    # Integer arrays on the leading dims (x[rows, cols], as in picking the
    # target logits): their flat positions are one integer array on one axis.
    if len(adv) == len(comps) > 1 and z.dtype.kind in "fc" and z.flags.c_contiguous:
        arrs = [np.asarray(c) for c in comps]
        if _bi.all(a.dtype.kind in "iu" for a in arrs):
            lead = z.shape[:len(arrs)]
            arrs = [np.where(a < 0, a + lead[i], a) for i, a in enumerate(arrs)]
            lin = np.ravel_multi_index(tuple(np.broadcast_arrays(*arrs)), lead)
            _segment_add(z.reshape((-1,) + z.shape[len(arrs):]), 0, lin, g)
            return
    # Any other index with integer arrays (x[i, :, j], x[:, i, j], x[0, ..., i],
    # x[i, 1:3]): index z's flat positions the same way, then one bincount.
    # Its cost grows with z's size: a few picks out of a huge z stay with
    # np.add.at, whose cost grows with the picks only.
    if z.dtype.kind == "f" and z.flags.c_contiguous and z.size <= 16 * np.size(g) + 65536:
        pos = np.arange(z.size, dtype=np.int32 if z.size < 2 ** 31 else np.intp).reshape(z.shape)[index]
        if pos.size:
            w = np.broadcast_to(g, pos.shape).astype(np.float64, copy=False)
            zf = z.reshape(-1)                             # a view: z is contiguous
            zf += np.bincount(pos.ravel(), weights=w.ravel(), minlength=z.size)
        return
    np.add.at(z, index, g)


cdef void _segment_add(object z, int k, object arr, object g):
    # z[(:,)*k + (arr,)] += g, repeats accumulated. No repeats (a
    # permutation: roll, pad): a plain fancy +=. Repeats: one np.bincount over
    # (position, column) pairs, ~2x faster than np.add.at on large inputs;
    # small ones stay with np.add.at (its fixed cost is lower).
    cdef Py_ssize_t n = z.shape[k], r = 1
    flat = arr.ravel().astype(np.intp, copy=False)
    if flat.size == 0:
        return
    flat = np.where(flat < 0, flat + n, flat)
    rest = z.shape[:k] + z.shape[k + 1:]
    for s in rest:
        r *= s
    if k == z.ndim - 1 and 1 < r <= 1024 and flat.size * r > 65536 and z.dtype.kind == "f" \
            and z.flags.c_contiguous and np.bincount(flat, minlength=n).max() > 1:
        # x[:, idx] / x[..., idx] with repeats: one bincount per leading row,
        # on g's contiguous rows (no moved copy of g, no (position, column)
        # index array r times the size of idx)
        g2 = np.broadcast_to(g, z.shape[:k] + arr.shape).reshape(r, flat.size)
        z2 = z.reshape(r, n)                           # a view: z is contiguous
        for p in range(r):
            z2[p] += np.bincount(flat, weights=g2[p], minlength=n)
        return
    g = np.broadcast_to(g, z.shape[:k] + arr.shape + z.shape[k + 1:])
    gm = np.moveaxis(g, tuple(range(k, k + arr.ndim)), tuple(range(arr.ndim))).reshape((flat.size,) + rest)
    zm = np.moveaxis(z, k, 0)                          # a view: writes land in z
    if np.bincount(flat, minlength=n).max() <= 1:
        zm[flat] += gm
    elif z.dtype.kind == "f" and flat.size * r > 65536:
        lin = flat if r == 1 else (flat[:, None] * r + np.arange(r)).ravel()
        acc = np.bincount(lin, weights=gm.reshape(-1).astype(np.float64, copy=False), minlength=n * r)
        zm += acc.reshape(zm.shape)
    else:
        np.add.at(zm, flat, gm)



# --- nn.functional ---------------------------------------------------------
# Kernels of rg.nn.functional's table entries (softmax, log_softmax,
# logsigmoid, convolution, pooling). Convolution is im2col through
# sliding_window_view (a strided view, no copy) and one batched GEMM per
# group; loops run only over the kernel's kh*kw positions (col2im, pooling
# backward), never over pixels.

from numpy.lib.stride_tricks import sliding_window_view as _swv


cdef object k_softmax(object x, object dim):
    # max-shifted: exp never overflows
    k_real_float(x, "softmax")
    axis = _norm_dims(dim, np.ndim(x))
    x = _arr(x)
    if x.dtype.kind not in "fc":
        x = x.astype(np.float64)
    if x.size == 0:
        return x.copy()
    # shifted by the max even where it is +inf: torch's softmax of a slice
    # holding +inf is NaN throughout (inf - inf), not [nan, 0, ...]
    m = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - m)
    e /= np.sum(e, axis=axis, keepdims=True)
    return e


cdef object k_log_softmax(object x, object dim):
    k_real_float(x, "log_softmax")
    axis = _norm_dims(dim, np.ndim(x))
    x = _arr(x)
    if x.dtype.kind not in "fc":
        x = x.astype(np.float64)
    if x.size == 0:
        return x.copy()
    m = np.max(x, axis=axis, keepdims=True)
    s = x - m                           # as k_softmax: NaN throughout for +inf
    return s - np.log(np.sum(np.exp(s), axis=axis, keepdims=True))


cdef object k_logsigmoid(object x):
    # log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)): stable for any |x|
    x = _arr(k_real_float(x, "logsigmoid"))
    out = np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))
    return out.astype(np.result_type(x, np.float16), copy=False)


cdef tuple _pair(object v, str what):
    # _int_arg: a float kernel size or stride raises TypeError as torch (int()
    # would truncate it)
    if isinstance(v, (tuple, list)):
        if len(v) == 1:
            return (_int_arg(v[0], what), _int_arg(v[0], what))
        if len(v) != 2:
            raise RuntimeError(f"{what} must be an int or a pair of ints, got {v!r}")
        return (_int_arg(v[0], what), _int_arg(v[1], what))
    return (_int_arg(v, what), _int_arg(v, what))


cdef object _conv_windows(object x, int kh, int kw, tuple stride, tuple padding, tuple dilation,
                          object pad_value=0):
    # A strided view (N, C, Ho, Wo, kh, kw) of the (padded) input: window
    # (ho, wo) at kernel position (i, j) is x_pad[..., ho*sh + i*dh, wo*sw + j*dw].
    cdef int pt = padding[0], pb = padding[1], pl = padding[2], pr = padding[3]
    if pt or pb or pl or pr:
        x = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)), constant_values=pad_value)
    cdef int ekh = (kh - 1) * dilation[0] + 1, ekw = (kw - 1) * dilation[1] + 1
    if x.shape[2] < ekh or x.shape[3] < ekw:
        raise RuntimeError(
            f"Calculated padded input size per channel: ({x.shape[2]} x {x.shape[3]}). Kernel size: "
            f"({ekh} x {ekw}). Kernel size can't be greater than actual input size")
    v = _swv(x, (ekh, ekw), axis=(2, 3)) if type(x) is ndarray else \
        _xp(x).lib.stride_tricks.sliding_window_view(x, (ekh, ekw), axis=(2, 3))
    return v[:, :, ::stride[0], ::stride[1], ::dilation[0], ::dilation[1]]


cdef object _im2col(object x, int kh, int kw, tuple stride, tuple padding, tuple dilation, int groups):
    # (N, G, Cg*kh*kw, Ho*Wo), contiguous: one GEMM operand per (sample, group).
    v = _conv_windows(x, kh, kw, stride, padding, dilation)
    N, C, Ho, Wo = v.shape[0], v.shape[1], v.shape[2], v.shape[3]
    cols = _xp(x).empty((N, C, kh, kw, Ho, Wo), dtype=x.dtype)
    # one strided copy per kernel position (rows stay contiguous; faster
    # than a generic 6-d transpose copy)
    for i in range(kh):
        for j in range(kw):
            cols[:, :, i, j] = v[:, :, :, :, i, j]
    return cols.reshape(N, groups, (C // groups) * kh * kw, Ho * Wo), Ho, Wo


cdef void _check_conv(object x, object w, int groups) except *:
    if np.ndim(x) != 4:
        raise RuntimeError(f"conv2d: expected a 4-D input (N, C, H, W), got {np.ndim(x)}-D")
    if np.ndim(w) != 4:
        raise RuntimeError(f"conv2d: expected a 4-D weight (out_channels, in_channels/groups, kH, kW), "
                           f"got {np.ndim(w)}-D")
    if groups < 1:
        raise RuntimeError("non-positive groups is not supported")
    if w.shape[0] == 0:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least 1 at dimension 0, but "
                           f"got weight of size {list(w.shape)} instead")
    if w.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at "
                           f"dimension 0, but got weight of size {list(w.shape)} instead")
    if x.shape[1] != w.shape[1] * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(w.shape)}, expected input{list(x.shape)} to "
            f"have {w.shape[1] * groups} channels, but got {x.shape[1]} channels instead")


cdef object k_conv2d(object x, object w, object stride, object padding, object dilation, int groups):
    x = _arr(x)
    w = _arr(w)
    _check_conv(x, w, groups)
    O, Cg, kh, kw = w.shape
    N = x.shape[0]
    wm = w.reshape(groups, O // groups, Cg * kh * kw)
    if tuple(stride) == (1, 1) and type(x) is ndarray and _shift_worth(x.shape[2] * x.shape[3]):
        if groups == 1 and _cols_conv_ok(x, w, Cg * kh * kw):
            return _conv2d_cols(x, w, tuple(padding), tuple(dilation))
        return _conv2d_shift(x, w, tuple(padding), tuple(dilation), groups)
    if tuple(stride) == (1, 1):
        cols, Ho, Wo, Wp = _im2col_pitched(x, kh, kw, tuple(padding), tuple(dilation), groups, False)
        out = np.matmul(wm, cols).reshape(O, N, Ho, Wp)      # (G, Og, K) @ (G, K, N*L)
        return _contig(out[:, :, :, :Wo].transpose(1, 0, 2, 3))
    cols, Ho, Wo = _im2col(x, kh, kw, tuple(stride), tuple(padding), tuple(dilation), groups)
    out = np.matmul(wm, cols)                 # (G, Og, K) @ (N, G, K, L) -> (N, G, Og, L)
    return out.reshape(N, O, Ho, Wo)


cdef object k_conv2d_bias(object x, object w, object b, object stride, object padding, object dilation,
                          int groups):
    # k_conv2d + b[:, None, None]; on the column-matrix path the bias is added
    # per image right after its GEMM (same values: one add in the output dtype)
    x = _arr(x)
    w = _arr(w)
    b = _arr(b)
    _check_conv(x, w, groups)
    if np.ndim(b) != 1 or b.shape[0] != w.shape[0]:
        raise RuntimeError(f"Given weight of size {list(w.shape)}, expected bias to be 1-dimensional with "
                           f"{w.shape[0]} elements, but got bias of size {list(b.shape)} instead")
    O, Cg, kh, kw = w.shape
    if groups == 1 and tuple(stride) == (1, 1) and _shift_worth(x.shape[2] * x.shape[3]) \
            and _cols_conv_ok(x, w, Cg * kh * kw) and b.dtype == x.dtype:
        return _conv2d_cols(x, w, tuple(padding), tuple(dilation), b)
    return np.add(k_conv2d(x, w, stride, padding, dilation, groups), b.reshape(-1, 1, 1))


cdef object _pitched_grad(object g, Py_ssize_t Wp):
    # g (N, O, Ho, Wo) as (O, N, Ho, Wp), zero beyond Wo: the layout of
    # _im2col_pitched's columns
    N, O, Ho, Wo = g.shape
    xp = _xp(g)
    gp = xp.zeros((O, N, Ho, Wp), dtype=g.dtype) if Wp != Wo else xp.empty((O, N, Ho, Wp), dtype=g.dtype)
    gp[:, :, :, :Wo] = g.transpose(1, 0, 2, 3)
    return gp


cdef tuple _im2col_pitched(object x, int kh, int kw, tuple padding, tuple dilation, int groups,
                           bint zero_tail):
    # Stride-1 im2col with rows of pitch Wp (the padded width) instead of Wo:
    # window (i, j) of every image is then ONE contiguous range of the
    # flattened padded image (offset i*dh*Wp + j*dw), so each kernel position
    # is a long contiguous copy instead of N*C*Ho short rows. Columns
    # wo >= Wo of each row hold neighbouring pixels (zeroed when zero_tail).
    cdef int pt = padding[0], pb = padding[1], pl = padding[2], pr = padding[3]
    cdef int dh = dilation[0], dw = dilation[1]
    N, C, H, W = x.shape
    Hp, Wp = H + pt + pb, W + pl + pr
    Ho, Wo = Hp - (kh - 1) * dh, Wp - (kw - 1) * dw
    if Ho <= 0 or Wo <= 0:
        raise RuntimeError(
            f"Calculated padded input size per channel: ({Hp} x {Wp}). Kernel size: "
            f"({(kh - 1) * dh + 1} x {(kw - 1) * dw + 1}). Kernel size can't be greater than actual input size")
    # one extra zero row at the bottom: the last window's range runs past
    # the last row by (kw - 1) * dw elements
    xpad = _xp(x).zeros((N, C, Hp + 1, Wp), dtype=x.dtype)
    xpad[:, :, pt:pt + H, pl:pl + W] = x
    xf = xpad.reshape(N, C, (Hp + 1) * Wp)
    L = Ho * Wp
    # channel-major (C, kh, kw, N, L): each group's columns are one matrix
    # (Kg, N*L), so every convolution GEMM is a single large one per group
    cols = _xp(x).empty((C, kh, kw, N, L), dtype=x.dtype)
    xt = xf.transpose(1, 0, 2)
    for i in range(kh):
        for j in range(kw):
            off = i * dh * Wp + j * dw
            cols[:, i, j] = xt[:, :, off:off + L]
    if zero_tail and Wp != Wo:
        cols.reshape(C, kh, kw, N, Ho, Wp)[..., Wo:] = 0
    return cols.reshape(groups, (C // groups) * kh * kw, N * L), Ho, Wo, Wp


cdef object k_conv2d_input_grad(object g, object w, object input_shape, object stride, object padding,
                                object dilation, int groups):
    # The transpose of k_conv2d in its input: GEMM to columns, then col2im
    # (one strided accumulation per kernel position).
    g = _arr(g)
    w = _arr(w)
    xp = _xp(g)
    N, C, H, W = input_shape
    O, Cg, kh, kw = w.shape
    Ho, Wo = g.shape[2], g.shape[3]
    sh, sw = stride[0], stride[1]
    dh, dw = dilation[0], dilation[1]
    pt, pb, pl, pr = padding
    if sh == 1 and sw == 1 and type(g) is ndarray and _shift_worth(H * W):
        if groups == 1 and _cols_conv_ok(g, w, Cg * kh * kw):
            return _conv2d_input_grad_cols(g, w, tuple(input_shape), tuple(padding), tuple(dilation))
        return _conv2d_input_grad_shift(g, w, tuple(input_shape), tuple(padding), tuple(dilation), groups)
    wm = w.reshape(groups, O // groups, Cg * kh * kw)
    if sh == 1 and sw == 1:
        # col2im on the pitched layout of _im2col_pitched: g gets zero
        # columns up to the padded width, and each kernel position is one
        # contiguous range add
        Hp, Wp = H + pt + pb, W + pl + pr
        L = Ho * Wp
        gp = _pitched_grad(g, Wp)
        gcols = np.matmul(np.swapaxes(wm, 1, 2), gp.reshape(groups, O // groups, N * L))
        gcols = gcols.reshape(C, kh, kw, N, L)
        gxf = xp.zeros((C, N, (Hp + 1) * Wp), dtype=gcols.dtype)
        for i in range(kh):
            for j in range(kw):
                off = i * dh * Wp + j * dw
                gxf[:, :, off:off + L] += gcols[:, i, j]
        return _contig(
            gxf.reshape(C, N, Hp + 1, Wp)[:, :, pt:pt + H, pl:pl + W].transpose(1, 0, 2, 3))
    gm = g.reshape(N, groups, O // groups, Ho * Wo)
    gcols = np.matmul(np.swapaxes(wm, 1, 2), gm).reshape(N, C, kh, kw, Ho, Wo)
    gx = xp.zeros((N, C, H + pt + pb, W + pl + pr), dtype=gcols.dtype)
    for i in range(kh):
        for j in range(kw):
            gx[:, :, i * dh:i * dh + sh * (Ho - 1) + 1:sh, j * dw:j * dw + sw * (Wo - 1) + 1:sw] += gcols[:, :, i, j]
    if pt or pb or pl or pr:
        gx = _contig(gx[:, :, pt:pt + H, pl:pl + W])
    return gx


cdef object k_conv2d_weight_grad(object x, object g, object weight_shape, object stride, object padding,
                                 object dilation, int groups):
    x = _arr(x)
    g = _arr(g)
    O, Cg, kh, kw = weight_shape
    N = x.shape[0]
    if tuple(stride) == (1, 1) and type(x) is ndarray and _shift_worth(x.shape[2] * x.shape[3]):
        if groups == 1 and _cols_conv_ok(x, g, Cg * kh * kw):
            return _conv2d_weight_grad_cols(x, g, tuple(weight_shape), tuple(padding), tuple(dilation))
        return _conv2d_weight_grad_shift(x, g, tuple(weight_shape), tuple(padding), tuple(dilation), groups)
    if tuple(stride) == (1, 1):
        # pitched channel-major columns (tail zeroed) against g laid out the
        # same way: one GEMM (Og, N*L) @ (N*L, Kg) per group
        cols, Ho, Wo, Wp = _im2col_pitched(x, kh, kw, tuple(padding), tuple(dilation), groups, True)
        gp = _pitched_grad(g, Wp).reshape(groups, O // groups, -1)
        return np.matmul(gp, np.swapaxes(cols, 1, 2)).reshape(tuple(weight_shape))
    else:
        cols, Ho, Wo = _im2col(x, kh, kw, tuple(stride), tuple(padding), tuple(dilation), groups)
    gm = g.reshape(N, groups, O // groups, Ho * Wo)
    if N == 1:
        gw = np.matmul(gm[0], np.swapaxes(cols[0], 1, 2))
    elif groups == 1:
        # one GEMM over (N*L): (O, N*L) @ (N*L, K)
        gw = np.matmul(np.swapaxes(gm[:, 0], 0, 1).reshape(O, -1),
                       np.swapaxes(cols[:, 0], 1, 2).reshape(-1, Cg * kh * kw))[None]
    else:
        gw = np.matmul(gm, np.swapaxes(cols, 2, 3)).sum(axis=0)
    return gw.reshape(tuple(weight_shape))


cdef tuple _pool_params(object x, object kernel_size, object stride, object padding, object dilation,
                        bint ceil_mode):
    if np.ndim(x) not in (3, 4) or 0 in np.shape(x)[-3:]:
        raise RuntimeError(f"pool2d: expected a 3-D (C, H, W) or 4-D (N, C, H, W) input with non-zero "
                           f"C, H, W (only the batch may be empty), got shape {list(np.shape(x))}")
    ks = _pair(kernel_size, "kernel_size")
    st = ks if stride is None or (isinstance(stride, (tuple, list)) and len(stride) == 0) \
        else _pair(stride, "stride")
    pd = _pair(padding, "padding")
    dl = _pair(dilation, "dilation")
    if ks[0] <= 0 or ks[1] <= 0 or st[0] <= 0 or st[1] <= 0 or dl[0] <= 0 or dl[1] <= 0:
        raise RuntimeError("pool2d: kernel_size, stride and dilation must be greater than zero")
    if pd[0] > ks[0] // 2 or pd[1] > ks[1] // 2 or pd[0] < 0 or pd[1] < 0:
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                           f"pad={list(pd)}, kernel_size={list(ks)}")
    return ks, st, pd, dl


cdef object _pool_out_size(object n, object k, object s, object p, object d, bint ceil_mode):
    # torch's pooling_output_shape: with ceil_mode the last window may hang
    # past the padded input, but it must start inside the input or the left
    # padding. (Python ints: the module's cdivision would truncate // .)
    num = n + 2 * p - d * (k - 1) - 1
    if ceil_mode:
        o = -((-num) // s) + 1
        if (o - 1) * s >= n + p:
            o -= 1
    else:
        o = num // s + 1
    return o


cdef tuple _pool_geometry(object x, tuple ks, tuple st, tuple pd, tuple dl, bint ceil_mode):
    # (Ho, Wo, eh, ew): the output size, and how far its last windows reach
    # past the bottom / right padding (ceil_mode only): the kernels pad that
    # much more there (with -inf for max, 0 and a per-window divisor for avg)
    H, W = np.shape(x)[-2], np.shape(x)[-1]
    Ho = _pool_out_size(H, ks[0], st[0], pd[0], dl[0], ceil_mode)
    Wo = _pool_out_size(W, ks[1], st[1], pd[1], dl[1], ceil_mode)
    eh = max(0, (Ho - 1) * st[0] + (ks[0] - 1) * dl[0] + 1 - (H + 2 * pd[0]))
    ew = max(0, (Wo - 1) * st[1] + (ks[1] - 1) * dl[1] + 1 - (W + 2 * pd[1]))
    return Ho, Wo, eh, ew


cdef tuple _max_pool_argmax(object x, object kernel_size, object stride, object padding,
                            object dilation, bint ceil_mode):
    # (out, am, params): am is each window's argmax as a kernel position
    # (the first one on ties, as torch).
    ks, st, pd, dl = _pool_params(x, kernel_size, stride, padding, dilation, ceil_mode)
    x = _arr(x)
    x4 = x if x.ndim == 4 else x[None]
    fill = -np.inf if x.dtype.kind in "fc" else (np.iinfo(x.dtype).min if x.dtype.kind in "iu" else False)
    Ho, Wo, eh, ew = _pool_geometry(x, ks, st, pd, dl, ceil_mode)
    v = _conv_windows(x4, ks[0], ks[1], st, (pd[0], pd[0] + eh, pd[1], pd[1] + ew), dl, fill)[:, :, :Ho, :Wo]
    N, C, Ho, Wo = v.shape[0], v.shape[1], v.shape[2], v.shape[3]
    flat = v.reshape(N, C, Ho, Wo, ks[0] * ks[1])
    am = flat.argmax(axis=-1)
    out = np.take_along_axis(flat, am[..., None], -1)[..., 0]
    if x.ndim == 3:
        out = out[0]
    return out, am, (ks, st, pd, dl)


cdef tuple _max_pool_windows(object x, object kernel_size, object stride, object padding,
                             object dilation, bint ceil_mode):
    # (padded 4-d input, params, Ho, Wo): window position (i, j) of every
    # output is xp[:, :, i*dh::sh, j*dw::sw] (cropped to Ho, Wo)
    ks, st, pd, dl = _pool_params(x, kernel_size, stride, padding, dilation, ceil_mode)
    x = _arr(x)
    x4 = x if x.ndim == 4 else x[None]
    fill = -np.inf if x.dtype.kind in "fc" else (np.iinfo(x.dtype).min if x.dtype.kind in "iu" else False)
    Ho, Wo, eh, ew = _pool_geometry(x, ks, st, pd, dl, ceil_mode)
    if pd[0] or pd[1] or eh or ew:
        x4 = np.pad(x4, ((0, 0), (0, 0), (pd[0], pd[0] + eh), (pd[1], pd[1] + ew)), constant_values=fill)
    if Ho <= 0 or Wo <= 0:
        raise RuntimeError(f"max_pool2d: output size is too small ({Ho} x {Wo}): the kernel does not "
                           "fit in the (padded) input")
    return x4, ks, st, pd, dl, Ho, Wo


cdef object k_max_pool2d(object x, object kernel_size, object stride, object padding, object dilation,
                         bint ceil_mode):
    # running maximum over the kh*kw window positions (strided views, no
    # window copy); np.maximum propagates NaN, as torch
    x4, ks, st, pd, dl, Ho, Wo = _max_pool_windows(x, kernel_size, stride, padding, dilation, ceil_mode)
    out = None
    for i in range(ks[0]):
        for j in range(ks[1]):
            s = x4[:, :, i * dl[0]:i * dl[0] + st[0] * (Ho - 1) + 1:st[0],
                   j * dl[1]:j * dl[1] + st[1] * (Wo - 1) + 1:st[1]]
            out = s.copy() if out is None else np.maximum(out, s, out=out)
    return out if np.ndim(x) == 4 else out[0]


cdef object k_max_pool2d_backward_fast(object g, object x, object result, object kernel_size,
                                       object stride, object padding, object dilation, bint ceil_mode):
    # The gradient goes to the first window position (scan order, as torch)
    # holding the maximum: one pass per kernel position over strided views.
    x4, ks, st, pd, dl, Ho, Wo = _max_pool_windows(x, kernel_size, stride, padding, dilation, ceil_mode)
    g = _arr(g)
    r = _arr(result)
    xp = _xp(r)
    if r.ndim == 3:
        r = r[None]
        g = g[None] if g.ndim == 3 else g
    g = np.broadcast_to(g, r.shape)
    gx = None
    if xp is np:                        # the same, one pass (NumPy arrays only)
        gx = _loop_max_pool2d_backward_tiled(g, x4, r, ks, st, pd, dl, Ho, Wo, np.shape(x)[-2], np.shape(x)[-1])
    if gx is not None:
        return gx if np.ndim(x) == 4 else gx[0]
    cdef bint tiled = (st[0] == ks[0] and st[1] == ks[1] and dl[0] == 1 and dl[1] == 1
                       and pd[0] == 0 and pd[1] == 0
                       and x4.shape[2] == Ho * ks[0] and x4.shape[3] == Wo * ks[1]
                       and x4.shape[2] == np.shape(x)[-2] and x4.shape[3] == np.shape(x)[-1]
                       and not (r.dtype.kind in "fc" and np.isnan(r).any()))
    if tiled:
        # windows tile the input exactly: compare the (N, C, Ho, kh, Wo, kw)
        # view with the result in one pass (NaN takes the general path below)
        # (rows of the result repeated kw times keep the inner loops long)
        N, C = x4.shape[0], x4.shape[1]
        W4 = x4.shape[3]
        r5 = np.repeat(r, ks[1], axis=3).reshape(N, C, Ho, 1, W4)
        hit = np.equal(x4.reshape(N, C, Ho, ks[0], W4), r5)
        if np.count_nonzero(hit) != r.size:
            # ties (common after a relu: windows of zeros): keep each
            # window's first maximum in scan order, as torch, with two small
            # boolean passes per kernel position over strided views of `hit`
            h6 = hit.reshape(N, C, Ho, ks[0], Wo, ks[1])
            found = xp.zeros((N, C, Ho, Wo), dtype=bool)
            for i in range(ks[0]):
                for j in range(ks[1]):
                    h = h6[:, :, :, i, :, j]
                    np.greater(h, found, out=h)         # h and not found
                    np.logical_or(found, h, out=found)
        g5 = np.repeat(g, ks[1], axis=3).reshape(N, C, Ho, 1, W4)
        gx = np.multiply(hit, g5, dtype=np.result_type(g.dtype, r.dtype)).reshape(x4.shape)
        return gx if np.ndim(x) == 4 else gx[0]
    gx = xp.zeros(x4.shape, dtype=np.result_type(g.dtype, r.dtype))
    pending = xp.ones(r.shape, dtype=bool)
    nan_out = r != r
    has_nan = bool(nan_out.any())
    # windows that do not overlap (stride >= effective kernel) own their
    # input positions: a masked copy instead of an accumulation
    disjoint = st[0] >= (ks[0] - 1) * dl[0] + 1 and st[1] >= (ks[1] - 1) * dl[1] + 1
    for i in range(ks[0]):
        for j in range(ks[1]):
            sl = (slice(None), slice(None),
                  slice(i * dl[0], i * dl[0] + st[0] * (Ho - 1) + 1, st[0]),
                  slice(j * dl[1], j * dl[1] + st[1] * (Wo - 1) + 1, st[1]))
            s = x4[sl]
            hit = np.equal(s, r)
            if has_nan:
                hit |= (s != s) & nan_out
            hit &= pending
            pending ^= hit                  # hit is a subset of pending
            if disjoint and xp is np:
                np.copyto(gx[sl], g, where=hit)
            else:
                gx[sl] += np.where(hit, g, 0)
    H, W = np.shape(x)[-2], np.shape(x)[-1]
    if gx.shape[2] != H or gx.shape[3] != W:
        gx = _contig(gx[:, :, pd[0]:pd[0] + H, pd[1]:pd[1] + W])
    return gx if np.ndim(x) == 4 else gx[0]


cdef tuple _max_pool_index(object x, object kernel_size, object stride, object padding, object dilation,
                           bint ceil_mode):
    # The advanced index into x that max_pool2d gathers (out == x[index]).
    out, am, params = _max_pool_argmax(x, kernel_size, stride, padding, dilation, ceil_mode)
    ks, st, pd, dl = params
    N, C, Ho, Wo = am.shape
    xp = _xp(am)
    hh = xp.arange(Ho).reshape(Ho, 1) * st[0] + (am // ks[1]) * dl[0] - pd[0]
    ww = xp.arange(Wo) * st[1] + (am % ks[1]) * dl[1] - pd[1]
    c = xp.arange(C).reshape(C, 1, 1)
    if np.ndim(x) == 3:
        return (c, hh[0], ww[0])
    return (xp.arange(N).reshape(N, 1, 1, 1), c[None], hh, ww)


cdef object _avg_divisor(tuple shape4, tuple ks, tuple st, tuple pd, int Ho, int Wo,
                         bint count_include_pad, object divisor_override, object dtype):
    # torch's avg_pool2d divisor: count_include_pad counts the padding but not
    # the part of a ceil_mode window past it; otherwise the input elements
    if divisor_override is not None:
        if divisor_override == 0:
            raise RuntimeError("divisor must be not zero")
        return np.asarray(divisor_override, dtype=dtype)
    H, W = shape4[2], shape4[3]
    h0 = np.arange(Ho) * st[0] - pd[0]
    w0 = np.arange(Wo) * st[1] - pd[1]
    hend = np.minimum(h0 + ks[0], H + pd[0])
    wend = np.minimum(w0 + ks[1], W + pd[1])
    if count_include_pad:
        nh, nw = hend - h0, wend - w0
    else:
        nh = np.minimum(hend, H) - np.maximum(h0, 0)
        nw = np.minimum(wend, W) - np.maximum(w0, 0)
    if (nh == ks[0]).all() and (nw == ks[1]).all():
        return np.asarray(ks[0] * ks[1], dtype=dtype)
    return np.multiply.outer(nh, nw).astype(dtype)


cdef object k_avg_pool2d(object x, object kernel_size, object stride, object padding, bint ceil_mode,
                         bint count_include_pad, object divisor_override):
    ks, st, pd, dl = _pool_params(x, kernel_size, stride, padding, 1, ceil_mode)
    x = _arr(x)
    x4 = x if x.ndim == 4 else x[None]
    Ho, Wo, eh, ew = _pool_geometry(x, ks, st, pd, dl, ceil_mode)
    v = _conv_windows(x4, ks[0], ks[1], st, (pd[0], pd[0] + eh, pd[1], pd[1] + ew), (1, 1), 0)[:, :, :Ho, :Wo]
    dtype = np.result_type(x.dtype, np.float16) if x.dtype.kind in "fc" else np.float64
    s = _xp(x).zeros(v.shape[:4], dtype=dtype)
    for i in range(ks[0]):
        for j in range(ks[1]):
            s += v[:, :, :, :, i, j]
    s /= _on_device_of(x, _avg_divisor(x4.shape, ks, st, pd, Ho, Wo, count_include_pad, divisor_override, dtype))
    return s if x.ndim == 4 else s[0]


cdef object k_avg_pool2d_backward(object g, object shape, object kernel_size, object stride,
                                  object padding, bint ceil_mode, bint count_include_pad,
                                  object divisor_override):
    shape = tuple(shape)
    ks, st, pd, dl = _pool_params(np.empty(shape, dtype=np.int8) if len(shape) in (3, 4) else np.empty(()),
                                  kernel_size, stride, padding, 1, ceil_mode)
    g = _arr(g)
    g4 = g if g.ndim == 4 else g[None]
    shape4 = shape if len(shape) == 4 else (1,) + shape
    Ho, Wo, eh, ew = _pool_geometry(np.empty(shape4[2:], dtype=np.int8), ks, st, pd, dl, ceil_mode)
    g4 = np.broadcast_to(g4, shape4[:2] + (Ho, Wo))
    gd = g4 / _on_device_of(g, _avg_divisor(shape4, ks, st, pd, Ho, Wo, count_include_pad, divisor_override,
                                            g.dtype))
    N, C, H, W = shape4
    gx = _xp(g).zeros((N, C, H + 2 * pd[0] + eh, W + 2 * pd[1] + ew), dtype=gd.dtype)
    for i in range(ks[0]):
        for j in range(ks[1]):
            gx[:, :, i:i + st[0] * (Ho - 1) + 1:st[0], j:j + st[1] * (Wo - 1) + 1:st[1]] += gd
    if pd[0] or pd[1] or eh or ew:
        gx = _contig(gx[:, :, pd[0]:pd[0] + H, pd[1]:pd[1] + W])
    return gx if len(shape) == 4 else gx[0]



# --- reductions and linear algebra ---
# Kernels of the reduction and linear algebra entries (prod, amax, var,
# logsumexp, norm, cumsum, argmax, mm, einsum, linalg.*). torch's argument
# conventions (dim=int or tuple, keepdim, correction) mapped onto NumPy.

from collections import namedtuple as _namedtuple

class _LinAlgErrorBase(RuntimeError):
    pass


# torch.linalg.LinAlgError is a RuntimeError subclass: callers that catch
# RuntimeError keep working.
LinAlgError = type("LinAlgError", (_LinAlgErrorBase,), {"__module__": "retrograd.linalg"})


cdef object _arr(object a):
    # np.asarray for Python values; ndarrays, NumPy scalars and CuPy arrays
    # pass through (np.asarray would copy a cupy array to the host, or fail)
    if type(a) is ndarray or isinstance(a, np.generic):
        return a
    if _cupy_ndarray is not None and type(a) is _cupy_ndarray:
        return a
    return np.asarray(a)


cdef object _axis_of(object a, object dim):
    # torch's dim (None / () = all, int, tuple) as a NumPy axis (None = all).
    if dim is None:
        return None
    return _norm_dims(dim, np.ndim(a))


cdef tuple _axes_tuple(object axis, int ndim):
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, tuple):
        return axis
    return (axis,)


cdef object k_prod(object a, object dim, bint keepdim, object dtype):
    if dim is not None and isinstance(dim, (tuple, list)) and len(dim) == 0:
        dim = None
    if np.ndim(a) == 0:
        _norm_dims(dim, 0)
        out = _arr(a).astype(dtype) if dtype is not None else _arr(a)
        if out.dtype.kind in "biu" and dtype is None:
            out = out.astype(np.int64)
        return out.copy()
    out = np.prod(a, axis=_axis_of(a, dim), keepdims=keepdim, dtype=dtype)
    if dtype is None and _arr(out).dtype.kind in "bu":          # torch: bool/uint8 prod -> int64
        out = _arr(out).astype(np.int64)
    return out


cdef object _check_nonempty(object a, object axis, str name):
    # torch: reducing all of an empty tensor is a RuntimeError, reducing an
    # empty dim an IndexError; empty non-reduced dims give an empty result
    if np.size(a) != 0:
        return
    if axis is None:
        raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                           "Specify the reduction dim with the 'dim' argument.")
    shape = np.shape(a)
    for d in (axis if isinstance(axis, tuple) else (axis,)):
        if shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


cdef object k_amax(object a, object dim, bint keepdim):
    k_real(a, "amax")
    axis = _axis_of(a, dim) if not (isinstance(dim, (tuple, list)) and len(dim) == 0) else None
    _check_nonempty(a, axis, "amax")
    return np.amax(a, axis=axis, keepdims=keepdim)


cdef object k_amin(object a, object dim, bint keepdim):
    k_real(a, "amin")
    axis = _axis_of(a, dim) if not (isinstance(dim, (tuple, list)) and len(dim) == 0) else None
    _check_nonempty(a, axis, "amin")
    return np.amin(a, axis=axis, keepdims=keepdim)


def _var_correction(dim, unbiased, correction):
    # torch: var(x, unbiased) with a bool in dim's place; unbiased and
    # correction are exclusive; the default is correction=1.
    if isinstance(dim, (bool, np.bool_)):
        if unbiased is not None:
            raise TypeError("var()/std(): unbiased given twice (positionally in place of dim and by keyword)")
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise RuntimeError("var()/std(): cannot specify both `unbiased` and `correction`; use correction= only")
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    return dim, correction


cdef object k_var(object a, object dim, object unbiased, bint keepdim, object correction,
                  str name="var"):
    dim, correction = _var_correction(dim, unbiased, correction)
    if _arr(a).dtype.kind not in "fc":
        raise RuntimeError(f"std and var only support floating point and complex dtypes, got "
                           f"{_arr(a).dtype}; convert with .to(float) first")
    cdef Py_ssize_t n = np.size(a)
    axis = _axis_of(a, dim)
    if axis is not None and np.ndim(a):
        n = 1
        for d in (axis if isinstance(axis, tuple) else (axis,)):
            n *= np.shape(a)[d]
    if n - correction <= 0 and np.size(a):
        import warnings
        warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the "
                      "reduction factor (input numel divided by output numel).", UserWarning, stacklevel=2)
    with np.errstate(divide="ignore", invalid="ignore"):
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return np.var(a, axis=_axis_of(a, dim), ddof=correction, keepdims=keepdim)


cdef object k_std(object a, object dim, object unbiased, bint keepdim, object correction):
    return np.sqrt(k_var(a, dim, unbiased, keepdim, correction, "std"))


cdef object k_logsumexp(object a, object dim, bint keepdim):
    a = _arr(k_float(a))                # integer inputs: torch's default float (float32)
    if a.dtype.kind not in "fc":
        a = a.astype(np.float64)
    axis = _axis_of(a, dim)
    m = np.amax(a, axis=axis, keepdims=True) if np.size(a) else np.zeros_like(a, shape=(1,) * np.ndim(a))
    m = np.where(np.isfinite(m), m, 0)                  # all -inf (or inf) slices: no shift
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True)) + m
    if not keepdim:
        out = np.squeeze(out, axis=_axes_tuple(axis, np.ndim(a))) if np.ndim(a) else np.reshape(out, ())
    return out.astype(a.dtype, copy=False)


cdef object _norm_p(object p):
    if p is None or p == "fro":
        return 2.0
    if isinstance(p, str):
        raise RuntimeError(f"norm: p={p!r} is a matrix norm; use rg.linalg.matrix_norm / rg.linalg.norm "
                           "with a 2-tuple dim (supported here: p='fro' and numeric p)")
    return float(p)


cdef object k_norm(object a, object p, object dim, bint keepdim, object dtype):
    arr = _arr(a)
    if arr.dtype.kind not in "fc":
        raise RuntimeError(f"norm(): input dtype should be floating point or complex, got {arr.dtype}; "
                           "convert with .to(float) first")
    if dtype is not None:
        arr = arr.astype(dtype)
    pf = _norm_p(p)
    axis = _axis_of(arr, dim)
    x = np.abs(arr)
    if pf == 2.0:
        out = np.sqrt(np.sum(x * x, axis=axis, keepdims=keepdim))
    elif pf == 1.0:
        out = np.sum(x, axis=axis, keepdims=keepdim)
    elif (pf == np.inf or pf == -np.inf) and arr.size == 0 and (
            axis is None or _bi.any(arr.shape[d] == 0 for d in (axis if isinstance(axis, tuple) else (axis,)))):
        raise RuntimeError(f"linalg.vector_norm cannot compute the {p} norm on an empty dimension because "
                           "the operation does not have an identity")
    elif pf == np.inf:
        out = np.amax(x, axis=axis, keepdims=keepdim)
    elif pf == -np.inf:
        out = np.amin(x, axis=axis, keepdims=keepdim)
    elif pf == 0.0:
        out = np.sum(x != 0, axis=axis, keepdims=keepdim).astype(arr.dtype)
    else:
        with np.errstate(divide="ignore"):
            out = np.sum(x ** pf, axis=axis, keepdims=keepdim) ** (1.0 / pf)
    # the norm of a complex tensor is real (|z|'s dtype), as torch's
    return _arr(out).astype(x.dtype, copy=False)


cdef object k_cumsum(object a, object dim, object dtype):
    cdef int n = np.ndim(a)
    d = _wrap_dim(dim, n)
    arr = _arr(a)
    if dtype is None and arr.dtype.kind in "biu":
        dtype = np.int64                                   # torch promotes integer cumsum to int64
    if n == 0:
        return arr.astype(dtype if dtype is not None else arr.dtype, copy=True)
    return np.cumsum(a, axis=d, dtype=dtype)


cdef object k_cumprod(object a, object dim, object dtype):
    cdef int n = np.ndim(a)
    d = _wrap_dim(dim, n)
    arr = _arr(a)
    if dtype is None and arr.dtype.kind in "biu":
        dtype = np.int64
    if n == 0:
        return arr.astype(dtype if dtype is not None else arr.dtype, copy=True)
    return np.cumprod(a, axis=d, dtype=dtype)


cdef object _argext(object a, object dim, bint keepdim, object fn, str name):
    arr = _arr(k_real(a, name, True))
    if arr.size == 0:
        # torch's errors (IndexError both); empty non-reduced dims are fine
        if dim is None:
            raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
        if arr.ndim and arr.shape[_wrap_dim(dim, arr.ndim)] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {dim} to have non-zero size.")
    if dim is None:
        out = _arr(fn(arr.reshape(-1))).astype(np.int64)
        if keepdim:
            out = out.reshape((1,) * arr.ndim)
        return out
    d = _wrap_dim(dim, arr.ndim)
    if arr.ndim == 0:
        return np.zeros_like(arr, dtype=np.int64)
    return _arr(fn(arr, axis=d, keepdims=keepdim)).astype(np.int64, copy=False)


cdef object k_argmax(object a, object dim, bint keepdim):
    return _argext(a, dim, keepdim, np.argmax, "argmax")


cdef object k_argmin(object a, object dim, bint keepdim):
    return _argext(a, dim, keepdim, np.argmin, "argmin")


cdef object k_take_dim(object a, object indices, object dim, bint keepdim):
    # a's values at `indices` (kept-dim shape) along `dim`: max/min's values.
    arr = _arr(a)
    if arr.ndim == 0:
        return arr.copy()
    d = _wrap_dim(dim, arr.ndim)
    out = np.take_along_axis(arr, _device_index(indices, arr), axis=d)
    return out if keepdim else np.squeeze(out, axis=d)


cdef object k_take_dim_backward(object g, object indices, object dim, bint keepdim, object shape, object dtype):
    # zeros on g's device (np.zeros_like dispatches to CuPy for a cupy g)
    z = _xp(g).zeros(shape, dtype=dtype)
    if len(shape) == 0:
        z[...] = g
        return z
    d = _wrap_dim(dim, len(shape))
    gk = g if keepdim else np.expand_dims(g, d)
    np.put_along_axis(z, _device_index(indices, z), gk, axis=d)
    return z


cdef object k_mm(object a, object b):
    _matrix_operands("mm", a, b, "input", "mat2")
    if np.ndim(a) != 2:
        raise RuntimeError(f"self must be a matrix, got a {np.ndim(a)}-D tensor; use matmul for other shapes")
    if np.ndim(b) != 2:
        raise RuntimeError(f"mat2 must be a matrix, got a {np.ndim(b)}-D tensor; use matmul for other shapes")
    if np.shape(a)[1] != np.shape(b)[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({np.shape(a)[0]}x{np.shape(a)[1]} "
                           f"and {np.shape(b)[0]}x{np.shape(b)[1]})")
    return np.matmul(a, b)


cdef object k_bmm(object a, object b):
    _matrix_operands("bmm", a, b, "input", "mat2")
    if np.ndim(a) != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor, got {np.ndim(a)}-D; use matmul for other shapes")
    if np.ndim(b) != 3:
        raise RuntimeError(f"batch2 must be a 3D tensor, got {np.ndim(b)}-D; use matmul for other shapes")
    sa, sb = np.shape(a), np.shape(b)
    if sa[0] != sb[0] or sa[2] != sb[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{sa[0]}, {sa[2]}] "
                           f"but got: [{sb[0]}, {sb[1]}].")
    return np.matmul(a, b)


cdef object k_dot(object a, object b):
    _matrix_operands("dot", a, b, "input", "tensor")
    if np.ndim(a) != 1 or np.ndim(b) != 1:
        raise RuntimeError(f"1D tensors expected, but got {np.ndim(a)}D and {np.ndim(b)}D tensors")
    if np.shape(a)[0] != np.shape(b)[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{np.shape(a)[0]}] and src "
                           f"[{np.shape(b)[0]}] to have the same number of elements, but got "
                           f"{np.shape(a)[0]} and {np.shape(b)[0]} elements respectively")
    return np.dot(a, b)


cdef object k_outer(object a, object b):
    _matrix_operands("outer", a, b, "input", "vec2")
    if np.ndim(a) != 1 or np.ndim(b) != 1:
        raise RuntimeError(f"outer: expected 1D tensors, but got {np.ndim(a)}D and {np.ndim(b)}D tensors")
    if _is_cupy(a) or _is_cupy(b):      # CuPy has no ufunc.outer
        return np.multiply(a[:, None], b[None, :])
    return np.multiply.outer(a, b)


cdef object k_einsum(object a, object b, object equation):
    try:
        if "," in equation.split("->")[0]:
            return np.einsum(equation, a, b, optimize=True)
        return _arr(np.einsum(equation, a)).copy()        # a view for transposes: copy
    except ValueError as exc:
        raise RuntimeError(f"einsum(): {exc} (equation {equation!r})") from None


cdef object _check_square(object a, str name):
    if np.ndim(a) < 2:
        raise RuntimeError(f"linalg.{name}: The input tensor A must have at least 2 dimensions.")
    s = np.shape(a)
    if s[-1] != s[-2]:
        raise RuntimeError(f"linalg.{name}: A must be batches of square matrices, but they are "
                           f"{s[-2]} by {s[-1]} matrices")
    if _arr(a).dtype.kind not in "fc":
        raise RuntimeError(f"linalg.{name}: Expected a floating point or complex tensor as input. "
                           f"Got {_arr(a).dtype}")


import contextlib as _contextlib


cdef object _linalg_errors(object a):
    # CuPy's solvers return nan/inf for singular input unless asked to check
    # (a device sync); torch raises on CUDA too, so ask. NumPy always raises.
    if _is_cupy(a):
        import cupyx
        return cupyx.errstate(linalg="raise")
    return _contextlib.nullcontext()


cdef object k_inv(object a):
    _check_square(a, "inv")
    try:
        with _linalg_errors(a):
            return np.linalg.inv(a)
    except np.linalg.LinAlgError:
        raise LinAlgError("linalg.inv: The diagonal element of the LU factorization is zero: the matrix "
                          "is singular and has no inverse") from None


cdef object k_det(object a):
    _check_square(a, "det")
    return np.linalg.det(a)


cdef tuple k_slogdet(object a):
    # (sign, logabsdet); NumPy gives scalars for one matrix, CuPy 0-d arrays
    _check_square(a, "slogdet")
    sign, logabsdet = np.linalg.slogdet(a)
    return _arr(sign), _arr(logabsdet)


cdef bint _solve_vector_case(object a, object b):
    # torch.linalg.solve: B is a (batch of) vector(s) when B.ndim == 1 or
    # B.shape == A.shape[:-1] (B.ndim == A.ndim - 1).
    return np.ndim(b) == 1 or (np.ndim(b) == np.ndim(a) - 1 and tuple(np.shape(b)) == tuple(np.shape(a)[:-1]))


cdef object k_solve(object a, object b):
    _check_square(a, "solve")
    try:
        if _solve_vector_case(a, b):
            with _linalg_errors(a):
                return np.linalg.solve(a, _arr(b)[..., None])[..., 0]
        if np.ndim(b) < 2:
            raise RuntimeError("linalg.solve: B must have at least 1 dimension")
        if np.shape(b)[-2] != np.shape(a)[-1]:
            raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation AX = B "
                               f"({np.shape(a)[-2]}x{np.shape(a)[-1]} and {np.shape(b)[-2]}x{np.shape(b)[-1]})")
        if _is_cupy(a) and np.shape(a)[:-2] != np.shape(b)[:-2]:
            # CuPy's solve does not broadcast batch dims: give both the common batch
            batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
            a = _cupy.broadcast_to(a, batch + a.shape[-2:])
            b = _cupy.broadcast_to(b, batch + b.shape[-2:])
        with _linalg_errors(a):
            return np.linalg.solve(a, b)
    except np.linalg.LinAlgError:
        raise LinAlgError("linalg.solve: The solver failed because the input matrix is singular.") from None
    except ValueError as exc:
        raise RuntimeError(f"linalg.solve: {exc}") from None


cdef object k_cholesky(object a):
    _check_square(a, "cholesky")
    try:
        with _linalg_errors(a):
            return np.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        raise LinAlgError("linalg.cholesky: The factorization could not be completed because the input "
                          "is not positive-definite.") from None


# The reduced SVD (full_matrices=False), one LAPACK call: (U, S, Vh), or
# (empty, S, empty) without compute_uv (svdvals with nothing to
# differentiate), as torch's _linalg_svd.
cdef tuple k_linalg_svd(object a, bint compute_uv):
    cdef str name = "svd" if compute_uv else "svdvals"
    if np.ndim(a) < 2:
        raise RuntimeError(f"linalg.{name}: The input tensor A must have at least 2 dimensions.")
    try:
        if compute_uv:
            u, s, vh = np.linalg.svd(a, full_matrices=False)
            return u, s, vh
        s = np.linalg.svd(a, compute_uv=False)
    except np.linalg.LinAlgError:
        raise LinAlgError(f"linalg.{name}: The algorithm failed to converge because the input matrix "
                          "is ill-conditioned or has too many repeated singular values") from None
    empty = _xp(s).zeros((0,), dtype=_arr(a).dtype)
    return empty, s, empty.copy()


# max(dim) / min(dim): (values, indices), indices int64 as torch's. NaN is
# the extreme where there is one (argmax/argmin find the first NaN).
cdef tuple k_extreme_dim(object a, object dim, bint keepdim, bint is_max):
    arr = _arr(a)
    if arr.ndim == 0:
        _wrap_dim(dim, 0)
        return arr.copy(), _xp(arr).zeros((), dtype=np.int64)
    d = _wrap_dim(dim, arr.ndim)
    idx = (np.argmax if is_max else np.argmin)(arr, axis=d, keepdims=True).astype(np.int64)
    values = np.take_along_axis(arr, idx, axis=d)
    if not keepdim:
        return np.squeeze(values, axis=d), np.squeeze(idx, axis=d)
    return values, idx



# --- elementwise ops -------------------------------------------------------------

cdef inline object _float_type(object a):
    # the floating type a float op computes in: float inputs keep theirs,
    # integers and bools go to float64 (NumPy's rule for np.exp(int))
    return np.result_type(a, np.float16)


# c_n = 2^n / (1*3*...*(2n+1)): erf(x) = 2/sqrt(pi) exp(-x^2) x sum_n c_n x^(2n)
_ERF_SERIES = np.cumprod(np.concatenate([[1.0], 2.0 / (2.0 * np.arange(1, 80) + 1.0)]))


cdef object _erf_f64(object x):
    # erf in float64 without scipy, accurate to a few ulp:
    # |x| <= 3: erf(x) = 2/sqrt(pi) exp(-x^2) x sum_n c_n x^(2n), a series of
    #           positive terms (no cancellation, unlike Taylor's), by Horner's
    #           rule with in-place ufuncs (two passes a term);
    # 3 < |x| < 6: 1 - erfc(x), erfc by its continued fraction
    #           erfc(x) = exp(-x^2)/sqrt(pi) / (x + (1/2)/(x + 1/(x + (3/2)/(x + ...))));
    # |x| >= 6: +-1 (erfc(6) ~ 2e-17 is below float64's resolution of 1).
    ax = np.abs(x)
    if ax.size == 0:
        return ax
    amax = float(np.nanmax(ax)) if not np.isnan(ax).all() else 0.0
    if amax <= 3.0:
        out = _erf_series(ax, amax)
    else:
        out = np.ones_like(ax)
        small = ax <= 3.0
        if small.any():
            s = ax[small]
            out[small] = _erf_series(s, float(s.max()))
        mid = (ax > 3.0) & (ax < 6.0)
        if mid.any():
            m = ax[mid]
            t = m.copy()
            for k in range(60, 0, -1):
                t = m + (0.5 * k) / t
            out[mid] = 1.0 - np.exp(-m * m) / (1.7724538509055160 * t)
    out = np.where(np.isnan(ax), ax, out)
    return np.copysign(out, x)


cdef object _erf_series(object s, double smax):
    # terms until c_n smax^(2n) is negligible (the count measured to reach
    # full float64 accuracy at |x| = 3)
    cdef int n = min(int(2 * smax * smax + 30), 79)
    s2 = np.array(s * s, dtype=np.float64)     # an array (0-d arithmetic gives scalars)
    p = np.full(s2.shape, _ERF_SERIES[n])
    for k in range(n - 1, -1, -1):
        np.multiply(p, s2, out=p)
        np.add(p, _ERF_SERIES[k], out=p)
    np.negative(s2, out=s2)
    np.exp(s2, out=s2)
    p *= s2
    p *= s
    p *= 1.1283791670955126
    return p


cpdef object k_erf(object a):
    a = _arr(k_float(k_real(a, "erf")))
    ft = _float_type(a)
    if _cupy_ndarray is not None and type(a) is _cupy_ndarray:
        import cupyx.scipy.special
        return cupyx.scipy.special.erf(a.astype(ft, copy=False))
    return np.asarray(_erf_f64(a.astype(np.float64))).astype(ft, copy=False)


cdef object k_rsqrt(object a):
    return np.reciprocal(np.sqrt(k_float(a)))


cdef object k_reciprocal(object a):
    # np.reciprocal of an integer is integer division (1/2 == 0); torch's
    # reciprocal of an integer is a float, as 1 / a is.
    return np.reciprocal(k_float(a))


cdef object k_gelu(object a, object approximate):
    k_real_float(a, "gelu")
    if approximate == "none":
        return a * 0.5 * (1.0 + k_erf(a * 0.7071067811865476))
    if approximate == "tanh":
        inner = 0.7978845608028654 * (a + 0.044715 * (a * a * a))
        return 0.5 * a * (1.0 + np.tanh(inner))
    raise RuntimeError(f"approximate argument must be either none or tanh, got {approximate!r}")


cdef object k_silu(object a):
    r = _loop_sigmoid(a, 1)             # the same values, one ufunc call
    if r is not None:
        return r
    k_float_only(a, "silu")             # (complex: z * sigmoid(z), as torch)
    return a * k_sigmoid(a)


cdef object k_softplus(object a, object beta, object threshold):
    # torch's formula: x where x*beta > threshold, else log1p(exp(x*beta))/beta
    # (the minimum keeps exp from overflowing where the other branch is taken)
    # log1p(exp(xb)) is computed as logaddexp(0, xb), which never overflows
    # (one ufunc call instead of minimum, exp and log1p).
    r = _loop_softplus(a, beta, threshold)      # the same values in one pass
    if r is not None:
        return r
    k_real_float(a, "softplus")
    xb = a if beta == 1 else a * beta
    y = np.logaddexp(0, xb)
    if beta != 1:
        y = y / beta
    y = np.where(xb > threshold, a, y)
    if type(a) is ndarray and _cnp.PyArray_DESCR(<_cnp.ndarray>a) == _cnp.PyArray_DESCR(<_cnp.ndarray>y):
        return y
    return y.astype(_float_type(xb), copy=False)


cdef object k_clamp(object a, object lo, object hi):
    if lo is None and hi is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    k_real(a, "clamp")
    if lo is not None:
        k_real(lo, "clamp")
    if hi is not None:
        k_real(hi, "clamp")
    # torch's order: min(max(x, lo), hi), so lo > hi gives hi everywhere
    out = a if lo is None else np.maximum(a, lo)
    return out if hi is None else np.minimum(out, hi)


cdef object k_lerp(object a, object end, object weight):
    if _kind_of(a) == 105 and hasattr(end, "dtype") and _dtype_of(end) != _dtype_of(a):
        # torch checks that start and end agree before it looks for a kernel
        raise DtypeRuntimeError(f"lerp(): expected dtype {_dtype_of(a)} for `end` but got dtype "
                                f"{_dtype_of(end)}; convert both to one floating point dtype first")
    k_float_only(a, "lerp")
    # torch's formula: exact at weight 0 and weight 1
    d = np.subtract(end, a)
    return np.where(np.abs(weight) < 0.5, a + weight * d, end - d * (1 - weight))


cdef object k_fill(object a, object value):
    v = value if _is_cupy(value) else np.asarray(value)
    if v.ndim != 0:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                           f"{v.ndim} dimensions.")
    out = np.empty_like(a)
    out[...] = v
    return out
