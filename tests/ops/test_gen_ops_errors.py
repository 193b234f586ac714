"""The generator (core/retrograd/core/_codegen/gen_ops.py) checks every entry
of the table at build time: a bad entry fails the build with the file and
line of the entry, never with a traceback or a broken Cython module."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CODEGEN = os.path.join(ROOT, "core", "retrograd", "core", "_codegen")
GEN = os.path.join(CODEGEN, "gen_ops.py")
TABLE = os.path.join(ROOT, "core", "retrograd", "core", "derivatives.yaml")

GOOD = """\
- name: mul(Tensor self, Tensor other)
  kernel: np.multiply(self, other)
  self: grad * other
  other: grad * self
  result: other_t * self_p + self_t * other_p
  methods: [mul, __mul__, __rmul__: reflected]

"""

TEMPLATE = "cdef class Tensor:\n    pass\n    # @@GENERATED_METHODS@@ (here)\n"


def _run(tmp_path, table_text, name="derivatives.yaml"):
    table = tmp_path / name
    table.write_text(table_text)
    tmpl = tmp_path / "_tensor.pxi"
    tmpl.write_text(TEMPLATE)
    out = [str(tmp_path / n) for n in ("ops.pxi", "info.py", "tensor.pxi", "decls.pxi")]
    proc = subprocess.run([sys.executable, GEN, str(table), out[0], out[1], str(tmpl), out[2], out[3]],
                          capture_output=True, text=True, timeout=60)
    return proc, table, out


def test_good_table_generates(tmp_path):
    proc, _, out = _run(tmp_path, GOOD)
    assert proc.returncode == 0, proc.stderr
    ops = open(out[0]).read()
    assert "cdef class MulBackward0(Node):" in ops and "def mul(self, other):" in ops
    assert "def __rmul__(self, other):" in open(out[2]).read()
    ns = {}
    exec(open(out[1]).read(), ns)
    assert ns["OPS"]["mul"]["line"] == 1


BAD = [
    ("unknown_function", "  self: grad * cbrt(self)\n", "unknown function 'cbrt'"),
    ("unknown_name", "  self: grad * othr\n", "unknown name 'othr'"),
    ("syntax", "  self: grad * (self\n", "not a valid expression"),
    ("attribute", "  self: grad * self.T\n", "attribute access"),
    ("unknown_key", "  slef: grad\n", "'slef' is neither a known key"),
    ("missing_formula", None, "no backward formula for input 'self'"),
    ("kernel_name", "  kernel: np.negative(selff)\n", "kernel uses unknown name 'selff'"),
    ("jvp_name", "  result: self_q * 2\n", "unknown name 'self_q'"),
]


@pytest.mark.parametrize("case,line_text,message", BAD, ids=[b[0] for b in BAD])
def test_bad_entry_fails_with_file_and_line(tmp_path, case, line_text, message):
    entry = ["- name: neg2(Tensor self)\n", "  kernel: np.negative(self)\n", "  self: -grad\n",
             "  result: auto_linear\n"]
    if case == "missing_formula":
        del entry[2]
    elif case == "kernel_name":
        entry[1] = line_text
    elif case == "jvp_name":
        entry[3] = line_text
    elif case in ("unknown_key",):
        entry.insert(3, line_text)
    else:
        entry[2] = line_text
    text = GOOD + "".join(entry)
    bad_line = GOOD.count("\n") + 1                 # the entry's first line
    proc, table, _ = _run(tmp_path, text)
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr, proc.stderr
    assert f"{table}:{bad_line}" in proc.stderr, proc.stderr
    assert message in proc.stderr, proc.stderr


def test_bad_signature_and_duplicates(tmp_path):
    proc, table, _ = _run(tmp_path, GOOD + "- name: mul(Tensor self, Tensor other)\n  kernel: np.multiply(self, other)\n"
                                           "  self: grad\n  other: grad\n")
    assert proc.returncode != 0 and f"{table}:8" in proc.stderr and "defined twice" in proc.stderr
    proc, table, _ = _run(tmp_path, GOOD + "- name: f(Tensor self\n  kernel: np.negative(self)\n  self: -grad\n")
    assert proc.returncode != 0 and f"{table}:8" in proc.stderr and "bad signature" in proc.stderr
    proc, table, _ = _run(tmp_path, GOOD + "- name: neg(Tensor self)\n  kernel: np.negative(self)\n"
                                           "  self: -grad\n  methods: [__mul__]\n")
    assert proc.returncode != 0 and f"{table}:8" in proc.stderr and "already bound" in proc.stderr


def test_invalid_yaml_reports_line(tmp_path):
    proc, table, _ = _run(tmp_path, GOOD + "- name: neg(Tensor self)\n  kernel: [unclosed\n")
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr, proc.stderr
    assert f"{table}:" in proc.stderr and "invalid YAML" in proc.stderr


def test_unknown_kernel_helper_is_caught_next_to_op_support(tmp_path):
    """A table next to _op_support.pxi may only call the k_* kernels defined there."""
    (tmp_path / "_op_support.pxi").write_text("cdef object k_neg(object a):\n    return -a\n")
    ok = "- name: neg(Tensor self)\n  kernel: k_neg(self)\n  self: -grad\n"
    proc, _, _ = _run(tmp_path, ok)
    assert proc.returncode == 0, proc.stderr
    proc, table, _ = _run(tmp_path, ok.replace("k_neg", "k_negg"))
    assert proc.returncode != 0 and f"{table}:1" in proc.stderr and "k_negg" in proc.stderr


def test_real_table_generates(tmp_path):
    """The shipped table passes every check (the build would fail otherwise)."""
    tmpl = os.path.join(ROOT, "core", "retrograd", "core", "_tensor.pxi")
    out = [str(tmp_path / n) for n in ("ops.pxi", "info.py", "tensor.pxi", "decls.pxi")]
    proc = subprocess.run([sys.executable, GEN, TABLE, out[0], out[1], tmpl, out[2], out[3]],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_formula_vocabulary_is_implemented():
    """Every helper formulas.py admits exists in _formula_helpers.pxi (or,
    for batching formulas, _batched_formulas.pxi)."""
    sys.path.insert(0, CODEGEN)
    try:
        import formulas
    finally:
        sys.path.remove(CODEGEN)
    folder = os.path.join(ROOT, "core", "retrograd", "core")
    src = "".join(open(os.path.join(folder, f)).read() for f in os.listdir(folder)
                  if f.startswith("_formula_helpers") or f == "_batched_formulas.pxi")
    for name in formulas.NS_HELPERS:
        assert f"def {name}(ns," in src, f"NS helper {name} has no implementation"
    for name in formulas.VALUE_HELPERS:
        assert f"def {name}(" in src, f"value helper {name} has no implementation"


MM = """\
- name: mm(Tensor self, Tensor mat2)
  kernel: {kernel}(self, mat2)
  self: matmul(grad, transpose(mat2, 0, 1))
  mat2: matmul(transpose(self, 0, 1), grad)

