"""Tensor: the array side (docs/quickstart.md) and the autograd attributes.

Every tensor wraps its ndarray without copying; autograd state (requires_grad,
grad, grad_fn, is_leaf, output_nr, _version) behaves as torch's.
"""
import operator
import pickle

import numpy as np
import pytest

import retrograd as rg


def leaf(values=(1.0, 2.0, 3.0), dtype=np.float64):
    return rg.tensor(list(values), dtype=dtype, requires_grad=True)


# -- no copies --------------------------------------------------------------------------

def test_from_numpy_wraps_the_array_itself():
    a = np.arange(6.0).reshape(2, 3)
    t = rg.from_numpy(a)
    assert t.numpy() is a
    assert np.asarray(t) is a
    a[0, 0] = 42.0                      # shared memory, both ways
    assert t.tolist()[0][0] == 42.0


def test_as_tensor_shares_and_tensor_copies():
    a = np.arange(3.0)
    assert rg.as_tensor(a).numpy() is a
    assert rg.as_tensor(a, dtype=np.float32).dtype == np.float32
    t = rg.tensor(a)
    assert t.numpy() is not a and not np.shares_memory(t.numpy(), a)
    src = rg.from_numpy(a)
    assert rg.as_tensor(src) is src
    assert not np.shares_memory(rg.tensor(src).numpy(), a)


@pytest.mark.parametrize("make", [
    lambda: np.arange(6.0).reshape(2, 3),
    lambda: np.asfortranarray(np.arange(6.0).reshape(2, 3)),
    lambda: np.arange(6.0)[::2],
    lambda: np.arange(4, dtype=np.int32),
    lambda: np.array([True, False]),
    lambda: np.array(1.5, dtype=np.float32),
])
def test_tensor_of_a_numpy_array_copies_it_as_numpy_would(make):
    # (the common call has a path of its own: same result as the general one)
    a = make()
    t, general = rg.tensor(a), rg.tensor(a, device="cpu")
    for x in (t, general):
        assert not np.shares_memory(x.numpy(), a) and x.is_leaf and not x.requires_grad
        assert x.dtype == a.dtype and x.shape == a.shape and x.device == rg.device("cpu")
        np.testing.assert_array_equal(x.numpy(), a)
    assert t.numpy().flags["F_CONTIGUOUS"] == np.array(a, copy=True).flags["F_CONTIGUOUS"]
    if a.dtype.kind == "f":
        assert rg.tensor(a, requires_grad=True).requires_grad
    else:
        with pytest.raises(RuntimeError, match="floating point"):
            rg.tensor(a, requires_grad=True)


def test_tensor_of_a_numpy_array_of_strings_or_objects_is_refused():
    with pytest.raises(ValueError, match="too many dimensions 'str'"):
        rg.tensor(np.array(["a", "b"]))
    with pytest.raises(RuntimeError, match="Could not infer dtype"):
        rg.tensor(np.array([object()]))


def test_from_numpy_rejects_non_arrays():
    with pytest.raises(TypeError):
        rg.from_numpy([1.0, 2.0])


def test_array_protocol_dtype_and_copy():
    a = np.arange(3.0)
    t = rg.from_numpy(a)
    assert np.asarray(t, dtype=np.float32).dtype == np.float32
    assert np.array(t, copy=True) is not a
    assert np.array_equal(np.array(t, copy=True), a)


def test_numpy_refuses_tensors_that_require_grad():
    x = leaf()
    with pytest.raises(RuntimeError, match=r"detach\(\)\.numpy\(\)"):
        x.numpy()
    assert x.detach().numpy() is x.numpy(force=True)


def test_data_shares_the_array_but_not_the_graph():
    x = leaf()
    d = x.data
    assert d.numpy() is x.numpy(force=True)
    assert not d.requires_grad and d.is_leaf


# -- requires_grad ----------------------------------------------------------------------

def test_requires_grad_on_leaves():
    t = rg.tensor([1.0, 2.0])
    assert not t.requires_grad and t.is_leaf
    t.requires_grad = True
    assert t.requires_grad and t.is_leaf and t.grad_fn is None
    t.requires_grad_(False)
    assert not t.requires_grad
    assert t.requires_grad_() is t and t.requires_grad


