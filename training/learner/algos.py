"""The two families' updates on a :class:`~training.learner.rollout.Batch`: clipped PPO and Deep Monte-Carlo.

Both rebuild the tokens of each minibatch from the stored observations and
draw minibatch orders from the trainer's numpy stream, so a run is a pure
function of its seed.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from training.learner.config import LearnerConfig
from training.learner.net import TokenNet
from training.learner.rollout import Batch, net_tokens
from training.model import MASK_VALUE, MaskedCategorical
from training.ppo import explained_variance


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
    vine_at = None
    if p.vine_pairs and batch.vine_index is not None:
        stats["vine_loss"] = []
        vine_at = np.full(n, -1, np.int64)
        vine_at[batch.vine_index] = np.arange(len(batch.vine_index))
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
            if vine_at is not None and p.vine_coef > 0:
                rows = vine_at[mb]
                sel = np.flatnonzero(rows >= 0)
                if len(sel):
                    v = rows[sel]
                    term = vine_loss(logits[torch.from_numpy(sel)], actions[torch.from_numpy(sel)], torch.from_numpy(batch.vine_action[v]),
                                     torch.from_numpy(batch.vine_qdiff[v]), scale, p.vine_form)
                    loss = loss + p.vine_coef * term
                    stats["vine_loss"].append(term.item())
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
    if vine_at is not None:
        out.update(vine_summary(batch))
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


def vine_top_gains(batch: Batch) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(bool[V], float[V])``: which vine pairs compared a seen top with the pile, and each pair's gain of the top
    over the other draw in points (meaningful where the first is true)."""
    from grinch_env.grinch.game import DRAW_PILE_ACTION

    taken = batch.actions[batch.vine_index]
    pile = (taken == DRAW_PILE_ACTION) | (batch.vine_action == DRAW_PILE_ACTION)
    return pile, np.where(taken == DRAW_PILE_ACTION, batch.vine_qdiff, -batch.vine_qdiff) * 100


def vine_summary(batch: Batch) -> dict[str, float]:
    """Return the rollout's vine pairs: how many, and the mean gain in points of a seen top over the pile where a pair
    compared the two (``vine_top_gain``, NaN if none did): what the draws are worth under the current policy."""
    pile, gain = vine_top_gains(batch)
    return {"vine_pairs": float(len(pile)), "vine_top_gain": float(gain[pile].mean()) if pile.any() else float("nan")}


def vine_loss(logits: torch.Tensor, taken: torch.Tensor, other: torch.Tensor, qdiff: torch.Tensor, scale: torch.Tensor | float = 1.0,
              form: str = "logistic") -> torch.Tensor:
    """Return the mean over branch pairs of a term on the logit difference ``g = logit(other) - logit(taken)``, ``d = qdiff``.

    Two forms on the two actions a vine pair compared (:mod:`training.learner.vine`), each ``/ scale``:

    - ``"logistic"``: ``|d| softplus(-sign(d) g)``, a pairwise logistic term weighted by how much more the better
      draw banked.  Gradient on ``g``: ``-d sigmoid(-sign(d) g)``.  Over many noisy pairs of one position it settles
      where ``sigmoid(g)`` is the |d|-weighted share of the pairs the other draw won: near 0.5 when the noise is
      much larger than the mean difference.
    - ``"pg"``: ``-d (sigmoid(g) - 1/2)``, the policy gradient of the two-action policy restricted to the pair
      (``sigmoid(g)`` is the other draw's share of the pair's probability).  Gradient on ``g``:
      ``-d sigmoid(g) (1 - sigmoid(g))``: it follows the mean difference's sign and vanishes as the pair's choice
      becomes sure.
    """
    gap = logits.gather(1, other[:, None]).squeeze(1) - logits.gather(1, taken[:, None]).squeeze(1)
    if form == "logistic":
        return (qdiff.abs() * nn.functional.softplus(-torch.sign(qdiff) * gap)).mean() / scale
    if form == "pg":
        return -(qdiff * (torch.sigmoid(gap) - 0.5)).mean() / scale
    raise ValueError(f"vine_loss form must be 'logistic' or 'pg', got {form!r}")


def dmc_update(net: TokenNet, opt: torch.optim.Optimizer, batch: Batch, cfg: LearnerConfig, rng: np.random.Generator) -> dict[str, float]:
    """Regress Q(s, a) of the taken actions on the seat's final return (DouZero's Deep Monte-Carlo); return the loss and Q's explained variance."""
    losses, entropies = [], []
    n = len(batch.actions)
    for _ in range(cfg.dmc.update_epochs):
        for mb in _minibatches(n, cfg.minibatch_size, rng):
            st, at = net_tokens(net, cfg.game, batch.obs[mb])
            _, q, _ = net(st, at)
            q_taken = q.gather(1, torch.from_numpy(batch.actions[mb])[:, None]).squeeze(1)
            loss = 0.5 * ((q_taken - torch.from_numpy(batch.returns[mb])) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), cfg.max_grad_norm)
            opt.step()
            losses.append(loss.item())
            with torch.no_grad():  # how decided the greedy policy is: entropy of softmax(Q / 0.05) over legal actions
                m = torch.from_numpy(batch.masks[mb].astype(bool))
                entropies.append(float(MaskedCategorical(torch.where(m, q / 0.05, torch.full_like(q, MASK_VALUE)), m).entropy().mean()))
    return {"value_loss": float(np.mean(losses)), "entropy": float(np.mean(entropies)),
            "explained_variance": explained_variance(batch.values, batch.returns)}


__all__ = ["all_action_loss", "dmc_update", "ppo_update", "vine_loss", "vine_summary", "vine_top_gains"]
