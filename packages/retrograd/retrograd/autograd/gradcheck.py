"""gradcheck and gradgradcheck: compare analytical gradients (the backward
formulas, through rg.autograd.grad) with finite differences
(``torch.autograd.gradcheck``).

What this module must never do: change the caller's tensors. Finite
differences perturb a private copy of each input in place, never the input.
Jacobians are NumPy float arrays of shape (input.numel(), output.numel()),
as torch lays them out.
"""
from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from retrograd.core import Tensor, grad as _grad, tensor as _tensor
from retrograd.autograd.function import Function

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck", "get_numerical_jacobian",
           "get_analytical_jacobian"]


class GradcheckError(RuntimeError):
    """Raised by :func:`gradcheck` and :func:`gradgradcheck` when a check fails.

    A RuntimeError (as torch's ``GradcheckError``), whose message names
    the output, the input and the Jacobian entries that disagree.
    """


FAILED_BATCHED_GRAD_MSG = (
    "gradcheck or gradgradcheck failed while testing batched gradient computation "
    "(grad(..., is_grads_batched=True) against one grad() per batch element). A node's "
    "backward gave a different result when it ran on a batch of gradients: if it is marked "
    "`batched: true` in derivatives.yaml, its formula is not batch-safe. Call "
    "gradcheck/gradgradcheck with check_batched_grad=False to skip this check.")

FAST_FAIL_SLOW_OK_MSG = (
    "Fast gradcheck failed but element-wise differences are small. This means that the "
    "test might've passed in slow_mode! Call gradcheck/gradgradcheck with fast_mode=False.")


# ---------------------------------------------------------------------------
# inputs and outputs

def _as_tuple(x):
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _is_diff(t):
    return isinstance(t, Tensor) and t.requires_grad


def _differentiable_outputs(out):
    # Non-tensor outputs (ints, None, ...) are ignored, as are tensors that
    # do not require grad.
    return tuple(o for o in _as_tuple(out) if _is_diff(o))


def _tensor_outputs(out):
    return tuple(o for o in _as_tuple(out) if isinstance(o, Tensor))


def _check_inputs(inputs):
    found = False
    for idx, inp in enumerate(inputs):
        if not _is_diff(inp):
            continue
        kind = inp.dtype.kind
        if kind == "c":
            raise ValueError(
                f"gradcheck: input #{idx} is complex ({inp.dtype}); complex inputs are not supported "
                "by retrograd's gradcheck. Check the real and imaginary parts as separate real inputs.")
        if inp.dtype != np.float64:
            warnings.warn(
                f"Input #{idx} requires gradient and is not a double precision floating point "
                f"({inp.dtype}). This check will likely fail if all the inputs are not of double "
                "precision floating point.", stacklevel=3)
        arr = inp._array
        if arr.size and any(st == 0 and sz > 1 for st, sz in zip(arr.strides, arr.shape)):
            raise RuntimeError(
                f"The {idx}th input has a dimension with stride 0. gradcheck only supports inputs "
                "that are non-overlapping to be able to compute the numerical gradients correctly. "
                "You should call .clone() on the input before passing it to gradcheck.")
        found = True
    if not found:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, but none of them "
            "have requires_grad=True.")


def _check_outputs(outputs):
    for i, o in enumerate(outputs):
        if o.dtype.kind == "c":
            raise ValueError(
                f"gradcheck: output {i} is complex ({o.dtype}); complex outputs are not supported "
                "by retrograd's gradcheck. Return the real and imaginary parts as separate outputs.")


def _host(a):
    # A float64 NumPy copy of an array (NumPy or CuPy) or tensor.
    if isinstance(a, Tensor):
        a = a._array
    if not isinstance(a, np.ndarray):
        get = getattr(a, "get", None)
        a = get() if get is not None else np.asarray(a)
    return np.array(a, dtype=np.float64, copy=True)


def _perturbable_copies(inputs):
    # Private leaf copies of the inputs to perturb in place (the caller's
    # tensors, their version counters and .grad stay untouched).
    out = []
    for x in inputs:
        if isinstance(x, Tensor):
            c = _tensor(x._array.copy(), device=x.device, requires_grad=x.requires_grad)
            out.append(c)
        else:
            out.append(x)
    return out


# ---------------------------------------------------------------------------
# numerical side

def _eval_outputs(func, inputs):
    return [_host(o) for o in _tensor_outputs(func(*inputs))]


def _eval_outputs_meta(func, inputs):
    # (shape, dtype, float64 copy) of each tensor output: copied at once,
    # since an output may be a view of the input about to be perturbed again.
    return [(tuple(o.shape), o.dtype, _host(o)) for o in _tensor_outputs(func(*inputs))]


