"""PaddlePaddle's own high-level loops for SPEC's shapes: the CNN trained by paddle.Model's
prepare and fit over a paddle.io dataset (Paddle's "high-level API" tutorial), and ResNet-50
features from paddle.vision.models.resnet50 through paddle.Model.predict: the yardsticks
framework=paddle is measured against by benchmarks/own_loops.py. Prints one JSON line: the
seconds of each epoch (training) or of the timed pass (inference)."""

import time

import numpy as np
import paddle
from common import EpochTimes, arguments, print_result
from paddle import nn


class EpochTimer(EpochTimes, paddle.callbacks.Callback):
    pass


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
    args = arguments(["cnn", "resnet50"])
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
    print_result("paddle (its own high-level API)", args.task, **result)


if __name__ == "__main__":
    main()
