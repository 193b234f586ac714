# Stride-1 convolution without groups as one GEMM per image on a column
# matrix that stays in cache (C loops for the column copies).
#
# Per image n: cols (C*kh*kw, Ho*Wo) holds the input under every tap (zero
# where a tap reads the padding), written by a C loop; then
#   forward       out[n]  = W (O, K) @ cols                       (K = C*kh*kw)
#   input grad    gcols   = W.T (K, O) @ g[n], summed back into gx[n] (col2im)
#   weight grad   gw.T   += cols @ g[n].T (K, O)
# The column matrix is reused for every image (K*Ho*Wo elements: 576 KB for
# 16 channels of 3x3 on 32x32 in float32) and never round-trips through
# memory; a column matrix of the whole batch (20 MB) was slower, and NumPy
# slice copies of the taps cost as much as the GEMMs themselves (rows of
# Wo elements each, one iterator step per row). The output comes out in
# NCHW order without padded-pitch columns to crop, and nothing of the batch
# is padded or copied but the column matrix.
#
# Only for NumPy float32/float64 operands of one dtype (the loops are typed);
# k_conv2d and its gradients in _op_support.pxi choose (_cols_conv_ok) and
# fall back to _conv_kernels.pxi otherwise. Every temporary has the
# operands' dtype. Included after _elementwise_loops.pxi (the _real fused
# type) and before _op_support.pxi.

from libc.string cimport memset as _c_memset, memcpy as _c_memcpy

cdef extern from *:
    """
    /* d[i] += s[i]: restrict lets the compiler vectorize without an overlap
       check per call (col2im's rows are a few dozen elements) */
    static inline void rg_conv_acc_f(float* __restrict d, const float* __restrict s, Py_ssize_t n)
    { for (Py_ssize_t i = 0; i < n; i++) d[i] += s[i]; }
    static inline void rg_conv_acc_d(double* __restrict d, const double* __restrict s, Py_ssize_t n)
    { for (Py_ssize_t i = 0; i < n; i++) d[i] += s[i]; }
    """
    void _c_conv_acc_f "rg_conv_acc_f" (float* d, const float* s, Py_ssize_t n) noexcept nogil
    void _c_conv_acc_d "rg_conv_acc_d" (double* d, const double* s, Py_ssize_t n) noexcept nogil

# the largest column matrix depth C*kh*kw taken here: 64 channels of 3x3
cdef Py_ssize_t _COLS_MAX_DEPTH = 576


cdef void _im2col_img(const _real* src, _real* cols, Py_ssize_t C, Py_ssize_t H, Py_ssize_t W,
                      Py_ssize_t kh, Py_ssize_t kw, Py_ssize_t dh, Py_ssize_t dw, Py_ssize_t pt,
                      Py_ssize_t pl, Py_ssize_t Ho, Py_ssize_t Wo) noexcept nogil:
    # cols[c, i, j, y, x] = src[c, y + i*dh - pt, x + j*dw - pl], 0 where that
    # is outside src (C, H, W); cols is (C, kh, kw, Ho, Wo), both C-contiguous
    cdef Py_ssize_t c, i, j, y, sy, dy, dx, x0, x1
    cdef _real* row = cols
    for c in range(C):
        for i in range(kh):
            dy = i * dh - pt
            for j in range(kw):
                dx = j * dw - pl
                # output columns [x0, x1) read inside the image
                x0 = -dx if dx < 0 else 0
                if x0 > Wo:
                    x0 = Wo
                x1 = W - dx if W - dx < Wo else Wo
                if x1 < x0:
                    x1 = x0
                for y in range(Ho):
                    sy = y + dy
                    if sy < 0 or sy >= H:
                        _c_memset(row, 0, Wo * sizeof(_real))
                    else:
                        if x0 > 0:
                            _c_memset(row, 0, x0 * sizeof(_real))
                        if x1 > x0:
                            _c_memcpy(row + x0, src + (c * H + sy) * W + x0 + dx, (x1 - x0) * sizeof(_real))
                        if x1 < Wo:
                            _c_memset(row + x1, 0, (Wo - x1) * sizeof(_real))
                    row += Wo


