"""Training configuration: YAML files in ``configs/`` validated by pydantic.

Every section forbids unknown keys, so a typo is an error that names the key
and the nearest valid one (``ppo.lrr: unknown key; did you mean ppo.learning_rate?``)
instead of a silently ignored knob; a config given to the wrong command is
named as such (``this is a config for python -m training.train_sb3``).  ``load_config(path)`` returns a :class:`TrainConfig`; ``TrainConfig``
round-trips through ``model_dump()`` so the resolved config is stored in
every checkpoint.
"""

from __future__ import annotations

import argparse
import copy
import difflib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator, model_validator

from grinch_env.games import DEFAULT_GAME, GAMES, get_game
from training.files import atomic_write_bytes

GameName = Literal[tuple(GAMES)]  # "grinch", "gnoming"


def _check_sizes(v: list[int], given: int | list[int] | None = None) -> list[int]:
    # The range is the config's game's: _GameConfig checks it (this one only needs the game's name).
    if not v:
        raise ValueError(f"table sizes must be an int or a non-empty list of ints, got {v if given is None else given}")
    return v


def _check_size_or_sizes(v: int | list[int]) -> int | list[int]:
    if isinstance(v, int):
        _check_sizes([v], given=v)
        return v
    return _check_sizes(v)


# Table sizes, validated wherever a config names them (errors read "num_players: Value error, table sizes must be ...").
SizeList = Annotated[list[int], AfterValidator(_check_sizes)]
SizeOrSizes = Annotated[int | list[int], AfterValidator(_check_size_or_sizes)]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class _GameConfig(_Section):
    """A config for one game (``game``): its table sizes, reward mode and rule options are checked against that game."""

    @property
    def spec(self):
        return get_game(self.game)

    @field_validator("num_players", check_fields=False)
    @classmethod
    def _sizes_fit_the_game(cls, v: int | list[int], info: ValidationInfo) -> int | list[int]:
        spec = get_game(info.data.get("game", DEFAULT_GAME))  # game is the first field, so it is validated already
        sizes = [v] if isinstance(v, int) else v
        if any(n not in spec.player_counts() for n in sizes):
            game = "" if spec.name == DEFAULT_GAME else f" ({spec.title})"
            raise ValueError(f"table sizes must be an int or a non-empty list of ints in {spec.min_players}..{spec.max_players}{game}, got {v}")
        return v

    @model_validator(mode="after")
    def _fits_the_game(self) -> _GameConfig:
        spec = self.spec
        ev = getattr(self, "eval", None)
        bad = [n for n in getattr(ev, "num_players", []) if n not in spec.player_counts()]
        if bad:
            raise ValueError(f"eval.num_players: {spec.title} is played by {spec.min_players}..{spec.max_players} players, got {bad[0]}")
        mode = getattr(self, "reward_mode", None)
        if mode is None and "reward_mode" in type(self).model_fields:
            self.__dict__["reward_mode"] = spec.reward_modes[0]  # the game's default, stored resolved in checkpoints
        elif mode is not None and mode not in spec.reward_modes:
            raise ValueError(f"reward_mode: {spec.title} takes one of {list(spec.reward_modes)}, got {mode!r}")
        if spec.name != "grinch" and getattr(self, "bonus_layout", "standard") != "standard":
            raise ValueError(f"bonus_layout: {spec.title} has no bonus cards; leave bonus_layout at 'standard'")
        model = getattr(self, "model", None)
        if model is not None and spec.name != "grinch" and model.draw_lookahead:
            raise ValueError(f"model.draw_lookahead: it features the Grinch's draws; set model.draw_lookahead: false for {spec.name}")
        return self

    def game_options(self) -> dict[str, Any]:
        """Return the rule options a game of this config is created with (the Grinch's bonus layout)."""
        return {"bonus_layout": self.bonus_layout} if self.game == "grinch" else {}


class _MixedTables(_GameConfig):
    """A config whose ``num_players`` is one table size or a list of them."""

    @property
    def table_sizes(self) -> list[int]:
        """Return the table sizes as a list (one entry per size)."""
        return [self.num_players] if isinstance(self.num_players, int) else list(self.num_players)


