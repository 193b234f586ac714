"""The numpy backend's replayed runs (_replay.pyx): NumPy's own float64
inner loops called one after another. Each op must give NumPy's values bit
for bit, for every operand form a chunk reads; a chunk must refuse arrays
it was not built for; and programs of the numpy backend use it."""
import threading
import warnings

import numpy as np
import pytest

import retrograd as rg
import retrograd.compile
from retrograd.compile import _fusion, _kernels, _replay

# numba's ufuncs, and the others the numpy backend's kernels call
_UFUNCS = [f for f in _fusion._SCALAR if isinstance(f, np.ufunc)] + [
    np.power, np.maximum, np.minimum, np.arctan2, np.reciprocal, np.tan, np.sinh, np.cosh,
    np.arcsin, np.arccos, np.arctan, np.exp2, np.log2, np.log10, np.floor, np.ceil, np.trunc]


def _values(n, seed, dtype=np.float64):
    # ordinary values, and the edges: signed zeros, infinities, nan,
    # subnormals, the largest and smallest normals, large arguments
    if dtype != np.float64:
        info = np.finfo(dtype)
        with np.errstate(all="ignore"):
            return np.concatenate([_values(n, seed).astype(dtype),
                                   np.array([info.tiny, info.smallest_subnormal, info.max], dtype)])
    rng = np.random.default_rng(seed)
    edges = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 2.2250738585072014e-308,
                      1.7976931348623157e308, -1.7976931348623157e308, 1e22, -3e300, 0.5, -1.0, 1.0])
    return np.concatenate([edges, rng.standard_normal(n) * 4.0, rng.uniform(-1e5, 1e5, n)])


def _same(got, want):
    assert got.dtype == want.dtype
    bits = np.int64 if got.dtype == np.float64 else np.int32
    np.testing.assert_array_equal(got.view(bits)[~np.isnan(want)], want.view(bits)[~np.isnan(want)])
    assert np.array_equal(np.isnan(got), np.isnan(want))


_DTYPES = pytest.mark.parametrize("dtype", [np.float64, np.float32])


@_DTYPES
@pytest.mark.parametrize("uf", _UFUNCS, ids=lambda f: f.__name__)
def test_each_ufunc_gives_numpys_bits(uf, dtype):
    x, y = _values(200, 1, dtype), _values(200, 2, dtype)[::-1].copy()
    out = np.empty((1, x.size), dtype)
    operands = [("in", 0), ("in", 1)][:uf.nin]
    ch = _replay.chunk_function([(uf, operands)], [(0, None), (1, None)][:uf.nin], [1] * uf.nin, [0],
                                dtype)
    with np.errstate(all="ignore"):
        ch(*[x, y][:uf.nin], out)
        want = uf(*[x, y][:uf.nin])
    _same(out[0], want)


@_DTYPES
@pytest.mark.parametrize("uf", [u for u in _UFUNCS if u.nin == 2], ids=lambda f: f.__name__)
def test_binary_ops_read_constants_0d_values_rows_and_block_scalars(uf, dtype):
    x = _values(50, 3, dtype)
    zero_d = np.array(-2.5, dtype)
    block = np.stack([x[::-1].copy(), x * dtype(0.5)])   # rows of a block
    scalars = np.array([[1.75], [-0.0], [3.0]], dtype)   # a block of 0-d values
    ops = [(uf, [("in", 0), ("c", 1.01)]),               # 0: x op constant
           (uf, [("in", 1), ("t", 0)]),                  # 1: 0-d op value
           (uf, [("t", 1), ("in", 2)]),                  # 2: value op row 1 of the block
           (uf, [("in", 3), ("t", 2)])]                  # 3: block scalar [2, 0] op value
    inputs = [(0, None), (1, "s"), (2, 1), (3, ("s", 2))]
    ch = _replay.chunk_function(ops, inputs, [1, 0, 2, 2], [0, 1, 2, 3], dtype)
    out = np.empty((4, x.size), dtype)
    with np.errstate(all="ignore"):
        ch(x, zero_d, block, scalars, out)
        v0 = uf(x, np.asarray(1.01, dtype))      # (the kernels' constants: 0-d, of the dtype)
        v1 = uf(zero_d, v0)
        v2 = uf(v1, block[1])
        v3 = uf(scalars[2, 0], v2)
    for got, want in zip(out, [v0, v1, v2, v3]):
        _same(got, want)


