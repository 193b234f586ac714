"""Per-op overhead of every elementwise op: retrograd vs hand-written NumPy.

One run applies the op 100 times to the same (16,) float64 leaf and back-
propagates all 100 outputs at once (one backward call, a GraphRoot with 100
edges), so the figure is the op's own forward + backward cost, not the cost
of a backward() call. The NumPy reference computes the same forward values
and accumulates the hand-derived gradient.

Used by compare.py (--per-op) and the asv suite (benchmarks.PerOpOverhead).
"""
from __future__ import annotations

import numpy as np

WIDTH = 100                      # applications per run
SIZE = 16

_POS = (0.5, 2.0)                # domains for the sample input
_UNIT = (-0.9, 0.9)
_ANY = (-2.0, 2.0)


def _erf_grad(x, y, g):
    return g * (2 / np.sqrt(np.pi)) * np.exp(-x * x)


# name -> (forward, backward(x, y, g) -> grad of x, input domain)
UNARY = {
    "neg": (np.negative, lambda x, y, g: -g, _ANY),
    "exp": (np.exp, lambda x, y, g: g * y, _ANY),
    "log": (np.log, lambda x, y, g: g / x, _POS),
    "sin": (np.sin, lambda x, y, g: g * np.cos(x), _ANY),
    "cos": (np.cos, lambda x, y, g: -g * np.sin(x), _ANY),
    "tanh": (np.tanh, lambda x, y, g: g * (1 - y * y), _ANY),
    "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), lambda x, y, g: g * y * (1 - y), _ANY),
    "relu": (lambda x: np.maximum(x, 0), lambda x, y, g: g * (x > 0), _ANY),
    "exp2": (np.exp2, lambda x, y, g: g * y * np.log(2.0), _ANY),
    "log2": (np.log2, lambda x, y, g: g / (x * np.log(2.0)), _POS),
    "log10": (np.log10, lambda x, y, g: g / (x * np.log(10.0)), _POS),
    "log1p": (np.log1p, lambda x, y, g: g / (1 + x), _POS),
    "expm1": (np.expm1, lambda x, y, g: g * (y + 1), _ANY),
    "sqrt": (np.sqrt, lambda x, y, g: g / (2 * y), _POS),
    "rsqrt": (lambda x: 1 / np.sqrt(x), lambda x, y, g: -0.5 * g * y ** 3, _POS),
    "square": (np.square, lambda x, y, g: 2 * g * x, _ANY),
    "reciprocal": (np.reciprocal, lambda x, y, g: -g * y * y, _POS),
    "abs": (np.abs, lambda x, y, g: g * np.sign(x), _ANY),
    "tan": (np.tan, lambda x, y, g: g * (1 + y * y), _UNIT),
    "asin": (np.arcsin, lambda x, y, g: g / np.sqrt(1 - x * x), _UNIT),
    "acos": (np.arccos, lambda x, y, g: -g / np.sqrt(1 - x * x), _UNIT),
    "atan": (np.arctan, lambda x, y, g: g / (1 + x * x), _ANY),
    "sinh": (np.sinh, lambda x, y, g: g * np.cosh(x), _ANY),
    "cosh": (np.cosh, lambda x, y, g: g * np.sinh(x), _ANY),
    "silu": (lambda x: x / (1 + np.exp(-x)),
             lambda x, y, g: g * (s := 1 / (1 + np.exp(-x))) * (1 + x * (1 - s)), _ANY),
    "softplus": (lambda x: np.logaddexp(0, x), lambda x, y, g: g / (1 + np.exp(-x)), _ANY),
    "erf": (None, _erf_grad, _ANY),            # NumPy has no erf: forward from retrograd's values
    "sign": (np.sign, lambda x, y, g: g * 0, _ANY),
    "floor": (np.floor, lambda x, y, g: g * 0, _ANY),
    "ceil": (np.ceil, lambda x, y, g: g * 0, _ANY),
    "round": (np.round, lambda x, y, g: g * 0, _ANY),
    "trunc": (np.trunc, lambda x, y, g: g * 0, _ANY),
}

# Binary ops: forward(a, b) and the gradient of a (b is a constant array).
BINARY = {
    "add": (np.add, lambda a, b, y, g: g),
    "sub": (np.subtract, lambda a, b, y, g: g),
    "mul": (np.multiply, lambda a, b, y, g: g * b),
    "div": (np.true_divide, lambda a, b, y, g: g / b),
    "pow": (np.power, lambda a, b, y, g: g * b * a ** (b - 1)),
    "maximum": (np.maximum, lambda a, b, y, g: g * (a > b)),
    "minimum": (np.minimum, lambda a, b, y, g: g * (a < b)),
    "atan2": (np.arctan2, lambda a, b, y, g: g * b / (a * a + b * b)),
}


def available(framework_module=None):
    """The op names retrograd provides (ops not built yet are skipped)."""
    import retrograd as rg
    return [n for n in list(UNARY) + list(BINARY) if hasattr(rg, n)]


def _input(name):
    lo, hi = UNARY[name][2] if name in UNARY else _POS
    return np.linspace(lo, hi, SIZE)


def per_op(framework, name):
    """A zero-argument callable: WIDTH applications of `name`, forward + backward."""
    x0 = _input(name)
    b0 = np.linspace(0.7, 1.3, SIZE)
    g0 = np.ones(SIZE)
    if framework == "numpy":
        if name in UNARY:
            fwd, bwd, _ = UNARY[name]
            import retrograd as rg
            fwd = fwd or (lambda x: np.asarray(getattr(rg, name)(rg.tensor(x))))

            def run():
                ys = [fwd(x0) for _ in range(WIDTH)]
                gx = np.zeros(SIZE)
                for y in ys:
                    gx += bwd(x0, y, g0)
                return gx
            return run
        fwd, bwd = BINARY[name]

        def run():
            ys = [fwd(x0, b0) for _ in range(WIDTH)]
            gx = np.zeros(SIZE)
            for y in ys:
                gx += bwd(x0, b0, y, g0)
            return gx
        return run
    if framework == "retrograd":
        import retrograd as lib
    else:
        import torch as lib
    op = getattr(lib, name)
    grads = [lib.tensor(g0)] * WIDTH
    b = lib.tensor(b0)

    def run():
        x = lib.tensor(x0, requires_grad=True)
        outs = [op(x) for _ in range(WIDTH)] if name in UNARY else [op(x, b) for _ in range(WIDTH)]
        lib.autograd.backward(outs, grads)
        return x.grad
    return run
