"""rg.optim.Optimizer's API: construction and its errors, parameter groups,
zero_grad, step (skipping, closures, version counters), hooks, state dicts,
and the optimizer step inside backward. Against torch where torch has it."""
import copy
import warnings

import numpy as np
import pytest

import retrograd as rg


def _param(values=(1.0, 2.0)):
    return rg.tensor(list(values), requires_grad=True)


# --- argument checks ---------------------------------------------------------------

BAD_ARGS = [
    ("SGD", dict(lr=-0.1), ValueError, "Invalid learning rate: -0.1"),
    ("SGD", dict(momentum=-0.5), ValueError, "Invalid momentum value: -0.5"),
    ("SGD", dict(weight_decay=-1e-3), ValueError, "Invalid weight_decay value: -0.001"),
    ("SGD", dict(nesterov=True), ValueError, "Nesterov momentum requires a momentum and zero dampening"),
    ("SGD", dict(nesterov=True, momentum=0.9, dampening=0.1), ValueError,
     "Nesterov momentum requires a momentum and zero dampening"),
    ("Adam", dict(lr=-1.0), ValueError, "Invalid learning rate: -1.0"),
    ("Adam", dict(eps=-1e-8), ValueError, "Invalid epsilon value: -1e-08"),
    ("Adam", dict(betas=(1.0, 0.999)), ValueError, "Invalid beta parameter at index 0: 1.0"),
    ("Adam", dict(betas=(0.9, -0.1)), ValueError, "Invalid beta parameter at index 1: -0.1"),
    ("Adam", dict(weight_decay=-0.1), ValueError, "Invalid weight_decay value: -0.1"),
    ("Adam", dict(betas=(0, 0.999)), ValueError, "betas must be either both floats or both Tensors"),
    ("AdamW", dict(lr=-1.0), ValueError, "Invalid learning rate: -1.0"),
    ("AdamW", dict(betas=(0.9, 1.5)), ValueError, "Invalid beta parameter at index 1: 1.5"),
    ("RMSprop", dict(lr=-0.01), ValueError, "Invalid learning rate: -0.01"),
    ("RMSprop", dict(eps=-1.0), ValueError, "Invalid epsilon value: -1.0"),
    ("RMSprop", dict(momentum=-1.0), ValueError, "Invalid momentum value: -1.0"),
    ("RMSprop", dict(weight_decay=-1.0), ValueError, "Invalid weight_decay value: -1.0"),
    ("RMSprop", dict(alpha=-0.5), ValueError, "Invalid alpha value: -0.5"),
    ("Adagrad", dict(lr=-0.01), ValueError, "Invalid learning rate: -0.01"),
    ("Adagrad", dict(lr_decay=-0.1), ValueError, "Invalid lr_decay value: -0.1"),
    ("Adagrad", dict(weight_decay=-0.1), ValueError, "Invalid weight_decay value: -0.1"),
    ("Adagrad", dict(initial_accumulator_value=-1.0), ValueError, "Invalid initial_accumulator_value value: -1.0"),
    ("Adagrad", dict(eps=-1.0), ValueError, "Invalid epsilon value: -1.0"),
]


@pytest.mark.parametrize("name, kwargs, exc, message", BAD_ARGS,
                         ids=[f"{n}-{'-'.join(k)}-{i}" for i, (n, k, _, _) in enumerate(BAD_ARGS)])
def test_bad_arguments_raise_torchs_errors(name, kwargs, exc, message):
    with pytest.raises(exc) as info:
        getattr(rg.optim, name)([_param()], **kwargs)
    assert str(info.value) == message


@pytest.mark.oracle
@pytest.mark.parametrize("name, kwargs, exc, message", BAD_ARGS,
                         ids=[f"{n}-{'-'.join(k)}-{i}" for i, (n, k, _, _) in enumerate(BAD_ARGS)])
def test_bad_arguments_raise_as_torch(name, kwargs, exc, message):
    torch = pytest.importorskip("torch")
    with pytest.raises(exc) as info:
        getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)], **kwargs)
    assert str(info.value) == message


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
def test_tensor_lr_must_have_one_element_and_one_element_works(name):
    cls = getattr(rg.optim, name)
    with pytest.raises(ValueError, match="^Tensor lr must be 1-element$"):
        cls([_param()], lr=rg.tensor([0.1, 0.2]))
    # A one-element tensor lr is read at each step: the same result as the float.
    a, b = _param(), _param()
    opt_a, opt_b = cls([a], lr=rg.tensor(0.1)), cls([b], lr=0.1)
    for _ in range(3):
        a.grad = rg.tensor([0.5, -1.0])
        b.grad = rg.tensor([0.5, -1.0])
        opt_a.step()
        opt_b.step()
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


