"""Generate retrograd-core's ops from derivatives.yaml (run by meson at build time).

    python gen_ops.py derivatives.yaml OUT_OPS.pxi OUT_INFO.py TENSOR_TEMPLATE.pxi OUT_TENSOR.pxi

Emits, per entry: a backward node class `<Name>Backward0` (saved values,
release_variables, apply in array mode and in tensor mode), the C-level op
`_op_<name>` (kernel, graph recording, view bookkeeping, slot calls), a
Python function `<name>` and the Tensor methods the entry lists. Every
formula is parsed here: a typo or an unknown name fails the build with the
file and line of its entry. Nothing generated is committed. Entries with
several results (`-> (Tensor a, Tensor b)`) are emitted by gen_multi.py.
"""
from __future__ import annotations

import ast
import os
import sys
from dataclasses import dataclass, field

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import docs  # noqa: E402
import formulas as V  # noqa: E402
import gen_jvp  # noqa: E402
import gen_multi  # noqa: E402


def _load_autocast_policy():
    # core's table of autocast policies (Note [Autocast]), read by path: the
    # generator runs before retrograd.core can be imported
    import importlib.util
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "_autocast_policy.py")
    spec = importlib.util.spec_from_file_location("_rg_autocast_policy", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


AUTOCAST = _load_autocast_policy()


class TableError(Exception):
    pass


@dataclass
class Param:
    name: str
    type: str | None
    default: str | None
    kwonly: bool

    @property
    def is_tensor(self):
        return self.type == "Tensor"

    @property
    def is_tensorlist(self):
        # A variable number of tensor inputs (cat, stack): one next edge per
        # element, and a formula that returns one gradient per element.
        return self.type == "TensorList"


@dataclass
class Entry:
    name: str
    params: list
    kernel: str
    formulas: dict
    jvp: str | None
    methods: list
    view: str | None
    device_param: str | None
    nondifferentiable: bool
    nondiff_inputs: set
    public: bool
    line: int
    raw: dict = field(default_factory=dict)
    # several results (gen_multi.py): their names, which carry a gradient
    outputs: list = field(default_factory=list)
    output_diff: list = field(default_factory=list)

    @property
    def tensors(self):
        return [p for p in self.params if p.is_tensor]

    @property
    def others(self):
        return [p for p in self.params if not p.is_tensor and not p.is_tensorlist]

    @property
    def tensorlist(self):
        """The TensorList parameter, or None (the fixed-arity path)."""
        return next((p for p in self.params if p.is_tensorlist), None)

    @property
    def node_name(self):
        if self.raw.get("node"):
            return self.raw["node"]
        # torch's node names: str.title() capitalizes after digits too
        # (log1p -> Log1PBackward0, atan2 -> Atan2Backward0)
        base = "".join(part.title() for part in self.name.strip("_").split("_"))
        return f"{base}Backward0"


# ---------------------------------------------------------------------------
# Parsing

class _LineLoader(yaml.SafeLoader):
    pass


def _construct_mapping(loader, node, deep=False):
    mapping = yaml.SafeLoader.construct_mapping(loader, node, deep=deep)
    mapping["__line__"] = node.start_mark.line + 1
    return mapping


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def parse_signature(sig, where):
    try:
        head, rest = sig.split("(", 1)
        assert rest.endswith(")")
    except Exception:
        raise TableError(f"{where}: bad signature {sig!r}; expected name(Type arg, arg=default, ...)")
    name = head.strip()
    params = []
    kwonly = False
    body = rest[:-1].strip()
    for raw in [p.strip() for p in body.split(",")] if body else []:
        if raw == "*":
            kwonly = True
            continue
        default = None
        if "=" in raw:
            raw, default = (s.strip() for s in raw.split("=", 1))
            try:
                ast.literal_eval(default)
            except Exception:
                raise TableError(f"{where}: default {default!r} is not a Python literal")
        parts = raw.split()
        if len(parts) == 2:
            typ, pname = parts
        elif len(parts) == 1:
            typ, pname = None, parts[0]
        else:
            raise TableError(f"{where}: bad parameter {raw!r}")
        params.append(Param(pname, typ, default, kwonly))
    return name, params


KNOWN_KEYS = {"name", "kernel", "result", "methods", "view", "device", "nondifferentiable",
              "nondifferentiable_inputs", "public", "inplace", "__line__"}
# `batched:` how a batched backward (is_grads_batched) runs the entry's node
# (see _batched_formulas.pxi). `true`: every backward formula only broadcasts
# against `grad`, so the node runs once on the whole batch as it is. A mapping
# {input: formula}: one batching formula per differentiable input, over a
# `grad` with a leading batch dim. Absent: one apply per batch element.
KNOWN_KEYS.add("batched")
# `freed_after_backward: always | advanced_index`: the node saves no tensor
# here, but torch's counterpart does (index tensors of advanced indexing,
# CopySlices' wrapped function), so a second backward through it without
# retain_graph raises "Trying to backward through the graph a second time"
# as in torch; `advanced_index` only when the saved `index` is advanced.
KNOWN_KEYS.add("freed_after_backward")
# `node: Name`: the node class's name where torch's is not <Op>Backward0
# (the in-place-on-a-view node is torch's CopySlices).
KNOWN_KEYS.add("node")
# `fast_kernel: expr`: a C loop tried before `kernel` (same result, bit for
# bit, where it applies; None where it does not: see _elementwise_loops.pyx)
KNOWN_KEYS.add("fast_kernel")
# `doc: |` the numpydoc body of the op's docstring (_codegen/docs.py)
KNOWN_KEYS.add("doc")
# `scalar_self: true`: the op's first parameter takes a Python or NumPy number
# too, as torch's Scalar-self overloads do (rg.add(2, x), rg.pow(2, x), and
# the reflected operators 2 - x); other ops refuse a number there
# (Note [Non-Tensor arguments], _tensor_args.pxi).
KNOWN_KEYS.add("scalar_self")
# `scalar_other: true`: given a number as its last tensor parameter, the op is
# torch's Tensor-Scalar overload (x ** 2 is pow.Tensor_Scalar, x % 2 is
# remainder.Scalar): its node has an edge for the tensor alone, so
# next_functions and calling the node see one input, as in torch.
KNOWN_KEYS.add("scalar_other")
# `name: op(...) -> (Tensor a, Tensor b)`, `output_differentiability:`, JVP
# formulas keyed by result name: entries with several results (gen_multi.py)
KNOWN_KEYS |= gen_multi.KNOWN_KEYS
# `aliases: [arccos]`: torch's other names for the op (the one mechanism for
# aliases). Each alias gets a module-level function (when the entry is
# public), the Tensor method when the op has a method of its own name, and
# `<alias>_` when the op has `<name>_` in place; its docstring, stub and
# docs page are derived from the entry's. Same op, same node.
KNOWN_KEYS.add("aliases")
# `inplace_function: true`: torch also has the in-place forms as functions
# (torch.sin_(x) is x.sin_()): one module-level function per in-place name
# (aliases' included), operators left out; a list names those torch has.
KNOWN_KEYS.add("inplace_function")
# `inplace_example: |` the Examples body of the in-place methods' docstrings,
# where the op's own examples would print something else in place (a
# comparison writes 1.0 and 0.0 into a float tensor, not True and False):
# doctests calling `<name>_`, renamed for each in-place alias.
KNOWN_KEYS.add("inplace_example")


def load(path):
    with open(path) as f:
        try:
            data = yaml.load(f, Loader=_LineLoader)
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            line = mark.line + 1 if mark is not None else 0
            raise TableError(f"{path}:{line}: invalid YAML: {exc.problem or exc}")
    if not isinstance(data, list):
        raise TableError(f"{path}:1: the table must be a YAML list of entries (- name: ...)")
    entries = []
    seen = set()
    bound = {}                   # Tensor method name -> op that binds it
    kernels = _known_kernels(path)
    for raw in data:
        if not isinstance(raw, dict):
            raise TableError(f"{path}:?: every entry must be a mapping with `name:` and `kernel:`, "
                             f"got {raw!r}")
        line = raw.get("__line__", 0)
        where = f"{path}:{line}"
        if "name" not in raw or "kernel" not in raw:
            raise TableError(f"{where}: every entry needs `name:` and `kernel:`")
        sig, outputs = gen_multi.split_returns(raw["name"], where)
        name, params = parse_signature(sig, where)
        if name in seen:
            raise TableError(f"{where}: op {name!r} is defined twice (one entry per op)")
        seen.add(name)
        _check_tensorlist(name, params, raw, where)
        tnames = {p.name for p in params if p.is_tensor or p.is_tensorlist}
        formulas = {}
        jvps = gen_multi.jvp_keys(raw, outputs, where)
        for k, v in raw.items():
            if k in KNOWN_KEYS or k in jvps:
                continue
            if k not in tnames:
                raise TableError(f"{where}: {k!r} is neither a known key nor a Tensor parameter of {name}")
            formulas[k] = str(v)
        nondiff = bool(raw.get("nondifferentiable", False))
        nondiff_inputs = set(raw.get("nondifferentiable_inputs", []))
        if not nondiff:
            for t in tnames - nondiff_inputs:
                if t not in formulas:
                    raise TableError(f"{where}: {name} has no backward formula for input {t!r} "
                                     "(list it under nondifferentiable_inputs if it has none)")
        methods = []
        for m in raw.get("methods", []) or []:
            if isinstance(m, dict):
                for mk, mv in m.items():
                    if mk == "__line__":
                        continue
                    if mv != "reflected":
                        raise TableError(f"{where}: method {mk}: only `reflected` is understood")
                    methods.append((mk, True))
            elif isinstance(m, str):
                methods.append((m, False))
            else:
                raise TableError(f"{where}: methods: {m!r} is neither a name nor `name: reflected`")
        inplace = _inplace_names(raw.get("inplace"), name, where)
        aliases = _alias_names(raw, name, methods, inplace, where)
        for mname in [m for m, _ in methods] + inplace:
            if mname in bound:
                raise TableError(f"{where}: method {mname!r} is already bound to op {bound[mname]!r}")
            bound[mname] = name
        view = raw.get("view")
        if view not in (None, "always", "maybe"):
            raise TableError(f"{where}: view must be `always` or `maybe`")
        e = Entry(name=name, params=params, kernel=str(raw["kernel"]), formulas=formulas,
                  jvp=raw.get("result"), methods=methods, view=view,
                  device_param=raw.get("device"), nondifferentiable=nondiff,
                  nondiff_inputs=nondiff_inputs, public=raw.get("public", True), line=line, raw=raw)
        e.raw["__inplace__"] = inplace
        e.raw["__aliases__"] = aliases
        for a in aliases:
            if a in seen:
                raise TableError(f"{where}: alias {a!r} is already an op or an alias")
            seen.add(a)
        if outputs:
            gen_multi.configure(e, raw, outputs, jvps, where)
        e.raw["__batched__"] = _batching_formulas(e, where)
        check_entry(e, where, kernels)
        check_methods(e, where)
        if "doc" in raw:
            try:
                docs.check(raw["doc"], name, e.public)
            except docs.DocError as exc:
                raise TableError(f"{where}: {exc}")
        entries.append(e)
    return entries


def _batching_formulas(e, where):
    """The entry's `batched:` formulas ({input: formula}), {} for `batched:
    true` or none; checked like backward formulas."""
    spec = e.raw.get("batched")
    if spec is None or spec is True or spec is False:
        return {}
    if not isinstance(spec, dict):
        raise TableError(f"{where}: batched must be `true` or a mapping of input -> batching "
                         f"formula, got {spec!r}")
    formulas = {k: str(v) for k, v in spec.items() if k != "__line__"}
    for k in formulas:
        if k not in e.formulas:
            raise TableError(f"{where}: batched: {k!r} is not a differentiable Tensor input of "
                             f"{e.name}")
    for k in e.formulas:
        if k not in formulas:
            raise TableError(f"{where}: batched: no batching formula for input {k!r} (give one for "
                             "every differentiable input)")
    if e.tensorlist is not None:
        raise TableError(f"{where}: batched: TensorList entries have no batching formulas")
    return formulas


def _check_tensorlist(name, params, raw, where):
    """A TensorList entry: exactly one TensorList parameter, no Tensor
    parameters beside it, no `view:` and no operator methods."""
    lists = [p for p in params if p.is_tensorlist]
    if not lists:
        return
    if len(lists) > 1:
        raise TableError(f"{where}: {name} has {len(lists)} TensorList parameters; at most one is "
                         "supported (pass the others as separate ops)")
    if any(p.is_tensor for p in params):
        raise TableError(f"{where}: {name} mixes Tensor and TensorList parameters, which the "
                         "generator does not support; make the Tensor a TensorList element or "
                         "write a composite")
    if params[0] is not lists[0]:
        raise TableError(f"{where}: {name}: the TensorList parameter must come first")
    if raw.get("view") is not None:
        raise TableError(f"{where}: {name}: a TensorList op cannot be a view (`view:`)")
    if raw.get("nondifferentiable"):
        raise TableError(f"{where}: {name}: a TensorList op must be differentiable (write a "
                         "nondifferentiable op as a composite)")
    if raw.get("nondifferentiable_inputs"):
        raise TableError(f"{where}: {name}: nondifferentiable_inputs is not supported with a "
                         "TensorList parameter")
    for m in raw.get("methods", []) or []:
        mname = m if isinstance(m, str) else next(iter(k for k in m if k != "__line__"), "")
        if mname.startswith("__") or isinstance(m, dict):
            raise TableError(f"{where}: {name}: method {mname!r}: TensorList ops bind plain "
                             "methods only")


def _inplace_names(spec, name, where):
    """`inplace:` -> the in-place Tensor methods of an entry: `true` gives
    `<name>_`, a name or a list of names binds those (operators such as
    __ifloordiv__ included). Each runs the op out of place and writes the
    result back through _inplace.pxi's one mechanism (_inplace_call)."""
    if spec is None or spec is False:
        return []
    if spec is True:
        return [name.lstrip("_") + "_"]
    if isinstance(spec, str):
        return [spec]
    if isinstance(spec, list) and all(isinstance(m, str) for m in spec):
        return list(spec)
    raise TableError(f"{where}: inplace must be true, a method name or a list of names")


def _alias_names(raw, name, methods, inplace, where):
    """`aliases:` -> the alias names; appends to `methods` and `inplace` the
    Tensor methods they bring (see KNOWN_KEYS' comment)."""
    spec = raw.get("aliases")
    if spec is None:
        return []
    if not (isinstance(spec, list) and all(isinstance(a, str) and a.isidentifier() for a in spec)):
        raise TableError(f"{where}: aliases must be a list of names")
    if not raw.get("public", True) or raw.get("kernel") is None:
        raise TableError(f"{where}: aliases are for public ops")
    if any(p.is_tensorlist for p in parse_signature(gen_multi.split_returns(raw["name"], where)[0], where)[1]):
        raise TableError(f"{where}: aliases of TensorList ops are not supported")
    own = (name, False) in methods
    base = name.lstrip("_") + "_"
    for a in spec:
        if own:
            methods.append((a, False))
        if base in inplace:
            inplace.append(a + "_")
    return list(spec)


def inplace_function_names(e):
    """The module-level in-place functions of an entry (`inplace_function:`
    true: one per in-place method; a list: those of them that torch has)."""
    spec = e.raw.get("inplace_function")
    names = [m for m in e.raw.get("__inplace__", []) if not m.startswith("__")]
    if not spec:
        return []
    if isinstance(spec, list):
        unknown = [m for m in spec if m not in names]
        if unknown:
            raise TableError(f"line {e.line}: {e.name}: inplace_function names {unknown} are not in-place "
                             "methods of the entry")
        return list(spec)
    return names


def emit_alias_functions(e, w):
    """The module-level functions of the entry's aliases and, with
    `inplace_function:`, of its in-place methods."""
    args = ", ".join(p.name for p in e.params)
    for a in e.raw.get("__aliases__", []):
        w(f"def {a}({_pyparams(e)}):")
        w(docs.literal(docs.alias_doc(e, a), "    "))
        w(f"    return {e.name}({args})")
        w("")
    first = e.params[0].name
    rest = ", ".join(f"{p.name}={p.name}" for p in e.params[1:])
    for m in inplace_function_names(e):
        w(f"def {m}({_pyparams(e)}):")
        w(docs.literal(docs.inplace_function_doc(e, m), "    "))
        w(f"    if not isinstance({first}, Tensor):")
        w(f'        raise TypeError(f"{m}(): argument \'input\' must be Tensor, not {{type({first}).__name__}}")')
        w(f"    return {first}.{m}({rest})")
        w("")


def _known_kernels(path):
    """The k_* kernels defined in _op_support.pxi next to the table or
    declared by a topic module's .pxd there (the kernels by topic: None when
    the table lives elsewhere, e.g. a test's scratch copy: nothing to check)."""
    import re
    folder = os.path.dirname(os.path.abspath(path))
    support = os.path.join(folder, "_op_support.pxi")
    if not os.path.exists(support):
        return None
    with open(support) as f:
        found = set(re.findall(r"^c?p?def\s+(?:[\w.]+\s+)?(k_\w+)\s*\(", f.read(), re.M))
    for names in topic_declarations(folder).values():
        found.update(n for n in names if n.startswith("k_"))
    return found


# ---------------------------------------------------------------------------
# Formula analysis and rewriting

def _parse_expr(src, where, what):
    try:
        return ast.parse(src, mode="eval")
    except SyntaxError as exc:
        raise TableError(f"{where}: {what} is not a valid expression: {src!r} ({exc.msg})")


def formula_names(entry):
    """The names a backward formula may refer to, mapped to their kind."""
    names = {"grad": "grad", "result": "result"}
    for p in entry.params:
        if p.is_tensorlist:
            # The list itself is not saved (no per-element version tracking);
            # formulas see the elements' shapes, dtypes and count.
            for suffix in ("shapes", "dtypes", "len"):
                names[f"{p.name}_{suffix}"] = "list_" + suffix
            continue
        names[p.name] = "input" if p.is_tensor else "param"
        if p.is_tensor:
            for suffix in ("shape", "dtype", "device", "ndim"):
                names[f"{p.name}_{suffix}"] = suffix
    if entry.tensorlist is not None:
        del names["result"]
    if entry.outputs:
        gen_multi.add_formula_names(entry, names)
    return names


def check_formula(entry, src, where, what):
    tree = _parse_expr(src, where, what)
    known = formula_names(entry)
    used = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name):
                raise TableError(f"{where}: {what}: only calls of plain names are allowed, got "
                                 f"{ast.unparse(node.func)!r}")
            fn = node.func.id
            if fn not in V.PRIMITIVES and fn not in V.NS_HELPERS and fn not in V.VALUE_HELPERS:
                raise TableError(f"{where}: {what}: unknown function {fn!r}; add it to "
                                 "_codegen/formulas.py (and its implementation) first")
        elif isinstance(node, ast.Attribute):
            raise TableError(f"{where}: {what}: attribute access {ast.unparse(node)!r} is not allowed; "
                             "use a helper")
        elif isinstance(node, ast.Name):
            parent_call = False
            for n in ast.walk(tree):
                if isinstance(n, ast.Call) and n.func is node:
                    parent_call = True
            if parent_call:
                continue
            if node.id not in known:
                tl = entry.tensorlist
                if tl is not None and node.id in (tl.name, "result"):
                    raise TableError(f"{where}: {what}: a TensorList formula cannot use "
                                     f"{node.id!r} (not saved); use {tl.name}_shapes, "
                                     f"{tl.name}_dtypes, {tl.name}_len and the other parameters")
                raise TableError(f"{where}: {what}: unknown name {node.id!r}")
            used.add(node.id)
    return used


