"""torch's top-level linear algebra and product functions (det, inverse,
slogdet, logdet, cholesky, qr, svd, matrix_power, the fused addmv / addr /
baddbmm / addbmm, cov, corrcoef, cross, dist, vdot, chain_matmul and the
trapezoid rules), written over retrograd.linalg and the table's ops, so
their gradients are those ops' gradients."""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from retrograd.core import abi as _abi
from retrograd.core import linalg as _linalg
from retrograd.core._dtypes import _is_inexact_dtype
from retrograd.core.abi import Tensor, composite_op

__all__ = [
    "det", "inverse", "slogdet", "logdet", "cholesky", "qr", "svd", "matrix_power", "addmv", "addr",
    "baddbmm", "addbmm", "cov", "corrcoef", "cross", "dist", "vdot", "chain_matmul", "trapezoid", "trapz",
    "cumulative_trapezoid", "lu", "lu_unpack", "lu_solve", "triangular_solve", "matrix_exp", "pinverse",
]


def _t(x, fn: str, arg: str = "input") -> Tensor:
    if isinstance(x, Tensor):
        return x
    raise TypeError(f"{fn}(): argument '{arg}' must be Tensor, not {type(x).__name__}")


def _doc(summary: str, params: str, returns: str, example: str, body: str = "") -> str:
    body = f"\n\n    {body}" if body else ""
    return (f"{summary}{body}\n\n    Parameters\n    ----------\n{params}\n\n    Returns\n    -------\n"
            f"    {returns}\n\n    Examples\n    --------\n    >>> import retrograd as rg\n    {example}\n    ")


_A = "    input : Tensor\n        A (batch of) square matrix."
_EX = "rg.tensor([[2.0, 1.0], [1.0, 3.0]])"


@composite_op("det")
def det(input) -> Tensor:
    return _linalg.det(_t(input, "det"))


@composite_op("inverse")
def inverse(input) -> Tensor:
    return _linalg.inv(_t(input, "inverse"))


@composite_op("slogdet")
def slogdet(input):
    return _linalg.slogdet(_t(input, "slogdet"))


@composite_op("logdet")
def logdet(input) -> Tensor:
    sign, logabsdet = _linalg.slogdet(_t(input, "logdet"))
    # nan for a negative determinant, -inf for a singular matrix (torch's)
    return _abi.where(sign < 0, float("nan"), logabsdet)


det.__doc__ = _doc("The determinant (:func:`retrograd.linalg.det`).", _A, "Tensor",
                   f">>> rg.det({_EX})\n    tensor(5.)")
inverse.__doc__ = _doc("The inverse matrix (:func:`retrograd.linalg.inv`).", _A, "Tensor",
                       f">>> rg.inverse({_EX})\n    tensor([[ 0.6, -0.2],\n            [-0.2,  0.4]])")
slogdet.__doc__ = _doc("The sign and the log of the absolute determinant (:func:`retrograd.linalg.slogdet`).",
                       _A, "(sign, logabsdet)",
                       f">>> rg.slogdet({_EX}).logabsdet\n    tensor(1.609438)")
logdet.__doc__ = _doc("The log of the determinant: ``nan`` when it is negative, ``-inf`` when 0.", _A, "Tensor",
                      f">>> rg.logdet({_EX})\n    tensor(1.609438)")


@composite_op("cholesky")
def cholesky(input, upper=False) -> Tensor:
    return _linalg.cholesky(_t(input, "cholesky"), upper=upper)


cholesky.__doc__ = _doc("The Cholesky factor of a symmetric positive-definite matrix (lower, or upper).",
                        _A + "\n    upper : bool, optional\n        Return ``U`` with ``input = U^T U`` instead.",
                        "Tensor", f">>> rg.cholesky({_EX})\n    tensor([[1.4142135 , 0.        ],\n"
                        "            [0.70710677, 1.5811388 ]])")

_qr_result = namedtuple("qr", ["Q", "R"])
_svd_result = namedtuple("svd", ["U", "S", "V"])


@composite_op("qr")
def qr(input, some=True):
    q, r = _linalg.qr(_t(input, "qr"), "reduced" if some else "complete")
    return _qr_result(q, r)


@composite_op("svd")
def svd(input, some=True, compute_uv=True):
    x = _t(input, "svd")
    u, s, vh = _linalg.svd(x, full_matrices=not some)
    if not compute_uv:
        from retrograd.core import _creation
        return _svd_result(_creation.zeros_like(u), s, _creation.zeros_like(vh.mT))
    return _svd_result(u, s, vh.mT)


