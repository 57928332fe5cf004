"""What the two library bridges (``python -m training.train_sb3``, ``python -m training.train_rllib``) share: the config
conventions of the one trainer (:mod:`training.config`) and the command line around them.

A bridge's YAML has the trainer's shared keys and one section of its own (``sb3:`` or ``rllib:``)::

    game: grinch
    num_players: 4
    seed: 0
    torch_threads: 1
    checkpoint: {dir: checkpoints, run_name: sb3_maskable_ppo}   # run_name defaults to the config file's stem
    eval: {final_opponents: [random, greedy], final_games: 200}   # the report after training (0: none)
    sb3: {total_timesteps: 300000, ...}

Every section forbids unknown keys; an error names the key and the nearest valid one
(``sb3.total_steps: unknown key; did you mean sb3.total_timesteps?``), and a config of another command says which
command reads it.  The command line: ``--config FILE`` and ``--set KEY=VALUE`` (dotted keys, YAML values, repeatable),
``--resume`` (go on with the config's run directory), ``--report`` (train nothing: evaluate the saved run) and
``--quiet``; bad input prints ``error: ...`` and exits 2.
"""

from __future__ import annotations

import argparse
import difflib
from pathlib import Path
from typing import Any, ClassVar, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from grinch_env.games import get_game
from training.config import CheckpointSection, apply_sets, read_yaml
from training.files import atomic_write_bytes

# the section a config of each command has (a config given to another command is named as such)
COMMANDS = {"algo": "python -m training.train", "sb3": "python -m training.train_sb3", "rllib": "python -m training.train_rllib"}


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class BridgeCheckpoint(Section):
    """Where the run lives: ``<dir>/<run_name>/``."""

    dir: str = CheckpointSection.model_fields["dir"]
    run_name: str | None = CheckpointSection.model_fields["run_name"]


class BridgeEval(Section):
    """The report after training (``<run dir>/report/``): the bridge's agent in one seat, the opponent in the others, seats rotated."""

    final_opponents: list[str] = Field(default_factory=lambda: ["random", "greedy"], min_length=1,
                                       description="make_agent specs of the report's opponents")
    final_games: int = Field(200, ge=0, description="games per report opponent (0: no report)")


class BridgeConfig(Section):
    """The keys every bridge shares with :class:`training.config.TrainConfig`; a bridge adds its own section."""

    DEFAULT_RUN_NAME: ClassVar[str] = "bridge"  # the run name of a config built without a file (a YAML's default is its stem)

    game: Literal["grinch", "gnoming"] = Field(description="grinch (Grinch Grow Your Heart, 2-6 players) or gnoming (Gnoming A Round, 3-7)")
    num_players: int = Field(description="table size (in the game's range)")
    seed: int = 0
    torch_threads: int = Field(1, ge=1, description="torch intra-op threads")
    checkpoint: BridgeCheckpoint = Field(default_factory=BridgeCheckpoint)
    eval: BridgeEval = Field(default_factory=BridgeEval)

    @model_validator(mode="after")
    def _table_size_fits_the_game(self) -> BridgeConfig:
        get_game(self.game).check_num_players(self.num_players)
        from grinch_env.agents import make_agent

        for spec in self.eval.final_opponents:  # a typo is an error now, not after training
            try:
                make_agent(spec, num_players=self.num_players, game=self.game)
            except ValueError as exc:
                raise ValueError(f"eval.final_opponents: {exc}") from None
        if self.checkpoint.run_name is None:
            self.checkpoint.run_name = self.DEFAULT_RUN_NAME
        return self

    @property
    def run_name(self) -> str:
        return str(self.checkpoint.run_name)

    @property
    def run_dir(self) -> Path:
        return Path(self.checkpoint.dir) / self.run_name


def _field_paths(schema: type[BaseModel], prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every key of ``schema`` as a path, the sections' keys included (``("sb3", "n_envs")``)."""
    paths = []
    for name, field in schema.model_fields.items():
        paths.append((*prefix, name))
        if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel):
            paths += _field_paths(field.annotation, (*prefix, name))
    return paths


