# Tensor's convenience methods: torch's dtype and device shorthands, the shape
# methods with torch's varargs, the in-place operators, and the methods of the
# composites (shape, indexing, reductions). Each is a line that calls an op or
# a composite. This is a fragment of the Tensor class of _tensor.pxi, kept
# apart so that each file stays small: gen_ops.py puts the body below into
# the class, at the @@TENSOR_METHODS@@ line, in the build's
# _tensor_generated.pxi (and gives it the cimports it needs). Docstrings live
# in tensor_docs.yaml, as for the other hand-written members.

cdef class Tensor:  # (a fragment: the class is in _tensor.pxi)
    # torch's dtype shorthands: float conversions keep the graph (node
    # ToDtypeBackward0; torch's is ToCopyBackward0), integer and bool ones
    # give tensors that do not require grad; a tensor already of the dtype is
    # returned as is.
    def float(self):
        return _convert_dtype(self, _F32)

    def double(self):
        return _convert_dtype(self, _F64)

    def half(self):
        return _convert_dtype(self, _F16)

    def cfloat(self):
        return _convert_dtype(self, _C64)

    def cdouble(self):
        return _convert_dtype(self, _C128)

    def long(self):
        return _convert_dtype(self, _I64)

    def int(self):
        return _convert_dtype(self, _I32)

    def short(self):
        return _convert_dtype(self, _I16)

    def char(self):
        return _convert_dtype(self, _I8)

    def byte(self):
        return _convert_dtype(self, _U8)

    def bool(self):
        return _convert_dtype(self, _BOOL)

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None):
        return self.to("cuda" if device is None else f"cuda:{device}" if isinstance(device, int) else device)

    def type_as(self, other):
        return self.to(dtype=(<Tensor>_as_tensor_arg(other))._array.dtype)

    # -- shape methods taking torch's varargs ---------------------------------
    def reshape(self, *shape):
        return _op_reshape(self, _shape_args(shape))

    def view(self, *shape):
        return _op_view(self, _shape_args(shape))

    def permute(self, *dims):
        return _op_permute(self, _shape_args(dims))

    def expand(self, *sizes):
        return _op_expand(self, _shape_args(sizes))

    def broadcast_to(self, shape):
        return _op_broadcast_to(self, tuple(shape))

    def flatten(self, start_dim=0, end_dim=-1):
        return flatten(self, start_dim, end_dim)

    # -- in-place ops (see _inplace.pxi) ---------------------------------------
    def add_(self, other, *, alpha=1):
        return _inplace_binary(self, other if alpha == 1 else _op_mul(other, alpha), _op_add2, np.add, "add_")

    def sub_(self, other, *, alpha=1):
        return _inplace_binary(self, other if alpha == 1 else _op_mul(other, alpha), _op_sub2, np.subtract, "sub_")

    def mul_(self, other):
        return _inplace_binary(self, other, _op_mul, np.multiply, "mul_")

    def div_(self, other):
        return _inplace_binary(self, other, _op_div, np.true_divide, "div_")

    # torch's other names of the in-place arithmetic
    def subtract_(self, other, *, alpha=1):
        return self.sub_(other, alpha=alpha)

    def multiply_(self, other):
        return self.mul_(other)

    def divide_(self, other):
        return self.div_(other)

    def pow_(self, exponent):
        return _inplace_binary(self, exponent, _op_pow, np.power, "pow_")

    def copy_(self, src, non_blocking=False):
        return _inplace_call(self, _copy_value, (src,), "copy_")

    def __iadd__(self, other):
        return _inplace_binary(self, other, _op_add2, np.add, "add_")

    def __isub__(self, other):
        return _inplace_binary(self, other, _op_sub2, np.subtract, "sub_")

    def __imul__(self, other):
        return _inplace_binary(self, other, _op_mul, np.multiply, "mul_")

    def __itruediv__(self, other):
        return _inplace_binary(self, other, _op_div, np.true_divide, "div_")

    def __ipow__(self, other):
        return _inplace_binary(self, other, _op_pow, np.power, "pow_")

    def __setitem__(self, index, value):
        _tensor_setitem(self, index, value)     # _inplace.pxi

    # --- shape and indexing: composites of _composites_shape.pxi ---
    def squeeze(self, dim=None):
        return squeeze(self, dim)

    def unsqueeze(self, dim):
        return unsqueeze(self, dim)

    def swapaxes(self, axis0, axis1):
        return _op_transpose(self, axis0, axis1)

    def swapdims(self, dim0, dim1):
        return _op_transpose(self, dim0, dim1)

    def movedim(self, source, destination):
        return movedim(self, source, destination)

    def moveaxis(self, source, destination):
        return movedim(self, source, destination)

    def split(self, split_size, dim=0):
        return split(self, split_size, dim)

    def chunk(self, chunks, dim=0):
        return chunk(self, chunks, dim)

    def flip(self, *dims):
        return flip(self, _shape_args(dims))

    def roll(self, shifts, dims=None):
        return roll(self, shifts, dims)

    def repeat(self, *sizes):
        return repeat(self, _shape_args(sizes))

    def tile(self, *dims):
        return tile(self, _shape_args(dims))

    def index_select(self, dim, index):
        return index_select(self, dim, index)

    def masked_fill(self, mask, value):
        return masked_fill(self, mask, value)

    def take_along_dim(self, indices, dim=None):
        return take_along_dim(self, indices, dim)

    def narrow(self, dim, start, length):
        return narrow(self, dim, start, length)

    def select(self, dim, index):
        return select(self, dim, index)

    def unflatten(self, dim, sizes):
        return unflatten(self, dim, sizes)

    def tril(self, diagonal=0):
        return tril(self, diagonal)

    def triu(self, diagonal=0):
        return triu(self, diagonal)

    def tril_(self, diagonal=0):
        return _inplace_call(self, tril, (diagonal,), "tril_")

    def triu_(self, diagonal=0):
        return _inplace_call(self, triu, (diagonal,), "triu_")

    # --- reductions and linear algebra ---
    # max/min return (values, indices) with a dim: composites (argument
    # checks, named tuples) over the _max_dim / _min_dim entries.
    def max(self, dim=None, keepdim=False):
        from retrograd.core._composites_reductions_linalg import max as _max
        return _max(self, dim, keepdim)

    def min(self, dim=None, keepdim=False):
        from retrograd.core._composites_reductions_linalg import min as _min
        return _min(self, dim, keepdim)

    # sort/topk: composites (named tuples) over the _sort / _topk entries
    def sort(self, dim=-1, descending=False, *, stable=False):
        from retrograd.core._composites_reductions_linalg import sort as _sort
        return _sort(self, dim, descending, stable=stable)

    def topk(self, k, dim=-1, largest=True, sorted=True):
        from retrograd.core._composites_reductions_linalg import topk as _topk
        return _topk(self, k, dim, largest, sorted)

    def unbind(self, dim=0):
        return unbind(self, dim)

    def multinomial(self, num_samples, replacement=False, *, generator=None):
        from retrograd.core._sampling import multinomial as _multinomial
        return _multinomial(self, num_samples, replacement, generator=generator)

    # torch's type(): the type's name without an argument ('torch.FloatTensor',
    # the string torch code compares against), else a conversion to a dtype
    # or to a type named so
    def type(self, dtype=None, non_blocking=False, **kwargs):
        return _tensor_type(self, dtype)

    # -- torch's conveniences: shapes, new tensors like this one, storage facts
    def view_as(self, other):
        return self.view(tuple((<Tensor>_as_tensor_arg(other))._array.shape))

    def expand_as(self, other):
        return self.expand(tuple((<Tensor>_as_tensor_arg(other))._array.shape))

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
        return _new_like(self, "zeros", size, dtype, device, requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False):
        return _new_like(self, "ones", size, dtype, device, requires_grad)

    def new_empty(self, *size, dtype=None, device=None, requires_grad=False):
        return _new_like(self, "empty", size, dtype, device, requires_grad)

    def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
        return _new_like(self, "full", (size, fill_value), dtype, device, requires_grad)

    def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
        return _new_like(self, "tensor", (data,), dtype, device, requires_grad)

    @property
    def is_xpu(self):
        return False

    @property
    def is_mps(self):
        return False

    @property
    def itemsize(self):
        return self._array.itemsize

    @property
    def nbytes(self):
        return self._array.nbytes

    def element_size(self):
        return self._array.itemsize

    def nelement(self):
        return self._array.size

    def ndimension(self):
        return self._array.ndim

    def stride(self, dim=None):
        return _strides(self, dim)

    def storage_offset(self):
        return _storage_offset(self)

    def data_ptr(self):
        return _data_ptr(self)

    def get_device(self):
        return self._device.index if self._device.type_name == "cuda" else -1

    def pin_memory(self, device=None):
        return self

    def is_pinned(self, device=None):
        return False

    # -- in-place forms of composites (see _inplace.pxi's _inplace_call)
    def masked_fill_(self, mask, value):
        return _inplace_call(self, masked_fill, (mask, value), "masked_fill_")

    def addcmul_(self, tensor1, tensor2, *, value=1):
        from retrograd.core._pointwise import addcmul as _addcmul
        return _inplace_call(self, lambda s, a, b: _addcmul(s, a, b, value=value), (tensor1, tensor2), "addcmul_")

    def addcdiv_(self, tensor1, tensor2, *, value=1):
        from retrograd.core._pointwise import addcdiv as _addcdiv
        return _inplace_call(self, lambda s, a, b: _addcdiv(s, a, b, value=value), (tensor1, tensor2), "addcdiv_")

    def addcmul(self, tensor1, tensor2, *, value=1):
        from retrograd.core._pointwise import addcmul as _addcmul
        return _addcmul(self, tensor1, tensor2, value=value)

    def addcdiv(self, tensor1, tensor2, *, value=1):
        from retrograd.core._pointwise import addcdiv as _addcdiv
        return _addcdiv(self, tensor1, tensor2, value=value)

    # -- in-place draws: the new values have no history (their gradient to the
    # old value is zero), as torch's; a leaf that requires grad is refused
    # outside no_grad, as for every in-place op
    def normal_(self, mean=0.0, std=1.0, *, generator=None):
        return _inplace_random(self, "normal", mean, std, generator)

    def uniform_(self, a=0.0, b=1.0, *, generator=None, **kwargs):
        return _inplace_random(self, "uniform", kwargs.get("from", a), kwargs.get("to", b), generator)

    def bernoulli_(self, p=0.5, *, generator=None):
        return _inplace_random(self, "bernoulli", p, None, generator)

    def exponential_(self, lambd=1.0, *, generator=None):
        return _inplace_random(self, "exponential", lambd, None, generator)
