"""Sequential, ModuleList and ModuleDict against torch.nn's: indexing,
slicing, editing, concatenation, registration, forward and repr."""
from collections import OrderedDict

import numpy as np
import pytest

import retrograd as rg


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def layers(lib):
    nn = lib.nn

    class Scale(nn.Module):
        def __init__(self, k):
            super().__init__()
            self.k = k
            self.w = nn.Parameter(lib.ones(1, dtype=lib.float64) * k)

        def forward(self, x):
            return x * self.w

        def extra_repr(self):
            return f"k={self.k}"

    class Shift(nn.Module):
        def forward(self, x):
            return x + 1

    return Scale, Shift


def _outcome(fn):
    try:
        return "ok", fn()
    except Exception as e:      # noqa: BLE001 (the class is compared)
        return type(e), str(e)


@pytest.mark.oracle
def test_sequential_like_torch(torch):
    def run(lib):
        Scale, Shift = layers(lib)
        nn = lib.nn
        out = {}
        seq = nn.Sequential(Scale(2), Shift(), Scale(3))
        x = lib.tensor([1.0, 2.0], dtype=lib.float64)
        out["forward"] = seq(x).tolist()
        out["len"] = len(seq)
        out["repr"] = repr(seq)
        out["index"] = [repr(seq[0]), repr(seq[-1])]
        out["slice"] = repr(seq[1:])
        out["slice_type"] = type(seq[::2]).__name__
        out["iter"] = [type(m).__name__ for m in seq]
        out["bad_index"] = _outcome(lambda: seq[3])
        out["bad_neg"] = _outcome(lambda: seq[-4])
        out["names"] = [n for n, _ in seq.named_parameters()]
        seq.append(Scale(4))
        out["append"] = repr(seq)
        seq.insert(1, Scale(5))
        seq.insert(-1, Shift())
        out["insert"] = repr(seq)
        out["insert_bad"] = _outcome(lambda: seq.insert(10, Shift()))[0]
        out["insert_not_module"] = _outcome(lambda: seq.insert(0, 3))[0]
        seq.extend([Shift(), Scale(6)])
        out["extend"] = repr(seq)
        del seq[0]
        del seq[1:3]
        out["del"] = repr(seq)
        seq[0] = Scale(7)
        out["setitem"] = repr(seq)
        out["pop"] = repr(seq.pop(1))
        out["after_pop"] = repr(seq)
        both = seq + nn.Sequential(Shift())
        out["add"] = repr(both)
        out["add_bad"] = _outcome(lambda: seq + 3)
        seq += nn.Sequential(Scale(8))
        out["iadd"] = repr(seq)
        out["mul"] = repr(nn.Sequential(Shift()) * 2)
        out["rmul"] = repr(2 * nn.Sequential(Shift()))
        out["mul_bad"] = _outcome(lambda: nn.Sequential(Shift()) * 0)[0]
        od = nn.Sequential(OrderedDict([("first", Scale(2)), ("second", Shift())]))
        out["ordered"] = repr(od)
        out["ordered_names"] = [n for n, _ in od.named_parameters()]
        out["ordered_forward"] = od(x).tolist()
        out["empty"] = (repr(nn.Sequential()), nn.Sequential()(x).tolist())
        out["dir"] = [k for k in dir(nn.Sequential(Shift())) if k.isdigit()]
        return out
    ra, tb = run(rg), run(torch)
    for key in ra:
        if key.endswith("_bad") and isinstance(ra[key], tuple):
            assert ra[key][0] is tb[key][0], key
        else:
            assert ra[key] == tb[key], key


