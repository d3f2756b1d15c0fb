"""Sweeps in randomized interleaved rounds: every configuration once per round, each round in
a fresh seeded random order (Abedi & Brecht, "Conducting Repeatable Experiments in Highly
Variable Cloud Computing Environments", ICPE 2017), so that a slow spell of a shared host,
which lasts whole runs, falls on every configuration alike instead of on one configuration's
repeats run back to back.

A sweep repeats when it sweeps a repeat key (`seed=0,1,2`, or `repeat=...`) or asks for
`rounds.repeats=N` (the `repeat` key 0..N-1): round k holds every configuration's k-th
repeat. The plan is deterministic (`rounds.order_seed`): resuming a sweep finds the same
rounds, and its finished jobs are skipped as always (bench.run.sweep). Within a round:

- a run the host disturbed (bench.run.hostwatch: steal, other processes, the canary) is
  queued again at a random later place of the same round, at most `rounds.retries` times and
  within `rounds.max_extra` of the planned runs; the disturbed result is kept beside the new
  one (`disturbed-<attempt>/result.json`), flagged, and out of the statistics;
- with `rounds.control` (comparison presets: auto) one configuration runs twice, the second
  time under another name (`twin=copy`): an A/A control whose ratio is the noise floor;
- after the planned rounds, up to `rounds.adaptive` more rounds run the configurations whose
  median is still too uncertain (`rounds.max_interval`) or whose order against a neighbour of
  their column is undecided (bench.paired), within the same extra budget.

Each run records its place (`round`: index, of, position, attempt, sweep, order), and the
sweep's directory holds `rounds.json`: the plan and every run's start, end, status and
disturbance. `rounds.order=back_to_back` runs the jobs in the command line's product order,
as a plain Hydra sweep does, said in every result. A Slurm (submitit) sweep launches each
round as one job array: its runs are interleaved across rounds, not within one (they run at
once on the cluster's nodes).
"""

import datetime
import logging
import math
import random
import secrets
import shutil
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from .. import files, paired
from ..errors import ConfigError
from . import record, sizes

REPEAT_KEYS = ("seed", "repeat")
TWIN = "copy"  # the A/A control's second name: twin=copy
ORDERS = ("rounds", "back_to_back")
PLAN = "rounds.json"


def key_of(override):
    return override.split("=", 1)[0].lstrip("+~")


@dataclass
class Job:
    """One run of a sweep: its overrides, its configuration (the overrides less the repeat
    keys and the twin) and where the plan put it."""

    overrides: tuple
    configuration: tuple
    round: int
    twin: bool = False
    attempt: int = 1

    @property
    def name(self):
        return " ".join(self.overrides)


def check(rounds, watch):
    """ConfigError, one line, for a setting no sweep can run with."""
    if rounds.order not in ORDERS:
        raise ConfigError(f"rounds.order={rounds.order}: one of {', '.join(ORDERS)}")
    if rounds.repeats < 1:
        raise ConfigError(f"rounds.repeats={rounds.repeats}: must be 1 or more")
    if rounds.retries < 0:
        raise ConfigError(f"rounds.retries={rounds.retries}: must be 0 or more")
    if rounds.adaptive < 0:
        raise ConfigError(f"rounds.adaptive={rounds.adaptive}: must be 0 or more")
    for name in ("tie_band", "max_interval"):
        if not getattr(rounds, name) > 0:
            raise ConfigError(f"rounds.{name}={getattr(rounds, name)}: must be more than 0")
    if not rounds.max_extra >= 0:
        raise ConfigError(f"rounds.max_extra={rounds.max_extra}: must be 0 or more")
    sizes.check_watch(watch)


def configuration_of(overrides):
    return tuple(o for o in overrides if key_of(o) not in REPEAT_KEYS + ("twin",))


