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
        # The engine is imported lazily by the first backward; import it here
        # so that a measured step (time or memory) does not include loading it.
        import retrograd.engine  # noqa: F401
        return retrograd
    if framework == "torch":
        import torch
        return torch
    raise ValueError(f"unknown framework {framework!r}")


# ---------------------------------------------------------------------------
# overhead_chain: y = sin(y * 1.01) + 0.5, repeated (3 ops per step)

def numpy_chain(x0, steps):
    """The chain's hand-written NumPy twin: forward plus hand-derived backward."""
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


def overhead_chain(framework):
    x0 = np.random.default_rng(0).standard_normal(16)
    steps = CHAIN_OPS // 3
    if framework == "numpy":
        return numpy_chain(x0, steps)
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


def _mlp_logits(X, W, B):
    """Clear the parameters' .grad and run the MLP's layers (retrograd or torch)."""
    for p in W + B:
        p.grad = None
    h = (X @ W[0] + B[0]).relu()
    h = (h @ W[1] + B[1]).relu()
    return h @ W[2] + B[2]


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
        rg = _autograd_lib("retrograd")
        W = [rg.tensor(w, requires_grad=True) for w in ws]
        B = [rg.tensor(b, requires_grad=True) for b in bs]
        X = rg.from_numpy(x)
        OH = rg.from_numpy(onehot)

        def run():
            logits = _mlp_logits(X, W, B)
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
        loss = F.cross_entropy(_mlp_logits(X, W, B), L)
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


# --- nn.functional ---------------------------------------------------------
# conv2d_step: two conv layers (3->16->32 channels, 3x3, padding 1) on a batch
# of 32 32x32 images, forward + backward of the sum.
# cnn_step: conv-relu-maxpool twice, linear, cross-entropy: one training step.
# index_backward: w[idx] with many repeated indices, backward (embedding-like).

CONV_BATCH = 32
CONV_HW = 32
INDEX_ROWS, INDEX_COLS, INDEX_COUNT = 1000, 64, 100_000


def _np_conv_fwd(x, w, b):
    # im2col (sliding_window_view) + one GEMM: padding 1, stride 1
    from numpy.lib.stride_tricks import sliding_window_view
    N, C, H, W_ = x.shape
    O, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    cols = np.ascontiguousarray(sliding_window_view(xp, (kh, kw), axis=(2, 3)).transpose(0, 1, 4, 5, 2, 3))
    cols = cols.reshape(N, C * kh * kw, H * W_)
    out = np.matmul(w.reshape(O, -1), cols).reshape(N, O, H, W_) + b.reshape(1, O, 1, 1)
    return out, cols


def _np_conv_bwd(g, cols, w, need_input=True):
    N, O, H, W_ = g.shape
    _, C, kh, kw = w.shape
    g2 = g.reshape(N, O, H * W_)
    gw = np.matmul(g2, cols.transpose(0, 2, 1)).sum(0).reshape(w.shape)
    gb = g.sum((0, 2, 3))
    if not need_input:
        return None, gw, gb
    gcols = np.matmul(w.reshape(O, -1).T, g2).reshape(N, C, kh, kw, H, W_)
    gx = np.zeros((N, C, H + 2, W_ + 2), dtype=g.dtype)
    for i in range(kh):
        for j in range(kw):
            gx[:, :, i:i + H, j:j + W_] += gcols[:, :, i, j]
    return gx[:, :, 1:-1, 1:-1], gw, gb


def _conv_data(dtype):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((CONV_BATCH, 3, CONV_HW, CONV_HW)).astype(dtype)
    w1 = (rng.standard_normal((16, 3, 3, 3)) / np.sqrt(27)).astype(dtype)
    w2 = (rng.standard_normal((32, 16, 3, 3)) / np.sqrt(144)).astype(dtype)
    b1, b2 = np.zeros(16, dtype), np.zeros(32, dtype)
    return x, w1, b1, w2, b2


