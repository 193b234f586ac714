"""inference_mode and views as torch 2.13: a view is an inference tensor
exactly when its base is, whichever mode it is made in; what in-place ops
each kind allows outside the mode."""
import numpy as np
import pytest

import retrograd as rg


def _scenarios():
    def inference_base_view_inside(lib):
        with lib.inference_mode():
            base = lib.tensor([1.0, 2.0, 3.0])
            view = base[:2]
        return view.is_inference(), base.is_inference()

    def normal_base_view_inside(lib):
        base = lib.tensor([1.0, 2.0, 3.0])
        with lib.inference_mode():
            view = base[:2]
            fresh_view = base.clone()[:1]
        return view.is_inference(), fresh_view.is_inference(), view._base is base

    def inference_base_view_outside(lib):
        with lib.inference_mode():
            base = lib.tensor([1.0, 2.0, 3.0])
        view = base[:2]
        return view.is_inference(), view.requires_grad, view._base is base

    def inplace_on_inference_view_outside(lib):
        with lib.inference_mode():
            base = lib.tensor([1.0, 2.0, 3.0])
        base[:2].mul_(2.0)

    def inplace_on_normal_view_made_inside(lib):
        base = lib.tensor([1.0, 2.0, 3.0])
        with lib.inference_mode():
            view = base[:2]
        view.mul_(2.0)
        return view.is_inference(), base._version

    def view_made_inside_of_a_graph_tensor(lib):
        a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True).clone()
        with lib.inference_mode():
            view = a[:2]
        return view.requires_grad, view.is_inference()

    def graph_inplace_on_view_made_inside(lib):
        a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True).clone()
        with lib.inference_mode():
            view = a[:2]
        view.mul_(2.0)

    def inplace_inside_on_view_made_inside(lib):
        a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True).clone()
        with lib.inference_mode():
            view = a[:2]
            view.mul_(2.0)
        return a._version

    return {f.__name__: f for f in (
        inference_base_view_inside, normal_base_view_inside, inference_base_view_outside,
        inplace_on_inference_view_outside, inplace_on_normal_view_made_inside,
        view_made_inside_of_a_graph_tensor, graph_inplace_on_view_made_inside,
        inplace_inside_on_view_made_inside)}


SCENARIOS = _scenarios()


def _outcome(lib, name):
    try:
        return ("ok", SCENARIOS[name](lib))
    except Exception as exc:        # noqa: BLE001 - the class is what is compared
        return (type(exc).__name__, str(exc).split(".")[0])


def test_views_of_inference_tensors_are_inference_tensors():
    assert SCENARIOS["inference_base_view_inside"](rg) == (True, True)
    assert SCENARIOS["inference_base_view_outside"](rg) == (True, False, False)


def test_views_made_inside_the_mode_of_normal_tensors_stay_normal():
    assert SCENARIOS["normal_base_view_inside"](rg) == (False, True, True)
    assert SCENARIOS["inplace_on_normal_view_made_inside"](rg) == (False, 1)


def test_inplace_on_an_inference_view_outside_the_mode_raises():
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside "
                                           "InferenceMode is not allowed"):
        SCENARIOS["inplace_on_inference_view_outside"](rg)


def test_view_made_inside_of_a_graph_tensor_requires_grad_and_refuses_tracked_inplace():
    assert SCENARIOS["view_made_inside_of_a_graph_tensor"](rg) == (True, False)
    with pytest.raises(RuntimeError, match="A view was created in inference mode and is being "
                                           "modified inplace in normal mode"):
        SCENARIOS["graph_inplace_on_view_made_inside"](rg)
    assert SCENARIOS["inplace_inside_on_view_made_inside"](rg) == 1


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_matches_torch(name):
    torch = pytest.importorskip("torch")
    ours, theirs = _outcome(rg, name), _outcome(torch, name)
    assert ours[0] == theirs[0]
    if ours[0] == "ok":
        assert ours[1] == theirs[1]
    else:
        assert ours[1] == theirs[1]             # the first sentence of the message


def test_values_written_inside_the_mode_reach_the_base():
    base = rg.tensor(np.zeros(3))
    with rg.inference_mode():
        base[1:].add_(1.0)
    np.testing.assert_array_equal(np.asarray(base), [0.0, 1.0, 1.0])
