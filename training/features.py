"""Per-action hand-value features computed from the observation alone (the network's inductive bias).

For every legal action, the value its resulting hand would score now in its
best unused row (bonus included), the number the ``greedy`` baseline ranks
actions by, computed with the agents' vectorised scorer
(:class:`grinch_env.agents.handeval.HandEvaluator`, checked against
:mod:`grinch_env.scoring`):

* discard ``c`` (0..47): the hand without ``c``;
* draw 48: the mean over the cards the actor cannot locate of the hand plus that card;
* draw ``49 + j``: the hand plus the top card of relative seat ``j``'s discard pile;
* score ``55 + k``: row ``k``'s value plus the bonus, for an unused row.

Values are divided by :data:`FEATURE_SCALE` and are 0 for illegal actions.
The network reads them as extra inputs and adds ``gain[kind] * feature`` to
the matching logit (:class:`training.model.PolicyValueNet`); it still has to
learn when the immediate value is the wrong thing to maximise.
"""

from __future__ import annotations

import numpy as np

from grinch_env import encoding as enc
from grinch_env.agents.handeval import HandEvaluator
from grinch_env.cards import NUM_CARDS
from grinch_env.game import DRAW_DISCARD_BASE, DRAW_PILE_ACTION, MAX_PLAYERS, NUM_ACTIONS, SCORE_BASE
from grinch_env.scoring import NUM_ROWS, resolve_layout

FEATURE_SCALE = 3.0  # three points of hand value = one unit of logit at gain 1
_EVALUATORS: dict[str, HandEvaluator] = {}


def _evaluator(bonus_layout: str) -> HandEvaluator:
    if bonus_layout not in _EVALUATORS:
        _EVALUATORS[bonus_layout] = HandEvaluator(resolve_layout(bonus_layout))
    return _EVALUATORS[bonus_layout]


def _hands(hand: np.ndarray) -> np.ndarray:
    """Return the cards of boolean hands ``[G, 48]`` that all hold the same number of cards, as ``int[G, h]``."""
    return np.nonzero(hand)[1].reshape(hand.shape[0], -1)


def action_features(observations: np.ndarray, masks: np.ndarray, bonus_layout: str = "standard") -> np.ndarray:
    """Return ``float32[B, 62]``: each legal action's immediate hand value / FEATURE_SCALE (see the module docstring)."""
    obs = np.asarray(observations, dtype=np.float32).reshape(-1, enc.OBS_SIZE)
    mask = np.asarray(masks).reshape(-1, NUM_ACTIONS) > 0
    ev = _evaluator(bonus_layout)
    out = np.zeros(mask.shape, dtype=np.float32)
    hand = obs[:, : NUM_CARDS] > 0.5
    sizes = hand.sum(1)
    used = obs[:, enc.ROW_USED: enc.ROW_USED + NUM_ROWS] > 0.5
    offsets = np.where(used, -np.inf, 0.0)
    discard = mask[:, :DRAW_PILE_ACTION].any(1)
    draw = mask[:, DRAW_PILE_ACTION:SCORE_BASE].any(1)
    score = mask[:, SCORE_BASE:].any(1)
    for h in np.unique(sizes):
        # Discards: the hand without each of its cards.
        rows = np.flatnonzero(discard & (sizes == h))
        if len(rows) and h > 1:
            cards = _hands(hand[rows])  # [G, h]
            keep = np.array([[j for j in range(h) if j != i] for i in range(h)])  # [h, h-1]
            values = ev.value(cards[:, keep], offsets[rows][:, None, :])  # [G, h]
            out[rows[:, None], cards] = values
        # Draws: the hand plus every possible card, read at the pile tops and averaged over the unseen cards.
        rows = np.flatnonzero(draw & (sizes == h))
        if len(rows):
            cards = _hands(hand[rows])
            g = len(rows)
            plus = np.concatenate([np.broadcast_to(cards[:, None, :], (g, NUM_CARDS, h)), np.broadcast_to(np.arange(NUM_CARDS), (g, NUM_CARDS))[..., None]], axis=2)
            values = ev.value(plus, offsets[rows][:, None, :])  # [G, 48]
            o = obs[rows]
            seen = hand[rows].copy()
            for j in range(MAX_PLAYERS):
                base = enc.SEAT_BLOCK + j * enc.SEAT_STRIDE
                seen |= o[:, base + enc.PILE_CONTENTS: base + enc.PILE_CONTENTS + NUM_CARDS] > 0.5
                if j:
                    seen |= o[:, base + enc.KNOWN_IN_HAND: base + enc.KNOWN_IN_HAND + NUM_CARDS] > 0.5
                top = o[:, base + enc.PILE_TOP: base + enc.PILE_TOP + NUM_CARDS]
                has_top = top.max(1) > 0.5
                out[rows[has_top], DRAW_DISCARD_BASE + j] = values[has_top, top[has_top].argmax(1)]
            unseen = ~seen
            out[rows, DRAW_PILE_ACTION] = (values * unseen).sum(1) / np.maximum(unseen.sum(1), 1)
        # Scoring: each unused row plus the bonus.
        rows = np.flatnonzero(score & (sizes == h))
        if len(rows) and h > 0:
            row_values, bonus = ev.score(_hands(hand[rows]))
            out[rows, SCORE_BASE:] = row_values + bonus[:, None]
    out *= mask
    out /= FEATURE_SCALE
    return out


__all__ = ["FEATURE_SCALE", "action_features"]
