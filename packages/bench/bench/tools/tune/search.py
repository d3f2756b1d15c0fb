"""The search: the candidates' rounds run and alternated, stage by stage (every combination,
or one switch at a time), the choice, the profile. Its command line: bench.tools.tune.command."""

import contextlib
import copy
import dataclasses
import io
import itertools
import json
import sys
import time
from pathlib import Path

from omegaconf import OmegaConf, open_dict
from tqdm import tqdm

from ... import files
from ...console import bars_fit
from ...run import (
    benchmark,
    capabilities,
    config,
    environments,
    profiles,
    sweep,
    sysinfo,
)
from ...run.config import override_key
from . import profile, table
from .candidates import GRID_LIMIT, TuneError, label, settings_key, show, space, with_value
from .rounds import CandidateRounds, Work, clearly_faster

DEFAULT_PRESET = "smoke"
ROUNDS = 3
ACCURACY_DROP = 0.02
MIN_GAIN = 0.03
REFUSED = ("tuned", "hydra", "sweep", "redo")  # overrides that make no sense for one tune
# a task whose smoke run is too long to repeat per candidate: the sizes its tune adds to
# preset=smoke, each unless the command line sets it (the profile records them)
SHORT_RUN = {
    "densenet": {"preset.train_examples": 128, "preset.test_examples": 64, "preset.epochs": 2}
}


def short_run(task, keys):
    """SHORT_RUN's overrides for the task, less those whose keys a command line sets."""
    return [f"{k}={v}" for k, v in SHORT_RUN.get(task, {}).items() if k not in keys]


class DefaultFailed(TuneError):
    """The default configuration did not run: there is nothing to compare against."""


