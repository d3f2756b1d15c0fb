"""Learnable synthetic data with the exact shapes and dtypes of the real datasets.

Deterministic for a seed, class-balanced, and with class structure a model has to learn:
a CIFAR-10 stand-in whose classes are noisy, rescaled colour patterns, an IMDB stand-in
whose labels are carried by a few "sentiment" words scattered through Zipf-distributed text,
and a ChestX-ray14 stand-in whose 14 findings are faint blobs, each at its own place.
A model that learns beats chance clearly (a trained CNN reaches ~90 %, not 100 %: some labels
are flipped); one that does not learn stays at chance. v4 made the class signal strong enough
to be learned in 32 steps of batch 64 (CNN: 0.74-0.93 across the 12 frameworks; GRU: 0.81-0.94),
so that the tests' runs need a third of v3's steps; v3's CNN needed ~96.
"""

import numpy as np

from bench_shared.spec import CNN, RNN, DenseNet121, ResNet50

from . import imdb

VERSION = "v4"  # part of the cache entry's name: bump it whenever a generator changes
LABEL_NOISE = 0.1  # fraction of examples whose label is replaced by a random one
CHUNK = 4096


def balanced_labels(rng, n, num_classes):
    return rng.permutation(np.arange(n) % num_classes).astype(np.int64)


def flip_labels(rng, y, num_classes):
    flip = rng.random(len(y)) < LABEL_NOISE
    y = y.copy()
    y[flip] = rng.integers(0, num_classes, flip.sum())
    return y


def cifar10(num_train, num_test, seed):
    rng = np.random.default_rng([seed, 10])
    c, h, w = CNN.input_shape
    coarse = rng.standard_normal((CNN.num_classes, c, 4, 4)).astype(np.float32)
    patterns = np.kron(coarse, np.ones((h // 4, w // 4), np.float32))  # blocky colour layouts

    def split(n):
        y = balanced_labels(rng, n, CNN.num_classes)
        x = np.empty((n, c, h, w), np.float32)
        for start in range(0, n, CHUNK):
            yc = y[start : start + CHUNK]
            contrast = rng.uniform(0.3, 1.2, (len(yc), 1, 1, 1)).astype(np.float32)
            brightness = rng.uniform(0.35, 0.65, (len(yc), 1, 1, 1)).astype(np.float32)
            noise = rng.standard_normal((len(yc), c, h, w), dtype=np.float32)
            x[start : start + CHUNK] = brightness + 0.4 * contrast * patterns[yc] + 0.25 * noise
        np.clip(x, 0.0, 1.0, out=x)  # pixels in [0, 1] like CIFAR /255
        return x, flip_labels(rng, y, CNN.num_classes)

    train_x, train_y = split(num_train)
    test_x, test_y = split(num_test)
    return {"train_x": train_x, "train_y": train_y, "test_x": test_x, "test_y": test_y}


def imdb_reviews(rng, labels, sentiment_words):
    """Keras-format reviews (lists of word ranks, 1 = most frequent) with planted sentiment."""
    reviews = []
    lengths = np.clip(rng.lognormal(5.2, 0.6, len(labels)), 10, 2000).astype(int)
    for label, length in zip(labels, lengths):
        words = np.minimum(rng.zipf(1.25, length), 88000)  # Zipf like natural text
        planted = rng.random(length) < 0.2
        own = rng.random(length) < 0.8  # a fifth of the sentiment words mislead
        polarity = np.where(own, label, 1 - label)
        choice = rng.integers(0, sentiment_words.shape[1], length)
        words[planted] = sentiment_words[polarity[planted], choice[planted]]
        reviews.append(words)
    return reviews


def imdb_like(num_train, num_test, seed):
    rng = np.random.default_rng([seed, 25])
    # 2 x 20 distinct frequent-ish word ranks carry the sentiment
    sentiment_words = rng.choice(np.arange(20, 3000), size=(2, 20), replace=False)
    arrays = {}
    for split, n in (("train", num_train), ("test", num_test)):
        y = balanced_labels(rng, n, RNN.num_classes)
        arrays[split + "_x"] = imdb.preprocess(imdb_reviews(rng, y, sentiment_words))
        arrays[split + "_y"] = flip_labels(rng, y, RNN.num_classes)
    return arrays


def images224(num_images, seed):
    """ResNet-50 input: ImageNet-normalised-like values (timing does not depend on them)."""
    rng = np.random.default_rng([seed, 224])
    x = np.empty((num_images,) + ResNet50.input_shape, np.float32)
    for start in range(0, num_images, 256):
        x[start : start + 256] = rng.standard_normal(
            (min(256, num_images - start),) + ResNet50.input_shape, dtype=np.float32
        )
    return {"images_x": x}


def stored_size(image_size):
    """The side ChestX-ray14 images are stored at for a crop of image_size: SPEC's 264 for
    224, in proportion for the tests' smaller crops."""
    return int(round(image_size * DenseNet121.resize / DenseNet121.input_shape[1]))


def chestxray_like(num_train, num_test, seed, image_size):
    """uint8 grayscale images (N, S, S) at stored_size(image_size) and multi-hot float32 labels
    (N, 14): each finding present with probability 0.15, independently, and drawn as a
    Gaussian blob of random strength (2 to 4.5 noise sigmas) at its own place on a noisy
    background; 5 % of the label
    entries are flipped, so a model that learns reaches a mean ROC-AUC well above 0.5, not 1."""
    rng = np.random.default_rng([seed, 14])
    side = stored_size(image_size)
    labels = DenseNet121.num_labels
    grid = np.arange(side, dtype=np.float32)
    centres = rng.uniform(0.2 * side, 0.8 * side, (labels, 2)).astype(np.float32)
    sigma = side / 12.0
    blobs = (
        np.exp(
            -(
                (grid[None, :, None] - centres[:, 0, None, None]) ** 2
                + (grid[None, None, :] - centres[:, 1, None, None]) ** 2
            )
            / (2 * sigma**2)
        )
        .reshape(labels, -1)
        .astype(np.float32)
    )

    def split(n):
        y = (rng.random((n, labels)) < 0.15).astype(np.float32)
        x = np.empty((n, side, side), np.uint8)
        for start in range(0, n, CHUNK // 8):
            yc = y[start : start + CHUNK // 8]
            strength = yc * rng.uniform(40.0, 90.0, yc.shape).astype(np.float32)
            image = 100.0 + (strength @ blobs).reshape(-1, side, side)
            image += 20.0 * rng.standard_normal(image.shape, dtype=np.float32)
            x[start : start + CHUNK // 8] = np.clip(image, 0, 255).astype(np.uint8)
        flip = rng.random(y.shape) < 0.05
        return x, np.where(flip, 1.0 - y, y).astype(np.float32)

    train_x, train_y = split(num_train)
    test_x, test_y = split(num_test)
    return {"train_x": train_x, "train_y": train_y, "test_x": test_x, "test_y": test_y}