@pytest.mark.oracle
def test_module_list_like_torch(torch):
    def run(lib):
        Scale, Shift = layers(lib)
        nn = lib.nn
        out = {}
        ml = nn.ModuleList([Scale(1), Scale(1), Scale(1), Shift(), Scale(2), Scale(2)])
        out["repr"] = repr(ml)
        out["len"] = len(ml)
        out["slice"] = repr(ml[1:3])
        out["slice_type"] = type(ml[1:3]).__name__
        out["neg"] = repr(ml[-1])
        out["bad"] = _outcome(lambda: ml[6])
        out["names"] = [n for n, _ in ml.named_parameters()]
        ml.append(Shift())
        ml.extend([Scale(3)])
        ml.insert(0, Shift())
        out["edited"] = repr(ml)
        ml[1] = Scale(9)
        del ml[2]
        del ml[-2:]
        out["deleted"] = repr(ml)
        out["pop"] = repr(ml.pop(0))
        ml += [Shift()]
        out["iadd"] = repr(ml)
        out["add"] = repr(ml + nn.ModuleList([Scale(4)]))
        out["add_type"] = type(ml + [Shift()]).__name__
        out["extend_bad"] = _outcome(lambda: ml.extend(3))
        out["append_bad"] = _outcome(lambda: ml.append(3))
        out["empty"] = repr(nn.ModuleList())
        out["nested"] = repr(nn.ModuleList([nn.Sequential(Scale(1), Shift()), nn.Sequential(Scale(1), Shift())]))
        out["dir"] = [k for k in dir(ml) if k.isdigit()]
        return out
    ra, tb = run(rg), run(torch)
    for key in ra:
        if key.endswith("_bad"):
            assert ra[key][0] is tb[key][0], key
            if key == "extend_bad":
                assert ra[key][1] == tb[key][1]
        else:
            assert ra[key] == tb[key], key


@pytest.mark.oracle
def test_module_dict_like_torch(torch):
    def run(lib):
        Scale, Shift = layers(lib)
        nn = lib.nn
        out = {}
        md = nn.ModuleDict({"b": Scale(1), "a": Shift()})
        out["keys"] = list(md.keys())
        out["iter"] = list(md)
        out["values"] = [type(v).__name__ for v in md.values()]
        out["items"] = [(k, type(v).__name__) for k, v in md.items()]
        out["contains"] = ("a" in md, "z" in md)
        out["repr"] = repr(md)
        md.update([("c", Scale(2)), ("b", Shift())])
        md.update(OrderedDict([("d", Shift())]))
        md.update(nn.ModuleDict({"e": Scale(3)}))
        out["updated"] = repr(md)
        md["f"] = Shift()
        del md["a"]
        out["pop"] = repr(md.pop("c"))
        out["after"] = list(md)
        out["names"] = [n for n, _ in md.named_parameters()]
        out["missing"] = _outcome(lambda: md["zz"])[0]
        out["update_bad"] = _outcome(lambda: md.update(3))
        out["update_elem"] = _outcome(lambda: md.update([3]))
        out["update_len"] = _outcome(lambda: md.update([("x", Shift(), 1)]))
        md.clear()
        out["cleared"] = (len(md), repr(md))
        out["len"] = len(nn.ModuleDict([("x", Shift())]))
        return out
    ra, tb = run(rg), run(torch)
    for key in ra:
        assert ra[key] == tb[key], key


def test_containers_register_children_for_training():
    Scale, Shift = layers(rg)
    model = rg.nn.Sequential(OrderedDict([
        ("blocks", rg.nn.ModuleList([Scale(2), Scale(3)])),
        ("heads", rg.nn.ModuleDict({"out": Scale(4)})),
    ]))
    assert [n for n, _ in model.named_parameters()] == ["blocks.0.w", "blocks.1.w", "heads.out.w"]
    x = rg.tensor([1.0], dtype=rg.float64)
    y = model.heads["out"](model.blocks[1](model.blocks[0](x)))
    y.sum().backward()
    assert [p.grad.item() for p in model.parameters()] == [12.0, 8.0, 6.0]
    model.eval()
    assert not model.blocks[0].training and not model.heads["out"].training
    assert np.array_equal(np.asarray(model.state_dict()["heads.out.w"]), [4.0])
