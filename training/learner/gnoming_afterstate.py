"""Gnoming's afterstate values and the agent that plays by them (the Grinch's afterstate learner, on the other game).

A decision's afterstate is the own layout just after it, before chance: a placement leaves the held card face up in its
slot (the displaced card gone, whatever it turns out to be), a discard leaves the layout as it was.  One MLP ``V``,
fitted by :mod:`training.learner.afterstate_run` (``game: gnoming``) to what followed in self-play, values an afterstate as
minus the seat's round margin (its score by §4.3 and §4.4 against the mean of the others' scores in that round: lower is
better, so higher worth is better; the game's margin objective, round by round), from :func:`features`:

* the layout, slot by slot (one-hot of the 12 kinds and face down: 117 columns);
* per line (3 rows, 3 columns) what the rules say of it: its face-down count, whether it can still be matched (no
  negative card or Hazard, its face-up positive cards agree), whether it is matched, the value its positive cards show
  (24 columns); the layout's face-up score by §4.3 (face-down cards counted 0) and its face-down count (2 columns);
* the public context of the decision: the never-seen kinds and the draw pile's kinds (shares), every other seat's
  face-down count and face-up score by relative seat, whether somebody has gone out, the table size, both piles' tops
  (72 columns).

No expectation of a face-down card, no hand-made estimate: the rules' scoring of what is face up, and counts.

The agent (:class:`GnomingAfterstateAgent`) picks the legal action of highest worth:

* a placement: ``V`` of its afterstate; into a face-down slot, the displaced card's chance node is enumerated over the
  never-seen kinds, and where the rules let it bounce (§3.4) the better of stopping and its best bounce;
* a discard (or stopping a bounce): ``V`` of the layout as it is;
* ``TAKE_A``/``TAKE_B``: the known top's best placement; ``DRAW``: the mean over the draw pile's kinds of the better of
  discarding and the best placement (bounces left out of this estimate);
* a reveal or a Hazard response's flip: the mean over the never-seen kinds of ``V`` with that card face up; ``PASS``:
  ``V`` of the layout as it is;
* the pile of a discard: pile A (the own layout does not depend on it).

Ties go to the lowest action.  docs/results/learner_gnoming_afterstate.md has the measurements.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from grinch_env.agent_base import AgentOptionError, check_mask
from grinch_env.gnoming.agents.base import FACE_DOWN, View, can_place, decode, expected_score
from grinch_env.gnoming.cards import NUM_KINDS, POINTS
from grinch_env.gnoming.game import DISCARD_A, DISCARD_B, DRAW, MAX_PLAYERS, MIN_PLAYERS, NUM_ACTIONS, NUM_SLOTS, PASS, TAKE_A, TAKE_B
from grinch_env.gnoming.scoring import LINES
from training.learner.afterstate import Value, softmax_pick
from training.learner.config import table_sizes

FEATURES_VERSION = 1  # bump when features() changes: a checkpoint fitted on other columns is refused
_POINTS = np.array(POINTS + (0,), np.float32)  # kind -> points; index 12 (a face-down slot) -> 0
_LINES = np.array(LINES)
_SLOT_LINES = np.array([[p in line for line in LINES] for p in range(NUM_SLOTS)])  # [9, 6]
DOWN = NUM_KINDS  # a face-down slot's column in the one-hot layout
NUM_CONTEXT = 2 * NUM_KINDS + 3 * (MAX_PLAYERS - 1) + 1 + (MAX_PLAYERS - MIN_PLAYERS + 1) + 2 * NUM_KINDS


def layout_columns(layouts: np.ndarray) -> np.ndarray:
    """``float32[B, 143]``: what the rules say of layouts ``int[B, 9]`` (kinds, ``FACE_DOWN`` for a face-down slot).

    The one-hot of every slot (13 columns each), then per line of :data:`LINES` the face-down count (/3), can still be
    matched, is matched, the lowest value of its face-up positive cards (/8, 0 when it has none), then the face-up score
    (§4.3 with face-down cards counted 0 and never matched, /50) and the face-down count (/9).
    """
    k = np.asarray(layouts, np.int64)
    k = np.where(k < 0, DOWN, k)
    b = len(k)
    one_hot = np.zeros((b, NUM_SLOTS, NUM_KINDS + 1), np.float32)
    np.put_along_axis(one_hot, k[..., None], 1.0, axis=2)
    lk = k[:, _LINES]  # [B, 6, 3]
    down = lk == DOWN
    pos = lk <= 5
    bad = (lk >= 6) & (lk <= 10)  # a negative card or a Hazard
    npos = pos.sum(2)
    lo = np.where(pos, lk, 99).min(2)
    hi = np.where(pos, lk, -1).max(2)
    can = ~bad.any(2) & ((npos == 0) | (lo == hi))
    matched = can & ~down.any(2) & (npos > 0)
    value = np.where(npos > 0, _POINTS[np.minimum(lo, 12)], 0.0)
    covered = (matched[:, None, :] & _SLOT_LINES[None]).any(2)  # [B, 9]
    score = -(matched * value).sum(1) + np.where(covered, 0.0, _POINTS[k]).sum(1)
    lines = np.stack([down.sum(2) / 3, can, matched, value / 8], 2).reshape(b, -1)
    return np.concatenate([one_hot.reshape(b, -1), lines, score[:, None] / 50, (k == DOWN).sum(1, keepdims=True) / 9], 1).astype(np.float32)


NUM_LAYOUT_COLUMNS = NUM_SLOTS * (NUM_KINDS + 1) + 4 * len(LINES) + 2
NUM_FEATURES = NUM_LAYOUT_COLUMNS + NUM_CONTEXT


def _share(counts: list[int]) -> np.ndarray:
    c = np.asarray(counts, np.float32)
    return c / c.sum() if c.sum() else c


def context(view: View) -> np.ndarray:
    """``float32[72]``: the decision's public context (module docstring)."""
    others = np.zeros((3, MAX_PLAYERS - 1), np.float32)
    for r in range(1, view.num_players):
        layout = view.layouts[r]
        others[:, r - 1] = 1.0, layout.count(FACE_DOWN) / 9, expected_score(layout, 0.0) / 50
    size = np.zeros(MAX_PLAYERS - MIN_PLAYERS + 1, np.float32)
    size[view.num_players - MIN_PLAYERS] = 1.0
    tops = np.zeros((2, NUM_KINDS), np.float32)
    for i, pile in enumerate(view.pile_tops):
        if pile:
            tops[i, pile[0]] = 1.0
    pool = view.reshuffled_counts if view.reshuffled else view.never_seen
    return np.concatenate([_share(view.never_seen), _share(pool), others.ravel(), [float(view.went_out is not None)], size, tops.ravel()]).astype(np.float32)


