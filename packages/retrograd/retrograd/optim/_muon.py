"""Muon (momentum orthogonalized by Newton-Schulz), as ``torch.optim.Muon``."""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from retrograd.core import Tensor, no_grad, zeros_like
from retrograd.optim.adadelta import _fill_doc
from retrograd.optim.adam import _lerp_
from retrograd.optim.optimizer import Optimizer, ParamsT, _value

__all__ = ["Muon"]

# torch's defaults, from Keller Jordan's Muon: the quintic's coefficients, its
# number of iterations, and the floor of the norm that scales the input.
EPS = 1e-7
DEFAULT_A = 3.4445
DEFAULT_B = -4.7750
DEFAULT_C = 2.0315
DEFAULT_NS_STEPS = 5


def _round_bf16(a: Any) -> Any:
    """float32 values rounded to the nearest bfloat16 (ties to even), kept as float32.

    torch runs the Newton-Schulz iteration in bfloat16, each operation computed
    in float32 and rounded to bfloat16; rounding after each float32 operation
    here does the same without a bfloat16 dtype in NumPy. NaNs stay NaN.
    """
    a = a.astype(np.float32, copy=False)
    bits = a.view(np.uint32).astype(np.uint64)
    bits += 0x7FFF + ((bits >> 16) & 1)
    bits &= 0xFFFF0000
    out = bits.astype(np.uint32).view(np.float32)
    return np.where(np.isnan(a), a, out)


def _fma32(scale: Any, x: Any, y: Any) -> Any:
    """``scale * x + y`` in float32 with one rounding, as a fused multiply-add.

    torch's bfloat16 ``addmm`` on the CPU (oneDNN) adds ``beta * input`` to the
    scaled product with a fused multiply-add; a separate rounding of
    ``beta * input`` changes the bfloat16 result where it falls on a tie.
    The float64 product of two float32 numbers is exact.
    """
    return (np.float64(scale) * x.astype(np.float64) + y.astype(np.float64)).astype(np.float32)


def _zeropower_via_newtonschulz(grad: Any, ns_coefficients: tuple[float, float, float], ns_steps: int,
                                eps: float) -> Any:
    """The orthogonalised ``grad`` (an array), by torch's quintic Newton-Schulz iteration in bfloat16.

    The result approximates :math:`UV^T` of the SVD :math:`G = USV^T`, with
    singular values spread around 1 rather than all equal to 1. Returned as a
    float32 array holding bfloat16 values.
    """
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if grad.ndim != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = (np.float32(x) for x in ns_coefficients)
    # float64 goes to bfloat16 through float32, as torch's conversion does
    ortho = _round_bf16(grad.astype(np.float32))
    tall = grad.shape[0] > grad.shape[1]
    if tall:
        ortho = ortho.T
    # scale the spectral norm to at most 1 (the Frobenius norm bounds it)
    norm = _round_bf16(np.sqrt(np.sum(ortho * ortho, dtype=np.float32)))
    norm = _round_bf16(np.maximum(norm, np.float32(eps)))
    ortho = _round_bf16(ortho / norm)
    for _ in range(ns_steps):
        gram = _round_bf16(ortho @ ortho.T)
        gram_update = _round_bf16(_fma32(b, gram, c * (gram @ gram)))
        ortho = _round_bf16(_fma32(a, ortho, gram_update @ ortho))
    if tall:
        ortho = ortho.T
    return ortho


def _adjust_lr(lr: float, adjust_lr_fn: str | None, param_shape: tuple[int, ...]) -> float:
    """The learning rate scaled for the matrix's shape ``(A, B)``."""
    A, B = param_shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        adjusted_ratio = math.sqrt(max(1, A / B))
    elif adjust_lr_fn == "match_rms_adamw":
        adjusted_ratio = 0.2 * math.sqrt(max(A, B))
    else:
        adjusted_ratio = 1.0
    return lr * adjusted_ratio


