"""A two-layer MLP on random data: forward, backward, print the gradients.

Run it with `nox -s example` (builds and installs retrograd first), or with
`python examples/mlp.py` once retrograd is installed.
"""
import numpy as np

import retrograd as rg

rg.manual_seed(0)
rng = np.random.default_rng(0)

# 8 samples of 4 features, 3 classes.
x = rg.tensor(rng.standard_normal((8, 4)))
labels = rng.integers(0, 3, size=8)
onehot = rg.tensor(np.eye(3)[labels])

w1 = rg.randn(4, 16, requires_grad=True)
b1 = rg.zeros(16, requires_grad=True)
w2 = rg.randn(16, 3, requires_grad=True)
b2 = rg.zeros(3, requires_grad=True)

h = (x @ w1 + b1).relu()
logits = h @ w2 + b2
# log-softmax, shifted by the (constant) row maximum for stability
shifted = logits - np.max(np.asarray(logits), axis=1, keepdims=True)
log_probs = shifted - shifted.exp().sum(dim=1, keepdim=True).log()
loss = -(onehot * log_probs).sum(dim=1).mean()

print("loss:", loss.item())
print("graph:", loss.grad_fn.name(), "<-", [fn.name() for fn, _ in loss.grad_fn.next_functions if fn])
loss.backward()

for name, p in [("w1", w1), ("b1", b1), ("w2", w2), ("b2", b2)]:
    print(f"{name}.grad (shape {p.grad.shape}):")
    print(np.array2string(p.grad.numpy(), precision=4, suppress_small=True))
