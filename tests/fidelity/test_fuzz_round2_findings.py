"""Fuzz findings of the second fidelity round, each checked side by side
with torch 2.13: the same exception class where both refuse a call, the
same values and dtypes where both compute it."""
import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle


def _both(fn):
    out = []
    for lib in (rg, torch):
        try:
            out.append(("ok", fn(lib)))
        except Exception as exc:  # noqa: BLE001 - the class is the result here
            out.append(("raise", type(exc)))
    return out


RAISING = {
    "softmax_dim_before_dtype": lambda L: L.softmax(L.ones(4, 1, dtype=L.bool), dim=7),
    "log_softmax_dim_before_dtype": lambda L: L.log_softmax(L.ones(2, dtype=L.int64), dim=-6),
    "stack_dim_before_sizes": lambda L: L.stack([L.ones(3), L.ones(4, 1)], dim=2),
    "amin_empty_before_complex": lambda L: L.amin(L.zeros(0, dtype=L.complex128)),
    "argmax_of_bool": lambda L: L.argmax(L.ones(3, dtype=L.bool), dim=0),
    "int_remainder_by_zero": lambda L: L.remainder(L.ones(3, dtype=L.int64), L.zeros(3, dtype=L.int64)),
    "int_floor_divide_by_zero": lambda L: L.floor_divide(L.ones(3, dtype=L.int64), L.zeros(3, dtype=L.int64)),
    "bool_remainder": lambda L: L.remainder(L.ones(3, dtype=L.bool), L.ones(3, dtype=L.bool)),
    "bool_remainder_shapes_first": lambda L: L.remainder(L.ones(2, 3, dtype=L.bool), L.ones(0, 3, dtype=L.bool)),
    "flip_repeated_dim": lambda L: L.flip(L.ones(3), (0, 0)),
    "roll_zero_d_with_dims": lambda L: L.roll(L.tensor(1.0), -3, dims=0),
    "index_select_scalar_many": lambda L: L.index_select(L.tensor(1.0), 0, L.tensor([0, 0])),
    "index_select_scalar_bad_dim": lambda L: L.index_select(L.tensor(1.0), 1, L.tensor([0, 0])),
    "cat_empty": lambda L: L.cat([]),
    "stack_empty": lambda L: L.stack([]),
    "bool_sub": lambda L: L.sub(L.ones(2, dtype=L.bool), L.ones(2, dtype=L.bool)),
    "mean_bad_dim_type_before_dtype": lambda L: L.mean(L.ones(2, 3, dtype=L.int64), dim=(0, "a")),
    "mean_int_dtype_before_dim_range": lambda L: L.mean(L.ones(0, dtype=L.bool), dim=(100,)),
    "mse_loss_of_ints": lambda L: L.nn.functional.mse_loss(L.ones(3, dtype=L.int64), L.ones(3, dtype=L.int64)),
    "mse_loss_shapes_first": lambda L: L.nn.functional.mse_loss(L.ones(4, 1, dtype=L.bool), L.ones(0, 1, dtype=L.bool)),
    "nll_loss_of_bools": lambda L: L.nn.functional.nll_loss(L.ones(4, 3, dtype=L.bool), L.zeros(4, dtype=L.int64)),
    "masked_fill_str_value": lambda L: L.masked_fill(L.ones(2), L.ones(2, dtype=L.bool), "abc"),
    "setitem_list_value": lambda L: L.ones(3, 4).__setitem__(0, [1.0, 2.0]),
    "setitem_broadcast": lambda L: L.ones(3, 4).__setitem__((Ellipsis, 0), L.ones(5)),
    "gather_number_index": lambda L: L.gather(L.ones(3, 4), 1, -1),
    "index_select_list_index": lambda L: L.index_select(L.ones(3, 4), 1, [[1, 2]]),
}


@pytest.mark.parametrize("name", sorted(RAISING))
def test_both_refuse_with_the_same_class(name):
    (rk, rv), (tk, tv) = _both(RAISING[name])
    assert rk == tk == "raise", (rk, rv, tk, tv)
    assert rv.__mro__[[c.__module__ for c in rv.__mro__].index("builtins")] is \
        tv.__mro__[[c.__module__ for c in tv.__mro__].index("builtins")], (rv, tv)


def test_sums_of_small_unsigned_and_bool_tensors_are_int64():
    for dt in ("uint8", "bool", "uint16"):
        a = np.ones((2, 3), dtype=dt)
        assert rg.sum(rg.tensor(a)).dtype == np.int64
        assert rg.sum(rg.tensor(a)).item() == torch.sum(torch.from_numpy(a.astype(np.int64))).item()


def test_masked_fill_broadcasts_the_input_to_the_mask():
    for lib in (rg, torch):
        out = lib.masked_fill(lib.tensor(1.0), lib.ones(2, 3, dtype=lib.bool), 0.5)
        assert tuple(out.shape) == (2, 3) and float(out.sum()) == 3.0


def test_softmax_of_an_empty_int_tensor_keeps_its_dtype():
    got = rg.softmax(rg.zeros(0, 3, dtype=rg.int64), dim=-1)
    ref = torch.softmax(torch.zeros(0, 3, dtype=torch.int64), dim=-1)
    assert tuple(got.shape) == tuple(ref.shape) and str(got.dtype) == str(ref.dtype).replace("torch.", "")
