"""rg.save / rg.load in torch's zip format.
Round trips of dtypes, shapes, devices and flags; nested containers;
modules' and optimizer-like state dicts; weights-only loading and its
allow-list; the first format's files (.npz with a JSON manifest) still load.
Exchange with torch itself is in tests/oracle/test_torch_files.py."""
import io
import json
import math
import pickle
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import retrograd as rg

DTYPES = ["bool", "int8", "uint8", "int16", "int32", "int64", "uint64", "float16", "float32", "float64",
          "complex64", "complex128"]


def round_trip(obj, **load_kwargs):
    buf = io.BytesIO()
    rg.save(obj, buf)
    buf.seek(0)
    return rg.load(buf, **load_kwargs)


def assert_same_tensor(a, b):
    assert type(a) is type(b)
    assert a.dtype == b.dtype and a.shape == b.shape and str(a.device) == str(b.device)
    assert a.requires_grad == b.requires_grad and a.is_leaf
    np.testing.assert_array_equal(np.asarray(a.detach()), np.asarray(b.detach()))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 0, 4), (2, 3)])
def test_tensor_round_trip_keeps_dtype_and_shape(dtype, shape):
    rng = np.random.default_rng(0)
    values = (rng.standard_normal(shape) * 10).astype(dtype)
    if np.dtype(dtype).kind == "c":
        values = values + 1j * rng.standard_normal(shape).astype(dtype)
    t = rg.tensor(values)
    back = round_trip(t)
    assert_same_tensor(back, t)


def test_requires_grad_non_leaf_and_views():
    x = rg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2                        # a non-leaf: saved as a leaf that requires grad (torch)
    v = x.detach()[1:]               # a view: saved as its own values
    back = round_trip({"x": x, "y": y, "v": v, "plain": rg.ones(2)})
    assert back["x"].requires_grad and back["x"].is_leaf
    assert back["y"].requires_grad and back["y"].is_leaf and back["y"].tolist() == [2.0, 4.0, 6.0]
    assert back["v"].tolist() == [2.0, 3.0] and not back["v"].requires_grad
    assert not back["plain"].requires_grad
    assert x.grad is None and back["x"].grad is None


def test_parameters_stay_parameters():
    p = rg.nn.Parameter(rg.tensor([1.0, 2.0]))
    frozen = rg.nn.Parameter(rg.tensor([3.0]), requires_grad=False)
    back = round_trip([p, frozen])
    assert isinstance(back[0], rg.nn.Parameter) and back[0].requires_grad
    assert isinstance(back[1], rg.nn.Parameter) and not back[1].requires_grad
    assert back[0].tolist() == [1.0, 2.0]


def test_shared_tensor_loads_as_one_object():
    t = rg.ones(3)
    back = round_trip({"a": t, "b": [t, rg.ones(3)]})
    assert back["a"] is back["b"][0] and back["a"] is not back["b"][1]


def test_nested_containers_and_scalars():
    obj = OrderedDict([
        ("ints", [0, -7, 2 ** 70, True, False]),
        ("floats", (1.5, -0.0, float("inf"), float("-inf"), 1e-310, 0.1 + 0.2)),
        ("complex", 1 - 2.5j),
        ("text", "héllo\nworld"),
        ("none", None),
        ("empty", ([], (), {}, OrderedDict())),
        ("array", np.arange(6, dtype=np.int16).reshape(2, 3)),
        ("np_scalars", [np.float32(1.25), np.int64(-3), np.bool_(True), np.complex64(1 + 1j)]),
        ("nested", {"a": {"b": [{"c": rg.tensor([1, 2])}]}}),
        ("keys", {1: "int", 2.5: "float", None: "none", False: "bool", (1, "x"): "tuple", "s": "str"}),
    ])
    back = round_trip(obj)
    assert type(back) is OrderedDict and list(back) == list(obj)
    assert back["ints"] == obj["ints"] and [type(v) for v in back["ints"]] == [int, int, int, bool, bool]
    assert type(back["floats"]) is tuple
    for a, b in zip(back["floats"], obj["floats"]):
        assert a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    assert back["complex"] == obj["complex"] and back["text"] == obj["text"] and back["none"] is None
    assert back["empty"] == ([], (), {}, OrderedDict()) and type(back["empty"][3]) is OrderedDict
    assert back["array"].dtype == np.int16 and np.array_equal(back["array"], obj["array"])
    assert [type(v) for v in back["np_scalars"]] == [type(v) for v in obj["np_scalars"]]
    assert back["np_scalars"] == obj["np_scalars"]
    assert back["nested"]["a"]["b"][0]["c"].tolist() == [1, 2]
    assert back["keys"] == obj["keys"] and list(back["keys"]) == list(obj["keys"])
    nan = round_trip([float("nan")])[0]
    assert math.isnan(nan)


