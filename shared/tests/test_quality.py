"""The quality figures computed on the worker side (bench_shared.quality), against brute
force. Valid Python 3.6."""

import itertools

import numpy as np
import pytest

from bench_shared import quality


def pairwise_auc(scores, positives):
    """The definition: over every (positive, negative) pair, 1 if the positive scores higher,
    1/2 on a tie."""
    pos = [s for s, p in zip(scores, positives) if p]
    neg = [s for s, p in zip(scores, positives) if not p]
    wins = sum(1.0 if a > b else 0.5 if a == b else 0.0 for a, b in itertools.product(pos, neg))
    return wins / (len(pos) * len(neg))


def test_roc_auc_is_the_pairwise_probability_ties_counting_one_half():
    rng = np.random.RandomState(0)
    for _ in range(20):
        n = rng.randint(2, 60)
        scores = rng.randint(0, 6, n).astype(float)  # many ties
        labels = rng.rand(n) < 0.3
        if labels.all() or not labels.any():
            continue
        assert quality.roc_auc(scores, labels) == pytest.approx(pairwise_auc(scores, labels))


def test_roc_auc_extremes_and_a_label_without_both_classes():
    assert quality.roc_auc([0.1, 0.2, 0.8, 0.9], [0, 0, 1, 1]) == 1.0
    assert quality.roc_auc([0.9, 0.8, 0.2, 0.1], [0, 0, 1, 1]) == 0.0
    assert quality.roc_auc([0.5] * 4, [0, 1, 0, 1]) == 0.5
    assert quality.roc_auc([0.1, 0.2], [1, 1]) is None


def test_mean_roc_auc_skips_labels_with_one_class_and_refuses_a_shape_mismatch():
    targets = np.array([[1, 0, 0], [0, 0, 1], [1, 0, 0], [0, 0, 1]])
    scores = np.array([[0.9, 0.1, 0.2], [0.1, 0.5, 0.7], [0.8, 0.3, 0.4], [0.2, 0.2, 0.1]])
    mean, per_label = quality.mean_roc_auc(scores, targets)
    assert per_label == [1.0, None, 0.5] and mean == 0.75
    with pytest.raises(ValueError):
        quality.mean_roc_auc(scores[:, :2], targets)


def test_binary_cross_entropy_from_logits_matches_the_formula_and_never_overflows():
    logits = np.array([[-3.0, 0.0, 2.5], [1.0, -0.5, 4.0]])
    targets = np.array([[0, 1, 1], [1, 0, 0]])
    p = 1 / (1 + np.exp(-logits))
    naive = -np.mean(targets * np.log(p) + (1 - targets) * np.log(1 - p))
    assert quality.binary_cross_entropy(logits, targets) == pytest.approx(naive)
    huge = quality.binary_cross_entropy(np.array([[1e4, -1e4]]), np.array([[0, 1]]))
    assert huge == pytest.approx(1e4)


def test_accuracy_is_the_argmax_hit_rate():
    assert quality.accuracy(np.array([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]]), [1, 1, 1]) == 2 / 3