def _suggest(schema: type[BaseModel], loc: tuple[str, ...]) -> str:
    """A hint for the unknown key at ``loc``: the nearest key of its section, else of another section, else the valid keys."""
    section, key = loc[:-1], loc[-1]
    if not section and key in COMMANDS:
        return f"this is a config for {COMMANDS[key]}"
    paths = _field_paths(schema)
    here = [p[-1] for p in paths if p[:-1] == section]
    close = difflib.get_close_matches(key, here, n=1)
    if close:
        return f"did you mean {'.'.join((*section, close[0]))}?"
    elsewhere = difflib.get_close_matches(key, sorted({p[-1] for p in paths}), n=1)
    if elsewhere:  # e.g. an old flat config's total_timesteps at the top level: now sb3.total_timesteps
        return "did you mean " + " or ".join(".".join(p) for p in paths if p[-1] == elsewhere[0]) + "?"
    return "valid keys here: " + ", ".join(here)


def format_errors(exc: ValidationError, schema: type[BaseModel], source: str) -> str:
    """``exc`` as ``<source>: <key>: <problem>`` lines, one per wrong key or value."""
    lines = []
    for e in exc.errors():
        loc = tuple(str(p) for p in e["loc"])
        key = ".".join(loc)
        if e["type"] == "extra_forbidden":
            lines.append(f"{key}: unknown key; {_suggest(schema, loc)}")
        elif e["type"] == "value_error":  # our validators' messages name the key and the value
            msg = e["msg"].removeprefix("Value error, ")
            lines.append(f"{key}: {msg}" if key else msg)
        else:
            lines.append(f"{key}: {e['msg']} (got {e.get('input')!r})")
    return f"{source}:" + ("".join(f"\n  {line}" for line in lines) if len(lines) > 1 else f" {lines[0]}")


def validate(schema: type[BaseModel], data: dict[str, Any], source: str = "config") -> Any:
    """``data`` validated as ``schema``; ``ValueError`` names every wrong key or value (or the command a config of
    another command is for)."""
    mine = [COMMANDS[k] for k in COMMANDS if k in schema.model_fields]
    theirs = [k for k in COMMANDS if k in data and k not in schema.model_fields]
    if mine and theirs and not any(k in data for k in COMMANDS if k in schema.model_fields):
        run = f"; run: {COMMANDS[theirs[0]]} --config {source}" if source.endswith((".yaml", ".yml")) else ""
        raise ValueError(f"{source} is a config for {COMMANDS[theirs[0]]} (it has a top-level {theirs[0]}: key), not for {mine[0]}{run}")
    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        raise ValueError(format_errors(exc, schema, source)) from None


def load_config(schema: type[BaseModel], path: str | Path, overrides: list[str] | None = None) -> Any:
    """The ``schema`` config of YAML ``path`` with dotted ``key=value`` overrides; its run name defaults to the file's stem."""
    for item in overrides or []:
        key, eq, _ = item.partition("=")
        if not eq or not key.strip():
            raise ValueError(f"--set takes KEY=VALUE with a dotted key and a YAML value (e.g. seed=3, eval.final_games=0), got {item!r}")
    data = apply_sets(read_yaml(path), overrides)
    if isinstance(data.get("checkpoint"), dict | None) and not (data.get("checkpoint") or {}).get("run_name"):
        data["checkpoint"] = {**(data.get("checkpoint") or {}), "run_name": Path(path).stem}
    return validate(schema, data, str(path))


def dump_yaml(cfg: BaseModel) -> str:
    """``cfg`` as the YAML a run directory's ``config.yaml`` holds (a config the bridge reads back)."""
    return yaml.safe_dump(cfg.model_dump(), sort_keys=False)


def write_config(cfg: BaseModel, run_dir: Path) -> None:
    atomic_write_bytes(Path(run_dir) / "config.yaml", dump_yaml(cfg).encode())


def build_parser(prog: str, description: str, example: str, resume: str, report: str) -> argparse.ArgumentParser:
    """A bridge's command line: ``--config``, ``--set``, ``--resume``, ``--report``, ``--quiet``."""
    p = argparse.ArgumentParser(prog=prog, description=description)
    p.add_argument("--config", required=True, help=f"a YAML config ({example})")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config key (dotted, YAML value, e.g. eval.final_games=0; repeatable)")
    p.add_argument("--resume", action="store_true", help=resume)
    p.add_argument("--report", action="store_true", help=report)
    p.add_argument("--quiet", action="store_true", help="print no progress")
    return p


def command_line(prog_module: str, args: argparse.Namespace) -> str:
    """The command that ``args`` ran (without --resume/--report/--quiet), for the messages that say how to go on."""
    return f"python -m {prog_module} --config {args.config}" + "".join(f" --set {s}" for s in args.set)


__all__ = ["COMMANDS", "BridgeCheckpoint", "BridgeConfig", "BridgeEval", "Section", "build_parser", "command_line", "dump_yaml",
           "format_errors", "load_config", "validate", "write_config"]
