"""DataParallel: one module replicated over the devices of one process.

torch.nn.parallel's single-process data parallelism and its pieces:
``scatter`` (inputs split along a dim, one piece per device), ``replicate``
(the module copied to each device, its parameters broadcast
differentiably), ``parallel_apply`` (the replicas run in threads) and
``gather`` (the outputs concatenated on one device). The devices are CUDA
devices (through CuPy) or, without a GPU, retrograd's virtual CPU devices
(``rg.set_virtual_cpu_devices(n)``): index 0 is the ordinary CPU and index
``k`` is ``"cpu:k"``. Every move between devices is an op of
:mod:`retrograd.nn.parallel.comm`, which records a backward node, so the
replicas' parameter gradients sum back into the original parameters.
"""
from __future__ import annotations

import contextlib

import sys
import threading
import traceback
import warnings
from collections.abc import Sequence
from itertools import chain
from typing import Any

import retrograd.core as _c
from retrograd.core import Tensor
from retrograd.nn.modules.module import Module
from retrograd.nn.parallel import comm

__all__ = ["DataParallel", "data_parallel", "replicate", "scatter", "scatter_kwargs", "gather", "parallel_apply"]

_DeviceLike = Any     # an int index, a device string ("cuda:1", "cpu:2") or a device

# shared parameter texts of the docstrings below
_DEVICE_IDS = """device_ids : list of int, str or device, optional
        The devices: CUDA indices (or ``"cuda:k"``), or with virtual CPU
        devices ``0`` (the CPU), ``1``, ... (or ``"cpu"``, ``"cpu:1"``, ...).
        Default: every device there is."""
_OUTPUT_DEVICE = """output_device : int, str or device, optional
        Where the outputs are gathered (default ``device_ids[0]``; -1 is the CPU)."""
_DIM = """dim : int, optional
        The dimension the inputs are split along and the outputs joined along
        (default 0)."""


def _fill(obj):
    obj.__doc__ = (obj.__doc__ or "").replace("{device_ids}", _DEVICE_IDS).replace(
        "{output_device}", _OUTPUT_DEVICE).replace("{dim}", _DIM)
    return obj


# --- devices ----------------------------------------------------------------------------

def _device_type() -> str | None:
    """"cuda" with a GPU, "cpu" with virtual CPU devices, else None (torch's _get_available_device_type)."""
    from retrograd import cuda
    if cuda.is_available():
        return "cuda"
    if _c.num_virtual_cpu_devices() > 0:
        return "cpu"
    return None


def _all_device_indices(kind: str | None) -> list[int]:
    from retrograd import cuda
    if kind == "cuda":
        return list(range(cuda.device_count()))
    if kind == "cpu":
        return list(range(_c.num_virtual_cpu_devices() + 1))
    return []


def _device_index(device: _DeviceLike, kind: str | None) -> int:
    """The index of ``device`` among ``kind``'s devices (torch's _get_device_index); -1 is the CPU."""
    if isinstance(device, bool):
        raise TypeError(f"expected a device index or a device, got {device!r}")
    if isinstance(device, int):
        return device
    text = str(device)
    name, _, index = text.partition(":")
    if name not in ("cpu", "cuda"):
        raise ValueError(f"expected a device such as 'cuda:0', 'cpu:1' or an int, got {device!r}")
    if name == "cpu" and kind != "cpu":
        return -1
    if name == "cuda" and kind != "cuda":
        raise ValueError(f"{text} given, but no CUDA device is available")
    if not index:
        if name == "cpu":
            return 0
        from retrograd import cuda
        return cuda.current_device()
    return int(index)


def _device(index: int, kind: str | None) -> Any:
    if index < 0 or kind is None:
        return _c.device("cpu")
    if kind == "cuda":
        return _c.device(f"cuda:{index}")
    return _c.device("cpu" if index == 0 else f"cpu:{index}")


def _resolve(devices: Sequence[_DeviceLike] | None) -> list:
    kind = _device_type()
    return [_device(_device_index(d, kind), kind) for d in (devices or [])]


