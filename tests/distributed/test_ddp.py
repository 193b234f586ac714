"""DistributedDataParallel: gradients equal one process's on the whole batch."""
import pytest

from _dist_mpi import needs_mpi

pytestmark = needs_mpi

SETUP = """
dist.init_process_group("mpi", timeout=60)
r, w = dist.get_rank(), dist.get_world_size()

def make_model(seed=0):
    rg.manual_seed(seed)
    return rg.nn.Sequential(rg.nn.Linear(6, 16), rg.nn.Tanh(), rg.nn.Linear(16, 16), rg.nn.Tanh(),
                            rg.nn.Linear(16, 16), rg.nn.Tanh(), rg.nn.Linear(16, 16), rg.nn.Tanh(),
                            rg.nn.Linear(16, 1)).double()

def batch(step, n=4):
    g = np.random.default_rng(100 + step)
    x = g.standard_normal((n * w, 6))
    y = g.standard_normal((n * w, 1))
    return rg.tensor(x), rg.tensor(y)

def shard(t, n=4):
    return t[r * n:(r + 1) * n]
"""


@pytest.mark.parametrize("nproc", [2, 3])
def test_ddp_gradients_equal_one_process_on_the_concatenated_batch(mpi_job, nproc):
    job = mpi_job(nproc, SETUP + """
# every rank starts from another seed: construction must broadcast rank 0's parameters
model = make_model(seed=r)
# tiny buckets: several all-reduces in flight during backward
ddp = rg.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=0.0005)
ref = make_model(seed=0)
x, y = batch(0)
loss = ((ddp(shard(x)) - shard(y)) ** 2).mean()
loss.backward()
ref_loss = ((ref(x) - y) ** 2).mean()
ref_loss.backward()
err = max(float((p.grad - q.grad).abs().max()) for p, q in zip(model.parameters(), ref.parameters()))
save({"err": err, "buckets": len(ddp.reducer.buckets),
      "first_start_before_last_grad": ddp.reducer.first_launch_at < ddp.reducer.last_ready_at,
      "first_start_before_end": ddp.reducer.first_launch_at < ddp.reducer.finalize_started_at})
dist.destroy_process_group()
""").check()
    for out in job.results.values():
        assert out["err"] < 1e-12
        assert out["buckets"] >= 4
        # overlap, from the timestamps: the first bucket's all-reduce started
        # before the last gradient was accumulated, so before backward ended
        assert out["first_start_before_last_grad"]
        assert out["first_start_before_end"]


def test_twenty_sgd_steps_keep_every_rank_identical_and_equal_to_one_process(mpi_job):
    job = mpi_job(2, SETUP + """
model = make_model(seed=r)
ddp = rg.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=0.001, gradient_as_bucket_view=True)
opt = rg.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
ref = make_model(seed=0)
ref_opt = rg.optim.SGD(ref.parameters(), lr=0.05, momentum=0.9)
for step in range(20):
    x, y = batch(step)
    opt.zero_grad()
    ((ddp(shard(x)) - shard(y)) ** 2).mean().backward()
    opt.step()
    ref_opt.zero_grad()
    ((ref(x) - y) ** 2).mean().backward()
    ref_opt.step()
flat = np.concatenate([p.detach().numpy().ravel() for p in model.parameters()])
ref_flat = np.concatenate([p.detach().numpy().ravel() for p in ref.parameters()])
save({"params": flat.tolist(), "err": float(np.abs(flat - ref_flat).max())})
dist.destroy_process_group()
""").check()
    assert job.results[0]["params"] == job.results[1]["params"]
    assert job.results[0]["err"] < 1e-10