qr.__doc__ = _doc("The QR decomposition, torch's old form (``some=True``: reduced).",
                  "    input : Tensor\n        A (batch of) matrix.\n    some : bool, optional\n"
                  "        Reduced (True) or complete (False) factors.", "(Q, R)",
                  f">>> q, r = rg.qr({_EX})\n    >>> bool(rg.allclose(q @ r, {_EX}))\n    True")
svd.__doc__ = _doc("The singular value decomposition, torch's old form: ``input = U diag(S) V^T`` (V, not V^T).",
                   "    input : Tensor\n        A (batch of) matrix.\n    some : bool, optional\n"
                   "        Reduced factors (default).\n    compute_uv : bool, optional\n"
                   "        False: U and V are zeros.", "(U, S, V)",
                   f">>> rg.svd({_EX}).S\n    tensor([3.618034, 1.381966])")


@composite_op("matrix_power")
def matrix_power(input, n) -> Tensor:
    x = _t(input, "matrix_power")
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but they are "
                           f"{x.shape[-2] if x.ndim > 1 else 1} by {x.shape[-1] if x.ndim else 1} matrices")
    if n == 0:
        # the identity, written over a copy of x as torch does: it requires grad when x does
        # (a zero gradient), and no nan or inf of x leaks in
        from retrograd.core import _creation
        eye = _creation.eye(x.shape[-1], dtype=x.dtype, device=x.device)
        every = _creation.ones(tuple(x.shape), device=x.device) > 0
        return _abi.where(every, _abi.expand(eye, tuple(x.shape)), x)
    if n < 0:
        x, n = _linalg.inv(x), -n
    # binary powering: log2(n) products
    result, base = None, x
    while n:
        if n & 1:
            result = base if result is None else _abi.matmul(result, base)
        n >>= 1
        if n:
            base = _abi.matmul(base, base)
    return result


matrix_power.__doc__ = _doc("The ``n``-th power of a square matrix (negative: of its inverse).",
                            _A + "\n    n : int\n        The exponent.", "Tensor",
                            ">>> rg.matrix_power(rg.tensor([[1.0, 1.0], [0.0, 1.0]]), 3)\n"
                            "    tensor([[1., 3.],\n            [0., 1.]])")


def _scaled(input, product, beta, alpha) -> Tensor:
    prod = product if alpha == 1 else product * alpha
    if beta == 0:
        # input is ignored, nan and inf included (torch's rule); the shapes still broadcast
        shape = tuple(np.broadcast_shapes(tuple(input.shape), tuple(prod.shape)))
        return prod if tuple(prod.shape) == shape else _abi.expand(prod, shape)
    return (input if beta == 1 else input * beta) + prod


@composite_op("addmv")
def addmv(input, mat, vec, *, beta=1, alpha=1) -> Tensor:
    return _scaled(_t(input, "addmv"), _abi.matmul(_t(mat, "addmv", "mat"), _t(vec, "addmv", "vec")), beta, alpha)


@composite_op("addr")
def addr(input, vec1, vec2, *, beta=1, alpha=1) -> Tensor:
    return _scaled(_t(input, "addr"), _abi.outer(_t(vec1, "addr", "vec1"), _t(vec2, "addr", "vec2")), beta, alpha)


@composite_op("baddbmm")
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1) -> Tensor:
    return _scaled(_t(input, "baddbmm"), _abi.bmm(_t(batch1, "baddbmm", "batch1"), _t(batch2, "baddbmm", "batch2")),
                   beta, alpha)


@composite_op("addbmm")
def addbmm(input, batch1, batch2, *, beta=1, alpha=1) -> Tensor:
    prod = _abi.sum(_abi.bmm(_t(batch1, "addbmm", "batch1"), _t(batch2, "addbmm", "batch2")), 0)
    return _scaled(_t(input, "addbmm"), prod, beta, alpha)


_FUSED = "\n    beta, alpha : number, optional\n        The factors of ``input`` and of the product (default 1)."
addmv.__doc__ = _doc("``beta * input + alpha * (mat @ vec)``.",
                     "    input : Tensor\n        Added (broadcast to the result).\n    mat : Tensor\n        A matrix."
                     "\n    vec : Tensor\n        A vector." + _FUSED, "Tensor",
                     ">>> rg.addmv(rg.ones(2), rg.eye(2), rg.tensor([1.0, 2.0]), alpha=2)\n    tensor([3., 5.])")
