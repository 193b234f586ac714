"""The docstrings of the generated ops, from the `doc:` key of derivatives.yaml.

An entry's `doc:` is the numpydoc body of its function's docstring (Cython's
embedsignature writes the signature line above it): a summary line, a blank
line, the explanation, then the sections `Parameters`, `Returns`, `Raises`
(where it raises), `Examples` (doctests starting with `>>> import retrograd
as rg`) and optionally `Notes` / `See Also`. check() rejects a malformed body
at build time with the entry's line; a public entry without `doc:` still
builds (tests/docs/test_op_docstrings.py names every such entry), so that a
new op can be written and tested before it is documented.

A Tensor method bound to the op gets the same text adapted to the method
form: the first parameter (the tensor the method is called on) leaves the
`Parameters` section, a line says which function it is the method of, and
every `rg.<op>(x, ...)` call of the examples is rewritten as `x.<method>(...)`.
An in-place method (`inplace:`) gets its own summary and the examples up to
their first such call, run in place. Entries with `public: false` document
only their methods: their `doc:` is written in the method form already.
"""
from __future__ import annotations

import ast
import textwrap

# numpydoc's section names (those this table may use), in their order
SECTIONS = ("Parameters", "Returns", "Raises", "Warns", "See Also", "Notes", "References", "Examples")
REQUIRED = ("Returns", "Examples")
FIRST_EXAMPLE = ">>> import retrograd as rg"


class DocError(Exception):
    pass


def _sections(doc: str) -> list:
    """[(title, first line index, end line index)] of the numpydoc sections of `doc`."""
    lines = doc.split("\n")
    found = []
    for i in range(len(lines) - 1):
        title, under = lines[i].rstrip(), lines[i + 1].rstrip()
        if under and set(under) == {"-"} and title and not title.startswith(" "):
            found.append([title, i])
    out = []
    for k, (title, start) in enumerate(found):
        end = found[k + 1][1] if k + 1 < len(found) else len(lines)
        out.append((title, start, end))
    return out


def check(doc, name: str, public: bool, required=REQUIRED) -> None:
    """Raise DocError saying what is wrong with entry `name`'s `doc:` (the
    sections `required` must be there, and `Parameters` for a public op)."""
    if not isinstance(doc, str) or not doc.strip():
        raise DocError(f"{name}: doc must be a non-empty YAML block scalar (doc: |)")
    lines = doc.rstrip("\n").split("\n")
    if not lines[0].strip() or lines[0] != lines[0].strip():
        raise DocError(f"{name}: doc must start with a one-line summary (no indentation)")
    if len(lines) > 1 and lines[1].strip():
        raise DocError(f"{name}: doc: the summary must be one line, followed by a blank line")
    if "\n\n\n" in doc.rstrip("\n"):
        raise DocError(f"{name}: doc: two blank lines in a row (one separates paragraphs and sections)")
    secs = _sections(doc)
    titles = [t for t, _, _ in secs]
    for title, start, _ in secs:
        if title not in SECTIONS:
            raise DocError(f"{name}: doc: unknown section {title!r}; numpydoc's are {', '.join(SECTIONS)}")
        if len(lines[start + 1].rstrip()) != len(title):
            raise DocError(f"{name}: doc: the underline of section {title!r} must be as long as its title")
    if titles != sorted(titles, key=SECTIONS.index):
        raise DocError(f"{name}: doc: sections must come in numpydoc's order ({', '.join(SECTIONS)})")
    if len(set(titles)) != len(titles):
        raise DocError(f"{name}: doc: a section appears twice")
    for title in tuple(required) + (("Parameters",) if public else ()):
        if title not in titles:
            raise DocError(f"{name}: doc has no {title!r} section (every op documents its parameters, "
                           "its result and an example)")
    start, end = next((s, e) for t, s, e in secs if t == "Examples")
    prompts = [ln.strip() for ln in lines[start + 2:end] if ln.strip().startswith(">>>")]
    if not prompts or prompts[0] != FIRST_EXAMPLE:
        raise DocError(f"{name}: doc: the Examples section must start with {FIRST_EXAMPLE!r}")


