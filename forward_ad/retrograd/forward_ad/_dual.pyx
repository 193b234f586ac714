# cython: language_level=3
# Dual levels and tangents: PyTorch's ForwardADLevel / ForwardGrad, and the
# routine in core's forward-grad slot that pushes tangents through every op.
#
# Where tangents live: core's tangent storage on each Tensor (abi.pxd's
# rg_forward_grads), a dict {level key: tangent Tensor}
# (None when the tensor has none). A level's key is a serial number that is
# never reused, so a tangent left behind by an exited level (in a node's
# saved-tensor record, say) can never be mistaken for a tangent of a later
# level that happens to get the same index.
#
# Levels nest (unlike PyTorch): several may be active; the innermost is the
# default. While the JVP of level L runs, level L is suppressed on that
# thread, so the formula's own ops compute tangents for the OTHER levels only:
# tangents of different levels never mix, and the tangent of level L gets its
# own tangent at an outer level M (what nested jvp(jvp(...)) reads). Levels are
# processed outermost first, so an inner level's JVP sees `result` with its
# outer tangents already set.
#
# A view with no tangent of its own at a level sees its base's (a view of the
# base's tangent), except where it is marked not to: the primal that
# unpack_dual returns, and views made from it, are views of the dual tensor
# (differentiable back to it in reverse mode) but carry no tangent at that
# level, PyTorch's _fw_primal (a view that is not forward-differentiable).
# The marks live on the level (`_Level.no_inherit`), not in the tensor's
# tangent storage, so a primal stays a plain tensor to core (NumPy's
# functions accept it, its repr shows no tangent).
#
# Must never: keep a tangent alive past its level's exit (exit drops every
# tangent the level set), or leave the slot filled with no level active (an
# empty slot is what keeps the forward-AD-off cost at one branch per op).

from cpython.weakref cimport PyWeakref_NewRef
from libc.stdint cimport uintptr_t
cimport numpy as cnp

from retrograd.core.abi cimport (
    RG_ABI_MAJOR, RG_ABI_MINOR, import_core,
    Tensor, Node, Device, rg_register_forward_grad, rg_wrap, rg_set_view_of, rg_op_batched,
    rg_forward_grads, rg_set_forward_grads, rg_view_base, rg_node_saved_forward_grads,
    rg_same_dims, rg_bump_version,
)

# The ABI handshake (abi.pxd), before anything else runs.
import_core("retrograd-forward-ad")
# The core ABI this module was compiled against (major, minor).
BUILT_AGAINST = (RG_ABI_MAJOR, RG_ABI_MINOR)

import numpy as np

cnp.import_array()

import threading


cdef extern from *:
    """
    static __thread unsigned long long rg_fw_suppressed = 0;
    """
    unsigned long long rg_fw_suppressed

cdef enum:
    MAX_LEVELS = 64

cdef class _Level:
    cdef readonly int index               # what users see (0 = outermost)
    cdef readonly object key              # unique serial: the key in a tensor's tangent storage
    cdef list tensors                     # weakrefs to every tensor given a tangent here
    cdef readonly Py_ssize_t batch        # > 0: tangents carry a leading batch dimension of this size
    cdef dict no_inherit                  # {id(view): weakref}: views that do not see their base's tangent here


cdef list _levels = []                    # active levels, outermost first
_suspend_tls = threading.local()          # per thread: rg_fw_suppressed masks to restore


cdef list _suspended_stack():
    try:
        return _suspend_tls.stack
    except AttributeError:
        _suspend_tls.stack = []
        return _suspend_tls.stack

cdef unsigned long long _next_key = 0


# ---------------------------------------------------------------------------
# Tangent storage

cdef inline object _direct(Tensor t, object key):
    cdef object d = rg_forward_grads(t)
    if d is None:
        return None
    return (<dict>d).get(key)


cdef object _get_tangent(Tensor t, _Level lvl):
    # t's tangent at lvl; a view without one of its own sees its base's (a
    # view of the base's tangent, made on first use: PyTorch's fw_grad()),
    # unless it is marked not to.
    cdef object v = _direct(t, lvl.key)
    cdef Tensor base
    if v is not None:
        return v
    base = rg_view_base(t)
    if base is None:
        return None
    bt = _direct(base, lvl.key)
    if bt is None or _inherits_not(t, lvl):
        return None
    v = _view_of_base_tangent(t, base, <Tensor>bt, lvl)
    _store(t, lvl, v)
    return v


