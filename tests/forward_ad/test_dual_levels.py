"""Dual levels and dual tensors: the API of retrograd.forward_ad against
torch.autograd.forward_ad, nesting (retrograd's own), tangents through views
and in-place ops, and the slot being empty whenever no level is active."""
import gc
import weakref

import numpy as np
import pytest

fwAD = pytest.importorskip("retrograd.forward_ad", reason="needs the retrograd-forward-ad distribution")
torch = pytest.importorskip("torch")
tfw = torch.autograd.forward_ad

import retrograd as rg  # noqa: E402
from retrograd.core import abi  # noqa: E402


def A(x):
    return np.asarray(x.detach().numpy() if hasattr(x, "numpy") and not isinstance(x, rg.Tensor) else x)


@pytest.fixture(autouse=True)
def _no_level_left():
    yield
    assert fwAD._dual._active_levels() == [], "a test left a dual level active"
    assert not abi._slot_status()["forward_grad"]


def test_dual_level_yields_index_and_empties_the_slot():
    assert not abi._slot_status()["forward_grad"]
    with fwAD.dual_level() as lvl:
        assert lvl == 0
        assert abi._slot_status()["forward_grad"]
    assert not abi._slot_status()["forward_grad"]
    with fwAD.dual_level() as lvl2:          # indexes are reused, as torch's
        assert lvl2 == 0


def test_make_dual_unpack_dual_like_torch():
    x = np.array([0.5, -1.0, 2.0])
    v = np.array([1.0, 2.0, 3.0])
    with fwAD.dual_level():
        tg = rg.tensor(v)
        d = fwAD.make_dual(rg.tensor(x), tg)
        u = fwAD.unpack_dual(d)
        assert isinstance(u, fwAD.UnpackedDualTensor) and u._fields == ("primal", "tangent")
        assert u.tangent is tg                  # stored as given (same layout)
        np.testing.assert_array_equal(np.asarray(u.primal), x)
        assert fwAD.unpack_dual(u.primal).tangent is None
        y = rg.exp(d) * d
        got = np.asarray(fwAD.unpack_dual(y).tangent)
    with tfw.dual_level():
        td = tfw.make_dual(torch.tensor(x), torch.tensor(v))
        want = tfw.unpack_dual(torch.exp(td) * td).tangent.numpy()
    np.testing.assert_allclose(got, want, rtol=1e-14)
    # outside any level: no tangent
    assert fwAD.unpack_dual(y).tangent is None


def test_errors_match_torch():
    x = rg.randn(3)
    with pytest.raises(RuntimeError, match="no level exists, make sure to enter_dual_level"):
        fwAD.make_dual(x, rg.ones(3))
    with pytest.raises(RuntimeError, match="no dual level is active"):
        fwAD.exit_dual_level()
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match=r"different size .* size \[3\] .* size \[4\]"):
            fwAD.make_dual(x, rg.ones(4))
        with pytest.raises(ValueError, match="Expected tangent to be floating point"):
            fwAD.make_dual(x, rg.tensor(np.ones(3, dtype=np.int64)))
        with pytest.raises(ValueError, match="Expected primal to be floating point"):
            fwAD.make_dual(rg.tensor(np.ones(3, dtype=np.int64)), rg.ones(3))
        with pytest.raises(TypeError, match="tangent"):
            fwAD.make_dual(x, np.ones(3))
        with pytest.raises(RuntimeError, match="level 3 is not active"):
            fwAD.make_dual(x, rg.ones(3), level=3)
        outer = fwAD.enter_dual_level()
        inner = fwAD.enter_dual_level()
        with pytest.raises(RuntimeError, match="not the innermost"):
            fwAD.exit_dual_level(level=outer)
        fwAD.exit_dual_level(level=inner)
        fwAD.exit_dual_level()


