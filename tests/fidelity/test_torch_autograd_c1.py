"""Behaviours from torch's test/test_autograd.py, translated (part c1): TestAutogradComplex and
TestAutogradFunctional, from the tests whose ``def test_`` line starts after character 184,000 of the stored
copy. test_torch_autograd_c2.py has the TestAutogradDeviceType (CPU) and TestMultithreadAutograd tests of that
part (91 torch tests in all: 57 translated, 34 excluded; c2's docstring lists its own).

Of the 37 torch tests of these two classes, 32 are translated here and 5 excluded. The vjp/jvp strict tests
and the vhp/hvp err_check, err_check_strict, output, scalar and create_graph tests share one parametrized test
per pair (one case per torch test).

Excluded:
test_real: needs Tensor.real (complex views), which retrograd does not have
test_imag: needs Tensor.imag, which retrograd does not have
test_view_as_real: needs view_as_real, which retrograd does not have
test_view_as_complex: needs view_as_complex, which retrograd does not have
test_view_func_for_complex_views: needs view_as_real and view_as_complex
"""
import numpy as np
import pytest

import retrograd as rg
from retrograd.autograd import functional as AF
from retrograd.autograd import gradcheck, gradgradcheck

_GEN = np.random.default_rng(184000)


def _data(*shape, grad=False):
    """A float64 tensor of uniform [0, 1) values."""
    return rg.tensor(_GEN.random(shape), requires_grad=grad)


def _np(t):
    return t.detach().numpy()


def _check_like(got, ref):
    """got mirrors ref: one tensor of ref's shape, or a tuple of such tensors."""
    if isinstance(ref, tuple):
        assert isinstance(got, tuple) and len(got) == len(ref)
        for g, r in zip(got, ref):
            assert isinstance(g, rg.Tensor)
            assert tuple(g.shape) == tuple(r.shape)
    else:
        assert isinstance(got, rg.Tensor)
        assert tuple(got.shape) == tuple(ref.shape)


def _block_shape(a, b):
    return tuple(a.shape) + tuple(b.shape)


def _check_blocks(got, rows, cols):
    """Jacobian/Hessian layout: one block per (row, col) pair, block shape = row shape + col shape."""
    rows_t, cols_t = isinstance(rows, tuple), isinstance(cols, tuple)
    if not rows_t and not cols_t:
        assert isinstance(got, rg.Tensor) and tuple(got.shape) == _block_shape(rows, cols)
        return
    assert isinstance(got, tuple)
    if rows_t and not cols_t:
        assert len(got) == len(rows)
        assert all(tuple(g.shape) == _block_shape(r, cols) for g, r in zip(got, rows))
    elif cols_t and not rows_t:
        assert len(got) == len(cols)
        assert all(tuple(g.shape) == _block_shape(rows, c) for g, c in zip(got, cols))
    else:
        assert len(got) == len(rows)
        for line, r in zip(got, rows):
            assert isinstance(line, tuple) and len(line) == len(cols)
            assert all(tuple(g.shape) == _block_shape(r, c) for g, c in zip(line, cols))


def _first3_times3(a):
    return 3 * a.narrow(0, 0, 3)


def _with_a_string(a):
    return 3 * a.narrow(0, 0, 3), "not a tensor"


def _detached(a):
    return a.detach()


def _cut_off(a):
    """Requires grad, but is not connected to the input."""
    return a.long().float().requires_grad_().clone()


def _exp_head(a):
    return 3 * a.narrow(0, 0, 3).exp().sum()


def _exp_mix(a, b):
    return (a + 3 * b.narrow(0, 0, 3)).exp().sum()


def _prod_heads(a, b):
    return (3 * b.narrow(0, 0, 3) * a.narrow(0, 0, 3)).sum()


def _lin_and_prod(x, y):
    return 2 * x + 3 * y, x * y


def _double(*shape, grad=True):
    return rg.tensor(_GEN.random(shape) + 0.1, dtype=rg.double, requires_grad=grad)


# -- vjp ---------------------------------------------------------------------------------------------------------

