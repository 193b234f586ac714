# NumPy's ufunc protocol on tensors (Tensor.__array_ufunc__). Part of _ops.pyx.
#
# np.exp(t), np.add(t, 1), np.maximum(a, t), t1 @ ... through np.matmul: the
# ufunc call runs the retrograd op of the same meaning (NumPy's: its
# promotion and broadcasting are what the kernels do), so the result is a
# Tensor that records the graph. Must never silently drop a graph: a ufunc
# or ufunc method (reduce, accumulate, at, outer, ...) without a retrograd
# counterpart raises TypeError naming it whenever a tensor takes part,
# grad or not. Predicates whose results are bool or integer
# (_ARRAY_UFUNCS: np.isnan(t), np.logical_and(m, n)) carry no gradient and
# are their own counterparts: they run on the arrays and give Tensors. A
# ufunc with a counterpart called with keywords (out=, where=, dtype=)
# raises when a tensor requires grad, and runs on the arrays otherwise.

from retrograd.core._array_module cimport _ensure_array


# ufunc name -> the retrograd function (looked up at call time: generated ops)
_UFUNC_OPS = {
    "add": "add", "subtract": "sub", "multiply": "mul", "divide": "div",
    "true_divide": "true_divide", "floor_divide": "floor_divide", "remainder": "remainder",
    "power": "pow", "negative": "neg", "absolute": "abs", "sign": "sign",
    "exp": "exp", "exp2": "exp2", "expm1": "expm1", "log": "log", "log2": "log2",
    "log10": "log10", "log1p": "log1p", "sqrt": "sqrt", "square": "square",
    "reciprocal": "reciprocal", "sin": "sin", "cos": "cos", "tan": "tan",
    "arcsin": "asin", "arccos": "acos", "arctan": "atan", "arctan2": "atan2",
    "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "floor": "floor", "ceil": "ceil",
    "trunc": "trunc", "rint": "round", "maximum": "maximum", "minimum": "minimum",
    "matmul": "matmul", "less": "lt", "less_equal": "le", "greater": "gt",
    "greater_equal": "ge", "equal": "eq", "not_equal": "ne",
}

# ufuncs with bool or integer results: never a gradient, computed on the arrays
_ARRAY_UFUNCS = frozenset({
    "isnan", "isinf", "isfinite", "signbit", "logical_and", "logical_or", "logical_xor",
    "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift", "right_shift",
})

# ufuncs whose NumPy meaning on integer inputs differs from the op's (integer
# reciprocal is integer division in NumPy): integers take the array path.
_INT_ARRAY_PATH = {"reciprocal"}


cdef bint _graph_at_stake(tuple inputs, dict kwargs):
    if _forward_grad_slot != NULL:
        # a dual tensor's tangent would be dropped just the same
        for a in inputs:
            if isinstance(a, Tensor) and (<Tensor>a)._fw_grads is not None:
                return True
    if not rg_tls_grad_enabled:
        return False
    for a in inputs:
        if isinstance(a, Tensor) and (<Tensor>a).needs_grad():
            return True
    out = kwargs.get("out")
    if out is not None:
        for a in (out if isinstance(out, tuple) else (out,)):
            if isinstance(a, Tensor) and (<Tensor>a).needs_grad():
                return True
    return False


cdef bint _all_integer(tuple inputs):
    cdef object dt
    for a in inputs:
        dt = np.asarray((<Tensor>a)._array if isinstance(a, Tensor) else a).dtype
        if dt.kind == "c" or _is_floating_dtype(dt):
            return False
    return True


cdef tuple _protocol_operands(tuple inputs):
    # A ufunc's operands as the op takes them (Note [Non-Tensor arguments]):
    # lists and tuples become arrays (NumPy's meaning), and a number before a
    # tensor becomes a 0-d array of the dtype NumPy would give the pair, so
    # np.maximum(2.0, t) promotes as NumPy does and the op, which refuses a
    # number as its input, gets an array.
    cdef list out = list(inputs)
    cdef Py_ssize_t i
    for i in range(len(out)):
        a = out[i]
        if type(a) is list or type(a) is tuple:
            out[i] = np.asarray(a)
    if len(out) == 2 and not isinstance(out[0], Tensor) and isinstance(out[1], Tensor) and (
            type(out[0]) in (float, int, bool, complex) or isinstance(out[0], np.generic)):
        out[0] = np.asarray(out[0], dtype=np.result_type(out[0], (<Tensor>out[1])._array.dtype))
    return tuple(out)