def plan(jobs, order="rounds", order_seed=0, control=None):
    """The rounds of a sweep's jobs (lists of overrides, Hydra's product order): [[Job]]. One
    round of the jobs as given where nothing repeats, or with order back_to_back; else one
    round per value of the repeat keys, each shuffled by its own seeded generator. control:
    the configuration (overrides less repeat keys) run a second time in each round as
    twin=copy, where the sweep repeats (an A/A pair of one run each says nothing)."""
    jobs = [tuple(j) for j in jobs]
    repeats = {}
    for j in jobs:
        repeats.setdefault(tuple(o for o in j if key_of(o) in REPEAT_KEYS), []).append(j)
    if order == "back_to_back" or len(repeats) < 2:
        index = {k: i for i, k in enumerate(repeats)}
        repeated = len(repeats) > 1  # an A/A pair of one run each says nothing
        found = []
        for j in jobs:
            job = Job(
                j, configuration_of(j), index[tuple(o for o in j if key_of(o) in REPEAT_KEYS)]
            )
            found.append(job)
            if repeated and control is not None and job.configuration == control:
                found.append(Job((*j, f"twin={TWIN}"), job.configuration, job.round, True))
        return [found]
    rounds = []
    for r, members in enumerate(repeats.values()):
        found = [Job(j, configuration_of(j), r) for j in members]
        if control is not None:
            twin = next((j for j in found if j.configuration == control), None)
            if twin is not None:
                found.append(Job((*twin.overrides, f"twin={TWIN}"), twin.configuration, r, True))
        random.Random(f"{order_seed}:{r}").shuffle(found)
        rounds.append(found)
    return rounds


class Budget:
    """Extra runs (disturbed runs again, adaptive rounds) a sweep may add: at most max_extra
    of its planned runs, rounded up."""

    def __init__(self, planned, max_extra):
        self.left = math.ceil(planned * max_extra)
        self.used = 0

    def take(self, n=1):
        if n > self.left:
            return False
        self.left, self.used = self.left - n, self.used + n
        return True


def requeue(queue, job, rng):
    """`job` again at a random place after the next one (never at once: what disturbed it may
    still be there)."""
    place = rng.randint(min(1, len(queue)), len(queue))
    queue.insert(place, job)


def figure(result):
    """A result's steady figure, higher is better (examples or images per second), or None."""
    stats = result.get("stats") or {}
    return stats.get("examples_per_second") or stats.get("images_per_second")


def column_of(configuration):
    """The configurations compared against each other: those differing only in the framework
    (its name and options) or in the twin (the A/A control against its original)."""
    return tuple(
        o for o in configuration if not key_of(o).startswith("framework") and key_of(o) != "twin"
    )


def needing_rounds(figures, max_interval, tie_band):
    """The configurations an adaptive round should run: {configuration: {round: figure}} of
    the undisturbed ok runs in; those whose median's interval is wider than max_interval
    (high / low - 1, or none yet), and both of each neighbouring pair of a column (by median)
    whose order is still undecided. Sorted, for a deterministic round."""
    wanted = set()
    for configuration, by_round in figures.items():
        interval = paired.median_interval(list(by_round.values()))
        if interval is None or interval[1] / interval[0] - 1 > max_interval:
            wanted.add(configuration)
    columns = {}
    for configuration, by_round in figures.items():
        columns.setdefault(column_of(configuration), []).append(
            (statistics.median(by_round.values()), configuration)
        )
    for members in columns.values():
        members.sort()
        for (_, a), (_, b) in zip(members, members[1:]):
            shared = sorted(set(figures[a]) & set(figures[b]))
            if not shared:
                continue
            pair = paired.paired(
                [figures[a][r] for r in shared], [figures[b][r] for r in shared], True, tie_band
            )
            if pair.verdict == paired.TOO_FEW or pair.tie_kind == paired.UNDECIDED:
                wanted.update((a, b))
    return sorted(wanted)


def next_repeat(jobs_of_round):
    """The overrides of one more repeat of these jobs: each repeat key one past the largest
    value the sweep used (seed=0,1,2: seed=3)."""
    largest = {}
    for job in jobs_of_round:
        for o in job.overrides:
            if key_of(o) in REPEAT_KEYS:
                value = o.split("=", 1)[1]
                if value.lstrip("-").isdigit():
                    largest[key_of(o)] = max(largest.get(key_of(o), -1), int(value))
    return largest


