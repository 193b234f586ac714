"""rg's twins of torch's top-level nn ops (torch.conv2d, torch.dropout,
torch.kl_div with an int reduction, torch.embedding(weight, indices), ...):
the same signature as torch's, the same values and gradients."""
import numpy as np
import pytest

import retrograd as rg
from retrograd import _torch_functional

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle

R = np.random.default_rng(0)


def _a(*shape):
    return R.standard_normal(shape)


def _pos(*shape):
    return R.random(shape) + 0.1


class _Const:
    # an array passed as a tensor that does not require grad (running statistics, pos_weight)
    def __init__(self, arr):
        self.arr = arr


# name -> (args as NumPy/Python values; arrays become tensors that require grad when floating)
CASES = {
    "conv1d": lambda: (_a(2, 3, 8), _a(4, 3, 3), _a(4), 1, 1),
    "conv2d": lambda: (_a(1, 2, 5, 5), _a(3, 2, 3, 3), None, 2, 1),
    "conv3d": lambda: (_a(1, 2, 4, 4, 4), _a(3, 2, 2, 2, 2)),
    "conv_transpose1d": lambda: (_a(1, 2, 5), _a(2, 3, 3), None, 2, 1, 1),
    "conv_transpose2d": lambda: (_a(1, 2, 3, 3), _a(2, 3, 3, 3), _a(3), 2),
    "conv_transpose3d": lambda: (_a(1, 2, 3, 3, 3), _a(2, 2, 2, 2, 2)),
    "convolution": lambda: (_a(1, 2, 5, 5), _a(3, 2, 3, 3), _a(3), [1, 1], [1, 1], [1, 1], False, [0, 0], 1),
    "avg_pool1d": lambda: (_a(2, 3, 8), 2),
    "max_pool1d": lambda: (_a(2, 3, 8), 3, 2, 1),
    "max_pool1d_with_indices": lambda: (_a(2, 3, 8), 3, 2, 1),
    "max_pool3d": lambda: (_a(1, 2, 4, 4, 4), 2),
    "adaptive_avg_pool1d": lambda: (_a(2, 3, 8), 3),
    "adaptive_max_pool1d": lambda: (_a(2, 3, 8), 3),
    "bilinear": lambda: (_a(4, 3), _a(4, 2), _a(5, 3, 2), _a(5)),
    "batch_norm": lambda: (_a(4, 3), _pos(3), _a(3), _Const(_a(3)), _Const(_pos(3)), True, 0.1, 1e-5, True),
    "instance_norm": lambda: (_a(2, 3, 5), _pos(3), _a(3), None, None, True, 0.1, 1e-5, True),
    "layer_norm": lambda: (_a(2, 3, 4), [4], _pos(4), _a(4), 1e-5, True),
    "group_norm": lambda: (_a(2, 4, 3), 2, _pos(4), _a(4), 1e-5, True),
    "rms_norm": lambda: (_a(2, 4), [4], _pos(4), 1e-6),
    "embedding": lambda: (_a(6, 3), np.array([[1, 5], [0, 1]]), 0),
    "dropout": lambda: (_a(3, 4), 0.5, False),
    "alpha_dropout": lambda: (_a(3, 4), 0.5, False),
    "feature_alpha_dropout": lambda: (_a(2, 3, 4), 0.5, False),
    "feature_dropout": lambda: (_a(2, 3, 4), 0.5, False),
    "binary_cross_entropy_with_logits": lambda: (_a(5), R.random(5), None, _Const(_pos(5)), 2),
    "cosine_embedding_loss": lambda: (_a(4, 3), _a(4, 3), np.array([1.0, -1.0, 1.0, -1.0]), 0.1, 0),
    "hinge_embedding_loss": lambda: (_a(5), np.array([1.0, -1.0, 1.0, -1.0, 1.0]), 1.0, 1),
    "kl_div": lambda: (np.log(_pos(4)), _pos(4), 1),
    "margin_ranking_loss": lambda: (_a(4), _a(4), np.array([1.0, -1.0, 1.0, 1.0]), 0.2, 2),
    "poisson_nll_loss": lambda: (_a(5), _pos(5), True, False, 1e-8, 1),
    "triplet_margin_loss": lambda: (_a(3, 4), _a(3, 4), _a(3, 4), 1.0, 2.0, 1e-6, False, 1),
    "ctc_loss": lambda: (np.log(np.full((6, 2, 4), 0.25)), np.array([[1, 2], [3, 3]]), [6, 5], [2, 2], 0, 1, False),
    "cosine_similarity": lambda: (_a(3, 4), _a(3, 4), 1, 1e-8),
    "pairwise_distance": lambda: (_a(3, 4), _a(3, 4), 2.0, 1e-6, False),
    "pdist": lambda: (_a(4, 3), 2.0),
    "pixel_shuffle": lambda: (_a(1, 8, 2, 2), 2),
    "pixel_unshuffle": lambda: (_a(1, 2, 4, 4), 2),
    "channel_shuffle": lambda: (_a(1, 4, 2, 2), 2),
    "prelu": lambda: (_a(2, 3, 4), _pos(3)),
    "celu": lambda: (_a(5), 0.7),
    "selu": lambda: (_a(5),),
    "hardshrink": lambda: (_a(5), 0.3),
    "threshold": lambda: (_a(5), 0.1, -1.0),
    "rrelu": lambda: (_a(5), 0.1, 0.3, False),
    "lstm_cell": lambda: (_a(2, 3), [_a(2, 4), _a(2, 4)], _a(16, 3), _a(16, 4), _a(16), _a(16)),
    "gru_cell": lambda: (_a(2, 3), _a(2, 4), _a(12, 3), _a(12, 4), _a(12), _a(12)),
    "rnn_tanh_cell": lambda: (_a(2, 3), _a(2, 4), _a(4, 3), _a(4, 4), _a(4), None),
    "rnn_relu_cell": lambda: (_a(2, 3), _a(2, 4), _a(4, 3), _a(4, 4), None, _a(4)),
    "frobenius_norm": lambda: (_a(3, 4), [0, 1]),
    "nuclear_norm": lambda: (_a(3, 4),),
}