@pytest.mark.parametrize("value", [True, False])
def test_requires_grad_cannot_be_assigned_on_non_leaves(value):
    y = leaf() * 2
    with pytest.raises(RuntimeError, match="leaf variables"):
        y.requires_grad = value
    assert y.requires_grad


def test_requires_grad_method_on_non_leaves_as_torch():
    y = leaf() * 2
    assert y.requires_grad_(True) is y          # a no-op, as in torch
    with pytest.raises(RuntimeError, match="detach"):
        y.requires_grad_(False)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.bool_, np.uint8])
def test_integer_dtypes_cannot_require_grad(dtype):
    with pytest.raises(RuntimeError, match="floating point"):
        rg.tensor([1, 0], dtype=dtype, requires_grad=True)
    t = rg.tensor([1, 0], dtype=dtype)
    with pytest.raises(RuntimeError, match="floating point"):
        t.requires_grad = True
    with pytest.raises(RuntimeError, match="floating point"):
        rg.zeros(2, dtype=dtype, requires_grad=True)
    assert not t.requires_grad


def test_integer_results_do_not_require_grad():
    x = leaf()
    assert not (x > 1).requires_grad
    assert (x > 1).grad_fn is None


# -- grad ---------------------------------------------------------------------------------

def test_grad_is_settable_and_checked():
    x = leaf()
    assert x.grad is None
    g = rg.ones(3)
    x.grad = g
    assert x.grad is g
    with pytest.raises(RuntimeError, match="same size"):
        x.grad = rg.ones(2)
    with pytest.raises(RuntimeError, match="must match the tensor.s dtype"):
        x.grad = rg.ones(3, dtype=np.float32)
    with pytest.raises(TypeError):
        x.grad = np.ones(3)
    assert x.grad is g                  # failed assignments leave it alone
    x.grad = None
    assert x.grad is None
    x.grad = g
    del x.grad
    assert x.grad is None


def test_grad_device_is_checked(virtual_cpu_devices):
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="same device"):
        x.grad = rg.ones(2, device="cpu:1")
    y = rg.tensor([1.0, 2.0], device="cpu:1", requires_grad=True)
    y.grad = rg.ones(2, device="cpu:1")
    assert str(y.grad.device) == "cpu:1"


def test_grad_of_a_non_leaf_is_none_unless_retained():
    x = leaf()
    y = x * 2
    y.sum().backward()
    assert y.grad is None
    assert x.grad.tolist() == [2.0, 2.0, 2.0]
    assert not x.grad.requires_grad


# -- grad_fn, is_leaf, output_nr, retains_grad ------------------------------------------

def test_grad_fn_and_is_leaf():
    x = leaf()
    c = rg.tensor([1.0, 1.0, 1.0])
    y = x * c
    assert x.grad_fn is None and x.is_leaf
    assert c.grad_fn is None and c.is_leaf
    assert y.grad_fn.name() == "MulBackward0" and not y.is_leaf
    assert y.output_nr == 0 and x.output_nr == 0
    assert (c * c).grad_fn is None and (c * c).is_leaf


def test_retains_grad_and_retain_grad():
    x = leaf()
    y = x * 2
    assert not y.retains_grad and not x.retains_grad
    y.retain_grad()
    y.retain_grad()                 # idempotent: one hook, not two
    assert y.retains_grad
    x.retain_grad()                 # a no-op on leaves: they always get .grad
    assert not x.retains_grad
    (y * y).sum().backward()
    assert y.grad.tolist() == [4.0, 8.0, 12.0]
    assert not y.grad.requires_grad
    with pytest.raises(RuntimeError, match="requires_grad=False"):
        rg.tensor([1.0]).retain_grad()


# -- _version -----------------------------------------------------------------------------

