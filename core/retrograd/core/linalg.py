"""retrograd.linalg (rg.linalg): torch.linalg's inv, solve, det, slogdet,
norm (with vector_norm / matrix_norm), cholesky, svd and svdvals, eigh and
eigvalsh, qr and lstsq, batched over leading
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
    """The inverse of each square matrix of ``A`` (..., n, n)."""
    return _abi._linalg_inv_op(_tensor(A))


@composite_op('linalg_det')
def det(A, *, out=None):
    """The determinant of each square matrix of ``A``."""
    return _abi._linalg_det_op(_tensor(A))


@composite_op('linalg_slogdet')
def slogdet(A, *, out=None):
    """``(sign, logabsdet)`` of each square matrix of ``A``, from one
    factorization. Both require grad when ``A`` does, as torch's; a real
    matrix's sign is piecewise constant (zero gradient)."""
    return return_types.slogdet(*_abi._linalg_slogdet_op(_tensor(A)))


@composite_op('linalg_solve')
def solve(A, B, *, left=True, out=None):
    """X with ``A @ X = B`` (``X @ A = B`` with left=False). B is a (batch of)
    vector(s) when it is 1-D or has A's batch shape plus one dim, as torch."""
    A, B = _tensor(A), _tensor(B)
    if left:
        return _abi._linalg_solve_op(A, B)
    if B.ndim < 2:
        raise RuntimeError("linalg.solve: left=False needs B to be a (batch of) matrices")
    return _abi.transpose(_abi._linalg_solve_op(_abi.transpose(A, -2, -1), _abi.transpose(B, -2, -1)), -2, -1)


@composite_op('linalg_cholesky')
def cholesky(A, *, upper=False, out=None):
    """The lower Cholesky factor L (``A = L @ L.mH``) of each symmetric positive
    definite matrix of ``A``; upper=True gives ``L.mH``. Only A's lower
    triangle is read, and the gradient is symmetric, as torch's."""
    L = _abi._linalg_cholesky_op(_tensor(A))
    return _abi.transpose(L, -2, -1) if upper else L


@composite_op('linalg_svdvals')
def svdvals(A, *, driver=None, out=None):
    """The singular values of each matrix of ``A`` (..., m, n), descending;
    the gradient is ``U diag(g) Vh``, as torch's (U and Vh are computed only
    when a derivative may need them)."""
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
    """torch.linalg.vector_norm: the ord-norm over ``dim`` (all dims when None)."""
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.vector_norm: ord must be a number, got {ord!r}")
    return _abi.norm(_tensor(x), ord, dim, keepdim, dtype=dtype)


@composite_op('linalg_matrix_norm')
def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """torch.linalg.matrix_norm for ord 'fro', 'nuc', 1, -1, 2, -2, inf, -inf
    over the two dims ``dim`` ('nuc', 2, -2 through the singular values)."""
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
    """torch.linalg.norm: a vector norm when ``dim`` is an int or A is 1-D, a
    matrix norm when ``dim`` is a 2-tuple or A is 2-D with an ord given; with
    ord and dim None, the 2-norm of A flattened."""
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
