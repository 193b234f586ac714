"""Sampling grids: affine_grid and grid_sample (torch.nn.functional's vision functions).

Both are composites of core's ops. ``affine_grid`` is a batched matrix
product of a constant base grid with the transposed affine matrices.
``grid_sample`` turns the grid into input coordinates, folds them into the
input for the border and reflection padding modes, and gathers the input at
the integer positions around each coordinate, weighting them with
differentiable functions of the coordinate: the input's gradient flows
through the gather, the grid's through the weights.
"""
from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

import retrograd.core as _c
from retrograd.core import Tensor
from retrograd.core.extending import composite_op, wrap as _wrap
from retrograd.nn.functional import _arr, _inexact, _on_device, _t

__all__ = ["affine_grid", "grid_sample"]

_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                  "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                  "grid_sample for details.")


def _const(a: np.ndarray, like: Tensor) -> Tensor:
    return _wrap(_on_device(a, _arr(like)), device=like.device)


# --- affine_grid -----------------------------------------------------------------------

def _base_coords(n: int, align_corners: bool, dtype) -> np.ndarray:
    # torch's linspace_from_neg_one: pixel centres in [-1, 1]
    if n <= 1:
        return np.zeros(1, dtype=dtype)
    r = np.linspace(-1.0, 1.0, n).astype(dtype)
    return r if align_corners else (r * dtype.type(n - 1) / dtype.type(n)).astype(dtype)


@composite_op('affine_grid')
def affine_grid(theta: Tensor, size: Sequence[int], align_corners: bool | None = None) -> Tensor:
    """The sampling grid of a batch of affine transforms, for :func:`grid_sample`
    (a spatial transformer's grid generator).

    Output point ``(.., h, w)`` is ``theta @ (x_w, y_h, 1)``, with ``x_w`` and
    ``y_h`` the normalised coordinates in [-1, 1] of the pixel centres of an
    image of ``size`` (with ``align_corners`` the outer centres are at -1 and
    1, otherwise the outer edges are).

    Parameters
    ----------
    theta : Tensor
        Floating-point affine matrices, ``(N, 2, 3)`` for 2-d or ``(N, 3,
        4)`` for 3-d transforms.
    size : sequence of int
        The target image size, ``(N, C, H, W)`` or ``(N, C, D, H, W)``.
    align_corners : bool, optional
        As for :func:`grid_sample` (default False, with a warning when not given).

    Returns
    -------
    Tensor
        The grid, ``(N, H, W, 2)`` or ``(N, D, H, W, 3)``, (x, y[, z]) last.

    Raises
    ------
    ValueError
        For a non-floating ``theta``, a ``theta`` shape that does not fit
        ``size``, or a non-positive size.
    NotImplementedError
        For a ``size`` of other than 4 or 5 entries.
    RuntimeError
        For a ``theta`` batch that differs from ``size[0]``.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> theta = rg.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    >>> F.affine_grid(theta, (1, 1, 2, 2), align_corners=True)
    tensor([[[[-1., -1.],
              [ 1., -1.]],
    <BLANKLINE>
             [[-1.,  1.],
              [ 1.,  1.]]]])
    >>> F.affine_grid(rg.zeros(4, 3, 4), (4, 1, 5, 6, 7), align_corners=False).shape
    (4, 5, 6, 7, 3)
    """
    th = _t(theta, "theta")
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    if not _inexact(th.dtype):
        raise ValueError(f"Expected theta to have floating point type, but got {th.dtype}")
    size = tuple(int(s) for s in size)
    if len(size) == 4:
        if th.ndim != 3 or th.shape[-2] != 2 or th.shape[-1] != 3:
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. Got "
                             f"{tuple(th.shape)}.")
    elif len(size) == 5:
        if th.ndim != 3 or th.shape[-2] != 3 or th.shape[-1] != 4:
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. Got "
                             f"{tuple(th.shape)}.")
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    spatial = size[2:]
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
                      "align_corners=True. This is not an intended use case of affine_grid. See the documentation "
                      "of affine_grid for details.", stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    if th.shape[0] != size[0]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{size[0]}, "
                           f"{th.shape[-1]}] but got: [{th.shape[0]}, {th.shape[-1]}].")
    nd = len(spatial)
    dt = np.dtype(th.dtype)
    # (.., x, y[, z], 1): x runs along the last dim
    axes = [_base_coords(n, bool(align_corners), dt) for n in reversed(spatial)]
    mesh = list(np.meshgrid(*axes[::-1], indexing="ij"))[::-1]
    base = np.stack(mesh + [np.ones(spatial, dtype=dt)], -1).reshape(1, -1, nd + 1)
    base = np.ascontiguousarray(np.broadcast_to(base, (size[0],) + base.shape[1:]))
    grid = _c.matmul(_const(base, th), _c.transpose(th, 1, 2))
    return _c.reshape(grid, (size[0],) + spatial + (nd,))


