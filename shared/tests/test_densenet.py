"""The fourth task's shared half: DenseNet-121's tables, neutral weights and NumPy
reference forward pass, before any framework runs it. Valid Python 3.6 (CNTK's environment)."""

import numpy as np
import pytest

from bench_shared import reference, spec, weights

D = spec.DenseNet121


def test_parameter_counts_computed_from_the_tables_match_spec():
    assert spec.param_count("densenet") == D.param_count == 6968206
    head = D.features * D.num_labels + D.num_labels
    assert spec.param_count("densenet") - head == D.feature_param_count == 6953856
    assert weights.trainable_count("densenet") == D.param_count


def test_the_architecture_121_layers_and_1024_features():
    convs = spec.densenet_convs()
    # 1 stem + 2 per dense layer + 3 transitions convolutions, + the head: 121 weighted layers
    assert len(convs) + 1 == 1 + 2 * sum(D.block_layers) + 3 + 1 == 121
    assert convs[-1][1] == D.growth_rate and spec.densenet_batch_norms()[-1] == D.features
    sizes = sorted({hw for _, _, _, _, hw in convs})
    assert sizes == [7 * 7, 14 * 14, 28 * 28, 56 * 56, 112 * 112]
    # torchvision's published figure for densenet121: 2.83 G multiply-adds at 224 x 224
    assert round(spec.macs_per_example("densenet") / 1e9, 2) == 2.83


def test_layout_transitions_halve_and_layers_grow_by_the_growth_rate():
    layout = weights.layout("densenet")
    assert layout["block1.layer0.conv1.weight"] == (D.bottleneck_width, D.stem_channels, 1, 1)
    assert layout["block1.layer5.bn1.gamma"] == (D.stem_channels + 5 * D.growth_rate,)
    assert layout["transition1.conv.weight"] == (128, 256, 1, 1)
    assert layout["block4.layer15.conv2.weight"] == (D.growth_rate, D.bottleneck_width, 3, 3)
    assert layout["classifier.weight"] == (D.features, D.num_labels)


def test_initial_weights_he_normal_convolutions_identity_batch_norm_zero_head_bias():
    params = weights.initial_weights("densenet", 0)
    weights.check("densenet", params)
    w = params["block3.layer10.conv1.weight"].astype(np.float64)
    assert abs(w.std() / np.sqrt(2.0 / np.prod(w.shape[1:])) - 1) < 0.05
    assert (params["final.bn.gamma"] == 1).all() and not params["final.bn.mean"].any()
    assert not params["classifier.bias"].any()
    limit = np.sqrt(6.0 / (D.features + D.num_labels))
    assert 0.9 * limit < np.abs(params["classifier.weight"]).max() <= limit * (1 + 1e-6)


@pytest.fixture(scope="module")
def random_weights():
    return weights.random_weights("densenet", 0)


def test_reference_runs_at_any_size_the_five_halvings_leave_and_batches_do_not_mix(random_weights):
    for size in (32, 48):
        x = reference.fixed_inputs("densenet", batch=3, image_size=size)
        logits = reference.densenet_forward(random_weights, x)
        assert logits.shape == (3, D.num_labels) and np.isfinite(logits).all()
        alone = reference.densenet_forward(random_weights, x[1:2])  # evaluation mode
        np.testing.assert_allclose(alone, logits[1:2], rtol=1e-10, atol=1e-12)


def test_every_dense_layer_and_transition_reaches_the_logits(random_weights):
    """Each layer's output is concatenated onward: dropping any one changes the result."""
    x = reference.fixed_inputs("densenet", batch=2, image_size=32)
    base = reference.densenet_forward(random_weights, x)
    for name in (
        "block1.layer0.conv2.weight",
        "block2.layer11.conv2.weight",
        "block4.layer15.conv2.weight",
        "transition3.conv.weight",
    ):
        changed = dict(random_weights)
        changed[name] = np.zeros_like(changed[name])
        assert not np.allclose(reference.densenet_forward(changed, x), base), name


def test_a_layer_sees_the_block_input_first_then_earlier_layers_in_order(random_weights):
    """Concatenation order is part of the format: block1.layer1's first 64 input channels
    are the stem's, the next 32 block1.layer0's. Moving those 32 input columns of its 1x1
    convolution (and their batch norm) to the front changes the result."""
    x = reference.fixed_inputs("densenet", batch=1, image_size=32)
    base = reference.densenet_forward(random_weights, x)
    moved = dict(random_weights)
    order = np.r_[64:96, 0:64]
    q = "block1.layer1."
    moved[q + "conv1.weight"] = random_weights[q + "conv1.weight"][:, order]
    for field in weights.BN_FIELDS:
        moved[q + "bn1." + field] = random_weights[q + "bn1." + field][order]
    assert not np.allclose(reference.densenet_forward(moved, x), base)
