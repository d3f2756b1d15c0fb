"""The NumPy reference checked against itself: naive loops and finite differences."""

import numpy as np
import pytest

from bench_shared import reference, reference_train, spec, weights


def naive_conv2d(x, w, b, stride, pad):
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, _, h, wd = x.shape
    o, _, kh, kw = w.shape
    oh, ow = (h - kh) // stride + 1, (wd - kw) // stride + 1
    out = np.zeros((n, o, oh, ow))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, :, i * stride : i * stride + kh, j * stride : j * stride + kw]
            out[:, :, i, j] = np.tensordot(patch, w, axes=([1, 2, 3], [1, 2, 3])) + b
    return out


@pytest.mark.parametrize("stride,pad,k", [(1, 1, 3), (2, 3, 7), (2, 0, 1)])
def test_conv2d_matches_a_naive_loop(stride, pad, k):
    rng = np.random.RandomState(0)
    x, w, b = rng.randn(2, 3, 9, 9), rng.randn(4, 3, k, k), rng.randn(4)
    np.testing.assert_allclose(
        reference.conv2d(x, w, b, stride, pad),
        naive_conv2d(x, w, b, stride, pad),
        rtol=1e-12,
        atol=1e-12,
    )


def test_max_pool_matches_a_naive_loop():
    x = np.random.RandomState(0).randn(2, 3, 7, 7)
    out = reference.max_pool(x, 3, 2, pad=1)
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
    for i in range(out.shape[2]):
        for j in range(out.shape[3]):
            assert np.array_equal(
                out[:, :, i, j], xp[:, :, 2 * i : 2 * i + 3, 2 * j : 2 * j + 3].max(axis=(2, 3))
            )


@pytest.mark.parametrize("task", sorted(spec.TASKS))
def test_neutral_layout_counts_equal_spec(task):
    assert weights.trainable_count(task) == spec.TASKS[task].param_count


def test_resnet50_buffer_count():
    buffers = sum(
        int(np.prod(s)) for n, s in weights.layout("resnet50").items() if weights.is_buffer(n)
    )
    assert buffers == spec.ResNet50.buffer_count


def test_random_weights_are_deterministic_and_round_trip(tmp_path):
    a, b = weights.random_weights("cnn", 0), weights.random_weights("cnn", 0)
    assert all(np.array_equal(a[k], b[k]) and a[k].dtype == np.float32 for k in a)
    assert not np.array_equal(a["conv1.weight"], weights.random_weights("cnn", 1)["conv1.weight"])
    weights.save(tmp_path / "cnn.npz", "cnn", a)
    loaded = weights.load(tmp_path / "cnn.npz", "cnn")
    assert list(loaded) == list(a) and all(np.array_equal(a[k], loaded[k]) for k in a)


def test_wrong_weights_are_rejected(tmp_path):
    params = weights.random_weights("rnn", 0)
    params["dense.weight"] = params["dense.weight"].T
    with pytest.raises(ValueError, match=r"dense.weight has shape \(2, 100\), expected"):
        weights.check("rnn", params)
    del params["dense.weight"]
    with pytest.raises(ValueError, match="missing"):
        weights.check("rnn", params)
    np.savez(tmp_path / "x.npz", extra=np.zeros(1), **weights.random_weights("rnn", 0))
    with pytest.raises(ValueError, match="unexpected weights"):
        weights.load(tmp_path / "x.npz", "rnn")


@pytest.mark.parametrize("task,shape", [("cnn", (4, 10)), ("rnn", (4, 2))])
def test_reference_shapes(task, shape):  # ResNet-50: against PyTorch in the torch session
    out = reference.forward(task, weights.random_weights(task), reference.fixed_inputs(task))
    assert out.shape == shape and np.isfinite(out).all()