def _writable_in_place(arr):
    # Whether one element of `arr` can be perturbed alone: writable memory
    # where no two elements share a location (not a broadcast/expanded view).
    flags = getattr(arr, "flags", None)
    if flags is not None and not getattr(flags, "writeable", True):
        return False
    return all(st != 0 or n <= 1 for st, n in zip(arr.strides, arr.shape))


def _check_same_dtype_and_shape(lo, hi, eps, idx):
    # torch's _check_outputs_same_dtype_and_shape: an output whose shape or
    # dtype depends on the input's values has no finite difference.
    on_index = f"on index {idx} " if idx is not None else ""
    for (a_shape, a_dtype, _), (b_shape, b_dtype, _) in zip(lo, hi):
        assert a_shape == b_shape, (
            f"Expected `func` to return outputs with the same shape when inputs are perturbed "
            f"{on_index}by {eps}, but got: shapes {a_shape} and {b_shape}.")
        assert a_dtype == b_dtype, (
            f"Expected `func` to return outputs with the same dtype when inputs are perturbed "
            f"{on_index}by {eps}, but got: dtypes {a_dtype} and {b_dtype}.")
    assert len(lo) == len(hi), (
        f"Expected `func` to return the same number of outputs when inputs are perturbed "
        f"{on_index}by {eps}, but got: {len(lo)} and {len(hi)}.")


def _numerical_jacobian_cols(func, inputs, input_idx, eps, deltas):
    """For each direction in ``deltas`` (flat arrays of input[input_idx]'s size
    or a flat index), the central difference (f(x + eps d) - f(x - eps d)) / 2 eps
    of every tensor output, flattened. Yields one list (per output) per delta.

    As torch, the caller's input itself is perturbed (its memory, not its
    version counter) and restored after each evaluation, so that a function
    that also reads the tensor through a closure sees the perturbation. An
    input whose memory cannot take it (read-only, broadcast) is perturbed on a
    private copy instead."""
    args = list(inputs)
    arr = args[input_idx]._array
    if not _writable_in_place(arr):
        args = _perturbable_copies(inputs)
        arr = args[input_idx]._array
    for d in deltas:
        if isinstance(d, (int, np.integer)):
            idx = np.unravel_index(int(d), arr.shape)
            orig = arr[idx].copy() if hasattr(arr[idx], "copy") else arr[idx]
            try:
                arr[idx] = orig - eps
                lo = _eval_outputs_meta(func, args)
                arr[idx] = orig + eps
                hi = _eval_outputs_meta(func, args)
            finally:
                arr[idx] = orig
            where = tuple(int(i) for i in idx)
        else:
            orig = arr.copy()
            step = (eps * d).astype(arr.dtype, copy=False).reshape(arr.shape)
            if not isinstance(arr, np.ndarray):      # a CuPy array: the step goes there too
                import cupy
                step = cupy.asarray(step)
            try:
                arr[...] = orig - step
                lo = _eval_outputs_meta(func, args)
                arr[...] = orig + step
                hi = _eval_outputs_meta(func, args)
            finally:
                arr[...] = orig
            where = None
        _check_same_dtype_and_shape(lo, hi, eps, where)
        yield [((h[2] - l[2]) / (2 * eps)).reshape(-1) for h, l in zip(hi, lo)]


def get_numerical_jacobian(func, inputs, eps=1e-6):
    """Numerical Jacobians: result[j][k] is d(output k)/d(input j) as an
    (input_j.numel(), output_k.numel()) array, for each input j that requires
    grad and each tensor output k."""
    inputs = _as_tuple(inputs)
    result = []
    for idx, x in enumerate(inputs):
        if not _is_diff(x):
            continue
        cols = list(_numerical_jacobian_cols(func, inputs, idx, eps, range(x.numel())))
        if cols:
            result.append([np.stack([c[k] for c in cols]) for k in range(len(cols[0]))])
        else:                           # an input without elements: (0, output.numel()) each
            result.append([np.zeros((0, o.size)) for o in _eval_outputs(func, inputs)])
    return result


# ---------------------------------------------------------------------------
# analytical side

def _vjp(output, diff_inputs, grad_output):
    return _grad(output, diff_inputs, grad_output, retain_graph=True, allow_unused=True)


def _grad_output_like(o, flat):
    g = np.asarray(flat, dtype=o.dtype).reshape(o.shape)
    return _tensor(g, device=o.device)