@pytest.mark.parametrize("name, flag", [("SGD", "differentiable"), ("SGD", "fused"), ("Adam", "capturable"),
                                        ("Adam", "differentiable"), ("Adam", "fused"), ("AdamW", "fused"),
                                        ("RMSprop", "capturable"), ("RMSprop", "differentiable"),
                                        ("Adagrad", "fused"), ("Adagrad", "differentiable")])
def test_implementations_retrograd_lacks_raise_not_implemented(name, flag):
    with pytest.raises(NotImplementedError, match=flag):
        getattr(rg.optim, name)([_param()], **{flag: True})


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
def test_foreach_is_accepted_and_changes_nothing(name):
    cls = getattr(rg.optim, name)
    a, b = _param(), _param()
    opt_a, opt_b = cls([a], lr=0.1, foreach=True), cls([b], lr=0.1, foreach=False)
    assert opt_a.param_groups[0]["foreach"] is True
    for _ in range(3):
        a.grad = rg.tensor([0.5, -1.0])
        b.grad = rg.tensor([0.5, -1.0])
        opt_a.step()
        opt_b.step()
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


# --- parameters and groups -------------------------------------------------------------

def test_params_as_a_single_tensor_is_a_type_error():
    with pytest.raises(TypeError, match="^params argument given to the optimizer should be an iterable of Tensors "
                                        "or dicts, but got retrograd.Tensor$"):
        rg.optim.SGD(_param())


def test_empty_parameter_list():
    with pytest.raises(ValueError, match="^optimizer got an empty parameter list$"):
        rg.optim.SGD([])


def test_non_tensor_parameter():
    with pytest.raises(TypeError, match="^optimizer can only optimize Tensors, but one of the params is int$"):
        rg.optim.SGD([_param(), 3])


def test_non_leaf_parameter():
    x = _param()
    with pytest.raises(ValueError, match="^can't optimize a non-leaf Tensor$"):
        rg.optim.SGD([x * 2])
    y = x * 2
    y.retain_grad()    # torch accepts a non-leaf that retains its grad
    rg.optim.SGD([y])


def test_parameter_in_two_groups():
    p = _param()
    with pytest.raises(ValueError, match="^some parameters appear in more than one parameter group$"):
        rg.optim.SGD([{"params": [p]}, {"params": [p]}])
    opt = rg.optim.SGD([p])
    with pytest.raises(ValueError, match="^some parameters appear in more than one parameter group$"):
        opt.add_param_group({"params": p})
    assert len(opt.param_groups) == 1


def test_set_of_params_and_non_dict_group_are_type_errors():
    with pytest.raises(TypeError, match="ordered collections"):
        rg.optim.SGD([{"params": {_param()}}])
    opt = rg.optim.SGD([_param()])
    with pytest.raises(TypeError, match="^param_group must be a dict, but got <class 'list'>$"):
        opt.add_param_group([_param()])


def test_duplicate_parameters_in_a_group_warn():
    p = _param()
    with pytest.warns(UserWarning, match="duplicate parameters"):
        rg.optim.SGD([p, p])


def test_required_option_missing():
    from retrograd.optim.optimizer import required

    class Custom(rg.optim.Optimizer):
        def __init__(self, params, lr=required):
            super().__init__(params, {"lr": lr})

    assert repr(required) == "<required parameter>"
    with pytest.raises(ValueError, match="^parameter group didn't specify a value of required optimization "
                                         "parameter lr$"):
        Custom([_param()])
    assert Custom([_param()], lr=0.5).param_groups[0]["lr"] == 0.5


def test_add_param_group_fills_defaults_and_keeps_the_dict():
    a, b = _param(), _param()
    opt = rg.optim.Adam([a], lr=0.1)
    group = {"params": b, "lr": 0.01}
    opt.add_param_group(group)
    assert opt.param_groups[1] is group
    assert len(group["params"]) == 1 and group["params"][0] is b
    assert group["lr"] == 0.01 and group["betas"] == (0.9, 0.999) and group["amsgrad"] is False


