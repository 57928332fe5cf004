"""``search``: information-set search that plays every candidate move out on many determinisations at once in the batched engine.

At each decision with two or more legal moves the agent

1. rebuilds, from its observation alone, a :class:`~grinch_env.grinch.game.Game` of
   what it knows (:func:`game_from_view`; it sits at the seat that makes seat 0
   the first Grinch, which the batched engine requires, and the game is
   rotation-invariant from its point of view);
2. deals the cards it cannot locate again ``playouts`` times
   (:func:`determinise`, the same exchangeable resampling as
   :meth:`Game.resample_from_infostate`);
3. loads those determinisations into a :class:`~grinch_env.grinch.vector.VectorGrinch`
   once per candidate move, so that every candidate meets the *same* hidden
   cards and the same future draws (common random numbers), takes each
   candidate in its copies and plays every copy to the end of the round with
   a batched rollout policy for all seats (:class:`RowPolicy` by default, or
   any ``policy(obs, mask) -> actions``, such as a network);
4. values each playout at the round's end: in the last round the share of
   the win; before it, the seat's total plus the expected points of its
   unused rows over the rounds left (expectimax's row values ``W(U, R)``),
   minus the mean of the same for the other seats (a margin, like the
   ``margin`` reward);
5. plays the move with the highest mean, ties broken by the agent's generator.

The budget is ``playouts`` determinisations per candidate move: a decision
with ``A`` legal moves plays ``A * playouts`` games to the end of the round in
one batch.  Cost grows with the budget and with the decisions left in the
round (up to ``3n + 6 + n`` at ``n`` players).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from grinch_env.agent_base import load_checkpoint_agent
from grinch_env.grinch import encoding as enc
from grinch_env.grinch.agents.base import BaseAgent, View, decode
from grinch_env.grinch.agents.expectimax import RowValues, row_values
from grinch_env.grinch.agents.handeval import HandEvaluator
from grinch_env.grinch.agents.simple import pick_best
from grinch_env.grinch.cards import NUM_CARDS
from grinch_env.grinch.game import (
    DRAW_DISCARD_BASE,
    DRAW_PILE_ACTION,
    MAX_PLAYERS,
    MAX_ROUNDS,
    PHASE_DISCARD,
    PHASE_DRAW,
    PHASE_SCORE,
    ROUNDS_BY_PLAYERS,
    SCORE_BASE,
    Game,
)
from grinch_env.grinch.scoring import NUM_ROWS

RolloutPolicy = Callable[[np.ndarray, np.ndarray], np.ndarray]
_ALL_ROWS = (1 << NUM_ROWS) - 1


# ------------------------------------------------------------ determinisation
def game_from_view(view: View, layout: tuple) -> tuple[Game, int]:
    """Return ``(game, seat)``: a game agreeing with everything ``view`` knows, and the seat it plays there.

    The seat is chosen so that seat 0 is the game's first Grinch.  Cards the
    view cannot locate are left out (other hands hold only their known cards,
    the draw pile is empty); :func:`determinise` deals them.
    """
    n = view.num_players
    num_rounds = view.round + 1 + view.rounds_left
    if num_rounds != ROUNDS_BY_PLAYERS[n]:
        raise ValueError(f"search plays the rules' {ROUNDS_BY_PLAYERS[n]} rounds at {n} players; the observation says {num_rounds}")
    if view.phase not in (PHASE_DISCARD, PHASE_DRAW, PHASE_SCORE):
        raise ValueError(f"search acts only during a round (discard, draw, score), not in phase {view.phase!r}")
    grinch = view.round % n
    me = (grinch - view.grinch) % n
    g = Game.__new__(Game)
    g.num_players = n
    g.num_rounds = num_rounds
    g.first_grinch = 0
    g.layout = layout
    g.rng = np.random.default_rng(0)
    g.round = view.round
    g.turn = view.turn
    g.phase = view.phase
    g.grinch = grinch
    g.order = [(grinch + i) % n for i in range(1, n + 1)]
    g.current = me
    g.pos = g.order.index(me)
    g.draws_made = (1 if view.first_draw_made else 0) if view.phase == PHASE_DRAW else (2 if grinch == me else 0)
    g.hands = [[] for _ in range(n)]
    g.piles = [[] for _ in range(n)]
    g.known = [[] for _ in range(n)]
    g.score_sheet = [[None] * NUM_ROWS for _ in range(n)]
    g.totals = [0] * n
    for j in range(n):
        p = (me + j) % n
        g.piles[p] = _pile_order(view.piles[j], view.tops[j], view.seconds[j])
        g.known[p] = list(view.known[j])
        g.hands[p] = list(view.hand) if j == 0 else list(view.known[j])
        g.score_sheet[p] = list(view.pads[j])
        g.totals[p] = view.totals[j]
    g.draw_pile = []
    g.piles_replaced()
    return g, me


def _pile_order(contents: list[int], top: int | None, second: int | None) -> list[int]:
    """Return a discard pile bottom to top from its contents and its top two cards (piles hold at most three)."""
    if not contents:
        return []
    order = [c for c in (second, top) if c is not None]
    rest = [c for c in contents if c not in order]
    if len(rest) > 1:
        raise ValueError(f"a discard pile of {len(contents)} cards has an unknown order; search handles piles of at most 3")
    return rest + order


def hidden_counts(view: View) -> list[int]:
    """Return per relative seat how many of its cards ``view`` cannot locate (0 for itself)."""
    return [0] + [view.hand_sizes[j] - len(view.known[j]) for j in range(1, view.num_players)]


def determinise(template: Game, me: int, view: View, rng: np.random.Generator, count: int) -> list[Game]:
    """Return ``count`` copies of ``template`` with the cards ``view`` cannot locate dealt at random to the other hands and the draw pile."""
    pool = np.array(view.unseen(), dtype=np.int64)
    hidden = hidden_counts(view)
    n = view.num_players
    if sum(hidden) + view.draw_pile_size != len(pool):
        raise ValueError(f"the observation does not add up: {len(pool)} unseen cards for {sum(hidden)} hidden hand cards "
                         f"and a draw pile of {view.draw_pile_size}")
    orders = pool[np.argsort(rng.random((count, len(pool))), axis=1)].tolist()
    games = []
    for cards in orders:
        g = template.clone(rng=template.rng)
        at = 0
        for j in range(1, n):
            p = (me + j) % n
            g.hands[p] = g.hands[p] + cards[at:at + hidden[j]]
            at += hidden[j]
        g.draw_pile = cards[at:]
        games.append(g)
    return games


# ------------------------------------------------------------ rollout policy
def row_offset_table(rows: RowValues) -> np.ndarray:
    """Return float64[128, MAX_ROUNDS + 1, 7]: ``W(U - k, R)`` for unused-row set ``U`` and row ``k`` in ``U`` (``-inf`` otherwise or when too few rows are left)."""
    table = np.full((1 << NUM_ROWS, MAX_ROUNDS + 1, NUM_ROWS), -np.inf)
    for unused in range(1 << NUM_ROWS):
        left = bin(unused).count("1")
        for r in range(min(MAX_ROUNDS, left - 1) + 1):
            for k in range(NUM_ROWS):
                if unused >> k & 1:
                    table[unused, r, k] = rows(unused & ~(1 << k), r)
    return table


def future_table(rows: RowValues) -> np.ndarray:
    """Return float64[128, MAX_ROUNDS + 1]: ``W(U, R)``, the expected points of unused rows ``U`` over ``R`` more rounds (``-inf`` if too few rows)."""
    table = np.full((1 << NUM_ROWS, MAX_ROUNDS + 1), -np.inf)
    for unused in range(1 << NUM_ROWS):
        for r in range(min(MAX_ROUNDS, bin(unused).count("1")) + 1):
            table[unused, r] = rows(unused, r)
    return table


_ROW_BITS = 1 << np.arange(NUM_ROWS)


def _hand_bits(obs: np.ndarray) -> np.ndarray:
    """Return uint64[B]: the actor's hand in each observation as a card bitmask."""
    packed = np.packbits(obs[:, :NUM_CARDS] > 0.5, axis=1, bitorder="little")  # [B, 6]
    return np.concatenate([packed, np.zeros((len(obs), 2), dtype=np.uint8)], axis=1).view(np.uint64)[:, 0]


