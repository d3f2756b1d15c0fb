"""Typed config schemas, registered once in Hydra's ConfigStore.

Each `conf/<group>/<option>.yaml` names its schema in its defaults list and sets values only,
so an unknown key or a wrongly typed value is a composition error, not a silent default.
The task schemas take their defaults from `bench_shared.spec`, where SPEC.md is written once.
"""

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from hydra import compose as hydra_compose
from hydra import initialize_config_dir
from hydra.core.config_store import ConfigStore
from omegaconf import MISSING, OmegaConf

from bench_shared import spec

from .. import conf_dir


def override_key(override: str) -> str:
    """A Hydra override's key: `+framework.options.x=1` -> `framework.options.x`."""
    return override.split("=", 1)[0].lstrip("+~")


@dataclass
class SGDConfig:
    name: str = "sgd"
    lr: float = spec.CNN.learning_rate
    momentum: float = spec.CNN.momentum  # heavy-ball


@dataclass
class AdamConfig:
    name: str = "adam"
    lr: float = spec.RNN.learning_rate
    beta1: float = spec.RNN.beta1
    beta2: float = spec.RNN.beta2
    eps: float = spec.RNN.epsilon


@dataclass
class TaskConfig:
    name: str = MISSING
    kind: str = MISSING  # "train" or "inference"
    dataset: str = MISSING
    batch_size: int = MISSING
    description: str = ""
    # end training at the first evaluation at or above the quality target (a training task's;
    # an inference task has nothing to stop: a comparison of both may set it for all)
    stop_at_target: bool = False


@dataclass
class TrainingTask(TaskConfig):
    """What every training task adds: its learning curve, its quality target and whether
    training stops there (SPEC.md, "What is timed": quality targets)."""

    # evaluate the test set at every epoch's end, outside the timed window (false: at the
    # end only); data-parallel runs evaluate at the end only
    curve: bool = True
    # the test accuracy (DenseNet: mean ROC-AUC) a run must reach, per data source
    # (synthetic, real): conf/task/<task>.yaml says how each was chosen; null: none declared
    quality_target: Dict[str, Optional[float]] = field(default_factory=dict)


@dataclass
class CnnTask(TrainingTask):
    name: str = "cnn"
    kind: str = "train"
    dataset: str = "cifar10"
    batch_size: int = spec.CNN.batch_size
    epochs: int = spec.CNN.epochs
    optimizer: SGDConfig = field(default_factory=SGDConfig)
    dropout: bool = True  # off only for the equivalence checks (`verify`)


@dataclass
class RnnTask(TrainingTask):
    name: str = "rnn"
    kind: str = "train"
    dataset: str = "imdb"
    batch_size: int = spec.RNN.batch_size
    epochs: int = spec.RNN.epochs
    optimizer: AdamConfig = field(default_factory=AdamConfig)


@dataclass
class DensenetAdamConfig(AdamConfig):
    lr: float = spec.DenseNet121.learning_rate  # per device: scaled by `devices` (SPEC)


@dataclass
class DensenetTask(TrainingTask):
    name: str = "densenet"
    kind: str = "train"
    dataset: str = "chestxray14"
    batch_size: int = spec.DenseNet121.batch_size  # per device
    epochs: int = spec.DenseNet121.epochs
    optimizer: DensenetAdamConfig = field(default_factory=DensenetAdamConfig)
    # the crop side; smaller only in tests (the same code path at a fraction of the cost)
    image_size: int = spec.DenseNet121.input_shape[1]
    augment: bool = True  # random crop + horizontal flip of the training batches


@dataclass
class Resnet50Task(TaskConfig):
    name: str = "resnet50"
    kind: str = "inference"
    dataset: str = "images224"
    batch_size: int = spec.ResNet50.batch_size
    num_batches: int = spec.ResNet50.num_batches
    warmup_passes: int = spec.ResNet50.warmup_passes