# --- scatter and gather ---------------------------------------------------------------

def _is_namedtuple(obj: Any) -> bool:
    return isinstance(obj, tuple) and hasattr(obj, "_asdict") and hasattr(obj, "_fields")


def _chunk_sizes(size: int, parts: int) -> list[int]:
    # Tensor.chunk's split: pieces of ceil(size / parts), so there may be fewer pieces than devices
    if size == 0:
        return [0] * parts
    step = -(-size // parts)
    return [min(step, size - s) for s in range(0, size, step)]


def scatter(inputs: Any, target_gpus: Sequence[_DeviceLike], dim: int = 0) -> Any:
    """Split the tensors in ``inputs`` along ``dim``, one piece per device; copy the rest.

    Tensors are cut as ``Tensor.chunk`` cuts them (pieces of
    ``ceil(size / len(target_gpus))``, so there may be fewer pieces than
    devices); tuples, lists, dicts and named tuples are walked; any other
    object is repeated for every device. The split is differentiable: the
    pieces' gradients gather back into the original.

    Parameters
    ----------
    inputs : Tensor or nested tuple, list or dict
        What to split.
    target_gpus : list of int, str or device
        The devices (indices as for :class:`DataParallel`).
    dim : int, optional
        The dimension to split (default 0).

    Returns
    -------
    tuple or list
        One element per piece: for a Tensor a tuple of tensors, otherwise a
        list of objects shaped as ``inputs``.

    Raises
    ------
    ValueError
        No devices.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.set_virtual_cpu_devices(2)
    >>> parts = rg.nn.parallel.scatter((rg.arange(5.0), "tag"), [0, 1, 2])
    >>> [(p[0].tolist(), str(p[0].device), p[1]) for p in parts]
    [([0.0, 1.0], 'cpu', 'tag'), ([2.0, 3.0], 'cpu:1', 'tag'), ([4.0], 'cpu:2', 'tag')]
    """
    devices = _resolve(target_gpus)
    if not devices:
        raise ValueError("scatter: give at least one device")

    def scatter_map(obj):
        if isinstance(obj, Tensor):
            if obj.ndim == 0:
                raise RuntimeError("chunk expects at least a 1-dimensional tensor")
            sizes = _chunk_sizes(obj.shape[dim], len(devices))
            return comm.scatter(obj, devices[:len(sizes)], sizes, dim)
        if _is_namedtuple(obj):
            return [type(obj)(*args) for args in zip(*map(scatter_map, obj))]
        if isinstance(obj, tuple) and len(obj) > 0:
            return list(zip(*map(scatter_map, obj)))
        if isinstance(obj, list) and len(obj) > 0:
            return [list(i) for i in zip(*map(scatter_map, obj))]
        if isinstance(obj, dict) and len(obj) > 0:
            return [type(obj)(i) for i in zip(*map(scatter_map, obj.items()))]
        return [obj for _ in devices]

    return scatter_map(inputs)


def scatter_kwargs(inputs: tuple, kwargs: dict | None, target_gpus: Sequence[_DeviceLike],
                   dim: int = 0) -> tuple[tuple, tuple]:
    """:func:`scatter` of the positional and the keyword arguments, padded to the same count.

    Parameters
    ----------
    inputs : tuple
        The positional arguments.
    kwargs : dict or None
        The keyword arguments.
    target_gpus : list of int, str or device
        The devices.
    dim : int, optional
        The dimension to split (default 0).

    Returns
    -------
    tuple of (tuple, tuple)
        The positional arguments per piece and the keyword arguments per piece.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.set_virtual_cpu_devices(1)
    >>> from retrograd.nn.parallel.data_parallel import scatter_kwargs
    >>> args, kwargs = scatter_kwargs((rg.ones(2, 3),), {"scale": 2.0}, [0, 1])
    >>> [a[0].shape for a in args], kwargs
    ([(1, 3), (1, 3)], ({'scale': 2.0}, {'scale': 2.0}))
    """
    scattered_inputs = scatter(inputs, target_gpus, dim) if inputs else []
    scattered_kwargs = scatter(kwargs, target_gpus, dim) if kwargs else []
    if len(scattered_inputs) < len(scattered_kwargs):
        scattered_inputs.extend(() for _ in range(len(scattered_kwargs) - len(scattered_inputs)))
    elif len(scattered_kwargs) < len(inputs):
        scattered_kwargs.extend({} for _ in range(len(scattered_inputs) - len(scattered_kwargs)))
    return tuple(scattered_inputs), tuple(scattered_kwargs)


def gather(outputs: Any, target_device: _DeviceLike, dim: int = 0) -> Any:
    """Join the per-device ``outputs`` along ``dim`` on ``target_device``.

    The inverse of :func:`scatter`: tensors are concatenated (0-d tensors,
    with ``dim=0``, become a vector, with a warning, as torch's), tuples,
    lists, dicts and named tuples are walked element by element, None stays
    None. Differentiable: the gradient is split back to the devices.

    Parameters
    ----------
    outputs : sequence
        One output per device, all of one structure.
    target_device : int, str or device
        Where the result goes (-1 or ``"cpu"``: the CPU).
    dim : int, optional
        The dimension to concatenate (default 0).

    Returns
    -------
    object
        Of the outputs' structure, with tensors joined.

    Raises
    ------
    ValueError
        Dicts with different numbers of keys.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.set_virtual_cpu_devices(1)
    >>> out = rg.nn.parallel.gather([{"y": rg.ones(1)}, {"y": rg.zeros(2, device="cpu:1")}], "cpu")
    >>> out
    {'y': tensor([1., 0., 0.])}
    """
    kind = _device_type()
    destination = _device(_device_index(target_device, kind), kind)

    def gather_map(outs):
        out = outs[0]
        if isinstance(out, Tensor):
            if dim == 0 and all(t.ndim == 0 for t in outs):
                warnings.warn("Was asked to gather along dimension 0, but all input tensors were scalars; will "
                              "instead unsqueeze and return a vector.", stacklevel=2)
                outs = [_c.reshape(t, (1,)) for t in outs]
            return comm.gather(outs, dim, destination)
        if out is None:
            return None
        if isinstance(out, dict):
            if not all(len(out) == len(d) for d in outs):
                raise ValueError("All dicts must have the same number of keys")
            return type(out)((k, gather_map([d[k] for d in outs])) for k in out)
        if _is_namedtuple(out):
            return type(out)._make(map(gather_map, zip(*outs)))
        return type(out)(map(gather_map, zip(*outs)))

    return gather_map(outputs)


# --- replicate ----------------------------------------------------------------------------

def _replica_of(module: Module) -> Module:
    # a shallow copy that owns no parameters: the broadcast copies are set on it as plain attributes
    replica = type(module).__new__(type(module))
    setattr_ = object.__setattr__
    setattr_(replica, "__dict__", module.__dict__.copy())
    setattr_(replica, "_parameters", {})
    setattr_(replica, "_buffers", dict(module._buffers))
    setattr_(replica, "_modules", dict(module._modules))
    setattr_(replica, "_is_replica", True)
    return replica


def _copies(tensors: list, devices: list, differentiable: bool) -> list[list]:
    """``out[j][i]``: tensors[i] on devices[j]; the differentiable copies go through comm.broadcast."""
    if not tensors:
        return [[] for _ in devices]
    if differentiable:
        return [list(row) for row in comm.broadcast_coalesced(tensors, devices)]
    # a tensor on its own device is shared rather than copied, as torch's: in-place updates of a buffer
    # (BatchNorm's running statistics) by the first replica reach the module
    with _c.no_grad():
        return [[t.detach() if t.device == d else t.detach().to(d, copy=True) for t in tensors] for d in devices]


def replicate(network: Module, devices: Sequence[_DeviceLike], detach: bool = False) -> list[Module]:
    """Copies of ``network``, one per device, for :func:`parallel_apply`.

    Each copy shares the module's code and attributes; its parameters are
    copies broadcast to its device (differentiably unless ``detach``, so
    that backward sums their gradients into the original parameters), its
    buffers copies of the originals (shared on the original's own device).
    The replicas own no parameters (``replica.parameters()`` is empty), as
    torch's.

    Parameters
    ----------
    network : Module
        The module to copy.
    devices : list of int, str or device
        One replica per device.
    detach : bool, optional
        Copy without recording the broadcast (default False).

    Returns
    -------
    list of Module
        The replicas.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.set_virtual_cpu_devices(1)
    >>> net = rg.nn.Linear(2, 1)
    >>> a, b = rg.nn.parallel.replicate(net, [0, 1])
    >>> a.weight.device, b.weight.device, b.weight.grad_fn is not None
    (device(type='cpu'), device(type='cpu', index=1), True)
    """
    devs = _resolve(devices)
    if not devs:
        return []
    params = list(network.parameters())
    trainable = [p for p in params if p.requires_grad and not detach]
    frozen = [p for p in params if not (p.requires_grad and not detach)]
    copies: dict[int, list[Tensor]] = {id(p): [] for p in params}
    for group, differentiable in ((trainable, True), (frozen, False)):
        for row in _copies(group, devs, differentiable):
            for p, c in zip(group, row):
                copies[id(p)].append(c)
    buffers = list(network.buffers())
    with_grad = [b for b in buffers if b.requires_grad and not detach]
    plain = [b for b in buffers if not (b.requires_grad and not detach)]
    for buffer_group, differentiable in ((with_grad, True), (plain, False)):
        for row in _copies(buffer_group, devs, differentiable):
            for b, c in zip(buffer_group, row):
                copies.setdefault(id(b), []).append(c)
    modules = list(network.modules())
    index = {id(m): i for i, m in enumerate(modules)}
    replicas = [[_replica_of(m) for m in modules] for _ in devs]
    for i, m in enumerate(modules):
        for j in range(len(devs)):
            replica = replicas[j][i]
            for key, child in m._modules.items():
                replica._modules[key] = None if child is None else replicas[j][index[id(child)]]
            for key, param in m._parameters.items():
                if param is None:
                    replica._parameters[key] = None
                else:
                    object.__setattr__(replica, key, copies[id(param)][j])
            for key, buffer in m._buffers.items():
                replica._buffers[key] = None if buffer is None else copies[id(buffer)][j]
    return [replicas[j][0] for j in range(len(devs))]


# --- parallel_apply -------------------------------------------------------------------------

def _a_tensor(obj: Any) -> Tensor | None:
    if isinstance(obj, Tensor):
        return obj
    if isinstance(obj, (list, tuple)):
        for item in obj:
            found = _a_tensor(item)
            if found is not None:
                return found
    if isinstance(obj, dict):
        for item in obj.items():
            found = _a_tensor(item)
            if found is not None:
                return found
    return None


def _reraise(exc: BaseException, where: str, text: str) -> None:
    message = f"Caught {type(exc).__name__} {where}.\nOriginal {text}"
    try:
        new = type(exc)(message)
    except Exception:
        raise RuntimeError(message) from exc
    raise new from None


def parallel_apply(modules: Sequence[Module], inputs: Sequence[Any], kwargs_tup: Sequence[dict] | None = None,
                   devices: Sequence[_DeviceLike | None] | None = None) -> list[Any]:
    """Call ``modules[i](*inputs[i], **kwargs_tup[i])`` for every i, each in its own thread.

    Grad mode is the caller's in every thread. On CUDA each thread makes its
    device current (CuPy's device context). An exception in a replica is
    raised again here, of the same class, naming the replica and its device
    and carrying the original traceback.

    Parameters
    ----------
    modules : sequence of Module
        The replicas.
    inputs : sequence
        One input per module: a tuple or list of positional arguments, or a
        single argument.
    kwargs_tup : sequence of dict, optional
        One dict of keyword arguments per module.
    devices : sequence of int, str or device, optional
        One device per module (default: each input's first tensor's).

    Returns
    -------
    list
        The outputs, in order.

    Raises
    ------
    AssertionError
        Sequences of different lengths, as torch's.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.set_virtual_cpu_devices(1)
    >>> nets = rg.nn.parallel.replicate(rg.nn.Identity(), [0, 1])
    >>> outs = rg.nn.parallel.parallel_apply(nets, [rg.ones(1), rg.zeros(1, device="cpu:1")])
    >>> [str(o.device) for o in outs]
    ['cpu', 'cpu:1']
    """
    if len(modules) != len(inputs):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the number of inputs "
                             f"{len(inputs)}")
    if kwargs_tup is not None:
        if len(modules) != len(kwargs_tup):
            raise AssertionError(f"The number of modules {len(modules)} is not equal to the number of kwargs_tup "
                                 f"{len(kwargs_tup)}")
    else:
        kwargs_tup = [{} for _ in modules]
    if devices is not None:
        if len(modules) != len(devices):
            raise AssertionError(f"The number of modules {len(modules)} is not equal to the number of devices "
                                 f"{len(devices)}")
        devs: list = [None if d is None else _resolve([d])[0] for d in devices]
    else:
        devs = [None] * len(modules)
    results: dict[int, Any] = {}
    errors: dict[int, tuple[BaseException, str, str]] = {}
    grad_enabled = _c.is_grad_enabled()

    def worker(i, module, input, kwargs, device):
        try:
            if device is None:
                t = _a_tensor(input)
                if t is None:
                    raise RuntimeError(f"in replica {i}, no device was provided and no tensor input was found; "
                                       "device cannot be resolved")
                device = t.device
            args = input if isinstance(input, (list, tuple)) else (input,)
            with _c.set_grad_enabled(grad_enabled):
                if str(device).startswith("cuda"):
                    import cupy
                    with cupy.cuda.Device(_device_index(device, "cuda")):
                        results[i] = module(*args, **kwargs)
                else:
                    results[i] = module(*args, **kwargs)
        except BaseException as exc:
            errors[i] = (exc, f"in replica {i} on device {device}",
                         "".join(traceback.format_exception(*sys.exc_info())))

    jobs = list(zip(range(len(modules)), modules, inputs, kwargs_tup, devs))
    if len(jobs) > 1:
        threads = [threading.Thread(target=worker, args=job) for job in jobs]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    elif jobs:
        worker(*jobs[0])
    for i in range(len(jobs)):
        if i in errors:
            _reraise(*errors[i])
    return [results[i] for i in range(len(jobs))]