def features(layouts: np.ndarray, ctx: np.ndarray) -> np.ndarray:
    """``float32[B, NUM_FEATURES]``: afterstate layouts ``int[B, 9]`` in the context ``ctx`` (:func:`context`) of one decision."""
    cols = layout_columns(layouts)
    return np.concatenate([cols, np.broadcast_to(np.asarray(ctx, np.float32)[None], (len(cols), len(ctx)))], 1)


def _with(layout: list[int] | tuple[int, ...], slot: int, kind: int) -> tuple[int, ...]:
    out = list(layout)
    out[slot] = kind
    return tuple(out)


def _may_bounce(layout: tuple[int, ...], kind: int) -> bool:
    """§3.4: a displaced face-down card ``kind`` may bounce when it is positive and ``layout`` (after the placement) shows one of its kind."""
    return kind <= 5 and kind in layout


def _pick(i: int) -> Any:
    """The worth of afterstate ``i`` of a :class:`_Batch`'s values."""
    return lambda v: v[i]


class _Batch:
    """Afterstate layouts of one decision, deduplicated, valued in one call of ``V``."""

    def __init__(self) -> None:
        self.index: dict[tuple[int, ...], int] = {}

    def add(self, layout: tuple[int, ...]) -> int:
        return self.index.setdefault(tuple(layout), len(self.index))

    def values(self, value: Value, ctx: np.ndarray) -> np.ndarray:
        return value(features(np.array(list(self.index), np.int64).reshape(-1, NUM_SLOTS), ctx))


