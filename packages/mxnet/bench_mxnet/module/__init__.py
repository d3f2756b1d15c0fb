"""MXNet's symbolic Module API for Rosetta Bench (framework=mxnet): mx.sym graphs bound by
mx.mod.Module, forward_backward and update. The runtime (threads, engine, context, AMP, sync)
is bench_mxnet.runtime, shared with Gluon."""
from bench_mxnet import runtime
from bench_mxnet.runtime import memory_stats, peak_flops, sync, versions  # noqa: F401

# The same values as conf/framework/mxnet.yaml (tests/test_declared.py checks)
CAPABILITIES = {
    "tasks": ["cnn", "resnet50", "rnn"],
    "precisions": {"cpu": ["fp32", "bf16"], "gpu": ["fp32"]},
    "task_precisions": {"rnn": {"cpu": ["fp32"]}},  # runtime.BF16_RNN says why
}
OPTIONS = ("threads", "worker_threads", "engine", "omp_wait_policy")


def setup(run):
    options = run["framework"]["options"]
    runtime.check_options("mxnet", options, OPTIONS)
    if run["device"]["name"] == "gpu" and run["precision"] == "fp16":
        raise NotImplementedError(
            "precision=fp16 is not supported by framework=mxnet (the Module API): MXNet 1.9's "
            "AMP loss scaling works with gluon.Trainer only; use framework=gluon")
    return runtime.configure(run, options, amp_init=False)


def count_parameters(model):
    """Trainable parameters: the Module's arg_params (running statistics are aux_params)."""
    arg_params, _ = model.mod.get_params()
    return sum(int(v.size) for v in arg_params.values())
