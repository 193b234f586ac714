"""ParameterList, ParameterDict, nn.Buffer and the uninitialized placeholders,
against torch: registration, names, state dicts, reprs, dict and list
methods, conversion of plain tensors, errors."""
import copy
import pickle
from collections import OrderedDict

import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.oracle

nn, tnn = rg.nn, torch.nn


def _repr_like_torch(r):
    # retrograd prints a dtype as `float32`, torch as `torch.float32` (list) or
    # `torch.FloatTensor` (dict)
    return (r.replace("torch.float32", "float32").replace("torch.float64", "float64")
            .replace("torch.FloatTensor", "float32").replace("torch.DoubleTensor", "float64"))


# --- ParameterList -------------------------------------------------------------------------------

def test_parameter_list_registers_and_wraps_like_torch():
    a, b = np.ones((2, 3)), np.zeros(4)
    pl = nn.ParameterList([rg.tensor(a), nn.Parameter(rg.tensor(b)), "x", None])
    plt = tnn.ParameterList([torch.tensor(a), tnn.Parameter(torch.tensor(b)), "x", None])
    assert len(pl) == len(plt) == 4
    assert [n for n, _ in pl.named_parameters()] == [n for n, _ in plt.named_parameters()] == ["0", "1"]
    assert list(pl.state_dict()) == list(plt.state_dict())
    assert isinstance(pl[0], nn.Parameter) and pl[0].requires_grad
    assert pl[2] == "x" and pl[3] is None and pl[-4] is pl[0]
    assert _repr_like_torch(repr(plt)) == repr(pl)
    # setting by index wraps; append / extend / += too
    f64 = {"dtype": torch.float64}
    pl[3] = rg.ones(1)
    plt[3] = torch.ones(1, **f64)
    pl.append(rg.tensor(2.0)).extend([rg.ones(2)])
    plt.append(torch.tensor(2.0, **f64)).extend([torch.ones(2, **f64)])
    pl += [rg.ones(3)]
    plt += [torch.ones(3, **f64)]
    assert [n for n, _ in pl.named_parameters()] == [n for n, _ in plt.named_parameters()]
    assert _repr_like_torch(repr(plt)) == repr(pl)
    assert all(isinstance(p, nn.Parameter) for i, p in enumerate(pl) if i != 2)
    # a slice is a new list of the same entries
    sub = pl[1:6:2]
    assert isinstance(sub, nn.ParameterList) and [s is pl[i] for i, s in zip((1, 3, 5), sub)] == [True] * 3
    assert len(pl[::-1]) == len(plt[::-1])
    assert "0" not in dir(pl)


def test_parameter_list_in_a_module_trains_and_round_trips():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.ws = nn.ParameterList([rg.ones(2) * i for i in range(1, 4)])

        def forward(self, x):
            for w in self.ws:
                x = x * w
            return x.sum()

    net = Net()
    assert [n for n, _ in net.named_parameters()] == ["ws.0", "ws.1", "ws.2"]
    net(rg.ones(2)).backward()
    np.testing.assert_allclose(np.asarray(net.ws[0].grad), [6.0, 6.0])
    opt = rg.optim.SGD(net.parameters(), lr=0.1)
    opt.step()
    np.testing.assert_allclose(np.asarray(net.ws[0].detach()), [0.4, 0.4])
    other = Net()
    other.load_state_dict(net.state_dict())
    np.testing.assert_allclose(np.asarray(other.ws[0].detach()), [0.4, 0.4])
    clone = copy.deepcopy(net)
    assert isinstance(clone.ws, nn.ParameterList) and clone.ws[0] is not net.ws[0] and len(clone.ws) == 3


def test_parameter_list_errors_like_torch():
    pl, plt = nn.ParameterList([rg.ones(1)]), tnn.ParameterList([torch.ones(1)])
    for obj in (pl, plt):
        with pytest.raises(IndexError, match="index 5 is out of range"):
            obj[5]
        with pytest.raises(IndexError, match="index -2 is out of range"):
            obj[-2] = None
        with pytest.raises(RuntimeError, match="ParameterList should not be called."):
            obj()
        with pytest.raises(TypeError, match="ParameterList.extend should be called with an iterable, but got"):
            obj.extend(3)
    with pytest.raises(TypeError, match="but got Tensor"):
        pl.extend(rg.ones(2))
    with pytest.raises(TypeError):
        pl["a"]
    with pytest.raises(RuntimeError):
        pl.append(rg.tensor([1, 2]))        # an int tensor cannot require grad


