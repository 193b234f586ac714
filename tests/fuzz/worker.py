"""Runs a slice of the fuzz cases on one library and prints one JSON line per case.

    python worker.py rg|torch SEED N START STOP

Each line: {"i", "status": "ok"|"raise"|"timeout", ...}; for "ok" the outputs
(arrays as nested lists plus dtype and shape) and, where the op is
differentiable, the gradients of sum(out * w) for fixed weights w; for
"raise" the exception's class, its first builtin base and message. The
parent (runner.py) compares the two libraries' lines. A case that kills the
process (a crash) or blocks in C beyond the parent's timeout leaves no line:
the parent sees where the stream stopped.
"""
from __future__ import annotations

import builtins
import json
import math
import os
import signal
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cases import array_of, generate, is_t  # noqa: E402

LIB = sys.argv[1] if __name__ == "__main__" else "rg"
CASE_TIMEOUT = 10


class CaseTimeout(BaseException):
    pass


def _alarm(signum, frame):
    raise CaseTimeout()


if LIB == "torch":
    import torch as L
    import torch.nn.functional as F
    # both libraries run with float64 as the default dtype: the fuzz compares
    # values to float64 precision, dtypes one to one
    L.set_default_dtype(L.float64)
else:
    import retrograd as L
    import retrograd.nn.functional as F
    L.set_default_dtype(L.float64)


def _tensor(spec, requires_grad=False):
    a = np.asarray(array_of(spec))      # 0-d draws come back as NumPy scalars
    if LIB == "torch":
        t = L.from_numpy(a.copy()) if a.dtype.kind != "b" or a.ndim else L.tensor(bool(a))
    else:
        t = L.tensor(a)
    if requires_grad and a.dtype.kind in "fc":
        t.requires_grad_(True)
    return t


def _other_lib_tensor(spec):
    # a tensor of the OTHER library mixed into a call
    a = np.asarray(array_of(spec))
    if LIB == "torch":
        import retrograd
        return retrograd.tensor(a)
    import torch
    return torch.from_numpy(a.copy())


def materialize(a, leaves, grad):
    if is_t(a):
        t = _tensor(a, grad)
        if grad and t.requires_grad:
            leaves.append(t)
        return t
    if isinstance(a, dict):
        if "np" in a:
            return np.dtype(a["np"]).type(a["v"])
        if "torch" in a:
            return _other_lib_tensor(a["torch"])
        if "torch0" in a:
            return L.tensor(a["torch0"])      # a 0-d int tensor of this library
        if "dtype" in a:
            return getattr(L, a["dtype"])
        return {k: materialize(v, leaves, grad) for k, v in a.items()}
    if isinstance(a, list):
        return [materialize(x, leaves, grad) for x in a]
    if isinstance(a, tuple):
        return tuple(materialize(x, leaves, grad) for x in a)
    return a


def call(case, args, kwargs):
    kind, tname = case["kind"], case["tname"]
    if kind == "fn":
        return getattr(L, tname)(*args, **kwargs)
    if kind == "F":
        return getattr(F, tname)(*args, **kwargs)
    if kind == "create":
        return getattr(L, tname)(*args, **kwargs)
    if kind == "method":
        x, *rest = args
        if tname == "to" and rest and isinstance(rest[0], dict):
            return x.to(**rest[0])
        return getattr(x, tname)(*rest, **kwargs)
    if kind == "op":
        return args[0] @ args[1]
    if kind == "index":
        return args[0][args[1]]
    if kind == "setitem":
        x = args[0].clone()
        x[args[1]] = args[2]
        return x
    if kind == "format":
        out = format(args[0], args[1])
        # str() of a bigger tensor is each library's own repr: compare the type only
        return out if getattr(args[0], "ndim", 0) == 0 else "<formatted tensor>"
    if kind == "backward":
        x = args[0]
        x.requires_grad_()
        (x * x).sum().backward(**kwargs)
        return x.grad
    if kind == "grad":
        x = args[0]
        x.requires_grad_()
        inputs = [x] if isinstance(args[1], str) and args[1] == "self" else args[1]
        return L.autograd.grad((x * x).sum(), inputs=inputs, **kwargs)
    raise AssertionError(kind)


