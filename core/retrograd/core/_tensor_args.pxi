# Helpers of the Tensor class and of ops' argument parsing (dims, ints,
# bools, foreign tensors, index unwrapping). Part of _ops.pyx.

from retrograd.core._arg_checks cimport _type_name
from retrograd.core._array_module cimport _ensure_array
import builtins as _builtins
import copy as _copy_mod


# _rg_wrap and _rg_wrap_with_grad_fn of abi.pxd: new tensors around arrays
# (leaves, and outputs of a node)
cdef Tensor _rg_wrap(object array, Device device):
    cdef Tensor t = Tensor.__new__(Tensor)
    t._array = array
    t._device = device
    t._version_counter = _new_vc()
    t._is_inference = rg_tls_inference_mode
    if _trace_slot != NULL:
        _trace_slot(RG_TRACE_NEW, "", (), (t,), None)      # (abi.pxd, ABI 1.6)
    return t


cdef Tensor _rg_wrap_with_grad_fn(object array, Device device, Node grad_fn, int output_nr):
    cdef Tensor t = Tensor.__new__(Tensor)
    t._array = array
    t._device = device
    t._version_counter = _new_vc()
    t._grad_fn = grad_fn
    t._output_nr = output_nr
    return t


cdef Tensor _detach_as(Tensor self, type cls):
    # Tensor.detach() (cls Tensor) and torch's _make_subclass: a new leaf of
    # class cls sharing self's array and version counter. Not a view (torch:
    # detach()._base is None): saved tensors still see in-place changes made
    # through it, but in-place on the detach of a leaf is allowed
    # (p.detach().mul_(2)).
    cdef Tensor t = Tensor.__new__(cls)
    t._array = self._array
    t._device = self._device
    t._version_counter = self._version_counter
    t._is_inference = self._is_inference
    return t


cdef Tensor _make_subclass(object cls, object data, bint require_grad):
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError(f"_make_subclass(): cls must be a subclass of Tensor, not {cls!r}")
    if not isinstance(data, Tensor):
        raise TypeError(f"_make_subclass(): argument 'data' must be a Tensor, not {_type_name(data)}")
    cdef Tensor t = _detach_as(<Tensor>data, <type>cls)
    if require_grad:
        t._set_requires_grad(True)     # float or complex dtypes only (torch's error)
    return t


cdef object _op_add2(object a, object b):
    return _op_add(a, b, 1)


cdef object _op_sub2(object a, object b):
    return _op_sub(a, b, 1)


cdef tuple _shape_args(tuple args):
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(args[0])
    return args


cdef bint _any_needs_grad(object args, object kwargs):
    for a in args:
        if isinstance(a, Tensor) and (<Tensor>a).needs_grad():
            return True
        if isinstance(a, (list, tuple)):
            for b in a:
                if isinstance(b, Tensor) and (<Tensor>b).needs_grad():
                    return True
    for a in kwargs.values():
        if isinstance(a, Tensor) and (<Tensor>a).needs_grad():
            return True
    return False


cdef object _arrays_of(object x):
    # Tensors (also inside lists, tuples and dicts) replaced by their arrays.
    if isinstance(x, Tensor):
        return (<Tensor>x)._array
    if type(x) is tuple or type(x) is list:
        return type(x)(_arrays_of(i) for i in x)
    if type(x) is dict:
        return {k: _arrays_of(v) for k, v in (<dict>x).items()}
    return x


def _rebuild_tensor(array, device, requires_grad):
    t = _rg_wrap(array, _parse_device(device))
    t.requires_grad = requires_grad
    return t


cdef object _deepcopy_array(object arr, dict memo):
    # The array of a deep-copied tensor. Views of one NumPy base (one torch
    # storage) are rebuilt on ONE copy of that base, kept in deepcopy's memo
    # under the base's id, so deepcopy((base, view)) keeps them sharing memory.
    if type(arr) is not ndarray or arr.size == 0:
        return _copy_mod.deepcopy(arr, memo)
    root = arr
    while isinstance(root.base, ndarray):
        root = root.base
    if root is arr or root.base is not None or not (root.flags.c_contiguous or root.flags.f_contiguous):
        new = memo.get(id(arr))
        if new is None:
            new = arr.copy(order="K")
            memo[id(arr)] = new
            memo.setdefault(id(memo), []).append(arr)      # deepcopy's keep-alive list
        return new
    new_root = memo.get(id(root))
    if new_root is None:
        new_root = root.copy(order="K")
        memo[id(root)] = new_root
        memo.setdefault(id(memo), []).append(root)
    offset = arr.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    try:
        out = np.ndarray(arr.shape, arr.dtype, buffer=new_root.ravel(order="K").view(np.uint8),
                         offset=offset, strides=arr.strides)
    except (ValueError, TypeError):
        return arr.copy()
    if not arr.flags.writeable:
        out.flags.writeable = False
    return out


