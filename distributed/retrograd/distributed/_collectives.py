"""The collectives and point-to-point calls of torch.distributed.

They act in place on the tensors' arrays (outside autograd, as torch's:
the autograd-aware versions are retrograd.distributed.nn.functional),
bump the tensors' version counters like any in-place op, and return None,
or a Work with ``async_op=True``.
"""
from __future__ import annotations

import time

import numpy as np

from retrograd.core import Tensor
from retrograd.core import extending as _ext
from retrograd.core.grad_mode import no_grad
from retrograd.distributed import _group
from retrograd.distributed._reduce_op import ReduceOp
from retrograd.distributed._work import Work

__all__ = ["all_reduce", "broadcast", "all_gather", "all_gather_into_tensor", "reduce_scatter_tensor",
           "barrier", "send", "recv", "isend", "irecv"]


def _check_tensor(t, param, op_name):
    if not isinstance(t, Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{param}` of type Tensor "
                        f"but got {type(t).__name__} instead ({op_name}).")
    if t.is_cuda:
        raise RuntimeError(f"{op_name}: the 'mpi' backend works on CPU tensors, and `{param}` is on "
                           f"{t.device}; move it with .cpu() (the 'nccl' backend for CUDA tensors is "
                           f"not available yet)")


def _check_op(op, tensor, op_name):
    if not isinstance(op, ReduceOp):
        raise TypeError(f"{op_name}: op must be a ReduceOp (e.g. ReduceOp.SUM), got {op!r}")
    kind = np.dtype(tensor.dtype).kind
    if op is ReduceOp.AVG and kind not in "fc":
        raise RuntimeError(f"{op_name}: ReduceOp.AVG needs a floating-point or complex tensor, got "
                           f"{tensor.dtype}: use ReduceOp.SUM and divide, or convert the tensor")
    if op in (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR) and kind not in "biu":
        raise RuntimeError(f"{op_name}: {op} needs an integer or bool tensor, got {tensor.dtype}")
    if op in (ReduceOp.MIN, ReduceOp.MAX) and kind == "c":
        raise RuntimeError(f"{op_name}: {op} is not defined for complex tensors")


def _buffer(t):
    """The tensor's own array, and whether it is already contiguous (if
    not, the collective works on a copy and writes it back)."""
    # numpy() refuses a tensor that requires grad while grad mode is on;
    # detach() has cut it from the graph already.
    with no_grad():
        a = t.detach().numpy()
    return a, a.flags.c_contiguous


def _describe(op_name, *parts):
    return op_name + " " + " ".join(str(p) for p in parts)


def _run(op_name, group, program, async_op, written=(), description=None):
    """Check the call across ranks, start ``program`` as a Work; wait for it unless async_op."""
    deadline = time.monotonic() + group.timeout
    if description is not None:
        Work(op_name, group, group._backend.fingerprint_check(group._comm, description), deadline).wait()
    work = Work(op_name, group, program, deadline)
    if written:
        _ext.increment_version(list(written))
    if async_op:
        return work
    work.wait()
    return None


def _writeback(program, pairs):
    """Run ``program``, then copy each contiguous buffer back into its array."""
    result = yield from program
    for dst, src in pairs:
        if dst is not src:
            dst[...] = src
    return result


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``tensor`` across the group's ranks, in place on every rank.

    ``torch.distributed.all_reduce``: afterwards every rank holds the sum
    (or ``op``) of all the ranks' tensors.

    Parameters
    ----------
    tensor : Tensor
        Input and output, the same shape and dtype on every rank.
    op : ReduceOp, optional
        SUM (default), AVG, PRODUCT, MIN, MAX, BAND, BOR, BXOR.
    group : ProcessGroup, optional
        Default: the default group.
    async_op : bool, optional
        Return a :class:`Work` instead of waiting.

    Returns
    -------
    Work or None
        A Work when ``async_op``; None otherwise, or on a non-member rank.

    Raises
    ------
    ValueError
        No default process group.
    TypeError
        ``tensor`` is not a Tensor, or ``op`` not a ReduceOp.
    RuntimeError
        An op the dtype does not support; ranks with different shapes,
        dtypes or collectives.
    DistBackendError
        A peer failed or the timeout passed.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.distributed as dist
    >>> dist.init_process_group("mpi", world_size=1, rank=0)
    >>> t = rg.tensor([1.0, 2.0])
    >>> dist.all_reduce(t, op=dist.ReduceOp.SUM)
    >>> t
    tensor([1., 2.])
    >>> dist.destroy_process_group()
    """
    _check_tensor(tensor, "tensor", "all_reduce")
    _check_op(op, tensor, "all_reduce")
    g = _group.resolve(group)
    if g is None:
        _group.warn_not_in_group("all_reduce")
        return None
    a, contiguous = _buffer(tensor)
    buf = a if contiguous else np.ascontiguousarray(a)
    desc = _describe("all_reduce", op.name, a.dtype, tuple(a.shape))
    program = _writeback(g._backend.all_reduce(g._comm, buf, op), [(a, buf)])
    return _run("all_reduce", g, program, async_op, [tensor], desc)


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Copy ``tensor`` from rank ``src`` to every rank of the group, in place.

    ``torch.distributed.broadcast``.

    Parameters
    ----------
    tensor : Tensor
        The data on ``src``; overwritten on the others. Same shape and dtype
        on every rank.
    src : int, optional
        The global rank it comes from (or give ``group_src``).
    group : ProcessGroup, optional
        Default: the default group.
    async_op : bool, optional
        Return a :class:`Work` instead of waiting.
    group_src : int, optional
        The source as a rank of ``group``.

    Returns
    -------
    Work or None
        A Work when ``async_op``.

    Raises
    ------
    ValueError
        No source, both ``src`` and ``group_src``, or a source outside the group.
    RuntimeError
        Ranks with different shapes or dtypes.
    DistBackendError
        A peer failed or the timeout passed.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.distributed as dist
    >>> dist.init_process_group("mpi", world_size=1, rank=0)
    >>> t = rg.tensor([3.0])
    >>> dist.broadcast(t, src=0)
    >>> t
    tensor([3.])
    >>> dist.destroy_process_group()
    """
    _check_tensor(tensor, "tensor", "broadcast")
    g = _group.resolve(group)
    if g is None:
        _group.warn_not_in_group("broadcast")
        return None
    root = _group_peer(g, src, group_src, "src", "broadcast")
    a, contiguous = _buffer(tensor)
    buf = a if contiguous else np.ascontiguousarray(a)
    desc = _describe("broadcast", root, a.dtype, tuple(a.shape))
    program = _writeback(g._backend.broadcast(g._comm, buf, root), [(a, buf)])
    return _run("broadcast", g, program, async_op, [tensor], desc)


def _group_peer(g, rank, group_rank, name, op_name):
    if (rank is None) == (group_rank is None):
        raise ValueError(f"{op_name}: give exactly one of `{name}` (a global rank) and "
                         f"`group_{name}` (a rank of the group)")
    if group_rank is not None:
        if not 0 <= group_rank < g.size():
            raise ValueError(f"{op_name}: group_{name}={group_rank} is out of range for a group of "
                             f"size {g.size()}")
        return int(group_rank)
    return g._group_rank(int(rank), f"`{name}` of {op_name}")


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Gather every rank's ``input_tensor`` into ``output_tensor`` on every rank.

    ``torch.distributed.all_gather_into_tensor``: the output holds the
    ranks' inputs one after the other along dim 0, either concatenated
    (shape ``(world_size * n, ...)``) or stacked (``(world_size, n, ...)``).

    Parameters
    ----------
    output_tensor : Tensor
        ``world_size`` times the input's elements, the input's dtype.
    input_tensor : Tensor
        This rank's part, the same shape and dtype on every rank.
    group : ProcessGroup, optional
        Default: the default group.
    async_op : bool, optional
        Return a :class:`Work` instead of waiting.

    Returns
    -------
    Work or None
        A Work when ``async_op``.

    Raises
    ------
    ValueError
        The output's size or dtype does not fit the input's.
    RuntimeError
        Ranks with different shapes or dtypes.
    DistBackendError
        A peer failed or the timeout passed.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.distributed as dist
    >>> dist.init_process_group("mpi", world_size=1, rank=0)
    >>> out = rg.zeros(2)
    >>> dist.all_gather_into_tensor(out, rg.tensor([1.0, 2.0]))
    >>> out
    tensor([1., 2.])
    >>> dist.destroy_process_group()
    """
    _check_tensor(output_tensor, "output_tensor", "all_gather_into_tensor")
    _check_tensor(input_tensor, "input_tensor", "all_gather_into_tensor")
    g = _group.resolve(group)
    if g is None:
        _group.warn_not_in_group("all_gather_into_tensor")
        return None
    out, out_c = _buffer(output_tensor)
    inp, inp_c = _buffer(input_tensor)
    if out.dtype != inp.dtype:
        raise ValueError(f"all_gather_into_tensor: output dtype {out.dtype} differs from input dtype {inp.dtype}")
    if out.size != inp.size * g.size():
        raise ValueError(f"all_gather_into_tensor: the output tensor must hold world_size ({g.size()}) "
                         f"times the input's {inp.size} elements, but it holds {out.size} (shape "
                         f"{tuple(out.shape)})")
    send = inp if inp_c else np.ascontiguousarray(inp)
    recv = out if out_c else np.ascontiguousarray(out)
    desc = _describe("all_gather_into_tensor", inp.dtype, tuple(inp.shape))
    program = _writeback(g._backend.all_gather(g._comm, send, recv), [(out, recv)])
    return _run("all_gather_into_tensor", g, program, async_op, [output_tensor], desc)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Gather every rank's ``tensor`` into the list ``tensor_list`` on every rank.

    ``torch.distributed.all_gather``: ``tensor_list[i]`` receives rank
    ``i``'s tensor (its group rank).

    Parameters
    ----------
    tensor_list : list of Tensor
        ``world_size`` tensors of ``tensor``'s shape and dtype, overwritten.
    tensor : Tensor
        This rank's tensor, the same shape and dtype on every rank.
    group : ProcessGroup, optional
        Default: the default group.
    async_op : bool, optional
        Return a :class:`Work` instead of waiting.

    Returns
    -------
    Work or None
        A Work when ``async_op``.

    Raises
    ------
    RuntimeError
        A list of the wrong length, or tensors of another shape or dtype.
    DistBackendError
        A peer failed or the timeout passed.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.distributed as dist
    >>> dist.init_process_group("mpi", world_size=1, rank=0)
    >>> outs = [rg.zeros(2)]
    >>> dist.all_gather(outs, rg.tensor([1.0, 2.0]))
    >>> outs
    [tensor([1., 2.])]
    >>> dist.destroy_process_group()
    """
    if not isinstance(tensor_list, (list, tuple)):
        raise TypeError(f"Invalid function argument: tensor_list must be a list of Tensors, got "
                        f"{type(tensor_list).__name__}")
    _check_tensor(tensor, "tensor", "all_gather")
    g = _group.resolve(group)
    if g is None:
        _group.warn_not_in_group("all_gather")
        return None
    if len(tensor_list) != g.size():
        raise RuntimeError(f"all_gather: invalid output tensor list (expected length {g.size()}, the "
                           f"group's size, got {len(tensor_list)})")
    inp, inp_c = _buffer(tensor)
    outs = []
    for i, t in enumerate(tensor_list):
        _check_tensor(t, f"tensor_list[{i}]", "all_gather")
        if tuple(t.shape) != tuple(inp.shape) or t.dtype != inp.dtype:
            raise RuntimeError(f"all_gather: invalid tensor at index {i} of tensor_list (expected "
                               f"{inp.dtype} {tuple(inp.shape)}, got {t.dtype} {tuple(t.shape)})")
        outs.append(_buffer(t)[0])
    send = inp if inp_c else np.ascontiguousarray(inp)
    recv = np.empty((g.size(),) + tuple(inp.shape), dtype=inp.dtype)
    desc = _describe("all_gather", inp.dtype, tuple(inp.shape))
    program = _writeback(g._backend.all_gather(g._comm, send, recv),
                         [(o, recv[i]) for i, o in enumerate(outs)])
    return _run("all_gather", g, program, async_op, list(tensor_list), desc)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``input`` across ranks and give each rank its slice of the result.

    ``torch.distributed.reduce_scatter_tensor``: ``input`` holds
    ``world_size`` equal parts along dim 0; rank ``i`` receives the
    reduction of every rank's part ``i`` in ``output``.

    Parameters
    ----------
    output : Tensor
        This rank's part of the result, ``input``'s numel over world_size.
    input : Tensor
        The same shape and dtype on every rank.
    op : ReduceOp, optional
        SUM (default), AVG, PRODUCT, MIN, MAX, ...
    group : ProcessGroup, optional
        Default: the default group.
    async_op : bool, optional
        Return a :class:`Work` instead of waiting.

    Returns
    -------
    Work or None
        A Work when ``async_op``.

    Raises
    ------
    ValueError
        Sizes or dtypes that do not fit.
    RuntimeError
        Ranks with different shapes or dtypes.
    DistBackendError
        A peer failed or the timeout passed.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.distributed as dist
    >>> dist.init_process_group("mpi", world_size=1, rank=0)
    >>> out = rg.zeros(2)
    >>> dist.reduce_scatter_tensor(out, rg.tensor([1.0, 2.0]))
    >>> out
    tensor([1., 2.])
    >>> dist.destroy_process_group()
    """
    _check_tensor(output, "output", "reduce_scatter_tensor")
    _check_tensor(input, "input", "reduce_scatter_tensor")
    _check_op(op, input, "reduce_scatter_tensor")
    g = _group.resolve(group)
    if g is None:
        _group.warn_not_in_group("reduce_scatter_tensor")
        return None
    out, out_c = _buffer(output)
    inp, inp_c = _buffer(input)
    if out.dtype != inp.dtype:
        raise ValueError(f"reduce_scatter_tensor: output dtype {out.dtype} differs from input dtype {inp.dtype}")
    if inp.size != out.size * g.size():
        raise ValueError(f"reduce_scatter_tensor: the input tensor must hold world_size ({g.size()}) "
                         f"times the output's {out.size} elements, but it holds {inp.size} (shape "
                         f"{tuple(inp.shape)})")
    send = inp if inp_c else np.ascontiguousarray(inp)
    recv = out if out_c else np.ascontiguousarray(out)
    desc = _describe("reduce_scatter_tensor", op.name, inp.dtype, tuple(inp.shape))
    program = _writeback(g._backend.reduce_scatter(g._comm, send, recv, op), [(out, recv)])
    return _run("reduce_scatter_tensor", g, program, async_op, [output], desc)


def barrier(group=None, async_op=False, device_ids=None, timeout=None):
    """Wait until every rank of the group has reached this call.

    ``torch.distributed.barrier``.

    Parameters
    ----------
    group : ProcessGroup, optional
        Default: the default group.
    async_op : bool, optional
        Return a :class:`Work` instead of waiting.
    device_ids : list, optional
        Ignored (torch uses it for NCCL).
    timeout : datetime.timedelta or float, optional
        A limit for this barrier instead of the group's timeout.

    Returns
    -------
    Work or None
        A Work when ``async_op``.

    Raises
    ------
    DistBackendError
        A peer failed or the timeout passed.

    Examples
    --------
    >>> import retrograd.distributed as dist
    >>> dist.init_process_group("mpi", world_size=1, rank=0)
    >>> dist.barrier()
    >>> dist.destroy_process_group()
    """
    g = _group.resolve(group)
    if g is None:
        _group.warn_not_in_group("barrier")
        return None
    work = Work("barrier", g, g._backend.barrier(g._comm), time.monotonic() + g.timeout)
    if async_op:
        return work
    work.wait(timeout)
    return None


def _p2p(op_name, tensor, peer, group, tag, group_peer, name):
    _check_tensor(tensor, "tensor", op_name)
    g = _group.resolve(group)
    if g is None:
        _group.warn_not_in_group(op_name)
        return None, None, None
    if not isinstance(tag, int) or tag < 0:
        raise ValueError(f"{op_name}: tag must be a non-negative int, got {tag!r}")
    if name == "src" and peer is None and group_peer is None:
        return g, None, tag        # recv from any source
    rank = _group_peer(g, peer, group_peer, name, op_name)
    if rank == g.rank():
        raise ValueError(f"Invalid {'destination' if name == 'dst' else 'source'} rank: "
                         f"{'destination' if name == 'dst' else 'source'} rank should not be the same "
                         f"as the rank of the current process.")
    return g, rank, tag


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Send ``tensor`` to rank ``dst`` without waiting (``torch.distributed.isend``).

    Parameters
    ----------
    tensor : Tensor
        The data; must not be modified until the Work completes.
    dst : int, optional
        The receiver's global rank (or give ``group_dst``).
    group : ProcessGroup, optional
        Default: the default group.
    tag : int, optional
        Matches the receiver's ``tag``.
    group_dst : int, optional
        The receiver as a rank of ``group``.

    Returns
    -------
    Work or None
        The send's handle (None on a non-member rank).

    Raises
    ------
    ValueError
        A destination outside the group, or this process's own rank.

    Examples
    --------
    >>> import retrograd.distributed as dist
    >>> dist.isend  # doctest: +ELLIPSIS
    <function isend at ...>
    """
    g, dest, tag = _p2p("isend", tensor, dst, group, tag, group_dst, "dst")
    if g is None:
        return None
    a, contiguous = _buffer(tensor)
    buf = a if contiguous else np.ascontiguousarray(a)
    return Work("send", g, g._backend.send(g._comm, buf, dest, tag), time.monotonic() + g.timeout)


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Send ``tensor`` to rank ``dst`` and wait until it is sent (``torch.distributed.send``).

    Parameters
    ----------
    tensor : Tensor
        The data.
    dst : int, optional
        The receiver's global rank (or give ``group_dst``).
    group : ProcessGroup, optional
        Default: the default group.
    tag : int, optional
        Matches the receiver's ``tag``.
    group_dst : int, optional
        The receiver as a rank of ``group``.

    Returns
    -------
    None

    Raises
    ------
    ValueError
        A destination outside the group, or this process's own rank.
    DistBackendError
        The receiver failed or the timeout passed.

    Examples
    --------
    >>> import retrograd.distributed as dist
    >>> dist.send  # doctest: +ELLIPSIS
    <function send at ...>
    """
    work = isend(tensor, dst, group, tag, group_dst)
    if work is not None:
        work.wait()


def _recv_program(g, backend_program):
    src = yield from backend_program
    return g.ranks[src]


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receive into ``tensor`` from rank ``src`` without waiting (``torch.distributed.irecv``).

    Parameters
    ----------
    tensor : Tensor
        Overwritten with the message; its size must equal the sent one's.
    src : int, optional
        The sender's global rank; None (and no ``group_src``): any rank.
    group : ProcessGroup, optional
        Default: the default group.
    tag : int, optional
        Matches the sender's ``tag``.
    group_src : int, optional
        The sender as a rank of ``group``.

    Returns
    -------
    Work or None
        The receive's handle; its ``source_rank()`` names the sender.

    Raises
    ------
    ValueError
        A source outside the group, or this process's own rank.

    Examples
    --------
    >>> import retrograd.distributed as dist
    >>> dist.irecv  # doctest: +ELLIPSIS
    <function irecv at ...>
    """
    g, source, tag = _p2p("irecv", tensor, src, group, tag, group_src, "src")
    if g is None:
        return None
    a, contiguous = _buffer(tensor)
    buf = a if contiguous else np.ascontiguousarray(a)
    program = _writeback(_recv_program(g, g._backend.recv(g._comm, buf, source, tag)), [(a, buf)])
    work = Work("recv", g, program, time.monotonic() + g.timeout)
    _ext.increment_version([tensor])
    return work


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receive into ``tensor`` from rank ``src`` and wait (``torch.distributed.recv``).

    Parameters
    ----------
    tensor : Tensor
        Overwritten with the message; its size must equal the sent one's.
    src : int, optional
        The sender's global rank; None (and no ``group_src``): any rank.
    group : ProcessGroup, optional
        Default: the default group.
    tag : int, optional
        Matches the sender's ``tag``.
    group_src : int, optional
        The sender as a rank of ``group``.

    Returns
    -------
    int
        The sender's global rank (-1 on a non-member rank).

    Raises
    ------
    ValueError
        A source outside the group, or this process's own rank.
    RuntimeError
        The message's size differs from the tensor's.
    DistBackendError
        The sender failed or the timeout passed.

    Examples
    --------
    >>> import retrograd.distributed as dist
    >>> dist.recv  # doctest: +ELLIPSIS
    <function recv at ...>
    """
    work = irecv(tensor, src, group, tag, group_src)
    if work is None:
        return -1
    work.wait()
    return work.source_rank()