addr.__doc__ = _doc("``beta * input + alpha * outer(vec1, vec2)``.",
                    "    input : Tensor\n        Added.\n    vec1, vec2 : Tensor\n        Vectors." + _FUSED, "Tensor",
                    ">>> rg.addr(rg.zeros(2, 2), rg.tensor([1.0, 2.0]), rg.tensor([1.0, 3.0]))\n"
                    "    tensor([[1., 3.],\n            [2., 6.]])")
baddbmm.__doc__ = _doc("``beta * input + alpha * (batch1 @ batch2)``, batch by batch.",
                       "    input : Tensor\n        Added.\n    batch1, batch2 : Tensor\n        (b, n, m) and (b, m, p)."
                       + _FUSED, "Tensor", ">>> rg.baddbmm(rg.ones(1, 2, 2), rg.ones(1, 2, 3), rg.ones(1, 3, 2)).shape"
                       "\n    (1, 2, 2)")
addbmm.__doc__ = _doc("``beta * input + alpha * sum_b(batch1[b] @ batch2[b])``.",
                      "    input : Tensor\n        Added.\n    batch1, batch2 : Tensor\n        (b, n, m) and (b, m, p)."
                      + _FUSED, "Tensor", ">>> rg.addbmm(rg.zeros(2, 2), rg.ones(3, 2, 1), rg.ones(3, 1, 2))\n"
                      "    tensor([[3., 3.],\n            [3., 3.]])")


@composite_op("cov")
def cov(input, *, correction=1, fweights=None, aweights=None) -> Tensor:
    x = _t(input, "cov")
    if x.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with {x.ndim} "
                           "dimensions")
    if x.ndim < 2:
        x = _abi.reshape(x, (1, -1))
    if not _is_inexact_dtype(x._array.dtype):
        from retrograd.core._dtype_rules import get_default_dtype
        x = x.to(get_default_dtype())
    w = None
    if fweights is not None:
        w = fweights.to(x.dtype)
    if aweights is not None:
        w = aweights.to(x.dtype) if w is None else w * aweights.to(x.dtype)
    if w is None:
        n = x.shape[1]
        avg = _abi.mean(x, 1, True)
        norm = n - correction
    else:
        wsum = _abi.sum(w)
        avg = _abi.sum(x * w, 1, True) / wsum
        if correction == 0:
            norm = wsum
        elif aweights is None:
            norm = wsum - correction
        else:
            norm = wsum - correction * _abi.sum(w * aweights.to(x.dtype)) / wsum
    xm = x - avg
    xw = xm if w is None else xm * w
    c = _abi.matmul(xw, _abi.transpose(xm, 0, 1))
    if not isinstance(norm, Tensor):
        norm = max(norm, 0)
    c = c / norm
    # one variable gives a 0-d tensor (torch's squeeze)
    return _abi.reshape(c, ()) if tuple(c.shape) == (1, 1) else c


@composite_op("corrcoef")
def corrcoef(input) -> Tensor:
    c = cov(input)
    if c.ndim == 0:
        return c / c
    d = _abi.diagonal(c, 0, 0, 1)
    s = _abi.sqrt(d)
    out = c / _abi.unsqueeze(s, 1) / _abi.unsqueeze(s, 0)
    return _abi.clamp(out, -1, 1)


cov.__doc__ = _doc("The covariance matrix of the variables in the rows of ``input`` (observations in columns).",
                   "    input : Tensor\n        (variables, observations), or one variable as a 1-d tensor.\n"
                   "    correction : int, optional\n        Bessel's correction (default 1).\n"
                   "    fweights, aweights : Tensor, optional\n        Frequency and importance weights of the "
                   "observations.", "Tensor",
                   ">>> rg.cov(rg.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]))\n    tensor([[ 1., -1.],\n"
                   "            [-1.,  1.]])")
corrcoef.__doc__ = _doc("The Pearson correlation coefficients of the variables in the rows of ``input``.",
                        "    input : Tensor\n        (variables, observations).", "Tensor",
                        ">>> rg.corrcoef(rg.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]))\n"
                        "    tensor([[ 1., -1.],\n            [-1.,  1.]])")