def _analytical_rows(output, diff_inputs, check_grad_dtypes, vectors=None):
    """Rows of the analytical Jacobian of ``output`` for each differentiable
    input (one backward per output element, or per vector in fast mode).
    Returns (jacobians per input, types_ok, sizes_ok)."""
    n = output.numel()
    if vectors is None:
        vectors = [np.eye(1, n, k).reshape(-1) for k in range(n)] if n else []
    cols = [[] for _ in diff_inputs]
    types_ok = sizes_ok = True
    for v in vectors:
        gs = _vjp(output, diff_inputs, _grad_output_like(output, v))
        for i, (g, x) in enumerate(zip(gs, diff_inputs)):
            if g is None:
                cols[i].append(np.zeros(x.numel()))
                continue
            if g.dtype != x.dtype:
                types_ok = False
            if tuple(g.shape) != tuple(x.shape):
                sizes_ok = False
                cols[i].append(np.zeros(x.numel()))
                continue
            cols[i].append(_host(g).reshape(-1))
    jac = [np.stack(c, axis=1) if c else np.zeros((x.numel(), 0)) for c, x in zip(cols, diff_inputs)]
    return jac, types_ok, sizes_ok


def _analytical_jacobian_checked(output, diff_inputs, nondet_tol, check_grad_dtypes, vectors=None):
    # Computed twice: a backward must give the same result when run again
    # with the same grad_output (torch calls this reentrancy).
    j1, types_ok, sizes_ok = _analytical_rows(output, diff_inputs, check_grad_dtypes, vectors)
    j2, _, _ = _analytical_rows(output, diff_inputs, check_grad_dtypes, vectors)
    if not types_ok and check_grad_dtypes:
        raise GradcheckError("Gradient has dtype mismatch")
    if not sizes_ok:
        raise GradcheckError("Analytical gradient has incorrect size")
    for a, b in zip(j1, j2):
        if a.size and np.abs(a - b).max() > nondet_tol:
            raise GradcheckError(
                "Backward is not reentrant, i.e., running backward with same input and grad_output "
                "multiple times gives different values, although analytical gradient matches "
                f"numerical gradient. The tolerance for nondeterminism was {nondet_tol}. "
                "Pass nondet_tol= (e.g. 1e-12) if the backward is expected to be nondeterministic.")
    return j1


def get_analytical_jacobian(inputs, output, nondet_tol=0.0):
    """Analytical Jacobians of ``output`` with respect to each input that
    requires grad, as (input.numel(), output.numel()) arrays."""
    diff = [x for x in _as_tuple(inputs) if _is_diff(x)]
    return _analytical_jacobian_checked(output, diff, nondet_tol, False)


# ---------------------------------------------------------------------------
# messages

def _worst_entries(a, n, in_shape, out_shape, count=5):
    diff = np.abs(a - n)
    diff = np.where(np.isnan(diff), np.inf, diff)
    order = np.argsort(diff, axis=None)[::-1][:count]
    lines = []
    for flat in order:
        r, c = np.unravel_index(flat, diff.shape)
        if diff[r, c] == 0:
            break
        ii = tuple(int(v) for v in np.unravel_index(r, in_shape)) if in_shape else ()
        oi = tuple(int(v) for v in np.unravel_index(c, out_shape)) if out_shape else ()
        lines.append(f"  input index {ii}, output index {oi}: numerical {float(n[r, c])!r}, "
                     f"analytical {float(a[r, c])!r}, difference {float(a[r, c] - n[r, c])!r}")
    return lines


def _matrix_str(m):
    with np.printoptions(precision=6, threshold=200, linewidth=100):
        return np.array2string(m)


def _notallclose_msg(a, n, out_idx, in_idx, in_shape, out_shape):
    lines = _worst_entries(a, n, in_shape, out_shape)
    return (f"Jacobian mismatch for output {out_idx:d} with respect to input {in_idx:d},\n"
            f"numerical:{_matrix_str(n)}\nanalytical:{_matrix_str(a)}\n"
            f"The entries that differ most (Jacobian rows index the input, columns the output):\n"
            + "\n".join(lines) + "\n")


def _allclose(a, n, rtol, atol):
    return a.shape == n.shape and np.allclose(a, n, rtol=rtol, atol=atol)


# ---------------------------------------------------------------------------
# the checks

def _check_no_differentiable_outputs(func, inputs, eps):
    for per_out in get_numerical_jacobian(func, inputs, eps):
        for jac in per_out:
            if np.any(jac != 0):
                raise GradcheckError(
                    "Numerical gradient for function expected to be zero: no output requires grad, "
                    "but the outputs change when the inputs do")
    return True


