# cython: language_level=3
# retrograd.core._kernels_nn: the kernels of the nn ops (convolution,
# pooling, ...), declared in _kernels_nn.pxd, over the loops of _nn_loops;
# and max_pool2d's indices (rg.nn.functional), which never record a graph.
# Arrays in, arrays out.
#
# Convolution is im2col through sliding_window_view (a strided view, no
# copy) and one batched GEMM per group, or, for stride 1, _nn_loops' column
# matrix or shifted GEMMs; loops run only over the kernel's kh*kw positions
# (col2im, pooling backward), never over pixels.

cimport numpy as _cnp
import numpy as np
from numpy import ndarray
from numpy.lib.stride_tricks import sliding_window_view as _swv
from retrograd.core._array_module cimport _arr, _contig, _on_device_of, _xp
from retrograd.core._dtype_rules cimport k_real_float, _is_bf16, _is_floating_dtype, k_opmath, k_bf16_like
from retrograd.core._arg_checks cimport _int_arg, _norm_dims
from retrograd.core._nn_loops cimport (
    _cols_conv_ok, _conv2d_cols, _conv2d_input_grad_cols, _conv2d_weight_grad_cols,
    _loop_max_pool2d_backward_tiled, _conv2d_shift, _conv2d_input_grad_shift,
    _conv2d_weight_grad_shift, _shift_worth,
)

_cnp.import_array()


cdef tuple _max_shifted(object x, object dim, str name):
    # softmax and log_softmax's common start: (x - its max over dim, the
    # axis), in a float dtype, or (None, an empty copy) for an empty x. The
    # shift is by the max even where it is +inf: torch's softmax of a slice
    # holding +inf is NaN throughout (inf - inf), not [nan, 0, ...].
    axis = _norm_dims(dim, np.ndim(x))      # torch checks the dim before the dtype
    if np.size(x) == 0:
        return None, _arr(x).copy()         # (torch's kernel never runs: no dtype check)
    k_real_float(x, name)
    x = _arr(x)
    if x.dtype.kind not in "fc":
        x = x.astype(np.float64)
    if x.size == 0:
        return None, x.copy()
    return x - np.max(x, axis=axis, keepdims=True), axis


cdef object k_softmax(object x, object dim):
    # max-shifted: exp never overflows
    if _is_bf16(x):                     # in float32, rounded once (Note [bfloat16 kernels])
        return k_bf16_like(k_softmax(k_opmath(x), dim), x)
    s, axis = _max_shifted(x, dim, "softmax")
    if s is None:
        return axis
    e = np.exp(s)
    e /= np.sum(e, axis=axis, keepdims=True)
    return e


cdef object k_log_softmax(object x, object dim):
    if _is_bf16(x):
        return k_bf16_like(k_log_softmax(k_opmath(x), dim), x)
    s, axis = _max_shifted(x, dim, "log_softmax")
    if s is None:
        return axis
    return s - np.log(np.sum(np.exp(s), axis=axis, keepdims=True))


cdef object k_logsigmoid(object x):
    # log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)): stable for any |x|
    x = _arr(k_real_float(x, "logsigmoid"))
    if _is_bf16(x):
        return k_bf16_like(k_logsigmoid(k_opmath(x)), x)
    out = np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))
    return out.astype(np.result_type(x, np.float16), copy=False)


cdef tuple _pair(object v, str what):
    # _int_arg: a float kernel size or stride raises TypeError as torch (int()
    # would truncate it)
    if isinstance(v, (tuple, list)):
        if len(v) == 1:
            return (_int_arg(v[0], what), _int_arg(v[0], what))
        if len(v) != 2:
            raise RuntimeError(f"{what} must be an int or a pair of ints, got {v!r}")
        return (_int_arg(v[0], what), _int_arg(v[1], what))
    return (_int_arg(v, what), _int_arg(v, what))


