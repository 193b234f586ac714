# The core ABI this project was compiled against: compile-time constants
# only, so importing this module touches no core type (abi.pxd, rule 3).
from retrograd.core.abi cimport RG_ABI_MAJOR, RG_ABI_MINOR

BUILT_AGAINST = (RG_ABI_MAJOR, RG_ABI_MINOR)
