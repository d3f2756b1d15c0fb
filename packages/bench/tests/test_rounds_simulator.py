"""A simulator with known truth: configurations of known true speed on a host whose speed moves
(slow spells that last whole runs, a monotone decline, periodic interference), swept back to
back and in interleaved rounds through the real planner (bench.run.rounds.plan, its re-runs of
disturbed runs) and judged by the real rules: back to back by the bootstrap over repeats, as
the harness did before rounds, three seeds each (bench.report.ratios.bootstrap), in eight
rounds with up to four adaptive ones (the sweeper's defaults: two retries, extra runs up to
half the planned) by the paired signed-rank interval and its tie band (bench.paired). Twenty
simulated sweeps a scenario;
the issue's error rates are asserted, and each test fails when a rule or the planner is made
worse (back to back must show a wrong order somewhere, or the simulator proves nothing).

The host: a run's figure is its true speed times the host's mean speed over the run, times a
2 % measurement noise. A run a neighbour or the hypervisor slowed by more than 8 % (spells,
periodic interference: steal and other processes' CPU show them) is flagged disturbed with
probability DETECTED; a host slower than itself without a neighbour (the decline: a throttled
or credit-starved VM) is flagged only by the canary, past its 25 % threshold.
"""

import math
import random

import pytest

from bench import paired
from bench.report import ratios
from bench.report.metrics import METRICS
from bench.run import rounds

RUN_S = 60.0  # a run's duration at true speed 1 on a quiet host
NOISE = 0.02
DETECTED = 0.9
SWEEPS = 20
ROUNDS = 8
# the true speeds: a column of five frameworks, two of them 10 % apart, two equal
TRUE = {"a": 1.00, "b": 1.10, "c": 1.50, "d": 0.70, "e": 0.70}


class Host:
    """The host's speed factor over time (1: its normal speed)."""

    def __init__(self, scenario, rng, horizon):
        self.scenario, self.rng = scenario, rng
        self.spells = []
        if scenario == "spells":  # whole-run slow spells: one to three runs long
            t = 0.0
            while t < horizon:
                t += rng.expovariate(1 / (6 * RUN_S))
                length = rng.uniform(1, 3) * RUN_S
                self.spells.append((t, t + length, rng.uniform(0.5, 0.8)))
                t += length
        self.horizon = horizon

    def speed(self, t):
        if self.scenario == "spells":
            for start, end, factor in self.spells:
                if start <= t < end:
                    return factor
            return 1.0
        if self.scenario == "decline":  # a burstable VM running out of CPU credits
            return max(0.6, 1.0 - 0.4 * t / self.horizon)
        if self.scenario == "periodic":  # a neighbour's batch job: 2 runs' time in every 10
            return 0.6 if (t % (10 * RUN_S)) < 2 * RUN_S else 1.0
        return 1.0

    def mean_speed(self, start, duration, steps=12):
        return sum(self.speed(start + duration * (i + 0.5) / steps) for i in range(steps)) / steps

    @property
    def visible(self):
        """Whether its slowness shows as steal or other processes (a neighbour), not only on
        the canary."""
        return self.scenario != "decline"


def measure(host, t, truth, rng):
    """(the run's figure, its duration, whether the watch flagged it)."""
    duration = RUN_S / truth / host.speed(t)
    factor = host.mean_speed(t, duration)
    figure = truth * factor * math.exp(rng.gauss(0, NOISE))
    seen = host.visible and factor < 0.92 and rng.random() < DETECTED
    flagged = seen or factor < 1 / 1.25  # the canary's threshold (watch.max_canary_slowdown)
    return figure, duration, flagged


def jobs(control=True):
    return [[f"framework={name}", f"seed={r}"] for r in range(ROUNDS) for name in TRUE]


def truth_of(job):
    return TRUE[dict(o.split("=") for o in job.overrides)["framework"]]


def back_to_back(host, rng, repeats=3):
    """Every configuration's repeats one after another, as the harness ran the README's bundle
    before rounds (three seeds): {name: [figures]}."""
    t, found = 0.0, {name: [] for name in TRUE}
    for name in TRUE:
        for _ in range(repeats):
            figure, duration, _ = measure(host, t, TRUE[name], rng)
            found[name].append(figure)
            t += duration
    return found