# --- DataParallel ------------------------------------------------------------------------------

def _check_on(module: Module, src: Any) -> None:
    for t in chain(module.parameters(), module.buffers()):
        if t.device != src:
            raise RuntimeError(f"module must have its parameters and buffers on device {src} (device_ids[0]) but "
                               f"found one of them on device: {t.device}")


@_fill
def _forward_range() -> Any:
    # the profiler's "DataParallel.forward" range, as torch's; retrograd-profiler is optional, and without it
    # nothing records ranges
    try:
        from retrograd.profiler import record_function
    except ImportError:
        return contextlib.nullcontext()
    return record_function("DataParallel.forward")


class DataParallel(Module):
    """Data parallelism within one process: each forward splits the batch over devices.

    A forward scatters the tensor arguments along ``dim`` (other arguments
    are repeated), replicates ``module`` onto the devices used, runs the
    replicas in threads and gathers their outputs on ``output_device``.
    Backward sums the replicas' gradients into ``module``'s parameters, so
    training steps are those of ``module`` on the whole batch. The module's
    parameters and buffers must be on ``device_ids[0]``.

    Without CUDA devices and without virtual CPU devices, or with a single
    device id, a forward just calls ``module``, as torch's on a CPU-only
    machine. As in torch, replicas are rebuilt at every forward, so
    attribute changes made in ``forward`` are lost, except in-place updates
    of buffers by the replica on ``device_ids[0]``, which shares them (a
    BatchNorm's running statistics follow that replica's part of the
    batch); hooks run once per replica; a module returning a 0-d tensor
    gives a vector with one value per device.

    Parameters
    ----------
    module : Module
        The module to run in parallel (``self.module``).
    {device_ids}
    {output_device}
    {dim}

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.set_virtual_cpu_devices(2)
    >>> net = rg.nn.Linear(3, 2)
    >>> dp = rg.nn.parallel.DataParallel(net)              # devices 0 (the CPU), 1 and 2
    >>> dp.device_ids
    [0, 1, 2]
    >>> x = rg.randn(6, 3)
    >>> y = dp(x)
    >>> bool(rg.allclose(y, net(x)))
    True
    >>> y.sum().backward()
    >>> net.weight.grad.shape
    (2, 3)
    """

    def __init__(self, module: Module, device_ids: Sequence[_DeviceLike] | None = None,
                 output_device: _DeviceLike | None = None, dim: int = 0) -> None:
        super().__init__()
        kind = _device_type()
        if kind is None:
            self.module = module
            self.device_ids: list[int] = []
            return
        if device_ids is None:
            device_ids = _all_device_indices(kind)
        if output_device is None:
            output_device = device_ids[0]
        self.dim = dim
        self.module = module
        self.device_ids = [_device_index(d, kind) for d in device_ids]
        self.output_device = _device_index(output_device, kind)
        self.src_device_obj = _device(self.device_ids[0], kind)
        if len(self.device_ids) == 1:
            self.module.to(self.src_device_obj)

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        """Scatter, run the replicas, gather (or call ``module`` when there is one device or none).

        Parameters
        ----------
        *inputs, **kwargs
            ``module``'s arguments; tensors are split along ``dim``.

        Returns
        -------
        object
            ``module``'s output for the whole batch, on ``output_device``.

        Raises
        ------
        RuntimeError
            A parameter or buffer of ``module`` that is not on ``device_ids[0]``.
        """
        with _forward_range():
            if not self.device_ids:
                return self.module(*inputs, **kwargs)
            _check_on(self.module, self.src_device_obj)
            inputs, module_kwargs = self.scatter(inputs, kwargs, self.device_ids)
            # a forward without arguments still runs once, on the first device
            if not inputs and not module_kwargs:
                inputs, module_kwargs = ((),), ({},)
            if len(self.device_ids) == 1:
                return self.module(*inputs[0], **module_kwargs[0])
            replicas = self.replicate(self.module, self.device_ids[:len(inputs)])
            outputs = self.parallel_apply(replicas, inputs, module_kwargs)
            return self.gather(outputs, self.output_device)

    def replicate(self, module: Module, device_ids: Sequence[_DeviceLike]) -> list[Module]:
        """:func:`replicate`, detached when grad mode is off.

        Parameters
        ----------
        module : Module
            The module.
        device_ids : list of int
            The devices.

        Returns
        -------
        list of Module
            The replicas.

        Examples
        --------
        >>> import retrograd as rg
        >>> rg.set_virtual_cpu_devices(1)
        >>> dp = rg.nn.parallel.DataParallel(rg.nn.Linear(2, 2))
        >>> [str(r.weight.device) for r in dp.replicate(dp.module, [0, 1])]
        ['cpu', 'cpu:1']
        """
        return replicate(module, device_ids, not _c.is_grad_enabled())

    def scatter(self, inputs: tuple, kwargs: dict | None, device_ids: Sequence[_DeviceLike]) -> tuple[tuple, tuple]:
        """Split the inputs and keyword arguments among ``device_ids`` along ``self.dim`` (torch's ``scatter_kwargs``).

        Parameters
        ----------
        inputs : tuple
            The positional arguments.
        kwargs : dict or None
            The keyword arguments.
        device_ids : list of int
            The devices.

        Returns
        -------
        tuple of (tuple, tuple)
            The arguments per piece.

        Examples
        --------
        >>> import retrograd as rg
        >>> rg.set_virtual_cpu_devices(1)
        >>> dp = rg.nn.parallel.DataParallel(rg.nn.Linear(2, 2))
        >>> args, kwargs = dp.scatter((rg.ones(4, 2),), {}, dp.device_ids)
        >>> [a[0].shape for a in args], kwargs
        ([(2, 2), (2, 2)], ({}, {}))
        """
        return scatter_kwargs(inputs, kwargs, device_ids, dim=self.dim)

    def parallel_apply(self, replicas: Sequence[Module], inputs: Sequence[Any], kwargs: Any) -> list[Any]:
        """:func:`parallel_apply` on the first ``len(replicas)`` devices.

        Parameters
        ----------
        replicas : sequence of Module
            The replicas.
        inputs : sequence
            Their positional arguments.
        kwargs : sequence of dict
            Their keyword arguments.

        Returns
        -------
        list
            The outputs.

        Examples
        --------
        >>> import retrograd as rg
        >>> rg.set_virtual_cpu_devices(1)
        >>> dp = rg.nn.parallel.DataParallel(rg.nn.Identity())
        >>> args, kwargs = dp.scatter((rg.ones(4, 2),), {}, dp.device_ids)
        >>> outs = dp.parallel_apply(dp.replicate(dp.module, dp.device_ids), args, kwargs)
        >>> [str(o.device) for o in outs]
        ['cpu', 'cpu:1']
        """
        return parallel_apply(replicas, inputs, kwargs, self.device_ids[:len(replicas)])

    def gather(self, outputs: Any, output_device: _DeviceLike) -> Any:
        """:func:`gather` along ``self.dim``.

        Parameters
        ----------
        outputs : sequence
            The replicas' outputs.
        output_device : int, str or device
            Where they go.

        Returns
        -------
        object
            The joined output.

        Examples
        --------
        >>> import retrograd as rg
        >>> rg.set_virtual_cpu_devices(1)
        >>> dp = rg.nn.parallel.DataParallel(rg.nn.Identity())
        >>> dp.gather([rg.ones(1), rg.zeros(1, device="cpu:1")], dp.output_device)
        tensor([1., 0.])
        """
        return gather(outputs, output_device, dim=self.dim)


