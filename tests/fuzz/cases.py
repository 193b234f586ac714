"""Generated fuzz cases over retrograd's public API, each runnable on torch too.

A case is plain data (JSON-able): an op name, positional and keyword
arguments, where tensors are `{"T": shape, "dtype": ..., "fill": ..., "seed": n}`
specs that `materialize` turns into the same values for both libraries.
`generate(seed, n)` is deterministic: case i is the same in every process,
so a worker subprocess regenerates the cases and runs a slice of them.

Each op has a template that draws VALID arguments; most cases then replace
one argument by a value from a pool of bad ones (wrong types, None, strings,
floats for ints, negative or out-of-range dims, mismatched or empty shapes,
bool/int/complex/half dtypes, 0-d tensors, NaN/inf values).
"""
from __future__ import annotations

import copy
import random

import numpy as np

SHAPES = [(), (3,), (2, 3), (2, 3, 4), (4, 1), (1, 3), (0,), (0, 3), (2, 0, 3)]
BAD_DTYPES = ["bool", "int64", "int32", "uint8", "complex128", "float16", "float32", "int8", "int16", "complex64"]


def T(shape, dtype="float64", fill="randn"):
    return {"T": list(shape), "dtype": dtype, "fill": fill}


def is_t(a):
    return isinstance(a, dict) and "T" in a


# Valid draws lean on float64 and ordinary shapes, with a share of the inputs
# where libraries part ways most: other dtypes (uint8, bool, float16,
# complex), empty and 0-d shapes, NaN/inf and huge values.
VALID_DTYPES = ["float64"] * 8 + ["float32"] * 2 + ["float16", "complex128", "uint8", "bool", "int64"]
FILLS = ["randn"] * 12 + ["nan", "inf", "ninf", "huge", "zeros"]


class Gen:
    """Draws valid arguments around one base shape."""

    def __init__(self, rng: random.Random):
        self.r = rng
        self.shape = tuple(rng.choice(SHAPES[:6] * 3 + SHAPES[6:]))
        self.dtype = rng.choice(VALID_DTYPES)
        self.fill = rng.choice(FILLS)

    def t(self, shape=None, fill=None, dtype=None):
        return T(self.shape if shape is None else shape, dtype or self.dtype, fill or self.fill)

    def nd(self):
        return len(self.shape)

    def dim(self):
        n = max(self.nd(), 1)
        return self.r.randrange(-n, n)

    def dims(self):
        n = self.nd()
        if n == 0:
            return 0
        k = self.r.randint(1, n)
        return tuple(sorted(self.r.sample(range(n), k)))

    def b(self):
        return self.r.random() < 0.5

    def bshape(self):
        # a shape that broadcasts with self.shape
        s = list(self.shape)
        if s and self.r.random() < 0.5:
            s[self.r.randrange(len(s))] = 1
        if s and self.r.random() < 0.3:
            s = s[1:]
        return tuple(s)


def _mat(g, a, b):
    g.shape = (a, b)
    return g.t()


# --- op templates: name -> (kind, fn(g) -> (args, kwargs)) ----------------------
# kind: "fn" rg.<name>/torch.<name>; "F" nn.functional; "method" x.<name>(...);
# "op" a Python operator; "create" a creation function.

UNARY = ["exp", "log", "sin", "cos", "tanh", "sigmoid", "relu", "neg", "abs", "sqrt", "floor", "ceil",
         "sign", "square", "reciprocal", "atan", "erf", "expm1", "log1p", "sinh", "cosh", "tan", "trunc",
         "rsqrt", "exp2", "log2", "log10", "asin", "acos", "clone", "round"]
BINARY = ["add", "sub", "mul", "div", "pow", "maximum", "minimum", "atan2", "remainder", "eq", "lt", "gt",
          "ne", "le", "ge"]
REDUCE_DIMS = ["sum", "mean", "amax", "amin", "logsumexp", "var", "std"]
REDUCE_DIM = ["argmax", "argmin", "cumsum", "cumprod", "softmax", "log_softmax"]

