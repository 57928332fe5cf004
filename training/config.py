"""The one training config: a YAML file in ``configs/`` validated by pydantic (unknown keys are errors).

Every run of ``python -m training.train`` reads one :class:`TrainConfig`: the family it trains (``algo``), the shared
sections (game, table sizes, seed, ``checkpoint``, ``budget``, ``eval``, ``distributed``) and one section per family
(``afterstate``, ``ppo``).  For example::

    algo: afterstate
    game: grinch
    num_players: 2
    checkpoint: {run_name: grinch}
    budget: {generations: 4}
    eval: {opponents: [greedy], games: 100, final_opponents: [random, greedy, expectimax], final_games: 400}
    distributed: {backend: local, num_workers: 2}
    afterstate: {games_per_generation: 6000, value: {width: 256, steps: 8000}}

The family sections hold exactly the knobs of their runners (:class:`training.learner.afterstate_run.AfterstateConfig`,
:class:`training.learner.config.LearnerConfig`): :meth:`TrainConfig.runner` maps the config onto the runner's
settings, and :func:`from_runner` maps a checkpoint's stored settings back, so ``--resume`` needs only the run
directory.  Defaults a section leaves out are the runner's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, model_validator

from training.learner.afterstate_run import AfterstateConfig
from training.learner.config import LearnerConfig, PPOSection, _set, check_table_sizes

ALGOS = ("afterstate", "ppo")


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CheckpointSection(_Section):
    """Where the run lives: ``<dir>/<run_name>/`` holds ``latest.pt``, ``config.yaml``, ``curve.csv``/``.png`` and ``report/``."""

    dir: str = Field("checkpoints", description="parent directory of run directories")
    run_name: str | None = Field(None, min_length=1, description="the run directory's name (default: the config file's stem)")
    save_every_seconds: float | None = Field(None, gt=0, description="ppo: seconds between checkpoints within a piece "
                                             "(afterstate runs save after every generation)")


class BudgetSection(_Section):
    """When the run is done: generations for the afterstate values, CPU seconds (and samples) for PPO."""

    generations: int | None = Field(None, ge=1, description="afterstate: fitted generations (default 4)")
    max_seconds: float | None = Field(None, gt=0, description="ppo: training CPU seconds over rollouts and updates (default 900)")
    max_samples: int | None = Field(None, ge=1, description="ppo: stop after this many learner decisions (default: time only)")


class EvalSection(_Section):
    """The curve (during training) and the final report (seat-rotated, paired deals: :mod:`grinch_env.evaluation`)."""

    opponents: list[str] | None = Field(None, description="the curve's opponents (afterstate: default [greedy], one "
                                        "point per generation and opponent; ppo: default [random, greedy])")
    games: int | None = Field(None, ge=0, description="games per curve point and opponent (afterstate default 200, ppo 48)")
    every_seconds: float | None = Field(None, gt=0, description="ppo: training seconds between curve points (default 120; "
                                        "afterstate: one point per generation)")
    final_opponents: list[str] | None = Field(None, description="the report's opponents (default: greedy and the game's "
                                              "strongest baseline, expectimax or search)")
    final_games: int | None = Field(None, ge=0, description="games per report opponent and table size (0: no report)")


class DistributedSection(_Section):
    """Where the self-play games are played: in this process, in local worker processes, or on Ray workers.  The
    weights do not depend on it (every game carries its own seeds)."""

    backend: Literal["local", "ray"] = Field("local", description="local processes, or Ray actors (the [ray] extra)")
    num_workers: int = Field(1, ge=1, description="worker processes or Ray actors (1 and local: this process)")
    address: str = Field("local", description="ray: 'local' starts Ray here; 'auto' or host:port joins a cluster")


# the runners' settings that the shared sections hold: runner key -> dotted key of TrainConfig, per family
_SHARED = {
    "afterstate": {"game": "game", "num_players": "num_players", "seed": "seed", "torch_threads": "torch_threads",
                   "checkpoint_dir": "checkpoint.dir", "run_name": "checkpoint.run_name", "generations": "budget.generations",
                   "eval_games": "eval.games", "final_opponents": "eval.final_opponents", "final_games": "eval.final_games",
                   "workers": "distributed.num_workers", "backend": "distributed.backend", "address": "distributed.address"},
    "ppo": {"game": "game", "num_players": "num_players", "seed": "seed", "torch_threads": "torch_threads",
            "checkpoint_dir": "checkpoint.dir", "run_name": "checkpoint.run_name", "save_every_seconds": "checkpoint.save_every_seconds",
            "max_seconds": "budget.max_seconds", "max_samples": "budget.max_samples", "eval.opponents": "eval.opponents",
            "eval.games": "eval.games", "eval.every_seconds": "eval.every_seconds", "eval.final_opponents": "eval.final_opponents",
            "eval.final_games": "eval.final_games", "workers": "distributed.num_workers", "backend": "distributed.backend",
            "address": "distributed.address"},
}
_NOT_FAMILY = {"algo", "eval", "eval_opponent", "eval_opponents", "dmc", "ppo"}  # runner keys that no family section holds


def _family_fields(model: type[BaseModel], shared: dict[str, str]) -> dict[str, Any]:
    top = {k.split(".")[0] for k in shared}
    return {k: (f.annotation, f) for k, f in model.model_fields.items() if k not in top and k not in _NOT_FAMILY}


AfterstateSection = create_model(
    "AfterstateSection", __base__=_Section, __doc__="The afterstate values' knobs (training.learner.afterstate_run).",
    **_family_fields(AfterstateConfig, _SHARED["afterstate"]))
PPOFamilySection = create_model(
    "PPOFamilySection", __base__=_Section, __doc__="The token network's self-play PPO: rollout, optimiser, network and PPO knobs "
    "(training.learner.run).", **_family_fields(LearnerConfig, _SHARED["ppo"]),
    **{k: (f.annotation, f) for k, f in PPOSection.model_fields.items()})


class TrainConfig(_Section):
    """One training run of ``python -m training.train``."""

    algo: Literal[ALGOS] = Field(description="the learning family: 'afterstate' (afterstate values, the champions') or 'ppo' "
                                 "(the token network's self-play PPO)")
    game: Literal["grinch", "gnoming"] = Field(description="grinch (Grinch Grow Your Heart, 2-6 players) or gnoming (Gnoming A Round, 3-7)")
    num_players: int | list[int] = Field(description="table size, or a list of sizes one agent learns to play at all")
    seed: int = 0
    torch_threads: int = Field(1, ge=1)
    checkpoint: CheckpointSection = Field(default_factory=CheckpointSection)
    budget: BudgetSection = Field(default_factory=BudgetSection)
    eval: EvalSection = Field(default_factory=EvalSection)
    distributed: DistributedSection = Field(default_factory=DistributedSection)
    afterstate: AfterstateSection | None = None  # type: ignore[valid-type]
    ppo: PPOFamilySection | None = None  # type: ignore[valid-type]

    @model_validator(mode="after")
    def _one_family(self) -> TrainConfig:
        check_table_sizes(self.game, self.num_players)
        other = "ppo" if self.algo == "afterstate" else "afterstate"
        if getattr(self, other) is not None:
            raise ValueError(f"algo is {self.algo!r} but the config has a {other}: section; give only the {self.algo}: section "
                             f"(or algo: {other})")
        if getattr(self, self.algo) is None:
            setattr(self, self.algo, (AfterstateSection if self.algo == "afterstate" else PPOFamilySection)())
        wrong = {"afterstate": ("budget.max_seconds", "budget.max_samples", "eval.every_seconds", "checkpoint.save_every_seconds"),
                 "ppo": ("budget.generations",)}[self.algo]
        for key in wrong:
            section, name = key.split(".")
            if getattr(getattr(self, section), name) is not None:
                raise ValueError(f"{key} is not a setting of algo {self.algo!r}; {self.algo} takes "
                                 + ("budget.generations" if self.algo == "afterstate" else "budget.max_seconds / budget.max_samples"))
        self.runner()  # the runner's own checks (opponents that load, sizes, knobs that need each other)
        return self

    def runner(self) -> AfterstateConfig | LearnerConfig:
        """The family runner's settings for this config (its defaults where the config leaves a key out)."""
        flat: dict[str, Any] = {}
        data = self.model_dump()
        for runner_key, key in _SHARED[self.algo].items():
            value = _get(data, key)
            if value is not None and runner_key.split(".")[0] in _runner_fields(self.algo):
                _set(flat, runner_key, value)
        if self.algo == "afterstate" and self.eval.opponents:
            flat["eval_opponents"] = list(self.eval.opponents)
        family = data[self.algo]
        if self.algo == "ppo":
            flat["ppo"] = {k: family.pop(k) for k in list(family) if k in PPOSection.model_fields}
        flat.update(family)
        model = AfterstateConfig if self.algo == "afterstate" else LearnerConfig
        try:
            return model.model_validate(flat)
        except ValidationError as exc:
            raise ValueError(str(exc)) from None

    @property
    def run_dir(self) -> Path:
        return Path(self.checkpoint.dir) / str(self.checkpoint.run_name)


