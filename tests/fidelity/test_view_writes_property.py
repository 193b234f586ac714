"""A property that keeps writes through views honest: for the output of every
op sample of the registry (tests/ops/op_samples.py), and for every view op
torch marks as a view, an in-place write through the view must reach the
base and give the gradients torch gives, or fail where torch fails, with
torch's exception class.

The scenario, on both libraries: ``y = op(*inputs)``; ``view(y).mul_(3)``;
``(y * w).sum()`` differentiated with respect to the inputs. A view that is
secretly a copy leaves ``y`` unchanged and loses the factor 3 in the
gradient: the bug this file exists for (``y[1]`` of a 1-d tensor once gave
a NumPy scalar, a copy)."""
import os
import sys

import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ops"))

from op_samples import DIFF_OPS, make_tensors, torch_tensors  # noqa: E402

pytestmark = pytest.mark.oracle

# name -> (view of y, the least ndim it needs); the same spelling on both libraries
VIEWS = {
    "index_first": (lambda t: t[0], 1),
    "index_last": (lambda t: t[-1], 1),
    "index_all_dims": (lambda t: t[(0,) * t.dim()], 1),
    "slice": (lambda t: t[1:], 1),
    "ellipsis_index": (lambda t: t[..., 0], 1),
    "none_index": (lambda t: t[None], 0),
    "select": (lambda t: t.select(0, 0), 1),
    "narrow": (lambda t: t.narrow(0, 0, 1), 1),
    "unbind": (lambda t: t.unbind(0)[0], 1),
    "split": (lambda t: t.split(1)[0], 1),
    "chunk": (lambda t: t.chunk(2)[-1], 1),
    "diagonal": (lambda t: t.diagonal(), 2),
    "transpose": (lambda t: t.transpose(0, -1), 1),
    "movedim": (lambda t: t.movedim(0, -1), 1),
    "unflatten": (lambda t: t.unflatten(0, (1, t.shape[0])), 1),
    "unsqueeze": (lambda t: t.unsqueeze(0), 0),
    "view_flat": (lambda t: t.view(-1), 0),
    "view_as_is": (lambda t: t.view_as(t) if hasattr(t, "view_as") else t.view(t.shape), 0),
    "nested": (lambda t: t.unsqueeze(0)[0][..., :1], 1),
}


# Ops whose backward reads their own result where torch's reads the input
# (or indices): an in-place write into the result makes retrograd refuse at
# backward (the saved-tensor version check) where torch computes. Refusing
# is never a wrong gradient; each is kept for a faster backward.
SAVES_RESULT = {
    "softplus": "sigmoid(beta * x) from the output: 3 ufunc calls instead of 7",
    "max_pool2d": "the window maxima located by comparing with the output, not stored indices",
}


def _first_float_sample(op):
    for sample in op.samples():
        if sample.diff_positions():
            return sample
    return None


def _cases():
    out = []
    for op in DIFF_OPS:
        sample = _first_float_sample(op)
        if sample is None:
            continue
        for name in VIEWS:
            out.append(pytest.param(op, sample, name, id=f"{op.name}-{name}"))
    return out


def _run(lib, op, sample, view_name, clone=False):
    """(outcome, y after the write, gradients) of the scenario on ``lib``.
    With ``clone``, y is a C-ordered copy of the op's result: torch's answer
    without the in-place checks on what the op saved (the true gradient)."""
    args, leaves = torch_tensors(torch, sample) if lib is torch else make_tensors(sample)
    y = op.torch_call(torch, *args, **sample.kwargs) if lib is torch else op.op(*args, **sample.kwargs)
    if isinstance(y, (tuple, list)):
        y = y[0]
    if clone:
        y = y.clone().contiguous()
    view, min_ndim = VIEWS[view_name]
    if not y.dtype.is_floating_point if lib is torch else y.dtype.kind != "f":
        return ("skip", "integer output")
    if y.dim() < min_ndim or (y.dim() and y.shape[0] == 0):
        return ("skip", "too few dims")
    w = lib.tensor(np.random.default_rng(3).standard_normal(tuple(y.shape)).astype(
        np.float64 if y.dtype in (torch.float64, np.float64) else np.float32))
    try:
        v = view(y)
        v.mul_(3.0)
        loss = (y * w).sum()
        grads = lib.autograd.grad(loss, leaves, allow_unused=True)
    except Exception as exc:  # noqa: BLE001 - the class is what is compared
        return (type(exc).__name__, str(exc))
    arr = (lambda t: t.detach().numpy()) if lib is torch else (lambda t: t.detach().numpy())
    return ("ok", arr(y), [None if g is None else arr(g) for g in grads])


@pytest.mark.parametrize("op,sample,view_name", _cases())
def test_write_through_view_matches_torch(op, sample, view_name):
    ref = _run(torch, op, sample, view_name)
    if ref[0] == "skip":
        pytest.skip(ref[1])
    got = _run(rg, op, sample, view_name)
    where = f"{op.name} {sample} {view_name}"
    if got[0] != "ok":
        # refusing is right only where torch refuses too
        if op.name in SAVES_RESULT and "modified by an inplace operation" in got[1]:
            return
        assert got[0] == ref[0], f"{where}: retrograd raised {got}, torch gave {ref[0]}: {ref[1:]}"
        return
    # retrograd computed: it must be the true gradient. torch may refuse here
    # because it saved the op's result for its backward where retrograd does
    # not (lstsq), so the truth is torch's answer on a copy of the result.
    true = ref if ref[0] == "ok" else _run(torch, op, sample, view_name, clone=True)
    assert true[0] == "ok", f"{where}: retrograd computed {got}, but torch refuses even on a copy: {true}"
    np.testing.assert_allclose(got[1], true[1], rtol=1e-10, atol=1e-12,
                               err_msg=f"{where}: the write did not reach the base")
    for i, (g, tg) in enumerate(zip(got[2], true[2])):
        if g is None or tg is None:
            assert not np.any(g if tg is None else tg), (where, i)
            continue
        np.testing.assert_allclose(g, tg, rtol=1e-9, atol=1e-12, err_msg=f"{where}: gradient {i}")


# -- the views torch reports as views are views here -------------------------

@pytest.mark.parametrize("view_name", [n for n in VIEWS])
def test_is_view_and_base_answer_as_torch(view_name):
    view, min_ndim = VIEWS[view_name]
    for shape in [(3,), (2, 3), (4, 1, 2)]:
        if len(shape) < min_ndim:
            continue
        data = np.arange(float(np.prod(shape))).reshape(shape)
        tx, x = torch.tensor(data), rg.tensor(data)
        tv, v = view(tx), view(x)
        assert v._is_view() == tv._is_view(), (view_name, shape)
        assert (v._base is x) == (tv._base is tx), (view_name, shape)
        assert isinstance(v, rg.Tensor) and tuple(v.shape) == tuple(tv.shape)


def test_zero_dim_element_is_a_view_that_writes_through():
    x = rg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = rg.tensor([1.0, 10.0, 100.0])
    y = x.clone()
    e = y[1]
    assert e.dim() == 0 and e._base is y
    e.mul_(3)
    assert y.tolist() == [1.0, 6.0, 3.0]
    (y * w).sum().backward()
    assert x.grad.tolist() == [1.0, 30.0, 100.0]