def function_doc(e) -> str:
    """The docstring of op `e`'s module-level function."""
    doc = e.raw.get("doc")
    if not doc:
        # undocumented (a test lists these): at least the table's signature
        return e.raw["name"]
    return doc.rstrip("\n")


def _drop_first_parameter(doc: str, pname: str) -> str:
    """`doc` without the entry of parameter `pname` (the tensor a method is
    called on); without the section when that was its only entry."""
    for title, start, end in _sections(doc):
        if title != "Parameters":
            continue
        lines = doc.split("\n")
        body = lines[start + 2:end]
        entries, cur = [], None
        for ln in body:
            if ln and not ln.startswith(" "):
                cur = [ln]
                entries.append(cur)
            elif cur is not None:
                cur.append(ln)
        head = [ln for ln in body[:1] if not ln.strip()]
        kept = [ent for ent in entries if ent[0].split(":")[0].strip() != pname]
        if not any(ln.strip() for ent in kept for ln in ent):
            new = []
        else:
            new = lines[start:start + 2] + head + [ln for ent in kept for ln in ent]
        return "\n".join(lines[:start] + new + lines[end:])
    return doc


def _rewrite_call(src: str, op: str, method: str) -> str | None:
    """`src` (one doctest statement) with each `rg.<op>(x, ...)` call whose
    first argument is a name, call, attribute or subscript (a tensor, not a
    literal) written `x.<method>(...)`; None when it has none."""
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return None
    spans = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == op
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "rg"
                and node.args and isinstance(node.args[0], (ast.Name, ast.Call, ast.Attribute, ast.Subscript))
                and not any(isinstance(a, ast.Starred) for a in node.args)
                and node.lineno == node.end_lineno == 1):
            rest = [ast.get_source_segment(src, a) for a in node.args[1:]]
            rest += [ast.get_source_segment(src, k) if k.arg is None else
                     f"{k.arg}={ast.get_source_segment(src, k.value)}" for k in node.keywords]
            spans.append((node.col_offset, node.end_col_offset,
                          f"{ast.get_source_segment(src, node.args[0])}.{method}({', '.join(rest)})"))
    # outermost calls only (an inner one is rewritten inside its parent's text
    # on a later pass, never both at once)
    spans = [s for s in spans if not any(o[0] <= s[0] and s[1] <= o[1] and o != s for o in spans)]
    if not spans:
        return None
    for a, b, text in sorted(spans, reverse=True):
        src = src[:a] + text + src[b:]
    again = _rewrite_call(src, op, method)
    return again if again is not None else src


def _examples(doc: str):
    """(lines before the Examples body, the body's lines, lines after it)."""
    lines = doc.split("\n")
    for title, start, end in _sections(doc):
        if title == "Examples":
            return lines[:start + 2], lines[start + 2:end], lines[end:]
    return lines, [], []


def _method_examples(body: list, op: str, method: str, inplace: bool) -> tuple:
    """The examples rewritten to the method form; for an in-place method, cut
    after the first rewritten call. Returns (lines, whether a call was rewritten)."""
    out, rewrote = [], False
    i = 0
    while i < len(body):
        ln = body[i]
        stripped = ln.lstrip()
        if stripped.startswith(">>> "):
            indent = ln[:len(ln) - len(stripped)]
            new = _rewrite_call(stripped[4:], op, method)
            if new is not None:
                out.append(indent + ">>> " + new)
                rewrote = True
                if inplace:
                    i += 1
                    while i < len(body) and body[i].strip() and not body[i].lstrip().startswith(">>>"):
                        out.append(body[i])
                        i += 1
                    return out, True
                i += 1
                continue
        out.append(ln)
        i += 1
    return out, rewrote


