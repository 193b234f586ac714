"""Behaviours from the TestCheckpoint class of torch's test/test_utils.py, translated.

``checkpoint`` and ``checkpoint_sequential`` must give the outputs and gradients of the plain
computation, rerun each checkpointed chunk exactly once in backward, pass non-tensor arguments and
results through, replay random ops, and refuse what they cannot do.

Of the class's 18 tests, 13 are translated, one test each (those looping over ``use_reentrant`` are
parametrized over it, except the two ``deprecated`` ones, whose loop never uses it): checkpoint_trigger,
checkpoint_valid, checkpoint, checkpoint_module_list, checkpoint_sequential_deprecated_multiple_args and
_no_args, checkpoint_rng_cpu, checkpoint_not_preserve_rng_state_and_without_reentrant, checkpoint_non_tensor,
checkpoint_non_tensor_inputs_outputs, checkpoint_no_tensors, checkpoint_partial_grad and
checkpointing_without_reentrant_early_free, in this order.

``test_checkpoint_not_preserve_rng_state_and_without_reentrant`` runs on the CPU here (torch runs it
on an accelerator only; nothing in it is device-specific). ``test_checkpoint_rng_cpu`` reseeds with
``manual_seed`` where torch saves and restores the RNG state (retrograd has no ``get_rng_state``).
``test_checkpointing_without_reentrant_early_free`` reads the size of the live NumPy buffers from
``tracemalloc`` where torch reads the accelerator's allocated memory.

Excluded:
test_checkpoint_rng_gpu: needs an accelerator (the CPU version is test_checkpoint_rng_cpu)
test_get_device_states_recursive: needs two GPUs
test_infer_device_state_recursive_meta: tests torch's private _infer_device_type on the meta device
test_infer_device_state_recursive_multi_gpu: needs two GPUs (and the private _infer_device_type)
test_checkpoint_preserves_device_context: needs an accelerator (torch.device(<accelerator>) context)
"""
import tracemalloc

import numpy as np
import pytest

import retrograd as rg
from retrograd import nn
from retrograd.utils.checkpoint import checkpoint, checkpoint_sequential

REENTRANT = pytest.mark.parametrize("use_reentrant", [True, False], ids=["reentrant", "non_reentrant"])


def _values(t):
    return np.array(t.detach().numpy())


def _close(a, b):
    np.testing.assert_allclose(_values(a), _values(b), rtol=1e-6, atol=1e-8)


def _mlp():
    return nn.Sequential(nn.Linear(100, 50), nn.ReLU(), nn.Linear(50, 20), nn.ReLU(),
                         nn.Linear(20, 5), nn.ReLU())


def _assert_sequential_matches(model, candidates, chunks, x, use_reentrant):
    """Each candidate (modules run in order) run through checkpoint_sequential gives the
    model's output, input gradient and parameter gradients."""
    out = model(x)
    model.zero_grad()
    out.sum().backward()
    want_out = _values(out)
    want_input_grad = _values(x.grad)
    want_params = {name: _values(p.grad) for name, p in model.named_parameters()}

    for candidate in candidates:
        fresh = x.detach()
        fresh.requires_grad = True
        got = checkpoint_sequential(candidate, chunks, fresh, use_reentrant=use_reentrant)
        model.zero_grad()
        got.sum().backward()
        np.testing.assert_allclose(_values(got), want_out, rtol=1e-6)
        np.testing.assert_allclose(_values(fresh.grad), want_input_grad, rtol=1e-6, atol=1e-10)
        for name, p in model.named_parameters():
            np.testing.assert_allclose(_values(p.grad), want_params[name], rtol=1e-6, atol=1e-10,
                                       err_msg=name)


class CountingDouble(nn.Module):
    """Doubles its input (through an op that saves a tensor) and counts its calls."""

    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        return x * rg.tensor(2.0)


@REENTRANT
def test_checkpoint_sequential_reruns_each_checkpointed_chunk_once(use_reentrant):
    blocks = [CountingDouble() for _ in range(10)]
    assert all(b.calls == 0 for b in blocks)
    out = checkpoint_sequential(blocks, 2, rg.randn(3, 4, requires_grad=True), use_reentrant=use_reentrant)
    assert [b.calls for b in blocks] == [1] * 10
    out.sum().backward()
    # the first half was checkpointed and reran once; the last chunk never is
    assert [b.calls for b in blocks] == [2] * 5 + [1] * 5


