# cython: language_level=3, embedsignature=True
# retrograd-core's ABI module: implements abi.pxd, and holds nothing else.
#
# Its classes (Tensor, Node, Edge, SavedVariable, ...) are the ABI, so they
# are defined here; their methods and abi.pxd's functions call the
# implementation module _ops (_ops.pxd), which holds the ops of
# derivatives.yaml and the state they share. The two modules import each
# other, by design: docs/design.md, "Core's modules". Generated code (the
# Tensor's op methods, from derivatives.yaml) is included from the build
# directory and never committed.

cimport cython  # no-cython-lint (the included class files use it)
from libc.stdint cimport uint64_t
cimport numpy as _cnp

import numpy as np  # no-cython-lint (used by the included files)
from numpy import ndarray  # no-cython-lint

_cnp.import_array()

ABI_VERSION = (RG_ABI_MAJOR, RG_ABI_MINOR)

include "_device.pxi"              # Device
include "_node.pxi"                # Edge, InputMetadata, NodeExtras, Node, AccumulateGrad
include "_saved.pxi"               # SavedVariable
include "_tensor_generated.pxi"    # VersionCounter, Tensor (_tensor.pxi + generated op methods)
include "_abi_exports.pxi"         # the functions of abi.pxd


# abi's Python names are all of core's compiled API: the names of _ops (the
# ops, grad-mode and device functions, Function, GraphRoot, ...) and of the
# topic modules whose classes are public. Tensor's methods find the
# Python-level ops they call (split, chunk, ...) here too.
from retrograd.core._kernels_linalg import LinAlgError  # no-cython-lint
from retrograd.core._dtype_rules import DtypeNotImplementedError, DtypeRuntimeError  # no-cython-lint
from retrograd.core import _ops


def _reexport(module, namespace):
    for name, value in vars(module).items():
        if not name.startswith("__") and name not in namespace:
            namespace[name] = value


_reexport(_ops, globals())
del _reexport