# --- grid_sample -----------------------------------------------------------------------

def _unnormalize(c: Tensor, n: int, align_corners: bool) -> Tensor:
    # grid values in [-1, 1] to input positions, as torch's grid_sampler_unnormalize
    if align_corners:
        return _c.mul(_c.div(_c.add(c, 1.0), 2.0), float(n - 1))
    return _c.div(_c.sub(_c.mul(_c.add(c, 1.0), float(n)), 1.0), 2.0)


def _clip(c: np.ndarray, n: int):
    # the position clipped into [0, n - 1]; its slope is 0 at and beyond the borders
    out = np.minimum(np.maximum(c, 0), n - 1).astype(c.dtype)
    return out, ((c > 0) & (c < n - 1)).astype(c.dtype)


def _reflect(c: np.ndarray, twice_low: int, twice_high: int):
    # torch's reflect_coordinates: fold the position into [low, high], mirroring at the ends
    if twice_low == twice_high:
        return np.zeros_like(c), np.zeros_like(c)
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    d = c - c.dtype.type(low)
    sign = np.where(d < 0, -1, 1).astype(c.dtype)
    a = np.abs(d)
    extra = np.fmod(a, c.dtype.type(span))
    even = np.floor(a / c.dtype.type(span)) % 2 == 0
    out = np.where(even, extra + c.dtype.type(low), c.dtype.type(span) - extra + c.dtype.type(low))
    return out.astype(c.dtype), np.where(even, sign, -sign).astype(c.dtype)


def _fold(c: np.ndarray, n: int, padding_mode: str, align_corners: bool):
    """torch's compute_coordinates for a position array: the folded
    position and its slope with respect to the unfolded one."""
    if padding_mode == "border":
        return _clip(c, n)
    if padding_mode == "reflection":
        r, g = _reflect(c, 0, 2 * (n - 1)) if align_corners else _reflect(c, -1, 2 * n - 1)
        out, g2 = _clip(r, n)
        return out, g * g2
    return c, np.ones_like(c)


def _folded(c: Tensor, n: int, padding_mode: str, align_corners: bool) -> Tensor:
    """The position folded into the input, a tensor with the exact folded
    values whose gradient is the fold's slope times the position's (the
    folds are piecewise linear): value + slope * (c - c), the difference
    zero but differentiable."""
    if padding_mode == "zeros":
        return c
    arr = np.asarray(_arr(c))
    value, slope = _fold(arr, n, padding_mode, align_corners)
    finite = np.isfinite(arr)
    delta = _c.where(_const(finite, c), _c.sub(c, _c.detach(c)), _c.zeros_like(c))
    return _c.add(_c.mul(delta, _const(slope, c)), _const(value, c))


def _gather(flat_input: Tensor, spatial: tuple, positions: list, batch: np.ndarray):
    """Input values at integer positions (one array per spatial dim, shape
    (N, L)), zero outside: (N, L, C) values and the in-bounds mask."""
    inside = np.ones(positions[0].shape, dtype=bool)
    flat = np.zeros(positions[0].shape, dtype=np.int64)
    for p, n in zip(positions, spatial):
        inside &= (p >= 0) & (p < n)
        flat = flat * n + np.clip(p, 0, n - 1)
    arr = _arr(flat_input)
    vals = _c.getitem(flat_input, (_on_device(batch, arr), _on_device(flat, arr)))
    return vals, inside