def _slow_gradcheck(func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes,
                    nondet_tol):
    if not outputs:
        return _check_no_differentiable_outputs(func, inputs, eps)
    diff_inputs = [x for x in inputs if _is_diff(x)]
    all_tensor_outs = _tensor_outputs(func_out)
    numerical = get_numerical_jacobian(func, inputs, eps)     # [input][tensor output]
    diff_out_pos = [k for k, o in enumerate(all_tensor_outs) if o.requires_grad]
    for i, o in enumerate(outputs):
        analytical = _analytical_jacobian_checked(o, diff_inputs, nondet_tol, check_grad_dtypes)
        for j, (a, x) in enumerate(zip(analytical, diff_inputs)):
            n = numerical[j][diff_out_pos[i]]
            if not _allclose(a, n, rtol, atol):
                raise GradcheckError(_notallclose_msg(a, n, i, j, tuple(x.shape), tuple(o.shape)))
    return True


def _unit_vector(rng, size):
    v = rng.random(size)
    norm = np.linalg.norm(v)
    return v / norm if norm else v


def _fast_gradcheck(func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes,
                    nondet_tol):
    # torch's fast mode: with random unit vectors u (per input) and v (per
    # output), compare v^T J u computed from one directional finite difference
    # per input with one backward per output.
    rng = np.random.default_rng(0)
    diff_idx = [k for k, x in enumerate(inputs) if _is_diff(x)]
    diff_inputs = [inputs[k] for k in diff_idx]
    all_u = [_unit_vector(rng, x.numel()) for x in diff_inputs]
    all_v = [_unit_vector(rng, o.numel()) for o in outputs]
    all_tensor_outs = _tensor_outputs(func_out)
    diff_out_pos = [k for k, o in enumerate(all_tensor_outs) if o.requires_grad]
    # numerical[i][k]: J_k u_i for every tensor output k
    numerical_jvps = [next(_numerical_jacobian_cols(func, inputs, k, eps, [u]))
                      for k, u in zip(diff_idx, all_u)]
    if not outputs:
        for jvps in numerical_jvps:
            for jvp in jvps:
                if jvp.size and np.abs(jvp).max() > nondet_tol:
                    raise GradcheckError(
                        "Numerical gradient for function expected to be zero: no output requires "
                        "grad, but the outputs change when the inputs do")
        return True
    for j, (o, v) in enumerate(zip(outputs, all_v)):
        vjps = _analytical_jacobian_checked(o, diff_inputs, nondet_tol, check_grad_dtypes,
                                            vectors=[v])
        for i, (u, vjp) in enumerate(zip(all_u, vjps)):
            a = float(vjp[:, 0] @ u)
            n = float(v @ numerical_jvps[i][diff_out_pos[j]])
            adjusted_atol = atol * float(u.sum()) * float(v.sum())
            if not np.allclose(a, n, rtol=rtol, atol=adjusted_atol):
                raise GradcheckError(
                    f"Jacobian mismatch for output {j:d} with respect to input {i:d},\n"
                    f"numerical:{n!r}\nanalytical:{a!r}\n"
                    + _slow_mode_report(func, inputs, o, diff_out_pos[j], diff_idx[i], i, eps,
                                        rtol, atol))
    return True


def _slow_mode_report(func, inputs, output, tensor_out_pos, input_pos, diff_input_pos, eps,
                      rtol, atol):
    x = inputs[input_pos]
    cols = list(_numerical_jacobian_cols(func, inputs, input_pos, eps, range(x.numel())))
    n = np.stack([c[tensor_out_pos] for c in cols]) if cols else np.zeros((0, output.numel()))
    diff_inputs = [t for t in inputs if _is_diff(t)]
    a = _analytical_rows(output, diff_inputs, False)[0][diff_input_pos]
    max_diff = float(np.abs(n - a).max()) if n.size else 0.0
    msg = ("\nThe above quantities relating the numerical and analytical jacobians are computed "
           "in fast mode (v^T J u with random unit vectors u, v). Below, we recompute numerical "
           "and analytical jacobians in slow mode:\n\n"
           f"Numerical:\n {_matrix_str(n)}\nAnalytical:\n{_matrix_str(a)}\n\n"
           f"The max per-element difference (slow mode) is: {max_diff}.\n"
           "The entries that differ most (Jacobian rows index the input, columns the output):\n"
           + "\n".join(_worst_entries(a, n, tuple(x.shape), tuple(output.shape))) + "\n")
    if np.allclose(a, n, rtol=rtol, atol=atol):
        msg += FAST_FAIL_SLOW_OK_MSG
    return msg


