"""The framework-neutral weight format: the Rosetta Stone's common text.

One `.npz` per task, float32, with canonical names and layouts. Every framework package
converts between this format and its own (`bench_<fw>/weights.py`): N converters, not N^2.

Layouts (the framework-specific transposes happen in the converters, nowhere else):

- convolution kernel ``<layer>.weight``: (out, in, kh, kw) -- O x I x H x W
- dense kernel ``<layer>.weight``: (in, out); biases ``<layer>.bias``: (out,)
- batch norm ``<bn>.gamma``, ``.beta``, ``.mean``, ``.var`` (running statistics): (channels,)
- embedding ``embedding.weight``: (vocab, dim)
- GRU (cuDNN form, reset_after, gates in the order r, z, n, each block `units` wide):
  ``gru.input_weight`` (in, 3*units), ``gru.recurrent_weight`` (units, 3*units),
  ``gru.input_bias`` (3*units,), ``gru.recurrent_bias`` (3*units,)
- the CNN's first dense layer reads the flattened features in C, H, W order.

Names, by task:

- cnn: conv1..conv4 (.weight, .bias), dense1, dense2 (.weight, .bias)
- resnet50: stem.conv.weight, stem.bn.*; stage<s>.block<b>.conv<i>.weight and .bn<i>.* for
  i = 1, 2, 3; stage<s>.block0.shortcut.conv.weight and .shortcut.bn.* (s = 1..4, b from 0)
- rnn: embedding.weight, gru.*, dense.weight, dense.bias
- densenet: stem.conv.weight, stem.bn.*; block<b>.layer<l>.bn1.*, .conv1.weight, .bn2.*,
  .conv2.weight (b = 1..4, l from 0; each layer's input is the block's input and every earlier
  layer's output, concatenated in that order); transition<t>.bn.*, .conv.weight (t = 1..3);
  final.bn.*; classifier.weight (1024, 14), classifier.bias
"""

import collections
import zipfile
import zlib

import numpy as np

from . import spec

BN_FIELDS = ("gamma", "beta", "mean", "var")
BUFFER_FIELDS = ("mean", "var")  # running statistics: not trainable, not in parameter counts


def _bn(names, prefix, channels):
    for field in BN_FIELDS:
        names[prefix + "." + field] = (channels,)


def layout(task):
    """OrderedDict name -> shape of the neutral weights of `task`."""
    names = collections.OrderedDict()
    if task == "cnn":
        cin = spec.CNN.input_shape[0]
        for i, out in enumerate(spec.CNN.conv_channels, 1):
            k = spec.CNN.kernel_size
            names["conv%d.weight" % i] = (out, cin, k, k)
            names["conv%d.bias" % i] = (out,)
            cin = out
        names["dense1.weight"] = (spec.CNN.flat_features, spec.CNN.dense_units)
        names["dense1.bias"] = (spec.CNN.dense_units,)
        names["dense2.weight"] = (spec.CNN.dense_units, spec.CNN.num_classes)
        names["dense2.bias"] = (spec.CNN.num_classes,)
    elif task == "resnet50":
        stem = spec.ResNet50.stem_channels
        names["stem.conv.weight"] = (stem, spec.ResNet50.input_shape[0], 7, 7)
        _bn(names, "stem.bn", stem)
        cin = stem
        for s, (blocks, width, out, _) in enumerate(spec.ResNet50.stages, 1):
            for b in range(blocks):
                prefix = "stage%d.block%d." % (s, b)
                for i, (o, c, k) in enumerate(
                    [(width, cin, 1), (width, width, 3), (out, width, 1)], 1
                ):
                    names[prefix + "conv%d.weight" % i] = (o, c, k, k)
                    _bn(names, prefix + "bn%d" % i, o)
                if b == 0:
                    names[prefix + "shortcut.conv.weight"] = (out, cin, 1, 1)
                    _bn(names, prefix + "shortcut.bn", out)
                cin = out
    elif task == "rnn":
        e, h = spec.RNN.embedding_dim, spec.RNN.hidden_units
        names["embedding.weight"] = (spec.RNN.vocab_size, e)
        names["gru.input_weight"] = (e, 3 * h)
        names["gru.recurrent_weight"] = (h, 3 * h)
        names["gru.input_bias"] = (3 * h,)
        names["gru.recurrent_bias"] = (3 * h,)
        names["dense.weight"] = (h, spec.RNN.num_classes)
        names["dense.bias"] = (spec.RNN.num_classes,)
    elif task == "densenet":
        _densenet_layout(names)
    else:
        raise ValueError("unknown task %r; known: %s" % (task, ", ".join(sorted(spec.TASKS))))
    return names


