"""rg.autograd.gradcheck / gradgradcheck: pass on correct gradients, catch
wrong ones (slow and fast mode), torch's options and errors."""
import re

import sys

import numpy as np
import pytest
import torch

import retrograd as rg
from retrograd.autograd import GradcheckError, gradcheck, gradgradcheck


def _x(*shape, seed=0, requires_grad=True):
    rng = np.random.default_rng(seed)
    return rg.tensor(rng.uniform(-1.0, 1.0, shape), requires_grad=requires_grad)


FAST = [False, True]


# --- correct gradients pass ---------------------------------------------------------

@pytest.mark.parametrize("fast_mode", FAST)
def test_passes_on_correct_ops(fast_mode):
    x, y = _x(3, 4, seed=1), _x(4, seed=2)
    assert gradcheck(lambda a: a.sin() * a, (x,), fast_mode=fast_mode)
    assert gradcheck(lambda a, b: (a * b).tanh().sum(dim=0), (x, y), fast_mode=fast_mode)
    assert gradcheck(lambda a, b: a @ b, (x, y), fast_mode=fast_mode)
    assert gradcheck(lambda a: a.exp().mean(), x, fast_mode=fast_mode)      # a bare tensor input


@pytest.mark.parametrize("fast_mode", FAST)
def test_several_outputs_non_tensor_outputs_and_constant_inputs(fast_mode):
    x = _x(2, 3, seed=3)
    c = _x(3, seed=4, requires_grad=False)                 # an input that does not require grad
    def f(a, k, b):
        return a * b, 7, (a + b).sigmoid(), "tag", a.detach()
    assert gradcheck(f, (x, 2, c), fast_mode=fast_mode, check_batched_grad=True)


def test_no_differentiable_output():
    x = _x(3)
    assert gradcheck(lambda a: rg.tensor(np.ones(3)), (x,))
    assert gradcheck(lambda a: rg.tensor(np.ones(3)), (x,), fast_mode=True)
    # outputs that change with the input but do not require grad: the
    # numerical gradient must be zero (as in torch)
    for fast_mode in FAST:
        with pytest.raises(GradcheckError, match="Numerical gradient for function expected to be zero"):
            gradcheck(lambda a: a.detach() * 2.0, (x,), fast_mode=fast_mode)


def test_inputs_left_untouched():
    x = _x(3, 2)
    before = np.asarray(x._array).copy()
    v = x._version
    gradcheck(lambda a: (a * a).sum(), (x,))
    gradcheck(lambda a: (a * a).sum(), (x,), fast_mode=True)
    np.testing.assert_array_equal(np.asarray(x._array), before)
    assert x._version == v and x.grad is None


# --- wrong gradients are caught -----------------------------------------------------

def _wrong_sin(a):
    # a deliberately wrong backward: the gradient through y is scaled by 1.1
    y = a.sin()
    y.register_hook(lambda g: g * 1.1)
    return y * 2.0


@pytest.mark.parametrize("fast_mode", FAST)
def test_catches_wrong_backward(fast_mode):
    x = _x(2, 3, seed=5)
    with pytest.raises(GradcheckError) as info:
        gradcheck(_wrong_sin, (x,), fast_mode=fast_mode)
    msg = str(info.value)
    assert isinstance(info.value, RuntimeError)
    assert "Jacobian mismatch for output 0 with respect to input 0" in msg
    assert "numerical" in msg and "analytical" in msg
    # the worst entries name their indices and both values: analytical = 1.1 * numerical
    m = re.search(r"input index \((\d+), (\d+)\), output index \((\d+), (\d+)\): numerical "
                  r"(\S+), analytical (\S+), difference", msg)
    assert m, msg
    i, j, k, l = map(int, m.groups()[:4])
    assert (i, j) == (k, l)                               # elementwise: the diagonal
    num = float(m.group(5).rstrip(","))
    ana = float(m.group(6).rstrip(","))
    true = 2.0 * np.cos(np.asarray(x._array)[i, j])
    assert num == pytest.approx(true, rel=1e-6)
    assert ana == pytest.approx(1.1 * true, rel=1e-9)
    if fast_mode:
        assert "slow mode" in msg
    assert gradcheck(_wrong_sin, (x,), fast_mode=fast_mode, raise_exception=False) is False


@pytest.mark.parametrize("fast_mode", FAST)
def test_catches_wrong_backward_in_second_input_and_output(fast_mode):
    x, y = _x(3, seed=6), _x(3, seed=7)
    def f(a, b):
        bb = b * 1.0
        bb.register_hook(lambda g: -g)
        return a * 2.0, a * bb
    with pytest.raises(GradcheckError, match="output 1 with respect to input 1"):
        gradcheck(f, (x, y), fast_mode=fast_mode)


def test_nondeterministic_backward():
    rng = np.random.default_rng(0)
    def f(a):
        y = a * 1.0
        y.register_hook(lambda g: None if g is None else
                        g * rg.tensor(1.0 + rng.standard_normal(tuple(g.shape)) * 1e-9))
        return y
    x = _x(3)
    with pytest.raises(GradcheckError, match="Backward is not reentrant"):
        gradcheck(f, (x,))
    assert gradcheck(f, (x,), nondet_tol=1e-6)


