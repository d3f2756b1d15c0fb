"""Config errors through the command line, in the project's words: one line naming the
closest valid key or option and what is valid, exit status 2, nothing run."""

import pytest

FAST = ["framework=fake", "preset=smoke"]


def one_line_refusal(run):
    """The run was refused before anything ran, in one line; that line."""
    assert run.returncode == 2, run.output
    assert not (run.cwd / "results").exists(), run.output
    lines = run.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].split(": ")[0] in ("bench", "tune", "prepare"), run.output
    return lines[0]


def test_schemas_are_not_offered_as_options(run_bench):
    line = one_line_refusal(run_bench("framework=nope", "task=cnn"))
    assert "framework=nope: framework has no option 'nope'" in line
    assert ", fake, " in line and "_schema" not in line, line
    line = one_line_refusal(run_bench("framework=framework_schema"))
    assert "framework has no option 'framework_schema'" in line and ", fake, " in line


@pytest.mark.parametrize(
    "args, expected",
    [
        # Hydra: "Could not override 'precison'. To append to your config use +precison=bf16"
        (
            ["precison=bf16"],
            "precison=bf16: precison is not a key of the config; did you mean "
            "precision? (keys of the config: task, framework, device, precision,",
        ),
        # Hydra: its config search path, no suggestion
        (
            ["task=cnnn"],
            "task=cnnn: task has no option 'cnnn'; did you mean task=cnn? (task: cnn, "
            "densenet, resnet50, rnn)",
        ),
        (
            ["framework=pytorch"],
            "framework=pytorch: framework has no option 'pytorch'; did you mean "
            "framework=torch? (framework: chainer, chainer_ideep, cntk, fake,",
        ),
        (["task=CNN"], "did you mean task=cnn?"),
        (
            ["precision=fp64"],
            "precision has no option 'fp64'; did you mean precision=fp16? "
            "(precision: bf16, fp16, fp32",
        ),
        (
            ["task.epochz=3"],
            "task.epochz=3: task.epochz is not a key of the config with task=cnn; "
            "did you mean task.epochs? (keys of task: name, kind,",
        ),
        (
            ["framework.options.dela_ms=5"],
            "did you mean framework.options.delay_ms? (keys of "
            "framework.options: fault, fault_rank, lr, delay_ms",
        ),
        (
            ["+task.epochs=3"],
            "+task.epochs=3: task.epochs is a key of the config already: set it "
            "without '+' (task.epochs=3)",
        ),
        # a value of the wrong type: Hydra's words, in one line
        (
            ["task.epochs=abc"],
            "task.epochs=abc: Value 'abc' of type 'str' could not be converted to Integer",
        ),
        (["seed=[1"], "seed=[1: not an override Hydra can read"),
        # an unset shell variable: the run's files would land in the current directory
        (["hydra.run.dir="], "hydra.run.dir=: an empty directory (an unset shell variable?)"),
        (["-m", "hydra.sweep.dir= ", "seed=0,1"], "hydra.sweep.dir= : an empty directory"),
        (["=cnn"], "=cnn: an override is key=value, and this one has no key"),
        # Hydra: "Ambiguous value for argument", three numbered lines
        (
            ["task=cnn,rnn"],
            "task=cnn,rnn: a list of values is a sweep: add -m (python -m bench -m "
            "task=cnn,rnn ...)",
        ),
        # a sweep whose second task lacks the key: refused before its first job runs
        (
            ["-m", "task=cnn,resnet50", "task.epochs=2"],
            "task.epochs=2: task.epochs is not a key of the config with task=resnet50",
        ),
        (["-m", "task=cnn,rnnn"], "task=rnnn: task has no option 'rnnn'; did you mean task=rnn?"),
        # Hydra: "Error resolving interpolation '${task}_${framework}'"
        (["~task"], "~task: every run has a task (task: cnn, densenet, resnet50, rnn)"),
    ],
)
def test_a_config_error_is_one_line_with_the_closest_valid_key_and_exit_2(
    run_bench, args, expected
):
    line = one_line_refusal(run_bench(*FAST, *args))
    assert expected in line, line
    assert "Config search path" not in line and "HYDRA_FULL_ERROR" not in line


@pytest.mark.parametrize(
    "args, expected",
    [
        (
            ["tune", "framework=fake", "task=cnnn"],
            "tune: task=cnnn: task has no option 'cnnn'; did you mean task=cnn?",
        ),
        (
            ["tune", "framework=pytorch", "task=rnn"],
            "tune: framework=pytorch: framework has no "
            "option 'pytorch'; did you mean framework=torch?",
        ),
        (["tune", "framework=fake", "task=rnn,cnn"], "tune: task=rnn,cnn: one value only here"),
        (
            ["tune", "framework=fake", "task=rnn", "task.epochs=abc"],
            "tune: Error merging override task.epochs=abc: Value 'abc'",
        ),
        (
            ["prepare", "task=cnn", "precison=bf16"],
            "prepare: precison=bf16: precison is not a key of the config; did you mean precision?",
        ),
    ],
)
def test_sub_commands_taking_overrides_say_a_config_error_the_same_way(run_bench, args, expected):
    line = one_line_refusal(run_bench(*args))
    assert line.startswith(expected), line


def test_overrides_may_follow_hydra_s_flags(run_bench):
    """Hydra's parser takes the overrides in one place: `... --cfg job task=rnn` would be
    "unrecognized arguments: task=rnn"."""
    run = run_bench("framework=fake", "--cfg", "job", "task=rnn")
    assert run.returncode == 0, run.output
    assert "task:\n  name: rnn\n" in run.output and "framework:\n  name: fake\n" in run.output


def test_adding_an_unknown_key_is_refused_like_setting_one(run_bench):
    top = run_bench(*FAST, "+precison=bf16")
    assert top.returncode == 2 and not top.result_paths
    assert (
        "+precison=bf16: precison is not a key of the config; did you mean precision?" in top.output
    )
    nested = run_bench(*FAST, "+task.epochz=3")
    assert nested.returncode == 2 and "did you mean task.epochs?" in nested.output
    # where the schema has an open mapping, adding is what `+` is for
    added = run_bench(*FAST, "task=cnn", "+framework.env.BENCH_TEST_VARIABLE=1")
    assert added.returncode == 0, added.output
    assert added.result["config"]["framework"]["env"]["BENCH_TEST_VARIABLE"] == "1"


def test_a_directory_name_too_long_for_the_file_system_is_one_line(run_bench):
    """A sweep= name or a hydra.sweep.dir= of 300 characters: one line naming it, not Hydra's
    OSError from a callback or the summary."""
    name = "x" * 300
    for args in ([f"sweep={name}"], [f"hydra.sweep.dir=results/{name}"]):
        run = run_bench("-m", *FAST, "task=cnn", *args)
        assert run.returncode == 1, run.output
        lines = run.output.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in run.output, run.output
        assert "a name in its path is 300 bytes long, more than the 255" in lines[0], run.output
