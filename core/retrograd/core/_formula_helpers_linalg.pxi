# Formula helpers for reductions and linear algebra (SVD included). Part of
# _ops.pyx, after _formula_helpers.pxi; formulas.py lists them (NS_HELPERS).

from retrograd.core._arg_checks cimport _wrap_dim
from retrograd.core._array_module cimport _xp
from retrograd.core._dtype_rules cimport k_sign
from retrograd.core._kernels_linalg cimport (
    _axis_of, _norm_p, k_take_dim, k_take_dim_backward, k_einsum, k_inv, k_inv_unchecked, _solve_vector_case,
    k_solve,
)

from retrograd.core._kernels_linalg import _var_correction

# --- reductions and linear algebra ---
# Helpers of the reduction and linear algebra entries. Primitives they need
# beyond A/T go through small `_ns_*` dispatchers (array code in array mode,
# the differentiable op in tensor mode) so that the shared namespaces stay
# untouched.

cdef object _ns_sum(object ns, object x, object dim, bint keepdim):
    if ns is A:
        return np.sum(x, axis=_axis_of(x, dim), keepdims=keepdim)
    return _op_sum(x, dim, keepdim, None)


cdef object _ns_mean(object ns, object x, object dim, bint keepdim):
    if ns is A:
        return np.mean(x, axis=_axis_of(x, dim), keepdims=keepdim)
    return _op_mean(x, dim, keepdim, None)


cdef object _ns_exp(object ns, object x):
    return np.exp(x) if ns is A else _op_exp(x)


cdef object _ns_permute(object ns, object x, tuple perm):
    return np.transpose(x, perm) if ns is A else _op_permute(x, perm)


cdef object _ns_flip(object ns, object x, int d):
    idx = (slice(None),) * d + (slice(None, None, -1),)
    return x[idx] if ns is A else _op_getitem(x, idx)


cdef object _ns_cumsum(object ns, object x, int d):
    return np.cumsum(x, axis=d) if ns is A else _op_cumsum(x, d, None)


cdef object _ns_cumprod(object ns, object x, int d):
    return np.cumprod(x, axis=d) if ns is A else _op_cumprod(x, d, None)


cdef object _ns_inv(object ns, object x):
    return k_inv(x) if ns is A else _op__linalg_inv(x)


cdef object _ns_solve(object ns, object a, object b):
    return k_solve(a, b) if ns is A else _op__linalg_solve(a, b)


cdef object _ns_einsum(object ns, object a, object b, str eq):
    if ns is A:
        return k_einsum(a, _EINSUM_NO_OPERAND if b is None else b, eq)
    return _op__einsum(a, _einsum_operand(a, b), eq)


# One operand: the op refuses None for its Tensor b, so it gets this unused
# placeholder.
_EINSUM_NO_OPERAND = np.zeros(())


cdef object _einsum_operand(object a, object b):
    # b, or for one operand the placeholder: as a shape constant, which a
    # listening tracer hears as a factory (a bare array would be a value the
    # ops did not compute, and a compiled program would refuse it)
    if b is not None:
        return b
    return _shape_constant(_EINSUM_NO_OPERAND, <Tensor?>a)


cdef tuple _red_dims(object dim, int ndim):
    # the wrapped reduced dims; None and () reduce everything
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return tuple(range(ndim))
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    if ndim == 0:
        return ()
    return tuple(sorted({_wrap_dim(d, ndim) for d in dims}))


cdef object _all_if_empty(object dim):
    if dim is not None and isinstance(dim, (tuple, list)) and len(dim) == 0:
        return None
    return dim


cdef object _kept(object ns, object x, tuple shape, object dim, bint keepdim):
    # a reduction's output (or its grad) reshaped to broadcast against the input
    kept = _reduced_shape(shape, _all_if_empty(dim), keepdim)
    return ns.reshape(x, kept) if kept is not None else x


cdef Py_ssize_t _red_count(tuple shape, object dim):
    cdef Py_ssize_t n = 1
    for d in _red_dims(dim, len(shape)):
        n *= shape[d]
    return n


