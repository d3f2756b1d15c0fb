"""init=neutral's weights (bench_shared.weights.initial_weights) follow SPEC's initialiser rules,
and a real worker loads them through the weight protocol before training.
Valid Python 3.6: it runs in CNTK's environment too."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from bench_shared import contract, spec, weights

H = spec.RNN.hidden_units
SHARED = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def within_uniform_limit(value, limit):
    """Inside +-limit and filling it: the extremes reach most of the way to the limit. (A
    float32 draw may round up onto the limit: 0.05 as float32 is 0.050000001.)"""
    top = float(np.abs(value).max())
    return (
        top <= limit * (1 + 1e-6) and top > 0.95 * limit and abs(float(value.mean())) < 0.05 * limit
    )


@pytest.mark.parametrize("task", sorted(spec.TASKS))
def test_layout_names_shapes_and_dtype(task):
    params = weights.initial_weights(task, 0)
    weights.check(task, params)
    assert all(p.dtype == np.float32 for p in params.values())


def test_cnn_glorot_uniform_over_the_receptive_field_zero_biases():
    params = weights.initial_weights("cnn", 3)
    for i in range(1, len(spec.CNN.conv_channels) + 1):
        w = params["conv%d.weight" % i]
        receptive = w.shape[2] * w.shape[3]
        limit = np.sqrt(6.0 / ((w.shape[0] + w.shape[1]) * receptive))
        assert within_uniform_limit(w, limit), i
        assert not params["conv%d.bias" % i].any()
    for name in ("dense1", "dense2"):
        w = params[name + ".weight"]
        assert within_uniform_limit(w, np.sqrt(6.0 / sum(w.shape))), name
        assert not params[name + ".bias"].any()


def test_rnn_per_gate_glorot_and_orthogonal_uniform_embedding_zero_biases():
    params = weights.initial_weights("rnn", 5)
    assert within_uniform_limit(params["embedding.weight"], spec.RNN.embedding_init_range)
    kernel, recurrent = params["gru.input_weight"], params["gru.recurrent_weight"]
    per_gate = np.sqrt(6.0 / (kernel.shape[0] + H))
    whole = np.sqrt(6.0 / (kernel.shape[0] + 3 * H))  # the whole-matrix rule SPEC rules out
    for gate in range(3):  # r, z, n
        block = kernel[:, gate * H : (gate + 1) * H]
        assert within_uniform_limit(block, per_gate), gate
        assert np.abs(block).max() > 1.2 * whole  # wider than a draw over all three gates
        square = recurrent[:, gate * H : (gate + 1) * H].astype(np.float64)
        np.testing.assert_allclose(square.T.dot(square), np.eye(H), atol=1e-5)
    # each gate its own draw, not one repeated (a whole-matrix draw, Keras' rule, would leave
    # the square blocks non-orthogonal: the check above)
    assert (recurrent[:, :H] != recurrent[:, H : 2 * H]).all()
    assert (kernel[:, :H] != kernel[:, H : 2 * H]).all()
    assert not params["gru.input_bias"].any() and not params["gru.recurrent_bias"].any()
    dense = params["dense.weight"]
    assert within_uniform_limit(dense, np.sqrt(6.0 / sum(dense.shape)))
    assert not params["dense.bias"].any()


def test_resnet50_he_normal_convolutions_and_identity_batch_norm():
    params = weights.initial_weights("resnet50", 1)
    for name, value in params.items():
        field = name.rsplit(".", 1)[-1]
        if name.endswith("conv.weight") or ".conv" in name and field == "weight":
            fan_in = value.shape[1] * value.shape[2] * value.shape[3]
            assert abs(value.std() / np.sqrt(2.0 / fan_in) - 1) < 0.05, name
        elif field in ("gamma", "var"):
            assert (value == 1).all(), name
        else:
            assert field in ("beta", "mean") and not value.any(), name


@pytest.mark.parametrize("task", sorted(spec.TASKS))
def test_same_seed_same_weights_other_seed_other_weights(task):
    a, b, c = (weights.initial_weights(task, s) for s in (7, 7, 8))
    for name in a:
        np.testing.assert_array_equal(a[name], b[name])
    drawn = [n for n in a if a[n].std() > 0]
    assert drawn and all((a[n] != c[n]).mean() > 0.99 for n in drawn)


def test_run_json_carries_init_and_rejects_an_unknown_one():
    declared = {
        "name": "x",
        "package": "bench_x",
        "capabilities": {"tasks": ["rnn"], "precisions": {"cpu": ["fp32"]}},
    }
    assert contract.make_run(declared, "rnn")["init"] == "native"
    run = contract.make_run(declared, "rnn", init="neutral")
    assert run["init"] == "neutral"
    contract.check_run(run)
    with pytest.raises(ValueError, match="init='random'"):
        contract.make_run(declared, "rnn", init="random")
    run["init"] = "random"
    with pytest.raises(ValueError, match="init is 'random'"):
        contract.check_run(run)


# A numpy "framework" whose model is the neutral tensors themselves: what it holds when its
# first training epoch starts is what the worker loaded.
PROBE = {
    "__init__.py": """
        import numpy as np
        from bench_shared import slots

        def setup(run):
            return {}

        def versions():
            return {"probe": "0"}

        def sync():
            pass

        def count_parameters(model):
            return int(sum(v.size for v in model["tensors"].values()))

        def memory_stats():
            return None

        def tensors(model):
            return slots.DictTensors(model["tensors"], np.asarray, _write_in_place)

        def _write_in_place(tensor, value):
            tensor[...] = value
        """,
    "rnn.py": """
        import os
        import numpy as np
        from bench_shared import slots as protocol, weights

        def build_model(run):
            return {"tensors": dict((name, np.full(shape, 9.0, np.float32))
                                    for name, shape in weights.layout("rnn").items())}

        def slots(model):
            return dict((name, protocol.Slot(name)) for name in model["tensors"])

        def train_epoch(model, batches):
            path = os.environ["PROBE_OUT"]
            if not os.path.exists(path):
                np.savez(path, **model["tensors"])
            for _ in batches:
                pass
            return 0.5

        def predict(model, batches):
            return np.concatenate([np.zeros((len(x), 2), np.float32) for x in batches])
        """,
}


def write_probe(root, with_slots=True):
    package = os.path.join(str(root), "bench_probe")
    os.makedirs(package)
    for name, text in PROBE.items():
        text = textwrap.dedent(text)
        if not with_slots and name == "rnn.py":
            text = text.replace("def slots(model):", "def _no_slots(model):")
        with open(os.path.join(package, name), "w") as f:
            f.write(text)


def run_worker(tmp_path, init, with_slots=True, seed=4, init_file=None):
    write_probe(tmp_path, with_slots)
    arrays = {
        "train_x": np.zeros((128, spec.RNN.seq_len), np.int32),
        "train_y": np.zeros(128, np.int64),
        "test_x": np.zeros((64, spec.RNN.seq_len), np.int32),
        "test_y": np.zeros(64, np.int64),
    }
    paths = {}
    for key, value in arrays.items():
        paths[key] = os.path.join(str(tmp_path), key + ".npy")
        np.save(paths[key], value)
    declared = {
        "name": "probe",
        "package": "bench_probe",
        "capabilities": {"tasks": ["rnn"], "precisions": {"cpu": ["fp32"]}},
    }
    run = contract.make_run(
        declared, "rnn", seed=seed, init=init, epochs=1, data={"arrays": paths, "limits": {}}
    )
    run["output"] = os.path.join(str(tmp_path), "result.json")
    if init_file:
        run["init_file"] = init_file
    with open(os.path.join(str(tmp_path), "run.json"), "w") as f:
        json.dump(run, f)
    env = dict(
        os.environ,
        PROBE_OUT=os.path.join(str(tmp_path), "start.npz"),
        PYTHONPATH=os.pathsep.join([str(tmp_path), SHARED]),
    )
    proc = subprocess.run(
        [sys.executable, "-m", "bench_shared.worker", os.path.join(str(tmp_path), "run.json")],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    with open(run["output"]) as f:
        return proc.returncode, json.load(f), env["PROBE_OUT"]


def test_worker_trains_from_the_neutral_weights_of_its_seed(tmp_path):
    code, result, start = run_worker(tmp_path, "neutral", seed=4)
    assert code == 0, result.get("traceback")
    assert result["init"] == "neutral"
    assert len(result["timings"]["init"]) == 1 and len(result["timings"]["build"]) == 1
    expected = weights.initial_weights("rnn", 4)
    with np.load(start) as loaded:
        for name in expected:
            np.testing.assert_array_equal(loaded[name], expected[name])


def test_worker_native_init_leaves_the_frameworks_own_weights(tmp_path):
    code, result, start = run_worker(tmp_path, "native")
    assert code == 0, result.get("traceback")
    assert result["init"] == "native" and "init" not in result["timings"]
    with np.load(start) as loaded:
        assert all((loaded[name] == 9.0).all() for name in loaded.files)


def test_neutral_init_without_the_weight_protocol_is_a_clear_failure(tmp_path):
    code, result, _ = run_worker(tmp_path, "neutral", with_slots=False)
    assert code == 1 and result["status"] == "failed"
    assert (
        "init=neutral loads weights through the weight protocol, which probe lacks "
        "(bench_probe.rnn.slots); run it with init=native" in result["error"]
    )


def test_worker_starts_from_a_file_drawing_only_its_missing_head(tmp_path):
    """init=file: the file's weights (here seed 7's, a seed the run does not have) loaded,
    the output layer it leaves out drawn with the run's seed (4)."""
    given = weights.initial_weights("rnn", 7)
    path = os.path.join(str(tmp_path), "given.npz")
    np.savez(path, **{k: v for k, v in given.items() if not k.startswith("dense.")})
    code, result, start = run_worker(tmp_path, "file", seed=4, init_file=path)
    assert code == 0, result.get("traceback")
    assert result["init"] == "file" and result["init_file"] == {
        "path": path,
        "drawn": ["dense.weight", "dense.bias"],
    }
    own = weights.initial_weights("rnn", 4)
    with np.load(start) as loaded:
        for name in given:
            expected = own[name] if name.startswith("dense.") else given[name]
            np.testing.assert_array_equal(loaded[name], expected)