def test_named_parameters():
    a, b = _param(), _param()
    opt = rg.optim.SGD([("a", a), ("b", b)], lr=0.1)
    assert opt.param_groups[0]["params"][0] is a
    assert opt.param_groups[0]["param_names"] == ["a", "b"]
    assert opt.state_dict()["param_groups"][0]["param_names"] == ["a", "b"]
    with pytest.raises(ValueError, match="Some param names are missing"):
        rg.optim.SGD([("a", _param()), _param()])
    with pytest.raises(ValueError, match="cannot add param group without names to the optimizer"):
        opt.add_param_group({"params": [_param()]})


def test_plain_tensors_and_parameters_of_any_dtype_work():
    p32 = rg.tensor([1.0, 2.0], dtype=rg.float32, requires_grad=True)
    opt = rg.optim.Adam([p32], lr=0.1)
    p32.grad = rg.tensor([1.0, 1.0], dtype=rg.float32)
    opt.step()
    assert p32.dtype == np.float32
    assert opt.state[p32]["exp_avg"].dtype == np.float32
    assert not opt.state[p32]["exp_avg"].requires_grad


# --- zero_grad ---------------------------------------------------------------------

def test_zero_grad_set_to_none():
    p = _param()
    (p * p).sum().backward()
    opt = rg.optim.SGD([p])
    opt.zero_grad()
    assert p.grad is None
    opt.zero_grad()     # no gradient: nothing to do


def test_zero_grad_to_zeros_keeps_the_tensor():
    p = _param()
    (p * p).sum().backward()
    g = p.grad
    rg.optim.SGD([p]).zero_grad(set_to_none=False)
    assert p.grad is g
    np.testing.assert_array_equal(g.numpy(), [0.0, 0.0])


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
def test_zero_grad_to_zeros_detaches_a_grad_with_history():
    p = _param()
    (p * p * p).sum().backward(create_graph=True)
    assert p.grad.grad_fn is not None
    rg.optim.SGD([p]).zero_grad(set_to_none=False)
    assert p.grad.grad_fn is None and not p.grad.requires_grad
    np.testing.assert_array_equal(p.grad.numpy(), [0.0, 0.0])


def test_zero_grads_move_parameters_under_momentum_none_grads_do_not():
    a, b = _param(), _param()
    opt_a, opt_b = rg.optim.SGD([a], lr=0.1, momentum=0.9), rg.optim.SGD([b], lr=0.1, momentum=0.9)
    for opt, p in ((opt_a, a), (opt_b, b)):
        p.grad = rg.tensor([1.0, 1.0])
        opt.step()
    opt_a.zero_grad(set_to_none=False)
    opt_b.zero_grad()
    before_a, before_b = a.detach().numpy().copy(), b.detach().numpy().copy()
    opt_a.step()
    opt_b.step()
    assert not np.array_equal(a.detach().numpy(), before_a)     # momentum moves it
    np.testing.assert_array_equal(b.detach().numpy(), before_b)


# --- step --------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
def test_parameters_without_grad_are_skipped(name):
    a, b = _param(), _param()
    opt = getattr(rg.optim, name)([a, b], lr=0.1, momentum=0.9) if name == "SGD" else \
        getattr(rg.optim, name)([a, b], lr=0.1)
    a.grad = rg.tensor([1.0, 1.0])
    opt.step()
    np.testing.assert_array_equal(b.detach().numpy(), [1.0, 2.0])
    assert not np.array_equal(a.detach().numpy(), [1.0, 2.0])
    if name == "Adagrad":    # as torch: state made at construction for every parameter
        assert float(opt.state[b]["step"]) == 0.0
    else:
        assert b not in opt.state


def test_update_writes_the_parameters_array_in_place():
    p = _param()
    array = p.detach().numpy()
    opt = rg.optim.Adam([p], lr=0.1)
    p.grad = rg.tensor([1.0, 1.0])
    opt.step()
    assert p.detach().numpy() is array or np.shares_memory(p.detach().numpy(), array)
    np.testing.assert_allclose(array, [0.9, 1.9])


def test_step_bumps_the_version_so_stale_graphs_refuse_backward():
    p = _param()
    y = (p * p).sum()        # saves p
    version = p._version
    p.grad = rg.tensor([1.0, 1.0])
    rg.optim.SGD([p], lr=0.1).step()
    assert p._version > version
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_step_records_no_graph_and_state_needs_no_grad():
    p = _param()
    opt = rg.optim.RMSprop([p], lr=0.1, momentum=0.9, centered=True)
    p.grad = rg.tensor([1.0, 1.0])
    opt.step()
    assert p.is_leaf and p.grad_fn is None and p.requires_grad
    assert all(not t.requires_grad for t in opt.state[p].values())


