# Custom autograd Functions: the node behind `rg.autograd.Function` and the
# per-call work of `Function.apply`. Part of _ops.pyx.
#
# The model is PyTorch's (torch/autograd/function.py, python_function.cpp,
# custom_function.cpp): each `apply` creates one instance of the Function's
# `<Name>Backward` class, a Python subclass of _FunctionBase made by the
# Python layer (retrograd/autograd/function.py). That instance is both the
# graph node (outputs' grad_fn) and the `ctx` that forward/setup_context and
# backward see, so ctx attributes, saved tensors, hooks and next_functions
# all live on one object.
#
# Note [Function outputs] (torch's _wrap_outputs, case by case):
#   - non-tensor outputs pass through; the node still reserves an input slot
#     for them, and backward receives None there;
#   - when the node is recorded (grad mode on and some tensor input requires
#     grad), every differentiable output (floating dtype, not marked
#     non-differentiable) gets the node as grad_fn; an input returned
#     unchanged becomes a fresh view of it with that history (the input
#     itself keeps its own); an input marked dirty keeps its identity and
#     has its history rebased onto the node (through its base if it is a
#     view, see Note [CopySlices]);
#   - otherwise an output is detached: an input that requires grad is
#     returned as a detached alias, one that does not as a view of itself.
#
# Saved tensors become SavedVariables only after the outputs are wrapped, so
# that a saved output is recognised (its grad_fn is this node) and saved
# without a reference to the node: no cycle, as for generated nodes.
# Attributes users set on ctx live in the instance __dict__, which the GC
# traverses, so `ctx.out = out` (a cycle through the output) is collected.
#
# Must never: record anything while forward runs (it runs under no_grad),
# or keep `to_save`/`dirty_tensors`/`saved_for_forward` past apply.

from retrograd.core._array_module cimport _ensure_array

import warnings as _warnings

cdef object _NON_TENSOR_META_ARRAY = np.zeros(())    # metadata placeholder for non-tensor outputs


