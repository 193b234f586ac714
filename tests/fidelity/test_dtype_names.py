"""The names a torch user types first: dtype names, __format__,
.float()/.double()/..., and Tensor.to's forms, checked against torch 2.13."""
from __future__ import annotations

import numpy as np
import pytest

import retrograd as rg

DTYPES = {
    "float16": np.float16, "float32": np.float32, "float64": np.float64, "int8": np.int8,
    "uint8": np.uint8, "int16": np.int16, "int32": np.int32, "int64": np.int64, "bool": np.bool_,
    "complex64": np.complex64, "complex128": np.complex128,
    # torch's aliases
    "half": np.float16, "float": np.float32, "double": np.float64, "short": np.int16, "int": np.int32,
    "long": np.int64, "cfloat": np.complex64, "cdouble": np.complex128,
}


def _torch():
    return pytest.importorskip("torch")


@pytest.mark.parametrize("name", sorted(DTYPES))
def test_dtype_names_are_numpy_dtypes_meaning_what_torchs_mean(name):
    torch = _torch()
    dt = getattr(rg, name)
    assert isinstance(dt, np.dtype) and dt == np.dtype(DTYPES[name])
    # same meaning as torch's name of the same spelling
    assert torch.zeros(1, dtype=getattr(torch, name)).numpy().dtype == dt
    assert name in dir(rg) and name in rg.core.__all__


@pytest.mark.parametrize("name", ["float16", "float32", "float64", "int32", "int64", "bool", "complex128"])
def test_dtype_names_accepted_everywhere_a_dtype_is(name):
    dt = getattr(rg, name)
    for t in (rg.zeros(2, dtype=dt), rg.ones(2, 2, dtype=dt), rg.empty(3, dtype=dt), rg.full((2,), 1, dtype=dt),
              rg.eye(2, dtype=dt), rg.tensor([1, 0], dtype=dt), rg.as_tensor([1], dtype=dt),
              rg.zeros_like(rg.ones(2), dtype=dt), rg.ones_like(rg.ones(2), dtype=dt),
              rg.full_like(rg.ones(2), 1, dtype=dt), rg.ones(2).to(dt), rg.ones(2).to(dtype=dt),
              rg.ones(2).to(name)):
        assert t.dtype == dt and t.dtype is dt, (name, t.dtype)
    if name != "bool":
        assert rg.arange(3, dtype=dt).dtype == dt
        assert rg.sum(rg.ones(2, 2), dim=1, dtype=dt).dtype == dt
    if np.dtype(dt).kind == "f":
        assert rg.rand(2, dtype=dt).dtype == dt and rg.randn(2, dtype=dt).dtype == dt


def test_tensor_dtype_compares_with_the_names():
    x = rg.ones(2, dtype=rg.float32)
    assert x.dtype == rg.float32 and x.dtype is rg.float32 and x.dtype != rg.float64
    assert rg.float is rg.float32 and rg.long is rg.int64 and rg.int is rg.int32


def test_dtype_names_do_not_shadow_builtins_inside_retrograd():
    # rg.float is a dtype (torch's name), yet retrograd's own code keeps the builtins
    assert rg.arange(3.0).tolist() == [0.0, 1.0, 2.0]
    assert rg.zeros(2, 3).shape == (2, 3)
    assert float(rg.tensor(2.5)) == 2.5 and int(rg.tensor(3)) == 3


# -- __format__ -----------------------------------------------------------------------

@pytest.mark.parametrize("spec", [".4f", "", ".2e", ">10.3f", "+.1f", "g"])
def test_format_of_a_0d_tensor_as_torch(spec):
    torch = _torch()
    assert format(rg.tensor(1.234567, requires_grad=True), spec) == format(
        torch.tensor(1.234567, dtype=torch.float64, requires_grad=True), spec)
    loss = (rg.tensor([1.5, 2.5], requires_grad=True) ** 2).mean()
    assert f"{loss:.4f}" == "4.2500"


@pytest.mark.parametrize("spec", ["d", "5d", "x"])
def test_format_of_an_integer_0d_tensor_as_torch(spec):
    torch = _torch()
    assert format(rg.tensor(42), spec) == format(torch.tensor(42), spec)


