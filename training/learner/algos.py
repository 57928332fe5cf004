"""The token network's update on a :class:`~training.learner.rollout.Batch`: clipped PPO.

It rebuilds the tokens of each minibatch from the stored observations and
draws minibatch orders from the trainer's numpy stream, so a run is a pure
function of its seed (and its number of shards, which orders the batch).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from training.learner.config import LearnerConfig
from training.learner.net import MASK_VALUE, MaskedCategorical, TokenNet
from training.learner.rollout import Batch, net_tokens


def explained_variance(y_pred: np.ndarray, y_true: np.ndarray) -> float:
    """Return 1 - Var[y_true - y_pred] / Var[y_true] (nan when y_true is constant)."""
    var_y = np.var(y_true)
    return float("nan") if var_y == 0 else float(1 - np.var(y_true - y_pred) / var_y)


def _minibatches(n: int, size: int, rng: np.random.Generator):
    order = rng.permutation(n)
    for start in range(0, n, size):
        yield order[start:start + size]


def ppo_update(net: TokenNet, opt: torch.optim.Optimizer, batch: Batch, cfg: LearnerConfig, rng: np.random.Generator) -> dict[str, float]:
    """Run the PPO epochs (CleanRL's update with a masked categorical); return loss statistics and the value head's explained variance."""
    p = cfg.ppo
    stats: dict[str, list[float]] = {"policy_loss": [], "value_loss": [], "entropy": [], "approx_kl": [], "clip_fraction": []}
    if p.q_coef > 0:
        stats["q_loss"] = []
    if p.all_action_coef > 0:
        stats["q_gap"] = []  # mean of max_a Q(a) - sum_a pi(a) Q(a) over the legal actions: what the policy leaves by its own Q
    if p.round_coef > 0:
        stats["round_value_loss"] = []
    n = len(batch.actions)
    for _ in range(p.update_epochs):
        for mb in _minibatches(n, cfg.minibatch_size, rng):
            st, at = net_tokens(net, cfg.game, batch.obs[mb])
            mask = torch.from_numpy(batch.masks[mb].astype(bool))
            logits, q, value, round_value = net.heads(st, at)
            if batch.critic_obs is not None:  # the asymmetric critic: both value heads read the revealed hands
                _, _, value, round_value = net.heads(*net_tokens(net, cfg.game, batch.critic_obs[mb], seat_hands=p.oracle_rows))
            dist = MaskedCategorical(logits, mask)
            actions = torch.from_numpy(batch.actions[mb])
            logratio = dist.log_prob(actions) - torch.from_numpy(batch.logprobs[mb])
            ratio = logratio.exp()
            adv = torch.from_numpy(batch.advantages[mb])
            scale = torch.tensor(1.0)  # the advantages' spread: the all-action term is weighed on the same scale
            if p.norm_adv and len(mb) > 1:
                scale = adv.std() + 1e-8
                adv = (adv - adv.mean()) / scale
            pg_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - p.clip_coef, 1 + p.clip_coef)).mean()
            returns = torch.from_numpy(batch.returns[mb])
            v_loss = 0.5 * ((value - returns) ** 2).mean()
            entropy = dist.entropy().mean()
            loss = pg_loss - p.ent_coef * entropy + p.vf_coef * v_loss
            if p.q_coef > 0:
                q_loss = 0.5 * ((q.gather(1, actions[:, None]).squeeze(1) - returns) ** 2).mean()
                loss = loss + p.q_coef * q_loss
                stats["q_loss"].append(q_loss.item())
            if p.round_coef > 0:
                r_loss = 0.5 * ((round_value - torch.from_numpy(batch.round_returns[mb])) ** 2).mean()
                loss = loss + p.round_coef * r_loss
                stats["round_value_loss"].append(r_loss.item())
            if p.all_action_coef > 0:
                loss = loss + p.all_action_coef * all_action_loss(dist.probs, q.detach(), mask, scale)
                with torch.no_grad():
                    gap = torch.where(mask, q, torch.full_like(q, MASK_VALUE)).max(1).values - (dist.probs * q).sum(1)  # masked probs are 0
                    stats["q_gap"].append(float(gap.mean()))
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), cfg.max_grad_norm)
            opt.step()
            with torch.no_grad():
                stats["approx_kl"].append(float(((ratio - 1) - logratio).mean()))
                stats["clip_fraction"].append(float(((ratio - 1).abs() > p.clip_coef).float().mean()))
            stats["policy_loss"].append(pg_loss.item())
            stats["value_loss"].append(v_loss.item())
            stats["entropy"].append(entropy.item())
    out = {k: float(np.mean(v)) for k, v in stats.items()}
    out["explained_variance"] = explained_variance(batch.values, batch.returns)
    if batch.round_values is not None and batch.round_returns is not None:
        out["round_explained_variance"] = explained_variance(batch.round_values, batch.round_returns)
    return out


def all_action_loss(probs: torch.Tensor, q: torch.Tensor, mask: torch.Tensor, scale: torch.Tensor | float = 1.0) -> torch.Tensor:
    """Return the mean over decisions of ``-sum_a pi(a) (Q(a) - sum_b pi(b) Q(b)) / scale`` over the legal actions.

    Its gradient is ``-sum_a grad pi(a) (Q(a) - baseline) / scale`` (``q`` is held fixed by the caller): the policy moves
    toward every legal action whose Q is above the policy's mean, sampled or not (the all-action policy gradient of
    mean actor-critic, Allen et al. 2017).  ``scale``: the advantages' spread, so the term weighs as the normalised
    PPO advantages do.
    """
    q = torch.where(mask, q, torch.zeros_like(q))
    p = torch.where(mask, probs, torch.zeros_like(probs))
    baseline = (p.detach() * q).sum(1, keepdim=True)
    return -(p * (q - baseline)).sum(1).mean() / scale


__all__ = ["all_action_loss", "explained_variance", "ppo_update"]