def test_exit_drops_tangents():
    x = rg.randn(4)
    with fwAD.dual_level():
        tg = rg.ones(4)
        ref = weakref.ref(tg)
        d = fwAD.make_dual(x, tg)
        y = d * 2
        assert fwAD.unpack_dual(y).tangent is not None
        del tg
    gc.collect()
    assert ref() is None, "the level's tangent outlived the level"
    with fwAD.dual_level():
        # a new level with the same index does not see the old tangents
        assert fwAD.unpack_dual(y).tangent is None
        assert fwAD.unpack_dual(d).tangent is None


def test_nested_levels_default_to_innermost_and_never_mix():
    x = rg.tensor([1.5, 2.0])
    with fwAD.dual_level() as outer:
        with fwAD.dual_level() as inner:
            assert (outer, inner) == (0, 1)
            a = fwAD.make_dual(x, rg.tensor([1.0, 0.0]), level=outer)
            b = fwAD.make_dual(a, rg.tensor([0.0, 1.0]))      # innermost by default
            y = b * b
            np.testing.assert_allclose(np.asarray(fwAD.unpack_dual(y, level=outer).tangent), [3.0, 0.0])
            np.testing.assert_allclose(np.asarray(fwAD.unpack_dual(y, level=inner).tangent), [0.0, 4.0])
            # the inner tangent's outer tangent: d/d(outer) of 2*x*v_inner
            t_inner = fwAD.unpack_dual(y, level=inner).tangent
            np.testing.assert_allclose(np.asarray(fwAD.unpack_dual(t_inner, level=outer).tangent), [0.0, 0.0])
            z = b * b * b      # d2/(d outer d inner) of x^3 = 6x * v_o * v_i (all zero here)
            tz = fwAD.unpack_dual(z, level=inner).tangent
            assert fwAD.unpack_dual(tz, level=outer).tangent is not None


@pytest.mark.parametrize("x0", [-2.0, 0.0, 0.7, 3.0])
def test_perturbation_confusion(x0):
    # d/dx [x * d/dy (x + y)] at any x is 1 (Siskind & Pearlmutter): with one
    # shared tangent slot it comes out as 2.
    def d(f, at):
        with fwAD.dual_level():
            out = f(fwAD.make_dual(at, rg.ones_like(at)))
            return fwAD.unpack_dual(out).tangent

    x = rg.tensor(x0)
    y = rg.tensor(1.25)
    got = d(lambda xd: xd * d(lambda yd: xd + yd, y), x)
    assert float(got) == 1.0


def test_nested_jvp_gives_second_derivative():
    # d/dx (d/dx sin(x)) = -sin(x), with two levels
    x0 = np.array([0.3, 1.1, -2.0])
    with fwAD.dual_level() as outer:
        xo = fwAD.make_dual(rg.tensor(x0), rg.ones(3), level=outer)
        with fwAD.dual_level() as inner:
            xi = fwAD.make_dual(xo, rg.ones(3), level=inner)
            first = fwAD.unpack_dual(rg.sin(xi), level=inner).tangent
        second = fwAD.unpack_dual(first, level=outer).tangent
    np.testing.assert_allclose(np.asarray(first.detach()), np.cos(x0), rtol=1e-14)
    np.testing.assert_allclose(np.asarray(second), -np.sin(x0), rtol=1e-14)


# --- views and in-place ops, against torch --------------------------------------------

def _both(fn):
    """Run fn(lib, fw, make) in retrograd and torch; return both results' arrays."""
    with fwAD.dual_level():
        r = fn(rg, fwAD, lambda a: rg.tensor(np.array(a, dtype=np.float64)))
        r = [None if v is None else np.asarray(v) for v in r]
    with tfw.dual_level():
        t = fn(torch, tfw, lambda a: torch.tensor(np.array(a, dtype=np.float64)))
        t = [None if v is None else v.detach().numpy() for v in t]
    return r, t


def _check(fn):
    r, t = _both(fn)
    assert len(r) == len(t)
    for a, b in zip(r, t):
        if b is None:
            assert a is None or not np.any(a)
        else:
            assert a is not None
            np.testing.assert_allclose(a, b, rtol=1e-14, atol=1e-14)