TEMPLATES: dict = {}


def _reg(name, kind, fn, torch_name=None):
    TEMPLATES[name] = (kind, fn, torch_name or name)


for _n in UNARY:
    _reg(_n, "fn", lambda g: ([g.t()], {}))
for _n in BINARY:
    _reg(_n, "fn", lambda g: ([g.t(), g.t(g.bshape())], {}))
for _n in REDUCE_DIMS:
    if _n == "logsumexp":
        _reg(_n, "fn", lambda g: ([g.t()], {"dim": g.dims(), "keepdim": g.b()}))
    else:
        _reg(_n, "fn", lambda g: ([g.t()], {"dim": g.dims(), "keepdim": g.b()} if g.b() else {}))
for _n in REDUCE_DIM:
    _reg(_n, "fn", lambda g: ([g.t()], {"dim": g.dim()}))
_reg("prod", "fn", lambda g: ([g.t()], {"dim": g.dim(), "keepdim": g.b()} if g.b() else {}))
_reg("unsqueeze", "fn", lambda g: ([g.t(), g.r.randrange(-g.nd() - 1, g.nd() + 1)], {}))
_reg("squeeze", "fn", lambda g: ([g.t()], {"dim": g.dim()} if g.b() else {}))
_reg("flatten", "fn", lambda g: ([g.t()], {"start_dim": 0, "end_dim": g.dim()}))
_reg("transpose", "fn", lambda g: ([g.t(), g.dim(), g.dim()], {}))
_reg("permute", "fn", lambda g: ([g.t(), tuple(g.r.sample(range(g.nd()), g.nd()))], {}))
_reg("reshape", "fn", lambda g: ([g.t(), (-1,)], {}))
_reg("flip", "fn", lambda g: ([g.t(), g.dims() if g.nd() else ()], {}))
_reg("roll", "fn", lambda g: ([g.t(), g.r.randint(-3, 3)], {"dims": g.dim()} if g.nd() else {}))
_reg("movedim", "fn", lambda g: ([g.t(), g.dim(), g.dim()], {}))
_reg("chunk", "fn", lambda g: ([g.t(), g.r.randint(1, 4)], {"dim": g.dim()}))
_reg("split", "fn", lambda g: ([g.t(), g.r.randint(1, 3)], {"dim": g.dim()}))
_reg("narrow", "fn", lambda g: ([g.t(), g.dim(), 0, 1], {}))
_reg("tril", "fn", lambda g: ([_mat(g, 3, 4)], {"diagonal": g.r.randint(-2, 2)}))
_reg("triu", "fn", lambda g: ([_mat(g, 3, 4)], {"diagonal": g.r.randint(-2, 2)}))
_reg("diagonal", "fn", lambda g: ([_mat(g, 3, 4)], {"offset": g.r.randint(-2, 2)}))
_reg("matmul", "fn", lambda g: ([_mat(g, 2, 3), T((3, 4), g.dtype)], {}))
_reg("mm", "fn", lambda g: ([_mat(g, 2, 3), T((3, 4), g.dtype)], {}))
_reg("bmm", "fn", lambda g: ([T((2, 2, 3), g.dtype), T((2, 3, 4), g.dtype)], {}))
_reg("dot", "fn", lambda g: ([T((3,), g.dtype), T((3,), g.dtype)], {}))
_reg("outer", "fn", lambda g: ([T((3,), g.dtype), T((2,), g.dtype)], {}))
_reg("@", "op", lambda g: ([_mat(g, 2, 3), T((3, 4), g.dtype)], {}))
_reg("where", "fn", lambda g: ([g.t(fill="mask", dtype="bool"), g.t(), g.t(g.bshape())], {}))
_reg("cat", "fn", lambda g: ([[g.t(), g.t()]], {"dim": g.dim()}))
_reg("stack", "fn", lambda g: ([[g.t(), g.t()]], {"dim": g.r.randrange(-g.nd() - 1, g.nd() + 1)}))
_reg("index_select", "fn", lambda g: ([_mat(g, 3, 4), g.r.choice([0, 1]), T((2,), "int64", "idx")], {}))
_reg("gather", "fn", lambda g: ([_mat(g, 3, 4), 1, T((3, 2), "int64", "idx")], {}))
_reg("clamp", "fn", lambda g: ([g.t()], {"min": -0.5, "max": 0.5}))
_reg("lerp", "fn", lambda g: ([g.t(), g.t(), 0.3], {}))
_reg("masked_fill", "fn", lambda g: ([g.t(), g.t(fill="mask", dtype="bool"), 0.5], {}))
_reg("expand", "method", lambda g: ([T((3, 1), g.dtype), (3, 4)], {}))
_reg("view", "method", lambda g: ([g.t(), (-1,)], {}))
_reg("repeat", "method", lambda g: ([T((2, 3), g.dtype), 2, 1], {}))
_reg("tile", "fn", lambda g: ([g.t(), (2,)], {}))
_reg("softmax_F", "F", lambda g: ([g.t()], {"dim": g.dim()}), "softmax")
_reg("gelu", "F", lambda g: ([g.t()], {}))
_reg("silu", "F", lambda g: ([g.t()], {}))
_reg("softplus", "F", lambda g: ([g.t()], {}))
_reg("mse_loss", "F", lambda g: ([g.t(), g.t()], {}))
_reg("cross_entropy", "F", lambda g: ([_mat(g, 4, 3), T((4,), "int64", "cls3")], {}))
_reg("nll_loss", "F", lambda g: ([_mat(g, 4, 3), T((4,), "int64", "cls3")], {}))
_reg("layer_norm", "F", lambda g: ([T((2, 3), g.dtype), (3,)], {}))
_reg("pad", "F", lambda g: ([T((2, 3), g.dtype), (1, 1)], {}))
_reg("max_pool2d", "F", lambda g: ([T((1, 1, 4, 4), g.dtype), 2], {}))
_reg("avg_pool2d", "F", lambda g: ([T((1, 1, 4, 4), g.dtype), 2], {}))
_reg("conv2d", "F", lambda g: ([T((1, 2, 5, 5), g.dtype), T((3, 2, 3, 3), g.dtype)], {}))
_reg("embedding", "F", lambda g: ([T((3,), "int64", "cls3"), T((3, 2), g.dtype)], {}))
SIZES = [(-1,), (2, -3), (1.5,), ("a",), ([2],), (None,), ((2, 3),), ((2, -1),), ((2.0,),), ((),), ()]
for _n in ["zeros", "ones", "empty", "rand", "randn"]:
    _reg(_n, "create", lambda g: (list(g.r.choice([g.shape] * 3 + SIZES)), {}))