def _model():
    class Net(rg.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = rg.nn.Module()
            self.inner.weight = rg.nn.Parameter(rg.tensor(np.arange(6.0).reshape(2, 3), dtype=rg.float32))
            self.inner.register_buffer("steps", rg.tensor(5))
            self.bias = rg.nn.Parameter(rg.tensor([0.5, -0.5]))
            self.register_buffer("flags", rg.tensor([True, False]))
    return Net()


def test_module_state_dict_round_trips_exactly(tmp_path):
    net = _model()
    sd = net.state_dict()
    path = tmp_path / "model.pt"
    rg.save(sd, path)
    assert path.exists() and not (tmp_path / "model.pt.npz").exists()   # written as named
    back = rg.load(path)
    assert type(back) is OrderedDict and list(back) == list(sd)
    for k in sd:
        assert_same_tensor(back[k], sd[k])
    assert back._metadata == sd._metadata
    fresh = _model()
    with rg.no_grad():
        for p in fresh.parameters():
            p.zero_()
    assert repr(fresh.load_state_dict(back)) == "<All keys matched successfully>"
    for k, v in fresh.state_dict().items():
        assert_same_tensor(v, sd[k])
    rg.save(sd, str(tmp_path / "as_str"))
    assert list(rg.load(str(tmp_path / "as_str"))) == list(sd)


def test_optimizer_like_state_dict_round_trips_exactly():
    state = {
        "state": {
            0: {"step": rg.tensor(10.0), "exp_avg": rg.tensor([0.1, 0.2]), "exp_avg_sq": rg.tensor([1e-3, 2e-3])},
            1: {"step": rg.tensor(10.0), "momentum_buffer": None},
        },
        "param_groups": [
            {"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0, "amsgrad": False,
             "maximize": False, "foreach": None, "capturable": False, "differentiable": False,
             "fused": None, "params": [0, 1]},
        ],
    }
    back = round_trip(state)
    assert list(back) == ["state", "param_groups"] and list(back["state"]) == [0, 1]
    for k, v in state["state"][0].items():
        assert_same_tensor(back["state"][0][k], v)
    assert back["state"][1]["momentum_buffer"] is None
    assert back["param_groups"] == state["param_groups"]
    assert type(back["param_groups"][0]["betas"]) is tuple


def test_file_object_and_weights_only_flag(tmp_path):
    path = tmp_path / "f.bin"
    with open(path, "wb") as fh:
        rg.save({"x": rg.tensor([1.0])}, fh)
    with open(path, "rb") as fh:
        a = rg.load(fh)
    b = rg.load(path, weights_only=False)
    assert a["x"].tolist() == b["x"].tolist() == [1.0]


def test_the_file_is_torchs_zip_layout(tmp_path):
    path = tmp_path / "m.pt"
    rg.save({"w": rg.tensor([1.0, 2.0], dtype=rg.float32, requires_grad=True)}, path)
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
        assert names[0] == "archive/data.pkl" and "archive/data/0" in names
        assert z.read("archive/byteorder") == b"little" and z.read("archive/version") == b"3\n"
        info = z.getinfo("archive/data/0")
        assert np.frombuffer(z.read(info), dtype="<f4").tolist() == [1.0, 2.0]
        body = z.read("archive/data.pkl")
    assert b"torch._utils\n_rebuild_tensor_v2" in body and b"torch\nFloatStorage" in body
    # the storage starts at a multiple of 64 bytes of the file (torch memory-maps it)
    raw = path.read_bytes()
    start = info.header_offset + 30 + int.from_bytes(raw[info.header_offset + 26:info.header_offset + 28], "little") \
        + int.from_bytes(raw[info.header_offset + 28:info.header_offset + 30], "little")
    assert start % 64 == 0 and np.frombuffer(raw[start:start + 8], dtype="<f4").tolist() == [1.0, 2.0]


def test_views_share_their_storage_again():
    base = rg.arange(12.0).reshape(3, 4)
    back = round_trip({"base": base, "rows": base[1:], "cols": base[:, ::2], "t": base.t()})
    back["base"][1, 0] = 100.0
    assert back["rows"][0, 0].item() == 100.0 and back["cols"][1, 0].item() == 100.0
    assert back["t"][0, 1].item() == 100.0
    assert back["cols"].tolist() == [[0.0, 2.0], [100.0, 6.0], [8.0, 10.0]]


class _Point:
    def __init__(self, x):
        self.x = x

    def __eq__(self, other):
        return isinstance(other, _Point) and other.x == self.x


def test_weights_only_refuses_other_globals_until_allowed(tmp_path):
    class Evil:
        def __reduce__(self):
            return (print, ("pickle code ran",))
    buf = io.BytesIO()
    rg.save({"x": Evil()}, buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match=r"unsupported global builtins\.print.*add_safe_globals"):
        rg.load(buf)
    buf = io.BytesIO()
    rg.save({"p": _Point(3), "t": rg.ones(1)}, buf)
    buf.seek(0)
    assert rg.serialization.get_unsafe_globals_in_checkpoint(buf) == [f"{__name__}._Point"]
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="_Point"):
        rg.load(buf)
    buf.seek(0)
    with rg.serialization.safe_globals([_Point]):
        assert rg.load(buf)["p"] == _Point(3)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError):       # the context ended
        rg.load(buf)
    rg.serialization.add_safe_globals([_Point])
    try:
        buf.seek(0)
        assert rg.load(buf)["p"] == _Point(3) and rg.serialization.get_safe_globals() == [_Point]
    finally:
        rg.serialization.clear_safe_globals()
    buf.seek(0)
    assert rg.load(buf, weights_only=False)["p"] == _Point(3)