@_fill
def data_parallel(module: Module, inputs: Any, device_ids: Sequence[_DeviceLike] | None = None,
                  output_device: _DeviceLike | None = None, dim: int = 0, module_kwargs: Any = None) -> Any:
    """``module(*inputs)`` evaluated over several devices: :class:`DataParallel` as a function.

    Parameters
    ----------
    module : Module
        The module; its parameters and buffers on ``device_ids[0]``.
    inputs : Tensor or tuple
        The positional arguments (a single one need not be in a tuple).
    {device_ids}
    {output_device}
    {dim}
    module_kwargs : dict, optional
        Keyword arguments of the module.

    Returns
    -------
    object
        The module's output, on ``output_device``.

    Raises
    ------
    RuntimeError
        No CUDA device and no virtual CPU devices, or the module not on
        ``device_ids[0]``.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.set_virtual_cpu_devices(1)
    >>> net = rg.nn.Linear(2, 2)
    >>> x = rg.randn(4, 2)
    >>> bool(rg.allclose(rg.nn.parallel.data_parallel(net, x, [0, 1]), net(x)))
    True
    """
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    kind = _device_type()
    if kind is None:
        raise RuntimeError("device type could not be determined: there is no CUDA device and no virtual CPU "
                           "device (rg.set_virtual_cpu_devices(n)); call the module itself")
    if device_ids is None:
        device_ids = _all_device_indices(kind)
    if output_device is None:
        output_device = device_ids[0]
    ids = [_device_index(d, kind) for d in device_ids]
    output_index = _device_index(output_device, kind)
    _check_on(module, _device(ids[0], kind))
    inputs, module_kwargs = scatter_kwargs(inputs, module_kwargs, ids, dim)
    if not inputs and not module_kwargs:
        inputs, module_kwargs = ((),), ({},)
    if len(ids) == 1:
        return module(*inputs[0], **module_kwargs[0])
    used = ids[:len(inputs)]
    replicas = replicate(module, used)
    outputs = parallel_apply(replicas, inputs, module_kwargs, used)
    return gather(outputs, output_index, dim)
