"""Behaviours from torch's test/autograd/test_functional.py, translated (part b: hessian, vhp, hvp).

That file holds 54 tests: 52 in TestAutogradFunctional and 2 in the device-type class. All 52 of
TestAutogradFunctional are translated, plain tensors only, in two files: 24 here (the hessian, vhp,
hvp and api-agreement tests) and 28 in test_torch_functional_a.py. Tests parametrized over
``vectorize`` keep that parameter. Merged or split:
- each pair test_vhp_X / test_hvp_X (err_check, err_check_strict, no_grad, output, scalar,
  create_graph) is test_hessian_product_X[vhp|hvp].
- the strict tests of hessian, vhp and hvp are split into one case per function (detached,
  cut-off, linear).

EXCLUDED (from the whole torch file; both halves list them):
- every ``logging_tensor`` variant (the ``ctors`` parameter of each test): LoggingTensor is a
  torch ``__torch_dispatch__`` tensor subclass; retrograd has no dispatch subclasses.
- TestAutogradFunctionalDeviceType.test_construct_standard_basis_for: accelerator devices only
  (instantiated except for CPU).
- TestAutogradFunctionalDeviceType.test_jacobian_vectorize_correctness_different_devices:
  accelerator devices only (instantiated except for CPU).
"""

import numpy as np

import pytest

import retrograd as rg

from _torch_functional_shared import (  # noqa: E402
    _HAS_FORWARD_AD, F, gradcheck, gradgradcheck, DT, _np, _check_like, _check_blocks, _same, _all_zero,
    _three_first, _with_str, _cut_off,
)


def _exp3_sum(a):
    return 3 * a.narrow(0, 0, 3).exp().sum()


def _mixed_exp_sum(a, b):
    return (a + 3 * b.narrow(0, 0, 3)).exp().sum()


def _narrow_product_sum(a, b):
    return (3 * b.narrow(0, 0, 3) * a.narrow(0, 0, 3)).sum()


# -- hessian -------------------------------------------------------------------

def _hessian_three_ways(fn, inputs):
    """vectorize=True, and forward-over-reverse, agree with the row-by-row Hessian."""
    want = F.hessian(fn, inputs, vectorize=False)
    _same(F.hessian(fn, inputs, vectorize=True), want)
    if _HAS_FORWARD_AD:                 # (the install sets without retrograd-forward-ad check the rest)
        _same(F.hessian(fn, inputs, outer_jacobian_strategy="forward-mode", vectorize=True), want)


def test_hessian_vectorize_correctness_simple():
    _hessian_three_ways(lambda x: (3 * x ** 2).sum(), rg.randn(2, 3, 5))


def test_hessian_vectorize_correctness_multi_input():
    def chain(x, y, z):
        return ((x.relu() * x) @ y.sin() @ z).sum()

    _hessian_three_ways(chain, (rg.randn(2, 3), rg.randn(3, 5), rg.randn(5, 5)))


def test_hessian_vectorize_correctness_unrelated_outputs():
    """An output independent of one input, then of every input."""
    _hessian_three_ways(lambda x, y: (x ** 2).sum(), (rg.randn(2), rg.randn(3)))
    _hessian_three_ways(lambda x, y: rg.ones([]), (rg.randn(2), rg.randn(3)))


@pytest.mark.parametrize("vectorize", [True, False])
def test_hessian_err_check(vectorize):
    """Bad inputs, non-Tensor, many-element and tuple outputs are refused; good calls are shaped right."""
    x = rg.rand(4)
    with pytest.raises(TypeError, match="The inputs given to hessian must be either a Tensor"):
        F.hessian(_exp3_sum, (x, 2), vectorize=vectorize)
    with pytest.raises(TypeError, match="The outputs of the user-provided function given to hessian must"):
        F.hessian(_with_str, x, vectorize=vectorize)
    with pytest.raises(RuntimeError,
                       match="The Tensor returned by the function given to hessian should contain a single element"):
        F.hessian(_three_first, x, vectorize=vectorize)
    with pytest.raises(RuntimeError, match="The function given to hessian should return a single Tensor"):
        F.hessian(lambda a: (_three_first(a), _three_first(a)), x, vectorize=vectorize)
    _check_blocks(F.hessian(_exp3_sum, x, vectorize=vectorize), x, x)

    pair = (rg.rand(4), rg.rand(5))
    _check_blocks(F.hessian(_narrow_product_sum, pair, vectorize=vectorize), pair, pair)