def test_vjp_err_check():
    x, v = _data(4), rg.ones(3)
    with pytest.raises(TypeError, match="The inputs given to vjp must be either a Tensor"):
        AF.vjp(_first3_times3, (x, 2), v)
    with pytest.raises(TypeError, match="The outputs of the user-provided function given to vjp must"):
        AF.vjp(_with_a_string, x, v)
    with pytest.raises(RuntimeError, match="The vector v can only be None if the user-provided function returns"):
        AF.vjp(_first3_times3, x)
    with pytest.raises(RuntimeError, match="The given v should contain a single Tensor."):
        AF.vjp(_first3_times3, x, (rg.ones_like(x), rg.ones_like(x)))
    with pytest.raises(RuntimeError, match="v has invalid size: should be"):
        AF.vjp(_first3_times3, x, v[:2])
    _check_like(AF.vjp(_first3_times3, x, v)[1], x)


@pytest.mark.parametrize("op", ["vjp", "jvp"])
def test_vjp_jvp_err_check_strict(op):
    """One torch test per op (test_vjp_err_check_strict, test_jvp_err_check_strict)."""
    fn = getattr(AF, op)
    x, v = _data(4), _data(4)
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function does not require gradients."):
        fn(_detached, x, v, strict=True)
    out = fn(_detached, x, v, strict=False)[1]
    _check_like(out, x)
    assert float(out.abs().sum()) == 0.0

    with pytest.raises(RuntimeError, match="The output of the user-provided function is independent of input 0"):
        fn(_cut_off, x, v, strict=True)
    out = fn(_cut_off, x, v, strict=False)[1]
    _check_like(out, x)
    assert float(out.abs().sum()) == 0.0

    x.requires_grad_()
    with pytest.raises(RuntimeError, match="jacobian of the user-provided function is independent of input 0."):
        fn(lambda a: a.clone(), x, v, create_graph=True, strict=True)
    out = fn(lambda a: a.clone(), x, v, create_graph=True, strict=False)[1]
    _check_like(out, x)
    np.testing.assert_allclose(_np(out), _np(v))


def test_vjp_output():
    mat = _data(4, 4)
    val, back = AF.vjp(lambda m: m.sum(dim=1), mat, rg.ones(4))
    _check_like(back, mat)
    assert val.grad_fn is None and back.grad_fn is None

    pair = (_data(2), _data(2))
    val, back = AF.vjp(lambda a, b: 2 * a + 3 * b, pair, rg.ones(2))
    _check_like(back, pair)
    assert val.grad_fn is None and all(b.grad_fn is None for b in back)

    cot = (rg.tensor([1.0, 0.0]), rg.tensor([1.0, 0.0]))
    val, back = AF.vjp(lambda a, b: (2 * a + 3 * b, a + b), pair, cot)
    _check_like(back, pair)
    assert all(t.grad_fn is None for t in val + back)


def test_vjp_scalar():
    mat = _data(4, 4)
    for cot in (rg.ones([]), None):
        val, back = AF.vjp(lambda m: m.sum(), mat, cot)
        assert tuple(val.shape) == ()
        _check_like(back, mat)

    point = _data()
    val, back = AF.vjp(lambda s: s.unsqueeze(0).repeat(4), point, rg.ones(4))
    assert tuple(val.shape) == (4,)
    _check_like(back, point)


def test_vjp_create_graph():
    mat, cot = _double(2, 2), rg.ones(2, dtype=rg.double, requires_grad=True)
    val, back = AF.vjp(lambda m: m.sum(dim=1), mat, cot, create_graph=True)
    _check_like(back, mat)
    assert val.grad_fn is not None and back.grad_fn is not None

    def row_sums(m, w):
        return AF.vjp(lambda t: t.sum(dim=1), m, w, create_graph=True)

    assert gradcheck(row_sums, (mat, cot))
    assert gradgradcheck(row_sums, (mat, cot))

    args = (_double(2), _double(2), rg.tensor([1.0, 0.0], requires_grad=True),
            rg.tensor([1.0, 0.0], requires_grad=True))

    def pulled(*a):
        return AF.vjp(_lin_and_prod, a[:2], a[2:], create_graph=True)[1]

    assert gradcheck(pulled, args)
    assert gradgradcheck(pulled, args)

    def composed(*a):
        x, y = a[0].cos(), a[1]
        val, back = AF.vjp(_lin_and_prod, (x, y), a[2:], create_graph=True)
        return val[0].exp() + val[1].exp() + back[0].exp() + back[1].exp() + x.exp() + y.exp()

    assert gradcheck(composed, args)
    assert gradgradcheck(composed, args)


# -- jvp ---------------------------------------------------------------------------------------------------------