cdef object _convert_dtype(Tensor t, object dt):
    if t._array.dtype == dt:
        return t
    if dt.kind != "c" and not _is_floating_dtype(dt):
        # torch: integer and bool results are not differentiable (no graph)
        return _rg_wrap(t._array.astype(dt), t._device)
    return _op__to_dtype(t, dt)


cdef bint _is_device_string(str s):
    return s.strip().partition(":")[0] in ("cpu", "cuda")


cdef bint _is_dtype_name(str s):
    try:
        np.dtype(s)
    except TypeError:
        return False
    return True


cpdef object _dtype_arg(object dtype, str fn):
    """``dtype`` (a NumPy dtype, a scalar type such as np.float32 or float,
    rg.float32, or a name such as "float32") as a NumPy dtype; TypeError for
    what is not a numeric dtype, and for a torch dtype (libraries mixed)."""
    if type(dtype).__module__ == "torch" and type(dtype).__name__ == "dtype":
        raise TypeError(f"{fn}(): got {dtype}, a torch dtype: the libraries were mixed. Pass a "
                        f"retrograd/NumPy dtype such as rg.{str(dtype).rpartition('.')[2]}")
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{fn}(): argument 'dtype' must be a dtype such as rg.float32, np.float32 or "
                        f"'float32', not {_type_name(dtype)} {dtype!r}") from None
    if dt.kind in "OUSVMm" and not _is_bf16_dtype(dt):
        raise TypeError(f"{fn}(): dtype {dt} is not a numeric dtype; pass rg.float32, rg.int64, rg.bool, ...")
    return dt


cdef object _foreign_tensor_error(object x, str where):
    # A torch.Tensor (or another library's tensor) passed to a retrograd op:
    # np.asarray would silently copy it out of its own graph.
    return TypeError(f"{where} must be a retrograd Tensor, not {_type_name(x)}: the libraries were mixed "
                     "(a torch tensor in a retrograd op). Convert it with rg.from_numpy(t.detach().numpy()), "
                     "or keep the computation in one library")


cdef inline bint _is_foreign_tensor(object x):
    return type(x).__name__ == "Tensor" and (type(x).__module__ or "").split(".")[0] == "torch"


# Note [Non-Tensor arguments]: what a Tensor parameter takes besides a Tensor.
# NumPy arrays (and CuPy arrays) are taken as they are: a user's data stays an
# ndarray. Everything else follows torch's argument parser, whose TypeError a
# PyTorch program expects: a list or tuple is refused wherever a Tensor is
# wanted ("argument 'other' must be Tensor, not list"), and a Python or NumPy
# number is refused as an op's input (its first Tensor parameter, and as an
# element of a tensor list) but taken elsewhere, as torch's Scalar overloads
# take it (x + 2, rg.add(2, x), rg.pow(2, x), rg.where(c, x, 0.0)). Converting
# a list and failing later on its shape gave a RuntimeError where torch's
# TypeError names the real mistake. Used by the generated ops (_arg_array and
# the public functions' first parameter), the composites (_as_tensor_arg) and,
# through extending.tensor_arg, by rg.nn.functional.
cdef void _refuse_non_tensor(object x, str where, bint is_input) except *:
    cdef type t = type(x)
    if t is list or t is tuple:
        raise TypeError(f"{where} must be Tensor, not {_type_name(x)}; make one with rg.tensor(...) "
                        "(or pass a NumPy array)")
    if is_input and (t is float or t is int or t is bool or t is complex or isinstance(x, np.generic)):
        raise TypeError(f"{where} must be Tensor, not {_type_name(x)}; make one with rg.tensor(...)")


