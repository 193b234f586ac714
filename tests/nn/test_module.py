"""rg.nn.Parameter and rg.nn.Module against torch.nn: registration through
attribute assignment, iteration order and names, errors, modes, gradients,
conversion, state dicts, repr, copies and pickling."""
import copy
import pickle
from collections import OrderedDict

import numpy as np
import pytest

import retrograd as rg
from _arrays import values  # noqa: E402


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def twin_classes(lib):
    """The same small model family written against rg or torch (lib is the
    framework module)."""
    nn = lib.nn

    class Affine(nn.Module):
        def __init__(self, n_in, n_out, bias=True):
            super().__init__()
            self.n_in, self.n_out = n_in, n_out
            self.weight = nn.Parameter(lib.zeros(n_out, n_in, dtype=lib.float64))
            if bias:
                self.bias = nn.Parameter(lib.zeros(n_out, dtype=lib.float64))
            else:
                self.register_parameter("bias", None)
            self.register_buffer("calls", lib.zeros((), dtype=lib.int64))
            self.register_buffer("scratch", lib.zeros(2, dtype=lib.float64), persistent=False)

        def forward(self, x):
            y = x @ self.weight.transpose(0, 1)
            return y + self.bias if self.bias is not None else y

        def extra_repr(self):
            return f"in_features={self.n_in}, out_features={self.n_out}, bias={self.bias is not None}"

    class Tanh(nn.Module):
        def forward(self, x):
            return lib.tanh(x)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = Affine(3, 4)
            self.act = Tanh()
            self.register_buffer("running", lib.ones(4, dtype=lib.float64))

        def forward(self, x):
            return self.act(self.fc(x))

        def extra_repr(self):
            return "first line\nsecond line"

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.block = Block()
            self.head = Affine(4, 2, bias=False)
            self.scale = nn.Parameter(lib.ones((), dtype=lib.float64))
            self.shared = self.head          # the same module under two names

        def forward(self, x):
            return self.head(self.block(x)) * self.scale

    return Affine, Tanh, Block, Net


def copy_weights(rg_mod, t_mod, torch, seed=0):
    """Give both models the same random parameter values."""
    rng = np.random.default_rng(seed)
    for (n1, p1), (n2, p2) in zip(rg_mod.named_parameters(), t_mod.named_parameters()):
        assert n1 == n2
        values = rng.standard_normal(p1.shape)
        with rg.no_grad():
            p1.copy_(rg.tensor(values))
        with torch.no_grad():
            p2.copy_(torch.tensor(values))


# -- Parameter ---------------------------------------------------------------

def test_parameter_is_a_leaf_sharing_its_data():
    arr = np.array([1.0, 2.0])
    t = rg.from_numpy(arr)
    p = rg.nn.Parameter(t)
    assert isinstance(p, rg.Tensor) and isinstance(p, rg.nn.Parameter)
    assert p.is_leaf and p.requires_grad and p.grad_fn is None
    arr[0] = 5.0                         # no copy: the parameter sees the change
    assert p.tolist() == [5.0, 2.0]
    assert not isinstance(t, rg.nn.Parameter)
    assert not isinstance(p * 2, rg.nn.Parameter)
    assert not isinstance(p.detach(), rg.nn.Parameter)


@pytest.mark.oracle
def test_parameter_shares_the_version_counter_as_torch(torch):
    for lib in (rg, torch):
        t = lib.ones(2)
        p = lib.nn.Parameter(t)
        t.add_(1)                        # an in-place change through either is seen by both
        assert p._version == t._version == 1
        with lib.no_grad():
            p.mul_(2)
        assert p._version == t._version == 2
        assert p.tolist() == t.tolist() == [4.0, 4.0]
    # so a tensor saved for backward sees an in-place change made through its Parameter
    y = rg.ones(2, requires_grad=True)
    p = rg.nn.Parameter(y)
    out = (y * y).sum()
    with rg.no_grad():
        p.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.backward()


def test_ops_on_parameters_give_plain_tensors():
    p = rg.nn.Parameter(rg.tensor([1.0, 2.0]))
    for r in (p * p, p + 1, p[0], p.detach(), p.data, p.view(2), p.reshape(2), p.clone(), p.double().exp()):
        assert type(r) is rg.Tensor
    assert p.float() is not p and p.double() is p      # an unchanged dtype returns self, as torch
    assert type(p.double()) is rg.nn.Parameter


