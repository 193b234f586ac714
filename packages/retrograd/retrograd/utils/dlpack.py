"""retrograd.utils.dlpack (``torch.utils.dlpack``): zero-copy exchange with other array libraries.

``from_dlpack`` is ``rg.from_dlpack``; ``to_dlpack`` makes the legacy
capsule that older consumers take (new ones take the tensor itself).
"""
from retrograd.core import Tensor, from_dlpack

__all__ = ["from_dlpack", "to_dlpack"]


def to_dlpack(tensor: Tensor):
    """A legacy DLPack capsule of ``tensor``'s memory (``torch.utils.dlpack.to_dlpack``).

    New code passes the tensor itself to the consumer's ``from_dlpack``;
    the capsule is for consumers that still take one. It can be imported
    once.

    Parameters
    ----------
    tensor : Tensor
        A tensor that does not require grad.

    Returns
    -------
    PyCapsule
        A capsule named ``"dltensor"``.

    Raises
    ------
    TypeError
        For anything but a Tensor.
    RuntimeError
        For a tensor that requires grad (pass ``t.detach()``).

    Examples
    --------
    >>> import retrograd as rg
    >>> capsule = rg.utils.dlpack.to_dlpack(rg.tensor([1.0, 2.0]))
    >>> rg.from_dlpack(capsule)
    tensor([1., 2.])
    """
    if not isinstance(tensor, Tensor):
        raise TypeError(f"to_dlpack() takes a Tensor, not {type(tensor).__name__}")
    return tensor.__dlpack__()