def test_format_of_a_bigger_tensor_as_torch():
    torch = _torch()
    assert format(rg.tensor([1.0, 2.0]), "") == str(rg.tensor([1.0, 2.0]))
    with pytest.raises(TypeError) as r:
        format(rg.tensor([1.0, 2.0]), ".2f")
    with pytest.raises(TypeError) as t:
        format(torch.tensor([1.0, 2.0]), ".2f")
    assert str(r.value) == str(t.value)


# -- .float() and friends ---------------------------------------------------------------

METHODS = ["float", "double", "half", "long", "int", "bool", "short", "char", "byte", "cfloat", "cdouble"]


@pytest.mark.parametrize("method", METHODS)
def test_conversion_methods_as_torch(method):
    torch = _torch()
    x = rg.tensor([0.5, -1.5, 2.0], requires_grad=True)
    tx = torch.tensor([0.5, -1.5, 2.0], dtype=torch.float64, requires_grad=True)
    if method in ("cfloat", "cdouble"):
        # deliberate deviation: complex results that need a gradient are
        # refused (retrograd has no conjugate/Wirtinger formulas, so the
        # gradient would be silently wrong); without grad they convert as torch
        with pytest.raises(RuntimeError, match="gradients of complex tensors are not supported"):
            getattr(x, method)()
        x, tx = x.detach(), tx.detach()
    y, ty = getattr(x, method)(), getattr(tx, method)()
    assert y.dtype == ty.detach().numpy().dtype
    assert y.requires_grad == ty.requires_grad
    assert (y.grad_fn is None) == (ty.grad_fn is None)
    np.testing.assert_array_equal(np.asarray(y.detach()), ty.detach().numpy())


def test_same_dtype_conversion_returns_the_tensor_itself_as_torch():
    x = rg.ones(2, requires_grad=True)
    assert x.double() is x and x.to(rg.float64) is x and x.to("float64") is x
    assert x.to(rg.float64, copy=True) is not x


@pytest.mark.parametrize("method", ["float", "half", "double"])
def test_float_conversions_keep_the_graph(method):
    x = rg.tensor([0.5, -1.5, 2.0], dtype=rg.float32, requires_grad=True)
    y = getattr(x, method)()
    (y * y).sum().backward()
    assert x.grad.dtype == rg.float32
    np.testing.assert_allclose(np.asarray(x.grad), [1.0, -3.0, 4.0])


def test_integer_conversion_of_an_integer_tensor():
    x = rg.tensor([1, 2])
    assert x.float().dtype == rg.float32 and x.float().tolist() == [1.0, 2.0]
    assert not x.float().requires_grad


# -- Tensor.to -----------------------------------------------------------------------------

def test_to_forms_as_torch(virtual_cpu_devices):
    torch = _torch()
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    tx = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    assert x.to(rg.float32).dtype == rg.float32 and x.to(rg.float32).grad_fn is not None
    assert tx.to(torch.float32).grad_fn is not None
    assert x.to("float32").dtype == rg.float32
    y = x.to("cpu:1", rg.float32)
    assert y.dtype == rg.float32 and str(y.device) == "cpu:1"
    other = rg.zeros(1, dtype=rg.int32)
    assert x.to(other).dtype == rg.int32 and tx.to(torch.zeros(1, dtype=torch.int32)).dtype == torch.int32
    z = x.to(device="cpu:1", dtype=rg.float16)
    assert z.dtype == rg.float16 and str(z.device) == "cpu:1"
    assert x.to(None) is x and tx.to(None) is tx
    assert x.to("cpu") is x
    assert x.to(rg.float32, False, True).dtype == rg.float32


def test_to_refuses_what_torch_refuses():
    x = rg.ones(2)
    with pytest.raises(TypeError):
        x.to(rg.float32, rg.float64)
    with pytest.raises(RuntimeError, match="Invalid device string"):
        x.to("nonsense")
    with pytest.raises(TypeError):
        x.to(dtype=object)
    with pytest.raises(TypeError):
        x.to(bogus=1)
