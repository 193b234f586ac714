"""`.grad` and `.data` assignments are validated by torch's rules.

torch refuses a tensor as its own gradient, a gradient of another dtype, size
or device, and a `.data` that is not a tensor or that could not carry a
gradient for a tensor that requires one. Each refusal is checked against
torch itself where it is installed.
"""
import numpy as np
import pytest

import retrograd as rg


def _raises_like_torch(rg_fn, torch_fn):
    """Both raise the same builtin class, or both succeed."""
    torch = pytest.importorskip("torch")
    del torch
    outcomes = []
    for fn in (rg_fn, torch_fn):
        try:
            fn()
            outcomes.append(None)
        except Exception as exc:                        # noqa: BLE001 - compared below
            outcomes.append(type(exc))
    assert outcomes[0] is outcomes[1], outcomes
    return outcomes[0]


def test_own_grad_is_refused():
    x = rg.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="own grad"):
        x.grad = x
    assert x.grad is None


def test_grad_of_another_dtype_size_or_type_is_refused_as_torch():
    torch = pytest.importorskip("torch")
    cases = [
        (lambda: rg.ones(3, dtype="float32"), lambda: torch.ones(3, dtype=torch.float32)),
        (lambda: rg.ones(3, dtype="int64"), lambda: torch.ones(3, dtype=torch.int64)),
        (lambda: rg.ones(4), lambda: torch.ones(4, dtype=torch.float64)),
        (lambda: rg.ones(1), lambda: torch.ones(1, dtype=torch.float64)),
        (lambda: [1.0, 2.0, 3.0], lambda: [1.0, 2.0, 3.0]),
    ]
    for make_rg, make_torch in cases:
        x = rg.ones(3, requires_grad=True)
        xt = torch.ones(3, dtype=torch.float64, requires_grad=True)
        cls = _raises_like_torch(lambda: setattr(x, "grad", make_rg()), lambda: setattr(xt, "grad", make_torch()))
        assert cls is not None
        assert x.grad is None


def test_grad_that_requires_grad_is_accepted():
    x = rg.ones(3, requires_grad=True)
    g = rg.zeros(3, requires_grad=True)
    x.grad = g
    assert x.grad is g


def test_data_must_be_a_tensor():
    x = rg.ones(3)
    with pytest.raises(TypeError, match="has to be a tensor, but got NoneType"):
        x.data = None
    with pytest.raises(TypeError, match="got list"):
        x.data = [1.0, 2.0]
    with pytest.raises(TypeError, match="got ndarray"):
        x.data = np.zeros(2)
    assert np.array_equal(np.asarray(x), np.ones(3))


def test_data_of_a_tensor_that_requires_grad_must_be_floating():
    x = rg.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="floating point or complex"):
        x.data = rg.zeros(2, dtype="int64")
    with pytest.raises(RuntimeError, match="floating point or complex"):
        x.data = rg.zeros(2, dtype=bool)
    x.data = rg.zeros(2, dtype="complex128")
    assert x.requires_grad and x.dtype == np.complex128 and x.shape == (2,)
    x.data = rg.zeros(4, dtype="float32")
    assert x.requires_grad and x.dtype == np.float32 and x.shape == (4,)


def test_data_may_change_dtype_and_shape_without_grad():
    x = rg.ones(3, dtype="float32")
    x.data = rg.zeros(2, dtype="int64")
    assert x.dtype == np.int64 and x.shape == (2,)


def test_data_takes_the_new_device(virtual_cpu_devices):
    x = rg.ones(2)
    x.data = rg.zeros(2, device="cpu:1")
    assert str(x.device) == "cpu:1"
    y = x + rg.ones(2, device="cpu:1")
    assert str(y.device) == "cpu:1"
