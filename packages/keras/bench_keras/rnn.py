"""GRU sentiment classifier the Keras way: Sequential Embedding + GRU(reset_after=True, the
cuDNN-compatible form, fused on GPU) + Dense; compile with Adam, fit, predict."""

import keras
from keras import layers

from bench_keras_layers import initialisers, optimizers
from bench_shared.spec import RNN

from . import loop, weights


def build_model(run):
    model = keras.Sequential(
        [
            keras.Input((RNN.seq_len,), dtype="int32"),
            layers.Embedding(
                RNN.vocab_size,
                RNN.embedding_dim,
                name="embedding",
                embeddings_initializer=keras.initializers.RandomUniform(
                    -RNN.embedding_init_range, RNN.embedding_init_range
                ),
            ),
            # last time step only; SPEC's initialisers per gate (Keras' defaults span all three)
            layers.GRU(RNN.hidden_units, reset_after=True, name="gru", **initialisers.gru()),
            layers.Dense(RNN.num_classes, name="dense", dtype="float32"),  # fp32 logits
        ],
        name="gru_classifier",
    )
    return loop.compile_model(model, optimizers.adam(run["task"]["optimizer"]))


def slots(model):
    cell, dense = model.get_layer("gru").cell, model.get_layer("dense")
    return weights.slots(
        "rnn",
        [
            ("embedding.weight", model.get_layer("embedding").embeddings),
            ("gru.input_weight", cell.kernel),
            ("gru.recurrent_weight", cell.recurrent_kernel),
            ("gru.input_bias", cell.bias, 0),  # Keras stacks both biases: (2, 3 * units)
            ("gru.recurrent_bias", cell.bias, 1),
            ("dense.weight", dense.kernel),
            ("dense.bias", dense.bias),
        ],
    )


train_epoch = loop.train_epoch
train = loop.train  # every epoch in one fit
predict = loop.predict
