"""Agents that play *Gnoming A Round* from observations: ``random``, ``greedy`` and ``search``.

An agent has ``name``, ``reset(seed=None)``, ``act(observation, action_mask) -> int``
and ``act_batch(observations, masks) -> int64[B]``, like the Grinch agents.  It
sees only the ``float32[1046]`` observation of RULES_GNOMING.md §6.3 and the
``int8[15]`` mask; :func:`decode` reads the observation back into a
:class:`View` (what every seat knows: Gnoming has no private information).

=================  ==============================================================
spec               agent
=================  ==============================================================
``random``         uniform over the legal actions
``greedy``         one-step expected layout score (lower is better), face-down
                   cards valued at the mean of the never-seen cards
``search``         greedy rollouts on sampled determinisations
                   (``decode_game``), common random numbers across
                   candidate actions; options ``samples`` (8), ``horizon``
                   (``"turn"`` or ``"round"``), e.g. ``search:samples=16``
=================  ==============================================================
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from grinch_env.agent_base import SeededAgent, check_mask
from grinch_env.gnoming.cards import DECK_SIZE, MAX_COPIES, MULLIGAN, NUM_KINDS, POINTS
from grinch_env.gnoming.encoding import (
    CHANNELS,
    DISCARDER,
    DRAW_SIZE,
    EMPTY,
    FILLED,
    FINAL_TURN,
    FIRST_PLAYER,
    HELD,
    HELD_SOURCE,
    NEVER_SEEN,
    NUM_REMOVABLE,
    OBS_SIZE,
    PHASE,
    PILE_COUNTS,
    PILE_TOPS,
    PRESENT,
    REMOVED,
    RESHUFFLED_COUNTS,
    RESHUFFLED_FLAG,
    ROUND,
    ROUND_SCALE,
    ROUND_SCORES,
    SEAT_BLOCK,
    TOP_DEPTH,
    TOTAL_SCALE,
    TOTALS,
    WENT_OUT,
    decode_game,
)
from grinch_env.gnoming.game import (
    DISCARD_A,
    DISCARD_B,
    DRAW,
    HELD_SOURCES,
    MAX_PLAYERS,
    MIN_PLAYERS,
    NUM_ACTIONS,
    NUM_ROUNDS,
    NUM_SLOTS,
    PASS,
    TAKE_A,
    Game,
)

# The observation index table of RULES_GNOMING.md §6.3, as the encoding module lays it out.
FACE_DOWN = -1  # a face-down slot in a View's layout
COUNT_SCALE = MAX_COPIES
PHASES = ("reveal", "draw", "play", "hazard")  # "play" covers the play, bounce and discard phases

SLOTS = NUM_SLOTS
LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8))
LINES_THROUGH = tuple(tuple(i for i, line in enumerate(LINES) if p in line) for p in range(SLOTS))
POSITIVE_KINDS = range(6)
GOING_OUT_POINTS = 5


@dataclass
class View:
    """What one seat knows, decoded from its observation; seats are relative (0 = me, r = r seats to my left)."""

    num_players: int
    layouts: list[list[int]]  # kinds, FACE_DOWN for a face-down slot
    pile_tops: list[list[int]]  # for pile A and B: up to 3 kinds, top first
    pile_counts: list[list[int]]  # [2][12]
    never_seen: list[int]  # [12]: in face-down slots and an un-reshuffled draw pile
    reshuffled_counts: list[int]  # [12]: a reshuffled draw pile's multiset
    draw_size: int
    reshuffled: bool
    hazards_removed: int
    held: int | None
    held_source: str | None
    filled: list[bool]
    phase: str  # "reveal", "draw", "play" (play, bounce or discard), "hazard" or "done"
    round: int
    first_player: int
    went_out: int | None
    final_turn: list[bool]
    hazard_discarder: int | None
    totals: list[int]
    round_scores: list[list[int]] = field(default_factory=list)  # per round played, per relative seat

    def face_down(self, seat: int = 0) -> list[int]:
        """Return the face-down slots of relative seat ``seat``."""
        return [p for p in range(SLOTS) if self.layouts[seat][p] == FACE_DOWN]


def _one_hot(block: np.ndarray) -> int | None:
    """Return the channel set in ``block`` (None when nothing is set)."""
    hits = np.flatnonzero(block > 0.5)
    return int(hits[0]) if len(hits) else None


def decode(observation: np.ndarray) -> View:
    """Return the :class:`View` that ``observation`` encodes (the inverse of ``encoding.encode``)."""
    obs = np.asarray(observation, dtype=np.float32)
    if obs.shape != (OBS_SIZE,):
        raise ValueError(f"observation must have shape ({OBS_SIZE},), got {obs.shape}")
    n = int(round(float(obs[PRESENT:PRESENT + MAX_PLAYERS].sum())))
    if not MIN_PLAYERS <= n <= MAX_PLAYERS:
        raise ValueError(f"observation encodes {n} seats at the table; expected {MIN_PLAYERS}..{MAX_PLAYERS}")
    cells = obs[:MAX_PLAYERS * SEAT_BLOCK].reshape(MAX_PLAYERS, SLOTS, CHANNELS)[:n]
    kinds = np.argmax(cells, axis=2)
    layouts = [[FACE_DOWN if k == EMPTY else int(k) for k in row] for row in kinds]
    tops = obs[PILE_TOPS:PILE_TOPS + 2 * TOP_DEPTH * CHANNELS].reshape(2, TOP_DEPTH, CHANNELS).argmax(axis=2)
    pile_tops = [[int(k) for k in pile if k != EMPTY] for pile in tops]

    def counts(start: int) -> list[int]:
        return [int(round(float(x) * COUNT_SCALE)) for x in obs[start:start + NUM_KINDS]]

    phase_bit = _one_hot(obs[PHASE:PHASE + len(PHASES)])
    source = _one_hot(obs[HELD_SOURCE:HELD_SOURCE + len(HELD_SOURCES)])
    held = _one_hot(obs[HELD:HELD + CHANNELS])
    round_index = _one_hot(obs[ROUND:ROUND + NUM_ROUNDS]) or 0
    played = round_index + (1 if phase_bit is None else 0)
    rounds = [[int(round(float(x) * ROUND_SCALE)) for x in obs[ROUND_SCORES + MAX_PLAYERS * r:ROUND_SCORES + MAX_PLAYERS * r + n]]
              for r in range(played)]
    return View(
        num_players=n,
        layouts=layouts,
        pile_tops=pile_tops,
        pile_counts=[counts(PILE_COUNTS), counts(PILE_COUNTS + NUM_KINDS)],
        never_seen=counts(NEVER_SEEN),
        reshuffled_counts=counts(RESHUFFLED_COUNTS),
        draw_size=int(round(float(obs[DRAW_SIZE]) * DECK_SIZE)),
        reshuffled=bool(obs[RESHUFFLED_FLAG] > 0.5),
        hazards_removed=int(round(float(obs[REMOVED]) * NUM_REMOVABLE)),
        held=None if held is None or held == EMPTY else held,
        held_source=None if source is None else HELD_SOURCES[source],
        filled=[bool(x > 0.5) for x in obs[FILLED:FILLED + SLOTS]],
        phase="done" if phase_bit is None else PHASES[phase_bit],
        round=round_index,
        first_player=_one_hot(obs[FIRST_PLAYER:FIRST_PLAYER + MAX_PLAYERS]) or 0,
        went_out=_one_hot(obs[WENT_OUT:WENT_OUT + MAX_PLAYERS]),
        final_turn=[bool(x > 0.5) for x in obs[FINAL_TURN:FINAL_TURN + n]],
        hazard_discarder=_one_hot(obs[DISCARDER:DISCARDER + MAX_PLAYERS]),
        totals=[int(round(float(x) * TOTAL_SCALE)) for x in obs[TOTALS:TOTALS + n]],
        round_scores=rounds,
    )


# --------------------------------------------------------------- layout evaluation
def _line_value(a: int, b: int, c: int) -> int:
    """Return v when the line (a, b, c) is matched on value v (§4.3), else 0; a face-down card never matches."""
    v = 0
    for k in (a, b, c):
        if k == MULLIGAN:
            continue
        if not 0 <= k <= 5:  # face down, negative or Hazard
            return 0
        if v == 0:
            v = POINTS[k]
        elif POINTS[k] != v:
            return 0
    return v


def expected_score(layout: list[int], unknown: float) -> float:
    """Return the §4.3 score of ``layout`` with each face-down card worth ``unknown`` (its lines unmatched).

    Only lines of three face-up cards can be matched; on a full face-up layout
    this is exactly ``scoring.score_layout`` with ``mulligan_lines="independent"``.
    """
    known, face_down = _known_score(tuple(layout))
    return known + face_down * unknown


@lru_cache(maxsize=1 << 16)
def _known_score(layout: tuple[int, ...]) -> tuple[int, int]:
    """Return ``(score of the face-up cards, number of face-down cards)``; face-down cards never lie in a matched line."""
    total = 0
    covered = [False] * SLOTS
    for line in LINES:
        v = _line_value(layout[line[0]], layout[line[1]], layout[line[2]])
        if v:
            total -= v
            for p in line:
                covered[p] = True
    face_down = 0
    for p in range(SLOTS):
        if not covered[p]:
            k = layout[p]
            if k == FACE_DOWN:
                face_down += 1
            else:
                total += POINTS[k]
    return total, face_down


def mean_points(counts: list[int] | np.ndarray) -> float:
    """Return the mean §1 points of a multiset given by kind counts (0 for an empty one)."""
    counts = np.asarray(counts, dtype=np.float64)
    size = counts.sum()
    return float(counts @ np.asarray(POINTS, dtype=np.float64) / size) if size else 0.0


def can_place(layout: list[int], slot: int, kind: int) -> bool:
    """Return whether ``kind`` may go into ``slot`` under the Mulligan limit (§3.3)."""
    return kind != MULLIGAN or all(layout[q] != MULLIGAN for q in range(SLOTS) if q != slot)


def _placed(layout: list[int], slot: int, kind: int) -> list[int]:
    out = list(layout)
    out[slot] = kind
    return out


# --------------------------------------------------------------- the agents
class BaseAgent(SeededAgent):
    """Common plumbing (:class:`grinch_env.agent_base.SeededAgent`); ``_act`` gets the legal actions as a list of ints."""

    num_actions = NUM_ACTIONS
    legal_as_list = True


def legal_actions(action_mask: np.ndarray) -> np.ndarray:
    """Return the legal actions of ``action_mask`` (sorted), raising ``ValueError`` when there is none."""
    return check_mask(action_mask, NUM_ACTIONS)


class RandomAgent(BaseAgent):
    """Plays a uniformly random legal action."""

    name = "random"

    def _act(self, observation: np.ndarray, legal: list[int]) -> int:
        return legal[int(self.rng.integers(len(legal)))]


def _argmin(values: list[float], actions: list[int]) -> int:
    """Return the action of the lowest value; ties (within 1e-9) go to the lowest action id."""
    best = min(values)
    return min(a for a, v in zip(actions, values) if v <= best + 1e-9)


class GreedyPolicy:
    """The greedy decision rule on a :class:`View` (deterministic; shared by ``greedy`` and the search's rollouts).

    Every option is valued by the expected §4.3 score of the own layout it
    leaves, lower is better, with face-down cards at ``u`` = the mean points
    of the never-seen cards (a line with a face-down card counts as
    unmatched).  Leaving no face-down card while nobody has gone out adds the
    §4.4 adjustment: −5 if that expected score is at most every other
    layout's (valued the same way), else +5.

    * draw: each legal pile top is worth its best legal placement; ``DRAW`` is
      worth the expectation, over the draw pile's known distribution (the
      never-seen cards, or the reshuffled multiset), of the better of the best
      placement and discarding.  Take a top only if it beats the draw.
    * play: place where the score is lowest, or discard when nothing beats
      the current layout (a card taken from a pile must be placed).
    * bounce: bounce into the slot that lowers the score most, else stop.
    * discard pile: cover the pile whose top scores fewer points (the card
      the next players would want most); ties go to pile A.
    * reveal and Hazard response: always flip, the face-down slot whose lines
      show the most face-up positive cards (lowest slot on ties); flipping
      leaves the expected score unchanged and brings the layout closer to
      being known and going out.
    Ties between options go to the lowest action id.
    """

    def choose(self, view: View, legal: list[int]) -> int:
        """Return the greedy action among ``legal`` for ``view``."""
        if len(legal) == 1:
            return legal[0]
        if view.phase in ("reveal", "hazard"):
            return self.flip(view, legal)
        if view.phase == "draw":
            return self.draw(view, legal)
        slots = [a for a in legal if a < SLOTS]
        if not slots:
            return self.discard_pile(view, legal)
        return self.place(view, legal, view.held)

    # ---- pieces
    def unknown_value(self, view: View) -> float:
        """Return the expected points of a face-down card: the mean of the never-seen cards."""
        return mean_points(view.never_seen)

    def value(self, view: View, layout: list[int], unknown: float) -> float:
        """Return the expected score of my ``layout``, with the going-out adjustment when it has no face-down card."""
        score = expected_score(layout, unknown)
        if view.went_out is None and FACE_DOWN not in layout:
            others = min(expected_score(view.layouts[r], unknown) for r in range(1, view.num_players))
            score += -GOING_OUT_POINTS if score <= others else GOING_OUT_POINTS
        return score

    def best_placement(self, view: View, kind: int, unknown: float, slots=range(SLOTS)) -> float:
        """Return the lowest value of placing ``kind`` into one of ``slots`` (inf when none is allowed)."""
        mine = view.layouts[0]
        return min((self.value(view, _placed(mine, p, kind), unknown) for p in slots if can_place(mine, p, kind)), default=np.inf)

    def draw(self, view: View, legal: list[int]) -> int:
        unknown = self.unknown_value(view)
        keep = self.value(view, view.layouts[0], unknown)
        pool = view.reshuffled_counts if view.reshuffled else view.never_seen
        size = sum(pool)
        values, actions = [], []
        for a in legal:
            if a == DRAW:
                v = sum(c * min(keep, self.best_placement(view, k, unknown)) for k, c in enumerate(pool) if c) / size if size else keep
            else:
                v = self.best_placement(view, view.pile_tops[a - TAKE_A][0], unknown)
            values.append(v)
            actions.append(a)
        # Take a top only when it strictly beats the blind draw: DRAW wins ties whatever its id.
        if DRAW in actions:
            draw_value = values[actions.index(DRAW)]
            takes = [(v, a) for v, a in zip(values, actions) if a != DRAW and v < draw_value - 1e-9]
            return min(takes)[1] if takes else DRAW
        return _argmin(values, actions)

    def place(self, view: View, legal: list[int], kind: int) -> int:
        unknown = self.unknown_value(view)
        mine = view.layouts[0]
        values, actions = [], []
        for a in legal:
            if a < SLOTS:
                values.append(self.value(view, _placed(mine, a, kind), unknown))
                actions.append(a)
        stop = [a for a in legal if a in (DISCARD_A, DISCARD_B)]
        if stop:
            keep = self.value(view, mine, unknown)
            if keep <= min(values) + 1e-9:
                return self.discard_pile(view, legal)
        return _argmin(values, actions)

    def discard_pile(self, view: View, legal: list[int]) -> int:
        piles = [a for a in (DISCARD_A, DISCARD_B) if a in legal]
        if len(piles) == 1:
            return piles[0]
        tops = [view.pile_tops[i][0] if view.pile_tops[i] else None for i in range(2)]
        if tops[0] is None or tops[1] is None:
            return DISCARD_A
        return DISCARD_B if POINTS[tops[1]] < POINTS[tops[0]] else DISCARD_A

    def option_values(self, view: View, legal: list[int]) -> dict[int, float]:
        """Return the value this rule ranks each legal action by (lower is better), phase by phase as :meth:`choose`.

        Draw: a top's best placement, ``DRAW`` the expectation described above;
        play and bounce: the layout's value after the placement, a discard (or
        stopping) the value of keeping the layout; discard pile: the points of
        the top it covers; reveal and Hazard response: minus the flip's
        support (``PASS`` 0).  :meth:`choose` breaks the ties as documented.
        """
        if view.phase in ("reveal", "hazard"):
            mine = view.layouts[0]
            return {a: -float(_support(mine, a)) if a < SLOTS else 0.0 for a in legal}
        if view.phase == "draw":
            unknown = self.unknown_value(view)
            keep = self.value(view, view.layouts[0], unknown)
            pool = view.reshuffled_counts if view.reshuffled else view.never_seen
            size = sum(pool)
            out = {}
            for a in legal:
                if a == DRAW:
                    out[a] = sum(c * min(keep, self.best_placement(view, k, unknown)) for k, c in enumerate(pool) if c) / size if size else keep
                else:
                    out[a] = self.best_placement(view, view.pile_tops[a - TAKE_A][0], unknown)
            return out
        if not any(a < SLOTS for a in legal):
            tops = [view.pile_tops[i][0] if view.pile_tops[i] else None for i in range(2)]
            return {a: float(POINTS[tops[a - DISCARD_A]]) if a in (DISCARD_A, DISCARD_B) and tops[a - DISCARD_A] is not None else 0.0 for a in legal}
        unknown = self.unknown_value(view)
        mine = view.layouts[0]
        keep = self.value(view, mine, unknown)
        return {a: self.value(view, _placed(mine, a, view.held), unknown) if a < SLOTS else keep for a in legal}

    def flip(self, view: View, legal: list[int]) -> int:
        mine = view.layouts[0]
        slots = [a for a in legal if a < SLOTS]
        if not slots:
            return PASS if PASS in legal else legal[0]

        return max(slots, key=lambda p: (_support(mine, p), -p))


def _support(mine: list[int], p: int) -> int:
    """Return how many face-up positive cards the lines through slot ``p`` show (the flip rule's preference)."""
    return sum(1 for i in LINES_THROUGH[p] for q in LINES[i] if q != p and 0 <= mine[q] <= 5)


OPTION_FEATURES = 2
"""Features per action of :func:`greedy_features`: the value gap to the best legal option, and greedy's choice."""
VALUE_GAP_SCALE = 10.0


def greedy_features(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """Return float32[B, 15, 2] for a batch: per legal action, ``(value - best value) / 10`` (clipped to 0..5) and 1.0 for greedy's choice.

    The values are :meth:`GreedyPolicy.option_values`, read from each
    observation alone; illegal actions get zeros.  Networks with
    ``action_features`` on Gnoming read these.
    """
    observations = np.asarray(observations)
    masks = np.asarray(masks)
    out = np.zeros((len(observations), NUM_ACTIONS, OPTION_FEATURES), dtype=np.float32)
    policy = _FEATURE_POLICY
    for i in range(len(observations)):
        legal = np.flatnonzero(masks[i]).tolist()
        if not legal:
            continue
        view = decode(observations[i].astype(np.float32, copy=False))
        values = policy.option_values(view, legal)
        best = min(values.values())
        for a, v in values.items():
            out[i, a, 0] = min((v - best) / VALUE_GAP_SCALE, 5.0) if np.isfinite(v) else 5.0
        out[i, policy.choose(view, legal), 1] = 1.0
    return out


_FEATURE_POLICY = GreedyPolicy()


class GreedyAgent(BaseAgent):
    """One-step greedy on the expected layout score (see :class:`GreedyPolicy`); deterministic given the observation."""

    name = "greedy"

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed)
        self.policy = GreedyPolicy()

    def _act(self, observation: np.ndarray, legal: list[int]) -> int:
        return self.policy.choose(decode(observation), legal)


HORIZONS = ("turn", "round")


def view_of_game(game: Game, seat: int) -> View:
    """Return the :class:`View` of ``seat`` read from public parts of ``game`` (equal to ``decode(encode(game, seat))``).

    The search's rollouts use it instead of encoding and decoding 1046 floats
    per decision; it reads only what §5 makes public, so the rollout policy
    never peeks at a face-down card of the determinisation.
    """
    n = game.num_players
    seats = [(seat + r) % n for r in range(n)]
    layouts = [[k if up else FACE_DOWN for k, up in zip(game.layouts[s], game.face_up[s])] for s in seats]
    never_seen = [0] * NUM_KINDS
    for s in range(n):
        for k, up in zip(game.layouts[s], game.face_up[s]):
            if not up:
                never_seen[k] += 1
    reshuffled = bool(game.reshuffled)
    reshuffled_counts = [0] * NUM_KINDS
    for k in game.draw_pile:
        (reshuffled_counts if reshuffled else never_seen)[k] += 1
    if not reshuffled:
        reshuffled_counts = [0] * NUM_KINDS
    went_out = None if game.went_out is None else (game.went_out - seat) % n
    return View(
        num_players=n,
        layouts=layouts,
        pile_tops=[list(reversed(pile[-3:])) for pile in game.piles],
        pile_counts=[[pile.count(k) for k in range(NUM_KINDS)] for pile in game.piles],
        never_seen=never_seen,
        reshuffled_counts=reshuffled_counts,
        draw_size=len(game.draw_pile),
        reshuffled=reshuffled,
        hazards_removed=len(game.removed),
        held=game.held,
        held_source=game.held_source,
        filled=[False] * SLOTS,
        phase=_VIEW_PHASE.get(str(game.phase), "play"),
        round=game.round,
        first_player=0,
        went_out=went_out,
        final_turn=[False] * n,
        hazard_discarder=None,
        totals=[game.totals[s] for s in seats],
    )


_VIEW_PHASE = {"reveal": "reveal", "draw": "draw", "hazard": "hazard", "done": "done"}


class SearchAgent(BaseAgent):
    """Picks the action with the best mean outcome over sampled determinisations, the rest played by :class:`GreedyPolicy`.

    At each decision it deals ``samples`` determinisations of the hidden cards
    with ``decode_game`` (the same deals for every candidate action:
    common random numbers), applies each legal action, and plays on with the
    greedy policy for every seat:

    * ``horizon="turn"`` (default): to the end of the current turn; the
      outcome is my layout's score with its face-down cards as dealt (so
      lines a face-down card may complete count with their probability), plus
      the §4.4 ±5 if I went out, or my round score if the round ended;
    * ``horizon="round"``: to the end of the round; the outcome is my round
      score minus the mean of the others' (about 100× slower per decision:
      1.7 s of wall clock at 3 players on a loaded machine, against 26 ms).

    Lower is better; ties go to the lowest action id.  Reveal and Hazard
    response decisions only change what is known, not the expected score, so
    with ``horizon="turn"`` they are left to the greedy rule.
    """

    name = "search"

    def __init__(self, seed: int | None = None, samples: int = 8, horizon: str = "turn") -> None:
        if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
            raise ValueError(f"search samples must be an int >= 1, got {samples!r}")
        if horizon not in HORIZONS:
            raise ValueError(f"search horizon must be one of {HORIZONS}, got {horizon!r}")
        self.samples = samples
        self.horizon = horizon
        self.policy = GreedyPolicy()
        super().__init__(seed)

    def _act(self, observation: np.ndarray, legal: list[int]) -> int:
        view = decode(observation)
        # With the turn horizon the outcome is my layout's true score, which a reveal, a Hazard response or the
        # choice of discard pile leaves unchanged: those are left to the greedy rule.
        if self.horizon == "turn" and (view.phase in ("reveal", "hazard") or all(a in (DISCARD_A, DISCARD_B) for a in legal)):
            return self.policy.choose(view, legal)
        seeds = self.rng.integers(2**63, size=self.samples)
        first = decode_game(observation, np.random.default_rng(int(seeds[0])))
        # One decode, then fresh deals of the hidden cards (cheaper than decoding the observation again).
        deals = [first] + [first.resample_from_infostate(0, np.random.default_rng(int(s))) for s in seeds[1:]]
        totals = [0.0] * len(legal)
        for deal, s in zip(deals, seeds):
            for i, a in enumerate(legal):
                game = deal.clone(rng=np.random.default_rng(int(s) + 1))
                totals[i] += self.outcome(game, a)
        return _argmin(totals, legal)

    def outcome(self, game: Game, action: int) -> float:
        """Return the outcome (lower is better) for seat 0 of playing ``action`` in ``game``, then the greedy policy."""
        start_round = game.round
        game.step(action)
        if self.horizon == "turn":
            # Others' Hazard responses only turn cards up: they change no true score, so the turn is over for us.
            while not game.done and game.round == start_round and game.turn_player == 0 and game.phase not in ("draw", "hazard"):
                self._greedy_step(game)
            if game.done or game.round != start_round:
                return float(game.round_scores[start_round][0])
            score = expected_score(game.layouts[0], 0.0)
            if game.went_out == 0:
                others = min(expected_score(game.layouts[s], 0.0) for s in range(1, game.num_players))
                score += -GOING_OUT_POINTS if score <= others else GOING_OUT_POINTS
            return score
        while not game.done and game.round == start_round:
            self._greedy_step(game)
        scores = game.round_scores[start_round]
        return scores[0] - sum(scores[1:]) / (len(scores) - 1)

    def _greedy_step(self, game: Game) -> None:
        seat = game.current
        legal = game.legal_actions()
        game.step(legal[0] if len(legal) == 1 else self.policy.choose(view_of_game(game, seat), legal))


__all__ = ["AGENT_CLASSES", "OPTION_FEATURES", "BaseAgent", "GreedyAgent", "GreedyPolicy", "RandomAgent", "SearchAgent", "View", "decode",
           "expected_score", "greedy_features", "legal_actions", "mean_points", "view_of_game"]

AGENT_CLASSES: dict[str, type] = {"random": RandomAgent, "greedy": GreedyAgent, "search": SearchAgent}
