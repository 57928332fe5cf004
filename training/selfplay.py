"""Self-play experience collection with an opponent pool, on the batched engine.

Every rollout plays ``num_envs`` games in parallel on the config's game's
batched engine (:class:`~grinch_env.grinch.vector.VectorGrinch`,
:class:`~grinch_env.gnoming.vector.VectorGnoming`), re-seeded from the trainer's numpy
stream (so resuming needs no engine state beyond that stream).  Each game slot
is assigned an opponent for the whole rollout:

* ``self``: the current network plays every seat; every seat's decisions are learner decisions;
* ``snapshot``: one learner seat, the others a frozen past snapshot (sampling its policy);
* a baseline spec (``random``, ``greedy``, ...): one learner seat, the others that agent.

The learner seat is drawn uniformly; the Grinch (or Gnoming's starting
player) passes round the table every round, so the learner plays every role.  Only learner decisions go into the
PPO batch; the batch keeps only games that ended within the rollout.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from training.config import TrainConfig
from training.model import PolicyValueNet

SELF = "self"
SNAPSHOT = "snapshot"


def build_model(cfg: TrainConfig) -> PolicyValueNet:
    """Return a freshly initialised network as ``cfg.model`` describes."""
    return PolicyValueNet.from_config(cfg.model, cfg.bonus_layout, margin_baseline=cfg.model.margin_baseline and cfg.reward_mode == "margin", game=cfg.game)


def make_engine(cfg: TrainConfig):
    """Return the batched engine of ``cfg``'s game (through the game interface)."""
    return cfg.spec.vector(num_envs=cfg.num_envs, num_players=cfg.table_sizes, seed=cfg.seed, reward_mode=cfg.reward_mode, **cfg.game_options())


def rollout_steps(cfg: TrainConfig) -> int:
    """Return the steps per rollout: the game's (Grinch: the longest game among the table sizes, so every slot finishes a game)."""
    return cfg.spec.harness.rollout_steps(cfg.table_sizes)


@dataclass
class Rollout:
    """The learner's decisions of one rollout (flat arrays) and the games' outcomes."""

    obs: np.ndarray
    masks: np.ndarray
    feats: np.ndarray | None
    actions: np.ndarray
    logprobs: np.ndarray
    values: np.ndarray
    advantages: np.ndarray
    returns: np.ndarray
    env_steps: int
    games: int
    win_rates: dict[str, float] = field(default_factory=dict)  # learner's win share per opponent kind

    def tensors(self) -> dict[str, torch.Tensor]:
        """Return the batch as torch tensors for :func:`training.ppo.ppo_update`."""
        return {
            "feats": None if self.feats is None else torch.from_numpy(self.feats),
            "obs": torch.from_numpy(self.obs),
            "masks": torch.from_numpy(self.masks),
            "actions": torch.from_numpy(self.actions),
            "logprobs": torch.from_numpy(self.logprobs),
            "values": torch.from_numpy(self.values),
            "advantages": torch.from_numpy(self.advantages),
            "returns": torch.from_numpy(self.returns),
        }


class SnapshotAgent:
    """A frozen copy of the network playing by sampling its masked policy (an opponent in the pool)."""

    def __init__(self, state_dict: dict[str, torch.Tensor], cfg: TrainConfig, name: str) -> None:
        self.name = name
        with torch.random.fork_rng(devices=[]):  # building the net must not consume the trainer's torch stream
            self.net = build_model(cfg)
        self.net.load_state_dict(state_dict)
        self.net.eval()

    def reset(self, seed: int | None = None) -> None:
        pass

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        dist, _, _ = self.net.distribution_np(observations, masks)
        return dist.sample().numpy()


class OpponentPool:
    """The frozen snapshots (newest last) and the baseline agents, with the config's sampling weights."""

    def __init__(self, cfg: TrainConfig) -> None:
        self.cfg = cfg
        self.snapshots: list[tuple[str, dict[str, torch.Tensor]]] = []
        self._snapshot_agents: dict[str, SnapshotAgent] = {}
        self._baselines: dict[str, Any] = {}

    def add_snapshot(self, name: str, state_dict: dict[str, torch.Tensor]) -> None:
        """Add a frozen copy of ``state_dict``; drop the oldest beyond ``pool_size``."""
        frozen = {k: v.detach().clone() for k, v in state_dict.items()}
        self.snapshots.append((name, frozen))
        while len(self.snapshots) > self.cfg.selfplay.pool_size:
            old, _ = self.snapshots.pop(0)
            self._snapshot_agents.pop(old, None)

    def baseline(self, spec: str) -> Any:
        if spec not in self._baselines:
            from grinch_env.agents import make_agent

            sizes = self.cfg.table_sizes
            self._baselines[spec] = make_agent(spec, seed=self.cfg.seed, num_players=sizes[0] if len(sizes) == 1 else None, game=self.cfg.game)
        return self._baselines[spec]

    def agent(self, kind: str) -> Any:
        """Return the agent playing the opponent seats of ``kind`` (a snapshot name or a baseline spec)."""
        if kind in self._snapshot_agents:
            return self._snapshot_agents[kind]
        for name, sd in self.snapshots:
            if name == kind:
                agent = self._snapshot_agents[name] = SnapshotAgent(sd, self.cfg, name)
                return agent
        return self.baseline(kind)

    def assign(self, num_envs: int, rng: np.random.Generator) -> list[str]:
        """Return each game slot's opponent kind: ``"self"``, a snapshot name or a baseline spec."""
        sp = self.cfg.selfplay
        kinds = [SELF]
        weights = [sp.self_prob]
        if self.snapshots:
            kinds.append(SNAPSHOT)
            weights.append(sp.snapshot_prob)
        for spec, p in sp.baseline_probs.items():
            kinds.append(spec)
            weights.append(p)
        w = np.asarray(weights, dtype=np.float64)
        if w.sum() <= 0:  # only snapshot weight configured but no snapshot yet
            w = np.ones(1)
            kinds = [SELF]
        picks = rng.choice(len(kinds), size=num_envs, p=w / w.sum())
        names = [kinds[k] for k in picks]
        if self.snapshots:
            which = rng.integers(len(self.snapshots), size=num_envs)
            names = [self.snapshots[j][0] if n == SNAPSHOT else n for n, j in zip(names, which)]
        return names