def conv2d_step(framework, dtype="float32"):
    dtype = np.dtype(dtype)
    x, w1, b1, w2, b2 = _conv_data(dtype)
    if framework == "numpy":
        def run():
            h, c1 = _np_conv_fwd(x, w1, b1)
            y, c2 = _np_conv_fwd(h, w2, b2)
            g = np.ones_like(y)
            gh, gw2, gb2 = _np_conv_bwd(g, c2, w2)
            _, gw1, gb1 = _np_conv_bwd(gh, c1, w1, need_input=False)
            return gw1, gb1, gw2, gb2
        return run
    lib = _autograd_lib(framework)
    F = lib.nn.functional
    P = [lib.tensor(a, requires_grad=True) for a in (w1, b1, w2, b2)]
    X = lib.from_numpy(x)

    def run():
        for p in P:
            p.grad = None
        y = F.conv2d(F.conv2d(X, P[0], P[1], padding=1), P[2], P[3], padding=1)
        y.sum().backward()
        return P[0].grad
    return run


def cnn_step(framework, dtype="float32"):
    dtype = np.dtype(dtype)
    x, w1, b1, w2, b2 = _conv_data(dtype)
    rng = np.random.default_rng(5)
    feat = 32 * (CONV_HW // 4) ** 2
    w3 = (rng.standard_normal((10, feat)) / np.sqrt(feat)).astype(dtype)
    b3 = np.zeros(10, dtype)
    labels = rng.integers(0, 10, CONV_BATCH)
    if framework == "numpy":
        onehot = np.eye(10, dtype=dtype)[labels]

        def pool_fwd(a):
            N, C, H, W_ = a.shape
            r = a.reshape(N, C, H // 2, 2, W_ // 2, 2)
            m = r.max(axis=(3, 5))
            return m, r == m[:, :, :, None, :, None]

        def pool_bwd(g, mask):
            N, C, H, W_ = g.shape
            return (mask * g[:, :, :, None, :, None]).reshape(N, C, 2 * H, 2 * W_)

        def run():
            h1p, c1 = _np_conv_fwd(x, w1, b1)
            h1 = np.maximum(h1p, 0)
            p1, m1 = pool_fwd(h1)
            h2p, c2 = _np_conv_fwd(p1, w2, b2)
            h2 = np.maximum(h2p, 0)
            p2, m2 = pool_fwd(h2)
            f = p2.reshape(CONV_BATCH, -1)
            logits = f @ w3.T + b3
            s = logits - logits.max(1, keepdims=True)
            e = np.exp(s)
            z = e.sum(1, keepdims=True)
            loss = -(onehot * (s - np.log(z))).sum() / CONV_BATCH
            gl = (e / z - onehot) / CONV_BATCH
            gw3, gb3 = gl.T @ f, gl.sum(0)
            gp2 = (gl @ w3).reshape(p2.shape)
            gh2 = pool_bwd(gp2, m2) * (h2p > 0)
            gp1, gw2, gb2 = _np_conv_bwd(gh2, c2, w2)
            gh1 = pool_bwd(gp1, m1) * (h1p > 0)
            _, gw1, gb1 = _np_conv_bwd(gh1, c1, w1, need_input=False)
            return loss, (gw1, gb1, gw2, gb2, gw3, gb3)
        return run
    lib = _autograd_lib(framework)
    F = lib.nn.functional
    P = [lib.tensor(a, requires_grad=True) for a in (w1, b1, w2, b2, w3, b3)]
    X = lib.from_numpy(x)
    L = lib.from_numpy(labels)

    def run():
        for p in P:
            p.grad = None
        h = F.max_pool2d(F.conv2d(X, P[0], P[1], padding=1).relu(), 2)
        h = F.max_pool2d(F.conv2d(h, P[2], P[3], padding=1).relu(), 2)
        logits = F.linear(h.reshape((CONV_BATCH, feat)), P[4], P[5])
        loss = F.cross_entropy(logits, L)
        loss.backward()
        return loss
    return run


def index_backward(framework, dtype="float32"):
    dtype = np.dtype(dtype)
    rng = np.random.default_rng(6)
    w = rng.standard_normal((INDEX_ROWS, INDEX_COLS)).astype(dtype)
    idx = rng.integers(0, INDEX_ROWS, INDEX_COUNT)
    c = rng.standard_normal((INDEX_COUNT, INDEX_COLS)).astype(dtype)
    if framework == "numpy":
        def run():
            y = w[idx]
            loss = (y * c).sum()
            gw = np.zeros_like(w)
            np.add.at(gw, idx, c)
            return loss, gw
        return run
    lib = _autograd_lib(framework)
    W_ = lib.tensor(w, requires_grad=True)
    I = lib.from_numpy(idx)
    C = lib.from_numpy(c)

    def run():
        W_.grad = None
        (W_[I] * C).sum().backward()
        return W_.grad
    return run


# ---------------------------------------------------------------------------
# checkpoint_mlp: memory of activation checkpointing. 32 layers of
# act(h @ W + b), width 1024, batch 256, float32, weights requiring grad; one
# forward + backward. mode: "plain" (no checkpoint), "layer" (every layer
# checkpointed on its own), or "segments" (checkpoint_sequential, 4 segments).
# Only retrograd and torch (the point is the library's checkpoint).

CKPT_LAYERS = 32
CKPT_WIDTH = 1024
CKPT_BATCH = 256
CKPT_SEGMENTS = 4


def checkpoint_mlp(framework, mode="layer", act="tanh", weights_grad=True):
    # weights_grad=False: gradient for the input only (a frozen network), so
    # that the peak is the activations' and not the weights' gradients'
    # (32 x 4 MB, alive at the end of every backward, checkpointed or not).
    if mode not in ("plain", "layer", "segments"):
        raise ValueError(f"checkpoint_mlp: unknown mode {mode!r}")
    lib = _autograd_lib(framework)
    if framework == "retrograd":
        from retrograd.utils.checkpoint import checkpoint, checkpoint_sequential
    else:
        from torch.utils.checkpoint import checkpoint, checkpoint_sequential
    rng = np.random.default_rng(3)
    n, d = CKPT_BATCH, CKPT_WIDTH
    ws = [(rng.standard_normal((d, d)) / np.sqrt(d)).astype(np.float32) for _ in range(CKPT_LAYERS)]
    # from_numpy (no copy): nothing is freed before the measured run, whose
    # RSS rise would otherwise hide in memory the allocator kept.
    W = [lib.from_numpy(w).requires_grad_(bool(weights_grad)) for w in ws]
    B = [lib.from_numpy(np.zeros(d, dtype=np.float32)).requires_grad_(bool(weights_grad))
         for _ in range(CKPT_LAYERS)]
    X = lib.from_numpy(rng.standard_normal((n, d)).astype(np.float32)).requires_grad_()
    layers = [(lambda w, b: (lambda h: getattr(h @ w + b, act)()))(w, b) for w, b in zip(W, B)]

    def run():
        for p in W + B + [X]:
            p.grad = None
        h = X
        if mode == "segments":
            h = checkpoint_sequential(layers, CKPT_SEGMENTS, h, use_reentrant=False)
        else:
            for f in layers:
                h = checkpoint(f, h, use_reentrant=False) if mode == "layer" else f(h)
        h.sum().backward()
        return h
    return run


# ---------------------------------------------------------------------------
# mlp_jvp: the JVP of mlp_step's forward (loss), one tangent for every weight
# and bias (retrograd-forward-ad; torch.autograd.forward_ad; NumPy by hand).

def mlp_jvp(framework, dtype="float64"):
    dtype = np.dtype(dtype)
    ws, bs, x, labels = _mlp_data(dtype)
    rng = np.random.default_rng(3)
    dws = [rng.standard_normal(w.shape).astype(dtype) for w in ws]
    dbs = [rng.standard_normal(b.shape).astype(dtype) for b in bs]
    onehot = np.eye(MLP_SIZES[-1], dtype=dtype)[labels]
    n = MLP_BATCH
    if framework == "numpy":
        def run():
            h1p = x @ ws[0] + bs[0]
            d1p = x @ dws[0] + dbs[0]
            m1 = h1p > 0
            h1 = h1p * m1
            d1 = d1p * m1
            h2p = h1 @ ws[1] + bs[1]
            d2p = d1 @ ws[1] + h1 @ dws[1] + dbs[1]
            m2 = h2p > 0
            h2 = h2p * m2
            d2 = d2p * m2
            logits = h2 @ ws[2] + bs[2]
            dlogits = d2 @ ws[2] + h2 @ dws[2] + dbs[2]
            shifted = logits - logits.max(axis=1, keepdims=True)
            e = np.exp(shifted)
            s = e.sum(axis=1, keepdims=True)
            loss = -(onehot * (shifted - np.log(s))).sum() / n
            dlogp = dlogits - (e * dlogits).sum(axis=1, keepdims=True) / s
            return loss, -(onehot * dlogp).sum() / n
        return run
    if framework == "retrograd":
        rg = _autograd_lib("retrograd")
        import retrograd.forward_ad as fwAD
        W = [rg.tensor(w) for w in ws]
        B = [rg.tensor(b) for b in bs]
        dW = [rg.tensor(d) for d in dws]
        dB = [rg.tensor(d) for d in dbs]
        X = rg.from_numpy(x)
        OH = rg.from_numpy(onehot)

        def run():
            with fwAD.dual_level():
                Wd = [fwAD.make_dual(w, d) for w, d in zip(W, dW)]
                Bd = [fwAD.make_dual(b, d) for b, d in zip(B, dB)]
                logits = _mlp_logits(X, Wd, Bd)
                shifted = logits - np.max(np.asarray(logits), axis=1, keepdims=True)
                logp = shifted - shifted.exp().sum(dim=1, keepdim=True).log()
                loss = -(OH * logp).sum() / n
                return fwAD.unpack_dual(loss)
        return run
    import torch
    import torch.autograd.forward_ad as tfw
    import torch.nn.functional as F
    W = [torch.tensor(w) for w in ws]
    B = [torch.tensor(b) for b in bs]
    dW = [torch.tensor(d) for d in dws]
    dB = [torch.tensor(d) for d in dbs]
    X = torch.from_numpy(x)
    L = torch.from_numpy(labels)

    def run():
        with tfw.dual_level():
            Wd = [tfw.make_dual(w, d) for w, d in zip(W, dW)]
            Bd = [tfw.make_dual(b, d) for b, d in zip(B, dB)]
            loss = F.cross_entropy(_mlp_logits(X, Wd, Bd), L)
            return tfw.unpack_dual(loss)
    return run


# ---------------------------------------------------------------------------
# hvp_tanh: H v for f(x) = sum(tanh(W @ x) ** 2), x of size 256.
# retrograd: forward-over-reverse (a dual x through a create_graph backward);
# torch: double backward (torch.autograd.functional.hvp's method); NumPy:
# the closed form W^T [f''(z) * (W v)].

HVP_N = 256


def hvp_tanh(framework):
    rng = np.random.default_rng(4)
    w = rng.standard_normal((HVP_N, HVP_N)) / np.sqrt(HVP_N)
    x = rng.standard_normal(HVP_N)
    v = rng.standard_normal(HVP_N)
    if framework == "numpy":
        def run():
            t = np.tanh(w @ x)
            s = 1 - t * t
            return w.T @ ((2 * s * s - 4 * t * t * s) * (w @ v))
        return run
    if framework == "retrograd":
        rg = _autograd_lib("retrograd")
        import retrograd.forward_ad as fwAD
        W = rg.tensor(w)
        V = rg.tensor(v)

        def run():
            with fwAD.dual_level():
                X = fwAD.make_dual(rg.tensor(x, requires_grad=True), V)
                (g,) = rg.autograd.grad((rg.tanh(W @ X) ** 2).sum(), (X,), create_graph=True)
                return fwAD.unpack_dual(g).tangent
        return run
    import torch
    W = torch.tensor(w)
    V = torch.tensor(v)

    def run():
        X = torch.tensor(x, requires_grad=True)
        (g,) = torch.autograd.grad((torch.tanh(W @ X) ** 2).sum(), X, create_graph=True)
        (hv,) = torch.autograd.grad(g, X, V)
        return hv
    return run


# ---------------------------------------------------------------------------
# profiled_chain: overhead_chain run PROFILED_REPS times inside one active
# profile (retrograd.profiler or torch.profiler, CPU activity). Its time per
# op minus overhead_chain's is the profiler's cost per op (an op event, and
# per node the engine's two events), start, stop and event parsing included.

PROFILED_REPS = 10


def profiled_chain(framework, record_shapes=False):
    chain = overhead_chain(framework)
    if framework == "numpy":
        def run_numpy():
            for _ in range(PROFILED_REPS):
                chain()
        return run_numpy
    if framework == "retrograd":
        import retrograd.profiler as profiler
        activities = [profiler.ProfilerActivity.CPU]
    else:
        import torch.profiler as profiler
        activities = [profiler.ProfilerActivity.CPU]

    def run():
        with profiler.profile(activities=activities, record_shapes=record_shapes) as prof:
            for _ in range(PROFILED_REPS):
                chain()
        return prof
    return run
