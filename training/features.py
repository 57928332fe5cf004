"""Per-action hand-value features computed from the observation alone (the network's inductive bias).

For every legal action, the row values and the bonus of the hand that action
leads to, computed with the agents' vectorised scorer
(:class:`grinch_env.agents.handeval.HandEvaluator`, checked against
:mod:`grinch_env.scoring`):

* discard ``c`` (0..47): the hand without ``c``;
* draw 48: the mean over the cards the actor cannot locate of the hand plus that card;
* draw ``49 + j``: the hand plus the top card of relative seat ``j``'s discard pile;
* score ``55 + k``: the hand itself (only row ``k`` applies to that action).

:func:`action_features` returns them as ``float32[B, 62, 8]`` (7 rows, then
the bonus), divided by :data:`FEATURE_SCALE`, zero for illegal actions.
:func:`applicable_rows` says which rows an action may still use (the unused
ones; for a score action only its own row), and
``bonus + max over applicable rows`` is the value the ``greedy`` baseline
ranks actions by.  The network (:class:`training.model.PolicyValueNet`)
adds learned, state-dependent row offsets before that max (row opportunity
costs) and feeds the result to the matching logit.
"""

from __future__ import annotations

import numpy as np
import torch

from grinch_env import encoding as enc
from grinch_env.agents.handeval import HandEvaluator
from grinch_env.cards import NUM_CARDS
from grinch_env.game import DRAW_DISCARD_BASE, DRAW_PILE_ACTION, MAX_PLAYERS, NUM_ACTIONS, SCORE_BASE
from grinch_env.scoring import NUM_ROWS, resolve_layout

FEATURE_SCALE = 3.0  # three points of hand value = one unit of logit at gain 1
NUM_FEATURES = NUM_ROWS + 1  # 7 row values, then the bonus
_EVALUATORS: dict[str, HandEvaluator] = {}
# Score action 55 + k may only use row k; the other actions may use any unused row.
_SCORE_ROW = torch.zeros(NUM_ACTIONS, NUM_ROWS, dtype=torch.bool)
_SCORE_ROW[SCORE_BASE:, :] = torch.eye(NUM_ROWS, dtype=torch.bool)
_IS_SCORE = torch.zeros(NUM_ACTIONS, dtype=torch.bool)
_IS_SCORE[SCORE_BASE:] = True
NOT_APPLICABLE = -1e4


def _evaluator(bonus_layout: str) -> HandEvaluator:
    if bonus_layout not in _EVALUATORS:
        _EVALUATORS[bonus_layout] = HandEvaluator(resolve_layout(bonus_layout))
    return _EVALUATORS[bonus_layout]


def _hands(hand: np.ndarray) -> np.ndarray:
    """Return the cards of boolean hands ``[G, 48]`` that all hold the same number of cards, as ``int[G, h]``."""
    return np.nonzero(hand)[1].reshape(hand.shape[0], -1)


def _scored(ev: HandEvaluator, cards: np.ndarray) -> np.ndarray:
    rows, bonus = ev.score(cards)
    return np.concatenate([rows, bonus[..., None]], axis=-1)


def action_features(observations: np.ndarray, masks: np.ndarray, bonus_layout: str = "standard") -> np.ndarray:
    """Return ``float32[B, 62, 8]``: each legal action's resulting row values and bonus / FEATURE_SCALE (module docstring)."""
    obs = np.asarray(observations, dtype=np.float32).reshape(-1, enc.OBS_SIZE)
    mask = np.asarray(masks).reshape(-1, NUM_ACTIONS) > 0
    ev = _evaluator(bonus_layout)
    out = np.zeros(mask.shape + (NUM_FEATURES,), dtype=np.float32)
    hand = obs[:, :NUM_CARDS] > 0.5
    sizes = hand.sum(1)
    discard = mask[:, :DRAW_PILE_ACTION].any(1)
    draw = mask[:, DRAW_PILE_ACTION:SCORE_BASE].any(1)
    score = mask[:, SCORE_BASE:].any(1)
    for h in np.unique(sizes):
        # Discards: the hand without each of its cards.
        rows = np.flatnonzero(discard & (sizes == h))
        if len(rows) and h > 1:
            cards = _hands(hand[rows])  # [G, h]
            keep = np.array([[j for j in range(h) if j != i] for i in range(h)])  # [h, h-1]
            out[rows[:, None], cards] = _scored(ev, cards[:, keep])  # [G, h, 8]
        # Draws: the hand plus every possible card, read at the pile tops and averaged over the unseen cards.
        rows = np.flatnonzero(draw & (sizes == h))
        if len(rows):
            cards = _hands(hand[rows])
            g = len(rows)
            plus = np.concatenate([np.broadcast_to(cards[:, None, :], (g, NUM_CARDS, h)), np.broadcast_to(np.arange(NUM_CARDS), (g, NUM_CARDS))[..., None]], axis=2)
            values = _scored(ev, plus)  # [G, 48, 8]
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
            out[rows, DRAW_PILE_ACTION] = (values * unseen[..., None]).sum(1) / np.maximum(unseen.sum(1), 1)[:, None]
        # Scoring: the hand itself; action 55 + k reads only row k (applicable_rows).
        rows = np.flatnonzero(score & (sizes == h))
        if len(rows) and h > 0:
            out[rows, SCORE_BASE:] = _scored(ev, _hands(hand[rows]))[:, None, :]
    out *= mask[..., None]
    out /= FEATURE_SCALE
    return out


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


__all__ = ["FEATURE_SCALE", "NUM_FEATURES", "action_features", "action_values", "applicable_rows", "greedy_values"]
