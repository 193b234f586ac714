"""pickle, copy.copy and copy.deepcopy of tensors as torch 2.13.

pickle and copy.copy give a leaf that requires grad when the original does
(also for a non-leaf or a view, which lose their graph); copy.copy shares
memory, pickle does not; neither keeps .grad. deepcopy copies leaves only
(torch's RuntimeError for a tensor with a grad_fn), keeps requires_grad and
.grad, and copies memory once per deepcopy so views stay views of the copied
base (torch's memo on storages). The torch checks run the same steps on torch.
"""
from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import retrograd as rg


def _leaf(L):
    return L.tensor([1.0, 2.0, 3.0], requires_grad=True)


def _pickled(t):
    return pickle.loads(pickle.dumps(t))


def _facts(t):
    return (t.requires_grad, t.is_leaf, t.grad_fn is None, None if t.grad is None else t.grad.tolist())


def _torch():
    return pytest.importorskip("torch")


KINDS = {
    "leaf": lambda L: _leaf(L),
    "nonleaf": lambda L: _leaf(L) * 2,
    "view": lambda L: _leaf(L)[1:],
    "plain": lambda L: L.tensor([1.0, 2.0]),
}


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("how", ["pickle", "copy"])
def test_pickle_and_copy_give_a_leaf_as_torch(kind, how):
    torch = _torch()
    fn = _pickled if how == "pickle" else copy.copy
    a, b = KINDS[kind](rg), KINDS[kind](torch)
    ra, rb = fn(a), fn(b)
    assert _facts(ra) == _facts(rb)
    assert ra.tolist() == rb.tolist()
    assert ra.is_leaf and ra.requires_grad == b.requires_grad


def test_copy_copy_shares_memory_and_pickle_does_not():
    x = rg.zeros(3)
    c, p = copy.copy(x), _pickled(x)
    c[0] = 5.0
    assert x.tolist() == [5.0, 0.0, 0.0]
    p[1] = 7.0
    assert x.tolist() == [5.0, 0.0, 0.0]


def test_pickle_and_copy_drop_grad_as_torch():
    torch = _torch()
    for L in (rg, torch):
        x = _leaf(L)
        x.grad = L.ones(3) if L is rg else torch.ones(3)
        assert _pickled(x).grad is None and copy.copy(x).grad is None


def test_pickled_copy_of_a_nonleaf_is_a_trainable_leaf():
    x = _leaf(rg)
    y = _pickled(x * 2)
    (y * y).sum().backward()
    assert y.grad.tolist() == [4.0, 8.0, 12.0]
    assert x.grad is None


@pytest.mark.parametrize("kind", ["nonleaf", "view"])
def test_deepcopy_of_a_nonleaf_raises_as_torch(kind):
    torch = _torch()
    with pytest.raises(RuntimeError, match="Only Tensors created explicitly by the user"):
        copy.deepcopy(KINDS[kind](rg))
    with pytest.raises(RuntimeError, match="Only Tensors created explicitly by the user"):
        copy.deepcopy(KINDS[kind](torch))


def test_deepcopy_of_a_nonleaf_without_grad_works_as_torch():
    torch = _torch()
    for L in (rg, torch):
        x = _leaf(L)
        with L.no_grad():
            y = x * 2
        c = copy.deepcopy(y)
        assert not c.requires_grad and c.tolist() == [2.0, 4.0, 6.0]


def test_deepcopy_keeps_requires_grad_and_grad():
    torch = _torch()
    for L in (rg, torch):
        x = _leaf(L)
        (x * x).sum().backward()
        c = copy.deepcopy(x)
        assert c.requires_grad and c.is_leaf
        assert c.grad.tolist() == [2.0, 4.0, 6.0]
        assert c.grad is not x.grad
        c.grad.zero_()
        assert x.grad.tolist() == [2.0, 4.0, 6.0]


def test_deepcopy_memo_keeps_views_of_one_base_sharing_the_copy():
    torch = _torch()
    for L in (rg, torch):
        base = L.zeros(6)
        v = base[1:4]
        w = base.reshape(2, 3).T
        cb, cv, cw, cb2 = copy.deepcopy((base, v, w, base))
        assert cb2 is cb
        cv[0] = 5.0                     # writes base[1]
        cw[2, 1] = 9.0                  # writes base[5]
        assert cb.tolist() == [0.0, 5.0, 0.0, 0.0, 0.0, 9.0], L.__name__
        assert base.tolist() == [0.0] * 6
        assert cw.tolist() == [[0.0, 0.0], [5.0, 0.0], [0.0, 9.0]]


def test_deepcopy_memo_with_negative_strides():
    # NumPy-style negative steps (torch has none): the copy is still a view
    base = rg.arange(6.0)
    r = base[::-2]
    cb, cr = copy.deepcopy([base, r])
    cr[0] = -1.0
    assert cb.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, -1.0]
    assert cr.tolist() == [-1.0, 3.0, 1.0]


def test_deepcopy_of_a_lone_view_copies_only_its_values():
    base = rg.arange(6.0)
    v = base[2:4]
    c = copy.deepcopy(v)
    assert c.tolist() == [2.0, 3.0]
    c[0] = -1.0
    assert base.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]


def test_deepcopy_keeps_readonly_expanded_arrays_readonly():
    e = rg.ones(3, 1).expand(3, 4)
    c = copy.deepcopy(e)
    assert c.shape == (3, 4)
    assert not np.asarray(c).flags.writeable


def test_deepcopy_of_a_structure_with_a_module_like_dict():
    params = {"w": rg.ones(2, requires_grad=True), "b": rg.zeros(1, requires_grad=True)}
    c = copy.deepcopy(params)
    assert c["w"].requires_grad and c["w"] is not params["w"]
    c["w"].data[0] = 3.0
    assert params["w"].tolist() == [1.0, 1.0]
