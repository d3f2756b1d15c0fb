"""`python -m bench tune framework=<fw> task=<task> [precision=...] [overrides...] [flags]`:
the fastest setting of the framework's declared tuning switches on this host.

The framework's YAML declares what may be tried (`tuning.options`: option -> candidates,
`tuning.env`: environment variable -> values; the composed value is always the default
candidate). Every candidate runs as a real benchmark (a worker, result.json) at a short
preset (`preset=smoke` unless one is given), in rounds that alternate the candidates —
A, B, C, A, B, C, ... — in one window, so that drift on the machine hits them alike.
`task=densenet` runs shorter still unless the command line sizes it (SHORT_RUN: two steps of
64 per epoch, two epochs, so one steady-state epoch; `preset=smoke` alone is 32 steps of
DenseNet-121 per epoch, minutes each on a CPU); `task.image_size=112` quarters the cost again.

Search: every combination when there are at most GRID_LIMIT (`--search grid`), else one
switch at a time from the default (coordinate search: each switch's candidates against the
best so far, the others held; then the default against the result, once more alternating).

Choice: the candidate with the highest median throughput (training: steady-state examples/s;
inference: images/s) among those that ran `ok` in every round and whose median test accuracy
on the (learnable) data is at most `--accuracy-drop` (default 0.02: 2 points) below the
default's; a candidate replaces the one it is measured against only when it is clearly
faster: its median at least `--min-gain` (default 0.03: 3 %) above, and its slowest round
above the other's fastest (with two rounds or more), so noise does not move a setting.

Writes the host's profile (bench.run.profiles: in the cache directory, never the repository),
which `tuned=true` applies to later runs. Precision is never tuned: `--compare-precision bf16`
measures the tuned settings at bf16 against the tuned precision, alternating, and reports
the ratio without writing it anywhere a run would take it from.

Resumable: each finished round is kept in the profile's working file (`<profile>.rounds.json`);
when the same command runs again, a round that ran ok (or unsupported) is skipped and any
other runs again (more `--rounds` add rounds); Ctrl-C or SIGTERM kill the running worker and
keep what finished. `--restart` discards the working file. Where the runs or the profile go is
tried before any candidate runs.

Exit status: 0; 1 when the default configuration fails or where it writes cannot be written;
2 a bad command line or config; 130 after Ctrl-C, 143 after SIGTERM.

The package: candidates (the switches and their values), rounds (outcomes, the clearly-faster
rule, the working file), table (what is printed), profile (what is written), search (the
Tune: stages, rounds, the choice), command (the command line)."""

from .command import main

__all__ = ["main"]