# --- ParameterDict ---------------------------------------------------------------------------------

def test_parameter_dict_registers_sorts_and_reprs_like_torch():
    a, b = np.ones(2), np.zeros((3, 1))
    pd = nn.ParameterDict({"b": rg.tensor(a), "a": nn.Parameter(rg.tensor(b))})
    pdt = tnn.ParameterDict({"b": torch.tensor(a), "a": tnn.Parameter(torch.tensor(b))})
    assert list(pd) == list(pdt) == ["a", "b"]          # a plain dict is sorted
    pd["c"], pdt["c"] = "hello", "hello"
    pd["d"], pdt["d"] = None, None
    assert _repr_like_torch(repr(pdt)) == repr(pd)
    assert [n for n, _ in pd.named_parameters()] == [n for n, _ in pdt.named_parameters()]
    assert list(pd.state_dict()) == list(pdt.state_dict())
    od = nn.ParameterDict(OrderedDict([("z", rg.ones(1)), ("y", rg.ones(1))]))
    assert list(od.keys()) == ["z", "y"] == list(tnn.ParameterDict(OrderedDict(
        [("z", torch.ones(1)), ("y", torch.ones(1))])).keys())
    pairs = nn.ParameterDict([("q", rg.ones(1)), ("p", rg.ones(1))])
    assert list(pairs) == ["q", "p"] and list(reversed(pairs)) == ["p", "q"]


def test_parameter_dict_methods_like_torch():
    pd = nn.ParameterDict({"w": rg.ones(2)})
    pdt = tnn.ParameterDict({"w": torch.ones(2)})
    for d, mk in ((pd, rg.zeros), (pdt, torch.zeros)):
        assert "w" in d and "v" not in d and d.get("v", 3) == 3
        v = d.setdefault("v", mk(1))
        assert isinstance(v, type(d["w"])) and d.setdefault("v", None) is v
        d.update([("u", mk(3))])
        d |= type(d)({"t": mk(1)})
    assert list(pd.keys()) == list(pdt.keys()) == ["w", "v", "u", "t"]
    assert [v.shape for v in pd.values()] == [tuple(v.shape) for v in pdt.values()]
    assert [k for k, _ in pd.items()] == [k for k, _ in pdt.items()]
    assert pd.popitem()[0] == pdt.popitem()[0] == "t"
    assert pd.pop("u").shape == (3,) and pdt.pop("u").shape == (3,)
    cp = pd.copy()
    assert list(cp) == ["w", "v"] and cp["w"] is pd["w"]
    merged = pd | nn.ParameterDict({"n": rg.ones(1)})
    assert list(merged) == ["w", "v", "n"] and list(pd) == ["w", "v"]
    fk = pd.fromkeys(["a", "b"], rg.ones(1))
    assert list(fk) == ["a", "b"] and fk["a"] is not fk["b"]
    fkt = pdt.fromkeys(["a", "b"], torch.ones(1))
    assert fkt["a"] is not fkt["b"]
    del pd["v"]
    assert list(pd) == ["w"] and [n for n, _ in pd.named_parameters()] == ["w"]
    pd.clear()
    assert len(pd) == 0 and list(pd.parameters()) == []


def test_parameter_dict_errors_like_torch():
    pd, pdt = nn.ParameterDict(), tnn.ParameterDict()
    for obj in (pd, pdt):
        with pytest.raises(AttributeError, match="has no attribute 'zz'"):
            obj["zz"]
        with pytest.raises(TypeError, match="not a string"):
            obj[1] = None
        with pytest.raises(TypeError, match="ParametersDict.update should be called with an iterable"):
            obj.update(3)
        with pytest.raises(ValueError, match="has length 1; 2 is required"):
            obj.update([("a",)])
        with pytest.raises(TypeError, match="should be Iterable"):
            obj.update([3])
        with pytest.raises(RuntimeError, match="ParameterDict should not be called."):
            obj(None)
        with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
            obj.pop("nothing")
    assert len(pd) == 0    # (torch records the non-string key before refusing it)
    with pytest.raises(KeyError, match="empty"):
        pd.popitem()


# --- Buffer -----------------------------------------------------------------------------------------

