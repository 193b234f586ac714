"""Activation checkpointing: trade compute for memory in a deep MLP.

During forward, autograd keeps ("saves") the tensors backward will need: for
a deep network, every layer's input and activation. With
``rg.utils.checkpoint.checkpoint(block, x, use_reentrant=False)`` a block
saves only its input; its inside is recomputed during backward. We run a
24-layer MLP both ways, in 4 checkpointed segments, and compare:

- the memory the graph keeps alive, measured by
  ``rg.autograd.graph.saved_tensors_report`` just before backward;
- the gradients, which must be equal.

Run: ``python examples/checkpoint_mlp.py``.
"""
import numpy as np

import retrograd as rg
from retrograd import nn
from retrograd.autograd.graph import saved_tensors_report
from retrograd.utils.checkpoint import checkpoint


def make_mlp(depth=24, width=256):
    layers = []
    for _ in range(depth):
        layers += [nn.Linear(width, width), nn.Tanh()]
    return nn.Sequential(*layers)


def forward(model, x, segments):
    """The model's output; with segments > 0, each of `segments` chunks of layers is checkpointed."""
    if not segments:
        return model(x)
    layers = list(model)
    size = len(layers) // segments
    for i in range(0, len(layers), size):
        block = nn.Sequential(*layers[i:i + size])
        x = checkpoint(block, x, use_reentrant=False)      # saves x only; recomputes block in backward
    return x


def gradients(model, x, segments):
    model.zero_grad()
    loss = forward(model, x, segments).pow(2).mean()
    saved = saved_tensors_report(loss).total_bytes            # what backward would need, right now
    loss.backward()
    return saved, [p.grad.numpy().copy() for p in model.parameters()]


def main(depth=24, width=256, batch=256, segments=4):
    rg.manual_seed(0)
    model = make_mlp(depth, width)
    x = rg.randn(batch, width)
    plain_bytes, plain_grads = gradients(model, x, 0)
    ckpt_bytes, ckpt_grads = gradients(model, x, segments)
    max_diff = max(float(np.abs(a - b).max()) for a, b in zip(plain_grads, ckpt_grads))
    print(f"saved by the graph without checkpointing: {plain_bytes / 2**20:7.2f} MiB")
    print(f"saved with {segments} checkpointed segments:   {ckpt_bytes / 2**20:7.2f} MiB "
          f"({plain_bytes / ckpt_bytes:.0f}x less)")
    print(f"largest gradient difference: {max_diff:.1e}")
    return {"plain_bytes": plain_bytes, "checkpoint_bytes": ckpt_bytes, "max_grad_diff": max_diff}


if __name__ == "__main__":
    main()
