"""Ready-made parametrizations (``torch.nn.utils.parametrizations``):
orthogonal, weight_norm and spectral_norm, built on
:func:`retrograd.nn.utils.parametrize.register_parametrization`.

``orthogonal`` supports the three maps of torch: ``"matrix_exp"`` (a
scaling-and-squaring Taylor series of retrograd's matmuls), ``"cayley"``
(``rg.linalg.solve``) and ``"householder"`` (a product of reflectors built
from matmuls); the QR factorisations behind ``right_inverse`` are NumPy's
(LAPACK's geqrf, as torch's). Real weights only.
"""
from __future__ import annotations

import math
from enum import Enum, auto
import numpy as np

import retrograd.core as _c
from retrograd.core import Tensor
from retrograd.nn import functional as F
from retrograd.nn.modules.module import Module
from retrograd.nn.utils import parametrize

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def _eye_like(x: Tensor, n: int, k: int | None = None) -> Tensor:
    return _c.as_tensor(np.eye(n, n if k is None else k, dtype=x.dtype)).to(device=x.device)


def _matrix_exp(a: Tensor) -> Tensor:
    # exp(a) = exp(a / 2**s) ** (2**s), the inner one a Taylor series of
    # degree 18 (its remainder is below 1e-22 once the 1-norm is at most 1/2)
    with _c.no_grad():
        norm = float(np.abs(np.asarray(a.detach())).sum(-2).max()) if a.numel() else 0.0
    s = max(0, math.ceil(math.log2(norm / 0.5))) if norm > 0.5 else 0
    x = _c.div(a, 2.0 ** s)
    eye = _eye_like(a, a.shape[-1])
    e = eye
    for k in range(18, 0, -1):
        e = _c.add(eye, _c.div(_c.matmul(x, e), k))
    for _ in range(s):
        e = _c.matmul(e, e)
    return e


def _householder_product(a: Tensor, tau: Tensor) -> Tensor:
    # torch.linalg.householder_product: the first k columns of
    # H_0 H_1 ... H_{k-1}, H_i = I - tau_i v_i v_i^T, where v_i is column i of
    # `a` below the diagonal with a 1 on it
    n, k = a.shape[-2], a.shape[-1]
    q = _c.expand(_eye_like(a, n, k), tuple(a.shape[:-2]) + (n, k))
    rows = np.arange(n)
    for i in range(k - 1, -1, -1):
        below = _c.as_tensor((rows > i).astype(a.dtype)).to(device=a.device)
        unit = _c.as_tensor((rows == i).astype(a.dtype)).to(device=a.device)
        v = _c.unsqueeze(_c.add(_c.mul(a.select(-1, i), below), unit), -1)          # (..., n, 1)
        proj = _c.matmul(_c.transpose(v, -1, -2), q)                                       # (..., 1, k)
        t = _c.unsqueeze(_c.unsqueeze(tau.select(-1, i), -1), -1)
        q = _c.sub(q, _c.mul(t, _c.matmul(v, proj)))
    return q


