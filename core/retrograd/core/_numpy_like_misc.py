"""More of torch's functions over NumPy (issue 41): ldexp and frexp, the
histograms (histc, histogram), isin, the bit shifts, the spectral windows
(hann, hamming, blackman, bartlett, kaiser), unravel_index, rsub, and the
in-place functions of _numpy_like's composites (torch.deg2rad_, ...).
Those without a gradient compute on the arrays and return tensors that never
require grad, as torch's."""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from retrograd.core import abi as _abi
from retrograd.core import _creation
from retrograd.core._dtype_rules import get_default_dtype
from retrograd.core._dtypes import _is_inexact_dtype, is_floating_dtype as _is_floating_dtype
from retrograd.core._numpy_like import _TWO_ARGS, _doc, _floating, _mask, _operand, _t
from retrograd.core.abi import Tensor, composite_op

__all__: list = []


@composite_op("ldexp")
def ldexp(input, other) -> Tensor:
    x = _floating(_t(input, "ldexp"))
    e = _operand(other, x)
    return x * _abi.pow(2.0, e.to(x._array.dtype))


ldexp.__doc__ = _doc("``input * 2**other``.", "The gradient for ``input`` is ``2**other``.", _TWO_ARGS,
                     "The broadcast result.", ">>> rg.ldexp(rg.tensor([1.0, 3.0]), rg.tensor([2, -1]))\n"
                     "    tensor([4. , 1.5])")

frexp_result = namedtuple("frexp", ["mantissa", "exponent"])


def frexp(input):
    """The mantissa (in ``[0.5, 1)`` in magnitude) and the integer exponent of each element.

    ``input == mantissa * 2**exponent``; the results never require grad.

    Parameters
    ----------
    input : Tensor
        A floating-point tensor.

    Returns
    -------
    (mantissa, exponent)
        The mantissa in ``input``'s dtype, the exponent in int32.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.frexp(rg.tensor([8.0, 0.75]))
    frexp(mantissa=tensor([0.5 , 0.75]), exponent=tensor([4, 0], dtype=int32))
    """
    x = _t(input, "frexp")
    if not _is_floating_dtype(x._array.dtype):
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    m, e = np.frexp(x._array)
    return frexp_result(_mask(x, m), _mask(x, e.astype(np.int32)))


