"""nn.utils.parametrize and nn.utils.parametrizations (orthogonal,
weight_norm, spectral_norm) against torch 2.13: values, gradients, state
dict layouts, right_inverse, removal, caching and errors."""
import copy
import pickle

import numpy as np
import pytest

import retrograd as rg
import retrograd.nn.utils.parametrize as P

torch = pytest.importorskip("torch")
TP = torch.nn.utils.parametrize
pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(17)


def _close(a, b, rtol=1e-10, atol=1e-12):
    np.testing.assert_allclose(np.asarray(a.detach()), b.detach().numpy(), rtol=rtol, atol=atol)


def _symmetric(lib):
    class Symmetric(lib.nn.Module):
        def forward(self, x):
            return x.triu() + x.triu(1).T

        def right_inverse(self, a):
            return a.triu()
    return Symmetric()


def _scale(lib, factor):
    class Scale(lib.nn.Module):
        def forward(self, x):
            return x * factor

        def right_inverse(self, y):
            return y / factor
    return Scale()


def _rank_one(lib):
    class RankOne(lib.nn.Module):
        def forward(self, x, y):
            return x.unsqueeze(-1) @ y.unsqueeze(-2)

        def right_inverse(self, z):
            return z[:, 0], z[0] / z[0, 0]
    return RankOne()


def _linears(n_in, n_out):
    mt = torch.nn.Linear(n_in, n_out).double()
    mr = rg.nn.Linear(n_in, n_out)
    mr.load_state_dict({k: rg.tensor(v.detach().numpy().copy()) for k, v in mt.state_dict().items()})
    return mr, mt


def _load_from_torch(mr, mt):
    mr.load_state_dict({k: rg.tensor(v.detach().numpy().copy()) for k, v in mt.state_dict().items()})


def _forward_backward(mr, mt, n_in):
    x = RNG.standard_normal((2, n_in))
    ya, yb = mr(rg.tensor(x)), mt(torch.tensor(x))
    _close(ya, yb)
    seed = RNG.standard_normal(tuple(yb.shape))
    ya.backward(rg.tensor(seed))
    yb.backward(torch.tensor(seed))
    for (na, pa), (nb, pb) in zip(mr.named_parameters(), mt.named_parameters()):
        assert na == nb
        _close(pa.grad, pb.grad)


def test_register_with_right_inverse_as_torch():
    mr, mt = _linears(3, 3)
    weight_r = mr.weight
    P.register_parametrization(mr, "weight", _symmetric(rg))
    TP.register_parametrization(mt, "weight", _symmetric(torch))
    # the original is the same object, now holding right_inverse(weight)
    assert mr.parametrizations.weight.original is weight_r
    assert type(mr).__name__ == type(mt).__name__ == "ParametrizedLinear"
    assert list(mr.state_dict()) == list(mt.state_dict())
    assert [n for n, _ in mr.named_parameters()] == [n for n, _ in mt.named_parameters()]
    assert repr(mr) == repr(mt)
    _close(mr.weight, mt.weight)
    _forward_backward(mr, mt, 3)
    # assigning runs right_inverse
    a = RNG.standard_normal((3, 3))
    mr.weight, mt.weight = rg.tensor(a + a.T), torch.tensor(a + a.T)
    _close(mr.parametrizations.weight.original, mt.parametrizations.weight.original)
    assert P.is_parametrized(mr) and P.is_parametrized(mr, "weight") and not P.is_parametrized(mr, "bias")
    assert P.type_before_parametrizations(mr) is rg.nn.Linear


def test_chained_parametrizations_as_torch():
    mr, mt = _linears(3, 3)
    for lib, m in ((rg, mr), (torch, mt)):
        lib.nn.utils.parametrize.register_parametrization(m, "weight", _symmetric(lib))
        lib.nn.utils.parametrize.register_parametrization(m, "weight", _scale(lib, 3.0))
    _close(mr.weight, mt.weight)
    assert len(mr.parametrizations.weight) == 2
    _forward_backward(mr, mt, 3)
    a = RNG.standard_normal((3, 3))
    mr.weight, mt.weight = rg.tensor(a + a.T), torch.tensor(a + a.T)
    _close(mr.weight, mt.weight)