class ModelConfig(_Section):
    hidden_sizes: list[int] = Field(default=[256, 256], description="widths of the shared MLP trunk's hidden layers (ReLU)")
    action_features: bool = Field(default=True, description="feed each action's immediate hand value (grinch_env/grinch/features.py) to the net and its logit")
    margin_baseline: bool = Field(default=True, description="with reward_mode margin, the value head predicts the rest of the game on top of the margin so far (grinch only)")
    draw_lookahead: bool = Field(default=False, description="the Grinch's first draw is featured with the best second draw after it (needs action_features)")

    @model_validator(mode="after")
    def _lookahead_needs_features(self) -> ModelConfig:
        if self.draw_lookahead and not self.action_features:
            raise ValueError("draw_lookahead: true needs action_features: true (it changes the action features)")
        return self

    @field_validator("hidden_sizes")
    @classmethod
    def _positive(cls, v: list[int]) -> list[int]:
        if not v or any(h <= 0 for h in v):
            raise ValueError(f"hidden_sizes must be a non-empty list of positive ints, got {v}")
        return v


class PPOConfig(_Section):
    learning_rate: float = Field(default=3e-4, gt=0, description="Adam learning rate")
    anneal_lr: bool = Field(default=True, description="decay the learning rate linearly to 0 over total_updates")
    gamma: float = Field(default=1.0, ge=0, le=1, description="discount per own decision within a game (1: undiscounted terminal reward)")
    gae_lambda: float = Field(default=0.95, ge=0, le=1, description="GAE lambda over a seat's own decision sequence")
    clip_coef: float = Field(default=0.2, gt=0, description="PPO ratio clipping range")
    clip_vloss: bool = Field(default=False, description="clip the value loss like the policy ratio (CleanRL's option)")
    ent_coef: float = Field(default=0.01, ge=0, description="entropy bonus coefficient (entropy over legal actions only)")
    vf_coef: float = Field(default=0.5, ge=0, description="value loss coefficient")
    max_grad_norm: float = Field(default=0.5, gt=0, description="global gradient norm clip")
    update_epochs: int = Field(default=4, ge=1, description="passes over each batch")
    minibatch_size: int = Field(default=2048, ge=1, description="decisions per gradient step")
    norm_adv: bool = Field(default=True, description="normalise advantages per minibatch")
    target_kl: float | None = Field(default=None, gt=0, description="stop the epoch loop early when approx KL exceeds this (null: never)")


class SelfPlayConfig(_Section):
    self_prob: float = Field(default=0.6, ge=0, description="weight of games where the current network plays every seat (all seats learn)")
    snapshot_prob: float = Field(default=0.3, ge=0, description="weight of games against frozen past snapshots (one learner seat)")
    baseline_probs: dict[str, float] = Field(
        default_factory=lambda: {"random": 0.05, "greedy": 0.05},
        description="weight of games against baseline agents by make_agent spec (one learner seat)",
    )
    snapshot_every: int = Field(default=10, ge=1, description="add a frozen snapshot of the learner to the pool every this many updates")
    pool_size: int = Field(default=8, ge=1, description="most snapshots kept in the pool (oldest dropped first)")

    @field_validator("baseline_probs")
    @classmethod
    def _non_negative(cls, v: dict[str, float]) -> dict[str, float]:
        bad = {k: p for k, p in v.items() if p < 0}
        if bad:
            raise ValueError(f"baseline_probs must be >= 0, got {bad}")
        return v

    @model_validator(mode="after")
    def _some_weight(self) -> SelfPlayConfig:
        if self.self_prob + self.snapshot_prob + sum(self.baseline_probs.values()) <= 0:
            raise ValueError("self_prob + snapshot_prob + sum(baseline_probs) must be > 0")
        return self


class EvalConfig(_Section):
    every: int = Field(default=10, ge=0, description="evaluate against the baselines every this many updates (0: never during training)")
    games: int = Field(default=40, ge=1, description="games per opponent and table size in a periodic evaluation")
    opponents: list[str] = Field(default=["random", "greedy"], description="make_agent specs played in periodic evaluations")
    num_players: SizeList = Field(default=[4], description="table sizes of the evaluations")
    best_metric_opponent: str = Field(default="greedy", description="opponent whose mean win rate selects best.pt")
    final_games: int = Field(default=200, ge=0, description="games per opponent and table size in the final report (0: no report)")
    final_opponents: list[str] = Field(default=["random", "greedy", "expectimax"], description="make_agent specs in the final report")
    processes: int = Field(default=1, ge=1, description="worker processes for evaluations")