def histc(input, bins=100, min=0, max=0) -> Tensor:  # noqa: A002 (torch's parameter names)
    """A histogram of ``bins`` equal-width bins over ``[min, max]`` (the data's range when both are 0).

    Elements outside the range are ignored. The result never requires grad.

    Parameters
    ----------
    input : Tensor
        The data.
    bins : int, optional
        The number of bins (default 100).
    min, max : float, optional
        The range (default: the data's smallest and largest values).

    Returns
    -------
    Tensor
        The counts, in ``input``'s dtype.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.histc(rg.tensor([1.0, 2.0, 1.0]), bins=4, min=0, max=3)
    tensor([0., 2., 1., 0.])
    """
    x = _t(input, "histc")
    if not _is_floating_dtype(x._array.dtype):
        raise RuntimeError(f"\"histogram_cpu\" not implemented for '{x._array.dtype}'")
    lo, hi = float(min), float(max)
    if lo == hi and x._array.size:
        lo, hi = float(x._array.min()), float(x._array.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    counts, _ = np.histogram(x._array, bins=bins, range=(lo, hi))
    return _mask(x, counts.astype(x._array.dtype))


histogram_result = namedtuple("histogram", ["hist", "bin_edges"])


def histogram(input, bins=100, *, range=None, weight=None, density=False):  # noqa: A002
    """A histogram of the data and its bin edges (NumPy's ``histogram``).

    Parameters
    ----------
    input : Tensor
        The data.
    bins : int or Tensor, optional
        The number of equal bins, or the edges.
    range : (float, float), optional
        The range of the equal bins (default: the data's).
    weight : Tensor, optional
        A weight per element.
    density : bool, optional
        Normalize to a probability density.

    Returns
    -------
    (hist, bin_edges)

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.histogram(rg.tensor([1.0, 2.0, 1.0]), bins=2)
    histogram(hist=tensor([2., 1.]), bin_edges=tensor([1. , 1.5, 2. ]))
    """
    x = _t(input, "histogram")
    b = bins._array if isinstance(bins, Tensor) else bins
    w = None if weight is None else weight._array
    hist, edges = np.histogram(x._array, bins=b, range=range, weights=w, density=density)
    return histogram_result(_mask(x, hist.astype(x._array.dtype)), _mask(x, edges.astype(x._array.dtype)))


def isin(elements, test_elements, *, assume_unique=False, invert=False) -> Tensor:
    """Whether each element of ``elements`` is in ``test_elements``.

    Parameters
    ----------
    elements : Tensor or number
        The values to test.
    test_elements : Tensor or number
        The values to look for.
    assume_unique : bool, optional
        Both are known to hold distinct values (faster).
    invert : bool, optional
        Return ``not in`` instead.

    Returns
    -------
    Tensor
        A bool tensor of ``elements``' shape.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.isin(rg.tensor([1, 2, 3]), rg.tensor([2, 5]))
    tensor([False,  True, False])
    """
    like = elements if isinstance(elements, Tensor) else test_elements
    if not isinstance(like, Tensor):
        raise TypeError("isin(): one of 'elements' and 'test_elements' must be a Tensor")
    e = elements._array if isinstance(elements, Tensor) else np.asarray(elements)
    t = test_elements._array if isinstance(test_elements, Tensor) else np.asarray(test_elements)
    return _mask(like, np.isin(e, t, assume_unique=assume_unique, invert=invert))


def _shift(name: str, fn, sym: str):
    def shift(input, other) -> Tensor:
        x = _t(input, name)
        o = other._array if isinstance(other, Tensor) else other
        if x._array.dtype.kind not in "iub":
            raise RuntimeError(f"\"{name}_cpu\" not implemented for '{x._array.dtype}'")
        return _mask(x, fn(x._array, o).astype(np.result_type(x._array, o), copy=False))
    shift.__name__ = shift.__qualname__ = name
    shift.__doc__ = _doc(f"Shift the bits of each integer {sym} by ``other`` (``input {sym} other``).",
                         "Integer tensors only; the result never requires grad.", _TWO_ARGS, "The shifted integers.",
                         f">>> rg.{name}(rg.tensor([1, 8]), 2)\n    "
                         f"{'tensor([ 4, 32])' if 'left' in name else 'tensor([0, 2])'}")
    return shift


bitwise_left_shift = _shift("bitwise_left_shift", np.left_shift, "<<")
bitwise_right_shift = _shift("bitwise_right_shift", np.right_shift, ">>")


def _window(name: str, fn, example: str):
    def window(window_length, periodic=True, *args, dtype=None, layout=None, device=None, requires_grad=False,
               **kwargs):
        n = int(window_length)
        if n < 0:
            raise RuntimeError(f"{name} requires non-negative window_length, got window_length={n}")
        if n <= 1:
            arr = np.ones(n)
        else:
            arr = fn(n + 1, *args, **kwargs)[:-1] if periodic else fn(n, *args, **kwargs)
        return _creation.tensor(arr, dtype=get_default_dtype() if dtype is None else dtype, device=device,
                                requires_grad=requires_grad)
    window.__name__ = window.__qualname__ = name
    window.__doc__ = _doc(f"The {name.split('_')[0].capitalize()} window of ``window_length`` points.",
                          "``periodic=True`` (default) gives the window for spectral analysis (one point of a\n"
                          "    window one longer dropped), False the symmetric one for filter design.",
                          "\n    Parameters\n    ----------\n    window_length : int\n        The number of points.\n"
                          "    periodic : bool, optional\n        Periodic (True) or symmetric window.",
                          "A 1-d tensor of the default float dtype.", example)
    return window


hann_window = _window("hann_window", np.hanning, ">>> rg.hann_window(4)\n    tensor([0. , 0.5, 1. , 0.5])")
hamming_window = _window("hamming_window", np.hamming,
                         ">>> rg.hamming_window(4)\n    tensor([0.08, 0.54, 1.  , 0.54])")
blackman_window = _window("blackman_window", np.blackman,
                          ">>> rg.blackman_window(3, periodic=False)\n    tensor([-1.3877788e-17,  1.0000000e+00, "
                          "-1.3877788e-17])")
bartlett_window = _window("bartlett_window", np.bartlett,
                          ">>> rg.bartlett_window(4)\n    tensor([0. , 0.5, 1. , 0.5])")


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None, device=None,
                  requires_grad=False) -> Tensor:
    """The Kaiser window of ``window_length`` points with shape parameter ``beta``.

    Parameters
    ----------
    window_length : int
        The number of points.
    periodic : bool, optional
        Periodic (True, default) or symmetric window.
    beta : float, optional
        The shape parameter (default 12).

    Returns
    -------
    Tensor
        A 1-d tensor of the default float dtype.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.kaiser_window(3, periodic=False, beta=0.0)
    tensor([1., 1., 1.])
    """
    n = int(window_length)
    arr = np.ones(n) if n <= 1 else (np.kaiser(n + 1, beta)[:-1] if periodic else np.kaiser(n, beta))
    return _creation.tensor(arr, dtype=get_default_dtype() if dtype is None else dtype, device=device,
                            requires_grad=requires_grad)


