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
from afterstate_value import ARGS, Value, ValueAgent, chosen_features, fit, load_data, match, play, sample_network

from grinch_env.grinch.game import DRAW_PILE_ACTION, SCORE_BASE
from training.learner.afterstate import LaterValue, RulesLeafValue, later_inputs  # noqa: F401  (RulesLeafValue for afterstate_search.py)

TAU = 1.0


def fit_later(data: dict[str, np.ndarray]) -> tuple[Value, float]:
    """``W``: the seat's own points in the rounds after this one, from its used rows after this round's scoring and the
    rounds left (a learned row-opportunity value, 0 when no round is left); and its held-out explained variance."""
    x = later_inputs(data["used_after"], data["rounds_after"])
    later = data["own"] - data["round"]
    mlp, ev, mu, sd = fit(x, later, len(x) // 10, steps=3000, width=64)
    return Value(mlp, mu, sd), ev


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
