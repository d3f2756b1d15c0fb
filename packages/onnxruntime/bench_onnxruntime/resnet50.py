"""ResNet-50 v1 features the ONNX way: the graph written node by node with onnx.helper (Conv,
BatchNormalization, Relu, MaxPool, Add, GlobalAveragePool), run by an InferenceSession whose
graph optimiser folds each BatchNormalization into its Conv (graph_optimization >= basic)."""

from bench_shared.spec import ResNet50

from . import loop, weights


def conv_bn(g, x, kernel, stride, conv, bn, relu=True):
    """Conv without bias, then inference batch norm on the running statistics (the channel
    counts are the initializers' shapes: an ONNX graph names its weights, it does not size them)."""
    pad = kernel // 2
    x = g.op(
        "Conv",
        [x, conv + ".W"],
        conv,
        kernel_shape=[kernel, kernel],
        strides=[stride, stride],
        pads=[pad] * 4,
    )
    x = g.op(
        "BatchNormalization",
        [x] + [bn + "." + f for f in ("scale", "B", "input_mean", "input_var")],
        bn,
        epsilon=ResNet50.batch_norm_eps,
    )
    return g.op("Relu", [x], bn + ".relu") if relu else x


def bottleneck(g, x, stride, prefix, projection):
    # v1: the stride sits on the first 1x1 convolution (torchvision's v1.5 moves it to the 3x3)
    y = conv_bn(g, x, 1, stride, prefix + "conv1", prefix + "bn1")
    y = conv_bn(g, y, 3, 1, prefix + "conv2", prefix + "bn2")
    y = conv_bn(g, y, 1, 1, prefix + "conv3", prefix + "bn3", relu=False)
    if projection:
        x = conv_bn(g, x, 1, stride, prefix + "shortcut.conv", prefix + "shortcut.bn", relu=False)
    return g.op("Relu", [g.op("Add", [y, x], prefix + "add")], prefix + "relu")


def graph():
    """The nodes from `images` (N, 3, 224, 224) to `features` (N, 2048)."""
    g, r = loop.Graph(), ResNet50
    x = conv_bn(g, "images", r.stem_kernel, r.stem_stride, "stem.conv", "stem.bn")
    x = g.op(
        "MaxPool",
        [x],
        "stem.pool",
        kernel_shape=[r.pool_kernel] * 2,
        strides=[r.pool_stride] * 2,
        pads=[r.pool_padding] * 4,
    )
    for s, (blocks, _, _, stride) in enumerate(r.stages, 1):
        for b in range(blocks):  # the first block of every stage changes the channel count
            x = bottleneck(
                g, x, stride if b == 0 else 1, "stage%d.block%d." % (s, b), projection=b == 0
            )
    x = g.op("GlobalAveragePool", [x], "pool")
    g.op("Flatten", [x], "features", axis=1)
    return g


def build_model(run):
    return loop.Model(
        run,
        graph(),
        weights.initializers("resnet50", run["seed"]),
        ResNet50.input_shape,
        (ResNet50.features,),
    )


def slots(model):
    return weights.slots("resnet50")


predict = loop.predict
calibrate = loop.calibrate