@dataclass
class Progress:
    """rounds.json: the plan and every run's record, written whole after each run."""

    directory: Path
    order: str
    order_seed: int
    sweep_id: str
    rounds: list
    runs: list = field(default_factory=list)
    extra_rounds: int = 0

    def write(self):
        files.write_json(
            self.directory / PLAN,
            {
                "order": self.order,
                "order_seed": self.order_seed,
                "sweep": self.sweep_id,
                "rounds": [[list(j.overrides) for j in r] for r in self.rounds],
                "extra_rounds": self.extra_rounds,
                "runs": self.runs,
            },
        )


def sweep_id(directory: Path):
    """The sweep's own name in its runs' `round.sweep`: kept in rounds.json, so that a resumed
    sweep's runs pair with its earlier ones and another sweep's never do."""
    try:
        kept = files.read_json(directory / PLAN)
    except ValueError:
        kept = None
    if isinstance(kept, dict) and isinstance(kept.get("sweep"), str):
        return kept["sweep"]
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    return f"{stamp}-{secrets.token_hex(4)}"


def place_overrides(job, index, of, position, order, sweep):
    """The run's `round` settings as overrides (excluded from its directory's name)."""
    return [
        *job.overrides,
        f"round.index={index}",
        f"round.of={of}",
        f"round.position={position}",
        f"round.attempt={job.attempt}",
        f"round.order={order}",
        f"round.sweep={sweep}",
    ]


def set_aside(job_dir: Path, attempt):
    """Move a disturbed run's result (and its worker's log) into disturbed-<attempt>/, where
    reports still read it, flagged, and out of the statistics."""
    aside = job_dir / f"disturbed-{attempt}"
    aside.mkdir(exist_ok=True)
    for name in ("result.json", "worker.log", "worker_result.json"):
        if (job_dir / name).exists():
            shutil.move(str(job_dir / name), str(aside / name))
    return aside


def outcome_of(result):
    """(status, disturbed, reasons) of the result a job left ({} where it left none that
    reads)."""
    state = result.get("host_state") or {}
    return result.get("status"), bool(state.get("disturbed")), list(state.get("reasons") or [])


def choose_control(sweeper, jobs, setting):
    """The A/A control's configuration (overrides less repeat keys) or None: `setting` None
    (none), "auto" (the first configuration that can run here: its framework installed, the
    combination within its capabilities) or overrides naming one ("framework=torch task=cnn")."""
    if not setting:
        return None
    configurations = list(dict.fromkeys(configuration_of(j) for j in jobs))
    if setting != "auto":
        wanted = set(setting.replace(",", " ").split())
        found = [c for c in configurations if wanted <= set(c)]
        if not found:
            raise ConfigError(
                f"rounds.control={setting}: no configuration of this sweep has "
                f"{' and '.join(sorted(wanted))}"
            )
        return found[0]
    from omegaconf import OmegaConf, open_dict

    from ..errors import BenchError
    from . import capabilities, environments

    for configuration in configurations:
        try:
            node = sweeper.hydra_context.config_loader.load_sweep_config(
                sweeper.config, list(configuration)
            )
            with open_dict(node):
                node.pop("hydra", None)  # Hydra's own node: not the run's config
            cfg = OmegaConf.to_object(node)
            capabilities.check(cfg, None)
        except (BenchError, ValueError):
            continue
        if environments.installed(cfg.framework.name)[0]:
            return configuration
    return None


def _launch(sweeper, batch, index):
    """Hydra's launcher on a batch of jobs' overrides; its JobReturns (a job that raised is
    raised here, as Hydra's basic sweeper does). The basic launcher's two lines for a batch of
    one are left out: the job line (bench.run.sweep.JobCounter) names the job."""
    quiet = logging.getLogger("hydra._internal.core_plugins.basic_launcher")
    level = quiet.level
    if len(batch) == 1:
        quiet.setLevel(logging.WARNING)
    try:
        returns = sweeper.launcher.launch(batch, initial_job_idx=index)
    finally:
        quiet.setLevel(level)
    for ret in returns:
        _ = ret.return_value
    return returns


