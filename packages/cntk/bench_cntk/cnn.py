"""VGG-style CIFAR-10 CNN the CNTK way: cntk.layers Sequential, cntk.Trainer, momentum_sgd."""

from bench_shared.spec import CNN

from . import cntk_module, loop, weights

C = cntk_module()
L = C.layers


def build_model(run):
    c1, c2, c3, c4 = CNN.conv_channels
    k = (CNN.kernel_size, CNN.kernel_size)
    d1, d2, d3 = CNN.dropout if run["task"]["dropout"] else (0.0, 0.0, 0.0)
    # one seed per dropout layer: under set_fixed_random_seed (setup) every random op shares
    # the run's seed, and the three layers would draw the same masks
    s1, s2, s3 = (run["seed"] * 3 + i for i in range(3))
    # pad=True is "same" padding: 1 for a 3x3 kernel, as SPEC's pad 1; layers' defaults are
    # glorot-uniform weights (fan over the receptive field) and zero biases, SPEC's rule
    layers = {
        "conv1": L.Convolution2D(k, c1, pad=True, activation=C.relu),
        "conv2": L.Convolution2D(k, c2, pad=True),
        "conv3": L.Convolution2D(k, c3, pad=True, activation=C.relu),
        "conv4": L.Convolution2D(k, c4, pad=True),
        "dense1": L.Dense(CNN.dense_units, activation=C.relu),
        "dense2": L.Dense(CNN.num_classes),
    }
    net = L.Sequential(
        [
            layers["conv1"],
            layers["conv2"],
            L.MaxPooling((2, 2), strides=2),
            C.relu,  # ReLU after the pool: cheaper
            L.Dropout(d1, seed=s1) if d1 else L.identity,  # inactive in eval(): off at evaluation
            layers["conv3"],
            layers["conv4"],
            L.MaxPooling((2, 2), strides=2),
            C.relu,
            L.Dropout(d2, seed=s2) if d2 else L.identity,
            layers["dense1"],  # Dense flattens its C, H, W input: weight (100, 8, 8, 512)
            L.Dropout(d3, seed=s3) if d3 else L.identity,
            layers["dense2"],
        ]
    )
    x = C.input_variable(CNN.input_shape)  # CHW: CNTK's native layout
    named = [
        (name + "." + field, getattr(layer, {"weight": "W", "bias": "b"}[field]))
        for name, layer in sorted(layers.items())
        for field in ("weight", "bias")
    ]
    return loop.Model(
        net(x), x, named, learner=loop.sgd(run["task"]["optimizer"]), num_classes=CNN.num_classes
    )


def slots(model):
    return weights.slots(model.named, "cnn")


train_epoch = loop.train_epoch
predict = loop.predict
