# cython: language_level=3
# retrograd.core._nn_loops: the array-level loops of convolution and
# pooling, for the nn kernels (_kernels_nn.pxi). Declared in _nn_loops.pxd;
# private to core. Three parts:
#
#   1. per-image column-matrix convolution (C loops for the column copies),
#   2. max_pool2d's backward when the windows tile the input (C loops),
#   3. stride-1 convolution as shifted GEMMs (pure NumPy), for what 1 does
#      not take.
#
# Nothing here records a graph or knows a Tensor: arrays in, arrays out.

cimport numpy as _cnp
import numpy as np
from retrograd.core._loop_support cimport _real, _loop_typenum, _loop_same

_cnp.import_array()


# --- 1. column-matrix convolution ---------------------------------------------
#
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
# k_conv2d and its gradients (_kernels_nn.pxi) choose (_cols_conv_ok) and
# fall back to the shifted GEMMs below otherwise. Every temporary has the
# operands' dtype.

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
    return (type(a) is _cnp.ndarray and _cnp.PyArray_TYPE(<_cnp.ndarray>a) == t
            and _cnp.PyArray_ISALIGNED(<_cnp.ndarray>a) and _cnp.PyArray_ISNOTSWAPPED(<_cnp.ndarray>a))


cdef bint _cols_conv_ok(object a, object b, Py_ssize_t depth):
    # both NumPy float32/float64 arrays of one dtype, aligned and native, a
    # column matrix of at most _COLS_MAX_DEPTH rows (groups and stride
    # checked by the caller)
    cdef int t = _cnp.PyArray_TYPE(<_cnp.ndarray>a) if type(a) is _cnp.ndarray else -1
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


# --- 2. max_pool2d backward on tiling windows -----------------------------------
#
# One-pass C loop for max_pool2d's backward when the windows tile the input
# (stride == kernel, no padding or dilation, H and W multiples of the
# kernel: the usual 2x2 pooling of a CNN). The ufunc version compares the
# input with the repeated result and, after a relu (windows of tied zeros),
# needs two boolean passes per kernel position to keep each window's first
# maximum; this loop finds it in one scan.
#
# Same rule as k_max_pool2d_backward_fast: the gradient goes to the first
# window position in scan order holding the maximum, as torch (for a NaN
# maximum the first NaN, where torch's CPU kernel takes the last); every
# other position gets exactly 0.
# Only for C-contiguous float32/float64 arrays of one dtype (returns None
# otherwise: the caller falls back).

cdef void _max_pool_tiled_grad_loop(_real* x, _real* r, _real* g, _real* gx, Py_ssize_t planes,
                                    Py_ssize_t Ho, Py_ssize_t Wo, Py_ssize_t kh,
                                    Py_ssize_t kw) noexcept nogil:
    # gx is zero on entry; x and gx are (planes, Ho*kh, Wo*kw), r and g
    # (planes, Ho, Wo). The scan stops at the first hit: after a relu most
    # windows of zeros hit at their first position.
    cdef Py_ssize_t W = Wo * kw, p, ho, wo, i, j, k, base
    cdef _real m
    cdef bint nan
    k = 0
    for p in range(planes):
        for ho in range(Ho):
            for wo in range(Wo):
                m = r[k]
                nan = m != m
                base = (p * Ho + ho) * kh * W + wo * kw
                for i in range(kh):
                    for j in range(kw):
                        if x[base + i * W + j] == m or (nan and x[base + i * W + j] != x[base + i * W + j]):
                            gx[base + i * W + j] = g[k]
                            break
                    else:
                        continue
                    break
                k += 1