def _geqrf(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # LAPACK's packed QR (torch.geqrf), matrix by matrix; NumPy's "raw" mode
    # returns the packed factor transposed
    batch = a.shape[:-2]
    flat = a.reshape(-1, *a.shape[-2:])
    packed = np.empty_like(flat)
    taus = np.empty((flat.shape[0], min(a.shape[-2:])), dtype=a.dtype)
    for i, m in enumerate(flat):
        h, tau = np.linalg.qr(m, mode="raw")
        packed[i], taus[i] = h.T, tau
    return packed.reshape(a.shape), taus.reshape(batch + (taus.shape[-1],))


def _make_orthogonal(a: np.ndarray) -> np.ndarray:
    # Q of a = QR with diag(R) >= 0 (a tall)
    q, r = np.linalg.qr(a)
    return q * np.sign(np.diagonal(r, axis1=-2, axis2=-1))[..., None, :]


def _is_orthogonal(q: np.ndarray) -> bool:
    n, k = q.shape[-2], q.shape[-1]
    eps = 10.0 * n * np.finfo(q.dtype).eps
    return bool(np.allclose(np.swapaxes(q, -1, -2) @ q, np.eye(k), atol=eps))


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    base: Tensor

    def __init__(self, weight: Tensor, orthogonal_map: _OrthMaps, *, use_trivialization: bool = True) -> None:
        super().__init__()
        if weight.dtype.kind == "c":
            raise NotImplementedError("orthogonal: complex (unitary) weights are not supported in retrograd; use "
                                      "a real weight")
        self.shape = tuple(weight.shape)
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = _c.tril(X)
            if n != k:
                zeros = _c.zeros(tuple(X.shape[:-2]) + (n, n - k), dtype=X.dtype, device=X.device)
                X = _c.cat([X, zeros], -1)
            A = _c.sub(X, X.mT)
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = _matrix_exp(A)
            else:
                eye = _eye_like(A, n)
                Q = _c.linalg.solve(_c.sub(eye, _c.mul(A, 0.5)), _c.add(eye, _c.mul(A, 0.5)))
            if n != k:
                Q = Q[..., :k]
        else:
            A = _c.tril(X, -1)
            tau = _c.div(2.0, _c.add(_c.sum(_c.mul(A, A), -2), 1.0))
            Q = _householder_product(A, tau)
            # torch multiplies by the diagonal cast to int: truncated, no gradient
            Q = _c.mul(Q, _c.unsqueeze(_c.trunc(_c.diagonal(X, 0, -2, -1)).detach(), -2))
        if "base" in self._buffers:
            Q = _c.matmul(self.base, Q)
        if transposed:
            Q = Q.mT
        return Q

    def right_inverse(self, Q: Tensor) -> Tensor:
        if tuple(Q.shape) != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. Got a tensor of shape "
                             f"{tuple(Q.shape)}.")
        with _c.no_grad():
            q = np.asarray(Q.detach())
            n, k = q.shape[-2], q.shape[-1]
            transpose = n < k
            if transpose:
                q = np.swapaxes(q, -1, -2)
                n, k = k, n
            if "base" not in self._buffers:
                if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                    raise NotImplementedError("It is not possible to assign to the matrix exponential or the Cayley "
                                              "parametrizations when use_trivialization=False.")
                a, tau = _geqrf(q)
                idx = np.arange(k)
                # the signs of R's diagonal, flipped where tau is zero (no reflector)
                a[..., idx, idx] = np.sign(a[..., idx, idx]) * np.where(tau == 0.0, -1.0, 1.0)
                if transpose:
                    a = np.swapaxes(a, -1, -2)
                return _c.as_tensor(np.ascontiguousarray(a)).to(device=Q.device)
            if n == k:
                base = _make_orthogonal(q) if not _is_orthogonal(q) else q.copy()
            else:
                pad = np.asarray(_c.randn(*(q.shape[:-2] + (n, n - k)), dtype=Q.dtype))
                base = _make_orthogonal(np.concatenate([q, pad], -1))
            self.base = _c.as_tensor(base.astype(Q.dtype)).to(device=Q.device)
            neg_id = np.zeros(Q.shape, dtype=Q.dtype)
            idx = np.arange(k)
            neg_id[..., idx, idx] = -1.0
            return _c.as_tensor(neg_id).to(device=Q.device)


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> Module:
    """Constrain a matrix (or a batch of them) of ``module`` to be orthogonal.

    The weight ``Q`` of shape ``(..., m, n)`` gets orthonormal columns when
    ``m >= n`` and orthonormal rows otherwise, computed from an
    unconstrained original:

    - ``"matrix_exp"`` / ``"cayley"``: the matrix exponential or the Cayley
      map ``(I - A/2)^-1 (I + A/2)`` of a skew-symmetric ``A`` built from the
      original's lower triangle;
    - ``"householder"``: a product of Householder reflectors stored below
      the original's diagonal.

    With ``use_trivialization`` (default) an extra buffer ``base`` (an
    orthogonal ``n x n`` matrix, in ``module.parametrizations.<name>[0]``)
    multiplies the map's output, and the initial weight is the original
    one when it is orthogonal, its QR orthogonalisation otherwise (a
    non-square weight is completed with random columns first).

    Parameters
    ----------
    module : Module
        The module holding the tensor.
    name : str, optional
        The tensor's name (default ``"weight"``).
    orthogonal_map : {"matrix_exp", "cayley", "householder"}, optional
        Default: ``"matrix_exp"`` for square matrices, ``"householder"``
        otherwise.
    use_trivialization : bool, optional
        Keyword-only: use the dynamic trivialization (default True).

    Returns
    -------
    Module
        ``module``, parametrized.

    Raises
    ------
    ValueError
        If the module has no such tensor, it has fewer than 2 dims, or the
        map is unknown.
    NotImplementedError
        For a complex weight.

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.utils.parametrizations.orthogonal(rg.nn.Linear(3, 5))
    >>> q = m.weight.detach()
    >>> bool(((q.T @ q - rg.eye(3)).abs() < 1e-5).all())
    True
    >>> sorted(m.state_dict())
    ['bias', 'parametrizations.weight.0.base', 'parametrizations.weight.original']
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = ("matrix_exp" if weight.shape[-2] == weight.shape[-1] or weight.dtype.kind == "c"
                          else "householder")
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


def _norm_except_dim(v: Tensor, dim: int) -> Tensor:
    # torch.norm_except_dim(v, 2, dim): the 2-norm over every dim but `dim`,
    # kept as size 1; dim -1 means the whole tensor (a 0-d norm)
    if dim == -1:
        return _c.linalg.vector_norm(v)
    d = dim % v.ndim
    others = tuple(i for i in range(v.ndim) if i != d)
    return _c.linalg.vector_norm(v, 2, others, True) if others else _c.abs(v)


def _check_dim(v: Tensor, dim: int) -> None:
    if not -v.ndim <= dim < max(v.ndim, 1):
        raise IndexError(f"Dimension out of range (expected to be in range of [{-v.ndim}, {v.ndim - 1}], but got "
                         f"{dim})")


def _weight_norm(v: Tensor, g: Tensor, dim: int) -> Tensor:
    # torch._weight_norm: v * (g / ||v||), the norm over every dim but `dim`
    return _c.mul(v, _c.div(g, _norm_except_dim(v, dim)))


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        _check_dim(weight, self.dim)
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Weight normalisation (Salimans and Kingma, 2016) as a parametrization:
    ``weight = g * v / ||v||``.

    The magnitude ``g`` and the direction ``v`` become
    ``module.parametrizations.<name>.original0`` and ``.original1`` (torch's
    layout); the norm is over every dim but ``dim`` (``dim=None``: the
    whole tensor). A state dict of the hook-based
    :func:`retrograd.nn.utils.weight_norm` (``<name>_g``, ``<name>_v``)
    loads into it.

    Parameters
    ----------
    module : Module
        The module holding the tensor.
    name : str, optional
        The tensor's name (default ``"weight"``).
    dim : int or None, optional
        The dim kept by the norm (default 0: one norm per output).

    Returns
    -------
    Module
        ``module``, parametrized.

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.utils.parametrizations.weight_norm(rg.nn.Linear(4, 3))
    >>> m.parametrizations.weight.original0.shape, m.parametrizations.weight.original1.shape
    ((3, 1), (3, 4))
    """
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def compat_hook(state_dict: dict, prefix: str) -> None:
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module.__dict__.setdefault("_parametrize_load_hooks", []).append(compat_hook)
    return module


