"""torch.linalg's LU family (lu_factor, lu_factor_ex, lu, lu_solve),
solve_triangular, matrix_exp and pinv, re-exported by retrograd.core.linalg.

Note [LU over the ops]
~~~~~~~~~~~~~~~~~~~~~~
NumPy has no LU factorization, and core must not need SciPy, so the
factorization is Gaussian elimination with partial pivoting written over
the table's ops (gather for the row swaps, slicing, cat), vectorized over
the batch: one step per column. With the pivots fixed, the factors are a
smooth function of ``A``, so the gradient the ops record is the derivative
of that function, which is what torch's ``linalg_lu_backward`` computes in
closed form (and its double backward too). The pivot of a column is the
first entry of largest magnitude, as LAPACK's getrf chooses it; a zero
pivot (a singular matrix) leaves its column unscaled, as getrf does, and
is reported in ``info``. Triangular solves are substitutions over the ops in
the same way, so their gradients (and a division by a zero diagonal, which
gives inf or nan as in torch) follow.

pinv's gradient is torch's ``pinv_backward``: the value comes from one SVD
(or eigh), and a term that is zero in value carries the derivative of the
pseudo-inverse at constant rank (see _pinv_tangent).
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from retrograd.core import abi as _abi
from retrograd.core import _creation
from retrograd.core.abi import Tensor, composite_op

__all__ = ["lu_factor", "lu_factor_ex", "lu", "lu_solve", "solve_triangular", "matrix_exp", "pinv"]

lu_factor_result = namedtuple("linalg_lu_factor", ["LU", "pivots"])
lu_factor_ex_result = namedtuple("linalg_lu_factor_ex", ["LU", "pivots", "info"])
lu_result = namedtuple("linalg_lu", ["P", "L", "U"])
for _nt in (lu_factor_result, lu_factor_ex_result, lu_result):
    _nt.__module__ = "retrograd.return_types"
del _nt


def _host(t: Tensor) -> np.ndarray:
    return np.asarray(t.detach().numpy(force=True))


def _np_dtype(t: Tensor) -> np.dtype:
    return np.dtype(str(t.dtype).replace("torch.", ""))


def _const(like: Tensor, arr) -> Tensor:
    return _creation._make(arr, like.device, False)


def _check_tensor(x, fn: str, arg: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{arg}' (position 1) must be Tensor, not {type(x).__name__}")
    return x


def _check_matrices(A: Tensor, fn: str, name: str = "A", square: bool = True) -> None:
    if A.ndim < 2:
        raise RuntimeError(f"{fn}: The input tensor {name} must have at least 2 dimensions.")
    if A.is_complex():
        raise NotImplementedError(f"{fn}: complex inputs are not supported by retrograd; split them into real "
                                  "and imaginary parts or use torch")
    if not A.is_floating_point():
        raise RuntimeError(f"{fn}: Expected a floating point or complex tensor as input. Got "
                           f"{_dtype_name(A)}")
    if square and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{fn}: {name} must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")


def _dtype_name(t: Tensor) -> str:
    return {"float64": "Double", "float32": "Float", "float16": "Half", "int64": "Long", "int32": "Int",
            "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}.get(
        str(t.dtype).replace("torch.", ""), str(t.dtype))


def _check_pivot(pivot, fn: str) -> None:
    if not isinstance(pivot, (bool, np.bool_)):
        raise TypeError(f"{fn}(): argument 'pivot' must be bool, not {type(pivot).__name__}")
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")


def _check_lu_input(A: Tensor) -> None:
    if A.ndim < 2:
        raise RuntimeError(f"torch.lu_factor: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(A.shape)} instead")
    if not A.is_floating_point() and not A.is_complex():
        raise NotImplementedError(f'"lu_cpu" not implemented for \'{_dtype_name(A)}\'')
    _check_matrices(A, "linalg.lu_factor", square=False)


def _lu_steps(A: Tensor):
    """The packed LU factors, the 1-based int32 pivots and getrf's info (Note [LU over the ops])."""
    m, n = A.shape[-2], A.shape[-1]
    k = min(m, n)
    batch = tuple(A.shape[:-2])
    pivots = np.zeros(batch + (k,), dtype=np.int32)
    info = np.zeros(batch, dtype=np.int32)
    W = A
    rows = np.arange(m)
    for j in range(k):
        col = np.abs(_host(W[..., j:, j]))
        p = np.argmax(col, axis=-1) + j if col.size else np.full(batch, j)
        pivots[..., j] = p + 1
        if np.any(p != j):
            perm = np.broadcast_to(rows, batch + (m,)).copy()
            np.put_along_axis(perm, np.expand_dims(p, -1), j, -1)
            perm[..., j] = p
            idx = np.broadcast_to(perm[..., :, None], batch + (m, n))
            W = _abi.gather(W, -2, _const(A, np.ascontiguousarray(idx, dtype=np.int64)))
        piv_val = _host(W[..., j, j])
        zero = piv_val == 0
        info = np.where((info == 0) & zero, j + 1, info).astype(np.int32)
        if j + 1 >= m:
            continue
        # getrf scales by the reciprocal; a zero pivot leaves its (zero) column as it is
        recip = _abi.where(_const(A, zero), 1.0, _abi.reciprocal(W[..., j, j]))
        l_col = W[..., j + 1:, j] * _abi.unsqueeze(recip, -1)
        parts = [W[..., j + 1:, :j], _abi.unsqueeze(l_col, -1)]
        if j + 1 < n:
            parts.append(W[..., j + 1:, j + 1:] - _abi.unsqueeze(l_col, -1) * W[..., j:j + 1, j + 1:])
        W = _abi.cat([W[..., :j + 1, :], _abi.cat(parts, -1)], -2)
    return W, pivots, info


