# Devices: parsing device specs, the interned Device objects and the virtual
# CPU devices. Part of _ops.pyx (the Device class is abi's, _device.pxi).

import os as _os

cdef int _num_virtual_cpu = 0
cdef dict _device_cache = {}


cdef Device _make_device(int dtype, int index):
    key = (dtype, index)
    cdef Device d = _device_cache.get(key)
    if d is None:
        d = Device.__new__(Device)
        d.type = dtype
        d.index = index
        _device_cache[key] = d
    return d


cdef Device _CPU = _make_device(RG_DEV_CPU, -1)


cdef Device _rg_cpu_device():
    return _CPU


cdef int _rg_num_virtual_cpu_devices() noexcept:
    return _num_virtual_cpu


cdef Device _parse_device(object spec):
    cdef str s, kind
    cdef int index = -1
    if spec is None:
        return _CPU
    if isinstance(spec, Device):
        return <Device>spec
    if not isinstance(spec, str):
        raise TypeError(f"expected a device string such as 'cpu' or 'cuda:0', got {type(spec).__name__}")
    s = (<str>spec).strip()
    kind, sep, idx = s.partition(":")
    if sep:
        if not idx.isdigit():
            raise ValueError(f"invalid device string {spec!r}: the index after ':' must be a non-negative integer")
        index = int(idx)
    if kind == "cpu":
        if index <= 0:
            return _CPU
        if index > _num_virtual_cpu:
            raise RuntimeError(
                f"device {spec!r} does not exist: {_num_virtual_cpu} virtual CPU device(s) are configured. "
                "Call retrograd.set_virtual_cpu_devices(n) (or set RETROGRAD_VIRTUAL_CPU_DEVICES=n) first."
            )
        return _make_device(RG_DEV_CPU, index)
    if kind == "cuda":
        return _make_device(RG_DEV_CUDA, 0 if index < 0 else index)
    raise ValueError(f"unknown device type {kind!r} in {spec!r}: expected 'cpu', 'cpu:N' or 'cuda:N'")


def device(spec):
    """Return the Device that ``spec`` names, as ``torch.device``.

    Devices are interned: every call for one device returns the same
    object, and a Device compares equal to its string form.

    Parameters
    ----------
    spec : str or Device
        ``"cpu"``; ``"cpu:N"`` for a virtual CPU device (see
        :func:`set_virtual_cpu_devices`); ``"cuda"`` (device 0) or
        ``"cuda:N"`` for a CuPy GPU; or a Device, returned as it is.

    Returns
    -------
    Device

    Raises
    ------
    ValueError
        An unknown device type or a malformed index.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.device("cpu")
    device(type='cpu')
    >>> rg.device("cuda:1")
    device(type='cuda', index=1)
    >>> rg.device("cpu") == "cpu"
    True
    """
    return _parse_device(spec)


def set_virtual_cpu_devices(int n) -> None:
    """Configure ``n`` virtual CPU devices, "cpu:1" .. "cpu:n".

    Their tensors are NumPy arrays, but the engine runs their graph nodes on a
    worker thread per device, exactly as it would for CUDA devices: a way to
    exercise multi-device backward (and code written for several GPUs) on a
    machine without one. The environment variable
    ``RETROGRAD_VIRTUAL_CPU_DEVICES`` sets it at import.

    Parameters
    ----------
    n : int
        How many virtual devices, 0 (the default: none) to 255.

    Raises
    ------
    ValueError
        ``n`` is outside [0, 255].

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.set_virtual_cpu_devices(2)
    >>> x = rg.ones(3, device="cpu:1", requires_grad=True)
    >>> (x * 2).sum().backward()
    >>> x.grad, x.grad.device
    (tensor([2., 2., 2.], device='cpu:1'), device(type='cpu', index=1))
    >>> rg.set_virtual_cpu_devices(0)
    """
    global _num_virtual_cpu
    if n < 0 or n > 255:
        raise ValueError(f"the number of virtual CPU devices must be in [0, 255], got {n}")
    _num_virtual_cpu = n


def num_virtual_cpu_devices():
    """The number of virtual CPU devices "cpu:1" .. "cpu:N" configured.

    Returns
    -------
    int
        N, as set by :func:`set_virtual_cpu_devices` (0 when there are none).

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.num_virtual_cpu_devices()
    0
    """
    return _num_virtual_cpu


def _init_virtual_from_env():
    v = _os.environ.get("RETROGRAD_VIRTUAL_CPU_DEVICES")
    if v:
        try:
            set_virtual_cpu_devices(int(v))
        except ValueError as exc:
            raise ValueError(f"RETROGRAD_VIRTUAL_CPU_DEVICES={v!r}: {exc}") from None


_init_virtual_from_env()
