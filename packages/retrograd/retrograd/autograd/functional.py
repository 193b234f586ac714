"""Higher-level autograd: vjp, jvp, jacobian, hessian, hvp, vhp
(``torch.autograd.functional``, with its semantics and messages).

Inputs and outputs mirror the caller's: a Tensor in, a Tensor out; a tuple
in, a tuple out. ``jvp``, ``hvp`` use the double-backward trick (torch's
reverse-mode implementation); ``jacobian(vectorize=True)`` computes every
row in one batched backward (``grad(..., is_grads_batched=True)``).

What this module must never do: differentiate through the caller's own
tensor objects. Inputs are re-wrapped first (a detached copy, or a
differentiable alias with create_graph), as torch does, so tensors the
function captures from outside are told apart from its arguments.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, overload

import numpy as np

from retrograd.core import (
    Tensor,
    enable_grad,
    grad as _grad,
    is_grad_enabled,
    set_grad_enabled,
    ones_like as _ones_like,
    view as _view,
    zeros_like as _zeros_like,
)

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]

# what the functions take, as torch's: a Tensor or a tuple of them (the
# results mirror it), and a function of them returning one or several
_Tensors = Tensor | Sequence[Tensor]
_Func = Callable[..., Tensor | Sequence[Tensor]]


# ---------------------------------------------------------------------------
# utilities (torch's, one for one)

def _as_tuple_nocheck(x):
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _as_tuple(inp, arg_name=None, fn_name=None):
    # (whether inp was a tuple, inp as a tuple of Tensors)
    if arg_name is None and fn_name is None:
        return _as_tuple_nocheck(inp)
    is_inp_tuple = True
    if not isinstance(inp, tuple):
        inp = (inp,)
        is_inp_tuple = False
    for i, el in enumerate(inp):
        if not isinstance(el, Tensor):
            if is_inp_tuple:
                raise TypeError(
                    f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors "
                    f"but the value at index {i} has type {type(el)}.")
            raise TypeError(
                f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but "
                f"the given {arg_name} has type {type(el)}.")
    return is_inp_tuple, inp


def _tuple_postprocess(res, to_unpack):
    # Undo _as_tuple: to_unpack is one flag, or (outer, inner) for nested tuples.
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _grad_preprocess(inputs, create_graph, need_graph):
    # Always a new Tensor object (see the module docstring): a differentiable
    # alias when the caller wants gradients to flow back to its inputs.
    res = []
    for inp in inputs:
        if create_graph and inp.requires_grad:
            res.append(_view(inp, tuple(inp.shape)))
        else:
            res.append(inp.detach().requires_grad_(need_graph))
    return tuple(res)


def _grad_postprocess(inputs, create_graph):
    # Results carry no history unless the caller asked for create_graph.
    if isinstance(inputs[0], Tensor):
        if not create_graph:
            return tuple(inp.detach() for inp in inputs)
        return inputs
    return tuple(_grad_postprocess(inp, create_graph) for inp in inputs)


def _validate_v(v, other, is_other_tuple):
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if tuple(el_v.shape) != tuple(el_other.shape):
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(
                f"{prepend}v has invalid size: should be {tuple(el_other.shape)} but got "
                f"{tuple(el_v.shape)}.")


def _check_requires_grad(inputs, input_type, strict):
    if not strict:
        return
    for i, inp in enumerate(inputs):
        if inp is None:
            raise RuntimeError(
                f"The output of the user-provided function is independent of input {i}. This is not "
                "allowed in strict mode.")
        if not inp.requires_grad:
            if input_type == "hessian":
                raise RuntimeError(
                    f"The hessian of the user-provided function with respect to input {i} is "
                    "independent of the input. This is not allowed in strict mode. You should ensure "
                    "that your function is thrice differentiable and that the hessian depends on the "
                    "inputs.")
            if input_type == "jacobian":
                raise RuntimeError(
                    "While computing the hessian, found that the jacobian of the user-provided "
                    f"function with respect to input {i} is independent of the input. This is not "
                    "allowed in strict mode. You should ensure that your function is twice "
                    "differentiable and that the jacobian depends on the inputs (this would be "
                    "violated by a linear function for example).")
            if input_type == "grad_inputs":
                raise RuntimeError(
                    f"The gradient with respect to input {i} is independent of the inputs of the "
                    "user-provided function. This is not allowed in strict mode.")
            raise RuntimeError(
                f"Output {i} of the user-provided function does not require gradients. The outputs "
                "must be computed in a differentiable manner from the input when running in strict "
                "mode.")


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None,
                   is_grads_batched=False):
    # grad() that skips outputs that are None or do not require grad.
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    new_outputs, new_grad_outputs = [], []
    for out, grad_out in zip(outputs, grad_outputs):
        if out is not None and out.requires_grad:
            new_outputs.append(out)
            new_grad_outputs.append(grad_out)
    if not new_outputs:
        return (None,) * len(inputs)
    return _grad(tuple(new_outputs), inputs, tuple(new_grad_outputs), allow_unused=True,
                 create_graph=create_graph, retain_graph=retain_graph,
                 is_grads_batched=is_grads_batched)


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    res = []
    for i, grads_i in enumerate(grads):
        if grads_i is None:
            if strict:
                if stage == "back":
                    raise RuntimeError(
                        f"The output of the user-provided function is independent of input {i}. "
                        "This is not allowed in strict mode.")
                if stage == "back_trick":
                    raise RuntimeError(
                        f"The gradient with respect to the input is independent of entry {i} in the "
                        "grad_outputs when using the double backward trick to compute forward mode "
                        "gradients. This is not allowed in strict mode.")
                if stage == "double_back":
                    raise RuntimeError(
                        f"The jacobian of the user-provided function is independent of input {i}. "
                        "This is not allowed in strict mode.")
                raise RuntimeError(
                    "The hessian of the user-provided function is independent of entry "
                    f"{i} in the grad_jacobian. This is not allowed in strict mode as it prevents "
                    "from using the double backward trick to replace forward mode AD.")
            grads_i = _zeros_like(refs[i])
        elif strict and create_graph and not grads_i.requires_grad:
            if "double" not in stage:
                raise RuntimeError(
                    f"The jacobian of the user-provided function is independent of input {i}. This "
                    "is not allowed in strict mode when create_graph=True.")
            raise RuntimeError(
                f"The hessian of the user-provided function is independent of input {i}. This is "
                "not allowed in strict mode when create_graph=True.")
        res.append(grads_i)
    return tuple(res)


def _prepare_v(v, refs, is_refs_tuple, fn_name, create_graph, what):
    if v is not None:
        _, v = _as_tuple(v, "v", fn_name)
        v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
        _validate_v(v, refs, is_refs_tuple)
        return v
    if len(refs) != 1 or refs[0].numel() != 1:
        raise RuntimeError(what)
    return None


# ---------------------------------------------------------------------------
# public API

def vjp(func: _Func, inputs: _Tensors, v: _Tensors | None = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """The vector-Jacobian product ``v^T J`` of ``func`` at ``inputs``.

    One reverse-mode pass (a backward from the outputs with ``v`` as their
    gradient), as ``torch.autograd.functional.vjp``.

    Parameters
    ----------
    func : callable
        A function of tensors: called as ``func(*inputs)``, it returns a
        Tensor or a tuple of Tensors.
    inputs : Tensor or tuple of Tensor
        The point at which to differentiate.
    v : Tensor or tuple of Tensor, optional
        The vector, one Tensor per output with the output's shape. May be
        None only when ``func`` returns one Tensor of one element.
    create_graph : bool, optional
        Record the graph of the computation, so that the result can be
        differentiated again (and gradients flow back to inputs that require
        grad). Default False: the results carry no history.
    strict : bool, optional
        Raise a RuntimeError when an output does not depend on an input (the
        result would be a zero that no computation produced), instead of
        returning zeros. Default False.

    Returns
    -------
    tuple
        ``(func_output, vjp)``: the outputs of ``func(*inputs)`` and the
        product, shaped as ``inputs`` (a Tensor for a Tensor, a tuple for a
        tuple).

    Raises
    ------
    TypeError
        When ``inputs`` or the outputs are not Tensors.
    RuntimeError
        When ``v`` does not match the outputs, or, with ``strict=True``, an
        output is independent of an input.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.autograd.functional import vjp
    >>> x = rg.tensor([1.0, 2.0])
    >>> vjp(lambda x: x ** 2, x, rg.ones(2))
    (tensor([1., 4.]), tensor([2., 4.]))
    """
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "vjp")
        _check_requires_grad(outputs, "outputs", strict=strict)
        v = _prepare_v(v, outputs, is_outputs_tuple, "vjp", create_graph,
                       "The vector v can only be None if the user-provided function returns a "
                       "single Tensor with a single element.")
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "back")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(result, is_inputs_tuple)


def jvp(func: _Func, inputs: _Tensors, v: _Tensors | None = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """The Jacobian-vector product ``J v`` of ``func`` at ``inputs``.

    With retrograd-forward-ad installed (and ``strict=False``) it is
    computed in forward mode, in one pass with dual tensors; otherwise with
    the double-backward trick (the vjp is linear in its ``grad_outputs``,
    so differentiating it with respect to them gives ``J v``), which is what
    ``torch.autograd.functional.jvp`` does.

    Parameters
    ----------
    func : callable
        A function of tensors: called as ``func(*inputs)``, it returns a
        Tensor or a tuple of Tensors.
    inputs : Tensor or tuple of Tensor
        The point at which to differentiate.
    v : Tensor or tuple of Tensor, optional
        The vector, one Tensor per input with the input's shape. May be None
        only when there is one input of one element.
    create_graph : bool, optional
        Record the graph of the computation, so that the result can be
        differentiated again (and gradients flow back to inputs that require
        grad). Default False: the results carry no history.
    strict : bool, optional
        Raise a RuntimeError when an output does not depend on an input (the
        result would be a zero that no computation produced), instead of
        returning zeros. Default False.

    Returns
    -------
    tuple
        ``(func_output, jvp)``: the outputs of ``func(*inputs)`` and the
        product, shaped as the outputs.

    Raises
    ------
    TypeError
        When ``inputs`` or the outputs are not Tensors.
    RuntimeError
        When ``v`` does not match the inputs, or, with ``strict=True``, an
        output is independent of an input.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.autograd.functional import jvp
    >>> x = rg.tensor([1.0, 2.0])
    >>> jvp(lambda x: x ** 2, x, rg.ones(2))
    (tensor([1., 4.]), tensor([2., 4.]))
    """
    fw = _forward_ad() if not strict else None
    if fw is not None:
        # (strict=True keeps torch's double-backward method: its checks are
        # about which inputs the vjp depends on, which one forward pass cannot see)
        return _jvp_forward(fw, func, inputs, v, create_graph)
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _prepare_v(v, inputs, is_inputs_tuple, "jvp", create_graph,
                       "The vector v can only be None if the input to the user-provided function "
                       "is a single Tensor with a single element.")
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "jvp")
        _check_requires_grad(outputs, "outputs", strict=strict)
        grad_outputs = tuple(_zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict=strict)
    if create_graph:
        with enable_grad():
            grad_res = _autograd_grad(grad_inputs, grad_outputs, v, create_graph=create_graph)
            result = _fill_in_zeros(grad_res, outputs, strict, create_graph, "back_trick")
    else:
        grad_res = _autograd_grad(grad_inputs, grad_outputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, outputs, strict, create_graph, "back_trick")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(result, is_outputs_tuple)


def _forward_ad():
    try:
        import retrograd.forward_ad as fw
    except ImportError:
        return None
    return fw


def _jvp_forward(fw, func, inputs, v, create_graph):
    # One forward pass with a dual tensor per input, at a level of its own
    # (levels nest, so jvp inside a function being differentiated is fine).
    with set_grad_enabled(create_graph or is_grad_enabled()):
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=create_graph)
        v = _prepare_v(v, inputs, is_inputs_tuple, "jvp", create_graph,
                       "The vector v can only be None if the input to the user-provided function "
                       "is a single Tensor with a single element.")
        if v is None:           # a single one-element input: v defaults to 1
            v = (_ones_like(inputs[0]),)
        elif not create_graph:
            v = tuple(vi.detach() for vi in v)
        with fw.dual_level() as level:
            duals = tuple(fw.make_dual(x, vi, level=level) for x, vi in zip(inputs, v))
            outputs = func(*duals)
            is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                                  "jvp")
            unpacked = [fw.unpack_dual(o, level=level) for o in outputs]
        primals = tuple(u.primal for u in unpacked)
        tangents = tuple(u.tangent for u in unpacked)
        result = tuple(_zeros_like(p) if t is None else t for p, t in zip(primals, tangents))
    outputs = _grad_postprocess(primals, create_graph)
    result = _grad_postprocess(result, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(result, is_outputs_tuple)


def _standard_basis_for(tensors, numels):
    # One (total, numel_k) chunk per tensor; stacked along dim 1 they form the
    # identity: the grad_outputs that pick one output element per batch row.
    total = sum(numels)
    chunks = []
    start = 0
    for t, n in zip(tensors, numels):
        a = np.zeros((total, n), dtype=t.dtype)
        a[np.arange(start, start + n), np.arange(n)] = 1
        chunks.append(_wrap_like(a, t))
        start += n
    return tuple(chunks)


def _wrap_like(array, like):
    from retrograd.core import tensor as _tensor
    return _tensor(array, device=like.device)


def _require_forward_ad(what):
    try:
        import retrograd.forward_ad as fw
    except ImportError as exc:
        raise RuntimeError(
            f"{what} needs forward-mode AD, which needs the 'retrograd-forward-ad' distribution "
            f"(pip install retrograd-forward-ad); it is not importable ({exc}). Use "
            "strategy=\"reverse-mode\".") from exc
    return fw


def jacobian(func: _Func, inputs: _Tensors, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode") -> Tensor | tuple[Any, ...]:
    """The Jacobian of ``func`` at ``inputs``.

    For output ``i`` and input ``j`` the block is a Tensor of shape
    ``output_i.shape + input_j.shape``. By default one backward per output
    element; ``vectorize=True`` computes every row in one batched backward
    (``grad(..., is_grads_batched=True)``), and ``strategy="forward-mode"``
    (with ``vectorize=True``, and retrograd-forward-ad installed) computes
    every column in one forward pass, better when there are more outputs
    than inputs.

    Parameters
    ----------
    func : callable
        A function of tensors: called as ``func(*inputs)``, it returns a
        Tensor or a tuple of Tensors.
    inputs : Tensor or tuple of Tensor
        The point at which to differentiate.
    create_graph : bool, optional
        Record the graph of the computation, so that the result can be
        differentiated again (and gradients flow back to inputs that require
        grad). Default False: the results carry no history.
    strict : bool, optional
        Raise a RuntimeError when an output does not depend on an input (the
        result would be a zero that no computation produced), instead of
        returning zeros. Default False.
    vectorize : bool, optional
        Compute the rows (or columns) together in one batched pass. Default
        False.
    strategy : {"reverse-mode", "forward-mode"}, optional
        How to compute it. Default ``"reverse-mode"``.

    Returns
    -------
    Tensor or tuple
        A Tensor for one input and one output; a tuple over the inputs for
        one output; a tuple over the outputs (of tuples over the inputs, for
        a tuple of inputs) otherwise.

    Raises
    ------
    ValueError
        For an unknown ``strategy``.
    NotImplementedError
        For ``strategy="forward-mode"`` with ``create_graph=True`` or
        without ``vectorize=True``.
    RuntimeError
        With ``strict=True``, when an output is independent of an input.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.autograd.functional import jacobian
    >>> jacobian(lambda x: x ** 2, rg.tensor([1.0, 2.0]))
    tensor([[2., 0.],
            [0., 4.]])
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise ValueError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has more outputs than inputs, "forward-mode" tends to be more performant. '
            'Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "retrograd.autograd.functional.jacobian: `create_graph=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either set '
                '`create_graph=False` or `strategy="reverse-mode"`.')
        if strict:
            raise RuntimeError(
                "retrograd.autograd.functional.jacobian: `strict=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either set '
                '`strict=False` or `strategy="reverse-mode"`.')
        if not vectorize:
            raise NotImplementedError(
                "Computing Jacobian using forward-AD or forward-over-reverse Hessian is only "
                "implemented for `vectorize=True`.")
        fw = _require_forward_ad('jacobian(strategy="forward-mode")')
        return _jacobian_forward(fw, func, inputs)

    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                              "jacobian")
        _check_requires_grad(outputs, "outputs", strict=strict)

        if vectorize:
            if strict:
                raise RuntimeError(
                    "retrograd.autograd.functional.jacobian: `strict=True` and `vectorized=True` "
                    "are not supported together. Please either set `strict=False` or "
                    "`vectorize=False`.")
            return _jacobian_vectorized(inputs, outputs, create_graph, is_inputs_tuple,
                                        is_outputs_tuple)

        jac = []
        for i, out in enumerate(outputs):
            jac_i: tuple[list[Tensor], ...] = tuple([] for _ in inputs)
            flat = out.reshape(-1)
            for k in range(out.numel()):
                vj = _autograd_grad((flat[k],), inputs, retain_graph=True, create_graph=create_graph)
                for el_idx, (jac_i_el, vj_el, inp_el) in enumerate(zip(jac_i, vj, inputs)):
                    if vj_el is not None:
                        if strict and create_graph and not vj_el.requires_grad:
                            raise RuntimeError(
                                f"The jacobian of the user-provided function is independent of "
                                f"input {i}. This is not allowed in strict mode when "
                                "create_graph=True.")
                        jac_i_el.append(vj_el)
                    else:
                        if strict:
                            raise RuntimeError(
                                f"Output {i} of the user-provided function is independent of input "
                                f"{el_idx}. This is not allowed in strict mode.")
                        jac_i_el.append(_zeros_like(inp_el))
            jac.append(tuple(_stack_rows(rows, tuple(out.shape) + tuple(inputs[el].shape),
                                         inputs[el])
                             for el, rows in enumerate(jac_i)))
        jac = _grad_postprocess(tuple(jac), create_graph)
        return _tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))


