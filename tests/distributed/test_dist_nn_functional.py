"""rg.distributed.nn.functional: the differentiable collectives, gradchecked across ranks.

rg.autograd.gradcheck perturbs one process's input; a collective's output
depends on every rank's input, so the check here is its cross-rank form:
the full Jacobian d(outputs of every rank)/d(inputs of every rank), by
central differences (rank p perturbs its input while the others keep
theirs) and by backward (a unit gradient on one output of rank q, zeros on
the other ranks), compared in the test process.
"""
import numpy as np
import pytest

from _dist_mpi import needs_mpi

pytestmark = needs_mpi

BODY = """
import retrograd.distributed.nn.functional as F
dist.init_process_group("mpi", timeout=60)
r, w = dist.get_rank(), dist.get_world_size()
rng = np.random.default_rng(r)
n = 2 * w

def flat(out):
    outs = out if isinstance(out, tuple) else (out,)
    return outs, np.concatenate([o.detach().numpy().ravel() for o in outs])

def jacobians(fn, eps=1e-6):
    x0 = rng.standard_normal(n)
    _, y0 = flat(fn(rg.tensor(x0)))
    m = y0.size
    numerical = np.zeros((m, w * n))     # d y_r / d x_p, columns (p, i)
    for p in range(w):
        for i in range(n):
            cols = []
            for sign in (1, -1):
                x = x0.copy()
                if r == p:
                    x[i] += sign * eps
                cols.append(flat(fn(rg.tensor(x)))[1])
            numerical[:, p * n + i] = (cols[0] - cols[1]) / (2 * eps)
    analytic = np.zeros((w * m, n))      # d y_q[j] / d x_r, rows (q, j)
    for q in range(w):
        for j in range(m):
            x = rg.tensor(x0, requires_grad=True)
            outs, _ = flat(fn(x))
            seed = np.zeros(m)
            if r == q:
                seed[j] = 1.0
            grads, k = [], 0
            for o in outs:
                grads.append(rg.tensor(seed[k:k + o.numel()].reshape(o.shape)))
                k += o.numel()
            rg.autograd.backward(list(outs), grads)
            analytic[q * m + j] = x.grad.numpy()
    return numerical.tolist(), analytic.tolist()

res = {}
res["all_reduce_sum"] = jacobians(lambda x: F.all_reduce(x * x))
res["all_reduce_avg"] = jacobians(lambda x: F.all_reduce(x.sin(), op=dist.ReduceOp.AVG))
res["broadcast"] = jacobians(lambda x: F.broadcast(x * (r + 1), src=w - 1) * (r + 2))
res["all_gather"] = jacobians(lambda x: tuple(o * (k + 1) for k, o in enumerate(F.all_gather(x.exp()))))
res["reduce_scatter"] = jacobians(lambda x: F.reduce_scatter(rg.zeros(2, dtype=rg.float64),
                                                             [x[2 * k:2 * k + 2] * (k + r + 1) for k in range(w)]))
save(res)
dist.destroy_process_group()
"""


@pytest.mark.parametrize("nproc", [2, 3])
def test_differentiable_collectives_gradcheck_across_ranks(mpi_job, nproc):
    job = mpi_job(nproc, BODY).check()
    w = nproc
    for name in ("all_reduce_sum", "all_reduce_avg", "broadcast", "all_gather", "reduce_scatter"):
        numerical = np.vstack([np.array(job.results[r][name][0]) for r in range(w)])   # rows (r, j)
        analytic = np.hstack([np.array(job.results[r][name][1]) for r in range(w)])    # columns (r, i)
        assert numerical.shape == analytic.shape
        assert np.abs(numerical).max() > 0.1, name
        np.testing.assert_allclose(analytic, numerical, atol=1e-6, rtol=1e-5, err_msg=name)
