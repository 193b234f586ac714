"""Thread-local grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode.

Each works as a context manager and as a decorator (also of generator
functions), and changes only the calling thread's mode, as in PyTorch.
"""
from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

from retrograd.core import abi as _abi

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "is_grad_enabled", "is_inference_mode_enabled"]

is_grad_enabled = _abi.is_grad_enabled
is_inference_mode_enabled = _abi.is_inference_mode_enabled

# what a grad mode decorates: the decorated function has the same signature
_F = TypeVar("_F", bound=Callable[..., Any])


class _DecoratorContextManager:
    """A context manager that can also decorate functions and generators."""

    def __call__(self, func: _F) -> _F:
        if inspect.isclass(func):
            # torch 2.x still accepts a class (deprecated): the result is a
            # plain function that constructs the class under the mode, so
            # only __init__ runs in it. Warn as torch does, with its advice.
            warnings.warn(
                "Decorating classes is deprecated and will be disabled in future versions. You "
                "should only decorate functions or methods. To preserve the current behavior of "
                "class decoration, you can directly decorate the `__init__` method and nothing "
                "else.", FutureWarning, stacklevel=2)
            cls = func

            def func(*args, **kwargs):
                return cls(*args, **kwargs)
        if inspect.isgeneratorfunction(func):
            @functools.wraps(func)
            def gen_wrapper(*args, **kwargs):
                gen = func(*args, **kwargs)
                try:
                    with self.clone():
                        response = gen.send(None)
                    while True:
                        try:
                            request = yield response
                        except GeneratorExit:
                            with self.clone():
                                gen.close()
                            raise
                        except BaseException as exc:
                            with self.clone():
                                response = gen.throw(exc)
                        else:
                            with self.clone():
                                response = gen.send(request)
                except StopIteration as stop:
                    return stop.value
            return gen_wrapper

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)
        return wrapper

    def clone(self):
        """A new context manager of the same kind and settings, not yet entered.

        What the decorator form uses so that each call of the decorated
        function enters a fresh one (a context manager saves the state it
        restores, so one object cannot be entered twice at once).

        Returns
        -------
        object
            The copy.

        Examples
        --------
        >>> import retrograd as rg
        >>> mode = rg.no_grad()
        >>> with mode.clone():
        ...     print(rg.is_grad_enabled())
        False
        >>> rg.is_grad_enabled()
        True
        """
        return self.__class__()