def _cubic_weights(t: Tensor) -> list[Tensor]:
    # torch's get_cubic_upsample_coefficients (A = -0.75) for taps -1, 0, 1, 2
    a = -0.75

    def near(x):        # |x| <= 1
        return _c.add(_c.mul(_c.mul(_c.sub(_c.mul(x, a + 2), a + 3), x), x), 1.0)

    def far(x):         # 1 < |x| < 2
        return _c.sub(_c.mul(_c.add(_c.mul(_c.sub(_c.mul(x, a), 5 * a), x), 8 * a), x), 4 * a)

    one_minus = _c.sub(1.0, t)
    return [far(_c.add(t, 1.0)), near(t), near(one_minus), far(_c.add(one_minus, 1.0))]


def _check_grid_sample(x: Tensor, g: Tensor, mode: str) -> None:
    # torch's order: the checks common to both ranks, then the rank's own
    if x.dtype != g.dtype:
        raise RuntimeError(f"grid_sampler(): expected input and grid to have the same dtype, but input has "
                           f"{x.dtype} and grid has {g.dtype}")
    if x.ndim == 0 or g.ndim == 0 or x.shape[0] != g.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got input with "
                           f"sizes {list(x.shape)} and grid with sizes {list(g.shape)}")
    if g.shape[-1] != x.ndim - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {x.ndim - 2} in last dimension, but got "
                           f"grid with sizes {list(g.shape)}")
    for d in range(2, x.ndim):
        if x.shape[d] == 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial dimensions, but input has "
                               f"sizes {list(x.shape)} with dimension {d} being empty")
    rank = 4 if x.ndim == 4 else 5
    if x.ndim != rank or g.ndim != rank:
        raise RuntimeError(f"grid_sampler(): expected {rank}D input and grid with same number of dimensions, but "
                           f"got input with sizes {list(x.shape)} and grid with sizes {list(g.shape)}")
    if mode == "bicubic" and x.ndim != 4:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if not _c.is_floating_dtype(x.dtype):
        raise NotImplementedError(f'"grid_sampler" not implemented for {x.dtype} input, as in torch; convert it '
                                  "first, e.g. input.float()")