def test_closure_runs_with_grad_enabled_and_its_loss_is_returned():
    p = _param()
    opt = rg.optim.SGD([p], lr=0.1)
    calls = []

    def closure():
        calls.append(rg.is_grad_enabled())
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    with rg.no_grad():
        loss = opt.step(closure)
    assert calls == [True]
    assert float(loss.detach()) == 5.0
    np.testing.assert_allclose(p.detach().numpy(), [0.8, 1.6])
    assert opt.step() is None


def test_base_step_is_not_implemented():
    opt = rg.optim.Optimizer([_param()], {"lr": 0.1})
    with pytest.raises(NotImplementedError):
        opt.step()


def test_state_is_a_defaultdict_keyed_by_parameter():
    p = _param()
    opt = rg.optim.Adam([p])
    assert opt.state[_param()] == {}
    p.grad = rg.tensor([1.0, 1.0])
    opt.step()
    assert set(opt.state[p]) == {"step", "exp_avg", "exp_avg_sq"}
    assert isinstance(opt.state[p]["step"], rg.Tensor) and opt.state[p]["step"].shape == ()


# --- hooks -------------------------------------------------------------------------

def test_step_pre_and_post_hooks_order_args_and_removal():
    p = _param()
    opt = rg.optim.SGD([p], lr=0.1)
    calls = []
    h1 = opt.register_step_pre_hook(lambda o, args, kwargs: calls.append(("pre", o is opt, args[0] is opt)))
    h2 = opt.register_step_post_hook(lambda o, args, kwargs: calls.append(("post", o is opt, len(args))))
    p.grad = rg.tensor([1.0, 1.0])
    opt.step()
    assert calls == [("pre", True, True), ("post", True, 1)]
    h1.remove()
    h2.remove()
    opt.step()
    assert len(calls) == 2


def test_step_pre_hook_can_replace_the_arguments():
    p = _param()
    opt = rg.optim.SGD([p], lr=0.1)
    seen = []

    def closure():
        seen.append("closure")
        return 7

    opt.register_step_pre_hook(lambda o, args, kwargs: ((o,), {"closure": closure}))
    p.grad = rg.tensor([1.0, 1.0])
    assert opt.step() == 7
    assert seen == ["closure"]


def test_step_pre_hook_returning_something_else_raises():
    opt = rg.optim.SGD([_param()])
    opt.register_step_pre_hook(lambda o, args, kwargs: 3)
    with pytest.raises(RuntimeError, match="must return None or a tuple of \\(new_args, new_kwargs\\), but got 3"):
        opt.step()


def test_global_step_hooks_run_around_every_optimizer():
    from retrograd.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook
    calls = []
    h1 = register_optimizer_step_pre_hook(lambda o, a, k: calls.append(("pre", type(o).__name__)))
    h2 = register_optimizer_step_post_hook(lambda o, a, k: calls.append(("post", type(o).__name__)))
    try:
        rg.optim.SGD([_param()]).step()
        rg.optim.AdamW([_param()]).step()
    finally:
        h1.remove()
        h2.remove()
    assert calls == [("pre", "SGD"), ("post", "SGD"), ("pre", "AdamW"), ("post", "AdamW")]
    rg.optim.SGD([_param()]).step()
    assert len(calls) == 4


def test_subclass_step_runs_hooks_once():
    class MySGD(rg.optim.SGD):
        def step(self, closure=None):
            return super().step(closure)

    opt = MySGD([_param()])
    calls = []
    opt.register_step_pre_hook(lambda o, a, k: calls.append(1))
    opt.step()
    assert calls == [1]


def test_state_dict_hooks():
    opt = rg.optim.SGD([_param()], lr=0.1)
    calls = []
    opt.register_state_dict_pre_hook(lambda o: calls.append("pre"))
    opt.register_state_dict_pre_hook(lambda o: calls.append("pre-first"), prepend=True)
    opt.register_state_dict_post_hook(lambda o, sd: {**sd, "extra": 1})
    sd = opt.state_dict()
    assert calls == ["pre-first", "pre"] and sd["extra"] == 1
    order = []
    opt.register_load_state_dict_pre_hook(lambda o, sd: order.append("pre"))
    with opt.register_load_state_dict_post_hook(lambda o: order.append("post")):
        opt.load_state_dict(sd)
    opt.load_state_dict(sd)
    assert order == ["pre", "post", "pre"]