def _builtin_base(exc_type):
    for k in exc_type.__mro__:
        if getattr(builtins, k.__name__, None) is k:
            return k.__name__
    return "BaseException"


def _is_tensor(x):
    return type(x).__name__ == "Tensor" or isinstance(x, L.Tensor)


def encode(out):
    if _is_tensor(out):
        a = out.detach()
        a = a.numpy() if LIB == "torch" else np.asarray(a)
        dt = str(a.dtype)
        if a.dtype == np.float16 or a.dtype.kind == "c":
            a = a.astype(np.complex128) if a.dtype.kind == "c" else a.astype(np.float64)
        vals = a.tolist() if a.dtype.kind != "c" else [np.real(a).tolist(), np.imag(a).tolist()]
        return {"t": _clean(vals), "dtype": dt, "shape": list(a.shape)}
    if isinstance(out, (tuple, list)):
        return {"seq": [encode(o) for o in out]}
    if isinstance(out, (bool, int, float, str)) or out is None:
        return {"py": _clean(out), "type": type(out).__name__}
    if isinstance(out, np.generic):
        return {"py": _clean(out.item()), "type": type(out.item()).__name__}
    return {"other": type(out).__name__}


def _clean(v):
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
    if isinstance(v, list):
        return [_clean(x) for x in v]
    return v


def _float_outputs(out):
    outs = out if isinstance(out, (tuple, list)) else [out]
    res = []
    for o in outs:
        if _is_tensor(o) and o.requires_grad and str(o.dtype).replace("torch.", "") in ("float32", "float64"):
            res.append(o)
    return res


def _grads(case):
    leaves = []
    args = materialize(case["args"], leaves, True)
    kwargs = materialize(case["kwargs"], leaves, True)
    if not leaves:
        return None
    out = call(case, args, kwargs)
    outs = _float_outputs(out)
    if not outs:
        return None
    total = None
    for j, o in enumerate(outs):
        w = np.cos(np.arange(int(np.prod(tuple(o.shape)))) + j).reshape(tuple(o.shape))
        wt = L.from_numpy(w.astype(str(o.dtype).replace("torch.", "")))
        s = (o * wt).sum()
        total = s if total is None else total + s
    gs = L.autograd.grad(total, leaves, allow_unused=True)
    return [None if g is None else encode(g) for g in gs]


def run_case(case):
    res = {"i": case["i"]}
    signal.alarm(CASE_TIMEOUT)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            np.seterr(all="ignore")
            try:
                out = call(case, materialize(case["args"], [], False), materialize(case["kwargs"], [], False))
                res["status"] = "ok"
                res["out"] = encode(out)
            except CaseTimeout:
                raise
            except Exception as e:  # noqa: BLE001 - every exception is a result here
                res["status"] = "raise"
                res["exc"] = type(e).__name__
                res["base"] = _builtin_base(type(e))
                res["msg"] = str(e)[:300]
                return res
            if case["kind"] not in ("create", "format"):
                try:
                    res["grads"] = _grads(case)
                except CaseTimeout:
                    raise
                except Exception as e:  # noqa: BLE001
                    res["grads_exc"] = f"{type(e).__name__}: {str(e)[:200]}"
    except CaseTimeout:
        res = {"i": case["i"], "status": "timeout"}
    finally:
        signal.alarm(0)
    return res


def main():
    seed, n, start, stop = map(int, sys.argv[2:6])
    signal.signal(signal.SIGALRM, _alarm)
    cases = generate(seed, n)
    for case in cases[start:stop]:
        if LIB == "torch":
            L.manual_seed(0)
        print(json.dumps(run_case(case)), flush=True)


if __name__ == "__main__":
    main()
