# cython: language_level=3, embedsignature=True
# retrograd-core's main extension module: implements abi.pxd.
#
# Core's topic modules (cimported below, each declared by its own private
# .pxd; docs/design.md, "Core's modules") know no Tensor. What does is
# still stitched together here from the topic files below, so that the hot
# path (op -> kernel -> node creation -> set_history) is made of direct C
# calls.
# What each must never do is said at its top. Generated code (from
# derivatives.yaml) is included from the build directory and never committed.

cimport cython
from cpython.ref cimport Py_REFCNT
from libc.stdint cimport uint64_t
cimport numpy as _cnp

import numpy as np
from numpy import ndarray

# Core's topic modules (docs/design.md, "Core's modules") are cimported, by
# name, by each topic file below that uses them, and by the generated code.

# abi's public names whose classes live in topic modules
from retrograd.core._kernels_linalg import LinAlgError  # no-cython-lint
from retrograd.core._dtype_rules import DtypeNotImplementedError, DtypeRuntimeError  # no-cython-lint

_cnp.import_array()

ABI_VERSION = (RG_ABI_MAJOR, RG_ABI_MINOR)

include "_grad_mode.pxi"
include "_slots.pxi"
include "_op_events.pxi"         # op-event slot helpers (profiler)
include "_device.pxi"
include "_node.pxi"
include "_saved_hooks.pxi"
include "_saved.pxi"
include "_tensor_generated.pxi"     # _tensor.pxi + generated op methods
include "_tensor_args.pxi"         # the Tensor's helpers, ops' argument parsing
include "_op_support.pxi"         # argument unwrapping, devices, graph recording
include "_sum_to.pxi"              # rg_sum_to: a gradient summed down to a shape
include "_inplace.pxi"
include "_copy_slices.pxi"
include "_formula_helpers.pxi"     # formula helpers (the table's backward formulas), by topic
include "_formula_helpers_linalg.pxi"
include "_formula_helpers_elementwise.pxi"
include "_batched_formulas.pxi"  # the table's `batched:` formulas
include "_generated_ops.pxi"
include "_composites_shape.pxi"
include "_ufunc.pxi"
include "_anomaly.pxi"
include "_function.pxi"          # custom autograd Functions
include "_backward_args.pxi"
include "_jvp_support.pxi"       # forward AD: JVP helpers, in-place and Function hooks
include "_abi_exports.pxi"       # the ABI 1.3 accessors other distributions use


# -- Python-level entry points used by core's Python modules ------------------

def _wrap(array, device=None, requires_grad=False):
    """A new leaf Tensor around ``array`` (no copy)."""
    cdef Tensor t = rg_wrap(_ensure_array(array), _parse_device(device))
    if requires_grad:
        t.requires_grad = True
    return t


def _run_backward(tuple roots, tuple grads, bint keep_graph, bint create_graph,
                  tuple inputs, bint accumulate_grad):
    """Hand a validated backward to the engine slot (see _autograd.py)."""
    return _engine_execute(roots, grads, keep_graph, create_graph, inputs, accumulate_grad)


def _gradient_edge(Tensor t):
    """The Edge a gradient for ``t`` flows into (None if it needs none)."""
    return t.gradient_edge()


def _grad_accumulator(Tensor t):
    return t.grad_accumulator()