cdef object _conv_windows(object x, int kh, int kw, tuple stride, tuple padding, tuple dilation,
                          object pad_value=0):
    # A strided view (N, C, Ho, Wo, kh, kw) of the (padded) input: window
    # (ho, wo) at kernel position (i, j) is x_pad[..., ho*sh + i*dh, wo*sw + j*dw].
    cdef int pt = padding[0], pb = padding[1], pl = padding[2], pr = padding[3]
    if pt or pb or pl or pr:
        x = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)), constant_values=pad_value)
    cdef int ekh = (kh - 1) * dilation[0] + 1, ekw = (kw - 1) * dilation[1] + 1
    if x.shape[2] < ekh or x.shape[3] < ekw:
        raise RuntimeError(
            f"Calculated padded input size per channel: ({x.shape[2]} x {x.shape[3]}). Kernel size: "
            f"({ekh} x {ekw}). Kernel size can't be greater than actual input size")
    v = _swv(x, (ekh, ekw), axis=(2, 3)) if type(x) is ndarray else \
        _xp(x).lib.stride_tricks.sliding_window_view(x, (ekh, ekw), axis=(2, 3))
    return v[:, :, ::stride[0], ::stride[1], ::dilation[0], ::dilation[1]]


cdef object _im2col(object x, int kh, int kw, tuple stride, tuple padding, tuple dilation, int groups):
    # (N, G, Cg*kh*kw, Ho*Wo), contiguous: one GEMM operand per (sample, group).
    v = _conv_windows(x, kh, kw, stride, padding, dilation)
    N, C, Ho, Wo = v.shape[0], v.shape[1], v.shape[2], v.shape[3]
    cols = _xp(x).empty((N, C, kh, kw, Ho, Wo), dtype=x.dtype)
    # one strided copy per kernel position (rows stay contiguous; faster
    # than a generic 6-d transpose copy)
    for i in range(kh):
        for j in range(kw):
            cols[:, :, i, j] = v[:, :, :, :, i, j]
    return cols.reshape(N, groups, (C // groups) * kh * kw, Ho * Wo), Ho, Wo


cdef void _check_conv(object x, object w, int groups) except *:
    if np.ndim(x) != 4:
        raise RuntimeError(f"conv2d: expected a 4-D input (N, C, H, W), got {np.ndim(x)}-D")
    if np.ndim(w) != 4:
        raise RuntimeError(f"conv2d: expected a 4-D weight (out_channels, in_channels/groups, kH, kW), "
                           f"got {np.ndim(w)}-D")
    if groups < 1:
        raise RuntimeError("non-positive groups is not supported")
    if w.shape[0] == 0:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least 1 at dimension 0, but "
                           f"got weight of size {list(w.shape)} instead")
    if w.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at "
                           f"dimension 0, but got weight of size {list(w.shape)} instead")
    if x.shape[1] != w.shape[1] * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(w.shape)}, expected input{list(x.shape)} to "
            f"have {w.shape[1] * groups} channels, but got {x.shape[1]} channels instead")


