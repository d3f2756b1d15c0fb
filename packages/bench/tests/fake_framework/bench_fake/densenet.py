"""The densenet task's stand-in: per-label logistic regression on an 8 x 8 average pool of the
image (the synthetic findings are blobs at fixed places, so it learns them). A data-parallel
run's ranks train independent replicas: the orchestrator's side (N processes supervised as
one run) is what the fake tests, not gradient exchange."""

import time

import numpy as np

from bench_shared.spec import DenseNet121

from . import delay_s, lr

GRID = 8


class Model(object):
    def __init__(self, lr):
        self.w = np.zeros((GRID * GRID, DenseNet121.num_labels), np.float32)
        self.b = np.zeros(DenseNet121.num_labels, np.float32)
        self.params = [self.w, self.b]
        self.lr = lr

    def features(self, x):
        n, _, h, w = x.shape
        cut = x[:, 0, : h - h % GRID, : w - w % GRID]
        return cut.reshape(n, GRID, h // GRID, GRID, w // GRID).mean(axis=(2, 4)).reshape(n, -1)

    def logits(self, x):
        return self.features(x) @ self.w + self.b


def build_model(run):
    return Model(lr() * 0.2)


def train_epoch(model, batches):
    losses = []
    for x, y in batches:
        time.sleep(delay_s())
        f = model.features(x)
        z = f @ model.w + model.b
        p = 1.0 / (1.0 + np.exp(-z))
        losses.append(float(np.mean(np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z))))))
        grad = (p - y) / len(y)
        model.w -= model.lr * f.T @ grad
        model.b -= model.lr * grad.sum(0)
    return float(np.mean(losses))


def predict(model, batches):
    return np.concatenate([model.logits(x) for x in batches])