def test_no_sync_accumulates_locally_then_reduces_the_sum(mpi_job):
    job = mpi_job(2, SETUP + """
model = make_model(seed=0)
ddp = rg.nn.parallel.DistributedDataParallel(model)
ref = make_model(seed=0)
x1, y1 = batch(1)
x2, y2 = batch(2)
with ddp.no_sync():
    ((ddp(shard(x1)) - shard(y1)) ** 2).mean().backward()
local = [p.grad.detach().numpy().copy() for p in model.parameters()]
own = make_model(seed=0)
((own(shard(x1)) - shard(y1)) ** 2).mean().backward()
local_err = max(float(np.abs(a - p.grad.detach().numpy()).max()) for a, p in zip(local, own.parameters()))
((ddp(shard(x2)) - shard(y2)) ** 2).mean().backward()
# torch's semantics: the synced backward averages the accumulated gradients
((ref(x1[:0]) ** 2).sum() * 0).backward()  # (ref gets grads allocated)
ref.zero_grad()
for xb, yb in ((x1, y1), (x2, y2)):
    for k in range(w):
        ((ref(xb[k*4:(k+1)*4]) - yb[k*4:(k+1)*4]) ** 2).mean().backward()
err = max(float((p.grad - q.grad / w).abs().max()) for p, q in zip(model.parameters(), ref.parameters()))
save({"local_err": local_err, "err": err})
dist.destroy_process_group()
""").check()
    for out in job.results.values():
        assert out["local_err"] == 0.0       # inside no_sync: this rank's own gradient
        assert out["err"] < 1e-12


def test_find_unused_parameters(mpi_job):
    job = mpi_job(2, """
dist.init_process_group("mpi", timeout=30)
r = dist.get_rank()

class Net(rg.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = rg.nn.Linear(3, 3)
        self.b = rg.nn.Linear(3, 3)      # used by rank 0 only
        self.c = rg.nn.Linear(3, 3)      # used by no rank

    def forward(self, x, use_b):
        h = self.a(x)
        return self.b(h) if use_b else h

rg.manual_seed(0)
net = Net().double()
ddp = rg.nn.parallel.DistributedDataParallel(net, find_unused_parameters=True, bucket_cap_mb=0.0001)
x = rg.ones(2, 3, dtype=rg.float64) * (r + 1)
ddp(x, use_b=(r == 0)).sum().backward()
res = {"b_grad": None if net.b.weight.grad is None else net.b.weight.grad.tolist(),
       "c_grad_is_none": net.c.weight.grad is None,
       "a_grad": net.a.weight.grad.tolist()}
# without find_unused_parameters the same model fails with torch's advice, on every rank
ddp2 = rg.nn.parallel.DistributedDataParallel(Net().double())
try:
    ddp2(x, use_b=True).sum().backward()
    res["error"] = None
except RuntimeError as e:
    res["error"] = str(e)
save(res)
dist.destroy_process_group()
""").check()
    out0, out1 = job.results[0], job.results[1]
    # b: used on rank 0 only; both ranks get the average (rank 1 contributed zeros)
    assert out0["b_grad"] is not None and out0["b_grad"] == out1["b_grad"]
    assert out0["c_grad_is_none"] and out1["c_grad_is_none"]
    assert out0["a_grad"] == out1["a_grad"]
    for out in (out0, out1):
        assert "find_unused_parameters=True" in out["error"]


def test_ddp_with_checkpoint_and_adam(mpi_job):
    job = mpi_job(2, SETUP + """
from retrograd.utils.checkpoint import checkpoint

class Ckpt(rg.nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner
    def forward(self, x):
        return checkpoint(self.inner, x, use_reentrant=False)

model = Ckpt(make_model(seed=r))
ddp = rg.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=0.001)
ref = make_model(seed=0)
opt = rg.optim.Adam(ddp.parameters(), lr=1e-2)
ref_opt = rg.optim.Adam(ref.parameters(), lr=1e-2)
for step in range(3):
    x, y = batch(step)
    opt.zero_grad(); ref_opt.zero_grad()
    ((ddp(shard(x)) - shard(y)) ** 2).mean().backward()
    ((ref(x) - y) ** 2).mean().backward()
    opt.step(); ref_opt.step()
err = max(float((p - q).abs().max()) for p, q in zip(model.inner.parameters(), ref.parameters()))
save({"err": err})
dist.destroy_process_group()
""").check()
    for out in job.results.values():
        assert out["err"] < 1e-10
