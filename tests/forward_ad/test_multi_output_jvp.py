"""Forward AD of the ops with several results (derivatives.yaml's `-> (...)`
entries, one JVP formula per result): linalg.svd (one SVD, its factors
reused by the JVP), max / min with a dim (indices get no tangent),
linalg.slogdet (the sign's tangent is zero), against torch."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
fwAD = pytest.importorskip("retrograd.forward_ad", reason="needs the retrograd-forward-ad distribution")

import retrograd as rg  # noqa: E402

RNG = np.random.default_rng(16)
F = torch.autograd.forward_ad


def _square(*shape):
    n = shape[-1]
    a = RNG.standard_normal(shape) / (2 * n) + np.eye(n)
    a[..., 0, :] *= -1
    return a


def test_svd_jvp_runs_no_second_svd(monkeypatch):
    calls = []
    real = np.linalg.svd

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)
    monkeypatch.setattr(np.linalg, "svd", counting)
    a, t = RNG.standard_normal((2, 4, 3)), RNG.standard_normal((2, 4, 3))
    with fwAD.dual_level():
        U, S, Vh = rg.linalg.svd(fwAD.make_dual(rg.tensor(a), rg.tensor(t)), full_matrices=False)
        got = np.asarray(fwAD.unpack_dual(S).tangent)
        sv = rg.linalg.svdvals(fwAD.make_dual(rg.tensor(a), rg.tensor(t)))
        np.testing.assert_array_equal(np.asarray(fwAD.unpack_dual(sv).tangent), got)
    assert len(calls) == 2
    with F.dual_level():
        want = F.unpack_dual(torch.linalg.svdvals(F.make_dual(torch.tensor(a), torch.tensor(t)))).tangent
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-10, atol=1e-12)


CASES = {
    "max": (lambda t: rg.max(t, 1).values, lambda: RNG.standard_normal((3, 4))),
    "min": (lambda t: rg.min(t, 1, True).values, lambda: RNG.standard_normal((3, 4))),
    "svd": (lambda t: rg.linalg.svd(t, full_matrices=False).S, lambda: RNG.standard_normal((2, 4, 3))),
    "slogdet": (lambda t: rg.linalg.slogdet(t).logabsdet, lambda: _square(2, 3, 3)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_gradcheck_forward_ad(name):
    fn, make = CASES[name]
    assert rg.autograd.gradcheck(fn, (rg.tensor(make(), requires_grad=True),), check_forward_ad=True)


def test_max_dim_forward_ad_matches_torch():
    a, t = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))
    with fwAD.dual_level():
        v, i = rg.max(fwAD.make_dual(rg.tensor(a), rg.tensor(t)), 1)
        got = np.asarray(fwAD.unpack_dual(v).tangent)
        assert fwAD.unpack_dual(i).tangent is None
    with torch.autograd.forward_ad.dual_level():
        tv, ti = torch.max(torch.autograd.forward_ad.make_dual(torch.tensor(a), torch.tensor(t)), 1)
        want = torch.autograd.forward_ad.unpack_dual(tv).tangent.numpy()
        assert torch.autograd.forward_ad.unpack_dual(ti).tangent is None
    np.testing.assert_array_equal(got, want)


def test_slogdet_forward_ad_matches_torch():
    a, t = _square(3, 3), RNG.standard_normal((3, 3))
    with fwAD.dual_level():
        s, l = rg.linalg.slogdet(fwAD.make_dual(rg.tensor(a), rg.tensor(t)))
        got = [fwAD.unpack_dual(s).tangent, fwAD.unpack_dual(l).tangent]
        got = [np.asarray(g) for g in got]
    with F.dual_level():
        ts, tl = torch.linalg.slogdet(F.make_dual(torch.tensor(a), torch.tensor(t)))
        # (torch's sign tangent is a ZeroTensor: added to real zeros to read it)
        want = [torch.zeros(ts.shape, dtype=ts.dtype).add(F.unpack_dual(ts).tangent).numpy(),
                F.unpack_dual(tl).tangent.numpy()]
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12)
