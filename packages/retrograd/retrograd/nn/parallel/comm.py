"""Communication between the devices of one process (``torch.nn.parallel.comm``).

Moving tensors to several devices and back: ``broadcast``,
``broadcast_coalesced``, ``reduce_add``, ``scatter`` and ``gather``. Unlike
torch's (whose differentiable twins live in ``torch.nn.parallel._functions``),
each records a backward node: Broadcast's backward is a ReduceAdd onto the
source's device, ReduceAdd's a Broadcast back to the inputs' devices,
Scatter's a Gather, and Gather's a Scatter (as the seeds'
``torch/csrc/autograd/functions/comm.h``). Devices are CUDA devices or
virtual CPU devices (``rg.set_virtual_cpu_devices``); the engine runs each
node on the worker of its device.
"""
from __future__ import annotations

import retrograd.core as _core
from retrograd.autograd.function import Function

__all__ = ["broadcast", "broadcast_coalesced", "reduce_add", "scatter", "gather"]


def _devices(devices, op_name):
    if devices is None or len(devices) == 0:
        raise ValueError(f"{op_name}: give a non-empty list of devices (e.g. ['cpu:1', 'cpu:2'])")
    return [_core.device(d) if not isinstance(d, int) else _core.device(f"cuda:{d}") for d in devices]


def _check_tensor(t, op_name, name="tensor"):
    if not isinstance(t, _core.Tensor):
        raise TypeError(f"{op_name}: expected `{name}` to be a Tensor, got {type(t).__name__}")


class _BroadcastFn(Function):
    @staticmethod
    def forward(ctx, devices, *tensors):
        ctx.source = [t.device for t in tensors]
        ctx.n = len(tensors)
        return tuple(t.to(d, copy=True) for d in devices for t in tensors)

    @staticmethod
    def backward(ctx, *grads):
        n = ctx.n
        per_input = []
        for j in range(n):
            gs = [g for g in grads[j::n]]
            per_input.append(_ReduceAddFn.apply(ctx.source[j], *gs))
        return (None,) + tuple(per_input)


class _ReduceAddFn(Function):
    @staticmethod
    def forward(ctx, destination, *inputs):
        ctx.devices = [t.device for t in inputs]
        total = inputs[0].to(destination, copy=True)
        for t in inputs[1:]:
            total = total + t.to(destination)
        return total

    @staticmethod
    def backward(ctx, grad):
        return (None,) + _BroadcastFn.apply(ctx.devices, grad)


class _ScatterFn(Function):
    @staticmethod
    def forward(ctx, devices, chunk_sizes, dim, tensor):
        ctx.source, ctx.dim = tensor.device, dim
        parts = tensor.split(list(chunk_sizes), dim)
        return tuple(p.to(d, copy=True) for p, d in zip(parts, devices))

    @staticmethod
    def backward(ctx, *grads):
        return None, None, None, _GatherFn.apply(ctx.source, ctx.dim, *grads)


class _GatherFn(Function):
    @staticmethod
    def forward(ctx, destination, dim, *tensors):
        ctx.devices = [t.device for t in tensors]
        ctx.sizes = [t.shape[dim] for t in tensors]
        ctx.dim = dim
        return _core.cat([t.to(destination) for t in tensors], dim)

    @staticmethod
    def backward(ctx, grad):
        return (None, None) + _ScatterFn.apply(ctx.devices, ctx.sizes, ctx.dim, grad)


def broadcast(tensor, devices=None, *, out=None):
    """Copy ``tensor`` to each of ``devices``; backward sums the copies' gradients.

    Parameters
    ----------
    tensor : Tensor
        What to copy.
    devices : list of str, int or Device
        Where to (ints are CUDA device indices).
    out : None
        Not supported (must be None).

    Returns
    -------
    tuple of Tensor
        One copy per device, in order.

    Raises
    ------
    TypeError
        ``tensor`` is not a Tensor.
    ValueError
        No devices, or ``out`` given.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.set_virtual_cpu_devices(2)
    >>> x = rg.tensor([1.0, 2.0], requires_grad=True)
    >>> a, b = rg.nn.parallel.comm.broadcast(x, ["cpu:1", "cpu:2"])
    >>> a.device, b.device
    (device(type='cpu', index=1), device(type='cpu', index=2))
    >>> (a.sum().cpu() + 2 * b.sum().cpu()).backward()
    >>> x.grad
    tensor([3., 3.])
    """
    _check_tensor(tensor, "broadcast")
    if out is not None:
        raise ValueError("broadcast: `out` is not supported by retrograd; use the returned tensors")
    return _BroadcastFn.apply(_devices(devices, "broadcast"), tensor)


def broadcast_coalesced(tensors, devices, buffer_size=10485760):
    """Copy several tensors to each of ``devices`` (``comm.broadcast_coalesced``).

    Parameters
    ----------
    tensors : sequence of Tensor
        What to copy, all on one device.
    devices : list of str, int or Device
        Where to.
    buffer_size : int, optional
        Accepted for torch's signature (the copies are made one by one).

    Returns
    -------
    tuple of tuple of Tensor
        ``result[i][j]`` is ``tensors[j]`` on ``devices[i]``.

    Raises
    ------
    TypeError
        An element that is not a Tensor.
    ValueError
        No tensors or no devices.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.set_virtual_cpu_devices(2)
    >>> out = rg.nn.parallel.comm.broadcast_coalesced([rg.ones(2), rg.zeros(1)], ["cpu:1", "cpu:2"])
    >>> [[t.device.index for t in row] for row in out]
    [[1, 1], [2, 2]]
    """
    tensors = list(tensors)
    if not tensors:
        raise ValueError("broadcast_coalesced: give at least one tensor")
    for i, t in enumerate(tensors):
        _check_tensor(t, "broadcast_coalesced", f"tensors[{i}]")
    devs = _devices(devices, "broadcast_coalesced")
    flat = _BroadcastFn.apply(devs, *tensors)
    n = len(tensors)
    return tuple(tuple(flat[i * n:(i + 1) * n]) for i in range(len(devs)))


