"""rg.nn.init: in-place initialisation of parameters, with torch's distributions.

Every function fills its tensor in place under :class:`rg.no_grad
<retrograd.no_grad>` (so it works on parameters that require grad, and
records nothing in the graph) and returns the same tensor. The random ones
draw from ``generator`` when given (an ``np.random.Generator``), otherwise
from retrograd's global generator, ``rg.core.get_rng()``, which
``rg.manual_seed`` seeds. Samples are drawn on the host in float64 and then
cast to the tensor's dtype and moved to its device.

The fan of a weight follows torch: for a tensor of shape
``(out, in, *kernel)``, ``fan_in = in * prod(kernel)`` and
``fan_out = out * prod(kernel)``.
"""
from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any, Literal

import numpy as np

import retrograd.core as _c
from retrograd.core import Tensor
from retrograd.core.extending import wrap as _wrap

__all__ = [
    "calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "zeros_", "eye_", "dirac_",
    "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_", "orthogonal_", "sparse_",
    "uniform", "normal", "constant", "eye", "dirac", "xavier_uniform", "xavier_normal", "kaiming_uniform",
    "kaiming_normal", "orthogonal", "sparse",
]

_Nonlinearity = Literal["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                        "conv_transpose3d", "sigmoid", "tanh", "relu", "leaky_relu", "selu"]
_FanMode = Literal["fan_in", "fan_out"]

# the layers whose output is a linear function of their input: gain 1
_LINEAR_FNS = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
               "conv_transpose3d")


def calculate_gain(nonlinearity: _Nonlinearity, param: int | float | None = None) -> float:
    r"""The recommended gain for an initialisation followed by ``nonlinearity``.

    The gain scales the standard deviation of Xavier and Kaiming
    initialisation so that activations keep their variance through the
    layer: 1 for linear layers and sigmoid, 5/3 for tanh, sqrt(2) for ReLU,
    sqrt(2 / (1 + slope**2)) for leaky ReLU and 3/4 for SELU, as torch's.

    Parameters
    ----------
    nonlinearity : str
        The name of the function in ``rg.nn.functional``: ``'linear'``,
        ``'conv1d'``, ``'conv2d'``, ``'conv3d'``, ``'conv_transpose1d'``,
        ``'conv_transpose2d'``, ``'conv_transpose3d'``, ``'sigmoid'``,
        ``'tanh'``, ``'relu'``, ``'leaky_relu'`` or ``'selu'``.
    param : int or float, optional
        The negative slope of ``'leaky_relu'`` (default 0.01); ignored by
        the others.

    Returns
    -------
    float
        The gain.

    Raises
    ------
    ValueError
        For an unknown nonlinearity, or a leaky ReLU slope that is not an
        int or float (bool included).

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.nn.init.calculate_gain("tanh")
    1.6666666666666667
    >>> round(rg.nn.init.calculate_gain("leaky_relu", 0.2), 6)
    1.38675
    """
    if nonlinearity in _LINEAR_FNS or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        # torch's empirical value for self-normalising networks
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


# --- helpers ----------------------------------------------------------------------------

def _rng(generator):
    if generator is None:
        return _c.get_rng()
    if not isinstance(generator, np.random.Generator):
        raise TypeError(f"generator must be an np.random.Generator (or None for retrograd's global one, "
                        f"seeded by rg.manual_seed), not {type(generator).__name__}")
    return generator


def _check_tensor(tensor, fn):
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{fn}(): argument 'tensor' must be a retrograd Tensor, not {type(tensor).__name__}")


def _check_floating(tensor, fn):
    # random fills of an integer tensor would truncate silently; torch
    # refuses them too
    if not (_c.is_floating_dtype(tensor.dtype) or tensor.dtype.kind == "c"):
        raise NotImplementedError(f"{fn}(): not implemented for {tensor.dtype} tensors, as in torch; "
                                  "initialise a floating-point tensor")


def _fill(tensor, values):
    """Write host array `values` (any dtype) into `tensor` in place, without
    grad: its version counter moves, as torch's in-place init does."""
    arr = np.asarray(values).astype(tensor.dtype, copy=False).reshape(tuple(tensor.shape))
    if not isinstance(tensor._array, np.ndarray) and hasattr(tensor._array, "get"):
        import cupy
        with cupy.cuda.Device(tensor._array.device.id):
            arr = cupy.asarray(arr)
    with _c.no_grad():
        tensor.copy_(_wrap(arr, device=tensor.device))
    return tensor


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """(fan_in, fan_out) of a weight of shape (out, in, *kernel), as torch's."""
    shape = tuple(tensor.shape)
    if len(shape) < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive = math.prod(shape[2:])
    return shape[1] * receptive, shape[0] * receptive


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    valid = ["fan_in", "fan_out"]
    if mode not in valid:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