_reg("full", "create", lambda g: ([g.shape, 1.5], {}))
_reg("arange", "create", lambda g: ([0, g.r.randint(1, 6), g.r.choice([1, 2, 0.5])], {}))
_reg("eye", "create", lambda g: ([g.r.randint(0, 4)], {}))
_reg("tensor", "create", lambda g: ([g.r.choice([[1.0, 2.0], [[1, 2], [3, 4]], 3.5, True, [True, False]])], {}))
_reg("zeros_like", "fn", lambda g: ([g.t()], {}))
_reg("ones_like", "fn", lambda g: ([g.t()], {}))
_reg("full_like", "fn", lambda g: ([g.t(), 2.0], {}))
INDICES = [0, -1, (1, 2), (slice(None), 1), 2, [0, 2], [[0, 1], [1, 0]], [[0, 1]], ([0, 1], [1, 2]),
           [True, False, True], (Ellipsis, 0), (None, 1), [0, -1], 3, -4, (0, 5), [[0], [1, 2]],
           (slice(None), [0, 3]), [0, 1.5], (0, 0, 0), {"T": [2], "dtype": "int64", "fill": "idx"},
           {"T": [3], "dtype": "bool", "fill": "mask"}, {"T": [], "dtype": "int64", "fill": "idx"}]
