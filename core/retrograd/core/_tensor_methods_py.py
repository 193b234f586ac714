"""Tensor methods written in Python, over the table's ops and core's
composites: put in Tensor's dict when retrograd.core is imported.

Note [Python-written Tensor methods]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Tensor is a compiled class (_tensor.pxi); its op methods are generated from
derivatives.yaml and its hand-written methods are in _tensor_methods.pxi.
Methods that only call a composite (a function of the _numpy_like*.py
modules, itself written over the ops) gain nothing from being compiled, and
each change to that file rebuilds the largest extension. They live here
instead: ``METHODS`` maps a name to a plain function, and core's __init__
hands it to ``abi._install_tensor_methods``, which adds them to Tensor's dict
(refusing a name Tensor has already, so nothing compiled is ever shadowed).
Their stubs are in abi.pyi.in, like the hand-written methods';
tests/install/test_stubs.py checks them against the runtime.

A method here costs one Python call more than a compiled one; none of them is
on a hot path (a training step's ops are all generated methods).
"""
from __future__ import annotations

from typing import Callable, Dict

from retrograd.core import abi as _abi
from retrograd.core import extending as _ext
from retrograd.core.abi import Tensor


def _check_self(self, name: str) -> Tensor:
    if not isinstance(self, Tensor):
        raise TypeError(f"descriptor '{name}' requires a 'Tensor' object but received a "
                        f"'{type(self).__name__}'")
    return self


def where(self, condition, other) -> Tensor:
    """``self`` where ``condition`` holds, else ``other``: :func:`retrograd.where` with ``self`` second.

    Parameters
    ----------
    condition : Tensor
        A boolean mask, broadcast against ``self`` and ``other``.
    other : Tensor or scalar
        The values where ``condition`` is False.

    Returns
    -------
    Tensor
        ``rg.where(condition, self, other)``.

    Examples
    --------
    >>> import retrograd as rg
    >>> x = rg.tensor([1.0, -2.0, 3.0])
    >>> x.where(x > 0, 0.0)
    tensor([1., 0., 3.])
    """
    return _abi.where(condition, _check_self(self, "where"), other)


def float_power_(self, exponent) -> Tensor:
    """:func:`retrograd.float_power` in place: ``self`` must be float64 (or complex128), as the result is.

    Parameters
    ----------
    exponent : Tensor or scalar
        The exponent.

    Returns
    -------
    Tensor
        ``self``, holding ``self ** exponent`` computed in double precision.

    Raises
    ------
    RuntimeError
        If ``self`` is not float64 or complex128: the result could not be stored in it.

    Examples
    --------
    >>> import retrograd as rg
    >>> x = rg.tensor([2.0, 3.0], dtype=rg.float64)
    >>> x.float_power_(2)
    tensor([4., 9.], dtype=float64)
    """
    from retrograd.core._numpy_like import float_power
    self = _check_self(self, "float_power_")
    want = "complex128" if (self.is_complex() or (isinstance(exponent, Tensor) and exponent.is_complex())
                            or isinstance(exponent, complex)) else "float64"
    if str(self.dtype).replace("torch.", "") != want:
        raise RuntimeError(f"the base given to float_power_ has dtype {str(self.dtype).replace('torch.', '')} "
                           f"but the operation's result requires dtype {want}: convert it first "
                           f"(x = x.double()) or use the out-of-place float_power")
    # from a copy: the power's node saves its base, which the write would change
    return self.copy_(float_power(self.clone(), exponent))


def _doc(summary: str, params: str, returns: str, example: str) -> str:
    params = f"\n\n    Parameters\n    ----------\n{params}" if params else ""
    return (f"{summary}{params}\n\n    Returns\n    -------\n    {returns}\n\n    Examples\n    --------\n"
            f"    >>> import retrograd as rg\n    {example}\n    ")


