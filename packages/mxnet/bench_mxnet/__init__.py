"""MXNet 1.9 for Rosetta Bench, in its two API styles: `bench_mxnet.gluon` (framework=gluon:
HybridBlocks, autograd, gluon.Trainer) and `bench_mxnet.module` (framework=mxnet: the symbolic
Module API). Both share runtime.py (threads, engine, context, AMP, sync) and weights.py.

Nothing here imports mxnet: MXNet reads its thread variables when it loads, so the import
waits for setup() (runtime.configure) to set them."""
