"""`python -m bench check`: a bundle fit to rank is VALID; each written rule, broken by real
runs of the numpy stand-in (or, for the schema, one of their files damaged), makes it
INVALID with that rule named (bench.report.fitness)."""

import json
import re

from fit_bundle import SPREAD
from locked_env import install_by_hand


def invalid_rules(output):
    """The rule names the INVALID lines give."""
    return set(re.findall(r"^ {11}(\w+): ", output, re.M)) | (
        {"schema"} if re.search(r"^INVALID .*: schema: ", output, re.M) else set()
    )


def test_a_bundle_that_meets_every_rule_is_valid(fit_bundle):
    done = fit_bundle.bench("check", *SPREAD, fit_bundle.cwd / "bundle")
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(
        r"^VALID +fake cnn cpu fp32 preset=smoke on .* \(3 runs\)$", done.stdout, re.M
    ), done.stdout
    assert "1 of 1 configurations valid" in done.stdout
    data = json.loads(
        fit_bundle.bench("check", *SPREAD, fit_bundle.cwd / "bundle", "--json").stdout
    )
    assert data["valid"] and data["configurations"][0]["broken"] == []


def test_a_file_that_does_not_follow_the_schema(fit_bundle, tmp_path):
    bundle = fit_bundle.copy(tmp_path / "b")
    damaged = bundle / "seed0" / "result.json"
    result = json.loads(damaged.read_text())
    result["stats"]["examples_per_second"] = -1.0
    damaged.write_text(json.dumps(result))
    done = fit_bundle.bench("check", *SPREAD, bundle)
    assert done.returncode == 1 and "schema" in invalid_rules(done.stdout), done.stdout
    assert "repeats" in invalid_rules(done.stdout)  # the damaged run is not counted


def test_a_run_that_did_not_finish_ok(fit_bundle, tmp_path):
    bundle = fit_bundle.copy(tmp_path / "b")
    fit_bundle.run("framework.options.fault=crash", into=bundle / "crash")
    done = fit_bundle.bench("check", *SPREAD, bundle, "--min-runs", "1")
    assert done.returncode == 1 and invalid_rules(done.stdout) == {"status"}, done.stdout
    assert "1 of 2 configurations valid" in done.stdout


def test_a_run_from_a_tree_with_uncommitted_changes(fit_bundle, tmp_path):
    readme = fit_bundle.project / "README"
    readme.write_text("changed\n")
    try:
        path = fit_bundle.run(into=tmp_path / "b" / "dirty")
    finally:
        readme.write_text("a checkout\n")
    done = fit_bundle.bench("check", *SPREAD, tmp_path / "b", "--min-runs", "1")
    assert done.returncode == 1 and invalid_rules(done.stdout) == {"commit"}, done.stdout
    assert json.loads(path.read_text())["host"]["git_commit"].endswith("-dirty")


def test_an_environment_that_drifted_from_its_lock(fit_bundle, tmp_path):
    install_by_hand(fit_bundle.site, "drifting_tool", "2.0")
    try:
        fit_bundle.run(into=tmp_path / "b" / "drifted")
    finally:
        for info in fit_bundle.site.glob("drifting_tool-*"):
            for file in info.iterdir():
                file.unlink()
            info.rmdir()
    done = fit_bundle.bench("check", *SPREAD, tmp_path / "b", "--min-runs", "1")
    assert done.returncode == 1 and invalid_rules(done.stdout) == {"lock"}, done.stdout
    assert "drifting-tool" in done.stdout


def test_a_run_without_a_steady_state(fit_bundle, tmp_path):
    fit_bundle.run("preset.epochs=1", into=tmp_path / "b" / "one-epoch")
    done = fit_bundle.bench("check", *SPREAD, tmp_path / "b", "--min-runs", "1")
    assert done.returncode == 1 and invalid_rules(done.stdout) == {"steady"}, done.stdout


def test_a_run_below_its_quality_target(fit_bundle, tmp_path):
    fit_bundle.run("task.quality_target.synthetic=0.99", into=tmp_path / "b" / "short")
    done = fit_bundle.bench("check", *SPREAD, tmp_path / "b", "--min-runs", "1")
    assert done.returncode == 1 and invalid_rules(done.stdout) == {"target"}, done.stdout
    assert "below the quality target 0.99" in done.stdout


def test_too_few_repeats(fit_bundle, tmp_path):
    bundle = fit_bundle.copy(tmp_path / "b")
    (bundle / "seed2" / "result.json").unlink()
    done = fit_bundle.bench("check", *SPREAD, bundle)
    assert done.returncode == 1 and invalid_rules(done.stdout) == {"repeats"}, done.stdout
    assert "2 run(s); at least 3 needed" in done.stdout


def test_repeats_too_far_apart_to_rank(fit_bundle, tmp_path):
    bundle = fit_bundle.copy(tmp_path / "b")
    slowed = dict(fit_bundle.env, FAKE_EXTRA_DELAY_MS="400")  # 5x the time per batch
    fit_bundle.run("seed=3", into=bundle / "seed3", env=slowed)
    done = fit_bundle.bench("check", *SPREAD, bundle)
    assert done.returncode == 1 and invalid_rules(done.stdout) == {"spread"}, done.stdout


def test_from_five_runs_one_slow_run_does_not_decide(fit_bundle, tmp_path):
    """Five runs: the spread is the interquartile range, as the table cell's, so one run a busy
    machine slowed fivefold leaves the configuration fit to rank; two such runs do not."""
    bundle = fit_bundle.copy(tmp_path / "b")
    slowed = dict(fit_bundle.env, FAKE_EXTRA_DELAY_MS="400")
    fit_bundle.run("seed=3", into=bundle / "seed3", env=slowed)
    fit_bundle.run("seed=4", into=bundle / "seed4")
    done = fit_bundle.bench("check", *SPREAD, bundle)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"^VALID .* \(5 runs\)$", done.stdout, re.M), done.stdout
    fit_bundle.run("seed=5", into=bundle / "seed5", env=slowed)
    done = fit_bundle.bench("check", *SPREAD, bundle)
    assert done.returncode == 1 and invalid_rules(done.stdout) == {"spread"}, done.stdout
    assert "between the quartiles of 6 runs" in done.stdout


def test_the_docs_list_the_rules_the_check_applies():
    """docs/trust.md's table is the rules of bench.report.fitness, word for word."""
    from pathlib import Path

    from bench.report import fitness

    doc = (Path(__file__).resolve().parents[3] / "docs" / "trust.md").read_text()
    rows = re.findall(r"^\| `(\w+)` \| (.+?) \|$", doc, re.M)
    assert rows == [(rule.name, rule.text) for rule in fitness.RULES]