def _test_batched_grad(inputs, output, output_idx):
    diff_inputs = [x for x in inputs if _is_diff(x)]
    rng = np.random.default_rng(1)
    gos = [rng.standard_normal(tuple(output.shape)).astype(output.dtype) for _ in range(2)]
    rows = []
    for go in gos:
        gs = _vjp(output, diff_inputs, _tensor(go, device=output.device))
        rows.append([np.zeros(tuple(x.shape)) if g is None else _host(g)
                     for g, x in zip(gs, diff_inputs)])
    expected = [np.stack(col) for col in zip(*rows)]
    try:
        result = _grad(output, diff_inputs, _tensor(np.stack(gos), device=output.device),
                       retain_graph=True, allow_unused=True, is_grads_batched=True)
    except RuntimeError as ex:
        raise GradcheckError(
            f"While computing batched gradients, got: {ex}\n\n{FAILED_BATCHED_GRAD_MSG}") from ex
    for input_idx, (res, exp, x) in enumerate(zip(result, expected, diff_inputs)):
        got = np.zeros((2,) + tuple(x.shape)) if res is None else _host(res)
        if got.shape == exp.shape and np.allclose(got, exp):
            continue
        raise GradcheckError(
            f"For output {output_idx} and input {input_idx}:\n\n{FAILED_BATCHED_GRAD_MSG}\n\n"
            f"Got:\n{_matrix_str(got)}\n\nExpected:\n{_matrix_str(exp)}")
    return True


def _zeros_like(o):
    return _tensor(np.zeros(tuple(o.shape), dtype=o.dtype), device=o.device)


def _test_backward_mul_by_grad_output(outputs, inputs, masked):
    diff_inputs = [x for x in inputs if _is_diff(x)]
    if not diff_inputs:
        raise GradcheckError("no Tensors requiring grad found in input")
    grads_input = _grad(outputs, diff_inputs, [_zeros_like(o) for o in outputs],
                        allow_unused=True, retain_graph=True)
    for gi, di in zip(grads_input, diff_inputs):
        if gi is None:
            continue
        g = _host(gi)
        if masked:
            if not np.allclose(g, 0):
                raise GradcheckError("backward not multiplied by grad_output")
        elif not np.all(g == 0):
            raise GradcheckError("backward not multiplied by grad_output")
        if gi.dtype != di.dtype:
            raise GradcheckError("grad is incorrect type")
        if gi.device != di.device:
            raise GradcheckError("grad is incorrect device")
        if tuple(gi.shape) != tuple(di.shape):
            raise GradcheckError("grad is incorrect size")
    return True


class _UndefinedGrad(Function):
    """Identity forward whose backward gives no gradient at all (torch's
    UndefinedGrad): the node before it sees an undefined output gradient."""

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        return None


def _test_undefined_backward_mode(func, inputs):
    # torch's check: every backward must cope with undefined output grads,
    # all of them at once and (with several outputs) one at a time, and give
    # undefined or zero input grads when all of them are.
    diff_inputs = [x for x in inputs if _is_diff(x)]
    if not diff_inputs:
        raise GradcheckError("no Tensors requiring grad found in input")
    notes = ('Please look at "Notes about undefined output gradients" in '
             '"tools/autograd/derivatives.yaml"')

    def warn_bc_breaking():
        warnings.warn(
            "Backwards compatibility: New undefined gradient support checking feature is enabled "
            "by default, but it may break existing callers of this function. If this is true for "
            'you, you can call this function with "check_undefined_grad=False" to disable the '
            "feature", stacklevel=4)

    def check(outs):
        try:
            grads_input = _grad(outs, diff_inputs, [_zeros_like(o) for o in outs],
                                allow_unused=True)
        except RuntimeError as e:
            warn_bc_breaking()
            raise GradcheckError(
                f"Expected backward function to handle undefined output grads. {notes}") from e
        for gi in grads_input:
            if gi is not None and not np.all(_host(gi) == 0):
                warn_bc_breaking()
                raise GradcheckError(
                    "Expected all input grads to be undefined or zero when all output grads are "
                    f"undefined or zero. {notes}")
        return True

    outs = [o for o in _differentiable_outputs(func(*inputs)) if isinstance(o, Tensor)]
    check([_UndefinedGrad.apply(o) for o in outs])
    if len(outs) > 1:
        for k in range(len(outs)):
            outs = _differentiable_outputs(func(*inputs))
            check([_UndefinedGrad.apply(o) if i == k else o for i, o in enumerate(outs)])
    return True


