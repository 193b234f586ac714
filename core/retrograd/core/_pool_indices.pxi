# max_pool2d(return_indices=True)'s indices (rg.nn.functional). Part of
# abi.pyx, after _op_support.pxi (uses its pooling geometry). Never records
# a graph: the indices are integers.

def _max_pool2d_indices(x, kernel_size, stride, padding, dilation, bint ceil_mode):
    """torch's max_pool2d indices: for each output, the flat index h * W + w
    of its window's maximum (the first one on ties) within its input plane,
    int64, in the output's shape."""
    out, am, params = _max_pool_argmax(x, kernel_size, stride, padding, dilation, ceil_mode)
    ks, st, pd, dl = params
    Ho, Wo = am.shape[2], am.shape[3]
    W = np.shape(x)[-1]
    hh = np.arange(Ho).reshape(Ho, 1) * st[0] + (am // ks[1]) * dl[0] - pd[0]
    ww = np.arange(Wo) * st[1] + (am % ks[1]) * dl[1] - pd[1]
    idx = (hh * W + ww).astype(np.int64, copy=False)
    return idx if np.ndim(x) == 4 else idx[0]