@_DTYPES
def test_values_not_kept_go_to_reused_scratch_rows_and_the_sum_is_numpys(dtype):
    # a 300-op chain writing only every tenth value: the others live in
    # scratch rows; the total is NumPy's pairwise sum
    c1, c2 = np.asarray(1.01, dtype), np.asarray(0.5, dtype)
    for n in (1, 16, 1000, 100_001):
        x = np.random.default_rng(n).standard_normal(n).astype(dtype)
        ops, keep, want, y = [], [], [], x
        for s in range(100):
            src = ("in", 0) if s == 0 else ("t", 3 * s - 1)
            ops += [(np.multiply, [src, ("c", 1.01)]), (np.sin, [("t", 3 * s)]),
                    (np.add, [("t", 3 * s + 1), ("c", 0.5)])]
            a = y * c1
            y = np.sin(a) + c2
            if s % 10 == 0:
                keep.append(3 * s)
                want.append(a)
        ops.append(("sum", [("t", 299)]))
        ch = _replay.chunk_function(ops, [(0, None)], [1], keep, dtype)
        out, total = np.empty((len(keep), n), dtype), np.empty((), dtype)
        ch(x, out, total)
        np.testing.assert_array_equal(out, np.array(want))
        assert total.dtype == dtype and total[()] == np.add.reduce(y)


def test_arguments_in_another_layout_are_read_in_c_order():
    # a guard key fixes shapes, not strides: a strided, Fortran-ordered or
    # unaligned argument gives the values a C-contiguous one does
    ops = [(np.multiply, [("in", 0), ("in", 1)]), (np.exp, [("t", 0)])]
    ch = _replay.chunk_function(ops, [(0, None), (1, None)], [2, 2], [1])
    a = np.random.default_rng(5).standard_normal((3, 4))
    b = np.random.default_rng(6).standard_normal((3, 4))
    want = np.exp(a * b).ravel()
    raw = np.zeros(a.nbytes + 1, np.uint8)
    unaligned = raw[1:].view(np.float64).reshape(3, 4)
    unaligned[...] = a
    assert not unaligned.flags.aligned
    for x in (np.asfortranarray(a), np.repeat(a, 2, axis=1)[:, ::2], unaligned):
        out = np.empty((1, 12))
        ch(x, b, out)
        np.testing.assert_array_equal(out[0], want)
    out = np.empty((1, 12))
    ch(a, np.asfortranarray(b), out)
    np.testing.assert_array_equal(out[0], want)


def test_copies_fill_from_a_0d_value_and_copy_arrays():
    ops = [(_kernels._copy_into, [("in", 0)]), (_kernels._copy_into, [("in", 1)]),
           (np.add, [("t", 0), ("t", 1)])]
    ch = _replay.chunk_function(ops, [(0, "s"), (1, None)], [0, 1], [0, 1, 2])
    x = np.arange(5.0)
    out = np.empty((3, 5))
    ch(np.array(7.0), x, out)
    np.testing.assert_array_equal(out, [[7.0] * 5, x, x + 7.0])


def test_a_chunk_refuses_arrays_it_was_not_built_for():
    ch = _replay.chunk_function([(np.sin, [("in", 0)])], [(0, None)], [1], [0])
    x, out = np.ones(8), np.empty((1, 8))
    ch(x, out)
    with pytest.raises(TypeError, match="float64"):
        ch(np.ones(8, np.float32), out)
    with pytest.raises(ValueError, match="float64 or float32"):
        _replay.chunk_function([(np.sin, [("in", 0)])], [(0, None)], [1], [0], np.float16)
    with pytest.raises(TypeError, match="NumPy array"):
        ch([1.0] * 8, out)
    with pytest.raises(ValueError, match="must have 8 values"):
        ch(np.ones(9), out)
    with pytest.raises(ValueError, match="output block"):
        ch(x, np.empty((2, 8)))
    with pytest.raises(TypeError, match="takes 2 arrays"):
        ch(x)
    rows = _replay.chunk_function([(np.cos, [("in", 0)])], [(0, 3)], [2], [0])
    with pytest.raises(ValueError, match="at least 4 rows"):
        rows(np.ones((3, 8)), out)
    with pytest.raises(ValueError, match="rows of 5 values"):
        rows(np.ones((4, 5)), out)
    with pytest.raises(ValueError, match="cannot replay"):
        _replay.chunk_function([(np.clip, [("in", 0)])], [(0, None)], [1], [0])
    with pytest.raises(ValueError, match="cannot replay"):
        _replay.chunk_function([(np.matmul, [("in", 0), ("in", 0)])], [(0, None)], [2], [0])
    with pytest.raises(ValueError, match="ldexp has no float64 loop"):
        _replay.chunk_function([(np.ldexp, [("in", 0), ("in", 0)])], [(0, None)], [1], [0])
    with pytest.raises(ValueError, match="no input -1"):
        _replay.chunk_function([(np.sin, [("in", -1)])], [(0, None)], [1], [0])
    with pytest.raises(ValueError, match="no argument 1"):
        _replay.chunk_function([(np.sin, [("in", 0)])], [(1, None)], [1], [0])
    with pytest.raises(ValueError, match="read before it is made"):
        _replay.chunk_function([(np.sin, [("t", 0)])], [(0, None)], [1], [0])
    with pytest.raises(ValueError, match="of an argument of 1 dims"):
        _replay.chunk_function([(np.sin, [("in", 0)])], [(0, 2)], [1], [0])


