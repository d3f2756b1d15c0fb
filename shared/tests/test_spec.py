"""The spec constants: computed counts agree with the figures SPEC.md states."""

import pytest

from bench_shared import spec


@pytest.mark.parametrize("task", sorted(spec.TASKS))
def test_param_count_computed_from_layers_matches_spec(task):
    assert spec.param_count(task) == spec.TASKS[task].param_count


def test_spec_figures():
    assert spec.CNN.param_count == 3441592
    assert spec.ResNet50.param_count == 23508032
    assert spec.RNN.param_count == 3818302
    assert spec.RNN.param_count - spec.RNN.param_count_one_bias == 3 * spec.RNN.hidden_units
    # SPEC.md: "≈ 62.3 M multiply-adds per image"
    assert round(spec.macs_per_example("cnn") / 1e6, 1) == 62.3
    assert spec.flops_per_example("cnn", training=True) == 6 * spec.macs_per_example("cnn")


def test_resnet50_v1_and_v15_multiply_adds(monkeypatch):
    assert round(spec.macs_per_example("resnet50") / 1e9, 2) == 3.86  # v1, stride on the 1x1
    monkeypatch.setattr(spec.ResNet50, "stride_on_1x1", False)
    assert round(spec.macs_per_example("resnet50") / 1e9, 1) == 4.1  # v1.5, SPEC's figure
    assert spec.param_count("resnet50") == spec.ResNet50.param_count  # same parameters


def test_resnet50_buffers():
    channels = sum(out for _, out, _, _, _ in spec.resnet50_convs())
    assert 2 * channels == spec.ResNet50.buffer_count


def test_unknown_task():
    with pytest.raises(ValueError, match="unknown task 'vgg'"):
        spec.param_count("vgg")
