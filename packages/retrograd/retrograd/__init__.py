"""retrograd: PyTorch's autograd on NumPy (and CuPy) arrays.

    import retrograd as rg
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    x.grad          # tensor([2., 4.])
"""
# Portions of the `retrograd` namespace (retrograd.core, retrograd.engine, ...)
# are separate distributions, possibly installed in different places: let
# them all join this package.
from pkgutil import extend_path

__path__ = extend_path(__path__, __name__)
del extend_path              # not part of the public namespace

from retrograd.core import *  # noqa: E402,F401,F403
from retrograd.core import Tensor, Device, device, OPS as _OPS  # noqa: E402,F401
TYPE_CHECKING = False
if TYPE_CHECKING:   # what core's computed __all__ holds, in a form type checkers read
    from retrograd.core.abi import *  # noqa: F403  (the ops, listed in abi.pyi)
    from retrograd.core._creation import *  # noqa: F403
    from retrograd.core._numpy_like import *  # noqa: F403  (torch's composites, issue 41)
    from retrograd.core._numpy_like_shape import *  # noqa: F403
    from retrograd.core._numpy_like_linalg import *  # noqa: F403
    from retrograd.core._numpy_like_misc import *  # noqa: F403
    from retrograd.core._numpy_like_index import *  # noqa: F403
    from retrograd.core._numpy_like_select import *  # noqa: F403
    from retrograd.core._config import *  # noqa: F403
del TYPE_CHECKING
from retrograd.core import no_grad, enable_grad, set_grad_enabled, inference_mode  # noqa: E402,F401
from retrograd.core import is_grad_enabled, is_inference_mode_enabled  # noqa: E402,F401
from retrograd.core.anomaly_mode import (  # noqa: E402,F401
    is_anomaly_enabled, is_anomaly_check_nan_enabled, set_anomaly_enabled,
)
from retrograd import autograd  # noqa: E402,F401
from retrograd import nn  # noqa: E402,F401
from retrograd import linalg  # type: ignore[no-redef]  # noqa: E402,F401 (replaces core's)
from retrograd import utils  # noqa: E402,F401
from retrograd import optim  # noqa: E402,F401
from retrograd import cuda  # noqa: E402,F401
from retrograd.serialization import save, load  # noqa: E402,F401


# rg.compile guards the state of the nn.Modules a compiled function runs
# (parameters, buffers and children by identity, plain attributes by value);
# it learns nn.Module through core's registry, since compile is below the
# umbrella and never imports it (docs/design.md, "Layers"). Registering in
# core costs no import of compile.
from retrograd.core import extending as _extending  # noqa: E402

_extending.register_module_type(nn.Module, ("_parameters", "_buffers", "_modules"))
del _extending

from typing import Any as _Any  # noqa: E402
from retrograd._version import __version__  # noqa: E402,F401


from retrograd._missing import module_getattr as _module_getattr  # noqa: E402
_torch_name_missing = _module_getattr("torch", "retrograd")
del _module_getattr


# the names of retrograd._torch_functional (its NAMES; a test keeps the two equal)
_TORCH_TWINS = frozenset((
    "adaptive_avg_pool1d", "adaptive_max_pool1d", "alpha_dropout", "alpha_dropout_", "avg_pool1d", "batch_norm",
    "bilinear", "binary_cross_entropy_with_logits", "celu", "celu_", "channel_shuffle", "conv1d", "conv2d",
    "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "convolution", "cosine_embedding_loss",
    "cosine_similarity", "ctc_loss", "dropout", "dropout_", "embedding", "feature_alpha_dropout",
    "feature_alpha_dropout_", "feature_dropout", "feature_dropout_", "group_norm", "hardshrink",
    "hinge_embedding_loss", "instance_norm", "kl_div", "layer_norm", "margin_ranking_loss", "max_pool1d",
    "max_pool1d_with_indices", "max_pool3d", "pairwise_distance", "pdist", "pixel_shuffle", "pixel_unshuffle",
    "poisson_nll_loss", "prelu", "rms_norm", "rrelu", "rrelu_", "selu", "selu_", "threshold", "threshold_",
    "triplet_margin_loss", "lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell", "Size",
    "nuclear_norm", "frobenius_norm", "binomial", "histogramdd", "empty_strided",
    "affine_grid_generator", "grid_sampler", "grid_sampler_2d", "grid_sampler_3d",
    "embedding_renorm_", "index_put_", "addmv_", "default_generator", "empty_permuted",
    "lstm", "gru", "rnn_tanh", "rnn_relu", "embedding_bag", "thread_safe_generator",
))


def __getattr__(name: str) -> _Any:   # (a namespace module, or the bfloat16 dtype)
    if name == "profiler":
        from retrograd import _optional
        return _optional.require("profiler", "retrograd-profiler")
    if name == "distributed":
        from retrograd import _optional
        return _optional.require("distributed", "retrograd-distributed")
    if name == "compile":
        # torch.compile's place: the module is callable (rg.compile(fn))
        from retrograd import _optional
        return _optional.require("compile", "retrograd-compile")
    if name == "bfloat16":
        import retrograd.core
        return retrograd.core.bfloat16      # (core's: ml_dtypes' bfloat16, or a clear AttributeError)
    if name == "autocast":
        from retrograd.amp import autocast
        return autocast
    if name == "GradScaler":            # torch.GradScaler is torch.amp.GradScaler
        from retrograd.amp import GradScaler
        return GradScaler
    if name in _TORCH_TWINS:
        # torch's top-level twins of nn.functional (torch.conv2d, torch.dropout, ...), loaded on first use
        import importlib
        return getattr(importlib.import_module("retrograd._torch_functional"), name)
    if name in ("backends", "accelerator", "onnx", "amp"):
        # torch's switches and device queries, loaded when a program asks
        import importlib
        return importlib.import_module(f"retrograd.{name}")
    # a torch name retrograd deliberately lacks says so (the omissions table,
    # loaded on such a miss only)
    _torch_name_missing(name)


def _tensor_attribute_hook(name: str) -> None:
    # core's Tensor calls this when an attribute lookup fails (a registration:
    # core never imports this package)
    import importlib
    importlib.import_module("retrograd._omissions").tensor_attribute(name)


from retrograd.core.extending import register_missing_attribute_hook as _register  # noqa: E402
_register(_tensor_attribute_hook)
del _register