def _require_forward_ad(what):
    try:
        import retrograd.forward_ad as fw
    except ImportError as exc:
        raise RuntimeError(
            f"gradcheck({what}=True) checks forward-mode AD, which needs the "
            "'retrograd-forward-ad' distribution (pip install retrograd-forward-ad); "
            f"it is not importable ({exc}). Pass {what}=False to check reverse mode only.") from exc
    return fw


def _forward_jacobian(fw, func, inputs, diff_idx):
    """result[j][k]: d(output k)/d(input diff_idx[j]) from forward mode, as an
    (input numel, output numel) array: one dual pass per input element."""
    result = []
    for j in diff_idx:
        x = inputs[j]
        cols = []
        for e in range(x.numel()):
            basis = np.zeros(x.numel(), dtype=x.dtype)
            basis[e] = 1
            with fw.dual_level() as level:
                args = list(inputs)
                args[j] = fw.make_dual(x.detach(), _wrap(basis.reshape(tuple(x.shape)), x), level=level)
                outs = _tensor_outputs(func(*args))
                col = []
                for o in outs:
                    t = fw.unpack_dual(o, level=level).tangent
                    col.append(np.zeros(o.numel()) if t is None else _host(t).reshape(-1))
            cols.append(col)
        if cols:
            result.append([np.stack([c[k] for c in cols]) for k in range(len(cols[0]))])
        else:
            result.append([np.zeros((0, o.numel())) for o in _tensor_outputs(func(*inputs))])
    return result


def _wrap(array, like):
    from retrograd.core import tensor as _tensor
    return _tensor(array, device=like.device)


def _check_forward_ad(fw, func, func_out, inputs, eps, rtol, atol):
    # torch's _check_analytical_jacobian_attributes for forward mode: every
    # column of the Jacobian from a dual pass against central differences.
    diff_idx = [k for k, x in enumerate(inputs) if _is_diff(x)]
    numerical = get_numerical_jacobian(func, inputs, eps)
    analytical = _forward_jacobian(fw, func, inputs, diff_idx)
    outs = _tensor_outputs(func_out)
    for j, k in enumerate(diff_idx):
        for i, o in enumerate(outs):
            if not getattr(o, "dtype", None) or o.dtype.kind not in "fc":
                continue
            a, n = analytical[j][i], numerical[j][i]
            if not _allclose(a, n, rtol, atol):
                raise GradcheckError(
                    "Jacobian computed with forward mode mismatch for output "
                    + _notallclose_msg(a, n, i, k, tuple(inputs[k].shape), tuple(o.shape))
                    .split("Jacobian mismatch for output ", 1)[1])
    return True


def _gradcheck_helper(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad,
                      check_grad_dtypes, check_batched_grad, check_batched_forward_grad,
                      check_forward_ad, check_backward_ad, fast_mode, masked):
    tupled_inputs = _as_tuple(inputs)
    _check_inputs(tupled_inputs)
    func_out = func(*tupled_inputs)
    outputs = _differentiable_outputs(func_out)
    _check_outputs(outputs)
    if check_batched_forward_grad:
        _require_forward_ad("check_batched_forward_grad")
        raise NotImplementedError(
            "gradcheck(check_batched_forward_grad=True): retrograd's forward AD has no batched "
            "tangents (vmap); use check_forward_ad=True, which checks every Jacobian column.")
    # torch's order: the backward Jacobians, then the forward-AD ones, then
    # the further backward checks (so a function wrong both ways reports its
    # backward mismatch)
    if check_backward_ad:
        check = _fast_gradcheck if fast_mode else _slow_gradcheck
        check(func, func_out, tupled_inputs, outputs, eps, rtol, atol, check_grad_dtypes, nondet_tol)
    if check_forward_ad:
        _check_forward_ad(_require_forward_ad("check_forward_ad"), func, func_out, tupled_inputs,
                          eps, rtol, atol)
    if not check_backward_ad:
        return True
    if check_batched_grad:
        for i, o in enumerate(outputs):
            _test_batched_grad(tupled_inputs, o, i)
    if outputs:
        _test_backward_mul_by_grad_output(outputs, tupled_inputs, masked)
        if check_undefined_grad:
            _test_undefined_backward_mode(func, tupled_inputs)
    return True


