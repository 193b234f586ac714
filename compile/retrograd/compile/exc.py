"""The errors of retrograd-compile."""
from __future__ import annotations

__all__ = ["Unsupported"]


class Unsupported(RuntimeError):
    """What ``fullgraph=True`` raises where a function cannot be compiled
    whole (torch's ``torch._dynamo.exc.Unsupported``): data-dependent Python
    on a tensor, a hook, an in-place change of an input, an op with no
    function to replay.

    Attributes
    ----------
    what : str
        What broke the graph (``"Tensor.item()"``, ...).
    where : str
        The user's line, as ``"file:line"``.

    Examples
    --------
    >>> import retrograd as rg
    >>> f = rg.compile(lambda x: x * 2 if x.sum() > 0 else x, fullgraph=True)
    >>> try:
    ...     f(rg.ones(2))
    ... except rg.compile.exc.Unsupported as e:
    ...     print(e.what)
    Tensor.__bool__()
    """

    def __init__(self, what: str, where: str):
        super().__init__(
            f"rg.compile(fullgraph=True) cannot compile {what} at {where}: the function must be "
            "one straight-line graph of tensor ops. Move the data-dependent Python out of the "
            "compiled function, or pass fullgraph=False to run such calls eagerly.")
        self.what = what
        self.where = where