@composite_op("cross")
def cross(input, other, dim=None) -> Tensor:
    a, b = _t(input, "cross"), _t(other, "cross", "other")
    shape = tuple(np.broadcast_shapes(tuple(a.shape), tuple(b.shape)))
    a, b = _abi.expand(a, shape), _abi.expand(b, shape)
    if dim is None:
        dim = next((i for i, s in enumerate(shape) if s == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    if shape[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {shape[dim]} and "
                           f"{shape[dim]}")

    def c(t, i):
        return _abi.narrow(t, dim, i, 1)
    return _abi.cat([c(a, 1) * c(b, 2) - c(a, 2) * c(b, 1), c(a, 2) * c(b, 0) - c(a, 0) * c(b, 2),
                     c(a, 0) * c(b, 1) - c(a, 1) * c(b, 0)], dim)


cross.__doc__ = _doc("The cross product of 3-vectors along ``dim`` (the first dimension of size 3 by default).",
                     "    input, other : Tensor\n        Broadcast against each other.\n    dim : int, optional\n"
                     "        The dimension of size 3.", "Tensor",
                     ">>> rg.cross(rg.tensor([1.0, 0.0, 0.0]), rg.tensor([0.0, 1.0, 0.0]))\n    tensor([0., 0., 1.])")


@composite_op("dist")
def dist(input, other, p=2) -> Tensor:
    return _abi.norm(_t(input, "dist") - _t(other, "dist", "other"), p)


dist.__doc__ = _doc("The ``p``-norm of ``input - other``.",
                    "    input, other : Tensor\n        Broadcast against each other.\n    p : float, optional\n"
                    "        The norm (default 2).", "Tensor",
                    ">>> rg.dist(rg.tensor([0.0, 0.0]), rg.tensor([3.0, 4.0]))\n    tensor(5.)")


@composite_op("vdot")
def vdot(input, other) -> Tensor:
    a, b = _t(input, "vdot"), _t(other, "vdot", "other")
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    if a._array.dtype.kind == "c":
        raise NotImplementedError("vdot of complex tensors needs a conjugate, which retrograd does not record; "
                                  "use rg.dot on real tensors")
    return _abi.dot(a, b)


vdot.__doc__ = _doc("The dot product of two real 1-d tensors (complex ones are refused).",
                    "    input, other : Tensor\n        1-d tensors.", "Tensor",
                    ">>> rg.vdot(rg.tensor([1.0, 2.0]), rg.tensor([3.0, 4.0]))\n    tensor(11.)")


@composite_op("chain_matmul")
def chain_matmul(*matrices) -> Tensor:
    ms = [_t(m, "chain_matmul", "matrices") for m in matrices]
    if not ms:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    out = ms[0]
    for m in ms[1:]:
        out = _abi.matmul(out, m)
    return out


chain_matmul.__doc__ = _doc("The product of the matrices, left to right (torch's deprecated name for multi_dot).",
                            "    *matrices : Tensor\n        2-d tensors.", "Tensor",
                            ">>> rg.chain_matmul(rg.eye(2), rg.tensor([[1.0, 2.0], [3.0, 4.0]]))\n"
                            "    tensor([[1., 2.],\n            [3., 4.]])")


def _trapz_parts(y, x, dx, dim):
    n = y.shape[dim]
    left, right = _abi.narrow(y, dim, 0, n - 1), _abi.narrow(y, dim, 1, n - 1)
    if x is None:
        return (left + right) * (dx / 2.0)
    if x.ndim == 1:
        shape = [1] * y.ndim
        shape[dim] = -1
        x = _abi.reshape(x, tuple(shape))
    d = _abi.narrow(x, dim, 1, n - 1) - _abi.narrow(x, dim, 0, n - 1)
    return (left + right) * d / 2.0


@composite_op("trapezoid")
def trapezoid(y, x=None, *, dx=None, dim=-1) -> Tensor:
    y = _t(y, "trapezoid", "y")
    if y.shape[dim] == 0:
        return _abi.sum(y, dim)
    return _abi.sum(_trapz_parts(y, x, 1.0 if dx is None else dx, dim), dim)


trapz = trapezoid


@composite_op("cumulative_trapezoid")
def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1) -> Tensor:
    y = _t(y, "cumulative_trapezoid", "y")
    return _abi.cumsum(_trapz_parts(y, x, 1.0 if dx is None else dx, dim), dim)


_TRAPZ = ("    y : Tensor\n        The values.\n    x : Tensor, optional\n        The sample points (default: spaced "
          "by ``dx``).\n    dx : float, optional\n        The spacing (default 1).\n    dim : int, optional\n"
          "        The dimension (default -1).")
trapezoid.__doc__ = _doc("The integral of ``y`` by the trapezoid rule along ``dim``.", _TRAPZ, "Tensor",
                         ">>> rg.trapezoid(rg.tensor([1.0, 2.0, 3.0]))\n    tensor(4.)")
cumulative_trapezoid.__doc__ = _doc("The running integral of ``y`` by the trapezoid rule along ``dim``.", _TRAPZ,
                                    "Tensor", ">>> rg.cumulative_trapezoid(rg.tensor([1.0, 2.0, 3.0]))\n"
                                    "    tensor([1.5, 4. ])")


# --- torch's older LU / triangular-solve forms, matrix_exp and pinverse (over rg.linalg's) ---
_lu_with_info = namedtuple("_lu_with_info", ["LU", "pivots", "info"])
_lu_unpack_result = namedtuple("lu_unpack", ["P", "L", "U"])
_triangular_solve_result = namedtuple("triangular_solve", ["solution", "cloned_coefficient"])
for _nt in (_lu_with_info, _lu_unpack_result, _triangular_solve_result):
    _nt.__module__ = "retrograd.return_types"
del _nt
_warned: set = set()


def _deprecated(name: str, message: str) -> None:
    # torch warns once per process (TORCH_WARN_ONCE)
    if name not in _warned:
        _warned.add(name)
        import warnings
        warnings.warn(message, UserWarning, stacklevel=3)


@composite_op("lu")
def lu(A, pivot=True, get_infos=False, out=None):
    _deprecated("lu", "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and "
                "will be removed in a future PyTorch release.")
    r = _linalg.lu_factor_ex(_t(A, "lu", "A"), pivot=pivot)
    return _lu_with_info(*r) if get_infos else (r.LU, r.pivots)


@composite_op("lu_unpack")
def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    from retrograd.core import _linalg_more
    LU = _t(LU_data, "lu_unpack", "LU_data")
    piv = _t(LU_pivots, "lu_unpack", "LU_pivots")
    if str(piv.dtype).replace("torch.", "") != "int32":
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype.\n"
                           "Note: this function is intended to be used with the output produced by "
                           "torch.linalg.lu_factor")
    if LU.ndim < 2:
        raise RuntimeError(f"torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: {list(LU.shape)} "
                           "instead")
    P, L, U = _linalg_more._unpack(LU, _linalg_more._host(piv) if unpack_pivots else None, bool(unpack_data))
    from retrograd.core import _creation
    empty = _creation.empty(0, dtype=LU.dtype, device=LU.device)
    return _lu_unpack_result(P if P is not None else empty, L if L is not None else empty,
                             U if U is not None else empty)