def _delegate(name: str, module: str, summary: str, params: str, returns: str, example: str) -> Callable:
    # a method that is the top-level composite of `module` with self first (the _numpy_like modules are
    # imported before this one); its signature is the function's, ``self`` first and without ``out``
    import importlib
    import inspect
    fn = getattr(importlib.import_module(f"retrograd.core.{module}"), name)

    def method(self, *args, **kwargs):
        return fn(_check_self(self, name), *args, **kwargs)
    sig = inspect.signature(getattr(fn, "fn", fn))
    sig_params = [p for p in sig.parameters.values() if p.name != "out"]
    sig_params[0] = sig_params[0].replace(name="self")
    method.__signature__ = sig.replace(parameters=sig_params)  # type: ignore[attr-defined]
    method.__name__ = method.__qualname__ = name
    method.__doc__ = _doc(summary, params, returns, example)
    return method


_SQ = 'rg.tensor([[1.0, 2.0], [3.0, 4.0]])'
lu = _delegate("lu", "_numpy_like_linalg", "The packed LU factorization of ``self`` (:func:`retrograd.lu`).",
               "    pivot : bool, optional\n        Must be True.\n    get_infos : bool, optional\n"
               "        Also return the ``info`` tensor.", "(LU, pivots) or (LU, pivots, info)",
               f">>> {_SQ}.lu()[1]\n    tensor([2, 2], dtype=int32)")
lu_solve = _delegate("lu_solve", "_numpy_like_linalg", "Solve ``A X = self`` from ``A``'s LU factors "
                     "(:func:`retrograd.lu_solve`).", "    LU_data : Tensor\n        The packed factors.\n"
                     "    LU_pivots : Tensor\n        The int32 pivots.", "Tensor",
                     f">>> LU, piv = rg.linalg.lu_factor({_SQ})\n"
                     "    >>> rg.tensor([[5.0], [11.0]]).lu_solve(LU, piv).round(decimals=5)\n"
                     "    tensor([[1.],\n            [2.]])")
triangular_solve = _delegate(
    "triangular_solve", "_numpy_like_linalg", "Solve ``A X = self`` for triangular ``A`` "
    "(:func:`retrograd.triangular_solve`).", "    A : Tensor\n        Triangular matrices.\n"
    "    upper, transpose, unitriangular : bool, optional\n        As :func:`retrograd.triangular_solve`.",
    "(solution, cloned_coefficient)",
    ">>> rg.tensor([[3.0], [4.0]]).triangular_solve(rg.tensor([[2.0, 1.0], [0.0, 4.0]])).solution\n"
    "    tensor([[1.],\n            [1.]])")
matrix_exp = _delegate("matrix_exp", "_numpy_like_linalg", "The matrix exponential of ``self`` "
                       "(:func:`retrograd.linalg.matrix_exp`).", "", "Tensor",
                       ">>> rg.zeros(2, 2).matrix_exp()\n    tensor([[1., 0.],\n            [0., 1.]])")
pinverse = _delegate("pinverse", "_numpy_like_linalg", "The pseudo-inverse of ``self`` (:func:`retrograd.pinverse`).",
                     "    rcond : float, optional\n        The relative tolerance (default 1e-15).", "Tensor",
                     ">>> rg.tensor([[2.0, 0.0], [0.0, 0.0]]).pinverse()\n"
                     "    tensor([[0.5, 0. ],\n            [0. , 0. ]])")
_SR = ("    dim : int\n        The dimension.\n    index : Tensor\n        The int64 indices.\n    src : Tensor\n"
       "        The values.\n    reduce : str\n        'sum', 'prod', 'mean', 'amax' or 'amin'.\n"
       "    include_self : bool, optional\n        Whether ``self``'s values take part (default True).")
scatter_reduce = _delegate("scatter_reduce", "_numpy_like_index", ":func:`retrograd.scatter_reduce` of ``self``.",
                           _SR, "Tensor", ">>> rg.zeros(2).scatter_reduce(0, rg.tensor([1, 1]), rg.tensor([2.0, 3.0]), "
                           "'sum')\n    tensor([0., 5.])")
index_reduce = _delegate("index_reduce", "_numpy_like_index", ":func:`retrograd.index_reduce` of ``self``.",
                         _SR.replace("src :", "source :").replace("'sum', ", ""), "Tensor",
                         ">>> rg.ones(2).index_reduce(0, rg.tensor([1, 1]), rg.tensor([2.0, 3.0]), 'prod')\n"
                         "    tensor([1., 6.])")