def test_jvp_err_check():
    x, v = _data(4), _data(4)
    with pytest.raises(TypeError, match="The inputs given to jvp must be either a Tensor"):
        AF.jvp(_first3_times3, (x, 2), v)
    with pytest.raises(TypeError, match="The outputs of the user-provided function given to jvp must"):
        AF.jvp(_with_a_string, x, v)
    with pytest.raises(RuntimeError, match="The vector v can only be None if the input to the user-provided function"):
        AF.jvp(_first3_times3, x)
    with pytest.raises(RuntimeError, match="The given v should contain a single Tensor."):
        AF.jvp(_first3_times3, x, (v, v))
    with pytest.raises(RuntimeError, match="v has invalid size: should be"):
        AF.jvp(_first3_times3, x, v[:2])
    _check_like(AF.jvp(_first3_times3, x, v)[1], _first3_times3(x))


def test_jvp_output():
    mat = _data(4, 4)
    val, fwd = AF.jvp(lambda m: m.sum(dim=1), mat, rg.ones(4, 4))
    _check_like(fwd, val)
    assert val.grad_fn is None and fwd.grad_fn is None

    pair = (_data(2), _data(2))
    val, fwd = AF.jvp(lambda a, b: 2 * a + 3 * b, pair, (rg.ones(2), rg.ones(2)))
    _check_like(fwd, val)
    assert val.grad_fn is None and fwd.grad_fn is None

    tan = (rg.tensor([1.0, 0.0]), rg.tensor([1.0, 0.0]))
    val, fwd = AF.jvp(lambda a, b: (2 * a + 3 * b, a + b), pair, tan)
    _check_like(fwd, val)
    assert all(t.grad_fn is None for t in val + fwd)


def test_jvp_scalar():
    val, fwd = AF.jvp(lambda m: m.sum(), _data(4, 4), rg.ones(4, 4))
    assert tuple(val.shape) == () and tuple(fwd.shape) == ()

    point = _data()
    for tan in (rg.ones([]), None):
        val, fwd = AF.jvp(lambda s: s.unsqueeze(0).repeat(4), point, tan)
        assert tuple(val.shape) == (4,) and tuple(fwd.shape) == (4,)


def test_jvp_create_graph():
    mat, tan = _double(2, 2), rg.ones(2, 2, dtype=rg.double, requires_grad=True)
    val, fwd = AF.jvp(lambda m: m.sum(dim=1), mat, tan, create_graph=True)
    _check_like(fwd, val)
    assert val.grad_fn is not None and fwd.grad_fn is not None

    def row_sums(m, w):
        return AF.jvp(lambda t: t.sum(dim=1), m, w, create_graph=True)

    assert gradcheck(row_sums, (mat, tan))
    assert gradgradcheck(row_sums, (mat, tan))

    args = (_double(2), _double(2), rg.tensor([1.0, 0.0], requires_grad=True),
            rg.tensor([1.0, 0.0], requires_grad=True))

    def pushed(*a):
        return AF.jvp(_lin_and_prod, a[:2], a[2:], create_graph=True)[1]

    assert gradcheck(pushed, args)
    assert gradgradcheck(pushed, args)

    def composed(*a):
        x, y = a[0].cos(), a[1]
        val, fwd = AF.jvp(_lin_and_prod, (x, y), a[2:], create_graph=True)
        return val[0].exp() + val[1].exp() + fwd[0].exp() + fwd[1].exp() + x.exp() + y.exp()

    assert gradcheck(composed, args)
    assert gradgradcheck(composed, args)


# -- jacobian ----------------------------------------------------------------------------------------------------

def test_jacobian_err_check():
    x = _data(4)
    with pytest.raises(TypeError, match="The inputs given to jacobian must be either a Tensor"):
        AF.jacobian(_first3_times3, (x, 2))
    with pytest.raises(TypeError, match="The outputs of the user-provided function given to jacobian must"):
        AF.jacobian(_with_a_string, x)
    _check_blocks(AF.jacobian(_first3_times3, x), _first3_times3(x), x)

    def two_outs(a, b):
        return b, 3 * a.narrow(0, 0, 3)

    pair = (_data(4), _data(5))
    _check_blocks(AF.jacobian(two_outs, pair), two_outs(*pair), pair)