def test_parameter_from_non_leaf_is_a_new_leaf():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    p = rg.nn.Parameter(x * 2)
    assert p.is_leaf and p.requires_grad
    (p * 3).sum().backward()
    assert p.grad.tolist() == [3.0, 3.0] and x.grad is None


def test_parameter_defaults_and_flags(torch):
    empty = rg.nn.Parameter()
    assert empty.shape == (0,) and empty.requires_grad and isinstance(empty, rg.nn.Parameter)
    assert torch.nn.Parameter().shape == (0,)
    frozen = rg.nn.Parameter(rg.tensor([1, 2]), requires_grad=False)
    assert not frozen.requires_grad and frozen.dtype == np.int64
    with rg.no_grad():                   # grad mode does not matter
        assert rg.nn.Parameter(rg.ones(1)).requires_grad


@pytest.mark.oracle
def test_parameter_errors_match_torch(torch):
    with pytest.raises(RuntimeError):
        torch.nn.Parameter(torch.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="floating point and complex"):
        rg.nn.Parameter(rg.tensor([1, 2]))
    with pytest.raises(TypeError, match="must be a Tensor, not list"):
        rg.nn.Parameter([1.0, 2.0])


@pytest.mark.oracle
def test_parameter_repr_matches_torch(torch):
    assert repr(rg.nn.Parameter(rg.tensor([1.0, 2.0]))) == repr(torch.nn.Parameter(torch.tensor([1.0, 2.0])))
    assert repr(rg.nn.Parameter(rg.tensor([1, 2]), requires_grad=False)) == \
        repr(torch.nn.Parameter(torch.tensor([1, 2]), requires_grad=False))
    assert repr(rg.nn.Parameter()) == "Parameter containing:\ntensor([], requires_grad=True)"
    assert type(rg.nn.Parameter(rg.ones(1))) is rg.nn.Parameter


def test_parameter_copies_keep_the_class():
    p = rg.nn.Parameter(rg.tensor([1.0, 2.0]))
    p.grad = rg.tensor([1.0, 1.0])
    p.note = "kept"
    shallow = copy.copy(p)
    deep = copy.deepcopy(p)
    pickled = pickle.loads(pickle.dumps(p))
    for q in (shallow, deep, pickled):
        assert type(q) is rg.nn.Parameter and q.requires_grad and q.tolist() == [1.0, 2.0]
        assert q.grad is None            # torch keeps no grad in these copies
        assert q.note == "kept"
    assert np.shares_memory(values(shallow), values(p))
    assert not np.shares_memory(values(deep), values(p))
    frozen = copy.deepcopy(rg.nn.Parameter(rg.ones(1), requires_grad=False))
    assert not frozen.requires_grad


# -- registration ------------------------------------------------------------------

@pytest.mark.oracle
def test_names_and_order_match_torch(torch):
    *_, RNet = twin_classes(rg)
    *_, TNet = twin_classes(torch)
    a, b = RNet(), TNet()

    def names(it):
        return [n for n, _ in it]
    assert names(a.named_parameters()) == names(b.named_parameters())
    assert names(a.named_parameters(remove_duplicate=False)) == names(b.named_parameters(remove_duplicate=False))
    assert names(a.named_parameters(prefix="m", recurse=False)) == names(b.named_parameters(prefix="m", recurse=False))
    assert names(a.named_buffers()) == names(b.named_buffers())
    assert names(a.named_buffers(recurse=False)) == names(b.named_buffers(recurse=False))
    assert names(a.named_modules()) == names(b.named_modules())
    assert names(a.named_modules(remove_duplicate=False)) == names(b.named_modules(remove_duplicate=False))
    assert names(a.named_children()) == names(b.named_children())
    assert list(a.state_dict()) == list(b.state_dict())
    assert list(a.state_dict(prefix="net.")) == list(b.state_dict(prefix="net."))
    assert list(a.state_dict()._metadata.items()) == list(b.state_dict()._metadata.items())
    assert len(list(a.parameters())) == len(list(b.parameters()))
    assert len(list(a.buffers())) == len(list(b.buffers()))
    assert len(list(a.children())) == len(list(b.children()))
    assert len(list(a.modules())) == len(list(b.modules()))
    assert len(list(a.modules(remove_duplicate=False))) == len(list(b.modules(remove_duplicate=False)))


