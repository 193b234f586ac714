"""MLP training loop, retrograd against torch: wall time and loss curves.

The same program twice: a 64-128-10 MLP (Linear, ReLU, Linear,
CrossEntropyLoss) trained with Adam (or SGD with momentum) by minibatches
from a DataLoader over a TensorDataset, on scikit-learn-like digits (8x8
images, 1797 of them, rendered by ``retrograd.demo.render_digits``).

Both runs are made equal on purpose:

- float64 throughout (retrograd's default dtype; the torch model is converted
  with ``.double()``), so the loss curves can agree to ~1e-12 and are
  compared to 1e-6;
- the same initial parameters: drawn once with NumPy (torch's default
  distribution for Linear, U(-1/sqrt(fan_in), 1/sqrt(fan_in))) and loaded with
  ``load_state_dict`` in both;
- the same batches: a sampler yielding one seeded NumPy permutation per epoch,
  passed to both DataLoaders;
- single-threaded: each framework runs in its own subprocess, started with
  the BLAS/OpenMP thread variables set to 1 (they are read when the library
  loads, so they must be set before NumPy or torch is imported), plus
  ``torch.set_num_threads(1)``.

Each subprocess times the training loop alone (not imports, data or model
construction), ``--repeats`` times from the same start, and reports the
fastest, with its loss after every step.

Usage::

    python benchmarks/train_mlp.py                 # times, ratio, loss-curve difference
    python benchmarks/train_mlp.py --profile       # + cProfile of the retrograd loop
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS",
               "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")
SIZES = (64, 128, 10)
DEFAULTS = dict(n=1797, batch_size=64, epochs=5, lr=1e-3, optimizer="adam", seed=0, repeats=3)


def make_data(n: int, seed: int):
    """(x float64 (n, 64) in [0, 1], y int64 (n,)): 8x8 rendered digits."""
    import numpy as np
    from retrograd.demo import render_digits
    x, y = render_digits(n, size=8, seed=seed, noise=0.1)
    return x.reshape(n, -1).astype(np.float64), y


def initial_parameters(seed: int) -> dict:
    """The MLP's initial state dict as NumPy float64 arrays (torch's layout:
    weight (out, in)), from torch's default Linear distribution."""
    import numpy as np
    rng = np.random.default_rng(seed + 1)
    state = {}
    for i, (fan_in, fan_out) in zip((0, 2), zip(SIZES[:-1], SIZES[1:])):
        bound = 1.0 / np.sqrt(fan_in)
        state[f"{i}.weight"] = rng.uniform(-bound, bound, (fan_out, fan_in))
        state[f"{i}.bias"] = rng.uniform(-bound, bound, fan_out)
    return state


class EpochPermutations:
    """A sampler: each pass yields a new permutation of range(n) from one
    seeded NumPy generator (the same sequence in both frameworks)."""

    def __init__(self, n: int, seed: int):
        import numpy as np
        self.n = n
        self.rng = np.random.default_rng(seed + 2)

    def __iter__(self):
        return iter(self.rng.permutation(self.n).tolist())

    def __len__(self):
        return self.n


def setup(framework: str, cfg: dict) -> tuple:
    """(loader, model, optimizer, loss_fn), built the same way in both frameworks."""
    if framework == "retrograd":
        import retrograd as lib
        from retrograd import nn, optim
        from retrograd.utils.data import DataLoader, TensorDataset
        import retrograd.engine  # noqa: F401  (loaded by the first backward otherwise: keep it out of the timing)
    else:
        import torch as lib
        from torch import nn, optim
        from torch.utils.data import DataLoader, TensorDataset
    x, y = make_data(cfg["n"], cfg["seed"])
    loader = DataLoader(TensorDataset(lib.from_numpy(x), lib.from_numpy(y)), batch_size=cfg["batch_size"],
                        sampler=EpochPermutations(cfg["n"], cfg["seed"]))
    model = nn.Sequential(nn.Linear(SIZES[0], SIZES[1]), nn.ReLU(), nn.Linear(SIZES[1], SIZES[2]))
    model = model.to(lib.float64)
    model.load_state_dict({k: lib.from_numpy(v) for k, v in initial_parameters(cfg["seed"]).items()})
    if cfg["optimizer"] == "adam":
        opt = optim.Adam(model.parameters(), lr=cfg["lr"])
    else:
        opt = optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    return loader, model, opt, nn.CrossEntropyLoss()