def _singular_error(fn: str, info: np.ndarray) -> RuntimeError:
    flat = info.reshape(-1)
    b = int(np.flatnonzero(flat)[0])
    where = f"(Batch element {b}): " if info.ndim else ""
    i = int(flat[b])
    return RuntimeError(f"torch.{fn}: {where}U[{i},{i}] is zero and using it on lu_solve would result in a "
                        "division by zero. If you still want to perform the factorization, consider calling "
                        "linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")


@composite_op("linalg_lu_factor_ex")
def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    """The LU factorization of ``A`` with partial pivoting, and LAPACK's ``info`` (no error for a singular matrix).

    ``A = P @ L @ U`` for each matrix of ``A`` (``(..., m, n)``, any shape),
    packed as torch's: ``L`` (unit diagonal, not stored) below the diagonal
    of ``LU`` and ``U`` on and above it. The gradient flows to ``A`` through
    ``LU`` (torch's).

    Parameters
    ----------
    A : Tensor
        A (batch of) floating matrices ``(..., m, n)``.
    pivot : bool, optional
        Must be True (the default): LU without pivoting is not available on
        the CPU (torch's error).
    check_errors : bool, optional
        Raise RuntimeError for a singular matrix (default False).
    out : None, optional
        Not supported; must be left as None.

    Returns
    -------
    retrograd.return_types.linalg_lu_factor_ex
        The named tuple ``(LU, pivots, info)``: the packed factors, the
        1-based int32 row swaps ``(..., min(m, n))`` and the int32 ``info``
        per matrix (0, or the 1-based index of the first zero of ``U``'s
        diagonal).

    Raises
    ------
    RuntimeError
        For fewer than 2 dimensions, an integer input, ``pivot=False``, or a
        singular matrix with ``check_errors=True``.

    Examples
    --------
    >>> import retrograd as rg
    >>> LU, pivots, info = rg.linalg.lu_factor_ex(rg.tensor([[1.0, 2.0], [2.0, 4.0]]))
    >>> LU, pivots, info
    (tensor([[2. , 4. ],
            [0.5, 0. ]]), tensor([2, 2], dtype=int32), tensor(2, dtype=int32))
    """
    A = _check_tensor(A, "linalg_lu_factor_ex", "A")
    _check_pivot(pivot, "linalg_lu_factor_ex")
    _check_lu_input(A)
    LU, pivots, info = _lu_steps(A)
    if check_errors and np.any(info):
        raise _singular_error("linalg.lu_factor_ex", info)
    return lu_factor_ex_result(LU, _const(A, pivots), _const(A, info))


