"""GRU sentiment classifier the Module way: mx.sym.Embedding + FusedRNNCell (the fused RNN
operator, cuDNN on GPU; NTC) + FullyConnected, bound by a Module, Adam."""

import mxnet as mx

from bench_mxnet import initialisers, weights
from bench_mxnet.module import loop
from bench_shared.spec import RNN


def build_model(run):
    tokens = mx.sym.var("data")  # (N, T) word indices, as float32 (exact below 2^24)
    # The fused RNN operator runs time-major (TNC): transposing the (N, T) indices once is
    # cheaper than letting unroll(layout="NTC") transpose the (N, T, 125) embeddings
    x = mx.sym.Embedding(
        mx.sym.transpose(tokens),
        input_dim=RNN.vocab_size,
        output_dim=RNN.embedding_dim,
        name="embedding",
    )
    # one packed `gru_parameters` vector; gates r, z, n with two bias vectors (reset after)
    cell = mx.rnn.FusedRNNCell(RNN.hidden_units, num_layers=1, mode="gru", prefix="gru_")
    outputs, _ = cell.unroll(RNN.seq_len, inputs=x, layout="TNC", merge_outputs=True)
    last = mx.sym.SequenceLast(outputs)  # (N, H) at t = 150
    logits = mx.sym.FullyConnected(last, num_hidden=RNN.num_classes, name="dense")
    adam = run["task"]["optimizer"]
    return loop.Model(
        loop.classifier(logits),
        (RNN.seq_len,),
        run["task"]["batch_size"],
        initialisers.ByName(),
        "adam",
        {
            "learning_rate": adam["lr"],
            "beta1": adam["beta1"],
            "beta2": adam["beta2"],
            "epsilon": adam["eps"],
        },
        output=1,
    )


def slots(model):
    return weights.module_slots("rnn")


train_epoch = loop.train_epoch
predict = loop.predict