@composite_op("lu_solve")
def lu_solve(input, LU_data, LU_pivots, *, out=None) -> Tensor:
    _deprecated("lu_solve", "torch.lu_solve is deprecated in favor of torch.linalg.lu_solve and will be removed in a "
                "future PyTorch release.\nNote that torch.linalg.lu_solve has its arguments reversed.")
    return _linalg.lu_solve(LU_data, LU_pivots, _t(input, "lu_solve"))


@composite_op("triangular_solve")
def triangular_solve(input, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    _deprecated("triangular_solve", "torch.triangular_solve is deprecated in favor of "
                "torch.linalg.solve_triangular and will be removed in a future PyTorch release.")
    b, a = _t(input, "triangular_solve"), _t(A, "triangular_solve", "A")
    if b.ndim < 2:
        raise RuntimeError(f"torch.triangular_solve: Expected b to have at least 2 dimensions, but it has {b.ndim} "
                           "dimensions instead")
    if a.ndim < 2:
        raise RuntimeError(f"torch.triangular_solve: Expected A to have at least 2 dimensions, but it has {a.ndim} "
                           "dimensions instead")
    batch = tuple(np.broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2])))
    coef = _abi.clone(_abi.broadcast_to(a, batch + tuple(a.shape[-2:])))
    tri = _abi.transpose(a, -2, -1) if transpose else a
    x = _linalg.solve_triangular(tri, b, upper=bool(upper) != bool(transpose), unitriangular=unitriangular)
    return _triangular_solve_result(x, coef)