@composite_op("linalg_lu_factor")
def lu_factor(A, *, pivot=True, out=None):
    """The packed LU factorization of ``A`` with partial pivoting (``torch.linalg.lu_factor``).

    As :func:`lu_factor_ex`, but a singular matrix raises; use
    :func:`lu_factor_ex` or :func:`lu` to factor one. Pass the result to
    :func:`lu_solve` to solve systems with ``A``.

    Parameters
    ----------
    A : Tensor
        A (batch of) floating matrices ``(..., m, n)``.
    pivot : bool, optional
        Must be True (the default).
    out : None, optional
        Not supported; must be left as None.

    Returns
    -------
    retrograd.return_types.linalg_lu_factor
        The named tuple ``(LU, pivots)``.

    Raises
    ------
    RuntimeError
        As :func:`lu_factor_ex`, and for a singular matrix.

    Examples
    --------
    >>> import retrograd as rg
    >>> LU, pivots = rg.linalg.lu_factor(rg.tensor([[1.0, 2.0], [3.0, 4.0]]))
    >>> LU
    tensor([[3.        , 4.        ],
            [0.33333334, 0.6666666 ]])
    >>> pivots
    tensor([2, 2], dtype=int32)
    """
    A = _check_tensor(A, "linalg_lu_factor", "A")
    _check_pivot(pivot, "linalg_lu_factor")
    _check_lu_input(A)
    LU, pivots, info = _lu_steps(A)
    if np.any(info):
        raise _singular_error("linalg.lu_factor", info)
    return lu_factor_result(LU, _const(A, pivots))


def _permutation(pivots: np.ndarray, m: int) -> np.ndarray:
    # perm[..., i]: the row of A that row i of L @ U comes from (getrf's swaps applied in order)
    batch = pivots.shape[:-1]
    perm = np.broadcast_to(np.arange(m), batch + (m,)).copy()
    flat_perm, flat_piv = perm.reshape(-1, m), pivots.reshape(-1, pivots.shape[-1]).astype(np.int64) - 1
    rows = np.arange(flat_perm.shape[0])
    for j in range(flat_piv.shape[1]):
        p = flat_piv[:, j]
        a, b = flat_perm[rows, j].copy(), flat_perm[rows, p].copy()
        flat_perm[rows, j], flat_perm[rows, p] = b, a
    return flat_perm.reshape(batch + (m,))


def _unpack(LU: Tensor, pivots: np.ndarray | None, unpack_data: bool = True):
    m, n = LU.shape[-2], LU.shape[-1]
    k = min(m, n)
    P = L = U = None
    if pivots is not None:
        perm = _permutation(pivots, m)
        eye = np.zeros(perm.shape + (m,), dtype=_np_dtype(LU))
        np.put_along_axis(eye, perm[..., :, None], 1, -1)      # P.mT[i, perm[i]] = 1
        P = _const(LU, np.ascontiguousarray(np.swapaxes(eye, -1, -2)))
    if unpack_data:
        L = _abi.tril(LU[..., :, :k], -1) + _const(LU, np.eye(m, k, dtype=_np_dtype(LU)))
        U = _abi.triu(LU[..., :k, :])
    return P, L, U


@composite_op("linalg_lu")
def lu(A, *, pivot=True, out=None):
    """The LU factorization ``A = P @ L @ U`` with partial pivoting, unpacked (``torch.linalg.lu``).

    For ``A`` ``(..., m, n)`` and ``k = min(m, n)``: ``P`` ``(..., m, m)`` is a
    permutation matrix, ``L`` ``(..., m, k)`` is lower triangular with a unit
    diagonal and ``U`` ``(..., k, n)`` upper triangular. A singular matrix is
    factored without error. Gradients flow from ``L`` and ``U`` to ``A``.

    Parameters
    ----------
    A : Tensor
        A (batch of) floating matrices.
    pivot : bool, optional
        Must be True (the default).
    out : None, optional
        Not supported; must be left as None.

    Returns
    -------
    retrograd.return_types.linalg_lu
        The named tuple ``(P, L, U)``.

    Raises
    ------
    RuntimeError
        For fewer than 2 dimensions, an integer input or ``pivot=False``.

    Examples
    --------
    >>> import retrograd as rg
    >>> P, L, U = rg.linalg.lu(rg.tensor([[1.0, 2.0], [3.0, 4.0]]))
    >>> P
    tensor([[0., 1.],
            [1., 0.]])
    >>> (P @ L @ U).round(decimals=5)
    tensor([[1., 2.],
            [3., 4.]])
    """
    LU, pivots, _ = lu_factor_ex(A, pivot=pivot)
    return lu_result(*_unpack(LU, _host(pivots)))


