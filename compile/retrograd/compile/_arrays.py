"""What the compile package does to an array, for NumPy arrays (CPU tensors)
and CuPy arrays (CUDA tensors) alike.

NumPy's own functions refuse device arrays (no implicit copy to the host),
so trace-time copies, comparisons and checks go through these: copies stay
on the array's device, and values are compared on the host.
"""
from __future__ import annotations

import sys

import numpy as np


def is_device(a):
    """Whether ``a`` is a device array (CuPy's), not a NumPy one."""
    return type(a) is not np.ndarray and hasattr(a, "__cuda_array_interface__")


def module_of(a):
    """The array module of ``a``: numpy, or cupy for a device array."""
    return sys.modules["cupy"] if is_device(a) else np


def host(a):
    """``a``'s values as a NumPy array (a copy from the device for a device
    array; ``a`` itself or ``np.asarray(a)`` otherwise)."""
    return a.get() if is_device(a) else np.asarray(a)


def copy(a):
    """A C-contiguous copy of ``a`` on its own device."""
    return a.copy() if is_device(a) else np.array(a, copy=True)


def like(values, a):
    """The NumPy array ``values`` on ``a``'s device."""
    return module_of(a).asarray(values) if is_device(a) else values


def may_share_memory(a, b):
    """Whether arrays ``a`` and ``b`` (of one module) may share memory."""
    if is_device(a):
        return bool(module_of(a).may_share_memory(a, b))
    return np.may_share_memory(a, b)
