# retrograd.core._nn_loops: convolution and pooling loops over arrays (see
# the module). Private to core: the nn kernels cimport these.

# column-matrix convolution (stride 1, no groups, NumPy float32/64 of one
# dtype, column depth C*kh*kw <= 576: _cols_conv_ok says)
cdef bint _cols_conv_ok(object a, object b, Py_ssize_t depth)
cdef object _conv2d_cols(object x, object w, tuple padding, tuple dilation, object bias=*)
cdef object _conv2d_input_grad_cols(object g, object w, tuple input_shape, tuple padding,
                                    tuple dilation)
cdef object _conv2d_weight_grad_cols(object x, object g, tuple weight_shape, tuple padding,
                                     tuple dilation)

# max_pool2d's backward on windows that tile the input; None otherwise
cdef object _loop_max_pool2d_backward_tiled(object g, object x4, object r, tuple ks, tuple st,
                                            tuple pd, tuple dl, Py_ssize_t Ho, Py_ssize_t Wo,
                                            Py_ssize_t H, Py_ssize_t W)

# stride-1 convolution as shifted GEMMs (any groups and float dtypes)
cdef object _conv2d_shift(object x, object w, tuple padding, tuple dilation, int groups)
cdef object _conv2d_input_grad_shift(object g, object w, tuple input_shape, tuple padding,
                                     tuple dilation, int groups)
cdef object _conv2d_weight_grad_shift(object x, object g, tuple weight_shape, tuple padding,
                                      tuple dilation, int groups)


cdef inline bint _shift_worth(Py_ssize_t pixels):
    # the shifted GEMMs are batched per image: below this many pixels per
    # image they are too small, and one im2col GEMM over the batch wins
    return pixels >= 64
