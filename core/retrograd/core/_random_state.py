"""torch's random-state API over NumPy generators: rg.Generator (a NumPy
Generator with torch's methods), get_rng_state and set_rng_state."""
from __future__ import annotations

import json

import numpy as np

from retrograd.core import _creation
from retrograd.core.abi import Tensor

__all__ = ["Generator", "get_rng_state", "set_rng_state"]


def _fresh_seed() -> int:
    # a seed from the OS's entropy, in torch's range (63 bits)
    return int(np.random.SeedSequence().generate_state(1, np.uint64)[0] >> np.uint64(1))


def _encode(state) -> Tensor:
    # a generator's state as torch hands it around: a uint8 tensor
    data = np.frombuffer(json.dumps(state).encode("ascii"), dtype=np.uint8).copy()
    return _creation._make(data, None, False)


def _decode(state) -> dict:
    if not isinstance(state, Tensor) or state.dtype != np.uint8 or state.ndim != 1:
        raise TypeError("expected a uint8 tensor as returned by get_rng_state() / Generator.get_state(), got "
                        f"{type(state).__name__}")
    try:
        return json.loads(bytes(np.asarray(state)).decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        raise RuntimeError("the RNG state is not one get_rng_state() / Generator.get_state() returned") from None


class Generator(np.random.Generator):
    """A random generator (``torch.Generator``): a NumPy Generator with torch's methods.

    Every ``generator=`` argument of retrograd takes it (as it takes any
    NumPy Generator). The stream of numbers is NumPy's (PCG64), so the
    values differ from torch's for the same seed.

    Parameters
    ----------
    device : str, optional
        Only ``"cpu"``.

    Examples
    --------
    >>> import retrograd as rg
    >>> g = rg.Generator().manual_seed(7)
    >>> a = rg.rand(2, generator=g)
    >>> bool((rg.rand(2, generator=rg.Generator().manual_seed(7)) == a).all())
    True
    >>> g.initial_seed()
    7
    """

    def __init__(self, device: str = "cpu") -> None:
        if str(device) != "cpu":
            raise RuntimeError(f"rg.Generator: only CPU generators are made this way (got device {device!r}); "
                               "CUDA tensors draw from the device's generator (rg.cuda.manual_seed)")
        seed = _fresh_seed()
        super().__init__(np.random.PCG64(seed))
        self._initial_seed = seed
        self.device = _creation._CPU

    def manual_seed(self, seed: int) -> Generator:
        """Reseed in place and return the generator (``g = rg.Generator().manual_seed(0)``).

        Parameters
        ----------
        seed : int
            A nonnegative integer.

        Returns
        -------
        Generator
            This generator.

        Examples
        --------
        >>> import retrograd as rg
        >>> rg.Generator().manual_seed(3).initial_seed()
        3
        """
        seed = int(seed)
        if seed < 0:
            raise RuntimeError(f"manual_seed expects a nonnegative seed, got {seed}")
        self.bit_generator.state = np.random.PCG64(seed).state
        self._initial_seed = seed
        return self

    def seed(self) -> int:
        """Reseed from fresh entropy and return the new seed.

        Returns
        -------
        int

        Examples
        --------
        >>> import retrograd as rg
        >>> g = rg.Generator()
        >>> g.seed() == g.initial_seed()
        True
        """
        seed = _fresh_seed()
        self.manual_seed(seed)
        return seed

    def initial_seed(self) -> int:
        """The seed this generator was last seeded with.

        Returns
        -------
        int

        Examples
        --------
        >>> import retrograd as rg
        >>> rg.Generator().manual_seed(11).initial_seed()
        11
        """
        return self._initial_seed

    def get_state(self) -> Tensor:
        """The generator's state, as a uint8 tensor (for :meth:`set_state`).

        Returns
        -------
        Tensor

        Examples
        --------
        >>> import retrograd as rg
        >>> g = rg.Generator().manual_seed(0)
        >>> state = g.get_state()
        >>> a = rg.rand(3, generator=g)
        >>> _ = g.set_state(state)
        >>> bool((rg.rand(3, generator=g) == a).all())
        True
        """
        return _encode(self.bit_generator.state)

    def set_state(self, new_state: Tensor) -> Generator:
        """Restore a state :meth:`get_state` returned.

        Parameters
        ----------
        new_state : Tensor
            The uint8 state tensor.

        Returns
        -------
        Generator
            This generator.

        Raises
        ------
        TypeError
            For anything but a uint8 tensor.

        Examples
        --------
        >>> import retrograd as rg
        >>> g = rg.Generator()
        >>> g.set_state(rg.Generator().manual_seed(1).get_state()) is g
        True
        """
        self.bit_generator.state = _decode(new_state)
        return self


def get_rng_state() -> Tensor:
    """The state of retrograd's global generator, as a uint8 tensor (``torch.get_rng_state``).

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import retrograd as rg
    >>> state = rg.get_rng_state()
    >>> a = rg.rand(2)
    >>> rg.set_rng_state(state)
    >>> bool((rg.rand(2) == a).all())
    True
    """
    return _encode(_creation.get_rng().bit_generator.state)


def set_rng_state(new_state: Tensor) -> None:
    """Restore the global generator's state from :func:`get_rng_state` (``torch.set_rng_state``).

    Parameters
    ----------
    new_state : Tensor
        The uint8 state tensor.

    Returns
    -------
    None

    Raises
    ------
    TypeError
        For anything but a uint8 tensor.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.set_rng_state(rg.get_rng_state())
    """
    _creation.get_rng().bit_generator.state = _decode(new_state)
