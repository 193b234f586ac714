# Uses core's ABI layer the way retrograd-engine does: cimports the Tensor
# and Node classes, reads their ABI fields, calls free functions.
from retrograd.core.abi cimport (
    Tensor, Node, rg_wrap, rg_cpu_device, rg_grad_enabled, rg_next_fn, rg_next_nr,
)


def wrap(array):
    """A new leaf Tensor around `array` (no copy), made through rg_wrap."""
    cdef Tensor t = rg_wrap(array, rg_cpu_device())
    return t


def data_is(Tensor t, array):
    return t._array is array


def grad_enabled():
    return rg_grad_enabled()


def graph_of(Tensor t):
    """(node name, [(next node name or None, input_nr), ...]) of t's grad_fn."""
    cdef Node n = t._grad_fn
    cdef Node nxt
    if n is None:
        return None
    edges = []
    for i in range(n._num_edges):
        nxt = rg_next_fn(n, i)
        edges.append((None if nxt is None else nxt.name(), rg_next_nr(n, i)))
    return n.name(), edges


# A core function newer than a consumer's floor is looked up at run time,
# by name and C signature (abi.pxd's rg_core_function), not cimported.
from retrograd.core.abi cimport rg_core_function  # noqa: E402

ctypedef object (*_sum_to_t)(object, tuple)


def sum_to_by_lookup(array, tuple shape):
    """rg_sum_to, found at run time with its signature checked."""
    cdef _sum_to_t fn = <_sum_to_t>rg_core_function("rg_sum_to",
                                                    "PyObject *(PyObject *, PyObject *)")
    return fn(array, shape)


def lookup(str name, str signature):
    """Whether core exports `name` (ImportError if with another signature)."""
    return rg_core_function(name, signature) != NULL


# ABI 1.7: an array-function node (what retrograd-compile records a compiled
# region's outputs with).
from retrograd.core.abi cimport rg_array_function, rg_saved_tensors_hooks_active  # noqa: E402


def array_function(str name, tuple inputs, list outputs, differentiable, saved_outputs,
                   saved, backward, state):
    """rg_array_function on the CPU: `outputs` (arrays) as the results of
    one node named `name` over `inputs`."""
    return rg_array_function(name, inputs, outputs, rg_cpu_device(),
                             None if differentiable is None else tuple(differentiable),
                             None if saved_outputs is None else tuple(saved_outputs),
                             None if saved is None else tuple(saved), backward, state)


def saved_tensors_hooks_active():
    return rg_saved_tensors_hooks_active()