def _jacobian_forward(fw, func, inputs):
    # One forward pass on a batched dual level: tangent b is the b-th standard
    # basis vector of the concatenated flat inputs (torch does the same with
    # vmap). Elementwise ops push the whole batch at once; others loop over it
    # op by op (see retrograd.forward_ad._dual._batched_jvp).
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    inputs = tuple(x.detach() for x in inputs)
    numels = tuple(x.numel() for x in inputs)
    total = sum(numels)
    if total == 0:
        return _jacobian_forward_empty(func, inputs, is_inputs_tuple)
    basis = _standard_basis_for(inputs, numels)          # (total, numel_j) each
    level = fw._dual._enter_batched_dual_level(total)
    try:
        duals = tuple(fw.make_dual(x, b.reshape((total,) + tuple(x.shape)), level=level)
                      for x, b in zip(inputs, basis))
        out = func(*duals)
        is_outputs_tuple, outs = _as_tuple(out, "outputs of the user-provided function", "jacobian")
        un = [fw.unpack_dual(o, level=level) for o in outs]
    finally:
        fw.exit_dual_level(level=level)
    jac = []
    for u in un:
        o = u.primal.detach()
        t = u.tangent
        row = []
        start = 0
        for x, n in zip(inputs, numels):
            shape = tuple(o.shape) + tuple(x.shape)
            if t is None:
                row.append(_wrap_like(np.zeros(shape, dtype=o.dtype), x))
            else:
                block = t.detach()[start:start + n].reshape((n, o.numel()))
                row.append(block.transpose(0, 1).reshape(shape))
            start += n
        jac.append(tuple(row))
    return _tuple_postprocess(tuple(jac), (is_outputs_tuple, is_inputs_tuple))