def check_entry(e, where, kernels=None):
    if e.outputs:
        return gen_multi.check_entry(e, where, kernels)
    if e.nondifferentiable:
        check_kernel(e, where, kernels)
        return
    for k, f in e.formulas.items():
        check_formula(e, f, where, f"formula for {k}")
    for k, f in e.raw.get("__batched__", {}).items():
        check_formula(e, f, where, f"batching formula for {k}")
    if e.jvp is not None and str(e.jvp) not in ("auto_element_wise", "auto_linear"):
        check_jvp(e, str(e.jvp), where)
    check_kernel(e, where, kernels)


def check_jvp(e, src, where):
    """The forward (JVP) formula: `<input>_p`, `<input>_t`, `result`, the
    other parameters and the formula vocabulary."""
    tree = _parse_expr(src, where, "result (JVP) formula")
    known = {"result"} | {p.name for p in e.others}
    for p in e.tensors:
        known |= {f"{p.name}_p", f"{p.name}_t"}
    if e.tensorlist is not None:
        raise TableError(f"{where}: result (JVP) formula: a TensorList op supports only "
                         "`auto_linear` (applied element by element)")
    calls = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and not isinstance(node.func, ast.Name):
            raise TableError(f"{where}: result (JVP) formula: only calls of plain names are allowed, "
                             f"got {ast.unparse(node.func)!r}")
        if isinstance(node, ast.Attribute):
            raise TableError(f"{where}: result (JVP) formula: attribute access {ast.unparse(node)!r} "
                             "is not allowed; use a helper")
        if isinstance(node, ast.Name):
            if id(node) in calls:
                if node.id not in V.PRIMITIVES and node.id not in V.NS_HELPERS \
                        and node.id not in V.VALUE_HELPERS:
                    raise TableError(f"{where}: result (JVP) formula: unknown function {node.id!r}")
            elif node.id not in known:
                raise TableError(f"{where}: result (JVP) formula: unknown name {node.id!r} "
                                 f"(inputs are spelt <input>_p / <input>_t)")


