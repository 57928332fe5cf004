"""The Grinch's afterstate values and the agent that plays by them (TD-Gammon's kind of learner, from the rules and the observation).

A decision's afterstate is the position just after it: for a discard, the kept hand and the public context.  Two
small MLPs, fitted by :mod:`training.learner.afterstate_run` to what followed in self-play, value afterstates in
points:

* ``V`` (:class:`Value`): the afterstate of a discard, written out by :func:`features` (the kept hand's suit x rank
  counts and bonus cards, its open rows' values and bonus, the unseen cards' counts, the used rows, the rounds left,
  the turn and the role; 85 columns, no expectation or hand-made estimate), worth the seat's own points in the round
  plus ``W`` after it;
* ``W`` (:class:`LaterValue`): the seat's used rows after the round's scoring and the rounds left after it, worth the
  own points of the later rounds (0 when none is left): the value of a row kept open.

and, in a run with ``deny: true``, a third:

* ``G`` (:class:`Denial`): what a Who's discard puts in the Grinch's reach, written out by :func:`deny_features` (the
  discarded card, the cards the Grinch is known to hold, the piles' tops, the unseen cards, the Grinch's used rows, the
  turn and the rounds left: public information only), worth the Grinch's points in the round; a Who's discard is charged
  ``weight x G`` (``weight`` 1/(n-1): its own points against the others' mean), since only the Grinch draws from the
  discard piles.

The agent (:class:`AfterstateAgent`) discards to the afterstate of highest ``V``; values a draw by enumerating its
chance node (every unseen card alike for the draw pile, the known top of a discard pile; the first of two draws by its
best second draw), a hand after the draws being worth its best discard's ``V``; and scores the row of highest points
plus ``W`` after it.  Its ``play`` option adds the rules at the round's end (:class:`RulesLeafValue`):

* ``value``: ``V`` and ``W`` alone;
* ``leaf``: a final 5-card hand is worth its best row's points plus ``W`` after that row plus its bonus (exactly, by
  the rules of :mod:`grinch_env.grinch.scoring`);
* ``lookahead`` (the default): also a Who's second discard by the mean over every pair of unseen cards it may draw next;
* ``lookahead2``: also a Who's first discard, by the mean over the next pair of the ``V`` of its best second discard.

With ``roles=all`` the Grinch's discards look ahead too, its next two draws taken as two blind ones (a Who's; the
Grinch may also take a known top, so this undervalues its hand, as `expectimax`'s futures do).

Load a run's agent with ``make_agent("checkpoints/<run>")`` or ``"checkpoints/<run>:play=lookahead2,generation=2"`` (and
``deny=W`` to reweigh ``G``, 0 to ignore it).
docs/results/afterstate_grinch.md has the measurements.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from grinch_env.agent_base import AgentOptionError
from grinch_env.grinch import encoding as enc
from grinch_env.grinch import tokens as rt
from grinch_env.grinch.agents.base import decode
from grinch_env.grinch.cards import NUM_CARDS
from grinch_env.grinch.game import DRAW_DISCARD_BASE, DRAW_PILE_ACTION, MAX_ROUNDS, NUM_ACTIONS, SCORE_BASE
from grinch_env.grinch.scoring import NUM_ROWS, resolve_layout
from training.learner.config import table_sizes
from training.learner.formats import AFTERSTATE_FORMAT

FEATURES_VERSION = 1  # bump when features() changes: a checkpoint fitted on other columns is refused
PLAYS = ("value", "leaf", "lookahead", "lookahead2")
ROLES = ("who", "all")  # whose discards look ahead: a Who's only (its next draws are blind), or the Grinch's too
SCALES = enc.Scales(resolve_layout("standard"))
_LAYOUT = rt._layout("standard")
SUIT_RANK = rt._CELL.reshape(NUM_CARDS, -1)  # card -> its suit x rank cell (24 cells)
BONUS = np.flatnonzero(_LAYOUT.points > 0)  # the 12 bonus cards of the standard layout
_MAX_SEATS = enc.GRINCH_SEAT - enc.AT_TABLE  # relative seats in the observation (6)
_TABLE = slice(enc.AT_TABLE, enc.GRINCH_SEAT)  # the seats at the table: n's bits
_CONTEXT = (slice(enc.ROW_USED, enc.ROW_USED + NUM_ROWS), slice(enc.ROUNDS_LEFT, enc.TURN + 3), slice(enc.GRINCH_SEAT, enc.GRINCH_SEAT + 1))


def features(obs: np.ndarray, mask: np.ndarray, table: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``(float32[D, 48, F] afterstate of each discard, bool[D, 48] legal discards)`` of ``D`` observations and masks.

    Per discard: the kept hand's suit x rank counts (/2) and bonus cards, its open rows' values (/30, a used row 0) and
    bonus (/20); per decision: the unseen cards' suit x rank counts (/2), the observer's used rows, the rounds left
    (one-hot), the turn (one-hot) and whether the observer is the Grinch; with ``table`` (a run over several table sizes)
    also the seats at the table (6 bits, the first ``n`` set: the observation's own).  An illegal discard's afterstate is
    the whole hand's.  Play reads the legal ones alone: :func:`legal_features`.
    """
    obs = np.asarray(obs, np.float32)
    x, _, _ = legal_features(obs, np.ones((len(obs), NUM_CARDS), bool), table)
    return x.reshape(len(obs), NUM_CARDS, -1), np.asarray(mask)[:, :NUM_CARDS].astype(bool)