cdef void _max_pool_2x2_grad_loop(_real* x, _real* r, _real* g, _real* gx, Py_ssize_t rows,
                                  Py_ssize_t Wo) noexcept nogil:
    # The 2x2 case without branches on the data (the position of a window's
    # maximum is random: a branch on it mispredicts), so the compiler can
    # vectorize it. rows = planes * Ho output rows; every gx element written.
    cdef Py_ssize_t W = 2 * Wo, q, wo
    cdef _real* x0
    cdef _real* x1
    cdef _real* y0
    cdef _real* y1
    cdef _real* rr
    cdef _real* gg
    cdef _real m, a, b, c, d, gk
    cdef int nan, ha, hb, hc, hd
    for q in range(rows):
        x0 = x + q * 2 * W
        x1 = x0 + W
        y0 = gx + q * 2 * W
        y1 = y0 + W
        rr = r + q * Wo
        gg = g + q * Wo
        for wo in range(Wo):
            m = rr[wo]
            gk = gg[wo]
            a = x0[2 * wo]
            b = x0[2 * wo + 1]
            c = x1[2 * wo]
            d = x1[2 * wo + 1]
            nan = m != m
            ha = (a == m) | (nan & (a != a))
            hb = ((b == m) | (nan & (b != b))) & (1 - ha)
            hc = ((c == m) | (nan & (c != c))) & (1 - ha) & (1 - hb)
            hd = ((d == m) | (nan & (d != d))) & (1 - ha) & (1 - hb) & (1 - hc)
            y0[2 * wo] = gk if ha else 0
            y0[2 * wo + 1] = gk if hb else 0
            y1[2 * wo] = gk if hc else 0
            y1[2 * wo + 1] = gk if hd else 0


cdef object _loop_max_pool2d_backward_tiled(object g, object x4, object r, tuple ks, tuple st,
                                            tuple pd, tuple dl, Py_ssize_t Ho, Py_ssize_t Wo,
                                            Py_ssize_t H, Py_ssize_t W):
    # x4 (N, C, H, W) the (unpadded: checked against the input's H, W)
    # input, r and g (N, C, Ho, Wo); None where the windows do not tile x4
    # or the arrays are not for the loop
    cdef Py_ssize_t kh = ks[0], kw = ks[1]
    if not (st[0] == kh and st[1] == kw and dl[0] == 1 and dl[1] == 1 and pd[0] == 0 and pd[1] == 0):
        return None
    cdef int t = _loop_typenum(x4)
    if t < 0 or _cnp.PyArray_NDIM(<_cnp.ndarray>x4) != 4 or not _loop_same(r, g, t):
        return None
    if _loop_typenum(r) != t or _cnp.PyArray_NDIM(<_cnp.ndarray>r) != 4:
        return None
    cdef _cnp.npy_intp* dx = _cnp.PyArray_DIMS(<_cnp.ndarray>x4)
    cdef _cnp.npy_intp* dr = _cnp.PyArray_DIMS(<_cnp.ndarray>r)
    if (dr[0] != dx[0] or dr[1] != dx[1] or dr[2] != Ho or dr[3] != Wo
            or dx[2] != Ho * kh or dx[3] != Wo * kw or dx[2] != H or dx[3] != W):
        return None
    cdef Py_ssize_t planes = dx[0] * dx[1]
    cdef _cnp.ndarray gx
    if kh == 2 and kw == 2:
        gx = <_cnp.ndarray>_cnp.PyArray_EMPTY(4, dx, t, 0)
        if t == _cnp.NPY_DOUBLE:
            with nogil:
                _max_pool_2x2_grad_loop(<double*>_cnp.PyArray_DATA(<_cnp.ndarray>x4),
                                        <double*>_cnp.PyArray_DATA(<_cnp.ndarray>r),
                                        <double*>_cnp.PyArray_DATA(<_cnp.ndarray>g),
                                        <double*>_cnp.PyArray_DATA(gx), planes * Ho, Wo)
        else:
            with nogil:
                _max_pool_2x2_grad_loop(<float*>_cnp.PyArray_DATA(<_cnp.ndarray>x4),
                                        <float*>_cnp.PyArray_DATA(<_cnp.ndarray>r),
                                        <float*>_cnp.PyArray_DATA(<_cnp.ndarray>g),
                                        <float*>_cnp.PyArray_DATA(gx), planes * Ho, Wo)
        return gx
    gx = <_cnp.ndarray>_cnp.PyArray_ZEROS(4, dx, t, 0)
    if t == _cnp.NPY_DOUBLE:
        with nogil:
            _max_pool_tiled_grad_loop(<double*>_cnp.PyArray_DATA(<_cnp.ndarray>x4),
                                      <double*>_cnp.PyArray_DATA(<_cnp.ndarray>r),
                                      <double*>_cnp.PyArray_DATA(<_cnp.ndarray>g),
                                      <double*>_cnp.PyArray_DATA(gx), planes, Ho, Wo, kh, kw)
    else:
        with nogil:
            _max_pool_tiled_grad_loop(<float*>_cnp.PyArray_DATA(<_cnp.ndarray>x4),
                                      <float*>_cnp.PyArray_DATA(<_cnp.ndarray>r),
                                      <float*>_cnp.PyArray_DATA(<_cnp.ndarray>g),
                                      <float*>_cnp.PyArray_DATA(gx), planes, Ho, Wo, kh, kw)
    return gx


