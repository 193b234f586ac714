"""Runs the fuzz cases on retrograd and torch in subprocesses and compares them.

    python tests/fuzz/runner.py [--seed S] [--cases N] [--jobs J] [--json FILE]

prints the summary (and the failures). Outcomes per case:
  both_ok / value_mismatch  - both succeed: shapes, dtypes, values, gradients compared
  both_raise / class_mismatch - both raise: the first builtin class of each compared
  rg_only_raises / torch_only_raises - one library raises
  crash / hang              - retrograd's worker died or timed out on the case
Known deliberate deviations (KNOWN_DEVIATIONS) are counted apart.
"""
from __future__ import annotations

import argparse
import collections
import json
import math
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from cases import describe, generate  # noqa: E402

CHUNK = 150
CHUNK_TIMEOUT = 120


def _run_worker(lib, seed, n, start, stop):
    """Lines of one worker over [start, stop); a case whose worker died or hung
    is recorded as crash/hang and the worker restarts after it."""
    results = {}
    while start < stop:
        try:
            p = subprocess.run([sys.executable, os.path.join(HERE, "worker.py"), lib, str(seed), str(n),
                                str(start), str(stop)], capture_output=True, text=True, timeout=CHUNK_TIMEOUT)
            out, rc, err = p.stdout, p.returncode, p.stderr
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            rc, err = None, "timeout"
        for line in out.splitlines():
            if line.startswith("{"):
                r = json.loads(line)
                results[r["i"]] = r
        done = [i for i in results if start <= i < stop]
        nxt = max(done) + 1 if done else start
        if nxt >= stop:
            break
        if rc == 0:
            raise RuntimeError(f"{lib} worker stopped early without error at case {nxt}: {err[-2000:]}")
        results[nxt] = {"i": nxt, "status": "hang" if rc is None else "crash", "detail": err[-1000:]}
        start = nxt + 1
    return results


def run(seed=0, n=2000, jobs=None):
    jobs = jobs or max(os.cpu_count() or 1, 1)
    chunks = [(s, min(s + CHUNK, n)) for s in range(0, n, CHUNK)]
    rg_res, th_res = {}, {}
    with ThreadPoolExecutor(jobs) as ex:
        futs = [(lib, ex.submit(_run_worker, lib, seed, n, a, b)) for a, b in chunks for lib in ("rg", "torch")]
        for lib, f in futs:
            (rg_res if lib == "rg" else th_res).update(f.result())
    cases = generate(seed, n)
    return [classify(c, rg_res[c["i"]], th_res[c["i"]]) for c in cases]


# --- comparison -------------------------------------------------------------------

def _num(v):
    if v == "nan":
        return float("nan")
    if v == "inf":
        return float("inf")
    if v == "-inf":
        return float("-inf")
    return v


def _close(a, b, tol):
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y, tol) for x, y in zip(a, b))
    a, b = _num(a), _num(b)
    if isinstance(a, bool) or isinstance(b, bool) or isinstance(a, str) or isinstance(b, str):
        return a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        if math.isinf(a) or math.isinf(b):
            return a == b
        return abs(a - b) <= tol * (1 + abs(b))
    return a == b


def _tol(dtype):
    return {"float16": 2e-3, "float32": 2e-5, "complex64": 2e-5}.get(dtype, 1e-9)


def compare_out(a, b, random_values=False):
    """None when equal, else a reason."""
    if "t" in a or "t" in b:
        if "t" not in a or "t" not in b:
            return f"kind {sorted(a)} vs {sorted(b)}"
        if a["shape"] != b["shape"]:
            return f"shape {a['shape']} vs torch {b['shape']}"
        if a["dtype"] != b["dtype"]:
            return f"dtype {a['dtype']} vs torch {b['dtype']}"
        if random_values:
            return None
        if not _close(a["t"], b["t"], _tol(a["dtype"])):
            return "values differ"
        return None
    if "seq" in a or "seq" in b:
        if "seq" not in a or "seq" not in b or len(a["seq"]) != len(b["seq"]):
            return "sequence length/kind differs"
        for x, y in zip(a["seq"], b["seq"]):
            r = compare_out(x, y, random_values)
            if r:
                return r
        return None
    if "py" in a and "py" in b:
        if a["type"] != b["type"]:
            return f"python type {a['type']} vs {b['type']}"
        return None if _close(a["py"], b["py"], 1e-12) else "python values differ"
    return None if a == b else f"{a} vs {b}"


