"""DenseNet-121 trained data-parallel the Module way: its own mx.sym graph (Convolution without
bias, BatchNorm, Concat, Pooling), a binary cross-entropy head written from the logits with
MakeLoss, Adam with the learning rate scaled by the device count, and
mx.mod.Module(context=[...]): the Module splits each batch over the run's contexts and its
kvstore sums their gradients (bench_mxnet.module.loop)."""

import mxnet as mx

from bench_mxnet import initialisers, runtime, weights
from bench_mxnet.module import loop
from bench_shared.spec import DenseNet121 as D


def bn_relu(x, name):
    # fix_gamma=False: MXNet's BatchNorm symbol fixes gamma at 1 unless told otherwise;
    # momentum 0.9 in MXNet's convention (running = 0.9 running + 0.1 batch): PyTorch's 0.1
    x = mx.sym.BatchNorm(x, fix_gamma=False, eps=D.batch_norm_eps, momentum=0.9, name=name)
    return mx.sym.Activation(x, act_type="relu")


def conv(x, channels, kernel, name, stride=1):
    return mx.sym.Convolution(
        x,
        num_filter=channels,
        kernel=(kernel, kernel),
        stride=(stride, stride),
        pad=(kernel // 2, kernel // 2),
        no_bias=True,
        name=name,
    )


def dense_layer(x, prefix):
    """BN-ReLU-conv1x1 (4 x growth) -> BN-ReLU-conv3x3 (growth): the block's new features."""
    x = conv(bn_relu(x, prefix + "bn1"), D.bottleneck_width, 1, prefix + "conv1")
    return conv(bn_relu(x, prefix + "bn2"), D.growth_rate, 3, prefix + "conv2")


def dense_block(x, layers, prefix):
    features = [x]  # the block's input, then every layer's output, in that order
    for i in range(layers):
        inputs = mx.sym.concat(*features, dim=1) if len(features) > 1 else x
        features.append(dense_layer(inputs, "%slayer%d_" % (prefix, i)))
    return mx.sym.concat(*features, dim=1)


def logits_symbol():
    """Symbol names follow the neutral ones: block1_layer0_bn1_gamma is block1.layer0.bn1.gamma
    (running statistics: the aux states _moving_mean, _moving_var)."""
    x = conv(mx.sym.var("data"), D.stem_channels, D.stem_kernel, "stem_conv", D.stem_stride)
    x = bn_relu(x, "stem_bn")
    x = mx.sym.Pooling(
        x,
        pool_type="max",
        kernel=(D.pool_kernel,) * 2,
        stride=(D.pool_stride,) * 2,
        pad=(D.pool_padding,) * 2,
    )
    c = D.stem_channels
    for b, layers in enumerate(D.block_layers, 1):
        x = dense_block(x, layers, "block%d_" % b)
        c += layers * D.growth_rate
        if b < len(D.block_layers):
            c = int(c * D.compression)
            x = conv(bn_relu(x, "transition%d_bn" % b), c, 1, "transition%d_conv" % b)
            x = mx.sym.Pooling(x, pool_type="avg", kernel=(2, 2), stride=(2, 2))
    x = mx.sym.Pooling(bn_relu(x, "final_bn"), pool_type="avg", global_pool=True, kernel=(1, 1))
    # SPEC's head: glorot-uniform (the variable's own initialiser), zero bias
    weight = mx.sym.var("classifier_weight", init=initialisers.GLOROT_UNIFORM)
    return mx.sym.FullyConnected(
        mx.sym.flatten(x), weight=weight, num_hidden=D.num_labels, name="classifier"
    )


def head(logits):
    """Training head: each example's binary cross-entropy, averaged over the 14 labels, from
    the logits in the overflow-safe form max(z, 0) - z y + log(1 + exp(-|z|)); MakeLoss
    divides its gradient by the batch on each context (LogisticRegressionOutput, the built-in
    sigmoid head, leaves the batch to the optimizer's rescale_grad, fixed at bind time). The
    logits themselves are the second output, which predict() returns."""
    label = mx.sym.var("label")
    bce = mx.sym.relu(logits) - logits * label + mx.sym.log1p(mx.sym.exp(-mx.sym.abs(logits)))
    return mx.sym.Group(
        [
            mx.sym.MakeLoss(mx.sym.mean(bce, axis=1), normalization="batch", name="bce"),
            mx.sym.BlockGrad(logits, name="logits"),
        ]
    )


def summed_loss(outputs, label):
    return mx.nd.sum(outputs[0])  # MakeLoss's output: each example's loss


def build_model(run):
    contexts = runtime.contexts()
    adam = run["task"]["optimizer"]
    side = run["task"]["image_size"]
    # bound for one example per context (DenseNet at 224 x 224 and batch 64 is gigabytes):
    # the first batch reshapes the executors to its shape, once (Module.forward does)
    return loop.Model(
        head(logits_symbol()),
        (D.input_shape[0], side, side),
        len(contexts),
        initialisers.HE_NORMAL,  # convolutions; batch norm 1, 0, 0, 1 by name
        "adam",
        # SPEC: Adam at 1e-4 per device, scaled linearly with the global batch
        {
            "learning_rate": adam["lr"] * len(contexts),
            "beta1": adam["beta1"],
            "beta2": adam["beta2"],
            "epsilon": adam["eps"],
        },
        output=1,
        contexts=contexts,
        label_name="label",
        label_shape=(D.num_labels,),
        loss=summed_loss,
    )


def slots(model):
    return weights.module_slots("densenet")


train_epoch = loop.train_epoch
predict = loop.predict
