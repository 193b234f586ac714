# cython: language_level=3
"""The recorder: turns the tracing slot's events (abi.pxd, ABI 1.5 to 1.8) into a
straight-line list of steps over numbered value slots.

A value is known by the identity of its array: ops hand the tracer
Tensors, and a saved tensor unpacked in a backward formula is a new Tensor
around the same array. Every array the trace sees is kept alive until the
trace ends, so no id is reused meanwhile.

Compiled (Cython): a first call records every op of the function, of its
create_graph backward and of the check's three reruns (api._check), about
2,400 events for the 300-op chain; in Python the recorder took about 2.8 µs
an event, most of a first call's tracing time.
"""

cimport numpy as cnp
from cpython.object cimport PyObject

from retrograd.core.abi cimport import_core, Tensor
from retrograd.core.extending import ONCE_DIFFERENTIABLE

import_core("retrograd-compile")

import os
import sys

import numpy as np

from retrograd.compile import _arrays, _tracer

cnp.import_array()

# abi.pxd's RG_TRACE_* kinds
OP, INPLACE_BEGIN, INPLACE, RANDOM, BREAK, COMPOSITE_BEGIN, COMPOSITE_END, NEW, FACTORY, FUNCTION = range(10)
cdef enum:
    K_OP = 0
    K_INPLACE_BEGIN = 1
    K_INPLACE = 2
    K_RANDOM = 3
    K_BREAK = 4
    K_NEW = 7
    K_FACTORY = 8
    K_FUNCTION = 9

_PKG_DIRS = tuple(os.path.dirname(os.path.dirname(str(m.__file__))) + os.sep
                  for m in (sys.modules["retrograd.core"],))


_BREAKS = {"backward": "backward() (its gradients are not ops: they land in .grad)",
           "grad": "autograd.grad() without create_graph=True (its formulas are not ops)",
           "linalg.det backward": "linalg.det's backward (its formula depends on whether the "
                                  "matrix is singular)"}


cdef class Ref:
    """A tensor argument of a step: value slot ``slot``."""
    cdef public Py_ssize_t slot

    def __init__(self, Py_ssize_t slot):
        self.slot = slot

    def __repr__(self):
        return f"Ref({self.slot})"

    def __reduce__(self):
        return Ref, (self.slot,)


UNSET = object()      # Step.kernel before _program._verified looked it up


cdef class Step:
    """One op of a program: ``outs = fn(*args)`` (Refs replaced by values).

    kind: "op" (an op of the table), "inplace" (self's new value, cast back
    to self's dtype), "random" (``fn()`` draws a fresh tensor), "factory"
    (``fn()`` makes a fresh tensor of a value fixed by the trace: zeros,
    arange, the implicit ones of a scalar's gradient).

    ``kernel``: the NumPy kernel verified for an op step (_program._verified,
    which fills it in: a step belongs to one trace, whose arrays decide),
    ``UNSET`` until then.
    """
    cdef public object kind, name, fn, args, outs, cast, kernel

    def __init__(self, kind, name, fn, args, outs, cast=None):
        self.kind, self.name, self.fn, self.args, self.outs, self.cast = kind, name, fn, args, outs, cast
        self.kernel = UNSET

    def __repr__(self):
        return f"Step({self.kind!r}, {self.name!r}, args={self.args!r}, outs={self.outs!r})"

    def __reduce__(self):
        return Step, (self.kind, self.name, self.fn, self.args, self.outs, self.cast)

    cpdef list refs(self):
        """The slots this step reads."""
        cdef list found = []
        _collect_refs(self.args, found)
        return found


cdef void _collect_refs(object x, list found) except *:
    cdef type t = type(x)
    if t is Ref:
        found.append((<Ref>x).slot)
    elif t is tuple or t is list:
        for y in x:
            _collect_refs(y, found)


class Abort(BaseException):
    """Internal: raised into the traced function at a graph break, to stop it
    there (the call then runs eagerly on the caller's own tensors). A
    BaseException, so that the function's ``except Exception`` lets it by."""


