"""The densenet task's input pipeline (SPEC.md), the same NumPy code for every framework.

The prepared images are uint8 grayscale (N, S, S), resized once (real data: S = 264). Each
batch becomes float32 (N, 3, size, size): a random size x size crop and a random horizontal
flip for training (an RNG given), for evaluation the whole image resized to size x size (the
2018 notebooks' test transform; bilinear with Pillow's antialiasing weights); scaled to
[0, 1], the gray channel repeated as R, G and B, normalised with ImageNet's mean and std. Part
of the timed training loop, as data augmentation is in the 2018 benchmark.
"""

import numpy as np

from . import spec

MEAN = np.asarray(spec.DenseNet121.mean, np.float32).reshape(1, 3, 1, 1)
STD = np.asarray(spec.DenseNet121.std, np.float32).reshape(1, 3, 1, 1)


def bilinear_weights(source, target):
    """(target, source) matrix of Pillow's BILINEAR resize along one axis: a triangle filter,
    widened by the scale when shrinking (antialiasing), each row normalised."""
    scale = float(source) / target
    support = max(scale, 1.0)
    weights = np.zeros((target, source), np.float64)
    for x in range(target):
        centre = (x + 0.5) * scale
        lo = max(int(centre - support + 0.5), 0)
        hi = min(int(centre + support + 0.5), source)
        taps = np.maximum(0.0, 1.0 - np.abs((np.arange(lo, hi) - centre + 0.5) / support))
        weights[x, lo:hi] = taps / taps.sum()
    return weights.astype(np.float32)


def resized(images, size):
    """uint8 (N, S, S) -> float32 (N, size, size), bilinear (two matrix products)."""
    rows = bilinear_weights(images.shape[1], size)
    cols = bilinear_weights(images.shape[2], size)
    return np.matmul(np.matmul(rows, images.astype(np.float32)), cols.T)


def model_input(images, size, rng=None):
    """uint8 (N, S, S) -> normalised float32 (N, 3, size, size); rng: augment (training)."""
    n, height, width = images.shape
    if height < size or width < size:
        raise ValueError("images of %dx%d cannot be cropped to %d" % (height, width, size))
    if rng is None:
        crops = resized(images, size) if (height, width) != (size, size) else images
    else:
        tops = rng.randint(0, height - size + 1, n)
        lefts = rng.randint(0, width - size + 1, n)
        flips = rng.rand(n) < 0.5
        crops = np.empty((n, size, size), np.uint8)
        for i in range(n):
            crop = images[i, tops[i] : tops[i] + size, lefts[i] : lefts[i] + size]
            crops[i] = crop[:, ::-1] if flips[i] else crop
    gray = crops.astype(np.float32)[:, None] * np.float32(1.0 / 255.0)
    return (gray - MEAN) / STD  # (N, 1) broadcast against 3 channels: (N, 3, size, size)


class TrainingTransform(object):
    """The training batches' augmentation, seeded per (seed, epoch, rank): reproducible."""

    def __init__(self, size, seed, epoch, rank=0):
        self.size = size
        self.rng = np.random.RandomState([seed, epoch, rank, 264])

    def __call__(self, images):
        return model_input(images, self.size, self.rng)
