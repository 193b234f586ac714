"""Gradients a hook or a custom Function's backward hands back in another
dtype, shape or type: refused as torch 2.13 refuses them (never silently
cast), or cast where torch casts (a Function's floating gradient)."""
import functools

import numpy as np
import pytest

import retrograd as rg


def _leaf(dtype=np.float64):
    return rg.tensor(np.arange(1.0, 4.0).astype(dtype), requires_grad=True)


def _as(dtype):
    # a hook result of another dtype, built from the gradient it was given
    return lambda g: rg.tensor(np.asarray(g.detach().numpy()).astype(dtype))


@pytest.mark.parametrize("dtype, name", [(np.float32, "float32"), (np.int64, "int64"),
                                         (np.complex128, "complex128")])
def test_tensor_hook_changing_dtype_raises(dtype, name):
    x = _leaf()
    y = x * 2

    def my_hook(g):
        return _as(dtype)(g)
    y.register_hook(my_hook)
    with pytest.raises(RuntimeError, match=r"hook 'my_hook' has changed the type of value") as ei:
        y.sum().backward()
    assert "float64" in str(ei.value) and name in str(ei.value)
    assert x.grad is None


def test_leaf_hook_changing_dtype_raises():
    x = _leaf()
    x.register_hook(_as(np.float32))
    with pytest.raises(RuntimeError, match=r"hook '<lambda>' has changed the type of value "
                                           r"\(was float64 got float32\)"):
        (x * 2).sum().backward()
    assert x.grad is None


def test_hook_name_of_a_callable_without_name_is_unknown():
    x = _leaf()
    y = x * 2
    y.register_hook(functools.partial(lambda _unused, g: _as(np.float32)(g), 0))
    with pytest.raises(RuntimeError, match=r"hook '<unknown>' has changed the type"):
        y.sum().backward()


def test_tensor_hook_changing_shape_raises():
    x = _leaf()
    y = x * 2

    def cut(g):
        return g[:2]
    y.register_hook(cut)
    with pytest.raises(RuntimeError, match=r"hook 'cut' has changed the size of value"):
        y.sum().backward()


@pytest.mark.parametrize("bad", [3.0, (None,), np.ones(3)])
def test_tensor_hook_returning_non_tensor_raises_type_error(bad):
    x = _leaf()
    y = x * 2
    y.register_hook(lambda g: bad)
    with pytest.raises(TypeError, match=r"expected Variable, but hook returned '"
                                        + type(bad).__name__):
        y.sum().backward()


def test_tensor_hook_same_dtype_still_replaces_gradient():
    x = _leaf()
    y = x * 2
    y.register_hook(lambda g: g * 10)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [20.0, 20.0, 20.0])


def test_tensor_hook_dtype_checked_under_create_graph():
    x = _leaf()
    y = x * x
    y.register_hook(lambda g: g.to(np.float32))
    with pytest.raises(RuntimeError, match="has changed the type of value"):
        rg.autograd.grad(y.sum(), x, create_graph=True)


@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_node_prehook_changing_dtype_raises(dtype):
    x, w = _leaf(), _leaf()
    y = x * w
    y.grad_fn.register_prehook(lambda go: (_as(dtype)(go[0]),))
    with pytest.raises(RuntimeError, match="has changed the type of value"):
        y.sum().backward()
    assert x.grad is None and w.grad is None


@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_node_posthook_changing_dtype_raises(dtype):
    x, w = _leaf(), _leaf()
    y = x * w
    y.grad_fn.register_hook(lambda gi, go: (_as(dtype)(gi[0]), gi[1]))
    with pytest.raises(RuntimeError, match="has changed the type of value"):
        y.sum().backward()
    assert x.grad is None