def _jacobian_forward_empty(func, inputs, is_inputs_tuple):
    # Every input is empty: nothing to push; evaluate once for the shapes.
    is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function",
                                          "jacobian")
    jac = tuple(tuple(_wrap_like(np.zeros(tuple(o.shape) + tuple(x.shape), dtype=o.dtype), x)
                      for x in inputs) for o in outputs)
    return _tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))


def _stack_rows(rows, shape, like):
    from retrograd.core import stack as _stack
    if rows:
        return _stack(rows, dim=0).reshape(shape)
    return _wrap_like(np.zeros(shape, dtype=like.dtype), like)     # an output with no elements


def _jacobian_vectorized(inputs, outputs, create_graph, is_inputs_tuple, is_outputs_tuple):
    # All rows in one batched backward: row r of the batch of grad_outputs is
    # the r-th standard basis vector of the concatenated flat outputs.
    output_numels = tuple(o.numel() for o in outputs)
    total = sum(output_numels)
    grad_outputs = _standard_basis_for(outputs, output_numels)
    flat_outputs = tuple(o.reshape(-1) for o in outputs)
    vj = list(_autograd_grad(flat_outputs, inputs, grad_outputs, create_graph=create_graph,
                             is_grads_batched=True))
    for el_idx, vj_el in enumerate(vj):
        if vj_el is None:
            vj[el_idx] = _wrap_like(np.zeros((total,) + tuple(inputs[el_idx].shape),
                                             dtype=inputs[el_idx].dtype), inputs[el_idx])
    jac_input_output = []
    for jac_input_i, input_i in zip(vj, inputs):
        per_out = []
        start = 0
        for n, output_j in zip(output_numels, outputs):
            per_out.append(jac_input_i[start:start + n].reshape(
                tuple(output_j.shape) + tuple(input_i.shape)))
            start += n
        jac_input_output.append(per_out)
    jac_output_input = tuple(zip(*jac_input_output))
    jac_output_input = _grad_postprocess(jac_output_input, create_graph)
    return _tuple_postprocess(jac_output_input, (is_outputs_tuple, is_inputs_tuple))