def unravel_index(indices, shape) -> tuple:
    """The coordinates in ``shape`` of flat indices (NumPy's ``unravel_index``).

    Parameters
    ----------
    indices : Tensor or int
        Flat indices.
    shape : int or sequence of int
        The shape.

    Returns
    -------
    tuple of Tensor
        One int64 tensor of coordinates per dimension.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.unravel_index(rg.tensor([5, 1]), (2, 3))
    (tensor([1, 0]), tensor([2, 1]))
    """
    i = indices if isinstance(indices, Tensor) else _creation.tensor(indices)
    if i._array.dtype.kind not in "iu":
        raise TypeError("expected 'indices' to be integer dtype, but got " + str(i._array.dtype))
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    size = int(np.prod(shape))
    if i._array.size and (int(i._array.min()) < -size or int(i._array.max()) >= size):
        raise RuntimeError("'indices' must be in range [-prod(shape), prod(shape) - 1]")
    return tuple(_mask(i, c.astype(np.int64)) for c in np.unravel_index(np.asarray(i._array) % size, shape))


@composite_op("rsub")
def rsub(input, other, *, alpha=1) -> Tensor:
    x = _t(input, "rsub")
    return _abi.sub(other, x, alpha=alpha) if isinstance(other, Tensor) else other - x * alpha


rsub.__doc__ = _doc("``other - alpha * input`` (subtraction with the operands reversed).",
                    "torch's reflected subtraction.", _TWO_ARGS + "\n    alpha : number, optional\n"
                    "        The multiplier of ``input``.", "The broadcast result.",
                    ">>> rg.rsub(rg.tensor([1.0, 2.0]), 10)\n    tensor([9., 8.])")

__all__ += ["ldexp", "frexp", "histc", "histogram", "isin", "bitwise_left_shift", "bitwise_right_shift",
            "hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window",
            "unravel_index", "rsub"]


def _inplace_function(name: str):
    method = name + "_"

    def fn(input, *args, **kwargs):
        return getattr(_t(input, method), method)(*args, **kwargs)
    fn.__name__ = fn.__qualname__ = method
    fn.__doc__ = (f"In-place version of :func:`retrograd.{name}`, as a function: ``rg.{method}(x, ...)`` is\n"
                  f"    ``x.{method}(...)``.\n\n    Parameters\n    ----------\n    input : Tensor\n"
                  f"        The tensor to write the result into.\n    *args, **kwargs\n"
                  f"        The other arguments of :func:`retrograd.{name}`.\n\n    Returns\n    -------\n"
                  f"    Tensor\n        ``input``.\n\n    Examples\n    --------\n    >>> import retrograd as rg\n"
                  f"    >>> x = rg.tensor([0.5, 0.25])\n    >>> rg.{method}(x{', 2' if name in ('xlogy', 'ldexp') else ''}) is x\n"
                  f"    True\n    ")
    return fn


