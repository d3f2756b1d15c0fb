"""Rosetta Bench runtime: what runs inside every framework's interpreter.

numpy only, valid Python 3.6. Modules: `spec` (the benchmark specification as data),
`batching` (batch order), `timing` (the stopwatch), `progress` (events to the orchestrator),
`worker` (runs one benchmark from run.json).
"""

__version__ = "0.1.0"
