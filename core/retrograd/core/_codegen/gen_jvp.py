"""The JVP table: one forward-mode function per derivatives.yaml entry.

Called by gen_ops.py (same build step, same output file). For every
differentiable entry it emits

    def _jvp_<name>(tuple args, list tans, tuple outputs)

`args` are the op's arguments exactly as the op received them, `tans` one
tangent per argument (a Tensor, or None where the argument has none at the
level being computed; for a TensorList argument a list with one entry per
element, or None), `outputs` the op's outputs. It returns a tuple with one
tangent per output, or None when every tangent is zero. The generated op
hands its function to the forward-grad slot (see abi.pxd), so
retrograd-forward-ad never looks an op up by name.

Formulas run in tensor mode (the differentiable `_op_*` functions): the
tangent computation is itself recorded, which is what makes forward-over-
reverse and nested levels work.

Zero tangents: an input without a tangent is a structural zero. Rather than
materialising zeros, the generator specialises each formula for every subset
of inputs that do carry one, simplifying the zeros away symbolically (a JVP
is linear in the tangents: `a + 0 -> a`, `0 * a -> 0`, and a call whose every
tangent argument is zero is zero). Where a zero cannot be simplified away
(a call mixing zero and non-zero tangents) it is materialised: `0.0` for
value helpers, which accept it, and `_fw_zeros(<primal>)` (zeros shaped like
the primal) elsewhere.
"""
from __future__ import annotations

import ast
import itertools

import formulas as V

# More differentiable inputs than this: no per-subset specialisation, missing
# tangents are materialised as zeros (2**n branches would be code bloat).
MAX_SPECIALISED = 3

_ZERO = "__ZERO__"


class _Zero(ast.Name):
    """A tangent known to be zero; `primal` names the input it belongs to."""
    _fields = ast.Name._fields

    def __init__(self, primal):
        super().__init__(id=_ZERO, ctx=ast.Load())
        self.primal = primal


def _kind(node, tangents):
    if isinstance(node, _Zero):
        return "zero"
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and n.id in tangents:
            return "tan"
    return "const"


def _first_primal(node):
    for n in ast.walk(node):
        if isinstance(n, _Zero):
            return n.primal
    return None


def _materialise(node, fn):
    # A zero that a call needs as an argument.
    if fn in V.VALUE_HELPERS:
        return ast.Constant(value=0.0)
    return ast.parse(f"_fw_zeros({_first_primal(node)}_p)", mode="eval").body


class _Simplify(ast.NodeTransformer):
    def __init__(self, tangents):
        self.tangents = tangents        # names of the live tangents (x_t)

    def visit_BinOp(self, node):
        node.left = self.visit(node.left)
        node.right = self.visit(node.right)
        zl, zr = isinstance(node.left, _Zero), isinstance(node.right, _Zero)
        if isinstance(node.op, ast.Add):
            if zl:
                return node.right
            if zr:
                return node.left
        elif isinstance(node.op, ast.Sub):
            if zr:
                return node.left
            if zl:
                return ast.UnaryOp(op=ast.USub(), operand=node.right)
        elif isinstance(node.op, (ast.Mult, ast.MatMult)):
            if zl:
                return node.left
            if zr:
                return node.right
        elif isinstance(node.op, ast.Div):
            if zl:
                return node.left
        if zl or zr:
            raise ValueError(f"cannot simplify a zero tangent in {ast.unparse(node)!r}")
        return node

    def visit_UnaryOp(self, node):
        node.operand = self.visit(node.operand)
        if isinstance(node.operand, _Zero) and isinstance(node.op, (ast.USub, ast.UAdd)):
            return node.operand
        return node

    def visit_Call(self, node):
        node.args = [self.visit(a) for a in node.args]
        fn = node.func.id
        kinds = [_kind(a, self.tangents) for a in node.args]
        tangent_args = [k for k in kinds if k != "const"]
        if tangent_args and all(k == "zero" for k in tangent_args):
            # linear in its tangent arguments, all zero
            return next(a for a in node.args if isinstance(a, _Zero))
        node.args = [_materialise(a, fn) if k == "zero" else a for a, k in zip(node.args, kinds)]
        return node