def check_kernel(e, where, kernels=None):
    tree = _parse_expr(e.kernel, where, "kernel")
    pnames = {p.name for p in e.params}
    calls = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            if node.id in pnames or node.id in V.KERNEL_GLOBALS:
                continue
            if id(node) in calls and node.id.startswith(V.KERNEL_PREFIXES):
                if kernels is not None and node.id not in kernels:
                    raise TableError(f"{where}: kernel calls {node.id!r}, which neither "
                                     "_op_support.pxi nor a topic module's .pxd declares")
                continue
            raise TableError(f"{where}: kernel uses unknown name {node.id!r}")


def check_methods(e, where):
    for mname, reflected in e.methods:
        if reflected and len(e.params) < 2:
            raise TableError(f"{where}: method {mname}: `reflected` needs two parameters")
        if mname.startswith("__") and not reflected:
            binary = len(e.params) >= 2 and e.params[1].default is None
            rest = e.params[2 if binary else 1:]
            if any(p.default is None for p in rest):
                raise TableError(f"{where}: operator {mname} needs defaults for the parameters "
                                 f"after the operands ({', '.join(p.name for p in rest)})")


class _Rename(ast.NodeTransformer):
    def __init__(self, entry, mode):
        self.entry = entry
        self.mode = mode          # "array", "tensor" or "kernel"
        self.known = formula_names(entry)

    def visit_Call(self, node):
        node.args = [self.visit(a) for a in node.args]
        node.keywords = [self.visit(k) for k in node.keywords]
        if isinstance(node.func, ast.Name):
            fn = node.func.id
            if self.mode == "kernel":
                return node
            if fn in V.PRIMITIVES:
                code = V.PRIMITIVES[fn][0 if self.mode == "array" else 1]
                node.func = ast.parse(code, mode="eval").body
            elif fn in V.NS_HELPERS:
                node.args.insert(0, ast.Name(id="A" if self.mode == "array" else "T", ctx=ast.Load()))
        return node

    def visit_Name(self, node):
        if self.mode == "kernel":
            if node.id in {p.name for p in self.entry.params}:
                p = next(p for p in self.entry.params if p.name == node.id)
                return ast.Name(id=("a_" if p.is_tensor or p.is_tensorlist else "v_") + node.id,
                                ctx=node.ctx)
            return node
        if node.id in ("grad", "grads"):
            return node
        if node.id in self.known:
            return ast.Name(id="v_" + node.id, ctx=node.ctx)
        return node


