# Devices: "cpu" (NumPy), virtual CPU devices "cpu:1".."cpu:N" (NumPy arrays
# whose graph nodes run on their own engine worker, so the multi-device engine
# is tested without a GPU) and "cuda:N" (CuPy). The class, part of abi.pyx;
# parsing specs and interning are _ops's (_devices.pxi).
#
# Device objects are interned: one object per device, compared by identity
# on the hot path.

from retrograd.core._ops cimport _parse_device
from retrograd.core._ops import device  # no-cython-lint


cdef class Device:
    """A device, as ``torch.device``: where a tensor's data lives and its nodes run.

    Made by :func:`retrograd.device` (``rg.device("cuda:0")``), never by
    calling the class; one object per device. It compares equal to its
    string form, hashes by device and pickles by name.

    Attributes
    ----------
    type : int
        The device kind as core's C code numbers it (0 for CPU, 1 for CUDA);
        :attr:`type_name` is its name.
    index : int
        The device number: -1 for plain ``"cpu"``, N for ``"cpu:N"`` and
        ``"cuda:N"``.

    Examples
    --------
    >>> import retrograd as rg
    >>> d = rg.device("cuda:1")
    >>> d
    device(type='cuda', index=1)
    >>> d.type_name, d.index, str(d)
    ('cuda', 1, 'cuda:1')
    >>> rg.zeros(2).device == "cpu"
    True
    """

    def __cinit__(self, *args):
        pass

    def __init__(self, spec, index=None):
        raise TypeError("use retrograd.device(spec) to get a device")

    cdef int key(self):
        if self.type == RG_DEV_CPU:
            return 0 if self.index <= 0 else self.index
        return 256 + (0 if self.index < 0 else self.index)

    def __repr__(self):
        return f"device(type='{'cpu' if self.type == RG_DEV_CPU else 'cuda'}'" + (
            "" if self.index < 0 else f", index={self.index}") + ")"

    def __str__(self):
        cdef str t = "cpu" if self.type == RG_DEV_CPU else "cuda"
        return t if self.index < 0 else f"{t}:{self.index}"

    def __eq__(self, other):
        if isinstance(other, str):
            try:
                other = _parse_device(other)
            except (ValueError, RuntimeError):
                return False
        if not isinstance(other, Device):
            return NotImplemented
        return (<Device>self).key() == (<Device>other).key()

    def __hash__(self):
        return hash(self.key())

    def __reduce__(self):
        return (device, (str(self),))

    def __enter__(self):
        # `with rg.device(d):` makes d the default device of the block
        # (torch.device as a context manager); _creation.py keeps the stack
        from retrograd.core._creation import _enter_device_context
        _enter_device_context(self)
        return self

    def __exit__(self, exc_type, exc, tb):
        from retrograd.core._creation import _exit_device_context
        _exit_device_context()
        return False

    @property
    def type_name(self):
        """The device type's name, ``"cpu"`` or ``"cuda"`` (``torch.device.type``)."""
        return "cpu" if self.type == RG_DEV_CPU else "cuda"
