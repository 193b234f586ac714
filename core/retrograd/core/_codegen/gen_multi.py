"""Multi-output entries of derivatives.yaml (svd, max/min with indices, slogdet).

Called by gen_ops.py / gen_jvp.py for an entry whose signature declares its
results, PyTorch's way:

    - name: _linalg_svd(Tensor A) -> (Tensor U, Tensor S, Tensor Vh)
      A: svd_backward(grads[0], grads[1], grads[2], U, S, Vh)
      U, S, Vh: svd_jvp(A_t, U, S, Vh)

The kernel runs once and returns a tuple with one array per result. The
backward formula of each differentiable input sees `grads[i]` (or
`grad_<name>`), the gradient of the i-th differentiable result (None where
that result got none: torch's undefined gradient, which the formula's
helper treats as zero), and the results as `result0`, `result1`, ... or by
name. `grad` alone is the gradient of the only differentiable result.
`output_differentiability: [True, False]` marks results that carry no
gradient (max's indices): they get no grad_fn and never require grad. When
it is missing, every result is differentiable unless a formula uses `grad`
(then only the first is, as in torch). The forward (JVP) formulas are keyed
by result name: `values: ...` for one result, or `U, S, Vh: ...` for a
formula that returns a tuple of tangents, one per name.

Kept apart from gen_ops.py so that the single-output path stays as it was;
gen_ops binds itself as `G` (the helpers shared with that path).
"""
from __future__ import annotations

import ast

G = None        # gen_ops (set by it: it runs as __main__, so no import here)

KNOWN_KEYS = {"output_differentiability"}


def split_returns(sig, where):
    """`name(params) -> (Tensor a, Tensor b)` -> (`name(params)`, [a, b]);
    a signature without `->` gives (sig, [])."""
    if "->" not in sig:
        return sig, []
    head, ret = (s.strip() for s in sig.rsplit("->", 1))
    if not (ret.startswith("(") and ret.endswith(")")):
        raise G.TableError(f"{where}: bad results {ret!r}; expected -> (Tensor a, Tensor b, ...)")
    names = []
    for part in (p.strip() for p in ret[1:-1].split(",")):
        bits = part.split()
        if len(bits) != 2 or bits[0] != "Tensor" or not bits[1].isidentifier():
            raise G.TableError(f"{where}: bad result {part!r}; each result is `Tensor <name>`")
        if bits[1] in names:
            raise G.TableError(f"{where}: result {bits[1]!r} is declared twice")
        names.append(bits[1])
    if len(names) < 2:
        raise G.TableError(f"{where}: an entry with one result declares none (drop the `->` part "
                           "and write its JVP under `result:`)")
    return head, names


def jvp_keys(raw, outputs, where):
    """The entry's JVP formulas: {tuple of result names: formula}."""
    out = {}
    if not outputs:
        return out
    for k, v in raw.items():
        if not isinstance(k, str):
            continue
        names = tuple(n.strip() for n in k.split(","))
        if all(n in outputs for n in names):
            out[k] = (names, str(v))
    return out


