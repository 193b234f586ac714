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

cimport numpy as cnp
from retrograd.core.abi cimport (
    import_core, Tensor, Device, rg_grad_enabled, rg_forward_grads, rg_cpu_device,
    rg_array_function, rg_saved_tensors_hooks_active, rg_op_events_active,
)

# The ABI handshake (abi.pxd), before anything else runs.
import_core("retrograd-compile")

from retrograd.core import is_inference_mode_enabled
from retrograd.compile import _tracer

cnp.import_array()

# What run_cached returns when the Python path must decide.
MISS = object()

cdef object _paused = _tracer.paused
cdef object _wrap_results = _tracer.wrap_results
cdef object _wrap_grads = _tracer.wrap_grads
cdef object _may_alias = _tracer.may_alias
cdef object _guards_hold = _tracer.guards_hold
cdef object _inference_mode = is_inference_mode_enabled
# set once by configure(): api.py and _function.py import this module
cdef object _key = None             # api._key: the key of a non-tensor argument
cdef object _Function = None        # _function.CompiledFunction
cdef object _finish = None          # api._finish: write-backs and result structures
cdef object _aliases = None         # _function._aliases: wrap_results's slow test
cdef object _graph_backward = None  # _function._create_graph_backward


cdef class EntryBase:
    """The fields of a compiled guard key (_function.Entry, a subclass) that
    every call reads, as C fields: read from C they cost a pointer load,
    where an instance dict's look-up costs tens of nanoseconds each, and a
    call reads about fifteen."""
    cdef public object progs            # (forward program, backward program or None)
    cdef public object lifted           # tensors read from outside: the node's last inputs
    cdef public object device           # the outputs' Device (None: the CPU)
    cdef public Py_ssize_t n_out        # the programs' results that are outputs
    cdef public object mutations        # outside tensors the function changes in place
    cdef public object struct           # the result's structure ("single", "tuple", ...)
    cdef public bint watched            # any of the three below is non-empty
    cdef public object outside_meta     # (tensor, outside_meta_of(tensor) at trace time)
    cdef public object source_guards    # (closure cell or globals dict, name or None, tensor)
    cdef public object value_guards     # api._value_guards's, for _tracer.guards_hold
    cdef public object random_slots
    cdef public bint all_diff
    cdef public object out_diff
    cdef public object saved_out_index
    cdef public object diff_out_index
    cdef public object out_xp
    cdef public object out_meta
    cdef public object grad_inputs

    def __cinit__(self, *args, **kwargs):
        # (what a key built but not yet checked reads: nothing to watch)
        self.outside_meta, self.source_guards, self.value_guards = [], [], []
        self.mutations, self.random_slots, self.struct = [], [], "single"

    cpdef bint outside_ok(self) except -1:
        """Whether the tensors the trace read from outside the function
        (lifted parameters, constants) still have the shape, dtype and
        requires_grad the programs were built for, the function's closure
        variables and globals that held them still hold them, and the
        Python values it read there (api._value_guards) are unchanged."""
        for item in self.outside_meta:
            if not _meta_holds(<Tensor?>(<tuple>item)[0], <tuple>(<tuple>item)[1]):
                return False
        for item in self.source_guards:
            holder, name, t = item
            if (holder.cell_contents if name is None else holder.get(name)) is not t:
                return False
        return not self.value_guards or _guards_hold(self.value_guards)


cdef bint _meta_holds(Tensor t, tuple meta) except -1:
    # outside_meta_of(t) == meta, without building the tuple: a model's
    # compiled call checks every parameter, so this runs hundreds of times
    # per call (NumPy's dtypes of the built-in types are singletons)
    cdef Py_ssize_t i, nd
    cdef tuple shape = <tuple>meta[0]
    a = t._array
    if t.needs_grad() != <bint>meta[2]:
        return False
    dt = a.dtype
    if dt is not meta[1] and dt != meta[1]:
        return False
    if type(a) is not cnp.ndarray:
        return a.shape == shape
    nd = cnp.PyArray_NDIM(<cnp.ndarray>a)
    if nd != len(shape):
        return False
    for i in range(nd):
        if cnp.PyArray_DIMS(<cnp.ndarray>a)[i] != <cnp.npy_intp>shape[i]:
            return False
    return True


cpdef tuple outside_meta_of(Tensor t):
    """What a tensor read from outside the function must keep for the
    programs to stay valid: its shape, dtype and whether it requires grad."""
    return (t._array.shape, t._array.dtype, t.needs_grad())


