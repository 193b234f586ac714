"""GradScaler (torch.amp.GradScaler): loss scaling for low-precision training."""
from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

__all__ = ["GradScaler"]

_READY, _UNSCALED, _STEPPED = 0, 1, 2


class GradScaler:
    """Scale the loss so small gradients survive low precision; unscale before the step.

    As torch's: :meth:`scale` multiplies the loss by the scale,
    :meth:`unscale_` divides an optimizer's gradients by it (and notes
    inf/nan), :meth:`step` skips the step when a gradient was not finite,
    and :meth:`update` halves the scale after such a step and doubles it
    after ``growth_interval`` finite ones. Disabled, every method passes
    through. For ``device="cuda"`` without a CUDA device it disables itself
    with a warning, as torch does.

    Parameters
    ----------
    device : str, optional
        "cuda" (default, as torch.cuda.amp.GradScaler) or "cpu".
    init_scale : float, optional
        The first scale (default ``2 ** 16``).
    growth_factor : float, optional
        The scale's factor after ``growth_interval`` finite steps (default 2).
    backoff_factor : float, optional
        The scale's factor after a step with inf/nan gradients (default 0.5).
    growth_interval : int, optional
        Finite steps before the scale grows (default 2000).
    enabled : bool, optional
        Whether to scale at all (default True).

    Examples
    --------
    >>> import retrograd as rg
    >>> w = rg.nn.Parameter(rg.tensor([1.0]))
    >>> opt = rg.optim.SGD([w], lr=0.1)
    >>> scaler = rg.amp.GradScaler("cpu", init_scale=1024.0)
    >>> loss = (w * 3).sum()
    >>> scaler.scale(loss).backward()
    >>> w.grad
    tensor([3072.])
    >>> scaler.step(opt)
    >>> scaler.update()
    >>> w
    Parameter containing:
    tensor([0.7], requires_grad=True)
    """

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True) -> None:
        self._device = str(device)
        if enabled and self._device.startswith("cuda"):
            from retrograd import cuda
            if not cuda.is_available():
                warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling. "
                              "(retrograd: pass device='cpu' to scale on the CPU.)", stacklevel=2)
                enabled = False
        self._enabled = bool(enabled)
        if self._enabled:
            if growth_factor <= 1.0:
                raise ValueError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise ValueError("The backoff factor must be < 1.0.")
        self._scale = float(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._growth_tracker = 0
        self._per_optimizer: dict[int, dict[str, Any]] = {}

    # -- scaling -----------------------------------------------------------
    def scale(self, outputs: Any) -> Any:
        """``outputs`` times the scale (a tensor, or tensors nested in lists, tuples and dicts).

        Parameters
        ----------
        outputs : Tensor or iterable of Tensors

        Returns
        -------
        The scaled outputs, of the same structure (unchanged when disabled).

        Examples
        --------
        >>> import retrograd as rg
        >>> rg.amp.GradScaler("cpu", init_scale=8.0).scale(rg.tensor(2.0))
        tensor(16.)
        """
        if not self._enabled:
            return outputs
        from retrograd.core import Tensor
        if isinstance(outputs, Tensor):
            return outputs * self._scale
        if isinstance(outputs, dict):
            return {k: self.scale(v) for k, v in outputs.items()}
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(v) for v in outputs)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def _state(self, optimizer: Any) -> dict[str, Any]:
        return self._per_optimizer.setdefault(id(optimizer), {"stage": _READY, "found_inf": None})

    def unscale_(self, optimizer: Any) -> None:
        """Divide the gradients of ``optimizer``'s parameters by the scale, in place, and note inf/nan.

        Call it before gradient clipping; :meth:`step` calls it otherwise.

        Parameters
        ----------
        optimizer : Optimizer

        Raises
        ------
        RuntimeError
            Called twice for one optimizer before :meth:`update`, or after :meth:`step`.

        Examples
        --------
        >>> import retrograd as rg
        >>> w = rg.nn.Parameter(rg.tensor([1.0]))
        >>> opt = rg.optim.SGD([w], lr=0.1)
        >>> scaler = rg.amp.GradScaler("cpu", init_scale=4.0)
        >>> scaler.scale((w * 2).sum()).backward()
        >>> scaler.unscale_(opt)
        >>> w.grad
        tensor([2.])
        """
        if not self._enabled:
            return
        state = self._state(optimizer)
        if state["stage"] == _UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] == _STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        from retrograd.core import no_grad
        inv = 1.0 / self._scale
        found_inf = False
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    p.grad.mul_(inv)
                    if not np.isfinite(np.asarray(p.grad.detach())).all():
                        found_inf = True
        state["found_inf"] = found_inf
        state["stage"] = _UNSCALED

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """Unscale if not done, then ``optimizer.step()`` unless a gradient was inf/nan.

        Parameters
        ----------
        optimizer : Optimizer
        *args, **kwargs
            Passed on to ``optimizer.step`` (a closure is refused while enabled, as in torch).

        Returns
        -------
        What ``optimizer.step`` returned, or None when the step was skipped.

        Examples
        --------
        >>> import retrograd as rg
        >>> w = rg.nn.Parameter(rg.tensor([1.0]))
        >>> opt = rg.optim.SGD([w], lr=0.1)
        >>> scaler = rg.amp.GradScaler("cpu")
        >>> w.grad = rg.tensor([float("inf")])
        >>> scaler.step(opt)      # skipped: the gradient is not finite
        >>> w.detach()
        tensor([1.])
        """
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        state = self._state(optimizer)
        if state["stage"] == _STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] == _READY:
            self.unscale_(optimizer)
        retval = None
        if not state["found_inf"]:
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = _STEPPED
        return retval

    def update(self, new_scale: float | Any = None) -> None:
        """Adapt the scale after the step(s) (or set ``new_scale``), and start a new iteration.

        Parameters
        ----------
        new_scale : float or Tensor, optional
            The scale to use from now on.

        Examples
        --------
        >>> import retrograd as rg
        >>> scaler = rg.amp.GradScaler("cpu", init_scale=8.0)
        >>> scaler.update(2.0)
        >>> scaler.get_scale()
        2.0
        """
        if not self._enabled:
            return
        if new_scale is not None:
            self._scale = float(new_scale)
        else:
            found = [s["found_inf"] for s in self._per_optimizer.values() if s["found_inf"] is not None]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            if any(found):
                self._scale *= self._backoff_factor
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    self._scale *= self._growth_factor
                    self._growth_tracker = 0
            if not math.isfinite(self._scale):
                self._scale = float(np.finfo(np.float32).max)
        self._per_optimizer.clear()

    # -- settings ----------------------------------------------------------
    def get_scale(self) -> float:
        """The current scale (1.0 when disabled).

        Returns
        -------
        float

        Examples
        --------
        >>> import retrograd as rg
        >>> rg.amp.GradScaler("cpu").get_scale(), rg.amp.GradScaler("cpu", enabled=False).get_scale()
        (65536.0, 1.0)
        """
        return self._scale if self._enabled else 1.0

    def is_enabled(self) -> bool:
        """Whether the scaler scales.

        Returns
        -------
        bool

        Examples
        --------
        >>> import retrograd as rg
        >>> rg.amp.GradScaler("cpu").is_enabled()
        True
        """
        return self._enabled

    def get_growth_factor(self) -> float:
        """The growth factor.

        Returns
        -------
        float

        Examples
        --------
        >>> import retrograd as rg
        >>> rg.amp.GradScaler("cpu").get_growth_factor()
        2.0
        """
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        """Set the growth factor.

        Parameters
        ----------
        new_factor : float

        Examples
        --------
        >>> import retrograd as rg
        >>> s = rg.amp.GradScaler("cpu")
        >>> s.set_growth_factor(4.0)
        """
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self) -> float:
        """The backoff factor.

        Returns
        -------
        float

        Examples
        --------
        >>> import retrograd as rg
        >>> rg.amp.GradScaler("cpu").get_backoff_factor()
        0.5
        """
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        """Set the backoff factor.

        Parameters
        ----------
        new_factor : float

        Examples
        --------
        >>> import retrograd as rg
        >>> rg.amp.GradScaler("cpu").set_backoff_factor(0.25)
        """
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self) -> int:
        """The number of finite steps before the scale grows.

        Returns
        -------
        int

        Examples
        --------
        >>> import retrograd as rg
        >>> rg.amp.GradScaler("cpu").get_growth_interval()
        2000
        """
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        """Set the growth interval.

        Parameters
        ----------
        new_interval : int

        Examples
        --------
        >>> import retrograd as rg
        >>> rg.amp.GradScaler("cpu").set_growth_interval(10)
        """
        self._growth_interval = int(new_interval)

    def state_dict(self) -> dict[str, Any]:
        """The scaler's state, as torch's (empty when disabled).

        Returns
        -------
        dict

        Examples
        --------
        >>> import retrograd as rg
        >>> sorted(rg.amp.GradScaler("cpu").state_dict())
        ['_growth_tracker', 'backoff_factor', 'growth_factor', 'growth_interval', 'scale']
        """
        if not self._enabled:
            return {}
        return {"scale": self._scale, "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore a :meth:`state_dict`.

        Parameters
        ----------
        state_dict : dict

        Raises
        ------
        RuntimeError
            For an empty state dict (saved from a disabled scaler).

        Examples
        --------
        >>> import retrograd as rg
        >>> s = rg.amp.GradScaler("cpu")
        >>> s.load_state_dict(rg.amp.GradScaler("cpu", init_scale=4.0).state_dict())
        >>> s.get_scale()
        4.0
        """
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        self._scale = float(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])