_reg("getitem", "index", lambda g: ([_mat(g, 3, 4), g.r.choice(INDICES)], {}))
_reg("setitem", "setitem", lambda g: ([_mat(g, 3, 4), g.r.choice(INDICES),
                                       g.r.choice([1.5, 0, T((), g.dtype), T((4,), g.dtype), T((2, 4), g.dtype),
                                                   [1.0, 2.0], None, "a", T((5,), g.dtype)])], {}))
_reg("item", "method", lambda g: ([T((), g.dtype)], {}))
_reg("size", "method", lambda g: ([g.t(), g.dim()], {}))
for _n in ["float", "double", "long", "int", "bool", "half"]:
    _reg("." + _n, "method", lambda g: ([g.t()], {}), _n)
_reg("to", "method", lambda g: ([g.t(), {"dtype": g.r.choice(["float32", "float64", "int64"])}], {}))
_reg("format", "format", lambda g: ([T((), g.dtype), g.r.choice([".4f", "", ".2e", "d"])], {}))
_reg("backward", "backward", lambda g: ([g.t()], {}))
_reg("grad", "grad", lambda g: ([g.t(), "self"], {}))

# --- bad values ----------------------------------------------------------------

BAD_COMMON = [None, "abc", 1.5, True, [1.0, 2.0], -1, 10, 2 ** 63, float("nan"), (), {"np": "float64", "v": 1.0},
              {"np": "int64", "v": 1}, {"torch": T((2, 3))}, [[1.0, 2.0], [3.0, 4.0]], (1.0, 2.0), [1, 2, 3],
              [T((3,))], 1e300, -2 ** 63, [], [[]]]
# what a dim argument is given instead of an int (or a tuple of ints)
BAD_DIMS = ["a", 1.5, [0, "a"], (0, 0), None, [0.5], (True,), {"np": "int64", "v": 1}, {"torch0": 0}, -100,
            (0, 1, 2, 3, 4)]


def _bad_tensor(g, a):
    r = g.r
    choice = r.randrange(7)
    shape = tuple(a["T"])
    if choice == 0:
        return T(shape, r.choice(BAD_DTYPES), "randn")
    if choice == 1:
        return T(r.choice(SHAPES), a["dtype"], "randn")
    if choice == 2:
        return T((), a["dtype"], "randn")
    if choice == 3:
        return T(shape, a["dtype"], r.choice(["nan", "inf", "ninf", "zeros"]))
    if choice == 4:
        return T(tuple(0 if i == 0 else s for i, s in enumerate(shape)) or (0,), a["dtype"])
    return r.choice(BAD_COMMON)


def _bad_value(g, v):
    r = g.r
    if is_t(v):
        return _bad_tensor(g, v)
    if isinstance(v, bool):
        return r.choice([None, "abc", 1, 1.5, (1,)])
    if isinstance(v, int) and r.random() < 0.3:
        return r.choice(BAD_DIMS)
    if isinstance(v, int):
        return r.choice([v + 0.5, float(v), -v - 7, v + 9, None, "a", True, 2 ** 63, -2 ** 63 - 1,
                         {"np": "int64", "v": v}, {"np": "float64", "v": v}, (v,), {"torch0": v}])
    if isinstance(v, tuple) and v and all(isinstance(i, int) for i in v) and r.random() < 0.3:
        return r.choice(BAD_DIMS)
    if isinstance(v, float):
        return r.choice([None, "abc", float("nan"), float("inf"), -v, 1, True, (v,)])
    if isinstance(v, (tuple, list)) and v and all(isinstance(i, int) and not isinstance(i, bool) for i in v):
        k = r.randrange(len(v))
        w = list(v)
        w[k] = r.choice([-3, 1.5, None, "a", 2 ** 63, 100])
        return type(v)(w) if r.random() < 0.8 else r.choice([None, "abc", 1.5])
    if isinstance(v, list) and v and all(is_t(i) for i in v):
        k = r.randrange(len(v))
        w = list(v)
        w[k] = _bad_tensor(g, v[k])
        return w if r.random() < 0.8 else r.choice([[], None, v[0]])
    return r.choice(BAD_COMMON)