def test_whole_modules_and_optimizers_with_weights_only_false(tmp_path):
    net = rg.nn.Sequential(rg.nn.Linear(3, 2), rg.nn.ReLU())
    opt = rg.optim.Adam(net.parameters(), lr=0.1)
    net(rg.ones(1, 3)).sum().backward()
    opt.step()
    path = tmp_path / "whole.pt"
    rg.save({"model": net, "opt": opt}, path)
    with pytest.raises(pickle.UnpicklingError, match="weights_only=False"):
        rg.load(path)
    back = rg.load(path, weights_only=False)
    model, opt2 = back["model"], back["opt"]
    assert isinstance(model[0], rg.nn.Linear) and isinstance(model[0].weight, rg.nn.Parameter)
    x = rg.randn(4, 3)
    np.testing.assert_array_equal(model(x).detach().numpy(), net(x).detach().numpy())
    # the optimizer's state refers to the loaded model's parameters
    assert opt2.param_groups[0]["params"][0] is model[0].weight
    np.testing.assert_array_equal(opt2.state[model[0].weight]["exp_avg"].numpy(),
                                  opt.state[net[0].weight]["exp_avg"].numpy())


def test_unpicklable_and_unsupported():
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        rg.save({"f": lambda x: x}, io.BytesIO())
    with pytest.raises(NotImplementedError, match="zip format"):
        rg.save({}, io.BytesIO(), _use_new_zipfile_serialization=False)
    with pytest.raises(RuntimeError, match="not a zip archive"):
        rg.load(io.BytesIO(pickle.dumps({"x": 1})))
    with pytest.raises(TypeError, match="unexpected keyword"):
        rg.load(io.BytesIO(), mystery=1)


def _legacy_file(path, manifest, **arrays):
    # retrograd's first format, as its rg.save wrote it
    np.savez(path, __manifest__=np.frombuffer(json.dumps(manifest).encode(), dtype=np.uint8), **arrays)


def test_first_format_files_still_load(tmp_path):
    path = tmp_path / "old.npz"
    _legacy_file(path, {"format": "retrograd.save", "version": 1, "root": {"type": "dict", "items": [
        [{"type": "str", "value": "w"}, {"type": "tensor", "key": "a0", "dtype": "<f4", "shape": [2],
                                        "device": "cpu", "requires_grad": True, "parameter": True}],
        [{"type": "str", "value": "step"}, {"type": "int", "value": "3"}]]}},
        a0=np.array([1.0, 2.0], dtype=np.float32))
    back = rg.load(path)
    assert isinstance(back["w"], rg.nn.Parameter) and back["w"].tolist() == [1.0, 2.0] and back["step"] == 3
    _legacy_file(path, {"format": "other", "version": 1, "root": {}})
    with pytest.raises(ValueError, match="format 'other'"):
        rg.load(path)
    _legacy_file(path, {"format": "retrograd.save", "version": 1, "root": {"type": "mystery"}})
    with pytest.raises(ValueError, match="unknown type 'mystery'"):
        rg.load(path)
    _legacy_file(path, {"format": "retrograd.save", "version": 1,
                        "root": {"type": "ndarray", "key": "a0", "dtype": "<f4", "shape": [3]}}, a0=np.zeros(3))
    with pytest.raises(ValueError, match="damaged"):
        rg.load(path)


