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
# gradients in _op_support.pxi choose.
#
# Included before _op_support.pxi; pure NumPy, float dtypes as given (no
# upcast: every temporary has the operands' dtype).
#
# Without groups, NumPy float32/float64 operands of one dtype and a column
# matrix of depth <= 576 take _conv_loops.pxi's per-image kernels instead
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
    O, Cg, kh, kw = w.shape
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
    O, Cg, kh, kw = w.shape
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
    buf, Hp, Wp = _conv_flat_padded(x, kh, kw, padding, dilation)
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


cdef inline bint _shift_worth(Py_ssize_t pixels):
    # the shifted GEMMs are batched per image: below this many pixels per
    # image they are too small, and one im2col GEMM over the batch wins
    return pixels >= 64