def user_line():
    """The innermost frame outside retrograd's packages, as 'file:line'."""
    f = sys._getframe(1)
    while f is not None:
        fn = f.f_code.co_filename
        if "retrograd" + os.sep not in fn and not fn.startswith(_PKG_DIRS):
            return f"{fn}:{f.f_lineno}"
        f = f.f_back
    return "<unknown>"


def _inlinable(cls):
    # Whether the custom Function class `cls` (the RG_TRACE_FUNCTION event
    # carries it, ABI 1.8) is recorded like any other code, as torch.compile
    # inlines one: its forward's ops into the forward program, and the ops
    # its backward runs in the trace's create_graph backward into the
    # backward program. Not when its backward is once_differentiable (the
    # decorator marks the function it returns, extending.ONCE_DIFFERENTIABLE):
    # that backward's results must raise when differentiated, and the
    # compiled node's would not. Nor a class without a Python backward of
    # its own (core's internal Functions, whose node computes the gradient).
    fns = [getattr(cls, m, None) for m in ("backward", "vjp")]
    if not any(callable(f) for f in fns):
        return False
    return not any(getattr(f, ONCE_DIFFERENTIABLE, False) is True for f in fns)


# Ops that index with their arguments: with a boolean mask tensor among
# them, a result's shape (or an argument's) is the mask's count of True, a
# property of the values that no program of fixed shapes can replay
# (torch.compile breaks the graph there too). A boolean NumPy array the
# guard key holds by value has a fixed count, and is fine.
_MASKABLE = frozenset({"getitem", "_index_backward", "_index_put"})


cdef bint _has_bool_tensor(object x) except -1:
    cdef type t = type(x)
    if isinstance(x, Tensor):
        return (<Tensor>x)._array.dtype == np.bool_
    if t is tuple or t is list:
        for y in x:
            if _has_bool_tensor(y):
                return True
    return False


cdef inline object _base_of(object a):
    # an array's base (None: it owns its memory), at C speed for NumPy's
    cdef PyObject* p
    if type(a) is np.ndarray:
        p = cnp.PyArray_BASE(<cnp.ndarray>a)
        return None if p == NULL else <object>p
    return getattr(a, "base", None)


