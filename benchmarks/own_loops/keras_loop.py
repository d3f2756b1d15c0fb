"""Keras' own example loops for SPEC's shapes, on the backend KERAS_BACKEND names: the CNN as
Keras' "Simple MNIST convnet" example and the 2018 benchmark's Keras_TF_CNN notebook write it
(a Sequential model, compile, one fit on whole numpy arrays with batch_size and shuffle), the
GRU as the 2018 Keras_TF_RNN notebook did (Embedding, GRU, Dense; Adam; one fit on arrays),
Keras 3's GRU in place of CuDNNGRU, and ResNet-50 as the 2018 Keras inference notebook did
(keras.applications' ResNet50 without its top, predict on an array with batch_size, after a
warm-up predict): the yardsticks framework=keras_jax and framework=keras are measured against
by benchmarks/own_loops.py. Prints one JSON line: the seconds of each epoch (training), or the
images and seconds of the timed predict (resnet50)."""

import time

import keras
import numpy as np
from common import EpochTimes, arguments, print_result
from keras import layers


class EpochTimer(EpochTimes, keras.callbacks.Callback):
    pass


def cnn():
    model = keras.Sequential(
        [
            keras.Input(shape=(32, 32, 3)),
            layers.Conv2D(50, 3, padding="same", activation="relu"),
            layers.Conv2D(50, 3, padding="same"),
            layers.MaxPooling2D(2),
            layers.Activation("relu"),
            layers.Dropout(0.25),
            layers.Conv2D(100, 3, padding="same", activation="relu"),
            layers.Conv2D(100, 3, padding="same"),
            layers.MaxPooling2D(2),
            layers.Activation("relu"),
            layers.Dropout(0.25),
            layers.Flatten(),
            layers.Dense(512, activation="relu"),
            layers.Dropout(0.5),
            layers.Dense(10),
        ]
    )
    model.compile(
        optimizer=keras.optimizers.SGD(0.01, momentum=0.9),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    return model


def rnn():
    model = keras.Sequential(
        [
            keras.Input(shape=(150,), dtype="int32"),
            layers.Embedding(30000, 125),
            layers.GRU(100, reset_after=True),
            layers.Dense(2),
        ]
    )
    model.compile(
        optimizer=keras.optimizers.Adam(0.001),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    return model


def resnet50(examples, batch_size, rng):
    model = keras.applications.ResNet50(
        weights=None, include_top=False, pooling="avg", input_shape=(224, 224, 3)
    )
    x = rng.uniform(0, 1, (examples, 224, 224, 3)).astype(np.float32)
    model.predict(x, batch_size=batch_size, verbose=0)  # warm-up
    start = time.perf_counter()
    model.predict(x, batch_size=batch_size, verbose=0)
    return {"images": examples, "inference_seconds": time.perf_counter() - start}


def main():
    args = arguments(["cnn", "rnn", "resnet50"])
    rng = np.random.RandomState(args.seed)
    keras.utils.set_random_seed(args.seed)
    if args.task == "resnet50":
        framework = "keras on %s (its own loop)" % keras.backend.backend()
        print_result(framework, args.task, **resnet50(args.examples, args.batch_size, rng))
        return
    if args.task == "cnn":
        x = rng.uniform(0, 1, (args.examples, 32, 32, 3)).astype(np.float32)
        y = rng.randint(0, 10, args.examples)
    else:
        x = rng.randint(1, 30000, (args.examples, 150)).astype(np.int32)
        y = rng.randint(0, 2, args.examples)
    model = cnn() if args.task == "cnn" else rnn()
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
        "keras on %s (its own loop)" % keras.backend.backend(),
        args.task,
        epoch_seconds=timer.seconds,
        examples_per_epoch=steps * args.batch_size,
    )


if __name__ == "__main__":
    main()