class DistributedConfig(_Section):
    """Where experience is collected: this process (``local``) or Ray actors (``ray``); see training/distributed.py."""

    backend: Literal["local", "ray"] = Field(default="local", description="local: this process; ray: num_workers Ray actors (pip install -e '.[ray]')")
    num_workers: int = Field(default=1, ge=1, description="Ray actors collecting experience; PPO: each runs num_envs games per update")
    address: str = Field(default="local", min_length=1, description="local: start a private Ray instance; auto: join `ray start --head`'s cluster; or a cluster address")
    num_cpus: int | None = Field(default=None, ge=1, description="CPUs of a local Ray instance (null: all of this machine's)")
    num_cpus_per_worker: float = Field(default=1.0, gt=0, description="CPUs Ray reserves for each worker actor")
    object_store_mb: int | None = Field(default=None, ge=64, description="object store size of a local Ray instance in MiB (null: Ray's default)")
    max_retries: int = Field(default=3, ge=0, description="times one batch is re-collected after its worker died, before the run stops")


class _RunConfig(_MixedTables):
    """The first keys of a training run's config (PPO's, distillation's): the game, where the run is saved, its seed."""

    game: GameName = Field(default=DEFAULT_GAME, description="the game: grinch (Grinch Grow Your Heart) or gnoming (Gnoming A Round)")
    run_name: str = Field(default="default", min_length=1, description="checkpoint directory name under checkpoint_dir")
    checkpoint_dir: str = Field(default="checkpoints", description="parent directory of run directories")
    seed: int = Field(default=0, description="seed of every random stream (python, numpy, torch, the games, the agents' generators)")


class TrainConfig(_RunConfig):
    num_players: SizeOrSizes = Field(default=4, description="table size, or a list of sizes mixed across parallel games")
    bonus_layout: Literal["standard", "none"] = Field(default="standard", description="bonus-card layout of the rules (grinch only)")
    reward_mode: Literal["win", "margin"] | None = Field(
        default=None, description="terminal reward per seat: zero-sum win share ('win', the default) or score margin / 100"
    )
    num_envs: int = Field(default=64, ge=1, description="games played in parallel per rollout (one batched engine)")
    total_updates: int = Field(default=100, ge=1, description="PPO updates (one rollout of complete games each)")
    torch_threads: int = Field(default=1, ge=1, description="torch intra-op threads (the machine is shared)")
    save_every: int = Field(default=10, ge=1, description="write latest.pt every this many updates")
    tensorboard: bool = Field(default=True, description="write TensorBoard scalars into <run dir>/tb")
    init_checkpoint: str | None = Field(
        default=None, description="start the network from this checkpoint's weights (run directory or .pt, e.g. a distilled policy); null: fresh weights"
    )
    model: ModelConfig = Field(default_factory=ModelConfig, description="policy/value network")
    ppo: PPOConfig = Field(default_factory=PPOConfig, description="PPO hyper-parameters")
    selfplay: SelfPlayConfig = Field(default_factory=SelfPlayConfig, description="opponent pool")
    eval: EvalConfig = Field(default_factory=EvalConfig, description="periodic and final evaluation")
    distributed: DistributedConfig = Field(default_factory=DistributedConfig, description="where rollouts are collected (local or Ray workers)")




class SB3Config(_GameConfig):
    """``python -m training.train_sb3``: sb3-contrib MaskablePPO on the Gymnasium wrapper (one learner seat), for either game."""

    game: GameName = Field(default=DEFAULT_GAME, description="the game: grinch (Grinch Grow Your Heart) or gnoming (Gnoming A Round)")
    run_name: str = Field(default="sb3_maskable_ppo", min_length=1, description="checkpoint directory name under checkpoint_dir")
    checkpoint_dir: str = Field(default="checkpoints", description="parent directory of run directories")
    seed: int = Field(default=0, description="seed of the model and the environments")
    num_players: int = Field(default=4, description="table size (in the game's range: Grinch 2..6, Gnoming 3..7)")
    opponents: list[str] = Field(default=["random"], description="make_agent specs of the other seats (one repeated, or num_players - 1)")
    bonus_layout: Literal["standard", "none"] = Field(default="standard", description="bonus-card layout of the rules (grinch only)")
    reward_mode: Literal["win", "margin"] = Field(default="win", description="the learner seat's terminal reward")
    n_envs: int = Field(default=4, ge=1, description="environments in SB3's DummyVecEnv")
    total_timesteps: int = Field(default=100_000, ge=1, description="learner decisions to train on")
    net_arch: list[int] = Field(default=[256, 256], description="hidden layer widths of the policy and value MLPs")
    learning_rate: float = Field(default=3e-4, gt=0, description="Adam learning rate")
    n_steps: int = Field(default=512, ge=1, description="steps per environment per rollout")
    batch_size: int = Field(default=256, ge=1, description="minibatch size")
    n_epochs: int = Field(default=4, ge=1, description="passes over each rollout")
    gamma: float = Field(default=1.0, ge=0, le=1, description="discount per learner decision")
    gae_lambda: float = Field(default=0.95, ge=0, le=1, description="GAE lambda")
    ent_coef: float = Field(default=0.01, ge=0, description="entropy bonus coefficient")
    torch_threads: int = Field(default=1, ge=1, description="torch intra-op threads")
    eval_games: int = Field(default=100, ge=0, description="games per opponent in the final evaluation (0: none)")
    eval_opponents: list[str] = Field(default=["random", "greedy"], description="make_agent specs of the final evaluation")