def test_threads_calling_one_chunk_get_their_own_values():
    ops = [(np.multiply, [("in", 0), ("c", 3.0)]), (np.exp, [("t", 0)]), (np.add, [("t", 1), ("in", 0)])]
    ch = _replay.chunk_function(ops, [(0, None)], [1], [2])
    errors = []

    def work(seed):
        x = np.random.default_rng(seed).standard_normal(5000)
        for _ in range(200):
            out = np.empty((1, x.size))
            ch(x, out)
            if not np.array_equal(out[0], np.exp(x * 3.0) + x):
                errors.append(seed)
                return
    ts = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors


def _chain(x):
    y = x
    for _ in range(40):
        y = (y * 1.01).sin() + 0.5
    return y.sum()


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-13), (np.float32, 1e-5)])
def test_the_numpy_backend_replays_its_runs(assert_matches_eager, dtype, rtol):
    f = rg.compile(_chain, backend="numpy")
    a = np.random.default_rng(0).standard_normal(16).astype(dtype)
    assert_matches_eager(f, _chain, a, rtol=rtol, grad_rtol=rtol)
    entry = next(iter(f._cache.values()))
    assert entry.fwd.fused_by == "replay" and entry.fwd.fused_ops >= 100
    assert entry.bwd.fused_by == "replay" and entry.bwd.fused_ops >= 100


def test_float32_programs_of_the_numba_backend_are_replayed():
    # numba's loops are float64's: a float32 program's runs are replayed
    pytest.importorskip("numba")
    f = rg.compile(_chain, backend="numba")
    x = rg.tensor(np.linspace(-1, 1, 16, dtype=np.float32), requires_grad=True)
    f(x).backward()
    f.wait()
    entry = next(iter(f._cache.values()))
    assert entry.fusing is None
    assert entry.fwd.fused_by == "replay" and entry.bwd.fused_by == "replay"
    x2 = rg.tensor(np.linspace(-1, 1, 16, dtype=np.float32), requires_grad=True)
    _chain(x2).backward()
    np.testing.assert_allclose(x.grad.numpy(), x2.grad.numpy(), rtol=1e-5)


def test_a_replayed_program_called_with_other_layouts_than_traced():
    def f(x, y):
        # z is not replayed (a power), and is a result: a NumPy call of its
        # own, whose value keeps the input's layout
        z = x ** 3
        return ((z * y).sin() + z.exp()).sum(), z
    cf = rg.compile(f, backend="numpy")
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal((4, 6)), rng.standard_normal((4, 6))
    for xa, ya in [(a, b), (np.asfortranarray(a), b), (a, np.asfortranarray(b)),
                   (np.repeat(a, 2, axis=0)[::2], b.T.copy().T)]:
        x, y = rg.tensor(xa, requires_grad=True), rg.tensor(ya, requires_grad=True)
        x2, y2 = rg.tensor(xa, requires_grad=True), rg.tensor(ya, requires_grad=True)
        (out, z), (want, z2) = cf(x, y), f(x2, y2)
        out.backward()
        want.backward()
        np.testing.assert_allclose(out.item(), want.item(), rtol=1e-13)
        np.testing.assert_array_equal(z.detach().numpy(), z2.detach().numpy())
        np.testing.assert_allclose(x.grad.numpy(), x2.grad.numpy(), rtol=1e-13)
        np.testing.assert_allclose(y.grad.numpy(), y2.grad.numpy(), rtol=1e-13)
    assert len(cf._cache) == 1 and next(iter(cf._cache.values())).fwd.fused_by == "replay"