def _job_dir(ret):
    """The directory a job wrote its result into, from its JobReturn's Hydra config."""
    node = getattr(ret, "hydra_cfg", None)
    node = getattr(node, "hydra", node)  # the whole config, or its hydra node
    try:
        return Path(str(node.runtime.output_dir))
    except AttributeError:
        return None


def next_aside(job_dir):
    """The attempt number the next disturbed result of a job directory is kept under."""
    n = 1
    while (job_dir / f"disturbed-{n}").exists():
        n += 1
    return n


def _run_round(sweeper, state, r, jobs):
    """Run one round's jobs, in order; a disturbed run queued again at a random later place
    (rounds only), while its retries and the sweep's extra budget last."""
    from . import sweep as sweeps

    cfg = state["cfg"]
    queue, position = list(jobs), 0
    rng = random.Random(f"{cfg.rounds.order_seed}:{r}:again")
    together = "submitit" in str(cfg.hydra.launcher.get("_target_", ""))
    while queue:
        batch = [queue.pop(0) for _ in range(len(queue) if together else 1)]
        launched = [
            place_overrides(job, r, state["of"], position + i, cfg.rounds.order, state["id"])
            for i, job in enumerate(batch)
        ]
        position += len(batch)
        returns = _launch(sweeper, launched, state["index"])
        state["index"] += len(batch)
        state["returns"].append(returns)
        for job, ret in zip(batch, returns):
            job_dir = _job_dir(ret)
            result = _read(job_dir)
            status, disturbed, reasons = outcome_of(result)
            state["progress"].runs.append(
                {
                    "round": r,
                    "attempt": job.attempt,
                    "twin": job.twin,
                    "overrides": list(job.overrides),
                    "directory": str(job_dir) if job_dir else None,
                    "started": result.get("started"),
                    "finished": result.get("finished"),
                    "status": status,
                    "disturbed": disturbed,
                    "reasons": reasons,
                    "figure": figure(result) if status == "ok" and not disturbed else None,
                }
            )
            again = (
                disturbed
                and cfg.rounds.order == "rounds"
                and job.attempt <= cfg.rounds.retries
                and state["budget"].take()
            )
            if again:
                state["total"] += 1
                sweeps.planned_jobs(state["total"])
                kept = set_aside(job_dir, next_aside(job_dir))
                requeue(
                    queue,
                    Job(job.overrides, job.configuration, r, job.twin, job.attempt + 1),
                    rng,
                )
                print(
                    f"sweep: disturbed ({'; '.join(reasons)}): kept in {kept}, queued again "
                    f"later in round {r + 1}",
                    flush=True,
                )
            elif disturbed:
                print(
                    f"sweep: disturbed ({'; '.join(reasons)}); not run again (rounds.retries="
                    f"{cfg.rounds.retries}, {state['budget'].left} extra runs left)",
                    flush=True,
                )
        state["progress"].write()


def _read(job_dir):
    try:
        return record.load(Path(job_dir) / "result.json") if job_dir else {}
    except (OSError, ValueError):
        return {}


def _figures(progress):
    """{configuration key: {round: figure}} of the undisturbed ok runs so far (the latest
    attempt of each), the twin a configuration of its own."""
    found = {}
    for run in progress.runs:
        if run["figure"] is None:
            continue
        key = configuration_of(run["overrides"]) + ((f"twin={TWIN}",) if run["twin"] else ())
        found.setdefault(key, {})[run["round"]] = run["figure"]
    return found


