# cython: language_level=3, embedsignature=True
# retrograd-core's implementation module: the ops of derivatives.yaml and
# everything they share, stitched from the topic files below. _ops.pxd says
# what abi (the classes and functions of abi.pxd) calls here, and why the
# two modules import each other (docs/design.md, "Core's modules").
#
# The hot path of an op (argument unwrapping -> kernel -> node creation ->
# graph recording) is made of direct C calls inside this module; kernels are
# in the topic modules, each file cimports by name what it uses of them.
# Generated code (from derivatives.yaml) is included from the build
# directory and never committed.

cimport cython  # no-cython-lint (the included files use it)
from cpython.ref cimport Py_REFCNT  # no-cython-lint
cimport numpy as _cnp

import functools as _functools  # no-cython-lint (used by the included _formula_helpers.pxi)

import numpy as np
from numpy import ndarray

_cnp.import_array()

include "_grad_mode.pxi"           # per-thread grad, inference and anomaly mode; the sequence counter
include "_slots.pxi"               # the engine, forward-AD and op-event slots
include "_op_events.pxi"           # op events (profiler)
include "_autocast.pxi"            # autocast: per-thread state, the casts of listed ops
include "_devices.pxi"             # device specs, interned Device objects
include "_graph_support.pxi"       # edges, input metadata, hook handles, gradient accumulation
include "_saved_hooks.pxi"         # saved_tensors_hooks
include "_saved_support.pxi"       # saving tensors for backward, unpacking them
include "_tensor_args.pxi"         # new tensors, Tensor's helpers, ops' argument parsing
include "_op_support.pxi"          # argument unwrapping, devices, graph recording
include "_sum_to.pxi"              # a gradient summed down to a shape
include "_inplace.pxi"
include "_copy_slices.pxi"
include "_formula_helpers.pxi"     # formula helpers (the table's backward formulas), by topic
include "_formula_helpers_linalg.pxi"
include "_formula_helpers_decompositions.pxi"   # sort/topk, eigh, qr, pinv, lstsq
include "_formula_helpers_elementwise.pxi"
include "_batched_formulas.pxi"    # the table's `batched:` formulas
include "_generated_ops.pxi"
include "_multi_view.pxi"            # the one node of split's, chunk's and unbind's views
include "_composites_shape.pxi"        # shape composites that give views (and cat's aliases)
include "_composites_copy.pxi"         # shape composites that make copies
include "_ufunc.pxi"
include "_anomaly.pxi"
include "_function.pxi"            # custom autograd Functions
include "_array_function.pxi"      # nodes whose backward is a callable on arrays (compile's)
include "_backward_args.pxi"
include "_jvp_support.pxi"         # forward AD: JVP helpers, in-place and Function hooks
include "_abi_impl.pxi"            # what abi.pxd's batching, graph-root, view and hooks functions do


# -- Python-level entry points used by core's Python modules ------------------

def _wrap(array, device=None, requires_grad=False):
    """A new leaf Tensor around ``array`` (no copy)."""
    cdef Tensor t = _rg_wrap(_ensure_array(array), _parse_device(device))
    if requires_grad:
        t.requires_grad = True
    return t


def _run_backward(tuple roots, tuple grads, bint keep_graph, bint create_graph,
                  tuple inputs, bint accumulate_grad):
    """Hand a validated backward to the engine slot (see _autograd.py)."""
    if _trace_slot != NULL and (accumulate_grad or not create_graph):
        # its formulas run on arrays (and may write .grad), not as ops: a
        # trace cannot record it (abi.pxd, RG_TRACE_BREAK)
        _trace_slot(RG_TRACE_BREAK, "backward" if accumulate_grad else "grad", roots, (), None)
    return _engine_execute(roots, grads, keep_graph, create_graph, inputs, accumulate_grad)


def _gradient_edge(Tensor t):
    """The Edge a gradient for ``t`` flows into (None if it needs none)."""
    return t.gradient_edge()


def _grad_accumulator(Tensor t):
    return t.grad_accumulator()