cdef bint _inherits_not(Tensor t, _Level lvl):
    # Whether view t is marked not to see its base's tangent at lvl. The
    # weakref tells a marked tensor from a later one given the same id.
    ref = lvl.no_inherit.get(id(t))
    return ref is not None and ref() is t


cdef _mark_no_inherit(Tensor t, _Level lvl):
    lvl.no_inherit[id(t)] = PyWeakref_NewRef(t, None)


cdef _store(Tensor t, _Level lvl, object tangent):
    cdef object d = rg_forward_grads(t)
    if d is None:
        rg_set_forward_grads(t, {lvl.key: tangent})
        lvl.tensors.append(PyWeakref_NewRef(t, None))
    else:
        if lvl.key not in <dict>d:
            lvl.tensors.append(PyWeakref_NewRef(t, None))
        (<dict>d)[lvl.key] = tangent


cdef inline uintptr_t _ptr(object a):
    if type(a) is np.ndarray:
        return <uintptr_t>a.__array_interface__["data"][0]
    return <uintptr_t>a.data.ptr


cdef tuple _scaled(tuple strides, Py_ssize_t isz_from, Py_ssize_t isz_to):
    return tuple([s // isz_from * isz_to for s in strides])


class _Strided:
    # An array interface over another array's memory (what
    # np.lib.stride_tricks.as_strided does, with a byte offset); keeps the
    # memory's owner alive.
    def __init__(self, owner, iface):
        self.owner = owner
        self.__array_interface__ = iface


cdef object _strided_like(object owner, object shape, object strides, Py_ssize_t byte_offset):
    if type(owner) is np.ndarray:
        iface = dict(owner.__array_interface__)
        iface["data"] = (_ptr(owner) + byte_offset, False)
        iface["shape"] = tuple(shape)
        iface["strides"] = tuple(strides)
        iface.pop("mask", None)
        return np.asarray(_Strided(owner, iface))
    import cupy
    return cupy.ndarray(tuple(shape), dtype=owner.dtype, memptr=owner.data + byte_offset,
                        strides=tuple(strides))


cdef object _same_layout(object like, object src):
    # `src`'s values in memory laid out as `like` (strides scaled to src's
    # item size), so that views of `like` can be replayed on it.
    cdef Py_ssize_t isz = like.itemsize, ist = src.dtype.itemsize
    if like.flags.c_contiguous:
        out = src.copy(order="C") if src.flags.c_contiguous is False else src.copy()
        return out
    if like.flags.f_contiguous:
        return src.copy(order="F")
    # general strides: one buffer spanning like's memory, viewed with its strides
    lo = 0
    hi = 0
    for n, s in zip(like.shape, like.strides):
        if n == 0:
            continue
        if s < 0:
            lo += (n - 1) * s
        else:
            hi += (n - 1) * s
    span = (hi - lo) // isz + 1
    mod = np if type(like) is np.ndarray else __import__("cupy")
    buf = mod.zeros(span, dtype=src.dtype)
    out = _strided_like(buf, like.shape, _scaled(tuple(like.strides), isz, ist), -lo // isz * ist)
    out[...] = src
    return out


cdef object _view_of_base_tangent(Tensor view, Tensor base, Tensor bt, _Level lvl):
    # The view's tangent: bt viewed the way `view` views `base` (behind the
    # batch dimension, for a batched level).
    va, ba, ta = view._array, base._array, bt._array
    cdef Py_ssize_t isp = ba.itemsize, ist = ta.dtype.itemsize
    if lvl.batch:
        if not _batched_layout_ok(ta, ba, lvl.batch):
            ta = _batched_same_layout(ba, ta, lvl.batch)
            nbt = _wrap_like(bt, ta)
            _store(base, lvl, nbt)
            bt = nbt
        off = (<Py_ssize_t>_ptr(va) - <Py_ssize_t>_ptr(ba)) // isp * ist
        arr = _strided_like(ta, (lvl.batch,) + tuple(va.shape),
                            (ta.strides[0],) + _scaled(tuple(va.strides), isp, ist), off)
        out = _wrap_like(bt, arr)
        _mark_view_of(out, bt)
        return out
    if tuple(ta.shape) != tuple(ba.shape) or tuple(ta.strides) != _scaled(tuple(ba.strides), isp, ist):
        # give the base a tangent laid out like the base itself (once)
        ta = _same_layout(ba, ta)
        nbt = _wrap_like(bt, ta)
        _store(base, lvl, nbt)
        bt = nbt
    off = (<Py_ssize_t>_ptr(va) - <Py_ssize_t>_ptr(ba)) // isp * ist
    arr = _strided_like(ta, va.shape, _scaled(tuple(va.strides), isp, ist), off)
    out = _wrap_like(bt, arr)
    _mark_view_of(out, bt)
    return out


cdef bint _batched_layout_ok(object ta, object ba, Py_ssize_t batch):
    cdef Py_ssize_t isp = ba.itemsize, ist = ta.dtype.itemsize
    return (tuple(ta.shape) == (batch,) + tuple(ba.shape)
            and tuple(ta.strides[1:]) == _scaled(tuple(ba.strides), isp, ist))


cdef object _batched_same_layout(object like, object src, Py_ssize_t batch):
    # One block per batch entry, each laid out like `like` (see _same_layout).
    mod = np if type(like) is np.ndarray else __import__("cupy")
    out = mod.empty((batch,) + tuple(like.shape), dtype=src.dtype)
    if like.flags.c_contiguous:
        out[...] = src
        return out
    cdef Py_ssize_t isz = like.itemsize, ist = src.dtype.itemsize
    lo = 0
    hi = 0
    for n, st in zip(like.shape, like.strides):
        if n == 0:
            continue
        if st < 0:
            lo += (n - 1) * st
        else:
            hi += (n - 1) * st
    span = (hi - lo) // isz + 1
    buf = mod.zeros(batch * span, dtype=src.dtype)
    out = _strided_like(buf, (batch,) + tuple(like.shape),
                        (span * ist,) + _scaled(tuple(like.strides), isz, ist), -lo // isz * ist)
    out[...] = src
    return out


cdef object _wrap_like(Tensor like, object array):
    return _core_wrap(array, like.device)


cdef _mark_view_of(Tensor view, Tensor base):
    rg_set_view_of(view, base)


cdef Tensor _core_wrap(object array, object device):
    # a new leaf around `array`, on `device` (a Device, as Tensor.device gives)
    return rg_wrap(array, <Device>device)


cdef object _fit(object tangent, Tensor out, Py_ssize_t batch=0):
    # A formula may return a broadcastable tangent (a constant, or one input's
    # tangent before broadcasting): give it the output's shape (behind the
    # batch dimension for a batched level), in memory of its own (in-place
    # ops write into tangents).
    if not isinstance(tangent, Tensor):
        tangent = _core_wrap(np.asarray(tangent, dtype=out._array.dtype)
                             if type(out._array) is np.ndarray
                             else __import__("cupy").asarray(tangent, dtype=out._array.dtype),
                             out.device)
    ta = (<Tensor>tangent)._array
    oa = out._array
    if not batch and type(ta) is np.ndarray and type(oa) is np.ndarray \
            and rg_same_dims(ta, oa) \
            and cnp.PyArray_DESCR(<cnp.ndarray>ta) == cnp.PyArray_DESCR(<cnp.ndarray>oa):
        return tangent                  # the common case, checked in C
    shape = oa.shape if not batch else (batch,) + tuple(oa.shape)
    if ta.shape != shape:
        tangent = tangent.expand(shape).clone()
    dt = oa.dtype
    if (<Tensor>tangent)._array.dtype != dt and dt.kind in "fc":
        # a formula mixing in a wider constant: the tangent has the primal's dtype
        tangent = tangent.to(dt)
    return tangent


# ---------------------------------------------------------------------------
# The slot routine

cdef inline bint _has_tangents(object x):
    cdef Tensor t
    if isinstance(x, Tensor):
        t = <Tensor>x
        base = rg_view_base(t)
        return rg_forward_grads(t) is not None or (base is not None
                                                   and rg_forward_grads(base) is not None)
    if type(x) is list or type(x) is tuple:
        for y in x:
            if isinstance(y, Tensor) and _has_tangents(y):
                return True
    return False


cdef object _tangent_of_arg(object x, _Level lvl):
    if isinstance(x, Tensor):
        return _get_tangent(<Tensor>x, lvl)
    if type(x) is list or type(x) is tuple:
        ts = [_get_tangent(<Tensor>y, lvl) if isinstance(y, Tensor) else None for y in x]
        for y in ts:
            if y is not None:
                return ts
    return None


cdef int _on_op(str op, tuple inputs, tuple outputs, object attrs) except -1:
    global rg_fw_suppressed
    cdef Py_ssize_t i, n
    cdef _Level lvl
    cdef bint any_tangent = False
    cdef unsigned long long bit
    if attrs is None and op[0] == "_":
        # A custom Function's forward runs with forward AD off, every level
        # (core brackets it with these two messages).
        if op == "_fw_suspend":
            _suspended_stack().append(rg_fw_suppressed)
            rg_fw_suppressed = ~0ULL
            return 0
        if op == "_fw_resume":
            rg_fw_suppressed = _suspended_stack().pop()
            return 0
    for x in inputs:
        if _has_tangents(x):
            any_tangent = True
            break
    if not any_tangent:
        return 0
    if attrs is None:
        if op == "_inplace":
            return _on_inplace(<Tensor>inputs[0], <Tensor>inputs[1])
        if op == "_snapshot":
            return _on_snapshot(<Tensor>inputs[0], <Tensor>outputs[0])
        return 0
    n = len(inputs)
    for li in range(len(_levels)):
        bit = 1ULL << li
        if rg_fw_suppressed & bit:
            continue
        lvl = <_Level>_levels[li]
        tans = [None] * n
        found = False
        for i in range(n):
            t = _tangent_of_arg(inputs[i], lvl)
            if t is not None:
                tans[i] = t
                found = True
        if not found:
            if lvl.no_inherit:
                _propagate_no_inherit(inputs, outputs, lvl)
            continue
        rg_fw_suppressed |= bit
        try:
            if lvl.batch:
                res = _batched_jvp(op, attrs, inputs, tans, outputs, lvl.batch)
            else:
                res = attrs(inputs, tans, outputs)
        finally:
            rg_fw_suppressed &= ~bit
        if res is not None:
            for i in range(len(outputs)):
                o = outputs[i]
                r = res[i]
                if r is not None and isinstance(o, Tensor):
                    _store(<Tensor>o, lvl, _fit(r, <Tensor>o, lvl.batch))
        if lvl.no_inherit:
            _propagate_no_inherit(inputs, outputs, lvl)
    _record_saved_tangents(inputs, outputs)
    return 0


cdef _propagate_no_inherit(tuple inputs, tuple outputs, _Level lvl):
    # A view of a marked view (unpack_dual's primal) is marked too: it has the
    # same base, whose tangent it must not see either (in PyTorch a view of a
    # non-forward-differentiable view is not forward-differentiable).
    cdef Tensor x, o
    for a in inputs:
        if not isinstance(a, Tensor) or not _inherits_not(<Tensor>a, lvl):
            continue
        x = <Tensor>a
        for b in outputs:
            if isinstance(b, Tensor):
                o = <Tensor>b
                if o is not x and rg_view_base(o) is not None and rg_view_base(o) is rg_view_base(x) \
                        and _direct(o, lvl.key) is None:
                    _mark_no_inherit(o, lvl)


# Ops whose JVP formula only broadcasts tangents against primals (the table's
# `batched: true`): a batched level runs them once on the whole batch.


cdef object _batched_jvp(str op, object attrs, tuple inputs, list tans, tuple outputs,
                         Py_ssize_t batch):
    # A batched level: tangents are (batch, *primal.shape). Elementwise ops
    # take them in one call, each tangent given singleton dimensions so that
    # it broadcasts like its primal against the output; every other op runs
    # its JVP once per batch entry and stacks (the engine's per-node fallback
    # of is_grads_batched, for forward mode).
    cdef Py_ssize_t b, i, k, n = len(tans), nout = len(outputs)
    if rg_op_batched(op) and isinstance(outputs[0], Tensor):
        nd = (<Tensor>outputs[0])._array.ndim
        aligned = list(tans)
        for i in range(n):
            t = aligned[i]
            if isinstance(t, Tensor):
                extra = nd - ((<Tensor>t)._array.ndim - 1)
                if extra > 0:
                    aligned[i] = t.reshape((batch,) + (1,) * extra + tuple((<Tensor>t)._array.shape[1:]))
        return attrs(inputs, aligned, outputs)
    per = []
    for b in range(batch):
        tb = [None] * n
        for i in range(n):
            t = tans[i]
            if isinstance(t, Tensor):
                tb[i] = t[b]
            elif type(t) is list:
                tb[i] = [None if y is None else y[b] for y in t]
        per.append(attrs(inputs, tb, outputs))
    if all(r is None for r in per):
        return None
    from retrograd.core import stack
    res = []
    for k in range(nout):
        o = outputs[k]
        if not isinstance(o, Tensor) or all(r is None or r[k] is None for r in per):
            res.append(None)
            continue
        zero = None
        cols = []
        for r in per:
            if r is None or r[k] is None:
                if zero is None:
                    zero = _core_wrap(_zeros_same_layout((<Tensor>o)._array), o.device)
                cols.append(zero)
            else:
                cols.append(_fit(r[k], <Tensor>o))
        res.append(stack(cols, 0))
    return tuple(res)


cdef _record_saved_tangents(tuple inputs, tuple outputs):
    # The node that saved these inputs / this output keeps their tangents,
    # for a create_graph backward (forward-over-reverse; see core's
    # _jvp_support.pxi).
    cdef Tensor o
    cdef Node node
    cdef dict saved
    if not outputs or not isinstance(outputs[0], Tensor):
        return
    o = <Tensor>outputs[0]
    node = o._grad_fn
    if node is None:
        return
    saved = rg_node_saved_forward_grads(node)
    for a in inputs:
        if isinstance(a, Tensor) and rg_forward_grads(<Tensor>a) is not None:
            saved[id((<Tensor>a)._array)] = rg_forward_grads(<Tensor>a)
    for a in outputs:
        if isinstance(a, Tensor) and rg_forward_grads(<Tensor>a) is not None:
            saved[id((<Tensor>a)._array)] = rg_forward_grads(<Tensor>a)


cdef int _on_snapshot(Tensor self, Tensor snap) except -1:
    # Core copies `self` before an in-place op: the copy gets (copies of) its
    # tangents, since self's tangents are about to be overwritten in place.
    cdef _Level lvl
    for li in range(len(_levels)):
        if rg_fw_suppressed & (1ULL << li):
            continue
        lvl = <_Level>_levels[li]
        t = _get_tangent(self, lvl)
        if t is not None:
            _store(snap, lvl, _core_wrap((<Tensor>t)._array.copy(), snap.device))
    return 0


cdef int _on_inplace(Tensor self, Tensor res) except -1:
    # `res` (computed out of place) was written into `self`. Its tangent
    # becomes self's, written INTO self's tangent where one exists (a view's
    # tangent is a view of its base's: the base sees the change), PyTorch's
    # in-place forward-grad semantics.
    cdef _Level lvl
    cdef Tensor base
    for li in range(len(_levels)):
        if rg_fw_suppressed & (1ULL << li):
            continue
        lvl = <_Level>_levels[li]
        rt = _direct(res, lvl.key)
        st = _get_tangent(self, lvl)
        if rt is None and st is None:
            continue
        if st is None:
            base = rg_view_base(self)
            if base is None or _inherits_not(self, lvl):
                # a fresh copy: rt may be another tensor's tangent (copy_).
                # A view marked not to see its base's tangent gets one of its
                # own, leaving the base's alone (PyTorch: an in-place op on a
                # non-forward-differentiable view sets the view's tangent).
                _store(self, lvl, _core_wrap((<Tensor>rt)._array.copy(), self.device))
                continue
            # the base gets a zero tangent, of which self's is a view
            ba = base._array
            if lvl.batch:
                z = _batched_same_layout(ba, ba.dtype.type(0), lvl.batch)
            else:
                z = _zeros_same_layout(ba)
            _store(base, lvl, _core_wrap(z, base.device))
            st = _get_tangent(self, lvl)
        sa = (<Tensor>st)._array
        if rt is None:
            sa[...] = 0
        else:
            sa[...] = (<Tensor>rt)._array
        rg_bump_version(<Tensor>st)
    return 0


cdef object _zeros_same_layout(object like):
    z = like.copy(order="K")
    z[...] = 0
    if tuple(z.strides) == tuple(like.strides):
        return z
    return _same_layout(like, z)


# ---------------------------------------------------------------------------
# Levels

def enter_dual_level():
    """Enter a new forward-AD level and return its index.

    Tangents given with ``make_dual`` at this level are pushed through every
    op until ``exit_dual_level`` drops them. Prefer ``with dual_level():``,
    which exits the level even when an error is raised.

    Unlike torch, which allows one level at a time (entering a second raises
    "Nested forward mode AD is not supported"), levels nest here: the new
    level is the innermost, the default of ``make_dual`` and
    ``unpack_dual``, and its index is the number of levels active before it.

    Returns
    -------
    int
        The new level's index (0 for the outermost).

    Raises
    ------
    RuntimeError
        When the maximum number of levels is already active.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.autograd.forward_ad as fwAD
    >>> level = fwAD.enter_dual_level()
    >>> level
    0
    >>> x = fwAD.make_dual(rg.tensor([1.0, 2.0]), rg.tensor([1.0, 0.0]))
    >>> fwAD.unpack_dual(x * x).tangent
    tensor([2., 0.])
    >>> fwAD.exit_dual_level(level=level)
    """
    return _enter(0)


def _enter_batched_dual_level(batch):
    """A level whose tangents carry a leading batch dimension of size
    ``batch``: one forward pass pushes ``batch`` tangents (what
    ``jacobian(..., strategy="forward-mode", vectorize=True)`` uses)."""
    if not isinstance(batch, int) or batch < 1:
        raise ValueError(f"batch must be a positive int, got {batch!r}")
    return _enter(batch)


cdef int _enter(Py_ssize_t batch) except -1:
    global _next_key
    cdef _Level lvl
    if len(_levels) >= MAX_LEVELS:
        raise RuntimeError(f"enter_dual_level: at most {MAX_LEVELS} dual levels can be active at once")
    lvl = _Level.__new__(_Level)
    lvl.batch = batch
    lvl.index = len(_levels)
    lvl.key = _next_key
    _next_key += 1
    lvl.tensors = []
    lvl.no_inherit = {}
    _levels.append(lvl)
    if len(_levels) == 1:
        rg_register_forward_grad(_on_op)
    return lvl.index


def exit_dual_level(*, level=None):
    """Exit the innermost forward-AD level and drop every tangent it set.

    Tensors made at the level stay valid as tensors; they no longer carry
    a tangent of it. Levels exit in the reverse order they were entered.

    Parameters
    ----------
    level : int, optional
        Keyword-only. The level to exit, which must be the innermost; None
        (the default) exits the innermost.

    Returns
    -------
    None

    Raises
    ------
    RuntimeError
        When no level is active, or ``level`` is not the innermost active
        level.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.autograd.forward_ad as fwAD
    >>> level = fwAD.enter_dual_level()
    >>> x = fwAD.make_dual(rg.tensor([1.0, 2.0]), rg.tensor([1.0, 1.0]))
    >>> fwAD.unpack_dual(x).tangent
    tensor([1., 1.])
    >>> fwAD.exit_dual_level(level=level)
    >>> fwAD.unpack_dual(x).tangent is None
    True
    """
    cdef _Level lvl
    if not _levels:
        raise RuntimeError("exit_dual_level: no dual level is active (enter one with "
                           "enter_dual_level() or `with dual_level():`)")
    lvl = <_Level>_levels[-1]
    if level is not None and level != lvl.index:
        if not isinstance(level, int) or level < 0 or level >= len(_levels):
            raise RuntimeError(f"exit_dual_level: level {level!r} is not active (active levels: "
                               f"0..{len(_levels) - 1})")
        raise RuntimeError(
            f"exit_dual_level: level {level} is not the innermost active level ({lvl.index}); "
            "levels exit in the reverse order they were entered")
    _levels.pop()
    if not _levels:
        rg_register_forward_grad(NULL)
    for ref in lvl.tensors:
        t = ref()
        if t is not None:
            d = rg_forward_grads(<Tensor>t)
            if d is not None:
                (<dict>d).pop(lvl.key, None)
                if not d:
                    rg_set_forward_grads(<Tensor>t, None)
    lvl.tensors = []
    lvl.no_inherit = {}


cdef _Level _resolve(object level, str what):
    if not _levels:
        raise RuntimeError(
            "Trying to create a dual Tensor for forward AD but no level exists, make sure to "
            "enter_dual_level() first." if what == "make_dual" else
            f"{what}: no dual level is active")
    if level is None:
        return <_Level>_levels[-1]
    if not isinstance(level, int) or isinstance(level, bool):
        raise TypeError(f"{what}: level must be an int, got {type(level).__name__}")
    if level < 0 or level >= len(_levels):
        raise RuntimeError(f"{what}: level {level} is not active (active levels: 0..{len(_levels) - 1})")
    return <_Level>_levels[level]


def _active_levels():
    return [(<_Level>l).index for l in _levels]


cdef object _alias_without(Tensor t, _Level lvl):
    # A view of t that is differentiable back to t and keeps t's tangents of
    # the other levels, but not lvl's: the view op runs with lvl suppressed
    # (so it computes no tangent of lvl), and the view is marked not to see
    # its base's tangent of lvl either (PyTorch's _fw_primal).
    global rg_fw_suppressed
    cdef unsigned long long bit = 1ULL << lvl.index
    cdef unsigned long long prev = rg_fw_suppressed
    rg_fw_suppressed |= bit
    try:
        out = t[...]
    finally:
        rg_fw_suppressed = prev
    _mark_no_inherit(<Tensor>out, lvl)
    return out


def make_dual(tensor, tangent, *, level=None):
    """Attach a tangent to a tensor: a dual tensor for forward-mode AD.

    Returns a view of ``tensor`` whose tangent at ``level`` is ``tangent``
    (``torch.autograd.forward_ad.make_dual``). Every op on it (and on what
    is computed from it) computes the output's tangent too, the
    Jacobian-vector product, read with ``unpack_dual``. ``tensor`` itself is
    unchanged, and the view stays differentiable back to it for reverse
    mode. If the tangent's memory layout differs from the primal's, it is
    copied into the primal's layout.

    Parameters
    ----------
    tensor : Tensor
        The primal, floating point or complex.
    tangent : Tensor
        Its tangent: same shape and device, floating point or complex, and
        without a tangent of its own at ``level``. At a batched level (what
        ``jacobian(..., strategy="forward-mode", vectorize=True)`` uses) it
        has a leading batch dimension.
    level : int, optional
        Keyword-only. The level to attach it at; None (the default) is the
        innermost active level.

    Returns
    -------
    Tensor
        The dual tensor (a view of ``tensor``).

    Raises
    ------
    RuntimeError
        When no level is active, ``level`` is not active, the shapes or
        devices differ, or ``tangent`` has a tangent at the same level.
    TypeError
        When ``tensor`` or ``tangent`` is not a Tensor, or ``level`` not an int.
    ValueError
        When either is not floating point or complex.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.autograd.forward_ad as fwAD
    >>> x = rg.tensor([0.0, 1.0])
    >>> v = rg.tensor([1.0, 1.0])
    >>> with fwAD.dual_level():
    ...     dual = fwAD.make_dual(x, v)
    ...     print(dual)
    ...     y = dual.exp() * 2
    ...     print(fwAD.unpack_dual(y).tangent)     # 2 exp(x) * v
    tensor([0., 1.], tangent=tensor([1., 1.]))
    tensor([2.      , 5.436564])
    """
    cdef _Level lvl = _resolve(level, "make_dual")
    if not isinstance(tensor, Tensor):
        raise TypeError(f"make_dual: expected a Tensor as primal, got {type(tensor).__name__}")
    if not isinstance(tangent, Tensor):
        raise TypeError(f"make_dual: expected a Tensor as tangent, got {type(tangent).__name__}")
    cdef Tensor p = <Tensor>tensor, tg = <Tensor>tangent
    if _get_tangent(tg, lvl) is not None:
        # torch: a tangent may not itself carry a tangent of the same level
        # (its own tangent would be lost); one of another level is fine.
        raise RuntimeError(
            "Setting a forward grad that itself has a forward gradient at the same level"
            f"{lvl.index} is not supported.")
    if p._array.dtype.kind not in "fc":
        raise ValueError(f"Expected primal to be floating point or complex, but got: {p._array.dtype}")
    if tg._array.dtype.kind not in "fc":
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {tg._array.dtype}")
    if lvl.batch:
        if tuple(tg._array.shape) != (lvl.batch,) + tuple(p._array.shape):
            raise RuntimeError(
                f"make_dual: level {lvl.index} is batched ({lvl.batch} tangents): expected a tangent "
                f"of shape {[lvl.batch] + list(p._array.shape)}, got {list(tg._array.shape)}")
        out = _alias_without(p, lvl)
        if not _batched_layout_ok(tg._array, p._array, lvl.batch):
            tg = _core_wrap(_batched_same_layout(p._array, tg._array, lvl.batch), p.device)
        _store(<Tensor>out, lvl, tg)
        return out
    if tuple(tg._array.shape) != tuple(p._array.shape):
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the original "
            f"Tensor, this is not supported. Tensor is of size {list(p._array.shape)} while the given "
            f"forward gradient is of size {list(tg._array.shape)}.")
    if tg.device != p.device:
        raise RuntimeError(f"make_dual: the tangent is on {tg.device} but the primal on {p.device}; "
                           "move it with .to(device) first")
    out = _alias_without(p, lvl)
    ta = tg._array
    isp, ist = p._array.itemsize, ta.dtype.itemsize
    if ta.ndim and tuple(ta.strides) != _scaled(tuple(p._array.strides), isp, ist):
        # tangents share their primal's layout (views of the primal replay on it)
        tg = _core_wrap(_same_layout(p._array, ta), p.device)
    _store(<Tensor>out, lvl, tg)
    return out


def unpack_dual(tensor, *, level=None):
    """Split a dual tensor into its primal and its tangent.

    As ``torch.autograd.forward_ad.unpack_dual``: returns
    ``UnpackedDualTensor(primal, tangent)``, where ``tangent`` is the
    tensor's tangent at ``level`` (the Jacobian-vector product of what was
    computed), or None where it has none (no level active, or the tensor
    does not depend on any dual tensor of that level). ``primal`` is a view
    of ``tensor`` (differentiable back to it in reverse mode) that carries no
    tangent at ``level``, nor do views of it or what is computed from it; it
    keeps its tangents of the other active levels.

    Parameters
    ----------
    tensor : Tensor
        The tensor to split.
    level : int, optional
        Keyword-only. The level to read; None (the default) is the innermost
        active level.

    Returns
    -------
    UnpackedDualTensor
        The named tuple ``(primal, tangent)``.

    Raises
    ------
    TypeError
        When ``tensor`` is not a Tensor, or ``level`` not an int.
    RuntimeError
        When ``level`` is given and not active.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.autograd.forward_ad as fwAD
    >>> x = rg.tensor([1.0, 2.0])
    >>> with fwAD.dual_level():
    ...     y = fwAD.make_dual(x, rg.tensor([1.0, 0.0])) ** 2
    ...     primal, tangent = fwAD.unpack_dual(y)
    ...     print(tangent)
    ...     print(fwAD.unpack_dual(x))
    tensor([2., 0.])
    UnpackedDualTensor(primal=tensor([1., 2.]), tangent=None)
    """
    from retrograd.forward_ad import UnpackedDualTensor
    if not isinstance(tensor, Tensor):
        raise TypeError(f"unpack_dual: expected a Tensor, got {type(tensor).__name__}")
    if not _levels:
        return UnpackedDualTensor(tensor, None)
    cdef _Level lvl = _resolve(level, "unpack_dual")
    t = _get_tangent(<Tensor>tensor, lvl)
    if t is None:
        return UnpackedDualTensor(tensor, None)
    return UnpackedDualTensor(_alias_without(<Tensor>tensor, lvl), t)


def _tangents(tensor):
    """{level index: tangent} of a tensor at the active levels (for tests and reprs)."""
    out = {}
    for l in _levels:
        t = _get_tangent(<Tensor>tensor, <_Level>l)
        if t is not None:
            out[(<_Level>l).index] = t
    return out
