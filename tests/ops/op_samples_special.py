"""Op samples of torch's special functions (issue 41): lgamma, digamma,
polygamma (and the entry behind Tensor.polygamma / polygamma_), mvlgamma (and
its derivative _multi_polygamma), i0 (and its derivative _i1), igamma and
igammac, spliced into op_samples.OP_DB (the classes are passed in: no circular
import). Their wider checks against torch and SciPy are in
tests/ops/test_special_functions.py.
"""
from __future__ import annotations

import numpy as np

from retrograd.core import abi


def _off_integers(a, d=0.15):
    # away from the poles of lgamma / digamma / polygamma (0 and the negative
    # integers), where finite differences are meaningless
    a = np.array(a, copy=True)
    frac = a - np.round(a)
    close = np.abs(frac) < d
    a[close] = (np.round(a) + np.where(frac >= 0, 2 * d, -2 * d))[close]
    return a


def _torch_igamma(name):
    # torch has no forward-mode derivative of igamma / igammac at all; under
    # forward AD the oracle is the derivative for `other` of torch's own
    # backward formula (retrograd computes it, and refuses one for `self`)
    def fn(torch, a, x):
        fw = torch.autograd.forward_ad
        # (a as x's float dtype: torch's backward would take lgamma(a) of an
        # integer tensor in float32, its default dtype, and lose digits the
        # float64 comparison sees)
        a = a if a.is_floating_point() else a.to(x.dtype)
        if fw.unpack_dual(x).tangent is None:
            return getattr(torch, name)(a, x)
        sign = 1.0 if name == "igamma" else -1.0

        class _Igamma(torch.autograd.Function):
            @staticmethod
            def forward(ctx, a, x):
                ctx.save_for_forward(a, x)
                return getattr(torch, name)(a, x)

            @staticmethod
            def jvp(ctx, a_t, x_t):
                a, x = ctx.saved_tensors
                return sign * x_t * torch.exp((a - 1) * torch.log(x) - x - torch.lgamma(a.to(x.dtype)))

        return _Igamma.apply(a, x)
    return fn


def special_ops(OpInfo, SampleInput):
    S = SampleInput

    def gamma_samples(g):
        return [
            S((_off_integers(g(3, 4, low=-3.5, high=4.0)),), desc="matrix"),
            S((g(5, low=0.2, high=30.0),), desc="positive"),
            S((_off_integers(g(low=-2.0, high=3.0)),), desc="zero_d"),
            S((_off_integers(g(2, 3, 2, low=-6.0, high=2.0)),), desc="3d"),
        ]

    def polygamma_samples(g):
        x = _off_integers(g(3, 4, low=-2.5, high=4.0))
        return [
            S((1, x), desc="trigamma"),
            S((2, g(5, low=0.3, high=6.0)), desc="n2"),
            S((0, _off_integers(g(2, 3, low=-2.0, high=3.0))), desc="n0_digamma"),
            S((3, g(low=0.5, high=3.0)), desc="zero_d_n3"),
            S((5, g(2, 2, low=0.8, high=12.0)), desc="n5"),
        ]

    def polygamma_method_samples(g):
        return [S((g(3, 4, low=0.3, high=4.0), 1), desc="trigamma"),
                S((_off_integers(g(5, low=-2.5, high=3.0)), 2), desc="n2"),
                S((g(low=0.5, high=3.0), 0), desc="zero_d_digamma")]

    def mvlgamma_samples(g):
        return [S((g(3, 4, low=1.1, high=4.0), 2), desc="p2"),
                S((g(5, low=0.3, high=4.0), 1), desc="p1"),
                S((g(2, 3, low=1.6, high=5.0), 4), desc="p4"),
                S((g(low=1.2, high=3.0), 3), desc="zero_d_p3")]

    def multi_polygamma_samples(g):
        return [S((g(3, 4, low=1.1, high=4.0), 0, 2), desc="n0_p2"),
                S((g(5, low=1.6, high=5.0), 1, 3), desc="n1_p3"),
                S((g(low=1.2, high=3.0), 2, 2), desc="zero_d")]

    def bessel_samples(g):
        return [S((g(3, 4, low=-4.0, high=4.0),), desc="matrix"),
                S((g(6, low=-15.0, high=15.0),), desc="both_branches"),
                S((g(low=-2.0, high=2.0),), desc="zero_d"),
                S((g(2, 3, 2, low=-9.0, high=9.0),), desc="3d")]

    def igamma_samples(g):
        # `self` (the parameter a) as integers: torch has no derivative for
        # it, and the registry differentiates every float array
        rng = np.random.default_rng(41)

        def ints(*shape):
            return np.asarray(rng.integers(1, 9, size=shape), dtype=np.int64)
        return [S((ints(3, 4), g(3, 4, low=0.2, high=9.0)), desc="same_shape"),
                S((ints(4), g(3, 4, low=0.2, high=6.0)), desc="broadcast_self"),
                S((ints(3, 1), g(1, 4, low=0.5, high=12.0)), desc="outer_broadcast"),
                S((np.asarray(3), g(2, 3, low=0.2, high=6.0)), desc="zero_d_self"),
                S((ints(), g(low=0.5, high=4.0)), desc="zero_d")]

    def method(name):
        def op(x, *args):
            return getattr(x, name)(*args)

        def torch_fn(torch, x, *args):
            return getattr(x, name)(*args)
        return op, torch_fn

    def torch_multi_polygamma(torch, x, n, p):
        return sum(torch.polygamma(n, x - 0.5 * (p - 1 - j)) for j in range(p))

    poly_op, poly_torch = method("polygamma")
    return [
        OpInfo("lgamma", gamma_samples),
        OpInfo("digamma", gamma_samples),
        OpInfo("polygamma", polygamma_samples, notes="samples avoid the poles (0 and the negative integers)"),
        OpInfo("_polygamma_method", polygamma_method_samples, op=poly_op, torch_fn=poly_torch),
        OpInfo("mvlgamma", mvlgamma_samples),
        OpInfo("_multi_polygamma", multi_polygamma_samples, op=abi._multi_polygamma,
               torch_fn=torch_multi_polygamma),
        OpInfo("i0", bessel_samples),
        OpInfo("_i1", bessel_samples, op=abi._i1, torch_fn=lambda torch, x: torch.special.i1(x)),
        OpInfo("igamma", igamma_samples, torch_fn=_torch_igamma("igamma"),
               notes="self as integers: torch has no derivative for it"),
        OpInfo("igammac", igamma_samples, torch_fn=_torch_igamma("igammac"),
               notes="self as integers: torch has no derivative for it"),
    ]