def test_node_hooks_shape_count_and_container_rules():
    x, w = _leaf(), _leaf()

    def run(register, fn):
        y = x * w
        getattr(y.grad_fn, register)(fn)
        y.sum().backward()

    with pytest.raises(RuntimeError, match="has changed the size of value"):
        run("register_prehook", lambda go: (go[0][:2],))
    with pytest.raises(RuntimeError, match=r"has returned an incorrect number of values "
                                           r"\(got 1, but expected 2\)"):
        run("register_hook", lambda gi, go: (gi[0],))
    with pytest.raises(TypeError, match="expected tuple, but hook returned 'list'"):
        run("register_hook", lambda gi, go: [gi[0], gi[1]])
    with pytest.raises(TypeError, match="expected tuple, but hook returned 'Tensor'"):
        run("register_prehook", lambda go: go[0])
    with pytest.raises(TypeError, match="expected Variable, but hook returned 'float'"):
        run("register_hook", lambda gi, go: (3.0, gi[1]))
    # None in place of a gradient is allowed
    x.grad = None
    run("register_hook", lambda gi, go: (None, gi[1]))
    assert x.grad is None and w.grad is not None


def test_accumulate_grad_prehook_changing_dtype_raises():
    x, w = _leaf(), _leaf()
    y = x * w
    acc = y.grad_fn.next_functions[0][0]
    acc.register_prehook(lambda go: (go[0].to(np.float32),))
    with pytest.raises(RuntimeError, match="has changed the type of value"):
        y.sum().backward()


def test_post_accumulate_grad_hook_must_return_none():
    x = _leaf()
    x.register_post_accumulate_grad_hook(lambda t: t.grad)
    with pytest.raises(RuntimeError, match="post accumulate grad hooks should return None"):
        (x * 2).sum().backward()
    y = _leaf()
    y.register_post_accumulate_grad_hook(lambda t: 1)
    with pytest.raises(TypeError, match="expected Variable, but hook returned 'int'"):
        (y * 2).sum().backward()
    z = _leaf()
    seen = []
    z.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.numpy().copy()))
    (z * 2).sum().backward()
    np.testing.assert_allclose(seen[0], [2.0, 2.0, 2.0])


class _Returns(rg.autograd.Function):
    make = None

    @staticmethod
    def forward(ctx, a):
        return a * 2

    @staticmethod
    def backward(ctx, g):
        return _Returns.make(g)


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_])
def test_function_backward_real_gradient_is_cast_like_torch(dtype):
    # torch's validate_outputs casts a real gradient to the input's dtype
    _Returns.make = staticmethod(_as(dtype))
    a = _leaf()
    _Returns.apply(a).sum().backward()
    assert a.grad.dtype == np.float64
    expected = np.ones(3).astype(dtype).astype(np.float64)
    np.testing.assert_allclose(a.grad.numpy(), expected)


def test_function_backward_complex_gradient_for_real_input_raises():
    _Returns.make = staticmethod(_as(np.complex128))
    a = _leaf()
    with pytest.raises(RuntimeError, match=r"Function _ReturnsBackward returned an invalid gradient "
                                           r"at index 0 - expected dtype float64 but got complex128"):
        _Returns.apply(a).sum().backward()
    assert a.grad is None


def test_function_backward_integer_gradient_for_complex_input_raises():
    _Returns.make = staticmethod(_as(np.int64))
    a = rg.tensor(np.array([1 + 1j, 2 - 1j]), requires_grad=True)
    out = _Returns.apply(a)
    with pytest.raises(RuntimeError, match="expected dtype complex128 but got int64"):
        out.backward(rg.tensor(np.array([1 + 0j, 1 + 0j])))


def test_function_backward_wrong_shape_raises():
    _Returns.make = staticmethod(lambda g: g[:2])
    a = _leaf()
    with pytest.raises(RuntimeError, match=r"returned an invalid gradient at index 0 - got \[2\] "
                                           r"but expected shape compatible with \[3\]"):
        _Returns.apply(a).sum().backward()


def test_messages_match_torch():
    torch = pytest.importorskip("torch")
    # Same exception classes and the same leading text as torch for each case.
    cases = []
    for lib in ("torch", "rg"):
        if lib == "torch":
            x = torch.ones(3, dtype=torch.float64, requires_grad=True)
            y = x * 2
            y.register_hook(lambda g: g.float())
            run = y.sum().backward
        else:
            x = rg.tensor(np.ones(3), requires_grad=True)
            y = x * 2
            y.register_hook(lambda g: g.to(np.float32))
            run = y.sum().backward
        with pytest.raises(Exception) as ei:
            run()
        cases.append((type(ei.value), str(ei.value).split(" (was")[0]))
    assert cases[0] == cases[1]
