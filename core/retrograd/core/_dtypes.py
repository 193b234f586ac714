"""torch's dtype names, as NumPy dtypes (a tensor's dtype is a NumPy dtype).

`t.dtype == rg.float32` and `t.dtype is rg.float32` hold, and every function
that takes a dtype (creation functions, `.to`, `sum(dtype=)`, ...) takes
them. Kept in a module of their own: `float`, `int` and `bool` are torch's
names (torch.float is float32, torch.int is int32) and must not shadow the
builtins in code that computes. torch.bfloat16 has no NumPy counterpart and
is not provided.
"""
import numpy as _np

__all__ = ["dtype", "float16", "float32", "float64", "int8", "uint8", "int16", "int32", "int64",
           "bool", "complex64", "complex128", "half", "float", "double", "short", "int", "long",
           "cfloat", "cdouble"]

dtype = _np.dtype
float16 = half = _np.dtype(_np.float16)
float32 = float = _np.dtype(_np.float32)
float64 = double = _np.dtype(_np.float64)
int8 = _np.dtype(_np.int8)
uint8 = _np.dtype(_np.uint8)
int16 = short = _np.dtype(_np.int16)
int32 = int = _np.dtype(_np.int32)
int64 = long = _np.dtype(_np.int64)
bool = _np.dtype(_np.bool_)
complex64 = cfloat = _np.dtype(_np.complex64)
complex128 = cdouble = _np.dtype(_np.complex128)