cdef object _checked_asarray(object x, str where):
    # A non-Tensor given for a Tensor argument: numbers, sequences of numbers
    # and arrays are taken as arrays (NumPy's semantics); None, strings and
    # other objects raise TypeError as torch does, not an object array whose
    # failure surfaces later as a NumPy ufunc message.
    if x is None or isinstance(x, (str, bytes)) or _is_foreign_tensor(x):
        if _is_foreign_tensor(x):
            raise _foreign_tensor_error(x, where)
        raise TypeError(f"{where} must be Tensor, not {_type_name(x)}")
    a = np.asarray(x)
    if a.dtype.kind in "OUSVMm" and not _is_bf16_dtype(a.dtype):
        if a.dtype.kind == "O" and _builtins.any(_is_foreign_tensor(i) for i in a.reshape(-1)):
            raise _foreign_tensor_error(next(i for i in a.reshape(-1) if _is_foreign_tensor(i)), where)
        raise TypeError(f"{where} must be Tensor, or numbers or an array of numbers, not {_type_name(x)}"
                        + (f" of dtype {a.dtype}" if a.dtype.kind != "O" else ""))
    return a


def _to_args(tuple args, device, dtype, non_blocking, copy):
    """Tensor.to's arguments parsed as torch parses them: (device, dtype, copy)."""
    pos = list(args)
    if pos and isinstance(pos[0], Tensor):
        if device is not None or dtype is not None:
            raise TypeError("to(): pass either a tensor or device=/dtype=, not both")
        other = <Tensor>pos.pop(0)
        device, dtype = other._device, other._array.dtype
    else:
        if pos and (pos[0] is None or isinstance(pos[0], Device) or
                    (isinstance(pos[0], str) and _is_device_string(pos[0]))):
            if device is not None:
                raise TypeError("to(): got the device both positionally and as device=")
            device = pos.pop(0)
        if pos and not isinstance(pos[0], bool) and pos[0] is not None:
            if dtype is not None:
                raise TypeError("to(): got the dtype both positionally and as dtype=")
            dtype = pos.pop(0)
            if isinstance(dtype, str) and not _is_dtype_name(dtype):
                raise RuntimeError(f"Invalid device string: {dtype!r} (to() takes a device such as "
                                   "'cpu', 'cpu:1' or 'cuda:0', and/or a dtype such as rg.float32 "
                                   "or 'float32')")
    if pos:
        non_blocking = pos.pop(0)
    if pos:
        copy = pos.pop(0)
    if not isinstance(non_blocking, bool) or not isinstance(copy, bool):
        raise TypeError(f"to() takes a device and/or a dtype (or a tensor), then non_blocking and copy "
                        f"(bools); got {args!r}")
    if pos:
        raise TypeError(f"to() takes a device and/or dtype (or a tensor), then non_blocking and "
                        f"copy; got {len(args)} positional arguments")
    return device, dtype, copy


cdef object _index_array(object x, str where):
    # An index or mask argument that is not a Tensor: an array as it is; a
    # number, list or tuple is torch's TypeError (Note [Non-Tensor arguments])
    _refuse_non_tensor(x, where, True)
    return _checked_asarray(x, where)


def _check_tensor_arg(x, str where, bint is_input=True):
    """Raise TypeError, naming ``where`` (e.g. "mse_loss(): argument
    'target'"), where torch's argument parser refuses ``x`` for a Tensor
    parameter and retrograd does too (Note [Non-Tensor arguments])."""
    if isinstance(x, Tensor):
        return
    if x is None or isinstance(x, (str, bytes)) or _is_foreign_tensor(x):
        _checked_asarray(x, where)
    _refuse_non_tensor(x, where, is_input)


cdef Tensor _as_tensor_arg(object x, str where="argument 'input'"):
    if isinstance(x, Tensor):
        return <Tensor>x
    _refuse_non_tensor(x, where, where.endswith("'input'") or where.endswith("'self'"))
    return _rg_wrap(_ensure_array(_checked_asarray(x, where)), _CPU)


cdef class _RetainsGradHook:
    # Holds the tensor weakly: the hook lives on the tensor's grad_fn, which
    # the tensor references, so a strong reference would be a cycle.
    cdef object tensor_ref

    def __call__(self, grad):
        cdef Tensor t = self.tensor_ref()
        if t is None:
            return None
        if isinstance(grad, Tensor):
            g = <Tensor>grad
            if t._grad is None:
                t._grad = _rg_wrap(g._array.copy(), t._device) if g._grad_fn is None else _op_clone(g)
            else:
                t._grad = _op_add2(t._grad, g) if (g._grad_fn is not None or (<Tensor>t._grad)._grad_fn is not None) \
                    else _rg_wrap((<Tensor>t._grad)._array + g._array, t._device)
        return None


