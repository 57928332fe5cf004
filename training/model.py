"""The policy/value network and the masked categorical distribution.

One network plays every seat, both roles and every table size: the
observation is already encoded from the actor's seat, with absent seats zero.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn
from torch.distributions import Categorical

from grinch_env.games import DEFAULT_GAME, get_game
from grinch_env.grinch import encoding as enc
from grinch_env.grinch.encoding import AT_TABLE, TOTALS, Scales
from grinch_env.grinch.features import NOT_APPLICABLE, NUM_FEATURES, action_features
from grinch_env.grinch.game import DRAW_PILE_ACTION, MARGIN_SCALE, MAX_PLAYERS, NUM_ACTIONS, SCORE_BASE
from grinch_env.grinch.scoring import NUM_ROWS, resolve_layout

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


# Which gain each action's feature gets: 0 discard, 1 draw, 2 score.
ACTION_KIND = torch.tensor([0] * DRAW_PILE_ACTION + [1] * (SCORE_BASE - DRAW_PILE_ACTION) + [2] * (NUM_ACTIONS - SCORE_BASE))


# The constructor arguments that define a network, and those that must match for its weights to be reused
# elsewhere (margin_baseline adds no weights).
ARCHITECTURE = ("game", "hidden_sizes", "action_features", "bonus_layout", "margin_baseline", "draw_lookahead")
WEIGHT_KEYS = ("hidden_sizes", "action_features", "draw_lookahead")  # and the game: checkpoint.check_network


class PolicyValueNet(nn.Module):
    """An MLP trunk with a policy head (one logit per action of ``game``) and a value head (the actor's expected return).

    The input and output sizes come from the game (:mod:`grinch_env.games`):
    Grinch 1337 -> 62, Gnoming 1046 -> 15.  The margin baseline and the
    draw lookahead read the Grinch's score pads and hands, so they are
    Grinch-only; each game has its own action features.

    Gnoming with ``action_features``: the trunk also reads
    :func:`grinch_env.gnoming.features.greedy_features` (per action, the gap of
    its greedy value to the best option's, in tens of points, and greedy's
    choice), and each logit gets ``-gain[0] * gap + gain[1] * choice``
    added, two learned gains initialised to 2, so the first policy leans
    towards the greedy move.

    With ``action_features`` the network also reads
    :func:`grinch_env.grinch.features.action_features` (the row values and bonus of
    the hand each legal action leads to).  The trunk gets each action's
    greedy value (bonus + best usable row); a row-offset head turns the
    trunk's state into one offset per row (a learned opportunity cost of
    using that row now, initialised to 0), and each logit gets
    ``gain[kind] * (bonus + max over usable rows of (row value + offset))``
    added, one learned gain per action kind (discard, draw, score),
    initialised to 1.  So the first policy leans towards the greedy move,
    and training learns which rows to save and how much to trust the
    immediate value.  ``draw_lookahead`` gives the Grinch's draws features
    that look at both draws (:func:`grinch_env.grinch.features.draw_lookahead_features`).
    """

    def __init__(
        self,
        hidden_sizes: list[int] | tuple[int, ...] = (256, 256),
        action_features: bool = False,
        bonus_layout: str = "standard",
        margin_baseline: bool = False,
        draw_lookahead: bool = False,
        game: str = DEFAULT_GAME,
    ) -> None:
        super().__init__()
        spec = get_game(game)
        self.game = spec.name
        if spec.name != "grinch" and (margin_baseline or draw_lookahead):
            raise ValueError(f"margin_baseline and draw_lookahead read the Grinch's observation; {spec.title} networks take neither")
        if draw_lookahead and not action_features:
            raise ValueError("draw_lookahead changes the action features, so it needs action_features=True")
        self.action_features = bool(action_features)
        self.draw_lookahead = bool(draw_lookahead)
        self.bonus_layout = bonus_layout
        self.margin_baseline = bool(margin_baseline)
        # Observation totals are divided by the layout's total_scale; the margin reward divides by MARGIN_SCALE.
        self._total_to_reward = Scales(resolve_layout(bonus_layout)).total / MARGIN_SCALE
        layers: list[nn.Module] = []
        if not self.action_features:
            extra = 0
        elif self.game == "grinch":
            extra = NUM_ACTIONS  # one greedy value per action (action_values)
        else:
            extra = spec.num_actions * self.feature_shape[1]  # every action's features, flattened
        width = spec.obs_size + extra
        for h in hidden_sizes:
            layers += [_ortho(nn.Linear(width, h), 2**0.5), nn.ReLU()]
            width = h
        self.trunk = nn.Sequential(*layers)
        # Small policy init gives a near-uniform first policy over legal moves (CleanRL's 0.01 gain).
        self.policy_head = _ortho(nn.Linear(width, spec.num_actions), 0.01)
        self.value_head = _ortho(nn.Linear(width, 1), 1.0)
        self.hidden_sizes = list(hidden_sizes)
        if self.action_features and self.game != "grinch":
            # Gnoming: logit -= gain[0] * value gap (tens of points) to the best option, += gain[1] * greedy's choice.
            self.feature_gain = nn.Parameter(torch.tensor([2.0, 2.0]))
        elif self.action_features:
            self.feature_gain = nn.Parameter(torch.ones(3))
            self.row_offset_head = nn.Linear(width, NUM_ROWS)
            nn.init.zeros_(self.row_offset_head.weight)
            nn.init.zeros_(self.row_offset_head.bias)

    @classmethod
    def from_config(cls, model_cfg: Any, bonus_layout: str, margin_baseline: bool | None = None, game: str = DEFAULT_GAME) -> PolicyValueNet:
        """Return a fresh network as a config's ``model`` section describes (``margin_baseline`` overrides the section's)."""
        args = model_cfg.model_dump()
        if margin_baseline is not None:
            args["margin_baseline"] = margin_baseline
        if game != "grinch":
            args["margin_baseline"] = False  # the margin so far is read from the Grinch's observation
        return cls(**args, bonus_layout=bonus_layout, game=game)

    def architecture(self) -> dict[str, Any]:
        """Return the constructor arguments that rebuild this network (:data:`ARCHITECTURE`; checkpoints store them)."""
        return {key: list(getattr(self, key)) if key == "hidden_sizes" else getattr(self, key) for key in ARCHITECTURE}

    @property
    def feature_shape(self) -> tuple[int, int]:
        """Return the shape of one decision's action features: (actions, features per action)."""
        if self.game == "grinch":
            return (NUM_ACTIONS, NUM_FEATURES)
        from grinch_env.gnoming.features import OPTION_FEATURES

        return (get_game(self.game).num_actions, OPTION_FEATURES)

    def features(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray | None:
        """Return the action features this network reads for a numpy batch (None without ``action_features``)."""
        if not self.action_features:
            return None
        if self.game != "grinch":
            from grinch_env.gnoming.features import greedy_features

            return greedy_features(observations, masks)
        return action_features(observations, masks, self.bonus_layout, draw_lookahead=self.draw_lookahead)

    def forward(self, obs: torch.Tensor, feats: torch.Tensor | None = None, mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Return (logits[B, 62], value[B]); with action features, ``feats`` and ``mask`` are required."""
        if self.action_features and self.game != "grinch":
            if feats is None:
                raise ValueError("this network reads action features: pass feats (grinch_env.gnoming.features.greedy_features)")
            x = self.trunk(torch.cat([obs, feats.flatten(1)], dim=-1))
            logits = self.policy_head(x) - self.feature_gain[0] * feats[..., 0] + self.feature_gain[1] * feats[..., 1]
        elif self.action_features:
            if feats is None or mask is None:
                raise ValueError("this network reads action features: pass feats (grinch_env.grinch.features.action_features) and the mask")
            usable = applicable_rows(obs, mask)
            x = self.trunk(torch.cat([obs, action_values(feats, usable)], dim=-1))
            values = action_values(feats, usable, self.row_offset_head(x))
            logits = self.policy_head(x) + self.feature_gain[ACTION_KIND] * values
        else:
            x = self.trunk(obs)
            logits = self.policy_head(x)
        value = self.value_head(x).squeeze(-1)
        if self.margin_baseline:
            value = value + self.margin_so_far(obs)
        return logits, value

    def margin_so_far(self, obs: torch.Tensor) -> torch.Tensor:
        """Return the actor's margin reward if the game ended now: own total minus the others' mean, / 100.

        With ``margin_baseline`` the value head predicts only the rest of the
        game on top of it, so past rounds' luck no longer adds to the
        advantages' noise (the value function need not relearn a sum it can read).
        """
        totals = obs[:, TOTALS:TOTALS + MAX_PLAYERS]
        n = obs[:, AT_TABLE:AT_TABLE + MAX_PLAYERS].sum(-1).clamp(min=2)
        return (totals[:, 0] - totals[:, 1:].sum(-1) / (n - 1)) * self._total_to_reward

    def distribution(self, obs: torch.Tensor, mask: torch.Tensor, feats: torch.Tensor | None = None) -> tuple[MaskedCategorical, torch.Tensor]:
        """Return the masked action distribution and the value for a batch of observations."""
        logits, value = self(obs, feats, mask)
        return MaskedCategorical(logits, mask), value

    @torch.no_grad()
    def distribution_np(self, observations: np.ndarray, masks: np.ndarray) -> tuple[MaskedCategorical, torch.Tensor, np.ndarray | None]:
        """Return (distribution, value, features) for numpy inputs, computing the features when the network reads them."""
        feats = self.features(observations, masks)
        dist, value = self.distribution(
            torch.as_tensor(np.require(observations, np.float32, "W")), torch.as_tensor(np.require(masks, None, "W")), None if feats is None else torch.from_numpy(feats)
        )
        return dist, value, feats


def _ortho(layer: nn.Linear, gain: float) -> nn.Linear:
    nn.init.orthogonal_(layer.weight, gain)
    nn.init.zeros_(layer.bias)
    return layer


# ---------------------------------------------------- Grinch action values
# Score action 55 + k may only use row k; the other actions may use any unused row.
_SCORE_ROW = torch.zeros(NUM_ACTIONS, NUM_ROWS, dtype=torch.bool)
_SCORE_ROW[SCORE_BASE:, :] = torch.eye(NUM_ROWS, dtype=torch.bool)
_IS_SCORE = torch.zeros(NUM_ACTIONS, dtype=torch.bool)
_IS_SCORE[SCORE_BASE:] = True


def applicable_rows(observations: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
    """Return ``bool[B, 62, 7]``: the rows each legal action may still use (unused rows; a score action only its own)."""
    unused = observations[:, enc.ROW_USED: enc.ROW_USED + NUM_ROWS] < 0.5
    rows = torch.where(_IS_SCORE[:, None], _SCORE_ROW, unused[:, None, :])
    return rows & masks.bool()[..., None]


def action_values(feats: torch.Tensor, applicable: torch.Tensor, offsets: torch.Tensor | None = None) -> torch.Tensor:
    """Return ``[B, 62]``: bonus + max over applicable rows of (row value + offset); 0 where no row applies."""
    rows = feats[..., :NUM_ROWS]
    if offsets is not None:
        rows = rows + offsets[:, None, :]
    best = torch.where(applicable, rows, torch.full_like(rows, NOT_APPLICABLE)).max(-1).values
    return torch.where(applicable.any(-1), best + feats[..., NUM_ROWS], torch.zeros_like(best))


def greedy_values(observations: np.ndarray, masks: np.ndarray, bonus_layout: str = "standard") -> np.ndarray:
    """Return ``float32[B, 62]``: each legal action's immediate value in its best usable row, bonus included / FEATURE_SCALE."""
    feats = torch.from_numpy(action_features(observations, masks, bonus_layout))
    obs = torch.as_tensor(np.asarray(observations, dtype=np.float32).reshape(-1, enc.OBS_SIZE))
    return action_values(feats, applicable_rows(obs, torch.as_tensor(np.asarray(masks).reshape(-1, NUM_ACTIONS)))).numpy()



__all__ = ["MASK_VALUE", "MaskedCategorical", "PolicyValueNet", "action_values", "applicable_rows", "greedy_values"]
