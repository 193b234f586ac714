"""rg.Generator, get_rng_state and set_rng_state: torch's random-state API
(the streams are NumPy's, so values are compared within retrograd)."""
import numpy as np
import pytest

import retrograd as rg
from retrograd.utils.data import DataLoader, random_split

torch = pytest.importorskip("torch")


def test_torchs_methods_exist():
    for name in ("manual_seed", "seed", "initial_seed", "get_state", "set_state", "device"):
        assert hasattr(torch.Generator(), name) and hasattr(rg.Generator(), name), name


def test_seeding_repeats_draws_everywhere_a_generator_goes():
    def draws(seed):
        g = rg.Generator().manual_seed(seed)
        return (rg.rand(3, generator=g).numpy(), rg.randn(2, generator=g).numpy(),
                rg.randint(0, 9, (4,), generator=g).numpy(), rg.randperm(5, generator=g).numpy(),
                [int(b) for b in DataLoader(range(6), shuffle=True, generator=g)],
                list(random_split(range(8), [3, 5], generator=g)[0].indices))
    a, b, c = draws(4), draws(4), draws(5)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)
    assert any(not np.array_equal(u, v) for u, v in zip(a, c))


def test_state_round_trip():
    g = rg.Generator().manual_seed(0)
    state = g.get_state()
    assert state.dtype == np.uint8 and state.ndim == 1
    first = rg.rand(4, generator=g).numpy()
    g.set_state(state)
    np.testing.assert_array_equal(rg.rand(4, generator=g).numpy(), first)
    saved = rg.get_rng_state()
    x = rg.randn(5).numpy()
    rg.set_rng_state(saved)
    np.testing.assert_array_equal(rg.randn(5).numpy(), x)
    assert g.initial_seed() == 0 and g.seed() == g.initial_seed()


def test_bad_states_and_seeds():
    with pytest.raises(TypeError):
        rg.set_rng_state([1, 2])
    with pytest.raises(RuntimeError):
        rg.set_rng_state(rg.tensor([255, 0], dtype=rg.uint8))
    with pytest.raises(RuntimeError):
        rg.Generator().manual_seed(-1)
    with pytest.raises(RuntimeError):
        rg.Generator(device="cuda")
