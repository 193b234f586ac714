"""The torch names retrograd deliberately lacks: one table, with the reason
and what to use instead (issue 41).

Read on a miss only (``import retrograd`` never loads this module): the
module ``__getattr__`` hooks of ``retrograd``, ``retrograd.nn``,
``retrograd.nn.functional``, ``retrograd.optim``,
``retrograd.optim.lr_scheduler`` and ``retrograd.utils.data``, and the hook
core's Tensor calls when an attribute lookup fails, raise AttributeError
with the row's reason and alternative. The docs page of omissions is
generated from ``OMISSIONS`` (docs/_ext/rg_omissions.py), and
tests/fidelity/test_torch_coverage.py checks each name against torch 2.13.

A row is ``(names, reason, instead)``: ``names`` a space-separated string.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

Row = Tuple[str, str, str]

_JIT = ("TorchScript and the JIT's IR: retrograd runs Python eagerly over NumPy, with no graph compiler "
        "or serialized program format")
_JIT_INSTEAD = "plain Python functions and modules; rg.compile for tracing whole steps"
_QUANT = "quantized tensors: NumPy has no quantized dtypes or kernels"
_QUANT_INSTEAD = "float tensors (quantize by hand with rg.round and a scale if you need the values)"
_SPARSE = "sparse layouts (COO, CSR, CSC, BSR, BSC): every retrograd tensor is a dense NumPy array"
_SPARSE_INSTEAD = "dense tensors (Tensor.to_dense is not needed: they already are)"
_BACKEND = "a kernel of one of torch's native backends (cuDNN, MIOpen, MKL-DNN, FBGEMM), not a public operation"
_COPY = ("functionalization's out-of-place copies of view ops (torch's internals for compilers): "
         "retrograd has no functionalization pass")
_SYM = "symbolic shapes (torch.compile's dynamic shapes): retrograd's shapes are always concrete ints"
_DTYPE = "a dtype NumPy does not have"
_STORAGE = "torch's typed storages and legacy tensor types: retrograd tensors wrap NumPy arrays directly"
_DEVICE = "a device retrograd does not run on (CPU, and CUDA through CuPy, only)"
_DISPATCH = "torch's dispatcher internals: retrograd has no dispatch keys or __torch_function__ modes"
_NESTED = "nested (jagged) tensors: every retrograd tensor is a dense array of one shape"
_TYPING = "a typing or helper module that torch's module happens to import; not part of its API"
_SYNC = "multi-process synchronization of torch.distributed, which retrograd-distributed does not mirror"

OMISSIONS: Dict[str, List[Row]] = {
    "torch": [
        ("AliasDb AnyType Argument ArgumentSpec AwaitType Block BoolType CallStack Capsule ClassType Code "
         "CompilationUnit CompleteArgumentSpec ComplexType ConcreteModuleType ConcreteModuleTypeBuilder "
         "DeepCopyMemoTable DeserializationStorageContext DeviceObjType DictType EnumType ErrorReport "
         "ExecutionPlan FileCheck FloatType FunctionSchema FutureType Gradient Graph GraphExecutorState "
         "IODescriptor InferredType IntType InterfaceType JITException ListType LiteScriptModule "
         "LockingLogger NoneType NoopLogger NumberType OperatorInfo OptionalType PyObjectType RRefType "
         "ScriptClass ScriptClassFunction ScriptDict ScriptDictIterator ScriptDictKeyIterator "
         "ScriptFunction ScriptList ScriptListIterator ScriptMethod ScriptModule ScriptModuleSerializer "
         "ScriptObject ScriptObjectProperty SerializationStorageContext StaticModule StreamObjType "
         "StringType SymBoolType SymIntType TensorType TracingState TupleType Type UnionType Use Value "
         "AggregationType AVG SUM import_ir_module import_ir_module_from_buffer merge_type_from_type_comment "
         "parse_ir parse_schema parse_type_comment unify_type_list fork wait Future Tag "
         "BenchmarkConfig BenchmarkExecutionStats ThroughputBenchmark PyTorchFileReader PyTorchFileWriter "
         "cpp export ModuleDict ParameterDict BufferDict FatalError", _JIT, _JIT_INSTEAD),
        ("DispatchKey DispatchKeySet ExcludeDispatchKeyGuard DisableTorchFunction DisableTorchFunctionSubclass",
         _DISPATCH, "subclass Tensor in Python, or wrap the functions you need"),
        ("qint8 qint32 quint8 quint4x2 quint2x4 qscheme dequantize quantize_per_channel quantize_per_tensor "
         "quantize_per_tensor_dynamic q_per_channel_axis q_per_channel_scales q_per_channel_zero_points "
         "q_scale q_zero_point int_repr fake_quantize_per_channel_affine fake_quantize_per_tensor_affine "
         "fused_moving_avg_obs_fake_quant choose_qparams_optimized quantized_batch_norm quantized_gru_cell "
         "quantized_lstm_cell quantized_max_pool1d quantized_max_pool2d quantized_max_pool3d "
         "quantized_rnn_relu_cell quantized_rnn_tanh_cell empty_quantized", _QUANT, _QUANT_INSTEAD),
        ("sparse_coo_tensor sparse_csr_tensor sparse_csc_tensor sparse_bsr_tensor sparse_bsc_tensor "
         "sparse_compressed_tensor smm hsmm dsmm hspmm spmm sspaddmm saddmm resize_as_sparse_ "
         "ccol_indices_copy col_indices_copy crow_indices_copy row_indices_copy indices_copy values_copy",
         _SPARSE, "dense tensors and rg.matmul"),
        ("cudnn_affine_grid_generator cudnn_batch_norm cudnn_convolution cudnn_convolution_add_relu "
         "cudnn_convolution_relu cudnn_convolution_transpose cudnn_grid_sampler cudnn_is_acceptable "
         "miopen_batch_norm miopen_convolution miopen_convolution_add_relu miopen_convolution_relu "
         "miopen_convolution_transpose miopen_ctc_loss miopen_depthwise_convolution miopen_rnn "
         "mkldnn_adaptive_avg_pool2d mkldnn_convolution mkldnn_linear_backward_weights mkldnn_max_pool2d "
         "mkldnn_max_pool3d mkldnn_rnn_layer fbgemm_linear_fp16_weight "
         "fbgemm_linear_fp16_weight_fp32_activation fbgemm_linear_int8_weight "
         "fbgemm_linear_int8_weight_fp32_activation fbgemm_linear_quantize_weight "
         "fbgemm_pack_gemm_matrix_fp16 fbgemm_pack_quantized_matrix conv_tbc is_vulkan_available "
         "native_batch_norm native_channel_shuffle native_dropout native_group_norm native_layer_norm "
         "native_norm batch_norm_backward_elemt batch_norm_backward_reduce batch_norm_elemt "
         "batch_norm_gather_stats batch_norm_gather_stats_with_counts batch_norm_stats "
         "batch_norm_update_stats", _BACKEND, "the public functions of rg.nn.functional"),
        ("alias_copy as_strided_copy detach_copy diagonal_copy expand_copy narrow_copy permute_copy "
         "select_copy slice_copy split_copy split_with_sizes_copy squeeze_copy t_copy transpose_copy "
         "unbind_copy unfold_copy unsqueeze_copy view_copy view_as_complex_copy view_as_real_copy",
         _COPY, "the view op followed by .clone()"),
        ("SymBool SymFloat SymInt sym_constrain_range sym_constrain_range_for_size sym_float sym_fresh_size "
         "sym_int sym_ite sym_max sym_min sym_not sym_sqrt sym_sum", _SYM, "Python ints and floats"),
        ("bits16 bits1x8 bits2x4 bits4x2 bits8 complex32 float4_e2m1fn_x2 float8_e4m3fn float8_e4m3fnuz "
         "float8_e5m2 float8_e5m2fnuz float8_e8m0fnu int1 int2 int3 int4 int5 int6 int7 uint1 uint2 uint3 "
         "uint4 uint5 uint6 uint7 bit chalf", _DTYPE, "float16, bfloat16 (with ml_dtypes), float32 or the 8-bit and "
         "wider integer dtypes"),
        ("BoolStorage ByteStorage CharStorage DoubleStorage FloatStorage IntStorage LongStorage ShortStorage "
         "TypedStorage UntypedStorage BoolTensor ByteTensor CharTensor DoubleTensor FloatTensor IntTensor "
         "LongTensor ShortTensor set_default_tensor_type is_storage", _STORAGE,
         "rg.tensor(..., dtype=...) and rg.set_default_dtype"),
        ("Event Stream AcceleratorError get_device_module", _DEVICE + " (CUDA streams and events are CuPy's)",
         "cupy.cuda.Stream and cupy.cuda.Event with CuPy arrays"),
        ("get_autocast_ipu_dtype get_autocast_xla_dtype is_autocast_ipu_enabled is_autocast_xla_enabled "
         "set_autocast_ipu_dtype set_autocast_ipu_enabled set_autocast_xla_dtype set_autocast_xla_enabled",
         _DEVICE + " (autocast's IPU and XLA switches)", "rg.autocast('cpu') or rg.autocast('cuda')"),
        ("is_distributed", _SYNC, "rg.distributed (retrograd-distributed)"),
        ("cond", "a control-flow operator for torch.export and torch.compile graphs: retrograd runs Python's "
         "if/else eagerly (rg.compile traces each branch taken)", "a Python if statement"),
        ("from_file", _STORAGE, "numpy.fromfile or numpy.memmap, then rg.from_numpy"),
        ("init_num_threads get_num_interop_threads set_num_interop_threads", "torch's inter-op thread pool: "
         "retrograd runs one op at a time on the calling thread (its engine's worker threads are per device)",
         "rg.set_num_threads for the BLAS threads"),
        ("norm_except_dim", "an internal helper of torch's legacy weight_norm", "rg.nn.utils.weight_norm"),
        ("OutOfMemoryError", "torch's CUDA allocator error: retrograd's arrays come from NumPy and CuPy, which "
         "raise their own (MemoryError, cupy.cuda.memory.OutOfMemoryError)", "catch MemoryError (and CuPy's "
         "OutOfMemoryError on GPUs)"),
        ("resize_as_", "resizing an array in place: a NumPy array's memory is fixed once it has views",
         "rg.empty_like(other) or Tensor.new_empty(other.shape)"),
        ("vmap", "torch.func's function transforms are not mirrored",
         "rg.autograd.functional (jacobian, hessian, vjp, jvp) and rg.autograd.grad(..., is_grads_batched=True)"),
        ("stft istft", "retrograd has no FFT module (torch.fft) to differentiate through",
         "numpy.fft on detached arrays (no gradient)"),
        ("geqrf orgqr ormqr lobpcg", "LAPACK's Householder-form routines and the LOBPCG eigensolver are not "
         "mirrored", "rg.linalg.qr and rg.linalg.eigh"),
        ("has_lapack has_mkl has_openmp has_spectral", "torch's build flags (deprecated in torch itself)",
         "rg.backends"),
        ("set_flush_denormal", "NumPy has no switch for flushing denormal numbers to zero",
         "nothing: denormals are kept, as IEEE 754 says"),
        ("layout memory_format", "the types of torch's layouts and memory formats: a retrograd tensor has one "
         "layout (rg.strided) and NumPy's memory order", "rg.strided and Tensor.is_contiguous()"),
        ("slice_inverse", _COPY, "the view op followed by .clone()"),
    ],
    "torch.Tensor": [
        ("dequantize int_repr q_per_channel_axis q_per_channel_scales q_per_channel_zero_points q_scale "
         "q_zero_point qscheme is_quantized", _QUANT, _QUANT_INSTEAD),
        ("coalesce col_indices crow_indices ccol_indices row_indices indices values dense_dim sparse_dim "
         "sparse_mask sparse_resize_ sparse_resize_and_clear_ to_sparse to_sparse_bsc to_sparse_bsr "
         "to_sparse_coo to_sparse_csc to_sparse_csr to_dense is_coalesced is_sparse is_sparse_csr smm "
         "sspaddmm resize_as_sparse_", _SPARSE, _SPARSE_INSTEAD),
        ("to_mkldnn is_mkldnn", _BACKEND, "plain tensors"),
        ("ipu xpu mtia is_ipu is_maia is_meta is_mtia is_vulkan is_xla", _DEVICE, "Tensor.cpu() or Tensor.cuda()"),
        ("storage storage_type untyped_storage set_ is_set_to record_stream", _STORAGE,
         "numpy.asarray(t.detach()) for the data, Tensor.data_ptr() for its address"),
        ("to_padded_tensor is_nested", _NESTED, "padding by hand (rg.nn.functional.pad) and a mask"),
        ("volatile reinforce", "removed from torch long ago (volatile before 0.4, reinforce before 0.3)",
         "rg.no_grad() for volatile; rg.autograd for custom gradients"),
        ("eig symeig lstsq solve", "removed from torch's Tensor (2.0 and earlier)",
         "rg.linalg.eigh, rg.linalg.lstsq and rg.linalg.solve"),
        ("stft istft", "retrograd has no FFT module (torch.fft) to differentiate through",
         "numpy.fft on detached arrays (no gradient)"),
        ("geqrf orgqr ormqr", "LAPACK's Householder-form routines are not mirrored", "rg.linalg.qr"),
        ("layout", "a retrograd tensor has one layout (strided)", "rg.strided"),
        ("resize resize_ resize_as resize_as_", "resizing an array in place: a NumPy array's memory is fixed "
         "once it has views", "Tensor.new_empty(shape) or Tensor.reshape"),
        ("share_memory_ is_shared", "moving a tensor's memory into shared memory in place: a NumPy array cannot "
         "change its memory", "DataLoader workers, which send batches through shared memory already"),
        ("name", "named tensors (a prototype torch never finished)", "plain dims, with names in your own code"),
        ("new", "the legacy constructor Tensor.new, deprecated in torch", "Tensor.new_tensor, Tensor.new_empty"),
        ("index", "first-class dimensions (functorch.dim)", "indexing and rg.einsum"),
        ("slice_inverse", "an internal of torch.compile's functionalization", "Tensor.slice_scatter"),
        ("chalf", "complex32: " + _DTYPE, "Tensor.cfloat() (complex64)"),
        ("is_distributed", _SYNC, "rg.distributed (retrograd-distributed)"),
    ],
    "torch.nn": [
        ("quantized qat quantizable intrinsic", _QUANT, _QUANT_INSTEAD),
        ("common_types factory_kwargs", _TYPING, "int or tuple arguments; device= and dtype= keywords"),
        ("SyncBatchNorm", "batch statistics reduced across processes during the forward pass: "
         "retrograd-distributed reduces gradients (DistributedDataParallel), not activations",
         "rg.nn.BatchNorm1d/2d/3d per process (or a larger per-process batch)"),
    ],
    "torch.nn.functional": [
        ("BroadcastingList1 BroadcastingList2 BroadcastingList3 Callable DType Optional ScalingType SwizzleType "
         "TYPE_CHECKING dataclasses importlib math torch", _TYPING, "the typing and math modules themselves"),
        ("assert_int_or_pair boolean_dispatch", "an internal helper of torch.nn.functional's own code",
         "plain Python"),
        ("handle_torch_function has_torch_function has_torch_function_unary has_torch_function_variadic",
         _DISPATCH, "subclass Tensor in Python, or wrap the functions you need"),
        ("grouped_mm scaled_mm scaled_grouped_mm", "low-precision (float8) GEMM kernels of CUDA's tensor cores",
         "rg.matmul in float32 or float16"),
        ("reproducibility_notes sparse_support_notes tf32_notes", "a docstring fragment torch's documentation "
         "pastes into other docstrings; not an API", "the docs of the function concerned"),
    ],
    "torch.optim": [],
    "torch.optim.lr_scheduler": [],
    "torch.utils.data": [
        ("DFIterDataPipe DataChunk IterDataPipe MapDataPipe argument_validation functional_datapipe "
         "guaranteed_datapipes_determinism non_deterministic runtime_validation runtime_validation_disabled",
         "the DataPipes of torchdata, deprecated in torch 2.x and removed from torchdata",
         "Dataset, IterableDataset and DataLoader (rg.utils.data)"),
    ],
}

#: the retrograd module of each torch namespace
MODULES = {
    "torch": "retrograd",
    "torch.Tensor": "retrograd.Tensor",
    "torch.nn": "retrograd.nn",
    "torch.nn.functional": "retrograd.nn.functional",
    "torch.optim": "retrograd.optim",
    "torch.optim.lr_scheduler": "retrograd.optim.lr_scheduler",
    "torch.utils.data": "retrograd.utils.data",
}

_INDEX: Optional[Dict[str, Dict[str, Tuple[str, str]]]] = None


def index() -> Dict[str, Dict[str, Tuple[str, str]]]:
    """{namespace: {name: (reason, instead)}}, built once."""
    global _INDEX
    if _INDEX is None:
        out: Dict[str, Dict[str, Tuple[str, str]]] = {}
        for ns, rows in OMISSIONS.items():
            names = out.setdefault(ns, {})
            for row_names, reason, instead in rows:
                for n in row_names.split():
                    if n in names:
                        raise AssertionError(f"{ns}.{n} is listed twice in the omissions table")
                    names[n] = (reason, instead)
        _INDEX = out
    return _INDEX


def message(namespace: str, name: str) -> Optional[str]:
    """The AttributeError message for ``namespace.name`` if it is a
    deliberate omission, else None."""
    row = index().get(namespace, {}).get(name)
    if row is None:
        return None
    reason, instead = row
    where = MODULES[namespace]
    return (f"{where} has no attribute {name!r}: retrograd deliberately leaves out {namespace}.{name} "
            f"({reason}). Use instead: {instead}. (See the omissions page of the docs.)")


def check(namespace: str, name: str) -> None:
    """Raise the helpful AttributeError when ``namespace.name`` is a
    deliberate omission; return otherwise."""
    msg = message(namespace, name)
    if msg is not None:
        raise AttributeError(msg, name=name)


def missing(namespace: str, module_name: str, name: str) -> AttributeError:
    """The AttributeError for a failed ``module.name``: the omission's
    explanation, or Python's usual message."""
    msg = message(namespace, name)
    if msg is None:
        msg = f"module {module_name!r} has no attribute {name!r}"
    return AttributeError(msg, name=name)


def tensor_attribute(name: str) -> None:
    """The hook core's Tensor calls when an attribute lookup fails."""
    check("torch.Tensor", name)
