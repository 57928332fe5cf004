"""PPO with action masking (CleanRL's ppo.py update, sb3-contrib's masked distribution).

How a multi-player game becomes returns: each seat's decisions in one game
form that seat's own trajectory (the other seats' moves are part of its
environment).  The only reward is the seat's terminal reward (the env's
``reward_mode``), credited to the seat's *last* decision of the game; GAE
runs backwards over the seat's own decision sequence with ``gamma`` per own
decision (``gamma = 1``: the return of every decision is the game's result).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from training.config import PPOConfig
from training.model import PolicyValueNet


def seat_gae(
    values: np.ndarray, seats: np.ndarray, dones: np.ndarray, rewards: np.ndarray, gamma: float, gae_lambda: float
) -> tuple[np.ndarray, np.ndarray]:
    """Return (advantages[T, B], complete[T, B]) for a rollout of ``T`` steps of ``B`` parallel games.

    Step ``t`` of game-slot ``i`` is a decision of seat ``seats[t, i]`` with
    value estimate ``values[t, i]``; ``dones[t, i]`` says the game ended with
    that decision and ``rewards[t, i, s]`` is then seat ``s``'s terminal
    reward.  ``complete[t, i]`` is False for decisions of a game still running
    at the end of the rollout (no return yet: they are left out of the batch).
    """
    num_steps, num_envs = values.shape
    num_seats = rewards.shape[2]
    adv = np.zeros((num_steps, num_envs), dtype=np.float32)
    complete = np.zeros((num_steps, num_envs), dtype=bool)
    next_value = np.zeros((num_envs, num_seats), dtype=np.float32)
    next_adv = np.zeros((num_envs, num_seats), dtype=np.float32)
    pending = np.zeros((num_envs, num_seats), dtype=np.float32)  # terminal reward not yet credited to a decision
    in_complete_game = np.zeros(num_envs, dtype=bool)
    envs = np.arange(num_envs)
    for t in range(num_steps - 1, -1, -1):
        ended = dones[t]
        # Walking backwards across a game's end: a new (earlier) game starts here.
        pending[ended] = rewards[t][ended]
        next_value[ended] = 0.0
        next_adv[ended] = 0.0
        in_complete_game |= ended
        s = seats[t]
        r = pending[envs, s]
        pending[envs, s] = 0.0  # only the seat's last decision of the game carries its reward
        delta = r + gamma * next_value[envs, s] - values[t]
        a = delta + gamma * gae_lambda * next_adv[envs, s]
        adv[t] = a
        next_value[envs, s] = values[t]
        next_adv[envs, s] = a
        complete[t] = in_complete_game
    return adv, complete


def explained_variance(y_pred: np.ndarray, y_true: np.ndarray) -> float:
    """Return 1 - Var[y_true - y_pred] / Var[y_true] (nan when y_true is constant)."""
    var_y = np.var(y_true)
    return float("nan") if var_y == 0 else float(1 - np.var(y_true - y_pred) / var_y)


def ppo_update(
    model: PolicyValueNet,
    optimizer: torch.optim.Optimizer,
    batch: dict[str, torch.Tensor],
    cfg: PPOConfig,
    rng: np.random.Generator,
) -> dict[str, float]:
    """Run the PPO epochs on ``batch`` (obs, masks, feats, actions, logprobs, values, advantages, returns); return the loss statistics."""
    b_obs, b_masks, b_actions, b_feats = batch["obs"], batch["masks"], batch["actions"], batch.get("feats")
    b_logprobs, b_values, b_advantages, b_returns = batch["logprobs"], batch["values"], batch["advantages"], batch["returns"]
    n = b_obs.shape[0]
    mb_size = min(cfg.minibatch_size, n)
    clipfracs: list[float] = []
    pg_losses, v_losses, entropies, approx_kls = [], [], [], []
    approx_kl = torch.zeros(())
    for _ in range(cfg.update_epochs):
        order = torch.from_numpy(rng.permutation(n))
        for start in range(0, n, mb_size):
            mb = order[start:start + mb_size]
            dist, new_value = model.distribution(b_obs[mb], b_masks[mb], None if b_feats is None else b_feats[mb])
            new_logprob = dist.log_prob(b_actions[mb])
            entropy = dist.entropy()
            logratio = new_logprob - b_logprobs[mb]
            ratio = logratio.exp()
            with torch.no_grad():
                approx_kl = ((ratio - 1) - logratio).mean()  # http://joschu.net/blog/kl-approx.html
                clipfracs.append(((ratio - 1.0).abs() > cfg.clip_coef).float().mean().item())
            mb_adv = b_advantages[mb]
            if cfg.norm_adv and len(mb) > 1:
                mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
            pg_loss = torch.max(-mb_adv * ratio, -mb_adv * torch.clamp(ratio, 1 - cfg.clip_coef, 1 + cfg.clip_coef)).mean()
            if cfg.clip_vloss:
                v_clipped = b_values[mb] + torch.clamp(new_value - b_values[mb], -cfg.clip_coef, cfg.clip_coef)
                v_loss = 0.5 * torch.max((new_value - b_returns[mb]) ** 2, (v_clipped - b_returns[mb]) ** 2).mean()
            else:
                v_loss = 0.5 * ((new_value - b_returns[mb]) ** 2).mean()
            entropy_loss = entropy.mean()
            loss = pg_loss - cfg.ent_coef * entropy_loss + cfg.vf_coef * v_loss
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), cfg.max_grad_norm)
            optimizer.step()
            pg_losses.append(pg_loss.item())
            v_losses.append(v_loss.item())
            entropies.append(entropy_loss.item())
            approx_kls.append(approx_kl.item())
        if cfg.target_kl is not None and approx_kl.item() > cfg.target_kl:
            break
    return {
        "policy_loss": float(np.mean(pg_losses)),
        "value_loss": float(np.mean(v_losses)),
        "entropy": float(np.mean(entropies)),
        "approx_kl": float(np.mean(approx_kls)),
        "clip_fraction": float(np.mean(clipfracs)),
        "explained_variance": explained_variance(b_values.numpy(), b_returns.numpy()),
    }


__all__ = ["explained_variance", "ppo_update", "seat_gae"]
