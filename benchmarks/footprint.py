"""How light retrograd is, as installed: total installed size of its
distributions, and what `import retrograd` costs on top of `import numpy`.

    python benchmarks/footprint.py [--runs N] [--torch]

Targets (benchmarks, never tests): all distributions together at
most 10 MB installed; `python -c "import retrograd"` at most NumPy's import
time + 50 ms. Measure on wheels as users install them (`nox -s bench`), not
on the development install (which checks its build on import). asv also
tracks both figures (the track_* functions below).
"""
from __future__ import annotations

import argparse
import importlib.metadata as md
import os
import statistics
import subprocess
import sys

SIZE_TARGET_MB = 10.0
IMPORT_MARGIN_MS = 50.0
DISTRIBUTIONS = ("retrograd-core", "retrograd-engine", "retrograd", "retrograd-forward-ad",
                 "retrograd-profiler")


def installed_sizes() -> dict:
    """{distribution: bytes of the files its RECORD lists} for those installed."""
    sizes = {}
    for dist in DISTRIBUTIONS:
        try:
            files = md.files(dist) or []
        except md.PackageNotFoundError:
            continue
        total = 0
        for f in files:
            path = f.locate()
            if os.path.isfile(path):
                total += os.path.getsize(path)
        sizes[dist] = total
    return sizes


def import_time_ms(module: str, runs: int, clock: str = "perf_counter") -> float:
    """Median time of `import module` in fresh interpreters (ms): the import
    alone, timed inside the child, so interpreter start is excluded. clock:
    "perf_counter" (wall) or "process_time" (CPU: what to trust on a loaded
    machine, where wall time measures the neighbours)."""
    code = ("import time; t = time.{c}(); import {m}; "
            "print((time.{c}() - t) * 1e3)").format(m=module, c=clock)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    times = []
    for _ in range(runs + 1):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                             check=True)
        times.append(float(out.stdout.strip().splitlines()[-1]))
    return statistics.median(times[1:])          # the first run warms the file cache


# asv: figures tracked across commits (`asv run` discovers track_* functions)
def track_installed_size_mb():
    sizes = installed_sizes()
    return sum(sizes.values()) / 1e6 if sizes else float("nan")    # nan: a development install


track_installed_size_mb.unit = "MB"


def track_import_overhead_ms():
    return import_time_ms("retrograd", 7) - import_time_ms("numpy", 7)


track_import_overhead_ms.unit = "ms"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--torch", action="store_true", help="also time `import torch`")
    args = parser.parse_args(argv)

    sizes = installed_sizes()
    if not sizes:
        print("no retrograd distribution is installed as a distribution (development install?)")
        return 1
    total = sum(sizes.values()) / 1e6
    for dist, size in sizes.items():
        print(f"{dist:24s} {size / 1e6:7.2f} MB")
    verdict = "ok" if total <= SIZE_TARGET_MB else "OVER"
    print(f"{'total installed':24s} {total:7.2f} MB   (target <= {SIZE_TARGET_MB:.0f} MB: {verdict})")

    numpy_ms = import_time_ms("numpy", args.runs)
    rg_ms = import_time_ms("retrograd", args.runs)
    over = rg_ms - numpy_ms
    print(f"import numpy             {numpy_ms:7.1f} ms  (median of {args.runs})")
    print(f"import retrograd         {rg_ms:7.1f} ms  = numpy + {over:.1f} ms "
          f"(target <= numpy + {IMPORT_MARGIN_MS:.0f} ms: {'ok' if over <= IMPORT_MARGIN_MS else 'OVER'})")
    numpy_cpu = import_time_ms("numpy", args.runs, "process_time")
    rg_cpu = import_time_ms("retrograd", args.runs, "process_time")
    print(f"CPU time: numpy {numpy_cpu:.1f} ms, retrograd {rg_cpu:.1f} ms = numpy + {rg_cpu - numpy_cpu:.1f} ms")
    if args.torch:
        print(f"import torch             {import_time_ms('torch', max(3, args.runs // 3)):7.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
