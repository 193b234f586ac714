"""Programs: a list of steps made into one straight-line Python function.

Two forms of each program are generated from the same steps:

- the array form (the numpy backend): values are arrays, an op with a
  verified NumPy kernel (_kernels.py) writes into a buffer allocated once
  per guard key (temporaries only, reused when their lifetimes do not
  overlap), any other op is called on tensors made around the arrays with
  grad mode off; no node is made.
- the tensor form: every step calls its op on tensors, with grad mode as
  the caller has it, so the graph is recorded (a backward program run for
  ``create_graph=True``).
"""
from __future__ import annotations

import importlib
import inspect
import itertools

import numpy as np

from retrograd.compile import _arrays, _kernels, _tracer
from retrograd.compile._trace import UNSET, Ref, Step

_counter = itertools.count()


def live_steps(steps, needed):
    """The steps needed to compute the slots ``needed`` (dead code removed),
    in order, and every slot they read."""
    need = set(needed)
    keep = []
    for st in reversed(steps):
        if any(o in need for o in st.outs):
            keep.append(st)
            need.update(st.refs())
    keep.reverse()
    return keep, need


def merge_common(steps, protected, renamed, seen):
    """``steps`` with common subexpressions merged: a step that calls the
    same function as an earlier one on the same arguments (slots compared
    after renaming, constants by value) is dropped, and its results are
    renamed to the earlier step's (``renamed``: slot -> slot, updated).
    ``seen`` maps each kept step's key to its results (updated): pass the
    same two dicts to merge a backward with its forward.

    Slots are single values (an in-place op makes a new slot, and in-place
    ops on views break the trace), so equal calls give equal values. Random
    draws and factories are never merged: each call draws or makes anew. A
    step writing a ``protected`` slot (a result of the function, a
    gradient) is kept, so that each is an array of its own."""
    kept = []
    for st in steps:
        if renamed and any(s in renamed for s in st.refs()):
            st = Step(st.kind, st.name, st.fn, _renamed(st.args, renamed), st.outs, st.cast)
        if st.kind == "op" and st.fn is not None:
            key = (st.fn, _value_key(st.args))
            first = seen.get(key)
            if first is None:
                seen[key] = st.outs
            elif len(first) == len(st.outs) and not any(o in protected for o in st.outs):
                renamed.update(zip(st.outs, first))
                continue
        kept.append(st)
    return kept


def _renamed(x, renamed):
    t = type(x)
    if t is Ref:
        return Ref(renamed.get(x.slot, x.slot))
    if t is tuple or t is list:
        return t([_renamed(y, renamed) for y in x])
    return x


def _value_key(x):
    """A hashable key equal for arguments that give an op the same value:
    slots by number, plain values by type and value (1, 1.0 and True
    differ; -0.0 and 0.0 too), arrays by dtype, shape and bytes, anything
    else by identity (the steps keep it alive)."""
    t = type(x)
    if t is Ref:
        return ("r", x.slot)
    if t is tuple or t is list:
        return (t.__name__,) + tuple([_value_key(y) for y in x])
    if x is None or t is bool or t is int or t is str:
        return (t.__name__, x)
    if t is float:
        return ("f", x.hex())
    if t is slice:
        return ("s", _value_key(x.start), _value_key(x.stop), _value_key(x.step))
    if t is np.ndarray or isinstance(x, np.generic):
        return ("a", x.dtype.str, x.shape, x.tobytes())
    if isinstance(x, np.dtype):
        return ("d", x.str)
    return ("id", id(x))


_KWONLY: dict = {}