def configure(e, raw, outputs, jvps, where):
    """Fill the multi-output fields of entry `e` and canonicalize its
    formulas (grad_<name> -> grads[i], result<i> -> the result's name)."""
    e.outputs = list(outputs)
    if "result" in raw:
        raise G.TableError(f"{where}: {e.name} has several results: key its forward (JVP) "
                           f"formulas by result name ({', '.join(outputs)}), not `result:`")
    for bad in ("view", "fast_kernel", "inplace", "batched"):
        if raw.get(bad):
            raise G.TableError(f"{where}: {e.name}: `{bad}:` is not supported for an entry with "
                               "several results")
    if e.tensorlist is not None:
        raise G.TableError(f"{where}: {e.name}: a TensorList op cannot have several results")
    for n in outputs:
        if n in {p.name for p in e.params}:
            raise G.TableError(f"{where}: result {n!r} has the name of a parameter of {e.name}")
    used = set().union(*[_names(f) for f in e.formulas.values()]) if e.formulas else set()
    uses_grad = "grad" in used
    if uses_grad and ("grads" in used or any(f"grad_{n}" in used for n in outputs)):
        raise G.TableError(f"{where}: {e.name}: its formulas mix `grad` and grads[i] / grad_<result>; "
                           "name the gradient they use (grads[i]) throughout")
    diff = raw.get("output_differentiability")
    if diff is None:
        diff = [True] + [not uses_grad] * (len(outputs) - 1)
    if (not isinstance(diff, list) or len(diff) != len(outputs)
            or not all(isinstance(d, bool) for d in diff)):
        raise G.TableError(f"{where}: output_differentiability must list one true/false per result "
                           f"({len(outputs)})")
    if not any(diff) and not e.nondifferentiable:
        raise G.TableError(f"{where}: no result of {e.name} is differentiable: use "
                           "`nondifferentiable: true`")
    e.output_diff = diff
    ndiff = sum(diff)
    if uses_grad and ndiff > 1:
        raise G.TableError(f"{where}: {e.name} has {ndiff} differentiable results: its formulas "
                           "must name the gradient they use, grads[i] or grad_<result>, not `grad`")
    for k, src in list(e.formulas.items()):
        e.formulas[k] = _canonical(e, src, where, f"formula for {k}", backward=True)
    e.jvp = None
    if jvps:
        covered = []
        canon = {}
        for key, (names, src) in jvps.items():
            for n in names:
                if n in covered:
                    raise G.TableError(f"{where}: result {n!r} has two forward (JVP) formulas")
                if not diff[outputs.index(n)]:
                    raise G.TableError(f"{where}: result {n!r} is not differentiable: it has no "
                                       "forward (JVP) formula")
                covered.append(n)
            canon[", ".join(names)] = _canonical(e, src, where, f"JVP formula for {key}", backward=False)
        missing = [n for n, d in zip(outputs, diff) if d and n not in covered]
        if missing:
            raise G.TableError(f"{where}: differentiable results without a forward (JVP) formula: "
                               f"{', '.join(missing)}")
        e.jvp = canon


def _names(src):
    try:
        return {n.id for n in ast.walk(ast.parse(src, mode="eval")) if isinstance(n, ast.Name)}
    except SyntaxError:
        return set()


def diff_index(e, name):
    """The node input number of result `name`, or -1 (no gradient)."""
    i = e.outputs.index(name)
    return sum(e.output_diff[:i]) if e.output_diff[i] else -1


def _canonical(e, src, where, what, backward):
    tree = G._parse_expr(src, where, what)
    ndiff = sum(e.output_diff)
    diff_names = [n for n, d in zip(e.outputs, e.output_diff) if d]

    class R(ast.NodeTransformer):
        def visit_Subscript(self, node):
            if isinstance(node.value, ast.Name) and node.value.id == "grads":
                if not backward:
                    raise G.TableError(f"{where}: {what}: `grads` is for backward formulas")
                i = node.slice
                if not (isinstance(i, ast.Constant) and type(i.value) is int and 0 <= i.value < ndiff):
                    raise G.TableError(f"{where}: {what}: grads[...] takes a constant index in "
                                       f"[0, {ndiff}) (one per differentiable result)")
                return node
            return self.generic_visit(node)

        def visit_Name(self, node):
            n = node.id
            if n == "grads":
                raise G.TableError(f"{where}: {what}: use grads[i] with a constant index")
            if n.startswith("grad_") and n[5:] in e.outputs:
                if not backward:
                    raise G.TableError(f"{where}: {what}: {n!r} is for backward formulas")
                if n[5:] not in diff_names:
                    raise G.TableError(f"{where}: {what}: result {n[5:]!r} is not differentiable "
                                       "(output_differentiability): it has no gradient")
                return ast.Subscript(value=ast.Name(id="grads", ctx=ast.Load()),
                                     slice=ast.Constant(value=diff_names.index(n[5:])), ctx=node.ctx)
            if n.startswith("result") and n[6:].isdigit():
                k = int(n[6:])
                if k >= len(e.outputs):
                    raise G.TableError(f"{where}: {what}: {n!r}: {e.name} has {len(e.outputs)} results")
                return ast.Name(id=e.outputs[k], ctx=node.ctx)
            if n == "result":
                raise G.TableError(f"{where}: {what}: {e.name} has several results: name one "
                                   f"(result0, ... or {', '.join(e.outputs)})")
            return node
    tree = R().visit(tree)
    ast.fix_missing_locations(tree)
    return ast.unparse(tree)