@_fill_doc
class Muon(Optimizer):
    r"""Muon, momentum orthogonalized by Newton-Schulz, as ``torch.optim.Muon``.

    Muon is meant for the 2-D weights of hidden layers; optimize the other
    parameters (biases, embeddings, the output layer) with another optimizer
    such as :class:`AdamW`. With gradient :math:`g_t`, momentum :math:`\mu`,
    learning rate :math:`\gamma` and weight decay :math:`\lambda`, each step computes

    - the momentum buffer :math:`B_t = \mu B_{t-1} + (1-\mu) g_t` (torch's
      ``lerp``), and the direction :math:`\tilde B_t = (1-\mu) g_t + \mu B_t`
      with ``nesterov``, else :math:`B_t`;
    - :math:`O_t`: ``ns_steps`` iterations of the quintic
      :math:`X \leftarrow aX + (bXX^T + c(XX^T)^2)X` from
      :math:`X_0 = \tilde B_t / \max(\lVert\tilde B_t\rVert_F, \epsilon)` (on the
      transpose of a tall matrix), which drives the singular values towards 1;
    - :math:`\theta_t = \theta_{t-1}(1 - \gamma\lambda) - \gamma' O_t`, with
      :math:`\gamma' = \gamma\sqrt{\max(1, A/B)}` for an :math:`A \times B` matrix
      (``adjust_lr_fn="original"``) or :math:`0.2\gamma\sqrt{\max(A, B)}`
      (``"match_rms_adamw"``, which lets Muon reuse AdamW's learning rate and weight decay).

    As torch's, the iteration runs in bfloat16: retrograd computes each of its
    operations in float32 and rounds the result to bfloat16 (NumPy has no
    bfloat16 type). That reproduces torch's CPU results bit for bit for small
    matrices; for larger ones, the float32 sums inside the matrix products
    (torch's oneDNN kernels add in their own order) can round a few entries
    the other way, and the iteration spreads such one-ulp differences: the
    update then differs from torch's by about 1%% of its largest entry at
    most, as torch's own results differ between CPUs and GPUs. The state of
    a parameter is ``momentum_buffer``.

    Parameters
    ----------
    %(params)s
        Every parameter must be 2-D.
    lr : float or Tensor, default 1e-3
        Learning rate :math:`\gamma`.
    weight_decay : float, default 0.1
        Decoupled weight decay :math:`\lambda`.
    momentum : float, default 0.95
        Momentum :math:`\mu`.
    nesterov : bool, default True
        Use Nesterov momentum.
    ns_coefficients : tuple of three floats, default (3.4445, -4.775, 2.0315)
        Coefficients :math:`(a, b, c)` of the Newton-Schulz quintic.
    eps : float, default 1e-7
        Floor of the norm that scales the iteration's input.
    ns_steps : int, default 5
        Number of Newton-Schulz iterations (less than 100).
    adjust_lr_fn : {None, "original", "match_rms_adamw"}, default None
        How the learning rate is scaled by the matrix's shape (None: ``"original"``).

    Raises
    ------
    ValueError
        For a negative learning rate, momentum or weight decay, an unknown
        ``adjust_lr_fn``, a tensor ``lr`` with more than one element, or a
        parameter that is not 2-D; at ``step()``, for ``ns_steps >= 100`` or
        ``ns_coefficients`` that are not three values.
    RuntimeError
        At ``step()``, for a complex parameter.

    Examples
    --------
    >>> import retrograd as rg
    >>> w = rg.tensor([[1.0, 0.5], [-0.5, 2.0], [0.0, 1.0]], requires_grad=True)
    >>> opt = rg.optim.Muon([w], lr=0.1)
    >>> for _ in range(3):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     opt.step()
    >>> w
    tensor([[ 0.5952842 ,  0.39717302],
            [-0.3665198 ,  1.72694   ],
            [-0.03065322,  0.8556596 ]], requires_grad=True)
    >>> list(opt.state[w])
    ['momentum_buffer']

    Muon for the matrices and AdamW for the rest:

    >>> model = rg.nn.Sequential(rg.nn.Linear(4, 8), rg.nn.ReLU(), rg.nn.Linear(8, 2))
    >>> matrices = [p for p in model.parameters() if p.ndim == 2]
    >>> others = [p for p in model.parameters() if p.ndim != 2]
    >>> opt_muon = rg.optim.Muon(matrices, lr=0.02)
    >>> opt_adamw = rg.optim.AdamW(others, lr=3e-4)
    >>> model(rg.randn(5, 4)).square().mean().backward()
    >>> opt_muon.step()
    >>> opt_adamw.step()
    """

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-3, weight_decay: float = 0.1, momentum: float = 0.95,
                 nesterov: bool = True,
                 ns_coefficients: tuple[float, float, float] = (DEFAULT_A, DEFAULT_B, DEFAULT_C),
                 eps: float = EPS, ns_steps: int = DEFAULT_NS_STEPS, adjust_lr_fn: str | None = None) -> None:
        # torch's checks and messages, in torch's order
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = {"lr": lr, "weight_decay": weight_decay, "momentum": momentum, "nesterov": nesterov,
                    "ns_coefficients": ns_coefficients, "eps": eps, "ns_steps": ns_steps,
                    "adjust_lr_fn": adjust_lr_fn}
        super().__init__(params, defaults)
        # as torch, checked here only (a group added later is checked by step())
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a parameter with size: "
                                     f"{p.size()}")

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one Muon step on every parameter that has a gradient.

        Parameters
        ----------
        closure : callable, optional
            Re-evaluates the model and returns the loss (run with grad enabled first).

        Returns
        -------
        object
            The closure's result, or None.

        Raises
        ------
        RuntimeError
            For a complex parameter.
        ValueError
            For a gradient that is not 2-D, ``ns_steps >= 100``, or ``ns_coefficients``
            that are not three values.

        Examples
        --------
        >>> import retrograd as rg
        >>> p = rg.tensor([[3.0, 0.0], [0.0, 1.0]], requires_grad=True)
        >>> p.grad = rg.tensor([[3.0, 0.0], [0.0, 1.0]])
        >>> rg.optim.Muon([p], lr=0.5, weight_decay=0.0).step()

        The five quintic iterations bring the singular values 3 and 1 of the
        direction to about 0.75 and 1.13, not exactly 1 (by design):

        >>> p
        tensor([[2.625     , 0.        ],
                [0.        , 0.43359375]], requires_grad=True)
        """
        loss = self._run_closure(closure)
        with no_grad():
            for group in self.param_groups:
                params = []
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    if p.dtype.kind == "c":
                        raise RuntimeError("Muon does not support complex parameters")
                    params.append(p)
                    p_state = self.state[p]
                    if "momentum_buffer" not in p_state:
                        p_state["momentum_buffer"] = zeros_like(p.grad)
                if params:
                    _single_tensor_muon(params, self.state, lr=float(_value(group["lr"])),
                                        weight_decay=float(group["weight_decay"]), momentum=float(group["momentum"]),
                                        nesterov=group["nesterov"], ns_coefficients=group["ns_coefficients"],
                                        ns_steps=group["ns_steps"], eps=float(group["eps"]),
                                        adjust_lr_fn=group["adjust_lr_fn"])
                    self._bump_versions(params)
        return loss


def _single_tensor_muon(params: list[Any], state: Any, *, lr: float, weight_decay: float, momentum: float,
                        nesterov: bool, ns_coefficients: tuple[float, float, float], ns_steps: int, eps: float,
                        adjust_lr_fn: str | None) -> None:
    # Order of operations as torch's _single_tensor_muon, on the arrays.
    for p in params:
        param = p._array
        grad = p.grad._array
        if grad.ndim != 2:
            raise ValueError("Param gradient must be a 2D matrix")
        buf = state[p]["momentum_buffer"]._array
        _lerp_(buf, grad, 1 - momentum, np.empty_like(buf))
        if nesterov:
            update = grad.copy()
            _lerp_(update, buf, momentum, np.empty_like(update))
        else:
            update = buf
        ortho = _zeropower_via_newtonschulz(update, ns_coefficients, ns_steps, eps)
        adjusted_lr = _adjust_lr(lr, adjust_lr_fn, param.shape)
        param *= 1 - lr * weight_decay
        step = ortho.astype(param.dtype)
        step *= -adjusted_lr
        param += step