class _Substitute(ast.NodeTransformer):
    def __init__(self, zero_inputs):
        self.zero_inputs = zero_inputs

    def visit_Name(self, node):
        if node.id.endswith("_t") and node.id[:-2] in self.zero_inputs:
            return _Zero(node.id[:-2])
        return node


def specialise(src, live, dead):
    """`src` with the tangents of `dead` inputs set to zero, simplified; None
    if the whole JVP is zero."""
    tree = ast.parse(src, mode="eval")
    tree.body = _Substitute(set(dead)).visit(tree.body)
    body = _Simplify({f"{n}_t" for n in live}).visit(tree.body)
    if isinstance(body, _Zero):
        return None
    return body


class _ToTensorMode(ast.NodeTransformer):
    """Formula names -> the generated function's locals; calls -> tensor-mode code."""

    def __init__(self, entry, derived):
        self.entry = entry
        self.derived = derived          # <input>_shape and friends used

    def visit_Call(self, node):
        node.args = [self.visit(a) for a in node.args]
        fn = node.func.id
        if fn in V.PRIMITIVES:
            node.func = ast.parse(V.PRIMITIVES[fn][1], mode="eval").body
        elif fn in V.NS_HELPERS:
            node.args.insert(0, ast.Name(id="T", ctx=ast.Load()))
        return node

    def visit_Name(self, node):
        e = self.entry
        tensors = {p.name for p in e.params if p.is_tensor}
        others = {p.name for p in e.params if not p.is_tensor and not p.is_tensorlist}
        name = node.id
        if name == "result":
            return node
        if name.endswith("_p") and name[:-2] in tensors:
            return ast.Name(id="p_" + name[:-2], ctx=node.ctx)
        if name.endswith("_t") and name[:-2] in tensors:
            return ast.Name(id="t_" + name[:-2], ctx=node.ctx)
        if name in others:
            return ast.Name(id="v_" + name, ctx=node.ctx)
        for suffix in ("shape", "dtype", "ndim", "device"):
            base = name[: -len(suffix) - 1]
            if name.endswith("_" + suffix) and base in tensors:
                self.derived.add((base, suffix))
                return ast.Name(id=f"d_{base}_{suffix}", ctx=node.ctx)
        return node


def _auto_element_wise_src(e):
    (inp,) = [p.name for p in e.tensors if p.name not in e.nondiff_inputs]
    tree = ast.parse(e.formulas[inp], mode="eval")
    tensors = {p.name for p in e.tensors}

    class R(ast.NodeTransformer):
        def visit_Name(self, node):
            if node.id == "grad":
                return ast.Name(id=f"{inp}_t", ctx=node.ctx)
            if node.id in tensors:
                return ast.Name(id=f"{node.id}_p", ctx=node.ctx)
            return node
    return ast.unparse(R().visit(tree))


def _auto_linear_src(e):
    # the op itself, applied to the tangents of its differentiable inputs
    args = []
    for p in e.params:
        if p.is_tensor and p.name not in e.nondiff_inputs:
            args.append(f"{p.name}_t")
        elif p.is_tensor:
            args.append(f"{p.name}_p")
        else:
            args.append(p.name)
    return f"_op_{e.name}({', '.join(args)})"


def jvp_source(e):
    """The entry's JVP as a formula over <input>_p / <input>_t."""
    if e.jvp == "auto_element_wise":
        return _auto_element_wise_src(e)
    if e.jvp == "auto_linear":
        return _auto_linear_src(e)
    return str(e.jvp)