@dataclass
class Capabilities:
    tasks: List[str] = MISSING
    tasks_reason: str = ""  # why a task is missing (an inference runtime): said on refusal
    precisions: Dict[str, List[str]] = MISSING  # device -> precisions
    # precision -> why the framework lacks it (on a device the lists above leave it out of):
    # said on refusal, as tasks_reason is
    precisions_reason: Dict[str, str] = field(default_factory=dict)
    # narrower lists for some tasks: task -> device -> precisions (e.g. no bf16 GRU)
    task_precisions: Dict[str, Dict[str, List[str]]] = field(default_factory=dict)
    # device -> the data-parallel idiom it runs `devices=N` with (task densenet); a device
    # missing here refuses N > 1
    data_parallel: Dict[str, str] = field(default_factory=dict)
    # device -> how its N devices start (contract.LAUNCHES): processes (default, as torchrun
    # does), one_process (one worker drives them all) or mpiexec
    data_parallel_launch: Dict[str, str] = field(default_factory=dict)
    data_parallel_reason: str = ""  # why a device has no data-parallel idiom: said on refusal
    # why its ranks cannot span the nodes of a Slurm step (bench.run.slurm); empty: they can
    multi_node_reason: str = ""


@dataclass
class TuningConfig:
    """What `python -m bench tune` may try (bench/tools/tune/); the composed value of each is
    always the default candidate, so a list need not repeat it."""

    # option -> candidate values: keys and value types are fixed by the framework's options
    # (<name>_tuning_options, made by framework_schema below); an empty list is not tuned
    options: Any = field(default_factory=dict)
    # environment variable of its workers -> candidate values, only variables its libraries
    # read (e.g. OMP_WAIT_POLICY where it links GNU OpenMP); the default is the environment's
    env: Dict[str, List[str]] = field(default_factory=dict)
    # task -> the switches above (option or variable names) not tried for that task: one that
    # only training reads (on resnet50 its candidates would be the same run twice), or one
    # whose candidate cannot finish on that task
    skip: Dict[str, List[str]] = field(default_factory=dict)