def _densenet_layout(names):
    d = spec.DenseNet121
    convs = iter(spec.densenet_convs())
    cin, out, k, _, _ = next(convs)
    names["stem.conv.weight"] = (out, cin, k, k)
    _bn(names, "stem.bn", out)
    for b, layers in enumerate(d.block_layers, 1):
        for layer in range(layers):
            prefix = "block%d.layer%d." % (b, layer)
            for i in (1, 2):
                cin, out, k, _, _ = next(convs)
                _bn(names, prefix + "bn%d" % i, cin)
                names[prefix + "conv%d.weight" % i] = (out, cin, k, k)
        if b < len(d.block_layers):
            cin, out, k, _, _ = next(convs)
            _bn(names, "transition%d.bn" % b, cin)
            names["transition%d.conv.weight" % b] = (out, cin, k, k)
    _bn(names, "final.bn", d.features)
    names["classifier.weight"] = (d.features, d.num_labels)
    names["classifier.bias"] = (d.num_labels,)


def is_buffer(name):
    return name.rsplit(".", 1)[-1] in BUFFER_FIELDS


def trainable_count(task):
    return sum(int(np.prod(shape)) for name, shape in layout(task).items() if not is_buffer(name))


def glorot_uniform(rng, shape, fan_in, fan_out):
    limit = np.sqrt(6.0 / (fan_in + fan_out))
    return rng.uniform(-limit, limit, shape)


def glorot_uniform_kernel(rng, shape):
    """A dense (in, out) or convolution (out, in, kh, kw) kernel, the fans over a
    convolution's receptive field (SPEC's CNN rule)."""
    receptive = int(np.prod(shape[2:]))
    fan_in, fan_out = (shape[0], shape[1]) if len(shape) == 2 else (shape[1], shape[0])
    return glorot_uniform(rng, shape, fan_in * receptive, fan_out * receptive)


def he_normal(rng, shape):
    """A convolution kernel (out, in, kh, kw), He-normal over its fan-in."""
    return rng.normal(0.0, np.sqrt(2.0 / int(np.prod(shape[1:]))), shape)


def orthogonal(rng, size):
    """A random orthogonal matrix (Saxe et al.; Keras' and PyTorch's rule): QR of a Gaussian
    matrix, the signs of R's diagonal moved into Q so that the draw is uniform."""
    q, r = np.linalg.qr(rng.normal(0.0, 1.0, (size, size)))
    return q * np.sign(np.diag(r))


def per_gate(draw, *args):
    """A GRU kernel (rows, 3 * units) drawn gate by gate (r, z, n): draw(*args) gives one
    gate's (rows, units) block."""
    return np.concatenate([draw(*args) for _ in range(3)], axis=1)


