"""The type stub of retrograd.core.abi, written at build time (meson.build).

    python gen_stubs.py derivatives.yaml abi.pyi.in abi.pyi

Editors and mypy cannot see inside a Cython extension, so the compiled module
ships a stub beside it (with py.typed). The stub has two sources, and nothing
of it is committed:
- abi.pyi.in, written by hand: the classes (Tensor's hand-written methods and
  properties, Node, Edge, Device, ...) and the hand-written functions;
- derivatives.yaml: each public entry gives a module-level function, each
  `methods:`/`inplace:` name a Tensor method, each differentiable entry its
  backward Node class. Parameter types come from the entry's signature:
  `Tensor`, `TensorList`, `int`, `bool`, ... as declared, and an untyped
  parameter by its name (PARAM_TYPES), as in PyTorch's native_functions.yaml
  where `dim`, `shape` or `stride` always mean the same thing.
An untyped parameter whose name is not in PARAM_TYPES fails the build: give it
a type in the table or a line here.
"""
from __future__ import annotations

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import docs  # noqa: E402
from gen_ops import TableError, inplace_function_names, load  # noqa: E402

sys.path.pop(0)

# What a `Tensor` parameter accepts: tensors, and what NumPy turns into an
# array (arrays, Python scalars, nested sequences).
TENSOR_LIKE = "Tensor | ArrayLike"
DIMS = "int | tuple[int, ...] | None"
# the declared types of derivatives.yaml
DECLARED = {"Tensor": TENSOR_LIKE, "TensorList": "Sequence[Tensor]", "int": "int", "bool": "bool",
            "float": "float", "str": "str"}
# untyped parameters, by name
PARAM_TYPES = {
    "dim": DIMS,                          # reductions; an int where the op needs one (below)
    "dims": "int | Sequence[int]",
    "shape": "int | Sequence[int]",
    "index": "Any",                       # anything Python indexing takes
    "dtype": "DTypeLike | None",
    "device": "str | Device | int",
    "kernel_size": "int | tuple[int, int]",
    "stride": "int | tuple[int, int] | None",
    "padding": "int | tuple[int, int]",
    "dilation": "int | tuple[int, int]",
    "divisor_override": "int | None",
    "unbiased": "bool | None",
    "correction": "float | None",
    "p": "float | str | None",
    "alpha": "float",
    "beta": "float",
    "threshold": "float",
    "decimals": "int",
    "approximate": "str",
    "equation": "str",
}
# ops whose `dim` is one dimension, not a set of them
SINGLE_DIM = {"cumsum", "cumprod"}
# the methods of `object` that a Tensor operator overrides with another meaning
OBJECT_METHODS = {"__eq__", "__ne__"}

MARK_METHODS = "    # @@GENERATED_METHODS@@"
MARK_NODES = "# @@GENERATED_NODES@@"
MARK_OPS = "# @@GENERATED_OPS@@"


def _type(e, p) -> str:
    if p.type is not None:
        if p.type not in DECLARED:
            raise TableError(f"line {e.line}: {e.name}: parameter type {p.type!r} has no stub type "
                             f"(gen_stubs.py DECLARED)")
        typ = DECLARED[p.type]
    elif p.name == "dim" and (e.name in SINGLE_DIM or p.default is None):
        typ = "int"
    elif p.name in PARAM_TYPES:
        typ = PARAM_TYPES[p.name]
    else:
        raise TableError(f"line {e.line}: {e.name}: untyped parameter {p.name!r}: declare its type in "
                         "the signature, or add its name to gen_stubs.py PARAM_TYPES")
    if p.default == "None" and "None" not in typ and typ != "Any":
        typ += " | None"
    return typ


def _returns(e) -> str:
    """`Tensor`, or a tuple for an entry declaring several results
    (`name(...) -> (Tensor U, Tensor S)`)."""
    sig = e.raw["name"]
    if "->" not in sig:
        return "Tensor"
    out = sig.split("->", 1)[1].strip().strip("()")
    kinds = [part.split()[0] for part in out.split(",") if part.strip()]
    if len(kinds) == 1:
        return DECLARED.get(kinds[0], "Tensor").split(" |")[0]
    return "tuple[" + ", ".join("Tensor" for _ in kinds) + "]"


def _param(e, p) -> str:
    typ = _type(e, p)
    return f"{p.name}: {typ}" + ("" if p.default is None else " = " + _default(p.default))


def _default(value: str) -> str:
    # a stub may spell simple literals; anything else is `...`
    return value if value in ("None", "True", "False") or value.lstrip("-").isdigit() else "..."


def _params(e, params) -> list:
    out, star = [], False
    for p in params:
        if p.kwonly and not star:
            out.append("*")
            star = True
        out.append(_param(e, p))
    return out


def _def(head: str, doc: str | None, indent: str) -> str:
    """`head` (`def f(...) -> T`) with docstring `doc` as its body (editors show
    it: they cannot read the compiled module's), or `...` without one."""
    if doc is None:
        return f"{indent}{head}: ...\n"
    return f"{indent}{head}:\n{docs.literal(doc, indent + '    ')}\n"


def function(e) -> str:
    where = f"# {e.raw['name']}: derivatives.yaml line {e.line}\n"
    doc = docs.function_doc(e) if e.raw.get("doc") else None
    return where + _def(f"def {e.name}({', '.join(_params(e, e.params))}) -> {_returns(e)}", doc, "")