class DistillEvalConfig(_Section):
    games: int = Field(default=200, ge=0, description="games per opponent and table size in the final report (0: no report)")
    opponents: list[str] = Field(default=["random", "greedy", "expectimax"], description="make_agent specs in the final report")
    num_players: SizeList = Field(default=[2, 4], description="table sizes of the final report")
    processes: int = Field(default=1, ge=1, description="worker processes for the report")



class DistillConfig(_RunConfig):
    """``python -m training.distill``: imitate a teacher agent (DAgger), giving PPO a strong starting policy."""

    run_name: str = Field(default="distill", min_length=1, description="checkpoint directory name under checkpoint_dir")
    teacher: str = Field(default="expectimax", description="make_agent spec of the agent whose decisions are imitated")
    num_players: SizeOrSizes = Field(default=[2, 2, 3, 4, 4, 5, 6], description="table size, or a list drawn from uniformly per game")
    bonus_layout: Literal["standard", "none"] = Field(default="standard", description="bonus-card layout of the rules (grinch only)")
    rounds: int = Field(default=2, ge=1, description="data rounds: round 0 plays the teacher, later rounds play the current student (DAgger)")
    games_per_round: int = Field(default=4000, ge=1, description="games played per data round")
    explore: float = Field(default=0.03, ge=0, le=1, description="round 0: chance that a decision plays a random legal action instead of the teacher's")
    processes: int = Field(default=1, ge=1, description="worker processes playing the data games")
    epochs: int = Field(default=4, ge=1, description="passes over all data gathered so far, after each round")
    batch_size: int = Field(default=1024, ge=1, description="decisions per gradient step")
    learning_rate: float = Field(default=1e-3, gt=0, description="peak Adam learning rate of each round's one-cycle schedule")
    value_coef: float = Field(default=0.5, ge=0, description="weight of the value head's regression on the actor's final margin reward")
    max_grad_norm: float = Field(default=1.0, gt=0, description="global gradient norm clip")
    validation_every: int = Field(default=20, ge=2, description="games whose index is a multiple of this are held out to measure agreement")
    torch_threads: int = Field(default=1, ge=1, description="torch intra-op threads")
    init_checkpoint: str | None = Field(default=None, description="start the student from this checkpoint's weights (null: fresh weights)")
    model: ModelConfig = Field(default_factory=ModelConfig, description="the student network (margin_baseline applies: its value head learns the margin)")
    eval: DistillEvalConfig = Field(default_factory=DistillEvalConfig, description="final evaluation report")
    distributed: DistributedConfig = Field(default_factory=DistributedConfig, description="where the data games are played (local processes or Ray workers)")




def _format_errors(err: ValidationError, source: str, schema: type[BaseModel]) -> str:
    lines = [f"invalid training config {source}:"]
    for e in err.errors():
        loc = tuple(str(p) for p in e["loc"])
        key = ".".join(loc) or "<top level>"
        if e["type"] == "extra_forbidden":
            lines.append(f"  {key}: unknown key; {_suggest_key(schema, loc)}")
        elif e["type"] == "value_error":
            lines.append(f"  {key}: {e['msg'].removeprefix('Value error, ')}")  # our validators' messages already name the value
        else:
            lines.append(f"  {key}: {e['msg']} (got {e.get('input')!r})")
    return "\n".join(lines)