def test_backward_must_be_linear_in_grad_output():
    def f(a):
        y = a * 1.0
        y.register_hook(lambda g: g + 0.0 * g + (1e-3 if not np.asarray(g._array).any() else 0.0))
        return y
    with pytest.raises(GradcheckError, match="not multiplied by grad_output"):
        gradcheck(f, (_x(3),), check_undefined_grad=False)


def test_batched_grad_check_runs_batched_backward():
    x, w = _x(4, seed=8), _x(3, 4, seed=9)
    assert gradcheck(lambda a, b: (b @ a).tanh() * a.sum(), (x, w), check_batched_grad=True)


# --- gradgradcheck ------------------------------------------------------------------

@pytest.mark.parametrize("fast_mode", FAST)
def test_gradgradcheck_passes(fast_mode):
    x, y = _x(2, 3, seed=10), _x(3, seed=11)
    assert gradgradcheck(lambda a, b: (a * b).tanh(), (x, y), fast_mode=fast_mode)
    assert gradgradcheck(lambda a: (a.exp() * a.sin()).sum(), (x,), fast_mode=fast_mode)
    go = rg.tensor(np.ones((2, 3)), requires_grad=True)
    assert gradgradcheck(lambda a: a * a * a, (x,), (go,), fast_mode=fast_mode,
                         gen_non_contig_grad_outputs=True)
    assert gradgradcheck(lambda a: a * a, (x,), gen_non_contig_grad_outputs=True)


def _wrong_second_derivative(a):
    # The value of the hook's result is g (first derivatives are right), but
    # in the create_graph pass its derivative with respect to g is 1.5, not 1.
    y = a * a
    # (a hook is called with None when no gradient reaches it, as in torch:
    # gradcheck's undefined-grad check does that)
    y.register_hook(lambda g: None if g is None else g + (g - g.detach()) * 0.5)
    return y


@pytest.mark.parametrize("fast_mode", FAST)
def test_gradgradcheck_catches_wrong_second_derivative(fast_mode):
    x = _x(3, seed=12)
    assert gradcheck(_wrong_second_derivative, (x,), fast_mode=fast_mode)
    with pytest.raises(GradcheckError, match="Jacobian mismatch") as info:
        gradgradcheck(_wrong_second_derivative, (x,), fast_mode=fast_mode)
    assert "analytical" in str(info.value)
    assert gradgradcheck(_wrong_second_derivative, (x,), fast_mode=fast_mode,
                         raise_exception=False) is False


# --- options and errors, as torch ---------------------------------------------------

def test_error_types():
    assert issubclass(GradcheckError, RuntimeError)
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        gradcheck(lambda a: a * 2.0, (_x(3, requires_grad=False),))
    with pytest.raises(ValueError, match="complex"):
        gradcheck(lambda a: a * 2.0, (rg.tensor(np.ones(2, dtype=complex), requires_grad=True),))
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(sys.modules, "retrograd.forward_ad", None)     # as if not installed
        with pytest.raises(RuntimeError, match="retrograd-forward-ad"):
            gradcheck(lambda a: a * 2.0, (_x(3),), check_forward_ad=True)
    with pytest.raises(ValueError, match="check_batched_grad=True requires check_backward_ad"):
        gradcheck(lambda a: a, (_x(3),), check_backward_ad=False, check_forward_ad=True,
                  check_batched_grad=True)
    overlapping = rg.from_numpy(np.broadcast_to(np.ones(3), (2, 3))).requires_grad_()
    with pytest.raises(RuntimeError, match="stride 0"):
        gradcheck(lambda a: a * 2.0, (overlapping,))


def test_float32_input_warns():
    x = rg.tensor(np.ones(3, dtype=np.float32), requires_grad=True)
    with pytest.warns(UserWarning, match="not a double precision"):
        gradcheck(lambda a: a * 2.0, (x,), atol=1e-2, rtol=1e-2, eps=1e-3)


def test_numerical_and_analytical_jacobians_match_torch():
    from retrograd.autograd.gradcheck import get_analytical_jacobian, get_numerical_jacobian
    a = np.random.default_rng(13).uniform(-1, 1, (2, 3))
    x = rg.tensor(a, requires_grad=True)
    f = lambda t: (t.sin() * t.sum(dim=1, keepdim=True))    # noqa: E731
    num = get_numerical_jacobian(f, (x,))[0][0]
    ana = get_analytical_jacobian((x,), f(x))[0]
    tx = torch.tensor(a)
    tj = torch.autograd.functional.jacobian(
        lambda t: t.sin() * t.sum(dim=1, keepdim=True), tx).reshape(6, 6).T.numpy()
    np.testing.assert_allclose(ana, tj, rtol=1e-12, atol=1e-12)   # rows: input, cols: output
    np.testing.assert_allclose(num, tj, rtol=1e-6, atol=1e-8)
