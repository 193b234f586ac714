"""DLPack: Tensor.__dlpack__/__dlpack_device__ and rg.from_dlpack, zero-copy
both ways with NumPy and torch (CUDA arrays: tests/cuda/test_cuda_dlpack.py).
Each test writes through one side and reads the other, so a hidden copy fails."""
import numpy as np
import pytest

import retrograd as rg


def test_tensor_reports_cpu_device():
    assert rg.tensor([1.0]).__dlpack_device__() == (1, 0)


def test_numpy_reads_tensor_memory():
    # NumPy before 2.2 makes every imported array read-only, so the write
    # goes through the tensor
    t = rg.tensor([1.0, 2.0, 3.0])
    a = np.from_dlpack(t)
    t[1] = 20.0
    assert a.tolist() == [1.0, 20.0, 3.0]


def test_imported_memory_is_writable_on_every_numpy():
    # rg.from_dlpack reads host capsules itself: NumPy 2.1's own import
    # would hand back a read-only array
    a = np.arange(4.0)
    t = rg.from_dlpack(a)
    t[3] = -3.0
    assert a[3] == -3.0


def test_read_only_producer_stays_read_only():
    a = np.arange(3.0)
    a.flags.writeable = False
    t = rg.from_dlpack(a)
    assert t.tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(RuntimeError, match="read-only"):
        t[0] = 1.0


def test_versioned_capsule_imports_once_and_frees_memory():
    import weakref
    a = np.arange(5.0)
    capsule = a.__dlpack__(max_version=(1, 0))
    t = rg.from_dlpack(capsule)
    t[0] = 7.0
    assert a[0] == 7.0
    with pytest.raises(BufferError, match="imported once"):
        rg.from_dlpack(capsule)
    # the producer's deleter runs when the last view dies: the NumPy array
    # it kept alive is then freed
    ref = weakref.ref(a)
    del a, capsule
    assert ref() is not None
    del t
    import gc
    gc.collect()
    assert ref() is None


def test_from_dlpack_shares_numpy_memory():
    a = np.arange(6.0).reshape(2, 3)
    t = rg.from_dlpack(a)
    assert isinstance(t, rg.Tensor) and t.is_leaf and not t.requires_grad
    assert t.device == rg.device("cpu") and t.shape == (2, 3) and t.dtype == np.float64
    t[0, 0] = -1.0
    assert a[0, 0] == -1.0


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint8, np.int32, np.int64, np.float16,
                                   np.float32, np.float64, np.complex64, np.complex128])
def test_round_trip_keeps_dtype_and_values(dtype):
    a = (np.arange(12) % 3).astype(dtype).reshape(3, 4)
    t = rg.from_dlpack(a)
    assert t.dtype == a.dtype
    back = np.from_dlpack(t)
    np.testing.assert_array_equal(back, a)
    assert np.shares_memory(back, a)


def test_views_keep_strides():
    a = np.arange(20.0).reshape(4, 5)
    t = rg.from_dlpack(a[::2, 1::2])
    np.testing.assert_array_equal(t.numpy(), a[::2, 1::2])
    t[1, 1] = 100.0
    assert a[2, 3] == 100.0


def test_zero_d_and_empty():
    assert rg.from_dlpack(np.array(3.5)).item() == 3.5
    assert rg.from_dlpack(np.zeros((0, 3))).shape == (0, 3)


def test_tensor_into_tensor_shares_memory():
    t = rg.tensor([1.0, 2.0])
    u = rg.from_dlpack(t)
    assert u is not t
    u[0] = 5.0
    assert t[0].item() == 5.0


def test_requires_grad_refuses_export():
    x = rg.tensor([1.0], requires_grad=True)
    for thing in (x, x * 2):
        with pytest.raises(RuntimeError, match="require gradient.*detach"):
            thing.__dlpack__()
        with pytest.raises(RuntimeError, match="require gradient"):
            np.from_dlpack(thing)
    # under no_grad too, as torch (the memory still belongs to a graph)
    with rg.no_grad(), pytest.raises(RuntimeError, match="require gradient"):
        x.__dlpack__()
    np.testing.assert_array_equal(np.from_dlpack(x.detach()), [1.0])


def test_non_dlpack_objects_are_a_type_error():
    for obj in ([1.0, 2.0], 3.0, "x"):
        with pytest.raises(TypeError, match="__dlpack__"):
            rg.from_dlpack(obj)


def test_unknown_device_is_refused():
    class Metal:
        def __dlpack__(self, **kwargs):
            raise AssertionError("must not be asked for its memory")

        def __dlpack_device__(self):
            return (8, 0)
    with pytest.raises(RuntimeError, match="Metal memory"):
        rg.from_dlpack(Metal())


def test_cuda_memory_without_cupy_says_what_to_install(monkeypatch):
    import sys

    class OnGpu:
        def __dlpack__(self, **kwargs):
            raise AssertionError("must not be asked for its memory")

        def __dlpack_device__(self):
            return (2, 0)
    monkeypatch.setitem(sys.modules, "cupy", None)      # import cupy -> ImportError
    with pytest.raises(RuntimeError, match="needs CuPy"):
        rg.from_dlpack(OnGpu())


def test_legacy_capsule_round_trip():
    t = rg.tensor([1.0, 2.0, 3.0])
    capsule = rg.utils.dlpack.to_dlpack(t)
    u = rg.from_dlpack(capsule)
    u[2] = 30.0
    assert t[2].item() == 30.0
    with pytest.raises(BufferError, match="once"):
        rg.from_dlpack(capsule)
    with pytest.raises(TypeError, match="Tensor"):
        rg.utils.dlpack.to_dlpack(np.ones(2))


# --- torch, both ways ---------------------------------------------------------

@pytest.mark.oracle
def test_torch_reads_tensor_memory():
    torch = pytest.importorskip("torch")
    t = rg.tensor(np.arange(6.0, dtype=np.float32).reshape(2, 3))
    tt = torch.from_dlpack(t)
    assert tt.dtype == torch.float32 and tuple(tt.shape) == (2, 3)
    tt[1, 2] = -7.0
    assert t[1, 2].item() == -7.0
    with pytest.raises(RuntimeError, match="require gradient"):
        torch.from_dlpack(rg.tensor([1.0], requires_grad=True))


@pytest.mark.oracle
def test_tensor_reads_torch_memory_and_trains():
    torch = pytest.importorskip("torch")
    tt = torch.arange(4, dtype=torch.float64)
    t = rg.from_dlpack(tt)
    t[0] = 9.0
    assert tt[0].item() == 9.0
    # the imported tensor is an ordinary leaf: it can start a graph
    w = t.requires_grad_()
    (w * w).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), 2 * tt.numpy())
    # torch's legacy capsule, and torch's strided views
    cap = torch.utils.dlpack.to_dlpack(torch.ones(2, 3, dtype=torch.int64))
    assert rg.from_dlpack(cap).tolist() == [[1, 1, 1], [1, 1, 1]]
    view = torch.arange(12.0).reshape(3, 4).t()
    np.testing.assert_array_equal(rg.from_dlpack(view).numpy(), view.numpy())