def test_several_originals_and_unsafe_as_torch():
    mr, mt = _linears(3, 4)
    P.register_parametrization(mr, "weight", _rank_one(rg), unsafe=True)
    TP.register_parametrization(mt, "weight", _rank_one(torch), unsafe=True)
    assert list(mr.state_dict()) == list(mt.state_dict())
    assert isinstance(mr.parametrizations.weight.original0, rg.nn.Parameter)
    _close(mr.weight, mt.weight)
    _forward_backward(mr, mt, 3)
    with pytest.raises(ValueError, match="Cannot leave unparametrized"):
        P.remove_parametrizations(mr, "weight", leave_parametrized=False)
    w = mt.weight.detach().numpy().copy()
    P.remove_parametrizations(mr, "weight")
    assert isinstance(mr.weight, rg.nn.Parameter)
    np.testing.assert_allclose(mr.weight.detach().numpy(), w, rtol=1e-12)


def test_remove_parametrizations_keeps_the_parameter_object():
    for leave in (True, False):
        mr, mt = _linears(3, 3)
        original = mr.weight
        P.register_parametrization(mr, "weight", _scale(rg, 2.0))
        TP.register_parametrization(mt, "weight", _scale(torch, 2.0))
        P.remove_parametrizations(mr, "weight", leave_parametrized=leave)
        TP.remove_parametrizations(mt, "weight", leave_parametrized=leave)
        assert mr.weight is original and type(mr) is rg.nn.Linear
        assert not hasattr(mr, "parametrizations")
        _close(mr.weight, mt.weight)
    with pytest.raises(ValueError, match="does not have a parametrization on weight"):
        P.remove_parametrizations(rg.nn.Linear(2, 2), "weight")


def test_buffers_can_be_parametrized():
    m = rg.nn.BatchNorm1d(3)
    P.register_parametrization(m, "running_var", _scale(rg, 2.0))
    assert "parametrizations.running_var.original" in m.state_dict()
    assert m.parametrizations.running_var.original.requires_grad is False
    np.testing.assert_allclose(m.parametrizations.running_var.original.numpy(), 0.5)
    np.testing.assert_allclose(m.running_var.numpy(), 1.0)
    P.remove_parametrizations(m, "running_var")
    assert "running_var" in dict(m.named_buffers())


def test_cached_computes_once():
    calls = []

    class Counting(rg.nn.Module):
        def forward(self, x):
            calls.append(1)
            return x * 2

    m = P.register_parametrization(rg.nn.Linear(2, 2), "weight", Counting())
    calls.clear()
    with P.cached():
        with P.cached():
            first = m.weight
        assert m.weight is first
    assert len(calls) == 1
    assert m.weight is not m.weight


def test_registration_errors_as_torch():
    class Grow(rg.nn.Module):
        def forward(self, x):
            return rg.cat([x, x])

    class GrowT(torch.nn.Module):
        def forward(self, x):
            return torch.cat([x, x])

    class Halve(rg.nn.Module):
        def forward(self, x):
            return x.float()

    for lib, grow in ((torch, GrowT()), (rg, Grow())):
        with pytest.raises(ValueError, match="may not change the shape"):
            lib.nn.utils.parametrize.register_parametrization(lib.nn.Linear(2, 2), "weight", grow)
        with pytest.raises(ValueError, match="does not have a parameter, a buffer"):
            lib.nn.utils.parametrize.register_parametrization(lib.nn.Linear(2, 2), "nothing", grow)
        m = lib.nn.utils.parametrize.register_parametrization(lib.nn.Linear(2, 2), "weight", grow, unsafe=True)
        assert tuple(m.weight.shape) == (4, 2)
    with pytest.raises(ValueError, match="may not change the dtype"):
        P.register_parametrization(rg.nn.Linear(2, 2, dtype=rg.float64), "weight", Halve())
    with pytest.raises(RuntimeError, match="does not implement right_inverse"):
        m = P.register_parametrization(rg.nn.Linear(2, 2), "weight", Halve(), unsafe=True)
        m.weight = rg.ones(2, 2)
    with pytest.raises(ValueError, match="requires one or more modules"):
        P.ParametrizationList([], rg.ones(2))


