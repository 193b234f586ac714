"""L-BFGS, as ``torch.optim.LBFGS``."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from retrograd.core import Tensor, enable_grad, from_numpy, no_grad
from retrograd.optim.adadelta import _check_lr
from retrograd.optim.optimizer import Optimizer, ParamsT, _as_real, _value

__all__ = ["LBFGS"]

# The vectors (``d``, ``prev_flat_grad``, the histories) are NumPy arrays
# during a step and tensors in ``state`` between steps. Numbers that torch
# keeps as 0-d tensors (ys, ro, H_diag, al, t) are NumPy scalars here, which,
# as 0-d tensors, keep the parameters' dtype in arithmetic with Python numbers.


def _to_state(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return from_numpy(value)
    if isinstance(value, np.generic):
        return from_numpy(np.asarray(value))
    if isinstance(value, list):
        return [_to_state(v) for v in value]
    return value


def _from_state(value: Any) -> Any:
    if isinstance(value, Tensor):
        detached: Any = value.detach()
        array = detached._array
        return array[()] if array.ndim == 0 else array
    if isinstance(value, list):
        return [_from_state(v) for v in value]
    return value


def _dot(a: Any, b: Any) -> Any:
    # The products summed without fused multiply-adds (as torch's BLAS does for
    # short vectors, where NumPy's would fuse): on small problems the line
    # search then takes the same decisions as torch's to the last bit.
    return np.einsum("i,i->", a, b)


def _cubic_interpolate(x1: Any, f1: Any, g1: Any, x2: Any, f2: Any, g2: Any,
                       bounds: tuple[Any, Any] | None = None) -> Any:
    # The minimizer of the cubic through (x1, f1, g1) and (x2, f2, g2), clamped to the bounds
    # (their midpoint when the cubic has no minimum); torch's formulas.
    if bounds is not None:
        xmin_bound, xmax_bound = bounds
    else:
        xmin_bound, xmax_bound = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square >= 0:
        d2 = np.sqrt(d2_square)
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, xmin_bound), xmax_bound)
    return (xmin_bound + xmax_bound) / 2.0


def _strong_wolfe(obj_func: Callable[[Any, Any, Any], tuple[float, Any]], x: Any, t: Any, d: Any, f: float, g: Any,
                  gtd: Any, c1: float = 1e-4, c2: float = 0.9, tolerance_change: float = 1e-9,
                  max_ls: int = 25) -> tuple[float, Any, Any, int]:
    # torch's strong-Wolfe line search (after minFunc), step for step: first
    # bracket a step satisfying the conditions, then zoom into the bracket by
    # cubic interpolation. The number of evaluations must equal torch's.
    d_norm = np.abs(d).max()
    g = g.copy()
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = _dot(g_new, d)

    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket = [t_prev, t]
            bracket_f = [f_prev, f_new]
            bracket_g = [g_prev, g_new.copy()]
            bracket_gtd = [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket = [t]
            bracket_f = [f_new]
            bracket_g = [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket = [t_prev, t]
            bracket_f = [f_prev, f_new]
            bracket_g = [g_prev, g_new.copy()]
            bracket_gtd = [gtd_prev, gtd_new]
            break
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        tmp = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(min_step, max_step))
        t_prev = tmp
        f_prev = f_new
        g_prev = g_new.copy()
        gtd_prev = gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = _dot(g_new, d)
        ls_iter += 1

    if ls_iter == max_ls:
        bracket = [0, t]
        bracket_f = [f, f_new]
        bracket_g = [g, g_new]

    insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1])
        # A point too close to an end of the bracket makes little progress:
        # move it inwards (the second time in a row, or when outside).
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                if abs(t - max(bracket)) < abs(t - min(bracket)):
                    t = max(bracket) - eps
                else:
                    t = min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False

        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = _dot(g_new, d)
        ls_iter += 1

        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            bracket[high_pos] = t
            bracket_f[high_pos] = f_new
            bracket_g[high_pos] = g_new.copy()
            bracket_gtd[high_pos] = gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                bracket[high_pos] = bracket[low_pos]
                bracket_f[high_pos] = bracket_f[low_pos]
                bracket_g[high_pos] = bracket_g[low_pos]
                bracket_gtd[high_pos] = bracket_gtd[low_pos]
            bracket[low_pos] = t
            bracket_f[low_pos] = f_new
            bracket_g[low_pos] = g_new.copy()
            bracket_gtd[low_pos] = gtd_new

    t = bracket[low_pos]
    f_new = bracket_f[low_pos]
    g_new = bracket_g[low_pos]
    return f_new, g_new, t, ls_func_evals


class LBFGS(Optimizer):
    r"""L-BFGS, as ``torch.optim.LBFGS``.

    A quasi-Newton method: each :meth:`step` runs up to ``max_iter``
    iterations, each one a search direction from the last ``history_size``
    pairs of parameter and gradient changes (the two-loop recursion), then
    a step along it, of length ``lr`` (the first iteration scaled down to
    at most ``lr / sum|g|``), or chosen by a strong-Wolfe line search with
    ``line_search_fn="strong_wolfe"``. It needs a closure that re-evaluates
    the loss and its gradients. A step ends early when the largest gradient
    entry is at most ``tolerance_grad``, when the move or the change of the
    loss is below ``tolerance_change``, or after ``max_eval`` evaluations.

    All the state is kept with the first parameter: ``func_evals`` and
    ``n_iter`` (counts over all steps), and, after a step, ``d``, ``t``,
    ``old_dirs``, ``old_stps``, ``ro``, ``H_diag``, ``prev_flat_grad``,
    ``prev_loss`` and ``al``, as torch's (a torch state dict converts key
    for key). The iterations, line search and counts follow torch's
    operation by operation. Complex parameters are treated as pairs of reals.

    Parameters
    ----------
    params : iterable
        Tensors or ``(name, tensor)`` pairs, all in one group (L-BFGS has no per-group options).
    lr : float or Tensor, default 1
        Step length (the line search's first trial step with ``strong_wolfe``).
    max_iter : int, default 20
        Iterations per :meth:`step`.
    max_eval : int, optional
        Function evaluations per :meth:`step`; ``max_iter * 5 // 4`` when None.
    tolerance_grad : float, default 1e-7
        Stop when the largest absolute gradient entry is at most this.
    tolerance_change : float, default 1e-9
        Stop when the move or the loss change is below this.
    history_size : int, default 100
        Number of kept update pairs.
    line_search_fn : {None, "strong_wolfe"}, default None
        The line search; None takes fixed steps of ``lr``.

    Raises
    ------
    ValueError
        For a negative learning rate, a tensor ``lr`` with more than one
        element, or parameter groups (more than one group).

    Notes
    -----
    The memory held is about ``(2 * history_size + 2)`` times that of the
    parameters. Another ``line_search_fn`` than None and ``"strong_wolfe"``
    is refused by :meth:`step`, as in torch.

    Examples
    --------
    Minimize the Rosenbrock function:

    >>> import retrograd as rg
    >>> xy = rg.tensor([-1.5, 2.0], requires_grad=True)
    >>> opt = rg.optim.LBFGS([xy], line_search_fn="strong_wolfe", max_iter=100)
    >>> def closure():
    ...     opt.zero_grad()
    ...     loss = (1 - xy[0]) ** 2 + 100 * (xy[1] - xy[0] ** 2) ** 2
    ...     loss.backward()
    ...     return loss
    >>> loss = opt.step(closure)
    >>> [round(v, 4) for v in xy.tolist()]
    [1.0, 1.0]
    >>> opt.state[xy]["n_iter"] <= 100
    True
    """

    def __init__(self, params: ParamsT, lr: float | Tensor = 1, max_iter: int = 20, max_eval: int | None = None,
                 tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None) -> None:
        _check_lr(lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = {"lr": lr, "max_iter": max_iter, "max_eval": max_eval, "tolerance_grad": tolerance_grad,
                    "tolerance_change": tolerance_change, "history_size": history_size,
                    "line_search_fn": line_search_fn}
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._numel_cache: int | None = None

    @property
    def _params(self) -> list[Any]:
        return self.param_groups[0]["params"]

    def _numel(self) -> int:
        # (getattr: a pickled or deep-copied optimizer keeps only its groups and state)
        cached: int | None = getattr(self, "_numel_cache", None)
        if cached is None:
            cached = sum(2 * p.numel() if p.dtype.kind == "c" else p.numel() for p in self._params)
            self._numel_cache = cached
        return cached

    def _gather_flat_grad(self) -> Any:
        views = []
        for p in self._params:
            if p.grad is None:
                views.append(np.zeros(p.numel() * (2 if p.dtype.kind == "c" else 1), dtype=_as_real(p._array).dtype))
            else:
                views.append(_as_real(p.grad._array).reshape(-1))
        return np.concatenate(views)

    def _add_grad(self, step_size: Any, update: Any) -> None:
        # p.add_(update, alpha=step_size): a Python number, so that float32 stays float32
        alpha = float(step_size)
        offset = 0
        for p in self._params:
            param = _as_real(p._array)
            numel = param.size
            param += update[offset:offset + numel].reshape(param.shape) * alpha
            offset += numel
        if offset != self._numel():
            raise AssertionError(f"Expected offset {offset} to equal {self._numel()}")
        self._bump_versions(self._params)

    def _clone_param(self) -> list[Any]:
        return [p._array.copy() for p in self._params]

    def _set_param(self, params_data: list[Any]) -> None:
        for p, pdata in zip(self._params, params_data, strict=True):
            p._array[...] = pdata
        self._bump_versions(self._params)

    def _directional_evaluate(self, closure: Callable[[], Any], x: list[Any], t: Any, d: Any) -> tuple[float, Any]:
        self._add_grad(t, d)
        loss = float(closure())
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    def step(self, closure: Callable[[], Any]) -> Any:  # type: ignore[override]
        """Run up to ``max_iter`` L-BFGS iterations, re-evaluating the loss through ``closure``.

        Parameters
        ----------
        closure : callable
            Clears the gradients, computes the loss, calls ``backward()`` and
            returns the loss. Required (called with grad enabled).

        Returns
        -------
        object
            The closure's result at the first evaluation of this step.

        Raises
        ------
        RuntimeError
            For a ``line_search_fn`` other than None and ``"strong_wolfe"``.
        AssertionError
            If a parameter group was added (L-BFGS runs on one group), as torch.

        Examples
        --------
        A least-squares fit, exact after a few iterations:

        >>> import retrograd as rg
        >>> A = rg.tensor([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0]])
        >>> b = rg.tensor([1.0, 2.0, 3.0])
        >>> w = rg.zeros(2, requires_grad=True)
        >>> opt = rg.optim.LBFGS([w])
        >>> def closure():
        ...     opt.zero_grad()
        ...     loss = ((A @ w - b) ** 2).sum()
        ...     loss.backward()
        ...     return loss
        >>> first = opt.step(closure)
        >>> [round(v, 4) for v in w.tolist()]
        [1.0, 1.0]
        """
        if len(self.param_groups) != 1:
            raise AssertionError(f"Expected exactly one param_group, but got {len(self.param_groups)}")

        def closure_with_grad() -> Any:
            with enable_grad():
                return closure()

        with no_grad():
            return self._step(closure_with_grad)

    def _step(self, closure: Callable[[], Any]) -> Any:
        group = self.param_groups[0]
        lr = float(_value(group["lr"]))
        max_iter = group["max_iter"]
        max_eval = group["max_eval"]
        tolerance_grad = group["tolerance_grad"]
        tolerance_change = group["tolerance_change"]
        line_search_fn = group["line_search_fn"]
        history_size = group["history_size"]

        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = closure()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1

        flat_grad = self._gather_flat_grad()
        opt_cond = np.abs(flat_grad).max() <= tolerance_grad
        if opt_cond:
            return orig_loss

        d = _from_state(state.get("d"))
        t = _from_state(state.get("t"))
        old_dirs = _from_state(state.get("old_dirs"))
        old_stps = _from_state(state.get("old_stps"))
        ro = _from_state(state.get("ro"))
        H_diag = _from_state(state.get("H_diag"))
        prev_flat_grad = _from_state(state.get("prev_flat_grad"))
        prev_loss = state.get("prev_loss")
        al = _from_state(state.get("al"))

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1

            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs = []
                old_stps = []
                ro = []
                H_diag = 1
            else:
                # Keep the new pair (y, s) only when y.s is positive enough
                # (the curvature condition), dropping the oldest when full.
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = _dot(y, s)
                if ys > 1e-10:
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / _dot(y, y)

                # The two-loop recursion: d = -H g with the implicit inverse Hessian H.
                num_old = len(old_dirs)
                if al is None:
                    al = [None] * history_size
                    state["al"] = al    # (the key's place in the state dict, as torch's)
                q = -flat_grad
                for i in range(num_old - 1, -1, -1):
                    al[i] = _dot(old_stps[i], q) * ro[i]
                    q += old_dirs[i] * float(-al[i])
                d = r = q * H_diag
                for i in range(num_old):
                    be_i = _dot(old_dirs[i], r) * ro[i]
                    r += old_stps[i] * float(al[i] - be_i)

            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.copy()
            else:
                prev_flat_grad[...] = flat_grad
            prev_loss = loss

            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / np.abs(flat_grad).sum()) * lr
            else:
                t = lr

            gtd = _dot(flat_grad, d)
            if gtd > -tolerance_change:
                break

            ls_func_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = self._clone_param()

                def obj_func(x: Any, t: Any, d: Any) -> tuple[float, Any]:
                    return self._directional_evaluate(closure, x, t, d)

                loss, flat_grad, t, ls_func_evals = _strong_wolfe(obj_func, x_init, t, d, loss, flat_grad, gtd,
                                                                  max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = np.abs(flat_grad).max() <= tolerance_grad
            else:
                self._add_grad(t, d)
                if n_iter != max_iter:
                    # Re-evaluate, except after the last iteration (its loss would not be used).
                    loss = float(closure())
                    flat_grad = self._gather_flat_grad()
                    opt_cond = np.abs(flat_grad).max() <= tolerance_grad
                    ls_func_evals = 1

            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            if n_iter == max_iter:
                break
            if current_evals >= max_eval:
                break
            if opt_cond:
                break
            if np.abs(d * t).max() <= tolerance_change:
                break
            if abs(loss - prev_loss) < tolerance_change:
                break

        new_state = {"d": d, "t": t, "old_dirs": old_dirs, "old_stps": old_stps, "ro": ro, "H_diag": H_diag,
                     "prev_flat_grad": prev_flat_grad}
        for key, value in new_state.items():
            state[key] = _to_state(value)
        state["prev_loss"] = prev_loss
        if al is not None:
            state["al"] = _to_state(al)
        return orig_loss