def random_weights(task, seed=0):
    """Deterministic random neutral weights whose activations stay in range: the equivalence
    check's (`verify`), not SPEC's initialisers (those are `initial_weights`).

    Every value is distinct and non-trivial (biases non-zero, batch-norm statistics away from
    0 and 1), so that a swapped, transposed or reordered tensor changes the outputs.
    """
    rng = np.random.RandomState(seed)
    params = collections.OrderedDict()
    for name, shape in layout(task).items():
        field = name.rsplit(".", 1)[-1]
        if field == "gamma":
            value = rng.uniform(0.5, 1.0, shape)
        elif field == "beta":
            value = rng.uniform(-0.1, 0.1, shape)
        elif field == "mean":
            value = rng.uniform(-0.1, 0.1, shape)
        elif field == "var":
            value = rng.uniform(0.5, 1.5, shape)
        elif field == "bias" or name.startswith("gru.") and "bias" in name:
            value = rng.uniform(-0.1, 0.1, shape)
        elif len(shape) == 4 and task in ("resnet50", "densenet"):
            value = he_normal(rng, shape)
        elif name == "embedding.weight":
            value = rng.uniform(-0.5, 0.5, shape)
        else:  # convolution, dense and GRU kernels: glorot-uniform
            value = glorot_uniform_kernel(rng, shape)
        params[name] = value.astype(np.float32)
    if task == "resnet50":  # keep the residual sum in range: damp each block's last BN
        for name in params:
            if name.endswith("bn3.gamma"):
                params[name] *= np.float32(0.2)
    return params


def initial_weights(task, seed):
    """SPEC's initial weights, drawn once by NumPy for every framework (`init=neutral`).

    CNN: glorot-uniform kernels (fan over the receptive field), zero biases. RNN: embedding
    uniform(+-spec.RNN.embedding_init_range); per gate (r, z, n): glorot-uniform input kernel,
    orthogonal recurrent kernel, zero biases; dense glorot-uniform, zero bias. ResNet-50 and
    DenseNet-121: He-normal convolutions (fan-in over the kernel), batch norm gamma 1, beta 0,
    mean 0, var 1; DenseNet's head glorot-uniform, zero bias. One RandomState(seed) in the
    neutral layout's order: same seed, same weights.
    """
    rng = np.random.RandomState(seed)
    params = collections.OrderedDict()
    for name, shape in layout(task).items():
        field = name.rsplit(".", 1)[-1]
        if field in ("gamma", "var"):
            value = np.ones(shape)
        elif field in ("beta", "mean") or "bias" in field:
            value = np.zeros(shape)
        elif len(shape) == 4 and task in ("resnet50", "densenet"):
            value = he_normal(rng, shape)
        elif name == "embedding.weight":
            limit = spec.RNN.embedding_init_range
            value = rng.uniform(-limit, limit, shape)
        elif name == "gru.input_weight":
            value = per_gate(glorot_uniform_kernel, rng, (shape[0], spec.RNN.hidden_units))
        elif name == "gru.recurrent_weight":
            value = per_gate(orthogonal, rng, spec.RNN.hidden_units)
        else:  # convolution and dense kernels
            value = glorot_uniform_kernel(rng, shape)
        params[name] = np.asarray(value, np.float32)
    return params


def check(task, params):
    """Raise ValueError unless `params` has exactly the names, shapes and dtype of `task`."""
    expected = layout(task)
    missing = [n for n in expected if n not in params]
    extra = [n for n in params if n not in expected]
    if missing or extra:
        raise ValueError("%s weights: missing %s, unexpected %s" % (task, missing[:5], extra[:5]))
    for name, shape in expected.items():
        if tuple(params[name].shape) != tuple(shape):
            raise ValueError(
                "%s weights: %s has shape %s, expected %s"
                % (task, name, tuple(params[name].shape), tuple(shape))
            )


# what a starting-weights file (init=file) may leave out, to be drawn with SPEC's initialisers:
# the task's output layer (weights converted from ImageNet have another head, or none)
HEADS = {"cnn": "dense2.", "rnn": "dense.", "densenet": "classifier."}


# what reading a zip member can raise besides ValueError: a damaged or foreign archive
_UNREADABLE = (
    ValueError,
    EOFError,
    OSError,
    zipfile.BadZipFile,
    zlib.error,
    RuntimeError,
    NotImplementedError,
)


def _member_header(archive, member, path):
    """(shape, dtype) an .npz member's .npy header declares, read without its data."""
    try:
        with archive.open(member) as stream:
            version = np.lib.format.read_magic(stream)
            if version == (1, 0):
                shape, _, dtype = np.lib.format.read_array_header_1_0(stream)
            elif version == (2, 0):
                shape, _, dtype = np.lib.format.read_array_header_2_0(stream)
            else:
                raise ValueError("an .npy format version %d.%d" % version)
    except _UNREADABLE as exc:
        raise ValueError(
            "%s: its member %s is not an .npy array (%s)" % (path, member, exc)
        ) from None
    return tuple(shape), dtype