# --- 3. shifted-GEMM convolution ----------------------------------------------
#
# Stride-1 convolution kernels without a full im2col ("shifted GEMMs").
#
# Each image is zero-padded and flattened with the padded width Wp as row
# pitch. Output pixel p = ho*Wp + wo then reads tap (i, j) at p + i*dh*Wp +
# j*dw, so tap (i, j) of the whole batch is ONE strided view of the padded
# buffer (N, C, L) and a convolution is a sum over taps of
# W[:, :, i, j] @ view: batched GEMMs straight from the buffer, in NCHW
# order (no transpose copy of the result), instead of a kh*kw times larger
# column matrix written and read back. Columns wo >= Wo of a row are
# computed on neighbouring pixels and cropped. Used where each GEMM's inner
# dimension is large enough to run BLAS at full speed; k_conv2d and its two
# gradients (_kernels_nn.pxi) choose.
#
# Pure NumPy, float dtypes as given (no upcast: every temporary has the
# operands' dtype).
#
# Without groups, NumPy float32/float64 operands of one dtype and a column
# matrix of depth <= 576 take the per-image kernels of part 1 instead
# (C loops for the column copies); these remain for the rest (groups, deep
# layers, mixed dtypes).

cdef tuple _conv_flat_padded(object x, int kh, int kw, tuple padding, tuple dilation):
    # (buf, Hp, Wp): buf (N, C, Hp*Wp + (kw-1)*dw), x zero-padded; the tail
    # lets the last row's cropped columns read past the image end. Only the
    # padding frame is zeroed (not the whole buffer, then overwritten).
    cdef Py_ssize_t pt = padding[0], pb = padding[1], pl = padding[2], pr = padding[3]
    cdef Py_ssize_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3]
    cdef Py_ssize_t Hp = H + pt + pb, Wp = W + pl + pr
    cdef Py_ssize_t P = Hp * Wp, tail = (kw - 1) * dilation[1]
    buf = np.empty((N, C, P + tail), dtype=x.dtype)
    b4 = buf[:, :, :P].reshape(N, C, Hp, Wp)
    if pt:
        b4[:, :, :pt] = 0
    if pb:
        b4[:, :, Hp - pb:] = 0
    if pl:
        b4[:, :, pt:Hp - pb, :pl] = 0
    if pr:
        b4[:, :, pt:Hp - pb, Wp - pr:] = 0
    if tail:
        buf[:, :, P:] = 0
    b4[:, :, pt:pt + H, pl:pl + W] = x
    return buf, Hp, Wp