cdef object _install_retains_grad_hook(Tensor t):
    cdef _RetainsGradHook h = _RetainsGradHook.__new__(_RetainsGradHook)
    h.tensor_ref = _weakref.ref(t)
    fn = t._grad_fn
    cdef NodeExtras ex = (<Node>fn).extras()
    if ex.retains_grad_hooks is None:
        ex.retains_grad_hooks = {}
    ex.retains_grad_hooks[t._output_nr] = h


# Tensor.type(): torch's legacy type names, by dtype
_TYPE_NAMES = {
    np.dtype(np.float32): "FloatTensor", np.dtype(np.float64): "DoubleTensor",
    np.dtype(np.float16): "HalfTensor", np.dtype(np.int64): "LongTensor", np.dtype(np.int32): "IntTensor",
    np.dtype(np.int16): "ShortTensor", np.dtype(np.int8): "CharTensor", np.dtype(np.uint8): "ByteTensor",
    np.dtype(np.bool_): "BoolTensor", np.dtype(np.complex64): "ComplexFloatTensor",
    np.dtype(np.complex128): "ComplexDoubleTensor",
}


def _tensor_type(Tensor self, dtype):
    cuda = self._device.type_name == "cuda"
    if dtype is None:
        name = _TYPE_NAMES.get(self._array.dtype, f"{self._array.dtype}Tensor")
        return ("torch.cuda." if cuda else "torch.") + name
    if isinstance(dtype, str):
        # 'torch.DoubleTensor', 'torch.cuda.FloatTensor' (any package prefix)
        parts = dtype.split(".")
        by_name = {v: k for k, v in _TYPE_NAMES.items()}
        if parts[-1] not in by_name:
            raise ValueError(f"invalid type: '{dtype}'; give a dtype or a name such as 'torch.FloatTensor'")
        out = self.to(dtype=by_name[parts[-1]])
        want_cuda = len(parts) > 2 and parts[-2] == "cuda"
        if want_cuda != cuda:
            out = out.to("cuda" if want_cuda else "cpu")
        return out
    return self.to(dtype=dtype)


# Tensor's new_* methods: a factory with this tensor's dtype and device as defaults
def _new_like(Tensor self, str kind, tuple args, dtype, device, requires_grad):
    from retrograd.core import _creation
    dtype = self._array.dtype if dtype is None else dtype
    device = self._device if device is None else device
    if kind == "tensor":
        return _creation.tensor(args[0], dtype=dtype, device=device, requires_grad=requires_grad)
    if kind == "full":
        return _creation.full(args[0], args[1], dtype=dtype, device=device, requires_grad=requires_grad)
    return getattr(_creation, kind)(*args, dtype=dtype, device=device, requires_grad=requires_grad)


def _strides(Tensor self, dim):
    # torch's strides count elements (NumPy's count bytes)
    item = self._array.itemsize
    steps = tuple(s // item for s in self._array.strides)
    return steps if dim is None else steps[_wrap_dim(dim, self._array.ndim)]


cdef object _address(object a):
    return a.__array_interface__["data"][0] if type(a) is ndarray else a.data.ptr


def _data_ptr(Tensor self):
    return _address(self._array) if self._array.size else 0


def _storage_offset(Tensor self):
    # elements from the start of the memory the view shares to its first one
    a = self._array
    root = a
    while getattr(root, "base", None) is not None and type(root.base) is type(a):
        root = root.base
    if not a.size:
        return 0
    return (_address(a) - _address(root)) // a.itemsize


def _inplace_random(Tensor self, str kind, a, b, generator):
    from retrograd.core._pointwise import _draws
    return _inplace_call(self, lambda s, x, y: _draws(s, kind, x, y, generator), (a, b), kind + "_")


def _map_values(Tensor self, fn, *others):
    # apply_/map_/map2_: fn called element by element in Python (CPU only, as torch), others broadcast to
    # self's shape; the result has no history
    if self._device.type_name != "cpu":
        raise RuntimeError("apply_, map_ and map2_ work on CPU tensors only (as torch)")
    arrays = [np.broadcast_to((<Tensor>_as_tensor_arg(o))._array, self._array.shape) for o in others]
    out = np.empty(self._array.shape, dtype=self._array.dtype)
    flat_out = out.reshape(-1)
    flat_in = [self._array.reshape(-1)] + [a.reshape(-1) for a in arrays]
    for i in range(flat_out.size):
        flat_out[i] = fn(*[a[i].item() for a in flat_in])
    from retrograd.core import _creation
    return _creation._make(out, self._device, False)
