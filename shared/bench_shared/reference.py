"""NumPy reference forward passes of the models, from neutral weights (weights.py).

Written for clarity first: each layer is one line of textbook maths, computed in float64 so
that the reference is the "truth" a framework's float32 result is compared with. Convolution
is im2col through a strided view (numpy 1.19 has no sliding_window_view), fast enough for a
batch of 4 ResNet-50 images in a few seconds.
"""

import numpy as np
from numpy.lib.stride_tricks import as_strided

from . import spec


def conv2d(x, w, b=None, stride=1, pad=0):
    """x (N, C, H, W), w (O, C, kh, kw) -> (N, O, H', W'), cross-correlation as every framework."""
    if pad:
        x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, c, h, wd = x.shape
    _, _, kh, kw = w.shape
    oh, ow = (h - kh) // stride + 1, (wd - kw) // stride + 1
    s = x.strides
    windows = as_strided(
        x,
        shape=(n, c, kh, kw, oh, ow),
        strides=(s[0], s[1], s[2], s[3], s[2] * stride, s[3] * stride),
    )
    out = np.tensordot(windows, w, axes=([1, 2, 3], [1, 2, 3]))  # (N, oh, ow, O)
    out = out.transpose(0, 3, 1, 2)
    return out if b is None else out + b[:, None, None]


def pool_windows(x, size, stride):
    """(N, C, H', W', size, size): every pooling window of x, a strided view (no copy)."""
    n, c, h, w = x.shape
    oh, ow = (h - size) // stride + 1, (w - size) // stride + 1
    s = x.strides
    return as_strided(
        x,
        shape=(n, c, oh, ow, size, size),
        strides=(s[0], s[1], s[2] * stride, s[3] * stride, s[2], s[3]),
    )


def max_pool(x, size, stride, pad=0):
    if pad:
        x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)), constant_values=-np.inf)
    return pool_windows(x, size, stride).max(axis=(4, 5))


def avg_pool(x, size, stride):
    return pool_windows(x, size, stride).mean(axis=(4, 5))


def relu(x):
    return np.maximum(x, 0.0)


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def batch_norm(x, p, prefix, eps=spec.ResNet50.batch_norm_eps):
    """Inference batch norm with the running statistics."""
    scale = p[prefix + ".gamma"] / np.sqrt(p[prefix + ".var"] + eps)
    shift = p[prefix + ".beta"] - p[prefix + ".mean"] * scale
    return x * scale[:, None, None] + shift[:, None, None]


def _float64(params):
    return {name: np.asarray(value, np.float64) for name, value in params.items()}


def cnn_forward(params, x):
    """Logits (N, 10) of the SPEC CNN in evaluation mode (dropout off)."""
    p = _float64(params)
    h = np.asarray(x, np.float64)
    h = relu(conv2d(h, p["conv1.weight"], p["conv1.bias"], pad=spec.CNN.padding))
    h = relu(max_pool(conv2d(h, p["conv2.weight"], p["conv2.bias"], pad=spec.CNN.padding), 2, 2))
    h = relu(conv2d(h, p["conv3.weight"], p["conv3.bias"], pad=spec.CNN.padding))
    h = relu(max_pool(conv2d(h, p["conv4.weight"], p["conv4.bias"], pad=spec.CNN.padding), 2, 2))
    h = h.reshape(len(h), -1)  # C, H, W order
    h = relu(h @ p["dense1.weight"] + p["dense1.bias"])
    return h @ p["dense2.weight"] + p["dense2.bias"]


def _bottleneck(h, p, prefix, stride):
    s1, s3 = (stride, 1) if spec.ResNet50.stride_on_1x1 else (1, stride)
    out = relu(batch_norm(conv2d(h, p[prefix + "conv1.weight"], stride=s1), p, prefix + "bn1"))
    out = relu(
        batch_norm(conv2d(out, p[prefix + "conv2.weight"], stride=s3, pad=1), p, prefix + "bn2")
    )
    out = batch_norm(conv2d(out, p[prefix + "conv3.weight"]), p, prefix + "bn3")
    if prefix + "shortcut.conv.weight" in p:
        h = batch_norm(
            conv2d(h, p[prefix + "shortcut.conv.weight"], stride=stride), p, prefix + "shortcut.bn"
        )
    return relu(out + h)


def resnet50_forward(params, x):
    """Features (N, 2048) of ResNet-50 v1 up to the global average pool, inference mode."""
    p = _float64(params)
    h = np.asarray(x, np.float64)
    r = spec.ResNet50
    h = conv2d(h, p["stem.conv.weight"], stride=r.stem_stride, pad=r.stem_padding)
    h = relu(batch_norm(h, p, "stem.bn"))
    h = max_pool(h, r.pool_kernel, r.pool_stride, pad=r.pool_padding)
    for s, (blocks, _, _, stride) in enumerate(spec.ResNet50.stages, 1):
        for b in range(blocks):
            h = _bottleneck(h, p, "stage%d.block%d." % (s, b), stride if b == 0 else 1)
    return h.mean(axis=(2, 3))


