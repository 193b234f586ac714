"""Files exchanged with torch: rg.load reads what torch.save writes (state
dicts, views, every dtype torch saves, Parameters), and torch.load, with its
default weights_only=True, reads what rg.save writes."""
import io

import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle

TORCH_DTYPES = ["float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8", "bool", "complex64",
                "complex128", "uint16", "uint32", "uint64"]


def _torch_to_bytes(obj):
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    return buf


def _rg_to_bytes(obj):
    buf = io.BytesIO()
    rg.save(obj, buf)
    buf.seek(0)
    return buf


@pytest.mark.parametrize("dtype", TORCH_DTYPES)
def test_every_torch_dtype_loads(dtype):
    t = (torch.arange(6) % 3).reshape(2, 3).to(getattr(torch, dtype))
    back = rg.load(_torch_to_bytes({"t": t}))["t"]
    assert back.dtype == np.dtype(dtype) and back.shape == (2, 3)
    np.testing.assert_array_equal(back.numpy(), t.numpy())


@pytest.mark.parametrize("dtype", TORCH_DTYPES)
def test_torch_loads_every_dtype(dtype):
    values = (np.arange(6) % 3).reshape(2, 3).astype(dtype)
    back = torch.load(_rg_to_bytes({"t": rg.tensor(values)}))["t"]
    assert str(back.dtype) == f"torch.{dtype}"
    np.testing.assert_array_equal(back.numpy(), values)


def test_a_torch_model_state_dict_loads_into_the_same_retrograd_model():
    torch.manual_seed(0)
    tnet = torch.nn.Sequential(torch.nn.Conv2d(1, 2, 3), torch.nn.BatchNorm2d(2), torch.nn.Flatten(),
                               torch.nn.Linear(8, 3))
    tnet(torch.randn(4, 1, 4, 4))                     # running stats move
    sd = rg.load(_torch_to_bytes(tnet.state_dict()))
    net = rg.nn.Sequential(rg.nn.Conv2d(1, 2, 3), rg.nn.BatchNorm2d(2), rg.nn.Flatten(), rg.nn.Linear(8, 3))
    assert repr(net.load_state_dict(sd)) == "<All keys matched successfully>"
    tnet.eval()
    net.eval()
    x = np.random.default_rng(0).standard_normal((2, 1, 4, 4)).astype(np.float32)
    np.testing.assert_allclose(net(rg.tensor(x)).detach().numpy(), tnet(torch.tensor(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)
    assert sd["1.num_batches_tracked"].dtype == np.int64


def test_a_retrograd_state_dict_loads_into_torch():
    net = rg.nn.Sequential(rg.nn.Linear(3, 4), rg.nn.LayerNorm(4))
    tnet = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.LayerNorm(4))
    loaded = torch.load(_rg_to_bytes(net.state_dict()))          # weights_only=True, torch's default
    tnet.load_state_dict(loaded)
    x = np.ones((2, 3), dtype=np.float32)
    np.testing.assert_allclose(tnet(torch.tensor(x)).detach().numpy(), net(rg.tensor(x)).detach().numpy(),
                               rtol=1e-6)


def test_views_parameters_and_flags_both_ways():
    base = torch.arange(12.0).reshape(3, 4)
    p = torch.nn.Parameter(torch.ones(2))
    obj = {"base": base, "cols": base[:, 1::2], "t": base.t(), "p": p, "g": torch.ones(1, requires_grad=True)}
    back = rg.load(_torch_to_bytes(obj))
    assert isinstance(back["p"], rg.nn.Parameter) and back["g"].requires_grad and back["g"].is_leaf
    back["base"][0, 1] = -1.0                          # views of one storage stay views
    assert back["cols"][0, 0].item() == -1.0 and back["t"][1, 0].item() == -1.0
    again = torch.load(_rg_to_bytes(back))
    assert isinstance(again["p"], torch.nn.Parameter) and again["g"].requires_grad
    again["base"][2, 3] = -2.0
    assert again["cols"][2, 1].item() == -2.0 and again["t"][3, 2].item() == -2.0


def test_torch_mmap_reads_our_aligned_storages(tmp_path):
    path = tmp_path / "aligned.pt"
    rg.save({"a": rg.arange(100.0), "b": rg.ones(7, dtype=rg.int16)}, path)
    back = torch.load(path, mmap=True)
    assert back["a"][99].item() == 99.0 and back["b"].tolist() == [1] * 7


def test_torch_objects_in_a_file_are_refused_clearly():
    buf = _torch_to_bytes({"layer": torch.nn.Linear(1, 1)})
    with pytest.raises(Exception, match="torch.nn.modules.linear.Linear|unsupported global"):
        rg.load(buf)
    buf.seek(0)
    with pytest.raises(Exception, match="state_dict"):
        rg.load(buf, weights_only=False)
