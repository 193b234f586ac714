"""nn.utils.fusion (conv/linear + batch norm folding), nn.utils.stateless.
functional_call and nn.utils.init.skip_init against torch."""
import numpy as np
import pytest

import retrograd as rg
from retrograd.nn.utils.fusion import (fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval,
                                       fuse_linear_bn_weights)
from retrograd.nn.utils.init import skip_init
from retrograd.nn.utils.stateless import functional_call

torch = pytest.importorskip("torch")
from torch.nn.utils import fusion as tfusion  # noqa: E402
from torch.nn.utils import stateless as tstateless  # noqa: E402

pytestmark = pytest.mark.oracle

nn, tnn = rg.nn, torch.nn
RNG = np.random.default_rng(8)


def _copy_from_torch(m, mt):
    m.load_state_dict({k: rg.tensor(v.detach().numpy()) for k, v in mt.state_dict().items()})
    return m


def _bn_pair(cls, n, affine=True):
    bn, bnt = getattr(nn, cls)(n, affine=affine), getattr(tnn, cls)(n, affine=affine, dtype=torch.float64)
    with torch.no_grad():
        bnt.running_mean.copy_(torch.tensor(RNG.standard_normal(n)))
        bnt.running_var.copy_(torch.tensor(RNG.uniform(0.5, 2.0, n)))
        if affine:
            bnt.weight.copy_(torch.tensor(RNG.standard_normal(n)))
            bnt.bias.copy_(torch.tensor(RNG.standard_normal(n)))
    return _copy_from_torch(bn, bnt).eval(), bnt.eval()


@pytest.mark.parametrize("conv,args,xshape,transpose,affine", [
    ("Conv2d", (3, 4, 3), (2, 3, 6, 6), False, True), ("Conv1d", (2, 5, 3), (2, 2, 7), False, False),
    ("Conv2d", (3, 4, 3, 1, 1, 1, 1, False), (1, 3, 5, 5), False, True),
    ("ConvTranspose2d", (3, 4, 3), (2, 3, 4, 4), True, True)])
def test_fuse_conv_bn_matches_torch_and_the_unfused_pair(conv, args, xshape, transpose, affine):
    c, ct = getattr(nn, conv)(*args), getattr(tnn, conv)(*args, dtype=torch.float64)
    _copy_from_torch(c, ct)
    c.eval(), ct.eval()
    bn_cls = "BatchNorm2d" if len(xshape) == 4 else "BatchNorm1d"
    bn, bnt = _bn_pair(bn_cls, args[1], affine)
    fused = fuse_conv_bn_eval(c, bn, transpose)
    fusedt = tfusion.fuse_conv_bn_eval(ct, bnt, transpose)
    assert type(fused) is type(c) and fused is not c and fused.weight is not c.weight
    assert isinstance(fused.weight, nn.Parameter) and isinstance(fused.bias, nn.Parameter)
    np.testing.assert_allclose(np.asarray(fused.weight.detach()), fusedt.weight.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(fused.bias.detach()), fusedt.bias.detach().numpy(), rtol=1e-12)
    x = rg.tensor(RNG.standard_normal(xshape))
    np.testing.assert_allclose(np.asarray(fused(x).detach()), np.asarray(bn(c(x)).detach()), rtol=1e-10, atol=1e-12)
    # the originals are untouched
    np.testing.assert_array_equal(np.asarray(c.weight.detach()), ct.weight.detach().numpy())


def test_fuse_linear_bn_matches_torch():
    lin, lint = nn.Linear(5, 3), tnn.Linear(5, 3, dtype=torch.float64)
    _copy_from_torch(lin, lint).eval()
    lint.eval()
    bn, bnt = _bn_pair("BatchNorm1d", 3)
    fused, fusedt = fuse_linear_bn_eval(lin, bn), tfusion.fuse_linear_bn_eval(lint, bnt)
    np.testing.assert_allclose(np.asarray(fused.weight.detach()), fusedt.weight.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(fused.bias.detach()), fusedt.bias.detach().numpy(), rtol=1e-12)
    x = rg.tensor(RNG.standard_normal((4, 5)))
    np.testing.assert_allclose(np.asarray(fused(x).detach()), np.asarray(bn(lin(x)).detach()), rtol=1e-10)


