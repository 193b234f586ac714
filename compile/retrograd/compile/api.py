"""``rg.compile``: trace a function once per guard key and run it as programs.

How a call goes (torch.compile's model, over NumPy):

1. The guard key: for each tensor argument its shape, dtype, device and
   requires_grad; every other argument by value; grad mode and inference
   mode. A call with a tangent (an active dual level) runs eagerly.
2. A key seen before runs its programs: the forward program, and, when an
   output requires grad, one ``CompiledFunctionBackward`` node whose
   backward runs the backward program.
3. A new key runs the function eagerly with core's tracing slot filled
   (its result is this call's), then a ``create_graph`` backward of that run,
   also traced: the ops the derivatives table's formulas ran are the
   backward program. Both programs are then checked against eager on the
   traced inputs and on perturbed ones; a program that disagrees, and any
   graph break, makes the key run eagerly from then on (or, with
   ``fullgraph=True``, raises :class:`~retrograd.compile.exc.Unsupported`).
"""
from __future__ import annotations

import functools
import threading
import time
import types as _types
import warnings
import weakref

import numpy as np

import retrograd.core as _core
from retrograd.core import extending as _extending
from retrograd.compile import _arrays, _call, _tracer
from retrograd.compile._function import (CompiledFunction, Entry, _aliases,
                                         _create_graph_backward)
from retrograd.compile._trace import Abort, Recorder
from retrograd.compile.exc import Unsupported

__all__ = ["compile", "CompiledCallable", "register_module_type"]

BACKENDS = ("auto", "numpy", "numba", "cupy")


class _Eager:
    """A guard key that runs eagerly, and why; ``guards``: the value guards
    (as a compiled entry's) under which it broke. A call that finds them
    changed retraces: ``model.eval()`` may turn a key that broke in training
    (batch norm updating its running statistics) into one that compiles."""
    __slots__ = ("reason", "guards")

    def __init__(self, reason, guards=()):
        self.reason = reason
        self.guards = list(guards)


# every CompiledCallable alive (reset() forgets all their keys)
_ALL: weakref.WeakSet = weakref.WeakSet()


def reset() -> None:
    """Forget the guard keys of every compiled function and module: each
    traces again at its next call (torch's ``torch.compiler.reset()``).

    Examples
    --------
    >>> import retrograd as rg
    >>> f = rg.compile(lambda x: x + 1)
    >>> _ = f(rg.ones(2))
    >>> rg.compile.reset()
    >>> f.cache_info()
    {'compiled': 0, 'eager': 0}
    """
    for compiled in list(_ALL):
        compiled.reset()


def is_compiling() -> bool:
    """Whether ``rg.compile`` is tracing a function on this thread.

    True while a compiled function runs its first call for a guard key (the
    call that records its ops), False otherwise, and always on other
    threads. torch's ``torch.compiler.is_compiling()``. Library code uses it
    to compute with ops what it would otherwise compute on arrays: a value
    computed on arrays is baked into the program (or breaks the graph),
    while ops are replayed with each call's values.

    Returns
    -------
    bool

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.compile.is_compiling()
    False
    >>> @rg.compile
    ... def f(x):
    ...     seen.append(rg.compile.is_compiling())
    ...     return x * 2
    >>> seen = []
    >>> _ = f(rg.ones(2))           # traced (and checked: f runs more than once)
    >>> n = len(seen)
    >>> _ = f(rg.ones(2))           # the program runs: f does not
    >>> all(seen), len(seen) == n
    (True, True)
    """
    return not _tracer.paused()


