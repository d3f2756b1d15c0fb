"""The weight protocol: where each neutral tensor lives in a framework's model.

Two declarations, one per side, and everything else is done here, once, for every framework:

- a task module's ``slots(model)``: an ordered mapping from each neutral name
  (bench_shared.weights.layout) to a ``Slot`` -- the key of the native tensor that holds it,
  the conversion each way (a transpose, a gate order, a reshape) and, where several neutral
  tensors share one native tensor (Keras' stacked GRU biases, MXNet's packed GRU vector), the
  ``part`` of it that is theirs; ``Slot.split`` for one neutral tensor spread over several
  native ones (Chainer's per-gate GRU matrices);
- a framework package's ``tensors(model)``: a ``Tensors`` view of every native tensor that the
  neutral weights must fill (parameters and batch-norm running statistics, nothing SPEC's
  model lacks), keyed by the framework's own names, with ``read(key)`` -> numpy array and
  ``write(key, array)`` (and ``commit()`` where writes are buffered).

``load_weights`` and ``export_weights`` convert through the slots and check completeness:
every neutral tensor has exactly one slot, every native tensor is filled, none (and no element
of a shared one) twice, and every shape fits. A converter that leaves a tensor out or uses one
twice fails the same way in every framework.
"""

import collections

import numpy as np

from . import spec
from . import weights as neutral


def identity(value):
    return value


def transpose(value):
    """(in, out) <-> (out, in): dense and recurrent kernels in most frameworks."""
    return np.ascontiguousarray(np.transpose(value))


def conv_oihw_to_hwio(kernel):
    """Convolution kernels: neutral O x I x H x W -> H x W x I x O (Keras, Flax)."""
    return np.ascontiguousarray(kernel.transpose(2, 3, 1, 0))


def conv_hwio_to_oihw(kernel):
    return np.ascontiguousarray(kernel.transpose(3, 2, 0, 1))


def swap_first_two_gates(a):
    """GRU gates r, z, n <-> z, r, n along the last axis (Keras' order; its own inverse)."""
    r, z, n = np.split(a, 3, axis=-1)
    return np.concatenate([z, r, n], axis=-1)


def _cnn_flatten_rows(kernel, order_from, order_to):
    c, h, w = spec.CNN.conv_channels[-1], spec.CNN.input_shape[1] // 4, spec.CNN.input_shape[2] // 4
    dims = {"c": c, "h": h, "w": w}
    shaped = kernel.reshape([dims[d] for d in order_from] + [kernel.shape[1]])
    perm = [order_from.index(d) for d in order_to] + [3]
    return np.ascontiguousarray(shaped.transpose(perm).reshape(kernel.shape))


def cnn_flatten_chw_to_hwc(kernel):
    """The CNN's first dense kernel, whose rows follow the flattened last feature map: neutral
    C, H, W row order (an NCHW flatten) -> H, W, C (an NHWC flatten: Keras, Flax, Paddle's
    data_format=NHWC)."""
    return _cnn_flatten_rows(kernel, "chw", "hwc")


def cnn_flatten_hwc_to_chw(kernel):
    return _cnn_flatten_rows(kernel, "hwc", "chw")


class Slot(object):
    """One neutral tensor's place in a framework model.

    keys: the native tensor(s) it fills; parts: None (the whole tensor) or an index into it,
    per key; to_native: neutral value -> native array (a list of them for a split slot);
    from_native: native array (list) -> neutral value."""

    def __init__(self, key, to_native=None, from_native=None, part=None):
        self.keys, self.parts = (key,), (part,)
        self.split = False
        self.to_native = to_native or identity
        self.from_native = from_native or identity

    @classmethod
    def whole(cls, key, transposed=False):
        """A neutral tensor held whole by `key`, as a (out, in) kernel where `transposed` (the
        neutral format's dense and recurrent kernels are (in, out)), else in the same layout."""
        return cls(key, transpose, transpose) if transposed else cls(key)

    @classmethod
    def split_over(cls, keys, to_native, from_native):
        """One neutral tensor over several native tensors, one array each."""
        slot = cls(None, to_native, from_native)
        slot.keys, slot.parts, slot.split = tuple(keys), (None,) * len(keys), True
        return slot

    def native_values(self, value):
        values = self.to_native(np.asarray(value, np.float32))
        return list(values) if self.split else [values]

    def neutral_value(self, arrays):
        return self.from_native(list(arrays) if self.split else arrays[0])


class Tensors(object):
    """The native side: override keys(), read(key) and write(key, array)."""

    def keys(self):
        raise NotImplementedError

    def read(self, key):
        raise NotImplementedError

    def write(self, key, value):
        raise NotImplementedError

    def commit(self):
        """Apply buffered writes (a framework that sets all parameters at once)."""