"""


def _topic_folder(tmp_path):
    # a table beside core's _op_support.pxi and topic headers: the generator
    # checks kernels against them and cimports what the code uses
    core = os.path.dirname(TABLE)
    for name in os.listdir(core):
        if name == "_op_support.pxi" or (name.endswith(".pxd") and name.startswith("_")
                                         and not name.startswith("__")):
            with open(os.path.join(core, name)) as f:
                (tmp_path / name).write_text(f.read())
    return tmp_path


def test_generated_code_cimports_its_topic_kernels(tmp_path):
    proc, _, out = _run(_topic_folder(tmp_path), MM.format(kernel="k_mm"))
    assert proc.returncode == 0, proc.stderr
    ops = open(out[0]).read()
    head = ops.split("cdef class", 1)[0]
    assert "from retrograd.core._kernels_linalg cimport (" in head
    assert "k_mm," in head
    assert "_kernels_nn" not in head                  # only what the code uses


def test_unknown_kernel_beside_the_topic_headers_fails(tmp_path):
    proc, _, _ = _run(_topic_folder(tmp_path), MM.format(kernel="k_mm_typo"))
    assert proc.returncode != 0
    assert "derivatives.yaml:1: kernel calls 'k_mm_typo'" in proc.stderr
    assert "topic module's .pxd" in proc.stderr
