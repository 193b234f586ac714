"""CPU stand-ins for cupyx.scipy.special's erf, erfc and erfinv (see cupy/__init__.py)."""
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
    # (SciPy, a test requirement, stands in for CuPy's kernel)
    from scipy.special import erfinv as _erfinv
    return _cupy.ndarray(_np.asarray(_erfinv(x._a)).astype(x.dtype))
