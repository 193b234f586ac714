"""Custom autograd.Functions inside a compiled function are inlined, as
torch.compile inlines them: the ops of their forward join the forward
program, the ops their backward runs join the backward program, and the
results and gradients are eager's. A once_differentiable backward (whose
results must raise when differentiated) and a backward that leaves the
ops (NumPy) break the graph."""
import warnings

import numpy as np
import pytest

import retrograd as rg
import retrograd.compile  # noqa: F401
from retrograd.autograd.function import once_differentiable
from retrograd.compile.exc import Unsupported


class Cube(rg.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x * x


class SplitScale(rg.autograd.Function):
    # two outputs, one of them not differentiable; a non-tensor argument;
    # a saved output; ctx.needs_input_grad read by backward
    @staticmethod
    def forward(ctx, x, w, k):
        y = x * w * k
        mask = (x > 0).double()
        ctx.mark_non_differentiable(mask)
        ctx.save_for_backward(x, w, y)
        ctx.k = k
        return y, mask

    @staticmethod
    def backward(ctx, gy, gmask):
        x, w, y = ctx.saved_tensors
        gx = gy * w * ctx.k if ctx.needs_input_grad[0] else None
        gw = (gy * x * ctx.k).sum(0) if ctx.needs_input_grad[1] else None
        return gx, gw, None


class Passthrough(rg.autograd.Function):
    # returns its input as-is (an alias with the node's history) and scales
    # the gradient, in the setup_context style
    @staticmethod
    def forward(x):
        return x

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass

    @staticmethod
    def backward(ctx, g):
        return g * 0.5


class OnceExp(rg.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.exp()

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x.exp()


class NumpyBackward(rg.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.sin()

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * rg.tensor(np.cos(x.detach().numpy()))


def _x(seed, shape=(4, 3)):
    return rg.tensor(np.random.default_rng(seed).standard_normal(shape), requires_grad=True)


def _same_as_eager(fn, *shapes, calls=3):
    cf = rg.compile(fn, fullgraph=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for seed in range(calls):
            xs = [_x(10 * seed + i, s) for i, s in enumerate(shapes)]
            es = [x.detach().requires_grad_(True) for x in xs]
            out, want = cf(*xs), fn(*es)
            assert out.grad_fn.name() == "CompiledFunctionBackward"
            np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(), rtol=1e-12)
            out.backward()
            want.backward()
            for x, e in zip(xs, es):
                np.testing.assert_allclose(x.grad.numpy(), e.grad.numpy(), rtol=1e-12)
    assert cf.cache_info() == {"compiled": 1, "eager": 0}
    return cf


def test_a_function_saving_its_input_is_inlined():
    _same_as_eager(lambda x: Cube.apply(x.sin()).sum(), (4, 3))


def test_two_outputs_a_non_differentiable_one_and_a_python_argument():
    def fn(x, w):
        y, mask = SplitScale.apply(x, w, 1.5)
        assert not mask.requires_grad
        return (y.tanh() * mask).sum()
    _same_as_eager(fn, (4, 3), (3,))


def test_an_input_returned_as_is_in_setup_context_style():
    _same_as_eager(lambda x: (Passthrough.apply(x * 2) ** 2).sum(), (5,))


def test_second_derivatives_through_an_inlined_function():
    cf = rg.compile(lambda x: Cube.apply(x).sum(), fullgraph=True)
    x = _x(1, (5,))
    (g,) = rg.autograd.grad(cf(x), x, create_graph=True)
    (gg,) = rg.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), 6 * x.detach().numpy(), rtol=1e-12)


def test_a_once_differentiable_backward_breaks_the_graph():
    with pytest.raises(Unsupported, match="autograd.Function:OnceExp"):
        rg.compile(lambda x: OnceExp.apply(x).sum(), fullgraph=True)(_x(0))
    # without fullgraph: eager, and its double backward still raises
    cf = rg.compile(lambda x: (OnceExp.apply(x) ** 2).sum())
    x = _x(0)
    with pytest.warns(RuntimeWarning, match="graph break"):
        y = cf(x)
    (g,) = rg.autograd.grad(y, x, create_graph=True)
    with pytest.raises(RuntimeError, match="once_differentiable"):
        g.sum().backward()


def test_a_backward_through_numpy_runs_eagerly_with_eagers_gradient():
    cf = rg.compile(lambda x: NumpyBackward.apply(x).sum())
    x = _x(0)
    with pytest.warns(RuntimeWarning, match="graph break"):
        cf(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), np.cos(x.detach().numpy()))
    assert cf.cache_info() == {"compiled": 0, "eager": 1}
