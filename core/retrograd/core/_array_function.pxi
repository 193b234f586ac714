# Array-function nodes (abi.pxd, ABI 1.7): one node for results that code
# core does not see computed from its inputs' arrays, with a backward that
# is a callable on arrays. retrograd-compile records a compiled region's
# outputs this way (its node is "CompiledFunctionBackward"). Part of
# _ops.pyx.
#
# Why not a custom Function: a Function's node is also its ctx (a Python
# object with a __dict__), its saved tensors are SavedVariables unpacked
# into Tensors, and its backward gets Tensors and returns Tensors that the
# node then unwraps. For a compiled region of a few microseconds that
# bookkeeping cost as much as the programs themselves. This node keeps the
# inputs (for the version check and a create_graph backward), the arrays
# its backward reads and an opaque state, and hands the backward the
# gradient arrays as the engine has them.
#
# What it checks, as a Function's saved tensors would: every input and each
# output named in `saved_outputs` must be at the version it had when the
# node was made (an in-place change since raises torch's error), an input
# must not have been detached in place, and a released node raises "Trying
# to backward through the graph a second time".
#
# Must never: be made while saved-tensor hooks are active (its state holds
# arrays out of the hooks' reach; rg_saved_tensors_hooks_active() tells the
# caller to take a path the hooks see), or hold a reference to one of its
# own outputs (a cycle through the node): outputs are checked through their
# version counters alone.


@cython.final
@cython.trashcan(True)
cdef class ArrayFunctionNode(Node):
    """The node of results computed outside core's ops, whose backward is a
    callable on arrays (``rg.compile``'s ``CompiledFunctionBackward``).

    Made by ``abi.pxd``'s ``rg_array_function``; not made from Python.
    ``name()`` is the name it was given."""
    cdef str _name
    cdef object _backward               # backward(state, saved, grads, create_graph, inputs)
    cdef object _state                  # the caller's, until released
    cdef tuple _saved                   # arrays the backward reads, until released
    cdef tuple _inputs                  # the forward's tensor inputs, until released
    cdef tuple _versions                # their version counters, then the saved outputs'
    cdef tuple _saved_at                # the versions those had when the node was made
    cdef tuple _watched                 # the watched outputs' arrays (the error names their shape)
    cdef tuple _saved_outputs           # which outputs those are
    cdef int _n_inputs

    cpdef str name(self):
        return self._name

    cdef void release_variables(self):
        self._state = None
        self._saved = None
        self._inputs = None
        self._watched = None
        self._released = True

    def _saved_arrays(self):
        # (name, array) per value the node keeps for its backward and has not
        # released, as generated nodes report theirs (autograd.graph's
        # saved_tensors_report, to_dot): its inputs, the arrays the
        # backward reads, and the outputs it watches
        cdef Py_ssize_t i
        out = []
        if self._released:
            return out
        for i in range(len(self._inputs)):
            out.append((f"inputs[{i}]", (<Tensor>self._inputs[i])._array))
        for i in range(len(self._saved)):
            a = self._saved[i]
            if a is not None and hasattr(a, "nbytes"):
                out.append((f"saved[{i}]", a))
        for i in range(len(self._watched)):
            out.append((f"outputs[{self._saved_outputs[i]}]", self._watched[i]))
        return out

    cdef list apply(self, list grads, bint create_graph):
        cdef Py_ssize_t i, n
        cdef VersionCounter vc
        cdef Tensor t
        if self._released:
            _raise_released(self)
        n = self._n_inputs
        for i in range(len(self._versions)):
            vc = <VersionCounter>self._versions[i]
            if vc.version != <Py_ssize_t>self._saved_at[i]:
                if i < n:
                    t = <Tensor>self._inputs[i]
                    _raise_modified_inline(self, t._array, vc, <Py_ssize_t>self._saved_at[i], <int>i)
                _raise_modified_inline(self, self._watched[i - n], vc,
                                       <Py_ssize_t>self._saved_at[i],
                                       -1 - <int>self._saved_outputs[i - n])
        for i in range(n):
            t = <Tensor>self._inputs[i]
            if t._grad_fn is None and not t._requires_grad:
                x = rg_next_fn(self, <int>i)
                if x is not None and type(x) is not AccumulateGrad:
                    _raise_detached()     # it had a history when the node was made
        result = self._backward(self._state, self._saved, grads, create_graph, self._inputs)
        return _check_array_function_result(self, result, create_graph)