def configure(*, key, function, finish, aliases, graph_backward):
    """Hand this module the Python parts it calls (api.py and _function.py
    call it once at import; they import this module, so it cannot import
    them)."""
    global _key, _Function, _finish, _aliases, _graph_backward
    _key, _Function, _finish = key, function, finish
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


cdef class CallableBase:
    """The base of api.CompiledCallable: its ``__call__`` in C, so that a
    compiled call enters no Python frame of its own unless run_cached
    hands it back (then ``_call(args, kwargs)``, api.py's, decides)."""

    def __call__(self, *args, **kwargs):
        if not kwargs:
            out = run_cached(self, args)
            if out is not MISS:
                return out
        return self._call(args, kwargs)


def run_cached(cc, tuple args):
    """``cc(*args)`` (a CompiledCallable) when its key is compiled and
    nothing asks for the Python path; MISS otherwise."""
    cdef list tensors = []
    cdef EntryBase e
    if not _paused():
        return MISS                   # a trace runs: api inlines the call
    try:
        key = (args_key(args, tensors), (), rg_grad_enabled(), _inference_mode())
        entry = (<dict?>cc._cache).get(key)
    except TypeError:
        return MISS                   # (api warns about the unhashable argument)
    if not isinstance(entry, EntryBase) or _any_tangent(tensors):
        return MISS                   # (None, or an eager key: api decides)
    e = <EntryBase>entry
    if e.watched and not e.outside_ok():
        return MISS
    try:
        return run(e, tensors)
    except Exception:
        # as api's path: the function itself raises its eager error (or
        # gives its result); see CompiledCallable.__call__
        return cc._fn(*args)


cpdef object run(EntryBase entry, list tensors):
    """Run ``entry``'s programs on ``tensors`` (the call's tensor arguments):
    one ``CompiledFunctionBackward`` node when an output requires grad, the
    forward program alone otherwise; returns the function's result.

    The node is core's array-function node (abi.pxd), whose backward gets
    and returns arrays: no ctx object, SavedVariables or Tensors around the
    gradients. Two things it cannot serve take the custom-Function path
    (CompiledFunction), which autograd's observers see into: a profile
    that records (its forward is the event "CompiledFunction") and
    saved-tensor hooks (they pack the tensors the Function saves)."""
    progs = entry.progs
    if progs[1] is None or not rg_grad_enabled():
        fwd = progs[0]
        arrays = [(<Tensor?>t)._array for t in tensors] + \
                 [(<Tensor?>t)._array for t in entry.lifted]
        res = fwd.run(*arrays)
        outs = [_tracer.wrap(a if a.base is None else a.copy(), entry.device)
                for a in res[:entry.n_out]]
    elif not rg_op_events_active() and not rg_saved_tensors_hooks_active():
        outs = _array_node(entry, progs, tensors)
    else:
        # (the list: where forward leaves what setup_context keeps)
        outs = _Function.apply(entry, [], *tensors, *entry.lifted)
        if entry.n_out == 1:
            outs = [outs]
    if entry.mutations or entry.struct != "single":
        return _finish(entry, tensors, outs)
    return outs[0]


cdef list _array_node(EntryBase entry, tuple progs, list tensors):
    # The forward program, its results recorded as one array-function node,
    # which keeps the values the backward program reads. Its state: the
    # entry, the backward program in use now (the pair's saved values
    # match) and the random values drawn (a create_graph backward recomputes
    # the forward with them).
    cdef Py_ssize_t i, n = entry.n_out
    cdef list arrays = []
    for x in tensors:
        arrays.append((<Tensor?>x)._array)
    for x in entry.lifted:
        arrays.append((<Tensor?>x)._array)
    fwd = progs[0]
    res = fwd.run(*arrays)
    cdef list outs = [None] * n
    for i in range(n):
        a = res[i]
        # (the node's results are tensors of their own, with a version
        # counter of their own: never an input's memory)
        outs[i] = a.copy() if _may_alias(a, arrays, _aliases) else a
    random = None
    if entry.random_slots:
        random = [res[fwd.ret_index[s]] if s in fwd.ret_index else None
                  for s in entry.random_slots]
    dev = entry.device
    return rg_array_function(
        "CompiledFunctionBackward", tuple(tensors) + tuple(entry.lifted), outs,
        rg_cpu_device() if dev is None else <Device?>dev,
        None if entry.all_diff else tuple(entry.out_diff),
        tuple(entry.saved_out_index) if entry.saved_out_index else None,
        res[n:], _array_backward, (entry, progs[1], random))