def test_devices_and_map_location(virtual_cpu_devices):
    t = rg.tensor([1.0, 2.0], device="cpu:1", requires_grad=True)
    back = round_trip({"t": t, "c": rg.ones(1)})
    assert str(back["t"].device) == "cpu:1" and back["t"].requires_grad and back["t"].is_leaf
    assert str(back["c"].device) == "cpu"
    moved = round_trip({"t": t}, map_location="cpu")
    assert str(moved["t"].device) == "cpu"
    mapped = round_trip({"t": t, "c": rg.ones(1)}, map_location={"cpu:1": "cpu:2"})
    assert str(mapped["t"].device) == "cpu:2" and str(mapped["c"].device) == "cpu"
    dev = round_trip({"t": t}, map_location=rg.device("cpu:2"))
    assert str(dev["t"].device) == "cpu:2"
    with pytest.raises(TypeError, match="map_location"):
        round_trip({"t": t}, map_location=3)


def test_unavailable_device_says_to_use_map_location():
    buf = io.BytesIO()
    rg.save({"t": rg.ones(2)}, buf)
    # rewrite the pickle as if the tensor had been saved from a GPU
    buf.seek(0)
    with zipfile.ZipFile(buf) as z:
        records = {n: z.read(n) for n in z.namelist()}
    old, new = b"cpu", b"cuda:7"
    records["archive/data.pkl"] = records["archive/data.pkl"].replace(
        b"X" + len(old).to_bytes(4, "little") + old, b"X" + len(new).to_bytes(4, "little") + new)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for n, data in records.items():
            z.writestr(n, data)
    out.seek(0)
    with pytest.raises(RuntimeError, match="map_location='cpu'"):
        rg.load(out)
    out.seek(0)
    assert str(rg.load(out, map_location="cpu")["t"].device) == "cpu"
    out.seek(0)
    seen = []
    assert rg.load(out, map_location=lambda t, loc: seen.append(loc) or t)["t"].tolist() == [1.0, 1.0]
    assert seen == ["cuda:7"]


def test_mmap_maps_the_storages(tmp_path):
    path = tmp_path / "big.pt"
    rg.save({"a": rg.arange(1000.0), "b": rg.ones(3, dtype=rg.int64)}, path)
    back = rg.load(path, mmap=True)
    arr = back["a"].numpy()
    base = arr
    while not isinstance(base, np.memmap) and getattr(base, "base", None) is not None:
        base = base.base
    assert isinstance(base, np.memmap)
    assert back["a"][999].item() == 999.0 and back["b"].tolist() == [1, 1, 1]
    back["a"][0] = 5.0                        # copy-on-write: the file keeps its values
    assert rg.load(path)["a"][0].item() == 0.0
    with pytest.raises(ValueError, match="path"):
        rg.load(io.BytesIO(path.read_bytes()), mmap=True)


@pytest.mark.oracle
def test_torch_state_dict_keys_survive_a_round_trip():
    torch = pytest.importorskip("torch")
    tnet = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2))
    sd = OrderedDict((k, rg.tensor(v.detach().numpy().copy())) for k, v in tnet.state_dict().items())
    back = round_trip(sd)
    assert list(back) == list(tnet.state_dict())
    for k, v in tnet.state_dict().items():
        assert back[k].dtype == np.dtype(str(v.dtype).replace("torch.", ""))
        np.testing.assert_array_equal(np.asarray(back[k]), v.numpy())


def test_cuda_tensors_with_the_cpu_stand_in_for_cupy(run_python):
    """A CUDA tensor records 'cuda:0' and comes back there (or to
    map_location), run against tests/cuda/fake_cupy (CuPy's rules on the CPU)."""
    import pathlib
    fake = pathlib.Path(__file__).resolve().parent / "cuda" / "fake_cupy"
    done = run_python("""
        import io
        import retrograd as rg
        t = rg.tensor([1.0, 2.0], device="cuda", requires_grad=True)
        p = rg.nn.Parameter(rg.ones(2, device="cuda"))
        buf = io.BytesIO()
        rg.save({"t": t, "p": p, "c": rg.ones(1)}, buf)
        buf.seek(0)
        back = rg.load(buf)
        assert str(back["t"].device) == "cuda:0" and back["t"].requires_grad and back["t"].is_leaf
        assert back["t"].cpu().tolist() == [1.0, 2.0]
        assert isinstance(back["p"], rg.nn.Parameter) and str(back["p"].device) == "cuda:0"
        assert str(back["c"].device) == "cpu"
        buf.seek(0)
        assert str(rg.load(buf, map_location="cpu")["t"].device) == "cpu"
        buf.seek(0)
        mapped = rg.load(buf, map_location={"cuda:0": "cpu"})
        assert str(mapped["t"].device) == "cpu" and str(mapped["p"].device) == "cpu"
        print("ok")
    """, env={"PYTHONPATH": str(fake)})
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stderr
