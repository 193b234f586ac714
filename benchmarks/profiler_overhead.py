"""The profiler's cost when no profile records (the target: within 2 % of
the figure without retrograd-profiler) and its per-op cost while one records,
beside torch.profiler's.

    python benchmarks/profiler_overhead.py [--rounds 7]

idle: overhead_chain in two fresh processes, taken in turns round after
round (the machine's speed drifts): one imports retrograd.profiler and runs
(and ends) a profile first, the other cannot import it at all. Each prints
its best time; the ratio of the bests is the idle cost.
active: profiled_chain minus overhead_chain, per op, for retrograd and torch.
"""
from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

_IDLE = r"""
import sys, time, gc, importlib.abc
sys.path.insert(0, %(here)r)
if %(blocked)r:
    class _Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == "retrograd.profiler" or name.startswith("retrograd.profiler."):
                raise ModuleNotFoundError(name, name=name)
    sys.meta_path.insert(0, _Block())
import workloads as W
import numpy as np
import retrograd as rg
if not %(blocked)r:
    import retrograd.profiler
    with retrograd.profiler.profile():
        rg.tensor(np.ones(2)) * 2             # fill and empty the slot once
fn = W.overhead_chain("retrograd")
fn()
best = float("inf")
for _ in range(%(repeats)d):
    gc.collect()
    t0 = time.perf_counter()
    for _ in range(20):
        fn()
    best = min(best, (time.perf_counter() - t0) / 20 / W.CHAIN_OPS)
print(best)
"""


def idle_best(blocked: bool, repeats: int) -> float:
    code = _IDLE % {"here": HERE, "blocked": blocked, "repeats": repeats}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--repeats", type=int, default=15, help="timed repeats per process")
    ap.add_argument("--no-torch", action="store_true")
    args = ap.parse_args(argv)
    best = {True: float("inf"), False: float("inf")}
    for _ in range(args.rounds):
        for blocked in (True, False):
            best[blocked] = min(best[blocked], idle_best(blocked, args.repeats))
    print(f"idle   overhead_chain: without retrograd-profiler {best[True] * 1e6:.3f} us/op, "
          f"installed and idle {best[False] * 1e6:.3f} us/op "
          f"({100 * (best[False] / best[True] - 1):+.2f} %)")

    sys.path.insert(0, HERE)
    import compare
    import workloads as W
    fws = ["retrograd"] if args.no_torch else ["retrograd", "torch"]
    if "torch" in fws:
        import torch
        torch.set_num_threads(1)
    plain = {fw: W.overhead_chain(fw) for fw in fws}
    prof = {fw: W.profiled_chain(fw) for fw in fws}
    t_plain = {fw: float("inf") for fw in fws}
    t_prof = {fw: float("inf") for fw in fws}
    for fw in fws:
        plain[fw]()
        prof[fw]()
    for _ in range(args.rounds):
        for fw in fws:
            t_plain[fw] = min(t_plain[fw], compare.best_time(plain[fw], 1, 10, warm=False) / W.CHAIN_OPS)
            t_prof[fw] = min(t_prof[fw], compare.best_time(prof[fw], 1, 1, warm=False)
                             / (W.CHAIN_OPS * W.PROFILED_REPS))
    for fw in fws:
        print(f"active {fw:<9}: overhead_chain {t_plain[fw] * 1e6:.3f} us/op, profiled "
              f"{t_prof[fw] * 1e6:.3f} us/op, profiler cost {(t_prof[fw] - t_plain[fw]) * 1e6:.3f} us/op")


if __name__ == "__main__":
    main()