cdef object _excl_cumprod_last(object ns, object x):
    # exclusive cumulative product along the last dim (1, x0, x0 x1, ...):
    # the cumprod of x shifted right by one with a leading 1, built from
    # differentiable pieces so zeros need no division.
    shape = tuple(ns.data(x).shape)
    dtype = ns.data(x).dtype
    n = shape[-1]
    one0 = np.zeros_like(ns.data(x), shape=shape)
    one0[..., 0] = 1
    if ns is not A:
        one0 = _shape_constant(one0, <Tensor?>x)
    if n == 1:
        return one0
    head = x[..., :-1] if ns is A else _op_getitem(x, (Ellipsis, slice(None, -1)))
    shifted = index_backward(ns, head, shape, dtype, (Ellipsis, slice(1, None))) + one0
    return _ns_cumprod(ns, shifted, len(shape) - 1)


cdef object _prod_others(object ns, object x, object dim):
    # for each element, the product of the other elements of its reduced slice
    shape = tuple(ns.data(x).shape)
    cdef int n = len(shape)
    red = _red_dims(dim, n)
    keep = tuple(d for d in range(n) if d not in red)
    perm = keep + red
    xp = _ns_permute(ns, x, perm)
    pshape = tuple(shape[d] for d in perm)
    flat = ns.reshape(xp, tuple(shape[d] for d in keep) + (-1,))
    last = len(keep)
    left = _excl_cumprod_last(ns, flat)
    right = _ns_flip(ns, _excl_cumprod_last(ns, _ns_flip(ns, flat, last)), last)
    both = ns.reshape(left * right, pshape)
    return _ns_permute(ns, both, inverse_permutation(perm, n))


cdef bint _tracing_formula(object ns):
    # A create_graph formula that a tracer (rg.compile) records: it must not
    # branch on the values, since the program it becomes replays one branch
    # for every later input (prod's division form would give NaN on a zero).
    return ns is not A and _trace_slot != NULL


def prod_backward(ns, grad, self, result, dim, bint keepdim):
    shape = tuple(ns.data(self).shape)
    if len(shape) == 0:
        return grad
    g = _kept(ns, grad, shape, dim, keepdim)
    if not _tracing_formula(ns) and not (ns.data(self) == 0).any():
        return g * _kept(ns, result, shape, dim, keepdim) / self
    # (the division-free form: right for any input)
    return g * _prod_others(ns, self, dim)


def prod_jvp(ns, t, self, result, dim, bint keepdim):
    if isinstance(t, float):
        return 0.0
    ones = np.ones_like(ns.data(result))
    return _ns_sum(ns, t * prod_backward(ns, ones, self, result, dim, keepdim), _all_if_empty(dim)
                   if np.ndim(ns.data(self)) else None, keepdim)


