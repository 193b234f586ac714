"""torch.distributed's exception classes."""

__all__ = ["DistError", "DistBackendError", "DistNetworkError", "DistStoreError"]


class DistError(RuntimeError):
    """Base class of the errors of retrograd.distributed (``torch.distributed.DistError``).

    Raised as such for errors that fit none of its subclasses.

    Examples
    --------
    >>> import retrograd as rg
    >>> issubclass(rg.distributed.DistError, RuntimeError)
    True
    """


class DistBackendError(DistError):
    """A collective failed in the backend: a timeout, or a peer that failed.

    ``torch.distributed.DistBackendError``. The message names the
    collective, the ranks of its group and the timeout. The group cannot
    be used afterwards: every later call on it raises this error again.

    Examples
    --------
    >>> import retrograd as rg
    >>> issubclass(rg.distributed.DistBackendError, rg.distributed.DistError)
    True
    """


class DistNetworkError(DistError):
    """The transport between processes failed (``torch.distributed.DistNetworkError``).

    Examples
    --------
    >>> import retrograd as rg
    >>> issubclass(rg.distributed.DistNetworkError, RuntimeError)
    True
    """


class DistStoreError(DistError):
    """A key-value store failed (``torch.distributed.DistStoreError``).

    Examples
    --------
    >>> import retrograd as rg
    >>> issubclass(rg.distributed.DistStoreError, RuntimeError)
    True
    """
