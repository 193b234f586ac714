"""One guard key's compiled form (Entry) and the autograd node of its
outputs (CompiledFunction, whose node is ``CompiledFunctionBackward``)."""
from __future__ import annotations

import numpy as np

import retrograd as rg
from retrograd.compile import _tracer
from retrograd.compile._program import Program, live_steps


class Entry:
    """The programs built from one trace.

    ``arg_slots``: the slots of the node's tensor inputs (the function's
    tensor arguments, then lifted parameters); ``out_slots``: the function's
    tensor results; ``diff``: which outputs require grad.
    """

    def __init__(self, rec, out_slots, out_diff, grad_inputs, gout_slots, grad_slots, device,
                 backend="numpy"):
        self.rec_consts = rec.consts
        self.device = device
        fwd = rec.steps[:rec.bwd_start] if rec.bwd_start is not None else rec.steps
        bwd = rec.steps[rec.bwd_start:] if rec.bwd_start is not None else []
        self.arg_slots = list(rec.inputs) + [s for s, _ in rec.lifted]
        self.lifted = [t for _, t in rec.lifted]
        self.out_slots = out_slots
        self.out_diff = out_diff
        self.random_slots = [st.outs[0] for st in fwd if st.kind == "random"]
        # backward: the gradients of the inputs that require grad
        self.grad_inputs = grad_inputs          # indices into arg_slots
        self.gout_slots = gout_slots
        fwd_slots = set()
        for st in fwd:
            fwd_slots.update(st.outs)
        fwd_slots.update(self.arg_slots)
        fwd_slots.update(s for s, _ in rec.consts)
        if grad_slots is not None:
            bsteps, bneed = live_steps(bwd, [s for s in grad_slots if s is not None])
            self.saved = sorted((bneed | {s for s in grad_slots if s is not None}) & fwd_slots
                                - set(self.arg_slots) - {s for s, _ in rec.consts})
            self.bwd = Program(bsteps, list(gout_slots) + self.arg_slots + self.saved,
                               grad_slots, rec.consts, rec.slot_arrays, rec.alias, device,
                               backend=backend)
            self._bwd_steps, self._grad_slots = bsteps, grad_slots
            self._bwd_tensor = None
        else:
            self.saved = []
            self.bwd = None
        fsteps, _ = live_steps(fwd, list(out_slots) + self.saved + self.random_slots)
        self._fwd_steps = fsteps
        self.fwd = Program(fsteps, self.arg_slots, list(out_slots) + self.saved,
                           rec.consts, rec.slot_arrays, rec.alias, device, backend=backend)
        self._fwd_tensor = None
        self._rec = rec
        self.n_out = len(out_slots)
        self.diff_out_index = [i for i, d in enumerate(out_diff) if d]
        self.out_meta = [(rec.slot_arrays[s].shape, rec.slot_arrays[s].dtype) for s in out_slots]

    def outside_ok(self):
        """Whether the tensors the trace read from outside the function
        (lifted parameters, constants) still have the shape, dtype and
        requires_grad the programs were built for, and the function's
        closure variables and globals that held them still hold them."""
        for t, m in self.outside_meta:
            if (t.shape, t.dtype, t.requires_grad) != m:
                return False
        for holder, name, t in self.source_guards:
            if (holder.cell_contents if name is None else holder.get(name)) is not t:
                return False
        return True

    def tensor_programs(self):
        """The tensor forms (built on first use: create_graph backwards)."""
        if self._fwd_tensor is None:
            rec = self._rec
            need = list(self.saved)
            self._fwd_tensor = Program(self._fwd_steps, self.arg_slots + self.random_slots, need,
                                       rec.consts, rec.slot_arrays, rec.alias, self.device,
                                       tensor_mode=True)
            self._bwd_tensor = Program(self._bwd_steps,
                                       list(self.gout_slots) + self.arg_slots + self.saved,
                                       self._grad_slots, rec.consts, rec.slot_arrays, rec.alias,
                                       self.device, tensor_mode=True)
        return self._fwd_tensor, self._bwd_tensor

    def release_trace(self):
        """Drop the trace-time arrays once the programs are verified (the
        tensor forms are then built from the steps alone)."""
        rec = self._rec
        rec.slot_arrays = [_Meta(a) for a in rec.slot_arrays]
        rec.keep = None
        rec.by_id = None


class _Meta:
    """What a program builder reads of a trace-time array after release."""
    __slots__ = ("shape", "dtype")

    def __init__(self, a):
        self.shape, self.dtype = getattr(a, "shape", ()), getattr(a, "dtype", None)


class CompiledFunction(rg.autograd.Function):
    """The compiled region as one node of the autograd graph: the forward
    program runs in ``forward``, the backward program in ``backward`` (its
    tensor form under ``create_graph=True``, recomputing the forward's
    values from the inputs so that higher-order gradients flow)."""

    @staticmethod
    def forward(ctx, entry, *tensors):
        arrays = [_tracer.array_of(t) for t in tensors]
        with np.errstate(all="ignore"):
            res = entry.fwd(*arrays)
        n = entry.n_out
        dev = entry.device
        outs = tuple(_tracer.wrap(a if a.base is None or not _aliases(a, arrays) else a.copy(), dev)
                     for a in res[:n])
        ctx.entry = entry
        ctx.inputs = tensors
        ctx.saved_arrays = res[n:]
        ctx.random = [res[n + entry.saved.index(s)] if s in entry.saved else None
                      for s in entry.random_slots]
        nondiff = [o for o, d in zip(outs, entry.out_diff) if not d]
        if nondiff:
            ctx.mark_non_differentiable(*nondiff)
        # the inputs, for their version check: a gradient that needs an input
        # modified in place since raises, as eager would
        ctx.save_for_backward(*tensors)
        return outs if n != 1 else outs[0]

    @staticmethod
    def backward(ctx, *gouts):
        entry = ctx.entry
        tensors = ctx.saved_tensors
        dev = entry.device
        if rg.is_grad_enabled() and any(t.requires_grad for t in tensors):
            # create_graph: recompute the forward's values as recorded ops,
            # then run the backward program as recorded ops
            fwd_t, bwd_t = entry.tensor_programs()
            rand = [_tracer.wrap(a, dev) for a in ctx.random]
            saved = fwd_t(*tensors, *rand)
            g = [gouts[i] if gouts[i] is not None else
                 _tracer.wrap(np.zeros(*entry.out_meta[i]), dev) for i in entry.diff_out_index]
            grads = bwd_t(*g, *tensors, *saved)
        else:
            garr = []
            for i in entry.diff_out_index:
                g = gouts[i]
                # (an output that got no gradient: zeros, as materialized grads)
                garr.append(_tracer.array_of(g) if g is not None else np.zeros(*entry.out_meta[i]))
            with np.errstate(all="ignore"):
                res = entry.bwd(*garr, *[_tracer.array_of(t) for t in tensors], *ctx.saved_arrays)
            grads = [None if a is None else _tracer.wrap(a, dev) for a in res]
        out = [None] * (1 + len(tensors))
        for k, i in enumerate(entry.grad_inputs):
            out[1 + i] = grads[k]
        return tuple(out)


def _aliases(a, arrays):
    return any(np.may_share_memory(a, b) for b in arrays)
