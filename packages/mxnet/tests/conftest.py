from bench import testing
from bench_mxnet import runtime

FRAMEWORKS = ("gluon", "mxnet")  # conf/framework/gluon.yaml, mxnet.yaml: one package

# MXNet reads its thread variables once, at import: apply the default options before any test
# module imports mxnet (every setup() in this process then uses the same ones)
_run = testing.make_run("gluon")
runtime.configure(_run, _run["framework"]["options"])
