# Formula helpers of the SVD entries (_linalg_svd_u, _linalg_svdvals,
# _linalg_svd_vh): torch's svd_backward and linalg_svd_jvp for real inputs
# and full_matrices=False, split by factor (both are linear in the incoming
# gradients / the tangent, so one factor at a time sums to torch's result).
# Part of abi.pyx, after _formula_helpers.pxi (uses its A/T namespaces).
# Like torch, the gradients are only defined for distinct non-zero singular
# values; with repeated ones the division by E gives inf/nan, as torch's.

cdef tuple _svd_factors(object ns, object a):
    # A = U diag(S) Vh; differentiable factors when building a graph, so the
    # backward is itself differentiable (gradgrad), as torch's
    if ns is A:
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        return u, s, vh
    return _op__linalg_svd_u(a), _op__linalg_svdvals(a), _op__linalg_svd_vh(a)


cdef object _svd_E(object ns, object s, tuple bs, Py_ssize_t k):
    # E[i, j] = s_j^2 - s_i^2 off the diagonal and 1 on it (torch's E)
    s2 = s * s
    eye = np.eye(k, dtype=ns.data(s).dtype, like=ns.data(s))
    return ns.reshape(s2, bs + (1, k)) - ns.reshape(s2, bs + (k, 1)) + eye


def svd_backward(ns, grad, self, int which):
    """The gradient of A from the gradient of U (which=0), S (1) or Vh (2)."""
    u, s, vh = _svd_factors(ns, self)
    shape = tuple(np.shape(ns.data(self)))
    bs = shape[:-2]
    m, n = shape[-2], shape[-1]
    k = min(m, n)
    s_row = ns.reshape(s, bs + (1, k))
    s_col = ns.reshape(s, bs + (k, 1))
    if which == 1:
        # svdvals: U diag(gS) Vh
        return ns.matmul(u * ns.reshape(grad, bs + (1, k)), vh)
    E = _svd_E(ns, s, bs, k)
    if which == 0:
        utg = ns.matmul(ns.mT(u), grad)
        ga = (utg - ns.mT(utg)) / E * s_row
        if m > k:
            # U gA Vh + (I - U U^T) gU S^-1 Vh
            gus = grad / s_row
            return ns.matmul(ns.matmul(u, ga) + gus - ns.matmul(u, ns.matmul(ns.mT(u), gus)), vh)
        return ns.matmul(u, ns.matmul(ga, vh))
    gv = ns.mT(grad)
    vhgv = ns.matmul(vh, gv)
    ga = s_col * ((vhgv - ns.mT(vhgv)) / E)
    if n > k:
        # U [gA Vh + S^-1 gV^T (I - V Vh)]
        gvst = ns.mT(gv / s_row)
        return ns.matmul(u, ns.matmul(ga, vh) + gvst - ns.matmul(ns.matmul(gvst, ns.mT(vh)), vh))
    return ns.matmul(u, ns.matmul(ga, vh))


def svd_jvp(ns, t, self, int which):
    """The tangent of U (which=0), S (1) or Vh (2) from the tangent t of A."""
    if isinstance(t, float):
        return 0.0
    u, s, vh = _svd_factors(ns, self)
    shape = tuple(np.shape(ns.data(self)))
    bs = shape[:-2]
    m, n = shape[-2], shape[-1]
    k = min(m, n)
    s_row = ns.reshape(s, bs + (1, k))
    s_col = ns.reshape(s, bs + (k, 1))
    v = ns.mT(vh)
    eye = np.eye(k, dtype=ns.data(s).dtype, like=ns.data(s))
    dp = ns.matmul(ns.mT(u), ns.matmul(t, v))          # U^T dA V
    if which == 1:
        return _ns_sum(ns, dp * eye, -1, False)        # its diagonal
    dp = dp - dp * eye
    E = _svd_E(ns, s, bs, k)
    if which == 0:
        x = dp * s_row
        du = ns.matmul(u, (x + ns.mT(x)) / E)
        if m > k:
            davs = ns.matmul(t, v / s_row)
            du = du + davs - ns.matmul(u, ns.matmul(ns.mT(u), davs))
        return du
    y = s_col * dp
    dvh = ns.matmul(-((y + ns.mT(y)) / E), vh)
    if n > k:
        uhdas = ns.matmul(ns.mT(u) / s_col, t)
        dvh = dvh + uhdas - ns.matmul(ns.matmul(uhdas, v), vh)
    return dvh


# Python entry points for linalg.py (private ops get no def).
def _linalg_svdvals_op(x):
    return _op__linalg_svdvals(x)


def _linalg_svd_u_op(x):
    return _op__linalg_svd_u(x)


def _linalg_svd_vh_op(x):
    return _op__linalg_svd_vh(x)
