"""One network for both games and every table size: token embeddings, a transformer encoder, action tokens read against the state.

Inputs are the rules-level tokens of ``grinch_env.<game>.tokens`` (both games
share the column layout: ``TYPE, CARD, SEAT, POS`` ids then dense features).
Each state token is the sum of a type, card, seat and position embedding and a
linear map of its dense features; padding tokens (type 0) are masked out of
attention.  Card embeddings are shared by state and action tokens.  Each
action token, embedded the same way, attends to the encoded state (one
cross-attention layer) and an MLP reads ``[action, attended state, pooled
state]`` to give its logit and its Q-value.  The value head reads the pooled
state, and with ``value_global`` also the encoded global token (the first state
token in both games: Grinch's carries the banked margin, which a mean over 55
tokens dilutes).  With ``raw_dense`` the action MLP also reads each action
token's dense columns as they are (the embedding's layer norm rescales them
together with the id embeddings, so a row value's size reaches the MLP only
relative to the rest of the token).  With ``action_context`` it also reads the encoded
first two state tokens (in both games the global token and the acting seat's own
token: the score pad, rounds left), which the mean over every token dilutes.  Without
``action_card_ids`` an action token is embedded without its card ids (only its
type, position and dense columns: what the action does, not which card it moves),
so that the action head cannot tell actions apart by memorised card identities.
``token_options`` are input options the network records for whoever encodes for it
(``training.learner.rollout.net_tokens``, the Grinch only): ``action_cards``,
the discard and pile-draw tokens carry the moved card's suit, rank and bonus columns;
``card_after``, every card token the open-row values of the hand with that card.
With ``hand_pool = P > 0`` (the Grinch, with ``token_options`` ``action_cards``) the action MLP also reads each
action's afterstate hand as a set: every card's own rules columns (suit, rank, printed bonus) go through a
small shared MLP to ``P`` features, summed over the cards in the observer's hand, minus the discarded card's or
plus the drawn top card's (the columns the action token carries), beside the same sum over the unseen cards
(public counts, / 8), through a second MLP: the kept cards' composition (how many of a suit, of a rank, what
they could still become given what is unseen) that the row values of the afterstate do not show, read
the same way for every card (DeepSets; no card ids); the value head reads the same for the hand as it is.
With ``afterstate_head = W > 0`` (the Grinch, with ``action_cards``) a second scorer adds to every action's logit
and Q-value: a 3-layer MLP of width ``W`` on the action's kept hand written out cell by cell (suit x rank counts and
the bonus cards held: the hand's cards minus the discard, plus a drawn top), the unseen cards' counts, the action
token's dense columns and the global and own-seat tokens' (a complete afterstate, as ``afterstate_fit.py`` in
docs/results/learner_grinch_draws/ reads it; no card ids, no expectation).
Nothing in it depends on the number of seats.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.distributions import Categorical

from grinch_env import tokens as layout  # the token layout both games share
from grinch_env.grinch import tokens as gt  # hand_pool's codes (the Grinch's card tokens and action kinds)

MASK_VALUE = -1e8  # the logit of an illegal action: probability 0


class MaskedCategorical(Categorical):
    """A categorical distribution over the legal actions only (sb3-contrib's MaskableCategorical).

    Masked actions get logit ``MASK_VALUE``, hence probability 0: they are
    never sampled and contribute exactly 0 to the entropy.
    """

    def __init__(self, logits: torch.Tensor, mask: torch.Tensor) -> None:
        self.mask = mask.bool()
        if not bool(self.mask.any(dim=-1).all()):
            raise ValueError("every action mask must allow at least one action")
        super().__init__(logits=torch.where(self.mask, logits, torch.full_like(logits, MASK_VALUE)))

    def entropy(self) -> torch.Tensor:
        p_log_p = self.logits * self.probs
        return -torch.where(self.mask, p_log_p, torch.zeros_like(p_log_p)).sum(-1)


_CODE = 36  # afterstate_head's code of a card: its suit x rank cell (24) and its bonus cell (12)
_CARD_COLS = gt.CARD_COLS  # a Grinch card's own rules columns: card tokens' first dense columns, action tokens' from gt.A_CARD on


class _Embed(nn.Module):
    """Sum of id embeddings and a linear map of the dense features."""

    def __init__(self, d_model: int, cards: nn.Embedding, second_card: bool, card_ids: bool = True) -> None:
        super().__init__()
        self.card_ids = card_ids
        self.kind = nn.Embedding(layout.TYPE_VOCAB, d_model)
        self.cards = cards
        self.second_card = second_card
        self.third = nn.Embedding(layout.CARD_VOCAB if second_card else layout.SEAT_VOCAB, d_model)
        self.pos = nn.Embedding(layout.POS_VOCAB, d_model)
        self.dense = nn.Linear(layout.NUM_DENSE, d_model)
        self.norm = nn.LayerNorm(d_model)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        ids = tokens[..., : layout.NUM_IDS].long()
        third = ids[..., 2]
        if not self.card_ids:  # an action token without its cards: what it does, not which card it moves
            return self.norm(self.kind(ids[..., 0]) + self.pos(ids[..., 3]) + self.dense(tokens[..., layout.NUM_IDS:]))
        x = self.kind(ids[..., 0]) + self.cards(ids[..., 1]) + self.pos(ids[..., 3]) + self.dense(tokens[..., layout.NUM_IDS:])
        # the action tokens' third column is a second card: it shares the card embedding (plus its own marker table)
        x = x + (self.cards(third) + self.third(third) if self.second_card else self.third(third))
        return self.norm(x)


class TokenNet(nn.Module):
    """Policy logits, Q-values and a state value from state and action tokens (module docstring)."""

    def __init__(self, d_model: int = 64, layers: int = 2, heads: int = 4, ff: int = 128, value_global: bool = False,
                 round_value: bool = False, raw_dense: bool = False, action_context: bool = False,
                 action_card_ids: bool = True, token_options: tuple[str, ...] | list[str] = (), hand_pool: int = 0,
                 afterstate_head: int = 0) -> None:
        super().__init__()
        self.config = {"d_model": d_model, "layers": layers, "heads": heads, "ff": ff, "value_global": value_global, "round_value": round_value,
                       "raw_dense": raw_dense, "action_context": action_context,
                       "action_card_ids": action_card_ids, "token_options": list(token_options)}
        for name, width in (("afterstate_head", afterstate_head), ("hand_pool", hand_pool)):  # the options that read the moved card
            if width < 0:
                raise ValueError(f"{name} must be 0 (off) or a positive width, got {width}")
            if width and "action_cards" not in token_options:
                raise ValueError(f"{name} reads the moved card's columns of the action tokens: it needs token_options to hold 'action_cards', "
                                 f"got {list(token_options)}")
            if width:  # only when on, so that every earlier checkpoint's config (and the default network) is unchanged
                self.config[name] = width
        self.afterstate_head = afterstate_head
        if afterstate_head:
            width = 2 * _CODE + 3 * layout.NUM_DENSE
            self.after_mlp = nn.Sequential(nn.Linear(width, afterstate_head), nn.ReLU(), nn.Linear(afterstate_head, afterstate_head), nn.ReLU(),
                                           nn.Linear(afterstate_head, afterstate_head), nn.ReLU())
            self.after_logit = nn.Linear(afterstate_head, 1)
            self.after_q = nn.Linear(afterstate_head, 1)
            nn.init.zeros_(self.after_logit.bias)
            self.after_logit.weight.data.mul_(0.01)
        self.value_global = value_global
        self.raw_dense = raw_dense
        self.action_context = action_context
        self.token_options = tuple(token_options)  # read by the encoder (rollout.net_tokens), not by forward
        self.cards = nn.Embedding(layout.CARD_VOCAB, d_model)
        self.state_embed = _Embed(d_model, self.cards, second_card=False)
        self.action_embed = _Embed(d_model, self.cards, second_card=True, card_ids=action_card_ids)
        layer = nn.TransformerEncoderLayer(d_model, heads, ff, dropout=0.0, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.cross = nn.MultiheadAttention(d_model, heads, batch_first=True)
        self.hand_pool = hand_pool
        if hand_pool:
            self.card_mlp = nn.Sequential(nn.Linear(_CARD_COLS, hand_pool), nn.ReLU(), nn.Linear(hand_pool, hand_pool), nn.ReLU())
            self.hand_mlp = nn.Sequential(nn.Linear(2 * hand_pool, ff), nn.ReLU(), nn.Linear(ff, d_model), nn.ReLU())
        self.action_mlp = nn.Sequential(nn.Linear((5 if action_context else 3) * d_model + (d_model if hand_pool else 0)
                                                  + (layout.NUM_DENSE if raw_dense else 0), ff), nn.ReLU(), nn.Linear(ff, ff), nn.ReLU())
        self.logit = nn.Linear(ff, 1)
        self.q = nn.Linear(ff, 1)
        v_width = (2 * d_model if value_global else d_model) + (d_model if hand_pool else 0)
        self.value = nn.Sequential(nn.Linear(v_width, ff), nn.ReLU(), nn.Linear(ff, 1))
        self.round_value = nn.Sequential(nn.Linear(v_width, ff), nn.ReLU(), nn.Linear(ff, 1)) if round_value else None
        nn.init.zeros_(self.logit.bias)
        self.logit.weight.data.mul_(0.01)  # a near-uniform first policy over the legal actions

    def forward(self, state: torch.Tensor, actions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Return ``(logits [B, A], q [B, A], value [B])`` for tokens ``state [B, N, D]`` and ``actions [B, A, E]``."""
        return self.heads(state, actions)[:3]

    def heads(self, state: torch.Tensor, actions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """Return :meth:`forward`'s three outputs and the round value ``[B]`` (``None`` without ``round_value``)."""
        pad = state[..., layout.TYPE] == 0
        cols = ~pad.all(0)  # drop token positions that are padding in every row (absent seats): same result, less work
        if not bool(cols.all()):
            state, pad = state[:, cols], pad[:, cols]
        h = self.encoder(self.state_embed(state), src_key_padding_mask=pad)
        keep = (~pad).unsqueeze(-1).float()
        pooled = (h * keep).sum(1) / keep.sum(1).clamp(min=1.0)
        a = self.action_embed(actions)
        read, _ = self.cross(a, h, h, key_padding_mask=pad, need_weights=False)
        parts = [a, read, pooled.unsqueeze(1).expand_as(a)]
        if self.action_context:  # the global token and the acting seat's own token (never padding in either game)
            parts += [h[:, 0:1].expand_as(a), h[:, 1:2].expand_as(a)]
        if self.hand_pool:
            after, now = self._afterstate_hands(state, actions)
            parts.append(after)
        if self.raw_dense:
            parts.append(actions[..., layout.NUM_IDS:])
        z = self.action_mlp(torch.cat(parts, dim=-1))
        logit, q = self.logit(z).squeeze(-1), self.q(z).squeeze(-1)
        if self.afterstate_head:
            za = self.after_mlp(self._afterstate_input(state, actions))
            logit = logit + self.after_logit(za).squeeze(-1)
            q = q + self.after_q(za).squeeze(-1)
        v_in = torch.cat([pooled, h[:, 0]], dim=-1) if self.value_global else pooled  # token 0 is the global token (never padding)
        if self.hand_pool:
            v_in = torch.cat([v_in, now], dim=-1)
        round_value = self.round_value(v_in).squeeze(-1) if self.round_value is not None else None
        return logit, q, self.value(v_in).squeeze(-1), round_value

    @staticmethod
    def _pool_cards(state: torch.Tensor, actions: torch.Tensor, code) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(after [B, A, F], hand [B, F], unseen [B, F])``: ``code`` (a card's 11 rules columns to ``F`` features) summed over
        the observer's hand, over each action's afterstate hand (minus the discarded card, plus a drawn top; the draw pile
        and the rows: the hand) and over the unseen cards (``hand_pool``'s and ``afterstate_head``'s shared pooling)."""
        cards = state[..., layout.TYPE] == gt.CARD_T
        pos = state[..., layout.POS]
        per_card = code(state[..., layout.NUM_IDS:layout.NUM_IDS + _CARD_COLS])  # [B, N, F]: every card token's own columns
        hand = (per_card * (cards & (pos == gt.LOC_HAND)).unsqueeze(-1)).sum(1)
        unseen = (per_card * (cards & (pos == gt.LOC_UNSEEN)).unsqueeze(-1)).sum(1)
        kind = actions[..., layout.TYPE]
        sign = (kind == gt.A_DRAW_DISCARD).float() - (kind == gt.A_DISCARD).float()  # a pile draw adds its card, a discard removes it
        moved = code(actions[..., layout.NUM_IDS + gt.A_CARD:layout.NUM_IDS + gt.A_CARD + _CARD_COLS])
        return hand.unsqueeze(1) + sign.unsqueeze(-1) * moved, hand, unseen

    def _afterstate_hands(self, state: torch.Tensor, actions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``([B, A, d_model], [B, d_model])``: each action's afterstate hand, and the hand as it is, beside the unseen cards
        (/ 8), as pooled card features through the hand MLP (``hand_pool``; the second is the value head's)."""
        after, hand, unseen = self._pool_cards(state, actions, self.card_mlp)
        unseen = unseen / 8.0
        return (self.hand_mlp(torch.cat([after, unseen.unsqueeze(1).expand_as(after)], dim=-1)),
                self.hand_mlp(torch.cat([hand, unseen], dim=-1)))

    @staticmethod
    def _codes(cols: torch.Tensor) -> torch.Tensor:
        """``[..., 36]``: a card's suit x rank cell (24) and, for a bonus card, its suit x rank 1-3 cell (12), from its 11
        rules columns (all 0 for no card).  The bonus cells are the standard layout's (ranks 1-3); a custom layout's
        bonus on a higher rank shares its suit's rank-3 cell."""
        present = cols[..., :4].sum(-1, keepdim=True) > 0
        suit = cols[..., :4].argmax(-1)
        rank = (cols[..., 4] * 6).round().long().clamp(1, 6) - 1
        cell = nn.functional.one_hot(suit * 6 + rank, 24) * present
        bonus = nn.functional.one_hot(suit * 3 + rank.clamp(max=2), 12) * (present & (cols[..., 5:6] > 0))
        return torch.cat([cell, bonus], dim=-1).float()

    def _afterstate_input(self, state: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
        """``[B, A, 2 * 36 + 3 * NUM_DENSE]`` (``afterstate_head``): each action's kept hand as cell counts (the hand minus
        the discard, plus a drawn top), the unseen cards' counts / 2, the action token's dense columns (its open-row
        values and bonus), the global token's and the acting seat's own token's dense columns."""
        after, _, unseen = self._pool_cards(state, actions, self._codes)  # [B, A, 36], [B, 36]
        unseen = unseen / 2.0
        a = actions.shape[1]
        ctx = torch.cat([state[:, 0, layout.NUM_IDS:], state[:, 1, layout.NUM_IDS:]], dim=-1).unsqueeze(1).expand(-1, a, -1)
        return torch.cat([after, unseen.unsqueeze(1).expand(-1, a, -1), actions[..., layout.NUM_IDS:], ctx], dim=-1)

    def distribution(self, state: torch.Tensor, actions: torch.Tensor, mask: torch.Tensor) -> tuple[MaskedCategorical, torch.Tensor, torch.Tensor]:
        """Return the masked policy, the Q-values and the value."""
        logits, q, value = self(state, actions)
        return MaskedCategorical(logits, mask), q, value


__all__ = ["TokenNet"]