def rewrite(entry, src, mode):
    tree = ast.parse(src, mode="eval")
    tree = _Rename(entry, mode).visit(tree)
    ast.fix_missing_locations(tree)
    return ast.unparse(tree)


# ---------------------------------------------------------------------------
# Emission

def emit_node(e, out):
    tensors = [p for p in e.tensors]
    uses = {}                    # saved name -> set of input indices whose formula uses it
    per_input = {}
    batching = e.raw.get("__batched__", {})
    per_input_batched = {}
    for i, p in enumerate(tensors):
        if p.name not in e.formulas:
            continue
        used = check_formula(e, e.formulas[p.name], "", "")
        used.discard("grad")
        per_input[i] = used
        for n in used:
            uses.setdefault(n, set()).add(i)
        if p.name in batching:
            used_b = check_formula(e, batching[p.name], "", "")
            used_b.discard("grad")
            per_input_batched[i] = used_b
            for n in used_b:
                uses.setdefault(n, set()).add(i)
    saved = sorted(uses)
    kinds = formula_names(e)
    has_tensor_saves = any(kinds[n] in ("input", "result") for n in saved)
    cls = e.node_name
    w = out.append
    w("@cython.final")
    w("@cython.trashcan(True)")     # see _ops.pxd: Node's own is not inherited across modules
    w(f"cdef class {cls}(Node):")
    w(f'    """Backward of `{e.raw["name"]}` (derivatives.yaml line {e.line})."""')
    # A saved tensor is stored inline as three fields (data, version counter,
    # version at save time): no SavedVariable object per saved tensor. How
    # to rebuild it as a Tensor comes from the node's own next edge (inputs)
    # or the node itself (`result`); see _saved.pxi.
    for n in saved:
        w(f"    cdef object s_{n}")
        if kinds[n] in ("input", "result"):
            w(f"    cdef VersionCounter s_{n}_vc")
            w(f"    cdef Py_ssize_t s_{n}_ver")
    w("")
    w("    cdef void release_variables(self):")
    for n in saved:
        if kinds[n] in ("input", "result"):
            w(f"        self.s_{n} = None")
            w(f"        self.s_{n}_vc = None")
    w("        self._released = True")
    w("")
    _emit_apply(e, w, "apply", e.formulas, per_input, saved, kinds, has_tensor_saves)
    if batching:
        # the batching formulas (see _batched_formulas.pxi), reached through
        # rg_apply_batched
        _emit_apply(e, w, "_apply_batched", batching, per_input_batched, saved, kinds,
                    has_tensor_saves)
    freed = e.raw.get("freed_after_backward")
    _emit_saved_accessors(e, w, saved, kinds, freed)
    return saved, uses


def _emit_apply(e, w, method, formulas, per_input, saved, kinds, has_tensor_saves):
    tensors = e.tensors
    w(f"    cdef list {method}(self, list grads, bint create_graph):")
    w("        cdef object grad = grads[0]")
    n_out = len(tensors)
    for i in range(n_out):
        w(f"        cdef object r{i} = None")
    w("        if grad is None:")
    if e.raw.get("scalar_other"):
        w("            return [None] * self._num_edges")
    else:
        w(f"            return [{', '.join(['None'] * n_out)}]")
    freed = e.raw.get("freed_after_backward")
    if freed not in (None, "always", "advanced_index"):
        raise TableError(f"derivatives.yaml:{e.line}: freed_after_backward must be `always` or "
                         f"`advanced_index`, got {freed!r}")
    if has_tensor_saves or freed == "always":
        w("        if self._released:")
        w("            _raise_released(self)")
    elif freed == "advanced_index":
        w("        if self._released and _index_is_advanced(self.s_index):")
        w("            _raise_released(self)")
    for mode, flag in (("array", "False"), ("tensor", "True")):
        w("        if not create_graph:" if mode == "array" else "        else:")
        any_stmt = False
        # Each saved tensor is unpacked once, before any formula, in field
        # order (as PyTorch does): an unpack hook runs once per saved tensor.
        # A tensor not saved (its users need no gradient) unpacks to None.
        for n in saved:
            if kinds[n] in ("input", "result"):
                any_stmt = True
                w(f"            v_{n} = {_unpack_call(e, n, kinds[n], flag)}")
        for i, p in enumerate(tensors):
            if i not in per_input:
                continue
            any_stmt = True
            fn = f"self._fn{i}" if i < 2 else f"rg_next_fn(self, {i})"
            w(f"            if {fn} is not None:")
            for n in sorted(per_input[i]):
                if kinds[n] not in ("input", "result"):
                    w(f"                v_{n} = self.s_{n}")
            w(f"                r{i} = {rewrite(e, formulas[p.name], mode)}")
        if not any_stmt:
            w("            pass")
    if e.raw.get("scalar_other"):
        w("        if self._num_edges == 1:")
        w("            return [r0]")
    w(f"        return [{', '.join(f'r{i}' for i in range(n_out))}]")
    w("")


def _emit_saved_accessors(e, w, saved, kinds, freed):
    for n in saved:
        if kinds[n] in ("input", "result"):
            w("    @property")
            w(f"    def _saved_{n}(self):")
            w("        if self._released:")
            w("            _raise_released(self)")
            w(f"        return {_unpack_call(e, n, kinds[n], 'True')}")
            w("")
        else:
            w("    @property")
            w(f"    def _saved_{n}(self):")
            if n == "index" and freed == "always":
                w("        if self._released:")
                w("            _raise_released(self)")
            elif n == "index" and freed == "advanced_index":
                # (torch saves advanced indices as tensors, freed by backward)
                w("        if self._released and _index_is_advanced(self.s_index):")
                w("            _raise_released(self)")
            w(f"        return self.s_{n}")
            w("")
    # saved_tensors_report: the arrays this node keeps alive (released or
    # unsaved slots skipped).
    w("    def _saved_arrays(self):")
    w("        # (name, array) for each tensor this node keeps saved for its backward")
    w("        out = []")
    for n in saved:
        if kinds[n] in ("input", "result"):
            w(f"        if self.s_{n}_vc is not None and self.s_{n} is not None:")
            w(f"            out.append(('{n}', _saved_array_of(self.s_{n})))")
    w("        return out")
    w("")
    w("")


def emit_save_input(w, n, cond):
    """Save input `n` on the new node when `cond` (some input that uses it
    needs a gradient) holds; also used for multi-output entries."""
    w(f"        if {cond}:")
    w(f"            node.s_{n} = a_{n}")
    w(f"            if t_{n} is not None:")
    # torch's saved_original: an input is kept as the tensor itself, so that
    # unpacking returns that very object (the array alone where it was moved
    # to the op's device).
    w(f"                if a_{n} is t_{n}._array:")
    w(f"                    node.s_{n} = t_{n}")
    w(f"                _check_saveable(t_{n})")
    w(f"                node.s_{n}_vc = t_{n}._version_counter")
    w(f"                node.s_{n}_ver = t_{n}._version_counter.version")
    w("                if rg_tls_saved_hooks:")
    w(f"                    node.s_{n} = _pack_saved(t_{n})")


def _unpack_call(e, n, kind, flag):
    if kind == "result":
        return f"_unpack_output(self, self.s_{n}, self.s_{n}_vc, self.s_{n}_ver, {flag})"
    idx = [p.name for p in e.tensors].index(n)
    return f"_unpack_input(self, self.s_{n}, self.s_{n}_vc, self.s_{n}_ver, {idx}, {flag})"


def _cparams(e):
    return ", ".join(f"object {p.name}" for p in e.params)