def test_starting_weights_from_a_file_draw_only_a_missing_head(tmp_path):
    """init=file: a file without the output layer (weights converted from ImageNet) gets it
    drawn as init=neutral draws it; anything else must match the layout."""
    full = weights.initial_weights("densenet", 3)
    features = {k: v for k, v in full.items() if not k.startswith("classifier.")}
    np.savez(tmp_path / "features.npz", **features)
    params, drawn = weights.starting_weights(str(tmp_path / "features.npz"), "densenet", 3)
    assert drawn == ["classifier.weight", "classifier.bias"]
    assert all(np.array_equal(params[k], full[k]) for k in full)
    imagenet_head = dict(
        features, **{"classifier.weight": np.zeros((1024, 1000)), "classifier.bias": np.zeros(1000)}
    )
    np.savez(tmp_path / "imagenet.npz", **imagenet_head)
    with pytest.raises(
        ValueError,
        match=r"classifier.weight has shape \(1024, 1000\).*leave "
        r"classifier\.\* out",
    ):
        weights.starting_weights(str(tmp_path / "imagenet.npz"), "densenet", 3)
    no_stem = {k: v for k, v in features.items() if not k.startswith("stem.")}
    np.savez(tmp_path / "no_stem.npz", **no_stem)
    with pytest.raises(ValueError, match="lacks .* only the output layer"):
        weights.starting_weights(str(tmp_path / "no_stem.npz"), "densenet", 3)
    np.savez(tmp_path / "other.npz", **dict(features, **{"fc.weight": np.zeros(3)}))
    with pytest.raises(ValueError, match="not in densenet's neutral layout.*fc.weight"):
        weights.starting_weights(str(tmp_path / "other.npz"), "densenet", 3)