cdef object _array_ufunc(object ufunc, str method, tuple inputs, dict kwargs):
    name = getattr(ufunc, "__name__", str(ufunc))
    extra = {k: v for k, v in kwargs.items() if not (k == "out" and v is None)}
    opname = _UFUNC_OPS.get(name)
    if method == "__call__" and opname is not None and not extra \
            and not (name in _INT_ARRAY_PATH and _all_integer(inputs)):
        return _UFUNC_FUNCS[opname](*_protocol_operands(inputs))
    if method == "__call__" and name in _ARRAY_UFUNCS:
        return _ufunc_on_arrays(ufunc, method, inputs, kwargs)
    if opname is None or method != "__call__":
        what = f"numpy.{name}" if method == "__call__" else f"numpy.{name}.{method}"
        why = "has no retrograd counterpart" if method == "__call__" else \
            f"(the ufunc method {method!r}) has no retrograd counterpart"
        if _graph_at_stake(inputs, kwargs):
            why += " (a tensor here requires grad: its autograd graph would be dropped)"
        raise TypeError(
            f"{what} {why}. Call it on plain arrays instead: np.asarray(t) or t.detach().numpy() "
            "first; or use retrograd ops (e.g. rg.exp(t), t.sum(dim=0)) to keep the graph")
    if _graph_at_stake(inputs, kwargs):
        if method == "__call__" and "out" not in extra:
            # np.isnan(t), np.signbit(t): a bool or integer result carries no
            # gradient, so no graph is dropped
            res = ufunc(*_arrays_of(inputs), **_arrays_of(extra))
            rs = res if isinstance(res, tuple) else (res,)
            if _builtins.all(np.asarray(r).dtype.kind in "biu" for r in rs):
                return _wrap_results(res, inputs)
        what = f"numpy.{name}" if method == "__call__" else f"numpy.{name}.{method}"
        if method == "__call__" and opname is not None:
            why = f"with keyword(s) {', '.join(sorted(extra))}"
        elif method == "__call__":
            why = "has no retrograd counterpart"
        else:
            why = f"(the ufunc method {method!r}) has no retrograd counterpart"
        raise TypeError(
            f"{what} {why}, so on a tensor that requires grad it would drop the autograd graph: "
            "use retrograd ops (e.g. rg.exp(t), t.sum(dim=0), t.clamp_(...)), or pass t.detach() / "
            "np.asarray(t) if a plain array is what you want")
    return _ufunc_on_arrays(ufunc, method, inputs, kwargs)


cdef object _ufunc_on_arrays(object ufunc, str method, tuple inputs, dict kwargs):
    # No graph at stake: NumPy computes on the arrays; results are Tensors
    # (out= tensors are written in place, their versions bumped).
    out = kwargs.get("out")
    outs = ()
    if out is not None:
        outs = out if isinstance(out, tuple) else (out,)
        for o in outs:
            if isinstance(o, Tensor):
                _check_inplace(<Tensor>o)
        kwargs = dict(kwargs)
        kwargs["out"] = tuple(_arrays_of(o) for o in outs)
    res = getattr(ufunc, method)(*_arrays_of(inputs), **_arrays_of(kwargs))
    for o in outs:
        if isinstance(o, Tensor):
            (<Tensor>o)._version_counter.version += 1
    if outs:
        wrapped = tuple(o for o in outs)
        return wrapped[0] if len(wrapped) == 1 else wrapped
    if res is None:                     # ufunc.at works in place
        for a in inputs[:1]:
            if isinstance(a, Tensor):
                if rg_anomaly_mode:
                    _record_inplace_trace((<Tensor>a)._version_counter)
                (<Tensor>a)._version_counter.version += 1
        return None
    return _wrap_results(res, inputs)


cdef object _wrap_results(object res, tuple inputs):
    cdef Device dev = _CPU
    for a in inputs:
        if isinstance(a, Tensor):
            dev = (<Tensor>a)._device
            break
    if isinstance(res, tuple):
        return tuple(_rg_wrap(_ensure_array(np.asarray(r)), dev) for r in res)
    return _rg_wrap(_ensure_array(np.asarray(res)), dev)


# the generated op functions, by name (this file is included after them)
_UFUNC_FUNCS = {name: globals()[name] for name in set(_UFUNC_OPS.values())}
