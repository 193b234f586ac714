"""The demo's data set, rendered procedurally (nothing is downloaded).

Each digit 0-9 is a handful of pen strokes (polylines, arcs sampled as short
segments) in a unit box. An image is drawn by moving the stroke points with a
random affine map (rotation, scale, shear, shift) plus a little per-point
wobble, then shading every pixel by its distance to the nearest stroke
segment (anti-aliased, with a random pen width), and finally adding Gaussian
pixel noise. Everything comes from one seeded ``np.random.Generator``, so the
same seed always gives the same images, on any machine.
"""
from __future__ import annotations

import numpy as np

__all__ = ["render_digits", "digits_split", "NUM_CLASSES"]

NUM_CLASSES = 10


def _arc(cx: float, cy: float, rx: float, ry: float, a0: float, a1: float, n: int) -> list:
    # points of an ellipse arc from angle a0 to a1 (degrees; y points down, so
    # 90 is the bottom and 270 the top of the ellipse)
    t = np.radians(np.linspace(a0, a1, n))
    return list(zip(cx + rx * np.cos(t), cy + ry * np.sin(t)))


# Strokes of each digit in a unit box: x to the right, y downwards.
_STROKES: dict = {
    0: [_arc(0.5, 0.5, 0.26, 0.38, 0, 360, 17)],
    1: [[(0.34, 0.26), (0.53, 0.12), (0.53, 0.88)]],
    2: [_arc(0.5, 0.33, 0.25, 0.21, 175, 400, 10) + [(0.25, 0.88), (0.78, 0.88)]],
    3: [_arc(0.5, 0.3, 0.22, 0.18, 200, 450, 9), _arc(0.5, 0.68, 0.25, 0.2, 270, 520, 10)],
    4: [[(0.66, 0.88), (0.66, 0.12), (0.2, 0.64), (0.82, 0.64)]],
    5: [[(0.76, 0.12), (0.32, 0.12), (0.29, 0.46)] + _arc(0.5, 0.65, 0.25, 0.23, 225, 520, 10)],
    6: [[(0.7, 0.12)] + _arc(0.62, 0.62, 0.36, 0.5, 240, 180, 4) + _arc(0.5, 0.68, 0.24, 0.21, 180, 540, 14)],
    7: [[(0.22, 0.12), (0.8, 0.12), (0.42, 0.88)]],
    8: [_arc(0.5, 0.3, 0.2, 0.18, 0, 360, 13), _arc(0.5, 0.69, 0.25, 0.2, 0, 360, 15)],
    9: [_arc(0.5, 0.33, 0.23, 0.21, 0, 360, 14), [(0.73, 0.33), (0.66, 0.88)]],
}


def _glyph(digit: int) -> tuple:
    """(points (K, 2), segment start indices, segment end indices) of a digit."""
    points: list[tuple[float, float]] = []
    starts: list[int] = []
    for stroke in _STROKES[digit]:
        base = len(points)
        points.extend(stroke)
        starts.extend(range(base, base + len(stroke) - 1))
    i0 = np.asarray(starts)
    return np.asarray(points, dtype=np.float64), i0, i0 + 1


def _random_affine(rng: np.random.Generator, n: int) -> tuple:
    """n random 2x2 maps and shifts: rotation +-12 degrees, scale 0.8-1.05
    (x and y each a little apart), shear +-0.25, shift +-0.08 of the box."""
    angle = np.radians(rng.uniform(-12, 12, n))
    scale = rng.uniform(0.8, 1.05, n)[:, None] * rng.uniform(0.92, 1.08, (n, 2))
    shear = rng.uniform(-0.25, 0.25, n)
    cos, sin = np.cos(angle), np.sin(angle)
    rot = np.stack([np.stack([cos, -sin], -1), np.stack([sin, cos], -1)], -2)       # (n, 2, 2)
    shr = np.zeros((n, 2, 2))
    shr[:, 0, 0] = shr[:, 1, 1] = 1.0
    shr[:, 0, 1] = shear
    maps = rot @ shr * scale[:, None, :]
    shifts = rng.uniform(-0.08, 0.08, (n, 2))
    return maps, shifts


