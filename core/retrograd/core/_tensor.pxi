# Tensor: an ndarray (or cupy array) plus its autograd metadata. Part of abi.pyx,
# through gen_ops.py, which copies this file into the build directory with the
# op methods of derivatives.yaml inserted at the @@GENERATED_METHODS@@ line
# (see there for where to read them).
#
# A Tensor never copies the array it wraps. Operator and op methods are
# generated from derivatives.yaml; the autograd API lives here.

from retrograd.core._arg_checks cimport _wrap_dim
from retrograd.core._dtype_rules cimport k_default_complex, k_default_float, _is_floating_dtype
from retrograd.core._array_module cimport _cupy_ndarray
from retrograd.core._ops cimport (
    _rg_inference_mode, _parse_device, _make_accumulate_grad, _note_detached,
    _install_retains_grad_hook, _detach_as, _make_subclass, _any_needs_grad, _arrays_of, _as_tensor_arg,
    _convert_dtype, _deepcopy_array, _op_add2, _op_sub2, _shape_args,
    _dtype_arg, _inplace_binary, _inplace_call, _tensor_setitem, _current_grad_fn, _array_ufunc,
    _new_vc, _new_edge, _needs, _op_mul, _op_div, _op_pow, _op_reshape, _op_view, _op_transpose,
    _op_permute, _op_expand, _op_broadcast_to, _op_clone, _op__to_device,
)

# the shape composites (Python-level functions of _ops) that methods below call
from retrograd.core._ops import (  # no-cython-lint
    _copy_value, _rebuild_tensor, chunk, flatten, flip, index_select, masked_fill, movedim, narrow, repeat,
    roll, select, split, squeeze, take_along_dim, tile, tril, triu, unbind, unflatten, unsqueeze,
)
from retrograd.core._ops import _tensor_backward, _to_args, _tensor_type  # no-cython-lint
from retrograd.core._ops import _new_like, _strides, _storage_offset, _data_ptr, _inplace_random, _map_values  # no-cython-lint
from cpython.object cimport PyTypeObject
from cpython.type cimport PyType_Modified
import builtins as _builtins
import copy as _copy_mod
import operator as _operator
import sys as _sys

@cython.freelist(32)
@cython.final
cdef class VersionCounter:
    """The in-place version shared by a tensor, its views and detach()es.

    Every in-place op bumps it; a :class:`SavedVariable` remembers it at
    save time. ``Tensor._version`` reads it.

    Examples
    --------
    >>> import retrograd as rg
    >>> x = rg.zeros(2)
    >>> x._version
    0
    >>> _ = x.add_(1)
    >>> x._version, x.detach()._version
    (1, 1)
    """

    def __repr__(self):
        return f"VersionCounter({self.version})"


cdef inline bint _is_float_dtype(object dtype):
    # (bfloat16, ml_dtypes' dtype, is kind 'V' to NumPy)
    return dtype.kind == 'c' or _is_floating_dtype(dtype)


# the dtypes of the conversion methods (.float(), .double(), ...)
_F16 = np.dtype(np.float16)
_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_C64 = np.dtype(np.complex64)
_C128 = np.dtype(np.complex128)
_I8 = np.dtype(np.int8)
_U8 = np.dtype(np.uint8)
_I16 = np.dtype(np.int16)
_I32 = np.dtype(np.int32)
_I64 = np.dtype(np.int64)
_BOOL = np.dtype(np.bool_)


# What explains a Tensor attribute that retrograd deliberately lacks: a
# callable(name) that raises AttributeError saying why and what to use
# instead, or returns for a name it does not know. The umbrella package
# registers it (core never imports the umbrella); only a failed lookup
# reaches it, so attribute access itself pays nothing.
cdef object _missing_attribute_hook = None


def _register_missing_attribute_hook(hook):
    """Set (or, with None, clear) the explanation of missing Tensor attributes."""
    global _missing_attribute_hook
    if hook is not None and not callable(hook):
        raise TypeError(f"the missing-attribute hook must be callable or None, not {type(hook).__name__}")
    _missing_attribute_hook = hook


# The composites of the _numpy_like*.py modules behind Tensor's
# methods of the same names (deg2rad, kron, index_add, ...): imported on
# first use, as those modules import abi themselves.
cdef dict _numpy_like_fns = {}