def test_jacobian_err_check_strict():
    x = _data(4)
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function does not require gradients."):
        AF.jacobian(_detached, x, strict=True)
    jac = AF.jacobian(_detached, x, strict=False)
    _check_blocks(jac, x, x)
    assert float(jac.abs().sum()) == 0.0

    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function is independent of input 0."):
        AF.jacobian(_cut_off, x, strict=True)
    jac = AF.jacobian(_cut_off, x, strict=False)
    _check_blocks(jac, x, x)
    assert float(jac.abs().sum()) == 0.0

    x.requires_grad_()
    with pytest.raises(RuntimeError, match="jacobian of the user-provided function is independent of input 0."):
        AF.jacobian(lambda a: a.clone(), x, create_graph=True, strict=True)
    jac = AF.jacobian(lambda a: a.clone(), x, create_graph=True, strict=False)
    _check_blocks(jac, x, x)
    np.testing.assert_allclose(_np(jac), np.eye(4))


def test_jacobian_output():
    def exp_rows(m):
        return m.exp().sum(dim=1)

    mat = _data(4, 4)
    jac = AF.jacobian(exp_rows, mat)
    _check_blocks(jac, exp_rows(mat), mat)
    assert jac.grad_fn is None

    vec = _data(4)
    jac = AF.jacobian(lambda a: a.clone(), vec)
    _check_blocks(jac, vec, vec)
    assert jac.grad_fn is None
    np.testing.assert_allclose(_np(jac), np.eye(4))

    def mixed(a, b):
        return (a + b.exp()).sum(dim=1)

    pair = (_data(4, 4), _data(4, 4))
    jac = AF.jacobian(mixed, pair)
    _check_blocks(jac, mixed(*pair), pair)
    assert jac[0].grad_fn is None and jac[1].grad_fn is None


def test_jacobian_scalar():
    mat = _data(4, 4)
    _check_like(AF.jacobian(lambda m: m.sum(), mat), mat)
    jac = AF.jacobian(lambda s: s.unsqueeze(0).repeat(4), _data())
    assert tuple(jac.shape) == (4,)


def test_jacobian_create_graph():
    def exp_rows(m):
        return m.exp().sum(dim=1)

    mat = _double(4, 4)
    jac = AF.jacobian(exp_rows, mat, create_graph=True)
    _check_blocks(jac, exp_rows(mat), mat)
    assert jac.grad_fn is not None
    assert gradcheck(lambda m: AF.jacobian(exp_rows, m, create_graph=True), mat)
    assert gradgradcheck(lambda m: AF.jacobian(exp_rows, m, create_graph=True), mat)

    def exp_sum_rows(a, b):
        return (a + b).exp().sum(dim=1)

    pair = (_double(4, 4), _double(4, 4))
    jac = AF.jacobian(exp_sum_rows, pair, create_graph=True)
    _check_blocks(jac, exp_sum_rows(*pair), pair)
    assert jac[0].grad_fn is not None and jac[1].grad_fn is not None
    assert gradcheck(lambda *p: AF.jacobian(exp_sum_rows, p, create_graph=True), pair)
    assert gradgradcheck(lambda *p: AF.jacobian(exp_sum_rows, p, create_graph=True), pair)

    def composed(a, b):
        a = a.cos()
        ja, jb = AF.jacobian(exp_sum_rows, (a, b), create_graph=True)
        return ja.exp().sum() + jb.exp().sum() + exp_sum_rows(a, b).exp().sum() + a.exp().sum()

    assert gradcheck(composed, pair)
    assert gradgradcheck(composed, pair)


# -- hessian -----------------------------------------------------------------------------------------------------

def test_hessian_err_check():
    x = _data(4)
    with pytest.raises(TypeError, match="The inputs given to hessian must be either a Tensor"):
        AF.hessian(_exp_head, (x, 2))
    with pytest.raises(TypeError, match="The outputs of the user-provided function given to hessian must"):
        AF.hessian(_with_a_string, x)
    with pytest.raises(RuntimeError,
                       match="The Tensor returned by the function given to hessian should contain a single element"):
        AF.hessian(_first3_times3, x)
    with pytest.raises(RuntimeError, match="The function given to hessian should return a single Tensor"):
        AF.hessian(lambda a: (_first3_times3(a), _first3_times3(a)), x)
    _check_blocks(AF.hessian(_exp_head, x), x, x)

    pair = (_data(4), _data(5))
    _check_blocks(AF.hessian(_prod_heads, pair), pair, pair)


def _linear_sum(a):
    return (3 * a).sum()