deg2rad_, rad2deg_, frac_, logit_, xlogy_, sinc_, nan_to_num_, ldexp_ = (
    _inplace_function(n) for n in ("deg2rad", "rad2deg", "frac", "logit", "xlogy", "sinc", "nan_to_num", "ldexp"))
__all__ += ["deg2rad_", "rad2deg_", "frac_", "logit_", "xlogy_", "sinc_", "nan_to_num_", "ldexp_"]


# --- mode, hash_tensor, and the activations torch also has at its top level ---
mode_result = namedtuple("mode", ["values", "indices"])
mode_result.__module__ = "retrograd.return_types"


@composite_op("mode")
def mode(input, dim=-1, keepdim=False):
    """The most frequent value along ``dim`` (the smallest of equally frequent ones) and an index of it.

    The index is that of the value's last occurrence, which is torch's
    choice on the CPU for up to 16 elements along ``dim``; beyond that
    torch's index among equal values depends on its sort and may differ.
    The gradient goes to the element at that index.

    Parameters
    ----------
    input : Tensor
        The input.
    dim : int, optional
        The dimension to reduce (default -1).
    keepdim : bool, optional
        Keep the reduced dimension with size 1.

    Returns
    -------
    retrograd.return_types.mode
        The named tuple ``(values, indices)`` (int64 indices).

    Raises
    ------
    IndexError
        If the reduced dimension is empty.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.mode(rg.tensor([1.0, 3.0, 3.0, 1.0, 2.0]))
    mode(values=tensor(1.), indices=tensor(3))
    """
    x = _t(input, "mode")
    xx = x if x.ndim else _abi.reshape(x, (1,))
    d = _abi._wrap_dim_py(dim, xx.ndim)
    if xx.shape[d] == 0:
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
    a = np.moveaxis(np.asarray(xx.detach().numpy(force=True)), d, -1)
    n = a.shape[-1]
    rows = a.reshape(-1, n)
    order = np.argsort(rows, axis=-1, kind="stable")
    s = np.take_along_axis(rows, order, -1)
    pos = np.arange(n)
    new_run = np.ones(s.shape, dtype=bool)
    new_run[:, 1:] = s[:, 1:] != s[:, :-1]
    start = np.maximum.accumulate(np.where(new_run, pos, 0), axis=-1)
    last = np.ones(s.shape, dtype=bool)
    last[:, :-1] = new_run[:, 1:]
    count = np.where(last, pos - start + 1, 0)
    best = np.argmax(count, axis=-1)            # the first (smallest) value of the largest count
    idx = order[np.arange(rows.shape[0]), best].reshape(a.shape[:-1])   # its last occurrence (stable sort)
    idx_t = _creation._make(np.expand_dims(idx, d).astype(np.int64), x.device, False)
    values = _abi.gather(xx, d, idx_t)
    if not keepdim or not x.ndim:
        values, idx_t = _abi.squeeze(values, d), _abi.squeeze(idx_t, d)
    return mode_result(values, idx_t)


