"""gradcheck's own checks as torch 2.13's: undefined output gradients,
outputs whose shape or dtype depends on the input's values, functions that
read their input through a closure, nondeterministic backward, and grad-mode
decorators on classes."""
import warnings

import numpy as np
import pytest

import retrograd as rg
from retrograd.autograd import GradcheckError, gradcheck


def _x(values=(0.5, 1.0)):
    return rg.tensor(np.array(values, dtype=np.float64), requires_grad=True)


# -- undefined output gradients ------------------------------------------------

class Twice(rg.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        return a * 2.0

    @staticmethod
    def backward(ctx, g):
        return g * 2.0


class NoneUnsafe(rg.autograd.Function):
    """Its backward assumes a gradient is always given."""

    @staticmethod
    def forward(ctx, a):
        ctx.set_materialize_grads(False)
        return a * 2.0

    @staticmethod
    def backward(ctx, g):
        if g is None:
            raise RuntimeError("backward got no gradient")
        return g * 2.0


class PairNoneUnsafe(rg.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        ctx.set_materialize_grads(False)
        return a * 2.0, a * 3.0

    @staticmethod
    def backward(ctx, g1, g2):
        return g1 * 2.0 + g2 * 3.0     # fails when one of them is undefined


class ConstantGrad(rg.autograd.Function):
    """Returns a gradient even when none came in."""

    @staticmethod
    def forward(ctx, a):
        ctx.set_materialize_grads(False)
        return a * 2.0

    @staticmethod
    def backward(ctx, g):
        return rg.tensor(np.full(2, 2.0))


def test_undefined_output_gradients_are_handled_by_well_behaved_functions():
    assert gradcheck(Twice.apply, (_x(),), check_undefined_grad=True)


def test_backward_that_fails_without_a_gradient_is_reported():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(GradcheckError, match="Expected backward function to handle undefined "
                                                 "output grads"):
            gradcheck(NoneUnsafe.apply, (_x(),), check_undefined_grad=True)
        assert gradcheck(NoneUnsafe.apply, (_x(),), check_undefined_grad=False)


def test_one_undefined_gradient_among_several_outputs_is_checked():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises((GradcheckError, TypeError)):
            gradcheck(PairNoneUnsafe.apply, (_x(),), check_undefined_grad=True)


def test_gradient_made_out_of_nothing_is_reported():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(GradcheckError, match="Expected all input grads to be undefined or zero"):
            from retrograd.autograd.gradcheck import _test_undefined_backward_mode
            _test_undefined_backward_mode(ConstantGrad.apply, (_x(),))


# -- outputs whose shape or dtype depends on values ------------------------------

def test_output_shape_that_changes_under_perturbation_raises_assertion():
    with pytest.raises(AssertionError, match=r"Expected `func` to return outputs with the same "
                                             r"shape when inputs are perturbed on index \(0,\) by"):
        gradcheck(lambda a: a[a > 0.5], (_x(),))


def test_output_shape_check_in_fast_mode():
    with pytest.raises(AssertionError, match=r"same shape when inputs are perturbed by"):
        gradcheck(lambda a: a[a > 0.5], (_x(),), fast_mode=True)


def test_output_dtype_that_changes_under_perturbation_raises_assertion():
    def fn(a):
        out = a * 2.0
        return out if float(a.detach()[0]) > 0.5 else out.to(np.float32)

    with pytest.raises(AssertionError, match="same dtype when inputs are perturbed on index"):
        gradcheck(fn, (_x(),))


def test_shape_and_dtype_checks_match_torch():
    torch = pytest.importorskip("torch")

    def kinds(lib, check):
        x = lib.tensor([0.5, 1.0], dtype=lib.float64 if lib is torch else np.float64,
                       requires_grad=True)
        try:
            check(lambda a: a[a > 0.5], (x,))
            return "ok"
        except Exception as exc:        # noqa: BLE001
            return type(exc).__name__

    assert kinds(rg, gradcheck) == kinds(torch, torch.autograd.gradcheck) == "AssertionError"


# -- closures over the input ------------------------------------------------------

@pytest.mark.parametrize("fast_mode", [False, True])
def test_function_reading_its_input_through_a_closure_passes(fast_mode):
    x = _x()
    # the argument is ignored: only the captured tensor is read, and torch
    # perturbs the caller's tensor itself, so the Jacobian is still right
    assert gradcheck(lambda a: x * x, (x,), fast_mode=fast_mode)
    assert x._version == 0 and x.grad is None
    np.testing.assert_array_equal(np.asarray(x.detach()), [0.5, 1.0])


def test_closure_over_the_input_matches_torch():
    torch = pytest.importorskip("torch")

    def outcome(lib, check):
        x = lib.tensor([0.5, 1.0], dtype=lib.float64 if lib is torch else np.float64,
                       requires_grad=True)
        try:
            return check(lambda a: (x * x).sum() + a.sum(), (x,))
        except Exception as exc:        # noqa: BLE001
            return type(exc).__name__

    assert outcome(rg, gradcheck) == outcome(torch, torch.autograd.gradcheck) is True


def test_perturbation_of_a_broadcast_input_uses_a_copy():
    x = rg.tensor(np.array([0.5]), requires_grad=False).expand(3)
    y = _x((0.5, 1.0, 1.5))
    assert gradcheck(lambda a, b: a * b, (x, y))


# -- nondeterministic backward -------------------------------------------------------

class Noisy(rg.autograd.Function):
    calls = 0

    @staticmethod
    def forward(ctx, a):
        return a * 2.0

    @staticmethod
    def backward(ctx, g):
        Noisy.calls += 1
        return g * (2.0 + 1e-4 * Noisy.calls)


def test_nondeterministic_backward_is_not_reentrant():
    with pytest.raises(GradcheckError, match="Backward is not reentrant"):
        gradcheck(Noisy.apply, (_x(),), atol=1e-2)
    assert gradcheck(Noisy.apply, (_x(),), atol=1e-2, nondet_tol=1e-1)


# -- grad-mode decorators on classes ------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda: rg.no_grad(), lambda: rg.enable_grad(), lambda: rg.set_grad_enabled(False),
    lambda: rg.inference_mode(),
])
def test_decorating_a_class_warns_and_runs_its_construction_under_the_mode(make):
    mode = make()
    with pytest.warns(FutureWarning, match="Decorating classes is deprecated"):
        @mode
        class Probe:
            def __init__(self):
                self.grad_enabled = rg.is_grad_enabled()
                self.inference = rg.is_inference_mode_enabled()

    probe = Probe()
    with mode.clone():
        expected = (rg.is_grad_enabled(), rg.is_inference_mode_enabled())
    assert (probe.grad_enabled, probe.inference) == expected
    assert not isinstance(Probe, type)      # the class became a function, as torch


def test_bare_no_grad_on_a_class_warns_too():
    with pytest.warns(FutureWarning, match="decorate the `__init__` method"):
        @rg.no_grad
        class Probe:
            def __init__(self):
                self.grad_enabled = rg.is_grad_enabled()

    assert Probe().grad_enabled is False