def _field_paths(schema: type[BaseModel], prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Return every key of ``schema`` as a path, sections' keys included (``("ppo", "learning_rate")``)."""
    paths = []
    for name, field in schema.model_fields.items():
        paths.append((*prefix, name))
        if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel):
            paths += _field_paths(field.annotation, (*prefix, name))
    return paths


def _suggest_key(schema: type[BaseModel], loc: tuple[str, ...]) -> str:
    """Return a hint for the unknown key at ``loc``: the nearest valid key in its section, else in another section."""
    section, key = loc[:-1], loc[-1]
    paths = _field_paths(schema)
    here = [p[-1] for p in paths if p[:-1] == section]
    close = difflib.get_close_matches(key, here, n=1)
    if close:
        return f"did you mean {'.'.join((*section, close[0]))}?"
    elsewhere = difflib.get_close_matches(key, sorted({p[-1] for p in paths}), n=1)
    if elsewhere:  # e.g. learning_rate at the top level of a config whose learning rate lives in ppo:
        return "did you mean " + " or ".join(".".join(p) for p in paths if p[-1] == elsewhere[0]) + "?"
    return "valid keys here: " + ", ".join(here)


def _validates(schema: type[BaseModel], data: dict[str, Any]) -> bool:
    try:
        schema.model_validate(data)
    except ValidationError:
        return False
    return True


def _wrong_command(data: dict[str, Any], schema: type[BaseModel], source: str) -> str | None:
    """Return an error naming the command that reads ``data`` when it is a valid config of another command, else None.

    Two unknown keys at least: one alone is more likely a typo, which the per-key errors name with the nearest key.
    """
    unknown = sorted(set(data) - set(schema.model_fields))
    if len(unknown) < 2:
        return None
    for other, command in _COMMANDS.items():
        if other is not schema and set(data) <= set(other.model_fields) and _validates(other, data):
            shown = ", ".join(unknown[:4]) + (f" and {len(unknown) - 4} more" if len(unknown) > 4 else "")
            run = f"; run: {command} --config {source}" if source.endswith((".yaml", ".yml")) else ""
            return (f"invalid training config {source}: it is a config for `{command}` (keys {shown} are {other.__name__} keys), "
                    f"not for `{_COMMANDS.get(schema, schema.__name__)}`{run}")
    return None


