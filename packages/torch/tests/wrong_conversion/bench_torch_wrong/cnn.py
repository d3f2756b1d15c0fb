import collections

from bench_torch.cnn import build_model, export_weights, predict, train_epoch  # noqa: F401
from bench_torch.cnn import load_weights as correct_load_weights


def load_weights(model, params):
    params = collections.OrderedDict(params)
    params["conv1.weight"] = params["conv1.weight"].transpose(0, 1, 3, 2).copy()
    correct_load_weights(model, params)
