"""The benchmark specification (SPEC.md) as data, written once.

Every framework package reads layer sizes from here; the orchestrator's config schemas take
their defaults (epochs, batch sizes, optimisers) from here; parameter counts and multiply-add
counts are *computed* from the layer tables and tested against the figures SPEC.md states.
Python 3.6 and numpy-free on purpose: this module is imported in every interpreter.
"""


class CNN(object):
    """VGG-style CNN on CIFAR-10 (SPEC.md, task `cnn`)."""

    name = "cnn"
    kind = "train"
    dataset = "cifar10"
    input_shape = (3, 32, 32)  # C, H, W
    num_classes = 10
    conv_channels = (50, 50, 100, 100)  # two blocks of two 3x3 convolutions
    kernel_size = 3
    padding = 1
    dense_units = 512
    dropout = (0.25, 0.25, 0.5)  # after block 1, after block 2, after the hidden dense layer
    init = "glorot-uniform weights, zero biases"
    flat_features = 100 * 8 * 8  # in C, H, W order
    # training
    epochs = 10
    batch_size = 64
    optimizer = "sgd"
    learning_rate = 0.01
    momentum = 0.9  # classic heavy-ball, not "unit gain"
    # stated in SPEC.md
    param_count = 3441592
    train_examples = 50000
    test_examples = 10000
    reference_accuracy = (0.76, 0.79)


class ResNet50(object):
    """ResNet-50 v1 feature extractor up to the global average pool (SPEC.md, task `resnet50`)."""

    name = "resnet50"
    kind = "inference"
    dataset = "images224"
    input_shape = (3, 224, 224)
    stem_channels = 64
    stem_kernel, stem_stride, stem_padding = 7, 2, 3  # the 7x7/2 convolution
    pool_kernel, pool_stride, pool_padding = 3, 2, 1  # the 3x3/2 max-pool after it
    # (blocks, bottleneck width, output channels, stride of the first block)
    stages = ((3, 64, 256, 1), (4, 128, 512, 2), (6, 256, 1024, 2), (3, 512, 2048, 2))
    features = 2048
    batch_norm_eps = 1e-5
    # v1: the stride of a down-sampling block sits on its first 1x1 convolution (Caffe, Keras,
    # Gluon resnet50_v1, Chainer). torchvision's "v1.5" puts it on the 3x3 instead; SPEC.md's
    # "4.1 G multiply-adds" is v1.5's figure, v1 needs 3.86 G (macs() computes it).
    stride_on_1x1 = True
    # inference protocol
    batch_size = 32
    num_batches = 40  # 1,280 images per timed pass
    warmup_passes = 1
    # stated in SPEC.md (PyTorch convention: conv weights without bias + batch-norm gamma/beta)
    param_count = 23508032
    buffer_count = 53120  # running mean and variance


class RNN(object):
    """GRU sentiment classifier on IMDB (SPEC.md, task `rnn`)."""

    name = "rnn"
    kind = "train"
    dataset = "imdb"
    vocab_size = 30000
    seq_len = 150
    embedding_dim = 125
    hidden_units = 100
    num_classes = 2
    # Keras' defaults, the 2018 benchmark's convention (ilkarman/DeepLearningFrameworks);
    # per gate, so gate reordering cannot change them
    embedding_init_range = 0.05  # uniform(-0.05, 0.05), Keras' default
    init = (
        "embedding uniform(-0.05, 0.05); per gate: input weights glorot-uniform, recurrent "
        "weights orthogonal, both biases zero; dense glorot-uniform, zero bias"
    )
    # Keras' IMDB conventions
    pad_index = 0
    start_index = 1
    oov_index = 2
    index_from = 3
    # training
    epochs = 3
    batch_size = 64
    optimizer = "adam"
    learning_rate = 0.001
    beta1 = 0.9
    beta2 = 0.999
    epsilon = 1e-8
    # stated in SPEC.md: cuDNN-style GRU with two bias vectors per gate (reset_after)
    param_count = 3818302
    param_count_one_bias = 3818002
    train_examples = 25000
    test_examples = 25000
    reference_accuracy = (0.85, 0.86)


