"""parameters_to_vector and vector_to_parameters (``torch.nn.utils``)."""
from __future__ import annotations

from collections.abc import Iterable

from retrograd.core import Tensor, cat

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _check_same_device(param: Tensor, device: object) -> object:
    # the one device all parameters must be on (a flat vector lives on one)
    if device is not None and param.device != device:
        raise TypeError("Found two parameters on different devices, this is currently not supported.")
    return param.device


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """Flatten the parameters into one vector (a copy, in the parameters' order).

    The result is differentiable: it records the graph from the parameters.

    Parameters
    ----------
    parameters : iterable of Tensor
        The parameters (``model.parameters()``).

    Returns
    -------
    Tensor
        A 1-d tensor with ``sum(p.numel())`` elements.

    Raises
    ------
    TypeError
        If the parameters are on different devices.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.nn.utils.parameters_to_vector([rg.tensor([[1.0, 2.0]]), rg.tensor([3.0])])
    tensor([1., 2., 3.])
    """
    device = None
    vec = []
    for param in parameters:
        device = _check_same_device(param, device)
        vec.append(param.reshape(-1))
    return cat(vec)


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Set the parameters' data from consecutive slices of one vector.

    The inverse of :func:`parameters_to_vector`: each parameter's ``.data``
    becomes the next ``p.numel()`` elements, in its shape (a view of
    ``vec``, no copy; the parameters stay the same objects).

    Parameters
    ----------
    vec : Tensor
        The 1-d vector.
    parameters : iterable of Tensor
        The parameters to set.

    Raises
    ------
    TypeError
        If ``vec`` is not a tensor, or the parameters are on different devices.

    Examples
    --------
    >>> import retrograd as rg
    >>> a, b = rg.zeros(1, 2), rg.zeros(1)
    >>> rg.nn.utils.vector_to_parameters(rg.tensor([1.0, 2.0, 3.0]), [a, b])
    >>> a, b
    (tensor([[1., 2.]]), tensor([3.]))
    """
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected rg.Tensor, but got: {type(vec).__name__}")
    device = None
    pointer = 0
    for param in parameters:
        device = _check_same_device(param, device)
        n = param.numel()
        param.data = vec[pointer:pointer + n].reshape(param.shape).data
        pointer += n