def test_attribute_assignment_moves_between_registries():
    m = rg.nn.Module()
    m.x = rg.nn.Parameter(rg.ones(1))
    assert "x" in m._parameters
    m.x = None                           # a parameter name takes None
    assert m._parameters["x"] is None and m.x is None
    del m.x
    m.x = rg.nn.Module()                 # a name can change kind
    assert "x" in m._modules and "x" not in m._parameters
    m.x = rg.nn.Parameter(rg.ones(1))
    assert "x" in m._parameters and "x" not in m._modules
    m.plain = rg.ones(2)                 # a plain tensor is only an attribute
    assert "plain" in m.__dict__ and not list(m.buffers())
    m.register_buffer("buf", rg.zeros(1))
    m.buf = rg.ones(3)                   # assignment to a buffer name replaces the buffer
    assert m._buffers["buf"].shape == (3,)
    m.register_buffer("tmp", rg.zeros(1), persistent=False)
    m.tmp = rg.ones(1)                   # and keeps its persistence
    assert "tmp" in m._non_persistent_buffers_set
    del m.tmp
    assert "tmp" not in m._buffers and "tmp" not in m._non_persistent_buffers_set


def _outcome(fn):
    try:
        fn()
    except Exception as e:               # noqa: BLE001 (the class is what is compared)
        return type(e), str(e)
    return None, None


@pytest.mark.oracle
def test_registration_errors_match_torch(torch):
    def cases(lib):
        nn = lib.nn

        class Early(nn.Module):
            def __init__(self, what):
                if what == "param":
                    self.p = nn.Parameter(lib.ones(1))
                elif what == "module":
                    self.m = nn.Module()
                else:
                    self.register_buffer("b", lib.ones(1))

        def m():
            mod = nn.Module()
            mod.w = nn.Parameter(lib.ones(1))
            mod.c = nn.Module()
            mod.register_buffer("b", lib.ones(1))
            mod.attr = 3
            return mod
        x = lib.ones(1, requires_grad=True)
        return {
            "param_dot": lambda: m().register_parameter("a.b", None),
            "param_empty": lambda: m().register_parameter("", None),
            "param_exists": lambda: m().register_parameter("attr", None),
            "param_name_type": lambda: m().register_parameter(1, None),
            "param_plain_tensor": lambda: m().register_parameter("q", lib.ones(1)),
            "param_non_leaf": lambda: m().register_parameter("q", nn.Parameter(lib.ones(1)) * 2),
            "buffer_dot": lambda: m().register_buffer("a.b", None),
            "buffer_empty": lambda: m().register_buffer("", None),
            "buffer_exists": lambda: m().register_buffer("w", None),
            "buffer_not_tensor": lambda: m().register_buffer("q", [1.0]),
            "module_not_module": lambda: m().add_module("q", 3),
            "module_dot": lambda: m().add_module("a.b", None),
            "module_empty": lambda: m().add_module("", None),
            "module_exists": lambda: m().add_module("w", None),
            "assign_tensor_to_param": lambda: setattr(m(), "w", lib.ones(1)),
            "assign_int_to_module": lambda: setattr(m(), "c", 3),
            "assign_list_to_buffer": lambda: setattr(m(), "b", [1]),
            "early_param": lambda: Early("param"),
            "early_module": lambda: Early("module"),
            "early_buffer": lambda: Early("buffer"),
            "missing_attr": lambda: m().nothing,
            "forward_missing": lambda: m()(x),
            "train_not_bool": lambda: m().train(1),
            "init_args": lambda: nn.Module(3),
            "init_kwargs": lambda: nn.Module(a=3),
            "get_submodule_missing": lambda: m().get_submodule("c.d"),
            "get_submodule_not_module": lambda: m().get_submodule("w"),
            "get_parameter_not_param": lambda: m().get_parameter("b"),
            "get_parameter_missing": lambda: m().get_parameter("c.zz"),
            "get_buffer_not_buffer": lambda: m().get_buffer("w"),
        }
    rg_cases, t_cases = cases(rg), cases(torch)
    same_message = {"param_dot", "param_empty", "param_exists", "buffer_dot", "buffer_empty", "buffer_exists",
                    "module_dot", "module_empty", "module_exists", "early_param", "early_module", "early_buffer",
                    "missing_attr", "forward_missing", "train_not_bool", "init_args", "init_kwargs",
                    "get_submodule_missing", "get_submodule_not_module", "get_parameter_not_param",
                    "get_parameter_missing", "get_buffer_not_buffer", "param_name_type"}
    for name in rg_cases:
        rg_cls, rg_msg = _outcome(rg_cases[name])
        t_cls, t_msg = _outcome(t_cases[name])
        assert rg_cls is t_cls, (name, rg_msg, t_msg)
        if name in same_message:
            assert rg_msg == t_msg, name
        else:   # torch names its own types ("torch.nn.Parameter"); ours name rg's
            assert rg_msg.replace("rg.nn.", "").replace("rg.", "") == \
                t_msg.replace("torch.nn.", "").replace("torch.FloatTensor", "Tensor").replace("torch ", "rg.")\
                .replace("torch.", "").replace("rg.Tensor", "Tensor").replace("Buffer, ", ""), name