cdef object _shift_gemm_sum(list mats, object src, list offs, Py_ssize_t L, int groups):
    # sum over taps t of mats[t] (G, Mg, Kg) @ src[n, g, :, offs[t]:offs[t] + L]
    # -> (N, G*Mg, L); src is (N, G*Kg, S)
    N, K, S = src.shape
    s4 = src.reshape(N, groups, K // groups, S)
    cdef Py_ssize_t o = offs[0]
    out = np.matmul(mats[0], s4[:, :, :, o:o + L])
    cdef Py_ssize_t t
    if len(offs) > 1:
        tmp = np.empty_like(out)
        for t in range(1, len(offs)):
            o = offs[t]
            np.matmul(mats[t], s4[:, :, :, o:o + L], out=tmp)
            out += tmp
    return out.reshape(N, -1, L)


cdef object _gather_taps(object buf, Py_ssize_t base, int kh, int kw, int dh, int dw, Py_ssize_t Wp,
                         Py_ssize_t L):
    # (N, C*kh*kw, L): every tap of every channel copied out (an im2col per
    # image, on the pitched layout)
    N, C = buf.shape[0], buf.shape[1]
    cols = np.empty((N, C, kh, kw, L), dtype=buf.dtype)
    cdef Py_ssize_t i, j, o
    for i in range(kh):
        for j in range(kw):
            o = base + i * dh * Wp + j * dw
            cols[:, :, i, j] = buf[:, :, o:o + L]
    return cols.reshape(N, C * kh * kw, L)


cdef object _im2col_per_image(object buf, Py_ssize_t base, object w, int dh, int dw, Py_ssize_t Wp,
                              Py_ssize_t L):
    # (N, O, L): without groups and with a shallow GEMM (depth C*kh*kw of at
    # most 576, e.g. 64 channels of 3x3), each image's taps are copied into
    # one small column matrix, reused for every image (it stays in cache),
    # and multiplied in one GEMM of that depth. A GEMM per tap is as shallow
    # as the channel count and then needs kh*kw - 1 passes summing
    # image-sized partial results: a 16->32 channel 3x3 layer on 32 images
    # of 32x32 took 8.5 ms per tap and takes 6.0 here (OpenBLAS, one
    # thread); a column matrix of the whole batch (20 MB) was slower in the
    # training step than either.
    N, C = buf.shape[0], buf.shape[1]
    O, _Cg, kh, kw = w.shape
    wm = w.reshape(O, C * kh * kw)
    out = np.empty((N, O, L), dtype=np.result_type(buf.dtype, w.dtype))
    cols = np.empty((C, kh, kw, L), dtype=buf.dtype)
    c2 = cols.reshape(C * kh * kw, L)
    cdef Py_ssize_t n, i, j, o
    for n in range(N):
        b = buf[n]
        for i in range(kh):
            for j in range(kw):
                o = base + i * dh * Wp + j * dw
                cols[:, i, j] = b[:, o:o + L]
        np.matmul(wm, c2, out=out[n])
    return out


cdef object _shift_conv(object buf, Py_ssize_t base, object w, int dh, int dw, Py_ssize_t Wp,
                        Py_ssize_t L, int groups):
    # (N, O, L): correlation of buf (N, C, S) with w (O, C/groups, kh, kw)
    # for the L positions starting at base. A GEMM per tap needs depth
    # (C/groups >= 16); with fewer channels the width taps are gathered
    # first (a copy kw times the input, each GEMM kw times deeper), and with
    # fewer still all taps (im2col, for a first layer on RGB images).
    O, Cg, kh, kw = w.shape
    cdef Py_ssize_t i, j, Lc
    if groups == 1 and Cg * kh * kw <= 576:
        return _im2col_per_image(buf, base, w, dh, dw, Wp, L)
    if Cg < 16 and Cg * kw < 16:
        return _shift_gemm_sum([w.reshape(groups, O // groups, Cg * kh * kw)],
                               _gather_taps(buf, base, kh, kw, dh, dw, Wp, L), [0], L, groups)
    if Cg < 16 and kw > 1:
        N, C = buf.shape[0], buf.shape[1]
        Lc = L + (kh - 1) * dh * Wp
        cols = np.empty((N, C, kw, Lc), dtype=buf.dtype)
        for j in range(kw):
            cols[:, :, j] = buf[:, :, base + j * dw:base + j * dw + Lc]
        mats = [np.ascontiguousarray(w[:, :, i, :]).reshape(groups, O // groups, Cg * kw)
                for i in range(kh)]
        return _shift_gemm_sum(mats, cols.reshape(N, C * kw, Lc), [i * dh * Wp for i in range(kh)],
                               L, groups)
    mats = [np.ascontiguousarray(w[:, :, i, j]).reshape(groups, O // groups, Cg)
            for i in range(kh) for j in range(kw)]
    return _shift_gemm_sum(mats, buf, [base + i * dh * Wp + j * dw for i in range(kh) for j in range(kw)],
                           L, groups)


cdef object _conv2d_shift(object x, object w, tuple padding, tuple dilation, int groups):
    # stride-1 forward; x (N, C, H, W) -> (N, O, Ho, Wo)
    O, _Cg, kh, kw = w.shape
    N = x.shape[0]
    buf, Hp, Wp = _conv_flat_padded(x, kh, kw, padding, dilation)
    Ho, Wo = Hp - (kh - 1) * dilation[0], Wp - (kw - 1) * dilation[1]
    if Ho <= 0 or Wo <= 0:
        raise RuntimeError(
            f"Calculated padded input size per channel: ({Hp} x {Wp}). Kernel size: "
            f"({(kh - 1) * dilation[0] + 1} x {(kw - 1) * dilation[1] + 1}). Kernel size can't be "
            f"greater than actual input size")
    out = _shift_conv(buf, 0, w, dilation[0], dilation[1], Wp, Ho * Wp, groups)
    return np.ascontiguousarray(out.reshape(N, O, Ho, Wp)[:, :, :, :Wo])


cdef object _conv2d_input_grad_shift(object g, object w, tuple input_shape, tuple padding,
                                     tuple dilation, int groups):
    # The transpose of the stride-1 forward: a full correlation of g with
    # the flipped, in/out-swapped weight. g is laid out on the padded-input
    # pitch Wp, zero around it, with maxoff zeros in front: padded-input
    # position q then reads g at q - off(i, j), i.e. gb[maxoff + q - off].
    # Only the rows of the unpadded input are computed.
    N, C, H, W = input_shape
    O, Cg, kh, kw = w.shape
    cdef int dh = dilation[0], dw = dilation[1]
    cdef Py_ssize_t pt = padding[0], pb = padding[1], pl = padding[2], pr = padding[3]
    cdef Py_ssize_t Hp = H + pt + pb, Wp = W + pl + pr
    cdef Py_ssize_t Ho = g.shape[2], Wo = g.shape[3]
    cdef Py_ssize_t maxoff = (kh - 1) * dh * Wp + (kw - 1) * dw
    gb = np.zeros((N, O, maxoff + Hp * Wp + (kw - 1) * dw), dtype=g.dtype)
    gb[:, :, maxoff:maxoff + Ho * Wp].reshape(N, O, Ho, Wp)[:, :, :, :Wo] = g
    # (G, Og, Cg, kh, kw) -> (G, Cg, Og, kh, kw), flipped: (C, Og, kh, kw)
    wf = w.reshape(groups, O // groups, Cg, kh, kw)[:, :, :, ::-1, ::-1] \
        .transpose(0, 2, 1, 3, 4).reshape(C, O // groups, kh, kw)
    # flipped tap (i, j) reads gb[maxoff + q - (kh-1-i)*dh*Wp - (kw-1-j)*dw]
    # = gb[q + i*dh*Wp + j*dw]: a forward correlation from base q0 = pt*Wp
    out = _shift_conv(gb, pt * Wp, wf, dh, dw, Wp, H * Wp, groups)
    return np.ascontiguousarray(out.reshape(N, C, H, Wp)[:, :, :, pl:pl + W])


cdef object _conv2d_weight_grad_shift(object x, object g, tuple weight_shape, tuple padding,
                                      tuple dilation, int groups):
    # gw[o, c, i, j] = sum over images and output pixels of g * the input at
    # tap (i, j): per tap one batched GEMM (O, L) @ (L, C) over the shifted
    # view, g zero in the cropped columns; then the sum over the batch.
    O, Cg, kh, kw = weight_shape
    N = x.shape[0]
    buf, _Hp, Wp = _conv_flat_padded(x, kh, kw, padding, dilation)
    cdef Py_ssize_t Ho = g.shape[2], Wo = g.shape[3]
    cdef Py_ssize_t L = Ho * Wp, off
    cdef int dh = dilation[0], dw = dilation[1]
    cdef Py_ssize_t i, j
    gz = np.empty((N, O, Ho, Wp), dtype=np.result_type(x.dtype, g.dtype))
    gz[:, :, :, :Wo] = g
    if Wp != Wo:
        gz[:, :, :, Wo:] = 0
    gz = gz.reshape(N, groups, O // groups, L)
    if Cg < 8:
        # too few channels for a GEMM per tap: all taps gathered, one
        # batched GEMM (O, L) @ (L, Cg*kh*kw) per image
        cols = _gather_taps(buf, 0, kh, kw, dh, dw, Wp, L).reshape(N, groups, Cg * kh * kw, L)
        return np.matmul(gz, cols.swapaxes(-1, -2)).sum(axis=0).reshape(tuple(weight_shape))
    b4 = buf.reshape(N, groups, Cg, buf.shape[2])
    out = np.empty((kh, kw, groups, O // groups, Cg), dtype=gz.dtype)
    tmp = np.empty((N, groups, O // groups, Cg), dtype=gz.dtype)
    for i in range(kh):
        for j in range(kw):
            off = i * dh * Wp + j * dw
            np.matmul(gz, b4[:, :, :, off:off + L].swapaxes(-1, -2), out=tmp)
            tmp.sum(axis=0, out=out[i, j])
    return np.ascontiguousarray(out.reshape(kh, kw, O, Cg).transpose(2, 3, 0, 1))
