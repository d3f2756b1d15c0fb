"""The 2018 benchmark's Keras_CNTK_RNN loop for SPEC's GRU, on Keras 2.3 and the backend
KERAS_BACKEND names (cntk: framework=keras_cntk's yardstick in benchmarks/own_loops.py):
Sequential Embedding, GRU (reset_after, as the row's) and Dense; Adam; one fit on whole numpy
arrays with batch_size and shuffle. Python 3.6 (CNTK's). Prints one JSON line: the seconds of
each epoch."""

import numpy as np
from common import EpochTimes, arguments, print_result
from keras import callbacks, layers, losses, models, optimizers


class EpochTimer(EpochTimes, callbacks.Callback):
    pass


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
    args = arguments(["rnn"])
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
    print_result(
        "keras 2 (the 2018 Keras_CNTK_RNN loop)",
        args.task,
        epoch_seconds=timer.seconds,
        examples_per_epoch=steps * args.batch_size,
    )


if __name__ == "__main__":
    main()