def test_deepcopy_works_and_pickling_refuses_as_torch():
    for lib in (torch, rg):
        m = lib.nn.utils.parametrizations.weight_norm(lib.nn.Linear(2, 3))
        c = copy.deepcopy(m)
        assert type(c).__name__ == "ParametrizedLinear"
        assert c.parametrizations.weight.original0 is not m.parametrizations.weight.original0
        with pytest.raises(RuntimeError, match="state_dict"):
            pickle.dumps(m)


def test_transfer_parametrizations_and_params_as_torch():
    src = P.register_parametrization(rg.nn.Linear(3, 3), "weight", _symmetric(rg))
    dst = P.transfer_parametrizations_and_params(src, rg.nn.Linear(3, 3))
    assert dst.parametrizations.weight.original is src.parametrizations.weight.original
    np.testing.assert_array_equal(dst.weight.detach().numpy(), src.weight.detach().numpy())


@pytest.mark.parametrize("orth_map", ["matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("shape", [(3, 3), (5, 3), (3, 5)])
def test_orthogonal_as_torch(orth_map, shape):
    mr, mt = _linears(shape[1], shape[0])
    rg.nn.utils.parametrizations.orthogonal(mr, orthogonal_map=orth_map)
    torch.nn.utils.parametrizations.orthogonal(mt, orthogonal_map=orth_map)
    assert list(mr.state_dict()) == list(mt.state_dict())
    # a non-square base is completed with random columns: take torch's
    with torch.no_grad():
        # (householder keeps the diagonal: its int() cast decides the signs)
        noise = torch.randn(mt.parametrizations.weight.original.shape, dtype=torch.float64) * 0.3
        mt.parametrizations.weight.original.add_(noise.tril(-1) if orth_map == "householder" else noise)
    _load_from_torch(mr, mt)
    _close(mr.weight, mt.weight)
    q = mr.weight.detach().numpy()
    gram = q.T @ q if shape[0] >= shape[1] else q @ q.T
    np.testing.assert_allclose(gram, np.eye(min(shape)), atol=1e-12)
    _forward_backward(mr, mt, shape[1])


@pytest.mark.parametrize("shape", [(3, 3), (5, 3)])
def test_orthogonal_householder_without_trivialization_as_torch(shape):
    mr, mt = _linears(shape[1], shape[0])
    rg.nn.utils.parametrizations.orthogonal(mr, orthogonal_map="householder", use_trivialization=False)
    torch.nn.utils.parametrizations.orthogonal(mt, orthogonal_map="householder", use_trivialization=False)
    assert list(mr.state_dict()) == list(mt.state_dict())
    _close(mr.parametrizations.weight.original, mt.parametrizations.weight.original)
    _close(mr.weight, mt.weight)
    _forward_backward(mr, mt, shape[1])


def test_orthogonal_initial_value_and_errors_as_torch():
    # an orthogonal weight is kept as it is
    q, _ = np.linalg.qr(RNG.standard_normal((4, 4)))
    m = rg.nn.Linear(4, 4)
    m.weight = rg.nn.Parameter(rg.tensor(q))
    rg.nn.utils.parametrizations.orthogonal(m)
    np.testing.assert_allclose(m.weight.detach().numpy(), q, atol=1e-12)
    for lib in (torch, rg):
        orth = lib.nn.utils.parametrizations.orthogonal
        with pytest.raises(ValueError, match="Expected a matrix"):
            orth(lib.nn.Linear(2, 2), "bias")
        with pytest.raises(ValueError, match="orthogonal_map has to be one of"):
            orth(lib.nn.Linear(2, 2), orthogonal_map="qr")
        with pytest.raises(ValueError, match="has no parameter or buffer"):
            orth(lib.nn.Linear(2, 2), "nothing")
        m = orth(lib.nn.Linear(2, 2), orthogonal_map="cayley", use_trivialization=False)
        with pytest.raises(NotImplementedError, match="Cayley"):
            m.weight = lib.eye(2)


def test_orthogonal_gradcheck():
    m = rg.nn.utils.parametrizations.orthogonal(rg.nn.Linear(3, 3, dtype=rg.float64))
    original = m.parametrizations.weight.original
    with rg.no_grad():
        original.copy_(rg.tensor(RNG.standard_normal((3, 3)) * 0.5))
    orth = m.parametrizations.weight[0]
    for name in ("matrix_exp", "cayley", "householder"):
        orth.orthogonal_map = getattr(type(orth.orthogonal_map), name)
        x = rg.tensor(RNG.standard_normal((3, 3)) * 0.5, requires_grad=True)
        assert rg.autograd.gradcheck(orth, (x,))


@pytest.mark.parametrize("dim", [0, 1, None, -2])
def test_weight_norm_parametrization_as_torch(dim):
    mt = torch.nn.Conv1d(3, 4, 2).double()
    mr = rg.nn.Conv1d(3, 4, 2)
    _load_from_torch(mr, mt)
    rg.nn.utils.parametrizations.weight_norm(mr, dim=dim)
    torch.nn.utils.parametrizations.weight_norm(mt, dim=dim)
    assert list(mr.state_dict()) == list(mt.state_dict())
    for k, v in mt.state_dict().items():
        _close(mr.state_dict()[k], v)
    x = RNG.standard_normal((2, 3, 5))
    ya, yb = mr(rg.tensor(x)), mt(torch.tensor(x))
    _close(ya, yb)
    ya.sum().backward()
    yb.sum().backward()
    _close(mr.parametrizations.weight.original0.grad, mt.parametrizations.weight.original0.grad)
    _close(mr.parametrizations.weight.original1.grad, mt.parametrizations.weight.original1.grad)


def test_weight_norm_parametrization_loads_the_hook_layout_as_torch():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        old = torch.nn.utils.weight_norm(torch.nn.Linear(3, 2).double())
    state = {k: rg.tensor(v.detach().numpy().copy()) for k, v in old.state_dict().items()}
    assert sorted(state) == ["bias", "weight_g", "weight_v"]
    m = rg.nn.utils.parametrizations.weight_norm(rg.nn.Linear(3, 2))
    m.load_state_dict(state)
    _close(m.weight, old.weight)


def test_spectral_norm_parametrization_as_torch():
    mr, mt = _linears(4, 3)
    rg.nn.utils.parametrizations.spectral_norm(mr, n_power_iterations=2)
    torch.nn.utils.parametrizations.spectral_norm(mt, n_power_iterations=2)
    assert list(mr.state_dict()) == list(mt.state_dict())
    # the random start of u and v: take torch's
    _load_from_torch(mr, mt)
    _forward_backward(mr, mt, 4)          # training: one more power iteration each access
    _close(mr.parametrizations.weight[0]._u, mt.parametrizations.weight[0]._u)
    _close(mr.parametrizations.weight[0]._v, mt.parametrizations.weight[0]._v)
    mr.eval()
    mt.eval()
    u = mr.parametrizations.weight[0]._u.detach().numpy().copy()
    _forward_backward(mr, mt, 4)
    np.testing.assert_array_equal(mr.parametrizations.weight[0]._u.detach().numpy(), u)
    s = np.linalg.svd(mr.weight.detach().numpy(), compute_uv=False)
    assert abs(s[0] - 1.0) < 1e-2


def test_spectral_norm_parametrization_of_a_conv_and_a_vector_as_torch():
    mt = torch.nn.Conv2d(2, 3, 2).double()
    mr = rg.nn.Conv2d(2, 3, 2)
    _load_from_torch(mr, mt)
    rg.nn.utils.parametrizations.spectral_norm(mr, dim=1)
    torch.nn.utils.parametrizations.spectral_norm(mt, dim=1)
    _load_from_torch(mr, mt)
    x = RNG.standard_normal((1, 2, 3, 3))
    _close(mr(rg.tensor(x)), mt(torch.tensor(x)))
    mr, mt = _linears(3, 2)
    rg.nn.utils.parametrizations.spectral_norm(mr, "bias")
    torch.nn.utils.parametrizations.spectral_norm(mt, "bias")
    _close(mr.bias, mt.bias)
    for lib in (torch, rg):
        with pytest.raises(IndexError, match="Dimension out of range"):
            lib.nn.utils.parametrizations.spectral_norm(lib.nn.Linear(2, 2), dim=2)
        with pytest.raises(ValueError, match="n_power_iterations to be positive"):
            lib.nn.utils.parametrizations.spectral_norm(lib.nn.Linear(2, 2), n_power_iterations=0)
