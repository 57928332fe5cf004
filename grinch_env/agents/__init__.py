"""Agents for every game, and :func:`make_agent` to build one by name or checkpoint path.

An agent has ``name``, ``reset(seed=None)`` (called at the start of each game)
and ``act(observation, action_mask) -> int``; ``act_batch`` is optional.  It
sees only the observation and mask, never the true game state.

``make_agent(spec, game="grinch")`` takes a built-in name of that game with
options (``"expectimax:samples=64"``; the lists are in
:mod:`grinch_env.grinch.agents` and :mod:`grinch_env.gnoming.agents`), a
checkpoint path (a run directory, a ``.pt`` or an SB3 ``.zip``), or an agent
object.  Checkpoints are loaded by the loaders in :data:`CHECKPOINT_LOADERS`:
the trainer registers its own when :mod:`training` is imported, and any
installed package may add one through the ``grinch_env.checkpoint_loaders``
entry-point group, so this package never imports the trainer (or torch).

The Grinch agents stay importable from here (``from grinch_env.agents import GreedyAgent``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from importlib.metadata import entry_points
from typing import Any

from grinch_env.games import DEFAULT_GAME, get_game
from grinch_env.grinch.agents import AGENT_CLASSES, Agent, BaseAgent, ExpectimaxAgent, GreedyAgent, RandomAgent, View, decode, legal_actions

CheckpointLoader = Callable[..., Agent]
CHECKPOINT_LOADERS: list[CheckpointLoader] = []
"""Functions ``loader(path, seed=None) -> agent`` tried in order on a checkpoint path (raise ``ValueError`` if not theirs)."""
ENTRY_POINT_GROUP = "grinch_env.checkpoint_loaders"


def register_checkpoint_loader(loader: CheckpointLoader) -> None:
    """Add ``loader`` to the checkpoint loaders (once)."""
    if loader not in CHECKPOINT_LOADERS:
        CHECKPOINT_LOADERS.append(loader)


def _parse_value(text: str) -> Any:
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """Return ``(name, options)`` of a spec such as ``"expectimax:samples=32,depth=2"``."""
    name, _, rest = spec.partition(":")
    options: dict[str, Any] = {}
    for item in filter(None, (s.strip() for s in rest.split(","))):
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise ValueError(f"agent option {item!r} in {spec!r} must be written key=value, e.g. expectimax:samples=32")
        options[key.strip()] = _parse_value(value.strip())
    return name.strip(), options


def split_specs(text: str) -> list[str]:
    """Split a comma-separated line-up into agent specs, keeping each spec's ``key=value`` options with it.

    ``"greedy,search:samples=16,horizon=round,random"`` gives
    ``["greedy", "search:samples=16,horizon=round", "random"]``: a piece
    ``key=value`` (``key`` a Python identifier, no ``:``) continues the options
    of the spec before it; anything else, such as ``checkpoints/lr=1e-4``,
    starts a new spec.
    """
    specs: list[str] = []
    for piece in (s.strip() for s in text.split(",")):
        if not piece:
            continue
        key, eq, _ = piece.partition("=")
        if eq and key.strip().isidentifier() and ":" not in piece and specs and ":" in specs[-1]:
            specs[-1] += "," + piece
        else:
            specs.append(piece)
    return specs


def make_agent(
    spec: str | Agent,
    seed: int | None = None,
    num_players: int | None = None,
    game: str = DEFAULT_GAME,
    game_options: Mapping[str, Any] | None = None,
) -> Agent:
    """Return the agent that ``spec`` names for ``game``: a built-in name with options, or a checkpoint path.

    ``game_options`` are handed to built-in agents as keywords (the Grinch
    agents take ``bonus_layout``).  An existing agent object is returned as it
    is (reset with ``seed`` if one is given).
    """
    spec_game = get_game(game)
    if not isinstance(spec, str):
        if isinstance(spec, Agent):
            if seed is not None:
                spec.reset(seed)
            return spec
        raise ValueError(f"an agent spec must be a name ({', '.join(sorted(spec_game.agent_classes()))}), a checkpoint path or an agent object, got {spec!r}")
    name, options = parse_spec(spec)
    classes = spec_game.agent_classes()
    if name in classes:
        try:
            agent = classes[name](seed=seed, **dict(game_options or {}), **options)
        except TypeError as exc:
            raise ValueError(f"bad options {options} for {spec_game.name} agent {name!r}: {exc}") from None
        if options:
            agent.name = spec
        return agent
    if os.path.exists(spec):
        return _load_checkpoint(spec, seed, num_players, spec_game.name)
    path, sep, tail = spec.rpartition(":")
    if sep and os.path.exists(path):  # a checkpoint path with options: only trust=1 (opting in to unpickling an SB3 .zip or RLlib checkpoint)
        _, path_options = parse_spec(f"x:{tail}")
        unknown = sorted(set(path_options) - {"trust"})
        if unknown:
            raise ValueError(f"checkpoint spec {spec!r}: unknown option(s) {unknown}; a checkpoint path takes only trust=1 "
                             "(load an SB3 .zip or RLlib checkpoint, which unpickles code: only for files you trust)")
        if path_options.get("trust") not in (0, 1):
            raise ValueError(f"checkpoint spec {spec!r}: trust must be 0 or 1, got {path_options.get('trust')!r}")
        return _load_checkpoint(path, seed, num_players, spec_game.name, trust=bool(path_options["trust"]))
    raise ValueError(
        f"unknown agent {spec!r} for {spec_game.title}: use one of {sorted(classes)} (with options as name:key=value, e.g. "
        f"{sorted(classes)[0]}:samples=32) or an existing checkpoint path"
    )


def _loaders() -> list[CheckpointLoader]:
    if not CHECKPOINT_LOADERS:
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            try:
                register_checkpoint_loader(ep.load())
            except ImportError:  # the extra that provides it (e.g. torch for the trainer's) is not installed
                continue
    return CHECKPOINT_LOADERS


TRUST_ENV = "GRINCH_ENV_TRUST_CHECKPOINTS"


def trust_checkpoints(enabled: bool = True) -> None:
    """Allow (or forbid again) loading SB3 ``.zip`` and RLlib checkpoints, which unpickle Python objects: what ``--trust-checkpoint`` does.

    It is an environment variable, so that worker processes (evaluation pools) inherit it.
    """
    if enabled:
        os.environ[TRUST_ENV] = "1"
    else:
        os.environ.pop(TRUST_ENV, None)


def _load_checkpoint(path: str, seed: int | None, num_players: int | None, game: str, trust: bool = False) -> Agent:
    import inspect

    loaders = _loaders()
    if not loaders:
        raise ValueError(f"cannot load checkpoint {path!r}: no checkpoint loader is installed (install grinch_env[train] for torch checkpoints)")
    errors = []
    for loader in loaders:
        try:
            takes_trust = "trust" in inspect.signature(loader).parameters
            agent = loader(path, seed=seed, trust=trust) if takes_trust else loader(path, seed=seed)
            break
        except Exception as exc:  # missing, truncated or foreign files raise many kinds of errors
            if type(exc).__name__ == "UntrustedCheckpointError":
                raise ValueError(str(exc)) from None  # the reason and the opt-in, not a list of every loader's complaint
            errors.append(str(exc))
    else:
        raise ValueError(f"cannot load checkpoint {path!r}: {'; '.join(errors)}")
    trained_for = getattr(agent, "game", DEFAULT_GAME)
    if trained_for != game:
        raise ValueError(f"checkpoint {path!r} plays {get_game(trained_for).title} (game {trained_for!r}), not {get_game(game).title} (game {game!r})")
    supported = getattr(agent, "num_players", None)
    if num_players is not None and supported is not None and not _supports(supported, num_players):
        raise ValueError(f"checkpoint {path!r} was trained for num_players={supported}, not {num_players}")
    return agent


def _supports(supported: Any, num_players: int) -> bool:
    if isinstance(supported, int):
        return supported == num_players
    try:
        return num_players in supported
    except TypeError:
        return True


__all__ = [
    "AGENT_CLASSES", "CHECKPOINT_LOADERS", "Agent", "BaseAgent", "ExpectimaxAgent", "GreedyAgent", "RandomAgent", "View",
    "decode", "legal_actions", "make_agent", "parse_spec", "register_checkpoint_loader", "split_specs", "trust_checkpoints",
]
