import numpy as np


class Projection(object):
    def __init__(self):
        self.w = np.random.RandomState(0).randn(3, 2048).astype(np.float32)
        self.params = [self.w]
        self.int8 = None  # precision=int8: (input scale, int8 weights, their column scales)


def build_model(run):
    return Projection()


def predict(model, batches):
    pooled = [x.mean(axis=(2, 3)) for x in batches]
    if model.int8 is None:
        return np.concatenate([p @ model.w for p in pooled])
    x_scale, w_int8, w_scale = model.int8
    return np.concatenate(
        [
            (np.clip(np.round(p / x_scale), -127, 127).astype(np.int32) @ w_int8)
            * (x_scale * w_scale)
            for p in pooled
        ]
    ).astype(np.float32)


def calibrate(model, batches):
    """int8 as a quantizer does it: the pooled inputs' range from the calibration batches, the
    weights per output column; integer products, rescaled."""
    x_scale = max(float(np.abs(x.mean(axis=(2, 3))).max()) for x in batches) / 127
    w_scale = np.abs(model.w).max(axis=0) / 127
    model.int8 = (x_scale, np.round(model.w / w_scale).astype(np.int32), w_scale)
    return model
