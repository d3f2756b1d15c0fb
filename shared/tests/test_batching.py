import numpy as np
import pytest

from bench_shared import batching


def test_permutation_is_seeded_and_changes_every_epoch():
    a = batching.epoch_permutation(1000, seed=0, epoch=0)
    assert np.array_equal(a, batching.epoch_permutation(1000, seed=0, epoch=0))
    assert not np.array_equal(a, batching.epoch_permutation(1000, seed=0, epoch=1))
    assert not np.array_equal(a, batching.epoch_permutation(1000, seed=1, epoch=0))
    assert sorted(a) == list(range(1000))


def test_complete_batches_only_and_spec_counts():
    assert batching.num_complete_batches(50000, 64) == 781
    assert batching.num_complete_batches(25000, 64) == 390
    x = np.arange(130)[:, None].astype(np.float32)
    y = np.arange(130)
    batches = list(batching.TrainBatches(x, y, 64, seed=3, epoch=0))
    assert [len(b[1]) for b in batches] == [64, 64]
    seen = np.concatenate([b[1] for b in batches])
    assert len(set(seen)) == 128
    assert np.array_equal(seen, batching.epoch_permutation(130, 3, 0)[:128])
    for bx, by in batches:
        assert np.array_equal(bx[:, 0], by)  # x and y stay paired


def test_stamps_and_the_single_sync_after_the_first_step():
    calls = []
    x, y = np.zeros((256, 1)), np.zeros(256)
    it = batching.TrainBatches(
        x, y, 64, 0, 0, sync=lambda: calls.append("sync"), on_batch=lambda i: calls.append(i)
    )
    for _ in it:
        pass
    assert calls == [0, "sync", 1, 2, 3]
    assert len(it.stamps) == 5 and it.stamps == sorted(it.stamps)
    assert it.stamps[1] >= it.first_step_end >= it.stamps[0]


def test_eval_batches_cover_every_example_in_order():
    x = np.arange(150).reshape(150, 1)
    out = list(batching.eval_batches(x, 64))
    assert [len(b) for b in out] == [64, 64, 22]
    assert np.array_equal(np.concatenate(out), x)
    assert all(b.flags.writeable for b in out)


def test_fixed_batches():
    x = np.arange(100).reshape(100, 1)
    out = batching.fixed_batches(x, 32, 3)
    assert [b[0, 0] for b in out] == [0, 32, 64]
    with pytest.raises(ValueError, match="inference needs 128 examples"):
        batching.fixed_batches(x, 32, 4)
