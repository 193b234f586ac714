"""Op samples of the entries added for torch's names (issue 41): acosh,
asinh, atanh, fmod, clamp_min, clamp_max, fmax, fmin, erfc, erfinv, gcd, lcm and
nextafter, spliced into op_samples.OP_DB (the classes are passed in: no
circular import). Their aliases and in-place functions are checked in
tests/ops/test_op_aliases.py.
"""
from __future__ import annotations

import numpy as np


def coverage_ops(OpInfo, SampleInput, binary_samples, unary_samples, away_from, torch_binary_tensors):
    S = SampleInput

    def fmod_samples(g):
        # away from the jumps of fmod (self/other an integer) and from other = 0
        out = []
        for s in binary_samples(g, away=0.5, scalar=-1.5, rscalar=False):
            a, b = s.args
            if isinstance(a, np.ndarray):
                q = a / b
                a = np.where(np.abs(q - np.round(q)) < 0.05, a + 0.1 * np.abs(b), a).astype(a.dtype)
            out.append(s.with_args((a, b)))
        return out

    def clamp_one_samples(which):
        def samples(g):
            x = away_from(g(3, 4), 0.2)
            m = g(4, low=-1.0, high=1.0)
            xt = away_from(g(3, 4), m)
            return [S((x, 0.2), desc="scalar"), S((xt, m), desc="tensor_bound"),
                    S((away_from(g(), 0.0), g(2, 3)), desc="zero_d_self")]
        return samples

    def torch_clamp_one(name):
        def fn(torch, x, bound):
            return getattr(torch, name)(x, bound)
        return fn

    def fmax_samples(g):
        return binary_samples(g, rscalar=False, scalar=0.3) + [S((g(2, 3), g(2, 3)), desc="same_shape_2")]

    def int_pair_samples(g):
        rng = np.random.default_rng(11)
        a = rng.integers(-40, 40, size=(3, 4))
        b = rng.integers(-40, 40, size=(4,))
        # (torch's gcd/lcm take no Python int as other: a 0-d tensor instead)
        return [S((a, b), desc="int64_broadcast"), S((a.astype(np.int32), np.asarray(6, dtype=np.int32)),
                                                     desc="zero_d_int32"),
                S((np.asarray(12), a), desc="zero_d")]

    def nextafter_samples(g):
        return [S((g(3, 4), g(3, 4)), desc="same_shape"), S((g(2, 3), g(3)), desc="broadcast"),
                S((g(), g()), desc="zero_d")]

    return [
        OpInfo("acosh", lambda g: unary_samples(g, low=1.2, high=3.0)),
        OpInfo("asinh", unary_samples),
        OpInfo("atanh", lambda g: unary_samples(g, low=-0.8, high=0.8)),
        OpInfo("fmod", fmod_samples, notes="samples avoid the jumps where self / other is an integer"),
        OpInfo("clamp_min", clamp_one_samples("min"), torch_fn=torch_clamp_one("clamp_min"),
               notes="samples avoid x == min"),
        OpInfo("clamp_max", clamp_one_samples("max"), torch_fn=torch_clamp_one("clamp_max"),
               notes="samples avoid x == max"),
        OpInfo("fmax", fmax_samples, torch_fn=torch_binary_tensors("fmax")),
        OpInfo("fmin", fmax_samples, torch_fn=torch_binary_tensors("fmin")),
        OpInfo("erfc", lambda g: unary_samples(g, low=-3.0, high=5.0)),
        OpInfo("erfinv", lambda g: unary_samples(g, low=-0.9, high=0.9), rtol=1e-9),
        OpInfo("gcd", int_pair_samples, differentiable=False),
        OpInfo("lcm", int_pair_samples, differentiable=False),
        OpInfo("nextafter", nextafter_samples, differentiable=False),
    ]
