"""The `doc:` key of derivatives.yaml (core/retrograd/core/_codegen/docs.py):
an entry's numpydoc body becomes its function's docstring, its Tensor
methods get it in the method form, the stub carries both, and a malformed
body fails the build with the entry's line. (That every public op has one,
and that the examples run: tests/docs/test_op_docstrings.py.)"""
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CODEGEN = os.path.join(ROOT, "core", "retrograd", "core", "_codegen")
GEN = os.path.join(CODEGEN, "gen_ops.py")
GEN_STUBS = os.path.join(CODEGEN, "gen_stubs.py")
STUB_TEMPLATE = os.path.join(ROOT, "core", "retrograd", "core", "abi.pyi.in")

DOC = """\
Scale ``self`` by ``other``, element by element.

The inputs broadcast. A backslash \\\\ and quotes \"\"\" survive.

Parameters
----------
self : Tensor
    The input.
other : Tensor
    The factor.

Returns
-------
Tensor
    The product.

Examples
--------
>>> import retrograd as rg
>>> x = rg.tensor([1.0, 2.0])
>>> rg.scale(x, 3.0)
tensor([3., 6.])
>>> rg.scale(rg.scale(x, 2.0), 2.0)
tensor([4., 8.])
"""


def _entry(doc=DOC, extra="", name="scale", public=True):
    text = textwrap.dedent(f"""\
        - name: {name}(Tensor self, Tensor other)
          kernel: np.multiply(self, other)
          self: grad * other
          other: grad * self
          methods: [{name.lstrip('_')}, __mul__]
          inplace: true
        """) + extra
    if not public:
        text += "  public: false\n"
    if doc is not None:
        text += "  doc: |\n" + "".join(("    " + ln if ln else "") + "\n" for ln in doc.split("\n")).rstrip() + "\n"
    return text


def _gen(tmp_path, table_text, template="cdef class Tensor:\n    pass\n    # @@GENERATED_METHODS@@ (here)\n"):
    table = tmp_path / "derivatives.yaml"
    table.write_text(table_text)
    tmpl = tmp_path / "_tensor.pxi"
    tmpl.write_text(template)
    out = [str(tmp_path / n) for n in ("ops.pxi", "info.py", "tensor.pxi", "decls.pxi")]
    proc = subprocess.run([sys.executable, GEN, str(table), out[0], out[1], str(tmpl), out[2], out[3]],
                          capture_output=True, text=True, timeout=60)
    return proc, table, out


def _docstring(code: str, header: str) -> str:
    """The docstring of the function that starts at line `header` of generated
    code (its body is the docstring and one `return` line)."""
    import ast
    indent = header[:len(header) - len(header.lstrip())]
    rest = code.split(header + "\n", 1)[1]
    body, ret = rest.split(f"\n{indent}    return ", 1)
    src = textwrap.dedent(header + "\n" + body + f"\n{indent}    return " + ret.split("\n", 1)[0])
    return ast.get_docstring(ast.parse(src).body[0], clean=True)


def test_doc_becomes_the_function_docstring(tmp_path):
    proc, _, out = _gen(tmp_path, _entry())
    assert proc.returncode == 0, proc.stderr
    ops = open(out[0]).read()
    assert _docstring(ops, "def scale(self, other):") == DOC.rstrip("\n")
    ns = {}
    exec(open(out[1]).read(), ns)
    assert ns["OPS"]["scale"]["doc"] == DOC


def _method_doc(tensor_code: str, mname: str) -> str:
    line = next(ln for ln in tensor_code.split("\n") if ln.startswith(f"    def {mname}(self"))
    return _docstring(tensor_code, line)


def test_methods_get_the_method_form(tmp_path):
    proc, _, out = _gen(tmp_path, _entry())
    assert proc.returncode == 0, proc.stderr
    tensor = open(out[2]).read()
    doc = _method_doc(tensor, "scale")
    assert doc.startswith("Scale ``self`` by ``other``, element by element.\n\nThe method form of "
                          ":func:`retrograd.scale`:\n``x.scale(...)`` is ``rg.scale(x, ...)``.")
    # the tensor the method is called on leaves Parameters; the examples call the method
    assert "self : Tensor" not in doc and "other : Tensor\n    The factor." in doc
    assert ">>> x.scale(3.0)\ntensor([3., 6.])" in doc
    assert ">>> rg.scale(x.scale(2.0), 2.0)" not in doc and ">>> x.scale(2.0).scale(2.0)" in doc
    # operators carry no docstring of their own
    assert '    def __mul__(self, other):\n        return' in tensor


def test_inplace_method_doc(tmp_path):
    proc, _, out = _gen(tmp_path, _entry())
    assert proc.returncode == 0, proc.stderr
    doc = _method_doc(open(out[2]).read(), "scale_")
    assert doc.startswith("In-place version of :meth:`Tensor.scale`.")
    assert "Returns\n-------\nTensor\n    This tensor, holding the result." in doc
    assert "Raises\n------\nRuntimeError\n" in doc
    # the examples end at their first call, made in place
    assert doc.endswith(">>> x = rg.tensor([1.0, 2.0])\n>>> x.scale_(3.0)\ntensor([3., 6.])")


