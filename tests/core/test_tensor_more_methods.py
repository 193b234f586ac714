"""More of torch's Tensor methods: the in-place draws (random_, cauchy_,
log_normal_, geometric_), bernoulli, bfloat16, const_data_ptr, dim_order,
module_load, new_empty_strided, narrow_copy, unique (and rg.unique),
apply_/map_/map2_; checked against torch where the result is deterministic."""
import importlib.util

import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle


def test_in_place_draws_have_the_distributions_support_and_refuse_bad_parameters():
    rg.manual_seed(0)
    x = rg.empty(4000)
    assert x.cauchy_(1.0, 0.5) is x and abs(float(np.median(x.numpy())) - 1.0) < 0.1
    assert (x.log_normal_(0.0, 0.25).numpy() > 0).all()
    g = x.geometric_(0.5).numpy()
    assert g.min() >= 1 and np.all(g == np.round(g)) and abs(g.mean() - 2.0) < 0.2
    i = rg.zeros(1000, dtype=rg.int64)
    assert set(np.unique(i.random_(3, 6).numpy())) == {3, 4, 5}
    assert set(np.unique(i.random_(2).numpy())) == {0, 1}
    assert set(np.unique(i.random_(**{"from": 7}, to=8).numpy())) == {7}
    f = rg.zeros(1000).random_()
    assert f.numpy().min() >= 0 and np.all(f.numpy() == np.round(f.numpy()))
    with pytest.raises(RuntimeError, match="sigma"):
        x.cauchy_(0.0, -1.0)
    with pytest.raises(RuntimeError, match="from"):
        i.random_(5, 5)
    with pytest.raises(RuntimeError, match="geometric_"):
        x.geometric_(1.5)
    leaf = rg.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError):
        leaf.cauchy_()


def test_bernoulli_and_bfloat16():
    assert rg.tensor([0.0, 1.0, 1.0]).bernoulli().tolist() == [0.0, 1.0, 1.0]
    assert rg.zeros(3).bernoulli(1.0).tolist() == [1.0, 1.0, 1.0]
    if importlib.util.find_spec("ml_dtypes") is None:
        with pytest.raises(RuntimeError, match="ml_dtypes"):
            rg.ones(2).bfloat16()
    else:
        assert str(rg.ones(2).bfloat16().dtype) == "bfloat16"


def test_layout_queries_and_copies_match_torch():
    # (layouts without ties: NumPy's strides of size-1 dims differ from torch's, and so would the order)
    for shape, perm in (((2, 3, 4), (0, 1, 2)), ((2, 3, 4), (2, 0, 1)), ((3, 2, 4), (1, 2, 0))):
        a = np.zeros(shape)
        t = torch.zeros(shape).permute(perm)
        r = rg.tensor(a).permute(perm)
        assert r.dim_order() == t.dim_order()
    with pytest.raises(RuntimeError, match="dim order"):
        rg.zeros(1).expand(2, 2).dim_order(ambiguity_check=True)
    x = rg.arange(6.0)
    assert x.const_data_ptr() == x.data_ptr()
    c = x.narrow_copy(0, 1, 3)
    c[0] = 100.0
    assert c.tolist() == [100.0, 2.0, 3.0] and x[1].item() == 1.0
    e = x.new_empty_strided((2, 3), (3, 1))
    assert e.shape == (2, 3) and e.dtype == x.dtype
    target = rg.zeros(2)
    loaded = target.module_load(rg.ones(2))
    assert target.tolist() == [1.0, 1.0] and loaded.tolist() == [1.0, 1.0]
    other = rg.full((2,), 3.0)
    assert target.module_load(other, assign=True).tolist() == [3.0, 3.0] and target.tolist() == [1.0, 1.0]


@pytest.mark.parametrize("kwargs", [{}, {"return_inverse": True}, {"return_counts": True},
                                    {"return_inverse": True, "return_counts": True, "dim": 0},
                                    {"return_counts": True, "dim": 1}])
def test_unique_matches_torch(kwargs):
    data = np.array([[3, 1, 3], [3, 1, 3], [0, 2, 0]])
    ours = rg.tensor(data).unique(**kwargs)
    theirs = torch.tensor(data).unique(**kwargs)
    ours, theirs = (ours if isinstance(ours, tuple) else (ours,)), (theirs if isinstance(theirs, tuple) else (theirs,))
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    np.testing.assert_array_equal(rg.unique(rg.tensor(data)).numpy(), torch.unique(torch.tensor(data)).numpy())
    assert not rg.unique(rg.tensor([1.0, 1.0], requires_grad=True)).requires_grad


def test_apply_map_map2():
    x = rg.tensor([1.0, 2.0, 3.0])
    assert x.apply_(lambda v: v * 2).tolist() == [2.0, 4.0, 6.0]
    assert x.map_(rg.tensor(1.0), lambda a, b: a - b).tolist() == [1.0, 3.0, 5.0]
    assert x.map2_(rg.tensor([1.0, 1.0, 1.0]), rg.tensor([2.0, 2.0, 2.0]), lambda a, b, c: a + b * c).tolist() == \
        [3.0, 5.0, 7.0]
    t = torch.tensor([1.0, 2.0, 3.0])
    assert t.apply_(lambda v: v * 2).tolist() == [2.0, 4.0, 6.0]
    with pytest.raises(RuntimeError):
        rg.ones(2, requires_grad=True).apply_(lambda v: v)
