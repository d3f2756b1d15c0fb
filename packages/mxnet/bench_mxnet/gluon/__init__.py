"""MXNet Gluon for Rosetta Bench (framework=gluon): HybridBlocks hybridised with a static
graph, autograd.record, gluon.Trainer. The runtime (threads, engine, context, AMP, sync) is
bench_mxnet.runtime, shared with the Module API."""
from bench_mxnet import runtime
from bench_mxnet.runtime import memory_stats, peak_flops, sync, versions  # noqa: F401

# The same values as conf/framework/gluon.yaml (tests/test_declared.py checks)
CAPABILITIES = {
    "tasks": ["cnn", "resnet50", "rnn"],
    "precisions": {"cpu": ["fp32", "bf16"], "gpu": ["fp32", "fp16"]},
    "task_precisions": {"rnn": {"cpu": ["fp32"]}},  # runtime.BF16_RNN says why
}
OPTIONS = ("threads", "worker_threads", "engine", "omp_wait_policy", "hybridize")
_options = {}


def options():
    return _options


def setup(run):
    _options.clear()
    _options.update(run["framework"]["options"])
    runtime.check_options("gluon", _options, OPTIONS)
    return runtime.configure(run, _options)


def count_parameters(model):
    """Trainable parameters in SPEC's convention: no running statistics (grad_req 'null'), no
    biases SPEC's model does not have (model.spec_excluded: the model zoo's zero 1x1 biases)."""
    return sum(int(p.data().size) for name, p in model.net.collect_params().items()
               if p.grad_req != "null" and name not in model.spec_excluded)
