"""rg.backends: torch.backends' switches, for programs that set them.

retrograd computes with NumPy on the CPU (and CuPy on CUDA devices): there is
no cuDNN autotuner, no TF32 matmul mode and no MPS device to switch. The flags
exist, read and write as torch's do (``rg.backends.cudnn.benchmark = True``),
and change nothing; the ``is_available()`` functions answer honestly.

Examples
--------
>>> import retrograd as rg
>>> import retrograd.backends.cudnn as cudnn
>>> cudnn.benchmark = True
>>> rg.backends.cudnn.benchmark, rg.backends.mps.is_available()
(True, False)
"""
from retrograd.backends import cpu, cuda, cudnn, mps

__all__ = ["cpu", "cuda", "cudnn", "mps"]
