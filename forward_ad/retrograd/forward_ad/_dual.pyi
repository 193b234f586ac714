# The type stub of retrograd.forward_ad._dual, written by hand (the compiled
# module is _dual.pyx): what retrograd.forward_ad re-exports, and the private
# function the umbrella's autograd.functional calls.
# tests/install/test_stubs.py checks it against the module.
from retrograd.core.abi import Tensor
from retrograd.forward_ad import UnpackedDualTensor

def enter_dual_level() -> int: ...
def exit_dual_level(*, level: int | None = None) -> None: ...
def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor: ...
def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor: ...

# a level whose tangents carry a leading batch dimension (autograd.functional's jacobian)
def _enter_batched_dual_level(batch: int) -> int: ...

# the core ABI (major, minor) this module was compiled against
BUILT_AGAINST: tuple[int, int]