def test_version_is_shared_with_views_and_detach():
    a = rg.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    related = [a[1:], a[:, 0], a.reshape(3, 2), a.reshape(6), a.T, a.transpose(0, 1),
               a.permute(1, 0), a.expand(4, 2, 3), a.detach(), a[1:].detach()]
    assert a._version == 0
    a.add_(1)
    assert [t._version for t in related] == [1] * len(related)
    related[0].mul_(2)              # through a view: the base sees it too
    assert a._version == 2
    assert [t._version for t in related] == [2] * len(related)
    related[-2].sub_(1)             # through a detach()
    assert a._version == 3
    assert a.tolist() == [[1.0, 2.0, 3.0], [9.0, 11.0, 13.0]]


def test_version_not_shared_with_copies():
    a = rg.tensor([1.0, 2.0])
    copies = [a.clone(), a * 1, rg.tensor(a), a.data]
    a.add_(1)
    assert [t._version for t in copies] == [0] * len(copies)


def test_every_inplace_op_bumps_the_version():
    t = rg.tensor([1.0, 2.0])
    for i, f in enumerate([lambda: t.add_(1), lambda: t.sub_(1), lambda: t.mul_(2),
                           lambda: t.div_(2), lambda: t.pow_(1)], start=1):
        f()
        assert t._version == i


# -- detach, detach_, clone -------------------------------------------------------------

def test_detach():
    x = leaf()
    y = x * 2
    d = y.detach()
    assert d.is_leaf and not d.requires_grad and d.grad_fn is None
    assert np.shares_memory(d.numpy(), y.numpy(force=True))
    assert not d.is_view            # torch: detach()._base is None
    d.requires_grad_()              # a new leaf of its own
    assert d.requires_grad and y.grad_fn is not None


def test_inplace_on_the_detach_of_a_leaf_is_allowed():
    # The optimizer idiom p.detach().mul_(...) (torch allows it).
    x = leaf()
    x.detach().mul_(2)
    assert x.tolist() == [2.0, 4.0, 6.0]
    assert x._version == 1 and x.requires_grad and x.is_leaf


def test_detach_in_place():
    x = leaf()
    y = x * 2
    assert y.detach_() is y
    assert y.is_leaf and not y.requires_grad and y.grad_fn is None
    with pytest.raises(RuntimeError, match="views in-place"):
        (x * 2)[1:].detach_()
    with pytest.raises(RuntimeError, match="views in-place"):
        rg.ones(3)[1:].detach_()


def test_clone_copies_and_records():
    x = leaf()
    c = x.clone()
    assert c.grad_fn.name() == "CloneBackward0"
    assert not np.shares_memory(c.numpy(force=True), x.numpy(force=True))
    c.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 1.0]
    assert rg.tensor([1.0]).clone().grad_fn is None


# -- the array side ------------------------------------------------------------------

def test_shape_dtype_ndim_device_numel_size():
    t = rg.zeros(2, 3, dtype=np.float32)
    assert t.shape == (2, 3) and t.ndim == 2 and t.dtype == np.float32
    assert isinstance(t.dtype, np.dtype)
    assert str(t.device) == "cpu"
    assert t.numel() == 6 and t.dim() == 2 and len(t) == 2
    assert t.size() == (2, 3) and t.size(0) == 2 and t.size(-1) == 3
    with pytest.raises(IndexError):
        t.size(2)


def test_item_tolist_conversions():
    assert rg.tensor(2.5).item() == 2.5
    assert type(rg.tensor(3).item()) is int
    assert rg.tensor([[2.5]]).item() == 2.5
    with pytest.raises(RuntimeError, match="one element"):
        rg.tensor([1.0, 2.0]).item()
    assert rg.tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert float(rg.tensor(1.5)) == 1.5 and int(rg.tensor(2.7)) == 2
    assert [10, 20, 30][rg.tensor(1)] == 20
    assert bool(rg.tensor([1.0])) and not bool(rg.tensor(0.0))
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(rg.tensor([1.0, 2.0]))


def test_T_to_and_iteration():
    a = np.arange(6.0).reshape(2, 3)
    t = rg.from_numpy(a)
    assert t.T.shape == (3, 2) and np.shares_memory(t.T.numpy(), a)
    assert t.to(np.float32).dtype == np.float32
    assert t.to(np.float64) is t and t.to("cpu") is t
    assert [r.tolist() for r in t] == a.tolist()
    x = leaf()
    y = x.to(np.float32)
    assert y.grad_fn is not None and y.dtype == np.float32
    y.sum().backward()
    assert x.grad.dtype == np.float64 and x.grad.tolist() == [1.0, 1.0, 1.0]


