"""Custom autograd Functions: your own forward and backward.

Two Functions, as a PyTorch user would write them:

- ``Cbrt``: the cube root computed by NumPy (``np.cbrt``), with a hand-written
  backward. The backward is written with tensor ops, so it is itself
  differentiable: gradgradcheck checks the second derivative too.
- ``ClampGrad``: the identity on the way forward, and a gradient clipped to
  [-limit, limit] on the way back (a non-tensor argument gets a None gradient).

Run: ``python examples/custom_function.py``.
"""
import numpy as np

import retrograd as rg
from retrograd.autograd import Function, gradcheck, gradgradcheck


class Cbrt(Function):
    """y = x ** (1/3) for every real x (NumPy's cbrt handles negative x)."""

    @staticmethod
    def forward(ctx, x):
        # forward runs without recording a graph: any NumPy code is fine here
        y = rg.from_numpy(np.cbrt(x.numpy()))
        ctx.save_for_backward(y)          # what backward needs: y, not x
        return y

    @staticmethod
    def backward(ctx, grad_y):
        (y,) = ctx.saved_tensors
        # dy/dx = 1 / (3 y^2); tensor ops keep this differentiable (double backward)
        return grad_y / (3 * y * y)


class ClampGrad(Function):
    """Identity forward; the gradient flowing back is clipped to [-limit, limit]."""

    @staticmethod
    def forward(ctx, x, limit):
        ctx.limit = limit                 # plain Python values go on ctx directly
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        # one gradient per forward input: None for the float `limit`
        return grad.clamp(-ctx.limit, ctx.limit), None


def main():
    rg.manual_seed(0)
    # float64 inputs away from 0 (cbrt's slope is infinite at 0)
    x = (rg.rand(5, dtype=rg.float64) + 0.5).requires_grad_()
    x_neg = -x.detach().clone().requires_grad_()

    y = Cbrt.apply(x)
    y.sum().backward()
    expected = 1 / (3 * np.cbrt(x.detach().numpy()) ** 2)
    print("Cbrt grad:      ", np.round(x.grad.numpy(), 6))
    print("analytic 1/3y^2:", np.round(expected, 6))

    # gradcheck compares backward with finite differences; gradgradcheck does the
    # same for the gradient of backward (both need float64)
    ok1 = gradcheck(Cbrt.apply, (x,)) and gradcheck(Cbrt.apply, (x_neg,))
    ok2 = gradgradcheck(Cbrt.apply, (x,))
    print("gradcheck:", ok1, " gradgradcheck:", ok2)

    w = rg.tensor([1.0, -2.0, 3.0], requires_grad=True)
    (ClampGrad.apply(w, 0.5) * 10).sum().backward()     # each element's gradient is 10, clipped to 0.5
    print("ClampGrad grad: ", w.grad)
    return {"grad_error": float(np.abs(x.grad.numpy() - expected).max()), "gradcheck": ok1,
            "gradgradcheck": ok2, "clamped": w.grad.numpy().tolist()}


if __name__ == "__main__":
    main()
