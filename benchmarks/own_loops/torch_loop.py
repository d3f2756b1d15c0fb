"""The 2018 benchmark's PyTorch_RNN loop for SPEC's GRU: an nn.Module of nn.Embedding, nn.GRU
(batch_first) and nn.Linear, Adam and nn.CrossEntropyLoss, and per shuffled minibatch of numpy
arrays: tensors made from them, zero_grad, forward, loss, backward, step. The yardstick
framework=torch task=rnn is measured against by benchmarks/own_loops.py. Prints one JSON line:
the seconds of each epoch."""

import time

import numpy as np
import torch
from common import arguments, minibatches, print_result
from torch import nn, optim


class SymbolModule(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(30000, 125)
        self.gru = nn.GRU(input_size=125, hidden_size=100, num_layers=1, batch_first=True)
        self.l_out = nn.Linear(100, 2)

    def forward(self, x):
        x, _ = self.gru(self.embedding(x))  # zero initial state
        return self.l_out(x[:, -1, :])  # the last time step


def main():
    args = arguments(["rnn"])
    rng = np.random.RandomState(args.seed)
    torch.manual_seed(args.seed)
    x = rng.randint(1, 30000, (args.examples, 150)).astype(np.int64)
    y = rng.randint(0, 2, args.examples).astype(np.int64)
    sym = SymbolModule()
    optimizer = optim.Adam(sym.parameters(), 0.001, betas=(0.9, 0.999), eps=1e-8)
    criterion = nn.CrossEntropyLoss()
    seconds = []
    sym.train()
    for _ in range(args.epochs):
        start = time.perf_counter()
        for data, target in minibatches(x, y, args.batch_size, rng):
            data, target = torch.from_numpy(data), torch.from_numpy(target)
            optimizer.zero_grad()
            loss = criterion(sym(data), target)
            loss.backward()
            optimizer.step()
        seconds.append(time.perf_counter() - start)
    print_result(
        "torch (the 2018 PyTorch_RNN loop)",
        args.task,
        epoch_seconds=seconds,
        examples_per_epoch=args.examples // args.batch_size * args.batch_size,
    )


if __name__ == "__main__":
    main()