def loop(loader, model, opt, loss_fn, epochs: int) -> list:
    """The measured training loop, what a user writes (identical in both); the per-step losses."""
    losses = []
    for _ in range(epochs):
        for xb, yb in loader:
            opt.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            opt.step()
            losses.append(loss.item())
    return losses


def train(framework: str, cfg: dict) -> tuple:
    """Set up and train once; return (seconds of the loop alone, list of per-step losses)."""
    parts = setup(framework, cfg)
    start = time.perf_counter()
    losses = loop(*parts, cfg["epochs"])
    return time.perf_counter() - start, losses


def worker(framework: str, cfg: dict, profile: bool = False) -> dict:
    """Run in a subprocess whose thread variables are already 1."""
    if framework == "torch":
        import torch
        torch.set_num_threads(1)
    times, losses = [], None
    for _ in range(cfg["repeats"]):
        seconds, run_losses = train(framework, cfg)
        times.append(seconds)
        losses = losses or run_losses
    result = {"framework": framework, "seconds": min(times), "all_seconds": times, "losses": losses}
    if profile:
        import cProfile
        import io
        import pstats
        parts = setup(framework, cfg)
        prof = cProfile.Profile()
        prof.enable()
        loop(*parts, cfg["epochs"])
        prof.disable()
        text = io.StringIO()
        stats = pstats.Stats(prof, stream=text)
        stats.sort_stats("tottime").print_stats(25)
        result["profile"] = text.getvalue()
    return result


def single_threaded_env() -> dict:
    """os.environ with every BLAS/OpenMP thread variable set to 1."""
    return {**os.environ, **{v: "1" for v in THREAD_VARS}}


def run_in_subprocess(framework: str, cfg: dict, profile: bool = False) -> dict:
    """Run :func:`worker` in a fresh single-threaded interpreter."""
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", framework, "--config", json.dumps(cfg)]
    if profile:
        cmd.append("--profile")
    proc = subprocess.run(cmd, capture_output=True, text=True, env=single_threaded_env())
    if proc.returncode:
        raise RuntimeError(f"the {framework} worker failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def compare(cfg: dict, profile: bool = False) -> dict:
    """Both runs, and what the closing note reports."""
    torch_res = run_in_subprocess("torch", cfg)
    rg_res = run_in_subprocess("retrograd", cfg, profile)
    diffs = [abs(a - b) for a, b in zip(rg_res["losses"], torch_res["losses"])]
    return {"retrograd": rg_res, "torch": torch_res, "ratio": rg_res["seconds"] / torch_res["seconds"],
            "max_loss_diff": max(diffs), "steps": len(diffs),
            "same_length": len(rg_res["losses"]) == len(torch_res["losses"])}


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for key, value in DEFAULTS.items():
        if key == "optimizer":
            p.add_argument("--optimizer", choices=("adam", "sgd"), default=value)
        else:
            p.add_argument(f"--{key.replace('_', '-')}", type=type(value), default=value)
    p.add_argument("--profile", action="store_true", help="cProfile the retrograd loop (one extra run)")
    p.add_argument("--worker", choices=("retrograd", "torch"), help=argparse.SUPPRESS)
    p.add_argument("--config", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, json.loads(args.config), args.profile)))
        return {}
    cfg = {k: getattr(args, k) for k in DEFAULTS}
    res = compare(cfg, args.profile)
    rg_s, t_s = res["retrograd"]["seconds"], res["torch"]["seconds"]
    print(f"MLP {'-'.join(map(str, SIZES))}, {cfg['optimizer']}, batch {cfg['batch_size']}, {cfg['epochs']} epochs "
          f"x {-(-cfg['n'] // cfg['batch_size'])} steps = {res['steps']} steps, float64, 1 thread; "
          f"best of {cfg['repeats']}")
    print(f"  torch      {t_s:.3f} s  ({1e3 * t_s / res['steps']:.3f} ms/step)")
    print(f"  retrograd  {rg_s:.3f} s  ({1e3 * rg_s / res['steps']:.3f} ms/step)")
    print(f"  ratio retrograd/torch: {res['ratio']:.2f}x  (target <= 1.2x)")
    print(f"  loss curves: max |difference| over {res['steps']} steps = {res['max_loss_diff']:.2e} "
          f"(must be <= 1e-6); final loss {res['retrograd']['losses'][-1]:.6f}")
    if args.profile:
        print("\ncProfile of the retrograd loop (sorted by own time):")
        print(res["retrograd"]["profile"])
    return res


if __name__ == "__main__":
    main()