_STRICT_SCALAR_CASES = [
    ("detached", lambda a: a.detach().sum(), "Output 0 of the user-provided function does not require gradients."),
    ("cut-off", lambda a: _cut_off(a).sum(), "jacobian of the user-provided function with respect to input 0"),
    ("linear", lambda a: (3 * a).sum(), "jacobian of the user-provided function with respect to input 0 is"),
]


@pytest.mark.parametrize("fn,message", [c[1:] for c in _STRICT_SCALAR_CASES], ids=[c[0] for c in _STRICT_SCALAR_CASES])
def test_hessian_err_check_strict(fn, message):
    """strict=True refuses a Hessian that does not depend on the input; strict=False gives zeros."""
    x = rg.rand(4)
    with pytest.raises(RuntimeError, match=message):
        F.hessian(fn, x, strict=True)
    hess = F.hessian(fn, x, strict=False)
    _check_blocks(hess, x, x)
    assert _all_zero(hess)


def test_hessian_err_check_strict_vectorize():
    with pytest.raises(RuntimeError, match="not supported together"):
        F.hessian(lambda a: (a ** 3).sum(), rg.rand(4), strict=True, vectorize=True)


def test_hessian_no_grad():
    """Under no_grad the Hessian has no history, unless create_graph=True asks for it."""
    x = rg.rand(2, 2)

    def cubes(t):
        return t.pow(3).sum()

    with rg.no_grad():
        hess = F.hessian(cubes, x)
    assert all(hess[i][j].grad_fn is None for i in range(2) for j in range(2))
    assert not _all_zero(hess)
    with rg.no_grad():
        hess = F.hessian(cubes, x, create_graph=True)
    assert all(hess[i][j].grad_fn is not None for i in range(2) for j in range(2))
    assert not _all_zero(hess)


@pytest.mark.parametrize("vectorize", [True, False])
def test_hessian_output(vectorize):
    """Blocks shaped input_i + input_j, with no history."""
    x = rg.rand(2, 2)
    hess = F.hessian(lambda t: t.pow(3).sum(), x, vectorize=vectorize)
    _check_blocks(hess, x, x)
    assert hess.grad_fn is None

    pair = (rg.rand(2, 2), rg.rand(2, 2))
    hess = F.hessian(lambda a, b: (a + b).pow(3).sum(), pair, vectorize=vectorize)
    _check_blocks(hess, pair, pair)
    assert all(hess[i][j].grad_fn is None for i in range(2) for j in range(2))


@pytest.mark.parametrize("vectorize", [True, False])
def test_hessian_scalar(vectorize):
    """0-d inputs, and a one-element output of any shape, are accepted."""
    x = rg.rand(4, 4)
    _check_blocks(F.hessian(lambda t: t.sum(), x, vectorize=vectorize), x, x)
    s = rg.rand([])
    _check_like(F.hessian(lambda t: t.sum(), s, vectorize=vectorize), s)
    _check_blocks(F.hessian(lambda t: t.sum().view(1, 1, 1), x, vectorize=vectorize), x, x)


@pytest.mark.parametrize("vectorize", [True, False])
def test_hessian_create_graph(vectorize):
    """With create_graph the Hessian is differentiable, twice, and composes in a bigger function."""
    def cubes(t):
        return t.pow(3).sum()

    x = rg.rand(2, 2, dtype=DT, requires_grad=True)
    hess = F.hessian(cubes, x, create_graph=True, vectorize=vectorize)
    _check_blocks(hess, x, x)
    assert hess.grad_fn is not None

    def single(a):
        return F.hessian(cubes, a, create_graph=True, vectorize=vectorize)

    assert gradcheck(single, (x,))
    assert gradgradcheck(single, (x,))

    def cube_of_sum(a, b):
        return (a + b).pow(3).sum()

    pair = (rg.rand(2, 2, dtype=DT, requires_grad=True), rg.rand(2, 2, dtype=DT, requires_grad=True))
    hess = F.hessian(cube_of_sum, pair, create_graph=True, vectorize=vectorize)
    _check_blocks(hess, pair, pair)
    assert all(hess[i][j].grad_fn is not None for i in range(2) for j in range(2))

    def flat_blocks(*a):
        blocks = F.hessian(cube_of_sum, a, create_graph=True, vectorize=vectorize)
        return tuple(b for row in blocks for b in row)

    assert gradcheck(flat_blocks, pair)
    assert gradgradcheck(flat_blocks, pair)

    def composed(a, b):
        a = a.cos()
        row_a, row_b = F.hessian(cube_of_sum, (a, b), create_graph=True, vectorize=vectorize)
        total = row_a[0].cos().sum() + row_a[1].cos().sum() + row_b[0].cos().sum()
        return total + row_b[1].cos().sum() + a.cos().sum() + b.cos().sum()

    assert gradcheck(composed, pair)
    assert gradgradcheck(composed, pair)