def _pyparams(e, skip_first=False):
    parts = []
    star = False
    for i, p in enumerate(e.params):
        if skip_first and i == 0:
            continue
        if p.kwonly and not star:
            parts.append("*")
            star = True
        parts.append(p.name if p.default is None else f"{p.name}={p.default}")
    return ", ".join(parts)


def _arg_array_call(e, p):
    # errors for a bad non-Tensor argument name the op and the argument as
    # torch does (its first Tensor parameter is called 'input', not 'self')
    arg = "input" if p.name == "self" else p.name
    if p.name in INDEX_PARAMS:
        return f'_arg_array({p.name}, "{e.name}", "{arg}", True)'
    return f'_arg_array({p.name}, "{e.name}", "{arg}")'


# Tensor parameters that torch never takes a number for (no Scalar
# overload): an index, a mask (Note [Non-Tensor arguments])
INDEX_PARAMS = frozenset({"index", "indices", "mask"})


def emit_autocast(e, w):
    # An op of torch's autocast lists casts its Tensor arguments first, while
    # a region is open on this thread (Note [Autocast]); others get no code.
    cpu, cuda = AUTOCAST.policy(e.name)
    if not (cpu or cuda):
        return
    names = [p.name for p in e.tensors]
    tup = "(" + ", ".join(names) + ("," if len(names) == 1 else "") + ")"
    w("    if rg_tls_autocast:")
    w(f'        ac_target = _ac_target({cpu}, {cuda}, {tup}, "{e.name}")')
    w("        if ac_target is not None:")
    # the op itself on the cast arguments, with autocast off meanwhile
    w(f"            return _autocast_run(_py_op_{e.name}, ({', '.join(p.name for p in e.params)}"
      f"{',' if len(e.params) == 1 else ''}), None, ac_target)")


def emit_op(e, saved, uses, out):
    w = out.append
    tensors = e.tensors
    kinds = formula_names(e)
    if any(AUTOCAST.policy(e.name)):
        # what autocast calls (a Python callable) to run the op on cast arguments
        w(f"def _py_op_{e.name}({', '.join(p.name for p in e.params)}):")
        w(f"    return _op_{e.name}({', '.join(p.name for p in e.params)})")
        w("")
        w("")
    w(f"cdef object _op_{e.name}({_cparams(e)}):")
    emit_autocast(e, w)
    for p in tensors:
        w(f"    cdef Tensor t_{p.name} = <Tensor>{p.name} if isinstance({p.name}, Tensor) else None")
        if p.default == "None":
            # an optional Tensor argument (clamp's min/max): None stays None
            w(f"    cdef object a_{p.name} = t_{p.name}._array if t_{p.name} is not None else "
              f"(None if {p.name} is None else {_arg_array_call(e, p)})")
        else:
            w(f"    cdef object a_{p.name} = t_{p.name}._array if t_{p.name} is not None else "
              f"{_arg_array_call(e, p)}")
    for p in e.others:
        if p.name == "keepdim":
            # torch's bool argument: truthiness of a tuple or a string is no keepdim
            w("    if type(keepdim) is not bool:")
            w(f'        keepdim = _bool_arg(keepdim, "keepdim", "{e.name}")')
        w(f"    cdef object v_{p.name} = {p.name}")
    if e.device_param:
        w(f"    cdef Device dev = _parse_device({e.device_param})")
    elif len(tensors) == 1:
        w(f"    cdef Device dev = t_{tensors[0].name}._device if t_{tensors[0].name} is not None else _CPU")
    elif len(tensors) == 2:
        w(f"    cdef Device dev = _dev2(t_{tensors[0].name}, t_{tensors[1].name})")
    else:
        w(f"    cdef Device dev = _dev3(t_{tensors[0].name}, t_{tensors[1].name}, t_{tensors[2].name})")
    if not e.device_param:
        # no Tensor argument (formulas call ops on bare arrays): the device
        # of the first array (a CuPy array's GPU)
        w("    if dev is _CPU and " + " and ".join(f"t_{p.name} is None" for p in tensors) + ":")
        w(f"        dev = _device_of_array(a_{tensors[0].name})")
    if len(tensors) > 1 and not e.device_param:
        # torch lets 0-d CPU tensors join a CUDA op (as scalars): their
        # arrays move to the device, since CuPy takes no host arrays
        w("    if dev.type == RG_DEV_CUDA:")
        for p in tensors:
            w(f"        a_{p.name} = _to_device_array(a_{p.name}, dev)")
    w("    cdef object tok = None")
    w("    cdef Tensor result")
    if not e.nondifferentiable:
        w(f"    cdef {e.node_name} node = None")
        for i in range(len(tensors)):
            w(f"    cdef Node e{i}")
    args_tuple = "(" + ", ".join(p.name for p in e.params) + ("," if len(e.params) == 1 else "") + ")"
    w("    if _op_enter_slot != NULL:")
    # torch's op names (aten::mul), so tools that read its traces read ours
    w(f'        tok = _op_enter_slot("aten::{e.name}", rg_tls_sequence_nr, {args_tuple})')
    # Every kernel but a view's (which computes nothing) runs with NumPy's
    # floating-point warnings off, as torch never warns (_fp_kernel_enter in
    # _op_support.pxi). A `fast_kernel:` (a C loop for the common layout,
    # which never warns) runs first; None from it means "not this input".
    quiet = e.view is None
    ind = "    "
    fast = e.raw.get("fast_kernel")
    if fast:
        w(f"    out = {rewrite(e, fast, 'kernel')}")
        w("    if out is None:")
        ind += "    "
    if quiet:
        w(f"{ind}fpq = _fp_kernel_enter()")
        w(f"{ind}try:")
        ind += "    "
    # NumPy's errors said as torch's (exceptions cost nothing until raised):
    # a broadcasting ValueError is torch's RuntimeError; a ufunc with no loop
    # for the dtype (complex trunc, bool silu) is torch's NotImplementedError
    # (a kernel with several results returns a tuple: gen_multi wraps each)
    kernel_call = f"out = {'' if e.outputs else '_ensure_array'}({rewrite(e, e.kernel, 'kernel')})"
    if tensors:
        w(f"{ind}try:")
        w(f"{ind}    {kernel_call}")
        if len(tensors) >= 2:
            w(f"{ind}except ValueError as exc:")
            w(f"{ind}    _raise_shape_error(exc)")
            w(f"{ind}    raise")
        w(f"{ind}except TypeError as exc:")
        w(f'{ind}    _raise_dtype_error(exc, "{e.name}", a_{tensors[0].name})')
        w(f"{ind}    raise")
    else:
        w(f"{ind}{kernel_call}")
    if quiet:
        ind = ind[:-4]
        w(f"{ind}finally:")
        w(f"{ind}    _fp_kernel_exit(fpq)")
    if e.outputs:
        gen_multi.emit_op_tail(e, saved, uses, w)
        return
    if e.nondifferentiable:
        w("    result = _rg_wrap(out, dev)")
    else:
        diff = [p for p in tensors if p.name not in e.nondiff_inputs]
        cond = " or ".join(f"_needs(t_{p.name})" for p in diff)
        # linear ops with real coefficients (views, sums, copies) have the
        # same gradient for complex tensors: no complex refusal for them,
        # except a real-to-complex conversion (its gradient needs .real)
        record = "_record" if e.jvp == "auto_linear" and e.name != "_to_dtype" else "_record_op"
        w(f"    if rg_tls_grad_enabled and ({cond}) and {record}(out):")
        w(f"        node = {e.node_name}.__new__({e.node_name})")
        for i, p in enumerate(tensors):
            if p.name in e.nondiff_inputs:
                w(f"        e{i} = None")
            else:
                w(f"        e{i} = _edge_fn(t_{p.name})")
        if e.raw.get("scalar_other"):
            if len(tensors) != 2:
                raise TableError(f"derivatives.yaml:{e.line}: scalar_other needs two tensor parameters")
            last = tensors[1].name
            w(f"        if t_{last} is None:")
            w(f"            _set_edges1(node, e0, _edge_nr(t_{tensors[0].name}))")
            w("        else:")
            w(f"            _set_edges2(node, e0, _edge_nr(t_{tensors[0].name}), e1, _edge_nr(t_{last}))")
        elif len(tensors) <= 2:
            args = ", ".join(f"e{i}, _edge_nr(t_{p.name})" for i, p in enumerate(tensors))
            w(f"        _set_edges{len(tensors)}(node, {args})")
        else:
            edges = "(" + ", ".join(f"e{i}, _edge_nr(t_{p.name})" for i, p in enumerate(tensors)) + ")"
            w(f"        node.set_next_edges({edges})")
        for n in saved:
            if kinds[n] == "result":
                continue
            cond = " or ".join(f"e{i} is not None" for i in sorted(uses[n]))
            kind = kinds[n]
            if kind == "input":
                emit_save_input(w, n, cond)
                continue
            elif kind == "param":
                val = f"v_{n}"
            else:
                base = n.rsplit("_", 1)[0]
                if kind == "shape":
                    val = f"_shape_of(a_{base})"
                elif kind == "ndim":
                    val = f"np.ndim(a_{base})"
                elif kind == "dtype":
                    val = f"_dtype_of(a_{base})"
                else:
                    val = f"(t_{base}._device if t_{base} is not None else _CPU)"
            w(f"        if {cond}:")
            w(f"            node.s_{n} = {val}")
        w("        _finish_node(node, out, dev)")
        w("        result = _rg_wrap_with_grad_fn(out, dev, node, 0)")
        w("    else:")
        w("        result = _rg_wrap(out, dev)")
    if e.view == "always":
        w(f"    _mark_view(result, t_{tensors[0].name}, out)")
    elif e.view == "maybe":
        w(f"    _maybe_mark_view(result, t_{tensors[0].name}, out, a_{tensors[0].name})")
    if not e.nondifferentiable and "result" in saved:
        # After view bookkeeping: a view's version counter is its base's.
        cond = " or ".join(f"e{i} is not None" for i in sorted(uses["result"]))
        w(f"    if node is not None and ({cond}):")
        w("        node.s_result = out")
        w("        node.s_result_vc = result._version_counter")
        w("        node.s_result_ver = result._version_counter.version")
        w("        if rg_tls_saved_hooks:")
        w("            node.s_result = _pack_saved(result)")
    if not e.nondifferentiable:
        w("    if _forward_grad_slot != NULL:")
        w(f'        _call_forward_grad_slot("{e.name}", {args_tuple}, (result,), _jvp_{e.name})')
    w("    if _trace_slot != NULL:")
    w(f'        _trace_op("{e.name}", {args_tuple}, (result,))')
    w("    if _op_exit_slot != NULL:")
    w("        _op_event_exit(tok, result)")
    w("    return result")
    w("")
    # Private ops (public: false) get a function too, just not exported.
    emit_python_wrapper(e, w)
    if e.raw.get("__inplace__"):
        # what the in-place methods run on the snapshot of `self`
        w(f"def _ip_{e.name}({', '.join(p.name for p in e.params)}):")
        w(f"    return _op_{e.name}({', '.join(p.name for p in e.params)})")
        w("")
    w("")


