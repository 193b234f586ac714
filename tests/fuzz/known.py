"""Deliberate deviations from torch that the fuzz meets, each with its reason.

`known_reason(result)` returns the reason when a fuzz result (runner.classify)
is one of them, else None. Anything not listed here fails
tests/fuzz/test_fuzz.py: keep every entry narrow and justified.
"""
from __future__ import annotations

import re

# torch's argument parser refusing a non-Tensor where retrograd, following
# NumPy (docs/from_pytorch.md: arrays follow NumPy), takes numbers,
# sequences of numbers and arrays as arrays.
_TORCH_WANTS_TENSOR = re.compile(
    r"must be Tensor, not (float|int|bool|list|tuple|numpy\.\w+)\b"
    r"|invalid combination of arguments - got \((float|int|bool|list|tuple|numpy\.\w+)[,)]"
    r"|invalid combination of arguments - got \(Tensor, (float|int|bool|list|tuple|numpy\.\w+)[,)]"
    r"|expected Tensor as element \d+ in argument \d+, but got (list|float|int|tuple|bool)"
    r"|'(list|tuple|float|int|bool)' object has no attribute"
    r"|unsupported operand type\(s\) for @: '(list|tuple|float|int|bool)'"
    r"|unsupported operand type\(s\) for @: 'Tensor' and '(list|tuple)'"
    r"|invalid combination of arguments - got \(Tensor, (\w+=)?(Tensor, )?(float|int|bool|list|tuple|numpy\.\w+)[,)]"
    r"|got \(Tensor, Tensor, (tuple|list)\)"
    r"|'int' object is not callable")

# torch has no kernel for the dtype (or wants equal dtypes) where NumPy computes
# the op with its own promotion (docs/from_pytorch.md: arrays follow NumPy)
_TORCH_NO_KERNEL = re.compile(
    r"not implemented for '(Bool|Byte|Char|Short|Int|Long|ComplexFloat|ComplexDouble|Half)'"
    r"|Boolean inputs not supported"
    r"|expected scalar type \w+ but found \w+"
    r"|expected (m1 and m2|both vectors) to have (the )?same dtype"
    r"|expected dtype [\w:<>]+( \w+)? for `end` but got dtype"
    r"|Input type \(\w+\) and weight type \([\w.]+\) should be the same"
    r"|where expected condition to be a boolean tensor"
    r"|not implemented for complex tensors|does not support complex input"
    r"|Subtraction, the `-` operator, with a bool tensor is not supported")

