"""rg.compile against hand-written NumPy, eager retrograd and jax.jit.

    python benchmarks/compare.py --compile [--quick] [--no-jax]

Workloads (issue 18's targets): the 300-op chain and the 64x20 wide graph of
workloads.py (forward plus backward, as multiples of the hand-written NumPy
twin); the chain's first-call compile time (rg.compile and jax.jit, in this
process); a 100,000-op chain's compile time and run time; the MLP step; the
Hessian-vector product of sum(tanh(W @ x)**2), n=256, against the analytic
NumPy HVP. jax is optional (test- and bench-only): without it, its columns
are left out. Each figure is the best of interleaved repeats.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workloads as W  # noqa: E402


try:
    import numba  # noqa: F401
    BACKENDS = ("numpy", "numba")
except ImportError:
    BACKENDS = ("numpy",)


def best(fn, repeats=15, number=20):
    fn()
    b = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(number):
            fn()
        b = min(b, (time.perf_counter() - t) / number)
    return b


# -- the chain and the wide graph, written once per system --------------------------

def chain_rg(rg, steps):
    def f(x):
        y = x
        for _ in range(steps):
            y = (y * 1.01).sin() + 0.5
        return y.sum()
    return f


def wide_rg(rg):
    half = W.WIDE_DEPTH // 2

    def f(x):
        outs = []
        for _ in range(W.WIDE_BRANCHES):
            y = x
            for _ in range(half):
                y = (y * 1.01).tanh()
            outs.append(y.sum())
        total = outs[0]
        for o in outs[1:]:
            total = total + o
        return total
    return f


def chain_jax(jnp, steps):
    def f(x):
        y = x
        for _ in range(steps):
            y = jnp.sin(y * 1.01) + 0.5
        return y.sum()
    return f


def wide_jax(jnp):
    half = W.WIDE_DEPTH // 2

    def f(x):
        total = 0.0
        for _ in range(W.WIDE_BRANCHES):
            y = x
            for _ in range(half):
                y = jnp.tanh(y * 1.01)
            total = total + y.sum()
        return total
    return f


def grad_step(rg, f, x0):
    def run():
        x = rg.tensor(x0, requires_grad=True)
        f(x).backward()
        return x.grad
    return run


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer repeats")
    ap.add_argument("--no-jax", action="store_true")
    ap.add_argument("--long", type=int, default=100_000, help="ops of the long chain")
    args = ap.parse_args(argv)
    import retrograd as rg
    import retrograd.engine  # noqa: F401
    jax = None
    if not args.no_jax:
        try:
            import jax
            import jax.numpy as jnp
            jax.config.update("jax_enable_x64", True)
            jax.config.update("jax_platforms", "cpu")
        except ImportError:
            jax = None
    rep = 5 if args.quick else 15
    print(f"python {sys.version.split()[0]} | numpy {np.__version__}"
          + (f" | jax {jax.__version__}" if jax else " | jax: not installed"))

    def row(name, times, base="numpy"):
        line = f"{name:<26}" + "".join(f"{k}={v * 1e6:10.1f}us " for k, v in times.items())
        line += " | " + " ".join(f"{k}/{base} {v / times[base]:.2f}x" for k, v in times.items() if k != base)
        print(line, flush=True)

    steps = W.CHAIN_OPS // 3
    x0 = np.random.default_rng(0).standard_normal(16)
    x1 = np.random.default_rng(1).standard_normal(16)
    for name, np_run, f_rg, f_jax, xin in [
            ("chain_300 fwd+bwd", W.overhead_chain("numpy"), chain_rg(rg, steps),
             chain_jax(jnp, steps) if jax else None, x0),
            ("wide_64x20 fwd+bwd", W.overhead_wide("numpy"), wide_rg(rg),
             wide_jax(jnp) if jax else None, x1)]:
        runs = {"numpy": np_run, "eager": grad_step(rg, f_rg, xin)}
        for backend in BACKENDS:
            cf = rg.compile(f_rg, backend=backend)
            runs[f"compiled[{backend}]"] = grad_step(rg, cf, xin)
            runs[f"compiled[{backend}]"]()
            cf.wait()                    # the fused loops in use (built in the background)
        if f_jax is not None:
            gj = jax.jit(jax.grad(f_jax))
            xj = jnp.asarray(xin)
            runs["jax.jit"] = lambda gj=gj, xj=xj: gj(xj).block_until_ready()
        times = {k: float("inf") for k in runs}
        for k in runs:
            runs[k]()
        for _ in range(rep):
            for k, r in runs.items():
                times[k] = min(times[k], best(r, 1, 10))
        row(name, times)

    # first-call compile time of the chain: trace, build, verify (fresh
    # function); numba: in this process (its disk cache as it is), then in a
    # fresh process that finds the loops on disk
    # (numba: the first call returns with the numpy programs; "fused" is
    # when the background build of the loops was done)
    line = f"{'chain_300 first call':<26}"
    for backend in BACKENDS:
        t = time.perf_counter()
        cf = rg.compile(chain_rg(rg, steps), backend=backend)
        x = rg.tensor(x0, requires_grad=True)
        cf(x).backward()
        line += f"rg.compile[{backend}]={(time.perf_counter() - t) * 1e3:8.1f}ms "
        if backend != "numpy":
            cf.wait()
            line += f"(fused {(time.perf_counter() - t) * 1e3:8.1f}ms) "
    if "numba" in BACKENDS:
        first, fused = _second_process(steps)
        line += f"rg.compile[numba, 2nd process]={first * 1e3:8.1f}ms (fused {fused * 1e3:8.1f}ms) "
    if jax:
        t = time.perf_counter()
        gj = jax.jit(jax.grad(chain_jax(jnp, steps)))
        gj(jnp.asarray(x0)).block_until_ready()
        line += f" jax.jit={(time.perf_counter() - t) * 1e3:8.1f}ms"
    print(line, flush=True)

    # the long chain: compile time, then run time against NumPy's twin
    n_long = args.long
    long_steps = n_long // 3
    np_long = W.numpy_chain(x0, long_steps)
    for backend in BACKENDS:
        t = time.perf_counter()
        cf = rg.compile(chain_rg(rg, long_steps), backend=backend)
        x = rg.tensor(x0, requires_grad=True)
        cf(x).backward()
        cf.wait()                        # until the fused loops are in use
        compile_s = time.perf_counter() - t
        compiled = cf.cache_info()["compiled"] == 1
        tn = best(np_long, 3, 1)
        tc = best(grad_step(rg, cf, x0), 3, 1)
        print(f"{'chain_' + str(n_long) + '[' + backend + ']':<26}compile={compile_s:7.2f}s "
              f"compiled={compiled} run={tc * 1e3:8.1f}ms numpy={tn * 1e3:8.1f}ms | "
              f"compiled/numpy {tc / tn:.2f}x", flush=True)

    # MLP step (float32 and float64): compiled loss, backward through the node
    for dt in ("float32", "float64"):
        np_run = W.mlp_step("numpy", dt)
        eager = W.mlp_step("retrograd", dt)
        runs = {"numpy": np_run, "eager": eager}
        for backend in BACKENDS:
            runs[f"compiled[{backend}]"] = _mlp_compiled(rg, dt, backend)
        times = {k: float("inf") for k in runs}
        for r in runs.values():
            r()
        for _ in range(rep):
            for k, r in runs.items():
                times[k] = min(times[k], best(r, 1, 3))
        row(f"mlp_step[{dt}]", times)

    # HVP of sum(tanh(W @ x)**2), n = 256, through a compiled function
    runs = {"numpy": W.hvp_tanh("numpy"), "eager(fwAD)": W.hvp_tanh("retrograd"),
            "compiled[numpy]": _hvp_compiled(rg)}
    if jax:
        rng = np.random.default_rng(4)
        w = rng.standard_normal((W.HVP_N, W.HVP_N)) / np.sqrt(W.HVP_N)
        xv, vv = rng.standard_normal(W.HVP_N), rng.standard_normal(W.HVP_N)
        f = lambda x: (jnp.tanh(jnp.asarray(w) @ x) ** 2).sum()  # noqa: E731
        hvp = jax.jit(lambda x, v: jax.jvp(jax.grad(f), (x,), (v,))[1])
        xj, vj = jnp.asarray(xv), jnp.asarray(vv)
        runs["jax.jit"] = lambda: hvp(xj, vj).block_until_ready()
    times = {k: float("inf") for k in runs}
    for r in runs.values():
        r()
    for _ in range(rep):
        for k, r in runs.items():
            times[k] = min(times[k], best(r, 1, 20))
    row("hvp_tanh[n=256]", times)


def _second_process(steps):
    import subprocess
    code = ("import sys, time, numpy as np\n"
            f"sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r})\n"
            "import retrograd as rg, retrograd.engine, retrograd.compile, numba\n"
            "import compile_compare as C\n"
            f"cf = rg.compile(C.chain_rg(rg, {steps}), backend='numba')\n"
            "x = rg.tensor(np.random.default_rng(0).standard_normal(16), requires_grad=True)\n"
            "t = time.perf_counter(); cf(x).backward(); print(time.perf_counter() - t)\n"
            "cf.wait(); print(time.perf_counter() - t)\n")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    first, fused = map(float, out.stdout.split()[-2:])
    return first, fused


def _mlp_compiled(rg, dt, backend):
    dtype = np.dtype(dt)
    ws, bs, x, labels = W._mlp_data(dtype)
    onehot = np.eye(W.MLP_SIZES[-1], dtype=dtype)[labels]
    Wt = [rg.tensor(w, requires_grad=True) for w in ws]
    Bt = [rg.tensor(b, requires_grad=True) for b in bs]
    X = rg.from_numpy(x)
    OH = rg.from_numpy(onehot)
    n = W.MLP_BATCH

    @rg.compile(backend=backend)
    def loss_fn(X, OH):
        h = (X @ Wt[0] + Bt[0]).relu()
        h = (h @ Wt[1] + Bt[1]).relu()
        logits = h @ Wt[2] + Bt[2]
        return -(OH * logits.log_softmax(1)).sum() / n

    def run():
        for p in Wt + Bt:
            p.grad = None
        loss = loss_fn(X, OH)
        loss.backward()
        return loss
    run()
    loss_fn.wait()                       # the fused loops (if any) in use
    return run


def _hvp_compiled(rg):
    rng = np.random.default_rng(4)
    w = rng.standard_normal((W.HVP_N, W.HVP_N)) / np.sqrt(W.HVP_N)
    x = rng.standard_normal(W.HVP_N)
    v = rng.standard_normal(W.HVP_N)
    Wt, V = rg.tensor(w), rg.tensor(v)

    @rg.compile
    def hvp(X):
        (g,) = rg.autograd.grad((rg.tanh(Wt @ X) ** 2).sum(), (X,), create_graph=True)
        # create_graph: the formulas run as ops, which the trace records
        (hv,) = rg.autograd.grad(g, (X,), (V,), create_graph=True)
        return hv

    def run():
        return hvp(rg.tensor(x, requires_grad=True))
    run()
    hvp.wait()
    return run


if __name__ == "__main__":
    main()
