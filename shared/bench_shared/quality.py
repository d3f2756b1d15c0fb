"""The quality figures a run reports beside its time, computed once for every framework from
the outputs its `predict` returns: accuracy and the softmax cross-entropy for the single-label
tasks; for DenseNet's multi-label task (14 findings per image), the mean ROC-AUC over the
labels and the binary cross-entropy that its training minimises. NumPy only (worker side,
Python 3.6).
"""

import numpy as np


def accuracy(logits, labels):
    """Fraction of examples whose largest logit is their label."""
    return float(np.mean(np.argmax(logits, axis=1) == np.asarray(labels)))


def softmax_cross_entropy(logits, labels):
    """Mean over examples of -log softmax(x)[label], computed stably (log-sum-exp)."""
    x = np.asarray(logits, np.float64)
    x = x - x.max(axis=1, keepdims=True)
    log_norm = np.log(np.exp(x).sum(axis=1))
    picked = x[np.arange(len(x)), np.asarray(labels).astype(np.int64)]
    return float(np.mean(log_norm - picked))


def binary_cross_entropy(logits, targets):
    """Mean over examples and labels of -[t log sigmoid(x) + (1 - t) log(1 - sigmoid(x))],
    computed from the logits without overflow: max(x, 0) - x t + log(1 + exp(-|x|))."""
    x = np.asarray(logits, np.float64)
    t = np.asarray(targets, np.float64)
    return float(np.mean(np.maximum(x, 0) - x * t + np.log1p(np.exp(-np.abs(x)))))


def roc_auc(scores, positives):
    """Area under the ROC curve of one label: the probability that a random positive scores
    above a random negative, ties counting one half (Mann-Whitney U over average ranks).
    None where the label has no positive or no negative example."""
    scores = np.asarray(scores, np.float64)
    positives = np.asarray(positives).astype(bool)
    n_pos, n_neg = int(positives.sum()), int((~positives).sum())
    if n_pos == 0 or n_neg == 0:
        return None
    order = np.argsort(scores, kind="mergesort")
    ranks = np.empty(len(scores), np.float64)
    ranks[order] = np.arange(1, len(scores) + 1)
    sorted_scores = scores[order]  # tied scores share the average of their ranks
    starts = np.flatnonzero(np.r_[True, sorted_scores[1:] != sorted_scores[:-1]])
    ends = np.r_[starts[1:], len(scores)]
    for start, end in zip(starts, ends):
        if end - start > 1:
            ranks[order[start:end]] = (start + 1 + end) / 2.0
    u = ranks[positives].sum() - n_pos * (n_pos + 1) / 2.0
    return float(u / (n_pos * n_neg))


def mean_roc_auc(scores, targets):
    """(mean ROC-AUC over the labels that have both classes, per-label AUCs with None where a
    label has only one class): the 2018 benchmark's ChestX-ray14 figure. Scores (N, labels)
    may be logits or probabilities (AUC depends on the order only)."""
    scores, targets = np.asarray(scores), np.asarray(targets)
    if scores.shape != targets.shape:
        raise ValueError("scores %s and targets %s differ in shape" % (scores.shape, targets.shape))
    per_label = [roc_auc(scores[:, j], targets[:, j]) for j in range(targets.shape[1])]
    known = [auc for auc in per_label if auc is not None]
    if not known:
        raise ValueError("no label has both positive and negative examples")
    return float(np.mean(known)), per_label