def legal_features(obs: np.ndarray, mask: np.ndarray, table: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(float32[M, F] afterstates, int[M] decision, int[M] card)`` of the ``M`` legal discards of ``D`` observations and
    masks, in row-major order: the rows ``features(obs, mask)[0][mask]``, without computing the other ``48 D - M``."""
    obs = np.asarray(obs, np.float32)
    d, c = np.nonzero(np.asarray(mask)[:, :NUM_CARDS])
    hand = obs[:, :NUM_CARDS]
    after = hand[d]
    after[np.arange(len(d)), c] = 0
    rows, bonus = rt.hand_values(after)
    rows = rows * (obs[d, _CONTEXT[0]] < 0.5)
    seats = obs[:, enc.SEAT_BLOCK:enc.AT_TABLE].reshape(len(obs), -1, 4, NUM_CARDS)
    unseen = (hand + seats.max(2).sum(1) == 0).astype(np.float32)
    ctx = np.concatenate([unseen @ SUIT_RANK / 2] + [obs[:, s] for s in _CONTEXT] + ([obs[:, _TABLE]] if table else []), 1)
    x = np.concatenate([after @ SUIT_RANK / 2, after[:, BONUS], rows / 30, bonus[:, None] / 20, ctx[d]], 1)
    return x.astype(np.float32), d, c


NUM_FEATURES = features(np.zeros((1, enc.OBS_SIZE), np.float32), np.zeros((1, NUM_ACTIONS), bool))[0].shape[-1]  # 85
NUM_TABLE_FEATURES = NUM_FEATURES + _MAX_SEATS  # 91: with the seats at the table


def table_size(obs: np.ndarray) -> int:
    """The number of players at the table of one observation."""
    return int(round(float(np.asarray(obs)[_TABLE].sum())))


def later_inputs(used_after: np.ndarray, rounds_after: np.ndarray, players: np.ndarray | None = None) -> np.ndarray:
    """``W``'s input: the 7 used rows after the round's scoring and the rounds left after that round (one-hot of 6); with
    ``players`` (a run over several table sizes) also the seats at the table (6 bits, the first ``n`` set)."""
    cols = [np.asarray(used_after, np.float32), np.eye(MAX_ROUNDS, dtype=np.float32)[np.asarray(rounds_after)]]
    if players is not None:
        cols.append((np.arange(_MAX_SEATS)[None] < np.asarray(players)[:, None]).astype(np.float32))
    return np.concatenate(cols, 1)


NUM_LATER_INPUTS = NUM_ROWS + MAX_ROUNDS
DENY_FEATURES_VERSION = 1  # bump when deny_features() changes


def deny_features(obs: np.ndarray) -> np.ndarray:
    """``float32[D, 48, F]``: what each discard of ``D`` Who decisions puts in the Grinch's reach, ``G``'s input.

    Per discard: the discarded card's suit x rank (one-hot) and bonus card; per decision (public only): the Grinch's
    relative seat (one-hot), the cards it is known to hold (suit x rank counts /2, bonus cards), the top of the
    observer's pile (under the discard once it is made) and of every other pile (suit x rank counts), the unseen cards
    (counts /2), the Grinch's used rows, the turn and the rounds left (one-hot).
    """
    obs = np.asarray(obs, np.float32)
    d = len(obs)
    grinch = obs[:, enc.GRINCH_SEAT:enc.GRINCH_SEAT + _MAX_SEATS]
    g = grinch.argmax(1)
    seats = obs[:, enc.SEAT_BLOCK:enc.AT_TABLE].reshape(d, _MAX_SEATS, 4, NUM_CARDS)
    known = seats[np.arange(d), g, enc.KNOWN_IN_HAND // NUM_CARDS]
    tops = seats[:, :, enc.PILE_TOP // NUM_CARDS]
    unseen = (obs[:, :NUM_CARDS] + seats.max(2).sum(1) == 0).astype(np.float32)
    rows = obs[:, enc.ROW_USED:enc.ROW_USED + _MAX_SEATS * NUM_ROWS].reshape(d, _MAX_SEATS, NUM_ROWS)[np.arange(d), g]
    ctx = np.concatenate([grinch, known @ SUIT_RANK / 2, known[:, BONUS], tops[:, 0] @ SUIT_RANK, tops[:, 1:].sum(1) @ SUIT_RANK,
                          unseen @ SUIT_RANK / 2, rows, obs[:, enc.TURN:enc.TURN + 3], obs[:, enc.ROUNDS_LEFT:enc.ROUNDS_LEFT + MAX_ROUNDS]], 1)
    card = np.concatenate([SUIT_RANK, np.eye(NUM_CARDS, dtype=np.float32)[:, BONUS]], 1)  # [48, 36]
    return np.concatenate([np.broadcast_to(card[None], (d, NUM_CARDS, card.shape[1])),
                           np.broadcast_to(ctx[:, None], (d, NUM_CARDS, ctx.shape[1]))], -1).astype(np.float32)


NUM_DENY_FEATURES = deny_features(np.zeros((1, enc.OBS_SIZE), np.float32)).shape[-1]  # 166


class Denial:
    """``weight * G``: ``G`` (a :class:`Value` of :func:`deny_features`) the Grinch's points in the round after a Who's
    discard, charged to the Who's discards (``weight`` 1/(n-1): its own points against the others' mean; ``None``: that
    of each observation's table, for a run over several table sizes)."""

    def __init__(self, value: Value, weight: float | None) -> None:
        self.value, self.weight = value, None if weight is None else float(weight)

    def weight_at(self, obs: np.ndarray) -> float:
        """The charge's weight at the table of ``obs``."""
        return 1.0 / (table_size(obs) - 1) if self.weight is None else self.weight

    def __call__(self, obs: np.ndarray, legal: np.ndarray) -> np.ndarray:
        """The charge of each legal discard ``legal`` of one decision: 0 for the Grinch's own discards."""
        weight = self.weight_at(obs)
        if obs[enc.GRINCH_SEAT] > 0.5 or not weight:
            return np.zeros(len(legal))
        return weight * self.value(deny_features(obs[None])[0, legal])


def discard_worths(scorer: Value, deny: Denial | None, obs: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(legal discards, their worths)`` of one decision: ``scorer``'s, less ``deny``'s charge where there is one."""
    acts, worth = scorer.discards(obs, mask)
    return acts, worth if deny is None else worth - deny(obs, acts)


def softmax_pick(worth: np.ndarray, temperature: float, rng: np.random.Generator) -> tuple[int, float]:
    """An index sampled from ``softmax(worth / temperature)`` and that distribution's entropy (nats)."""
    z = (worth - worth.max()) / temperature
    p = np.exp(z)
    p /= p.sum()
    entropy = float(-(p[p > 0] * np.log(p[p > 0])).sum())
    return int(rng.choice(len(p), p=p)), entropy


def mlp(inputs: int, width: int) -> torch.nn.Sequential:
    """Three ReLU layers of ``width`` and one output: both values' shape."""
    return torch.nn.Sequential(torch.nn.Linear(inputs, width), torch.nn.ReLU(), torch.nn.Linear(width, width), torch.nn.ReLU(),
                               torch.nn.Linear(width, width), torch.nn.ReLU(), torch.nn.Linear(width, 1))


def _rounds_after(obs: np.ndarray) -> int:
    """The rounds left after the current one (0 once the game's last round is under way)."""
    bits = obs[enc.ROUNDS_LEFT:enc.ROUNDS_LEFT + MAX_ROUNDS]
    return int(np.argmax(bits)) if bits.any() else 0


class Value:
    """An afterstate value in points: ``mu + sd * net(x)``; ``table``: its afterstates carry the seats at the table
    (:func:`features`, a run over several table sizes)."""

    def __init__(self, net: torch.nn.Module, mu: float, sd: float, table: bool = False) -> None:
        self.net, self.mu, self.sd, self.table = net.eval(), float(mu), float(sd), bool(table)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        with torch.inference_mode():
            return self.mu + self.sd * self.net(torch.from_numpy(np.ascontiguousarray(x, np.float32))).squeeze(-1).numpy()

    def state(self) -> dict[str, Any]:
        """What a checkpoint holds of it: weights (tensors), input count, width, mean and scale."""
        first = self.net[0]
        out = {"model": {k: v.clone() for k, v in self.net.state_dict().items()}, "inputs": first.in_features, "width": first.out_features,
               "mu": self.mu, "sd": self.sd}
        return {**out, "table": True} if self.table else out

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> Value:
        net = mlp(int(state["inputs"]), int(state["width"]))
        net.load_state_dict(state["model"])
        return cls(net, state["mu"], state["sd"], state.get("table", False))

    def discards(self, obs: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(legal discards, their values)`` of one decision."""
        x, _, legal = legal_features(obs[None], mask[None], self.table)
        return legal, self(x)

    def hands(self, obs: np.ndarray, hands: np.ndarray) -> np.ndarray:
        """The worth of each hand ``hands[k]`` (48 card bits) in the context of ``obs``: the value of its best discard."""
        o = np.repeat(np.asarray(obs, np.float32)[None], len(hands), 0)
        o[:, :NUM_CARDS] = hands
        out = np.empty(len(hands))
        for b in range(0, len(hands), 512):
            chunk = hands[b:b + 512]
            x, d, c = legal_features(o[b:b + 512], chunk.astype(bool), self.table)
            v = np.full((len(chunk), NUM_CARDS), -np.inf)
            v[d, c] = self(x)
            out[b:b + 512] = v.max(1)
        return out

    def draws(self, obs: np.ndarray, mask: np.ndarray, pile_sample: int | None = None,
              rng: np.random.Generator | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(legal draws, their worths)`` of one draw decision: each draw's chance node enumerated (module docstring);
        with ``pile_sample`` the draw pile's cards are ``pile_sample`` unseen cards drawn by ``rng`` (a cheaper estimate)."""
        view = decode(obs, SCALES)
        n, unseen = view.num_players, view.unseen()
        if pile_sample is not None and len(unseen) > pile_sample:
            unseen = sorted(rng.choice(unseen, pile_sample, replace=False).tolist())
        sizes = [len(p) for p in view.piles]
        legal = np.flatnonzero(mask[DRAW_PILE_ACTION:SCORE_BASE]) + DRAW_PILE_ACTION
        index: dict[tuple[int, ...], int] = {}

        def hand_id(cards: list[int]) -> int:
            return index.setdefault(tuple(sorted(cards)), len(index))

        def options(first: int, first_card: int) -> list[list[int]]:
            """The cards each second draw may bring after the draw ``first`` brought ``first_card``."""
            out = []
            if view.draw_pile_size - (first == DRAW_PILE_ACTION) > 0:
                out.append([c for c in unseen if c != first_card] if first == DRAW_PILE_ACTION else list(unseen))
            for j in range(n):
                same = first == DRAW_DISCARD_BASE + j
                card = view.seconds[j] if same else view.tops[j]
                if sizes[j] - same > 0 and card is not None:
                    out.append([card])
            return out

        plans = []  # per legal draw: [(probability, [[hand ids of one second option], ...]), ...]
        for a in legal:
            cards = list(unseen) if a == DRAW_PILE_ACTION else [view.tops[a - DRAW_DISCARD_BASE]]
            if view.first_draw_made:
                plans.append([(1.0, [[hand_id(view.hand + [c]) for c in cards]])])
            else:
                plans.append([(1 / len(cards), [[hand_id(view.hand + [x, c]) for c in opt] for opt in options(int(a), x)]) for x in cards])
        hands = np.zeros((len(index), NUM_CARDS), np.float32)
        for cards, k in index.items():
            hands[k, list(cards)] = 1
        worth = self.hands(obs, hands)
        values = [sum(p * max(worth[ids].mean() for ids in opts) for p, opts in plan) for plan in plans]
        return legal, np.array(values)


class LaterValue:
    """``W(used rows after the round, rounds left after it)`` in points, 0 when no round is left; of a run over several
    table sizes (its value's ``table``), also of the table's size ``players``."""

    def __init__(self, value: Value) -> None:
        self.value = value

    def __call__(self, used_after: np.ndarray, rounds_after: np.ndarray, players: np.ndarray | None = None) -> np.ndarray:
        rounds_after = np.asarray(rounds_after)
        if self.value.table and players is None:
            raise ValueError("this W was fitted over several table sizes: give the table's size (players)")
        return np.where(rounds_after > 0, self.value(later_inputs(used_after, rounds_after, players if self.value.table else None)), 0.0)

    def at(self, obs: np.ndarray, used_after: np.ndarray) -> np.ndarray:
        """``W`` of the rows ``used_after [K, 7]`` after the current round of the observation ``obs``."""
        k = len(used_after)
        return self(used_after, np.full(k, _rounds_after(obs)), np.full(k, table_size(obs)))

    def rows(self, obs: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(legal score actions, each row's points now plus W after it)`` (the hand's bonus is the same for every row)."""
        legal = np.flatnonzero(mask[SCORE_BASE:SCORE_BASE + NUM_ROWS])
        points, _ = rt.hand_values(np.asarray(obs[None, :NUM_CARDS], np.float32))
        used = np.repeat(np.asarray(obs[None, enc.ROW_USED:enc.ROW_USED + NUM_ROWS], np.float32), len(legal), 0)
        used[np.arange(len(legal)), legal] = 1.0
        return legal + SCORE_BASE, points[0, legal] + self.at(obs, used)


class RulesLeafValue(Value):
    """``V`` with the rules at the round's end (``play`` ``leaf``, ``lookahead``, ``lookahead2``: module docstring)."""

    def __init__(self, value: Value, later: LaterValue, lookahead: bool, first: bool = False, roles: str = "who") -> None:
        super().__init__(value.net, value.mu, value.sd, value.table)
        self.later, self.lookahead, self.first, self.roles = later, lookahead, first, roles

    def _pairs(self, obs: np.ndarray, kept: np.ndarray) -> np.ndarray:
        """``[P, 48]``: the hand ``kept`` with every pair of unseen cards added."""
        unseen = np.array(decode(obs, SCALES).unseen())
        i, j = np.triu_indices(len(unseen), 1)
        hands = np.repeat(kept[None], len(i), 0)
        hands[np.arange(len(i)), unseen[i]] = 1
        hands[np.arange(len(i)), unseen[j]] = 1
        return hands

    def final(self, obs: np.ndarray, kept: np.ndarray) -> np.ndarray:
        """The worth of 5-card hands ``kept [K, 48]`` at the round's end: the best open row's points plus ``W`` after that
        row, plus the hand's bonus."""
        points, bonus = rt.hand_values(kept)
        used = obs[enc.ROW_USED:enc.ROW_USED + NUM_ROWS] > 0.5
        open_rows = np.flatnonzero(~used)
        after = np.repeat(used[None].astype(np.float32), len(open_rows), 0)
        after[np.arange(len(open_rows)), open_rows] = 1.0
        w = np.full(NUM_ROWS, -np.inf)
        w[open_rows] = self.later.at(obs, after)
        return (points + w[None]).max(1) + bonus

    def _best_final(self, obs: np.ndarray, hands: np.ndarray) -> np.ndarray:
        """The worth of 6-card hands ``hands [K, 48]``: their best discard to a final hand."""
        out = np.full(len(hands), -np.inf)
        k_idx, cards = np.nonzero(hands)
        kept = hands[k_idx].copy()
        kept[np.arange(len(k_idx)), cards] = 0
        np.maximum.at(out, k_idx, self.final(obs, kept))
        return out

    def discards(self, obs: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        hand = obs[:NUM_CARDS] > 0.5
        legal = np.flatnonzero(mask[:NUM_CARDS])
        kept = np.repeat(hand[None].astype(np.float32), len(legal), 0)
        kept[np.arange(len(legal)), legal] = 0
        size = int(hand.sum()) - 1
        if size == 5:
            return legal, self.final(obs, kept)
        who = obs[enc.GRINCH_SEAT] < 0.5 or self.roles == "all"  # the Grinch's next draws taken as two blind ones, as a Who's
        if size == 4 and self.lookahead and who:
            return legal, np.array([self._best_final(obs, self._pairs(obs, k)).mean() for k in kept])
        if size == 3 and self.first and who:  # the next turn's afterstates, valued by V in that turn's context
            later = np.array(obs, np.float32)
            later[enc.TURN:enc.TURN + 3] = np.roll(later[enc.TURN:enc.TURN + 3], 1)
            return legal, np.array([Value.hands(self, later, self._pairs(obs, k)).mean() for k in kept])
        return super().discards(obs, mask)

    def hands(self, obs: np.ndarray, hands: np.ndarray) -> np.ndarray:
        if len(hands) and int(hands[0].sum()) == 6:
            return self._best_final(obs, np.asarray(hands, np.float32))
        return super().hands(obs, hands)


def scorer(value: Value, later: LaterValue, play: str, roles: str = "who") -> Value:
    """The discard-and-draw scorer of ``play`` (:data:`PLAYS`); ``roles`` whose discards look ahead (:data:`ROLES`)."""
    if play not in PLAYS:
        raise AgentOptionError(f"play must be one of {', '.join(PLAYS)}, got {play!r}")
    if roles not in ROLES:
        raise AgentOptionError(f"roles must be one of {', '.join(ROLES)}, got {roles!r}")
    return value if play == "value" else RulesLeafValue(value, later, play != "leaf", play == "lookahead2", roles)


class AfterstateAgent:
    """Discards and draws to the highest worth under ``scorer``, rows by points plus ``W``; deterministic (ties: the lowest action)."""

    game = "grinch"

    def __init__(self, value: Value, later: LaterValue, play: str = "lookahead", name: str = "afterstate",
                 num_players: list[int] | None = None, roles: str = "who", deny: Denial | None = None) -> None:
        self.scorer, self.later, self.play, self.roles, self.name = scorer(value, later, play, roles), later, play, roles, name
        self.num_players, self.deny = num_players, deny

    def reset(self, seed: int | None = None) -> None:
        """Nothing to reset: the agent is deterministic."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        mask = np.asarray(action_mask).astype(bool)
        if mask.shape != (NUM_ACTIONS,):
            raise ValueError(f"action_mask must have shape ({NUM_ACTIONS},), got {mask.shape}")
        legal = np.flatnonzero(mask)
        if len(legal) == 0:
            raise ValueError("action_mask has no legal action: an agent is only asked to act when it is its turn")
        if len(legal) == 1:
            return int(legal[0])
        obs = np.asarray(observation, np.float32)
        if mask[:DRAW_PILE_ACTION].any():
            acts, worth = discard_worths(self.scorer, self.deny, obs, mask)
        elif mask[DRAW_PILE_ACTION:SCORE_BASE].any():
            acts, worth = self.scorer.draws(obs, mask)
        else:
            acts, worth = self.later.rows(obs, mask)
        return int(acts[np.argmax(worth)])

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return np.array([self.act(o, m) for o, m in zip(observations, masks)], dtype=np.int64)

    def __repr__(self) -> str:
        deny = "" if self.deny is None else f", deny={'1/(n-1)' if self.deny.weight is None else format(self.deny.weight, 'g')}"
        return f"AfterstateAgent(name={self.name!r}, play={self.play!r}, roles={self.roles!r}{deny})"


def agent_from(ckpt: dict[str, Any], file: Path, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
    """The harness agent of a loaded afterstate checkpoint; ``options``: ``play`` (:data:`PLAYS`), ``roles`` (:data:`ROLES`),
    ``generation`` (a fitted generation, default the last) and ``deny`` (``G``'s weight, default the run's: :func:`denial_of`).
    A Gnoming run's (``game: gnoming``) loads with :func:`training.learner.gnoming_afterstate.agent_from`."""
    if ckpt.get("format") != AFTERSTATE_FORMAT:
        raise ValueError(f"{str(file)!r} is not an afterstate checkpoint (format {ckpt.get('format')!r}, expected {AFTERSTATE_FORMAT!r})")
    if ckpt["config"].get("game", "grinch") != "grinch":
        raise ValueError(f"{str(file)!r} holds a {ckpt['config']['game']} run's values: load it with make_agent, or "
                         "training.learner.gnoming_afterstate.agent_from")
    options = dict(options or {})
    unknown = sorted(set(options) - {"play", "roles", "generation", "deny"})
    if unknown:
        raise AgentOptionError(f"afterstate checkpoint {str(file)!r}: unknown option(s) {unknown}; it takes play ({', '.join(PLAYS)}), "
                               f"roles ({', '.join(ROLES)}: whose discards look ahead), generation (an int: which fitted generation "
                               "plays, default the last) and deny (a number >= 0: the weight of the Grinch's points on a Who's discards, "
                               "default the run's; runs that fit G only)")
    if ckpt.get("features_version") != FEATURES_VERSION:
        raise ValueError(f"{str(file)!r} was fitted on afterstate features version {ckpt.get('features_version')}; this code writes version {FEATURES_VERSION}")
    fitted = ckpt["values"]
    if not fitted:
        raise ValueError(f"{str(file)!r} holds no fitted generation yet (its run has played generation 0 only): train it on")
    gen = options.get("generation", len(fitted) - 1)
    if not isinstance(gen, int) or not 0 <= gen < len(fitted):
        raise AgentOptionError(f"afterstate checkpoint {str(file)!r}: generation must be an int in 0..{len(fitted) - 1}, got {gen!r}")
    play, roles = options.get("play", "lookahead"), options.get("roles", "who")
    cfg = ckpt["config"]
    sizes = table_sizes(cfg["num_players"])
    value, later = Value.from_state(fitted[gen]["value"]), LaterValue(Value.from_state(fitted[gen]["later"]))
    deny = denial_of(fitted[gen], options.get("deny"), f"afterstate checkpoint {str(file)!r}")
    label = (f"{cfg['run_name']}/g{gen}" + ("" if play == "lookahead" else f":play={play}") + ("" if roles == "who" else f":roles={roles}")
             + ("" if "deny" not in options else f":deny={options['deny']}"))
    return AfterstateAgent(value, later, play, label, sizes, roles, deny)


def denial_of(fitted: dict[str, Any], weight: Any = None, where: str = "afterstate values") -> Denial | None:
    """The :class:`Denial` of one fitted generation (None where it fitted no ``G``), its weight ``weight`` or the run's."""
    if weight is not None and (isinstance(weight, bool) or not isinstance(weight, (int, float)) or not 0 <= weight <= 10):
        raise AgentOptionError(f"{where}: deny must be a number in 0..10 (the weight of the Grinch's points on a Who's discards), got {weight!r}")
    if "deny" not in fitted:
        if weight:
            raise AgentOptionError(f"{where}: deny={weight} needs a run that fits the Grinch's points (deny: true in its config); this one did not")
        return None
    if fitted["deny"].get("features_version") != DENY_FEATURES_VERSION:
        raise ValueError(f"{where}: G was fitted on deny features version {fitted['deny'].get('features_version')}; this code writes {DENY_FEATURES_VERSION}")
    return Denial(Value.from_state(fitted["deny"]), fitted["deny"]["weight"] if weight is None else weight)


__all__ = ["DENY_FEATURES_VERSION", "FEATURES_VERSION", "NUM_DENY_FEATURES", "NUM_FEATURES", "NUM_TABLE_FEATURES", "PLAYS", "ROLES", "AfterstateAgent", "Denial",
           "LaterValue", "RulesLeafValue", "Value", "agent_from", "denial_of", "deny_features", "discard_worths", "features", "later_inputs", "legal_features", "mlp", "scorer", "softmax_pick", "table_size"]
