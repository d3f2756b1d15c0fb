import time

from bench_shared import progress
from bench_shared.timing import Stopwatch


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


def test_progress_lines_round_trip(capsys):
    progress.emit("phase", phase="train", total=3)
    line = capsys.readouterr().out
    assert progress.parse(line) == {"event": "phase", "phase": "train", "total": 3}
    assert progress.parse("hello\n") is None
