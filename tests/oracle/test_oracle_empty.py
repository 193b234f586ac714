"""Empty tensors (a zero-size dimension) through every op of the sample
registry, against torch: same result shape, dtype and values (sum -> 0,
prod -> 1, mean -> nan, ...), gradients of the inputs' shapes equal to
torch's, finite differences (trivial over 0 elements, not over a non-empty
result), and where torch raises, an error of the same type."""
import os
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ops"))

import retrograd as rg  # noqa: E402
import opcheck  # noqa: E402
from op_samples import OP_DB, make_tensors, torch_tensors  # noqa: E402
from op_samples_empty import all_empty_samples, empty_samples  # noqa: E402
from _arrays import values  # noqa: E402

pytestmark = pytest.mark.oracle


def _torch_args(sample):
    return torch_tensors(torch, sample)


def _error_type(exc):
    # torch.linalg.LinAlgError and friends are RuntimeErrors
    for t in (IndexError, ValueError, TypeError, RuntimeError):
        if isinstance(exc, t):
            return t
    return type(exc)


def test_most_ops_get_empty_samples():
    from op_samples_empty import SKIP
    without = [op.name for op in OP_DB if not empty_samples(op) and op.name not in SKIP]
    # only ops whose samples have no array argument of rank >= 1
    for name in without:
        op = next(o for o in OP_DB if o.name == name)
        assert not any(isinstance(a, np.ndarray) and a.ndim for s in op.samples() for a in s.args), name


@pytest.mark.parametrize("op,sample", all_empty_samples(OP_DB))
def test_empty_inputs_match_torch(op, sample):
    tin, tleaves = _torch_args(sample)
    try:
        ref = op.torch_call(torch, *tin, **sample.kwargs)
    except Exception as exc:                     # torch rejects it: so must retrograd
        targs, _ = make_tensors(sample)
        want = _error_type(exc)
        if op.name == "getitem" and "index_select(): self indexing axis dim should be positive" in str(exc):
            # torch's one quirk here: an out-of-range advanced index into an
            # empty dim is a RuntimeError (from its index_select), an
            # IndexError otherwise; retrograd (and NumPy) say IndexError.
            # rg.index_select itself raises torch's RuntimeError.
            want = IndexError
        with pytest.raises(want):
            op.op(*targs, **sample.kwargs)
        return
    targs, leaves = make_tensors(sample)
    out = op.op(*targs, **sample.kwargs)
    r = ref.detach().numpy()
    assert tuple(out.shape) == r.shape, f"{op.name} {sample}: shape {out.shape} vs torch {r.shape}"
    assert out.dtype == r.dtype, f"{op.name} {sample}: dtype {out.dtype} vs torch {r.dtype}"
    np.testing.assert_allclose(values(out), r, rtol=1e-12, atol=1e-12, equal_nan=True)
    if not (op.differentiable and leaves):
        return
    assert out.requires_grad
    v = np.random.default_rng(5).standard_normal(r.shape).astype(r.dtype)
    grads = rg.autograd.grad(out, leaves, grad_outputs=rg.from_numpy(v), allow_unused=True)
    tgrads = torch.autograd.grad(ref, tleaves, grad_outputs=torch.from_numpy(v), allow_unused=True)
    for i, (g, tg) in enumerate(zip(grads, tgrads)):
        want = np.zeros(tuple(tleaves[i].shape)) if tg is None else tg.detach().numpy(force=True)
        got = np.zeros(leaves[i].shape) if g is None else values(g)
        assert got.shape == want.shape == tuple(leaves[i].shape)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, equal_nan=True,
                                   err_msg=f"{op.name} {sample}: gradient {i} vs torch")
    if not np.isnan(r).any():
        opcheck.check_grad(op, sample)