def _emit_expr(e, body, derived):
    tree = ast.Expression(body=body)
    if isinstance(body, ast.Call) and isinstance(body.func, ast.Name) and body.func.id.startswith("_op_"):
        # auto_linear: the op called directly; only rename its arguments
        body.args = [_ToTensorMode(e, derived).visit(a) for a in body.args]
    else:
        tree = _ToTensorMode(e, derived).visit(tree)
    ast.fix_missing_locations(tree)
    return ast.unparse(tree)


def emit_list_jvp(e, w):
    # TensorList ops are auto_linear element by element.
    i_tl = e.params.index(e.tensorlist)
    w(f"def _jvp_{e.name}(tuple args, list tans, tuple outputs):")
    w(f'    """Forward-mode derivative of `{e.raw["name"]}` (auto_linear)."""')
    w(f"    cdef list ts = tans[{i_tl}]")
    w("    if ts is None:")
    w("        return None")
    w(f"    cdef list elems = list(args[{i_tl}])")
    w("    for i in range(len(elems)):")
    w("        elems[i] = ts[i] if ts[i] is not None else _fw_zeros(elems[i])")
    call = []
    for i, p in enumerate(e.params):
        call.append("elems" if p is e.tensorlist else f"args[{i}]")
    w(f"    return (_op_{e.name}({', '.join(call)}),)")
    w("")
    w("")


def emit_jvp_header(e, w):
    """`def _jvp_<op>(args, tans, outputs)` and the unpacking of its
    arguments (p_/t_ for Tensors, v_ for the rest)."""
    w(f"def _jvp_{e.name}(tuple args, list tans, tuple outputs):")
    w(f'    """Forward-mode derivative of `{e.raw["name"]}` (derivatives.yaml line {e.line})."""')
    for i, p in enumerate(e.params):
        if p.is_tensor:
            w(f"    p_{p.name} = args[{i}]")
            w(f"    t_{p.name} = tans[{i}]")
        else:
            w(f"    v_{p.name} = args[{i}]")


def emit_jvp(e, out):
    """Append the JVP function of entry `e` to `out` (a list of lines)."""
    w = out.append
    if e.tensorlist is not None:
        emit_list_jvp(e, w)
        return
    if e.outputs:
        import gen_multi
        gen_multi.emit_jvp(e, out)
        return
    src = jvp_source(e)
    diff = [p.name for p in e.tensors if p.name not in e.nondiff_inputs]
    derived = set()
    branches = []
    if len(diff) <= MAX_SPECIALISED:
        for k in range(len(diff), 0, -1):
            for live in itertools.combinations(diff, k):
                dead = [n for n in diff if n not in live]
                body = specialise(src, live, dead)
                cond = " and ".join(f"t_{n} is not None" for n in live)
                expr = None if body is None else _emit_expr(e, body, derived)
                branches.append((cond, expr))
    else:
        body = ast.parse(src, mode="eval").body
        branches.append((None, _emit_expr(e, body, derived)))
    emit_jvp_header(e, w)
    w("    result = outputs[0]")
    for base, suffix in sorted(derived):
        fn = {"shape": "_shape_of", "dtype": "_dtype_of", "ndim": "np.ndim", "device": "_fw_device"}[suffix]
        arg = f"p_{base}" if suffix == "device" else f"_fw_array(p_{base})"
        w(f"    d_{base}_{suffix} = {fn}({arg})")
    if branches[0][0] is None:
        # many inputs: missing tangents become zeros shaped like their primal
        for n in diff:
            w(f"    if t_{n} is None:")
            w(f"        t_{n} = _fw_zeros(p_{n})")
        w(f"    return ({branches[0][1]},)")
    else:
        for cond, expr in branches:
            w(f"    if {cond}:")
            w(f"        return {'None' if expr is None else '(' + expr + ',)'}")
        w("    return None")
    w("")
    w("")


def emit_table(entries, out):
    """The name -> JVP function table, for tests and tools."""
    names = [e.name for e in entries if not e.nondifferentiable and e.jvp is not None]
    out.append("JVP_TABLE = {" + ", ".join(f"{n!r}: _jvp_{n}" for n in names) + "}")
    out.append("")