cdef void _col2im_img(const _real* cols, _real* dst, Py_ssize_t C, Py_ssize_t H, Py_ssize_t W,
                      Py_ssize_t kh, Py_ssize_t kw, Py_ssize_t dh, Py_ssize_t dw, Py_ssize_t pt,
                      Py_ssize_t pl, Py_ssize_t Ho, Py_ssize_t Wo) noexcept nogil:
    # the transpose of _im2col_img: dst (C, H, W) = the sum over taps (i, j),
    # in that order, of cols[c, i, j, y, x] at dst[c, y + i*dh - pt, x + j*dw - pl]
    # (what falls on the padding is dropped)
    cdef Py_ssize_t c, i, j, y, dy, dx, x0, x1, y0, y1
    cdef const _real* row
    cdef _real* d
    _c_memset(dst, 0, C * H * W * sizeof(_real))
    for c in range(C):
        for i in range(kh):
            dy = i * dh - pt
            y0 = -dy if dy < 0 else 0
            y1 = H - dy if H - dy < Ho else Ho
            for j in range(kw):
                dx = j * dw - pl
                x0 = -dx if dx < 0 else 0
                x1 = W - dx if W - dx < Wo else Wo
                if x1 <= x0:
                    continue
                for y in range(y0, y1):
                    row = cols + (((c * kh + i) * kw + j) * Ho + y) * Wo
                    d = dst + (c * H + y + dy) * W + dx
                    if _real is float:
                        _c_conv_acc_f(d + x0, row + x0, x1 - x0)
                    else:
                        _c_conv_acc_d(d + x0, row + x0, x1 - x0)


cdef inline void _im2col_any(_cnp.ndarray src, Py_ssize_t soff, _cnp.ndarray cols, Py_ssize_t C,
                             Py_ssize_t H, Py_ssize_t W, Py_ssize_t kh, Py_ssize_t kw, Py_ssize_t dh,
                             Py_ssize_t dw, Py_ssize_t pt, Py_ssize_t pl, Py_ssize_t Ho,
                             Py_ssize_t Wo) noexcept:
    # image at element offset soff of src; src and cols of one float dtype
    if _cnp.PyArray_TYPE(src) == _cnp.NPY_DOUBLE:
        _im2col_img((<double*>_cnp.PyArray_DATA(src)) + soff, <double*>_cnp.PyArray_DATA(cols),
                    C, H, W, kh, kw, dh, dw, pt, pl, Ho, Wo)
    else:
        _im2col_img((<float*>_cnp.PyArray_DATA(src)) + soff, <float*>_cnp.PyArray_DATA(cols),
                    C, H, W, kh, kw, dh, dw, pt, pl, Ho, Wo)


cdef inline void _col2im_any(_cnp.ndarray cols, _cnp.ndarray dst, Py_ssize_t doff, Py_ssize_t C,
                             Py_ssize_t H, Py_ssize_t W, Py_ssize_t kh, Py_ssize_t kw, Py_ssize_t dh,
                             Py_ssize_t dw, Py_ssize_t pt, Py_ssize_t pl, Py_ssize_t Ho,
                             Py_ssize_t Wo) noexcept:
    if _cnp.PyArray_TYPE(dst) == _cnp.NPY_DOUBLE:
        _col2im_img(<double*>_cnp.PyArray_DATA(cols), (<double*>_cnp.PyArray_DATA(dst)) + doff,
                    C, H, W, kh, kw, dh, dw, pt, pl, Ho, Wo)
    else:
        _col2im_img(<float*>_cnp.PyArray_DATA(cols), (<float*>_cnp.PyArray_DATA(dst)) + doff,
                    C, H, W, kh, kw, dh, dw, pt, pl, Ho, Wo)


cdef inline bint _cols_array_ok(object a, int t):
    # a NumPy array of type number t whose elements the C loops may read
    # through a typed pointer: aligned and in native byte order (a '>f8'
    # array has NPY_DOUBLE's type number too). Contiguity is not needed:
    # the kernels take np.ascontiguousarray of their operands, which keeps
    # the byte order and alignment of an array that is already contiguous.
    return (type(a) is ndarray and _cnp.PyArray_TYPE(<_cnp.ndarray>a) == t
            and _cnp.PyArray_ISALIGNED(<_cnp.ndarray>a) and _cnp.PyArray_ISNOTSWAPPED(<_cnp.ndarray>a))


cdef bint _cols_conv_ok(object a, object b, Py_ssize_t depth):
    # both NumPy float32/float64 arrays of one dtype, aligned and native, a
    # column matrix of at most _COLS_MAX_DEPTH rows (groups and stride
    # checked by the caller)
    cdef int t = _cnp.PyArray_TYPE(<_cnp.ndarray>a) if type(a) is ndarray else -1
    if t != _cnp.NPY_FLOAT and t != _cnp.NPY_DOUBLE:
        return False
    if not _cols_array_ok(a, t) or not _cols_array_ok(b, t):
        return False
    return depth <= _COLS_MAX_DEPTH


cdef tuple _cols_out_size(Py_ssize_t H, Py_ssize_t W, Py_ssize_t kh, Py_ssize_t kw, tuple padding,
                          tuple dilation):
    cdef Py_ssize_t Hp = H + padding[0] + padding[1], Wp = W + padding[2] + padding[3]
    cdef Py_ssize_t Ho = Hp - (kh - 1) * dilation[0], Wo = Wp - (kw - 1) * dilation[1]
    if Ho <= 0 or Wo <= 0:
        raise RuntimeError(
            f"Calculated padded input size per channel: ({Hp} x {Wp}). Kernel size: "
            f"({(kh - 1) * dilation[0] + 1} x {(kw - 1) * dilation[1] + 1}). Kernel size can't be "
            f"greater than actual input size")
    return Ho, Wo