mode = _delegate("mode", "_numpy_like_misc", "The most frequent value along ``dim`` and its index "
                 "(:func:`retrograd.mode`).", "    dim : int, optional\n        The dimension (default -1).\n"
                 "    keepdim : bool, optional\n        Keep it with size 1.", "(values, indices)",
                 ">>> rg.tensor([2, 2, 1]).mode().values\n    tensor(2)")
hash_tensor = _delegate("hash_tensor", "_numpy_like_misc", "The xor of ``self``'s 64-bit element patterns "
                        "(:func:`retrograd.hash_tensor`).", "    dim : int or tuple of int, optional\n"
                        "        The dimension(s) to reduce.\n    keepdim : bool, optional\n        Keep them.\n"
                        "    mode : int, optional\n        Only 0.", "Tensor",
                        ">>> rg.tensor([1, 2, 3]).hash_tensor()\n    tensor(0, dtype=uint64)")
hardshrink = _delegate("hardshrink", "_numpy_like_misc", ":func:`retrograd.hardshrink` of ``self``.",
                       "    lambd : float, optional\n        The threshold (default 0.5).", "Tensor",
                       ">>> rg.tensor([-2.0, 0.2]).hardshrink()\n    tensor([-2.,  0.])")
prelu = _delegate("prelu", "_numpy_like_misc", ":func:`retrograd.prelu` of ``self``.",
                  "    weight : Tensor\n        The slope(s) of the negative part.", "Tensor",
                  ">>> rg.tensor([-2.0, 1.0]).prelu(rg.tensor([0.5]))\n    tensor([-1.,  1.])")
nonzero_static = _delegate("nonzero_static", "_numpy_like_index", "The indices of the non-zero elements of "
                           "``self``, padded or cut to ``size`` rows.", "    size : int\n        The number of rows.\n"
                           "    fill_value : int, optional\n        The padding value (default -1).", "Tensor",
                           ">>> rg.tensor([0, 3]).nonzero_static(size=2)\n    tensor([[ 1],\n            [-1]])")


# in place: computed from a copy of self, so that the graph saves nothing that the write then changes
def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True) -> Tensor:
    from retrograd.core._numpy_like_index import scatter_reduce as fn
    self = _check_self(self, "scatter_reduce_")
    return self.copy_(fn(self.clone(), dim, index, src, reduce, include_self=include_self))


def index_reduce_(self, dim, index, source, reduce, *, include_self=True) -> Tensor:
    from retrograd.core._numpy_like_index import index_reduce as fn
    self = _check_self(self, "index_reduce_")
    return self.copy_(fn(self.clone(), dim, index, source, reduce, include_self=include_self))


for _name, _m in (("scatter_reduce", scatter_reduce_), ("index_reduce", index_reduce_)):
    _m.__doc__ = _doc(f":meth:`{_name}` in place: ``self`` is overwritten with the result.",
                      _SR if _name == "scatter_reduce" else _SR.replace("src :", "source :"), "Tensor ``self``",
                      f">>> x = rg.zeros(2)\n    >>> x.{_name}_(0, rg.tensor([1, 1]), rg.tensor([2.0, 3.0]), "
                      "'amax')\n    tensor([0., 3.])")
del _name, _m


def unfold(self, dimension, size, step) -> Tensor:
    """The windows of ``size`` elements, ``step`` apart, along ``dimension``, in a new last dimension.

    The result has ``(n - size) // step + 1`` in place of ``dimension``'s
    ``n`` and a last dimension of ``size``. Overlapping windows add their
    gradients. Unlike torch's, the result is a copy, not a view: writes to
    it do not reach ``self``.

    Parameters
    ----------
    dimension : int
        The dimension to slide along.
    size : int
        The window length.
    step : int
        The distance between window starts (> 0).

    Returns
    -------
    Tensor

    Raises
    ------
    RuntimeError
        For a window longer than the dimension or a step that is not positive.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.arange(5.0).unfold(0, 2, 2)
    tensor([[0., 1.],
            [2., 3.]])
    """
    import numpy as np
    from retrograd.core import _creation
    x = _check_self(self, "unfold")
    xx = x if x.ndim else _abi.reshape(x, (1,))
    d = _abi._wrap_dim_py(dimension, xx.ndim)
    n = xx.shape[d]
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    count = (n - size) // step + 1
    idx = (np.arange(count)[:, None] * step + np.arange(size)[None, :]).reshape(-1).astype(np.int64)
    picked = _abi.index_select(xx, d, _creation._make(idx, x.device, False))
    shape = tuple(xx.shape[:d]) + (count, size) + tuple(xx.shape[d + 1:])
    out = _abi.movedim(_abi.reshape(picked, shape), d + 1, -1)
    return out if x.ndim else _abi.reshape(out, (count, size))


