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

    def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
        return _inplace_random(self, "cauchy", median, sigma, generator)

    def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
        return _inplace_random(self, "log_normal", mean, std, generator)

    def geometric_(self, p, *, generator=None):
        return _inplace_random(self, "geometric", p, None, generator)

    def random_(self, from_=None, to=None, *, generator=None, **kwargs):
        from retrograd.core._pointwise import _random_bounds
        lo, hi = _random_bounds(self, from_, to, kwargs)
        return _inplace_random(self, "random", lo, hi, generator)

    def bernoulli(self, p=None, *, generator=None):
        from retrograd.core._sampling import bernoulli as _bernoulli
        if p is None:
            return _bernoulli(self, generator=generator)
        return _bernoulli(self.new_full(tuple(self._array.shape), p), generator=generator)

    def bfloat16(self, memory_format=None):
        from retrograd.core._dtypes import _bfloat16
        try:
            dt = _bfloat16()
        except AttributeError as e:          # (rg.bfloat16's message; a method call raises RuntimeError)
            raise RuntimeError(str(e)) from None
        return self.to(dt)

    def const_data_ptr(self):
        return _data_ptr(self)

    def dim_order(self, *, ambiguity_check=False):
        from retrograd.core._pointwise import _dim_order
        return _dim_order(tuple(self._array.shape), _strides(self, None), ambiguity_check)

    def module_load(self, other, assign=False):
        if assign:
            return other.detach()
        return self.copy_(other).detach()

    def new_empty_strided(self, size, stride, *, dtype=None, device=None, requires_grad=False):
        return _new_like(self, "empty", (tuple(size),), dtype, device, requires_grad)

    def narrow_copy(self, dim, start, length):
        return self.narrow(dim, start, length).clone()

    def unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
        from retrograd.core._numpy_like_select import unique as _unique
        return _unique(self, sorted, return_inverse, return_counts, dim)

    def apply_(self, callable):
        return _inplace_call(self, lambda s: _map_values(s, callable), (), "apply_")

    def map_(self, tensor, callable):
        return _inplace_call(self, lambda s, t: _map_values(s, callable, t), (tensor,), "map_")

    def map2_(self, x, y, callable):
        return _inplace_call(self, lambda s, a, b: _map_values(s, callable, a, b), (x, y), "map2_")

    # -- torch's functions of _numpy_like.py and _numpy_like_shape.py, as methods
    # (_numpy_like_fn looks each up once; their in-place forms go through
    # _inplace_call as the table's do, the tensor arguments in its tuple)
    def deg2rad(self):
        return _numpy_like_fn("deg2rad")(self)

    def deg2rad_(self):
        return _inplace_call(self, _numpy_like_fn("deg2rad"), (), "deg2rad_")

    def rad2deg(self):
        return _numpy_like_fn("rad2deg")(self)

    def rad2deg_(self):
        return _inplace_call(self, _numpy_like_fn("rad2deg"), (), "rad2deg_")

    def frac(self):
        return _numpy_like_fn("frac")(self)

    def frac_(self):
        return _inplace_call(self, _numpy_like_fn("frac"), (), "frac_")

    def logit(self, eps=None):
        return _numpy_like_fn("logit")(self, eps)

    def logit_(self, eps=None):
        return _inplace_call(self, _numpy_like_fn("logit"), (eps,), "logit_")

    def xlogy(self, other):
        return _numpy_like_fn("xlogy")(self, other)

    def xlogy_(self, other):
        return _inplace_call(self, _numpy_like_fn("xlogy"), (other,), "xlogy_")

    def hypot(self, other):
        return _numpy_like_fn("hypot")(self, other)

    def hypot_(self, other):
        return _inplace_call(self, _numpy_like_fn("hypot"), (other,), "hypot_")

    def logaddexp(self, other):
        return _numpy_like_fn("logaddexp")(self, other)

    def logaddexp2(self, other):
        return _numpy_like_fn("logaddexp2")(self, other)

    def copysign(self, other):
        return _numpy_like_fn("copysign")(self, other)

    def copysign_(self, other):
        return _inplace_call(self, _numpy_like_fn("copysign"), (other,), "copysign_")

    def sinc(self):
        return _numpy_like_fn("sinc")(self)

    def sinc_(self):
        return _inplace_call(self, _numpy_like_fn("sinc"), (), "sinc_")

    def heaviside(self, values):
        return _numpy_like_fn("heaviside")(self, values)

    def heaviside_(self, values):
        return _inplace_call(self, _numpy_like_fn("heaviside"), (values,), "heaviside_")

    def signbit(self):
        return _numpy_like_fn("signbit")(self)

    def nan_to_num(self, nan=0.0, posinf=None, neginf=None):
        return _numpy_like_fn("nan_to_num")(self, nan, posinf, neginf)

    def nan_to_num_(self, nan=0.0, posinf=None, neginf=None):
        return _inplace_call(self, _numpy_like_fn("nan_to_num"), (nan, posinf, neginf), "nan_to_num_")

    def isposinf(self):
        return _numpy_like_fn("isposinf")(self)

    def isneginf(self):
        return _numpy_like_fn("isneginf")(self)

    def isreal(self):
        return _numpy_like_fn("isreal")(self)

    def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        return _numpy_like_fn("isclose")(self, other, rtol, atol, equal_nan)

    def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        return _numpy_like_fn("allclose")(self, other, rtol, atol, equal_nan)

    def equal(self, other):
        return _numpy_like_fn("equal")(self, other)

    def float_power(self, exponent):
        return _numpy_like_fn("float_power")(self, exponent)

    def positive(self):
        return _numpy_like_fn("positive")(self)

    def count_nonzero(self, dim=None):
        return _numpy_like_fn("count_nonzero")(self, dim)

    def nansum(self, dim=None, keepdim=False, *, dtype=None):
        return _numpy_like_fn("nansum")(self, dim, keepdim, dtype=dtype)

    def nanmean(self, dim=None, keepdim=False, *, dtype=None):
        return _numpy_like_fn("nanmean")(self, dim, keepdim, dtype=dtype)

    def aminmax(self, *, dim=None, keepdim=False):
        return _numpy_like_fn("aminmax")(self, dim=dim, keepdim=keepdim)

    def is_complex(self):
        return _numpy_like_fn("is_complex")(self)

    def is_floating_point(self):
        return _numpy_like_fn("is_floating_point")(self)

    def is_signed(self):
        return _numpy_like_fn("is_signed")(self)

    def is_nonzero(self):
        return _numpy_like_fn("is_nonzero")(self)

    def is_same_size(self, other):
        return _numpy_like_fn("is_same_size")(self, other)

    def ravel(self):
        return _numpy_like_fn("ravel")(self)

    def tensor_split(self, indices_or_sections, dim=0):
        return _numpy_like_fn("tensor_split")(self, indices_or_sections, dim)

    def hsplit(self, indices_or_sections):
        return _numpy_like_fn("hsplit")(self, indices_or_sections)

    def vsplit(self, indices_or_sections):
        return _numpy_like_fn("vsplit")(self, indices_or_sections)

    def dsplit(self, indices_or_sections):
        return _numpy_like_fn("dsplit")(self, indices_or_sections)

    def fliplr(self):
        return _numpy_like_fn("fliplr")(self)

    def flipud(self):
        return _numpy_like_fn("flipud")(self)

    def rot90(self, k=1, dims=(0, 1)):
        return _numpy_like_fn("rot90")(self, k, dims)

    def diag(self, diagonal=0):
        return _numpy_like_fn("diag")(self, diagonal)

    def diag_embed(self, offset=0, dim1=-2, dim2=-1):
        return _numpy_like_fn("diag_embed")(self, offset, dim1, dim2)

    def diagflat(self, offset=0):
        return _numpy_like_fn("diagflat")(self, offset)

    def trace(self):
        return _numpy_like_fn("trace")(self)

    def kron(self, other):
        return _numpy_like_fn("kron")(self, other)

    def take(self, index):
        return _numpy_like_fn("take")(self, index)

    def masked_select(self, mask):
        return _numpy_like_fn("masked_select")(self, mask)

    def repeat_interleave(self, repeats, dim=None, *, output_size=None):
        return _numpy_like_fn("repeat_interleave")(self, repeats, dim, output_size=output_size)

    def cummax(self, dim):
        return _numpy_like_fn("cummax")(self, dim)

    def cummin(self, dim):
        return _numpy_like_fn("cummin")(self, dim)

    def logcumsumexp(self, dim):
        return _numpy_like_fn("logcumsumexp")(self, dim)

    def index_add(self, dim, index, source, *, alpha=1):
        return _numpy_like_fn("index_add")(self, dim, index, source, alpha=alpha)

    def index_add_(self, dim, index, source, *, alpha=1):
        fn = _numpy_like_fn("index_add")
        return _inplace_call(self, lambda s, a0, a1, a2: fn(s, a0, a1, a2, alpha=alpha),
                             (dim, index, source), "index_add_")

    def index_copy(self, dim, index, source):
        return _numpy_like_fn("index_copy")(self, dim, index, source)

    def index_copy_(self, dim, index, source):
        return _inplace_call(self, _numpy_like_fn("index_copy"), (dim, index, source), "index_copy_")

    def index_fill(self, dim, index, value):
        return _numpy_like_fn("index_fill")(self, dim, index, value)

    def index_fill_(self, dim, index, value):
        return _inplace_call(self, _numpy_like_fn("index_fill"), (dim, index, value), "index_fill_")

    def diff(self, n=1, dim=-1, prepend=None, append=None):
        return _numpy_like_fn("diff")(self, n, dim, prepend, append)

    def argwhere(self):
        return _numpy_like_fn("argwhere")(self)

    def nonzero(self, *, as_tuple=False):
        return _numpy_like_fn("nonzero")(self, as_tuple=as_tuple)

    def msort(self):
        return _numpy_like_fn("msort")(self)

    def inner(self, other):
        return _numpy_like_fn("inner")(self, other)

    def mv(self, vec):
        return _numpy_like_fn("mv")(self, vec)

    def bincount(self, weights=None, minlength=0):
        return _numpy_like_fn("bincount")(self, weights, minlength)

    def is_conj(self):
        return _numpy_like_fn("is_conj")(self)

    def is_neg(self):
        return _numpy_like_fn("is_neg")(self)

    def resolve_conj(self):
        return _numpy_like_fn("resolve_conj")(self)

    def resolve_neg(self):
        return _numpy_like_fn("resolve_neg")(self)

    def sum_to_size(self, *size):
        return _numpy_like_fn("sum_to_size")(self, *size)

    def reshape_as(self, other):
        return _op_reshape(self, tuple((<Tensor>_as_tensor_arg(other))._array.shape))

    @property
    def is_cpu(self):
        return self._device.type_name == "cpu"

    # -- torch's linear algebra shortcuts and more composites (_numpy_like_linalg.py, ...)
    def slogdet(self):
        return _numpy_like_fn("slogdet")(self)

    def logdet(self):
        return _numpy_like_fn("logdet")(self)

    def cholesky(self, upper=False):
        return _numpy_like_fn("cholesky")(self, upper)

    def qr(self, some=True):
        return _numpy_like_fn("qr")(self, some)

    def svd(self, some=True, compute_uv=True):
        return _numpy_like_fn("svd")(self, some, compute_uv)

    def matrix_power(self, n):
        return _numpy_like_fn("matrix_power")(self, n)

    def addmv(self, mat, vec, *, beta=1, alpha=1):
        return _numpy_like_fn("addmv")(self, mat, vec, beta=beta, alpha=alpha)

    def addmv_(self, mat, vec, *, beta=1, alpha=1):
        fn = _numpy_like_fn("addmv")
        return _inplace_call(self, lambda s, a0, a1: fn(s, a0, a1, beta=beta, alpha=alpha),
                             (mat, vec), "addmv_")

    def addr(self, vec1, vec2, *, beta=1, alpha=1):
        return _numpy_like_fn("addr")(self, vec1, vec2, beta=beta, alpha=alpha)

    def addr_(self, vec1, vec2, *, beta=1, alpha=1):
        fn = _numpy_like_fn("addr")
        return _inplace_call(self, lambda s, a0, a1: fn(s, a0, a1, beta=beta, alpha=alpha),
                             (vec1, vec2), "addr_")

    def baddbmm(self, batch1, batch2, *, beta=1, alpha=1):
        return _numpy_like_fn("baddbmm")(self, batch1, batch2, beta=beta, alpha=alpha)

    def baddbmm_(self, batch1, batch2, *, beta=1, alpha=1):
        fn = _numpy_like_fn("baddbmm")
        return _inplace_call(self, lambda s, a0, a1: fn(s, a0, a1, beta=beta, alpha=alpha),
                             (batch1, batch2), "baddbmm_")

    def addbmm(self, batch1, batch2, *, beta=1, alpha=1):
        return _numpy_like_fn("addbmm")(self, batch1, batch2, beta=beta, alpha=alpha)

    def addbmm_(self, batch1, batch2, *, beta=1, alpha=1):
        fn = _numpy_like_fn("addbmm")
        return _inplace_call(self, lambda s, a0, a1: fn(s, a0, a1, beta=beta, alpha=alpha),
                             (batch1, batch2), "addbmm_")

    def cov(self, *, correction=1, fweights=None, aweights=None):
        return _numpy_like_fn("cov")(self, correction=correction, fweights=fweights, aweights=aweights)

    def corrcoef(self):
        return _numpy_like_fn("corrcoef")(self)

    def cross(self, other, dim=None):
        return _numpy_like_fn("cross")(self, other, dim)

    def dist(self, other, p=2):
        return _numpy_like_fn("dist")(self, other, p)

    def vdot(self, other):
        return _numpy_like_fn("vdot")(self, other)

    def ldexp(self, other):
        return _numpy_like_fn("ldexp")(self, other)

    def ldexp_(self, other):
        return _inplace_call(self, _numpy_like_fn("ldexp"), (other,), "ldexp_")

    def frexp(self):
        return _numpy_like_fn("frexp")(self)

    def histc(self, bins=100, min=0, max=0):
        return _numpy_like_fn("histc")(self, bins, min, max)

    def bitwise_left_shift(self, other):
        return _numpy_like_fn("bitwise_left_shift")(self, other)

    def bitwise_left_shift_(self, other):
        return _inplace_call(self, _numpy_like_fn("bitwise_left_shift"), (other,), "bitwise_left_shift_")

    def bitwise_right_shift(self, other):
        return _numpy_like_fn("bitwise_right_shift")(self, other)

    def bitwise_right_shift_(self, other):
        return _inplace_call(self, _numpy_like_fn("bitwise_right_shift"), (other,), "bitwise_right_shift_")

    # -- order statistics, functional writes and split variants (_numpy_like_select.py, ...)
    def median(self, dim=None, keepdim=False):
        return _numpy_like_fn("median")(self, dim, keepdim)

    def nanmedian(self, dim=None, keepdim=False):
        return _numpy_like_fn("nanmedian")(self, dim, keepdim)

    def kthvalue(self, k, dim=-1, keepdim=False):
        return _numpy_like_fn("kthvalue")(self, k, dim, keepdim)

    def quantile(self, q, dim=None, keepdim=False, *, interpolation='linear'):
        return _numpy_like_fn("quantile")(self, q, dim, keepdim, interpolation=interpolation)

    def nanquantile(self, q, dim=None, keepdim=False, *, interpolation='linear'):
        return _numpy_like_fn("nanquantile")(self, q, dim, keepdim, interpolation=interpolation)

    def unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
        return _numpy_like_fn("unique_consecutive")(self, return_inverse, return_counts, dim)

    def scatter(self, dim, index, src=None, value=None, *, reduce=None):
        return _numpy_like_fn("scatter")(self, dim, index, src, value, reduce=reduce)

    def scatter_(self, dim, index, src=None, value=None, *, reduce=None):
        fn = _numpy_like_fn("scatter")
        return _inplace_call(self, lambda s, a0, a1, a2, a3: fn(s, a0, a1, a2, a3, reduce=reduce),
                             (dim, index, src, value), "scatter_")

    def index_put(self, indices, values, accumulate=False):
        return _numpy_like_fn("index_put")(self, indices, values, accumulate)

    def index_put_(self, indices, values, accumulate=False):
        return _inplace_call(self, _numpy_like_fn("index_put"), (indices, values, accumulate), "index_put_")

    def put(self, index, source, accumulate=False):
        return _numpy_like_fn("put")(self, index, source, accumulate)

    def put_(self, index, source, accumulate=False):
        return _inplace_call(self, _numpy_like_fn("put"), (index, source, accumulate), "put_")

    def masked_scatter(self, mask, source):
        return _numpy_like_fn("masked_scatter")(self, mask, source)

    def masked_scatter_(self, mask, source):
        return _inplace_call(self, _numpy_like_fn("masked_scatter"), (mask, source), "masked_scatter_")

    def diagonal_scatter(self, src, offset=0, dim1=0, dim2=1):
        return _numpy_like_fn("diagonal_scatter")(self, src, offset, dim1, dim2)

    def select_scatter(self, src, dim, index):
        return _numpy_like_fn("select_scatter")(self, src, dim, index)

    def slice_scatter(self, src, dim=0, start=None, end=None, step=1):
        return _numpy_like_fn("slice_scatter")(self, src, dim, start, end, step)

    def cholesky_solve(self, input2, upper=False):
        return _numpy_like_fn("cholesky_solve")(self, input2, upper)

    def cholesky_inverse(self, upper=False):
        return _numpy_like_fn("cholesky_inverse")(self, upper)

    def renorm(self, p, dim, maxnorm):
        return _numpy_like_fn("renorm")(self, p, dim, maxnorm)

    def renorm_(self, p, dim, maxnorm):
        return _inplace_call(self, _numpy_like_fn("renorm"), (p, dim, maxnorm), "renorm_")

    def sgn(self):
        return _numpy_like_fn("sgn")(self)

    def sgn_(self):
        return _inplace_call(self, _numpy_like_fn("sgn"), (), "sgn_")

    def split_with_sizes(self, split_sizes, dim=0):
        return _numpy_like_fn("split_with_sizes")(self, split_sizes, dim)

    def unsafe_split(self, split_size, dim=0):
        return _numpy_like_fn("unsafe_split")(self, split_size, dim)

    def unsafe_split_with_sizes(self, split_sizes, dim=0):
        return _numpy_like_fn("unsafe_split_with_sizes")(self, split_sizes, dim)

    def unsafe_chunk(self, chunks, dim=0):
        return _numpy_like_fn("unsafe_chunk")(self, chunks, dim)

    def histogram(self, bins=100, *, range=None, weight=None, density=False):
        return _numpy_like_fn("histogram")(self, bins, range=range, weight=weight, density=density)