# --- plain distributions and constants ----------------------------------------------------

def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: np.random.Generator | None = None) -> Tensor:
    """Fill ``tensor`` with samples of the uniform distribution U(a, b).

    Parameters
    ----------
    tensor : Tensor
        A floating-point tensor, filled in place.
    a, b : float, optional
        The bounds (default 0 and 1).
    generator : np.random.Generator, optional
        Where the samples come from (default: ``rg.core.get_rng()``).

    Returns
    -------
    Tensor
        ``tensor`` itself.

    Raises
    ------
    RuntimeError
        If ``a > b``.
    NotImplementedError
        For an integer or bool tensor.

    Examples
    --------
    >>> import retrograd as rg
    >>> w = rg.empty(2, 3)
    >>> rg.nn.init.uniform_(w, -0.1, 0.1) is w
    True
    >>> bool((w.abs() <= 0.1).numpy().all())
    True
    """
    _check_tensor(tensor, "uniform_")
    _check_floating(tensor, "uniform_")
    if a > b:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={a} > to={b}")
    return _fill(tensor, _rng(generator).uniform(a, b, tuple(tensor.shape)))


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0,
            generator: np.random.Generator | None = None) -> Tensor:
    """Fill ``tensor`` with samples of the normal distribution N(mean, std**2).

    Parameters
    ----------
    tensor : Tensor
        A floating-point tensor, filled in place.
    mean : float, optional
        The mean (default 0).
    std : float, optional
        The standard deviation (default 1), at least 0.
    generator : np.random.Generator, optional
        Where the samples come from (default: ``rg.core.get_rng()``).

    Returns
    -------
    Tensor
        ``tensor`` itself.

    Raises
    ------
    RuntimeError
        If ``std`` is negative.
    NotImplementedError
        For an integer or bool tensor.

    Examples
    --------
    >>> import retrograd as rg
    >>> import numpy as np
    >>> w = rg.empty(1000, 100)
    >>> _ = rg.nn.init.normal_(w, 0.0, 0.02, generator=np.random.default_rng(0))
    >>> round(float(w.std()), 3)
    0.02
    """
    _check_tensor(tensor, "normal_")
    _check_floating(tensor, "normal_")
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    return _fill(tensor, _rng(generator).normal(mean, std, tuple(tensor.shape)))