KNOWN = {
    "numpy-array-likes": "retrograd takes numbers, sequences of numbers and NumPy arrays/scalars where torch "
                         "requires a Tensor (docs/from_pytorch.md: arrays follow NumPy), so a call torch refuses "
                         "for its argument type runs (or fails later, on the array's shape) in retrograd",
    "numpy-promotion": "dtype promotion follows NumPy (docs/from_pytorch.md): a NumPy float64 scalar or a tensor of another "
                       "kind promotes as in NumPy (int64 tensor * float32 tensor is float64; float32 tensor * "
                       "np.float64(1) is float64), where torch keeps the float tensor's dtype",
    "torch-no-derivative": "torch has no (or an internally failing) derivative for this input (remainder's "
                           "second argument, bool/int tensors, pow of a Python bool); retrograd's gradient "
                           "is the formula's value, and the forward results agree",
    "int-input-promotion": "integer and bool inputs of float ops compute in float32, torch's own default "
                           "float dtype; the fuzz runs torch with float64 as its default, where torch gives "
                           "float64",
    "numpy-dtype-coverage": "NumPy computes these ops for every numeric dtype and promotes mixed operands "
                            "(matmul of float32 and float64, relu of bool, softmax of int), where torch has no "
                            "kernel for the dtype or wants equal dtypes (docs/from_pytorch.md: arrays follow NumPy)",
    "dim-none": "dim=None means every dim (squeeze) or, for softmax, torch's implicit dim as F.softmax does, "
                "and a one-element tuple is taken as its dim (NumPy's axis tuples); torch.squeeze and "
                "torch.softmax refuse both",
    "pool-0d": "max/avg_pool2d of a 0-d or 1-d input: retrograd's RuntimeError names the (C, H, W) or "
               "(N, C, H, W) shape it needs; torch's IndexError comes from looking up dim -3 first",
    "bool-size": "a bool is taken as a size 0/1 in every position of *size (torch takes it only after the "
                 "first, an artefact of its argument parser)",
    "torch-to-parser": "torch's Tensor.to parses a bool or float positional argument in ways of its own "
                       "(to(True) gives a bool tensor); retrograd reads a bool as non_blocking and refuses a "
                       "float",
    "half-precision": "float16 layer_norm: torch accumulates half inputs in float32, NumPy in float16; "
                      "results differ beyond float16 tolerance on some inputs",
    "inf-conv-grad": "conv2d gradients with infinite weights: whether a sum of +inf and -inf terms occurs "
                     "(NaN) depends on each library's GEMM order; finite inputs agree",
    "huge-python-int": "a Python int beyond int64 as an operand: NumPy takes it as a float, torch wraps it",
    "int-targets": "integer class labels of any integer dtype (int32, int8, ...) are accepted; torch takes "
                   "only int64 and uint8",
    "torch-attribute-error": "a non-tensor given to an nn.functional function (or as a method's tensor): "
                             "retrograd's argument check raises TypeError, where torch fails later calling a "
                             "Tensor method on it (AttributeError)",
    "foreign-tensor": "a torch tensor mixed into a retrograd call: retrograd names the mixing (TypeError or "
                      "IndexError from NumPy's view of it), torch refuses its own way",
    "nonfinite-grad": "gradients at inf/NaN inputs of conv2d and cumprod, and complex arithmetic with "
                      "infinite parts: where inf - inf or 0 * inf occurs depends on each library's "
                      "evaluation order (finite inputs agree)",
    "complex-autograd": "gradients through complex tensors are not supported yet (retrograd raises rather "
                        "than give one)",
    "size-arguments": "retrograd takes an int where torch wants a tuple of sizes (full(3, v), as NumPy) and "
                      "checks a size's value first; torch's argument parser refuses the int (TypeError)",
    "index-rules": "indexing follows NumPy's rules: float indices are refused (torch truncates them), and "
                   "a value's shape is checked before an index's bounds",
    "integer-avg-pool": "avg_pool2d of integer input computes the float mean (torch truncates to the "
                        "integer dtype)",
    "arange-inf-step": "arange with an infinite step gives the start alone (NumPy), torch gives nothing",
    "empty-gather-index": "gather with an empty index of another rank: retrograd checks the ranks, torch "
                          "returns an empty tensor",
    "float-overflow": "a Python float beyond the tensor's dtype becomes inf, as NumPy casts it; torch "
                      "refuses the conversion",
    "duplicate-dims": "squeeze with a dim listed twice squeezes it once (NumPy's tuple of axes); torch "
                      "refuses the repeat",
    "numpy-int-pow": "an integer tensor to a negative integer power raises, as NumPy (torch gives 0 or 1 "
                     "for a tensor exponent)",
    "check-order": "both refuse the call; torch's argument parser finds a type error (a dims tuple of "
                   "the wrong length, a float dim, a NumPy int for normalized_shape, device index) before "
                   "retrograd's shape or dtype check",
}


def _involves(case, *words):
    return any(w in case for w in words)


