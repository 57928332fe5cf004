"""Policy iteration on the Grinch's afterstates, from the from-scratch network's self-play (``afterstate_value.py``'s
step, repeated), and the same afterstate value deciding the draws.

Generation 0 is the network's own self-play (``afterstate_value.py``'s cached games).  At every generation an MLP
``V`` is fitted to the afterstates of the last two generations' discards, on the round's own points (``TARGET``
``round``) or on those plus ``W``, a second MLP's value of the rows left after the round's scoring fitted to the
points of the later rounds (``td``); generation ``g + 1`` plays itself with discards sampled from ``softmax(V /
TAU)`` (``TAU`` in points), with ``td`` its rows from ``softmax((points + W) / TAU)``, and the network's sampled
draws (and rows).  Each generation's agent (discards to the afterstate of highest ``V``, the network's first choice
for the rest) plays greedy, and with ``DRAWS`` also the same with its draws chosen by ``V``: a draw is worth the
mean, over the cards it may bring (every unseen card alike for the draw pile, the known top of a discard pile), of
the best second draw's worth, and a hand after both draws is worth the ``V`` of its best discard: the chance nodes
are enumerated, no card's value is an input.  With ``td`` it also plays with its rows by ``W`` (no network at all).
2 players, seat-rotated paired deals, seed 4242.  docs/results/learner_grinch.md, nineteenth session.

    OMP_NUM_THREADS=1 PYTHONPATH=. python docs/results/learner_grinch_draws/afterstate_pi.py NETWORK GENERATIONS GAMES MATCH_GAMES [WORKERS] [DRAWS] [TARGET] [FIRST_MATCH]

e.g. ``checkpoints/grinch_after_36 3 6000 600 2 1 td``.  ``NETWORK`` ``random``: generation 0 is uniformly random
play (TD-Gammon's start), and the later generations' draws are random too.  ``FIRST_MATCH``: the first generation
played against greedy (default 0).  The games are cached in ``/tmp``
(``afterstate_value_*.npz``, ``afterstate_pi_*.npz``).
"""
import sys
import time
from pathlib import Path

import numpy as np
import torch
from afterstate_value import ARGS, SCALES, Value, ValueAgent, chosen_features, fit, load_data, match, play, sample_network

from grinch_env.grinch import encoding as enc
from grinch_env.grinch import tokens as rt
from grinch_env.grinch.agents.base import decode
from grinch_env.grinch.game import DRAW_PILE_ACTION, MAX_ROUNDS, SCORE_BASE
from grinch_env.grinch.scoring import NUM_ROWS

TAU = 1.0


def later_inputs(used_after: np.ndarray, rounds_after: np.ndarray) -> np.ndarray:
    """``W``'s input: the used rows after the round's scoring and the rounds left after it (one-hot)."""
    return np.concatenate([used_after, np.eye(MAX_ROUNDS, dtype=np.float32)[rounds_after]], 1).astype(np.float32)