def add_formula_names(e, names):
    """formula_names() of a multi-output entry: no `result`, but `grads`
    and the results by name."""
    names.pop("result", None)
    names["grads"] = "grad"
    for n in e.outputs:
        names[n] = "output"


def check_entry(e, where, kernels):
    if e.nondifferentiable:
        G.check_kernel(e, where, kernels)
        return
    for k, f in e.formulas.items():
        G.check_formula(e, f, where, f"formula for {k}")
    if e.jvp is None:
        raise G.TableError(f"{where}: {e.name}: give each differentiable result a forward (JVP) "
                           "formula (`<result>: ...` or `a, b: ...` returning a tuple)")
    for key, src in e.jvp.items():
        check_jvp(e, key, src, where)
    G.check_kernel(e, where, kernels)


def check_jvp(e, key, src, where):
    what = f"JVP formula for {key}"
    tree = G._parse_expr(src, where, what)
    known = set(e.outputs) | {p.name for p in e.others}
    for p in e.tensors:
        known |= {f"{p.name}_p", f"{p.name}_t"}
        known |= {f"{p.name}_{s}" for s in ("shape", "dtype", "ndim", "device")}
    calls = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and not isinstance(node.func, ast.Name):
            raise G.TableError(f"{where}: {what}: only calls of plain names are allowed")
        if isinstance(node, ast.Attribute):
            raise G.TableError(f"{where}: {what}: attribute access {ast.unparse(node)!r} is not "
                               "allowed; use a helper")
        if isinstance(node, ast.Name):
            if id(node) in calls:
                V = G.V
                if node.id not in V.PRIMITIVES and node.id not in V.NS_HELPERS \
                        and node.id not in V.VALUE_HELPERS:
                    raise G.TableError(f"{where}: {what}: unknown function {node.id!r}")
            elif node.id not in known:
                raise G.TableError(f"{where}: {what}: unknown name {node.id!r} (inputs are spelt "
                                   "<input>_p / <input>_t, results by name)")


# ---------------------------------------------------------------------------
# The node class

def emit_node(e, out):
    tensors = list(e.tensors)
    uses, per_input = {}, {}
    for i, p in enumerate(tensors):
        if p.name not in e.formulas:
            continue
        used = G.check_formula(e, e.formulas[p.name], "", "")
        used.discard("grad")
        used.discard("grads")
        per_input[i] = used
        for n in used:
            uses.setdefault(n, set()).add(i)
    saved = sorted(uses)
    kinds = G.formula_names(e)
    tensor_kinds = ("input", "output")
    ndiff = sum(e.output_diff)
    cls = e.node_name
    w = out.append
    w("@cython.final")
    w("@cython.trashcan(True)")     # see _ops.pxd: Node's own is not inherited across modules
    w(f"cdef class {cls}(Node):")
    w(f'    """Backward of `{e.raw["name"]}` (derivatives.yaml line {e.line}): '
      f'{ndiff} gradients in, one per differentiable result."""')
    for n in saved:
        w(f"    cdef object s_{n}")
        if kinds[n] in tensor_kinds:
            w(f"    cdef VersionCounter s_{n}_vc")
            w(f"    cdef Py_ssize_t s_{n}_ver")
    w("")
    w("    cdef void release_variables(self):")
    for n in saved:
        if kinds[n] in tensor_kinds:
            w(f"        self.s_{n} = None")
            w(f"        self.s_{n}_vc = None")
    w("        self._released = True")
    w("")
    w("    cdef list apply(self, list grads, bint create_graph):")
    w("        cdef object grad = grads[0]")
    n_out = len(tensors)
    for i in range(n_out):
        w(f"        cdef object r{i} = None")
    # torch's `any_grad_defined`: no formula runs when no result got a
    # gradient; otherwise the formulas see None for the results that got
    # none (their helpers take it as zero).
    none = " and ".join(f"grads[{k}] is None" for k in range(ndiff))
    w(f"        if {none}:")
    w(f"            return [{', '.join(['None'] * n_out)}]")
    if any(kinds[n] in tensor_kinds for n in saved):
        w("        if self._released:")
        w("            _raise_released(self)")
    for mode, flag in (("array", "False"), ("tensor", "True")):
        w("        if not create_graph:" if mode == "array" else "        else:")
        any_stmt = False
        for n in saved:
            if kinds[n] in tensor_kinds:
                any_stmt = True
                w(f"            v_{n} = {_unpack(e, n, kinds[n], flag)}")
        for i, p in enumerate(tensors):
            if i not in per_input:
                continue
            any_stmt = True
            fn = f"self._fn{i}" if i < 2 else f"rg_next_fn(self, {i})"
            w(f"            if {fn} is not None:")
            for n in sorted(per_input[i]):
                if kinds[n] not in tensor_kinds:
                    w(f"                v_{n} = self.s_{n}")
            w(f"                r{i} = {G.rewrite(e, e.formulas[p.name], mode)}")
        if not any_stmt:
            w("            pass")
    w(f"        return [{', '.join(f'r{i}' for i in range(n_out))}]")
    w("")
    for n in saved:
        w("    @property")
        w(f"    def _saved_{n}(self):")
        if kinds[n] in tensor_kinds:
            w("        if self._released:")
            w("            _raise_released(self)")
            w(f"        return {_unpack(e, n, kinds[n], 'True')}")
        else:
            w(f"        return self.s_{n}")
        w("")
    w("    def _saved_arrays(self):")
    w("        # (name, array) for each tensor this node keeps saved for its backward")
    w("        out = []")
    for n in saved:
        if kinds[n] in tensor_kinds:
            w(f"        if self.s_{n}_vc is not None and self.s_{n} is not None:")
            w(f"            out.append(('{n}', _saved_array_of(self.s_{n})))")
    w("        return out")
    w("")
    w("")
    return saved, uses


