"""nn.Module.compile(): the module's calls run compiled in place (torch's
nn.Module.compile), and compiled functions called inside another compiled
function are inlined into its trace."""
import copy
import pickle
import sys
import warnings

import numpy as np
import pytest

import retrograd as rg


def _net():
    rg.manual_seed(0)
    return rg.nn.Sequential(rg.nn.Linear(3, 5), rg.nn.Tanh(), rg.nn.Dropout(0.25),
                            rg.nn.Linear(5, 2))


def _x(seed):
    return rg.tensor(np.random.default_rng(seed).standard_normal((4, 3)))


def _grads(net):
    return [p.grad.numpy().copy() for p in net.parameters()]


def test_a_compiled_module_gives_eager_values_and_gradients():
    net, ref = _net(), _net()
    net.eval(), ref.eval()
    net.compile(backend="numpy")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for seed in range(3):
            net.zero_grad(), ref.zero_grad()
            out, want = net(_x(seed)), ref(_x(seed))
            out.sum().backward()
            want.sum().backward()
            np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(), rtol=1e-12)
            for g, w in zip(_grads(net), _grads(ref)):
                np.testing.assert_allclose(g, w, rtol=1e-12)
    assert net._compiled_call_impl.cache_info() == {"compiled": 1, "eager": 0}
    assert type(net) is rg.nn.Sequential
    assert list(net.state_dict()) == list(ref.state_dict())


def test_train_and_eval_switch_the_compiled_module():
    net = _net()
    net.compile(backend="numpy")
    x = _x(0)
    rg.manual_seed(1)
    a = net(x).detach().numpy()
    rg.manual_seed(2)
    b = net(x).detach().numpy()
    assert not np.array_equal(a, b)                 # training: dropout draws per call
    net.eval()
    np.testing.assert_array_equal(net(x).detach().numpy(), net(x).detach().numpy())
    ref = _net().eval()
    np.testing.assert_allclose(net(x).detach().numpy(), ref(x).detach().numpy(), rtol=1e-12)


def test_forward_hooks_run_inside_the_compiled_call():
    net = _net().eval()
    net.register_forward_hook(lambda mod, args, out: out * 2.0)
    want = net(_x(0)).detach().numpy()
    net.compile(backend="numpy")
    for _ in range(2):
        np.testing.assert_allclose(net(_x(0)).detach().numpy(), want, rtol=1e-12)


def test_copies_and_pickles_drop_the_compiled_call():
    net = _net().eval()
    net.compile(backend="numpy")
    net(_x(0))
    for other in (copy.deepcopy(net), pickle.loads(pickle.dumps(net))):
        assert other._compiled_call_impl is None
        np.testing.assert_allclose(other(_x(1)).detach().numpy(), net(_x(1)).detach().numpy(),
                                   rtol=1e-12)


def test_compile_without_the_distribution_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "retrograd.compile", None)
    with pytest.raises(ImportError, match=r"retrograd\[compile\]"):
        _net().compile()


def test_compiled_functions_inside_a_compiled_function_are_inlined():
    net = _net().eval()
    ref = _net().eval()
    net.compile(backend="numpy")
    inner = rg.compile(lambda h: (h ** 2).mean(), backend="numpy")

    def loss(x):
        return inner(net(x))

    outer = rg.compile(loss, backend="numpy")
    with warnings.catch_warnings():
        warnings.simplefilter("error")                 # no graph break
        for seed in range(3):
            got = outer(_x(seed))
            want = (ref(_x(seed)) ** 2).mean()
            np.testing.assert_allclose(got.item(), want.item(), rtol=1e-12)
    assert outer.cache_info() == {"compiled": 1, "eager": 0}
    # the inner callables never traced on their own
    assert inner.cache_info() == {"compiled": 0, "eager": 0}


class _ScaledInTraining(rg.nn.Module):
    """Reads a value in training (.item(): a graph break), not in eval."""

    def forward(self, x):
        if self.training:
            x = x * float(x.mean().item())
        return x.tanh()


def test_a_compiled_module_object_is_named_by_its_type_and_breaks_cleanly():
    # rg.compile(module): a graph break's warning names the module's type
    # (it raised AttributeError: a module has no __name__), and the module's
    # attributes are not copied onto the callable (they would go stale)
    net = rg.nn.Sequential(rg.nn.Linear(3, 4), _ScaledInTraining())
    cf = rg.compile(net, backend="numpy")
    assert cf.__name__ == "Sequential" and cf.__wrapped__ is net
    assert "training" not in vars(cf)
    with pytest.warns(RuntimeWarning, match=r"rg.compile\(Sequential\): graph break: Tensor.item"):
        cf(_x(0))


def test_an_eager_key_retraces_when_the_module_state_changes():
    # in training the module breaks the graph; in eval mode it does not,
    # and the same key compiles; back in training it breaks again
    def net():
        rg.manual_seed(0)
        return rg.nn.Sequential(rg.nn.Linear(3, 4), _ScaledInTraining())
    model, ref = net(), net()
    cf = rg.compile(model, backend="numpy")

    def same_as_eager(warn):
        with warnings.catch_warnings():
            warnings.simplefilter(warn)
            for seed in range(2):
                np.testing.assert_allclose(cf(_x(seed)).detach().numpy(),
                                           ref(_x(seed)).detach().numpy(), rtol=1e-12)
    same_as_eager("ignore")
    assert cf.cache_info() == {"compiled": 0, "eager": 1}
    model.eval(), ref.eval()
    same_as_eager("error")                         # no graph break
    assert cf.cache_info() == {"compiled": 1, "eager": 0}
    model.train()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cf(_x(5))
    assert cf.cache_info() == {"compiled": 0, "eager": 1}
