"""AdaptiveLogSoftmaxWithLoss against torch: parameter names and shapes,
forward output and loss, every gradient, log_prob, predict, unbatched input,
errors."""
import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(11)


def _pair(in_features=8, n_classes=12, cutoffs=(3, 7), div_value=2.0, head_bias=False):
    m = rg.nn.AdaptiveLogSoftmaxWithLoss(in_features, n_classes, list(cutoffs), div_value, head_bias)
    mt = torch.nn.AdaptiveLogSoftmaxWithLoss(in_features, n_classes, list(cutoffs), div_value, head_bias,
                                             dtype=torch.float64)
    m.load_state_dict({k: rg.tensor(v.detach().numpy()) for k, v in mt.state_dict().items()})
    return m, mt


@pytest.mark.parametrize("head_bias", [False, True])
def test_parameters_match_torch(head_bias):
    m, mt = _pair(head_bias=head_bias)
    assert [(n, tuple(p.shape)) for n, p in m.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in mt.named_parameters()]
    assert (m.shortlist_size, m.n_clusters, m.head_size, m.cutoffs) == \
        (mt.shortlist_size, mt.n_clusters, mt.head_size, mt.cutoffs)
    assert repr(m).replace("rg.", "") == repr(mt)


@pytest.mark.parametrize("target", [[0, 3, 7, 11, 2, 9], [0, 1, 2, 2, 1, 0], [8, 8, 9, 10, 11, 7], [5, 0, 4, 6, 3, 6]])
def test_forward_and_gradients_match_torch(target):
    m, mt = _pair()
    a = RNG.standard_normal((len(target), 8))
    x, xt = rg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    out, outt = m(x, rg.tensor(target)), mt(xt, torch.tensor(target))
    assert type(out).__name__ == "_ASMoutput" and out._fields == ("output", "loss")
    np.testing.assert_allclose(np.asarray(out.output.detach()), outt.output.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(float(out.loss.detach()), float(outt.loss.detach()), rtol=1e-12)
    (out.loss + (out.output * rg.tensor(np.arange(len(target)))).sum()).backward()
    (outt.loss + (outt.output * torch.tensor(np.arange(len(target)))).sum()).backward()
    np.testing.assert_allclose(np.asarray(x.grad), xt.grad.numpy(), rtol=1e-10, atol=1e-12)
    for (n, p), (_, pt) in zip(m.named_parameters(), mt.named_parameters()):
        if pt.grad is None:
            assert p.grad is None or not np.asarray(p.grad).any(), n
        else:
            np.testing.assert_allclose(np.asarray(p.grad), pt.grad.numpy(), rtol=1e-10, atol=1e-12, err_msg=n)


def test_gradcheck():
    m, _ = _pair(in_features=4, n_classes=6, cutoffs=(2, 4), div_value=1.0)
    target = rg.tensor([0, 3, 5, 1])
    assert rg.autograd.gradcheck(lambda t: m(t, target).output, (rg.tensor(RNG.standard_normal((4, 4)),
                                                                           requires_grad=True),))


def test_log_prob_predict_and_unbatched_match_torch():
    m, mt = _pair()
    a = RNG.standard_normal((20, 8)) * 3
    lp, lpt = m.log_prob(rg.tensor(a)), mt.log_prob(torch.tensor(a))
    np.testing.assert_allclose(np.asarray(lp.detach()), lpt.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(np.exp(np.asarray(lp.detach())).sum(1), 1.0, rtol=1e-12)
    pred, predt = m.predict(rg.tensor(a)), mt.predict(torch.tensor(a))
    np.testing.assert_array_equal(np.asarray(pred), predt.numpy())
    assert pred.dtype == np.int64
    np.testing.assert_array_equal(np.asarray(pred), np.asarray(lp.detach()).argmax(1))
    # the log-probabilities forward computes are log_prob's entries
    target = np.asarray(pred)
    out = m(rg.tensor(a), rg.tensor(target)).output
    np.testing.assert_allclose(np.asarray(out.detach()), np.asarray(lp.detach())[np.arange(20), target], rtol=1e-12)
    one, onet = m(rg.tensor(a[0]), rg.tensor(9)), mt(torch.tensor(a[0]), torch.tensor(9))
    assert one.output.shape == () and one.loss.shape == ()
    np.testing.assert_allclose(float(one.output.detach()), float(onet.output.detach()), rtol=1e-12)


def test_errors_like_torch():
    for mod in (rg.nn, torch.nn):
        with pytest.raises(ValueError, match="cutoffs should be a sequence of length larger than 0"):
            mod.AdaptiveLogSoftmaxWithLoss(4, 10, [])
        for bad in ([5, 3], [0, 3], [3, 10], [3, 3], [2.5]):
            with pytest.raises(ValueError, match="cutoffs should be a sequence of unique, positive integers"):
                mod.AdaptiveLogSoftmaxWithLoss(4, 10, bad)
    m, mt = _pair()
    cases = [((3, 8), [0, 1], "same size in the batch dimension"),
             ((2, 2, 8), [0, 1], "1D target tensor expects 2D input tensors"),
             ((2, 8), 1, "0D target tensor expects 1D input tensors"),
             ((2, 8), [[0, 1]], "0D or 1D target tensor expected, multi-target not supported"),
             ((2, 8), [0, 12], "Target values should be in \\[0, 11\\], but values in range \\[0, 12\\] were found"),
             ((2, 8), [-1, 3], "Target values should be in \\[0, 11\\]")]
    for shape, target, msg in cases:
        with pytest.raises(RuntimeError, match=msg):
            m(rg.zeros(*shape), rg.tensor(target))
        with pytest.raises(RuntimeError, match=msg):
            mt(torch.zeros(*shape, dtype=torch.float64), torch.tensor(target))
