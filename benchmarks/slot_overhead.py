"""Does installing an optional distribution cost the hot path anything?

    python benchmarks/slot_overhead.py retrograd.forward_ad [--rounds 7]

Times overhead_chain (workloads.py) in fresh subprocesses, alternately
without and with the given module imported (installed but idle: no dual
level / no profile active), and prints the best per-op time of each and
their ratio. An idle optional distribution leaves its core slot empty, so the
ratio should be 1.00 within noise (the issues' target: within 2 %).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys

CHILD = r"""
import sys, time
sys.path.insert(0, {bench!r})
import workloads as W
{extra}
run = W.overhead_chain("retrograd")
run()
best = float("inf")
for _ in range(30):
    t = time.perf_counter()
    for _ in range(20):
        run()
    best = min(best, (time.perf_counter() - t) / 20)
print(best / W.CHAIN_OPS)
"""


def _time(module):
    bench = os.path.dirname(os.path.abspath(__file__))
    extra = f"import {module}" if module else ""
    out = subprocess.run([sys.executable, "-c", CHILD.format(bench=bench, extra=extra)],
                         check=True, capture_output=True, text=True).stdout
    return float(out.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("module", help="the optional distribution's module, e.g. retrograd.forward_ad")
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args(argv)
    without, with_ = float("inf"), float("inf")
    for _ in range(args.rounds):
        without = min(without, _time(None))
        with_ = min(with_, _time(args.module))
    print(f"overhead_chain without {args.module}: {without * 1e6:.3f} us/op")
    print(f"overhead_chain with    {args.module}: {with_ * 1e6:.3f} us/op")
    print(f"ratio with/without: {with_ / without:.3f}")


if __name__ == "__main__":
    main()