def test_pickle_round_trip_of_a_leaf():
    x = leaf()
    y = pickle.loads(pickle.dumps(x))
    assert y.requires_grad and y.tolist() == x.tolist()
    # as torch: a non-leaf pickles to a leaf that requires grad
    z = pickle.loads(pickle.dumps(x * 2))
    assert z.is_leaf and z.requires_grad and z.grad_fn is None


# -- operators -------------------------------------------------------------------------

BINARY = [operator.add, operator.sub, operator.mul, operator.truediv, operator.pow]


@pytest.mark.parametrize("op", BINARY, ids=lambda f: f.__name__)
def test_binary_operators_and_reflected(op):
    a = np.array([1.0, 2.0, 4.0])
    b = np.array([0.5, 3.0, 2.0])
    x = rg.from_numpy(a)
    for res, ref in [(op(x, rg.from_numpy(b)), op(a, b)), (op(x, 2.0), op(a, 2.0)),
                     (op(2.0, x), op(2.0, a)), (op(x, 2), op(a, 2)), (op(3, x), op(3, a))]:
        assert isinstance(res, rg.Tensor)
        np.testing.assert_allclose(res.numpy(), ref)


@pytest.mark.parametrize("op", BINARY + [operator.matmul], ids=lambda f: f.__name__)
def test_numpy_left_operand_defers_to_the_tensor(op):
    # ndarray + Tensor must reach Tensor.__radd__ (and record the graph),
    # not convert the tensor through __array__ and drop it.
    a = np.array([1.0, 2.0])
    x = leaf([2.0, 3.0])
    res = op(a, x)
    assert isinstance(res, rg.Tensor) and res.requires_grad
    np.testing.assert_allclose(res.detach().numpy(), op(a, np.array([2.0, 3.0])))
    res2 = op(np.float64(2.0), x) if op is not operator.matmul else res
    assert isinstance(res2, rg.Tensor) and res2.requires_grad


def test_reflected_operator_gradients():
    x = leaf([1.0, 2.0])
    (2.0 - x).sum().backward()
    assert x.grad.tolist() == [-1.0, -1.0]
    x.grad = None
    (2.0 / x).sum().backward()
    assert x.grad.tolist() == [-2.0, -0.5]
    x.grad = None
    (2.0 ** x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.log(2.0) * 2.0 ** np.array([1.0, 2.0]))
    x.grad = None
    (np.array([3.0, 4.0]) * x).sum().backward()
    assert x.grad.tolist() == [3.0, 4.0]


def test_unary_minus_and_matmul():
    x = leaf([1.0, 2.0])
    assert (-x).tolist() == [-1.0, -2.0] and (-x).grad_fn.name() == "NegBackward0"
    m = rg.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert (m @ x).tolist() == [5.0, 11.0]


@pytest.mark.parametrize("op", [operator.lt, operator.le, operator.gt, operator.ge,
                                operator.eq, operator.ne], ids=lambda f: f.__name__)
def test_comparisons_return_bool_tensors_without_grad(op):
    a = np.array([1.0, 2.0, 3.0])
    x = rg.tensor(a, requires_grad=True)
    for res, ref in [(op(x, 2.0), op(a, 2.0)), (op(2.0, x), op(2.0, a)),
                     (op(x, x), op(a, a)), (op(a, x), op(a, a))]:
        assert isinstance(res, rg.Tensor)
        assert res.dtype == np.bool_
        assert not res.requires_grad and res.grad_fn is None
        assert res.tolist() == ref.tolist()