def gradcheck(func: Callable[..., Tensor | Sequence[Tensor]], inputs: Tensor | Sequence[Any], *,
              eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3, raise_exception: bool = True,
              nondet_tol: float = 0.0, check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
              check_batched_grad: bool = False, check_batched_forward_grad: bool = False,
              check_forward_ad: bool = False, check_backward_ad: bool = True, fast_mode: bool = False,
              masked: bool | None = None) -> bool:
    """Check the gradients of ``func`` against finite differences.

    Compares, for every input with ``requires_grad=True`` and every output,
    the Jacobian that backward computes with the one central finite
    differences give (``torch.autograd.gradcheck``). Use float64 inputs: in
    float32 the finite differences are too coarse for the default
    tolerances.

    Parameters
    ----------
    func : callable
        A function of tensors returning a Tensor or a tuple of Tensors.
    inputs : Tensor or tuple
        The arguments of ``func``; those that require grad are checked.
    eps : float, optional
        The step of the finite differences. Default 1e-6.
    atol : float, optional
        Absolute tolerance between the numerical and the analytical Jacobian.
        Default 1e-5.
    rtol : float, optional
        Relative tolerance. Default 1e-3.
    raise_exception : bool, optional
        Raise GradcheckError on a mismatch (True, the default) or return
        False.
    nondet_tol : float, optional
        How far two backward passes over the same input may differ (for
        nondeterministic backward formulas). Default 0.
    check_undefined_grad : bool, optional
        Also check that backward accepts undefined (None) output gradients.
        Default True.
    check_grad_dtypes : bool, optional
        Also check that each gradient has its input's dtype. Default False.
    check_batched_grad : bool, optional
        Also check ``grad(..., is_grads_batched=True)`` against one backward
        per gradient. Default False.
    check_batched_forward_grad : bool, optional
        Also check batched forward gradients. Default False.
    check_forward_ad : bool, optional
        Also check forward-mode gradients (needs retrograd-forward-ad).
        Default False.
    check_backward_ad : bool, optional
        Check backward-mode gradients. Default True.
    fast_mode : bool, optional
        Compare random projections of the Jacobians instead of the full
        matrices: much faster for large inputs. Default False.
    masked : bool, optional
        Accepted for torch's signature (sparse masked semantics); retrograd
        has no sparse tensors.

    Returns
    -------
    bool
        True when every check passes; False on a mismatch with
        ``raise_exception=False``.

    Raises
    ------
    GradcheckError
        On a mismatch (with ``raise_exception=True``): the message names the
        output, the input and the Jacobian entries that disagree.
    ValueError
        For an inconsistent choice of checks.
    TypeError
        When ``func`` is not callable.

    Examples
    --------
    >>> import retrograd as rg
    >>> x = rg.tensor([0.5, 1.5], dtype=rg.float64, requires_grad=True)   # (finite differences need float64)
    >>> rg.autograd.gradcheck(lambda x: (x.sin() * x).sum(), (x,))
    True
    """
    if not (check_forward_ad or check_backward_ad):
        raise ValueError("Expected at least one of check_forward_ad or check_backward_ad to be True")
    if check_batched_grad and not check_backward_ad:
        raise ValueError("Setting check_batched_grad=True requires check_backward_ad to be True")
    if check_batched_forward_grad and not check_forward_ad:
        raise ValueError("Setting check_batched_forward_grad=True requires check_forward_ad to be True")
    if not callable(func):
        raise TypeError(f"gradcheck: func must be callable, got {type(func).__name__}")
    args = dict(func=func, inputs=inputs, eps=eps, atol=atol, rtol=rtol, nondet_tol=nondet_tol,
                check_undefined_grad=check_undefined_grad, check_grad_dtypes=check_grad_dtypes,
                check_batched_grad=check_batched_grad,
                check_batched_forward_grad=check_batched_forward_grad,
                check_forward_ad=check_forward_ad, check_backward_ad=check_backward_ad,
                fast_mode=fast_mode, masked=bool(masked))
    if not raise_exception:
        try:
            return _gradcheck_helper(**args)
        except GradcheckError:
            return False
    return _gradcheck_helper(**args)


