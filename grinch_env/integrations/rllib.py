"""RLlib adapter (``pip install -e '.[ray]'``): the games as RLlib multi-agent envs, a masked PPO module, self-play.

* :func:`register_games` registers every game in :data:`GAMES` with RLlib under
  its name (``"grinch"``): the game's PettingZoo AEC env, its observation
  renamed to RLlib's action-masking convention (``{"observations": Box,
  "action_mask": Box}``, :class:`MaskedObservations`), wrapped by RLlib's own
  :class:`~ray.rllib.env.wrappers.pettingzoo_env.PettingZooEnv`.  That wrapper
  plays the AEC turn order as RLlib's turn-based multi-agent episodes (only the
  seat to act observes) and delivers each seat's accumulated reward when the
  seat observes next, so at the game's end every seat gets its terminal reward.
  The games are those of the game interface (:mod:`grinch_env.games`):
  ``GAMES["gnoming"] == "grinch_env.gnoming.harness:env"``.  Baseline modules use ``make_agent``
  specs, so a game's self-play config names only agents that play it
  (``random`` plays any game).
* :class:`MaskedPPOTorchRLModule`: RLlib's default PPO torch module on the
  ``observations`` part, with illegal actions' logits at RLlib's ``FLOAT_MIN``
  (probability 0) in inference, exploration and training.
* :class:`BaselineRLModule`: a fixed (untrained) module playing one of our
  agents (``random``, ``greedy``, ``expectimax``, or a checkpoint) from the
  same observations.
* :func:`selfplay_config`: a ``PPOConfig`` where ``main`` learns, ``frozen``
  is a copy of ``main`` refreshed every ``freeze_every`` iterations
  (:class:`FreezeMainCallback`), and baselines are fixed policies; in each
  game either ``main`` plays every seat, or one seat and the others are one
  opponent (``opponent_probs``).
* :class:`RLlibAgent`: an RLlib checkpoint's ``main`` module as one of our
  agents (``act``/``act_batch``), so ``grinch_env.evaluation`` and the tournaments
  play it (``make_agent("<checkpoint dir>")``).
"""

from __future__ import annotations

import importlib
import zlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from pettingzoo.utils import BaseWrapper
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
from ray.rllib.callbacks.callbacks import RLlibCallback
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModule, RLModuleSpec
from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
from ray.rllib.utils.torch_utils import FLOAT_MIN
from ray.tune.registry import register_env

from grinch_env.agent_base import NetworkAgent


def _registered_games() -> dict[str, str]:
    """Return game name -> ``"module:function"`` of its PettingZoo AEC env: every game of the game interface (:data:`grinch_env.games.GAMES`)."""
    from grinch_env.games import GAMES as SPECS

    return {name: f"{spec.package}.harness:env" for name, spec in SPECS.items()}


# Game name -> "module:function" returning the game's PettingZoo AEC env (keyword options as env_config). One line per game.
GAMES: dict[str, str] = _registered_games()
MAIN, FROZEN = "main", "frozen"
OBS, MASK = "observations", "action_mask"


def game_env_factory(game: str) -> Callable[..., Any]:
    """Return the AEC env factory registered for ``game``; a ValueError names the known games."""
    if game not in GAMES:
        raise ValueError(f"unknown game {game!r}: registered games are {sorted(GAMES)}")
    module, name = GAMES[game].split(":")
    return getattr(importlib.import_module(module), name)


class MaskedObservations(BaseWrapper):
    """An AEC env whose ``{"observation", "action_mask"}`` observations read ``{"observations", "action_mask"}`` (RLlib's masking convention).

    It counts the illegal actions it is given (``illegal_actions``; the
    class-wide ``illegal_total`` over every instance in this process), which a
    masked policy never plays: the game's own wrapper would end the game with
    -1 for the offender, hiding the bug in the returns.
    """

    illegal_total = 0

    def observation_space(self, agent: str) -> gym.spaces.Dict:
        space = self.env.observation_space(agent)
        return gym.spaces.Dict({OBS: space["observation"], MASK: space["action_mask"]})

    def observe(self, agent: str) -> dict[str, np.ndarray] | None:
        obs = self.env.observe(agent)
        return None if obs is None else {OBS: obs["observation"], MASK: obs["action_mask"]}

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        self.illegal_actions = 0
        super().reset(seed=seed, options=options)

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if action is not None and not (self.terminations[agent] or self.truncations[agent]):
            if not self.env.observe(agent)["action_mask"][int(action)]:
                self.illegal_actions += 1
                MaskedObservations.illegal_total += 1
        super().step(action)


def make_rllib_env(game: str, env_config: Mapping[str, Any] | None = None) -> PettingZooEnv:
    """Return ``game`` (options ``env_config``, e.g. ``num_players``) as an RLlib multi-agent env."""
    return PettingZooEnv(MaskedObservations(game_env_factory(game)(**dict(env_config or {}))))


def register_games() -> list[str]:
    """Register every game in :data:`GAMES` with RLlib (``config.environment("grinch", env_config={...})``); return the names."""
    for game in GAMES:
        register_env(game, lambda env_config, game=game: make_rllib_env(game, env_config))
    return list(GAMES)


