"""rg.nn.RNNCell, LSTMCell and GRUCell against torch 2.13 (values and every
gradient, batched and unbatched), gradcheck in float64, reprs and errors."""
import numpy as np
import pytest

import retrograd as rg
from retrograd.nn.modules import rnn as rnn_mod

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle

class _Float64Torch:
    """torch, as seen by the error cases: tensors in float64, as the double() layers."""
    float32 = torch.float32

    @staticmethod
    def ones(*shape, dtype=torch.float64):
        return torch.ones(*shape, dtype=dtype)


RNG = np.random.default_rng(1)

CELLS = [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"}), ("RNNCell", {"bias": False}),
         ("LSTMCell", {}), ("LSTMCell", {"bias": False}), ("GRUCell", {}), ("GRUCell", {"bias": False})]
IDS = [f"{n}-{'-'.join(f'{k}={v}' for k, v in kw.items()) or 'default'}" for n, kw in CELLS]


def _pair(name, kw, n_in=4, n_hid=5):
    tm = getattr(torch.nn, name)(n_in, n_hid, **kw).double()
    rm = getattr(rg.nn, name)(n_in, n_hid, **kw)
    rm.load_state_dict({k: rg.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    return tm, rm


def _close(a, b, tol=1e-12):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("name, kw", CELLS, ids=IDS)
@pytest.mark.parametrize("batch", [3, None], ids=["batched", "unbatched"])
@pytest.mark.parametrize("with_state", [True, False], ids=["hx", "no-hx"])
def test_cell_as_torch(name, kw, batch, with_state):
    tm, rm = _pair(name, kw)
    lead = () if batch is None else (batch,)
    arrays = [RNG.standard_normal(lead + (4,))]
    if with_state:
        arrays += [RNG.standard_normal(lead + (5,)) for _ in range(2 if name == "LSTMCell" else 1)]
    at = [torch.tensor(a, requires_grad=True) for a in arrays]
    ar = [rg.tensor(a, requires_grad=True) for a in arrays]
    hx_t = (tuple(at[1:]) if name == "LSTMCell" else at[1]) if with_state else None
    hx_r = (tuple(ar[1:]) if name == "LSTMCell" else ar[1]) if with_state else None
    # two steps, so that the hidden state's own path is differentiated too
    yt = tm(at[0], tm(at[0] * 0.5, hx_t))
    yr = rm(ar[0], rm(ar[0] * 0.5, hx_r))
    outs_t = yt if isinstance(yt, tuple) else (yt,)
    outs_r = yr if isinstance(yr, tuple) else (yr,)
    loss_t = loss_r = 0
    for i, (a, b) in enumerate(zip(outs_t, outs_r)):
        assert b.shape == tuple(a.shape) == lead + (5,)
        _close(a, b)
        loss_t = loss_t + (a.sin() * (i + 1)).sum()
        loss_r = loss_r + (b.sin() * (i + 1)).sum()
    loss_t.backward()
    loss_r.backward()
    for a, b in zip(at, ar):
        _close(a.grad, b.grad)
    assert [n for n, _ in tm.named_parameters()] == [n for n, _ in rm.named_parameters()]
    for p, q in zip(tm.parameters(), rm.parameters()):
        _close(p.grad, q.grad)


def test_gradcheck_small_cells():
    rg.manual_seed(0)
    x = rg.randn(2, 3, requires_grad=True)
    h = rg.randn(2, 2, requires_grad=True)
    c = rg.randn(2, 2, requires_grad=True)
    for cell in (rg.nn.RNNCell(3, 2), rg.nn.RNNCell(3, 2, nonlinearity="relu"), rg.nn.GRUCell(3, 2)):
        assert rg.autograd.gradcheck(lambda x, h, cell=cell: cell(x, h), (x, h))
    lstm = rg.nn.LSTMCell(3, 2)
    assert rg.autograd.gradcheck(lambda x, h, c: lstm(x, (h, c)), (x, h, c))
    assert rg.autograd.gradgradcheck(lambda x, h, c: lstm(x, (h, c)), (x, h, c))
    # the weights too, through the cells' ops (what forward calls with the parameters)
    for fn, n_gates in ((rnn_mod._gru_cell, 3), (rnn_mod._rnn_tanh_cell, 1)):
        ws = (rg.randn(2 * n_gates, 3), rg.randn(2 * n_gates, 2), rg.randn(2 * n_gates), rg.randn(2 * n_gates))
        ws = tuple(w.requires_grad_() for w in ws)
        assert rg.autograd.gradcheck(lambda *ws, fn=fn: fn(x.detach(), h.detach(), *ws), ws)
    ws = tuple(w.requires_grad_() for w in (rg.randn(8, 3), rg.randn(8, 2), rg.randn(8), rg.randn(8)))
    assert rg.autograd.gradcheck(lambda *ws: rnn_mod._lstm_cell(x.detach(), h.detach(), c.detach(), *ws), ws)


def test_cell_parameters_and_repr_as_torch():
    for name, kw in CELLS:
        tm = getattr(torch.nn, name)(4, 5, **kw)
        rm = getattr(rg.nn, name)(4, 5, **kw)
        assert repr(rm) == repr(tm)
        assert [(n, tuple(p.shape)) for n, p in tm.named_parameters()] == \
            [(n, p.shape) for n, p in rm.named_parameters()]
        if not kw.get("bias", True):
            assert rm.bias_ih is None and rm.bias_hh is None
        values = np.concatenate([p.detach().numpy().ravel() for p in rm.parameters()])
        assert np.abs(values).max() <= 1 / np.sqrt(5)


def test_cell_errors_as_torch():
    cases = [
        (RuntimeError, "input has inconsistent input_size: got 5 expected 3", "RNNCell",
         lambda lib: (lib.ones(2, 5),)),
        (RuntimeError, "Input batch size 2 doesn't match hidden0 batch size 3", "RNNCell",
         lambda lib: (lib.ones(2, 3), lib.ones(3, 4))),
        (RuntimeError, "hidden0 has inconsistent hidden_size: got 5, expected 4", "GRUCell",
         lambda lib: (lib.ones(2, 3), lib.ones(2, 5))),
        (RuntimeError, "hidden0 has inconsistent hidden_size: got 2, expected 4", "RNNCell",
         lambda lib: (lib.ones(3), lib.ones(2, 4))),
        (ValueError, "RNNCell: Expected input to be 1D or 2D, got 3D instead", "RNNCell",
         lambda lib: (lib.ones(2, 2, 3),)),
        (ValueError, "GRUCell: Expected hidden to be 1D or 2D, got 3D instead", "GRUCell",
         lambda lib: (lib.ones(2, 3), lib.ones(1, 2, 4))),
        (RuntimeError, "hidden1 has inconsistent hidden_size: got 5, expected 4", "LSTMCell",
         lambda lib: (lib.ones(2, 3), (lib.ones(2, 4), lib.ones(2, 5)))),
        (ValueError, "LSTMCell: Expected hx\\[1\\] to be 1D or 2D, got 3D instead", "LSTMCell",
         lambda lib: (lib.ones(2, 3), (lib.ones(2, 4), lib.ones(1, 2, 4)))),
        (RuntimeError, "lstm_cell expects two hidden states", "LSTMCell",
         lambda lib: (lib.ones(2, 3), (lib.ones(2, 4),))),
        (TypeError, "must be tuple of Tensors, not Tensor", "LSTMCell",
         lambda lib: (lib.ones(2, 3), lib.ones(2, 4))),
        (RuntimeError, "dtype", "GRUCell", lambda lib: (lib.ones(2, 3, dtype=lib.float32),)),
        (RuntimeError, "dtype", "RNNCell", lambda lib: (lib.ones(2, 3), lib.ones(2, 4, dtype=lib.float32))),
    ]
    for cls, match, name, args in cases:
        for lib in (torch, rg):
            m = getattr(lib.nn, name)(3, 4)
            if lib is torch:
                m = m.double()
            with pytest.raises(cls, match=match):
                m(*args(_Float64Torch if lib is torch else lib))
    for lib in (torch, rg):
        with pytest.raises(RuntimeError, match="Unknown nonlinearity: foo"):
            lib.nn.RNNCell(3, 4, nonlinearity="foo")(lib.ones(3, dtype=lib.float32))