class RowPolicy:
    """A batched rollout policy from observations: expectimax's row values without its sampling.

    * discard: keep the cards whose best unused row, net of the row's future
      value ``W(U - k, R)``, plus bonus, is highest;
    * score: the unused row with the highest value net of its future value;
    * draw (Grinch): a discard pile's top card if it raises that value of the
      hand by at least ``take_margin`` points over keeping the hand, else the draw pile.

    Ties go to the lowest action, so equal inputs give equal moves (common random numbers).
    """

    def __init__(self, layout: tuple, evaluator: HandEvaluator, rows: RowValues, take_margin: float = 3.0) -> None:
        from grinch_env.grinch.vector import VectorGrinch  # one engine's scoring tables, kept for its hand_values

        self._scorer = VectorGrinch(1, 2, bonus_layout=layout, backend="numpy")
        self.offsets = row_offset_table(rows)
        self.take_margin = float(take_margin)

    def _value(self, hands: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        values, bonus = self._scorer.hand_values(hands)
        return bonus + (values + offsets).max(axis=1)

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Return int64[B]: one legal action per observation."""
        b = len(obs)
        used = obs[:, enc.ROW_USED:enc.ROW_USED + NUM_ROWS] > 0.5
        unused = (~used * _ROW_BITS).sum(axis=1)
        rounds_left = obs[:, enc.ROUNDS_LEFT:enc.ROUNDS_LEFT + MAX_ROUNDS].argmax(axis=1)
        offsets = self.offsets[unused, rounds_left]  # [B, 7]
        hands = _hand_bits(obs)
        actions = np.zeros(b, dtype=np.int64)
        phase = obs[:, enc.PHASE:enc.PHASE + 3].argmax(axis=1)
        score = np.flatnonzero(phase == 2)
        if len(score):
            values, _ = self._scorer.hand_values(hands[score])
            actions[score] = SCORE_BASE + (values + offsets[score]).argmax(axis=1)
        discard = np.flatnonzero(phase == 0)
        if len(discard):
            g, c = np.nonzero(mask[discard, :NUM_CARDS])
            kept = hands[discard][g] & ~(np.uint64(1) << c.astype(np.uint64))
            v = np.full((len(discard), NUM_CARDS), -np.inf)
            v[g, c] = self._value(kept, offsets[discard][g])
            actions[discard] = v.argmax(axis=1)
        draw = np.flatnonzero(phase == 1)
        if len(draw):
            keep = self._value(hands[draw], offsets[draw]) + self.take_margin
            best = np.full(len(draw), DRAW_PILE_ACTION, dtype=np.int64)
            for j in range(MAX_PLAYERS):
                ok = np.flatnonzero(mask[draw, DRAW_DISCARD_BASE + j] > 0)
                if not len(ok):
                    continue
                base = enc.SEAT_BLOCK + j * enc.SEAT_STRIDE + enc.PILE_TOP
                top = obs[draw[ok], base:base + NUM_CARDS].argmax(axis=1)
                v = self._value(hands[draw[ok]] | (np.uint64(1) << top.astype(np.uint64)), offsets[draw[ok]])
                better = v > keep[ok]
                keep[ok[better]] = v[better]
                best[ok[better]] = DRAW_DISCARD_BASE + j
            actions[draw] = best
        return actions


# ------------------------------------------------------------------- search
def _network_policy(path: str) -> RolloutPolicy:
    """Return the greedy batched policy of a checkpoint (its most probable legal action), loaded through the checkpoint loaders."""
    return load_checkpoint_agent(path, game="grinch").act_batch


class SearchAgent(BaseAgent):
    """Plays each candidate move out ``playouts`` times on shared determinisations in the batched engine; picks the best mean outcome.

    Options: ``playouts`` (determinisations per candidate move, default 64);
    ``policy`` the rollout policy of every seat: ``"rows"`` (default,
    :class:`RowPolicy`), a checkpoint path (its network, greedy) or a callable
    ``policy(obs, mask) -> actions``; ``take_margin`` the default policy's
    threshold for taking a discard; ``horizon_cards`` as expectimax's.
    """

    name = "search"

    def __init__(self, seed: int | None = None, playouts: int = 64, policy: RolloutPolicy | None = None, take_margin: float = 3.0,
                 horizon_cards: int = 7, bonus_layout="standard") -> None:
        if isinstance(playouts, bool) or not isinstance(playouts, int) or not 1 <= playouts <= 65536:
            raise ValueError(f"search playouts must be an int in 1..65536, got {playouts!r}")
        super().__init__(seed, bonus_layout)
        if isinstance(policy, str) and policy != "rows":
            policy = _network_policy(policy)
        elif policy == "rows":
            policy = None
        if policy is not None and not callable(policy):
            raise ValueError(f"search policy must be 'rows', a checkpoint path or a callable policy(obs, mask) -> actions, got {policy!r}")
        self.playouts = playouts
        evaluator = HandEvaluator(self.layout)
        rows = row_values(self.layout, evaluator, horizon_cards)
        self.future = future_table(rows)
        self.policy: RolloutPolicy = policy if policy is not None else RowPolicy(self.layout, evaluator, rows, take_margin)
        self._engines: dict[tuple[int, int], object] = {}
        self.last_values: np.ndarray | None = None  # mean playout value of each legal move at the last searched decision

    def _engine(self, size: int, n: int):
        from grinch_env.grinch.vector import VectorGrinch

        key = (size, n)
        if key not in self._engines:
            self._engines[key] = VectorGrinch(size, n, seed=int(self.rng.integers(2**63)), bonus_layout=self.layout, copy=False)
        return self._engines[key]

    def _act(self, observation: np.ndarray, legal: np.ndarray) -> int:
        view = decode(observation, self.scales)
        values = self.evaluate(view, legal)
        self.last_values = values
        return int(legal[pick_best(values, self.rng)])

    def evaluate(self, view: View, legal: np.ndarray) -> np.ndarray:
        """Return float64[len(legal)]: each move's mean playout value over the same ``playouts`` determinisations."""
        template, me = game_from_view(view, self.layout)
        games = determinise(template, me, view, self.rng, self.playouts)
        return self.evaluate_games(games, me, legal)

    def evaluate_games(self, games: list[Game], me: int, legal: np.ndarray) -> np.ndarray:
        """Return each move's mean playout value for seat ``me`` over the given states (every move meets every state)."""
        s, a, n = len(games), len(legal), games[0].num_players
        venv = self._engine(s * a, n)
        venv.load_games(games)
        obs, mask, seat = venv.copy_slots(np.tile(np.arange(s), a - 1), np.arange(s, s * a))
        start = int(games[0].round)
        obs, mask, seat, _, dones = venv.step(np.repeat(np.asarray(legal, dtype=np.int64), s))
        while not dones.any() and venv.rounds()[0] == start:
            obs, mask, seat, _, dones = venv.step(self.policy(obs, mask))
        return self._leaf(venv, dones, me, n, start).reshape(a, s).mean(axis=1)

    def _leaf(self, venv, dones: np.ndarray, me: int, n: int, round_played: int) -> np.ndarray:
        """Return float64[B]: each playout's value for seat ``me`` at the end of the round."""
        if dones.all():  # the last round: the share of the win, more points breaking ties
            totals = venv.last_totals[:, :n].astype(np.float64)
            best = totals.max(axis=1, keepdims=True)
            winners = totals == best
            share = winners[:, me] / winners.sum(axis=1)
            margin = totals[:, me] - (totals.sum(axis=1) - totals[:, me]) / (n - 1)
            return share + 1e-4 * margin
        rounds_left = ROUNDS_BY_PLAYERS[n] - round_played - 1
        unused = (~venv.rows_used()[:, :n] * _ROW_BITS).sum(axis=2)  # [B, n]
        value = venv.totals()[:, :n] + self.future[unused, rounds_left]
        return value[:, me] - (value.sum(axis=1) - value[:, me]) / (n - 1)


__all__ = ["RowPolicy", "SearchAgent", "determinise", "future_table", "game_from_view", "hidden_counts", "row_offset_table"]