class DictTensors(Tensors):
    """Native tensors in an ordered mapping key -> tensor, with the framework's get/set."""

    def __init__(self, tensors, get, set):
        self.tensors, self.get, self.set = tensors, get, set

    def keys(self):
        return list(self.tensors)

    def read(self, key):
        return np.asarray(self.get(self.tensors[key]))

    def write(self, key, value):
        self.set(self.tensors[key], value)


def _check_names(task, slots, framework):
    expected = list(neutral.layout(task))
    missing = [n for n in expected if n not in slots]
    extra = [n for n in slots if n not in expected]
    if missing or extra:
        raise ValueError(
            "%s %s slots: neutral tensors without a slot %s, slots for unknown "
            "names %s" % (framework, task, missing[:5], extra[:5])
        )
    return expected


def load_weights(task, slots, tensors, params, framework="the framework"):
    """Copy neutral `params` into the native tensors; every tensor filled exactly once."""
    neutral.check(task, params)
    names = _check_names(task, slots, framework)
    native = tensors.keys()
    known = set(native)
    filled = collections.OrderedDict()  # key -> None (whole) or a mask of the parts filled
    staged = {}  # key -> the native array its parts are assembled in
    for name in names:
        slot = slots[name]
        values = slot.native_values(params[name])
        if len(values) != len(slot.keys):
            raise ValueError(
                "%s: %d native values for %d tensors" % (name, len(values), len(slot.keys))
            )
        for key, part, value in zip(slot.keys, slot.parts, values):
            if key not in known:
                raise ValueError(
                    "%s %s: slot %s names %r, which the model does not have"
                    % (framework, task, name, key)
                )
            value = np.asarray(value, np.float32)
            if part is None:
                if key in filled:
                    raise ValueError(
                        "%s %s: %r is filled twice (again by %s)" % (framework, task, key, name)
                    )
                shape = tensors.read(key).shape
                if tuple(value.shape) != tuple(shape):
                    raise ValueError(
                        "%s %s: %s converts to shape %s, %r holds %s"
                        % (framework, task, name, value.shape, key, shape)
                    )
                tensors.write(key, np.ascontiguousarray(value))
                filled[key] = None
                continue
            if key not in staged:
                if key in filled:
                    raise ValueError(
                        "%s %s: %r is filled whole and in parts" % (framework, task, key)
                    )
                staged[key] = np.array(tensors.read(key), np.float32)
                filled[key] = np.zeros(staged[key].shape, bool)
            target, mask = staged[key][part], filled[key][part]
            if np.shape(target) != value.shape:
                raise ValueError(
                    "%s %s: %s converts to shape %s, its part of %r holds %s"
                    % (framework, task, name, value.shape, key, np.shape(target))
                )
            if np.any(mask):
                raise ValueError(
                    "%s %s: part of %r is filled twice (again by %s)" % (framework, task, key, name)
                )
            staged[key][part] = value
            filled[key][part] = True
    for key, array in staged.items():
        if not filled[key].all():
            raise ValueError(
                "%s %s: the neutral weights fill only part of %r" % (framework, task, key)
            )
        tensors.write(key, array)
    tensors.commit()
    unfilled = [key for key in native if key not in filled]
    if unfilled:
        raise ValueError(
            "%s %s: the neutral weights do not fill %s" % (framework, task, unfilled[:5])
        )


def export_weights(task, slots, tensors, framework="the framework"):
    """The model's weights as neutral float32 arrays, in the neutral layout's order."""
    names = _check_names(task, slots, framework)
    layout = neutral.layout(task)
    params = collections.OrderedDict()
    for name in names:
        slot = slots[name]
        arrays = []
        for key, part in zip(slot.keys, slot.parts):
            array = tensors.read(key)
            arrays.append(array if part is None else array[part])
        value = np.ascontiguousarray(slot.neutral_value(arrays), np.float32)
        if tuple(value.shape) != tuple(layout[name]):
            raise ValueError(
                "%s %s: %s exports with shape %s, the neutral format's is %s"
                % (framework, task, name, value.shape, layout[name])
            )
        params[name] = value
    return params


def load_into(fw, task_module, task, model, params):
    """The worker's and tests' entry: a framework package `fw` and its task module."""
    load_weights(task, task_module.slots(model), fw.tensors(model), params, framework=fw.__name__)


def export_from(fw, task_module, task, model):
    return export_weights(task, task_module.slots(model), fw.tensors(model), framework=fw.__name__)