def densenet_forward(params, x):
    """Logits (N, 14) of DenseNet-121 in evaluation mode (sigmoid gives each label's
    probability). Any input of at least 32 x 32 (five halvings); SPEC's is 224 x 224."""
    p = _float64(params)
    d = spec.DenseNet121

    def bn_relu(h, prefix):
        return relu(batch_norm(h, p, prefix, d.batch_norm_eps))

    h = conv2d(
        np.asarray(x, np.float64), p["stem.conv.weight"], stride=d.stem_stride, pad=d.stem_padding
    )
    h = max_pool(bn_relu(h, "stem.bn"), d.pool_kernel, d.pool_stride, pad=d.pool_padding)
    for b, layers in enumerate(d.block_layers, 1):
        for layer in range(layers):
            q = "block%d.layer%d." % (b, layer)
            new = conv2d(bn_relu(h, q + "bn1"), p[q + "conv1.weight"])
            new = conv2d(bn_relu(new, q + "bn2"), p[q + "conv2.weight"], pad=1)
            h = np.concatenate([h, new], axis=1)  # every earlier output, then this layer's
        if b < len(d.block_layers):
            t = "transition%d." % b
            h = avg_pool(conv2d(bn_relu(h, t + "bn"), p[t + "conv.weight"]), 2, 2)
    features = bn_relu(h, "final.bn").mean(axis=(2, 3))
    return features @ p["classifier.weight"] + p["classifier.bias"]


def gru_cell(x_proj, h, p):
    """One cuDNN-style (reset_after) GRU step; x_proj = x @ W_i + b_i, gates r, z, n."""
    units = h.shape[1]
    h_proj = h @ p["gru.recurrent_weight"] + p["gru.recurrent_bias"]
    r = sigmoid(x_proj[:, :units] + h_proj[:, :units])
    z = sigmoid(x_proj[:, units : 2 * units] + h_proj[:, units : 2 * units])
    n = np.tanh(x_proj[:, 2 * units :] + r * h_proj[:, 2 * units :])  # reset *after* the matmul
    return (1.0 - z) * n + z * h


def rnn_forward(params, tokens):
    """Logits (N, 2): embedding, GRU from a zero state, last time step, dense."""
    p = _float64(params)
    x = p["embedding.weight"][np.asarray(tokens)]  # (N, T, E)
    x_proj = x @ p["gru.input_weight"] + p["gru.input_bias"]  # every step's input projection
    h = np.zeros((len(x), spec.RNN.hidden_units))
    for t in range(x.shape[1]):
        h = gru_cell(x_proj[:, t], h, p)
    return h @ p["dense.weight"] + p["dense.bias"]


FORWARD = {
    "cnn": cnn_forward,
    "resnet50": resnet50_forward,
    "rnn": rnn_forward,
    "densenet": densenet_forward,
}


def forward(task, params, inputs):
    return FORWARD[task](params, inputs)


def fixed_inputs(task, batch=4, seed=1, image_size=None):
    """The fixed input batch of the equivalence check (`image_size`: DenseNet's side, e.g.
    a small one for tests; default SPEC's)."""
    rng = np.random.RandomState(seed)
    if task == "densenet":
        c, h, w = spec.DenseNet121.input_shape
        h, w = (image_size, image_size) if image_size else (h, w)
        return rng.normal(0, 1, (batch, c, h, w)).astype(np.float32)
    if task == "cnn":
        return rng.uniform(0, 1, (batch,) + spec.CNN.input_shape).astype(np.float32)
    if task == "resnet50":
        return rng.normal(0, 1, (batch,) + spec.ResNet50.input_shape).astype(np.float32)
    if task == "rnn":
        tokens = rng.randint(3, spec.RNN.vocab_size, (batch, spec.RNN.seq_len))
        tokens[0, :40] = spec.RNN.pad_index  # a front-padded review
        tokens[0, 40] = spec.RNN.start_index
        return tokens.astype(np.int32)
    raise ValueError("unknown task %r" % task)


def distinct_images(batch, seed, size=None):
    """ResNet-50 inputs whose features differ from image to image: Gaussian noise of a
    different grain (blurred over 0-3 pixels), contrast and colour per image. Random weights
    map plain noise images to features that differ by about 4 % between images, less than
    int8's error; these differ by about 25 %, so a read-out's arg-max can follow the image
    (bench_shared.calibration's top-1 agreement)."""
    rng = np.random.RandomState(seed)
    c, h, w = spec.ResNet50.input_shape
    h = w = size or h
    images = np.empty((batch, c, h, w), np.float32)
    offsets = np.arange(h)[:, None] - np.arange(h)[None, :]
    for i in range(batch):
        noise = rng.normal(0, 1, (c, h, w))
        sigma = rng.uniform(0, 3)
        blur = np.exp(-0.5 * (offsets / max(sigma, 1e-3)) ** 2)
        blur /= blur.sum(axis=1, keepdims=True)  # a separable Gaussian blur, as matrices
        x = np.matmul(np.matmul(blur, noise), blur.T)
        images[i] = x / x.std() * rng.uniform(0.5, 1.5) + rng.uniform(-1, 1, (c, 1, 1))
    return images


def relative_error(output, reference):
    """max |output - reference| relative to the output scale, max |reference|."""
    output, reference = np.asarray(output, np.float64), np.asarray(reference, np.float64)
    if output.shape != reference.shape:
        raise ValueError("output shape %s != reference shape %s" % (output.shape, reference.shape))
    return float(np.abs(output - reference).max() / max(np.abs(reference).max(), 1e-30))
