"""The forward (JVP) formulas of derivatives.yaml (`result:`), evaluated on
every sample of the registry and compared with central differences along a
random tangent. retrograd-forward-ad consumes these formulas; checking them
here catches a wrong table entry before any dual tensor exists.

The formulas are evaluated with Tensor ops under no_grad, in the formula
vocabulary of _codegen/formulas.py (tensor mode, namespace T)."""
import ast
import functools
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import retrograd as rg  # noqa: E402
from retrograd.core import abi  # noqa: E402
from op_samples import DIFF_OPS, TABLE, all_samples, make_tensors  # noqa: E402
import opcheck  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "core", "retrograd", "core", "_codegen"))
import formulas as V  # noqa: E402


def _relu_mask(x):
    a = np.asarray(x)
    return rg.from_numpy(np.asarray(a != 0).astype(a.dtype))


SPECIAL = {
    "sum_to": rg.sum_to,
    "relu_mask": _relu_mask,
    "_to_dtype": lambda x, d: x.to(d),
    "_to_device": lambda x, d: x.to(d),
    "expand": lambda x, shape: rg.expand(x, tuple(shape)),
}


def _namespace():
    ns = {}
    for name, (_, tcode) in V.PRIMITIVES.items():
        if name in SPECIAL:
            ns[name] = SPECIAL[name]
        else:
            op = tcode[len("_op_"):]
            ns[name] = getattr(rg, op) if hasattr(rg, op) else getattr(abi, op)   # private ops
    for name in V.NS_HELPERS:
        ns[name] = functools.partial(getattr(abi, name), abi.T)
    for name in V.VALUE_HELPERS:
        ns[name] = getattr(abi, name)
    return ns


NS = _namespace()


def _signature(op_name):
    sig = TABLE[op_name]["signature"]
    body = sig.split("(", 1)[1].rsplit(")", 1)[0]
    params = []
    for raw in (p.strip() for p in body.split(",")):
        if not raw or raw == "*":
            continue
        default = None
        if "=" in raw:
            raw, d = (s.strip() for s in raw.split("=", 1))
            default = ast.literal_eval(d)
        parts = raw.split()
        params.append((parts[-1], len(parts) == 2 and parts[0] == "Tensor", default))
    return params


def _bind(op_name, sample):
    """name -> value for the table's parameters, from a sample."""
    params = _signature(op_name)
    values = {}
    for (name, _, default), a in zip(params, list(sample.args) + [None] * len(params)):
        values[name] = default
    for (name, _, _), a in zip(params, sample.args):
        values[name] = a
    values.update(sample.kwargs)
    return params, values


def _jvp(op, sample, tangents):
    """The table's JVP of `op` at the sample, along `tangents` (one array per
    differentiable argument, in order)."""
    info = TABLE[op.name]
    params, values = _bind(op.name, sample)
    targs, _ = make_tensors(sample, requires_grad=False)
    with rg.no_grad():
        result = op.op(*targs, **sample.kwargs)
        env = {"result": result}
        tan_iter = iter(tangents)
        tensors = {}
        for (name, is_tensor, _), a, ta in zip(params, sample.args, targs):
            if not is_tensor:
                continue
            tensors[name] = ta
            if isinstance(a, np.ndarray) and a.dtype.kind == "f":
                tangent = rg.from_numpy(next(tan_iter))
            else:
                tangent = 0.0
            env[f"{name}_p"] = ta
            env[f"{name}_t"] = tangent
        for name, is_tensor, _ in params:
            if not is_tensor:
                env[name] = values[name]
        jvp = info["jvp"]
        if jvp == "auto_linear":
            call = [env[f"{n}_t"] if t else values[n] for n, t, _ in params]
            return np.asarray(info_call(op, call, params, sample))
        if jvp == "auto_element_wise":
            (inp,) = [n for n, t, _ in params if t]
            formula = info["formulas"][inp]
            fenv = dict(env)
            fenv.update({n: tensors[n] for n in tensors})
            fenv["grad"] = env[f"{inp}_t"]
            for n, ta in tensors.items():
                arr = np.asarray(ta)
                fenv[f"{n}_shape"], fenv[f"{n}_dtype"], fenv[f"{n}_ndim"] = arr.shape, arr.dtype, arr.ndim
            return np.asarray(eval(formula, dict(NS), fenv))
        return np.asarray(eval(jvp, dict(NS), env))


def info_call(op, call, params, sample):
    # positional for the sample's positional arguments, keywords for the rest
    npos = len(sample.args)
    return op.op(*call[:npos], **{n: v for (n, _, _), v in zip(params[npos:], call[npos:])
                                  if n in sample.kwargs})


def _fd_jvp(op, sample, tangents, eps=1e-6):
    pos = sample.diff_positions()

    def shifted(sign):
        args = list(sample.args)
        for p, t in zip(pos, tangents):
            args[p] = np.asarray(args[p] + sign * eps * t)
        return opcheck.forward(op, sample, args)
    return (shifted(1) - shifted(-1)) / (2 * eps)


# (composites have no formula of their own; TensorList ops are checked in
# tests/ops/test_shape_indexing_ops.py)
# (entries with several results have one formula per result and are sampled
# through one of them: their JVPs are checked in tests/ops/test_linalg_svd.py
# and tests/fidelity/test_multi_output_ops.py)
JVP_OPS = [o for o in DIFF_OPS if o.name in TABLE and TABLE[o.name]["jvp"] is not None
           and not TABLE[o.name].get("tensorlist") and not TABLE[o.name].get("outputs")]


def test_every_differentiable_op_has_a_jvp():
    missing = [n for n, i in TABLE.items() if not i["nondifferentiable"] and not i["jvp"]]
    assert not missing, f"differentiable ops without a forward (result:) formula: {missing}"


@pytest.mark.parametrize("op,sample", all_samples(JVP_OPS))
def test_jvp_formula_vs_finite_differences(op, sample):
    pos = sample.diff_positions()
    if not pos:
        pytest.skip("no differentiable input")
    rng = np.random.default_rng(3)
    tangents = [rng.standard_normal(sample.args[p].shape).astype(sample.args[p].dtype) for p in pos]
    got = _jvp(op, sample, tangents)
    want = _fd_jvp(op, sample, tangents, eps=op.fd_eps)
    out_shape = opcheck.forward(op, sample).shape
    got = np.broadcast_to(got, out_shape)        # a JVP may be a broadcastable constant (0.0)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=max(1e-6, op.atol),
                               err_msg=f"{op.name} {sample}: JVP formula vs finite differences")
