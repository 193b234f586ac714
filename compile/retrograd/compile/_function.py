"""One guard key's compiled form (Entry) and the autograd node of its
outputs (CompiledFunction, whose node is ``CompiledFunctionBackward``)."""
from __future__ import annotations

import os
import threading
import time

import numpy as np

from retrograd.core.extending import CustomFunction
from retrograd.compile import _arrays, _call, _tracer
from retrograd.compile import _background
from retrograd.compile._program import Program, fusible_ops, live_steps, merge_common



class Entry(_call.EntryBase):
    """The programs built from one trace.

    ``arg_slots``: the slots of the node's tensor inputs (the function's
    tensor arguments, then lifted parameters); ``out_slots``: the function's
    tensor results; ``diff``: which outputs require grad.
    """

    def __init__(self, rec, out_slots, out_diff, grad_inputs, gout_slots, grad_slots, device,
                 backend="numpy"):
        self.rec_consts = rec.consts
        self.device = device
        # numpy, or cupy for CUDA tensors: the module of the programs' arrays
        self.xp = _arrays.module_of(rec.slot_arrays[out_slots[0]])
        if self.xp is not np:
            # CUDA programs fuse with the cupy backend only (numba's loops
            # are CPU loops); a CPU program with backend="cupy" is numpy's
            backend = "cupy" if backend in ("auto", "cupy") else "numpy"
        elif backend == "cupy":
            backend = "numpy"
        fwd = rec.steps[:rec.bwd_start] if rec.bwd_start is not None else rec.steps
        bwd = rec.steps[rec.bwd_start:] if rec.bwd_start is not None else []
        # Common subexpressions merged, the backward's with the forward's (a
        # backward step that recomputes a forward value reads it, saved).
        protected = set(out_slots) | {s for s in grad_slots or () if s is not None}
        renamed, seen = {}, {}
        fwd = merge_common(fwd, protected, renamed, seen)
        bwd = merge_common(bwd, protected, renamed, seen)
        if renamed:
            # views of a dropped value are views of the value kept: one alias
            # group, so that its buffer outlives them
            rec.alias = _joined(rec.alias, renamed)
        self.arg_slots = list(rec.inputs) + [s for s, _ in rec.lifted]
        self.lifted = [t for _, t in rec.lifted]
        self.out_slots = out_slots
        self.out_diff = out_diff
        self.random_slots = [st.outs[0] for st in fwd if st.kind == "random"]
        self.random_devices = [rec.random_devices[s] for s in self.random_slots]
        # backward: the gradients of the inputs that require grad
        self.grad_inputs = tuple(grad_inputs)   # indices into arg_slots
        self.gout_slots = gout_slots
        fwd_slots = set()
        for st in fwd:
            fwd_slots.update(st.outs)
        fwd_slots.update(self.arg_slots)
        fwd_slots.update(s for s, _ in rec.consts)
        if grad_slots is not None:
            bsteps, bneed = live_steps(bwd, [s for s in grad_slots if s is not None])
            # (random draws too: a create_graph backward recomputes the
            # forward from the inputs and the values this call drew)
            self.saved = sorted((bneed | {s for s in grad_slots if s is not None}) & fwd_slots
                                - set(self.arg_slots) - {s for s, _ in rec.consts}
                                | set(self.random_slots))
            self._bwd_steps, self._grad_slots = bsteps, grad_slots
            self._bwd_tensor = None
        else:
            self.saved = []
            self._bwd_steps = None
        fsteps, _ = live_steps(fwd, list(out_slots) + self.saved + self.random_slots)
        self._fwd_steps = fsteps
        self._fwd_tensor = None
        self._rec = rec
        self.backend = backend
        # Fused loops are built in the background (_background.py) where
        # there are any to build, the calls running the numpy programs
        # meanwhile; a program that draws random values is fused here (its
        # check in the background would draw from the caller's generator).
        self.fusing = None
        if backend != "numpy" and not self.random_slots and (
                fusible_ops(fsteps, rec.slot_arrays, rec.alias, backend)
                or (self._bwd_steps and fusible_ops(self._bwd_steps, rec.slot_arrays, rec.alias,
                                                    backend))):
            self.fusing = threading.Event()
            backend = "numpy"
        # (forward program, backward program or None): read once per call,
        # replaced whole when fused ones are ready
        self.progs = self._programs(backend)
        self.n_out = len(out_slots)
        self.diff_out_index = [i for i, d in enumerate(out_diff) if d]
        saved = set(self.saved)
        self.saved_out_index = [i for i, s in enumerate(out_slots) if s in saved]
        self.all_diff = all(out_diff)
        # (shape, dtype) of each output, and its array module (zeros for one
        # that gets no gradient are made on its device)
        self.out_meta = [(rec.slot_arrays[s].shape, rec.slot_arrays[s].dtype) for s in out_slots]
        self.out_xp = [_arrays.module_of(rec.slot_arrays[s]) for s in out_slots]

    @property
    def fwd(self):
        """The forward program in use."""
        return self.progs[0]

    @property
    def bwd(self):
        """The backward program in use (None: no output requires grad)."""
        return self.progs[1]

    def _programs(self, backend, cancelled=None):
        # The forward returns its results, then the saved values: those its
        # fused loops wrote as rows of blocks come last, as the blocks, and
        # the backward reads those rows in place (one argument a block).
        rec = self._rec
        fwd = Program(self._fwd_steps, self.arg_slots, list(self.out_slots) + self.saved,
                      rec.consts, rec.slot_arrays, rec.alias, self.device, backend=backend,
                      cancelled=cancelled, packable=set(self.saved) - set(self.out_slots))
        bwd = None
        if self._bwd_steps is not None:
            packed = {s for rows in fwd.packed_outs for s in rows}
            bwd = Program(self._bwd_steps, list(self.gout_slots) + self.arg_slots
                          + [s for s in self.saved if s not in packed],
                          self._grad_slots, rec.consts, rec.slot_arrays, rec.alias, self.device,
                          backend=backend, cancelled=cancelled, block_args=fwd.packed_outs)
        return fwd, bwd

    def start_fusion(self, checks):
        """Build the fused programs on the background worker; use them once
        they give the numpy programs' results on ``checks`` (the inputs and
        gradient outputs the numpy programs were verified on)."""
        _background.submit(lambda cancelled: self._fuse(checks, cancelled))

    def _fuse(self, checks, cancelled):
        try:
            if self.xp is not np:
                # the worker thread on the device of the traced arrays (a
                # thread's current device is its own)
                with self.xp.cuda.Device(_device_id(checks)):
                    self._fuse_checked(checks, cancelled)
            else:
                self._fuse_checked(checks, cancelled)
        except Exception:
            return      # fusion is an optimisation: the numpy programs stay in use
        finally:
            self.release_trace()
            self.fusing.set()

    def _fuse_checked(self, checks, cancelled):
        fused = self._programs(self.backend, cancelled)
        if not any(p is not None and p.fused_ops for p in fused):
            return
        with np.errstate(all="ignore"):
            for arrays, gouts in checks:
                if not _programs_agree(self.progs, fused, arrays, gouts, self.n_out):
                    return                  # (kept: the numpy programs)
            if self.xp is np and os.environ.get("RG_COMPILE_FUSION") != "always" and \
                    not _faster(fused, self.progs, *checks[0], self.n_out):
                return                      # (kept: fusing did not pay)
        self.progs = fused

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


