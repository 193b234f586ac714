"""The recorder: turns the tracing slot's events (abi.pxd, ABI 1.5 and 1.6) into a
straight-line list of steps over numbered value slots.

A value is known by the identity of its array: ops hand the tracer
Tensors, and a saved tensor unpacked in a backward formula is a new Tensor
around the same array. Every array the trace sees is kept alive until the
trace ends, so no id is reused meanwhile.
"""
from __future__ import annotations

import os
import sys

import numpy as np

from retrograd.core import Tensor
from retrograd.compile import _arrays, _tracer

# abi.pxd's RG_TRACE_* kinds
OP, INPLACE_BEGIN, INPLACE, RANDOM, BREAK, COMPOSITE_BEGIN, COMPOSITE_END, NEW, FACTORY = range(9)

_PKG_DIRS = tuple(os.path.dirname(os.path.dirname(str(m.__file__))) + os.sep
                  for m in (sys.modules["retrograd.core"],))


_BREAKS = {"backward": "backward() (its gradients are not ops: they land in .grad)",
           "grad": "autograd.grad() without create_graph=True (its formulas are not ops)"}


class Ref:
    """A tensor argument of a step: value slot ``slot``."""
    __slots__ = ("slot",)

    def __init__(self, slot):
        self.slot = slot


class Step:
    """One op of a program: ``outs = fn(*args)`` (Refs replaced by values).

    kind: "op" (an op of the table), "inplace" (self's new value, cast back
    to self's dtype), "random" (``fn()`` draws a fresh tensor), "factory"
    (``fn()`` makes a fresh tensor of a value fixed by the trace: zeros,
    arange, the implicit ones of a scalar's gradient).
    """
    __slots__ = ("kind", "name", "fn", "args", "outs", "cast")

    def __init__(self, kind, name, fn, args, outs, cast=None):
        self.kind, self.name, self.fn, self.args, self.outs, self.cast = kind, name, fn, args, outs, cast

    def refs(self):
        """The slots this step reads."""
        found = []
        _collect_refs(self.args, found)
        return found


def _collect_refs(x, found):
    if type(x) is Ref:
        found.append(x.slot)
    elif type(x) in (tuple, list):
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


