"""A small user program, fully annotated, that mypy --strict checks against the
installed stubs (tests/install/test_stubs.py::test_mypy_sees_the_public_api_typed).

Every assert_type below fails mypy when the expression's type is Any or
another type than the one written, so it pins that the public API is typed.
The program also runs (python tests/typing/typed_usage.py): assert_type is
a no-op at run time, and the isinstance checks say the types are true.
"""
from __future__ import annotations

import retrograd as rg
import retrograd.nn.functional as F
from retrograd.autograd.functional import hessian

TYPE_CHECKING = False
if TYPE_CHECKING:       # typing.assert_type is 3.11+; mypy knows typing_extensions' own
    from typing_extensions import assert_type
else:
    def assert_type(value, _type):
        return value


def loss_and_grads(x: rg.Tensor, w: rg.Tensor, b: rg.Tensor, target: rg.Tensor) -> float:
    logits = F.linear(x, w, b)
    assert_type(logits, rg.Tensor)
    loss = F.cross_entropy(logits, target)
    assert_type(loss, rg.Tensor)
    value = loss.item()
    assert_type(value, int | float | bool)
    grads = rg.autograd.grad(loss, [w, b])
    assert_type(grads, tuple[rg.Tensor, ...])
    assert all(isinstance(g, rg.Tensor) for g in grads)
    return float(value)


def cube_sum(t: rg.Tensor) -> rg.Tensor:
    return (t * t * t).sum()


def second_derivative(x: rg.Tensor) -> rg.Tensor:
    h = hessian(cube_sum, x)
    assert_type(h, rg.Tensor)
    pair = hessian(lambda a, b: (a * b).sum(), (x, x))
    assert_type(pair, tuple[tuple[rg.Tensor, ...], ...])
    return h


def ops_and_methods(x: rg.Tensor) -> rg.Tensor:
    y = rg.exp(x) + 1.0                     # a generated op, then Tensor.__add__
    assert_type(y, rg.Tensor)
    s = y.sum(dim=0, keepdim=True)          # a generated method with typed parameters
    assert_type(s, rg.Tensor)
    assert_type(rg.cat([x, y], dim=0), rg.Tensor)
    assert_type(x.shape, tuple[int, ...])
    assert_type(x.grad, rg.Tensor | None)
    return s


@rg.no_grad()
def frozen(t: rg.Tensor) -> rg.Tensor:
    return t * 2


def grad_modes(x: rg.Tensor) -> rg.Tensor:
    assert_type(frozen(x), rg.Tensor)       # a grad-mode decorator keeps the signature
    with rg.no_grad():
        y = x * 3
    with rg.enable_grad():
        z = y + x
    assert not y.requires_grad
    return z


def main() -> None:
    x = rg.tensor([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]])
    w = rg.tensor([[0.1, 0.2, 0.3], [0.0, -0.1, 0.2]], requires_grad=True)
    b = rg.tensor([0.0, 0.1], requires_grad=True)
    target = rg.tensor([0, 1])
    loss = loss_and_grads(x, w, b, target)
    assert isinstance(loss, float)
    h = second_derivative(rg.tensor([1.0, 2.0], requires_grad=True))
    assert isinstance(h, rg.Tensor) and h.shape == (2, 2)
    assert isinstance(ops_and_methods(rg.tensor([1.0, 2.0], requires_grad=True)), rg.Tensor)
    assert grad_modes(rg.tensor([1.0], requires_grad=True)).requires_grad


if __name__ == "__main__":
    main()
