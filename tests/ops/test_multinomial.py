"""rg.multinomial / Tensor.multinomial: torch's shapes, dtype, errors and
distribution (checked by frequency over many draws)."""
import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")


def test_shapes_and_dtype_as_torch():
    w = [[0.1, 0.2, 0.7], [1.0, 1.0, 1.0]]
    for lib in (rg, torch):
        one = lib.multinomial(lib.tensor(w[0]), 2)
        two = lib.tensor(w).multinomial(3, replacement=True)
        assert tuple(one.shape) == (2,) and tuple(two.shape) == (2, 3)
        assert str(one.dtype).endswith("int64")


def test_frequencies_follow_the_weights():
    rg.manual_seed(3)
    w = np.array([1.0, 0.0, 3.0, 6.0])
    draws = rg.multinomial(rg.tensor(np.tile(w, (200, 1))), 50, replacement=True).numpy().ravel()
    freq = np.bincount(draws, minlength=4) / draws.size
    np.testing.assert_allclose(freq, w / w.sum(), atol=0.01)
    assert freq[1] == 0


def test_without_replacement_draws_each_index_once_and_favours_heavy_ones():
    rg.manual_seed(4)
    w = rg.tensor(np.tile([10.0, 1.0, 1.0, 0.0], (4000, 1)))
    out = rg.multinomial(w, 3).numpy()
    assert all(len(set(row)) == 3 for row in out[:200])
    assert not (out == 3).any()
    # the first draw is index 0 with probability 10/12
    np.testing.assert_allclose((out[:, 0] == 0).mean(), 10 / 12, atol=0.02)


def test_generator_makes_draws_repeatable():
    w = rg.tensor([0.3, 0.3, 0.4])
    a = rg.multinomial(w, 10, True, generator=np.random.default_rng(5))
    b = rg.multinomial(w, 10, True, generator=np.random.default_rng(5))
    np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("w, n, repl", [
    ([[[0.5, 0.5]]], 1, False),           # 3-d
    ([0.5, 0.5], 3, False),               # more than the categories without replacement
    ([0.5, -0.5], 1, True),               # negative weight
    ([float("nan"), 0.5], 1, True),
    ([0.0, 0.0], 1, True),                # zero row
    ([0.5, 0.5], 0, True),                # no samples
])
def test_errors_are_runtime_errors_as_torch(w, n, repl):
    with pytest.raises(RuntimeError):
        torch.multinomial(torch.tensor(w), n, repl)
    with pytest.raises(RuntimeError):
        rg.multinomial(rg.tensor(w), n, repl)


def test_integer_weights_are_refused_as_torch():
    with pytest.raises(RuntimeError):
        torch.multinomial(torch.tensor([1, 2]), 1)
    with pytest.raises(RuntimeError, match="floating-point"):
        rg.multinomial(rg.tensor([1, 2]), 1)


def test_zero_weights_come_last_in_index_order_as_torch():
    w = [1.0, 0.0, 0.0]
    for n in (2, 3):
        assert rg.multinomial(rg.tensor(w), n).tolist() == torch.multinomial(torch.tensor(w), n).tolist()
