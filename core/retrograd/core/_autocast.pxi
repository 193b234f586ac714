# Autocast: the thread-local state and the casts of a listed op's arguments
# (Note [Autocast] in _autocast_policy.py). Part of _ops.pyx.
#
# rg_tls_autocast holds one bit per device type whose autocast is on
# (AC_CPU, AC_CUDA); it is 0 outside every region, and that is all a listed
# op reads then. The region's dtype per device type is a code (AC_FLOAT16,
# AC_BFLOAT16). Like grad mode, the state is per thread and a new thread
# starts with autocast off (torch's).

cdef extern from *:
    """
    static __thread int rg_tls_autocast = 0;
    static __thread int rg_tls_autocast_cpu_dtype = 2;
    static __thread int rg_tls_autocast_cuda_dtype = 1;
    static __thread int rg_tls_autocast_cache = 1;
    static __thread int rg_tls_autocast_nesting = 0;
    """
    int rg_tls_autocast
    int rg_tls_autocast_cpu_dtype
    int rg_tls_autocast_cuda_dtype
    int rg_tls_autocast_cache
    int rg_tls_autocast_nesting

cdef enum:
    AC_CPU = 1
    AC_CUDA = 2
    AC_FLOAT16 = 1
    AC_BFLOAT16 = 2
    # the policies (_autocast_policy.py's codes)
    AC_LOWER = 1
    AC_FP32 = 2
    AC_BANNED = 3

cdef object _AC_F16 = np.dtype(np.float16)
cdef object _AC_F32 = np.dtype(np.float32)
cdef object _AC_F64 = np.dtype(np.float64)
cdef object _ac_bf16 = None


cdef int _ac_device_bit(str device_type) except -1:
    if device_type == "cpu":
        return AC_CPU
    if device_type == "cuda":
        return AC_CUDA
    raise RuntimeError(f"autocast: device type {device_type!r} is not one retrograd runs on; use 'cpu' or 'cuda'")


cdef object _ac_dtype(int code):
    global _ac_bf16
    if code == AC_FLOAT16:
        return _AC_F16
    if _ac_bf16 is None:
        from retrograd.core._dtypes import _bfloat16
        _ac_bf16 = _bfloat16()          # (AttributeError saying to install ml_dtypes)
    return _ac_bf16


cdef int _ac_code(object dtype) except -1:
    dt = np.dtype(dtype)
    if dt == _AC_F16:
        return AC_FLOAT16
    if dt.name == "bfloat16":
        return AC_BFLOAT16
    raise ValueError(f"autocast: {dt} is not a lower-precision dtype (float16 or bfloat16)")


def _autocast_state(str device_type):
    """(enabled, dtype, cache_enabled) of this thread's autocast for ``device_type``."""
    cdef int bit = _ac_device_bit(device_type)
    cdef int code = rg_tls_autocast_cpu_dtype if bit == AC_CPU else rg_tls_autocast_cuda_dtype
    try:
        dt = _ac_dtype(code)
    except AttributeError:
        dt = None                       # bfloat16 without ml_dtypes: only the name is known
    return (bool(rg_tls_autocast & bit), dt, bool(rg_tls_autocast_cache))


def _set_autocast_enabled(str device_type, bint enabled):
    """Turn this thread's autocast for ``device_type`` on or off; returns whether it was on."""
    global rg_tls_autocast
    cdef int bit = _ac_device_bit(device_type)
    prev = bool(rg_tls_autocast & bit)
    if enabled:
        _ac_dtype(rg_tls_autocast_cpu_dtype if bit == AC_CPU else rg_tls_autocast_cuda_dtype)
        rg_tls_autocast |= bit
    else:
        rg_tls_autocast &= ~bit
    return prev


def _set_autocast_dtype(str device_type, dtype):
    """Set the lower-precision dtype of this thread's autocast for ``device_type``; returns the previous one."""
    global rg_tls_autocast_cpu_dtype, rg_tls_autocast_cuda_dtype
    cdef int bit = _ac_device_bit(device_type)
    cdef int code = _ac_code(dtype)
    if code == AC_BFLOAT16:
        _ac_dtype(code)                 # refuse early where ml_dtypes is missing
    cdef int prev
    if bit == AC_CPU:
        prev = rg_tls_autocast_cpu_dtype
        rg_tls_autocast_cpu_dtype = code
    else:
        prev = rg_tls_autocast_cuda_dtype
        rg_tls_autocast_cuda_dtype = code
    try:
        return _ac_dtype(prev)
    except AttributeError:
        return None


