"""bench_torch with one deliberate conversion bug: the CNN's first kernel loads transposed
(H and W swapped). The equivalence check must catch it; everything else is bench_torch."""
from bench_torch import CAPABILITIES, OPTIONS, count_parameters, memory_stats, setup, sync, versions  # noqa: F401
