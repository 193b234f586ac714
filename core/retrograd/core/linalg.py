"""retrograd.linalg (rg.linalg): torch.linalg's inv, solve, det, slogdet,
norm (with vector_norm / matrix_norm), cholesky, svd and svdvals, eigh and
eigvalsh, qr and lstsq (and, from _linalg_more, the LU family, solve_triangular,
matrix_exp and pinv), batched over leading
dims. Each is an entry of derivatives.yaml (private, reached from here) or
a composite of entries; failures of a factorization raise
``rg.linalg.LinAlgError`` (a RuntimeError, as torch.linalg.LinAlgError)."""
from __future__ import annotations

import math

import numpy as np

from retrograd.core import abi as _abi
from retrograd.core.abi import LinAlgError, Tensor, composite_op
from retrograd.core._composites_reductions_linalg import return_types

__all__ = ["inv", "solve", "det", "slogdet", "norm", "vector_norm", "matrix_norm", "cholesky",
           "svd", "svdvals", "eigh", "eigvalsh", "qr", "lstsq", "LinAlgError"]


def _tensor(x):
    return x if isinstance(x, Tensor) else _abi._wrap(np.asarray(x))


@composite_op('linalg_inv')
def inv(A, *, out=None):
    """The inverse of a square matrix, or of each matrix of a batch.

    ``A`` is ``(..., n, n)``; leading dimensions are a batch. The gradient is
    ``-A^-H @ grad @ A^-H``. Solving ``A x = b`` with :func:`solve` is faster
    and more accurate than multiplying by the inverse.

    Parameters
    ----------
    A : Tensor or array_like
        Square matrices, ``(..., n, n)``.
    out : None, optional
        Not supported; must be left as None.

    Returns
    -------
    Tensor
        The inverses, of ``A``'s shape.

    Raises
    ------
    LinAlgError
        If a matrix is singular (a RuntimeError).

    Examples
    --------
    >>> import retrograd as rg
    >>> A = rg.tensor([[2.0, 0.0], [0.0, 4.0]])
    >>> rg.linalg.inv(A)
    tensor([[0.5 , 0.  ],
            [0.  , 0.25]])
    """
    return _abi._linalg_inv_op(_tensor(A))


@composite_op('linalg_det')
def det(A, *, out=None):
    """The determinant of a square matrix, or of each matrix of a batch.

    The gradient is ``grad * det(A) * A^-H`` for invertible matrices and stays
    finite for singular ones.

    Parameters
    ----------
    A : Tensor or array_like
        Square matrices, ``(..., n, n)``.
    out : None, optional
        Not supported; must be left as None.

    Returns
    -------
    Tensor
        The determinants, of the batch shape (0-d for one matrix).

    Raises
    ------
    RuntimeError
        If the matrices are not square.

    Examples
    --------
    >>> import retrograd as rg
    >>> A = rg.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> rg.linalg.det(A)
    tensor(-2.)
    """
    return _abi._linalg_det_op(_tensor(A))


@composite_op('linalg_slogdet')
def slogdet(A, *, out=None):
    """The sign and the log of the absolute value of the determinant.

    For large matrices whose determinant overflows or underflows,
    ``sign * exp(logabsdet)`` is the determinant. Both come from one LU
    factorization. Both results require grad when ``A`` does, as in torch;
    the sign of a real matrix is piecewise constant, so its gradient is 0.
    A singular matrix gives sign 0 and ``logabsdet = -inf``.

    Parameters
    ----------
    A : Tensor or array_like
        Square matrices, ``(..., n, n)``.
    out : None, optional
        Not supported; must be left as None.

    Returns
    -------
    retrograd.return_types.slogdet
        The named tuple ``(sign, logabsdet)``, each of the batch shape.

    Raises
    ------
    RuntimeError
        If the matrices are not square.

    Examples
    --------
    >>> import retrograd as rg
    >>> A = rg.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> sign, logabsdet = rg.linalg.slogdet(A)
    >>> sign, logabsdet
    (tensor(-1.), tensor(0.6931472))
    """
    return return_types.slogdet(*_abi._linalg_slogdet_op(_tensor(A)))