def emit_python_wrapper(e, w):
    """The Python-level function `<name>(...)` calling the C-level `_op_<name>`."""
    w(f"def {e.name}({_pyparams(e)}):")
    w(docs.literal(docs.function_doc(e), "    "))
    first = e.params[0] if e.params else None
    if first is not None and first in e.tensors and not e.raw.get("scalar_self"):
        # the user's call: a number (or list) as the op's input is refused as
        # torch refuses it; internal callers use _op_ directly
        # (Note [Non-Tensor arguments])
        w(f"    if not isinstance({first.name}, Tensor):")
        w(f'        _refuse_non_tensor({first.name}, "{e.name}(): argument \'input\'", True)')
    w(f"    return _op_{e.name}({', '.join(p.name for p in e.params)})")
    w("")


def emit_methods(e, out):
    w = out.append
    for mname, reflected in e.methods:
        if reflected:
            rest = [p.default for p in e.params[2:]]
            w(f"    def {mname}(self, other):")
            w(f"        return _op_{e.name}({', '.join(['other', 'self'] + rest)})")
        elif mname.startswith("__"):
            # Operators take (self) or (self, other); the other parameters
            # get their defaults.
            binary = len(e.params) >= 2 and e.params[1].default is None
            rest = [p.default for p in e.params[2 if binary else 1:]]
            if any(d is None for d in rest):
                raise TableError(f"{e.name}: operator {mname} needs defaults for the other parameters")
            other = e.params[1].name if binary else ""
            other = "other" if other == "self" else other
            w(f"    def {mname}(self{', ' + other if binary else ''}):")
            args = ", ".join(["self"] + ([other] if binary else []) + rest)
            w(f"        return _op_{e.name}({args})")
        else:
            params = _pyparams(e, skip_first=True)
            w(f"    def {mname}(self{', ' + params if params else ''}):")
            w(docs.literal(docs.method_doc(e, mname), "        "))
            args = ", ".join(["self"] + [p.name for p in e.params[1:]])
            w(f"        return _op_{e.name}({args})")
        w("")


# ---------------------------------------------------------------------------
# TensorList entries (cat, stack): a separate emitter, so that the fixed-arity
# path above stays exactly as it was. The node has one next edge per list
# element (edges past two live in NodeExtras, see abi.pxd) and its formula
# returns one gradient per element (a list or tuple, None for "no gradient").

def emit_list_node(e, out):
    tl = e.tensorlist
    src = e.formulas[tl.name]
    used = check_formula(e, src, "", "")
    used.discard("grad")
    saved = sorted(used)
    cls = e.node_name
    w = out.append
    w("@cython.final")
    w("@cython.trashcan(True)")     # see _ops.pxd: Node's own is not inherited across modules
    w(f"cdef class {cls}(Node):")
    w(f'    """Backward of `{e.raw["name"]}` (derivatives.yaml line {e.line})."""')
    for n in saved:
        w(f"    cdef object s_{n}")
    w("")
    w("    cdef void release_variables(self):")
    w("        self._released = True")
    w("")
    w("    cdef list apply(self, list grads, bint create_graph):")
    w("        cdef object grad = grads[0]")
    w("        if grad is None:")
    w("            return [None] * self._num_edges")
    for n in saved:
        w(f"        v_{n} = self.s_{n}")
    w("        if not create_graph:")
    w(f"            res = {rewrite(e, src, 'array')}")
    w("        else:")
    w(f"            res = {rewrite(e, src, 'tensor')}")
    w("        res = list(res)")
    w("        if len(res) != self._num_edges:")
    w(f'            raise RuntimeError(f"{cls}: the formula for {tl.name} returned {{len(res)}} '
      f'gradients for {{self._num_edges}} inputs (derivatives.yaml line {e.line})")')
    w("        return res")
    w("")
    for n in saved:
        w("    @property")
        w(f"    def _saved_{n}(self):")
        w(f"        return self.s_{n}")
        w("")
    w("")
    return saved


