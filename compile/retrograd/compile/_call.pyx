# cython: language_level=3
# The fixed cost of a compiled call, in C. For a small program the work
# around it (the guard key, the cache look-up, the node's forward and
# backward bodies) cost as much as the program itself when it was Python:
# the 64x20 wide benchmark's forward program runs in about 4.5 us, and
# the Python around it took about 5.5 us more.
#
# run_cached() is CompiledCallable.__call__ for the common call: no
# keyword arguments, no trace running on the thread, a key already compiled,
# no tangents, the outside tensors and values unchanged. Anything else
# returns MISS and the Python path (api.py) decides, with the same checks.
#
# Must never: decide a call differently from api.CompiledCallable.__call__
# (both take their guard key from args_key below), or hold a reference to
# an argument past the call.

from retrograd.core.abi cimport import_core, Tensor, rg_grad_enabled, rg_forward_grads

# The ABI handshake (abi.pxd), before anything else runs.
import_core("retrograd-compile")

from retrograd.core.extending import function_apply as _function_apply
from retrograd.compile import _tracer

import retrograd as rg

# What run_cached returns when the Python path must decide.
MISS = object()

cdef object _paused = _tracer.paused
cdef object _wrap_results = _tracer.wrap_results
cdef object _wrap_grads = _tracer.wrap_grads
cdef object _inference_mode = rg.is_inference_mode_enabled
# set once by configure(): api.py and _function.py import this module
cdef object _key = None             # api._key: the key of a non-tensor argument
cdef object _Entry = None           # _function.Entry
cdef object _Function = None        # _function.CompiledFunction
cdef object _finish = None          # api._finish: write-backs and result structures
cdef object _aliases = None         # _function._aliases: wrap_results's slow test
cdef object _graph_backward = None  # _function._create_graph_backward


def configure(*, key, entry_type, function, finish, aliases, graph_backward):
    """Hand this module the Python parts it calls (api.py and _function.py
    call it once at import; they import this module, so it cannot import
    them)."""
    global _key, _Entry, _Function, _finish, _aliases, _graph_backward
    _key, _Entry, _Function, _finish = key, entry_type, function, finish
    _aliases, _graph_backward = aliases, graph_backward


def args_key(tuple args, list tensors):
    """The guard key of the positional arguments ``args``; appends their
    tensors to ``tensors``. A tensor's part is its shape, dtype, device and
    whether it requires grad; any other argument's is api._key's (by value).
    Raises TypeError for an unhashable argument only when the key is hashed."""
    cdef Py_ssize_t i, n = len(args)
    cdef list parts = [None] * n
    cdef Tensor t
    for i in range(n):
        x = args[i]
        if isinstance(x, Tensor):
            t = <Tensor>x
            tensors.append(t)
            # (a Device hashes and compares by value)
            parts[i] = ("T", t._array.shape, t._array.dtype, t._device, t.needs_grad())
        else:
            parts[i] = _key(x, tensors)
    return tuple(parts)


cdef bint _any_tangent(list tensors) except -1:
    cdef Tensor t
    for x in tensors:
        t = <Tensor>x
        if rg_forward_grads(t):
            return True
    return False


def run_cached(cc, tuple args):
    """``cc(*args)`` (a CompiledCallable) when its key is compiled and
    nothing asks for the Python path; MISS otherwise."""
    cdef list tensors = []
    if not _paused():
        return MISS                   # a trace runs: api inlines the call
    try:
        key = (args_key(args, tensors), (), rg_grad_enabled(), _inference_mode())
        entry = (<dict?>cc._cache).get(key)
    except TypeError:
        return MISS                   # (api warns about the unhashable argument)
    if entry is None or type(entry) is not _Entry or _any_tangent(tensors):
        return MISS
    if entry.watched and not entry.outside_ok():
        return MISS
    try:
        return run(entry, tensors)
    except Exception:
        # as api's path: the function itself raises its eager error (or
        # gives its result); see CompiledCallable.__call__
        return cc._fn(*args)


cpdef object run(object entry, list tensors):
    """Run ``entry``'s programs on ``tensors`` (the call's tensor arguments):
    one CompiledFunction node when an output requires grad, the forward
    program alone otherwise; returns the function's result."""
    progs = entry.progs
    if progs[1] is None or not rg_grad_enabled():
        fwd = progs[0]
        arrays = [(<Tensor?>t)._array for t in tensors] + \
                 [(<Tensor?>t)._array for t in entry.lifted]
        res = fwd.run(*arrays)
        outs = [_tracer.wrap(a if a.base is None else a.copy(), entry.device)
                for a in res[:entry.n_out]]
    else:
        outs = _function_apply(_Function, (entry, *tensors, *entry.lifted), {})
        if entry.n_out == 1:
            outs = [outs]
    if entry.mutations or entry.struct != "single":
        return _finish(entry, tensors, outs)
    return outs[0]


def node_forward(ctx, entry, *tensors):
    """CompiledFunction.forward: the forward program on the inputs' arrays;
    ctx keeps what the backward program reads."""
    cdef Py_ssize_t i, n
    cdef list arrays = [(<Tensor?>t)._array for t in tensors]
    progs = entry.progs           # the pair: their saved values match
    res = progs[0].run(*arrays)
    n = entry.n_out
    outs = _wrap_results(res, n, arrays, entry.device, _aliases)
    # (one attribute: the entry, the backward program, the values it reads)
    ctx.state = (entry, progs[1], res[n:])
    if entry.random_slots:
        fwd = progs[0]
        ctx.random = [res[fwd.ret_index[s]] if s in fwd.ret_index else None
                      for s in entry.random_slots]
    if not entry.all_diff:
        ctx.mark_non_differentiable(*[o for o, d in zip(outs, entry.out_diff) if not d])
    # the inputs, for their version check: a gradient that needs an input
    # modified in place since raises, as eager would; and the results the
    # backward reads: one modified in place since raises too, where the
    # backward would silently read its new value
    saved_out = entry.saved_out_index
    if saved_out:
        ctx.save_for_backward(*tensors, *[outs[i] for i in saved_out])
    else:
        ctx.save_for_backward(*tensors)
    return outs if n != 1 else outs[0]


def node_backward(ctx, *gouts):
    """CompiledFunction.backward: the backward program on the gradients'
    arrays (a create_graph backward runs the tensor programs instead)."""
    cdef Py_ssize_t n_saved
    state = ctx.state
    entry, bwd, saved_arrays = state
    tensors = ctx.saved_tensors
    n_saved = len(entry.saved_out_index)
    if n_saved:
        tensors = tensors[:len(tensors) - n_saved]
    if rg_grad_enabled():
        for x in tensors:
            if (<Tensor?>x).needs_grad():
                return _graph_backward(ctx, entry, tensors, gouts)
    garr = []
    out_xp, out_meta = entry.out_xp, entry.out_meta
    for i in entry.diff_out_index:
        g = gouts[i]
        # (an output that got no gradient: zeros, as materialized grads)
        garr.append((<Tensor?>g)._array if g is not None else out_xp[i].zeros(*out_meta[i]))
    arrays = [(<Tensor?>x)._array for x in tensors]
    # (each gradient on its input's device: a function may move values)
    return _wrap_grads(bwd.run(*garr, *arrays, *saved_arrays), entry.grad_inputs, tensors)
