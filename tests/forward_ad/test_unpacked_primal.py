"""The primal that unpack_dual returns carries no tangent at the level it was
unpacked at (torch's _fw_primal: a view of the dual tensor that is not
forward-differentiable), while views of dual tensors made by the user keep
following their base's tangent. Nested levels (retrograd's own): the primal
keeps its tangents of the other levels."""
import numpy as np
import pytest

fwAD = pytest.importorskip("retrograd.forward_ad", reason="needs the retrograd-forward-ad distribution")

import retrograd as rg  # noqa: E402


def _np(t):
    return None if t is None else np.asarray(t.detach().numpy())


@pytest.fixture(autouse=True)
def _no_level_left():
    yield
    assert fwAD._dual._active_levels() == [], "a test left a dual level active"


def _programs(fw, lib):
    """What each case reads, as (primal values, tangent values or None)."""
    out = {}
    with fw.dual_level():
        d = fw.make_dual(lib.tensor([1.0, 2.0, 3.0]), lib.tensor([1.0, 0.5, -1.0]))
        y = d * 2
        p, t = fw.unpack_dual(y)
        out["primal"] = fw.unpack_dual(p)
        out["tangent"] = (t, None)
        out["op_on_primal"] = fw.unpack_dual(p * 3 + 1)
        out["view_of_primal"] = fw.unpack_dual(p.view(3, 1))
        out["slice_of_primal"] = fw.unpack_dual(p[1:])
        out["view_of_view_of_primal"] = fw.unpack_dual(p[1:].view(1, 2)[0])
        out["expand_of_primal"] = fw.unpack_dual(p[:1].expand(3))
        out["primal_of_make_dual"] = fw.unpack_dual(fw.unpack_dual(d).primal)
        out["user_view_of_dual"] = fw.unpack_dual(y.view(3, 1))
        out["user_slice_of_dual"] = fw.unpack_dual(y[1:])
        out["primal_of_user_view"] = fw.unpack_dual(fw.unpack_dual(y[1:]).primal)
        out["dual_after_unpack"] = fw.unpack_dual(y)
        q = fw.unpack_dual(d * 2).primal
        q.mul_(d)
        out["inplace_on_primal"] = fw.unpack_dual(q)
        z = d * 1
        zp = fw.unpack_dual(z).primal
        z.mul_(3)
        out["primal_after_base_inplace"] = fw.unpack_dual(zp)
        out["base_after_base_inplace"] = fw.unpack_dual(z)
    return {k: (_np(v[0]), _np(v[1])) for k, v in out.items()}


@pytest.mark.oracle
def test_unpacked_primals_and_views_like_torch():
    torch = pytest.importorskip("torch")
    ours = _programs(fwAD, rg)
    theirs = _programs(torch.autograd.forward_ad, torch)
    assert ours.keys() == theirs.keys()
    for k in ours:
        (op, ot), (tp, tt) = ours[k], theirs[k]
        np.testing.assert_allclose(op, tp, err_msg=k)
        assert (ot is None) == (tt is None), f"{k}: tangent {ot} here, {tt} in torch"
        if tt is not None:
            np.testing.assert_allclose(ot, tt, err_msg=k)


def test_primal_has_no_tangent():
    with fwAD.dual_level():
        d = fwAD.make_dual(rg.tensor([1.0, 2.0]), rg.tensor([1.0, 1.0]))
        p, t = fwAD.unpack_dual(d * 2)
        assert "tangent" not in repr(p)
        assert fwAD.unpack_dual(p).tangent is None
        assert fwAD.unpack_dual(p * 3).tangent is None
        assert fwAD.unpack_dual(p.view(2, 1)).tangent is None
        np.testing.assert_allclose(_np(t), [2.0, 2.0])
        # the dual tensor itself is untouched
        np.testing.assert_allclose(_np(fwAD.unpack_dual(d * 2).tangent), [2.0, 2.0])
        # and NumPy's functions take the primal as a plain tensor
        np.testing.assert_allclose(np.sin(p), np.sin([2.0, 4.0]))


def test_primal_stays_differentiable_in_reverse_mode():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, rg.tensor([1.0, 1.0]))
        p = fwAD.unpack_dual(d * d).primal
        (p * 3).sum().backward()
    np.testing.assert_allclose(_np(x.grad), [6.0, 12.0])


@pytest.mark.parametrize("kept, unpacked", [(0, 1), (1, 0)])
def test_nested_primal_keeps_the_other_levels_tangent(kept, unpacked):
    a = rg.tensor([1.0, 2.0])
    tangents = {0: rg.tensor([1.0, 0.0]), 1: rg.tensor([0.0, 1.0])}
    with fwAD.dual_level(), fwAD.dual_level():
        x = fwAD.make_dual(a, tangents[0], level=0)
        x = fwAD.make_dual(x, tangents[1], level=1)
        y = x * x
        p = fwAD.unpack_dual(y, level=unpacked).primal
        assert fwAD.unpack_dual(p, level=unpacked).tangent is None
        assert fwAD.unpack_dual(p * 2, level=unpacked).tangent is None
        expected = 2 * _np(a) * _np(tangents[kept])
        np.testing.assert_allclose(_np(fwAD.unpack_dual(p, level=kept).tangent), expected)
        np.testing.assert_allclose(_np(fwAD.unpack_dual(p * 2, level=kept).tangent), 2 * expected)
        np.testing.assert_allclose(_np(fwAD.unpack_dual(p[1:], level=kept).tangent), expected[1:])
        # the dual tensor keeps both
        for lvl in (0, 1):
            np.testing.assert_allclose(_np(fwAD.unpack_dual(y, level=lvl).tangent),
                                       2 * _np(a) * _np(tangents[lvl]))


@pytest.mark.oracle
def test_jvp_and_forward_jacobian_unchanged():
    torch = pytest.importorskip("torch")

    def f(lib):
        return lambda x: (x * x).view(2, 2).sum(0).exp()

    x = np.array([0.1, -0.2, 0.3, 0.4])
    v = np.array([1.0, 2.0, -1.0, 0.5])
    _, ours = rg.autograd.functional.jvp(f(rg), rg.tensor(x), rg.tensor(v))
    _, theirs = torch.autograd.functional.jvp(f(torch), torch.tensor(x), torch.tensor(v))
    np.testing.assert_allclose(_np(ours), theirs.numpy(), rtol=1e-12)
    # torch's forward-mode jacobian needs vectorize=True (a batched level here)
    jo = rg.autograd.functional.jacobian(f(rg), rg.tensor(x), strategy="forward-mode", vectorize=True)
    jt = torch.autograd.functional.jacobian(f(torch), torch.tensor(x), strategy="forward-mode", vectorize=True)
    np.testing.assert_allclose(_np(jo), jt.numpy(), rtol=1e-12)