def generate(seed: int, n: int, mutate_p: float = 0.75):
    names = sorted(TEMPLATES)
    out = []
    for i in range(n):
        r = random.Random(f"{seed}:{i}")
        name = names[r.randrange(len(names))]
        kind, fn, tname = TEMPLATES[name]
        g = Gen(r)
        args, kwargs = copy.deepcopy(fn(g))     # the pools' specs are shared: seed copies
        args = list(args)
        mutated = None
        if r.random() < mutate_p:
            slots = [("a", j) for j in range(len(args))] + [("k", k) for k in kwargs]
            if kind == "create" and r.random() < 0.3:
                slots.append(("k", "dtype"))
            if slots and r.random() < 0.95:
                where, key = r.choice(slots)
                if where == "a":
                    args[key] = _bad_value(g, args[key])
                elif key == "dtype" and key not in kwargs:
                    kwargs["dtype"] = {"dtype": r.choice(["float32", "int64", "bool", "float16", "complex64"])}
                else:
                    kwargs[key] = _bad_value(g, kwargs[key])
                mutated = f"{where}:{key}"
            else:
                kwargs["bogus_kw"] = 1
                mutated = "kw:bogus"
        for a in args:
            _seed(a, r)
        for v in kwargs.values():
            _seed(v, r)
        out.append({"i": i, "op": name, "kind": kind, "tname": tname, "args": args, "kwargs": kwargs,
                    "mutated": mutated})
    return out


def _seed(a, r):
    if is_t(a):
        a["seed"] = r.randrange(2 ** 31)
    elif isinstance(a, (list, tuple)):
        for x in a:
            _seed(x, r)
    elif isinstance(a, dict) and "torch" in a:
        _seed(a["torch"], r)


def array_of(spec):
    rng = np.random.default_rng(spec.get("seed", 0))
    shape = tuple(spec["T"])
    dt = np.dtype(spec["dtype"])
    fill = spec["fill"]
    if fill == "mask":
        return rng.random(shape) > 0.5
    if fill == "idx":
        return rng.integers(0, 2, shape).astype(dt)
    if fill == "cls3":
        return rng.integers(0, 3, shape).astype(dt)
    if fill == "zeros":
        return np.zeros(shape, dt)
    if fill == "huge":
        a = rng.standard_normal(shape) * 1e300 if dt.kind in "fc" else rng.integers(-3, 4, shape)
        return np.asarray(a).astype(dt) if dt.kind != "b" else np.asarray(a) > 0
    if fill in ("nan", "inf", "ninf"):
        if dt.kind in "biu":
            return rng.integers(0 if dt.kind in "bu" else -3, 2 if dt.kind == "b" else 4, shape).astype(dt)
        a = rng.standard_normal(shape)
        if a.size:
            a.flat[rng.integers(0, a.size)] = {"nan": np.nan, "inf": np.inf, "ninf": -np.inf}[fill]
        return a.astype(dt)
    if dt.kind == "b":
        return rng.random(shape) > 0.5
    if dt.kind in "iu":
        return rng.integers(0 if dt.kind == "u" else -3, 4, shape).astype(dt)
    a = rng.standard_normal(shape)
    if dt.kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return np.asarray(a).astype(dt)


def describe(case):
    def d(a):
        if is_t(a):
            return f"T{tuple(a['T'])}:{a['dtype']}{'' if a['fill'] == 'randn' else ':' + a['fill']}"
        if isinstance(a, list):
            return "[" + ", ".join(d(x) for x in a) + "]"
        if isinstance(a, tuple):
            return "(" + ", ".join(d(x) for x in a) + ("," if len(a) == 1 else "") + ")"
        return repr(a)
    parts = [d(a) for a in case["args"]] + [f"{k}={d(v)}" for k, v in case["kwargs"].items()]
    return f"{case['op']}({', '.join(parts)})"
