"""CPU stand-ins for cupyx.scipy.special's functions that retrograd calls (see
cupy/__init__.py): erf, erfc, erfinv, gammaln, digamma, polygamma, i0, i1,
gammainc and gammaincc. SciPy, a test requirement, stands in for CuPy's
kernels (CuPy's are ports of the same Cephes code); like CuPy's ufuncs they
take device arrays (or scalars), never NumPy arrays, and keep a float32
input's dtype."""
import math

import numpy as _np

import cupy as _cupy

_verf = _np.vectorize(math.erf, otypes=[float])
_verfc = _np.vectorize(math.erfc, otypes=[float])


def erf(x):
    return _cupy.ndarray(_verf(x._a).astype(x.dtype))


def erfc(x):
    return _cupy.ndarray(_np.asarray(_verfc(x._a)).astype(x.dtype))


def erfinv(x):
    from scipy.special import erfinv as _erfinv
    return _cupy.ndarray(_np.asarray(_erfinv(x._a)).astype(x.dtype))


def _operand(x, fn):
    if type(x) is _cupy.ndarray:
        return x._a
    if isinstance(x, _np.ndarray):
        raise TypeError(f"Unsupported type {type(x)} (a NumPy array given to cupyx.scipy.special.{fn})")
    return x


def _ufunc(name):
    # scipy.special.<name> over the wrapped arrays, in the inputs' float dtype
    def fn(*args):
        import scipy.special
        arrays = [_operand(a, name) for a in args]
        out = _np.asarray(getattr(scipy.special, name)(*arrays))
        return _cupy.ndarray(out.astype(_np.result_type(*arrays), copy=False))
    fn.__name__ = name
    return fn


gammaln = _ufunc("gammaln")
digamma = _ufunc("digamma")
i0 = _ufunc("i0")
i1 = _ufunc("i1")
gammainc = _ufunc("gammainc")
gammaincc = _ufunc("gammaincc")


def polygamma(n, x):
    # CuPy's: n and x broadcast against each other; digamma where n == 0
    import scipy.special
    nn, xx = _operand(n, "polygamma"), _operand(x, "polygamma")
    out = _np.asarray(scipy.special.polygamma(nn, xx))
    return _cupy.ndarray(out.astype(_np.result_type(xx), copy=False))
