"""retrograd vs PyTorch vs hand-written NumPy, side by side in one run.

    python benchmarks/compare.py [--quick] [--only overhead_chain,mlp_step] [--no-torch]
    python benchmarks/compare.py --device cuda [--quick] [--no-torch]   (cuda_compare.py)

Times each workload of workloads.py (best of several repeats, after a warm-up)
and prints microseconds per op (or milliseconds per step) and the ratios to
hand-written NumPy and to PyTorch. Peak memory is measured in a fresh
subprocess per framework: the rise of the process's peak RSS over its value
right before the workload (imports and data already in place; Linux only).
"""
from __future__ import annotations

import os

# One BLAS thread for NumPy, as torch.set_num_threads(1) below for PyTorch:
# on a 2-core machine, threaded BLAS timings swing by 2x from run to run.
# (Set before NumPy is imported; the memory subprocesses inherit it.)
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import gc
import json
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workloads as W  # noqa: E402

FRAMEWORKS = ("numpy", "retrograd", "torch")


def best_time(fn, repeats, number, warm=True):
    if warm:
        fn()                              # warm-up (also builds caches)
    best = float("inf")
    for _ in range(repeats):
        gc.collect()
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - t0) / number)
    return best


def peak_rss_delta(workload, framework, extra):
    """Peak RSS rise (bytes) of one run, measured in a fresh subprocess."""
    # Linux: writing 5 to clear_refs resets the peak (VmHWM) to the current RSS,
    # so the peak after the run minus the RSS before it is what the run added.
    code = (
        "import sys, gc, json; sys.path.insert(0, %r); import workloads as W\n"
        "def status(key):\n"
        "    for line in open('/proc/self/status'):\n"
        "        if line.startswith(key): return int(line.split()[1]) * 1024\n"
        "fn = getattr(W, %r)(%r, **%s)\n"
        "gc.collect()\n"
        "open('/proc/self/clear_refs', 'w').write('5')\n"
        "before = status('VmRSS:')\n"
        "fn()\n"
        "print(json.dumps(status('VmHWM:') - before))\n"
    ) % (os.path.dirname(os.path.abspath(__file__)), workload, framework, json.dumps(extra))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def fmt_ratio(a, b):
    return f"{a / b:5.2f}x" if b else "   - "


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--device" in argv or any(a.startswith("--device=") for a in argv):
        # the GPU workloads have their own script (they need CuPy and a device)
        dev_ap = argparse.ArgumentParser(add_help=False)
        dev_ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
        dev_args, rest = dev_ap.parse_known_args(argv)
        if dev_args.device == "cuda":
            import cuda_compare
            return cuda_compare.main(rest)
        argv = rest
    if "--compile" in argv:
        # rg.compile's workloads (issue 18) have their own script
        import compile_compare
        return compile_compare.main([a for a in argv if a != "--compile"])
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer repeats, smaller deep_chain")
    ap.add_argument("--only", default="", help="comma-separated workloads")
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--no-memory", action="store_true")
    ap.add_argument("--per-op", action="store_true",
                    help="also time every elementwise op on its own (per_op.py)")
    args = ap.parse_args(argv)
    fws = [f for f in FRAMEWORKS if not (args.no_torch and f == "torch")]
    if "torch" in fws:
        try:
            import torch
            torch.set_num_threads(1)
        except ImportError:
            fws.remove("torch")
    only = set(filter(None, args.only.split(",")))
    rep = 5 if args.quick else 15
    deep_ops = 100_000 if args.quick else W.DEEP_OPS

    import numpy as np
    print(f"python {sys.version.split()[0]} | numpy {np.__version__}"
          + (f" | torch {__import__('torch').__version__}" if "torch" in fws else ""))
    rows = []

    def timed(name, per, unit, builder, *bargs, number=5, frameworks=None, **bkw):
        if only and name.split("[")[0].strip() not in only and not name.startswith("  "):
            return
        fws_here = [fw for fw in fws if frameworks is None or fw in frameworks]
        # Interleave the frameworks, repeat by repeat, and keep each one's best:
        # the machine's speed drifts (shared cores), and a ratio of two bests
        # taken minutes apart would measure the drift.
        fns = {fw: builder(fw, *bargs, **bkw) for fw in fws_here}
        times = {fw: float("inf") for fw in fws_here}
        for fw in fws_here:
            fns[fw]()                          # warm-up
        for _ in range(rep):
            for fw in fws_here:
                times[fw] = min(times[fw], best_time(fns[fw], 1, number, warm=False) / per)
        scale = 1e6 if unit == "us/op" else 1e3
        line = f"{name:<26}" + "".join(f"{fw}={times[fw] * scale:9.2f} " for fw in fws_here) + unit
        if "numpy" in times:
            line += f" | retrograd/numpy {fmt_ratio(times['retrograd'], times['numpy'])}"
        if "torch" in times:
            if "numpy" in times:
                line += f" | torch/numpy {fmt_ratio(times['torch'], times['numpy'])}"
            line += f" | retrograd/torch {fmt_ratio(times['retrograd'], times['torch'])}"
        print(line, flush=True)
        rows.append({"name": name, "unit": unit, **{fw: times[fw] for fw in fws_here}})

    timed("overhead_chain", W.CHAIN_OPS, "us/op", W.overhead_chain, number=20)
    timed("overhead_wide", W.wide_op_count(), "us/op", W.overhead_wide, number=5)
    # the profiler's per-op cost: subtract overhead_chain's figure
    timed("profiled_chain", W.CHAIN_OPS * W.PROFILED_REPS, "us/op", W.profiled_chain, number=2)
    for dt in ("float32", "float64"):
        timed(f"mlp_step[{dt}]", 1, "ms/step", W.mlp_step, dt, number=5)
    # --- forward AD (retrograd-forward-ad) ---
    for dt in ("float32", "float64"):
        timed(f"mlp_jvp[{dt}]", 1, "ms/step", W.mlp_jvp, dt, number=5)
    timed("hvp_tanh", 1, "ms/step", W.hvp_tanh, number=20)
    # --- nn.functional ---
    timed("conv2d_step[float32]", 1, "ms/step", W.conv2d_step, "float32", number=2)
    timed("cnn_step[float32]", 1, "ms/step", W.cnn_step, "float32", number=2)
    timed("index_backward[float32]", 1, "ms/step", W.index_backward, "float32", number=2)
    # --- model training steps, float32, against torch only (model_workloads.py) ---
    import model_workloads as M
    both = ("retrograd", "torch")
    timed("lstm_lm_step", 1, "ms/step", M.lstm_lm_step, number=1, frameworks=both)
    timed("transformer_encoder_step", 1, "ms/step", M.transformer_encoder_step, number=1, frameworks=both)
    timed("gan_step", 1, "ms/step", M.gan_step, number=1, frameworks=both)
    timed("dataloader_cnn_epoch", 1, "ms/epoch", M.dataloader_cnn_epoch, number=1, frameworks=both)
    if not only or "deep_chain" in only:
        timed("deep_chain", deep_ops, "us/op", W.deep_chain, ops=deep_ops, number=1)

    if args.per_op:
        import per_op
        print(f"per-op overhead ({per_op.WIDTH} applications on ({per_op.SIZE},), forward + backward):")
        for name in per_op.available():
            timed(f"  {name}", per_op.WIDTH, "us/op", per_op.per_op, name, number=20)

    if not args.no_memory:
        print("peak memory (rise of peak RSS during one forward+backward, fresh process):")
        mem_cases = [("mlp_step", {"dtype": "float32"}), ("mlp_step", {"dtype": "float64"}),
                     ("deep_chain", {"ops": deep_ops})]
        for wl, extra in mem_cases:
            if only and wl not in only:
                continue
            peaks = {fw: peak_rss_delta(wl, fw, extra) for fw in fws}
            label = f"{wl}[{extra.get('dtype', extra.get('ops'))}]"
            line = f"{label:<24}" + "".join(f"{fw}={peaks[fw] / 2**20:8.1f}MB " for fw in fws)
            line += f"| retrograd/numpy {fmt_ratio(peaks['retrograd'], peaks['numpy'])}"
            if "torch" in peaks:
                line += f" | torch/numpy {fmt_ratio(peaks['torch'], peaks['numpy'])}"
            print(line, flush=True)
        if not only or "checkpoint_mlp" in only:
            # Activation checkpointing: peak of each mode as a share of the
            # same model without checkpointing; [frozen]: gradient for the input only.
            # (weights_grad is passed as 0/1: the subprocess code embeds it as JSON)
            for fw, wg in [(f, wg) for wg in (1, 0) for f in fws if f != "numpy"]:
                peaks = {m: peak_rss_delta("checkpoint_mlp", fw, {"mode": m, "weights_grad": wg})
                         for m in ("plain", "layer", "segments")}
                label = "checkpoint_mlp" + ("" if wg else "[frozen]")
                line = f"{label:<24}{fw}: " + " ".join(
                    f"{m}={peaks[m] / 2**20:7.1f}MB" for m in peaks)
                line += (f" | layer/plain {100 * peaks['layer'] / peaks['plain']:5.1f}%"
                         f" | segments/plain {100 * peaks['segments'] / peaks['plain']:5.1f}%")
                print(line, flush=True)
    return rows


if __name__ == "__main__":
    main()