def compile(fn=None, *, backend="auto", fullgraph=False, cache_size=8):
    """Compile ``fn``: trace it once per guard key, then run its forward and
    backward as straight-line programs (torch's ``torch.compile``).

    The outputs of a compiled call have one node in the autograd graph,
    ``CompiledFunctionBackward``, through which hooks, ``retain_graph``,
    ``grad``, ``inputs=``, the profiler and ``create_graph=True`` work.

    Tensors the function reads from outside its arguments (a closure's
    weight, a module's parameters) are read at each call: those that
    require grad become inputs of the node and get gradients. Their shape,
    dtype and ``requires_grad`` are guarded, and so is the identity of the
    function's own closure variables and globals that hold them (rebinding
    one retraces); after rebinding a tensor reached otherwise, call
    :meth:`CompiledCallable.reset`. A tensor the function makes from data
    the ops did not compute (``rg.tensor`` of a NumPy array, say) would be
    baked into the program: such a guard key runs eagerly.

    Repeated calls of one op on the same values run once (common
    subexpressions are merged, in the forward and across the forward and
    backward); random draws are never merged.

    Parameters
    ----------
    fn : callable, optional
        A function of tensors (and other arguments) returning a tensor, or
        tuples, lists, named tuples and dicts of tensors (nested, with None,
        bools, numbers and strings among them). Without it, ``compile``
        returns a decorator.
    backend : str, optional
        ``"numpy"``: the programs call NumPy kernels into buffers allocated
        once per guard key, and the ops themselves where NumPy has no
        verified equivalent (CuPy's kernels, for CUDA tensors); runs of
        float64 elementwise ops are replayed by calling NumPy's own inner
        loops one after another, without a ufunc call per op (the same
        values, bit for bit).
        ``"numba"`` (the ``retrograd-compile[numba]`` extra): runs of
        float64 elementwise ops of CPU programs are fused into compiled
        loops (with retrograd's own vectorisable sin, cos, tanh, exp, log,
        expm1 and log1p, within 1 ulp), cached on disk
        (``RG_COMPILE_CACHE``); the rest as
        ``"numpy"``. ``"cupy"``: runs of float32 or float64 elementwise
        ops of CUDA programs are fused into ``cupy.ElementwiseKernel`` objects
        (one launch a run), which CuPy caches on disk; CPU programs run as
        ``"numpy"``. Fused programs are built on a background thread:
        calls run the unfused programs until the fused ones are ready and
        checked (see :meth:`CompiledCallable.wait`); CPU ones are kept only
        where they also time faster than the unfused ones on the first
        call's inputs (``RG_COMPILE_FUSION=always``: whenever they agree). ``"auto"`` (default):
        for CPU tensors, ``"numba"`` for programs with at least 64 fusible
        ops when numba is installed, ``"numpy"`` otherwise; for CUDA
        tensors, ``"cupy"`` (a launch saved pays on any run).
    fullgraph : bool, optional
        Raise :class:`~retrograd.compile.exc.Unsupported` where the
        function cannot be compiled whole (default False: such guard keys
        run eagerly, with one warning).
    cache_size : int, optional
        The most guard keys traced per function (default 8); later keys run
        eagerly, with one warning.

    Returns
    -------
    CompiledCallable
        A callable with ``fn``'s name, docstring and signature.

    Raises
    ------
    ValueError
        For an unknown backend or a negative ``cache_size``.
    ImportError
        For ``backend="numba"`` without numba installed.
    TypeError
        If ``fn`` is not callable.

    Examples
    --------
    >>> import retrograd as rg
    >>> @rg.compile
    ... def f(x, y):
    ...     return (x * y).sin().sum()
    >>> x = rg.ones(3, requires_grad=True)
    >>> f(x, rg.full((3,), 2.0)).backward()
    >>> x.grad
    tensor([-0.8322936, -0.8322936, -0.8322936])
    >>> f(x, rg.full((3,), 2.0)).grad_fn.name()
    'CompiledFunctionBackward'
    """
    if backend not in BACKENDS:
        raise ValueError(f"rg.compile: unknown backend {backend!r}; this release has "
                         f"{', '.join(map(repr, BACKENDS))}")
    if backend == "numba":
        from retrograd.compile import _fusion
        if not _fusion.available():
            raise ImportError("rg.compile(backend='numba') needs numba: pip install "
                              "'retrograd-compile[numba]'")
    if not isinstance(cache_size, int) or cache_size < 0:
        raise ValueError(f"rg.compile: cache_size must be a non-negative int, got {cache_size!r}")
    if fn is None:
        return functools.partial(compile, backend=backend, fullgraph=fullgraph,
                                 cache_size=cache_size)
    if not callable(fn):
        raise TypeError(f"rg.compile expects a callable, got {type(fn).__name__}")
    return CompiledCallable(fn, backend, fullgraph, cache_size)