@dataclass
class FrameworkConfig:
    name: str = MISSING  # the option name: framework=<name>
    display_name: str = MISSING
    package: str = MISSING  # import name of the Rosetta Bench package, e.g. bench_torch
    module: str = MISSING  # import name of the framework itself, e.g. torch
    nox_session: str = MISSING  # `nox -s <session>` builds its environment
    python: Optional[str] = None  # an explicit interpreter wins over discovery
    capabilities: Capabilities = field(default_factory=Capabilities)
    # tuning switches: keys and value types are fixed by conf/framework/<name>.yaml, whose
    # schema (<name>_schema, made by framework_schema below) types them
    options: Any = field(default_factory=dict)
    # allowed values of the options that take one of a few (e.g. use_ideep: [never, auto])
    option_choices: Dict[str, List[Any]] = field(default_factory=dict)
    env: Dict[str, str] = field(default_factory=dict)  # extra environment for its workers
    # directories put in front of LD_LIBRARY_PATH of its workers only; "{prefix}" is the root of
    # the worker's environment (the directory above its interpreter's bin/)
    library_path: List[str] = field(default_factory=list)
    # prefixes of its environment variables that change speed, recorded with every result
    speed_variables: List[str] = field(default_factory=list)
    # task -> overrides the shared end-to-end tests add where the smoke preset is too slow on a
    # CPU (packages/bench/tests_frameworks); the code path is the same
    test_overrides: Dict[str, List[str]] = field(default_factory=dict)
    # task -> the shared test suites' tests too slow for every commit (conformance checks,
    # smoke_run, two_processes; all: every one), marked `slow`: `nox -s <env>_extended`
    slow_tests: Dict[str, List[str]] = field(default_factory=dict)
    # a row written in R (packages/r/<r_models>/<task>.R): its worker is `Rscript
    # packages/r/worker.R run.json`, driving this environment's Python through reticulate
    r_models: Optional[str] = None
    # an R row: libraries its R worker preloads (LD_PRELOAD; "{prefix}" as in library_path, a
    # glob): the driven framework's BLAS, which R's own (Debian: the reference BLAS, global in
    # the R process) would otherwise stand in for
    r_preload: List[str] = field(default_factory=list)
    # an R row whose framework calls CBLAS (MXNet's cblas_sgemm): R's process-wide BLAS takes
    # those calls, so R's reference BLAS is refused (bench/run/r_worker.py) instead of timed
    r_cblas: bool = False
    # an R row: variables its R worker must have when R starts (variable -> option), as R loads
    # GNU OpenMP then and libgomp reads OMP_* only at load, before the worker's setup() runs;
    # an option "" is left unset, threads 0 is every usable core
    # (bench.run.worker_env.r_start_environment)
    r_start_env: Dict[str, str] = field(default_factory=dict)
    # what it needs beyond its environment (bench/run/system.py's names) -> "always", or
    # "devices" (only for devices=N): checked before a run, skipped with the install line by
    # the noxfile, listed by `python -m bench envs`
    system: Dict[str, str] = field(default_factory=dict)
    # Adam's form (bench_shared.conformance's trained-weights tolerance): "corrected", eps
    # outside the bias-corrected sqrt(v) as the reference, or "folded", eps outside sqrt(v)
    # with the corrections in the step size
    adam_epsilon: str = "corrected"
    # task -> a looser trained-weights tolerance than the conformance suite's, for a
    # difference measured and explained in the YAML (never to hide an unexplained one silently)
    trained_weights_tolerance: Dict[str, float] = field(default_factory=dict)
    tuning: TuningConfig = field(default_factory=TuningConfig)

    def __post_init__(self):
        # composition checks the options against their typed schema; after it they are data
        if dataclasses.is_dataclass(self.options):
            self.options = dataclasses.asdict(self.options)
        if dataclasses.is_dataclass(self.tuning.options):  # the options that have candidates
            self.tuning.options = {
                k: v for k, v in dataclasses.asdict(self.tuning.options).items() if v
            }


@dataclass
class DeviceConfig:
    name: str = MISSING  # cpu or gpu
    index: int = 0


@dataclass
class AgreementTolerance:
    """A quantized precision against fp32 on the same images (bench_shared.calibration)."""

    feature_error: float = MISSING  # at most: |int8 - fp32| / |fp32| over the features
    top1_agreement: float = MISSING  # at least: the fixed read-out's arg-max agrees


@dataclass
class PrecisionConfig:
    name: str = MISSING  # one of bench_shared.contract.PRECISIONS
    description: str = ""
    # `python -m bench verify` and the conformance suite against the float64 NumPy reference:
    # max |output - reference| / max |reference| of a fixed batch, and the largest relative
    # difference of the losses over the training steps (null: not checked at this precision)
    output_tolerance: Optional[float] = None
    train_tolerance: Optional[float] = None
    task_train_tolerance: Dict[str, float] = field(default_factory=dict)  # task -> a looser one
    # a quantized precision (inference only): its agreement with fp32, checked in place of
    # output_tolerance
    agreement: Optional[AgreementTolerance] = None


@dataclass
class InitConfig:
    name: str = MISSING  # native (the framework draws), neutral (NumPy draws, all load), file
    description: str = ""
    path: Optional[str] = None  # init=file: the .npz in the neutral layout to start from


@dataclass
class DataConfig:
    name: str = MISSING
    seed: int = 0
    cache_dir: Optional[str] = None  # default: $BENCH_CACHE_DIR, else ~/.cache/rosetta-bench
    verify: bool = False  # re-hash every prepared file instead of checking size and mtime
    lock_timeout_s: float = 3600.0  # wait at most this long for another run preparing the same