@cython.trashcan(True)
cdef class _FunctionBase(Node):
    """Node and ctx of one call of a custom ``Function`` (``torch._C._FunctionBase``).

    Not used directly: ``Function.apply`` creates an instance of the
    Function's ``<Name>Backward`` subclass."""
    cdef public object to_save            # what ctx.save_for_backward got (until apply ends)
    cdef public object dirty_tensors      # what ctx.mark_dirty got (until apply ends)
    cdef public object non_differentiable # what ctx.mark_non_differentiable got
    cdef public object saved_for_forward  # what ctx.save_for_forward got (for jvp; until apply ends)
    cdef public bint materialize_grads    # undefined output grads reach backward as zeros
    cdef readonly tuple needs_input_grad  # per forward input: a tensor that requires grad
    cdef tuple _is_variable_input         # per forward input: is it a Tensor
    cdef tuple _is_tensor_output          # per forward output: is it a Tensor
    cdef tuple _saved                     # SavedVariable (or None) per saved tensor, or None
    cdef dict __dict__                    # ctx.foo = ... (traversed by the GC)
    cdef bint _saved_cleared              # saved tensors dropped on first access (clear_saved_tensors_on_access)

    def __init__(self, *args, **kwargs):
        # Only Function.apply makes these (it sets the fields itself).
        self.materialize_grads = True
        self.needs_input_grad = ()
        self._is_variable_input = ()
        self._is_tensor_output = ()

    # -- saved tensors ----------------------------------------------------
    def _saved_arrays(self):
        # (name, array) per tensor saved for backward and not yet released,
        # as generated nodes have (autograd.graph.saved_tensors_report).
        out = []
        if self._saved is None or self._released:
            return out
        for i, sv in enumerate(self._saved):
            if sv is None:
                continue
            data = (<SavedVariable>sv)._data
            if data is None and (<SavedVariable>sv)._packed is not None:
                data = _saved_array_of((<SavedVariable>sv)._packed)
            if data is not None:
                out.append((f"saved_tensors[{i}]", data))
        return out

    @property
    def saved_tensors(self):
        """The tensors given to ``save_for_backward``, checked for in-place changes."""
        if self.saved_for_forward is not None:
            # While forward AD runs jvp (during apply), ctx.saved_tensors are
            # the ones saved for forward, as in torch.
            return tuple(self.saved_for_forward)
        if self._saved_cleared:
            raise RuntimeError(
                "saved_tensors can only be accessed once when clear_saved_tensors_on_access=True is "
                "set on the autograd.Function. Either access saved_tensors only once, or set "
                "clear_saved_tensors_on_access=False.")
        if self._released:
            _raise_released(self)
        if self._saved is None:
            return ()
        result = tuple(None if sv is None else (<SavedVariable>sv).unpack(self, True)
                       for sv in self._saved)
        if getattr(self._forward_cls, "clear_saved_tensors_on_access", False):
            # The caller's references become the only ones: each tensor can
            # be freed as soon as backward drops it.
            for sv in self._saved:
                if sv is not None:
                    (<SavedVariable>sv).reset()
            self._saved_cleared = True
        return result

    @property
    def saved_variables(self):
        _warnings.warn("'saved_variables' is deprecated; use 'saved_tensors'", DeprecationWarning,
                       stacklevel=2)
        return self.saved_tensors

    @property
    def _raw_saved_tensors(self):
        if self._released:
            _raise_released(self)
        return () if self._saved is None else self._saved

    cdef void release_variables(self):
        if self._saved is not None:
            for sv in self._saved:
                if sv is not None:
                    (<SavedVariable>sv).reset()
        self._released = True

    # -- backward ---------------------------------------------------------
    cdef list apply(self, list grads, bint create_graph):
        # See Note [Function outputs] for what each slot of `grads` is. The
        # engine has set grad mode to create_graph around this call.
        cdef Py_ssize_t i, n = len(grads)
        cdef InputMetadata meta
        cdef list args = [None] * n
        cdef tuple is_tensor_out = self._is_tensor_output
        for i in range(n):
            g = grads[i]
            if i < len(is_tensor_out) and not is_tensor_out[i]:
                continue                                  # non-tensor output: None
            meta = self.metadata_of(i)
            if g is None:
                if self.materialize_grads:
                    args[i] = _rg_wrap(rg_zeros_like_metadata(meta), meta.device)
            elif isinstance(g, Tensor):
                args[i] = g
            else:
                args[i] = _rg_wrap(_ensure_array(g), meta.device)
        user_fn = self._get_user_fn()
        if getattr(self._forward_cls, "boxed_grads_call", False):
            # One mutable list, so that backward can drop gradients early.
            result = user_fn(self, args)
        else:
            result = user_fn(self, *args)
        return self._check_backward_result(result, create_graph)

    cdef list _check_backward_result(self, object result, bint create_graph):
        # torch's PyNode::apply checks, with the same messages.
        cdef tuple is_var = self._is_variable_input
        cdef Py_ssize_t i, n, nin = len(is_var)
        cdef list out = []
        if not isinstance(result, tuple):
            result = (result,)
        elif type(result) is not tuple:
            result = tuple(result)
        n = len(result)
        if n > nin:
            # Extra gradients are allowed as long as they are all None.
            for i in range(nin, n):
                if result[i] is not None:
                    break
            else:
                result = result[:nin]
                n = nin
        if n != nin:
            raise RuntimeError(
                f"function {self.name()} returned an incorrect number of gradients (expected {nin}, "
                f"got {n}); backward must return one gradient (or None) per argument of forward")
        for i in range(n):
            r = result[i]
            if is_var[i]:
                if r is None:
                    out.append(None)
                elif isinstance(r, Tensor):
                    out.append(r if create_graph else (<Tensor>r)._array)
                else:
                    raise RuntimeError(
                        f"function {self.name()} returned an invalid gradient at position {i}: "
                        f"expected Variable or None (got {type(r).__name__}); backward must "
                        "return Tensors or None, one per argument of forward")
            elif r is not None:
                raise RuntimeError(
                    f"function {self.name()} returned a gradient different than None at position "
                    f"{i + 1}, but the corresponding forward input was not a Variable")
        return out


