"""CPU stand-in for CuPy's memory pools (``cupy.get_default_memory_pool()``).

Every stand-in ndarray that owns its data takes a block from the default
pool when it is made and hands it back when it dies, as CuPy's arrays do:
block sizes are rounded up to 512 bytes, a freed block stays cached in the
pool (``free_bytes``) for the next array of its size until
``free_all_blocks()`` releases it, and ``used_bytes() + free_bytes() ==
total_bytes()``.
"""
import threading as _threading
import weakref as _weakref

_ROUND = 512


class MemoryPool:
    """cupy.cuda.MemoryPool: ``used_bytes``, ``free_bytes``, ``total_bytes``, ``free_all_blocks``."""

    def __init__(self, allocator=None):
        self._lock = _threading.Lock()
        self._used = 0
        self._cached = {}                # rounded size -> number of cached blocks
        self._limit = 0

    def malloc(self, nbytes):
        """A block of at least ``nbytes``: handed back to the pool when the
        returned object (CuPy's MemoryPointer) dies."""
        size = max(_ROUND, -(-nbytes // _ROUND) * _ROUND)
        with self._lock:
            if self._limit and self._used + size > self._limit:
                from cupy.cuda import memory
                raise memory.OutOfMemoryError(size, self._used, self._limit)
            if self._cached.get(size):
                self._cached[size] -= 1
            self._used += size
        from cupy.cuda import runtime
        memory = MemoryPointer(size, runtime.getDevice())
        _weakref.finalize(memory, self._free, size)
        return memory

    def _free(self, size):
        with self._lock:
            self._used -= size
            self._cached[size] = self._cached.get(size, 0) + 1

    def used_bytes(self):
        return self._used

    def free_bytes(self):
        with self._lock:
            return sum(size * n for size, n in self._cached.items())

    def total_bytes(self):
        return self.used_bytes() + self.free_bytes()

    def n_free_blocks(self):
        with self._lock:
            return sum(self._cached.values())

    def free_all_blocks(self, stream=None):
        with self._lock:
            self._cached.clear()

    def set_limit(self, size=None, fraction=None):
        self._limit = int(size or 0)

    def get_limit(self):
        return self._limit


class MemoryPointer:
    """cupy.cuda.MemoryPointer: a block's size and device."""

    def __init__(self, size, device_id):
        self.size = size
        self.device_id = device_id
        self.ptr = 0


# the allocator arrays allocate through (cupy.cuda.set_allocator); None: the default pool's
_allocator = None


def _allocate(nbytes):
    return (_allocator or _default_pool.malloc)(nbytes)


class PinnedMemoryPool:
    """cupy.cuda.PinnedMemoryPool (host memory: nothing to track here)."""

    def free_all_blocks(self):
        pass

    def n_free_blocks(self):
        return 0


_default_pool = MemoryPool()
_default_pinned_pool = PinnedMemoryPool()


def get_default_memory_pool():
    return _default_pool


def get_default_pinned_memory_pool():
    return _default_pinned_pool