def test_buffer_assignment_registers_like_torch():
    m, mt = nn.Module(), tnn.Module()
    m.run = nn.Buffer(rg.zeros(2))
    mt.run = tnn.Buffer(torch.zeros(2))
    m.tmp = nn.Buffer(rg.ones(1), persistent=False)
    mt.tmp = tnn.Buffer(torch.ones(1), persistent=False)
    m.plain, mt.plain = rg.ones(1), torch.ones(1)
    assert [n for n, _ in m.named_buffers()] == [n for n, _ in mt.named_buffers()] == ["run", "tmp"]
    assert list(m.state_dict()) == list(mt.state_dict()) == ["run"]
    assert list(m.parameters()) == []
    assert isinstance(m.run, nn.Buffer) and isinstance(m.run, rg.Tensor)
    # assigning a plain tensor to a buffer's name keeps its persistence
    m.tmp = rg.zeros(3)
    mt.tmp = torch.zeros(3)
    assert list(m.state_dict()) == list(mt.state_dict()) == ["run"]
    # a Buffer replaces a plain attribute? torch refuses (the name exists), as here
    with pytest.raises(KeyError, match="attribute 'plain' already exists"):
        m.plain = nn.Buffer(rg.ones(1))
    with pytest.raises(KeyError, match="attribute 'plain' already exists"):
        mt.plain = tnn.Buffer(torch.ones(1))
    # a Buffer shares its data and keeps requires_grad
    t = rg.ones(2, requires_grad=True)
    b = nn.Buffer(t)
    assert b.requires_grad and b.is_leaf and b.persistent
    with rg.no_grad():
        b.add_(1)
    np.testing.assert_allclose(np.asarray(t.detach()), [2.0, 2.0])
    assert type(b * 2) is rg.Tensor
    with pytest.raises(TypeError, match="must be a Tensor"):
        nn.Buffer([1.0])
    assert nn.Buffer().shape == (0,)


def test_buffer_copies_pickles_and_moves_with_the_module():
    m = nn.Module()
    m.stat = nn.Buffer(rg.arange(3.0), persistent=False)
    c = copy.deepcopy(m)
    assert isinstance(c.stat, nn.Buffer) and not c.stat.persistent and c.stat is not m.stat
    p = pickle.loads(pickle.dumps(m.stat))
    assert isinstance(p, nn.Buffer) and not p.persistent and p.tolist() == [0.0, 1.0, 2.0]
    m.double()
    assert m.stat.dtype == np.float64 and [n for n, _ in m.named_buffers()] == ["stat"]
    with pytest.raises(AttributeError, match="before Module.__init__"):
        class Early(nn.Module):
            def __init__(self):
                self.b = nn.Buffer(rg.ones(1))
        Early()


# --- uninitialized placeholders --------------------------------------------------------------------------

def test_uninitialized_parameter_and_buffer_like_torch():
    w, wt = nn.UninitializedParameter(), tnn.UninitializedParameter()
    assert repr(w) == repr(wt) == "<UninitializedParameter>"
    assert repr(nn.UninitializedBuffer()) == repr(tnn.UninitializedBuffer()) == "<UninitializedBuffer>"
    for obj in (w, wt):
        with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized parameter"):
            obj.shape
    assert isinstance(w, nn.Parameter) and w.requires_grad
    assert nn.UninitializedParameter(dtype=rg.float64).dtype == np.float64
    w.materialize((2, 3))
    wt.materialize((2, 3))
    assert type(w) is nn.Parameter and w.shape == (2, 3) and w.requires_grad
    b = nn.UninitializedBuffer(dtype=rg.float64)
    assert not b.requires_grad and isinstance(b, nn.Buffer)
    b.materialize((4,), dtype=rg.float32)
    assert type(b) is nn.Buffer and b.shape == (4,) and b.dtype == np.float32
    c = copy.deepcopy(nn.UninitializedParameter(requires_grad=False))
    assert type(c) is nn.UninitializedParameter and not c.requires_grad
    d = pickle.loads(pickle.dumps(nn.UninitializedBuffer(persistent=False)))
    assert type(d) is nn.UninitializedBuffer and not d.persistent
    # converting the dtype keeps the placeholder (Module.to / double)
    u = nn.UninitializedParameter()
    assert type(u.double()) is nn.UninitializedParameter and u.double().dtype == np.float64
    with pytest.raises(RuntimeError, match="share memory"):
        u.share_memory_()