def _norm_cdf(x):
    return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0,
                  generator: np.random.Generator | None = None) -> Tensor:
    """Fill ``tensor`` with samples of N(mean, std**2) truncated to [a, b].

    Samples are drawn by rejection: from the normal distribution itself when
    [a, b] holds more than 30% of its mass, otherwise uniformly on [a, b]
    and kept with probability pdf(x) / max pdf on [a, b]. Either way every
    value is a sample of the truncated distribution. As torch's, it warns
    when ``mean`` lies more than two ``std`` outside [a, b].

    Parameters
    ----------
    tensor : Tensor
        A floating-point tensor, filled in place.
    mean : float, optional
        The mean of the normal distribution before truncation (default 0).
    std : float, optional
        Its standard deviation (default 1), positive.
    a, b : float, optional
        The truncation bounds (default -2 and 2), ``a < b``.
    generator : np.random.Generator, optional
        Where the samples come from (default: ``rg.core.get_rng()``).

    Returns
    -------
    Tensor
        ``tensor`` itself.

    Raises
    ------
    ValueError
        If ``std`` is not positive, ``a >= b``, or the bounds hold less
        than 30% of the mass and one of them is infinite (rejection from a
        uniform proposal needs a finite interval).
    NotImplementedError
        For an integer or bool tensor.

    Examples
    --------
    >>> import retrograd as rg
    >>> _ = rg.manual_seed(0)
    >>> w = rg.nn.init.trunc_normal_(rg.empty(100, 100), std=0.02, a=-0.04, b=0.04)
    >>> bool((w.abs() <= 0.04).numpy().all())
    True
    """
    _check_tensor(tensor, "trunc_normal_")
    _check_floating(tensor, "trunc_normal_")
    if not std > 0:
        raise ValueError(f"trunc_normal_: std must be positive, got {std}")
    if not a < b:
        raise ValueError(f"trunc_normal_: the bounds must satisfy a < b, got a={a}, b={b}")
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
                      "The distribution of values may be incorrect.", stacklevel=2)
    rng = _rng(generator)
    shape = tuple(tensor.shape)
    n = math.prod(shape)
    mass = _norm_cdf((b - mean) / std) - _norm_cdf((a - mean) / std)
    # the bounds in the tensor's dtype, so no kept value rounds outside them
    lo, hi = (float(np.asarray(v, dtype=tensor.dtype)) for v in (a, b))
    out = np.empty(n)
    todo = np.arange(n)
    if mass > 0.3:
        while todo.size:
            draw = rng.normal(mean, std, todo.size)
            ok = (draw >= lo) & (draw <= hi)
            out[todo[ok]] = draw[ok]
            todo = todo[~ok]
    else:
        if not (math.isfinite(a) and math.isfinite(b)):
            raise ValueError(f"trunc_normal_: [a, b] = [{a}, {b}] holds only {mass:.3g} of the normal "
                             "distribution's mass and is unbounded; give finite bounds")
        peak = min(max(mean, a), b)                 # where the pdf is largest on [a, b]
        log_peak = -0.5 * ((peak - mean) / std) ** 2
        while todo.size:
            draw = rng.uniform(a, b, todo.size)
            log_ratio = -0.5 * ((draw - mean) / std) ** 2 - log_peak
            ok = (np.log(rng.random(todo.size)) <= log_ratio) & (draw >= lo) & (draw <= hi)
            out[todo[ok]] = draw[ok]
            todo = todo[~ok]
    return _fill(tensor, out)


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill ``tensor`` with the value ``val``.

    Parameters
    ----------
    tensor : Tensor
        The tensor to fill in place (any dtype: ``val`` is cast to it).
    val : float
        The value.

    Returns
    -------
    Tensor
        ``tensor`` itself.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.nn.init.constant_(rg.empty(3), 0.5)
    tensor([0.5, 0.5, 0.5])
    """
    _check_tensor(tensor, "constant_")
    return _fill(tensor, np.full(tuple(tensor.shape), val))


def ones_(tensor: Tensor) -> Tensor:
    """Fill ``tensor`` with ones.

    Parameters
    ----------
    tensor : Tensor
        The tensor to fill in place.

    Returns
    -------
    Tensor
        ``tensor`` itself.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.nn.init.ones_(rg.empty(2, 2))
    tensor([[1., 1.],
            [1., 1.]])
    """
    return constant_(tensor, 1)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill ``tensor`` with zeros.

    Parameters
    ----------
    tensor : Tensor
        The tensor to fill in place.

    Returns
    -------
    Tensor
        ``tensor`` itself.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.nn.init.zeros_(rg.empty(3))
    tensor([0., 0., 0.])
    """
    return constant_(tensor, 0)


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-D ``tensor`` with the identity matrix (ones on the main
    diagonal, zeros elsewhere; a rectangular tensor keeps as many inputs as
    it can).

    Parameters
    ----------
    tensor : Tensor
        A 2-D tensor, filled in place.

    Returns
    -------
    Tensor
        ``tensor`` itself.

    Raises
    ------
    ValueError
        If ``tensor`` is not 2-D.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.nn.init.eye_(rg.empty(2, 3))
    tensor([[1., 0., 0.],
            [0., 1., 0.]])
    """
    _check_tensor(tensor, "eye_")
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    return _fill(tensor, np.eye(rows, cols))


# --- scaled by fan: Xavier (Glorot) and Kaiming (He) ------------------------------------------

def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator: np.random.Generator | None = None) -> Tensor:
    r"""Fill ``tensor`` with Xavier (Glorot) uniform samples.

    The values come from U(-bound, bound) with
    ``bound = gain * sqrt(6 / (fan_in + fan_out))`` (Glorot and Bengio,
    2010), which keeps the variance of activations and gradients alike.

    Parameters
    ----------
    tensor : Tensor
        A floating-point tensor of at least 2 dims, ``(out, in, *kernel)``,
        filled in place.
    gain : float, optional
        A scale factor (default 1; see :func:`calculate_gain`).
    generator : np.random.Generator, optional
        Where the samples come from (default: ``rg.core.get_rng()``).

    Returns
    -------
    Tensor
        ``tensor`` itself.

    Raises
    ------
    ValueError
        If ``tensor`` has fewer than 2 dims.

    Examples
    --------
    >>> import retrograd as rg
    >>> w = rg.nn.init.xavier_uniform_(rg.empty(20, 30), gain=rg.nn.init.calculate_gain("relu"))
    >>> bool((w.abs() <= 2 ** 0.5 * (6 / 50) ** 0.5).numpy().all())
    True
    """
    _check_tensor(tensor, "xavier_uniform_")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    bound = math.sqrt(3.0) * std          # U(-b, b) has std b / sqrt(3)
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: np.random.Generator | None = None) -> Tensor:
    r"""Fill ``tensor`` with Xavier (Glorot) normal samples.

    The values come from N(0, std**2) with
    ``std = gain * sqrt(2 / (fan_in + fan_out))``.

    Parameters
    ----------
    tensor : Tensor
        A floating-point tensor of at least 2 dims, filled in place.
    gain : float, optional
        A scale factor (default 1; see :func:`calculate_gain`).
    generator : np.random.Generator, optional
        Where the samples come from (default: ``rg.core.get_rng()``).

    Returns
    -------
    Tensor
        ``tensor`` itself.

    Raises
    ------
    ValueError
        If ``tensor`` has fewer than 2 dims.

    Examples
    --------
    >>> import retrograd as rg
    >>> _ = rg.manual_seed(0)
    >>> w = rg.nn.init.xavier_normal_(rg.empty(400, 600))
    >>> round(float(w.std()), 3)        # sqrt(2 / 1000)
    0.045
    """
    _check_tensor(tensor, "xavier_normal_")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _kaiming_std(tensor, a, mode, nonlinearity, fn):
    """The Kaiming standard deviation gain / sqrt(fan), or None (with torch's
    warning) for a tensor with no elements."""
    _check_tensor(tensor, fn)
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return None
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: _FanMode = "fan_in",
                     nonlinearity: _Nonlinearity = "leaky_relu",
                     generator: np.random.Generator | None = None) -> Tensor:
    r"""Fill ``tensor`` with Kaiming (He) uniform samples.

    The values come from U(-bound, bound) with
    ``bound = gain * sqrt(3 / fan)`` (He et al., 2015), where ``gain`` is
    ``calculate_gain(nonlinearity, a)`` and ``fan`` is fan_in or fan_out.
    Linear and convolution layers initialise their weights with
    ``a=sqrt(5)``, which gives ``bound = 1 / sqrt(fan_in)``.

    Parameters
    ----------
    tensor : Tensor
        A floating-point tensor of at least 2 dims, ``(out, in, *kernel)``,
        filled in place.
    a : float, optional
        The negative slope of the leaky ReLU after this layer (default 0;
        used only with ``nonlinearity='leaky_relu'``).
    mode : {'fan_in', 'fan_out'}, optional
        ``'fan_in'`` (default) keeps the variance of the activations in the
        forward pass, ``'fan_out'`` that of the gradients in the backward.
    nonlinearity : str, optional
        The function after this layer, as :func:`calculate_gain` names it
        (default ``'leaky_relu'``).
    generator : np.random.Generator, optional
        Where the samples come from (default: ``rg.core.get_rng()``).

    Returns
    -------
    Tensor
        ``tensor`` itself (unchanged, with a warning, when it has no elements).

    Raises
    ------
    ValueError
        If ``tensor`` has fewer than 2 dims, or for an unknown ``mode`` or
        ``nonlinearity``.

    Examples
    --------
    >>> import retrograd as rg
    >>> w = rg.nn.init.kaiming_uniform_(rg.empty(8, 16), mode="fan_in", nonlinearity="relu")
    >>> bool((w.abs() <= (6 / 16) ** 0.5).numpy().all())
    True
    """
    std = _kaiming_std(tensor, a, mode, nonlinearity, "kaiming_uniform_")
    if std is None:
        return tensor
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: _FanMode = "fan_in",
                    nonlinearity: _Nonlinearity = "leaky_relu",
                    generator: np.random.Generator | None = None) -> Tensor:
    r"""Fill ``tensor`` with Kaiming (He) normal samples.

    The values come from N(0, std**2) with ``std = gain / sqrt(fan)``, where
    ``gain`` is ``calculate_gain(nonlinearity, a)`` and ``fan`` is fan_in or
    fan_out.

    Parameters
    ----------
    tensor : Tensor
        A floating-point tensor of at least 2 dims, filled in place.
    a : float, optional
        The negative slope of the leaky ReLU after this layer (default 0).
    mode : {'fan_in', 'fan_out'}, optional
        Which fan scales the standard deviation (default ``'fan_in'``).
    nonlinearity : str, optional
        The function after this layer (default ``'leaky_relu'``).
    generator : np.random.Generator, optional
        Where the samples come from (default: ``rg.core.get_rng()``).

    Returns
    -------
    Tensor
        ``tensor`` itself (unchanged, with a warning, when it has no elements).

    Raises
    ------
    ValueError
        If ``tensor`` has fewer than 2 dims, or for an unknown ``mode`` or
        ``nonlinearity``.

    Examples
    --------
    >>> import retrograd as rg
    >>> _ = rg.manual_seed(0)
    >>> w = rg.nn.init.kaiming_normal_(rg.empty(500, 200), mode="fan_out", nonlinearity="relu")
    >>> round(float(w.std()), 3)        # sqrt(2 / 500)
    0.063
    """
    std = _kaiming_std(tensor, a, mode, nonlinearity, "kaiming_normal_")
    if std is None:
        return tensor
    return normal_(tensor, 0.0, std, generator)


def orthogonal_(tensor: Tensor, gain: float = 1, generator: np.random.Generator | None = None) -> Tensor:
    """Fill ``tensor`` with a (semi-)orthogonal matrix, times ``gain``.

    The tensor is seen as a matrix of shape ``(rows, numel // rows)``; it
    becomes the Q factor of the QR decomposition of a standard normal matrix
    of that shape (of its transpose when it is wide), with each column's
    sign fixed by R's diagonal so that Q is uniformly distributed over the
    orthogonal matrices (Saxe et al., 2013; Mezzadri, 2007). Its rows (wide)
    or columns (tall) are then orthonormal.

    Parameters
    ----------
    tensor : Tensor
        A floating-point tensor of at least 2 dims, filled in place.
    gain : float, optional
        A scale factor (default 1).
    generator : np.random.Generator, optional
        Where the samples come from (default: ``rg.core.get_rng()``).

    Returns
    -------
    Tensor
        ``tensor`` itself (unchanged when it has no elements).

    Raises
    ------
    ValueError
        If ``tensor`` has fewer than 2 dims.

    Examples
    --------
    >>> import retrograd as rg
    >>> import numpy as np
    >>> w = rg.nn.init.orthogonal_(rg.empty(3, 5))
    >>> np.allclose(w.numpy() @ w.numpy().T, np.eye(3), atol=1e-6)      # orthonormal rows
    True
    """
    _check_tensor(tensor, "orthogonal_")
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    _check_floating(tensor, "orthogonal_")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = _rng(generator).standard_normal((rows, cols))
    wide = rows < cols
    if wide:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    # a sign per column from R's diagonal: without it, Q is not uniform
    q = q * np.sign(np.diag(r))
    if wide:
        q = q.T
    return _fill(tensor, q * gain)


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fill a 3-, 4- or 5-D convolution weight with the Dirac delta: the
    convolution then passes its input channels through unchanged (as many of
    them as it has output channels; with ``groups``, in each group).

    Output channel ``d`` of each group gets a 1 at input channel ``d`` and the
    kernel's centre; everything else is 0.

    Parameters
    ----------
    tensor : Tensor
        Of shape ``(out_channels, in_channels / groups, *kernel)``, filled in place.
    groups : int, optional
        The convolution's groups (default 1); must divide dim 0.

    Returns
    -------
    Tensor
        ``tensor`` itself.

    Raises
    ------
    ValueError
        For a tensor of another rank, or a dim 0 not divisible by ``groups``.

    Examples
    --------
    >>> import retrograd as rg
    >>> w = rg.nn.init.dirac_(rg.empty(2, 2, 3))
    >>> w
    tensor([[[0., 1., 0.],
             [0., 0., 0.]],
    <BLANKLINE>
            [[0., 0., 0.],
             [0., 1., 0.]]])
    >>> x = rg.randn(1, 2, 5)
    >>> bool((rg.nn.functional.conv1d(x, w, padding=1) == x).all())
    True
    """
    _check_tensor(tensor, "dirac_")
    dims = tensor.ndim
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tuple(tensor.shape)
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = sizes[0] // groups
    values = np.zeros(sizes)
    centre = tuple(n // 2 for n in sizes[2:])
    for g in range(groups):
        for d in range(min(out_per_group, sizes[1])):
            values[(g * out_per_group + d, d) + centre] = 1
    return _fill(tensor, values)


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator: np.random.Generator | None = None) -> Tensor:
    """Fill a 2-D ``tensor`` as a sparse matrix: samples of N(0, std**2), with
    ``ceil(sparsity * rows)`` entries of each column set to zero (Martens, 2010).

    Parameters
    ----------
    tensor : Tensor
        A 2-D floating-point tensor, filled in place.
    sparsity : float
        The fraction of each column's entries that are zero.
    std : float, optional
        The standard deviation of the other entries (default 0.01).
    generator : np.random.Generator, optional
        Where the samples and the zeros' positions come from (default:
        ``rg.core.get_rng()``; torch draws the positions from its global
        generator whatever ``generator`` is).

    Returns
    -------
    Tensor
        ``tensor`` itself.

    Raises
    ------
    ValueError
        If ``tensor`` is not 2-D.

    Examples
    --------
    >>> import retrograd as rg
    >>> w = rg.nn.init.sparse_(rg.empty(10, 4), sparsity=0.3)
    >>> (w == 0).sum(0)
    tensor([3, 3, 3, 3])
    """
    _check_tensor(tensor, "sparse_")
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    _check_floating(tensor, "sparse_")
    rows, cols = tensor.shape
    num_zeros = math.ceil(sparsity * rows)
    rng = _rng(generator)
    values = rng.normal(0.0, std, (rows, cols))
    for col in range(cols):
        values[rng.permutation(rows)[:num_zeros], col] = 0
    return _fill(tensor, values)


# --- torch's deprecated names, without the trailing underscore ---------------------------

_DEPRECATED_DOC = """Deprecated: :func:`{new}` (with a FutureWarning, as torch's ``nn.init.{old}``).

    Parameters
    ----------
    *args, **kwargs
        Passed to :func:`{new}`.

    Returns
    -------
    Tensor
        The tensor, filled in place.

    Warns
    -----
    FutureWarning
        Always: use :func:`{new}`.

    Examples
    --------
    >>> import retrograd as rg
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     w = rg.nn.init.{old}({example})
    >>> caught[0].category.__name__, str(caught[0].message)
    ('FutureWarning', '`nn.init.{old}` is now deprecated in favor of `nn.init.{new}`.')
    """


def _make_deprecate(meth: Callable[..., Tensor], example: str) -> Callable[..., Tensor]:
    new_name = meth.__name__
    old_name = new_name[:-1]

    def deprecated_init(*args: Any, **kwargs: Any) -> Tensor:
        warnings.warn(f"`nn.init.{old_name}` is now deprecated in favor of `nn.init.{new_name}`.", FutureWarning,
                      stacklevel=2)
        return meth(*args, **kwargs)
    deprecated_init.__name__ = deprecated_init.__qualname__ = old_name
    deprecated_init.__doc__ = _DEPRECATED_DOC.format(old=old_name, new=new_name, example=example)
    return deprecated_init


uniform = _make_deprecate(uniform_, "rg.empty(2)")
normal = _make_deprecate(normal_, "rg.empty(2)")
constant = _make_deprecate(constant_, "rg.empty(2), 0.5")
eye = _make_deprecate(eye_, "rg.empty(2, 2)")
dirac = _make_deprecate(dirac_, "rg.empty(2, 2, 3)")
xavier_uniform = _make_deprecate(xavier_uniform_, "rg.empty(2, 3)")
xavier_normal = _make_deprecate(xavier_normal_, "rg.empty(2, 3)")
kaiming_uniform = _make_deprecate(kaiming_uniform_, "rg.empty(2, 3)")
kaiming_normal = _make_deprecate(kaiming_normal_, "rg.empty(2, 3)")
orthogonal = _make_deprecate(orthogonal_, "rg.empty(2, 3)")
sparse = _make_deprecate(sparse_, "rg.empty(4, 3), 0.5")
