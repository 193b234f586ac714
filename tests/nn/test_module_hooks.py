"""Module hooks against torch: forward pre-hooks and hooks (kwargs, prepend,
always_call, removal) and the full backward hooks and pre-hooks built on
an identity autograd Function (firing order, grad_input / grad_output
values, replacement gradients, the rules for inputs that need no grad and
for in-place changes)."""
import warnings

import numpy as np
import pytest

import retrograd as rg


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def family(lib):
    nn = lib.nn

    class Affine(nn.Module):
        def __init__(self, n_in, n_out):
            super().__init__()
            self.weight = nn.Parameter(lib.zeros(n_out, n_in, dtype=lib.float64))
            self.bias = nn.Parameter(lib.zeros(n_out, dtype=lib.float64))

        def forward(self, x):
            return x @ self.weight.transpose(0, 1) + self.bias

    class Tanh(nn.Module):
        def forward(self, x):
            return lib.tanh(x)

    class Scaled(nn.Module):
        # a non-tensor positional argument and a keyword argument
        def forward(self, x, factor, *, shift=0.0):
            return x * factor + shift

    class Split(nn.Module):
        # two outputs
        def forward(self, x):
            return x * 2, x * x

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = Affine(3, 4)
            self.act = Tanh()
            self.fc2 = Affine(4, 2)

        def forward(self, x):
            return self.fc2(self.act(self.fc1(x)))

    return Affine, Tanh, Scaled, Split, Net


def same_weights(a, b, torch, seed=0):
    rng = np.random.default_rng(seed)
    for p, q in zip(a.parameters(), b.parameters()):
        v = rng.standard_normal(p.shape)
        with rg.no_grad():
            p.copy_(rg.tensor(v))
        with torch.no_grad():
            q.copy_(torch.tensor(v))


def arr(g):
    if g is None:
        return None
    # a copy: autograd may later accumulate into the very array a hook saw
    return np.array(g.detach().numpy() if hasattr(g, "detach") else g, copy=True)


def assert_grads_equal(xs, ys):
    assert len(xs) == len(ys)
    for x, y in zip(xs, ys):
        if x is None or y is None:
            assert x is None and y is None
        else:
            np.testing.assert_allclose(arr(x), arr(y), rtol=1e-12, atol=1e-14)


# -- forward hooks --------------------------------------------------------------------

@pytest.mark.oracle
def test_forward_hooks_order_and_replacement_match_torch(torch):
    def run(lib):
        *_, Scaled, _, _ = family(lib)
        m = Scaled()
        log = []
        m.register_forward_pre_hook(lambda mod, args: log.append(("pre1", len(args))))
        m.register_forward_pre_hook(lambda mod, args: (args[0] + 1, args[1]))
        m.register_forward_pre_hook(lambda mod, args: log.append(("pre0",)), prepend=True)

        def pre_kw(mod, args, kwargs):
            log.append(("pre_kw", sorted(kwargs)))
            return args, {**kwargs, "shift": 10.0}
        m.register_forward_pre_hook(pre_kw, with_kwargs=True)
        m.register_forward_hook(lambda mod, args, out: log.append(("post", float(out.sum()))))
        m.register_forward_hook(lambda mod, args, kwargs, out: out * 2, with_kwargs=True)
        h = m.register_forward_hook(lambda mod, args, out: log.append(("first",)), prepend=True)
        out = m(lib.ones(2, dtype=lib.float64), 3.0, shift=1.0)
        log.append(("out", out.tolist()))
        h.remove()
        h.remove()          # a second remove does nothing
        log.append(("again", m(lib.ones(2, dtype=lib.float64), 1.0).tolist()))
        return log
    assert run(rg) == run(torch)


@pytest.mark.oracle
def test_pre_hook_single_value_is_wrapped_and_bad_kwargs_result_raises(torch):
    for lib in (rg, torch):
        *_, Scaled, _, _ = family(lib)
        m = Scaled()
        m.register_forward_pre_hook(lambda mod, args: lib.ones(1, dtype=lib.float64) * 5)
        with pytest.raises(TypeError):     # the factor argument is gone: forward misses it
            m(lib.ones(1, dtype=lib.float64), 2.0)
        m2 = Scaled()
        m2.register_forward_pre_hook(lambda mod, args, kwargs: 3, with_kwargs=True)
        with pytest.raises(RuntimeError, match="forward pre-hook must return None or a tuple"):
            m2(lib.ones(1, dtype=lib.float64), 2.0)


