from bench_torch import count_parameters, memory_stats, setup, sync, tensors, versions  # noqa: F401
