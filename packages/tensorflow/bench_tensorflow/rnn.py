"""GRU sentiment classifier the TensorFlow 2 way: Keras Embedding + GRU(reset_after=True, the
cuDNN-compatible form, fused on GPU) + Dense, trained by a tf.function step with Adam."""

import keras
from keras import layers

from bench_keras_layers import initialisers, optimizers
from bench_shared.spec import RNN

from . import loop, weights


class GRUClassifier(keras.Model):
    def __init__(self):
        super().__init__()
        self.embedding = layers.Embedding(
            RNN.vocab_size,
            RNN.embedding_dim,
            embeddings_initializer=keras.initializers.RandomUniform(
                -RNN.embedding_init_range, RNN.embedding_init_range
            ),
        )
        # SPEC's initialisers per gate (bench_keras_layers.initialisers; Keras' own span all
        # three gates)
        self.gru = layers.GRU(
            RNN.hidden_units,
            reset_after=True,  # last time step only
            **initialisers.gru(),
        )
        self.dense = layers.Dense(RNN.num_classes)

    def call(self, tokens, training=False):
        return self.dense(self.gru(self.embedding(tokens), training=training))


def build_model(run):
    optimizer = optimizers.adam(run["task"]["optimizer"])  # the Embedding's slices summed
    if run["precision"] == "fp16":
        optimizer = keras.mixed_precision.LossScaleOptimizer(optimizer)
    return loop.Model(run, GRUClassifier(), (RNN.seq_len,), "int32", optimizer)


def slots(model):
    net = model.net
    cell = net.gru.cell
    return weights.slots(
        "rnn",
        [
            ("embedding.weight", net.embedding.embeddings),
            ("gru.input_weight", cell.kernel),
            ("gru.recurrent_weight", cell.recurrent_kernel),
            ("gru.input_bias", cell.bias, 0),  # Keras stacks both biases: (2, 3 * units)
            ("gru.recurrent_bias", cell.bias, 1),
            ("dense.weight", net.dense.kernel),
            ("dense.bias", net.dense.bias),
        ],
    )


train_epoch = loop.train_epoch
predict = loop.predict