def config_from_dict(data: dict[str, Any], source: str = "<dict>", schema: type[BaseModel] = TrainConfig) -> Any:
    """Return the validated config (a ``schema`` instance); raise ``ValueError`` naming every bad key."""
    if not isinstance(data, dict):
        raise ValueError(f"invalid training config {source}: the top level must be a mapping of keys, got {type(data).__name__}")
    try:
        return schema.model_validate(data)
    except ValidationError as err:
        raise ValueError(_wrong_command(data, schema, source) or _format_errors(err, source, schema)) from None


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Return ``data`` with ``key.sub=value`` overrides applied (values parsed as YAML)."""
    for item in overrides:
        if "=" not in item:
            raise ValueError(f"an override must look like key.sub=value, got {item!r}")
        key, raw = item.split("=", 1)
        node = data
        parts = key.split(".")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
            if not isinstance(node, dict):
                raise ValueError(f"override {item!r}: {p!r} is not a section")
        try:
            node[parts[-1]] = yaml.safe_load(raw)
        except yaml.YAMLError as err:
            raise ValueError(f"override {item!r}: the value is not valid YAML: {_yaml_problem(err)}") from None
    return data


def _yaml_problem(err: yaml.YAMLError) -> str:
    """Return PyYAML's error as one line: the problem and where (line and column counted from 1)."""
    problem = getattr(err, "problem", None) or str(err)
    mark = getattr(err, "problem_mark", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    context = getattr(err, "context", None)
    context_mark = getattr(err, "context_mark", None)
    if context and context_mark is not None:
        context = f"{context} at line {context_mark.line + 1}, column {context_mark.column + 1}"
    return f"{problem}{where}" + (f" ({context})" if context else "")


def add_run_arguments(parser: argparse.ArgumentParser, report_only_help: str = "") -> None:
    """Add the options every training command shares: --set, --run-dir, --no-progress, --no-report, --report-only."""
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="override a config value, e.g. --set eval.games=400 (repeatable)")
    parser.add_argument("--run-dir", help="run directory (default: <checkpoint_dir>/<run_name>)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    parser.add_argument("--no-report", action="store_true", help="skip the final evaluation report")
    parser.add_argument("--report-only", action="store_true",
                        help=f"train nothing: write and print the final evaluation report of the run's best.pt {report_only_help}".rstrip())


def command_parser(prog: str, description: str, example: str, override_config: bool = False) -> argparse.ArgumentParser:
    """Return a config-driven training command's parser: ``--config`` (``example`` is a config file that fits), ``--override-config``
    when ``override_config`` (for a command that keeps a run directory's config.yaml), then :func:`add_run_arguments`."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--config", required=True, help=f"YAML config ({example})")
    if override_config:
        parser.add_argument("--override-config", action="store_true",
                            help="replace a run directory's config.yaml that differs from --config (edited, or another run's)")
    add_run_arguments(parser)
    return parser


def run_directory(cfg: Any, given: str | Path | None = None) -> Path:
    """Return the run directory: ``given`` (``--run-dir``) when set, else ``<checkpoint_dir>/<run_name>``."""
    return Path(given) if given else Path(cfg.checkpoint_dir) / cfg.run_name


def run_command(parser: argparse.ArgumentParser, argv: list[str] | None, schema: type[BaseModel],
                body: Callable[[Any, Path, argparse.Namespace], None]) -> int:
    """Return the exit status of a config-driven training command: parse ``argv``, load ``--config`` (with its ``--set`` overrides) as
    ``schema``, then call ``body(cfg, run_dir, args)``.

    A bad config or input (``ValueError``, ``FileNotFoundError``) prints ``error: ...`` and gives 2; an interrupt gives
    its exit code (:class:`training.checkpoint.Interrupted`: 130 for SIGINT, 143 for SIGTERM; a plain Ctrl-C 130).
    """
    args = parser.parse_args(argv)
    try:
        cfg = load_config(args.config, args.overrides, schema=schema)
        body(cfg, run_directory(cfg, args.run_dir), args)
    except (ValueError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as err:
        return getattr(err, "exit_code", 130)
    return 0


def write_config_yaml(cfg: BaseModel, run_dir: Path, check_as: str | None = None, override: bool = False) -> None:
    """Write ``cfg`` as ``<run_dir>/config.yaml``; with ``check_as`` (the kind of config, e.g. "distillation"), first refuse to
    replace a differing one unless ``override`` (:func:`check_config_yaml`)."""
    if check_as is not None:
        check_config_yaml(cfg, run_dir, override, check_as)
    atomic_write_bytes(run_dir / "config.yaml", yaml.safe_dump(cfg.model_dump(), sort_keys=False).encode())


def load_config(path: str | Path, overrides: list[str] | None = None, schema: type[BaseModel] = TrainConfig) -> Any:
    """Return the validated config read from the YAML file ``path`` (plus ``key=value`` overrides)."""
    data = read_config_data(path)
    if overrides:
        data = apply_overrides(data, overrides)
    return config_from_dict(data, source=str(path), schema=schema)


def _flatten(data: Any, prefix: str = "") -> dict[str, Any]:
    if not isinstance(data, dict):
        return {prefix: data}
    out: dict[str, Any] = {}
    for key, value in data.items():
        out.update(_flatten(value, f"{prefix}{key}.") if isinstance(value, dict) and value else {f"{prefix}{key}": value})
    return out


def config_differences(mine: dict[str, Any], theirs: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    """Return ``(dotted key, mine, theirs)`` for every key whose value differs between two config dicts (a missing key counts as ``<unset>``)."""
    a, b = _flatten(mine), _flatten(theirs)
    unset = "<unset>"
    return [(k, a.get(k, unset), b.get(k, unset)) for k in sorted(set(a) | set(b)) if a.get(k, unset) != b.get(k, unset)]


def read_config_data(path: str | Path) -> dict[str, Any]:
    """Return the mapping in the YAML file ``path``; raise ``ValueError`` if it is missing, not YAML or not a mapping."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"config file {str(path)!r} does not exist")
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as err:
        raise ValueError(f"invalid training config {path}: not valid YAML: {_yaml_problem(err)}") from None
    if not isinstance(data, dict):
        raise ValueError(f"invalid training config {path}: the top level must be a mapping of keys, got {type(data).__name__}")
    return data


def choose_resume_config(stored: dict[str, Any], candidates: list[tuple[str, dict[str, Any]]], wins: str | None, checkpoint: str,
                         schema: type[BaseModel] = TrainConfig) -> tuple[dict[str, Any], list[str]]:
    """Return the config a resumed run continues with, and notes to print; refuse a silent difference.

    ``candidates`` are ``(where, data)`` configs the user handed over besides the checkpoint's ``stored`` one:
    ``--config FILE`` and the run directory's ``config.yaml`` (which the user may have edited).  Each is resolved
    (defaults filled in) and compared with ``stored``.  Any difference raises ``ValueError`` naming the keys,
    unless ``wins`` says which one wins: ``"given"`` (``--override-config``: the first differing candidate) or
    ``"checkpoint"`` (``--checkpoint-config``: the stored config; the caller rewrites config.yaml).
    """
    resolved_stored = config_from_dict(copy.deepcopy(stored), source=checkpoint, schema=schema).model_dump()
    differing = []
    for where, data in candidates:
        resolved = config_from_dict(copy.deepcopy(data), source=where, schema=schema).model_dump()
        diffs = config_differences(resolved, resolved_stored)
        if diffs:
            differing.append((where, data, diffs))
    if not differing:
        return copy.deepcopy(stored), []
    def describe(diffs: list[tuple[str, Any, Any]], where: str) -> str:
        shown = "; ".join(f"{k}: {mine!r} in {where}, {theirs!r} in the checkpoint" for k, mine, theirs in diffs[:8])
        return shown + (f"; and {len(diffs) - 8} more" if len(diffs) > 8 else "")
    if wins is None:
        lines = [f"the config of checkpoint {checkpoint} differs from " + " and from ".join(w for w, _, _ in differing) + ":"]
        lines += [f"  {where}: keys {', '.join(k for k, _, _ in diffs)} ({describe(diffs, where)})" for where, _, diffs in differing]
        lines.append("  say which one wins: --override-config (continue with the given values) or --checkpoint-config "
                     "(continue as the checkpoint was trained; config.yaml is rewritten from it); to change one value, use --set KEY=VALUE")
        raise ValueError("\n".join(lines))
    if wins == "checkpoint":
        return copy.deepcopy(stored), [f"--checkpoint-config: continuing with the checkpoint's config, not {where}'s values of "
                                       f"{', '.join(k for k, _, _ in diffs)}" for where, _, diffs in differing]
    where, data, diffs = differing[0]
    return copy.deepcopy(data), [f"--override-config: continuing with {where}'s values of {', '.join(k for k, _, _ in diffs)} ({describe(diffs, where)})"]


# The command that reads each kind of config, named when a config is given to another one.
_COMMANDS: dict[type[BaseModel], str] = {
    TrainConfig: "python -m training.train",
    SB3Config: "python -m training.train_sb3",
    DistillConfig: "python -m training.distill",
}

__all__ = ["DistillConfig", "DistillEvalConfig", "DistributedConfig", "EvalConfig", "ModelConfig", "PPOConfig", "SB3Config", "SelfPlayConfig", "TrainConfig", "add_run_arguments", "apply_overrides", "choose_resume_config",
           "check_config_yaml", "command_parser", "config_differences", "config_from_dict", "load_config", "read_config_data", "run_command",
           "run_directory", "write_config_yaml"]


def check_config_yaml(cfg: BaseModel, run_dir: Path, override: bool, what: str) -> None:
    """Refuse to overwrite a run directory's config.yaml that differs from ``cfg`` (edited, or another run's) unless ``override``.

    ``what`` names the kind of config in the message (e.g. "distillation").
    """
    path = run_dir / "config.yaml"
    if override or not path.is_file():
        return
    try:
        theirs = type(cfg).model_validate(yaml.safe_load(path.read_text()) or {}).model_dump()
    except Exception as err:
        raise ValueError(f"{path} is not a valid {what} config ({str(err).splitlines()[0]}); fix it, or pass --override-config to replace it") from None
    diffs = config_differences(cfg.model_dump(), theirs)
    if diffs:
        shown = "; ".join(f"{k}: {mine!r} given, {old!r} in config.yaml" for k, mine, old in diffs[:8])
        raise ValueError(f"{path} differs from the given config in keys {', '.join(k for k, _, _ in diffs)} ({shown}): "
                         "pass --override-config to continue with the given config (config.yaml is rewritten), or give that config.yaml as --config")