def test_private_entry_documents_its_methods(tmp_path):
    method_doc = DOC.replace("rg.scale(x, 3.0)", "x.scale(3.0)").replace(
        "rg.scale(rg.scale(x, 2.0), 2.0)", "x.scale(2.0).scale(2.0)")
    method_doc = method_doc.replace("self : Tensor\n    The input.\n", "")
    proc, _, out = _gen(tmp_path, _entry(doc=method_doc, name="_scale", public=False))
    assert proc.returncode == 0, proc.stderr
    doc = _method_doc(open(out[2]).read(), "scale")
    assert doc == method_doc.rstrip("\n")


def test_undocumented_entry_still_builds(tmp_path):
    proc, _, out = _gen(tmp_path, _entry(doc=None))
    assert proc.returncode == 0, proc.stderr
    ns = {}
    exec(open(out[1]).read(), ns)
    assert ns["OPS"]["scale"]["doc"] is None


BAD = [
    ("no_examples", DOC.split("Examples")[0].rstrip() + "\n", "no 'Examples' section"),
    ("no_returns", DOC.replace("Returns\n-------\nTensor\n    The product.\n\n", ""), "no 'Returns' section"),
    ("no_parameters", DOC.replace("Parameters\n----------\nself : Tensor\n    The input.\n"
                                  "other : Tensor\n    The factor.\n\n", ""), "no 'Parameters' section"),
    ("no_import", DOC.replace(">>> import retrograd as rg\n", ""), "must start with '>>> import retrograd as rg'"),
    ("two_line_summary", "Scale\nby other.\n\n" + DOC.split("\n", 2)[2], "summary must be one line"),
    ("underline", DOC.replace("Returns\n-------", "Returns\n---"), "underline of section 'Returns'"),
    ("unknown_section", DOC.replace("Returns\n-------", "Result\n------"), "unknown section 'Result'"),
    ("order", DOC.replace("Parameters\n----------\nself : Tensor\n    The input.\nother : Tensor\n    The factor.\n\n",
                          "").replace("Examples\n--------", "Parameters\n----------\nself : Tensor\n    x.\n\n"
                                      "Examples\n--------"), "numpydoc's order"),
    ("blank_lines", DOC.replace("\n\nParameters", "\n\n\nParameters"), "two blank lines in a row"),
]


@pytest.mark.parametrize("doc,message", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_malformed_doc_fails_the_build_with_the_line(tmp_path, doc, message):
    proc, table, out = _gen(tmp_path, _entry(doc=doc))
    assert proc.returncode == 1
    assert f"{table}:1: scale: " in proc.stderr and message in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and not os.path.exists(out[0])


def test_doc_must_be_text(tmp_path):
    proc, table, _ = _gen(tmp_path, _entry(doc=None) + "  doc: 3\n")
    assert proc.returncode == 1 and f"{table}:1: scale: doc must be" in proc.stderr, proc.stderr


def test_stub_carries_the_docstrings(tmp_path):
    pytest.importorskip("yaml")
    import ast
    table = tmp_path / "derivatives.yaml"
    table.write_text(_entry())
    out = tmp_path / "abi.pyi"
    proc = subprocess.run([sys.executable, GEN_STUBS, str(table), STUB_TEMPLATE, str(out)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    tree = ast.parse(out.read_text())
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "scale")
    assert ast.get_docstring(fn) == DOC.rstrip("\n")
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Tensor")
    meths = {n.name: n for n in cls.body if isinstance(n, ast.FunctionDef)}
    assert ast.get_docstring(meths["scale"]).startswith("Scale ``self`` by ``other``")
    assert ast.get_docstring(meths["scale_"]).startswith("In-place version of :meth:`Tensor.scale`.")
    # the docstring's words stay words: only the signatures spell builtins.float
    assert "builtins" not in ast.get_docstring(meths["scale"])


MEMBERS = """\
cdef class Tensor:
    def numel(self):
        return 1

    def item(self):
        \"\"\"Already documented.\"\"\"
        return 1
    # @@GENERATED_METHODS@@ (here)
"""

MEMBER_DOC = """\
  The number of elements.

  Examples
  --------
  >>> import retrograd as rg
  >>> rg.zeros(2, 3).numel()
  6
"""


def test_member_docs_go_under_their_def(tmp_path):
    (tmp_path / "tensor_docs.yaml").write_text("Tensor: |\n" + MEMBER_DOC.replace("The number of elements.",
                                               "A tensor.") + "numel: |\n" + MEMBER_DOC)
    proc, _, out = _gen(tmp_path, _entry(), MEMBERS)
    assert proc.returncode == 0, proc.stderr
    tensor = open(out[2]).read()
    assert _method_doc(tensor, "numel").startswith("The number of elements.\n\nExamples")
    assert 'cdef class Tensor:\n    """A tensor.\n' in tensor


@pytest.mark.parametrize("docs_text,message", [
    ("item: |\n" + MEMBER_DOC, "item has a docstring in the template too"),
    ("size: |\n" + MEMBER_DOC, "size: Tensor has no hand-written member"),
    ("numel: |\n  The number of elements.\n", "no 'Examples' section"),
], ids=["twice", "unknown", "no_examples"])
def test_member_docs_are_checked(tmp_path, docs_text, message):
    (tmp_path / "tensor_docs.yaml").write_text(docs_text)
    proc, _, _ = _gen(tmp_path, _entry(), MEMBERS)
    assert proc.returncode == 1 and message in proc.stderr and "tensor_docs.yaml" in proc.stderr, proc.stderr