def collect_rollout(engine, model: PolicyValueNet, pool: OpponentPool, cfg: TrainConfig, rng: np.random.Generator) -> Rollout:
    """Return one rollout of complete games played by ``model`` against the pool (see the module docstring)."""
    num_envs = engine.num_envs
    spec = cfg.spec
    num_steps = rollout_steps(cfg)
    max_players, num_actions = spec.max_players, spec.num_actions
    kinds = pool.assign(num_envs, rng)
    sizes = engine.num_players
    learner_seat = rng.integers(0, max_players, size=num_envs) % sizes
    is_learner = np.zeros((num_envs, max_players), dtype=bool)
    for i, kind in enumerate(kinds):
        if kind == SELF:
            is_learner[i, : sizes[i]] = True
        else:
            is_learner[i, learner_seat[i]] = True
    groups: dict[str, np.ndarray] = {}
    for kind in sorted(set(kinds) - {SELF}):
        groups[kind] = np.array([i for i, k in enumerate(kinds) if k == kind])
        pool.agent(kind).reset(seed=int(rng.integers(2**31)))

    b_obs = np.zeros((num_steps, num_envs, spec.obs_size), dtype=np.float32)
    b_masks = np.zeros((num_steps, num_envs, num_actions), dtype=np.int8)
    b_feats = np.zeros((num_steps, num_envs, *model.feature_shape), dtype=np.float32) if model.action_features else None
    b_actions = np.zeros((num_steps, num_envs), dtype=np.int64)
    b_logprobs = np.zeros((num_steps, num_envs), dtype=np.float32)
    b_values = np.zeros((num_steps, num_envs), dtype=np.float32)
    b_seats = np.zeros((num_steps, num_envs), dtype=np.int64)
    b_learner = np.zeros((num_steps, num_envs), dtype=bool)
    b_dones = np.zeros((num_steps, num_envs), dtype=bool)
    b_rewards = np.zeros((num_steps, num_envs, max_players), dtype=np.float32)
    wins: dict[str, list[float]] = {}

    obs, mask, seat = engine.reset(seed=int(rng.integers(2**63)))
    envs = np.arange(num_envs)
    for t in range(num_steps):
        learner_now = is_learner[envs, seat]
        actions = np.zeros(num_envs, dtype=np.int64)
        idx = np.flatnonzero(learner_now)
        if len(idx):
            dist, value, feats = model.distribution_np(obs[idx], mask[idx])
            a = dist.sample()
            b_logprobs[t, idx] = dist.log_prob(a).numpy()
            b_values[t, idx] = value.numpy()
            if feats is not None:
                b_feats[t, idx] = feats
            actions[idx] = a.numpy()
        for kind, members in groups.items():
            sel = members[~learner_now[members]]
            if len(sel):
                actions[sel] = _act_batch(pool.agent(kind), obs[sel], mask[sel])
        b_obs[t], b_masks[t], b_actions[t], b_seats[t], b_learner[t] = obs, mask, actions, seat, learner_now
        obs, mask, seat, rewards, dones = engine.step(actions)
        b_dones[t], b_rewards[t] = dones, rewards
        for i in np.flatnonzero(dones):
            if kinds[i] != SELF:
                totals = engine.last_totals[i, : sizes[i]]
                best = totals.max() if spec.highest_total_wins else totals.min()
                won = totals[learner_seat[i]] == best
                share = 1.0 / int((totals == best).sum()) if won else 0.0
                wins.setdefault(SNAPSHOT if kinds[i] not in pool._baselines else kinds[i], []).append(share)

    from training.ppo import seat_gae

    adv, complete = seat_gae(b_values, b_seats, b_dones, b_rewards, cfg.ppo.gamma, cfg.ppo.gae_lambda)
    keep = complete & b_learner
    returns = adv + b_values
    return Rollout(
        obs=b_obs[keep],
        masks=b_masks[keep],
        feats=None if b_feats is None else b_feats[keep],
        actions=b_actions[keep],
        logprobs=b_logprobs[keep],
        values=b_values[keep],
        advantages=adv[keep],
        returns=returns[keep],
        env_steps=num_steps * num_envs,
        games=int(b_dones.sum()),
        win_rates={k: float(np.mean(v)) for k, v in wins.items()},
    )


def _act_batch(agent: Any, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """Return the agent's actions for a batch, via ``act_batch`` when it has one."""
    if hasattr(agent, "act_batch"):
        return np.asarray(agent.act_batch(observations, masks), dtype=np.int64)
    return np.array([agent.act(o, m) for o, m in zip(observations, masks)], dtype=np.int64)


__all__ = ["OpponentPool", "Rollout", "SnapshotAgent", "build_model", "collect_rollout", "make_engine", "rollout_steps"]