def _substitute(T: Tensor, B: Tensor, upper: bool, unit: bool) -> Tensor:
    # row by row: X[i] = (B[i] - T[i, others] @ X[others]) / T[i, i]; the ops record the gradient
    n = T.shape[-1]
    order = range(n - 1, -1, -1) if upper else range(n)
    rows: dict = {}
    for i in order:
        r = B[..., i:i + 1, :]
        done = list(range(i + 1, n)) if upper else list(range(i))
        if done:
            lo, hi = done[0], done[-1] + 1
            stacked = _abi.cat([rows[j] for j in done], -2)
            r = r - _abi.matmul(T[..., i:i + 1, lo:hi], stacked)
        if not unit:
            r = r / _abi.unsqueeze(T[..., i:i + 1, i], -1)
        rows[i] = r
    return _abi.cat([rows[i] for i in range(n)], -2)


def _solve_tri(A: Tensor, B: Tensor, upper: bool, left: bool, unit: bool, fn: str) -> Tensor:
    if not left:
        # X A = B  <=>  A^T X^T = B^T, with the other triangle
        return _abi.transpose(_solve_tri(_abi.transpose(A, -2, -1), _abi.transpose(B, -2, -1), not upper, True,
                                         unit, fn), -2, -1)
    if A.shape[-1] != B.shape[-2]:
        raise RuntimeError(f"{fn}: Incompatible shapes of A and B for the equation AX = B "
                           f"({A.shape[-2]}x{A.shape[-1]} and {B.shape[-2]}x{B.shape[-1]})")
    batch = tuple(np.broadcast_shapes(tuple(A.shape[:-2]), tuple(B.shape[:-2])))
    A = _abi.broadcast_to(A, batch + tuple(A.shape[-2:]))
    B = _abi.broadcast_to(B, batch + tuple(B.shape[-2:]))
    if A.shape[-1] == 0 or B.shape[-1] == 0:
        return B * 1.0
    return _substitute(A, B, upper, unit)


@composite_op("linalg_solve_triangular")
def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    """The solution ``X`` of ``A @ X = B`` (or ``X @ A = B``) for triangular ``A``.

    Only the triangle of ``A`` named by ``upper`` is read (and, with
    ``unitriangular``, not its diagonal, taken as ones); the gradient of
    ``A`` lies in that triangle. Batch dimensions broadcast. A zero on the
    diagonal gives ``inf`` or ``nan``, not an error, as in torch.

    Parameters
    ----------
    A : Tensor
        Triangular matrices ``(..., n, n)``.
    B : Tensor
        Right-hand sides ``(..., n, k)`` (``(..., k, n)`` with ``left=False``).
    upper : bool
        Whether ``A`` is upper (True) or lower (False) triangular.
    left : bool, optional
        Solve ``A X = B`` (True, the default) or ``X A = B``.
    unitriangular : bool, optional
        Take the diagonal of ``A`` as ones (default False).
    out : None, optional
        Not supported; must be left as None.

    Returns
    -------
    Tensor
        ``X``, of the broadcast shape.

    Raises
    ------
    RuntimeError
        Shapes that do not fit, or fewer than 2 dimensions.

    Examples
    --------
    >>> import retrograd as rg
    >>> A = rg.tensor([[2.0, 1.0], [0.0, 4.0]])
    >>> rg.linalg.solve_triangular(A, rg.tensor([[3.0], [4.0]]), upper=True)
    tensor([[1.],
            [1.]])
    """
    fn = "linalg.solve_triangular"
    A, B = _check_tensor(A, "linalg_solve_triangular", "A"), _check_tensor(B, "linalg_solve_triangular", "B")
    _check_matrices(A, fn)
    _check_matrices(B, fn, "B", square=False)
    if A.dtype != B.dtype:
        raise RuntimeError(f"{fn}: Expected A and B to have the same dtype, but found A of type "
                           f"{_dtype_name(A)} and B of type {_dtype_name(B)} instead.")
    return _solve_tri(A, B, bool(upper), bool(left), bool(unitriangular), fn)