def numeric_gradient_check(task, params, x, y, coordinates, eps=1e-5):
    p = {k: np.asarray(v, np.float64) for k, v in params.items()}
    fn = {
        "cnn": reference_train.cnn_loss_and_grads,
        "rnn": reference_train.rnn_loss_and_grads,
        "densenet": reference_train.densenet_loss_and_grads,
    }
    _, grads = fn[task](p, x, y)
    for name, index in coordinates:
        p[name][index] += eps
        up, _ = fn[task](p, x, y)
        p[name][index] -= 2 * eps
        down, _ = fn[task](p, x, y)
        p[name][index] += eps
        numeric = (up - down) / (2 * eps)
        assert abs(numeric - grads[name][index]) <= 1e-6 + 1e-4 * abs(numeric), name


def test_cnn_backward_matches_finite_differences():
    params = weights.random_weights("cnn", 0)
    x, y = reference_train.fixed_batches("cnn", 1, batch_size=2)[0]
    numeric_gradient_check(
        "cnn",
        params,
        np.asarray(x, np.float64),
        y,
        [
            ("conv1.weight", (3, 1, 0, 2)),
            ("conv1.bias", (7,)),
            ("conv2.weight", (1, 2, 1, 1)),
            ("conv3.weight", (5, 4, 2, 0)),
            ("conv4.bias", (9,)),
            ("dense1.weight", (17, 3)),
            ("dense2.weight", (4, 6)),
            ("dense2.bias", (1,)),
        ],
    )


def test_densenet_backward_matches_finite_differences():
    """At 64 x 64 (the deepest block at 2 x 2): smaller images put batch norm over so few values
    that ReLU kinks sit within any finite-difference step."""
    params = {
        k: v
        for k, v in weights.random_weights("densenet", 0).items()
        if not k.endswith((".mean", ".var"))
    }
    x, y = reference_train.fixed_batches("densenet", 1, batch_size=2)[0]
    numeric_gradient_check(
        "densenet",
        params,
        np.asarray(x, np.float64),
        y,
        [
            ("stem.conv.weight", (44, 1, 0, 3)),
            ("transition2.bn.gamma", (472,)),
            ("block4.layer0.conv1.weight", (5, 7, 0, 0)),
        ],
        eps=1e-6,
    )


def test_gru_backward_matches_finite_differences():
    params = weights.random_weights("rnn", 0)
    x, y = reference_train.fixed_batches("rnn", 1, batch_size=2)[0]
    x = x[:, -12:]  # a short sequence keeps it quick; the recurrence is the same
    numeric_gradient_check(
        "rnn",
        params,
        x,
        y,
        [
            ("embedding.weight", (int(x[0, -1]), 3)),
            ("gru.input_weight", (5, 7)),
            ("gru.input_weight", (9, 250)),
            ("gru.recurrent_weight", (3, 120)),
            ("gru.recurrent_bias", (210,)),
            ("gru.input_bias", (30,)),
            ("dense.weight", (8, 1)),
        ],
    )


def test_trained_weights_are_compared_against_the_steps_own_size():
    """The conformance suite's trained-weights measure: a tensor within rounding of the
    reference's passes; one whose rows moved twice as far as they should (an optimiser that
    squares an embedding's repeated slices before summing them moves frequent words by up to
    sqrt(k) of their step) fails, whatever the losses said."""
    from bench_shared import conformance

    rng = np.random.RandomState(0)
    start = {"w": rng.normal(size=(50, 4)), "b": np.zeros(4)}
    step = {"w": rng.normal(scale=1e-3, size=(50, 4)), "b": np.zeros(4)}
    want = {name: start[name] + step[name] for name in start}
    close = {name: want[name] + 1e-9 for name in want}
    errors = conformance.trained_weight_errors(start, want, close)
    assert errors["w"] < conformance.WEIGHT_TOLERANCE and errors["b"] < 1e-8
    broken = dict(want, w=want["w"] + np.where(np.arange(50)[:, None] < 5, step["w"], 0))
    assert conformance.trained_weight_errors(start, want, broken)["w"] > 0.5
    # DenseNet's norms: a step not taken is the whole step
    assert conformance.trained_weight_errors(start, want, start, "norm")["w"] == pytest.approx(1)
