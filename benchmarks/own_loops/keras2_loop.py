"""The 2018 benchmark's Keras_CNTK_RNN loop for SPEC's GRU, on Keras 2.3 and the backend
KERAS_BACKEND names (cntk: framework=keras_cntk's yardstick in benchmarks/own_loops.py):
Sequential Embedding, GRU (reset_after, as the row's) and Dense; Adam; one fit on whole numpy
arrays with batch_size and shuffle. Python 3.6 (CNTK's). Prints one JSON line: the seconds of
each epoch."""

import argparse
import json
import time

import numpy as np
from keras import callbacks, layers, losses, models, optimizers


class EpochTimer(callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.seconds = []

    def on_epoch_begin(self, epoch, logs=None):
        self.start = time.perf_counter()

    def on_epoch_end(self, epoch, logs=None):
        self.seconds.append(time.perf_counter() - self.start)


def rnn():
    model = models.Sequential(
        [
            layers.Embedding(30000, 125, input_length=150),
            layers.GRU(100, reset_after=True),
            layers.Dense(2),
        ]
    )
    model.compile(
        optimizer=optimizers.Adam(0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-8),
        loss=losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    return model


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--task", default="rnn", choices=["rnn"])
    parser.add_argument("--examples", type=int, default=2048)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.RandomState(args.seed)
    np.random.seed(args.seed)
    x = rng.randint(1, 30000, (args.examples, 150)).astype(np.int32)
    y = rng.randint(0, 2, args.examples)
    model = rnn()
    timer = EpochTimer()
    steps = args.examples // args.batch_size
    model.fit(
        x[: steps * args.batch_size],
        y[: steps * args.batch_size],
        batch_size=args.batch_size,
        epochs=args.epochs,
        shuffle=True,
        verbose=0,
        callbacks=[timer],
    )
    print(
        json.dumps(
            {
                "framework": "keras 2 (the 2018 Keras_CNTK_RNN loop)",
                "task": args.task,
                "epoch_seconds": timer.seconds,
                "examples_per_epoch": steps * args.batch_size,
            }
        )
    )


if __name__ == "__main__":
    main()
