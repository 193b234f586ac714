"""The compiled node's per-call helpers (_tracer.pyx): the arrays of its
arguments, its results wrapped as tensors (copied where they may share an
argument's memory, decided from NumPy's bases without a memory query where
the bases settle it), and its backward's gradients placed per argument."""
import numpy as np
import pytest

import retrograd as rg
import retrograd.compile
from retrograd.compile import _tracer


class _Slow:
    """A stand-in for the exact memory test that records what it was asked."""

    def __init__(self):
        self.asked = []

    def __call__(self, a, arrays):
        self.asked.append(a)
        return any(np.may_share_memory(a, b) for b in arrays)


def _wrapped(res, arrays):
    slow = _Slow()
    out = _tracer.wrap_results(tuple(res), len(res), list(arrays), None, slow)
    return [o.numpy() for o in out], slow.asked


def test_arrays_of_gives_each_tensors_own_array_and_refuses_other_objects():
    a, b = np.ones(3), np.zeros((2, 2))
    got = _tracer.arrays_of((rg.from_numpy(a), rg.from_numpy(b)))
    assert got[0] is a and got[1] is b
    with pytest.raises(TypeError):
        _tracer.arrays_of((rg.from_numpy(a), a))


def test_a_result_of_fresh_memory_is_wrapped_without_a_copy_or_a_memory_query():
    arg = np.arange(6.0)
    fresh = np.exp(arg)
    (got,), asked = _wrapped([fresh], [arg])
    assert got is fresh and asked == []


def test_a_row_of_a_block_the_program_made_is_not_copied():
    arg = np.arange(4.0)
    block = np.empty((3, 4))
    row = block[1].reshape(2, 2)
    (got,), asked = _wrapped([row], [arg])
    assert np.shares_memory(got, block) and asked == []


@pytest.mark.parametrize("make_view", [lambda a: a[1:], lambda a: a.reshape(2, 3), lambda a: a.T,
                                       lambda a: a[::2]])
def test_a_view_of_an_argument_is_copied(make_view):
    arg = np.arange(6.0)
    view = make_view(arg)
    (got,), _ = _wrapped([view], [np.zeros(2), arg])
    assert not np.shares_memory(got, arg)
    np.testing.assert_array_equal(got, view)


def test_a_view_of_the_memory_behind_an_argument_that_is_itself_a_view_is_copied():
    owner = np.arange(12.0)
    arg = owner[2:8]
    view = owner[4:6]            # the same owner, reached other than through arg
    (got,), _ = _wrapped([view], [arg])
    assert not np.shares_memory(got, owner)


def test_a_view_of_an_argument_over_a_foreign_buffer_is_copied():
    buf = bytearray(np.arange(8.0).tobytes())
    arg = np.frombuffer(buf)
    assert not isinstance(arg.base, np.ndarray)
    (got,), _ = _wrapped([arg[2:5]], [arg])
    assert not np.shares_memory(got, arg)
    np.testing.assert_array_equal(got, [2.0, 3.0, 4.0])


def test_a_base_the_bases_cannot_settle_goes_to_the_exact_test():
    # a view of memory behind a buffer that no argument reaches: the bases
    # do not tell, so the exact test decides (no copy: nothing is shared)
    other = np.frombuffer(bytearray(32))
    view = other[1:]
    (got,), asked = _wrapped([view], [np.ones(3)])
    assert asked == [view] and np.shares_memory(got, other)


def test_several_results_are_each_decided_on_their_own():
    arg = np.arange(5.0)
    fresh = arg * 2
    view = arg[:2]
    got, _ = _wrapped([fresh, view], [arg])
    assert got[0] is fresh
    assert not np.shares_memory(got[1], arg)


def test_only_the_first_n_results_are_wrapped_on_the_device_given():
    res = (np.ones(2), np.zeros(3))
    dev = rg.tensor([1.0]).device
    out = _tracer.wrap_results(res, 1, [], dev, _Slow())
    assert len(out) == 1 and out[0].device == dev and out[0].grad_fn is None


def test_wrap_grads_places_each_gradient_after_the_entry_slot_and_on_its_inputs_device():
    ts = (rg.ones(2), rg.ones(3), rg.ones(4))
    g0, g2 = np.full(2, 5.0), np.full(4, 7.0)
    out = _tracer.wrap_grads((g0, g2), (0, 2), ts)
    assert len(out) == 4 and out[0] is None and out[2] is None
    assert out[1].numpy() is g0 and out[3].numpy() is g2
    assert out[1].device == ts[0].device


def test_wrap_grads_leaves_none_for_an_input_whose_gradient_is_none():
    ts = (rg.ones(2), rg.ones(3))
    out = _tracer.wrap_grads((None, np.ones(3)), (0, 1), ts)
    assert out[1] is None and out[2] is not None


def test_a_compiled_function_returning_a_view_of_its_input_gives_memory_of_its_own():
    f = rg.compile(lambda x: x[1:], backend="numpy")
    x = rg.arange(4.0, requires_grad=True)
    f(x)
    y = f(x)                    # (the second call runs the program)
    assert f.cache_info() == {"compiled": 1, "eager": 0}
    assert not np.shares_memory(y.detach().numpy(), x.detach().numpy())
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 1.0, 1.0, 1.0])
    np.testing.assert_array_equal(y.detach().numpy(), [1.0, 2.0, 3.0])
