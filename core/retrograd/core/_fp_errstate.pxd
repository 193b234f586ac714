# retrograd.core._fp_errstate: NumPy's errstate set to ignore around
# kernels and backward passes, as torch never warns (see the module).
# Private to core. Each enter returns a token for its exit (None when
# NumPy already ignores: nested calls).

cdef object _fp_quiet_enter()                   # in the caller's Context (backward)
cdef int _fp_quiet_exit(object token) except -1
cdef object _fp_kernel_enter()                  # in this thread's quiet Context (a kernel)
cdef int _fp_kernel_exit(object token) except -1
