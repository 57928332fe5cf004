"""The policy/value network and the masked categorical distribution.

One network plays every seat, both roles and every table size: the
observation is already encoded from the actor's seat, with absent seats zero.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.distributions import Categorical

from grinch_env.encoding import OBS_SIZE
from grinch_env.game import NUM_ACTIONS

# A finite large negative rather than -inf: softmax still gives exactly 0 in
# float32 (exp underflows), and 0 * logit stays finite in the entropy.
MASK_VALUE = -1e8


class MaskedCategorical(Categorical):
    """A categorical distribution over the legal actions only (sb3-contrib's MaskableCategorical).

    Masked actions get logit ``MASK_VALUE``, hence probability 0: they are
    never sampled and contribute exactly 0 to the entropy.
    """

    def __init__(self, logits: torch.Tensor, mask: torch.Tensor) -> None:
        self.mask = mask.bool()
        if not bool(self.mask.any(dim=-1).all()):
            raise ValueError("every action mask must allow at least one action")
        masked_logits = torch.where(self.mask, logits, torch.full_like(logits, MASK_VALUE))
        super().__init__(logits=masked_logits)

    def entropy(self) -> torch.Tensor:
        p_log_p = self.logits * self.probs
        p_log_p = torch.where(self.mask, p_log_p, torch.zeros_like(p_log_p))
        return -p_log_p.sum(-1)


class PolicyValueNet(nn.Module):
    """An MLP trunk with a policy head (62 logits) and a value head (the actor's expected return)."""

    def __init__(self, hidden_sizes: list[int] | tuple[int, ...] = (256, 256)) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        width = OBS_SIZE
        for h in hidden_sizes:
            layers += [_ortho(nn.Linear(width, h), 2**0.5), nn.ReLU()]
            width = h
        self.trunk = nn.Sequential(*layers)
        # Small policy init gives a near-uniform first policy over legal moves (CleanRL's 0.01 gain).
        self.policy_head = _ortho(nn.Linear(width, NUM_ACTIONS), 0.01)
        self.value_head = _ortho(nn.Linear(width, 1), 1.0)
        self.hidden_sizes = list(hidden_sizes)

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Return (logits[B, 62], value[B])."""
        x = self.trunk(obs)
        return self.policy_head(x), self.value_head(x).squeeze(-1)

    def distribution(self, obs: torch.Tensor, mask: torch.Tensor) -> tuple[MaskedCategorical, torch.Tensor]:
        """Return the masked action distribution and the value for a batch of observations."""
        logits, value = self(obs)
        return MaskedCategorical(logits, mask), value


def _ortho(layer: nn.Linear, gain: float) -> nn.Linear:
    nn.init.orthogonal_(layer.weight, gain)
    nn.init.zeros_(layer.bias)
    return layer


__all__ = ["MASK_VALUE", "MaskedCategorical", "PolicyValueNet"]