def test_fuse_weights_functions_and_requires_grad_like_torch():
    w, rm, rv = RNG.standard_normal((3, 2, 3)), RNG.standard_normal(3), RNG.uniform(0.5, 2, 3)
    bw, bb = RNG.standard_normal(3), RNG.standard_normal(3)
    fw, fb = fuse_conv_bn_weights(rg.tensor(w, requires_grad=True), None, rg.tensor(rm), rg.tensor(rv), 1e-3,
                                  rg.tensor(bw), None)
    tw, tb = tfusion.fuse_conv_bn_weights(torch.tensor(w, requires_grad=True), None, torch.tensor(rm),
                                          torch.tensor(rv), 1e-3, torch.tensor(bw), None)
    np.testing.assert_allclose(np.asarray(fw.detach()), tw.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(fb.detach()), tb.detach().numpy(), rtol=1e-12)
    assert (fw.requires_grad, fb.requires_grad) == (tw.requires_grad, tb.requires_grad) == (True, False)
    lw, lb = fuse_linear_bn_weights(rg.tensor(w[:, :, 0]), rg.tensor(bb, requires_grad=True), rg.tensor(rm),
                                    rg.tensor(rv), 1e-5, rg.tensor(bw), rg.tensor(bb))
    tlw, tlb = tfusion.fuse_linear_bn_weights(torch.tensor(w[:, :, 0]), torch.tensor(bb, requires_grad=True),
                                              torch.tensor(rm), torch.tensor(rv), 1e-5, torch.tensor(bw),
                                              torch.tensor(bb))
    np.testing.assert_allclose(np.asarray(lw.detach()), tlw.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(lb.detach()), tlb.detach().numpy(), rtol=1e-12)
    assert (lw.requires_grad, lb.requires_grad) == (tlw.requires_grad, tlb.requires_grad) == (False, True)
    f32 = fuse_conv_bn_weights(rg.ones(2, 1, 1, dtype=rg.float32), None, rg.zeros(2, dtype=rg.float64),
                               rg.ones(2, dtype=rg.float64), 1e-5, None, None)
    assert f32[0].dtype == np.float32 and f32[1].dtype == np.float32


def test_fusion_errors_like_torch():
    conv, bn = nn.Conv2d(2, 3, 1), nn.BatchNorm2d(3)
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        fuse_conv_bn_eval(conv, bn.eval())
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        tfusion.fuse_conv_bn_eval(tnn.Conv2d(2, 3, 1), tnn.BatchNorm2d(3).eval())
    with pytest.raises(AssertionError, match="must not be None"):
        fuse_conv_bn_eval(conv.eval(), nn.BatchNorm2d(3, track_running_stats=False).eval())
    with pytest.raises(AssertionError, match="linear.out_features == bn.num_features"):
        fuse_linear_bn_eval(nn.Linear(2, 3).eval(), nn.BatchNorm1d(4).eval())


class _Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 2)
        self.bn = nn.BatchNorm1d(2)
        self.register_buffer("scale", rg.tensor(2.0))

    def forward(self, x, shift=0.0):
        return self.bn(self.lin(x)) * self.scale + shift


class _TNet(tnn.Module):
    def __init__(self):
        super().__init__()
        self.lin = tnn.Linear(3, 2, dtype=torch.float64)
        self.bn = tnn.BatchNorm1d(2, dtype=torch.float64)
        self.register_buffer("scale", torch.tensor(2.0, dtype=torch.float64))

    def forward(self, x, shift=0.0):
        return self.bn(self.lin(x)) * self.scale + shift