def _array_backward(tuple state, tuple saved, list grads, bint create_graph, tuple inputs):
    """The array-function node's backward: the backward program on the
    gradient arrays and the values it reads, ``saved`` (a create_graph
    backward runs the tensor programs)."""
    cdef EntryBase entry = <EntryBase>state[0]
    if create_graph and _any_needs_grad(inputs):
        return _graph_backward(entry, state[2], inputs, grads)
    return _grads_per_input(entry, state[1], saved, grads, inputs)


cdef bint _any_needs_grad(tuple tensors) except -1:
    # a create_graph backward runs the tensor programs only when the
    # gradients can have a graph (an input requires grad)
    for x in tensors:
        if (<Tensor?>x).needs_grad():
            return True
    return False


cdef list _grads_per_input(EntryBase entry, object bwd, object saved_arrays, list gouts,
                           tuple inputs):
    # one gradient array (or None) per input
    res = _run_backward(entry, bwd, saved_arrays, gouts, inputs)
    cdef Py_ssize_t k
    cdef list out = [None] * len(inputs)
    cdef tuple gi = entry.grad_inputs
    for k in range(len(gi)):
        out[<Py_ssize_t>gi[k]] = res[k]
    return out


cdef tuple _run_backward(EntryBase entry, object bwd, object saved_arrays, object gouts,
                         tuple inputs):
    # the backward program on the gradient arrays (an output that got no
    # gradient: zeros, as materialized grads); its results are the
    # gradients of the inputs entry.grad_inputs names, in that order
    cdef list garr = []
    out_xp, out_meta = entry.out_xp, entry.out_meta
    for i in entry.diff_out_index:
        g = gouts[i]
        if g is None:
            garr.append(out_xp[i].zeros(*out_meta[i]))
        else:
            garr.append((<Tensor>g)._array if isinstance(g, Tensor) else g)
    cdef list arrays = [(<Tensor?>x)._array for x in inputs]
    return bwd.run(*garr, *arrays, *saved_arrays)


def node_forward(EntryBase entry, list handoff, *tensors):
    """CompiledFunction.forward (the custom-Function path of run()): the
    forward program on the inputs' arrays. What the node keeps (the
    backward program of the pair in use, the values it reads, the random
    values drawn) goes into ``handoff`` for node_setup_context."""
    cdef list arrays = [(<Tensor?>t)._array for t in tensors]
    progs = entry.progs           # the pair: their saved values match
    res = progs[0].run(*arrays)
    cdef Py_ssize_t n = entry.n_out
    outs = _wrap_results(res, n, arrays, entry.device, _aliases)
    random = None
    if entry.random_slots:
        fwd = progs[0]
        random = [res[fwd.ret_index[s]] if s in fwd.ret_index else None
                  for s in entry.random_slots]
    handoff[:] = [progs[1], res[n:], random]
    return outs if n != 1 else outs[0]


def node_setup_context(ctx, tuple inputs, output):
    """CompiledFunction.setup_context: ctx keeps what the backward program
    reads, marks the outputs that get no gradient, and saves the inputs,
    for their version check (a gradient that needs an input modified in
    place since raises, as eager would), and the results the backward
    reads (one modified in place since raises too, where the backward
    would silently read its new value)."""
    cdef EntryBase entry = <EntryBase?>inputs[0]
    bwd, saved_arrays, random = inputs[1]
    tensors = inputs[2:]
    # (one attribute: the entry, the backward program, the values it reads)
    ctx.state = (entry, bwd, saved_arrays)
    ctx.random = random
    outs = output if entry.n_out != 1 else (output,)
    if not entry.all_diff:
        ctx.mark_non_differentiable(*[o for o, d in zip(outs, entry.out_diff) if not d])
    saved_out = entry.saved_out_index
    if saved_out:
        ctx.save_for_backward(*tensors, *[outs[i] for i in saved_out])
    else:
        ctx.save_for_backward(*tensors)


def node_backward(ctx, *gouts):
    """CompiledFunction.backward: the backward program on the gradients'
    arrays (a create_graph backward runs the tensor programs instead)."""
    cdef Py_ssize_t n_saved
    cdef EntryBase entry
    entry, bwd, saved_arrays = ctx.state
    tensors = ctx.saved_tensors
    n_saved = len(entry.saved_out_index)
    if n_saved:
        tensors = tensors[:len(tensors) - n_saved]
    if rg_grad_enabled() and _any_needs_grad(tensors):
        return (None, None, *_graph_backward(entry, ctx.random, tensors, gouts))
    # (the Function's first two arguments are the entry and the hand-off
    # list: no gradient; each gradient on its input's device: a function may
    # move values)
    return (None, *_wrap_grads(_run_backward(entry, bwd, saved_arrays, gouts, tensors),
                               entry.grad_inputs, tensors))