def test_numpy_functions_keep_numpy_meaning():
    a = np.arange(6.0).reshape(2, 3)
    t = rg.from_numpy(a)
    assert np.array_equal(np.sum(t, axis=0), a.sum(axis=0))
    assert np.mean(t) == a.mean()
    assert np.array_equal(np.concatenate([t, t]), np.concatenate([a, a]))
    assert np.array_equal(np.exp(t), np.exp(a))
    assert np.allclose(t, a)
    # mapped NumPy functions run as retrograd ops (core/_numpy_protocol.py)
    assert isinstance(np.sum(t, axis=0), rg.Tensor)


# -- dtype promotion (NumPy's) ------------------------------------------------------

@pytest.mark.parametrize("make, expected", [
    (lambda f32, f64, i64: f32 * 2.0, np.float32),
    (lambda f32, f64, i64: 2.0 * f32, np.float32),
    (lambda f32, f64, i64: f32 + 1, np.float32),
    (lambda f32, f64, i64: f32 / 2, np.float32),
    (lambda f32, f64, i64: f32 ** 2, np.float32),
    (lambda f32, f64, i64: f32 * f64, np.float64),
    (lambda f32, f64, i64: f64 - f32, np.float64),
    (lambda f32, f64, i64: i64 * 2.5, np.float64),
    (lambda f32, f64, i64: i64 / 2, np.float64),
    (lambda f32, f64, i64: i64 + 1, np.int64),
    (lambda f32, f64, i64: f32 * i64, np.float64),
])
def test_dtype_promotion_follows_numpy(make, expected):
    f32 = rg.ones(2, dtype=np.float32)
    f64 = rg.ones(2, dtype=np.float64)
    i64 = rg.ones(2, dtype=np.int64)
    assert make(f32, f64, i64).dtype == expected
    np_res = make(np.ones(2, np.float32), np.ones(2), np.ones(2, np.int64))
    assert np_res.dtype == expected


def test_gradient_of_a_promoted_op_has_the_leaf_dtype():
    x = rg.ones(2, dtype=np.float32, requires_grad=True)
    y = rg.ones(2, dtype=np.float64, requires_grad=True)
    (x * y).sum().backward()
    assert x.grad.dtype == np.float32 and y.grad.dtype == np.float64


# -- factories ------------------------------------------------------------------------

def test_tensor_factory_dtypes():
    assert rg.tensor([1, 2]).dtype == np.int64
    assert rg.tensor([1.0]).dtype == np.float64
    assert rg.tensor(True).dtype == np.bool_
    assert rg.tensor(3.0).shape == ()
    assert rg.tensor([1, 2], dtype=np.float32).dtype == np.float32
    assert rg.tensor([rg.tensor(1.0), rg.tensor(2.0)]).tolist() == [1.0, 2.0]
    x = rg.tensor([1.0], requires_grad=True)
    assert x.requires_grad and x.is_leaf


@pytest.mark.parametrize("factory, fill", [(rg.zeros, 0.0), (rg.ones, 1.0)])
def test_zeros_ones(factory, fill):
    for t in [factory(2, 3), factory((2, 3)), factory([2, 3])]:
        assert t.shape == (2, 3) and t.dtype == np.float64
        assert (t.numpy() == fill).all()
    assert factory(2, dtype=np.float32).dtype == np.float32
    t = factory(2, requires_grad=True)
    assert t.requires_grad and t.is_leaf


def test_full_empty_arange_linspace_eye():
    assert rg.full((2,), 3.5).tolist() == [3.5, 3.5]
    assert rg.full(2, 1.5).shape == (2,)
    assert rg.full((2,), 3).dtype == np.int64
    assert rg.full((2,), 3, dtype=np.float32).dtype == np.float32
    assert rg.empty(2, 3).shape == (2, 3) and rg.empty(2).dtype == np.float64
    assert rg.arange(5).tolist() == [0, 1, 2, 3, 4] and rg.arange(5).dtype == np.int64
    assert rg.arange(1, 4).tolist() == [1, 2, 3]
    assert rg.arange(0, 1, 0.25).tolist() == [0.0, 0.25, 0.5, 0.75]
    assert rg.arange(3.0).dtype == np.float64
    assert rg.linspace(0, 1, 5).tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert rg.linspace(0, 1, 5).dtype == np.float64
    assert rg.eye(2).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert rg.eye(2, 3).shape == (2, 3)
    assert rg.full((2,), 1.0, requires_grad=True).requires_grad