def _numpy_like_fn(str name):
    fn = _numpy_like_fns.get(name)
    if fn is None:
        from retrograd.core import _numpy_like, _numpy_like_shape
        from retrograd.core import _numpy_like_linalg, _numpy_like_misc, _numpy_like_index, _numpy_like_select
        for mod in (_numpy_like, _numpy_like_shape, _numpy_like_linalg, _numpy_like_misc, _numpy_like_index,
                    _numpy_like_select):
            fn = getattr(mod, name, None)
            if fn is not None:
                break
        _numpy_like_fns[name] = fn
    return fn


@cython.trashcan(True)
cdef class Tensor:

    def __init__(self, data=None, *, dtype=None, device=None, bint requires_grad=False):
        arr = np.asarray([] if data is None else data, dtype=dtype)
        if dtype is None and (data is None or type(data) in (list, tuple, int, float, bool)) and arr.dtype.kind in "biuf":
            # torch.Tensor(...) of Python data is of the default dtype (Note [Default dtype])
            arr = arr.astype(k_default_float())
        self._array = arr
        self._device = _parse_device(device)
        self._version_counter = _new_vc()
        self._is_inference = _rg_inference_mode()
        if requires_grad:
            self.requires_grad = True
        _trace_new(self)

    # -- internals used across core -------------------------------------
    cdef bint needs_grad(self):
        return _needs(self)

    cdef Edge gradient_edge(self):
        cdef Edge e
        if self._base is not None and self._version_counter.version != self._view_version:
            _current_grad_fn(self)
        if self._grad_fn is not None:
            e = self._edge_cache
            if e is None:
                e = _new_edge(self._grad_fn, self._output_nr)
                self._edge_cache = e
            return e
        if self._requires_grad:
            return _new_edge(self.grad_accumulator(), 0)
        return None

    cdef Node grad_accumulator(self):
        cdef object acc
        if self._grad_fn is not None:
            raise RuntimeError("grad_accumulator() should only be called on leaf tensors")
        if not self._requires_grad:
            return None
        if self._grad_accumulator is not None:
            acc = self._grad_accumulator()
            if acc is not None:
                return <Node>acc
        acc = _make_accumulate_grad(self)
        self._grad_accumulator = _new_weakref(acc)
        return <Node>acc

    # -- array side -------------------------------------------------------
    @property
    def shape(self):
        return self._array.shape

    @property
    def dtype(self):
        return self._array.dtype

    @property
    def ndim(self):
        return self._array.ndim

    @property
    def device(self):
        return self._device

    @property
    def is_cuda(self):
        return self._device.type == RG_DEV_CUDA

    @property
    def data(self):
        return rg_wrap(self._array, self._device)

    @data.setter
    def data(self, value):
        cdef Tensor other
        # torch's rules (VariableMethods' set_data): only a tensor may stand in,
        # and a tensor that requires grad keeps a dtype that can carry one.
        if not isinstance(value, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
        other = <Tensor>value
        if self._requires_grad and not _is_float_dtype(other._array.dtype):
            raise RuntimeError(
                f"data set to a tensor that requires gradients must be floating point or complex dtype, "
                f"got {other._array.dtype}; call requires_grad_(False) first or assign a floating point tensor")
        self._array = other._array
        self._device = other._device

    def numel(self):
        return int(self._array.size)

    def dim(self):
        return self._array.ndim

    def size(self, dim=None):
        if dim is None:
            return self._array.shape
        return self._array.shape[_wrap_dim(dim, self._array.ndim)]

    def __len__(self):
        if self._array.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._array.shape[0]

    def item(self):
        _trace_break("item", self)
        if self._array.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._array.size} elements cannot be converted to a Python scalar; "
                "item() needs exactly one element")
        return self._array.item()

    def tolist(self):
        _trace_break("tolist", self)
        return self._array.tolist()

    def numpy(self, *, force=False):
        _trace_break("numpy", self)
        # (torch refuses only while grad mode is on: under no_grad the array
        # cannot reach a graph.)
        if self.needs_grad() and rg_grad_enabled() and not force:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        if _cupy_ndarray is not None and type(self._array) is _cupy_ndarray:
            if not force:
                raise TypeError(
                    f"can't convert {self._device} tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first.")
            return self._array.get()
        return self._array

    def __array__(self, dtype=None, copy=None):
        _trace_break("__array__", self)
        # np.asarray(t), np.array([t, t]), np.r_, SciPy: a plain array would silently drop
        # the graph, so refuse as torch does (under no_grad nothing is recorded)
        if self.needs_grad() and rg_grad_enabled():
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad: converting it to a NumPy array would "
                "drop its autograd graph. Use tensor.detach().numpy() (or np.asarray(t.detach())) for the "
                "values, or keep the computation differentiable with retrograd ops (rg.stack, rg.cat, "
                "np.stack/np.concatenate of tensors, Tensor methods).")
        a = self._array
        if _cupy_ndarray is not None and type(a) is _cupy_ndarray:
            a = a.get()
        if dtype is not None and a.dtype != dtype:
            return a.astype(dtype)
        if copy:
            return a.copy()
        return a

    # DLPack (``rg.from_dlpack`` is the other half): the array's own exporter,
    # NumPy's or CuPy's (which makes the consumer's ``stream`` wait, as torch's).
    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        if self.needs_grad():
            raise RuntimeError("Can't export tensors that require gradient, use tensor.detach()")
        kwargs = {k: v for k, v in (("stream", stream), ("max_version", max_version),
                                    ("dl_device", dl_device), ("copy", copy)) if v is not None}
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()

    # NumPy defers its binary operators to ours (ndarray + Tensor and
    # np.float64 * Tensor call Tensor.__radd__/__rmul__ and record the graph)
    # instead of silently converting the tensor through __array__.
    __array_priority__ = 1000

    def __array_function__(self, func, types, args, kwargs):
        # NumPy's functions keep NumPy's meaning on tensors (docs/from_pytorch.md), computed
        # by retrograd ops so the graph is recorded: np.sum(t, axis=0) is
        # rg.sum(t, dim=0). The NumPy-name -> op table is _numpy_protocol.py.
        # A function with no counterpart runs on the arrays when no tensor
        # needs grad, and raises TypeError naming it otherwise (never a
        # silently dropped graph).
        global _np_protocol
        if _np_protocol is None:
            from retrograd.core import _numpy_protocol as _np_protocol
        return _np_protocol.dispatch(func, args, kwargs,
                                     rg_grad_enabled() and _any_needs_grad(args, kwargs),
                                     lambda x: _arrays_of(x))

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        # np.exp(t), np.add(t, 1), np.maximum(a, t): the retrograd op, which
        # records the graph (_ufunc.pxi).
        return _array_ufunc(ufunc, method, inputs, kwargs)

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        if self._array.dtype.kind not in "iub":
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __bool__(self):
        _trace_break("__bool__", self)
        if self._array.size != 1:
            raise RuntimeError(
                f"Boolean value of Tensor with {self._array.size} elements is ambiguous")
        return bool(self._array.item())

    def __hash__(self):
        return id(self)

    def __iter__(self):
        _trace_break("__iter__", self)
        if self._array.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        for i in range(self._array.shape[0]):
            yield self[i]

    def __getattr__(self, str name):
        # reached only when the normal lookup failed
        if _missing_attribute_hook is not None and not name.startswith("__"):
            _missing_attribute_hook(name)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'", name=name, obj=self)

    def __reduce__(self):
        # pickle and copy.copy, as torch: the copy is a leaf (a non-leaf or a
        # view loses its graph and its view relation) that requires grad when
        # the original does; .grad is not kept. copy.copy shares the array.
        return (_rebuild_tensor, (self._array, str(self._device), self.needs_grad()))

    def __deepcopy__(self, memo):
        # torch's Tensor.__deepcopy__: leaves only; the array (torch's storage)
        # is copied once per deepcopy, so tensors that shared memory (a base and
        # its views) share the copied memory; requires_grad and .grad are kept.
        if self.grad_fn is not None:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol "
                "at the moment. Deep-copy t.detach() instead (then set requires_grad if you need it).")
        cdef Tensor t
        key = id(self)
        if key in memo:
            return memo[key]
        t = rg_wrap(_deepcopy_array(self._array, memo), self._device)
        t._is_inference = self._is_inference
        if self._requires_grad:
            t._requires_grad = True
        if self._grad is not None:
            t._grad = _copy_mod.deepcopy(self._grad, memo)
        memo[key] = t
        return t

    def __format__(self, format_spec):
        # f"{loss:.4f}": a 0-d tensor formats as its Python number (torch);
        # other tensors accept only the empty spec (object.__format__ raises
        # TypeError for the rest, as torch does).
        if self._array.ndim == 0:
            return self._array.item().__format__(format_spec)
        if format_spec:
            raise TypeError("unsupported format string passed to Tensor.__format__")
        return str(self)

    def __repr__(self):
        body = np.array2string(self.numpy(force=True), separator=", ", prefix="tensor(")
        extras = []
        if self._device is not rg_cpu_device():
            extras.append(f"device='{self._device}'")
        dt = self._array.dtype
        # (as torch: the default float and complex dtypes, int64 and bool go unsaid)
        if dt != k_default_float() and dt != k_default_complex() and dt != np.int64 and dt != np.bool_:
            extras.append(f"dtype={dt}")
        # As torch's _str_intern: the grad_fn's class name, "Invalid" when
        # reading it raises (a view whose base was modified in a way its
        # creation forbids), and the tangent of a dual tensor.
        grad_fn_name = None
        try:
            fn = self.grad_fn
        except RuntimeError:
            grad_fn_name = "Invalid"
        else:
            if fn is not None:
                grad_fn_name = type(fn).__name__
        if grad_fn_name is not None:
            extras.append(f"grad_fn=<{grad_fn_name}>")
        elif _needs(self):
            extras.append("requires_grad=True")
        if self._fw_grads is not None or (self._base is not None and self._base._fw_grads is not None):
            dual = _sys.modules.get("retrograd.forward_ad._dual")
            tangents = dual._tangents(self) if dual is not None else None
            if tangents:
                extras.append(f"tangent={tangents[max(tangents)]!r}")
        return "tensor(" + body + "".join(", " + e for e in extras) + ")"

    # -- autograd side ----------------------------------------------------
    @property
    def requires_grad(self):
        return _needs(self) or (self._is_inference and self._requires_grad)

    @requires_grad.setter
    def requires_grad(self, value):
        # torch: assigning the attribute on a non-leaf is an error either way;
        # only requires_grad_(True) is a no-op there.
        if self._grad_fn is not None:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables." + (
                    "" if value else " If you want to use a computed variable in a subgraph that "
                    "doesn't require differentiation use var_no_grad = var.detach()."))
        self._set_requires_grad(bool(value))

    cdef _set_requires_grad(self, bint value):
        if self._grad_fn is not None:
            if not value:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want to use a "
                    "computed variable in a subgraph that doesn't require differentiation use "
                    "var_no_grad = var.detach().")
            return
        if value and not _is_float_dtype(self._array.dtype):
            raise RuntimeError(
                f"only Tensors of floating point and complex dtype can require gradients, got "
                f"{self._array.dtype}; convert first, e.g. t.to(numpy.float64)")
        if value and self._is_inference and not _rg_inference_mode():
            raise RuntimeError(
                "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.")
        self._requires_grad = value

    def requires_grad_(self, requires_grad=True):
        self._set_requires_grad(bool(requires_grad))
        return self

    @property
    def grad_fn(self):
        return _current_grad_fn(self) if self._base is not None else self._grad_fn

    @property
    def is_leaf(self):
        return self._grad_fn is None

    @property
    def output_nr(self):
        return self._output_nr

    @property
    def _version(self):
        if self._is_inference:
            # torch: inference tensors skip version tracking altogether
            raise RuntimeError("Inference tensors do not track version counter.")
        return self._version_counter.version

    # torch's complex parts; real tensors are their own real part and have no
    # imaginary part (torch raises rather than give zeros)
    @property
    def real(self):
        if self._array.dtype.kind != "c":
            return self
        raise NotImplementedError("Tensor.real of a complex tensor is not supported yet: take the part from "
                                  "an array (t.detach().numpy().real)")

    @property
    def imag(self):
        if self._array.dtype.kind != "c":
            raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
        raise NotImplementedError("Tensor.imag of a complex tensor is not supported yet: take the part from "
                                  "an array (t.detach().numpy().imag)")

    @property
    def grad(self):
        if self._grad is None and self._grad_fn is not None and not self._retains_grad:
            # torch's warning: backward never fills .grad of a non-leaf
            # unless it retains grad, so reading it is most likely a mistake.
            import warnings
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its "
                ".grad attribute won't be populated during autograd.backward(). If you indeed want "
                "the .grad field to be populated for a non-leaf Tensor, use .retain_grad() on the "
                "non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure you access "
                "the leaf Tensor instead.", UserWarning, stacklevel=1)
        return self._grad

    @grad.setter
    def grad(self, value):
        cdef Tensor g
        if value is None:
            self._grad = None
            return
        if not isinstance(value, Tensor):
            raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type {type(value).__name__}")
        g = <Tensor>value
        if g is self:
            raise RuntimeError("can't assign Variable as its own grad; assign a copy (t.grad = t.detach().clone())")
        if g._array.dtype != self._array.dtype:
            raise RuntimeError(
                f"attempting to assign a gradient with dtype '{g._array.dtype}' to a tensor with dtype "
                f"'{self._array.dtype}'. The gradient must match the tensor's dtype: convert it first")
        if g._array.shape != self._array.shape:
            raise RuntimeError(
                f"attempting to assign a gradient of size '{list(g._array.shape)}' to a tensor of size "
                f"'{list(self._array.shape)}'. Please ensure that the gradient and the tensor are the same size")
        if g._device is not self._device:
            raise RuntimeError(
                f"attempting to assign a gradient located on device '{g._device}' to a tensor on device "
                f"'{self._device}'. Please ensure that the gradient and the tensor are on the same device")
        self._grad = g

    @grad.deleter
    def grad(self):
        self._grad = None

    @property
    def retains_grad(self):
        return self._grad_fn is not None and self._retains_grad

    def retain_grad(self):
        _trace_break("retain_grad", self)
        if self._grad_fn is None:
            if not self._requires_grad:
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
            return      # leaves always get .grad
        if self._retains_grad:
            return
        _install_retains_grad_hook(self)
        self._retains_grad = True

    def register_hook(self, hook):
        _trace_break("register_hook", self)
        if not callable(hook):
            raise TypeError(f"hook must be callable, got {type(hook).__name__}")
        if not self.needs_grad():
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._grad_fn is not None:
            return self._grad_fn._register_tensor_pre_hook(self._output_nr, hook)
        h = RemovableHandle(self, "tensor")
        if self._hooks is None:
            self._hooks = []
        self._hooks.append((h.id, hook))
        return h

    def register_post_accumulate_grad_hook(self, hook):
        _trace_break("register_post_accumulate_grad_hook", self)
        if not callable(hook):
            raise TypeError(f"hook must be callable, got {type(hook).__name__}")
        if self._grad_fn is not None:
            raise RuntimeError(
                "post accumulate grad hooks cannot be registered on non-leaf tensors")
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        h = RemovableHandle(self, "post_acc")
        if self._post_acc_hooks is None:
            self._post_acc_hooks = []
        self._post_acc_hooks.append((h.id, hook))
        return h

    # torch's Tensor._backward_hooks and _post_accumulate_grad_hooks: an
    # OrderedDict {handle id: hook}, None before any hook; read-only
    # snapshots (see _hooks_snapshot in _node.pxi).
    @property
    def _backward_hooks(self):
        if self._grad_fn is None:
            return _hooks_snapshot(self._hooks)
        return _output_hooks_snapshot(<Node>self._grad_fn, self._output_nr)

    @_backward_hooks.setter
    def _backward_hooks(self, value):
        raise AttributeError("Tensor._backward_hooks is read-only: add hooks with register_hook")

    @_backward_hooks.deleter
    def _backward_hooks(self):
        raise RuntimeError("Deletion of _backward_hooks is not allowed: remove each hook with the "
                           "handle its register_hook returned")

    @property
    def _post_accumulate_grad_hooks(self):
        return _hooks_snapshot(self._post_acc_hooks)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        _tensor_backward(self, gradient, retain_graph, create_graph, inputs)

    def detach(self):
        return _detach_as(self, Tensor)

    @staticmethod
    def _make_subclass(cls, data, require_grad=False):
        """``data.detach()`` as an instance of the Tensor subclass ``cls``, requiring grad
        when ``require_grad`` (``torch.Tensor._make_subclass``; rg.nn.Parameter uses it)."""
        return _make_subclass(cls, data, require_grad)

    def detach_(self):
        if self._base is not None:
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using "
                "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set as "
                "True, gradients are views of DDP buckets, and hence detach_() cannot be called on "
                "these gradients. To fix this error, please refer to the Optimizer.zero_grad() "
                "function in torch/optim/optimizer.py as the solution.")
        if self._grad_fn is not None:
            _note_detached(self._grad_fn, self._output_nr)     # see _saved.pxi
        self._fw_grads = None       # no tangent either, as torch's detach_
        self._grad_fn = None
        self._edge_cache = None
        self._output_nr = 0
        self._requires_grad = False
        return self

    def is_inference(self):
        return self._is_inference

    def is_contiguous(self, memory_format=None):
        return bool(self._array.flags.c_contiguous)

    def contiguous(self, memory_format=None):
        return self if self._array.flags.c_contiguous else _op_clone(self)

    @property
    def _base(self):
        """The tensor this one is a view of, or None (``torch.Tensor._base``).

        Returns:
            Tensor or None: the root base: a view of a view names the tensor
            that owns the memory, as in torch. ``detach()`` and copies are not
            views (None).

        Example::

            >>> x = rg.ones(4)
            >>> v = x[1:][::2]
            >>> v._base is x
            True
            >>> x._base is None
            True
        """
        return self._base

    @property
    def is_view(self):
        return self._base is not None

    def _is_view(self):
        return self._base is not None

    @property
    def T(self):
        return _op_permute(self, tuple(range(self._array.ndim - 1, -1, -1)))

    @property
    def mT(self):
        return _op_transpose(self, -2, -1)

    def to(self, *args, device=None, dtype=None, non_blocking=False, copy=False, memory_format=None):
        device, dtype, copy = _to_args(args, device, dtype, non_blocking, copy)
        out = self
        if dtype is not None:
            out = _convert_dtype(self, _dtype_arg(dtype, "to"))
        if device is not None and _parse_device(device) is not (<Tensor>out)._device:
            out = _op__to_device(out, _parse_device(device))
        if copy and out is self:
            out = _op_clone(self)
        return out

    # @@TENSOR_METHODS@@ gen_ops.py puts here the body of _tensor_methods.pxi: the
    # dtype and device shorthands, the shape and in-place methods, the
    # composites' methods.

    # @@GENERATED_METHODS@@ gen_ops.py puts here one method per `methods:`/`inplace:` name of
    # derivatives.yaml (each calls its op's _op_<name>). To read them: the entry in
    # derivatives.yaml; typed, in `class Tensor` of the installed abi.pyi (written by
    # _codegen/gen_stubs.py); as code, in the build directory's _tensor_generated.pxi.


