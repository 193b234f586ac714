"""The vocabulary of derivatives.yaml formulas: which names a formula may call.

Read by gen_ops.py at build time; a formula calling anything else fails the
build with the file and line of the entry.

Three kinds of callable:
- PRIMITIVES: name -> (array-mode code, tensor-mode code). Array mode runs when
  backward is called without create_graph and works on plain arrays; tensor
  mode runs with create_graph=True and calls the differentiable ops, so the
  backward itself is recorded.
- NS_HELPERS: helpers written once in _formula_helpers.pxi against a namespace
  of primitives; the generator passes `A` (arrays) or `T` (tensors) first.
- VALUE_HELPERS: plain functions of non-tensor values (shapes, dims): the same
  code in both modes.
"""

PRIMITIVES = {
    "cos": ("np.cos", "_op_cos"),
    "sin": ("np.sin", "_op_sin"),
    "exp": ("np.exp", "_op_exp"),
    "log": ("np.log", "_op_log"),
    "tanh": ("np.tanh", "_op_tanh"),
    "sigmoid": ("k_sigmoid", "_op_sigmoid"),
    "matmul": ("np.matmul", "_op_matmul"),
    "reshape": ("np.reshape", "_op_reshape"),
    "transpose": ("k_transpose", "_op_transpose"),
    "permute": ("k_permute", "_op_permute"),
    "expand": ("np.broadcast_to", "_op_expand"),
    "sum_to": ("_rg_sum_to", "_rg_sum_to"),
    "where": ("np.where", "_op_where"),
    "getitem": ("k_getitem", "_op_getitem"),
    "_to_dtype": ("k_to_dtype", "_op__to_dtype"),
    "_to_device": ("_a_to_device", "_op__to_device"),
    # (x > 0) in x's dtype: a constant mask, never differentiated.
    "relu_mask": ("_a_relu_mask", "_t_relu_mask"),
    # erfinv's derivative recomputes it from the input, as torch's formula does
    "erfinv": ("k_erfinv", "_op_erfinv"),
}

NS_HELPERS = {
    "sum_backward",
    "mean_backward",
    "matmul_backward",
    "pow_backward_self",
    "pow_backward_exponent",
    "index_backward",
}

VALUE_HELPERS = {
    "inverse_permutation",
}

# Names a `kernel:` expression may use besides its parameters.
KERNEL_GLOBALS = {"np"}
KERNEL_PREFIXES = ("k_",)

# --- in-place on views and __setitem__ (see _copy_slices.pxi) ---
PRIMITIVES.update({
    "_view_scatter": ("k_view_scatter", "_op__view_scatter"),
    "_as_strided": ("k_as_strided", "_op__as_strided"),
    "_index_put": ("k_index_put", "_op__index_put"),
})
NS_HELPERS.add("as_strided_backward")


# --- shape and indexing ---
PRIMITIVES.update({
    "diagonal": ("k_diagonal", "_op_diagonal"),
    "gather": ("k_gather", "_op_gather"),
})
NS_HELPERS |= {
    "cat_backward",
    "stack_backward",
    "diagonal_backward",
    "gather_backward",
    "scatter_add_jvp",
}


# --- nn.functional ---
NS_HELPERS.update({
    "softmax_backward",
    "log_softmax_backward",
    "log_softmax_jvp",
    "conv2d_fw",
    "conv2d_input_grad",
    "conv2d_weight_grad",
    "conv2d_jvp",
    "conv2d_input_grad_jvp",
    "conv2d_weight_grad_jvp",
    "conv2d_bias_grad",
    "conv2d_bias_jvp",
    "max_pool2d_backward",
    "max_pool2d_jvp",
    "avg_pool2d_fw",
    "avg_pool2d_backward",
})



# --- reductions and linear algebra ---
NS_HELPERS |= {
    "prod_backward", "prod_jvp", "extreme_backward", "extreme_jvp", "var_backward", "var_jvp",
    "std_backward", "std_jvp", "logsumexp_backward", "logsumexp_jvp", "norm_backward", "norm_jvp",
    "cumsum_backward", "cumprod_backward", "cumprod_jvp", "take_dim_backward", "take_dim", "einsum_backward",
    "einsum_jvp", "det_backward", "det_jvp", "slogdet_backward", "logabsdet_jvp", "solve_backward",
    "solve_jvp", "cholesky_backward", "cholesky_jvp",
}


# --- elementwise ops -------------------------------------------------------------
PRIMITIVES.update({
    "sqrt": ("np.sqrt", "_op_sqrt"),
    "sinh": ("np.sinh", "_op_sinh"),
    "cosh": ("np.cosh", "_op_cosh"),
    "sign": ("k_sign", "_op_sign"),
    "erf": ("k_erf", "_op_erf"),
    "floor_divide": ("np.floor_divide", "_op_floor_divide"),
    # fmod's gradient for its divisor (a constant: never differentiated)
    "trunc": ("np.trunc", "_op_trunc"),
    # zeros shaped like its argument: a constant, never differentiated
    "zeros_like": ("k_zeros_like", "_op_zeros_like"),
})
NS_HELPERS |= {
    "atan2_backward",
    "gelu_backward",
    "softplus_backward",
    "sigmoid_backward",
    "silu_backward",
    "clamp_backward",
    "clamp_bound_backward",
    "max_min_backward",
}
# JVP-only helpers: called with tensors (forward AD runs in tensor mode)
VALUE_HELPERS |= {"clamp_jvp", "max_min_jvp", "fill_jvp"}

# --- SVD (helpers at the end of _formula_helpers.pxi) ---
NS_HELPERS |= {"svd_backward", "svd_jvp"}

# --- batching formulas (`batched:` mappings; _batched_formulas.pxi) ---
NS_HELPERS |= {
    "sum_backward_batched", "mean_backward_batched", "matmul_backward_batched",
    "reshape_backward_batched", "transpose_backward_batched", "permute_backward_batched",
}

# --- sort/topk, eigh, qr, pinv, lstsq (_formula_helpers_decompositions.pxi) ---
PRIMITIVES["t"] = ("k_t", "_op_t")
NS_HELPERS |= {"eigh_backward", "eigh_jvp", "qr_backward", "qr_jvp", "pinv_backward", "pinv_jvp",
               "lstsq_backward", "lstsq_jvp"}

# --- special functions (_kernels_special.pyx) ---
PRIMITIVES.update({
    "digamma": ("k_digamma", "_op_digamma"),
    "lgamma": ("k_lgamma", "_op_lgamma"),
    "polygamma": ("k_polygamma", "_op_polygamma"),
    "_multi_polygamma": ("k_multi_polygamma", "_op__multi_polygamma"),
    "i0": ("k_i0", "_op_i0"),
    "_i1": ("k_i1", "_op__i1"),
    # a derivative torch leaves unimplemented (NotImplementedError), for a gradient or a tangent
    "not_implemented": ("k_not_implemented", "_op__not_implemented"),
})