# ---------------------------------------------------------------------------
# Function.apply

cdef object _base_setup_context = None


def _register_function_defaults(setup_context):
    """The base class's setup_context: a Function that overrides it has a
    forward without ctx (called once by retrograd.autograd.function)."""
    global _base_setup_context
    _base_setup_context = setup_context


def _function_apply(cls, tuple args, dict kwargs):
    """``cls.apply(*args, **kwargs)`` for a custom Function class ``cls``."""
    cdef _FunctionBase ctx
    cdef Tensor t
    cdef Py_ssize_t i, nin = len(args)
    if _trace_slot != NULL:
        # A tracer cannot see into a custom Function's backward: it breaks
        # there, unless it inlines the Function, which the class (ABI 1.8)
        # lets it decide without searching the caller's frames for it.
        _rg_trace_event(RG_TRACE_FUNCTION, "autograd.Function:" + cls.__name__, args, (), cls)
        _rg_trace_event(RG_TRACE_BREAK, "autograd.Function:" + cls.__name__, args, (), None)
    cdef bint executable = False, any_needs = False
    cdef list is_var = [False] * nin
    cdef list needs = [False] * nin
    cdef list edges = []
    cdef object tok = None

    backward_cls = cls._backward_cls
    ctx = _FunctionBase.__new__(backward_cls)
    ctx.materialize_grads = True
    for i in range(nin):
        a = args[i]
        if isinstance(a, Tensor):
            t = <Tensor>a
            is_var[i] = True
            if _needs(t):
                needs[i] = True
                any_needs = True
    ctx.needs_input_grad = tuple(needs)
    ctx._is_variable_input = tuple(is_var)
    ctx.seq_nr = _rg_next_sequence_nr()
    executable = rg_tls_grad_enabled and any_needs
    if executable:
        for i in range(nin):
            if is_var[i]:
                t = <Tensor>args[i]
                edges.append(_edge_fn(t))
                edges.append(_edge_nr(t))
        ctx.set_next_edges(tuple(edges))
        if rg_anomaly_mode:
            _record_anomaly_trace(ctx)      # see _anomaly.pxi

    if _op_enter_slot != NULL:
        tok = _op_enter_slot(cls.__name__, ctx.seq_nr, args)
    setup_context = cls.setup_context
    overridden_setup = setup_context is not _base_setup_context
    prev = rg_tls_grad_enabled
    # forward runs with forward AD off too (torch's AutoFwGradMode(false)):
    # tangents come from jvp only, never from the ops inside forward.
    cdef bint fw_suspended = _forward_grad_slot != NULL
    try:
        _rg_set_grad_enabled(False)
        if fw_suspended:
            _forward_grad_slot("_fw_suspend", args, (), None)
        try:
            if overridden_setup:
                output = cls.forward(*args, **kwargs)
                setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args, **kwargs)
        finally:
            _rg_set_grad_enabled(prev)
            if fw_suspended and _forward_grad_slot != NULL:
                _forward_grad_slot("_fw_resume", args, (), None)
        if _forward_grad_slot != NULL:
            dirty = _as_tensor_tuple(ctx.dirty_tensors, "mark_dirty")
            nondiff = _as_tensor_tuple(ctx.non_differentiable, "mark_non_differentiable")
        result = _process_outputs(ctx, args, output, executable, overridden_setup)
        if _forward_grad_slot != NULL:
            # Forward AD: Function.jvp runs while ctx.saved_for_forward is
            # still set (ctx.saved_tensors returns it then, as torch).
            _fw_function(cls, ctx, args, result, dirty, nondiff)
    finally:
        ctx.saved_for_forward = None
        if _op_exit_slot != NULL:
            _op_exit_slot(tok)
    return result