def interleaved(host, rng, retries=2, max_extra=0.5, adaptive=4):
    """The rounds bench.run.rounds plans (with the A/A control), a flagged run queued again
    later in its round, and adaptive rounds for the configurations still undecided, as the
    sweeper runs them: {name: {round: figure}} (the A/A copy named a')."""
    control = rounds.configuration_of(["framework=a"])
    planned = rounds.plan(jobs(), "rounds", rng.randrange(1000), control)
    budget = rounds.Budget(sum(len(r) for r in planned), max_extra)
    state = {"t": 0.0, "found": {}}

    def run_round(r, members):
        queue = list(members)
        while queue:
            job = queue.pop(0)
            figure, duration, flagged = measure(host, state["t"], truth_of(job), rng)
            state["t"] += duration
            if flagged and job.attempt <= retries and budget.take():
                rounds.requeue(
                    queue,
                    rounds.Job(job.overrides, job.configuration, r, job.twin, job.attempt + 1),
                    rng,
                )
                continue
            if flagged:
                continue  # kept aside, out of the statistics
            key = job.configuration + (("twin=copy",) if job.twin else ())
            state["found"].setdefault(key, {})[r] = figure

    for r, members in enumerate(planned):
        run_round(r, members)
    r = len(planned)
    for _ in range(adaptive):  # the sweeper's adaptive rounds (rounds.adaptive)
        wanted = rounds.needing_rounds(state["found"], 0.10, paired.TIE_BAND)
        if not wanted or not budget.take(len(wanted)):
            break
        extra = [
            rounds.Job(
                tuple(o for o in key if o != "twin=copy") + (f"seed={r}",),
                tuple(o for o in key if o != "twin=copy"),
                r,
                "twin=copy" in key,
            )
            for key in wanted
        ]
        rng.shuffle(extra)
        run_round(r, extra)
        r += 1
    return {
        key[0].split("=")[1] + ("'" if "twin=copy" in key else ""): by_round
        for key, by_round in state["found"].items()
    }


STEADY = METRICS["steady"]


def old_verdict(a, b):
    """The bootstrap rule of repeats run back to back: +1 a faster, -1 slower, 0 no difference."""
    ratio = ratios.bootstrap(STEADY, a, b)
    if ratio.low > 1:
        return 1
    if ratio.high < 1:
        return -1
    return 0


def new_verdict(a_rounds, b_rounds):
    shared = sorted(set(a_rounds or {}) & set(b_rounds or {}))
    if not shared:
        return 0  # every common round disturbed: no verdict, never a wrong one
    p = paired.paired([a_rounds[r] for r in shared], [b_rounds[r] for r in shared])
    return {paired.FASTER: 1, paired.SLOWER: -1}.get(p.verdict, 0)


def wrong(verdict, a, b):
    """A declared order against the truth (a tie is never wrong)."""
    truth = (TRUE[a] > TRUE[b]) - (TRUE[a] < TRUE[b])
    return verdict != 0 and verdict != truth


PAIRS = [(a, b) for a in TRUE for b in TRUE if a < b]


@pytest.mark.parametrize("scenario", ["spells", "decline", "periodic"])
def test_interleaved_rounds_keep_the_true_order_where_back_to_back_does_not(scenario):
    rng = random.Random(f"simulator:{scenario}")
    horizon = RUN_S * ROUNDS * (len(TRUE) + 1) * 2
    old_wrong = new_wrong = found_ten = aa_tie = 0
    for _ in range(SWEEPS):
        host = Host(scenario, rng, horizon)
        old = back_to_back(host, rng)
        if any(wrong(old_verdict(old[a], old[b]), a, b) for a, b in PAIRS):
            old_wrong += 1
        host = Host(scenario, rng, horizon)
        new = interleaved(host, rng)
        if any(wrong(new_verdict(new.get(a), new.get(b)), a, b) for a, b in PAIRS):
            new_wrong += 1
        if new_verdict(new.get("b"), new.get("a")) == 1:  # the true 10 % difference, found
            found_ten += 1
        if new_verdict(new.get("a"), new.get("a'")) == 0:  # the A/A control
            aa_tie += 1
    assert old_wrong >= 1, (
        f"{scenario}: back to back never went wrong: the simulator proves nothing"
    )
    assert SWEEPS - new_wrong >= 19, f"{scenario}: rounds gave a wrong order in {new_wrong} of 20"
    assert found_ten >= 16, f"{scenario}: the true 10 % difference found in {found_ten} of 20"
    assert aa_tie >= 19, f"{scenario}: the A/A control a tie in {aa_tie} of 20"


def test_the_simulated_rules_can_fail():
    """The same simulation with the paired rule's tie band at zero and a wider confidence
    claims orders it should not: the assertions above are not vacuous."""
    rng = random.Random("simulator:vacuous")
    horizon = RUN_S * ROUNDS * (len(TRUE) + 1) * 2
    aa_orders = 0
    for _ in range(SWEEPS):
        new = interleaved(Host("spells", rng, horizon), rng)
        shared = sorted(set(new["a"]) & set(new["a'"]))
        p = paired.paired(
            [new["a"][r] for r in shared], [new["a'"][r] for r in shared], True, 0.0, 0.5
        )
        aa_orders += p.verdict != paired.TIE
    assert aa_orders >= 2, aa_orders
