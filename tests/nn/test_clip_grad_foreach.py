"""nn.utils.clip_grad_norm_, clip_grad_value_, get_total_norm and
clip_grads_with_norm_ with foreach=None/False/True, against torch 2.13."""
import warnings

import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(29)
SHAPES = [(3, 2), (4,), (2, 2, 2)]


def _params(scale=1.0, dtypes=None):
    grads = [RNG.standard_normal(s) * scale for s in SHAPES]
    if dtypes is not None:
        grads = [g.astype(d) for g, d in zip(grads, dtypes)]
    pr, pt = [], []
    for g in grads:
        a, b = rg.zeros(g.shape, dtype=g.dtype, requires_grad=True), torch.zeros(g.shape, dtype=getattr(
            torch, str(g.dtype)), requires_grad=True)
        a.grad, b.grad = rg.tensor(g.copy()), torch.tensor(g.copy())
        pr.append(a)
        pt.append(b)
    return pr, pt


def _same_grads(pr, pt, rtol=1e-12):
    for a, b in zip(pr, pt):
        if a.grad is None and b.grad is None:
            continue
        assert a.grad.dtype == np.dtype(str(b.grad.dtype).replace("torch.", ""))
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=rtol, atol=1e-14)


@pytest.mark.parametrize("foreach", [None, False, True])
@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, float("inf"), "inf", 0.5])
@pytest.mark.parametrize("max_norm", [0.5, 100.0])
def test_clip_grad_norm_as_torch(foreach, norm_type, max_norm):
    pr, pt = _params()
    na = rg.nn.utils.clip_grad_norm_(pr, max_norm, norm_type, foreach=foreach)
    nb = torch.nn.utils.clip_grad_norm_(pt, max_norm, norm_type, foreach=foreach)
    np.testing.assert_allclose(float(na), float(nb), rtol=1e-12)
    _same_grads(pr, pt)


@pytest.mark.parametrize("foreach", [None, False, True])
def test_mixed_dtypes_and_missing_grads_as_torch(foreach):
    pr, pt = _params(dtypes=[np.float32, np.float64, np.float32])
    pr[1].grad, pt[1].grad = None, None
    na = rg.nn.utils.clip_grad_norm_(pr, 0.1, foreach=foreach)
    nb = torch.nn.utils.clip_grad_norm_(pt, 0.1, foreach=foreach)
    np.testing.assert_allclose(float(na), float(nb), rtol=1e-6)
    _same_grads(pr, pt, rtol=1e-6)
    assert pr[1].grad is None


@pytest.mark.parametrize("foreach", [None, False, True])
def test_clip_grad_value_as_torch(foreach):
    pr, pt = _params(scale=2.0)
    assert rg.nn.utils.clip_grad_value_(pr, 0.7, foreach=foreach) is None
    torch.nn.utils.clip_grad_value_(pt, 0.7, foreach=foreach)
    _same_grads(pr, pt)
    single_r, single_t = _params(scale=2.0)
    rg.nn.utils.clip_grad_value_(single_r[0], 0.3, foreach=foreach)
    torch.nn.utils.clip_grad_value_(single_t[0], 0.3, foreach=foreach)
    _same_grads(single_r[:1], single_t[:1])


@pytest.mark.parametrize("foreach", [None, False, True])
def test_get_total_norm_and_clip_grads_with_norm_as_torch(foreach):
    pr, pt = _params(scale=3.0)
    na = rg.nn.utils.get_total_norm([p.grad for p in pr], 3.0, foreach=foreach)
    nb = torch.nn.utils.get_total_norm([p.grad for p in pt], 3.0, foreach=foreach)
    np.testing.assert_allclose(float(na), float(nb), rtol=1e-12)
    rg.nn.utils.clip_grads_with_norm_(pr, 1.0, na, foreach=foreach)
    torch.nn.utils.clip_grads_with_norm_(pt, 1.0, nb, foreach=foreach)
    _same_grads(pr, pt)
    assert float(rg.nn.utils.get_total_norm([])) == float(torch.nn.utils.get_total_norm([])) == 0.0


@pytest.mark.parametrize("foreach", [None, False, True])
def test_non_finite_norms_as_torch(foreach):
    for bad in (np.nan, np.inf):
        pr, pt = _params()
        pr[0].grad[0, 0] = bad
        pt[0].grad[0, 0] = bad
        for lib, ps in ((torch, pt), (rg, pr)):
            with pytest.raises(RuntimeError, match="is non-finite, so it cannot be clipped"):
                lib.nn.utils.clip_grad_norm_(ps, 1.0, error_if_nonfinite=True, foreach=foreach)
        na = rg.nn.utils.clip_grad_norm_(pr, 1.0, foreach=foreach)
        nb = torch.nn.utils.clip_grad_norm_(pt, 1.0, foreach=foreach)
        assert np.isnan(float(na)) == np.isnan(float(nb)) and np.isinf(float(na)) == np.isinf(float(nb))
        _same_grads(pr, pt)


def test_deprecated_clip_grad_norm_and_empty_generator_as_torch():
    for lib in (torch, rg):
        p = lib.zeros(2, requires_grad=True)
        p.grad = lib.tensor([3.0, 4.0])
        with pytest.warns(FutureWarning, match="clip_grad_norm_"):
            total = lib.nn.utils.clip_grad_norm([p], 1.0)
        assert abs(float(total) - 5.0) < 1e-6
        with pytest.warns(UserWarning, match="empty generator"):
            lib.nn.utils.clip_grad_norm_((q for q in []), 1.0)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            lib.nn.utils.clip_grad_norm_([], 1.0, foreach=True)
