"""Bad arguments get torch's exception class and a message that helps: int
arguments given floats (never truncated), and the other bad arguments the fuzz
found.

Each case is one call written once for both libraries (``L`` is retrograd
or torch, ``F`` its nn.functional); the test runs it on both and checks the
builtin exception class is the same, that retrograd's message names what was
wrong, and that no NumPy-internal message leaks through.
"""
from __future__ import annotations

import builtins

import numpy as np
import pytest

import retrograd as rg
import retrograd.nn.functional as rF

torch = pytest.importorskip("torch")
tF = torch.nn.functional

pytestmark = pytest.mark.oracle

LEAKS = ("ufunc", "has no attribute", "cannot be interpreted as an integer", "object arrays",
         "only integers, slices")


def _x(L, *shape, dtype=None):
    a = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) / 7.0 - 0.5
    return L.tensor(a) if dtype is None else L.tensor(a.astype(dtype))


def _builtin(exc):
    for k in type(exc).__mro__:
        if getattr(builtins, k.__name__, None) is k:
            return k
    raise AssertionError(type(exc))


# id -> (call(L, F), words retrograd's message must contain)
CASES = {
    # float dims and other int arguments
    "sum_float_dim": (lambda L, F: L.sum(_x(L, 2, 3), dim=1.5), ["dim", "int", "float"]),
    "sum_float_dim_tuple": (lambda L, F: L.sum(_x(L, 2, 3), dim=(0, 1.0)), ["dim", "float"]),
    "mean_float_dim": (lambda L, F: L.mean(_x(L, 2, 3), dim=0.0), ["dim", "float"]),
    "unsqueeze_float_dim": (lambda L, F: L.unsqueeze(_x(L, 2, 3), 1.5), ["dim", "float"]),
    "unsqueeze_bool_dim": (lambda L, F: L.unsqueeze(_x(L, 2, 3), True), ["dim", "bool"]),
    "unsqueeze_numpy_float_dim": (lambda L, F: L.unsqueeze(_x(L, 2, 3), np.float64(1)), ["dim"]),
    "tril_float_diagonal": (lambda L, F: L.tril(_x(L, 3, 3), 1.5), ["diagonal", "float"]),
    "triu_float_diagonal": (lambda L, F: L.triu(_x(L, 3, 3), diagonal=0.5), ["diagonal", "float"]),
    "transpose_float_dim": (lambda L, F: L.transpose(_x(L, 2, 3), 0, 1.0), ["dim", "float"]),
    "softmax_float_dim": (lambda L, F: L.softmax(_x(L, 2, 3), 1.0), ["dim", "float"]),
    "cumsum_float_dim": (lambda L, F: L.cumsum(_x(L, 2, 3), 1.0), ["dim", "float"]),
    "flatten_float_dim": (lambda L, F: L.flatten(_x(L, 2, 3), 0.5), ["dim", "float"]),
    "chunk_float_chunks": (lambda L, F: L.chunk(_x(L, 4), 1.5), ["chunk", "chunks", "float"]),
    "narrow_float_start": (lambda L, F: L.narrow(_x(L, 4), 0, 1.5, 1), ["start", "float"]),
    "roll_float_shift": (lambda L, F: L.roll(_x(L, 4), 1.5, 0), ["shifts", "float"]),
    "repeat_float": (lambda L, F: _x(L, 2).repeat(1.5), ["repeat", "float"]),
    "split_float": (lambda L, F: L.split(_x(L, 4), 1.5), ["split", "float"]),
    "pad_float": (lambda L, F: F.pad(_x(L, 4), (1.5, 1)), ["pad", "float"]),
    "size_float_dim": (lambda L, F: _x(L, 2, 3).size(1.5), ["dim", "float"]),
    "dim_out_of_range": (lambda L, F: L.sum(_x(L, 2, 3), dim=5), ["range"]),
    "dim_huge": (lambda L, F: L.unsqueeze(_x(L, 2, 3), 2 ** 63), ["Overflow"]),
    "dim_large_in_int64": (lambda L, F: L.unsqueeze(_x(L, 2, 3), 2 ** 40), ["range"]),
    "reshape_float": (lambda L, F: _x(L, 2, 3).reshape(2.0, 3), ["float"]),
    # matmul family with non-tensor operands
    "matmul_float": (lambda L, F: L.matmul(_x(L, 2, 3), 2.0), ["matmul", "other", "float"]),
    "matmul_op_int": (lambda L, F: _x(L, 2, 3) @ 2, ["int"]),
    "rmatmul_op_float": (lambda L, F: 2.0 @ _x(L, 2, 3), ["float"]),
    "mm_none": (lambda L, F: L.mm(_x(L, 2, 3), None), ["mm", "NoneType"]),
    "mm_int": (lambda L, F: L.mm(3, _x(L, 2, 3)), ["mm", "int"]),
    "bmm_none": (lambda L, F: L.bmm(_x(L, 1, 2, 3), None), ["bmm", "NoneType"]),
    "dot_str": (lambda L, F: L.dot(_x(L, 3), "a"), ["dot", "str"]),
    "outer_float": (lambda L, F: L.outer(_x(L, 3), 1.0), ["outer", "float"]),
    # creation with negative or impossible sizes, arange
    "zeros_negative": (lambda L, F: L.zeros(-1, 3), ["negative", "-1"]),
    "ones_negative": (lambda L, F: L.ones(-1), ["negative"]),
    "empty_negative": (lambda L, F: L.empty(2, -2), ["negative"]),
    "full_negative": (lambda L, F: L.full((-1,), 1.0), ["negative"]),
    "rand_negative": (lambda L, F: L.rand(-1), ["negative"]),
    "randn_negative": (lambda L, F: L.randn(3, -1), ["negative"]),
    "zeros_float_size": (lambda L, F: L.zeros((2.5, 3)), ["size", "float"]),
    "zeros_huge": (lambda L, F: L.zeros(2 ** 62, 2 ** 62), ["size"]),
    "eye_negative": (lambda L, F: L.eye(-1), ["eye", "0"]),
    "arange_step_zero": (lambda L, F: L.arange(0, 5, 0), ["step", "nonzero"]),
    "arange_wrong_sign": (lambda L, F: L.arange(0, 5, -1), ["step sign"]),
    "arange_empty_wrong_sign": (lambda L, F: L.arange(5, 0, 1), ["step sign"]),
    "arange_nan": (lambda L, F: L.arange(float("nan")), ["range"]),
    "arange_inf": (lambda L, F: L.arange(0, float("inf")), ["range"]),
    "linspace_negative_steps": (lambda L, F: L.linspace(0, 1, -1), ["steps"]),
    # non-tensors where a tensor is required
    "sum_none": (lambda L, F: L.sum(None), ["sum", "input", "NoneType"]),
    "exp_none": (lambda L, F: L.exp(None), ["exp", "input", "NoneType"]),
    "exp_str": (lambda L, F: L.exp("abc"), ["exp", "str"]),
    "add_none": (lambda L, F: L.add(_x(L, 2), None), ["add", "other", "NoneType"]),
    "atan2_str": (lambda L, F: L.atan2(_x(L, 2), "a"), ["atan2", "str"]),
    "tensor_str": (lambda L, F: L.tensor("abc"), ["str"]),
    "tensor_str_list": (lambda L, F: L.tensor(["a", "b"]), ["str"]),
    "tensor_none": (lambda L, F: L.tensor(None), ["NoneType"]),
    "tensor_object": (lambda L, F: L.tensor([object()]), ["object"]),
    "zeros_like_list": (lambda L, F: L.zeros_like(None), ["zeros_like", "NoneType"]),
    "full_none_fill": (lambda L, F: L.full((2,), None), ["fill_value"]),
    # indexing beyond int64
    "index_2_63": (lambda L, F: _x(L, 2, 3)[2 ** 63], ["Overflow"]),
    "index_minus_2_63_minus_1": (lambda L, F: _x(L, 2, 3)[-2 ** 63 - 1], ["Overflow"]),
    # grad(inputs=...) with non-tensors
    "grad_inputs_none": (lambda L, F: L.autograd.grad((_x(L, 2).requires_grad_() * 2).sum(), inputs=[None]),
                         ["inputs", "NoneType"]),
    "grad_inputs_str": (lambda L, F: L.autograd.grad((_x(L, 2).requires_grad_() * 2).sum(), inputs="ab"),
                        ["inputs", "str"]),
    "grad_inputs_float": (lambda L, F: L.autograd.grad((_x(L, 2).requires_grad_() * 2).sum(), inputs=1.0),
                          ["float"]),
    # cross_entropy / nll_loss targets
    "ce_float_labels": (lambda L, F: F.cross_entropy(_x(L, 2, 3), L.tensor([0.0, 1.0])),
                        ["integer", "labels", "long()"]),
    "ce_batch_mismatch": (lambda L, F: F.cross_entropy(_x(L, 2, 3), L.tensor([0, 1, 2])), ["batch_size"]),
    "ce_2d_target": (lambda L, F: F.cross_entropy(_x(L, 2, 3), L.tensor([[0, 1], [1, 0]])), ["1D target"]),
    "ce_spatial_mismatch": (lambda L, F: F.cross_entropy(_x(L, 2, 3, 4), L.zeros((2, 5), dtype=L.int64)),
                            ["target size"]),
    "ce_int_probabilities": (lambda L, F: F.cross_entropy(_x(L, 2, 3), L.zeros((2, 3), dtype=L.int64)),
                             ["probabilities"]),
    "nll_float_labels": (lambda L, F: F.nll_loss(_x(L, 2, 3), L.tensor([0.0, 1.0])), ["integer", "labels"]),
    "nll_unbatched_vector_target": (lambda L, F: F.nll_loss(_x(L, 3), L.tensor([0, 1])), ["1D"]),
    # dtypes and .to
    "to_two_dtypes": (lambda L, F: _x(L, 2).to(L.float32, L.float32), ["to"]),
    "to_bad_string": (lambda L, F: _x(L, 2).to("floaty"), ["floaty"]),
    "format_spec_on_vector": (lambda L, F: format(_x(L, 2), ".2f"), ["format"]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_error_class_and_message_as_torch(case):
    call, words = CASES[case]
    with pytest.raises(Exception) as rg_exc:
        call(rg, rF)
    with pytest.raises(Exception) as torch_exc:
        call(torch, tF)
    assert _builtin(rg_exc.value) is _builtin(torch_exc.value), (
        f"retrograd raised {type(rg_exc.value).__name__}: {rg_exc.value}; torch raised "
        f"{type(torch_exc.value).__name__}: {torch_exc.value}")
    msg = str(rg_exc.value)
    for w in words:
        assert w in msg, f"{w!r} not in retrograd's message: {msg}"
    for leak in LEAKS:
        assert leak not in msg, f"NumPy-internal message leaked: {msg}"


def test_torch_tensor_mixed_into_retrograd_op_says_libraries_were_mixed():
    x = rg.ones(3)
    t = torch.ones(3)
    for call in (lambda: rg.add(x, t), lambda: x + t, lambda: x * t, lambda: rg.exp(t),
                 lambda: rg.matmul(rg.ones(3, 3), t), lambda: rg.cat([x, t])):
        with pytest.raises(TypeError, match="libraries were mixed"):
            call()


def test_torch_dtype_given_to_retrograd_says_libraries_were_mixed():
    with pytest.raises(TypeError, match="libraries were mixed"):
        rg.zeros(2, dtype=torch.float32)
    with pytest.raises(TypeError, match="libraries were mixed"):
        rg.ones(2).to(torch.float32)


def test_int_like_arguments_that_torch_accepts_still_work():
    x = rg.ones(2, 3)
    assert rg.unsqueeze(x, np.int64(1)).shape == (2, 1, 3)
    assert rg.unsqueeze(x, rg.tensor(1)).shape == (2, 1, 3)
    assert rg.sum(x, dim=np.int32(1)).shape == (2,)
    assert rg.sum(x, dim=[np.int64(0), 1]).shape == ()
    assert rg.tril(rg.ones(3, 3), np.int64(-1)).sum().item() == 3.0
    assert rg.zeros(np.int64(2), 3).shape == (2, 3)
    assert rg.narrow(rg.arange(5), 0, np.int64(1), 2).tolist() == [1, 2]


def test_arrays_for_tensor_arguments_keep_numpy_semantics_lists_and_input_numbers_do_not():
    # deliberate (docs/from_pytorch.md): NumPy arrays are taken where a tensor
    # is expected, numbers where torch takes a Scalar; lists, tuples and a
    # number as an op's input raise torch's TypeError
    assert rg.exp(np.zeros(())).item() == 1.0
    assert rg.add(rg.ones(2), np.ones(2)).tolist() == [2.0, 2.0]
    assert rg.add(rg.ones(2), 1.5).tolist() == [2.5, 2.5]
    with pytest.raises(TypeError, match=r"exp\(\): argument 'input' must be Tensor, not float"):
        rg.exp(0.0)
    with pytest.raises(TypeError, match=r"add\(\): argument 'other' must be Tensor, not list"):
        rg.add(rg.ones(2), [1.0, 2.0])


def test_index_beyond_int64_in_a_list_is_refused_not_wrapped():
    x = rg.arange(3)
    with pytest.raises(ValueError, match="Overflow"):
        x[[2 ** 63]]


@pytest.mark.parametrize("shape,chunks,dim", [((0, 3), 2, 0), ((0, 3), 3, 0), ((2, 0), 3, 1), ((5, 0), 4, 1),
                                              ((0,), 1, 0), ((4, 0, 2), 2, -2)])
def test_chunk_of_an_empty_dim_gives_torchs_number_of_chunks(shape, chunks, dim):
    got = rg.chunk(rg.zeros(shape), chunks, dim)
    ref = torch.chunk(torch.zeros(shape), chunks, dim)
    assert [tuple(t.shape) for t in got] == [tuple(t.shape) for t in ref]
    assert [tuple(t.shape) for t in rg.zeros(shape).chunk(chunks, dim)] == [tuple(t.shape) for t in ref]


@pytest.mark.parametrize("size,chunks", [(5, 2), (6, 4), (1, 3), (7, 7)])
def test_chunk_of_a_nonempty_dim_unchanged(size, chunks):
    got = rg.chunk(rg.arange(float(size)), chunks)
    ref = torch.chunk(torch.arange(float(size)), chunks)
    assert [t.tolist() for t in got] == [t.tolist() for t in ref]


def test_float_dim_is_never_truncated():
    # the silent case: dim=1.5 must never reduce dim 1
    x = rg.ones(2, 3)
    for call in (lambda: x.sum(1.5), lambda: rg.sum(x, dim=1.5), lambda: x.unsqueeze(0.5), lambda: x.tril(1.5),
                 lambda: rg.mean(x, (1.0,)), lambda: rg.amax(x, 1.0), lambda: rg.argmax(x, 1.0)):
        with pytest.raises(TypeError, match="float"):
            call()
