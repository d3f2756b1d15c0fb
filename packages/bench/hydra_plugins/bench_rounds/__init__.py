"""Rosetta Bench's Hydra sweeper: Hydra's basic sweep (its overrides, their product, the
launcher), its jobs run in randomized interleaved rounds by bench.run.rounds. A Hydra plugin
lives in the hydra_plugins namespace; bench.run.hydra_hooks registers it by hand, as an
editable install's namespace package is not one Hydra's plugin scan can walk. It subclasses
Sweeper, not BasicSweeper: Hydra's scan executes its core plugins' modules again, and a
subclass of the first BasicSweeper is no instance of the second."""

from typing import Any, Optional

from hydra.plugins.sweeper import Sweeper


class RoundsSweeper(Sweeper):
    def __init__(self, max_batch_size: Optional[int] = None, params: Optional[dict] = None):
        super().__init__()
        self.params = params or {}
        self.max_batch_size = max_batch_size  # Hydra's basic sweeper's: rounds set batches
        self.hydra_context = self.config = self.launcher = None

    def setup(self, *, hydra_context, task_function, config) -> None:
        from hydra.core.plugins import Plugins

        self.hydra_context, self.config = hydra_context, config
        self.launcher = Plugins.instance().instantiate_launcher(
            hydra_context=hydra_context, task_function=task_function, config=config
        )

    def _parse_config(self):
        return [f"{k}={v}" for k, v in self.params.items()]

    def sweep(self, arguments) -> Any:
        from bench.run import rounds  # the rounds themselves: only when a sweep runs

        return rounds.sweep(self, arguments)