class Recorder:
    """Receives one thread's tracing events (see _tracer.begin)."""

    def __init__(self, fullgraph, raise_error, abort=False):
        self.fullgraph = fullgraph
        self.abort = abort            # stop the function at a break in its forward
        self.raise_error = raise_error    # (what, where) -> exception to raise in fullgraph mode
        self.steps = []
        self.slot_arrays = []         # trace-time array of each slot
        self.by_id = {}               # id(array) -> slot
        self.keep = []                # everything whose id is used, alive until the trace ends
        self.random_devices = {}      # slot of a random draw -> its tensor's Device
        self.inputs = []              # slots of the tensor arguments, in order
        self.lifted = []              # (slot, tensor): tensors from outside that require grad
        self.consts = []              # (slot, tensor): tensors from outside, read when called
        self.born = set()             # id(array) of every tensor core made during the trace
        self.input_slots = set()
        self.alias = []               # slot -> alias group id (views share their base's)
        self.mute = 0                 # inside an in-place op: its inner ops are one step
        self.inplace_stack = []
        self.broken = None            # (what, where) once the trace broke
        self.phase = "forward"
        self.const_log = []           # (what, value) of each constant, in order (api._check)
        self.guarded_arrays = frozenset()   # id() of the ndarray arguments the guard key holds by value
        self.bwd_start = None

    # -- slots ---------------------------------------------------------------
    def new_slot(self, array, alias_of=None):
        s = len(self.slot_arrays)
        self.slot_arrays.append(array)
        self.alias.append(self.alias[alias_of] if alias_of is not None else s)
        self.by_id[id(array)] = s
        self.keep.append(array)
        return s

    def add_input(self, t):
        s = self.new_slot(_tracer.array_of(t))
        self.inputs.append(s)
        self.input_slots.add(s)
        self.keep.append(t)
        return s

    def slot_of(self, t):
        a = _tracer.array_of(t)
        s = self.by_id.get(id(a))
        if s is not None:
            return s
        # Not made by a recorded op: a parameter (requires grad: it becomes
        # an input of the compiled node) or a constant, read at each call.
        # One that existed before the trace (a closure's weight) is read
        # right. One core made during the trace (RG_TRACE_NEW: rg.tensor of
        # NumPy data, a mask a formula computed on arrays, a zero gradient)
        # holds a value the ops did not compute, which the program would
        # bake in: it is logged, and a logged value makes the key eager.
        s = self.new_slot(a)
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

    def template(self, x):
        if type(x) is tuple:
            return tuple([self._item(y) for y in x])
        return self._item(x)

    def _item(self, x):
        if x is None or type(x) in (int, float, bool, str):
            return x
        if isinstance(x, Tensor):
            return Ref(self.slot_of(x))
        if type(x) in (tuple, list):
            return type(x)([self._item(y) for y in x])
        if type(x) is np.ndarray or _arrays.is_device(x):
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

    def event(self, kind, op, inputs, outputs, attrs):
        if kind == NEW:
            a = _tracer.array_of(outputs[0])
            self.born.add(id(a))
            self.keep.append(a)
            return
        if kind == OP:
            if op == "_snapshot":
                # an in-place op's copy of self's old value: the same value
                self.by_id[id(_tracer.array_of(outputs[0]))] = self.slot_of(inputs[0])
                self.keep.append(outputs[0])
                return
            if self.mute:
                return
            if attrs is None:
                return self.brk(f"op {op!r} (no function to replay it)")
            self.record_op("op", op, attrs, inputs, outputs)
        elif kind == INPLACE_BEGIN:
            if self.mute == 0:
                self.check_inplace(op, inputs[0])
            self.mute += 1
        elif kind == INPLACE:
            self.mute -= 1
            if self.mute == 0:
                self.record_inplace(op, attrs, inputs)
        elif kind == RANDOM or kind == FACTORY:
            if self.mute:
                return
            arr = _tracer.array_of(outputs[0])
            s = self.new_slot(arr)
            self.keep.append(outputs[0])
            self.random_devices[s] = _tracer.device_of(outputs[0])
            self.steps.append(Step("random" if kind == RANDOM else "factory", op, attrs, (), (s,)))
        elif kind == BREAK:
            self.brk(_BREAKS.get(op) or (op if op.startswith("autograd.Function") else
                                         f"{op}()" if op.startswith("Node.") else f"Tensor.{op}()"))

    def record_op(self, kind, name, fn, inputs, outputs):
        args = self.template(inputs)
        step = Step(kind, name, fn, args, ())
        refs = None
        outs = []
        for o in outputs:
            a = _tracer.array_of(o)
            base = None
            if getattr(a, "base", None) is not None:
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

    def check_inplace(self, op, t):
        s = self.by_id.get(id(_tracer.array_of(t)))
        if s is None or s in self.input_slots:
            return self.brk(f"in-place {op} on a tensor from outside the compiled function "
                            "(an input, a parameter or a constant)")
        # the trace-time value of the old slot stays as it is (verification)
        self.slot_arrays[s] = _arrays.copy(self.slot_arrays[s])
        group = self.alias[s]
        if any(g == group for i, g in enumerate(self.alias) if i != s):
            return self.brk(f"in-place {op} on a view, or on a tensor that has views")

    def record_inplace(self, op, fn, inputs):
        if self.broken is not None:
            return
        self_t = inputs[0]
        a = _tracer.array_of(self_t)
        old = self.by_id[id(a)]
        args = (Ref(old),) + tuple(self.template(x) for x in inputs[1:])
        # self's new value, computed out of place: a fresh copy of its array
        new_arr = _arrays.copy(a)
        s = self.new_slot(new_arr)
        self.by_id[id(a)] = s
        self.steps.append(Step("inplace", op, fn, args, (s,), cast=a.dtype))