def _member_array(archive, member, path):
    try:
        with archive.open(member) as stream:
            return np.lib.format.read_array(stream, allow_pickle=False)
    except _UNREADABLE as exc:
        raise ValueError("%s: its member %s cannot be read (%s)" % (path, member, exc)) from None


def file_weights(path, task):
    """init=file: (OrderedDict name -> array, names missing) of an .npz in the neutral layout
    of `task`, checked in order of cost: the names (the archive's directory), then the shapes
    and dtypes the members' headers declare, then each known member's values, read one at a
    time, which must be finite. Nothing else in the file is read. A missing output head
    (HEADS) is allowed; anything else missing, unknown, misshapen, not floating point or not
    finite is a ValueError naming it."""
    try:
        archive = zipfile.ZipFile(path)
    except _UNREADABLE as exc:
        raise ValueError(
            "%s is not a weights .npz (%s): init=file takes an .npz of arrays "
            "in the neutral layout, as bench_shared.weights.save writes it" % (path, exc)
        ) from None
    with archive:
        members = collections.OrderedDict(
            (member[: -len(".npy")] if member.endswith(".npy") else member, member)
            for member in archive.namelist()
        )
        expected = layout(task)
        extra = [name for name in members if name not in expected]
        if extra:
            raise ValueError(
                "%s: %d weights are not in %s's neutral layout, e.g. %s (see "
                "bench_shared.weights.layout)" % (path, len(extra), task, extra[:3])
            )
        head = HEADS.get(task)
        missing = [name for name in expected if name not in members]
        lacking = [name for name in missing if not (head and name.startswith(head))]
        if lacking:
            raise ValueError(
                "%s lacks %d of %s's weights, e.g. %s; only the output layer (%s*) "
                "may be left out, to be drawn"
                % (path, len(lacking), task, lacking[:3], head or "none for %s" % task)
            )
        for name, member in members.items():
            shape, dtype = _member_header(archive, member, path)
            if shape != tuple(expected[name]):
                raise ValueError(
                    "%s: %s has shape %s, %s expects %s%s"
                    % (
                        path,
                        name,
                        shape,
                        task,
                        tuple(expected[name]),
                        " (another head: leave %s* out to have it drawn)" % head
                        if head and name.startswith(head)
                        else "",
                    )
                )
            if dtype.kind != "f":
                raise ValueError(
                    "%s: %s holds %s values; weights are floating point (float32)"
                    % (path, name, dtype)
                )
        given = collections.OrderedDict()
        for name, member in members.items():
            value = _member_array(archive, member, path)
            bad = value.size - int(np.count_nonzero(np.isfinite(value)))
            if bad:
                raise ValueError(
                    "%s: %s has %d non-finite values (NaN or infinity) among %d; "
                    "initial weights must be finite" % (path, name, bad, value.size)
                )
            given[name] = value
    return given, missing


def starting_weights(path, task, seed):
    """init=file: (params, names drawn) from an .npz in the neutral layout (file_weights);
    a missing output head (HEADS) is drawn as initial_weights(task, seed) draws it."""
    given, missing = file_weights(path, task)
    expected = layout(task)
    drawn = initial_weights(task, seed) if missing else {}
    params = collections.OrderedDict(
        (name, given[name] if name in given else drawn[name]) for name in expected
    )
    check(task, params)
    return params, missing


def save(path, task, params):
    check(task, params)
    np.savez(path, **{name: np.asarray(value, np.float32) for name, value in params.items()})


def load(path, task):
    with np.load(path) as data:
        params = collections.OrderedDict(
            (name, data[name]) for name in layout(task) if name in data.files
        )
        extra = [name for name in data.files if name not in params]
    if extra:
        raise ValueError("%s: unexpected weights %s" % (path, extra[:5]))
    check(task, params)
    return params