def reduce_add(inputs, destination=None):
    """Sum tensors that live on different devices, onto ``destination``.

    Backward copies the gradient back to every input's device.

    Parameters
    ----------
    inputs : sequence of Tensor
        Tensors of one shape, on any devices.
    destination : str, int or Device, optional
        Where the sum goes (default: the first input's device).

    Returns
    -------
    Tensor
        The sum, on ``destination``.

    Raises
    ------
    TypeError
        An element that is not a Tensor.
    ValueError
        No inputs, or inputs of different shapes.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.set_virtual_cpu_devices(2)
    >>> a = rg.ones(2, device="cpu:1")
    >>> b = rg.ones(2, device="cpu:2")
    >>> rg.nn.parallel.comm.reduce_add([a, b], destination="cpu")
    tensor([2., 2.])
    """
    inputs = list(inputs)
    if not inputs:
        raise ValueError("reduce_add: give at least one tensor")
    for i, t in enumerate(inputs):
        _check_tensor(t, "reduce_add", f"inputs[{i}]")
        if tuple(t.shape) != tuple(inputs[0].shape):
            raise ValueError(f"reduce_add: input {i} has shape {tuple(t.shape)}, but input 0 has "
                             f"{tuple(inputs[0].shape)}; all inputs must have the same shape")
    dest = inputs[0].device if destination is None else _devices([destination], "reduce_add")[0]
    return _ReduceAddFn.apply(dest, *inputs)


def scatter(tensor, devices=None, chunk_sizes=None, dim=0, streams=None, *, out=None):
    """Split ``tensor`` along ``dim`` and send one piece to each device.

    Backward gathers the pieces' gradients back onto the source's device.

    Parameters
    ----------
    tensor : Tensor
        What to split.
    devices : list of str, int or Device
        Where the pieces go.
    chunk_sizes : list of int, optional
        Size of each piece along ``dim`` (default: as even as possible).
    dim : int, optional
        The dimension to split (default 0).
    streams, out : None
        Not supported (must be None).

    Returns
    -------
    tuple of Tensor
        One piece per device.

    Raises
    ------
    TypeError
        ``tensor`` is not a Tensor.
    ValueError
        Chunk sizes that do not add up to the dimension's size, or one per device.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.set_virtual_cpu_devices(2)
    >>> x = rg.arange(5.0)
    >>> a, b = rg.nn.parallel.comm.scatter(x, ["cpu:1", "cpu:2"])
    >>> a, b.device.index
    (tensor([0., 1., 2.], device='cpu:1'), 2)
    """
    _check_tensor(tensor, "scatter")
    if out is not None or streams is not None:
        raise ValueError("scatter: `out` and `streams` are not supported by retrograd")
    devs = _devices(devices, "scatter")
    ndim = tensor.dim()
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {dim})")
    dim = dim % ndim
    size = tensor.shape[dim]
    if chunk_sizes is None:
        base, extra = divmod(size, len(devs))
        chunk_sizes = [base + (1 if i < extra else 0) for i in range(len(devs))]
    chunk_sizes = [int(c) for c in chunk_sizes]
    if len(chunk_sizes) != len(devs):
        raise ValueError(f"scatter: expected {len(devs)} chunk sizes (one per device), got {len(chunk_sizes)}")
    if sum(chunk_sizes) != size or any(c < 0 for c in chunk_sizes):
        raise ValueError(f"scatter: chunk sizes {chunk_sizes} must be non-negative and add up to the "
                         f"size of dim {dim}, {size}")
    return _ScatterFn.apply(devs, chunk_sizes, dim, tensor)


def gather(tensors, dim=0, destination=None, *, out=None):
    """Concatenate tensors from several devices along ``dim`` onto ``destination``.

    Backward scatters the gradient back to the inputs' devices.

    Parameters
    ----------
    tensors : sequence of Tensor
        Pieces that agree on every dimension but ``dim``.
    dim : int, optional
        The dimension to concatenate (default 0).
    destination : str, int or Device, optional
        Where the result goes (default: the CPU).
    out : None
        Not supported (must be None).

    Returns
    -------
    Tensor
        The concatenation, on ``destination``.

    Raises
    ------
    TypeError
        An element that is not a Tensor.
    ValueError
        No tensors, or ``out`` given.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.set_virtual_cpu_devices(2)
    >>> a = rg.ones(1, device="cpu:1")
    >>> b = rg.zeros(2, device="cpu:2")
    >>> rg.nn.parallel.comm.gather([a, b], destination="cpu")
    tensor([1., 0., 0.])
    """
    tensors = list(tensors)
    if not tensors:
        raise ValueError("gather: give at least one tensor")
    if out is not None:
        raise ValueError("gather: `out` is not supported by retrograd; use the returned tensor")
    for i, t in enumerate(tensors):
        _check_tensor(t, "gather", f"tensors[{i}]")
    dest = _core.device("cpu") if destination is None else _devices([destination], "gather")[0]
    ndim = tensors[0].dim()
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {dim})")
    return _GatherFn.apply(dest, dim % ndim, *tensors)
