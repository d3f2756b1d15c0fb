"""The densenet task's input pipeline (bench_shared.xray) and data-parallel batching: the same
NumPy code in every framework's worker. Valid Python 3.6."""

import numpy as np

from bench_shared import batching, spec, xray


def images(n=4, side=38, seed=0):
    return np.random.RandomState(seed).randint(0, 256, (n, side, side)).astype(np.uint8)


def normalised(gray):
    """What model_input does to one uint8 crop, written out per channel."""
    g = gray.astype(np.float32) / 255.0
    return np.stack([(g - m) / s for m, s in zip(spec.DenseNet121.mean, spec.DenseNet121.std)])


def test_training_crops_are_crops_or_mirrored_crops_of_the_image_normalised_per_channel():
    x = images()
    out = xray.model_input(x, 32, np.random.RandomState(3))
    assert out.shape == (4, 3, 32, 32) and out.dtype == np.float32
    flipped = 0
    for i in range(len(x)):
        windows = [x[i, t : t + 32, c : c + 32] for t in range(7) for c in range(7)]
        plain = [w for w in windows if np.allclose(normalised(w), out[i], atol=1e-5)]
        mirrored = [w for w in windows if np.allclose(normalised(w[:, ::-1]), out[i], atol=1e-5)]
        assert plain or mirrored, i
        flipped += bool(mirrored)
    assert 0 < flipped < len(x)  # the flip is random, not always or never (seeded: 3)


def test_evaluation_resizes_the_whole_image_without_randomness():
    x = images()
    a, b = xray.model_input(x, 32), xray.model_input(x, 32)
    assert np.array_equal(a, b) and a.shape == (4, 3, 32, 32)
    flat = np.full((2, 38, 38), 200, np.uint8)  # a constant image stays that constant
    np.testing.assert_allclose(
        xray.model_input(flat, 32),
        np.broadcast_to(normalised(np.full((32, 32), 200, np.uint8)), (2, 3, 32, 32)),
        atol=1e-5,
    )
    same = xray.model_input(x[:, :32, :32], 32)  # already the size: only normalised
    np.testing.assert_allclose(same[1], normalised(x[1, :32, :32]), atol=1e-6)


def test_resize_weights_average_neighbours_and_keep_a_ramp_a_ramp():
    w = xray.bilinear_weights(264, 224)
    np.testing.assert_allclose(w.sum(axis=1), 1.0, rtol=1e-6)
    ramp = np.arange(264, dtype=np.float32)
    out = w @ ramp
    assert np.all(np.diff(out) > 0) and abs(out[112] - 264 * 112.5 / 224 + 0.5) < 0.6


def test_training_transforms_are_reproducible_per_seed_epoch_and_rank():
    x = images()
    first = xray.TrainingTransform(32, seed=0, epoch=1, rank=0)(x)
    again = xray.TrainingTransform(32, seed=0, epoch=1, rank=0)(x)
    other = xray.TrainingTransform(32, seed=0, epoch=1, rank=1)(x)
    assert np.array_equal(first, again) and not np.array_equal(first, other)


def test_ranks_split_each_global_batch_and_together_see_the_single_device_batches():
    x = np.arange(100)[:, None]
    y = np.arange(100)
    one = list(batching.TrainBatches(x, y, 20, seed=5, epoch=2))
    halves = [list(batching.TrainBatches(x, y, 10, seed=5, epoch=2, shard=(r, 2))) for r in (0, 1)]
    assert len(one) == len(halves[0]) == len(halves[1]) == 5
    for step, (_, yb) in enumerate(one):
        joined = np.concatenate([halves[0][step][1], halves[1][step][1]])
        assert np.array_equal(joined, yb)  # rank 0's half first, then rank 1's
    assert not set(halves[0][0][1]) & set(halves[1][0][1])