def test_like_factories():
    t = rg.tensor([[1.0, 2.0]], dtype=np.float32)
    z, o = rg.zeros_like(t), rg.ones_like(t)
    assert z.shape == o.shape == (1, 2)
    assert z.dtype == o.dtype == np.float32
    assert z.tolist() == [[0.0, 0.0]] and o.tolist() == [[1.0, 1.0]]
    assert rg.ones_like(t, dtype=np.float64).dtype == np.float64
    assert rg.zeros_like(t, requires_grad=True).requires_grad
    assert rg.zeros_like(np.ones(3)).shape == (3,)


def test_random_factories_and_manual_seed():
    rg.manual_seed(1234)
    r1, n1 = rg.rand(3, 2).numpy(), rg.randn(4).numpy()
    rg.manual_seed(1234)
    r2, n2 = rg.rand(3, 2).numpy(), rg.randn(4).numpy()
    assert np.array_equal(r1, r2) and np.array_equal(n1, n2)
    rg.manual_seed(1235)
    assert not np.array_equal(rg.rand(3, 2).numpy(), r1)
    assert r1.shape == (3, 2) and r1.dtype == np.float64
    assert ((r1 >= 0) & (r1 < 1)).all()
    assert rg.randn((2, 3)).shape == (2, 3)
    assert rg.rand(2, dtype=np.float32).dtype == np.float32
    assert rg.randn(2, requires_grad=True).requires_grad


# -- repr -----------------------------------------------------------------------------

def test_repr():
    assert repr(rg.tensor([1.0, 2.0])) == "tensor([1., 2.])"
    assert repr(rg.tensor([1, 2])) == "tensor([1, 2])"
    assert repr(rg.tensor(1.5)) == "tensor(1.5)"
    assert repr(rg.tensor([1.0], requires_grad=True)) == "tensor([1.], requires_grad=True)"
    assert repr(rg.tensor([1.0], requires_grad=True) * 2) == "tensor([2.], grad_fn=<MulBackward0>)"
    assert repr(rg.tensor([1.0], dtype=np.float32)) == "tensor([1.], dtype=float32)"
    assert str(rg.tensor([1.0])) == "tensor([1.])"


# -- torch oracle -----------------------------------------------------------------------

@pytest.mark.oracle
def test_autograd_attributes_match_torch():
    torch = pytest.importorskip("torch")

    def attrs(lib, tensor):
        x = tensor([1.0, 2.0], requires_grad=True)
        c = tensor([3.0, 4.0])
        y = x * c
        z = c * c
        return [(t.is_leaf, t.requires_grad, t.grad_fn is None, t.output_nr, t.retains_grad,
                 t._version) for t in (x, c, y, z, y.detach(), x.detach())]

    assert attrs(rg, rg.tensor) == attrs(torch, lambda d, **k: torch.tensor(d, dtype=torch.float64, **k))


def test_numpy_functions_without_counterpart_raise_and_metadata_works():
    # a NumPy function with no retrograd counterpart raises TypeError
    # naming it even when no graph is at stake; metadata queries and
    # bool/integer-valued comparisons run on the arrays
    a = np.arange(6.0).reshape(2, 3)
    t = rg.from_numpy(a)
    for call, name in ((lambda: np.median(t), "median"), (lambda: np.sort(t), "sort"),
                       (lambda: np.linalg.norm(t), "norm"), (lambda: np.around(t, 1), "round|around")):
        with pytest.raises(TypeError, match=rf"numpy(\.linalg)?\.({name}) has no retrograd counterpart"):
            call()
    assert np.shape(t) == (2, 3) and np.ndim(t) == 2 and np.size(t) == 6
    assert np.result_type(t, np.float32) == np.float64
    assert not np.iscomplexobj(t) and np.isrealobj(t)
    assert np.shares_memory(t, a)
    assert np.array_equal(t, a) and np.allclose(t, a)
    assert int(np.argmax(t)) == 5 and np.count_nonzero(t) == 5
    assert np.median(np.asarray(t)) == 2.5
