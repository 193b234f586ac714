"""asv suite: retrograd's workloads (see workloads.py), tracked across commits.

Ratios against PyTorch and NumPy come from compare.py (same process, same
run); asv tracks retrograd's own absolute figures over time, with the
hand-written NumPy version beside it as a fixed reference.
"""
try:                        # as asv imports it: the package benchmarks
    from . import workloads as W
except ImportError:         # run directly from this folder
    import workloads as W


class OverheadChain:
    """300 tiny ops on a (16,) float64 array, forward + backward."""
    params = ["retrograd", "numpy"]
    param_names = ["framework"]

    def setup(self, framework):
        self.fn = W.overhead_chain(framework)

    def time_overhead_chain(self, framework):
        self.fn()


class OverheadWide:
    """64 branches of 20 ops from one input, forward + backward."""
    params = ["retrograd", "numpy"]
    param_names = ["framework"]

    def setup(self, framework):
        self.fn = W.overhead_wide(framework)

    def time_overhead_wide(self, framework):
        self.fn()


class MLPStep:
    """784-512-512-10 MLP, batch 128, relu, softmax cross-entropy: one step."""
    params = (["retrograd", "numpy"], ["float32", "float64"])
    param_names = ["framework", "dtype"]

    def setup(self, framework, dtype):
        self.fn = W.mlp_step(framework, dtype)

    def time_mlp_step(self, framework, dtype):
        self.fn()

    def peakmem_mlp_step(self, framework, dtype):
        self.fn()


class DeepChain:
    """10^6 ops (y = sin(y)) forward + backward."""
    params = ["retrograd", "numpy"]
    param_names = ["framework"]
    timeout = 600
    number = 1
    repeat = 1

    def setup(self, framework):
        self.fn = W.deep_chain(framework)

    def time_deep_chain(self, framework):
        self.fn()

    def peakmem_deep_chain(self, framework):
        self.fn()


class PerOpOverhead:
    """Every elementwise op on its own: 100 applications, one backward."""
    params = per_op_names = None
    param_names = ["op"]

    def setup(self, op):
        self.fn = P.per_op("retrograd", op)

    def time_per_op(self, op):
        self.fn()


try:
    from . import per_op as P
except ImportError:
    import per_op as P
PerOpOverhead.params = P.available()


# --- nn.functional ---
class Conv2dStep:
    """Two conv layers (3->16->32 channels, 3x3, padding 1), batch 32, 32x32:
    forward + backward."""
    params = (["retrograd", "numpy"], ["float32", "float64"])
    param_names = ["framework", "dtype"]

    def setup(self, framework, dtype):
        self.fn = W.conv2d_step(framework, dtype)

    def time_conv2d_step(self, framework, dtype):
        self.fn()


class CNNStep:
    """conv-relu-maxpool x2, linear, cross-entropy: one training step."""
    params = (["retrograd", "numpy"], ["float32"])
    param_names = ["framework", "dtype"]

    def setup(self, framework, dtype):
        self.fn = W.cnn_step(framework, dtype)

    def time_cnn_step(self, framework, dtype):
        self.fn()

    def peakmem_cnn_step(self, framework, dtype):
        self.fn()


class IndexBackward:
    """w[idx] with 100k repeated indices into 1000 rows, backward."""
    params = (["retrograd", "numpy"], ["float32"])
    param_names = ["framework", "dtype"]

    def setup(self, framework, dtype):
        self.fn = W.index_backward(framework, dtype)

    def time_index_backward(self, framework, dtype):
        self.fn()


class JacobianVectorize:
    """rg.autograd.functional.jacobian of tanh(W @ x), x of size 256: all rows
    in one batched backward (vectorize=True) or one backward per row."""
    params = [True, False]
    param_names = ["vectorize"]

    def setup(self, vectorize):
        import numpy as np
        import retrograd as rg
        from retrograd.autograd import functional
        rng = np.random.default_rng(0)
        w = rg.tensor(rng.standard_normal((256, 256)) / 16)
        self.x = rg.tensor(rng.standard_normal(256))
        self.f = lambda v: (w @ v).tanh()
        self.jacobian = functional.jacobian

    def time_jacobian(self, vectorize):
        self.jacobian(self.f, self.x, vectorize=vectorize)


class ProfiledChain:
    """overhead_chain, 10 times, inside an active retrograd.profiler.profile
    (minus OverheadChain x 10: the profiler's recording cost)."""
    params = [False, True]
    param_names = ["record_shapes"]

    def setup(self, record_shapes):
        self.fn = W.profiled_chain("retrograd", record_shapes=record_shapes)

    def time_profiled_chain(self, record_shapes):
        self.fn()


class Compiled:
    """rg.compile (retrograd-compile): overhead_chain's and overhead_wide's
    functions compiled, forward + backward, after the first (tracing) call;
    skipped where retrograd-compile is not installed."""
    params = ["chain", "wide"]
    param_names = ["workload"]

    def setup(self, workload):
        import numpy as np
        try:
            import retrograd as rg
            import retrograd.compile  # noqa: F401
        except ImportError:
            raise NotImplementedError("retrograd-compile is not installed")
        try:
            from . import compile_compare as C
        except ImportError:
            import compile_compare as C
        f = C.chain_rg(rg, W.CHAIN_OPS // 3) if workload == "chain" else C.wide_rg(rg)
        x0 = np.random.default_rng(0 if workload == "chain" else 1).standard_normal(16)
        self.fn = C.grad_step(rg, rg.compile(f), x0)
        self.fn()

    def time_compiled(self, workload):
        self.fn()