# --- state dicts -------------------------------------------------------------------

def test_state_dict_indexes_parameters_across_groups():
    a, b, c = _param(), _param(), _param()
    opt = rg.optim.SGD([{"params": [a, b]}, {"params": [c], "lr": 0.5}], lr=0.1, momentum=0.9)
    for p in (a, c):
        p.grad = rg.tensor([1.0, 1.0])
    opt.step()
    sd = opt.state_dict()
    assert [g["params"] for g in sd["param_groups"]] == [[0, 1], [2]]
    assert sorted(sd["state"]) == [0, 2]
    assert sd["state"][2] is opt.state[c]       # as torch: the state itself, not a copy
    assert "params" in opt.param_groups[0] and opt.param_groups[0]["params"][0] is a


def test_load_state_dict_checks_groups_like_torch():
    opt = rg.optim.SGD([_param(), _param()])
    with pytest.raises(ValueError, match="^loaded state dict has a different number of parameter groups$"):
        opt.load_state_dict(rg.optim.SGD([{"params": [_param()]}, {"params": [_param()]}]).state_dict())
    with pytest.raises(ValueError, match="^loaded state dict contains a parameter group that doesn't match the "
                                         "size of optimizer's group$"):
        opt.load_state_dict(rg.optim.SGD([_param()]).state_dict())


def test_load_state_dict_replaces_options_and_keeps_own_params():
    a = _param()
    opt = rg.optim.Adam([a], lr=0.5, betas=(0.5, 0.6))
    other = rg.optim.Adam([_param()])
    other.load_state_dict(opt.state_dict())
    assert other.param_groups[0]["lr"] == 0.5 and other.param_groups[0]["betas"] == (0.5, 0.6)
    assert other.param_groups[0]["params"][0] is not a


def test_load_state_dict_does_not_alias_the_saved_groups():
    opt = rg.optim.SGD([_param()], lr=0.1)
    sd = opt.state_dict()
    other = rg.optim.SGD([_param()])
    other.load_state_dict(sd)
    other.param_groups[0]["lr"] = 9.0
    assert sd["param_groups"][0]["lr"] == 0.1


def test_load_state_dict_with_a_numeric_step_makes_it_a_tensor():
    p = _param()
    opt = rg.optim.Adam([p])
    p.grad = rg.tensor([1.0, 1.0])
    opt.step()
    sd = opt.state_dict()
    sd["state"][0] = dict(sd["state"][0], step=1)     # an old-style state dict
    q = _param()
    opt2 = rg.optim.Adam([q])
    opt2.load_state_dict(sd)
    assert isinstance(opt2.state[q]["step"], rg.Tensor) and float(opt2.state[q]["step"]) == 1.0
    q.grad = rg.tensor([1.0, 1.0])
    opt2.step()
    assert float(opt2.state[q]["step"]) == 2.0


def test_adamw_stays_decoupled_after_loading_an_adam_state():
    opt = rg.optim.AdamW([_param()])
    opt.load_state_dict(rg.optim.Adam([_param()], weight_decay=0.1).state_dict())
    assert opt.param_groups[0]["decoupled_weight_decay"] is True
    assert opt.param_groups[0]["weight_decay"] == 0.1


def test_deepcopy_of_an_optimizer():
    p = _param()
    opt = rg.optim.SGD([p], lr=0.1, momentum=0.9)
    p.grad = rg.tensor([1.0, 1.0])
    opt.step()
    clone = copy.deepcopy(opt)
    q = clone.param_groups[0]["params"][0]
    assert q is not p
    np.testing.assert_array_equal(clone.state[q]["momentum_buffer"].numpy(), [1.0, 1.0])


# --- repr --------------------------------------------------------------------------

def test_repr_lists_group_options_sorted():
    opt = rg.optim.SGD([{"params": [_param()]}, {"params": [_param()], "lr": 0.5}], lr=0.1)
    text = repr(opt)
    assert text.startswith("SGD (\nParameter Group 0\n    dampening: 0\n")
    assert "Parameter Group 1\n" in text and "    lr: 0.5\n" in text and text.endswith(")")


