"""nn.init's deprecated aliases (FutureWarning, the underscore form's result),
dirac_ and sparse_ against torch."""
import warnings

import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.oracle

init, tinit = rg.nn.init, torch.nn.init

ALIASES = [("uniform", (2, 3), (-1.0, 1.0)), ("normal", (2, 3), (0.0, 2.0)), ("constant", (2, 3), (0.5,)),
           ("eye", (3, 4), ()), ("dirac", (4, 2, 3), ()), ("xavier_uniform", (4, 5), ()),
           ("xavier_normal", (4, 5), (2.0,)), ("kaiming_uniform", (4, 5), ()), ("kaiming_normal", (4, 5), ()),
           ("orthogonal", (4, 5), ()), ("sparse", (6, 5), (0.5,))]


@pytest.mark.parametrize("name,shape,args", ALIASES)
def test_deprecated_alias_warns_and_calls_the_underscore_form(name, shape, args):
    msg = f"`nn.init.{name}` is now deprecated in favor of `nn.init.{name}_`."
    with pytest.warns(FutureWarning) as rec:
        t = rg.empty(*shape)
        out = getattr(init, name)(t, *args)
    with pytest.warns(FutureWarning) as rect:
        getattr(tinit, name)(torch.empty(*shape), *args)
    assert str(rec[0].message) == str(rect[0].message) == msg
    assert rec[0].filename == __file__          # stacklevel: the caller's line
    assert out is t
    assert getattr(init, name).__name__ == name
    # the same values as the underscore form from the same generator state
    rg.manual_seed(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = getattr(init, name)(rg.empty(*shape), *args)
    rg.manual_seed(3)
    b = getattr(init, name + "_")(rg.empty(*shape), *args)
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize("shape,groups", [((4, 2, 3), 1), ((6, 3, 3, 3), 2), ((3, 5, 2, 3, 4), 1), ((6, 2, 5), 3),
                                          ((2, 4, 3, 3), 1)])
def test_dirac_matches_torch(shape, groups):
    a = init.dirac_(rg.empty(*shape), groups)
    b = tinit.dirac_(torch.empty(*shape, dtype=torch.float64), groups)
    np.testing.assert_array_equal(np.asarray(a), b.numpy())


def test_dirac_keeps_the_input_through_a_convolution():
    w = init.dirac_(rg.empty(3, 3, 3, 3))
    x = rg.randn(2, 3, 5, 5)
    np.testing.assert_allclose(np.asarray(rg.nn.functional.conv2d(x, w, padding=1)), np.asarray(x))
    p = rg.nn.Parameter(rg.ones(2, 2, 3))
    assert init.dirac_(p) is p and p.requires_grad and p.grad_fn is None


def test_sparse_matches_torch_statistics():
    rg.manual_seed(0)
    w = init.sparse_(rg.empty(40, 300), sparsity=0.25, std=0.5)
    wt = tinit.sparse_(torch.empty(40, 300, dtype=torch.float64), sparsity=0.25, std=0.5)
    for arr in (np.asarray(w), wt.numpy()):
        assert ((arr == 0).sum(0) == 10).all()            # ceil(0.25 * 40) zeros in every column
        assert abs(arr[arr != 0].std() - 0.5) < 0.02
    g = np.random.default_rng(5)
    a = init.sparse_(rg.empty(5, 4), 0.5, generator=g)
    b = init.sparse_(rg.empty(5, 4), 0.5, generator=np.random.default_rng(5))
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_errors_like_torch():
    for mod, mk in ((init, rg.empty), (tinit, torch.empty)):
        with pytest.raises(ValueError, match="Only tensors with 3, 4, or 5 dimensions are supported"):
            mod.dirac_(mk(3, 3))
        with pytest.raises(ValueError, match="dim 0 must be divisible by groups"):
            mod.dirac_(mk(5, 2, 3), 2)
        with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
            mod.sparse_(mk(5), 0.1)
    with pytest.raises(TypeError, match="must be a retrograd Tensor"):
        init.dirac_(np.ones((2, 2, 3)))