def method_doc(e, mname: str, inplace: bool = False) -> str:
    """The docstring of Tensor method `mname` bound to op `e` (its
    in-place form when `inplace`)."""
    doc = e.raw.get("doc")
    if not doc:
        return f"Tensor.{mname}: the method form of {e.raw['name']}."
    doc = doc.rstrip("\n")
    first = e.params[0].name if e.params else None
    base = mname.rstrip("_") if inplace else mname
    if e.public:
        doc = _drop_first_parameter(doc, first)
    head, body, tail = _examples(doc)
    body, _ = _method_examples(body, e.name, mname, inplace)
    lines = head + body + tail
    summary, rest = lines[0], lines[1:]
    if inplace:
        if not e.public and not any(m == base for m, _ in e.methods):
            return doc              # a private in-place-only entry: written for its method
        return _inplace_doc(e, base, mname, "\n".join(lines))
    if e.public:
        rest = ["", f"The method form of :func:`retrograd.{e.name}`:",
                f"``x.{mname}(...)`` is ``rg.{e.name}(x, ...)``."] + rest
    return "\n".join([summary] + rest)


def _wrap(text: str) -> list:
    return textwrap.wrap(text, width=76, break_on_hyphens=False, break_long_words=False)


def _inplace_doc(e, base: str, mname: str, doc: str) -> str:
    """An in-place method's docstring from its op's (method-form) `doc`: its
    own summary, Returns and Raises; the op's Parameters and examples."""
    lines = doc.split("\n")
    sections = {t: lines[s + 2:end] for t, s, end in _sections(doc)}
    of = (f":meth:`Tensor.{base}`" if any(m == base for m, _ in e.methods)
          else f":func:`retrograd.{e.name}`")
    out = [f"In-place version of {of}.", ""]
    what = f"x.{base}(...)" if of.startswith(":meth:") else f"rg.{e.name}(x, ...)"
    out += _wrap(f"``x.{mname}(...)`` computes what ``{what}`` computes and writes it into ``x``, "
                 "which is returned. The result must keep ``x``'s shape and be castable to its dtype "
                 "(an integer tensor cannot hold a float result).") + [""]
    if "Parameters" in sections:
        out += ["Parameters", "----------"] + sections["Parameters"]
    out += ["Returns", "-------", "Tensor", "    This tensor, holding the result.", ""]
    out += ["Raises", "------", "RuntimeError"]
    out += ["    " + ln for ln in _wrap(
        "If the result's shape or dtype does not fit this tensor, or if grad mode is on and this "
        "tensor is a leaf that requires grad (or a view of one).")]
    raises = sections.get("Raises", [])
    out += [ln for ln in raises if ln.strip()] + [""]
    example = e.raw.get("inplace_example")
    if example:
        body = [ln.replace(f".{e.name}_(", f".{mname}(") for ln in example.rstrip("\n").split("\n")]
        out += ["Examples", "--------"] + body
    else:
        out += ["Examples", "--------"] + sections.get("Examples", [])
    return "\n".join(out).rstrip("\n")


def literal(text: str, indent: str) -> str:
    """`text` as a triple-quoted docstring literal indented by `indent`."""
    body = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    lines = body.split("\n")
    out = [indent + '"""' + lines[0]]
    out += [(indent + ln) if ln.strip() else "" for ln in lines[1:]]
    if len(lines) > 1:
        out.append(indent + '"""')
    else:
        out[0] += '"""'
    return "\n".join(out)



