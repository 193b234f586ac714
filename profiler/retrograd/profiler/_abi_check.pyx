# cython: language_level=3
# The core ABI this profiler was compiled against. Uses only compile-time
# constants from abi.pxd, so importing it touches no core type: the check in
# __init__.py runs before any type layout could disagree.
from retrograd.core.abi cimport RG_ABI_MAJOR, RG_ABI_MINOR

BUILT_AGAINST = (RG_ABI_MAJOR, RG_ABI_MINOR)
