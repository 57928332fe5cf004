"""Per-action hand-value features computed from the observation alone (the network's inductive bias).

For every legal action, the row values and the bonus of the hand that action
leads to, computed with the agents' vectorised scorer
(:class:`grinch_env.grinch.agents.handeval.HandEvaluator`, checked against
:mod:`grinch_env.grinch.scoring`):

* discard ``c`` (0..47): the hand without ``c``;
* draw 48: the mean over the cards the actor cannot locate of the hand plus that card;
* draw ``49 + j``: the hand plus the top card of relative seat ``j``'s discard pile;
* score ``55 + k``: the hand itself (only row ``k`` applies to that action).

With ``draw_lookahead`` the Grinch's draws look at both draws instead
(:func:`draw_lookahead_features`): a first draw is valued with the best
second draw after it, and a 6-card hand by its best five cards.

:func:`action_features` returns them as ``float32[B, 62, 8]`` (7 rows, then
the bonus), divided by :data:`FEATURE_SCALE`, zero for illegal actions.
The network (:class:`training.model.PolicyValueNet`) values each action as
``bonus + max over applicable rows`` (:func:`training.model.applicable_rows`:
the unused rows; for a score action only its own row), the value the
``greedy`` baseline ranks actions by, plus learned, state-dependent row
offsets before that max (row opportunity costs), and feeds the result to the
matching logit.  This module needs numpy only (no torch).
"""

from __future__ import annotations

import numpy as np

from grinch_env.grinch import encoding as enc
from grinch_env.grinch.agents.handeval import HandEvaluator, five_card_subsets
from grinch_env.grinch.cards import NUM_CARDS
from grinch_env.grinch.game import DRAW_PILE_ACTION, MAX_PLAYERS, NUM_ACTIONS, SCORE_BASE
from grinch_env.grinch.scoring import NUM_ROWS, resolve_layout

FEATURE_SCALE = 3.0  # three points of hand value = one unit of logit at gain 1
NUM_FEATURES = NUM_ROWS + 1  # 7 row values, then the bonus
NOT_APPLICABLE = -1e4  # the value of a row an action may not use (below any real one)
_EVALUATORS: dict[str, HandEvaluator] = {}


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


def action_features(observations: np.ndarray, masks: np.ndarray, bonus_layout: str = "standard", draw_lookahead: bool = False) -> np.ndarray:
    """Return ``float32[B, 62, 8]``: each legal action's resulting row values and bonus / FEATURE_SCALE (module docstring).

    ``draw_lookahead`` replaces the Grinch's draw features by :func:`draw_lookahead_features`.
    """
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
        # Scoring: the hand itself; action 55 + k reads only row k (applicable_rows).
        rows = np.flatnonzero(score & (sizes == h))
        if len(rows) and h > 0:
            out[rows, SCORE_BASE:] = _scored(ev, _hands(hand[rows]))[:, None, :]
    rows = np.flatnonzero(draw)
    if len(rows):
        draw_features = draw_lookahead_features if draw_lookahead else one_card_draw_features
        out[rows, DRAW_PILE_ACTION:SCORE_BASE] = draw_features(obs[rows], ev)
    out *= mask[..., None]
    out /= FEATURE_SCALE
    return out


def _best_five(ev: HandEvaluator, cards: np.ndarray) -> np.ndarray:
    """Return ``[..., 8]`` features of hands ``cards int[..., m]``: row values and bonus for m <= 5; for m > 5, per row
    the best 5-card subset's row value plus its bonus, with the bonus column 0 (so bonus + max row is the best hand)."""
    if cards.shape[-1] <= 5:
        return _scored(ev, cards).astype(np.float32)
    rows, bonus = ev.score(cards[..., five_card_subsets(cards.shape[-1])])  # [..., C(m, 5), 7], [..., C(m, 5)]
    best = (rows + bonus[..., None]).max(-2)
    return np.concatenate([best, np.zeros(best.shape[:-1] + (1,))], axis=-1).astype(np.float32)


def _greedy_scalar(feats: np.ndarray, unused: np.ndarray) -> np.ndarray:
    """Return bonus + the best unused row of ``feats [G, ..., 8]`` (``unused bool[G, 7]``)."""
    shape = (unused.shape[0],) + (1,) * (feats.ndim - 2) + (NUM_ROWS,)
    rows = np.where(unused.reshape(shape), feats[..., :NUM_ROWS], NOT_APPLICABLE)
    return rows.max(-1) + feats[..., NUM_ROWS]