def emit_list_op(e, saved, out):
    w = out.append
    tl = e.tensorlist.name
    w(f"cdef object _op_{e.name}({_cparams(e)}):")
    w(f"    if isinstance({tl}, (Tensor, ndarray)) or not isinstance({tl}, (list, tuple)):")
    w(f'        raise TypeError(f"{e.name}(): argument {tl!r} must be a tuple or list of '
      f'Tensors, not {{type({tl}).__name__}}")')
    w(f"    if len({tl}) == 0:")
    # torch's classes: cat's ValueError, stack's RuntimeError
    cls = "ValueError" if e.name == "cat" else "RuntimeError"
    w(f'        raise {cls}("{e.name}(): expected a non-empty list of Tensors")')
    w("    cdef Py_ssize_t i, n = len(" + tl + ")")
    w("    cdef list ts = [None] * n")
    w("    cdef list arrs = [None] * n")
    w("    cdef Tensor t, carrier = None")
    w("    cdef bint needs = False")
    w("    for i in range(n):")
    w(f"        x = {tl}[i]")
    # isinstance, not `isinstance(x, Tensor)`: a subclass element must never be
    # turned into a bare array (that would cut it off the graph silently).
    w("        if isinstance(x, Tensor):")
    w("            t = <Tensor>x")
    w("            ts[i] = t")
    w("            arrs[i] = t._array")
    w("            carrier = _dev_carrier(carrier, t)")
    w("            needs = needs or _needs(t)")
    w("        else:")
    # an element is an input: numbers and lists refused (Note [Non-Tensor arguments])
    w(f'            arrs[i] = _arg_array(x, "{e.name}", "{tl}", True)')
    w(f"    a_{tl} = arrs")
    for p in e.others:
        w(f"    cdef object v_{p.name} = {p.name}")
    w("    cdef Device dev = carrier._device if carrier is not None else "
      "(_device_of_array(arrs[0]) if n else _CPU)")
    w("    cdef object tok = None")
    w("    cdef Tensor result")
    w(f"    cdef {e.node_name} node = None")
    w("    cdef list edges")
    args_tuple = "(" + ", ".join(p.name for p in e.params) + ("," if len(e.params) == 1 else "") + ")"
    w("    if _op_enter_slot != NULL:")
    # torch's op names (aten::mul), so tools that read its traces read ours
    w(f'        tok = _op_enter_slot("aten::{e.name}", rg_tls_sequence_nr, {args_tuple})')
    # (quiet as every kernel: a cast of float64 to float32 can overflow)
    w("    fpq = _fp_kernel_enter()")
    w("    try:")
    w(f"        out = _ensure_array({rewrite(e, e.kernel, 'kernel')})")
    w("    finally:")
    w("        _fp_kernel_exit(fpq)")
    # cat/stack: linear, so complex tensors keep their (right) gradient
    record = "_record" if e.jvp == "auto_linear" else "_record_op"
    w(f"    if rg_tls_grad_enabled and needs and {record}(out):")
    w(f"        node = {e.node_name}.__new__({e.node_name})")
    w("        edges = [None] * (2 * n)")
    w("        for i in range(n):")
    w("            t = <Tensor>ts[i]")
    w("            edges[2 * i] = _edge_fn(t)")
    w("            edges[2 * i + 1] = _edge_nr(t)")
    w("        node.set_next_edges(tuple(edges))")
    kinds = formula_names(e)
    for n in saved:
        kind = kinds[n]
        if kind == "param":
            val = f"v_{n}"
        elif kind == "list_shapes":
            val = "tuple([_shape_of(a) for a in arrs])"
        elif kind == "list_dtypes":
            val = "tuple([_dtype_of(a) for a in arrs])"
        else:
            val = "n"
        w(f"        node.s_{n} = {val}")
    w("        _finish_node(node, out, dev)")
    w("        result = _rg_wrap_with_grad_fn(out, dev, node, 0)")
    w("    else:")
    w("        result = _rg_wrap(out, dev)")
    w("    if _forward_grad_slot != NULL:")
    w(f'        _call_forward_grad_slot("{e.name}", {args_tuple}, (result,), _jvp_{e.name})')
    w("    if _trace_slot != NULL:")
    w(f'        _trace_op("{e.name}", {args_tuple}, (result,))')
    w("    if _op_exit_slot != NULL:")
    w("        _op_event_exit(tok, result)")
    w("    return result")
    w("")
    if e.public:
        emit_python_wrapper(e, w)
    w("")


def emit_inplace_methods(e, out):
    w = out.append
    for mname in e.raw.get("__inplace__", []):
        if mname.startswith("__"):
            binary = len(e.params) >= 2 and e.params[1].default is None
            rest = [p.default for p in e.params[2 if binary else 1:]]
            if any(d is None for d in rest):
                raise TableError(f"{e.name}: operator {mname} needs defaults for the other parameters")
            w(f"    def {mname}(self{', other' if binary else ''}):")
            args = (["other"] if binary else []) + rest
        else:
            params = _pyparams(e, skip_first=True)
            w(f"    def {mname}(self{', ' + params if params else ''}):")
            w(docs.literal(docs.method_doc(e, mname, inplace=True), "        "))
            args = [p.name for p in e.params[1:]]
        tup = "(" + ", ".join(args) + ("," if len(args) == 1 else "") + ")"
        w(f'        return _inplace_call(self, _ip_{e.name}, {tup}, "{mname}")')
        w("")


def emit_batching_dispatch(entries, out):
    """rg_node_batching / rg_apply_batched's view of the table: which node
    types run a batch as it is, which have batching formulas."""
    w = out.append
    safe = [e for e in entries if not e.nondifferentiable and e.raw.get("batched") is True]
    rules = [e for e in entries if e.raw.get("__batched__")]
    w("")
    w("# Batched backward (abi.pxd: rg_node_batching, rg_apply_batched).")
    w("cdef frozenset _BATCH_SAFE_NODES = frozenset([GraphRoot, "
      + ", ".join(e.node_name for e in safe) + "])")
    w("cdef frozenset _BATCH_SAFE_OPS = frozenset(" + repr([e.name for e in safe]) + ")")
    w("")
    w("")
    w("cdef int _node_batching(Node node) except -1:")
    w("    cdef type t = type(node)")
    if rules:
        w("    if " + " or ".join(f"t is {e.node_name}" for e in rules) + ":")
        w("        return RG_BATCH_RULE")
    w("    if t in _BATCH_SAFE_NODES:")
    w("        return RG_BATCH_SAFE")
    w("    return RG_BATCH_LOOP")
    w("")
    w("")
    w("cdef list _apply_batching_formulas(Node node, list grads, bint create_graph):")
    w("    cdef type t = type(node)")
    for e in rules:
        w(f"    if t is {e.node_name}:")
        w(f"        return (<{e.node_name}>node)._apply_batched(grads, create_graph)")
    w("    return None")
    w("")


# ---------------------------------------------------------------------------
# Where generated names come from

def topic_declarations(folder):
    """{topic module: the names its .pxd declares} for core's topic modules
    (docs/design.md, "Core's modules") in `folder`: functions, module
    variables and enum members, as Cython would find them by cimport. The
    implementation module _ops is not a topic module: the generated ops are
    part of it (see ops_declarations for what Tensor's methods cimport)."""
    import glob
    found = {}
    for path in sorted(glob.glob(os.path.join(folder, "_*.pxd"))):
        module = os.path.basename(path)[:-len(".pxd")]
        if module.startswith("__") or module == "_ops":
            continue
        with open(path) as f:
            found[module] = _pxd_names(f.read())
    return found


def _pxd_names(src):
    import re
    names = re.findall(r"^c?p?def\s+(?:inline\s+)?(?:[\w.]+\s+)?\**(\w+)\s*\(", src, re.M)
    names += re.findall(r"^cdef\s+object\s+(\w+)\s*(?:#.*)?$", src, re.M)
    names += re.findall(r"^    (\w+)\s*=\s*\d+", src, re.M)        # cdef enum members
    return names


def op_declarations(ops_code):
    """The .pxd declarations of the generated op functions (`_op_<name>`),
    for _ops.pxd to include: what Tensor's methods (in abi) call."""
    import re
    out = []
    lines = ops_code.split("\n")
    for i, line in enumerate(lines):
        if re.match(r"^cdef\s+[\w.]+\s+_op_\w+\s*\(", line):
            sig = line
            while sig.count("(") > sig.count(")"):
                i += 1
                sig += "\n" + lines[i]
            sig = sig.rstrip()
            assert sig.endswith(":"), sig
            out.append(re.sub(r"=\s*[^,)]+(?=[,)])", "=*", sig[:-1]))
    return out


def ops_declarations(folder, generated_decls):
    """{"_ops": names} that abi's Tensor methods may cimport from _ops: the
    hand-written declarations of _ops.pxd plus the generated op functions."""
    path = os.path.join(folder, "_ops.pxd")
    names = []
    if os.path.exists(path):        # (a test's scratch table has none beside it)
        with open(path) as f:
            names = _pxd_names(f.read())
    return {"_ops": names + _pxd_names("\n".join(generated_decls))}