def _joined(alias, renamed):
    """``alias`` (slot -> group) with the group of each renamed slot joined
    to the group of the slot it was renamed to."""
    parent = {}

    def find(g):
        while g in parent:
            g = parent[g]
        return g

    for b, a in renamed.items():
        gb, ga = find(alias[b]), find(alias[a])
        if gb != ga:
            parent[gb] = ga
    return [find(g) for g in alias] if parent else alias


class _Meta:
    """What a program builder reads of a trace-time array after release."""
    __slots__ = ("shape", "dtype")

    def __init__(self, a):
        self.shape, self.dtype = getattr(a, "shape", ()), getattr(a, "dtype", None)


class CompiledFunction(CustomFunction):
    """The compiled region as a custom Function (core's, extending.CustomFunction:
    compile needs nothing of the umbrella): the forward program runs
    in ``forward``, the backward program in ``backward`` (its tensor form
    under ``create_graph=True``, recomputing the forward's values from the
    inputs so that higher-order gradients flow). Both bodies are C
    (_call.pyx).

    A compiled call records its node this way only while a profile records
    or saved-tensor hooks are active (they see into a Function); otherwise
    its node is core's array-function node (_call.run), with the same name,
    ``CompiledFunctionBackward``, and the same backward."""

    forward = staticmethod(_call.node_forward)
    setup_context = staticmethod(_call.node_setup_context)
    backward = staticmethod(_call.node_backward)