def known_reason(r):
    oc = r["outcome"]
    torch_msg = r.get("torch", "")
    rg_msg = r.get("rg", "")
    case = r["case"]
    why = r.get("why") or ""
    if oc == "class_mismatch" and re.search(r"AttributeError: '(list|tuple|int|float|bool|NoneType|str|"
                                            r"numpy\.\w+)' object has no attribute", torch_msg) \
            and "must be Tensor" in rg_msg:
        return KNOWN["torch-attribute-error"]
    if "'torch': {" in case and oc in ("class_mismatch", "rg_only_raises", "torch_only_raises"):
        return KNOWN["foreign-tensor"]
    if oc == "value_mismatch" and r["op"] in ("conv2d", "cumprod") and re.search(r":(nan|inf|ninf)\b", case) \
            and why.startswith("grad"):
        return KNOWN["nonfinite-grad"]
    if oc == "value_mismatch" and "complex" in case and re.search(r":(nan|inf|ninf)\b", case):
        return KNOWN["nonfinite-grad"]
    if "complex" in case and "gradients of complex" in why + rg_msg:
        return KNOWN["complex-autograd"]
    if oc == "value_mismatch" and "complex" in case and "not implemented for complex" in why:
        return KNOWN["complex-autograd"]
    if r["op"] in ("full", "tile", "ones", "zeros", "empty", "rand", "randn") and \
            "must be tuple of ints" in torch_msg + "takes 1 positional argument":
        return KNOWN["size-arguments"]
    if r["op"] in ("full", "ones", "zeros", "empty", "rand", "randn") and "positional argument" in torch_msg:
        return KNOWN["size-arguments"]
    if r["op"] in ("getitem", "setitem") and oc in ("rg_only_raises", "class_mismatch") and \
            (re.search(r"\d\.\d", case) or "out of bounds" in torch_msg or "invalid data type" in torch_msg):
        return KNOWN["index-rules"]
    if oc == "value_mismatch" and r["op"] == "avg_pool2d" and re.search(r":(int\d+|uint8|bool)\b", case):
        return KNOWN["integer-avg-pool"]
    if oc == "value_mismatch" and r["op"] == "arange" and "inf" in case:
        return KNOWN["arange-inf-step"]
    if oc == "rg_only_raises" and r["op"] == "gather" and re.search(r"T\((0,|[^)]*, 0[,)])", case):
        return KNOWN["empty-gather-index"]
    if oc == "class_mismatch" and "TypeError" in r.get("torch_base", "") and re.search(
            r"(movedim|split|layer_norm|to)\(", case) and \
            ("invalid combination" in torch_msg or "must be tuple of ints" in torch_msg):
        return KNOWN["check-order"]
    if oc == "class_mismatch" and (
            re.search(r"argument '(dim|dims)'|failed to unpack|must be tuple of ints|must be int, not",
                      torch_msg) and "TypeError" in r.get("torch_base", "")
            or "The size of tensor a" in torch_msg and "not implemented for" in rg_msg):
        return KNOWN["check-order"]
    if oc == "torch_only_raises" and "cannot be converted to type" in torch_msg and "overflow" in torch_msg:
        return KNOWN["float-overflow"]
    if oc == "torch_only_raises" and re.search(r"must be (tuple of ints|int|Tensor), not numpy\.", torch_msg):
        return KNOWN["numpy-array-likes"]
    if oc == "torch_only_raises" and r["op"] == "squeeze" and "appears multiple times" in torch_msg:
        return KNOWN["duplicate-dims"]
    if oc == "rg_only_raises" and r["op"] == "pow" and "negative integer powers" in rg_msg:
        return KNOWN["numpy-int-pow"]
    if oc == "torch_only_raises" and r["op"] == "logsumexp" and "dim=None" in case:
        return KNOWN["dim-none"]
    if r["op"] == "to" and oc in ("class_mismatch", "torch_only_raises") and ("device" in torch_msg.lower()
                                                                              or "accelerator" in torch_msg):
        return KNOWN["check-order"]
    if oc in ("torch_only_raises", "class_mismatch") and _TORCH_WANTS_TENSOR.search(torch_msg):
        return KNOWN["numpy-array-likes"]
    if oc == "torch_only_raises" and _TORCH_NO_KERNEL.search(torch_msg):
        return KNOWN["numpy-dtype-coverage"]
    if oc in ("torch_only_raises", "class_mismatch") and \
            r["op"] in ("squeeze", "softmax", "softmax_F", "log_softmax") and \
            re.search(r"dim=(None|\(-?\d+,\))", case):
        return KNOWN["dim-none"]
    if oc == "torch_only_raises" and re.match(r"(zeros|ones|empty|rand|randn)\(True", case):
        return KNOWN["bool-size"]
    if r["op"] == "to" and re.match(r"to\(T\([^)]*\)[:\w]*, (True|False|[-+0-9.e]+|nan|inf)\)$", case):
        return KNOWN["torch-to-parser"]
    if oc == "class_mismatch" and r["op"] in ("avg_pool2d", "max_pool2d") and \
            ("Dimension specified as" in torch_msg or "Dimension out of range" in torch_msg):
        return KNOWN["pool-0d"]
    if oc == "value_mismatch" and r["op"] == "conv2d" and "inf" in case and why.startswith("grad"):
        return KNOWN["inf-conv-grad"]
    if re.search(r"\b\d{19,}\b", case):
        return KNOWN["huge-python-int"]
    if oc == "value_mismatch" and r["op"] == "layer_norm" and "float16" in case:
        return KNOWN["half-precision"]
    if oc == "value_mismatch":
        m = re.match(r"dtype (\w+) vs torch (\w+)", why)
        kinds = set(re.findall(r":(bool|u?int\d+|float\d+|complex\d+)", case))
        if m and (_involves(case, "'np':") or len(kinds) > 1) and \
                m.group(2) in ("float32", "float16", "complex64", "uint8", "int64", "int8", "int16", "int32"):
            return KNOWN["numpy-promotion"]
        if m and m.group(1) in ("float16", "float32") and m.group(2) == "float64" and _involves(
                case, ":int8", ":uint8", ":int16", ":bool", ":int32", ":int64"):
            return KNOWN["int-input-promotion"]
        if why.startswith("gradients: rg True torch") and _involves(
                why, "not implemented", "INTERNAL ASSERT", "bool tensor is not supported",
                "only Tensors of floating point"):
            return KNOWN["torch-no-derivative"]
    if oc in ("torch_only_raises", "class_mismatch") and r["op"] in ("cross_entropy", "nll_loss") and \
            "expected target dtype to be Long or Byte" in torch_msg and _involves(case, "int32", "int16", "int8"):
        return KNOWN["int-targets"]
    return None
