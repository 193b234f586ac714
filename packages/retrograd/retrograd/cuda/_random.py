"""Seeding the CUDA generators: CuPy's per-device random state, which
retrograd's random functions draw from for CUDA tensors (``rg.rand(...,
device="cuda")``, ``rg.randn``, ``rg.randint``, ``rg.randperm`` and their
``_like`` forms)."""
from __future__ import annotations


def _seed(seed, fn, every_device):
    if isinstance(seed, bool) or not hasattr(type(seed), "__index__"):
        raise TypeError(f"{fn}(): the seed must be an int, not {type(seed).__name__}")
    if seed < 0:
        raise ValueError(f"{fn}(): the seed must be nonnegative, got {seed}")
    from retrograd.cuda import is_available
    if not is_available():              # as torch: silently nothing to seed
        return
    import cupy
    current = cupy.cuda.runtime.getDevice()
    for index in range(cupy.cuda.runtime.getDeviceCount()) if every_device else (current,):
        with cupy.cuda.Device(index):
            cupy.random.seed(int(seed))


def manual_seed(seed: int) -> None:
    """Seed the current CUDA device's generator (``torch.cuda.manual_seed``).

    Random CUDA tensors drawn afterwards on that device repeat for the same
    seed. ``rg.manual_seed`` seeds the CPU generator and every CUDA device.
    Without CuPy or a GPU it does nothing, as torch's.

    Parameters
    ----------
    seed : int
        A nonnegative integer.

    Raises
    ------
    ValueError
        For a negative seed.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.cuda.manual_seed(0)
    >>> if rg.cuda.is_available():
    ...     a = rg.rand(3, device="cuda")
    ...     rg.cuda.manual_seed(0)
    ...     assert bool((rg.rand(3, device="cuda") == a).all())
    """
    _seed(seed, "manual_seed", every_device=False)


def manual_seed_all(seed: int) -> None:
    """Seed the generator of every CUDA device (``torch.cuda.manual_seed_all``).

    Parameters
    ----------
    seed : int
        A nonnegative integer.

    Raises
    ------
    ValueError
        For a negative seed.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.cuda.manual_seed_all(0)
    """
    _seed(seed, "manual_seed_all", every_device=True)
