"""rg.onnx: torch.onnx's names, so that programs which export behind a flag
import and run. retrograd records no graph of a whole program that ONNX
could take (its graphs are backward graphs), so exporting is not supported.

Examples
--------
>>> import retrograd as rg
>>> rg.onnx.is_in_onnx_export()
False
"""
from __future__ import annotations

__all__ = ["export", "is_in_onnx_export"]


def export(*args, **kwargs):
    """torch.onnx.export: not supported by retrograd.

    Parameters
    ----------
    *args, **kwargs
        torch.onnx.export's arguments (the model, its inputs, the file, ...).

    Raises
    ------
    NotImplementedError
        Always: retrograd cannot export ONNX.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.onnx.export(rg.nn.Linear(2, 2), rg.zeros(1, 2), "m.onnx")
    Traceback (most recent call last):
        ...
    NotImplementedError: retrograd cannot export ONNX models ...
    """
    raise NotImplementedError(
        "retrograd cannot export ONNX models (torch.onnx.export): it records backward graphs, not a "
        "program ONNX could take. Export the model from a framework that traces programs (for "
        "example torch, with the same weights: model.state_dict() holds them as arrays).")


def is_in_onnx_export() -> bool:
    """Whether an ONNX export is running: never, in retrograd.

    Returns
    -------
    bool
        False.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.onnx.is_in_onnx_export()
    False
    """
    return False
