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
# otherwise: the caller falls back). Included after _elementwise_loops.pxi.

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