cdef object _conv2d_cols(object x, object w, tuple padding, tuple dilation, object bias=None):
    # stride-1 forward without groups; x (N, C, H, W) -> (N, O, Ho, Wo), plus
    # bias (O,) of x's dtype if given, added to each image's output in cache
    cdef _cnp.ndarray xc = np.ascontiguousarray(x)
    cdef Py_ssize_t N = xc.shape[0], C = xc.shape[1], H = xc.shape[2], W = xc.shape[3]
    cdef Py_ssize_t O = w.shape[0], kh = w.shape[2], kw = w.shape[3]
    cdef Py_ssize_t Ho, Wo
    Ho, Wo = _cols_out_size(H, W, kh, kw, padding, dilation)
    cdef Py_ssize_t K = C * kh * kw, L = Ho * Wo, n
    cdef Py_ssize_t pt = padding[0], pl = padding[2], dh = dilation[0], dw = dilation[1]
    wm = np.ascontiguousarray(w).reshape(O, K)
    out = np.empty((N, O, L), dtype=xc.dtype)
    cdef _cnp.ndarray cols = np.empty((K, L), dtype=xc.dtype)
    bcol = None if bias is None else np.asarray(bias).reshape(O, 1)
    for n in range(N):
        _im2col_any(xc, n * C * H * W, cols, C, H, W, kh, kw, dh, dw, pt, pl, Ho, Wo)
        on = out[n]
        np.matmul(wm, cols, out=on)
        if bcol is not None:
            np.add(on, bcol, out=on)
    return out.reshape(N, O, Ho, Wo)


cdef object _conv2d_input_grad_cols(object g, object w, tuple input_shape, tuple padding,
                                    tuple dilation):
    # the transpose of _conv2d_cols in its input: per image the columns'
    # gradient W.T @ g[n] in one GEMM (depth O), summed back into the image
    cdef Py_ssize_t N = input_shape[0], C = input_shape[1], H = input_shape[2], W = input_shape[3]
    cdef Py_ssize_t O = w.shape[0], kh = w.shape[2], kw = w.shape[3]
    cdef _cnp.ndarray gc = np.ascontiguousarray(g)
    cdef Py_ssize_t Ho = gc.shape[2], Wo = gc.shape[3]
    cdef Py_ssize_t K = C * kh * kw, L = Ho * Wo, n
    cdef Py_ssize_t pt = padding[0], pl = padding[2], dh = dilation[0], dw = dilation[1]
    wt = np.ascontiguousarray(np.asarray(w).reshape(O, K).T)
    g3 = gc.reshape(N, O, L)
    cdef _cnp.ndarray gx = np.empty((N, C, H, W), dtype=gc.dtype)
    cdef _cnp.ndarray cols = np.empty((K, L), dtype=gc.dtype)
    for n in range(N):
        np.matmul(wt, g3[n], out=cols)
        _col2im_any(cols, gx, n * C * H * W, C, H, W, kh, kw, dh, dw, pt, pl, Ho, Wo)
    return gx


cdef object _conv2d_weight_grad_cols(object x, object g, tuple weight_shape, tuple padding,
                                     tuple dilation):
    # gw = the sum over images of g[n] (O, L) @ cols.T, accumulated as its
    # transpose cols @ g[n].T (K, O): the faster of the two GEMM layouts
    cdef _cnp.ndarray xc = np.ascontiguousarray(x)
    cdef Py_ssize_t N = xc.shape[0], C = xc.shape[1], H = xc.shape[2], W = xc.shape[3]
    cdef Py_ssize_t O = weight_shape[0], kh = weight_shape[2], kw = weight_shape[3]
    gcont = np.ascontiguousarray(g)
    cdef Py_ssize_t Ho = gcont.shape[2], Wo = gcont.shape[3]
    cdef Py_ssize_t K = C * kh * kw, L = Ho * Wo, n
    cdef Py_ssize_t pt = padding[0], pl = padding[2], dh = dilation[0], dw = dilation[1]
    g3 = gcont.reshape(N, O, L)
    cdef _cnp.ndarray cols = np.empty((K, L), dtype=xc.dtype)
    acc = np.zeros((K, O), dtype=xc.dtype)
    tmp = np.empty((K, O), dtype=xc.dtype)
    for n in range(N):
        _im2col_any(xc, n * C * H * W, cols, C, H, W, kh, kw, dh, dw, pt, pl, Ho, Wo)
        if n == 0:
            np.matmul(cols, g3[n].T, out=acc)
        else:
            np.matmul(cols, g3[n].T, out=tmp)
            acc += tmp
    return np.ascontiguousarray(acc.T).reshape(O, C, kh, kw)
