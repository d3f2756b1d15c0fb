"""Flax's switches: jit per step vs the whole epoch as one jax.lax.scan program, donated
buffers, XLA's threads, flags and host-device count set before its backend starts."""

import os
import subprocess
import sys

import numpy as np

import bench_flax
from bench import testing
from bench_flax import rnn
from bench_shared import reference_train


def test_whole_epoch_scan_takes_the_same_steps_as_jit_per_step():
    batches = reference_train.fixed_batches("rnn", 3, batch_size=8)
    _, per_step, _ = testing.loaded_model("flax", "rnn")
    _, whole, _ = testing.loaded_model("flax", "rnn", "framework.options.whole_epoch=true")
    assert whole.whole_epoch and not per_step.whole_epoch
    losses = [rnn.train_epoch(per_step, [batch]) for batch in batches]
    mean = rnn.train_epoch(whole, batches)  # one program for the three steps
    np.testing.assert_allclose(mean, np.mean(losses), rtol=1e-5)
    np.testing.assert_allclose(
        np.asarray(whole.net.dense.kernel.get_value()),
        np.asarray(per_step.net.dense.kernel.get_value()),
        rtol=1e-5,
    )


def test_the_training_step_donates_the_state_buffers():
    _, model, _ = testing.loaded_model("flax", "rnn")
    before = model.net.gru.dense_h.kernel.get_value()
    rnn.train_epoch(model, reference_train.fixed_batches("rnn", 1, batch_size=8))
    assert before.is_deleted()  # reused by the step's output, not copied
    assert not model.net.gru.dense_h.kernel.get_value().is_deleted()


def test_threads_and_flags_are_set_before_the_backend_starts(monkeypatch):
    for name in ("PJRT_NPROC", "NPROC", "XLA_FLAGS"):
        monkeypatch.delenv(name, raising=False)
    assert bench_flax.configure_xla(0, "") == len(os.sched_getaffinity(0))
    assert "PJRT_NPROC" not in os.environ
    monkeypatch.setenv("XLA_FLAGS", "--xla_cpu_enable_fast_math=false")
    assert bench_flax.configure_xla(3, "--xla_cpu_use_thunk_runtime=true") == 3
    assert os.environ["PJRT_NPROC"] == "3"
    assert os.environ["XLA_FLAGS"] == (
        "--xla_cpu_enable_fast_math=false --xla_cpu_use_thunk_runtime=true"
    )
    # devices=N on a CPU (task densenet): N XLA host-platform devices in this one process
    monkeypatch.delenv("XLA_FLAGS")
    bench_flax.configure_xla(0, "", host_devices=2)
    assert os.environ["XLA_FLAGS"] == "--xla_force_host_platform_device_count=2"


def test_xla_reads_the_flags_and_the_thread_count():
    """In a fresh interpreter: XLA refuses an unknown flag (so xla_flags reach it), and its
    CPU thread pools follow `threads`."""
    script = (
        "import sys, bench_flax\n"
        "from bench import testing\n"
        "run = testing.make_run('flax', 'task=rnn', *sys.argv[1:])\n"
        "print(bench_flax.setup(run)['threads'])\n"
        "import jax.numpy as jnp; (jnp.ones(3) + 1).block_until_ready()\n"
        "print(open('/proc/self/status').read().split('Threads:')[1].split()[0])\n"
    )

    def run(*overrides):
        env = {k: v for k, v in os.environ.items() if k not in ("PJRT_NPROC", "NPROC")}
        return subprocess.run(
            [sys.executable, "-c", script, *overrides],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    refused = run("framework.options.xla_flags='--xla_no_such_flag=1'")
    assert refused.returncode != 0 and "xla_no_such_flag" in refused.stderr
    one, eight = run("framework.options.threads=1"), run("framework.options.threads=8")
    assert one.returncode == 0 and eight.returncode == 0, one.stderr + eight.stderr
    assert one.stdout.split()[0] == "1" and eight.stdout.split()[0] == "8"
    assert int(eight.stdout.split()[1]) > int(one.stdout.split()[1])  # bigger pools