# -- vhp and hvp (the same tests, once per api) ---------------------------------

HESSIAN_PRODUCTS = ["vhp", "hvp"]


@pytest.mark.parametrize("api", HESSIAN_PRODUCTS)
def test_hessian_product_err_check(api):
    """torch's test_vhp_err_check and test_hvp_err_check: bad inputs, outputs and v are refused."""
    fn = getattr(F, api)
    x, v = rg.rand(4), rg.rand(4)
    with pytest.raises(TypeError, match=f"The inputs given to {api} must be either a Tensor"):
        fn(_exp3_sum, (x, 2), v)
    with pytest.raises(TypeError, match=f"The outputs of the user-provided function given to {api} must"):
        fn(_with_str, x, v)
    with pytest.raises(RuntimeError,
                       match=f"The Tensor returned by the function given to {api} should contain a single element"):
        fn(_three_first, x, v)
    with pytest.raises(RuntimeError, match="v has invalid size:"):
        fn(_exp3_sum, x, rg.rand(5))
    with pytest.raises(TypeError, match=f"The v given to {api} must be either a Tensor or a tuple of Tensors"):
        fn(_exp3_sum, x, (v, 2))
    _check_like(fn(_exp3_sum, x, v)[1], x)

    pair, w = (rg.rand(4), rg.rand(5)), (rg.rand(4), rg.rand(5))
    _check_like(fn(_narrow_product_sum, pair, w)[1], pair)


_STRICT_PRODUCT_CASES = [
    ("detached", lambda a: a.detach().sum(), "Output 0 of the user-provided function does not require gradients."),
    ("cut-off", lambda a: _cut_off(a).sum(), "The output of the user-provided function is independent of input 0"),
    ("linear", lambda a: (3 * a).sum(), "jacobian of the user-provided function with respect to input 0 is"),
]


@pytest.mark.parametrize("api", HESSIAN_PRODUCTS)
@pytest.mark.parametrize("fn,message", [c[1:] for c in _STRICT_PRODUCT_CASES],
                         ids=[c[0] for c in _STRICT_PRODUCT_CASES])
def test_hessian_product_err_check_strict(api, fn, message):
    """torch's test_vhp_err_check_strict and test_hvp_err_check_strict."""
    product = getattr(F, api)
    x, v = rg.rand(4), rg.rand(4)
    with pytest.raises(RuntimeError, match=message):
        product(fn, x, v, strict=True)
    _, res = product(fn, x, v, strict=False)
    _check_like(res, x)
    assert _all_zero(res)


@pytest.mark.parametrize("api", HESSIAN_PRODUCTS)
def test_hessian_product_no_grad(api):
    """torch's test_vhp_no_grad and test_hvp_no_grad: no history under no_grad unless create_graph."""
    product = getattr(F, api)
    x, v = rg.rand(4, 4), rg.ones(4, 4)
    with rg.no_grad():
        out, res = product(lambda t: t.exp().sum(), x, v)
    assert out.grad_fn is None and res.grad_fn is None
    assert not _all_zero(res)
    with rg.no_grad():
        out, res = product(lambda t: t.exp().sum(), x, v, create_graph=True)
    assert out.grad_fn is not None and res.grad_fn is not None
    assert not _all_zero(res)