@pytest.mark.oracle
@pytest.mark.parametrize("name, kwargs", [("SGD", dict(lr=0.1, momentum=0.9)), ("Adam", {}),
                                          ("AdamW", dict(amsgrad=True)), ("RMSprop", dict(centered=True)),
                                          ("Adagrad", dict(lr_decay=0.1))])
def test_repr_equals_torchs(name, kwargs):
    torch = pytest.importorskip("torch")
    r = getattr(rg.optim, name)([{"params": [_param()]}, {"params": [_param()], "lr": 0.25}], **kwargs)
    t = getattr(torch.optim, name)([{"params": [torch.zeros(2, requires_grad=True)]},
                                    {"params": [torch.zeros(2, requires_grad=True)], "lr": 0.25}], **kwargs)
    assert repr(r) == repr(t)


# --- the optimizer step inside backward ------------------------------------------------

def _mlp_params(seed):
    rng = np.random.default_rng(seed)
    shapes = [(6, 8), (8,), (8, 3), (3,)]
    return [rg.tensor(rng.standard_normal(s) * 0.5, requires_grad=True) for s in shapes]


def _mlp_loss(params, x, y):
    w1, b1, w2, b2 = params
    h = (x @ w1 + b1).tanh()
    return ((h @ w2 + b2 - y) ** 2).mean()


@pytest.mark.parametrize("make_opt", [lambda ps: rg.optim.SGD(ps, lr=0.1, momentum=0.9),
                                      lambda ps: rg.optim.Adam(ps, lr=0.01, weight_decay=0.01),
                                      lambda ps: rg.optim.RMSprop(ps, lr=0.01, centered=True)],
                         ids=["SGD", "Adam", "RMSprop"])
def test_optimizer_step_in_backward_equals_the_ordinary_loop(make_opt):
    rng = np.random.default_rng(7)
    batches = [(rg.tensor(rng.standard_normal((16, 6))), rg.tensor(rng.standard_normal((16, 3))))
               for _ in range(10)]

    # The ordinary loop: one optimizer over all parameters.
    loop_params = _mlp_params(0)
    opt = make_opt(loop_params)
    for x, y in batches:
        opt.zero_grad()
        _mlp_loss(loop_params, x, y).backward()
        opt.step()

    # One optimizer per parameter, stepped by the post-accumulate-grad hook.
    hook_params = _mlp_params(0)
    optimizers = {p: make_opt([p]) for p in hook_params}

    def step_in_backward(p):
        optimizers[p].step()
        optimizers[p].zero_grad()

    handles = [p.register_post_accumulate_grad_hook(step_in_backward) for p in hook_params]
    for x, y in batches:
        _mlp_loss(hook_params, x, y).backward()
        assert all(p.grad is None for p in hook_params)    # each was freed during backward
    for h in handles:
        h.remove()

    for a, b in zip(loop_params, hook_params):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def test_no_warnings_in_an_ordinary_loop():
    p = _param()
    opt = rg.optim.Adam([p])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):
            opt.zero_grad()
            (p * p).sum().backward()
            opt.step()


@pytest.mark.parametrize("name, kwargs", [("SGD", dict(lr=0.1, momentum=0.9)), ("Adam", dict(amsgrad=True)),
                                          ("AdamW", {}), ("RMSprop", dict(centered=True, momentum=0.5)),
                                          ("Adagrad", dict(lr_decay=0.1))])
def test_state_dict_through_save_and_load_continues_identically(name, kwargs, tmp_path):
    cls = getattr(rg.optim, name)
    rng = np.random.default_rng(0)
    grads = [rng.standard_normal(3) for _ in range(20)]
    p = rg.tensor([1.0, -2.0, 0.5], requires_grad=True)
    opt = cls([p], **kwargs)
    for g in grads[:10]:
        p.grad = rg.tensor(g)
        opt.step()
    rg.save({"params": p.detach(), "optim": opt.state_dict()}, tmp_path / "ckpt.npz")
    ckpt = rg.load(tmp_path / "ckpt.npz")
    q = rg.tensor(ckpt["params"].numpy().copy(), requires_grad=True)
    opt2 = cls([q])
    opt2.load_state_dict(ckpt["optim"])
    for g in grads[10:]:
        p.grad = rg.tensor(g)
        q.grad = rg.tensor(g)
        opt.step()
        opt2.step()
    np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
    for key, value in opt.state[p].items():
        np.testing.assert_array_equal(value.numpy(), opt2.state[q][key].numpy())