def test_functional_call_matches_torch_and_restores_the_module():
    net, tnet = _Net(), _TNet()
    _copy_from_torch(net, tnet)
    a, w, b = RNG.standard_normal((4, 3)), RNG.standard_normal((2, 3)), RNG.standard_normal(2)
    orig_w, orig_rm = net.lin.weight, net.bn.running_mean
    given = {"lin.weight": rg.tensor(w, requires_grad=True), "lin.bias": rg.tensor(b, requires_grad=True),
             "scale": rg.tensor(3.0)}
    tgiven = {"lin.weight": torch.tensor(w, requires_grad=True), "lin.bias": torch.tensor(b, requires_grad=True),
              "scale": torch.tensor(3.0, dtype=torch.float64)}
    y = functional_call(net, given, (rg.tensor(a),), {"shift": 1.0})
    with pytest.warns(FutureWarning):
        yt = tstateless.functional_call(tnet, tgiven, (torch.tensor(a),), {"shift": 1.0})
    np.testing.assert_allclose(np.asarray(y.detach()), yt.detach().numpy(), rtol=1e-12)
    g = RNG.standard_normal((4, 2))
    y.backward(rg.tensor(g))
    yt.backward(torch.tensor(g))
    for k in ("lin.weight", "lin.bias"):
        np.testing.assert_allclose(np.asarray(given[k].grad), tgiven[k].grad.numpy(), rtol=1e-10, atol=1e-12)
    # the module's own tensors are back, untouched, and got no gradient
    assert net.lin.weight is orig_w and net.lin.weight.grad is None and net.bn.running_mean is orig_rm
    assert float(net.scale) == 2.0 and isinstance(net.lin.weight, nn.Parameter)
    # the running statistics were updated in place (training mode), as torch's
    np.testing.assert_allclose(np.asarray(net.bn.running_mean), tnet.bn.running_mean.numpy(), rtol=1e-12)
    # a non-tuple args is the one positional argument
    y1 = functional_call(net, {}, rg.tensor(a))
    np.testing.assert_allclose(np.asarray(y1.detach()), np.asarray(net(rg.tensor(a)).detach()))


def test_functional_call_tied_weights_strict_and_errors():
    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(2, 2, bias=False)
            self.b = nn.Linear(2, 2, bias=False)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(self.a(x))

    m = Tied()
    w = rg.tensor(np.eye(2) * 2.0, requires_grad=True)
    x = rg.ones(1, 2)
    out = functional_call(m, {"a.weight": w}, (x,))
    np.testing.assert_allclose(np.asarray(out.detach()), [[4.0, 4.0]])       # both layers used w
    out = functional_call(m, {"a.weight": w}, (x,), tie_weights=False)
    assert not np.allclose(np.asarray(out.detach()), [[4.0, 4.0]])
    with pytest.raises(ValueError, match="functional_call got multiple values for keys \\['a.weight', 'b.weight'\\]"):
        functional_call(m, {"a.weight": w, "b.weight": rg.ones(2, 2)}, (x,))
    with pytest.raises(RuntimeError, match="Missing key\\(s\\): 'b.weight'"):
        functional_call(m, {"a.weight": w}, (x,), tie_weights=False, strict=True)
    with pytest.raises(RuntimeError, match="Unexpected key\\(s\\): 'c'"):
        functional_call(m, {"a.weight": w, "b.weight": w, "c": w}, (x,), strict=True)
    with pytest.raises(AttributeError, match="has no attribute `zz`"):
        functional_call(m, {"zz.weight": w}, (x,))
    assert m.a.weight is m.b.weight and isinstance(m.a.weight, nn.Parameter)
    # an unknown name is set during the call and removed afterwards
    seen = {}

    class Peek(nn.Module):
        def forward(self, x):
            seen["extra"] = getattr(self, "extra", None)
            return x

    p = Peek()
    functional_call(p, {"extra": rg.ones(1)}, (x,))
    assert seen["extra"] is not None and not hasattr(p, "extra")
    # an error in forward still restores the module
    lin = nn.Linear(2, 2)
    orig = lin.weight
    with pytest.raises(RuntimeError):
        functional_call(lin, {"weight": rg.ones(3, 3)}, (x,))
    assert lin.weight is orig


def test_skip_init_builds_without_drawing():
    rg.manual_seed(0)
    m = skip_init(nn.Linear, 4, 3, bias=True)
    after = rg.rand(3)
    rg.manual_seed(0)
    np.testing.assert_array_equal(np.asarray(after), np.asarray(rg.rand(3)))
    assert type(m) is nn.Linear and m.weight.shape == (3, 4) and m.bias.shape == (3,)
    mt = torch.nn.utils.skip_init(tnn.Linear, 4, 3)
    assert tuple(mt.weight.shape) == m.weight.shape
    with pytest.raises(RuntimeError, match="Expected a Module"):
        skip_init(int)
    with pytest.raises(RuntimeError, match="Module must support a 'device' arg to skip initialization"):
        skip_init(nn.ReLU)
    with pytest.raises(RuntimeError, match="Module must support a 'device' arg"):
        torch.nn.utils.skip_init(tnn.ReLU)
