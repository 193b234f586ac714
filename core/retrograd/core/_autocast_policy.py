"""Which ops autocast casts, and to what: torch's lists (its
autocast_mode.cpp), by op name, for the CPU and for CUDA.

Note [Autocast]
~~~~~~~~~~~~~~~
Inside ``rg.autocast(device_type, dtype)`` (the umbrella's amp/autocast_mode.py),
an op named in these lists casts its floating Tensor arguments before it
computes, as torch's autocast does:
- ``lower_precision_fp``: to the region's dtype (float16, or bfloat16 where
  ml_dtypes is installed): the matrix products and convolutions, which are
  what lower precision speeds up;
- ``fp32``: to float32: ops whose results lose too much in 16 bits (losses,
  reductions, linear algebra, and on CUDA the transcendental functions).
float64 arguments are never cast (torch's rule), nor are integer ones. Ops
not listed run in the dtype of their inputs, NumPy's promotion picking the
widest (torch's ``promote`` list asks for nothing more here).

The casts are recorded ops (``Tensor.to``), so gradients flow back to the
float32 parameters in float32. An op that casts runs its body with autocast
off, as torch's autocast kernels do: a composite's inner ops are not cast
again. Who reads these lists: gen_ops.py, at build time, puts the check
``if rg_tls_autocast:`` at the top of each listed table op (one C branch of
a thread-local int when autocast is off); ``composite_op(name)`` looks the
name up when it wraps a composite (_op_events.pxi); the cast itself is
_autocast.pxi's. tests/amp/test_autocast_policy.py runs each listed op that
retrograd has under torch's autocast and ours and compares the dtypes.

Not mirrored: torch's cast cache (a leaf weight cast once per region; here
each use casts again, which costs time, not accuracy).
"""
from __future__ import annotations

from typing import Dict, Tuple

# policy codes, as the generated code passes them (_autocast.pxi)
NONE, LOWER, FP32, BANNED = 0, 1, 2, 3

_CPU_LOWER = """
conv1d conv2d conv3d bmm mm linalg_vecdot baddbmm addmm _addmm_activation addbmm linear _convolution matmul
conv_tbc mkldnn_rnn_layer conv_transpose1d conv_transpose2d conv_transpose3d prelu scaled_dot_product_attention
_native_multi_head_attention
"""
_CPU_FP32 = """
avg_pool3d binary_cross_entropy grid_sampler polar prod quantile nanquantile stft cdist grid_sampler_2d
grid_sampler_3d trace view_as_complex cholesky cholesky_inverse cholesky_solve inverse lu_solve orgqr ormqr
pinverse max_pool3d max_unpool2d max_unpool3d adaptive_avg_pool3d reflection_pad1d reflection_pad2d
replication_pad1d replication_pad2d replication_pad3d mse_loss cosine_embedding_loss nll_loss nll_loss2d
hinge_embedding_loss poisson_nll_loss smooth_l1_loss cross_entropy_loss cross_entropy l1_loss huber_loss
margin_ranking_loss soft_margin_loss triplet_margin_loss multi_margin_loss ctc_loss kl_div multilabel_margin_loss
binary_cross_entropy_with_logits linalg_cond linalg_matrix_rank linalg_solve linalg_cholesky linalg_svdvals
linalg_eigvals linalg_eigvalsh linalg_inv linalg_householder_product linalg_tensorinv linalg_tensorsolve geqrf
_lu_with_info qr svd triangular_solve fractional_max_pool2d fractional_max_pool3d adaptive_max_pool3d linalg_qr
linalg_cholesky_ex linalg_svd linalg_eig linalg_eigh linalg_lstsq linalg_inv_ex
"""
_CUDA_LOWER = """
_convolution conv1d conv2d conv3d conv_tbc conv_transpose1d conv_transpose2d conv_transpose3d convolution prelu
addmm addmv addr matmul einsum mm mv linalg_vecdot linear addbmm baddbmm bmm chain_matmul linalg_multi_dot
_thnn_fused_lstm_cell _thnn_fused_gru_cell lstm_cell gru_cell rnn_tanh_cell rnn_relu_cell
_scaled_dot_product_flash_attention scaled_dot_product_attention
"""
_CUDA_FP32 = """
acos asin cosh erfinv exp expm1 log log10 log2 log1p reciprocal rsqrt sinh tan pow softplus layer_norm
native_layer_norm group_norm frobenius_norm nuclear_norm cosine_similarity poisson_nll_loss cosine_embedding_loss
nll_loss nll_loss2d hinge_embedding_loss kl_div l1_loss smooth_l1_loss huber_loss mse_loss margin_ranking_loss
multilabel_margin_loss soft_margin_loss triplet_margin_loss multi_margin_loss binary_cross_entropy_with_logits
dist pdist cdist renorm logsumexp upsample_nearest1d upsample_nearest2d upsample_nearest3d upsample_bilinear2d
upsample_linear1d upsample_trilinear3d upsample_bicubic2d prod softmax log_softmax cumprod cumsum
linalg_vector_norm linalg_matrix_norm sum cross_entropy_loss cross_entropy
"""
# torch refuses binary_cross_entropy under CUDA autocast (its inputs, sigmoid's
# outputs, may round to 1 in float16): binary_cross_entropy_with_logits is safe
_CUDA_BANNED = "binary_cross_entropy"


def _table() -> Dict[str, Tuple[int, int]]:
    out: Dict[str, Tuple[int, int]] = {}

    def put(names: str, device: int, code: int) -> None:
        for n in names.split():
            cpu, cuda = out.get(n, (NONE, NONE))
            out[n] = (code, cuda) if device == 0 else (cpu, code)
    put(_CPU_LOWER, 0, LOWER)
    put(_CPU_FP32, 0, FP32)
    put(_CUDA_LOWER, 1, LOWER)
    put(_CUDA_FP32, 1, FP32)
    put(_CUDA_BANNED, 1, BANNED)
    return out


#: op name -> (CPU policy, CUDA policy)
POLICIES: Dict[str, Tuple[int, int]] = _table()


def policy(name: str) -> Tuple[int, int]:
    """The (CPU, CUDA) policy codes of the op ``name`` (``(NONE, NONE)`` when unlisted)."""
    return POLICIES.get(name, (NONE, NONE))