def _convert(lib, v, leaves):
    if isinstance(v, _Const):
        return lib.tensor(v.arr)
    if isinstance(v, np.ndarray):
        t = lib.tensor(v)
        if v.dtype.kind == "f":
            t.requires_grad_(True)
            leaves.append(t)
        return t
    if isinstance(v, list) and v and isinstance(v[0], np.ndarray):
        return [_convert(lib, e, leaves) for e in v]
    return v


def _flat(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_match_torch(name):
    args = CASES[name]()
    leaves_r, leaves_t = [], []
    out_r = _flat(getattr(rg, name)(*[_convert(rg, a, leaves_r) for a in args]))
    out_t = _flat(getattr(torch, name)(*[_convert(torch, a, leaves_t) for a in args]))
    assert len(out_r) == len(out_t)
    for a, b in zip(out_r, out_t):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-7, atol=1e-9)
    floating = [(a, b) for a, b in zip(out_r, out_t) if b.dtype.is_floating_point]
    if floating and leaves_t:
        seed = [np.random.default_rng(1).standard_normal(tuple(b.shape)) for _, b in floating]
        gr = rg.autograd.grad([a for a, _ in floating], leaves_r, [rg.tensor(s) for s in seed], allow_unused=True)
        gt = torch.autograd.grad([b for _, b in floating], leaves_t, [torch.tensor(s) for s in seed],
                                 allow_unused=True)
        for a, b in zip(gr, gt):
            if b is None:
                assert a is None or not np.any(a.numpy())
            else:
                np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-8)


def test_the_umbrella_lists_every_twin():
    assert frozenset(_torch_functional.NAMES) == rg._TORCH_TWINS
    for name in _torch_functional.NAMES:
        assert hasattr(torch, name), name
        assert getattr(rg, name) is getattr(_torch_functional, name)