@overload
def hessian(func: Callable[..., Tensor], inputs: Tensor, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode") -> Tensor: ...
@overload
def hessian(func: Callable[..., Tensor], inputs: tuple[Tensor, ...] | list[Tensor], create_graph: bool = False,
            strict: bool = False, vectorize: bool = False,
            outer_jacobian_strategy: str = "reverse-mode") -> tuple[tuple[Tensor, ...], ...]: ...
def hessian(func: Callable[..., Tensor], inputs: _Tensors, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False,
            outer_jacobian_strategy: str = "reverse-mode") -> Tensor | tuple[tuple[Tensor, ...], ...]:
    """The Hessian of a scalar function at ``inputs``.

    The Jacobian of the gradient: for inputs ``i`` and ``j`` the block is a
    Tensor of shape ``input_i.shape + input_j.shape``, as
    ``torch.autograd.functional.hessian``.

    Parameters
    ----------
    func : callable
        A function of tensors returning a Tensor of one element.
    inputs : Tensor or tuple of Tensor
        The point at which to differentiate.
    create_graph : bool, optional
        Record the graph of the computation, so that the result can be
        differentiated again (and gradients flow back to inputs that require
        grad). Default False: the results carry no history.
    strict : bool, optional
        Raise a RuntimeError when an output does not depend on an input (the
        result would be a zero that no computation produced), instead of
        returning zeros. Default False.
    vectorize : bool, optional
        Compute the rows together in one batched pass. Default False.
    outer_jacobian_strategy : {"reverse-mode", "forward-mode"}, optional
        How the outer Jacobian (of the gradient) is computed:
        ``"forward-mode"`` is forward-over-reverse (needs ``vectorize=True``
        and retrograd-forward-ad). Default ``"reverse-mode"``.

    Returns
    -------
    Tensor or tuple of tuple of Tensor
        A Tensor for one input; ``H[i][j]`` for a tuple of inputs.

    Raises
    ------
    RuntimeError
        When ``func`` does not return a single Tensor of one element, or,
        with ``strict=True``, when the Hessian is independent of an input.
    ValueError
        For an unknown ``outer_jacobian_strategy``.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.autograd.functional import hessian
    >>> hessian(lambda x: (x ** 3).sum(), rg.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def ensure_single_output_function(*inp):
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict=strict)
        if is_out_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.numel() != 1:
            raise RuntimeError(
                "The Tensor returned by the function given to hessian should contain a single element")
        return out.reshape(())

    def jac_func(*inp):
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(ensure_single_output_function, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def _single_scalar_output(outputs, is_outputs_tuple, fn_name):
    if is_outputs_tuple or not isinstance(outputs[0], Tensor):
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].numel() != 1:
        raise RuntimeError(
            f"The Tensor returned by the function given to {fn_name} should contain a single element")


def _scalar_fn_gradient(func, inputs, v, create_graph, strict, fn_name):
    # The shared first half of vhp and hvp (call under enable_grad): checked
    # inputs and v, the scalar output, and its gradient with a graph.
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
    inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
    v = _prepare_v(v, inputs, is_inputs_tuple, fn_name, create_graph,
                   "The vector v can only be None if the input to the user-provided function "
                   "is a single Tensor with a single element.")
    outputs = func(*inputs)
    is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", fn_name)
    _check_requires_grad(outputs, "outputs", strict=strict)
    _single_scalar_output(outputs, is_outputs_tuple, fn_name)
    jac = _autograd_grad(outputs, inputs, create_graph=True)
    _check_requires_grad(jac, "jacobian", strict=strict)
    return is_inputs_tuple, inputs, v, is_outputs_tuple, outputs, jac


def vhp(func: Callable[..., Tensor], inputs: _Tensors, v: _Tensors | None = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Tensor, Any]:
    """The vector-Hessian product ``v^T H`` of a scalar function at ``inputs``.

    Two reverse passes: the gradient with ``create_graph=True``, then a
    backward of it with ``v`` (``torch.autograd.functional.vhp``). For a
    twice continuously differentiable function the Hessian is symmetric and
    this equals :func:`hvp`.

    Parameters
    ----------
    func : callable
        A function of tensors returning a Tensor of one element.
    inputs : Tensor or tuple of Tensor
        The point at which to differentiate.
    v : Tensor or tuple of Tensor, optional
        The vector, one Tensor per input with the input's shape. May be None
        only when there is one input of one element.
    create_graph : bool, optional
        Record the graph of the computation, so that the result can be
        differentiated again (and gradients flow back to inputs that require
        grad). Default False: the results carry no history.
    strict : bool, optional
        Raise a RuntimeError when an output does not depend on an input (the
        result would be a zero that no computation produced), instead of
        returning zeros. Default False.

    Returns
    -------
    tuple
        ``(func_output, product)``: the value of ``func(*inputs)`` and the
        product, shaped as ``inputs``.

    Raises
    ------
    RuntimeError
        When ``func`` does not return a single Tensor of one element, when
        ``v`` does not match the inputs, or, with ``strict=True``, when the
        result is independent of an input.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.autograd.functional import vhp
    >>> vhp(lambda x: (x ** 3).sum(), rg.tensor([1.0, 2.0]), rg.ones(2))
    (tensor(9.), tensor([ 6., 12.]))
    """
    with enable_grad():
        (is_inputs_tuple, inputs, v, is_outputs_tuple, outputs,
         jac) = _scalar_fn_gradient(func, inputs, v, create_graph, strict, "vhp")
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(jac, inputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(result, is_inputs_tuple)


def hvp(func: Callable[..., Tensor], inputs: _Tensors, v: _Tensors | None = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Tensor, Any]:
    """The Hessian-vector product ``H v`` of a scalar function at ``inputs``.

    Computed with the double-backward trick, as
    ``torch.autograd.functional.hvp``: never forms the Hessian, so it costs
    a few backward passes whatever the number of inputs. This is what
    Newton-type optimisers (``scipy.optimize.minimize(method="trust-ncg",
    hessp=...)``) need.

    Parameters
    ----------
    func : callable
        A function of tensors returning a Tensor of one element.
    inputs : Tensor or tuple of Tensor
        The point at which to differentiate.
    v : Tensor or tuple of Tensor, optional
        The vector, one Tensor per input with the input's shape. May be None
        only when there is one input of one element.
    create_graph : bool, optional
        Record the graph of the computation, so that the result can be
        differentiated again (and gradients flow back to inputs that require
        grad). Default False: the results carry no history.
    strict : bool, optional
        Raise a RuntimeError when an output does not depend on an input (the
        result would be a zero that no computation produced), instead of
        returning zeros. Default False.

    Returns
    -------
    tuple
        ``(func_output, product)``: the value of ``func(*inputs)`` and the
        product, shaped as ``inputs``.

    Raises
    ------
    RuntimeError
        When ``func`` does not return a single Tensor of one element, when
        ``v`` does not match the inputs, or, with ``strict=True``, when the
        result is independent of an input.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.autograd.functional import hvp
    >>> hvp(lambda x: (x ** 3).sum(), rg.tensor([1.0, 2.0]), rg.ones(2))
    (tensor(9.), tensor([ 6., 12.]))
    """
    with enable_grad():
        (is_inputs_tuple, inputs, v, is_outputs_tuple, outputs,
         jac) = _scalar_fn_gradient(func, inputs, v, create_graph, strict, "hvp")
        grad_jac = tuple(_zeros_like(inp, requires_grad=True) for inp in inputs)
        double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict=strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(double_back, grad_jac, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back_trick")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(result, is_inputs_tuple)