cdef object k_conv2d(object x, object w, object stride, object padding, object dilation, int groups):
    x = _arr(x)
    w = _arr(w)
    if _is_bf16(x) or _is_bf16(w):      # GEMMs in float32, rounded once (Note [bfloat16 kernels])
        return k_bf16_like(k_conv2d(k_opmath(x), k_opmath(w), stride, padding, dilation, groups), x, w)
    _check_conv(x, w, groups)
    O, Cg, kh, kw = w.shape
    N = x.shape[0]
    wm = w.reshape(groups, O // groups, Cg * kh * kw)
    if tuple(stride) == (1, 1) and type(x) is ndarray and _shift_worth(x.shape[2] * x.shape[3]):
        if groups == 1 and _cols_conv_ok(x, w, Cg * kh * kw):
            return _conv2d_cols(x, w, tuple(padding), tuple(dilation))
        return _conv2d_shift(x, w, tuple(padding), tuple(dilation), groups)
    if tuple(stride) == (1, 1):
        cols, Ho, Wo, Wp = _im2col_pitched(x, kh, kw, tuple(padding), tuple(dilation), groups, False)
        out = np.matmul(wm, cols).reshape(O, N, Ho, Wp)      # (G, Og, K) @ (G, K, N*L)
        return _contig(out[:, :, :, :Wo].transpose(1, 0, 2, 3))
    cols, Ho, Wo = _im2col(x, kh, kw, tuple(stride), tuple(padding), tuple(dilation), groups)
    out = np.matmul(wm, cols)                 # (G, Og, K) @ (N, G, K, L) -> (N, G, Og, L)
    return out.reshape(N, O, Ho, Wo)


cdef object k_conv2d_bias(object x, object w, object b, object stride, object padding, object dilation,
                          int groups):
    # k_conv2d + b[:, None, None]; on the column-matrix path the bias is added
    # per image right after its GEMM (same values: one add in the output dtype)
    x = _arr(x)
    w = _arr(w)
    b = _arr(b)
    if _is_bf16(x) or _is_bf16(w) or _is_bf16(b):
        return k_bf16_like(k_conv2d_bias(k_opmath(x), k_opmath(w), k_opmath(b), stride, padding, dilation,
                                         groups), x, w)
    _check_conv(x, w, groups)
    if np.ndim(b) != 1 or b.shape[0] != w.shape[0]:
        raise RuntimeError(f"Given weight of size {list(w.shape)}, expected bias to be 1-dimensional with "
                           f"{w.shape[0]} elements, but got bias of size {list(b.shape)} instead")
    _O, Cg, kh, kw = w.shape
    if groups == 1 and tuple(stride) == (1, 1) and _shift_worth(x.shape[2] * x.shape[3]) \
            and _cols_conv_ok(x, w, Cg * kh * kw) and b.dtype == x.dtype:
        return _conv2d_cols(x, w, tuple(padding), tuple(dilation), b)
    return np.add(k_conv2d(x, w, stride, padding, dilation, groups), b.reshape(-1, 1, 1))


cdef object _pitched_grad(object g, Py_ssize_t Wp):
    # g (N, O, Ho, Wo) as (O, N, Ho, Wp), zero beyond Wo: the layout of
    # _im2col_pitched's columns
    N, O, Ho, Wo = g.shape
    xp = _xp(g)
    gp = xp.zeros((O, N, Ho, Wp), dtype=g.dtype) if Wp != Wo else xp.empty((O, N, Ho, Wp), dtype=g.dtype)
    gp[:, :, :, :Wo] = g.transpose(1, 0, 2, 3)
    return gp


cdef tuple _im2col_pitched(object x, int kh, int kw, tuple padding, tuple dilation, int groups,
                           bint zero_tail):
    # Stride-1 im2col with rows of pitch Wp (the padded width) instead of Wo:
    # window (i, j) of every image is then ONE contiguous range of the
    # flattened padded image (offset i*dh*Wp + j*dw), so each kernel position
    # is a long contiguous copy instead of N*C*Ho short rows. Columns
    # wo >= Wo of each row hold neighbouring pixels (zeroed when zero_tail).
    cdef int pt = padding[0], pb = padding[1], pl = padding[2], pr = padding[3]
    cdef int dh = dilation[0], dw = dilation[1]
    N, C, H, W = x.shape
    Hp, Wp = H + pt + pb, W + pl + pr
    Ho, Wo = Hp - (kh - 1) * dh, Wp - (kw - 1) * dw
    if Ho <= 0 or Wo <= 0:
        raise RuntimeError(
            f"Calculated padded input size per channel: ({Hp} x {Wp}). Kernel size: "
            f"({(kh - 1) * dh + 1} x {(kw - 1) * dw + 1}). Kernel size can't be greater than actual input size")
    # one extra zero row at the bottom: the last window's range runs past
    # the last row by (kw - 1) * dw elements
    xpad = _xp(x).zeros((N, C, Hp + 1, Wp), dtype=x.dtype)
    xpad[:, :, pt:pt + H, pl:pl + W] = x
    xf = xpad.reshape(N, C, (Hp + 1) * Wp)
    L = Ho * Wp
    # channel-major (C, kh, kw, N, L): each group's columns are one matrix
    # (Kg, N*L), so every convolution GEMM is a single large one per group
    cols = _xp(x).empty((C, kh, kw, N, L), dtype=x.dtype)
    xt = xf.transpose(1, 0, 2)
    for i in range(kh):
        for j in range(kw):
            off = i * dh * Wp + j * dw
            cols[:, i, j] = xt[:, :, off:off + L]
    if zero_tail and Wp != Wo:
        cols.reshape(C, kh, kw, N, Ho, Wp)[..., Wo:] = 0
    return cols.reshape(groups, (C // groups) * kh * kw, N * L), Ho, Wo, Wp


cdef object k_conv2d_input_grad(object g, object w, object input_shape, object stride, object padding,
                                object dilation, int groups):
    # The transpose of k_conv2d in its input: GEMM to columns, then col2im
    # (one strided accumulation per kernel position).
    g = _arr(g)
    w = _arr(w)
    if _is_bf16(g) or _is_bf16(w):
        return k_bf16_like(k_conv2d_input_grad(k_opmath(g), k_opmath(w), input_shape, stride, padding, dilation,
                                               groups), g, w)
    xp = _xp(g)
    N, C, H, W = input_shape
    O, Cg, kh, kw = w.shape
    Ho, Wo = g.shape[2], g.shape[3]
    sh, sw = stride[0], stride[1]
    dh, dw = dilation[0], dilation[1]
    pt, pb, pl, pr = padding
    if sh == 1 and sw == 1 and type(g) is ndarray and _shift_worth(H * W):
        if groups == 1 and _cols_conv_ok(g, w, Cg * kh * kw):
            return _conv2d_input_grad_cols(g, w, tuple(input_shape), tuple(padding), tuple(dilation))
        return _conv2d_input_grad_shift(g, w, tuple(input_shape), tuple(padding), tuple(dilation), groups)
    wm = w.reshape(groups, O // groups, Cg * kh * kw)
    if sh == 1 and sw == 1:
        # col2im on the pitched layout of _im2col_pitched: g gets zero
        # columns up to the padded width, and each kernel position is one
        # contiguous range add
        Hp, Wp = H + pt + pb, W + pl + pr
        L = Ho * Wp
        gp = _pitched_grad(g, Wp)
        gcols = np.matmul(np.swapaxes(wm, 1, 2), gp.reshape(groups, O // groups, N * L))
        gcols = gcols.reshape(C, kh, kw, N, L)
        gxf = xp.zeros((C, N, (Hp + 1) * Wp), dtype=gcols.dtype)
        for i in range(kh):
            for j in range(kw):
                off = i * dh * Wp + j * dw
                gxf[:, :, off:off + L] += gcols[:, i, j]
        return _contig(
            gxf.reshape(C, N, Hp + 1, Wp)[:, :, pt:pt + H, pl:pl + W].transpose(1, 0, 2, 3))
    gm = g.reshape(N, groups, O // groups, Ho * Wo)
    gcols = np.matmul(np.swapaxes(wm, 1, 2), gm).reshape(N, C, kh, kw, Ho, Wo)
    gx = xp.zeros((N, C, H + pt + pb, W + pl + pr), dtype=gcols.dtype)
    for i in range(kh):
        for j in range(kw):
            gx[:, :, i * dh:i * dh + sh * (Ho - 1) + 1:sh, j * dw:j * dw + sw * (Wo - 1) + 1:sw] += gcols[:, :, i, j]
    if pt or pb or pl or pr:
        gx = _contig(gx[:, :, pt:pt + H, pl:pl + W])
    return gx


cdef object k_conv2d_weight_grad(object x, object g, object weight_shape, object stride, object padding,
                                 object dilation, int groups):
    x = _arr(x)
    g = _arr(g)
    if _is_bf16(x) or _is_bf16(g):
        return k_bf16_like(k_conv2d_weight_grad(k_opmath(x), k_opmath(g), weight_shape, stride, padding, dilation,
                                                groups), x, g)
    O, Cg, kh, kw = weight_shape
    N = x.shape[0]
    if tuple(stride) == (1, 1) and type(x) is ndarray and _shift_worth(x.shape[2] * x.shape[3]):
        if groups == 1 and _cols_conv_ok(x, g, Cg * kh * kw):
            return _conv2d_weight_grad_cols(x, g, tuple(weight_shape), tuple(padding), tuple(dilation))
        return _conv2d_weight_grad_shift(x, g, tuple(weight_shape), tuple(padding), tuple(dilation), groups)
    if tuple(stride) == (1, 1):
        # pitched channel-major columns (tail zeroed) against g laid out the
        # same way: one GEMM (Og, N*L) @ (N*L, Kg) per group
        cols, Ho, Wo, Wp = _im2col_pitched(x, kh, kw, tuple(padding), tuple(dilation), groups, True)
        gp = _pitched_grad(g, Wp).reshape(groups, O // groups, -1)
        return np.matmul(gp, np.swapaxes(cols, 1, 2)).reshape(tuple(weight_shape))
    else:
        cols, Ho, Wo = _im2col(x, kh, kw, tuple(stride), tuple(padding), tuple(dilation), groups)
    gm = g.reshape(N, groups, O // groups, Ho * Wo)
    if N == 1:
        gw = np.matmul(gm[0], np.swapaxes(cols[0], 1, 2))
    elif groups == 1:
        # one GEMM over (N*L): (O, N*L) @ (N*L, K)
        gw = np.matmul(np.swapaxes(gm[:, 0], 0, 1).reshape(O, -1),
                       np.swapaxes(cols[:, 0], 1, 2).reshape(-1, Cg * kh * kw))[None]
    else:
        gw = np.matmul(gm, np.swapaxes(cols, 2, 3)).sum(axis=0)
    return gw.reshape(tuple(weight_shape))


cdef tuple _pool_params(object x, object kernel_size, object stride, object padding, object dilation,
                        bint ceil_mode):
    if np.ndim(x) not in (3, 4) or 0 in np.shape(x)[-3:]:
        raise RuntimeError(f"pool2d: expected a 3-D (C, H, W) or 4-D (N, C, H, W) input with non-zero "
                           f"C, H, W (only the batch may be empty), got shape {list(np.shape(x))}")
    ks = _pair(kernel_size, "kernel_size")
    st = ks if stride is None or (isinstance(stride, (tuple, list)) and len(stride) == 0) \
        else _pair(stride, "stride")
    pd = _pair(padding, "padding")
    dl = _pair(dilation, "dilation")
    if ks[0] <= 0 or ks[1] <= 0 or st[0] <= 0 or st[1] <= 0 or dl[0] <= 0 or dl[1] <= 0:
        raise RuntimeError("pool2d: kernel_size, stride and dilation must be greater than zero")
    if pd[0] > ks[0] // 2 or pd[1] > ks[1] // 2 or pd[0] < 0 or pd[1] < 0:
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                           f"pad={list(pd)}, kernel_size={list(ks)}")
    return ks, st, pd, dl


cdef object _pool_out_size(object n, object k, object s, object p, object d, bint ceil_mode):
    # torch's pooling_output_shape: with ceil_mode the last window may hang
    # past the padded input, but it must start inside the input or the left
    # padding. (Python ints: the module's cdivision would truncate // .)
    num = n + 2 * p - d * (k - 1) - 1
    if ceil_mode:
        o = -((-num) // s) + 1
        if (o - 1) * s >= n + p:
            o -= 1
    else:
        o = num // s + 1
    return o


cdef tuple _pool_geometry(object x, tuple ks, tuple st, tuple pd, tuple dl, bint ceil_mode):
    # (Ho, Wo, eh, ew): the output size, and how far its last windows reach
    # past the bottom / right padding (ceil_mode only): the kernels pad that
    # much more there (with -inf for max, 0 and a per-window divisor for avg)
    H, W = np.shape(x)[-2], np.shape(x)[-1]
    Ho = _pool_out_size(H, ks[0], st[0], pd[0], dl[0], ceil_mode)
    Wo = _pool_out_size(W, ks[1], st[1], pd[1], dl[1], ceil_mode)
    eh = max(0, (Ho - 1) * st[0] + (ks[0] - 1) * dl[0] + 1 - (H + 2 * pd[0]))
    ew = max(0, (Wo - 1) * st[1] + (ks[1] - 1) * dl[1] + 1 - (W + 2 * pd[1]))
    return Ho, Wo, eh, ew


cdef object _pool_fill(object dt):
    # what max pooling pads with: below every value of the dtype
    if _is_floating_dtype(dt) or dt.kind == "c":
        return -np.inf
    return np.iinfo(dt).min if dt.kind in "iu" else False


cdef tuple _max_pool_argmax(object x, object kernel_size, object stride, object padding,
                            object dilation, bint ceil_mode):
    # (out, am, params): am is each window's argmax as a kernel position
    # (the first one on ties, as torch).
    ks, st, pd, dl = _pool_params(x, kernel_size, stride, padding, dilation, ceil_mode)
    x = _arr(x)
    x4 = x if x.ndim == 4 else x[None]
    fill = _pool_fill(x.dtype)
    Ho, Wo, eh, ew = _pool_geometry(x, ks, st, pd, dl, ceil_mode)
    v = _conv_windows(x4, ks[0], ks[1], st, (pd[0], pd[0] + eh, pd[1], pd[1] + ew), dl, fill)[:, :, :Ho, :Wo]
    N, C, Ho, Wo = v.shape[0], v.shape[1], v.shape[2], v.shape[3]
    flat = v.reshape(N, C, Ho, Wo, ks[0] * ks[1])
    am = flat.argmax(axis=-1)
    out = np.take_along_axis(flat, am[..., None], -1)[..., 0]
    if x.ndim == 3:
        out = out[0]
    return out, am, (ks, st, pd, dl)


cdef tuple _max_pool_windows(object x, object kernel_size, object stride, object padding,
                             object dilation, bint ceil_mode):
    # (padded 4-d input, params, Ho, Wo): window position (i, j) of every
    # output is xp[:, :, i*dh::sh, j*dw::sw] (cropped to Ho, Wo)
    ks, st, pd, dl = _pool_params(x, kernel_size, stride, padding, dilation, ceil_mode)
    x = _arr(x)
    x4 = x if x.ndim == 4 else x[None]
    fill = _pool_fill(x.dtype)
    Ho, Wo, eh, ew = _pool_geometry(x, ks, st, pd, dl, ceil_mode)
    if pd[0] or pd[1] or eh or ew:
        x4 = np.pad(x4, ((0, 0), (0, 0), (pd[0], pd[0] + eh), (pd[1], pd[1] + ew)), constant_values=fill)
    if Ho <= 0 or Wo <= 0:
        raise RuntimeError(f"max_pool2d: output size is too small ({Ho} x {Wo}): the kernel does not "
                           "fit in the (padded) input")
    return x4, ks, st, pd, dl, Ho, Wo


cdef object k_max_pool2d(object x, object kernel_size, object stride, object padding, object dilation,
                         bint ceil_mode):
    # running maximum over the kh*kw window positions (strided views, no
    # window copy); np.maximum propagates NaN, as torch
    x4, ks, st, _pd, dl, Ho, Wo = _max_pool_windows(x, kernel_size, stride, padding, dilation, ceil_mode)
    out = None
    for i in range(ks[0]):
        for j in range(ks[1]):
            s = x4[:, :, i * dl[0]:i * dl[0] + st[0] * (Ho - 1) + 1:st[0],
                   j * dl[1]:j * dl[1] + st[1] * (Wo - 1) + 1:st[1]]
            out = s.copy() if out is None else np.maximum(out, s, out=out)
    return out if np.ndim(x) == 4 else out[0]


cdef object k_max_pool2d_backward_fast(object g, object x, object result, object kernel_size,
                                       object stride, object padding, object dilation, bint ceil_mode):
    # The gradient goes to the first window position (scan order, as torch)
    # holding the maximum: one pass per kernel position over strided views.
    x4, ks, st, pd, dl, Ho, Wo = _max_pool_windows(x, kernel_size, stride, padding, dilation, ceil_mode)
    g = _arr(g)
    r = _arr(result)
    xp = _xp(r)
    if r.ndim == 3:
        r = r[None]
        g = g[None] if g.ndim == 3 else g
    g = np.broadcast_to(g, r.shape)
    gx = None
    if xp is np:                        # the same, one pass (NumPy arrays only)
        gx = _loop_max_pool2d_backward_tiled(g, x4, r, ks, st, pd, dl, Ho, Wo, np.shape(x)[-2], np.shape(x)[-1])
    if gx is not None:
        return gx if np.ndim(x) == 4 else gx[0]
    # On a GPU, branching on data (NaN present? ties?) would read device
    # memory on the host, a synchronize per backward: device arrays take
    # the branch-free forms (NaN matched in the compare, the ties pass always)
    cdef bint on_host = xp is np
    cdef bint nan_dtype = _is_floating_dtype(r.dtype) or r.dtype.kind == "c"
    cdef bint tiled = (st[0] == ks[0] and st[1] == ks[1] and dl[0] == 1 and dl[1] == 1
                       and pd[0] == 0 and pd[1] == 0
                       and x4.shape[2] == Ho * ks[0] and x4.shape[3] == Wo * ks[1]
                       and x4.shape[2] == np.shape(x)[-2] and x4.shape[3] == np.shape(x)[-1]
                       and not (on_host and nan_dtype and np.isnan(r).any()))
    if tiled:
        # windows tile the input exactly: compare the (N, C, Ho, kh, Wo, kw)
        # view with the result in one pass (NaN takes the general path below)
        # (rows of the result repeated kw times keep the inner loops long)
        N, C = x4.shape[0], x4.shape[1]
        W4 = x4.shape[3]
        r5 = np.repeat(r, ks[1], axis=3).reshape(N, C, Ho, 1, W4)
        x5 = x4.reshape(N, C, Ho, ks[0], W4)
        hit = np.equal(x5, r5)
        if not on_host and nan_dtype:
            hit |= (x5 != x5) & (r5 != r5)
        if not on_host or np.count_nonzero(hit) != r.size:
            # ties (common after a relu: windows of zeros): keep each
            # window's first maximum in scan order, as torch, with two small
            # boolean passes per kernel position over strided views of `hit`
            h6 = hit.reshape(N, C, Ho, ks[0], Wo, ks[1])
            found = xp.zeros((N, C, Ho, Wo), dtype=bool)
            for i in range(ks[0]):
                for j in range(ks[1]):
                    h = h6[:, :, :, i, :, j]
                    np.greater(h, found, out=h)         # h and not found
                    np.logical_or(found, h, out=found)
        g5 = np.repeat(g, ks[1], axis=3).reshape(N, C, Ho, 1, W4)
        gx = np.multiply(hit, g5, dtype=np.result_type(g.dtype, r.dtype)).reshape(x4.shape)
        return gx if np.ndim(x) == 4 else gx[0]
    gx = xp.zeros(x4.shape, dtype=np.result_type(g.dtype, r.dtype))
    pending = xp.ones(r.shape, dtype=bool)
    nan_out = r != r
    has_nan = bool(nan_out.any()) if on_host else nan_dtype
    # windows that do not overlap (stride >= effective kernel) own their
    # input positions: a masked copy instead of an accumulation
    disjoint = st[0] >= (ks[0] - 1) * dl[0] + 1 and st[1] >= (ks[1] - 1) * dl[1] + 1
    for i in range(ks[0]):
        for j in range(ks[1]):
            sl = (slice(None), slice(None),
                  slice(i * dl[0], i * dl[0] + st[0] * (Ho - 1) + 1, st[0]),
                  slice(j * dl[1], j * dl[1] + st[1] * (Wo - 1) + 1, st[1]))
            s = x4[sl]
            hit = np.equal(s, r)
            if has_nan:
                hit |= (s != s) & nan_out
            hit &= pending
            pending ^= hit                  # hit is a subset of pending
            if disjoint and xp is np:
                np.copyto(gx[sl], g, where=hit)
            else:
                gx[sl] += np.where(hit, g, 0)
    H, W = np.shape(x)[-2], np.shape(x)[-1]
    if gx.shape[2] != H or gx.shape[3] != W:
        gx = _contig(gx[:, :, pd[0]:pd[0] + H, pd[1]:pd[1] + W])
    return gx if np.ndim(x) == 4 else gx[0]


cdef tuple _max_pool_index(object x, object kernel_size, object stride, object padding, object dilation,
                           bint ceil_mode):
    # The advanced index into x that max_pool2d gathers (out == x[index]).
    _out, am, params = _max_pool_argmax(x, kernel_size, stride, padding, dilation, ceil_mode)
    ks, st, pd, dl = params
    N, C, Ho, Wo = am.shape
    xp = _xp(am)
    hh = xp.arange(Ho).reshape(Ho, 1) * st[0] + (am // ks[1]) * dl[0] - pd[0]
    ww = xp.arange(Wo) * st[1] + (am % ks[1]) * dl[1] - pd[1]
    c = xp.arange(C).reshape(C, 1, 1)
    if np.ndim(x) == 3:
        return (c, hh[0], ww[0])
    return (xp.arange(N).reshape(N, 1, 1, 1), c[None], hh, ww)


cdef object k_max_pool2d_flat_index(object x, object kernel_size, object stride, object padding,
                                    object dilation, bint ceil_mode):
    # Where each max_pool2d output reads its value, as a position in the
    # flattened input (int64, the output's shape): what the create_graph
    # backward scatters the gradient to (scatter_add, an op with a tensor
    # index, so that a tracer records where the positions come from).
    idx = _max_pool_index(x, kernel_size, stride, padding, dilation, ceil_mode)
    shape = np.shape(x)
    flat = idx[0]
    for k in range(1, len(idx)):
        flat = flat * shape[k] + idx[k]
    return _xp(flat).ascontiguousarray(flat, dtype=np.int64)


cdef object _avg_divisor(tuple shape4, tuple ks, tuple st, tuple pd, int Ho, int Wo,
                         bint count_include_pad, object divisor_override, object dtype):
    # torch's avg_pool2d divisor: count_include_pad counts the padding but not
    # the part of a ceil_mode window past it; otherwise the input elements
    if divisor_override is not None:
        if divisor_override == 0:
            raise RuntimeError("divisor must be not zero")
        return np.asarray(divisor_override, dtype=dtype)
    H, W = shape4[2], shape4[3]
    h0 = np.arange(Ho) * st[0] - pd[0]
    w0 = np.arange(Wo) * st[1] - pd[1]
    hend = np.minimum(h0 + ks[0], H + pd[0])
    wend = np.minimum(w0 + ks[1], W + pd[1])
    if count_include_pad:
        nh, nw = hend - h0, wend - w0
    else:
        nh = np.minimum(hend, H) - np.maximum(h0, 0)
        nw = np.minimum(wend, W) - np.maximum(w0, 0)
    if (nh == ks[0]).all() and (nw == ks[1]).all():
        return np.asarray(ks[0] * ks[1], dtype=dtype)
    return np.multiply.outer(nh, nw).astype(dtype)


cdef object k_avg_pool2d(object x, object kernel_size, object stride, object padding, bint ceil_mode,
                         bint count_include_pad, object divisor_override):
    ks, st, pd, dl = _pool_params(x, kernel_size, stride, padding, 1, ceil_mode)
    x = _arr(x)
    if _is_bf16(x):                     # summed in float32, rounded once (Note [bfloat16 kernels])
        return k_bf16_like(k_avg_pool2d(k_opmath(x), kernel_size, stride, padding, ceil_mode, count_include_pad,
                                        divisor_override), x)
    x4 = x if x.ndim == 4 else x[None]
    Ho, Wo, eh, ew = _pool_geometry(x, ks, st, pd, dl, ceil_mode)
    v = _conv_windows(x4, ks[0], ks[1], st, (pd[0], pd[0] + eh, pd[1], pd[1] + ew), (1, 1), 0)[:, :, :Ho, :Wo]
    dtype = np.result_type(x.dtype, np.float16) if x.dtype.kind in "fc" else np.float64
    s = _xp(x).zeros(v.shape[:4], dtype=dtype)
    for i in range(ks[0]):
        for j in range(ks[1]):
            s += v[:, :, :, :, i, j]
    s /= _on_device_of(x, _avg_divisor(x4.shape, ks, st, pd, Ho, Wo, count_include_pad, divisor_override, dtype))
    return s if x.ndim == 4 else s[0]


cdef object k_avg_pool2d_backward(object g, object shape, object kernel_size, object stride,
                                  object padding, bint ceil_mode, bint count_include_pad,
                                  object divisor_override):
    shape = tuple(shape)
    ks, st, pd, dl = _pool_params(np.empty(shape, dtype=np.int8) if len(shape) in (3, 4) else np.empty(()),
                                  kernel_size, stride, padding, 1, ceil_mode)
    g = _arr(g)
    g4 = g if g.ndim == 4 else g[None]
    shape4 = shape if len(shape) == 4 else (1,) + shape
    Ho, Wo, eh, ew = _pool_geometry(np.empty(shape4[2:], dtype=np.int8), ks, st, pd, dl, ceil_mode)
    g4 = np.broadcast_to(g4, shape4[:2] + (Ho, Wo))
    gd = g4 / _on_device_of(g, _avg_divisor(shape4, ks, st, pd, Ho, Wo, count_include_pad, divisor_override,
                                            g.dtype))
    N, C, H, W = shape4
    gx = _xp(g).zeros((N, C, H + 2 * pd[0] + eh, W + 2 * pd[1] + ew), dtype=gd.dtype)
    for i in range(ks[0]):
        for j in range(ks[1]):
            gx[:, :, i:i + st[0] * (Ho - 1) + 1:st[0], j:j + st[1] * (Wo - 1) + 1:st[1]] += gd
    if pd[0] or pd[1] or eh or ew:
        gx = _contig(gx[:, :, pd[0]:pd[0] + H, pd[1]:pd[1] + W])
    return gx if len(shape) == 4 else gx[0]



def _max_pool2d_indices(x, kernel_size, stride, padding, dilation, bint ceil_mode):
    """torch's max_pool2d indices: for each output, the flat index h * W + w
    of its window's maximum (the first one on ties) within its input plane,
    int64, in the output's shape."""
    _out, am, params = _max_pool_argmax(x, kernel_size, stride, padding, dilation, ceil_mode)
    ks, st, pd, dl = params
    Ho, Wo = am.shape[2], am.shape[3]
    W = np.shape(x)[-1]
    hh = np.arange(Ho).reshape(Ho, 1) * st[0] + (am // ks[1]) * dl[0] - pd[0]
    ww = np.arange(Wo) * st[1] + (am % ks[1]) * dl[1] - pd[1]
    idx = (hh * W + ww).astype(np.int64, copy=False)
    return idx if np.ndim(x) == 4 else idx[0]
