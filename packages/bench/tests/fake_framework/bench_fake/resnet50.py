import numpy as np


class Projection(object):
    def __init__(self):
        self.w = np.random.RandomState(0).randn(3, 2048).astype(np.float32)
        self.params = [self.w]


def build_model(run):
    return Projection()


def predict(model, batches):
    return np.concatenate([x.mean(axis=(2, 3)) @ model.w for x in batches])