def _permute_rows(B: Tensor, perm: np.ndarray) -> Tensor:
    # rows of B picked by perm (..., n), batch dims broadcast
    batch = tuple(np.broadcast_shapes(perm.shape[:-1], tuple(B.shape[:-2])))
    B = _abi.broadcast_to(B, batch + tuple(B.shape[-2:]))
    idx = np.broadcast_to(np.broadcast_to(perm, batch + perm.shape[-1:])[..., :, None], tuple(B.shape))
    return _abi.gather(B, -2, _const(B, np.ascontiguousarray(idx, dtype=np.int64)))


@composite_op("linalg_lu_solve")
def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    """Solve ``A @ X = B`` given the LU factorization of ``A`` from :func:`lu_factor`.

    With ``adjoint=True`` the system is ``A^T X = B``; with ``left=False``,
    ``X A = B`` (or ``X A^T = B``). Batch dimensions broadcast. Gradients
    flow to ``LU`` and ``B``.

    Parameters
    ----------
    LU : Tensor
        The packed factors ``(..., n, n)``.
    pivots : Tensor
        The int32 pivots ``(..., n)``.
    B : Tensor
        Right-hand sides ``(..., n, k)`` (``(..., k, n)`` with ``left=False``).
    left : bool, optional
        Solve ``A X = B`` (default) or ``X A = B``.
    adjoint : bool, optional
        Use ``A``'s (conjugate) transpose.
    out : None, optional
        Not supported; must be left as None.

    Returns
    -------
    Tensor
        ``X``.

    Raises
    ------
    RuntimeError
        For pivots that are not int32, or shapes that do not fit.

    Examples
    --------
    >>> import retrograd as rg
    >>> A = rg.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> LU, pivots = rg.linalg.lu_factor(A)
    >>> rg.linalg.lu_solve(LU, pivots, rg.tensor([[5.0], [11.0]])).round(decimals=5)
    tensor([[1.],
            [2.]])
    """
    fn = "linalg.lu_solve"
    LU = _check_tensor(LU, "linalg_lu_solve", "LU")
    pivots = _check_tensor(pivots, "linalg_lu_solve", "pivots")
    B = _check_tensor(B, "linalg_lu_solve", "B")
    if B.ndim < 2:
        raise RuntimeError(f"{fn}: The input tensor B must have at least 2 dimensions.")
    if str(pivots.dtype).replace("torch.", "") != "int32":
        raise RuntimeError(f"{fn}: pivots should be a Tensor of scalar type torch.int32")
    _check_matrices(LU, "torch.linalg.lu_solve")
    n = LU.shape[-1]
    if pivots.ndim < 1 or pivots.shape[-1] != n:
        raise RuntimeError(f"{fn}: Number of pivots per batch should be same as the dimension of the matrix")
    if not left:
        # X A = B  <=>  A^T X^T = B^T
        return _abi.transpose(lu_solve(LU, pivots, _abi.transpose(B, -2, -1), adjoint=not adjoint), -2, -1)
    if B.shape[-2] != n:
        raise RuntimeError(f"{fn}: Incompatible shapes of A and B for the equation AX = B ({n}x{n} and "
                           f"{B.shape[-2]}x{B.shape[-1]})")
    perm = _permutation(_host(pivots), n)
    batch = tuple(np.broadcast_shapes(tuple(LU.shape[:-2]), perm.shape[:-1], tuple(B.shape[:-2])))
    LU = _abi.broadcast_to(LU, batch + (n, n))
    if not adjoint:
        # A = P L U: X = U^-1 L^-1 P^T B
        Y = _solve_tri(LU, _permute_rows(B, perm), False, True, True, fn)
        return _solve_tri(LU, Y, True, True, False, fn)
    # A^T = U^T L^T P^T: X = P L^-T U^-T B
    Y = _solve_tri(_abi.transpose(LU, -2, -1), _abi.broadcast_to(B, batch + tuple(B.shape[-2:])), False, True,
                   False, fn)
    Y = _solve_tri(_abi.transpose(LU, -2, -1), Y, True, True, True, fn)
    return _permute_rows(Y, np.argsort(perm, axis=-1))


