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
        return self.__class__()


class _NoParamDecoratorContextManager(_DecoratorContextManager):
    """Also usable as a bare decorator: ``@no_grad`` as well as ``@no_grad()``
    (torch accepts both)."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamDecoratorContextManager):
    """Disable graph recording on this thread (``torch.no_grad``)."""

    def __init__(self) -> None:
        self.prev = False

    def __enter__(self) -> None:
        self.prev = _abi.is_grad_enabled()
        _abi._set_grad_enabled(False)

    def __exit__(self, *exc: object) -> None:
        _abi._set_grad_enabled(self.prev)


class enable_grad(_NoParamDecoratorContextManager):
    """Enable graph recording on this thread (``torch.enable_grad``)."""

    def __init__(self) -> None:
        self.prev = False

    def __enter__(self) -> None:
        self.prev = _abi.is_grad_enabled()
        _abi._set_grad_enabled(True)

    def __exit__(self, *exc: object) -> None:
        _abi._set_grad_enabled(self.prev)


class set_grad_enabled(_DecoratorContextManager):
    """Set grad mode on this thread; takes effect at once, and as a context
    manager restores the previous mode on exit (``torch.set_grad_enabled``)."""

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
    """Like no_grad, and tensors created inside are inference tensors that can
    never be saved for backward (``torch.inference_mode``)."""

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
