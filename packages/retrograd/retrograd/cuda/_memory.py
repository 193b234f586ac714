"""CUDA memory statistics over CuPy's default memory pool (``torch.cuda``'s).

CuPy's pool counts the bytes its arrays hold but keeps no peak, which
``max_memory_allocated`` needs: retrograd wraps the pool's allocator with
one that notes the high-water mark after each allocation (a dict update per
allocation, next to a kernel launch of several microseconds). It does so
only while the allocator is CuPy's default: a user's own allocator is left
alone, and the peak is then the current figure.
"""
from __future__ import annotations

_peak: dict = {}               # device index -> the largest used_bytes() seen


def _tracking_malloc(size):
    import cupy
    pool = cupy.get_default_memory_pool()
    memory = pool.malloc(size)
    used = pool.used_bytes()           # (the allocating device is the current one)
    device = memory.device_id
    if used > _peak.get(device, 0):
        _peak[device] = used
    return memory


def _install() -> bool:
    """Route CuPy's allocations through the tracker, if CuPy's default
    allocator is in use. Returns whether it is (now) installed."""
    try:
        import cupy
        get_allocator = cupy.cuda.get_allocator
    except (ImportError, AttributeError):
        return False
    current = get_allocator()
    if current is _tracking_malloc:
        return True
    if current != cupy.get_default_memory_pool().malloc:
        return False
    cupy.cuda.set_allocator(_tracking_malloc)
    return True


def _pool_figure(device, what: str) -> int:
    from retrograd.cuda import _cupy, _device_index
    cupy = _cupy()
    with cupy.cuda.Device(_device_index(device)):
        return int(getattr(cupy.get_default_memory_pool(), what)())


def memory_allocated(device=None) -> int:
    """Bytes held by CUDA arrays on a device now (CuPy's pool: ``used_bytes``).

    Parameters
    ----------
    device : int, str or Device, optional
        The device (the current one by default).

    Returns
    -------
    int
        Bytes in use, rounded up to the pool's blocks as CuPy allocates them.

    Raises
    ------
    RuntimeError
        Without CuPy or a GPU.

    Examples
    --------
    >>> import retrograd as rg
    >>> if rg.cuda.is_available():
    ...     before = rg.cuda.memory_allocated()
    ...     x = rg.zeros(1024, device="cuda")
    ...     assert rg.cuda.memory_allocated() >= before + 8192
    """
    return _pool_figure(device, "used_bytes")


def max_memory_allocated(device=None) -> int:
    """The most bytes CUDA arrays held on a device since start or :func:`reset_peak_memory_stats`.

    Parameters
    ----------
    device : int, str or Device, optional
        The device (the current one by default).

    Returns
    -------
    int
        The peak of :func:`memory_allocated`.

    Raises
    ------
    RuntimeError
        Without CuPy or a GPU.

    Examples
    --------
    >>> import retrograd as rg
    >>> if rg.cuda.is_available():
    ...     rg.cuda.reset_peak_memory_stats()
    ...     x = rg.zeros(1 << 20, device="cuda")
    ...     del x
    ...     assert rg.cuda.max_memory_allocated() >= 8 << 20
    """
    from retrograd.cuda import _device_index
    now = memory_allocated(device)
    return max(now, _peak.get(_device_index(device), 0))


def reset_peak_memory_stats(device=None) -> None:
    """Start :func:`max_memory_allocated` afresh from what is allocated now.

    Parameters
    ----------
    device : int, str or Device, optional
        The device (the current one by default).

    Raises
    ------
    RuntimeError
        Without CuPy or a GPU.

    Examples
    --------
    >>> import retrograd as rg
    >>> if rg.cuda.is_available():
    ...     rg.cuda.reset_peak_memory_stats()
    ...     assert rg.cuda.max_memory_allocated() == rg.cuda.memory_allocated()
    """
    from retrograd.cuda import _device_index
    _peak[_device_index(device)] = memory_allocated(device)


def memory_reserved(device=None) -> int:
    """Bytes CuPy's pool holds from the driver on a device: in use plus cached for reuse.

    Parameters
    ----------
    device : int, str or Device, optional
        The device (the current one by default).

    Returns
    -------
    int
        ``memory_allocated()`` plus the pool's free cached blocks.

    Raises
    ------
    RuntimeError
        Without CuPy or a GPU.

    Examples
    --------
    >>> import retrograd as rg
    >>> if rg.cuda.is_available():
    ...     assert rg.cuda.memory_reserved() >= rg.cuda.memory_allocated()
    """
    return _pool_figure(device, "total_bytes")


def empty_cache() -> None:
    """Give the pool's cached, unused blocks back to the driver (arrays in use stay).

    Other processes (and other libraries' allocators) can then use that
    memory. Without CuPy or a GPU it does nothing, as torch's.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.cuda.empty_cache()
    """
    try:
        import cupy
    except ImportError:
        return
    cupy.get_default_memory_pool().free_all_blocks()
    cupy.get_default_pinned_memory_pool().free_all_blocks()


_install()