# Higham (2005), "The scaling and squaring method for the matrix exponential revisited": the
# [13/13] Pade coefficients and the largest 1-norm it serves within double precision.
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0, 129060195264000.0,
           10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0,
           1.0)
_THETA13 = 5.371920351148152


@composite_op("linalg_matrix_exp")
def matrix_exp(A):
    """The matrix exponential ``sum_k A^k / k!`` of a square matrix, or of each matrix of a batch.

    Computed by scaling and squaring with a [13/13] Pade approximant
    (Higham's method, each matrix scaled by its own power of two) over the
    table's ops, so the gradient is the derivative of that computation:
    torch's to rounding.

    Parameters
    ----------
    A : Tensor
        Square floating matrices ``(..., n, n)``.

    Returns
    -------
    Tensor
        ``exp(A)``, of ``A``'s shape.

    Raises
    ------
    RuntimeError
        For fewer than 2 dimensions, non-square matrices or an integer input.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.linalg.matrix_exp(rg.tensor([[0.0, 1.0], [0.0, 0.0]]))
    tensor([[1., 1.],
            [0., 1.]])
    """
    A = _check_tensor(A, "linalg_matrix_exp", "A")
    _check_matrices(A, "linalg.matrix_exp")
    n = A.shape[-1]
    if n == 0 or A.numel() == 0:
        return A * 1.0
    if n == 1:
        return _abi.exp(A)
    norms = np.abs(_host(A)).sum(axis=-2).max(axis=-1)          # 1-norm of each matrix
    with np.errstate(divide="ignore"):
        s = np.where(norms > _THETA13, np.ceil(np.log2(np.maximum(norms, 1e-300) / _THETA13)), 0)
    s = np.where(np.isfinite(s), s, 0).astype(np.int64)
    dtype = _np_dtype(A)
    X = A * _const(A, np.ldexp(np.ones(s.shape, dtype=dtype), -s)[..., None, None])
    eye = _const(A, np.eye(n, dtype=dtype))
    b = _PADE13
    X2 = _abi.matmul(X, X)
    X4 = _abi.matmul(X2, X2)
    X6 = _abi.matmul(X4, X2)
    U = _abi.matmul(X, _abi.matmul(X6, b[13] * X6 + b[11] * X4 + b[9] * X2) + b[7] * X6 + b[5] * X4 + b[3] * X2
                    + b[1] * eye)
    V = _abi.matmul(X6, b[12] * X6 + b[10] * X4 + b[8] * X2) + b[6] * X6 + b[4] * X4 + b[2] * X2 + b[0] * eye
    R = _abi._linalg_solve_op(V - U, V + U)
    for i in range(int(s.max()) if s.size else 0):
        squared = _abi.matmul(R, R)
        R = squared if np.all(s > i) else _abi.where(_const(A, (s > i)[..., None, None]), squared, R)
    return R


def _tolerance(x, batch: tuple, fn: str, what: str):
    if x is None:
        return None
    if isinstance(x, Tensor):
        if x.is_complex():
            raise RuntimeError(f"torch.{fn}: {what} tensor of complex type is not supported. Got ComplexDouble")
        return np.asarray(_host(x), dtype=np.float64)
    if isinstance(x, complex):
        raise RuntimeError(f"torch.{fn}: {what} of complex type is not supported")
    return np.asarray(float(x))


def _pinv_tangent(P: Tensor, A: Tensor, dA: Tensor) -> Tensor:
    # the derivative of the pseudo-inverse at constant rank applied to dA (Golub and Pereyra);
    # its adjoint is torch's pinv_backward
    Pt, dAt = _abi.transpose(P, -2, -1), _abi.transpose(dA, -2, -1)
    m, n = A.shape[-2], A.shape[-1]
    I_m = _const(A, np.eye(m, dtype=_np_dtype(A)))
    I_n = _const(A, np.eye(n, dtype=_np_dtype(A)))
    return (-_abi.matmul(_abi.matmul(P, dA), P)
            + _abi.matmul(_abi.matmul(_abi.matmul(P, Pt), dAt), I_m - _abi.matmul(A, P))
            + _abi.matmul(_abi.matmul(I_n - _abi.matmul(P, A), dAt), _abi.matmul(Pt, P)))