@composite_op('linalg_solve')
def solve(A, B, *, left=True, out=None):
    """The solution ``X`` of ``A @ X = B`` (or of ``X @ A = B`` with ``left=False``).

    ``A`` is ``(..., n, n)``. ``B`` is a batch of vectors when it is 1-d or has
    ``A``'s batch shape plus one dimension, else a batch of matrices; batch
    dimensions broadcast. Faster and more accurate than ``inv(A) @ B``.

    Parameters
    ----------
    A : Tensor or array_like
        Square matrices, ``(..., n, n)``.
    B : Tensor or array_like
        Right-hand sides, ``(..., n)`` or ``(..., n, k)``.
    left : bool, optional
        Solve ``A X = B`` (True, the default) or ``X A = B``.
    out : None, optional
        Not supported; must be left as None.

    Returns
    -------
    Tensor
        ``X``, of ``B``'s shape (broadcast).

    Raises
    ------
    LinAlgError
        If a matrix is singular (a RuntimeError).
    RuntimeError
        If the shapes do not fit.

    Examples
    --------
    >>> import retrograd as rg
    >>> A = rg.tensor([[2.0, 0.0], [0.0, 4.0]])
    >>> rg.linalg.solve(A, rg.tensor([2.0, 2.0]))
    tensor([1. , 0.5])
    """
    A, B = _tensor(A), _tensor(B)
    if left:
        return _abi._linalg_solve_op(A, B)
    if B.ndim < 2:
        raise RuntimeError("linalg.solve: left=False needs B to be a (batch of) matrices")
    return _abi.transpose(_abi._linalg_solve_op(_abi.transpose(A, -2, -1), _abi.transpose(B, -2, -1)), -2, -1)


@composite_op('linalg_cholesky')
def cholesky(A, *, upper=False, out=None):
    """The Cholesky factor of a symmetric (Hermitian) positive-definite matrix.

    The lower-triangular ``L`` with ``A = L @ L^H``, or its conjugate
    transpose with ``upper=True``. Only the lower triangle of ``A`` is read,
    and the gradient is symmetric, as in torch.

    Parameters
    ----------
    A : Tensor or array_like
        Positive-definite matrices, ``(..., n, n)``.
    upper : bool, optional
        Return the upper factor ``L^H`` instead (default False).
    out : None, optional
        Not supported; must be left as None.

    Returns
    -------
    Tensor
        The triangular factors, of ``A``'s shape.

    Raises
    ------
    LinAlgError
        If a matrix is not positive-definite (a RuntimeError).

    Examples
    --------
    >>> import retrograd as rg
    >>> A = rg.tensor([[4.0, 2.0], [2.0, 2.0]])
    >>> rg.linalg.cholesky(A)
    tensor([[2., 0.],
            [1., 1.]])
    """
    L = _abi._linalg_cholesky_op(_tensor(A))
    return _abi.transpose(L, -2, -1) if upper else L


@composite_op('linalg_svdvals')
def svdvals(A, *, driver=None, out=None):
    """The singular values of a matrix, or of each matrix of a batch, in descending order.

    The gradient is ``U @ diag(grad) @ Vh``; the singular vectors are computed
    only when a gradient may need them.

    Parameters
    ----------
    A : Tensor or array_like
        Matrices, ``(..., m, n)``.
    driver : None, optional
        Accepted for torch compatibility; unused.
    out : None, optional
        Not supported; must be left as None.

    Returns
    -------
    Tensor
        ``(..., min(m, n))`` nonnegative values, real.

    Raises
    ------
    RuntimeError
        If ``A`` has fewer than 2 dimensions.

    Examples
    --------
    >>> import retrograd as rg
    >>> A = rg.tensor([[3.0, 0.0], [0.0, -4.0]])
    >>> rg.linalg.svdvals(A)
    tensor([4., 3.])
    """
    A = _tensor(A)
    if A.ndim < 2:
        raise RuntimeError("linalg.svdvals: The input tensor A must have at least 2 dimensions.")
    return _abi._linalg_svdvals_op(A)


