"""ReduceOp, as torch.distributed.ReduceOp."""
import enum

__all__ = ["ReduceOp"]


class ReduceOp(enum.Enum):
    """How a reducing collective combines the ranks' tensors.

    ``torch.distributed.ReduceOp``: ``SUM``, ``AVG`` (the sum divided by
    the group's size, for floating-point tensors), ``PRODUCT``, ``MIN``,
    ``MAX``, and the bitwise ``BAND``, ``BOR``, ``BXOR`` (integer and bool
    tensors).

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.distributed.ReduceOp.SUM
    <ReduceOp.SUM: 0>
    """

    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