class DenseNet121(object):
    """DenseNet-121 (ImageNet form) with a 14-label sigmoid head, trained data-parallel on
    ChestX-ray14 (SPEC.md, task `densenet`)."""

    name = "densenet"
    kind = "train"
    dataset = "chestxray14"
    data_parallel = True  # the one task with a device-count axis (`devices=N`)
    input_shape = (3, 224, 224)
    num_labels = 14  # multi-label: sigmoid outputs, binary cross-entropy
    # the classifier's columns: the 2018 benchmark's order (pandas get_dummies: alphabetical)
    labels = (
        "Atelectasis",
        "Cardiomegaly",
        "Consolidation",
        "Edema",
        "Effusion",
        "Emphysema",
        "Fibrosis",
        "Hernia",
        "Infiltration",
        "Mass",
        "Nodule",
        "Pleural_Thickening",
        "Pneumonia",
        "Pneumothorax",
    )
    stem_channels = 64
    stem_kernel, stem_stride, stem_padding = 7, 2, 3
    pool_kernel, pool_stride, pool_padding = 3, 2, 1
    growth_rate = 32
    block_layers = (6, 12, 24, 16)
    bottleneck_width = 4 * 32  # each layer: BN-ReLU-conv1x1 (4 x growth) -> BN-ReLU-conv3x3
    compression = 0.5  # a transition halves the channels (BN-ReLU-conv1x1, 2x2 average pool)
    features = 1024
    batch_norm_eps = 1e-5
    init = (
        "He-normal convolutions (fan-in); batch norm gamma 1, beta 0, mean 0, var 1; "
        "head glorot-uniform, zero bias"
    )
    # training (per device; the learning rate scales with the number of devices)
    epochs = 5
    batch_size = 64
    optimizer = "adam"
    learning_rate = 1e-4
    beta1 = 0.9
    beta2 = 0.999
    epsilon = 1e-8
    # data: ImageNet normalisation, images resized once, random crop + flip for training
    resize = 264
    mean = (0.485, 0.456, 0.406)
    std = (0.229, 0.224, 0.225)
    split = (0.7, 0.1, 0.2)  # by patient: train, validation, test
    # stated in SPEC.md (conv weights without bias + batch-norm gamma/beta; the head)
    feature_param_count = 6953856
    param_count = 6968206
    reference_auc = (0.80, 0.82)


TASKS = {spec.name: spec for spec in (CNN, ResNet50, RNN, DenseNet121)}


def conv_out(size, kernel, stride, pad):
    return (size + 2 * pad - kernel) // stride + 1


def cnn_layers():
    """(kind, in, out, kernel, output H*W) for every weighted CNN layer."""
    c, h, _ = CNN.input_shape
    layers = []
    for i, out in enumerate(CNN.conv_channels):
        layers.append(("conv", c, out, CNN.kernel_size, h * h))
        c = out
        if i % 2 == 1:
            h //= 2  # 2x2 max-pool after every second convolution
    layers.append(("dense", c * h * h, CNN.dense_units, 1, 1))
    layers.append(("dense", CNN.dense_units, CNN.num_classes, 1, 1))
    return layers


def resnet50_convs():
    """(in, out, kernel, stride, output H*W) for every convolution of ResNet-50 v1."""
    r = ResNet50
    size = conv_out(r.input_shape[1], r.stem_kernel, r.stem_stride, r.stem_padding)
    convs = [(3, r.stem_channels, r.stem_kernel, r.stem_stride, size * size)]
    size = conv_out(size, r.pool_kernel, r.pool_stride, r.pool_padding)  # the max-pool
    c = ResNet50.stem_channels
    for blocks, width, out, stride in ResNet50.stages:
        for b in range(blocks):
            s = stride if b == 0 else 1
            after = conv_out(size, 1, s, 0)
            s1, s3 = (s, 1) if ResNet50.stride_on_1x1 else (1, s)
            convs.append((c, width, 1, s1, (after if s1 > 1 else size) ** 2))
            convs.append((width, width, 3, s3, after * after))
            convs.append((width, out, 1, 1, after * after))
            if b == 0:
                convs.append((c, out, 1, s, after * after))  # projection shortcut
            c, size = out, after
    return convs