def test_ufuncs_numba_does_not_fuse_are_replayed(assert_matches_eager):
    def f(x):
        y = (x.abs() + 0.5).pow(1.5)
        y = (y * x).tan().atan() * y.reciprocal()
        return (y.exp2().log10() + (x - y).sinh() + x.asin()).sum()
    cf = rg.compile(f, backend="numpy")
    assert_matches_eager(cf, f, np.linspace(-0.9, 0.9, 32), rtol=1e-13, grad_rtol=1e-12)
    entry = next(iter(cf._cache.values()))
    # (every forward step, the sum included: one chunk)
    assert entry.fwd.fused_by == "replay" and entry.fwd.fused_ops == len(entry.fwd.steps)
    assert entry.bwd.fused_by == "replay" and entry.bwd.fused_ops >= len(entry.bwd.steps) - 2
    for uf in (np.power, np.maximum, np.tan, np.reciprocal, np.exp2, np.log10, np.minimum, np.sinh,
               np.arcsin):
        assert _fusion._replayable(uf, np.float64) and _fusion._replayable(uf, np.float32)
    assert not _fusion._replayable(np.isnan, np.float64)
    assert not _fusion._replayable(np.ldexp, np.float64)
    assert not _fusion._replayable(np.divmod, np.float64)
    assert not _fusion._replayable(np.matmul, np.float64)        # a generalized ufunc


@_DTYPES
def test_the_sum_is_numpys_bit_for_bit_at_every_size_and_for_signed_zeros(dtype):
    # the chunk runs add.reduce's own loop without its call: the same
    # values as np.add.reduce on either side of the pairwise sum's block
    # sizes and of the buffer size above which it calls add.reduce itself
    rng = np.random.default_rng(7)
    for n in (1, 5, 8, 9, 127, 128, 129, 3000, 8192, 8193):
        for x in ((rng.standard_normal(n) * 10.0 ** rng.integers(-6, 7, n)).astype(dtype),
                  np.full(n, -0.0, dtype)):
            ch = _replay.chunk_function([(np.negative, [("in", 0)]), ("sum", [("t", 0)])],
                                        [(0, None)], [1], [], dtype)
            total = np.empty((), dtype)
            ch(x, np.empty((0, n), dtype), total)
            want = np.add.reduce(-x)
            assert total[()] == want and np.signbit(total[()]) == np.signbit(want)


@pytest.mark.parametrize("n", [16, 20_000])
def test_a_program_of_chunks_alone_never_warns_on_overflow(n):
    # NumPy's warnings are turned off only around programs with a step of
    # NumPy's own; a program of replayed chunks (and their sum, whose
    # add.reduce above the buffer size is quiet itself) warns never, as eager
    f = rg.compile(lambda x: ((x * 2.0).exp() * 3.0).sum(), backend="numpy")
    x = rg.tensor(np.full(n, 1000.0), requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):
            y = f(x)
            y.backward()
    assert np.isinf(y.item())
    (entry,) = f._cache.values()
    assert entry.progs[0].fused_by == "replay"
    assert "_ES.set" not in entry.progs[0].source     # (the case under test)


def test_a_chunk_keeping_one_value_writes_it_into_a_1d_array_autograd_adopts():
    # the chunk contract: one kept value may go to a 1-d `out` (the value
    # itself); a block of two rows must be 2-d
    ops = [(np.multiply, [("in", 0), ("c", 2.0)]), (np.exp, [("t", 0)])]
    ch = _replay.chunk_function(ops, [(0, None)], [1], [1])
    x = np.linspace(-1.0, 1.0, 7)
    out = np.empty(7)
    ch(x, out)
    np.testing.assert_array_equal(out, np.exp(x * 2.0))
    two = _replay.chunk_function(ops, [(0, None)], [1], [0, 1])
    with pytest.raises(ValueError, match="C-contiguous"):
        two(x, np.empty(7))
    # a compiled gradient computed by one chunk is that array itself, and
    # AccumulateGrad adopts it as .grad instead of copying
    f = rg.compile(lambda x: ((x * 1.5).sin() * 2.0).sum(), backend="numpy")
    x = rg.tensor(np.linspace(0.0, 1.0, 16), requires_grad=True)
    f(x).backward()
    (entry,) = f._cache.values()
    bwd = entry.progs[1]
    made = []
    run = bwd.run

    def watched(*a):
        res = run(*a)
        # (ids only: a reference held here would make autograd copy)
        made.append((id(res[0]), res[0].base is None))
        return res
    bwd.run = watched
    try:
        x.grad = None
        f(x).backward()
    finally:
        bwd.run = run
    assert made == [(id(x.grad.numpy()), True)]
    np.testing.assert_allclose(x.grad.numpy(), 3.0 * np.cos(np.linspace(0.0, 1.0, 16) * 1.5))