class Worths:
    """Every legal action's worth at one decision under ``V`` (:class:`GnomingAfterstateAgent`'s rule)."""

    def __init__(self, value: Value) -> None:
        self.value = value

    def __call__(self, obs: np.ndarray, legal: np.ndarray) -> tuple[np.ndarray, View]:
        view = decode(obs)
        mine = tuple(view.layouts[0])
        ctx = context(view)
        batch = _Batch()
        keep = batch.add(mine)
        seen = np.asarray(view.never_seen, np.float64)
        pool = np.asarray(view.reshuffled_counts if view.reshuffled else view.never_seen, np.float64)
        plans: list[Any] = []  # per legal action: a function of the values array

        def chance(ids: dict[int, Any], weights: np.ndarray) -> Any:
            kinds = [k for k in range(NUM_KINDS) if weights[k] > 0]
            w = weights[kinds] / weights[kinds].sum() if kinds else np.ones(0)
            return lambda v: float(sum(wi * ids[k](v) for wi, k in zip(w, kinds))) if kinds else ids[DOWN](v)

        def placement(layout: tuple[int, ...], slot: int, kind: int, filled: list[bool], bounce: bool) -> Any:
            """The worth of placing ``kind`` into ``slot``: the displaced face-down card's chance node (with its bounce when ``bounce``)."""
            after = _with(layout, slot, kind)
            base = batch.add(after)
            if layout[slot] != FACE_DOWN or not bounce:
                return lambda v: v[base]
            now_filled = list(filled)
            now_filled[slot] = True
            ids: dict[int, Any] = {DOWN: lambda v: v[base]}
            for d in range(NUM_KINDS):
                if seen[d] == 0:
                    continue
                if not _may_bounce(after, d):
                    ids[d] = lambda v: v[base]
                    continue
                options = [batch.add(_with(after, q, d)) for q in range(NUM_SLOTS) if not now_filled[q] and can_place(list(after), q, d)]
                ids[d] = lambda v, o=options: max([v[base]] + [v[i] for i in o])
            return chance(ids, seen)

        def best_placement(kind: int, bounce: bool) -> Any:
            options = [placement(mine, p, kind, [False] * NUM_SLOTS, bounce) for p in range(NUM_SLOTS) if can_place(list(mine), p, kind)]
            return lambda v: max(f(v) for f in options) if options else -np.inf

        for a in legal:
            a = int(a)
            if view.phase in ("reveal", "hazard"):
                if a == PASS:
                    plans.append(lambda v: v[keep])
                else:
                    ids = {k: _pick(batch.add(_with(mine, a, k))) for k in range(NUM_KINDS) if seen[k] > 0}
                    ids[DOWN] = lambda v: v[keep]
                    plans.append(chance(ids, seen))
            elif view.phase == "draw":
                if a == DRAW:
                    ids = {}
                    for k in range(NUM_KINDS):
                        if pool[k] > 0:
                            place = best_placement(k, bounce=False)
                            ids[k] = lambda v, f=place: max(v[keep], f(v))
                    ids[DOWN] = lambda v: v[keep]
                    plans.append(chance(ids, pool))
                else:
                    top = view.pile_tops[a - TAKE_A][0]
                    plans.append(best_placement(top, bounce=False))
            elif a < NUM_SLOTS:
                plans.append(placement(mine, a, view.held, view.filled, bounce=True))
            else:  # a discard, or stopping a bounce
                plans.append(lambda v: v[keep])
        values = batch.values(self.value, ctx)
        return np.array([f(values) for f in plans], np.float64), view


def chosen_afterstate(view: View, action: int) -> tuple[int, ...] | None:
    """The afterstate layout that a play-phase ``action`` leaves (the record :mod:`~training.learner.gnoming_afterstate_run` keeps), else None."""
    if view.phase != "play":
        return None
    mine = tuple(view.layouts[0])
    if action < NUM_SLOTS:
        return _with(mine, action, view.held)
    if action in (DISCARD_A, DISCARD_B):
        return mine
    return None


