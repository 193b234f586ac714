"""Views and in-place ops as torch 2.13 defines them: which views may be
modified in place (torch's CreationMeta), what detach_() refuses, how views
made before an in-place op on their base join the graph, and writes into
expanded tensors.

Each scenario runs on retrograd and on torch (the oracle) where torch is
installed, and the two must agree on the outcome and on the message."""
import re

import numpy as np
import pytest

import retrograd as rg
from _arrays import values  # noqa: E402


def _outcome(lib, scenario):
    """('ok', value) or (exception class name, message) of scenario(lib)."""
    try:
        return ("ok", scenario(lib))
    except Exception as exc:        # noqa: BLE001 - the class is what is compared
        return (type(exc).__name__, str(exc))


def _leaf(lib, n=4):
    return lib.tensor(np.arange(1.0, n + 1.0), requires_grad=True)


# -- multi-output view ops -------------------------------------------------

MULTI_OUTPUT = {
    "split": lambda t: t.split(2),
    "chunk": lambda t: t.chunk(2),
    "split_sizes": lambda t: t.split([1, 3]),
}


@pytest.mark.parametrize("op", sorted(MULTI_OUTPUT))
def test_inplace_on_an_output_of_a_multi_output_view_op_raises(op):
    pieces = MULTI_OUTPUT[op](_leaf(rg).clone())
    with pytest.raises(RuntimeError, match=r"Output 0 of Split\w* is a view and is being modified "
                                           r"inplace\. This view is the output of a function that "
                                           r"returns multiple views"):
        pieces[0].mul_(2)


@pytest.mark.parametrize("op", sorted(MULTI_OUTPUT))
def test_a_view_of_a_multi_output_piece_inherits_the_rule(op):
    piece = MULTI_OUTPUT[op](_leaf(rg).clone())[1]
    with pytest.raises(RuntimeError, match="returns multiple views"):
        piece[:1].add_(1.0)


def test_pieces_become_unusable_after_their_base_is_modified():
    base = _leaf(rg).clone()
    first, second = base.split(2)
    base.mul_(3.0)
    with pytest.raises(RuntimeError, match="its base or another view of its base has been "
                                           "modified inplace"):
        first.grad_fn
    # repr does not raise: it says the grad_fn cannot be read, as torch
    assert "grad_fn=<Invalid>" in repr(second)


def test_pieces_may_be_modified_when_nothing_requires_grad():
    base = rg.tensor(np.arange(4.0))
    first, _ = base.split(2)
    first.mul_(2.0)
    np.testing.assert_array_equal(values(base), [0.0, 2.0, 2.0, 3.0])


def test_pieces_made_under_no_grad_of_a_non_graph_tensor_are_ordinary():
    with rg.no_grad():
        first, _ = rg.tensor(np.arange(4.0)).split(2)
    first.mul_(2.0)                 # nothing requires grad: allowed, as torch
    assert first._version == 1


# -- views made under no_grad / inference_mode ------------------------------

def _nograd_view_inplace(lib):
    a = _leaf(lib).clone()
    with lib.no_grad():
        v = a[:2]
    v.mul_(2)


def _nograd_view_of_view_inplace(lib):
    a = _leaf(lib).clone()
    with lib.no_grad():
        v = a[:2]
    v[:1].mul_(2)


def _nograd_view_plain_base_graph_other(lib):
    a = lib.tensor(np.arange(3.0))
    with lib.no_grad():
        v = a[:2]
    v.mul_(_leaf(lib, 2))


def _inference_view_inplace(lib):
    a = _leaf(lib).clone()
    with lib.inference_mode():
        v = a[:2]
    v.mul_(2)


def _nograd_view_base_modified_then_read(lib):
    a = _leaf(lib).clone()
    with lib.no_grad():
        v = a[:2]
        a.zero_()
    return v.grad_fn


@pytest.mark.parametrize("scenario,pattern", [
    (_nograd_view_inplace, r"^A view was created in no_grad mode and is being modified inplace "
                           r"with grad mode enabled\. Given that this use case is ambiguous"),
    (_nograd_view_of_view_inplace, r"^Output 0 of \w+ is a view of a view which was created in "
                                   r"no_grad mode and is being modified inplace"),
    (_nograd_view_plain_base_graph_other, r"^A view was created in no_grad mode"),
    (_inference_view_inplace, r"^A view was created in inference mode and is being modified "
                              r"inplace in normal mode\..*inference_mode block"),
    (_nograd_view_base_modified_then_read, r"^A view was created in no_grad mode and its base or "
                                           r"another view of its base has been modified inplace"),
])
def test_views_made_without_grad_mode_refuse_tracked_inplace(scenario, pattern):
    kind, msg = _outcome(rg, scenario)
    assert kind == "RuntimeError", (kind, msg)
    assert re.search(pattern, msg), msg


@pytest.mark.parametrize("scenario", [
    _nograd_view_inplace, _nograd_view_of_view_inplace, _nograd_view_plain_base_graph_other,
    _inference_view_inplace, _nograd_view_base_modified_then_read])
def test_same_outcome_as_torch(scenario):
    torch = pytest.importorskip("torch")
    ours, theirs = _outcome(rg, scenario), _outcome(torch, scenario)
    assert ours[0] == theirs[0]
    # the same text, but for the node named in it: basic indexing records
    # GetitemBackward0 here where torch records SliceBackward0
    assert ours[1].replace("of Getitem is", "of Slice is") == theirs[1]


