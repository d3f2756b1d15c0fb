"""The profile a tune writes for its host (bench.run.profiles reads it for `tuned=true`):
the chosen settings, what they gained, and how they were measured."""

from omegaconf import OmegaConf

from ... import __version__, files, project_dir
from ...run import profiles, sysinfo
from .candidates import label


def write(tune, chosen, speedup):
    """Write tune's profile (a command.Tune that has finished its search) choosing `chosen`
    settings, `speedup` times the default's throughput; the profile as written."""
    finished = [m["finished"] for m in tune.work.measurements]
    profile = {
        "version": profiles.VERSION,
        "host": tune.key,
        "framework": tune.framework,
        "task": tune.task,
        "device": tune.device,
        "precision": tune.precision,
        "options": dict(chosen["options"]),
        "env": {k: v for k, v in chosen["env"].items() if v is not None},
        "changed": label(chosen, tune.default),
        "defaults": tune.default,
        "speedup": speedup,
        "search": tune.search,
        "rounds": tune.args.rounds,
        "accuracy_drop": tune.args.accuracy_drop,
        "min_gain": tune.args.min_gain,
        "overrides": tune.overrides,
        "preset": OmegaConf.to_container(tune.base.preset),
        "measured": max(finished) if finished else None,
        "rounds_file": str(tune.work.path),
        "runs": str(tune.runs_dir),
        "bench_version": __version__,
        "git_commit": sysinfo.git_commit(project_dir()),
    }
    files.write_json(tune.profile, profile)
    return profile
