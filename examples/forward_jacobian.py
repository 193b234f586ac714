"""Jacobians with forward-mode AD.

Forward mode pushes a tangent (a direction in input space) through the
computation alongside the values: one pass gives J @ v, one column
combination of the Jacobian. Reverse mode (backward) gives v^T @ J, one row.
So forward mode is the cheap one when a function has few inputs and many
outputs.

Shown here, for f: R^3 -> R^50 (a curve sampled at 50 points):

1. ``jacobian(f, x, strategy="forward-mode", vectorize=True)``: all columns in
   one batched forward pass;
2. the same columns by hand, one ``forward_ad.dual_level`` pass per input
   direction (``make_dual`` / ``unpack_dual``);
3. the reverse-mode Jacobian, which must agree.

Run: ``python examples/forward_jacobian.py``.
"""
import numpy as np

import retrograd as rg
import retrograd.autograd.forward_ad as fwAD
from retrograd.autograd.functional import jacobian

T = rg.tensor(np.linspace(0.0, 1.0, 50))


def curve(params):
    """A damped sine sampled at 50 times: params = (amplitude, decay, frequency)."""
    a, k, w = params                # three 0-d tensors
    return a * (-k * T).exp() * (w * T).sin()


def main():
    x = rg.tensor([1.5, 0.7, 6.0], dtype=rg.float64)   # (float64, like the data)

    # 1. one call: the Jacobian (50, 3) by forward mode, all 3 tangents batched
    J_fwd = jacobian(curve, x, strategy="forward-mode", vectorize=True)

    # 2. by hand: column j is the tangent of the output when the input's tangent is e_j
    columns = []
    for j in range(3):
        with fwAD.dual_level():
            dual_x = fwAD.make_dual(x, rg.tensor(np.eye(3)[j]))
            out = curve(dual_x)
            columns.append(fwAD.unpack_dual(out).tangent.numpy())
    J_manual = np.stack(columns, axis=1)

    # 3. reverse mode: one backward pass per output (50 here)
    J_rev = jacobian(curve, x)

    print("Jacobian shape:", tuple(J_fwd.shape))
    print("first rows (forward mode):\n", np.round(J_fwd.numpy()[:3], 5))
    diff_manual = float(np.abs(J_manual - J_fwd.numpy()).max())
    diff_rev = float(np.abs(J_rev.numpy() - J_fwd.numpy()).max())
    print(f"max |forward - dual_level by hand| = {diff_manual:.1e}")
    print(f"max |forward - reverse|            = {diff_rev:.1e}")
    return {"forward": J_fwd.numpy(), "manual": J_manual, "reverse": J_rev.numpy()}


if __name__ == "__main__":
    main()