def _power_iteration(weight_mat: Tensor, u: Tensor, v: Tensor, steps: int, eps: float) -> None:
    # u <- normalize(W v), v <- normalize(W^T u), written into the buffers
    with _c.no_grad():
        for _ in range(steps):
            F.normalize(_c.matmul(weight_mat, v), dim=0, eps=eps, out=u)
            F.normalize(_c.matmul(weight_mat.T, u), dim=0, eps=eps, out=v)


class _SpectralNorm(Module):
    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but got "
                             f"{dim})")
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            u = _c.empty(h, dtype=weight.dtype, device=weight.device).normal_(0, 1)
            v = _c.empty(w, dtype=weight.dtype, device=weight.device).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            # start from a good estimate of the singular vectors
            _power_iteration(weight_mat.detach(), self._u, self._v, 15, self.eps)

    def _reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = _c.permute(weight, (self.dim,) + tuple(d for d in range(weight.ndim) if d != self.dim))
        return _c.flatten(weight, 1)

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            _power_iteration(weight_mat.detach(), self._u, self._v, self.n_power_iterations, self.eps)
        # copies: a later power iteration must not change what backward reads
        u, v = self._u.clone(), self._v.clone()
        sigma = _c.dot(u, _c.matmul(weight_mat, v))
        return _c.div(weight, sigma)

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def _conv_transpose_classes() -> tuple[type, ...]:
    from retrograd import nn
    return tuple(c for c in (getattr(nn, f"ConvTranspose{i}d", None) for i in (1, 2, 3)) if isinstance(c, type))


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: int | None = None) -> Module:
    """Spectral normalisation (Miyato et al., 2018) as a parametrization:
    ``weight / sigma``, ``sigma`` the largest singular value estimated by
    power iteration.

    The weight is viewed as a matrix with dim ``dim`` as its rows. The
    estimates of the singular vectors are the buffers ``_u`` and ``_v`` of
    ``module.parametrizations.<name>[0]`` (torch's state dict layout),
    refined by 15 iterations at registration and by ``n_power_iterations``
    at each access in training mode; in eval mode they stay as they are.
    A 1-D tensor is just divided by its norm.

    Parameters
    ----------
    module : Module
        The module holding the tensor.
    name : str, optional
        The tensor's name (default ``"weight"``).
    n_power_iterations : int, optional
        Power iterations per access in training mode (default 1).
    eps : float, optional
        A lower bound of the norms in the iteration (default 1e-12).
    dim : int, optional
        The output dim (default 0; 1 for ConvTranspose modules).

    Returns
    -------
    Module
        ``module``, parametrized.

    Raises
    ------
    ValueError
        If the module has no such tensor, or ``n_power_iterations`` is not positive.
    IndexError
        If ``dim`` is out of range.

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.utils.parametrizations.spectral_norm(rg.nn.Linear(4, 3))
    >>> sorted(m.state_dict())
    ['bias', 'parametrizations.weight.0._u', 'parametrizations.weight.0._v', 'parametrizations.weight.original']
    >>> s = rg.linalg.svdvals(m.weight.detach())
    >>> bool(abs(float(s[0]) - 1.0) < 1e-3)
    True
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, _conv_transpose_classes()) else 0
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