class _NoParamDecoratorContextManager(_DecoratorContextManager):
    """Also usable as a bare decorator: ``@no_grad`` as well as ``@no_grad()``
    (torch accepts both)."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamDecoratorContextManager):
    """Context manager and decorator that turns graph recording off on this thread.

    Inside it, ops on tensors that require grad still compute, but their
    results do not require grad and no graph is built: use it for evaluation
    and for updating parameters in place (an optimizer step). Tensors created
    inside are ordinary tensors and can be used with autograd afterwards.
    It works as ``with rg.no_grad():``, as a decorator (``@rg.no_grad()`` or
    ``@rg.no_grad``, also of generator functions), and affects only the
    calling thread.

    Examples
    --------
    >>> import retrograd as rg
    >>> w = rg.tensor([1.0, 2.0], requires_grad=True)
    >>> with rg.no_grad():
    ...     y = w * 2
    >>> y.requires_grad
    False
    >>> @rg.no_grad()
    ... def step(p):
    ...     return p.sub_(0.5)
    >>> step(w)
    tensor([0.5, 1.5], requires_grad=True)
    """

    def __init__(self) -> None:
        self.prev = False

    def __enter__(self) -> None:
        self.prev = _abi.is_grad_enabled()
        _abi._set_grad_enabled(False)

    def __exit__(self, *exc: object) -> None:
        _abi._set_grad_enabled(self.prev)


class enable_grad(_NoParamDecoratorContextManager):
    """Context manager and decorator that turns graph recording back on on this thread.

    The opposite of :class:`no_grad`: inside a ``no_grad`` block (or
    function), ``enable_grad`` records again. It does not undo
    :class:`inference_mode`'s restrictions on inference tensors.

    Examples
    --------
    >>> import retrograd as rg
    >>> x = rg.tensor([1.0], requires_grad=True)
    >>> with rg.no_grad():
    ...     with rg.enable_grad():
    ...         y = x * 2
    >>> y.requires_grad
    True
    """

    def __init__(self) -> None:
        self.prev = False

    def __enter__(self) -> None:
        self.prev = _abi.is_grad_enabled()
        _abi._set_grad_enabled(True)

    def __exit__(self, *exc: object) -> None:
        _abi._set_grad_enabled(self.prev)


class set_grad_enabled(_DecoratorContextManager):
    """Turn graph recording on or off on this thread.

    Called as a function, it sets the mode at once (until changed again). As a
    context manager it restores the previous mode on exit, and as a decorator
    it applies the mode only while the function runs. Handy to write one loop
    for training and evaluation: ``with rg.set_grad_enabled(is_train):``.

    Parameters
    ----------
    mode : bool
        True to record graphs, False not to.

    Raises
    ------
    TypeError
        If ``mode`` is not a bool.

    Examples
    --------
    >>> import retrograd as rg
    >>> x = rg.tensor([1.0], requires_grad=True)
    >>> with rg.set_grad_enabled(False):
    ...     y = x * 2
    >>> y.requires_grad
    False
    >>> _ = rg.set_grad_enabled(False)
    >>> rg.is_grad_enabled()
    False
    >>> _ = rg.set_grad_enabled(True)
    >>> rg.is_grad_enabled()
    True
    """

    def __init__(self, mode: bool):
        if not isinstance(mode, bool):
            raise TypeError(f"set_grad_enabled(mode) expects a bool, got {type(mode).__name__}")
        self.prev = _abi.is_grad_enabled()
        self.mode = mode
        _abi._set_grad_enabled(mode)

    def __call__(self, func: _F) -> _F:
        _abi._set_grad_enabled(self.prev)
        return super().__call__(func)

    def __enter__(self) -> None:
        _abi._set_grad_enabled(self.mode)

    def __exit__(self, *exc: object) -> None:
        _abi._set_grad_enabled(self.prev)

    def clone(self):
        return self.__class__(self.mode)


class inference_mode(_DecoratorContextManager):
    """Context manager and decorator for inference: :class:`no_grad`, and more.

    Besides recording no graph, tensors created inside are *inference
    tensors*: they can never be saved for backward or modified in place
    outside inference mode, which lets retrograd skip version tracking for
    them. Use it for pure inference; use :class:`no_grad` when results may
    later feed a graph. ``inference_mode(False)`` turns it off (and graph
    recording back on) inside an enclosing one.

    Parameters
    ----------
    mode : bool, optional
        True (the default) to turn inference mode on, False to turn it off.

    Raises
    ------
    TypeError
        If ``mode`` is not a bool.

    Examples
    --------
    >>> import retrograd as rg
    >>> w = rg.tensor([1.0, 2.0], requires_grad=True)
    >>> with rg.inference_mode():
    ...     y = w * 2
    >>> y.requires_grad, y.is_inference()
    (False, True)
    """

    def __init__(self, mode: bool = True):
        if not isinstance(mode, bool):
            raise TypeError(f"inference_mode(mode) expects a bool, got {type(mode).__name__}")
        self.mode = mode

    def __new__(cls, mode=True):
        if callable(mode) and not isinstance(mode, bool):
            # used as a bare decorator: @inference_mode
            return cls()(mode)
        return super().__new__(cls)

    def __enter__(self) -> None:
        self.prev_inf = _abi.is_inference_mode_enabled()
        self.prev_grad = _abi.is_grad_enabled()
        # torch's InferenceMode(enabled) sets grad mode to `not enabled`:
        # inference_mode(False) re-enables grad recording, as enable_grad does.
        _abi._set_inference_mode(self.mode)
        _abi._set_grad_enabled(not self.mode)

    def __exit__(self, *exc: object) -> None:
        _abi._set_inference_mode(self.prev_inf)
        _abi._set_grad_enabled(self.prev_grad)

    def clone(self):
        return self.__class__(self.mode)
