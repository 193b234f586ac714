"""The benchmark workloads, each written three ways: retrograd, PyTorch, and
hand-written NumPy (forward plus hand-derived backward, the floor any
autodiff library is measured against).

Used by the asv suite (benchmarks.py) and by compare.py. Each builder takes
the framework name and returns a zero-argument callable running one
forward+backward; torch is imported only when asked for.
"""
from __future__ import annotations

import numpy as np

CHAIN_OPS = 300          # overhead_chain: tiny ops on a (16,) float64 array
WIDE_BRANCHES = 64       # overhead_wide: branches from one input...
WIDE_DEPTH = 20          # ...of this many ops each
DEEP_OPS = 1_000_000     # deep_chain
MLP_SIZES = (784, 512, 512, 10)
MLP_BATCH = 128


def _autograd_lib(framework):
    """retrograd or torch: the workloads below use only the API they share."""
    if framework == "retrograd":
        import retrograd
        return retrograd
    if framework == "torch":
        import torch
        return torch
    raise ValueError(f"unknown framework {framework!r}")


# ---------------------------------------------------------------------------
# overhead_chain: y = sin(y * 1.01) + 0.5, repeated (3 ops per step)

def overhead_chain(framework):
    x0 = np.random.default_rng(0).standard_normal(16)
    steps = CHAIN_OPS // 3
    if framework == "numpy":
        def run():
            y = x0
            saved = []
            for _ in range(steps):
                a = y * 1.01
                saved.append(a)
                y = np.sin(a) + 0.5
            g = np.ones_like(y)
            for a in reversed(saved):
                g = g * np.cos(a) * 1.01
            return g
        return run
    lib = _autograd_lib(framework)

    def run():
        x = lib.tensor(x0, requires_grad=True)
        y = x
        for _ in range(steps):
            y = (y * 1.01).sin() + 0.5
        y.sum().backward()
        return x.grad
    return run


# ---------------------------------------------------------------------------
# overhead_wide: 64 branches of 20 ops (alternating * 1.01 and tanh) from one
# input, summed.

def overhead_wide(framework):
    x0 = np.random.default_rng(1).standard_normal(16)
    half = WIDE_DEPTH // 2
    if framework == "numpy":
        def run():
            total_grad = np.zeros_like(x0)
            outs = []
            saved_all = []
            for _ in range(WIDE_BRANCHES):
                y = x0
                saved = []
                for _ in range(half):
                    y = np.tanh(y * 1.01)
                    saved.append(y)
                outs.append(y)
                saved_all.append(saved)
            for saved in saved_all:
                g = np.ones_like(x0)
                for t in reversed(saved):
                    g = g * (1 - t * t) * 1.01
                total_grad += g
            return total_grad
        return run
    lib = _autograd_lib(framework)

    def run():
        x = lib.tensor(x0, requires_grad=True)
        outs = []
        for _ in range(WIDE_BRANCHES):
            y = x
            for _ in range(half):
                y = (y * 1.01).tanh()
            outs.append(y.sum())
        total = outs[0]
        for o in outs[1:]:
            total = total + o
        total.backward()
        return x.grad
    return run


def wide_op_count():
    # per branch: WIDE_DEPTH ops + sum; plus the adds joining the branches
    return WIDE_BRANCHES * (WIDE_DEPTH + 1) + (WIDE_BRANCHES - 1)


# ---------------------------------------------------------------------------
# mlp_step: 784-512-512-10, batch 128, relu, softmax cross-entropy.

def _mlp_data(dtype):
    rng = np.random.default_rng(2)
    sizes = MLP_SIZES
    ws = [(rng.standard_normal((a, b)) / np.sqrt(a)).astype(dtype) for a, b in zip(sizes[:-1], sizes[1:])]
    bs = [np.zeros(b, dtype=dtype) for b in sizes[1:]]
    x = rng.standard_normal((MLP_BATCH, sizes[0])).astype(dtype)
    labels = rng.integers(0, sizes[-1], size=MLP_BATCH)
    return ws, bs, x, labels


def mlp_step(framework, dtype="float64"):
    dtype = np.dtype(dtype)
    ws, bs, x, labels = _mlp_data(dtype)
    onehot = np.eye(MLP_SIZES[-1], dtype=dtype)[labels]
    n = MLP_BATCH
    if framework == "numpy":
        def run():
            # forward
            h1p = x @ ws[0] + bs[0]
            h1 = np.maximum(h1p, 0)
            h2p = h1 @ ws[1] + bs[1]
            h2 = np.maximum(h2p, 0)
            logits = h2 @ ws[2] + bs[2]
            shifted = logits - logits.max(axis=1, keepdims=True)
            e = np.exp(shifted)
            s = e.sum(axis=1, keepdims=True)
            logp = shifted - np.log(s)
            loss = -(onehot * logp).sum() / n
            # backward
            g_logits = (e / s - onehot) / n
            gw2 = h2.T @ g_logits
            gb2 = g_logits.sum(axis=0)
            g_h2 = g_logits @ ws[2].T
            g_h2 *= h2p > 0
            gw1 = h1.T @ g_h2
            gb1 = g_h2.sum(axis=0)
            g_h1 = g_h2 @ ws[1].T
            g_h1 *= h1p > 0
            gw0 = x.T @ g_h1
            gb0 = g_h1.sum(axis=0)
            return loss, (gw0, gb0, gw1, gb1, gw2, gb2)
        return run
    if framework == "retrograd":
        import retrograd as rg
        W = [rg.tensor(w, requires_grad=True) for w in ws]
        B = [rg.tensor(b, requires_grad=True) for b in bs]
        X = rg.from_numpy(x)
        OH = rg.from_numpy(onehot)

        def run():
            for p in W + B:
                p.grad = None
            h = (X @ W[0] + B[0]).relu()
            h = (h @ W[1] + B[1]).relu()
            logits = h @ W[2] + B[2]
            shifted = logits - np.max(np.asarray(logits), axis=1, keepdims=True)
            logp = shifted - shifted.exp().sum(dim=1, keepdim=True).log()
            loss = -(OH * logp).sum() / n
            loss.backward()
            return loss
        return run
    import torch
    import torch.nn.functional as F
    W = [torch.tensor(w, requires_grad=True) for w in ws]
    B = [torch.tensor(b, requires_grad=True) for b in bs]
    X = torch.from_numpy(x)
    L = torch.from_numpy(labels)

    def run():
        for p in W + B:
            p.grad = None
        h = (X @ W[0] + B[0]).relu()
        h = (h @ W[1] + B[1]).relu()
        logits = h @ W[2] + B[2]
        loss = F.cross_entropy(logits, L)
        loss.backward()
        return loss
    return run


# ---------------------------------------------------------------------------
# deep_chain: 10^6 ops (y = sin(y)) on a (16,) array, forward and backward.

def deep_chain(framework, ops=DEEP_OPS):
    x0 = np.random.default_rng(3).standard_normal(16) * 0.1
    if framework == "numpy":
        def run():
            y = x0
            saved = []
            for _ in range(ops):
                saved.append(y)
                y = np.sin(y)
            g = np.ones_like(y)
            while saved:
                g = g * np.cos(saved.pop())
            return g
        return run
    lib = _autograd_lib(framework)

    def run():
        x = lib.tensor(x0, requires_grad=True)
        y = x
        for _ in range(ops):
            y = y.sin()
        y.sum().backward()
        return x.grad
    return run