@dataclass
class ArchiveConfig:
    """Where one real dataset's archive comes from and what it must be (SPEC.md's values in
    conf/data/real.yaml; tests point them at their own small archives)."""

    filename: str = MISSING
    urls: List[str] = MISSING  # mirrors, tried in order; the first that works is used
    size: Optional[int] = None  # bytes; null: not checked
    md5: Optional[str] = None  # at least one of md5 and sha256 is required
    sha256: Optional[str] = None
    archive: Optional[str] = None  # a local copy, used instead of downloading


@dataclass
class DirectoryConfig:
    """A real dataset the user already has as a directory, never downloaded (ChestX-ray14)."""

    directory: Optional[str] = None


@dataclass
class RealDataConfig(DataConfig):
    name: str = "real"
    archive: Optional[str] = None  # a local copy of this run's dataset (task.dataset)
    timeout_s: float = 60.0  # per network operation (connect, each read)
    attempts: int = 3  # per mirror; each attempt resumes where the last one stopped
    cifar10: ArchiveConfig = field(default_factory=ArchiveConfig)
    imdb: ArchiveConfig = field(default_factory=ArchiveConfig)
    chestxray14: DirectoryConfig = field(default_factory=DirectoryConfig)


@dataclass
class PresetConfig:
    """Shrinks a run without changing its code path; null keeps the task's SPEC value."""

    name: str = MISSING
    train_examples: Optional[int] = None
    test_examples: Optional[int] = None
    epochs: Optional[int] = None
    inference_batches: Optional[int] = None
    timeout_s: float = 6 * 3600.0  # a worker still running after this is killed: `failed`
    # the host watch's canary, before and after the workers (watch.canary_s overrides it):
    # a second for a run of minutes, a few hundredths for a smoke run of a tenth of a second
    canary_s: float = 0.5


@dataclass
class ComparisonConfig:
    """A preset sweep (conf/comparison/<name>.yaml, `-m comparison=<name>`)."""

    name: Optional[str] = None
    require_all: bool = False  # also the frameworks whose environment is not built here


@dataclass
class WatchConfig:
    """The host watched during every run (bench.run.hostwatch, bench.run.canary): a run whose
    timed windows the host disturbed beyond these thresholds is flagged `disturbed` (its status
    stays ok), left out of the statistics and, in a sweep in rounds, run again."""

    enabled: bool = True  # false: the result says the host was not watched
    interval_s: float = 0.25  # how often /proc/stat and the run's CPU time are read
    # each canary's budget, before and after the workers (0: no canary; null: the preset's,
    # preset.canary_s, which scales it with the run); a kernel is the best of its repeats in
    # half of it
    canary_s: Optional[float] = None
    # at most this share of the CPUs' time in the timed windows stolen by the hypervisor
    max_steal: float = 0.05
    # ... taken by processes other than the run's (a CPU-bound neighbour on 2 cores: 0.5)
    max_others: float = 0.10
    # the canary at most this much slower than the host's reference (its fastest here)
    max_canary_slowdown: float = 0.25


@dataclass
class RoundsConfig:
    """How a `-m` sweep that repeats runs (bench.run.rounds): in rounds, each in a fresh seeded
    random order, a disturbed run queued again, an A/A control, adaptive rounds."""

    order: str = "rounds"  # rounds, or back_to_back (the command line's product order)
    repeats: int = 1  # N > 1: every configuration N times (repeat=0..N-1), one a round
    order_seed: int = 0  # the rounds' orders are drawn from it: a resumed sweep finds them
    retries: int = 2  # a disturbed run queued again at most this often
    max_extra: float = 0.5  # extra runs (again, adaptive) at most this share of the planned
    # the A/A control: null (none), auto (the first configuration that runs here), or the
    # overrides naming one ("framework=torch task=cnn"); it runs twice a round, as twin=copy
    control: Optional[str] = None
    adaptive: int = 0  # rounds added, at most, for configurations still undecided
    tie_band: float = 0.02  # an order is claimed only beyond this (bench.paired)
    # the 95 % interval of a configuration's median at most this wide (high / low - 1)
    max_interval: float = 0.10


