from bench_torch.rnn import *  # noqa: F401,F403
from bench_torch.rnn import build_model, export_weights, load_weights, predict, train_epoch  # noqa: F401
