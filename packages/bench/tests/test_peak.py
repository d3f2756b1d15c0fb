"""`python -m bench peak` and `host_utilisation`, through the CLI in subprocesses: the fake
framework's peak_flops hook measures numpy's matrix product in a real worker."""

import csv
import json
import re
from pathlib import Path

import pytest

# the utilisation figures need a run, not a long one
RUN = [
    "framework=fake",
    "task=cnn",
    "preset=smoke",
    "preset.train_examples=256",
    "preset.test_examples=128",
    "preset.epochs=1",
]


def test_host_peak_is_measured_once_cached_and_shown_beside_utilisation(
    run_bench, own_cache, tmp_path
):
    env, cache = own_cache
    plain = run_bench(*RUN, env=env)
    assert plain.result["host_peak"] is None  # nothing measured yet: no host figure
    assert "utilisation" in plain.result["stats"]
    assert "host_utilisation" not in plain.result["stats"]

    # two frameworks, not every conf/framework/*.yaml: a config composed for each costs seconds
    first = run_bench("peak", "--frameworks", "fake,torch", env=env)
    assert first.returncode == 0, first.output
    assert re.search(r"^  fp32: [\d.]+ GFLOP/s \(fake\)$", first.output, re.M), first.output
    assert "bf16: no installed framework measured it" in first.output
    assert "torch: fp32 not installed (nox -s torch); bf16 not installed" in first.output
    written = Path(re.search(r"^written: (.+)$", first.output, re.M).group(1))
    assert written.is_relative_to(cache / "hosts") and written.name == "peak.json"
    peak = json.loads(written.read_text())
    assert peak["precisions"]["fp32"]["framework"] == "fake"
    assert peak["frameworks"]["fake"]["bf16"] == "unsupported"
    again = run_bench("peak", "--frameworks", "fake,torch", env=env)
    assert again.returncode == 0 and f"cached: {written} (--redo measures again)" in again.output

    run = run_bench(*RUN, env=env)
    r = run.result
    assert r["host_peak"] == {
        "flops": peak["precisions"]["fp32"]["flops"],
        "framework": "fake",
        "file": str(written),
    }
    s = r["stats"]
    assert s["host_utilisation"] == s["achieved_gflops"] * 1e9 / r["host_peak"]["flops"]
    assert s["utilisation"] == s["achieved_gflops"] * 1e9 / r["peak_flops"]
    assert re.search(r"utilisation [\d.]+ \(host [\d.]+\)$", run.output, re.M), run.output

    report = run_bench(
        "report",
        str(run.result_paths[0]),
        "--no-charts",
        "--out",
        str(tmp_path / "report"),
        env=env,
    )
    assert report.returncode == 0, report.output
    with open(tmp_path / "report" / "results.csv") as f:
        (row,) = list(csv.DictReader(f))
    assert float(row["host_utilisation"]) == s["host_utilisation"]
    assert row["tuned"] == "False"


@pytest.mark.parametrize("damage", ["[]", "flops 0", "flops 'fast'"])
def test_a_peak_file_of_another_shape_is_reported_and_ignored(run_bench, own_cache, damage):
    from bench.run import host_files, sysinfo

    env, cache = own_cache
    file = host_files.peak_path(str(cache))
    file.parent.mkdir(parents=True)
    peak = {
        "version": 1,
        "host": sysinfo.host_key(),
        "measured": "2026-01-01T00:00:00",
        "precisions": {"fp32": {"flops": 1e11, "framework": "fake"}},
        "frameworks": {"fake": {"fp32": 1e11, "bf16": "unsupported"}},
    }
    if damage == "[]":
        peak = []
    else:
        peak["precisions"]["fp32"]["flops"] = 0 if damage == "flops 0" else "fast"
    file.write_text(json.dumps(peak))
    run = run_bench(*RUN, env=env)
    assert run.returncode == 0 and run.result["status"] == "ok", run.output
    assert run.result["host_peak"] is None and "host_utilisation" not in run.result["stats"]
    (line,) = [line for line in run.output.splitlines() if str(file) in line]
    assert line.startswith(f"bench: {file} is not a host peak ("), line
    assert line.endswith("runs report no host_utilisation until `python -m bench peak --redo`")


def test_a_framework_s_peak_is_measured_once_per_host_and_settings(run_bench, own_cache):
    """The first run measures its framework's matmul peak after training (timings["peak"]);
    the next run of the same settings takes it from the host's cache and measures nothing;
    other settings (an option) measure again."""
    env, cache = own_cache
    first = run_bench(*RUN, env=env).result
    second = run_bench(*RUN, env=env).result
    other = run_bench(*RUN, "framework.options.lr=0.4", env=env).result
    assert "peak" in first["timings"] and first["peak_flops"] > 0
    assert "peak" not in second["timings"] and second["peak_flops"] == first["peak_flops"]
    assert second["stats"]["utilisation"] > 0 and second["peak_measured"]
    assert "peak" in other["timings"]
    assert len(list(cache.rglob("framework_peaks.json"))) == 1


def test_an_int8_run_is_measured_against_the_int8_peak(run_bench, own_cache):
    """`peak` measures int8 where a framework declares it; an int8 run's host utilisation
    divides by that figure, and its calibration is timed apart with its agreement recorded."""
    env, _ = own_cache
    measured = run_bench("peak", "--frameworks", "fake", env=env)
    assert measured.returncode == 0, measured.output
    assert re.search(r"^  int8: [\d.]+ GOP/s \(fake\)$", measured.output, re.M), measured.output
    peak = json.loads(
        Path(re.search(r"^written: (.+)$", measured.output, re.M).group(1)).read_text()
    )
    run = run_bench("framework=fake", "task=resnet50", "precision=int8", "preset=smoke", env=env)
    r = run.result
    assert r["status"] == "ok", run.output
    assert r["host_peak"]["flops"] == peak["precisions"]["int8"]["flops"]
    assert r["stats"]["host_utilisation"] == (
        r["stats"]["achieved_gflops"] * 1e9 / peak["precisions"]["int8"]["flops"]
    )
    from bench_shared import worker

    if not hasattr(worker, "calibration"):
        pytest.skip("the worker does not call bench_shared.calibration: int8 runs uncalibrated")
    assert r["timings"]["calibration"][0] > 0
    agreement = r["agreement"]  # integer products: near fp32, never equal to it
    assert agreement["images"] == 32 and 0 < agreement["feature_error"] < 0.01
    assert agreement["top1_agreement"] > 0.9
