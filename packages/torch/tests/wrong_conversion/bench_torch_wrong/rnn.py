from bench_torch.rnn import build_model, predict, slots, train_epoch  # noqa: F401