# --------------------------------------------------------------- RL modules
class MaskedPPOTorchRLModule(DefaultPPOTorchRLModule):
    """RLlib's default PPO torch module reading ``observations``, with the logits of illegal actions set to ``FLOAT_MIN``."""

    def __init__(self, *args: Any, observation_space: gym.Space | None = None, **kwargs: Any) -> None:
        if not isinstance(observation_space, gym.spaces.Dict) or set(observation_space) != {OBS, MASK}:
            raise ValueError(f"MaskedPPOTorchRLModule needs a Dict observation space with keys {OBS!r} and {MASK!r}, got {observation_space}")
        self.observation_space_with_mask = observation_space
        super().__init__(*args, observation_space=observation_space[OBS], **kwargs)

    def setup(self) -> None:
        super().setup()
        self.observation_space = self.observation_space_with_mask  # what the env runners see (the catalog used the inner Box)

    @staticmethod
    def _split(batch: dict[str, Any]) -> tuple[torch.Tensor, dict[str, Any]]:
        obs = batch[Columns.OBS]
        return obs[MASK], {**batch, Columns.OBS: obs[OBS]}

    @staticmethod
    def _mask(out: dict[str, Any], mask: torch.Tensor) -> dict[str, Any]:
        logits = out[Columns.ACTION_DIST_INPUTS]
        out[Columns.ACTION_DIST_INPUTS] = torch.where(mask.to(torch.bool), logits, torch.full_like(logits, FLOAT_MIN))
        return out

    def _forward_inference(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        mask, batch = self._split(batch)
        return self._mask(super()._forward_inference(batch, **kwargs), mask)

    def _forward_exploration(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        mask, batch = self._split(batch)
        return self._mask(super()._forward_exploration(batch, **kwargs), mask)

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        mask, batch = self._split(batch)
        return self._mask(super()._forward_train(batch, **kwargs), mask)

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        if isinstance(batch[Columns.OBS], dict):
            _, batch = self._split(batch)
        return super().compute_values(batch, embeddings)


class BaselineRLModule(RLModule):
    """A fixed policy: one of our agents (``model_config["agent"]``, a ``make_agent`` spec) acting on the masked observations."""

    def setup(self) -> None:
        import inspect

        from grinch_env.agents import make_agent

        config = self.model_config or {}
        game = {"game": config["game"]} if "game" in inspect.signature(make_agent).parameters and "game" in config else {}
        self.agent = make_agent(config.get("agent", "random"), seed=config.get("seed"), **game)

    def _forward_inference(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        observations, masks = np.asarray(obs[OBS], dtype=np.float32), np.asarray(obs[MASK])
        if hasattr(self.agent, "act_batch"):
            actions = np.asarray(self.agent.act_batch(observations, masks), dtype=np.int64)
        else:
            actions = np.array([self.agent.act(o, m) for o, m in zip(observations, masks)], dtype=np.int64)
        return {Columns.ACTIONS: actions}

    def _forward_exploration(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        return self._forward_inference(batch, **kwargs)

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        raise NotImplementedError(f"{type(self).__name__} is a fixed policy: leave it out of policies_to_train")


# ------------------------------------------------------------------ self-play
def episode_matchup(episode_id: str, seed: int, opponent_probs: Mapping[str, float]) -> tuple[str | None, int]:
    """Return ``(opponent, learner seat draw)`` of one game: ``None`` means ``main`` plays every seat; a pure function of the episode id."""
    rng = np.random.default_rng([seed, zlib.crc32(str(episode_id).encode())])
    kinds = list(opponent_probs)
    weights = np.array([opponent_probs[k] for k in kinds], dtype=np.float64)
    choice = kinds[rng.choice(len(kinds), p=weights / weights.sum())]
    return (None if choice == MAIN else choice), int(rng.integers(1 << 30))


def make_mapping_fn(seed: int, opponent_probs: Mapping[str, float], num_players: int) -> Callable[..., str]:
    """Return RLlib's agent-to-module function: per game, ``main`` in every seat or in one seat (``player_<k>``) against one opponent module."""

    def mapping(agent_id: str, episode: Any, **kwargs: Any) -> str:
        opponent, draw = episode_matchup(episode.id_, seed, opponent_probs)
        if opponent is None:
            return MAIN
        return MAIN if int(str(agent_id).rsplit("_", 1)[1]) == draw % num_players else opponent

    return mapping


class FreezeMainCallback(RLlibCallback):
    """Copy ``main``'s weights into the ``frozen`` opponent every ``freeze_every`` iterations (learner and env runners)."""

    def __init__(self, freeze_every: int = 5) -> None:
        super().__init__()
        self.freeze_every = freeze_every

    def on_train_result(self, *, algorithm: Any, result: dict, **kwargs: Any) -> None:
        if FROZEN not in algorithm.config.policies or algorithm.iteration % self.freeze_every:
            return
        state = algorithm.learner_group.get_state(components=f"learner/rl_module/{MAIN}")["learner"]["rl_module"][MAIN]
        algorithm.learner_group.set_state({"learner": {"rl_module": {FROZEN: state}}})
        algorithm.env_runner_group.sync_weights(from_worker_or_learner_group=algorithm.learner_group, policies=[FROZEN], inference_only=True)
        result["frozen_refreshed_at"] = algorithm.iteration


def selfplay_config(
    game: str = "grinch",
    env_config: Mapping[str, Any] | None = None,
    opponent_probs: Mapping[str, float] | None = None,
    hidden_sizes: tuple[int, ...] = (256, 256),
    freeze_every: int = 5,
    seed: int = 0,
    num_env_runners: int = 0,
    train_batch_size: int = 4000,
    minibatch_size: int = 512,
    num_epochs: int = 4,
    lr: float = 3e-4,
    entropy_coeff: float = 0.01,
) -> PPOConfig:
    """Return a ``PPOConfig`` training ``main`` by self-play against itself, its ``frozen`` copy and fixed baseline modules.

    ``opponent_probs`` weighs the games: ``main`` (every seat is main),
    ``frozen``, or a ``make_agent`` spec (``random``, ``greedy``, ...); default
    ``{"main": 0.6, "frozen": 0.2, "random": 0.1, "greedy": 0.1}``.
    """
    register_games()
    probs = dict(opponent_probs or {MAIN: 0.6, FROZEN: 0.2, "random": 0.1, "greedy": 0.1})
    bad = {k: p for k, p in probs.items() if p < 0}
    if bad or sum(probs.values()) <= 0:
        raise ValueError(f"opponent_probs must be non-negative with a positive sum, got {probs}")
    model = DefaultModelConfig(fcnet_hiddens=list(hidden_sizes), fcnet_activation="relu", vf_share_layers=False)
    specs = {MAIN: RLModuleSpec(module_class=MaskedPPOTorchRLModule, model_config=model),
             FROZEN: RLModuleSpec(module_class=MaskedPPOTorchRLModule, model_config=model)}
    for spec in probs:
        if spec not in (MAIN, FROZEN):
            specs[spec] = RLModuleSpec(module_class=BaselineRLModule, model_config={"agent": spec, "seed": seed, "game": game})
    return (
        PPOConfig()
        # RLlib's env check plays random (illegal) actions; the env passes PettingZoo's api_test instead (tests/test_env_api.py).
        .environment(game, env_config=dict(env_config or {}), disable_env_checking=True)
        .env_runners(num_env_runners=num_env_runners, num_cpus_per_env_runner=1)
        .learners(num_learners=0)
        .multi_agent(policies=set(specs), policy_mapping_fn=make_mapping_fn(seed, probs, int(dict(env_config or {}).get("num_players", 4))),
                     policies_to_train=[MAIN])
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=specs))
        .training(train_batch_size_per_learner=train_batch_size, minibatch_size=minibatch_size, num_epochs=num_epochs, lr=lr,
                  entropy_coeff=entropy_coeff, gamma=1.0, lambda_=0.95)
        .callbacks(lambda: FreezeMainCallback(freeze_every))
        .debugging(seed=seed)
    )


# ------------------------------------------------------------ checkpoints
def module_checkpoint_dir(path: str | Path, module_id: str = MAIN) -> Path:
    """Return the directory of ``module_id``'s weights inside an RLlib algorithm checkpoint (or ``path`` itself if it is that directory)."""
    p = Path(path)
    inner = p / "learner_group" / "learner" / "rl_module" / module_id
    if inner.is_dir():
        return inner
    if (p / "module_state").exists() or (p / "module_state.pt").exists() or (p / "class_and_ctor_args.pkl").is_file():
        return p
    raise FileNotFoundError(f"{str(p)!r} holds no RLlib checkpoint of module {module_id!r}")


def is_rllib_checkpoint(path: str | Path) -> bool:
    """Return whether ``path`` is an RLlib algorithm (or module) checkpoint directory."""
    try:
        module_checkpoint_dir(path)
    except FileNotFoundError:
        return False
    return True


class RLlibAgent(NetworkAgent):
    """An RLlib checkpoint's ``main`` module playing as one of our agents: argmax of its masked logits, or sampling them."""

    scores_are_logits = True

    def __init__(self, path: str | Path, name: str | None = None, deterministic: bool = True, seed: int | None = None) -> None:
        self.module = RLModule.from_checkpoint(module_checkpoint_dir(path))
        self.module.eval()
        super().__init__(name or f"rllib:{Path(path).name}", deterministic, seed)

    @torch.no_grad()
    def _scores(self, observations: np.ndarray, masks: np.ndarray) -> torch.Tensor:
        obs = {OBS: torch.as_tensor(np.asarray(observations, dtype=np.float32)), MASK: torch.as_tensor(np.asarray(masks))}
        return self.module.forward_inference({Columns.OBS: obs})[Columns.ACTION_DIST_INPUTS]


__all__ = ["GAMES", "BaselineRLModule", "FreezeMainCallback", "MaskedObservations", "MaskedPPOTorchRLModule", "RLlibAgent", "episode_matchup",
           "game_env_factory", "is_rllib_checkpoint", "make_mapping_fn", "make_rllib_env", "register_games", "selfplay_config"]