class CompiledCallable(_call.CallableBase):
    """What :func:`compile` returns: call it as the function it wraps.

    Parameters
    ----------
    fn : callable
        The function.
    backend : str
        See :func:`compile`.
    fullgraph : bool
        See :func:`compile`.
    cache_size : int
        See :func:`compile`.

    Examples
    --------
    >>> import retrograd as rg
    >>> f = rg.compile(lambda x: x.exp() * 2)
    >>> f(rg.zeros(2))
    tensor([2., 2.])
    >>> f.cache_info()
    {'compiled': 1, 'eager': 0}
    """

    def __init__(self, fn, backend, fullgraph, cache_size):
        if hasattr(fn, "__name__"):
            functools.update_wrapper(self, fn)
        else:
            # a callable object (an nn.Module): named by its type; its
            # attributes are not copied (they would go stale: `training`)
            self.__name__ = self.__qualname__ = type(fn).__name__
            self.__doc__ = getattr(type(fn), "__doc__", None)
            self.__wrapped__ = fn
        self._fn = fn
        _ALL.add(self)
        self._backend = backend
        self._fullgraph = fullgraph
        self._cache_size = cache_size
        self._cache = {}
        self._lock = threading.Lock()
        self._warned = set()
        # instance -> the compiled bound method (__get__)
        self._bound = weakref.WeakKeyDictionary()

    def cache_info(self):
        """How many guard keys run compiled and how many eagerly.

        Returns
        -------
        dict
            ``{"compiled": int, "eager": int}``.

        Examples
        --------
        >>> import retrograd as rg
        >>> f = rg.compile(lambda x: x + 1)
        >>> _ = f(rg.ones(2)); _ = f(rg.ones(3))
        >>> f.cache_info()
        {'compiled': 2, 'eager': 0}
        """
        entries = self._entries()
        eager = sum(1 for e in entries if isinstance(e, _Eager))
        return {"compiled": len(entries) - eager, "eager": eager}

    def reset(self):
        """Forget every guard key: the next call of each traces again
        (torch's ``torch._dynamo.reset()``, for one function). Needed after
        rebinding a tensor the function reaches other than through its own
        closure variables or globals (a module attribute, say), which the
        guards do not watch.

        Examples
        --------
        >>> import retrograd as rg
        >>> f = rg.compile(lambda x: x * 2)
        >>> _ = f(rg.ones(2))
        >>> f.reset()
        >>> f.cache_info()
        {'compiled': 0, 'eager': 0}
        """
        with self._lock:
            self._cache.clear()
            self._warned.clear()
        for bound in list(self._bound.values()):
            bound.reset()

    def wait(self, timeout=None):
        """Wait for the fused loops being built in the background.

        With the ``"numba"`` and ``"auto"`` backends, a new guard key's
        first call builds and verifies its numpy programs, and a background
        thread builds its fused loops (about 0.3 s for a process's first
        loop, seconds for a long program not yet in the disk cache). Calls
        run the numpy programs until the fused ones are checked against
        them, then use those. ``wait`` returns once every key traced so
        far is settled (benchmarks call it before timing).

        Parameters
        ----------
        timeout : float, optional
            The most seconds to wait (default: no limit).

        Returns
        -------
        bool
            True when nothing is left to build; False on a timeout.

        Examples
        --------
        >>> import retrograd as rg
        >>> f = rg.compile(lambda x: (x * 2).sin().sum())
        >>> _ = f(rg.ones(4, requires_grad=True))
        >>> f.wait()
        True
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        for entry in self._entries():
            event = getattr(entry, "fusing", None)
            if event is None:
                continue
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not event.wait(left):
                return False
        return True

    def _entries(self):
        # every guard key's entry, this callable's and its compiled bound
        # methods' (__get__)
        entries = list(self._cache.values())
        for bound in list(self._bound.values()):
            entries.extend(bound._cache.values())
        return entries

    def _warn_once(self, what, message):
        if what not in self._warned:
            self._warned.add(what)
            warnings.warn(message, RuntimeWarning, stacklevel=3)

    def __get__(self, instance, owner=None):
        # A compiled method: each instance gets the compiled form of its
        # bound method (torch.compile returns a function, which binds), so
        # that the guards watch that object's attributes as a bound
        # method's (api._value_guards, _source_guards).
        if instance is None:
            return self
        try:
            bound = self._bound.get(instance)
        except TypeError:            # an instance without weak references
            return _types.MethodType(self, instance)
        if bound is None:
            bound = CompiledCallable(_types.MethodType(self._fn, instance), self._backend,
                                     self._fullgraph, self._cache_size)
            self._bound[instance] = bound
        return bound

    def _call(self, args, kwargs):
        # __call__ (CallableBase's, in C) runs a call whose key is compiled
        # and unchanged; this decides every other
        if not _tracer.paused():
            # called while another compiled function traces on this thread:
            # inlined, its ops recorded into that trace (torch.compile
            # inlines nested compiled functions too)
            return self._fn(*args, **kwargs)
        tensors = []
        try:
            key = (_args_key(args, tensors),
                   _key(tuple(sorted(kwargs.items())), tensors) if kwargs else (),
                   _core.is_grad_enabled(), _core.is_inference_mode_enabled())
            entry = self._cache.get(key)         # (raises TypeError for an unhashable key)
        except TypeError:
            self._warn_once("unhashable", f"rg.compile({self.__name__}): an argument is neither a "
                            "tensor nor hashable, so calls run eagerly")
            return self._fn(*args, **kwargs)
        if _tracer.any_tangent(tensors):
            return self._fn(*args, **kwargs)   # forward AD: the guarded eager fallback
        if entry is None:
            if len(self._cache) >= self._cache_size:
                self._warn_once("cache", f"rg.compile({self.__name__}): cache_size="
                                f"{self._cache_size} guard keys reached; new ones run eagerly")
                return self._fn(*args, **kwargs)
            return self._trace(key, args, kwargs, tensors)
        if type(entry) is _Eager:
            if entry.guards and not _tracer.guards_hold(entry.guards):
                with self._lock:
                    self._cache.pop(key, None)
                return self._trace(key, args, kwargs, tensors)
            return self._fn(*args, **kwargs)
        if entry.watched and not entry.outside_ok():
            with self._lock:
                self._cache.pop(key, None)
            return self._trace(key, args, kwargs, tensors)
        try:
            return _run(entry, tensors)
        except Exception:
            # A program that raises (NumPy's IndexError for a class out of
            # range, say) hands the call to fn: eager raises its own error,
            # with torch's class and message, or gives its result. The
            # program wrote nothing the caller sees (it never writes its
            # inputs), but a random draw it made is not taken back.
            return self._fn(*args, **kwargs)

    # -- tracing -------------------------------------------------------------
    def _break(self, key, what, where, fatal=True, guards=()):
        if self._fullgraph and fatal:
            raise Unsupported(what, where)
        with self._lock:
            self._cache[key] = _Eager(f"{what} at {where}", guards)
        self._warn_once(key, f"rg.compile({self.__name__}): graph break: {what} at {where}; "
                        "calls with these argument shapes run eagerly")

    def _trace(self, key, args, kwargs, tensors):
        gen = _core.get_rng().bit_generator
        state0 = gen.state
        # The trace runs on copies of the tensor arguments: its own backward
        # must not reach the caller's tensors (their hooks would run), and a
        # trace abandoned at a graph break must not have changed them.
        copies = []
        for t in tensors:
            c = _tracer.wrap(_arrays.copy(_tracer.array_of(t)), _tracer.device_of(t))
            if t.requires_grad:
                c.requires_grad_(True)
            copies.append(c)
        it = iter(copies)
        targs, tkwargs = _replace(args, it), _replace(kwargs, it)
        rec = Recorder(self._fullgraph, Unsupported, abort=True)
        guards = _value_guards(self._fn) + _nn_state_guards(self._fn)    # before fn runs
        try:
            _, first = _trace_run(self._fn, targs, tkwargs, copies, rec, None, seed=12345)
            entry = _build(self._fn, rec, first, self._backend)
            verified = _check(self._fn, targs, tkwargs, copies, entry, rec, first, state0)
            _guard_values(entry, guards)
        except (_Broken, _NotCompilable) as exc:
            what, where = exc.args[:2] if isinstance(exc, _Broken) else (exc.what, exc.where)
            self._break(key, what, where, guards=_unchanged(guards))
            gen.state = state0           # the eager call draws what it would have drawn
            return self._fn(*args, **kwargs)
        with self._lock:
            self._cache[key] = entry
        if entry.fusing is not None:
            entry.start_fusion(verified)      # (it releases the trace when done)
        else:
            entry.release_trace()
        gen.state = state0               # the program draws what eager would have drawn
        return _run(entry, tensors)


class _Broken(Exception):
    def __init__(self, what, where, out):
        super().__init__(what, where)
        self.out = out


class _NotCompilable(Exception):
    def __init__(self, what, where="the compiled function"):
        super().__init__(what)
        self.what, self.where = what, where


def _key(x, tensors):
    if isinstance(x, _core.Tensor):
        tensors.append(x)
        return ("T", x.shape, x.dtype, str(x.device), x.requires_grad)
    if type(x) in (tuple, list):
        return (type(x).__name__, *[_key(y, tensors) for y in x])
    if isinstance(x, dict):
        return ("dict",) + tuple((k, _key(v, tensors)) for k, v in sorted(x.items()))
    if type(x) is slice:                 # (unhashable before Python 3.12)
        return ("slice", _key(x.start, tensors), _key(x.stop, tensors), _key(x.step, tensors))
    if isinstance(x, np.ndarray):        # by value (the trace keeps a copy)
        return ("ndarray", x.shape, x.dtype.str, x.tobytes())
    return (type(x), x)


def _ndarray_ids(x, found=None):
    """id() of every NumPy array among the arguments ``x``, where _key
    finds them (tuples, lists, dict values): the guard key holds those by
    value."""
    found = [] if found is None else found
    if type(x) is np.ndarray:
        found.append(id(x))
    elif type(x) in (tuple, list):
        for y in x:
            _ndarray_ids(y, found)
    elif isinstance(x, dict):
        for y in x.values():
            _ndarray_ids(y, found)
    return found


def _flat_outputs(out):
    """(the result's tensors in order, its structure): "single", "tuple" or
    "list" for a tensor or a flat tuple or list of tensors (the common
    results, rebuilt without a walk), else a spec for _rebuild: tuples,
    lists, named tuples and dicts, nested, of tensors and of None, bools,
    numbers and strings (torch.compile returns any such structure)."""
    if isinstance(out, _core.Tensor):
        return [out], "single"
    if type(out) in (tuple, list) and out and all(isinstance(o, _core.Tensor) for o in out):
        return list(out), type(out).__name__
    tensors = []
    spec = _spec(out, tensors)
    if not tensors:
        raise _NotCompilable(f"a result of type {type(out).__name__} that holds no tensor "
                             "(compiled functions return tensors, alone or in tuples, lists "
                             "and dicts)")
    return tensors, spec


_CONSTANT_RESULTS = (type(None), bool, int, float, complex, str)


def _spec(x, tensors):
    if isinstance(x, _core.Tensor):
        tensors.append(x)
        return ("T",)
    if type(x) in _CONSTANT_RESULTS:
        return ("C", x)
    if type(x) in (tuple, list):
        return (type(x), tuple(_spec(y, tensors) for y in x))
    if isinstance(x, tuple) and hasattr(type(x), "_fields"):      # a named tuple
        return ("N", type(x), tuple(_spec(y, tensors) for y in x))
    if type(x) is dict:
        return (dict, tuple(x), tuple(_spec(y, tensors) for y in x.values()))
    raise _NotCompilable(f"a result of type {type(x).__name__} (compiled functions return "
                         "tensors, alone or in tuples, lists and dicts, with None, bools, "
                         "numbers and strings)")


def _write_back(entry, tensors, outs):
    """Copy the new values of the tensors the function changed in place
    (the results after its own) into them, bumping their versions as
    eager's in-place ops do; returns the function's own results."""
    n = entry.n_user
    with _core.no_grad():
        for (kind, x), new in zip(entry.mutations, outs[n:]):
            (tensors[x] if kind == "arg" else x).copy_(new)
    return outs[:n]


def _rebuild(spec, it):
    """The result of structure ``spec`` (_spec) around the tensors of
    iterator ``it``: containers and constants made anew at each call (the
    caller may change them)."""
    kind = spec[0]
    if kind == "T":
        return next(it)
    if kind == "C":
        return spec[1]
    if kind == "N":
        return spec[1](*[_rebuild(c, it) for c in spec[2]])
    if kind is dict:
        return dict(zip(spec[1], [_rebuild(c, it) for c in spec[2]]))
    return kind([_rebuild(c, it) for c in spec[1]])


class _Run:
    """What one traced run gave: results, which require grad, the gradient
    outputs it was differentiated with and the gradients."""
    __slots__ = ("outs", "struct", "diff", "arg_tensors", "grad_inputs", "gouts", "grads",
                 "out_slots", "gout_slots", "grad_slots", "n_user", "mutations")


def _trace_run(fn, args, kwargs, tensors, rec, lifted, seed):
    """Run ``fn`` eagerly with ``rec`` recording, then (when a result
    requires grad) a create_graph backward of it with random gradient
    outputs drawn from ``seed``, also recorded. ``lifted``: the parameters
    the first run lifted (a rerun must lift the same). Returns (fn's
    result, _Run); raises _Broken (with the result) on a graph break.

    Buffers ``fn`` changed in place are put back as they were: the call
    that follows changes them (a trace and its reruns would otherwise
    update batch norm's statistics four times)."""
    try:
        return _recorded_run(fn, args, kwargs, tensors, rec, lifted, seed)
    finally:
        for a, before in rec.restore:
            a[...] = before


def _recorded_run(fn, args, kwargs, tensors, rec, lifted, seed):
    for t in tensors:
        rec.add_input(t)
    rec.guarded_arrays = frozenset(_ndarray_ids((args, kwargs)))
    if lifted is not None:
        for t in lifted:
            rec.slot_of(t)
    _tracer.begin(rec)
    try:
        out = fn(*args, **kwargs)
    except Abort:
        out = None            # the recorder stopped fn at a graph break
    finally:
        _tracer.end()
    if rec.broken is not None:
        raise _Broken(*rec.broken, out)
    r = _Run()
    try:
        r.outs, r.struct = _flat_outputs(out)
    except _NotCompilable as exc:
        exc.out = out
        raise
    r.out_slots = []
    for o in r.outs:
        s = rec.by_id.get(id(_tracer.array_of(o)))
        if s is None or s in rec.input_slots or s in r.out_slots:
            not_ops = _NotCompilable("a result that is not computed by the function's tensor ops (an "
                                     "input, a parameter or a constant returned as is, or one tensor "
                                     "returned twice)")
            not_ops.out = out
            raise not_ops
        r.out_slots.append(s)
    # Tensors from outside changed in place (_trace.Recorder.check_inplace):
    # their new values are extra results of the programs, which the call
    # writes back (_write_back); here a copy of each (a buffer is put back)
    r.n_user = len(r.outs)
    r.mutations = []
    for t, before in rec.mutated:
        s = rec.by_id.get(id(_tracer.array_of(t)))
        if s is None or s in r.out_slots or s in rec.input_slots:
            changed = _NotCompilable("a tensor from outside the function changed in place and "
                                     "also returned")
            changed.out = out
            raise changed
        r.out_slots.append(s)
        r.outs.append(_tracer.wrap(_arrays.copy(_tracer.array_of(t)), _tracer.device_of(t)))
        r.mutations.append(("arg", rec.inputs.index(before)) if before in rec.inputs else
                           ("const", t))
    r.arg_tensors = list(tensors) + [t for _, t in rec.lifted]
    r.diff = [o.requires_grad for o in r.outs]
    r.grad_inputs = [i for i, t in enumerate(r.arg_tensors) if t.requires_grad]
    r.gouts = r.grads = r.grad_slots = None
    r.gout_slots = []
    if _core.is_grad_enabled() and any(r.diff) and r.grad_inputs:
        rec.phase = "backward"
        rec.bwd_start = len(rec.steps)
        rng = np.random.default_rng(seed)
        r.gouts = []
        for o, d in zip(r.outs, r.diff):
            if d:
                a = _tracer.array_of(o)
                g = _tracer.wrap(_arrays.like(np.asarray(rng.standard_normal(a.shape)).astype(a.dtype), a),
                                 _tracer.device_of(o))
                r.gouts.append(g)
                r.gout_slots.append(rec.new_slot(_tracer.array_of(g)))
                rec.keep.append(g)
        _tracer.begin(rec)
        try:
            with _backward_on_this_thread():
                r.grads = _core.grad([o for o, d in zip(r.outs, r.diff) if d],
                                           [r.arg_tensors[i] for i in r.grad_inputs], r.gouts,
                                           create_graph=True, allow_unused=True)
        except Unsupported:
            raise                    # (fullgraph: the break, raised as it is)
        except Exception as exc:
            # Eager's backward would fail too (a saved value modified in
            # place), but only when the caller runs it: the forward must
            # not raise for it. The key runs eagerly.
            failed = _NotCompilable(f"a backward that fails ({type(exc).__name__}: {exc})")
            failed.out = out
            raise failed from None
        finally:
            _tracer.end()
        if rec.broken is not None:
            broke = _NotCompilable("backward: " + rec.broken[0], rec.broken[1])
            broke.out = out
            raise broke
        # A gradient made without ops (the zeros of a piecewise-constant op)
        # is a constant of the trace; _check refuses it unless a rerun on
        # other values gives the same.
        r.grad_slots = [None if g is None else rec.slot_of(g) for g in r.grads]
    if rec.const_log:
        # A value the ops did not compute (an array or NumPy scalar passed to
        # an op, a tensor made outside the ops: a mask or indices that a
        # backward formula or a composite computed in NumPy, a zero gradient,
        # a closure's tensor) would be baked into the program as it was at
        # trace time. Nothing proves it does not depend on the inputs (a
        # mask can be all-False on the traced values and on every rerun),
        # and a baked one gives silently wrong results on other inputs: such
        # a key runs eagerly.
        baked = _NotCompilable(f"a value computed outside the ops ({rec.const_log[0][0]}): it would be "
                               "baked into the program, and it may depend on the inputs")
        baked.out = out
        raise baked
    return out, r


_threads_lock = threading.Lock()
_threads_held = [0, None]       # traces holding the engine on their thread; the setting before


class _backward_on_this_thread:
    """The traced backward runs on the tracing thread: the trace records this
    thread's ops only, and the engine would run a CUDA graph's nodes on its
    device's worker thread. The engine's setting is process-wide: the first
    of concurrent traces turns its worker threads off and the last restores
    the setting (other threads' backwards meanwhile run on their own
    threads, with the same results)."""

    def __enter__(self):
        # (the engine is imported here, as core imports it on the first
        # backward: importing compile alone leaves it unloaded)
        import retrograd.engine as _engine
        with _threads_lock:
            if _threads_held[0] == 0:
                _threads_held[1] = _engine.is_multithreading_enabled()
                _engine.set_multithreading_enabled(False)
            _threads_held[0] += 1

    def __exit__(self, *exc):
        import retrograd.engine as _engine
        with _threads_lock:
            _threads_held[0] -= 1
            if _threads_held[0] == 0:
                _engine.set_multithreading_enabled(_threads_held[1])


def _build(fn, rec, r, backend):
    device = _tracer.device_of(r.outs[0])
    if any(str(_tracer.device_of(o)) != str(device) for o in r.outs):
        # (the programs wrap their results on one device)
        raise _NotCompilable("results on more than one device")
    entry = Entry(rec, r.out_slots, r.diff, r.grad_inputs, r.gout_slots, r.grad_slots, device,
                  backend)
    entry.struct = r.struct
    entry.n_user = r.n_user
    entry.mutations = r.mutations
    outside = entry.lifted + [t for _, t in rec.consts]
    entry.outside_meta = [(t, _call.outside_meta_of(t)) for t in outside]
    entry.source_guards = _source_guards(fn, outside)
    entry.value_guards = []           # (set once the trace is checked: _guard_values)
    # (a call checks them only where there are any)
    entry.watched = bool(entry.outside_meta or entry.source_guards)
    return entry


def _guard_values(entry, guards):
    """Give ``entry`` the value guards (read before the trace) whose values
    the function's runs left as they were: one the function changes itself
    (a counter it increments, a list it appends to) would retrace every
    call, and its value is a side effect, not a constant of the program."""
    entry.value_guards = _unchanged(guards)
    entry.watched = bool(entry.outside_meta or entry.source_guards or entry.value_guards)


def _unchanged(guards):
    """The guards whose values the function's runs left as they were."""
    return [g for g in guards if _tracer.guards_hold([g])]


# Python values a guard compares by value: what a trace bakes into the
# program where the function reads them (a scale factor, a loop count, a
# flag), and cheap to compare on each call
_SCALARS = _tracer.SCALARS
_MAX_GUARDED_LEN = 64

# A guard is (holder, key, value, by_value): the value the trace read at
# holder[key] (a dict: globals, a module's or an object's __dict__, an
# nn.Module's parameters, buffers or children) or in a closure cell
# (key None), compared by value (a number, a flag, a short list) or by
# identity (a tensor, a module); _tracer.guards_hold checks a list of them.


def _guardable(value):
    if isinstance(value, _SCALARS):
        return True
    if type(value) in (tuple, list) and len(value) <= _MAX_GUARDED_LEN:
        return all(isinstance(v, _SCALARS) for v in value)
    return False


def _by_value(holder, key, value):
    # (a list may change in place: compared with a copy of its items)
    return (holder, key, list(value) if type(value) is list else value, True)


def _value_guards(fn, depth=0, seen=None):
    """Guards on each Python number, string, flag or short sequence of them
    that ``fn`` reads as a closure variable, a global, an attribute of a
    module it reads as a global, or an attribute of the object of a bound
    method: the trace baked those values into the program, so a call that
    finds another value retraces (torch's guards on globals and closures).
    A list is compared by its items (it may change in place). The helper
    functions ``fn`` calls from its own module (globals or closure
    variables) are searched the same way, two levels deep; values reached
    otherwise (a library's globals, attributes of other objects) are not
    guarded."""
    seen = set() if seen is None else seen
    guards = []
    owner = getattr(fn, "__self__", None)
    if owner is not None and not isinstance(owner, (_types.ModuleType, _extending.module_types()[0])) and \
            type(getattr(owner, "__dict__", None)) is dict:
        # (an nn.Module's state: _nn_state_guards)
        d = owner.__dict__
        guards.extend(_by_value(d, k, v) for k, v in d.items() if _guardable(v))
    fn = getattr(fn, "__func__", fn)
    code = getattr(fn, "__code__", None)
    if code is None or id(code) in seen:
        return guards
    seen.add(id(code))
    names = set(code.co_names)
    for const in code.co_consts:
        # (globals read by a lambda or comprehension inside fn)
        if hasattr(const, "co_names"):
            names.update(const.co_names)
    g = getattr(fn, "__globals__", None) or {}
    helpers = []
    for holder, key, value in _outside_reads(fn):
        if _guardable(value):
            guards.append(_by_value(holder, key, value))
        elif isinstance(value, _types.ModuleType):
            guards.extend(_module_guards(value, names))
        elif isinstance(value, _types.FunctionType):
            helpers.append(value)
    if depth < 2:
        for h in helpers:
            if h.__globals__ is g:       # a helper of the same module, not a library's
                guards.extend(_value_guards(h, depth + 1, seen))
    return guards


def _module_guards(module, names):
    # the module's attributes among the names fn's code reads (`W.depth`:
    # the name `depth`); one that is not an attribute is no guard
    d = vars(module)
    return [_by_value(d, name, d[name]) for name in sorted(names) if name in d and _guardable(d[name])]


# The module types a compiled function's state is guarded through, and the
# names of the dicts in which their instances keep parameters, buffers and
# children: registered in core (extending.register_module_type) by the
# umbrella at its import, so that compile needs nothing of the umbrella.
register_module_type = _extending.register_module_type


def _nn_state_guards(fn):
    """Guards on the state of the nn.Modules ``fn`` runs: ``fn`` itself,
    the object of a bound method, and modules held in its closure or read
    as its globals, with every submodule. Each module's plain Python
    attributes by value (``training``, so that ``eval()`` retraces; a
    dropout's ``p``, a layer's ``eps``), and its parameters, buffers and
    children by identity (a replaced weight retraces): the program bakes in
    what the trace read."""
    _MODULE_TYPES, _STATE_DICTS = _extending.module_types()
    if not _MODULE_TYPES:
        return []
    roots = [fn, getattr(fn, "__self__", None)] + [value for _, _, value in _outside_reads(fn)]
    guards, seen = [], set()
    for root in roots:
        if not isinstance(root, _MODULE_TYPES):
            continue
        for m in root.modules():
            if id(m) in seen:
                continue
            seen.add(id(m))
            d = vars(m)
            for name, value in d.items():
                if _guardable(value):
                    guards.append(_by_value(d, name, value))
                elif type(value) is dict and name in _STATE_DICTS:
                    # (where Module keeps them: a replaced one is a new entry)
                    guards.extend((value, k, v, False) for k, v in value.items())
    return guards


def _source_guards(fn, tensors):
    """(holder, name, tensor) for each of ``tensors`` that ``fn`` reads as
    one of its closure variables (holder a cell, name None), globals
    (holder its globals dict) or, for a bound method, attributes of its
    object (holder that object's __dict__): rebinding one to another tensor
    must retrace, as torch.compile's identity guards do. Tensors reached
    otherwise (other objects' attributes, a helper's globals) are read by
    the object the trace saw."""
    ids = {id(t) for t in tensors}
    reads = list(_outside_reads(fn))
    owner = getattr(fn, "__self__", None)
    if owner is not None and not isinstance(owner, _types.ModuleType) and \
            type(getattr(owner, "__dict__", None)) is dict:
        # a bound method's object: its attributes (`self.w`), as torch
        # guards a method's self
        reads.extend((owner.__dict__, k, v) for k, v in owner.__dict__.items())
    return [(holder, key, value) for holder, key, value in reads if id(value) in ids]


def _outside_reads(fn):
    """(holder, key, value) for each closure variable of ``fn`` (holder its
    cell, key None) and each global its code names (holder its globals
    dict): what the guards of a trace look at."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return
    for cell in fn.__closure__ or ():
        try:
            value = cell.cell_contents
        except ValueError:          # an empty cell
            continue
        yield cell, None, value
    g = getattr(fn, "__globals__", None) or {}
    for name in code.co_names:
        if name in g:
            yield g, name, g[name]


def _close(a, b):
    if a is None or b is None:
        return a is None and b is None
    a, b = _arrays.host(a), _arrays.host(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind not in "fc":
        return bool(np.array_equal(a, b))
    tol = 1e-9 if np.finfo(a.dtype).bits > 32 else 2e-5
    scale = float(np.max(np.abs(b[np.isfinite(b)]), initial=1.0))
    return bool(np.allclose(a, b, rtol=tol, atol=tol * scale, equal_nan=True))


def _same_value(a, b):
    if any(isinstance(x, np.ndarray) or _arrays.is_device(x) for x in (a, b)):
        a, b = _arrays.host(a), _arrays.host(b)
        return a.shape == b.shape and a.dtype == b.dtype and bool(
            np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    return True


def _perturbed(t, rng, mode):
    # Another value of the same guard key. "scaled": floats scaled by
    # (1 + 5%·u) (signs and domains kept; a value computed from them
    # changes); "permuted": the elements also permuted (integers and bools
    # too: a mask or index made from them moves); "sign-flipped": also the
    # sign of about half the floats flipped (a mask made from signs changes
    # even when all traced values had one sign).
    orig = _tracer.array_of(t)
    a = _arrays.host(orig)
    if mode != "scaled" and a.size > 1:
        a = rng.permutation(a.reshape(-1)).reshape(a.shape)
    if a.dtype.kind in "fc" and a.size:
        scale = 1 + 0.05 * rng.uniform(-1, 1, a.shape)
        if mode == "sign-flipped":
            scale = scale * np.where(rng.uniform(size=a.shape) < 0.5, -1.0, 1.0)
        a = (a * scale).astype(a.dtype)
    return _arrays.like(np.array(a, copy=True), orig)


def _check(fn, args, kwargs, tensors, entry, rec, first, state0):
    """Refuse programs that would not compute what eager does.

    1. The programs run on the traced inputs must give the trace's results
       and gradients.
    2. ``fn`` is traced again on other values of the same guard key (and
       differentiated with other gradient outputs), three times: values
       scaled (domains kept: this rerun must succeed), also permuted, and
       also with signs flipped (these two are skipped where eager fails on
       them: a Cholesky of a matrix no longer positive definite). Each
       rerun must run the same ops with
       the same constants (a value computed outside the ops, a mask or
       indices made on arrays, would differ), and the programs must give
       its results and gradients too.

    Random draws: check 1 replays the trace's generator state; the reruns
    and their checks start from another state, so a random value baked into
    the trace as a constant is caught too. The generator is left as the
    first (eager) run left it."""
    gen = _core.get_rng().bit_generator
    state_after = gen.state
    try:
        other = type(gen)(98765).state
    except TypeError:
        other = state0
    rng = np.random.default_rng(54321)
    lifted = entry.lifted
    saved = [_arrays.copy(_tracer.array_of(p)) for p in lifted]
    # (the parameters as arguments: their original and swapped values)
    checks = [(state0, [rec.slot_arrays[s] for s in rec.inputs] + saved, first, "traced")]
    try:
        for n_mode, mode in enumerate(("scaled", "permuted", "sign-flipped")):
            new = []
            for t in tensors:
                nt = _tracer.wrap(_perturbed(t, rng, mode), _tracer.device_of(t))
                if t.requires_grad:
                    nt.requires_grad_(True)
                new.append(nt)
            lifted_vals = [_perturbed(p, rng, mode) for p in lifted]
            rec2 = Recorder(False, Unsupported)
            # lifted parameters are read from their tensors: swapped by value meanwhile
            for p, a in zip(lifted, lifted_vals):
                _tracer.array_of(p)[...] = a
            it = iter(new)
            gen.state = other
            try:
                _, second = _trace_run(fn, _replace(args, it), _replace(kwargs, it), new, rec2,
                                       lifted, seed=777 + n_mode)
            except (_Broken, _NotCompilable) as exc:
                what = exc.what if isinstance(exc, _NotCompilable) else exc.args[0]
                raise _NotCompilable(f"a trace that depends on the values ({what} on other values)")
            except Exception as exc:
                if mode != "scaled":
                    continue
                raise _NotCompilable(f"a function that fails on other values of the same shapes "
                                     f"({exc!r})")
            finally:
                for p, a in zip(lifted, saved):
                    _tracer.array_of(p)[...] = a
            _compare_traces(rec, rec2)
            if second.struct != first.struct:
                raise _NotCompilable("a result whose structure or constants change with the inputs")
            if [(k, x if k == "arg" else id(x)) for k, x in second.mutations] != \
                    [(k, x if k == "arg" else id(x)) for k, x in first.mutations]:
                raise _NotCompilable("in-place changes of outside tensors that depend on the values")
            checks.append((other, [rec2.slot_arrays[s] for s in rec2.inputs] + lifted_vals, second,
                           mode))
        verified = []
        for state, arrays, run, label in checks:
            gen.state = state
            try:
                with np.errstate(all="ignore"):
                    res = entry.fwd(*arrays)
            except Exception as exc:
                raise _NotCompilable(f"a forward program that fails where eager does not "
                                     f"({label} inputs: {exc!r})")
            want = [_tracer.array_of(o) for o in run.outs]
            if not all(_close(a, b) for a, b in zip(res[:entry.n_out], want)):
                raise _NotCompilable(f"a forward program that disagrees with eager ({label} inputs)")
            if run.grads is not None:
                garr = [_tracer.array_of(g) for g in run.gouts]
                try:
                    with np.errstate(all="ignore"):
                        got = entry.bwd(*garr, *arrays, *res[entry.n_out:])
                except Exception as exc:
                    raise _NotCompilable(f"a backward program that fails where eager does not "
                                         f"({label} inputs: {exc!r})")
                want = [None if g is None else _tracer.array_of(g) for g in run.grads]
                if not all(_close(a, b) for a, b in zip(got, want)):
                    raise _NotCompilable(f"a backward program that disagrees with eager ({label} inputs)")
            verified.append((arrays, garr if run.grads is not None else None))
    finally:
        for p, a in zip(lifted, saved):
            _tracer.array_of(p)[...] = a
        gen.state = state_after
    return verified


def _compare_traces(a, b):
    if [(st.kind, st.name) for st in a.steps] != [(st.kind, st.name) for st in b.steps] or \
            a.bwd_start != b.bwd_start:
        raise _NotCompilable("a trace that depends on the values (other values run other ops)")
    if len(a.const_log) != len(b.const_log):
        raise _NotCompilable("a trace that depends on the values (other constants)")
    for (what, x), (_, y) in zip(a.const_log, b.const_log):
        if not _same_value(x, y):
            raise _NotCompilable(f"a value computed outside the ops ({what}): it would be baked "
                                 "into the program, but it changes with the inputs")


def _replace(x, it):
    if isinstance(x, _core.Tensor):
        return next(it)
    if type(x) in (tuple, list):
        return type(x)(_replace(y, it) for y in x)
    if isinstance(x, dict):
        return {k: _replace(v, it) for k, v in sorted(x.items())}
    return x


def _finish(entry, tensors, outs):
    """The function's result from the node's outputs ``outs``: the values of
    tensors it changed in place written back, its results rebuilt in their
    structure (_call.run's less common cases)."""
    if entry.mutations:
        outs = _write_back(entry, tensors, outs)
    struct = entry.struct
    if struct == "single":
        return outs[0]
    if struct == "tuple":
        return tuple(outs)
    if struct == "list":
        return list(outs)
    return _rebuild(struct, iter(outs))


_args_key, _run = _call.args_key, _call.run
_call.configure(key=_key, function=CompiledFunction, finish=_finish,
                aliases=_aliases, graph_backward=_create_graph_backward)
