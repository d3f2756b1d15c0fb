import time

from bench_shared import progress
from bench_shared.timing import Stopwatch, peak_rate


def test_every_region_is_bracketed_by_sync():
    log = []
    sw = Stopwatch(lambda: log.append("sync"))
    with sw.region("epoch"):
        log.append("work")
        time.sleep(0.01)
    with sw.region("epoch"):
        log.append("work")
    assert log == ["sync", "work", "sync", "sync", "work", "sync"]
    assert len(sw.regions["epoch"]) == 2 and sw.regions["epoch"][0] >= 0.01


def test_sync_time_is_inside_the_region():
    sw = Stopwatch(lambda: time.sleep(0.02))
    with sw.region("r"):
        pass
    assert sw.last("r") >= 0.02  # the closing sync waits for queued work: it is billed


def test_a_peak_is_the_best_round_so_one_disturbed_round_cannot_lower_it():
    calls = []
    seconds = iter([0.0, 0.3, 0.03, 0.3])  # warm-up, then a busy round, a quiet one, a busy one

    def work(n):
        calls.append(n)
        time.sleep(next(seconds))

    rate = peak_rate(work, units_per_call=6.0, calls=2, rounds=3)
    assert calls == [1, 2, 2, 2]  # one untimed warm-up call, then the timed rounds
    # the quiet round's rate (12 / 0.03), above the mean's (12 / 0.21) even where a busy
    # machine wakes the sleeper late
    assert 12.0 / 0.2 < rate <= 12.0 / 0.03


def test_progress_lines_round_trip(capsys):
    progress.emit("phase", phase="train", total=3)
    line = capsys.readouterr().out
    assert progress.parse(line) == {"event": "phase", "phase": "train", "total": 3}
    assert progress.parse("hello\n") is None