def test_size_nonzero_static_and_errors():
    assert rg.Size([2, 3]) == (2, 3) and rg.Size((2, 3)).numel() == 6 and isinstance(rg.Size([1]), tuple)
    assert rg.nonzero_static(rg.tensor([0, 3, 0, 4]), size=3).tolist() == [[1], [3], [-1]]
    assert rg.nonzero_static(rg.tensor([1, 1, 1]), size=2).tolist() == [[0], [1]]
    with pytest.raises(ValueError, match="reduction"):
        rg.kl_div(rg.zeros(2), rg.ones(2), 7)
    with pytest.raises(RuntimeError, match="output_padding"):
        rg.convolution(rg.ones(1, 1, 3, 3), rg.ones(1, 1, 2, 2), None, [1, 1], [0, 0], [1, 1], False, [1, 1], 1)
    assert rg.binomial(rg.tensor([10.0, 0.0]), rg.tensor([0.5, 0.5]))[1].item() == 0.0
    hist, edges = rg.histogramdd(rg.tensor([[0.0, 0.0], [1.0, 1.0]]), [2, 2])
    assert hist.tolist() == [[1.0, 0.0], [0.0, 1.0]] and len(edges) == 2


def test_grid_sampler_renorm_and_the_rest_match_torch():
    theta = np.array([[[0.8, -0.2, 0.1], [0.3, 0.9, -0.1]]])
    grid_r = rg.affine_grid_generator(rg.tensor(theta), [1, 1, 3, 4], False)
    grid_t = torch.affine_grid_generator(torch.tensor(theta), [1, 1, 3, 4], False)
    np.testing.assert_allclose(grid_r.numpy(), grid_t.numpy(), rtol=1e-12)
    img = R.standard_normal((1, 1, 4, 5))
    for mode in (0, 1, 2):
        for pad in (0, 1, 2):
            a = rg.grid_sampler(rg.tensor(img), grid_r, mode, pad, False)
            b = torch.grid_sampler(torch.tensor(img), grid_t, mode, pad, False)
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(rg.grid_sampler_2d(rg.tensor(img), grid_r, 0, 0, True).numpy(),
                               torch.grid_sampler_2d(torch.tensor(img), grid_t, 0, 0, True).numpy(), rtol=1e-9)
    with pytest.raises(ValueError, match="interpolation_mode"):
        rg.grid_sampler(rg.tensor(img), grid_r, 5, 0, False)
    w = R.standard_normal((5, 3)) * 3
    wr, wt = rg.tensor(w), torch.tensor(w)
    rg.embedding_renorm_(wr, rg.tensor([0, 2, 2]), 1.0, 2.0)
    torch.embedding_renorm_(wt, torch.tensor([0, 2, 2]), 1.0, 2.0)
    np.testing.assert_allclose(wr.numpy(), wt.numpy(), rtol=1e-12)
    xr, xt = rg.zeros(4), torch.zeros(4, dtype=torch.float64)
    rg.index_put_(xr, (rg.tensor([1, 3]),), rg.tensor([5.0, 6.0]))
    torch.index_put_(xt, (torch.tensor([1, 3]),), torch.tensor([5.0, 6.0], dtype=torch.float64))
    assert xr.tolist() == xt.tolist()
    m, v = R.standard_normal((3, 2)), R.standard_normal(2)
    yr, yt = rg.ones(3), torch.ones(3, dtype=torch.float64)
    rg.addmv_(yr, rg.tensor(m), rg.tensor(v), beta=0.5, alpha=2.0)
    torch.addmv_(yt, torch.tensor(m), torch.tensor(v), beta=0.5, alpha=2.0)
    np.testing.assert_allclose(yr.numpy(), yt.numpy(), rtol=1e-12)
    e = rg.empty_permuted((2, 3, 4), (2, 0, 1))
    assert e.shape == (2, 3, 4) and e.dim_order() == torch.empty_permuted((2, 3, 4), (2, 0, 1)).dim_order()
    rg.manual_seed(3)
    first = rg.default_generator.random()
    rg.manual_seed(3)
    assert rg.default_generator.random() == first
