# retrograd.core._kernels_shape: see the module. Private to core: abi (the
# generated ops, formula helpers) cimports these.

cdef object _strided_region(object a, object offset, object shape, object strides)
cdef object k_view_scatter(object base, object src, object offset, object shape, object strides)
cdef object k_as_strided(object a, object offset, object shape, object strides)
cdef object k_index_put(object a, object index, object values)
cdef object k_cat(list arrs, object dim)
cdef object k_stack(list arrs, object dim)
cdef object k_diagonal(object a, object offset, object dim1, object dim2)
cdef object k_diagonal_backward(object g, object shape, object dtype, object offset, object dim1,
                                object dim2)
cdef tuple _scatter_coords(object index, int d)
cdef object _check_gather_index(str op, object a, object index, int d, object other=*)
cdef object k_gather(object a, object dim, object index)
cdef object k_scatter_add(object a, object dim, object index, object src)
