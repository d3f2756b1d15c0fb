"""MXNet Gluon for Rosetta Bench (framework=gluon): HybridBlocks hybridised with a static
graph, autograd.record, gluon.Trainer. The runtime (threads, engine, context, AMP, sync) is
bench_mxnet.runtime, shared with the Module API."""

import collections

from bench_mxnet import runtime, weights
from bench_mxnet.runtime import memory_stats, peak_flops, sync, versions  # noqa: F401

# capabilities and options: conf/framework/gluon.yaml (checked before setup() by the runtime)
_options = {}


def options():
    return _options


def setup(run):
    _options.clear()
    _options.update(run["framework"]["options"])
    return runtime.configure(run, _options)


def count_parameters(model):
    """Trainable parameters in SPEC's convention: no running statistics (grad_req 'null'), no
    biases SPEC's model does not have (model.spec_excluded: the model zoo's zero 1x1 biases)."""
    return sum(
        int(p.data().size)
        for name, p in model.net.collect_params().items()
        if p.grad_req != "null" and name not in model.spec_excluded
    )


def tensors(model):
    """Every Parameter by its Gluon name (weights, biases, batch norm's running statistics)
    but the biases SPEC's model does not have (model.spec_excluded, zero since build_model)."""
    return weights.gluon_tensors(
        collections.OrderedDict(
            (name, p)
            for name, p in model.net.collect_params().items()
            if name not in model.spec_excluded
        )
    )