def _set_autocast_cache_enabled(bint enabled):
    """Record torch's cache switch (retrograd keeps no cast cache; see Note [Autocast]); returns the old value."""
    global rg_tls_autocast_cache
    prev = bool(rg_tls_autocast_cache)
    rg_tls_autocast_cache = enabled
    return prev


def _autocast_nesting(int delta):
    """Add ``delta`` to this thread's count of open autocast regions; returns the new count."""
    global rg_tls_autocast_nesting
    rg_tls_autocast_nesting += delta
    return rg_tls_autocast_nesting


cdef inline bint _ac_castable(object dt):
    # torch's is_eligible: a floating tensor that is not float64
    return (dt.kind == "f" and dt != _AC_F64) or dt.name == "bfloat16"


cdef object _ac_cast_one(object a, object target):
    # One argument of a listed op, cast to the op's compute dtype. bfloat16
    # has no NumPy kernels of its own (ml_dtypes' matmul answers in float32,
    # its einsum refuses it), so a bfloat16 op computes in float32 on values
    # rounded to bfloat16 and its result is rounded back (_ac_finish): what
    # torch's CPU kernels do, which accumulate bfloat16 products in float32.
    cdef Tensor t
    if isinstance(a, Tensor):
        t = <Tensor>a
        dt = t._array.dtype
        if not _ac_castable(dt):
            return a
        if target.name == "bfloat16":
            if dt != target:
                t = _op__to_dtype(t, target)
            return _op__to_dtype(t, _AC_F32)
        if dt != target:
            return _op__to_dtype(t, target)
        return a
    if type(a) is list or type(a) is tuple:
        # a list of tensors (linalg.multi_dot's): each is cast
        return type(a)([_ac_cast_one(x, target) for x in a])
    return a


cdef object _ac_finish(object out, object target):
    # A bfloat16 op's float32 results, rounded to bfloat16 (see _ac_cast_one)
    cdef Tensor t
    if target.name != "bfloat16":
        return out
    if isinstance(out, Tensor):
        t = <Tensor>out
        if t._array.dtype == _AC_F32:
            return _op__to_dtype(t, target)
        return out
    if isinstance(out, tuple):
        return type(out)(*[_ac_finish(o, target) for o in out]) if hasattr(out, "_fields") \
            else tuple([_ac_finish(o, target) for o in out])
    return out


cdef object _autocast_run(object fn, tuple args, dict kwargs, object target):
    # fn on the cast arguments with autocast off (torch's autocast kernels
    # redispatch below themselves: a composite's inner ops are not cast again)
    global rg_tls_autocast
    args = tuple([_ac_cast_one(a, target) for a in args])
    if kwargs:
        kwargs = {k: _ac_cast_one(v, target) for k, v in kwargs.items()}
    cdef int prev = rg_tls_autocast
    rg_tls_autocast = 0
    try:
        out = fn(*args, **kwargs) if kwargs else fn(*args)
    finally:
        rg_tls_autocast = prev
    return _ac_finish(out, target)


cdef object _ac_target(int cpu_policy, int cuda_policy, tuple args, str name):
    # The dtype this op's arguments are cast to, or None: the device type is
    # the first tensor's (torch's), its policy and whether its autocast is on.
    cdef int policy = 0, bit = 0
    for a in args:
        if type(a) is list or type(a) is tuple:
            a = a[0] if len(a) else None
        if isinstance(a, Tensor):
            if (<Tensor>a)._device.type == RG_DEV_CUDA:
                policy, bit = cuda_policy, AC_CUDA
            else:
                policy, bit = cpu_policy, AC_CPU
            break
    if policy == 0 or not (rg_tls_autocast & bit):
        return None
    if policy == AC_BANNED:
        raise RuntimeError(
            f"{name} is unsafe to autocast: under CUDA autocast its inputs (probabilities from a sigmoid) "
            f"may round to 1 in float16. Use binary_cross_entropy_with_logits (nn.BCEWithLogitsLoss), which "
            f"is safe to autocast, or compute {name} outside the autocast region (its inputs cast to float32)")
    if policy == AC_FP32:
        return _AC_F32
    return _ac_dtype(rg_tls_autocast_cpu_dtype if bit == AC_CPU else rg_tls_autocast_cuda_dtype)


cdef object _ac_policies = None


cdef tuple _autocast_policy(str name):
    # (CPU, CUDA) policy codes of a composite, read when composite_op wraps it
    global _ac_policies
    if _ac_policies is None:
        from retrograd.core._autocast_policy import policy
        _ac_policies = policy
    return _ac_policies(name)