def _adaptive_rounds(sweeper, state):
    """Rounds added after the planned ones for the configurations still undecided."""
    from . import sweep as sweeps

    cfg, progress = state["cfg"], state["progress"]
    for _ in range(cfg.rounds.adaptive):
        wanted = needing_rounds(_figures(progress), cfg.rounds.max_interval, cfg.rounds.tie_band)
        if not wanted:
            print("sweep: every configuration decided: no more rounds", flush=True)
            return
        if not state["budget"].take(len(wanted)):
            print(
                f"sweep: {len(wanted)} configurations undecided, {state['budget'].left} extra "
                f"runs left (rounds.max_extra): no more rounds",
                flush=True,
            )
            return
        r = len(progress.rounds)
        values = next_repeat([j for rnd in progress.rounds for j in rnd])
        jobs = []
        for key in wanted:
            twin = f"twin={TWIN}" in key
            configuration = tuple(o for o in key if o != f"twin={TWIN}")
            overrides = (*configuration, *(f"{k}={v + 1}" for k, v in sorted(values.items())))
            jobs.append(
                Job(overrides + ((f"twin={TWIN}",) if twin else ()), configuration, r, twin)
            )
        random.Random(f"{cfg.rounds.order_seed}:{r}").shuffle(jobs)
        progress.rounds.append(jobs)
        progress.extra_rounds += 1
        state["of"] = len(progress.rounds)
        state["total"] += len(jobs)
        sweeps.planned_jobs(state["total"])
        print(
            f"sweep: round {r + 1} (adaptive): {len(jobs)} configurations still undecided",
            flush=True,
        )
        _run_round(sweeper, state, r, jobs)


def sweep(sweeper, arguments):
    """Hydra's sweep of `arguments` (with the preset's params) run in rounds; the list of
    JobReturn lists Hydra expects. `sweeper`: bench's Hydra sweeper (its config, launcher and
    hydra context)."""
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from omegaconf import OmegaConf

    from . import sweep as sweeps

    cfg = sweeper.config
    check(cfg.rounds, cfg.watch)
    parser = OverridesParser.create(config_loader=sweeper.hydra_context.config_loader)
    parsed = parser.parse_overrides(sweeper._parse_config() + list(arguments))
    (jobs,) = BasicSweeper.split_arguments(parsed, None)
    swept = {o.get_key_element() for o in parsed if o.is_sweep_override()}
    if cfg.rounds.repeats > 1:
        if swept & set(REPEAT_KEYS):
            raise ConfigError(
                f"rounds.repeats={cfg.rounds.repeats} with "
                f"{' and '.join(sorted(swept & set(REPEAT_KEYS)))} swept: give one of them"
            )
        jobs = [[*j, f"repeat={k}"] for k in range(cfg.rounds.repeats) for j in jobs]
    directory = Path(str(cfg.hydra.sweep.dir))
    directory.mkdir(parents=True, exist_ok=True)
    OmegaConf.save(cfg, directory / "multirun.yaml")
    control = choose_control(sweeper, jobs, cfg.rounds.control)
    if cfg.rounds.control and control is None:
        print("sweep: no configuration here can be the A/A control (none runs here)", flush=True)
    planned = plan(jobs, cfg.rounds.order, cfg.rounds.order_seed, control)
    # a composition error before the first job, as Hydra's basic sweeper finds it; the later
    # rounds differ from the first only in their repeat keys
    sweeper.validate_batch_is_legal([list(j.overrides) for j in planned[0]])
    progress = Progress(
        directory, cfg.rounds.order, cfg.rounds.order_seed, sweep_id(directory), planned
    )
    total = sum(len(r) for r in planned)
    sweeps.planned_jobs(total)
    if len(planned) > 1:
        print(
            f"sweep: {total} runs in {len(planned)} rounds, each in its own random order "
            f"(rounds.order_seed={cfg.rounds.order_seed})"
            + (f"; A/A control: {' '.join(control)} twice a round" if control else ""),
            flush=True,
        )
    state = {
        "cfg": cfg,
        "of": len(planned),
        "total": total,
        "id": progress.sweep_id,
        "index": 0,
        "returns": [],
        "progress": progress,
        "budget": Budget(total, cfg.rounds.max_extra),
    }
    for r, jobs_of_round in enumerate(planned):
        _run_round(sweeper, state, r, jobs_of_round)
    if cfg.rounds.order == "rounds" and len(planned) > 1:
        _adaptive_rounds(sweeper, state)
    progress.write()
    return state["returns"]