def methods(e) -> list:
    """The Tensor methods of an entry, as gen_ops.emit_methods and
    emit_inplace_methods write them."""
    out, ret = [], _returns(e)
    binary = len(e.params) >= 2 and e.params[1].default is None
    for mname, reflected in e.methods:
        ignore = "  # type: ignore[override]" if mname in OBJECT_METHODS else ""
        if reflected or (mname.startswith("__") and binary):
            other = e.params[0 if reflected else 1]
            name = "other" if reflected or other.name == "self" else other.name
            out.append(f"    def {mname}(self, {name}: {_type(e, other)}) -> {ret}: ...{ignore}\n")
        elif mname.startswith("__"):
            out.append(f"    def {mname}(self) -> {ret}: ...\n")
        else:
            params = ["self"] + _params(e, e.params[1:])
            doc = docs.method_doc(e, mname) if e.raw.get("doc") else None
            out.append(_def(f"def {mname}({', '.join(params)}) -> {ret}", doc, "    "))
    for mname in e.raw.get("__inplace__", []):
        if mname.startswith("__"):
            other = f", other: {_type(e, e.params[1])}" if binary else ""
            out.append(f"    def {mname}(self{other}) -> Tensor: ...\n")
        else:
            params = ["self"] + _params(e, e.params[1:])
            doc = docs.method_doc(e, mname, inplace=True) if e.raw.get("doc") else None
            out.append(_def(f"def {mname}({', '.join(params)}) -> Tensor", doc, "    "))
    return out


def _builtin_types(lines):
    """Class Tensor's lines with `int`, `float` and `bool` spelled through
    builtins (its methods of those names shadow them there); comments and
    docstrings as they are."""
    in_doc = False
    for line in lines:
        quotes = line.count('"""')
        if in_doc or line.lstrip().startswith(("#", '"""')):
            yield line
        else:
            yield re.sub(r"(?<![\w.])(?<!def )(int|float|bool)\b(?!\()", r"builtins.\1", line)
        if quotes % 2:
            in_doc = not in_doc


def render(entries, template: str) -> str:
    for mark in (MARK_METHODS, MARK_NODES, MARK_OPS):
        if template.count(mark) != 1:
            raise TableError(f"the stub template must contain the line {mark.strip()!r} exactly once")
    hand = {line.split("def ", 1)[1].split("(", 1)[0] for line in
            template.split("\nclass Tensor:", 1)[1].split("\n\n\n", 1)[0].splitlines()
            if line.startswith("    def ")}
    meths, nodes, ops, names = [], [], [], []
    for e in entries:
        lines = methods(e)
        if lines:
            meths.append(f"    # {e.raw['name']}: derivatives.yaml line {e.line}\n")
        for line in lines:
            name = line.split("def ", 1)[1].split("(", 1)[0]
            if name in hand:
                raise TableError(f"line {e.line}: {e.name}: method {name} is also written by hand in "
                                 "the stub template; keep one")
            meths.append(line)
        if not e.nondifferentiable:
            nodes.append(f"class {e.node_name}(Node): ...\n")
        if e.public and not e.name.startswith("_"):
            ops.append(function(e))
            names.append(e.name)
            params = ", ".join(_params(e, e.params))
            for a in e.raw.get("__aliases__", []):
                doc = docs.alias_doc(e, a) if e.raw.get("doc") else None
                ops.append(f"# alias of {e.name}: derivatives.yaml line {e.line}\n"
                           + _def(f"def {a}({params}) -> {_returns(e)}", doc, ""))
                names.append(a)
            for m in inplace_function_names(e):
                doc = docs.inplace_function_doc(e, m) if e.raw.get("doc") else None
                ops.append(f"# in place, {e.name}: derivatives.yaml line {e.line}\n"
                           + _def(f"def {m}({params}) -> Tensor", doc, ""))
                names.append(m)
    head = ("# Generated at build time by retrograd-core/_codegen/gen_stubs.py from abi.pyi.in and\n"
            "# derivatives.yaml. Do not edit: edit those. (The comment below is abi.pyi.in's.)\n")

    def put(text, mark, body):
        before, after = text.split(mark, 1)
        return before + body + after.split("\n", 1)[1]

    text = put(template, MARK_METHODS, "".join(meths).rstrip("\n"))
    # in class Tensor, `int`, `float`, `bool` name its conversion methods
    # (Tensor.int(), ...): the types are spelled through builtins there
    before, rest = text.split("\nclass Tensor:", 1)
    body, after = rest.split("\n\n\n", 1)
    body = "\n".join(_builtin_types(body.split("\n")))
    text = before + "\nclass Tensor:" + body + "\n\n\n" + after
    text = put(text, MARK_NODES, "".join(nodes).rstrip("\n"))
    text = put(text, MARK_OPS, "\n".join(ops) + f"\n__all__ += {sorted(names)!r}\n")
    return head + text


def main(argv) -> int:
    table, template, out = argv[1:4]
    try:
        text = render(load(table), open(template).read())
    except TableError as exc:
        print(f"error: {table}: {exc}", file=sys.stderr)
        return 1
    with open(out, "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