def _runner_fields(algo: str) -> set[str]:
    return set((AfterstateConfig if algo == "afterstate" else LearnerConfig).model_fields)


def _get(data: dict[str, Any], dotted: str) -> Any:
    for k in dotted.split("."):
        if not isinstance(data, dict) or k not in data:
            return None
        data = data[k]
    return data


def from_runner(flat: dict[str, Any], algo: str) -> dict[str, Any]:
    """The :class:`TrainConfig` data of a runner's stored settings ``flat`` (a checkpoint's): the inverse of
    :meth:`TrainConfig.runner`.  Keys of retired options (a stored setting no runner reads any more) are dropped."""
    if algo not in ALGOS:
        raise ValueError(f"unknown algo {algo!r}; the trainer's families are {', '.join(ALGOS)}")
    data: dict[str, Any] = {"algo": algo}
    runner_keys = _runner_fields(algo)
    flat = dict(flat)
    for runner_key, key in _SHARED[algo].items():
        value = _get(flat, runner_key)
        if value is not None:
            _set(data, key, value)
    if algo == "afterstate":
        if flat.get("eval_opponents") or flat.get("eval_opponent"):  # eval_opponent: a checkpoint of a one-opponent curve
            _set(data, "eval.opponents", list(flat.get("eval_opponents") or [flat["eval_opponent"]]))
        family = {k: v for k, v in flat.items() if k in runner_keys and k not in _SHARED[algo] and k not in _NOT_FAMILY}
    else:
        family = {k: v for k, v in flat.items() if k in runner_keys and k.split(".")[0] not in {s.split(".")[0] for s in _SHARED[algo]}
                  and k not in _NOT_FAMILY}
        family.update({k: v for k, v in (flat.get("ppo") or {}).items() if k in PPOSection.model_fields})
    data[algo] = family
    return data


