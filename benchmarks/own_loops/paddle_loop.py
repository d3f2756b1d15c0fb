"""PaddlePaddle's own high-level loops for SPEC's shapes: the CNN trained by paddle.Model's
prepare and fit over a paddle.io dataset (Paddle's "high-level API" tutorial), and ResNet-50
features from paddle.vision.models.resnet50 through paddle.Model.predict: the yardsticks
framework=paddle is measured against by benchmarks/own_loops.py. Prints one JSON line: the
seconds of each epoch (training) or of the timed pass (inference)."""

import argparse
import json
import time

import numpy as np
import paddle
from paddle import nn


class EpochTimer(paddle.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.seconds = []

    def on_epoch_begin(self, epoch, logs=None):
        self.start = time.perf_counter()

    def on_epoch_end(self, epoch, logs=None):
        self.seconds.append(time.perf_counter() - self.start)


def cnn():
    return nn.Sequential(
        nn.Conv2D(3, 50, 3, padding=1),
        nn.ReLU(),
        nn.Conv2D(50, 50, 3, padding=1),
        nn.MaxPool2D(2, 2),
        nn.ReLU(),
        nn.Dropout(0.25),
        nn.Conv2D(50, 100, 3, padding=1),
        nn.ReLU(),
        nn.Conv2D(100, 100, 3, padding=1),
        nn.MaxPool2D(2, 2),
        nn.ReLU(),
        nn.Dropout(0.25),
        nn.Flatten(),
        nn.Linear(6400, 512),
        nn.ReLU(),
        nn.Dropout(0.5),
        nn.Linear(512, 10),
    )


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--task", default="cnn", choices=["cnn", "resnet50"])
    parser.add_argument("--examples", type=int, default=2048)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    paddle.seed(args.seed)
    rng = np.random.RandomState(args.seed)
    if args.task == "cnn":
        x = rng.uniform(0, 1, (args.examples, 3, 32, 32)).astype(np.float32)
        y = rng.randint(0, 10, (args.examples, 1)).astype(np.int64)
        net = cnn()
        model = paddle.Model(net)
        model.prepare(
            paddle.optimizer.Momentum(0.01, momentum=0.9, parameters=net.parameters()),
            nn.CrossEntropyLoss(),
        )
        timer = EpochTimer()
        model.fit(
            paddle.io.TensorDataset([paddle.to_tensor(x), paddle.to_tensor(y)]),
            batch_size=args.batch_size,
            epochs=args.epochs,
            shuffle=True,
            drop_last=True,
            verbose=0,
            callbacks=[timer],
        )
        result = {
            "epoch_seconds": timer.seconds,
            "examples_per_epoch": args.examples // args.batch_size * args.batch_size,
        }
    else:  # features up to the global pool: num_classes=-1 leaves the fc out
        images = rng.normal(0, 1, (args.examples, 3, 224, 224)).astype(np.float32)
        model = paddle.Model(paddle.vision.models.resnet50(num_classes=-1))
        model.prepare()
        data = paddle.io.TensorDataset([paddle.to_tensor(images)])
        model.predict(data, batch_size=args.batch_size, verbose=0)  # warm-up, as SPEC's
        start = time.perf_counter()
        model.predict(data, batch_size=args.batch_size, verbose=0)
        result = {"inference_seconds": time.perf_counter() - start, "images": args.examples}
    print(json.dumps(dict(result, framework="paddle (its own high-level API)", task=args.task)))


if __name__ == "__main__":
    main()