cdef inline Py_ssize_t _index_in(object x, tuple items):
    # Identity search (tensors compare elementwise, and inputs are few).
    cdef Py_ssize_t i
    for i in range(len(items)):
        if items[i] is x:
            return i
    return -1


cdef tuple _as_tensor_tuple(object items, str what):
    if items is None:
        return ()
    if type(items) is not tuple:
        items = tuple(items)
    for i in range(len(items)):
        if not isinstance(items[i], Tensor):
            raise RuntimeError(
                f"{what} can only accept variables, but argument {i} is of type "
                f"{type(items[i]).__name__}")
    return <tuple>items


cdef object _process_outputs(_FunctionBase ctx, tuple inputs, object output, bint executable,
                             bint overridden_setup):
    # See Note [Function outputs].
    cdef bint unpack = not isinstance(output, tuple)     # (a namedtuple is several outputs too)
    cdef tuple outs = (output,) if unpack else tuple(output)
    cdef Py_ssize_t i, n = len(outs)
    cdef list results = [None] * n
    cdef list is_tensor_out = [False] * n
    cdef tuple dirty = _as_tensor_tuple(ctx.dirty_tensors, "mark_dirty")
    cdef tuple nondiff
    cdef tuple to_save_setup = ()
    cdef Tensor var
    cdef bint is_input, is_modified, differentiable
    ctx.dirty_tensors = None
    # The in-place change happened in forward: bump the version of every
    # dirty tensor (before the checks, as torch does).
    for d in dirty:
        (<Tensor>d)._version_counter.version += 1
    nondiff = _as_tensor_tuple(ctx.non_differentiable, "mark_non_differentiable")
    if overridden_setup and executable and ctx.to_save is not None:
        to_save_setup = tuple(ctx.to_save)

    for i in range(n):
        o = outs[i]
        if not isinstance(o, Tensor):
            if executable:
                ctx.add_input_metadata(_NON_TENSOR_META_ARRAY, _CPU)
            results[i] = o
            continue
        is_tensor_out[i] = True
        var = <Tensor>o
        is_input = _index_in(var, inputs) >= 0
        is_modified = _index_in(var, dirty) >= 0
        differentiable = executable and _index_in(var, nondiff) < 0 and _record(var._array)
        if executable:
            ctx.add_input_metadata(var._array, var._device)
        if not differentiable:
            if not _needs(var):
                results[i] = _alias_of(var) if (is_input and not is_modified) else var
            elif is_input:
                results[i] = _detached_alias(var)
            else:
                if var._base is None:
                    # (A view of an input keeps its history, as a view made
                    # under no_grad does.)
                    var._grad_fn = None
                    var._edge_cache = None
                    var._output_nr = 0
                    var._requires_grad = False
                results[i] = var
        elif is_modified:
            _rebase_dirty(ctx, var, i, n, is_input)
            results[i] = var
        elif is_input:
            if _index_in(var, to_save_setup) >= 0:
                raise RuntimeError(
                    f"{ctx.name()}: an input that is returned as-is as an output is being saved for "
                    "backward. This is not supported when setup_context is overridden: return "
                    "and save a view of the input instead (e.g. x.view_as(x)), or set up ctx "
                    "inside forward itself.")
            results[i] = _alias_of(var)
            (<Tensor>results[i])._grad_fn = ctx
            (<Tensor>results[i])._output_nr = <int>i
            _mark_custom_function_view(<Tensor>results[i])
        else:
            var._grad_fn = ctx
            var._output_nr = <int>i
            var._edge_cache = None
            if var._base is not None:
                _mark_custom_function_view(var)
            results[i] = var
    ctx._is_tensor_output = tuple(is_tensor_out)
    _mark_multi_output_function_views(ctx, results)

    for d in dirty:
        if _index_in(d, outs) < 0:
            raise RuntimeError(
                "Some elements marked as dirty during the forward method were not returned as "
                "output. The inputs that are modified inplace must all be outputs of the Function.")

    if executable:
        _save_variables(ctx)
    else:
        ctx.non_differentiable = None
    ctx.to_save = None
    if unpack:
        return results[0]
    return tuple(results)


