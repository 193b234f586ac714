"""retrograd vs PyTorch vs hand-written CuPy on one GPU, side by side in one run.

    python benchmarks/compare.py --device cuda [--quick] [--no-torch]
    python benchmarks/cuda_compare.py [--quick] [--no-torch]

The three CUDA workloads of issue 17, each timed as the median of repeats
interleaved across frameworks (the card's clocks drift; interleaving makes a
ratio compare the same minutes), every repeat ending with a device
synchronize so that asynchronous kernel launches are paid for:

- ``mlp_step``: a 3-layer MLP, 1024 wide, batch 256, float32: forward,
  cross-entropy, backward, SGD step;
- ``conv2d_step``: two 3x3 convolutions (3 -> 16 -> 32 channels) on a batch
  of 32 images of 32x32, float32, then backward (torch runs cuDNN);
- ``small_op_chain``: 100 small adds on a (16,) tensor plus backward, per op.

The hand-written CuPy columns (forward plus hand-derived backward) are the
floor an autodiff library cannot beat by construction; torch's CUDA build is
the target. Without CuPy and a device the script says so and exits.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

MLP_BATCH, MLP_WIDTH, MLP_CLASSES = 256, 1024, 10
CONV_BATCH, CONV_HW = 32, 32
CHAIN_OPS = 100
FRAMEWORKS = ("cupy", "retrograd", "torch")


def _sync(framework):
    if framework == "torch":
        import torch
        torch.cuda.synchronize()
    else:
        import cupy
        cupy.cuda.Device().synchronize()


def _mlp_data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((MLP_BATCH, MLP_WIDTH)).astype(np.float32)
    sizes = (MLP_WIDTH, MLP_WIDTH, MLP_WIDTH, MLP_CLASSES)
    ws = [(rng.standard_normal((o, i)) / np.sqrt(i)).astype(np.float32) for i, o in zip(sizes, sizes[1:])]
    bs = [np.zeros(o, np.float32) for o in sizes[1:]]
    labels = rng.integers(0, MLP_CLASSES, MLP_BATCH)
    return x, ws, bs, labels


def _lib(framework):
    if framework == "retrograd":
        import retrograd
        import retrograd.engine  # noqa: F401  (loaded by the first backward otherwise)
        return retrograd
    import torch
    return torch


def mlp_step(framework, lr=1e-3):
    x, ws, bs, labels = _mlp_data()
    if framework == "cupy":
        import cupy as cp
        X, Y = cp.asarray(x), cp.asarray(labels)
        W = [cp.asarray(w) for w in ws]
        B = [cp.asarray(b) for b in bs]
        onehot = cp.eye(MLP_CLASSES, dtype=cp.float32)[Y]

        def run():
            hs, pre = [X], []
            for i in range(3):
                z = hs[-1] @ W[i].T + B[i]
                pre.append(z)
                hs.append(cp.maximum(z, 0) if i < 2 else z)
            s = hs[-1] - hs[-1].max(1, keepdims=True)
            e = cp.exp(s)
            p = e / e.sum(1, keepdims=True)
            g = (p - onehot) / MLP_BATCH
            for i in (2, 1, 0):
                gw, gb = g.T @ hs[i], g.sum(0)
                if i:
                    g = (g @ W[i]) * (pre[i - 1] > 0)
                W[i] -= lr * gw
                B[i] -= lr * gb
        return run
    lib = _lib(framework)
    dev = "cuda"
    model = lib.nn.Sequential(
        lib.nn.Linear(MLP_WIDTH, MLP_WIDTH), lib.nn.ReLU(),
        lib.nn.Linear(MLP_WIDTH, MLP_WIDTH), lib.nn.ReLU(),
        lib.nn.Linear(MLP_WIDTH, MLP_CLASSES))
    with lib.no_grad():
        for layer, w, b in zip(model[::2], ws, bs):
            layer.weight = lib.nn.Parameter(lib.tensor(w))
            layer.bias = lib.nn.Parameter(lib.tensor(b))
    model = model.to(dev)
    X = lib.tensor(x, device=dev)
    Y = lib.tensor(labels, device=dev)
    opt = lib.optim.SGD(model.parameters(), lr=lr)
    loss_fn = lib.nn.CrossEntropyLoss()

    def run():
        opt.zero_grad()
        loss_fn(model(X), Y).backward()
        opt.step()
    return run


def conv2d_step(framework):
    if framework == "cupy":
        return None                       # no hand-written cuDNN reference
    rng = np.random.default_rng(4)
    x = rng.standard_normal((CONV_BATCH, 3, CONV_HW, CONV_HW)).astype(np.float32)
    w1 = (rng.standard_normal((16, 3, 3, 3)) / np.sqrt(27)).astype(np.float32)
    w2 = (rng.standard_normal((32, 16, 3, 3)) / np.sqrt(144)).astype(np.float32)
    lib = _lib(framework)
    F = lib.nn.functional
    X = lib.tensor(x, device="cuda")
    P = [lib.tensor(a, device="cuda", requires_grad=True)
         for a in (w1, np.zeros(16, np.float32), w2, np.zeros(32, np.float32))]

    def run():
        for p in P:
            p.grad = None
        y = F.conv2d(F.conv2d(X, P[0], P[1], padding=1), P[2], P[3], padding=1)
        y.sum().backward()
    return run


def small_op_chain(framework):
    x0 = np.random.default_rng(1).standard_normal(16).astype(np.float32)
    if framework == "cupy":
        import cupy as cp
        X = cp.asarray(x0)

        def run():
            y = X
            for _ in range(CHAIN_OPS):
                y = y + 1.0
            g = cp.ones_like(y)
            for _ in range(CHAIN_OPS):      # d(y + c)/dy = 1: one kernel per op, as autodiff launches
                g = g * 1.0
            return g
        return run
    lib = _lib(framework)

    def run():
        x = lib.tensor(x0, device="cuda", requires_grad=True)
        y = x
        for _ in range(CHAIN_OPS):
            y = y + 1.0
        y.sum().backward()
        return x.grad
    return run


WORKLOADS = (("mlp_step", 1, "ms/step", mlp_step, 5),
             ("conv2d_step", 1, "ms/step", conv2d_step, 5),
             ("small_op_chain", CHAIN_OPS, "us/op", small_op_chain, 5))


def _available_frameworks(no_torch):
    fws = ["cupy", "retrograd"]
    if not no_torch:
        try:
            import torch
            if torch.cuda.is_available():
                fws.append("torch")
            else:
                print("torch has no CUDA device here: its column is left out", file=sys.stderr)
        except ImportError:
            print("torch is not installed: its column is left out", file=sys.stderr)
    return fws


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer repeats")
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--only", default="", help="comma-separated workloads")
    args = ap.parse_args(argv)
    try:
        import cupy
        if cupy.cuda.runtime.getDeviceCount() < 1:
            raise RuntimeError("no CUDA device")
    except Exception as exc:                # ImportError, or CuPy without a driver or device
        raise SystemExit(f"--device cuda needs CuPy and a CUDA device: {exc}") from None
    fws = _available_frameworks(args.no_torch)
    only = set(filter(None, args.only.split(",")))
    rep = 3 if args.quick else 21
    print(f"python {sys.version.split()[0]} | numpy {np.__version__} | cupy {cupy.__version__}"
          + (f" | torch {__import__('torch').__version__}" if "torch" in fws else ""))
    rows = []
    for name, per, unit, builder, number in WORKLOADS:
        if only and name not in only:
            continue
        fns = {fw: fn for fw in fws if (fn := builder(fw)) is not None}
        samples = {fw: [] for fw in fns}
        for fw, fn in fns.items():           # warm-up: kernels compiled, memory pools filled
            fn()
            _sync(fw)
        for _ in range(rep):
            for fw, fn in fns.items():
                _sync(fw)
                t0 = time.perf_counter()
                n = 1 if args.quick else number
                for _ in range(n):
                    fn()
                _sync(fw)
                samples[fw].append((time.perf_counter() - t0) / n / per)
        times = {fw: statistics.median(s) for fw, s in samples.items()}
        scale = 1e6 if unit == "us/op" else 1e3
        line = f"{name:<16}" + "".join(f"{fw}={times[fw] * scale:9.3f} " for fw in times) + unit
        if "cupy" in times:
            line += f" | retrograd/cupy {times['retrograd'] / times['cupy']:5.2f}x"
        if "torch" in times:
            line += f" | retrograd/torch {times['retrograd'] / times['torch']:5.2f}x"
        print(line, flush=True)
        rows.append({"name": name, "unit": unit, **times})
    return rows


if __name__ == "__main__":
    main()