def hash_tensor(input, dim=None, *, keepdim=False, mode=0) -> Tensor:  # noqa: A002 (torch's parameter name)
    """The xor of the elements' 64-bit patterns, over all of them or along ``dim`` (``torch.hash_tensor``).

    Each element is first widened to its 64-bit kind (float64, or int64 for
    integers and bools) and read as an unsigned 64-bit integer. The result
    never requires grad.

    Parameters
    ----------
    input : Tensor
        A real tensor.
    dim : int or tuple of int, optional
        The dimension(s) to reduce (default: all).
    keepdim : bool, optional
        Keep the reduced dimensions with size 1.
    mode : int, optional
        The hash: only 0 (the xor reduction).

    Returns
    -------
    Tensor
        uint64 hashes.

    Raises
    ------
    RuntimeError
        For another ``mode``, or an empty input without ``dim``.
    IndexError
        For an empty dimension to reduce.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.hash_tensor(rg.tensor([1, 2, 3]))
    tensor(0, dtype=uint64)
    >>> rg.hash_tensor(rg.tensor([[1, 2], [4, 4]]), 1)
    tensor([3, 0], dtype=uint64)
    """
    x = _t(input, "hash_tensor")
    if mode != 0:
        raise RuntimeError(f"Unknown hash_tensor mode: {mode}")
    a = np.asarray(x.detach().numpy(force=True))
    if a.dtype.kind == "c":
        kind = "ComplexDouble" if a.itemsize == 16 else "ComplexFloat"
        raise NotImplementedError(f"\"xor_sum_cpu\" not implemented for '{kind}'")
    bits = (a.astype(np.float64) if _is_floating_dtype(a.dtype) else a.astype(np.int64)).view(np.uint64)
    if dim is None:
        if a.size == 0:
            raise RuntimeError("hash_tensor: Expected reduction dim to be specified for input.numel() == 0. "
                               "Specify the reduction dim with the 'dim' argument.")
        axes = tuple(range(a.ndim))
    else:
        axes = tuple(_abi._wrap_dim_py(k, max(a.ndim, 1)) for k in ((dim,) if isinstance(dim, int) else dim))
        for k in axes:
            if a.ndim and a.shape[k] == 0:
                raise IndexError(f"hash_tensor: Expected reduction dim {k} to have non-zero size.")
    if a.ndim == 0:
        return _creation._make(bits.copy(), x.device, False)
    out = np.bitwise_xor.reduce(bits, axis=axes, keepdims=bool(keepdim))
    return _creation._make(np.asarray(out, dtype=np.uint64), x.device, False)


def _activation_input(input, name: str) -> Tensor:
    x = _t(input, name)
    if not _is_inexact_dtype(x._array.dtype):
        raise NotImplementedError(f'"{name}" not implemented for {x.dtype} input, as in torch; convert it first, '
                                  "e.g. input.float()")
    return x


@composite_op("hardshrink")
def hardshrink(input, lambd=0.5) -> Tensor:
    """``x`` where ``|x| > lambd``, else 0 (``torch.hardshrink``, ``F.hardshrink``).

    Parameters
    ----------
    input : Tensor
        A floating-point tensor.
    lambd : float, optional
        Default 0.5.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.hardshrink(rg.tensor([-2.0, 0.2, 1.0]))
    tensor([-2.,  0.,  1.])
    """
    x = _activation_input(input, "hardshrink")
    return _abi.where(_abi.gt(_abi.abs(x), lambd), x, 0.0)


@composite_op("prelu")
def prelu(input, weight) -> Tensor:
    """``x`` where ``x > 0``, else ``weight * x``, with a learned slope per channel (dim 1).

    ``torch.prelu`` and ``F.prelu``.

    Parameters
    ----------
    input : Tensor
        A floating-point tensor, channels in dim 1 (or a 1-d tensor).
    weight : Tensor
        One slope, or one per channel.

    Returns
    -------
    Tensor

    Raises
    ------
    RuntimeError
        If ``weight`` has neither 1 element nor one per channel.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.prelu(rg.tensor([[-1.0, 2.0]]), rg.tensor([0.25]))
    tensor([[-0.25,  2.  ]])
    """
    x = _activation_input(input, "prelu")
    w = _t(weight, "prelu", "weight")
    n = w.numel()
    channels = x.shape[1] if x.ndim >= 2 else 1
    if n != 1 and n != channels:
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = {n} "
                           f"and channel size = {channels}.")
    if n != 1 and x.ndim >= 2:
        w = _abi.reshape(w, (n,) + (1,) * (x.ndim - 2))
    elif n == 1:
        w = _abi.reshape(w, ())
    return _abi.where(_abi.gt(x, 0.0), x, _abi.mul(w, x))


__all__ += ["mode", "hash_tensor", "hardshrink", "prelu"]