@dataclass
class RoundInfo:
    """Where a sweep in rounds placed a run (set by bench.run.rounds, never by hand)."""

    index: Optional[int] = None  # the round, from 0
    of: Optional[int] = None  # rounds in the sweep (so far)
    position: Optional[int] = None  # the run's place in its round's order, from 0
    attempt: Optional[int] = None  # 2, 3, ...: run again after a disturbed attempt
    order: Optional[str] = None  # rounds or back_to_back
    sweep: Optional[str] = None  # the sweep's own name: runs pair within one sweep only


@dataclass
class Config:
    task: TaskConfig = MISSING
    framework: FrameworkConfig = MISSING
    device: DeviceConfig = MISSING
    precision: PrecisionConfig = MISSING
    init: InitConfig = MISSING
    data: DataConfig = MISSING
    preset: PresetConfig = MISSING
    seed: int = 0
    # data-parallel devices (task densenet): N GPUs, or on a CPU N worker processes sharing
    # the cores; composable in sweeps (-m devices=1,2)
    devices: int = 1
    # sweeps (bench.run.sweep): results/sweeps/<sweep>; null: a name made of the overrides
    sweep: Optional[str] = None
    redo: bool = False  # run a sweep's jobs again even where a result exists
    # apply this host's tuning profile (`python -m bench tune`; bench/run/profiles.py)
    tuned: bool = False
    comparison: ComparisonConfig = field(default_factory=ComparisonConfig)
    watch: WatchConfig = field(default_factory=WatchConfig)
    rounds: RoundsConfig = field(default_factory=RoundsConfig)
    round: RoundInfo = field(default_factory=RoundInfo)
    # a repeat of a sweep (rounds.repeats=N sets 0..N-1): like seed, not the configuration's
    repeat: int = 0
    # the A/A control's second name for one configuration (bench.run.rounds): null, or copy
    twin: Optional[str] = None


def _option_type(default):
    if default is None:
        return Optional[Any]
    return type(default) if isinstance(default, (bool, int, float, str)) else Any


def framework_schema(name, declared_options):
    """The schema of one framework's config: FrameworkConfig with its options typed from the
    defaults its YAML declares, so that an unknown option or a wrongly typed value is a
    composition error. Declared once, in the YAML; no Python per framework."""
    options = dataclasses.make_dataclass(
        f"{name}_options",
        [
            (key, _option_type(value), field(default=value))
            for key, value in declared_options.items()
        ],
    )
    # tuning candidates typed like the options they are candidates of
    candidates = dataclasses.make_dataclass(
        f"{name}_tuning_options",
        [
            (key, List[_option_type(value)], field(default_factory=list))
            for key, value in declared_options.items()
        ],
    )
    tuning = dataclasses.make_dataclass(
        f"{name}_tuning",
        [("options", candidates, field(default_factory=candidates))],
        bases=(TuningConfig,),
    )
    return dataclasses.make_dataclass(
        f"{name}_framework_config",
        [
            ("options", options, field(default_factory=options)),
            ("tuning", tuning, field(default_factory=tuning)),
        ],
        bases=(FrameworkConfig,),
    )


