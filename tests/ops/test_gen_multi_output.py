"""The generator's vocabulary for entries with several results (gen_multi.py):
`-> (Tensor a, Tensor b)`, formulas over grads[i] / grad_<result>, results
as result<i> or by name, output_differentiability, and JVP formulas keyed by
result name. Checked on scratch tables (the generated code) and on the
shipped table's info; the compiled behaviour is in
tests/fidelity/test_multi_output_ops.py."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
GEN = os.path.join(ROOT, "core", "retrograd", "core", "_codegen", "gen_ops.py")
TEMPLATE = "cdef class Tensor:\n    pass\n    # @@GENERATED_METHODS@@ (here)\n"

# a toy op with a differentiable result and an index result, PyTorch's style
MAXLIKE = """\
- name: top1(Tensor self, int dim) -> (Tensor values, Tensor indices)
  kernel: k_top1(self, dim)
  self: take_dim_backward(grad, indices, dim, False, self_shape, self_dtype)
  values: take_dim(self_t, result1, dim, False)
  output_differentiability: [True, False]
"""

# two differentiable results, named gradients
PAIR = """\
- name: pair(Tensor self) -> (Tensor a, Tensor b)
  kernel: k_pair(self)
  self: grad_a * result1 + grads[1] * a
  a: self_t * b
  b: self_t * result0
"""


def _run(tmp_path, text):
    table = tmp_path / "derivatives.yaml"
    table.write_text(text)
    tmpl = tmp_path / "_tensor.pxi"
    tmpl.write_text(TEMPLATE)
    out = [str(tmp_path / n) for n in ("ops.pxi", "info.py", "tensor.pxi", "decls.pxi")]
    proc = subprocess.run([sys.executable, GEN, str(table), out[0], out[1], str(tmpl), out[2], out[3]],
                          capture_output=True, text=True, timeout=60)
    return proc, table, out


def _info(out):
    ns = {}
    exec(open(out[1]).read(), ns)
    return ns["OPS"]


def test_output_differentiability_makes_one_node_input(tmp_path):
    proc, _, out = _run(tmp_path, MAXLIKE)
    assert proc.returncode == 0, proc.stderr
    ops = open(out[0]).read()
    info = _info(out)["top1"]
    assert info["outputs"] == ["values", "indices"]
    assert info["output_differentiability"] == [True, False]
    # values: node input 0; indices: a plain tensor, saved for the backward
    assert "r_values = _rg_wrap_with_grad_fn(o_values, dev, node, 0)" in ops
    assert "r_indices = _rg_wrap(o_indices, dev)" in ops
    assert "add_input_metadata" not in ops
    # result1 is indices; unpacked with no output number (-1), position 1
    assert "_unpack_output_nr(self, self.s_indices, self.s_indices_vc, self.s_indices_ver, -1, 1" in ops
    # the kernel runs once, its tuple is split, the op returns a tuple
    assert ops.count("k_top1(a_self, v_dim)") == 1
    assert "return result_tuple" in ops
    # the JVP gives the index result no tangent
    assert "j_values = take_dim(T, t_self, o_indices, v_dim, False)" in ops
    assert "return (j_values, j_indices)" in ops


def test_grad_alone_means_only_the_first_result_is_differentiable(tmp_path):
    proc, _, out = _run(tmp_path, MAXLIKE.replace("  output_differentiability: [True, False]\n", ""))
    assert proc.returncode == 0, proc.stderr
    assert _info(out)["top1"]["output_differentiability"] == [True, False]


def test_named_gradients_and_results_are_canonical(tmp_path):
    proc, _, out = _run(tmp_path, PAIR)
    assert proc.returncode == 0, proc.stderr
    ops = open(out[0]).read()
    info = _info(out)["pair"]
    assert info["output_differentiability"] == [True, True]
    # grad_a -> grads[0], result1 -> b; both results are node inputs
    assert info["formulas"]["self"] == "grads[0] * b + grads[1] * a"
    assert "r_b = _rg_wrap_with_grad_fn(o_b, dev, node, 1)" in ops
    assert "node.add_input_metadata(o_b, dev)" in ops
    # no formula runs when neither result got a gradient; a missing one is None
    assert "if grads[0] is None and grads[1] is None:" in ops
    assert "j_a = t_self * o_b" in ops and "j_b = t_self * o_a" in ops


BAD = [
    ("tuple_jvp_unknown", PAIR.replace("  a: self_t * b\n  b: self_t * result0\n",
                                       "  a, b: k2(self_t, a, b)\n"), "unknown function 'k2'"),
    ("grad_with_two", PAIR.replace("grad_a * result1 + grads[1] * a", "grad * result1")
     + "  output_differentiability: [True, True]\n", "must name the gradient they use"),
    ("grad_mixed", PAIR.replace("grad_a * result1", "grad * result1"), "mix `grad` and grads[i]"),
    ("grads_index", PAIR.replace("grads[1]", "grads[2]"), "constant index in [0, 2)"),
    ("result_key", MAXLIKE.replace("  values:", "  result:"), "not `result:`"),
    ("plain_result", MAXLIKE.replace("result1", "result"), "name one"),
    ("result_index", MAXLIKE.replace("result1", "result5"), "has 2 results"),
    ("jvp_missing", MAXLIKE.replace("  values: take_dim(self_t, result1, dim, False)\n", ""),
     "forward (JVP) formula"),
    ("jvp_nondiff", MAXLIKE + "  indices: zeros_like(indices)\n", "is not differentiable"),
    ("diff_list", MAXLIKE.replace("[True, False]", "[True]"), "one true/false per result"),
    ("grad_of_nondiff", MAXLIKE.replace("grad, indices", "grad_indices, indices"),
     "is not differentiable"),
    ("bad_results", MAXLIKE.replace("(Tensor values, Tensor indices)", "(Tensor values, int n)"),
     "each result is `Tensor <name>`"),
    ("jvp_grads", MAXLIKE.replace("take_dim(self_t, result1", "take_dim(grads[0], result1"),
     "`grads` is for backward formulas"),
]


@pytest.mark.parametrize("text,message", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_multi_output_entry_fails_with_file_and_line(tmp_path, text, message):
    proc, table, _ = _run(tmp_path, text)
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr, proc.stderr
    assert f"{table}:1" in proc.stderr, proc.stderr
    assert message in proc.stderr, proc.stderr


def test_shipped_multi_output_entries():
    pytest.importorskip("retrograd")
    from retrograd.core import _generated_ops_info
    ops = _generated_ops_info.OPS
    assert ops["_linalg_svd"]["outputs"] == ["U", "S", "Vh"]
    assert ops["_linalg_svd"]["output_differentiability"] == [True, True, True]
    assert ops["_linalg_slogdet"]["outputs"] == ["sign", "logabsdet"]
    for name in ("_max_dim", "_min_dim"):
        assert ops[name]["outputs"] == ["values", "indices"]
        assert ops[name]["output_differentiability"] == [True, False]
    # the single-factor entries they replace are gone
    for old in ("_linalg_svd_u", "_linalg_svdvals", "_linalg_svd_vh", "_linalg_logabsdet"):
        assert old not in ops