def read_yaml(path: str | Path) -> dict[str, Any]:
    """The mapping in YAML file ``path``; ``ValueError`` if it is missing, not YAML or not a mapping."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"config file {path} does not exist (the configs are in configs/, e.g. configs/grinch.yaml)")
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise ValueError(f"{path} is not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a training config is a YAML mapping, got {type(data).__name__}")
    return data


def apply_sets(data: dict[str, Any], overrides: list[str] | None) -> dict[str, Any]:
    """``data`` with dotted ``key=value`` overrides (YAML values) applied in order."""
    for item in overrides or []:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise ValueError(f"--set takes key=value with a dotted key (e.g. budget.generations=6, afterstate.value.width=128), got {item!r}")
        _set(data, key.strip(), yaml.safe_load(value))
    return data


def validate(data: dict[str, Any], source: str = "config") -> TrainConfig:
    """``data`` validated as a :class:`TrainConfig`; ``ValueError`` names every wrong key or value."""
    if "algo" not in data:
        raise ValueError(f"{source}: no algo: key; a training config names its family, one of {', '.join(ALGOS)} "
                         "(e.g. configs/grinch.yaml has algo: afterstate)")
    try:
        return TrainConfig.model_validate(data)
    except ValidationError as exc:
        raise ValueError(f"{source}: {exc}") from None


def load_config(path: str | Path, overrides: list[str] | None = None) -> TrainConfig:
    """The validated config of YAML ``path`` with ``key=value`` overrides; its run name defaults to the file's stem."""
    data = apply_sets(read_yaml(path), overrides)
    if isinstance(data.get("checkpoint"), dict | None) and not (data.get("checkpoint") or {}).get("run_name"):
        data.setdefault("checkpoint", {})
        data["checkpoint"] = {**(data["checkpoint"] or {}), "run_name": Path(path).stem}
    return validate(data, str(path))


def dump_yaml(cfg: TrainConfig) -> str:
    """``cfg`` as the YAML a run directory's ``config.yaml`` holds (the other family's empty section left out)."""
    data = cfg.model_dump(exclude_none=True)
    return yaml.safe_dump(data, sort_keys=False)


def flatten(data: Any, prefix: str = "") -> dict[str, Any]:
    """``data``'s leaves by dotted key (a list or an empty mapping is one leaf)."""
    if not isinstance(data, dict) or not data:
        return {prefix[:-1]: data} if prefix else {}
    out: dict[str, Any] = {}
    for key, value in data.items():
        out.update(flatten(value, f"{prefix}{key}."))
    return out


def runner_changes(saved: dict[str, Any], wanted: dict[str, Any]) -> list[str]:
    """The runner overrides (``key=<json>``) that turn stored runner settings ``saved`` into ``wanted``."""
    a, b = flatten(saved), flatten(wanted)
    return [f"{k}={json.dumps(b[k])}" for k in b if a.get(k) != b[k]]


__all__ = ["ALGOS", "AfterstateSection", "BudgetSection", "CheckpointSection", "DistributedSection", "EvalSection", "PPOFamilySection",
           "TrainConfig", "apply_sets", "dump_yaml", "flatten", "from_runner", "load_config", "read_yaml", "runner_changes", "validate"]