# torch's Tensor._grad_fn: grad_fn under its private name (read by code written
# for torch's internals), which may be set to None only (detaching in place)
# and not deleted. Tensor's C field has that name, so the Python property is
# put in the class's dict by hand.
def _private_grad_fn_get(Tensor self):
    return self.grad_fn


def _private_grad_fn_set(Tensor self, value):
    if value is not None:
        raise RuntimeError("_grad_fn can be only set to None; to give a tensor a history, compute "
                           "it from tensors that require grad")
    self.detach_()


def _private_grad_fn_del(Tensor self):
    raise RuntimeError("Deletion of _grad_fn is not allowed. Detach the tensor instead (detach() "
                       "or detach_())")


(<dict><object>(<PyTypeObject*>Tensor).tp_dict)["_grad_fn"] = property(
    _private_grad_fn_get, _private_grad_fn_set, _private_grad_fn_del, "grad_fn (torch's private name).")
PyType_Modified(Tensor)


def _install_tensor_methods(dict methods):
    """Put Python-written methods in Tensor's dict (core's composites, see
    Note [Python-written Tensor methods] in _tensor_methods_py.py).

    A name Tensor already has is refused: these methods add to the class,
    never replace a compiled one.
    """
    cdef dict d = <dict><object>(<PyTypeObject*>Tensor).tp_dict
    for name, fn in methods.items():
        if name in d:
            raise RuntimeError(f"Tensor.{name} exists already; a Python-written method may not replace it")
        if not callable(fn) and not isinstance(fn, property):
            raise TypeError(f"Tensor.{name}: expected a function or a property, got {type(fn).__name__}")
    d.update(methods)
    PyType_Modified(Tensor)


_np_protocol = None
