"""ResNet-50 v1 features the Flax NNX way, written out (no Flax model zoo): nnx.Conv and
nnx.BatchNorm (eval mode: running statistics), stages as nnx.List, NHWC, a jax.jit forward pass."""

from flax import nnx

from bench_shared.spec import ResNet50

from . import loop, weights

native_layout = loop.native_layout


def conv(cin, cout, kernel, stride, rngs):
    # He init keeps the activations of random weights in range
    return nnx.Conv(
        cin,
        cout,
        (kernel, kernel),
        stride,
        padding=kernel // 2,
        use_bias=False,
        kernel_init=nnx.initializers.he_normal(),
        rngs=rngs,
        **loop.layer_options(),
    )


def bn(channels, rngs):
    return nnx.BatchNorm(
        channels, epsilon=ResNet50.batch_norm_eps, rngs=rngs, **loop.layer_options()
    )


class ConvBN(nnx.Module):
    """The stem's and the projection shortcut's convolution and batch norm."""

    def __init__(self, cin, cout, kernel, stride, rngs):
        self.conv, self.bn = conv(cin, cout, kernel, stride, rngs), bn(cout, rngs)

    def __call__(self, x):
        return self.bn(self.conv(x))


class Bottleneck(nnx.Module):
    def __init__(self, cin, width, cout, stride, rngs):
        # v1: the stride sits on the first 1x1 convolution (torchvision's v1.5 moves it to the 3x3)
        self.conv1, self.bn1 = conv(cin, width, 1, stride, rngs), bn(width, rngs)
        self.conv2, self.bn2 = conv(width, width, 3, 1, rngs), bn(width, rngs)
        self.conv3, self.bn3 = conv(width, cout, 1, 1, rngs), bn(cout, rngs)
        projection = stride != 1 or cin != cout
        self.shortcut = ConvBN(cin, cout, 1, stride, rngs) if projection else None

    def __call__(self, x):
        identity = x if self.shortcut is None else self.shortcut(x)
        y = nnx.relu(self.bn1(self.conv1(x)))
        y = nnx.relu(self.bn2(self.conv2(y)))
        return nnx.relu(self.bn3(self.conv3(y)) + identity)


class ResNet50Features(nnx.Module):
    def __init__(self, rngs):
        r = ResNet50
        self.stem = ConvBN(r.input_shape[0], r.stem_channels, r.stem_kernel, r.stem_stride, rngs)
        cin = r.stem_channels
        for s, (blocks, width, cout, stride) in enumerate(r.stages, 1):
            stage = []
            for b in range(blocks):
                stage.append(Bottleneck(cin, width, cout, stride if b == 0 else 1, rngs))
                cin = cout
            # Flax 0.12: a list of submodules is an nnx.List (a plain list is static data)
            setattr(self, "stage%d" % s, nnx.List(stage))

    def __call__(self, x):
        r = ResNet50
        x = nnx.relu(self.stem(x))
        x = nnx.max_pool(
            x, (r.pool_kernel,) * 2, (r.pool_stride,) * 2, padding=((r.pool_padding,) * 2,) * 2
        )  # pads with -inf
        for stage in (self.stage1, self.stage2, self.stage3, self.stage4):
            for block in stage:
                x = block(x)
        return x.mean(axis=(1, 2))  # global average pool: 2048 features


def build_model(run):
    return loop.Model(ResNet50Features(loop.rngs()))


def slots(model):
    return weights.slots("resnet50")


predict = loop.predict