def _draw(digit: int, n: int, size: int, rng: np.random.Generator, noise: float) -> np.ndarray:
    """n jittered images (n, size, size) of one digit, values in [0, 1]."""
    points, i0, i1 = _glyph(digit)
    maps, shifts = _random_affine(rng, n)
    # every point wobbles a little on its own (hand-drawn strokes are not straight)
    pts = points[None] + rng.normal(0.0, 0.018, (n,) + points.shape) - 0.5
    pts = np.einsum("nij,nkj->nki", maps, pts) + 0.5 + shifts[:, None, :]
    pts *= size                                                       # pixel units
    width = rng.uniform(0.9, 2.0, n)                                  # pen width, pixels
    ys, xs = np.indices((size, size), dtype=np.float32).reshape(2, -1) + np.float32(0.5)   # pixel centres
    pts = pts.astype(np.float32)        # float32 temporaries: half the memory traffic of float64
    ax, ay = pts[:, i0, 0, None], pts[:, i0, 1, None]                  # segment starts, (n, S, 1)
    abx, aby = pts[:, i1, 0, None] - ax, pts[:, i1, 1, None] - ay      # segment vectors
    inv_len2 = 1.0 / np.maximum(abx * abx + aby * aby, np.float32(1e-12))
    images = np.empty((n, size * size))
    chunk = 256                                       # bounds the (chunk, S, P) temporaries
    for lo in range(0, n, chunk):
        sl = slice(lo, lo + chunk)
        px, py = xs - ax[sl], ys - ay[sl]                               # (c, S, P)
        # the nearest point of each segment: the pixel's projection, clamped to the ends
        t = np.clip((px * abx[sl] + py * aby[sl]) * inv_len2[sl], 0.0, 1.0)
        px -= t * abx[sl]
        py -= t * aby[sl]
        dist = np.sqrt((px * px + py * py).min(axis=1))                 # (c, P)
        # coverage: 1 inside the pen, a one-pixel linear ramp at its edge
        images[sl] = np.clip(width[sl, None] / 2 + 0.5 - dist, 0.0, 1.0)
    images *= rng.uniform(0.6, 1.0, (n, 1))                           # ink contrast
    images += rng.normal(0.0, noise, images.shape)
    return np.clip(images, 0.0, 1.0).reshape(n, size, size)


def render_digits(n: int, *, size: int = 16, seed: int | np.random.SeedSequence = 0, noise: float = 0.25) -> tuple:
    """Render ``n`` labelled images of hand-drawn-looking digits 0-9.

    Every digit is a few pen strokes, drawn with a random affine jitter
    (rotation, scale, shear, shift), per-point wobble, a random pen width and
    contrast, and Gaussian pixel noise. The classes are balanced (each digit
    appears ``n // 10`` or ``n // 10 + 1`` times) and shuffled. The result
    depends only on the arguments.

    Parameters
    ----------
    n : int
        Number of images (>= 0).
    size : int, optional
        Height and width in pixels (default 16; at least 8).
    seed : int, optional
        Seed of the NumPy generator that draws everything (default 0).
    noise : float, optional
        Standard deviation of the Gaussian pixel noise (default 0.25), added
        before clipping to [0, 1].

    Returns
    -------
    images : numpy.ndarray
        float32 array of shape ``(n, 1, size, size)``, values in [0, 1]
        (channel-first, as Conv2d expects).
    labels : numpy.ndarray
        int64 array of shape ``(n,)``, the digit of each image.

    Raises
    ------
    ValueError
        If ``n`` is negative, ``size`` is below 8 or ``noise`` is negative.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.demo import render_digits
    >>> images, labels = render_digits(20, seed=1)
    >>> images.shape, images.dtype, labels.dtype
    ((20, 1, 16, 16), dtype('float32'), dtype('int64'))
    >>> sorted(labels.tolist()) == sorted(list(range(10)) * 2)
    True
    >>> bool((render_digits(20, seed=1)[0] == images).all())
    True
    """
    n, size = int(n), int(size)
    if n < 0:
        raise ValueError(f"render_digits(): n must be >= 0, got {n}")
    if size < 8:
        raise ValueError(f"render_digits(): size must be at least 8 pixels, got {size}")
    if not noise >= 0:
        raise ValueError(f"render_digits(): noise must be >= 0, got {noise}")
    rng = np.random.default_rng(seed)
    labels = np.arange(n, dtype=np.int64) % NUM_CLASSES                # balanced by construction
    images = np.empty((n, 1, size, size), dtype=np.float32)
    for digit in range(NUM_CLASSES):
        where = np.flatnonzero(labels == digit)
        if where.size:
            images[where, 0] = _draw(digit, where.size, size, rng, noise)
    order = rng.permutation(n)
    return images[order], labels[order]


def digits_split(n_train: int = 8000, n_test: int = 2000, *, size: int = 16, seed: int = 0,
                 noise: float = 0.25) -> tuple:
    """A train and a test set of rendered digits, drawn independently.

    The two sets come from independent streams of one seed (NumPy's
    ``SeedSequence.spawn``), so no test image is a copy of a training image and
    changing ``n_test`` does not change the training images.

    Parameters
    ----------
    n_train, n_test : int, optional
        Sizes of the two sets (default 8000 and 2000).
    size : int, optional
        Height and width in pixels (default 16).
    seed : int, optional
        The seed both sets derive from (default 0).
    noise : float, optional
        Standard deviation of the pixel noise (default 0.25).

    Returns
    -------
    tuple of numpy.ndarray
        ``(train_images, train_labels, test_images, test_labels)`` as
        :func:`render_digits` returns them.

    Raises
    ------
    ValueError
        As :func:`render_digits`.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.demo import digits_split
    >>> xtr, ytr, xte, yte = digits_split(100, 30, seed=0)
    >>> xtr.shape, xte.shape, ytr.shape, yte.shape
    ((100, 1, 16, 16), (30, 1, 16, 16), (100,), (30,))
    """
    train_seq, test_seq = np.random.SeedSequence(seed).spawn(2)
    xtr, ytr = render_digits(n_train, size=size, seed=train_seq, noise=noise)
    xte, yte = render_digits(n_test, size=size, seed=test_seq, noise=noise)
    return xtr, ytr, xte, yte