def _public_cards(obs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Return ``(hand bool[G, 48], unseen bool[G, 48], tops int[G, 6], seconds int[G, 6])`` of observations ``[G, 1337]``.

    ``unseen``: the cards the actor cannot locate (not in its hand, in a pile or known in another hand);
    ``tops`` / ``seconds``: each relative seat's top pile card and the one under it, -1 where there is none.
    """
    g = len(obs)
    hand = obs[:, :NUM_CARDS] > 0.5
    seen = hand.copy()
    tops = np.full((g, MAX_PLAYERS), -1)
    seconds = np.full((g, MAX_PLAYERS), -1)
    for j in range(MAX_PLAYERS):
        base = enc.SEAT_BLOCK + j * enc.SEAT_STRIDE
        seen |= obs[:, base + enc.PILE_CONTENTS: base + enc.PILE_CONTENTS + NUM_CARDS] > 0.5
        if j:
            seen |= obs[:, base + enc.KNOWN_IN_HAND: base + enc.KNOWN_IN_HAND + NUM_CARDS] > 0.5
        for cards_at, offset in ((tops, enc.PILE_TOP), (seconds, enc.PILE_SECOND)):
            block = obs[:, base + offset: base + offset + NUM_CARDS]
            cards_at[:, j] = np.where(block.max(1) > 0.5, block.argmax(1), -1)
    return hand, ~seen, tops, seconds


def _one_card_draws(ev: HandEvaluator, hand: np.ndarray, unseen: np.ndarray, tops: np.ndarray, score) -> np.ndarray:
    """Return ``[n, 7, 8]`` draw features of same-size hands: ``score(ev, hand + card)`` read at each pile's top card,
    and its mean over the unseen cards for the draw pile."""
    cards = _hands(hand)
    n, h = cards.shape
    plus = np.concatenate([np.broadcast_to(cards[:, None, :], (n, NUM_CARDS, h)), np.broadcast_to(np.arange(NUM_CARDS), (n, NUM_CARDS))[..., None]], axis=2)
    values = score(ev, plus)  # [n, 48, 8]
    out = np.zeros((n, SCORE_BASE - DRAW_PILE_ACTION, NUM_FEATURES), dtype=np.float32)
    for j in range(MAX_PLAYERS):
        has = tops[:, j] >= 0
        out[has, 1 + j] = values[has, tops[has, j]]
    out[:, 0] = (values * unseen[..., None]).sum(1) / np.maximum(unseen.sum(1), 1)[:, None]
    return out


def one_card_draw_features(obs: np.ndarray, ev: HandEvaluator) -> np.ndarray:
    """Return ``float32[G, 7, 8]``: unscaled features of the draw actions 48..54 without lookahead (module docstring)."""
    hand, unseen, tops, _ = _public_cards(obs)
    out = np.zeros((len(obs), SCORE_BASE - DRAW_PILE_ACTION, NUM_FEATURES), dtype=np.float32)
    sizes = hand.sum(1)
    for h in np.unique(sizes):
        rows = np.flatnonzero(sizes == h)
        out[rows] = _one_card_draws(ev, hand[rows], unseen[rows], tops[rows], _scored)
    return out


def draw_lookahead_features(obs: np.ndarray, ev: HandEvaluator) -> np.ndarray:
    """Return ``float32[G, 7, 8]``: unscaled features of the draw actions 48..54 that look at the whole draw.

    * **Second draw** (``FIRST_DRAW_MADE``): the hand plus the card, as without
      lookahead, except that a 6-card hand is valued by its best 5 cards (the
      Grinch discards one next).
    * **First draw**: the hand after this card *and the best second draw*:
      for a pile, the second draw that maximises the greedy value (bonus +
      best unused row) among the other piles' tops, this pile's second card and
      the draw pile; for the draw pile, that choice made for every card it
      could give (the cards the actor cannot locate) and the results averaged.
      The draw pile as a second draw is the mean over those cards of the
      resulting features.
    """
    hand, unseen, tops, seconds = _public_cards(obs)
    unused = obs[:, enc.ROW_USED: enc.ROW_USED + NUM_ROWS] < 0.5
    first = obs[:, enc.FIRST_DRAW_MADE] < 0.5
    out = np.zeros((len(obs), SCORE_BASE - DRAW_PILE_ACTION, NUM_FEATURES), dtype=np.float32)
    sizes = hand.sum(1)
    for h in np.unique(sizes):
        rows = np.flatnonzero(~first & (sizes == h))
        if len(rows):
            out[rows] = _one_card_draws(ev, hand[rows], unseen[rows], tops[rows], _best_five)
        rows = np.flatnonzero(first & (sizes == h))
        for start in range(0, len(rows), 64):  # the pair tables are [64, 48, 48, 8] at most
            r = rows[start:start + 64]
            out[r] = _first_draws(ev, hand[r], unseen[r], unused[r], tops[r], seconds[r])
    return out


def _first_draws(ev, hand, unseen, unused, tops, seconds) -> np.ndarray:
    """Return ``[n, 7, 8]`` features of first draws for same-size hands (:func:`draw_lookahead_features`)."""
    cards = _hands(hand)
    n, h = cards.shape
    # table[i, a, b]: features of hand i + card a + card b.  Only cards that can be drawn matter (unseen cards,
    # pile tops and the cards under them), and the table is symmetric, so score each such pair once.
    drawable = unseen.any(0)
    for cards_at in (tops, seconds):
        drawable[cards_at[cards_at >= 0]] = True
    a_idx, b_idx = np.triu_indices(NUM_CARDS, 1)
    keep = drawable[a_idx] & drawable[b_idx]
    a_idx, b_idx = a_idx[keep], b_idx[keep]
    pairs = np.concatenate([np.broadcast_to(cards[:, None, :], (n, len(a_idx), h)),
                            np.broadcast_to(a_idx, (n, len(a_idx)))[..., None],
                            np.broadcast_to(b_idx, (n, len(a_idx)))[..., None]], axis=2)
    table = np.zeros((n, NUM_CARDS, NUM_CARDS, NUM_FEATURES), dtype=np.float32)
    scored = _best_five(ev, pairs)  # [n, pairs, 8]
    table[:, a_idx, b_idx] = scored
    table[:, b_idx, a_idx] = scored
    u = unseen.astype(np.float32)  # [n, 48]
    # The draw pile as the second draw after first card a: mean over unseen cards b != a.
    weights = u[:, None, :] * (1 - np.eye(NUM_CARDS, dtype=np.float32))[None]  # [n, a, b]
    deck_second = np.einsum("nab,nabf->naf", weights, table) / np.maximum(weights.sum(-1), 1)[..., None]  # [n, 48, 8]
    # Second draws after first card a: the draw pile, then every pile's top (options of an empty pile never win).
    idx = np.arange(n)
    options = np.stack([deck_second] + [table[idx, :, np.maximum(tops[:, j], 0)] for j in range(MAX_PLAYERS)], axis=2)  # [n, a, 7, 8]
    valid = np.concatenate([np.ones((n, 1), dtype=bool), tops >= 0], axis=1)  # [n, 7]
    scores = np.where(valid[:, None, :], _greedy_scalar(options, unused), -np.inf)  # [n, a, 7]
    out = np.zeros((n, SCORE_BASE - DRAW_PILE_ACTION, NUM_FEATURES), dtype=np.float32)
    # A first card from pile j: that pile's top is gone; its second card (if any) replaces it.
    for j in range(MAX_PLAYERS):
        has = tops[:, j] >= 0
        if not has.any():
            continue
        a = np.maximum(tops[:, j], 0)
        pile_options, pile_scores = options[idx, a].copy(), scores[idx, a].copy()  # [n, 7, 8], [n, 7]
        under = seconds[:, j]
        pile_options[:, 1 + j] = table[idx, a, np.maximum(under, 0)]
        pile_scores[:, 1 + j] = np.where(under >= 0, _greedy_scalar(pile_options[:, 1 + j][:, None], unused)[:, 0], -np.inf)
        out[has, 1 + j] = pile_options[idx, pile_scores.argmax(1)][has]
    # A first card from the draw pile: for every unseen card a, the best second draw, averaged over a.
    chosen = np.take_along_axis(options, scores.argmax(2)[:, :, None, None], axis=2)[:, :, 0]  # [n, 48, 8]
    out[:, 0] = np.einsum("na,naf->nf", u, chosen) / np.maximum(u.sum(1), 1)[:, None]
    return out


__all__ = ["FEATURE_SCALE", "NOT_APPLICABLE", "NUM_FEATURES", "action_features", "draw_lookahead_features", "one_card_draw_features"]