def test_reentrant_refuses_grad_with_create_graph_non_reentrant_allows_it():
    model = _mlp()
    layers = list(model.children())
    x = rg.randn(1, 100, requires_grad=True)
    seed = rg.ones(1, 5)

    out = checkpoint_sequential(layers, 2, x, use_reentrant=True)
    with pytest.raises(RuntimeError, match="checkpoint is incompatible"):
        rg.autograd.grad(outputs=[out], grad_outputs=[seed], inputs=[x], create_graph=True)

    plain = model(x)
    (want,) = rg.autograd.grad(outputs=[plain], grad_outputs=[seed], inputs=[x], create_graph=True)
    ckpt = checkpoint_sequential(layers, 2, x, use_reentrant=False)
    _close(ckpt, plain)
    (got,) = rg.autograd.grad(outputs=[ckpt], grad_outputs=[seed], inputs=[x], create_graph=True)
    _close(got, want)


@REENTRANT
def test_checkpoint_sequential_matches_plain_sequential(use_reentrant):
    model = _mlp()
    _assert_sequential_matches(model, [list(model.children()), model], 2,
                               rg.randn(1, 100, requires_grad=True), use_reentrant)


class LayerList(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(100, 50), nn.ReLU(), nn.Linear(50, 20), nn.ReLU(),
                                     nn.Linear(20, 5), nn.ReLU()])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


@REENTRANT
def test_checkpoint_sequential_over_module_list(use_reentrant):
    model = LayerList()
    _assert_sequential_matches(model, [list(model.layers.children()), model.layers], 2,
                               rg.randn(1, 100, requires_grad=True), use_reentrant)


def test_checkpoint_sequential_takes_one_input_only():
    class Pair(nn.Module):
        def forward(self, first, second):
            return first, second

    first = rg.randn(1, 100, requires_grad=True)
    second = rg.randn(1, 100, requires_grad=True)
    with pytest.raises(TypeError):
        checkpoint_sequential(nn.Sequential(Pair()), 1, first, second)


def test_checkpoint_sequential_needs_an_input():
    class Nothing(nn.Module):
        def forward(self):
            return None

    with pytest.raises(TypeError):
        checkpoint_sequential(nn.Sequential(Nothing()), 1)


def test_reentrant_checkpoint_replays_dropout_mask():
    for seed in range(5):
        first_drop = nn.Dropout()
        second_drop = nn.Dropout()
        x = rg.randn(20000).requires_grad_()

        rg.manual_seed(seed)
        checkpoint(second_drop, first_drop(x), use_reentrant=True).sum().backward()
        with_ckpt = _values(x.grad)

        rg.manual_seed(seed)
        x.grad = None
        second_drop(first_drop(x)).sum().backward()
        without_ckpt = _values(x.grad)

        assert (with_ckpt != 0).any()
        np.testing.assert_array_equal(with_ckpt, without_ckpt)


def test_non_reentrant_without_preserving_rng_state_still_backprops():
    drop = nn.Dropout()
    x = rg.randn(1000).requires_grad_()
    out = checkpoint(drop, x, use_reentrant=False, preserve_rng_state=False)
    out.sum().backward()
    # dropout with p=0.5: every gradient is 0 or 1 / (1 - p)
    grads = _values(x.grad)
    assert set(np.unique(grads)) <= {0.0, 2.0}
    assert (grads == 2.0).any()


def test_reentrant_checkpoint_with_none_argument():
    def add_optional(t, other):
        return t if other is None else t + other

    x = rg.randn(1, 100, requires_grad=True)
    checkpoint(add_optional, x, None, use_reentrant=True).sum().backward()
    np.testing.assert_array_equal(_values(x.grad), np.ones((1, 100)))


def _mixed_results(a, b, factor, c):
    left = a + b * c
    right = a * b + c
    left *= factor
    right *= factor
    return factor, left, None, True, right, "baz", a


