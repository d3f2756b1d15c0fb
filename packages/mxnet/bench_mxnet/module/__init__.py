"""MXNet's symbolic Module API for Rosetta Bench (framework=mxnet): mx.sym graphs bound by
mx.mod.Module, forward_backward and update. The runtime (threads, engine, context, AMP, sync)
is bench_mxnet.runtime, shared with Gluon."""

from bench_mxnet import runtime, weights
from bench_mxnet.runtime import memory_stats, peak_flops, sync, versions  # noqa: F401

# capabilities and options: conf/framework/mxnet.yaml (checked before setup() by the runtime;
# it declares no fp16: contrib.amp's loss scaling works with gluon.Trainer only)


def setup(run):
    return runtime.configure(run, run["framework"]["options"], amp_init=False)


def count_parameters(model):
    """Trainable parameters: the Module's arg_params (running statistics are aux_params)."""
    arg_params, _ = model.mod.get_params()
    return sum(int(v.size) for v in arg_params.values())


def tensors(model):
    """The bound Module's arg_params and aux_params (batch norm's running statistics), by
    their symbol names; writes are applied together by commit()."""
    return weights.ModuleTensors(model.mod)