cdef inline void _mark_custom_function_view(Tensor t):
    # A view output of a Function (torch's CreationMeta::IN_CUSTOM_FUNCTION):
    # neither it nor views of it may be modified in place, since rebasing
    # their history would bypass the Function's backward.
    if t._name is not _CM_INFERENCE_MODE:
        t._name = _CM_IN_CUSTOM_FUNCTION


cdef void _mark_multi_output_function_views(object ctx, list results):
    # torch: a Function with several differentiable outputs that are views is
    # a multi-output view op (CreationMeta::MULTI_OUTPUT_NODE), whose message
    # tells to replace the in-place op rather than clone one output.
    cdef Tensor t
    cdef Py_ssize_t i, nd = 0
    for r in results:
        if isinstance(r, Tensor) and (<Tensor>r)._grad_fn is ctx:
            nd += 1
    if nd < 2:
        return
    for i in range(len(results)):
        r = results[i]
        if isinstance(r, Tensor):
            t = <Tensor>r
            if t._grad_fn is ctx and t._base is not None and t._name is _CM_IN_CUSTOM_FUNCTION:
                t._name = (_CM_MULTI_OUTPUT_NODE, None, t._output_nr)


cdef Tensor _alias_of(Tensor var):
    # torch's _view_as_self_with_no_grad: a new tensor viewing var's data
    # (same array, shared version counter, var's base as its base).
    cdef Tensor t = _rg_wrap(var._array, var._device)
    _mark_view(t, var, var._array)
    return t


cdef Tensor _detached_alias(Tensor var):
    cdef Tensor t = _rg_wrap(var._array, var._device)
    t._version_counter = var._version_counter
    return t


cdef int _rebase_dirty(_FunctionBase ctx, Tensor var, Py_ssize_t i, Py_ssize_t n,
                       bint is_input) except -1:
    # An input modified in place by forward (ctx.mark_dirty): its history
    # becomes output i of the node (torch's rebase_history).
    cdef Tensor res
    cdef Tensor base = var._base
    if var._grad_fn is None and var._requires_grad:
        raise RuntimeError(
            "a leaf Variable that requires grad has been used in an in-place operation. "
            "Modify a clone() of it (or the leaf under `with retrograd.no_grad():`) instead.")
    if base is not None and base._grad_fn is None and base._requires_grad:
        raise RuntimeError(
            "a view of a leaf Variable that requires grad is being used in an in-place operation. "
            "Modify a clone() of it instead.")
    if not is_input:
        _warnings.warn(
            "ctx.mark_dirty() received a tensor that was not an input. Only input Tensors that "
            "have been mutated should be passed to ctx.mark_dirty().", UserWarning, stacklevel=2)
    if base is not None and n > 1:
        raise RuntimeError(
            "If your Function modifies inplace an input that is a view of another Tensor, your "
            "Function cannot return more than one Tensor. This is not supported by the current "
            "autograd engine. You should either make sure the input is not a view (using .clone() "
            "for example) or make your Function only return one Tensor (potentially splitting it "
            "into two Functions: one doing the inplace that returns a single Tensor and a second "
            "one that does the other operations).")
    var._grad = None
    res = _rg_wrap_with_grad_fn(var._array, var._device, ctx, <int>i)
    if base is not None and (base.needs_grad() or res.needs_grad()):
        _rebase_view_history(var, res, ctx.name())
    else:
        _rebase_history(var, res)
    return 0