class GnomingAfterstateAgent:
    """Plays the legal action of highest worth under ``V`` (:class:`Worths`); deterministic (ties: the lowest action)."""

    game = "gnoming"

    def __init__(self, value: Value, name: str = "gnoming_afterstate", num_players: list[int] | None = None) -> None:
        self.worths, self.name, self.num_players = Worths(value), name, num_players

    def reset(self, seed: int | None = None) -> None:
        """Nothing to reset: the agent is deterministic."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = check_mask(action_mask, NUM_ACTIONS)
        if len(legal) == 1:
            return int(legal[0])
        if not any(a < NUM_SLOTS or a in (DRAW, TAKE_A, TAKE_B, PASS) for a in legal):
            return int(legal[0])  # the pile of a discard: the own layout is the same either way
        worth, _ = self.worths(np.asarray(observation, np.float32), legal)
        return int(legal[int(np.argmax(worth))])

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return np.array([self.act(o, m) for o, m in zip(observations, masks)], dtype=np.int64)

    def __repr__(self) -> str:
        return f"GnomingAfterstateAgent(name={self.name!r})"


def agent_from(ckpt: dict[str, Any], file: Path, seed: int | None = None, options: dict[str, Any] | None = None) -> GnomingAfterstateAgent:
    """The harness agent of a loaded Gnoming afterstate checkpoint (:mod:`training.learner.afterstate_run` with ``game:
    gnoming``); ``options``: ``generation`` (default the last) and ``play`` (``value``, its only way to play)."""
    options = dict(options or {})
    unknown = sorted(set(options) - {"generation", "play"})
    if unknown:
        raise AgentOptionError(f"Gnoming afterstate checkpoint {str(file)!r}: unknown option(s) {unknown}; it takes generation "
                               "(an int: which fitted generation plays, default the last) and play (value)")
    if options.get("play", "value") != "value":
        raise AgentOptionError(f"Gnoming afterstate checkpoint {str(file)!r}: play must be value (the Grinch's plays are not Gnoming's), "
                               f"got {options['play']!r}")
    if ckpt.get("features_version") != FEATURES_VERSION:
        raise ValueError(f"{str(file)!r} was fitted on Gnoming afterstate features version {ckpt.get('features_version')}; "
                         f"this code writes version {FEATURES_VERSION}")
    fitted = ckpt["values"]
    if not fitted:
        raise ValueError(f"{str(file)!r} holds no fitted generation yet (its run has played generation 0 only): train it on")
    gen = options.get("generation", len(fitted) - 1)
    if not isinstance(gen, int) or isinstance(gen, bool) or not 0 <= gen < len(fitted):
        raise AgentOptionError(f"Gnoming afterstate checkpoint {str(file)!r}: generation must be an int in 0..{len(fitted) - 1}, got {gen!r}")
    cfg = ckpt["config"]
    return GnomingAfterstateAgent(Value.from_state(fitted[gen]["value"]), f"{cfg['run_name']}/g{gen}", table_sizes(cfg["num_players"]))


class Explorer:
    """Generation play: uniformly random (``value`` None: generation 0), or ``softmax(worth / temperature)`` of :class:`Worths`
    (the pile of a discard at random)."""

    def __init__(self, value: Value | None, temperature: float) -> None:
        self.worths = None if value is None else Worths(value)
        self.temperature = temperature

    def __call__(self, obs: np.ndarray, legal: np.ndarray, rng: np.random.Generator) -> tuple[int, float]:
        """``(action, entropy of the distribution it was drawn from)``."""
        if self.worths is None or not any(a < NUM_SLOTS or a in (DRAW, TAKE_A, TAKE_B, PASS) for a in legal):
            return int(rng.choice(legal)), float(np.log(len(legal)))
        worth, _ = self.worths(obs, legal)
        i, entropy = softmax_pick(worth, self.temperature, rng)
        return int(legal[i]), entropy


RECORD_KEYS = ("x", "entropy", "round", "score", "seat", "round_index")  # play_game's


def play_game(explorer: Explorer, num_players: int, seed: int) -> dict[str, np.ndarray]:
    """One self-play game from ``seed``, every move by ``explorer``: each play or bounce decision with a placement among two or
    more legal actions as a record (its afterstate ``x`` (:func:`chosen_afterstate`, :func:`features`, float16), the
    ``entropy`` of the distribution it was drawn from, ``round``: minus the seat's round margin (its score against the
    mean of the others' scores in that round: the game's margin objective, round by round, zero-sum), ``score``: its own
    score in the round, the ``seat`` and its ``round_index``)."""
    from grinch_env.games import get_game

    spec = get_game("gnoming")
    rng = np.random.default_rng(seed)
    game = spec.new_game(num_players, int(rng.integers(2**62)))
    encoder = spec.encoder()
    xs, ent, rec = [], [], []
    while not game.done:
        seat = game.current
        view = encoder.observe(game, seat)
        obs, legal = np.asarray(view["observation"], np.float32), np.flatnonzero(view["action_mask"])
        action, entropy = explorer(obs, legal, rng) if len(legal) > 1 else (int(legal[0]), 0.0)
        if len(legal) > 1 and legal[0] < NUM_SLOTS:
            v = decode(obs)
            after = chosen_afterstate(v, action)
            if after is not None:
                xs.append(features(np.array([after]), context(v))[0])
                ent.append(entropy)
                rec.append((seat, game.round))
        game.step(action)
    scores = np.array(game.round_scores, np.float32)  # [rounds, seats]
    margin = scores - (scores.sum(1, keepdims=True) - scores) / (num_players - 1)  # own score against the others' mean
    return {"x": np.array(xs, np.float16).reshape(-1, NUM_FEATURES), "entropy": np.array(ent, np.float32),
            "round": np.array([-margin[r, s] for s, r in rec], np.float32), "score": np.array([scores[r, s] for s, r in rec], np.float32),
            "seat": np.array([s for s, _ in rec], np.int64), "round_index": np.array([r for _, r in rec], np.int64)}


__all__ = ["FEATURES_VERSION", "NUM_CONTEXT", "NUM_FEATURES", "NUM_LAYOUT_COLUMNS", "RECORD_KEYS", "Explorer", "GnomingAfterstateAgent", "Worths", "agent_from",
           "chosen_afterstate", "context", "features", "layout_columns", "play_game"]