def _unpack(e, n, kind, flag):
    if kind == "output":
        pos = e.outputs.index(n)
        return (f"_unpack_output_nr(self, self.s_{n}, self.s_{n}_vc, self.s_{n}_ver, "
                f"{diff_index(e, n)}, {pos}, {flag})")
    return G._unpack_call(e, n, kind, flag)


# ---------------------------------------------------------------------------
# The op, after its kernel ran (gen_ops.emit_op writes the part before)

def emit_op_tail(e, saved, uses, w):
    tensors = e.tensors
    kinds = G.formula_names(e)
    outs = e.outputs
    w(f"    if type(out) is not tuple or len(out) != {len(outs)}:")
    w(f'        raise RuntimeError("{e.name}: the kernel must return a tuple of {len(outs)} arrays '
      f'(derivatives.yaml line {e.line})")')
    for k, n in enumerate(outs):
        w(f"    o_{n} = _ensure_array(out[{k}])")
        w(f"    cdef Tensor r_{n}")
    results = "(" + ", ".join(f"r_{n}" for n in outs) + ")"
    args_tuple = "(" + ", ".join(p.name for p in e.params) + ("," if len(e.params) == 1 else "") + ")"
    if e.nondifferentiable:
        for n in outs:
            w(f"    r_{n} = _rg_wrap(o_{n}, dev)")
    else:
        dnames = [n for n, d in zip(outs, e.output_diff) if d]
        diff = [p for p in tensors if p.name not in e.nondiff_inputs]
        cond = " or ".join(f"_needs(t_{p.name})" for p in diff)
        w(f"    if rg_tls_grad_enabled and ({cond}) and _record_op(o_{dnames[0]}):")
        w(f"        node = {e.node_name}.__new__({e.node_name})")
        for i, p in enumerate(tensors):
            w(f"        e{i} = None" if p.name in e.nondiff_inputs else f"        e{i} = _edge_fn(t_{p.name})")
        if len(tensors) <= 2:
            args = ", ".join(f"e{i}, _edge_nr(t_{p.name})" for i, p in enumerate(tensors))
            w(f"        _set_edges{len(tensors)}(node, {args})")
        else:
            edges = "(" + ", ".join(f"e{i}, _edge_nr(t_{p.name})" for i, p in enumerate(tensors)) + ")"
            w(f"        node.set_next_edges({edges})")
        for n in saved:
            kind = kinds[n]
            if kind == "output":
                continue
            c = " or ".join(f"e{i} is not None" for i in sorted(uses[n]))
            if kind == "input":
                G.emit_save_input(w, n, c)
                continue
            if kind == "param":
                val = f"v_{n}"
            else:
                base = n.rsplit("_", 1)[0]
                val = {"shape": f"_shape_of(a_{base})", "ndim": f"np.ndim(a_{base})",
                       "dtype": f"_dtype_of(a_{base})"}.get(
                    kind, f"(t_{base}._device if t_{base} is not None else _CPU)")
            w(f"        if {c}:")
            w(f"            node.s_{n} = {val}")
        # one node input per differentiable result, in order (output_nr)
        w(f"        _finish_node(node, o_{dnames[0]}, dev)")
        for n in dnames[1:]:
            w(f"        node.add_input_metadata(o_{n}, dev)")
        for n in outs:
            k = diff_index(e, n)
            w(f"        r_{n} = _rg_wrap_with_grad_fn(o_{n}, dev, node, {k})" if k >= 0
              else f"        r_{n} = _rg_wrap(o_{n}, dev)")
        w("    else:")
        for n in outs:
            w(f"        r_{n} = _rg_wrap(o_{n}, dev)")
        for n in saved:
            if kinds[n] != "output":
                continue
            c = " or ".join(f"e{i} is not None" for i in sorted(uses[n]))
            w(f"    if node is not None and ({c}):")
            w(f"        node.s_{n} = o_{n}")
            w(f"        node.s_{n}_vc = r_{n}._version_counter")
            w(f"        node.s_{n}_ver = r_{n}._version_counter.version")
            w("        if rg_tls_saved_hooks:")
            w(f"            node.s_{n} = _pack_saved(r_{n})")
        w("    if _forward_grad_slot != NULL:")
        w(f'        _call_forward_grad_slot("{e.name}", {args_tuple}, {results}, _jvp_{e.name})')
    w(f"    result_tuple = {results}")
    w("    if _trace_slot != NULL:")
    w(f'        _trace_op("{e.name}", {args_tuple}, result_tuple)')
    w("    if _op_exit_slot != NULL:")
    w("        _op_event_exit(tok, result_tuple)")
    w("    return result_tuple")
    w("")
    G.emit_python_wrapper(e, w)
    w("")