@composite_op('linalg_svd')
def svd(A, full_matrices=True, *, driver=None, out=None):
    """The singular value decomposition ``A = U @ diag(S) @ Vh`` (``torch.linalg.svd``).

    Batched over leading dims. The singular values ``S`` (length
    ``k = min(m, n)``) are descending. With ``full_matrices=True`` (torch's
    default) ``U`` is (..., m, m) and ``Vh`` (..., n, n); with False, the
    reduced SVD, (..., m, k) and (..., k, n).

    As in torch, the gradient is defined only for losses invariant to the
    signs of the singular vectors and for distinct singular values; with
    ``full_matrices=True`` the columns of ``U`` and rows of ``Vh`` beyond the
    first ``k`` (an arbitrary orthonormal completion) get no gradient and a
    zero tangent, as torch's. Prefer ``full_matrices=False`` when
    differentiating.

    Parameters
    ----------
    A : Tensor
        A (batch of) matrices (..., m, n).
    full_matrices : bool, optional
        The full SVD (default True) or the reduced one.
    driver : None
        Accepted for torch's signature; ignored (NumPy's LAPACK driver).
    out : None
        Not supported (torch's ``out=``).

    Returns
    -------
    tuple of Tensor
        The named tuple ``(U, S, Vh)``.

    Raises
    ------
    RuntimeError
        If ``A`` has fewer than 2 dims; ``rg.linalg.LinAlgError`` if the
        algorithm does not converge.

    Examples
    --------
    >>> import retrograd as rg
    >>> A = rg.tensor([[3.0, 0.0], [0.0, 4.0], [0.0, 0.0]])
    >>> U, S, Vh = rg.linalg.svd(A)
    >>> U.shape, S, Vh.shape
    ((3, 3), tensor([4., 3.]), (2, 2))
    >>> rg.linalg.svd(A, full_matrices=False).U.shape
    (3, 2)
    """
    # one SVD: the three factors come from one kernel call and one node
    return return_types.svd(*_abi._linalg_svd_op(_tensor(A), bool(full_matrices)))


@composite_op('linalg_vector_norm')
def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """The vector ``ord``-norm of ``x``, over all elements or the dimensions ``dim``.

    ``sum(|x|**ord) ** (1/ord)`` for a number ``ord``; ``inf`` and ``-inf``
    give the largest and smallest ``|x|``, and 0 counts the nonzero elements.
    The gradient at a zero input is 0 (torch's subgradient).

    Parameters
    ----------
    x : Tensor or array_like
        The input (floating-point or complex).
    ord : float, optional
        The order (default 2).
    dim : int or tuple of int, optional
        The dimension(s) to reduce; all of them by default.
    keepdim : bool, optional
        Keep each reduced dimension with size 1 (default False).
    dtype : dtype, optional
        Compute and return in this dtype.

    Returns
    -------
    Tensor
        The norms (real).

    Raises
    ------
    RuntimeError
        If ``ord`` is a string, or for an integer input.

    Examples
    --------
    >>> import retrograd as rg
    >>> x = rg.tensor([[3.0, 4.0], [6.0, 8.0]])
    >>> rg.linalg.vector_norm(x)
    tensor(11.18034)
    >>> rg.linalg.vector_norm(x, ord=1, dim=1)
    tensor([ 7., 14.])
    """
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.vector_norm: ord must be a number, got {ord!r}")
    return _abi.norm(_tensor(x), ord, dim, keepdim, dtype=dtype)