def test_hessian_err_check_strict():
    x = _data(4)
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function does not require gradients."):
        AF.hessian(lambda a: a.detach().sum(), x, strict=True)
    with pytest.raises(RuntimeError, match="jacobian of the user-provided function with respect to input 0"):
        AF.hessian(lambda a: _cut_off(a).sum(), x, strict=True)
    with pytest.raises(RuntimeError, match="jacobian of the user-provided function with respect to input 0 is"):
        AF.hessian(_linear_sum, x, strict=True)
    for fn in (lambda a: a.detach().sum(), lambda a: _cut_off(a).sum(), _linear_sum):
        hess = AF.hessian(fn, x, strict=False)
        _check_blocks(hess, x, x)
        assert float(hess.abs().sum()) == 0.0


def test_hessian_output():
    mat = _data(2, 2)
    hess = AF.hessian(lambda m: m.pow(3).sum(), mat)
    _check_blocks(hess, mat, mat)
    assert hess.grad_fn is None

    pair = (_data(2, 2), _data(2, 2))
    hess = AF.hessian(lambda a, b: (a + b).pow(3).sum(), pair)
    _check_blocks(hess, pair, pair)
    assert all(block.grad_fn is None for line in hess for block in line)


def test_hessian_scalar():
    mat = _data(4, 4)
    _check_blocks(AF.hessian(lambda m: m.sum(), mat), mat, mat)
    point = _data()
    _check_like(AF.hessian(lambda m: m.sum(), point), point)
    # a one-element output of any shape is accepted
    _check_blocks(AF.hessian(lambda m: m.sum().view(1, 1, 1), mat), mat, mat)


def test_hessian_create_graph():
    def cubes(m):
        return m.pow(3).sum()

    mat = _double(2, 2)
    hess = AF.hessian(cubes, mat, create_graph=True)
    _check_blocks(hess, mat, mat)
    assert hess.grad_fn is not None
    assert gradcheck(lambda m: AF.hessian(cubes, m, create_graph=True), mat)
    assert gradgradcheck(lambda m: AF.hessian(cubes, m, create_graph=True), mat)

    def sum_cubes(a, b):
        return (a + b).pow(3).sum()

    def flat_hessian(*p):
        return tuple(block for line in AF.hessian(sum_cubes, p, create_graph=True) for block in line)

    pair = (_double(2, 2), _double(2, 2))
    hess = AF.hessian(sum_cubes, pair, create_graph=True)
    _check_blocks(hess, pair, pair)
    assert all(block.grad_fn is not None for line in hess for block in line)
    assert gradcheck(flat_hessian, pair)
    assert gradgradcheck(flat_hessian, pair)

    def composed(a, b):
        a = a.cos()
        total = sum(block.cos().sum() for line in AF.hessian(sum_cubes, (a, b), create_graph=True)
                    for block in line)
        return total + a.cos().sum() + b.cos().sum()

    assert gradcheck(composed, pair)
    assert gradgradcheck(composed, pair)


# -- vhp and hvp -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("op", ["vhp", "hvp"])
def test_vhp_hvp_err_check(op):
    """One torch test per op (test_vhp_err_check, test_hvp_err_check)."""
    fn = getattr(AF, op)
    x, v = _data(4), _data(4)
    with pytest.raises(TypeError, match=f"The inputs given to {op} must be either a Tensor"):
        fn(_exp_head, (x, 2), v)
    with pytest.raises(TypeError, match=f"The outputs of the user-provided function given to {op} must"):
        fn(_with_a_string, x, v)
    with pytest.raises(RuntimeError,
                       match=f"The Tensor returned by the function given to {op} should contain a single element"):
        fn(_first3_times3, x, v)
    with pytest.raises(RuntimeError, match="v has invalid size:"):
        fn(_exp_head, x, _data(5))
    with pytest.raises(TypeError, match=f"The v given to {op} must be either a Tensor or a tuple of Tensors"):
        fn(_exp_head, x, (v, 2))
    _check_like(fn(_exp_head, x, v)[1], x)

    pair, vs = (_data(4), _data(5)), (_data(4), _data(5))
    _check_like(fn(_prod_heads, pair, vs)[1], pair)


@pytest.mark.parametrize("op", ["vhp", "hvp"])
def test_vhp_hvp_err_check_strict(op):
    """One torch test per op (test_vhp_err_check_strict, test_hvp_err_check_strict)."""
    fn = getattr(AF, op)
    x, v = _data(4), _data(4)
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function does not require gradients."):
        fn(lambda a: a.detach().sum(), x, v, strict=True)
    with pytest.raises(RuntimeError, match="The output of the user-provided function is independent of input 0"):
        fn(lambda a: _cut_off(a).sum(), x, v, strict=True)
    with pytest.raises(RuntimeError, match="jacobian of the user-provided function with respect to input 0 is"):
        fn(_linear_sum, x, v, strict=True)
    for f in (lambda a: a.detach().sum(), lambda a: _cut_off(a).sum(), _linear_sum):
        out = fn(f, x, v, strict=False)[1]
        _check_like(out, x)
        assert float(out.abs().sum()) == 0.0