def _create_graph_backward(entry, random, tensors, gouts):
    """The compiled node's backward under create_graph: recompute the
    forward's values as recorded ops (from ``tensors``, the node's inputs,
    and ``random``, the values the call drew), then run the backward program
    as recorded ops, so that the gradients have a graph of their own.
    Returns one gradient (or None) per tensor."""
    dev = entry.device
    fwd_t, bwd_t = entry.tensor_programs()
    rand = ([_tracer.wrap(a, d) for a, d in zip(random, entry.random_devices)]
            if entry.random_slots else [])
    saved = fwd_t(*tensors, *rand)
    g = [gouts[i] if gouts[i] is not None else
         _tracer.wrap(entry.out_xp[i].zeros(*entry.out_meta[i]), dev) for i in entry.diff_out_index]
    grads = bwd_t(*g, *tensors, *saved)
    out = [None] * len(tensors)
    for k, i in enumerate(entry.grad_inputs):
        out[i] = grads[k]
    return out


def _programs_agree(ref, new, arrays, gouts, n_out):
    """Whether programs ``new`` give ``ref``'s results and gradients."""
    from retrograd.compile.api import _close
    want, got = ref[0](*arrays), new[0](*arrays)
    if not all(_close(a, b) for a, b in zip(got[:n_out], want[:n_out])):
        return False
    if gouts is None or ref[1] is None:
        return True
    want_g = ref[1](*gouts, *arrays, *want[n_out:])
    got_g = new[1](*gouts, *arrays, *got[n_out:])
    return all(_close(a, b) for a, b in zip(got_g, want_g))


def _faster(new, ref, arrays, gouts, n_out, budget=0.05, rounds=7):
    """Whether programs ``new`` (forward, then backward on ``gouts``) run
    faster than ``ref`` on ``arrays``: the best of up to ``rounds`` timed
    runs of each, taken in turn, within about ``budget`` seconds.

    Why: a fused loop is one compiled call, but its math is scalar, where a
    replayed run calls NumPy's own SIMD inner loops one after another. On
    small arrays the two are close, and either may win (the 64-branch
    graph of tiny tanh chains replays its forward in 4.6 µs, against 8.0
    µs for its three fused loops). Timed on the worker thread, so a run
    may wait for the GIL: the best of several is the figure."""
    best_new = best_ref = float("inf")
    spent = 0.0
    for _ in range(rounds):
        for which in (0, 1):
            progs = new if which == 0 else ref
            t = time.perf_counter()
            res = progs[0](*arrays)
            if gouts is not None and progs[1] is not None:
                progs[1](*gouts, *arrays, *res[n_out:])
            t = time.perf_counter() - t
            spent += t
            if which == 0:
                best_new = min(best_new, t)
            else:
                best_ref = min(best_ref, t)
        if spent > budget:
            break
    return best_new < best_ref


def _aliases(a, arrays):
    # (a program may move values between devices: only arrays of one kind
    # can share memory)
    t = type(a)
    if t is np.ndarray:
        return any(type(b) is t and np.may_share_memory(a, b) for b in arrays)
    return any(type(b) is t and _arrays.may_share_memory(a, b) for b in arrays)


def _device_id(checks):
    for arrays, _ in checks:
        for a in arrays:
            if _arrays.is_device(a):
                return a.device.id
    return 0