def fit_later(data: dict[str, np.ndarray]) -> tuple[Value, float]:
    """``W``: the seat's own points in the rounds after this one, from its used rows after this round's scoring and the
    rounds left (a learned row-opportunity value, 0 when no round is left); and its held-out explained variance."""
    x = later_inputs(data["used_after"], data["rounds_after"])
    later = data["own"] - data["round"]
    mlp, ev, mu, sd = fit(x, later, len(x) // 10, steps=3000, width=64)
    return Value(mlp, mu, sd), ev


class LaterValue:
    """``W(used rows after the round, rounds left after it)``, 0 when no round is left."""

    def __init__(self, value: Value) -> None:
        self.value = value

    def __call__(self, used_after: np.ndarray, rounds_after: np.ndarray) -> np.ndarray:
        return np.where(rounds_after > 0, self.value(later_inputs(used_after, rounds_after)), 0.0)

    def rows(self, obs: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(legal rows as actions, each row's points now plus W after it)``: the row to score (the hand's bonus is the
        same for every row)."""
        legal = np.flatnonzero(mask[SCORE_BASE:SCORE_BASE + NUM_ROWS])
        points, _ = rt.hand_values(obs[None, :48].astype(np.float32))
        used = np.repeat(obs[None, enc.ROW_USED:enc.ROW_USED + NUM_ROWS].astype(np.float32), len(legal), 0)
        used[np.arange(len(legal)), legal] = 1.0
        rounds_after = int(np.argmax(obs[enc.ROUNDS_LEFT:enc.ROUNDS_LEFT + MAX_ROUNDS])) if obs[enc.ROUNDS_LEFT:enc.TURN].any() else 0
        return legal + SCORE_BASE, points[0, legal] + self(used, np.full(len(legal), rounds_after))


class RulesLeafValue(Value):
    """``V`` with the rules at the round's end (the search with the learned values as leaves): a kept hand of 5 cards
    (the last discard, or the Grinch's last draws) is worth the points of its best row plus ``W`` after that row,
    plus its bonus; with ``lookahead``, a Who's kept hand of 4 (its second discard) is worth the mean, over every pair
    of unseen cards it may draw next, of its best last discard so valued; with ``first`` also a Who's first kept
    hand of 3, by the mean over the next pair of the ``V`` of its best second discard in the next turn's context.
    Every other afterstate is worth ``V``."""

    def __init__(self, value: Value, later: LaterValue, lookahead: bool, first: bool = False) -> None:
        super().__init__(value.mlp, value.mu, value.sd)
        self.later, self.lookahead, self.first = later, lookahead, first

    def _pairs(self, obs: np.ndarray, kept: np.ndarray) -> np.ndarray:
        """``[P, 48]``: the hand ``kept`` with every pair of unseen cards added."""
        unseen = np.array(decode(obs, SCALES).unseen())
        i, j = np.triu_indices(len(unseen), 1)
        hands = np.repeat(kept[None], len(i), 0)
        hands[np.arange(len(i)), unseen[i]] = 1
        hands[np.arange(len(i)), unseen[j]] = 1
        return hands

    def final(self, obs: np.ndarray, kept: np.ndarray) -> np.ndarray:
        """The worth of 5-card hands ``kept [K, 48]`` at the round's end: the best row's points and ``W`` after it, and the bonus."""
        points, bonus = rt.hand_values(kept)
        used = obs[enc.ROW_USED:enc.ROW_USED + NUM_ROWS] > 0.5
        rounds_after = int(np.argmax(obs[enc.ROUNDS_LEFT:enc.TURN])) if obs[enc.ROUNDS_LEFT:enc.TURN].any() else 0
        open_rows = np.flatnonzero(~used)
        after = np.repeat(used[None].astype(np.float32), len(open_rows), 0)
        after[np.arange(len(open_rows)), open_rows] = 1.0
        w = np.full(NUM_ROWS, -np.inf)
        w[open_rows] = self.later(after, np.full(len(open_rows), rounds_after))
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
        hand = obs[:48] > 0.5
        legal = np.flatnonzero(mask[:48])
        kept = np.repeat(hand[None].astype(np.float32), len(legal), 0)
        kept[np.arange(len(legal)), legal] = 0
        size = int(hand.sum()) - 1
        if size == 5:
            return legal, self.final(obs, kept)
        who = obs[enc.GRINCH_SEAT] < 0.5
        if size == 4 and self.lookahead and who:
            return legal, np.array([self._best_final(obs, self._pairs(obs, k)).mean() for k in kept])
        if size == 3 and self.first and who:  # the next turn's afterstates, valued by V in that turn's context
            later = obs.copy()
            later[enc.TURN:enc.TURN + 3] = np.roll(obs[enc.TURN:enc.TURN + 3], 1)
            return legal, np.array([Value.hands(self, later, self._pairs(obs, k)).mean() for k in kept])
        return super().discards(obs, mask)

    def hands(self, obs: np.ndarray, hands: np.ndarray) -> np.ndarray:
        if int(hands[0].sum()) == 6:
            return self._best_final(obs, hands.astype(np.float32))
        return super().hands(obs, hands)


CURRENT: dict = {}  # the generation's value (and W), read by the forked workers


def explore(obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
    """Generation play: discards sampled from ``softmax(V / TAU)``, with ``W`` the rows from ``softmax((points + W) /
    TAU)``, the network's sampled moves for the rest."""
    obs = obs.astype(np.float32)
    if mask[:DRAW_PILE_ACTION].any():
        legal, v = CURRENT["value"].discards(obs, mask)
    elif CURRENT.get("later") is not None and mask[SCORE_BASE:].any():
        legal, v = CURRENT["later"].rows(obs, mask)
    else:
        return sample_network(obs, mask, rng)
    p = np.exp((v - v.max()) / TAU)
    return int(legal[rng.choice(len(p), p=p / p.sum())])


def play_explore(seed: int) -> dict[str, np.ndarray]:
    return play(seed, explore)


def fit_generation(gens: list[dict[str, np.ndarray]], target: str, g: int) -> tuple[Value, LaterValue | None]:
    """Generation ``g``'s ``V`` (and with ``target`` td, ``W``), fitted on the last two generations of ``gens``."""
    keys = ("obs", "mask", "act", "round") + (("own", "used_after", "rounds_after") if target == "td" else ())
    pool = {k: np.concatenate([d[k] for d in gens[-2:]]) for k in keys}
    y, later = pool["round"], None
    if target == "td":
        w, ev = fit_later(pool)
        later = LaterValue(w)
        y = y + later(pool["used_after"], pool["rounds_after"])
        print(f"generation {g}: W fitted, held-out explained variance {ev:.3f}", flush=True)
    x = chosen_features(pool["obs"], pool["mask"], pool["act"])
    start = time.process_time()
    mlp, ev, mu, sd = fit(x, y, len(x) // 10)
    print(f"generation {g}: V fitted on {len(x)} afterstates (generations {max(0, g - 1)}-{g}, target {target}), held-out "
          f"explained variance {ev:.3f} ({time.process_time() - start:.0f} CPU-s)", flush=True)
    return Value(mlp, mu, sd), later


def main() -> None:
    torch.set_num_threads(1)
    network, generations, games, match_games = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    workers = int(sys.argv[5]) if len(sys.argv) > 5 else 1
    with_draws = len(sys.argv) > 6 and sys.argv[6] == "1"
    target = sys.argv[7] if len(sys.argv) > 7 else "round"
    first_match = int(sys.argv[8]) if len(sys.argv) > 8 else 0  # generations before it are not played against greedy
    if target not in ("round", "td"):
        raise SystemExit(f"TARGET must be round or td, got {target!r}")
    ARGS["network"] = network
    name = Path(network).name
    gens = [load_data(Path(f"/tmp/afterstate_value_{name}_{games}" + ("_rows" if target == "td" else "") + ".npz"), games, workers)]
    for g in range(generations):
        value, later = fit_generation(gens, target, g)
        CURRENT["value"], CURRENT["later"] = value, later
        if match_games and g >= first_match and network != "random":
            print(f"  V discards, the network's draws and rows, against greedy, {match_games} games: "
                  f"{match(ValueAgent(value, network, False, f'V{g} discards'), 'greedy', match_games)}", flush=True)
            if with_draws:
                start = time.process_time()
                res = match(ValueAgent(value, network, True, f'V{g} discards and draws'), 'greedy', match_games)
                print(f"  V discards and draws, the network's rows, against greedy: {res} ({time.process_time() - start:.0f} CPU-s)",
                      flush=True)
        if match_games and g >= first_match and later is not None:
            res = match(ValueAgent(value, network, with_draws, f'V{g} and W', later), 'greedy', match_games)
            print(f"  V discards{' and draws' if with_draws else ''}, W rows (no network), against greedy: {res}", flush=True)
        if g + 1 < generations:
            path = Path(f"/tmp/afterstate_pi_{name}_{games}_{target}_gen{g + 1}.npz")
            gens.append(load_data(path, games, workers, play_explore, first_seed=(g + 1) * 1_000_000))


if __name__ == "__main__":
    main()