cdef list _check_array_function_result(ArrayFunctionNode node, object result, bint create_graph):
    # what the engine may rely on: one gradient (or None) per input, arrays
    # in a plain backward, Tensors under create_graph
    cdef Py_ssize_t i
    cdef list out
    if type(result) is list:
        out = <list>result
    elif type(result) is tuple:
        out = list(<tuple>result)
    else:
        raise RuntimeError(f"{node.name()}: its backward returned a {type(result).__name__}, "
                           "not a list with one gradient (or None) per input")
    if len(out) != node._n_inputs:
        raise RuntimeError(
            f"function {node.name()} returned an incorrect number of gradients (expected "
            f"{node._n_inputs}, got {len(out)})")
    for i in range(len(out)):
        g = out[i]
        if g is None:
            continue
        if create_graph:
            if not isinstance(g, Tensor):
                raise RuntimeError(f"function {node.name()} returned an invalid gradient at "
                                   f"position {i}: expected a Tensor under create_graph, got "
                                   f"{type(g).__name__}")
        elif isinstance(g, Tensor):
            out[i] = (<Tensor>g)._array
    return out


cdef list _rg_array_function(str name, tuple inputs, list outputs, Device device,
                             tuple differentiable, tuple saved_outputs, tuple saved,
                             object backward, object state):
    cdef ArrayFunctionNode node
    cdef Tensor t
    cdef Py_ssize_t i, k, nin = len(inputs), nout = len(outputs)
    cdef bint any_needs = False
    cdef list edges
    cdef list versions, saved_at, watched
    cdef list results = [None] * nout
    for i in range(nin):
        t = <Tensor?>inputs[i]
        if _needs(t):
            any_needs = True
    if not (rg_tls_grad_enabled and any_needs):
        # nothing to differentiate: the results are plain tensors
        for i in range(nout):
            results[i] = _rg_wrap(outputs[i], device)
        return results
    if rg_tls_saved_hooks:
        raise RuntimeError(f"{name}: an array-function node cannot be made while saved-tensor "
                           "hooks are active (check rg_saved_tensors_hooks_active() first)")
    node = ArrayFunctionNode.__new__(ArrayFunctionNode)
    node._name = name
    node._backward = backward
    node._state = state
    node._saved = saved if saved is not None else ()
    node._inputs = inputs
    node._n_inputs = <int>nin
    node.seq_nr = _rg_next_sequence_nr()
    versions = [None] * nin
    saved_at = [None] * nin
    edges = [None] * (2 * nin)
    for i in range(nin):
        t = <Tensor>inputs[i]
        _check_saveable(t)
        edges[2 * i] = _edge_fn(t)
        edges[2 * i + 1] = _edge_nr(t)
        versions[i] = t._version_counter
        saved_at[i] = t._version_counter.version
    node.set_next_edges(tuple(edges))
    if rg_anomaly_mode:
        _record_anomaly_trace(node)
    for i in range(nout):
        a = outputs[i]
        node.add_input_metadata(a, device)
        if (differentiable is None or differentiable[i]) and _record(a):
            results[i] = _rg_wrap_with_grad_fn(a, device, node, <int>i)
        else:
            results[i] = _rg_wrap(a, device)
    watched = []
    if saved_outputs:
        for k in saved_outputs:
            t = <Tensor>results[k]
            versions.append(t._version_counter)
            saved_at.append(t._version_counter.version)
            watched.append(t._array)
    node._versions = tuple(versions)
    node._saved_at = tuple(saved_at)
    node._watched = tuple(watched)
    node._saved_outputs = saved_outputs if saved_outputs else ()
    return results


cdef bint _rg_saved_tensors_hooks_active() noexcept nogil:
    return rg_tls_saved_hooks != 0
