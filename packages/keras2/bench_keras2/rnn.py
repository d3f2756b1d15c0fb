"""GRU sentiment classifier the Keras 2 way: Sequential Embedding + GRU(reset_after=True, the
cuDNN-compatible form; CuDNNGRU is TensorFlow's only) + Dense; compile with Adam, fit, predict."""

import keras
from keras import layers

from bench_shared.spec import RNN

from . import initialisers, loop, weights


def build_model(run):
    model = keras.Sequential(
        [
            layers.Embedding(
                RNN.vocab_size,
                RNN.embedding_dim,
                input_length=RNN.seq_len,
                name="embedding",
                embeddings_initializer=keras.initializers.RandomUniform(
                    -RNN.embedding_init_range, RNN.embedding_init_range
                ),
            ),
            # last time step only; SPEC's initialisers per gate (Keras' defaults span all three)
            layers.GRU(RNN.hidden_units, reset_after=True, name="gru", **initialisers.gru()),
            layers.Dense(RNN.num_classes, name="dense"),  # logits
        ],
        name="gru_classifier",
    )
    adam = run["task"]["optimizer"]
    # Keras 2's Adam is SPEC's (bias-corrected through the step size, epsilon outside the
    # root); CNTK's and Theano's Embedding gradients are dense: no summing needed (bench_keras
    # sums TensorFlow's repeated IndexedSlices)
    return loop.compile_model(
        model,
        keras.optimizers.Adam(
            adam["lr"], beta_1=adam["beta1"], beta_2=adam["beta2"], epsilon=adam["eps"]
        ),
    )


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
