# retrograd.core._kernels_nn: see the module. Private to core: abi (the
# generated ops, formula helpers) cimports these.

cdef object k_softmax(object x, object dim)
cdef object k_log_softmax(object x, object dim)
cdef object k_logsigmoid(object x)
cdef tuple _pair(object v, str what)
cdef object _conv_windows(object x, int kh, int kw, tuple stride, tuple padding, tuple dilation,
                          object pad_value=*)
cdef object _im2col(object x, int kh, int kw, tuple stride, tuple padding, tuple dilation, int groups)
cdef void _check_conv(object x, object w, int groups) except *
cdef object k_conv2d(object x, object w, object stride, object padding, object dilation, int groups)
cdef object k_conv2d_bias(object x, object w, object b, object stride, object padding, object dilation,
                          int groups)
cdef object _pitched_grad(object g, Py_ssize_t Wp)
cdef tuple _im2col_pitched(object x, int kh, int kw, tuple padding, tuple dilation, int groups,
                           bint zero_tail)
cdef object k_conv2d_input_grad(object g, object w, object input_shape, object stride, object padding,
                                object dilation, int groups)
cdef object k_conv2d_weight_grad(object x, object g, object weight_shape, object stride, object padding,
                                 object dilation, int groups)
cdef tuple _pool_params(object x, object kernel_size, object stride, object padding, object dilation,
                        bint ceil_mode)
cdef object _pool_out_size(object n, object k, object s, object p, object d, bint ceil_mode)
cdef tuple _pool_geometry(object x, tuple ks, tuple st, tuple pd, tuple dl, bint ceil_mode)
cdef tuple _max_pool_argmax(object x, object kernel_size, object stride, object padding,
                            object dilation, bint ceil_mode)
cdef tuple _max_pool_windows(object x, object kernel_size, object stride, object padding,
                             object dilation, bint ceil_mode)
cdef object k_max_pool2d(object x, object kernel_size, object stride, object padding, object dilation,
                         bint ceil_mode)
cdef object k_max_pool2d_backward_fast(object g, object x, object result, object kernel_size,
                                       object stride, object padding, object dilation, bint ceil_mode)
cdef object k_max_pool2d_flat_index(object x, object kernel_size, object stride, object padding,
                                    object dilation, bint ceil_mode)
cdef tuple _max_pool_index(object x, object kernel_size, object stride, object padding, object dilation,
                           bint ceil_mode)
cdef object _avg_divisor(tuple shape4, tuple ks, tuple st, tuple pd, int Ho, int Wo,
                         bint count_include_pad, object divisor_override, object dtype)
cdef object k_avg_pool2d(object x, object kernel_size, object stride, object padding, bint ceil_mode,
                         bint count_include_pad, object divisor_override)
cdef object k_avg_pool2d_backward(object g, object shape, object kernel_size, object stride,
                                  object padding, bint ceil_mode, bint count_include_pad,
                                  object divisor_override)
