"""Learning curves and time to the quality target, through `python -m bench` with the numpy
stand-in framework: every epoch's evaluation lies outside the timed window, leaves the
training as it was, and the result says when the run reached its target. The fake's CNN is
driven epoch by epoch by the worker; its RNN trains every epoch in one call (the contract's
optional train(model, epochs), Keras' idiom), timed and evaluated the same way."""

import pytest

FAST = ["framework=fake", "task=cnn", "preset=smoke"]


@pytest.mark.parametrize("task", ["cnn", "rnn"])
def test_every_epoch_is_evaluated_outside_the_timed_window_and_training_is_unchanged(
    run_bench, task
):
    """A second's evaluation per epoch: it shows in the evaluation time, not in the epochs'
    (each epoch's time is its batches' time, recorded in the same run: no bound on how long
    the NumPy takes, which a busy machine moves), and the same timed batches train to the
    same losses with the curve on or off."""
    slow = run_bench(*FAST, f"task={task}", "framework.options.eval_delay_ms=1000").result
    off = run_bench(*FAST, f"task={task}", "task.curve=false").result
    assert [p["epoch"] for p in slow["curve"]] == [1, 2, 3]
    assert [p["step"] for p in slow["curve"]] == [32, 64, 96]
    assert [p["epoch"] for p in off["curve"]] == [3]  # the end-of-run evaluation only
    assert slow["timings"]["evaluation"] >= 3.0
    for epoch, batches in zip(slow["timings"]["epoch"], slow["batch_seconds"]):
        assert epoch - sum(batches) < 0.5, (epoch, sum(batches))  # not the second's sleep
    assert [len(e) for e in slow["batch_seconds"]] == [len(e) for e in off["batch_seconds"]]
    assert slow["losses"] == off["losses"]
    assert slow["accuracy"] == slow["curve"][-1]["accuracy"] == off["accuracy"]
    points = slow["curve"]
    assert all(a["train_seconds"] < b["train_seconds"] for a, b in zip(points, points[1:]))
    assert points[-1]["train_seconds"] == slow["stats"]["train_seconds"]


def test_a_slowed_evaluation_leaves_the_throughput_figure_as_it_was(run_bench):
    """Epochs dominated by a sleep (10 batches of 200 ms beside about 15 ms of NumPy each),
    so that the figure holds on a busy machine (NumPy six times slower in one run than in the
    other still keeps 0.74); an evaluation of two seconds inside the window would halve it."""
    sized = ["preset.train_examples=640", "preset.epochs=2", "framework.options.delay_ms=200"]
    runs = [
        run_bench(*FAST, *sized, f"framework.options.eval_delay_ms={delay}").result
        for delay in (0, 2000)
    ]
    quick, slowed = (r["stats"]["examples_per_second"] for r in runs)
    assert slowed > 0.7 * quick, (quick, slowed)


@pytest.mark.parametrize("task", ["cnn", "rnn"])
def test_the_result_says_when_the_target_was_reached_and_stop_at_target_ends_there(run_bench, task):
    reached = run_bench(*FAST, f"task={task}", "task.quality_target.synthetic=0.5").result
    first = next(p for p in reached["curve"] if p["accuracy"] >= 0.5)
    assert reached["stats"]["quality_target"] == 0.5 and reached["stats"]["target_reached"]
    assert reached["stats"]["time_to_target_s"] == first["train_seconds"]
    assert reached["stats"]["target_epoch"] == first["epoch"]
    missed = run_bench(*FAST, f"task={task}", "task.quality_target.synthetic=0.99").result
    assert missed["status"] == "ok" and missed["stats"]["target_reached"] is False
    assert missed["stats"]["time_to_target_s"] is None
    stopped = run_bench(
        *FAST, f"task={task}", "task.quality_target.synthetic=0.5", "task.stop_at_target=true"
    ).result
    assert stopped["stopped_at_target"] == first["epoch"] < 3
    assert len(stopped["curve"]) == len(stopped["losses"]) == first["epoch"]
    assert stopped["stats"]["time_to_target_s"] == stopped["stats"]["train_seconds"]