@composite_op('linalg_matrix_norm')
def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """A matrix norm of ``A``, over the two dimensions ``dim``.

    ``'fro'`` (Frobenius, the default), ``'nuc'`` (the sum of the singular
    values), 2 and -2 (the largest and smallest singular value), 1 and -1 (the
    largest and smallest column sum of ``|A|``), ``inf`` and ``-inf`` (row
    sums).

    Parameters
    ----------
    A : Tensor or array_like
        Matrices, ``(..., m, n)`` (floating-point or complex).
    ord : {'fro', 'nuc', 1, -1, 2, -2, inf, -inf}, optional
        Which norm (default ``'fro'``).
    dim : pair of int, optional
        The two dimensions holding the matrices (default ``(-2, -1)``).
    keepdim : bool, optional
        Keep the two dimensions with size 1 (default False).
    dtype : dtype, optional
        Convert ``A`` to this dtype first.

    Returns
    -------
    Tensor
        The norms, of the batch shape.

    Raises
    ------
    RuntimeError
        For fewer than 2 dimensions, a ``dim`` that is not two different
        dimensions, or an unknown ``ord``.

    Examples
    --------
    >>> import retrograd as rg
    >>> A = rg.tensor([[1.0, -2.0], [3.0, 4.0]])
    >>> rg.linalg.matrix_norm(A, ord=1)
    tensor(6.)
    >>> rg.linalg.matrix_norm(A, ord=float('inf'))
    tensor(7.)
    """
    A = _tensor(A)
    if dtype is not None:
        A = A.to(dtype)
    if A.ndim < 2:
        raise RuntimeError(f"linalg.matrix_norm: The input tensor A must have at least 2 dimensions, got {A.ndim}")
    if not isinstance(dim, (tuple, list)) or len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {dim}")
    d0, d1 = (_abi._wrap_dim_py(d, A.ndim) for d in dim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, {dim[1]})")
    if ord == "fro":
        return _abi.norm(A, 2, (d0, d1), keepdim)
    if ord in ("nuc", 2, -2):
        # the two dims last, then sum / max / min of the singular values
        perm = tuple(i for i in range(A.ndim) if i not in (d0, d1)) + (d0, d1)
        sv = svdvals(_abi.permute(A, perm) if perm != tuple(range(A.ndim)) else A)
        out = _abi.sum(sv, -1) if ord == "nuc" else (_abi.amax if ord == 2 else _abi.amin)(sv, -1)
        if keepdim:
            out = _abi.reshape(out, tuple(1 if i in (d0, d1) else n for i, n in enumerate(A.shape)))
        return out
    if ord in (1, -1):
        s = _abi.norm(A, 1, d0, True)                    # column sums of |A|
        red = d1
    elif ord in (math.inf, -math.inf):
        s = _abi.norm(A, 1, d1, True)                    # row sums of |A|
        red = d0
    else:
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    out = (_abi.amax if ord > 0 else _abi.amin)(s, red, True)
    if not keepdim:
        shape = tuple(n for i, n in enumerate(A.shape) if i not in (d0, d1))
        out = _abi.reshape(out, shape)
    return out


@composite_op('linalg_norm')
def norm(A, ord=None, dim=None, keepdim=False, *, out=None, dtype=None):
    """A vector or matrix norm, chosen as ``torch.linalg.norm`` does.

    A matrix norm (:func:`matrix_norm`) when ``dim`` is a pair, or when
    ``A`` is 2-d and ``ord`` is given; a vector norm (:func:`vector_norm`)
    otherwise. With ``ord`` and ``dim`` both None it is the 2-norm of all the
    elements.

    Parameters
    ----------
    A : Tensor or array_like
        The input.
    ord : float or str, optional
        The order of the norm.
    dim : int or pair of int, optional
        The dimension(s) to reduce.
    keepdim : bool, optional
        Keep each reduced dimension with size 1 (default False).
    out : None, optional
        Not supported; must be left as None.
    dtype : dtype, optional
        Compute in this dtype.

    Returns
    -------
    Tensor
        The norms.

    Raises
    ------
    RuntimeError
        For ``ord`` without ``dim`` on an input of more than 2 dimensions, or a
        string ``ord`` for a vector norm.

    Examples
    --------
    >>> import retrograd as rg
    >>> A = rg.tensor([[1.0, -2.0], [3.0, 4.0]])
    >>> rg.linalg.norm(A)
    tensor(5.477226)
    >>> rg.linalg.norm(A, ord=1)
    tensor(6.)
    >>> rg.linalg.norm(A, dim=1)
    tensor([2.236068, 5.      ])
    """
    A = _tensor(A)
    if dim is not None and not isinstance(dim, (tuple, list)):
        dim = (dim,)
    if dim is not None and len(dim) == 2:
        return matrix_norm(A, "fro" if ord is None else ord, dim, keepdim, dtype=dtype)
    if dim is None and ord is not None:
        if A.ndim == 2:
            return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
        if A.ndim != 1:
            raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or "
                               f"2D. Got {A.ndim}D.")
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.norm: ord={ord!r} is a matrix norm: pass a 2-tuple dim")
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