@pytest.mark.parametrize("api", HESSIAN_PRODUCTS)
def test_hessian_product_output(api):
    """torch's test_vhp_output and test_hvp_output: shaped like the inputs, with no history."""
    product = getattr(F, api)
    x = rg.rand(4, 4)
    out, res = product(_exp3_sum, x, rg.ones(4, 4))
    _check_like(res, x)
    assert out.grad_fn is None and res.grad_fn is None

    pair = (rg.rand(3), rg.rand(4))
    out, res = product(_mixed_exp_sum, pair, (rg.ones(3), rg.ones(4)))
    _check_like(res, pair)
    assert out.grad_fn is None and res[0].grad_fn is None and res[1].grad_fn is None


@pytest.mark.parametrize("api", HESSIAN_PRODUCTS)
def test_hessian_product_scalar(api):
    """torch's test_vhp_scalar and test_hvp_scalar: 0-d inputs (v optional), one-element outputs."""
    product = getattr(F, api)

    def exp_total(t):
        return t.exp().sum()

    x = rg.rand(4, 4)
    _check_like(product(exp_total, x, rg.ones(4, 4))[1], x)
    s = rg.rand([])
    _check_like(product(exp_total, s, rg.rand([]))[1], s)
    _check_like(product(exp_total, s)[1], s)
    _check_like(product(lambda t: t.exp().sum().view(1, 1, 1), x, rg.rand(4, 4))[1], x)


@pytest.mark.parametrize("api", HESSIAN_PRODUCTS)
def test_hessian_product_create_graph(api):
    """torch's test_vhp_create_graph and test_hvp_create_graph."""
    product = getattr(F, api)
    x = rg.rand(4, 4, dtype=DT, requires_grad=True)
    v = rg.ones(4, 4, dtype=DT, requires_grad=True)
    out, res = product(_exp3_sum, x, v, create_graph=True)
    _check_like(res, x)
    assert out.grad_fn is not None and res.grad_fn is not None
    assert gradcheck(lambda a, w: product(_exp3_sum, a, w, create_graph=True), (x, v))
    assert gradgradcheck(lambda a, w: product(_exp3_sum, a, w, create_graph=True), (x, v))

    args = (rg.rand(3, dtype=DT, requires_grad=True), rg.rand(4, dtype=DT, requires_grad=True),
            rg.ones(3, dtype=DT, requires_grad=True), rg.ones(4, dtype=DT, requires_grad=True))
    out, res = product(_mixed_exp_sum, args[:2], args[2:], create_graph=True)
    _check_like(res, args[:2])
    assert out.grad_fn is not None and res[0].grad_fn is not None and res[1].grad_fn is not None

    def just_product(*a):
        return product(_mixed_exp_sum, a[:2], a[2:], create_graph=True)[1]

    assert gradcheck(just_product, args)
    assert gradgradcheck(just_product, args)

    def composed(a, b, *w):
        a = a.cos()
        val, (ra, rb) = product(_mixed_exp_sum, (a, b), w, create_graph=True)
        return val.cos() + ra.cos().sum() + rb.cos() + a.cos().sum() + b.cos()

    assert gradcheck(composed, args)
    assert gradgradcheck(composed, args)


# -- agreement between the apis -------------------------------------------------

def test_jacobian_match_vjp_jvp():
    """jvp is J v and vjp is v^T J."""
    def cube_plus_total(t):
        return t ** 3 + t.sum()

    x, v = rg.rand(4), rg.rand(4)
    jac = _np(F.jacobian(cube_plus_total, x))
    np.testing.assert_allclose(_np(F.jvp(cube_plus_total, x, v)[1]), jac @ _np(v), rtol=1e-6)
    np.testing.assert_allclose(_np(F.vjp(cube_plus_total, x, v)[1]), _np(v) @ jac, rtol=1e-6)


def test_hessian_match_vhp_hvp():
    """hvp is H v and vhp is v^T H."""
    x, v = rg.rand(4), rg.rand(4)
    hess = _np(F.hessian(_exp3_sum, x))
    np.testing.assert_allclose(_np(F.hvp(_exp3_sum, x, v)[1]), hess @ _np(v), rtol=1e-6)
    np.testing.assert_allclose(_np(F.vhp(_exp3_sum, x, v)[1]), _np(v) @ hess, rtol=1e-6)