@pytest.mark.parametrize("op", ["vhp", "hvp"])
def test_vhp_hvp_output(op):
    """One torch test per op (test_vhp_output, test_hvp_output)."""
    fn = getattr(AF, op)
    mat = _data(4, 4)
    val, prod = fn(_exp_head, mat, rg.ones(4, 4))
    _check_like(prod, mat)
    assert val.grad_fn is None and prod.grad_fn is None

    pair = (_data(3), _data(4))
    val, prod = fn(_exp_mix, pair, (rg.ones(3), rg.ones(4)))
    _check_like(prod, pair)
    assert val.grad_fn is None and all(p.grad_fn is None for p in prod)


@pytest.mark.parametrize("op", ["vhp", "hvp"])
def test_vhp_hvp_scalar(op):
    """One torch test per op (test_vhp_scalar, test_hvp_scalar)."""
    fn = getattr(AF, op)
    # torch's vhp test reduces with a plain sum (a zero Hessian), its hvp test with a sum of exp
    pre = (lambda m: m) if op == "vhp" else (lambda m: m.exp())
    mat = _data(4, 4)
    _check_like(fn(lambda m: pre(m).sum(), mat, rg.ones(4, 4))[1], mat)
    point = _data()
    _check_like(fn(lambda m: pre(m).sum(), point, _data())[1], point)
    _check_like(fn(lambda m: pre(m).sum(), point)[1], point)
    _check_like(fn(lambda m: pre(m).sum().view(1, 1, 1), mat, _data(4, 4))[1], mat)


@pytest.mark.parametrize("op", ["vhp", "hvp"])
def test_vhp_hvp_create_graph(op):
    """One torch test per op (test_vhp_create_graph, test_hvp_create_graph)."""
    fn = getattr(AF, op)
    mat, vec = _double(4, 4), rg.ones(4, 4, dtype=rg.double, requires_grad=True)
    val, prod = fn(_exp_head, mat, vec, create_graph=True)
    _check_like(prod, mat)
    assert val.grad_fn is not None and prod.grad_fn is not None
    assert gradcheck(lambda m, w: fn(_exp_head, m, w, create_graph=True), (mat, vec))
    assert gradgradcheck(lambda m, w: fn(_exp_head, m, w, create_graph=True), (mat, vec))

    args = (_double(3), _double(4), rg.ones(3, dtype=rg.double, requires_grad=True),
            rg.ones(4, dtype=rg.double, requires_grad=True))
    val, prod = fn(_exp_mix, args[:2], args[2:], create_graph=True)
    _check_like(prod, args[:2])
    assert val.grad_fn is not None and all(p.grad_fn is not None for p in prod)

    def products(*a):
        return fn(_exp_mix, a[:2], a[2:], create_graph=True)[1]

    assert gradcheck(products, args)
    assert gradgradcheck(products, args)

    def composed(*a):
        x, y = a[0].cos(), a[1]
        val, prod = fn(_exp_mix, (x, y), a[2:], create_graph=True)
        return val.cos() + prod[0].cos().sum() + prod[1].cos() + x.cos().sum() + y.cos()

    assert gradcheck(composed, args)
    assert gradgradcheck(composed, args)


def test_jacobian_match_vjp_jvp():
    def cubes_plus_total(a):
        return a ** 3 + a.sum()

    x, v = _data(4), _data(4)
    jac = _np(AF.jacobian(cubes_plus_total, x))
    np.testing.assert_allclose(_np(AF.jvp(cubes_plus_total, x, v)[1]), jac @ _np(v))
    np.testing.assert_allclose(_np(AF.vjp(cubes_plus_total, x, v)[1]), _np(v) @ jac)


def test_hessian_match_vhp_hvp():
    x, v = _data(4), _data(4)
    hess = _np(AF.hessian(_exp_head, x))
    np.testing.assert_allclose(_np(AF.hvp(_exp_head, x, v)[1]), hess @ _np(v))
    np.testing.assert_allclose(_np(AF.vhp(_exp_head, x, v)[1]), _np(v) @ hess)
