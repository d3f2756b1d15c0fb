"""The conformance suite's reference losses come from the disk cache only for the exact same
question: same weights, batches, optimizer and reference code."""

import numpy as np
import pytest

from bench_shared import reference_cache, reference_train, weights


@pytest.fixture
def question():
    params = weights.random_weights("cnn", seed=0)
    batches = reference_train.fixed_batches("cnn", 2, batch_size=2)
    return params, batches, {"name": "sgd", "lr": 0.01, "momentum": 0.9}


@pytest.fixture
def computed(monkeypatch, tmp_path):
    """Counts the reference's computations (a quick stand-in for them: the cache is tested)."""
    monkeypatch.setenv("BENCH_CACHE_DIR", str(tmp_path))
    calls = []

    def counting(task, params, batches, optimizer, trained=None):
        calls.append(task)
        if trained is not None:
            trained.update({name: value * 2 for name, value in params.items()})
        return [float(np.sum(x) * optimizer["lr"]) for x, _ in batches]

    monkeypatch.setattr(reference_train, "train_steps", counting)
    return calls


def test_the_same_question_is_answered_from_disk_with_the_same_losses(question, computed):
    first = reference_cache.train_steps("cnn", *question)
    again = reference_cache.train_steps("cnn", *question)
    assert len(computed) == 1
    assert again == [float(v) for v in first] and len(again) == 2
    losses, trained = reference_cache.trained("cnn", *question)  # the weights kept beside
    assert len(computed) == 1 and losses == again
    params = question[0]
    assert all(np.array_equal(trained[name], params[name] * 2) for name in params)


def test_other_weights_batches_or_optimizer_are_computed_anew(question, computed):
    params, batches, optimizer = question
    reference_cache.train_steps("cnn", params, batches, optimizer)
    nudged = dict(params)
    name = sorted(params)[0]
    nudged[name] = params[name] + np.float32(1e-6)
    reference_cache.train_steps("cnn", nudged, batches, optimizer)
    other_batches = [(x.copy(), y) for x, y in batches]
    other_batches[1][0][0, 0, 0, 0] += np.float32(1e-3)
    reference_cache.train_steps("cnn", params, other_batches, optimizer)
    reference_cache.train_steps("cnn", params, batches, dict(optimizer, lr=0.02))
    assert len(computed) == 4


def test_a_changed_reference_source_is_a_new_key(question, monkeypatch, tmp_path):
    before = reference_cache.key("cnn", *question)
    changed = tmp_path / "reference_train.py"
    changed.write_bytes(open(reference_train.__file__, "rb").read() + b"\n# changed\n")
    monkeypatch.setattr(reference_train, "__file__", str(changed))
    assert reference_cache.key("cnn", *question) != before


def test_an_unwritable_cache_still_answers(question, computed, monkeypatch, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("BENCH_CACHE_DIR", str(blocker))
    assert len(reference_cache.train_steps("cnn", *question)) == 2
    assert len(reference_cache.train_steps("cnn", *question)) == 2
    assert len(computed) == 2
