# What every generated op uses: argument unwrapping, device checks, graph
# recording (collect_next_edges / set_history), view bookkeeping and the
# array helpers that generated kernels call. Part of _ops.pyx.

from retrograd.core._array_module cimport _is_cupy, _cupy, _cupy_ndarray
from retrograd.core._kernels_core cimport k_clone
from retrograd.core._dtype_rules cimport _is_bf16_dtype, _is_floating_dtype  # (also _ufunc's, _tensor_args')

import traceback as _traceback


# Note [View creation meta]: torch's CreationMeta, kept in a view's `_name`
# slot (unused otherwise; abi.pxd stays as it is): None for an ordinary view
# (DEFAULT), or one of these small ints -- or, for the outputs of a
# multi-output view op (split, chunk), the tuple (_CM_MULTI_OUTPUT_NODE,
# op name, output index) that torch's messages name. Set by _mark_view (and
# by split and Function.apply), read only when a view is modified in place
# or re-derived from its base (_handle_view_on_rebase in _copy_slices.pxi).
cdef object _CM_NO_GRAD_MODE = 1
cdef object _CM_INFERENCE_MODE = 2
cdef object _CM_MULTI_OUTPUT_NODE = 3
cdef object _CM_IN_CUSTOM_FUNCTION = 4


cdef inline object _arg_array(object x, str fn=None, str arg=None, bint is_input=False):
    # (is_input: an index, a mask or an element of a tensor list, which take
    # no number either)
    # A non-Tensor argument of a Tensor parameter: Python scalars stay scalars
    # (NumPy's weak promotion: float32 tensor * 2.0 stays float32); anything
    # else becomes an array without copying. An error names the op and the
    # argument where given, as torch's argument parser does
    # ("exp(): argument 'input'"); with the op's name given, lists and tuples
    # are refused (Note [Non-Tensor arguments]).
    if type(x) is ndarray:
        return x
    if (type(x) is float or type(x) is int or type(x) is bool) and not is_input:
        return x                    # x * 2.0: the per-op hot path, no message built
    if fn is not None:
        _refuse_non_tensor(x, f"{fn}(): argument '{arg}'", is_input)
    if type(x) is float or type(x) is int or type(x) is bool:
        return x
    if _cupy_ndarray is not None and type(x) is _cupy_ndarray:
        return x
    if isinstance(x, (complex, np.generic)):
        return x
    return _checked_asarray(x, "argument" if fn is None else f"{fn}(): argument '{arg}'")


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


cdef inline bint _record(object out):
    # Only floating (and complex) results carry gradients.
    cdef char c
    if type(out) is ndarray:            # (the dtype's kind read in C: no attribute lookups)
        c = (<_cnp.dtype><object>_cnp.PyArray_DESCR(<_cnp.ndarray>out)).kind
        return c == b'f' or c == b'c' or (c == b'V' and _is_bf16_dtype(out.dtype))
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
        if c == b'V':
            return _is_bf16_dtype(out.dtype)
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
    node.seq_nr = _rg_next_sequence_nr()
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