def classify(case, r, t):
    d = {"i": case["i"], "op": case["op"], "case": describe(case), "mutated": case["mutated"]}
    rs, ts = r["status"], t["status"]
    if rs in ("crash", "hang", "timeout"):
        d.update(outcome="hang" if rs in ("hang", "timeout") else "crash", detail=r.get("detail", ""))
    elif ts in ("crash", "hang", "timeout"):
        d.update(outcome="torch_failed")
    elif rs == "raise" and ts == "raise":
        same = r["base"] == t["base"]
        d.update(outcome="both_raise" if same else "class_mismatch", rg=f"{r['exc']}: {r['msg']}",
                 torch=f"{t['exc']}: {t['msg']}", rg_base=r["base"], torch_base=t["base"])
    elif rs == "raise":
        d.update(outcome="rg_only_raises", rg=f"{r['exc']}: {r['msg']}")
    elif ts == "raise":
        d.update(outcome="torch_only_raises", torch=f"{t['exc']}: {t['msg']}")
    else:
        random_values = case["op"] in ("empty", "rand", "randn")
        why = compare_out(r["out"], t["out"], random_values)
        if why is None and r.get("grads") is not None and t.get("grads") is not None:
            for j, (ga, gb) in enumerate(zip(r["grads"], t["grads"])):
                if ga is None or gb is None:
                    if (ga is None) != (gb is None) and not _zero_grad(ga or gb):
                        why = f"grad {j}: None vs defined"
                    continue
                w = compare_out(ga, gb)
                if w:
                    why = f"grad {j}: {w}"
                    break
        elif why is None and (r.get("grads") is None) != (t.get("grads") is None):
            why = f"gradients: rg {r.get('grads_exc') or r.get('grads') is not None} torch " \
                  f"{t.get('grads_exc') or t.get('grads') is not None}"
        d.update(outcome="both_ok" if why is None else "value_mismatch", why=why)
    return d


def _zero_grad(g):
    vals = g.get("t")
    flat = []

    def walk(v):
        if isinstance(v, list):
            for x in v:
                walk(x)
        else:
            flat.append(v)
    walk(vals)
    return all(v == 0 for v in flat)


def summarize(results, known=()):
    c = collections.Counter(r["outcome"] for r in results)
    both = c["both_raise"] + c["class_mismatch"]
    rate = c["both_raise"] / both if both else 1.0
    return c, rate


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cases", type=int, default=2000)
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--json")
    ap.add_argument("--show", default="class_mismatch,value_mismatch,crash,hang,rg_only_raises,torch_only_raises")
    a = ap.parse_args()
    results = run(a.seed, a.cases, a.jobs)
    from known import known_reason
    for r in results:
        reason = known_reason(r)
        if reason:
            r["known"] = reason
    c, rate = summarize(results)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    show = set(a.show.split(","))
    for r in results:
        if r["outcome"] in show:
            extra = r.get("why") or ""
            print(f"[{r['outcome']}{' KNOWN: ' + r['known'] if r.get('known') else ''}] {r['case']} "
                  f"| rg: {r.get('rg', '')[:150]} | torch: {r.get('torch', '')[:150]} {extra}")
    print(dict(c))
    print(f"exception-class match rate (both raise): {rate:.1%} of {c['both_raise'] + c['class_mismatch']}")
    unknown = collections.Counter(r["outcome"] for r in results if not r.get("known"))
    print("not known:", dict(unknown))


if __name__ == "__main__":
    main()
