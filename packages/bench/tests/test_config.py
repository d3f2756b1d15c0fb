"""The configs through Hydra's Compose API: typed, SPEC's defaults, typos rejected."""

import dataclasses

import pytest
from hydra import compose, initialize_config_dir
from hydra.errors import ConfigCompositionException
from omegaconf import OmegaConf

import bench
from bench.run import benchmark, capabilities, config
from bench_shared import contract, spec


def compose_typed(*overrides):
    config.register()
    with initialize_config_dir(config_dir=str(bench.conf_dir()), version_base="1.3"):
        cfg = compose(config_name="config", overrides=list(overrides))
    return OmegaConf.to_object(cfg)


@pytest.mark.parametrize(
    "task,schema",
    [("cnn", config.CnnTask), ("rnn", config.RnnTask), ("resnet50", config.Resnet50Task)],
)
def test_each_task_arrives_as_its_own_dataclass(task, schema):
    cfg = compose_typed(f"task={task}")
    assert type(cfg) is config.Config
    assert type(cfg.task) is schema  # Hydra must not lose the subclass
    # each framework's schema is made from its YAML: a FrameworkConfig whose options are typed
    assert isinstance(cfg.framework, config.FrameworkConfig)
    assert type(cfg.framework).__name__ == "torch_framework_config"
    assert type(cfg.framework.options) is dict  # plain data once composed


def test_defaults_follow_spec():
    cnn = compose_typed("task=cnn").task
    assert (cnn.epochs, cnn.batch_size) == (10, 64)
    assert (cnn.optimizer.name, cnn.optimizer.lr, cnn.optimizer.momentum) == ("sgd", 0.01, 0.9)
    rnn = compose_typed("task=rnn").task
    assert (rnn.epochs, rnn.batch_size, rnn.optimizer.name) == (3, 64, "adam")
    assert (rnn.optimizer.lr, rnn.optimizer.beta1, rnn.optimizer.beta2, rnn.optimizer.eps) == (
        0.001,
        0.9,
        0.999,
        1e-8,
    )
    resnet = compose_typed("task=resnet50").task
    assert resnet.batch_size * resnet.num_batches == 1280 and resnet.warmup_passes == 1
    cfg = compose_typed()
    assert (cfg.task.name, cfg.device.name, cfg.precision.name, cfg.preset.name) == (
        "cnn",
        "cpu",
        "fp32",
        "full",
    )


def test_presets_shrink_without_changing_the_task():
    full = compose_typed("task=cnn", "preset=full")
    assert benchmark.effective_task(full)["epochs"] == spec.CNN.epochs
    smoke = compose_typed("task=cnn", "preset=smoke")
    assert benchmark.effective_task(smoke)["epochs"] == smoke.preset.epochs < spec.CNN.epochs
    assert dataclasses.asdict(smoke.task) == dataclasses.asdict(full.task)
    quick = compose_typed("task=resnet50", "preset=quick")
    assert benchmark.effective_task(quick)["num_batches"] == quick.preset.inference_batches


@pytest.mark.parametrize(
    "override",
    [
        "task.epochz=3",
        "task.epochs=ten",
        "device.index=x",
        "task=cnn_v2",
        "preset.train_examples=many",
        "framework.options.new_switch=1",
        "bogus=1",
    ],
)
def test_unknown_keys_and_bad_values_are_errors(override):
    with pytest.raises(ConfigCompositionException):
        compose_typed(override)


def test_option_types_come_from_the_declared_defaults():
    cfg = compose_typed(
        "framework=torch", "framework.options.compile=true", "framework.options.threads=4"
    )
    assert cfg.framework.options["compile"] is True and cfg.framework.options["threads"] == 4
    for bad in (
        "framework.options.compile=maybe",
        "framework.options.threads=1.5",
        "framework.options.threads=four",
    ):
        with pytest.raises(ConfigCompositionException):
            compose_typed("framework=torch", bad)


def test_tuning_candidates_are_typed_like_their_options():
    cfg = compose_typed("framework=torch", "framework.tuning.options.threads=[1,2]")
    assert cfg.framework.tuning.options["threads"] == [1, 2]
    assert type(cfg.framework.tuning.options) is dict  # plain data, options without candidates
    assert "tf32" not in cfg.framework.tuning.options  # left out
    for bad in (
        "framework.tuning.options.compile=[maybe]",
        "framework.tuning.options.new_switch=[1]",
        "framework.tuning.options.threads=four",
    ):
        with pytest.raises(ConfigCompositionException):
            compose_typed("framework=torch", bad)


@pytest.mark.parametrize("framework", capabilities.framework_names())
def test_declared_tuning_candidates_are_values_the_options_allow(framework):
    fw = compose_typed(f"framework={framework}").framework
    for option, candidates in fw.tuning.options.items():
        allowed = fw.option_choices.get(option)
        assert allowed is None or set(candidates) <= set(allowed), (option, candidates)
    for variable, values in fw.tuning.env.items():
        assert variable.isupper() and all(isinstance(v, str) for v in values), variable


@pytest.mark.parametrize("task", sorted(spec.TASKS))
def test_the_runtime_run_schema_agrees_with_the_task_schema(task):
    """bench_shared.contract.task_config (what tests and the CNTK environment build runs with)
    has exactly the orchestrator's task fields and SPEC defaults."""
    from bench_shared import contract

    composed = dataclasses.asdict(compose_typed(f"task={task}").task)
    composed["description"] = ""
    assert contract.task_config(task) == composed
    run = benchmark.worker_run(
        compose_typed(f"task={task}", "framework=torch"), {"arrays": {}, "limits": {}}
    )
    assert set(contract.RUN_FIELDS) <= set(run)
    assert set(run) <= set(contract.RUN_FIELDS) | set(contract.OPTIONAL_RUN_FIELDS)
    assert ("quality_target" in run) == (task != "resnet50")
    contract.check_run(run)