@pytest.mark.oracle
def test_always_call_hooks_run_on_error_like_torch(torch):
    def run(lib):
        nn = lib.nn
        log = []

        class Boom(nn.Module):
            def forward(self, x):
                raise ValueError("boom")
        m = Boom()
        m.register_forward_hook(lambda mod, args, out: log.append(("normal", out)))
        m.register_forward_hook(lambda mod, args, out: log.append(("always", out)), always_call=True)

        def failing(mod, args, out):
            raise KeyError("inner")
        m.register_forward_hook(failing, always_call=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with pytest.raises(ValueError, match="boom"):
                m(lib.ones(1))
        log.append(("warned", ["silenced as another error was raised" in str(w.message) for w in caught]))
        return log
    assert run(rg) == run(torch)


def test_handle_is_a_context_manager_and_hooks_dicts_stay_consistent():
    m = rg.nn.Module()
    with m.register_forward_hook(lambda *a: None, with_kwargs=True, always_call=True) as h:
        assert h.id in m._forward_hooks and h.id in m._forward_hooks_with_kwargs
    assert not m._forward_hooks and not m._forward_hooks_with_kwargs and not m._forward_hooks_always_called
    a = m.register_forward_pre_hook(lambda *a: None)
    b = m.register_forward_pre_hook(lambda *a: None, prepend=True)
    assert list(m._forward_pre_hooks) == [b.id, a.id]


# -- full backward hooks ----------------------------------------------------------------

def record_backward(lib, net, x, prehook_scale=None):
    log = []
    for name, mod in net.named_modules():
        if name == "":
            name = "net"

        def hook(mod, gin, gout, name=name):
            log.append(("bw", name, tuple(arr(g) if g is not None else None for g in gin),
                        tuple(arr(g) if g is not None else None for g in gout)))

        def pre(mod, gout, name=name):
            log.append(("pre", name, tuple(arr(g) if g is not None else None for g in gout)))
            if prehook_scale is not None and name == "act":
                return tuple(g * prehook_scale for g in gout)
        mod.register_full_backward_hook(hook)
        mod.register_full_backward_pre_hook(pre)
    y = net(x)
    y.sum().backward()
    return log


def compare_logs(a, b):
    assert [e[:2] for e in a] == [e[:2] for e in b]
    for ea, eb in zip(a, b):
        for ga, gb in zip(ea[2:], eb[2:]):
            assert_grads_equal(ga, gb)


@pytest.mark.oracle
@pytest.mark.parametrize("scale", [None, 3.0])
def test_full_backward_hooks_fire_like_torch(torch, scale):
    *_, RNet = family(rg)
    *_, TNet = family(torch)
    a, b = RNet(), TNet()
    same_weights(a, b, torch)
    x = np.random.default_rng(1).standard_normal((5, 3))
    xa, xb = rg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    compare_logs(record_backward(rg, a, xa, scale), record_backward(torch, b, xb, scale))
    assert_grads_equal([xa.grad, *[p.grad for p in a.parameters()]], [xb.grad, *[p.grad for p in b.parameters()]])


@pytest.mark.oracle
def test_backward_hook_replaces_grad_input_like_torch(torch):
    def run(lib):
        Affine, Tanh, *_ = family(lib)
        act, fc = Tanh(), Affine(3, 2)
        with lib.no_grad():
            fc.weight.copy_(lib.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], dtype=lib.float64))
        act.register_full_backward_hook(lambda mod, gin, gout: (gin[0] * 10,))
        x = lib.tensor([[0.1, -0.2, 0.3]], dtype=lib.float64, requires_grad=True)
        fc(act(x)).sum().backward()
        return [arr(x.grad), arr(fc.weight.grad)]
    assert_grads_equal(run(rg), run(torch))