def test_nograd_view_of_a_tensor_that_requires_grad_requires_grad():
    a = _leaf(rg).clone()
    with rg.no_grad():
        v = a[:2]
    assert v.requires_grad and v.is_leaf and v.grad_fn is None
    with rg.no_grad():
        v.mul_(2)                   # both inside no_grad: allowed and untracked
    assert v._version == 1


# -- detach_ ----------------------------------------------------------------

def test_detach_inplace_of_a_saved_input_fails_at_backward():
    a = _leaf(rg).clone()
    b = a.sin()
    a.detach_()
    with pytest.raises(RuntimeError, match=r"Trying to use a saved tensor that has been detached "
                                           r"in-place, i\.e\. with \.detach_\(\)"):
        b.sum().backward()


def test_detach_inplace_of_a_saved_output_is_fine():
    x = _leaf(rg)
    a = x.clone()
    b = a.exp()
    b_values = values(b).copy()
    b.detach_()                     # b is exp's saved result, not an input
    c = a.exp()
    c.sum().backward()
    np.testing.assert_allclose(values(x.grad), b_values)


def test_detach_inplace_of_a_custom_function_saved_input_fails():
    class Keep(rg.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            return t * 2

        @staticmethod
        def backward(ctx, g):
            (t,) = ctx.saved_tensors
            return g * 2

    a = _leaf(rg).clone()
    out = Keep.apply(a)
    a.detach_()
    with pytest.raises(RuntimeError, match="detached in-place"):
        out.sum().backward()


def test_detach_inplace_of_a_view_raises_torchs_error():
    v = _leaf(rg).clone()[:2]
    with pytest.raises(RuntimeError, match=r"^Can't detach views in-place\. Use detach\(\) instead"):
        v.detach_()


# -- earlier views join the graph ------------------------------------------

def test_earlier_view_requires_grad_after_an_inplace_op_on_its_base():
    x = _leaf(rg, 3)
    base = rg.tensor(np.zeros(3))
    view = base[:2]
    assert not view.requires_grad
    base.add_(x)
    assert view.requires_grad
    assert view.grad_fn.name() == "AsStridedBackward0"
    view.sum().backward()
    np.testing.assert_array_equal(values(x.grad), [1.0, 1.0, 0.0])


# -- expanded tensors --------------------------------------------------------

@pytest.mark.parametrize("write", [
    lambda e: e.add_(1.0),
    lambda e: e.mul_(2.0),
    lambda e: e.copy_(rg.tensor(np.arange(3.0))),
])
def test_inplace_into_an_expanded_tensor_raises_torchs_runtime_error(write):
    e = rg.tensor([1.0]).expand(3)
    with pytest.raises(RuntimeError, match=r"unsupported operation: more than one element of the "
                                           r"written-to tensor refers to a single memory location\. "
                                           r"Please clone\(\) the tensor"):
        write(e)


def test_base_property_names_the_root_base():
    t = rg.tensor(np.arange(6.0))
    x = t.reshape(2, 3)
    v = x[0]
    assert x._base is t and v._base is t       # views of views point at the root, as torch
    assert t._base is None
    assert t.detach()._base is None
    assert t.clone()._base is None


# -- hooks and retain_grad on views across in-place ops -----------------------

def _hooks_across_inplace(lib):
    """What fires and what is retained when views' histories change."""
    seen = {}

    def record(name):
        return lambda g: seen.setdefault(name, []).append(values(g.detach()).tolist())

    # the base is modified after a view got a hook and retain_grad
    x = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    a = x.clone()
    v = a[:2]
    v.register_hook(record("v"))
    v.retain_grad()
    a.mul_(2.0)
    a.sum().backward()
    # a sibling view is modified; the view itself is then used
    x2 = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    b = x2.clone()
    p, q = b[:2], b[2:]
    p.register_hook(record("p"))
    p.retain_grad()
    q.mul_(3.0)
    (p.sum() + b.sum()).backward()
    # the view itself is modified
    x3 = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    d = x3.clone()
    r = d[:2]
    r.register_hook(record("r"))
    r.retain_grad()
    r.mul_(5.0)
    (r.sum() + d.sum()).backward()

    def grad(t):
        return None if t.grad is None else values(t.grad).tolist()

    return {"hooks": seen, "v": grad(v), "p": grad(p), "r": grad(r), "x3": grad(x3),
            "x2": grad(x2), "retains": (v.retains_grad, p.retains_grad, r.retains_grad)}


def test_hooks_and_retain_grad_on_views_across_inplace_ops():
    got = _hooks_across_inplace(rg)
    # hooks stay with the history they were registered on; retain_grad
    # follows the view to its new grad_fn
    assert got["hooks"] == {}
    assert got["v"] is None
    assert got["p"] == [1.0, 1.0]
    assert got["r"] == [1.0, 1.0]
    assert got["x3"] == [10.0, 10.0, 1.0, 1.0]
    assert got["retains"] == (True, True, True)


def test_hooks_and_retain_grad_on_views_match_torch():
    torch = pytest.importorskip("torch")
    assert _hooks_across_inplace(rg) == _hooks_across_inplace(torch)
