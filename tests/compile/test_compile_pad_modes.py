"""nn.functional.pad's reflect, replicate and circular modes compile: with
non-negative amounts below the dims' sizes they are core's pad, whose
source positions are made per call from the shapes. Values and gradients
match eager (and torch's, tests/nn)."""
import warnings

import numpy as np
import pytest

import retrograd as rg
import retrograd.compile
import retrograd.nn.functional as F

CASES = [((3, 5), (1, 2)), ((2, 4, 5), (2, 1)), ((2, 3, 4, 5), (2, 1, 1, 0)),
         ((1, 2, 3, 4, 5), (1, 1, 0, 2, 1, 1))]


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("shape, amounts", CASES)
def test_pad_modes_compile_and_match_eager(mode, shape, amounts, assert_matches_eager):
    rng = np.random.default_rng(len(shape))

    def f(x):
        return (F.pad(x, amounts, mode) ** 2 * 0.5).sum()
    cf = rg.compile(f, backend="numpy")
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # a graph break warns
        for _ in range(2):
            assert_matches_eager(cf, f, rng.standard_normal(shape))
    assert cf.cache_info() == {"compiled": 1, "eager": 0}
