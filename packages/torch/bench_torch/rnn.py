"""GRU sentiment classifier the PyTorch way: nn.Embedding + fused nn.GRU (cuDNN on GPU) + Adam."""

import functools

import torch
from torch import nn, optim

from bench_shared.spec import RNN

from . import loop, weights


class GRUClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(RNN.vocab_size, RNN.embedding_dim)
        # PyTorch's GRU is the cuDNN form: gates r, z, n, biases b_ih and b_hh (reset_after)
        self.gru = nn.GRU(RNN.embedding_dim, RNN.hidden_units, batch_first=True)
        self.dense = nn.Linear(RNN.hidden_units, RNN.num_classes)
        # SPEC's initialisers (spec.RNN.init), per gate
        r = RNN.embedding_init_range
        nn.init.uniform_(self.embedding.weight, -r, r)
        for gate in range(3):
            rows = slice(gate * RNN.hidden_units, (gate + 1) * RNN.hidden_units)
            nn.init.xavier_uniform_(self.gru.weight_ih_l0[rows])
            nn.init.orthogonal_(self.gru.weight_hh_l0[rows])
        nn.init.zeros_(self.gru.bias_ih_l0)
        nn.init.zeros_(self.gru.bias_hh_l0)
        nn.init.xavier_uniform_(self.dense.weight)
        nn.init.zeros_(self.dense.bias)

    def forward(self, tokens):
        _, last = self.gru(self.embedding(tokens))  # zero initial state; last = h at t = 150
        return self.dense(last[-1])


def build_model(run):
    adam = run["task"]["optimizer"]
    optimizer = functools.partial(
        optim.Adam, lr=adam["lr"], betas=(adam["beta1"], adam["beta2"]), eps=adam["eps"]
    )
    with torch.no_grad():
        net = GRUClassifier()
    return loop.Model(run, net, optimizer)


def slots(model):
    return weights.slots("rnn")


train_epoch = loop.train_epoch
predict = loop.predict