class Tune:
    def __init__(self, args, overrides):
        self.args, self.overrides = args, overrides
        self.nodes = {}
        self.base = self.node(None)
        self.cfg = OmegaConf.to_object(self.base)
        cfg = self.cfg
        self.framework, self.task = cfg.framework.name, cfg.task.name
        self.device, self.precision = cfg.device.name, cfg.precision.name
        capabilities.check(cfg)
        environments.framework_python(cfg.framework)  # not installed: say so before anything runs
        self.dims, self.default = space(cfg)
        if not self.dims:
            raise TuneError(
                f"framework={self.framework} declares nothing to tune with these "
                f"settings (tuning: in conf/framework/{self.framework}.yaml, or "
                f"framework.tuning.options.<option>=[...] on the command line)"
            )
        self.search = args.search
        if self.search == "auto":
            size = 1
            for d in self.dims:
                size *= len(d.values)
            self.search = "grid" if size <= GRID_LIMIT else "coordinate"
        if args.compare_precision:
            if args.compare_precision == self.precision:
                raise TuneError(
                    f"--compare-precision {args.compare_precision} is the "
                    f"precision being tuned; name another"
                )
            capabilities.check(OmegaConf.to_object(self.node(args.compare_precision)))
        self.key = sysinfo.host_key(self.device, cfg.device.index)
        self.profile = profiles.profile_path(
            cfg.data.cache_dir, self.key, self.framework, self.task, self.device, self.precision
        )
        self.runs_dir = (
            Path(args.out or "results/tune").absolute()
            / sysinfo.host_slug(self.key)
            / f"{self.framework}_{self.task}_{self.device}_{self.precision}"
        )
        self.skipped = self.ran = 0
        self.bar = None

    def check_writable(self):
        """Where the candidates' runs and the profile go, tried before any candidate runs:
        files.NotWritable, one line."""
        files.check_writable(
            self.runs_dir, "the candidates' runs' directory", "--out DIR puts them elsewhere"
        )
        files.check_writable(
            self.profile.parent,
            "the tuning profile's directory",
            "data.cache_dir=DIR (or BENCH_CACHE_DIR) puts it elsewhere",
        )

    def node(self, precision):
        """The composed config (a DictConfig) of the command line, at a precision."""
        if precision not in self.nodes:
            overrides = self.overrides
            if precision:  # the compared precision in place of the tuned one
                overrides = [o for o in overrides if override_key(o) != "precision"]
                overrides.append(f"precision={precision}")
            self.nodes[precision] = config.compose(overrides, typed=False)
        return self.nodes[precision]

    def fingerprint(self):
        """What a measured round depends on; a working file of another tune is not reused."""
        config = OmegaConf.to_container(self.base, resolve=True)
        config["framework"]["tuning"].pop("skip", None)  # what it leaves out: in "dimensions"
        fingerprint = {
            "framework": self.framework,
            "task": self.task,
            "device": self.device,
            "precision": self.precision,
            "host": self.key,
            "config": config,
            "dimensions": [dataclasses.asdict(d) for d in self.dims],
        }
        return json.loads(json.dumps(fingerprint))  # as the working file holds it

    # -- measuring -----------------------------------------------------------------------

    def say(self, text):
        tqdm.write(text, file=sys.stdout)  # above the progress bar, where there is one
        sys.stdout.flush()

    def run_one(self, stage, settings, precision, rnd):
        node = copy.deepcopy(self.node(None if precision == self.precision else precision))
        extra = []
        for name, value in settings["options"].items():
            OmegaConf.update(node, f"framework.options.{name}", value, merge=False)
            extra.append(f"framework.options.{name}={show(value)}")
        with open_dict(node.framework.env):
            for name, value in settings["env"].items():
                if value is not None:
                    node.framework.env[name] = value
                    extra.append(f"++framework.env.{name}={show(value)}")
        cfg = OmegaConf.to_object(node)
        name = label(settings, self.default) + (
            "" if precision == self.precision else f" {precision}"
        )
        run_dir = (
            self.runs_dir
            / sweep.bounded_name(stage)
            / sweep.bounded_name(name)
            / f"round-{rnd + 1}"
        )
        quiet = io.StringIO()  # the worker's own output is in its worker.log
        with contextlib.redirect_stdout(quiet):
            result = benchmark.run_benchmark(
                cfg, OmegaConf.to_container(node, resolve=True), run_dir, self.overrides + extra
            )
        stats = result.get("stats") or {}
        metric = "examples_per_second" if cfg.task.kind == "train" else "images_per_second"
        return {
            "stage": stage,
            "key": settings_key(settings, precision),
            "round": rnd,
            "settings": settings,
            "precision": precision,
            "status": result["status"],
            "throughput": stats.get(metric),
            "accuracy": result.get("accuracy"),
            "error": result.get("error", ""),
            "result": str(run_dir / "result.json"),
            "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        }

    def stage(self, stage, entries):
        """Every entry (settings, precision) once per round, alternating; [CandidateRounds].
        An entry that did not run ok in a round is out (a choice needs every round ok): its
        later rounds are not run (a candidate that times out would cost the whole timeout each
        round)."""
        unit = table.unit(self.cfg.task.kind)
        failed = {}
        for rnd in range(self.args.rounds):
            for settings, precision in entries:
                key = settings_key(settings, precision)
                m = self.work.get(stage, key, rnd)
                if m is None and key in failed:
                    self.bar.update(1)
                    continue
                if m is None:
                    m = self.run_one(stage, settings, precision, rnd)
                    self.work.add(m)
                    self.ran += 1
                    what = (
                        f"{m['throughput']:.1f} {unit}"
                        if m["throughput"]
                        else f"{m['status']} {m['error']}"
                    )
                    if m.get("accuracy") is not None:
                        what += f", accuracy {m['accuracy']:.4f}"
                    name = label(settings, self.default)
                    if precision != self.precision:
                        name += f" at {precision}"
                    self.say(f"tune [{stage}] round {rnd + 1}/{self.args.rounds} {name}: {what}")
                else:
                    self.skipped += 1
                if m["status"] != "ok" and key not in failed:
                    failed[key] = rnd
                    if rnd + 1 < self.args.rounds:
                        self.say(
                            f"tune [{stage}] {label(settings, self.default)}: out (not "
                            f"ok in round {rnd + 1}); its later rounds are not run"
                        )
                self.bar.update(1)
        return [
            CandidateRounds(
                s,
                p,
                [
                    m
                    for m in (
                        self.work.get(stage, settings_key(s, p), r) for r in range(self.args.rounds)
                    )
                    if m
                ],
            )
            for s, p in entries
        ]

    # -- choosing ------------------------------------------------------------------------

    def acceptable(self, outcome):
        """None when the outcome may be chosen, else why not."""
        if not outcome.ok:
            return outcome.error or "no throughput"
        if (
            outcome.accuracy is not None
            and self.default_accuracy is not None
            and outcome.accuracy < self.default_accuracy - self.args.accuracy_drop
        ):
            return (
                f"accuracy {outcome.accuracy:.4f} < the default's "
                f"{self.default_accuracy:.4f} - {self.args.accuracy_drop:g}"
            )
        return None

    def choose(self, outcomes):
        """The fastest acceptable outcome; the first (the incumbent) unless another one is
        clearly faster (`clearly_faster`)."""
        incumbent = outcomes[0]
        fine = [o for o in outcomes if self.acceptable(o) is None]
        if not fine:
            return incumbent
        if incumbent in fine:
            fine = [
                o
                for o in fine
                if o is incumbent or clearly_faster(o, incumbent, self.args.min_gain)
            ]
        return max(fine, key=lambda o: o.throughput)

    def table(self, stage, outcomes, chosen):
        self.say(
            table.stage_table(
                stage,
                outcomes,
                chosen,
                default=self.default,
                precision=self.precision,
                rounds=self.args.rounds,
                min_gain=self.args.min_gain,
                kind=self.cfg.task.kind,
                acceptable=self.acceptable,
            )
        )

    # -- the whole tune ------------------------------------------------------------------

    def planned(self):
        per = self.args.rounds
        if self.search == "grid":
            total = per * len(list(itertools.product(*(d.values for d in self.dims))))
        else:
            total = per * (sum(len(d.values) for d in self.dims) + 2)
        return total + (2 * per if self.args.compare_precision else 0)

    def run(self):
        print(
            f"tune: framework={self.framework} task={self.task} device={self.device} "
            f"precision={self.precision} on {sysinfo.host_slug(self.key)}: "
            f"{self.search} search over "
            + ", ".join(f"{d.name} {{{', '.join(show(v) for v in d.values)}}}" for d in self.dims),
            flush=True,
        )
        self.work = Work(profiles.working_path(self.profile), self.fingerprint(), self.args.restart)
        if self.work.retried:
            total = self.work.retried + len(self.work.measurements)
            print(
                f"tune: {self.work.retried} of {total} kept rounds did not run ok; they run "
                f"again (--restart discards every kept round)",
                flush=True,
            )
        self.bar = tqdm(
            total=self.planned(),
            desc="tune",
            unit="run",
            file=sys.stderr,
            disable=not bars_fit(sys.stderr),
            position=0,
        )
        try:
            chosen, speedup = self.search_settings()
            comparison = self.compare(chosen) if self.args.compare_precision else None
        finally:
            self.bar.close()
        self.write_profile(chosen, speedup)
        if comparison:
            self.say(comparison)
        print(f"profile: {self.profile}", flush=True)
        print(
            f"use it: python -m bench framework={self.framework} task={self.task} "
            f"device={self.device} precision={self.precision} tuned=true",
            flush=True,
        )
        return 0

    def search_settings(self):
        """(chosen settings, their throughput over the default's, measured together)."""
        entry = (self.default, self.precision)
        if self.search == "grid":
            combos = [self.default]
            for values in itertools.product(*(d.values for d in self.dims)):
                settings = {"options": {}, "env": {}}
                for d, v in zip(self.dims, values):
                    settings[d.kind][d.name] = v
                if settings != self.default:
                    combos.append(settings)
            outcomes = self.first_stage("grid", [(s, self.precision) for s in combos])
            chosen = self.choose(outcomes)
            self.table("grid", outcomes, chosen)
            return chosen.settings, chosen.throughput / outcomes[0].throughput
        current = self.default
        for i, d in enumerate(self.dims):
            stage = f"{d.kind}.{d.name}"
            # the best so far (holding this switch's default) first, then its other values
            entries = [(with_value(current, d, v), self.precision) for v in d.values]
            outcomes = self.first_stage(stage, entries) if i == 0 else self.stage(stage, entries)
            chosen = self.choose(outcomes)
            self.table(stage, outcomes, chosen)
            current = chosen.settings
        if current == self.default:
            self.bar.total -= 2 * self.args.rounds
            self.bar.refresh()
            return current, 1.0
        outcomes = self.stage("confirm", [entry, (current, self.precision)])
        chosen = self.choose(outcomes)
        self.table("confirm", outcomes, chosen)
        return chosen.settings, chosen.throughput / outcomes[0].throughput

    def first_stage(self, stage, entries):
        """The first stage measures the default: its accuracy is the bar for every other."""
        outcomes = self.stage(stage, entries)
        default = outcomes[0]
        if not default.ok:
            raise DefaultFailed(
                f"the default configuration did not run ({default.error}); tune "
                f"compares every candidate against it. Its runs: "
                f"{default.rounds[0]['result']}"
            )
        self.default_accuracy = default.accuracy
        return outcomes

    def compare(self, chosen):
        other = self.args.compare_precision
        outcomes = self.stage(f"precision.{other}", [(chosen, self.precision), (chosen, other)])
        self.table(f"precision.{other}", outcomes, None)
        return table.precision_comparison(other, self.precision, outcomes, self.cfg.task.kind)

    def write_profile(self, chosen, speedup):
        written = profile.write(self, chosen, speedup)
        self.say(
            f"tuned: {written['changed']} ({speedup:.2f}x the default's "
            f"{table.unit(self.cfg.task.kind)}, same window; {self.ran} runs, "
            f"{self.skipped} finished rounds kept from before)"
        )