@composite_op("matrix_exp")
def matrix_exp(input) -> Tensor:
    return _linalg.matrix_exp(_t(input, "matrix_exp"))


@composite_op("pinverse")
def pinverse(input, rcond=1e-15) -> Tensor:
    return _linalg.pinv(_t(input, "pinverse"), rtol=rcond)


_M = "    A : Tensor\n        A (batch of) matrix ``(..., m, n)``."
_LUF = "    LU_data : Tensor\n        The packed factors of :func:`retrograd.linalg.lu_factor`."
_LUP = "    LU_pivots : Tensor\n        Its int32 pivots."
_LU_EX = "rg.tensor([[1.0, 2.0], [3.0, 4.0]])"
lu.__doc__ = _doc("The packed LU factorization and pivots (deprecated: :func:`retrograd.linalg.lu_factor`).",
                  _M + "\n    pivot : bool, optional\n        Must be True.\n    get_infos : bool, optional\n"
                  "        Also return LAPACK's ``info`` per matrix.\n    out : None, optional\n        Not supported.",
                  "(LU, pivots) or (LU, pivots, info)",
                  f">>> LU, pivots = rg.lu({_LU_EX})\n    >>> pivots\n    tensor([2, 2], dtype=int32)",
                  "Warns once (UserWarning) that it is deprecated, as torch does.")
lu_unpack.__doc__ = _doc("``P``, ``L`` and ``U`` (``A = P @ L @ U``) from packed LU factors and pivots.",
                         _LUF + "\n" + _LUP + "\n    unpack_data : bool, optional\n        Compute ``L`` and ``U`` "
                         "(else empty tensors).\n    unpack_pivots : bool, optional\n        Compute ``P`` (else an "
                         "empty tensor).", "(P, L, U)",
                         f">>> P, L, U = rg.lu_unpack(*rg.linalg.lu_factor({_LU_EX}))\n    >>> P\n"
                         "    tensor([[0., 1.],\n            [1., 0.]])")
lu_solve.__doc__ = _doc("Solve ``A X = input`` from the LU factors of ``A`` (deprecated: "
                        ":func:`retrograd.linalg.lu_solve`, arguments reversed).",
                        "    input : Tensor\n        The right-hand sides ``(..., n, k)``.\n" + _LUF + "\n" + _LUP,
                        "Tensor", f">>> LU, piv = rg.linalg.lu_factor({_LU_EX})\n"
                        "    >>> rg.lu_solve(rg.tensor([[5.0], [11.0]]), LU, piv).round(decimals=5)\n"
                        "    tensor([[1.],\n            [2.]])")
triangular_solve.__doc__ = _doc(
    "Solve ``A X = input`` for triangular ``A`` (deprecated: :func:`retrograd.linalg.solve_triangular`).",
    "    input : Tensor\n        The right-hand sides ``(..., n, k)``.\n    A : Tensor\n        Triangular "
    "matrices ``(..., n, n)``.\n    upper : bool, optional\n        Upper (default) or lower triangular.\n"
    "    transpose : bool, optional\n        Solve ``A^T X = input`` instead.\n    unitriangular : bool, optional\n"
    "        Take ``A``'s diagonal as ones.", "(solution, cloned_coefficient): ``X`` and a copy of ``A``",
    ">>> rg.triangular_solve(rg.tensor([[3.0], [4.0]]), rg.tensor([[2.0, 1.0], [0.0, 4.0]])).solution\n"
    "    tensor([[1.],\n            [1.]])")
matrix_exp.__doc__ = _doc("The matrix exponential (:func:`retrograd.linalg.matrix_exp`).", _A, "Tensor",
                          ">>> rg.matrix_exp(rg.zeros(2, 2))\n    tensor([[1., 0.],\n            [0., 1.]])")
pinverse.__doc__ = _doc("The pseudo-inverse (:func:`retrograd.linalg.pinv` with ``rtol=rcond``).",
                        "    input : Tensor\n        A (batch of) matrix.\n    rcond : float, optional\n"
                        "        Singular values below ``rcond`` times the largest count as zero (default 1e-15).",
                        "Tensor", ">>> rg.pinverse(rg.tensor([[2.0, 0.0], [0.0, 0.0]]))\n"
                        "    tensor([[0.5, 0. ],\n            [0. , 0. ]])")