cdef class Recorder:
    """Receives one thread's tracing events (see _tracer.begin)."""
    cdef public bint fullgraph, abort
    cdef public object raise_error
    cdef public list steps
    cdef public list slot_arrays       # trace-time array of each slot
    cdef public dict by_id             # id(array) -> slot
    cdef public list keep              # everything whose id is used, alive until the trace ends
    cdef public dict random_devices    # slot of a random draw -> its tensor's Device
    cdef public list inputs            # slots of the tensor arguments, in order
    cdef public list lifted            # (slot, tensor): tensors from outside that require grad
    cdef public list consts            # (slot, tensor): tensors from outside, read when called
    cdef public set born               # id(array) of every tensor core made during the trace
    cdef public set input_slots
    cdef public list alias             # slot -> alias group id (views share their base's)
    cdef public int mute               # inside an in-place op: its inner ops are one step
    cdef public list inplace_stack
    cdef public object broken          # (what, where) once the trace broke
    cdef public str phase
    cdef public list const_log         # (what, value) of each constant, in order (api._check)
    cdef public frozenset guarded_arrays   # id() of the ndarray arguments the guard key holds by value
    cdef public object bwd_start
    cdef public list mutated           # (tensor, slot before): tensors from outside changed in place
    cdef public list restore           # (array, copy): their values before the trace, put back after
    cdef public object function        # the custom Function class of the break that follows, or None

    def __init__(self, fullgraph, raise_error, abort=False):
        self.fullgraph = fullgraph
        self.abort = abort            # stop the function at a break in its forward
        self.raise_error = raise_error    # (what, where) -> exception to raise in fullgraph mode
        self.steps = []
        self.slot_arrays = []
        self.by_id = {}
        self.keep = []
        self.random_devices = {}
        self.inputs = []
        self.lifted = []
        self.consts = []
        self.born = set()
        self.input_slots = set()
        self.alias = []
        self.mute = 0
        self.inplace_stack = []
        self.broken = None
        self.phase = "forward"
        self.const_log = []
        self.guarded_arrays = frozenset()
        self.bwd_start = None
        self.mutated = []
        self.restore = []
        self.function = None

    # -- slots ---------------------------------------------------------------
    cpdef Py_ssize_t new_slot(self, object array, object alias_of=None) except -1:
        cdef Py_ssize_t s = len(self.slot_arrays)
        self.slot_arrays.append(array)
        self.alias.append(self.alias[alias_of] if alias_of is not None else s)
        self.by_id[id(array)] = s
        self.keep.append(array)
        return s

    def add_input(self, Tensor t not None):
        s = self.new_slot(t._array)
        self.inputs.append(s)
        self.input_slots.add(s)
        self.keep.append(t)
        return s

    cpdef Py_ssize_t slot_of(self, Tensor t) except -1:
        if t is None:
            raise TypeError("slot_of() takes a Tensor, not None")
        a = t._array
        found = self.by_id.get(id(a))
        if found is not None:
            return <Py_ssize_t>found
        # Not made by a recorded op: a parameter (requires grad: it becomes
        # an input of the compiled node) or a constant, read at each call.
        # One that existed before the trace (a closure's weight) is read
        # right. One core made during the trace (RG_TRACE_NEW: rg.tensor of
        # NumPy data, a mask a formula computed on arrays, a zero gradient)
        # holds a value the ops did not compute, which the program would
        # bake in: it is logged, and a logged value makes the key eager.
        cdef Py_ssize_t s = self.new_slot(a)
        self.keep.append(t)
        self.input_slots.add(s)
        if t.requires_grad and self.phase == "forward":
            self.lifted.append((s, t))
        else:
            self.consts.append((s, t))
        if id(a) in self.born:
            self.const_log.append((f"a tensor of shape {tuple(a.shape)} made inside the function from "
                                   "data the ops did not compute", _arrays.copy(a)))
        return s

    cpdef object template(self, object x):
        if type(x) is tuple:
            return tuple([self._item(y) for y in <tuple>x])
        return self._item(x)

    cdef object _item(self, object x):
        cdef type t = type(x)
        if x is None or t is int or t is float or t is bool or t is str:
            return x
        if isinstance(x, Tensor):
            return Ref(self.slot_of(<Tensor>x))
        if t is tuple or t is list:
            return t([self._item(y) for y in x])
        if t is np.ndarray or _arrays.is_device(x):
            # an array argument is a constant: its value at trace time. One
            # of the function's own arguments (an index array, say) is part
            # of the guard key by value, so baking it in is what the key
            # means; any other may have been computed from the inputs.
            if id(x) not in self.guarded_arrays:
                self.const_log.append((f"an array argument of shape {x.shape}", x.copy()))
            return x.copy()
        if isinstance(x, np.generic):
            # a NumPy scalar (a reduction computed outside the ops, say)
            self.const_log.append((f"a NumPy scalar of dtype {x.dtype}", x))
        return x

    # -- events --------------------------------------------------------------
    def brk(self, what):
        where = user_line()
        if self.fullgraph:
            raise self.raise_error(what, where)
        if self.broken is None:
            self.broken = (what, where)
        _tracer.end()           # the rest of the function runs eagerly, untraced
        if self.abort and self.phase == "forward":
            raise Abort()

    def event(self, int kind, str op, tuple inputs, tuple outputs, attrs):
        cdef Py_ssize_t s
        cdef Tensor o
        if kind == K_FUNCTION:
            self.function = attrs
            return
        if kind == K_NEW:
            a = (<Tensor?>outputs[0])._array
            self.born.add(id(a))
            self.keep.append(a)
            return
        if kind == K_OP:
            if op == "_snapshot":
                # an in-place op's copy of self's old value: the same value
                self.by_id[id((<Tensor?>outputs[0])._array)] = self.slot_of(<Tensor?>inputs[0])
                self.keep.append(outputs[0])
                return
            if self.mute:
                return
            if attrs is None:
                return self.brk(f"op {op!r} (no function to replay it)")
            if op in _MASKABLE and _has_bool_tensor(inputs):
                return self.brk(f"op {op!r} with a boolean mask tensor (the result's shape "
                                "depends on the values)")
            self.record_op("op", op, attrs, inputs, outputs)
        elif kind == K_INPLACE_BEGIN:
            if self.mute == 0:
                self.check_inplace(op, inputs[0])
            self.mute += 1
        elif kind == K_INPLACE:
            self.mute -= 1
            if self.mute == 0:
                self.record_inplace(op, attrs, inputs)
        elif kind == K_RANDOM or kind == K_FACTORY:
            if self.mute:
                return
            o = <Tensor?>outputs[0]
            s = self.new_slot(o._array)
            self.keep.append(o)
            self.random_devices[s] = o._device
            self.steps.append(Step("random" if kind == K_RANDOM else "factory", op, attrs, (), (s,)))
        elif kind == K_BREAK:
            cls, self.function = self.function, None
            if op.startswith("autograd.Function:") and cls is not None and \
                    getattr(cls, "__name__", None) == op[18:] and _inlinable(cls):
                return        # its forward's ops and its backward's are recorded
            self.brk(_BREAKS.get(op) or (op if op.startswith("autograd.Function") else
                                         f"{op}()" if op.startswith("Node.") else f"Tensor.{op}()"))

    cpdef record_op(self, kind, name, fn, tuple inputs, tuple outputs):
        cdef Step step = Step(kind, name, fn, self.template(inputs), ())
        cdef list refs = None
        cdef list outs = []
        cdef Tensor o
        for x in outputs:
            o = <Tensor?>x
            a = o._array
            base = None
            if _base_of(a) is not None:
                # a view: it shares its input's memory (alias group)
                refs = step.refs() if refs is None else refs
                for s_in in refs:
                    if _arrays.may_share_memory(a, self.slot_arrays[s_in]):
                        base = s_in
                        break
            outs.append(self.new_slot(a, base))
            self.keep.append(o)
        step.outs = tuple(outs)
        self.steps.append(step)

    def check_inplace(self, op, Tensor t not None):
        s = self.by_id.get(id(t._array))
        if s is None:
            s = self.slot_of(t)       # from outside, first used by this op
        if s in self.input_slots:
            # A tensor from outside (an argument, a buffer): torch.compile's
            # rule, the program computes its new value and the call writes
            # it back (its version bumped). Not one that requires grad (the
            # node's inputs are not changed under it), a view or one with
            # views here, or in the backward.
            if t.requires_grad or self.phase != "forward" or t.is_view:
                return self.brk(f"in-place {op} on a tensor from outside the compiled function "
                                "(one that requires grad, a view, or in the backward)")
            # (once per tensor: after this op its array maps to a slot of
            # the trace's own, outside input_slots)
            self.mutated.append((t, s))
            if s not in self.inputs:
                # (a buffer: the trace changes it for real; put back after)
                self.restore.append((t._array, _arrays.copy(t._array)))
        # the trace-time value of the old slot stays as it is (verification)
        self.slot_arrays[s] = _arrays.copy(self.slot_arrays[s])
        group = self.alias[s]
        if any(g == group for i, g in enumerate(self.alias) if i != s):
            return self.brk(f"in-place {op} on a view, or on a tensor that has views")

    def record_inplace(self, op, fn, tuple inputs):
        if self.broken is not None:
            return
        cdef Tensor self_t = <Tensor?>inputs[0]
        a = self_t._array
        old = self.by_id[id(a)]
        args = (Ref(old),) + tuple([self.template(x) for x in inputs[1:]])
        # self's new value, computed out of place: a fresh copy of its array
        new_arr = _arrays.copy(a)
        s = self.new_slot(new_arr)
        self.by_id[id(a)] = s
        self.steps.append(Step("inplace", op, fn, args, (s,), cast=a.dtype))