cdef object _extreme_weights(object ns, object self, object result, object dim, bint keepdim):
    # amax/amin/max(): the gradient is split evenly among the tied extremes
    xd = ns.data(self)
    shape = tuple(xd.shape)
    # amax/amin: torch's (grad / count) * (x == result): a NaN result equals
    # no element, so its whole slice gets 0/0, NaN. max()/min() of all
    # elements (dim None) share the gradient among the NaNs instead
    # (torch's evenly_distribute_backward).
    if ns is not A:
        # the same as ops (see _TensorNS.nograd), in x's dtype throughout:
        # a count is exact there, and one division rounds as the array
        # path's division then cast does
        x = ns.nograd(self)
        rt = _kept(ns, ns.nograd(result), shape, dim, keepdim)
        tmask = x == rt
        if dim is None:
            tmask = tmask | (_op_isnan(x) & _op_isnan(rt))
        w = _op__to_dtype(tmask, xd.dtype)
        return w / _op_sum(w, _red_dims(dim, len(shape)) if len(shape) else None, True, None)
    r = _kept(A, ns.data(result), shape, dim, keepdim)
    mask = xd == r
    if dim is None:
        mask = mask | (np.isnan(xd) & np.isnan(r))
    cnt = np.sum(mask, axis=_red_dims(dim, len(shape)) if len(shape) else None, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (mask / cnt).astype(xd.dtype)


def extreme_backward(ns, grad, self, result, dim, bint keepdim):
    shape = tuple(ns.data(self).shape)
    return _kept(ns, grad, shape, dim, keepdim) * _extreme_weights(ns, self, result, dim, keepdim)


def extreme_jvp(ns, t, self, result, dim, bint keepdim):
    if isinstance(t, float):
        return 0.0
    w = _extreme_weights(ns, self, result, dim, keepdim)
    if np.ndim(ns.data(self)) == 0:
        return t * w
    return _ns_sum(ns, t * w, _all_if_empty(dim), keepdim)


def var_backward(ns, grad, self, dim, unbiased, bint keepdim, correction):
    dim, c = _var_correction(dim, unbiased, correction)
    shape = tuple(ns.data(self).shape)
    cdef Py_ssize_t n = _red_count(shape, dim)
    if n == 0:
        return ns.zeros_like(self)          # an empty input: an empty gradient
    g = _kept(ns, grad, shape, dim, keepdim)
    centered = self - _ns_mean(ns, self, _all_if_empty(dim) if len(shape) else None, True)
    if n - c <= 0 and (dim is None or len(shape) == 0):
        # torch: no degrees of freedom in a full reduction gives inf, or NaN
        # where the element is the mean (2/0 * 0) or not a number (an inf
        # input: inf - inf), whatever the sign
        cd = ns.data(centered)
        return g * _xp(cd).where((cd == 0) | (cd != cd), np.nan, np.inf).astype(cd.dtype)
    scale = 2.0 / (n - c) if n != c else float("inf")
    return g * scale * centered


def var_jvp(ns, t, self, result, dim, unbiased, bint keepdim, correction):
    if isinstance(t, float):
        return 0.0
    ones = np.ones_like(ns.data(result))
    w = var_backward(ns, ones, self, dim, unbiased, keepdim, correction)
    d2, _ = _var_correction(dim, unbiased, correction)
    if np.ndim(ns.data(self)) == 0:
        return t * w
    return _ns_sum(ns, t * w, _all_if_empty(d2), keepdim)


def std_backward(ns, grad, self, result, dim, unbiased, bint keepdim, correction):
    zero = ns.mask(ns.nograd(result) == 0)
    g = ns.where(zero, 0.0, grad / (2 * ns.where(zero, 1.0, result)))
    return var_backward(ns, g, self, dim, unbiased, keepdim, correction)


def std_jvp(ns, t, self, result, dim, unbiased, bint keepdim, correction):
    if isinstance(t, float):
        return 0.0
    ones = np.ones_like(ns.data(result))
    w = std_backward(ns, ones, self, result, dim, unbiased, keepdim, correction)
    d2, _ = _var_correction(dim, unbiased, correction)
    if np.ndim(ns.data(self)) == 0:
        return t * w
    return _ns_sum(ns, t * w, _all_if_empty(d2), keepdim)


def logsumexp_backward(ns, grad, self, result, dim, bint keepdim):
    shape = tuple(ns.data(self).shape)
    return _kept(ns, grad, shape, dim, keepdim) * _ns_exp(ns, self - _kept(ns, result, shape, dim, keepdim))


def logsumexp_jvp(ns, t, self, result, dim, bint keepdim):
    if isinstance(t, float):
        return 0.0
    shape = tuple(ns.data(self).shape)
    w = _ns_exp(ns, self - _kept(ns, result, shape, dim, keepdim))
    if len(shape) == 0:
        return t * w
    return _ns_sum(ns, t * w, _all_if_empty(dim), keepdim)


def norm_backward(ns, grad, self, result, p, dim, bint keepdim):
    pf = _norm_p(p)
    xd = ns.data(self)
    shape = tuple(xd.shape)
    g = _kept(ns, grad, shape, dim, keepdim)
    r = _kept(ns, result, shape, dim, keepdim)
    if pf == 0.0:
        return ns.zeros_like(self, shape)        # (under create_graph a factory: see zeros_like)
    if pf == 2.0:
        rzero = ns.mask(ns.nograd(r) == 0)
        return self * ns.where(rzero, 0.0, g / ns.where(rzero, 1.0, r))
    # 0 at NaN, as torch's sgn; under create_graph an op of self, as
    # torch's self.sgn() (its gradient, zero, is part of the graph)
    sgn = k_sign(xd) if ns is A else _op_sign(self)
    if pf == 1.0:
        return g * sgn
    if pf == np.inf or pf == -np.inf:
        # the gradient shared evenly among the elements at the extreme
        # (NaN ones: the norm is NaN there)
        red = _red_dims(dim, len(shape)) if len(shape) else None
        if ns is A:
            mask = (np.abs(xd) == ns.data(r)) | np.isnan(xd)
            cnt = np.sum(mask, axis=red, keepdims=True)
            return g * (sgn * mask / cnt).astype(xd.dtype)
        # under create_graph the mask is ops of self's value, so that a
        # tracer records it (rg.compile replays it per call)
        xn = ns.nograd(self)
        hit = _op__to_dtype(_op_logical_or(_op_eq(_op_abs(xn), ns.nograd(r)), _op_isnan(xn)), xd.dtype)
        return g * (sgn * hit / _op_sum(hit, red, True, None))
    # torch's rule: zero subgradient where the norm (or, for p < 1, the element) is 0
    rzero = ns.mask(ns.nograd(r) == 0)
    xzero = ns.mask(ns.nograd(self) == 0)
    absx = ns.where(xzero, 1.0, self * sgn)
    if pf < 1.0:
        scaled = ns.where(xzero, 0.0, sgn * absx ** (pf - 1))
        return scaled * g * r ** (1.0 - pf)
    if pf < 2.0:
        scaled = ns.where(xzero, 0.0, sgn * absx ** (pf - 1))
    else:
        scaled = ns.where(xzero, 0.0, self * absx ** (pf - 2))
    return scaled * ns.where(rzero, 0.0, g / ns.where(rzero, 1.0, r) ** (pf - 1))


def norm_jvp(ns, t, self, result, p, dim, bint keepdim):
    if isinstance(t, float) or _norm_p(p) == 0.0:
        return 0.0
    ones = np.ones_like(ns.data(result))
    w = norm_backward(ns, ones, self, result, p, dim, keepdim)
    if np.ndim(ns.data(self)) == 0:
        return t * w
    return _ns_sum(ns, t * w, _all_if_empty(dim), keepdim)


def cumsum_backward(ns, grad, dim, int ndim):
    if ndim == 0:
        return grad
    d = _wrap_dim(dim, ndim)
    return _ns_flip(ns, _ns_cumsum(ns, _ns_flip(ns, grad, d), d), d)


cdef object _cumprod_matrix(object ns, object x, int d):
    # With x moved to (..., n) along `d`: C[..., i, k] = prod_{j <= k, j != i} x_j
    # (the cumprod of x with x_i replaced by 1). O(n^2), used only when the
    # input has zeros, where the division formula fails.
    xd = ns.data(x)
    n_dim = xd.ndim
    perm = tuple(i for i in range(n_dim) if i != d) + (d,)
    xl = _ns_permute(ns, x, perm)
    n = xd.shape[d]
    eye = _xp(xd).eye(n, dtype=xd.dtype)
    lead = tuple(xd.shape[i] for i in perm[:-1])
    off, upper = 1 - eye, np.triu(_xp(xd).ones((n, n), dtype=xd.dtype))
    if ns is not A:
        # (made from shapes alone: shape constants in tensor mode)
        eye, off, upper = (_shape_constant(eye, <Tensor?>x), _shape_constant(off, <Tensor?>x),
                           _shape_constant(upper, <Tensor?>x))
    xr = ns.reshape(xl, lead + (1, n)) * off + eye
    return _ns_cumprod(ns, xr, len(lead) + 1), perm, upper


cdef object _a_cumprod_backward_zeros(object grad, object x, int d):
    # torch's O(n) cumprod_backward for an input with zeros (array mode).
    # Along d, with z1 the first zero and z2 the second:
    #   k < z1:  the division formula on the part before z1 (no zero there);
    #   k = z1:  prod(x[:z1]) * sum_{k in [z1, z2)} grad[k] * prod(x[z1+1:k+1]);
    #   k > z1:  0, exactly (every product through them has x[z1] = 0).
    # Masking keeps a NaN or inf after z1 out of the other positions, where
    # the O(n^2) product matrix would spread 0 * NaN.
    xp = _xp(x)
    is_zero = x == 0
    czero = xp.cumsum(is_zero, axis=d)
    before = czero == 0
    xb = xp.where(before, x, 1)
    out = xp.cumprod(xb, axis=d)
    w = xp.where(before, out * grad, 0)
    gi = xp.flip(xp.cumsum(xp.flip(w, d), axis=d), d) / xb
    gi = xp.where(before, gi, 0).astype(np.result_type(grad, x), copy=False)
    first = is_zero & (czero == 1)
    seg = (czero == 1) & ~first                     # (z1, z2)
    tail = xp.cumprod(xp.where(seg, x, 1), axis=d)  # prod(x[z1+1:k+1]) on [z1, z2)
    s = xp.sum(xp.where(czero == 1, grad * tail, 0), axis=d, keepdims=True)
    # prod(x[:z1]): the exclusive product before z1, the last value of out
    # in the before-part (1 when z1 is the first element)
    head = xp.prod(xb, axis=d, keepdims=True)
    return xp.where(first, head * s, gi)


def cumprod_backward(ns, grad, self, result, dim):
    xd = ns.data(self)
    if xd.ndim == 0:
        return grad
    d = _wrap_dim(dim, xd.ndim)
    if not _tracing_formula(ns) and not (xd == 0).any():
        return cumsum_backward(ns, grad * result, d, xd.ndim) / self
    if ns is A:
        return _a_cumprod_backward_zeros(grad, xd, d)
    # (tensor mode: the O(n^2) product matrix, right for any input)
    c, perm, upper = _cumprod_matrix(ns, self, d)
    gl = _ns_permute(ns, grad, perm)
    lead = tuple(np.shape(ns.data(gl))[:-1])
    n = xd.shape[d]
    gi = _ns_sum(ns, ns.reshape(gl, lead + (1, n)) * (upper * c), -1, False)
    return _ns_permute(ns, gi, inverse_permutation(perm, xd.ndim))


def cumprod_jvp(ns, t, self, result, dim):
    if isinstance(t, float):
        return 0.0
    xd = ns.data(self)
    if xd.ndim == 0:
        return t
    d = _wrap_dim(dim, xd.ndim)
    c, perm, upper = _cumprod_matrix(ns, self, d)
    tl = _ns_permute(ns, t, perm)
    lead = tuple(np.shape(ns.data(tl))[:-1])
    n = xd.shape[d]
    jk = _ns_sum(ns, ns.reshape(tl, lead + (n, 1)) * (upper * c), -2, False)
    return _ns_permute(ns, jk, inverse_permutation(perm, xd.ndim))


cdef object _kept_indices(object indices, object dim, Py_ssize_t ndim):
    # max(dim)'s saved indices (squeezed without keepdim) with `dim` kept,
    # as _take_dim takes them: an array in array mode; in tensor mode the
    # saved tensor itself, reshaped by an op, so that a tracer records
    # where they come from (their array would be baked in)
    cdef list shape
    if isinstance(indices, Tensor):
        if ndim > 0 and (<Tensor>indices)._array.ndim == ndim - 1:
            shape = list((<Tensor>indices)._array.shape)
            shape.insert(_wrap_dim(dim, ndim), 1)
            return _op_reshape(indices, tuple(shape))
        return indices
    if ndim > 0 and np.ndim(indices) == ndim - 1:
        indices = np.expand_dims(indices, _wrap_dim(dim, ndim))
    return indices


def take_dim_backward(ns, grad, indices, dim, bint keepdim, tuple shape, dtype):
    indices = _kept_indices(indices, dim, len(shape))
    if ns is A:
        return k_take_dim_backward(grad, indices, dim, keepdim, shape, dtype)
    return _op__take_dim_backward(grad, indices, dim, keepdim, shape, dtype)


def einsum_backward(ns, grad, a, b, str equation, int which):
    # d/d(operand) of a one- or two-operand einsum (explicit letters, no
    # ellipsis: the einsum composite canonicalizes): an einsum of grad with
    # the other operand onto the operand's distinct letters, broadcast along
    # letters that occur only in this operand, and put on the diagonal where
    # a letter repeats within it (einsum('ii->i'), traces).
    lhs, out = equation.split("->")
    subs = lhs.split(",")
    x = a if which == 0 else b
    s = subs[which]
    shape = tuple(ns.data(x).shape)
    binary = len(subs) == 2
    other = subs[1 - which] if binary else ""
    letters = []
    for ch in s:
        if ch not in letters and (ch in out or ch in other):
            letters.append(ch)
    target = "".join(letters)
    if binary:
        g = _ns_einsum(ns, grad, b if which == 0 else a, f"{out},{other}->{target}")
    else:
        g = _ns_einsum(ns, grad, None, f"{out}->{target}")
    seen = set()
    kshape = []
    for p, ch in enumerate(s):
        if ch in letters and ch not in seen:
            kshape.append(shape[p])
        else:
            kshape.append(1)
        seen.add(ch)
    kshape = tuple(kshape)
    if tuple(ns.data(g).shape) != kshape:
        g = ns.reshape(g, kshape)
    if kshape != shape:
        g = ns.expand(g, shape)
    if len(set(s)) != len(s):
        mask = _xp(ns.data(g)).ones(shape, dtype=bool)
        for ch in set(s):
            pos = [p for p, c in enumerate(s) if c == ch]
            for p in pos[1:]:
                r0 = _xp(mask).arange(shape[pos[0]]).reshape(tuple(-1 if i == pos[0] else 1 for i in range(len(s))))
                r1 = _xp(mask).arange(shape[p]).reshape(tuple(-1 if i == p else 1 for i in range(len(s))))
                mask = mask & (r0 == r1)
        mask = mask.astype(ns.data(g).dtype)
        # (made from shapes alone: a shape constant in tensor mode)
        g = g * (mask if ns is A else _shape_constant(mask, <Tensor?>g))
    return g


def einsum_jvp(ns, a_t, a_p, b_t, b_p, str equation):
    binary = "," in equation.split("->")[0]
    out = 0.0
    if not isinstance(a_t, float):
        out = _ns_einsum(ns, a_t, b_p if binary else None, equation)
    if binary and not isinstance(b_t, float):
        out = out + _ns_einsum(ns, a_p, b_t, equation)
    return out


cdef object _trace_last2(object ns, object x):
    n = np.shape(ns.data(x))[-1]
    return _ns_sum(ns, x * _xp(ns.data(x)).eye(n, dtype=ns.data(x).dtype), (-2, -1), False)


cdef object _batch_mat(object ns, object x):
    # a batch of scalars as (..., 1, 1), to scale a batch of matrices
    return ns.reshape(x, tuple(np.shape(ns.data(x))) + (1, 1))


def det_backward(ns, grad, self, result):
    if _tracing_formula(ns):
        # which formula depends on whether a matrix is singular, and the
        # singular one is NumPy's SVD on the values: a compiled function
        # runs this backward eagerly (a graph break)
        _trace_slot(RG_TRACE_BREAK, "linalg.det backward", (self,), (), None)
    if (ns.data(result) == 0).any():
        # singular matrices have no inverse: torch's SVD form of the cofactor
        # matrix, det(U) det(Vh) U diag(prod_{j != i} s_j) Vh (a constant
        # factor: second derivatives at singular matrices are not tracked)
        u, sv, vh = np.linalg.svd(ns.data(self))
        alpha = np.linalg.det(u) * np.linalg.det(vh)
        cof = np.matmul(u * _prod_others(A, sv, -1)[..., None, :], vh) * alpha[..., None, None]
        return _batch_mat(ns, grad) * cof
    return _batch_mat(ns, grad * result) * ns.mT(_ns_inv(ns, self))


def det_jvp(ns, t, self, result):
    if isinstance(t, float):
        return 0.0
    return result * _trace_last2(ns, _ns_solve(ns, self, t))


def slogdet_backward(ns, grad_sign, grad_logabsdet, self):
    # a real matrix's sign is piecewise constant: its gradient is ignored
    # (torch's slogdet_backward); no logabsdet gradient, no gradient
    if grad_logabsdet is None:
        return None
    # (a singular matrix: inf/nan, as torch's LU solve gives, not an error)
    inv = k_inv_unchecked(self) if ns is A else _op__linalg_inv(self)
    return _batch_mat(ns, grad_logabsdet) * ns.mT(inv)


def logabsdet_jvp(ns, t, self):
    if isinstance(t, float):
        return 0.0
    return _trace_last2(ns, _ns_solve(ns, self, t))


def solve_backward(ns, grad, a, b, result, int which):
    vec = _solve_vector_case(ns.data(a), ns.data(b))
    gb = _ns_solve(ns, ns.mT(a), grad)
    if which == 1:
        return gb
    if vec:
        gshape = tuple(np.shape(ns.data(gb)))
        xshape = tuple(np.shape(ns.data(result)))
        return -(ns.reshape(gb, gshape + (1,)) * ns.reshape(result, xshape[:-1] + (1, xshape[-1])))
    return -ns.matmul(gb, ns.mT(result))


def solve_jvp(ns, a_t, a_p, b_t, b_p, result):
    vec = _solve_vector_case(ns.data(a_p), ns.data(b_p))
    rhs = 0.0
    if not isinstance(b_t, float):
        rhs = b_t
    if not isinstance(a_t, float):
        if vec:
            xs = tuple(np.shape(ns.data(result)))
            ax = ns.matmul(a_t, ns.reshape(result, xs + (1,)))
            ax = ns.reshape(ax, tuple(np.shape(ns.data(ax)))[:-1])
        else:
            ax = ns.matmul(a_t, result)
        rhs = rhs - ax
    if isinstance(rhs, float):
        return 0.0
    return _ns_solve(ns, a_p, rhs)


def cholesky_backward(ns, grad, L):
    n = np.shape(ns.data(L))[-1]
    dt = ns.data(L).dtype
    low = np.tril(_xp(ns.data(L)).ones((n, n), dtype=dt))
    strict = np.tril(low, -1)
    p = ns.matmul(ns.mT(L), grad) * low
    s = (p + ns.mT(p * strict)) * 0.5
    linv = _ns_inv(ns, L)
    return ns.matmul(ns.mT(linv), ns.matmul(s, linv))


def cholesky_jvp(ns, t, L):
    if isinstance(t, float):
        return 0.0
    n = np.shape(ns.data(L))[-1]
    dt = ns.data(L).dtype
    phi = np.tril(_xp(ns.data(L)).ones((n, n), dtype=dt), -1) + 0.5 * _xp(ns.data(L)).eye(n, dtype=dt)
    ts = (t + ns.mT(t)) * 0.5            # cholesky reads a symmetric input
    linv = _ns_inv(ns, L)
    x = ns.matmul(linv, ns.matmul(ts, ns.mT(linv)))
    return ns.matmul(L, x * phi)


def take_dim(ns, grad, indices, dim, bint keepdim):
    indices = _kept_indices(indices, dim, np.ndim(ns.data(grad)))
    if ns is A:
        return k_take_dim(grad, indices, dim, keepdim)
    return _op__take_dim(grad, indices, dim, keepdim)


# Python entry points of the private entries, for the composites of
# _composites_reductions_linalg.py and linalg.py (private ops get no def).
def _take_dim_op(self, indices, dim, keepdim):
    return _op__take_dim(self, indices, dim, keepdim)


def _einsum_op(a, b, equation):
    # (b None: one operand)
    return _op__einsum(a, _einsum_operand(a, b), equation)


def _linalg_inv_op(x):
    return _op__linalg_inv(x)


def _linalg_det_op(x):
    return _op__linalg_det(x)


def _linalg_solve_op(a, b):
    return _op__linalg_solve(a, b)


def _linalg_cholesky_op(x):
    return _op__linalg_cholesky(x)


def _wrap_dim_py(dim, ndim):
    return _wrap_dim(dim, ndim)


# Slices and concatenation on either namespace (arrays, or tensors that
# record the graph); also used by _formula_helpers_decompositions.pxi.
cdef object _ns_cat(object ns, list xs, int dim):
    return np.concatenate(xs, axis=dim) if ns is A else _op_cat(xs, dim)


cdef object _ns_cols(object ns, object x, object start, object stop):
    idx = (Ellipsis, slice(None), slice(start, stop))
    return x[idx] if ns is A else _op_getitem(x, idx)


cdef object _ns_rows(object ns, object x, object start, object stop):
    idx = (Ellipsis, slice(start, stop), slice(None))
    return x[idx] if ns is A else _op_getitem(x, idx)


# --- SVD (the _linalg_svd entry) ---
# torch's svd_backward and linalg_svd_jvp for real inputs, over the factors
# the forward saved (no new SVD). Like torch, the gradients are only defined
# for distinct non-zero singular values; with repeated ones the division by
# E gives inf/nan, as torch's. With full_matrices, as torch's entry: the
# formulas see the reduced factors (the first k columns of U, rows of Vh):
# the other columns/rows get no gradient and a zero tangent (they are any
# orthonormal completion, not a function of A).

cdef object _svd_E(object ns, object s, tuple bs, Py_ssize_t k):
    # E[i, j] = s_j^2 - s_i^2 off the diagonal and 1 on it (torch's E)
    s2 = s * s
    eye = _xp(ns.data(s)).eye(k, dtype=ns.data(s).dtype)
    return ns.reshape(s2, bs + (1, k)) - ns.reshape(s2, bs + (k, 1)) + eye


def svd_backward(ns, gU, gS, gVh, u, s, vh, full_matrices=False):
    """The gradient of A from those of U, S and Vh (None: that factor got no
    gradient, a zero). It is linear in them: the sum of their terms."""
    if full_matrices:
        k = np.shape(ns.data(s))[-1]
        u, vh = _ns_cols(ns, u, None, k), _ns_rows(ns, vh, None, k)
        gU = None if gU is None else _ns_cols(ns, gU, None, k)
        gVh = None if gVh is None else _ns_rows(ns, gVh, None, k)
    m = np.shape(ns.data(u))[-2]
    n = np.shape(ns.data(vh))[-1]
    k = np.shape(ns.data(s))[-1]
    bs = tuple(np.shape(ns.data(s))[:-1])
    s_row = ns.reshape(s, bs + (1, k))
    s_col = ns.reshape(s, bs + (k, 1))
    out = None
    if gS is not None:
        # U diag(gS) Vh
        out = ns.matmul(u * ns.reshape(gS, bs + (1, k)), vh)
    if gU is None and gVh is None:
        return out
    E = _svd_E(ns, s, bs, k)
    if gU is not None:
        utg = ns.matmul(ns.mT(u), gU)
        ga = (utg - ns.mT(utg)) / E * s_row
        if m > k:
            # U gA Vh + (I - U U^T) gU S^-1 Vh
            gus = gU / s_row
            term = ns.matmul(ns.matmul(u, ga) + gus - ns.matmul(u, ns.matmul(ns.mT(u), gus)), vh)
        else:
            term = ns.matmul(u, ns.matmul(ga, vh))
        out = term if out is None else out + term
    if gVh is not None:
        gv = ns.mT(gVh)
        vhgv = ns.matmul(vh, gv)
        ga = s_col * ((vhgv - ns.mT(vhgv)) / E)
        if n > k:
            # U [gA Vh + S^-1 gV^T (I - V Vh)]
            gvst = ns.mT(gv / s_row)
            term = ns.matmul(u, ns.matmul(ga, vh) + gvst - ns.matmul(ns.matmul(gvst, ns.mT(vh)), vh))
        else:
            term = ns.matmul(u, ns.matmul(ga, vh))
        out = term if out is None else out + term
    return out


def svd_jvp(ns, t, u, s, vh, full_matrices=False):
    """The tangents (dU, dS, dVh) from the tangent t of A."""
    m = np.shape(ns.data(u))[-2]
    n = np.shape(ns.data(vh))[-1]
    k = np.shape(ns.data(s))[-1]
    if full_matrices:
        u, vh = _ns_cols(ns, u, None, k), _ns_rows(ns, vh, None, k)
    bs = tuple(np.shape(ns.data(s))[:-1])
    s_row = ns.reshape(s, bs + (1, k))
    s_col = ns.reshape(s, bs + (k, 1))
    v = ns.mT(vh)
    eye = _xp(ns.data(s)).eye(k, dtype=ns.data(s).dtype)
    dp = ns.matmul(ns.mT(u), ns.matmul(t, v))          # U^T dA V
    ds = _ns_sum(ns, dp * eye, -1, False)              # its diagonal
    dp = dp - dp * eye
    E = _svd_E(ns, s, bs, k)
    x = dp * s_row
    du = ns.matmul(u, (x + ns.mT(x)) / E)
    if m > k:
        davs = ns.matmul(t, v / s_row)
        du = du + davs - ns.matmul(u, ns.matmul(ns.mT(u), davs))
    y = s_col * dp
    dvh = ns.matmul(-((y + ns.mT(y)) / E), vh)
    if n > k:
        uhdas = ns.matmul(ns.mT(u) / s_col, t)
        dvh = dvh + uhdas - ns.matmul(ns.matmul(uhdas, v), vh)
    if full_matrices and m > k:
        du = _ns_cat(ns, [du, ns.zeros_like(du, shape=bs + (m, m - k))], -1)
    if full_matrices and n > k:
        dvh = _ns_cat(ns, [dvh, ns.zeros_like(dvh, shape=bs + (n - k, n))], -2)
    return du, ds, dvh


# Python entry points for linalg.py and _composites_reductions_linalg.py
# (private ops get no def of their own in the exported namespace).
def _linalg_svd_op(x, full_matrices=False, compute_uv=True):
    return _op__linalg_svd(x, full_matrices, compute_uv)


def _linalg_slogdet_op(x):
    return _op__linalg_slogdet(x)


def _max_dim_op(x, dim, keepdim):
    return _op__max_dim(x, dim, keepdim)


def _min_dim_op(x, dim, keepdim):
    return _op__min_dim(x, dim, keepdim)


def _linalg_svdvals_op(x):
    # torch's linalg_svdvals: U and Vh are computed only where a derivative
    # may need them (grad mode and a tensor that requires grad, or a
    # tangent while forward AD is active)
    cdef Tensor t = <Tensor>x if isinstance(x, Tensor) else None
    cdef bint uv = t is not None and (
        (rg_tls_grad_enabled and _needs(t)) or
        (_forward_grad_slot != NULL and (t._fw_grads is not None or
                                         (t._base is not None and t._base._fw_grads is not None))))
    return _op__linalg_svd(x, False, uv)[1]