def test_get_submodule_parameter_buffer():
    *_, Net = twin_classes(rg)
    net = Net()
    assert net.get_submodule("") is net
    assert net.get_submodule("block.fc") is net.block.fc
    assert net.get_parameter("block.fc.weight") is net.block.fc.weight
    assert net.get_parameter("scale") is net.scale
    assert net.get_buffer("block.running") is net.block.running


def test_dir_lists_registered_names():
    *_, Net = twin_classes(rg)
    names = dir(Net())
    for n in ("block", "head", "scale", "shared", "forward", "training"):
        assert n in names
    assert names == sorted(names)


# -- modes, gradients, conversion -----------------------------------------------------

def test_train_eval_recurse():
    *_, Net = twin_classes(rg)
    net = Net()
    assert all(m.training for m in net.modules())
    assert net.eval() is net
    assert not any(m.training for m in net.modules())
    net.train()
    assert all(m.training for m in net.modules())
    net.block.train(False)
    assert net.training and not net.block.fc.training


def test_zero_grad_and_requires_grad():
    *_, Net = twin_classes(rg)
    net = Net()
    net(rg.ones(2, 3, dtype=rg.float64)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad(set_to_none=False)
    assert all(p.grad is not None and not values(p.grad).any() for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    assert net.requires_grad_(False) is net
    assert not any(p.requires_grad for p in net.parameters())
    net.block.requires_grad_()
    assert [n for n, p in net.named_parameters() if p.requires_grad] == ["block.fc.weight", "block.fc.bias"]


def test_to_converts_in_place_keeping_parameters():
    *_, Net = twin_classes(rg)
    net = Net()
    net(rg.ones(2, 3, dtype=rg.float64)).sum().backward()
    weight = net.block.fc.weight
    assert net.to(rg.float32) is net
    assert net.block.fc.weight is weight and weight.dtype == np.float32 and weight.grad.dtype == np.float32
    assert net.block.fc.calls.dtype == np.int64          # integer buffers keep their dtype
    assert net.block.running.dtype == np.float32
    assert isinstance(net.block.fc.weight, rg.nn.Parameter) and weight.requires_grad and weight.is_leaf
    net.double()
    assert weight.dtype == np.float64
    net.to("cpu", "float32")
    assert weight.dtype == np.float32
    net.to(rg.ones(1, dtype=rg.float64))
    assert weight.dtype == np.float64
    net.to(device="cpu", dtype=np.float16)
    assert weight.dtype == np.float16
    net.float().cpu()
    assert weight.dtype == np.float32 and str(weight.device) == "cpu"
    net.half()
    assert weight.dtype == np.float16 and net.block.fc.calls.dtype == np.int64
    with pytest.raises(TypeError, match="only accepts floating point or complex dtypes"):
        net.to(rg.int64)
    out = net.float()(rg.ones(2, 3, dtype=rg.float32))
    assert out.dtype == np.float32


@pytest.mark.oracle
def test_to_dtype_error_matches_torch(torch):
    with pytest.raises(TypeError) as t_err:
        torch.nn.Module().to(torch.int64)
    with pytest.raises(TypeError) as r_err:
        rg.nn.Module().to(rg.int64)
    assert str(r_err.value) == str(t_err.value).replace("torch.", "")


@pytest.mark.oracle
def test_apply_visits_in_torch_order(torch):
    *_, RNet = twin_classes(rg)
    *_, TNet = twin_classes(torch)
    seen_rg, seen_t = [], []
    assert RNet().apply(lambda m: seen_rg.append(type(m).__name__)) is not None
    TNet().apply(lambda m: seen_t.append(type(m).__name__))
    assert seen_rg == seen_t


# -- forward, repr ----------------------------------------------------------------------

@pytest.mark.oracle
def test_forward_and_gradients_match_torch(torch):
    *_, RNet = twin_classes(rg)
    *_, TNet = twin_classes(torch)
    a, b = RNet(), TNet()
    copy_weights(a, b, torch)
    x = np.random.default_rng(1).standard_normal((5, 3))
    ya, yb = a(rg.tensor(x)), b(torch.tensor(x))
    np.testing.assert_allclose(ya.detach().numpy(), yb.detach().numpy(), rtol=1e-12, atol=1e-12)
    ya.sum().backward()
    yb.sum().backward()
    for (n, p), (_, q) in zip(a.named_parameters(), b.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-12, atol=1e-12, err_msg=n)


@pytest.mark.oracle
def test_repr_matches_torch(torch):
    *_, RNet = twin_classes(rg)
    *_, TNet = twin_classes(torch)
    assert repr(RNet()) == repr(TNet())
    assert repr(rg.nn.Module()) == repr(torch.nn.Module()) == "Module()"
    Affine = twin_classes(rg)[0]
    assert repr(Affine(2, 3)) == "Affine(in_features=2, out_features=3, bias=True)"


# -- state dicts -----------------------------------------------------------------------------

def test_state_dict_is_detached_and_shares_memory():
    *_, Net = twin_classes(rg)
    net = Net()
    sd = net.state_dict()
    assert isinstance(sd, OrderedDict)
    w = sd["block.fc.weight"]
    assert not w.requires_grad and w.grad_fn is None and not isinstance(w, rg.nn.Parameter)
    assert np.shares_memory(values(w), values(net.block.fc.weight))
    assert "block.fc.scratch" not in sd                     # non-persistent buffer
    kept = net.state_dict(keep_vars=True)
    assert kept["block.fc.weight"] is net.block.fc.weight
    dest = {}
    assert net.state_dict(destination=dest) is dest and list(dest) == list(sd)
    with pytest.warns(FutureWarning, match="Positional args are being deprecated"):
        old_style = net.state_dict(None, "m.", True)
    assert list(old_style) == ["m." + k for k in sd] and old_style["m.scale"] is net.scale


def test_load_state_dict_round_trip_copies_in_place():
    *_, Net = twin_classes(rg)
    a, b = Net(), Net()
    with rg.no_grad():
        for i, p in enumerate(a.parameters()):
            p.fill_(i + 1.0)
        a.block.running.fill_(7.0)
    weight = b.block.fc.weight
    result = b.load_state_dict(a.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert repr(result) == "<All keys matched successfully>"
    assert b.block.fc.weight is weight                      # copied into, not replaced
    for (n, p), (_, q) in zip(a.state_dict().items(), b.state_dict().items()):
        assert np.array_equal(values(p), values(q)), n
    assert weight.requires_grad and weight.is_leaf


def test_load_state_dict_assign_replaces_tensors():
    *_, Net = twin_classes(rg)
    net = Net()
    net.block.fc.weight.requires_grad_(False)
    new = {k: rg.ones(v.shape, dtype=v.dtype) for k, v in net.state_dict().items()}
    net.load_state_dict(new, assign=True)
    assert isinstance(net.block.fc.weight, rg.nn.Parameter)
    assert not net.block.fc.weight.requires_grad and net.scale.requires_grad
    assert np.shares_memory(values(net.block.running), values(new["block.running"]))


def test_load_state_dict_accepts_one_element_vector_for_scalar():
    *_, Net = twin_classes(rg)
    net = Net()
    sd = net.state_dict()
    sd["scale"] = rg.tensor([4.0])
    net.load_state_dict(sd)
    assert net.scale.item() == 4.0 and net.scale.shape == ()


@pytest.mark.oracle
def test_load_state_dict_errors_match_torch(torch):
    *_, RNet = twin_classes(rg)
    *_, TNet = twin_classes(torch)

    def variants(sd, lib):
        out = {}
        missing = OrderedDict(sd)
        del missing["block.fc.bias"], missing["scale"]
        out["missing"] = missing
        extra = OrderedDict(sd)
        extra["block.fc.nope"] = lib.ones(1)
        extra["ghost.weight"] = lib.ones(1)
        extra["head.bias"] = lib.ones(2)            # registered as None: unexpected
        out["unexpected"] = extra
        both = OrderedDict(missing)
        both["zzz"] = lib.ones(1)
        out["both"] = both
        return out
    rv, tv = variants(RNet().state_dict(), rg), variants(TNet().state_dict(), torch)
    for name in rv:
        with pytest.raises(RuntimeError) as r_err:
            RNet().load_state_dict(rv[name])
        with pytest.raises(RuntimeError) as t_err:
            TNet().load_state_dict(tv[name])
        assert str(r_err.value) == str(t_err.value), name
        r_keys = RNet().load_state_dict(rv[name], strict=False)
        t_keys = TNet().load_state_dict(tv[name], strict=False)
        assert r_keys == tuple(t_keys) and repr(r_keys) == repr(t_keys), name


@pytest.mark.oracle
def test_load_state_dict_size_mismatch_lists_like_torch(torch):
    *_, RNet = twin_classes(rg)
    *_, TNet = twin_classes(torch)
    rsd, tsd = RNet().state_dict(), TNet().state_dict()
    rsd["block.fc.weight"], tsd["block.fc.weight"] = rg.zeros(5, 3), torch.zeros(5, 3)
    rsd["head.weight"], tsd["head.weight"] = rg.zeros(1), torch.zeros(1)
    del rsd["scale"], tsd["scale"]
    with pytest.raises(RuntimeError) as r_err:
        RNet().load_state_dict(rsd)
    with pytest.raises(RuntimeError) as t_err:
        TNet().load_state_dict(tsd)
    # torch writes shapes as torch.Size([5, 3]); retrograd's are tuples (5, 3)
    t_msg = str(t_err.value)
    for shape in ("[5, 3]", "[4, 3]", "[1]", "[2, 4]"):
        t_msg = t_msg.replace(f"torch.Size({shape})", "(" + shape[1:-1] + ("," if "," not in shape else "") + ")")
    assert str(r_err.value) == t_msg
    with pytest.raises(RuntimeError, match="size mismatch"):
        RNet().load_state_dict(rsd, strict=False)      # size mismatches raise even when not strict


def test_load_state_dict_rejects_non_mapping_and_non_tensor():
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        rg.nn.Module().load_state_dict([("a", 1)])
    m = rg.nn.Module()
    m.w = rg.nn.Parameter(rg.ones(1))
    with pytest.raises(RuntimeError, match='While copying the parameter named "w", expected rg.Tensor'):
        m.load_state_dict({"w": [1.0]})


def test_extra_state_round_trip():
    class Counter(rg.nn.Module):
        def __init__(self):
            super().__init__()
            self.n = 0

        def get_extra_state(self):
            return {"n": self.n}

        def set_extra_state(self, state):
            self.n = state["n"]
    outer = rg.nn.Module()
    outer.c = Counter()
    outer.c.n = 5
    sd = outer.state_dict()
    assert list(sd) == ["c._extra_state"]
    fresh = rg.nn.Module()
    fresh.c = Counter()
    fresh.load_state_dict(sd)
    assert fresh.c.n == 5
    with pytest.raises(RuntimeError, match='Missing key.*"c._extra_state"'):
        fresh.load_state_dict({})
    with pytest.raises(RuntimeError, match='Unexpected key.*"_extra_state"'):
        rg.nn.Module().load_state_dict({"_extra_state": 1})


# -- copies -------------------------------------------------------------------------------------

# pickle finds classes by their qualified name: the rg twins as module globals
for _cls in twin_classes(rg):
    _cls.__qualname__ = "_Rg" + _cls.__name__
    globals()[_cls.__qualname__] = _cls


@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_module_copies_are_independent(how):
    Net = _RgNet  # noqa: F821 (defined just above)
    net = Net()
    with rg.no_grad():
        net.block.fc.weight.fill_(0.5)
    twin = copy.deepcopy(net) if how == "deepcopy" else pickle.loads(pickle.dumps(net))
    assert type(twin) is Net and repr(twin) == repr(net)
    assert list(twin.state_dict()) == list(net.state_dict())
    assert twin.shared is twin.head                         # sharing survives
    assert type(twin.block.fc.weight) is rg.nn.Parameter
    x = rg.ones(2, 3, dtype=rg.float64)
    assert np.array_equal(twin(x).detach().numpy(), net(x).detach().numpy())
    with rg.no_grad():
        twin.block.fc.weight.fill_(2.0)
    assert net.block.fc.weight.tolist()[0][0] == 0.5


# -- with the library's layers ----------------------------------------------------------------

def _cnn(lib):
    nn = lib.nn
    return nn.Sequential(OrderedDict([
        ("features", nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2))),
        ("flatten", nn.Flatten()),
        ("heads", nn.ModuleList([nn.Linear(4 * 4 * 4, 10), nn.Linear(4 * 4 * 4, 10)])),
        ("drop", nn.Dropout(0.5)),
    ]))


@pytest.mark.oracle
def test_library_layers_load_torch_weights_and_match(torch):
    needed = ("Conv2d", "BatchNorm2d", "ReLU", "MaxPool2d", "Flatten", "Linear", "Dropout")
    if not all(hasattr(rg.nn, n) for n in needed):
        pytest.skip("the layers of rg.nn are not all there yet")
    torch.manual_seed(0)
    t_model = _cnn(torch).double()
    r_model = _cnn(rg).double()
    assert repr(r_model) == repr(t_model)
    assert list(r_model.state_dict()) == list(t_model.state_dict())
    assert [n for n, _ in r_model.named_parameters()] == [n for n, _ in t_model.named_parameters()]
    assert [n for n, _ in r_model.named_buffers()] == [n for n, _ in t_model.named_buffers()]
    # torch's trained-looking state, moved over through NumPy
    with torch.no_grad():
        t_model.features[1].running_mean.uniform_(-1, 1)
        t_model.features[1].running_var.uniform_(0.5, 2)
    sd = OrderedDict((k, rg.tensor(v.numpy().copy())) for k, v in t_model.state_dict().items())
    assert repr(r_model.load_state_dict(sd)) == "<All keys matched successfully>"
    r_model.eval()
    t_model.eval()
    x = np.random.default_rng(0).standard_normal((2, 1, 8, 8))
    rx = r_model.flatten(r_model.features(rg.tensor(x)))
    tx = t_model.flatten(t_model.features(torch.tensor(x)))
    for rh, th in zip(r_model.heads, t_model.heads):
        np.testing.assert_allclose(rh(rx).detach().numpy(), th(tx).detach().numpy(), rtol=1e-10, atol=1e-12)


def test_on_cuda_with_the_cpu_stand_in_for_cupy(run_python):
    """Module.cuda()/to(), Parameter, clipping and vectors on CUDA tensors,
    run against tests/cuda/fake_cupy (CuPy's rules on the CPU)."""
    import pathlib
    fake = pathlib.Path(__file__).resolve().parents[1] / "cuda" / "fake_cupy"
    done = run_python("""
        import numpy as np
        import retrograd as rg
        p = rg.nn.Parameter(rg.tensor([1.0, 2.0], device="cuda"))
        assert str(p.device) == "cuda:0" and p.requires_grad and p.is_leaf
        m = rg.nn.Module()
        m.w = rg.nn.Parameter(rg.ones(2))
        m.register_buffer("n", rg.zeros((), dtype=rg.int64))
        (m.w * 2).sum().backward()
        w = m.w
        m.cuda()
        assert m.w is w and str(w.device) == "cuda:0" and str(w.grad.device) == "cuda:0"
        assert str(m.n.device) == "cuda:0" and m.n.dtype == np.int64
        m.to("cuda:0", rg.float32)
        assert w.dtype == np.float32
        w.grad = rg.ones(2, device="cuda", dtype=rg.float32) * 10
        total = rg.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
        assert str(total.device) == "cuda:0" and abs(total.item() - 200 ** 0.5) < 1e-4
        assert abs(w.grad.cpu().sum().item() - 2 ** 0.5) < 1e-5
        rg.nn.utils.clip_grad_value_(m.parameters(), 0.5)
        vec = rg.nn.utils.parameters_to_vector(m.parameters())
        assert str(vec.device) == "cuda:0"
        rg.nn.utils.vector_to_parameters(vec * 3, m.parameters())
        assert w.cpu().tolist() == [3.0, 3.0] and str(w.device) == "cuda:0"
        m.cpu()
        assert str(w.device) == "cpu" and str(m.n.device) == "cpu"
        print("ok")
    """, env={"PYTHONPATH": str(fake)})
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stderr