@pytest.mark.parametrize("framework", capabilities.framework_names())
def test_every_framework_config_composes_and_declares_capabilities(framework):
    cfg = compose_typed(f"framework={framework}")
    assert cfg.framework.name == framework
    assert set(cfg.framework.capabilities.tasks) <= set(spec.TASKS)
    caps = cfg.framework.capabilities
    for device, precisions in caps.precisions.items():
        assert device in ("cpu", "gpu") and set(precisions) <= set(contract.PRECISIONS)
    assert set(caps.precisions_reason) <= set(contract.PRECISIONS)
    for task, narrower in caps.task_precisions.items():  # only narrows the device's list
        assert task in caps.tasks
        for device, precisions in narrower.items():
            assert set(precisions) <= set(caps.precisions[device]), (task, device)


def test_a_task_may_narrow_the_precisions_of_its_device():
    narrow = "+framework.capabilities.task_precisions={rnn: {cpu: [fp32]}}"
    capabilities.check(compose_typed("framework=torch", "task=cnn", "precision=bf16", narrow))
    cfg = compose_typed("framework=torch", "task=rnn", "precision=bf16", narrow)
    with pytest.raises(bench.errors.UnsupportedError) as refused:
        capabilities.check(cfg)
    assert str(refused.value) == (
        "precision=bf16 is not supported by framework=torch for "
        "task=rnn on device=cpu; supported there: fp32"
    )


def test_a_refused_task_says_why_where_the_framework_declares_it():
    narrow = [
        "framework.capabilities.tasks=[resnet50]",
        "framework.capabilities.tasks_reason='an inference runtime'",
    ]
    with pytest.raises(bench.errors.UnsupportedError) as refused:
        capabilities.check(compose_typed("framework=torch", "task=cnn", *narrow))
    assert str(refused.value) == (
        "task=cnn is not supported by framework=torch (an inference "
        "runtime); supported tasks: resnet50"
    )
    with pytest.raises(bench.errors.UnsupportedError) as refused:
        capabilities.check(compose_typed("framework=torch", "task=cnn", narrow[0]))
    assert str(refused.value) == (
        "task=cnn is not supported by framework=torch; supported tasks: resnet50"
    )


def test_a_refused_precision_says_why_where_the_framework_declares_it():
    cfg = compose_typed("framework=onnxruntime", "task=resnet50", "precision=bf16")
    with pytest.raises(bench.errors.UnsupportedError) as refused:
        capabilities.check(cfg)
    reason = cfg.framework.capabilities.precisions_reason["bf16"]
    assert str(refused.value) == (
        f"precision=bf16 is not supported by framework=onnxruntime on "
        f"device=cpu ({reason}); supported there: fp32, int8"
    )
    assert "\n" not in str(refused.value)


def test_a_quantized_precision_is_for_inference_tasks_only():
    """int8 is post-training quantization: a training task at int8 is refused in one line that
    names the inference tasks, whatever the framework declares."""
    cfg = compose_typed(
        "framework=torch",
        "task=cnn",
        "precision=int8",
        "framework.capabilities.precisions={cpu: [fp32, int8]}",
    )
    with pytest.raises(bench.errors.UnsupportedError) as refused:
        capabilities.check(cfg)
    assert str(refused.value) == (
        "precision=int8 quantizes a trained model for inference: "
        "task=cnn trains; inference tasks: resnet50"
    )
    capabilities.check(
        compose_typed(
            "framework=torch",
            "task=resnet50",
            "precision=int8",
            "framework.capabilities.precisions={cpu: [fp32, int8]}",
        )
    )


def test_every_precision_has_its_config_and_tolerances():
    """conf/precision/ holds one file per precision the runtime knows (contract.PRECISIONS),
    each with the tolerances verify and the conformance suite apply: an output tolerance,
    or for a quantized precision its agreement with fp32."""
    names = sorted(p.stem for p in (bench.conf_dir() / "precision").glob("*.yaml"))
    assert names == sorted(contract.PRECISIONS)
    for name in names:
        precision = compose_typed(f"precision={name}").precision
        assert type(precision) is config.PrecisionConfig and precision.name == name
        if name in contract.QUANTIZED:
            assert type(precision.agreement) is config.AgreementTolerance
            assert 0 < precision.agreement.feature_error < 1
            assert 0 < precision.agreement.top1_agreement <= 1
        else:
            assert 0 < precision.output_tolerance < 1 and 0 < precision.train_tolerance < 1


def test_an_unknown_precision_names_the_known_ones():
    with pytest.raises(ConfigCompositionException) as refused:
        compose_typed("precision=int4")
    assert "Could not find 'precision/int4'" in str(refused.value)


def test_task_framework_tweaks_apply_to_their_combination_only():
    assert compose_typed("task=resnet50", "framework=torch").framework.options["compile"] is True
    assert compose_typed("task=cnn", "framework=torch").framework.options["compile"] is False
    # the command line still wins
    cfg = compose_typed("task=resnet50", "framework=torch", "framework.options.compile=false")
    assert cfg.framework.options["compile"] is False