def densenet_convs(size=None):
    """(in, out, kernel, stride, output H*W) for every convolution of DenseNet-121, in order,
    at input size `size` (default SPEC's 224); the batch norm before each (and the final one)
    has `in` channels."""
    d = DenseNet121
    size = conv_out(size or d.input_shape[1], d.stem_kernel, d.stem_stride, d.stem_padding)
    convs = [(d.input_shape[0], d.stem_channels, d.stem_kernel, d.stem_stride, size * size)]
    size = conv_out(size, d.pool_kernel, d.pool_stride, d.pool_padding)
    c = d.stem_channels
    for i, layers in enumerate(d.block_layers):
        for _ in range(layers):
            convs.append((c, d.bottleneck_width, 1, 1, size * size))
            convs.append((d.bottleneck_width, d.growth_rate, 3, 1, size * size))
            c += d.growth_rate  # concatenated onto the block's input
        if i < len(d.block_layers) - 1:  # a transition: 1x1 convolution, then 2x2 pooling
            out = int(c * d.compression)
            convs.append((c, out, 1, 1, size * size))
            c, size = out, size // 2
    return convs


def densenet_batch_norms():
    """Channels of every batch norm of DenseNet-121, in order (the stem's, one before each
    convolution after the stem, the final one)."""
    convs = densenet_convs()
    return [DenseNet121.stem_channels] + [c for c, _, _, _, _ in convs[1:]] + [DenseNet121.features]


def param_count(task):
    """Trainable parameters, computed from the layer tables (SPEC's conventions)."""
    if task == "cnn":
        return sum(o * i * k * k + o for _, i, o, k, _ in cnn_layers())
    if task == "resnet50":
        # conv weights without bias, plus batch-norm gamma and beta after every convolution
        return sum(o * i * k * k + 2 * o for i, o, k, _, _ in resnet50_convs())
    if task == "rnn":
        e, h = RNN.embedding_dim, RNN.hidden_units
        gru = 3 * (e * h + h * h + 2 * h)
        return RNN.vocab_size * e + gru + h * RNN.num_classes + RNN.num_classes
    if task == "densenet":
        d = DenseNet121
        features = sum(o * i * k * k for i, o, k, _, _ in densenet_convs()) + sum(
            2 * c for c in densenet_batch_norms()
        )
        return features + d.features * d.num_labels + d.num_labels
    raise ValueError("unknown task %r; known: %s" % (task, ", ".join(sorted(TASKS))))


def macs_per_example(task, image_size=None):
    """Multiply-adds of one forward pass of one example (convolutions and dense layers);
    image_size: DenseNet's input side where not SPEC's (the tests' smaller crops)."""
    if task == "cnn":
        return sum(i * o * k * k * hw for _, i, o, k, hw in cnn_layers())
    if task == "resnet50":
        return sum(i * o * k * k * hw for i, o, k, _, hw in resnet50_convs())
    if task == "rnn":
        e, h = RNN.embedding_dim, RNN.hidden_units
        return RNN.seq_len * 3 * (e * h + h * h) + h * RNN.num_classes
    if task == "densenet":
        return sum(i * o * k * k * hw for i, o, k, _, hw in densenet_convs(image_size)) + (
            DenseNet121.features * DenseNet121.num_labels
        )
    raise ValueError("unknown task %r; known: %s" % (task, ", ".join(sorted(TASKS))))


def flops_per_example(task, training, image_size=None):
    """FLOPs (2 per multiply-add) per example; a training step counts as 3 forward passes."""
    return 2 * macs_per_example(task, image_size) * (3 if training else 1)