@composite_op('grid_sample')
def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: bool | None = None) -> Tensor:
    """Sample ``input`` at the normalised positions of ``grid``.

    Grid values are in [-1, 1] across the input: -1 is the left (top, front)
    and 1 the right (bottom, back) edge, or with ``align_corners`` the
    centres of the outer pixels. A position outside the input reads zeros
    (``padding_mode='zeros'``), the nearest border value (``'border'``) or
    the input mirrored at its borders (``'reflection'``).

    Modes: ``'bilinear'`` (trilinear for 5-D input) weights the 4 (8)
    surrounding pixels; ``'nearest'`` takes the nearest one (halves round to
    even), its grid gradient is zero; ``'bicubic'`` (4-D only) is cubic
    convolution (``a = -0.75``) over 4 x 4 pixels, the padding applied to
    each pixel. The input's gradient scatters back through the same taps;
    the grid's follows from the weights.

    Parameters
    ----------
    input : Tensor
        Of shape ``(N, C, H, W)`` or ``(N, C, D, H, W)``.
    grid : Tensor
        Of shape ``(N, H_out, W_out, 2)`` or ``(N, D_out, H_out, W_out, 3)``,
        the positions as (x, y[, z]), of the input's dtype.
    mode : {'bilinear', 'nearest', 'bicubic'}, optional
        The interpolation (default ``'bilinear'``).
    padding_mode : {'zeros', 'border', 'reflection'}, optional
        What positions outside the input read (default ``'zeros'``).
    align_corners : bool, optional
        Whether -1 and 1 are the outer pixels' centres rather than the
        input's edges (default False, with a warning when not given).

    Returns
    -------
    Tensor
        Of shape ``(N, C, H_out, W_out)`` or ``(N, C, D_out, H_out, W_out)``.

    Raises
    ------
    ValueError
        For an unknown mode or padding mode.
    RuntimeError
        For ranks, batch sizes, dtypes or a grid's last dim that do not
        fit, an empty spatial dim, or bicubic on 5-D input.
    NotImplementedError
        For an integer input.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> x = rg.tensor([[[[0.0, 1.0], [2.0, 3.0]]]])
    >>> grid = rg.tensor([[[[0.0, 0.0], [-1.0, -1.0], [1.0, 1.0]]]])
    >>> F.grid_sample(x, grid, align_corners=True)
    tensor([[[[1.5, 0. , 3. ]]]])
    >>> F.grid_sample(x, grid, align_corners=False)
    tensor([[[[1.5 , 0.  , 0.75]]]])
    >>> F.grid_sample(x, grid, padding_mode="border", align_corners=False)
    tensor([[[[1.5, 0. , 3. ]]]])
    """
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    x, g = _t(input), _t(grid, "grid")
    _check_grid_sample(x, g, mode)
    ac = bool(align_corners)
    N, C = x.shape[:2]
    spatial = tuple(x.shape[2:])
    out_spatial = tuple(g.shape[1:-1])
    nd = len(spatial)
    L = int(np.prod(out_spatial))
    # channels last, positions flat: (N, S, C), sampled at (N, L) positions
    flat_input = _c.reshape(_c.permute(x, (0,) + tuple(range(2, nd + 2)) + (1,)), (N, int(np.prod(spatial)), C))
    batch = np.arange(N)[:, None]
    g2 = _c.reshape(g, (N, L, nd))
    # grid component j is the position along spatial dim nd - 1 - j
    coords = [_unnormalize(_c.getitem(g2, (Ellipsis, nd - 1 - i)), spatial[i], ac) for i in range(nd)]
    out: Tensor | None = None
    if mode == "bicubic":
        base = [np.floor(np.asarray(_arr(c))) for c in coords]
        weights = [_cubic_weights(_c.sub(c, _const(b, c))) for c, b in zip(coords, base)]
        for ty in range(4):
            for tx in range(4):
                pos = []
                for i, t in ((0, ty), (1, tx)):
                    p, _ = _fold(base[i] - 1 + t, spatial[i], padding_mode, ac)
                    pos.append(p.astype(np.int64))
                vals, inside = _gather(flat_input, spatial, pos, batch)
                w = _c.mul(_c.mul(weights[0][ty], weights[1][tx]), _const(inside.astype(x.dtype), x))
                term = _c.mul(vals, _c.unsqueeze(w, -1))
                out = term if out is None else _c.add(out, term)
    else:
        coords = [_folded(c, n, padding_mode, ac) for c, n in zip(coords, spatial)]
        arrs = [np.asarray(_arr(c)) for c in coords]
        if mode == "nearest":
            vals, inside = _gather(flat_input, spatial, [np.round(a).astype(np.int64) for a in arrs], batch)
            out = _c.mul(vals, _const(inside[..., None].astype(x.dtype), x))
            # torch's grid gradient is zero here: keep the grid in the graph with zero weight
            for c, a in zip(coords, arrs):
                link = _c.where(_const(np.isfinite(a), c), _c.mul(c, 0.0), _c.zeros_like(c))
                out = _c.add(out, _c.unsqueeze(link, -1))
        else:
            lows = [np.floor(a).astype(np.int64) for a in arrs]
            # weights of the lower and upper neighbour along each dim: (low + 1) - c and c - low
            lohi = [(_c.sub(_const((lo + 1).astype(x.dtype), c), c), _c.sub(c, _const(lo.astype(x.dtype), c)))
                    for c, lo in zip(coords, lows)]
            for corner in np.ndindex(*(2,) * nd):
                vals, inside = _gather(flat_input, spatial, [lo + k for lo, k in zip(lows, corner)], batch)
                # the x weight first, as torch's products
                wt = lohi[nd - 1][corner[nd - 1]]
                for i in range(nd - 2, -1, -1):
                    wt = _c.mul(wt, lohi[i][corner[i]])
                wt = _c.mul(wt, _const(inside.astype(x.dtype), x))
                term = _c.mul(vals, _c.unsqueeze(wt, -1))
                out = term if out is None else _c.add(out, term)
    assert out is not None
    out = _c.reshape(out, (N,) + out_spatial + (C,))
    return _c.permute(out, (0, nd + 1) + tuple(range(1, nd + 1)))