@pytest.mark.oracle
def test_non_tensor_arguments_and_several_outputs_like_torch(torch):
    def run(lib):
        _, _, Scaled, Split, _ = family(lib)
        log = []
        s, sp = Scaled(), Split()
        s.register_full_backward_hook(lambda m, gin, gout: log.append(("scaled", [arr(g) for g in gin],
                                                                       [arr(g) for g in gout])))
        sp.register_full_backward_hook(lambda m, gin, gout: log.append(("split", [arr(g) for g in gin],
                                                                        [arr(g) for g in gout])))
        sp.register_full_backward_pre_hook(lambda m, gout: log.append(("split-pre", [arr(g) for g in gout])))
        x = lib.tensor([1.0, -2.0], dtype=lib.float64, requires_grad=True)
        a, b = sp(s(x, 3.0, shift=1.0))
        (a.sum() + (b * 2).sum()).backward()
        a2, _ = sp(x)
        a2.sum().backward()          # one output gets no gradient: None in grad_output
        return log
    ra, ta = run(rg), run(torch)
    assert [e[0] for e in ra] == [e[0] for e in ta]
    for ea, eb in zip(ra, ta):
        for ga, gb in zip(ea[1:], eb[1:]):
            assert_grads_equal(ga, gb)


@pytest.mark.oracle
def test_inputs_without_grad_fire_at_outputs_with_warning_like_torch(torch):
    def run(lib):
        Affine, *_ = family(lib)
        fc = Affine(3, 2)
        log = []
        fc.register_full_backward_hook(lambda m, gin, gout: log.append((gin, [arr(g) for g in gout])))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fc(lib.ones(1, 3, dtype=lib.float64)).sum().backward()
        assert any("no inputs require gradients" in str(w.message) for w in caught)
        bad = Affine(3, 2)
        bad.register_full_backward_hook(lambda m, gin, gout: (lib.ones(1, 3),))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(RuntimeError, match="no input requires gradient should always return None"):
                bad(lib.ones(1, 3, dtype=lib.float64)).sum().backward()
        return log
    ra, ta = run(rg), run(torch)
    assert len(ra) == len(ta) == 1
    assert ra[0][0] == ta[0][0] == (None,)
    assert_grads_equal(ra[0][1], ta[0][1])


@pytest.mark.oracle
def test_no_output_grad_means_no_hook_and_no_grad_mode_skips(torch):
    for lib in (rg, torch):
        Affine, *_ = family(lib)
        fc = Affine(3, 2)
        fired = []
        fc.register_full_backward_hook(lambda *a: fired.append(1))
        with lib.no_grad():
            out = fc(lib.ones(1, 3, dtype=lib.float64, requires_grad=True))
        assert not out.requires_grad and not fired


@pytest.mark.oracle
def test_wrong_number_of_returned_grads_raises_like_torch(torch):
    for lib in (rg, torch):
        Affine, *_ = family(lib)
        fc = Affine(3, 2)
        fc.register_full_backward_hook(lambda m, gin, gout: (None, None))
        x = lib.ones(1, 3, dtype=lib.float64, requires_grad=True)
        with pytest.raises(RuntimeError, match="Backward hook returned an invalid number of grad_input, got 2, "
                                               "but expected 1"):
            fc(x).sum().backward()
        pre = Affine(3, 2)
        pre.register_full_backward_pre_hook(lambda m, gout: (None, None))
        with pytest.raises(RuntimeError, match="Backward pre hook returned an invalid number of grad_output, "
                                               "got 2, but expected 1"):
            pre(x).sum().backward()


@pytest.mark.oracle
def test_in_place_change_of_hooked_output_raises_like_torch(torch):
    for lib in (rg, torch):
        Affine, *_ = family(lib)
        fc = Affine(3, 2)
        fc.register_full_backward_hook(lambda *a: None)
        out = fc(lib.ones(1, 3, dtype=lib.float64, requires_grad=True))
        with pytest.raises(RuntimeError, match="is a view and is being modified inplace"):
            out.mul_(2)


def test_removed_backward_hook_stops_firing():
    *_, Net = family(rg)
    net = Net()
    fired = []
    h = net.fc1.register_full_backward_hook(lambda *a: fired.append("hook"))
    p = net.fc1.register_full_backward_pre_hook(lambda *a: fired.append("pre"))
    x = rg.ones(2, 3, dtype=rg.float64, requires_grad=True)
    net(x).sum().backward()
    assert fired == ["pre", "hook"]
    h.remove()
    p.remove()
    net(x).sum().backward()
    assert fired == ["pre", "hook"]