def _kwonly(fn):
    """The names of ``fn``'s keyword-only parameters in order: the trace
    reports every argument of an op positionally (abi.pxd)."""
    names = _KWONLY.get(fn)
    if names is None:
        try:
            params = inspect.signature(fn).parameters.values()
            names = [p.name for p in params if p.kind is p.KEYWORD_ONLY]
            n_pos = sum(1 for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
        except (TypeError, ValueError):
            names, n_pos = [], None
        names = (n_pos, names)
        try:
            _KWONLY[fn] = names
        except TypeError:
            pass
    return names


def _call_args(fn, args, src):
    """Source of the arguments of a call of ``fn`` with the traced ``args``."""
    n_pos, kw = _kwonly(fn)
    parts = [src(a) for a in args]
    if n_pos is None or not kw or len(args) <= n_pos:
        return ", ".join(parts)
    return ", ".join(parts[:n_pos] + [f"{k}={p}" for k, p in zip(kw, parts[n_pos:])])


try:
    # NumPy's errstate is a context variable: setting it costs a fraction of
    # entering np.errstate (about 1 us, a few percent of a small program).
    # (imported by name: a private module, which type checkers do not see)
    _umath = importlib.import_module("numpy._core._multiarray_umath")
    _ERRSTATE = _umath._extobj_contextvar
    _QUIET = _umath._make_extobj(all="ignore")
except (ImportError, AttributeError):          # another NumPy layout
    _ERRSTATE = _QUIET = None


def _cast(a, dtype):
    return a if a.dtype == dtype else a.astype(dtype)


def _cast_t(t, dtype):
    return t if t.dtype == dtype else t.to(dtype)


class Program:
    """``run(*values) -> tuple`` over the slots ``args`` returning ``outs``
    (None entries give None); ``consts`` are (slot, tensor) read at each call.

    Fused loops (the numba backend) write their values as rows of one 2-d
    block per loop. ``packable``: slots of ``outs`` that may be returned as
    rows of their block: the result then has the other outs, in order, then
    the blocks, whose rows ``packed_outs`` lists (a slot or None per row).
    ``block_args``: blocks given after ``args`` (another program's
    ``packed_outs``), their rows read in place."""

    def __init__(self, steps, args, outs, consts, slot_arrays, alias, device, *,
                 tensor_mode=False, fast=True, backend="numpy", cancelled=None,
                 packable=(), block_args=()):
        self.steps, self.args, self.outs = steps, list(args), list(outs)
        self.n_ops = len(steps)
        self.buffer_specs = []
        self._pool = []
        ns = {"_A": _tracer.array_of, "_W": _tracer.wrap, "_D": device, "_cast": _cast,
              "_cast_t": _cast_t, "np": np}
        lines = []
        w = lines.append
        names = {}

        seen = {}

        def const(x):
            if x is None or type(x) in (bool, int, str):
                return repr(x)
            # one name per object (per value for 0-d arrays): a long program
            # repeats a few ufuncs and scalars, and a small namespace is
            # faster to look names up in
            key = ("0d", x.dtype.str, x.tobytes()) if type(x) is np.ndarray and x.ndim == 0 else id(x)
            k = seen.get(key)
            if k is None:
                k = f"_c{len(names)}"
                names[k] = x
                seen[key] = k
            return k

        def src(x, wrap):
            if type(x) is Ref:
                return f"_W(v{x.slot}, _D)" if wrap else f"v{x.slot}"
            if type(x) is tuple:
                return "(" + "".join(src(y, wrap) + ", " for y in x) + ")"
            if type(x) is list:
                return "[" + ", ".join(src(y, wrap) for y in x) + "]"
            return const(x)

        if not tensor_mode:
            steps = _fold_mask_casts(steps, slot_arrays, outs)
            self.steps = steps
        used_consts = {s for st in steps for s in st.refs()} | set(outs)
        def arr_of(s):
            return slot_arrays[s]

        def empty(arr):
            # a new array for a value (a program may move values between
            # devices: each is allocated by its own array module)
            return f"{const(_arrays.module_of(arr).empty)}({const(arr.shape)}, {const(arr.dtype)})"

        for s, t in consts:
            if s in used_consts:
                w(f"    v{s} = {'' if tensor_mode else '_A('}{const(t)}{'' if tensor_mode else ')'}")

        # last use of each slot
        last = {}
        for i, st in enumerate(steps):
            for s in st.refs():
                last[s] = i
        escaping = {s for s in outs if s is not None} | set(args)
        arg_set = set(args)
        materialized = set(args) | {s for s, _ in consts}
        pooled = set()       # alias groups held in a pool buffer: no del frees them
        contiguous = set()
        n_head = len(lines)
        rows = {}            # slot -> (block, row): a value held in a block
        block_rows = {}      # block -> its number of rows
        for k, slots in enumerate(block_args):
            block_rows[f"_p{k}"] = len(slots)
            for r, slot in enumerate(slots):
                if slot is not None:
                    rows[slot] = (f"_p{k}", r)
                    arg_set.add(slot)

        def materialize(slots):
            # a row used by a step that is not a fused loop: a view of it
            for slot in slots:
                if slot in rows and slot not in materialized:
                    b, r = rows[slot]
                    shape = arr_of(slot).shape
                    if b in flat_blocks:
                        # (the value's own 1-d array: itself, or a view in its shape)
                        w(f"    v{slot} = {b}" if len(shape) == 1
                          else f"    v{slot} = {b}.reshape({const(shape)})")
                    elif len(shape) == 1:
                        w(f"    v{slot} = {b}[{r}]")
                    elif block_rows.get(b) == 1:
                        # (the block's one row: one call, not an index and a reshape)
                        w(f"    v{slot} = {b}.reshape({const(shape)})")
                    else:
                        w(f"    v{slot} = {b}[{r}].reshape({const(shape)})")
                    materialized.add(slot)

        chunks, kind = ({}, None) if tensor_mode else _plan_fusion(
            steps, slot_arrays, alias, backend, last, escaping, rows, cancelled)
        self.fused_ops = sum(j - i for i, (j, *_rest) in chunks.items())
        # the kernels of the steps outside fused chunks (a chunk's steps run
        # in its loop; looking their kernels up again would double the
        # build time of a long fused program)
        in_chunk = set()
        for i, (j, *_rest) in chunks.items():
            in_chunk.update(range(i, j))
        kerns = {}
        if fast and not tensor_mode:
            for i, st in enumerate(steps):
                if st.kind == "op" and i not in in_chunk:
                    kerns[i] = _verified(st, slot_arrays)
        # in place: an elementwise step writes into the buffer of an operand
        # that dies there (one array fewer to stream through memory); its
        # result joins that operand's alias group, so the buffer lives on
        alias, in_place, explicit = _in_place(steps, kerns, slot_arrays, alias, last, escaping, rows)
        self.in_place = len(in_place)
        # the last use of each slot, extended over views of one buffer
        group_last, group_escapes = {}, set()
        for s, i in last.items():
            g = alias[s]
            group_last[g] = max(group_last.get(g, -1), i)
        for s in escaping:
            group_escapes.add(alias[s])
        free = {}           # (shape, dtype) -> [buffer index]
        release_at = {}     # step index -> [(key, buffer index)]
        dels_at = {}        # step index -> [slots to drop]
        for s, i in last.items():
            if s not in escaping and s not in arg_set:
                dels_at.setdefault(group_last.get(alias[s], i), []).append(s)
        # who runs the fused chunks: "numba", "cupy", "replay" (None: none)
        self.fused_by = kind if chunks else None
        # A replayed chunk with one value to keep, which no other chunk reads
        # as a block and the program does not return as one, writes it into
        # a 1-d array: the value is that array itself, which owns its memory
        # (a gradient autograd then adopts as .grad instead of copying).
        flat_blocks = set()
        if kind == "replay":
            read_as_block = {a for (_j, _fn, arrays, _o, _t) in chunks.values()
                             for a in arrays if type(a) is str}
            for i, (_j, _fn, _args, outputs, _t) in chunks.items():
                if len(outputs) == 1 and f"_b{i}" not in read_as_block and \
                        outputs[0] not in packable and arr_of(outputs[0]).ndim >= 1:
                    flat_blocks.add(f"_b{i}")
        skip_to = -1
        # whether NumPy's floating-point warnings must be turned off: not
        # for a program of fused chunks alone, whose loops never warn
        quiet = backend == "cupy"
        for i, st in enumerate(steps):
            outs_src = ", ".join(f"v{o}" for o in st.outs)
            if i in chunks and backend == "cupy":
                # one kernel launch: its outputs are arrays of their own
                j, fn, arrays, outputs, _ = chunks[i]
                arr = arr_of(steps[i].outs[0])
                news = ", ".join([empty(arr)] * len(outputs))
                # (it returns its one output, or a tuple of them)
                w(f"    {', '.join(f'v{o}' for o in outputs)} = "
                  f"{const(fn)}({', '.join(f'v{a}' for a in arrays)}, {news})")
                materialized.update(outputs)
                skip_to = j
            elif i in chunks:
                j, fn, arrays, outputs, total = chunks[i]
                size, dtype = arr_of(steps[i].outs[0]).size, arr_of(steps[i].outs[0]).dtype
                # (float64: np.empty's default)
                dt = "" if dtype == np.float64 else f", {const(dtype)}"
                if f"_b{i}" in flat_blocks:
                    w(f"    _b{i} = {const(np.empty)}({const((size,))}{dt})")
                else:
                    w(f"    _b{i} = {const(np.empty)}({const((len(outputs), size))}{dt})")
                block_rows[f"_b{i}"] = len(outputs)
                # (a 0-d argument as it is: np.ascontiguousarray makes it 1-d)
                ins = [a if type(a) is str else f"_ac{a}" if a in arg_set and arr_of(a).shape
                       else f"v{a}" for a in arrays]
                for a in arrays:
                    if type(a) is not str and a in arg_set and arr_of(a).shape and a not in contiguous:
                        # an argument as the loops read it, made once
                        lines.insert(n_head, f"    _ac{a} = {const(np.ascontiguousarray)}(v{a})")
                        contiguous.add(a)
                if total is not None:
                    # the loop's sum, into a 0-d array of its own
                    w(f"    v{total} = {const(np.empty)}((){dt})")
                    materialized.add(total)
                    ins.append(f"_b{i}, v{total}")
                else:
                    ins.append(f"_b{i}")
                w(f"    {const(fn)}({', '.join(ins)})")
                skip_to = j
            if i < skip_to:
                drop = [s for s in dels_at.pop(i, ()) if s in materialized]
                for key, b in release_at.pop(i, ()):
                    free.setdefault(key, []).append(b)
                if drop:
                    w("    del " + ", ".join(f"v{s}" for s in drop))
                continue
            if rows:
                materialize(st.refs())
            materialized.update(st.outs)
            quiet = True             # (a step of NumPy's own: it may warn)
            if st.kind == "factory":
                k = const(st.fn)
                w(f"    v{st.outs[0]} = {k}()" if tensor_mode else f"    v{st.outs[0]} = _A({k}())")
                continue
            if st.kind == "random":
                if tensor_mode:
                    # a recomputation draws nothing: the value drawn by the
                    # forward is its argument (see CompiledFunction)
                    pass
                else:
                    k = const(st.fn)
                    w(f"    v{st.outs[0]} = _A({k}())")
                continue
            if tensor_mode:
                call = f"{const(st.fn)}({_call_args(st.fn, st.args, lambda a: src(a, False))})"
                if st.kind == "inplace":
                    w(f"    v{st.outs[0]} = _cast_t({call}, {const(st.cast)})")
                elif len(st.outs) == 1 and st.kind == "op" and not _multi(slot_arrays, st):
                    w(f"    v{st.outs[0]} = {call}")
                else:
                    w(f"    {outs_src}, = {call}")
                continue
            kern = kerns.get(i)
            if kern is not None:
                ops_src = ", ".join(src(a, False) for a in kern.operands)
                kw = "".join(f", {k}={const(v)}" for k, v in kern.kw.items())
                o = st.outs[0]
                g = alias[o]
                # (a CuPy ufunc takes its output by keyword here)
                ufunc = isinstance(kern.fn, np.ufunc) and not kern.kw
                elementwise = isinstance(kern.origin, np.ufunc) and not kern.kw
                escapes = g in group_escapes
                if i in in_place:
                    # into the operand's own buffer (see _in_place)
                    target = f"v{in_place[i]}"
                    w(f"    v{o} = {const(kern.fn)}({ops_src}, {target})" if ufunc
                      else f"    v{o} = {const(kern.fn)}({ops_src}, out={target})")
                elif kern.out and elementwise and escapes and arr_of(o).ndim and g not in explicit:
                    # escapes: NumPy's own allocation is cheaper than np.empty + out
                    w(f"    v{o} = {const(kern.fn)}({ops_src})")
                elif kern.out and not escapes:
                    # a buffer of the guard key's set, free again after the
                    # last use of the value's alias group
                    arr = arr_of(o)
                    key = (arr.shape, arr.dtype, _arrays.module_of(arr))
                    lst = free.get(key)
                    if lst:
                        b = lst.pop()
                    else:
                        b = len(self.buffer_specs)
                        self.buffer_specs.append(key)
                    release_at.setdefault(group_last.get(g, i), []).append((key, b))
                    pooled.add(g)
                    if ufunc:
                        w(f"    v{o} = {const(kern.fn)}({ops_src}, _B{b})")     # out, positionally
                    else:
                        w(f"    v{o} = {const(kern.fn)}({ops_src}{kw}, out=_B{b})")
                elif kern.out:
                    # escapes (a result, or saved): fresh memory on each call
                    arr = slot_arrays[o]
                    w(f"    v{o} = {const(kern.fn)}({ops_src}{kw}, "
                      f"out={empty(arr)})")
                else:
                    w(f"    v{o} = {const(kern.fn)}({ops_src}{kw})")
            else:
                call = f"{const(st.fn)}({_call_args(st.fn, st.args, lambda a: src(a, True))})"
                if st.kind == "inplace":
                    w(f"    v{st.outs[0]} = _cast(_A({call}), {const(st.cast)})")
                elif len(st.outs) == 1 and not _multi(slot_arrays, st):
                    w(f"    v{st.outs[0]} = _A({call})")
                else:
                    w(f"    _r = {call}")
                    for j, o in enumerate(st.outs):
                        w(f"    v{o} = _A(_r[{j}])")
            for key, b in release_at.pop(i, ()):
                free.setdefault(key, []).append(b)
            drop = [s for s in dels_at.pop(i, ()) if s in materialized and alias[s] not in pooled]
            if drop and not tensor_mode:
                w("    del " + ", ".join(f"v{s}" for s in drop))
        # a constant returned as a result is copied: the caller may own it
        # (a gradient accumulated in place into .grad)
        const_slots = {s for s, _ in consts}
        packed = {s for s in outs if s in packable and s in rows and rows[s][0].startswith("_b")}
        blocks = []
        for s in outs:
            if s in packed and rows[s][0] not in blocks:
                blocks.append(rows[s][0])
        self.packed_outs = []
        for b in blocks:
            slots = [None] * len(chunks[int(b[2:])][3])
            for s in packed:
                if rows[s][0] == b:
                    slots[rows[s][1]] = s
            self.packed_outs.append(slots)
        ret_slots = [s for s in outs if s not in packed]
        materialize([s for s in ret_slots if s is not None])
        # where each returned slot is in the result
        self.ret_index = {s: k for k, s in enumerate(ret_slots) if s is not None}
        ret = ", ".join(["None" if s is None else f"v{s}.copy()" if s in const_slots and not tensor_mode
                         else f"v{s}" for s in ret_slots] + blocks)
        w(f"    return ({ret}{',' if len(ret_slots) + len(blocks) == 1 else ''})")
        if self.buffer_specs:
            # the buffers as locals (a name, not an index, per use)
            lines.insert(0, "    " + "".join(f"_B{b}, " for b in range(len(self.buffer_specs))) + "= B")
        enter, leave = [], []
        if not tensor_mode and quiet:
            # NumPy's floating-point warnings off, as core runs every op
            # (torch never warns for log(0) or 1/0); tensor programs call
            # the ops, which do it themselves
            if _ERRSTATE is not None:
                enter, leave = ["    _tok = _ES.set(_QUIET)"], ["        _ES.reset(_tok)"]
                ns.update(_ES=_ERRSTATE, _QUIET=_QUIET)
            else:
                lines = ["    with np.errstate(all='ignore'):"] + ["    " + x for x in lines]
        if self.buffer_specs:
            # A set of buffers from the pool, or a new one; back to the pool
            # after the call. A thread calling meanwhile takes (or makes)
            # another set, so no two calls ever share buffers.
            specs = list(self.buffer_specs)
            ns.update(_pool=self._pool,
                      _new=lambda: [xp.empty(shape, dtype) for shape, dtype, xp in specs])
            enter = ["    try:", "        B = _pool.pop()", "    except IndexError:",
                     "        B = _new()"] + enter
            leave = leave + ["        if len(_pool) < 4:", "            _pool.append(B)"]
        if leave:
            lines = enter + ["    try:"] + ["    " + x for x in lines] + ["    finally:"] + leave
        ns.update(names)
        # every name the body reads as a keyword-only default: a local, not
        # a global lookup, per use (a program of many small ops pays per name)
        body = "\n".join(lines)
        bound = [k for k in ns if k != "__builtins__" and k in body]
        params = ", ".join([f"v{s}" for s in self.args]
                           + [f"_p{k}" for k in range(len(block_args))]
                           + (["*"] + [f"{k}={k}" for k in bound] if bound else []))
        name = f"_compiled_{next(_counter)}"
        source = f"def {name}({params}):\n" + body + "\n"
        exec(compile(source, f"<rg.compile program {name}>", "exec"), ns)
        self.source = source
        # (callers on the hot path call ``run``: one Python call less)
        self.run = ns[name]

    def __call__(self, *values):
        return self.run(*values)


def _in_place(steps, kerns, slot_arrays, alias, last, escaping, rows):
    """(alias, in_place, explicit): ``in_place`` maps the index of each step
    that writes its result into an operand's buffer to that operand's slot;
    ``alias`` is a copy of the alias groups with each such result joined to
    its operand's group (the buffer lives as long as any value in it);
    ``explicit``: the groups whose first value must be written into a
    buffer of the program's own (``out=``: a C-contiguous block), never one
    NumPy allocates in the layout of its operands.

    A step qualifies when its kernel is elementwise (a ufunc, relu or
    sigmoid: writing over an operand it reads element by element is safe),
    it is not in a fused chunk (``kerns`` has only the steps outside
    chunks), and one of its operands dies there and is a
    value the program wrote into a buffer of its own, alone in its group
    (no view of it outlives the step), with the result's shape and dtype."""
    alias = list(alias)
    members = {}
    for s, g in enumerate(alias):
        members.setdefault(g, []).append(s)
    owned = set()        # slots in a C-contiguous buffer of the program's
    in_place, explicit = {}, set()
    for i, st in enumerate(steps):
        k = kerns.get(i)
        if k is None or not k.out:
            continue
        o = st.outs[0]
        out = slot_arrays[o]
        if not getattr(out, "ndim", 0) or o in rows:
            continue
        if _in_place_safe(k):
            for a in k.operands:
                if type(a) is not Ref or a.slot not in owned:
                    continue
                s = a.slot
                x, g = slot_arrays[s], alias[s]
                # every value in the buffer (views included) dead by this step
                if (x.shape == out.shape and x.dtype == out.dtype
                        and all(last.get(m, -1) <= i and m not in escaping and m not in rows
                                for m in members[g])):
                    old = alias[o]
                    for m in members.pop(old):
                        alias[m] = g
                        members[g].append(m)
                    in_place[i] = s
                    explicit.add(g)
                    break
        owned.add(o)
    return alias, in_place, explicit


def _in_place_safe(k):
    fn = k.origin
    if k.kw:
        return False
    if isinstance(fn, np.ufunc):
        return fn.signature is None and fn.nout == 1     # not matmul, a gufunc
    return fn is _kernels._relu or fn is _kernels._sigmoid or fn is _kernels._mask_mul


def fusible_ops(steps, slot_arrays, alias, backend):
    """How many of ``steps`` the ``backend`` would fuse into compiled loops
    (0: its programs are the numpy backend's, whose runs are replayed)."""
    runs, _, kind = _fusion_runs(steps, slot_arrays, alias, backend)
    return 0 if kind == "replay" else sum(j - i for i, j in runs)


def _fusion_runs(steps, slot_arrays, alias, backend):
    """The runs [(first, end)] of steps to fuse, the kernels of their steps,
    and who runs them: "numba" (compiled loops, _fusion.py), "cupy"
    (ElementwiseKernels, _cupy_fusion.py) or "replay" (the numpy backend's,
    and numba's where it would not pay: NumPy's own loops called one after
    another, _replay.pyx; the runs are numba's).

    A fused step's value is a fresh array (a row of its loop's block), also
    where the trace's was a view (an expand's): so no step whose value
    shares memory with a value written in place is fused."""
    from retrograd.compile import _fusion
    if backend == "cupy":
        from retrograd.compile import _cupy_fusion as _fusion
        kind = "cupy"
        if not _fusion.available():
            return [], {}, kind
    elif backend in ("numba", "auto") and _fusion.available():
        kind = "numba"
    else:
        kind = "replay"
    chunk = _REPLAY_CHUNK if kind == "replay" else _fusion.CHUNK
    replay = kind == "replay"
    kerns = {}
    sums = set()         # steps that sum a value of the run's shape to 0-d
    fresh = set()        # slots a fusible step makes: contiguous in the program
    written = {alias[o] for st in steps if st.kind == "inplace" for o in st.outs}
    written |= {alias[a.slot] for st in steps if st.kind == "inplace"
                for a in st.args if type(a) is Ref}
    for i, st in enumerate(steps):
        if st.kind != "op" or alias[st.outs[0]] in written:
            continue
        k = _verified(st, slot_arrays)
        if k is None:
            continue
        ops = [slot_arrays[a.slot] if type(a) is Ref else a for a in k.operands]
        if backend == "cupy":
            # (a CUDA kernel reads strided arrays as they are)
            if _fusion.fusible(k, slot_arrays[st.outs[0]], ops):
                kerns[i] = k
            continue
        # (the trace's value may be a broadcast view, an expand's, where the
        # program's is a fresh array)
        contiguous = all(not isinstance(x, np.ndarray) or x.ndim == 0 or x.flags.c_contiguous
                         or (type(a) is Ref and a.slot in fresh) for a, x in zip(k.operands, ops))
        if _fusion.fusible(k, slot_arrays[st.outs[0]], ops, replay) and contiguous:
            kerns[i] = k
            fresh.add(st.outs[0])
        elif _fusion.full_sum(k, slot_arrays[st.outs[0]], ops, replay) and contiguous:
            kerns[i] = k
            sums.add(i)
    runs = []
    i = 0
    while i < len(steps):
        if i not in kerns or i in sums:
            i += 1
            continue
        shape, dtype = slot_arrays[steps[i].outs[0]].shape, slot_arrays[steps[i].outs[0]].dtype
        j = i
        while j < len(steps) and j in kerns and j not in sums and j - i < chunk and \
                slot_arrays[steps[j].outs[0]].shape == shape and slot_arrays[steps[j].outs[0]].dtype == dtype:
            j += 1
        if j in sums and slot_arrays[steps[j].args[0].slot].shape == shape and \
                any(st.outs[0] == steps[j].args[0].slot for st in steps[i:j]):
            # a full sum of a value of the run ends it: the loop adds up as
            # it goes (the sum is complete only after the loop)
            j += 1
        if j - i >= 2:
            runs.append((i, j))
        i = j
    n_fused = sum(j - i for i, j in runs)
    if kind == "numba" and (n_fused == 0 or backend == "auto" and n_fused < 64):
        # compiled loops pay for their compile time on long programs only
        # (and a float32 program has none: its runs are replayed)
        return _fusion_runs(steps, slot_arrays, alias, "numpy")
    return runs, kerns, kind


# The most steps one replayed chunk runs: it compiles nothing, so a chunk may
# be long (one call, one block); this bounds the block a chunk allocates.
_REPLAY_CHUNK = 1024


class Cancelled(Exception):
    """The process is exiting: a program build in the background stops."""


def _plan_fusion(steps, slot_arrays, alias, backend, last, escaping, rows, cancelled=None):
    """({first step index: (end index, compiled loop, its array arguments,
    output slots)}, who runs them) of the fused chunks (see _fusion_runs).
    An argument is a slot, or the name of a block (``rows``: slot -> (block,
    row), which this fills in for the chunks' outputs: the chunk at step i
    writes block ``_b{i}``)."""
    runs, kerns, kind = _fusion_runs(steps, slot_arrays, alias, backend)
    if not runs:
        return {}, kind
    from retrograd.compile import _cupy_fusion, _fusion, _replay
    builder = _replay.chunk_function if kind == "replay" else _fusion.chunk_function
    chunks = {}
    for i, j in runs:
        produced = {steps[t].outs[0]: t - i for t in range(i, j)}
        inputs, ops = [], []
        for t in range(i, j):
            operands = []
            for a in kerns[t].operands:
                if type(a) is Ref and a.slot in produced and produced[a.slot] < t - i:
                    operands.append(("t", produced[a.slot]))
                elif type(a) is Ref:
                    if a.slot not in inputs:
                        inputs.append(a.slot)
                    operands.append(("in", inputs.index(a.slot)))
                else:
                    operands.append(("c", float(np.asarray(a))))
            ops.append(("sum" if kerns[t].fn is _kernels.add_reduce else kerns[t].origin, operands))
        # (a fused value is an array of its own: its own uses count, and
        # views of it are taken by the steps that use it)
        outputs = [s for s in produced if s in escaping or last.get(s, -1) >= j]
        total = steps[j - 1].outs[0] if ops[-1][0] == "sum" else None
        if total is not None:
            outputs = [s for s in outputs if s != total]
        if not outputs and total is None:
            continue
        if cancelled is not None and cancelled():
            raise Cancelled()
        if backend == "cupy":
            dtype = slot_arrays[steps[i].outs[0]].dtype
            fn = _cupy_fusion.chunk_kernel(ops, len(inputs), dtype, [produced[s] for s in outputs])
            chunks[i] = (j, fn, inputs, outputs, None)
            continue
        arrays, specs, ndims = [], [], []
        for s in inputs:
            if s in rows:
                b, r = rows[s]
                if b not in arrays:
                    arrays.append(b)
                    ndims.append(2)
                # (a 0-d value read by a loop over more: its block has one column)
                scalar = not slot_arrays[s].shape and slot_arrays[steps[i].outs[0]].shape
                specs.append((arrays.index(b), ("s", r) if scalar else r))
            else:
                arrays.append(s)
                nd = len(slot_arrays[s].shape)
                ndims.append(nd)
                specs.append((len(arrays) - 1, None if nd else "s"))
        try:
            dtype = slot_arrays[steps[i].outs[0]].dtype
            fn = (builder(ops, specs, ndims, [produced[s] for s in outputs], dtype) if kind == "replay"
                  else builder(ops, specs, ndims, [produced[s] for s in outputs]))
        except Exception:
            continue         # refused: those steps stay NumPy calls
        for r, s in enumerate(outputs):
            rows[s] = (f"_b{i}", r)
        chunks[i] = (j, fn, arrays, outputs, total)
    return chunks, kind


def _fold_mask_casts(steps, slot_arrays, outs):
    """Drop the cast of a boolean mask to the gradient's dtype where its one
    use is a multiply (relu's and clamp's backward: ``grad * (x > 0)``):
    NumPy multiplies by the mask directly, one pass over the array fewer.
    Then make relu's backward, ``grad * (y != 0)`` on its result ``y``, one
    step (_kernels.MASK_MUL, a loop of one pass over ``grad`` and ``y``).
    The kernels are still verified against the traced results."""
    uses = {}
    for st in steps:
        for r in st.refs():
            uses[r] = uses.get(r, 0) + 1
    for o in outs:
        if o is not None:
            uses[o] = uses.get(o, 0) + 2          # escaping: never folded
    casts = {}
    for st in steps:
        if st.kind == "op" and st.name == "_to_dtype" and len(st.outs) == 1 and type(st.args[0]) is Ref:
            src, out = slot_arrays[st.args[0].slot], slot_arrays[st.outs[0]]
            if getattr(src, "dtype", None) == np.bool_ and getattr(out, "dtype", np.bool_).kind == "f" \
                    and src.shape == out.shape and uses.get(st.outs[0]) == 1:
                casts[st.outs[0]] = st
    if casts:
        new, folded = [], set()
        for st in steps:
            if st.kind == "op" and st.name == "mul" and len(st.args) == 2 and \
                    all(type(a) is Ref for a in st.args) and any(a.slot in casts for a in st.args):
                args = tuple(Ref(casts[a.slot].args[0].slot) if a.slot in casts and a.slot not in folded
                             else a for a in st.args)
                folded.update(a.slot for a in st.args if a.slot in casts)
                # (the mask's one use moves from the cast to the multiply)
                st = Step(st.kind, st.name, st.fn, args, st.outs, st.cast)
            new.append(st)
        steps = [st for st in new if not (st.outs and st.outs[0] in folded
                                           and casts.get(st.outs[0]) is st)]
    return _fold_relu_masks(steps, slot_arrays, uses)


def _fold_relu_masks(steps, slot_arrays, uses):
    # `m = ne(y, 0); r = mul(g, m)` with m used there alone, g and y of one
    # float dtype and shape: one step r = g * (y != 0)
    masks = {}
    for st in steps:
        if st.kind == "op" and st.name == "ne" and len(st.args) == 2 and len(st.outs) == 1 \
                and type(st.args[0]) is Ref and type(st.args[1]) in (int, float) \
                and st.args[1] == 0 and uses.get(st.outs[0]) == 1:
            masks[st.outs[0]] = st
    if not masks:
        return steps
    new, folded = [], set()
    for st in steps:
        if st.kind == "op" and st.name == "mul" and len(st.args) == 2 and len(st.outs) == 1 and \
                all(type(a) is Ref for a in st.args):
            a, b = st.args
            m, g = (b, a) if b.slot in masks else (a, b) if a.slot in masks else (None, None)
            if m is not None:
                y = masks[m.slot].args[0]
                gv, yv, rv = slot_arrays[g.slot], slot_arrays[y.slot], slot_arrays[st.outs[0]]
                if all(getattr(v, "dtype", None) == rv.dtype and getattr(v, "shape", None) == rv.shape
                       for v in (gv, yv)) and rv.dtype.kind == "f":
                    folded.add(m.slot)
                    st = Step("op", _kernels.MASK_MUL, _relu_mask_mul, (g, y), st.outs, st.cast)
        new.append(st)
    return [st for st in new if not (st.outs and st.outs[0] in folded and masks.get(st.outs[0]) is st)]


def _relu_mask_mul(g, y):
    """relu's backward on its result as ops (a step whose kernel did not
    verify runs this on tensors): ``g * (y != 0)``."""
    return g * (y != 0)


def _multi(slot_arrays, st):
    # an op of several results returns a tuple even when one is used
    return st.fn is not None and len(st.outs) != 1


_VERIFIED: dict = {}


def _signature(st, slot_arrays):
    # what a kernel's verdict depends on: the op, its constant arguments,
    # and the shapes, dtypes and strides of its tensor arguments and result
    # (a long program repeats a few of these: each is checked once)
    parts = [st.name]
    for a in st.args:
        if type(a) is Ref:
            x = slot_arrays[a.slot]
            parts.append((getattr(x, "shape", None), getattr(x, "dtype", None),
                          getattr(x, "strides", None)))
        elif a is None or type(a) in (bool, int, float, str):
            parts.append((type(a), a))
        else:
            return None
    out = slot_arrays[st.outs[0]]
    # (a CUDA program's kernels are CuPy's: checked on their own)
    parts.append((type(out), getattr(out, "shape", None), getattr(out, "dtype", None)))
    return tuple(parts)


def _verified(st, slot_arrays):
    """The NumPy kernel of op step ``st`` checked against its traced result
    (None: none agrees), looked up once per step: a build asks for each
    step's kernel up to three times (whether it fuses, the replayed runs,
    the steps outside them)."""
    k = st.kernel
    if k is UNSET:
        k = st.kernel = _verified_step(st, slot_arrays)
    return k


def _verified_step(st, slot_arrays):
    sig = _signature(st, slot_arrays) if len(st.outs) == 1 else None
    if sig is not None and sig in _VERIFIED:
        ok, scalar = _VERIFIED[sig]
        if not ok:
            return None
        k = _kernels.candidate(st, slot_arrays[st.outs[0]])
        if k is not None and scalar:
            dt = _scalar_dtype(k, slot_arrays)
            k = k.with_operands(tuple(a if type(a) is Ref else np.asarray(a, dtype=dt)
                                      for a in k.operands))
        return k
    k = _verified_once(st, slot_arrays)
    if sig is not None and len(_VERIFIED) < 100000:
        _VERIFIED[sig] = (k is not None, k is not None and any(
            type(a) is not Ref and isinstance(a, np.ndarray) for a in k.operands))
    return k


def _verified_once(st, slot_arrays):
    k = _kernels.candidate(st, slot_arrays[st.outs[0]])
    if k is None:
        return None
    want = slot_arrays[st.outs[0]]
    dt = _scalar_dtype(k, slot_arrays) if isinstance(k.fn, np.ufunc) else None
    if dt is not None:
        # A Python scalar operand as a 0-d array of the tensor operands'
        # dtype, which NumPy gives it anyway (NEP 50): the ufunc skips
        # converting it on each call (also checked below).
        fast = k.with_operands(tuple(a if type(a) is Ref else np.asarray(a, dtype=dt)
                                     for a in k.operands))
        if _agrees(fast, slot_arrays, want):
            return fast
    return k if _agrees(k, slot_arrays, want) else None


def _scalar_dtype(k, slot_arrays):
    """The dtype the Python scalar operands of kernel ``k`` may take as 0-d
    arrays without changing its result: the tensor operands' dtype, where
    each scalar's kind fits in it (a float with float arrays, an int with
    integer or float ones); None where there is no scalar or one does not
    fit (2.5 with an int64 array computes in float64; a comparison's bool
    result is no guide: 0.1 as a bool is True)."""
    dts = [getattr(slot_arrays[a.slot], "dtype", None) for a in k.operands if type(a) is Ref]
    scalars = [a for a in k.operands if type(a) is not Ref]
    if not scalars or not dts or any(d is None for d in dts):
        return None
    dt = np.result_type(*dts)
    fits = {bool: "biufc", int: "iufc", float: "fc", complex: "c"}
    for a in scalars:
        if dt.kind not in fits.get(type(a), ""):
            return None
    return dt


def _agrees(k, slot_arrays, want):
    ops = [slot_arrays[a.slot] if type(a) is Ref else a for a in k.operands]
    try:
        # (quiet, as core runs the op itself)
        with np.errstate(all="ignore"):
            if k.out:
                got = k.fn(*ops, **k.kw, out=_arrays.module_of(want).empty(want.shape, want.dtype))
            else:
                got = k.fn(*ops, **k.kw)
    except Exception:
        return False
    return _kernels.agrees(got, want, k.close)