@composite_op('linalg_eigh')
def eigh(A, UPLO="L", *, out=None):
    """Eigenvalues and eigenvectors of symmetric matrices.

    ``A = V @ diag(L) @ V.mT`` for each (symmetric) matrix of ``A``, with the
    eigenvalues ``L`` in ascending order and orthonormal eigenvectors as the
    columns of ``V``. Only the triangle named by ``UPLO`` is read.

    As in torch, the eigenvectors are defined up to their signs, so
    gradients are meaningful only for losses that do not depend on those
    signs, and they are defined only for distinct eigenvalues: a repeated
    eigenvalue divides by zero in the backward (inf or nan).

    Parameters
    ----------
    A : Tensor
        (..., n, n) symmetric matrices of a floating dtype.
    UPLO : {'L', 'U'}, optional
        Read the lower (default) or the upper triangle.

    Returns
    -------
    (eigenvalues, eigenvectors) : retrograd.return_types.linalg_eigh
        (..., n) eigenvalues and (..., n, n) eigenvectors; both
        differentiable.

    Raises
    ------
    RuntimeError
        ``A`` is not a batch of square floating matrices, or ``UPLO`` is
        neither 'L' nor 'U'.
    LinAlgError
        The algorithm did not converge.

    Examples
    --------
    >>> import retrograd as rg
    >>> A = rg.tensor([[2., 1.], [1., 2.]], requires_grad=True)
    >>> L, V = rg.linalg.eigh(A)
    >>> L
    tensor([1., 3.], grad_fn=<LinalgEighBackward0>)
    >>> L.sum().backward()
    >>> A.grad.round(decimals=6)
    tensor([[1., 0.],
            [0., 1.]])
    """
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return return_types.linalg_eigh(*_abi._linalg_eigh_op(_tensor(A), UPLO))


@composite_op('linalg_eigvalsh')
def eigvalsh(A, UPLO="L", *, out=None):
    """The eigenvalues of symmetric matrices, ascending.

    The eigenvalues of :func:`eigh`; their gradient (``V diag(g) V^T``)
    needs the eigenvectors, which are computed along with them.

    Parameters
    ----------
    A : Tensor
        (..., n, n) symmetric matrices of a floating dtype.
    UPLO : {'L', 'U'}, optional
        Read the lower (default) or the upper triangle.

    Returns
    -------
    Tensor
        (..., n) eigenvalues in ascending order.

    Raises
    ------
    RuntimeError
        As :func:`eigh`.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.linalg.eigvalsh(rg.tensor([[2., 0.], [0., -1.]]))
    tensor([-1.,  2.])
    """
    return eigh(A, UPLO).eigenvalues


