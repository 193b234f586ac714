# Formula helpers of the sort/topk, eigh, qr, pinv and lstsq entries, and the
# Python entry points of those private entries. Part of _ops.pyx, after
# _formula_helpers_linalg.pxi (whose _ns_* dispatchers they use: _ns_cat, _ns_cols);
# formulas.py lists them (NS_HELPERS).

from retrograd.core._kernels_linalg cimport k_linalg_pinv, _lstsq_vector_case


# --- sort, argsort, topk (the _sort / _topk entries) ---
def _sort_op(x, dim, descending, stable):
    return _op__sort(x, dim, descending, stable)


def _topk_op(x, k, dim, largest, sorted):
    return _op__topk(x, k, dim, largest, sorted)


# --- eigh, qr, pinv, lstsq ---
# torch's linalg_eig_backward / linalg_eig_jvp (hermitian case),
# linalg_qr_backward / linalg_qr_jvp, pinv_backward / pinv_jvp and
# linalg_lstsq_backward / linalg_lstsq_jvp for real inputs, over the
# factors the forward saved. As in torch, eigh's gradients are defined only
# for distinct eigenvalues (a repeated one divides by zero: inf/nan) and for
# losses that do not depend on the eigenvectors' signs; pinv's and lstsq's
# only where the rank of A does not change.

cdef object _eye_like(object ns, object x, Py_ssize_t k):
    return _xp(ns.data(x)).eye(k, dtype=ns.data(x).dtype)


cdef object _eig_E(object ns, object L, tuple bs, Py_ssize_t k):
    # E[i, j] = L_j - L_i off the diagonal and 1 on it (torch's E)
    return ns.reshape(L, bs + (1, k)) - ns.reshape(L, bs + (k, 1)) + _eye_like(ns, L, k)


def eigh_backward(ns, gL, gV, L, V):
    """The gradient of A from those of the eigenvalues L and eigenvectors V
    (None: a zero): V (diag(gL) + skew(V^T gV) / E) V^T."""
    k = np.shape(ns.data(L))[-1]
    bs = tuple(np.shape(ns.data(L))[:-1])
    eye = _eye_like(ns, L, k)
    ga = None
    if gV is not None:
        vtg = ns.matmul(ns.mT(V), gV)
        # the projection onto skew-symmetric matrices (the tangent space of
        # the orthogonal group); its diagonal is 0
        ga = ((vtg - ns.mT(vtg)) * 0.5) / _eig_E(ns, L, bs, k)
    if gL is not None:
        dg = ns.reshape(gL, bs + (1, k)) * eye
        ga = dg if ga is None else ga + dg
    if ga is None:
        return None
    return ns.matmul(V, ns.matmul(ga, ns.mT(V)))


def eigh_jvp(ns, t, L, V):
    """The tangents (dL, dV) from the tangent t of a symmetric A."""
    k = np.shape(ns.data(L))[-1]
    bs = tuple(np.shape(ns.data(L))[:-1])
    eye = _eye_like(ns, L, k)
    dp = ns.matmul(ns.mT(V), ns.matmul(t, V))
    dl = _ns_sum(ns, dp * eye, -1, False)
    dv = ns.matmul(V, (dp - dp * eye) / _eig_E(ns, L, bs, k))
    return dl, dv


cdef object _right_solve_t(object ns, object g, object R):
    # g R^{-T}: X R^T = g  <=>  R X^T = g^T
    return ns.mT(_ns_solve(ns, R, ns.mT(g)))


cdef object _right_solve(object ns, object g, object R):
    # g R^{-1}: X R = g  <=>  R^T X^T = g^T
    return ns.mT(_ns_solve(ns, ns.mT(R), ns.mT(g)))


cdef object _qr_check(object Q, object R, object mode, object ns):
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
                           "Please use linalg.qr(A, mode='reduced') if you are going to differentiate "
                           "through linalg.qr.")
    if mode == "complete" and np.shape(ns.data(Q))[-2] > np.shape(ns.data(R))[-1]:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > "
                           "ncols. Use mode='reduced' (the default) to differentiate through linalg.qr.")


cdef object _qr_backward_tall(object ns, object gQ, object gR, object Q, object R):
    # m >= n: (gQ + Q copyltu(M)) R^{-T}, M = R gR^T - gQ^T Q
    n = np.shape(ns.data(R))[-1]
    x = None
    if gR is not None:
        x = ns.matmul(gR, ns.mT(R))
    if gQ is not None:
        qg = ns.matmul(ns.mT(Q), gQ)
        x = -qg if x is None else x - qg
    upper = np.triu(_xp(ns.data(R)).ones((n, n), dtype=ns.data(R).dtype))
    sym = x * upper
    sym = sym + ns.mT(sym)
    sym = sym - sym * (0.5 * _eye_like(ns, R, n))
    ga = ns.matmul(Q, sym)
    if gQ is not None:
        ga = ga + gQ
    return _right_solve_t(ns, ga, R)


def qr_backward(ns, gQ, gR, Q, R, mode):
    """The gradient of A from those of Q and R (None: a zero)."""
    _qr_check(Q, R, mode, ns)
    if gQ is None and gR is None:
        return None
    m = np.shape(ns.data(Q))[-2]
    n = np.shape(ns.data(R))[-1]
    if m >= n:
        return _qr_backward_tall(ns, gQ, gR, Q, R)
    # m < n: A = [A1 | A2] with A1 = Q R1 square and R2 = Q^T A2, so A1's
    # gradient is the square case with gQ + A2 gR2^T, and A2's is Q gR2
    R1 = _ns_cols(ns, R, None, m)
    R2 = _ns_cols(ns, R, m, None)
    gR1 = None if gR is None else _ns_cols(ns, gR, None, m)
    if gR is not None:
        gR2 = _ns_cols(ns, gR, m, None)
        extra = ns.matmul(Q, ns.matmul(R2, ns.mT(gR2)))
        gQ = extra if gQ is None else gQ + extra
        g2 = ns.matmul(Q, gR2)
    else:
        g2 = ns.zeros_like(R2)
    return _ns_cat(ns, [_qr_backward_tall(ns, gQ, gR1, Q, R1), g2], -1)