cdef int _rebase_view_history(Tensor view, Tensor res, str name) except -1:
    # Note [CopySlices] for a view whose new value `res` is already in its
    # memory (forward wrote it, and the version is already bumped): the
    # steps of _copy_slices without the copy and the bump.
    cdef Tensor base = view._base
    cdef tuple geo = _view_geometry(view, base, name)
    new_base = <Tensor>_op__view_scatter(base, res, geo[0], geo[1], geo[2])
    _rebase_history(base, new_base)
    new_view = <Tensor>_op__as_strided(base, geo[0], geo[1], geo[2])
    _rebase_history(view, new_view)
    view._view_version = view._version_counter.version
    return 0


cdef int _save_variables(_FunctionBase ctx) except -1:
    cdef object to_save = ctx.to_save
    cdef list saved
    cdef Tensor t
    if to_save is None:
        return 0
    if type(to_save) is not tuple:
        to_save = tuple(to_save)
    saved = []
    for i in range(len(to_save)):
        x = to_save[i]
        if x is None:
            saved.append(None)
        elif isinstance(x, Tensor):
            t = <Tensor>x
            saved.append(_save_tensor(t, t._grad_fn is ctx))
        else:
            raise TypeError(
                f"save_for_backward can only save variables, but argument {i} is of type "
                f"{type(x).__name__}; save other objects as attributes of ctx (ctx.name = value)")
    ctx._saved = tuple(saved)
    return 0


# ---------------------------------------------------------------------------
# @once_differentiable: outputs that raise when differentiated.

def _delayed_error(str msg, tuple outputs):
    """Aliases of ``outputs`` whose grad_fn is one DelayedError node that
    raises ``msg`` if a backward reaches it (torch's _functions.DelayedError).

    Its edges lead to fresh leaves, as in torch: the aliases require grad
    without connecting to the rest of the graph."""
    # (torch's DelayedError node creates an Error node for its outputs: that
    # is the grad_fn users see.)
    cdef Error node = Error.__new__(Error)
    cdef Tensor o, leaf
    cdef list edges = []
    cdef list results = []
    cdef Py_ssize_t i
    node.msg = msg
    node.seq_nr = _rg_next_sequence_nr()
    for i in range(len(outputs)):
        x = outputs[i]
        if x is None:
            edges.append(None)
            edges.append(0)
            node.add_input_metadata(_NON_TENSOR_META_ARRAY, _CPU)
            continue
        if not isinstance(x, Tensor):
            raise TypeError(
                f"once_differentiable: backward returned a {type(x).__name__}; a backward returns "
                "Tensors or None")
        o = <Tensor>x
        leaf = _rg_wrap(o._array, o._device)
        leaf._version_counter = o._version_counter
        leaf._requires_grad = True
        edges.append(leaf.grad_accumulator())
        edges.append(0)
        node.add_input_metadata(o._array, o._device)
    node.set_next_edges(tuple(edges))
    for i in range(len(outputs)):
        x = outputs[i]
        if x is None:
            results.append(None)
        else:
            o = <Tensor>x
            results.append(_rg_wrap_with_grad_fn(o._array, o._device, node, <int>i))
    return tuple(results)


cdef object _raise_custom_function_view(Tensor t):
    # A view output of a Function (or an input it returned as-is) modified in
    # place: rebasing its history (Note [CopySlices]) would bypass the
    # Function's backward, so torch forbids it (CreationMeta::IN_CUSTOM_FUNCTION).
    fwd = getattr(type(t._grad_fn), "_forward_cls", None)
    name = fwd.__name__ if fwd is not None else t._grad_fn.name()
    raise RuntimeError(
        f"Output {t._output_nr} of {name} is a view and is being modified inplace. This view was "
        "created inside a custom Function (or because an input was returned as-is) and the "
        "autograd logic to handle view+inplace would override the custom backward associated "
        "with the custom Function, leading to incorrect gradients. This behavior is forbidden. "
        "You can fix this by cloning the output of the custom Function.")