@composite_op("linalg_pinv")
def pinv(A, rcond=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """The Moore-Penrose pseudo-inverse of a matrix, or of each matrix of a batch.

    Singular values (absolute eigenvalues with ``hermitian=True``) at or
    below ``max(atol, rtol * largest)`` are treated as zero. With neither
    given, ``rtol`` is ``eps * max(m, n)``; with only ``atol > 0``, ``rtol``
    is 0. ``rcond`` is torch's older name of ``rtol``. The gradient is
    torch's (the derivative at constant rank).

    Parameters
    ----------
    A : Tensor
        Floating matrices ``(..., m, n)``.
    rcond : float or Tensor, optional
        The relative tolerance (an alias of ``rtol``).
    hermitian : bool, optional
        ``A`` is symmetric: use an eigendecomposition of its lower triangle.
    atol, rtol : float or Tensor, optional
        The absolute and relative tolerances (Tensors broadcast over the batch).
    out : None, optional
        Not supported; must be left as None.

    Returns
    -------
    Tensor
        The pseudo-inverses ``(..., n, m)``.

    Raises
    ------
    RuntimeError
        For fewer than 2 dimensions, an integer input or a complex tolerance.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.linalg.pinv(rg.tensor([[1.0, 0.0], [0.0, 0.0]]))
    tensor([[1., 0.],
            [0., 0.]])
    >>> rg.linalg.pinv(rg.tensor([[2.0, 0.0], [0.0, 1e-3]]), atol=0.01)
    tensor([[0.5, 0. ],
            [0. , 0. ]])
    """
    A = _check_tensor(A, "linalg_pinv", "A")
    if A.ndim < 2 or not A.is_floating_point():
        raise RuntimeError(f"linalg.pinv({_dtype_name(A)}{{{list(A.shape)}}}): expected a tensor with 2 or more "
                           "dimensions of float, double, cfloat or cdouble types")
    _check_matrices(A, "linalg.pinv", square=False)
    if rcond is not None:
        rtol = rcond
    m, n = A.shape[-2], A.shape[-1]
    batch = tuple(A.shape[:-2])
    a = _host(A)
    if A.numel() == 0:
        return _const(A, np.zeros(batch + (n, m), dtype=a.dtype)) + 0.0 * _abi.transpose(A, -2, -1)
    at = _tolerance(atol, batch, "linalg.pinv", "atol")
    rt = _tolerance(rtol, batch, "linalg.pinv", "rtol")
    if rt is None:
        default = np.finfo(a.dtype).eps * max(m, n)
        rt = np.where(at > 0, 0.0, default) if at is not None else np.asarray(default)
    if at is None:
        at = np.asarray(0.0)
    if hermitian:
        w, V = np.linalg.eigh(a)
        big = np.abs(w).max(axis=-1, keepdims=True)
        tol = np.maximum(at[..., None], rt[..., None] * big)
        with np.errstate(divide="ignore"):
            winv = np.where(np.abs(w) > tol, 1.0 / w, 0.0).astype(a.dtype)
        value = np.matmul(V * winv[..., None, :], np.swapaxes(V, -1, -2))
    else:
        U, S, Vh = np.linalg.svd(a, full_matrices=False)
        tol = np.maximum(at[..., None], rt[..., None] * S[..., :1])
        with np.errstate(divide="ignore"):
            sinv = np.where(S > tol, 1.0 / S, 0.0).astype(a.dtype)
        value = np.matmul(np.swapaxes(Vh, -1, -2) * sinv[..., None, :], np.swapaxes(U, -1, -2))
    P0 = _const(A, np.ascontiguousarray(value, dtype=a.dtype))
    if not A.requires_grad:
        return P0
    # dA is zero in value with the identity as derivative, so the result is P0 in value and the
    # derivative at constant rank in gradient (torch's pinv_backward). The tangent is evaluated at
    # P0 + L(dA)/2 and A0 + dA/2 so that the second derivative is right too: the Taylor terms of
    # order two then add up to the pseudo-inverse's (torch's backward is differentiable).
    A0 = A.detach()
    dA = A - A0
    P_half = P0 + 0.5 * _pinv_tangent(P0, A0, dA)
    return P0 + _pinv_tangent(P_half, A0 + 0.5 * dA, dA)