def inject_member_docs(template: str, table: dict, where: str) -> str:
    """`template` (_tensor.pxi) with the docstrings of `table` (tensor_docs.yaml:
    member name -> numpydoc body, `Tensor` for the class) put under their
    `def` lines. A name that is no member, or a member that has a docstring
    in the template too, raises DocError: one source for each docstring."""
    lines = template.split("\n")
    start = next((i for i, ln in enumerate(lines) if ln.startswith("cdef class Tensor:")), None)
    if start is None:
        raise DocError(f"{where}: the template has no `cdef class Tensor:`")
    inserts = []
    for name, doc in table.items():
        check(doc, f"{where}: {name}", public=False, required=("Examples",))
        if name == "Tensor":
            at, indent = start, "    "
        else:
            at = next((i for i in range(start, len(lines)) if lines[i].startswith(f"    def {name}(")), None)
            if at is None:
                raise DocError(f"{where}: {name}: Tensor has no hand-written member of that name")
            while not lines[at].rstrip().endswith(":"):
                at += 1
            indent = "        "
        if lines[at + 1].strip().startswith(('"""', 'r"""')):
            raise DocError(f"{where}: {name} has a docstring in the template too; keep one")
        inserts.append((at + 1, literal(doc.rstrip("\n"), indent)))
    for at, text in sorted(inserts, reverse=True):
        lines[at:at] = text.split("\n")
    return "\n".join(lines)


def _rename_calls(lines: list, op: str, new: str) -> list:
    """`lines` with each ``rg.<op>(`` call spelled ``rg.<new>(``."""
    import re
    pat = re.compile(rf"\brg\.{re.escape(op)}\(")
    return [pat.sub(f"rg.{new}(", ln) for ln in lines]


def alias_doc(e, alias: str) -> str:
    """The docstring of `alias`, another name of op `e` (`aliases:`): the
    op's, introduced as an alias, its examples calling the alias."""
    doc = e.raw.get("doc")
    if not doc:
        return f"Alias of :func:`retrograd.{e.name}`."
    head, body, tail = _examples(doc.rstrip("\n"))
    intro = [f"Alias of :func:`retrograd.{e.name}` (PyTorch's ``torch.{alias}``).", ""]
    return "\n".join(intro + head + _rename_calls(body, e.name, alias) + tail)


def inplace_function_doc(e, mname: str) -> str:
    """The docstring of the module-level in-place function `mname`
    (`inplace_function:`): torch.sin_(x) is x.sin_()."""
    doc = e.raw.get("doc")
    base = mname[:-1]
    out = [f"In-place version of :func:`retrograd.{base}`, as a function.", ""]
    out += _wrap(f"``rg.{mname}(x, ...)`` is ``x.{mname}(...)``: the result of ``rg.{base}(x, ...)`` is "
                 "written into ``x``, which is returned. The result must keep ``x``'s shape and be castable "
                 "to its dtype.") + [""]
    if not doc:
        return "\n".join(out).rstrip("\n")
    sections = {t: doc.rstrip("\n").split("\n")[s + 2:end] for t, s, end in _sections(doc.rstrip("\n"))}
    if "Parameters" in sections:
        out += ["Parameters", "----------"] + sections["Parameters"]
    out += ["Returns", "-------", "Tensor", "    The first argument, holding the result.", ""]
    out += ["Raises", "------", "RuntimeError"]
    out += ["    " + ln for ln in _wrap(
        "If the result's shape or dtype does not fit the tensor, or if grad mode is on and it is a "
        "leaf that requires grad (or a view of one).")]
    out += ["TypeError", "    If the first argument is not a Tensor.", ""]
    # the op's examples up to its first call, that call made in place
    body = sections.get("Examples", [])
    import re
    pat = re.compile(rf"\brg\.{re.escape(e.name)}\(")
    kept = []
    for i, ln in enumerate(body):
        if ln.lstrip().startswith(">>> ") and pat.search(ln):
            kept.append(pat.sub(f"rg.{mname}(", ln))
            for nxt in body[i + 1:]:
                if not nxt.strip() or nxt.lstrip().startswith(">>>"):
                    break
                kept.append(nxt)
            break
        kept.append(ln)
    out += ["Examples", "--------"] + kept
    return "\n".join(out).rstrip("\n")
