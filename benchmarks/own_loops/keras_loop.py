"""Keras' own example loops for SPEC's shapes, on the backend KERAS_BACKEND names: the CNN as
Keras' "Simple MNIST convnet" example writes it (a Sequential model, compile, fit on whole
numpy arrays with batch_size and shuffle), and the GRU as the 2018 benchmark's Keras_TF_RNN
notebook did (Embedding, GRU, Dense; Adam; fit on arrays), Keras 3's GRU in place of
CuDNNGRU: the yardsticks framework=keras_jax and framework=keras are measured against by
benchmarks/own_loops.py. Prints one JSON line: the seconds of each epoch."""
import argparse
import json
import time

import keras
import numpy as np
from keras import layers


class EpochTimer(keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.seconds = []

    def on_epoch_begin(self, epoch, logs=None):
        self.start = time.perf_counter()

    def on_epoch_end(self, epoch, logs=None):  # fit has its loss on the host by then
        self.seconds.append(time.perf_counter() - self.start)


def cnn():
    model = keras.Sequential([
        keras.Input(shape=(32, 32, 3)),
        layers.Conv2D(50, 3, padding="same", activation="relu"),
        layers.Conv2D(50, 3, padding="same"),
        layers.MaxPooling2D(2), layers.Activation("relu"), layers.Dropout(0.25),
        layers.Conv2D(100, 3, padding="same", activation="relu"),
        layers.Conv2D(100, 3, padding="same"),
        layers.MaxPooling2D(2), layers.Activation("relu"), layers.Dropout(0.25),
        layers.Flatten(),
        layers.Dense(512, activation="relu"), layers.Dropout(0.5),
        layers.Dense(10),
    ])
    model.compile(optimizer=keras.optimizers.SGD(0.01, momentum=0.9),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def rnn():
    model = keras.Sequential([
        keras.Input(shape=(150,), dtype="int32"),
        layers.Embedding(30000, 125),
        layers.GRU(100, reset_after=True),
        layers.Dense(2),
    ])
    model.compile(optimizer=keras.optimizers.Adam(0.001),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--task", default="cnn", choices=["cnn", "rnn"])
    parser.add_argument("--examples", type=int, default=2048)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.RandomState(args.seed)
    keras.utils.set_random_seed(args.seed)
    if args.task == "cnn":
        x = rng.uniform(0, 1, (args.examples, 32, 32, 3)).astype(np.float32)
        y = rng.randint(0, 10, args.examples)
    else:
        x = rng.randint(1, 30000, (args.examples, 150)).astype(np.int32)
        y = rng.randint(0, 2, args.examples)
    model = cnn() if args.task == "cnn" else rnn()
    timer = EpochTimer()
    steps = args.examples // args.batch_size
    model.fit(x[:steps * args.batch_size], y[:steps * args.batch_size],
              batch_size=args.batch_size, epochs=args.epochs, shuffle=True, verbose=0,
              callbacks=[timer])
    print(json.dumps({"framework": "keras on %s (its own loop)" % keras.backend.backend(),
                      "task": args.task, "epoch_seconds": timer.seconds,
                      "examples_per_epoch": steps * args.batch_size}))


if __name__ == "__main__":
    main()