def test_reentrant_checkpoint_passes_non_tensors_through():
    a = rg.rand(10, requires_grad=True)
    b = rg.rand(10, requires_grad=True)
    c = rg.rand(10)
    factor = 7
    res = checkpoint(_mixed_results, a, b, factor, c, use_reentrant=True)
    assert res[0] == factor
    _close(res[1], (a + b * c) * factor)
    assert res[2] is None
    assert res[3] is True
    _close(res[4], (a * b + c) * factor)
    assert res[5] == "baz"
    _close(res[6], a)

    res[1].sum().backward(retain_graph=True)
    res[4].sum().backward(retain_graph=True)
    res[6].sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        res[6].sum().backward()
    ckpt_grads = _values(a.grad), _values(b.grad)

    a.grad = None
    b.grad = None
    plain = _mixed_results(a, b, factor, c)
    rg.autograd.backward([plain[1].sum(), plain[4].sum(), plain[6].sum()])
    np.testing.assert_allclose(_values(a.grad), ckpt_grads[0], rtol=1e-12)
    np.testing.assert_allclose(_values(b.grad), ckpt_grads[1], rtol=1e-12)


def test_reentrant_checkpoint_of_plain_numbers():
    a, b, c = 0.25, 0.5, 0.75
    factor = 4
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        res = checkpoint(_mixed_results, a, b, factor, c, use_reentrant=True)
    assert res == (factor, (a + b * c) * factor, None, True, (a * b + c) * factor, "baz", a)


def test_reentrant_checkpoint_partial_grad_and_no_grad_outputs():
    def pass_both(t, aux):
        return t, aux

    x = rg.randn(1, 4, requires_grad=True)
    out = checkpoint(pass_both, x, rg.randn(1, 4), use_reentrant=True)
    out[0].sum().backward()
    np.testing.assert_array_equal(_values(x.grad), np.ones((1, 4)))

    def first_only(t, aux):
        return t

    with pytest.raises(RuntimeError, match=r"none of output has requires_grad=True, this checkpoint\(\) is not "
                                           r"necessary"):
        out = checkpoint(first_only, rg.randn(1, 4), rg.randn(1, 4, requires_grad=True), use_reentrant=True)
        out.sum().backward()


# --- eager freeing of the recomputed tensors -------------------------------------------------

_N = 20000          # elements per buffer: 160 kB in float64, far above bookkeeping noise
_BUFFER = _N * 8


def _chain_with_probes(log):
    """Four squarings; a hook on three intermediates records the live memory when backward reaches it."""

    def probe(t, position):
        def record(_):
            assert len(log) == position
            log.append(tracemalloc.get_traced_memory()[0])
        t.register_hook(record)

    def fn(x):
        x = x ** 2
        probe(x, 2)
        x = x ** 2
        probe(x, 1)
        x = x ** 2
        probe(x, 0)
        return (x ** 2).sum()
    return fn


def _memory_steps(run):
    x = rg.zeros(_N, requires_grad=True)
    x.grad = rg.zeros(_N)
    log = []
    tracemalloc.start()
    try:
        run(_chain_with_probes(log), x)
    finally:
        tracemalloc.stop()
    assert len(log) == 3
    return np.diff(log)


def test_non_reentrant_checkpoint_frees_recomputed_tensors_during_backward():
    plain = _memory_steps(lambda fn, x: fn(x).backward())
    retained = _memory_steps(lambda fn, x: fn(x).backward(retain_graph=True))
    ckpt = _memory_steps(lambda fn, x: checkpoint(fn, x, use_reentrant=False).backward())
    ckpt_retained = _memory_steps(lambda fn, x: checkpoint(fn, x, use_reentrant=False).backward(retain_graph=True))

    # a plain backward frees each saved buffer once used; retain_graph keeps them all
    assert (plain < -_BUFFER / 2).all(), plain
    assert (abs(retained) < _BUFFER / 2).all(), retained
    # checkpointed, the recomputed buffers are freed as they are used, even with retain_graph
    assert (ckpt < -_BUFFER / 2).all(), ckpt
    assert (ckpt_retained < -_BUFFER / 2).all(), ckpt_retained
    assert (abs(ckpt - plain) < _BUFFER / 2).all() and (abs(ckpt_retained - plain) < _BUFFER / 2).all()