def topic_cimports(code, declarations, already=()):
    """The cimport lines of the topic-module names `code` uses (less those in
    `already`): generated code says where each of them is declared, as
    hand-written code does."""
    import re
    tokens = set(re.findall(r"\b\w+\b", code)) - set(already)
    lines = []
    for module, names in declarations.items():
        used = [n for n in names if n in tokens]
        if used:
            lines.append(f"from retrograd.core.{module} cimport (")
            for i in range(0, len(used), 6):
                lines.append("    " + ", ".join(used[i:i + 6]) + ",")
            lines.append(")")
    return lines


def python_imports(code, ops_code):
    """The import of the Python-level functions of the generated ops that
    `code` (Tensor's methods, in abi) names: the in-place ops _ip_<name>."""
    import re
    defined = re.findall(r"^def\s+(_ip_\w+)\s*\(", ops_code, re.M)
    tokens = set(re.findall(r"\b\w+\b", code))
    used = [n for n in defined if n in tokens]
    if not used:
        return []
    lines = ["from retrograd.core._ops import ("]
    for i in range(0, len(used), 6):
        lines.append("    " + ", ".join(used[i:i + 6]) + ",")
    return lines + [")"]


def cimported_names(code):
    """The names `code` cimports by name (from X cimport a, b or (a, b, ...))."""
    import re
    names = set()
    for m in re.finditer(r"^from\s+[\w.]+\s+cimport\s+(\([^)]*\)|[^\n]*)", code, re.M):
        body = m.group(1).strip("()")
        names.update(n.split(" as ")[-1].strip() for n in body.replace("\n", " ").split(",") if n.strip())
    return names


def splice_members(template, path):
    """`template` with the class body of the fragment at `path` in place of its
    `# @@TENSOR_METHODS@@` comment (the comment's lines), and that body."""
    with open(path) as f:
        lines = f.read().split("\n")
    head = next((i for i, ln in enumerate(lines) if ln.startswith("cdef class Tensor")), None)
    if head is None:
        raise TableError(f"{path}: no `cdef class Tensor` line to take the body of")
    body = "\n".join(lines[head + 1:]).rstrip("\n")
    out = template.split("\n")
    at = next(i for i, ln in enumerate(out) if ln.strip().startswith("# @@TENSOR_METHODS@@"))
    end = at + 1
    while end < len(out) and out[end].startswith("    #"):
        end += 1
    out[at:end] = body.split("\n")
    return "\n".join(out), body


def main(argv):
    src, out_ops, out_info, tensor_template, out_tensor, out_decls = argv[1:7]
    try:
        entries = load(src)
    except TableError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    ops = ["# Generated by retrograd-core/_codegen/gen_ops.py from derivatives.yaml. Do not edit.", ""]
    methods = ["# Generated by retrograd-core/_codegen/gen_ops.py from derivatives.yaml. Do not edit.", ""]
    info = {}
    for e in entries:
        if e.tensorlist is not None:
            emit_list_op(e, emit_list_node(e, ops), ops)
        else:
            if e.nondifferentiable:
                saved, uses = [], {}
            elif e.outputs:
                saved, uses = gen_multi.emit_node(e, ops)
            else:
                saved, uses = emit_node(e, ops)
            emit_op(e, saved, uses, ops)
        emit_alias_functions(e, ops.append)
        emit_methods(e, methods)
        emit_inplace_methods(e, methods)
        info[e.name] = {
            "signature": e.raw["name"],
            "inputs": [p.name for p in e.tensors],
            "tensorlist": e.tensorlist.name if e.tensorlist is not None else None,
            "params": [p.name for p in e.others],
            "formulas": e.formulas,
            "jvp": e.jvp,
            "node": None if e.nondifferentiable else e.node_name,
            "methods": [m for m, _ in e.methods],
            "inplace": list(e.raw.get("__inplace__", [])),
            "aliases": list(e.raw.get("__aliases__", [])),
            "inplace_functions": inplace_function_names(e),
            "view": e.view,
            "public": e.public,
            "nondifferentiable": e.nondifferentiable,
            "line": e.line,
            "doc": e.raw.get("doc"),
            # True: runs once on a batch as it is; a dict: its batching formulas
            "batched": e.raw.get("__batched__") or e.raw.get("batched") is True,
        }
        if e.outputs:
            info[e.name]["outputs"] = list(e.outputs)
            info[e.name]["output_differentiability"] = list(e.output_diff)
    for e in entries:
        if not e.nondifferentiable and e.jvp is not None:
            gen_jvp.emit_jvp(e, ops)
    gen_jvp.emit_table(entries, ops)
    emit_batching_dispatch(entries, ops)
    public = [e.name for e in entries if e.public]
    ops.append(f"GENERATED_OPS = {public!r}")
    # torch's other names of the ops and the in-place functions (functions of
    # the module too, apart from GENERATED_OPS: each is one of those ops)
    aliases = [a for e in entries for a in e.raw["__aliases__"] + inplace_function_names(e)]
    ops.append(f"GENERATED_ALIASES = {aliases!r}")
    folder = os.path.dirname(os.path.abspath(src))
    declarations = topic_declarations(folder)
    ops[1:1] = topic_cimports("\n".join(ops), declarations)
    with open(out_ops, "w") as f:
        f.write("\n".join(ops) + "\n")
    decls = op_declarations("\n".join(ops))
    with open(out_decls, "w") as f:
        f.write("# Generated by retrograd-core/_codegen/gen_ops.py from derivatives.yaml. Do not edit.\n"
                "# The op functions of _generated_ops.pxi, declared for _ops.pxd.\n")
        f.write("\n".join(decls) + "\n")
    with open(tensor_template) as f:
        template = f.read()
    # Tensor's convenience methods: a class fragment beside the template
    # (_tensor_methods.pxi; a test's scratch template may have none)
    spliced = ""
    fragment = os.path.join(os.path.dirname(os.path.abspath(tensor_template)), "_tensor_methods.pxi")
    if "@@TENSOR_METHODS@@" in template:
        try:
            template, spliced = splice_members(template, fragment)
        except (OSError, TableError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
    # the docstrings of Tensor's hand-written members (tensor_docs.yaml,
    # next to the table; a test's scratch table has none)
    member_docs = os.path.join(folder, "tensor_docs.yaml")
    if os.path.exists(member_docs):
        try:
            with open(member_docs) as f:
                template = docs.inject_member_docs(template, yaml.safe_load(f) or {}, member_docs)
        except (docs.DocError, yaml.YAMLError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
    marker = "    # @@GENERATED_METHODS@@"
    if template.count(marker) != 1:
        print(f"error: {tensor_template} must contain the line {marker.strip()!r} exactly once",
              file=sys.stderr)
        return 1
    head, tail = template.split(marker, 1)
    tail = tail.split("\n", 1)[1]
    with open(out_tensor, "w") as f:
        f.write("# Generated by gen_ops.py from _tensor.pxi and derivatives.yaml. Do not edit.\n")
        # the methods' cimports: what they use of the topic modules and of
        # _ops, less what the hand-written template cimports itself
        method_decls = dict(declarations, **ops_declarations(folder, decls))
        f.write("\n".join(topic_cimports("\n".join(methods) + spliced, method_decls, cimported_names(template)) + [""]))
        # and the Python-level in-place ops (_ip_<name>) they hand to _inplace_call
        f.write("\n".join(python_imports("\n".join(methods), "\n".join(ops)) + [""]))
        f.write(head + "\n".join(methods[2:]) + "\n" + tail)
    with open(out_info, "w") as f:
        f.write('"""Generated from derivatives.yaml: what the table declares, for tests and tools."""\n')
        f.write(f"OPS = {info!r}\n")
    return 0


# gen_multi shares this module's helpers (it cannot import it: this runs as __main__)
gen_multi.G = sys.modules[__name__]


if __name__ == "__main__":
    sys.exit(main(sys.argv))