def fill_diagonal_(self, fill_value, wrap=False) -> Tensor:
    """Fill the main diagonal of ``self`` with ``fill_value``, in place.

    For more than 2 dimensions all must have the same length. For a tall
    matrix, ``wrap=True`` starts the diagonal again after each ``N + 1`` rows
    (NumPy's ``fill_diagonal``). The gradient is zero at the filled places.

    Parameters
    ----------
    fill_value : number
        The value.
    wrap : bool, optional
        Restart the diagonal below a tall matrix's first square (default False).

    Returns
    -------
    Tensor
        ``self``.

    Raises
    ------
    RuntimeError
        For fewer than 2 dimensions, or unequal ones beyond 2.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.zeros(2, 3).fill_diagonal_(5)
    tensor([[5., 0., 0.],
            [0., 5., 0.]])
    """
    import numpy as np
    from retrograd.core import _creation
    x = _check_self(self, "fill_diagonal_")
    if x.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    shape = tuple(x.shape)
    if x.ndim > 2 and len(set(shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    mask = np.zeros(shape, dtype=bool)
    np.fill_diagonal(mask, True, wrap=bool(wrap))
    return x.masked_fill_(_creation._make(mask, x.device, False), fill_value)


class AliasBackward0(_ext.FunctionBase):
    # the node of as_subclass: the gradient passes through unchanged
    _forward_cls = None

    def _get_user_fn(self):
        return lambda ctx, grad, *rest: (grad, None)


class _Alias:
    # the minimal custom Function that as_subclass records (see _function.pxi's _function_apply)
    _backward_cls = AliasBackward0

    @staticmethod
    def forward(x, cls):
        return Tensor._make_subclass(cls, x, False)  # type: ignore[attr-defined]

    @staticmethod
    def setup_context(ctx, inputs, output):
        return None


def as_subclass(self, cls) -> Tensor:
    """``self`` as an instance of the Tensor subclass ``cls``, sharing its data and its place in the graph.

    Parameters
    ----------
    cls : type
        A subclass of :class:`retrograd.Tensor`.

    Returns
    -------
    Tensor
        A ``cls`` instance: changes to it show in ``self`` and the reverse;
        gradients flow through it to ``self``.

    Raises
    ------
    TypeError
        If ``cls`` does not inherit from Tensor.

    Examples
    --------
    >>> import retrograd as rg
    >>> class Tagged(rg.Tensor):
    ...     pass
    >>> t = rg.ones(2, requires_grad=True) * 2
    >>> u = t.as_subclass(Tagged)
    >>> type(u).__name__, u.grad_fn.name()
    ('Tagged', 'AliasBackward0')
    """
    x = _check_self(self, "as_subclass")
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError("Creating a Tensor subclass from a class that does not inherit from Tensor is not "
                        "possible. Make sure your class inherits from Tensor.")
    return _ext.function_apply(_Alias, (x, cls), {})


#: name -> function, installed in Tensor's dict by core's __init__ in Tensor's dict by core's __init__
METHODS: Dict[str, Callable] = {
    "where": where,
    "float_power_": float_power_,
    "lu": lu, "lu_solve": lu_solve, "triangular_solve": triangular_solve, "matrix_exp": matrix_exp,
    "pinverse": pinverse, "scatter_reduce": scatter_reduce, "scatter_reduce_": scatter_reduce_,
    "index_reduce": index_reduce, "index_reduce_": index_reduce_, "mode": mode, "hash_tensor": hash_tensor,
    "hardshrink": hardshrink, "prelu": prelu, "nonzero_static": nonzero_static, "unfold": unfold,
    "fill_diagonal_": fill_diagonal_, "as_subclass": as_subclass,
}
