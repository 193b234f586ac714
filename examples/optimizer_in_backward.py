"""The optimizer step inside backward, one parameter at a time.

Normally a step is ``loss.backward()`` (every gradient computed and kept),
then ``optimizer.step()``. With ``register_post_accumulate_grad_hook`` each
parameter can be updated the moment its gradient is ready, and its gradient
freed at once: at no point do all the gradients exist together, which saves
a model's worth of memory on large models.

Each parameter gets its own optimizer (Adam over that one tensor); the hook
steps it and drops the gradient. We check that this gives exactly the
weights of the usual loop.

Run: ``python examples/optimizer_in_backward.py``.
"""
import numpy as np

import retrograd as rg
from retrograd import nn


def make_model():
    rg.manual_seed(0)                       # both models start from the same weights
    return nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 1))


def attach_optimizers(model, lr):
    optimizers = {p: rg.optim.Adam([p], lr=lr) for p in model.parameters()}

    def step_and_free(p):                   # called once p.grad holds this backward's gradient
        optimizers[p].step()
        optimizers[p].zero_grad()           # set_to_none=True: the gradient is freed now

    for p in model.parameters():
        p.register_post_accumulate_grad_hook(step_and_free)
    return optimizers


def main(steps=50, lr=1e-2):
    rg.manual_seed(1)
    x = rg.randn(128, 20)
    y = (x[:, :5].sum(dim=1, keepdim=True)).tanh()          # a target to fit
    loss_fn = nn.MSELoss()

    usual = make_model()
    opt = rg.optim.Adam(usual.parameters(), lr=lr)
    for _ in range(steps):
        opt.zero_grad()
        loss_fn(usual(x), y).backward()
        opt.step()

    in_backward = make_model()
    attach_optimizers(in_backward, lr)
    losses = []
    for _ in range(steps):
        loss = loss_fn(in_backward(x), y)
        loss.backward()                     # the hooks step every parameter during this call
        losses.append(loss.item())

    grads_left = [p.grad for p in in_backward.parameters() if p.grad is not None]
    diff = max(float(np.abs(a.detach().numpy() - b.detach().numpy()).max())
               for a, b in zip(usual.parameters(), in_backward.parameters()))
    print(f"loss {losses[0]:.4f} -> {losses[-1]:.4f} in {steps} steps")
    print(f"gradients still held after backward: {len(grads_left)}")
    print(f"largest weight difference from the usual loop: {diff:.1e}")
    return {"losses": losses, "max_weight_diff": diff, "grads_left": len(grads_left)}


if __name__ == "__main__":
    main()
