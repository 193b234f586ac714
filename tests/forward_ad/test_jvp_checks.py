"""Forward-mode AD checks as torch 2.13: what a custom Function's jvp must
return for view outputs, in-place (mark_dirty) outputs and non-differentiable
outputs; detach_() and tangents; dual tensors given as tangents."""
import numpy as np
import pytest

import retrograd as rg

pytestmark = pytest.mark.requires("retrograd-forward-ad")

fwAD = pytest.importorskip("retrograd.autograd.forward_ad")


def _function(forward, jvp, lib=rg):
    class Fn(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return forward(ctx, x)

        @staticmethod
        def backward(ctx, g):
            return g

    Fn.jvp = staticmethod(jvp)
    return Fn


def _dirty_forward(ctx, x):
    x.mul_(2.0)
    ctx.mark_dirty(x)
    return x


def _dirty_new_forward(ctx, x):
    out = x * 2.0
    ctx.mark_dirty(out)
    return out


def _nondiff_forward(ctx, x):
    out = x * 2.0
    ctx.mark_non_differentiable(out)
    return out


CASES = {
    # name: (forward, jvp, expected error pattern or None)
    "view, jvp returns a view": (lambda ctx, x: x[:2], lambda ctx, g: g[:2], None),
    "view, jvp returns a copy": (lambda ctx, x: x[:2], lambda ctx, g: g[:2].clone(),
                                 "is returning a view .* but the jvp is not returning a view"),
    "input as-is, jvp returns a copy": (lambda ctx, x: x, lambda ctx, g: g * 1.0,
                                        "is returning a view \\(or an input as-is\\)"),
    "dirty, jvp updates the tangent in place": (_dirty_forward, lambda ctx, g: g.mul_(2.0), None),
    "dirty, jvp returns a new tangent": (_dirty_forward, lambda ctx, g: g * 2.0,
                                         "not modifying the forward mode gradients inplace"),
    "dirty output that is not an input": (_dirty_new_forward, lambda ctx, g: g * 2.0,
                                          "Only input Tensors should be given to ctx.mark_dirty"),
    "non-differentiable, jvp returns None": (_nondiff_forward, lambda ctx, g: None, None),
    "non-differentiable, jvp returns a tangent": (_nondiff_forward, lambda ctx, g: g * 2.0,
                                                  "the corresponding forward output is not a "
                                                  "differentiable Tensor"),
    "wrong shape": (lambda ctx, x: x * 2.0, lambda ctx, g: g[:2],
                    "forward gradient that has a different size"),
    "too many tangents": (lambda ctx, x: x * 2.0, lambda ctx, g: (g, g),
                          "invalid number of forward gradients \\(expected 1 but got 2\\)"),
    "not a tensor": (lambda ctx, x: x * 2.0, lambda ctx, g: 1.0,
                     "expected Variable or None \\(got float\\) for grad output 0"),
}


def _run(lib, fwad, forward, jvp):
    fn = _function(forward, jvp, lib)
    with fwad.dual_level():
        primal = lib.tensor([1.0, 2.0, 3.0]) * 1.0
        dual = fwad.make_dual(primal.clone(), lib.tensor([0.5, -1.0, 2.0]))
        out = fn.apply(dual)
        tangent = fwad.unpack_dual(out).tangent
        return None if tangent is None else np.asarray(tangent.detach() if lib is not rg
                                                       else tangent).tolist()


@pytest.mark.parametrize("name", sorted(CASES))
def test_custom_function_jvp_is_checked(name):
    forward, jvp, pattern = CASES[name]
    if pattern is None:
        _run(rg, fwAD, forward, jvp)
    else:
        with pytest.raises(RuntimeError, match=pattern):
            _run(rg, fwAD, forward, jvp)


@pytest.mark.parametrize("name", sorted(CASES))
def test_custom_function_jvp_checks_match_torch(name):
    torch = pytest.importorskip("torch")
    import torch.autograd.forward_ad as torch_fwad
    forward, jvp, _ = CASES[name]

    def outcome(lib, fwad):
        try:
            return ("ok", _run(lib, fwad, forward, jvp))
        except Exception as exc:        # noqa: BLE001
            return (type(exc).__name__, None)

    assert outcome(rg, fwAD) == outcome(torch, torch_fwad)


def test_dirty_jvp_result_is_the_inputs_tangent():
    fn = _function(_dirty_forward, lambda ctx, g: g.mul_(2.0))
    with fwAD.dual_level():
        dual = fwAD.make_dual(rg.tensor([1.0, 2.0]).clone(), rg.tensor([3.0, 4.0]))
        out = fn.apply(dual)
        assert out is dual
        np.testing.assert_array_equal(np.asarray(fwAD.unpack_dual(out).tangent), [6.0, 8.0])


def test_detach_inplace_drops_the_tangent():
    with fwAD.dual_level():
        dual = fwAD.make_dual(rg.tensor([1.0, 2.0]), rg.tensor([3.0, 4.0])) * 2.0
        assert fwAD.unpack_dual(dual).tangent is not None
        dual.detach_()
        assert fwAD.unpack_dual(dual).tangent is None
        assert fwAD.unpack_dual(dual.detach()).tangent is None


def test_detach_inplace_of_make_dual_output_is_a_view_error():
    with fwAD.dual_level():
        dual = fwAD.make_dual(rg.tensor([1.0, 2.0]), rg.tensor([3.0, 4.0]))
        with pytest.raises(RuntimeError, match="Can't detach views in-place"):
            dual.detach_()


def test_a_dual_tensor_cannot_be_a_tangent_of_its_own_level():
    with fwAD.dual_level():
        inner = fwAD.make_dual(rg.tensor([1.0, 2.0]), rg.tensor([3.0, 4.0]))
        with pytest.raises(RuntimeError, match="Setting a forward grad that itself has a forward "
                                               "gradient at the same level0 is not supported"):
            fwAD.make_dual(rg.tensor([0.0, 0.0]), inner)


class Scaled(rg.autograd.Function):
    """Takes a float tensor, an integer tensor and a Python scalar."""

    @staticmethod
    def forward(ctx, x, index, scale):
        return x * scale

    @staticmethod
    def backward(ctx, g):
        return g, None, None

    @staticmethod
    def jvp(ctx, tx, tindex, tscale):
        Scaled.seen = (tindex, tscale)
        return tx * 3.0


def test_jvp_gets_no_tangent_for_non_differentiable_inputs():
    with fwAD.dual_level():
        dual = fwAD.make_dual(rg.tensor([1.0, 2.0]), rg.tensor([3.0, 4.0]))
        out = Scaled.apply(dual, rg.tensor([1, 2]), 3.0)
        np.testing.assert_array_equal(np.asarray(fwAD.unpack_dual(out).tangent), [9.0, 12.0])
    assert Scaled.seen == (None, None)          # torch passes None for both


def test_jvp_gets_zeros_for_a_float_input_without_a_tangent():
    seen = []

    class Mul(rg.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return g, g

        @staticmethod
        def jvp(ctx, tx, ty):
            seen.append((tx, ty))
            return tx * 2.0

    with fwAD.dual_level():
        dual = fwAD.make_dual(rg.tensor([1.0, 2.0]), rg.tensor([3.0, 4.0]))
        Mul.apply(dual, rg.tensor([5.0, 6.0]))
    (tx, ty), = seen
    np.testing.assert_array_equal(np.asarray(ty), [0.0, 0.0])