# ---------------------------------------------------------------------------
# The JVP function (see gen_jvp.py for the calling convention)

def emit_jvp(e, out):
    import gen_jvp
    w = out.append
    diff = [p.name for p in e.tensors if p.name not in e.nondiff_inputs]
    derived = set()
    exprs = []
    for key, src in e.jvp.items():
        names = [n.strip() for n in key.split(",")]
        tree = ast.parse(src, mode="eval")
        tree = _OutputLocals(set(e.outputs)).visit(tree)
        tree = gen_jvp._ToTensorMode(e, derived).visit(tree)
        ast.fix_missing_locations(tree)
        exprs.append((names, ast.unparse(tree)))
    gen_jvp.emit_jvp_header(e, w)
    w("    if " + " and ".join(f"t_{n} is None" for n in diff) + ":")
    w("        return None")
    if len(diff) > 1:
        # missing tangents: zeros shaped like their primal
        for n in diff:
            w(f"    if t_{n} is None:")
            w(f"        t_{n} = _fw_zeros(p_{n})")
    for k, n in enumerate(e.outputs):
        w(f"    o_{n} = outputs[{k}]")
    for base, suffix in sorted(derived):
        fn = {"shape": "_shape_of", "dtype": "_dtype_of", "ndim": "np.ndim", "device": "_fw_device"}[suffix]
        arg = f"p_{base}" if suffix == "device" else f"_fw_array(p_{base})"
        w(f"    d_{base}_{suffix} = {fn}({arg})")
    for n in e.outputs:
        w(f"    j_{n} = None")
    for names, expr in exprs:
        if len(names) == 1:
            w(f"    j_{names[0]} = {expr}")
        else:
            w(f"    {', '.join('j_' + n for n in names)} = {expr}")
    w("    return (" + ", ".join(f"j_{n}" for n in e.outputs) + ("," if len(e.outputs) == 1 else "") + ")")
    w("")
    w("")


class _OutputLocals(ast.NodeTransformer):
    """Result names -> the JVP function's locals (o_<name>); calls untouched."""

    def __init__(self, outputs):
        self.outputs = outputs

    def visit_Call(self, node):
        node.args = [self.visit(a) for a in node.args]
        node.keywords = [self.visit(k) for k in node.keywords]
        return node

    def visit_Name(self, node):
        if node.id in self.outputs:
            return ast.Name(id="o_" + node.id, ctx=node.ctx)
        return node
