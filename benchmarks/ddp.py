"""DistributedDataParallel's cost: an MLP training step over 2 MPI ranks
against one process, and how much of the all-reduce backward hides.

    python benchmarks/ddp.py [--steps 30] [--width 512] [--layers 6] [--batch 64]

Starts `python -m retrograd.distributed.run --nproc 2 benchmarks/ddp.py
--worker` (each rank: the single batch, so the job trains on a batch twice
as large) and one plain process on the single batch, each with one BLAS
thread (OMP_NUM_THREADS=1 etc.), and reports:

- step ratio: the median DDP step time over the median single-process one
  (1.0 would be perfect scaling);
- hidden: 1 - (time backward's end-of-backward callback waits for the
  buckets) / (time the same all-reduces take run one after the other after
  backward, nothing to overlap with), medians over the steps;
- check: the cost of the cross-rank shape/dtype check per collective (a
  small all-reduce with RETROGRAD_DISTRIBUTED_CHECKS on and off).
"""
from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402


def _model(rg, width, layers):
    rg.manual_seed(0)
    mods = [rg.nn.Linear(64, width), rg.nn.ReLU()]
    for _ in range(layers - 2):
        mods += [rg.nn.Linear(width, width), rg.nn.ReLU()]
    mods.append(rg.nn.Linear(width, 10))
    return rg.nn.Sequential(*mods)


def worker(args):
    import numpy as np
    import retrograd as rg
    model = _model(rg, args.width, args.layers)
    ddp = None
    if not args.single:
        import retrograd.distributed as dist
        dist.init_process_group("mpi")
        ddp = rg.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=args.bucket_mb)
    net = ddp if ddp is not None else model
    opt = rg.optim.SGD(net.parameters(), lr=1e-3)
    rng = np.random.default_rng(0)
    x = rg.tensor(rng.standard_normal((args.batch, 64)).astype(np.float32))
    y = rg.tensor(rng.integers(0, 10, args.batch))
    loss_fn = rg.nn.CrossEntropyLoss()
    steps, waits, serial = [], [], []
    for i in range(args.warmup + args.steps):
        if ddp is not None:
            dist.barrier()
        t0 = time.perf_counter()
        opt.zero_grad()
        loss_fn(net(x), y).backward()
        opt.step()
        t1 = time.perf_counter()
        if i < args.warmup:
            continue
        steps.append(t1 - t0)
        if ddp is not None:
            waits.append(ddp.reducer.wait_seconds)
            # the same all-reduces with nothing to overlap: one after the other
            dist.barrier()
            s0 = time.perf_counter()
            for b in ddp.reducer.buckets:
                dist.all_reduce(rg.core.extending.wrap(b.buffer))
            serial.append(time.perf_counter() - s0)
    out = {"step": statistics.median(steps)}
    if ddp is not None:
        out.update(wait=statistics.median(waits), serial=statistics.median(serial),
                   buckets=len(ddp.reducer.buckets),
                   bucket_mb=[round(b.buffer.nbytes / 2**20, 2) for b in ddp.reducer.buckets])
        # the shape check's cost: a 1-element all-reduce, check on and off
        small = rg.ones(1)
        for flag in ("1", "0"):
            os.environ["RETROGRAD_DISTRIBUTED_CHECKS"] = flag
            times = []
            for _ in range(200):
                t0 = time.perf_counter()
                dist.all_reduce(small)
                times.append(time.perf_counter() - t0)
            out[f"small_allreduce_checks_{flag}"] = statistics.median(times)
        if dist.get_rank() == 0:
            print(json.dumps(out))
        dist.destroy_process_group()
    else:
        print(json.dumps(out))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--width", type=int, default=512)
    p.add_argument("--layers", type=int, default=6)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--bucket-mb", type=float, default=1.0)
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--single", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        worker(args)
        return
    passed = [a for a in sys.argv[1:]]
    me = os.path.abspath(__file__)
    single = subprocess.run([sys.executable, me, "--worker", "--single", *passed], capture_output=True,
                            text=True, check=True, timeout=600)
    multi = subprocess.run([sys.executable, "-m", "retrograd.distributed.run", "--nproc", "2", me, "--worker",
                            *passed], capture_output=True, text=True, timeout=600)
    if multi.returncode != 0:
        sys.exit(f"the 2-rank job failed:\n{multi.stdout}\n{multi.stderr}")
    s = json.loads(single.stdout.strip().splitlines()[-1])
    m = json.loads(multi.stdout.strip().splitlines()[-1])
    hidden = max(0.0, 1.0 - m["wait"] / m["serial"]) if m["serial"] > 0 else float("nan")
    print(f"MLP {args.layers} Linear layers, width {args.width}, float32, batch {args.batch} per process, "
          f"{m['buckets']} buckets of {m['bucket_mb']} MiB")
    print(f"single process, batch {args.batch}:       {s['step'] * 1e3:8.2f} ms/step")
    print(f"DDP 2 ranks, batch {2 * args.batch} in all:     {m['step'] * 1e3:8.2f} ms/step")
    print(f"step-time ratio (DDP / single):  {m['step'] / s['step']:8.2f}")
    print(f"all-reduces one after the other: {m['serial'] * 1e3:8.2f} ms; waited at the end of backward: "
          f"{m['wait'] * 1e3:.2f} ms; hidden behind backward: {hidden:.0%}")
    print(f"1-element all_reduce: {m['small_allreduce_checks_1'] * 1e6:.1f} us with the shape check, "
          f"{m['small_allreduce_checks_0'] * 1e6:.1f} us without")


if __name__ == "__main__":
    main()
