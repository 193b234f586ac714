"""No path from a tensor to a NumPy array may drop the graph silently: every
public conversion either keeps the computation differentiable (and gives
torch's gradient) or raises, as torch does, naming detach().

The scenario on each path is d/dx sum(x * f(x)) where f goes through the
path; a silent conversion would contribute 0 through f."""
import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")
scipy_special = pytest.importorskip("scipy.special")

DATA = np.array([0.5, 1.5, 2.5])

# A path that converts to a plain array: torch raises RuntimeError on each.
CONVERTING = {
    "np.asarray": lambda x: np.asarray(x),
    "np.array": lambda x: np.array(x),
    "np.array of a list of tensors": lambda x: np.array([x, x])[0],
    "np.r_": lambda x: np.r_[x],
    "np.c_": lambda x: np.c_[x][:, 0],
    "np.mean of a list of tensors": lambda x: np.mean([x, x + 2], axis=0),
    "np.linalg.norm of a list of tensors": lambda x: np.linalg.norm([x, x], axis=0),
    "scipy.special.expit": lambda x: scipy_special.expit(x),
    "scipy.special.gammaln": lambda x: scipy_special.gammaln(x),
    "np.asarray with a dtype": lambda x: np.asarray(x, dtype=np.float32),
    "numpy()": lambda x: x.numpy(),
}

# Paths that stay differentiable here (torch raises on them: NumPy converts
# its tensors; retrograd's __array_function__ records stack/cat instead).
DIFFERENTIABLE = {
    "np.stack": (lambda x: np.stack([x, x])[1], lambda t: torch.stack([t, t])[1]),
    "np.concatenate": (lambda x: np.concatenate([x, x])[:3], lambda t: torch.cat([t, t])[:3]),
    "np.vstack": (lambda x: np.vstack([x, x])[0], lambda t: torch.vstack([t, t])[0]),
    "np.hstack": (lambda x: np.hstack([x, x])[3:], lambda t: torch.hstack([t, t])[3:]),
    "np.column_stack": (lambda x: np.column_stack([x, x])[:, 1], lambda t: torch.column_stack([t, t])[:, 1]),
    "np.dstack": (lambda x: np.dstack([x, x])[0, :, 1], lambda t: torch.dstack([t, t])[0, :, 1]),
    "np.atleast_2d": (lambda x: np.atleast_2d(x)[0], lambda t: torch.atleast_2d(t)[0]),
    "np.exp": (lambda x: np.exp(x), lambda t: torch.exp(t)),
    "np.sum keepdims": (lambda x: np.sum(x, keepdims=True), lambda t: t.sum(keepdim=True, dim=0)),
}


@pytest.mark.filterwarnings("ignore:__array__ implementation doesn't accept a copy keyword")  # torch's
@pytest.mark.parametrize("name", list(CONVERTING))
def test_converting_paths_raise_as_torch(name):
    f = CONVERTING[name]
    tx = torch.tensor(DATA, requires_grad=True)
    with pytest.raises(RuntimeError, match="requires grad"):
        (tx * torch.as_tensor(f(tx))).sum()
    x = rg.tensor(DATA, requires_grad=True)
    # RuntimeError from __array__ as torch's; a ufunc without a retrograd
    # counterpart (SciPy's) refuses through __array_ufunc__ with TypeError.
    # Either way the message says how to get the values on purpose.
    with pytest.raises((RuntimeError, TypeError), match=r"detach\(\)"):
        (x * rg.as_tensor(f(x))).sum().backward()


# ufuncs without a retrograd counterpart (SciPy's) refuse tensors through
# __array_ufunc__ whether or not they require grad (the module docstring of
# retrograd.core._numpy_protocol): convert on purpose with np.asarray.
UFUNCS = {"scipy.special.expit", "scipy.special.gammaln"}


@pytest.mark.parametrize("name", sorted(set(CONVERTING) - UFUNCS))
def test_converting_paths_work_without_grad(name):
    f = CONVERTING[name]
    x = rg.tensor(DATA)
    assert isinstance(np.asarray(f(x)), np.ndarray)
    y = rg.tensor(DATA, requires_grad=True)
    with rg.no_grad():       # nothing is recorded: converting loses nothing (torch agrees)
        np.testing.assert_allclose(np.asarray(f(y)), np.asarray(f(x)))


@pytest.mark.parametrize("name", list(DIFFERENTIABLE))
def test_differentiable_paths_give_torchs_gradient(name):
    f, tf = DIFFERENTIABLE[name]
    x = rg.tensor(DATA, requires_grad=True)
    (x * f(x)).sum().backward()
    tx = torch.tensor(DATA, requires_grad=True)
    (tx * tf(tx)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12)


def test_the_reported_case_gives_four_x():
    # d/dx sum(x * [x, x]) over both rows is 4x: once raised, never 2x
    x = rg.tensor(DATA, requires_grad=True)
    with pytest.raises(RuntimeError):
        (x * np.array([x, x])).sum()
    (x * rg.stack([x, x])).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 4 * DATA)


def test_detached_values_convert():
    x = rg.tensor(DATA, requires_grad=True)
    np.testing.assert_array_equal(np.asarray(x.detach()), DATA)
    np.testing.assert_array_equal(x.detach().numpy(), DATA)
    assert x.tolist() == DATA.tolist() and float(x[0]) == 0.5
    assert "tensor([0.5, 1.5, 2.5]" in repr(x)


@pytest.mark.parametrize("fname", ["max", "min", "amax", "amin", "sum", "mean", "prod"])
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)])
def test_numpy_reductions_keep_dims_as_numpy(fname, axis):
    data = np.arange(1.0, 7.0).reshape(2, 3)
    x = rg.tensor(data, requires_grad=True)
    got = getattr(np, fname)(x, axis=axis, keepdims=True)
    want = getattr(np, fname)(data, axis=axis, keepdims=True)
    assert isinstance(got, rg.Tensor) and tuple(got.shape) == want.shape
    np.testing.assert_allclose(got.detach().numpy(), want)
    got.sum().backward()
    assert x.grad is not None and tuple(x.grad.shape) == data.shape