@composite_op('linalg_qr')
def qr(A, mode="reduced", *, out=None):
    """The QR decomposition ``A = Q @ R`` of each matrix of ``A``.

    ``Q`` has orthonormal columns and ``R`` is upper triangular. With
    ``mode='reduced'`` (the default) an (m, n) matrix gives Q (m, k) and R
    (k, n), k = min(m, n); ``mode='complete'`` gives Q (m, m) and R (m, n);
    ``mode='r'`` computes R only (Q is an empty tensor).

    Gradients follow torch's rules: ``mode='r'`` is not differentiable (Q
    is needed), nor is ``mode='complete'`` with more rows than columns
    (part of Q is then arbitrary); both raise RuntimeError in backward.
    The signs of R's diagonal are those LAPACK gives, as in torch.

    Parameters
    ----------
    A : Tensor
        (..., m, n) matrices of a floating dtype.
    mode : {'reduced', 'complete', 'r'}, optional
        Which factorization to compute.

    Returns
    -------
    (Q, R) : retrograd.return_types.linalg_qr
        The two factors.

    Raises
    ------
    RuntimeError
        ``A`` has fewer than 2 dims or is not floating, or ``mode`` is
        unknown; in backward, for the modes above.

    Examples
    --------
    >>> import retrograd as rg
    >>> A = rg.tensor([[3., 0.], [4., 5.]])
    >>> Q, R = rg.linalg.qr(A)
    >>> R
    tensor([[-5., -4.],
            [ 0.,  3.]])
    >>> rg.linalg.qr(rg.ones(3, 2), mode="complete").Q.shape
    (3, 3)
    """
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' "
                           "(default), 'r', or 'complete'")
    return return_types.linalg_qr(*_abi._linalg_qr_op(_tensor(A), mode))


@composite_op('linalg_lstsq')
def lstsq(A, B, rcond=None, *, driver=None):
    """The least-squares solution X of ``A @ X = B`` for each matrix of ``A``.

    Minimizes ``||A @ X - B||`` (the minimum-norm X where A has deficient
    rank). ``B`` is (..., m, k), or (..., m) for one right-hand side; batch
    dims broadcast. The other results are torch's for the chosen driver
    (CPU default 'gelsy'): ``residuals`` and ``singular_values`` are empty
    for 'gelsy'; 'gelsd' and 'gelss' give the singular values, and the
    squared residuals where m > n and every matrix has full rank; 'gels'
    gives no rank and needs full rank.

    The solution is differentiable in A and B (through ``pinv(A) @ B``, as
    torch's backward), where the rank of A does not change; the other
    results are not. The rank comes from the singular values with tolerance
    ``rcond * max singular value`` (default ``eps * max(m, n)``), which is
    what gelsy decides except for a singular value within rounding of it.

    Parameters
    ----------
    A : Tensor
        (..., m, n) matrices of a floating dtype.
    B : Tensor
        (..., m, k) or (..., m) right-hand sides of A's dtype.
    rcond : float, optional
        Relative tolerance for the rank (default ``eps * max(m, n)``).
    driver : {'gelsy', 'gelsd', 'gelss', 'gels'}, optional
        Which LAPACK driver's results to return (default 'gelsy').

    Returns
    -------
    (solution, residuals, rank, singular_values) : retrograd.return_types.linalg_lstsq
        The named tuple torch returns.

    Raises
    ------
    RuntimeError
        Shapes or dtypes that do not match, or an unknown driver.
    LinAlgError
        driver='gels' with a rank-deficient A.

    Examples
    --------
    >>> import retrograd as rg
    >>> A = rg.tensor([[1., 0.], [0., 1.], [1., 1.]])
    >>> B = rg.tensor([1., 2., 3.])
    >>> X = rg.linalg.lstsq(A, B).solution
    >>> [round(v, 6) for v in X.tolist()]
    [1.0, 2.0]
    >>> rg.linalg.lstsq(A, B).rank
    tensor(2)
    """
    return return_types.linalg_lstsq(*_abi._linalg_lstsq_op(_tensor(A), _tensor(B), rcond, driver))


# the LU family, solve_triangular, matrix_exp and pinv (a module of their own: this one is near its size limit)
from retrograd.core._linalg_more import (  # noqa: E402
    lu, lu_factor, lu_factor_ex, lu_solve, matrix_exp, pinv, solve_triangular,
)

__all__ += ["lu_factor", "lu_factor_ex", "lu", "lu_solve", "solve_triangular", "matrix_exp", "pinv"]