def register(frameworks=None):
    """The schemas at the root of the ConfigStore, not in their groups, so that they are not
    offered as options (`framework=framework_schema`); each option's file names its schema
    as `- /<name>_schema@_here_`, a framework's `- /framework_<framework>_schema@_here_` (made
    from its own file: its options typed from their defaults). frameworks: the frameworks a
    composition will name (frameworks_named), None for every one: each
    framework's schema costs about 20 ms to store, a third of a short command's start-up."""
    directory = str(conf_dir())
    if _registered.get("conf") != directory:  # another conf/ (the tests'): start again
        _registered.clear()
        _registered["conf"] = directory
        _registered["frameworks"] = set()
        cs = ConfigStore.instance()
        cs.store(name="base_config", node=Config)
        for name, node in SCHEMAS.items():
            cs.store(name=name, node=node)
    available = sorted(p.stem for p in (conf_dir() / "framework").glob("*.yaml"))
    wanted = available if frameworks is None else [f for f in frameworks if f in available]
    cs = ConfigStore.instance()
    for name in wanted:
        if name in _registered["frameworks"]:
            continue
        declared = OmegaConf.to_container(OmegaConf.load(conf_dir() / "framework" / f"{name}.yaml"))
        cs.store(
            name=f"framework_{name}_schema",
            node=framework_schema(name, declared.get("options") or {}),
        )
        _registered["frameworks"].add(name)


_registered = {}  # the conf directory whose schemas are in the ConfigStore, and its frameworks
# the schemas an option's file names (`- /<name>@_here_`), a framework's aside
SCHEMAS = {
    "cnn_schema": CnnTask,
    "rnn_schema": RnnTask,
    "resnet50_schema": Resnet50Task,
    "densenet_schema": DensenetTask,
    "device_schema": DeviceConfig,
    "precision_schema": PrecisionConfig,
    "init_schema": InitConfig,
    "data_schema": DataConfig,
    "real_data_schema": RealDataConfig,
    "preset_schema": PresetConfig,
}


def option_schema(group, option):
    """The schema (a dataclass) of conf/<group>/<option>.yaml, read from its file without
    composing: the one its defaults list names (a framework's: framework_schema of its
    options), or Config's field for the group where the file names none."""
    declared = OmegaConf.to_container(OmegaConf.load(conf_dir() / group / f"{option}.yaml"))
    if group == "framework":
        return framework_schema(option, declared.get("options") or {})
    for entry in declared.get("defaults") or []:
        name = entry.lstrip("/").split("@")[0] if isinstance(entry, str) else None
        if name in SCHEMAS:
            return SCHEMAS[name]
    return {f.name: f.type for f in dataclasses.fields(Config)}.get(group)


def frameworks_named(argv):
    """The frameworks a composition of these command-line arguments can name: the
    `framework=` values (a sweep's each) and conf/config.yaml's default (Hydra composes a
    sweep's own config without its sweep overrides); None (every one) where that cannot be
    told from the command line (a comparison preset, a glob, a range, an interpolation, a
    value Hydra's parser refuses)."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException

    named = []
    for text in argv:
        key = text.lstrip("+~").partition("=")[0]
        if key.startswith("comparison") or key == "hydra.sweeper.params.framework":
            return None
        if key != "framework" or text.startswith("-"):
            continue
        try:
            (override,) = OverridesParser.create().parse_overrides([text])
            if override.is_sweep_override() and not override.is_discrete_sweep():
                return None
            values = (
                list(override.sweep_string_iterator())
                if override.is_sweep_override()
                else [override.value()]
            )
        except HydraException:
            return None
        if any(not isinstance(v, str) or "${" in v or "*" in v for v in values):
            return None
        named += values
    declared = OmegaConf.to_container(OmegaConf.load(conf_dir() / "config.yaml"))
    default = next(
        (
            entry["framework"]
            for entry in declared.get("defaults", [])
            if isinstance(entry, dict) and isinstance(entry.get("framework"), str)
        ),
        None,
    )
    if default is None or "${" in default:
        return None
    return [*dict.fromkeys([*named, default])]


def compose(overrides=(), typed=True):
    """The config a run of these command-line overrides gets, through Hydra's Compose API (the
    one place outside `python -m bench` itself that composes): a typed Config, or with
    typed=False the DictConfig, for a caller that changes values before OmegaConf.to_object."""
    register(frameworks_named(list(overrides)))
    with initialize_config_dir(config_dir=str(conf_dir()), version_base="1.3"):
        node = hydra_compose(config_name="config", overrides=list(overrides))
    return OmegaConf.to_object(node) if typed else node