def gradgradcheck(func: Callable[..., Tensor | Sequence[Tensor]], inputs: Tensor | Sequence[Any],
                  grad_outputs: Tensor | Sequence[Tensor] | None = None, *, eps: float = 1e-6,
                  atol: float = 1e-5, rtol: float = 1e-3, gen_non_contig_grad_outputs: bool = False,
                  raise_exception: bool = True, nondet_tol: float = 0.0, check_undefined_grad: bool = True,
                  check_grad_dtypes: bool = False, check_batched_grad: bool = False,
                  check_fwd_over_rev: bool = False, check_rev_over_rev: bool = True, fast_mode: bool = False,
                  masked: bool = False) -> bool:
    """Check the second derivatives of ``func`` against finite differences.

    Runs :func:`gradcheck` on the function ``(inputs, grad_outputs) ->
    grad(func(inputs), inputs, grad_outputs, create_graph=True)``: the
    backward of the backward (``torch.autograd.gradgradcheck``).

    Parameters
    ----------
    func : callable
        A function of tensors returning a Tensor or a tuple of Tensors.
    inputs : Tensor or tuple
        The arguments of ``func``; those that require grad are checked.
    grad_outputs : Tensor or tuple of Tensor, optional
        The output gradients to differentiate through. Default: random
        values (from a fixed seed) that require grad.
    eps : float, optional
        The step of the finite differences. Default 1e-6.
    atol : float, optional
        Absolute tolerance between the numerical and the analytical Jacobian.
        Default 1e-5.
    rtol : float, optional
        Relative tolerance. Default 1e-3.
    gen_non_contig_grad_outputs : bool, optional
        Make the random ``grad_outputs`` non-contiguous. Default False.
    raise_exception : bool, optional
        Raise GradcheckError on a mismatch (True, the default) or return
        False.
    nondet_tol : float, optional
        Tolerance for nondeterministic backward formulas. Default 0.
    check_undefined_grad : bool, optional
        Also check undefined (None) output gradients. Default True.
    check_grad_dtypes : bool, optional
        Also check the gradients' dtypes. Default False.
    check_batched_grad : bool, optional
        Also check batched gradients. Default False.
    check_fwd_over_rev : bool, optional
        Check forward-over-reverse (needs retrograd-forward-ad). Default
        False.
    check_rev_over_rev : bool, optional
        Check reverse-over-reverse. Default True.
    fast_mode : bool, optional
        Compare random projections of the Jacobians. Default False.
    masked : bool, optional
        Accepted for torch's signature; retrograd has no sparse tensors.

    Returns
    -------
    bool
        True when every check passes; False on a mismatch with
        ``raise_exception=False``.

    Raises
    ------
    GradcheckError
        On a mismatch, with ``raise_exception=True``.
    ValueError
        For an inconsistent choice of checks.

    Examples
    --------
    >>> import retrograd as rg
    >>> x = rg.tensor([0.5, 1.5], dtype=rg.float64, requires_grad=True)
    >>> rg.autograd.gradgradcheck(lambda x: (x ** 3).sum(), (x,))
    True
    """
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise ValueError("Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True")
    if check_undefined_grad and not check_rev_over_rev:
        raise ValueError("Setting check_undefined_grad=True requires check_rev_over_rev to be True")
    if check_batched_grad and not check_rev_over_rev:
        raise ValueError("Setting check_batched_grad=True requires check_rev_over_rev to be True")
    tupled_inputs = _as_tuple(inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(2)
        outputs = _differentiable_outputs(func(*tupled_inputs))
        made: list[Tensor] = []
        for x in outputs:
            dtype = x.dtype if x.dtype.kind in "fc" else np.float64
            g = rng.uniform(-1, 1, tuple(x.shape)).astype(dtype)
            if gen_non_contig_grad_outputs and g.ndim:
                # the same values, laid out every other element of a wider array
                wide = np.empty(g.shape[:-1] + (2 * g.shape[-1],), dtype=dtype)
                wide[..., ::2] = g
                g = wide[..., ::2]
            made.append(_tensor(g, device=x.device, requires_grad=True))
        tupled_grad_outputs = tuple(made)
    else:
        tupled_grad_outputs = _as_tuple(grad_outputs)
    num_outputs = len(tupled_grad_outputs)
    diff_input_args_indices = {i for i, x in enumerate(tupled_inputs) if _is_diff(x)}
    diff_grad_output_indices = {i for i, x in enumerate(tupled_grad_outputs) if _is_diff(x)}

    def new_func(*args):
        input_args = tuple(x.requires_grad_() if i in diff_input_args_indices else x
                           for i, x in enumerate(args[:-num_outputs]))
        outputs = _differentiable_outputs(func(*input_args))
        gos = tuple(x.requires_grad_() if i in diff_grad_output_indices else x
                    for i, x in enumerate(args[-num_outputs:]))
        diff_input_args = tuple(x for i, x in enumerate(input_args) if i in diff_input_args_indices)
        grad_inputs = _grad(outputs, diff_input_args, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in grad_inputs if g is not None)

    return gradcheck(new_func, tupled_inputs + tupled_grad_outputs, eps=eps, atol=atol,
                     rtol=rtol, raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad,
                     fast_mode=fast_mode, check_forward_ad=check_fwd_over_rev,
                     check_backward_ad=check_rev_over_rev, masked=masked)