def test_view_of_dual_has_view_of_tangent():
    def fn(lib, fw, mk):
        d = fw.make_dual(mk(np.arange(6.0).reshape(2, 3)), mk(np.arange(6.0).reshape(2, 3) * 10))
        v = d[1]
        vt = d.transpose(0, 1)
        return [fw.unpack_dual(v).tangent, fw.unpack_dual(vt).tangent, fw.unpack_dual(d[:, ::2]).tangent]
    _check(fn)


def test_inplace_on_view_updates_base_tangent():
    def fn(lib, fw, mk):
        base = mk(np.zeros((2, 3)))
        v = base[0]
        v.copy_(fw.make_dual(mk([1.0, 2.0, 3.0]), mk([2.0, 2.0, 2.0])))
        return [fw.unpack_dual(base).tangent, fw.unpack_dual(v).tangent]
    _check(fn)


def test_inplace_on_view_of_dual():
    def fn(lib, fw, mk):
        b = fw.make_dual(mk(np.zeros((2, 3))), mk(np.arange(6.0).reshape(2, 3)))
        v = b[1]
        v.mul_(3)
        w = b[:, 1]
        w.add_(fw.make_dual(mk([1.0, 1.0]), mk([5.0, 7.0])))
        return [fw.unpack_dual(b).tangent, fw.unpack_dual(v).tangent, fw.unpack_dual(w).tangent]
    _check(fn)


def test_view_created_before_the_base_got_a_tangent():
    def fn(lib, fw, mk):
        base = mk(np.ones((3, 2)))
        col = base[:, 1]                      # exists before base has a tangent
        base.mul_(fw.make_dual(mk(np.full((3, 2), 2.0)), mk(np.arange(6.0).reshape(3, 2))))
        return [fw.unpack_dual(col).tangent, fw.unpack_dual(base).tangent]
    _check(fn)


def test_inplace_ops_and_setitem():
    def fn(lib, fw, mk):
        x = fw.make_dual(mk([1.0, 2.0, 3.0]), mk([1.0, 1.0, 1.0]))
        y = x * 1
        y.exp_()
        y += x
        y[0] = fw.make_dual(mk(5.0), mk(9.0))
        z = x * 1
        z.zero_()
        w = x * 1
        w.fill_(2.0)
        return [fw.unpack_dual(y).tangent, fw.unpack_dual(z).tangent, fw.unpack_dual(w).tangent]
    _check(fn)


def test_inplace_with_graph_recording():
    # an in-place op that also records a backward graph keeps both right
    x0 = np.array([0.5, 1.5])
    with fwAD.dual_level():
        p = rg.tensor(x0, requires_grad=True)
        d = fwAD.make_dual(p, rg.tensor([1.0, -1.0]))
        y = d * 2
        y.sin_()
        tangent = np.asarray(fwAD.unpack_dual(y).tangent)
        y.sum().backward()
    np.testing.assert_allclose(tangent, 2 * np.cos(2 * x0) * [1.0, -1.0], rtol=1e-14)
    np.testing.assert_allclose(np.asarray(p.grad), 2 * np.cos(2 * x0), rtol=1e-14)


def test_dual_through_numpy_protocol():
    with fwAD.dual_level():
        d = fwAD.make_dual(rg.tensor([1.0, 2.0]), rg.tensor([1.0, 1.0]))
        y = np.exp(d)                          # dispatches to rg.exp: the tangent follows
        np.testing.assert_allclose(np.asarray(fwAD.unpack_dual(y).tangent), np.exp([1.0, 2.0]))
        with pytest.raises(TypeError, match="numpy.frexp"):
            np.frexp(d)


def test_tangent_layout_follows_primal():
    with fwAD.dual_level():
        tg = rg.tensor(np.ones((3, 2)).T)      # F-ordered tangent, C-ordered primal
        d = fwAD.make_dual(rg.zeros(2, 3), tg)
        t = fwAD.unpack_dual(d).tangent
        assert t is not tg and np.asarray(t).flags.c_contiguous


def test_no_level_costs_nothing_on_the_graph():
    x = rg.randn(3, requires_grad=True)
    y = (x * 2).sum()
    assert y.grad_fn is not None
    assert not abi._slot_status()["forward_grad"]