cdef tuple _qr_jvp_tall(object ns, object t, object Q, object R):
    n = np.shape(ns.data(R))[-1]
    c = _right_solve(ns, ns.matmul(ns.mT(Q), t), R)          # Q^T dA R^{-1}
    low = c * np.tril(_xp(ns.data(R)).ones((n, n), dtype=ns.data(R).dtype), -1)
    dr = ns.matmul(c - (low - ns.mT(low)), R)
    dq = _right_solve(ns, t - ns.matmul(Q, dr), R)
    return dq, dr


def qr_jvp(ns, t, Q, R, mode):
    """The tangents (dQ, dR) from the tangent t of A."""
    _qr_check(Q, R, mode, ns)
    m = np.shape(ns.data(Q))[-2]
    n = np.shape(ns.data(R))[-1]
    if m >= n:
        return _qr_jvp_tall(ns, t, Q, R)
    R1 = _ns_cols(ns, R, None, m)
    R2 = _ns_cols(ns, R, m, None)
    dq, dr1 = _qr_jvp_tall(ns, _ns_cols(ns, t, None, m), Q, R1)
    dr2 = ns.matmul(ns.mT(dq), ns.matmul(Q, R2)) + ns.matmul(ns.mT(Q), _ns_cols(ns, t, m, None))
    return dq, _ns_cat(ns, [dr1, dr2], -1)


cdef object _ns_pinv(object ns, object a):
    return k_linalg_pinv(a) if ns is A else _op__linalg_pinv(a)


def pinv_backward(ns, grad, pinvA, A_):
    """The gradient of A from that of P = pinv(A) (constant rank):
    -P^T g P^T + (I - A P) g^T P P^T + P^T P g^T (I - P A)."""
    P = pinvA
    Pt = ns.mT(P)
    gt = ns.mT(grad)
    out = -ns.matmul(Pt, ns.matmul(grad, Pt))
    x = ns.matmul(gt, ns.matmul(P, Pt))
    out = out + x - ns.matmul(A_, ns.matmul(P, x))
    y = ns.matmul(ns.matmul(Pt, P), gt)
    return out + y - ns.matmul(ns.matmul(y, P), A_)


def pinv_jvp(ns, t, A_, pinvA):
    """The tangent of P = pinv(A) (constant rank):
    -P dA P + P P^T dA^T (I - A P) + (I - P A) dA^T P^T P."""
    if isinstance(t, float):
        return 0.0
    P = pinvA
    Pt = ns.mT(P)
    tt = ns.mT(t)
    out = -ns.matmul(P, ns.matmul(t, P))
    x = ns.matmul(ns.matmul(P, Pt), tt)
    out = out + x - ns.matmul(ns.matmul(x, A_), P)
    y = ns.matmul(tt, ns.matmul(Pt, P))
    return out + y - ns.matmul(P, ns.matmul(A_, y))


cdef object _as_matrix_rhs(object ns, object b, bint vec):
    return ns.reshape(b, tuple(np.shape(ns.data(b))) + (1,)) if vec else b


cdef object _from_matrix_rhs(object ns, object x, bint vec):
    return ns.reshape(x, tuple(np.shape(ns.data(x)))[:-1]) if vec else x


def lstsq_backward(ns, grad, A_, B, int which):
    """torch's linalg_lstsq_backward: X = pinv(A) B, so A's gradient is
    pinv's for g B^T and B's is pinv(A)^T g."""
    vec = _lstsq_vector_case(ns.data(A_), ns.data(B))
    P = _ns_pinv(ns, A_)
    g = _as_matrix_rhs(ns, grad, vec)
    if which == 1:
        return _from_matrix_rhs(ns, ns.matmul(ns.mT(P), g), vec)
    return pinv_backward(ns, ns.matmul(g, ns.mT(_as_matrix_rhs(ns, B, vec))), P, A_)


def lstsq_jvp(ns, A_t, A_p, B_t, B_p):
    """The tangent of the solution: d(pinv(A)) B + pinv(A) dB."""
    vec = _lstsq_vector_case(ns.data(A_p), ns.data(B_p))
    P = _ns_pinv(ns, A_p)
    out = 0.0
    if not isinstance(A_t, float):
        out = ns.matmul(pinv_jvp(ns, A_t, A_p, P), _as_matrix_rhs(ns, B_p, vec))
    if not isinstance(B_t, float):
        out = out + ns.matmul(P, _as_matrix_rhs(ns, B_t, vec))
    if isinstance(out, float):
        return 0.0
    return _from_matrix_rhs(ns, out, vec)


def _linalg_eigh_op(x, UPLO="L"):
    return _op__linalg_eigh(x, UPLO)


def _linalg_qr_op(x, mode="reduced"):
    return _op__linalg_qr(x, mode)


def _linalg_pinv_op(x):
    return _op__linalg_pinv(x)


def _linalg_lstsq_op(a, b, rcond=None, driver=None):
    return _op__linalg_lstsq(a, b, rcond, driver)
