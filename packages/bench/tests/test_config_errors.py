"""Config errors through the command line, in the project's words."""


def test_schemas_are_not_offered_as_options(run_bench):
    run = run_bench("framework=nope", "task=cnn")
    assert run.returncode != 0
    assert "Available options in 'framework':" in run.output and "\tfake\n" in run.output
    assert "_schema" not in run.output, run.output
    run = run_bench("framework=framework_schema")
    assert run.returncode != 0 and "Could not find 'framework/framework_schema'" in run.output


FAST = ["framework=fake", "preset=smoke"]


def test_adding_an_unknown_key_is_refused_like_setting_one(run_bench):
    top = run_bench(*FAST, "+precison=bf16")
    assert top.returncode == 2 and not top.result_paths
    assert "+precison=bf16: precison is not a key of the config; did you mean precision?" \
        in top.output
    nested = run_bench(*FAST, "+task.epochz=3")
    assert nested.returncode == 2 and "did you mean task.epochs?" in nested.output
    # where the schema has an open mapping, adding is what `+` is for
    added = run_bench(*FAST, "task=cnn", "+framework.env.BENCH_TEST_VARIABLE=1")
    assert added.returncode == 0, added.output
    assert added.result["config"]["framework"]["env"]["BENCH_TEST_VARIABLE"] == "1"
